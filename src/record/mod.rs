//! The recorders behind `tardy explain`, one per way of watching a process
//! tree, behind the [`Recorder`] trait:
//!
//! - [`kernel`]: the kernel's own scheduler events through `perf_event_open`
//!   (switches, wake-ups, forks, execs, sleeping timers, fsyncs), read from
//!   ring buffers; no stop of the command at all, and the critical path
//!   from the wake-up graph. Used whenever the kernel allows it (root,
//!   `CAP_PERFMON`, or a permissive `perf_event_paranoid`).
//! - [`ptrace`]: ptrace with a seccomp-BPF filter (only the syscalls that
//!   sleep, wait, create processes or sync stop), for containers and users
//!   without perf events.
//! - [`Untraced`]: wall time, rusage and the command's schedstat (`--no-trace`).
//!
//! Each aggregates in place: no record per event is kept. This is apart
//! from `measure/`, whose timing loop stays a bare spawn and `wait4`.
//! Turning a recording into an explanation is `diagnose::explain`'s job.

pub mod arch;
pub mod events;
pub mod filter;
pub mod kernel;
pub mod procfs;
mod ptrace;
pub mod sampler;

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

pub use procfs::ThreadStats;
pub use ptrace::{PtraceRecorder, calibrate_stop_cost};

mod child;

/// A way of recording one run of a command.
pub trait Recorder {
    /// Its name in outputs: "kernel-events", "ptrace" or "untraced".
    fn name(&self) -> &'static str;
    /// One line: what this recorder cannot see.
    fn blind_spots(&self) -> String;
    /// Run the command once and record it.
    fn record(&self, p: &Prepared) -> Result<RecordedRun, RecordError>;
}

/// No tracing: wall time, rusage and the command's own schedstat.
pub struct Untraced;

impl Recorder for Untraced {
    fn name(&self) -> &'static str {
        "untraced"
    }
    fn blind_spots(&self) -> String {
        "not traced: only wall time, rusage and the command's own schedstat".into()
    }
    fn record(&self, p: &Prepared) -> Result<RecordedRun, RecordError> {
        child::launch(p, child::Mode::Plain, &mut |_| RecordedRun::default())
    }
}

/// Which recorder to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Choice {
    /// Kernel events when allowed, else ptrace.
    #[default]
    Auto,
    Kernel,
    Ptrace,
    None,
}

/// The recorder for `choice`, and, when `Auto` fell back, why.
pub fn choose(choice: Choice) -> Result<(Box<dyn Recorder>, Option<String>), String> {
    match choice {
        Choice::None => Ok((Box::new(Untraced), None)),
        Choice::Ptrace => Ok((Box::new(PtraceRecorder), None)),
        Choice::Kernel => {
            kernel::KernelRecorder::new().map(|k| (Box::new(k) as Box<dyn Recorder>, None))
        }
        Choice::Auto => match kernel::KernelRecorder::new() {
            Ok(k) => Ok((Box::new(k), None)),
            Err(why) => Ok((Box::new(PtraceRecorder), Some(why))),
        },
    }
}

use crate::model::Exec;

/// Threads kept one row each; beyond this they share the last row.
pub const MAX_TASKS: usize = 50_000;
/// Processes kept one row each; beyond this they share the last row.
pub const MAX_PROCS: usize = 20_000;

/// Push a row unless `rows` holds `cap` already; the index of the row to
/// use (the last one, shared, when full) and whether it was shared.
pub fn push_bounded<T>(rows: &mut Vec<T>, row: T, cap: usize) -> (usize, bool) {
    if rows.len() < cap || rows.is_empty() {
        rows.push(row);
        (rows.len() - 1, false)
    } else {
        (rows.len() - 1, true)
    }
}

