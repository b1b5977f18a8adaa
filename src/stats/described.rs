//! Comparing two benchmarks that a harness kept only as summaries: a centre,
//! and where the harness records them, the standard deviation and the number
//! of samples behind it (Catch2's mean and sd of its samples, vitest bench's
//! mean, sd and sample count, benchmark-ips's ips with its sd and samples).
//!
//! With a mean, an sd and n on both sides the test is Welch's t from those
//! three numbers: the same test [`super::ttest::welch`] runs on raw values,
//! so its p-value equals the one the samples would have given. Without them
//! (libtest's median and range, divan's table, a Bencher Metric Format
//! value) only the ratio of the centres is known: it is shown with no
//! verdict, and the reason; a spread is never invented.

use serde::{Deserialize, Serialize};

use super::compare::{CompareError, Estimate, Options, Verdict, verdict};
use super::dist::normal_quantile;
use super::ttest;

/// What the centre of a summary is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Centre {
    Mean,
    Median,
}

/// One benchmark as its harness summarised it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Described {
    pub centre: f64,
    pub kind: Centre,
    /// The standard deviation of the samples (not of the mean).
    pub sd: Option<f64>,
    /// How many samples the centre and sd summarise.
    pub n: Option<u64>,
    /// What the harness keeps in place of the samples, for the note that
    /// says why there is no verdict ("libtest's median and range of 50
    /// samples").
    pub kept: String,
}

impl Described {
    /// The summary of raw values (the other side of a comparison that has
    /// them): their mean, sd and count.
    pub fn of_values(values: &[f64]) -> Option<Described> {
        if values.len() < 2 {
            return None;
        }
        let (m, v) = super::summary::mean_var_of(values, |x| x);
        Some(Described {
            centre: m,
            kind: Centre::Mean,
            sd: Some(v.sqrt()),
            n: Some(values.len() as u64),
            kept: format!("{} samples", values.len()),
        })
    }

    /// The summary as a row shows it: the centre as mean and median, the
    /// sd, and the mean's interval when sd and n are known (quantiles the
    /// harness did not keep are the centre).
    pub fn summary(&self, confidence: f64) -> super::Summary {
        let n = self.n.unwrap_or(1).max(1) as usize;
        let sd = self.sd.unwrap_or(0.0);
        let half = match self.welch_ready() {
            Some(_) if n >= 2 => {
                super::dist::t_critical(confidence, (n - 1) as f64) * sd / (n as f64).sqrt()
            }
            _ => f64::NAN,
        };
        let c = self.centre;
        let ci = half.is_finite().then_some([c - half, c + half]);
        super::Summary {
            n,
            mean: c,
            stddev: sd,
            median: c,
            min: c,
            max: c,
            q1: c,
            q3: c,
            mad: 0.0,
            cv: if c != 0.0 { sd / c } else { 0.0 },
            confidence,
            mean_ci: ci.unwrap_or([c, c]),
            median_ci: ci,
        }
    }

    /// Mean, sd and n, when this summary has all three (n >= 2).
    fn welch_ready(&self) -> Option<(f64, f64, f64)> {
        match (self.kind, self.sd, self.n) {
            (Centre::Mean, Some(sd), Some(n)) if n >= 2 && sd.is_finite() && sd >= 0.0 => {
                Some((self.centre, sd, n as f64))
            }
            _ => None,
        }
    }
}

