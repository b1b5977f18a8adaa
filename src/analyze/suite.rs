//! `tardy tests`: summaries of a test suite's reports (`show`) and the
//! per-test difference between two sides (`diff`), each side one or more
//! runs, with per-test significance (Welch, Benjamini-Hochberg across tests)
//! when there are two or more runs per side, and the shape diagnosis.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::names::Names;
use super::rows::{Compact, Rows};
use crate::diagnose::shape::{self, Shape};
use crate::ingest::error::IngestError;
use crate::ingest::reports::{self, CaseSink, FxBuild, Report, Status, Streamed, TestCase};
use crate::stats::compare::{self as engine, Correction, Options, TestChoice};
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

/// Every status, each at its [`slot`].
const STATUSES: [Status; 6] = [
    Status::Passed,
    Status::Flaky,
    Status::Failed,
    Status::Errored,
    Status::Aborted,
    Status::Skipped,
];
/// A status's place in [`STATUSES`] (a new status fails to compile here).
const fn slot(s: Status) -> usize {
    match s {
        Status::Passed => 0,
        Status::Flaky => 1,
        Status::Failed => 2,
        Status::Errored => 3,
        Status::Aborted => 4,
        Status::Skipped => 5,
    }
}

const _: () = {
    let mut i = 0;
    while i < STATUSES.len() {
        assert!(slot(STATUSES[i]) == i);
        i += 1;
    }
};

/// A run summarised, one case at a time: what [`show`] computes, fed by a
/// report held whole or by a streaming read (the cases in file order).
pub struct ShowAcc {
    top: usize,
    cases: usize,
    /// Per status ([`STATUSES`] order): the cases, and the time of those
    /// timed (`None` while none was). Named once, at the end: no string
    /// per case.
    by_status: [usize; STATUSES.len()],
    time_by_status: [Option<f64>; STATUSES.len()],
    histogram: Vec<(f64, usize)>,
    suites: HashMap<Arc<str>, f64, FxBuild>,
    /// The suite the last cases were of, with its time so far (its entry
    /// taken out of `suites`): a suite's cases come together, and are
    /// summed without a lookup each.
    current: Option<(Arc<str>, f64)>,
    total_s: f64,
    /// The slowest so far: (seconds, -file order) in a min-heap, each with its name.
    slowest: BinaryHeap<Reverse<(Timed, String)>>,
}

/// A duration ordered for the heap: longer first, then earlier in the file.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Timed(f64, Reverse<usize>);

impl Eq for Timed {}
impl PartialOrd for Timed {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timed {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

impl ShowAcc {
    /// Listing the `top` slowest tests and suites.
    pub fn new(top: usize) -> ShowAcc {
        let bounds = [0.001, 0.01, 0.1, 1.0, 10.0, f64::INFINITY];
        ShowAcc {
            top,
            cases: 0,
            by_status: [0; STATUSES.len()],
            time_by_status: [None; STATUSES.len()],
            histogram: bounds.iter().map(|&b| (b, 0)).collect(),
            suites: HashMap::default(),
            current: None,
            total_s: 0.0,
            slowest: BinaryHeap::new(),
        }
    }

    /// The next case of the run.
    pub fn case(&mut self, c: &TestCase) {
        let order = self.cases;
        self.cases += 1;
        let status = slot(c.status);
        self.by_status[status] += 1;
        if c.has_children {
            return;
        }
        let Some(d) = c.duration_s else { return };
        self.total_s += d;
        let t = &mut self.time_by_status[status];
        *t = Some(t.unwrap_or(0.0) + d);
        if let Some(h) = self.histogram.iter_mut().find(|(b, _)| d < *b) {
            h.1 += 1;
        }
        match &mut self.current {
            // Arc's equality compares the pointers first: cases share their suite's.
            Some((suite, t)) if *suite == c.id.suite => *t += d,
            current => {
                let sum = self.suites.remove(&c.id.suite).map_or(d, |t| t + d);
                if let Some((suite, t)) = current.replace((c.id.suite.clone(), sum)) {
                    self.suites.insert(suite, t);
                }
            }
        }
        // A name is made only for a test that enters the slowest.
        let t = Timed(d, Reverse(order));
        if self.slowest.len() < self.top {
            self.slowest.push(Reverse((t, c.id.display())));
        } else if self.slowest.peek().is_some_and(|w| t > w.0.0) {
            self.slowest.pop();
            self.slowest.push(Reverse((t, c.id.display())));
        }
    }

