//! The fallback recorder: fork the command with `PTRACE_TRACEME`, install
//! the seccomp filter, exec, then handle stops until the whole tree is gone.
//!
//! A traced syscall stops twice: at entry (the seccomp stop, where the
//! arguments are read: the time asked for, the file executed, the thread
//! joined) and at exit (the return value tells an expired timeout from a
//! wake-up). Reads, writes and receives are never stopped at: a program
//! that makes 60,000 small reads would pay a round trip to the tracer for
//! each (25x slower, as strace makes it). Their waits show in "other";
//! the kernel-event recorder tells them apart. Per event the loop reads
//! registers, maybe a few bytes of the tracee's memory, a clock, and adds
//! to fixed-size totals.

use std::collections::HashMap;
use std::time::Instant;

use super::arch::{self, Regs, Sys};
use super::child::{Mode, arm_ticker, errno, launch, now_ns, status_of, tv_ns};
use super::procfs;
use super::{
    Coverage, Hist, Kind, MAX_PROCS, MAX_TASKS, NKIND, Prepared, ProcRow, RecordError, RecordedRun,
    TaskRow, push_bounded,
};
use crate::measure::interrupt;

const CLONE_THREAD: u64 = 0x0001_0000;
const CLONE_CHILD_CLEARTID: u64 = 0x0020_0000;

#[derive(Debug, Clone, Default)]
struct Pending {
    sys: Option<Sys>,
    entry_ns: u64,
    /// The timeout or sleep asked for; None when it waits without limit.
    asked_ns: Option<u64>,
    /// For a futex wait on a thread's exit: that thread.
    join: i32,
    /// For fork/clone: the clone flags and the child-tid address.
    flags: u64,
    ctid: u64,
    /// For execve: the file.
    path: Option<String>,
}

#[derive(Debug, Default)]
struct TaskState {
    row: usize,
    pending: Option<Pending>,
    seen_first_stop: bool,
    exited: bool,
}

#[derive(Debug, Default)]
struct ProcState {
    row: usize,
    /// Child-tid addresses of its threads (a futex wait there is a join).
    ctids: Vec<(u64, i32)>,
    /// The entry-point breakpoint: (address, original word, armed at ns).
    breakpoint: Option<(u64, u64, u64)>,
    /// Its pid in each PID namespace, outermost first (`NSpid`): `wait4` in
    /// a namespace (`unshare -p -f`) returns the inner one.
    nspids: Vec<i32>,
    parent: i32,
}

struct Tracer {
    start: Instant,
    run: RecordedRun,
    tasks: HashMap<i32, TaskState>,
    procs: HashMap<i32, ProcState>,
    root: i32,
    root_done: bool,
    sampler: Option<super::sampler::Sampler>,
}

/// The ptrace+seccomp recorder, for machines where perf events are not
/// allowed (containers, non-root users): it stops only at the syscalls that
/// sleep, wait on a futex or a child, start processes or sync, never at
/// reads, so its cost does not grow with I/O.
pub struct PtraceRecorder;

impl super::Recorder for PtraceRecorder {
    fn name(&self) -> &'static str {
        "ptrace"
    }
    fn blind_spots(&self) -> String {
        "ptrace+seccomp: waits on pipes, sockets and disks are not told apart (they count as other), and the critical path follows only waits for children and thread joins".into()
    }
    fn record(&self, p: &Prepared) -> Result<RecordedRun, RecordError> {
        let mode = if p.opts.trace {
            Mode::Ptrace
        } else {
            Mode::Plain
        };
        launch(p, mode, &mut |s| traced(p, s.pid, s.start()))
    }
}

/// Read tracee memory; the number of bytes read.
fn read_mem(pid: i32, addr: u64, buf: &mut [u8]) -> usize {
    if addr == 0 {
        return 0;
    }
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: one local iovec over a live buffer of its length; the remote
    // address is only read by the kernel, which checks it.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    n.max(0) as usize
}

fn read_u64s<const N: usize>(pid: i32, addr: u64) -> Option<[u64; N]> {
    let mut buf = [0u8; 64];
    let len = N * 8;
    if len > buf.len() || read_mem(pid, addr, &mut buf[..len]) != len {
        return None;
    }
    let mut out = [0u64; N];
    for (i, v) in out.iter_mut().enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&buf[i * 8..i * 8 + 8]);
        *v = u64::from_ne_bytes(w);
    }
    Some(out)
}

