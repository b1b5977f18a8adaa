//! `tardy history`: the store of every saved run, its change points and alerts.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use tardy::history::bisect::{bisect_plan, shell_line};
use tardy::history::detect::{DetectOptions, Method};
use tardy::history::import::Labels;
use tardy::history::ops;
use tardy::jobs::store;
use tardy::render::history as view;
use tardy::store::history::{AlertState, Direction, PointFilter};
use tardy::store::{DbError, History};

use super::{EXIT_ERROR, emit, json, style};

/// Where the database is and which project.
#[derive(Args, Clone, Debug)]
pub struct DbArgs {
    /// The history database: a SQLite file (default: .tardy/tardy.db at the
    /// repository's top, else in the current directory; or $TARDY_DB),
    /// postgres://USER:PASSWORD@HOST/DB, or git:BRANCH (no server: a branch
    /// of this repository, pushed to origin).
    #[arg(long, value_name = "PATH", global = true, env = "TARDY_DB")]
    pub db: Option<PathBuf>,
    /// Project name inside the database.
    #[arg(long, value_name = "NAME", global = true, default_value = "default")]
    pub project: String,
}

/// Where a `--save` goes and which commit it belongs to (for `run` and `tests show`).
#[derive(Args, Clone, Debug)]
pub struct SaveMeta {
    /// The commit the results belong to (default: HEAD of the repository here).
    #[arg(long, value_name = "REV", help_heading = "History")]
    pub commit: Option<String>,
    /// The branch (default: the current branch).
    #[arg(long, value_name = "BRANCH", help_heading = "History")]
    pub branch: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

impl SaveMeta {
    /// `--commit`/`--branch` label what is saved (or pushed): alone they
    /// would be silently ignored.
    pub fn check_used(&self, used: bool, by: &str) -> Result<(), String> {
        if !used && (self.commit.is_some() || self.branch.is_some()) {
            return Err(format!(
                "--commit and --branch label saved results: add {by}"
            ));
        }
        Ok(())
    }
}

#[derive(Args)]
pub struct HistoryArgs {
    #[command(flatten)]
    db: DbArgs,
    #[command(subcommand)]
    command: HistoryCommand,
}

#[derive(Args, Clone, Debug)]
struct CpArgs {
    /// False change points per 1,000 points of pure noise, however often the
    /// series is checked (the calibrated default detector; docs/changepoints.md).
    #[arg(long, value_name = "RATE")]
    false_alarm_rate: Option<f64>,
    /// Use Apache Otava 0.8's E-Divisive exactly (its p-value ignores its search:
    /// expect false alerts on noise).
    #[arg(long)]
    otava: bool,
    /// With --otava: points per sliding window (Otava's --window, default 50).
    #[arg(long, value_name = "N")]
    window: Option<usize>,
    /// With --otava: significance level (Otava's -P/--p-value, default 0.001).
    #[arg(long = "p-value", value_name = "P")]
    p_value: Option<f64>,
    /// Drop change points whose relative change is at most this amount: 2, 2% or
    /// 0.02 (Otava's -M 0.02), the convention of bisect's --threshold.
    #[arg(long, default_value = "0", value_name = "AMOUNT")]
    min_magnitude: String,
}

impl CpArgs {
    fn options(&self) -> Result<Method, String> {
        Method::from_flags(
            self.otava,
            self.window,
            self.p_value,
            self.false_alarm_rate,
            super::percent("min-magnitude", &self.min_magnitude, false)?,
        )
    }
}

#[derive(Args, Clone, Debug)]
struct Filter {
    /// Only points at or after this time (2026-11-01, RFC 3339, Unix seconds, or "30d" ago).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Only points of this branch.
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
}

impl Filter {
    fn point_filter(&self) -> Result<PointFilter, String> {
        ops::point_filter(self.since.as_deref(), self.branch.as_deref())
    }
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// Every series with its point count, last value and open alerts.
    List(ListArgs),
    /// A series over time: a sparkline with change points marked, and its segments.
    Show(ShowArgs),
    /// Find change points in the stored series (all, or those named) and print new alerts.
    #[command(long_about = include_str!("../../docs/help/history-detect.about.txt"))]
    Detect(DetectArgs),
    /// Open alerts (--all: acknowledged and dismissed too).
    Alerts(AlertsArgs),
    /// Acknowledge alerts: known, being handled.
    Ack(AckArgs),
    /// Dismiss alerts: not a real change.
    Dismiss(DismissArgs),
    /// Note on a commit or a commit range, e.g. "runner image changed".
    Annotate(AnnotateArgs),
    /// Write series (all, or those named) as CSV or JSON.
    Export(ExportArgs),
    /// Import results: tardy or hyperfine JSON, Otava CSV, or test reports (one suite run).
    #[command(long_about = include_str!("../../docs/help/history-import.about.txt"))]
    Import(ImportArgs),
    /// Change points of an Otava CSV file, without a database (like `otava analyze`).
    Analyze(AnalyzeArgs),
    /// Start `tardy bisect` on an alert's commit range with the series' command.
    Bisect(BisectArgs),
}

#[derive(Args)]
#[command(after_help = include_str!("../../docs/help/history-list.examples.txt"))]
struct ListArgs {
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-show.examples.txt")
)]
struct ShowArgs {
    series: String,
    /// One test of a suite series.
    #[arg(long, value_name = "NAME")]
    test: Option<String>,
    #[command(flatten)]
    filter: Filter,
    #[command(flatten)]
    cp: CpArgs,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-detect.examples.txt")
)]
struct DetectArgs {
    series: Vec<String>,
    #[command(flatten)]
    filter: Filter,
    #[command(flatten)]
    cp: CpArgs,
    /// False discovery rate across all series of this run.
    #[arg(long, default_value_t = 0.05, value_name = "Q")]
    fdr: f64,
    /// Recompute every series from scratch.
    #[arg(long)]
    full: bool,
    /// Check each test of a suite only at its end, over the suite's
    /// newest N points (what `tardy serve` does after each upload, with
    /// N = 256; the server searches each long test window whole in
    /// turns, up to every 8th upload, this every time): work bounded by N, not by the
    /// history's length. Series (a suite's total too) are still searched
    /// whole.
    #[arg(long, value_name = "N", conflicts_with = "full")]
    ends: Option<usize>,
    /// Exit 1 while an open alert (new or earlier, not acknowledged or
    /// dismissed) holds a regression that is not an environment change.
    #[arg(long)]
    fail_on_regression: bool,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-alerts.examples.txt")
)]
struct AlertsArgs {
    #[arg(long)]
    all: bool,
    /// Series to list per alert.
    #[arg(long, default_value_t = 5, value_name = "N")]
    top: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = include_str!("../../docs/help/history-ack.examples.txt"))]
