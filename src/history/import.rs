//! Turning files into history points: tardy and hyperfine JSON results,
//! Otava-style CSV (`time,commit,metric1,metric2,...`), and test reports
//! (a suite point with every test's duration); and the git metadata of a
//! point (hash, branch, commit time) read from the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ingest::error::IngestError;
use crate::ingest::reports::{self, Status};
use crate::ingest::{self, Format, NumberOptions};
use crate::probe::Fingerprint;
use crate::stats::summary::median_by_selection;
use crate::store::Batch;
use crate::store::history::{Direction, NewPoint, Provenance, SeriesKind, SeriesSpec, TestResult};

/// Run `git` in `dir`; its trimmed stdout when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The repository's top directory, when `dir` is inside one.
pub fn repo_root(dir: &Path) -> Option<PathBuf> {
    git(dir, &["rev-parse", "--show-toplevel"]).map(PathBuf::from)
}

/// Hash, branch and commit time of `rev` (HEAD when `None`) in the
/// repository at `dir`; `None` outside a repository or for an unknown rev.
pub fn git_provenance(dir: &Path, rev: Option<&str>) -> Option<Provenance> {
    let rev = rev.unwrap_or("HEAD");
    let commit = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    let commit_time =
        git(dir, &["show", "-s", "--format=%ct", &commit]).and_then(|s| s.parse().ok());
    let branch = git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
    Some(Provenance {
        commit: Some(commit),
        branch,
        commit_time,
        run_time: now_s(),
    })
}

/// The subject line of `commit` in the repository at `dir`.
pub fn commit_subject(dir: &Path, commit: &str) -> Option<String> {
    git(dir, &["show", "-s", "--format=%s", commit]).filter(|s| !s.is_empty())
}

pub use crate::store::history::now_s;

/// A time as users and Otava's CSV write it: RFC 3339, `YYYY-MM-DD
/// HH:MM:SS[+zone]`, a date, or Unix seconds. Times without a zone are UTC.
pub fn parse_time(s: &str) -> Option<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime};
    // Unix seconds between the years 1 and 9999, as the dates below: a larger
    // number is an error in the file, never a time clamped to the largest integer.
    const RANGE: std::ops::RangeInclusive<f64> = -62_135_596_800.0..=253_402_300_799.0;
    let s = s.trim();
    if let Ok(n) = s.parse::<i64>() {
        return RANGE.contains(&(n as f64)).then_some(n);
    }
    if let Ok(f) = s.parse::<f64>() {
        return RANGE.contains(&f).then_some(f as i64);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp());
    }
    for f in [
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
    ] {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Some(t.timestamp());
        }
    }
    for f in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.and_utc().timestamp());
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp())
}

/// A duration ago ("30d", "12h", "2w", "1week 2days", as humantime reads them), or
/// any time `parse_time` reads.
pub fn parse_since(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if let Ok(d) = humantime::parse_duration(t) {
        return Ok(now_s() - i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2));
    }
    parse_time(t).ok_or_else(|| {
        format!("--since: '{s}' is not a date or a duration (try 2026-11-01, 2026-11-01T12:00:00Z or 30d)")
    })
}

/// How imported points are labelled.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Series name (one series) or prefix ("PREFIX/metric").
    pub series: Option<String>,
    pub provenance: Option<Provenance>,
    pub fingerprint: Option<Fingerprint>,
    pub direction: Option<Direction>,
}

fn name_for(labels: &Labels, own: &str, only_one: bool) -> String {
    match &labels.series {
        Some(s) if only_one => s.clone(),
        Some(s) => format!("{s}/{own}"),
        None => own.to_string(),
    }
}

/// An Otava-style CSV as it was read: times, attributes and metric columns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CsvTable {
    pub times: Vec<i64>,
    pub commits: Vec<Option<String>>,
    pub branches: Vec<Option<String>>,
    /// (column name, values; NaN where the cell was empty).
    pub metrics: Vec<(String, Vec<f64>)>,
    /// Columns of text (a message, an author): attributes, not metrics, left out.
    pub text_columns: Vec<String>,
}

