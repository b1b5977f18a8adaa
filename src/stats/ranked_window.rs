//! One test's durations at a suite's newest points, with each one's rank
//! among those since the test's last change kept up to date as points come
//! and go: what lets a server check every test of a large suite on each
//! upload in work that does not grow with the window.
//!
//! Each upload adds a point and drops the oldest: every other point's rank
//! moves by at most one, found by one comparison each (no sort). From the
//! ranks alone two cheap, conservative checks rule out almost every test
//! whose durations are noise:
//!
//! - [`RankedWindow::may_search`]: whether [`super::rank_cusum::screen`]
//!   (which lets a test through to the whole search) can pass. It is the
//!   same statistic, computed from the kept ranks.
//! - [`RankedWindow::may_end`]: whether [`super::sequential::end_change`]
//!   can call a change at the end. That test calls when at least m of a
//!   tail's k points are beyond the reference's j-th most extreme point.
//!   Then the m-th most extreme tail point has fewer than j reference
//!   points beyond it. Its rank over the whole window bounds that count from
//!   below, less the tail's and the older points'; when that cannot tell,
//!   the reference's points are counted.
//!
//! A test that passes either check is checked exactly, on its values, by
//! the same functions as before. So the result is the same as checking
//! every test exactly; only the cost differs.

use super::rank_cusum::{EDGE, SCREEN_Z};
use super::sequential::{MAX_REFERENCE, MIN_REFERENCE, SHORT, TAILS, Thresholds};

/// The most points a window holds (ranks are kept doubled in 16 bits).
pub const MAX_SLOTS: usize = 32_767;

/// A duration's place in `f32::total_cmp`'s order, as an integer; 0 for a
/// missing one (NaN).
pub fn key(v: f32) -> u32 {
    if v.is_nan() {
        return 0;
    }
    let b = v.to_bits();
    if b >> 31 == 1 { !b } else { b | (1 << 31) }
}

/// A key as a signed integer of the same order.
#[inline]
fn signed(k: u32) -> i32 {
    (k ^ (1 << 31)) as i32
}

/// The duration of a [`key`] (NaN for 0).
pub fn value(k: u32) -> f32 {
    if k == 0 {
        return f32::NAN;
    }
    f32::from_bits(if k >> 31 == 1 { k & !(1 << 31) } else { !k })
}

/// One test's durations at a window's points (missing where it did not
/// run), its segment (the points from `start` on: since its last change)
/// and the doubled mid-rank of each of the segment's durations among them.
#[derive(Debug, Clone, Default)]
pub struct RankedWindow {
    /// Slots from `head` on are held (dropped ones are let go in batches).
    keys: Vec<u32>,
    ranks: Vec<u16>,
    head: usize,
    start: usize,
    count: usize,
    infinite: usize,
}

impl PartialEq for RankedWindow {
    fn eq(&self, o: &RankedWindow) -> bool {
        self.keys() == o.keys()
            && self.ranks() == o.ranks()
            && (self.start, self.count, self.infinite) == (o.start, o.count, o.infinite)
    }
}

/// Dropped slots let go of at once.
const SLACK: usize = 64;

impl RankedWindow {
    /// A window of these durations ([`key`]s, 0 where missing), its segment
    /// from slot `start` on. At most [`MAX_SLOTS`] are kept (the newest).
    pub fn new(mut keys: Vec<u32>, start: usize) -> RankedWindow {
        let drop = keys.len().saturating_sub(MAX_SLOTS);
        keys.drain(..drop);
        let mut w = RankedWindow {
            ranks: vec![0; keys.len()],
            keys,
            head: 0,
            start: start.saturating_sub(drop),
            count: 0,
            infinite: 0,
        };
        w.rank();
        w
    }

    fn keys(&self) -> &[u32] {
        &self.keys[self.head..]
    }

    fn ranks(&self) -> &[u16] {
        &self.ranks[self.head..]
    }

    /// The segment's slots: keys and ranks.
    fn seg(&self) -> (&[u32], &[u16]) {
        let at = self.head + self.start;
        (&self.keys[at..], &self.ranks[at..])
    }

    fn seg_mut(&mut self) -> (&[u32], &mut [u16]) {
        let at = self.head + self.start;
        (&self.keys[at..], &mut self.ranks[at..])
    }

