//! Persistence: files written atomically ([`atomic`]) and the history
//! database — its model ([`history`]), the store interface every backend
//! implements ([`db`]), the versioned schema ([`schema`]), the queries written
//! once ([`sqlstore`]) over a small SQL interface ([`sql`]) and its two
//! drivers, SQLite ([`sqlite`]) and PostgreSQL ([`postgres`]).

pub mod atomic;
pub mod db;
pub mod history;
pub mod ids;
pub mod postgres;
pub mod schema;
pub mod sql;
pub mod sqlite;
pub mod sqlstore;
pub mod vector;

pub use atomic::{StoreError, check_writable, write_atomic};
pub use db::{Batch, DbError, DetectionKey, History, TestId, TestWindow, VectorVisitor};
pub use ids::TestIds;
pub use postgres::PgStore;
pub use sqlite::SqliteStore;
pub use sqlstore::SqlStore;