/// A `struct timespec` in the tracee, as ns (negative parts clamp to 0).
fn read_timespec(pid: i32, addr: u64) -> Option<u64> {
    let [s, ns] = read_u64s::<2>(pid, addr)?;
    let (s, ns) = (s as i64, ns as i64);
    Some((s.max(0) as u64).saturating_mul(1_000_000_000) + ns.clamp(0, 999_999_999) as u64)
}

/// A `struct timeval` in the tracee, as ns.
fn read_timeval(pid: i32, addr: u64) -> Option<u64> {
    let [s, us] = read_u64s::<2>(pid, addr)?;
    let (s, us) = (s as i64, us as i64);
    Some((s.max(0) as u64).saturating_mul(1_000_000_000) + us.clamp(0, 999_999) as u64 * 1000)
}

/// A NUL-terminated string in the tracee (at most 4 KiB).
fn read_cstr(pid: i32, addr: u64) -> Option<String> {
    let mut out = Vec::new();
    let mut chunk = [0u8; 256];
    let mut at = addr;
    while out.len() < 4096 {
        // Never read across a page boundary in one go: the next page may be unmapped.
        let room = (4096 - (at % 4096)) as usize;
        let want = room.min(chunk.len());
        let n = read_mem(pid, at, &mut chunk[..want]);
        if n == 0 {
            break;
        }
        if let Some(z) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..z]);
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&chunk[..n]);
        at += n as u64;
    }
    (!out.is_empty()).then(|| String::from_utf8_lossy(&out).into_owned())
}

/// The current time of `clock` in ns (for absolute timeouts).
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec.max(0) as u64 * 1_000_000_000 + ts.tv_nsec.max(0) as u64
}

fn ptrace_resume(req: libc::c_uint, tid: i32, sig: i32) {
    // SAFETY: resuming a stopped tracee; fails harmlessly if it vanished.
    unsafe {
        libc::ptrace(req, tid, 0, sig as libc::c_long);
    }
}

impl Tracer {
    fn t(&self) -> u64 {
        now_ns(self.start)
    }

    /// Register a new thread (or return the one already known).
    fn add_task(&mut self, tid: i32, tgid: i32, creator: i32, at: u64) {
        if self.tasks.contains_key(&tid) {
            if let Some(st) = self.tasks.get(&tid) {
                let row = &mut self.run.tasks[st.row];
                if row.creator == 0 && creator != 0 {
                    row.creator = creator;
                    row.tgid = tgid;
                }
            }
            return;
        }
        let (row, shared) = push_bounded(
            &mut self.run.tasks,
            TaskRow {
                tid,
                tgid,
                creator,
                start_ns: at,
                ..TaskRow::default()
            },
            MAX_TASKS,
        );
        self.run.tasks_merged += shared as u64;
        self.tasks.insert(
            tid,
            TaskState {
                row,
                ..TaskState::default()
            },
        );
        if let Some(s) = &self.sampler {
            s.add(tgid, tid);
        }
        if tgid == tid && !self.procs.contains_key(&tgid) {
            let parent = self
                .tasks
                .get(&creator)
                .map(|c| self.run.tasks[c.row].tgid)
                .unwrap_or(0);
            let (command, exe) = self
                .procs
                .get(&parent)
                .map(|p| {
                    let r = &self.run.procs[p.row];
                    (r.command.clone(), r.exe.clone())
                })
                .unwrap_or_default();
            let (prow, _) = push_bounded(
                &mut self.run.procs,
                ProcRow {
                    pid: tgid,
                    parent,
                    command,
                    exe,
                    start_ns: at,
                    ..ProcRow::default()
                },
                MAX_PROCS,
            );
            self.procs.insert(
                tgid,
                ProcState {
                    row: prow,
                    nspids: procfs::nspids(tgid),
                    parent,
                    ..ProcState::default()
                },
            );
        }
    }

    fn task_row(&mut self, tid: i32) -> Option<&mut TaskRow> {
        let row = self.tasks.get(&tid)?.row;
        self.run.tasks.get_mut(row)
    }

    fn tgid_of(&self, tid: i32) -> i32 {
        self.tasks
            .get(&tid)
            .map(|s| self.run.tasks[s.row].tgid)
            .unwrap_or(tid)
    }

    fn add(&mut self, tid: i32, kind: Kind, ns: u64, asked: u64) {
        self.run.hists[kind as usize].add(ns);
        if let Some(row) = self.task_row(tid) {
            row.aggs[kind as usize].add(ns, asked);
        }
    }

