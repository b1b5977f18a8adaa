//! One recorded run -> categories that sum to its wall time.
//!
//! Each thread's lifetime splits into the time inside traced syscalls (timed
//! by the recorder: sleeps, waits, process creation, fsync) and the time
//! outside them. The outside part is filled with the thread's CPU time
//! (user/system, from schedstat and stat) and its run-queue delay, scaled
//! down when they exceed it (CPU spent inside a traced syscall, such as the
//! kernel's work in execve, is already counted there); block-I/O delay
//! (delay accounting) then takes from what remains, and the rest is "other".
//!
//! The critical path: while a thread waits for a child process (wait4) or
//! joins a thread, that wait is replaced by the waited-for task's own
//! breakdown, scaled to the length of the wait. Work running in parallel off
//! that path is reported per process, not added to the wall time.

use std::collections::{BTreeMap, HashMap};

use super::*;
use crate::record::{Coverage, Hist, Kind, NBUCKET, NKIND, RecordedRun, TaskRow};

const NS: f64 = 1e9;
/// Deepest chain of waits followed.
const MAX_DEPTH: usize = 256;

fn agg_ns(t: &TaskRow, k: Kind) -> f64 {
    t.aggs[k as usize].total_ns as f64
}

/// The share of CPU time that was user time, tree-wide: the kernel's own
/// accounting as `time` reports it (the command's rusage, its reaped
/// children included); pooled clock ticks when rusage says nothing.
fn tree_user_fraction(run: &RecordedRun) -> f64 {
    let (u, s) = (run.root_user_ns as f64, run.root_sys_ns as f64);
    if u + s > 0.0 {
        return u / (u + s);
    }
    let (tu, ts) = run.tasks.iter().fold((0u64, 0u64), |(a, b), t| {
        (a + t.stats.utime_ticks, b + t.stats.stime_ticks)
    });
    if tu + ts > 0 {
        tu as f64 / (tu + ts) as f64
    } else {
        1.0
    }
}

/// A thread's user share: its own ticks when it has enough of them to
/// mean something, else the tree's.
fn user_fraction(t: &TaskRow, tree: f64) -> f64 {
    let ticks = t.stats.utime_ticks + t.stats.stime_ticks;
    if ticks >= 10 {
        t.stats.utime_ticks as f64 / ticks as f64
    } else {
        tree
    }
}

/// The critical path the recorder computed, as categories (ns).
fn from_path(path: &crate::record::PathTotals, user_frac: f64) -> [f64; NCAT] {
    use crate::record::Doing;
    let mut v = [0.0; NCAT];
    let ns = |d: Doing| path.ns[d as usize] as f64;
    v[CPU_USER] = ns(Doing::Cpu) * user_frac;
    v[CPU_SYSTEM] = ns(Doing::Cpu) * (1.0 - user_frac);
    v[RUN_QUEUE] = ns(Doing::RunQueue);
    v[PROCESS_CREATION] = ns(Doing::Creation);
    v[TIMED_SLEEP] = ns(Doing::TimedWait);
    v[LOCK_WAIT] = ns(Doing::LockWait);
    v[EVENT_WAIT] = ns(Doing::EventWait);
    v[CHILD_WAIT] = ns(Doing::ChildWait);
    v[IO_WAIT] = ns(Doing::BlockIo);
    v[FSYNC] = ns(Doing::Fsync);
    v[OTHER] = ns(Doing::Unknown);
    v
}

