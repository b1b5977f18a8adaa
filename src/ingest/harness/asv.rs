//! airspeed velocity (asv) results: `results/<machine>/<commit>-<env>.json`,
//! `{commit_hash, params: {machine, cpu, ...}, result_columns: [result,
//! params, ..., stats_q_25, stats_q_75, stats_number, stats_repeat,
//! samples], results: {benchmark: [column values]}}`. With `asv run
//! --record-samples` every sample is kept (one list per parameter
//! combination); without, only asv's median and its 99% interval, compared
//! by their ratio alone. A parameterised benchmark is one series per
//! combination, named as asv prints it (`bench.time_join(10)`); the kind
//! comes from the function's prefix (`time_` seconds, `mem_`/`peakmem_`
//! bytes, `track_` the value tracked).

use serde_json::Value;

use super::{Read, bad, described, push, text};
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

pub fn detect(v: &Value) -> bool {
    v.get("result_columns").is_some_and(Value::is_array)
        || (v.get("results").is_some_and(Value::is_object) && v.get("commit_hash").is_some())
}

/// asv's `benchmarks.json` (the suite's description, no results).
pub fn is_benchmark_list(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.get("version").is_some()
            && o.iter()
                .filter(|(k, _)| *k != "version")
                .all(|(_, b)| b.get("type").is_some() && b.get("code").is_some())
            && o.len() > 1
    })
}

fn unit_of(name: &str) -> (&'static str, bool) {
    let f = name.rsplit('.').next().unwrap_or(name);
    if f.starts_with("time_") || f.starts_with("timeraw_") {
        ("sec/op", false)
    } else if f.starts_with("mem_") || f.starts_with("peakmem_") {
        ("B", false)
    } else {
        ("value", false)
    }
}

/// The cartesian product of the parameter lists, as asv names it:
/// `(10)`, `(10, 'a')`; the first list varies slowest.
fn combinations(params: &[Value]) -> Vec<String> {
    let mut out = vec![Vec::<String>::new()];
    for p in params {
        let vals: Vec<String> = p
            .as_array()
            .map(|a| a.iter().map(text).collect())
            .unwrap_or_default();
        let mut next = Vec::new();
        for prefix in &out {
            for v in &vals {
                let mut x = prefix.clone();
                x.push(v.clone());
                next.push(x);
            }
        }
        out = next;
    }
    out.into_iter()
        .map(|c| {
            if c.is_empty() {
                String::new()
            } else {
                format!("({})", c.join(", "))
            }
        })
        .collect()
}

fn list(v: Option<&Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(x) => vec![x.clone()],
    }
}

pub fn read(v: &Value, source: &str) -> Result<Read, IngestError> {
    let results = v
        .get("results")
        .and_then(Value::as_object)
        .ok_or_else(|| bad(source, "asv results JSON (no results)"))?;
    let columns: Vec<&str> = v
        .get("result_columns")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (bench, r) in results {
        // Version 2 (asv 0.5+): a row of columns; version 1: an object.
        let col = |name: &str| -> Option<&Value> {
            match r {
                Value::Array(row) => columns
                    .iter()
                    .position(|c| *c == name)
                    .and_then(|i| row.get(i)),
                Value::Object(o) => o.get(name),
                _ => None,
            }
        };
        let (unit, higher) = unit_of(bench);
        let (result, params) = match r {
            Value::Number(_) => (vec![r.clone()], Vec::new()),
            _ => (list(col("result")), list(col("params"))),
        };
        let names = combinations(&params);
        let samples = list(col("samples"));
        let repeat = list(col("stats_repeat"));
        for (i, centre) in result.iter().enumerate() {
            let name = format!("{bench}{}", names.get(i).map_or("", String::as_str));
            let kept: Vec<f64> = samples
                .get(i)
                .and_then(Value::as_array)
                .map(|s| s.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            if !kept.is_empty() {
                for x in kept {
                    push(&mut out, &name, (unit.into(), 1.0, higher), x);
                }
                continue;
            }
            // null (failed or skipped) or NaN: no measurement.
            let Some(c) = centre.as_f64().filter(|c| c.is_finite()) else {
                continue;
            };
            out.push(described(
                &name,
                unit,
                higher,
                Described {
                    centre: c,
                    kind: Centre::Median,
                    sd: None,
                    n: repeat.get(i).and_then(Value::as_u64),
                    kept: "asv kept the median and quartiles, not the samples (asv run --record-samples keeps them)".into(),
                },
            ));
        }
    }
    let mut config = Vec::new();
    if let Some(p) = v.get("params").and_then(Value::as_object) {
        for (k, x) in p {
            config.push((k.clone(), text(x)));
        }
    }
    for k in ["env_name", "commit_hash"] {
        if let Some(x) = v.get(k).and_then(Value::as_str) {
            config.push((k.to_string(), x.to_string()));
        }
    }
    Ok((out, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_combinations_are_named_as_asv_prints_them() {
        let p: Vec<Value> = serde_json::from_str(r#"[["10", "100"], ["'a'"]]"#).unwrap();
        assert_eq!(combinations(&p), ["(10, 'a')", "(100, 'a')"]);
        assert_eq!(combinations(&[]), [""]);
    }
}
