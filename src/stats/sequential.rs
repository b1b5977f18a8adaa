//! A change at the end of a series, as soon as the points allow: the
//! sequential half of tardy's detector ([`super::rank_cusum`] places the
//! change points of the whole series; it needs about a dozen points a side).
//!
//! At the series' end, for each tail length k (3 to 32 points) and a few
//! levels of the reference (the points since the last change point, the
//! newest [`MAX_REFERENCE`] of them before the tail): its largest point, its
//! 95th, 80th and 50th percentile (and the mirror images for a drop), the
//! test counts the tail's points beyond that level. Under independent noise
//! of any continuous distribution every order of the n + k points is
//! equally likely, so the chance of m or more of the k tail points beyond
//! the reference's j-th largest is exact: at least m of the k are among the
//! top m + j - 1 of all n + k, a hypergeometric tail. No shape is assumed,
//! and one outlier is never a step: the fewest points that can make one
//! are three.
//!
//! A 10-sigma step puts its first points beyond the reference's largest
//! (three of three is already rare enough against a long reference); a
//! 2-sigma step puts most of a dozen beyond the 80th percentile. Each
//! (k, level, direction) gets a fixed share of the per-point budget
//! ([`share`]), the false-alarm rate per 1,000 points divided by 1,000 (so
//! a series checked
//! at every point stays within it by the union bound; consecutive checks
//! overlap, so it is conservative), times a factor simulated on noise
//! ([`CALIBRATION`], `examples/cp_delay.rs`) that gives the union bound's
//! slack back.
//!
//! Correlated noise (runs of high points together) would look like a step:
//! the lag-1 autocorrelation ρ of the reference's ranks (when positive, plus
//! one standard error) makes each tail worth fewer independent points, and a
//! p-value p counts as p^((1-ρ)/(1+ρ)).

use std::sync::OnceLock;

/// Tail lengths tested.
pub const TAILS: [usize; 11] = [3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32];
/// The newest points of the current segment used as the reference.
pub const MAX_REFERENCE: usize = 200;
/// The fewest reference points a tail is tested against.
pub const MIN_REFERENCE: usize = 16;
/// Below this many reference points, a tail is tested only against a
/// reference at least four times its length.
pub const SHORT: usize = 48;
/// Reference levels, as the share of its points above the level (0: its
/// largest point).
const LEVELS: [f64; 4] = [0.0, 0.05, 0.2, 0.5];
/// The union bound's slack, simulated on independent noise checked at every
/// point of 1,000-point series (`examples/cp_delay.rs`): the per-test
/// budget is multiplied by it and false alarms stay within the rate.
pub const CALIBRATION: f64 = 10.0;

/// A change found at the end of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndChange {
    /// The tail length that made it.
    pub tail: usize,
    /// +1: the tail is higher; -1: lower.
    pub direction: i8,
    /// The test's p-value, corrected for correlation.
    pub p: f64,
    /// The false-alarm rate per 1,000 points at which it would just be
    /// called (the smallest over the tests).
    pub rate: f64,
}

fn ln_factorials() -> &'static [f64] {
    static T: OnceLock<Vec<f64>> = OnceLock::new();
    T.get_or_init(|| {
        let mut v = vec![0.0; MAX_REFERENCE + 64];
        for i in 1..v.len() {
            v[i] = v[i - 1] + (i as f64).ln();
        }
        v
    })
}

fn ln_choose(n: usize, k: usize) -> f64 {
    let f = ln_factorials();
    if k > n || n >= f.len() {
        return f64::NEG_INFINITY;
    }
    f[n] - f[k] - f[n - k]
}

/// P(at least m of the k tail points are beyond the reference's j-th most
/// extreme point), n reference points, independent noise.
pub fn exceed_p(n: usize, k: usize, j: usize, m: usize) -> f64 {
    if m == 0 {
        return 1.0;
    }
    let draw = m + j - 1;
    let total = n + k;
    if draw > total {
        return 0.0;
    }
    let denom = ln_choose(total, draw);
    let mut p = 0.0;
    for x in m..=k.min(draw) {
        if draw - x > n {
            continue;
        }
        p += (ln_choose(k, x) + ln_choose(n, draw - x) - denom).exp();
    }
    p.min(1.0)
}

