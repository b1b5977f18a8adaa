//! Quantiles and tail probabilities of the distributions tardy's tests use.
//!
//! Thin, total wrappers over `statrs`: they never panic, and return `NaN` for
//! arguments outside the distribution's domain.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
use statrs::function::beta::beta_reg;

/// Two-sided critical value of Student's t: the `t` with P(|T| <= t) = `confidence`.
pub fn t_critical(confidence: f64, df: f64) -> f64 {
    let valid = confidence > 0.0 && confidence < 1.0 && df > 0.0;
    if !valid {
        return f64::NAN;
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(0.5 + confidence / 2.0),
        Err(_) => f64::NAN,
    }
}

/// Two-sided critical value of the standard normal: P(|Z| <= z) = `confidence`.
pub fn z_critical(confidence: f64) -> f64 {
    if !(confidence > 0.0 && confidence < 1.0) {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.inverse_cdf(0.5 + confidence / 2.0),
        Err(_) => f64::NAN,
    }
}

/// The standard normal's quantile: the z with P(Z <= z) = p, for p in (0, 1).
pub fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.inverse_cdf(p),
        Err(_) => f64::NAN,
    }
}

/// Two-sided p-value of a t statistic with `df` degrees of freedom.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    let valid_df = df > 0.0;
    if !t.is_finite() || !valid_df {
        return if t.is_infinite() { 0.0 } else { f64::NAN };
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => (2.0 * dist.sf(t.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// Two-sided p-value of a standard normal statistic.
pub fn z_two_sided_p(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    match Normal::new(0.0, 1.0) {
        Ok(n) => (2.0 * n.sf(z.abs())).min(1.0),
        Err(_) => f64::NAN,
    }
}

/// P(B <= k) for B ~ Binomial(n, p).
pub fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if k >= n {
        return 1.0;
    }
    // P(B <= k) = I_{1-p}(n - k, k + 1), the regularized incomplete beta.
    beta_reg((n - k) as f64, (k + 1) as f64, 1.0 - p)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values (scipy 1.x):
    //   python3 -c "from scipy.stats import t; print(t.ppf(0.975, 9), t.ppf(0.995, 30), 2*t.sf(2.5, 12))"
    //   2.262157162798205 2.7499956535672254 0.02791539957132524
    #[test]
    fn t_matches_scipy() {
        assert!((t_critical(0.95, 9.0) - 2.262157162798205).abs() < 1e-9);
        assert!((t_critical(0.99, 30.0) - 2.7499956535672254).abs() < 1e-9);
        assert!((t_two_sided_p(2.5, 12.0) - 0.02791539957132524).abs() < 1e-9);
    }

    #[test]
    fn bad_arguments_give_nan_not_panic() {
        assert!(t_critical(1.5, 3.0).is_nan());
        assert!(t_critical(0.95, 0.0).is_nan());
        assert!(t_two_sided_p(f64::NAN, 3.0).is_nan());
    }

    #[test]
    fn binomial_cdf_small_case() {
        // P(B <= 1), n = 4, p = 0.5 = (1 + 4) / 16
        assert!((binomial_cdf(1, 4, 0.5) - 5.0 / 16.0).abs() < 1e-12);
        assert_eq!(binomial_cdf(4, 4, 0.5), 1.0);
    }
}
