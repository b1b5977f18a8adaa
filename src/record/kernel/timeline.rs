//! The kernel-event recorder's model of a run: every thread's state (on a
//! CPU, runnable, blocked and where), and the critical path, computed as
//! the events arrive.
//!
//! The critical path is a forward pass over the wake-up graph. Each thread
//! carries the breakdown of the path that leads to "this thread, now": it
//! grows by what the thread does (CPU, waiting for a CPU, a wait that
//! something outside the tree ended: a timer, a disk, another program).
//! When a thread of the tree wakes another (a futex hand-off, a pipe write,
//! a child's exit waking `wait4`, make's jobserver), the woken thread's path
//! becomes the waker's path at that moment: its own wait is not on the
//! path, the waker's work is. When the command's last thread exits, its
//! path is the run's. The same edges walked backwards from the exit give
//! the same path (wPerf, OSDI 2018; WPA's "readying thread"); walking them
//! forwards keeps only a fixed-size vector per thread, never a record per
//! event.

use foldhash::{HashMap, HashMapExt};

use super::ksyms::Site;
use crate::record::events::{Edge, EventLog, Flow, Slice};
use crate::record::{
    Agg, Doing, Hist, Kind, MAX_PROCS, MAX_TASKS, NDOING, NKIND, PathTotals, ProcRow, TaskRow,
    push_bounded,
};

/// Processes a path remembers by name; the rest share one bucket.
const PATH_PROCS: usize = 16;

/// One event, as the recorder parsed it. Times are CLOCK_MONOTONIC ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ev {
    Fork {
        parent: i32,
        child: i32,
        child_pid: i32,
    },
    Exit {
        tid: i32,
    },
    Exec {
        tid: i32,
        old_tid: i32,
        file: u32,
        loader: bool,
    },
    SwitchOut {
        tid: i32,
        preempt: bool,
    },
    SwitchIn {
        tid: i32,
    },
    /// The sched_switch tracepoint of a thread that blocks: where, and
    /// whether uninterruptibly (D).
    Block {
        tid: i32,
        site: Site,
        d_state: bool,
    },
    Waking {
        waker: i32,
        wakee: i32,
        irq: bool,
    },
    /// A sleeping timer armed by `tid`: soft and hard expiry (CLOCK_MONOTONIC).
    TimerArm {
        tid: i32,
        soft: u64,
        hard: u64,
    },
    FsyncEnter {
        tid: i32,
    },
    FsyncExit {
        tid: i32,
    },
    /// The dynamic loader finished a stage (uprobe on `_dl_debug_state`).
    LoaderHit {
        tid: i32,
    },
    /// For the profile (the timeline ignores these): an executable mapping
    /// of a module (interned by the profile's collector).
    Mapped {
        pid: i32,
        start: u64,
        len: u64,
        pgoff: u64,
        module: u32,
    },
    /// An exec began: the old program's mappings are gone.
    ExecBegins {
        pid: i32,
    },
    /// A new process: it starts with its parent's mappings.
    Forked {
        parent_pid: i32,
        child_pid: i32,
    },
    /// The call chain of a thread that blocks (slot `slot`), for the
    /// profile's off-CPU stacks.
    /// The call chain of a thread that wakes another (slot `slot`), for
    /// the profile's wake-up stacks: who ended the wait.
    WakerStack {
        pid: i32,
        waker: i32,
        wakee: i32,
        slot: u32,
    },
    WaitStack {
        pid: i32,
        tid: i32,
        slot: u32,
    },
    /// A stack sample: its call chain waits in slot `slot`.
    Sample {
        pid: i32,
        slot: u32,
        ns: u64,
    },
}

/// An event at a time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub t: u64,
    pub ev: Ev,
}

/// A path's breakdown.
#[derive(Debug, Clone, Copy)]
struct Cp {
    ns: [u64; NDOING],
    /// (process index, ns on the path, of which CPU)
    procs: [(u32, u64, u64); PATH_PROCS],
    nprocs: usize,
}

impl Default for Cp {
    fn default() -> Cp {
        Cp {
            ns: [0; NDOING],
            procs: [(0, 0, 0); PATH_PROCS],
            nprocs: 0,
        }
    }
}

