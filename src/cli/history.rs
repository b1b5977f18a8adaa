//! `tardy history`: the store of every saved run, its change points and alerts.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use tardy::history::bisect::{bisect_plan, shell_line};
use tardy::history::detect::{DetectOptions, Method};
use tardy::history::import::{self, Labels};
use tardy::history::ops;
use tardy::jobs::store;
use tardy::render::history as view;
use tardy::store::history::{AlertState, Direction, PointFilter, Provenance};
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

    /// The saved point's provenance (see [`store::provenance_now`]).
    pub fn provenance(&self) -> Result<Provenance, String> {
        store::provenance_now(self.commit.as_deref(), self.branch.as_deref())
    }
}

#[derive(Args)]
#[command(about = "The history of saved runs: change points over time and alerts")]
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
        let since = match &self.since {
            None => None,
            Some(s) => Some(import::parse_since(s)?),
        };
        Ok(PointFilter {
            branch: self.branch.clone(),
            since,
            newest: None,
        })
    }
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// Every series with its point count, last value and open alerts.
    #[command(after_help = "Examples:\n  tardy history list\n  tardy history list --json")]
    List {
        #[arg(long)]
        json: bool,
    },
    /// A series over time: a sparkline with change points marked, and its segments.
    #[command(
        after_help = "Examples:\n  tardy history show nightly/build\n  tardy history show unit --test 'tests::slow_query' --since 30d\n  tardy history show nightly/build --json"
    )]
    Show {
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
    },
    /// Find change points in the stored series (all, or those named) and print new alerts.
    #[command(
        long_about = include_str!("../../docs/help/history-detect.about.txt"),
        after_help = "Examples:\n  tardy history detect\n  tardy history detect build --since 30d --branch main --fail-on-regression\n  tardy history detect --false-alarm-rate 0.001      (one false alert in 1,000 series of 1,000 builds)\n  tardy history detect --otava --p-value 0.001       (Otava 0.8, exactly)\n  tardy history detect --ends 256                    (each test's end only, as the server checks)"
    )]
    Detect {
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
    },
    /// Open alerts (--all: acknowledged and dismissed too).
    #[command(
        after_help = "Examples:\n  tardy history alerts\n  tardy history alerts --all --top 10\n  tardy history alerts --json"
    )]
    Alerts {
        #[arg(long)]
        all: bool,
        /// Series to list per alert.
        #[arg(long, default_value_t = 5, value_name = "N")]
        top: usize,
        #[arg(long)]
        json: bool,
    },
    /// Acknowledge alerts: known, being handled.
    #[command(after_help = "Examples:\n  tardy history ack 3\n  tardy history ack 3 4 5")]
    Ack {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Dismiss alerts: not a real change.
    #[command(after_help = "Examples:\n  tardy history dismiss 3")]
    Dismiss {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Note on a commit or a commit range, e.g. "runner image changed".
    #[command(
        after_help = "Examples:\n  tardy history annotate --commit HEAD 'runner image changed'\n  tardy history annotate --commit abc123 --until def456 --series nightly/build 'new compiler'"
    )]
    Annotate {
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
    },
    /// Write series (all, or those named) as CSV or JSON.
    #[command(
        after_help = "Examples:\n  tardy history export --format csv > history.csv\n  tardy history export nightly/build --format json --output build.json --since 30d"
    )]
    Export {
        series: Vec<String>,
        /// csv or json.
        #[arg(long, default_value = "csv")]
        format: String,
        /// Write here instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        filter: Filter,
    },
    /// Import results: tardy or hyperfine JSON, Otava CSV, or test reports (one suite run).
    #[command(
        long_about = include_str!("../../docs/help/history-import.about.txt"),
        after_help = "Examples:\n  tardy history import results.csv --series api\n  tardy history import hyperfine.json --commit HEAD~3\n  tardy history import build/test-results --series unit --commit abc123 --time 2026-11-20T10:00:00Z"
    )]
    Import {
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
    },
    /// Change points of an Otava CSV file, without a database (like `otava analyze`).
    #[command(
        after_help = "Examples:\n  tardy history analyze examples/data/nightly.csv\n  tardy history analyze results.csv --otava --p-value 0.001 --json"
    )]
    Analyze {
        file: PathBuf,
        #[arg(long, default_value = "time", value_name = "NAME")]
        time_column: String,
        #[command(flatten)]
        cp: CpArgs,
        #[arg(long)]
        json: bool,
    },
    /// Start `tardy bisect` on an alert's commit range with the series' command.
    #[command(
        after_help = "Examples:\n  tardy history bisect 1 --dry-run\n  tardy history bisect 1\n  tardy history bisect 1 --widen 1        (two measured points further out on each side)"
    )]
    Bisect {
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
    },
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
        HistoryCommand::Analyze {
            file,
            time_column,
            cp,
            json: as_json,
        } => analyze(&file, &time_column, &cp, as_json),
        HistoryCommand::List { json: as_json } => list(db, as_json),
        HistoryCommand::Show {
            series,
            test,
            filter,
            cp,
            json: as_json,
        } => show(db, &series, test.as_deref(), &filter, &cp, as_json),
        HistoryCommand::Detect {
            series,
            filter,
            cp,
            fdr,
            full,
            ends,
            fail_on_regression,
            json: as_json,
        } => {
            let opts = detect_options(&cp, fdr, &filter, full, ends)?;
            detect(db, &series, &opts, fail_on_regression, as_json)
        }
        HistoryCommand::Alerts {
            all,
            top,
            json: as_json,
        } => alerts(db, all, top, as_json),
        HistoryCommand::Ack { ids } => set_state(db, &ids, AlertState::Acknowledged),
        HistoryCommand::Dismiss { ids } => set_state(db, &ids, AlertState::Dismissed),
        HistoryCommand::Annotate {
            commit,
            until,
            series,
            text,
        } => annotate(db, &commit, until.as_deref(), series.as_deref(), &text),
        HistoryCommand::Export {
            series,
            format,
            output,
            filter,
        } => export(db, &series, &format, output.as_deref(), &filter),
        HistoryCommand::Import {
            files,
            series,
            commit,
            branch,
            time,
            format,
            time_column,
            higher_is_better,
        } => {
            let when = (commit.as_deref(), branch.as_deref(), time.as_deref());
            import_files(
                db,
                &files,
                &format,
                &time_column,
                series,
                when,
                higher_is_better,
            )
        }
        HistoryCommand::Bisect {
            alert,
            series,
            dry_run,
            widen,
        } => bisect(db, alert, series.as_deref(), dry_run, widen),
    }
}

