//! Change-point detection over every stored series: by default tardy's
//! calibrated detector ([`crate::stats::rank_cusum`]: a stated false-alarm rate
//! per 1,000 points of noise), or with `--otava` Otava's E-Divisive exactly
//! ([`crate::stats::changepoint`], incremental when only points were appended
//! since the last run); false discoveries controlled with
//! Benjamini-Hochberg across all series of the run, change points grouped
//! into one alert per commit range, and fingerprint changes at the same
//! boundary reported as an environment change.

use std::collections::{HashMap, HashSet};

use crate::probe::Fingerprint;
use crate::stats::boundary::{plausible, step_position};
use crate::stats::changepoint::{self, ChangePoint};
use crate::stats::multiple::benjamini_hochberg;
use crate::stats::rank_cusum;
use crate::store::history::{
    Alert, AlertMember, AlertState, Boundary, DetectionState, Direction, Point, PointFilter,
    SeriesInfo, SeriesKind, boundary_span, joint_boundary,
};
use crate::store::{DbError, DetectionKey, History, TestId};

use super::window::Windows;

/// Which detector, with its knobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// tardy's default: a calibrated false-alarm rate.
    Calibrated(rank_cusum::Options),
    /// Apache Otava 0.8's E-Divisive, exactly.
    Otava(changepoint::Options),
}

impl Default for Method {
    fn default() -> Self {
        Method::Calibrated(rank_cusum::Options::default())
    }
}

impl Method {
    /// Change points of a whole series.
    pub fn detect(&self, values: &[f64]) -> Vec<ChangePoint> {
        match self {
            // Counts (instructions) hold one level until a commit moves it:
            // each step is found from the two points that show it.
            Method::Calibrated(o) => match crate::stats::counts::steps(values) {
                Some(steps) => steps
                    .into_iter()
                    .map(|(index, before, after, nb, na)| ChangePoint {
                        index,
                        stats: changepoint::Stats {
                            mean_before: before,
                            mean_after: after,
                            std_before: 0.0,
                            std_after: 0.0,
                            n_before: nb,
                            n_after: na,
                            pvalue: 0.0,
                        },
                    })
                    .filter(|c| c.stats.forward_change().abs() > o.min_magnitude)
                    .collect(),
                None => rank_cusum::detect(values, o).change_points,
            },
            Method::Otava(o) => changepoint::detect(values, o).change_points,
        }
    }

    /// One line for headers: "calibrated, 1% false alarms per 1,000 points".
    pub fn describe(&self) -> String {
        match self {
            Method::Calibrated(o) => format!(
                "calibrated, {}% false alarms per 1,000 points of noise{}",
                o.false_alarm * 100.0,
                if o.min_magnitude > 0.0 {
                    format!(", magnitude > {}", o.min_magnitude)
                } else {
                    String::new()
                }
            ),
            Method::Otava(o) => format!(
                "Otava E-Divisive, window {}, p {}, magnitude {}",
                o.window, o.max_pvalue, o.min_magnitude
            ),
        }
    }

    /// The detector the flags ask for: `--otava` (with Otava's `--window` and
    /// `--p-value`), or the default with `--false-alarm-rate`; both take
    /// `--min-magnitude`. Otava's knobs without `--otava` are refused, so they
    /// are never silently ignored.
    pub fn from_flags(
        otava: bool,
        window: Option<usize>,
        p_value: Option<f64>,
        false_alarm: Option<f64>,
        min_magnitude: f64,
    ) -> Result<Method, String> {
        if otava {
            if false_alarm.is_some() {
                return Err(
                    "--false-alarm-rate is the calibrated detector's; with --otava use --p-value"
                        .into(),
                );
            }
            let d = changepoint::Options::default();
            let o = changepoint::Options {
                window: window.unwrap_or(d.window),
                max_pvalue: p_value.unwrap_or(d.max_pvalue),
                min_magnitude,
            };
            o.validate().map_err(|e| e.to_string())?;
            return Ok(Method::Otava(o));
        }
        if window.is_some() || p_value.is_some() {
            let flag = if window.is_some() {
                "--window"
            } else {
                "--p-value"
            };
            return Err(format!(
                "{flag} is Otava's: add --otava for Otava's E-Divisive (whose p-value ignores its search, so it raises false alerts on noise); the default detector takes --false-alarm-rate"
            ));
        }
        let o = rank_cusum::Options {
            false_alarm: false_alarm.unwrap_or(rank_cusum::Options::default().false_alarm),
            min_magnitude,
        };
        o.validate().map_err(|e| e.to_string())?;
        Ok(Method::Calibrated(o))
    }

