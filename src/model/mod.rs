//! The serialisable result types: what `tardy run` records and every later
//! capability (compare, tests diff, doctor, bisect, history) reads.
//!
//! The JSON written from these types is documented field by field in
//! `docs/results-format.md`; changing a field's meaning needs a new
//! [`SCHEMA_VERSION`]. Raw per-run records are integers in nanoseconds and
//! KiB; summaries are in seconds.

mod fingerprint;
mod metric;

pub use fingerprint::{Fingerprint, Throttling};
pub use metric::Metric;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::stats::trend::Trend;
use crate::stats::{Estimate, Summary};

/// Nanoseconds to seconds, correctly rounded (`ns * 1e-9` is not).
pub fn ns_to_s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The value of the `schema` field of a tardy results file.
pub const SCHEMA: &str = "tardy.results";
/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// One `tardy run` session: every command, every run, and the verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub schema: String,
    pub schema_version: u32,
    pub tardy_version: String,
    /// Start of the session, Unix time in nanoseconds.
    pub started_at_ns: u64,
    /// End of the session (or of the last save), Unix time in nanoseconds.
    pub finished_at_ns: Option<u64>,
    pub status: SessionStatus,
    /// Why measuring stopped; `None` while running.
    pub stop_reason: Option<StopReason>,
    pub options: OptionsRecord,
    pub machine: Fingerprint,
    /// Shell start-up cost subtracted from shell-run commands, per shell.
    pub shell_corrections: Vec<ShellCorrection>,
    pub overhead: Overhead,
    pub benchmarks: Vec<Benchmark>,
    /// Each candidate (every benchmark after the first) against the reference.
    pub comparisons: Vec<Comparison>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Still measuring (a file saved mid-session).
    Running,
    Complete,
    /// Stopped by SIGINT/SIGTERM; every completed run is kept.
    Interrupted,
    /// Stopped by an error (a failing command); every completed run is kept.
    Failed,
}

/// The rule that ended measuring.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum StopReason {
    /// `--runs N` was given and reached.
    ExactRuns {
        runs: u64,
    },
    /// Every command's confidence interval of the mean is within `precision`
    /// of it, after the minimum runs and time.
    Precision {
        precision: f64,
    },
    /// `--max-runs` reached before the precision was.
    MaxRuns {
        runs: u64,
    },
    /// `--max-time` reached before the precision was.
    MaxTime {
        seconds: f64,
    },
    /// Every command's runs failed or timed out: nothing could be counted.
    NoCountedRuns {
        runs: u64,
    },
    Interrupted,
    Failed {
        message: String,
    },
}

/// The options the session ran with, as needed to interpret or repeat it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OptionsRecord {
    pub runs: Option<u64>,
    pub min_runs: u64,
    pub max_runs: Option<u64>,
    pub min_time_s: f64,
    pub max_time_s: Option<f64>,
    pub precision: f64,
    pub confidence: f64,
    /// `None` means the automatic rule (see docs/book/01-measuring.md: one warm-up unless the
    /// first run takes over a second).
    pub warmup: Option<u64>,
    pub seed: u64,
    pub interleaved: bool,
    pub timeout_s: Option<f64>,
    /// Exit codes accepted as success besides 0: `"all-non-zero"` or a list.
    pub ignore_failure: Option<String>,
    pub include_failures_in_stats: bool,
    pub env: Vec<String>,
    pub cwd: Option<String>,
    pub input: Option<String>,
    /// What each run was measured by, the first deciding when to stop:
    /// `wall`, `instructions`, `cycles`, `estimated-cycles` (absent: wall).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    /// How the counts were taken, when any were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter: Option<CounterRecord>,
}

/// The counter behind a session's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CounterRecord {
    /// `pmu` (perf_event_open, in the timed runs) or `cachegrind` (valgrind,
    /// in runs of their own beside the timed ones).
    pub backend: String,
    /// The events read: `instructions:u`, `cycles:u` on a PMU; cachegrind's
    /// `Ir`, `I1mr`, ... (with its fixed simulated cache) otherwise.
    pub events: Vec<String>,
    /// The simulated cache (cachegrind with estimated cycles): I1, D1 and LL
    /// as size,associativity,line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
}

