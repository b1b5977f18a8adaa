//! The Hodges-Lehmann shift estimate and its distribution-free confidence
//! interval (Moses 1965; Bauer 1972): the median of all pairwise differences
//! `b_j - a_i`, and the order statistics of those differences cut at the
//! Mann-Whitney U critical value, so the interval excludes 0 exactly when
//! the U test rejects (without ties).

use super::dist::z_critical;
use super::rng::SplitMix64;
use super::utest::{EXACT_LIMIT, u_counts};

/// Pairwise differences beyond this count are estimated from this many
/// random pairs (seeded), keeping time and memory bounded.
pub const MAX_PAIRS: usize = 2_000_000;

#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Median of b_j - a_i.
    pub estimate: f64,
    /// `None` when the samples are too small for an interval at this confidence.
    pub ci: Option<[f64; 2]>,
    /// True when the differences were sampled (n·m > MAX_PAIRS).
    pub sampled: bool,
}

/// The largest k with P(U <= k - 1) <= alpha/2 (0 if none).
fn critical_k(n1: usize, n2: usize, confidence: f64) -> usize {
    let alpha_half = (1.0 - confidence) / 2.0;
    if n1 <= EXACT_LIMIT && n2 <= EXACT_LIMIT {
        let counts = u_counts(n1, n2);
        let total: f64 = counts.iter().sum();
        let mut cum = 0.0;
        let mut k = 0;
        for c in counts.iter() {
            cum += c / total;
            if cum <= alpha_half + 1e-12 {
                k += 1;
            } else {
                break;
            }
        }
        k
    } else {
        let (f1, f2) = (n1 as f64, n2 as f64);
        let z = z_critical(confidence);
        let k = f1 * f2 / 2.0 - z * (f1 * f2 * (f1 + f2 + 1.0) / 12.0).sqrt();
        k.floor().max(0.0) as usize
    }
}

/// Hodges-Lehmann shift of `b` relative to `a` with its confidence interval.
pub fn hodges_lehmann(a: &[f64], b: &[f64], confidence: f64, seed: u64) -> Option<Shift> {
    hodges_lehmann_of(a, b, |v| v, confidence, seed)
}

/// [`hodges_lehmann`] of `f` of each value (`f64::ln` for a ratio), computing `f`
/// only for the values paired, so large samples are never copied whole.
pub fn hodges_lehmann_of(
    a: &[f64],
    b: &[f64],
    f: impl Fn(f64) -> f64,
    confidence: f64,
    seed: u64,
) -> Option<Shift> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let total = a.len() * b.len();
    let sampled = total > MAX_PAIRS;
    let mut diffs: Vec<f64> = if sampled {
        let mut rng = SplitMix64::new(seed);
        (0..MAX_PAIRS)
            .map(|_| {
                f(b[rng.below(b.len() as u64) as usize]) - f(a[rng.below(a.len() as u64) as usize])
            })
            .collect()
    } else {
        let fa: Vec<f64> = a.iter().map(|&x| f(x)).collect();
        let mut d = Vec::with_capacity(total);
        for &y in b {
            let fy = f(y);
            for &x in &fa {
                d.push(fy - x);
            }
        }
        d
    };
    // Only a few order statistics are needed: select them (O(m)), do not sort.
    let m = diffs.len();
    let mut nth = |k: usize| *diffs.select_nth_unstable_by(k, f64::total_cmp).1;
    let estimate = if m % 2 == 1 {
        nth(m / 2)
    } else {
        (nth(m / 2 - 1) + nth(m / 2)) / 2.0
    };
    let k = critical_k(a.len(), b.len(), confidence);
    let ci = (k >= 1).then(|| {
        // Rescale the rank when the differences were sampled.
        let lo = ((k as f64 / total as f64) * m as f64).ceil().max(1.0) as usize;
        let hi = m + 1 - lo;
        [nth(lo - 1), nth(hi - 1)]
    });
    Some(Shift {
        estimate,
        ci,
        sampled,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::utest::{Method, mann_whitney};

    #[test]
    fn known_shift() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let b: Vec<f64> = a.iter().map(|v| v + 10.0).collect();
        let s = hodges_lehmann(&a, &b, 0.95, 1).unwrap();
        assert_eq!(s.estimate, 10.0);
        let [lo, hi] = s.ci.unwrap();
        assert!(lo < 10.0 && hi > 10.0 && lo > 0.0);
    }

    #[test]
    fn interval_agrees_with_the_u_test() {
        // Without ties the interval excludes 0 exactly when the exact U test rejects.
        let mut rng = crate::stats::rng::SplitMix64::new(5);
        for _ in 0..300 {
            let shift = rng.next_f64() * 0.8;
            let a: Vec<f64> = (0..9).map(|_| rng.next_f64()).collect();
            let b: Vec<f64> = (0..11).map(|_| rng.next_f64() + shift).collect();
            let s = hodges_lehmann(&a, &b, 0.95, 1).unwrap();
            let [lo, hi] = s.ci.unwrap();
            let u = mann_whitney(&a, &b, Some(Method::Exact)).unwrap();
            assert_eq!(
                lo > 0.0 || hi < 0.0,
                u.p_value < 0.05,
                "ci [{lo}, {hi}] p {}",
                u.p_value
            );
        }
    }

    #[test]
    fn too_small_for_an_interval() {
        // 2 vs 2: the smallest two-sided p is 1/3, no 95% interval exists.
        let s = hodges_lehmann(&[1.0, 2.0], &[3.0, 4.0], 0.95, 1).unwrap();
        assert!(s.ci.is_none());
    }
}
