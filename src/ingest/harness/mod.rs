//! Benchmark harnesses' output. Here, the JSON that keeps every sample: JMH (`-rf json`: each
//! fork's iteration scores in `primaryMetric.rawData`), Google Benchmark
//! (`--benchmark_format=json` or `--benchmark_out`: one `iteration` entry per
//! repetition) and BenchmarkDotNet (its full JSON exporter: every
//! measurement of every benchmark in `Measurements`).
//!
//! Each benchmark is a series named as its harness names it, with its
//! parameters as sub-benchmark keys (`bench.Calc.sum/n=10`, as Go names
//! `BenchmarkX/n=10`), and its values in the harness's own unit turned into
//! benchstat's: times per operation in `sec/op`, rates in `ops/s` (higher
//! is better). What the file records of the machine and runtime (JMH's JVM,
//! Google Benchmark's context, BenchmarkDotNet's HostEnvironmentInfo) is
//! configuration, as Go's `goos:` lines. Summaries are never used as
//! samples: the mean of the values read equals the harness's own score.

//!
//! Beside, one file per harness family: [`js`] (tinybench, vitest bench,
//! Benchmark.js), [`asv`], [`ips`] (Ruby's benchmark-ips), [`julia`]
//! (BenchmarkTools), [`bencher`] (Bencher Metric Format), [`rust`]
//! (libtest's `#[bench]`, divan, iai-callgrind) and [`catch2`]. Where a harness keeps only
//! a summary, the series carries it ([`Series::described`]) and its centre
//! alone as its value: compared from the summary, never from invented
//! samples.

pub mod asv;
pub mod bencher;
pub mod catch2;
pub mod ips;
pub mod js;
pub mod julia;
pub mod rust;

use serde_json::Value;

use super::error::IngestError;
use super::{Dataset, Format, Series};
use crate::stats::described::Described;

/// A benchmark its harness kept as a summary: its centre is its value.
fn described(name: &str, unit: &str, higher: bool, d: Described) -> Series {
    Series {
        name: name.to_string(),
        unit: unit.to_string(),
        higher_is_better: higher,
        values: vec![d.centre],
        described: Some(d),
        ..Series::default()
    }
}

/// Which harness wrote a text file (not JSON), from its lines.
pub fn detect_text(text: &str) -> Option<Format> {
    if catch2::detect(text) {
        return Some(Format::Catch2);
    }
    let t = text.trim_start();
    if t.starts_with('<') {
        return None;
    }
    let mut lines = text.lines().take(10_000);
    lines.find_map(|l| {
        if rust::is_libtest_line(l) {
            Some(Format::Libtest)
        } else if rust::is_iai_line(l) {
            Some(Format::IaiCallgrind)
        } else if rust::is_divan_header(l) {
            Some(Format::Divan)
        } else if js::is_benchmarkjs_line(l) {
            Some(Format::BenchmarkJs)
        } else {
            None
        }
    })
}

/// Read a text harness's output.
pub fn read_text(text: &str, source: &str, format: Format) -> Result<Dataset, IngestError> {
    let (series, config) = match format {
        Format::Catch2 => catch2::read(text, source)?,
        Format::Libtest => rust::libtest(text, source)?,
        Format::Divan => rust::divan(text, source)?,
        Format::IaiCallgrind => rust::iai(text, source)?,
        Format::BenchmarkJs => js::benchmarkjs(text, source)?,
        other => {
            return Err(IngestError::at(
                source,
                None,
                format!("is not {other:?} output"),
            ));
        }
    };
    finish(series, config, source, format)
}

fn finish(
    series: Vec<Series>,
    config: Vec<(String, String)>,
    source: &str,
    format: Format,
) -> Result<Dataset, IngestError> {
    if series.iter().all(|s| s.values.is_empty()) {
        return Err(IngestError::at(
            source,
            None,
            format!(
                "holds no measurements ({} output without a benchmark)",
                format.name()
            ),
        ));
    }
    Ok(Dataset {
        source: source.to_string(),
        format,
        series,
        config,
        machine: None,
    })
}

