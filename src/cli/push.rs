//! `tardy push URL FILES...`: upload results, test reports and points to a
//! `tardy serve` from CI, labelled with the commit, branch and machine.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use tardy::history::upload::{UploadKind, UploadMeta};
use tardy::probe::Fingerprint;
use tardy::server::client::{PushOptions, Pushed, guess_kind, push_with};
use tardy::store::history::Direction;

use super::{EXIT_ERROR, fail};

#[derive(Args)]
#[command(
    about = "Upload results, test reports or points to a `tardy serve`, with retries",
    long_about = "Upload files to a `tardy serve`: tardy/hyperfine JSON and other results go to /api/v1/runs, \
test reports (JUnit, NUnit, TRX, xUnit XML, `go test -json`, gzipped or not) to /api/v1/tests, CSV and points \
JSON to /api/v1/points. Each upload carries the commit, branch and commit time (from git here unless given) and \
a run id (a hash of the upload), so a retried upload is stored once. Failures that may pass (refused \
connections, timeouts, 408, 429, 5xx) are retried with exponential backoff for at least 60 s (--retry-for), \
a Retry-After answer setting the least pause, so a server restart or a database failover is ridden out; \
other 4xx answers (401, 413, 422...) are shown with the server's message and not retried.",
    after_help = "Examples:\n  TARDY_TOKEN=... tardy push http://perf.example:8080 results.json\n  \
tardy push $URL build/test-results/*.xml --suite unit --fail-on-regression\n  tardy push $URL allure-results/ --suite e2e      (a folder: one run)\n  tardy push $URL history.csv --kind points"
)]
pub struct PushArgs {
    /// The server, e.g. http://127.0.0.1:8080.
    url: String,
    /// Files to upload.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Write token (or $TARDY_TOKEN).
    #[arg(long, env = "TARDY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Which endpoint (default: guessed from each file).
    #[arg(long, value_parser = ["runs", "tests", "points"])]
    kind: Option<String>,
    /// Series name (prefix NAME/benchmark when a file holds several); for test reports, the suite.
    #[arg(long, visible_alias = "suite", value_name = "NAME")]
    series: Option<String>,
    /// The commit (default: HEAD of the repository here).
    #[arg(long, value_name = "REV")]
    commit: Option<String>,
    /// The branch (default: the current branch).
    #[arg(long)]
    branch: Option<String>,
    /// Which way is worse for points and results.
    #[arg(long, value_parser = ["lower-is-better", "higher-is-better"])]
    direction: Option<String>,
    /// Name this upload (default: a hash of the body and its labels); one id is stored once.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Do not send this machine's fingerprint with test reports.
    #[arg(long)]
    no_fingerprint: bool,
    /// Retries after the first attempt (given alone, exactly this many;
    /// by default as many as --retry-for needs).
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Keep retrying connection errors and 5xx answers for at least this
    /// many seconds (exponential backoff; a Retry-After answer is a floor
    /// under the pause), so a short outage is ridden out.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    retry_for: f64,
    /// Seconds per attempt.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Exit 1 while a regression alert on the uploaded series is open (new, or
    /// earlier and not yet acknowledged or dismissed).
    #[arg(long)]
    fail_on_regression: bool,
    /// Print the server's answers as JSON.
    #[arg(long)]
    json: bool,
}

