//! Executing one run and timing it.
//!
//! The timed window is: monotonic clock read, spawn (posix_spawn through
//! `std::process::Command`, into a process group of its own), `wait4` on that
//! child, clock read. `wait4` returns the rusage of that child and the
//! descendants it reaped, so user/system time, max RSS and context switches
//! belong to that run alone (unlike `getrusage(RUSAGE_CHILDREN)`, which is
//! cumulative and keeps the highest RSS of any child ever reaped).
//!
//! A [`Executor`] is built once per command and reused for every run, so the
//! loop allocates nothing of its own between the two clock reads.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::error::MeasureError;
use super::interrupt;
use super::stragglers::{self, Straggler};
use crate::model::Exec;

/// Where a command's stdout and stderr go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputMode {
    /// /dev/null (the default).
    Null,
    /// A pipe that tardy reads and discards (for programs that behave
    /// differently when writing to a pipe).
    Pipe,
    /// tardy's own stdout/stderr (`--show-output`).
    Inherit,
    /// A file, truncated once when the session starts; all runs write to it.
    File(PathBuf),
}

impl std::str::FromStr for OutputMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "null" => OutputMode::Null,
            "pipe" => OutputMode::Pipe,
            "inherit" => OutputMode::Inherit,
            "" => return Err("empty output target".into()),
            path => OutputMode::File(PathBuf::from(path)),
        })
    }
}

/// Settings shared by every run of a command.
#[derive(Debug, Clone, Default)]
pub struct ExecOptions {
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub input: Option<PathBuf>,
    pub timeout: Option<Duration>,
    /// Leave processes a run left behind alive (they are killed by default).
    pub keep_stragglers: bool,
    /// Count on the PMU around every run (through the trampoline).
    pub pmu: Option<super::counters::pmu::PmuSpec>,
}

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RunOutcome {
    pub started_at_ns: u64,
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// tardy was asked to stop while this run was in flight.
    pub interrupted: bool,
    /// The PMU's counts of the run's process tree, when counted.
    pub instructions: Option<u64>,
    pub cycles: Option<u64>,
}

impl RunOutcome {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// "exited with code 3", "was killed by signal 9", "timed out".
    pub fn describe(&self) -> String {
        describe_exit(self.timed_out, self.signal, self.exit_code)
    }
}

/// How a run ended, in words: "exited with code 3", "was killed by signal 9", "timed out".
pub fn describe_exit(timed_out: bool, signal: Option<i32>, exit_code: Option<i32>) -> String {
    if timed_out {
        "timed out".to_string()
    } else if let Some(sig) = signal {
        format!("was killed by signal {sig}")
    } else {
        format!("exited with code {}", exit_code.unwrap_or(-1))
    }
}

/// A prepared command, reused for every run.
pub struct Executor {
    cmd: Command,
    /// The pipe the trampoline reports on (read end, write end), when runs
    /// go through one ([`super::trampoline`]).
    report: Option<(File, File)>,
    display: String,
    input: Option<File>,
    output: OutputMode,
    timeout: Option<Duration>,
    keep_stragglers: bool,
    /// What the last run left behind.
    stragglers: Vec<Straggler>,
    /// Stragglers left alive and already reported (not counted again).
    kept: std::collections::HashSet<i32>,
    /// Counting in the kernel too (for the words of a refusal).
    pmu_kernel: bool,
    /// Runs go through the spawner forked at tardy's start
    /// ([`super::spawner`]): the request, and the descriptors it is given.
    server: Option<Served>,
    /// This run's stderr instead of the output mode's (a first run's,
    /// captured to explain a failure).
    stderr_override: Option<libc::c_int>,
}

/// What a command run by the spawner needs besides its request.
struct Served {
    request: super::spawner::Request,
    devnull: File,
    /// The output file's descriptor (`OutputMode::File`).
    out_file: Option<File>,
}

