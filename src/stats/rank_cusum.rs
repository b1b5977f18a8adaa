//! Change points with a calibrated false-alarm rate (tardy's default detector;
//! [`super::changepoint`] is Otava's, kept exact for `--otava`).
//!
//! Why not Otava's test: E-Divisive picks the split that *maximises* a
//! divergence and then tests it with an ordinary t-test, so the p-value ignores
//! the search and is far too small: on pure noise it raises a false alert in
//! most long series. Here the search is part of the null:
//!
//! 1. *Seeded intervals* (Kovács, Li, Bühlmann & Munk, "Seeded binary
//!    segmentation", Biometrika 2023): at every length from [`MIN_LEN`]
//!    points up to the whole series, doubling, intervals a quarter (above 96
//!    points half) of their length apart on a grid fixed from the series' start (so a growing
//!    series only gains intervals, and the newest points are always covered).
//! 2. In each interval, the *rank CUSUM*: for every split, the standardised
//!    Mann-Whitney statistic of the points before against the points after
//!    (mid-ranks, tie-corrected variance). Ranks make it indifferent to the
//!    noise's shape (lognormal, heavy tails, bimodal) and bound the edges.
//! 3. The statistic is divided by √f (measured again on the residuals once
//!    change points are found), f the *long-run variance factor* of the
//!    series (1 for independent points; about (1+ρ)/(1-ρ) for AR(1)), estimated
//!    from squared differences of ranks at short and long lags (medians, so
//!    the pairs that straddle a level shift barely move it) and autocorrelated noise is
//!    not taken for change. f is never taken below 1.
//! 4. *Narrowest over threshold* (Baranowski, Chen & Fryzlewicz 2019): among
//!    intervals whose maximum reaches the threshold and that hold no change
//!    point found so far, the narrowest gives the next change point, at its
//!    arg-max.
//!
//! The threshold is the (1 - α_N) quantile of the maximum over *all* seeded
//! intervals of a series of N independent points — the same for any
//! continuous distribution, because only ranks enter — simulated once by
//! `examples/cp_calibrate.rs` and stored in [`super::rank_cusum_null`]. α_N is
//! the false-alarm rate per 1,000 points scaled to N points, so a noise series
//! of N points gets any false alert with probability α·N/1000 at most.
//! docs/changepoints.md measures it on many kinds of noise.

use super::changepoint::{ChangePoint, Stats, segment_stats};
use super::dist::normal_quantile;
use super::rank_cusum_null;

/// The shortest interval searched.
pub const MIN_LEN: usize = 12;
/// Below this many points a change cannot reach the default rate: even a step
/// with every point after it above every point before needs about 12 a side.
pub const MIN_POINTS: usize = 24;
/// Splits closer than this to an interval's edge are not considered.
pub const EDGE: usize = 3;

/// The knobs of the calibrated detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Probability of any false alert in 1,000 points of noise (default 0.01).
    pub false_alarm: f64,
    /// Drop change points whose relative change is at most this (as Otava's -M).
    pub min_magnitude: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            false_alarm: 0.01,
            min_magnitude: 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionsError {
    #[error("--false-alarm-rate must be in (0, 0.5], got {0}")]
    FalseAlarm(f64),
    #[error("--min-magnitude must be >= 0, got {0}")]
    Magnitude(f64),
}

impl Options {
    pub fn validate(&self) -> Result<(), OptionsError> {
        if !(self.false_alarm > 0.0 && self.false_alarm <= 0.5) {
            return Err(OptionsError::FalseAlarm(self.false_alarm));
        }
        if self.min_magnitude.is_nan() || self.min_magnitude < 0.0 {
            return Err(OptionsError::Magnitude(self.min_magnitude));
        }
        Ok(())
    }

    /// The level for a series of `n` points: α·n/1000, at most 0.5.
    pub fn level(&self, n: usize) -> f64 {
        (self.false_alarm * n as f64 / 1000.0).min(0.5)
    }
}