/// Which harness wrote a JSON document, from its shape.
pub fn detect(v: &Value) -> Option<Format> {
    if julia::detect(v) {
        return Some(Format::Julia);
    }
    if ips::detect(v) {
        return Some(Format::BenchmarkIps);
    }
    if js::is_tinybench(v) || js::is_vitest(v) {
        return Some(Format::Tinybench);
    }
    if asv::detect(v) || asv::is_benchmark_list(v) {
        return Some(Format::Asv);
    }
    if let Some(a) = v.as_array() {
        let first = a.first()?;
        return (first.get("primaryMetric").is_some() && first.get("benchmark").is_some())
            .then_some(Format::Jmh);
    }
    let o = v.as_object()?;
    let benchmarks = o.get("benchmarks").and_then(Value::as_array);
    if o.get("context").is_some()
        && benchmarks.is_some_and(|b| {
            b.iter()
                .any(|x| x.get("time_unit").is_some() || x.get("run_name").is_some())
        })
    {
        return Some(Format::GoogleBenchmark);
    }
    let dotnet = o.get("Benchmarks").and_then(Value::as_array);
    if o.get("HostEnvironmentInfo").is_some() || o.get("Title").is_some() && dotnet.is_some() {
        return dotnet
            .is_some_and(|b| {
                b.iter()
                    .any(|x| x.get("Measurements").is_some() || x.get("Statistics").is_some())
            })
            .then_some(Format::BenchmarkDotNet);
    }
    bencher::detect(v).then_some(Format::Bencher)
}

pub fn read(v: Value, source: &str, format: Format) -> Result<Dataset, IngestError> {
    let (series, config) = match format {
        Format::Jmh => jmh(&v, source)?,
        Format::GoogleBenchmark => google(&v, source)?,
        Format::BenchmarkDotNet => dotnet(&v, source)?,
        Format::Tinybench if js::is_vitest(&v) => js::vitest(&v, source)?,
        Format::Tinybench => js::tinybench(&v, source)?,
        Format::Asv if asv::is_benchmark_list(&v) => {
            return Err(IngestError::at(
                source,
                None,
                "is asv's benchmarks.json (the suite's description): give a results file, results/<machine>/<commit>-<env>.json".into(),
            ));
        }
        Format::Asv => asv::read(&v, source)?,
        Format::BenchmarkIps => ips::read(&v, source)?,
        Format::Julia => julia::read(&v, source)?,
        Format::Bencher => bencher::read(&v, source)?,
        other => {
            return Err(IngestError::at(
                source,
                None,
                format!("is JSON, not {other:?} input"),
            ));
        }
    };
    finish(series, config, source, format)
}

type Read = (Vec<Series>, Vec<(String, String)>);

/// A time unit's length in seconds (`ns`, `us`/`µs`, `ms`, `s`, `min`).
fn seconds(unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => 1e-9,
        "us" | "µs" | "μs" => 1e-6,
        "ms" => 1e-3,
        "ps" => 1e-12,
        "s" => 1.0,
        "min" => 60.0,
        "h" | "hr" => 3600.0,
        _ => return None,
    })
}

