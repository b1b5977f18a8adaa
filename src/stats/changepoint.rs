//! Change points in a series over time: E-Divisive means exactly as Apache
//! Otava 0.8 computes it (`otava/analysis.py`, `otava/change_point_divisive/`).
//!
//! The algorithm (Fleming et al., "Hunter", ICPE 2023):
//! 1. *Split*: slide a window of `window` points in steps of `window / 2`;
//!    in each window run E-Divisive (Matteson & James 2014) — pick the split
//!    τ that maximises the divergence Q̂ over every sub-interval end κ, test
//!    the split of its interval with Student's t, keep it if p ≤ the
//!    first-pass level (10x the final one), repeat — and collect the union
//!    of the "weak" change points of every window.
//! 2. *Merge*: repeatedly drop the weakest point (largest p-value; when all
//!    are below `max_pvalue`, the smallest relative change if it is ≤
//!    `min_magnitude`) and recompute the statistics beside it.
//!
//! Matching Otava "exactly" means the same indices on every input, so the
//! arithmetic follows numpy's: the Q̂ matrices are built with the same
//! sequential cumulative sums, the arg-max is numpy's first-in-row-major
//! (including the zero lower triangle), means and standard deviations use
//! numpy's pairwise summation, ties are broken as Python's `max`/`min` do,
//! and three quirks are kept on purpose: the t-test is given population
//! standard deviations (ddof 0) as if they were sample ones, and after a
//! merge removes a point the statistics of its right neighbour and the one
//! after it are recomputed (not its left neighbour's), and the "weak" points handed to the next
//! incremental run are the merged change points (Otava's merge edits its input list). `bench/otava_compare.py`
//! checks the indices against Otava on a generated corpus
//! (`tests/data/changepoints/`).
//!
//! Each window's candidate for an interval is memoised (Otava recomputes it
//! on every iteration); the result is identical, the work is not.

use std::collections::HashMap;

use super::dist::t_two_sided_p;

/// The knobs Otava exposes (`-P/--p-value`, `-M/--magnitude`, `--window`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Points per sliding window; at least 2 (Otava's default 50).
    pub window: usize,
    /// Final significance level (Otava's default 0.001).
    pub max_pvalue: f64,
    /// A change point whose relative change is at most this is dropped even
    /// when significant (Otava's default 0).
    pub min_magnitude: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
        }
    }
}

/// Errors in the options (the series itself cannot be wrong).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionsError {
    #[error("--window must be at least 2, got {0}")]
    Window(usize),
    #[error("--p-value must be in (0, 1], got {0}")]
    PValue(f64),
    #[error("--min-magnitude must be >= 0, got {0}")]
    Magnitude(f64),
}

impl Options {
    pub fn validate(&self) -> Result<(), OptionsError> {
        if self.window < 2 {
            return Err(OptionsError::Window(self.window));
        }
        if !(self.max_pvalue > 0.0 && self.max_pvalue <= 1.0) {
            return Err(OptionsError::PValue(self.max_pvalue));
        }
        if self.min_magnitude.is_nan() || self.min_magnitude < 0.0 {
            return Err(OptionsError::Magnitude(self.min_magnitude));
        }
        Ok(())
    }

    /// The looser level of the split step: 10x when p < 0.05, 2x when p < 0.5.
    pub fn first_pass_pvalue(&self) -> f64 {
        let p = self.max_pvalue;
        if p < 0.05 {
            p * 10.0
        } else if p < 0.5 {
            p * 2.0
        } else {
            p
        }
    }
}

/// Student's t statistics of the segments either side of a change point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub mean_before: f64,
    pub mean_after: f64,
    /// Population standard deviations (ddof 0), as Otava reports them.
    pub std_before: f64,
    pub std_after: f64,
    pub n_before: usize,
    pub n_after: usize,
    pub pvalue: f64,
}

impl Stats {
    /// mean_after / mean_before - 1 (0 when mean_before is 0).
    pub fn forward_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            0.0
        } else {
            self.mean_after / self.mean_before - 1.0
        }
    }

    fn backward_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            0.0
        } else {
            self.mean_before / self.mean_after - 1.0
        }
    }

    /// max(|forward|, |backward|): Otava's magnitude.
    pub fn magnitude(&self) -> f64 {
        self.forward_change()
            .abs()
            .max(self.backward_change().abs())
    }
}