impl Cp {
    fn add(&mut self, d: Doing, ns: u64, proc_idx: u32) {
        if ns == 0 {
            return;
        }
        self.ns[d as usize] += ns;
        let cpu = if d == Doing::Cpu { ns } else { 0 };
        if let Some(e) = self.procs[..self.nprocs]
            .iter_mut()
            .find(|e| e.0 == proc_idx)
        {
            e.1 += ns;
            e.2 += cpu;
        } else if self.nprocs < PATH_PROCS {
            self.procs[self.nprocs] = (proc_idx, ns, cpu);
            self.nprocs += 1;
        }
    }
    /// Move time from categories to process creation (a forked child's
    /// time before it exec'd).
    fn relabel_to_creation(&mut self, amounts: &[u64; NDOING]) {
        for (i, a) in amounts.iter().enumerate() {
            let take = (*a).min(self.ns[i]);
            self.ns[i] -= take;
            self.ns[Doing::Creation as usize] += take;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Running,
    Ready,
    Blocked,
    Dead,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Normal,
    /// A forked process that has not exec'd yet.
    PreExec,
    /// From exec until the loader is done.
    Loading,
    /// Inside fsync (a file-system tracepoint marked its start).
    Fsync,
}

#[derive(Debug, Clone, Copy)]
struct Blocked {
    site: Site,
    d_state: bool,
    /// (armed at, soft, hard) of a sleeping timer armed just before.
    timer: Option<(u64, u64, u64)>,
}

struct Th {
    tid: i32,
    proc_idx: u32,
    row: usize,
    st: St,
    since: u64,
    phase: Phase,
    phase_since: u64,
    block: Blocked,
    pending_site: Option<(Site, bool)>,
    timer: Option<(u64, u64, u64)>,
    cp: Cp,
    /// Own time since the fork, by category, while it is a pre-exec child.
    pre_exec: [u64; NDOING],
    /// The last thread it woke from a futex wait: (tid, when), to tell a
    /// join (woken by an exiting thread) from a lock hand-off.
    woke_futex: Option<(i32, u64)>,
}

struct Proc {
    pid: i32,
    row: usize,
    live_threads: u32,
    loader_hits: u32,
    exec_at: u64,
    fork_at: u64,
    /// The latest child process to exit: when, its path then, its last thread.
    child_exit: Option<(u64, Cp, i32)>,
    /// The latest of its own threads to exit (a join's waker, whose wake
    /// comes after the thread's events are gone).
    thread_exit: Option<(u64, Cp, i32)>,
    parent: Option<u32>,
}

/// A process already running when recording began (`tardy explain
/// --pid`), as /proc shows it.
#[derive(Debug, Clone, Default)]
pub struct Existing {
    pub pid: i32,
    pub parent: i32,
    pub command: String,
    pub exe: String,
    /// Its threads: blocked at a site, or running (`None`).
    pub threads: Vec<(i32, Option<Site>)>,
}

/// The model of one run.
pub struct Timeline {
    /// CLOCK_MONOTONIC ns when tardy forked the command.
    origin: u64,
    threads: HashMap<i32, Th>,
    procs: Vec<Proc>,
    proc_of_pid: HashMap<i32, u32>,
    pub tasks: Vec<TaskRow>,
    pub proc_rows: Vec<ProcRow>,
    pub hists: [Hist; NKIND],
    pub tasks_merged: u64,
    files: Vec<String>,
    root_pid: i32,
    root_exec_seen: bool,
    /// The path of the command's last thread, when it exited.
    final_cp: Option<(u64, Cp)>,
    /// That thread.
    final_tid: i32,
    /// The run's timeline, when asked for (`--export-trace`).
    pub log: Option<EventLog>,
    /// Events about threads the model never saw created.
    pub unknown_events: u64,
    /// When set, each wait that ends: (thread, kind, ns), for the
    /// profile's off-CPU stacks (its reader drains it).
    pub ended_waits: Option<Vec<(i32, Kind, u64, i32)>>,
    /// The thread of the tree ending the wait [`end_block`] ends (0: none):
    /// the fourth of each ended wait, for the profile's wake-up stacks.
    ///
    /// [`end_block`]: Timeline::end_block
    waker_now: i32,
}

fn site_doing(site: Site, d_state: bool) -> Doing {
    match site {
        Site::Sleep => Doing::TimedWait,
        Site::Futex | Site::KernelLock => Doing::LockWait,
        Site::Poll | Site::Pipe | Site::Socket | Site::Tty => Doing::EventWait,
        Site::ChildWait => Doing::ChildWait,
        Site::BlockIo => Doing::BlockIo,
        Site::Fsync => Doing::Fsync,
        Site::Exec | Site::Fork => Doing::Creation,
        Site::PageFault if d_state => Doing::BlockIo,
        _ if d_state => Doing::BlockIo,
        _ => Doing::EventWait,
    }
}

fn site_kind(site: Site, d_state: bool) -> Kind {
    match site {
        Site::Sleep => Kind::Sleep,
        Site::Futex | Site::KernelLock => Kind::LockWait,
        Site::Poll | Site::Tty => Kind::EventWait,
        Site::Pipe | Site::Socket => Kind::PipeRead,
        Site::ChildWait => Kind::ChildWait,
        Site::BlockIo => Kind::BlockIo,
        Site::Fsync => Kind::Fsync,
        Site::Exec | Site::Fork => Kind::Fork,
        _ if d_state => Kind::BlockIo,
        _ => Kind::EventWait,
    }
}

impl Timeline {
    /// A model whose command (`root_pid`) was forked at `origin` and is
    /// about to exec as `command`.
    pub fn new(origin: u64, root_pid: i32, command: &str, exe: &str) -> Timeline {
        let mut tl = Timeline {
            origin,
            threads: HashMap::new(),
            procs: Vec::new(),
            proc_of_pid: HashMap::new(),
            tasks: Vec::new(),
            proc_rows: Vec::new(),
            hists: [Hist::default(); NKIND],
            tasks_merged: 0,
            files: Vec::new(),
            root_pid,
            root_exec_seen: false,
            final_cp: None,
            final_tid: root_pid,
            log: None,
            unknown_events: 0,
            ended_waits: None,
            waker_now: 0,
        };
        let p = tl.new_proc(root_pid, None, origin);
        tl.proc_rows[tl.procs[p as usize].row].command = command.to_string();
        tl.proc_rows[tl.procs[p as usize].row].exe = exe.to_string();
        tl.new_thread(root_pid, p, 0, origin, St::Running, Cp::default());
        if let Some(th) = tl.threads.get_mut(&root_pid) {
            th.phase = Phase::PreExec;
        }
        tl
    }

    /// A model of a tree already running at `origin` (`tardy explain
    /// --pid`): `procs` root first, each after its parent. Each thread
    /// starts running (`None`) or blocked where /proc says it is.
    pub fn attached(origin: u64, procs: &[Existing]) -> Timeline {
        let root = procs.first().map(|p| p.pid).unwrap_or(0);
        let mut tl = Timeline::new(origin, root, "", "");
        tl.root_exec_seen = true;
        // `new` made the root's process and main thread: start them over.
        tl.procs.clear();
        tl.proc_of_pid.clear();
        tl.proc_rows.clear();
        tl.threads.clear();
        tl.tasks.clear();
        if let Some(log) = tl.log.as_mut() {
            log.threads.clear();
        }
        for e in procs {
            if tl.proc_of_pid.contains_key(&e.pid) {
                continue;
            }
            let parent = tl.proc_of_pid.get(&e.parent).copied();
            let p = tl.new_proc(e.pid, parent, origin);
            if let Some(r) = tl.proc_rows.get_mut(tl.procs[p as usize].row) {
                r.command = e.command.clone();
                r.exe = e.exe.clone();
            }
            for &(tid, blocked) in &e.threads {
                if tl.threads.contains_key(&tid) {
                    continue;
                }
                let st = if blocked.is_some() {
                    St::Blocked
                } else {
                    St::Running
                };
                tl.new_thread(tid, p, 0, origin, st, Cp::default());
                if let (Some(site), Some(th)) = (blocked, tl.threads.get_mut(&tid)) {
                    th.block.site = site;
                }
            }
        }
        tl
    }

    /// The end of a recording that stops while the tree runs on (`--pid`
    /// for a while): every wait still going counts up to `end`, every
    /// running thread's CPU too, and the root's path ends there.
    pub fn close(&mut self, end: u64) {
        let mut tids: Vec<i32> = self
            .threads
            .values()
            .filter(|t| t.st != St::Dead)
            .map(|t| t.tid)
            .collect();
        tids.sort_unstable();
        for tid in tids {
            self.end_block(tid, end, None);
            self.ready_to_running(tid, end);
            self.run_to(tid, end);
        }
        if self.final_cp.is_none()
            && let Some(th) = self.threads.get(&self.root_pid)
        {
            self.final_cp = Some((end, th.cp));
            self.final_tid = self.root_pid;
        }
    }

    /// Remember an exec'd file name; its index for [`Ev::Exec`].
    pub fn intern(&mut self, name: &str) -> u32 {
        if let Some(i) = self.files.iter().position(|f| f == name) {
            return i as u32;
        }
        if self.files.len() < 4096 {
            self.files.push(name.to_string());
            (self.files.len() - 1) as u32
        } else {
            u32::MAX
        }
    }

    fn rel(&self, t: u64) -> u64 {
        t.saturating_sub(self.origin)
    }

    fn new_proc(&mut self, pid: i32, parent: Option<u32>, t: u64) -> u32 {
        let parent_pid = parent.map(|p| self.procs[p as usize].pid).unwrap_or(0);
        let (command, exe) = parent
            .and_then(|p| self.proc_rows.get(self.procs[p as usize].row))
            .map(|r| (r.command.clone(), r.exe.clone()))
            .unwrap_or_default();
        let start_ns = self.rel(t);
        let (row, _) = push_bounded(
            &mut self.proc_rows,
            ProcRow {
                pid,
                parent: parent_pid,
                command,
                exe,
                start_ns,
                ..ProcRow::default()
            },
            MAX_PROCS,
        );
        self.procs.push(Proc {
            pid,
            row,
            live_threads: 0,
            loader_hits: 0,
            exec_at: 0,
            fork_at: t,
            child_exit: None,
            thread_exit: None,
            parent,
        });
        let idx = (self.procs.len() - 1) as u32;
        self.proc_of_pid.insert(pid, idx);
        idx
    }

    fn new_thread(&mut self, tid: i32, proc_idx: u32, creator: i32, t: u64, st: St, cp: Cp) {
        let start_ns = self.rel(t);
        let (row, shared) = push_bounded(
            &mut self.tasks,
            TaskRow {
                tid,
                tgid: self.procs[proc_idx as usize].pid,
                creator,
                start_ns,
                ..TaskRow::default()
            },
            MAX_TASKS,
        );
        self.tasks_merged += shared as u64;
        self.procs[proc_idx as usize].live_threads += 1;
        if let Some(log) = self.log.as_mut()
            && log.threads.len() < crate::record::events::MAX_SLICES
        {
            log.threads
                .push((tid, self.procs[proc_idx as usize].pid, start_ns));
        }
        self.threads.insert(
            tid,
            Th {
                tid,
                proc_idx,
                row,
                st,
                since: t,
                phase: Phase::Normal,
                phase_since: t,
                block: Blocked {
                    site: Site::Unknown,
                    d_state: false,
                    timer: None,
                },
                pending_site: None,
                timer: None,
                cp,
                pre_exec: [0; NDOING],
                woke_futex: None,
            },
        );
    }

    /// A thread seen in an event but never created in the model (its
    /// creation was lost): it joins with a path of "other" up to now.
    fn adopt(&mut self, tid: i32, t: u64) {
        if tid <= 0 || self.threads.contains_key(&tid) {
            return;
        }
        self.unknown_events += 1;
        let proc_idx = match self.proc_of_pid.get(&tid) {
            Some(&p) => p,
            None => self.new_proc(tid, None, t),
        };
        let mut cp = Cp::default();
        cp.add(Doing::Unknown, t.saturating_sub(self.origin), proc_idx);
        self.new_thread(tid, proc_idx, 0, t, St::Running, cp);
    }

    /// What CPU time of a thread in `phase` is.
    fn cpu_doing(phase: Phase) -> Doing {
        match phase {
            Phase::Loading => Doing::Creation,
            Phase::Fsync => Doing::Fsync,
            Phase::Normal | Phase::PreExec => Doing::Cpu,
        }
    }

    /// Account a running thread's time up to `t`.
    fn run_to(&mut self, tid: i32, t: u64) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.st != St::Running || t <= th.since {
            return;
        }
        let d = t - th.since;
        let doing = Self::cpu_doing(th.phase);
        if let Some(log) = self.log.as_mut() {
            log.stretch(tid, doing, th.since.saturating_sub(self.origin), d);
        }
        th.cp.add(doing, d, th.proc_idx);
        if th.phase == Phase::PreExec {
            th.pre_exec[doing as usize] += d;
        }
        th.since = t;
        if let Some(row) = self.tasks.get_mut(th.row) {
            row.stats.cpu_ns += d;
        }
    }

    /// A thread past its exit record still works in the kernel: closing its
    /// files wakes a pipe's reader, then its parent is told (seen by events
    /// on whole CPUs). That work, up to `t`, is its CPU: on its path and on
    /// its timeline (on a busy machine an exit preempted half-way took 2 ms
    /// that the path counted and the timeline left blank).
    fn run_dead_to(&mut self, tid: i32, t: u64) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.st != St::Dead || t <= th.since {
            return;
        }
        let d = t - th.since;
        if let Some(log) = self.log.as_mut() {
            log.stretch(tid, Doing::Cpu, th.since.saturating_sub(self.origin), d);
        }
        th.cp.add(Doing::Cpu, d, th.proc_idx);
        th.since = t;
    }