    pub fn min_magnitude(&self) -> f64 {
        match self {
            Method::Calibrated(o) => o.min_magnitude,
            Method::Otava(o) => o.min_magnitude,
        }
    }
}

/// How to detect.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectOptions {
    pub changepoint: Method,
    /// Benjamini-Hochberg level across every series of the run.
    pub fdr: f64,
    pub filter: PointFilter,
    /// Recompute every series from scratch (ignore saved weak points).
    pub full: bool,
    /// Alert only on change points with at least this many points on each
    /// side: with one point a side has no spread, and the t-test calls any
    /// difference certain.
    pub min_side: usize,
    /// Check the tests of a suite only at their end, over this many of the
    /// suite's newest points (`tardy serve` after each upload): work bounded
    /// by the suite's size and the window, not by the history's length. The
    /// series themselves (a suite's total too) are always searched whole.
    pub window: Option<usize>,
    /// With `window`: the whole search (of the window) runs on each test of
    /// 256 points or more at every this-many-th point of the suite, in
    /// turns, on shorter ones more often (every upload below 64 points; 1:
    /// every test at every point). A server sets [`SERVER_SEARCH_EVERY`]:
    /// the end test still runs on every test at every upload.
    pub search_every: u64,
}

/// How often a server searches each test's window whole (see
/// [`DetectOptions::search_every`]): the search costs a hundred times the
/// end test, the screen before it lets a few percent of noise through, and
/// the changes only it finds are small ones already dozens of points old.
pub const SERVER_SEARCH_EVERY: u64 = 8;

/// The window a server checks each test's end over: the end test's longest
/// tail and reference, and room for tests that skipped a few runs.
pub const SERVER_WINDOW: usize = crate::stats::sequential::MAX_REFERENCE
    + crate::stats::sequential::TAILS[crate::stats::sequential::TAILS.len() - 1]
    + 24;

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            changepoint: Method::default(),
            fdr: 0.05,
            filter: PointFilter::default(),
            full: false,
            min_side: 2,
            window: None,
            search_every: 1,
        }
    }
}

/// What one detection run did.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct DetectReport {
    /// Series examined (a suite's tests count one each).
    pub series: usize,
    /// Of those, recomputed only in their tail.
    pub incremental: usize,
    /// Change points found in all series (old and new).
    pub change_points: usize,
    /// Change points left out by the false-discovery control.
    pub rejected_by_fdr: usize,
    /// Change points not alerted yet: a side has fewer than `min_side` points.
    pub too_few_points: usize,
    /// Series too short for the calibrated detector to call any change
    /// (fewer than `rank_cusum::MIN_POINTS`).
    pub too_short: usize,
    pub new_alerts: Vec<Alert>,
    /// Alerts retracted in this run: detection no longer finds their change
    /// (each with its reason).
    pub retracted: Vec<Alert>,
    /// Retracted alerts whose change detection finds again: open again.
    pub reopened: Vec<Alert>,
    /// Series (not a suite's tests) so young that a change needs many
    /// points to be called: how many.
    pub young: Vec<Young>,
}

/// A young series ([`rank_cusum::YOUNG`] points or fewer) and how many more
/// points at a new level a step needs before detection calls it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Young {
    pub series: String,
    pub points: usize,
    /// Points a step of 4 times the series' noise needs (None: more than 64).
    pub step_4_sigma: Option<usize>,
    /// Points a step of 10 times the series' noise needs.
    pub step_10_sigma: Option<usize>,
}

