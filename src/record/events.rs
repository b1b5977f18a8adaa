//! One run's timeline, kept when asked (`tardy explain --export-trace`):
//! every thread's slices (on a CPU, waiting for one, each wait with its
//! kind), the wake-ups from one thread of the tree to another, and the
//! critical path as segments of threads. The kernel-event recorder's
//! [`Timeline`](super::kernel::timeline::Timeline) fills it as it applies
//! events; `render::perfetto` writes it for ui.perfetto.dev.
//!
//! It is bounded: past [`MAX_SLICES`] slices or [`MAX_EDGES`] path edges
//! it stops growing and says so (`truncated`), and the critical path is
//! then left out rather than drawn wrong.

use super::{Doing, Kind};

/// Slices a run keeps (about 32 bytes each).
pub const MAX_SLICES: usize = 500_000;
/// Wake-ups drawn as arrows a run.
pub const MAX_FLOWS: usize = 200_000;
/// Edges of the wake-up graph kept for the critical path (every fork and
/// every wake-up from the tree).
pub const MAX_EDGES: usize = 2_000_000;

/// What a thread did during a slice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    pub tid: i32,
    /// What the critical path counts this time as.
    pub doing: Doing,
    /// The kind of wait, for waits.
    pub kind: Option<Kind>,
    /// From the command's start, ns.
    pub start: u64,
    pub dur: u64,
    /// The time a sleep or timeout asked for, ns (0: none).
    pub asked: u64,
}

/// A thread of the tree woke another: the arrow Perfetto draws.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flow {
    pub waker: i32,
    pub wakee: i32,
    pub at: u64,
}

/// A thread (`tid`) whose path became another's (`from`) at `at`: a
/// wake-up from the tree, or its creation by `from`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub tid: i32,
    pub from: i32,
    pub at: u64,
}

/// One run's timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventLog {
    pub slices: Vec<Slice>,
    pub flows: Vec<Flow>,
    pub edges: Vec<Edge>,
    /// (tid, pid, start): every thread seen.
    pub threads: Vec<(i32, i32, u64)>,
    /// (pid, command line): every process seen.
    pub processes: Vec<(i32, String)>,
    /// The critical path, latest segment last: (tid, start, end).
    pub path: Vec<(i32, u64, u64)>,
    /// From the command's start to the exit of its last thread, ns.
    pub wall_ns: u64,
    /// Slices, arrows or edges were left out past the caps.
    pub truncated: bool,
}

impl Doing {
    /// The category of `tardy explain`'s table this time counts in
    /// ("cpu" is user and system together).
    pub fn category(self) -> &'static str {
        match self {
            Doing::Cpu => "cpu",
            Doing::RunQueue => "run-queue",
            Doing::Creation => "process-creation",
            Doing::TimedWait => "timed-sleep",
            Doing::LockWait => "lock-wait",
            Doing::EventWait => "event-wait",
            Doing::ChildWait => "child-wait",
            Doing::BlockIo => "io-wait",
            Doing::Fsync => "fsync",
            Doing::Unknown => "other",
        }
    }
}

impl EventLog {
    /// A slice; a thread's running slices that meet are joined.
    pub fn slice(&mut self, s: Slice) {
        if s.dur == 0 {
            return;
        }
        if let Some(last) = self.slices.last_mut()
            && last.tid == s.tid
            && last.doing == s.doing
            && last.kind.is_none()
            && s.kind.is_none()
            && last.start + last.dur == s.start
        {
            last.dur += s.dur;
            return;
        }
        if self.slices.len() >= MAX_SLICES {
            self.truncated = true;
            return;
        }
        self.slices.push(s);
    }

    /// A stretch on a CPU, waiting for one, or starting a program.
    pub fn stretch(&mut self, tid: i32, doing: Doing, start: u64, dur: u64) {
        self.slice(Slice {
            tid,
            doing,
            kind: None,
            start,
            dur,
            asked: 0,
        });
    }

    pub fn flow(&mut self, f: Flow) {
        if self.flows.len() >= MAX_FLOWS {
            self.truncated = true;
            return;
        }
        self.flows.push(f);
    }

    pub fn edge(&mut self, e: Edge) {
        if self.edges.len() >= MAX_EDGES {
            self.truncated = true;
            return;
        }
        self.edges.push(e);
    }