/// A change point: the series changes *at* `index` (the first point after).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub stats: Stats,
}

/// The result of one detection: the change points and the weak ones kept for
/// the next incremental run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detection {
    pub change_points: Vec<ChangePoint>,
    /// The points the next incremental run starts from, sorted. As in Otava
    /// (whose `merge` edits the weak list in place) these are the merged
    /// change points, not every weak point of the split step.
    pub weak: Vec<usize>,
}

/// Change points of the whole series.
pub fn detect(series: &[f64], opts: &Options) -> Detection {
    run(series, opts, None)
}

/// Change points after `new_points` were appended to a series whose last
/// detection left `old_weak` (Otava's incremental mode): only the tail is split
/// again, from about `(new_points / window + 4) * window` points from the end
/// (aligned to a window step or an earlier weak point).
pub fn detect_appended(
    series: &[f64],
    opts: &Options,
    new_points: usize,
    old_weak: &[usize],
) -> Detection {
    run(series, opts, Some((new_points, old_weak)))
}

fn run(series: &[f64], opts: &Options, incremental: Option<(usize, &[usize])>) -> Detection {
    if opts.validate().is_err() {
        return Detection::default();
    }
    let weak = split(series, opts.window, opts.first_pass_pvalue(), incremental);
    let change_points = merge(weak, series, opts.max_pvalue, opts.min_magnitude);
    // Otava's merge() edits the weak list in place and returns it, so the
    // "weak" points it keeps for the next incremental run are the merged ones.
    let weak = change_points.iter().map(|c| c.index).collect();
    Detection {
        change_points,
        weak,
    }
}

/// Otava's `fill_missing`: NaN (a missing value) takes the value before it;
/// a leading gap takes the first value after it.
pub fn fill_missing(v: &mut [f64]) {
    let mut prev = f64::NAN;
    for x in v.iter_mut() {
        if x.is_nan() {
            *x = prev;
        } else {
            prev = *x;
        }
    }
    let mut next = f64::NAN;
    for x in v.iter_mut().rev() {
        if x.is_nan() {
            *x = next;
        } else {
            next = *x;
        }
    }
}

/// numpy's pairwise summation (`DOUBLE_pairwise_sum`), the order `np.sum`,
/// `np.mean` and `np.std` add a contiguous float64 array in.
pub fn np_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]];
        let mut i = 8;
        while i < n - (n % 8) {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        np_sum(&a[..n2]) + np_sum(&a[n2..])
    }
}

/// `np.mean`, and `np.std` with ddof 0.
fn np_mean_std(a: &[f64]) -> (f64, f64) {
    let n = a.len() as f64;
    let mean = (0.0 + np_sum(a)) / n;
    if a.len() < 2 {
        return (mean, 0.0);
    }
    let sq: Vec<f64> = a.iter().map(|&x| (x - mean) * (x - mean)).collect();
    let var = (0.0 + np_sum(&sq)) / n;
    (mean, var.sqrt())
}

/// Otava's `TTestSignificanceTester.compare`: scipy's `ttest_ind_from_stats`
/// (pooled variance) fed population standard deviations; p = 1 with two points.
pub fn segment_stats(left: &[f64], right: &[f64]) -> Stats {
    compare(left, right)
}

fn compare(left: &[f64], right: &[f64]) -> Stats {
    let (m1, s1) = np_mean_std(left);
    let (m2, s2) = np_mean_std(right);
    let (n1, n2) = (left.len(), right.len());
    let pvalue = if n1 + n2 > 2 {
        let v1 = if n1 == 1 { 0.0 } else { s1 * s1 };
        let v2 = if n2 == 1 { 0.0 } else { s2 * s2 };
        let df = n1 as f64 + n2 as f64 - 2.0;
        let svar = ((n1 - 1) as f64 * v1 + (n2 - 1) as f64 * v2) / df;
        let denom = (svar * (1.0 / n1 as f64 + 1.0 / n2 as f64)).sqrt();
        let t = (m1 - m2) / denom;
        t_two_sided_p(t, df)
    } else {
        1.0
    };
    Stats {
        mean_before: m1,
        mean_after: m2,
        std_before: s1,
        std_after: s2,
        n_before: n1,
        n_after: n2,
        pvalue,
    }
}

