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
use super::jump;
use super::jump_null;
use super::rank_cusum_null;

/// The shortest interval searched.
pub const MIN_LEN: usize = 24;
/// Below this many points no change can be called: the end test
/// ([`super::sequential`]) needs its shortest tail and a reference of
/// [`super::sequential::MIN_REFERENCE`] points before it (the whole-series
/// search needs [`MIN_LEN`]).
pub const MIN_POINTS: usize = super::sequential::MIN_REFERENCE + super::sequential::TAILS[0];
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
}

/// One scale of the seeded intervals: intervals of `len` points starting at
/// every multiple of `step` from the series' start, and the one that ends at
/// the newest multiple of `grid` (so the newest points are in an interval of
/// every scale, however long).
///
/// The thresholds are calibrated for the whole *family* of the scale: every
/// interval of `len` points that ends at a multiple of `grid` (`step` is a
/// multiple of `grid`, so the grid's intervals are members). Any check of any
/// prefix of a series tests members of its family only, so the false-alarm
/// rate holds however often the series is checked as it grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub len: usize,
    pub step: usize,
    pub grid: usize,
}

/// The k-th scale. Up to 96 points half an octave apart (24, 36, 48, 72, 96:
/// a short series needs an interval near its own length), then doubling
/// (192, 384, ...). Intervals start a quarter of their length apart up to 96
/// points (the short intervals find short-lived changes anywhere), half
/// above; the newest interval of a scale ends at a multiple of its grid: l/8
/// up to 96 points (3 for 36), 12 up to 768, l/32 above.
pub fn scale(k: usize) -> Scale {
    const SHORT: [usize; 5] = [24, 36, 48, 72, 96];
    if let Some(&len) = SHORT.get(k) {
        let grid = if len == 36 { 3 } else { len / 8 };
        return Scale {
            len,
            step: len / 4,
            grid,
        };
    }
    let len = 96usize << (k + 1 - SHORT.len()).min(40);
    let grid = if len <= 768 { 12 } else { len / 32 };
    Scale {
        len,
        step: len / 2,
        grid,
    }
}

/// The seeded intervals of a series of `n` points, `[start, end)`, with the
/// index of their scale: at every scale ([`scale`]) whose length fits, every
/// interval of the grid fixed from the series' start that ends by `n` (for
/// the half-octave scales 36 and 72, those starting in the last three lengths),
/// and the one ending at the newest multiple of the scale's `grid`. Each belongs to its
/// scale's family and is judged against its scale's threshold only, so a
/// series checked after every upload is held to the same false-alarm rate as
/// one check of the whole.
pub fn seeded_intervals(n: usize) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut k = 0;
    loop {
        let Scale { len, step, grid } = scale(k);
        if len > n {
            break;
        }
        // The half-octave scales (36, 72) are there for short series and
        // fresh changes: in a long one only their intervals near the end are
        // tested (a subset of their family, so the rate still holds; a change
        // further back was tested by them when it was fresh).
        let from = if matches!(len, 36 | 72) {
            n.saturating_sub(3 * len)
        } else {
            0
        };
        let mut s = 0;
        while s + len <= n {
            if s >= from {
                out.push((s, s + len, k));
            }
            s += step;
        }
        let newest = n / grid * grid;
        if newest >= len && newest > s - step + len {
            out.push((newest - len, newest, k));
        }
        k += 1;
    }
    out
}

/// The maximum of the standardised rank CUSUM of `x` over the splits
/// `EDGE..=n-EDGE` (a split k: the first k points against the rest: the
/// Mann-Whitney statistic with mid-ranks and tie-corrected variance), and where
/// it is.
pub fn max_rank_cusum(x: &[f64]) -> (f64, usize) {
    max_rank_cusum_dense(
        &dense_ranks(x),
        &mut Vec::new(),
        &mut Vec::new(),
        &mut Vec::new(),
    )
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
fn max_rank_cusum_dense(
    d: &[u32],
    keys: &mut Vec<u64>,
    ranks: &mut Vec<f64>,
    inv: &mut Vec<f64>,
) -> (f64, usize) {
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
    cusum_of_sorted(keys, 0, ranks, inv)
}

/// [`max_rank_cusum_dense`] of the interval starting at `offset` whose keys
/// (dense rank << 32 | position) are `keys`, sorted.
fn cusum_of_sorted(
    keys: &[u64],
    offset: usize,
    ranks: &mut Vec<f64>,
    inv: &mut Vec<f64>,
) -> (f64, usize) {
    let n = keys.len();
    if n < 2 * EDGE {
        return (0.0, 0);
    }
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
            ranks[(k & 0xFFFF_FFFF) as usize - offset] = mid;
        }
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    cusum_max(ranks, ties, inv)
}

