//! How bisection decides, as pure functions of samples (the rule and its simulated
//! error rates are in docs/bisect.md):
//!
//! - **Endpoints**: good and bad are measured interleaved in rounds; after each batch
//!   the stats engine compares them (Mann-Whitney U, Hodges-Lehmann ratio). The
//!   regression is confirmed when bad is significantly slower at 95% over all the
//!   looks together (each look at 1 - 0.05/looks, Bonferroni) and by at least the
//!   smallest regression worth bisecting (`--threshold`, else 1%); after a cap of
//!   rounds without that, it does not reproduce.
//! - **Boundary**: a candidate is bad when it is slower than good by more than the
//!   threshold `m` (default: half the measured regression, `m = sqrt(bad/good)`).
//! - **Steps** (sequential): the candidate runs one sample at a time, with one
//!   reference run of good or bad (alternately) after every second candidate run, so
//!   slow drift reaches the references too. After each sample (from the third) Wald's
//!   sequential probability ratio test decides between "candidate behaves like good"
//!   and "like bad": on log values, with the centres of the recent good and bad
//!   references, a robust (MAD) spread, and each sample's log-likelihood ratio clipped
//!   so that one outlier (a slow mode, a hiccup) cannot decide alone. It stops at the
//!   error rates α = β = 1 - step confidence; at the run cap the sign of the ratio
//!   decides and the step is marked "by estimate". A user threshold moves the bad
//!   hypothesis to good × (1 + threshold)².

use serde::{Deserialize, Serialize};

use crate::stats::compare::{self as engine, Options, TestChoice};
use crate::stats::summary::median_by_selection;

/// Batch sizes and caps of one bisection step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Confidence of each step's intervals (0.99: Pinpoint's p <= 0.01).
    pub step_confidence: f64,
    /// Candidate runs before the first decision, and between decisions.
    pub first_batch: usize,
    pub next_batch: usize,
    /// Candidate runs after which the point estimate decides.
    pub max_runs: usize,
    /// How many of the most recent reference runs of each end a step compares with.
    pub refs: usize,
    /// Endpoint rounds at the first look (each later look doubles them), and the cap.
    pub endpoint_batch: usize,
    pub endpoint_max: usize,
    /// The probability the culprit must reach before it is named alone.
    #[serde(default = "default_confidence")]
    pub confidence: f64,
}

fn default_confidence() -> f64 {
    0.95
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            step_confidence: 0.99,
            first_batch: 3,
            next_batch: 1,
            max_runs: 200,
            refs: 40,
            endpoint_batch: 10,
            endpoint_max: 80,
            confidence: default_confidence(),
        }
    }
}

fn options(confidence: f64) -> Options {
    Options {
        confidence,
        test: TestChoice::Auto,
        ..Options::default()
    }
}

fn median(v: &[f64]) -> f64 {
    median_by_selection(&mut v.to_vec())
}

/// The endpoints' comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endpoints {
    /// bad / good.
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_value: f64,
    /// bad is significantly slower than good.
    pub reproduced: bool,
    pub runs: [usize; 2],
    /// Runs of each end that would detect the threshold (the smallest
    /// regression bisected) with 80% power, at the spread these runs show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_needed: Option<u64>,
}

/// The smallest regression bisected when no `--threshold` is given: two builds of the
/// same code often differ by a fraction of a percent (paths, layout, page cache).
pub const MIN_REGRESSION: f64 = 0.01;

/// Compare the endpoints at one of `looks` looks: significant at 95% over all looks
/// (Bonferroni), and slower by at least `threshold` (default [`MIN_REGRESSION`]).
pub fn endpoints(
    good: &[f64],
    bad: &[f64],
    looks: usize,
    threshold: Option<f64>,
) -> Option<Endpoints> {
    let confidence = 1.0 - 0.05 / looks.max(1) as f64;
    let t = threshold.unwrap_or(MIN_REGRESSION);
    let e = engine::compare(
        good,
        bad,
        &Options {
            target_effect: t,
            count_target_effect: t,
            ..options(confidence)
        },
    )
    .ok()?;
    let min_ratio = 1.0 + t;
    Some(Endpoints {
        ratio: e.ratio,
        ci_low: e.ci_low,
        ci_high: e.ci_high,
        p_value: e.p_value,
        reproduced: e.proven_slower() && e.ratio >= min_ratio,
        runs: [good.len(), bad.len()],
        runs_needed: e.runs_needed,
    })
}

