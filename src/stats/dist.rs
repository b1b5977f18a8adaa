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
    if df > LARGE_DF {
        // statrs inverts the incomplete beta function by iteration, which takes
        // minutes at millions of degrees of freedom; the Cornish-Fisher expansion
        // of t around z is exact to ~1e-15 there.
        let z = z_critical(confidence);
        let (z3, z5) = (z.powi(3), z.powi(5));
        return z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(0.5 + confidence / 2.0),
        Err(_) => f64::NAN,
    }
}

/// Above this many degrees of freedom, t's quantile comes from its expansion around
/// the normal's.
const LARGE_DF: f64 = 1e5;

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

#[cfg(test)]
mod large_df_tests {
    use super::*;

    #[test]
    fn t_quantiles_at_millions_of_degrees_of_freedom_equal_scipys() {
        // scipy 1.x: `scipy.stats.t.ppf(0.5 + c / 2, df)`. At 2e7 degrees of freedom
        // (a 178 MB hyperfine file) statrs' iteration took minutes.
        let known = [
            (0.8, 1e5, 1.2815600314493611),
            (0.95, 1e5, 1.9599877075346093),
            (0.99, 1e5, 2.5758784699083748),
            (0.999, 1e5, 3.2906240314119133),
            (0.8, 2e7, 1.2815516078738403),
            (0.95, 2e7, 1.9599641031536224),
            (0.99, 2e7, 2.5758295493763024),
            (0.999, 2e7, 3.290527217978524),
        ];
        for (conf, df, want) in known {
            let got = t_critical(conf, df * (1.0 + 1e-12));
            assert!((got - want).abs() < 1e-9, "{conf} {df}: {got} vs {want}");
        }
    }
}
