//! Ruby's benchmark-ips (`x.json! "file"`): `[{name, central_tendency, ips,
//! stddev, microseconds, iterations, cycles}]`. Its samples are timings of
//! `cycles` iterations each, so there were `iterations / cycles` of them;
//! `ips` is their mean rate and `stddev` their standard deviation (the
//! default `stats: :sd`; with `stats: :bootstrap` the file cannot say the
//! error is an interval instead).

use serde_json::Value;

use super::{Read, bad, described};
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

pub fn detect(v: &Value) -> bool {
    v.as_array()
        .and_then(|a| a.first())
        .is_some_and(|x| x.get("ips").is_some() && x.get("central_tendency").is_some())
}

pub fn read(v: &Value, source: &str) -> Result<Read, IngestError> {
    let list = v
        .as_array()
        .ok_or_else(|| bad(source, "benchmark-ips JSON (an array)"))?;
    let mut out = Vec::new();
    for b in list {
        let name = b
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(source, "benchmark-ips JSON (a report without a name)"))?;
        let Some(ips) = b
            .get("central_tendency")
            .or_else(|| b.get("ips"))
            .and_then(Value::as_f64)
        else {
            continue;
        };
        let sd = b
            .get("stddev")
            .or_else(|| b.get("error"))
            .and_then(Value::as_f64);
        let iterations = b.get("iterations").and_then(Value::as_f64);
        let cycles = b.get("cycles").and_then(Value::as_f64).filter(|c| *c > 0.0);
        let n = iterations.zip(cycles).map(|(i, c)| (i / c).round() as u64);
        out.push(described(
            name,
            "ops/s",
            true,
            Described {
                centre: ips,
                kind: Centre::Mean,
                sd,
                n,
                kept: "benchmark-ips keeps each report's mean rate, sd and sample count, not the samples".into(),
            },
        ));
    }
    Ok((out, Vec::new()))
}
