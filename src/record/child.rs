//! Starting the command to record: fork, set up its stdin (end-of-file),
//! stdout (discarded, or shown with --show-output) and stderr (kept for the
//! error message when it fails), its directory, then whatever the recorder
//! needs before the exec: ptrace and the seccomp filter, or a gate that
//! holds the exec until the kernel-event recorder has opened its events.
//! The child only makes async-signal-safe calls on data built before the
//! fork. A command that cannot be traced runs untraced and says why.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use super::arch;
use super::procfs;
use super::{Coverage, Prepared, ProcRow, RecordError, RecordedRun, TaskRow};
use crate::measure::interrupt;

/// How the child is prepared before it execs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// PTRACE_TRACEME, a stop, then the seccomp filter.
    Ptrace,
    /// Wait on a pipe until the recorder releases it.
    Gate,
    /// Nothing: the command runs untraced.
    Plain,
}

/// A started command, for the recorder's loop.
pub(super) struct Started {
    pub pid: i32,
    start: std::cell::Cell<Instant>,
    origin_ns: std::cell::Cell<u64>,
    gate: std::cell::RefCell<Option<OwnedFd>>,
}

impl Started {
    /// Let a gated child exec (once; later calls do nothing). The run's
    /// clock starts again here: the recorder's own set-up is not the
    /// command's time.
    pub fn release(&self) {
        if let Some(fd) = self.gate.borrow_mut().take() {
            self.origin_ns.set(clock_monotonic_ns());
            self.start.set(Instant::now());
            // SAFETY: one byte written to our pipe; the fd closes on drop.
            unsafe { libc::write(fd.as_raw_fd(), b"g".as_ptr() as *const libc::c_void, 1) };
        }
    }
    /// When the run started: the fork, or the gate's release.
    pub fn start(&self) -> Instant {
        self.start.get()
    }
    /// The same moment in CLOCK_MONOTONIC ns.
    pub fn origin_ns(&self) -> u64 {
        self.origin_ns.get()
    }
}

pub(super) fn now_ns(start: Instant) -> u64 {
    start.elapsed().as_nanos() as u64
}

pub(super) fn clock_monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec.max(0) as u64 * 1_000_000_000 + ts.tv_nsec.max(0) as u64
}

pub(super) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

extern "C" fn on_alarm(_: libc::c_int) {}

/// Make SIGALRM interrupt a blocking wait4 (no SA_RESTART) and arm it every 100 ms.
pub(super) fn arm_ticker(on: bool) {
    // SAFETY: installs a no-op handler and sets an interval timer.
    unsafe {
        if on {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_alarm as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGALRM, &action, std::ptr::null_mut());
        }
        let period = if on { 100_000 } else { 0 };
        let t = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: period,
            },
            it_value: libc::timeval {
                tv_sec: 0,
                tv_usec: period,
            },
        };
        libc::setitimer(libc::ITIMER_REAL, &t, std::ptr::null_mut());
    }
}

/// What the child reports on the status pipe before it execs.
const MSG_TRACED: u8 = b'T';
const MSG_NO_PTRACE: u8 = b'P';
const MSG_NO_SECCOMP: u8 = b'S';
const MSG_UNTRACED: u8 = b'U';
const MSG_EXEC_FAILED: u8 = b'X';
const MSG_CWD: u8 = b'C';
const MSG_GATED: u8 = b'G';

/// In the forked child: only async-signal-safe calls on data prepared before
/// the fork. Never returns.
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    p: &Prepared,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    wr: i32,
    devnull: i32,
    err_fd: i32,
    mode: Mode,
    gate_rd: i32,
) -> ! {
    // SAFETY: raw syscalls on integers and pointers into `p`, live for the
    // child's lifetime; _exit ends it.
    unsafe {
        let report = |tag: u8, code: i32| {
            let mut msg = [0u8; 5];
            msg[0] = tag;
            msg[1..].copy_from_slice(&code.to_ne_bytes());
            libc::write(wr, msg.as_ptr() as *const libc::c_void, 5);
        };
        libc::setpgid(0, 0);
        libc::dup2(devnull, 0);
        if !p.opts.show_output {
            libc::dup2(devnull, 1);
            libc::dup2(if err_fd >= 0 { err_fd } else { devnull }, 2);
        }
        if let Some(dir) = &p.cwd
            && libc::chdir(dir.as_ptr()) != 0
        {
            report(MSG_CWD, errno());
            libc::_exit(126);
        }
        if mode == Mode::Gate {
            // Wait until the recorder has opened its events on this process.
            report(MSG_GATED, 0);
            let mut b = [0u8; 1];
            while libc::read(gate_rd, b.as_mut_ptr() as *mut libc::c_void, 1) < 0
                && errno() == libc::EINTR
            {}
            libc::close(gate_rd);
        } else if mode == Mode::Ptrace && arch::SUPPORTED {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) == 0 {
                report(MSG_TRACED, 0);
                libc::raise(libc::SIGSTOP);
                let prog = libc::sock_fprog {
                    len: p.filter.len() as libc::c_ushort,
                    filter: p.filter.as_ptr() as *mut libc::sock_filter,
                };
                let install = || {
                    libc::syscall(
                        libc::SYS_seccomp,
                        1 as libc::c_ulong, // SECCOMP_SET_MODE_FILTER
                        0 as libc::c_ulong,
                        &prog as *const libc::sock_fprog,
                    )
                };
                let mut rc = install();
                if rc != 0 && errno() == libc::EACCES {
                    // Without CAP_SYS_ADMIN a filter needs no_new_privs.
                    libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                    rc = install();
                }
                if rc != 0 {
                    report(MSG_NO_SECCOMP, errno());
                }
            } else {
                report(MSG_NO_PTRACE, errno());
            }
        } else {
            report(
                MSG_UNTRACED,
                if mode == Mode::Plain || arch::SUPPORTED {
                    0
                } else {
                    -1
                },
            );
        }
        // The user's process state, as tardy found it (SIGPIPE not ignored).
        crate::measure::inherit::restore();
        libc::execve(p.program.as_ptr(), argv, envp);
        report(MSG_EXEC_FAILED, errno());
        libc::_exit(127);
    }
}

