//! `tardy bisect`: find the commit or version that made a command slower (or
//! sensitive to a setting), and `tardy bisect log` / `reset`.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use tardy::bisect::engine::{self, Event, Report};
use tardy::bisect::explain::{ExplainFailure, Explained, Progress};
use tardy::bisect::session::{self, Request};
use tardy::bisect::{BisectError, state};
use tardy::jobs::bisect::{Narrator, Say};
use tardy::measure::interrupt;
use tardy::render::bisect::{cache_line, explained_text, text, worktrees_line};

use super::{EXIT_INTERRUPTED, fail, percent};

#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    long_about = include_str!("../../docs/help/bisect.about.txt"),
    after_help = include_str!("../../docs/help/bisect.examples.txt")
)]
pub struct BisectArgs {
    #[command(subcommand)]
    command: Option<BisectCommand>,
    /// The last known good commit (or version).
    #[arg(long, value_name = "REV")]
    good: Option<String>,
    /// The first known bad commit (or version).
    #[arg(long, value_name = "REV")]
    bad: Option<String>,
    /// Build each candidate in its worktree first ({commit}/{version} substituted).
    #[arg(long, value_name = "CMD")]
    build: Option<String>,
    /// Run once per candidate before measuring it ({version} substituted).
    #[arg(long, value_name = "CMD")]
    prepare: Option<String>,
    /// Bisect over versions (oldest first, comma-separated) instead of commits.
    #[arg(long, value_name = "LIST", conflicts_with = "versions_file")]
    versions: Option<String>,
    /// Versions, one per line, oldest first.
    #[arg(long, value_name = "FILE")]
    versions_file: Option<PathBuf>,
    /// Follow only the first parent of merges (a merge gets the blame).
    #[arg(long)]
    first_parent: bool,
    /// wall (default), cpu, user, sys, rss, or a count that load cannot move:
    /// instructions, cycles or estimated-cycles (one run per commit when every run agrees).
    #[arg(long, default_value = "wall")]
    metric: String,
    /// Read the metric from stdout: the first capture group, e.g. 'time: ([0-9.]+)'.
    #[arg(long, value_name = "REGEX")]
    metric_regex: Option<String>,
    /// Read the metric from the test reports each run writes (a file, a directory or a
    /// glob like 'out/TEST-*.xml', relative to the candidate's directory): the sum of test times.
    #[arg(long, value_name = "PATH")]
    metric_junit: Option<String>,
    /// With --metric-junit: one test's time (its name or "suite :: class :: name").
    #[arg(long, value_name = "NAME", requires = "metric_junit")]
    metric_test: Option<String>,
    /// Sensitivity mode: environment of condition A (KEY=VALUE, repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    condition_a: Vec<String>,
    /// Sensitivity mode: environment of condition B (KEY=VALUE, repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    condition_b: Vec<String>,
    /// Sensitivity mode: a wrapper for condition A, e.g. 'taskset -c 0'.
    #[arg(long, value_name = "CMD")]
    prefix_a: Option<String>,
    /// Sensitivity mode: a wrapper for condition B.
    #[arg(long, value_name = "CMD")]
    prefix_b: Option<String>,
    /// Bad means slower than good by more than this amount: 2, 2% or 0.02 all
    /// mean two percent, as history's --min-magnitude (default: half the regression).
    #[arg(long, value_name = "AMOUNT")]
    threshold: Option<String>,
    /// Find an improvement: the first commit where it got faster.
    #[arg(long)]
    invert: bool,
    /// Where state, worktrees and the sample cache live (default: .tardy/bisect at the
    /// repository's top).
    #[arg(long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Continue an interrupted bisection (repeats no finished run).
    #[arg(long)]
    resume: bool,
    /// Measure every candidate afresh: do not reuse samples an earlier bisection of
    /// the same command took on this machine.
    #[arg(long)]
    no_cache: bool,
    /// text or json (one final document).
    #[arg(long, default_value = "text")]
    format: String,
    /// Seed of the run-order randomisation.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Kill a run after this many seconds (a failed run skips the candidate).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Take N runs at the same moment (a candidate with the references it is
    /// judged by, or good with bad), when the machine has cores to spare. First
    /// measures how N runs at once disturb each other and says so.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Most runs of one candidate (a step at the cap is decided by its estimate,
    /// and the probabilities stop asking for more of it).
    #[arg(long, value_name = "N", default_value_t = 200)]
    max_runs: usize,
    /// Name a single culprit only when its probability reaches this (else: "one of
    /// these N commits", each with its probability).
    /// 95, 95% or 0.95 alike.
    #[arg(long, value_name = "PCT", default_value = "95")]
    confidence: String,
    /// End with `tardy explain` of the culprit against its parent: where the extra
    /// time went in the run (saved as traces under the state directory).
    #[arg(long)]
    explain: bool,
    /// With --explain: traced runs of the culprit and of its parent, interleaved.
    #[arg(long, value_name = "N", default_value_t = 5, requires = "explain")]
    explain_runs: u64,
    /// The command to measure (after --), or one string with shell syntax.
    #[arg(trailing_var_arg = true, value_name = "COMMAND")]
    cmd: Vec<String>,
}