/// What one timed syscall (or window) was, as the recorder classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// nanosleep/clock_nanosleep that slept its full time.
    Sleep = 0,
    /// A poll/select/epoll/futex wait whose timeout expired.
    TimeoutExpired,
    /// A futex wait that was woken (or had no timeout): a lock or condition.
    LockWait,
    /// A futex wait on a thread's exit (a join).
    Join,
    /// poll/select/epoll woken by an event, or a sleep cut short by a signal.
    EventWait,
    /// A read or receive on a pipe or socket.
    PipeRead,
    /// wait4/waitid that waited for a child process.
    ChildWait,
    /// fork/vfork/clone/clone3, in the parent.
    Fork,
    /// A successful execve/execveat.
    Exec,
    /// An execve that failed (a shell searching PATH, a missing program).
    ExecFailed,
    /// From the end of execve to the program's entry point (the dynamic
    /// loader mapping and relocating libraries).
    Load,
    /// fsync/fdatasync/sync_file_range/syncfs/sync/msync.
    Fsync,
    /// Blocked on block I/O (a read from disk, a page fault on a file).
    BlockIo,
}

/// How many kinds there are.
pub const NKIND: usize = 13;

impl Kind {
    pub const ALL: [Kind; NKIND] = [
        Kind::Sleep,
        Kind::TimeoutExpired,
        Kind::LockWait,
        Kind::Join,
        Kind::EventWait,
        Kind::PipeRead,
        Kind::ChildWait,
        Kind::Fork,
        Kind::Exec,
        Kind::ExecFailed,
        Kind::Load,
        Kind::Fsync,
        Kind::BlockIo,
    ];

    /// The name in saved traces.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sleep => "sleep",
            Kind::TimeoutExpired => "timeout",
            Kind::LockWait => "futex-wait",
            Kind::Join => "join",
            Kind::EventWait => "poll",
            Kind::PipeRead => "pipe-read",
            Kind::ChildWait => "wait-child",
            Kind::Fork => "fork",
            Kind::Exec => "exec",
            Kind::ExecFailed => "exec-failed",
            Kind::Load => "load",
            Kind::Fsync => "fsync",
            Kind::BlockIo => "block-io",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Totals of one kind: how many, how long, and (for timed sleeps) how long
/// was asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agg {
    pub count: u64,
    pub total_ns: u64,
    pub asked_ns: u64,
    /// Timer slack of those waits (the kernel may end each this much past
    /// the time asked); kernel-event recorder only.
    pub slack_ns: u64,
}

impl Agg {
    pub fn add(&mut self, ns: u64, asked_ns: u64) {
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(ns);
        self.asked_ns = self.asked_ns.saturating_add(asked_ns);
    }
    pub fn merge(&mut self, o: &Agg) {
        self.count += o.count;
        self.total_ns = self.total_ns.saturating_add(o.total_ns);
        self.asked_ns = self.asked_ns.saturating_add(o.asked_ns);
        self.slack_ns = self.slack_ns.saturating_add(o.slack_ns);
    }
}

/// Buckets of a duration histogram: bucket i holds durations in
/// [2^i, 2^(i+1)) ns (bucket 0 also holds 0).
pub const NBUCKET: usize = 40;

/// A log2-bucketed histogram of durations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hist(pub [u64; NBUCKET]);

impl Default for Hist {
    fn default() -> Hist {
        Hist([0; NBUCKET])
    }
}

impl Hist {
    pub fn bucket(ns: u64) -> usize {
        if ns == 0 {
            0
        } else {
            (63 - ns.leading_zeros() as usize).min(NBUCKET - 1)
        }
    }
    pub fn add(&mut self, ns: u64) {
        self.0[Hist::bucket(ns)] += 1;
    }
    pub fn merge(&mut self, o: &Hist) {
        for (a, b) in self.0.iter_mut().zip(o.0.iter()) {
            *a += b;
        }
    }
}

/// One thread of the traced tree.
#[derive(Debug, Clone, Default)]
pub struct TaskRow {
    pub tid: i32,
    pub tgid: i32,
    /// The thread that created it (0 for the command itself).
    pub creator: i32,
    pub start_ns: u64,
    pub end_ns: u64,
    pub stats: ThreadStats,
    pub aggs: [Agg; NKIND],
    /// Time spent waiting for another task: (its tid, ns), from wait4/waitid
    /// and joins.
    pub waits: Vec<(i32, u64)>,
    /// ptrace recorder: samples of the thread blocked in untraced syscalls,
    /// by [`sampler`] class (event, pipe or socket, disk, unknown).
    pub sampled: [u32; sampler::NCLASS],
}

