//! The history store written once over [`Conn`]: every query of
//! [`History`] in SQL that SQLite and PostgreSQL both run, so the two
//! backends hold the same data the same way.

use std::collections::HashMap;

use super::db::{
    Batch, DbError, DetectionKey, History, TestId, TestVisitor, TestWindow, VectorVisitor,
};
use super::history::{
    Alert, AlertMark, AlertMember, AlertState, Annotation, Boundary, DetectionState, Direction,
    MachineInfo, Point, PointFilter, SeriesInfo, SeriesKind, SeriesOrder, Upload, UploadInfo,
    UploadOutcome, alert_kind, boundary_span, joint_boundary, now_s,
};
use super::ids::{IdsByName, Learned, TestIds};
use super::schema::{BOOTSTRAP, Dialect, LATEST, MIGRATIONS, statements};
use super::sql::{Conn, Row, Value};
use super::vector;
use crate::probe::Fingerprint;
use crate::sql_args;
use std::sync::Arc;

/// A history store on one connection, for one project.
pub struct SqlStore<C: Conn> {
    conn: C,
    project_id: i64,
    /// Test ids already known, shared with the server's other stores.
    ids: Option<Arc<TestIds>>,
}

const POINT_COLUMNS: &str =
    "p.id, p.commit_hash, p.branch, p.commit_time, p.run_time, p.fingerprint_id, p.value, p.n";

fn point_from_row(r: &Row) -> Result<Point, DbError> {
    Ok(Point {
        id: r.i64(0)?,
        commit: r.opt_text(1)?,
        branch: r.opt_text(2)?,
        commit_time: r.opt_i64(3)?,
        run_time: r.i64(4)?,
        fingerprint_id: r.opt_i64(5)?,
        value: r.f64(6)?,
        n: r.i64(7)?,
    })
}

/// The advisory lock (plus the project id) PostgreSQL detections of one
/// project take turns on.
const ALERT_LOCK: i64 = 7_355_609 << 20;

