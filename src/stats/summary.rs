//! Descriptive statistics of one sample and the confidence intervals of its
//! mean (Student's t) and median (distribution-free order statistics).

use serde::{Deserialize, Serialize};

use super::dist::{binomial_cdf, t_critical};

/// What a sample of timings looks like. All values are in the sample's unit
/// (seconds for timings).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1 denominator); 0 for n = 1.
    pub stddev: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub q1: f64,
    pub q3: f64,
    /// Median absolute deviation, unscaled.
    pub mad: f64,
    /// Coefficient of variation, stddev / mean.
    pub cv: f64,
    /// Confidence level of the two intervals below, in (0, 1).
    pub confidence: f64,
    /// Confidence interval of the mean, `[low, high]` (Student's t).
    pub mean_ci: [f64; 2],
    /// Confidence interval of the median from order statistics; `None` when
    /// the sample is too small for any interval at this confidence.
    pub median_ci: Option<[f64; 2]>,
}

/// Summarise `values` (any order). Returns `None` for an empty sample or one
/// holding a non-finite value.
pub fn summarize(values: &[f64], confidence: f64) -> Option<Summary> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let median = quantile_sorted(&sorted, 0.5);
    // The median of the deviations, as `median_by_selection` of them would give it.
    let (below, at) = deviations_at(&sorted, median, n / 2);
    let mad = if n % 2 == 1 { at } else { (below + at) / 2.0 };
    let half = if n > 1 {
        t_critical(confidence, (n - 1) as f64) * stddev / (n as f64).sqrt()
    } else {
        f64::INFINITY
    };
    Some(Summary {
        n,
        mean,
        stddev,
        median,
        min: sorted[0],
        max: sorted[n - 1],
        q1: quantile_sorted(&sorted, 0.25),
        q3: quantile_sorted(&sorted, 0.75),
        mad,
        cv: if mean != 0.0 { stddev / mean } else { 0.0 },
        confidence,
        mean_ci: [mean - half, mean + half],
        median_ci: median_ci_sorted(&sorted, confidence),
    })
}

/// Mean and sample variance (n - 1) of `values`, two-pass, of `f(v)` for each
/// value (the identity, or `ln` for log-times). Needs 2+ values.
pub fn mean_var_of(values: &[f64], f: impl Fn(f64) -> f64) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| f(v)).sum::<f64>() / n;
    let var = values.iter().map(|&v| (f(v) - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// `values` sorted as (order-preserving bits of the value, position),
/// ascending in `f64::total_cmp`'s order: plain integers sort several times
/// faster than positions compared through the values, which the checks a
/// server runs on every test of a suite need.
pub fn sorted_keys(values: &[f64]) -> Vec<(u64, u32)> {
    let mut keyed: Vec<(u64, u32)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let b = v.to_bits();
            let key = if b >> 63 == 1 { !b } else { b | (1 << 63) };
            (key, i as u32)
        })
        .collect();
    keyed.sort_unstable();
    keyed
}