    /// The summary, with the run's sources, warnings and suites' own time.
    pub fn finish(
        self,
        sources: Vec<String>,
        warnings: Vec<String>,
        suite_wall_s: Option<f64>,
    ) -> Show {
        let mut suites = self.suites;
        if let Some((suite, t)) = self.current {
            suites.insert(suite, t);
        }
        let named = |i: usize| status_name(STATUSES[i]).to_string();
        let by_status = (self.by_status.iter().enumerate())
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| (named(i), *n))
            .collect();
        let time_by_status = (self.time_by_status.iter().enumerate())
            .filter_map(|(i, t)| Some((named(i), (*t)?)))
            .collect();
        let mut slowest: Vec<(Timed, String)> = self.slowest.into_iter().map(|r| r.0).collect();
        slowest.sort_by_key(|b| Reverse(b.0));
        let mut suites: Vec<NamedTime> = (suites.into_iter())
            .map(|(n, s)| NamedTime {
                name: n.to_string(),
                seconds: s,
            })
            .collect();
        suites.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then(a.name.cmp(&b.name)));
        suites.truncate(self.top);
        Show {
            schema: "tardy.tests-show".into(),
            schema_version: 1,
            sources,
            tests: self.cases,
            by_status,
            total_s: self.total_s,
            suite_wall_s,
            time_by_status,
            slowest_tests: (slowest.into_iter())
                .map(|(t, name)| NamedTime { name, seconds: t.0 })
                .collect(),
            slowest_suites: suites,
            histogram: self.histogram,
            warnings,
        }
    }
}

/// What one run of a suite looks like: the `top` slowest tests (the
/// earlier in the file first among equal times) and suites.
pub fn show(r: &Report, top: usize) -> Show {
    let mut acc = ShowAcc::new(top);
    r.cases.iter().for_each(|c| acc.case(c));
    acc.finish(r.sources.clone(), r.warnings.clone(), r.suite_wall_s())
}

/// A run streamed into a [`ShowAcc`]: exact while no result repeats an
/// identity and no test has subtests (a name with '/'), which a report held
/// whole must settle first; on either, the run is read whole instead. A
/// repeat is caught by its identity's hash within its suite (results of one
/// suite come together) or by its suite coming back after another began.
struct ShowSink {
    acc: ShowAcc,
    suite: Option<Arc<str>>,
    /// Hashes of the current suite's identities.
    here: HashSet<u64, FxBuild>,
    /// Hashes of the suites already left.
    left: HashSet<u64, FxBuild>,
    whole: bool,
}

fn hash_str(s: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = FxBuild::default().build_hasher();
    h.write(s.as_bytes());
    h.write_u8(0xff);
    h.finish()
}

impl CaseSink for ShowSink {
    fn case(&mut self, c: TestCase) {
        if self.whole {
            return;
        }
        if c.id.name.contains('/') {
            self.whole = true;
            return;
        }
        let same =
            (self.suite.as_ref()).is_some_and(|s| Arc::ptr_eq(s, &c.id.suite) || *s == c.id.suite);
        if !same {
            if let Some(old) = self.suite.take() {
                self.left.insert(hash_str(&old));
            }
            if self.left.contains(&hash_str(&c.id.suite)) {
                self.whole = true;
                return;
            }
            self.here.clear();
            self.suite = Some(c.id.suite.clone());
        }
        let id = hash_str(&c.id.class).rotate_left(29) ^ hash_str(&c.id.name);
        if !self.here.insert(id) {
            self.whole = true;
            return;
        }
        self.acc.case(&c);
    }

