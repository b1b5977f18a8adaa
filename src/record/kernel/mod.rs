//! The kernel-event recorder: what the scheduler itself says about the
//! command's tree, read from perf ring buffers while it runs. No stop of
//! the command at all, so its cost does not depend on what the program does
//! (each event is one write into a ring buffer, about 100 ns, and events
//! only happen when a thread switches, wakes another, forks, execs, arms a
//! sleeping timer or syncs a file).
//!
//! Which tasks: the command joins a cgroup made for the session
//! ([`cgroup`]) while it is gated before its exec, and the events are opened
//! once per CPU with perf's cgroup filter, so every thread and process it
//! creates is seen with nothing copied at fork. Where no cgroup is writable
//! (or `TARDY_NO_CGROUP` is set), the events are opened on the command
//! before it execs and inherited by every task it creates (the kernel then
//! copies each event into each new task: about 20 µs a fork).
//!
//! Events, once per CPU, all sent into one ring buffer per CPU:
//! - side-band records: fork, exit, and every switch in and out (with
//!   whether the thread was still runnable: preempted);
//! - `sched:sched_switch` for switches of threads that block, with the
//!   kernel call chain (where it blocked: [`ksyms`]);
//! - `sched:sched_waking`: who woke whom (the wake-up graph);
//! - `sched:sched_process_exec`: which program each exec started;
//! - `timer:hrtimer_start` for sleeping timers: the time asked and the slack;
//! - `syscalls:sys_{enter,exit}_{fsync,fdatasync}` and the file systems'
//!   fsync tracepoints (ext4, xfs, btrfs): each fsync (uprobes on libc's
//!   fsync and fdatasync where the kernel has no syscall tracepoints);
//! - a uprobe on the dynamic loader's `_dl_debug_state` (when loading ends).
//!
//! [`timeline`] turns them into per-thread totals and the critical path.

pub mod attach;
pub mod cgroup;
pub mod elf;
pub mod ksyms;
pub mod perf;
pub mod teardown;
pub mod timeline;
pub mod tracefs;

use foldhash::{HashMap, HashMapExt};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::child::{self, Mode, Started};
use super::{Coverage, Prepared, RecordError, RecordedRun};
use crate::measure::interrupt;
use cgroup::Group;
use ksyms::{Ksyms, Site};
use perf::{Chain, Ring, Source, Spec};
use timeline::{Ev, Timed, Timeline};

/// Data pages of each CPU's ring buffer for a run of its own (1 MiB with
/// 4 KiB pages); the session's rings are sized by [`session_ring_pages`].
const RING_PAGES: usize = 256;

/// Data pages of each CPU's session ring: 64 MiB over all CPUs, at least
/// 2 MiB and at most 8 MiB each (a power of two). The reader drains every
/// 10 ms, or as soon as a ring is half full; a thread ping-pong on two CPUs
/// writes 130 MB a second into each ring, which filled 1 MiB rings in
/// 4 ms and lost a fifth of its events.
fn session_ring_pages(cpus: usize) -> usize {
    let page = 4096usize;
    let each = (64usize << 20) / cpus.max(1);
    let each = each.clamp(2 << 20, 8 << 20);
    let pages = each / page;
    // The largest power of two not above it.
    1usize << (usize::BITS - 1 - pages.leading_zeros())
}
/// How deep a kernel call chain is read at a blocking switch.
const KERNEL_STACK: u16 = 24;
/// How deep a profile sample's call chain is read (user and kernel).
const PROFILE_STACK: u16 = crate::profile::MAX_DEPTH as u16;
/// Bytes of the user stack copied with each profile sample, to unwind
/// what frame pointers miss (code built without them).
const CPU_STACK_COPY: u32 = 2048;
/// Bytes of the user stack copied at each blocking switch: enough for the
/// C library's frames between the program's code and the system call
/// (`pthread_mutex_lock`, `sem_wait`, `read`). The user chain and this copy
/// cost about 0.7 µs a blocking switch (a thread ping-pong on one CPU:
/// 3.6 µs a switch recorded, 2.9 µs without them).
const WAIT_STACK_COPY: u32 = 256;
/// Bytes of the user stack copied at each wake-up by a thread of the tree
/// (wake-up stacks): none. The waker's user frames come from its frame
/// pointers alone: a copy of 256 bytes a wake-up made a wake-up storm
/// (two million wake-ups a second) lose 39,000 events and cost 1.24x,
/// where the frame pointers alone cost 1.15x and lose none
/// (`TARDY_NO_WAKER_STACKS=1` turns them off to compare).
const WAKE_STACK_COPY: u32 = 0;
/// Events younger than this stay staged: another CPU's ring may still hold
/// an older one.
const REORDER_NS: u64 = 5_000_000;

/// What each opened event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    Sideband,
    Switch,
    Waking,
    Exec,
    Timer,
    FsyncEnter,
    FsyncExit,
    FsyncMark,
    Loader,
    /// The profile's cpu-clock samples.
    Cpu,
}

impl What {
    /// The loader probe, timers and fsync tracepoints are extras.
    fn required(self) -> bool {
        matches!(
            self,
            What::Sideband | What::Switch | What::Waking | What::Exec
        )
    }
}

/// Field offsets read from tracefs.
#[derive(Debug, Clone, Default)]
struct Offsets {
    switch_state: usize,
    waking_pid: usize,
    exec_filename: usize,
    exec_pid: usize,
    exec_old_pid: usize,
    timer_function: usize,
    timer_expires: usize,
    timer_soft: usize,
}

/// Everything found once per tardy process: tracepoint ids and layouts,
/// kernel symbols, the loader's probe point.
pub struct KernelRecorder {
    events: Vec<(What, u64)>,
    /// Uprobes (the loader's end, libc's fsyncs), defined in tracefs under
    /// this process's group and opened on each run's command alone (never
    /// on whole CPUs or the cgroup: the kernel would then plant their
    /// breakpoints in every process on the machine, and a valgrind beside
    /// the session dies of the SIGTRAP).
    uprobes: Vec<(What, u64)>,
    /// One disabled event on tardy itself per tracepoint and uprobe used,
    /// held for the session: a run's events are then never the last ones
    /// on their tracepoint, whose close waits for a grace period.
    anchors: Vec<(u64, OwnedFd)>,
    /// Where tracefs is (this process's uprobes are removed at the end).
    root: PathBuf,
    shared: std::cell::RefCell<Option<Shared>>,
    shared_tried: std::cell::Cell<bool>,
    off: Offsets,
    ksyms: Ksyms,
    loader: Option<(u64, PathBuf)>,
    cpus: Vec<i32>,
    interp_cache: std::cell::RefCell<HashMap<String, bool>>,
    /// The directory the current command starts in.
    cwd: std::cell::RefCell<PathBuf>,
    /// Profile samples a second per thread (0: none), fixed by the first
    /// run of the session (its events are opened once).
    profile_hz: std::cell::Cell<u64>,
    /// What limits the profile (a lowered rate, a refused event), said once a run.
    profile_notes: std::cell::RefCell<Vec<String>>,
    /// mmap records can carry build ids.
    build_ids: bool,
    /// TARDY_NO_WAKER_STACKS: wake-ups without the waker's call chain (to
    /// measure what the chains cost).
    no_waker_stacks: bool,
}

fn in_initial_pid_namespace() -> bool {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .is_none_or(|v| v.split_whitespace().count() <= 1)
}