/// A thread's own breakdown, summing to its lifetime (ns).
fn own(t: &TaskRow, end_default: u64, tck: u64, tree_uf: f64) -> [f64; NCAT] {
    let end = if t.end_ns > 0 { t.end_ns } else { end_default };
    let life = end.saturating_sub(t.start_ns) as f64;
    let mut v = [0.0; NCAT];
    v[TIMED_SLEEP] = agg_ns(t, Kind::Sleep) + agg_ns(t, Kind::TimeoutExpired);
    v[LOCK_WAIT] = agg_ns(t, Kind::LockWait);
    v[EVENT_WAIT] = agg_ns(t, Kind::EventWait) + agg_ns(t, Kind::PipeRead);
    v[CHILD_WAIT] = agg_ns(t, Kind::ChildWait) + agg_ns(t, Kind::Join);
    v[PROCESS_CREATION] = agg_ns(t, Kind::Fork)
        + agg_ns(t, Kind::Exec)
        + agg_ns(t, Kind::ExecFailed)
        + agg_ns(t, Kind::Load);
    v[FSYNC] = agg_ns(t, Kind::Fsync);
    let traced: f64 = v.iter().sum();
    if traced > life && traced > 0.0 {
        let f = life / traced;
        v.iter_mut().for_each(|x| *x *= f);
    }
    let outside = (life - v.iter().sum::<f64>()).max(0.0);
    let s = &t.stats;
    let cpu = s.cpu_ns as f64;
    let user_frac = user_fraction(t, tree_uf);
    let rq = s.run_delay_ns as f64;
    let scale = if cpu + rq > outside && cpu + rq > 0.0 {
        outside / (cpu + rq)
    } else {
        1.0
    };
    v[CPU_USER] = cpu * user_frac * scale;
    v[CPU_SYSTEM] = cpu * (1.0 - user_frac) * scale;
    v[RUN_QUEUE] = rq * scale;
    let left = (outside - (cpu + rq) * scale).max(0.0);
    let io = s.blkio_ticks as f64 * NS / tck.max(1) as f64;
    v[IO_WAIT] = io.min(left);
    v[OTHER] = left - v[IO_WAIT];
    // The ptrace recorder's sampler saw what the untraced waits were.
    use crate::record::sampler::{DISK, EVENT, PIPE, UNKNOWN};
    let s = &t.sampled;
    let total: u32 = s.iter().sum();
    if total > 0 {
        let rest = v[OTHER];
        let part = |c: usize| rest * s[c] as f64 / total as f64;
        v[EVENT_WAIT] += part(EVENT) + part(PIPE);
        v[IO_WAIT] += part(DISK);
        v[OTHER] = part(UNKNOWN);
    }
    v
}

struct Walk<'a> {
    tasks: &'a [TaskRow],
    by_tid: HashMap<i32, usize>,
    own: Vec<[f64; NCAT]>,
    life: Vec<f64>,
    /// Fraction of each task's lifetime on the critical path.
    weight: Vec<f64>,
    visiting: Vec<bool>,
}

impl Walk<'_> {
    /// The breakdown of task `i` with its waits replaced by what it waited
    /// for; `w` is the fraction of `i`'s lifetime that lies on the path.
    fn path(&mut self, i: usize, w: f64, depth: usize) -> [f64; NCAT] {
        let mut v = self.own[i];
        self.weight[i] += w;
        if depth >= MAX_DEPTH || self.visiting[i] {
            return v;
        }
        self.visiting[i] = true;
        let mut remaining = v[CHILD_WAIT];
        let waits = self.tasks[i].waits.clone();
        for (target, ns) in waits {
            if remaining <= 0.0 {
                break;
            }
            let Some(&j) = self.by_tid.get(&target) else {
                continue;
            };
            if j == i || self.life[j] <= 0.0 {
                continue;
            }
            let amount = (ns as f64).min(remaining).min(self.life[j]);
            let frac = amount / self.life[j];
            let sub = self.path(j, w * frac, depth + 1);
            for (a, b) in v.iter_mut().zip(sub.iter()) {
                *a += b * frac;
            }
            remaining -= amount;
        }
        v[CHILD_WAIT] = remaining;
        self.visiting[i] = false;
        v
    }
}

fn kinds_of(run: &RecordedRun) -> BTreeMap<String, KindTotals> {
    let mut totals = [crate::record::Agg::default(); NKIND];
    for t in &run.tasks {
        for (a, b) in totals.iter_mut().zip(t.aggs.iter()) {
            a.merge(b);
        }
    }
    Kind::ALL
        .iter()
        .zip(totals.iter())
        .filter(|(_, a)| a.count > 0)
        .map(|(k, a)| {
            (
                k.name().to_string(),
                KindTotals {
                    count: a.count,
                    total_s: a.total_ns as f64 / NS,
                    asked_s: a.asked_ns as f64 / NS,
                    slack_s: a.slack_ns as f64 / NS,
                },
            )
        })
        .collect()
}