/// Each level's share of a check's budget: the reference's largest point
/// gets the most (a big step's first points go beyond it).
const LEVEL_SHARE: [f64; 4] = [0.4, 0.2, 0.2, 0.2];

/// The share of a check's budget given to one test (tail k, level index l,
/// one direction): the level's share, split over the tails in proportion to
/// 1/k (short tails decide early, when a step is big), then over the two
/// directions. The shares add up to 1.
pub fn share(k: usize, l: usize) -> f64 {
    let sum: f64 = TAILS.iter().map(|&t| 1.0 / t as f64).sum();
    LEVEL_SHARE.get(l).copied().unwrap_or(0.0) * (1.0 / k as f64) / sum / 2.0
}

/// The p-value at or below which one check's test of share `w` calls a
/// change, at the false-alarm rate `alpha` per 1,000 points.
pub fn test_level(alpha: f64, w: f64) -> f64 {
    alpha / 1000.0 * w * CALIBRATION
}

/// The number of reference levels per tail and direction.
pub const LEVEL_COUNT: usize = LEVELS.len();

/// The reference's levels as ranks from its top (or bottom): the j-th most
/// extreme of `n` points, ascending.
pub fn level_ranks(n: usize) -> [usize; LEVEL_COUNT] {
    let mut js = [0; LEVEL_COUNT];
    for (l, &above) in LEVELS.iter().enumerate() {
        js[l] = ((above * n as f64).floor() as usize + 1).min(n);
    }
    js
}

/// For one false-alarm rate, the fewest tail points beyond each level that
/// can call a change (without the correlation correction, which only
/// raises p-values): what lets a check rule a test out from ranks alone,
/// without finding its levels ([`super::ranked_window`]).
#[derive(Debug, Clone)]
pub struct Thresholds {
    alpha: f64,
    /// Per reference length from `MIN_REFERENCE` and tail: the distinct
    /// levels' (j, fewest points beyond it that call), those that can call.
    rows: Vec<([(u16, u8); LEVEL_COUNT], u8)>,
}

impl Thresholds {
    /// The counts at `alpha` per 1,000 points, with a hair of slack so that
    /// rounding never makes them stricter than [`end_change`].
    pub fn new(alpha: f64) -> Thresholds {
        let lenient = alpha * (1.0 + 1e-9);
        let mut rows = Vec::with_capacity((MAX_REFERENCE + 1 - MIN_REFERENCE) * TAILS.len());
        for n in MIN_REFERENCE..=MAX_REFERENCE {
            let js = level_ranks(n);
            for &k in &TAILS {
                let mut row = ([(0u16, 0u8); LEVEL_COUNT], 0u8);
                for (l, &j) in js.iter().enumerate() {
                    if js[..l].contains(&j) {
                        continue;
                    }
                    let w = share(k, l);
                    let calls =
                        |m: usize| (exceed_p(n, k, j, m) / test_level(1.0, w)).min(1.0) <= lenient;
                    // The p-value falls as m grows: the first m that calls.
                    let (mut lo, mut hi) = (0, k + 1);
                    while lo < hi {
                        let mid = (lo + hi) / 2;
                        if calls(mid) {
                            hi = mid;
                        } else {
                            lo = mid + 1;
                        }
                    }
                    if lo <= k {
                        row.0[row.1 as usize] = (j as u16, lo as u8);
                        row.1 += 1;
                    }
                }
                rows.push(row);
            }
        }
        Thresholds { alpha, rows }
    }

    /// The rate these are for.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// For tail `TAILS[ti]` against an `n`-point reference: each distinct
    /// level that can call a change, as (j: the level is the reference's
    /// j-th most extreme point, m: the fewest tail points beyond it that
    /// call).
    pub fn levels(&self, n: usize, ti: usize) -> &[(u16, u8)] {
        n.checked_sub(MIN_REFERENCE)
            .and_then(|i| self.rows.get(i * TAILS.len() + ti))
            .map_or(&[], |(row, len)| &row[..*len as usize])
    }
}

