//! `tardy history`: the store of every saved run, its change points and alerts.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use tardy::history::bisect::{bisect_plan, shell_line};
use tardy::history::detect::{self, DetectOptions, Method};
use tardy::history::import::{self, Labels};
use tardy::ingest::sniff::{self, Kind};
use tardy::render::history as view;
use tardy::render::style::Style;
use tardy::server::pool::Backend;
use tardy::store::history::{AlertState, Direction, PointFilter, Provenance, SeriesKind};
use tardy::store::{Batch, DbError, History};

use super::{EXIT_ERROR, fail};

/// Where the database is and which project.
#[derive(Args, Clone, Debug)]
pub struct DbArgs {
    /// The history database: a SQLite file (default: .tardy/tardy.db at the
    /// repository's top, else in the current directory; or $TARDY_DB), or
    /// postgres://USER:PASSWORD@HOST/DB.
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

    /// The saved point's provenance (see [`provenance_now`]).
    pub fn provenance(&self) -> Result<Provenance, String> {
        provenance_now(self.commit.as_deref(), self.branch.as_deref())
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
            Some(s) => Some(parse_since(s)?),
        };
        Ok(PointFilter {
            branch: self.branch.clone(),
            since,
        })
    }
}

/// A duration ago ("30d", "12h", "2w", "1week 2days", as humantime reads them), or
/// any time `parse_time` reads.
fn parse_since(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if let Ok(d) = humantime::parse_duration(t) {
        return Ok(import::now_s() - i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2));
    }
    import::parse_time(t).ok_or_else(|| {
        format!("--since: '{s}' is not a date or a duration (try 2026-11-01, 2026-11-01T12:00:00Z or 30d)")
    })
}