/// [`Young`] for one series' values, with the calibrated detector's
/// options; `None` when it is not young or has no noise to scale by.
pub fn young(series: &str, values: &[f64], o: &rank_cusum::Options) -> Option<Young> {
    if values.len() >= rank_cusum::YOUNG {
        return None;
    }
    let step_4_sigma = rank_cusum::points_needed(values, 4.0, o, 64);
    let step_10_sigma = rank_cusum::points_needed(values, 10.0, o, 64);
    if step_4_sigma.is_none()
        && step_10_sigma.is_none()
        && crate::stats::jump::noise_scale(values) == 0.0
    {
        return None;
    }
    Some(Young {
        series: series.to_string(),
        points: values.len(),
        step_4_sigma,
        step_10_sigma,
    })
}

/// One change point of one series, before grouping.
struct Found {
    series: usize,
    test: Option<TestId>,
    prev: Point,
    point: Point,
    cp: ChangePoint,
    alerted: bool,
    boundary: Vec<Boundary>,
}

/// How far either side of a change its place is looked for.
const REACH: usize = 48;

/// The plausible places (99% of the probability) of the change that starts
/// at `index` of `values`, looked for in `lo..hi` (between the neighbouring
/// changes), with the change's own place always among them. `point(i)` is
/// the point of `values[i]`.
fn places<'p>(
    values: &[f64],
    index: usize,
    lo: usize,
    hi: usize,
    point: impl Fn(usize) -> &'p Point,
) -> Vec<Boundary> {
    let lo = lo.max(index.saturating_sub(REACH));
    let hi = hi.min(index + REACH).min(values.len());
    if index <= lo || index >= hi {
        return Vec::new();
    }
    let p = step_position(&values[lo..hi]);
    let mut kept = plausible(&p, 0.01);
    if !kept.iter().any(|k| k.0 == index - lo) {
        kept.push((index - lo, p.get(index - lo).copied().unwrap_or(0.0)));
    }
    kept.into_iter()
        .map(|(k, probability)| {
            let (prev, at) = (point(lo + k - 1), point(lo + k));
            Boundary {
                from_commit: prev.commit.clone(),
                to_commit: at.commit.clone(),
                from_time: prev.time(),
                to_time: at.time(),
                probability,
            }
        })
        .collect()
}

fn scope(opts: &DetectOptions) -> String {
    let filter = format!(
        "branch={};since={}",
        opts.filter.branch.as_deref().unwrap_or("*"),
        opts.filter.since.map_or("*".to_string(), |s| s.to_string()),
    );
    match &opts.changepoint {
        // The scope Otava's saved weak points were made under.
        Method::Otava(c) => format!(
            "{filter};window={};p={};magnitude={}",
            c.window, c.max_pvalue, c.min_magnitude
        ),
        Method::Calibrated(c) => format!(
            "{filter};calibrated;fa={};magnitude={}",
            c.false_alarm, c.min_magnitude
        ),
    }
}

/// Change points of one series' points, incremental when the saved state
/// is a prefix of these points. Returns them, the new state, and whether
/// the run was incremental.
pub fn series_change_points(
    points: &[Point],
    saved: Option<&DetectionState>,
    opts: &DetectOptions,
) -> (Vec<ChangePoint>, DetectionState, bool) {
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let scope = scope(opts);
    let resumable = saved.filter(|s| {
        !opts.full
            && s.options == scope
            && s.points >= 1
            && s.points <= points.len()
            && points[s.points - 1].id == s.last_point
    });
    let otava = match &opts.changepoint {
        Method::Otava(o) => *o,
        Method::Calibrated(_) => {
            // Recomputed whole every time: O(n log² n), about a millisecond
            // for 2,000 points, and it sees the newest points in every scale.
            let cps = opts.changepoint.detect(&values);
            let state = DetectionState {
                points: points.len(),
                last_point: points.last().map_or(0, |p| p.id),
                weak: Vec::new(),
                options: scope,
            };
            return (cps, state, false);
        }
    };
    let (detection, incremental) = match resumable {
        Some(state) => {
            let position: HashMap<i64, usize> =
                points.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
            let mut weak: Vec<usize> = state
                .weak
                .iter()
                .filter_map(|id| position.get(id).copied())
                .collect();
            weak.sort_unstable();
            let new = points.len() - state.points;
            (
                changepoint::detect_appended(&values, &otava, new, &weak),
                true,
            )
        }
        None => (changepoint::detect(&values, &otava), false),
    };
    let state = DetectionState {
        points: points.len(),
        last_point: points.last().map_or(0, |p| p.id),
        weak: detection.weak.iter().map(|&i| points[i].id).collect(),
        options: scope,
    };
    (detection.change_points, state, incremental)
}

