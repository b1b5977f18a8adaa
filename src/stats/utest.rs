//! The Mann-Whitney U test (Wilcoxon rank-sum), two-sided.
//!
//! Small samples use the exact distribution of U: without ties from the
//! Gaussian binomial coefficients, with ties by dynamic programming over the
//! tie groups (the permutation distribution of the mid-rank sum, as
//! go-moremath does). Larger samples use the normal approximation with the tie
//! correction and a continuity correction (as `scipy.stats.mannwhitneyu`'s
//! default asymptotic method). The exact limits are benchstat's: 50 per side
//! without ties, 25 with ties.

use super::dist::z_two_sided_p;

pub const EXACT_LIMIT: usize = 50;
pub const EXACT_LIMIT_TIES: usize = 25;
/// Beyond this many values per side the exact distribution is not computed
/// even when asked for: its f64 counts lose precision (checked against
/// big-integer arithmetic: error < 3e-15 up to 100 + 100), and the normal
/// approximation is excellent there.
pub const EXACT_MAX: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Exact,
    Asymptotic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct UTest {
    /// U of the first sample: the number of pairs (a, b) with a > b, ties counting 1/2.
    pub u1: f64,
    pub p_value: f64,
    pub method: Method,
    pub ties: bool,
}

/// The tie groups of the pooled samples: whether any value repeats, the sum of
/// t^3 - t over the groups (the normal approximation's correction), and the group
/// sizes themselves in value order, kept only when the samples are small enough for
/// the exact distribution (a million distinct values would otherwise keep a million
/// sizes).
struct Ties {
    any: bool,
    cubes: f64,
    groups: Vec<usize>,
}

/// Mid-ranks of the pooled samples: (ranks of `a`'s values summed, the ties). Each
/// side is sorted on its own and the two walked in step, so the pooled order is
/// never built (two sorted copies, not a pooled array of values and labels).
fn rank_sum(a: &[f64], b: &[f64]) -> (f64, Ties) {
    let sorted = |x: &[f64]| {
        let mut v = x.to_vec();
        v.sort_unstable_by(f64::total_cmp);
        v
    };
    let (sa, sb) = (sorted(a), sorted(b));
    let keep_groups = a.len().max(b.len()) <= EXACT_MAX;
    let mut ties = Ties {
        any: false,
        cubes: 0.0,
        groups: Vec::new(),
    };
    let (mut i, mut j, mut r1) = (0usize, 0usize, 0.0);
    while i < sa.len() || j < sb.len() {
        // The smallest value left, and how many of each side hold it.
        let v = match (sa.get(i), sb.get(j)) {
            (Some(&x), Some(&y)) => {
                if x.total_cmp(&y).is_le() {
                    x
                } else {
                    y
                }
            }
            (Some(&x), None) => x,
            (None, Some(&y)) => y,
            (None, None) => break,
        };
        let ka = sa[i..].iter().take_while(|&&x| x == v).count();
        let kb = sb[j..].iter().take_while(|&&y| y == v).count();
        let t = ka + kb;
        // Ranks i + j + 1 ..= i + j + t share their middle.
        let first = i + j;
        let mid = (first + first + t - 1) as f64 / 2.0 + 1.0;
        r1 += ka as f64 * mid;
        if t > 1 {
            ties.any = true;
        }
        ties.cubes += (t as f64).powi(3) - t as f64;
        if keep_groups {
            ties.groups.push(t);
        }
        i += ka;
        j += kb;
    }
    (r1, ties)
}

/// Choose the method as `method`, or automatically when `None`.
pub fn mann_whitney(a: &[f64], b: &[f64], method: Option<Method>) -> Option<UTest> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let (n1, n2) = (a.len(), b.len());
    let (r1, tie_info) = rank_sum(a, b);
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let ties = tie_info.any;
    let method = match method {
        Some(Method::Exact)
            if n1.max(n2) > EXACT_MAX || (ties && n1.max(n2) > EXACT_LIMIT_TIES * 2) =>
        {
            Some(Method::Asymptotic)
        }
        m => m,
    };
    let method = method.unwrap_or(
        if (!ties && n1 <= EXACT_LIMIT && n2 <= EXACT_LIMIT)
            || (ties && n1 <= EXACT_LIMIT_TIES && n2 <= EXACT_LIMIT_TIES)
        {
            Method::Exact
        } else {
            Method::Asymptotic
        },
    );
    let p_value = match method {
        Method::Exact => exact_p(n1, n2, u1, &tie_info.groups, ties),
        Method::Asymptotic => asymptotic_p(u1, n1, n2, tie_info.cubes),
    };
    Some(UTest {
        u1,
        p_value,
        method,
        ties,
    })
}