impl KernelRecorder {
    /// Find what the recorder needs, or say why it cannot run here.
    pub fn new() -> Result<KernelRecorder, String> {
        if !in_initial_pid_namespace() {
            return Err("tardy runs in a PID namespace (a container): the kernel's events name threads by their host ids".into());
        }
        // Can this process open perf events on its own children at all?
        let probe = Spec {
            source: Source::Sideband {
                mmaps: false,
                build_id: false,
            },
            sample_type: perf::SAMPLE_TID,
            chain: Chain::None,
            cpu_wide: false,
        };
        perf::open(&probe, 0, -1).map_err(|e| {
            format!(
                "perf events are not allowed ({e}; needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 1)"
            )
        })?;
        // Whether mmap records can carry build ids (kernels 5.12 and later).
        let build_ids = perf::open(
            &Spec {
                source: Source::Sideband {
                    mmaps: true,
                    build_id: true,
                },
                ..probe
            },
            0,
            -1,
        )
        .is_ok();
        // The kernel's symbols (about 50 ms of reading /proc/kallsyms) load
        // on a thread while the tracepoints are found and opened.
        let kallsyms = std::thread::Builder::new()
            .name("tardy-kallsyms".into())
            .spawn(Ksyms::load);
        let root = tracefs::root()?;
        tracefs::sweep_probes(&root);
        let need = |g: &str, n: &str| {
            tracefs::tracepoint(&root, g, n)
                .ok_or_else(|| format!("the kernel has no tracepoint {g}:{n}"))
        };
        let switch = need("sched", "sched_switch")?;
        let waking = need("sched", "sched_waking")?;
        let exec = need("sched", "sched_process_exec")?;
        let field = |tp: &tracefs::Tracepoint, f: &str| {
            tp.offset(f)
                .ok_or_else(|| format!("tracepoint field {f} is missing"))
        };
        let mut off = Offsets {
            switch_state: field(&switch, "prev_state")?,
            waking_pid: field(&waking, "pid")?,
            exec_filename: field(&exec, "filename")?,
            exec_pid: field(&exec, "pid")?,
            exec_old_pid: field(&exec, "old_pid")?,
            ..Offsets::default()
        };
        let mut events = vec![
            (What::Switch, switch.id),
            (What::Waking, waking.id),
            (What::Exec, exec.id),
        ];
        if let Some(tp) = tracefs::tracepoint(&root, "timer", "hrtimer_start")
            && let (Some(f), Some(e), Some(s)) = (
                tp.offset("function"),
                tp.offset("expires"),
                tp.offset("softexpires"),
            )
        {
            off.timer_function = f;
            off.timer_expires = e;
            off.timer_soft = s;
            events.push((What::Timer, tp.id));
        }
        for (g, n, what) in [
            ("ext4", "ext4_sync_file_enter", What::FsyncEnter),
            ("ext4", "ext4_sync_file_exit", What::FsyncExit),
            ("xfs", "xfs_file_fsync", What::FsyncMark),
            ("btrfs", "btrfs_sync_file", What::FsyncMark),
        ] {
            if let Some(tp) = tracefs::tracepoint(&root, g, n) {
                events.push((what, tp.id));
            }
        }
        // fsync and fdatasync at the system call, for every program (Go's
        // too, which has no libc) and on every file system (tmpfs's never
        // wait). Without syscall tracepoints, uprobes on libc's wrappers:
        // each of those costs the kernel twice a tracepoint's time to tear
        // down (about 80 against 36 ms here, one after another).
        let syscalls: Vec<(What, u64)> = [
            ("sys_enter_fsync", What::FsyncEnter),
            ("sys_exit_fsync", What::FsyncExit),
            ("sys_enter_fdatasync", What::FsyncEnter),
            ("sys_exit_fdatasync", What::FsyncExit),
        ]
        .into_iter()
        .filter_map(|(n, what)| Some((what, tracefs::tracepoint(&root, "syscalls", n)?.id)))
        .collect();
        let mut uprobes = if syscalls.len() == 4 {
            events.extend(syscalls);
            Vec::new()
        } else {
            fsync_probes(&root)
        };
        let loader = loader_probe(&root);
        if let Some((id, _)) = &loader {
            uprobes.push((What::Loader, *id));
        }
        let anchors = events
            .iter()
            .chain(&uprobes)
            .filter_map(|&(_, id)| Some((id, perf::open_anchor(id).ok()?)))
            .collect();
        let ksyms = match kallsyms {
            Ok(t) => t.join().unwrap_or_default(),
            Err(_) => Ksyms::load(),
        };
        Ok(KernelRecorder {
            no_waker_stacks: std::env::var_os("TARDY_NO_WAKER_STACKS").is_some(),
            events,
            uprobes,
            anchors,
            root,
            shared: std::cell::RefCell::new(None),
            shared_tried: std::cell::Cell::new(false),
            off,
            ksyms,
            loader,
            cpus: perf::online_cpus(),
            interp_cache: std::cell::RefCell::new(HashMap::new()),
            cwd: std::cell::RefCell::new(PathBuf::new()),
            profile_hz: std::cell::Cell::new(0),
            profile_notes: std::cell::RefCell::new(Vec::new()),
            build_ids,
        })
    }

    /// Whether blocking switches carry a call chain (kernel symbols to
    /// say where; a profile to say which code waits).
    fn switch_chains(&self) -> bool {
        self.profile_hz.get() > 0 || !self.ksyms.is_empty()
    }

    /// Whether each wake-up carries the waker's call chain (the profile's
    /// wake-up stacks: who ended each wait, from which code).
    fn waker_chains(&self) -> bool {
        self.profile_hz.get() > 0 && !self.no_waker_stacks
    }

    /// The events opened on each run's command.
    fn task_specs(&self, cpu_wide: bool) -> Vec<(What, Spec)> {
        let basic = perf::SAMPLE_IDENTIFIER | perf::SAMPLE_TID | perf::SAMPLE_TIME;
        let mut out = vec![(
            What::Sideband,
            Spec {
                source: Source::Sideband {
                    mmaps: self.profile_hz.get() > 0,
                    build_id: self.build_ids,
                },
                sample_type: basic,
                chain: Chain::None,
                cpu_wide,
            },
        )];
        if self.profile_hz.get() > 0 {
            out.push((
                What::Cpu,
                Spec {
                    source: Source::CpuClock(self.profile_hz.get()),
                    sample_type: basic | perf::SAMPLE_PERIOD | perf::SAMPLE_CALLCHAIN,
                    chain: Chain::Both(PROFILE_STACK, CPU_STACK_COPY),
                    cpu_wide,
                },
            ));
        }
        for &(what, id) in &self.events {
            let mut sample_type = basic;
            let mut chain = Chain::None;
            match what {
                What::Switch => {
                    sample_type |= perf::SAMPLE_RAW;
                    if self.profile_hz.get() > 0 {
                        // Off-CPU stacks: where each blocking thread waits.
                        sample_type |= perf::SAMPLE_CALLCHAIN;
                        chain = Chain::Both(PROFILE_STACK, WAIT_STACK_COPY);
                    } else if !self.ksyms.is_empty() {
                        sample_type |= perf::SAMPLE_CALLCHAIN;
                        chain = Chain::Kernel(KERNEL_STACK);
                    }
                }
                What::Waking if self.waker_chains() => {
                    // Wake-up stacks: the waker's chain where it woke a thread.
                    sample_type |= perf::SAMPLE_RAW | perf::SAMPLE_CALLCHAIN;
                    chain = Chain::User(PROFILE_STACK, WAKE_STACK_COPY);
                }
                What::Waking | What::Exec | What::Timer => sample_type |= perf::SAMPLE_RAW,
                _ => {}
            }
            out.push((
                what,
                Spec {
                    source: Source::Tracepoint(id),
                    sample_type,
                    chain,
                    cpu_wide,
                },
            ));
        }
        out
    }

    fn uprobe_specs(&self, cpu_wide: bool) -> Vec<(What, Spec)> {
        self.uprobes
            .iter()
            .map(|&(what, id)| {
                (
                    what,
                    Spec {
                        source: Source::Tracepoint(id),
                        sample_type: perf::SAMPLE_IDENTIFIER | perf::SAMPLE_TID | perf::SAMPLE_TIME,
                        chain: Chain::None,
                        cpu_wide,
                    },
                )
            })
            .collect()
    }

