//! `tardy tests`: summaries of a test suite's reports (`show`) and the
//! per-test difference between two sides (`diff`), each side one or more
//! runs, with per-test significance (Welch, Benjamini-Hochberg across tests)
//! when there are two or more runs per side, and the shape diagnosis.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::diagnose::shape::{self, Shape};
use crate::ingest::reports::{Report, Status, TestId};
use crate::stats::compare::{self as engine, Correction, Options, TestChoice, Verdict};
use crate::stats::summary::median_by_selection;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedTime {
    pub name: String,
    pub seconds: f64,
}

/// What one run (or several, pooled) of a suite looks like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Show {
    /// `tardy.tests-show`, version 1.
    pub schema: String,
    pub schema_version: u32,
    pub sources: Vec<String>,
    pub tests: usize,
    pub by_status: BTreeMap<String, usize>,
    /// Sum of test durations (Go parents excluded: they include their subtests).
    pub total_s: f64,
    /// Sum of the outermost suites' own wall times, when stated.
    pub suite_wall_s: Option<f64>,
    pub time_by_status: BTreeMap<String, f64>,
    pub slowest_tests: Vec<NamedTime>,
    pub slowest_suites: Vec<NamedTime>,
    /// (upper bound in seconds, count): <1 ms, <10 ms, <100 ms, <1 s, <10 s, longer.
    pub histogram: Vec<(f64, usize)>,
    pub warnings: Vec<String>,
}

fn status_name(s: Status) -> &'static str {
    s.name()
}

pub fn show(r: &Report, top: usize) -> Show {
    let mut by_status = BTreeMap::new();
    let mut time_by_status = BTreeMap::new();
    let bounds = [0.001, 0.01, 0.1, 1.0, 10.0, f64::INFINITY];
    let mut histogram: Vec<(f64, usize)> = bounds.iter().map(|&b| (b, 0)).collect();
    let mut suites: HashMap<&str, f64> = HashMap::new();
    for c in &r.cases {
        *by_status
            .entry(status_name(c.status).to_string())
            .or_insert(0) += 1;
        if c.has_children {
            continue;
        }
        if let Some(d) = c.duration_s {
            *time_by_status
                .entry(status_name(c.status).to_string())
                .or_insert(0.0) += d;
            if let Some(h) = histogram.iter_mut().find(|(b, _)| d < *b) {
                h.1 += 1;
            }
            *suites.entry(&*c.id.suite).or_insert(0.0) += d;
        }
    }
    // Select the top N before formatting any name: a report may hold a million tests.
    let mut timed: Vec<(f64, usize)> = r
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.has_children)
        .filter_map(|(i, c)| c.duration_s.map(|d| (d, i)))
        .collect();
    let keep = top.min(timed.len());
    if keep > 0 && keep < timed.len() {
        timed.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
    }
    timed.truncate(keep);
    timed.sort_by(|a, b| b.0.total_cmp(&a.0));
    let tests: Vec<NamedTime> = timed
        .iter()
        .map(|&(d, i)| NamedTime {
            name: r.cases[i].id.display(),
            seconds: d,
        })
        .collect();
    let mut suites: Vec<NamedTime> = suites
        .into_iter()
        .map(|(n, s)| NamedTime {
            name: n.to_string(),
            seconds: s,
        })
        .collect();
    suites.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.name.cmp(&b.name)));
    suites.truncate(top);
    Show {
        schema: "tardy.tests-show".into(),
        schema_version: 1,
        sources: r.sources.clone(),
        tests: r.cases.len(),
        by_status,
        total_s: r.total_s(),
        suite_wall_s: r.suite_wall_s(),
        time_by_status,
        slowest_tests: tests,
        slowest_suites: suites,
        histogram,
        warnings: r.warnings.clone(),
    }
}

