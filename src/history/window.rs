//! A server's memory of each suite's newest points: every test's durations
//! there with their ranks ([`RankedWindow`]), moved on by one point per
//! upload. An upload then reads one vector (its own) and checks each test in
//! a few hundred integer steps, whatever the length of the history.
//!
//! The memory is a cache, never the truth: each check compares the points
//! it holds with the store's newest points and the alerted points with the
//! store's, and reads what differs (everything, when another server stored
//! points in between or they do not line up). Two servers on one database
//! stay correct; each reads more when the other took the uploads.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::stats::changepoint::ChangePoint;
use crate::stats::rank_cusum;
use crate::stats::ranked_window::{self, MAX_SLOTS, RankedWindow};
use crate::stats::sequential::Thresholds;
use crate::store::history::Point;
use crate::store::{DbError, History, TestId};

/// The memory a server gives the windows by default.
pub const DEFAULT_BUDGET: usize = 256 << 20;

/// Bytes per test and point held: a key and a doubled rank.
const BYTES_PER_SLOT: usize = 6;

/// More new points than this are read as a new window (one sort per test)
/// rather than added one by one.
const MOST_APPENDED: usize = 8;

/// The windows of every suite checked, within a memory budget (the least
/// recently checked suite is forgotten first).
pub struct Windows {
    budget: usize,
    inner: Mutex<Inner>,
    thresholds: Mutex<Vec<Arc<Thresholds>>>,
}

#[derive(Default)]
struct Inner {
    tick: u64,
    suites: HashMap<String, Entry>,
}

struct Entry {
    used: u64,
    bytes: usize,
    suite: Arc<Mutex<Suite>>,
}

#[derive(Default)]
struct Suite {
    /// The window's point ids, oldest first.
    ids: Vec<i64>,
    /// In id order; row `r` is test `tests[r]`'s.
    tests: Vec<TestId>,
    rows: Vec<RankedWindow>,
}

/// A test whose end (or window) holds a change.
#[derive(Debug, Clone)]
pub struct Changed {
    pub test: TestId,
    /// The window's points the test ran at since its last alerted change
    /// (indices into the points checked), and its durations there.
    pub at: Vec<usize>,
    pub values: Vec<f64>,
    /// The changes, their indices into `at`.
    pub cps: Vec<ChangePoint>,
}

/// What a check of a suite's tests found.
#[derive(Debug, Clone, Default)]
pub struct Checked {
    pub changed: Vec<Changed>,
    /// Tests of the suite.
    pub tests: usize,
    /// Whether the window was read whole (nothing held, or it did not line
    /// up with the store).
    pub read_whole: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding it leaves at worst a stale window, which the
    // next check compares with the store anyway.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Windows {
    /// Windows held within `budget` bytes (0: none held between checks).
    pub fn new(budget: usize) -> Windows {
        Windows {
            budget,
            inner: Mutex::new(Inner::default()),
            thresholds: Mutex::new(Vec::new()),
        }
    }

    fn thresholds(&self, alpha: f64) -> Arc<Thresholds> {
        let mut held = lock(&self.thresholds);
        if let Some(t) = held.iter().find(|t| t.alpha() == alpha) {
            return t.clone();
        }
        let t = Arc::new(Thresholds::new(alpha));
        held.push(t.clone());
        if held.len() > 4 {
            held.remove(0);
        }
        t
    }

