//! Plain steps: a level shift so large against the point-to-point noise that
//! no noise of the kinds a history has could make it, found by its size.
//!
//! The rank search ([`super::rank_cusum`]) sees only the order of the points,
//! so once a step separates the two sides completely, making it larger
//! changes nothing it sees: a 10x regression reads exactly like a 3-sigma one
//! that happens to separate, and autocorrelated noise separates sides too
//! (40 points of AR(1) noise at ρ = 0.8 hold 15 points wholly above the 15
//! before them one time in 25). Its correlation correction must therefore be
//! paid in full even when the step is a hundred times the noise. This test
//! is the other half: it looks at how far the level moved.
//!
//! At every split k and block length m (3 to 32 points), the statistic is
//!
//! ```text
//! t(k, m) = (median(x[k..k+m]) - median(x[k-m..k])) / s
//! ```
//!
//! with s the noise's scale from the point-to-point differences:
//! median |x[t] - x[t-1]| / (√2 Φ⁻¹(3/4)), σ for independent Gaussian noise.
//! A level shift moves one difference of the series' n - 1, so no step
//! inflates s (the failure of a scale taken across the step), and medians
//! keep one outlier in a block from moving t.
//!
//! Nothing about the noise's correlation is estimated: the thresholds
//! ([`super::jump_null`]) are the worst case over the kinds of noise
//! simulated, AR(1) up to ρ = 0.8 among them (where a block's median wanders
//! with its neighbours' and s, from the differences, is small), so short
//! series, whose correlation cannot be estimated, are as safe as long ones.
//! The price is power on moderate steps, which the rank search keeps: this
//! test calls a step of about 11σ with 3 points at its new level, 7σ with 32
//! (independent noise), and on AR(0.8) noise a step of 10 long-run standard
//! deviations with 3 points.
//!
//! Series whose points mostly repeat (counts, a coarse timer) have s = 0:
//! there a change is called only between two blocks that are each constant
//! ([`CONSTANT_BLOCK`] points at least), which noise that repeats its values
//! cannot tell apart from a change either.

use super::dist::normal_quantile;

/// Block lengths tested: the points on each side of a split.
pub const BLOCKS: [usize; 9] = [3, 4, 5, 6, 8, 12, 16, 24, 32];

/// Where the point-to-point scale is zero, the fewest points on each side,
/// each side constant, for a change between two levels.
pub const CONSTANT_BLOCK: usize = 5;

/// The fewest points a series needs before this test looks at it: its scale
/// comes from the differences, and fewer than this many give too rough a
/// scale for the thresholds' small tail probabilities.
pub const MIN_POINTS: usize = 16;

/// The noise's scale from the differences of consecutive points (σ for
/// independent Gaussian noise; a level shift moves only one difference):
/// their median absolute value over √2·Φ⁻¹(3/4), widened by
/// [`small_sample_factor`] (the median of few differences is rough). 0 when
/// more than half of the consecutive points are equal.
pub fn noise_scale(x: &[f64]) -> f64 {
    let n = x.len();
    if n < 2 {
        return 0.0;
    }
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    let mid = d.len() / 2;
    let (_, m, _) = d.select_nth_unstable_by(mid, f64::total_cmp);
    let m = *m;
    let unit = std::f64::consts::SQRT_2 * normal_quantile(0.75);
    m / unit * small_sample_factor(n - 1)
}

/// The widening of a scale taken from `diffs` differences: the median of a
/// few absolute differences is often well below their spread's, which would
/// make every block look far apart. (1 + 1.5/√d: 1.31 for 23 differences,
/// 1.05 for 999.) Simulated on AR(1) noise of ρ = 0.8 checked at every point
/// from 16 to 100 (4,000 series, the newest split each time): 1 in 4,000
/// series raised a plain-step alarm, the test's share of the rate (a
/// quarter of 1% per 1,000 points); without the widening 33 did, with half
/// of it 5.
pub fn small_sample_factor(diffs: usize) -> f64 {
    1.0 + 1.5 / (diffs.max(1) as f64).sqrt()
}

/// A split's statistic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Jump {
    /// The split: the first point at the new level.
    pub at: usize,
    /// Points on each side.
    pub block: usize,
    /// The signed statistic t (infinite between two constant blocks when
    /// the scale is zero).
    pub t: f64,
}

/// A sorted window sliding along the series: one removal and one insertion
/// a step (a move of at most 32 values), the median read from the middle.
struct Window {
    sorted: Vec<f64>,
}

