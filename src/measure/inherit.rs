//! The command's environment is the user's: what tardy found when it
//! started, given back to every command it starts.
//!
//! A measuring tool that changes what it measures is wrong (WebPageTest's
//! own tracer made the browser it traced slower). A process inherits more
//! than its environment variables: signal dispositions (an ignored signal
//! stays ignored across `exec`), the signal mask, resource limits, its nice
//! value, CPU affinity, umask and open descriptors. Rust's runtime ignores
//! SIGPIPE before `main` runs, so a command started from any Rust program
//! inherits SIGPIPE ignored: `yes | head -c 10` then prints "yes: standard
//! output: Broken pipe" instead of ending quietly, and a pipeline under
//! `pipefail` fails. tardy's own handlers (Ctrl-C) and helpers (the
//! trampoline ignores the terminal's signals) add to that.
//!
//! So the state is captured before Rust's runtime changes it, by a
//! constructor in `.init_array` (`main.rs`: [`capture`]), and every path
//! that starts a user's command calls [`restore`] between fork and exec:
//! each signal ignored or default as it was, the mask, every resource limit,
//! the nice value, the affinity and the umask as they were, and every
//! descriptor above 2 that was not open when tardy started marked
//! close-on-exec. A user under `trap '' PIPE` or `nohup` keeps SIGPIPE or
//! SIGHUP ignored: nothing is reset to a default that was not there.
//!
//! Only async-signal-safe calls are made after the fork.

use std::sync::OnceLock;

/// Resource limits given back (all of Linux's).
const RLIMITS: [libc::__rlimit_resource_t; 16] = [
    libc::RLIMIT_AS,
    libc::RLIMIT_CORE,
    libc::RLIMIT_CPU,
    libc::RLIMIT_DATA,
    libc::RLIMIT_FSIZE,
    libc::RLIMIT_LOCKS,
    libc::RLIMIT_MEMLOCK,
    libc::RLIMIT_MSGQUEUE,
    libc::RLIMIT_NICE,
    libc::RLIMIT_NOFILE,
    libc::RLIMIT_NPROC,
    libc::RLIMIT_RSS,
    libc::RLIMIT_RTPRIO,
    libc::RLIMIT_RTTIME,
    libc::RLIMIT_SIGPENDING,
    libc::RLIMIT_STACK,
];

/// Descriptors above 2 open at start that are handed on (the rest are
/// tardy's own); more than this many are handed on all the same, beyond it
/// unchecked.
const MAX_FDS: usize = 64;

/// The process state tardy started with.
pub struct Original {
    /// Bit s - 1: signal s was ignored.
    ignored: u64,
    mask: libc::sigset_t,
    rlimits: [libc::rlimit; RLIMITS.len()],
    nice: Option<libc::c_int>,
    affinity: Option<libc::cpu_set_t>,
    umask: libc::mode_t,
    fds: [libc::c_int; MAX_FDS],
    nfds: usize,
    /// Captured before Rust's runtime ran (by the constructor), so SIGPIPE's
    /// disposition is the user's.
    before_runtime: bool,
}

static ORIGINAL: OnceLock<Original> = OnceLock::new();

/// Record the state now. Called by `main.rs`'s constructor, before Rust's
/// runtime ignores SIGPIPE; a library user (a test) that never ran it gets
/// the state at first use, with SIGPIPE taken as a shell leaves it
/// (default).
pub fn capture() {
    let _ = ORIGINAL.get_or_init(|| read(true));
}

fn original() -> &'static Original {
    ORIGINAL.get_or_init(|| read(false))
}