struct AckArgs {
    #[arg(required = true)]
    ids: Vec<i64>,
}

#[derive(Args)]
#[command(after_help = include_str!("../../docs/help/history-dismiss.examples.txt"))]
struct DismissArgs {
    #[arg(required = true)]
    ids: Vec<i64>,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-annotate.examples.txt")
)]
struct AnnotateArgs {
    /// The commit (or the first of the range).
    #[arg(long, value_name = "REV")]
    commit: String,
    /// The last commit of the range.
    #[arg(long, value_name = "REV")]
    until: Option<String>,
    /// Only this series (default: all).
    #[arg(long, value_name = "NAME")]
    series: Option<String>,
    text: String,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-export.examples.txt")
)]
struct ExportArgs {
    series: Vec<String>,
    /// csv or json.
    #[arg(long, default_value = "csv")]
    format: String,
    /// Write here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    filter: Filter,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-import.examples.txt")
)]
struct ImportArgs {
    /// Results files, Otava CSVs, or test reports (files or directories; .gz read).
    #[arg(required = true, value_name = "FILES")]
    files: Vec<PathBuf>,
    /// Series name (one series) or prefix ("NAME/metric"); required for test reports.
    #[arg(long, value_name = "NAME")]
    series: Option<String>,
    /// The commit the results belong to (resolved with git when possible).
    #[arg(long, value_name = "REV")]
    commit: Option<String>,
    /// The branch the results belong to (default: the current git branch, when
    /// in a repository).
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// When the results were taken (default: the file's time).
    #[arg(long, value_name = "TIME")]
    time: Option<String>,
    /// auto, results (tardy/hyperfine JSON), csv or reports.
    #[arg(long, default_value = "auto")]
    format: String,
    /// The CSV time column.
    #[arg(long, default_value = "time", value_name = "NAME")]
    time_column: String,
    /// Higher values are better (throughput).
    #[arg(long)]
    higher_is_better: bool,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-analyze.examples.txt")
)]
struct AnalyzeArgs {
    file: PathBuf,
    #[arg(long, default_value = "time", value_name = "NAME")]
    time_column: String,
    #[command(flatten)]
    cp: CpArgs,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/history-bisect.examples.txt")
)]
struct BisectArgs {
    alert: i64,
    /// The series of the alert to bisect (default: the one that changed most).
    #[arg(long, value_name = "NAME")]
    series: Option<String>,
    /// Print the bisect command instead of running it.
    #[arg(long)]
    dry_run: bool,
    /// Widen the alert's range N times (both ends move out by 2, 4, 8...
    /// points): when its ends do not reproduce the change, tardy says
    /// which N to try next.
    #[arg(long, default_value_t = 0, value_name = "N")]
    widen: u32,
}

