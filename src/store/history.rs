//! The history model: what the database holds, independent of the database.
//!
//! A *series* is one metric of one benchmark (`tardy run --save`) or one test
//! suite (`tardy tests show --save`) over time; each *point* is one run of it
//! at one commit, with its raw samples, the machine's fingerprint and, for a
//! suite, the duration of every test (so each test is a series of its own
//! without a row per test in `series`). *Alerts* are detected change points
//! grouped by commit range; *annotations* are people's notes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::probe::Fingerprint;

/// Now, in Unix seconds (0 if the clock is before 1970).
pub fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Which way is worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    LowerIsBetter,
    HigherIsBetter,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::LowerIsBetter => "lower-is-better",
            Direction::HigherIsBetter => "higher-is-better",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        match s {
            "lower-is-better" | "lower" => Some(Direction::LowerIsBetter),
            "higher-is-better" | "higher" => Some(Direction::HigherIsBetter),
            _ => None,
        }
    }

    /// Is a change from `before` to `after` a regression?
    pub fn is_regression(self, before: f64, after: f64) -> bool {
        match self {
            Direction::LowerIsBetter => after > before,
            Direction::HigherIsBetter => after < before,
        }
    }
}

/// What a series measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SeriesKind {
    /// A command or benchmark: one value per point.
    Bench,
    /// A test suite: the suite's time per point, and every test's duration.
    Suite,
}

impl SeriesKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SeriesKind::Bench => "bench",
            SeriesKind::Suite => "suite",
        }
    }

    pub fn parse(s: &str) -> SeriesKind {
        if s == "suite" {
            SeriesKind::Suite
        } else {
            SeriesKind::Bench
        }
    }
}

/// A series as written: created on first use, its description updated after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesSpec {
    pub name: String,
    /// "wall", "cpu", "rss", a hyperfine/CSV column, "suite"...
    pub metric: String,
    /// "s", "KiB", "" ...
    pub unit: String,
    pub direction: Direction,
    pub kind: SeriesKind,
    pub tags: BTreeMap<String, String>,
    /// The command `tardy run --save` measured, for `tardy history bisect`.
    pub command: Option<String>,
    /// Options of `tardy bisect` that measure it as `tardy run` did
    /// (`--timeout 30`); the environment is part of the command.
    pub options: Vec<String>,
    /// The smallest change worth bisecting, as a fraction (e.g. 0.05).
    pub threshold: Option<f64>,
}

impl SeriesSpec {
    pub fn new(name: &str, metric: &str, unit: &str) -> SeriesSpec {
        SeriesSpec {
            name: name.to_string(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            direction: Direction::LowerIsBetter,
            kind: SeriesKind::Bench,
            tags: BTreeMap::new(),
            command: None,
            options: Vec::new(),
            threshold: None,
        }
    }
}

/// Where and when a point was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// Commit time, Unix seconds.
    pub commit_time: Option<i64>,
    /// When the run happened, Unix seconds.
    pub run_time: i64,
}

/// One test's result in a suite point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    pub name: String,
    /// Seconds.
    pub duration: f64,
    /// `passed`, `failed`, ...: one of a few words, never allocated per test.
    pub status: std::borrow::Cow<'static, str>,
}

/// A point to write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewPoint {
    pub provenance: Provenance,
    /// Shared: the points of one upload are one machine (a fingerprint is ~1 KB,
    /// and an upload may hold a million points).
    pub fingerprint: Option<std::sync::Arc<Fingerprint>>,
    /// The point's value (median of the samples for `tardy run`).
    pub value: f64,
    pub samples: Vec<f64>,
    pub tests: Vec<TestResult>,
}

/// A stored point. For a test of a suite, `value` is the test's duration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub id: i64,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub commit_time: Option<i64>,
    pub run_time: i64,
    pub fingerprint_id: Option<i64>,
    pub value: f64,
    /// Raw samples stored with the point.
    pub n: i64,
}