/// Compare two summaries: Welch's t from mean, sd and n when both sides
/// have them, else the ratio of the centres with no verdict.
pub fn compare(a: &Described, b: &Described, opts: &Options) -> Result<Estimate, CompareError> {
    if !(a.centre.is_finite() && b.centre.is_finite()) {
        return Err(CompareError::NonFinite);
    }
    if a.centre == 0.0 {
        return Err(CompareError::ZeroBaseline);
    }
    let n_of = |d: &Described| d.n.unwrap_or(1) as usize;
    let mut e = Estimate {
        n_baseline: n_of(a),
        n_candidate: n_of(b),
        center_baseline: a.centre,
        center_candidate: b.centre,
        center_kind: match (a.kind, b.kind) {
            (Centre::Mean, Centre::Mean) => "mean",
            (Centre::Median, Centre::Median) => "median",
            _ => "centre",
        }
        .into(),
        ratio: b.centre / a.centre,
        ci_low: None,
        ci_high: None,
        confidence: opts.confidence,
        p_value: 1.0,
        p_adjusted: 1.0,
        test: "none (summaries without a spread)".into(),
        verdict: Verdict::Inconclusive,
        min_detectable_effect: None,
        runs_needed: None,
        runs_for_any_verdict: None,
        target_effect: opts.target_effect,
        notes: Vec::new(),
    };
    let (Some((ma, sa, na)), Some((mb, sb, nb))) = (a.welch_ready(), b.welch_ready()) else {
        let mut missing: Vec<&str> = [a, b]
            .iter()
            .filter(|d| d.welch_ready().is_none())
            .map(|d| d.kept.as_str())
            .collect();
        missing.dedup();
        e.notes.push(format!(
            "no verdict: {}; a test needs each side's mean, sd and sample count, or the samples, so the ratio of the centres is shown alone (run the harness several times and give every file: each run's centre is then a sample)",
            missing.join("; ")
        ));
        return Ok(e);
    };
    let t = ttest::welch_from(ma, sa, na, mb, sb, nb, opts.confidence);
    e.ratio = 1.0 + t.diff / ma;
    e.ci_low = Some(1.0 + t.ci[0] / ma);
    e.ci_high = Some(1.0 + t.ci[1] / ma);
    e.p_value = t.p_value;
    e.p_adjusted = t.p_value;
    e.test = "welch-t (from each side's mean, sd and n)".into();
    // 80% power at this level, by the normal approximation.
    let z = normal_quantile(1.0 - (1.0 - opts.confidence) / 2.0) + normal_quantile(0.8);
    if ma > 0.0 && t.se > 0.0 {
        e.min_detectable_effect = Some(z * t.se / ma);
        let s2 = (sa * sa + sb * sb) / 2.0;
        let per_side = 2.0 * s2 * (z / (opts.target_effect * ma)).powi(2);
        e.runs_needed = Some(per_side.ceil().max(2.0) as u64);
    }
    let mut kept = vec![a.kept.as_str(), b.kept.as_str()];
    kept.dedup();
    e.notes.push(format!(
        "Welch's t from each side's mean, sd and n: {}",
        kept.join("; ")
    ));
    e.verdict = verdict(&e);
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(centre: f64, sd: Option<f64>, n: Option<u64>) -> Described {
        Described {
            centre,
            kind: Centre::Mean,
            sd,
            n,
            kept: "test".into(),
        }
    }

    #[test]
    fn welch_from_summaries_equals_welch_on_the_samples() {
        let a = [10.0, 11.0, 9.5, 10.5, 10.2, 9.8];
        let b = [12.0, 12.5, 11.8, 12.2, 12.9, 11.5, 12.1];
        let opts = Options {
            test: super::super::compare::TestChoice::Welch,
            ..Options::default()
        };
        let raw = super::super::compare::compare(&a, &b, &opts).unwrap();
        let s = compare(
            &Described::of_values(&a).unwrap(),
            &Described::of_values(&b).unwrap(),
            &opts,
        )
        .unwrap();
        assert!((raw.p_value - s.p_value).abs() < 1e-12);
        assert!((raw.ratio - s.ratio).abs() < 1e-12);
        assert!((raw.ci_low.unwrap() - s.ci_low.unwrap()).abs() < 1e-12);
        assert_eq!(s.verdict, Verdict::Slower);
    }

    #[test]
    fn without_a_spread_there_is_a_ratio_and_no_verdict() {
        let opts = Options::default();
        let e = compare(&d(100.0, None, Some(50)), &d(400.0, None, Some(50)), &opts).unwrap();
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert_eq!(e.ratio, 4.0);
        assert!(e.ci_low.is_none());
        assert!(e.notes[0].starts_with("no verdict"));
        assert!(!e.proven_slower());
    }

    #[test]
    fn a_plain_difference_is_proven_and_a_larger_one_no_less() {
        let opts = Options::default();
        let a = d(100.0, Some(5.0), Some(30));
        let mut last = 1.0;
        for k in [1.05, 1.1, 1.5, 2.0, 10.0] {
            let e = compare(&a, &d(100.0 * k, Some(5.0), Some(30)), &opts).unwrap();
            assert_eq!(e.verdict, Verdict::Slower, "x{k}");
            assert!(e.p_value <= last);
            last = e.p_value;
        }
    }

    proptest::proptest! {
        /// A larger shift, with the same spread and counts, is never less
        /// reported; a shift of 20 standard errors (past the target) is
        /// always reported.
        #[test]
        fn a_larger_summary_effect_is_never_less_reported(
            n in 2u64..500,
            sd in 0.01f64..50.0,
            small in 0.0f64..0.5,
            extra in 0.0f64..2.0,
        ) {
            let opts = Options::default();
            let a = d(100.0, Some(sd), Some(n));
            let p = |k: f64| compare(&a, &d(100.0 * (1.0 + k), Some(sd), Some(n)), &opts).unwrap();
            let (e1, e2) = (p(small), p(small + extra));
            proptest::prop_assert!(e2.p_value <= e1.p_value + 1e-15);
            let se = sd * (2.0 / n as f64).sqrt();
            // Plain: 20 standard errors, and past the 1% target.
            let plain = p((20.0 * se / 100.0).max(0.05));
            proptest::prop_assert_eq!(plain.verdict, Verdict::Slower);
        }
    }
}