/// The intervals between sorted change points (`get_intervals`), empty ones dropped.
fn intervals(points: &[usize], len: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(points.len() + 1);
    let mut start = 0;
    for &p in points {
        if p != start {
            out.push((start, p));
        }
        start = p;
    }
    if start != len {
        out.push((start, len));
    }
    out
}

/// Statistics of a change point against the intervals of all current points:
/// either the interval it splits, or (when it is a boundary) the two it joins.
fn stats_at(index: usize, series: &[f64], ivs: &[(usize, usize)]) -> Stats {
    for (k, &(start, stop)) in ivs.iter().enumerate() {
        if stop == index {
            let next = ivs.get(k + 1).map_or(stop..stop, |&(a, b)| a..b);
            return compare(&series[start..stop], &series[next]);
        }
        if start < index && index < stop {
            return compare(&series[start..index], &series[index..stop]);
        }
    }
    compare(&series[..0], &series[..0])
}

/// One window's pairwise distances and the V/H sums of Otava's calculator.
struct Calculator<'c> {
    coefs: &'c Coefs,
    n: usize,
    /// |s_i - s_j|, row-major n x n.
    d: Vec<f64>,
    /// V[c] = Σ_{r<=c} D[r][c+1].
    v: Vec<f64>,
    /// H[r][c] = Σ_{c'=r..=c} D[r][c'+1], row-major (n-1) x (n-1).
    h: Vec<f64>,
    memo: HashMap<(usize, usize), (usize, f64)>,
    // Scratch buffers reused across candidates.
    cum_h: Vec<f64>,
    rsum: Vec<f64>,
}

impl<'c> Calculator<'c> {
    fn new(s: &[f64], coefs: &'c Coefs) -> Self {
        let n = s.len();
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                d[i * n + j] = (s[i] - s[j]).abs();
            }
        }
        let m = n.saturating_sub(1);
        let mut v = vec![0.0; m];
        for (c, vc) in v.iter_mut().enumerate() {
            let mut acc = 0.0;
            for r in 0..=c {
                acc += d[r * n + c + 1];
            }
            *vc = acc;
        }
        let mut h = vec![0.0; m * m];
        for r in 0..m {
            let mut acc = 0.0;
            for c in r..m {
                acc += d[r * n + c + 1];
                h[r * m + c] = acc;
            }
        }
        Calculator {
            coefs,
            n,
            d,
            v,
            h,
            memo: HashMap::new(),
            cum_h: Vec::new(),
            rsum: Vec::new(),
        }
    }

    /// The best split of `s[start..end]` and its Q̂ (`get_candidate_change_point`).
    fn candidate(&mut self, start: usize, end: usize) -> (usize, f64) {
        if let Some(&c) = self.memo.get(&(start, end)) {
            return c;
        }
        let c = self.compute(start, end);
        self.memo.insert((start, end), c);
        c
    }

    fn compute(&mut self, start: usize, end: usize) -> (usize, f64) {
        let (n, m) = (self.n, self.n - 1);
        let l = end - start - 1;
        let coefs = self.coefs;
        // Vv = V[start..end-1] - Σ_{r<start} D[r][start+1..end]; its prefix sums.
        let mut cum_v = vec![0.0; l];
        let mut acc = 0.0;
        for (k, cv) in cum_v.iter_mut().enumerate() {
            let mut sub = 0.0;
            for r in 0..start {
                sub += self.d[r * n + start + 1 + k];
            }
            let vv = self.v[start + k] - sub;
            acc = if k == 0 { vv } else { acc + vv };
            *cv = acc;
        }
        let h = &self.h;
        let hh = |r: usize, j: usize| h[(start + r) * m + start + j];
        // cumH[i][j] = Σ_{r<=i} Hh[r][j], top-down, for j >= i (Hh is zero
        // below its diagonal, and adding zeros changes no bit).
        self.cum_h.clear();
        self.cum_h.resize(l * l, 0.0);
        for j in 0..l {
            self.cum_h[j] = hh(0, j);
        }
        for i in 1..l {
            for j in i..l {
                self.cum_h[i * l + j] = self.cum_h[(i - 1) * l + j] + hh(i, j);
            }
        }
        // Q row by row from the bottom, carrying R[j] = Σ_{r=i+1..l-1} Hh[r][j]
        // summed bottom-up as numpy's flipped cumulative sum does; the
        // arg-max is numpy's: the first maximum in row-major order.
        self.rsum.clear();
        self.rsum.resize(l, 0.0);
        // Rows are visited bottom-up, so a row's maximum replaces the best
        // so far when it is at least as large (it comes first in row-major).
        let mut best = (usize::MAX, usize::MAX, f64::NEG_INFINITY);
        let mut first_nan: Option<(usize, usize)> = None;
        let w = coefs.w;
        for i in (0..l).rev() {
            if i + 2 <= l {
                let r = i + 1;
                for j in r..l {
                    self.rsum[j] += hh(r, j);
                }
            }
            // B's row 0 and C's diagonal have zero coefficients, as in numpy.
            let shifted = if i >= 1 { cum_v[i - 1] } else { 0.0 };
            let ch = &self.cum_h[i * l + i..i * l + l];
            let ac = &coefs.a[i..l];
            let bc = &coefs.b[i * w + i..i * w + l];
            let cc = &coefs.c[i * w + i..i * w + l];
            let rs = &self.rsum[i..l];
            let mut row = (usize::MAX, f64::NEG_INFINITY);
            let mut row_nan = None;
            for k in 0..ch.len() {
                let q = ac[k] * (ch[k] - shifted) - bc[k] * shifted - cc[k] * rs[k];
                if q > row.1 {
                    row = (i + k, q);
                } else if q.is_nan() && row_nan.is_none() {
                    row_nan = Some(i + k);
                }
            }
            if let Some(j) = row_nan {
                first_nan = Some((i, j));
            }
            if row.0 != usize::MAX && row.1 >= best.2 {
                best = (i, row.0, row.1);
            }
        }
        if let Some((i, _)) = first_nan {
            return (start + i + 1, f64::NAN);
        }
        let earlier = |i: usize, j: usize, b: &(usize, usize, f64)| (i, j) < (b.0, b.1);
        // The lower triangle holds zeros; the first of them is (1, 0).
        if l >= 2 && (0.0 > best.2 || (0.0 == best.2 && earlier(1, 0, &best))) {
            best = (1, 0, 0.0);
        }
        (start + best.0 + 1, best.2)
    }
}

