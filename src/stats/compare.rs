//! The comparison engine: is the candidate slower than the baseline, by how
//! much, with what certainty, and what would it take to know more?
//!
//! One entry point, [`compare`], chooses a test ([`TestChoice`]), computes the
//! ratio candidate / baseline with its confidence interval and a p-value,
//! applies the sample-size guards, and adds the minimum detectable effect
//! and the runs needed. [`adjust`] then applies multiple-comparison control
//! across a family of comparisons and re-derives the verdicts.

use serde::{Deserialize, Serialize};

use super::{bootstrap, multiple, power, ratio, shift, ttest, utest};

/// Which test decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestChoice {
    /// Mann-Whitney U with the Hodges-Lehmann ratio (robust; the default).
    Auto,
    /// Student's t with pooled variance (ministat's).
    Student,
    /// Welch's t on the raw values.
    Welch,
    /// Welch's t on log-times: ratio of geometric means.
    LogWelch,
    /// Mann-Whitney U with the Hodges-Lehmann ratio.
    U,
    /// Percentile bootstrap of the ratio of medians.
    Bootstrap,
}

impl std::str::FromStr for TestChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "auto" => TestChoice::Auto,
            "student" | "t" => TestChoice::Student,
            "welch" => TestChoice::Welch,
            "log-welch" => TestChoice::LogWelch,
            "u" | "mann-whitney" | "utest" => TestChoice::U,
            "bootstrap" => TestChoice::Bootstrap,
            other => {
                return Err(format!(
                    "unknown test '{other}': use auto, student, welch, log-welch, u or bootstrap"
                ));
            }
        })
    }
}

/// The plain-words outcome of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Significantly slower (larger).
    Slower,
    /// Significantly faster (smaller).
    Faster,
    /// No significant difference, and the interval lies within
    /// ±target effect: equivalent for practical purposes.
    Same,
    /// No difference proven, and none of the target size ruled out either.
    Inconclusive,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Confidence level in (0, 1).
    pub confidence: f64,
    pub test: TestChoice,
    /// The relative difference worth detecting (0.01 = 1%).
    pub target_effect: f64,
    /// The same for counts (instructions, cycles), which vary about
    /// ±0.1% where times vary ±3% (rustc's performance tracking): a
    /// difference in them is `same` only within this (0.001 = 0.1%).
    pub count_target_effect: f64,
    pub seed: u64,
    pub resamples: usize,
}

impl Options {
    /// These options with the counts' target ([`Options::count_target_effect`]).
    pub fn for_counts(&self) -> Options {
        Options {
            target_effect: self.count_target_effect,
            ..self.clone()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            confidence: 0.95,
            test: TestChoice::Auto,
            target_effect: 0.01,
            count_target_effect: 0.001,
            seed: 1,
            resamples: 10_000,
        }
    }
}

/// A candidate against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub n_baseline: usize,
    pub n_candidate: usize,
    /// The centre of each side: the median (U, bootstrap), mean (t tests) or
    /// geometric mean (log-welch); see `center_kind`.
    pub center_baseline: f64,
    pub center_candidate: f64,
    pub center_kind: String,
    /// candidate / baseline.
    pub ratio: f64,
    /// Confidence interval of the ratio; `None` when the samples are too
    /// small for one at this confidence.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub confidence: f64,
    /// The test's two-sided p-value.
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_value: f64,
    /// After multiple-comparison control (equal to `p_value` for one comparison).
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_adjusted: f64,
    /// e.g. `mann-whitney-u (exact)`, `student-t`, `welch-log-t`.
    pub test: String,
    pub verdict: Verdict,
    /// The smallest relative difference these samples detect with 80% power.
    pub min_detectable_effect: Option<f64>,
    /// Runs per side to detect `target_effect` with 80% power.
    pub runs_needed: Option<u64>,
    /// With fewer runs per side than this the test can never reach the
    /// confidence (a rank test on 2+2 runs: its smallest p-value is 0.33).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_for_any_verdict: Option<u64>,
    pub target_effect: f64,
    /// Guards and caveats in plain words.
    pub notes: Vec<String>,
}

