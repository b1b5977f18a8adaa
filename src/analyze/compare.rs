//! Pairing series across inputs and comparing each pair: the work behind
//! `tardy compare`.
//!
//! Inputs come in sides: the baseline side and one or more candidate sides,
//! each side pooling one or more files. When every input holds exactly one
//! series, sides are compared as wholes; otherwise series are matched by name
//! and unit, benchstat-style. A single input with several series (a
//! `tardy run` or hyperfine file with several commands) compares each series
//! with its first.

use serde::{Deserialize, Serialize};

use crate::ingest::{Dataset, Series};
use crate::probe::Fingerprint;
use crate::stats::compare::{self as engine, Correction, Estimate, Options};
use crate::stats::{Summary, summarize};

pub const SCHEMA: &str = "tardy.compare";
pub const SCHEMA_VERSION: u32 = 1;

/// One side of a comparison: the label and the datasets pooled into it.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub datasets: Vec<Dataset>,
}

impl Side {
    pub fn new(datasets: Vec<Dataset>) -> Side {
        let label = datasets
            .iter()
            .map(|d| d.source.as_str())
            .collect::<Vec<_>>()
            .join("+");
        Side { label, datasets }
    }
}

/// A candidate series against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The series' name (the benchmark), or the candidate's label.
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub baseline: String,
    pub candidate: String,
    pub n: [usize; 2],
    pub center: [f64; 2],
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub p_value: f64,
    pub p_adjusted: f64,
    pub test: String,
    /// `slower`, `faster`, `same` or `inconclusive`; for higher-is-better
    /// units (throughput) "slower" means worse, i.e. a lower value.
    pub verdict: engine::Verdict,
    pub min_detectable_effect: Option<f64>,
    pub runs_needed: Option<u64>,
    pub notes: Vec<String>,
    pub baseline_summary: Summary,
    pub candidate_summary: Summary,
    /// The full estimate behind the row.
    pub estimate: Estimate,
    /// Raw values, for plots (not serialised).
    #[serde(skip)]
    pub values: [Vec<f64>; 2],
}

/// benchstat's summary row, per candidate and unit: the geometric mean of
/// each side's centres, and the geometric mean of the per-row ratios of
/// centres (not the Hodges-Lehmann ratios).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    pub candidate: String,
    pub unit: String,
    pub rows: usize,
    pub ratio: f64,
    pub center: [f64; 2],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub schema_version: u32,
    pub confidence: f64,
    pub test: engine::TestChoice,
    pub correction: Correction,
    pub target_effect: f64,
    pub sides: Vec<String>,
    pub rows: Vec<Row>,
    pub geomeans: Vec<Geomean>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("nothing to compare: {0}")]
    Nothing(String),
    #[error("{name}: {source}")]
    Stats {
        name: String,
        source: engine::CompareError,
    },
}

/// Series of a side, pooled by (name, unit), in first-seen order.
fn pooled(side: &Side) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for d in &side.datasets {
        for s in &d.series {
            match out
                .iter_mut()
                .find(|o| o.name == s.name && o.unit == s.unit)
            {
                Some(o) => o.values.extend_from_slice(&s.values),
                None => out.push(s.clone()),
            }
        }
    }
    out
}

/// All values of a side whose inputs hold one series each.
fn whole(side: &Side) -> Series {
    let first = &side.datasets[0].series[0];
    Series {
        name: side.label.clone(),
        unit: first.unit.clone(),
        higher_is_better: first.higher_is_better,
        values: side
            .datasets
            .iter()
            .flat_map(|d| d.series[0].values.iter().copied())
            .collect(),
    }
}

