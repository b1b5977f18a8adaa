//! `tardy tests show` and `tardy tests diff`: test reports, per test.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use tardy::analyze::suite;
use tardy::history::ops;
use tardy::ingest::reports;
use tardy::render::{self};

use super::{emit, style};

#[derive(Args)]
#[command(about = "Read test reports: per-test durations, and what made a suite slower")]
pub struct TestsArgs {
    #[command(subcommand)]
    command: TestsCommand,
}

#[derive(Subcommand)]
enum TestsCommand {
    /// Totals, slowest tests and suites, time by status and a duration histogram.
    #[command(
        after_help = include_str!("../../docs/help/tests-show.examples.txt")
    )]
    Show {
        /// Report files or directories (all together are one run).
        #[arg(required = true, value_name = "REPORT")]
        reports: Vec<PathBuf>,
        #[command(flatten)]
        common: Common,
        /// Save this run in the history database as suite SUITE: the suite's time and every
        /// test's duration, with the commit, branch, time and this machine's fingerprint.
        #[arg(long, value_name = "SUITE", help_heading = "History")]
        save: Option<String>,
        /// When the tests ran (default: now).
        #[arg(long, value_name = "TIME", help_heading = "History", requires = "save")]
        time: Option<String>,
        #[command(flatten)]
        history: super::history::SaveMeta,
    },
    /// Per-test difference between two sides and the shape of the change.
    #[command(
        long_about = include_str!("../../docs/help/tests-diff.about.txt"),
        after_help = "Examples:\n  tardy tests diff before.xml --vs after.xml\n  tardy tests diff base-run1/ base-run2/ --vs new-run1/ new-run2/ --format json"
    )]
    Diff {
        /// The runs before (each path is one run).
        #[arg(required = true, value_name = "BEFORE")]
        before: Vec<PathBuf>,
        /// The runs after.
        #[arg(long, required = true, num_args = 1.., value_name = "AFTER")]
        vs: Vec<PathBuf>,
        /// Exit 1 when the sum of test times grew by more than PCT percent (with 2+ runs
        /// per side: proven at 95%, the interval's lower end above +PCT).
        #[arg(long, value_name = "PCT")]
        fail_if_slower: Option<String>,
        /// Append a summary to $GITHUB_STEP_SUMMARY.
        #[arg(long)]
        github: bool,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Args)]
struct Common {
    /// text, json, markdown or csv (csv and markdown: diff only).
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    format: String,
    /// How many tests to list in each section.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
    /// Skip unreadable report files with a warning instead of stopping.
    #[arg(long)]
    keep_going: bool,
}

/// The subcommand, run; its exit code.
pub fn run(args: TestsArgs) -> Result<i32, String> {
    match args.command {
        TestsCommand::Show {
            reports: paths,
            common,
            save,
            time,
            history,
        } => show(&paths, &common, save.as_deref(), time.as_deref(), &history),
        TestsCommand::Diff {
            before,
            vs,
            fail_if_slower,
            github,
            common,
        } => diff(&before, &vs, fail_if_slower, github, &common),
    }
}

fn show(
    paths: &[PathBuf],
    common: &Common,
    save: Option<&str>,
    time: Option<&str>,
    history: &super::history::SaveMeta,
) -> Result<i32, String> {
    history.check_used(save.is_some(), "--save SUITE")?;
    let mut db = match save {
        Some(_) => Some(super::history::open(&history.db).map_err(|e| e.to_string())?),
        None => None,
    };
    let mut report = reports::read_run(paths, common.keep_going).map_err(|e| e.to_string())?;
    // Summarised first: saving takes the report's cases.
    let s = suite::show(&report, common.top);
    if let (Some(name), Some(db)) = (save, db.as_mut()) {
        let provenance = history.provenance()?;
        let tests = ops::save_suite(db.as_mut(), name, &mut report, provenance, time)?;
        eprintln!(
            "tardy: saved suite {name} ({tests} tests) to {}",
            tardy::jobs::store::describe(history.db.db.as_deref())
        );
    }
    match common.format.as_str() {
        "json" => emit(&super::json(&s)),
        "text" => emit(&render::suite::show_text(&s, style())),
        other => {
            return Err(format!(
                "--format for `tests show` is text or json, not '{other}'"
            ));
        }
    }
    Ok(0)
}

fn diff(
    before: &[PathBuf],
    vs: &[PathBuf],
    fail_if_slower: Option<String>,
    github: bool,
    common: &Common,
) -> Result<i32, String> {
    let pct = fail_if_slower
        .map(|s| super::percent("fail-if-slower", &s, false))
        .transpose()?;
    let read = |paths| reports::read_each(paths, common.keep_going).map_err(|e| e.to_string());
    let (b, a) = (read(before)?, read(vs)?);
    let d = suite::diff(&b, &a);
    match common.format.as_str() {
        "json" => emit(&super::json(&d)),
        "markdown" => emit(&render::suite::diff_markdown(&d, common.top)),
        "csv" => emit(&render::suite::diff_csv(&d)),
        "text" => emit(&render::suite::diff_text(&d, style(), common.top)),
        other => {
            return Err(format!(
                "--format takes text, json, markdown or csv, not '{other}'"
            ));
        }
    }
    if github {
        job_summary(&render::suite::diff_markdown(&d, common.top))?;
    }
    if let Some(pct) = pct
        && suite::slower_than(&b, &a, &d, pct)
    {
        let why = format!(
            "the sum of test times grew from {} to {}, more than {}",
            render::units::time(d.total_before_s),
            render::units::time(d.total_after_s),
            render::units::percent(pct)
        );
        if github {
            // The failing step says why in the log and on the run's page.
            println!("::error title=tardy tests diff::{why}");
        }
        eprintln!("tardy: {why}");
        return Ok(1);
    }
    Ok(0)
}

/// GitHub's job summary, when there is one.
fn job_summary(markdown: &str) -> Result<(), String> {
    if !tardy::ci::summary::append(&format!("### tardy tests diff\n\n{markdown}\n"))? {
        eprintln!("tardy: GITHUB_STEP_SUMMARY is not set; no job summary written");
    }
    Ok(())
}