/// One test across both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRow {
    pub name: String,
    pub suite: String,
    pub class: String,
    pub test: String,
    /// Median over the side's runs, seconds.
    pub before_s: Option<f64>,
    pub after_s: Option<f64>,
    pub delta_s: Option<f64>,
    pub ratio: Option<f64>,
    pub status_before: Option<Status>,
    pub status_after: Option<Status>,
    pub runs: [usize; 2],
    /// With 2+ runs per side: Welch's t, Benjamini-Hochberg adjusted across tests.
    pub p_adjusted: Option<f64>,
    pub verdict: Option<Verdict>,
    /// A test with subtests (Go's `TestX` beside `TestX/case`): its time
    /// holds theirs, so it is listed with them, never counted beside them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parent: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    pub schema: String,
    #[serde(default)]
    pub schema_version: u32,
    pub runs: [usize; 2],
    /// Test results per side (the largest run of the side): 0 is an empty report.
    #[serde(default)]
    pub tests_per_side: [usize; 2],
    /// Tests present on both sides with durations.
    pub matched: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// (removed, added) pairs with the same test name in another suite or class.
    pub renamed: Vec<(String, String)>,
    pub newly_failing: Vec<String>,
    pub newly_skipped: Vec<String>,
    pub total_before_s: f64,
    pub total_after_s: f64,
    pub suite_wall_before_s: Option<f64>,
    pub suite_wall_after_s: Option<f64>,
    pub shapes: Vec<Shape>,
    /// Every test on either side, largest absolute change first.
    pub tests: Vec<TestRow>,
    pub warnings: Vec<String>,
}

/// One side's tests, borrowed from its reports (a million tests were
/// copied three times a side): each test's durations, its last status and
/// whether it is a parent.
struct Side<'r> {
    tests: HashMap<&'r TestId, Seen>,
}

struct Seen {
    durations: Vec<f64>,
    status: Status,
    parent: bool,
}

fn side(runs: &[Report]) -> Side<'_> {
    let mut s = Side {
        tests: HashMap::with_capacity(runs.iter().map(|r| r.cases.len()).max().unwrap_or(0)),
    };
    for r in runs {
        for c in &r.cases {
            let e = s.tests.entry(&c.id).or_insert_with(|| Seen {
                durations: Vec::new(),
                status: c.status,
                parent: false,
            });
            e.parent |= c.has_children;
            if let Some(d) = c.duration_s {
                e.durations.push(d);
            }
            e.status = c.status;
        }
    }
    s
}

fn med(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| median_by_selection(&mut v.to_vec()))
}

fn median_wall(runs: &[Report]) -> Option<f64> {
    let walls: Option<Vec<f64>> = runs.iter().map(Report::suite_wall_s).collect();
    walls.and_then(|w| med(&w))
}

fn failing(s: Status) -> bool {
    s.is_failure()
}