#[derive(Subcommand)]
enum BisectCommand {
    /// Show every step of the saved bisection with its numbers.
    #[command(
        after_help = include_str!("../../docs/help/bisect-log.examples.txt")
    )]
    Log {
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
        #[arg(long, default_value = "text")]
        format: String,
    },
    /// Remove the worktrees and state of the saved bisection (the sample cache stays).
    #[command(
        after_help = include_str!("../../docs/help/bisect-reset.examples.txt")
    )]
    Reset {
        #[arg(long, value_name = "DIR")]
        state: Option<PathBuf>,
    },
}

pub fn main(args: BisectArgs) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(BisectError::Interrupted) => {
            eprintln!(
                "tardy: interrupted; every finished run is saved: `tardy bisect --resume` continues"
            );
            EXIT_INTERRUPTED
        }
        Err(e) => fail(e),
    }
}

/// The library's request: what the command line said, in plain values.
fn request(a: &BisectArgs) -> Result<Request, BisectError> {
    let input = BisectError::Input;
    Ok(Request {
        good: a.good.clone(),
        bad: a.bad.clone(),
        build: a.build.clone(),
        prepare: a.prepare.clone(),
        versions: a.versions.clone(),
        versions_file: a.versions_file.clone(),
        first_parent: a.first_parent,
        metric: a.metric.clone(),
        metric_regex: a.metric_regex.clone(),
        metric_junit: a.metric_junit.clone(),
        metric_test: a.metric_test.clone(),
        condition_a: a.condition_a.clone(),
        condition_b: a.condition_b.clone(),
        prefix_a: a.prefix_a.clone(),
        prefix_b: a.prefix_b.clone(),
        threshold: (a.threshold.as_deref())
            .map(|t| percent("threshold", t, false))
            .transpose()
            .map_err(input)?,
        invert: a.invert,
        confidence: super::confidence("confidence", &a.confidence).map_err(input)?,
        max_runs: a.max_runs,
        seed: a.seed,
        timeout: a.timeout,
        jobs: a.jobs as usize,
        cmd: a.cmd.clone(),
    })
}

fn run(args: BisectArgs) -> Result<i32, BisectError> {
    match &args.command {
        Some(BisectCommand::Log { state: dir, format }) => return log(dir.clone(), format),
        Some(BisectCommand::Reset { state: dir }) => return reset(dir.clone()),
        None => {}
    }
    let json = match args.format.as_str() {
        "text" | "json" => args.format == "json",
        f => {
            return Err(BisectError::Input(format!(
                "--format is text or json, not '{f}'"
            )));
        }
    };
    let (dir, mut st) = start(&args)?;
    interrupt::install();
    let tty = std::io::stderr().is_terminal();
    let quiet = json && !tty;
    // Steps printed live in this session need not be listed again in the report.
    let steps_shown = !quiet && st.steps.is_empty();
    let report = search(&args, &mut st, &dir, quiet, tty)?;
    let code = if report.reproduced { 0 } else { 1 };
    let explain = args.explain && report.last_good.is_some();
    if args.explain && !explain && !quiet {
        eprintln!("tardy: --explain: nothing to explain, the search found no culprit");
    }
    if !json {
        // The culprit first: an explanation takes a while.
        print!("{}", text(&report, &st, steps_shown));
        let _ = std::io::Write::flush(&mut std::io::stdout());
    } else if !explain {
        print!("{}", super::json(&report));
    }
    let code = if explain {
        let explained = explain_culprit(&st, &dir, &report, args.explain_runs, quiet, tty);
        if json {
            let v = tardy::render::bisect::explained_json(&report, &explained);
            print!("{}", super::json(&v));
        }
        said(&report, &st, &explained, json, code)
    } else {
        code
    };
    if !quiet && let Some(line) = worktrees_line(session::worktrees_kept(&dir), &dir) {
        eprintln!("tardy: {line}");
    }
    Ok(code)
}

