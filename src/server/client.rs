//! The other end of the API: uploading a body to a `tardy serve` from CI
//! (`tardy push`, `tardy run --push`), with retries and exponential
//! backoff on failures that may pass (connection refused or reset,
//! timeouts, 408, 429, 5xx; `Retry-After` is honoured). The run id is sent
//! with every attempt, so a retry after a lost answer is stored once.

use std::time::Duration;

use crate::history::upload::{UploadKind, UploadMeta, content_run_id};
use crate::server::api::MAX_BODY_HEADER;

/// How to upload.
#[derive(Debug, Clone)]
pub struct PushOptions {
    pub token: Option<String>,
    /// Attempts after the first.
    pub retries: u32,
    /// The first pause between attempts; doubled each time, capped at
    /// [`MAX_PAUSE`].
    pub backoff: Duration,
    /// Per attempt.
    pub timeout: Duration,
    /// Keep trying for this long (when not zero, the window decides, not
    /// `retries`): a short outage is ridden out, and no pause runs past the
    /// window's end.
    pub retry_for: Duration,
}

/// The longest pause between two attempts: a server that comes back is
/// reached within 5 s (a 30 s cap left uploads waiting 26 s after it had).
pub const MAX_PAUSE: Duration = Duration::from_secs(5);

impl Default for PushOptions {
    fn default() -> Self {
        PushOptions {
            token: None,
            retries: 5,
            retry_for: Duration::ZERO,
            backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(60),
        }
    }
}

/// What the server answered.
#[derive(Debug, Clone)]
pub struct Pushed {
    pub status: u16,
    pub body: serde_json::Value,
    pub run_id: String,
    pub attempts: u32,
}

/// The endpoint of `kind` under `base` (`http://host:port`).
pub fn endpoint(base: &str, kind: UploadKind) -> String {
    format!("{}/api/v1/{}", base.trim_end_matches('/'), kind.as_str())
}

fn query(meta: &UploadMeta) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    if let Some(c) = &meta.commit {
        q.append_pair("commit", c);
    }
    if let Some(b) = &meta.branch {
        q.append_pair("branch", b);
    }
    if let Some(t) = meta.commit_time {
        q.append_pair("commit_time", &t.to_string());
    }
    if let (Some(_), Some(s)) = (&meta.commit, &meta.subject) {
        q.append_pair("commit_subject", s);
    }
    if let Some(s) = &meta.series {
        q.append_pair("series", s);
    }
    if let Some(d) = meta.direction {
        q.append_pair("direction", d.as_str());
    }
    q.finish()
}

/// JSON with every non-ASCII character escaped, so it fits in a header.
fn ascii_json(v: &impl serde::Serialize) -> String {
    let s = serde_json::to_string(v).unwrap_or_default();
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

fn content_type(kind: UploadKind, body: &[u8]) -> &'static str {
    let head = String::from_utf8_lossy(&body[..body.len().min(64)]).to_string();
    let t = head.trim_start_matches('\u{feff}').trim_start();
    match kind {
        _ if body.starts_with(&[0x1f, 0x8b]) => "application/gzip",
        UploadKind::Tests if t.starts_with('<') => "application/xml",
        UploadKind::Tests => "application/x-ndjson",
        UploadKind::Points if t.starts_with('{') => "application/json",
        UploadKind::Points => "text/csv",
        UploadKind::Runs if t.starts_with('{') || t.starts_with('[') => "application/json",
        UploadKind::Runs => "text/plain",
    }
}

/// A pause of `base * 2^attempt` (at most [`MAX_PAUSE`]), with +-25%
/// jitter so runners that failed together do not retry together (never
/// past the cap).
fn backoff(base: Duration, attempt: u32) -> Duration {
    let d = base.saturating_mul(1u32 << attempt.min(16)).min(MAX_PAUSE);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    let jitter = 0.75 + (nanos % 1000) as f64 / 2000.0;
    d.mul_f64(jitter).min(MAX_PAUSE)
}

/// How many attempts `opts` allows: with a window (`retry_for`), as many as
/// its pauses (exponential, at their shortest jitter) take to cover it (the
/// loop also stops at the window's end); else `retries` after the first.
pub fn attempts(opts: &PushOptions) -> u32 {
    if opts.retry_for.is_zero() {
        return opts.retries.saturating_add(1);
    }
    let mut pauses = 0u32;
    let mut covered = Duration::ZERO;
    while covered < opts.retry_for && pauses < 1000 {
        covered += opts
            .backoff
            .saturating_mul(1u32 << pauses.min(16))
            .min(MAX_PAUSE)
            .mul_f64(0.75);
        pauses += 1;
    }
    pauses + 1
}