/// Run detection over `series` (all when empty) and record new alerts.
pub fn detect(
    store: &mut dyn History,
    names: &[String],
    opts: &DetectOptions,
) -> Result<DetectReport, DbError> {
    detect_with(store, names, opts, &Windows::new(0))
}

/// [`detect`], with suites' windows ([`DetectOptions::window`]) held in
/// `windows` between runs: what `tardy serve` does after each upload.
pub fn detect_with(
    store: &mut dyn History,
    names: &[String],
    opts: &DetectOptions,
    windows: &Windows,
) -> Result<DetectReport, DbError> {
    // Named series (an upload's) are looked up one by one: the list's
    // summaries count every series' points, work that grows with history.
    let selected: Vec<SeriesInfo> = if names.is_empty() {
        store.list()?
    } else {
        let mut out = Vec::new();
        for n in names {
            out.push(
                store
                    .series(n)?
                    .ok_or_else(|| DbError::NoSeries(n.clone()))?,
            );
        }
        out
    };
    let mut report = DetectReport::default();
    // Alerts whose change is checked again: open and acknowledged ones (to
    // retract when their change is gone), retracted ones (to reopen when it
    // is back). Indexed by (series, test) of their members.
    let watched: Vec<Alert> = store.alerts(&[
        AlertState::Open,
        AlertState::Acknowledged,
        AlertState::Retracted,
    ])?;
    let mut members_of: HashMap<MemberKey, Vec<(usize, usize)>> = HashMap::new();
    for (ai, a) in watched.iter().enumerate() {
        for (mi, m) in a.members.iter().enumerate() {
            members_of
                .entry((m.series_id, m.test.clone()))
                .or_default()
                .push((ai, mi));
        }
    }
    // (alert, member) -> whether its change is still found; a member whose
    // series was not searched whole in this run is not judged.
    let mut judged: HashMap<(usize, usize), Judged> = HashMap::new();
    let mut found: Vec<Found> = Vec::new();
    let mut states: Vec<(DetectionKey, DetectionState)> = Vec::new();
    // p-values of the family: every change point, and a 1 for each series without one.
    let mut family: Vec<f64> = Vec::new();
    let scope_key = scope(opts);
    {
        let store: &dyn History = &*store;
        for (si, series) in selected.iter().enumerate() {
            let alerted: HashSet<(i64, i64)> =
                store.alerted_points(series.id)?.into_iter().collect();
            let mut examine = |test: Option<&TestId>, points: &[Point]| -> Result<(), DbError> {
                let key = DetectionKey {
                    series_id: series.id,
                    test_key: test.map_or(0, |t| t.id),
                    scope: scope_key.clone(),
                };
                let saved = store.detection(&key)?;
                let (cps, state, incremental) = series_change_points(points, saved.as_ref(), opts);
                report.series += 1;
                report.incremental += incremental as usize;
                if matches!(opts.changepoint, Method::Calibrated(_))
                    && points.len() < rank_cusum::MIN_POINTS
                {
                    report.too_short += 1;
                }
                report.change_points += cps.len();
                // E-Divisive's change points fenced into sides too short to
                // tell (around one loaded point) are dropped before alerting,
                // their neighbours told on the joined segments: a plain step
                // beside them is then alerted, not "too few points".
                let values: Vec<f64> = points.iter().map(|p| p.value).collect();
                let (told, fenced) = match &opts.changepoint {
                    Method::Otava(o) => changepoint::with_sides_of(&values, &cps, opts.min_side, o),
                    Method::Calibrated(_) => (cps.clone(), 0),
                };
                report.too_few_points += fenced;
                if told.is_empty() {
                    family.push(1.0);
                }
                if let Some(list) = members_of.get(&(series.id, test.map(|t| t.name.clone()))) {
                    for &(ai, mi) in list {
                        let m = &watched[ai].members[mi];
                        if let Some(j) = judge(m, points, &cps) {
                            judged.insert((ai, mi), j);
                        }
                    }
                }
                if let (None, Method::Calibrated(o)) = (test, &opts.changepoint) {
                    report.young.extend(young(&series.name, &values, o));
                }
                for (c, cp) in told.iter().enumerate() {
                    family.push(cp.stats.pvalue);
                    let point = points[cp.index].clone();
                    let prev = points[cp.index - 1].clone();
                    let lo = if c > 0 { told[c - 1].index } else { 0 };
                    let hi = told.get(c + 1).map_or(points.len(), |n| n.index);
                    let boundary = places(&values, cp.index, lo, hi, |i| &points[i]);
                    // Found before, perhaps a point or two away (placed again
                    // with more points after it): the same change.
                    let near = cp.index.saturating_sub(rank_cusum::EDGE)
                        ..(cp.index + rank_cusum::EDGE + 1).min(points.len());
                    let alerted_here = near
                        .map(|i| points[i].id)
                        .chain(boundary.iter().filter_map(|b| {
                            points
                                .iter()
                                .find(|p| p.time() == b.to_time && p.commit == b.to_commit)
                                .map(|p| p.id)
                        }))
                        .any(|id| alerted.contains(&(key.test_key, id)));
                    found.push(Found {
                        series: si,
                        test: test.cloned(),
                        alerted: alerted_here,
                        prev,
                        point,
                        cp: *cp,
                        boundary,
                    });
                }
                states.push((key, state));
                Ok(())
            };
            let points = store.points(series.id, &opts.filter)?;
            examine(None, &points)?;
            if series.kind != SeriesKind::Suite {
                continue;
            }
            match (opts.window, &opts.changepoint) {
                (Some(window), Method::Calibrated(o)) => {
                    let w = &points[points.len().saturating_sub(window)..];
                    let checked = windows.check(
                        store,
                        series.id,
                        &scope_key,
                        w,
                        &alerted,
                        o,
                        opts.search_every,
                    )?;
                    for end in &checked.changed {
                        report.series += 1;
                        report.incremental += 1;
                        for (c, cp) in end.cps.iter().enumerate() {
                            report.change_points += 1;
                            family.push(cp.stats.pvalue);
                            let lo = if c > 0 { end.cps[c - 1].index } else { 0 };
                            let hi = end.cps.get(c + 1).map_or(end.values.len(), |n| n.index);
                            let boundary = places(&end.values, cp.index, lo, hi, |i| &w[end.at[i]]);
                            found.push(Found {
                                series: si,
                                test: Some(end.test.clone()),
                                alerted: false,
                                prev: w[end.at[cp.index - 1]].clone(),
                                point: w[end.at[cp.index]].clone(),
                                cp: *cp,
                                boundary,
                            });
                        }
                    }
                    let quiet = checked.tests.saturating_sub(checked.changed.len());
                    report.series += quiet;
                    report.incremental += quiet;
                    family.extend(std::iter::repeat_n(1.0, quiet));
                }
                _ => {
                    store
                        .for_each_test(series.id, &opts.filter, &mut |t, p| examine(Some(t), p))?;
                }
            }
        }
    }
    // Benjamini-Hochberg over the whole family; the change points are its
    // first entries in `found` order once the 1s are set aside.
    let ps: Vec<f64> = found.iter().map(|f| f.cp.stats.pvalue).collect();
    let padding = family.len() - ps.len();
    let mut all_p = ps.clone();
    all_p.extend(std::iter::repeat_n(1.0, padding));
    let q = benjamini_hochberg(&all_p);
    let mut fingerprints: HashMap<i64, Option<Fingerprint>> = HashMap::new();
    // Each new change point is an alert of one; then those whose commit
    // ranges overlap become one.
    let mut singles: Vec<Alert> = Vec::new();
    for (k, f) in found.iter().enumerate() {
        let qk = q[k];
        if qk.is_nan() || qk > opts.fdr {
            report.rejected_by_fdr += 1;
            continue;
        }
        if f.alerted {
            continue;
        }
        if f.cp.stats.n_before < opts.min_side || f.cp.stats.n_after < opts.min_side {
            report.too_few_points += 1;
            continue;
        }
        let series = &selected[f.series];
        let environment = environment_change(&*store, &mut fingerprints, &f.prev, &f.point)?;
        let stats = &f.cp.stats;
        let (from_commit, to_commit, from_time, to_time) = boundary_span(&f.boundary).unwrap_or((
            f.prev.commit.clone(),
            f.point.commit.clone(),
            f.prev.time(),
            f.point.time(),
        ));
        singles.push(Alert {
            id: 0,
            state: AlertState::Open,
            from_commit,
            to_commit,
            from_time,
            to_time,
            boundary: f.boundary.clone(),
            branch: f.point.branch.clone(),
            environment,
            created_at: 0,
            reason: None,
            members: vec![AlertMember {
                series_id: series.id,
                series: series.name.clone(),
                test: f.test.as_ref().map(|t| t.name.clone()),
                unit: series.unit.clone(),
                point_id: f.point.id,
                prev_point_id: f.prev.id,
                mean_before: stats.mean_before,
                mean_after: stats.mean_after,
                change: stats.forward_change(),
                pvalue: stats.pvalue,
                qvalue: qk,
                regression: direction_of(series).is_regression(stats.mean_before, stats.mean_after),
                boundary: f.boundary.clone(),
            }],
        });
    }
    // An alert every member of which was judged: retracted when none of
    // their changes is found any more, reopened (if retracted) when one is.
    for (ai, a) in watched.iter().enumerate() {
        let verdicts: Vec<&Judged> = (0..a.members.len())
            .filter_map(|mi| judged.get(&(ai, mi)))
            .collect();
        if verdicts.len() != a.members.len() || verdicts.is_empty() {
            continue;
        }
        let holds = verdicts.iter().any(|j| j.holds);
        if a.state == AlertState::Retracted && holds {
            store.set_alert_state(a.id, AlertState::Open)?;
            if let Some(x) = store.alert(a.id)? {
                report.reopened.push(x);
            }
        } else if a.state != AlertState::Retracted && !holds {
            let reason = retraction_reason(a, &verdicts);
            store.retract_alert(a.id, &reason)?;
            if let Some(x) = store.alert(a.id)? {
                report.retracted.push(x);
            }
        }
    }
    let alerts = group(singles);
    let ids = store.commit_detection(&states, &alerts)?;
    for id in ids {
        if let Some(a) = store.alert(id)? {
            report.new_alerts.push(a);
        }
    }
    report.new_alerts.sort_by_key(|a| a.id);
    Ok(report)
}