/// Counts of U = 0..=n1*n2 over all C(n1+n2, n1) arrangements without ties:
/// the coefficients of the Gaussian binomial [n1+n2 choose n1]_q.
pub fn u_counts(n1: usize, n2: usize) -> Vec<f64> {
    let (m, n) = (n1.min(n2), n1.max(n2));
    let len = m * n + 1;
    // Product over i = 1..=m of (1 - q^(n+i)) / (1 - q^i), as a polynomial.
    let mut poly = vec![0.0; len];
    poly[0] = 1.0;
    for i in 1..=m {
        // Multiply by (1 - q^(n+i)).
        let s = n + i;
        for k in (s..len).rev() {
            poly[k] -= poly[k - s];
        }
        // Divide by (1 - q^i): running sum with stride i.
        for k in i..len {
            poly[k] += poly[k - i];
        }
    }
    poly
}

/// The sizes (smaller first) and the cumulative distribution of U without ties.
type Cdf = ((usize, usize), Vec<f64>);

/// Two-sided exact p-value: 1 when U1 = U2, else 2 P(U <= min(U1, U2)).
fn exact_p(n1: usize, n2: usize, u1: f64, groups: &[usize], ties: bool) -> f64 {
    let nn = (n1 * n2) as f64;
    let umin = u1.min(nn - u1);
    if groups.len() <= 1 || (u1 - (nn - u1)).abs() < 1e-9 {
        return 1.0;
    }
    let cdf = if ties {
        // Doubled U is an integer; sum the distribution up to 2 * umin.
        // Only the sums up to 2 * umin are needed; the total is the number
        // of ways to choose sample 1's places, C(n1 + n2, n1).
        let upto = ((2.0 * umin).round() as usize).min(2 * n1 * n2);
        let dist = doubled_u_distribution(n1, n2, groups, upto);
        dist.iter().sum::<f64>() / choose(n1 + n2, n1)
    } else {
        // The distribution depends on the sizes alone: computed once per
        // (n1, n2) on this thread, as cumulative fractions.
        thread_local! {
            static CDF: std::cell::RefCell<Vec<Cdf>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let key = (n1.min(n2), n1.max(n2));
        let at = umin.round() as usize;
        CDF.with(|c| {
            let mut c = c.borrow_mut();
            if let Some((_, cdf)) = c.iter().find(|(k, _)| *k == key) {
                return cdf[at.min(cdf.len() - 1)];
            }
            let counts = u_counts(n1, n2);
            let total: f64 = counts.iter().sum();
            let mut run = 0.0;
            let cdf: Vec<f64> = counts
                .iter()
                .map(|x| {
                    run += x;
                    run / total
                })
                .collect();
            let v = cdf[at.min(cdf.len() - 1)];
            if c.len() < 64 {
                c.push((key, cdf));
            }
            v
        })
    };
    (2.0 * cdf).min(1.0)
}

/// The permutation distribution of 2 U1 given the tie groups (in value
/// order): entry k is the number of ways to draw sample 1 so that 2 U1 = k.
fn doubled_u_distribution(n1: usize, n2: usize, groups: &[usize], upto: usize) -> Vec<f64> {
    let n = n1 + n2;
    // Sums only grow as groups are added: none past the largest wanted (the
    // doubled rank sum of sample 1 at 2 U1 = upto) is ever needed. A clear
    // difference (a small U) needs a small table.
    let offset = n1 * (n1 + 1);
    let max_sum = (offset + upto).min(n * (n + 1));
    let width = max_sum + 1;
    // ways[k * width + s]: ways to put k values of sample 1 in the groups so
    // far with doubled rank sum s. One flat table updated in place (a
    // knapsack's order: k and s descending), sums bounded by what the groups
    // so far can reach: 15,000 rows of 10+10 runs spent 40% of a compare in
    // allocating and sweeping whole tables.
    let mut ways = vec![0.0f64; (n1 + 1) * width];
    ways[0] = 1.0;
    let mut start = 0usize;
    let mut reach = 0usize; // the largest doubled sum reachable so far
    let mut scratch: Vec<f64> = Vec::new();
    for &t in groups {
        let doubled_mid = 2 * start + t + 1; // ranks start+1 ..= start+t
        let top = t.min(n1);
        let end = start + t; // values placed after this group
        // Counts after this group: at most `end` of sample 1 placed, and at
        // least enough that the groups left can still make n1.
        let k_hi = n1.min(end);
        let k_lo = (n1 + end).saturating_sub(n);
        // The largest sum worth keeping with k of sample 1 placed: the n1 - k
        // still to come take at least ranks end+1 ..= end+(n1-k), doubled
        // r (2 end + r + 1), and the total must stay within max_sum.
        let keep = |k: usize| {
            let r = n1 - k;
            max_sum.saturating_sub(r * (2 * end + r + 1))
        };
        if t == 1 {
            for k in (k_lo.max(1)..=k_hi).rev() {
                let (lo, hi) = ways.split_at_mut(k * width);
                let (from, to) = (&lo[(k - 1) * width..], &mut hi[..width]);
                let top_s = (reach + doubled_mid).min(keep(k));
                for s in (doubled_mid..=top_s).rev() {
                    to[s] += from[s - doubled_mid];
                }
            }
        } else {
            scratch.clear();
            scratch.extend_from_slice(&ways);
            let mut binom = 1.0;
            for c in 1..=top {
                binom = binom * (t - c + 1) as f64 / c as f64;
                let add = c * doubled_mid;
                if add > max_sum {
                    break;
                }
                for k in k_lo.saturating_sub(c)..=k_hi - c {
                    let Some(top_s) = keep(k + c).checked_sub(add) else {
                        continue;
                    };
                    for s in 0..=reach.min(top_s) {
                        let w = scratch[k * width + s];
                        if w != 0.0 {
                            ways[(k + c) * width + s + add] += binom * w;
                        }
                    }
                }
            }
        }
        reach = (reach + top * doubled_mid).min(max_sum);
        start += t;
    }
    // 2 U1 = 2 R1 - n1 (n1 + 1).
    ways[n1 * width..]
        .iter()
        .skip(offset)
        .copied()
        .take(upto + 1)
        .collect()
}

/// C(n, k), as a float (exact while it fits 53 bits; n is at most 200 here).
fn choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (1..=k).fold(1.0, |c, i| c * (n - k + i) as f64 / i as f64)
}

