//! The statistics step of a session: from raw runs to summaries, resource
//! use, warnings and verdicts. It reads and fills a [`Results`]; it never
//! measures, prints or writes files.

use crate::diagnose::runs as diag;
use crate::measure::counters::Metric;
use crate::model::{
    Benchmark, Comparison, CountSummary, Exec, ResourceSummary, Results, Run, RunCounts,
    ShellCorrection,
};
use crate::stats::{self, Estimate, compare, summary::quantile_sorted};

/// `tardy run`'s job: measure the session `cfg` describes
/// ([`crate::measure::spec::session_config`]), telling `observer` of each
/// run, and finish its results (statistics, comparisons, warnings). An
/// error after some runs comes back beside the results that hold them.
pub fn measure(
    cfg: &crate::measure::session::SessionConfig,
    observer: &mut dyn crate::measure::session::Observer,
) -> Result<(Results, Option<crate::measure::MeasureError>), crate::measure::MeasureError> {
    let (mut results, error) = crate::measure::session::run(cfg, observer)?;
    finalize(&mut results);
    Ok((results, error))
}

/// Fill in `summary`, `resources` and `warnings` of every benchmark, and the
/// comparisons of every candidate against the first benchmark.
pub fn finalize(results: &mut Results) {
    let include = results.options.include_failures_in_stats;
    let confidence = results.options.confidence;
    let floor = results.overhead.spawn_floor_ns.map(crate::model::ns_to_s);
    let stop = results.stop_reason.clone();
    let precision = results.options.precision;
    let corrections = results.shell_corrections.clone();
    let mut samples: Vec<Vec<f64>> = Vec::new();
    for b in &mut results.benchmarks {
        let shell_cpu = shell_cpu_s(b, &corrections);
        let counted: Vec<&Run> = b.runs.iter().filter(|r| r.counted(include)).collect();
        let times: Vec<f64> = counted
            .iter()
            .map(|r| crate::model::ns_to_s(r.net_wall_ns))
            .collect();
        let counts = RunCounts::of(&b.runs);
        b.summary = stats::summarize(&times, confidence);
        b.resources = resources(&counted, counts, shell_cpu);
        b.warnings = diag::excluded_runs(counts, include);
        b.warnings.extend(diag::stragglers(&b.runs));
        if let Some(s) = &b.summary {
            b.warnings.extend(diag::timing_warnings(&times, s, floor));
            b.warnings
                .extend(diag::precision_not_reached(s, stop.as_ref(), precision));
        }
        samples.push(times);
    }
    let opts = compare::Options {
        confidence,
        seed: results.options.seed,
        ..compare::Options::default()
    };
    results.comparisons = (1..samples.len())
        .map(|c| {
            let (estimate, error) = match compare::compare(&samples[0], &samples[c], &opts) {
                Ok(e) => (Some(e), None),
                Err(e) => (None, Some(e.to_string())),
            };
            Comparison {
                reference: 0,
                candidate: c,
                estimate,
                error,
                metric: None,
                exact: false,
            }
        })
        .collect();
    // Several candidates against one reference: Holm keeps the family-wise error at 1 - confidence.
    let mut family: Vec<&mut Estimate> = results
        .comparisons
        .iter_mut()
        .filter_map(|c| c.estimate.as_mut())
        .collect();
    if family.len() > 1 {
        compare::adjust(&mut family, compare::Correction::Holm);
    }
    count_metrics(results, &opts);
    cpu_time_metrics(results, &opts);
}

/// Each candidate compared with the reference by every CPU-time metric
/// (`--metric cpu`, `user`, `sys`): the runs' getrusage times of the whole
/// tree, compared as times (waiting for a CPU on a loaded machine is not
/// in them, as it is in wall time).
fn cpu_time_metrics(results: &mut Results, opts: &compare::Options) {
    let include = results.options.include_failures_in_stats;
    let metrics: Vec<Metric> = results
        .options
        .metrics
        .iter()
        .filter_map(|m| Metric::parse(m).ok())
        .filter(|m| m.is_cpu_time())
        .collect();
    for m in metrics {
        let values: Vec<Vec<f64>> = results
            .benchmarks
            .iter()
            .map(|b| {
                b.runs
                    .iter()
                    .filter(|r| r.counted(include))
                    .filter_map(|r| m.cpu_time_of(r))
                    .collect()
            })
            .collect();
        let mut family: Vec<Comparison> = (1..values.len())
            .map(|c| {
                let (estimate, error) = match compare::compare(&values[0], &values[c], opts) {
                    Ok(e) => (Some(e), None),
                    Err(e) => (None, Some(e.to_string())),
                };
                Comparison {
                    reference: 0,
                    candidate: c,
                    estimate,
                    error,
                    metric: Some(m.name().to_string()),
                    exact: false,
                }
            })
            .collect();
        let mut tested: Vec<&mut Estimate> = family
            .iter_mut()
            .filter_map(|c| c.estimate.as_mut())
            .collect();
        if tested.len() > 1 {
            compare::adjust(&mut tested, compare::Correction::Holm);
        }
        results.comparisons.extend(family);
    }
}