/// How many looks the endpoints take at most: at `endpoint_batch` rounds,
/// then doubling up to `endpoint_max`.
pub fn endpoint_looks(p: &Policy) -> usize {
    let (mut at, mut looks) = (p.endpoint_batch.max(1), 1);
    while at < p.endpoint_max {
        at = (at * 2).min(p.endpoint_max);
        looks += 1;
    }
    looks
}

/// Not reproduced, but the endpoints' interval still holds the smallest
/// regression worth bisecting: the runs were too noisy to tell, not proof
/// that there is nothing ("underpowered", never "does not reproduce").
pub fn underpowered(e: &Endpoints, threshold: Option<f64>) -> bool {
    !e.reproduced && !below_threshold(e, threshold)
}

/// The endpoints' interval lies wholly below the smallest regression worth
/// bisecting: more rounds would not make it reproduce.
pub fn below_threshold(e: &Endpoints, threshold: Option<f64>) -> bool {
    let min_ratio = 1.0 + threshold.unwrap_or(MIN_REGRESSION);
    e.ci_high.is_some_and(|h| h < min_ratio)
}

/// How much N runs of the good end taken at the same moment differ from runs
/// taken one at a time (measured before a bisection with `--jobs N`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Disturbance {
    pub jobs: usize,
    /// Runs taken alone and taken N at a time.
    pub alone: Vec<f64>,
    pub together: Vec<f64>,
    /// Median together / median alone.
    pub slowdown: f64,
    /// Relative spread (MAD / median) together over alone.
    pub spread_ratio: f64,
}

/// How runs taken `jobs` at a time compare with runs taken alone: the ratio of
/// the medians, and of the relative spreads (MAD / median).
pub fn disturbance(jobs: usize, alone: Vec<f64>, together: Vec<f64>) -> Disturbance {
    let rel = |v: &[f64]| {
        let mut w = v.to_vec();
        let m = median_by_selection(&mut w);
        let mut dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
        let mad = median_by_selection(&mut dev);
        (m, if m > 0.0 { mad / m } else { 0.0 })
    };
    let ((ma, sa), (mt, st)) = (rel(&alone), rel(&together));
    Disturbance {
        jobs,
        slowdown: if ma > 0.0 { mt / ma } else { 1.0 },
        spread_ratio: if sa > 0.0 {
            st / sa
        } else if st > 0.0 {
            f64::INFINITY
        } else {
            1.0
        },
        alone,
        together,
    }
}

/// The boundary ratio over good: a user threshold (0.05 = 5%), or half the
/// regression `ratio` in log space.
pub fn boundary(threshold: Option<f64>, ratio: f64) -> f64 {
    threshold.map_or(ratio.max(1.0).sqrt(), |t| 1.0 + t)
}

/// A step's call on a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    Good,
    Bad,
    Unknown,
    /// The candidate could not be built or run.
    Skip,
}

/// The numbers behind a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub call: Call,
    /// Decided by the point estimate at the cap, not by the intervals.
    pub by_estimate: bool,
    /// candidate / good, with its interval at the step confidence.
    pub vs_good: f64,
    pub vs_good_ci: [Option<f64>; 2],
    /// candidate / bad.
    pub vs_bad: f64,
    pub vs_bad_ci: [Option<f64>; 2],
    /// The boundary over good (m) and over bad (m / R).
    pub boundary: f64,
    pub boundary_vs_bad: f64,
    /// The sequential test's log-likelihood ratio (bad over good) and its bound.
    pub llr: f64,
    pub llr_bound: f64,
}

