//! A run's timeline as Chrome's trace-event JSON, which ui.perfetto.dev
//! and chrome://tracing open as they are: one track per thread, grouped by
//! process (named by its command line); a slice for every stretch on a
//! CPU, waiting for one, starting a program, and each wait (its kind, and
//! the time a sleep asked for); an arrow from each thread of the tree that
//! woke another to the one it woke; and, on its own track first, the
//! critical path: the chain of threads and what each was doing that the
//! run's wall time is made of, the same breakdown `tardy explain` prints.
//!
//! The format: <https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU>
//! ("X" complete events in microseconds, "M" metadata for names, "s"/"f"
//! flow events bound to their enclosing slices).

use std::collections::HashMap;
use std::io::Write;

use serde_json::json;

use crate::record::events::{EventLog, Slice};

/// The pid of the critical path's own track (first in Perfetto's list).
const PATH_PID: i32 = 0;

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn label(s: &Slice) -> String {
    match s.kind {
        Some(k) if s.asked > 0 => format!(
            "{} (asked {})",
            k.name(),
            crate::fmt::dur(s.asked as f64 / 1e9)
        ),
        Some(k) => k.name().to_string(),
        None => match s.doing.category() {
            "cpu" => "running".into(),
            "run-queue" => "waiting for a CPU".into(),
            "process-creation" => "starting (exec, loader)".into(),
            other => other.into(),
        },
    }
}

/// Write `log` (a run of `command`) as trace-event JSON.
pub fn write(log: &EventLog, command: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let pid_of: HashMap<i32, i32> = log.threads.iter().map(|t| (t.0, t.1)).collect();
    let names: HashMap<i32, &str> = log
        .processes
        .iter()
        .map(|(p, c)| (*p, c.as_str()))
        .collect();
    let proc_name = |pid: i32| {
        let c = names.get(&pid).copied().unwrap_or("");
        let c = if c.is_empty() { command } else { c };
        let c: String = c.chars().take(80).collect();
        format!("{c} [{pid}]")
    };
    out.write_all(b"{\"displayTimeUnit\":\"ms\",\"otherData\":")?;
    serde_json::to_writer(
        &mut *out,
        &json!({
            "command": command,
            "wall_ms": log.wall_ns as f64 / 1e6,
            "truncated": log.truncated,
            "made_by": format!("tardy {}", env!("CARGO_PKG_VERSION")),
        }),
    )?;
    out.write_all(b",\"traceEvents\":[\n")?;
    let mut first = true;
    let mut emit = |out: &mut dyn Write, v: serde_json::Value| -> std::io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(out, &v).map_err(std::io::Error::from)
    };
    emit(
        out,
        json!({"ph": "M", "name": "process_name", "pid": PATH_PID, "tid": PATH_PID,
               "args": {"name": "critical path"}}),
    )?;
    emit(
        out,
        json!({"ph": "M", "name": "process_sort_index", "pid": PATH_PID, "tid": PATH_PID,
               "args": {"sort_index": -1}}),
    )?;
    let mut pids: Vec<i32> = pid_of.values().copied().collect();
    pids.sort_unstable();
    pids.dedup();
    for &pid in &pids {
        emit(
            out,
            json!({"ph": "M", "name": "process_name", "pid": pid, "tid": pid,
                   "args": {"name": proc_name(pid)}}),
        )?;
    }
    for &(tid, pid, _) in &log.threads {
        let name = if tid == pid {
            format!("main [{tid}]")
        } else {
            format!("thread [{tid}]")
        };
        emit(
            out,
            json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                   "args": {"name": name}}),
        )?;
    }
    for s in &log.slices {
        let pid = pid_of.get(&s.tid).copied().unwrap_or(s.tid);
        let mut args = json!({"category": s.doing.category()});
        if s.asked > 0 {
            args["asked_us"] = json!(us(s.asked));
        }
        emit(
            out,
            json!({"ph": "X", "name": label(s), "cat": s.doing.category(), "pid": pid,
                   "tid": s.tid, "ts": us(s.start), "dur": us(s.dur), "args": args}),
        )?;
    }
    for s in log.path_slices() {
        let pid = pid_of.get(&s.tid).copied().unwrap_or(s.tid);
        emit(
            out,
            json!({"ph": "X", "name": format!("{}: {}", s.doing.category(), proc_name(pid)),
                   "cat": "critical-path", "pid": PATH_PID, "tid": PATH_PID,
                   "ts": us(s.start), "dur": us(s.dur),
                   "args": {"category": s.doing.category(), "thread": s.tid, "pid": pid,
                            "what": label(&s)}}),
        )?;
    }
    for (id, f) in log.flows.iter().enumerate() {
        let (pw, pe) = (
            pid_of.get(&f.waker).copied().unwrap_or(f.waker),
            pid_of.get(&f.wakee).copied().unwrap_or(f.wakee),
        );
        emit(
            out,
            json!({"ph": "s", "name": "wakes", "cat": "wake-up", "id": id, "pid": pw,
                   "tid": f.waker, "ts": us(f.at)}),
        )?;
        emit(
            out,
            json!({"ph": "f", "bp": "e", "name": "wakes", "cat": "wake-up", "id": id,
                   "pid": pe, "tid": f.wakee, "ts": us(f.at)}),
        )?;
    }
    out.write_all(b"\n]}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::events::{Edge, Flow};
    use crate::record::{Doing, Kind};

    #[test]
    fn a_timeline_becomes_trace_events_with_its_path_and_arrows() {
        let mut log = EventLog {
            threads: vec![(10, 10, 0), (11, 10, 5_000)],
            processes: vec![(10, "server --port 80".into())],
            wall_ns: 30_000,
            ..EventLog::default()
        };
        let sl = |tid, doing, kind, start, end| Slice {
            tid,
            doing,
            kind,
            start,
            dur: end - start,
            asked: 0,
        };
        log.slice(sl(10, Doing::Cpu, None, 0, 5_000));
        log.slice(sl(11, Doing::Cpu, None, 5_000, 25_000));
        log.slice(sl(10, Doing::LockWait, Some(Kind::LockWait), 5_000, 25_000));
        log.slice(sl(10, Doing::Cpu, None, 25_000, 30_000));
        log.edge(Edge {
            tid: 11,
            from: 10,
            at: 5_000,
        });
        log.edge(Edge {
            tid: 10,
            from: 11,
            at: 25_000,
        });
        log.flow(Flow {
            waker: 11,
            wakee: 10,
            at: 25_000,
        });
        log.walk_path(10, 30_000);
        let mut buf = Vec::new();
        write(&log, "server --port 80", &mut buf).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        let ev = v["traceEvents"].as_array().unwrap();
        let path: f64 = ev
            .iter()
            .filter(|e| e["cat"] == "critical-path")
            .map(|e| e["dur"].as_f64().unwrap())
            .sum();
        assert_eq!(path, 30.0);
        assert!(ev.iter().any(|e| e["ph"] == "s" && e["tid"] == 11));
        assert!(ev.iter().any(|e| e["ph"] == "f" && e["tid"] == 10));
        assert!(
            ev.iter().any(
                |e| e["name"] == "process_name" && e["args"]["name"] == "server --port 80 [10]"
            )
        );
        assert!(ev.iter().any(|e| e["name"] == "futex-wait"));
    }
}
