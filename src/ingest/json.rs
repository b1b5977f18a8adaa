//! JSON results: tardy's own results file, hyperfine `--export-json`,
//! pytest-benchmark `--benchmark-json` (with `--benchmark-save-data`), and
//! criterion's `sample.json` (or a criterion benchmark directory).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::error::IngestError;
use super::{Dataset, Format, Series};
use crate::measure::counters::Metric;
use crate::model::{Results, SCHEMA, SCHEMA_VERSION};

fn series(name: &str, values: Vec<f64>) -> Series {
    Series {
        name: name.to_string(),
        unit: "s".to_string(),
        values,
        ..Series::default()
    }
}

fn dataset(source: &str, format: Format, series: Vec<Series>) -> Dataset {
    Dataset {
        source: source.to_string(),
        format,
        series,
        config: Vec::new(),
        machine: None,
    }
}

fn shape_error(source: &str, e: serde_json::Error, what: &str) -> IngestError {
    let line = (e.line() > 0).then_some(e.line());
    IngestError::at(source, line, format!("is not a valid {what} file: {e}"))
}

/// Every value finite, and no time negative.
fn check_values(ds: &Dataset, source: &str) -> Result<(), IngestError> {
    for s in &ds.series {
        if s.values.iter().any(|v| !v.is_finite()) {
            return Err(IngestError::at(
                source,
                None,
                format!("'{}' holds a value that is not a finite number", s.name),
            ));
        }
        // Times (and criterion's per-iteration times) are never negative.
        if let Some(v) = s.values.iter().find(|v| **v < 0.0)
            && (s.unit == "s" || s.unit.is_empty() || s.unit.ends_with("/op"))
        {
            return Err(IngestError::at(
                source,
                None,
                format!(
                    "'{}' holds a negative time ({v}), which cannot be measured",
                    s.name
                ),
            ));
        }
    }
    Ok(())
}

/// The format of a results JSON when its first bytes say it for sure: tardy writes
/// `"schema": "tardy.results"` first, hyperfine `"results"` first. Those files are
/// then read typed, straight from the file, never into a generic JSON tree (which
/// takes 4-8x the file).
pub fn head_format(head: &str) -> Option<Format> {
    let t = head.trim_start_matches('\u{feff}').trim_start();
    let t = t.strip_prefix('{')?.trim_start();
    if let Some(rest) = t.strip_prefix("\"schema\"") {
        let rest = rest.trim_start().strip_prefix(':')?.trim_start();
        return rest
            .starts_with(&format!("\"{SCHEMA}\""))
            .then_some(Format::Tardy);
    }
    t.starts_with("\"results\"").then_some(Format::Hyperfine)
}

/// Read a tardy or hyperfine results file of `format` (from [`head_format`]) typed,
/// from a reader. `None` when it does not parse so: the caller reads it the general
/// way, whose errors say more.
pub fn read_typed(
    reader: impl std::io::Read,
    source: &str,
    format: Format,
) -> Option<Result<Dataset, IngestError>> {
    let reader = std::io::BufReader::with_capacity(1 << 16, reader);
    let ds = match format {
        Format::Tardy => {
            let r: Results = serde_json::from_reader(reader).ok()?;
            if r.schema_version > SCHEMA_VERSION {
                return None;
            }
            tardy_dataset(r, source)
        }
        Format::Hyperfine => hyperfine_dataset(serde_json::from_reader(reader).ok()?, source),
        _ => return None,
    };
    Some(ds.and_then(|ds| check_values(&ds, source).map(|()| ds)))
}