fn read(before_runtime: bool) -> Original {
    // SAFETY: plain queries of this process's own state into valid,
    // correctly sized buffers.
    unsafe {
        let mut ignored = 0u64;
        for s in 1..=64 {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(s, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                ignored |= 1 << (s - 1);
            }
        }
        // glibc's own two, which its sigaction does not report: the kernel's.
        for s in 32..=33 {
            let mut old: KernelSigaction = std::mem::zeroed();
            if libc::syscall(
                libc::SYS_rt_sigaction,
                s,
                std::ptr::null::<KernelSigaction>(),
                &mut old as *mut KernelSigaction,
                8usize,
            ) == 0
                && old.handler == libc::SIG_IGN
            {
                ignored |= 1 << (s - 1);
            }
        }
        if !before_runtime {
            // Rust ignored it; a shell would not have.
            ignored &= !(1 << (libc::SIGPIPE - 1));
        }
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_SETMASK, std::ptr::null(), &mut mask);
        let mut rlimits = [libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        }; RLIMITS.len()];
        for (r, &res) in rlimits.iter_mut().zip(RLIMITS.iter()) {
            libc::getrlimit(res, r);
        }
        *libc::__errno_location() = 0;
        let p = libc::getpriority(libc::PRIO_PROCESS, 0);
        let nice = (*libc::__errno_location() == 0).then_some(p);
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let affinity =
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then_some(set);
        let umask = libc::umask(0o022);
        libc::umask(umask);
        let mut fds = [-1; MAX_FDS];
        let mut nfds = 0;
        // The descriptors above 2 open now and inheritable: the user's to
        // hand on. One marked close-on-exec is not (it did not come through
        // an exec): read lazily in a library user's process, that is a pipe
        // another thread opened for its own child (a test harness running
        // tests side by side), and handing it on to the spawner kept that
        // child's pipe open, so its reader waited for ever.
        let dir = libc::opendir(c"/proc/self/fd".as_ptr());
        if !dir.is_null() {
            let own = libc::dirfd(dir);
            loop {
                let e = libc::readdir(dir);
                if e.is_null() {
                    break;
                }
                let name = std::ffi::CStr::from_ptr((*e).d_name.as_ptr());
                if let Some(fd) = name
                    .to_str()
                    .ok()
                    .and_then(|n| n.parse::<libc::c_int>().ok())
                    && fd > 2
                    && fd != own
                    && nfds < MAX_FDS
                    && libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC == 0
                {
                    fds[nfds] = fd;
                    nfds += 1;
                }
            }
            libc::closedir(dir);
        }
        fds[..nfds].sort_unstable();
        Original {
            ignored,
            mask,
            rlimits,
            nice,
            affinity,
            umask,
            fds,
            nfds,
            before_runtime,
        }
    }
}

/// Whether the state was captured before Rust's runtime ran (in the tardy
/// binary: always).
pub fn captured_before_runtime() -> bool {
    original().before_runtime
}

/// Whether signal `s` was ignored when tardy started.
pub fn was_ignored(s: libc::c_int) -> bool {
    (1..=64).contains(&s) && original().ignored & (1 << (s - 1)) != 0
}

/// Make sure the state is read before any fork (a child must not be the
/// first to read it: that allocates).
pub fn prepare() {
    let _ = original();
}

/// Give this process the state tardy started with: call it in a child
/// between fork and exec (only async-signal-safe calls), or just before
/// tardy itself execs a command (`tardy exec`). Call [`prepare`] in the
/// parent first.
///
/// # Safety
/// Changes process-wide state (dispositions, mask, limits, descriptors'
/// close-on-exec flags): only for a process about to exec.
pub unsafe fn restore() {
    let Some(o) = ORIGINAL.get() else { return };
    // SAFETY: each call is async-signal-safe and takes valid arguments.
    unsafe {
        for s in 1..=64 {
            if s == libc::SIGKILL || s == libc::SIGSTOP {
                continue;
            }
            disposition(o, s);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &o.mask, std::ptr::null_mut());
        for (r, &res) in o.rlimits.iter().zip(RLIMITS.iter()) {
            let mut now = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(res, &mut now) == 0
                && (now.rlim_cur != r.rlim_cur || now.rlim_max != r.rlim_max)
            {
                libc::setrlimit(res, r);
            }
        }
        if let Some(n) = o.nice {
            *libc::__errno_location() = 0;
            let p = libc::getpriority(libc::PRIO_PROCESS, 0);
            if *libc::__errno_location() == 0 && p != n {
                libc::setpriority(libc::PRIO_PROCESS, 0, n);
            }
        }
        if let Some(set) = &o.affinity {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set);
        }
        libc::umask(o.umask);
        // Every descriptor above 2 close-on-exec, but those the user handed
        // tardy: the ranges between them (close_range, Linux 5.11), one by
        // one where the kernel lacks it.
        let keep = &o.fds[..o.nfds];
        let mut from = 3u32;
        for &fd in keep.iter().chain(std::iter::once(&libc::c_int::MAX)) {
            let to = if fd == libc::c_int::MAX {
                u32::MAX
            } else {
                fd as u32 - 1
            };
            if to >= from {
                cloexec_range(from, to);
            }
            if fd != libc::c_int::MAX {
                from = fd as u32 + 1;
            }
        }
        for &fd in keep {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                // A user's descriptor tardy marked close-on-exec for itself.
                libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            }
        }
    }
}

