//! `tardy ci`: a pull request against its merge base, measured in one job.

use std::path::PathBuf;

use clap::Args;

use tardy::ci::{self, Options};
use tardy::jobs::ci::{Done, Job};
use tardy::measure::command::join_quoted;
use tardy::measure::{MeasureError, interrupt};
use tardy::model::SessionStatus;
use tardy::render::{self};
use tardy::stats::rng::fresh_seed;

use super::{EXIT_ERROR, EXIT_INTERRUPTED, fail};

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/ci.about.txt"),
    after_help = include_str!("../../docs/help/ci.examples.txt")
)]
pub struct CiArgs {
    /// The base revision (default: the merge base of --head with the default branch).
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The head revision.
    #[arg(long, value_name = "REV", default_value = "HEAD")]
    head: String,
    /// Build each side in its worktree first (`sh -c CMD`; its output in .tardy/ci/SIDE-build.log).
    #[arg(long, value_name = "CMD")]
    build: Option<String>,
    /// Exit 1 when head is proven slower than base by more than this amount
    /// (5, 5% or 0.05: the whole interval above +5%).
    #[arg(long, value_name = "AMOUNT")]
    fail_if_slower: Option<String>,
    /// Write the verdict as Markdown for a pull-request comment.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Append the Markdown to $GITHUB_STEP_SUMMARY and print an ::error:: or ::notice:: line.
    #[arg(long)]
    github: bool,
    /// Write every run of both sides as tardy results JSON (`tardy compare` reads it).
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
    /// Print the verdict as JSON (schema tardy.ci) instead of the report.
    #[arg(long)]
    json: bool,
    /// Test reports the command writes, relative to each worktree (a file, a
    /// directory or a glob): the last run's reports of head and base compared test by test.
    #[arg(long, value_name = "PATH")]
    tests: Option<String>,
    /// When head is proven slower: record both sides with `tardy explain`'s
    /// recorder, interleaved, and say where the time went (in the log and the comment).
    #[arg(long)]
    explain: bool,
    /// Traced runs of each side for --explain.
    #[arg(long, value_name = "N", default_value_t = 5)]
    explain_runs: u64,
    /// Keep the worktrees (and their builds) in .tardy/ci for the next run.
    #[arg(long)]
    keep_worktrees: bool,
    /// Kill a run (its process group) after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Seed of the run order.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Set an environment variable for the builds and the runs (repeatable).
    #[arg(short = 'e', long, value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// No progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// The command measured in each worktree: one string, or a program and its arguments.
    #[arg(required = true, trailing_var_arg = true, value_name = "COMMAND")]
    command: Vec<String>,
    // Last: the headings it sets would hold for every option after it.
    #[command(flatten)]
    budget: super::budget::BudgetArgs,
}

/// The subcommand, run; its exit code.
pub fn run(args: CiArgs) -> Result<i32, String> {
    let job = job(&args)?;
    job.check()?;
    interrupt::install();
    let mut observer =
        super::run::CliObserver::new(args.quiet || args.json, args.export_json.clone());
    // The steps go to stderr, with --json too; -q silences them.
    let mut say = |line: &str| {
        if !args.quiet {
            eprintln!("tardy: {line}");
        }
    };
    let done = job.run(&mut say, &mut observer);
    observer.bar.finish_and_clear();
    let done = match done {
        Ok(d) => d,
        Err(_) if interrupt::requested() => {
            eprintln!("tardy: interrupted before measuring started");
            return Ok(EXIT_INTERRUPTED);
        }
        Err(e) => return Err(e.to_string()),
    };
    print(&args, &done);
    finish(done.outcome)
}

/// The job the flags ask for.
fn job(args: &CiArgs) -> Result<Job, String> {
    let command = match args.command.as_slice() {
        [one] => one.clone(),
        words => join_quoted(words),
    };
    let mut env = Vec::new();
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => env.push((k.to_string(), v.to_string())),
            _ => return Err(format!("--env takes KEY=VALUE, not '{kv}'")),
        }
    }
    let timeout = match tardy::measure::spec::seconds("timeout", args.timeout)? {
        Some(d) if d.is_zero() => return Err("--timeout must be above 0".into()),
        t => t,
    };
    let options = Options {
        dir: std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?,
        base: args.base.clone(),
        head: args.head.clone(),
        build: args.build.clone(),
        command,
        state_dir: None,
        budget: args.budget.resolve()?,
        timeout,
        seed: args.seed.unwrap_or_else(fresh_seed),
        env,
        tests: args.tests.clone(),
    };
    Ok(Job {
        options,
        gate: (args.fail_if_slower.as_deref())
            .map(|s| super::percent("fail-if-slower", s, false))
            .transpose()?,
        explain_runs: args.explain.then_some(args.explain_runs),
        markdown: args.markdown.clone(),
        export_json: args.export_json.clone(),
        github: args.github,
        keep_worktrees: args.keep_worktrees,
    })
}

/// The JSON or the text on stdout, and GitHub's annotation line.
fn print(args: &CiArgs, done: &Done) {
    let (judgement, results) = (&done.outcome.judgement, &done.outcome.results);
    let explained = done.explained.as_ref().map(Result::as_ref);
    if args.github {
        let level = if judgement.regression {
            "error"
        } else {
            "notice"
        };
        let headline = render::ci::headline(judgement).replace('\n', " ");
        println!("::{level} title=tardy ci::{headline}");
    }
    if args.json {
        print!("{}", super::json(&render::ci::json(judgement, explained)));
        return;
    }
    let style = super::style();
    print!(
        "{}",
        render::terminal::report_with(results, style, &Default::default())
    );
    print!("{}", render::ci::text(judgement, style));
    if let Some(e) = explained {
        print!("\n{}", render::ci::explained_text(e));
    }
}

/// The exit code: the command failing, Ctrl-C, or the verdict.
fn finish(outcome: ci::Outcome) -> Result<i32, String> {
    if let Some(e) = outcome.error {
        let code = if matches!(e, MeasureError::CommandFailed { .. }) {
            1
        } else {
            EXIT_ERROR
        };
        fail(e);
        return Ok(code);
    }
    if outcome.results.status == SessionStatus::Interrupted {
        eprintln!("tardy: interrupted; the verdict is on the runs completed");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(if outcome.judgement.regression { 1 } else { 0 })
}