    /// A seccomp stop: a traced syscall is being entered.
    fn on_entry(&mut self, tid: i32) -> libc::c_uint {
        let Some(r) = arch::get_regs(tid) else {
            return libc::PTRACE_CONT;
        };
        let Some(sys) = arch::classify(r.nr) else {
            return libc::PTRACE_CONT;
        };
        let now = self.t();
        // An execve whose exec event never came failed (a shell searching
        // PATH): counted, not timed (its exit stop was not asked for).
        if let Some(st) = self.tasks.get_mut(&tid)
            && st
                .pending
                .as_ref()
                .is_some_and(|p| matches!(p.sys, Some(Sys::Execve | Sys::Execveat)))
        {
            st.pending = None;
            self.add(tid, Kind::ExecFailed, 0, 0);
        }
        let mut p = Pending {
            sys: Some(sys),
            entry_ns: now,
            ..Pending::default()
        };
        let ms = |v: u64| -> Option<u64> {
            let v = v as i32;
            (v >= 0).then_some(v as u64 * 1_000_000)
        };
        let a = r.args;
        match sys {
            Sys::Nanosleep => p.asked_ns = read_timespec(tid, a[0]),
            Sys::ClockNanosleep => {
                p.asked_ns = read_timespec(tid, a[2]).map(|t| {
                    if a[1] & libc::TIMER_ABSTIME as u64 != 0 {
                        t.saturating_sub(clock_ns(a[0] as libc::clockid_t))
                    } else {
                        t
                    }
                })
            }
            Sys::Poll => p.asked_ns = ms(a[2]),
            Sys::EpollWait | Sys::EpollPwait => p.asked_ns = ms(a[3]),
            Sys::Ppoll => p.asked_ns = read_timespec(tid, a[2]),
            Sys::Select => p.asked_ns = read_timeval(tid, a[4]),
            Sys::Pselect6 => p.asked_ns = read_timespec(tid, a[4]),
            Sys::EpollPwait2 => p.asked_ns = read_timespec(tid, a[3]),
            Sys::Futex => {
                let op = a[1] & 0x7f;
                let realtime = a[1] & 256 != 0 || op == 6;
                let absolute = op != 0;
                p.asked_ns = read_timespec(tid, a[3]).map(|t| {
                    if absolute {
                        let clock = if realtime {
                            libc::CLOCK_REALTIME
                        } else {
                            libc::CLOCK_MONOTONIC
                        };
                        t.saturating_sub(clock_ns(clock))
                    } else {
                        t
                    }
                });
                if op == 0 || op == 9 {
                    let tgid = self.tgid_of(tid);
                    if let Some(ps) = self.procs.get(&tgid)
                        && let Some(&(_, t)) = ps.ctids.iter().find(|(addr, _)| *addr == a[0])
                    {
                        p.join = t;
                    }
                }
            }
            Sys::FutexWaitv => {
                p.asked_ns = read_timespec(tid, a[3])
                    .map(|t| t.saturating_sub(clock_ns(a[4] as libc::clockid_t)))
            }
            Sys::Wait4 | Sys::Waitid => {
                let options = if sys == Sys::Wait4 { a[2] } else { a[3] };
                if options & libc::WNOHANG as u64 != 0 {
                    return libc::PTRACE_CONT;
                }
            }
            Sys::Fork => {}
            Sys::Clone => {
                p.flags = a[0];
                p.ctid = if cfg!(target_arch = "aarch64") {
                    a[4]
                } else {
                    a[3]
                };
            }
            Sys::Clone3 => {
                if let Some([flags, _pidfd, ctid]) = read_u64s::<3>(tid, a[0]) {
                    p.flags = flags;
                    p.ctid = ctid;
                }
            }
            Sys::Execve => p.path = read_cstr(tid, a[0]),
            Sys::Execveat => p.path = read_cstr(tid, a[1]),
            Sys::Fsync => {}
        }
        if matches!(sys, Sys::Clone | Sys::Clone3) && p.flags & CLONE_CHILD_CLEARTID == 0 {
            p.ctid = 0;
        }
        let exec = matches!(sys, Sys::Execve | Sys::Execveat);
        if let Some(st) = self.tasks.get_mut(&tid) {
            st.pending = Some(p);
        }
        // An exec ends at its exec event: no exit stop needed.
        if exec {
            libc::PTRACE_CONT
        } else {
            libc::PTRACE_SYSCALL
        }
    }