/// The count metrics of the session (`--metric instructions`, ...), in order.
fn count_metrics_of(results: &Results) -> Vec<Metric> {
    results
        .options
        .metrics
        .iter()
        .filter_map(|m| Metric::parse(m).ok())
        .filter(|m| m.is_count())
        .collect()
}

/// Each benchmark's counts summarised, and each candidate compared with the
/// reference by every count: exactly when every run of both gave one count,
/// with the usual tests (and their spread) when counts vary a little.
fn count_metrics(results: &mut Results, opts: &compare::Options) {
    let include = results.options.include_failures_in_stats;
    let metrics = count_metrics_of(results);
    let mut values: Vec<Vec<Vec<f64>>> = Vec::new();
    for b in &mut results.benchmarks {
        let mut per_metric = Vec::new();
        b.counts.clear();
        for &m in &metrics {
            let v = b.count_values(m, include);
            if let Some(stats) = stats::counts::summarize(&v) {
                b.counts.push(CountSummary {
                    metric: m.name().to_string(),
                    stats,
                });
            }
            per_metric.push(v);
        }
        values.push(per_metric);
    }
    for (k, &m) in metrics.iter().enumerate() {
        let mut family: Vec<Comparison> = Vec::new();
        for c in 1..values.len() {
            let (a, b) = (&values[0][k], &values[c][k]);
            let (estimate, error, exact) = match stats::counts::compare(a, b, opts) {
                Ok((e, exact)) => (Some(e), None, exact),
                Err(e) => (None, Some(e.to_string()), false),
            };
            family.push(Comparison {
                reference: 0,
                candidate: c,
                estimate,
                error,
                metric: Some(m.name().to_string()),
                exact,
            });
        }
        let mut tested: Vec<&mut Estimate> = family
            .iter_mut()
            .filter(|c| !c.exact)
            .filter_map(|c| c.estimate.as_mut())
            .collect();
        if tested.len() > 1 {
            compare::adjust(&mut tested, compare::Correction::Holm);
        }
        results.comparisons.extend(family);
    }
}

/// The shell's own (user, system) seconds for a shell-run benchmark, subtracted
/// from its CPU times like its wall time is.
fn shell_cpu_s(b: &Benchmark, corrections: &[ShellCorrection]) -> (f64, f64) {
    let Exec::Shell { shell, .. } = &b.exec else {
        return (0.0, 0.0);
    };
    corrections
        .iter()
        .find(|c| &c.shell == shell)
        .map_or((0.0, 0.0), |c| {
            (
                crate::model::ns_to_s(c.user_ns),
                crate::model::ns_to_s(c.sys_ns),
            )
        })
}

fn resources(
    counted: &[&Run],
    counts: RunCounts,
    (shell_user, shell_sys): (f64, f64),
) -> Option<ResourceSummary> {
    if counted.is_empty() {
        return None;
    }
    let n = counted.len() as f64;
    let mean = |f: fn(&Run) -> u64| counted.iter().map(|r| f(r) as f64).sum::<f64>() / n;
    let mut rss: Vec<f64> = counted.iter().map(|r| r.max_rss_kib as f64).collect();
    rss.sort_by(f64::total_cmp);
    Some(ResourceSummary {
        user_mean_s: (mean(|r| r.user_ns) / 1e9 - shell_user).max(0.0),
        sys_mean_s: (mean(|r| r.sys_ns) / 1e9 - shell_sys).max(0.0),
        max_rss_median_kib: quantile_sorted(&rss, 0.5).round() as u64,
        max_rss_max_kib: rss.last().copied().unwrap_or(0.0) as u64,
        voluntary_cs_mean: mean(|r| r.voluntary_cs),
        involuntary_cs_mean: mean(|r| r.involuntary_cs),
        runs_failed: counts.failed,
        runs_timed_out: counts.timed_out,
    })
}

/// What counting under cachegrind costs, from the runs so far: the median
/// counted run's wall time against the median timed run's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CountingCost {
    pub counted_s: f64,
    pub timed_s: f64,
    /// counted / timed.
    pub factor: f64,
}

pub fn counting_cost(results: &Results) -> Option<CountingCost> {
    let mut counted = Vec::new();
    let mut timed = Vec::new();
    for r in results.benchmarks.iter().flat_map(|b| &b.runs) {
        if let Some(c) = r.counts.as_ref().and_then(|c| c.counted_wall_ns) {
            counted.push(crate::model::ns_to_s(c));
            timed.push(crate::model::ns_to_s(r.wall_ns));
        }
    }
    if counted.is_empty() {
        return None;
    }
    let median = |v: &mut Vec<f64>| stats::summary::median_by_selection(v);
    let (counted_s, timed_s) = (median(&mut counted), median(&mut timed));
    Some(CountingCost {
        counted_s,
        timed_s,
        factor: if timed_s > 0.0 {
            counted_s / timed_s
        } else {
            f64::INFINITY
        },
    })
}