    /// The session's rings and uprobes, made on first use; `None` when this
    /// process may not open events on whole CPUs (then each run has rings
    /// of its own).
    fn shared(&self) -> std::cell::RefMut<'_, Option<Shared>> {
        if !self.shared_tried.replace(true) {
            *self.shared.borrow_mut() = self.open_shared();
        }
        self.shared.borrow_mut()
    }

    fn open_shared(&self) -> Option<Shared> {
        let mut pages = session_ring_pages(self.cpus.len());
        let owner = |pages: usize| Spec {
            source: Source::RingOwner {
                wakeup_bytes: (pages * 4096 / 2) as u32,
            },
            sample_type: perf::SAMPLE_IDENTIFIER | perf::SAMPLE_TID | perf::SAMPLE_TIME,
            chain: Chain::None,
            cpu_wide: true,
        };
        let mut sh = Shared {
            rings: Vec::new(),
            ids: HashMap::new(),
            group_fds: Vec::new(),
            group: None,
        };
        for &cpu in &self.cpus {
            // Smaller rings where locked memory is limited (not root).
            let ring = loop {
                match Ring::map(perf::open(&owner(pages), -1, cpu).ok()?, pages) {
                    Ok(r) => break r,
                    Err(_) if pages > RING_PAGES / 4 => pages /= 2,
                    Err(_) => return None,
                }
            };
            sh.rings.push(ring);
        }
        if std::env::var_os("TARDY_NO_CGROUP").is_none()
            && let Some((g, fds)) = self.open_group(&sh.rings, &mut sh.ids)
        {
            sh.group = Some(g);
            sh.group_fds = fds;
        }
        Some(sh)
    }

    /// Open every event on `pid`: into the session's rings, or (when those
    /// are not allowed) into rings of this run's own. With `join`, a
    /// command tardy started joins the session's cgroup instead (a running
    /// program, `--pid`, is never moved out of its own).
    fn open(&self, pid: i32, shared: Option<&mut Shared>, join: bool) -> Result<Opened, String> {
        let mut specs = self.task_specs(false);
        specs.extend(self.uprobe_specs(false));
        let mut rings = Vec::new();
        let mut fds = Vec::new();
        let mut ids: HashMap<u64, What> = HashMap::new();
        if let Some(sh) = &shared {
            ids.extend(sh.ids.iter().map(|(k, v)| (*k, *v)));
            // The session's cgroup: the command joins it while gated; only
            // the uprobes are opened on it, inherited by what it starts.
            if join
                && let Some(g) = &sh.group
                && g.add(pid).is_ok()
            {
                for (n, &cpu) in self.cpus.iter().enumerate() {
                    let Some(ring) = sh.rings.get(n) else {
                        continue;
                    };
                    for (what, spec) in self.uprobe_specs(false) {
                        if let Ok(fd) = perf::open(&spec, pid, cpu)
                            && perf::set_output(&fd, ring.fd()).is_ok()
                        {
                            if let Ok(id) = perf::id(&fd) {
                                ids.insert(id, what);
                            }
                            fds.push(fd);
                        }
                    }
                }
                return Ok(Opened {
                    rings: Vec::new(),
                    _fds: fds,
                    ids,
                });
            }
        }
        for (n, &cpu) in self.cpus.iter().enumerate() {
            // Without a session ring, the side-band event owns the CPU's ring
            // (mapped first: the kernel redirects other events only into a
            // mapped buffer).
            let mut ring: Option<Ring> = None;
            let shared_ring = shared.as_ref().and_then(|sh| sh.rings.get(n));
            for (what, spec) in &specs {
                let fd = match perf::open(spec, pid, cpu) {
                    Ok(fd) => fd,
                    Err(e) if !what.required() => {
                        if *what == What::Cpu {
                            self.cpu_refused(&e);
                        }
                        continue;
                    }
                    Err(e) => return Err(format!("perf_event_open({what:?}) on CPU {cpu}: {e}")),
                };
                if let Ok(id) = perf::id(&fd) {
                    ids.insert(id, *what);
                }
                self.configure(*what, &fd);
                let target = shared_ring.or(ring.as_ref());
                match target {
                    None => {
                        ring = Some(Ring::map(fd, RING_PAGES).map_err(|e| format!("mmap: {e}"))?)
                    }
                    Some(r) => {
                        perf::set_output(&fd, r.fd())
                            .map_err(|e| format!("cannot share a ring buffer: {e}"))?;
                        fds.push(fd);
                    }
                }
            }
            rings.extend(ring);
        }
        Ok(Opened {
            rings,
            _fds: fds,
            ids,
        })
    }

    /// The profile's rate, lowered to the kernel's limit
    /// (`kernel.perf_event_max_sample_rate`) with a note when above it.
    fn set_profile_hz(&self, hz: u64) {
        let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .filter(|&m| m > 0);
        let hz = match max {
            Some(m) if hz > m => {
                self.profile_notes.borrow_mut().push(format!(
                    "sampled at {m} Hz, not {hz}: the kernel's limit (kernel.perf_event_max_sample_rate)"
                ));
                m
            }
            _ => hz,
        };
        self.profile_hz.set(hz);
    }

    /// The cpu-clock event could not be opened: no samples, said once.
    fn cpu_refused(&self, e: &std::io::Error) {
        let note = format!("the kernel refused cpu-clock sampling ({e}): no CPU profile");
        let mut n = self.profile_notes.borrow_mut();
        if !n.contains(&note) {
            n.push(note);
        }
    }

    /// Kernel-side filters: switches of threads that block (not
    /// preemptions); timers that wake a sleeping thread.
    fn configure(&self, what: What, fd: &OwnedFd) {
        match what {
            What::Switch => {
                let _ = perf::set_filter(fd, "prev_state & 255");
            }
            What::Timer => {
                if let Some(a) = self.ksyms.hrtimer_wakeup {
                    let _ = perf::set_filter(fd, &format!("function == 0x{a:x}"));
                }
            }
            _ => {}
        }
    }

    /// The task events, opened once per CPU on the session's cgroup into
    /// the session's rings; `None` (each run then opens inherited events)
    /// when there is no writable cgroup or the kernel refuses.
    fn open_group(
        &self,
        rings: &[Ring],
        ids: &mut HashMap<u64, What>,
    ) -> Option<(Group, Vec<OwnedFd>)> {
        let group = Group::create()?;
        let mut fds = Vec::new();
        let mut got = HashMap::new();
        for (n, &cpu) in self.cpus.iter().enumerate() {
            let ring = rings.get(n)?;
            for (what, spec) in self.task_specs(true) {
                let fd = match perf::open_cgroup(&spec, group.fd(), cpu) {
                    Ok(fd) => fd,
                    Err(e) if !what.required() => {
                        if what == What::Cpu {
                            self.cpu_refused(&e);
                        }
                        continue;
                    }
                    Err(_) => return None,
                };
                self.configure(what, &fd);
                perf::set_output(&fd, ring.fd()).ok()?;
                got.insert(perf::id(&fd).ok()?, what);
                fds.push(fd);
            }
        }
        ids.extend(got);
        Some((group, fds))
    }

    /// Whether a program executed as `file` (by process `pid`) starts
    /// through the dynamic loader the uprobe watches.
    fn uses_loader(&self, pid: i32, file: &str) -> bool {
        let Some((_, ld)) = &self.loader else {
            return false;
        };
        if let Some(&v) = self.interp_cache.borrow().get(file) {
            return v;
        }
        // A relative name is relative to the process's directory; a process
        // already gone is taken to run where the command started.
        let path = if file.starts_with('/') {
            PathBuf::from(file)
        } else {
            let live = PathBuf::from(format!("/proc/{pid}/cwd/{file}"));
            if live.exists() {
                live
            } else {
                self.cwd.borrow().join(file)
            }
        };
        let interp = elf::interpreter(&path).or_else(|| {
            // A script: its interpreter's loader.
            let head = std::fs::read(&path).ok()?;
            let line = head.strip_prefix(b"#!")?;
            let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
            let first = String::from_utf8_lossy(&line[..end])
                .split_whitespace()
                .next()?
                .to_string();
            elf::interpreter(Path::new(&first))
        });
        let v = interp
            .and_then(|i| std::fs::canonicalize(i).ok())
            .is_some_and(|i| &i == ld);
        let mut cache = self.interp_cache.borrow_mut();
        if cache.len() < 10_000 {
            cache.insert(file.to_string(), v);
        }
        v
    }
}

/// A uprobe (or, `ret`, a return probe) on a function of a shared object,
/// defined in tracefs as `tardy_PID/NAME` for the session and removed at
/// its end (a later tardy removes those of one that was killed). The uprobe
/// PMU is not used: its events cannot be inherited across fork. Returns the
/// event's id.
fn uprobe(root: &Path, name: &str, file: &Path, symbol: &str, ret: bool) -> Option<u64> {
    let group = tracefs::probe_group();
    if let Some(tp) = tracefs::tracepoint(root, &group, name) {
        return Some(tp.id);
    }
    let offset = elf::symbol_file_offset(file, symbol)?;
    let def = format!(
        "{}:{group}/{name} {}:0x{offset:x}\n",
        if ret { "r" } else { "p" },
        file.display()
    );
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("uprobe_events"))
        .ok()?
        .write_all(def.as_bytes())
        .ok()?;
    Some(tracefs::tracepoint(root, &group, name)?.id)
}