impl Executor {
    /// Prepare `exec` for repeated runs. `display` names it in errors.
    pub fn new(
        display: &str,
        exec: &Exec,
        output: &OutputMode,
        output_file: Option<&File>,
        opts: &ExecOptions,
    ) -> Result<Executor, MeasureError> {
        // The program, its argv[0] and the rest of its arguments.
        let (program, arg0, rest): (std::ffi::OsString, &str, Vec<&str>) = match exec {
            Exec::Direct { argv } => {
                let first = argv.first().ok_or(MeasureError::EmptyCommand)?;
                let program = super::command::resolve_program(first, opts.cwd.as_deref())?;
                (
                    program.into_os_string(),
                    first.as_str(),
                    argv[1..].iter().map(String::as_str).collect(),
                )
            }
            Exec::Shell { shell, script } => (
                std::ffi::OsString::from(shell),
                shell.as_str(),
                vec!["-c", script.as_str()],
            ),
        };
        // Through the trampoline where it can be: tardy itself, started in
        // that mode, with a pipe to report on.
        let me = std::env::current_exe()
            .ok()
            .filter(|_| trampoline_enabled());
        let report = me.as_ref().and_then(|_| trampoline_pipe());
        if opts.pmu.is_some() && report.is_none() {
            return Err(MeasureError::Option(
                "counts on the PMU need tardy's trampoline (unset TARDY_NO_TRAMPOLINE)".into(),
            ));
        }
        super::inherit::prepare();
        let mut cmd = match (&report, me) {
            (Some((_, w)), Some(me)) => {
                let mut c = Command::new(me);
                c.arg(super::trampoline::ARG).arg(w.as_raw_fd().to_string());
                if let Some(spec) = &opts.pmu {
                    c.arg(spec.to_arg());
                }
                c.arg(&program).arg(arg0).args(&rest);
                // The trampoline starts with the user's state (which it
                // hands on), and the report pipe.
                let report_fd = w.as_raw_fd();
                // SAFETY: restore and fcntl are async-signal-safe.
                unsafe {
                    c.pre_exec(move || {
                        super::inherit::restore();
                        libc::fcntl(report_fd, libc::F_SETFD, 0);
                        Ok(())
                    });
                }
                c
            }
            _ => {
                let mut c = Command::new(&program);
                c.arg0(arg0).args(&rest);
                super::inherit::command(&mut c);
                c
            }
        };
        cmd.process_group(0);
        stragglers::become_subreaper();
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &opts.cwd {
            cmd.current_dir(dir);
        }
        // Through the spawner when tardy started one: the request once.
        let server = if super::spawner::available(opts.pmu.is_some()) {
            let program = match exec {
                Exec::Direct { .. } => Some(std::path::PathBuf::from(&program)),
                Exec::Shell { shell, .. } => super::command::resolve_program(shell, None).ok(),
            };
            let mut env: Vec<std::ffi::OsString> = std::env::vars_os()
                .filter(|(k, _)| !opts.env.iter().any(|(o, _)| std::ffi::OsStr::new(o) == k))
                .map(|(k, v)| {
                    let mut kv = k;
                    kv.push("=");
                    kv.push(v);
                    kv
                })
                .collect();
            env.extend(opts.env.iter().map(|(k, v)| format!("{k}={v}").into()));
            let argv: Vec<&std::ffi::OsStr> = std::iter::once(std::ffi::OsStr::new(arg0))
                .chain(rest.iter().map(std::ffi::OsStr::new))
                .collect();
            let pmu = opts.pmu.as_ref().map(|p| p.to_arg());
            let request = program.and_then(|p| {
                super::spawner::Request::new(
                    p.as_os_str(),
                    &argv,
                    &env,
                    opts.cwd.as_deref(),
                    pmu.as_deref(),
                )
            });
            match (
                request,
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open("/dev/null"),
            ) {
                (Some(request), Ok(devnull)) => Some(Served {
                    request,
                    devnull,
                    out_file: match (output, output_file) {
                        (OutputMode::File(path), Some(f)) => Some(clone_file(f, path)?),
                        _ => None,
                    },
                }),
                _ => None,
            }
        } else {
            None
        };
        let input = match &opts.input {
            Some(path) => {
                let f = File::open(path).map_err(|source| MeasureError::Open {
                    what: "input file",
                    path: path.clone(),
                    source,
                })?;
                cmd.stdin(Stdio::from(clone_file(&f, path)?));
                Some(f)
            }
            None => {
                cmd.stdin(Stdio::null());
                None
            }
        };
        let mut executor = Executor {
            cmd,
            report,
            display: display.to_string(),
            input,
            output: output.clone(),
            timeout: opts.timeout,
            keep_stragglers: opts.keep_stragglers,
            stragglers: Vec::new(),
            kept: Default::default(),
            pmu_kernel: opts.pmu.is_some_and(|p| p.kernel),
            server,
            stderr_override: None,
        };
        executor.set_output(output_file)?;
        Ok(executor)
    }