    /// Check the end of every test of suite `series_id` that ran at the
    /// newest of `points` (the suite's newest points, oldest first, at most
    /// [`MAX_SLOTS`]), each over its points since its last alerted change
    /// (`alerted`: (test id, point id) pairs). `scope` names the filter the
    /// points were chosen under. The whole search runs on a test only when
    /// its id plus the newest point's is a multiple of `search_every`.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &self,
        store: &dyn History,
        series_id: i64,
        scope: &str,
        points: &[Point],
        alerted: &HashSet<(i64, i64)>,
        opts: &rank_cusum::Options,
        search_every: u64,
    ) -> Result<Checked, DbError> {
        let points = &points[points.len().saturating_sub(MAX_SLOTS)..];
        let key = format!("{series_id};{scope}");
        let held = {
            let mut inner = lock(&self.inner);
            inner.tick += 1;
            let tick = inner.tick;
            let e = inner.suites.entry(key.clone()).or_insert_with(|| Entry {
                used: tick,
                bytes: 0,
                suite: Arc::default(),
            });
            e.used = tick;
            e.suite.clone()
        };
        let mut suite = lock(&held);
        let result = self.check_suite(
            &mut suite,
            store,
            series_id,
            points,
            alerted,
            opts,
            search_every,
        );
        if result.is_err() {
            // Half moved on: forget it.
            *suite = Suite::default();
        }
        let bytes = suite.rows.len() * points.len() * BYTES_PER_SLOT
            + suite.tests.iter().map(|t| t.name.len() + 48).sum::<usize>();
        drop(suite);
        self.account(&key, bytes);
        result
    }

    /// Record a suite's size and forget the least recently checked suites
    /// while over budget (this one too, if it alone is).
    fn account(&self, key: &str, bytes: usize) {
        let mut inner = lock(&self.inner);
        if let Some(e) = inner.suites.get_mut(key) {
            e.bytes = bytes;
        }
        loop {
            let total: usize = inner.suites.values().map(|e| e.bytes).sum();
            if total <= self.budget {
                break;
            }
            let oldest = inner
                .suites
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    inner.suites.remove(&k);
                }
                None => break,
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check_suite(
        &self,
        suite: &mut Suite,
        store: &dyn History,
        series_id: i64,
        points: &[Point],
        alerted: &HashSet<(i64, i64)>,
        opts: &rank_cusum::Options,
        search_every: u64,
    ) -> Result<Checked, DbError> {
        let width = points.len();
        let want: Vec<i64> = points.iter().map(|p| p.id).collect();
        // The points held that are still in the window, and the new ones.
        let lined_up = want.first().and_then(|first| {
            let d = suite.ids.iter().position(|id| id == first)?;
            let kept = suite.ids.len() - d;
            (kept <= want.len() && suite.ids[d..] == want[..kept]).then_some((d, kept))
        });
        let read_whole = match lined_up {
            Some((_, kept)) => width - kept > MOST_APPENDED,
            None => true,
        };
        let starts = segment_starts(points, alerted);
        let moves = match lined_up {
            Some((dropped, kept)) if !read_whole => {
                append(suite, store, series_id, &points[kept..], dropped)?
            }
            _ => {
                read_window(suite, store, series_id, points)?;
                Moves::default()
            }
        };
        suite.ids = want;
        let thresholds = self.thresholds(rank_cusum::end_rate(opts));
        let turn = Turn {
            every: search_every.max(1),
            newest: points.last().map_or(0, |p| p.id),
        };
        let changed = check_rows(
            &mut suite.rows,
            &moves,
            &suite.tests,
            &starts,
            &thresholds,
            opts,
            turn,
        );
        Ok(Checked {
            changed: changed
                .into_iter()
                .map(|(row, at, values, cps)| Changed {
                    test: suite.tests[row].clone(),
                    at,
                    values,
                    cps,
                })
                .collect(),
            tests: suite.tests.len(),
            read_whole,
        })
    }
}

/// Each test's segment start: the window slot of its last alerted point.
fn segment_starts(points: &[Point], alerted: &HashSet<(i64, i64)>) -> HashMap<i64, usize> {
    let slot: HashMap<i64, usize> = points.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    let mut starts: HashMap<i64, usize> = HashMap::new();
    for &(test, point) in alerted {
        if let Some(&s) = slot.get(&point) {
            let e = starts.entry(test).or_insert(s);
            *e = (*e).max(s);
        }
    }
    starts
}

