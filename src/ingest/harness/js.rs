//! JavaScript harnesses: tinybench (its tasks' results as JSON, with
//! `retainSamples` every latency kept), vitest bench (`--outputJson`, which
//! keeps each benchmark's mean, sd and sample count) and Benchmark.js (the
//! suite's cycle lines, `name x 1,234 ops/sec ±0.5% (90 runs sampled)`, the
//! text github-action-benchmark reads).

use serde_json::Value;

use super::{Read, bad, described, push};
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

/// A tinybench task list: `[{name, result: {latency: {samples, mean, sd,
/// samplesCount}}}]` (tinybench 3+), or `result: {samples, mean, sd}`
/// (tinybench 2). Times in milliseconds.
pub fn is_tinybench(v: &Value) -> bool {
    v.as_array().and_then(|a| a.first()).is_some_and(|t| {
        t.get("name").is_some_and(Value::is_string)
            && t.get("result").is_some_and(|r| {
                r.get("latency").is_some() || r.get("samples").is_some() || r.get("hz").is_some()
            })
    })
}

/// vitest bench's `--outputJson`: `{files: [{filepath, groups: [{fullName,
/// benchmarks: [...]}]}]}`.
pub fn is_vitest(v: &Value) -> bool {
    v.get("files")
        .and_then(Value::as_array)
        .and_then(|f| f.first())
        .is_some_and(|f| f.get("groups").is_some_and(Value::is_array))
}

/// One benchmark's samples (milliseconds) or, without them, its mean, sd
/// and count.
fn ms_stats(out: &mut Vec<super::Series>, name: &str, stats: &Value, count_key: &str, who: &str) {
    let samples: Vec<f64> = stats
        .get("samples")
        .and_then(Value::as_array)
        .map(|s| s.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    if !samples.is_empty() {
        for x in samples {
            push(out, name, ("sec/op".into(), 1e-3, false), x);
        }
        return;
    }
    let Some(mean) = stats.get("mean").and_then(Value::as_f64) else {
        return;
    };
    let n = stats.get(count_key).and_then(Value::as_u64);
    out.push(described(
        name,
        "sec/op",
        false,
        Described {
            centre: mean * 1e-3,
            kind: Centre::Mean,
            sd: stats.get("sd").and_then(Value::as_f64).map(|s| s * 1e-3),
            n,
            kept: format!(
                "{who} keeps each benchmark's mean, sd and sample count, not the samples"
            ),
        },
    ));
}

pub fn tinybench(v: &Value, source: &str) -> Result<Read, IngestError> {
    let tasks = v
        .as_array()
        .ok_or_else(|| bad(source, "tinybench JSON (an array of tasks)"))?;
    let mut out = Vec::new();
    for t in tasks {
        let name = t
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(source, "tinybench JSON (a task without a name)"))?;
        let Some(r) = t.get("result") else { continue };
        if r.get("error").is_some_and(|e| !e.is_null()) {
            continue;
        }
        match r.get("latency") {
            Some(lat) => ms_stats(&mut out, name, lat, "samplesCount", "tinybench"),
            None => ms_stats(&mut out, name, r, "samplesCount", "tinybench"),
        }
    }
    let config = tasks
        .first()
        .and_then(|t| t.get("result"))
        .and_then(|r| r.get("runtime").zip(r.get("runtimeVersion")))
        .map(|(a, b)| {
            vec![(
                "runtime".to_string(),
                format!("{} {}", super::text(a), super::text(b)),
            )]
        })
        .unwrap_or_default();
    Ok((out, config))
}

pub fn vitest(v: &Value, source: &str) -> Result<Read, IngestError> {
    let files = v
        .get("files")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(source, "vitest bench JSON (no files)"))?;
    let mut out = Vec::new();
    for f in files {
        for g in f
            .get("groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let group = g.get("fullName").and_then(Value::as_str).unwrap_or("");
            for b in g
                .get("benchmarks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(name) = b.get("name").and_then(Value::as_str) else {
                    return Err(bad(
                        source,
                        "vitest bench JSON (a benchmark without a name)",
                    ));
                };
                let full = if group.is_empty() {
                    name.to_string()
                } else {
                    format!("{group} > {name}")
                };
                ms_stats(&mut out, &full, b, "sampleCount", "vitest bench");
            }
        }
    }
    Ok((out, Vec::new()))
}

/// Whether a line is a Benchmark.js cycle line.
pub fn is_benchmarkjs_line(line: &str) -> bool {
    parse_line(line).is_some()
}

/// `name x 1,234.5 ops/sec ±0.56% (93 runs sampled)`: the name, hz, the
/// relative margin of error (%) and the runs.
fn parse_line(line: &str) -> Option<(&str, f64, f64, u64)> {
    let line = line.trim();
    let (name, rest) = line.rsplit_once(" x ")?;
    let (hz, rest) = rest.split_once(" ops/sec ")?;
    let hz: f64 = hz.replace(',', "").parse().ok()?;
    let rest = rest.strip_prefix('±')?;
    let (rme, rest) = rest.split_once("% (")?;
    let rme: f64 = rme.parse().ok()?;
    let runs = rest
        .strip_suffix(" runs sampled)")
        .or_else(|| rest.strip_suffix(" run sampled)"))?;
    Some((name.trim(), hz, rme, runs.parse().ok()?))
}

/// Benchmark.js's cycle lines. Its mean is the mean time of a run (`1 /
/// hz`), its `rme` the margin of error of that mean at 95% (Student's t at
/// runs - 1 degrees of freedom): so the sd of the runs is `rme x mean / t x
/// sqrt(runs)`, exactly what it computed them from.
pub fn benchmarkjs(text: &str, source: &str) -> Result<Read, IngestError> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, hz, rme, runs)) = parse_line(line) else {
            continue;
        };
        if hz <= 0.0 {
            return Err(IngestError::at(
                source,
                None,
                format!("'{name}' runs at {hz} ops/sec, which is not a rate"),
            ));
        }
        let mean = 1.0 / hz;
        let t = if runs >= 2 {
            crate::stats::dist::t_critical(0.95, (runs - 1) as f64)
        } else {
            f64::NAN
        };
        let sd = (rme / 100.0 * mean / t * (runs as f64).sqrt()).max(0.0);
        out.push(described(
            name,
            "sec/op",
            false,
            Described {
                centre: mean,
                kind: Centre::Mean,
                sd: sd.is_finite().then_some(sd),
                n: Some(runs),
                kept: "Benchmark.js prints each benchmark's ops/sec, margin of error and runs, not the runs".into(),
            },
        ));
    }
    Ok((out, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycle_lines_are_read_and_other_lines_are_not() {
        let l = "RegExp#test x 59,125,471 ops/sec ±0.56% (96 runs sampled)";
        assert_eq!(parse_line(l), Some(("RegExp#test", 59_125_471.0, 0.56, 96)));
        assert!(parse_line("Fastest is RegExp#test").is_none());
        assert!(parse_line("a x 1 ops/sec").is_none());
    }
}