    fn set_output(&mut self, output_file: Option<&File>) -> Result<(), MeasureError> {
        let (out, err) = match (&self.output, output_file) {
            (OutputMode::Null, _) => (Stdio::null(), Stdio::null()),
            (OutputMode::Pipe, _) => (Stdio::piped(), Stdio::piped()),
            (OutputMode::Inherit, _) => (Stdio::inherit(), Stdio::inherit()),
            (OutputMode::File(path), Some(f)) => (
                Stdio::from(clone_file(f, path)?),
                Stdio::from(clone_file(f, path)?),
            ),
            (OutputMode::File(path), None) => {
                return Err(MeasureError::Option(format!(
                    "output file {} was not opened",
                    path.display()
                )));
            }
        };
        self.cmd.stdout(out).stderr(err);
        Ok(())
    }

    /// The command as named in messages.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// The processes the last run left behind (killed unless `keep_stragglers`).
    pub fn take_stragglers(&mut self) -> Vec<Straggler> {
        std::mem::take(&mut self.stragglers)
    }

    /// Run once. With `capture_stderr`, stderr goes to that file for this run
    /// (used on a command's first run, to explain a failure).
    pub fn run(
        &mut self,
        capture_stderr: Option<&File>,
        output_file: Option<&File>,
    ) -> Result<RunOutcome, MeasureError> {
        if let Some(f) = &mut self.input {
            f.seek(SeekFrom::Start(0))
                .map_err(|source| MeasureError::Wait {
                    command: self.display.clone(),
                    source,
                })?;
        }
        if self.server.is_some() {
            self.stderr_override = capture_stderr.map(|f| f.as_raw_fd());
            let outcome = self.run_served();
            self.stderr_override = None;
            return outcome;
        }
        if let Some(f) = capture_stderr {
            let clone = f.try_clone().map_err(|source| MeasureError::Spawn {
                command: self.display.clone(),
                source,
            })?;
            self.cmd.stderr(Stdio::from(clone));
        }
        let outcome = self.run_timed();
        if capture_stderr.is_some() {
            self.set_output(output_file)?;
        }
        outcome
    }