/// Read an Otava CSV: a header, a time column (`time_column`), optional
/// `commit`/`version` and `branch` columns, every other column a metric.
/// Rows are sorted by time (stable), as Otava orders a series.
pub fn read_csv(text: &str, source: &str, time_column: &str) -> Result<CsvTable, IngestError> {
    // The csv crate reads RFC 4180: quoted fields with commas, quotes and newlines in
    // them, a UTF-8 BOM, blank lines.
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let bad = |line: Option<usize>, e: csv::Error| {
        IngestError::at(source, line, format!("is not readable CSV: {e}"))
    };
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(Some(1), e))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_string())
        .collect();
    if header.iter().all(String::is_empty) {
        return Err(IngestError::at(
            source,
            None,
            "is empty (expected a CSV header)".into(),
        ));
    }
    let find = |name: &str| header.iter().position(|h| h == name);
    let time_i = find(time_column).ok_or_else(|| {
        IngestError::at(
            source,
            Some(1),
            format!(
                "has no '{time_column}' column (the header is: {})",
                header.join(",")
            ),
        )
    })?;
    // A name twice would make one series of two columns' values.
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, h) in header.iter().enumerate() {
        if let Some(first) = seen.insert(h.as_str(), i) {
            return Err(IngestError::at(
                source,
                Some(1),
                format!(
                    "column {} has the same name as column {}: {} (each column is a series; name them apart)",
                    i + 1,
                    first + 1,
                    crate::fmt::clip::quote(h)
                ),
            ));
        }
    }
    let commit_i = find("commit").or_else(|| find("version"));
    let branch_i = find("branch");
    let metric_cols: Vec<usize> = (0..header.len())
        .filter(|&i| i != time_i && Some(i) != commit_i && Some(i) != branch_i)
        .collect();
    if metric_cols.is_empty() {
        return Err(IngestError::at(
            source,
            Some(1),
            "has no metric columns".into(),
        ));
    }
    // Read straight into columns (a row of its own per line would double the
    // memory of a million-row upload), then order them by time.
    // Sized once from the line count: grown by doubling, the columns of a
    // million-row upload would take up to twice their size.
    let rows = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    let mut table = CsvTable {
        times: Vec::with_capacity(rows),
        commits: Vec::with_capacity(rows),
        branches: Vec::with_capacity(rows),
        metrics: metric_cols
            .iter()
            .map(|&c| (header[c].clone(), Vec::with_capacity(rows)))
            .collect(),
        text_columns: Vec::new(),
    };
    // A column is a metric when its first value is a number, text when it is not
    // (Otava's attributes: a message, an author); undecided while empty.
    let mut is_text: Vec<Option<bool>> = vec![None; metric_cols.len()];
    let mut record = csv::StringRecord::new();
    let mut n = 0u64;
    loop {
        let line_no = record.position().map(|p| p.line() as usize);
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(bad(e.position().map(|p| p.line() as usize).or(line_no), e)),
        }
        let line_no = record.position().map_or(0, |p| p.line() as usize);
        n += 1;
        if let Some(why) = crate::ingest::budget::check(n) {
            return Err(IngestError::at(source, Some(line_no), why));
        }
        if record.len() == 1 && record[0].is_empty() {
            continue; // a line of white space
        }
        if record.len() != header.len() {
            return Err(IngestError::at(
                source,
                Some(line_no),
                format!(
                    "has {} fields, the header has {}",
                    record.len(),
                    header.len()
                ),
            ));
        }
        let t = parse_time(&record[time_i]).ok_or_else(|| {
            IngestError::at(
                source,
                Some(line_no),
                format!(
                    "column '{time_column}': '{}' is not a time (expected e.g. 2026-01-31T12:00:00Z or Unix seconds)",
                    &record[time_i]
                ),
            )
        })?;
        for (k, &c) in metric_cols.iter().enumerate() {
            let cell = &record[c];
            let v = if cell.is_empty() || is_text[k] == Some(true) {
                f64::NAN
            } else {
                match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() => {
                        is_text[k] = Some(false);
                        v
                    }
                    Err(_) if is_text[k].is_none() => {
                        is_text[k] = Some(true);
                        f64::NAN
                    }
                    _ => {
                        return Err(IngestError::at(
                            source,
                            Some(line_no),
                            format!("column '{}': '{cell}' is not a finite number", header[c]),
                        ));
                    }
                }
            };
            table.metrics[k].1.push(v);
        }
        let opt = |i: Option<usize>| i.map(|i| record[i].to_string()).filter(|s| !s.is_empty());
        table.times.push(t);
        table.commits.push(opt(commit_i));
        table.branches.push(opt(branch_i));
    }
    let metrics = std::mem::take(&mut table.metrics);
    for ((name, values), text) in metrics.into_iter().zip(is_text) {
        if text == Some(true) {
            table.text_columns.push(name);
        } else {
            table.metrics.push((name, values));
        }
    }
    if table.metrics.is_empty() && !table.times.is_empty() {
        return Err(IngestError::at(
            source,
            None,
            format!(
                "has no column of numbers (text columns: {})",
                table.text_columns.join(", ")
            ),
        ));
    }
    if table.times.is_empty() {
        return Err(IngestError::at(
            source,
            None,
            "has a header but no rows: nothing to import".into(),
        ));
    }
    if !table.times.is_sorted() {
        // A stable sort by time, applied to every column.
        let mut order: Vec<u32> = (0..table.times.len() as u32).collect();
        order.sort_by_key(|&i| table.times[i as usize]);
        fn permute<T: Clone>(v: &mut Vec<T>, order: &[u32]) {
            *v = order.iter().map(|&i| v[i as usize].clone()).collect();
        }
        permute(&mut table.times, &order);
        permute(&mut table.commits, &order);
        permute(&mut table.branches, &order);
        for (_, m) in &mut table.metrics {
            permute(m, &order);
        }
    }
    Ok(table)
}

