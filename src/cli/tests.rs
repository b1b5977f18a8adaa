//! `tardy tests show` and `tardy tests diff`: test reports, per test.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use tardy::jobs::tests::{self, SaveTo};
use tardy::render::{self};

use super::{emit, style};

#[derive(Args)]
pub struct TestsArgs {
    #[command(subcommand)]
    command: TestsCommand,
}

#[derive(Subcommand)]
enum TestsCommand {
    /// Totals, slowest tests and suites, time by status and a duration histogram.
    Show(ShowArgs),
    /// Per-test difference between two sides and the shape of the change.
    #[command(long_about = include_str!("../../docs/help/tests-diff.about.txt"))]
    Diff(DiffArgs),
}

#[derive(Args)]
#[command(after_help = include_str!("../../docs/help/tests-show.examples.txt"))]
struct ShowArgs {
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
}

#[derive(Args)]
#[command(after_help = include_str!("../../docs/help/tests-diff.examples.txt"))]
struct DiffArgs {
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
        TestsCommand::Show(a) => a.run(),
        TestsCommand::Diff(a) => a.run(),
    }
}

impl ShowArgs {
    fn run(self) -> Result<i32, String> {
        let (h, c) = (&self.history, &self.common);
        h.check_used(self.save.is_some(), "--save SUITE")?;
        let save = self.save.clone().map(|suite| SaveTo {
            suite,
            db: h.db.db.clone(),
            project: h.db.project.clone(),
            commit: h.commit.clone(),
            branch: h.branch.clone(),
            time: self.time.clone(),
        });
        let shown = tests::show(&self.reports, c.keep_going, c.top, save.as_ref())?;
        if let (Some((n, db)), Some(s)) = (&shown.saved, &save) {
            eprintln!("tardy: saved suite {} ({n} tests) to {db}", s.suite);
        }
        match c.format.as_str() {
            "json" => emit(&super::json(&shown.show)),
            "text" => emit(&render::suite::show_text(&shown.show, style())),
            other => {
                return Err(format!(
                    "--format for `tests show` is text or json, not '{other}'"
                ));
            }
        }
        Ok(0)
    }
}

impl DiffArgs {
    fn run(self) -> Result<i32, String> {
        let c = &self.common;
        let pct = (self.fail_if_slower.as_deref())
            .map(|s| super::percent("fail-if-slower", s, false))
            .transpose()?;
        let done = tests::diff(&self.before, &self.vs, c.keep_going, pct)?;
        let d = &done.diff;
        match c.format.as_str() {
            "json" => emit(&super::json(d)),
            "markdown" => emit(&render::suite::diff_markdown(d, c.top)),
            "csv" => emit(&render::suite::diff_csv(d)),
            "text" => emit(&render::suite::diff_text(d, style(), c.top)),
            other => {
                return Err(format!(
                    "--format takes text, json, markdown or csv, not '{other}'"
                ));
            }
        }
        if self.github {
            let md = render::suite::diff_markdown(d, c.top);
            if !tardy::ci::summary::append(&format!("### tardy tests diff\n\n{md}\n"))? {
                eprintln!("tardy: GITHUB_STEP_SUMMARY is not set; no job summary written");
            }
        }
        let Some(why) = done.too_slow else {
            return Ok(0);
        };
        if self.github {
            // The failing step says why in the log and on the run's page.
            println!("::error title=tardy tests diff::{why}");
        }
        eprintln!("tardy: {why}");
        Ok(1)
    }
}
