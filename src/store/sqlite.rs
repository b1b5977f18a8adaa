//! The SQLite driver of the history store (bundled SQLite, WAL journal):
//! one file, several readers and writers at once, each write one
//! transaction, so a crash or `kill -9` loses at most the write in flight.
//! The queries themselves are in [`super::sqlstore`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode};

use super::db::DbError;
use super::schema::Dialect;
use super::sql::{Conn, Row, RowVisitor, Value};
use super::sqlstore::SqlStore;

/// How long a writer waits for another to finish (15 s; `TARDY_BUSY_TIMEOUT`
/// in seconds overrides it).
pub fn busy_timeout() -> Duration {
    std::env::var("TARDY_BUSY_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(15), Duration::from_secs_f64)
}

/// The history store on a SQLite file.
pub type SqliteStore = SqlStore<SqliteConn>;

/// One connection to a SQLite history file.
pub struct SqliteConn {
    conn: Connection,
    path: PathBuf,
}

impl SqlStore<SqliteConn> {
    /// Open (creating it and its directory if needed) and migrate the
    /// database at `path`, for `project`.
    pub fn open(path: &Path, project: &str) -> Result<SqliteStore, DbError> {
        let conn = SqliteConn::open(path)?;
        SqlStore::new(conn, project, path)
    }

    pub fn path(&self) -> &Path {
        &self.conn().path
    }
}

impl SqliteConn {
    fn open(path: &Path) -> Result<SqliteConn, DbError> {
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
        let c = SqliteConn {
            conn,
            path: path.to_path_buf(),
        };
        c.configure()?;
        Ok(c)
    }

    fn err(&self, e: rusqlite::Error) -> DbError {
        map_err(&self.path, e)
    }

    fn configure(&self) -> Result<(), DbError> {
        self.conn
            .busy_timeout(busy_timeout())
            .map_err(|e| self.err(e))?;
        // The first statement that reads the file: a non-database fails here.
        // Switching a new file to WAL takes an exclusive lock, and SQLite answers
        // BUSY at once (without its busy handler) when another process is doing the
        // same: servers starting together retry until the busy timeout.
        let deadline = std::time::Instant::now() + busy_timeout();
        let mode: String = loop {
            match self
                .conn
                .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            {
                Ok(m) => break m,
                Err(rusqlite::Error::SqliteFailure(f, _))
                    if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(self.err(e)),
            }
        };
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(DbError::Open {
                path: self.path.clone(),
                detail: format!("cannot use write-ahead logging (journal mode {mode})"),
            });
        }
        self.conn
            .execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(|e| self.err(e))?;
        let check: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if check != "ok" {
            return Err(DbError::Corrupt {
                path: self.path.clone(),
                detail: check,
            });
        }
        Ok(())
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Value::Real(v) => ToSqlOutput::Borrowed(ValueRef::Real(*v)),
            Value::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
        })
    }
}

fn value_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let n = stmt
            .execute(rusqlite::params_from_iter(args.iter()))
            .map_err(|e| self.err(e))?;
        Ok(n as u64)
    }

    fn query_each(&self, sql: &str, args: &[Value], f: &mut RowVisitor<'_>) -> Result<(), DbError> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let width = stmt.column_count();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args.iter()))
            .map_err(|e| self.err(e))?;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(value_of(row.get_ref(i).map_err(|e| self.err(e))?));
            }
            f(Row(values))?;
        }
        Ok(())
    }

    fn begin(&self) -> Result<(), DbError> {
        self.conn
            .execute_batch("BEGIN IMMEDIATE")
            .map_err(|e| self.err(e))
    }

    fn commit(&self) -> Result<(), DbError> {
        self.conn.execute_batch("COMMIT").map_err(|e| self.err(e))
    }

    fn rollback(&self) -> Result<(), DbError> {
        self.conn.execute_batch("ROLLBACK").map_err(|e| self.err(e))
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