#[derive(Subcommand)]
enum HistoryCommand {
    /// Every series with its point count, last value and open alerts.
    List {
        #[arg(long)]
        json: bool,
    },
    /// A series over time: a sparkline with change points marked, and its segments.
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
        long_about = "Find change points in every stored series (each test of a suite is a series of its own). \
By default with a calibrated false-alarm rate: 1,000 points of pure noise get any change point with probability \
at most --false-alarm-rate (1%), whatever the noise's shape and however often the series is checked, once or after \
every build (docs/changepoints.md); --otava uses E-Divisive \
means exactly as Apache Otava computes them (whose p-values ignore its search, so it raises false alerts on noise). \
Change points are kept when significant after Benjamini-Hochberg across all series of the run (--fdr), grouped \
into one alert per commit range (a change found again joins the alert already open), and called an environment \
change when the machine's fingerprint changed at the same point. --fail-on-regression exits 1 while a regression \
alert is open, new or not, until it is acknowledged or dismissed.",
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
    Ack {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Dismiss alerts: not a real change.
    Dismiss {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Note on a commit or a commit range, e.g. "runner image changed".
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
        long_about = "Import files into the history, each file in one transaction (all or nothing).\n\n\
* tardy JSON (`tardy run --export-json`) and hyperfine JSON (`--export-json`): one point per benchmark.\n\
* CSV as Otava reads it: a header `time,commit,metric1,metric2,...` (optional `branch`), one row per point.\n\
* Test reports (JUnit XML, NUnit, TRX, xUnit, go test -json; files or directories): one point of a suite \
series named by --series, with every test's duration.\n\n\
--commit is resolved in the repository (hash, commit time, branch); --time sets the run time.",
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

fn style() -> Style {
    Style {
        color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// The database path: --db, else .tardy/tardy.db at the repository's top or here.
pub fn db_path(db: &Option<PathBuf>) -> PathBuf {
    if let Some(p) = db {
        return p.clone();
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = import::repo_root(&here).unwrap_or(here);
    root.join(".tardy").join("tardy.db")
}

/// Where the history is: a SQLite file (`PATH` or `sqlite:PATH`) or a
/// PostgreSQL database (`postgres://...`).
pub fn backend(db: &Option<PathBuf>) -> Backend {
    Backend::parse(&db_path(db).to_string_lossy())
}

/// Open the history database for `tardy run --save` and friends.
pub fn open(args: &DbArgs) -> Result<Box<dyn History + Send>, DbError> {
    let backend = backend(&args.db);
    let store = backend.open(&args.project)?;
    if let Backend::Sqlite(path) = &backend {
        ignore_dir(path);
    }
    Ok(store)
}

/// Keep `git status` clean: a `.gitignore` of `*` in a `.tardy` directory we made.
fn ignore_dir(db: &Path) {
    if let Some(dir) = db.parent()
        && dir.file_name().is_some_and(|n| n == ".tardy")
    {
        let gi = dir.join(".gitignore");
        if !gi.exists() {
            let _ = std::fs::write(gi, "*\n");
        }
    }
}

/// Provenance of a point saved now: git HEAD (or `commit`) when in a repository.
pub fn provenance_now(commit: Option<&str>, branch: Option<&str>) -> Result<Provenance, String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut p = match import::git_provenance(&here, commit) {
        Some(p) => p,
        None => match commit {
            Some(c) if import::repo_root(&here).is_some() => {
                return Err(format!(
                    "--commit: '{c}' is not a commit of this repository"
                ));
            }
            Some(c) => Provenance {
                commit: Some(c.to_string()),
                run_time: import::now_s(),
                ..Provenance::default()
            },
            None => Provenance {
                run_time: import::now_s(),
                ..Provenance::default()
            },
        },
    };
    if let Some(b) = branch {
        p.branch = Some(b.to_string());
    }
    Ok(p)
}

pub fn main(args: HistoryArgs) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
}

fn json<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

fn run(args: HistoryArgs) -> Result<i32, String> {
    let err = |e: DbError| e.to_string();
    match args.command {
        HistoryCommand::Analyze {
            file,
            time_column,
            cp,
            json: as_json,
        } => analyze(&file, &time_column, &cp.options()?, as_json),
        HistoryCommand::List { json: as_json } => {
            let db = open(&args.db).map_err(err)?;
            let list = db.list().map_err(err)?;
            print(&if as_json {
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
        HistoryCommand::Show {
            series,
            test,
            filter,
            cp,
            json: as_json,
        } => {
            let opts = cp.options()?;
            let db = open(&args.db).map_err(err)?;
            let info = db
                .series(&series)
                .map_err(err)?
                .ok_or_else(|| DbError::NoSeries(series.clone()).to_string())?;
            let pf = filter.point_filter()?;
            let points = match &test {
                None => db.points(info.id, &pf).map_err(err)?,
                Some(t) => {
                    let mut found = None;
                    db.for_each_test(info.id, &pf, &mut |id, p| {
                        if &id.name == t {
                            found = Some(p.to_vec());
                        }
                        Ok(())
                    })
                    .map_err(err)?;
                    found.ok_or_else(|| format!("series '{series}' has no test '{t}'"))?
                }
            };
            let values: Vec<f64> = points.iter().map(|p| p.value).collect();
            let cps = opts.detect(&values);
            let segments = detect::segments(&*db, &points, &cps).map_err(err)?;
            if as_json {
                #[derive(serde::Serialize)]
                struct Out<'a> {
                    series: &'a tardy::store::history::SeriesInfo,
                    test: Option<&'a str>,
                    points: &'a [tardy::store::history::Point],
                    segments: &'a [detect::Segment],
                }
                print(&json(&Out {
                    series: &info,
                    test: test.as_deref(),
                    points: &points,
                    segments: &segments,
                }));
            } else {
                let notes = db.annotations().map_err(err)?;
                let width = super::terminal_width().unwrap_or(80).saturating_sub(2);
                print(&view::show(
                    &view::ShowView {
                        series: &info,
                        test: test.as_deref(),
                        values: &values,
                        segments: &segments,
                        annotations: &notes,
                    },
                    style(),
                    tardy::render::plot::unicode_supported(),
                    width,
                ));
            }
            Ok(0)
        }
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
            if ends.is_some_and(|w| w < tardy::stats::rank_cusum::MIN_POINTS) {
                return Err(format!(
                    "--ends must be at least {} points (the end test's shortest tail and reference)",
                    tardy::stats::rank_cusum::MIN_POINTS
                ));
            }
            if !(fdr > 0.0 && fdr <= 1.0) {
                return Err(format!("--fdr must be in (0, 1], got {fdr}"));
            }
            let opts = DetectOptions {
                changepoint: cp.options()?,
                fdr,
                filter: filter.point_filter()?,
                full,
                window: ends,
                ..DetectOptions::default()
            };
            let mut db = open(&args.db).map_err(err)?;
            let report = detect::detect(db.as_mut(), &series, &opts).map_err(err)?;
            if as_json {
                print(&json(&report));
            } else {
                let mut out = format!(
                    "{} series examined ({} incremental), {} change points, {} below the FDR bar, {} new alert{}\n",
                    report.series,
                    report.incremental,
                    report.change_points,
                    report.rejected_by_fdr,
                    report.new_alerts.len(),
                    if report.new_alerts.len() == 1 {
                        ""
                    } else {
                        "s"
                    }
                );
                if report.too_short > 0 {
                    out.push_str(&format!(
                        "{} series {} fewer than {} points: too few for the calibrated detector to call a change yet (`--otava` tests them with Otava's t-test, at the price of false alerts on noise)\n",
                        report.too_short,
                        if report.too_short == 1 { "has" } else { "have" },
                        tardy::stats::rank_cusum::MIN_POINTS
                    ));
                }
                for y in report.young.iter().take(10) {
                    out.push_str(&view::young(y));
                }
                if report.young.len() > 10 {
                    out.push_str(&format!(
                        "... and {} more young series\n",
                        report.young.len() - 10
                    ));
                }
                for a in &report.new_alerts {
                    out.push('\n');
                    out.push_str(&view::alert(a, 5, style()));
                }
                for a in &report.retracted {
                    out.push_str(&format!(
                        "\nalert #{} retracted: {}\n",
                        a.id,
                        a.reason
                            .as_deref()
                            .unwrap_or("its change is no longer found")
                    ));
                }
                for a in &report.reopened {
                    out.push_str(&format!(
                        "\nalert #{} reopened: its change is found again\n",
                        a.id
                    ));
                }
                print(&out);
            }
            if !fail_on_regression {
                return Ok(0);
            }
            // Failing while a regression is open (not acknowledged or dismissed),
            // not only in the run that found it: a CI job re-run stays red until
            // someone looks.
            let open: Vec<i64> = db
                .alerts(&[AlertState::Open])
                .map_err(err)?
                .into_iter()
                .filter(|a| a.environment.is_empty() && a.regressions() > 0)
                .map(|a| a.id)
                .collect();
            if open.is_empty() {
                return Ok(0);
            }
            let new = report
                .new_alerts
                .iter()
                .filter(|a| open.contains(&a.id))
                .count();
            eprintln!(
                "tardy: {} open regression alert{} ({}; {new} new): `tardy history ack ID` once handled, `tardy history dismiss ID` if not a regression",
                open.len(),
                if open.len() == 1 { "" } else { "s" },
                open.iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            Ok(1)
        }
        HistoryCommand::Alerts {
            all,
            top,
            json: as_json,
        } => {
            let db = open(&args.db).map_err(err)?;
            let states: &[AlertState] = if all {
                &[
                    AlertState::Open,
                    AlertState::Acknowledged,
                    AlertState::Dismissed,
                    AlertState::Retracted,
                ]
            } else {
                &[AlertState::Open]
            };
            let alerts = db.alerts(states).map_err(err)?;
            if as_json {
                print(&json(&alerts));
            } else if alerts.is_empty() {
                print(if all {
                    "no alerts\n"
                } else {
                    "no open alerts\n"
                });
            } else {
                let text: Vec<String> = alerts
                    .iter()
                    .map(|a| view::alert(a, top, style()))
                    .collect();
                print(&text.join("\n"));
            }
            Ok(0)
        }
        HistoryCommand::Ack { ids } | HistoryCommand::Dismiss { ids } if ids.is_empty() => {
            Err("name at least one alert".into())
        }
        HistoryCommand::Ack { ids } => set_state(&args.db, &ids, AlertState::Acknowledged),
        HistoryCommand::Dismiss { ids } => set_state(&args.db, &ids, AlertState::Dismissed),
        HistoryCommand::Annotate {
            commit,
            until,
            series,
            text,
        } => {
            let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
            let resolve = |rev: &str| {
                import::git_provenance(&here, Some(rev))
                    .and_then(|p| p.commit)
                    .unwrap_or_else(|| rev.to_string())
            };
            let mut db = open(&args.db).map_err(err)?;
            let id = db
                .annotate(
                    series.as_deref(),
                    &resolve(&commit),
                    until.as_deref().map(resolve).as_deref(),
                    &text,
                )
                .map_err(err)?;
            println!("annotation #{id} saved");
            Ok(0)
        }
        HistoryCommand::Export {
            series,
            format,
            output,
            filter,
        } => export(&args.db, &series, &format, output.as_deref(), &filter),
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
            let mut provenance = match (&commit, &branch, &time) {
                (None, None, None) => None,
                _ => Some(provenance_now(commit.as_deref(), branch.as_deref())?),
            };
            if commit.is_none()
                && let Some(p) = provenance.as_mut()
            {
                // Only a branch or a time: no commit of HEAD implied.
                p.commit = None;
                p.commit_time = None;
            }
            if let Some(t) = &time {
                let t = import::parse_time(t).ok_or_else(|| {
                    format!("--time: '{t}' is not a time (try 2026-11-20T10:00:00Z)")
                })?;
                if let Some(p) = provenance.as_mut() {
                    p.run_time = t;
                }
            }
            let labels = Labels {
                series,
                provenance,
                fingerprint: None,
                direction: higher_is_better.then_some(Direction::HigherIsBetter),
            };
            let mut db = open(&args.db).map_err(err)?;
            let mut total = 0;
            for file in &files {
                let batches = import_batches(file, &format, &time_column, &labels)?;
                let points: usize = batches.iter().map(|b| b.points.len()).sum();
                db.save(&batches).map_err(|e| {
                    format!("{}: {e} (nothing from this file was saved)", file.display())
                })?;
                println!(
                    "{}: {points} point{} in {} series",
                    file.display(),
                    if points == 1 { "" } else { "s" },
                    batches.len()
                );
                total += points;
            }
            if files.len() > 1 {
                println!("{total} points imported");
            }
            Ok(0)
        }
        HistoryCommand::Bisect {
            alert,
            series,
            dry_run,
            widen,
        } => bisect(&args.db, alert, series.as_deref(), dry_run, widen),
    }
}

fn set_state(db: &DbArgs, ids: &[i64], state: AlertState) -> Result<i32, String> {
    let mut store = open(db).map_err(|e| e.to_string())?;
    for &id in ids {
        store
            .set_alert_state(id, state)
            .map_err(|e| e.to_string())?;
        println!("alert #{id} {}", state.as_str());
    }
    Ok(0)
}

/// The kind of a file from its first bytes (of the decompressed data, if gzipped).
fn sniff_file(file: &Path) -> std::io::Result<Kind> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(file)?
        .take(sniff::HEAD as u64)
        .read_to_end(&mut head)?;
    let kind = sniff::sniff(&head);
    if kind != Kind::Gzip {
        return Ok(kind);
    }
    let mut inner = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(file)?)
        .take(sniff::HEAD as u64)
        .read_to_end(&mut inner)?;
    Ok(match sniff::sniff(&inner) {
        // Only test reports are read compressed.
        Kind::TestReport => Kind::TestReport,
        _ => Kind::Gzip,
    })
}

fn import_batches(
    file: &Path,
    format: &str,
    time_column: &str,
    labels: &Labels,
) -> Result<Vec<Batch>, String> {
    let name = file.display().to_string();
    let kind = match format {
        "auto" if file.is_dir() => "reports",
        "auto" => match sniff_file(file).map_err(|e| format!("{name}: {e}"))? {
            Kind::TestReport => "reports",
            Kind::Csv => "csv",
            Kind::ResultsJson | Kind::GoBench | Kind::Numbers => "results",
            Kind::Empty => return Err(format!("{name}: is empty: nothing to import")),
            other => {
                return Err(format!(
                    "{name}: is {}: expected tardy or hyperfine JSON, Go benchmark output, a CSV table (Otava's) or a test report",
                    other.describe()
                ));
            }
        },
        "csv" | "results" | "reports" => format,
        other => {
            return Err(format!(
                "--format must be auto, results, csv or reports, not '{other}'"
            ));
        }
    };
    match kind {
        "csv" => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{name}: {e}"))?;
            let table = import::read_csv(&text, &name, time_column).map_err(|e| e.to_string())?;
            if !table.text_columns.is_empty() {
                eprintln!(
                    "tardy: {name}: text columns left out (not metrics): {}",
                    table.text_columns.join(", ")
                );
            }
            Ok(import::csv_batches(&table, labels))
        }
        "reports" => {
            let series = labels.series.as_deref().ok_or_else(|| {
                format!("{name}: test reports need --series NAME (the suite's series)")
            })?;
            let (batch, warnings) =
                import::reports_batch(series, &[file.to_path_buf()], false, labels)
                    .map_err(|e| e.to_string())?;
            for w in warnings {
                eprintln!("tardy: warning: {}", tardy::fmt::clip::message(&w));
            }
            Ok(vec![batch])
        }
        _ => import::results_batches(&name, labels).map_err(|e| e.to_string()),
    }
}

fn analyze(file: &Path, time_column: &str, opts: &Method, as_json: bool) -> Result<i32, String> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| format!("{name}: {e}"))?;
    let table = import::read_csv(&text, &name, time_column).map_err(|e| e.to_string())?;
    let results = import::table_change_points(&table, opts);
    #[derive(serde::Serialize)]
    struct Change<'a> {
        metric: &'a str,
        index: usize,
        time: i64,
        commit: Option<&'a str>,
        forward_change_percent: f64,
        magnitude: f64,
        mean_before: f64,
        stddev_before: f64,
        mean_after: f64,
        stddev_after: f64,
        pvalue: f64,
    }
    let mut changes: Vec<Change> = Vec::new();
    for (k, (metric, _)) in table.metrics.iter().enumerate() {
        for c in &results[k] {
            changes.push(Change {
                metric,
                index: c.index,
                time: table.times[c.index],
                commit: table.commits[c.index].as_deref(),
                forward_change_percent: c.stats.forward_change() * 100.0,
                magnitude: c.stats.magnitude(),
                mean_before: c.stats.mean_before,
                stddev_before: c.stats.std_before,
                mean_after: c.stats.mean_after,
                stddev_after: c.stats.std_after,
                pvalue: c.stats.pvalue,
            });
        }
    }
    changes.sort_by(|a, b| a.index.cmp(&b.index).then(a.metric.cmp(b.metric)));
    if as_json {
        print(&json(&changes));
        return Ok(0);
    }
    let mut out = format!(
        "{}: {} metrics x {} points, {} change points ({})\n",
        name,
        table.metrics.len(),
        table.times.len(),
        changes.len(),
        opts.describe()
    );
    let mut last_index = usize::MAX;
    for c in &changes {
        if c.index != last_index {
            let _ = std::fmt::Write::write_fmt(
                &mut out,
                format_args!(
                    "\n{} {} (point {})\n",
                    view::date(c.time),
                    c.commit.unwrap_or("-"),
                    c.index
                ),
            );
            last_index = c.index;
        }
        let _ = std::fmt::Write::write_fmt(
            &mut out,
            format_args!(
                "  {:<20} {:>+8.1}%  {} -> {}  {}\n",
                c.metric,
                c.forward_change_percent,
                tardy::render::cfmt::g(c.mean_before, 6),
                tardy::render::cfmt::g(c.mean_after, 6),
                tardy::render::units::p_value(c.pvalue)
            ),
        );
    }
    if let Method::Calibrated(o) = opts {
        let young: Vec<_> = table
            .metrics
            .iter()
            .filter_map(|(metric, values)| {
                let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
                detect::young(metric, &v, o)
            })
            .collect();
        if !young.is_empty() {
            out.push('\n');
        }
        for y in &young {
            out.push_str(&view::young(y));
        }
    }
    print(&out);
    Ok(0)
}