impl Estimate {
    /// The candidate is larger (slower), and that is proven: significant
    /// after the family's control, or an exact difference. It does not ask
    /// whether the difference exceeds the target (the verdict does): a gate
    /// with a threshold of its own (`--fail-if-slower 0.5`, bisect's
    /// `--threshold`) asks this and compares the interval with its
    /// threshold.
    pub fn proven_slower(&self) -> bool {
        self.ratio > 1.0 && self.proven()
    }

    /// The candidate is smaller (faster), and that is proven.
    pub fn proven_faster(&self) -> bool {
        self.ratio < 1.0 && self.proven()
    }

    fn proven(&self) -> bool {
        let exact = self.p_adjusted.is_nan()
            && self.ci_low == Some(self.ratio)
            && self.ci_high == Some(self.ratio);
        exact || self.p_adjusted < 1.0 - self.confidence
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("needs at least {need} values per side (have {baseline} and {candidate})")]
    TooFew {
        need: usize,
        baseline: usize,
        candidate: usize,
    },
    #[error("a value is not a finite number")]
    NonFinite,
    #[error("the baseline's centre is zero, so a ratio is undefined")]
    ZeroBaseline,
}

fn median(x: &[f64]) -> f64 {
    super::summary::median_by_selection(&mut x.to_vec())
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Compare `candidate` with `baseline`.
pub fn compare(
    baseline: &[f64],
    candidate: &[f64],
    opts: &Options,
) -> Result<Estimate, CompareError> {
    let (na, nb) = (baseline.len(), candidate.len());
    if na < 2 || nb < 2 {
        return Err(CompareError::TooFew {
            need: 2,
            baseline: na,
            candidate: nb,
        });
    }
    if baseline.iter().chain(candidate).any(|v| !v.is_finite()) {
        return Err(CompareError::NonFinite);
    }
    let alpha = 1.0 - opts.confidence;
    let first = baseline[0];
    if baseline.iter().chain(candidate).all(|&v| v == first) {
        // Nothing varies: equal for certain (benchstat: "all samples are equal").
        return Ok(Estimate {
            n_baseline: na,
            n_candidate: nb,
            center_baseline: first,
            center_candidate: first,
            center_kind: "median".into(),
            ratio: 1.0,
            ci_low: Some(1.0),
            ci_high: Some(1.0),
            confidence: opts.confidence,
            p_value: 1.0,
            p_adjusted: 1.0,
            test: "none (all samples are equal)".into(),
            verdict: Verdict::Same,
            min_detectable_effect: None,
            runs_needed: None,
            runs_for_any_verdict: None,
            target_effect: opts.target_effect,
            notes: vec!["all samples are equal".into()],
        });
    }
    let positive = baseline.iter().chain(candidate).all(|&v| v > 0.0);
    let mut notes = Vec::new();
    // Runs per side below which the test can never reach the level.
    let mut unreachable: Option<u64> = None;
    let test = match opts.test {
        TestChoice::Auto => TestChoice::U,
        t => t,
    };
    let (center_kind, ca, cb, ratio, ci, p, name) = match test {
        TestChoice::Student | TestChoice::Welch => {
            let t = if test == TestChoice::Student {
                ttest::student(baseline, candidate, opts.confidence)
            } else {
                ttest::welch(baseline, candidate, opts.confidence)
            }
            .ok_or(CompareError::TooFew {
                need: 2,
                baseline: na,
                candidate: nb,
            })?;
            let ma = mean(baseline);
            if ma == 0.0 {
                return Err(CompareError::ZeroBaseline);
            }
            let name = if test == TestChoice::Student {
                "student-t"
            } else {
                "welch-t"
            };
            (
                "mean",
                ma,
                mean(candidate),
                1.0 + t.diff / ma,
                Some([1.0 + t.ci[0] / ma, 1.0 + t.ci[1] / ma]),
                t.p_value,
                name.to_string(),
            )
        }
        TestChoice::LogWelch => {
            let r = ratio::ratio_of_geomeans(baseline, candidate, opts.confidence)
                .map_err(|_| CompareError::ZeroBaseline)?;
            let ga = (baseline.iter().map(|v| v.ln()).sum::<f64>() / na as f64).exp();
            (
                "geomean",
                ga,
                ga * r.ratio,
                r.ratio,
                Some([r.ci_low, r.ci_high]),
                r.p_value,
                r.test,
            )
        }
        TestChoice::Bootstrap => {
            let b = bootstrap::ratio(
                baseline,
                candidate,
                bootstrap::Center::Median,
                opts.confidence,
                opts.resamples,
                opts.seed,
            )
            .ok_or(CompareError::ZeroBaseline)?;
            (
                "median",
                median(baseline),
                median(candidate),
                b.ratio,
                Some(b.ci),
                b.p_value,
                format!("bootstrap-median ({} resamples)", b.resamples),
            )
        }
        TestChoice::U | TestChoice::Auto => {
            let u =
                utest::mann_whitney(baseline, candidate, None).ok_or(CompareError::NonFinite)?;
            let (ma, mb) = (median(baseline), median(candidate));
            if ma == 0.0 {
                return Err(CompareError::ZeroBaseline);
            }
            // The shift of log-times is a ratio; without positive data, a shift relative to the baseline median.
            let (ratio, ci, sampled) = if positive {
                let s = shift::hodges_lehmann_of(
                    baseline,
                    candidate,
                    f64::ln,
                    opts.confidence,
                    opts.seed,
                )
                .ok_or(CompareError::NonFinite)?;
                (
                    s.estimate.exp(),
                    s.ci.map(|[l, h]| [l.exp(), h.exp()]),
                    s.sampled,
                )
            } else {
                let s = shift::hodges_lehmann(baseline, candidate, opts.confidence, opts.seed)
                    .ok_or(CompareError::NonFinite)?;
                (
                    1.0 + s.estimate / ma,
                    s.ci.map(|[l, h]| [1.0 + l / ma, 1.0 + h / ma]),
                    s.sampled,
                )
            };
            if sampled {
                notes.push(format!(
                    "the Hodges-Lehmann ratio was estimated from {} random pairs of the {} pairs",
                    shift::MAX_PAIRS,
                    na * nb
                ));
            }
            let method = match u.method {
                utest::Method::Exact => "exact",
                utest::Method::Asymptotic => "normal approximation",
            };
            let min_p = utest::min_p(na, nb);
            if min_p >= alpha {
                let need = (2..=50).find(|&k| utest::min_p(k, k) < alpha).unwrap_or(50);
                unreachable = Some(need as u64);
                notes.push(format!(
                    "with {na}+{nb} values the U test can never reach p < {alpha:.3} (smallest possible p = {min_p:.3}); need >= {need} per side"
                ));
            }
            (
                "median",
                ma,
                mb,
                ratio,
                ci,
                u.p_value,
                format!("mann-whitney-u ({method})"),
            )
        }
    };
    if ci.is_none() {
        notes.push(format!(
            "too few values for a {:.0}% confidence interval of the ratio",
            opts.confidence * 100.0
        ));
    }
    let power = if positive {
        power::power(baseline, candidate, opts.confidence, opts.target_effect)
    } else {
        None
    };
    let mut e = Estimate {
        n_baseline: na,
        n_candidate: nb,
        center_baseline: ca,
        center_candidate: cb,
        center_kind: center_kind.to_string(),
        ratio,
        ci_low: ci.map(|c| c[0]),
        ci_high: ci.map(|c| c[1]),
        confidence: opts.confidence,
        p_value: p,
        p_adjusted: p,
        test: name,
        verdict: Verdict::Inconclusive,
        // No change is detectable when the test cannot reach the level at all
        // (2+2 runs and a rank test): say how many runs it takes instead.
        min_detectable_effect: power
            .filter(|_| unreachable.is_none())
            .map(|p| p.min_detectable_effect),
        runs_needed: match (power.and_then(|p| p.runs_needed), unreachable) {
            (Some(n), Some(k)) => Some(n.max(k)),
            (n, k) => n.or(k),
        },
        runs_for_any_verdict: unreachable,
        target_effect: opts.target_effect,
        notes,
    };
    e.verdict = verdict(&e);
    Ok(e)
}

/// The verdict from the interval, the (adjusted) p-value and the
/// direction, in this order: `same` when the whole interval lies within
/// ±target (a difference proven but smaller than the target is `same`; the
/// row still shows it), else `slower` or `faster` when the difference is
/// significant, else `inconclusive`.
pub fn verdict(e: &Estimate) -> Verdict {
    let alpha = 1.0 - e.confidence;
    let te = e.target_effect;
    let within = matches!(
        (e.ci_low, e.ci_high),
        (Some(lo), Some(hi)) if lo >= 1.0 / (1.0 + te) && hi <= 1.0 + te
    );
    if within {
        Verdict::Same
    } else if e.p_adjusted < alpha && e.ratio > 1.0 {
        Verdict::Slower
    } else if e.p_adjusted < alpha && e.ratio < 1.0 {
        Verdict::Faster
    } else {
        Verdict::Inconclusive
    }
}

/// The verdict of an exact difference (counts, a unit declared exact,
/// every run identical on each side): `same` within ±target, else the
/// direction.
pub fn exact_verdict(baseline: f64, candidate: f64, target_effect: f64) -> Verdict {
    let ratio = if baseline != 0.0 {
        candidate / baseline
    } else if candidate == baseline {
        1.0
    } else {
        f64::INFINITY * (candidate - baseline).signum()
    };
    if ratio >= 1.0 / (1.0 + target_effect) && ratio <= 1.0 + target_effect {
        Verdict::Same
    } else if candidate > baseline {
        Verdict::Slower
    } else {
        Verdict::Faster
    }
}

/// How a family of comparisons is controlled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Correction {
    /// No control (one comparison).
    None,
    /// Holm: family-wise error rate.
    Holm,
    /// Benjamini-Hochberg: false discovery rate.
    BenjaminiHochberg,
}

