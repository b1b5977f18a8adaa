//! Bencher Metric Format (what a custom harness writes for Bencher):
//! `{"benchmark": {"measure": {"value": 88.0, "lower_value": 87.4,
//! "upper_value": 88.9}}}`. One value per benchmark and measure: a file is
//! one run, so two files are compared by their ratio alone, and several
//! files a side make samples. `latency` is in nanoseconds (`sec/op` here),
//! `throughput` in operations a second (higher is better); other measures
//! keep their slug as the unit.

use serde_json::Value;

use super::{Read, bad, described};
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

/// Every entry an object of measures, every measure an object with a
/// numeric `value`.
pub fn detect(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    !o.is_empty()
        && o.values().all(|b| {
            b.as_object().is_some_and(|m| {
                !m.is_empty()
                    && m.values()
                        .all(|x| x.get("value").is_some_and(Value::is_number))
            })
        })
}

pub fn read(v: &Value, source: &str) -> Result<Read, IngestError> {
    let o = v
        .as_object()
        .ok_or_else(|| bad(source, "Bencher Metric Format JSON (an object)"))?;
    let mut out = Vec::new();
    for (name, measures) in o {
        for (measure, m) in measures.as_object().into_iter().flatten() {
            let Some(x) = m.get("value").and_then(Value::as_f64) else {
                continue;
            };
            let (unit, factor, higher) = match measure.as_str() {
                "latency" => ("sec/op".to_string(), 1e-9, false),
                "throughput" => ("ops/s".to_string(), 1.0, true),
                other => (other.to_string(), 1.0, false),
            };
            let bounds = match (
                m.get("lower_value").and_then(Value::as_f64),
                m.get("upper_value").and_then(Value::as_f64),
            ) {
                (Some(_), Some(_)) => " and its bounds".to_string(),
                _ => String::new(),
            };
            out.push(described(
                name,
                &unit,
                higher,
                Described {
                    centre: x * factor,
                    kind: Centre::Mean,
                    sd: None,
                    n: None,
                    kept: format!("Bencher Metric Format keeps one {measure} value per benchmark{bounds}, not samples"),
                },
            ));
        }
    }
    Ok((out, Vec::new()))
}