    /// One run through the spawner: the request with this run's standard
    /// descriptors, then its pid (the process group tardy interrupts, times
    /// out and sweeps), then its end, draining a piped output meanwhile.
    fn run_served(&mut self) -> Result<RunOutcome, MeasureError> {
        use super::spawner::Message;
        let Some(served) = &self.server else {
            return self.run_timed();
        };
        let started_at_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let null = served.devnull.as_raw_fd();
        let stdin = self.input.as_ref().map_or(null, |f| f.as_raw_fd());
        // Pipes for OutputMode::Pipe: the read ends tardy drains, the write
        // ends the command gets.
        let mut reader_files: Vec<File> = Vec::new();
        let mut writers: Option<[File; 2]> = None;
        let (out, err) = match (&self.output, &served.out_file) {
            (OutputMode::Null, _) => (null, null),
            (OutputMode::Inherit, _) => (1, 2),
            (OutputMode::File(_), Some(f)) => (f.as_raw_fd(), f.as_raw_fd()),
            (OutputMode::File(path), None) => {
                return Err(MeasureError::Option(format!(
                    "output file {} was not opened",
                    path.display()
                )));
            }
            (OutputMode::Pipe, _) => {
                let (r1, w1) = plain_pipe().map_err(|source| self.spawn_error(source))?;
                let (r2, w2) = plain_pipe().map_err(|source| self.spawn_error(source))?;
                let fds = (w1.as_raw_fd(), w2.as_raw_fd());
                reader_files = vec![r1, r2];
                writers = Some([w1, w2]);
                fds
            }
        };
        let err = self.stderr_override.unwrap_or(err);
        let deadline = self.timeout.map(|t| Instant::now() + t);
        let pid = std::cell::Cell::new(0 as libc::pid_t);
        let mut failed: Option<Message> = None;
        let mut record = None;
        let mut timed_out = false;
        // --- timed window starts ---
        let start = Instant::now();
        let readers: Vec<libc::c_int> = reader_files.iter().map(|f| f.as_raw_fd()).collect();
        let sent = super::spawner::run(
            &served.request,
            [stdin, out, err],
            &mut |m| match m {
                Message::Started(p) => {
                    pid.set(p);
                    interrupt::set_child_group(p);
                    interrupt::forward_to(p);
                    // The command and the spawner hold the write ends now.
                    writers.take();
                }
                Message::Done(r) => record = Some(r),
                other => failed = Some(other),
            },
            &mut |sock, started| {
                wait_served(sock, started, &readers, deadline, &mut timed_out, &pid)
            },
        );
        let wall = start.elapsed();
        // --- timed window ends ---
        interrupt::set_child_group(0);
        drop(writers);
        drop(reader_files);
        sent.map_err(|source| self.spawn_error(source))?;
        match failed {
            Some(Message::ExecFailed(errno)) => {
                return Err(self.spawn_error(std::io::Error::from_raw_os_error(errno)));
            }
            Some(Message::CountFailed(errno)) => {
                let e = std::io::Error::from_raw_os_error(errno);
                return Err(MeasureError::Option(format!(
                    "the PMU's counters could not be opened for '{}': {}",
                    self.display,
                    super::counters::pmu::why(&e, self.pmu_kernel)
                )));
            }
            _ => {}
        }
        let pid = pid.get();
        if pid > 0 {
            self.stragglers = stragglers::sweep(pid, self.keep_stragglers);
            if self.keep_stragglers {
                let kept = &mut self.kept;
                self.stragglers.retain(|s| kept.insert(s.pid));
            }
        }
        let r = record.unwrap_or_default();
        let status = r.status;
        let (exit_code, signal) = exit_of(status);
        Ok(RunOutcome {
            started_at_ns,
            wall_ns: if r.wall_ns > 0 {
                r.wall_ns
            } else {
                wall.as_nanos() as u64
            },
            user_ns: r.user_ns,
            sys_ns: r.sys_ns,
            max_rss_kib: r.max_rss_kib,
            voluntary_cs: r.voluntary_cs,
            involuntary_cs: r.involuntary_cs,
            exit_code,
            signal,
            timed_out,
            interrupted: interrupt::requested(),
            instructions: r.instructions,
            cycles: r.cycles,
        })
    }

    fn spawn_error(&self, source: std::io::Error) -> MeasureError {
        MeasureError::Spawn {
            command: self.display.clone(),
            source,
        }
    }

