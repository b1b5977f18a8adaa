//! Trend over the run sequence: the Mann-Kendall test.
//!
//! Times that drift up or down as a session goes on (thermal throttling, a
//! filling cache, a noisy neighbour arriving) violate the assumption behind
//! every interval tardy prints. Mann-Kendall asks whether later runs tend to
//! be slower (or faster) than earlier ones without assuming a shape; the drift
//! is then sized as the change of the median from the first third to the last.

use super::dist::z_two_sided_p;
use super::summary::quantile_sorted;
use serde::{Deserialize, Serialize};

/// Mann-Kendall on more values than this works on block medians instead, to
/// keep the test O(n) in memory and bounded in time.
const MAX_DIRECT: usize = 2000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// Kendall's S statistic over the (possibly block-reduced) sequence.
    pub s: f64,
    /// Two-sided p-value (normal approximation with tie correction).
    pub p_value: f64,
    /// (median of the last third - median of the first third) / overall median.
    pub drift: f64,
}

/// Test `values` (in run order) for a monotonic trend. `None` below 8 values.
pub fn mann_kendall(values: &[f64]) -> Option<Trend> {
    if values.len() < 8 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let reduced;
    let seq: &[f64] = if values.len() > MAX_DIRECT {
        let block = values.len().div_ceil(MAX_DIRECT);
        reduced = values
            .chunks(block)
            .map(|c| {
                let mut c = c.to_vec();
                c.sort_by(f64::total_cmp);
                quantile_sorted(&c, 0.5)
            })
            .collect::<Vec<_>>();
        &reduced
    } else {
        values
    };
    let n = seq.len();
    let mut s: i64 = 0;
    for i in 0..n {
        for j in i + 1..n {
            s += match seq[j].total_cmp(&seq[i]) {
                std::cmp::Ordering::Greater => 1,
                std::cmp::Ordering::Less => -1,
                std::cmp::Ordering::Equal => 0,
            };
        }
    }
    // Variance with the tie correction.
    let mut sorted = seq.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        i = j + 1;
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    let z = if var > 0.0 {
        (s as f64 - (s.signum() as f64)) / var.sqrt()
    } else {
        0.0
    };
    let third = values.len() / 3;
    let med = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        quantile_sorted(&v, 0.5)
    };
    let overall = med(values);
    let drift = if overall != 0.0 {
        (med(&values[values.len() - third..]) - med(&values[..third])) / overall
    } else {
        0.0
    };
    Some(Trend {
        s: s as f64,
        p_value: z_two_sided_p(z),
        drift,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    // Reference: python3 -c "import pymannkendall as mk;
    //   r = mk.original_test([1, 3, 2, 4, 6, 5, 7, 9, 8, 8]); print(r.s, r.p)"
    // prints 36.0 0.001671728396484884 (pymannkendall 1.4).
    #[test]
    fn known_answer_with_ties() {
        let t = mann_kendall(&[1.0, 3.0, 2.0, 4.0, 6.0, 5.0, 7.0, 9.0, 8.0, 8.0]).unwrap();
        assert_eq!(t.s, 36.0);
        assert!(
            (t.p_value - 0.001671728396484884).abs() < 1e-9,
            "{}",
            t.p_value
        );
    }

    #[test]
    fn detects_a_drift_and_not_noise() {
        let mut rng = SplitMix64::new(3);
        let noise: Vec<f64> = (0..300).map(|_| 1.0 + 0.05 * rng.next_f64()).collect();
        let drifting: Vec<f64> = noise
            .iter()
            .enumerate()
            .map(|(i, v)| v * (1.0 + 0.1 * i as f64 / 300.0))
            .collect();
        assert!(mann_kendall(&noise).unwrap().p_value > 0.01);
        let t = mann_kendall(&drifting).unwrap();
        assert!(t.p_value < 1e-6);
        assert!(t.drift > 0.05 && t.drift < 0.1, "{}", t.drift);
    }

    #[test]
    fn long_sequences_use_blocks() {
        let v: Vec<f64> = (0..10_000).map(|i| 1.0 + i as f64 * 1e-5).collect();
        let t = mann_kendall(&v).unwrap();
        assert!(t.p_value < 1e-6);
    }
}