/// An alert member's series and test (by name).
type MemberKey = (i64, Option<String>);

/// Whether an alert member's change is still found, and what the series
/// shows now.
#[derive(Debug, Clone, PartialEq)]
struct Judged {
    holds: bool,
    points: usize,
    change_points: usize,
}

/// Judge member `m` against this run's change points `cps` of its series'
/// `points`: its change holds when a change point lies within
/// [`rank_cusum::EDGE`] points of its first point after the change, or at
/// one of its plausible places. `None` when its point is not among these
/// points (another branch, or before `--since`): it cannot be judged here.
fn judge(m: &AlertMember, points: &[Point], cps: &[ChangePoint]) -> Option<Judged> {
    let idx = points.iter().position(|p| p.id == m.point_id)?;
    let holds = cps.iter().any(|c| {
        c.index.abs_diff(idx) <= rank_cusum::EDGE
            || points.get(c.index).is_some_and(|p| {
                m.boundary
                    .iter()
                    .any(|b| b.to_time == p.time() && b.to_commit == p.commit)
            })
    });
    Some(Judged {
        holds,
        points: points.len(),
        change_points: cps.len(),
    })
}

/// One line: why an alert was retracted.
fn retraction_reason(a: &Alert, verdicts: &[&Judged]) -> String {
    let range = match (&a.from_commit, &a.to_commit) {
        (Some(f), Some(t)) => format!(
            "{}..{}",
            f.chars().take(7).collect::<String>(),
            t.chars().take(7).collect::<String>()
        ),
        _ => "its place".to_string(),
    };
    let most = verdicts.iter().map(|j| j.points).max().unwrap_or(0);
    let none = verdicts.iter().all(|j| j.change_points == 0);
    format!(
        "the change at {range} is no longer found: with {most} points, {}",
        if none {
            if verdicts.len() == 1 {
                "its series is one level (no change point)".to_string()
            } else {
                "its series are each one level (no change point)".to_string()
            }
        } else {
            "no change point lies there any more".to_string()
        }
    )
}

