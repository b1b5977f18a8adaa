//! Persistence: files written atomically ([`atomic`]). The history database
//! (SQLite, PostgreSQL) will live here too.

pub mod atomic;

pub use atomic::{StoreError, check_writable, write_atomic};