    /// Rank the segment afresh: one sort.
    fn rank(&mut self) {
        self.start = self.start.min(self.len());
        self.ranks.iter_mut().for_each(|r| *r = 0);
        let (keys, _) = self.seg();
        let mut seg: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .filter(|e| *e.1 != 0)
            .map(|(i, &k)| (k, i as u32))
            .collect();
        seg.sort_unstable();
        let (_, ranks) = self.seg_mut();
        let mut i = 0;
        while i < seg.len() {
            let mut j = i;
            while j + 1 < seg.len() && seg[j + 1].0 == seg[i].0 {
                j += 1;
            }
            for e in &seg[i..=j] {
                ranks[e.1 as usize] = (i + j) as u16;
            }
            i = j + 1;
        }
        self.count = seg.len();
        self.infinite = seg.iter().filter(|e| !value(e.0).is_finite()).count();
    }

    /// The number of points (slots) held.
    pub fn len(&self) -> usize {
        self.keys.len() - self.head
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the segment starts.
    pub fn start(&self) -> usize {
        self.start
    }

    /// The durations in the segment.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether the test ran at the newest point.
    pub fn ran_last(&self) -> bool {
        self.keys().last().is_some_and(|&k| k != 0)
    }

    /// Add the newest point's duration ([`key`], 0: the test did not run).
    /// At [`MAX_SLOTS`] the oldest point goes first.
    pub fn push(&mut self, k: u32) {
        if self.len() >= MAX_SLOTS {
            self.pop_front();
        }
        let mut r = 0u16;
        if k != 0 {
            // Doubled mid-ranks: a point above the new one moves up a whole
            // rank, an equal one half a rank (a missing slot, key 0, is
            // below every key and never counted).
            let (mut greater, mut equal) = (0u32, 0u32);
            let (keys, ranks) = self.seg_mut();
            for (key, rank) in keys.iter().zip(ranks.iter_mut()) {
                let (gt, eq) = (u16::from(*key > k), u16::from(*key == k));
                *rank += 2 * gt + eq;
                greater += u32::from(gt);
                equal += u32::from(eq);
            }
            let less = self.count as u32 - greater - equal;
            r = (2 * less + equal) as u16;
            self.count += 1;
            self.infinite += usize::from(!value(k).is_finite());
        }
        self.keys.push(k);
        self.ranks.push(r);
    }

    /// Drop the oldest point.
    pub fn pop_front(&mut self) {
        if self.is_empty() {
            return;
        }
        let k = self.keys[self.head];
        if self.start == 0 && k != 0 {
            let at = self.head + 1;
            for (key, rank) in self.keys[at..].iter().zip(&mut self.ranks[at..]) {
                *rank -= 2 * u16::from(*key > k) + u16::from(*key == k && *key != 0);
            }
            self.count -= 1;
            self.infinite -= usize::from(!value(k).is_finite());
        }
        self.head += 1;
        self.start = self.start.saturating_sub(1);
        if self.head >= SLACK && self.head * 2 >= self.keys.len() {
            self.keys.drain(..self.head);
            self.ranks.drain(..self.head);
            self.head = 0;
        }
    }

    /// Drop the oldest point and add the newest ([`Self::pop_front`] then
    /// [`Self::push`], in one pass over the points).
    pub fn slide(&mut self, k: u32) {
        let old = self.keys.get(self.head).copied().unwrap_or(0);
        if k == 0 || old == 0 || self.start != 0 || self.len() >= MAX_SLOTS {
            self.pop_front();
            self.push(k);
            return;
        }
        self.head += 1;
        self.count -= 1;
        self.infinite -= usize::from(!value(old).is_finite());
        let (mut greater, mut equal) = (0u32, 0u32);
        let (keys, ranks) = self.seg_mut();
        // Compared as signed integers (same order), which vector units do.
        let (k32, old32) = (signed(k), signed(old));
        for (key, rank) in keys.iter().zip(ranks.iter_mut()) {
            let key = signed(*key);
            let (gt, eq) = (u16::from(key > k32), u16::from(key == k32));
            let (ogt, oeq) = (u16::from(key > old32), u16::from(key == old32));
            *rank = *rank + 2 * gt + eq - 2 * ogt - oeq;
            greater += u32::from(gt);
            equal += u32::from(eq);
        }
        let less = self.count as u32 - greater - equal;
        self.count += 1;
        self.infinite += usize::from(!value(k).is_finite());
        self.keys.push(k);
        self.ranks.push((2 * less + equal) as u16);
        if self.head >= SLACK && self.head * 2 >= self.keys.len() {
            self.keys.drain(..self.head);
            self.ranks.drain(..self.head);
            self.head = 0;
        }
    }

    /// Start the segment at `slot` (the test's last change), ranking it
    /// afresh when it moves.
    pub fn set_start(&mut self, slot: usize) {
        let slot = slot.min(self.len());
        if slot != self.start {
            self.start = slot;
            self.rank();
        }
    }

    /// The segment: its slots and durations, oldest first.
    pub fn segment(&self) -> (Vec<usize>, Vec<f64>) {
        let (keys, _) = self.seg();
        keys.iter()
            .enumerate()
            .filter(|e| *e.1 != 0)
            .map(|(i, &k)| (self.start + i, f64::from(value(k))))
            .unzip()
    }

    /// The segment's doubled ranks, oldest first (for tests).
    #[cfg(test)]
    fn segment_ranks(&self) -> Vec<u16> {
        let (keys, ranks) = self.seg();
        keys.iter()
            .zip(ranks)
            .filter(|e| *e.0 != 0)
            .map(|e| *e.1)
            .collect()
    }

    /// False only when [`super::rank_cusum::screen`] of the segment is
    /// false (its statistic, from the kept ranks, with a hair of slack).
    pub fn may_search(&self) -> bool {
        let n = self.count;
        if self.infinite > 0 {
            return false;
        }
        // A young segment may end in a plain step, which the screen also
        // lets through: it is checked whole at every upload.
        if n < super::rank_cusum::YOUNG {
            return true;
        }
        let nf = n as f64;
        let var = (nf * nf - 1.0) / 12.0;
        // With the doubled sum s of rank - mean over the first m points:
        // (s / 2)^2 > Z^2 var m (n - m) / (n - 1).
        let c = 4.0 * SCREEN_Z * SCREEN_Z * (1.0 - 1e-9) * var / (nf - 1.0);
        let (keys, ranks) = self.seg();
        let (mut sum, mut m) = (0i64, 0usize);
        let centre = n as i64 - 1;
        let last = n - EDGE;
        for (key, rank) in keys.iter().zip(ranks) {
            if *key == 0 {
                continue;
            }
            sum += i64::from(*rank) - centre;
            m += 1;
            if m > last {
                break;
            }
            if m >= EDGE && (sum * sum) as f64 > c * (m * (n - m)) as f64 {
                return true;
            }
        }
        false
    }

    /// Of the `n` points before the newest `k` of the segment, those at or
    /// above key `t` (`up`), or at or below it: counted, when the bound
    /// from ranks cannot tell.
    fn beyond(&self, k: usize, n: usize, t: u32, up: bool) -> usize {
        self.seg()
            .0
            .iter()
            .rev()
            .filter(|&&key| key != 0)
            .skip(k)
            .take(n)
            .filter(|&&key| if up { key >= t } else { key <= t })
            .count()
    }

    /// False only when [`super::sequential::end_change`] of the segment at
    /// `t`'s rate calls no change.
    pub fn may_end(&self, t: &Thresholds) -> bool {
        let total = self.count;
        if total < TAILS[0] + MIN_REFERENCE || self.infinite > 0 {
            return false;
        }
        let longest = TAILS[TAILS.len() - 1];
        let len = total.min(longest + MAX_REFERENCE);
        // The newest points, newest first, as (key, doubled rank).
        let mut newest = [(0u32, 0u16); TAILS[TAILS.len() - 1]];
        let (keys, ranks) = self.seg();
        let mut have = 0;
        for (key, rank) in keys.iter().zip(ranks).rev() {
            if have == longest {
                break;
            }
            if *key != 0 {
                newest[have] = (*key, *rank);
                have += 1;
            }
        }
        // The tail in key order, grown as the tails lengthen.
        let mut tail = [(0u32, 0u16); TAILS[TAILS.len() - 1]];
        let mut held = 0;
        for (ti, &k) in TAILS.iter().enumerate() {
            if len < k + MIN_REFERENCE {
                break;
            }
            while held < k {
                // Insertion from the top: the tails are short.
                let e = newest[held];
                let mut at = held;
                while at > 0 && tail[at - 1].0 > e.0 {
                    tail[at] = tail[at - 1];
                    at -= 1;
                }
                tail[at] = e;
                held += 1;
            }
            let tail = &tail[..k];
            let n = (len - k).min(MAX_REFERENCE);
            if n < SHORT && k * 4 > n {
                continue;
            }
            // Points neither in the reference nor in the tail.
            let older = (total - n - k) as i64;
            for &(j, m) in t.levels(n, ti) {
                let (j, m) = (i64::from(j), usize::from(m));
                if m == 0 {
                    return true;
                }
                // Higher: the m-th highest tail point has at least
                // total - rank points at or above it in the segment.
                let (top, r) = tail[k - m];
                let mut first = k - m;
                while first > 0 && tail[first - 1].0 == top {
                    first -= 1;
                }
                let at_or_above = (k - first) as i64;
                let in_reference = total as i64 - i64::from(r) / 2 - at_or_above - older;
                if in_reference < j && (self.beyond(k, n, top, true) as i64) < j {
                    return true;
                }
                // Lower: the m-th lowest has at least rank + 1 at or below.
                let (bottom, r) = tail[m - 1];
                let mut last = m - 1;
                while last + 1 < k && tail[last + 1].0 == bottom {
                    last += 1;
                }
                let at_or_below = (last + 1) as i64;
                let in_reference = (i64::from(r) + 1) / 2 + 1 - at_or_below - older;
                if in_reference < j && (self.beyond(k, n, bottom, false) as i64) < j {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rank_cusum;
    use crate::stats::rng::SplitMix64;
    use crate::stats::sequential::end_change;

    fn direct_ranks(values: &[f64]) -> Vec<u16> {
        values
            .iter()
            .map(|v| {
                let less = values.iter().filter(|w| w.total_cmp(v).is_lt()).count();
                let equal = values.iter().filter(|w| w.total_cmp(v).is_eq()).count();
                (2 * less + equal - 1) as u16
            })
            .collect()
    }

    #[test]
    fn keys_keep_the_order_and_come_back() {
        let mut v = vec![-3.5f32, -0.0, 0.0, 1e-30, 0.25, 7.0, f32::INFINITY];
        v.sort_by(f32::total_cmp);
        let keys: Vec<u32> = v.iter().map(|&x| key(x)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert!(keys.iter().all(|&k| k != 0));
        for &x in &v {
            assert_eq!(value(key(x)).to_bits(), x.to_bits());
        }
        assert_eq!(key(f32::NAN), 0);
        assert!(value(0).is_nan());
    }

    /// Noise with steps, ties (durations at a millisecond's resolution)
    /// and runs the test skipped.
    fn series(rng: &mut SplitMix64, len: usize, case: usize) -> Vec<f32> {
        let step = [0.0, 0.5, 2.0, 6.0][case % 4];
        let at = len.saturating_sub(3 + case % 20);
        (0..len)
            .map(|i| {
                if case % 3 == 0 && rng.next_f64() < 0.05 {
                    return f32::NAN;
                }
                let mut v = 10.0 + rng.normal() + if i >= at { step } else { 0.0 };
                if case % 5 == 0 {
                    v = (v * 2.0).round() / 2.0;
                }
                v as f32
            })
            .collect()
    }

    #[test]
    fn kept_ranks_are_the_ranks_and_the_checks_never_miss() {
        let mut rng = SplitMix64::new(5);
        let thresholds: Vec<Thresholds> =
            [0.005, 0.5].iter().map(|&a| Thresholds::new(a)).collect();
        let (mut exact, mut skipped) = (0, 0);
        for case in 0..160 {
            let width = 20 + case % 250;
            let xs = series(&mut rng, width + 40, case);
            let mut w = RankedWindow::new(xs[..width].iter().map(|&x| key(x)).collect(), 0);
            for (step, &x) in xs[width..].iter().enumerate() {
                // Both ways of moving on.
                if step % 2 == 0 {
                    w.slide(key(x));
                } else {
                    w.pop_front();
                    w.push(key(x));
                }
                if step == 17 {
                    // A change alerted at some point: the segment restarts.
                    w.set_start(width / 3);
                }
                let (slots, values) = w.segment();
                assert_eq!(w.count(), values.len());
                assert_eq!(w.segment_ranks(), direct_ranks(&values), "{case} {step}");
                assert!(slots.iter().all(|&s| s >= w.start()));
                let fresh = RankedWindow::new(w.keys().to_vec(), w.start());
                assert_eq!(fresh, w, "{case} {step}");
                if rank_cusum::screen(&values) {
                    assert!(w.may_search(), "{case} {step}");
                }
                for t in &thresholds {
                    let called = end_change(&values, t.alpha()).is_some();
                    if called {
                        assert!(w.may_end(t), "{case} {step} {}", t.alpha());
                        exact += 1;
                    } else if !w.may_end(t) {
                        skipped += 1;
                    }
                }
            }
        }
        // Both kinds happened: steps were called, and noise was ruled out
        // without the exact check.
        assert!(exact > 200 && skipped > 2000, "{exact} {skipped}");
    }

    #[test]
    fn noise_is_mostly_ruled_out_from_ranks() {
        let mut rng = SplitMix64::new(9);
        let t = Thresholds::new(0.005);
        let (mut passed, trials) = (0, 2000);
        let mut w = RankedWindow::new(
            (0..256)
                .map(|_| key((1.0 + 0.05 * rng.normal()) as f32))
                .collect(),
            0,
        );
        for _ in 0..trials {
            w.slide(key((1.0 + 0.05 * rng.normal()) as f32));
            passed += usize::from(w.may_end(&t) || w.may_search());
        }
        // Measured: about 1% (the screen's share; the end check rules out all).
        assert!(passed < trials / 20, "{passed} of {trials}");
    }
}