/// Merge alerts whose ranges (from, to] overlap into one whose range is
/// their intersection: the commits every member's change lies between. A
/// greedy pass in order of range end; members sorted by size of change.
pub fn group(mut singles: Vec<Alert>) -> Vec<Alert> {
    singles.sort_by_key(|a| (a.to_time, a.from_time));
    let mut out: Vec<Alert> = Vec::new();
    for a in singles {
        if let Some(g) = out.last_mut() {
            let lo = g.from_time.max(a.from_time);
            let hi = g.to_time.min(a.to_time);
            let same = a.from_time == g.from_time && a.to_time == g.to_time;
            if same || lo < hi {
                if a.from_time > g.from_time {
                    g.from_time = a.from_time;
                    g.from_commit = a.from_commit.clone();
                }
                if a.to_time < g.to_time {
                    g.to_time = a.to_time;
                    g.to_commit = a.to_commit.clone();
                }
                for e in a.environment {
                    if !g.environment.contains(&e) {
                        g.environment.push(e);
                    }
                }
                g.members.extend(a.members);
                continue;
            }
        }
        out.push(a);
    }
    for g in &mut out {
        g.members
            .sort_by(|x, y| y.change.abs().total_cmp(&x.change.abs()));
        if g.members.len() > 1 {
            g.boundary = joint_boundary(&g.members);
        }
    }
    out
}