/// Read a JSON document of any supported shape (or of `format`).
pub fn read(text: &str, source: &str, format: Format) -> Result<Dataset, IngestError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let what = if e.is_eof() {
            "truncated JSON"
        } else {
            "invalid JSON"
        };
        IngestError::at(source, Some(e.line()), format!("{what}: {e}"))
    })?;
    if is_criterion_estimates(&value) {
        return Err(IngestError::at(
            source,
            None,
            "is criterion's estimates.json, which holds summary estimates, not samples: give sample.json from the same directory (target/criterion/<benchmark>/new/sample.json), or the benchmark's directory".into(),
        ));
    }
    let format = match format {
        Format::Auto => detect(&value).ok_or_else(|| {
            IngestError::at(
                source,
                None,
                "is JSON of an unknown shape: expected tardy results, hyperfine --export-json, pytest-benchmark --benchmark-json, criterion sample.json, JMH -rf json, Google Benchmark --benchmark_format=json, BenchmarkDotNet's full JSON, tinybench or vitest bench --outputJson, asv results, benchmark-ips json!, BenchmarkTools.save or Bencher Metric Format".into(),
            )
        })?,
        f => f,
    };
    let ds = match format {
        Format::Tardy => read_tardy(value, source)?,
        Format::Hyperfine => read_hyperfine(value, source)?,
        Format::PytestBenchmark => read_pytest(value, source)?,
        Format::Criterion => read_criterion_sample(value, source, source)?,
        f if f.is_benchmarks() && !matches!(f, Format::Go) => {
            super::harness::read(value, source, format)?
        }
        other => {
            return Err(IngestError::at(
                source,
                None,
                format!("is JSON, not {other:?} input"),
            ));
        }
    };
    check_values(&ds, source)?;
    Ok(ds)
}

fn detect(v: &Value) -> Option<Format> {
    if old_criterion_sample(v).is_some() {
        return Some(Format::Criterion);
    }
    let Some(o) = v.as_object() else {
        return super::harness::detect(v);
    };
    if o.get("schema").and_then(Value::as_str) == Some(SCHEMA) {
        return Some(Format::Tardy);
    }
    if o.get("results").is_some_and(Value::is_array) {
        return Some(Format::Hyperfine);
    }
    if o.get("benchmarks")
        .and_then(Value::as_array)
        .is_some_and(|b| b.iter().any(|x| x.get("stats").is_some()))
    {
        return Some(Format::PytestBenchmark);
    }
    if o.contains_key("iters") && o.contains_key("times") {
        return Some(Format::Criterion);
    }
    super::harness::detect(v)
}

/// criterion's estimates.json: `{"mean": {"confidence_interval": ..., "point_estimate": ...}, ...}`.
fn is_criterion_estimates(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        ["mean", "median", "std_dev"]
            .iter()
            .all(|k| o.get(*k).is_some_and(|e| e.get("point_estimate").is_some()))
    })
}

/// criterion before 0.3 wrote sample.json as `[[iters...], [times...]]`.
fn old_criterion_sample(v: &Value) -> Option<Value> {
    let a = v.as_array()?;
    match a.as_slice() {
        [iters, times] if iters.is_array() && times.is_array() => {
            Some(serde_json::json!({ "iters": iters, "times": times }))
        }
        _ => None,
    }
}

fn read_tardy(value: Value, source: &str) -> Result<Dataset, IngestError> {
    let version = value
        .get("schema_version")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if version > SCHEMA_VERSION as u64 {
        return Err(IngestError::at(
            source,
            None,
            format!(
                "was written by a newer tardy (schema version {version}; this tardy reads up to {SCHEMA_VERSION})"
            ),
        ));
    }
    let r: Results =
        serde_json::from_value(value).map_err(|e| shape_error(source, e, "tardy results"))?;
    tardy_dataset(r, source)
}