/// One process (thread group) of the traced tree.
#[derive(Debug, Clone, Default)]
pub struct ProcRow {
    pub pid: i32,
    pub parent: i32,
    /// Its command line after its last exec (or its parent's, if it never exec'd).
    pub command: String,
    pub exe: String,
    pub exe_size: Option<u64>,
    pub execs: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What a thread on the critical path was doing, as the kernel-event
/// recorder tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Doing {
    /// On a CPU (user and system; split later by the kernel's accounting).
    Cpu = 0,
    /// Runnable, waiting for a CPU.
    RunQueue,
    /// Starting a process: a forked child before its exec, the exec, the
    /// dynamic loader.
    Creation,
    /// A sleep, or a timeout that expired.
    TimedWait,
    LockWait,
    /// Waiting on something outside the tree: poll, a pipe or socket, a terminal.
    EventWait,
    /// Waiting for a child whose end the recorder did not see.
    ChildWait,
    BlockIo,
    Fsync,
    /// Not known (events were lost).
    Unknown,
}

pub const NDOING: usize = 10;

/// The critical path of one run, from the kernel's events: time by what
/// was being done, and by process (pid, on the path, of which on a CPU).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathTotals {
    pub ns: [u64; NDOING],
    pub procs: Vec<(i32, u64, u64)>,
}

/// Why the recording is incomplete, when it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Coverage {
    /// Everything: syscalls, the process tree, per-thread schedstat.
    Full,
    /// The process tree and schedstat, but no syscalls (seccomp refused).
    NoSyscalls(String),
    /// Only wall time, rusage and the command's own schedstat.
    Untraced(String),
}

/// Everything recorded about one run.
#[derive(Debug, Clone, Default)]
pub struct RecordedRun {
    pub wall_ns: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub interrupted: bool,
    pub tasks: Vec<TaskRow>,
    pub procs: Vec<ProcRow>,
    pub hists: [Hist; NKIND],
    /// Stops the tracer handled (each costs the traced thread a round trip).
    pub stops: u64,
    /// Processes still running when the command itself exited: (pid, command,
    /// whether tardy had to kill them at the time limit).
    pub stragglers: Vec<(i32, String, bool)>,
    /// Threads beyond the recorder's limit, merged into the last row.
    pub tasks_merged: u64,
    /// CPU time stolen by the hypervisor during the run, machine-wide.
    pub steal_ns: Option<u64>,
    /// The command's rusage (itself and the children it reaped).
    pub root_user_ns: u64,
    pub root_sys_ns: u64,
    pub root_minflt: u64,
    pub root_majflt: u64,
    pub coverage: Option<Coverage>,
    /// The first lines of stderr when the command failed.
    pub stderr_head: String,
    /// The critical path, when the recorder computed it (kernel events);
    /// otherwise `diagnose` walks the waits.
    pub path: Option<PathTotals>,
    /// Events the kernel dropped (its buffer was full).
    pub lost_events: u64,
    /// The sampled call stacks (kernel-event recorder, when asked).
    pub profile: Option<crate::profile::RawProfile>,
    /// The run's timeline (kernel-event recorder, when asked).
    pub log: Option<Box<events::EventLog>>,
}

impl RecordedRun {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// "exited with code 3", "was killed by signal 9", "timed out".
    pub fn describe(&self) -> String {
        crate::measure::spawn::describe_exit(self.timed_out, self.signal, self.exit_code)
    }
}

/// Errors that stop a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("program not found: '{0}'")]
    NotFound(String),
    #[error("cannot start '{command}': {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("'{command}': {message}")]
    Child { command: String, message: String },
    #[error("an argument or environment variable of '{0}' holds a NUL byte")]
    Nul(String),
}

