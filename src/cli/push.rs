//! `tardy push URL FILES...`: upload results, test reports and points to a
//! `tardy serve` from CI, labelled with the commit, branch and machine.

use std::path::PathBuf;

use clap::Args;

use tardy::jobs::push::{self, Event, Plan};
use tardy::store::history::Direction;

use super::EXIT_ERROR;

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/push.about.txt"),
    after_help = include_str!("../../docs/help/push.examples.txt")
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

/// Say one event of an upload to `url` on stderr.
pub fn tell(url: &str, e: Event) {
    for l in e.lines(url) {
        eprintln!("{l}");
    }
}

/// The subcommand, run; its exit code.
pub fn run(args: PushArgs) -> Result<i32, String> {
    let mut meta = push::meta_here(
        args.commit.as_deref(),
        args.branch.as_deref(),
        args.series.as_deref(),
    )?;
    meta.direction = args.direction.as_deref().and_then(Direction::parse);
    let plan = Plan {
        options: push::options(args.token, args.retries, args.retry_for, args.timeout)?,
        url: args.url,
        files: args.files,
        kind: args.kind,
        fingerprint: !args.no_fingerprint,
        meta,
        run_id: args.run_id,
    };
    let out = push::push(&plan, &mut |e| tell(&plan.url, e))?;
    if args.json {
        print!("{}", super::json(&out.answers));
    }
    Ok(if out.failed > 0 {
        EXIT_ERROR
    } else if args.fail_on_regression && out.regression {
        1
    } else {
        0
    })
}