    fn run_timed(&mut self) -> Result<RunOutcome, MeasureError> {
        let started_at_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        if let Some((r, w)) = &self.report {
            // Stale bytes of a run that was cut short go first; the write
            // end is inherited by this spawn only.
            drain_nonblocking(r);
            set_cloexec(w, false);
        }
        // --- timed window starts ---
        let start = Instant::now();
        let spawned = self.cmd.spawn();
        if let Some((_, w)) = &self.report {
            set_cloexec(w, true);
        }
        let mut child = spawned.map_err(|source| MeasureError::Spawn {
            command: self.display.clone(),
            source,
        })?;
        let pid = child.id() as libc::pid_t;
        interrupt::set_child_group(pid);
        interrupt::forward_to(pid);
        let deadline = self.timeout.map(|t| start + t);
        let mut timed_out = false;
        if self.output == OutputMode::Pipe {
            let out = child.stdout.take();
            let err = child.stderr.take();
            let fds = [
                out.as_ref().map_or(-1, |f| f.as_raw_fd()),
                err.as_ref().map_or(-1, |f| f.as_raw_fd()),
            ];
            timed_out = drain(fds, deadline, pid);
        }
        let waited = wait_for(pid, if timed_out { None } else { deadline });
        let wall = start.elapsed();
        // --- timed window ends ---
        interrupt::set_child_group(0);
        drop(child);
        self.stragglers = stragglers::sweep(pid, self.keep_stragglers);
        if self.keep_stragglers {
            let kept = &mut self.kept;
            self.stragglers.retain(|s| kept.insert(s.pid));
        }
        let (mut status, ru, wait_timed_out) = waited.map_err(|source| MeasureError::Wait {
            command: self.display.clone(),
            source,
        })?;
        let mut outcome_ru = Measured {
            wall_ns: wall.as_nanos() as u64,
            user_ns: super::trampoline::timeval_ns(ru.ru_utime),
            sys_ns: super::trampoline::timeval_ns(ru.ru_stime),
            max_rss_kib: max_rss_kib(ru.ru_maxrss),
            voluntary_cs: ru.ru_nvcsw.max(0) as u64,
            involuntary_cs: ru.ru_nivcsw.max(0) as u64,
        };
        let mut pmu_counts = (None, None);
        if let Some((r, _)) = &self.report {
            match super::trampoline::parse(&drain_nonblocking(r)) {
                super::trampoline::Report::Ran(rec) => {
                    pmu_counts = (rec.instructions, rec.cycles);
                    // The command's own figures, not the trampoline's.
                    status = rec.status;
                    outcome_ru = Measured {
                        wall_ns: rec.wall_ns,
                        user_ns: rec.user_ns,
                        sys_ns: rec.sys_ns,
                        max_rss_kib: rec.max_rss_kib,
                        voluntary_cs: rec.voluntary_cs,
                        involuntary_cs: rec.involuntary_cs,
                    };
                }
                super::trampoline::Report::ExecFailed(errno) => {
                    return Err(MeasureError::Spawn {
                        command: self.display.clone(),
                        source: std::io::Error::from_raw_os_error(errno),
                    });
                }
                super::trampoline::Report::CountFailed(errno) => {
                    let e = std::io::Error::from_raw_os_error(errno);
                    let kernel = self.pmu_kernel;
                    return Err(MeasureError::Option(format!(
                        "the PMU's counters could not be opened for '{}': {}",
                        self.display,
                        super::counters::pmu::why(&e, kernel)
                    )));
                }
                // Killed before it could say (a timeout): its own status.
                super::trampoline::Report::Nothing => {}
            }
        }
        let (exit_code, signal) = exit_of(status);
        Ok(RunOutcome {
            started_at_ns,
            wall_ns: outcome_ru.wall_ns,
            user_ns: outcome_ru.user_ns,
            sys_ns: outcome_ru.sys_ns,
            max_rss_kib: outcome_ru.max_rss_kib,
            voluntary_cs: outcome_ru.voluntary_cs,
            involuntary_cs: outcome_ru.involuntary_cs,
            exit_code,
            signal,
            timed_out: timed_out || wait_timed_out,
            interrupted: interrupt::requested(),
            instructions: pmu_counts.0,
            cycles: pmu_counts.1,
        })
    }
}