/// The seeded intervals of a series of `n` points, `[start, end)`: at every
/// length l = 12·2^k up to n, the intervals starting at multiples of l/4
/// (l/2 above 96 points), and the whole series. The grid is fixed from the series' start, so a series
/// that grows keeps every interval it had and gains new ones (plus the one
/// whole-series interval, which moves): detection after every upload tests
/// each interval about once, and the false-alarm rate of a series checked
/// after every upload stays near that of one check of the whole
/// (docs/changepoints.md). The
/// quarter-length step keeps the newest points covered: the last interval of
/// every length ends within l/4 of the end.
pub fn seeded_intervals(n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut l = MIN_LEN;
    while l <= n {
        // A quarter step keeps the newest points covered by the short intervals
        // that see a fresh step first; long ones overlap by half.
        let step = if l <= 96 { l / 4 } else { l / 2 };
        let mut s = 0;
        while s + l <= n {
            out.push((s, s + l));
            s += step;
        }
        l *= 2;
    }
    // And the whole series, the most powerful for one change in a short one.
    if n >= MIN_LEN && out.last() != Some(&(0, n)) {
        out.push((0, n));
    }
    out
}

/// The maximum of the standardised rank CUSUM of `x` over the splits
/// `EDGE..=n-EDGE` (a split k: the first k points against the rest: the
/// Mann-Whitney statistic with mid-ranks and tie-corrected variance), and where
/// it is.
pub fn max_rank_cusum(x: &[f64]) -> (f64, usize) {
    max_rank_cusum_dense(&dense_ranks(x), &mut Vec::new(), &mut Vec::new())
}

/// Dense ranks of `x` (equal values share one), the form every interval's
/// ranks are taken from: sorting integer keys is several times faster than
/// sorting floats with their positions, and it is done once per interval.
fn dense_ranks(x: &[f64]) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..x.len() as u32).collect();
    idx.sort_unstable_by(|&a, &b| x[a as usize].total_cmp(&x[b as usize]));
    let mut out = vec![0u32; x.len()];
    let mut rank = 0u32;
    for w in 0..idx.len() {
        if w > 0 && x[idx[w] as usize] != x[idx[w - 1] as usize] {
            rank += 1;
        }
        out[idx[w] as usize] = rank;
    }
    out
}

/// [`max_rank_cusum`] of the interval whose dense ranks are `d` (the same
/// numbers: the order and the ties are the interval's own).
fn max_rank_cusum_dense(d: &[u32], keys: &mut Vec<u64>, ranks: &mut Vec<f64>) -> (f64, usize) {
    let n = d.len();
    if n < 2 * EDGE {
        return (0.0, 0);
    }
    keys.clear();
    keys.extend(
        d.iter()
            .enumerate()
            .map(|(i, &r)| ((r as u64) << 32) | i as u64),
    );
    keys.sort_unstable();
    ranks.clear();
    ranks.resize(n, 0.0);
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && keys[j] >> 32 == keys[i] >> 32 {
            j += 1;
        }
        let mid = (i + j + 1) as f64 / 2.0;
        for k in &keys[i..j] {
            ranks[(k & 0xFFFF_FFFF) as usize] = mid;
        }
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    cusum_max(ranks, ties)
}

/// The largest standardised CUSUM of centred mid-ranks over the splits
/// `EDGE..=n-EDGE`, and where it is.
fn cusum_max(ranks: &[f64], ties: f64) -> (f64, usize) {
    let n = ranks.len();
    let nf = n as f64;
    let center = (nf + 1.0) / 2.0;
    // Var(S_k) = k(n-k)/12 * ((n+1) - ties/(n(n-1))).
    let c = ((nf + 1.0) - ties / (nf * (nf - 1.0))) / 12.0;
    if c <= 0.0 {
        return (0.0, 0);
    }
    // The largest s²/(k(n-k)), one square root at the end.
    let mut s = 0.0;
    let mut best = (0.0f64, 0usize);
    for (k, &r) in ranks.iter().enumerate().take(n - EDGE) {
        s += r - center;
        let kk = (k + 1) as f64;
        if k + 1 < EDGE {
            continue;
        }
        let z2 = s * s / (kk * (nf - kk));
        if z2 > best.0 {
            best = (z2, k + 1);
        }
    }
    ((best.0 / c).sqrt(), best.1)
}

/// Every seeded interval's maximum statistic (unscaled) and its split.
fn all_intervals(x: &[f64]) -> Vec<((usize, usize), f64, usize)> {
    let d = dense_ranks(x);
    let mut keys = Vec::new();
    let mut ranks = Vec::new();
    seeded_intervals(x.len())
        .into_iter()
        .map(|(s, e)| {
            let (z, k) = max_rank_cusum_dense(&d[s..e], &mut keys, &mut ranks);
            ((s, e), z, k)
        })
        .collect()
}