/// The keys of `entries` (test id order) at each test's row (`tests` in id
/// order), and whether some entry's test is not among them.
fn place(entries: &[(i64, f32)], tests: &[TestId], out: &mut [u32]) -> bool {
    let mut unknown = false;
    let mut row = 0;
    for &(id, d) in entries {
        while row < tests.len() && tests[row].id < id {
            row += 1;
        }
        match tests.get(row) {
            Some(t) if t.id == id => out[row] = ranked_window::key(d),
            _ => unknown = true,
        }
    }
    unknown
}

/// Read the whole window: every test's durations, one sort each.
fn read_window(
    suite: &mut Suite,
    store: &dyn History,
    series_id: i64,
    points: &[Point],
) -> Result<(), DbError> {
    let width = points.len();
    let mut tests = store.tests(series_id)?;
    tests.sort_by_key(|t| t.id);
    let mut columns: Vec<u32> = vec![0; tests.len() * width];
    let mut column = vec![0u32; tests.len()];
    store.each_vector(points, &mut |col, entries| {
        column.iter_mut().for_each(|k| *k = 0);
        place(entries, &tests, &mut column);
        for (r, &k) in column.iter().enumerate() {
            columns[r * width + col] = k;
        }
        Ok(())
    })?;
    let rows: Vec<Vec<u32>> = columns.chunks(width.max(1)).map(|c| c.to_vec()).collect();
    drop(columns);
    suite.rows = parallel_map(rows, |k| RankedWindow::new(k, 0));
    suite
        .rows
        .resize_with(tests.len(), || RankedWindow::new(vec![0; width], 0));
    suite.tests = tests;
    Ok(())
}

/// Move the window on: drop its `dropped` oldest points and add `new`.
fn append(
    suite: &mut Suite,
    store: &dyn History,
    series_id: i64,
    new: &[Point],
    dropped: usize,
) -> Result<Moves, DbError> {
    let mut columns: Vec<Vec<(i64, f32)>> = vec![Vec::new(); new.len()];
    store.each_vector(new, &mut |col, entries| {
        columns[col] = entries.to_vec();
        Ok(())
    })?;
    let mut keys: Vec<Vec<u32>> = vec![vec![0; suite.rows.len()]; new.len()];
    let unknown = columns
        .iter()
        .zip(&mut keys)
        .fold(false, |u, (entries, out)| {
            place(entries, &suite.tests, out) | u
        });
    if unknown {
        // New tests: rows with nothing before, all in id order again.
        let held = suite.rows.first().map_or(suite.ids.len(), |r| r.len());
        let known: HashSet<i64> = suite.tests.iter().map(|t| t.id).collect();
        let mut rows: Vec<(TestId, RankedWindow)> =
            suite.tests.drain(..).zip(suite.rows.drain(..)).collect();
        for t in store.tests(series_id)? {
            if !known.contains(&t.id) {
                rows.push((t, RankedWindow::new(vec![0; held], 0)));
            }
        }
        rows.sort_by_key(|r| r.0.id);
        (suite.tests, suite.rows) = rows.into_iter().unzip();
        for (entries, out) in columns.iter().zip(&mut keys) {
            out.clear();
            out.resize(suite.tests.len(), 0);
            place(entries, &suite.tests, out);
        }
    }
    Ok(Moves { keys, dropped })
}

/// How each row moves on: its oldest `dropped` points go, and `keys[i][row]`
/// come, for each new point i.
#[derive(Default)]
struct Moves {
    keys: Vec<Vec<u32>>,
    dropped: usize,
}

impl Moves {
    fn apply(&self, r: usize, w: &mut RankedWindow) {
        let mut pushes = self.keys.iter().map(|col| col.get(r).copied().unwrap_or(0));
        for _ in 0..self.dropped {
            match pushes.next() {
                Some(k) => w.slide(k),
                None => w.pop_front(),
            }
        }
        for k in pushes {
            w.push(k);
        }
    }
}

type Found = (usize, Vec<usize>, Vec<f64>, Vec<ChangePoint>);

/// Whose turn it is for the whole search: test ids plus the newest point's
/// id a multiple of the test's period. The period grows with the test's
/// points (one upload in two at 64, up to `every` at 256): a short segment
/// is searched at every upload, where the end test's short reference is
/// weakest and the search cheapest.
#[derive(Clone, Copy)]
struct Turn {
    every: u64,
    newest: i64,
}

