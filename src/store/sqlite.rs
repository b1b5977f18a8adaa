//! The SQLite history store (bundled SQLite, WAL journal): one file, several
//! readers and writers at once, each write one transaction, so a crash or
//! `kill -9` loses at most the write in flight.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::db::{Batch, DbError, DetectionKey, History, TestId};
use super::history::{
    Alert, AlertMember, AlertState, Annotation, DetectionState, Direction, Point, PointFilter,
    SeriesInfo, SeriesKind, now_s,
};
use super::schema::{BOOTSTRAP, Dialect, LATEST, MIGRATIONS, statements};
use crate::probe::Fingerprint;

/// How long a writer waits for another to finish (15 s; `TARDY_BUSY_TIMEOUT`
/// in seconds overrides it).
pub fn busy_timeout() -> Duration {
    std::env::var("TARDY_BUSY_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(15), Duration::from_secs_f64)
}

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    project_id: i64,
}

impl SqliteStore {
    /// Open (creating it and its directory if needed) and migrate the
    /// database at `path`, for `project`.
    pub fn open(path: &Path, project: &str) -> Result<SqliteStore, DbError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| DbError::Open {
                path: path.to_path_buf(),
                detail: e.to_string(),
            })?;
        }
        if path.is_dir() {
            return Err(DbError::Open {
                path: path.to_path_buf(),
                detail: "it is a directory".into(),
            });
        }
        let conn = Connection::open(path).map_err(|e| DbError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        })?;
        let mut store = SqliteStore {
            conn,
            path: path.to_path_buf(),
            project_id: 0,
        };
        store.configure()?;
        store.migrate()?;
        store.project_id = store.ensure_project(project)?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> DbError {
        map_err(&self.path, e)
    }

    /// Every row, or the first error in the user's words.
    fn collect<T>(
        &self,
        rows: impl Iterator<Item = rusqlite::Result<T>>,
    ) -> Result<Vec<T>, DbError> {
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    fn configure(&mut self) -> Result<(), DbError> {
        self.conn
            .busy_timeout(busy_timeout())
            .map_err(|e| map_err(&self.path, e))?;
        // The first statement that reads the file: a non-database fails here.
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| map_err(&self.path, e))?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(DbError::Open {
                path: self.path.clone(),
                detail: format!("cannot use write-ahead logging (journal mode {mode})"),
            });
        }
        self.conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| map_err(&self.path, e))?;
        let check: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| map_err(&self.path, e))?;
        if check != "ok" {
            return Err(DbError::Corrupt {
                path: self.path.clone(),
                detail: check,
            });
        }
        Ok(())
    }

    fn migrate(&mut self) -> Result<(), DbError> {
        let path = self.path.clone();
        let e = |x| map_err(&path, x);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        tx.execute(BOOTSTRAP, []).map_err(e)?;
        let current: i64 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        if current > LATEST {
            return Err(DbError::Newer {
                path,
                found: current,
                known: LATEST,
            });
        }
        if current == 0 {
            // A database with tables but no migrations is not ours.
            let tables: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name <> 'schema_migrations'",
                    [],
                    |r| r.get(0),
                )
                .map_err(e)?;
            if tables > 0 {
                return Err(DbError::Corrupt {
                    path,
                    detail: "it holds tables but no tardy schema version".into(),
                });
            }
        }
        for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            for stmt in statements(Dialect::Sqlite, sql) {
                tx.execute(&stmt, []).map_err(e)?;
            }
            tx.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                params![version, now_s()],
            )
            .map_err(e)?;
        }
        tx.commit().map_err(e)
    }

    fn ensure_project(&mut self, name: &str) -> Result<i64, DbError> {
        let path = self.path.clone();
        let e = |x| map_err(&path, x);
        self.conn
            .execute(
                "INSERT INTO projects (name) VALUES (?1) ON CONFLICT (name) DO NOTHING",
                params![name],
            )
            .map_err(e)?;
        self.conn
            .query_row(
                "SELECT id FROM projects WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .map_err(e)
    }

    fn series_where(
        &self,
        clause: &str,
        arg: &dyn rusqlite::ToSql,
    ) -> Result<Vec<SeriesInfo>, DbError> {
        let sql = format!(
            "SELECT s.id, s.name, s.metric, s.unit, s.direction, s.kind, s.tags, s.command, s.threshold,
                (SELECT COUNT(*) FROM points p WHERE p.series_id = s.id),
                (SELECT p.value FROM points p WHERE p.series_id = s.id ORDER BY p.t DESC, p.id DESC LIMIT 1),
                (SELECT p.commit_hash FROM points p WHERE p.series_id = s.id ORDER BY p.t DESC, p.id DESC LIMIT 1),
                (SELECT COUNT(*) FROM tests t WHERE t.series_id = s.id),
                (SELECT COUNT(DISTINCT a.id) FROM alert_members m JOIN alerts a ON a.id = m.alert_id
                  WHERE m.series_id = s.id AND a.state = 'open')
             FROM series s WHERE s.project_id = ?1 AND {clause} ORDER BY s.name"
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![self.project_id, arg], |r| {
                let tags: String = r.get(6)?;
                Ok(SeriesInfo {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    metric: r.get(2)?,
                    unit: r.get(3)?,
                    direction: Direction::parse(&r.get::<_, String>(4)?)
                        .unwrap_or(Direction::LowerIsBetter),
                    kind: SeriesKind::parse(&r.get::<_, String>(5)?),
                    tags: serde_json::from_str(&tags).unwrap_or_default(),
                    command: r.get(7)?,
                    threshold: r.get(8)?,
                    points: r.get(9)?,
                    last_value: r.get(10)?,
                    last_commit: r.get(11)?,
                    tests: r.get(12)?,
                    open_alerts: r.get(13)?,
                })
            })
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }

    fn load_alerts(
        &self,
        clause: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Alert>, DbError> {
        let sql = format!(
            "SELECT id, state, from_commit, to_commit, from_time, to_time, branch, environment, created_at
             FROM alerts WHERE project_id = {} AND {clause} ORDER BY id DESC",
            self.project_id
        );
        let mut stmt = self.conn.prepare(&sql).map_err(|e| self.err(e))?;
        let mut alerts = stmt
            .query_map(args, |r| {
                let env: String = r.get(7)?;
                Ok(Alert {
                    id: r.get(0)?,
                    state: AlertState::parse(&r.get::<_, String>(1)?),
                    from_commit: r.get(2)?,
                    to_commit: r.get(3)?,
                    from_time: r.get(4)?,
                    to_time: r.get(5)?,
                    branch: r.get(6)?,
                    environment: serde_json::from_str(&env).unwrap_or_default(),
                    created_at: r.get(8)?,
                    members: Vec::new(),
                })
            })
            .map_err(|e| self.err(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        let mut members = self
            .conn
            .prepare(
                "SELECT m.series_id, s.name, t.name, s.unit, m.point_id, m.prev_point_id, m.mean_before,
                        m.mean_after, m.change, m.pvalue, m.qvalue, m.regression
                 FROM alert_members m JOIN series s ON s.id = m.series_id
                 LEFT JOIN tests t ON t.id = m.test_key
                 WHERE m.alert_id = ?1 ORDER BY ABS(m.change) DESC, s.name, t.name",
            )
            .map_err(|e| self.err(e))?;
        for a in &mut alerts {
            a.members = members
                .query_map(params![a.id], |r| {
                    Ok(AlertMember {
                        series_id: r.get(0)?,
                        series: r.get(1)?,
                        test: r.get(2)?,
                        unit: r.get(3)?,
                        point_id: r.get(4)?,
                        prev_point_id: r.get(5)?,
                        mean_before: r.get(6)?,
                        mean_after: r.get(7)?,
                        change: r.get(8)?,
                        pvalue: r.get(9)?,
                        qvalue: r.get(10)?,
                        regression: r.get::<_, i64>(11)? != 0,
                    })
                })
                .map_err(|e| self.err(e))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| self.err(e))?;
        }
        Ok(alerts)
    }
}

/// Name SQLite's failures the way a user can act on them.
fn map_err(path: &Path, e: rusqlite::Error) -> DbError {
    if let rusqlite::Error::SqliteFailure(f, msg) = &e {
        match f.code {
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => {
                return DbError::Corrupt {
                    path: path.to_path_buf(),
                    detail: msg.clone().unwrap_or_else(|| f.to_string()),
                };
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
                return DbError::Locked {
                    path: path.to_path_buf(),
                    waited_s: busy_timeout().as_secs_f64(),
                };
            }
            _ => {}
        }
    }
    DbError::Sql {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// A fingerprint without the fields that change from run to run (load,
/// free memory, steal and throttling counters), and its hash for dedup.
fn stable_fingerprint(fp: &Fingerprint) -> (String, String) {
    let mut fp = fp.clone();
    fp.load_avg_before = None;
    fp.load_avg_after = None;
    fp.memory_available_bytes = None;
    fp.steal_ticks = None;
    fp.cgroup_throttling = None;
    let body = serde_json::to_string(&fp).unwrap_or_default();
    // FNV-1a 64: stable across versions and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in body.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (format!("{h:016x}-{}", body.len()), body)
}

fn point_from_row(r: &rusqlite::Row) -> rusqlite::Result<Point> {
    Ok(Point {
        id: r.get(0)?,
        commit: r.get(1)?,
        branch: r.get(2)?,
        commit_time: r.get(3)?,
        run_time: r.get(4)?,
        fingerprint_id: r.get(5)?,
        value: r.get(6)?,
        n: r.get(7)?,
    })
}

impl History for SqliteStore {
    fn save(&mut self, batches: &[Batch]) -> Result<Vec<Vec<i64>>, DbError> {
        let path = self.path.clone();
        let e = |x| map_err(&path, x);
        let project = self.project_id;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        let mut out = Vec::new();
        let mut fingerprints: HashMap<String, i64> = HashMap::new();
        for batch in batches {
            let s = &batch.spec;
            if s.name.trim().is_empty() {
                return Err(DbError::Invalid("a series needs a name".into()));
            }
            let tags = serde_json::to_string(&s.tags).unwrap_or_else(|_| "{}".into());
            tx.execute(
                "INSERT INTO series (project_id, name, metric, unit, direction, kind, tags, command, threshold)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (project_id, name) DO UPDATE SET
                   command = COALESCE(excluded.command, series.command),
                   threshold = COALESCE(excluded.threshold, series.threshold)",
                params![
                    project,
                    s.name,
                    s.metric,
                    s.unit,
                    s.direction.as_str(),
                    s.kind.as_str(),
                    tags,
                    s.command,
                    s.threshold
                ],
            )
            .map_err(e)?;
            let series_id: i64 = tx
                .query_row(
                    "SELECT id FROM series WHERE project_id = ?1 AND name = ?2",
                    params![project, s.name],
                    |r| r.get(0),
                )
                .map_err(e)?;
            let mut ids = Vec::with_capacity(batch.points.len());
            let mut insert_point = tx
                .prepare_cached(
                    "INSERT INTO points (series_id, commit_hash, branch, commit_time, run_time, t, fingerprint_id, value, n)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
                )
                .map_err(e)?;
            let mut insert_sample = tx
                .prepare_cached("INSERT INTO samples (point_id, seq, value) VALUES (?1, ?2, ?3)")
                .map_err(e)?;
            let mut insert_test = tx
                .prepare_cached(
                    "INSERT INTO tests (series_id, name) VALUES (?1, ?2) ON CONFLICT (series_id, name) DO NOTHING",
                )
                .map_err(e)?;
            let mut find_test = tx
                .prepare_cached("SELECT id FROM tests WHERE series_id = ?1 AND name = ?2")
                .map_err(e)?;
            let mut insert_result = tx
                .prepare_cached(
                    "INSERT INTO test_results (test_id, point_id, duration, status) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (test_id, point_id) DO UPDATE SET duration = excluded.duration",
                )
                .map_err(e)?;
            let mut test_ids: HashMap<String, i64> = HashMap::new();
            for p in &batch.points {
                if !p.value.is_finite() {
                    return Err(DbError::Invalid(format!(
                        "series '{}': value {} is not a finite number",
                        s.name, p.value
                    )));
                }
                let fp_id = match &p.fingerprint {
                    None => None,
                    Some(fp) => {
                        let (hash, body) = stable_fingerprint(fp);
                        match fingerprints.get(&hash) {
                            Some(&id) => Some(id),
                            None => {
                                tx.execute(
                                    "INSERT INTO fingerprints (hash, body) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING",
                                    params![hash, body],
                                )
                                .map_err(e)?;
                                let id: i64 = tx
                                    .query_row(
                                        "SELECT id FROM fingerprints WHERE hash = ?1",
                                        params![hash],
                                        |r| r.get(0),
                                    )
                                    .map_err(e)?;
                                fingerprints.insert(hash, id);
                                Some(id)
                            }
                        }
                    }
                };
                let pv = &p.provenance;
                let t = pv.commit_time.unwrap_or(pv.run_time);
                let id: i64 = insert_point
                    .query_row(
                        params![
                            series_id,
                            pv.commit,
                            pv.branch,
                            pv.commit_time,
                            pv.run_time,
                            t,
                            fp_id,
                            p.value,
                            p.samples.len() as i64
                        ],
                        |r| r.get(0),
                    )
                    .map_err(e)?;
                for (seq, v) in p.samples.iter().enumerate() {
                    insert_sample
                        .execute(params![id, seq as i64, v])
                        .map_err(e)?;
                }
                for test in &p.tests {
                    let test_id = match test_ids.get(&test.name) {
                        Some(&t) => t,
                        None => {
                            insert_test
                                .execute(params![series_id, test.name])
                                .map_err(e)?;
                            let t: i64 = find_test
                                .query_row(params![series_id, test.name], |r| r.get(0))
                                .map_err(e)?;
                            test_ids.insert(test.name.clone(), t);
                            t
                        }
                    };
                    insert_result
                        .execute(params![test_id, id, test.duration, test.status])
                        .map_err(e)?;
                }
                ids.push(id);
            }
            out.push(ids);
        }
        tx.commit().map_err(e)?;
        Ok(out)
    }

    fn list(&self) -> Result<Vec<SeriesInfo>, DbError> {
        self.series_where("1 = ?2", &1)
    }

    fn series(&self, name: &str) -> Result<Option<SeriesInfo>, DbError> {
        Ok(self.series_where("s.name = ?2", &name)?.into_iter().next())
    }

    fn points(&self, series_id: i64, filter: &PointFilter) -> Result<Vec<Point>, DbError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT p.id, p.commit_hash, p.branch, p.commit_time, p.run_time, p.fingerprint_id, p.value, p.n
                 FROM points p WHERE p.series_id = ?1 AND (?2 IS NULL OR p.branch = ?2)
                   AND (?3 IS NULL OR p.t >= ?3)
                 ORDER BY p.t, p.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(
                params![series_id, filter.branch, filter.since],
                point_from_row,
            )
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }

    fn samples(&self, point_id: i64) -> Result<Vec<f64>, DbError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT value FROM samples WHERE point_id = ?1 ORDER BY seq")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![point_id], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }

    fn tests(&self, series_id: i64) -> Result<Vec<TestId>, DbError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, name FROM tests WHERE series_id = ?1 ORDER BY name")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![series_id], |r| {
                Ok(TestId {
                    id: r.get(0)?,
                    name: r.get(1)?,
                })
            })
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }

    fn for_each_test(
        &self,
        series_id: i64,
        filter: &PointFilter,
        f: &mut super::db::TestVisitor<'_>,
    ) -> Result<(), DbError> {
        let sql = "SELECT p.id, p.commit_hash, p.branch, p.commit_time, p.run_time, p.fingerprint_id, r.duration, 1,
                    t.id, t.name
             FROM tests t JOIN test_results r ON r.test_id = t.id JOIN points p ON p.id = r.point_id
             WHERE t.series_id = ?1 AND (?2 IS NULL OR p.branch = ?2) AND (?3 IS NULL OR p.t >= ?3)
             ORDER BY t.id, p.t, p.id";
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query(params![series_id, filter.branch, filter.since])
            .map_err(|e| self.err(e))?;
        let mut current: Option<TestId> = None;
        let mut points: Vec<Point> = Vec::new();
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let test = TestId {
                id: row.get(8).map_err(|e| self.err(e))?,
                name: row.get(9).map_err(|e| self.err(e))?,
            };
            if current.as_ref().is_some_and(|c| c.id != test.id) {
                if let Some(c) = current.take() {
                    f(&c, &points)?;
                }
                points.clear();
            }
            if current.is_none() {
                current = Some(test);
            }
            points.push(point_from_row(row).map_err(|e| self.err(e))?);
        }
        if let Some(c) = current {
            f(&c, &points)?;
        }
        Ok(())
    }

    fn fingerprint(&self, id: i64) -> Result<Option<Fingerprint>, DbError> {
        let body: Option<String> = self
            .conn
            .query_row(
                "SELECT body FROM fingerprints WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(body.and_then(|b| serde_json::from_str(&b).ok()))
    }

    fn detection(&self, key: &DetectionKey) -> Result<Option<DetectionState>, DbError> {
        let state: Option<String> = self
            .conn
            .query_row(
                "SELECT state FROM detections WHERE series_id = ?1 AND test_key = ?2 AND scope = ?3",
                params![key.series_id, key.test_key, key.scope],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        Ok(state.and_then(|s| serde_json::from_str(&s).ok()))
    }

    fn alerted_points(&self, series_id: i64) -> Result<Vec<(i64, i64)>, DbError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT test_key, point_id FROM alert_members WHERE series_id = ?1")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map(params![series_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }

    fn commit_detection(
        &mut self,
        states: &[(DetectionKey, DetectionState)],
        alerts: &[Alert],
    ) -> Result<Vec<i64>, DbError> {
        let path = self.path.clone();
        let e = |x| map_err(&path, x);
        let project = self.project_id;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(e)?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT INTO detections (series_id, test_key, scope, state) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (series_id, test_key, scope) DO UPDATE SET state = excluded.state",
                )
                .map_err(e)?;
            for (key, state) in states {
                let body = serde_json::to_string(state).unwrap_or_default();
                put.execute(params![key.series_id, key.test_key, key.scope, body])
                    .map_err(e)?;
            }
        }
        let mut ids = Vec::new();
        let mut test_keys: HashMap<(i64, String), i64> = HashMap::new();
        for a in alerts {
            let env = serde_json::to_string(&a.environment).unwrap_or_else(|_| "[]".into());
            let id: i64 = tx
                .query_row(
                    "INSERT INTO alerts (project_id, state, from_commit, to_commit, from_time, to_time, branch, environment, created_at)
                     VALUES (?1, 'open', ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
                    params![project, a.from_commit, a.to_commit, a.from_time, a.to_time, a.branch, env, now_s()],
                    |r| r.get(0),
                )
                .map_err(e)?;
            let mut inserted = 0;
            for m in &a.members {
                let test_key = match &m.test {
                    None => 0,
                    Some(name) => match test_keys.get(&(m.series_id, name.clone())) {
                        Some(&k) => k,
                        None => {
                            let k: i64 = tx
                                .query_row(
                                    "SELECT id FROM tests WHERE series_id = ?1 AND name = ?2",
                                    params![m.series_id, name],
                                    |r| r.get(0),
                                )
                                .map_err(e)?;
                            test_keys.insert((m.series_id, name.clone()), k);
                            k
                        }
                    },
                };
                inserted += tx
                    .execute(
                        "INSERT INTO alert_members (alert_id, series_id, test_key, point_id, prev_point_id,
                           mean_before, mean_after, change, pvalue, qvalue, regression)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                         ON CONFLICT (series_id, test_key, point_id) DO NOTHING",
                        params![
                            id,
                            m.series_id,
                            test_key,
                            m.point_id,
                            m.prev_point_id,
                            m.mean_before,
                            m.mean_after,
                            m.change,
                            m.pvalue,
                            m.qvalue,
                            m.regression as i64
                        ],
                    )
                    .map_err(e)?;
            }
            if inserted == 0 {
                // Another process alerted on every one of these meanwhile.
                tx.execute("DELETE FROM alerts WHERE id = ?1", params![id])
                    .map_err(e)?;
            } else {
                ids.push(id);
            }
        }
        tx.commit().map_err(e)?;
        Ok(ids)
    }

    fn alerts(&self, states: &[AlertState]) -> Result<Vec<Alert>, DbError> {
        let list: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
        self.load_alerts(&format!("state IN ({})", list.join(", ")), &[])
    }

    fn alert(&self, id: i64) -> Result<Option<Alert>, DbError> {
        Ok(self.load_alerts("id = ?1", &[&id])?.into_iter().next())
    }

    fn set_alert_state(&mut self, id: i64, state: AlertState) -> Result<(), DbError> {
        let n = self
            .conn
            .execute(
                "UPDATE alerts SET state = ?1 WHERE id = ?2 AND project_id = ?3",
                params![state.as_str(), id, self.project_id],
            )
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(DbError::NoAlert(id));
        }
        Ok(())
    }

    fn annotate(
        &mut self,
        series: Option<&str>,
        from_commit: &str,
        to_commit: Option<&str>,
        text: &str,
    ) -> Result<i64, DbError> {
        let series_id = match series {
            None => None,
            Some(name) => Some(
                self.series(name)?
                    .ok_or_else(|| DbError::NoSeries(name.to_string()))?
                    .id,
            ),
        };
        self.conn
            .query_row(
                "INSERT INTO annotations (series_id, from_commit, to_commit, body, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                params![series_id, from_commit, to_commit, text, now_s()],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    fn annotations(&self) -> Result<Vec<Annotation>, DbError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT a.id, s.name, a.from_commit, a.to_commit, a.body, a.created_at
                 FROM annotations a LEFT JOIN series s ON s.id = a.series_id ORDER BY a.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Annotation {
                    id: r.get(0)?,
                    series: r.get(1)?,
                    from_commit: r.get(2)?,
                    to_commit: r.get(3)?,
                    text: r.get(4)?,
                    created_at: r.get(5)?,
                })
            })
            .map_err(|e| self.err(e))?;
        self.collect(rows)
    }
}