/// Open (or make) the history database `args` name.
pub fn open(args: &DbArgs) -> Result<Box<dyn History + Send>, DbError> {
    store::open(args.db.as_deref(), &args.project)
}

/// Open a history database that must exist already.
pub fn open_existing(args: &DbArgs) -> Result<Box<dyn History + Send>, String> {
    store::open_existing(args.db.as_deref(), &args.project)
}

/// The subcommand, run; its exit code.
pub fn run(args: HistoryArgs) -> Result<i32, String> {
    let db = &args.db;
    match args.command {
        HistoryCommand::Analyze(a) => a.run(),
        HistoryCommand::List(a) => a.run(db),
        HistoryCommand::Show(a) => a.run(db),
        HistoryCommand::Detect(a) => a.run(db),
        HistoryCommand::Alerts(a) => a.run(db),
        HistoryCommand::Ack(a) => set_state(db, &a.ids, AlertState::Acknowledged),
        HistoryCommand::Dismiss(a) => set_state(db, &a.ids, AlertState::Dismissed),
        HistoryCommand::Annotate(a) => a.run(db),
        HistoryCommand::Export(a) => a.run(db),
        HistoryCommand::Import(a) => a.run(db),
        HistoryCommand::Bisect(a) => a.run(db),
    }
}

impl AnalyzeArgs {
    fn run(self) -> Result<i32, String> {
        let method = self.cp.options()?;
        let a = ops::analyze(&self.file, &self.time_column, &method)?;
        emit(&if self.json {
            json(&a.changes)
        } else {
            view::analyzed(&self.file.display().to_string(), &a, &method.describe())
        });
        Ok(0)
    }
}

impl ListArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let list = open(db).and_then(|s| s.list()).map_err(|e| e.to_string())?;
        emit(&if self.json {
            json(&serde_json::json!({
                "schema": "tardy.history-list",
                "schema_version": 1,
                "series": list,
            }))
        } else {
            view::list(&list, style())
        });
        Ok(0)
    }
}

impl DetectArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let opts = DetectOptions {
            changepoint: self.cp.options()?,
            fdr: self.fdr,
            filter: self.filter.point_filter()?,
            full: self.full,
            window: self.ends,
            ..DetectOptions::default()
        };
        let mut store = open(db).map_err(|e| e.to_string())?;
        let d = ops::detect(store.as_mut(), &self.series, &opts, self.fail_on_regression)?;
        emit(&if self.json {
            json(&d.report)
        } else {
            view::detect_summary(&d.report, style())
        });
        // --fail-on-regression: exit 1 while a regression alert is open (not
        // acknowledged or dismissed), not only in the run that found it.
        if d.open_regressions.is_empty() {
            return Ok(0);
        }
        eprintln!(
            "{}",
            view::open_regressions(&d.open_regressions, d.new_open)
        );
        Ok(1)
    }
}

impl AlertsArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let alerts = ops::alerts(&*open(db).map_err(|e| e.to_string())?, self.all)?;
        emit(&if self.json {
            json(&alerts)
        } else {
            view::alerts(&alerts, self.all, self.top, style())
        });
        Ok(0)
    }
}

