//! `tardy history`'s jobs as library calls: each takes a store and plain
//! typed options and returns what it found; the CLI (and a test, or the
//! server) renders it ([`crate::render::history`]).

use std::path::{Path, PathBuf};

use super::detect::{self, DetectOptions, DetectReport, Method, Segment, Young};
use super::import::{self, CsvTable as Table, Labels};
use crate::ingest::sniff::{self, Kind};
use crate::store::history::{AlertState, Annotation, Point, PointFilter, SeriesInfo, SeriesKind};
use crate::store::{Batch, DbError, History};

/// `--since` (2026-11-01, RFC 3339, Unix seconds, or "30d" ago) and
/// `--branch` as a filter of points.
pub fn point_filter(since: Option<&str>, branch: Option<&str>) -> Result<PointFilter, String> {
    Ok(PointFilter {
        branch: branch.map(str::to_string),
        since: since.map(import::parse_since).transpose()?,
        newest: None,
        skip_newest: 0,
    })
}

/// A series (or one test of a suite series) with its change points.
pub struct Shown {
    pub series: SeriesInfo,
    pub test: Option<String>,
    pub points: Vec<Point>,
    pub segments: Vec<Segment>,
    pub annotations: Vec<Annotation>,
}

/// `tardy history show`: the points of `series` (or of its test `test`)
/// that `filter` keeps, split where `method` finds changes.
pub fn show(
    db: &dyn History,
    series: &str,
    test: Option<&str>,
    filter: &PointFilter,
    method: &Method,
) -> Result<Shown, String> {
    let err = |e: DbError| e.to_string();
    let info = db
        .series(series)
        .map_err(err)?
        .ok_or_else(|| DbError::NoSeries(series.to_string()).to_string())?;
    let points = match test {
        None => db.points(info.id, filter).map_err(err)?,
        Some(t) => {
            let mut found = None;
            db.for_each_test(info.id, filter, &mut |id, p| {
                if id.name == t {
                    found = Some(p.to_vec());
                }
                Ok(())
            })
            .map_err(err)?;
            found.ok_or_else(|| format!("series '{series}' has no test '{t}'"))?
        }
    };
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let cps = method.detect(&values);
    let segments = detect::segments(db, &points, &cps).map_err(err)?;
    Ok(Shown {
        series: info,
        test: test.map(str::to_string),
        points,
        segments,
        annotations: db.annotations().map_err(err)?,
    })
}

/// What `tardy history detect` found, and the regressions still open.
pub struct Detected {
    pub report: DetectReport,
    /// Open regression alerts of the code (not of the environment), by id;
    /// filled when asked (`--fail-on-regression`).
    pub open_regressions: Vec<i64>,
    /// How many of those this run raised.
    pub new_open: usize,
}

/// `tardy history detect`: change points on every series (or `series`),
/// alerts raised, retracted and reopened; with `gate`, the regression
/// alerts still open (a CI job re-run stays red until someone looks).
pub fn detect(
    db: &mut dyn History,
    series: &[String],
    opts: &DetectOptions,
    gate: bool,
) -> Result<Detected, String> {
    if opts
        .window
        .is_some_and(|w| w < crate::stats::rank_cusum::MIN_POINTS)
    {
        return Err(format!(
            "--ends must be at least {} points (the end test's shortest tail and reference)",
            crate::stats::rank_cusum::MIN_POINTS
        ));
    }
    if !(opts.fdr > 0.0 && opts.fdr <= 1.0) {
        return Err(format!("--fdr must be in (0, 1], got {}", opts.fdr));
    }
    let err = |e: DbError| e.to_string();
    let report = detect::detect(db, series, opts).map_err(err)?;
    let open_regressions: Vec<i64> = if gate {
        db.alerts(&[AlertState::Open])
            .map_err(err)?
            .into_iter()
            .filter(|a| a.environment.is_empty() && a.regressions() > 0)
            .map(|a| a.id)
            .collect()
    } else {
        Vec::new()
    };
    let new_open = report
        .new_alerts
        .iter()
        .filter(|a| open_regressions.contains(&a.id))
        .count();
    Ok(Detected {
        report,
        open_regressions,
        new_open,
    })
}

/// The alerts in `states`.
pub fn alerts(db: &dyn History, all: bool) -> Result<Vec<crate::store::history::Alert>, String> {
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
    db.alerts(states).map_err(|e| e.to_string())
}