/// The counts of one run's whole process tree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// `pmu` or `cachegrind`.
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cycles: Option<u64>,
    /// Every raw event the backend gave (cachegrind's, summed over processes).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub events: BTreeMap<String, u64>,
    /// How many processes were counted (cachegrind writes one file each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// The counted run's own wall time, when it was a run of its own
    /// (cachegrind): what counting cost, not the command's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted_wall_ns: Option<u64>,
}

/// A count metric of one benchmark over its counted runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountSummary {
    /// `instructions`, `cycles` or `estimated-cycles`.
    pub metric: String,
    /// `n`, `median`, `mean`, `min`, `max`, `relative_range` ((max - min) /
    /// median) and `identical` (every run gave the same count).
    #[serde(flatten)]
    pub stats: crate::stats::counts::CountStats,
}

impl Run {
    /// This run's value of a count metric, when it was counted.
    pub fn count(&self, m: Metric) -> Option<f64> {
        self.counts.as_ref().and_then(|c| m.of(c)).map(|v| v as f64)
    }
}

impl Benchmark {
    /// The counted runs' values of a count metric, in run order.
    pub fn count_values(&self, m: Metric, include_failures: bool) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.counted(include_failures))
            .filter_map(|r| r.count(m))
            .collect()
    }
}

/// How a command was executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Exec {
    /// Executed directly, no shell: the exact argv.
    Direct { argv: Vec<String> },
    /// Run as `SHELL -c SCRIPT`; its start-up cost is subtracted.
    Shell { shell: String, script: String },
}

/// One command (after parameter substitution) and all its runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Benchmark {
    pub name: String,
    /// The command as the user wrote it, parameters substituted.
    pub command: String,
    pub exec: Exec,
    pub parameters: BTreeMap<String, String>,
    /// Shell start-up cost subtracted from `wall_ns` to give `net_wall_ns`.
    pub shell_correction_ns: u64,
    pub runs: Vec<Run>,
    /// Statistics of `net_wall_ns` over the counted runs, in seconds.
    pub summary: Option<Summary>,
    /// The count metrics over the counted runs, in `options.metrics` order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counts: Vec<CountSummary>,
    pub resources: Option<ResourceSummary>,
    pub warnings: Vec<Warning>,
}

/// One execution of a command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Round number (0-based); in interleaved mode every command runs once per round.
    pub round: u64,
    /// Position of this run in the whole session's execution order.
    pub seq: u64,
    pub warmup: bool,
    /// Unix time in nanoseconds just before the spawn.
    pub started_at_ns: u64,
    /// Monotonic wall time from just before spawn to the return of wait4.
    pub wall_ns: u64,
    /// `wall_ns` minus the shell correction, clamped at 0.
    pub net_wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// The run did not end in an accepted way (non-zero exit not ignored,
    /// a signal, or a timeout). Failed runs are excluded from statistics
    /// unless `include_failures_in_stats`.
    pub failed: bool,
    /// Processes the run left behind after the command exited (killed unless
    /// `--keep-stragglers`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stragglers: Vec<Straggler>,
    /// The run's counts (instructions, cycles), when `--metric` asked for them.
    /// With cachegrind they come from a run of their own right after this
    /// one (its wall time is not this run's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<Counts>,
}

impl Run {
    /// Whether the run enters the statistics of its benchmark.
    pub fn counted(&self, include_failures: bool) -> bool {
        !self.warmup && !self.timed_out && (include_failures || !self.failed)
    }
}

/// How a benchmark's non-warm-up runs ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunCounts {
    pub measured: u64,
    /// Failed without timing out.
    pub failed: u64,
    pub timed_out: u64,
}