    fn end(&mut self) -> usize {
        0
    }
}

/// `tardy tests show` of the run `paths`: streamed where the files allow,
/// so that a million results read in a few MiB; read whole where a result
/// repeats an identity, a test has subtests, or the files need it.
pub fn show_run(paths: &[PathBuf], keep_going: bool, top: usize) -> Result<Show, IngestError> {
    let mut sink = ShowSink {
        acc: ShowAcc::new(top),
        suite: None,
        here: HashSet::default(),
        left: HashSet::default(),
        whole: false,
    };
    match reports::read_run_streaming(paths, keep_going, &mut sink)? {
        Streamed::Whole(r) => Ok(show(&r, top)),
        Streamed::Streamed(r) if !sink.whole => {
            let wall = r.suite_wall_s();
            Ok(sink.acc.finish(r.sources, r.warnings, wall))
        }
        _ => Ok(show(&reports::read_run(paths, keep_going)?, top)),
    }
}

pub use super::rows::TestRow;

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
    /// Each side's runs' sums of test times (for [`slower_than`]).
    #[serde(skip)]
    pub run_totals: [Vec<f64>; 2],
    /// Every test on either side, largest absolute change first.
    pub tests: Rows,
    pub warnings: Vec<String>,
}

/// One run of a side, digested: per identity of the diff's [`Names`], its
/// duration (NaN: none), status (`None`: not in this run) and whether it is
/// a parent. The run's report is dropped once digested.
struct RunDigest {
    total_s: f64,
    suite_wall_s: Option<f64>,
    cases: usize,
    warnings: Vec<String>,
    duration: Vec<f64>,
    status: Vec<Option<Status>>,
    parent: Vec<bool>,
    /// Durations of an identity met again in the same run (two files of a
    /// run naming one test): (identity, seconds).
    extra: Vec<(u32, f64)>,
}

impl RunDigest {
    fn new(cases: usize) -> RunDigest {
        RunDigest {
            total_s: 0.0,
            suite_wall_s: None,
            cases,
            warnings: Vec::new(),
            duration: Vec::new(),
            status: Vec::new(),
            parent: Vec::new(),
            extra: Vec::new(),
        }
    }

    fn get(&self, id: u32) -> Option<Status> {
        self.status.get(id as usize).copied().flatten()
    }

    /// Case `c`, identity `id` of the `known` so far.
    fn record(&mut self, known: usize, id: u32, c: &TestCase) {
        let i = id as usize;
        if self.status.len() <= i {
            self.duration.resize(known, f64::NAN);
            self.status.resize(known, None);
            self.parent.resize(known, false);
        }
        if self.status[i].is_some() {
            if let Some(x) = c.duration_s {
                self.extra.push((id, x));
            }
        } else if let Some(x) = c.duration_s {
            self.duration[i] = x;
        }
        self.status[i] = Some(c.status);
        self.parent[i] |= c.has_children;
    }
}

/// A run streamed into a [`DiffBuilder`]: each case numbered (the N-th
/// result of a repeated identity) and recorded as it comes, Go parents
/// marked and the sum of times taken at the end, as a report read whole
/// does them ([`Report::resolve_repeats`], [`Report::mark_parents`],
/// [`Report::total_s`]).
struct RunSink<'a> {
    names: &'a mut Names,
    run: RunDigest,
    /// Results so far of each identity met more than once in this run.
    counts: HashMap<u32, u32, FxBuild>,
    /// The run's identities in file order.
    order: Vec<u32>,
    repeats: usize,
}