    /// A fork or clone event: the call is over for the parent.
    fn fork_returns(&mut self, tid: i32) {
        let Some(st) = self.tasks.get_mut(&tid) else {
            return;
        };
        if !st
            .pending
            .as_ref()
            .is_some_and(|p| matches!(p.sys, Some(Sys::Fork | Sys::Clone | Sys::Clone3)))
        {
            return;
        }
        if let Some(p) = st.pending.take()
            && p.flags & CLONE_THREAD == 0
        {
            // A new thread is not a new process: its start is the parent's
            // CPU (and this tracer's stop), not process creation.
            let now = self.t();
            self.add(tid, Kind::Fork, now.saturating_sub(p.entry_ns), 0);
        }
    }

    /// A syscall-exit stop.
    fn on_exit(&mut self, tid: i32) {
        let Some(p) = self.tasks.get_mut(&tid).and_then(|s| s.pending.take()) else {
            return;
        };
        let Some(sys) = p.sys else { return };
        let now = self.t();
        let dur = now.saturating_sub(p.entry_ns);
        let ret = arch::get_regs(tid).map(|r: Regs| r.ret).unwrap_or(-1);
        let timed_out = match sys {
            Sys::Futex | Sys::FutexWaitv => ret == -(libc::ETIMEDOUT as i64),
            _ => ret == 0,
        };
        match sys {
            Sys::Nanosleep | Sys::ClockNanosleep => {
                if ret == 0 {
                    self.add(tid, Kind::Sleep, dur, p.asked_ns.unwrap_or(0));
                } else {
                    self.add(tid, Kind::EventWait, dur, 0);
                }
            }
            Sys::Poll
            | Sys::Ppoll
            | Sys::Select
            | Sys::Pselect6
            | Sys::EpollWait
            | Sys::EpollPwait
            | Sys::EpollPwait2
            | Sys::Futex
            | Sys::FutexWaitv => {
                let futex = matches!(sys, Sys::Futex | Sys::FutexWaitv);
                match p.asked_ns {
                    Some(asked) if asked > 0 && timed_out => {
                        self.add(tid, Kind::TimeoutExpired, dur, asked)
                    }
                    _ if p.join != 0 => {
                        self.add(tid, Kind::Join, dur, 0);
                        if let Some(row) = self.task_row(tid) {
                            push_wait(&mut row.waits, p.join, dur);
                        }
                    }
                    _ if futex => self.add(tid, Kind::LockWait, dur, 0),
                    _ => self.add(tid, Kind::EventWait, dur, 0),
                }
            }
            Sys::Wait4 | Sys::Waitid => {
                self.add(tid, Kind::ChildWait, dur, 0);
                // wait4 returns the pid; waitid fills a siginfo (pid unknown here).
                if sys == Sys::Wait4 && ret > 0 {
                    let waited = self.global_pid(tid, ret as i32);
                    if let Some(row) = self.task_row(tid) {
                        push_wait(&mut row.waits, waited, dur);
                    }
                }
            }
            Sys::Fork | Sys::Clone | Sys::Clone3 if p.flags & CLONE_THREAD == 0 => {
                self.add(tid, Kind::Fork, dur, 0)
            }
            Sys::Fork | Sys::Clone | Sys::Clone3 => {}
            Sys::Execve | Sys::Execveat => {
                if ret == 0 {
                    self.add(tid, Kind::Exec, dur, 0);
                    let tgid = self.tgid_of(tid);
                    if let Some(ps) = self.procs.get_mut(&tgid)
                        && let Some(bp) = ps.breakpoint.as_mut()
                    {
                        bp.2 = now;
                    }
                } else {
                    self.add(tid, Kind::ExecFailed, dur, 0);
                }
            }
            Sys::Fsync => self.add(tid, Kind::Fsync, dur, 0),
        }
    }

    /// The host pid of the child that `wait4` in thread `tid` returned as
    /// `pid` (the same, outside PID namespaces).
    fn global_pid(&self, tid: i32, pid: i32) -> i32 {
        let waiter = self.tgid_of(tid);
        let depth = self.procs.get(&waiter).map_or(1, |p| p.nspids.len().max(1));
        if depth <= 1 {
            return pid;
        }
        self.procs
            .iter()
            .find(|(_, p)| p.parent == waiter && p.nspids.get(depth - 1) == Some(&pid))
            .map_or(pid, |(g, _)| *g)
    }