impl Window {
    fn new(v: &[f64]) -> Window {
        let mut sorted = v.to_vec();
        sorted.sort_unstable_by(f64::total_cmp);
        Window { sorted }
    }

    fn slide(&mut self, out: f64, into: f64) {
        if let Ok(i) = self.sorted.binary_search_by(|v| v.total_cmp(&out)) {
            self.sorted.remove(i);
        }
        let j = self.sorted.partition_point(|v| v.total_cmp(&into).is_lt());
        self.sorted.insert(j, into);
    }

    fn median(&self) -> f64 {
        let n = self.sorted.len();
        if n % 2 == 1 {
            self.sorted[n / 2]
        } else {
            (self.sorted[n / 2 - 1] + self.sorted[n / 2]) / 2.0
        }
    }

    fn constant(&self) -> bool {
        self.sorted.first() == self.sorted.last()
    }
}

/// Calls `each` with every split's statistic for block length `m`, splits
/// `m..=n-m`, the scale `s` given ([`noise_scale`] of the whole series).
/// One window slides along the series: the block after a split is the block
/// before the split m points later.
pub fn for_each(x: &[f64], m: usize, s: f64, mut each: impl FnMut(Jump)) {
    let n = x.len();
    if m == 0 || n < 2 * m || s.is_nan() || s < 0.0 {
        return;
    }
    // Median and constancy of x[j-m..j] for j = m..=n.
    let mut blocks: Vec<(f64, bool)> = Vec::with_capacity(n - m + 1);
    let mut w = Window::new(&x[..m]);
    blocks.push((w.median(), w.constant()));
    for j in m..n {
        w.slide(x[j - m], x[j]);
        blocks.push((w.median(), w.constant()));
    }
    for k in m..=n - m {
        let (before, flat_before) = blocks[k - m];
        let (after, flat_after) = blocks[k];
        let d = after - before;
        let t = if s > 0.0 {
            d / s
        } else if d != 0.0 && m >= CONSTANT_BLOCK && flat_before && flat_after {
            d.signum() * f64::INFINITY
        } else {
            0.0
        };
        each(Jump { at: k, block: m, t });
    }
}

/// The largest |t| over every split of `x` for block length `m`, with the
/// series' own scale: what the thresholds are calibrated against.
pub fn block_maximum(x: &[f64], m: usize) -> f64 {
    let s = noise_scale(x);
    let mut best = 0.0f64;
    for_each(x, m, s, |j| best = best.max(j.t.abs()));
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn median(v: &[f64]) -> f64 {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        }
    }

    #[test]
    fn sliding_medians_equal_sorted_ones() {
        let mut rng = SplitMix64::new(4);
        for coarse in [false, true] {
            let x: Vec<f64> = (0..200)
                .map(|_| {
                    let v = rng.normal() * 3.0;
                    if coarse { v.round() } else { v }
                })
                .collect();
            let s = noise_scale(&x);
            for m in BLOCKS {
                let mut seen = 0;
                for_each(&x, m, s, |j| {
                    let want = (median(&x[j.at..j.at + m]) - median(&x[j.at - m..j.at])) / s;
                    assert!((j.t - want).abs() < 1e-12, "{m} {}", j.at);
                    seen += 1;
                });
                assert_eq!(seen, 200 - 2 * m + 1, "{m}");
            }
        }
    }

    #[test]
    fn a_step_does_not_move_the_scale() {
        let mut rng = SplitMix64::new(9);
        let x: Vec<f64> = (0..60).map(|_| 100.0 + 2.0 * rng.normal()).collect();
        let s = noise_scale(&x);
        let stepped: Vec<f64> = x
            .iter()
            .enumerate()
            .map(|(i, v)| if i >= 30 { v + 1000.0 } else { *v })
            .collect();
        let s2 = noise_scale(&stepped);
        // One difference of 59 moved: the median moves by at most one order statistic.
        assert!(s2 / s < 1.2, "{s} {s2}");
        assert!(block_maximum(&stepped, 8) > 300.0);
    }

    #[test]
    fn constant_blocks_with_no_scale() {
        let mut x = vec![5.0; 20];
        x.extend([6.0; 20]);
        assert_eq!(noise_scale(&x), 0.0);
        assert_eq!(block_maximum(&x, 5), f64::INFINITY);
        // Shorter blocks are not enough, nor a blip.
        assert_eq!(block_maximum(&x, 4), 0.0);
        let mut blip = vec![5.0; 40];
        blip[20] = 9.0;
        blip[21] = 9.0;
        assert_eq!(block_maximum(&blip, 5), 0.0);
    }
}