    /// Walk the critical path back from thread `last` at `end` (the exit
    /// of the command's last thread): along the thread to the latest edge
    /// into it, then to the thread it came from at that moment, and so on
    /// to a thread that nothing before it started.
    pub fn walk_path(&mut self, last: i32, end: u64) {
        self.path.clear();
        if self.edges.len() >= MAX_EDGES {
            return;
        }
        // Edges of each thread, in time order (they were added so).
        let mut by_tid: std::collections::HashMap<i32, Vec<(u64, i32)>> =
            std::collections::HashMap::new();
        for e in &self.edges {
            by_tid.entry(e.tid).or_default().push((e.at, e.from));
        }
        let start_of = |tid: i32| self.threads.iter().find(|t| t.0 == tid).map_or(0, |t| t.2);
        let (mut tid, mut t) = (last, end);
        // Each step goes strictly back in time or to an earlier edge.
        for _ in 0..=self.edges.len() {
            let edges = by_tid.get(&tid).map(Vec::as_slice).unwrap_or(&[]);
            let i = edges.partition_point(|(at, _)| *at <= t);
            match i.checked_sub(1).map(|i| edges[i]) {
                Some((at, from)) => {
                    self.path.push((tid, at, t));
                    // An edge at the same moment must not be taken twice.
                    if let Some(v) = by_tid.get_mut(&tid) {
                        v.truncate(i - 1);
                    }
                    tid = from;
                    t = at;
                }
                None => {
                    self.path.push((tid, start_of(tid).min(t), t));
                    break;
                }
            }
        }
        self.path.reverse();
        self.path.retain(|s| s.2 > s.1);
    }

    /// The critical path as slices: each segment cut by what its thread
    /// was doing then (its own waits are on the path only where nothing
    /// in the tree ended them: a wake-up from the tree jumps to the waker).
    pub fn path_slices(&self) -> Vec<Slice> {
        let mut by_tid: std::collections::HashMap<i32, Vec<&Slice>> =
            std::collections::HashMap::new();
        for s in &self.slices {
            by_tid.entry(s.tid).or_default().push(s);
        }
        let mut out = Vec::new();
        for &(tid, a, b) in &self.path {
            let Some(list) = by_tid.get(&tid) else {
                continue;
            };
            let from = list.partition_point(|s| s.start + s.dur <= a);
            for s in &list[from..] {
                if s.start >= b {
                    break;
                }
                let (x, y) = (s.start.max(a), (s.start + s.dur).min(b));
                if y > x {
                    out.push(Slice {
                        start: x,
                        dur: y - x,
                        ..**s
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(tid: i32, doing: Doing, start: u64, end: u64) -> Slice {
        Slice {
            tid,
            doing,
            kind: None,
            start,
            dur: end - start,
            asked: 0,
        }
    }

    /// Main (1) starts a worker (2) at 10, waits for it on a lock; the
    /// worker computes to 50 and wakes main, which computes to 60.
    #[test]
    fn the_path_follows_the_wake_up_back_to_the_waker() {
        let mut log = EventLog {
            threads: vec![(1, 1, 0), (2, 1, 10)],
            ..EventLog::default()
        };
        log.slice(s(1, Doing::Cpu, 0, 10));
        log.slice(s(2, Doing::Cpu, 10, 50));
        log.slice(Slice {
            kind: Some(Kind::LockWait),
            ..s(1, Doing::LockWait, 10, 50)
        });
        log.slice(s(1, Doing::Cpu, 50, 60));
        log.edge(Edge {
            tid: 2,
            from: 1,
            at: 10,
        });
        log.edge(Edge {
            tid: 1,
            from: 2,
            at: 50,
        });
        log.walk_path(1, 60);
        assert_eq!(log.path, vec![(1, 0, 10), (2, 10, 50), (1, 50, 60)]);
        let on: u64 = log.path_slices().iter().map(|s| s.dur).sum();
        assert_eq!(on, 60);
        assert!(log.path_slices().iter().all(|s| s.doing == Doing::Cpu));
    }

    #[test]
    fn running_slices_that_meet_are_joined_and_caps_hold() {
        let mut log = EventLog::default();
        log.slice(s(1, Doing::Cpu, 0, 10));
        log.slice(s(1, Doing::Cpu, 10, 20));
        assert_eq!(log.slices.len(), 1);
        assert_eq!(log.slices[0].dur, 20);
        for i in 0..MAX_SLICES as u64 + 5 {
            log.slice(s((i % 2) as i32, Doing::RunQueue, 100 + i, 101 + i));
        }
        assert_eq!(log.slices.len(), MAX_SLICES);
        assert!(log.truncated);
    }
}