/// The system loader's `_dl_debug_state`: its id and the loader's path.
fn loader_probe(root: &Path) -> Option<(u64, PathBuf)> {
    let interp = elf::interpreter(Path::new("/bin/sh"))?;
    let ld = std::fs::canonicalize(interp).ok()?;
    Some((
        uprobe(root, "ld_debug_state", &ld, "_dl_debug_state", false)?,
        ld,
    ))
}

/// The C library this tardy runs on (programs on the machine share it).
fn libc_path() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with("libc.so") || f.starts_with("libc-"))
        })
        .map(PathBuf::from)
}

/// Entry and return probes on the C library's fsync family: every fsync a
/// program makes through libc is counted and timed, even one that never
/// waits (tmpfs), which no file-system tracepoint sees.
fn fsync_probes(root: &Path) -> Vec<(What, u64)> {
    let Some(libc) = libc_path() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for sym in ["fsync", "fdatasync"] {
        if let (Some(e), Some(r)) = (
            uprobe(root, &format!("libc_{sym}"), &libc, sym, false),
            uprobe(root, &format!("libc_{sym}_ret"), &libc, sym, true),
        ) {
            out.push((What::FsyncEnter, e));
            out.push((What::FsyncExit, r));
        }
    }
    out
}

impl Drop for KernelRecorder {
    /// The session's end: every event disabled, the cgroup removed, the
    /// uprobes' events closed and their definitions removed now (a
    /// breakpoint must not outlive tardy), the rest closed by a detached
    /// child ([`teardown`]).
    fn drop(&mut self) {
        let mut later: Vec<OwnedFd> = Vec::new();
        if let Some(sh) = self.shared.get_mut().take() {
            for fd in &sh.group_fds {
                perf::disable(fd);
            }
            later.extend(sh.group_fds);
            for r in sh.rings {
                perf::disable(r.fd());
                later.push(r.into_fd());
            }
            drop(sh.group);
        }
        let probes: Vec<u64> = self.uprobes.iter().map(|&(_, id)| id).collect();
        let (now, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.anchors)
            .into_iter()
            .partition(|(id, _)| probes.contains(id));
        drop(now);
        if !probes.is_empty() {
            tracefs::remove_own_probes(&self.root);
        }
        later.extend(rest.into_iter().map(|(_, fd)| fd));
        teardown::close_detached(later, None);
    }
}

struct Opened {
    rings: Vec<Ring>,
    _fds: Vec<OwnedFd>,
    ids: HashMap<u64, What>,
}

/// Rings that last the whole session.
struct Shared {
    rings: Vec<Ring>,
    ids: HashMap<u64, What>,
    /// The session's cgroup and the task events opened on it (closed
    /// before the group is removed).
    group_fds: Vec<OwnedFd>,
    group: Option<Group>,
}

/// Call chains of staged samples, each in a slot reused once applied (no
/// allocation per sample once the slots exist).
#[derive(Default)]
struct Chains {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

/// A sample's call chain and, when copied, its user registers (ip, sp, bp)
/// and the top of its user stack.
#[derive(Default)]
struct Slot {
    ips: Vec<u64>,
    regs: Option<(u64, u64, u64)>,
    stack: Vec<u8>,
}

impl Slot {
    fn user_stack(&self) -> Option<crate::profile::UserStack<'_>> {
        let (ip, sp, bp) = self.regs?;
        (!self.stack.is_empty()).then_some(crate::profile::UserStack {
            ip,
            sp,
            bp,
            bytes: &self.stack,
        })
    }
}

impl Chains {
    /// At most this many samples wait to be applied (about 5 ms of them).
    const MAX: usize = 20_000;

    /// Keep a chain, and the registers and stack copy that follow it in
    /// `rest` when `copied` (perf's layout: the registers' ABI, bp, sp and
    /// ip; the copy's size, its bytes, the size really copied).
    fn put(&mut self, ips: impl Iterator<Item = u64>, copied: bool, rest: &[u8]) -> Option<u32> {
        use perf::u64_at;
        let slot = match self.free.pop() {
            Some(s) => s,
            None if self.slots.len() < Self::MAX => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
            None => return None,
        };
        let v = &mut self.slots[slot as usize];
        v.ips.clear();
        v.ips.extend(ips);
        v.regs = None;
        v.stack.clear();
        if copied && u64_at(rest, 0).is_some_and(|abi| abi != 0) {
            if let (Some(bp), Some(sp), Some(ip)) =
                (u64_at(rest, 8), u64_at(rest, 16), u64_at(rest, 24))
            {
                v.regs = Some((ip, sp, bp));
            }
            let size = u64_at(rest, 32).unwrap_or(0) as usize;
            if size > 0 {
                let used = u64_at(rest, 40usize.saturating_add(size))
                    .map_or(0, |d| (d as usize).min(size));
                if let Some(b) = rest.get(40..40 + used) {
                    v.stack.extend_from_slice(b);
                }
            }
        }
        Some(slot)
    }
}