impl AnnotateArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut store = open(db).map_err(|e| e.to_string())?;
        let (until, series) = (self.until.as_deref(), self.series.as_deref());
        let id = ops::annotate(
            store.as_mut(),
            &here,
            &self.commit,
            until,
            series,
            &self.text,
        )?;
        println!("annotation #{id} saved");
        Ok(0)
    }
}

impl ImportArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let (commit, branch) = (self.commit.as_deref(), self.branch.as_deref());
        let labels = Labels {
            series: self.series,
            provenance: store::import_provenance(commit, branch, self.time.as_deref())?,
            fingerprint: None,
            direction: self.higher_is_better.then_some(Direction::HigherIsBetter),
        };
        let spec = ops::ImportSpec {
            format: &self.format,
            time_column: &self.time_column,
            labels,
        };
        let mut store = open(db).map_err(|e| e.to_string())?;
        let total = ops::import(store.as_mut(), &self.files, &spec, &mut |f| {
            for w in &f.warnings {
                eprintln!("tardy: warning: {}", tardy::fmt::clip::message(w));
            }
            println!("{}", view::imported(f));
        })?;
        if self.files.len() > 1 {
            println!("{total} points imported");
        }
        Ok(0)
    }
}

impl ShowArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let store = open_existing(db)?;
        let filter = self.filter.point_filter()?;
        let test = self.test.as_deref();
        let s = ops::show(&*store, &self.series, test, &filter, &self.cp.options()?)?;
        let width = super::terminal_width().unwrap_or(80).saturating_sub(2);
        emit(&if self.json {
            json(&view::shown_json(&s))
        } else {
            view::show(&s, style(), tardy::render::plot::unicode_supported(), width)
        });
        Ok(0)
    }
}

fn set_state(db: &DbArgs, ids: &[i64], state: AlertState) -> Result<i32, String> {
    if ids.is_empty() {
        return Err("name at least one alert".into());
    }
    let mut store = open(db).map_err(|e| e.to_string())?;
    ops::set_states(store.as_mut(), ids, state)?;
    for id in ids {
        println!("alert #{id} {}", state.as_str());
    }
    Ok(0)
}

impl ExportArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let format = self.format.as_str();
        if format != "csv" && format != "json" {
            return Err(format!("--format must be csv or json, not '{format}'"));
        }
        let store = open_existing(db)?;
        let filter = self.filter.point_filter()?;
        let series = ops::export(&*store, &self.series, &filter, format == "csv")?;
        let text = if format == "json" {
            json(&view::export_json(&series))
        } else {
            view::export_csv(&series)
        };
        match &self.output {
            None => emit(&text),
            Some(p) => tardy::store::write_atomic(p, text.as_bytes()).map_err(|e| e.to_string())?,
        }
        Ok(0)
    }
}

impl BisectArgs {
    fn run(self, db: &DbArgs) -> Result<i32, String> {
        let (id, widen) = (self.alert, self.widen);
        let store = open_existing(db)?;
        let alert = store
            .alert(id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| DbError::NoAlert(id).to_string())?;
        let plan = bisect_plan(&*store, &alert, self.series.as_deref(), widen)?;
        eprintln!("tardy {}", shell_line(&plan.argv));
        let next = |lead: &str| format!("{lead}{}", view::widen_hint(&plan, id, widen));
        if self.dry_run {
            eprintln!("{}", next("if its ends do not reproduce the change, "));
            return Ok(0);
        }
        let exe = std::env::current_exe().map_err(|e| format!("cannot find tardy itself: {e}"))?;
        let status = std::process::Command::new(exe)
            .args(&plan.argv)
            .status()
            .map_err(|e| format!("cannot start tardy bisect: {e}"))?;
        let code = status.code().unwrap_or(EXIT_ERROR);
        if code == 1 {
            // `tardy bisect` exits 1 when its ends do not reproduce the change.
            let (good, bad) = (&plan.good, &plan.bad);
            let lead = format!("tardy: {good}..{bad} did not reproduce alert #{id}'s change; ");
            eprintln!("{}", next(&lead));
        }
        Ok(code)
    }
}
