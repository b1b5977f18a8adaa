//! Two-sample t-tests: Student's (pooled variance, as ministat and
//! `scipy.stats.ttest_ind(equal_var=True)`) and Welch's (unequal variances,
//! `equal_var=False`). Both report the difference of means `b - a` with its
//! confidence interval.

use super::dist::{t_critical, t_two_sided_p};

#[derive(Debug, Clone, PartialEq)]
pub struct TTest {
    /// mean(b) - mean(a).
    pub diff: f64,
    /// Standard error of `diff`.
    pub se: f64,
    pub t: f64,
    pub df: f64,
    pub p_value: f64,
    /// Confidence interval of `diff`.
    pub ci: [f64; 2],
}

fn mean_var(x: &[f64]) -> (f64, f64) {
    super::summary::mean_var_of(x, |v| v)
}

fn finish(diff: f64, se: f64, df: f64, confidence: f64) -> TTest {
    let (t, p) = if se > 0.0 {
        let t = diff / se;
        (t, t_two_sided_p(t, df))
    } else if diff == 0.0 {
        (0.0, 1.0)
    } else {
        (diff.signum() * f64::INFINITY, 0.0)
    };
    let half = if se > 0.0 {
        t_critical(confidence, df) * se
    } else {
        0.0
    };
    TTest {
        diff,
        se,
        t,
        df,
        p_value: p,
        ci: [diff - half, diff + half],
    }
}

/// Student's t with pooled variance. `None` unless both samples have 2+ values.
pub fn student(a: &[f64], b: &[f64], confidence: f64) -> Option<TTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let df = na + nb - 2.0;
    let pooled = ((na - 1.0) * va + (nb - 1.0) * vb) / df;
    let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
    Some(finish(mb - ma, se, df, confidence))
}

/// Welch's t with Welch-Satterthwaite degrees of freedom.
pub fn welch(a: &[f64], b: &[f64], confidence: f64) -> Option<TTest> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    Some(welch_from(
        ma,
        va.sqrt(),
        a.len() as f64,
        mb,
        vb.sqrt(),
        b.len() as f64,
        confidence,
    ))
}

/// Welch's t from each side's mean, standard deviation and count (n >= 2):
/// what a harness that keeps only those three numbers allows.
pub fn welch_from(
    ma: f64,
    sd_a: f64,
    na: f64,
    mb: f64,
    sd_b: f64,
    nb: f64,
    confidence: f64,
) -> TTest {
    let (sa, sb) = (sd_a * sd_a / na, sd_b * sd_b / nb);
    let se = (sa + sb).sqrt();
    let df = if se > 0.0 {
        (sa + sb).powi(2) / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
    } else {
        na + nb - 2.0
    };
    finish(mb - ma, se, df, confidence)
}