/// The run's profile while it is recorded.
#[derive(Default)]
struct Profiling {
    collector: crate::profile::Collector,
    chains: Chains,
    /// Each blocked thread's stack (its key in `unwound`) until its wait ends.
    waiting: HashMap<i32, u64>,
    /// Ended waits, summed by kind and stack until the run ends (one trie
    /// walk per distinct stack, not per wait): frames, time, count.
    waited: HashMap<(&'static str, u64), (Vec<crate::profile::Frame>, u64, u64)>,
    /// Wait stacks already unwound, by a hash of everything the unwinding
    /// reads (process, chain, registers, stack bytes): a thread that blocks
    /// a million times in the same place (a lock storm, a ping-pong) is
    /// unwound once, and the reader keeps up with the kernel. Emptied when
    /// a process execs.
    unwound: HashMap<u64, Vec<crate::profile::Frame>>,
    /// Each woken thread's waker as the waking event saw it: (waker's
    /// thread, its process, its stack's key in `unwound`).
    waking: HashMap<i32, (i32, i32, u64)>,
    /// Ended waits a thread of the tree ended, by kind, wait stack, waker
    /// thread and its stack: the two stacks, the waker's names (process,
    /// thread), time and count.
    woken: HashMap<(&'static str, u64, i32, u64), Woken>,
    /// Wakers' thread names, read while they run (at their first wake-up).
    thread_names: HashMap<i32, String>,
}

/// Waits ended by one thread from one stack (see [`Profiling::woken`]).
struct Woken {
    wait: Vec<crate::profile::Frame>,
    waker: Vec<crate::profile::Frame>,
    process: String,
    thread: String,
    ns: u64,
    n: u64,
}

/// Distinct (wait, waker) pairs kept; past it, further pairs are not named.
const WOKEN_CAP: usize = 16_384;

/// Distinct wait stacks kept unwound (emptied when full).
const UNWOUND_CAP: usize = 16_384;

impl Profiling {
    /// Waits the timeline ended: each one's time goes to the stack its
    /// thread blocked with.
    fn waits_ended(&mut self, tl: &mut Timeline) {
        let Some(ended) = tl.ended_waits.as_mut() else {
            return;
        };
        let mut ended = std::mem::take(ended);
        for &(tid, kind, ns, waker) in &ended {
            let Some(key) = self.waiting.remove(&tid) else {
                continue;
            };
            if let Some((by, pid, wkey)) = self.waking.remove(&tid)
                && by == waker
                && waker != 0
            {
                self.woke(tl, (kind.name(), key, by, wkey), pid, ns);
            }
            match self.waited.get_mut(&(kind.name(), key)) {
                Some(w) => {
                    w.1 += ns;
                    w.2 += 1;
                }
                None => {
                    let Some(frames) = self.unwound.get(&key) else {
                        continue;
                    };
                    self.waited
                        .insert((kind.name(), key), (frames.clone(), ns, 1));
                }
            }
        }
        ended.clear();
        tl.ended_waits = Some(ended);
    }

    /// A wait (kind, its stack, its waker's thread and stack) that lasted
    /// `ns`, ended by a thread of process `pid`.
    fn woke(&mut self, tl: &Timeline, key: (&'static str, u64, i32, u64), pid: i32, ns: u64) {
        if let Some(w) = self.woken.get_mut(&key) {
            w.ns += ns;
            w.n += 1;
            return;
        }
        if self.woken.len() >= WOKEN_CAP {
            return;
        }
        let (Some(wait), Some(waker)) = (self.unwound.get(&key.1), self.unwound.get(&key.3)) else {
            return;
        };
        let tid = key.2;
        let thread = if tid == pid {
            "main thread".to_string()
        } else {
            match self.thread_names.get(&tid) {
                Some(c) if !c.is_empty() => format!("thread {c}"),
                _ => "a thread".to_string(),
            }
        };
        self.woken.insert(
            key,
            Woken {
                wait: wait.clone(),
                waker: waker.clone(),
                process: tl.command_of(pid).chars().take(120).collect(),
                thread,
                ns,
                n: 1,
            },
        );
    }

    /// The stack of a chain in slot `slot` of a thread of `pid`, unwound
    /// once for all chains that read alike: its key in `unwound`.
    fn unwind(&mut self, pid: i32, slot: u32) -> Option<u64> {
        let v = self.chains.slots.get(slot as usize)?;
        use std::hash::BuildHasher;
        let key = foldhash::fast::FixedState::with_seed(0x7461_7264)
            .hash_one((pid, &v.ips, v.regs, &v.stack));
        if !self.unwound.contains_key(&key) {
            let st = v.user_stack();
            let f = self
                .collector
                .stack(pid, v.ips.iter().copied(), st.as_ref());
            if self.unwound.len() >= UNWOUND_CAP {
                self.forget_unwound();
            }
            self.unwound.insert(key, f);
        }
        Some(key)
    }

    /// Empty the unwound stacks (a process execed: its addresses mean
    /// other code now), but those of waits still going on.
    fn forget_unwound(&mut self) {
        let keep: std::collections::HashSet<u64> = self
            .waiting
            .values()
            .copied()
            .chain(self.waking.values().map(|w| w.2))
            .collect();
        self.unwound.retain(|k, _| keep.contains(k));
    }

    /// The run's profile, the summed waits added.
    fn finish(mut self, notes: Vec<String>) -> crate::profile::RawProfile {
        for ((kind, _), (frames, ns, n)) in self.waited.drain() {
            self.collector.waited_many(kind, &frames, ns, n);
        }
        let mut raw = self.collector.finish(notes);
        raw.wakes = self
            .woken
            .into_iter()
            .map(|((kind, ..), w)| crate::profile::RawWake {
                kind,
                wait: w.wait,
                process: w.process,
                thread: w.thread,
                waker: w.waker,
                ns: w.ns,
                n: w.n,
            })
            .collect();
        raw
    }
}

impl Profiling {
    /// Apply a profile event (in time order); false for the timeline's own.
    fn apply(&mut self, e: &Timed) -> bool {
        match e.ev {
            Ev::Sample { pid, slot, ns } => {
                if let Some(v) = self.chains.slots.get(slot as usize) {
                    let st = v.user_stack();
                    self.collector
                        .sample(pid, v.ips.iter().copied(), st.as_ref(), ns);
                }
                self.chains.free.push(slot);
            }
            Ev::Mapped {
                pid,
                start,
                len,
                pgoff,
                module,
            } => self
                .collector
                .maps
                .mmap_module(pid, start, len, pgoff, module),
            Ev::WaitStack { pid, tid, slot } => {
                if let Some(key) = self.unwind(pid, slot) {
                    self.waiting.insert(tid, key);
                }
                self.chains.free.push(slot);
            }
            Ev::WakerStack {
                pid,
                waker,
                wakee,
                slot,
            } => {
                if let Some(key) = self.unwind(pid, slot) {
                    self.waking.insert(wakee, (waker, pid, key));
                }
                if waker != pid && !self.thread_names.contains_key(&waker) {
                    if self.thread_names.len() >= WOKEN_CAP {
                        self.thread_names.clear();
                    }
                    let (p, t) = crate::record::procfs::proc_task(pid, waker);
                    let name = std::fs::read_to_string(format!("/proc/{p}/task/{t}/comm"))
                        .map(|c| c.trim().to_string())
                        .unwrap_or_default();
                    self.thread_names.insert(waker, name);
                }
                self.chains.free.push(slot);
            }
            Ev::ExecBegins { pid } => {
                self.forget_unwound();
                self.collector.maps.exec(pid)
            }
            Ev::Forked {
                parent_pid,
                child_pid,
            } => self.collector.maps.fork(parent_pid, child_pid),
            _ => return false,
        }
        true
    }
}

/// Parses records into timed events.
struct Parser<'a> {
    rec: &'a KernelRecorder,
    ids: &'a HashMap<u64, What>,
    prof: Option<Profiling>,
    /// CLOCK_REALTIME - CLOCK_MONOTONIC, for timers on the realtime clock.
    realtime_offset: i64,
    lost: u64,
    events: u64,
    /// Kernel chains already classified, by a hash of their addresses.
    sites: HashMap<u64, Site>,
}

impl Parser<'_> {
    fn parse(&mut self, r: &[u8], tl: &mut Timeline, out: &mut Vec<Timed>) {
        use perf::{u16_at, u32_at, u64_at};
        let (Some(kind), Some(misc)) = (u32_at(r, 0), u16_at(r, 4)) else {
            return;
        };
        self.events += 1;
        let n = r.len();
        // The sample_id trailer of non-sample records: pid, tid, time, id.
        let trailer = || -> Option<(i32, u64)> {
            let tid = u32_at(r, n.checked_sub(24)? + 4)? as i32;
            let time = u64_at(r, n - 16)?;
            Some((tid, time))
        };
        match kind {
            perf::RECORD_SWITCH | perf::RECORD_SWITCH_CPU_WIDE => {
                // A task already reaped shows as -1 (the last switch of an
                // exited thread, seen by events on whole CPUs): its exit
                // record has closed it.
                if let Some((tid, t)) = trailer()
                    && tid > 0
                {
                    let ev = if misc & perf::MISC_SWITCH_OUT != 0 {
                        Ev::SwitchOut {
                            tid,
                            preempt: misc & perf::MISC_SWITCH_OUT_PREEMPT != 0,
                        }
                    } else {
                        Ev::SwitchIn { tid }
                    };
                    out.push(Timed { t, ev });
                }
            }
            perf::RECORD_FORK | perf::RECORD_EXIT => {
                let (Some(pid), Some(ppid), Some(tid), Some(ptid), Some(t)) = (
                    u32_at(r, 8),
                    u32_at(r, 12),
                    u32_at(r, 16),
                    u32_at(r, 20),
                    u64_at(r, 24),
                ) else {
                    return;
                };
                if [pid, tid, ptid].iter().any(|&v| v as i32 <= 0) {
                    return;
                }
                if kind == perf::RECORD_FORK && pid == tid && self.prof.is_some() {
                    out.push(Timed {
                        t,
                        ev: Ev::Forked {
                            parent_pid: ppid as i32,
                            child_pid: pid as i32,
                        },
                    });
                }
                let ev = if kind == perf::RECORD_FORK {
                    Ev::Fork {
                        parent: ptid as i32,
                        child: tid as i32,
                        child_pid: pid as i32,
                    }
                } else {
                    Ev::Exit { tid: tid as i32 }
                };
                out.push(Timed { t, ev });
            }
            perf::RECORD_LOST => self.lost += u64_at(r, 16).unwrap_or(0),
            perf::RECORD_MMAP2 => {
                let Some(prof) = self.prof.as_mut() else {
                    return;
                };
                // pid, tid, addr, len, pgoff, 24 bytes of inode or build
                // id, prot, flags, then the file name.
                let (Some(pid), Some(start), Some(len), Some(pgoff), Some((_, t))) = (
                    u32_at(r, 8),
                    u64_at(r, 16),
                    u64_at(r, 24),
                    u64_at(r, 32),
                    trailer(),
                ) else {
                    return;
                };
                let name = r.get(72..n.saturating_sub(24)).unwrap_or(&[]);
                let name = name.split(|&c| c == 0).next().unwrap_or(&[]);
                // With a build id: its size at 40, the id from 44.
                let build_id = (misc & perf::MISC_MMAP_BUILD_ID != 0)
                    .then(|| {
                        let len = (*r.get(40)? as usize).min(20);
                        r.get(44..44 + len)
                    })
                    .flatten();
                let name = String::from_utf8_lossy(name);
                // Anonymous executable memory (a JIT's code): the process's
                // own module, at its addresses.
                let (path, pgoff) = if crate::profile::maps::is_anon(&name) {
                    (crate::profile::maps::anon_path(pid as i32), start)
                } else {
                    (name.into_owned(), pgoff)
                };
                let Some(module) = prof.collector.maps.intern(&path, build_id) else {
                    return;
                };
                out.push(Timed {
                    t,
                    ev: Ev::Mapped {
                        pid: pid as i32,
                        start,
                        len,
                        pgoff,
                        module,
                    },
                });
            }
            perf::RECORD_COMM if misc & perf::MISC_COMM_EXEC != 0 && self.prof.is_some() => {
                if let (Some(pid), Some((_, t))) = (u32_at(r, 8), trailer()) {
                    out.push(Timed {
                        t,
                        ev: Ev::ExecBegins { pid: pid as i32 },
                    });
                }
            }
            perf::RECORD_SAMPLE => {
                let (Some(id), Some(tid), Some(t)) = (u64_at(r, 8), u32_at(r, 20), u64_at(r, 24))
                else {
                    return;
                };
                let tid = tid as i32;
                if tid <= 0 {
                    return;
                }
                let Some(&what) = self.ids.get(&id) else {
                    return;
                };
                if what == What::Cpu {
                    // pid, tid, time, period (CPU ns), then the call chain.
                    let (Some(prof), Some(pid), Some(ns), Some(nr)) = (
                        self.prof.as_mut(),
                        u32_at(r, 16),
                        u64_at(r, 32),
                        u64_at(r, 40),
                    ) else {
                        return;
                    };
                    let nr = (nr as usize).min(n.saturating_sub(48) / 8);
                    let ips = (0..nr).filter_map(|i| u64_at(r, 48 + i * 8));
                    let rest = r.get(48 + nr * 8..).unwrap_or(&[]);
                    if let Some(slot) = prof.chains.put(ips, perf::COPIES_STACKS, rest) {
                        out.push(Timed {
                            t,
                            ev: Ev::Sample {
                                pid: pid as i32,
                                slot,
                                ns,
                            },
                        });
                    }
                    return;
                }
                let mut at = 32;
                let mut site = Site::Unknown;
                if what == What::Switch && self.rec.switch_chains() {
                    let nr = u64_at(r, at).unwrap_or(0) as usize;
                    let nr = nr.min((n.saturating_sub(at + 8)) / 8);
                    let ips = (0..nr).filter_map(|i| u64_at(r, at + 8 + i * 8));
                    // The kernel's side says where it blocked (the same
                    // chains recur: each is classified once).
                    let kernel = ips.clone().take_while(|&ip| ip != perf::CONTEXT_USER);
                    let key = {
                        use std::hash::{BuildHasher, Hasher};
                        let mut h =
                            foldhash::fast::FixedState::with_seed(0x6b73_796d).build_hasher();
                        for ip in kernel.clone() {
                            h.write_u64(ip);
                        }
                        h.finish()
                    };
                    site = match self.sites.get(&key) {
                        Some(&s) => s,
                        None => {
                            let s = self.rec.ksyms.classify(kernel);
                            if self.sites.len() >= UNWOUND_CAP {
                                self.sites.clear();
                            }
                            self.sites.insert(key, s);
                            s
                        }
                    };
                    // After the chain: the raw record, then the registers
                    // and the stack copy.
                    let raw_at = at + 8 + nr * 8;
                    let raw_size = u32_at(r, raw_at).unwrap_or(0) as usize;
                    let rest = r.get(raw_at + 4 + raw_size..).unwrap_or(&[]);
                    if let (Some(prof), Some(pid)) = (self.prof.as_mut(), u32_at(r, 16))
                        && let Some(slot) = prof.chains.put(ips, perf::COPIES_STACKS, rest)
                    {
                        // The whole chain is the off-CPU stack.
                        out.push(Timed {
                            t,
                            ev: Ev::WaitStack {
                                pid: pid as i32,
                                tid,
                                slot,
                            },
                        });
                    }
                    at += 8 + nr * 8;
                }
                // A waking thread's own chain (when the profile asks for
                // wake-up stacks): who ended the wait, from where.
                let mut waker_slot = None;
                if what == What::Waking && self.rec.waker_chains() {
                    let nr = u64_at(r, at).unwrap_or(0) as usize;
                    let nr = nr.min((n.saturating_sub(at + 8)) / 8);
                    let ips = (0..nr).filter_map(|i| u64_at(r, at + 8 + i * 8));
                    let raw_at = at + 8 + nr * 8;
                    let raw_size = u32_at(r, raw_at).unwrap_or(0) as usize;
                    let rest = r.get(raw_at + 4 + raw_size..).unwrap_or(&[]);
                    if let Some(prof) = self.prof.as_mut() {
                        waker_slot = prof.chains.put(ips, perf::COPIES_STACKS, rest);
                    }
                    at += 8 + nr * 8;
                }
                let raw = match what {
                    What::Switch | What::Waking | What::Exec | What::Timer => {
                        let size = u32_at(r, at).unwrap_or(0) as usize;
                        r.get(at + 4..(at + 4 + size).min(n)).unwrap_or(&[])
                    }
                    _ => &[],
                };
                let o = &self.rec.off;
                let ev = match what {
                    What::Switch => {
                        let state = u64_at(raw, o.switch_state).unwrap_or(0);
                        Ev::Block {
                            tid,
                            site,
                            d_state: state & 2 != 0,
                        }
                    }
                    What::Waking => {
                        let Some(wakee) = u32_at(raw, o.waking_pid) else {
                            return;
                        };
                        let flags = raw.get(2).copied().unwrap_or(0);
                        let irq = flags & (0x08 | 0x10 | 0x40) != 0;
                        if let (Some(slot), Some(prof)) = (waker_slot, self.prof.as_mut()) {
                            match u32_at(r, 16) {
                                Some(pid) if !irq && wakee as i32 != tid => out.push(Timed {
                                    t,
                                    ev: Ev::WakerStack {
                                        pid: pid as i32,
                                        waker: tid,
                                        wakee: wakee as i32,
                                        slot,
                                    },
                                }),
                                _ => prof.chains.free.push(slot),
                            }
                        }
                        Ev::Waking {
                            waker: tid,
                            wakee: wakee as i32,
                            irq,
                        }
                    }
                    What::Exec => {
                        let loc = u32_at(raw, o.exec_filename).unwrap_or(0) as usize;
                        let (s, len) = (loc & 0xffff, loc >> 16);
                        let name = raw
                            .get(s..(s + len).min(raw.len()))
                            .map(|b| {
                                let b = b.split(|&c| c == 0).next().unwrap_or(b);
                                String::from_utf8_lossy(b).into_owned()
                            })
                            .unwrap_or_default();
                        let pid = u32_at(raw, o.exec_pid).map_or(tid, |v| v as i32);
                        let old = u32_at(raw, o.exec_old_pid).map_or(pid, |v| v as i32);
                        let loader = self.rec.uses_loader(pid, &name);
                        let file = tl.intern(&name);
                        Ev::Exec {
                            tid: pid,
                            old_tid: old,
                            file,
                            loader,
                        }
                    }
                    What::Timer => {
                        let f = u64_at(raw, o.timer_function).unwrap_or(0);
                        if self.rec.ksyms.hrtimer_wakeup.is_some_and(|a| a != f) {
                            return;
                        }
                        let hard = u64_at(raw, o.timer_expires).unwrap_or(0) as i64;
                        let soft = u64_at(raw, o.timer_soft).unwrap_or(0) as i64;
                        // A timer on the realtime clock: back to monotonic.
                        let shift = if soft > t as i64 + 1_000_000_000_000_000 {
                            self.realtime_offset
                        } else {
                            0
                        };
                        Ev::TimerArm {
                            tid,
                            soft: (soft - shift).max(0) as u64,
                            hard: (hard - shift).max(0) as u64,
                        }
                    }
                    What::FsyncEnter | What::FsyncMark => Ev::FsyncEnter { tid },
                    What::FsyncExit => Ev::FsyncExit { tid },
                    What::Loader => Ev::LoaderHit { tid },
                    What::Sideband | What::Cpu => return,
                };
                out.push(Timed { t, ev });
            }
            _ => {}
        }
    }
}

fn realtime_offset() -> i64 {
    let mut rt = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut rt) };
    let rt = rt.tv_sec * 1_000_000_000 + rt.tv_nsec;
    rt - child::clock_monotonic_ns() as i64
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags; a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    // SAFETY: a fresh fd owned here.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn root_exited(pid: i32) -> bool {
    // SAFETY: waitid into a zeroed siginfo, leaving the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let rc = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        rc == 0 && info.si_pid() == pid
    }
}

