//! Where exactly a step is: the probability of each position of one change
//! in a stretch of a series, so an alert can say "c31 (93%), c30 (6%)"
//! and a bisection can start from a range that surely holds the culprit.
//!
//! The model: one step between two levels, independent Laplace noise of a
//! common scale (the least-absolute-deviation fit [`super::rank_cusum`]
//! places a change with, and robust to the odd outlier). With a flat prior
//! over the positions, the profile likelihood gives
//! P(k) ∝ exp(-(C(k) - min C) / b), C(k) the absolute deviations of each side
//! from its median when the new level starts at k, and b = min C / n the
//! scale's maximum-likelihood estimate. One noisy point next to the step
//! makes two positions nearly as likely; a clean step makes one certain.

/// The Laplace scale is taken this much wider than its estimate: the
/// profile likelihood ignores the levels' own uncertainty and was
/// overconfident on small steps (`examples/cp_boundary.rs`: with it, the
/// 99% set held the true place in 97-100% of 2- to 10-sigma steps on
/// Gaussian, lognormal and heavy-tailed noise).
const TEMPER: f64 = 1.4;

/// P(the new level starts at index k) for every k in `1..x.len()` (index
/// 0 holds 0); empty when `x` has fewer than 2 points or a value that is
/// not finite.
pub fn step_position(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 2 || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let cost = |v: &[f64]| -> f64 {
        let mut s = v.to_vec();
        s.sort_unstable_by(|a, b| a.total_cmp(b));
        let m = s[s.len() / 2];
        v.iter().map(|&y| (y - m).abs()).sum()
    };
    let costs: Vec<f64> = (1..n).map(|k| cost(&x[..k]) + cost(&x[k..])).collect();
    let best = costs.iter().copied().fold(f64::INFINITY, f64::min);
    let mut out = vec![0.0; n];
    if best <= 0.0 {
        // Exact levels: every position of least cost is equally likely.
        let ties: Vec<usize> = (0..costs.len()).filter(|&i| costs[i] <= 0.0).collect();
        for &i in &ties {
            out[i + 1] = 1.0 / ties.len() as f64;
        }
        return out;
    }
    let b = TEMPER * best / n as f64;
    let mut total = 0.0;
    for (i, c) in costs.iter().enumerate() {
        let w = (-(c - best) / b).exp();
        out[i + 1] = w;
        total += w;
    }
    for w in &mut out {
        *w /= total;
    }
    out
}

/// The positions holding all but `leave` of the probability, most likely
/// first, each with its probability.
pub fn plausible(p: &[f64], leave: f64) -> Vec<(usize, f64)> {
    let mut order: Vec<(usize, f64)> = p
        .iter()
        .copied()
        .enumerate()
        .filter(|&(_, w)| w > 0.0)
        .collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut kept = Vec::new();
    let mut mass = 0.0;
    for (i, w) in order {
        if mass >= 1.0 - leave {
            break;
        }
        mass += w;
        kept.push((i, w));
    }
    kept
}

/// One change seen by several series: each list holds one series' places
/// (any key) with their probabilities. If they share one place, the joint
/// probability of a place is the product of theirs (a place a list leaves
/// out counts as [`ABSENT`]); normalised, most likely first, and cut to the
/// places holding all but `leave` of it.
pub fn combine<K: Ord + Clone>(lists: &[Vec<(K, f64)>], leave: f64) -> Vec<(K, f64)> {
    let mut keys: Vec<K> = lists.iter().flatten().map(|(k, _)| k.clone()).collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        return Vec::new();
    }
    let mut logs = vec![0.0f64; keys.len()];
    for list in lists {
        let total: f64 = list.iter().map(|e| e.1.max(0.0)).sum();
        if total <= 0.0 {
            continue;
        }
        for (i, k) in keys.iter().enumerate() {
            let w = list
                .iter()
                .find(|e| &e.0 == k)
                .map_or(0.0, |e| e.1.max(0.0) / total);
            logs[i] += w.max(ABSENT).ln();
        }
    }
    let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let weights: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
    let total: f64 = weights.iter().sum();
    let p: Vec<f64> = weights.iter().map(|w| w / total).collect();
    plausible(&p, leave)
        .into_iter()
        .map(|(i, w)| (keys[i].clone(), w))
        .collect()
}

/// The probability a series gives a place it did not list: it found the
/// change elsewhere, but one series can be wrong.
pub const ABSENT: f64 = 1e-4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    #[test]
    fn a_clean_step_is_certain_and_a_point_at_the_edge_splits_it() {
        let mut rng = SplitMix64::new(5);
        let mut x: Vec<f64> = (0..30).map(|_| 100.0 + rng.normal()).collect();
        x.extend((0..10).map(|_| 110.0 + rng.normal()));
        let p = step_position(&x);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(p[30] > 0.999, "{}", p[30]);
        // The last old point reads halfway: both places are plausible.
        x[29] = 105.0;
        let p = step_position(&x);
        let top = plausible(&p, 0.01);
        let places: Vec<usize> = top.iter().map(|t| t.0).collect();
        assert!(places.contains(&29) && places.contains(&30), "{top:?}");
        assert!(p[29] > 0.05 && p[30] > 0.05, "{} {}", p[29], p[30]);
    }

    #[test]
    fn series_that_agree_sharpen_the_place() {
        let a = vec![("c31", 0.6), ("c30", 0.4)];
        let b = vec![("c31", 0.7), ("c30", 0.3)];
        let both = combine(&[a.clone(), b], 0.0);
        assert_eq!(both[0].0, "c31");
        assert!(both[0].1 > 0.7, "{both:?}");
        // A series that saw it elsewhere leaves both places possible.
        let c = vec![("c29", 1.0)];
        let all = combine(&[a, c], 0.001);
        assert!(all.iter().any(|e| e.0 == "c29") && all.iter().any(|e| e.0 == "c31"));
        assert!((all.iter().map(|e| e.1).sum::<f64>() - 1.0).abs() < 0.01);
    }

    #[test]
    fn the_plausible_places_hold_the_true_one() {
        // 2-sigma steps: several places plausible, the true one among the
        // 99% set nearly always (the rate is a binomial estimate; 200 trials).
        let mut rng = SplitMix64::new(9);
        let (mut covered, mut sizes) = (0, 0);
        for _ in 0..200 {
            let mut x: Vec<f64> = (0..30).map(|_| rng.normal()).collect();
            x.extend((0..10).map(|_| 2.0 + rng.normal()));
            let top = plausible(&step_position(&x), 0.01);
            sizes += top.len();
            covered += usize::from(top.iter().any(|t| t.0 == 30));
        }
        assert!(covered >= 188, "{covered}");
        assert!(sizes > 400, "{sizes}");
    }
}