impl Point {
    /// The time the series is ordered by: commit time when known, else run time.
    pub fn time(&self) -> i64 {
        self.commit_time.unwrap_or(self.run_time)
    }
}

/// A stored series with a summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesInfo {
    pub id: i64,
    pub name: String,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub kind: SeriesKind,
    pub tags: BTreeMap<String, String>,
    pub command: Option<String>,
    /// Options of `tardy bisect` stored with the command.
    pub options: Vec<String>,
    pub threshold: Option<f64>,
    pub points: i64,
    pub last_value: Option<f64>,
    pub last_commit: Option<String>,
    /// Distinct tests (suites only).
    pub tests: i64,
    pub open_alerts: i64,
}

/// Which points to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointFilter {
    pub branch: Option<String>,
    /// Points at or after this time (Unix seconds, commit time else run time).
    pub since: Option<i64>,
    /// Only the newest this many (still oldest first).
    pub newest: Option<usize>,
    /// With `newest`: pass over this many of the newest first (the API's
    /// later pages reach back in time).
    pub skip_newest: usize,
}

/// The order of a page of series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesOrder {
    /// The most recently measured first, then by name (the overview).
    Recent,
    /// By name (the API's listing).
    Name,
}

/// What the last detection of one series left for the next, incremental one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DetectionState {
    /// Points analysed last time, and the id of the last one.
    pub points: usize,
    pub last_point: i64,
    /// Point ids of the weak change points.
    pub weak: Vec<i64>,
    /// The options it ran with ("window/p/magnitude"); other options start afresh.
    pub options: String,
}

/// State of an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertState {
    Open,
    Acknowledged,
    Dismissed,
    /// Detection no longer finds the change (more points showed it was
    /// noise): kept, with its reason, never counted as open.
    Retracted,
}

impl AlertState {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertState::Open => "open",
            AlertState::Acknowledged => "acknowledged",
            AlertState::Dismissed => "dismissed",
            AlertState::Retracted => "retracted",
        }
    }

    pub fn parse(s: &str) -> AlertState {
        match s {
            "acknowledged" => AlertState::Acknowledged,
            "dismissed" => AlertState::Dismissed,
            "retracted" => AlertState::Retracted,
            _ => AlertState::Open,
        }
    }
}

/// One place a change may be: between two consecutive points' commits,
/// with its probability ([`crate::stats::boundary`]).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Boundary {
    pub from_commit: Option<String>,
    pub to_commit: Option<String>,
    pub from_time: i64,
    pub to_time: i64,
    pub probability: f64,
}

impl Boundary {
    /// What identifies the place across series: the first commit after it.
    pub fn key(&self) -> (i64, Option<String>) {
        (self.to_time, self.to_commit.clone())
    }
}

/// Where a change seen by all of `members` is: their places combined
/// ([`crate::stats::boundary::combine`], the 64 largest changes deciding),
/// most likely first, cut to 99% of the probability.
pub fn joint_boundary(members: &[AlertMember]) -> Vec<Boundary> {
    let mut by_size: Vec<&AlertMember> =
        members.iter().filter(|m| !m.boundary.is_empty()).collect();
    by_size.sort_by(|a, b| b.change.abs().total_cmp(&a.change.abs()));
    type Place = (i64, Option<String>);
    let lists: Vec<Vec<(Place, f64)>> = by_size
        .iter()
        .take(64)
        .map(|m| {
            m.boundary
                .iter()
                .map(|b| (b.key(), b.probability))
                .collect()
        })
        .collect();
    crate::stats::boundary::combine(&lists, 0.01)
        .into_iter()
        .filter_map(|(key, p)| {
            let mut b = by_size
                .iter()
                .flat_map(|m| &m.boundary)
                .find(|b| b.key() == key)?
                .clone();
            b.probability = p;
            Some(b)
        })
        .collect()
}