impl super::Recorder for KernelRecorder {
    fn name(&self) -> &'static str {
        "kernel-events"
    }

    fn blind_spots(&self) -> String {
        let on_group = self.shared().as_ref().is_some_and(|sh| sh.group.is_some());
        let mut s = String::from(if on_group {
            "kernel events (perf_event_open) on a cgroup made for the command"
        } else {
            "kernel events (perf_event_open) inherited by each task of the command (no writable cgroup: each fork copies them, about 20 µs)"
        });
        s.push_str(
            ": a wait ended from outside the tree (a disk, a timer, another program) includes the wait for a CPU after it",
        );
        if self.ksyms.is_empty() {
            s.push_str("; kernel symbols are hidden, so waits are not told apart");
        }
        if self.loader.is_none() {
            s.push_str("; no uprobe on the dynamic loader, so program loading counts as CPU");
        }
        s
    }

    fn record(&self, p: &Prepared) -> Result<RecordedRun, RecordError> {
        child::launch(p, Mode::Gate, &mut |s| self.follow(p, s))
    }
}

impl KernelRecorder {
    /// From the gated child to the last event: open, release, drain, model.
    fn follow(&self, p: &Prepared, s: &Started) -> RecordedRun {
        let here = std::env::current_dir().unwrap_or_default();
        *self.cwd.borrow_mut() = match &p.opts.cwd {
            Some(d) => here.join(d),
            None => here,
        };
        if !self.shared_tried.get() {
            self.set_profile_hz(p.opts.profile_hz);
        }
        let mut shared = self.shared();
        if let Some(sh) = shared.as_mut() {
            // What other programs left in the session's rings between runs.
            for r in sh.rings.iter_mut() {
                r.drain(|_| {});
            }
        }
        let opened = match self.open(s.pid, shared.as_mut(), true) {
            Ok(o) => o,
            Err(why) => {
                s.release();
                return child::untraced(p, s.pid, s.start(), why);
            }
        };
        let pidfd = pidfd_open(s.pid);
        s.release();
        // The reader's CPU: the command's threads (a lock storm on every
        // CPU) would starve it and the rings would overflow.
        let _reader = ReaderPriority::raise();
        let mut tl = Timeline::new(
            s.origin_ns(),
            s.pid,
            &p.display,
            &p.program.to_string_lossy(),
        );
        if self.profile_hz.get() > 0 {
            tl.ended_waits = Some(Vec::new());
        }
        if p.opts.log_events {
            tl.keep_log();
        }
        let mut parser = self.parser(&opened.ids);
        let mut own_rings = opened.rings;
        let rings: &mut Vec<Ring> = match shared.as_mut() {
            Some(sh) => &mut sh.rings,
            None => &mut own_rings,
        };
        let mut staged: Vec<Timed> = Vec::with_capacity(1 << 16);

        let mut run = RecordedRun {
            coverage: Some(Coverage::Full),
            ..RecordedRun::default()
        };
        let deadline = p.opts.timeout.map(|t| s.start() + t);
        let mut root_end: Option<u64> = None;
        let mut straggler_deadline: Option<Instant> = None;
        let mut killed = false;
        let mut kill_grace: Option<Instant> = None;
        loop {
            // Wait for the command's exit, a ring half full or 10 ms,
            // whichever comes first.
            poll_10ms(pidfd.as_ref().filter(|_| root_end.is_none()), rings);
            let now_mono = child::clock_monotonic_ns();
            drain(rings, &mut parser, &mut tl, &mut staged);
            apply_until(
                &mut tl,
                &mut parser.prof,
                &mut staged,
                now_mono.saturating_sub(REORDER_NS),
            );
            let now = Instant::now();
            if root_end.is_none() && root_exited(s.pid) {
                let mut status = 0;
                // SAFETY: rusage is plain data; reaps our child.
                let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
                unsafe { libc::wait4(s.pid, &mut status, 0, &mut ru) };
                run.wall_ns = child::now_ns(s.start());
                root_end = Some(child::clock_monotonic_ns());
                child::status_of(&mut run, status);
                run.root_user_ns = child::tv_ns(ru.ru_utime);
                run.root_sys_ns = child::tv_ns(ru.ru_stime);
                run.root_minflt = ru.ru_minflt.max(0) as u64;
                run.root_majflt = ru.ru_majflt.max(0) as u64;
                straggler_deadline = Some(match deadline {
                    Some(d) => d.max(now),
                    None => now + p.opts.straggler_wait,
                });
                // Every event up to the exit is in the rings by now.
                drain(rings, &mut parser, &mut tl, &mut staged);
                apply_until(&mut tl, &mut parser.prof, &mut staged, u64::MAX);
                for (pid, cmd) in tl.live_processes() {
                    run.stragglers.push((pid, cmd, false));
                }
            }
            if interrupt::requested() && !killed {
                run.interrupted = true;
                kill_tree(s.pid, &tl);
                killed = true;
                kill_grace = Some(now + Duration::from_secs(2));
            }
            if root_end.is_none() && deadline.is_some_and(|d| now >= d) && !killed {
                run.timed_out = true;
                kill_tree(s.pid, &tl);
                killed = true;
                kill_grace = Some(now + Duration::from_secs(2));
            }
            if root_end.is_some() {
                let live = tl.live_processes();
                if live.is_empty() || kill_grace.is_some_and(|g| now >= g) {
                    break;
                }
                if straggler_deadline.is_some_and(|d| now >= d) && !killed {
                    kill_tree(s.pid, &tl);
                    killed = true;
                    kill_grace = Some(now + Duration::from_secs(2));
                }
            }
        }
        drain(rings, &mut parser, &mut tl, &mut staged);
        apply_until(&mut tl, &mut parser.prof, &mut staged, u64::MAX);
        drop(opened._fds);
        drop(own_rings);
        if let Some(g) = shared.as_ref().and_then(|sh| sh.group.as_ref()) {
            g.evict();
        }
        let end = root_end.unwrap_or_else(child::clock_monotonic_ns);
        if run.wall_ns == 0 {
            run.wall_ns = end.saturating_sub(s.origin_ns());
        }
        for st in run.stragglers.iter_mut() {
            let ended = tl
                .proc_rows
                .iter()
                .find(|r| r.pid == st.0)
                .is_some_and(|r| r.end_ns > 0);
            st.2 = killed || !ended;
        }
        self.fill(&mut run, &mut tl, &mut parser, end);
        run
    }
}