/// Set each alert of `ids` to `state` (acknowledged, dismissed).
pub fn set_states(db: &mut dyn History, ids: &[i64], state: AlertState) -> Result<(), String> {
    if ids.is_empty() {
        return Err("name at least one alert".into());
    }
    for &id in ids {
        db.set_alert_state(id, state).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Annotate a commit (or a range `commit..until`, revisions resolved by git
/// in `repo`), for every series or one; the annotation's id.
pub fn annotate(
    db: &mut dyn History,
    repo: &Path,
    commit: &str,
    until: Option<&str>,
    series: Option<&str>,
    text: &str,
) -> Result<i64, String> {
    let resolve = |rev: &str| {
        import::git_provenance(repo, Some(rev))
            .and_then(|p| p.commit)
            .unwrap_or_else(|| rev.to_string())
    };
    db.annotate(
        series,
        &resolve(commit),
        until.map(resolve).as_deref(),
        text,
    )
    .map_err(|e| e.to_string())
}

/// How to read the files of `tardy history import`.
pub struct ImportSpec<'a> {
    /// auto, results, csv or reports.
    pub format: &'a str,
    /// A CSV's time column.
    pub time_column: &'a str,
    pub labels: Labels,
}

/// One file imported.
pub struct Imported {
    pub file: PathBuf,
    pub points: usize,
    pub series: usize,
    /// What the reader noticed (text columns left out, report warnings).
    pub warnings: Vec<String>,
}

/// `tardy tests show --save NAME`: one run of suite `name` (its every
/// test's time) saved with `provenance` (its run time `time` when given:
/// RFC 3339 or Unix seconds) and this machine's fingerprint; the tests saved.
/// The report's cases are taken.
pub fn save_suite(
    db: &mut dyn History,
    name: &str,
    report: &mut crate::ingest::reports::Report,
    mut provenance: crate::store::history::Provenance,
    time: Option<&str>,
) -> Result<usize, String> {
    if let Some(t) = time {
        provenance.run_time = import::parse_time(t)
            .ok_or_else(|| format!("--time: '{t}' is not a time (try 2026-11-20T10:00:00Z)"))?;
    }
    let labels = Labels {
        provenance: Some(provenance),
        fingerprint: Some(crate::probe::Fingerprint::capture()),
        ..Default::default()
    };
    let batch = import::suite_batch(name, report, &labels);
    let tests = batch.points[0].tests.len();
    db.save(&[batch]).map_err(|e| e.to_string())?;
    Ok(tests)
}

/// `tardy history import`: each file read and saved in one transaction (a
/// file that fails saves nothing); `on_file` hears of each as it is saved.
pub fn import(
    db: &mut dyn History,
    files: &[PathBuf],
    spec: &ImportSpec,
    on_file: &mut dyn FnMut(&Imported),
) -> Result<usize, String> {
    let mut total = 0;
    for file in files {
        let (planned, warnings) = batches(file, spec)?;
        let failed =
            |e: DbError| format!("{}: {e} (nothing from this file was saved)", file.display());
        let (points, series) = match planned {
            Planned::Batches(batches) => {
                db.save(&batches).map_err(failed)?;
                (batches.iter().map(|b| b.points.len()).sum(), batches.len())
            }
            // A table's series are made and stored one at a time, in name order.
            Planned::Table(table) => {
                let fingerprint = spec.labels.fingerprint.clone().map(std::sync::Arc::new);
                let mut order: Vec<usize> = (0..table.metrics.len()).collect();
                order.sort_by(|&a, &b| table.metrics[a].0.cmp(&table.metrics[b].0));
                let points = db
                    .save_each(order.len(), &mut |i| {
                        import::csv_batch(&table, &spec.labels, order[i], &fingerprint)
                    })
                    .map_err(failed)?;
                (points, order.len())
            }
        };
        on_file(&Imported {
            file: file.clone(),
            points,
            series,
            warnings,
        });
        total += points;
    }
    Ok(total)
}

/// What a file becomes: a CSV table (its series made one at a time when
/// stored), or the batches of results or of a test report.
enum Planned {
    Table(Table),
    Batches(Vec<Batch>),
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

fn batches(file: &Path, spec: &ImportSpec) -> Result<(Planned, Vec<String>), String> {
    let name = file.display().to_string();
    let kind = match spec.format {
        "auto" if file.is_dir() => "reports",
        "auto" => match sniff_file(file).map_err(|e| format!("{name}: {e}"))? {
            Kind::TestReport => "reports",
            Kind::Csv => "csv",
            Kind::ResultsJson | Kind::GoBench | Kind::HarnessText | Kind::Numbers => "results",
            Kind::Empty => return Err(format!("{name}: is empty: nothing to import")),
            other => {
                return Err(format!(
                    "{name}: is {}: expected benchmark results (tardy, hyperfine, Go, a harness's output), a CSV table (Otava's) or a test report",
                    other.describe()
                ));
            }
        },
        f @ ("csv" | "results" | "reports") => f,
        other => {
            return Err(format!(
                "--format must be auto, results, csv or reports, not '{other}'"
            ));
        }
    };
    let labels = &spec.labels;
    match kind {
        "csv" => {
            let table = csv_table(file, spec.time_column)?;
            let warnings = if table.text_columns.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "{name}: text columns left out (not metrics): {}",
                    table.text_columns.join(", ")
                )]
            };
            Ok((Planned::Table(table), warnings))
        }
        "reports" => {
            let series = labels.series.as_deref().ok_or_else(|| {
                format!("{name}: test reports need --series NAME (the suite's series)")
            })?;
            let (batch, warnings) =
                import::reports_batch(series, &[file.to_path_buf()], false, labels)
                    .map_err(|e| e.to_string())?;
            Ok((Planned::Batches(vec![batch]), warnings))
        }
        _ => Ok((
            Planned::Batches(import::results_batches(&name, labels).map_err(|e| e.to_string())?),
            Vec::new(),
        )),
    }
}

