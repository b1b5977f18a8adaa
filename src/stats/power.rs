//! What it would take to know more: the smallest relative difference two
//! samples could have detected, and the runs per side that would detect a
//! given one. Both use the normal approximation on log-times (a relative
//! effect is a shift of log-times), two-sided at the given confidence.

use super::dist::z_critical;

/// Power assumed for the minimum detectable effect.
pub const POWER: f64 = 0.8;

fn log_var(x: &[f64]) -> Option<f64> {
    if x.len() < 2 || x.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let n = x.len() as f64;
    let mean = x.iter().map(|v| v.ln()).sum::<f64>() / n;
    Some(x.iter().map(|v| (v.ln() - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

fn z_sum(confidence: f64) -> f64 {
    z_critical(confidence) + z_critical(2.0 * POWER - 1.0)
}

/// The smallest relative difference (0.02 = 2%) these samples detect with
/// probability POWER at `confidence`. `None` for non-positive data.
pub fn min_detectable_effect(a: &[f64], b: &[f64], confidence: f64) -> Option<f64> {
    let (va, vb) = (log_var(a)?, log_var(b)?);
    let se = (va / a.len() as f64 + vb / b.len() as f64).sqrt();
    Some((z_sum(confidence) * se).exp() - 1.0)
}

/// Runs per side to detect a relative difference of `effect` with
/// probability POWER at `confidence`, with the spread these samples show.
pub fn runs_needed(a: &[f64], b: &[f64], confidence: f64, effect: f64) -> Option<u64> {
    if effect.is_nan() || effect <= 0.0 {
        return None;
    }
    let (va, vb) = (log_var(a)?, log_var(b)?);
    let n = z_sum(confidence).powi(2) * (va + vb) / (1.0 + effect).ln().powi(2);
    Some(n.ceil().max(2.0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_runs_detect_smaller_effects() {
        let a: Vec<f64> = (0..10).map(|i| 1.0 + 0.01 * (i % 5) as f64).collect();
        let b = a.clone();
        let big: Vec<f64> = a.iter().cycle().take(100).copied().collect();
        let m10 = min_detectable_effect(&a, &b, 0.95).unwrap();
        let m100 = min_detectable_effect(&big, &big, 0.95).unwrap();
        assert!(m100 < m10 / 3.0, "{m10} {m100}");
        // Consistency: with the runs suggested for the 10-run MDE, the MDE is about that.
        let n = runs_needed(&a, &b, 0.95, m10).unwrap();
        assert!((9..=12).contains(&n), "{n}");
    }
}