impl KernelRecorder {
    /// A parser of this recorder's records, for events with these ids.
    fn parser<'a>(&'a self, ids: &'a HashMap<u64, What>) -> Parser<'a> {
        Parser {
            rec: self,
            ids,
            prof: (self.profile_hz.get() > 0).then(Profiling::default),
            realtime_offset: realtime_offset(),
            lost: 0,
            events: 0,
            sites: HashMap::new(),
        }
    }

    /// What a run's model and parser hold, ending at `end`, into `run`: the
    /// critical path, the timeline, the tasks and processes, the profile,
    /// and what was lost.
    fn fill(&self, run: &mut RecordedRun, tl: &mut Timeline, parser: &mut Parser, end: u64) {
        run.path = Some(tl.path(end));
        run.log = tl.take_log(end).map(Box::new);
        run.hists = tl.hists;
        run.tasks_merged = tl.tasks_merged;
        run.lost_events = parser.lost;
        run.stops = parser.events;
        run.profile = parser
            .prof
            .take()
            .map(|p| p.finish(self.profile_notes.borrow().clone()));
        run.tasks = std::mem::take(&mut tl.tasks);
        run.procs = std::mem::take(&mut tl.proc_rows);
        if parser.lost > 0 {
            run.coverage = Some(Coverage::NoSyscalls(format!(
                "the kernel dropped {} events (its buffer filled); the breakdown is approximate",
                parser.lost
            )));
        }
    }