/// Median absolute deviation around the median, scaled to a normal's sigma.
fn mad_sigma(v: &[f64]) -> f64 {
    let m = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    1.4826 * median(&dev)
}

/// The sequential probability ratio test's log-likelihood ratio of "like bad" over
/// "like good" for `candidate` (log values), with the good and bad centres `mu_g`,
/// `mu_b` and spread `sigma`; each sample's term is clipped to ±4x its expectation.
pub fn llr(candidate_logs: &[f64], mu_g: f64, mu_b: f64, sigma: f64) -> f64 {
    let delta = mu_b - mu_g;
    let mid = (mu_g + mu_b) / 2.0;
    let var = sigma * sigma;
    let clip = 2.0 * delta * delta / var;
    candidate_logs
        .iter()
        .map(|x| (delta * (x - mid) / var).clamp(-clip, clip))
        .sum()
}

/// Classify `candidate` against the recent `good` and `bad` references (each >= 2).
/// `at_cap`: no more runs will come, so an unknown is settled by the point estimate.
pub fn classify(
    candidate: &[f64],
    good: &[f64],
    bad: &[f64],
    threshold: Option<f64>,
    policy: &Policy,
    at_cap: bool,
) -> Option<Decision> {
    let opts = options(policy.step_confidence);
    let g = engine::compare(good, candidate, &opts).ok()?;
    let b = engine::compare(bad, candidate, &opts).ok()?;
    let r = (median(bad) / median(good)).max(1.0);
    let m = boundary(threshold, r);
    let m_b = m / r;
    let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
    let (lg, lb, lc) = (logs(good), logs(bad), logs(candidate));
    let mu_g = median(&lg);
    let mu_b = mu_g + 2.0 * m.ln();
    let centred: Vec<f64> = lg
        .iter()
        .map(|x| x - mu_g)
        .chain(lb.iter().map(|x| x - median(&lb)))
        .collect();
    // The larger of the robust and the plain spread: a mixture (a slow mode now and
    // then) must widen the test, not be ignored by it.
    let sd = {
        let n = centred.len() as f64;
        let mean = centred.iter().sum::<f64>() / n;
        (centred.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt()
    };
    let sigma = mad_sigma(&centred).max(sd).max(0.002);
    let ratio = llr(&lc, mu_g, mu_b, sigma);
    let alpha = (1.0 - policy.step_confidence).clamp(1e-6, 0.5);
    let upper = ((1.0 - alpha) / alpha).ln();
    let (mut call, mut by_estimate) = if ratio >= upper {
        (Call::Bad, false)
    } else if ratio <= -upper {
        (Call::Good, false)
    } else {
        (Call::Unknown, false)
    };
    if call == Call::Unknown && at_cap {
        call = if ratio > 0.0 { Call::Bad } else { Call::Good };
        by_estimate = true;
    }
    Some(Decision {
        call,
        by_estimate,
        vs_good: g.ratio,
        vs_good_ci: [g.ci_low, g.ci_high],
        vs_bad: b.ratio,
        vs_bad_ci: [b.ci_low, b.ci_high],
        boundary: m,
        boundary_vs_bad: m_b,
        llr: ratio,
        llr_bound: upper,
    })
}

/// The last `n` values of `v`.
pub fn recent(v: &[f64], n: usize) -> &[f64] {
    &v[v.len().saturating_sub(n)..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn noisy(rng: &mut SplitMix64, center: f64, n: usize, sigma: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                center * (sigma * z).exp()
            })
            .collect()
    }

    #[test]
    fn identical_endpoints_rarely_reproduce_over_three_looks() {
        // The same build at both ends, looked at after 10, 20 and 30 rounds as the
        // engine does: a false "it reproduces" at most 2.5% of the time (one-sided
        // half of 5%, Bonferroni over the looks), plus the binomial spread of 2000
        // trials. A bias of half a percent, well measured, is below the 1% floor.
        let mut rng = SplitMix64::new(11);
        let trials = 2000;
        let mut false_alarms = 0;
        for _ in 0..trials {
            let g = noisy(&mut rng, 1.0, 30, 0.05);
            let b = noisy(&mut rng, 1.0, 30, 0.05);
            if [10, 20, 30]
                .iter()
                .any(|&n| endpoints(&g[..n], &b[..n], 3, None).unwrap().reproduced)
            {
                false_alarms += 1;
            }
        }
        let rate = false_alarms as f64 / trials as f64;
        assert!(rate <= 0.035, "{rate}");
        let g = noisy(&mut rng, 1.0, 30, 0.001);
        let b = noisy(&mut rng, 1.005, 30, 0.001);
        let e = endpoints(&g, &b, 3, None).unwrap();
        assert!(e.p_value < 1e-6 && !e.reproduced, "{e:?}");
        assert!(endpoints(&g, &b, 3, Some(0.002)).unwrap().reproduced);
    }

    #[test]
    fn clear_cases_are_called_at_the_first_batch() {
        let mut rng = SplitMix64::new(7);
        let p = Policy::default();
        let g = noisy(&mut rng, 1.0, 16, 0.02);
        let b = noisy(&mut rng, 1.2, 16, 0.02);
        let bad = noisy(&mut rng, 1.2, 6, 0.02);
        let good = noisy(&mut rng, 1.0, 6, 0.02);
        assert_eq!(
            classify(&bad, &g, &b, None, &p, false).unwrap().call,
            Call::Bad
        );
        assert_eq!(
            classify(&good, &g, &b, None, &p, false).unwrap().call,
            Call::Good
        );
        let e = endpoints(&g, &b, 3, None).unwrap();
        assert!(e.reproduced && (e.ratio - 1.2).abs() < 0.03);
        // A 20% regression is not one of at least 30%.
        assert!(!endpoints(&g, &b, 3, Some(0.3)).unwrap().reproduced);
        assert!((boundary(None, 1.21) - 1.1).abs() < 1e-12);
        assert_eq!(boundary(Some(0.05), 1.5), 1.05);
    }

    #[test]
    fn a_noisy_candidate_at_the_boundary_stays_unknown_until_the_cap() {
        let mut rng = SplitMix64::new(9);
        let p = Policy::default();
        let g = noisy(&mut rng, 1.0, 16, 0.1);
        let b = noisy(&mut rng, 1.1, 16, 0.1);
        let mid = vec![1.1f64.sqrt(); 3];
        let d = classify(&mid, &g, &b, None, &p, false).unwrap();
        assert_eq!(d.call, Call::Unknown, "{d:?}");
        let d = classify(&mid, &g, &b, None, &p, true).unwrap();
        assert!(d.by_estimate && d.call != Call::Unknown);
    }

    #[test]
    fn the_log_likelihood_ratio_is_clipped_per_sample() {
        // One absurd sample cannot outweigh the rest by more than 4x one's expectation.
        let l = llr(&[10.0], 0.0, 0.1, 0.05);
        assert!((l - 2.0 * 4.0).abs() < 1e-9, "{l}");
        assert!(llr(&[0.0, 0.0], 0.0, 0.1, 0.05) < 0.0);
    }

    #[test]
    fn the_endpoints_look_at_10_20_40_and_80_rounds_and_stop_when_below_the_threshold() {
        assert_eq!(endpoint_looks(&Policy::default()), 4);
        let e = |low: f64, high: f64| Endpoints {
            ratio: (low + high) / 2.0,
            ci_low: Some(low),
            ci_high: Some(high),
            p_value: 0.5,
            reproduced: false,
            runs: [20, 20],
            runs_needed: None,
        };
        assert!(below_threshold(&e(0.99, 1.008), None));
        assert!(!below_threshold(&e(0.99, 1.02), None));
        assert!(
            !below_threshold(&e(0.99, 1.04), Some(0.03))
                && below_threshold(&e(0.99, 1.02), Some(0.03))
        );
    }
}