/// The largest standardised CUSUM of centred mid-ranks over the splits
/// `EDGE..=n-EDGE`, and where it is.
fn cusum_max(ranks: &[f64], ties: f64, inv: &mut Vec<f64>) -> (f64, usize) {
    let n = ranks.len();
    // 1/(k(n-k)) for every split, kept while the length stays the same (the
    // intervals of one scale): a multiplication instead of a division.
    if inv.len() != n {
        inv.clear();
        inv.extend((0..n).map(|k| {
            let kk = (k + 1) as f64;
            1.0 / (kk * (n as f64 - kk))
        }));
    }
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
        if k + 1 < EDGE {
            continue;
        }
        let z2 = s * s * inv[k];
        if z2 > best.0 {
            best = (z2, k + 1);
        }
    }
    ((best.0 / c).sqrt(), best.1)
}

/// One seeded interval's maximum statistic (unscaled) and where it is.
#[derive(Debug, Clone, Copy, PartialEq)]
struct IntervalMax {
    start: usize,
    end: usize,
    scale: usize,
    z: f64,
    split: usize,
}

/// Every seeded interval's maximum statistic (unscaled) and its split. (Each
/// interval's keys are sorted afresh: keeping a sorted window and sliding it
/// along a scale was measured slower, the moves costing more than the sorts.)
fn all_intervals(x: &[f64]) -> Vec<IntervalMax> {
    let d = dense_ranks(x);
    let key = |p: usize| ((d[p] as u64) << 32) | p as u64;
    let (mut window, mut ranks, mut inv) = (Vec::new(), Vec::new(), Vec::new());
    seeded_intervals(x.len())
        .into_iter()
        .map(|(start, end, scale)| {
            window.clear();
            window.extend((start..end).map(key));
            window.sort_unstable();
            let (z, split) = cusum_of_sorted(&window, start, &mut ranks, &mut inv);
            IntervalMax {
                start,
                end,
                scale,
                z,
                split,
            }
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
    // Too few pairs between the boundaries (a short series cut by spurious
    // shifts) says nothing; taking that for "independent" would let
    // autocorrelated noise through, so the pairs across them are used.
    long_run_factor_of(&normal_scores(x), boundaries)
}

fn long_run_factor_of(r: &[f64], boundaries: &[usize]) -> f64 {
    estimate_long_run_factor(r, boundaries)
        .or_else(|| estimate_long_run_factor(r, &[]))
        .unwrap_or(1.0)
}

/// The ranks' normal scores: the normal quantile of (rank + ½)/n at each
/// point (ties in the order sorted), computed for half the ranks and
/// mirrored.
fn normal_scores(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_unstable_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut r = vec![0.0; n];
    for rank in 0..n.div_ceil(2) {
        let q = normal_quantile((rank as f64 + 0.5) / n as f64);
        r[idx[rank]] = q;
        r[idx[n - 1 - rank]] = -q;
    }
    if n % 2 == 1 {
        r[idx[n / 2]] = 0.0;
    }
    r
}

/// The normal scores of each segment between `cuts` on its own (a
/// segment's ranks among its own points): moving a segment's level, as a
/// larger step does, leaves them as they are, so neither estimate of the
/// correlation below can read a step's size as correlation, and a larger
/// step is never judged against a larger factor.
fn segment_scores(x: &[f64], cuts: &[usize]) -> Vec<f64> {
    let n = x.len();
    let mut out = Vec::with_capacity(n);
    for (a, b) in segments(n, cuts) {
        out.extend(normal_scores(&x[a..b]));
    }
    out
}

/// The segments `[a, b)` between `cuts` (sorted or not; outside ones
/// ignored).
fn segments(n: usize, cuts: &[usize]) -> Vec<(usize, usize)> {
    let mut bounds: Vec<usize> = std::iter::once(0)
        .chain(cuts.iter().copied().filter(|&c| c > 0 && c < n))
        .chain(std::iter::once(n))
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    bounds.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Series shorter than this get no Bartlett estimate ([`long_run_factor`]):
/// on 40-100 points its gate lets independent noise through one time in
/// fifteen (and a step's complete separation with it), and the lag-1
/// estimate ([`lag_one_factor`]) covers them.
pub const BARTLETT_MIN: usize = 100;

/// A floor on f for short series, 1 + [`SHORT_FLOOR`]/n: 1.33 at 24
/// points, 1.13 at 60, 1.01 at 1,000. In under 60 points no estimate tells
/// AR(1) noise of ρ = 0.8 from independent noise reliably (its first
/// search's spurious cut absorbs the wander); this keeps the false alarms
/// of such a series checked at every point up to 60 near 1% (it was 4%),
/// and still lets a complete separation of 20 points a side through.
pub const SHORT_FLOOR: f64 = 8.0;

/// f from the lag-1 autocorrelation of the scores `r` (per segment,
/// [`segment_scores`]) within the segments between `cuts` (each segment's
/// own mean removed, so a level shift found is not taken for correlation),
/// for series of any length the search runs on. The estimate is corrected
/// for its bias (about (1 + 4ρ)/L in segments of L points: short segments
/// hide correlation) and counts only when it is above two of its standard
/// errors (1/√pairs): independent noise passes for correlated one time in
/// forty. When it counts, one standard error more is taken, on the safe
/// side, and f = (1+ρ)/(1-ρ).
fn lag_one_factor(r: &[f64], cuts: &[usize]) -> f64 {
    let (mut num, mut den, mut pairs, mut count, mut points) = (0.0, 0.0, 0usize, 0usize, 0usize);
    for (a, b) in segments(r.len(), cuts) {
        let seg = &r[a..b];
        if seg.len() < 4 {
            continue;
        }
        let mean = seg.iter().sum::<f64>() / seg.len() as f64;
        for t in 0..seg.len() {
            let e = seg[t] - mean;
            den += e * e;
            if t > 0 {
                num += e * (seg[t - 1] - mean);
                pairs += 1;
            }
        }
        count += 1;
        points += seg.len();
    }
    if pairs < 16 || den <= 0.0 {
        return 1.0;
    }
    let rho = num / den;
    let len = points as f64 / count as f64;
    let corrected = (rho + (1.0 + 4.0 * rho.max(0.0)) / len).min(0.95);
    let se = 1.0 / (pairs as f64).sqrt();
    if corrected < 2.0 * se {
        return 1.0;
    }
    let upper = (corrected + se).min(0.95);
    (1.0 + upper) / (1.0 - upper)
}

/// The long-run variance factor the search is scaled by, given where the
/// levels may shift (`cuts`): the larger of the lag-1 estimate, the
/// Bartlett estimate (series of [`BARTLETT_MIN`] points or more) and the
/// short-series floor, all on each segment's own scores.
fn correlation_factor(series: &[f64], cuts: &[usize]) -> f64 {
    let n = series.len();
    let scores = segment_scores(series, cuts);
    let bartlett = if n >= BARTLETT_MIN {
        long_run_factor_of(&scores, cuts)
    } else {
        1.0
    };
    bartlett
        .max(lag_one_factor(&scores, cuts))
        .max(1.0 + SHORT_FLOOR / n as f64)
}

fn estimate_long_run_factor(r: &[f64], boundaries: &[usize]) -> Option<f64> {
    const L: usize = 4;
    const FAR: std::ops::RangeInclusive<usize> = 8..=12;
    let n = r.len();
    if n < 40 {
        return None;
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
        return None;
    }
    let far = far.iter().sum::<f64>() / far.len() as f64;
    if far <= 0.0 {
        return Some(1.0);
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
        return Some(1.0);
    }
    let ar1 = (1.0 + rho1) / (1.0 - rho1);
    Some(bartlett.max(ar1).clamp(1.0, 25.0))
}

/// The largest statistic over the family of scale `k` in `x` (every interval
/// of its length that ends at a multiple of its grid), what the thresholds are
/// calibrated against (`examples/cp_calibrate.rs`).
pub fn scale_maximum(x: &[f64], k: usize) -> f64 {
    let d = dense_ranks(x);
    let (mut keys, mut ranks, mut inv) = (Vec::new(), Vec::new(), Vec::new());
    let Scale { len, grid, .. } = scale(k);
    let mut best = 0.0f64;
    let mut e = len.div_ceil(grid) * grid;
    while e <= x.len() {
        best = best.max(max_rank_cusum_dense(&d[e - len..e], &mut keys, &mut ranks, &mut inv).0);
        e += grid;
    }
    best
}

/// A change point as the calibrated detector found it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    pub index: usize,
    /// The scaled statistic.
    pub statistic: f64,
    /// The false-alarm rate per 1,000 points at which this statistic, in an
    /// interval of this scale, would just be called a change, times the
    /// series' length in thousands of points (at most 1): the probability that
    /// noise of this length gives a change this strong somewhere.
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

/// The share of the false-alarm rate given to plain steps ([`jump`]).
pub const JUMP_SHARE: f64 = 0.25;

/// Change points of `series` at the options' false-alarm rate.
pub fn detect(series: &[f64], opts: &Options) -> Detection {
    let n = series.len();
    if opts.validate().is_err() || series.iter().any(|v| !v.is_finite()) {
        return Detection {
            long_run_factor: 1.0,
            ..Detection::default()
        };
    }
    // The whole series is searched at the stated rate; its end is also
    // watched (`sequential`) at half of it, and plain steps (`jump`) at a
    // quarter. Together they stay within the rate on every kind of noise
    // simulated (docs/changepoints.md): each alone is well below its own.
    let alpha = opts.false_alarm;
    let half = end_rate(opts);
    let plain = plain_steps(series, alpha * JUMP_SHARE);
    if n < MIN_LEN {
        let mut found = search(&[], n, 1.0, alpha, &plain);
        if let Some(end) = end_found(series, &found, half) {
            found.push(end);
            found.sort_by_key(|c| c.index);
        }
        return finish(series, found, opts, 1.0);
    }
    // First where the levels might shift, without any correction; then the
    // noise's correlation from the pairs that do not straddle those places
    // (nor the plain steps), and the search again with it. On pure noise the
    // first pass's shifts are spurious, few pairs straddle them, and the
    // correlation is still seen.
    let stats = all_intervals(series);
    let rough = search(&stats, n, 1.0, alpha, &plain);
    let cuts: Vec<usize> = rough.iter().map(|c| c.index).collect();
    let f = correlation_factor(series, &cuts);
    let mut found = if f > 1.0 {
        search(&stats, n, f, alpha, &plain)
    } else {
        rough
    };
    if let Some(end) = end_found(series, &found, half) {
        found.push(end);
        found.sort_by_key(|c| c.index);
    }
    finish(series, found, opts, f)
}

/// Plain steps ([`jump`]) over their thresholds at the rate `alpha`, as
/// candidates for the search: for each block length, each run of
/// consecutive splits over the threshold in one direction gives one, at its
/// largest |t|, placed by [`place`] among the points around it; its
/// interval is its two blocks.
fn plain_steps(series: &[f64], alpha: f64) -> Vec<Found> {
    let n = series.len();
    if n < jump::MIN_POINTS {
        return Vec::new();
    }
    let s = jump::noise_scale(series);
    let mut out = Vec::new();
    for m in jump::BLOCKS {
        let thr = jump_null::threshold(m, alpha);
        // The current run of splits over the threshold in one direction:
        // its strongest split, and its first and last.
        let mut run: Option<(jump::Jump, usize, usize)> = None;
        let emit = |(b, first, last): (jump::Jump, usize, usize), out: &mut Vec<Found>| {
            // Placed among the points of the run's blocks: a step at the
            // newest points is inside them however the run ends. A block's
            // median moves once most of it is at the new level, so a step
            // can show with two points after it: it is called only once
            // [`EDGE`] points of the series lie either side of its place.
            let w0 = first.saturating_sub(m);
            let w1 = (last + m).min(n);
            let index = w0 + place_within(&series[w0..w1], 1);
            if index < EDGE || n - index < EDGE {
                return;
            }
            out.push(Found {
                index,
                statistic: b.t.abs().min(f64::MAX),
                pvalue: (jump_null::pvalue(m, b.t) * n as f64 / 1000.0).min(1.0),
                interval: (b.at - m, b.at + m),
            });
        };
        jump::for_each(series, m, s, |j| {
            let over = j.t.abs() >= thr;
            match run {
                Some((b, first, _)) if over && b.t.signum() == j.t.signum() => {
                    let best = if j.t.abs() > b.t.abs() { j } else { b };
                    run = Some((best, first, j.at));
                }
                Some(r) => {
                    emit(r, &mut out);
                    run = over.then_some((j, j.at, j.at));
                }
                None => run = over.then_some((j, j.at, j.at)),
            }
        });
        if let Some(r) = run {
            emit(r, &mut out);
        }
    }
    out
}

/// How many more points at a new level a step of `sigmas` times the
/// series' noise ([`jump::noise_scale`]) needs before [`detect`] calls it,
/// found by running the detector: the series is extended by the step plus
/// its own deviations from its median, in turn (so the new points are as
/// noisy as the old), one point at a time, up to `most`. `None` when the
/// step is not called within `most` points, or the series has no noise to
/// scale by (constant) or too few points to say. What a young series'
/// output tells: "a 4-sigma step would be called after about 12 more
/// points".
pub fn points_needed(series: &[f64], sigmas: f64, opts: &Options, most: usize) -> Option<usize> {
    let n = series.len();
    if n < 4 || series.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let s = jump::noise_scale(series) / jump::small_sample_factor(n - 1);
    if s.is_nan() || s <= 0.0 {
        return None;
    }
    let mut sorted = series.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let median = sorted[n / 2];
    let mut x = series.to_vec();
    for k in 1..=most {
        let dev = series[(k - 1) % n] - median;
        x.push(median + sigmas * s + dev);
        if detect(&x, opts)
            .change_points
            .iter()
            .any(|c| c.index.abs_diff(n) <= EDGE)
        {
            return Some(k);
        }
    }
    None
}

/// The rate the series' end is watched at ([`super::sequential`]): half of
/// the options' (the whole-series search has the other half).
pub fn end_rate(opts: &Options) -> f64 {
    opts.false_alarm / 2.0
}

/// Only the check of the series' end ([`super::sequential`], at half the
/// rate, as in [`detect`]): what a server runs on each test of a suite as
/// an upload arrives, over the points since the test's last change. The
/// whole-series search runs with [`detect`] (`tardy history detect`).
pub fn detect_end(series: &[f64], opts: &Options) -> Detection {
    if opts.validate().is_err() || series.iter().any(|v| !v.is_finite()) {
        return Detection {
            long_run_factor: 1.0,
            ..Detection::default()
        };
    }
    let found: Vec<Found> = end_found(series, &[], end_rate(opts)).into_iter().collect();
    finish(series, found, opts, 1.0)
}

/// Whether the whole-series search could find anything in `series`: a
/// cheap, loose screen a server runs on every test of a suite before the
/// search (which costs ten times more). The search's own statistic over the
/// whole series only (the standardised rank CUSUM at every split, without
/// the correlation factor, which only lowers it): any split above
/// [`SCREEN_Z`] passes. The search's thresholds are higher, so a change it
/// finds passes (`examples/cp_screen.rs`: 1 of 17,000 found changes
/// missed, one inside a shorter interval after another change), while most
/// noise does not. A young series (under [`YOUNG`] points) also passes
/// when its newest points are a plain step ([`jump`], at the loosest rate
/// any detection uses): the end test's short reference is slow to call
/// one there, and the search's plain-step test calls it in 3-6 points.
pub fn screen(series: &[f64]) -> bool {
    let n = series.len();
    if series.iter().any(|v| !v.is_finite()) {
        return false;
    }
    if n < YOUNG && plain_step_at_end(series) {
        return true;
    }
    if n < MIN_LEN {
        return false;
    }
    let keyed = super::summary::sorted_keys(series);
    // Mid-ranks, so ties count as in the search.
    let mut rank = vec![0.0; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && keyed[j + 1].0 == keyed[i].0 {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0;
        for k in &keyed[i..=j] {
            rank[k.1 as usize] = mid;
        }
        i = j + 1;
    }
    let mean = (n - 1) as f64 / 2.0;
    let var = ((n * n) as f64 - 1.0) / 12.0;
    let mut sum = 0.0;
    for (k, r) in rank.iter().enumerate().take(n - EDGE) {
        sum += r - mean;
        let m = k + 1;
        if m < EDGE {
            continue;
        }
        // The first m points' rank sum against its null: Mann-Whitney's.
        let sd = (var * m as f64 * (n - m) as f64 / (n - 1) as f64).sqrt();
        if sd > 0.0 && (sum / sd).abs() > SCREEN_Z {
            return true;
        }
    }
    false
}

/// Series shorter than this are screened for a plain step at their end too
/// ([`screen`]); a server searches them at every upload.
pub const YOUNG: usize = 64;

/// Whether the newest points of `series` are a plain step ([`jump`]) at
/// the largest false-alarm rate a detection may use (0.5 per 1,000
/// points): for each block length, the newest block against the one before.
fn plain_step_at_end(series: &[f64]) -> bool {
    let n = series.len();
    if n < jump::MIN_POINTS {
        return false;
    }
    let s = jump::noise_scale(series);
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        let k = v.len();
        if k % 2 == 1 {
            v[k / 2]
        } else {
            (v[k / 2 - 1] + v[k / 2]) / 2.0
        }
    };
    jump::BLOCKS.iter().filter(|&&m| n >= 2 * m).any(|&m| {
        let d = median(&series[n - m..]) - median(&series[n - 2 * m..n - m]);
        let t = if s > 0.0 {
            d / s
        } else if d != 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
        t.abs() >= jump_null::threshold(m, 0.5 * JUMP_SHARE)
    })
}

/// The screen's bar (see [`screen`]).
pub const SCREEN_Z: f64 = 3.0;

/// A change at the series' end since the last change point found
/// ([`super::sequential`]), placed where the rank CUSUM of the newest
/// points splits best; `None` when there is none or it is one found already.
fn end_found(series: &[f64], found: &[Found], alpha: f64) -> Option<Found> {
    let n = series.len();
    let since = found.last().map_or(0, |c| c.index);
    let end = super::sequential::end_change(&series[since..], alpha)?;
    // The newest points: the tail and enough before it to place the step.
    let w0 = since.max(n.saturating_sub((4 * end.tail).max(48)));
    let window = &series[w0..];
    if window.len() < 2 * EDGE {
        return None;
    }
    let (z, _) = max_rank_cusum(window);
    let index = w0 + place(window);
    if found.iter().any(|c| c.index.abs_diff(index) <= EDGE) {
        return None;
    }
    Some(Found {
        index,
        statistic: z,
        pvalue: (end.rate * n as f64 / 1000.0).min(1.0),
        interval: (w0, n),
    })
}

/// Where a step in `x` is: the split (at least [`EDGE`] points a side) that
/// leaves the least absolute deviation from each side's median. Ranks would
/// place it a point or two off (a standardised rank statistic favours
/// balanced splits, and two high points before a step are only a rank or
/// two from the points after it); values put each point on the side whose
/// level it is at, and medians keep one outlier from moving it.
fn place(x: &[f64]) -> usize {
    place_within(x, EDGE)
}

/// [`place`] with at least `edge` points a side (at least 1).
fn place_within(x: &[f64], edge: usize) -> usize {
    let n = x.len();
    let edge = edge.max(1);
    if n < 2 * edge {
        return n / 2;
    }
    let cost = |v: &[f64]| -> f64 {
        let mut s = v.to_vec();
        s.sort_unstable_by(|a, b| a.total_cmp(b));
        let m = s[s.len() / 2];
        v.iter().map(|&y| (y - m).abs()).sum()
    };
    (edge..=n - edge)
        .map(|k| (cost(&x[..k]) + cost(&x[k..]), k))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(n / 2, |(_, k)| k)
}

/// The change points with their segments' statistics, smaller ones than
/// `--min-magnitude` dropped.
fn finish(series: &[f64], mut found: Vec<Found>, opts: &Options, f: f64) -> Detection {
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

/// Narrowest over threshold over the intervals' statistics scaled by 1/√f,
/// each interval against its scale's threshold at the rate `alpha`: the
/// change points, sorted by index.
fn search(stats: &[IntervalMax], n: usize, f: f64, alpha: f64, plain: &[Found]) -> Vec<Found> {
    let scale = 1.0 / f.sqrt();
    let mut thresholds: Vec<f64> = Vec::new();
    // Every interval over its threshold, narrowest first (then the strongest).
    let mut over: Vec<Found> = Vec::new();
    for i in stats {
        while thresholds.len() <= i.scale {
            thresholds.push(rank_cusum_null::threshold(thresholds.len(), alpha));
        }
        let z = i.z * scale;
        if z >= thresholds[i.scale] {
            over.push(Found {
                index: i.start + i.split,
                statistic: z,
                // The rate at which it would just be called, over this
                // series' length: how often noise of this length gives a
                // change this strong somewhere.
                pvalue: (rank_cusum_null::pvalue(i.scale, z) * n as f64 / 1000.0).min(1.0),
                interval: (i.start, i.end),
            });
        }
    }
    over.extend_from_slice(plain);
    over.sort_by(|a, b| {
        (a.interval.1 - a.interval.0)
            .cmp(&(b.interval.1 - b.interval.0))
            .then(b.statistic.total_cmp(&a.statistic))
    });
    let mut found: Vec<Found> = Vec::new();
    for cand in over {
        let (s, e) = cand.interval;
        // An interval that holds a change point already found is spent,
        // and a place within EDGE points of one is that change again.
        if found
            .iter()
            .any(|c| (c.index > s && c.index < e) || c.index.abs_diff(cand.index) <= EDGE)
        {
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
        let iv = seeded_intervals(200);
        assert!(iv.contains(&(0, 24, 0)) && iv.contains(&(0, 96, 4)) && iv.contains(&(0, 192, 5)));
        let lens: Vec<usize> = (0..9).map(|k| scale(k).len).collect();
        assert_eq!(lens, [24, 36, 48, 72, 96, 192, 384, 768, 1536]);
        // Every interval belongs to its scale's family: its length, ending on
        // the grid. The grid's intervals are members too.
        for k in 0..12 {
            let sc = scale(k);
            assert_eq!(sc.step % sc.grid, 0, "{k}");
            assert_eq!(sc.len % sc.grid, 0, "{k}");
        }
        for n in [24, 50, 100, 199, 200, 1000, 2017, 5000] {
            let iv = seeded_intervals(n);
            assert!(
                iv.iter()
                    .all(|&(s, e, k)| e <= n && e - s == scale(k).len && e % scale(k).grid == 0),
                "{n}"
            );
            // The newest interval of every scale ends within its grid of the end.
            for k in (0..12).filter(|&k| scale(k).len <= n) {
                let last = iv.iter().filter(|i| i.2 == k).map(|i| i.1).max();
                assert!(last.is_some_and(|e| n - e < scale(k).grid), "{n} {k}");
            }
            // No interval twice.
            let mut sorted = iv.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), iv.len(), "{n}");
        }
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
            for (s, e, _) in seeded_intervals(x.len()) {
                let a = max_rank_cusum(&x[s..e]);
                let b = brute(&x[s..e]);
                assert!((a.0 - b.0).abs() < 1e-9, "{s}..{e}: {a:?} {b:?}");
                assert_eq!(a.1, b.1, "{s}..{e}");
            }
        }
    }

    #[test]
    fn every_seeded_interval_gets_its_own_statistic() {
        let mut rng = SplitMix64::new(8);
        for n in [30, 100, 251, 1000] {
            for coarse in [true, false] {
                let x: Vec<f64> = (0..n)
                    .map(|_| {
                        let v = rng.normal() * 3.0;
                        if coarse { v.round() } else { v }
                    })
                    .collect();
                let all = all_intervals(&x);
                assert_eq!(all.len(), seeded_intervals(n).len());
                for i in all {
                    let (z, k) = max_rank_cusum(&x[i.start..i.end]);
                    assert!((z - i.z).abs() < 1e-9, "{n} {}..{}", i.start, i.end);
                    assert_eq!(k, i.split, "{n} {}..{}", i.start, i.end);
                }
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
