//! Counts (instructions, cycles): values that noise barely moves.
//!
//! When every run of both sides gave the same count, the difference is not
//! an estimate: it is exact, and no test is run (a p-value would only say how
//! few runs there were). When counts vary a little (address-space layout,
//! hash seeds, a path taken on some runs), the usual tests apply to them as
//! to any other unit.

use super::compare::{self, CompareError, Estimate, Options};

/// The test named for an exact difference.
pub const EXACT_TEST: &str = "none (every run gave the same count)";

/// A count metric over runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CountStats {
    pub n: u64,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// (max - min) / median.
    pub relative_range: f64,
    pub identical: bool,
}

pub fn summarize(v: &[f64]) -> Option<CountStats> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let median = super::summary::quantile_sorted(&s, 0.5);
    let (min, max) = (s[0], s[s.len() - 1]);
    Some(CountStats {
        n: v.len() as u64,
        median,
        mean: v.iter().sum::<f64>() / v.len() as f64,
        min,
        max,
        relative_range: if median > 0.0 {
            (max - min) / median
        } else {
            0.0
        },
        identical: min == max,
    })
}

/// Whether every value is the same.
pub fn identical(v: &[f64]) -> bool {
    v.iter().all(|x| *x == v[0])
}

/// Compare candidate counts with baseline counts: `(estimate, exact)`.
/// Exact needs one run a side; the tests need two. The counts' target
/// ([`Options::count_target_effect`]) sizes `same`.
pub fn compare(
    baseline: &[f64],
    candidate: &[f64],
    opts: &Options,
) -> Result<(Estimate, bool), CompareError> {
    let opts = &opts.for_counts();
    if baseline.is_empty() || candidate.is_empty() {
        return Err(CompareError::TooFew {
            need: 1,
            baseline: baseline.len(),
            candidate: candidate.len(),
        });
    }
    if identical(baseline) && identical(candidate) {
        return exact(baseline, candidate, opts).map(|e| (e, true));
    }
    compare::compare(baseline, candidate, opts).map(|e| (e, false))
}

