//! Whole jobs, one call each: what a subcommand does beyond parsing its
//! arguments and printing, as a function a test, the server or another
//! program calls exactly as the CLI does. A job takes plain typed options,
//! reads and measures through the rooms below (ingest, measure, analyze,
//! diagnose, history, store), and returns typed results the CLI hands to
//! `render/`; progress goes through an observer the caller implements,
//! never a print. Jobs are the top floor beside `render/` and `server/`:
//! nothing below imports them.
//!
//! - [`branch`]: a history kept in a git branch (`--db git:BRANCH`), no server.
//! - [`ministat`]: ministat's command line (Debian's 20150715), byte for byte.
//! - [`push`]: uploads of result files and reports to a `tardy serve`.
//! - [`report`]: what `tardy report` shows, gathered from the history and files.
//! - [`store`]: which history database a command means, opened.

pub mod branch;
pub mod ministat;
pub mod push;
pub mod report;
pub mod store;
