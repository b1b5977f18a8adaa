//! Whole jobs, one call each: what a subcommand does beyond parsing its
//! arguments and printing, as a function a test, the server or another
//! program calls exactly as the CLI does. A job takes plain typed options,
//! reads and measures through the rooms below (ingest, measure, analyze,
//! diagnose, history, store), and returns typed results the CLI hands to
//! `render/`; progress goes through an observer the caller implements,
//! never a print. Jobs are the top floor beside `render/` and `server/`:
//! nothing below imports them.
//!
//! - [`bisect`]: what a bisection says while it searches.
//! - [`branch`]: a history kept in a git branch (`--db git:BRANCH`), no server.
//! - [`ci`]: a pull request against its merge base, measured, explained, written.
//! - [`doctor`]: a saved machine report compared with another or with now.
//! - [`explain`]: the files `tardy explain` writes: traces, profiles, timelines, its page.
//! - [`ministat`]: ministat's command line (Debian's 20150715), byte for byte.
//! - [`push`]: uploads of result files and reports to a `tardy serve`.
//! - [`report`]: what `tardy report` shows, gathered from the history and files.
//! - [`run`]: what `tardy run` keeps: exports, history points, the upload.
//! - [`serve`]: `tardy serve`'s settings checked into the server's options.
//! - [`store`]: which history database a command means, opened.
//! - [`tests`]: test reports summarised, saved, compared test by test.

pub mod bisect;
pub mod branch;
pub mod ci;
pub mod doctor;
pub mod explain;
pub mod ministat;
pub mod push;
pub mod report;
pub mod run;
pub mod serve;
pub mod store;
pub mod tests;
