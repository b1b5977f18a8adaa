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
    Some(super::summary::mean_var_of(x, f64::ln).1)
}

fn z_sum(confidence: f64) -> f64 {
    z_critical(confidence) + z_critical(2.0 * POWER - 1.0)
}

/// What these samples can detect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Power {
    /// The smallest relative difference (0.02 = 2%) detected with
    /// probability POWER at the confidence level.
    pub min_detectable_effect: f64,
    /// Runs per side to detect the target effect with probability POWER.
    pub runs_needed: Option<u64>,
}

/// Power of a comparison of `a` and `b` at `confidence`, with the spread
/// these samples show. `None` for non-positive data.
pub fn power(a: &[f64], b: &[f64], confidence: f64, target_effect: f64) -> Option<Power> {
    let (va, vb) = (log_var(a)?, log_var(b)?);
    let z = z_sum(confidence);
    let se = (va / a.len() as f64 + vb / b.len() as f64).sqrt();
    let runs_needed = (target_effect > 0.0).then(|| {
        let n = z.powi(2) * (va + vb) / (1.0 + target_effect).ln().powi(2);
        n.ceil().max(2.0) as u64
    });
    Some(Power {
        min_detectable_effect: (z * se).exp() - 1.0,
        runs_needed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_runs_detect_smaller_effects() {
        let a: Vec<f64> = (0..10).map(|i| 1.0 + 0.01 * (i % 5) as f64).collect();
        let b = a.clone();
        let big: Vec<f64> = a.iter().cycle().take(100).copied().collect();
        let m10 = power(&a, &b, 0.95, 0.01).unwrap().min_detectable_effect;
        let m100 = power(&big, &big, 0.95, 0.01).unwrap().min_detectable_effect;
        assert!(m100 < m10 / 3.0, "{m10} {m100}");
        // Consistency: with the runs suggested for the 10-run MDE, the MDE is about that.
        let n = power(&a, &b, 0.95, m10).unwrap().runs_needed.unwrap();
        assert!((9..=12).contains(&n), "{n}");
    }
}