    /// Record the tree of a running process (`tardy explain --pid`) for
    /// `duration` (or until Ctrl-C, or until it exits): each thread already
    /// there gets its own events (inherited by what it creates from then
    /// on); the tree is left as it was (no cgroup, no signal). The run's
    /// wall time is the recording's.
    pub fn attach(
        &self,
        root: i32,
        duration: Option<Duration>,
        opts: &super::RecordOptions,
    ) -> Result<RecordedRun, String> {
        if crate::record::procfs::foreign() {
            return Err(
                "--pid needs /proc of tardy's own pid namespace (this one shows another's)".into(),
            );
        }
        if !self.shared_tried.get() {
            self.set_profile_hz(opts.profile_hz);
        }
        *self.cwd.borrow_mut() = std::env::current_dir().unwrap_or_default();
        let mut shared = self.shared();
        if let Some(sh) = shared.as_mut() {
            for r in sh.rings.iter_mut() {
                r.drain(|_| {});
            }
        }
        let origin = child::clock_monotonic_ns();
        let start = Instant::now();
        // Threads started while the first ones are being opened: found by
        // looking again, until a look finds none new.
        let mut procs: Vec<attach::Existing> = Vec::new();
        let mut opened: Vec<Opened> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..8 {
            let now = attach::tree(root)?;
            let mut new = 0;
            for p in &now {
                for &(tid, _) in &p.threads {
                    if seen.insert(tid) {
                        new += 1;
                        match self.open(tid, shared.as_mut(), false) {
                            Ok(o) => {
                                // Opened to start at an exec that will not come.
                                for fd in o._fds.iter().chain(o.rings.iter().map(|r| r.fd())) {
                                    perf::enable(fd);
                                }
                                opened.push(o);
                            }
                            // Gone meanwhile (a short process exited).
                            Err(_) if tid != root && !attach::alive(tid) => {}
                            Err(why) => return Err(format!("pid {root}: {why}")),
                        }
                    }
                }
            }
            merge_existing(&mut procs, now);
            if new == 0 {
                break;
            }
        }
        let pidfd = pidfd_open(root);
        let _reader = ReaderPriority::raise();
        let mut tl = Timeline::attached(origin, &procs);
        if self.profile_hz.get() > 0 {
            tl.ended_waits = Some(Vec::new());
        }
        if opts.log_events {
            tl.keep_log();
        }
        let mut ids: HashMap<u64, What> = HashMap::new();
        for o in &opened {
            ids.extend(o.ids.iter().map(|(k, v)| (*k, *v)));
        }
        let mut parser = self.parser(&ids);
        // What each program had mapped before the recording began.
        if let Some(prof) = parser.prof.as_mut() {
            for p in &procs {
                for (start, len, pgoff, path) in attach::exec_maps(p.pid) {
                    prof.collector.maps.mmap(p.pid, start, len, pgoff, &path);
                }
            }
        }
        let mut own_rings: Vec<Ring> = opened.iter_mut().flat_map(|o| o.rings.drain(..)).collect();
        let rings: &mut Vec<Ring> = match shared.as_mut() {
            Some(sh) => &mut sh.rings,
            None => &mut own_rings,
        };
        let mut staged: Vec<Timed> = Vec::with_capacity(1 << 16);
        let mut run = RecordedRun {
            coverage: Some(Coverage::Full),
            exit_code: Some(0),
            ..RecordedRun::default()
        };
        loop {
            let exited = poll_10ms(pidfd.as_ref(), rings)
                || !std::path::Path::new(&format!("/proc/{root}")).exists();
            drain(rings, &mut parser, &mut tl, &mut staged);
            apply_until(
                &mut tl,
                &mut parser.prof,
                &mut staged,
                child::clock_monotonic_ns().saturating_sub(REORDER_NS),
            );
            if exited || interrupt::requested() || duration.is_some_and(|d| start.elapsed() >= d) {
                break;
            }
        }
        let end = child::clock_monotonic_ns();
        drain(rings, &mut parser, &mut tl, &mut staged);
        apply_until(&mut tl, &mut parser.prof, &mut staged, u64::MAX);
        drop(opened);
        drop(own_rings);
        tl.close(end);
        run.wall_ns = end.saturating_sub(origin);
        self.fill(&mut run, &mut tl, &mut parser, end);
        Ok(run)
    }
}

/// Wait for the process of `pidfd` to exit, a ring half full or 10 ms,
/// whichever comes first; whether the process exited.
fn poll_10ms(pidfd: Option<&OwnedFd>, rings: &[Ring]) -> bool {
    let mut fds: Vec<libc::pollfd> = pidfd
        .iter()
        .map(|fd| fd.as_raw_fd())
        .chain(rings.iter().map(|r| r.fd().as_raw_fd()))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: a valid array of pollfd.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 10) };
    pidfd.is_some() && fds.first().is_some_and(|f| f.revents != 0)
}

/// Processes of a later look at the tree added to the first's (each
/// process once; threads seen again kept as first seen).
fn merge_existing(into: &mut Vec<attach::Existing>, now: Vec<attach::Existing>) {
    for p in now {
        match into.iter_mut().find(|q| q.pid == p.pid) {
            Some(q) => {
                for t in p.threads {
                    if !q.threads.iter().any(|u| u.0 == t.0) {
                        q.threads.push(t);
                    }
                }
            }
            None => into.push(p),
        }
    }
}

/// The reading thread's nice value lowered by 10 (more CPU when the
/// command competes for it) while a run is read, when the kernel allows it;
/// put back when dropped. Its own thread only: the command was forked
/// before (and restores the user's nice value anyway).
struct ReaderPriority(Option<libc::c_int>);

impl ReaderPriority {
    fn raise() -> ReaderPriority {
        // SAFETY: gettid, getpriority and setpriority on this thread.
        unsafe {
            let tid = libc::gettid() as libc::id_t;
            *libc::__errno_location() = 0;
            let was = libc::getpriority(libc::PRIO_PROCESS, tid);
            if *libc::__errno_location() != 0 {
                return ReaderPriority(None);
            }
            let ok = libc::setpriority(libc::PRIO_PROCESS, tid, (was - 10).max(-20)) == 0;
            ReaderPriority(ok.then_some(was))
        }
    }
}

impl Drop for ReaderPriority {
    fn drop(&mut self) {
        if let Some(was) = self.0 {
            // SAFETY: as above.
            unsafe {
                libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, was);
            }
        }
    }
}

fn kill_tree(root: i32, tl: &Timeline) {
    interrupt::sigkill_group(root);
    interrupt::sigkill(root);
    for (pid, _) in tl.live_processes() {
        interrupt::sigkill(pid);
    }
}

fn drain(rings: &mut [Ring], parser: &mut Parser, tl: &mut Timeline, staged: &mut Vec<Timed>) {
    for ring in rings.iter_mut() {
        ring.drain(|rec| parser.parse(rec, tl, staged));
    }
}

/// Apply staged events older than `watermark`, in time order.
fn apply_until(
    tl: &mut Timeline,
    prof: &mut Option<Profiling>,
    staged: &mut Vec<Timed>,
    watermark: u64,
) {
    if staged.is_empty() {
        return;
    }
    staged.sort_by_key(|e| e.t);
    let n = staged.partition_point(|e| e.t <= watermark);
    for e in staged.drain(..n) {
        match prof.as_mut() {
            Some(p) => {
                if !p.apply(&e) {
                    tl.apply(e);
                    p.waits_ended(tl);
                }
            }
            None => tl.apply(e),
        }
    }
}