/// The long-run variance factor f of the series (≥ 1), from the pairs of
/// points that lie between the same `boundaries` (sorted indices where a level
/// may have shifted), so a step does not pass for correlation. On the ranks'
/// normal scores, q_h is the mean of squared differences at lag h with the
/// largest tenth left out, ρ_h = 1 - q_h / q_far (q_far at lags 8..=12, where
/// correlation has died), and f the larger of the Bartlett sum 1 + 2 Σ w_h ρ_h
/// over lags 1..=4 and the AR(1) value (1+ρ_1)/(1-ρ_1). A ρ_1 below 2/√n (the
/// estimate's own noise) counts as none. Series shorter than 40 points get 1.
pub fn long_run_factor(x: &[f64], boundaries: &[usize]) -> f64 {
    const L: usize = 4;
    const FAR: std::ops::RangeInclusive<usize> = 8..=12;
    let n = x.len();
    if n < 40 {
        return 1.0;
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_unstable_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; n];
    for (rank, &i) in idx.iter().enumerate() {
        r[i] = normal_quantile((rank as f64 + 0.5) / n as f64);
    }
    // seg[t]: how many boundaries are at or before t.
    let mut seg = vec![0usize; n];
    let mut b = 0;
    for (t, s) in seg.iter_mut().enumerate() {
        while b < boundaries.len() && boundaries[b] <= t {
            b += 1;
        }
        *s = b;
    }
    let mut buf = Vec::with_capacity(n);
    let mut q = |h: usize| -> Option<f64> {
        buf.clear();
        buf.extend(
            (h..n)
                .filter(|&t| seg[t] == seg[t - h])
                .map(|t| (r[t] - r[t - h]).powi(2)),
        );
        if buf.len() < 10 {
            return None;
        }
        let keep = buf.len() - buf.len() / 10;
        buf.select_nth_unstable_by(keep - 1, f64::total_cmp);
        Some(buf[..keep].iter().sum::<f64>() / keep as f64)
    };
    let far: Vec<f64> = FAR.filter_map(&mut q).collect();
    if far.is_empty() {
        return 1.0;
    }
    let far = far.iter().sum::<f64>() / far.len() as f64;
    if far <= 0.0 {
        return 1.0;
    }
    let mut bartlett = 1.0;
    let mut rho1 = 0.0;
    for h in 1..=L {
        let Some(qh) = q(h) else { continue };
        let rho = (1.0 - qh / far).clamp(-1.0, 0.95);
        if h == 1 {
            rho1 = rho;
        }
        bartlett += 2.0 * (1.0 - h as f64 / (L + 1) as f64) * rho;
    }
    if rho1 < 2.0 / (n as f64).sqrt() {
        return 1.0;
    }
    let ar1 = (1.0 + rho1) / (1.0 - rho1);
    bartlett.max(ar1).clamp(1.0, 25.0)
}

/// The largest scaled statistic over all seeded intervals of `x` (what the
/// threshold is calibrated against). Used by the calibration and its tests.
pub fn max_statistic(x: &[f64]) -> f64 {
    all_intervals(x).iter().map(|i| i.1).fold(0.0, f64::max)
}

/// A change point as the calibrated detector found it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub index: usize,
    /// The scaled statistic.
    pub statistic: f64,
    /// P(the maximum over a noise series of this length ≥ the statistic).
    pub pvalue: f64,
    /// The interval it was found in.
    pub interval: (usize, usize),
}

/// What one detection gives: the change points (sorted, with the statistics of
/// the segments either side, `stats.pvalue` the calibrated p-value) and the
/// long-run variance factor used.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detection {
    pub change_points: Vec<ChangePoint>,
    pub found: Vec<Found>,
    pub long_run_factor: f64,
}

/// Change points of `series` at the options' false-alarm rate.
pub fn detect(series: &[f64], opts: &Options) -> Detection {
    let n = series.len();
    if opts.validate().is_err() || n < MIN_LEN || series.iter().any(|v| !v.is_finite()) {
        return Detection {
            long_run_factor: 1.0,
            ..Detection::default()
        };
    }
    let threshold = rank_cusum_null::threshold(n, opts.level(n));
    // First where the levels might shift, without any correction; then the
    // noise's correlation from the pairs that do not straddle those places, and
    // the search again with it. On pure noise the first pass's shifts are
    // spurious, few pairs straddle them, and the correlation is still seen.
    let stats = all_intervals(series);
    let rough = search(&stats, n, 1.0, threshold);
    let cuts: Vec<usize> = rough.iter().map(|c| c.index).collect();
    let f = long_run_factor(series, &cuts);
    let mut found = if f > 1.0 {
        search(&stats, n, f, threshold)
    } else {
        rough
    };
    let mut change_points = with_stats(series, &found);
    if opts.min_magnitude > 0.0 {
        let keep: Vec<Found> = found
            .iter()
            .zip(&change_points)
            .filter(|(_, c)| c.stats.magnitude() > opts.min_magnitude)
            .map(|(f, _)| *f)
            .collect();
        if keep.len() != found.len() {
            found = keep;
            change_points = with_stats(series, &found);
        }
    }
    Detection {
        change_points,
        found,
        long_run_factor: f,
    }
}