/// Bodies from this size are preceded by an empty request, whose answer
/// says whether the server would take them (token, limit).
pub const EARLY_CHECK: usize = 1 << 20;

/// One answer of the server.
struct Answer {
    status: u16,
    body: serde_json::Value,
    retry_after: Option<u64>,
    max_body: Option<u64>,
}

/// Upload `body` as `kind`. A 2xx answer is Ok, as is a 4xx (the server
/// will not change its mind; the caller reports it); transport failures and
/// 408/429/5xx are retried, and the last one is the error.
pub fn push(
    base: &str,
    kind: UploadKind,
    body: &[u8],
    meta: &UploadMeta,
    run_id: Option<&str>,
    opts: &PushOptions,
) -> Result<Pushed, String> {
    push_with(base, kind, body, meta, run_id, opts, &mut |_| {})
}

/// An attempt failed and another follows after `wait`.
#[derive(Debug, Clone)]
pub struct Retry {
    /// The attempt that failed (1-based) and how many there will be at most.
    pub failed: u32,
    pub of: u32,
    pub wait: Duration,
    pub why: String,
}

/// [`push`], telling `on_retry` before each pause between attempts (so a user
/// sees that something is happening while a server is down).
pub fn push_with(
    base: &str,
    kind: UploadKind,
    body: &[u8],
    meta: &UploadMeta,
    run_id: Option<&str>,
    opts: &PushOptions,
    on_retry: &mut dyn FnMut(Retry),
) -> Result<Pushed, String> {
    let run_id = run_id.map_or_else(|| content_run_id(kind, meta, body), str::to_string);
    let mut url = endpoint(base, kind);
    let q = query(meta);
    if !q.is_empty() {
        url = format!("{url}?{q}");
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(opts.timeout))
        .http_status_as_error(false)
        .build()
        .into();
    // The type of the real body, also on the empty request before it.
    let ct = content_type(kind, body);
    let send = |body: &[u8]| -> Result<Answer, ureq::Error> {
        let mut req = agent
            .post(&url)
            .header("Content-Type", ct)
            .header("X-Tardy-Run-Id", &run_id);
        if let Some(t) = &opts.token {
            req = req.header("Authorization", &format!("Bearer {t}"));
        }
        if let Some(fp) = &meta.fingerprint {
            req = req.header("X-Tardy-Fingerprint", &ascii_json(fp));
        }
        let mut resp = req.send(body)?;
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        let (retry_after, max_body) = (header("retry-after"), header(MAX_BODY_HEADER));
        let text = resp
            .body_mut()
            .with_config()
            .limit(4 << 20)
            .read_to_string()
            .unwrap_or_default();
        Ok(Answer {
            status: resp.status().as_u16(),
            body: serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
            retry_after,
            max_body,
        })
    };
    // What the server says before it reads a body (a bad token, a body over
    // its limit) comes before the body is sent: `Some` when that settles it.
    let ask_first = || -> Option<Pushed> {
        let a = send(b"").ok()?;
        let settled = |status: u16, body: serde_json::Value| Pushed {
            status,
            body,
            run_id: run_id.clone(),
            attempts: 1,
        };
        match a.status {
            // "the body is empty": the server would read this one.
            400 => match a.max_body {
                Some(max) if body.len() as u64 > max => Some(settled(
                    413,
                    serde_json::json!({"error": {"status": 413, "code": "too_large", "message": format!(
                        "the body is {} bytes, larger than this server's limit of {max} bytes (tardy serve --max-body-mib); nothing was sent",
                        body.len()
                    )}}),
                )),
                _ => None,
            },
            408 | 429 | 500..=599 => None,
            s if s >= 400 => Some(settled(s, a.body)),
            _ => None,
        }
    };
    if body.len() >= EARLY_CHECK
        && let Some(p) = ask_first()
    {
        return Ok(p);
    }
    let mut last = String::new();
    let mut retry_after: Option<u64> = None;
    let of = attempts(opts);
    let window_end =
        (!opts.retry_for.is_zero()).then(|| std::time::Instant::now() + opts.retry_for);
    for attempt in 0..of {
        if attempt > 0 {
            // The server's Retry-After is a floor under the backoff, never
            // the whole pause: a "1" must not spend every attempt in seconds.
            let mut wait = backoff(opts.backoff, attempt - 1).max(
                retry_after
                    .take()
                    .map_or(Duration::ZERO, |s| Duration::from_secs(s.min(60))),
            );
            // No pause past the window's end; none left, no more attempts.
            if let Some(end) = window_end {
                let left = end.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break;
                }
                wait = wait.min(left);
            }
            on_retry(Retry {
                failed: attempt,
                of,
                wait,
                why: last.clone(),
            });
            std::thread::sleep(wait);
        }
        match send(body) {
            Err(e) => {
                // A server that answered before reading the body (401, 413)
                // closes the connection under the client's feet: ask it
                // what it said, with an empty body.
                let cut = matches!(&e, ureq::Error::Io(io) if matches!(
                    io.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                ));
                if cut && let Some(p) = ask_first() {
                    return Ok(Pushed {
                        attempts: attempt + 1,
                        ..p
                    });
                }
                last = format!("{url}: {e}");
            }
            Ok(Answer {
                status,
                body,
                retry_after: asked,
                ..
            }) => {
                if matches!(status, 408 | 429 | 500..=599) {
                    last = format!(
                        "{url}: HTTP {status}: {}",
                        body.pointer("/error/message")
                            .and_then(|m| m.as_str())
                            .unwrap_or("")
                    );
                    retry_after = asked;
                    continue;
                }
                return Ok(Pushed {
                    status,
                    body,
                    run_id,
                    attempts: attempt + 1,
                });
            }
        }
    }
    Err(format!(
        "gave up after {of} attempt{}: {last}",
        if of == 1 { "" } else { "s" }
    ))
}