    fn add_episode(&mut self, row: usize, kind: Kind, ns: u64, asked: u64) {
        self.hists[kind as usize].add(ns);
        if let Some(r) = self.tasks.get_mut(row) {
            r.aggs[kind as usize].add(ns, asked);
        }
    }

    /// A blocked thread's wait ends at `wake`: its own accounting, and,
    /// when nothing in the tree ended it, the wait itself goes on its path.
    fn end_block(&mut self, tid: i32, wake: u64, by_tree: Option<Cp>) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.st != St::Blocked {
            return;
        }
        let b = th.block;
        let dur = wake.saturating_sub(th.since);
        let mut kind = site_kind(b.site, b.d_state);
        let mut doing = site_doing(b.site, b.d_state);
        let mut asked = 0;
        if let Some((armed, soft, _hard)) = b.timer {
            asked = soft.saturating_sub(armed);
            let expired = by_tree.is_none() && wake + 20_000 >= soft;
            match b.site {
                Site::Sleep => {}
                Site::Futex | Site::Poll | Site::Unknown if expired => {
                    kind = Kind::TimeoutExpired;
                    doing = Doing::TimedWait;
                }
                _ => asked = 0,
            }
        }
        let proc_idx = th.proc_idx;
        let row = th.row;
        match by_tree {
            Some(cp) => {
                th.cp = cp;
                th.pre_exec = [0; NDOING];
            }
            None => {
                th.cp.add(doing, dur, proc_idx);
                if th.phase == Phase::PreExec {
                    th.pre_exec[doing as usize] += dur;
                }
            }
        }
        if let Some(log) = self.log.as_mut() {
            log.slice(Slice {
                tid,
                doing,
                kind: Some(kind),
                start: th.since.saturating_sub(self.origin),
                dur,
                asked,
            });
        }
        th.st = St::Ready;
        th.since = wake;
        if let Some(w) = self.ended_waits.as_mut() {
            w.push((tid, kind, dur, self.waker_now));
        }
        if kind == Kind::Fsync && th.phase == Phase::Fsync {
            // A wait inside a marked fsync is part of that fsync.
        } else if kind == Kind::Fork {
            // vfork's wait for the child's exec: time of the fork counted once.
            self.hists[kind as usize].add(dur);
            if let Some(r) = self.tasks.get_mut(row) {
                r.aggs[kind as usize].total_ns += dur;
            }
        } else {
            self.add_episode(row, kind, dur, asked);
            if let (Some((_, soft, hard)), true) = (b.timer, asked > 0)
                && let Some(r) = self.tasks.get_mut(row)
            {
                r.aggs[kind as usize].slack_ns += hard.saturating_sub(soft);
            }
        }
    }

    /// Process one event (events must come in time order).
    pub fn apply(&mut self, e: Timed) {
        let t = e.t;
        match e.ev {
            Ev::Fork {
                parent,
                child,
                child_pid,
            } => {
                self.adopt(parent, t);
                if self.threads.contains_key(&child) {
                    return;
                }
                self.run_to(parent, t);
                let (pcp, pproc) = match self.threads.get(&parent) {
                    Some(p) => (p.cp, p.proc_idx),
                    None => return,
                };
                let prow = self.threads.get(&parent).map(|p| p.row).unwrap_or(0);
                self.add_episode(prow, Kind::Fork, 0, 0);
                let new_process = child == child_pid;
                let proc_idx = if new_process {
                    self.new_proc(child_pid, Some(pproc), t)
                } else {
                    pproc
                };
                self.new_thread(child, proc_idx, parent, t, St::Ready, pcp);
                let at = self.rel(t);
                if let Some(log) = self.log.as_mut() {
                    log.edge(Edge {
                        tid: child,
                        from: parent,
                        at,
                    });
                }
                if new_process && let Some(th) = self.threads.get_mut(&child) {
                    th.phase = Phase::PreExec;
                    th.phase_since = t;
                }
            }
            Ev::Exec {
                tid,
                old_tid,
                file,
                loader,
            } => {
                if old_tid != tid
                    && let Some(mut th) = self.threads.remove(&old_tid)
                {
                    // The exec'ing thread took over the leader's tid.
                    if let Some(leader) = self.threads.remove(&tid) {
                        self.procs[leader.proc_idx as usize].live_threads = self.procs
                            [leader.proc_idx as usize]
                            .live_threads
                            .saturating_sub(1);
                    }
                    th.tid = tid;
                    self.threads.insert(tid, th);
                }
                self.adopt(tid, t);
                self.run_to(tid, t);
                let Some(th) = self.threads.get_mut(&tid) else {
                    return;
                };
                let proc_idx = th.proc_idx;
                let first_root_exec = tid == self.root_pid && !self.root_exec_seen;
                if th.phase == Phase::PreExec {
                    let pre = th.pre_exec;
                    th.cp.relabel_to_creation(&pre);
                    th.pre_exec = [0; NDOING];
                }
                th.phase = if loader {
                    Phase::Loading
                } else {
                    Phase::Normal
                };
                th.phase_since = t;
                let row = th.row;
                if first_root_exec {
                    self.root_exec_seen = true;
                }
                let p = &mut self.procs[proc_idx as usize];
                let since = if p.exec_at == 0 { p.fork_at } else { t };
                p.exec_at = t;
                p.loader_hits = 0;
                let prow = p.row;
                let pid = p.pid;
                self.add_episode(row, Kind::Exec, t.saturating_sub(since), 0);
                let name = self.files.get(file as usize).cloned().unwrap_or_default();
                let command = crate::record::procfs::cmdline(pid, 300);
                if let Some(r) = self.proc_rows.get_mut(prow) {
                    if !first_root_exec {
                        r.command = if command.is_empty() {
                            name.clone()
                        } else {
                            command
                        };
                        r.exe = name.clone();
                    }
                    r.exe_size = crate::record::procfs::exe_size(pid, &name);
                    r.execs += 1;
                }
            }
            Ev::LoaderHit { tid } => {
                let Some(th) = self.threads.get(&tid) else {
                    return;
                };
                let p = th.proc_idx as usize;
                self.procs[p].loader_hits += 1;
                if self.procs[p].loader_hits >= 2 {
                    self.end_loading(tid, t);
                }
            }
            Ev::SwitchOut { tid, preempt } => {
                self.adopt(tid, t);
                self.run_to(tid, t);
                let Some(th) = self.threads.get_mut(&tid) else {
                    return;
                };
                if th.st != St::Running {
                    return;
                }
                th.since = t;
                let site = th.pending_site.take();
                let timer = th.timer.take();
                if preempt {
                    th.st = St::Ready;
                } else {
                    th.st = St::Blocked;
                    let (site, d_state) = site.unwrap_or((Site::Unknown, false));
                    th.block = Blocked {
                        site,
                        d_state,
                        timer,
                    };
                    // A loader that blocks on a page fault is still loading;
                    // one that waits on anything else has started running.
                }
            }
            Ev::Block { tid, site, d_state } => {
                if let Some(th) = self.threads.get_mut(&tid) {
                    th.pending_site = Some((site, d_state));
                }
            }
            Ev::TimerArm { tid, soft, hard } => {
                if let Some(th) = self.threads.get_mut(&tid) {
                    th.timer = Some((t, soft, hard));
                }
            }
            Ev::Waking { waker, wakee, irq } => {
                let blocked = self
                    .threads
                    .get(&wakee)
                    .is_some_and(|w| w.st == St::Blocked);
                if !blocked {
                    return;
                }
                let tree_waker = !irq && waker != wakee && self.threads.contains_key(&waker);
                if tree_waker {
                    self.run_to(waker, t);
                    self.run_dead_to(waker, t);
                    let cp = self.threads.get(&waker).map(|w| w.cp);
                    let futex = self
                        .threads
                        .get(&wakee)
                        .is_some_and(|w| w.block.site == Site::Futex);
                    if futex && let Some(w) = self.threads.get_mut(&waker) {
                        w.woke_futex = Some((wakee, t));
                    }
                    self.waker_now = waker;
                    self.end_block(wakee, t, cp);
                    self.waker_now = 0;
                    let at = self.rel(t);
                    if let Some(log) = self.log.as_mut() {
                        log.edge(Edge {
                            tid: wakee,
                            from: waker,
                            at,
                        });
                        log.flow(Flow { waker, wakee, at });
                    }
                } else {
                    self.end_block(wakee, t, None);
                }
            }
            Ev::SwitchIn { tid } => {
                self.adopt(tid, t);
                let Some(th) = self.threads.get(&tid) else {
                    return;
                };
                match th.st {
                    St::Blocked => {
                        // Nothing in the tree woke it that we saw.
                        let since = th.since;
                        let site = th.block.site;
                        let proc_idx = th.proc_idx as usize;
                        let during = |x: Option<(u64, Cp, i32)>| {
                            x.filter(|(at, _, _)| *at >= since && *at <= t)
                        };
                        let p = &self.procs[proc_idx];
                        let child = during(p.child_exit)
                            .filter(|_| matches!(site, Site::ChildWait | Site::Poll));
                        let joined = during(p.thread_exit).filter(|_| site == Site::Futex);
                        if let Some((at, cp, from)) = child {
                            // A child's exit notifies its parent after the
                            // child's events are gone: the edge is inferred.
                            self.waker_now = from;
                            self.end_block(tid, at, Some(cp));
                            self.waker_now = 0;
                            self.inferred_edge(tid, from, at);
                        } else if let Some((at, cp, from)) = joined {
                            // Likewise a thread's exit wakes its joiner.
                            let row = self.threads.get(&tid).map(|th| th.row);
                            self.waker_now = from;
                            self.end_block(tid, at, Some(cp));
                            self.waker_now = 0;
                            self.inferred_edge(tid, from, at);
                            if let Some((_, k, _, _)) =
                                self.ended_waits.as_mut().and_then(|w| w.last_mut())
                                && *k == Kind::LockWait
                            {
                                *k = Kind::Join;
                            }
                            if let Some(r) = row.and_then(|r| self.tasks.get_mut(r)) {
                                let lw = &mut r.aggs[Kind::LockWait as usize];
                                if lw.count > 0 {
                                    lw.count -= 1;
                                    r.aggs[Kind::Join as usize].add(0, 0);
                                }
                            }
                        } else {
                            let wake = match th.block.timer {
                                Some((_, soft, hard)) if t > hard => hard.max(soft).max(since),
                                _ => t,
                            };
                            self.end_block(tid, wake.min(t), None);
                        }
                        self.ready_to_running(tid, t);
                    }
                    St::Ready => self.ready_to_running(tid, t),
                    St::Running | St::Dead => {}
                }
            }
            Ev::FsyncEnter { tid } => {
                self.run_to(tid, t);
                // libc's probe and the file system's tracepoint mark the
                // same call: the outer one counts.
                if let Some(th) = self.threads.get_mut(&tid)
                    && th.phase != Phase::Fsync
                {
                    th.phase = Phase::Fsync;
                    th.phase_since = t;
                }
            }
            Ev::FsyncExit { tid } => {
                self.run_to(tid, t);
                if let Some(th) = self.threads.get_mut(&tid)
                    && th.phase == Phase::Fsync
                {
                    let d = t.saturating_sub(th.phase_since);
                    th.phase = Phase::Normal;
                    let row = th.row;
                    self.add_episode(row, Kind::Fsync, d, 0);
                }
            }
            Ev::Exit { tid } => self.exit(tid, t),
            Ev::Mapped { .. }
            | Ev::ExecBegins { .. }
            | Ev::Forked { .. }
            | Ev::Sample { .. }
            | Ev::WaitStack { .. }
            | Ev::WakerStack { .. } => {}
        }
    }

    /// Keep the run's timeline from now on ([`Timeline::take_log`]).
    pub fn keep_log(&mut self) {
        let mut log = EventLog::default();
        for th in self.threads.values() {
            let pid = self.procs[th.proc_idx as usize].pid;
            log.threads
                .push((th.tid, pid, th.since.saturating_sub(self.origin)));
        }
        self.log = Some(log);
    }

    /// A wake-up seen only by its effect (a child's or a thread's exit).
    fn inferred_edge(&mut self, tid: i32, from: i32, t: u64) {
        let at = self.rel(t);
        if let Some(log) = self.log.as_mut() {
            log.edge(Edge { tid, from, at });
            log.flow(Flow {
                waker: from,
                wakee: tid,
                at,
            });
        }
    }

    /// The run's timeline with its critical path, once the run is over
    /// (`end`: when the command ended, CLOCK_MONOTONIC ns).
    pub fn take_log(&mut self, end: u64) -> Option<EventLog> {
        let mut log = self.log.take()?;
        let (t, tid) = match self.final_cp {
            Some((t, _)) => (t, self.final_tid),
            None => (end, self.root_pid),
        };
        // From the command's start to its last thread's exit (tardy reaps
        // it a little later; on a busy machine, milliseconds later).
        log.wall_ns = self.rel(t);
        log.walk_path(tid, self.rel(t));
        log.processes = self
            .proc_rows
            .iter()
            .map(|r| (r.pid, r.command.clone()))
            .collect();
        Some(log)
    }

    fn ready_to_running(&mut self, tid: i32, t: u64) {
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.st != St::Ready {
            return;
        }
        let d = t.saturating_sub(th.since);
        // Waiting for a CPU while the loader starts the program is part of
        // starting it, as the waits before exec are (relabelled at exec): a
        // program whose loading is more work waits longer on a busy machine,
        // and that is its start's cost, not the machine's contention.
        let doing = if th.phase == Phase::Loading {
            Doing::Creation
        } else {
            Doing::RunQueue
        };
        if let Some(log) = self.log.as_mut() {
            log.stretch(tid, doing, th.since.saturating_sub(self.origin), d);
        }
        th.cp.add(doing, d, th.proc_idx);
        if th.phase == Phase::PreExec {
            th.pre_exec[Doing::RunQueue as usize] += d;
        }
        th.st = St::Running;
        th.since = t;
        if let Some(row) = self.tasks.get_mut(th.row) {
            row.stats.run_delay_ns += d;
        }
    }

    fn end_loading(&mut self, tid: i32, t: u64) {
        self.run_to(tid, t);
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.phase != Phase::Loading {
            return;
        }
        th.phase = Phase::Normal;
        let d = t.saturating_sub(th.phase_since);
        let row = th.row;
        self.add_episode(row, Kind::Load, d, 0);
    }

    fn exit(&mut self, tid: i32, t: u64) {
        self.end_loading(tid, t);
        self.run_to(tid, t);
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        if th.st == St::Dead {
            return;
        }
        // A thread blocked or runnable at its exit (killed): its wait ends now.
        if th.st == St::Blocked {
            self.end_block(tid, t, None);
        }
        self.ready_to_running(tid, t);
        let Some(th) = self.threads.get_mut(&tid) else {
            return;
        };
        th.st = St::Dead;
        let cp = th.cp;
        let proc_idx = th.proc_idx as usize;
        let row = th.row;
        let woke = th.woke_futex;
        // It woke a joiner on its way out: that wait was a join.
        if let Some((joiner, at)) = woke
            && t.saturating_sub(at) < 2_000_000
            && let Some(j) = self.threads.get(&joiner)
        {
            let jrow = j.row;
            if let Some(r) = self.tasks.get_mut(jrow) {
                let lw = &mut r.aggs[Kind::LockWait as usize];
                if lw.count > 0 {
                    lw.count -= 1;
                    r.aggs[Kind::Join as usize].count += 1;
                }
            }
        }
        if let Some(r) = self.tasks.get_mut(row) {
            r.end_ns = t.saturating_sub(self.origin);
        }
        let p = &mut self.procs[proc_idx];
        p.live_threads = p.live_threads.saturating_sub(1);
        p.thread_exit = Some((t, cp, tid));
        if p.live_threads == 0 {
            let prow = p.row;
            let pid = p.pid;
            let parent = p.parent;
            if let Some(r) = self.proc_rows.get_mut(prow) {
                r.end_ns = t.saturating_sub(self.origin);
            }
            if let Some(par) = parent {
                self.procs[par as usize].child_exit = Some((t, cp, tid));
            }
            if pid == self.root_pid {
                self.final_cp = Some((t, cp));
                self.final_tid = tid;
            }
        }
    }

    /// The command of process `pid` ("" when not in the tree).
    pub fn command_of(&self, pid: i32) -> &str {
        self.proc_of_pid
            .get(&pid)
            .and_then(|&p| self.proc_rows.get(self.procs[p as usize].row))
            .map_or("", |r| r.command.as_str())
    }

    /// Processes still alive: (pid, command).
    pub fn live_processes(&self) -> Vec<(i32, String)> {
        self.procs
            .iter()
            .filter(|p| p.live_threads > 0 && p.pid != self.root_pid)
            .map(|p| {
                (
                    p.pid,
                    self.proc_rows
                        .get(p.row)
                        .map(|r| r.command.clone())
                        .unwrap_or_default(),
                )
            })
            .collect()
    }

    /// Whether the command itself has exited (in the events).
    pub fn root_done(&self) -> bool {
        self.final_cp.is_some()
    }

    /// The run's critical path, ending at `end` (CLOCK_MONOTONIC ns, when
    /// tardy reaped the command): the command's path at its exit, the rest
    /// (the kernel tearing the process down, tardy reaping it) as system CPU
    /// of the command.
    pub fn path(&self, end: u64) -> PathTotals {
        let (at, cp) = match self.final_cp {
            Some((at, cp)) => (at, cp),
            None => {
                // The exit was not seen (events lost): the root's own path.
                let cp = self
                    .threads
                    .get(&self.root_pid)
                    .map(|t| t.cp)
                    .unwrap_or_default();
                let at = self.origin + cp.ns.iter().sum::<u64>();
                (at, cp)
            }
        };
        let mut ns = cp.ns;
        let tail = end.saturating_sub(at);
        ns[Doing::Cpu as usize] += tail;
        let mut procs: Vec<(i32, u64, u64)> = cp.procs[..cp.nprocs]
            .iter()
            .map(|&(p, total, cpu)| (self.procs[p as usize].pid, total, cpu))
            .collect();
        if let Some(root) = procs.iter_mut().find(|p| p.0 == self.root_pid) {
            root.1 += tail;
            root.2 += tail;
        }
        PathTotals { ns, procs }
    }

    /// Per-kind totals of every thread (for tests).
    pub fn kind_totals(&self) -> [Agg; NKIND] {
        let mut out = [Agg::default(); NKIND];
        for t in &self.tasks {
            for (a, b) in out.iter_mut().zip(t.aggs.iter()) {
                a.merge(b);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn ev(t: u64, ev: Ev) -> Timed {
        Timed { t: t * MS, ev }
    }

    fn sum(p: &PathTotals) -> u64 {
        p.ns.iter().sum()
    }

    fn run(events: &[Timed], end_ms: u64) -> (Timeline, PathTotals) {
        let mut tl = Timeline::new(0, 1, "cmd", "/bin/cmd");
        tl.ended_waits = Some(Vec::new());
        let f = tl.intern("/bin/cmd");
        tl.apply(Timed {
            t: MS,
            ev: Ev::Exec {
                tid: 1,
                old_tid: 1,
                file: f,
                loader: false,
            },
        });
        for e in events {
            tl.apply(*e);
        }
        let p = tl.path(end_ms * MS);
        (tl, p)
    }

    #[test]
    fn a_sleep_ended_by_the_timer_is_on_the_path_and_sums_to_wall() {
        let (tl, p) = run(
            &[
                ev(
                    2,
                    Ev::TimerArm {
                        tid: 1,
                        soft: 12 * MS,
                        hard: 12 * MS,
                    },
                ),
                ev(
                    2,
                    Ev::Block {
                        tid: 1,
                        site: Site::Sleep,
                        d_state: false,
                    },
                ),
                ev(
                    2,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: false,
                    },
                ),
                ev(13, Ev::SwitchIn { tid: 1 }),
                ev(15, Ev::Exit { tid: 1 }),
            ],
            16,
        );
        assert_eq!(sum(&p), 16 * MS);
        assert_eq!(p.ns[Doing::TimedWait as usize], 10 * MS);
        // Woken at the hard expiry (12), on a CPU at 13: 1 ms waiting for it.
        assert_eq!(p.ns[Doing::RunQueue as usize], MS);
        assert_eq!(p.ns[Doing::Creation as usize], MS);
        let k = tl.kind_totals();
        assert_eq!(k[Kind::Sleep as usize].count, 1);
        assert_eq!(k[Kind::Sleep as usize].asked_ns, 10 * MS);
    }

    /// `writer | reader`, the writer's exit preempted half-way: its exit
    /// record at 20, its files closed (waking the reader) at 30, its parent
    /// told at 31. The timeline's critical path covers the wall with no
    /// blank, as the path's totals do (on a busy machine a blank of 2 ms
    /// in 20 was seen).
    #[test]
    fn an_exit_that_wakes_a_reader_late_leaves_no_blank_on_the_timeline() {
        let mut tl = Timeline::new(0, 1, "sh", "/bin/sh");
        tl.keep_log();
        let mut evs = vec![
            ev(
                1,
                Ev::Fork {
                    parent: 1,
                    child: 2,
                    child_pid: 2,
                },
            ),
            ev(
                1,
                Ev::Fork {
                    parent: 1,
                    child: 3,
                    child_pid: 3,
                },
            ),
            ev(
                1,
                Ev::Block {
                    tid: 1,
                    site: Site::ChildWait,
                    d_state: false,
                },
            ),
            ev(
                1,
                Ev::SwitchOut {
                    tid: 1,
                    preempt: false,
                },
            ),
            ev(1, Ev::SwitchIn { tid: 2 }),
            ev(2, Ev::SwitchIn { tid: 3 }),
            ev(
                3,
                Ev::Block {
                    tid: 3,
                    site: Site::Poll,
                    d_state: false,
                },
            ),
            ev(
                3,
                Ev::SwitchOut {
                    tid: 3,
                    preempt: false,
                },
            ),
            ev(20, Ev::Exit { tid: 2 }),
            ev(
                30,
                Ev::Waking {
                    waker: 2,
                    wakee: 3,
                    irq: false,
                },
            ),
            ev(
                31,
                Ev::Waking {
                    waker: 2,
                    wakee: 1,
                    irq: false,
                },
            ),
            ev(31, Ev::SwitchIn { tid: 3 }),
            ev(33, Ev::Exit { tid: 3 }),
        ];
        evs.push(ev(34, Ev::SwitchIn { tid: 1 }));
        evs.push(ev(35, Ev::Exit { tid: 1 }));
        for e in evs {
            tl.apply(e);
        }
        let log = tl.take_log(35 * MS).unwrap();
        let on: u64 = log.path_slices().iter().map(|s| s.dur).sum();
        assert_eq!(log.wall_ns, 35 * MS);
        assert_eq!(on, 35 * MS, "{:?}", log.path);
    }

    #[test]
    fn a_dead_childs_wake_carries_its_path_without_a_gap() {
        // Events on whole CPUs see the exiting child wake its parent 1 ms
        // after its exit record; a reaped task's last switch reads as -1.
        let blocked = |t, tid, site| {
            [
                ev(
                    t,
                    Ev::Block {
                        tid,
                        site,
                        d_state: false,
                    },
                ),
                ev(
                    t,
                    Ev::SwitchOut {
                        tid,
                        preempt: false,
                    },
                ),
            ]
        };
        let mut evs = vec![ev(
            2,
            Ev::Fork {
                parent: 1,
                child: 2,
                child_pid: 2,
            },
        )];
        evs.extend(blocked(2, 1, Site::ChildWait));
        evs.push(ev(3, Ev::SwitchIn { tid: 2 }));
        evs.push(ev(
            4,
            Ev::Exec {
                tid: 2,
                old_tid: 2,
                file: 0,
                loader: false,
            },
        ));
        evs.push(ev(50, Ev::Exit { tid: 2 }));
        evs.push(ev(
            51,
            Ev::Waking {
                waker: 2,
                wakee: 1,
                irq: false,
            },
        ));
        evs.push(ev(
            51,
            Ev::SwitchOut {
                tid: -1,
                preempt: false,
            },
        ));
        evs.push(ev(52, Ev::SwitchIn { tid: 1 }));
        evs.push(ev(53, Ev::Exit { tid: 1 }));
        let (tl, p) = run(&evs, 53);
        assert_eq!(sum(&p), 53 * MS);
        assert_eq!(p.ns[Doing::Unknown as usize], 0);
        // The child's 46 ms, its last millisecond on the way out, and the
        // parent's own 1 + 1 ms.
        assert_eq!(p.ns[Doing::Cpu as usize], 46 * MS + MS + 2 * MS);
        assert_eq!(p.ns[Doing::RunQueue as usize], MS);
        assert!(tl.live_processes().is_empty());
        assert!(!tl.threads.contains_key(&-1));
    }

    #[test]
    fn a_wait_ended_by_a_child_follows_the_child() {
        // The shell forks a child at 2, waits; the child computes 2..50 and exits.
        let (tl, p) = run(
            &[
                ev(
                    2,
                    Ev::Fork {
                        parent: 1,
                        child: 2,
                        child_pid: 2,
                    },
                ),
                ev(
                    2,
                    Ev::Block {
                        tid: 1,
                        site: Site::ChildWait,
                        d_state: false,
                    },
                ),
                ev(
                    2,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: false,
                    },
                ),
                ev(3, Ev::SwitchIn { tid: 2 }),
                ev(
                    4,
                    Ev::Exec {
                        tid: 2,
                        old_tid: 2,
                        file: 0,
                        loader: false,
                    },
                ),
                ev(50, Ev::Exit { tid: 2 }),
                ev(51, Ev::SwitchIn { tid: 1 }),
                ev(52, Ev::Exit { tid: 1 }),
            ],
            52,
        );
        assert_eq!(sum(&p), 52 * MS);
        // The child's 46 ms of work are CPU on the path; its fork-to-exec is creation.
        assert_eq!(p.ns[Doing::Cpu as usize], 46 * MS + MS + MS);
        assert_eq!(p.ns[Doing::ChildWait as usize], 0);
        // The root's own start (1 ms) and the child's fork to exec (2 ms).
        assert_eq!(p.ns[Doing::Creation as usize], 3 * MS);
        assert_eq!(p.ns[Doing::RunQueue as usize], MS);
        assert_eq!(tl.kind_totals()[Kind::ChildWait as usize].count, 1);
        assert!(
            p.procs
                .iter()
                .any(|&(pid, total, _)| pid == 2 && total >= 47 * MS)
        );
    }

    /// The command execs a program at 2 (through the loader when `loader`),
    /// is preempted 4..10, and the loader finishes at 12; it exits at 20.
    fn preempted_while_loading(loader: bool) -> PathTotals {
        run(
            &[
                ev(
                    2,
                    Ev::Exec {
                        tid: 1,
                        old_tid: 1,
                        file: 0,
                        loader,
                    },
                ),
                ev(
                    4,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: true,
                    },
                ),
                ev(10, Ev::SwitchIn { tid: 1 }),
                ev(11, Ev::LoaderHit { tid: 1 }),
                ev(12, Ev::LoaderHit { tid: 1 }),
                ev(20, Ev::Exit { tid: 1 }),
            ],
            20,
        )
        .1
    }

    #[test]
    fn waiting_for_a_cpu_while_loading_is_part_of_the_start() {
        let p = preempted_while_loading(true);
        assert_eq!(sum(&p), 20 * MS);
        assert_eq!(p.ns[Doing::RunQueue as usize], 0);
        // The command's own start (0..1) and the loader's 2..12, its 6 ms
        // in the run queue included; on a CPU 1..2 and 12..20.
        assert_eq!(p.ns[Doing::Creation as usize], 11 * MS);
        assert_eq!(p.ns[Doing::Cpu as usize], 9 * MS);
        // Without the loader the same wait is the run queue's.
        let p = preempted_while_loading(false);
        assert_eq!(p.ns[Doing::RunQueue as usize], 6 * MS);
    }

    #[test]
    fn a_lock_hand_off_puts_the_holder_on_the_path() {
        // Thread 2 holds a lock 2..30; thread 1 waits on the futex, woken at 30.
        let (tl, p) = run(
            &[
                ev(
                    2,
                    Ev::Fork {
                        parent: 1,
                        child: 2,
                        child_pid: 1,
                    },
                ),
                ev(2, Ev::SwitchIn { tid: 2 }),
                ev(
                    3,
                    Ev::Block {
                        tid: 1,
                        site: Site::Futex,
                        d_state: false,
                    },
                ),
                ev(
                    3,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: false,
                    },
                ),
                ev(
                    30,
                    Ev::Waking {
                        waker: 2,
                        wakee: 1,
                        irq: false,
                    },
                ),
                ev(30, Ev::SwitchIn { tid: 1 }),
                ev(32, Ev::Exit { tid: 1 }),
                ev(35, Ev::Exit { tid: 2 }),
            ],
            35,
        );
        assert_eq!(sum(&p), 35 * MS);
        assert_eq!(p.ns[Doing::LockWait as usize], 0);
        assert_eq!(p.ns[Doing::Cpu as usize], 34 * MS);
        let k = tl.kind_totals();
        assert_eq!(k[Kind::LockWait as usize].count, 1);
        // The wait ended is handed to the profile: who, what, how long,
        // and which thread of the tree ended it.
        assert_eq!(
            tl.ended_waits.as_deref(),
            Some(&[(1, Kind::LockWait, 27 * MS, 2)][..])
        );
        assert_eq!(k[Kind::Join as usize].count, 0);
    }

    #[test]
    fn a_wake_from_an_interrupt_is_not_a_tree_edge() {
        let (_, p) = run(
            &[
                ev(
                    2,
                    Ev::Fork {
                        parent: 1,
                        child: 2,
                        child_pid: 1,
                    },
                ),
                ev(
                    3,
                    Ev::Block {
                        tid: 1,
                        site: Site::BlockIo,
                        d_state: true,
                    },
                ),
                ev(
                    3,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: false,
                    },
                ),
                ev(
                    20,
                    Ev::Waking {
                        waker: 2,
                        wakee: 1,
                        irq: true,
                    },
                ),
                ev(21, Ev::SwitchIn { tid: 1 }),
                ev(22, Ev::Exit { tid: 1 }),
            ],
            22,
        );
        assert_eq!(p.ns[Doing::BlockIo as usize], 17 * MS);
        assert_eq!(p.ns[Doing::RunQueue as usize], MS);
    }

    #[test]
    fn preemption_is_run_queue_and_lost_creations_are_adopted() {
        let (tl, p) = run(
            &[
                ev(
                    5,
                    Ev::SwitchOut {
                        tid: 1,
                        preempt: true,
                    },
                ),
                ev(9, Ev::SwitchIn { tid: 1 }),
                ev(9, Ev::SwitchIn { tid: 77 }),
                ev(10, Ev::Exit { tid: 1 }),
            ],
            10,
        );
        assert_eq!(p.ns[Doing::RunQueue as usize], 4 * MS);
        assert_eq!(sum(&p), 10 * MS);
        assert_eq!(tl.unknown_events, 1);
    }
}
