//! Knowing the machine: a snapshot of what shapes run times ([`fingerprint`]), and
//! the pathology probes of `tardy doctor` ([`doctor`] runs them): time and timers
//! ([`timers`]), the scheduler ([`sched`]), process creation ([`process`]), the CPU
//! core ([`cpu`]) and storage ([`io`]). Probes measure and never judge: verdicts and
//! comparisons are `diagnose::machine`'s.

pub mod counters;
pub mod cpu;
pub mod doctor;
pub mod fingerprint;
pub mod io;
pub mod process;
pub mod result;
pub mod sample;
pub mod sched;
pub mod timers;

pub use fingerprint::Fingerprint;
pub use result::{Assessment, DoctorReport, Health, ProbeResult};