/// Attribute one recorded run. `tck` is the kernel's clock ticks per second.
pub fn attribute(run: &RecordedRun, tck: u64) -> RunSummary {
    let wall = run.wall_ns as f64;
    let end_default = run.wall_ns;
    let tree_uf = tree_user_fraction(run);
    let own_v: Vec<[f64; NCAT]> = run
        .tasks
        .iter()
        .map(|t| own(t, end_default, tck, tree_uf))
        .collect();
    let life: Vec<f64> = own_v.iter().map(|v| v.iter().sum()).collect();
    let mut walk = Walk {
        tasks: &run.tasks,
        by_tid: run
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tid, i))
            .collect(),
        own: own_v,
        life,
        weight: vec![0.0; run.tasks.len()],
        visiting: vec![false; run.tasks.len()],
    };
    let mut cat = match &run.path {
        Some(p) => from_path(p, tree_uf),
        None if run.tasks.is_empty() => [0.0; NCAT],
        None => walk.path(0, 1.0, 0),
    };
    // The command's lifetime as the tracer saw it vs the wall clock (tardy's
    // own fork and reaping): the difference is "other"; then make the sum exact.
    let sum: f64 = cat.iter().sum();
    if sum < wall {
        cat[OTHER] += wall - sum;
    } else if sum > 0.0 {
        let f = wall / sum;
        cat.iter_mut().for_each(|x| *x *= f);
    }
    let mut categories = BTreeMap::new();
    for (i, name) in CATEGORIES.iter().enumerate() {
        categories.insert(name.to_string(), cat[i] / NS);
    }

    // Whole-tree totals and per-process rows.
    let mut user = 0.0;
    let mut system = 0.0;
    let mut rq = 0.0;
    let mut minflt = 0;
    let mut majflt = 0;
    struct P {
        row: ProcSummary,
    }
    let mut by_pid: HashMap<i32, P> = HashMap::new();
    for (i, t) in run.tasks.iter().enumerate() {
        let s = &t.stats;
        let uf = user_fraction(t, tree_uf);
        let cpu = s.cpu_ns as f64 / NS;
        user += cpu * uf;
        system += cpu * (1.0 - uf);
        rq += s.run_delay_ns as f64 / NS;
        minflt += s.minflt;
        majflt += s.majflt;
        let w = walk.weight[i].min(1.0);
        let p = by_pid.entry(t.tgid).or_insert_with(|| P {
            row: ProcSummary::default(),
        });
        p.row.cpu_user_s += cpu * uf;
        p.row.cpu_system_s += cpu * (1.0 - uf);
        p.row.run_queue_s += s.run_delay_ns as f64 / NS;
        if run.path.is_none() {
            p.row.on_path_s += w * walk.life[i] / NS;
            p.row.off_path_cpu_s += cpu * (1.0 - w);
        } else {
            p.row.off_path_cpu_s += cpu;
        }
    }
    if let Some(path) = &run.path {
        for &(pid, total, on_cpu) in &path.procs {
            if let Some(p) = by_pid.get_mut(&pid) {
                p.row.on_path_s += total as f64 / NS;
                p.row.off_path_cpu_s = (p.row.off_path_cpu_s - on_cpu as f64 / NS).max(0.0);
            }
        }
    }
    // The kernel-event recorder reads no per-thread /proc files: page faults
    // come from the command's rusage (its reaped children included).
    if run.path.is_some() {
        minflt = run.root_minflt;
        majflt = run.root_majflt;
    }
    // Untraced runs: the command's rusage is the better CPU figure.
    if matches!(run.coverage, Some(Coverage::Untraced(_))) {
        user = run.root_user_ns as f64 / NS;
        system = run.root_sys_ns as f64 / NS;
        minflt = run.root_minflt;
        majflt = run.root_majflt;
        let total = user + system;
        if total > 0.0 {
            // Split the path's CPU as rusage splits it.
            let cpu = cat[CPU_USER] + cat[CPU_SYSTEM];
            categories.insert("cpu-user".into(), cpu * user / total / NS);
            categories.insert("cpu-system".into(), cpu * system / total / NS);
        }
    }
    let mut by_command: BTreeMap<String, Vec<ProcSummary>> = BTreeMap::new();
    let mut files: BTreeMap<String, ExecFile> = BTreeMap::new();
    for pr in &run.procs {
        let Some(p) = by_pid.remove(&pr.pid) else {
            continue;
        };
        let command = if pr.command.is_empty() {
            format!("pid {}", pr.pid)
        } else {
            pr.command.clone()
        };
        let end = if pr.end_ns > 0 {
            pr.end_ns
        } else {
            run.wall_ns
        };
        by_command
            .entry(command.clone())
            .or_default()
            .push(ProcSummary {
                command,
                pid: Some(pr.pid),
                count: 1,
                lifetime_s: end.saturating_sub(pr.start_ns) as f64 / NS,
                ..p.row
            });
        if pr.execs > 0 && !pr.exe.is_empty() {
            let start_ns: u64 = run
                .tasks
                .iter()
                .filter(|t| t.tgid == pr.pid)
                .map(|t| {
                    t.aggs[Kind::Exec as usize].total_ns + t.aggs[Kind::Load as usize].total_ns
                })
                .sum();
            let f = files.entry(pr.exe.clone()).or_default();
            f.file = pr.exe.clone();
            f.size_bytes = pr.exe_size.or(f.size_bytes);
            f.count += pr.execs as u64;
            f.start_s += start_ns as f64 / NS;
        }
    }
    let mut process_rows: Vec<ProcSummary> = by_command
        .into_values()
        .flat_map(|rows| {
            if rows.len() <= super::COLLAPSE_OVER {
                return rows;
            }
            let mut m = ProcSummary {
                command: rows[0].command.clone(),
                ..ProcSummary::default()
            };
            for r in &rows {
                m.count += 1;
                m.cpu_user_s += r.cpu_user_s;
                m.cpu_system_s += r.cpu_system_s;
                m.run_queue_s += r.run_queue_s;
                m.on_path_s += r.on_path_s;
                m.off_path_cpu_s += r.off_path_cpu_s;
                m.lifetime_s += r.lifetime_s;
            }
            vec![m]
        })
        .collect();
    process_rows.sort_by(|a, b| {
        let ka = a.cpu_user_s + a.cpu_system_s + a.on_path_s;
        let kb = b.cpu_user_s + b.cpu_system_s + b.on_path_s;
        kb.total_cmp(&ka)
    });
    process_rows.truncate(30);
    let mut exec_files: Vec<ExecFile> = files.into_values().collect();
    exec_files.sort_by(|a, b| b.start_s.total_cmp(&a.start_s));
    exec_files.truncate(10);
    let execs = run.procs.iter().map(|p| p.execs as u64).sum();
    let cpu_all: u64 = run.tasks.iter().map(|t| t.stats.cpu_ns).sum();
    // Threads that hand a lock to each other park often: at least 50 lock
    // waits a second of their CPU (a runtime's workers park a few times at
    // start and end; its idle threads park but hardly run).
    let cpu_locking: u64 = run
        .tasks
        .iter()
        .filter(|t| {
            let waits = t.aggs[Kind::LockWait as usize].count as f64;
            waits >= 20.0 && waits >= 50.0 * t.stats.cpu_ns as f64 / NS
        })
        .map(|t| t.stats.cpu_ns)
        .sum();
    RunSummary {
        wall_s: wall / NS,
        exit_code: run.exit_code,
        signal: run.signal,
        categories,
        syscalls: kinds_of(run),
        cpu_user_s: user,
        cpu_system_s: system,
        run_queue_s: rq,
        minor_faults: minflt,
        major_faults: majflt,
        processes: run.procs.len() as u64,
        threads: run.tasks.len() as u64 + run.tasks_merged,
        execs,
        stops: run.stops,
        lost_events: run.lost_events,
        steal_s: run.steal_ns.map(|n| n as f64 / NS),
        exec_files,
        process_rows,
        lock_thread_cpu_share: if cpu_all > 0 {
            cpu_locking as f64 / cpu_all as f64
        } else {
            0.0
        },
        stragglers: run
            .stragglers
            .iter()
            .map(|(pid, cmd, killed)| {
                format!(
                    "pid {pid} {cmd}{}",
                    if *killed {
                        " (killed at the time limit)"
                    } else {
                        ""
                    }
                )
            })
            .collect(),
    }
}