/// The explanation in text, or why there is none; the exit code.
fn said(
    report: &Report,
    st: &state::State,
    e: &Result<Explained, ExplainFailure>,
    json: bool,
    code: i32,
) -> i32 {
    match e {
        Ok(e) if !json => print!("{}", explained_text(report, st, e, super::style())),
        Ok(_) => {}
        Err(ExplainFailure::Failed(m)) => {
            eprintln!("tardy: error: bisect --explain: {m}");
            return super::EXIT_ERROR;
        }
        Err(ExplainFailure::Interrupted(m)) => {
            eprintln!("tardy: {m}");
            return EXIT_INTERRUPTED;
        }
    }
    match e {
        Ok(e) if e.interrupted => {
            eprintln!("tardy: interrupted; explained the runs completed so far");
            EXIT_INTERRUPTED
        }
        _ => code,
    }
}

/// `tardy bisect log`: the saved bisection, step by step.
fn log(dir: Option<std::path::PathBuf>, format: &str) -> Result<i32, BisectError> {
    let dir = session::default_state(dir)?;
    let st = state::load(&dir)?;
    if format == "json" {
        print!("{}", super::json(&st));
    } else {
        print!("{}", tardy::render::bisect::log_text(&dir, &st));
    }
    Ok(0)
}

/// `tardy bisect reset`: worktrees and state removed.
fn reset(dir: Option<std::path::PathBuf>) -> Result<i32, BisectError> {
    let dir = session::default_state(dir)?;
    let removed = engine::reset(&dir)?;
    println!(
        "removed {} worktree(s) and the state in {}",
        removed.len(),
        dir.display()
    );
    Ok(0)
}

/// The state directory and the bisection: resumed, or new.
fn start(args: &BisectArgs) -> Result<(std::path::PathBuf, state::State), BisectError> {
    if args.explain && args.explain_runs == 0 {
        return Err(BisectError::Input(
            "--explain-runs must be at least 1".into(),
        ));
    }
    let dir = session::default_state(args.state.clone())?;
    let req = if args.resume {
        Request::default()
    } else {
        request(args)?
    };
    let (st, cache) = session::start(&dir, args.resume, &req, !args.no_cache)?;
    if let Some(line) = cache_line(&cache) {
        eprintln!("{line}");
    }
    Ok((dir, st))
}

/// The search, with its live line; a new bisection that could not even
/// measure its ends leaves nothing worth resuming (its worktrees and state
/// are removed).
fn search(
    args: &BisectArgs,
    st: &mut state::State,
    dir: &std::path::Path,
    quiet: bool,
    tty: bool,
) -> Result<engine::Report, BisectError> {
    // The live line (indicatif: drawn only on a terminal); lines above it print
    // through the bar so that it is redrawn below them.
    let bar = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {prefix}  {wide_msg}") {
        bar.set_style(style);
    }
    if !tty {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let say = |line: &str| {
        if bar.is_hidden() {
            eprintln!("{line}");
        } else {
            bar.suspend(|| eprintln!("{line}"));
        }
    };
    let mut narrator = Narrator::new(quiet, st.steps.len());
    let mut on = |ev: Event| match narrator.hear(ev) {
        Say::Line(l) => say(&l),
        Say::Measuring(w) => {
            bar.set_prefix(w);
            bar.tick();
        }
        Say::Progress(m) => {
            bar.set_message(m);
            bar.tick();
        }
        Say::Nothing => {}
    };
    let report = session::search(st, dir, args.resume, &mut on);
    bar.finish_and_clear();
    report
}

/// The culprit explained ([`tardy::bisect::explain::culprit`]), with a
/// progress bar on a terminal.
fn explain_culprit(
    st: &state::State,
    dir: &std::path::Path,
    report: &Report,
    runs: u64,
    quiet: bool,
    tty: bool,
) -> Result<Explained, ExplainFailure> {
    let bar = if tty {
        indicatif::ProgressBar::new(runs * 2)
    } else {
        indicatif::ProgressBar::hidden()
    };
    let e = tardy::bisect::explain::culprit(st, dir, report, runs, &mut |p| match p {
        Progress::Start(good, bad) if !quiet => {
            eprintln!("explain: {runs} runs each of {good} and {bad}, traced and interleaved")
        }
        Progress::Start(..) => {}
        Progress::Run(label) => bar.set_message(label.to_string()),
        Progress::Done => bar.inc(1),
    });
    bar.finish_and_clear();
    if let Ok(e) = &e
        && !quiet
    {
        for w in &e.not_saved {
            eprintln!("tardy: warning: {w}");
        }
    }
    e
}