    /// A fork/vfork/clone event: `new` was created by `tid`.
    fn on_new_task(&mut self, tid: i32, new: i32) {
        let flags = self
            .tasks
            .get(&tid)
            .and_then(|s| s.pending.as_ref())
            .map(|p| (p.flags, p.ctid))
            .unwrap_or((0, 0));
        let tgid = if flags.0 & CLONE_THREAD != 0 {
            self.tgid_of(tid)
        } else {
            new
        };
        let now = self.t();
        self.add_task(new, tgid, tid, now);
        if flags.1 != 0
            && tgid != new
            && let Some(ps) = self.procs.get_mut(&tgid)
            && ps.ctids.len() < 100_000
        {
            ps.ctids.push((flags.1, new));
        }
    }

    /// An exec event: `tid` now runs a new program.
    fn on_exec(&mut self, tid: i32, former: i32) {
        if former != tid
            && former > 0
            && let Some(mut old) = self.tasks.remove(&former)
        {
            let now = self.t();
            if let Some(row) = self.run.tasks.get_mut(old.row) {
                row.end_ns = now;
            }
            if let Some(st) = self.tasks.get_mut(&tid) {
                st.pending = old.pending.take();
            }
        }
        let pending = self.tasks.get_mut(&tid).and_then(|s| s.pending.take());
        let now = self.t();
        let path = pending
            .as_ref()
            .and_then(|p| p.path.clone())
            .unwrap_or_default();
        if let Some(p) = &pending {
            self.add(tid, Kind::Exec, now.saturating_sub(p.entry_ns), 0);
        }
        let tgid = self.tgid_of(tid);
        let command = procfs::cmdline(tid, 300);
        let size = procfs::exe_size(tid, &path);
        let breakpoint = arm_breakpoint(tid);
        if let Some(ps) = self.procs.get_mut(&tgid) {
            ps.ctids.clear();
            ps.breakpoint = breakpoint.map(|(addr, word)| (addr, word, now));
            if let Some(row) = self.run.procs.get_mut(ps.row) {
                row.command = command;
                row.exe = path;
                row.exe_size = size;
                row.execs += 1;
            }
        }
    }

    /// A SIGTRAP that may be our entry-point breakpoint.
    fn on_trap(&mut self, tid: i32) -> bool {
        let tgid = self.tgid_of(tid);
        let Some((addr, word, armed)) = self.procs.get(&tgid).and_then(|p| p.breakpoint) else {
            return false;
        };
        let Some((_, back)) = arch::BREAKPOINT else {
            return false;
        };
        let Some(r) = arch::get_regs(tid) else {
            return false;
        };
        if r.ip != addr + back {
            return false;
        }
        // SAFETY: restores the word the breakpoint replaced in a stopped tracee.
        unsafe {
            libc::ptrace(libc::PTRACE_POKEDATA, tid, addr, word);
        }
        arch::set_ip(tid, addr);
        if let Some(ps) = self.procs.get_mut(&tgid) {
            ps.breakpoint = None;
        }
        let now = self.t();
        self.add(tid, Kind::Load, now.saturating_sub(armed), 0);
        true
    }

    /// A thread is about to exit: read what the kernel counted for it.
    fn on_exit_event(&mut self, tid: i32) {
        let tgid = self.tgid_of(tid);
        let stats = procfs::thread_stats(tgid, tid);
        let now = self.t();
        if let Some(st) = self.tasks.get_mut(&tid) {
            st.exited = true;
        }
        if let Some(row) = self.task_row(tid) {
            if row.tid == tid {
                row.stats = stats;
            } else {
                // A merged row: add.
                row.stats.cpu_ns += stats.cpu_ns;
                row.stats.run_delay_ns += stats.run_delay_ns;
                row.stats.utime_ticks += stats.utime_ticks;
                row.stats.stime_ticks += stats.stime_ticks;
                row.stats.minflt += stats.minflt;
                row.stats.majflt += stats.majflt;
                row.stats.blkio_ticks += stats.blkio_ticks;
            }
            row.end_ns = now;
        }
        if tid == tgid
            && let Some(ps) = self.procs.get(&tgid)
            && let Some(row) = self.run.procs.get_mut(ps.row)
        {
            row.end_ns = now;
        }
    }

