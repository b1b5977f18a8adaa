//! Measuring commands: turning a command string into something to execute
//! ([`command`]), expanding parameter scans ([`plan`]), executing one run and
//! timing it with its own rusage ([`spawn`]), calibrating the shell and the
//! spawn floor ([`calibrate`]), Ctrl-C handling ([`interrupt`]), and the
//! session scheduler that interleaves commands and decides when to stop
//! ([`session`]).
//!
//! The hot path is `spawn::Executor::run`: everything between its two clock
//! reads is a spawn and a `wait4`, nothing else.

pub mod calibrate;
pub mod command;
pub mod counters;
pub mod error;
pub mod inherit;
pub mod interrupt;
pub mod plan;
pub mod session;
pub mod spawn;
pub mod spawner;
pub mod spec;
pub mod stragglers;
pub mod trampoline;

pub use error::MeasureError;