/// The lag-1 autocorrelation of a sequence of ranks (0..n, each once)
/// when positive, raised by its standard error (twice below [`SHORT`] points),
/// else 0.
fn rank_rho_of_ranks(r: &[f64]) -> f64 {
    let n = r.len();
    if n < 4 {
        return 0.0;
    }
    let mean = (n - 1) as f64 / 2.0;
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..n {
        let d = r[i] - mean;
        den += d * d;
        if i + 1 < n {
            num += d * (r[i + 1] - mean);
        }
    }
    let rho = if den > 0.0 { num / den } else { 0.0 };
    // Counted only when above one standard error on a long reference
    // (independent noise shows a positive estimate half the time, and
    // paying for it cost a 2-sigma step two points); any positive estimate
    // on a short one, which estimates it poorly and biased low (and a
    // short reference is only tested against tails a quarter its length:
    // twenty points of AR(0.6) noise often show no correlation at all, and
    // a tail as long as them that wandered high was the end test's only
    // false alarm).
    let bar = if n < SHORT {
        0.0
    } else {
        1.0 / (n as f64).sqrt()
    };
    if rho > bar {
        let rho = rho.max(0.0);
        // On the safe side: one standard error above, two for the short
        // references a new series has (they estimate it poorly, and a
        // series' first points are where correlated noise looks most like
        // a step).
        // The estimate's bias, about -(1 + 4 rho) / n, is given back too:
        // at 16-30 points it is a tenth or more.
        let errors = if n < SHORT { 2.0 } else { 1.0 };
        let bias = (1.0 + 4.0 * rho) / n as f64;
        (rho + bias + errors / (n as f64).sqrt()).min(0.9)
    } else {
        0.0
    }
}

/// The lag-1 autocorrelation of `x`'s ranks (see [`rank_rho_of_ranks`]).
#[cfg(test)]
fn rank_rho(x: &[f64]) -> f64 {
    let mut idx: Vec<usize> = (0..x.len()).collect();
    idx.sort_unstable_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; x.len()];
    for (rank, &i) in idx.iter().enumerate() {
        r[i] = rank as f64;
    }
    rank_rho_of_ranks(&r)
}

/// The strongest test of the tail of `segment` (the points since the last
/// change point) against the points before it: `None` when the segment is
/// too short to test.
pub fn strongest(segment: &[f64]) -> Option<EndChange> {
    scan(segment, true, false)
}

/// Every test of [`strongest`]; without `correlation` the p-values are not
/// corrected for correlated noise (which only ever raises them). With
/// `screen`, tests whose tail has no more points beyond a level than noise
/// puts there on average are skipped: their p-value is about a half, far
/// above any level a false-alarm rate below 1 gives.
///
/// The window (the longest tail and its reference) is sorted once; each
/// tail's reference is a stretch of it by position, and its levels are
/// found by walking the sorted order from either end counting the points of
/// that stretch, so a check costs one sort and a few hundred steps per tail
/// instead of a sort per tail: what lets a server check every test of a
/// 100,000-test suite on each upload.
fn scan(segment: &[f64], correlation: bool, screen: bool) -> Option<EndChange> {
    if segment.iter().any(|v| !v.is_finite()) || segment.len() < TAILS[0] + MIN_REFERENCE {
        return None;
    }
    let longest = TAILS[TAILS.len() - 1];
    let window = &segment[segment.len().saturating_sub(longest + MAX_REFERENCE)..];
    let len = window.len();
    let order: Vec<u32> = super::summary::sorted_keys(window)
        .iter()
        .map(|k| k.1)
        .collect();
    let mut ranks: Vec<f64> = Vec::new();
    let mut best: Option<EndChange> = None;
    for &k in &TAILS {
        if len < k + MIN_REFERENCE {
            break;
        }
        let (r0, r1) = ((len - k).saturating_sub(MAX_REFERENCE), len - k);
        let n = r1 - r0;
        if n < SHORT && k * 4 > n {
            continue;
        }
        let tail = &window[len - k..];
        let in_reference = |i: u32| (r0..r1).contains(&(i as usize));
        let js = level_ranks(n);
        let deepest = js.iter().copied().max().unwrap_or(1);
        let mut hi = [0.0; LEVELS.len()];
        let mut lo = [0.0; LEVELS.len()];
        let (mut seen, mut level) = (0, 0);
        for &i in order.iter().rev().filter(|&&i| in_reference(i)) {
            seen += 1;
            while level < js.len() && js[level] == seen {
                hi[level] = window[i as usize];
                level += 1;
            }
            if seen == deepest {
                break;
            }
        }
        let (mut seen, mut level) = (0, 0);
        for &i in order.iter().filter(|&&i| in_reference(i)) {
            seen += 1;
            while level < js.len() && js[level] == seen {
                lo[level] = window[i as usize];
                level += 1;
            }
            if seen == deepest {
                break;
            }
        }
        // Measured on each reference: a shorter tail's reference holds the
        // new level's first points, which look like correlation.
        let shrink = if correlation {
            ranks.clear();
            ranks.resize(n, 0.0);
            for (rank, &i) in order.iter().filter(|&&i| in_reference(i)).enumerate() {
                ranks[i as usize - r0] = rank as f64;
            }
            let rho = rank_rho_of_ranks(&ranks);
            (1.0 - rho) / (1.0 + rho)
        } else {
            1.0
        };
        for l in 0..LEVELS.len() {
            if js[..l].contains(&js[l]) {
                continue;
            }
            let (j, w) = (js[l], share(k, l));
            for (direction, m) in [
                (1i8, tail.iter().filter(|&&v| v > hi[l]).count()),
                (-1i8, tail.iter().filter(|&&v| v < lo[l]).count()),
            ] {
                if screen && m as f64 <= (k * j) as f64 / (n + 1) as f64 {
                    continue;
                }
                let p = exceed_p(n, k, j, m).powf(shrink);
                // The rate at which this test would just call it.
                let rate = (p / test_level(1.0, w)).min(1.0);
                if best.is_none_or(|b| rate < b.rate) {
                    best = Some(EndChange {
                        tail: k,
                        direction,
                        p,
                        rate,
                    });
                }
            }
        }
    }
    best
}