/// `tie` is the sum of t^3 - t over the tie groups.
fn asymptotic_p(u1: f64, n1: usize, n2: usize, tie: f64) -> f64 {
    let (f1, f2) = (n1 as f64, n2 as f64);
    let n = f1 + f2;
    let u = u1.max(f1 * f2 - u1);
    let mu = f1 * f2 / 2.0;
    let var = f1 * f2 / 12.0 * ((n + 1.0) - tie / (n * (n - 1.0)));
    if var <= 0.0 {
        return 1.0; // all values equal
    }
    let z = (u - mu - 0.5) / var.sqrt();
    z_two_sided_p(z).min(1.0)
}

/// The smallest two-sided p-value any arrangement of n1 and n2 values can
/// give (no ties): 2 / C(n1 + n2, n1).
pub fn min_p(n1: usize, n2: usize) -> f64 {
    let mut c = 1.0f64;
    let (k, n) = (n1.min(n2), n1 + n2);
    for i in 0..k {
        c = c * (n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

#[cfg(test)]
mod tests {
    /// The straightforward table (a fresh one per tie group, every sum):
    /// the reference the faster in-place one must equal.
    fn reference_distribution(n1: usize, n2: usize, groups: &[usize]) -> Vec<f64> {
        let n = n1 + n2;
        let max_sum = n * (n + 1);
        let mut ways = vec![vec![0.0f64; max_sum + 1]; n1 + 1];
        ways[0][0] = 1.0;
        let mut start = 0usize;
        for &t in groups {
            let mid = 2 * start + t + 1;
            let mut next = vec![vec![0.0f64; max_sum + 1]; n1 + 1];
            let mut binom = 1.0;
            for c in 0..=t.min(n1) {
                if c > 0 {
                    binom = binom * (t - c + 1) as f64 / c as f64;
                }
                let add = c * mid;
                for k in 0..=n1 - c {
                    for s in 0..=max_sum - add {
                        next[k + c][s + add] += binom * ways[k][s];
                    }
                }
            }
            ways = next;
            start += t;
        }
        let offset = n1 * (n1 + 1);
        ways[n1]
            .iter()
            .skip(offset)
            .copied()
            .take(2 * n1 * n2 + 1)
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn the_in_place_tie_table_equals_the_straightforward_one(
            n1 in 1usize..9,
            n2 in 1usize..9,
            cuts in proptest::collection::vec(1usize..4, 1..16),
            upto_frac in 0.0f64..=1.0,
        ) {
            // Tie groups of sizes from `cuts`, summing to n1 + n2.
            let n = n1 + n2;
            let mut groups = Vec::new();
            let mut left = n;
            for c in cuts {
                if left == 0 {
                    break;
                }
                let t = c.min(left);
                groups.push(t);
                left -= t;
            }
            if left > 0 {
                groups.push(left);
            }
            let slow = reference_distribution(n1, n2, &groups);
            // Cut at any sum: the same start of the distribution.
            let upto = (upto_frac * (2 * n1 * n2) as f64).round() as usize;
            let fast = doubled_u_distribution(n1, n2, &groups, upto);
            proptest::prop_assert_eq!(fast.len(), upto + 1);
            for (a, b) in fast.iter().zip(&slow) {
                proptest::prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{} vs {}", a, b);
            }
            // The total is the number of ways to choose sample 1's places.
            let total: f64 = slow.iter().sum();
            proptest::prop_assert!((total - choose(n1 + n2, n1)).abs() <= 1e-9 * total);
        }
    }

    use super::*;

    /// 2 P(U <= min(U1, U2)) by enumerating every way to pick sample 1's positions.
    fn brute_force_p(a: &[f64], b: &[f64]) -> f64 {
        let all: Vec<f64> = a.iter().chain(b).copied().collect();
        let (n1, n) = (a.len(), all.len());
        let u_of = |first: &[f64], second: &[f64]| -> f64 {
            let mut u = 0.0;
            for x in first {
                for y in second {
                    u += if x > y {
                        1.0
                    } else if x == y {
                        0.5
                    } else {
                        0.0
                    };
                }
            }
            u
        };
        let u1 = u_of(a, b);
        let umin = u1.min((n1 * (n - n1)) as f64 - u1);
        if (u1 - ((n1 * (n - n1)) as f64 - u1)).abs() < 1e-9 {
            return 1.0;
        }
        let (mut hits, mut total) = (0u64, 0u64);
        for mask in 0u32..(1 << n) {
            if mask.count_ones() as usize != n1 {
                continue;
            }
            let first: Vec<f64> = (0..n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| all[i])
                .collect();
            let second: Vec<f64> = (0..n)
                .filter(|i| mask & (1 << i) == 0)
                .map(|i| all[i])
                .collect();
            total += 1;
            if u_of(&first, &second) <= umin + 1e-9 {
                hits += 1;
            }
        }
        (2.0 * hits as f64 / total as f64).min(1.0)
    }

    #[test]
    fn exact_with_ties_matches_enumeration() {
        let cases: [(&[f64], &[f64]); 5] = [
            (&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 4.0, 5.0]),
            (&[1.0, 1.0, 1.0], &[1.0, 2.0, 2.0]),
            (&[5.0, 5.0, 6.0, 7.0, 7.0, 7.0], &[7.0, 8.0, 8.0, 9.0, 5.0]),
            (&[1.0, 2.0, 3.0], &[1.0, 2.0, 3.0]),
            (
                &[10.0, 10.1, 10.1, 10.2],
                &[10.1, 10.3, 10.3, 10.4, 10.2, 10.5],
            ),
        ];
        for (a, b) in cases {
            let t = mann_whitney(a, b, Some(Method::Exact)).unwrap();
            assert!(t.ties);
            let expected = brute_force_p(a, b);
            assert!(
                (t.p_value - expected).abs() < 1e-12,
                "{a:?} {b:?}: {} vs {expected}",
                t.p_value
            );
        }
    }

    proptest::proptest! {
        /// The exact p-value with ties (its table cut at the observed U, its
        /// total C(n1+n2, n1)) is the enumeration's, on any small samples of
        /// few distinct values.
        #[test]
        fn exact_with_ties_is_the_enumeration_on_random_samples(
            a in proptest::collection::vec(0u8..5, 1..7),
            b in proptest::collection::vec(0u8..5, 1..7),
        ) {
            let a: Vec<f64> = a.into_iter().map(f64::from).collect();
            let b: Vec<f64> = b.into_iter().map(f64::from).collect();
            let t = mann_whitney(&a, &b, Some(Method::Exact)).unwrap();
            let expected = brute_force_p(&a, &b);
            proptest::prop_assert!(
                (t.p_value - expected).abs() < 1e-12,
                "{:?} {:?}: {} vs {}", a, b, t.p_value, expected
            );
        }
    }

    #[test]
    fn exact_without_ties_matches_enumeration() {
        let a = [1.0, 4.0, 6.0, 9.0];
        let b = [2.0, 3.0, 5.0, 7.0, 8.0, 10.0, 11.0];
        let t = mann_whitney(&a, &b, Some(Method::Exact)).unwrap();
        assert!((t.p_value - brute_force_p(&a, &b)).abs() < 1e-12);
    }

    #[test]
    fn minimum_p_values_are_benchstats() {
        // benchmath uTestMinP: 3 -> 0.1, 4 -> 0.02857, 5 -> 0.007937
        assert!((min_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((min_p(4, 4) - 0.028_571_428_571_428_57).abs() < 1e-12);
        assert!((min_p(5, 5) - 0.007936507936507936).abs() < 1e-12);
    }

    #[test]
    fn all_equal_gives_p_one() {
        let t = mann_whitney(&[1.0; 4], &[1.0; 5], None).unwrap();
        assert_eq!(t.p_value, 1.0);
    }
}