/// A stored boundary (JSON); none when absent or unreadable (alerts from
/// before boundaries were kept).
fn parse_boundary(text: Option<String>) -> Vec<Boundary> {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

impl<C: Conn> SqlStore<C> {
    /// Migrate the database on `conn` and select (creating) `project`.
    /// `place` names the database in errors.
    pub fn new(conn: C, project: &str, place: &std::path::Path) -> Result<SqlStore<C>, DbError> {
        let mut store = SqlStore {
            conn,
            project_id: 0,
            ids: None,
        };
        store.migrate(place)?;
        store.project_id = store.ensure_project(project)?;
        Ok(store)
    }

    pub fn conn(&self) -> &C {
        &self.conn
    }

    /// What a committed transaction learned, kept for the next save.
    fn remember(&self, learned: Learned) {
        if let Some(ids) = &self.ids {
            ids.remember(learned);
        }
    }

    /// Look test ids up in `ids` first, and remember there those each
    /// committed save finds or makes (a server's pool shares one).
    pub fn sharing_test_ids(mut self, ids: Arc<TestIds>) -> SqlStore<C> {
        self.ids = Some(ids);
        self
    }

    fn migrate(&mut self, place: &std::path::Path) -> Result<(), DbError> {
        let dialect = self.conn.dialect();
        self.conn.transaction(|c| {
            if dialect == Dialect::Postgres {
                // Servers starting together migrate one after another.
                c.query("SELECT pg_advisory_xact_lock(7355608)", &[])?;
            }
            c.execute(BOOTSTRAP, &[])?;
            let current = c
                .query_one(
                    "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                    &[],
                )?
                .i64(0)?;
            if current > LATEST {
                return Err(DbError::Newer {
                    path: place.to_path_buf(),
                    found: current,
                    known: LATEST,
                });
            }
            if current == 0 {
                // A database with tables but no migrations is not ours.
                let sql = match dialect {
                    Dialect::Sqlite => {
                        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name <> 'schema_migrations'"
                    }
                    Dialect::Postgres => {
                        "SELECT COUNT(*) FROM information_schema.tables
                         WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'"
                    }
                };
                if c.query_one(sql, &[])?.i64(0)? > 0 {
                    return Err(DbError::Corrupt {
                        path: place.to_path_buf(),
                        detail: "it holds tables but no tardy schema version".into(),
                    });
                }
            }
            for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
                for stmt in statements(dialect, sql) {
                    c.execute(&stmt, &[])?;
                }
                c.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
                    sql_args!(*version, now_s()),
                )?;
            }
            Ok(())
        })
    }

    fn ensure_project(&mut self, name: &str) -> Result<i64, DbError> {
        self.conn.execute(
            "INSERT INTO projects (name) VALUES (?1) ON CONFLICT (name) DO NOTHING",
            sql_args!(name),
        )?;
        self.conn
            .query_one("SELECT id FROM projects WHERE name = ?1", sql_args!(name))?
            .i64(0)
    }

    fn series_where(&self, clause: &str, arg: Value) -> Result<Vec<SeriesInfo>, DbError> {
        self.series_query(
            &format!("s.project_id = ?1 AND {clause} ORDER BY s.name"),
            &[Value::Int(self.project_id), arg],
        )
    }

    /// Series rows: the page's ids chosen first (`FROM series s WHERE
    /// ...`), their counts computed for those rows only.
    fn series_query(&self, tail: &str, args: &[Value]) -> Result<Vec<SeriesInfo>, DbError> {
        let sql = format!(
            "SELECT s.id, s.name, s.metric, s.unit, s.direction, s.kind, s.tags, s.command, s.threshold,
                s.options,
                (SELECT COUNT(*) FROM points p WHERE p.series_id = s.id),
                (SELECT p.value FROM points p WHERE p.series_id = s.id ORDER BY p.t DESC, p.id DESC LIMIT 1),
                (SELECT p.commit_hash FROM points p WHERE p.series_id = s.id ORDER BY p.t DESC, p.id DESC LIMIT 1),
                (SELECT COUNT(*) FROM tests t WHERE t.series_id = s.id),
                (SELECT COUNT(DISTINCT a.id) FROM alert_members m JOIN alerts a ON a.id = m.alert_id
                  WHERE m.series_id = s.id AND a.state = 'open')
             FROM series s WHERE {tail}"
        );
        let rows = self.conn.query(&sql, args)?;
        rows.iter()
            .map(|r| {
                Ok(SeriesInfo {
                    id: r.i64(0)?,
                    name: r.text(1)?,
                    metric: r.text(2)?,
                    unit: r.text(3)?,
                    direction: Direction::parse(&r.text(4)?).unwrap_or(Direction::LowerIsBetter),
                    kind: SeriesKind::parse(&r.text(5)?),
                    tags: serde_json::from_str(&r.text(6)?).unwrap_or_default(),
                    command: r.opt_text(7)?,
                    threshold: r.opt_f64(8)?,
                    options: r
                        .opt_text(9)?
                        .and_then(|t| serde_json::from_str(&t).ok())
                        .unwrap_or_default(),
                    points: r.i64(10)?,
                    last_value: r.opt_f64(11)?,
                    last_commit: r.opt_text(12)?,
                    tests: r.i64(13)?,
                    open_alerts: r.i64(14)?,
                })
            })
            .collect()
    }

    fn load_alerts(&self, clause: &str, args: &[Value]) -> Result<Vec<Alert>, DbError> {
        self.load_alerts_of(clause, args, None)
    }

    /// Alerts matching `clause`, each with its members, or with only its
    /// members on `series` when given.
    fn load_alerts_of(
        &self,
        clause: &str,
        args: &[Value],
        series: Option<i64>,
    ) -> Result<Vec<Alert>, DbError> {
        let sql = format!(
            "SELECT id, state, from_commit, to_commit, from_time, to_time, branch, environment, created_at, boundary, reason
             FROM alerts WHERE project_id = {} AND {clause} ORDER BY id DESC",
            self.project_id
        );
        let mut alerts = Vec::new();
        for r in self.conn.query(&sql, args)? {
            alerts.push(Alert {
                id: r.i64(0)?,
                state: AlertState::parse(&r.text(1)?),
                from_commit: r.opt_text(2)?,
                to_commit: r.opt_text(3)?,
                from_time: r.i64(4)?,
                to_time: r.i64(5)?,
                branch: r.opt_text(6)?,
                environment: serde_json::from_str(&r.text(7)?).unwrap_or_default(),
                created_at: r.i64(8)?,
                members: Vec::new(),
                boundary: parse_boundary(r.opt_text(9)?),
                reason: r.opt_text(10)?,
            });
        }
        for a in &mut alerts {
            let rows = self.conn.query(
                "SELECT m.series_id, s.name, t.name, s.unit, m.point_id, m.prev_point_id, m.mean_before,
                        m.mean_after, m.change, m.pvalue, m.qvalue, m.regression, m.boundary
                 FROM alert_members m JOIN series s ON s.id = m.series_id
                 LEFT JOIN tests t ON t.id = m.test_key
                 WHERE m.alert_id = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR m.series_id = ?2)
                 ORDER BY ABS(m.change) DESC, s.name, t.name",
                sql_args!(a.id, series),
            )?;
            a.members = rows
                .iter()
                .map(|r| {
                    Ok(AlertMember {
                        series_id: r.i64(0)?,
                        series: r.text(1)?,
                        test: r.opt_text(2)?,
                        unit: r.text(3)?,
                        point_id: r.i64(4)?,
                        prev_point_id: r.i64(5)?,
                        mean_before: r.f64(6)?,
                        mean_after: r.f64(7)?,
                        change: r.f64(8)?,
                        pvalue: r.f64(9)?,
                        qvalue: r.f64(10)?,
                        regression: r.i64(11)? != 0,
                        boundary: parse_boundary(r.opt_text(12)?),
                    })
                })
                .collect::<Result<_, DbError>>()?;
        }
        Ok(alerts)
    }

    /// The batches' rows, inside the caller's transaction.
    /// Recompute an alert's boundary from all its members (one that joined
    /// may move or sharpen it), and its range to span the places.
    fn rejoin_boundary(c: &C, alert: i64) -> Result<(), DbError> {
        let mut members: Vec<AlertMember> = Vec::new();
        c.query_each(
            "SELECT change, boundary FROM alert_members WHERE alert_id = ?1",
            sql_args!(alert),
            &mut |r| {
                members.push(AlertMember {
                    series_id: 0,
                    series: String::new(),
                    test: None,
                    unit: String::new(),
                    point_id: 0,
                    prev_point_id: 0,
                    mean_before: 0.0,
                    mean_after: 0.0,
                    change: r.f64(0)?,
                    pvalue: 1.0,
                    qvalue: 1.0,
                    regression: false,
                    boundary: parse_boundary(r.opt_text(1)?),
                });
                Ok(())
            },
        )?;
        let joint = joint_boundary(&members);
        let Some((from_commit, to_commit, from_time, to_time)) = boundary_span(&joint) else {
            return Ok(());
        };
        c.execute(
            "UPDATE alerts SET boundary = ?1, from_commit = ?2, to_commit = ?3, from_time = ?4, to_time = ?5
             WHERE id = ?6",
            sql_args!(
                serde_json::to_string(&joint).unwrap_or_else(|_| "[]".into()),
                &from_commit,
                &to_commit,
                from_time,
                to_time,
                alert
            ),
        )?;
        Ok(())
    }

    /// Every test of a suite, in id order.
    fn tests_by_id(&self, series_id: i64) -> Result<Vec<TestId>, DbError> {
        Self::tests_of(&self.conn, series_id)
    }

    fn tests_of(c: &C, series_id: i64) -> Result<Vec<TestId>, DbError> {
        let mut tests: Vec<TestId> = Vec::new();
        c.query_each(
            "SELECT id, name FROM tests WHERE series_id = ?1 ORDER BY id",
            sql_args!(series_id),
            &mut |r| {
                tests.push(TestId {
                    id: r.i64(0)?,
                    name: r.text(1)?,
                });
                Ok(())
            },
        )?;
        Ok(tests)
    }

    /// The durations of `tests` (in id order) at `pts`: row t, column i at
    /// `t * pts.len() + i`, NaN where the test did not run.
    fn durations(&self, pts: &[Point], tests: &[TestId]) -> Result<Vec<f32>, DbError> {
        let n = pts.len();
        let mut values = vec![f32::NAN; tests.len() * n];
        if n == 0 || tests.is_empty() {
            return Ok(values);
        }
        let (first, last) = (tests[0].id, tests[tests.len() - 1].id);
        self.vectors(pts, &mut |col, entries| {
            // Entries and tests are both in id order: one merge.
            let start = entries.partition_point(|e| e.0 < first);
            let mut row = 0;
            for &(id, d) in &entries[start..] {
                if id > last {
                    break;
                }
                while tests[row].id < id {
                    row += 1;
                }
                if tests[row].id == id {
                    values[row * n + col] = d;
                }
            }
            Ok(())
        })?;
        Ok(values)
    }

    /// Each point's `(test id, duration)` pairs, in id order: one row per
    /// point. Points stored before vectors existed are read from their rows
    /// once and given one.
    fn vectors(&self, pts: &[Point], f: &mut VectorVisitor<'_>) -> Result<(), DbError> {
        let n = pts.len();
        if n == 0 {
            return Ok(());
        }
        let column: HashMap<i64, usize> = pts.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
        let mut have = vec![false; n];
        for chunk in pts.chunks(500) {
            let placeholders: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
            let ids: Vec<Value> = chunk.iter().map(|p| Value::from(p.id)).collect();
            self.conn.query_each(
                &format!(
                    "SELECT point_id, body FROM test_vectors WHERE point_id IN ({})",
                    placeholders.join(", ")
                ),
                &ids,
                &mut |r| {
                    let id = r.i64(0)?;
                    let body = r.text(1)?;
                    if let (Some(&col), Some(entries)) = (column.get(&id), vector::decode(&body)) {
                        have[col] = true;
                        f(col, &entries)?;
                    }
                    Ok(())
                },
            )?;
        }
        for (col, p) in pts.iter().enumerate() {
            if have[col] {
                continue;
            }
            let mut entries: Vec<(i64, f64)> = Vec::new();
            self.conn.query_each(
                "SELECT test_id, duration FROM test_results WHERE point_id = ?1",
                sql_args!(p.id),
                &mut |r| {
                    entries.push((r.i64(0)?, r.f64(1)?));
                    Ok(())
                },
            )?;
            let body = vector::encode(&entries);
            if let Some(decoded) = vector::decode(&body)
                && !decoded.is_empty()
            {
                f(col, &decoded)?;
            }
            self.conn.execute(
                "INSERT INTO test_vectors (point_id, body) VALUES (?1, ?2) ON CONFLICT (point_id) DO NOTHING",
                sql_args!(p.id, body),
            )?;
        }
        Ok(())
    }

    /// The ids of every test a batch names, the new ones inserted many per
    /// statement (one statement per test held a 100,000-test upload to
    /// PostgreSQL's round trips).
    fn test_ids<'b>(
        c: &C,
        series_id: i64,
        batch: &'b Batch,
        known: Option<&TestIds>,
        learned: &mut Learned,
    ) -> Result<IdsByName<'b>, DbError> {
        let mut names: Vec<&str> = batch
            .points
            .iter()
            .flat_map(|p| p.tests.iter().map(|t| t.name.as_str()))
            .collect();
        if names.is_empty() {
            return Ok(IdsByName::default());
        }
        names.sort_unstable();
        names.dedup();
        // The ids of the batch's own names, looked up and inserted 500 at a
        // time (a series' every test name was read into a map, and read
        // again after inserting: a million names held twice).
        let mut out = IdsByName::with_capacity_and_hasher(names.len(), Default::default());
        if let Some(k) = known {
            k.known(series_id, &names, &mut out);
            if out.len() == names.len() {
                return Ok(out);
            }
        }
        let cached = out.len();
        let take = |rows: &[crate::store::sql::Row],
                    chunk: &[&'b str],
                    out: &mut IdsByName<'b>|
         -> Result<(), DbError> {
            for r in rows {
                let name = r.text(1)?;
                if let Ok(i) = chunk.binary_search(&name.as_str()) {
                    out.insert(chunk[i], r.i64(0)?);
                }
            }
            Ok(())
        };
        let lookup = |chunk: &[&'b str], out: &mut IdsByName<'b>| -> Result<(), DbError> {
            let marks: Vec<String> = (0..chunk.len()).map(|i| format!("?{}", i + 2)).collect();
            let mut args: Vec<Value> = Vec::with_capacity(chunk.len() + 1);
            args.push(Value::Int(series_id));
            for n in chunk {
                args.push(Value::from(*n));
            }
            let rows = c.query(
                &format!(
                    "SELECT id, name FROM tests WHERE series_id = ?1 AND name IN ({})",
                    marks.join(", ")
                ),
                &args,
            )?;
            take(&rows, chunk, out)
        };
        let filtered: Vec<&'b str>;
        let unknown: &[&'b str] = if cached == 0 {
            &names
        } else {
            filtered = names
                .iter()
                .copied()
                .filter(|n| !out.contains_key(n))
                .collect();
            &filtered
        };
        for chunk in unknown.chunks(500) {
            over_budget()?;
            lookup(chunk, &mut out)?;
        }
        let missing: Vec<&'b str> = unknown
            .iter()
            .copied()
            .filter(|n| !out.contains_key(n))
            .collect();
        for chunk in missing.chunks(500) {
            over_budget()?;
            let mut args: Vec<Value> = Vec::with_capacity(chunk.len() * 2);
            let rows: Vec<String> = (0..chunk.len())
                .map(|r| format!("(?{}, ?{})", 2 * r + 1, 2 * r + 2))
                .collect();
            for n in chunk {
                args.extend_from_slice(sql_args!(series_id, *n));
            }
            let inserted = c.query(
                &format!(
                    "INSERT INTO tests (series_id, name) VALUES {} ON CONFLICT (series_id, name) DO NOTHING RETURNING id, name",
                    rows.join(", ")
                ),
                &args,
            )?;
            take(&inserted, chunk, &mut out)?;
            // Names another writer stored meanwhile: their ids.
            if chunk.iter().any(|n| !out.contains_key(n)) {
                lookup(chunk, &mut out)?;
            }
        }
        if let Some(n) = names.iter().find(|n| !out.contains_key(*n)) {
            return Err(DbError::Invalid(format!(
                "internal: test '{n}' was not stored"
            )));
        }
        if known.is_some() {
            for n in unknown {
                if let Some(id) = out.get(n) {
                    learned.push(series_id, n, *id);
                }
            }
        }
        Ok(out)
    }

    fn insert_batches(
        c: &C,
        project: i64,
        batches: &[Batch],
        known: Option<&TestIds>,
        learned: &mut Learned,
    ) -> Result<Vec<Vec<i64>>, DbError> {
        let mut out = vec![Vec::new(); batches.len()];
        let mut fingerprints: HashMap<String, i64> = HashMap::new();
        // Series in name order, so concurrent writers lock rows in one order
        // (PostgreSQL would otherwise find deadlocks between two uploads).
        let mut order: Vec<usize> = (0..batches.len()).collect();
        order.sort_by(|&a, &b| batches[a].spec.name.cmp(&batches[b].spec.name));
        for index in order {
            let batch = &batches[index];
            let s = &batch.spec;
            if s.name.trim().is_empty() {
                return Err(DbError::Invalid("a series needs a name".into()));
            }
            let tags = serde_json::to_string(&s.tags).unwrap_or_else(|_| "{}".into());
            c.execute(
                "INSERT INTO series (project_id, name, metric, unit, direction, kind, tags, command, threshold, options)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (project_id, name) DO UPDATE SET
                   command = COALESCE(excluded.command, series.command),
                   threshold = COALESCE(excluded.threshold, series.threshold),
                   options = CASE WHEN excluded.command IS NULL THEN series.options ELSE excluded.options END",
                sql_args!(
                    project,
                    &s.name,
                    &s.metric,
                    &s.unit,
                    s.direction.as_str(),
                    s.kind.as_str(),
                    tags,
                    &s.command,
                    s.threshold,
                    s.command
                        .as_ref()
                        .map(|_| serde_json::to_string(&s.options).unwrap_or_else(|_| "[]".into()))
                ),
            )?;
            let series_id = c
                .query_one(
                    "SELECT id FROM series WHERE project_id = ?1 AND name = ?2",
                    sql_args!(project, &s.name),
                )?
                .i64(0)?;
            let mut ids = Vec::with_capacity(batch.points.len());
            let test_ids = Self::test_ids(c, series_id, batch, known, learned)?;
            let mut by_ptr: HashMap<*const crate::probe::Fingerprint, i64> = HashMap::new();
            // Points go in by multi-row INSERTs of CHUNK rows (one statement per row
            // held PostgreSQL to ~10k points/s); their ids come back sorted, since
            // a statement takes its ids in the order of its VALUES.
            const CHUNK: usize = 500;
            for chunk in batch.points.chunks(CHUNK) {
                over_budget()?;
                let mut args: Vec<Value> = Vec::with_capacity(chunk.len() * 9);
                for p in chunk {
                    if !p.value.is_finite() {
                        return Err(DbError::Invalid(format!(
                            "series '{}': value {} is not a finite number",
                            s.name, p.value
                        )));
                    }
                    let fp_id = match &p.fingerprint {
                        None => None,
                        // The points of an upload share one fingerprint: hashed once.
                        Some(fp) if by_ptr.contains_key(&std::sync::Arc::as_ptr(fp)) => {
                            by_ptr.get(&std::sync::Arc::as_ptr(fp)).copied()
                        }
                        Some(fp) => {
                            let (hash, body) = stable_fingerprint(fp);
                            let id = match fingerprints.get(&hash) {
                                Some(&id) => Some(id),
                                None => {
                                    c.execute(
                                        "INSERT INTO fingerprints (hash, body) VALUES (?1, ?2) ON CONFLICT (hash) DO NOTHING",
                                        sql_args!(&hash, body),
                                    )?;
                                    let id = c
                                        .query_one(
                                            "SELECT id FROM fingerprints WHERE hash = ?1",
                                            sql_args!(&hash),
                                        )?
                                        .i64(0)?;
                                    fingerprints.insert(hash, id);
                                    Some(id)
                                }
                            };
                            if let Some(id) = id {
                                by_ptr.insert(std::sync::Arc::as_ptr(fp), id);
                            }
                            id
                        }
                    };
                    let pv = &p.provenance;
                    let t = pv.commit_time.unwrap_or(pv.run_time);
                    args.extend_from_slice(sql_args!(
                        series_id,
                        &pv.commit,
                        &pv.branch,
                        pv.commit_time,
                        pv.run_time,
                        t,
                        fp_id,
                        p.value,
                        p.samples.len() as i64
                    ));
                }
                let values: Vec<String> = (0..chunk.len())
                    .map(|r| {
                        let b = r * 9;
                        format!(
                            "(?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{}, ?{})",
                            b + 1,
                            b + 2,
                            b + 3,
                            b + 4,
                            b + 5,
                            b + 6,
                            b + 7,
                            b + 8,
                            b + 9
                        )
                    })
                    .collect();
                let sql = format!(
                    "INSERT INTO points (series_id, commit_hash, branch, commit_time, run_time, t, fingerprint_id, value, n) VALUES {} RETURNING id",
                    values.join(", ")
                );
                let mut chunk_ids = Vec::with_capacity(chunk.len());
                for row in c.query(&sql, &args)? {
                    chunk_ids.push(row.i64(0)?);
                }
                chunk_ids.sort_unstable();
                if chunk_ids.len() != chunk.len() {
                    return Err(DbError::Invalid(format!(
                        "internal: {} points inserted, {} ids returned",
                        chunk.len(),
                        chunk_ids.len()
                    )));
                }
                // Samples, also many rows per statement.
                let mut sample_args: Vec<Value> = Vec::new();
                let flush = |sample_args: &mut Vec<Value>| -> Result<(), DbError> {
                    if sample_args.is_empty() {
                        return Ok(());
                    }
                    let rows: Vec<String> = (0..sample_args.len() / 3)
                        .map(|r| format!("(?{}, ?{}, ?{})", 3 * r + 1, 3 * r + 2, 3 * r + 3))
                        .collect();
                    c.execute(
                        &format!(
                            "INSERT INTO samples (point_id, seq, value) VALUES {}",
                            rows.join(", ")
                        ),
                        sample_args,
                    )?;
                    sample_args.clear();
                    Ok(())
                };
                for (p, &id) in chunk.iter().zip(&chunk_ids) {
                    for (seq, v) in p.samples.iter().enumerate() {
                        if !v.is_finite() {
                            return Err(DbError::Invalid(format!(
                                "series '{}': sample {v} is not a finite number",
                                s.name
                            )));
                        }
                        sample_args.extend_from_slice(sql_args!(id, seq as i64, *v));
                        if sample_args.len() >= 3 * 1000 {
                            flush(&mut sample_args)?;
                        }
                    }
                }
                flush(&mut sample_args)?;
                for (p, &id) in chunk.iter().zip(&chunk_ids) {
                    if let Some(bad) = p.tests.iter().find(|t| !t.duration.is_finite()) {
                        return Err(DbError::Invalid(format!(
                            "test '{}': duration is not a finite number",
                            bad.name
                        )));
                    }
                    ids.push(id);
                }
                // A suite point's test durations, in one row (`vector`):
                // one row per test and point made every upload touch a page
                // of the index per test, so storing slowed as history grew.
                for (p, &id) in chunk.iter().zip(&chunk_ids) {
                    if p.tests.is_empty() {
                        continue;
                    }
                    let entries: Vec<(i64, f64)> = p
                        .tests
                        .iter()
                        .filter_map(|t| Some((*test_ids.get(t.name.as_str())?, t.duration)))
                        .collect();
                    c.execute(
                        "INSERT INTO test_vectors (point_id, body) VALUES (?1, ?2)
                         ON CONFLICT (point_id) DO UPDATE SET body = excluded.body",
                        sql_args!(id, vector::encode(&entries)),
                    )?;
                }
            }
            // The series' newest point time, kept at upload time: the
            // overview ranks series by it without reading their points.
            if let Some(t) = batch
                .points
                .iter()
                .map(|p| p.provenance.commit_time.unwrap_or(p.provenance.run_time))
                .max()
            {
                c.execute(
                    "UPDATE series SET last_t = CASE WHEN last_t IS NULL OR last_t < ?2 THEN ?2 ELSE last_t END WHERE id = ?1",
                    sql_args!(series_id, t),
                )?;
            }
            out[index] = ids;
        }
        Ok(out)
    }
}