impl std::str::FromStr for Correction {
    type Err = String;
    /// `holm`, `bh` (also `fdr`, `benjamini-hochberg`) or `none`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bh" | "fdr" | "benjamini-hochberg" => Ok(Correction::BenjaminiHochberg),
            "holm" => Ok(Correction::Holm),
            "none" => Ok(Correction::None),
            other => Err(format!(
                "--correction takes holm, bh or none, not '{other}'"
            )),
        }
    }
}

/// Adjust the p-values of a family and re-derive each verdict.
pub fn adjust(estimates: &mut [&mut Estimate], correction: Correction) {
    let p: Vec<f64> = estimates.iter().map(|e| e.p_value).collect();
    let adjusted = match correction {
        Correction::None => p,
        Correction::Holm => multiple::holm(&p),
        Correction::BenjaminiHochberg => multiple::benjamini_hochberg(&p),
    };
    for (e, q) in estimates.iter_mut().zip(adjusted) {
        e.p_adjusted = q;
        e.verdict = verdict(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn lognormal(rng: &mut SplitMix64, median: f64, sigma: f64) -> f64 {
        let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
        median * (sigma * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()).exp()
    }

    fn sample(rng: &mut SplitMix64, n: usize, median: f64) -> Vec<f64> {
        (0..n).map(|_| lognormal(rng, median, 0.05)).collect()
    }

    /// A/A false-alarm rate over 2,000 pairs at 95%: binomial sd is 0.49%,
    /// so 3.5%..6.5% is about three standard deviations.
    #[test]
    fn false_alarm_rate_of_each_test_is_near_nominal() {
        for test in [
            TestChoice::Student,
            TestChoice::Welch,
            TestChoice::LogWelch,
            TestChoice::U,
        ] {
            let mut rng = SplitMix64::new(11);
            let opts = Options {
                test,
                ..Options::default()
            };
            let alarms = (0..2000)
                .filter(|_| {
                    let (a, b) = (sample(&mut rng, 20, 1.0), sample(&mut rng, 20, 1.0));
                    matches!(
                        compare(&a, &b, &opts).unwrap().verdict,
                        Verdict::Slower | Verdict::Faster
                    )
                })
                .count();
            let rate = alarms as f64 / 2000.0;
            // The U test is discrete (conservative), hence a lower bound of 3%.
            assert!(
                (0.03..=0.065).contains(&rate),
                "{test:?}: false alarm rate {rate}"
            );
        }
    }

    #[test]
    fn bootstrap_false_alarm_rate_is_near_nominal() {
        // Fewer pairs (bootstrap is costly): 400 pairs, binomial sd 1.1%.
        let mut rng = SplitMix64::new(12);
        let opts = Options {
            test: TestChoice::Bootstrap,
            resamples: 1000,
            ..Options::default()
        };
        let alarms = (0..400)
            .filter(|_| {
                let (a, b) = (sample(&mut rng, 30, 1.0), sample(&mut rng, 30, 1.0));
                matches!(
                    compare(&a, &b, &opts).unwrap().verdict,
                    Verdict::Slower | Verdict::Faster
                )
            })
            .count();
        let rate = alarms as f64 / 400.0;
        assert!(
            (0.02..=0.10).contains(&rate),
            "bootstrap false alarm rate {rate}"
        );
    }

    #[test]
    fn power_rises_with_n() {
        for test in [TestChoice::Welch, TestChoice::U, TestChoice::LogWelch] {
            let opts = Options {
                test,
                ..Options::default()
            };
            let mut rng = SplitMix64::new(13);
            let mut detected = Vec::new();
            for n in [5, 10, 20, 40] {
                let hits = (0..300)
                    .filter(|_| {
                        let (a, b) = (sample(&mut rng, n, 1.0), sample(&mut rng, n, 1.03));
                        compare(&a, &b, &opts).unwrap().verdict == Verdict::Slower
                    })
                    .count();
                detected.push(hits);
            }
            assert!(
                detected.windows(2).all(|w| w[1] > w[0]),
                "{test:?}: {detected:?}"
            );
            assert!(detected[3] > 200, "{test:?}: {detected:?}");
        }
    }

    #[test]
    fn guards_speak() {
        let e = compare(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0], &Options::default()).unwrap();
        assert_eq!(e.verdict, Verdict::Inconclusive);
        assert!(
            e.notes
                .iter()
                .any(|n| n.contains("can never reach p < 0.050")),
            "{:?}",
            e.notes
        );
        assert!(matches!(
            compare(&[1.0], &[1.0, 2.0], &Options::default()),
            Err(CompareError::TooFew { .. })
        ));
    }

    #[test]
    fn same_needs_a_tight_interval() {
        let mut rng = SplitMix64::new(14);
        let (a, b) = (sample(&mut rng, 400, 1.0), sample(&mut rng, 400, 1.0));
        let opts = Options {
            target_effect: 0.02,
            ..Options::default()
        };
        assert_eq!(compare(&a, &b, &opts).unwrap().verdict, Verdict::Same);
        let (a, b) = (sample(&mut rng, 5, 1.0), sample(&mut rng, 5, 1.0));
        assert_eq!(
            compare(&a, &b, &opts).unwrap().verdict,
            Verdict::Inconclusive
        );
    }

    #[test]
    fn holm_can_remove_a_marginal_finding() {
        let mut rng = SplitMix64::new(15);
        let opts = Options {
            test: TestChoice::Welch,
            ..Options::default()
        };
        let mut es: Vec<Estimate> = (0..10)
            .map(|_| {
                compare(
                    &sample(&mut rng, 10, 1.0),
                    &sample(&mut rng, 10, 1.0),
                    &opts,
                )
                .unwrap()
            })
            .collect();
        es[0].p_value = 0.01; // marginal on its own, not after 10 comparisons
        es[0].ratio = 1.05;
        let mut refs: Vec<&mut Estimate> = es.iter_mut().collect();
        adjust(&mut refs, Correction::Holm);
        assert!(es[0].p_adjusted >= 0.1);
        assert_ne!(es[0].verdict, Verdict::Slower);
    }
}