impl Turn {
    fn of(&self, test: i64, points: usize) -> bool {
        let every = ((points / 32) as u64).clamp(1, self.every);
        (test.wrapping_add(self.newest) as u64) % every == 0
    }
}

/// Move each row on, set its segment start and check it: the cheap checks
/// from the ranks, then the exact ones on the few they do not rule out. One
/// pass, so each row is read from memory once.
fn check_rows(
    rows: &mut [RankedWindow],
    moves: &Moves,
    tests: &[TestId],
    starts: &HashMap<i64, usize>,
    thresholds: &Thresholds,
    opts: &rank_cusum::Options,
    turn: Turn,
) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    let results = parallel_rows_collect(rows, |r, w| {
        moves.apply(r, w);
        let start = if starts.is_empty() {
            0
        } else {
            tests
                .get(r)
                .and_then(|t| starts.get(&t.id))
                .copied()
                .unwrap_or(0)
        };
        w.set_start(start);
        if !w.ran_last() || w.count() < rank_cusum::MIN_POINTS {
            return None;
        }
        let search = tests.get(r).is_some_and(|t| turn.of(t.id, w.count())) && w.may_search();
        if !search && !w.may_end(thresholds) {
            return None;
        }
        let (at, values) = w.segment();
        // The whole search (of the window) on those the screen lets
        // through in their turn, the end test on the others.
        let cps = if search && rank_cusum::screen(&values) {
            rank_cusum::detect(&values, opts).change_points
        } else {
            rank_cusum::detect_end(&values, opts).change_points
        };
        (!cps.is_empty()).then_some((at, values, cps))
    });
    for (row, r) in results {
        let (at, values, cps) = r;
        found.push((row, at, values, cps));
    }
    found
}

fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |p| p.get())
        .clamp(1, 4)
}

