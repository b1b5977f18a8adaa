//! `tardy explain`: where a command's wall time went, and why run B is slower
//! than run A.
//!
//! [`attribute`] turns one recorded run into categories that sum to its wall
//! time, following the critical path: the command's own time, and while it
//! waits for a child process or joins a thread, the time of what it waits
//! for, recursively. [`compare`] turns two sets of runs into a table of every
//! category's difference and a ranked list of causes with their evidence.
//! The saved form of a set of runs is [`Trace`] (`tardy explain --save`,
//! documented in docs/results-format.md). [`session`] records one or two
//! commands, interleaved, into traces.

pub mod attribute;
pub mod compare;
pub mod functions;
pub mod job;
pub mod session;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::probe::fingerprint::Fingerprint;

pub use attribute::{attribute, build_trace};
pub use compare::{Cause, Comparison, Row, compare};

/// The schema name of a saved trace.
pub const SCHEMA: &str = "tardy.trace";
/// Its version; readers refuse newer ones.
pub const SCHEMA_VERSION: u32 = 1;

/// How many categories there are.
pub const NCAT: usize = 11;

/// Where wall time goes, in the order tables show them.
pub const CATEGORIES: [&str; NCAT] = [
    "cpu-user",
    "cpu-system",
    "run-queue",
    "timed-sleep",
    "lock-wait",
    "event-wait",
    "child-wait",
    "process-creation",
    "fsync",
    "io-wait",
    "other",
];

pub const CPU_USER: usize = 0;
pub const CPU_SYSTEM: usize = 1;
pub const RUN_QUEUE: usize = 2;
pub const TIMED_SLEEP: usize = 3;
pub const LOCK_WAIT: usize = 4;
pub const EVENT_WAIT: usize = 5;
pub const CHILD_WAIT: usize = 6;
pub const PROCESS_CREATION: usize = 7;
pub const FSYNC: usize = 8;
pub const IO_WAIT: usize = 9;
pub const OTHER: usize = 10;

/// Each category's words for sentences, in [`CATEGORIES`]' order: "timed
/// sleeps", "user CPU". A table (data every floor may read), not a function.
pub const CATEGORY_WORDS: [&str; NCAT] = [
    "user CPU",
    "system CPU",
    "waiting for a CPU",
    "timed sleeps",
    "lock waits",
    "event waits",
    "waiting for a child beyond its own time (exit to reap)",
    "process creation",
    "fsync",
    "block I/O",
    "other (not attributed)",
];

/// A category's words ([`CATEGORY_WORDS`]), "other" past the table.
pub fn category_words(i: usize) -> &'static str {
    CATEGORY_WORDS
        .get(i)
        .copied()
        .unwrap_or("other (not attributed)")
}

/// Totals of one kind of traced syscall in one run (the whole tree).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KindTotals {
    pub count: u64,
    pub total_s: f64,
    /// For sleeps and expired timeouts: the time asked for.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub asked_s: f64,
    /// Their timer slack, summed (kernel-event recorder).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub slack_s: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// Programs executed in one run, by file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExecFile {
    pub file: String,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    pub count: u64,
    /// Total of execve plus loading (to the program's entry point), seconds.
    pub start_s: f64,
}

/// One process of a run, by its pid and command line (`tcp.py server` and
/// `tcp.py client` are two rows); the processes of one command line are
/// one row only when more than [`COLLAPSE_OVER`] share it (a build's
/// compiler runs), with their count.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcSummary {
    pub command: String,
    /// The process's pid; absent on a row of many processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    pub count: u64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub run_queue_s: f64,
    /// Its share of the run's wall time (on the critical path).
    pub on_path_s: f64,
    /// CPU it used while the critical path was elsewhere (in parallel).
    pub off_path_cpu_s: f64,
    pub lifetime_s: f64,
}

/// Processes of one command line shown one row each up to this many.
pub const COLLAPSE_OVER: usize = 8;

/// One run, attributed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub wall_s: f64,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub signal: Option<i32>,
    /// Category -> seconds on the critical path; sums to `wall_s`.
    pub categories: BTreeMap<String, f64>,
    /// Traced syscalls of the whole tree, by kind.
    pub syscalls: BTreeMap<String, KindTotals>,
    /// Whole tree, on and off the critical path.
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub run_queue_s: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub processes: u64,
    pub threads: u64,
    pub execs: u64,
    /// Stops the tracer took (each costs the traced thread a round trip);
    /// with the kernel-event recorder, the events read.
    pub stops: u64,
    /// Events the kernel dropped because a ring buffer was full
    /// (kernel-event recorder).
    #[serde(default)]
    pub lost_events: u64,
    #[serde(default)]
    pub steal_s: Option<f64>,
    #[serde(default)]
    pub exec_files: Vec<ExecFile>,
    #[serde(default)]
    pub process_rows: Vec<ProcSummary>,
    /// Processes still running when the command exited.
    #[serde(default)]
    pub stragglers: Vec<String>,
    /// The share of the tree's CPU used by threads that park on a lock often
    /// (50 waits or more a second of their CPU; joins aside): near 1 when the
    /// threads that work are the ones handing a lock to each other, near 0
    /// when the lock waits are a runtime's (Go's, the JVM's).
    #[serde(default)]
    pub lock_thread_cpu_share: f64,
}