pub fn main(args: PushArgs) -> i32 {
    match run(&args) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

/// The labels of an upload made here now.
pub fn meta_here(
    commit: Option<&str>,
    branch: Option<&str>,
    series: Option<&str>,
) -> Result<UploadMeta, String> {
    let p = super::history::provenance_now(commit, branch)?;
    let subject = p.commit.as_deref().and_then(|c| {
        let here = std::env::current_dir().ok()?;
        tardy::history::import::commit_subject(&here, c)
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

/// Describe one answer; true when it opened a regression alert.
pub fn report(url: &str, name: &str, p: &Pushed) -> bool {
    let b = &p.body;
    let retried = if p.attempts > 1 {
        format!(" after {} attempts", p.attempts)
    } else {
        String::new()
    };
    match b.get("status").and_then(|s| s.as_str()) {
        Some("duplicate") if p.attempts > 1 => {
            // An earlier attempt reached the server, which stored it, and its answer
            // was lost on the way back: this upload is stored, once.
            eprintln!(
                "tardy: {name}: stored (by an earlier attempt whose answer was lost; run {}){retried}",
                p.run_id
            );
            false
        }
        Some("duplicate") => {
            eprintln!(
                "tardy: {name}: already stored (run {}) by an earlier push; nothing written",
                p.run_id
            );
            false
        }
        _ => {
            let series = b
                .get("series")
                .and_then(|s| s.as_array())
                .map_or(0, Vec::len);
            let points = b.get("points").and_then(|s| s.as_u64()).unwrap_or(0);
            let alerts = b
                .get("alerts")
                .and_then(|a| a.as_array())
                .cloned()
                .unwrap_or_default();
            eprintln!(
                "tardy: {name}: stored {points} point{} in {series} series (run {}){retried}",
                if points == 1 { "" } else { "s" },
                p.run_id
            );
            for w in b
                .get("warnings")
                .and_then(|w| w.as_array())
                .into_iter()
                .flatten()
                .filter_map(|w| w.as_str())
            {
                eprintln!("tardy: {name}: warning: {}", tardy::fmt::clip::message(w));
            }
            alerts_said(url, b, &alerts)
        }
    }
}

/// Say the answer's new alerts and the regressions still open; true when
/// there is a regression.
fn alerts_said(url: &str, b: &serde_json::Value, alerts: &[serde_json::Value]) -> bool {
    let url = url.trim_end_matches('/');
    let text = |a: &serde_json::Value, k: &str| {
        a.get(k)
            .and_then(|s| s.as_str())
            .unwrap_or(if k == "url" { "" } else { "?" })
            .to_string()
    };
    let mut regression = false;
    for a in alerts {
        let kind = a.get("kind").and_then(|k| k.as_str()).unwrap_or("change");
        regression |= kind == "regression" || kind == "mixed";
        eprintln!(
            "tardy: new alert: {kind} in {} series between {} and {}: {url}{}",
            a.get("series").and_then(|s| s.as_u64()).unwrap_or(0),
            text(a, "from_commit"),
            text(a, "to_commit"),
            text(a, "url")
        );
    }
    let new: Vec<u64> = alerts
        .iter()
        .filter_map(|a| a.get("id").and_then(|i| i.as_u64()))
        .collect();
    let open = b
        .get("open_regressions")
        .and_then(|a| a.as_array())
        .cloned()
        .unwrap_or_default();
    for a in &open {
        let id = a.get("id").and_then(|i| i.as_u64()).unwrap_or(0);
        if new.contains(&id) {
            continue;
        }
        regression = true;
        eprintln!(
            "tardy: open regression alert #{id} (not acknowledged) between {} and {}: {url}{}",
            text(a, "from_commit"),
            text(a, "to_commit"),
            text(a, "url")
        );
    }
    regression
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

/// One file's upload: its body (a folder's reports as one run), its kind
/// and the metadata it goes with.
fn upload_of(
    args: &PushArgs,
    f: &std::path::Path,
    meta: &UploadMeta,
) -> Result<(Vec<u8>, UploadKind, UploadMeta), String> {
    let name = f.display().to_string();
    let (body, folder) = if f.is_dir() {
        // A results folder (Allure's, or many report files): one run.
        let (body, warnings) = tardy::server::client::folder_body(f)?;
        for w in warnings {
            eprintln!("tardy: {name}: warning: {}", tardy::fmt::clip::message(&w));
        }
        (body, true)
    } else {
        let body = std::fs::read(f).map_err(|e| format!("cannot read '{name}': {e}"))?;
        (body, false)
    };
    let kind = match args.kind.as_deref() {
        _ if folder => UploadKind::Tests,
        Some("tests") => UploadKind::Tests,
        Some("points") => UploadKind::Points,
        Some(_) => UploadKind::Runs,
        None => guess_kind(&name, &body),
    };
    let mut meta = meta.clone();
    if kind == UploadKind::Tests && !args.no_fingerprint {
        meta.fingerprint = Some(Fingerprint::capture());
    }
    Ok((body, kind, meta))
}

fn run(args: &PushArgs) -> Result<i32, String> {
    if !(args.url.starts_with("http://") || args.url.starts_with("https://")) {
        return Err(format!(
            "'{}' is not a server URL (expected http://HOST:PORT)",
            args.url
        ));
    }
    let mut meta = meta_here(
        args.commit.as_deref(),
        args.branch.as_deref(),
        args.series.as_deref(),
    )?;
    meta.direction = args.direction.as_deref().and_then(Direction::parse);
    let opts = options(
        args.token.clone(),
        args.retries,
        args.retry_for,
        args.timeout,
    )?;
    let mut failed = 0;
    let mut regression = false;
    let mut answers = Vec::new();
    for f in &args.files {
        let name = f.display().to_string();
        let (body, kind, meta) = upload_of(args, f, &meta)?;
        let mut tell = |r: tardy::server::client::Retry| eprintln!("{}", retry_line(&name, &r));
        match push_with(
            &args.url,
            kind,
            &body,
            &meta,
            args.run_id.as_deref(),
            &opts,
            &mut tell,
        ) {
            Err(e) => {
                eprintln!("tardy: error: {name}: {}", tardy::fmt::clip::message(&e));
                failed += 1;
            }
            Ok(p) if p.status >= 400 => {
                let msg = p
                    .body
                    .pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .map_or_else(|| p.body.to_string(), str::to_string);
                let msg = tardy::fmt::clip::message(&msg);
                eprintln!(
                    "tardy: error: {name}: the server refused it (HTTP {}): {msg}",
                    p.status
                );
                failed += 1;
                answers.push(p.body);
            }
            Ok(p) => {
                regression |= report(&args.url, &name, &p);
                answers.push(p.body);
            }
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&answers).unwrap_or_default()
        );
    }
    Ok(if failed > 0 {
        EXIT_ERROR
    } else if args.fail_on_regression && regression {
        1
    } else {
        0
    })
}

/// What `push` says while a server does not answer: which attempt failed, why, and
/// when the next one is.
pub fn retry_line(name: &str, r: &tardy::server::client::Retry) -> String {
    format!(
        "tardy: {name}: attempt {} of {} failed ({}); trying again in {:.1} s",
        r.failed,
        r.of,
        r.why,
        r.wait.as_secs_f64()
    )
}
