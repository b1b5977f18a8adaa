//! The history store's interface: every operation tardy needs, each one
//! transactional, so the CLI never sees SQL and a PostgreSQL store can sit
//! beside the SQLite one ([`super::sqlite`]).

use std::path::PathBuf;

use super::history::{
    Alert, AlertMark, AlertState, Annotation, DetectionState, MachineInfo, NewPoint, Point,
    PointFilter, SeriesInfo, SeriesOrder, SeriesSpec, Upload, UploadInfo, UploadOutcome,
};
use crate::probe::Fingerprint;

/// What went wrong with the database, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("'{path}' is not a tardy history database (corrupt or another kind of file): {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error(
        "'{path}' is locked by another process (waited {waited_s} s); try again when it has finished"
    )]
    Locked { path: PathBuf, waited_s: f64 },
    #[error(
        "'{path}' has schema version {found}, newer than this tardy understands ({known}); upgrade tardy"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error("cannot open '{path}': {detail}")]
    Open { path: PathBuf, detail: String },
    #[error("database '{path}': {detail}")]
    Sql { path: PathBuf, detail: String },
    #[error("no series named '{0}' (see `tardy history list`)")]
    NoSeries(String),
    #[error("suite '{suite}' has no test '{test}'")]
    NoTest { suite: String, test: String },
    #[error("no alert #{0} (see `tardy history alerts --all`)")]
    NoAlert(i64),
    #[error("{0}")]
    Invalid(String),
}

/// One series and the points to append to it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Batch {
    pub spec: SeriesSpec,
    pub points: Vec<NewPoint>,
}

/// Where a detection's state belongs: a series, a test of a suite (its
/// `test_key`, 0 for the series itself) and the scope (branch and options).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DetectionKey {
    pub series_id: i64,
    pub test_key: i64,
    pub scope: String,
}

/// A test of a suite series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestId {
    pub id: i64,
    pub name: String,
}

/// The newest points of a suite and every test's durations at them: what a
/// check of the series' end needs, read in one row per point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TestWindow {
    /// The suite's newest points, oldest first.
    pub points: Vec<Point>,
    /// Every test of the suite, in id order.
    pub tests: Vec<TestId>,
    /// Row `t` (test `tests[t]`) holds its duration at each point, NaN where
    /// the test did not run: `values[t * points.len() + i]`.
    pub values: Vec<f32>,
}

impl TestWindow {
    /// Test `t`'s durations, NaN where it did not run.
    pub fn row(&self, t: usize) -> &[f32] {
        let n = self.points.len();
        &self.values[t * n..(t + 1) * n]
    }
}

/// Called with a point's index and its tests' durations.
pub type VectorVisitor<'a> = dyn FnMut(usize, &[(i64, f32)]) -> Result<(), DbError> + 'a;

/// Called with each test of a suite and its points.
pub type TestVisitor<'a> = dyn FnMut(&TestId, &[Point]) -> Result<(), DbError> + 'a;

