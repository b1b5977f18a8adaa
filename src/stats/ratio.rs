//! How much slower is B than A? The ratio of geometric means with a Welch
//! t-interval on log-times.
//!
//! Timings are positive and right-skewed, and slowdowns are multiplicative, so
//! tardy compares logarithms: the difference of mean log-times is the log of
//! the ratio of geometric means, and Welch's t (unequal variances) gives its
//! confidence interval. It is the `log-welch` test of [`super::compare`].

use serde::{Deserialize, Serialize};

use super::dist::{t_critical, t_two_sided_p};

/// Candidate time / reference time, with its confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatioEstimate {
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    pub p_value: f64,
    /// The test that produced the interval, e.g. `welch-log-t`.
    pub test: String,
    pub n_reference: usize,
    pub n_candidate: usize,
}

/// Why two samples could not be compared.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RatioError {
    #[error("needs at least 2 values per side (have {reference} and {candidate})")]
    TooFew { reference: usize, candidate: usize },
    #[error("times must be positive and finite to compare ratios")]
    NonPositive,
}

/// Welch's t on log-times: ratio of geometric means, candidate / reference.
pub fn ratio_of_geomeans(
    reference: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Result<RatioEstimate, RatioError> {
    if reference.len() < 2 || candidate.len() < 2 {
        return Err(RatioError::TooFew {
            reference: reference.len(),
            candidate: candidate.len(),
        });
    }
    if reference
        .iter()
        .chain(candidate)
        .any(|v| !(v.is_finite() && *v > 0.0))
    {
        return Err(RatioError::NonPositive);
    }
    let (ma, va) = log_mean_var(reference);
    let (mb, vb) = log_mean_var(candidate);
    let (na, nb) = (reference.len() as f64, candidate.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se = (sa + sb).sqrt();
    let diff = mb - ma;
    let (t, df) = if se > 0.0 {
        // Welch-Satterthwaite degrees of freedom.
        let df = (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
        (diff / se, df)
    } else {
        // Both samples constant: the difference is exact.
        (if diff == 0.0 { 0.0 } else { f64::INFINITY }, na + nb - 2.0)
    };
    let half = if se > 0.0 {
        t_critical(confidence, df) * se
    } else {
        0.0
    };
    let (ci_low, ci_high) = ((diff - half).exp(), (diff + half).exp());
    let p_value = if se > 0.0 {
        t_two_sided_p(t, df)
    } else if diff == 0.0 {
        1.0
    } else {
        0.0
    };
    Ok(RatioEstimate {
        ratio: diff.exp(),
        ci_low,
        ci_high,
        confidence,
        p_value,
        test: "welch-log-t".to_string(),
        n_reference: reference.len(),
        n_candidate: candidate.len(),
    })
}

fn log_mean_var(values: &[f64]) -> (f64, f64) {
    super::summary::mean_var_of(values, f64::ln)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;
    use proptest::prelude::*;

    // Reference computed with scipy 1.x (output: 0.0044146155511760625 1.2009236777552743
    // then 1.07901206592031 1.3366094090552725):
    //   import numpy as np; from scipy import stats
    //   a = np.log([1.0, 1.1, 0.9, 1.05, 0.95]); b = np.log([1.2, 1.3, 1.1, 1.25, 1.15])
    //   r = stats.ttest_ind(b, a, equal_var=False); print(r.pvalue, np.exp(b.mean() - a.mean()))
    //   ci = r.confidence_interval(0.95); print(np.exp(ci.low), np.exp(ci.high))
    #[test]
    fn matches_scipy_welch_on_logs() {
        let a = [1.0, 1.1, 0.9, 1.05, 0.95];
        let b = [1.2, 1.3, 1.1, 1.25, 1.15];
        let r = ratio_of_geomeans(&a, &b, 0.95).unwrap();
        assert!((r.ratio - 1.2009236777552743).abs() < 1e-9, "{}", r.ratio);
        assert!(
            (r.p_value - 0.0044146155511760625).abs() < 1e-9,
            "{}",
            r.p_value
        );
        assert!((r.ci_low - 1.07901206592031).abs() < 1e-9, "{}", r.ci_low);
        assert!(
            (r.ci_high - 1.3366094090552725).abs() < 1e-9,
            "{}",
            r.ci_high
        );
        assert!(r.ci_low > 1.0);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            ratio_of_geomeans(&[1.0], &[1.0, 2.0], 0.95),
            Err(RatioError::TooFew { .. })
        ));
        assert_eq!(
            ratio_of_geomeans(&[1.0, 0.0], &[1.0, 2.0], 0.95),
            Err(RatioError::NonPositive)
        );
    }

    #[test]
    fn constant_samples_are_exact() {
        let r = ratio_of_geomeans(&[2.0, 2.0], &[3.0, 3.0], 0.95).unwrap();
        assert!(r.ci_low > 1.0 && r.p_value == 0.0);
        assert!((r.ratio - 1.5).abs() < 1e-12);
        let r = ratio_of_geomeans(&[2.0, 2.0], &[2.0, 2.0], 0.95).unwrap();
        assert!(r.ci_low <= 1.0 && r.ci_high >= 1.0 && r.p_value == 1.0);
    }

    fn lognormal(rng: &mut SplitMix64, median: f64, sigma: f64) -> f64 {
        // Box-Muller
        let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        median * (sigma * z).exp()
    }

    #[test]
    fn false_alarm_rate_is_near_nominal() {
        // A/A: 2,000 pairs of samples from one distribution; at 95% about 5%
        // must be called different (binomial sd = 0.49%: accept 3.5%..6.5%).
        let mut rng = SplitMix64::new(42);
        let mut alarms = 0;
        for _ in 0..2000 {
            let a: Vec<f64> = (0..20).map(|_| lognormal(&mut rng, 1.0, 0.05)).collect();
            let b: Vec<f64> = (0..20).map(|_| lognormal(&mut rng, 1.0, 0.05)).collect();
            let r = ratio_of_geomeans(&a, &b, 0.95).unwrap();
            if r.ci_low > 1.0 || r.ci_high < 1.0 {
                alarms += 1;
            }
        }
        let rate = alarms as f64 / 2000.0;
        assert!((0.035..=0.065).contains(&rate), "false alarm rate {rate}");
    }

    proptest! {
        #[test]
        fn interval_contains_estimate_and_is_scale_free(
            a in proptest::collection::vec(0.5f64..2.0, 2..40),
            b in proptest::collection::vec(0.5f64..2.0, 2..40),
            scale in 0.001f64..1000.0,
        ) {
            let r = ratio_of_geomeans(&a, &b, 0.95).unwrap();
            prop_assert!(r.ci_low <= r.ratio && r.ratio <= r.ci_high);
            let a2: Vec<f64> = a.iter().map(|v| v * scale).collect();
            let b2: Vec<f64> = b.iter().map(|v| v * scale).collect();
            let r2 = ratio_of_geomeans(&a2, &b2, 0.95).unwrap();
            prop_assert!((r.ratio - r2.ratio).abs() < 1e-9 * r.ratio);
        }

        #[test]
        fn swapping_sides_inverts_the_ratio(
            a in proptest::collection::vec(0.5f64..2.0, 2..40),
            b in proptest::collection::vec(0.5f64..2.0, 2..40),
        ) {
            let ab = ratio_of_geomeans(&a, &b, 0.95).unwrap();
            let ba = ratio_of_geomeans(&b, &a, 0.95).unwrap();
            prop_assert!((ab.ratio * ba.ratio - 1.0).abs() < 1e-9);
            prop_assert!((ab.p_value - ba.p_value).abs() < 1e-9);
        }
    }
}