/// Histograms of all runs in their saved form.
pub fn histograms(hists: &[Hist; NKIND]) -> BTreeMap<String, Histogram> {
    Kind::ALL
        .iter()
        .zip(hists.iter())
        .filter(|(_, h)| h.0.iter().any(|&c| c > 0))
        .map(|(k, h)| {
            let buckets = (0..NBUCKET)
                .filter(|&i| h.0[i] > 0)
                .map(|i| [if i == 0 { 0 } else { 1u64 << i }, h.0[i]])
                .collect();
            (
                k.name().to_string(),
                Histogram {
                    count: h.0.iter().sum(),
                    buckets,
                },
            )
        })
        .collect()
}

/// A set of attributed runs as a trace.
pub fn build_trace(
    command: &str,
    runs: Vec<RunSummary>,
    hists: &[Hist; NKIND],
    coverage: Option<&Coverage>,
    mut overhead: Overhead,
    machine: crate::probe::fingerprint::Fingerprint,
    interrupted: bool,
) -> Trace {
    let n = runs.len().max(1) as f64;
    let wall_s = runs.iter().map(|r| r.wall_s).sum::<f64>() / n;
    let mut categories = BTreeMap::new();
    for name in CATEGORIES {
        let m = runs
            .iter()
            .map(|r| r.categories.get(name).copied().unwrap_or(0.0))
            .sum::<f64>()
            / n;
        categories.insert(name.to_string(), m);
    }
    overhead.stops_per_run = runs.iter().map(|r| r.stops as f64).sum::<f64>() / n;
    if overhead.recorder == "kernel-events" {
        let lost = runs.iter().map(|r| r.lost_events as f64).sum::<f64>();
        let read = runs.iter().map(|r| r.stops as f64).sum::<f64>();
        overhead.events_per_run = read / n;
        overhead.dropped_events_per_run = lost / n;
        overhead.dropped_share = if lost + read > 0.0 {
            lost / (lost + read)
        } else {
            0.0
        };
    }
    if let Some(c) = overhead.stop_cost_ns {
        overhead.estimate_s = overhead.stops_per_run / 2.0 * c as f64 / NS;
        overhead.fraction = if wall_s > 0.0 {
            overhead.estimate_s / wall_s
        } else {
            0.0
        };
    }
    let (coverage, note) = match coverage {
        Some(Coverage::Full) | None => ("full", None),
        Some(Coverage::NoSyscalls(w)) => ("no-syscalls", Some(w.clone())),
        Some(Coverage::Untraced(w)) => ("untraced", Some(w.clone())),
    };
    Trace {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tardy_version: env!("CARGO_PKG_VERSION").into(),
        command: command.into(),
        coverage: coverage.into(),
        coverage_note: note,
        wall_s,
        categories,
        runs,
        histograms: histograms(hists),
        overhead,
        machine,
        interrupted,
        profile: None,
        profile_note: None,
        timeline: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{Agg, ThreadStats};

    fn task(tid: i32, start: u64, end: u64) -> TaskRow {
        TaskRow {
            tid,
            tgid: tid,
            start_ns: start,
            end_ns: end,
            ..TaskRow::default()
        }
    }

    #[test]
    fn categories_sum_to_wall_and_follow_the_wait() {
        // Parent lives 0..1000 ms, waits 900 ms for child (100..1000) that
        // sleeps 800 ms and computes 100 ms.
        let mut parent = task(1, 0, 1_000_000_000);
        parent.aggs[Kind::ChildWait as usize] = Agg {
            count: 1,
            total_ns: 900_000_000,
            asked_ns: 0,
            slack_ns: 0,
        };
        parent.waits.push((2, 900_000_000));
        parent.stats = ThreadStats {
            cpu_ns: 50_000_000,
            utime_ticks: 5,
            ..ThreadStats::default()
        };
        let mut child = task(2, 100_000_000, 1_000_000_000);
        child.aggs[Kind::Sleep as usize] = Agg {
            count: 800,
            total_ns: 800_000_000,
            asked_ns: 80_000_000,
            slack_ns: 0,
        };
        child.stats = ThreadStats {
            cpu_ns: 100_000_000,
            utime_ticks: 10,
            ..ThreadStats::default()
        };
        let run = RecordedRun {
            wall_ns: 1_010_000_000,
            tasks: vec![parent, child],
            ..RecordedRun::default()
        };
        let s = attribute(&run, 100);
        let total: f64 = s.categories.values().sum();
        assert!((total - 1.01).abs() < 1e-9, "{total}");
        let c = s.cat();
        assert!((c[TIMED_SLEEP] - 0.8).abs() < 1e-9, "{c:?}");
        assert!(c[CHILD_WAIT].abs() < 1e-9);
        assert!((c[CPU_USER] - 0.15).abs() < 1e-9, "{c:?}");
        assert!((c[OTHER] - 0.06).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn a_wait_cycle_or_unknown_target_cannot_loop() {
        let mut a = task(1, 0, 100);
        a.aggs[Kind::Join as usize].total_ns = 100;
        a.waits.push((2, 100));
        let mut b = task(2, 0, 100);
        b.aggs[Kind::Join as usize].total_ns = 100;
        b.waits.push((1, 100));
        b.waits.push((99, 5));
        let run = RecordedRun {
            wall_ns: 100,
            tasks: vec![a, b],
            ..RecordedRun::default()
        };
        let s = attribute(&run, 100);
        let total: f64 = s.categories.values().sum();
        assert!((total - 100e-9).abs() < 1e-15);
    }
}