    /// A thread is gone (reaped).
    fn on_gone(&mut self, tid: i32) {
        if let Some(s) = &self.sampler {
            s.remove(tid);
        }
        procfs::forget(tid);
        let now = self.t();
        if let Some(st) = self.tasks.remove(&tid)
            && let Some(row) = self.run.tasks.get_mut(st.row)
            && row.end_ns == 0
        {
            row.end_ns = now;
        }
        if let Some(ps) = self.procs.get(&tid)
            && let Some(row) = self.run.procs.get_mut(ps.row)
            && row.end_ns == 0
        {
            row.end_ns = now;
        }
    }

    fn kill_all(&self) {
        for &tid in self.tasks.keys() {
            interrupt::sigkill(tid);
        }
    }
}

fn push_wait(waits: &mut Vec<(i32, u64)>, target: i32, ns: u64) {
    if let Some(w) = waits.iter_mut().find(|(t, _)| *t == target) {
        w.1 += ns;
    } else if waits.len() < 10_000 {
        waits.push((target, ns));
    }
}

/// Put a breakpoint at the program's entry point: (address, original word).
fn arm_breakpoint(tid: i32) -> Option<(u64, u64)> {
    let (byte, _) = arch::BREAKPOINT?;
    let entry = procfs::entry_point(tid)?;
    // SAFETY: peek/poke a word of a stopped tracee's memory; errno tells failure.
    unsafe {
        *libc::__errno_location() = 0;
        let word = libc::ptrace(libc::PTRACE_PEEKDATA, tid, entry, 0) as u64;
        if errno() != 0 {
            return None;
        }
        let patched = (word & !0xff) | byte as u64;
        if libc::ptrace(libc::PTRACE_POKEDATA, tid, entry, patched) != 0 {
            return None;
        }
        Some((entry, word))
    }
}