/// Storing on behalf of a client (the server, per upload) stops once the
/// upload's time budget has run out; the transaction is rolled back.
fn over_budget() -> Result<(), DbError> {
    match crate::ingest::budget::over() {
        Some(limit) => Err(DbError::Invalid(crate::ingest::budget::message(limit))),
        None => Ok(()),
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

impl<C: Conn> History for SqlStore<C> {
    fn save(&mut self, batches: &[Batch]) -> Result<Vec<Vec<i64>>, DbError> {
        let project = self.project_id;
        let known = self.ids.clone();
        let mut learned = Learned::default();
        let out = self.conn.transaction(|c| {
            Self::insert_batches(c, project, batches, known.as_deref(), &mut learned)
        })?;
        self.remember(learned);
        Ok(out)
    }

    fn save_each(
        &mut self,
        n: usize,
        make: &mut dyn FnMut(usize) -> Batch,
    ) -> Result<usize, DbError> {
        let project = self.project_id;
        let known = self.ids.clone();
        let mut learned = Learned::default();
        let points = self.conn.transaction(|c| {
            let mut points = 0;
            for i in 0..n {
                let batch = make(i);
                points += Self::insert_batches(
                    c,
                    project,
                    std::slice::from_ref(&batch),
                    known.as_deref(),
                    &mut learned,
                )?
                .iter()
                .map(Vec::len)
                .sum::<usize>();
            }
            Ok(points)
        })?;
        self.remember(learned);
        Ok(points)
    }

    fn save_upload(
        &mut self,
        upload: &Upload,
        batches: &[Batch],
    ) -> Result<UploadOutcome, DbError> {
        let project = self.project_id;
        let first = batches
            .iter()
            .flat_map(|b| b.points.first())
            .next()
            .map(|p| p.provenance.clone())
            .unwrap_or_default();
        let names: Vec<&str> = batches.iter().map(|b| b.spec.name.as_str()).collect();
        let points: usize = batches.iter().map(|b| b.points.len()).sum();
        let known = self.ids.clone();
        let mut learned = Learned::default();
        let outcome = self.conn.transaction(|c| {
            // The unique run id is claimed first: a concurrent retry waits
            // here for this transaction and then finds it stored.
            let claimed = c.query_opt(
                "INSERT INTO uploads (project_id, run_id, kind, commit_hash, branch, series, points, received_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (project_id, run_id) DO NOTHING RETURNING id",
                sql_args!(
                    project,
                    &upload.run_id,
                    &upload.kind,
                    &first.commit,
                    &first.branch,
                    serde_json::to_string(&names).unwrap_or_default(),
                    points as i64,
                    now_s()
                ),
            )?;
            if claimed.is_none() {
                let at = c
                    .query_one(
                        "SELECT received_at FROM uploads WHERE project_id = ?1 AND run_id = ?2",
                        sql_args!(project, &upload.run_id),
                    )?
                    .i64(0)?;
                return Ok(UploadOutcome::Duplicate { received_at: at });
            }
            Ok(UploadOutcome::Stored(Self::insert_batches(
                c,
                project,
                batches,
                known.as_deref(),
                &mut learned,
            )?))
        })?;
        self.remember(learned);
        Ok(outcome)
    }

    fn uploads(&self, limit: i64) -> Result<Vec<UploadInfo>, DbError> {
        self.conn
            .query(
                "SELECT id, run_id, kind, commit_hash, branch, series, points, received_at
                 FROM uploads WHERE project_id = ?1 ORDER BY received_at DESC, id DESC LIMIT ?2",
                sql_args!(self.project_id, limit),
            )?
            .iter()
            .map(|r| {
                Ok(UploadInfo {
                    id: r.i64(0)?,
                    run_id: r.text(1)?,
                    kind: r.text(2)?,
                    commit: r.opt_text(3)?,
                    branch: r.opt_text(4)?,
                    series: serde_json::from_str(&r.text(5)?).unwrap_or_default(),
                    points: r.i64(6)?,
                    received_at: r.i64(7)?,
                })
            })
            .collect()
    }

    fn machines(&self) -> Result<Vec<MachineInfo>, DbError> {
        self.conn
            .query(
                // Seen when it ran (the upload's run time), not at its commits'
                // times: an old commit measured today is a machine seen today.
                "SELECT f.id, f.body, MIN(p.run_time), MAX(p.run_time), COUNT(*), COUNT(DISTINCT p.series_id)
                 FROM fingerprints f JOIN points p ON p.fingerprint_id = f.id
                 JOIN series s ON s.id = p.series_id
                 WHERE s.project_id = ?1 GROUP BY f.id, f.body ORDER BY MIN(p.run_time), f.id",
                sql_args!(self.project_id),
            )?
            .iter()
            .map(|r| {
                Ok(MachineInfo {
                    id: r.i64(0)?,
                    fingerprint: serde_json::from_str(&r.text(1)?).ok(),
                    first_seen: r.i64(2)?,
                    last_seen: r.i64(3)?,
                    points: r.i64(4)?,
                    series: r.i64(5)?,
                })
            })
            .collect()
    }

    fn list(&self) -> Result<Vec<SeriesInfo>, DbError> {
        self.series_where("1 = ?2", Value::Int(1))
    }

    fn series_page(
        &self,
        offset: usize,
        limit: usize,
        order: SeriesOrder,
    ) -> Result<(usize, Vec<SeriesInfo>), DbError> {
        let total = self
            .conn
            .query_one(
                "SELECT COUNT(*) FROM series WHERE project_id = ?1",
                sql_args!(self.project_id),
            )?
            .i64(0)?;
        let rank = match order {
            SeriesOrder::Recent => "COALESCE(s.last_t, -1) DESC, s.name",
            SeriesOrder::Name => "s.name",
        };
        let page = self.series_query(
            &format!(
                "s.id IN (SELECT s.id FROM series s WHERE s.project_id = ?1 ORDER BY {rank} LIMIT ?2 OFFSET ?3) ORDER BY {rank}"
            ),
            sql_args!(self.project_id, limit as i64, offset as i64),
        )?;
        Ok((total.max(0) as usize, page))
    }

    fn recent_points(&self, series_id: i64, n: usize) -> Result<Vec<Point>, DbError> {
        let sql = format!(
            "SELECT {POINT_COLUMNS} FROM points p WHERE p.series_id = ?1
             ORDER BY p.t DESC, p.id DESC LIMIT ?2"
        );
        let mut points = self
            .conn
            .query(&sql, sql_args!(series_id, n as i64))?
            .iter()
            .map(point_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        points.reverse();
        Ok(points)
    }

    fn schema_version(&self) -> Result<i64, DbError> {
        self.conn
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                &[],
            )?
            .i64(0)
    }

    fn series(&self, name: &str) -> Result<Option<SeriesInfo>, DbError> {
        Ok(self
            .series_where("s.name = ?2", Value::from(name))?
            .into_iter()
            .next())
    }

    fn points(&self, series_id: i64, filter: &PointFilter) -> Result<Vec<Point>, DbError> {
        let (order, limit) = match filter.newest {
            Some(n) => ("DESC", format!(" LIMIT {n} OFFSET {}", filter.skip_newest)),
            None => ("", String::new()),
        };
        let sql = format!(
            "SELECT {POINT_COLUMNS} FROM points p WHERE p.series_id = ?1
               AND (CAST(?2 AS TEXT) IS NULL OR p.branch = ?2)
               AND (CAST(?3 AS BIGINT) IS NULL OR p.t >= ?3)
             ORDER BY p.t {order}, p.id {order}{limit}"
        );
        let mut points = self
            .conn
            .query(&sql, sql_args!(series_id, &filter.branch, filter.since))?
            .iter()
            .map(point_from_row)
            .collect::<Result<Vec<_>, _>>()?;
        if filter.newest.is_some() {
            points.reverse();
        }
        Ok(points)
    }

    fn series_samples(
        &self,
        series_id: i64,
    ) -> Result<std::collections::BTreeMap<i64, Vec<f64>>, DbError> {
        let mut out: std::collections::BTreeMap<i64, Vec<f64>> = Default::default();
        for r in self
            .conn
            .query(
                "SELECT s.point_id, s.value FROM samples s JOIN points p ON p.id = s.point_id
                 WHERE p.series_id = ?1 ORDER BY s.point_id, s.seq",
                sql_args!(series_id),
            )?
            .iter()
        {
            out.entry(r.i64(0)?).or_default().push(r.f64(1)?);
        }
        Ok(out)
    }

    fn samples(&self, point_id: i64) -> Result<Vec<f64>, DbError> {
        self.conn
            .query(
                "SELECT value FROM samples WHERE point_id = ?1 ORDER BY seq",
                sql_args!(point_id),
            )?
            .iter()
            .map(|r| r.f64(0))
            .collect()
    }

    fn tests(&self, series_id: i64) -> Result<Vec<TestId>, DbError> {
        self.conn
            .query(
                "SELECT id, name FROM tests WHERE series_id = ?1 ORDER BY name",
                sql_args!(series_id),
            )?
            .iter()
            .map(|r| {
                Ok(TestId {
                    id: r.i64(0)?,
                    name: r.text(1)?,
                })
            })
            .collect()
    }

    fn each_vector(&self, points: &[Point], f: &mut VectorVisitor<'_>) -> Result<(), DbError> {
        self.vectors(points, f)
    }

    fn tests_at(&self, series_id: i64, points: Vec<Point>) -> Result<TestWindow, DbError> {
        let tests = self.tests_by_id(series_id)?;
        let values = self.durations(&points, &tests)?;
        Ok(TestWindow {
            points,
            tests,
            values,
        })
    }

    fn for_each_test(
        &self,
        series_id: i64,
        filter: &PointFilter,
        f: &mut TestVisitor<'_>,
    ) -> Result<(), DbError> {
        let pts = self.points(series_id, filter)?;
        let tests = self.tests_by_id(series_id)?;
        if pts.is_empty() || tests.is_empty() {
            return Ok(());
        }
        // Memory for at most this many durations at once: the tests go in
        // groups, each reading the vectors again.
        const AT_ONCE: usize = 16 << 20;
        let per = (AT_ONCE / pts.len()).max(1);
        let n = pts.len();
        let mut series: Vec<Point> = Vec::with_capacity(n);
        for group in tests.chunks(per) {
            let values = self.durations(&pts, group)?;
            for (t, test) in group.iter().enumerate() {
                series.clear();
                for (i, p) in pts.iter().enumerate() {
                    let v = values[t * n + i];
                    if !v.is_nan() {
                        series.push(Point {
                            value: f64::from(v),
                            n: 1,
                            ..p.clone()
                        });
                    }
                }
                if !series.is_empty() {
                    f(test, &series)?;
                }
            }
        }
        Ok(())
    }

    fn fingerprint(&self, id: i64) -> Result<Option<Fingerprint>, DbError> {
        let body = self
            .conn
            .query_opt("SELECT body FROM fingerprints WHERE id = ?1", sql_args!(id))?
            .map(|r| r.text(0))
            .transpose()?;
        Ok(body.and_then(|b| serde_json::from_str(&b).ok()))
    }

    fn detection(&self, key: &DetectionKey) -> Result<Option<DetectionState>, DbError> {
        let state = self
            .conn
            .query_opt(
                "SELECT state FROM detections WHERE series_id = ?1 AND test_key = ?2 AND scope = ?3",
                sql_args!(key.series_id, key.test_key, &key.scope),
            )?
            .map(|r| r.text(0))
            .transpose()?;
        Ok(state.and_then(|s| serde_json::from_str(&s).ok()))
    }

    fn alerted_points(&self, series_id: i64) -> Result<Vec<(i64, i64)>, DbError> {
        self.conn
            .query(
                "SELECT test_key, point_id FROM alert_members WHERE series_id = ?1",
                sql_args!(series_id),
            )?
            .iter()
            .map(|r| Ok((r.i64(0)?, r.i64(1)?)))
            .collect()
    }

    fn commit_detection(
        &mut self,
        states: &[(DetectionKey, DetectionState)],
        alerts: &[Alert],
    ) -> Result<Vec<i64>, DbError> {
        let project = self.project_id;
        let dialect = self.conn.dialect();
        self.conn.transaction(|c| {
            if dialect == Dialect::Postgres && !alerts.is_empty() {
                // Servers detecting at once (behind one load balancer) take
                // turns here, so the second finds the first's alert and
                // joins it instead of opening its own. SQLite's write
                // transaction is already exclusive.
                c.query(
                    "SELECT pg_advisory_xact_lock(?1)",
                    sql_args!(ALERT_LOCK + project),
                )?;
            }
            for (key, state) in states {
                let body = serde_json::to_string(state).unwrap_or_default();
                c.execute(
                    "INSERT INTO detections (series_id, test_key, scope, state) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (series_id, test_key, scope) DO UPDATE SET state = excluded.state",
                    sql_args!(key.series_id, key.test_key, &key.scope, body),
                )?;
            }
            let mut ids = Vec::new();
            let mut test_keys: HashMap<(i64, String), i64> = HashMap::new();
            for a in alerts {
                let env = serde_json::to_string(&a.environment).unwrap_or_else(|_| "[]".into());
                // One regression, one alert: a change already alerted on for an
                // overlapping commit range of the same branch (by another
                // detection run, the CLI or the server) gains these members
                // instead of a second alert.
                let existing = c
                    .query_opt(
                        "SELECT id FROM alerts WHERE project_id = ?1
                           AND COALESCE(branch, '') = COALESCE(?2, '')
                           AND ((from_time = ?3 AND to_time = ?4)
                                OR (from_time < ?4 AND to_time > ?3))
                         ORDER BY id LIMIT 1",
                        sql_args!(project, &a.branch, a.from_time, a.to_time),
                    )?
                    .map(|r| r.i64(0))
                    .transpose()?;
                let id = match existing {
                    Some(id) => id,
                    None => c
                    .query_one(
                        "INSERT INTO alerts (project_id, state, from_commit, to_commit, from_time, to_time, branch, environment, created_at)
                         VALUES (?1, 'open', ?2, ?3, ?4, ?5, ?6, ?7, ?8) RETURNING id",
                        sql_args!(
                            project,
                            &a.from_commit,
                            &a.to_commit,
                            a.from_time,
                            a.to_time,
                            &a.branch,
                            env,
                            now_s()
                        ),
                    )?
                    .i64(0)?,
                };
                let mut inserted = 0;
                for m in &a.members {
                    let test_key = match &m.test {
                        None => 0,
                        Some(name) => match test_keys.get(&(m.series_id, name.clone())) {
                            Some(&k) => k,
                            None => {
                                let k = c
                                    .query_one(
                                        "SELECT id FROM tests WHERE series_id = ?1 AND name = ?2",
                                        sql_args!(m.series_id, name),
                                    )?
                                    .i64(0)?;
                                test_keys.insert((m.series_id, name.clone()), k);
                                k
                            }
                        },
                    };
                    // A series (or test) is in an alert once: found again a
                    // point away (by another server that saw one point more),
                    // it is the same change.
                    if c
                        .query_opt(
                            "SELECT 1 FROM alert_members WHERE alert_id = ?1 AND series_id = ?2 AND test_key = ?3",
                            sql_args!(id, m.series_id, test_key),
                        )?
                        .is_some()
                    {
                        continue;
                    }
                    inserted += c.execute(
                        "INSERT INTO alert_members (alert_id, series_id, test_key, point_id, prev_point_id,
                           mean_before, mean_after, change, pvalue, qvalue, regression, boundary)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                         ON CONFLICT (series_id, test_key, point_id) DO NOTHING",
                        sql_args!(
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
                            m.regression as i64,
                            serde_json::to_string(&m.boundary).unwrap_or_else(|_| "[]".into())
                        ),
                    )?;
                }
                if inserted > 0 {
                    Self::rejoin_boundary(c, id)?;
                }
                if existing.is_some() {
                    // Not a new alert: the members (if any were new) joined it.
                } else if inserted == 0 {
                    // Another process alerted on every one of these meanwhile.
                    c.execute("DELETE FROM alerts WHERE id = ?1", sql_args!(id))?;
                } else {
                    ids.push(id);
                }
            }
            Ok(ids)
        })
    }

    fn alerts(&self, states: &[AlertState]) -> Result<Vec<Alert>, DbError> {
        let list: Vec<String> = states.iter().map(|s| format!("'{}'", s.as_str())).collect();
        self.load_alerts(&format!("state IN ({})", list.join(", ")), &[])
    }

    fn alert_marks(&self, series_id: i64) -> Result<Vec<AlertMark>, DbError> {
        let alerts = self.load_alerts_of(
            "id IN (SELECT alert_id FROM alert_members WHERE series_id = ?1)",
            sql_args!(series_id),
            Some(series_id),
        )?;
        let mut marks = Vec::with_capacity(alerts.len());
        for a in alerts {
            let r = self.conn.query_one(
                "SELECT COUNT(*), CAST(COALESCE(SUM(regression), 0) AS BIGINT) FROM alert_members WHERE alert_id = ?1",
                sql_args!(a.id),
            )?;
            let (members, regressions) = (r.i64(0)?.max(0) as usize, r.i64(1)?.max(0) as usize);
            marks.push(AlertMark {
                id: a.id,
                state: a.state,
                kind: alert_kind(!a.environment.is_empty(), regressions, members),
                members: a.members,
            });
        }
        Ok(marks)
    }

    fn alert(&self, id: i64) -> Result<Option<Alert>, DbError> {
        Ok(self
            .load_alerts("id = ?1", sql_args!(id))?
            .into_iter()
            .next())
    }

    fn set_alert_state(&mut self, id: i64, state: AlertState) -> Result<(), DbError> {
        let n = self.conn.execute(
            "UPDATE alerts SET state = ?1, reason = NULL WHERE id = ?2 AND project_id = ?3",
            sql_args!(state.as_str(), id, self.project_id),
        )?;
        if n == 0 {
            return Err(DbError::NoAlert(id));
        }
        Ok(())
    }

    fn retract_alert(&mut self, id: i64, reason: &str) -> Result<(), DbError> {
        let n = self.conn.execute(
            "UPDATE alerts SET state = ?1, reason = ?2 WHERE id = ?3 AND project_id = ?4",
            sql_args!(AlertState::Retracted.as_str(), reason, id, self.project_id),
        )?;
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
            .query_one(
                "INSERT INTO annotations (series_id, from_commit, to_commit, body, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id",
                sql_args!(series_id, from_commit, to_commit, text, now_s()),
            )?
            .i64(0)
    }

    fn annotations(&self) -> Result<Vec<Annotation>, DbError> {
        self.conn
            .query(
                "SELECT a.id, s.name, a.from_commit, a.to_commit, a.body, a.created_at
                 FROM annotations a LEFT JOIN series s ON s.id = a.series_id ORDER BY a.id",
                &[],
            )?
            .iter()
            .map(|r| {
                Ok(Annotation {
                    id: r.i64(0)?,
                    series: r.opt_text(1)?,
                    from_commit: r.text(2)?,
                    to_commit: r.opt_text(3)?,
                    text: r.text(4)?,
                    created_at: r.i64(5)?,
                })
            })
            .collect()
    }

    fn note_commit(&mut self, hash: &str, subject: &str) -> Result<(), DbError> {
        self.conn.execute(
            "INSERT INTO commits (project_id, hash, subject) VALUES (?1, ?2, ?3)
             ON CONFLICT (project_id, hash) DO UPDATE SET subject = excluded.subject",
            sql_args!(self.project_id, hash, subject),
        )?;
        Ok(())
    }

    fn commit_subjects(
        &self,
        hashes: &[&str],
    ) -> Result<std::collections::BTreeMap<String, String>, DbError> {
        let mut out = std::collections::BTreeMap::new();
        for h in hashes {
            if out.contains_key(*h) {
                continue;
            }
            let rows = self.conn.query(
                "SELECT subject FROM commits WHERE project_id = ?1 AND hash = ?2",
                sql_args!(self.project_id, *h),
            )?;
            if let Some(r) = rows.first() {
                out.insert(h.to_string(), r.text(0)?);
            }
        }
        Ok(out)
    }
}