/// How to run the command being explained.
#[derive(Debug, Clone, Default)]
pub struct RecordOptions {
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    /// Kill the tree after this long.
    pub timeout: Option<Duration>,
    /// How long to follow processes that outlive the command when there is
    /// no timeout.
    pub straggler_wait: Duration,
    /// Show the command's output instead of discarding it.
    pub show_output: bool,
    /// Record with ptrace and seccomp (false: `--no-trace`).
    pub trace: bool,
    /// Sample call stacks this many times a second per running thread (0:
    /// no profile). The kernel-event recorder only.
    pub profile_hz: u64,
    /// Keep each run's timeline ([`events::EventLog`]): the kernel-event
    /// recorder only, for `--export-trace`.
    pub log_events: bool,
}

impl RecordOptions {
    /// Recording with a profile at `profile_hz`, killed after `timeout`
    /// seconds, following stragglers for `straggler_wait` seconds, as typed
    /// (checked: one line naming the flag); the rest as `tardy explain`
    /// does without flags.
    pub fn checked(
        timeout: Option<f64>,
        straggler_wait: f64,
        profile_hz: u64,
    ) -> Result<RecordOptions, String> {
        if let Some(t) = timeout.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(format!(
                "--timeout must be a positive number of seconds, not {t}"
            ));
        }
        if !(straggler_wait.is_finite() && straggler_wait >= 0.0) {
            return Err("--straggler-wait must be a number of seconds".into());
        }
        if profile_hz > 100_000 {
            return Err(format!(
                "--profile-hz {profile_hz} is more than the kernel samples (at most 100000)"
            ));
        }
        Ok(RecordOptions {
            env: Vec::new(),
            cwd: None,
            timeout: timeout.map(Duration::from_secs_f64),
            straggler_wait: Duration::from_secs_f64(straggler_wait.min(86_400.0)),
            show_output: false,
            trace: true,
            profile_hz,
            log_events: false,
        })
    }
}

/// A command prepared for repeated recording: everything the child needs
/// after `fork` is built here, so the child allocates nothing.
pub struct Prepared {
    pub display: String,
    program: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
    filter: Vec<libc::sock_filter>,
    opts: RecordOptions,
}

impl Prepared {
    pub fn new(display: &str, exec: &Exec, opts: &RecordOptions) -> Result<Prepared, RecordError> {
        let nul = || RecordError::Nul(display.to_string());
        let (program, argv): (PathBuf, Vec<String>) = match exec {
            Exec::Direct { argv } => {
                let first = argv
                    .first()
                    .ok_or_else(|| RecordError::NotFound(String::new()))?;
                let path = crate::measure::command::resolve_program(first, opts.cwd.as_deref())
                    .map_err(|e| RecordError::Child {
                        command: display.to_string(),
                        message: e.to_string(),
                    })?;
                (path, argv.clone())
            }
            Exec::Shell { shell, script } => {
                let path = crate::measure::command::resolve_program(shell, None).map_err(|e| {
                    RecordError::Child {
                        command: display.to_string(),
                        message: e.to_string(),
                    }
                })?;
                (path, vec![shell.clone(), "-c".into(), script.clone()])
            }
        };
        let program = CString::new(program.as_os_str().as_bytes()).map_err(|_| nul())?;
        let argv = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()).map_err(|_| nul()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
            .filter(|(k, _)| !opts.env.iter().any(|(n, _)| k.as_bytes() == n.as_bytes()))
            .collect();
        for (k, v) in &opts.env {
            env.push((k.into(), v.into()));
        }
        let envp = env
            .iter()
            .map(|(k, v)| {
                let mut b = k.as_bytes().to_vec();
                b.push(b'=');
                b.extend_from_slice(v.as_bytes());
                CString::new(b).map_err(|_| nul())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let cwd = match &opts.cwd {
            Some(d) => Some(CString::new(d.as_os_str().as_bytes()).map_err(|_| nul())?),
            None => None,
        };
        Ok(Prepared {
            display: display.to_string(),
            program,
            argv,
            envp,
            cwd,
            filter: filter::program(),
            opts: opts.clone(),
        })
    }
}