fn direction_of(s: &SeriesInfo) -> Direction {
    s.direction
}

/// The fingerprint settings that differ between the points either side of
/// a change, as "what: before -> after".
fn environment_change(
    store: &dyn History,
    cache: &mut HashMap<i64, Option<Fingerprint>>,
    prev: &Point,
    point: &Point,
) -> Result<Vec<String>, DbError> {
    let (Some(a), Some(b)) = (prev.fingerprint_id, point.fingerprint_id) else {
        return Ok(Vec::new());
    };
    if a == b {
        return Ok(Vec::new());
    }
    for id in [a, b] {
        if let std::collections::hash_map::Entry::Vacant(e) = cache.entry(id) {
            e.insert(store.fingerprint(id)?);
        }
    }
    let (Some(Some(fa)), Some(Some(fb))) = (cache.get(&a), cache.get(&b)) else {
        return Ok(Vec::new());
    };
    Ok(fa
        .differences(fb)
        .into_iter()
        .map(|(what, x, y)| format!("{what}: {x} -> {y}"))
        .collect())
}

/// Every place where the machine changed between consecutive points: (index
/// of the first point on the new machine, what changed).
pub fn environment_boundaries(
    store: &dyn History,
    points: &[Point],
) -> Result<Vec<(usize, Vec<String>)>, DbError> {
    let mut cache = HashMap::new();
    let mut out = Vec::new();
    for i in 1..points.len() {
        if points[i].fingerprint_id != points[i - 1].fingerprint_id {
            let what = environment_change(store, &mut cache, &points[i - 1], &points[i])?;
            if !what.is_empty() {
                out.push((i, what));
            }
        }
    }
    Ok(out)
}