/// A folder of test reports (an Allure results folder, a directory of
/// JUnit files...) read as one run and written as one JUnit body, what
/// `tardy push DIR` uploads; with the reader's warnings.
pub fn folder_body(dir: &std::path::Path) -> Result<(Vec<u8>, Vec<String>), String> {
    let report =
        crate::ingest::reports::read_run(&[dir.to_path_buf()], false).map_err(|e| e.to_string())?;
    Ok((
        crate::render::junit::write(&report).into_bytes(),
        report.warnings,
    ))
}

/// Which endpoint a file goes to, from its name and first bytes: test
/// reports (XML, `go test -json`, gzip) to tests, CSV and points JSON to
/// points, results (tardy, hyperfine, Go benchmarks...) to runs.
pub fn guess_kind(name: &str, body: &[u8]) -> UploadKind {
    use crate::ingest::sniff::{Kind, sniff};
    // The same sniffing as every reader (gzip is a test report: reports
    // are what CI compresses).
    match sniff(body) {
        Kind::TestReport | Kind::Gzip => return UploadKind::Tests,
        Kind::Csv => return UploadKind::Points,
        _ => {}
    }
    if name.to_ascii_lowercase().ends_with(".csv") {
        return UploadKind::Points;
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_string();
    let t = head.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{')
        && let Ok(v) = serde_json::from_slice::<serde_json::Value>(body)
        && v.get("series")
            .and_then(|s| s.as_array())
            .is_some_and(|a| a.iter().all(|x| x.get("points").is_some()))
    {
        return UploadKind::Points;
    }
    UploadKind::Runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_of_retries_covers_an_outage() {
        let o = PushOptions {
            retries: 5,
            retry_for: Duration::from_secs(60),
            ..PushOptions::default()
        };
        // 0.5, 1, 2, 4, 5, 5, ... s (at 0.75 of each): enough to cover 60 s.
        let n = attempts(&o);
        assert!(n > 6, "{n}");
        let mut covered = Duration::ZERO;
        for k in 0..n - 1 {
            covered += o
                .backoff
                .saturating_mul(1 << k)
                .min(MAX_PAUSE)
                .mul_f64(0.75);
        }
        assert!(covered >= Duration::from_secs(60), "{covered:?}");
        // A short window is a short window: 2 s is a few attempts, not 6.
        let short = PushOptions {
            retry_for: Duration::from_secs(2),
            ..PushOptions::default()
        };
        assert!(attempts(&short) <= 4, "{}", attempts(&short));
        // No pause is longer than 5 s, whatever the attempt.
        for k in 0..30 {
            assert!(backoff(Duration::from_millis(500), k) <= MAX_PAUSE);
        }
        // A count alone (no window) is the count.
        let plain = PushOptions {
            retries: 2,
            ..PushOptions::default()
        };
        assert_eq!(attempts(&plain), 3);
    }

    #[test]
    fn kinds_from_content() {
        assert_eq!(guess_kind("r.xml", b"<testsuites/>"), UploadKind::Tests);
        assert_eq!(
            guess_kind("t.json", b"{\"Time\":\"x\",\"Action\":\"run\"}\n"),
            UploadKind::Tests
        );
        assert_eq!(guess_kind("h.csv", b"time,a\n"), UploadKind::Points);
        assert_eq!(
            guess_kind("p.json", br#"{"series":[{"name":"a","points":[]}]}"#),
            UploadKind::Points
        );
        assert_eq!(guess_kind("r.json", br#"{"results":[]}"#), UploadKind::Runs);
        assert_eq!(ascii_json(&"é"), "\"\\u00e9\"");
        assert!(backoff(Duration::from_millis(500), 20) <= MAX_PAUSE);
    }
}