/// Compare every candidate side with the first side.
pub fn compare(
    sides: &[Side],
    opts: &Options,
    correction: Correction,
) -> Result<Report, CompareError> {
    let mut warnings = machine_warnings(sides);
    let mut pairs: Vec<(String, String, String, Series, Series)> = Vec::new(); // name, base label, cand label, a, b
    match sides {
        [] => return Err(CompareError::Nothing("no inputs".into())),
        [only] => {
            let series = pooled(only);
            if series.len() < 2 {
                return Err(CompareError::Nothing(format!(
                    "{} holds one series; give a second file, or --vs FILES",
                    only.label
                )));
            }
            for s in &series[1..] {
                pairs.push((
                    s.name.clone(),
                    series[0].name.clone(),
                    s.name.clone(),
                    series[0].clone(),
                    s.clone(),
                ));
            }
        }
        [base, candidates @ ..] => {
            let single = sides
                .iter()
                .all(|s| s.datasets.iter().all(|d| d.series.len() == 1));
            for cand in candidates {
                if single {
                    pairs.push((
                        cand.label.clone(),
                        base.label.clone(),
                        cand.label.clone(),
                        whole(base),
                        whole(cand),
                    ));
                    continue;
                }
                let (bs, cs) = (pooled(base), pooled(cand));
                for b in &bs {
                    match cs.iter().find(|c| c.name == b.name && c.unit == b.unit) {
                        Some(c) => pairs.push((
                            b.name.clone(),
                            base.label.clone(),
                            cand.label.clone(),
                            b.clone(),
                            c.clone(),
                        )),
                        None => warnings.push(format!(
                            "'{}' ({}) is missing from {}",
                            b.name, b.unit, cand.label
                        )),
                    }
                }
                for c in &cs {
                    if !bs.iter().any(|b| b.name == c.name && b.unit == c.unit) {
                        warnings.push(format!(
                            "'{}' ({}) is only in {}",
                            c.name, c.unit, cand.label
                        ));
                    }
                }
            }
        }
    }
    let pair_count = pairs.len();
    if pairs.is_empty() {
        return Err(CompareError::Nothing(
            "no series with the same name and unit on both sides".into(),
        ));
    }
    let mut rows = Vec::with_capacity(pairs.len());
    for (name, base_label, cand_label, a, b) in pairs {
        let e = match engine::compare(&a.values, &b.values, opts) {
            Ok(e) => e,
            Err(source) => {
                let err = CompareError::Stats {
                    name: format!("{cand_label} vs {base_label}"),
                    source,
                };
                warnings.push(format!("not compared: {err}"));
                continue;
            }
        };
        let (sa, sb) = (
            summarize(&a.values, opts.confidence)
                .ok_or_else(|| CompareError::Nothing(format!("{name}: empty baseline")))?,
            summarize(&b.values, opts.confidence)
                .ok_or_else(|| CompareError::Nothing(format!("{name}: empty candidate")))?,
        );
        rows.push(Row {
            name,
            unit: a.unit.clone(),
            higher_is_better: a.higher_is_better,
            baseline: base_label,
            candidate: cand_label,
            n: [e.n_baseline, e.n_candidate],
            center: [e.center_baseline, e.center_candidate],
            ratio: e.ratio,
            ci_low: e.ci_low,
            ci_high: e.ci_high,
            p_value: e.p_value,
            p_adjusted: e.p_adjusted,
            test: e.test.clone(),
            verdict: e.verdict,
            min_detectable_effect: e.min_detectable_effect,
            runs_needed: e.runs_needed,
            notes: e.notes.clone(),
            baseline_summary: sa,
            candidate_summary: sb,
            estimate: e,
            values: [a.values, b.values],
        });
    }
    if rows.is_empty() {
        return Err(CompareError::Nothing(format!(
            "none of the {pair_count} pairs could be compared ({})",
            warnings.last().cloned().unwrap_or_default()
        )));
    }
    let correction = if rows.len() > 1 {
        correction
    } else {
        Correction::None
    };
    {
        let mut family: Vec<&mut Estimate> = rows.iter_mut().map(|r| &mut r.estimate).collect();
        engine::adjust(&mut family, correction);
    }
    // Verdicts after the family's control; for throughput-like units a larger
    // value is an improvement, so the words flip, not the numbers.
    for r in &mut rows {
        let flip = r.higher_is_better;
        r.p_adjusted = r.estimate.p_adjusted;
        r.verdict = match (r.estimate.verdict, flip) {
            (engine::Verdict::Slower, true) => engine::Verdict::Faster,
            (engine::Verdict::Faster, true) => engine::Verdict::Slower,
            (v, _) => v,
        };
    }
    let geomeans = geomeans(&rows);
    Ok(Report {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        confidence: opts.confidence,
        test: opts.test,
        correction,
        target_effect: opts.target_effect,
        sides: sides.iter().map(|s| s.label.clone()).collect(),
        rows,
        geomeans,
        warnings,
    })
}

fn geomeans(rows: &[Row]) -> Vec<Geomean> {
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !groups.contains(&(r.candidate.as_str(), r.unit.as_str())) {
            groups.push((r.candidate.as_str(), r.unit.as_str()));
        }
    }
    let mut out = Vec::new();
    for (cand, unit) in groups {
        let rs: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.candidate == cand && r.unit == unit && r.center[0] > 0.0 && r.center[1] > 0.0
            })
            .collect();
        if rs.len() < 2 {
            continue;
        }
        let n = rs.len() as f64;
        let g = |f: &dyn Fn(&Row) -> f64| (rs.iter().map(|r| f(r).ln()).sum::<f64>() / n).exp();
        out.push(Geomean {
            candidate: cand.to_string(),
            unit: unit.to_string(),
            rows: rs.len(),
            ratio: g(&|r| r.center[1] / r.center[0]),
            center: [g(&|r| r.center[0]), g(&|r| r.center[1])],
        });
    }
    out
}

/// Warn when the inputs were measured on machines or settings that differ.
fn machine_warnings(sides: &[Side]) -> Vec<String> {
    let machines: Vec<(&str, &Fingerprint)> = sides
        .iter()
        .flat_map(|s| s.datasets.iter())
        .filter_map(|d| d.machine.as_ref().map(|m| (d.source.as_str(), m)))
        .collect();
    let Some((first_src, first)) = machines.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (src, m) in &machines[1..] {
        let mut diffs: Vec<String> = first
            .differences(m)
            .into_iter()
            .map(|(what, a, b)| format!("{what} {a} vs {b}"))
            .collect();
        if first.hostname != m.hostname {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
            diffs.push(format!(
                "host {} vs {}",
                show(&first.hostname),
                show(&m.hostname)
            ));
        }
        if !diffs.is_empty() {
            out.push(format!(
                "{first_src} and {src} ran on different machines or settings: {}",
                diffs.join(", ")
            ));
        }
        let load = |f: &Fingerprint| f.load_avg_before.map_or(0.0, |l| l[0]);
        if (load(first) - load(m)).abs() > 1.0 {
            out.push(format!(
                "{first_src} and {src} ran under different load (1-minute load average {:.2} vs {:.2})",
                load(first),
                load(m)
            ));
        }
    }
    out
}