/// Narrowest over threshold over the intervals' statistics scaled by 1/√f:
/// the change points, sorted by index.
fn search(stats: &[((usize, usize), f64, usize)], n: usize, f: f64, threshold: f64) -> Vec<Found> {
    let scale = 1.0 / f.sqrt();
    // Every interval over the threshold, narrowest first (then the strongest).
    let mut over: Vec<Found> = stats
        .iter()
        .filter_map(|&((s, e), z, k)| {
            let z = z * scale;
            (z >= threshold).then(|| Found {
                index: s + k,
                statistic: z,
                pvalue: rank_cusum_null::pvalue(n, z),
                interval: (s, e),
            })
        })
        .collect();
    over.sort_by(|a, b| {
        (a.interval.1 - a.interval.0)
            .cmp(&(b.interval.1 - b.interval.0))
            .then(b.statistic.total_cmp(&a.statistic))
    });
    let mut found: Vec<Found> = Vec::new();
    for cand in over {
        let (s, e) = cand.interval;
        // An interval that holds a change point already found is spent.
        if found.iter().any(|c| c.index > s && c.index < e) {
            continue;
        }
        found.push(cand);
    }
    found.sort_by_key(|c| c.index);
    found
}

/// The statistics of the segments either side of each change point, with the
/// calibrated p-value.
fn with_stats(series: &[f64], found: &[Found]) -> Vec<ChangePoint> {
    let mut out = Vec::with_capacity(found.len());
    for (i, c) in found.iter().enumerate() {
        let start = if i == 0 { 0 } else { found[i - 1].index };
        let end = found.get(i + 1).map_or(series.len(), |n| n.index);
        let stats: Stats = segment_stats(&series[start..c.index], &series[c.index..end]);
        out.push(ChangePoint {
            index: c.index,
            stats: Stats {
                pvalue: c.pvalue,
                ..stats
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn normal(rng: &mut SplitMix64) -> f64 {
        rng.normal()
    }

    #[test]
    fn intervals_cover_every_scale_and_only_grow() {
        let iv = seeded_intervals(100);
        assert!(iv.contains(&(0, 12)) && iv.contains(&(0, 96)));
        assert!(iv.iter().all(|&(s, e)| e <= 100 && e - s >= MIN_LEN));
        // The last interval of every length ends within a quarter length of the end.
        let mut lens: Vec<usize> = iv.iter().map(|&(s, e)| e - s).collect();
        lens.sort_unstable();
        lens.dedup();
        for l in lens {
            let last = iv
                .iter()
                .filter(|i| i.1 - i.0 == l)
                .map(|i| i.1)
                .max()
                .unwrap();
            assert!(100 - last < l.div_ceil(4), "{l}");
        }
        // A longer series keeps every interval of a shorter one but the whole.
        let more = seeded_intervals(150);
        assert!(
            iv.iter()
                .filter(|i| **i != (0, 100))
                .all(|i| more.contains(i))
        );
        assert!(iv.contains(&(0, 100)));
        assert!(seeded_intervals(MIN_LEN - 1).is_empty());
    }

    #[test]
    fn rank_cusum_finds_a_clean_step_where_it_is() {
        // Distinct values in a scrambled order, the last 15 all above the first 25.
        let x: Vec<f64> = (0..40)
            .map(|i| ((i * 7) % 40) as f64 * 1e-3 + if i < 25 { 0.0 } else { 5.0 })
            .collect();
        let (z, k) = max_rank_cusum(&x);
        assert_eq!(k, 25);
        // Complete separation: z = sqrt(3 k (n-k) / (n+1)).
        let want = (3.0 * 25.0 * 15.0 / 41.0f64).sqrt();
        assert!((z - want).abs() < 1e-9, "{z} {want}");
        // Constant data: no statistic.
        assert_eq!(max_rank_cusum(&[1.0; 30]).0, 0.0);
    }

    /// Mid-ranks by counting, the tie-corrected variance and every split's
    /// standardised sum, the slow obvious way.
    fn brute(x: &[f64]) -> (f64, usize) {
        let n = x.len();
        let nf = n as f64;
        let rank = |v: f64| {
            let below = x.iter().filter(|&&y| y < v).count() as f64;
            let equal = x.iter().filter(|&&y| y == v).count() as f64;
            below + (equal + 1.0) / 2.0
        };
        let ties: f64 = x
            .iter()
            .map(|&v| {
                let t = x.iter().filter(|&&y| y == v).count() as f64;
                // t²-1 for each member: t³-t per tie group.
                t * t - 1.0
            })
            .sum();
        let c = ((nf + 1.0) - ties / (nf * (nf - 1.0))) / 12.0;
        let mut best = (0.0, 0);
        for k in EDGE..=n - EDGE {
            let s: f64 = x[..k].iter().map(|&v| rank(v) - (nf + 1.0) / 2.0).sum();
            let kk = k as f64;
            let z = s.abs() / (kk * (nf - kk) * c).sqrt();
            if z > best.0 + 1e-12 {
                best = (z, k);
            }
        }
        best
    }

    #[test]
    fn the_rank_cusum_equals_the_textbook_statistic() {
        let mut rng = SplitMix64::new(5);
        // Values with many ties, as coarse timers give, and without.
        for coarse in [true, false] {
            let x: Vec<f64> = (0..120)
                .map(|i| {
                    let v = rng.normal() * 3.0 + if i >= 70 { 2.0 } else { 0.0 };
                    if coarse { v.round() } else { v }
                })
                .collect();
            for (s, e) in seeded_intervals(x.len()) {
                let a = max_rank_cusum(&x[s..e]);
                let b = brute(&x[s..e]);
                assert!((a.0 - b.0).abs() < 1e-9, "{s}..{e}: {a:?} {b:?}");
                assert_eq!(a.1, b.1, "{s}..{e}");
            }
        }
    }

    #[test]
    fn the_long_run_factor_is_one_for_noise_and_grows_with_autocorrelation() {
        let mut rng = SplitMix64::new(3);
        let iid: Vec<f64> = (0..2000).map(|_| normal(&mut rng)).collect();
        let f = long_run_factor(&iid, &[]);
        assert!(f < 1.3, "{f}");
        let mut ar = vec![0.0; 2000];
        for t in 1..2000 {
            ar[t] = 0.6 * ar[t - 1] + normal(&mut rng);
        }
        let f = long_run_factor(&ar, &[]);
        assert!(f > 2.2, "{f}");
        // A big level shift does not look like autocorrelation once the pairs
        // that straddle it are left out.
        let step: Vec<f64> = iid
            .iter()
            .enumerate()
            .map(|(i, v)| v + if i >= 1000 { 10.0 } else { 0.0 })
            .collect();
        let f = long_run_factor(&step, &[1000]);
        assert!(f < 1.3, "{f}");
        // Nor, once measured around the step found, in a short series where
        // many pairs straddle it.
        let short: Vec<f64> = iid[..80]
            .iter()
            .enumerate()
            .map(|(i, v)| v + if i >= 50 { 10.0 } else { 0.0 })
            .collect();
        let d = detect(&short, &Options::default());
        assert_eq!(d.change_points.len(), 1);
        assert!(d.long_run_factor < 1.3, "{}", d.long_run_factor);
    }

    #[test]
    fn a_step_is_found_and_noise_is_not() {
        let mut rng = SplitMix64::new(11);
        let opts = Options::default();
        let mut hits = 0;
        let mut false_alerts = 0;
        for _ in 0..40 {
            let noise: Vec<f64> = (0..500).map(|_| 100.0 + 2.0 * normal(&mut rng)).collect();
            false_alerts += usize::from(!detect(&noise, &opts).change_points.is_empty());
            let step: Vec<f64> = noise
                .iter()
                .enumerate()
                .map(|(i, v)| v + if i >= 470 { 6.0 } else { 0.0 })
                .collect();
            let d = detect(&step, &opts);
            hits += usize::from(
                d.change_points.len() == 1 && d.change_points[0].index.abs_diff(470) <= 3,
            );
        }
        assert!(hits >= 36, "{hits}");
        assert!(false_alerts <= 2, "{false_alerts}");
    }
}