/// A harness unit as benchstat names it, the factor to it, and whether a
/// larger value is better: `ns/op` is `sec/op` (x 1e-9), `ops/ms` is
/// `ops/s` (x 1000); others are kept.
fn unit(u: &str) -> (String, f64, bool) {
    if let Some((num, den)) = u.split_once('/') {
        if let Some(f) = seconds(num) {
            return ("sec/op".into(), f, false);
        }
        if let Some(f) = seconds(den) {
            return (format!("{num}/s"), 1.0 / f, true);
        }
    }
    (u.to_string(), 1.0, u.ends_with("/s"))
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn push(out: &mut Vec<Series>, name: &str, unit: (String, f64, bool), value: f64) {
    let (u, factor, higher) = unit;
    let v = value * factor;
    match out.iter_mut().find(|s| s.name == name && s.unit == u) {
        Some(s) => s.values.push(v),
        None => out.push(Series {
            name: name.to_string(),
            unit: u,
            higher_is_better: higher,
            values: vec![v],
            ..Series::default()
        }),
    }
}

fn bad(source: &str, what: &str) -> IngestError {
    IngestError::at(source, None, format!("is not valid {what}"))
}

/// JMH: `[{benchmark, mode, params, primaryMetric: {score, scoreUnit,
/// rawData: [[per iteration] per fork]}, secondaryMetrics, jvm, ...}]`.
fn jmh(v: &Value, source: &str) -> Result<Read, IngestError> {
    let runs = v
        .as_array()
        .ok_or_else(|| bad(source, "JMH JSON (an array)"))?;
    let mut out = Vec::new();
    let mut config = Vec::new();
    for r in runs {
        let bench = r
            .get("benchmark")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(source, "JMH JSON (a result without `benchmark`)"))?;
        let mut name = bench.to_string();
        if let Some(p) = r.get("params").and_then(Value::as_object) {
            for (k, v) in p {
                name.push_str(&format!("/{k}={}", text(v)));
            }
        }
        if let Some(t) = r.get("threads").and_then(Value::as_u64).filter(|&t| t > 1) {
            name.push_str(&format!("/threads={t}"));
        }
        let metric = r
            .get("primaryMetric")
            .ok_or_else(|| bad(source, "JMH JSON (no primaryMetric)"))?;
        let u = unit(
            metric
                .get("scoreUnit")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let raw = metric.get("rawData").and_then(Value::as_array).ok_or_else(|| {
            IngestError::at(
                source,
                None,
                format!("benchmark '{name}' has no rawData (its samples): JMH writes them with -rf json"),
            )
        })?;
        for fork in raw {
            for x in fork.as_array().into_iter().flatten() {
                if let Some(x) = x.as_f64() {
                    push(&mut out, &name, u.clone(), x);
                }
            }
        }
        if config.is_empty() {
            for k in ["jmhVersion", "jdkVersion", "vmName", "vmVersion", "jvm"] {
                if let Some(v) = r.get(k).and_then(Value::as_str) {
                    config.push((k.to_string(), v.to_string()));
                }
            }
        }
    }
    Ok((out, config))
}

/// Google Benchmark: `{context: {...}, benchmarks: [{name, run_name,
/// run_type: iteration | aggregate, real_time, cpu_time, time_unit,
/// counters...}]}`. Each `iteration` entry is one sample (one per
/// repetition); aggregates (mean, median, stddev, cv) are not samples.
fn google(v: &Value, source: &str) -> Result<Read, IngestError> {
    let list = v
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(source, "Google Benchmark JSON (no benchmarks)"))?;
    let mut out = Vec::new();
    for b in list {
        if b.get("run_type").and_then(Value::as_str) == Some("aggregate")
            || b.get("error_occurred").and_then(Value::as_bool) == Some(true)
        {
            continue;
        }
        let name = b
            .get("run_name")
            .or_else(|| b.get("name"))
            .and_then(Value::as_str)
            .ok_or_else(|| bad(source, "Google Benchmark JSON (a benchmark without a name)"))?;
        let tu = b.get("time_unit").and_then(Value::as_str).unwrap_or("ns");
        let f = seconds(tu).unwrap_or(1e-9);
        if let Some(t) = b.get("real_time").and_then(Value::as_f64) {
            push(&mut out, name, ("sec/op".into(), f, false), t);
        }
        if let Some(t) = b.get("cpu_time").and_then(Value::as_f64) {
            push(&mut out, name, ("cpu-sec/op".into(), f, false), t);
        }
        // User counters: rates (bytes_per_second, items_per_second) and
        // plain numbers.
        for (k, u) in [("bytes_per_second", "B/s"), ("items_per_second", "items/s")] {
            if let Some(x) = b.get(k).and_then(Value::as_f64) {
                push(&mut out, name, (u.into(), 1.0, true), x);
            }
        }
    }
    let mut config = Vec::new();
    if let Some(c) = v.get("context").and_then(Value::as_object) {
        for k in [
            "host_name",
            "executable",
            "num_cpus",
            "mhz_per_cpu",
            "cpu_scaling_enabled",
            "library_build_type",
            "library_version",
        ] {
            if let Some(x) = c.get(k) {
                config.push((k.to_string(), text(x)));
            }
        }
    }
    Ok((out, config))
}