/// Change points of every metric column of a table, Otava-style (missing
/// cells forward-filled), the columns spread over the CPUs. Result `k`
/// belongs to `table.metrics[k]`.
pub fn table_change_points(
    table: &CsvTable,
    method: &super::detect::Method,
) -> Vec<Vec<crate::stats::changepoint::ChangePoint>> {
    use crate::stats::changepoint::fill_missing;
    let columns = table.metrics.len();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, columns.max(1));
    let per = columns.div_ceil(threads).max(1);
    let mut results = vec![Vec::new(); columns];
    std::thread::scope(|s| {
        for (ci, chunk) in results.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (k, slot) in chunk.iter_mut().enumerate() {
                    let mut values = table.metrics[ci * per + k].1.clone();
                    fill_missing(&mut values);
                    *slot = method.detect(&values);
                }
            });
        }
    });
    results
}

/// Batches from an Otava CSV: one series per metric column, one point per row.
pub fn csv_batches(table: &CsvTable, labels: &Labels) -> Vec<Batch> {
    let fingerprint = labels.fingerprint.clone().map(std::sync::Arc::new);
    (0..table.metrics.len())
        .map(|k| csv_batch(table, labels, k, &fingerprint))
        .collect()
}

/// The series of the CSV's metric column `k` (`history import` makes them
/// one at a time, so a million points are never all in memory at once).
pub fn csv_batch(
    table: &CsvTable,
    labels: &Labels,
    k: usize,
    fingerprint: &Option<std::sync::Arc<crate::probe::Fingerprint>>,
) -> Batch {
    let (name, values) = &table.metrics[k];
    let mut spec = SeriesSpec::new(&name_for(labels, name, table.metrics.len() == 1), name, "");
    spec.direction = labels.direction.unwrap_or(Direction::LowerIsBetter);
    let default_branch = labels.provenance.as_ref().and_then(|p| p.branch.as_ref());
    let points = values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| {
            let branch = table.branches[i].as_ref().or(default_branch).cloned();
            csv_point(
                table.times[i],
                table.commits[i].clone(),
                branch,
                v,
                fingerprint,
            )
        })
        .collect();
    Batch { spec, points }
}

fn csv_point(
    time: i64,
    commit: Option<String>,
    branch: Option<String>,
    value: f64,
    fingerprint: &Option<std::sync::Arc<crate::probe::Fingerprint>>,
) -> NewPoint {
    NewPoint {
        provenance: Provenance {
            commit,
            branch,
            commit_time: Some(time),
            run_time: time,
        },
        fingerprint: fingerprint.clone(),
        value,
        samples: Vec::new(),
        tests: Vec::new(),
    }
}

/// [`csv_batches`], consuming the table column by column, so that a large upload
/// does not hold the table and its points at once (the server's path).
pub fn csv_batches_owned(mut table: CsvTable, labels: &Labels) -> Vec<Batch> {
    let only_one = table.metrics.len() == 1;
    let fingerprint = labels.fingerprint.clone().map(std::sync::Arc::new);
    let default_branch = labels.provenance.as_ref().and_then(|p| p.branch.clone());
    let metrics = std::mem::take(&mut table.metrics);
    let last = metrics.len().saturating_sub(1);
    let mut out = Vec::with_capacity(metrics.len());
    for (k, (name, values)) in metrics.into_iter().enumerate() {
        let mut spec = SeriesSpec::new(&name_for(labels, &name, only_one), &name, "");
        spec.direction = labels.direction.unwrap_or(Direction::LowerIsBetter);
        // The last column takes the commits and branches; the others copy them.
        let take = k == last;
        let mut points = Vec::with_capacity(values.iter().filter(|v| v.is_finite()).count());
        for (i, v) in values.into_iter().enumerate() {
            if !v.is_finite() {
                continue;
            }
            let (commit, branch) = if take {
                (table.commits[i].take(), table.branches[i].take())
            } else {
                (table.commits[i].clone(), table.branches[i].clone())
            };
            let branch = branch.or_else(|| default_branch.clone());
            points.push(csv_point(table.times[i], commit, branch, v, &fingerprint));
        }
        out.push(Batch { spec, points });
    }
    out
}