/// The data-free coefficients of Otava's A, B and C matrices for every
/// (τ, κ) offset in a window, computed once per detection with the same
/// integer-to-double divisions numpy performs.
struct Coefs {
    w: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Coefs {
    fn new(window: usize) -> Coefs {
        let w = window.max(2);
        let mut b = vec![0.0; w * w];
        let mut c = vec![0.0; w * w];
        for i in 0..w {
            for j in i..w {
                if i >= 1 {
                    b[i * w + j] = (2 * (j - i + 1)) as f64 / ((j + 2) * i) as f64;
                }
                if j > i {
                    c[i * w + j] = (2 * (i + 1)) as f64 / ((j + 2) * (j - i)) as f64;
                }
            }
        }
        Coefs {
            w,
            a: (0..w).map(|j| 2.0 / (j + 2) as f64).collect(),
            b,
            c,
        }
    }
}

/// E-Divisive on one window (`ChangePointDetector.get_change_points`):
/// sorted local indices of the change points significant at `max_pvalue`.
fn window_points(w: &[f64], max_pvalue: f64, coefs: &Coefs) -> Vec<usize> {
    let mut calc = Calculator::new(w, coefs);
    let mut points: Vec<usize> = Vec::new();
    loop {
        let ivs = intervals(&points, w.len());
        // Python's max(): the first of equal maxima.
        let mut best: Option<((usize, usize), usize, f64)> = None;
        for &(a, b) in &ivs {
            if b - a <= 1 {
                continue;
            }
            let (index, qhat) = calc.candidate(a, b);
            match best {
                None => best = Some(((a, b), index, qhat)),
                Some((_, _, q)) if qhat > q => best = Some(((a, b), index, qhat)),
                _ => {}
            }
        }
        let Some(((a, b), index, _)) = best else {
            break;
        };
        let stats = compare(&w[a..index], &w[index..b]);
        if stats.pvalue <= max_pvalue {
            let at = points.partition_point(|&p| p < index);
            points.insert(at, index);
        } else {
            break;
        }
    }
    points
}

/// The split step: weak change points with their statistics over the whole series.
fn split(
    series: &[f64],
    window: usize,
    pvalue: f64,
    incremental: Option<(usize, &[usize])>,
) -> Vec<ChangePoint> {
    let len = series.len();
    let step = (window / 2).max(1);
    let coefs = Coefs::new(window);
    let mut start = 0usize;
    let mut points: Vec<usize> = Vec::new();
    if let Some((new_points, old)) = incremental {
        points = old.to_vec();
        let steps_needed = new_points as f64 / window as f64 + 4.0;
        let max_start = len as f64 - steps_needed * window as f64;
        for &c in old {
            if (c as f64) < max_start {
                start = c;
            }
        }
        let mut s = 0;
        while s < len {
            if (s as f64) < max_start && start < s {
                start = s;
            }
            s += step;
        }
    }
    while start < len {
        let end = (start + window).min(len);
        let found = window_points(&series[start..end], pvalue, &coefs);
        let last = found.last().map_or(0, |&i| i + start);
        for &i in &found {
            let global = i + start;
            if !points.contains(&global) {
                points.push(global);
            }
        }
        start = last.max(start + step);
    }
    points.sort_unstable();
    points.retain(|&p| p < len);
    let ivs = intervals(&points, len);
    points
        .iter()
        .map(|&index| ChangePoint {
            index,
            stats: stats_at(index, series, &ivs),
        })
        .collect()
}

/// The merge step (Otava's `merge`), quirks included.
fn merge(
    mut points: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !points.is_empty() {
        // max(points, key=pvalue): the first of equal maxima, NaN never replaces.
        let mut weakest = 0;
        for k in 1..points.len() {
            if points[k].stats.pvalue > points[weakest].stats.pvalue {
                weakest = k;
            }
        }
        if points[weakest].stats.pvalue < max_pvalue {
            let mut smallest = 0;
            for k in 1..points.len() {
                if points[k].stats.magnitude() < points[smallest].stats.magnitude() {
                    smallest = k;
                }
            }
            weakest = smallest;
            if points[weakest].stats.magnitude() > min_magnitude {
                return points;
            }
        }
        points.remove(weakest);
        let indices: Vec<usize> = points.iter().map(|c| c.index).collect();
        let ivs = intervals(&indices, series.len());
        for k in [weakest, weakest + 1] {
            if k < points.len() {
                points[k].stats = stats_at(points[k].index, series, &ivs);
            }
        }
    }
    points
}

/// The change points of `cps` (of `series`, sorted) whose segments each
/// hold at least `min_side` points, and how many were dropped: while some
/// change point has a shorter side, the weakest of those (the highest
/// p-value) is dropped and its neighbours are tested again on the joined
/// segments; then [`merge`] drops, as Otava does, those no longer
/// significant on their longer segments. E-Divisive keeps a change point
/// beside one loaded point (a sample taken while the machine was busy),
/// which leaves the change points around it, a plain step among them, with
/// a side of one point: none of them could be told, and the step went
/// unreported.
pub fn with_sides_of(
    series: &[f64],
    cps: &[ChangePoint],
    min_side: usize,
    opts: &Options,
) -> (Vec<ChangePoint>, usize) {
    let short = |c: &ChangePoint| c.stats.n_before < min_side || c.stats.n_after < min_side;
    if !cps.iter().any(short) {
        return (cps.to_vec(), 0);
    }
    let mut points = cps.to_vec();
    loop {
        // The weakest short one: the first of equal maxima, NaN never replaces.
        let mut weakest: Option<usize> = None;
        for (k, c) in points.iter().enumerate() {
            if short(c) && weakest.is_none_or(|w| c.stats.pvalue > points[w].stats.pvalue) {
                weakest = Some(k);
            }
        }
        let Some(w) = weakest else { break };
        points.remove(w);
        let indices: Vec<usize> = points.iter().map(|c| c.index).collect();
        let ivs = intervals(&indices, series.len());
        for k in [w.wrapping_sub(1), w] {
            if k < points.len() {
                points[k].stats = stats_at(points[k].index, series, &ivs);
            }
        }
    }
    let kept = merge(points, series, opts.max_pvalue, opts.min_magnitude);
    let dropped = cps.len() - kept.len();
    (kept, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six nightly points of a script made 80x slower at the fifth, the
    /// third taken while the machine was loaded: E-Divisive's change points
    /// around the loaded point leave the step a side of one point; dropping
    /// the short ones leaves the step, told on four points against two.
    #[test]
    fn change_points_fencing_a_step_into_one_point_sides_are_dropped() {
        let series = [0.005, 0.006, 0.120, 0.005, 0.400, 0.402];
        let at = |idx: &[usize]| -> Vec<ChangePoint> {
            let ivs = intervals(idx, series.len());
            idx.iter()
                .map(|&i| ChangePoint {
                    index: i,
                    stats: stats_at(i, &series, &ivs),
                })
                .collect()
        };
        let o = Options::default();
        let (kept, dropped) = with_sides_of(&series, &at(&[2, 3, 4]), 2, &o);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(kept[0].index, 4);
        assert_eq!((kept[0].stats.n_before, kept[0].stats.n_after), (4, 2));
        assert!(kept[0].stats.pvalue < 0.01, "{:?}", kept[0].stats);
        assert_eq!(dropped, 2);
        // Nothing short: nothing changes.
        let two = at(&[2, 4]);
        assert_eq!(with_sides_of(&series, &two, 2, &o), (two.clone(), 0));
        // A step at the newest point waits for a second point after it.
        let (kept, dropped) = with_sides_of(&series, &at(&[5]), 2, &o);
        assert!(kept.is_empty() && dropped == 1);
    }

    fn step(n: usize, at: usize, low: f64, high: f64) -> Vec<f64> {
        // Deterministic small noise.
        let mut rng = crate::stats::rng::SplitMix64::new(7);
        (0..n)
            .map(|i| {
                let base = if i < at { low } else { high };
                base + (rng.next_f64() - 0.5)
            })
            .collect()
    }

    #[test]
    fn missing_values_are_filled_as_otava_does() {
        // otava tests/analysis_test.py: test_fill_missing
        let n = f64::NAN;
        let mut a = [n, n, 1.0, 1.2, 0.5];
        let mut b = [1.0, 1.2, n, n, 4.3];
        let mut c = [1.0, 1.2, 0.5, n, n];
        fill_missing(&mut a);
        fill_missing(&mut b);
        fill_missing(&mut c);
        assert_eq!(a, [1.0, 1.0, 1.0, 1.2, 0.5]);
        assert_eq!(b, [1.0, 1.2, 1.2, 1.2, 4.3]);
        assert_eq!(c, [1.0, 1.2, 0.5, 0.5, 0.5]);
    }

    #[test]
    fn pairwise_sum_matches_numpy_order() {
        // np.sum(np.arange(1, 301) * 0.1) == 4515.0 (printed with repr)
        let a: Vec<f64> = (1..=300).map(|i| i as f64 * 0.1).collect();
        assert_eq!(np_sum(&a), 4515.0);
        assert_eq!(np_sum(&[]), 0.0);
        assert_eq!(np_sum(&[1.5]), 1.5);
    }

    #[test]
    fn finds_a_clear_step() {
        let s = step(200, 120, 10.0, 20.0);
        let d = detect(&s, &Options::default());
        let idx: Vec<usize> = d.change_points.iter().map(|c| c.index).collect();
        assert_eq!(idx, vec![120]);
        let cp = d.change_points[0];
        assert!(cp.stats.forward_change() > 0.9 && cp.stats.forward_change() < 1.1);
        assert!(d.weak.contains(&120));
    }

    #[test]
    fn constant_and_tiny_series_have_no_change_points() {
        for n in 0..6 {
            assert!(
                detect(&vec![3.0; n], &Options::default())
                    .change_points
                    .is_empty()
            );
        }
        assert!(
            detect(&vec![1.0; 300], &Options::default())
                .change_points
                .is_empty()
        );
    }

    #[test]
    fn invalid_options_detect_nothing() {
        let s = step(100, 50, 1.0, 5.0);
        let opts = Options {
            window: 1,
            ..Options::default()
        };
        assert!(opts.validate().is_err());
        assert!(detect(&s, &opts).change_points.is_empty());
    }

    #[test]
    fn appending_reuses_the_weak_points() {
        let s = step(300, 100, 10.0, 15.0);
        let first = detect(&s[..250], &Options::default());
        let inc = detect_appended(&s, &Options::default(), 50, &first.weak);
        let full = detect(&s, &Options::default());
        let a: Vec<usize> = inc.change_points.iter().map(|c| c.index).collect();
        let b: Vec<usize> = full.change_points.iter().map(|c| c.index).collect();
        assert_eq!(a, b);
    }
}
