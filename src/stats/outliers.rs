//! Outlier scores: the modified z-score of Iglewicz and Hoaglin (1993),
//! `0.6745 (x - median) / MAD`. A score above 3.5 is an outlier; above 10 an
//! extreme one (hyperfine's threshold `(x - median)/MAD > 14.826` is the same
//! extreme level in unscaled form).

use super::summary::{deviations_at, quantile_sorted};

/// Scores above this are outliers (Iglewicz and Hoaglin's recommendation).
pub const OUTLIER: f64 = 3.5;
/// Scores above this are extreme (about ten standard deviations).
pub const EXTREME: f64 = 10.0;

/// Modified z-scores of `values`, in their order. When the MAD is zero (more
/// than half the values are equal) the mean absolute deviation scaled by
/// 1.2533 stands in, as Iglewicz and Hoaglin suggest; when that is zero too,
/// every score is 0.
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = quantile_sorted(&sorted, 0.5);
    let n = values.len();
    let mean_dev = values.iter().map(|v| (v - median).abs()).sum::<f64>() / n as f64;
    // quantile_sorted(sorted deviations, 0.5), the deviations never built.
    let pos = 0.5 * (n - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let (below, at) = deviations_at(&sorted, median, hi);
    let dev_lo = if lo == hi { at } else { below };
    let mad = if n == 1 {
        at
    } else {
        dev_lo + (at - dev_lo) * (pos - lo as f64)
    };
    drop(sorted);
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else if mean_dev > 0.0 {
        mean_dev * 1.253314
    } else {
        return vec![0.0; values.len()];
    };
    values.iter().map(|v| (v - median) / scale).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_the_far_value_only() {
        let v = [10.0, 10.1, 9.9, 10.2, 9.8, 10.0, 30.0];
        let z = modified_z_scores(&v);
        assert!(z[6] > EXTREME);
        assert!(z[..6].iter().all(|s| s.abs() < OUTLIER));
    }

    #[test]
    fn constant_sample_has_no_outliers() {
        assert!(modified_z_scores(&[1.0; 5]).iter().all(|&s| s == 0.0));
        assert!(modified_z_scores(&[]).is_empty());
    }
}
