//! The statistics step of a session: from raw runs to summaries, resource
//! use, warnings and verdicts. It reads and fills a [`Results`]; it never
//! measures, prints or writes files.

use crate::diagnose;
use crate::model::{Comparison, ResourceSummary, Results, Warning};
use crate::stats::{self, summary::quantile_sorted};

/// Fill in `summary`, `resources` and `warnings` of every benchmark, and the
/// comparisons of every candidate against the first benchmark.
pub fn finalize(results: &mut Results) {
    let include = results.options.include_failures_in_stats;
    let confidence = results.options.confidence;
    let floor = results.overhead.spawn_floor_ns.map(|ns| ns as f64 * 1e-9);
    let mut samples: Vec<Vec<f64>> = Vec::new();
    for b in &mut results.benchmarks {
        // The shell's own CPU time, subtracted like its wall time.
        let (shell_user, shell_sys) = match &b.exec {
            crate::model::Exec::Shell { shell, .. } => results
                .shell_corrections
                .iter()
                .find(|c| &c.shell == shell)
                .map_or((0.0, 0.0), |c| {
                    (c.user_ns as f64 * 1e-9, c.sys_ns as f64 * 1e-9)
                }),
            crate::model::Exec::Direct { .. } => (0.0, 0.0),
        };
        let counted: Vec<_> = b.runs.iter().filter(|r| r.counted(include)).collect();
        let times: Vec<f64> = counted
            .iter()
            .map(|r| r.net_wall_ns as f64 * 1e-9)
            .collect();
        b.summary = stats::summarize(&times, confidence);
        b.resources = (!counted.is_empty()).then(|| {
            let n = counted.len() as f64;
            let mut rss: Vec<f64> = counted.iter().map(|r| r.max_rss_kib as f64).collect();
            rss.sort_by(f64::total_cmp);
            ResourceSummary {
                user_mean_s: (counted.iter().map(|r| r.user_ns as f64).sum::<f64>() / n * 1e-9
                    - shell_user)
                    .max(0.0),
                sys_mean_s: (counted.iter().map(|r| r.sys_ns as f64).sum::<f64>() / n * 1e-9
                    - shell_sys)
                    .max(0.0),
                max_rss_median_kib: quantile_sorted(&rss, 0.5).round() as u64,
                max_rss_max_kib: rss.last().copied().unwrap_or(0.0) as u64,
                voluntary_cs_mean: counted.iter().map(|r| r.voluntary_cs as f64).sum::<f64>() / n,
                involuntary_cs_mean: counted.iter().map(|r| r.involuntary_cs as f64).sum::<f64>()
                    / n,
                runs_failed: b
                    .runs
                    .iter()
                    .filter(|r| !r.warmup && r.failed && !r.timed_out)
                    .count() as u64,
                runs_timed_out: b.runs.iter().filter(|r| !r.warmup && r.timed_out).count() as u64,
            }
        });
        b.warnings = match &b.summary {
            Some(s) => {
                let mut w = diagnose::runs::warnings(&b.runs, &times, s, floor, include);
                if let (
                    Some(
                        crate::model::StopReason::MaxTime { .. }
                        | crate::model::StopReason::MaxRuns { .. },
                    ),
                    Some([lo, hi]),
                ) = (&results.stop_reason, Some(s.mean_ci))
                {
                    let achieved = (hi - lo) / 2.0 / s.mean;
                    if achieved > results.options.precision {
                        w.push(Warning::PrecisionNotReached {
                            achieved,
                            target: results.options.precision,
                        });
                    }
                }
                w
            }
            None => {
                let failed = b
                    .runs
                    .iter()
                    .filter(|r| !r.warmup && r.failed && !r.timed_out)
                    .count() as u64;
                let timed_out = b.runs.iter().filter(|r| !r.warmup && r.timed_out).count() as u64;
                let runs = b.runs.iter().filter(|r| !r.warmup).count() as u64;
                if runs > 0 {
                    vec![Warning::FailedRuns {
                        failed,
                        timed_out,
                        runs,
                    }]
                } else {
                    Vec::new()
                }
            }
        };
        samples.push(times);
    }
    results.comparisons = (1..samples.len())
        .map(
            |c| match stats::ratio_of_geomeans(&samples[0], &samples[c], confidence) {
                Ok(estimate) => Comparison {
                    reference: 0,
                    candidate: c,
                    estimate: Some(estimate),
                    error: None,
                },
                Err(e) => Comparison {
                    reference: 0,
                    candidate: c,
                    estimate: None,
                    error: Some(e.to_string()),
                },
            },
        )
        .collect();
}