/// Batches from a results file tardy reads (tardy or hyperfine JSON, and
/// the other formats `tardy compare` accepts): one point per benchmark.
pub fn results_batches(path: &str, labels: &Labels) -> Result<Vec<Batch>, IngestError> {
    let data = ingest::read_path(path, Format::Auto, &NumberOptions::default())?;
    let run_time = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(now_s, |d| d.as_secs() as i64);
    dataset_batches(data, path, run_time, labels)
}

/// Batches from results already in memory (an upload's body), run now
/// unless the labels say when.
/// A session just measured (`tardy run --save`): one series per benchmark's
/// wall time, and one per count it carries ("name [instructions]").
pub fn session_batches(
    results: crate::model::Results,
    labels: &Labels,
) -> Result<Vec<Batch>, IngestError> {
    let data = crate::ingest::json::tardy_dataset(results, "this run")?;
    dataset_batches(data, "this run", now_s(), labels)
}

pub fn results_text_batches(
    text: &str,
    source: &str,
    labels: &Labels,
) -> Result<Vec<Batch>, IngestError> {
    let data = ingest::read_text(text, source, Format::Auto, &NumberOptions::default())?;
    dataset_batches(data, source, now_s(), labels)
}

/// Consumes `data`: each series' values become its point's samples, not a copy.
fn dataset_batches(
    data: ingest::Dataset,
    source: &str,
    run_time: i64,
    labels: &Labels,
) -> Result<Vec<Batch>, IngestError> {
    let provenance = labels.provenance.clone().unwrap_or_else(|| Provenance {
        run_time,
        ..Provenance::default()
    });
    let fingerprint = labels.fingerprint.clone().or(data.machine);
    // One benchmark (its counts aside) takes the series name as it is.
    let only_one = data
        .series
        .iter()
        .filter(|s| crate::measure::counters::Metric::of_unit(&s.unit).is_none())
        .count()
        == 1;
    let mut out = Vec::new();
    for s in data.series {
        if s.values.is_empty() {
            continue;
        }
        let median = median_by_selection(&mut s.values.clone());
        // A count (tardy run --metric instructions) is a series of its own
        // beside the benchmark's wall time: "name [instructions]".
        let count = crate::measure::counters::Metric::of_unit(&s.unit);
        let mut spec = match count {
            Some(m) => SeriesSpec::new(
                &super::names::count_series(&name_for(labels, &s.name, only_one), m),
                m.name(),
                &s.unit,
            ),
            None => SeriesSpec::new(&name_for(labels, &s.name, only_one), "wall", &s.unit),
        };
        if let Some((command, options)) = s.command {
            spec.command = Some(command);
            spec.options = options;
        }
        spec.direction = labels.direction.unwrap_or(if s.higher_is_better {
            Direction::HigherIsBetter
        } else {
            Direction::LowerIsBetter
        });
        out.push(Batch {
            spec,
            points: vec![NewPoint {
                provenance: provenance.clone(),
                fingerprint: fingerprint.clone().map(std::sync::Arc::new),
                value: median,
                samples: s.values,
                tests: Vec::new(),
            }],
        });
    }
    if out.is_empty() {
        return Err(IngestError::at(
            source,
            None,
            "holds no measurements".into(),
        ));
    }
    Ok(out)
}

/// A suite point from test reports: the suite's time (the suites' own wall
/// time when every suite states one, else the sum of test times) and every
/// test's duration.
pub fn reports_batch(
    name: &str,
    paths: &[PathBuf],
    keep_going: bool,
    labels: &Labels,
) -> Result<(Batch, Vec<String>), IngestError> {
    let mut report = reports::read_run(paths, keep_going)?;
    let batch = suite_batch(name, &mut report, labels);
    Ok((batch, std::mem::take(&mut report.warnings)))
}