/// Mark descriptors `from..=to` close-on-exec.
unsafe fn cloexec_range(from: u32, to: u32) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with the CLOEXEC flag closes nothing now.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            from as libc::c_uint,
            to as libc::c_uint,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return;
    }
    // Older kernels: one by one, up to the descriptor limit.
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and fcntl take valid arguments.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        let top = (lim.rlim_cur.min(65536) as u32).min(to.saturating_add(1));
        for fd in from..top {
            let flags = libc::fcntl(fd as libc::c_int, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd as libc::c_int, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// The kernel's `struct sigaction` (x86-64 and aarch64 alike), for the two
/// signals glibc keeps to itself.
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Signal `s` ignored or default, as tardy found it. Async-signal-safe.
///
/// Signals 32 and 33 are glibc's own (thread cancellation, set*id across
/// threads): its `sigaction` refuses them, and a thread tardy starts makes
/// glibc catch 33, which an exec turns back to default. A user who started
/// tardy with them ignored gets them ignored again through the system call.
///
/// # Safety
/// As [`restore`].
unsafe fn disposition(o: &Original, s: libc::c_int) {
    if (32..=33).contains(&s) {
        if o.ignored & (1 << (s - 1)) != 0 {
            let a = KernelSigaction {
                handler: libc::SIG_IGN,
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            // SAFETY: rt_sigaction with a valid action and the kernel's
            // signal-set size (8 bytes).
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    s,
                    &a as *const KernelSigaction,
                    std::ptr::null_mut::<KernelSigaction>(),
                    8usize,
                );
            }
        }
        return;
    }
    // SAFETY: a zeroed sigaction is valid; sigaction takes valid pointers.
    unsafe {
        let mut a: libc::sigaction = std::mem::zeroed();
        a.sa_sigaction = if o.ignored & (1 << (s - 1)) != 0 {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        libc::sigemptyset(&mut a.sa_mask);
        libc::sigaction(s, &a, std::ptr::null_mut());
    }
}

/// Give these signals back their dispositions as the user left them, and
/// nothing else: for a child of a process that already has the user's state
/// but for these (tardy's spawner: Rust's runtime ignores SIGPIPE, the
/// spawner the terminal's signals). Async-signal-safe.
///
/// # Safety
/// As [`restore`].
pub unsafe fn restore_signals(signals: &[libc::c_int]) {
    let Some(o) = ORIGINAL.get() else { return };
    for &s in signals {
        if !(1..=64).contains(&s) {
            continue;
        }
        // SAFETY: sigaction with a valid action.
        unsafe { disposition(o, s) };
    }
}

/// A `std::process::Command` that starts with the user's state.
pub fn command(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    prepare();
    // SAFETY: `restore` only makes async-signal-safe calls.
    unsafe {
        cmd.pre_exec(|| {
            restore();
            Ok(())
        })
    }
}

/// Replace this process with `argv` under a timer slack of `slack_ns`
/// nanoseconds (Linux's per-thread rounding of timed sleeps, inherited
/// across exec), with the user's signals and descriptors; returns only on
/// failure.
#[cfg(target_os = "linux")]
pub fn exec_with_timer_slack(slack_ns: u64, argv: &[String]) -> String {
    use std::os::unix::process::CommandExt;
    let Some((program, args)) = argv.split_first() else {
        return "no command to run".into();
    };
    if slack_ns == 0 {
        return "--timer-slack must be at least 1 ns (0 would reset it to the default)".into();
    }
    // SAFETY: prctl with integer arguments changes only this thread's timer slack.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            slack_ns as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if rc != 0 {
        return format!(
            "prctl(PR_SET_TIMERSLACK) failed: {}",
            std::io::Error::last_os_error()
        );
    }
    let err = command(std::process::Command::new(program).args(args)).exec();
    format!("cannot run {program}: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_gets_default_sigpipe_and_no_stray_descriptors() {
        prepare();
        // The test harness ignores SIGPIPE (Rust's runtime): the child must not.
        let stray = std::fs::File::open("/proc/self/status").unwrap();
        use std::os::fd::AsRawFd;
        let fd = stray.as_raw_fd();
        // SAFETY: the child only makes async-signal-safe calls and _exits.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, 0);
            let pid = libc::fork();
            if pid == 0 {
                restore();
                let mut a: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut a);
                let pipe_default = a.sa_sigaction == libc::SIG_DFL;
                let cloexec = libc::fcntl(fd, libc::F_GETFD) & libc::FD_CLOEXEC != 0;
                libc::_exit(if pipe_default && cloexec { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        }
    }

    /// Read lazily (a library user's process, a test harness), the state
    /// keeps the descriptors a child would inherit and none another thread
    /// opened close-on-exec for its own use: handed on, such a pipe's write
    /// end stayed open in the spawner and its reader waited for ever.
    #[test]
    fn only_inheritable_descriptors_are_the_users() {
        let mut p = [0; 2];
        // SAFETY: pipe2 fills two fds; fcntl takes one of them.
        unsafe {
            assert_eq!(libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC), 0);
        }
        // SAFETY: a fresh fd, duplicated without close-on-exec.
        let open = unsafe { libc::fcntl(p[0], libc::F_DUPFD, 3) };
        let o = read(false);
        let kept = &o.fds[..o.nfds];
        assert!(kept.contains(&open), "{kept:?} lacks {open}");
        assert!(!kept.contains(&p[0]) && !kept.contains(&p[1]), "{kept:?}");
        // SAFETY: closing the fds opened above.
        unsafe {
            libc::close(open);
            libc::close(p[0]);
            libc::close(p[1]);
        }
    }
}
