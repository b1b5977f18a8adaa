//! The result of one probe and of a whole `tardy doctor` run: the types that are
//! saved (`--save`), printed (`--json`) and compared (`--compare`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Fingerprint;
use super::sample::Measure;

pub const SCHEMA: &str = "tardy.doctor";
pub const SCHEMA_VERSION: u32 = 1;

/// How a probe's value sits against its healthy range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    Ok,
    /// Information only (no healthy range applies here).
    Info,
    Warn,
    Bad,
    Unavailable,
}

/// A probe's verdict in words; filled in by `diagnose::machine`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    pub health: Health,
    /// The measure the verdict is about (its key).
    pub headline: String,
    /// The healthy range, in words.
    pub healthy: String,
    /// What the value means: the known case it resembles and what code suffers.
    pub meaning: String,
}

/// One probe's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// Stable id: `sleep`, `clock`, `syscall`, `ctxswitch`, `locks`, `spawn`,
    /// `first-exec`, `fork`, `pause`, `frequency`, `contention`, `fsync`, `metadata`.
    pub id: String,
    pub title: String,
    pub measures: Vec<Measure>,
    /// Facts read or derived while probing (filesystem type, TSC rate, ...).
    #[serde(default)]
    pub facts: BTreeMap<String, serde_json::Value>,
    /// Why the probe could not run here, when it could not.
    #[serde(default)]
    pub unavailable: Option<String>,
    pub elapsed_s: f64,
    #[serde(default)]
    pub assessment: Option<Assessment>,
}

impl ProbeResult {
    pub fn new(id: &str, title: &str) -> ProbeResult {
        ProbeResult {
            id: id.to_string(),
            title: title.to_string(),
            measures: Vec::new(),
            facts: BTreeMap::new(),
            unavailable: None,
            elapsed_s: 0.0,
            assessment: None,
        }
    }

    pub fn measure(&self, key: &str) -> Option<&Measure> {
        self.measures.iter().find(|m| m.key == key)
    }

    pub fn fact(&mut self, key: &str, value: impl Into<serde_json::Value>) {
        self.facts.insert(key.to_string(), value.into());
    }

    pub fn fact_f64(&self, key: &str) -> Option<f64> {
        self.facts.get(key).and_then(|v| v.as_f64())
    }

    pub fn fact_str(&self, key: &str) -> Option<&str> {
        self.facts.get(key).and_then(|v| v.as_str())
    }
}

/// A whole `tardy doctor` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoctorReport {
    pub schema: String,
    pub schema_version: u32,
    pub tardy_version: String,
    /// Unix time in ns when probing started.
    pub taken_at_ns: u64,
    pub quick: bool,
    /// Directory of the I/O probes.
    pub dir: Option<String>,
    pub machine: Fingerprint,
    pub probes: Vec<ProbeResult>,
    /// Wall time of the whole run, fingerprint included.
    pub elapsed_s: f64,
}

impl DoctorReport {
    pub fn probe(&self, id: &str) -> Option<&ProbeResult> {
        self.probes.iter().find(|p| p.id == id)
    }

    /// The probes at or past `--fail-on` `level` ("bad", or "warn": bad and
    /// warn), each with its health.
    pub fn failing(&self, level: &str) -> Vec<(&str, Health)> {
        self.probes
            .iter()
            .filter_map(|p| {
                let h = p.assessment.as_ref()?.health;
                let fails = h == Health::Bad || (h == Health::Warn && level == "warn");
                fails.then_some((p.id.as_str(), h))
            })
            .collect()
    }

    /// The same report without raw samples (what `--json` prints).
    pub fn without_samples(&self) -> DoctorReport {
        let mut r = self.clone();
        for p in &mut r.probes {
            for m in &mut p.measures {
                m.samples.clear();
            }
        }
        r
    }
}

/// Read a saved doctor report, checking its shape and version. The kind is checked
/// from the first 64 KiB (tardy writes `"schema"` first), and the file is then read
/// into the typed report, never into a generic JSON tree: a large file of the wrong
/// kind costs nothing, a right one no more than the report.
pub fn load(path: &std::path::Path) -> Result<DoctorReport, String> {
    use crate::ingest::sniff;
    use std::io::Read;
    let name = path.display();
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(sniff::HEAD as u64).read_to_end(&mut head))
        .map_err(|e| format!("{name}: cannot read: {e}"))?;
    let expected = "expected a tardy doctor report from `tardy doctor --save`";
    match sniff::sniff(&head) {
        sniff::Kind::ResultsJson => {}
        sniff::Kind::Empty => return Err(format!("{name}: is empty: {expected}")),
        other => {
            return Err(format!(
                "{name}: is not JSON ({}): {expected}",
                other.describe()
            ));
        }
    }
    if !head.windows(8).any(|w| w == b"\"schema\"") {
        return Err(format!(
            "{name}: has no \"schema\" key in its first {} KiB: {expected}",
            sniff::HEAD / 1024
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    #[derive(serde::Deserialize)]
    struct Head {
        schema: Option<String>,
        schema_version: Option<u64>,
    }
    let h: Head = serde_json::from_str(text)
        .map_err(|e| format!("{name}:{}:{}: not JSON: {e}", e.line(), e.column()))?;
    match h.schema.as_deref() {
        Some(SCHEMA) => {}
        Some(other) => {
            return Err(format!(
                "{name}: is a '{other}' file, expected a tardy doctor report (schema '{SCHEMA}', from `tardy doctor --save`)"
            ));
        }
        None => {
            return Err(format!("{name}: has no \"schema\" key: {expected}"));
        }
    }
    match h.schema_version {
        Some(n) if n == SCHEMA_VERSION as u64 => {}
        other => {
            return Err(format!(
                "{name}: schema_version {} is not supported (this tardy reads {SCHEMA_VERSION})",
                other.map_or("missing".into(), |n| n.to_string())
            ));
        }
    }
    serde_json::from_str(text)
        .map_err(|e| format!("{name}: not a doctor report of this version: {e}"))
}