impl CaseSink for RunSink<'_> {
    fn case(&mut self, mut c: TestCase) {
        let base = self.names.intern(&c.id);
        let id = if self.run.get(base).is_some() {
            let n = self.counts.entry(base).or_insert(1);
            c.id.nth = *n;
            *n += 1;
            self.repeats += 1;
            self.names.intern(&c.id)
        } else {
            base
        };
        self.run.record(self.names.len(), id, &c);
        self.order.push(id);
    }

    fn end(&mut self) -> usize {
        let names = &*self.names;
        if self.order.iter().any(|&i| names.test(i).contains('/')) {
            let mut parents: HashSet<(&str, &str, &str)> = HashSet::new();
            for &i in &self.order {
                let t = names.test(i);
                for (at, _) in t.match_indices('/') {
                    parents.insert((names.suite(i), names.class(i), &t[..at]));
                }
            }
            for &i in &self.order {
                if parents.contains(&(names.suite(i), names.class(i), names.test(i))) {
                    self.run.parent[i as usize] = true;
                }
            }
        }
        let r = &self.run;
        self.run.total_s = (self.order.iter())
            .filter(|&&i| !r.parent[i as usize])
            .map(|&i| r.duration[i as usize])
            .filter(|d| !d.is_nan())
            .fold(0.0, |a, b| a + b);
        self.order = Vec::new();
        self.repeats
    }
}

/// A diff built run by run: [`DiffBuilder::add`] each run of each side (the
/// report may be dropped after), then [`DiffBuilder::finish`]. Memory holds
/// the names once and a few numbers per test and run, not the reports.
#[derive(Default)]
pub struct DiffBuilder {
    names: Names,
    sides: [Vec<RunDigest>; 2],
}

impl DiffBuilder {
    pub fn new() -> DiffBuilder {
        DiffBuilder::default()
    }

    /// Add `run` to side 0 (before) or 1 (after).
    pub fn add(&mut self, side: usize, run: &Report) {
        let mut d = RunDigest::new(run.cases.len());
        d.total_s = run.total_s();
        d.suite_wall_s = run.suite_wall_s();
        d.warnings = run.warnings.clone();
        for c in &run.cases {
            let id = self.names.intern(&c.id);
            d.record(self.names.len(), id, c);
        }
        self.sides[side.min(1)].push(d);
    }

    /// Read the run of `paths` into side 0 or 1, streaming its cases where
    /// the files allow (memory holds a few thousand cases, not the run).
    pub fn read(
        &mut self,
        side: usize,
        paths: &[PathBuf],
        keep_going: bool,
    ) -> Result<(), IngestError> {
        let read = self.read_run(side, paths, keep_going);
        if read.is_err() {
            // Refused: what follows on this thread holds none of its names.
            let _ = crate::ingest::limits::hold_text(0);
        }
        read
    }

    fn read_run(
        &mut self,
        side: usize,
        paths: &[PathBuf],
        keep_going: bool,
    ) -> Result<(), IngestError> {
        // The names this diff holds, against the cap on names held (also a
        // count left by an earlier command on this thread set right).
        let _ = crate::ingest::limits::hold_text(self.names.text_bytes());
        let mut sink = RunSink {
            names: &mut self.names,
            run: RunDigest::new(0),
            counts: HashMap::default(),
            order: Vec::new(),
            repeats: 0,
        };
        match reports::read_run_streaming(paths, keep_going, &mut sink)? {
            Streamed::Whole(r) => self.add(side, &r),
            Streamed::Streamed(r) => {
                let mut run = sink.run;
                run.suite_wall_s = r.suite_wall_s();
                run.cases = r.spilled;
                run.warnings = r.warnings;
                self.sides[side.min(1)].push(run);
            }
            Streamed::Again => self.add(side, &reports::read_run(paths, keep_going)?),
        }
        match crate::ingest::limits::hold_text(self.names.text_bytes()) {
            Some(why) => {
                let at = paths.last().map(|p| p.display().to_string());
                Err(IngestError::at(&at.unwrap_or_default(), None, why))
            }
            None => Ok(()),
        }
    }