/// The exact difference of two constant sides.
pub fn exact(
    baseline: &[f64],
    candidate: &[f64],
    opts: &Options,
) -> Result<Estimate, CompareError> {
    let (a, b) = (baseline[0], candidate[0]);
    if !a.is_finite() || !b.is_finite() {
        return Err(CompareError::NonFinite);
    }
    if a == 0.0 {
        return Err(CompareError::ZeroBaseline);
    }
    let ratio = b / a;
    let verdict = compare::exact_verdict(a, b, opts.target_effect);
    Ok(Estimate {
        n_baseline: baseline.len(),
        n_candidate: candidate.len(),
        center_baseline: a,
        center_candidate: b,
        center_kind: "count".into(),
        ratio,
        ci_low: Some(ratio),
        ci_high: Some(ratio),
        confidence: opts.confidence,
        p_value: f64::NAN,
        p_adjusted: f64::NAN,
        test: EXACT_TEST.into(),
        verdict,
        min_detectable_effect: None,
        runs_needed: None,
        runs_for_any_verdict: None,
        target_effect: opts.target_effect,
        notes: vec![if baseline.len() + candidate.len() > 2 {
            format!(
                "every run identical ({} and {} runs): the difference is exact",
                baseline.len(),
                candidate.len()
            )
        } else {
            "one run a side: exact only if the program is deterministic".into()
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::Verdict;

    #[test]
    fn constant_sides_differ_exactly_and_varying_ones_are_tested() {
        let o = Options::default();
        let (e, exact) = compare(&[1000.0; 5], &[1005.0; 5], &o).unwrap();
        assert!(exact);
        // +0.5% is beyond the counts' 0.1% target: slower.
        assert_eq!(e.verdict, Verdict::Slower);
        assert!((e.ratio - 1.005).abs() < 1e-12);
        // +0.05% is inside it: `same`, and still proven.
        let (e, _) = compare(&[10000.0; 5], &[10005.0; 5], &o).unwrap();
        assert_eq!(e.verdict, Verdict::Same);
        assert!(e.proven_slower());
        assert!(e.p_value.is_nan());
        let (same, _) = compare(&[7.0; 3], &[7.0; 3], &o).unwrap();
        assert_eq!(same.verdict, Verdict::Same);
        // A little jitter: the rank test decides, and 5 a side separate 0.5%.
        let a = [1000.0, 1000.2, 999.9, 1000.1, 1000.0];
        let b = [1005.0, 1005.1, 1004.9, 1005.2, 1005.0];
        let (t, exact) = compare(&a, &b, &o).unwrap();
        assert!(!exact);
        assert_eq!(t.verdict, Verdict::Slower);
        assert!(t.p_value < 0.05);
        assert!(compare(&[], &[1.0], &o).is_err());
        assert!(compare(&[0.0], &[1.0], &o).is_err());
    }

    #[test]
    fn a_summary_says_whether_every_run_agreed() {
        let s = summarize(&[10.0, 10.0, 10.0]).unwrap();
        assert!(s.identical);
        assert_eq!(s.relative_range, 0.0);
        let v = summarize(&[100.0, 101.0, 99.0]).unwrap();
        assert!(!v.identical);
        assert!((v.relative_range - 0.02).abs() < 1e-12);
        assert!(summarize(&[]).is_none());
    }
}

/// Consecutive values this close (relative) are the same count; the
/// median step between neighbours must be below it for a series to be read
/// as counts ([`steps`]). Wall times never are: they move by percents.
pub const COUNT_LIKE: f64 = 1e-4;
/// The smallest relative step between two counts that is a change.
pub const SMALLEST_CHANGE: f64 = 1e-5;

/// A step: (index, level before, level after, points before, points after).
pub type Step = (usize, f64, f64, usize, usize);

/// Where a series of counts changes level: each index where a new level
/// begins and holds for at least two points (one point away and back is an
/// outlier). `None` when the series is not count-like (its neighbours differ
/// by more than [`COUNT_LIKE`] at the median): the statistical detector's
/// work. Each step is `(index, level before, level after, points before,
/// points after)`.
pub fn steps(values: &[f64]) -> Option<Vec<Step>> {
    let n = values.len();
    if n < 3 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let mut d: Vec<f64> = values
        .windows(2)
        .map(|w| (w[1] / w[0] - 1.0).abs())
        .collect();
    d.sort_by(f64::total_cmp);
    let jitter = d[d.len() / 2];
    if jitter > COUNT_LIKE {
        return None;
    }
    let tol = (4.0 * jitter).max(SMALLEST_CHANGE);
    let off = |a: f64, b: f64| (a / b - 1.0).abs() > tol;
    let mut starts = vec![0usize];
    let mut level = values[0];
    let mut i = 1;
    while i < n {
        if off(values[i], level) {
            // A new level: the next point must agree with it.
            if i + 1 < n && !off(values[i + 1], values[i]) {
                starts.push(i);
                level = values[i];
                i += 2;
                continue;
            }
            // An outlier (or the newest point, alone so far): not yet a step.
            i += 1;
            continue;
        }
        i += 1;
    }
    starts.push(n);
    let mean = |a: usize, b: usize| values[a..b].iter().sum::<f64>() / (b - a) as f64;
    Some(
        starts
            .windows(3)
            .map(|w| {
                let (a, s, b) = (w[0], w[1], w[2]);
                (s, mean(a, s), mean(s, b), s - a, b - s)
            })
            .collect(),
    )
}

#[cfg(test)]
mod step_tests {
    use super::steps;

    #[test]
    fn a_fifth_of_a_percent_is_a_step_and_one_odd_point_is_not() {
        let mut v = vec![5_128_074.0; 30];
        v.extend([5_138_330.0; 2]);
        let s = steps(&v).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].0, 30);
        // One point at a new level, at the end: wait for the next.
        let mut one = vec![1000.0; 30];
        one.push(1002.0);
        assert!(steps(&one).unwrap().is_empty());
        // An outlier in the middle.
        let mut o = vec![1000.0; 30];
        o[12] = 1010.0;
        assert!(steps(&o).unwrap().is_empty());
        // Counts with a little jitter still step.
        let j: Vec<f64> = (0..40)
            .map(|i| if i < 25 { 1e6 } else { 1.002e6 } + (i % 3) as f64 * 20.0)
            .collect();
        assert_eq!(
            steps(&j).unwrap().iter().map(|s| s.0).collect::<Vec<_>>(),
            [25]
        );
        // Wall times are not counts.
        let w: Vec<f64> = (0..40).map(|i| 1.0 + 0.03 * ((i * 7 % 5) as f64)).collect();
        assert!(steps(&w).is_none());
    }
}