/// Wait until the spawner's socket is readable, reading and discarding the
/// command's piped output meanwhile; at the deadline, kill the command's
/// group (once) and keep waiting for its end.
fn wait_served(
    sock: libc::c_int,
    started: bool,
    readers: &[libc::c_int],
    deadline: Option<Instant>,
    timed_out: &mut bool,
    pid: &std::cell::Cell<libc::pid_t>,
) -> std::io::Result<bool> {
    let mut open: Vec<libc::c_int> = readers.to_vec();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let mut polls: Vec<libc::pollfd> = std::iter::once(sock)
            .chain(open.iter().copied())
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // Before the pid is known (the small spawner publishes it without
        // waking tardy), a deadline or a Ctrl-C needs it: look again in a
        // millisecond.
        let due = deadline.is_some_and(|d| !*timed_out && remaining_ms(d) == 0);
        let timeout = if !started && (due || interrupt::requested()) {
            1
        } else {
            match deadline {
                Some(d) if !*timed_out && pid.get() > 0 => {
                    let ms = remaining_ms(d);
                    if ms == 0 {
                        kill_group(pid.get());
                        *timed_out = true;
                        -1
                    } else {
                        ms
                    }
                }
                Some(d) if !*timed_out => remaining_ms(d).max(1),
                _ => -1,
            }
        };
        // SAFETY: polls is a valid array of pollfd.
        let rc = unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, timeout) };
        if rc < 0 {
            if last_errno().kind() == std::io::ErrorKind::Interrupted {
                if pid.get() > 0 {
                    interrupt::forward_to(pid.get());
                }
                return Ok(false);
            }
            return Err(last_errno());
        }
        if rc == 0 {
            return Ok(false);
        }
        for p in &polls[1..] {
            if p.revents != 0 {
                // SAFETY: buf is valid for buf.len() bytes.
                let n = unsafe { libc::read(p.fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n == 0 || (n < 0 && last_errno().kind() != std::io::ErrorKind::Interrupted) {
                    open.retain(|&fd| fd != p.fd);
                }
            }
        }
        if polls[0].revents != 0 {
            return Ok(true);
        }
    }
}

/// A pipe, both ends close-on-exec (the spawner hands the write end on).
fn plain_pipe() -> std::io::Result<(File, File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two fds, ours.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(last_errno());
    }
    // SAFETY: as above.
    Ok(unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) })
}

/// A run's resource figures.
struct Measured {
    wall_ns: u64,
    user_ns: u64,
    sys_ns: u64,
    max_rss_kib: u64,
    voluntary_cs: u64,
    involuntary_cs: u64,
}

/// Runs go through the trampoline unless `TARDY_NO_TRAMPOLINE` is set (to
/// compare, or where tardy's own binary cannot be started again).
pub fn trampoline_enabled() -> bool {
    cfg!(target_os = "linux") && std::env::var_os("TARDY_NO_TRAMPOLINE").is_none()
}

/// A pipe for the trampoline's reports: the read end non-blocking, both
/// close-on-exec (the write end is opened up for each spawn alone).
fn trampoline_pipe() -> Option<(File, File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is valid for two ints; the fds returned are ours.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return None;
    }
    // SAFETY: as above.
    unsafe {
        let flags = libc::fcntl(fds[0], libc::F_GETFL);
        libc::fcntl(fds[0], libc::F_SETFL, flags | libc::O_NONBLOCK);
        Some((File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])))
    }
}

fn set_cloexec(f: &File, on: bool) {
    // SAFETY: F_SETFD on an fd we own.
    unsafe {
        libc::fcntl(
            f.as_raw_fd(),
            libc::F_SETFD,
            if on { libc::FD_CLOEXEC } else { 0 },
        )
    };
}