fn export(
    db: &DbArgs,
    names: &[String],
    format: &str,
    output: Option<&Path>,
    filter: &Filter,
) -> Result<i32, String> {
    let err = |e: DbError| e.to_string();
    if format != "csv" && format != "json" {
        return Err(format!("--format must be csv or json, not '{format}'"));
    }
    let store = open(db).map_err(err)?;
    let pf = filter.point_filter()?;
    let all = store.list().map_err(err)?;
    let selected: Vec<_> = if names.is_empty() {
        all
    } else {
        let mut v = Vec::new();
        for n in names {
            v.push(
                all.iter()
                    .find(|s| &s.name == n)
                    .cloned()
                    .ok_or_else(|| DbError::NoSeries(n.clone()).to_string())?,
            );
        }
        v
    };
    let mut table = tardy::render::csv::Table::new(&[
        "series", "test", "time", "commit", "branch", "value", "unit",
    ]);
    let mut docs = Vec::new();
    for s in &selected {
        let points = store.points(s.id, &pf).map_err(err)?;
        let mut rows = |test: Option<&str>, pts: &[tardy::store::history::Point]| {
            for p in pts {
                table.row([
                    s.name.clone(),
                    test.unwrap_or("").to_string(),
                    chrono::DateTime::from_timestamp(p.time(), 0)
                        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                        .unwrap_or_default(),
                    p.commit.clone().unwrap_or_default(),
                    p.branch.clone().unwrap_or_default(),
                    p.value.to_string(),
                    s.unit.clone(),
                ]);
            }
        };
        if format == "csv" {
            rows(None, &points);
            if s.kind == SeriesKind::Suite {
                store
                    .for_each_test(s.id, &pf, &mut |t, p| {
                        rows(Some(&t.name), p);
                        Ok(())
                    })
                    .map_err(err)?;
            }
        } else {
            docs.push(serde_json::json!({ "series": s, "points": points }));
        }
    }
    let text = if format == "json" {
        json(&docs)
    } else {
        table.finish()
    };
    match output {
        None => print(&text),
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
    let store = open(db).map_err(|e| e.to_string())?;
    let alert = store
        .alert(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| DbError::NoAlert(id).to_string())?;
    let plan = bisect_plan(&*store, &alert, series, widen)?;
    eprintln!("tardy {}", shell_line(&plan.argv));
    let next = |lead: &str| match &plan.wider {
        Some((good, bad)) => format!(
            "{lead}the next wider range is {good}..{bad}: tardy history bisect {id} --widen {}",
            widen + 1
        ),
        None => format!(
            "{lead}the range already reaches the series' ends; the change may not be in the code (see the alert's environment) or is too small for --threshold"
        ),
    };
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

#[cfg(test)]
mod since_tests {
    use super::*;

    #[test]
    fn durations_ago_and_dates() {
        let now = import::now_s();
        for (text, secs) in [
            ("30d", 30 * 86400),
            ("12h", 12 * 3600),
            ("2w", 14 * 86400),
            ("1week 2days", 9 * 86400),
        ] {
            let t = parse_since(text).unwrap();
            assert!((now - secs - t).abs() <= 2, "{text}");
        }
        assert_eq!(parse_since("2026-11-01T00:00:00Z").unwrap(), 1_793_491_200);
        assert!(
            parse_since("someday")
                .unwrap_err()
                .contains("not a date or a duration")
        );
    }
}