/// `f` over every item, on a few threads, in order.
fn parallel_map<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    let per = items.len().div_ceil(threads()).max(1);
    let mut chunks: Vec<Vec<T>> = Vec::new();
    let mut it = items.into_iter().peekable();
    while it.peek().is_some() {
        chunks.push(it.by_ref().take(per).collect());
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|c| {
                let f = &f;
                s.spawn(move || c.into_iter().map(f).collect::<Vec<U>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// `f(row index, row)` over every row, on a few threads: the rows it
/// returns something for, in order.
fn parallel_rows_collect<U: Send>(
    rows: &mut [RankedWindow],
    f: impl Fn(usize, &mut RankedWindow) -> Option<U> + Sync,
) -> Vec<(usize, U)> {
    let per = rows.len().div_ceil(threads()).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = rows
            .chunks_mut(per)
            .enumerate()
            .map(|(c, chunk)| {
                let f = &f;
                s.spawn(move || {
                    chunk
                        .iter_mut()
                        .enumerate()
                        .filter_map(|(i, w)| {
                            let r = c * per + i;
                            f(r, w).map(|u| (r, u))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;
    use crate::store::history::{
        NewPoint, PointFilter, Provenance, SeriesKind, SeriesSpec, TestResult,
    };
    use crate::store::{Batch, SqliteStore};

    /// Test t's duration at upload i: noise, a step in a few tests, ties
    /// in some, runs skipped in others, tests added late.
    fn duration(rng: &mut SplitMix64, t: usize, i: usize) -> Option<f64> {
        if t >= 30 && i < 40 {
            return None;
        }
        if t % 7 == 3 && rng.next_f64() < 0.1 {
            return None;
        }
        let step = match t % 10 {
            0 if i >= 60 => 3.0,
            1 if i >= 75 => 0.8,
            2 if i >= 90 => -2.0,
            _ => 0.0,
        };
        let mut v = 10.0 + t as f64 + rng.normal() + step;
        if t % 5 == 4 {
            v = v.round();
        }
        Some(v / 1000.0)
    }

    fn changes(c: &Checked) -> Vec<(String, Vec<usize>, Vec<usize>)> {
        let mut v: Vec<_> = c
            .changed
            .iter()
            .map(|e| {
                (
                    e.test.name.clone(),
                    e.at.clone(),
                    e.cps.iter().map(|cp| cp.index).collect(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn held_windows_find_what_reading_the_window_whole_finds() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("h.db"), "p").unwrap();
        let mut spec = SeriesSpec::new("suite", "suite", "s");
        spec.kind = SeriesKind::Suite;
        let opts = rank_cusum::Options::default();
        let mut rng = SplitMix64::new(3);
        // This server checks every upload; another sees every third.
        let (held, other) = (Windows::new(64 << 20), Windows::new(64 << 20));
        let held_turns = Windows::new(64 << 20);
        let mut alerted: HashSet<(i64, i64)> = HashSet::new();
        let (mut found, mut whole) = (0, 0);
        for i in 0..130 {
            let tests: Vec<TestResult> = (0..40)
                .filter_map(|t| {
                    duration(&mut rng, t, i).map(|d| TestResult {
                        name: format!("t{t:02}"),
                        duration: d,
                        status: "passed".into(),
                    })
                })
                .collect();
            let point = NewPoint {
                provenance: Provenance {
                    commit: Some(format!("c{i}")),
                    branch: None,
                    commit_time: Some(1_000 + i as i64),
                    run_time: 1_000 + i as i64,
                },
                fingerprint: None,
                value: tests.iter().map(|t| t.duration).sum(),
                samples: Vec::new(),
                tests,
            };
            store
                .save(&[Batch {
                    spec: spec.clone(),
                    points: vec![point],
                }])
                .unwrap();
            let series = store.series("suite").unwrap().unwrap();
            let points = store.points(series.id, &PointFilter::default()).unwrap();
            let w = &points[points.len().saturating_sub(48)..];
            let fresh = Windows::new(0)
                .check(&store, series.id, "", w, &alerted, &opts, 1)
                .unwrap();
            assert!(fresh.read_whole);
            let kept = held
                .check(&store, series.id, "", w, &alerted, &opts, 1)
                .unwrap();
            assert_eq!(changes(&kept), changes(&fresh), "upload {i}");
            assert_eq!(kept.tests, fresh.tests);
            whole += usize::from(kept.read_whole);
            // The whole search in turns: the same either way too.
            let every = held_turns
                .check(&store, series.id, "", w, &alerted, &opts, 4)
                .unwrap();
            let every_fresh = Windows::new(0)
                .check(&store, series.id, "", w, &alerted, &opts, 4)
                .unwrap();
            assert_eq!(changes(&every), changes(&every_fresh), "upload {i}");
            if i % 3 == 0 {
                let o = other
                    .check(&store, series.id, "", w, &alerted, &opts, 1)
                    .unwrap();
                assert_eq!(changes(&o), changes(&fresh), "upload {i}");
            }
            found += fresh.changed.len();
            // Alert the first change each test shows: its segment restarts.
            for c in &fresh.changed {
                let cp = c.cps[c.cps.len() - 1];
                alerted.insert((c.test.id, w[c.at[cp.index]].id));
            }
        }
        assert!(found >= 3, "{found}");
        // Read whole: the first check, when 10 tests came, and the window
        // never otherwise.
        assert!(whole <= 3, "{whole}");
    }

    #[test]
    fn a_budget_forgets_the_oldest_suite() {
        let w = Windows::new(1000);
        w.account("a", 0);
        {
            let mut inner = lock(&w.inner);
            for (k, used, bytes) in [("a", 1, 600), ("b", 2, 600)] {
                inner.suites.insert(
                    k.into(),
                    Entry {
                        used,
                        bytes,
                        suite: Arc::default(),
                    },
                );
            }
        }
        w.account("b", 600);
        let inner = lock(&w.inner);
        assert!(inner.suites.contains_key("b") && !inner.suites.contains_key("a"));
    }
}
