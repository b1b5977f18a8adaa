//! Persistence: files written atomically ([`atomic`]) and the history
//! database — its model ([`history`]), the store interface every backend
//! implements ([`db`]), the versioned schema ([`schema`]) and the SQLite
//! backend ([`sqlite`]).

pub mod atomic;
pub mod db;
pub mod history;
pub mod schema;
pub mod sqlite;

pub use atomic::{StoreError, check_writable, write_atomic};
pub use db::{Batch, DbError, DetectionKey, History, TestId};
pub use sqlite::SqliteStore;
