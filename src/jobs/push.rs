//! `tardy push` (and `tardy run --push`): upload files to a `tardy serve`,
//! each labelled with the commit, branch and machine, retried until the
//! server answers. What happens is told to the caller's observer as
//! [`Event`]s; `render::push` words them.

use std::path::PathBuf;
use std::time::Duration;

use crate::history::upload::{UploadKind, UploadMeta};
use crate::probe::Fingerprint;
use crate::server::client::{PushOptions, Pushed, Retry, folder_body, guess_kind, push_with};

/// What to upload, where, and how.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The server, `http://HOST:PORT`.
    pub url: String,
    /// Files (or folders of reports, each one run).
    pub files: Vec<PathBuf>,
    /// `tests`, `points` or anything else for runs; `None`: from the content.
    pub kind: Option<String>,
    /// Send this machine's fingerprint with test reports.
    pub fingerprint: bool,
    pub meta: UploadMeta,
    pub run_id: Option<String>,
    pub options: PushOptions,
}

/// What one file's upload went through.
pub enum Event<'a> {
    /// Something in the file was read but left out.
    Warning { file: &'a str, text: &'a str },
    /// An attempt failed and another follows.
    Retry { file: &'a str, retry: &'a Retry },
    /// No answer at all (every attempt failed).
    Failed { file: &'a str, message: &'a str },
    /// The server refused the upload (a 4xx it will not change its mind on).
    Refused {
        file: &'a str,
        status: u16,
        message: &'a str,
    },
    /// Stored (or stored before).
    Answered { file: &'a str, pushed: &'a Pushed },
}

impl Event<'_> {
    /// What the event says on stderr (uploads to `url`).
    pub fn lines(&self, url: &str) -> Vec<String> {
        use crate::render::push as words;
        match *self {
            Event::Warning { file, text } => vec![words::warning_line(file, text)],
            Event::Retry { file, retry: r } => {
                let wait = r.wait.as_secs_f64();
                vec![words::retry_line(file, r.failed, r.of, &r.why, wait)]
            }
            Event::Failed { file, message } => vec![words::failed_line(file, message)],
            Event::Refused {
                file,
                status,
                message,
            } => vec![words::refused_line(file, status, message)],
            Event::Answered { file, pushed: p } => {
                words::answer_lines(url, file, &p.body, &p.run_id, p.attempts)
            }
        }
    }
}

/// Every upload's end.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Files not stored (no answer, or refused).
    pub failed: usize,
    /// Some answer opened a regression alert or names one still open.
    pub regression: bool,
    /// The server's answers, in the order of the files.
    pub answers: Vec<serde_json::Value>,
}

/// The labels of an upload made here now.
pub fn meta_here(
    commit: Option<&str>,
    branch: Option<&str>,
    series: Option<&str>,
) -> Result<UploadMeta, String> {
    let p = super::store::provenance_now(commit, branch)?;
    let subject = p.commit.as_deref().and_then(|c| {
        let here = std::env::current_dir().ok()?;
        crate::history::import::commit_subject(&here, c)
    });
    Ok(UploadMeta {
        commit: p.commit,
        branch: p.branch,
        commit_time: p.commit_time,
        series: series.map(str::to_string),
        fingerprint: None,
        direction: None,
        subject,
    })
}

/// The options of an upload with `token`.
/// `retries` given: exactly that many; else as many as `retry_for` seconds
/// need.
pub fn options(
    token: Option<String>,
    retries: Option<u32>,
    retry_for: f64,
    timeout: f64,
) -> Result<PushOptions, String> {
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(format!(
            "--timeout must be a positive number of seconds, not {timeout}"
        ));
    }
    if !(retry_for.is_finite() && retry_for >= 0.0) {
        return Err(format!(
            "--retry-for must be a number of seconds of at least 0, not {retry_for}"
        ));
    }
    Ok(PushOptions {
        token,
        retries: retries.unwrap_or(5),
        retry_for: if retries.is_some() {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(retry_for)
        },
        timeout: Duration::from_secs_f64(timeout),
        ..PushOptions::default()
    })
}