/// The traced event loop, from the child's first SIGSTOP to the last task's exit.
fn traced(p: &Prepared, pid: i32, start: Instant) -> RecordedRun {
    let mut tr = Tracer {
        start,
        run: RecordedRun {
            coverage: Some(Coverage::Full),
            hists: [Hist::default(); NKIND],
            ..RecordedRun::default()
        },
        tasks: HashMap::new(),
        procs: HashMap::new(),
        root: pid,
        root_done: false,
        sampler: Some(super::sampler::Sampler::start()),
    };
    tr.add_task(pid, pid, 0, 0);
    if let Some(row) = tr.run.procs.first_mut() {
        row.command = p
            .argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ");
        row.exe = p.program.to_string_lossy().into_owned();
    }
    let mut status = 0;
    // SAFETY: waits for our child's SIGSTOP.
    unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
    let options = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACESECCOMP
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACEEXIT
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: the child is in its SIGSTOP.
    unsafe {
        libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, options as libc::c_long);
    }
    if let Some(st) = tr.tasks.get_mut(&pid) {
        st.seen_first_stop = true;
    }
    ptrace_resume(libc::PTRACE_CONT, pid, 0);

    let deadline = p.opts.timeout.map(|t| start + t);
    let mut straggler_deadline: Option<Instant> = None;
    let mut killed = false;
    arm_ticker(true);
    while !tr.tasks.is_empty() {
        let mut status = 0;
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for any traced task; rusage is plain data.
        let tid = unsafe { libc::wait4(-1, &mut status, libc::__WALL, &mut ru) };
        if tid < 0 {
            let e = errno();
            if e == libc::EINTR {
                let now = Instant::now();
                let over = deadline.is_some_and(|d| now >= d)
                    || straggler_deadline.is_some_and(|d| now >= d);
                if interrupt::requested() && !killed {
                    tr.run.interrupted = true;
                    tr.kill_all();
                    killed = true;
                } else if over && !killed {
                    if !tr.root_done {
                        tr.run.timed_out = true;
                    }
                    tr.kill_all();
                    killed = true;
                }
                continue;
            }
            break; // ECHILD: nothing left.
        }
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            if tid == tr.root {
                tr.run.wall_ns = now_ns(start);
                tr.root_done = true;
                status_of(&mut tr.run, status);
                tr.run.root_user_ns = tv_ns(ru.ru_utime);
                tr.run.root_sys_ns = tv_ns(ru.ru_stime);
                tr.run.root_minflt = ru.ru_minflt.max(0) as u64;
                tr.run.root_majflt = ru.ru_majflt.max(0) as u64;
                let now = Instant::now();
                let wait = p.opts.straggler_wait;
                straggler_deadline = Some(match deadline {
                    Some(d) => d.max(now),
                    None => now + wait,
                });
                // Name what outlives the command.
                let alive: Vec<i32> = tr
                    .procs
                    .keys()
                    .copied()
                    .filter(|pid| *pid != tr.root && tr.tasks.contains_key(pid))
                    .collect();
                for pid in alive {
                    let cmd = tr
                        .procs
                        .get(&pid)
                        .and_then(|ps| tr.run.procs.get(ps.row))
                        .map(|r| r.command.clone())
                        .unwrap_or_default();
                    tr.run.stragglers.push((pid, cmd, false));
                }
            }
            tr.on_gone(tid);
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        if !tr.tasks.contains_key(&tid) {
            // A new task whose first stop came before its creator's event.
            let tgid = tgid_from_proc(tid).unwrap_or(tid);
            let now = tr.t();
            tr.add_task(tid, tgid, 0, now);
        }
        let sig = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        let mut resume = libc::PTRACE_CONT;
        let mut deliver = 0;
        let wants_exit =
            |tr: &Tracer, tid: i32| tr.tasks.get(&tid).is_some_and(|s| s.pending.is_some());
        if sig == (libc::SIGTRAP | 0x80) {
            tr.run.stops += 1;
            tr.on_exit(tid);
        } else if sig == libc::SIGTRAP && event != 0 {
            match event {
                libc::PTRACE_EVENT_SECCOMP => {
                    tr.run.stops += 1;
                    resume = tr.on_entry(tid);
                }
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    let mut msg: libc::c_ulong = 0;
                    // SAFETY: GETEVENTMSG writes one unsigned long.
                    unsafe {
                        libc::ptrace(libc::PTRACE_GETEVENTMSG, tid, 0, &mut msg as *mut _);
                    }
                    tr.on_new_task(tid, msg as i32);
                    if event != libc::PTRACE_EVENT_VFORK {
                        // The event comes as fork returns: it ends the call
                        // (one stop fewer than waiting for the syscall's exit).
                        tr.fork_returns(tid);
                    }
                    if wants_exit(&tr, tid) {
                        resume = libc::PTRACE_SYSCALL;
                    }
                }
                libc::PTRACE_EVENT_EXEC => {
                    let mut msg: libc::c_ulong = 0;
                    // SAFETY: as above.
                    unsafe {
                        libc::ptrace(libc::PTRACE_GETEVENTMSG, tid, 0, &mut msg as *mut _);
                    }
                    tr.on_exec(tid, msg as i32);
                    if wants_exit(&tr, tid) {
                        resume = libc::PTRACE_SYSCALL;
                    }
                }
                libc::PTRACE_EVENT_EXIT => tr.on_exit_event(tid),
                _ => {}
            }
        } else if sig == libc::SIGTRAP && tr.on_trap(tid) {
            // Our breakpoint: swallowed.
        } else if sig == libc::SIGSTOP && tr.tasks.get(&tid).is_some_and(|s| !s.seen_first_stop) {
            if let Some(st) = tr.tasks.get_mut(&tid) {
                st.seen_first_stop = true;
            }
        } else {
            // A signal for the tracee: deliver it, unless this is a group-stop.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: GETSIGINFO fills a siginfo_t.
            let rc = unsafe { libc::ptrace(libc::PTRACE_GETSIGINFO, tid, 0, &mut info as *mut _) };
            if rc == 0 {
                deliver = sig;
            }
            if wants_exit(&tr, tid) {
                resume = libc::PTRACE_SYSCALL;
            }
        }
        if let Some(st) = tr.tasks.get_mut(&tid)
            && !st.seen_first_stop
        {
            st.seen_first_stop = true;
        }
        ptrace_resume(resume, tid, deliver);
    }
    arm_ticker(false);
    if !tr.root_done {
        tr.run.wall_ns = now_ns(start);
    }
    // Which stragglers had to be killed.
    for s in tr.run.stragglers.iter_mut() {
        let ended = tr
            .procs
            .get(&s.0)
            .and_then(|ps| tr.run.procs.get(ps.row))
            .map(|r| r.end_ns)
            .unwrap_or(0);
        s.2 = killed || ended == 0;
    }
    if let Some(sampler) = tr.sampler.take() {
        let tallies = sampler.finish();
        for row in tr.run.tasks.iter_mut() {
            if let Some(t) = tallies.get(&row.tid) {
                row.sampled = *t;
            }
        }
    }
    tr.run
}