/// BenchmarkDotNet's full JSON: `{Title, HostEnvironmentInfo, Benchmarks:
/// [{FullName, Type, Method, Parameters, Statistics, Measurements:
/// [{IterationMode, IterationStage, Operations, Nanoseconds}]}]}`. The
/// samples are the `Workload`/`Result` measurements (overhead removed),
/// per operation; without them (the brief exporter) the file holds only
/// summaries, and is refused with the exporter to use.
fn dotnet(v: &Value, source: &str) -> Result<Read, IngestError> {
    let list = v
        .get("Benchmarks")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(source, "BenchmarkDotNet JSON (no Benchmarks)"))?;
    let mut out = Vec::new();
    for b in list {
        let method = b.get("Method").and_then(Value::as_str).unwrap_or("");
        let ty = b.get("Type").and_then(Value::as_str).unwrap_or("");
        let mut name = match b.get("FullName").and_then(Value::as_str) {
            Some(f) if !f.is_empty() => f.split('(').next().unwrap_or(f).to_string(),
            _ => format!("{ty}.{method}"),
        };
        if let Some(p) = b
            .get("Parameters")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            for kv in p.split('&') {
                name.push('/');
                name.push_str(kv);
            }
        }
        let Some(ms) = b.get("Measurements").and_then(Value::as_array) else {
            return Err(IngestError::at(
                source,
                None,
                format!(
                    "benchmark '{name}' has no Measurements (its samples): export with BenchmarkDotNet's full JSON exporter ([JsonExporterAttribute.Full] or --exporters json), not the brief one"
                ),
            ));
        };
        for m in ms {
            let mode = m.get("IterationMode").and_then(Value::as_str);
            let stage = m.get("IterationStage").and_then(Value::as_str);
            if mode != Some("Workload") || stage != Some("Result") {
                continue;
            }
            let ops = m.get("Operations").and_then(Value::as_f64).unwrap_or(0.0);
            let ns = m.get("Nanoseconds").and_then(Value::as_f64);
            if let Some(ns) = ns.filter(|_| ops > 0.0) {
                push(&mut out, &name, ("sec/op".into(), 1e-9, false), ns / ops);
            }
        }
        if let Some(mem) = b.get("Memory").and_then(Value::as_object)
            && let Some(bytes) = mem
                .get("BytesAllocatedPerOperation")
                .and_then(Value::as_f64)
        {
            let s = Series {
                name: name.clone(),
                unit: "B/op".into(),
                exact: true,
                values: vec![bytes],
                ..Series::default()
            };
            out.push(s);
        }
    }
    let mut config = Vec::new();
    if let Some(h) = v.get("HostEnvironmentInfo").and_then(Value::as_object) {
        for k in [
            "BenchmarkDotNetVersion",
            "OsVersion",
            "ProcessorName",
            "RuntimeVersion",
            "Architecture",
            "JitModules",
        ] {
            if let Some(x) = h.get(k).filter(|x| !x.is_null()) {
                config.push((k.to_string(), text(x)));
            }
        }
    }
    Ok((out, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_as_benchstat_names_them() {
        assert_eq!(unit("ns/op"), ("sec/op".into(), 1e-9, false));
        assert_eq!(unit("us/op").0, "sec/op");
        assert_eq!(unit("ops/ms"), ("ops/s".into(), 1000.0, true));
        assert_eq!(unit("ops/s"), ("ops/s".into(), 1.0, true));
        assert_eq!(unit("B/op"), ("B/op".into(), 1.0, false));
    }
}
