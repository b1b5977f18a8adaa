//! Knowing the machine: a quick snapshot of what shapes run times
//! ([`fingerprint`]). The pathology probes of `tardy doctor` will live here too.

pub mod fingerprint;

pub use fingerprint::Fingerprint;
