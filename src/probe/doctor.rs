//! Running the probes of `tardy doctor`: which exist, in what order, with what
//! budget. Probes run one at a time and nothing else of tardy runs meanwhile.

use std::path::PathBuf;

use super::result::{DoctorReport, ProbeResult, SCHEMA, SCHEMA_VERSION};
use super::sample::{Budget, now_ns};
use super::{Fingerprint, counters, cpu, io, process, sched, timers};

/// Every probe id with what it measures, in the order they run.
pub const PROBES: &[(&str, &str)] = &[
    (
        "sleep",
        "sleep granularity: clock_nanosleep 1 ms / 100 µs overshoot, sleep(0), yield",
    ),
    ("clock", "clock read cost: vDSO against a raw system call"),
    ("syscall", "null system call (getppid) and a 1-byte read"),
    (
        "ctxswitch",
        "wake-up latency: pipe ping-pong, threads and processes, 1 and 2 CPUs",
    ),
    ("locks", "lock hand-off: mutex + condvar, spin-then-park"),
    (
        "spawn",
        "spawn cost of a tiny and a large binary, fork + exec",
    ),
    (
        "first-exec",
        "first exec of a freshly written binary against the second",
    ),
    ("fork", "fork cost with 0, 64 and 512 MiB touched"),
    (
        "pause",
        "spin-wait hint latency (PAUSE / YIELD) in cycles and ns",
    ),
    (
        "frequency",
        "effective CPU frequency in 1 ms slices, and ramp-up",
    ),
    (
        "contention",
        "CPU share, steal, cgroup throttling under an all-CPU busy loop",
    ),
    ("fsync", "4 KiB write + fdatasync / fsync latency in --dir"),
    ("metadata", "create / stat / unlink of small files in --dir"),
    (
        "counters",
        "instruction counters: a hardware PMU, or valgrind's cachegrind",
    ),
];

#[derive(Debug, Clone)]
pub struct Options {
    pub quick: bool,
    /// Probe ids to run; `None` runs them all.
    pub only: Option<Vec<String>>,
    /// Directory for the I/O and first-exec probes.
    pub dir: PathBuf,
}

/// The probe ids of a comma-separated list, checked.
pub fn parse_only(list: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !PROBES.iter().any(|(p, _)| *p == id) {
            let known: Vec<&str> = PROBES.iter().map(|(p, _)| *p).collect();
            return Err(format!(
                "unknown probe '{id}'; the probes are {}",
                known.join(", ")
            ));
        }
        out.push(id.to_string());
    }
    if out.is_empty() {
        return Err("--only needs at least one probe".into());
    }
    Ok(out)
}

fn run_one(id: &str, budget: &Budget, opts: &Options) -> ProbeResult {
    match id {
        "sleep" => timers::sleep(budget),
        "clock" => timers::clock(budget),
        "syscall" => timers::syscall(budget),
        "ctxswitch" => sched::ctxswitch(budget),
        "locks" => sched::locks(budget),
        "spawn" => process::spawn(budget),
        "first-exec" => process::first_exec(budget, &opts.dir),
        "fork" => process::fork(budget, budget.pick(&[0, 64, 512][..], &[0, 64][..])),
        "pause" => cpu::pause(budget),
        "frequency" => cpu::frequency(budget),
        "contention" => sched::contention(budget),
        "fsync" => io::fsync(budget, &opts.dir),
        "metadata" => io::metadata(budget, &opts.dir),
        "counters" => counters::counters(),
        other => {
            let mut r = ProbeResult::new(other, other);
            r.unavailable = Some("no such probe".into());
            r
        }
    }
}

/// Run the selected probes in order; `progress(id, index, total)` is called before each.
pub fn run(opts: &Options, mut progress: impl FnMut(&str, usize, usize)) -> DoctorReport {
    let t0 = now_ns();
    let taken_at_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let machine = Fingerprint::capture();
    let budget = Budget::new(opts.quick);
    let ids: Vec<&str> = PROBES
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| opts.only.as_ref().is_none_or(|o| o.iter().any(|x| x == id)))
        .collect();
    let mut probes = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        progress(id, i, ids.len());
        let start = now_ns();
        let mut r = run_one(id, &budget, opts);
        r.elapsed_s = (now_ns() - start) as f64 / 1e9;
        probes.push(r);
    }
    let mut machine = machine;
    machine.load_avg_after = super::fingerprint::load_average();
    DoctorReport {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        tardy_version: env!("CARGO_PKG_VERSION").to_string(),
        taken_at_ns,
        quick: opts.quick,
        dir: Some(opts.dir.display().to_string()),
        machine,
        probes,
        elapsed_s: (now_ns() - t0) as f64 / 1e9,
    }
}
