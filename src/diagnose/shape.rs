//! The shape of a test suite's slowdown (seeds 000 and 001): is it a
//! constant cost added to every test (a timer quantum, a process start), a
//! factor on every test (a slower CPU), a few tests, more tests, time spent
//! outside the tests, or only more noise? Each shape comes with the share of
//! the change it explains and the numbers behind it.

use serde::{Deserialize, Serialize};

use crate::stats::rng::SplitMix64;

/// Matched tests (median seconds before, after) and the totals around them.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// (key, before, after) for tests present on both sides; the key names
    /// the test through [`diagnose`]'s `name` (a million names are not
    /// copied for the few a shape lists).
    pub matched: Vec<(u32, f64, f64)>,
    /// Total seconds of tests only after / only before.
    pub added_s: f64,
    pub removed_s: f64,
    pub added: usize,
    pub removed: usize,
    /// Sum of the suites' own wall times, before and after, when reports state them.
    pub wall: Option<(f64, f64)>,
    /// Median per-test coefficient of variation across runs, before and after
    /// (only with 2+ runs per side).
    pub spread: Option<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ShapeKind {
    /// Most tests changed by about the same time.
    ConstantOverhead {
        per_test_overhead_s: f64,
        /// Share of matched tests whose change lies within ±30% of the overhead.
        tests_share: f64,
        /// A known timer or scheduling quantum near the overhead, in words.
        quantum: Option<String>,
    },
    /// Most tests changed by about the same factor.
    Proportional {
        factor: f64,
        /// Share of matched tests (over 1 ms) whose ratio lies within ±10% of the factor.
        tests_share: f64,
    },
    /// A few tests explain most of the change.
    Concentrated { tests: Vec<(String, f64)> },
    /// Tests were added (or removed).
    MoreTests {
        added: usize,
        removed: usize,
        net_s: f64,
    },
    /// The suites' wall time changed more than the sum of their tests.
    OutsideTests {
        wall_change_s: f64,
        tests_change_s: f64,
    },
    /// Run-to-run spread grew without a shift.
    Noisier { cv_before: f64, cv_after: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    #[serde(flatten)]
    pub kind: ShapeKind,
    /// Share of the total change this shape accounts for (0..1).
    pub explained_share: f64,
    /// One sentence with the evidence.
    pub summary: String,
    /// What to look at next.
    pub advice: String,
}

/// Known quanta: (seconds, what it is).
const QUANTA: [(f64, &str); 4] = [
    (
        0.0156,
        "15.6 ms, the default Windows timer resolution (as NUnit 3.4's Thread.Sleep(1) under Windows' 15.6 ms timer)",
    ),
    (0.010, "10 ms, a Linux timer tick at HZ=100"),
    (0.004, "4 ms, a Linux timer tick at HZ=250"),
    (0.001, "1 ms, a 1 ms sleep or a HZ=1000 tick"),
];

/// The known quantum nearest `c`: a single quantum within 20% (the measured
/// overhead also holds the wait it replaced), else a small multiple within 10%.
pub fn quantum(c: f64) -> Option<String> {
    let rel = |target: f64| (c - target).abs() / target;
    let single = QUANTA
        .iter()
        .filter(|(q, _)| rel(*q) <= 0.2)
        .min_by(|a, b| rel(a.0).total_cmp(&rel(b.0)));
    if let Some((_, what)) = single {
        return Some(format!("≈ {what}"));
    }
    QUANTA
        .iter()
        .flat_map(|&(q, what)| (2..=4).map(move |k| (q * k as f64, k, what)))
        .filter(|(t, _, _)| rel(*t) <= 0.1)
        .min_by(|a, b| rel(a.0).total_cmp(&rel(b.0)))
        .map(|(_, k, what)| format!("≈ {k} × {what}"))
}

fn median(v: &mut [f64]) -> f64 {
    crate::stats::summary::median_by_selection(v)
}

/// Theil-Sen: the median of pairwise slopes (sampled beyond 200,000 pairs),
/// and the median intercept.
pub fn theil_sen(points: &[(f64, f64)], seed: u64) -> Option<(f64, f64)> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let mut slopes = Vec::new();
    let pairs = n * (n - 1) / 2;
    let slope = |i: usize, j: usize| {
        let (x1, y1) = points[i];
        let (x2, y2) = points[j];
        (x2 != x1).then(|| (y2 - y1) / (x2 - x1))
    };
    if pairs <= 200_000 {
        for i in 0..n {
            for j in i + 1..n {
                slopes.extend(slope(i, j));
            }
        }
    } else {
        let mut rng = SplitMix64::new(seed);
        for _ in 0..200_000 {
            let (i, j) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
            if i != j {
                slopes.extend(slope(i, j));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    let b = median(&mut slopes);
    let mut intercepts: Vec<f64> = points.iter().map(|(x, y)| y - b * x).collect();
    Some((median(&mut intercepts), b))
}

/// The shapes of the change, largest first; `name` names a matched test by its key.
pub fn diagnose(input: &Input, name: &dyn Fn(u32) -> String) -> Vec<Shape> {
    let mut out = Vec::new();
    let before: f64 = input.matched.iter().map(|m| m.1).sum();
    let after: f64 = input.matched.iter().map(|m| m.2).sum();
    let matched_change = after - before;
    let net_tests = input.added_s - input.removed_s;
    let total_change = matched_change + net_tests;
    let n = input.matched.len();
    let share = |part: f64| {
        if total_change.abs() > 0.0 {
            (part / total_change).clamp(0.0, 1.0)
        } else {
            0.0
        }
    };
    let points: Vec<(f64, f64)> = input.matched.iter().map(|m| (m.1, m.2)).collect();

    if let Some((a, b)) = theil_sen(&points, 1) {
        // Constant part: n·a; proportional part: (b - 1)·Σbefore.
        let mut deltas: Vec<f64> = input.matched.iter().map(|m| m.2 - m.1).collect();
        let c = median(&mut deltas);
        let constant = if (b - 1.0).abs() < 0.1 { c } else { a };
        if constant.abs() >= 0.0005 {
            let near = input
                .matched
                .iter()
                .filter(|m| {
                    let d = m.2 - m.1;
                    d.signum() == constant.signum() && (d - constant).abs() <= 0.3 * constant.abs()
                })
                .count() as f64
                / n as f64;
            let part = n as f64 * constant;
            if near >= 0.3 && share(part) >= 0.1 {
                let q = quantum(constant.abs());
                out.push(Shape {
                    summary: format!(
                        "{:.0}% of tests {} about {:.2} ms each (±30%): a constant per-test cost of {:.2} ms explains {:.0}% of the change{}",
                        near * 100.0,
                        if constant > 0.0 { "gained" } else { "lost" },
                        constant.abs() * 1e3,
                        constant * 1e3,
                        share(part) * 100.0,
                        q.as_ref().map_or(String::new(), |q| format!("; it is {q}"))
                    ),
                    advice: "a cost paid once per test: a sleep or wait rounded up to the timer quantum, process or fixture start-up; compare timer resolution (sleep granularity) and process spawn cost between the two machines or configurations".into(),
                    kind: ShapeKind::ConstantOverhead { per_test_overhead_s: constant, tests_share: near, quantum: q },
                    explained_share: share(part),
                });
            }
        }
        let big: Vec<&(u32, f64, f64)> = input.matched.iter().filter(|m| m.1 >= 0.001).collect();
        if (b - 1.0).abs() >= 0.05 && !big.is_empty() {
            let mut ratios: Vec<f64> = big.iter().map(|m| m.2 / m.1).collect();
            let f = median(&mut ratios);
            let near = ratios.iter().filter(|r| (**r - f).abs() <= 0.1 * f).count() as f64
                / big.len() as f64;
            // The factor the tests show carries the change it explains: a
            // factor of 1.00 explains nothing, whatever the slope of a few
            // outliers says (coarse timers put most tests on one value).
            let part = (f - 1.0) * before;
            if (f - 1.0).abs() >= 0.05 && near >= 0.3 && share(part) >= 0.1 {
                out.push(Shape {
                    summary: format!(
                        "{:.0}% of tests over 1 ms scaled by about {:.2}x (±10%): a factor on every test explains {:.0}% of the change",
                        near * 100.0,
                        f,
                        share(part) * 100.0
                    ),
                    advice: "every test runs slower by the same factor: a slower or throttled CPU, a different machine, a debug build or a global setting (frequency governor, mitigations); compare the machines".into(),
                    kind: ShapeKind::Proportional { factor: f, tests_share: near },
                    explained_share: share(part),
                });
            }
        }
    }

    // Concentrated: the fewest tests that hold 80% of the increase.
    let mut increases: Vec<(u32, f64)> = input
        .matched
        .iter()
        .map(|m| (m.0, m.2 - m.1))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    let positive: f64 = increases.iter().map(|x| x.1).sum();
    if positive > 0.0 && matched_change > 0.0 {
        increases.sort_by(|x, y| y.1.total_cmp(&x.1));
        let mut cum = 0.0;
        let mut k = 0;
        while k < increases.len() && cum < 0.8 * positive {
            cum += increases[k].1;
            k += 1;
        }
        let limit = 3usize.max(n / 20);
        if k <= limit && n > k {
            let tests: Vec<(String, f64)> =
                increases[..k].iter().map(|&(i, d)| (name(i), d)).collect();
            out.push(Shape {
                summary: format!(
                    "{k} of {n} tests hold {:.0}% of the increase ({:.3} s of {:.3} s)",
                    cum / positive * 100.0,
                    cum,
                    positive
                ),
                advice: "the change is in these tests or the code they exercise: bisect on them"
                    .into(),
                kind: ShapeKind::Concentrated { tests },
                explained_share: share(cum),
            });
        }
    }

    if (input.added > 0 || input.removed > 0) && share(net_tests) >= 0.1 {
        out.push(Shape {
            summary: format!(
                "{} tests added and {} removed: a net {:+.3} s, {:.0}% of the change",
                input.added,
                input.removed,
                net_tests,
                share(net_tests) * 100.0
            ),
            advice: if net_tests >= 0.0 {
                "the suite grew; the tests that were there did not get slower by this much"
            } else {
                "the suite shrank (tests removed, or not run: an empty shard, a filter); the tests that are left did not get faster by this much"
            }
            .into(),
            kind: ShapeKind::MoreTests {
                added: input.added,
                removed: input.removed,
                net_s: net_tests,
            },
            explained_share: share(net_tests),
        });
    }

    if let Some((wb, wa)) = input.wall {
        let wall_change = wa - wb;
        let outside = wall_change - total_change;
        if wall_change > 0.0 && outside / wall_change >= 0.2 && outside > 0.01 {
            out.push(Shape {
                summary: format!(
                    "the suites' own wall time grew by {wall_change:.3} s, the tests in them by {total_change:.3} s: {outside:.3} s ({:.0}%) went outside test bodies",
                    outside / wall_change * 100.0
                ),
                advice: "look at suite setup and teardown, process start, fixture and module loading, and lost parallelism".into(),
                kind: ShapeKind::OutsideTests { wall_change_s: wall_change, tests_change_s: total_change },
                explained_share: (outside / wall_change).clamp(0.0, 1.0),
            });
        }
    }

    if let Some((cb, ca)) = input.spread {
        let shifted = before > 0.0 && (after / before - 1.0).abs() >= 0.05;
        if ca >= 1.5 * cb && ca > 0.02 && !shifted {
            out.push(Shape {
                summary: format!(
                    "run-to-run spread grew from CV {:.1}% to {:.1}% per test while the total barely moved",
                    cb * 100.0,
                    ca * 100.0
                ),
                advice: "timings got noisier, not slower: look for contention, flaky waits or a bimodal tail".into(),
                kind: ShapeKind::Noisier { cv_before: cb, cv_after: ca },
                explained_share: 0.0,
            });
        }
    }
    out.sort_by(|x, y| y.explained_share.total_cmp(&x.explained_share));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(before: &[f64], f: impl Fn(usize, f64) -> f64) -> Input {
        Input {
            matched: before
                .iter()
                .enumerate()
                .map(|(i, &b)| (i as u32, b, f(i, b)))
                .collect(),
            ..Input::default()
        }
    }

    fn t(i: u32) -> String {
        format!("t{i}")
    }

    fn spread_times(n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| 0.002 + 0.05 * ((i * 37 % 100) as f64 / 100.0))
            .collect()
    }

    #[test]
    fn constant_overhead_names_the_windows_quantum() {
        let before = spread_times(200);
        let shapes = diagnose(
            &input(&before, |i, b| b + 0.0156 + 0.0003 * ((i % 5) as f64 - 2.0)),
            &t,
        );
        match &shapes[0].kind {
            ShapeKind::ConstantOverhead {
                per_test_overhead_s,
                tests_share,
                quantum,
            } => {
                assert!((per_test_overhead_s - 0.0156).abs() < 0.0005);
                assert!(*tests_share > 0.9);
                assert!(quantum.as_deref().unwrap_or("").contains("15.6 ms"));
            }
            other => panic!("{other:?}"),
        }
        assert!(shapes[0].explained_share > 0.9);
    }

    #[test]
    fn quanta_prefer_a_single_tick() {
        assert!(quantum(0.018).unwrap().contains("15.6 ms"));
        assert!(quantum(0.0102).unwrap().starts_with("≈ 10 ms"));
        assert!(quantum(0.0198).unwrap().starts_with("≈ 2 × 10 ms"));
        assert!(quantum(0.0041).unwrap().starts_with("≈ 4 ms"));
        assert_eq!(quantum(0.070), None);
    }

    #[test]
    fn proportional_slowdown_is_a_factor() {
        let before = spread_times(200);
        let shapes = diagnose(
            &input(&before, |i, b| b * (1.5 + 0.01 * ((i % 3) as f64 - 1.0))),
            &t,
        );
        match &shapes[0].kind {
            ShapeKind::Proportional { factor, .. } => assert!((factor - 1.5).abs() < 0.03),
            other => panic!("{other:?}"),
        }
        assert!(
            !shapes
                .iter()
                .any(|s| matches!(s.kind, ShapeKind::ConstantOverhead { .. }))
        );
    }

    #[test]
    fn a_few_tests_are_concentrated() {
        let before = spread_times(200);
        let shapes = diagnose(
            &input(&before, |i, b| if i == 7 || i == 42 { b + 2.0 } else { b }),
            &t,
        );
        match &shapes[0].kind {
            ShapeKind::Concentrated { tests } => {
                let names: Vec<&str> = tests.iter().map(|t| t.0.as_str()).collect();
                assert_eq!(names.len(), 2);
                assert!(names.contains(&"t7") && names.contains(&"t42"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn more_tests_and_outside_time() {
        let before = spread_times(50);
        let mut i = input(&before, |_, b| b);
        i.added = 30;
        i.added_s = 3.0;
        i.wall = Some((10.0, 20.0));
        let shapes = diagnose(&i, &t);
        assert!(
            shapes
                .iter()
                .any(|s| matches!(s.kind, ShapeKind::MoreTests { added: 30, .. }))
        );
        assert!(
            shapes
                .iter()
                .any(|s| matches!(s.kind, ShapeKind::OutsideTests { .. })),
            "{shapes:?}"
        );
    }

    #[test]
    fn nothing_changed_nothing_said() {
        let before = spread_times(100);
        assert!(diagnose(&input(&before, |_, b| b), &t).is_empty());
    }
}
