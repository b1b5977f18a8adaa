//! Warnings about one command's runs, each with the numbers behind it.

use crate::model::{Run, RunCounts, StopReason, Warning};
use crate::stats::Summary;
use crate::stats::outliers::{EXTREME, OUTLIER, modified_z_scores};
use crate::stats::trend::mann_kendall;

/// Above this coefficient of variation the spread is called high.
pub const HIGH_CV: f64 = 0.05;
/// Runs whose median is below this are dominated by process creation.
pub const SHORT_RUN_S: f64 = 0.005;
/// A trend is reported when significant at this level...
pub const TREND_P: f64 = 0.01;
/// ...and when the median moved by at least this much across the session.
pub const TREND_MIN_DRIFT: f64 = 0.01;

/// Runs left out of the statistics, if any; or, with `--ignore-failure`,
/// failed runs counted in them (every run failing still prints a median,
/// as hyperfine warns).
pub fn excluded_runs(counts: RunCounts, include_failures: bool) -> Vec<Warning> {
    let mut out = Vec::new();
    if (counts.failed > 0 && !include_failures) || counts.timed_out > 0 {
        out.push(Warning::FailedRuns {
            failed: if include_failures { 0 } else { counts.failed },
            timed_out: counts.timed_out,
            runs: counts.measured,
        });
    }
    if include_failures && counts.failed > 0 {
        out.push(Warning::FailuresCounted {
            failed: counts.failed,
            runs: counts.measured,
        });
    }
    out
}

/// Runs that left processes behind after the command exited.
pub fn stragglers(runs: &[Run]) -> Option<Warning> {
    let with: Vec<&Run> = runs.iter().filter(|r| !r.stragglers.is_empty()).collect();
    let first = with.first()?.stragglers.first()?;
    Some(Warning::Stragglers {
        runs: with.len() as u64,
        processes: with.iter().map(|r| r.stragglers.len() as u64).sum(),
        example: format!("{}, pid {}", first.comm, first.pid),
        killed: with.iter().all(|r| r.stragglers.iter().all(|s| s.killed)),
    })
}

/// Warnings about the counted times (`times_s`, in run order) of a command.
pub fn timing_warnings(
    times_s: &[f64],
    summary: &Summary,
    spawn_floor_s: Option<f64>,
) -> Vec<Warning> {
    let mut out = Vec::new();
    let scores = modified_z_scores(times_s);
    if let Some(&first) = scores.first()
        && first > EXTREME
    {
        out.push(Warning::SlowFirstRun {
            score: first,
            first_s: times_s[0],
            median_s: summary.median,
        });
    }
    let outliers = scores.iter().skip(1).filter(|s| s.abs() > OUTLIER).count() as u64;
    let extreme = scores.iter().skip(1).filter(|s| s.abs() > EXTREME).count() as u64;
    drop(scores); // one copy of a large sample at a time
    if extreme > 0 {
        out.push(Warning::Outliers {
            count: outliers,
            extreme,
            runs: times_s.len() as u64,
        });
    }
    if summary.cv > HIGH_CV {
        out.push(Warning::HighSpread { cv: summary.cv });
    }
    if summary.median < SHORT_RUN_S {
        out.push(Warning::ShortRuns {
            median_s: summary.median,
            spawn_floor_s: spawn_floor_s.unwrap_or(0.0),
        });
    }
    if let Some(trend) = mann_kendall(times_s)
        && trend.p_value < TREND_P
        && trend.drift.abs() >= TREND_MIN_DRIFT
    {
        out.push(Warning::Trend { trend });
    }
    out
}

/// The precision asked for was not reached because a limit stopped measuring.
pub fn precision_not_reached(
    summary: &Summary,
    stop: Option<&StopReason>,
    target: f64,
) -> Option<Warning> {
    if !matches!(
        stop,
        Some(StopReason::MaxTime { .. } | StopReason::MaxRuns { .. })
    ) || summary.mean == 0.0
    {
        return None;
    }
    let [lo, hi] = summary.mean_ci;
    let achieved = (hi - lo) / 2.0 / summary.mean;
    // The half-width shrinks as 1/sqrt(n): (achieved/target)^2 times the runs.
    let runs_needed = (summary.n as f64 * (achieved / target).powi(2))
        .ceil()
        .min(1e12) as u64;
    (achieved > target).then_some(Warning::PrecisionNotReached {
        achieved,
        target,
        runs_needed,
        seconds_needed: runs_needed as f64 * summary.mean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_precision_not_reached_says_how_many_runs_would_reach_it() {
        // 40 runs of 100 ms with a 6% spread: about ±2% at 95%; ±1% takes
        // about four times the runs.
        let times: Vec<f64> = (0..40)
            .map(|i| 0.1 * (1.0 + 0.1 * ((i * 7 % 13) as f64 / 6.0 - 1.0)))
            .collect();
        let s = crate::stats::summarize(&times, 0.95).unwrap();
        let stop = StopReason::MaxTime { seconds: 6.0 };
        let Some(Warning::PrecisionNotReached {
            achieved,
            runs_needed,
            seconds_needed,
            ..
        }) = precision_not_reached(&s, Some(&stop), 0.01)
        else {
            panic!("no warning");
        };
        let expected = 40.0 * (achieved / 0.01f64).powi(2);
        assert!(
            (runs_needed as f64 - expected).abs() <= 1.0,
            "{runs_needed} {expected}"
        );
        assert!(runs_needed > 100 && runs_needed < 400, "{runs_needed}");
        assert!((seconds_needed - runs_needed as f64 * s.mean).abs() < 1e-9);
        // Reached, or stopped by the run count asked for: no warning.
        assert!(precision_not_reached(&s, Some(&stop), 0.5).is_none());
        let exact = StopReason::ExactRuns { runs: 40 };
        assert!(precision_not_reached(&s, Some(&exact), 0.01).is_none());
    }
}