/// Whether an answer opened a regression alert (or a mixed one) or names a
/// regression alert still open; a run stored before opens nothing.
pub fn regression(p: &Pushed) -> bool {
    let b = &p.body;
    if b.get("status").and_then(|s| s.as_str()) == Some("duplicate") {
        return false;
    }
    let list = |k: &str| {
        b.get(k)
            .and_then(|a| a.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let id = |a: &serde_json::Value| a.get("id").and_then(|i| i.as_u64());
    let alerts = list("alerts");
    let new: Vec<u64> = alerts.iter().filter_map(id).collect();
    alerts.iter().any(|a| {
        matches!(
            a.get("kind").and_then(|k| k.as_str()),
            Some("regression" | "mixed")
        )
    }) || list("open_regressions")
        .iter()
        .any(|a| !new.contains(&id(a).unwrap_or(0)))
}

/// One file's upload: its body (a folder's reports as one run) and kind.
fn body_of(
    plan: &Plan,
    f: &std::path::Path,
    on: &mut dyn FnMut(Event),
) -> Result<(Vec<u8>, UploadKind), String> {
    let name = f.display().to_string();
    let (body, folder) = if f.is_dir() {
        // A results folder (Allure's, or many report files): one run.
        let (body, warnings) = folder_body(f)?;
        for w in warnings {
            on(Event::Warning {
                file: &name,
                text: &w,
            });
        }
        (body, true)
    } else {
        let body = std::fs::read(f).map_err(|e| format!("cannot read '{name}': {e}"))?;
        (body, false)
    };
    let kind = match plan.kind.as_deref() {
        _ if folder => UploadKind::Tests,
        Some("tests") => UploadKind::Tests,
        Some("points") => UploadKind::Points,
        Some(_) => UploadKind::Runs,
        None => guess_kind(&name, &body),
    };
    Ok((body, kind))
}

/// Upload every file of `plan` in turn. An unreadable file stops here (an
/// error); a file the server never answered or refused counts in
/// [`Outcome::failed`] and the next one is sent.
pub fn push(plan: &Plan, on: &mut dyn FnMut(Event)) -> Result<Outcome, String> {
    if !(plan.url.starts_with("http://") || plan.url.starts_with("https://")) {
        return Err(format!(
            "'{}' is not a server URL (expected http://HOST:PORT)",
            plan.url
        ));
    }
    let mut out = Outcome::default();
    for f in &plan.files {
        let name = f.display().to_string();
        let (body, kind) = body_of(plan, f, on)?;
        let mut meta = plan.meta.clone();
        if kind == UploadKind::Tests && plan.fingerprint {
            meta.fingerprint = Some(Fingerprint::capture());
        }
        let answer = push_with(
            &plan.url,
            kind,
            &body,
            &meta,
            plan.run_id.as_deref(),
            &plan.options,
            &mut |r| {
                on(Event::Retry {
                    file: &name,
                    retry: &r,
                })
            },
        );
        match answer {
            Err(e) => {
                on(Event::Failed {
                    file: &name,
                    message: &e,
                });
                out.failed += 1;
            }
            Ok(p) if p.status >= 400 => {
                let msg = p
                    .body
                    .pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .map_or_else(|| p.body.to_string(), str::to_string);
                on(Event::Refused {
                    file: &name,
                    status: p.status,
                    message: &msg,
                });
                out.failed += 1;
                out.answers.push(p.body);
            }
            Ok(p) => {
                out.regression |= regression(&p);
                on(Event::Answered {
                    file: &name,
                    pushed: &p,
                });
                out.answers.push(p.body);
            }
        }
    }
    Ok(out)
}

/// `tardy run --push`: one results document (tardy's JSON) to `url`,
/// told as a file named `results`; whether a regression alert is open. No
/// answer or a refusal is an error.
pub fn push_results(
    url: &str,
    body: &[u8],
    meta: &UploadMeta,
    options: &PushOptions,
    on: &mut dyn FnMut(Event),
) -> Result<bool, String> {
    let p = push_with(url, UploadKind::Runs, body, meta, None, options, &mut |r| {
        on(Event::Retry {
            file: "--push",
            retry: &r,
        })
    })
    .map_err(|e| format!("--push: {e}"))?;
    if p.status >= 400 {
        return Err(format!(
            "--push: the server refused the results (HTTP {}): {}",
            p.status,
            p.body
                .pointer("/error/message")
                .and_then(|m| m.as_str())
                .unwrap_or("")
        ));
    }
    on(Event::Answered {
        file: "results",
        pushed: &p,
    });
    Ok(regression(&p))
}
