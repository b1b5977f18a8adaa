//! Bisecting a count (instructions): the decisions, pure.
//!
//! A deterministic program executes the same instructions on every run,
//! whatever the load. When good's two runs agree, and bad's two runs agree,
//! each far closer than the regression, one run of a commit says which side
//! of the boundary it is on, and a plain binary search is exact: a 0.5%
//! regression among 64 commits costs the endpoints' four runs, six steps and
//! two confirming runs. When counts vary (a JIT, address-space randomisation
//! in hashing), the statistical search takes over.

use serde::{Deserialize, Serialize};

use super::decide::{Call, Decision};

/// Runs at each end: two, to see that counts agree.
pub const ENDPOINT_RUNS: usize = 2;
/// A regression must be this many times the runs' own jitter to be bisected
/// exactly (a count moving by 0.01% between runs cannot place a 0.02% step).
pub const JITTER_MARGIN: f64 = 4.0;
/// Below this, two counts are the same count (floating-point of a ratio).
pub const SMALLEST_STEP: f64 = 1e-6;

/// The endpoints of an exact bisection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactEndpoints {
    pub good: f64,
    pub bad: f64,
    /// bad / good.
    pub ratio: f64,
    /// The largest (max - min) / median of either end's runs.
    pub jitter: f64,
    /// Counts agree closely enough for one run per commit.
    pub agree: bool,
    /// bad is beyond good by more than the jitter (and the threshold).
    pub reproduced: bool,
    /// The boundary over good: a commit at or beyond `good * boundary` is bad.
    pub boundary: f64,
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn relative_range(v: &[f64]) -> f64 {
    let m = median(v);
    let (lo, hi) = v
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if m > 0.0 {
        (hi - lo) / m
    } else {
        f64::INFINITY
    }
}

/// Judge the endpoints' runs (values already inverted for `--invert`).
/// `threshold`: the smallest regression worth bisecting, as a fraction.
pub fn endpoints(good: &[f64], bad: &[f64], threshold: Option<f64>) -> Option<ExactEndpoints> {
    if good.is_empty() || bad.is_empty() {
        return None;
    }
    let (g, b) = (median(good), median(bad));
    if !(g > 0.0 && b > 0.0 && g.is_finite() && b.is_finite()) {
        return None;
    }
    let ratio = b / g;
    let jitter = relative_range(good).max(relative_range(bad));
    let step = ratio - 1.0;
    let agree = jitter * JITTER_MARGIN < step.abs() || step.abs() < SMALLEST_STEP;
    let boundary = super::decide::boundary(threshold, ratio);
    let reproduced = agree && step > SMALLEST_STEP && ratio >= boundary;
    Some(ExactEndpoints {
        good: g,
        bad: b,
        ratio,
        jitter,
        agree,
        reproduced,
        boundary,
    })
}

/// One commit's count against the endpoints: bad at or beyond the boundary.
pub fn classify(value: f64, e: &ExactEndpoints) -> Decision {
    let vs_good = value / e.good;
    let vs_bad = value / e.bad;
    Decision {
        call: if vs_good >= e.boundary {
            Call::Bad
        } else {
            Call::Good
        },
        by_estimate: false,
        vs_good,
        vs_good_ci: [Some(vs_good), Some(vs_good)],
        vs_bad,
        vs_bad_ci: [Some(vs_bad), Some(vs_bad)],
        boundary: e.boundary,
        boundary_vs_bad: e.boundary / e.ratio,
        llr: 0.0,
        llr_bound: 0.0,
    }
}

/// Whether two runs of one commit agree within the endpoints' tolerance.
pub fn agree(runs: &[f64], e: &ExactEndpoints) -> bool {
    runs.len() < 2 || relative_range(runs) * JITTER_MARGIN < (e.ratio - 1.0).abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_ends_half_a_percent_apart_bisect_exactly() {
        let e = endpoints(&[1_000_000.0; 2], &[1_005_000.0; 2], None).unwrap();
        assert!(e.agree && e.reproduced);
        assert_eq!(e.jitter, 0.0);
        // The boundary is halfway (geometrically): a commit with the old count is good.
        assert_eq!(classify(1_000_000.0, &e).call, Call::Good);
        assert_eq!(classify(1_005_000.0, &e).call, Call::Bad);
        assert_eq!(classify(1_004_000.0, &e).call, Call::Bad);
        assert_eq!(classify(1_001_000.0, &e).call, Call::Good);
        assert!(agree(&[1_005_000.0, 1_005_000.0], &e));
        assert!(!agree(&[1_000_000.0, 1_005_000.0], &e));
    }

    #[test]
    fn counts_that_wander_or_a_step_below_the_threshold_are_not_bisected_exactly() {
        // Runs 0.3% apart cannot place a 0.5% step with one run each.
        let e = endpoints(&[1_000_000.0, 1_003_000.0], &[1_005_000.0; 2], None).unwrap();
        assert!(!e.agree && !e.reproduced);
        // A 0.5% step with --threshold 1%: exact, and not a regression worth bisecting.
        let t = endpoints(&[1000.0; 2], &[1005.0; 2], Some(0.01)).unwrap();
        assert!(t.agree && !t.reproduced);
        // Nothing changed.
        let n = endpoints(&[1000.0; 2], &[1000.0; 2], None).unwrap();
        assert!(n.agree && !n.reproduced);
        assert!(endpoints(&[], &[1.0], None).is_none());
        assert!(endpoints(&[0.0], &[1.0], None).is_none());
    }
}