/// A change at the end of `segment` at the false-alarm rate `alpha` per
/// 1,000 points, or `None`. The tests are first run without the
/// correlation correction: it only raises p-values, so a segment that
/// passes without it passes with it, and most do.
pub fn end_change(segment: &[f64], alpha: f64) -> Option<EndChange> {
    scan(segment, false, alpha <= 1.0).filter(|c| c.rate <= alpha)?;
    strongest(segment).filter(|c| c.rate <= alpha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    #[test]
    fn the_exceedance_tail_is_exact() {
        // All three beyond the largest of 100: 1 / C(103, 3).
        let p = exceed_p(100, 3, 1, 3);
        assert!((p - 1.0 / 176_851.0).abs() < 1e-12, "{p}");
        // At least one of one beyond the largest of n: 1 / (n + 1).
        assert!((exceed_p(9, 1, 1, 1) - 0.1).abs() < 1e-12);
        // Beyond the median of many, each point about a coin toss.
        let p = exceed_p(199, 2, 100, 2);
        assert!((p - 0.25).abs() < 0.01, "{p}");
        // By simulation: 5 of 10 beyond the 80th percentile of 50.
        let mut rng = SplitMix64::new(7);
        let (trials, mut hits) = (200_000, 0);
        for _ in 0..trials {
            let mut r: Vec<f64> = (0..50).map(|_| rng.next_f64()).collect();
            r.sort_by(|a, b| a.total_cmp(b));
            let level = r[50 - 11];
            let m = (0..10).filter(|_| rng.next_f64() > level).count();
            hits += usize::from(m >= 5);
        }
        let sim = hits as f64 / trials as f64;
        let exact = exceed_p(50, 10, 11, 5);
        assert!(
            (sim - exact).abs() < 4.0 * (exact / trials as f64).sqrt() + 1e-4,
            "{sim} {exact}"
        );
    }

    #[test]
    fn a_big_step_is_called_within_a_few_points_and_one_outlier_never() {
        let mut rng = SplitMix64::new(1);
        let mut x: Vec<f64> = (0..300).map(|_| 100.0 + rng.normal()).collect();
        // One wild point is not a step.
        x.push(150.0);
        assert!(end_change(&x, 0.01).is_none());
        x.pop();
        // A 10-sigma step: called by its third point.
        for i in 0..3 {
            x.push(110.0 + rng.normal());
            let c = end_change(&x, 0.01);
            if i < 2 {
                assert!(c.is_none(), "{i}: {c:?}");
            } else {
                let c = c.expect("three points at a new level");
                assert_eq!(c.direction, 1);
                assert_eq!(c.tail, 3);
            }
        }
    }

    /// The direct reading of the method: a sort per tail.
    fn naive_strongest(segment: &[f64]) -> Option<EndChange> {
        let mut best: Option<EndChange> = None;
        for &k in &TAILS {
            if segment.len() < k + MIN_REFERENCE {
                break;
            }
            let tail = &segment[segment.len() - k..];
            let before = &segment[..segment.len() - k];
            let reference = &before[before.len().saturating_sub(MAX_REFERENCE)..];
            let n = reference.len();
            if n < SHORT && k * 4 > n {
                continue;
            }
            let mut sorted = reference.to_vec();
            sorted.sort_unstable_by(|a, b| a.total_cmp(b));
            let rho = rank_rho(reference);
            let shrink = (1.0 - rho) / (1.0 + rho);
            let mut seen = Vec::new();
            for (l, &above) in LEVELS.iter().enumerate() {
                let j = ((above * n as f64).floor() as usize + 1).min(n);
                if seen.contains(&j) {
                    continue;
                }
                seen.push(j);
                let w = share(k, l);
                let (hi, lo) = (sorted[n - j], sorted[j - 1]);
                for (direction, m) in [
                    (1i8, tail.iter().filter(|&&v| v > hi).count()),
                    (-1i8, tail.iter().filter(|&&v| v < lo).count()),
                ] {
                    let p = exceed_p(n, k, j, m).powf(shrink);
                    let rate = (p / test_level(1.0, w)).min(1.0);
                    if best.is_none_or(|b| rate < b.rate) {
                        best = Some(EndChange {
                            tail: k,
                            direction,
                            p,
                            rate,
                        });
                    }
                }
            }
        }
        best
    }

    #[test]
    fn one_sort_gives_what_a_sort_per_tail_gives() {
        let mut rng = SplitMix64::new(11);
        for case in 0..400 {
            let len = 19 + case % 300;
            let step = (case % 5) as f64;
            let mut v = 0.0;
            let x: Vec<f64> = (0..len)
                .map(|i| {
                    v = 0.5 * v + rng.normal();
                    v + if i + 8 >= len { step } else { 0.0 }
                })
                .collect();
            let (a, b) = (strongest(&x), naive_strongest(&x));
            match (a, b) {
                (Some(a), Some(b)) => {
                    assert_eq!((a.tail, a.direction), (b.tail, b.direction), "{case}");
                    assert!(
                        (a.rate - b.rate).abs() <= 1e-12 * b.rate.max(1e-300),
                        "{case}"
                    );
                }
                (a, b) => assert_eq!(a, b, "{case}"),
            }
            for alpha in [0.01, 0.1] {
                assert_eq!(
                    end_change(&x, alpha).is_some(),
                    b.is_some_and(|c| c.rate <= alpha)
                );
            }
        }
    }

    #[test]
    fn correlated_noise_counts_for_less() {
        let mut rng = SplitMix64::new(3);
        let mut v = 0.0;
        let x: Vec<f64> = (0..200)
            .map(|_| {
                v = 0.8 * v + rng.normal();
                v
            })
            .collect();
        assert!(rank_rho(&x) > 0.7);
        // Independent noise: at most a little above its standard error.
        let iid: Vec<f64> = (0..200).map(|_| rng.normal()).collect();
        assert!(rank_rho(&iid) < 0.3, "{}", rank_rho(&iid));
        // The same high points, in runs: a tail of them is not a step.
        let mut runs: Vec<f64> = x.clone();
        runs.extend([3.0, 3.1, 2.9, 3.2, 3.0, 2.8]);
        let plain: Vec<f64> = iid
            .iter()
            .copied()
            .chain([3.0, 3.1, 2.9, 3.2, 3.0, 2.8])
            .collect();
        let (pr, pp) = (strongest(&runs).unwrap(), strongest(&plain).unwrap());
        assert!(pr.rate > pp.rate * 10.0, "{pr:?} {pp:?}");
    }
}