impl RunCounts {
    pub fn of(runs: &[Run]) -> RunCounts {
        runs.iter()
            .filter(|r| !r.warmup)
            .fold(RunCounts::default(), |mut c, r| {
                c.measured += 1;
                c.timed_out += r.timed_out as u64;
                c.failed += (r.failed && !r.timed_out) as u64;
                c
            })
    }
}

/// Resource use over the counted runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceSummary {
    pub user_mean_s: f64,
    pub sys_mean_s: f64,
    pub max_rss_median_kib: u64,
    pub max_rss_max_kib: u64,
    pub voluntary_cs_mean: f64,
    pub involuntary_cs_mean: f64,
    pub runs_failed: u64,
    pub runs_timed_out: u64,
}

/// Something about the runs a careful reader must know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The first counted run was far slower than the rest (cold caches).
    SlowFirstRun {
        score: f64,
        first_s: f64,
        median_s: f64,
    },
    /// Runs far from the median.
    Outliers { count: u64, extreme: u64, runs: u64 },
    /// Coefficient of variation above 5%.
    HighSpread { cv: f64 },
    /// Runs so short that process creation dominates them.
    ShortRuns { median_s: f64, spawn_floor_s: f64 },
    /// The times drift over the run sequence.
    Trend { trend: Trend },
    /// Some runs failed or timed out and were excluded.
    FailedRuns {
        failed: u64,
        timed_out: u64,
        runs: u64,
    },
    /// Runs that failed, counted in the statistics (`--ignore-failure`):
    /// their times may be an error path's, not the program's.
    FailuresCounted { failed: u64, runs: u64 },
    /// The precision target was not reached before a limit; at the spread
    /// seen, about `runs_needed` runs (`seconds_needed` of this command's run
    /// time) would reach it.
    PrecisionNotReached {
        achieved: f64,
        target: f64,
        #[serde(default)]
        runs_needed: u64,
        #[serde(default)]
        seconds_needed: f64,
    },
    /// Runs left processes behind after the command exited.
    Stragglers {
        runs: u64,
        processes: u64,
        /// The first one: "sleep, pid 4242".
        example: String,
        killed: bool,
    },
}

/// The shell start-up cost measured before the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShellCorrection {
    pub shell: String,
    pub runs: u64,
    /// Medians over the calibration runs of `SHELL -c ''`.
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
}

/// tardy's own cost (the observer effect, seed 003).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    /// Program used to measure the spawn floor (e.g. /usr/bin/true).
    pub noop_program: Option<String>,
    /// Median wall time of running a no-op program: the smallest time tardy
    /// can report on this machine, mostly the kernel's fork/exec/exit cost.
    pub spawn_floor_ns: Option<u64>,
    /// Mean time per run that tardy spends outside the timed window
    /// (scheduling, bookkeeping, saving, progress), in nanoseconds.
    pub between_runs_ns: u64,
    /// tardy's own CPU time (user + system) during the measuring phase.
    pub self_cpu_ns: u64,
    /// `self_cpu_ns` divided by the number of runs.
    pub self_cpu_per_run_ns: u64,
    /// Wall time of the measuring phase (warm-ups included, calibration not).
    pub measuring_wall_ns: u64,
    /// Calibration time (spawn floor and shell), in nanoseconds.
    pub calibration_wall_ns: u64,
}

/// A candidate against the reference (the first benchmark).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Index into `benchmarks` of the reference.
    pub reference: usize,
    /// Index into `benchmarks` of the candidate.
    pub candidate: usize,
    /// `None` with `error` set when the two could not be compared.
    pub estimate: Option<Estimate>,
    pub error: Option<String>,
    /// The metric compared: absent for wall time, else `instructions`,
    /// `cycles` or `estimated-cycles`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Every run of both sides gave the same count: the difference is exact
    /// (no test, `p_value` is null).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

/// A process a run left behind.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Straggler {
    pub pid: i32,
    /// Its command name (`/proc/PID/comm`).
    pub comm: String,
    /// tardy killed it (the default; `--keep-stragglers` leaves it alive).
    pub killed: bool,
}