pub(super) fn os_err(command: &str, e: std::io::Error) -> RecordError {
    RecordError::Spawn {
        command: command.to_string(),
        source: e,
    }
}

/// Run the prepared command once: fork it in `mode`, then let `body` follow
/// it (ptrace's event loop, or the kernel-event recorder, which must call
/// [`Started::release`] once its events are open). A child that cannot be
/// traced as asked runs untraced, and the run says why.
pub(super) fn launch(
    p: &Prepared,
    mode: Mode,
    body: &mut dyn FnMut(&Started) -> RecordedRun,
) -> Result<RecordedRun, RecordError> {
    let (gate_rd, gate_wr) = if mode == Mode::Gate {
        let mut g = [0i32; 2];
        // SAFETY: pipe2 fills two fds; the read end is inherited by the child only.
        if unsafe { libc::pipe2(g.as_mut_ptr(), 0) } != 0 {
            return Err(os_err(&p.display, std::io::Error::last_os_error()));
        }
        // SAFETY: fresh fds owned here; the write end must not leak into the command.
        unsafe { libc::fcntl(g[1], libc::F_SETFD, libc::FD_CLOEXEC) };
        (g[0], Some(unsafe { OwnedFd::from_raw_fd(g[1]) }))
    } else {
        (-1, None)
    };
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fds.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(os_err(&p.display, std::io::Error::last_os_error()));
    }
    // SAFETY: fresh fds owned here.
    let mut status_rd = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let status_wr = unsafe { std::fs::File::from_raw_fd(fds[1]) };
    // Read and write: the command's stdin reads end-of-file, and what it
    // prints to stdout is discarded, as under hyperfine.
    let devnull = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| os_err(&p.display, e))?;
    let mut errfile = if p.opts.show_output {
        None
    } else {
        Some(tempfile::tempfile().map_err(|e| os_err(&p.display, e))?)
    };
    let err_fd = errfile.as_ref().map_or(-1, |f| f.as_raw_fd());
    let mut envp: Vec<*const libc::c_char> = p.envp.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut argv: Vec<*const libc::c_char> = p.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let steal0 = crate::probe::fingerprint::steal_ticks();

    crate::measure::inherit::prepare();
    let origin_ns = clock_monotonic_ns();
    let start = Instant::now();
    // SAFETY: the child runs only `child`, which is async-signal-safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(os_err(&p.display, std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: see `child`.
        unsafe {
            child(
                p,
                argv.as_ptr(),
                envp.as_ptr(),
                status_wr.as_raw_fd(),
                devnull.as_raw_fd(),
                err_fd,
                mode,
                gate_rd,
            )
        }
    }
    drop(status_wr);
    if gate_rd >= 0 {
        // SAFETY: the parent's copy of the gate's read end.
        unsafe { libc::close(gate_rd) };
    }
    interrupt::set_child_group(pid);
    interrupt::forward_to(pid);
    let mut first = [0u8; 5];
    let got = read_full(&mut status_rd, &mut first);
    let code = i32::from_ne_bytes([first[1], first[2], first[3], first[4]]);
    let started = Started {
        pid,
        start: std::cell::Cell::new(start),
        origin_ns: std::cell::Cell::new(origin_ns),
        gate: std::cell::RefCell::new(gate_wr),
    };
    let mut run = if got == 5 && (first[0] == MSG_TRACED || first[0] == MSG_GATED) {
        let run = body(&started);
        started.release();
        run
    } else {
        let why = match first[0] {
            MSG_NO_PTRACE if got == 5 => format!(
                "ptrace was refused ({}), as in a container without CAP_SYS_PTRACE or a command already being debugged",
                std::io::Error::from_raw_os_error(code)
            ),
            MSG_UNTRACED if got == 5 && code == -1 => {
                "syscall tracing is not supported on this architecture".to_string()
            }
            MSG_UNTRACED if got == 5 => "--no-trace".to_string(),
            MSG_GATED => "the command stopped before it could be recorded".to_string(),
            MSG_CWD if got == 5 => {
                untraced(p, pid, start, String::new());
                return Err(RecordError::Child {
                    command: p.display.clone(),
                    message: format!(
                        "cannot change to its directory: {}",
                        std::io::Error::from_raw_os_error(code)
                    ),
                });
            }
            _ => "the command stopped before it could be traced".to_string(),
        };
        untraced(p, pid, start, why)
    };
    interrupt::set_child_group(0);
    // Ctrl-C is forwarded to the command, which may exit of it before the wait
    // loop notices: a run that ended while a stop was requested was cut short.
    if interrupt::requested() {
        run.interrupted = true;
    }
    // Later reports from the child: seccomp refused, exec failed.
    let mut rest = Vec::new();
    let _ = (&mut status_rd).take(64).read_to_end(&mut rest);
    for msg in rest.chunks_exact(5) {
        let code = i32::from_ne_bytes([msg[1], msg[2], msg[3], msg[4]]);
        let e = std::io::Error::from_raw_os_error(code);
        match msg[0] {
            MSG_NO_SECCOMP => {
                run.coverage = Some(Coverage::NoSyscalls(format!(
                    "the seccomp filter was refused ({e}), so syscalls were not timed"
                )))
            }
            MSG_EXEC_FAILED => {
                return Err(RecordError::Child {
                    command: p.display.clone(),
                    message: format!("cannot execute it: {e}"),
                });
            }
            _ => {}
        }
    }
    if let (Some(a), Some(b)) = (steal0, crate::probe::fingerprint::steal_ticks()) {
        run.steal_ns = Some(b.saturating_sub(a) * 1_000_000_000 / procfs::ticks_per_second());
    }
    if !run.success()
        && let Some(f) = errfile.as_mut()
    {
        run.stderr_head = stderr_head(f);
    }
    Ok(run)
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    got
}

