//! The statistics step between reading and rendering: [`run`] turns a
//! `tardy run` session's raw runs into summaries, warnings and verdicts;
//! [`compare`] pairs the series of several inputs and compares them;
//! [`suite`] summarises and diffs test reports. They
//! call `stats` and `diagnose`; neither measures, prints nor writes files.

pub mod compare;
pub mod files;
pub mod names;
pub mod rows;
pub mod run;
pub mod select;
pub mod suite;

pub use run::finalize;