/// Tags from "k=v" pairs.
pub fn parse_tags(pairs: &[String]) -> Result<BTreeMap<String, String>, DbError> {
    let mut out = BTreeMap::new();
    for p in pairs {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| DbError::Invalid(format!("tag '{p}' should be KEY=VALUE")))?;
        out.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::history::{NewPoint, Provenance, SeriesSpec, TestResult};

    fn point(commit: &str, t: i64, v: f64) -> NewPoint {
        NewPoint {
            provenance: Provenance {
                commit: Some(commit.into()),
                branch: Some("main".into()),
                commit_time: Some(t),
                run_time: t + 5,
            },
            fingerprint: None,
            value: v,
            samples: vec![v, v * 1.01],
            tests: vec![TestResult {
                name: "a::b".into(),
                duration: v / 2.0,
                status: "passed".into(),
            }],
        }
    }

    #[test]
    fn save_list_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.db");
        let mut db = SqliteStore::open(&path, "p").unwrap();
        let mut spec = SeriesSpec::new("suite", "suite", "s");
        spec.kind = SeriesKind::Suite;
        let ids = db
            .save(&[Batch {
                spec: spec.clone(),
                points: vec![point("b", 20, 2.0), point("a", 10, 1.0)],
            }])
            .unwrap();
        assert_eq!(ids[0].len(), 2);
        let info = db.series("suite").unwrap().unwrap();
        assert_eq!((info.points, info.tests), (2, 1));
        assert_eq!(info.last_value, Some(2.0));
        let pts = db.points(info.id, &PointFilter::default()).unwrap();
        assert_eq!(pts[0].commit.as_deref(), Some("a"));
        assert_eq!(db.samples(pts[0].id).unwrap(), vec![1.0, 1.01]);
        let mut seen = Vec::new();
        db.for_each_test(info.id, &PointFilter::default(), &mut |t, p| {
            seen.push((
                t.name.clone(),
                p.iter().map(|x| x.value).collect::<Vec<_>>(),
            ));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![("a::b".to_string(), vec![0.5, 1.0])]);
        let since = db
            .points(
                info.id,
                &PointFilter {
                    branch: Some("main".into()),
                    since: Some(15),
                },
            )
            .unwrap();
        assert_eq!(since.len(), 1);
        drop(db);
        // Reopening applies no migration twice.
        let db = SqliteStore::open(&path, "p").unwrap();
        assert_eq!(db.list().unwrap().len(), 1);
    }

    #[test]
    fn a_bad_value_rolls_the_whole_batch_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = SqliteStore::open(&dir.path().join("h.db"), "p").unwrap();
        let spec = SeriesSpec::new("x", "wall", "s");
        let err = db.save(&[Batch {
            spec,
            points: vec![point("a", 1, 1.0), point("b", 2, f64::NAN)],
        }]);
        assert!(err.is_err());
        assert!(db.list().unwrap().is_empty());
    }
}
