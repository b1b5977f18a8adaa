//! Julia's BenchmarkTools (`BenchmarkTools.save("results.json", results)`):
//! `[{"Julia": ..., "BenchmarkTools": ...}, [value...]]`, each value
//! `[type name, fields]`. A `BenchmarkGroup`'s `data` maps keys to groups or
//! trials; a `Trial` keeps every sample's time (`times`, nanoseconds) and
//! the allocations (`memory` bytes and `allocs`, the same in every sample).
//! A `TrialEstimate` (a `median(trial)` saved) keeps one time: its ratio
//! alone is compared. Names are the keys' path (`calc/sum/n=10` from
//! nested groups).

use serde_json::Value;

use super::{Read, bad, described, push};
use crate::ingest::Series;
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

pub fn detect(v: &Value) -> bool {
    v.as_array()
        .is_some_and(|a| a.len() == 2 && a[0].get("BenchmarkTools").is_some() && a[1].is_array())
}

/// Nesting this deep is not a benchmark suite.
const MAX_DEPTH: usize = 64;

fn walk(v: &Value, path: &str, depth: usize, out: &mut Vec<Series>) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("groups nest deeper than {MAX_DEPTH}"));
    }
    let Some([ty, fields]) = v.as_array().map(Vec::as_slice) else {
        return Ok(());
    };
    let ty = ty.as_str().unwrap_or("");
    let ty = ty.strip_prefix("BenchmarkTools.").unwrap_or(ty);
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}/{k}")
        }
    };
    match ty {
        "BenchmarkGroup" => {
            if let Some(data) = fields.get("data").and_then(Value::as_object) {
                for (k, x) in data {
                    walk(x, &join(k.trim_matches('"')), depth + 1, out)?;
                }
            }
        }
        "Trial" => {
            let name = if path.is_empty() { "trial" } else { path };
            for t in fields
                .get("times")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
            {
                push(out, name, ("sec/op".into(), 1e-9, false), t);
            }
            for (k, unit) in [("memory", "B/op"), ("allocs", "allocs/op")] {
                if let Some(x) = fields.get(k).and_then(Value::as_f64) {
                    out.push(Series {
                        name: name.to_string(),
                        unit: unit.into(),
                        exact: true,
                        values: vec![x],
                        ..Series::default()
                    });
                }
            }
        }
        "TrialEstimate" => {
            let name = if path.is_empty() { "estimate" } else { path };
            if let Some(t) = fields.get("time").and_then(Value::as_f64) {
                out.push(described(
                    name,
                    "sec/op",
                    false,
                    Described {
                        centre: t * 1e-9,
                        kind: Centre::Median,
                        sd: None,
                        n: None,
                        kept: "BenchmarkTools saved an estimate (a TrialEstimate), not the Trial's samples: save the results of `run`".into(),
                    },
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

pub fn read(v: &Value, source: &str) -> Result<Read, IngestError> {
    let a = v
        .as_array()
        .filter(|a| a.len() == 2)
        .ok_or_else(|| bad(source, "BenchmarkTools JSON ([versions, values])"))?;
    let mut out = Vec::new();
    for x in a[1].as_array().into_iter().flatten() {
        walk(x, "", 0, &mut out).map_err(|e| IngestError::at(source, None, e))?;
    }
    let config = a[0]
        .as_object()
        .map(|o| o.iter().map(|(k, x)| (k.clone(), super::text(x))).collect())
        .unwrap_or_default();
    Ok((out, config))
}