/// The median of unsorted data by selection, O(n).
pub fn median_by_selection(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let (below, m, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let m = *m;
    if n % 2 == 1 {
        m
    } else {
        (below.iter().copied().fold(f64::NEG_INFINITY, f64::max) + m) / 2.0
    }
}

/// The `k-1`th and `k`th smallest (0-based) of the absolute deviations
/// `|v - center|` of `sorted` (ascending) values, without building them: the deviations
/// grow away from `center` on both sides, so they come in order by a walk outward
/// from it, two pointers merging the two sides (O(k), no copy of the values). For
/// `k = 0` both are the smallest.
pub fn deviations_at(sorted: &[f64], center: f64, k: usize) -> (f64, f64) {
    if sorted.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let split = sorted.partition_point(|&v| v < center);
    let (mut left, mut right) = (split, split); // next: sorted[left - 1], sorted[right]
    let mut next = || {
        let l = (left > 0).then(|| (sorted[left - 1] - center).abs());
        let r = sorted.get(right).map(|&v| (v - center).abs());
        match (l, r) {
            (Some(l), Some(r)) if l.total_cmp(&r).is_lt() => {
                left -= 1;
                l
            }
            (_, Some(r)) => {
                right += 1;
                r
            }
            (Some(l), None) => {
                left -= 1;
                l
            }
            (None, None) => f64::NAN,
        }
    };
    let mut prev = next();
    let mut cur = prev;
    for _ in 0..k.min(sorted.len() - 1) {
        prev = cur;
        cur = next();
    }
    (prev, cur)
}

/// `values` when there are at most `k` of them; else `k` of their order statistics,
/// evenly spaced from the smallest to the largest (a sample's shape for a plot,
/// without every value).
pub fn spaced_order_statistics(values: &[f64], k: usize) -> Vec<f64> {
    if values.len() <= k || k < 2 {
        return values.to_vec();
    }
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let last = (sorted.len() - 1) as f64;
    (0..k)
        .map(|i| sorted[(i as f64 * last / (k - 1) as f64).round() as usize])
        .collect()
}

/// Linear-interpolation quantile (type 7, as R and numpy default) of sorted data.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = pos.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// Distribution-free confidence interval of the median: the order statistics
/// `x(j)`, `x(n+1-j)` with the largest `j` such that the coverage
/// `1 - 2 P(B <= j-1)`, B ~ Binomial(n, 1/2), is at least `confidence`.
pub fn median_ci_sorted(sorted: &[f64], confidence: f64) -> Option<[f64; 2]> {
    let n = sorted.len() as u64;
    if n == 0 {
        return None;
    }
    let alpha_half = (1.0 - confidence) / 2.0;
    // Largest j (1-based) with P(B <= j - 1) <= alpha/2.
    let (mut lo, mut hi) = (0u64, n / 2);
    // Invariant: j = lo is always acceptable (j = 0 means "no interval").
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if binomial_cdf(mid - 1, n, 0.5) <= alpha_half {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return None;
    }
    let j = lo as usize;
    Some([sorted[j - 1], sorted[sorted.len() - j]])
}

/// Half-width of the mean's confidence interval relative to the mean, for the
/// stopping rule. `None` below two values or at a zero mean.
pub fn relative_ci_half_width(n: u64, mean: f64, stddev: f64, confidence: f64) -> Option<f64> {
    if n < 2 || mean == 0.0 {
        return None;
    }
    let half = t_critical(confidence, (n - 1) as f64) * stddev / (n as f64).sqrt();
    Some(half / mean.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorted_keys_order_as_total_cmp(v in prop::collection::vec(-1e6f64..1e6, 0..200)) {
            let mut v = v;
            v.push(-0.0);
            v.push(0.0);
            let by_keys: Vec<f64> = sorted_keys(&v).iter().map(|k| v[k.1 as usize]).collect();
            let mut by_cmp = v.clone();
            by_cmp.sort_by(|a, b| a.total_cmp(b));
            prop_assert_eq!(
                by_keys.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                by_cmp.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn deviations_come_in_order_without_being_built() {
        let mut rng = crate::stats::rng::SplitMix64::new(9);
        for n in 1..60usize {
            let mut v: Vec<f64> = (0..n).map(|_| (rng.next_f64() * 8.0).floor()).collect();
            v.sort_by(f64::total_cmp);
            for center in [quantile_sorted(&v, 0.5), -1.0, 3.5, 9.0] {
                let mut dev: Vec<f64> = v.iter().map(|x| (x - center).abs()).collect();
                dev.sort_by(f64::total_cmp);
                for k in 0..n {
                    let want = (dev[k.saturating_sub(1)], dev[k]);
                    assert_eq!(deviations_at(&v, center, k), want, "{v:?} {center} {k}");
                }
            }
        }
    }

    #[test]
    fn known_values() {
        // numpy: np.mean, np.std(ddof=1), np.median, np.percentile(.., [25, 75])
        let s = summarize(&[4.0, 1.0, 3.0, 2.0, 10.0], 0.95).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.mean, 4.0);
        assert!((s.stddev - 3.5355339059327378).abs() < 1e-12);
        assert_eq!(s.median, 3.0);
        assert_eq!((s.q1, s.q3), (2.0, 4.0));
        assert_eq!(s.mad, 1.0);
        // scipy: t.ppf(0.975, 4) * np.std(x, ddof=1) / np.sqrt(5) = 4.389945165425414
        assert!((s.mean_ci[1] - (4.0 + 4.389945165425414)).abs() < 1e-9);
    }

    #[test]
    fn median_ci_order_statistics() {
        // n = 6 at 95%: P(B <= 0) = 1/64 = 0.0156 <= 0.025, P(B <= 1) = 7/64 > 0.025,
        // so j = 1: the interval is [min, max] (benchstat needs n >= 6 for this).
        let v: Vec<f64> = (1..=6).map(f64::from).collect();
        assert_eq!(median_ci_sorted(&v, 0.95), Some([1.0, 6.0]));
        // n = 5: P(B <= 0) = 1/32 = 0.03125 > 0.025, no interval at 95%.
        assert_eq!(median_ci_sorted(&v[..5], 0.95), None);
        // n = 100 at 95%: the classic interval is x(40)..x(61).
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(median_ci_sorted(&v, 0.95), Some([40.0, 61.0]));
    }

    #[test]
    fn empty_and_non_finite_give_none() {
        assert!(summarize(&[], 0.95).is_none());
        assert!(summarize(&[1.0, f64::NAN], 0.95).is_none());
        assert!(summarize(&[1.0, f64::INFINITY], 0.95).is_none());
    }

    proptest! {
        #[test]
        fn summary_is_ordered(values in proptest::collection::vec(0.001f64..1000.0, 1..200)) {
            let s = summarize(&values, 0.95).unwrap();
            prop_assert!(s.min <= s.q1 && s.q1 <= s.median && s.median <= s.q3 && s.q3 <= s.max);
            prop_assert!(s.min <= s.mean && s.mean <= s.max);
            prop_assert!(s.stddev >= 0.0 && s.mad >= 0.0);
            if let Some([lo, hi]) = s.median_ci {
                prop_assert!(lo <= s.median && s.median <= hi);
            }
        }
    }

    /// The n = 30 interval is x(10)..x(21), coverage 1 - 2 P(B <= 9) = 0.9572; over
    /// 2,000 samples (sd 0.45%) coverage must stay above 4 sd below that.
    #[test]
    fn median_ci_covers_true_median_as_promised() {
        let mut rng = crate::stats::rng::SplitMix64::new(2026);
        let mut covered = 0;
        for _ in 0..2000 {
            let mut v: Vec<f64> = (0..30).map(|_| rng.next_f64()).collect();
            v.sort_by(f64::total_cmp);
            if let Some([lo, hi]) = median_ci_sorted(&v, 0.95) {
                if lo <= 0.5 && 0.5 <= hi {
                    covered += 1;
                }
            }
        }
        let rate = covered as f64 / 2000.0;
        assert!(rate > 0.9572 - 4.0 * 0.0045, "coverage {rate}");
    }
}