fn analyze(file: &Path, time_column: &str, cp: &CpArgs, as_json: bool) -> Result<i32, String> {
    let method = cp.options()?;
    let a = ops::analyze(file, time_column, &method)?;
    emit(&if as_json {
        json(&a.changes)
    } else {
        view::analyzed(&file.display().to_string(), &a, &method.describe())
    });
    Ok(0)
}

fn list(db: &DbArgs, as_json: bool) -> Result<i32, String> {
    let list = open(db).and_then(|s| s.list()).map_err(|e| e.to_string())?;
    emit(&if as_json {
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

fn detect_options(
    cp: &CpArgs,
    fdr: f64,
    filter: &Filter,
    full: bool,
    ends: Option<usize>,
) -> Result<DetectOptions, String> {
    Ok(DetectOptions {
        changepoint: cp.options()?,
        fdr,
        filter: filter.point_filter()?,
        full,
        window: ends,
        ..DetectOptions::default()
    })
}

fn detect(
    db: &DbArgs,
    series: &[String],
    opts: &DetectOptions,
    fail_on_regression: bool,
    as_json: bool,
) -> Result<i32, String> {
    let mut store = open(db).map_err(|e| e.to_string())?;
    let d = ops::detect(store.as_mut(), series, opts, fail_on_regression)?;
    emit(&if as_json {
        json(&d.report)
    } else {
        view::detect_summary(&d.report, style())
    });
    gate(&d)
}

fn alerts(db: &DbArgs, all: bool, top: usize, as_json: bool) -> Result<i32, String> {
    let alerts = ops::alerts(&*open(db).map_err(|e| e.to_string())?, all)?;
    emit(&if as_json {
        json(&alerts)
    } else {
        view::alerts(&alerts, all, top, style())
    });
    Ok(0)
}

fn annotate(
    db: &DbArgs,
    commit: &str,
    until: Option<&str>,
    series: Option<&str>,
    text: &str,
) -> Result<i32, String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut store = open(db).map_err(|e| e.to_string())?;
    let id = ops::annotate(store.as_mut(), &here, commit, until, series, text)?;
    println!("annotation #{id} saved");
    Ok(0)
}

/// `history import`: `when` is the --commit, --branch and --time given.
fn import_files(
    db: &DbArgs,
    files: &[PathBuf],
    format: &str,
    time_column: &str,
    series: Option<String>,
    when: (Option<&str>, Option<&str>, Option<&str>),
    higher_is_better: bool,
) -> Result<i32, String> {
    let labels = Labels {
        series,
        provenance: store::import_provenance(when.0, when.1, when.2)?,
        fingerprint: None,
        direction: higher_is_better.then_some(Direction::HigherIsBetter),
    };
    let spec = ops::ImportSpec {
        format,
        time_column,
        labels,
    };
    let mut store = open(db).map_err(|e| e.to_string())?;
    let total = ops::import(store.as_mut(), files, &spec, &mut |f| {
        for w in &f.warnings {
            eprintln!("tardy: warning: {}", tardy::fmt::clip::message(w));
        }
        println!("{}", view::imported(f));
    })?;
    if files.len() > 1 {
        println!("{total} points imported");
    }
    Ok(0)
}

fn show(
    db: &DbArgs,
    series: &str,
    test: Option<&str>,
    filter: &Filter,
    cp: &CpArgs,
    as_json: bool,
) -> Result<i32, String> {
    let store = open_existing(db)?;
    let s = ops::show(
        &*store,
        series,
        test,
        &filter.point_filter()?,
        &cp.options()?,
    )?;
    let width = super::terminal_width().unwrap_or(80).saturating_sub(2);
    emit(&if as_json {
        json(&view::shown_json(&s))
    } else {
        view::show(&s, style(), tardy::render::plot::unicode_supported(), width)
    });
    Ok(0)
}

/// `--fail-on-regression`: exit 1 while a regression alert is open (not
/// acknowledged or dismissed), not only in the run that found it.
fn gate(d: &ops::Detected) -> Result<i32, String> {
    if d.open_regressions.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "{}",
        view::open_regressions(&d.open_regressions, d.new_open)
    );
    Ok(1)
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

fn export(
    db: &DbArgs,
    names: &[String],
    format: &str,
    output: Option<&Path>,
    filter: &Filter,
) -> Result<i32, String> {
    if format != "csv" && format != "json" {
        return Err(format!("--format must be csv or json, not '{format}'"));
    }
    let store = open_existing(db)?;
    let series = ops::export(&*store, names, &filter.point_filter()?, format == "csv")?;
    let text = if format == "json" {
        json(&view::export_json(&series))
    } else {
        view::export_csv(&series)
    };
    match output {
        None => emit(&text),
        Some(p) => tardy::store::write_atomic(p, text.as_bytes()).map_err(|e| e.to_string())?,
    }
    Ok(0)
}

fn bisect(
    db: &DbArgs,
    id: i64,
    series: Option<&str>,
    dry_run: bool,
    widen: u32,
) -> Result<i32, String> {
    let store = open_existing(db)?;
    let alert = store
        .alert(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| DbError::NoAlert(id).to_string())?;
    let plan = bisect_plan(&*store, &alert, series, widen)?;
    eprintln!("tardy {}", shell_line(&plan.argv));
    let next = |lead: &str| format!("{lead}{}", view::widen_hint(&plan, id, widen));
    if dry_run {
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
        eprintln!(
            "{}",
            next(&format!(
                "tardy: {}..{} did not reproduce alert #{id}'s change; ",
                plan.good, plan.bad
            ))
        );
    }
    Ok(code)
}