/// The batch of one read report. Its test cases are taken (each freed as
/// it becomes a test's result: a million tests are not held twice).
pub fn suite_batch(name: &str, report: &mut reports::Report, labels: &Labels) -> Batch {
    let mut spec = SeriesSpec::new(name, "suite", "s");
    spec.kind = SeriesKind::Suite;
    let value = report.suite_wall_s().unwrap_or_else(|| report.total_s());
    let cases = std::mem::take(&mut report.cases);
    let mut tests: Vec<TestResult> = Vec::with_capacity(cases.len());
    for c in cases.into_iter().filter(|c| !c.has_children) {
        let Some(d) = c.duration_s else { continue };
        let status = match c.status {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Errored => "error",
            Status::Aborted => "aborted",
            Status::Skipped => "skipped",
            Status::Flaky => "flaky",
        };
        let shown = c.id.display();
        let name = if let std::borrow::Cow::Owned(escaped) = super::names::test_name(&shown) {
            escaped
        } else {
            shown
        };
        tests.push(TestResult {
            name,
            duration: d,
            status: status.into(),
        });
    }
    // By name, the last result of a name kept (as a map keyed by name did).
    tests.reverse();
    tests.sort_by(|a, b| a.name.cmp(&b.name));
    tests.dedup_by(|later, first| later.name == first.name);
    tests.shrink_to_fit();
    Batch {
        spec,
        points: vec![NewPoint {
            provenance: labels.provenance.clone().unwrap_or_else(|| Provenance {
                run_time: now_s(),
                ..Provenance::default()
            }),
            fingerprint: labels.fingerprint.clone().map(std::sync::Arc::new),
            value,
            samples: Vec::new(),
            tests,
        }],
    }
}

#[cfg(test)]
mod since_tests {
    use super::*;

    #[test]
    fn durations_ago_and_dates() {
        let now = now_s();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_the_forms_people_write() {
        assert_eq!(parse_time("2026-01-02T03:04:05Z"), Some(1767323045));
        assert_eq!(parse_time("2026-01-02 03:04:05"), Some(1767323045));
        assert_eq!(parse_time("2026-01-02 05:04:05+02:00"), Some(1767323045));
        assert_eq!(parse_time("2026-01-02"), Some(1767312000));
        assert_eq!(parse_time("1767323045"), Some(1767323045));
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn otava_csv_with_quotes_and_gaps() {
        let text = "time,commit,\"a,b\",c\n2026-01-02,x2,2,\n2026-01-01,x1,1,5\n";
        let t = read_csv(text, "f.csv", "time").unwrap();
        assert_eq!(t.commits, vec![Some("x1".into()), Some("x2".into())]);
        assert_eq!(t.metrics[0], ("a,b".to_string(), vec![1.0, 2.0]));
        assert!(t.metrics[1].1[1].is_nan());
        let b = csv_batches(&t, &Labels::default());
        assert_eq!(b[1].points.len(), 1);
    }

    #[test]
    fn csv_errors_name_the_line_and_column() {
        let e = read_csv("time,x\n2026-01-01,1\n2026-01-02,abc\n", "f.csv", "time").unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("f.csv") && msg.contains('3') && msg.contains("'x'"),
            "{msg}"
        );
        assert!(read_csv("when,x\n1,2\n", "f.csv", "time").is_err());
        assert!(read_csv("time,x\n1,2,3\n", "f.csv", "time").is_err());
    }

    #[test]
    fn text_columns_and_quoted_newlines_as_otava_writes_them() {
        let text = "\u{feff}time,commit,message,build\n\
            2026-01-01,x1,\"fix, stuff\",10\n\
            \n\
            2026-01-02,x2,\"two\nlines \"\"quoted\"\"\",11\n\
            2026-01-03,x3,,12\n";
        let t = read_csv(text, "f.csv", "time").unwrap();
        assert_eq!(t.text_columns, ["message"]);
        assert_eq!(
            t.metrics,
            vec![("build".to_string(), vec![10.0, 11.0, 12.0])]
        );
        assert_eq!(t.commits[2].as_deref(), Some("x3"));
        // A number column that later holds text is an error at that line.
        let e = read_csv("time,x\n1,1\n2,\"a\nb\"\n", "f.csv", "time").unwrap_err();
        assert!(e.to_string().contains("f.csv:3"), "{e}");
        let e = read_csv("time,m\n1,hello\n", "f.csv", "time").unwrap_err();
        assert!(
            e.to_string()
                .contains("no column of numbers (text columns: m)"),
            "{e}"
        );
    }
}