/// Everything in the (non-blocking) pipe now.
fn drain_nonblocking(r: &File) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        // SAFETY: buf is valid for its length.
        let n = unsafe { libc::read(r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

fn clone_file(f: &File, path: &std::path::Path) -> Result<File, MeasureError> {
    f.try_clone().map_err(|source| MeasureError::Open {
        what: "file",
        path: path.to_path_buf(),
        source,
    })
}

fn max_rss_kib(raw: libc::c_long) -> u64 {
    let raw = raw.max(0) as u64;
    if cfg!(target_os = "macos") {
        raw / 1024
    } else {
        raw
    }
}

fn kill_group(pid: libc::pid_t) {
    super::interrupt::sigkill_group(pid);
}

fn last_errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// A `wait` status as its exit code, or the signal that ended it.
fn exit_of(status: libc::c_int) -> (Option<i32>, Option<i32>) {
    if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    }
}

fn remaining_ms(deadline: Instant) -> libc::c_int {
    let left = deadline.saturating_duration_since(Instant::now());
    // Round up so we never wake before the deadline.
    left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int
}

/// Read and discard both pipes until the command exits (or both reach EOF).
/// Returns true when the deadline passed first (the group is then killed).
///
/// The run ends when the command exits, not when its pipes close: a daemon it
/// forked may hold them open for as long as it lives (`(sleep 3 &); echo hi`).
fn drain(mut fds: [libc::c_int; 2], deadline: Option<Instant>, pid: libc::pid_t) -> bool {
    let pidfd = pidfd_open(pid);
    let mut buf = [0u8; 16 * 1024];
    let result = loop {
        let mut polls = [
            libc::pollfd {
                fd: fds[0],
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: fds[1],
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if fds.iter().all(|&fd| fd < 0) {
            break false;
        }
        let timeout = deadline.map_or(-1, remaining_ms);
        if deadline.is_some() && timeout == 0 {
            kill_group(pid);
            break true;
        }
        // SAFETY: polls is a valid array of 3 pollfd; negative fds are ignored.
        let rc = unsafe { libc::poll(polls.as_mut_ptr(), 3, timeout) };
        if rc < 0 {
            if last_errno().kind() == std::io::ErrorKind::Interrupted {
                interrupt::forward_to(pid);
                continue;
            }
            break false;
        }
        for (i, p) in polls[..2].iter().enumerate() {
            if p.fd >= 0 && p.revents != 0 {
                // SAFETY: buf is valid for buf.len() bytes.
                let n = unsafe { libc::read(p.fd, buf.as_mut_ptr().cast(), buf.len()) };
                if n == 0 || (n < 0 && last_errno().kind() != std::io::ErrorKind::Interrupted) {
                    fds[i] = -1;
                }
            }
        }
        if polls[2].fd >= 0 && polls[2].revents != 0 {
            // The command exited; what is still in the pipes is discarded with them.
            break false;
        }
    };
    if pidfd >= 0 {
        // SAFETY: pidfd is ours to close.
        unsafe { libc::close(pidfd) };
    }
    result
}

/// A pidfd for `pid` (readable once it exits), or -1 where there is none.
fn pidfd_open(pid: libc::pid_t) -> libc::c_int {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as libc::c_int;
        fd.max(-1)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        -1
    }
}

type Waited = (libc::c_int, libc::rusage, bool);

/// wait4 for `pid`, killing its process group at `deadline`.
fn wait_for(pid: libc::pid_t, deadline: Option<Instant>) -> std::io::Result<Waited> {
    let mut timed_out = false;
    if let Some(deadline) = deadline {
        timed_out = wait_until(pid, deadline)?;
    }
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data, filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and ru are valid for writing.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            return Ok((status, ru, timed_out));
        }
        let err = last_errno();
        if err.kind() == std::io::ErrorKind::Interrupted {
            interrupt::forward_to(pid);
            continue;
        }
        return Err(err);
    }
}

/// Block until `pid` exits or `deadline` passes; at the deadline kill its
/// group and return true. The child is left for the caller to reap.
fn wait_until(pid: libc::pid_t, deadline: Instant) -> std::io::Result<bool> {
    {
        let pidfd = pidfd_open(pid);
        if pidfd >= 0 {
            let result = loop {
                let timeout = remaining_ms(deadline);
                if timeout == 0 {
                    kill_group(pid);
                    break Ok(true);
                }
                let mut p = libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                let rc = unsafe { libc::poll(&mut p, 1, timeout) };
                if rc > 0 {
                    break Ok(false);
                }
                if rc < 0 {
                    let err = last_errno();
                    if err.kind() == std::io::ErrorKind::Interrupted {
                        interrupt::forward_to(pid);
                        continue;
                    }
                    break Err(err);
                }
            };
            // SAFETY: pidfd is ours to close.
            unsafe { libc::close(pidfd) };
            return result;
        }
    }
    // Portable fallback: poll with WNOWAIT-free peeking every millisecond.
    loop {
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid with WNOWAIT leaves the child unreaped for wait4.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        if rc == 0 && unsafe { info.si_pid() } == pid {
            return Ok(false);
        }
        if Instant::now() >= deadline {
            kill_group(pid);
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}