fn tgid_from_proc(tid: i32) -> Option<i32> {
    // /proc in another PID namespace: its Tgid is not in tardy's numbers.
    if super::procfs::foreign() {
        return None;
    }
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The cost one traced syscall adds to the thread that makes it, measured on
/// this machine: a forked child makes a cheap syscall (`ppoll` with a zero
/// timeout) N times untraced and N times traced, answered with an entry and
/// an exit stop as the recorder answers them; the difference per call, in ns.
pub fn calibrate_stop_cost() -> Option<u64> {
    // Whether tracer and tracee share a CPU changes the cost several-fold on
    // some machines: the median of three calibrations.
    let mut v: Vec<u64> = (0..3).filter_map(|_| calibrate_in_child()).collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied()
}

fn calibrate_in_child() -> Option<u64> {
    let filter = super::filter::program();
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fds.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: the child below only makes raw syscalls and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return None;
    }
    if pid == 0 {
        // SAFETY: async-signal-safe calls only; `filter` was built before the fork.
        unsafe {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let call = || {
                libc::syscall(
                    libc::SYS_ppoll,
                    std::ptr::null::<libc::pollfd>(),
                    0usize,
                    &zero as *const libc::timespec,
                    std::ptr::null::<libc::sigset_t>(),
                    0usize,
                );
            };
            // Per-call time of batches of B calls: the untraced floor is the
            // fastest batch, the traced cost the median batch (robust to a
            // descheduled batch on a noisy machine).
            const B: u64 = 50;
            let batches = |f: &dyn Fn(), out: &mut [u64; 12]| {
                for slot in out.iter_mut() {
                    let a = clock_ns(libc::CLOCK_MONOTONIC);
                    for _ in 0..B {
                        f();
                    }
                    *slot = (clock_ns(libc::CLOCK_MONOTONIC) - a) / B;
                }
                out.sort_unstable();
            };
            let mut plain = [0u64; 12];
            batches(&call, &mut plain);
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                libc::_exit(1);
            }
            libc::raise(libc::SIGSTOP);
            let prog = libc::sock_fprog {
                len: filter.len() as libc::c_ushort,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            if libc::syscall(libc::SYS_seccomp, 1usize, 0usize, &prog as *const _) != 0 {
                libc::_exit(1);
            }
            let mut traced = [0u64; 12];
            batches(&call, &mut traced);
            let per = traced[6].saturating_sub(plain[0]);
            libc::write(fds[1], &per as *const u64 as *const libc::c_void, 8);
            libc::_exit(0);
        }
    }
    // SAFETY: close our copy of the write end.
    unsafe { libc::close(fds[1]) };
    let mut status = 0;
    // SAFETY: tracing our own child: wait for its SIGSTOP, set options, then
    // answer its seccomp stops with an exit stop, as the recorder does.
    unsafe {
        if libc::waitpid(pid, &mut status, libc::__WALL) != pid || !libc::WIFSTOPPED(status) {
            libc::close(fds[0]);
            return None;
        }
        let options =
            libc::PTRACE_O_TRACESYSGOOD | libc::PTRACE_O_TRACESECCOMP | libc::PTRACE_O_EXITKILL;
        libc::ptrace(libc::PTRACE_SETOPTIONS, pid, 0, options as libc::c_long);
        libc::ptrace(libc::PTRACE_CONT, pid, 0, 0);
        loop {
            if libc::waitpid(pid, &mut status, libc::__WALL) != pid {
                break;
            }
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                break;
            }
            let sig = libc::WSTOPSIG(status);
            let event = (status >> 16) & 0xff;
            if sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_SECCOMP {
                let _ = arch::get_regs(pid);
                libc::ptrace(libc::PTRACE_SYSCALL, pid, 0, 0);
            } else if sig == (libc::SIGTRAP | 0x80) {
                let _ = arch::get_regs(pid);
                libc::ptrace(libc::PTRACE_CONT, pid, 0, 0);
            } else {
                libc::ptrace(libc::PTRACE_CONT, pid, 0, sig as libc::c_long);
            }
        }
        let mut per = 0u64;
        let n = libc::read(fds[0], &mut per as *mut u64 as *mut libc::c_void, 8);
        libc::close(fds[0]);
        (n == 8 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0).then_some(per)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn calibration_measures_a_positive_cost_or_says_it_cannot() {
        for _ in 0..3 {
            let c = super::calibrate_stop_cost();
            eprintln!("stop cost: {c:?}");
            if let Some(ns) = c {
                assert!(ns < 10_000_000, "{ns}");
            }
        }
    }
}