/// The commit range that holds every place of `boundary`: (from commit,
/// to commit, from time, to time).
pub fn boundary_span(boundary: &[Boundary]) -> Option<(Option<String>, Option<String>, i64, i64)> {
    let first = boundary.iter().min_by_key(|b| b.from_time)?;
    let last = boundary.iter().max_by_key(|b| b.to_time)?;
    Some((
        first.from_commit.clone(),
        last.to_commit.clone(),
        first.from_time,
        last.to_time,
    ))
}

/// One series' change point inside an alert.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlertMember {
    pub series_id: i64,
    pub series: String,
    /// The test, for a suite's per-test series.
    pub test: Option<String>,
    pub unit: String,
    /// The first point after the change, and the last one before.
    pub point_id: i64,
    pub prev_point_id: i64,
    pub mean_before: f64,
    pub mean_after: f64,
    /// mean_after / mean_before - 1.
    pub change: f64,
    pub pvalue: f64,
    /// Benjamini-Hochberg adjusted across every series of the detection run.
    pub qvalue: f64,
    pub regression: bool,
    /// Where this series' change may be, most likely first.
    pub boundary: Vec<Boundary>,
}

/// A detected change: every series that changed between the same two commits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Alert {
    pub id: i64,
    pub state: AlertState,
    /// Last commit before the change and first after (None without git data).
    pub from_commit: Option<String>,
    pub to_commit: Option<String>,
    pub from_time: i64,
    pub to_time: i64,
    pub branch: Option<String>,
    /// Fingerprint settings that changed at the same boundary: when not
    /// empty, the machine changed there, not (only) the code.
    pub environment: Vec<String>,
    pub created_at: i64,
    pub members: Vec<AlertMember>,
    /// Where the change may be, from every member together, most likely
    /// first; `from_commit..to_commit` spans these places.
    pub boundary: Vec<Boundary>,
    /// Why it was retracted (state `retracted`): what detection found
    /// instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An alert as one series' chart marks it: its members on that series
/// only, and its kind from all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertMark {
    pub id: i64,
    pub state: AlertState,
    pub kind: &'static str,
    pub members: Vec<AlertMember>,
}

/// "environment change", "regression", "improvement" or "mixed": an alert
/// of `members` changes, `regressions` of them slower.
pub fn alert_kind(environment: bool, regressions: usize, members: usize) -> &'static str {
    if environment {
        "environment change"
    } else if regressions == members {
        "regression"
    } else if regressions == 0 {
        "improvement"
    } else {
        "mixed"
    }
}

impl Alert {
    pub fn regressions(&self) -> usize {
        self.members.iter().filter(|m| m.regression).count()
    }

    /// "environment change", "regression", "improvement" or "mixed".
    pub fn kind(&self) -> &'static str {
        alert_kind(
            !self.environment.is_empty(),
            self.regressions(),
            self.members.len(),
        )
    }
}

/// A human note on a commit or a commit range, for one series or all.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Annotation {
    pub id: i64,
    pub series: Option<String>,
    pub from_commit: String,
    pub to_commit: Option<String>,
    pub text: String,
    pub created_at: i64,
}

/// An upload to `tardy serve`: its id makes a retried upload a no-op.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Upload {
    /// Client-chosen, or the hash of the body and its metadata.
    pub run_id: String,
    /// "runs", "tests" or "points".
    pub kind: String,
}

/// A stored upload, for the "recent runs" list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UploadInfo {
    pub id: i64,
    pub run_id: String,
    pub kind: String,
    pub commit: Option<String>,
    pub branch: Option<String>,
    pub series: Vec<String>,
    pub points: i64,
    pub received_at: i64,
}

/// What saving an upload did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum UploadOutcome {
    /// Stored now: the new point ids, batch by batch.
    Stored(Vec<Vec<i64>>),
    /// This run id was stored before (at this time); nothing written.
    Duplicate { received_at: i64 },
}

/// A machine fingerprint and the points measured on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineInfo {
    pub id: i64,
    pub fingerprint: Option<Fingerprint>,
    pub first_seen: i64,
    pub last_seen: i64,
    pub points: i64,
    pub series: i64,
}