/// The command of a benchmark as `tardy bisect` should run it: the
/// environment `tardy run --env` gave it as an `env` prefix, and the run
/// timeout as `--timeout`.
pub fn bisect_command(command: &str, o: &crate::model::OptionsRecord) -> (String, Vec<String>) {
    let quote = |a: &str| {
        if !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
        {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    let command = if o.env.is_empty() {
        command.to_string()
    } else {
        let vars: Vec<String> = o.env.iter().map(|v| quote(v)).collect();
        format!("env {} sh -c {}", vars.join(" "), quote(command))
    };
    let mut options = Vec::new();
    if let Some(t) = o.timeout_s {
        options.push("--timeout".to_string());
        options.push(format!("{t}"));
    }
    (command, options)
}

pub fn tardy_dataset(r: Results, source: &str) -> Result<Dataset, IngestError> {
    let include = r.options.include_failures_in_stats;
    let mut series: Vec<Series> = Vec::new();
    for b in &r.benchmarks {
        let command = Some(bisect_command(&b.command, &r.options));
        let values = b
            .runs
            .iter()
            .filter(|x| x.counted(include))
            .map(|x| crate::model::ns_to_s(x.net_wall_ns))
            .collect();
        series.push(Series {
            command: command.clone(),
            ..self::series(&b.name, values)
        });
    }
    // Each count the runs carry (--metric instructions, ...) is a series of
    // its own, in its own unit, after the wall times.
    for b in &r.benchmarks {
        for m in Metric::ALL.into_iter().filter(|m| m.is_count()) {
            let values = b.count_values(m, include);
            if !values.is_empty() {
                series.push(Series {
                    unit: m.unit().to_string(),
                    command: Some(bisect_command(&b.command, &r.options)),
                    ..self::series(&b.name, values)
                });
            }
        }
    }
    let mut ds = dataset(source, Format::Tardy, series);
    ds.machine = Some(r.machine);
    Ok(ds)
}

#[derive(Deserialize)]
struct Hyperfine {
    results: Vec<HyperfineResult>,
}

#[derive(Deserialize)]
struct HyperfineResult {
    command: String,
    times: Option<Vec<f64>>,
    exit_codes: Option<Vec<Option<i32>>>,
}

fn read_hyperfine(value: Value, source: &str) -> Result<Dataset, IngestError> {
    let h: Hyperfine =
        serde_json::from_value(value).map_err(|e| shape_error(source, e, "hyperfine JSON"))?;
    hyperfine_dataset(h, source)
}

fn hyperfine_dataset(h: Hyperfine, source: &str) -> Result<Dataset, IngestError> {
    let mut out = Vec::new();
    for r in h.results {
        let times = r.times.ok_or_else(|| {
            IngestError::at(
                source,
                None,
                format!(
                    "hyperfine result '{}' has no per-run times (times[] is missing)",
                    r.command
                ),
            )
        })?;
        // Keep runs that exited 0 when hyperfine recorded exit codes.
        let values = match r.exit_codes {
            Some(codes) if codes.len() == times.len() => times
                .into_iter()
                .zip(codes)
                .filter(|(_, c)| *c == Some(0))
                .map(|(t, _)| t)
                .collect(),
            _ => times,
        };
        let mut s = series(&r.command, values);
        s.command = Some((r.command.clone(), Vec::new()));
        out.push(s);
    }
    Ok(dataset(source, Format::Hyperfine, out))
}

#[derive(Deserialize)]
struct Pytest {
    benchmarks: Vec<PytestBench>,
}

#[derive(Deserialize)]
struct PytestBench {
    name: String,
    fullname: Option<String>,
    stats: PytestStats,
}

#[derive(Deserialize)]
struct PytestStats {
    data: Option<Vec<f64>>,
}

fn read_pytest(value: Value, source: &str) -> Result<Dataset, IngestError> {
    let p: Pytest = serde_json::from_value(value)
        .map_err(|e| shape_error(source, e, "pytest-benchmark JSON"))?;
    let mut out = Vec::new();
    for b in p.benchmarks {
        let name = b.fullname.unwrap_or(b.name);
        let data = b.stats.data.ok_or_else(|| {
            IngestError::at(
                source,
                None,
                format!(
                    "benchmark '{name}' has no raw timings: run pytest with --benchmark-save-data"
                ),
            )
        })?;
        out.push(series(&name, data));
    }
    Ok(dataset(source, Format::PytestBenchmark, out))
}

#[derive(Deserialize)]
struct CriterionSample {
    iters: Vec<f64>,
    times: Vec<f64>,
}

fn read_criterion_sample(value: Value, source: &str, name: &str) -> Result<Dataset, IngestError> {
    let value = old_criterion_sample(&value).unwrap_or(value);
    let s: CriterionSample = serde_json::from_value(value)
        .map_err(|e| shape_error(source, e, "criterion sample.json"))?;
    if s.iters.len() != s.times.len() {
        return Err(IngestError::at(
            source,
            None,
            "criterion sample.json has different numbers of iters and times".into(),
        ));
    }
    if s.iters.iter().any(|&i| i <= 0.0) {
        return Err(IngestError::at(
            source,
            None,
            "criterion sample.json has a non-positive iteration count".into(),
        ));
    }
    // Each sample is a batch: time per iteration, ns to seconds.
    let values = s
        .times
        .iter()
        .zip(&s.iters)
        .map(|(t, i)| t / i / 1e9)
        .collect();
    Ok(dataset(
        source,
        Format::Criterion,
        vec![series(name, values)],
    ))
}

/// A criterion benchmark directory: `DIR/new/sample.json` or `DIR/sample.json`.
pub fn read_criterion_dir(dir: &Path, source: &str) -> Result<Dataset, IngestError> {
    for candidate in [dir.join("new").join("sample.json"), dir.join("sample.json")] {
        if candidate.is_file() {
            let text =
                std::fs::read_to_string(&candidate).map_err(|e| IngestError::io(source, e))?;
            let name = dir
                .file_name()
                .map_or(source.to_string(), |n| n.to_string_lossy().into_owned());
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                IngestError::at(
                    &candidate.display().to_string(),
                    Some(e.line()),
                    format!("invalid JSON: {e}"),
                )
            })?;
            return read_criterion_sample(value, &candidate.display().to_string(), &name);
        }
    }
    Err(IngestError::at(source, None, "is a directory without new/sample.json or sample.json (not a criterion benchmark directory)".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hyperfine_shape() {
        let t = r#"{"results":[{"command":"sleep 0.1","mean":0.1,"times":[0.1,0.11,0.12],"exit_codes":[0,0,1]}]}"#;
        let ds = read(t, "h.json", Format::Auto).unwrap();
        assert_eq!(ds.format, Format::Hyperfine);
        assert_eq!(ds.series[0].values, vec![0.1, 0.11]);
    }

    #[test]
    fn wrong_shapes_say_what_was_expected() {
        let e = read(r#"{"foo": 1}"#, "x.json", Format::Auto).unwrap_err();
        assert!(e.message.contains("unknown shape"), "{e}");
        let e = read(r#"{"results": [{"command": "a"}]}"#, "x.json", Format::Auto).unwrap_err();
        assert!(e.message.contains("no per-run times"), "{e}");
        let e = read("{\"results\": [", "x.json", Format::Auto).unwrap_err();
        assert!(e.message.contains("truncated"), "{e}");
        let e = read(
            r#"{"benchmarks":[{"name":"t","stats":{"mean":1}}]}"#,
            "p.json",
            Format::Auto,
        )
        .unwrap_err();
        assert!(e.message.contains("--benchmark-save-data"), "{e}");
    }

    #[test]
    fn criterion_sample_is_per_iteration() {
        let ds = read(
            r#"{"sampling_mode":"Linear","iters":[1,2],"times":[100,400]}"#,
            "s.json",
            Format::Auto,
        )
        .unwrap();
        assert_eq!(ds.series[0].values, vec![100e-9, 200e-9]);
        // criterion before 0.3: [[iters], [times]].
        let old = read("[[1.0,2.0],[100.0,400.0]]", "s.json", Format::Auto).unwrap();
        assert_eq!(old.series[0].values, vec![100e-9, 200e-9]);
        // estimates.json holds no samples: say which file does.
        let e = read(
            r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1},"median_abs_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1},"slope":null,"std_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1}}"#,
            "estimates.json",
            Format::Auto,
        )
        .unwrap_err();
        assert!(e.message.contains("sample.json"), "{e}");
    }
}