/// A stretch of a series between change points.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Segment {
    pub start: usize,
    /// One past the last point.
    pub end: usize,
    pub first_commit: Option<String>,
    pub last_commit: Option<String>,
    pub first_time: i64,
    pub last_time: i64,
    pub mean: f64,
    pub stddev: f64,
    /// mean / previous segment's mean - 1.
    pub change: Option<f64>,
    /// p-value of the change point that starts it.
    pub pvalue: Option<f64>,
    /// Fingerprint settings that changed at its start.
    pub environment: Vec<String>,
}

/// The segments between `cps` over `points`.
pub fn segments(
    store: &dyn History,
    points: &[Point],
    cps: &[ChangePoint],
) -> Result<Vec<Segment>, DbError> {
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cps.iter().map(|c| c.index));
    bounds.push(points.len());
    let mut cache = HashMap::new();
    let mut out: Vec<Segment> = Vec::new();
    for (k, w) in bounds.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        if a >= b {
            continue;
        }
        let values: Vec<f64> = points[a..b].iter().map(|p| p.value).collect();
        let (mean, var) = crate::stats::summary::mean_var_of(&values, |v| v);
        let change = out.last().map(|prev: &Segment| mean / prev.mean - 1.0);
        let environment = if a > 0 {
            environment_change(store, &mut cache, &points[a - 1], &points[a])?
        } else {
            Vec::new()
        };
        out.push(Segment {
            start: a,
            end: b,
            first_commit: points[a].commit.clone(),
            last_commit: points[b - 1].commit.clone(),
            first_time: points[a].time(),
            last_time: points[b - 1].time(),
            mean,
            stddev: var.sqrt(),
            change,
            pvalue: if k > 0 {
                Some(cps[k - 1].stats.pvalue)
            } else {
                None
            },
            environment,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(from: i64, to: i64, series: &str) -> Alert {
        Alert {
            id: 0,
            state: AlertState::Open,
            from_commit: Some(format!("c{from}")),
            to_commit: Some(format!("c{to}")),
            from_time: from,
            to_time: to,
            branch: None,
            environment: Vec::new(),
            created_at: 0,
            boundary: Vec::new(),
            reason: None,
            members: vec![AlertMember {
                series_id: 1,
                series: series.into(),
                test: None,
                unit: "s".into(),
                point_id: to,
                prev_point_id: from,
                mean_before: 1.0,
                mean_after: 1.1,
                change: 0.1,
                pvalue: 1e-6,
                qvalue: 1e-5,
                regression: true,
                boundary: Vec::new(),
            }],
        }
    }

    #[test]
    fn overlapping_ranges_become_one_alert_on_their_intersection() {
        // Nightly (10..20], hourly (14..15], a suite at the same (10..20], and
        // an unrelated change at (30..40].
        let g = group(vec![
            single(10, 20, "nightly"),
            single(30, 40, "other"),
            single(14, 15, "hourly"),
            single(10, 20, "suite"),
        ]);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].members.len(), 3);
        assert_eq!((g[0].from_time, g[0].to_time), (14, 15));
        assert_eq!(g[0].from_commit.as_deref(), Some("c14"));
        assert_eq!(g[1].members[0].series, "other");
        // Adjacent but not overlapping ranges stay apart.
        assert_eq!(group(vec![single(1, 2, "a"), single(2, 3, "b")]).len(), 2);
    }
}