fn csv_table(file: &Path, time_column: &str) -> Result<Table, String> {
    let name = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| format!("{name}: {e}"))?;
    import::read_csv(&text, &name, time_column).map_err(|e| e.to_string())
}

/// One change point of a CSV table's metric (`tardy history analyze`).
#[derive(serde::Serialize)]
pub struct TableChange {
    pub metric: String,
    pub index: usize,
    pub time: i64,
    pub commit: Option<String>,
    pub forward_change_percent: f64,
    pub magnitude: f64,
    pub mean_before: f64,
    pub stddev_before: f64,
    pub mean_after: f64,
    pub stddev_after: f64,
    pub pvalue: f64,
}

/// What `tardy history analyze` found in a CSV table (Otava's).
pub struct Analyzed {
    pub metrics: usize,
    pub points: usize,
    /// In point order, then metric.
    pub changes: Vec<TableChange>,
    /// Metrics too young for the calibrated detector, and what they need.
    pub young: Vec<Young>,
}

/// `tardy history analyze FILE`: change points of every metric column.
pub fn analyze(file: &Path, time_column: &str, method: &Method) -> Result<Analyzed, String> {
    let table = csv_table(file, time_column)?;
    let results = import::table_change_points(&table, method);
    let mut changes = Vec::new();
    for (k, (metric, _)) in table.metrics.iter().enumerate() {
        for c in &results[k] {
            changes.push(TableChange {
                metric: metric.clone(),
                index: c.index,
                time: table.times[c.index],
                commit: table.commits[c.index].clone(),
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
    changes.sort_by(|a, b| a.index.cmp(&b.index).then(a.metric.cmp(&b.metric)));
    let young = match method {
        Method::Calibrated(o) => table
            .metrics
            .iter()
            .filter_map(|(metric, values)| {
                let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
                detect::young(metric, &v, o)
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Analyzed {
        metrics: table.metrics.len(),
        points: table.times.len(),
        changes,
        young,
    })
}

/// One series exported: its points, and its tests' when it is a suite.
pub struct Exported {
    pub series: SeriesInfo,
    pub points: Vec<Point>,
    pub tests: Vec<(String, Vec<Point>)>,
}

/// `tardy history export`: the series named (every one when none is), the
/// points `filter` keeps; with `tests`, each suite's tests too.
pub fn export(
    db: &dyn History,
    names: &[String],
    filter: &PointFilter,
    tests: bool,
) -> Result<Vec<Exported>, String> {
    let err = |e: DbError| e.to_string();
    let all = db.list().map_err(err)?;
    let selected: Vec<SeriesInfo> = if names.is_empty() {
        all
    } else {
        names
            .iter()
            .map(|n| {
                all.iter()
                    .find(|s| &s.name == n)
                    .cloned()
                    .ok_or_else(|| DbError::NoSeries(n.clone()).to_string())
            })
            .collect::<Result<_, _>>()?
    };
    let mut out = Vec::new();
    for s in selected {
        let points = db.points(s.id, filter).map_err(err)?;
        let mut per_test = Vec::new();
        if tests && s.kind == SeriesKind::Suite {
            db.for_each_test(s.id, filter, &mut |t, p| {
                per_test.push((t.name.clone(), p.to_vec()));
                Ok(())
            })
            .map_err(err)?;
        }
        out.push(Exported {
            series: s,
            points,
            tests: per_test,
        });
    }
    Ok(out)
}