    /// The diff of everything added.
    pub fn finish(mut self) -> Diff {
        // The names are read: readers after this diff on this thread (a
        // server's next request) start from nothing held.
        let _ = crate::ingest::limits::hold_text(0);
        self.names.freeze();
        for run in self.sides.iter_mut().flatten() {
            run.extra.sort_by_key(|e| e.0);
        }
        finish(self.names, self.sides)
    }
}

/// One side's view of one test: its durations over the runs, its last
/// status, whether it is a parent; `None` when no run of the side has it.
struct Seen {
    durations: Vec<f64>,
    status: Status,
    parent: bool,
}

fn seen(runs: &[RunDigest], id: u32) -> Option<Seen> {
    let mut out: Option<Seen> = None;
    for r in runs {
        let Some(status) = r.get(id) else { continue };
        let s = out.get_or_insert(Seen {
            durations: Vec::new(),
            status,
            parent: false,
        });
        let i = id as usize;
        if !r.duration[i].is_nan() {
            s.durations.push(r.duration[i]);
        }
        // Sorted by identity in `finish`: this identity's run of them.
        let from = r.extra.partition_point(|e| e.0 < id);
        let extra = r.extra[from..].iter().take_while(|e| e.0 == id);
        s.durations.extend(extra.map(|e| e.1));
        s.status = status;
        s.parent |= r.parent[i];
    }
    out
}

fn med(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| median_by_selection(&mut v.to_vec()))
}

fn median_wall(runs: &[RunDigest]) -> Option<f64> {
    let walls: Option<Vec<f64>> = runs.iter().map(|r| r.suite_wall_s).collect();
    walls.and_then(|w| med(&w))
}

fn failing(s: Status) -> bool {
    s.is_failure()
}

/// The per-test difference between the runs `before` and the runs `after`
/// (see [`DiffBuilder`] to read and drop the runs one at a time).
pub fn diff(before: &[Report], after: &[Report]) -> Diff {
    let mut b = DiffBuilder::new();
    before.iter().for_each(|r| b.add(0, r));
    after.iter().for_each(|r| b.add(1, r));
    b.finish()
}

/// Lists of names a diff keeps beside its rows.
#[derive(Default)]
struct Lists {
    added: Vec<String>,
    removed: Vec<String>,
    newly_failing: Vec<String>,
    newly_skipped: Vec<String>,
    added_s: f64,
    removed_s: f64,
}