/// The operations of a history store.
pub trait History {
    /// Append every batch in one transaction: all or nothing. Returns the new
    /// point ids, batch by batch.
    fn save(&mut self, batches: &[Batch]) -> Result<Vec<Vec<i64>>, DbError>;
    /// [`History::save`] of `n` batches made one at a time (`make(0)`,
    /// `make(1)`, ...) as their turn comes, in one transaction: memory holds
    /// one series' points, not every series'. Give them in name order (the
    /// order writers lock series in). The points saved.
    fn save_each(
        &mut self,
        n: usize,
        make: &mut dyn FnMut(usize) -> Batch,
    ) -> Result<usize, DbError> {
        let batches: Vec<Batch> = (0..n).map(&mut *make).collect();
        Ok(self.save(&batches)?.iter().map(Vec::len).sum())
    }
    /// Save an upload's batches in one transaction, unless its run id was
    /// stored before (then nothing is written).
    fn save_upload(&mut self, upload: &Upload, batches: &[Batch])
    -> Result<UploadOutcome, DbError>;
    /// The newest uploads first.
    fn uploads(&self, limit: i64) -> Result<Vec<UploadInfo>, DbError>;
    /// Every machine fingerprint the project's points were measured on,
    /// oldest first.
    fn machines(&self) -> Result<Vec<MachineInfo>, DbError>;
    fn list(&self) -> Result<Vec<SeriesInfo>, DbError>;
    /// One page of the series in `order`, and how many series there are
    /// in all: what the overview and the API show, without reading every
    /// series.
    fn series_page(
        &self,
        offset: usize,
        limit: usize,
        order: SeriesOrder,
    ) -> Result<(usize, Vec<SeriesInfo>), DbError>;
    /// The newest `n` points of a series, oldest first.
    fn recent_points(&self, series_id: i64, n: usize) -> Result<Vec<Point>, DbError>;
    /// The newest schema migration applied: one cheap query, the server's
    /// health check.
    fn schema_version(&self) -> Result<i64, DbError>;
    fn series(&self, name: &str) -> Result<Option<SeriesInfo>, DbError>;
    /// Points of a series, oldest first (commit time, else run time).
    fn points(&self, series_id: i64, filter: &PointFilter) -> Result<Vec<Point>, DbError>;
    fn samples(&self, point_id: i64) -> Result<Vec<f64>, DbError>;
    /// Every point's raw samples in one series, by point id (points
    /// stored without samples are absent).
    fn series_samples(
        &self,
        series_id: i64,
    ) -> Result<std::collections::BTreeMap<i64, Vec<f64>>, DbError>;
    fn tests(&self, series_id: i64) -> Result<Vec<TestId>, DbError>;
    /// Every test of a suite as a series of its own, one at a time (memory
    /// for one test's points), oldest point first.
    fn for_each_test(
        &self,
        series_id: i64,
        filter: &PointFilter,
        f: &mut TestVisitor<'_>,
    ) -> Result<(), DbError>;
    /// Each of these points' test durations, `(test id, duration)` in test
    /// id order, one point at a time (memory for one point's durations):
    /// `f(index into points, durations)`. A point without durations is not
    /// visited.
    fn each_vector(&self, points: &[Point], f: &mut VectorVisitor<'_>) -> Result<(), DbError>;
    /// Every test's durations at these points of a suite series.
    fn tests_at(&self, series_id: i64, points: Vec<Point>) -> Result<TestWindow, DbError>;
    fn fingerprint(&self, id: i64) -> Result<Option<Fingerprint>, DbError>;
    fn detection(&self, key: &DetectionKey) -> Result<Option<DetectionState>, DbError>;
    /// Point ids already in an alert for this series (and test key).
    fn alerted_points(&self, series_id: i64) -> Result<Vec<(i64, i64)>, DbError>;
    /// Save detection states and new alerts together. Returns the alert ids.
    fn commit_detection(
        &mut self,
        states: &[(DetectionKey, DetectionState)],
        alerts: &[Alert],
    ) -> Result<Vec<i64>, DbError>;
    /// Alerts in these states, newest first.
    fn alerts(&self, states: &[AlertState]) -> Result<Vec<Alert>, DbError>;
    /// Every alert (any state) with a member on this series, newest
    /// first, each with its members on it only: what a chart marks,
    /// without reading the members of an alert of every series.
    fn alert_marks(&self, series_id: i64) -> Result<Vec<AlertMark>, DbError>;
    fn alert(&self, id: i64) -> Result<Option<Alert>, DbError>;
    fn set_alert_state(&mut self, id: i64, state: AlertState) -> Result<(), DbError>;
    /// Retract an alert whose change detection no longer finds, keeping
    /// why.
    fn retract_alert(&mut self, id: i64, reason: &str) -> Result<(), DbError>;
    fn annotate(
        &mut self,
        series: Option<&str>,
        from_commit: &str,
        to_commit: Option<&str>,
        text: &str,
    ) -> Result<i64, DbError>;
    fn annotations(&self) -> Result<Vec<Annotation>, DbError>;
    /// Remember a commit's subject line (uploads carry it), so pages can
    /// show what a commit did, not only its hash.
    fn note_commit(&mut self, hash: &str, subject: &str) -> Result<(), DbError>;
    /// The subjects known for these commits (full hashes or prefixes as stored).
    fn commit_subjects(
        &self,
        hashes: &[&str],
    ) -> Result<std::collections::BTreeMap<String, String>, DbError>;
}
