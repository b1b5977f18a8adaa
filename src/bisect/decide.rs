//! How bisection decides, as pure functions of samples (the rule and its simulated
//! error rates are in docs/bisect.md):
//!
//! - **Endpoints**: good and bad are measured interleaved in rounds; after each batch
//!   the stats engine compares them (Mann-Whitney U, Hodges-Lehmann ratio at 95%). The
//!   regression is confirmed when bad is significantly slower; after a cap of rounds
//!   without that, it does not reproduce.
//! - **Boundary**: a candidate is bad when it is slower than good by more than the
//!   threshold `m` (default: half the measured regression, `m = sqrt(bad/good)`).
//! - **Steps** (sequential, in the spirit of Pinpoint): the candidate runs in rounds,
//!   each with one reference run of good or bad alternately (so slow drift reaches
//!   both). After each batch: **bad** when the interval of candidate/good lies wholly
//!   above `m`; **good** when the interval of candidate/bad lies wholly below `m/R`
//!   (R = bad/good from the recent references): the candidate is then significantly
//!   closer to good. Otherwise unknown, and another batch runs, up to a cap; at the cap
//!   the point estimate decides and the step is marked "by estimate".

use serde::{Deserialize, Serialize};

use crate::stats::compare::{self as engine, Options, TestChoice, Verdict};
use crate::stats::summary::median_by_selection;

/// Batch sizes and caps of one bisection step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Confidence of each step's intervals (0.99: Pinpoint's p <= 0.01).
    pub step_confidence: f64,
    /// Candidate runs in the first batch of a step, and in each later batch.
    pub first_batch: usize,
    pub next_batch: usize,
    /// Candidate runs after which the point estimate decides.
    pub max_runs: usize,
    /// How many of the most recent reference runs of each end a step compares with.
    pub refs: usize,
    /// Endpoint rounds per batch, and the cap.
    pub endpoint_batch: usize,
    pub endpoint_max: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            step_confidence: 0.99,
            first_batch: 6,
            next_batch: 4,
            max_runs: 30,
            refs: 16,
            endpoint_batch: 6,
            endpoint_max: 30,
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
    pub p_value: f64,
    /// bad is significantly slower than good.
    pub reproduced: bool,
    pub runs: [usize; 2],
}

/// Compare the endpoints (95%).
pub fn endpoints(good: &[f64], bad: &[f64]) -> Option<Endpoints> {
    let e = engine::compare(good, bad, &options(0.95)).ok()?;
    Some(Endpoints {
        ratio: e.ratio,
        ci_low: e.ci_low,
        ci_high: e.ci_high,
        p_value: e.p_value,
        reproduced: e.verdict == Verdict::Slower,
        runs: [good.len(), bad.len()],
    })
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
    let is_bad = g.ci_low.is_some_and(|lo| lo > m);
    let is_good = b.ci_high.is_some_and(|hi| hi < m_b);
    let (mut call, mut by_estimate) = match (is_bad, is_good) {
        (true, false) => (Call::Bad, false),
        (false, true) => (Call::Good, false),
        _ => (Call::Unknown, false),
    };
    if call == Call::Unknown && at_cap {
        // Closer to which end, in log space?
        call = if g.ratio.ln() > m.ln() {
            Call::Bad
        } else {
            Call::Good
        };
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
        let e = endpoints(&g, &b).unwrap();
        assert!(e.reproduced && (e.ratio - 1.2).abs() < 0.03);
        assert!((boundary(None, 1.21) - 1.1).abs() < 1e-12);
        assert_eq!(boundary(Some(0.05), 1.5), 1.05);
    }

    #[test]
    fn a_candidate_at_the_boundary_stays_unknown_until_the_cap() {
        let mut rng = SplitMix64::new(9);
        let p = Policy::default();
        let g = noisy(&mut rng, 1.0, 16, 0.03);
        let b = noisy(&mut rng, 1.1, 16, 0.03);
        let mid = noisy(&mut rng, 1.1f64.sqrt(), 6, 0.03);
        let d = classify(&mid, &g, &b, None, &p, false).unwrap();
        assert_eq!(d.call, Call::Unknown);
        let d = classify(&mid, &g, &b, None, &p, true).unwrap();
        assert!(d.by_estimate && d.call != Call::Unknown);
    }
}