fn finish(names: Names, sides: [Vec<RunDigest>; 2]) -> Diff {
    let [before, after] = &sides;
    let mut ids: Vec<u32> = (0..names.len() as u32).collect();
    ids.sort_unstable_by(|&x, &y| names.cmp(x, y));
    let many = before.len() >= 2 && after.len() >= 2;
    let opts = Options {
        test: TestChoice::Welch,
        ..Options::default()
    };
    let mut rows: Vec<Compact> = Vec::with_capacity(ids.len());
    let mut estimates: Vec<(usize, engine::Estimate)> = Vec::new();
    let mut l = Lists::default();
    let mut matched = Vec::new();
    let (mut cv_b, mut cv_a) = (Vec::new(), Vec::new());
    for id in ids {
        let (tb, ta) = (seen(before, id), seen(after, id));
        if tb.is_none() && ta.is_none() {
            continue; // named by a run read again whole
        }
        let parent = tb.as_ref().is_some_and(|t| t.parent) || ta.as_ref().is_some_and(|t| t.parent);
        let (db, da) = (
            tb.as_ref().map(|t| &t.durations),
            ta.as_ref().map(|t| &t.durations),
        );
        let (mb, ma) = (db.and_then(|v| med(v)), da.and_then(|v| med(v)));
        let (sb, sa) = (tb.as_ref().map(|t| t.status), ta.as_ref().map(|t| t.status));
        match (db.is_some(), da.is_some()) {
            (true, false) => {
                l.removed.push(names.display(id));
                l.removed_s += if parent { 0.0 } else { mb.unwrap_or(0.0) };
            }
            (false, true) => {
                l.added.push(names.display(id));
                l.added_s += if parent { 0.0 } else { ma.unwrap_or(0.0) };
            }
            _ => {}
        }
        if let (Some(sb), Some(sa)) = (sb, sa) {
            if failing(sa) && !failing(sb) {
                l.newly_failing.push(names.display(id));
            }
            if sa == Status::Skipped && sb != Status::Skipped {
                l.newly_skipped.push(names.display(id));
            }
        }
        if let (Some(x), Some(y), false) = (mb, ma, parent) {
            matched.push((id, x, y));
        }
        if many
            && !parent
            && let (Some(vb), Some(va)) = (db, da)
        {
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
        rows.push(Compact {
            id,
            before: mb.unwrap_or(f64::NAN),
            after: ma.unwrap_or(f64::NAN),
            p_adjusted: f64::NAN,
            runs: [db.map_or(0, Vec::len) as u32, da.map_or(0, Vec::len) as u32],
            status: [sb, sa],
            verdict: None,
            parent,
        });
    }
    if !estimates.is_empty() {
        let mut refs: Vec<&mut engine::Estimate> = estimates.iter_mut().map(|(_, e)| e).collect();
        engine::adjust(&mut refs, Correction::BenjaminiHochberg);
        for (i, e) in estimates {
            rows[i].p_adjusted = e.p_adjusted;
            rows[i].verdict = Some(e.verdict);
        }
    }
    let renamed = renamed(&l.removed, &l.added);
    let total = |runs: &[RunDigest]| {
        med(&runs.iter().map(|r| r.total_s).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    let (wb, wa) = (median_wall(before), median_wall(after));
    let matched_n = matched.len();
    let input = shape::Input {
        matched,
        added_s: l.added_s,
        removed_s: l.removed_s,
        added: l.added.len(),
        removed: l.removed.len(),
        wall: wb.zip(wa),
        spread: (!cv_b.is_empty() && !cv_a.is_empty()).then(|| {
            (
                median_by_selection(&mut cv_b),
                median_by_selection(&mut cv_a),
            )
        }),
    };
    let shapes = shape::diagnose(&input, &|id| names.display(id));
    drop(input);
    // Largest absolute change first, then by name.
    let abs = |c: &Compact| {
        let d = c.after - c.before;
        if d.is_nan() { 0.0 } else { d.abs() }
    };
    rows.sort_by(|x, y| abs(y).total_cmp(&abs(x)));
    // Ties by name: names are made only for the rows that tie.
    let mut from = 0;
    while from < rows.len() {
        let key = abs(&rows[from]);
        let to = from
            + rows[from..]
                .iter()
                .take_while(|c| abs(c).total_cmp(&key).is_eq())
                .count();
        if to - from > 1 {
            rows[from..to].sort_by_cached_key(|c| names.display(c.id));
        }
        from = to;
    }
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
        tests_per_side: [before, after].map(|runs| runs.iter().map(|r| r.cases).max().unwrap_or(0)),
        matched: matched_n,
        renamed,
        added: l.added,
        removed: l.removed,
        newly_failing: l.newly_failing,
        newly_skipped: l.newly_skipped,
        total_before_s: total(before),
        total_after_s: total(after),
        suite_wall_before_s: wb,
        suite_wall_after_s: wa,
        shapes,
        run_totals: [before, after].map(|runs| runs.iter().map(|r| r.total_s).collect()),
        tests: Rows::Compact { names, rows },
        warnings,
    }
}

/// Renamed-looking: each removed test and the first added test with the
/// same test name (the part after the last " :: ").
fn renamed(removed: &[String], added: &[String]) -> Vec<(String, String)> {
    let tail = |s: &str| s.rsplit(" :: ").next().unwrap_or(s).to_string();
    let mut first: HashMap<String, usize> = HashMap::new();
    for (i, a) in added.iter().enumerate() {
        first.entry(tail(a)).or_insert(i);
    }
    removed
        .iter()
        .filter_map(|r| first.get(&tail(r)).map(|&i| (r.clone(), added[i].clone())))
        .collect()
}

/// Whether the suite grew by more than `pct` (0.05: 5%) from the runs
/// before to the runs after: with two runs or more a side, Welch's test on
/// their total times must prove it (the interval's low end above `pct`);
/// with one, the totals' ratio says it.
pub fn slower_than(d: &Diff, pct: f64) -> bool {
    let [before, after] = &d.run_totals;
    if before.len() >= 2 && after.len() >= 2 {
        let opts = Options {
            test: TestChoice::Welch,
            ..Options::default()
        };
        engine::compare(before, after, &opts)
            .is_ok_and(|e| e.proven_slower() && e.ci_low.is_some_and(|lo| lo - 1.0 > pct))
    } else {
        d.total_before_s > 0.0 && d.total_after_s / d.total_before_s - 1.0 > pct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::reports::TestId;
    use proptest::prelude::*;

    /// Cases per status, time per status, suites by time.
    type Sums = (
        BTreeMap<String, usize>,
        BTreeMap<String, f64>,
        Vec<(String, f64)>,
    );

    /// What [`ShowAcc`] sums, the plain way: a map lookup and a named
    /// status per case, in file order.
    fn plain(cases: &[TestCase]) -> Sums {
        let (mut by, mut time) = (BTreeMap::new(), BTreeMap::new());
        let mut suites: HashMap<String, f64> = HashMap::new();
        for c in cases {
            *by.entry(c.status.name().to_string()).or_insert(0) += 1;
            let Some(d) = c.duration_s.filter(|_| !c.has_children) else {
                continue;
            };
            *time.entry(c.status.name().to_string()).or_insert(0.0) += d;
            *suites.entry(c.id.suite.to_string()).or_insert(0.0) += d;
        }
        let mut suites: Vec<(String, f64)> = suites.into_iter().collect();
        suites.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        (by, time, suites)
    }

    fn case() -> impl Strategy<Value = (usize, bool, usize, Option<f64>, bool)> {
        (
            0..4usize,
            any::<bool>(),
            0..STATUSES.len(),
            proptest::option::of(0.0..5.0f64),
            proptest::bool::weighted(0.1),
        )
    }

    proptest! {
        /// Counts and times per status and per suite are those of the
        /// plain sums, to the bit, however the suites' cases interleave and
        /// whether or not they share their suite's `Arc`.
        #[test]
        fn show_sums_as_the_plain_way_does(raw in proptest::collection::vec(case(), 0..200)) {
            let shared: Vec<Arc<str>> = ["", "a", "b", "c"].iter().map(|s| Arc::from(*s)).collect();
            let cases: Vec<TestCase> = raw
                .iter()
                .enumerate()
                .map(|(i, &(suite, share, status, d, children))| TestCase {
                    id: TestId {
                        suite: if share {
                            shared[suite].clone()
                        } else {
                            Arc::from(&*shared[suite])
                        },
                        class: Arc::from(""),
                        name: format!("t{i}"),
                        nth: 0,
                    },
                    duration_s: d,
                    status: STATUSES[status],
                    retries: 0,
                    has_children: children,
                })
                .collect();
            let report = Report { cases: cases.clone(), ..Report::default() };
            let shown = show(&report, 10);
            let (by, time, suites) = plain(&cases);
            prop_assert_eq!(&shown.by_status, &by);
            prop_assert_eq!(&shown.time_by_status, &time);
            let got: Vec<(String, f64)> = shown
                .slowest_suites
                .iter()
                .map(|s| (s.name.clone(), s.seconds))
                .collect();
            prop_assert_eq!(got, suites.into_iter().take(10).collect::<Vec<_>>());
        }
    }
}