fn stderr_head(f: &mut std::fs::File) -> String {
    use std::io::{Seek, SeekFrom};
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(0)).is_err() || f.take(4096).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&buf)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(5)
        .collect::<Vec<_>>()
        .join(" | ")
}

pub(super) fn status_of(run: &mut RecordedRun, status: i32) {
    if libc::WIFEXITED(status) {
        run.exit_code = Some(libc::WEXITSTATUS(status));
    } else if libc::WIFSIGNALED(status) {
        run.signal = Some(libc::WTERMSIG(status));
    }
}

pub(super) fn tv_ns(t: libc::timeval) -> u64 {
    t.tv_sec.max(0) as u64 * 1_000_000_000 + t.tv_usec.max(0) as u64 * 1000
}

/// The command runs without tracing: wall, rusage, and its own schedstat
/// (read while it is a zombie, before it is reaped).
pub(super) fn untraced(p: &Prepared, pid: i32, start: Instant, why: String) -> RecordedRun {
    let mut run = RecordedRun {
        coverage: Some(Coverage::Untraced(why)),
        ..RecordedRun::default()
    };
    let deadline = p.opts.timeout.map(|t| start + t);
    arm_ticker(deadline.is_some());
    loop {
        // SAFETY: waitid into a zeroed siginfo, leaving the child waitable.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            break;
        }
        if errno() != libc::EINTR {
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) && !run.timed_out {
            run.timed_out = true;
            interrupt::sigkill_group(pid);
        }
        if interrupt::requested() {
            run.interrupted = true;
        }
    }
    arm_ticker(false);
    let stats = procfs::thread_stats(pid, pid);
    let mut status = 0;
    // SAFETY: rusage is plain data; reaps our child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    run.wall_ns = now_ns(start);
    status_of(&mut run, status);
    run.root_user_ns = tv_ns(ru.ru_utime);
    run.root_sys_ns = tv_ns(ru.ru_stime);
    run.root_minflt = ru.ru_minflt.max(0) as u64;
    run.root_majflt = ru.ru_majflt.max(0) as u64;
    run.tasks.push(TaskRow {
        tid: pid,
        tgid: pid,
        start_ns: 0,
        end_ns: run.wall_ns,
        stats,
        ..TaskRow::default()
    });
    run.procs.push(ProcRow {
        pid,
        command: p
            .argv
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        exe: p.program.to_string_lossy().into_owned(),
        execs: 1,
        end_ns: run.wall_ns,
        ..ProcRow::default()
    });
    run
}