pub fn diff(before: &[Report], after: &[Report]) -> Diff {
    let (b, a) = (side(before), side(after));
    let mut ids: Vec<&TestId> = b.tests.keys().chain(a.tests.keys()).copied().collect();
    ids.sort_unstable();
    ids.dedup();
    let many = before.len() >= 2 && after.len() >= 2;
    let opts = Options {
        test: TestChoice::Welch,
        ..Options::default()
    };
    let mut rows = Vec::with_capacity(ids.len());
    let mut estimates: Vec<(usize, engine::Estimate)> = Vec::new();
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut newly_failing, mut newly_skipped) = (Vec::new(), Vec::new());
    let mut matched = Vec::new();
    let (mut added_s, mut removed_s) = (0.0, 0.0);
    let (mut cv_b, mut cv_a) = (Vec::new(), Vec::new());
    for id in ids {
        let (tb, ta) = (b.tests.get(id), a.tests.get(id));
        let parent = tb.is_some_and(|t| t.parent) || ta.is_some_and(|t| t.parent);
        let (db, da) = (tb.map(|t| &t.durations), ta.map(|t| &t.durations));
        let (mb, ma) = (db.and_then(|v| med(v)), da.and_then(|v| med(v)));
        let (sb, sa) = (tb.map(|t| t.status), ta.map(|t| t.status));
        let name = id.display();
        match (db.is_some(), da.is_some()) {
            (true, false) => {
                removed.push(name.clone());
                removed_s += if parent { 0.0 } else { mb.unwrap_or(0.0) };
            }
            (false, true) => {
                added.push(name.clone());
                added_s += if parent { 0.0 } else { ma.unwrap_or(0.0) };
            }
            _ => {}
        }
        if let (Some(sb), Some(sa)) = (sb, sa) {
            if failing(sa) && !failing(sb) {
                newly_failing.push(name.clone());
            }
            if sa == Status::Skipped && sb != Status::Skipped {
                newly_skipped.push(name.clone());
            }
        }
        if let (Some(x), Some(y), false) = (mb, ma, parent) {
            matched.push((name.clone(), x, y));
        }
        if many && !parent {
            if let (Some(vb), Some(va)) = (db, da) {
                let cv = |v: &[f64]| {
                    let s = crate::stats::summarize(v, 0.95)?;
                    (s.mean > 0.0).then_some(s.cv)
                };
                cv_b.extend(cv(vb));
                cv_a.extend(cv(va));
                if let Ok(e) = engine::compare(vb, va, &opts) {
                    estimates.push((rows.len(), e));
                }
            }
        }
        rows.push(TestRow {
            name,
            suite: id.suite.to_string(),
            class: id.class.to_string(),
            test: id.name.clone(),
            before_s: mb,
            after_s: ma,
            delta_s: mb.zip(ma).map(|(x, y)| y - x),
            ratio: mb.zip(ma).and_then(|(x, y)| (x > 0.0).then_some(y / x)),
            status_before: sb,
            status_after: sa,
            runs: [db.map_or(0, Vec::len), da.map_or(0, Vec::len)],
            p_adjusted: None,
            verdict: None,
            parent,
        });
    }
    if !estimates.is_empty() {
        let mut refs: Vec<&mut engine::Estimate> = estimates.iter_mut().map(|(_, e)| e).collect();
        engine::adjust(&mut refs, Correction::BenjaminiHochberg);
        for (i, e) in estimates {
            rows[i].p_adjusted = Some(e.p_adjusted);
            rows[i].verdict = Some(e.verdict);
        }
    }
    // Renamed-looking: a removed and an added test with the same test name.
    let mut renamed = Vec::new();
    for r in &removed {
        let tail = r.rsplit(" :: ").next().unwrap_or(r);
        if let Some(a) = added.iter().find(|a| a.rsplit(" :: ").next() == Some(tail)) {
            renamed.push((r.clone(), a.clone()));
        }
    }
    let total =
        |runs: &[Report]| med(&runs.iter().map(Report::total_s).collect::<Vec<_>>()).unwrap_or(0.0);
    let (wb, wa) = (median_wall(before), median_wall(after));
    let matched_n = matched.len();
    let input = shape::Input {
        matched,
        added_s,
        removed_s,
        added: added.len(),
        removed: removed.len(),
        wall: wb.zip(wa),
        spread: (!cv_b.is_empty() && !cv_a.is_empty()).then(|| {
            (
                median_by_selection(&mut cv_b),
                median_by_selection(&mut cv_a),
            )
        }),
    };
    rows.sort_by(|x, y| {
        let dx = x.delta_s.map_or(0.0, f64::abs);
        let dy = y.delta_s.map_or(0.0, f64::abs);
        dy.total_cmp(&dx).then(x.name.cmp(&y.name))
    });
    let mut warnings: Vec<String> = before
        .iter()
        .chain(after)
        .flat_map(|r| r.warnings.iter().cloned())
        .collect();
    warnings.dedup();
    Diff {
        schema: "tardy.tests-diff".into(),
        schema_version: 1,
        runs: [before.len(), after.len()],
        tests_per_side: [before, after]
            .map(|runs| runs.iter().map(|r| r.cases.len()).max().unwrap_or(0)),
        matched: matched_n,
        added,
        removed,
        renamed,
        newly_failing,
        newly_skipped,
        total_before_s: total(before),
        total_after_s: total(after),
        suite_wall_before_s: wb,
        suite_wall_after_s: wa,
        shapes: shape::diagnose(&input),
        tests: rows,
        warnings,
    }
}

/// Whether the suite grew by more than `pct` (0.05: 5%) from the runs
/// `before` to the runs `after`: with two runs or more a side, Welch's test
/// on their total times must prove it (the interval's low end above `pct`);
/// with one, the totals' ratio says it.
pub fn slower_than(
    before: &[crate::ingest::reports::Report],
    after: &[crate::ingest::reports::Report],
    d: &Diff,
    pct: f64,
) -> bool {
    if before.len() >= 2 && after.len() >= 2 {
        let totals = |runs: &[crate::ingest::reports::Report]| {
            runs.iter()
                .map(crate::ingest::reports::Report::total_s)
                .collect::<Vec<_>>()
        };
        let opts = crate::stats::compare::Options {
            test: crate::stats::compare::TestChoice::Welch,
            ..crate::stats::compare::Options::default()
        };
        crate::stats::compare::compare(&totals(before), &totals(after), &opts)
            .is_ok_and(|e| e.proven_slower() && e.ci_low.is_some_and(|lo| lo - 1.0 > pct))
    } else {
        d.total_before_s > 0.0 && d.total_after_s / d.total_before_s - 1.0 > pct
    }
}