impl RunSummary {
    /// The categories as an array in [`CATEGORIES`] order.
    pub fn cat(&self) -> [f64; NCAT] {
        let mut out = [0.0; NCAT];
        for (i, name) in CATEGORIES.iter().enumerate() {
            out[i] = self.categories.get(*name).copied().unwrap_or(0.0);
        }
        out
    }

    pub fn kind(&self, name: &str) -> KindTotals {
        self.syscalls.get(name).cloned().unwrap_or_default()
    }
}

/// A log2 histogram of one syscall kind over all runs: `[bucket_low_ns, count]`
/// pairs for the non-empty buckets (bucket i holds [2^i, 2^(i+1)) ns).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub count: u64,
    pub buckets: Vec<[u64; 2]>,
}

/// Which recorder ran and what tracing cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// "kernel-events", "ptrace" or "untraced".
    #[serde(default)]
    pub recorder: String,
    /// What that recorder cannot see, in one line.
    #[serde(default)]
    pub blind_spots: String,
    /// Why the kernel-event recorder was not used, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Kernel events a run (kernel-events recorder).
    #[serde(default)]
    pub events_per_run: f64,
    /// Events the kernel dropped a run (its buffers full), and their share
    /// of all the events of the runs: 0 unless the rings overflowed.
    #[serde(default)]
    pub dropped_events_per_run: f64,
    #[serde(default)]
    pub dropped_share: f64,
    /// Measured cost of one traced syscall (entry and exit stops), ns.
    #[serde(default)]
    pub stop_cost_ns: Option<u64>,
    /// Traced syscalls a run, on average.
    pub stops_per_run: f64,
    /// Their estimated cost a run, seconds, and as a fraction of the wall time.
    pub estimate_s: f64,
    pub fraction: f64,
    /// With `--overhead-check`: untraced runs interleaved.
    #[serde(default)]
    pub untraced_wall_s: Vec<f64>,
    /// Median traced wall / median untraced wall.
    #[serde(default)]
    pub measured_ratio: Option<f64>,
}

/// A set of runs of one command, explained: what `--save` writes and
/// `--json` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub schema: String,
    pub schema_version: u32,
    pub tardy_version: String,
    pub command: String,
    /// "full", "no-syscalls" (seccomp refused) or "untraced".
    pub coverage: String,
    #[serde(default)]
    pub coverage_note: Option<String>,
    /// Mean wall time of the runs.
    pub wall_s: f64,
    /// Mean seconds per category; sums to `wall_s`.
    pub categories: BTreeMap<String, f64>,
    pub runs: Vec<RunSummary>,
    /// Per syscall kind, all runs.
    pub histograms: BTreeMap<String, Histogram>,
    pub overhead: Overhead,
    pub machine: Fingerprint,
    #[serde(default)]
    pub interrupted: bool,
    /// The sampled CPU profile of the runs (kernel-event recorder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::Profile>,
    /// Why there is no profile, when one was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_note: Option<String>,
    /// The timeline of the run of median wall time, when it was kept
    /// (`--export-trace`; never saved).
    #[serde(skip)]
    pub timeline: Option<std::sync::Arc<crate::record::events::EventLog>>,
}

impl Trace {
    /// The command's program: the file it exec'd whose name is the command's
    /// first word (its full path), else that word.
    pub fn main_binary(&self) -> Option<String> {
        let first = self.command.split_whitespace().next()?;
        let name = first.rsplit('/').next()?;
        self.runs
            .iter()
            .flat_map(|r| &r.exec_files)
            .find(|f| f.file.rsplit('/').next() == Some(name))
            .map(|f| f.file.clone())
            .or_else(|| Some(first.to_string()))
    }

    /// Mean of a per-run value.
    pub fn mean(&self, f: impl Fn(&RunSummary) -> f64) -> f64 {
        if self.runs.is_empty() {
            return 0.0;
        }
        self.runs.iter().map(f).sum::<f64>() / self.runs.len() as f64
    }

    /// Check a trace read from a file.
    pub fn validate(&self) -> Result<(), String> {
        if self.schema != SCHEMA {
            return Err(format!(
                "not a tardy trace (schema '{}', expected '{SCHEMA}')",
                self.schema
            ));
        }
        if self.schema_version > SCHEMA_VERSION {
            return Err(format!(
                "trace schema version {} is newer than this tardy reads ({SCHEMA_VERSION}); upgrade tardy",
                self.schema_version
            ));
        }
        if self.runs.is_empty() {
            return Err("the trace holds no runs".into());
        }
        if let Some(p) = &self.profile {
            p.validate()?;
            if p.runs != self.runs.len() {
                return Err(format!(
                    "the profile holds {} runs, the trace {}",
                    p.runs,
                    self.runs.len()
                ));
            }
        }
        for (i, r) in self.runs.iter().enumerate() {
            if !r.wall_s.is_finite() || r.wall_s < 0.0 {
                return Err(format!("run {} has an invalid wall_s", i + 1));
            }
            if r.categories.values().any(|v| !v.is_finite()) {
                return Err(format!("run {} has a non-finite category", i + 1));
            }
        }
        Ok(())
    }
}
