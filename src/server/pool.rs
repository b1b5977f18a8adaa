//! Where the server's data lives (`sqlite:PATH` or `postgres://...`) and a
//! small pool of open stores, so a request does not pay for opening and
//! checking the database. Stores are used on blocking threads only.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::store::{DbError, History, PgStore, SqliteStore, TestIds};

/// The database behind a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Backend {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Backend {
    /// `sqlite:PATH`, `postgres://...`/`postgresql://...`, or a plain path.
    pub fn parse(spec: &str) -> Backend {
        if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            Backend::Postgres(spec.to_string())
        } else {
            Backend::Sqlite(PathBuf::from(spec.strip_prefix("sqlite:").unwrap_or(spec)))
        }
    }

    /// For messages: the path, or the URL without its password.
    pub fn describe(&self) -> String {
        match self {
            Backend::Sqlite(p) => format!("sqlite:{}", p.display()),
            Backend::Postgres(u) => crate::store::postgres::redact(u),
        }
    }

    pub fn open(&self, project: &str) -> Result<Box<dyn History + Send>, DbError> {
        Ok(match self {
            Backend::Sqlite(p) => Box::new(SqliteStore::open(p, project)?),
            Backend::Postgres(u) => Box::new(PgStore::connect(u, project)?),
        })
    }

    /// [`Backend::open`], the store looking test ids up in `ids` first.
    pub fn open_sharing(
        &self,
        project: &str,
        ids: &Arc<TestIds>,
    ) -> Result<Box<dyn History + Send>, DbError> {
        let ids = Arc::clone(ids);
        Ok(match self {
            Backend::Sqlite(p) => Box::new(SqliteStore::open(p, project)?.sharing_test_ids(ids)),
            Backend::Postgres(u) => Box::new(PgStore::connect(u, project)?.sharing_test_ids(ids)),
        })
    }
}

/// Open stores waiting for the next request.
pub struct Pool {
    backend: Backend,
    project: String,
    idle: Mutex<Vec<Box<dyn History + Send>>>,
    max_idle: usize,
    /// Test ids every store of the pool has found, so an upload of a
    /// suite stored before looks none of its names up again.
    ids: Arc<TestIds>,
}

/// Memory the pool's remembered test ids may hold: about 500,000 names.
const TEST_IDS_BYTES: usize = 48 << 20;

impl Pool {
    /// A pool with one store opened now, so a bad database fails at start.
    pub fn new(backend: Backend, project: &str, max_idle: usize) -> Result<Pool, DbError> {
        let ids = Arc::new(TestIds::new(TEST_IDS_BYTES));
        let first = backend.open_sharing(project, &ids)?;
        Ok(Pool {
            backend,
            project: project.to_string(),
            idle: Mutex::new(vec![first]),
            max_idle,
            ids,
        })
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Take every idle store out (to close them where a blocking client may
    /// be dropped: PostgreSQL's blocking client panics when dropped on an
    /// async worker thread). Later calls of [`Pool::with`] open new ones.
    pub fn drain(&self) -> Vec<Box<dyn History + Send>> {
        self.idle
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default()
    }

    /// Run `f` with a store; the store goes back to the pool unless the
    /// connection failed.
    pub fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn History) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        let taken = self.idle.lock().map(|mut v| v.pop()).unwrap_or(None);
        let mut store = match taken {
            Some(s) => s,
            None => self.backend.open_sharing(&self.project, &self.ids)?,
        };
        let out = f(store.as_mut());
        let broken = matches!(out, Err(DbError::Open { .. }));
        if !broken
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.max_idle
        {
            idle.push(store);
        }
        out
    }
}
