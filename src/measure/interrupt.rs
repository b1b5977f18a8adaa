//! Graceful Ctrl-C: the first SIGINT or SIGTERM asks the measured command's
//! process group to stop (SIGINT) and tardy to finish up, keeping every run
//! already completed; a second one kills the group (SIGKILL); a third one
//! terminates tardy at once.
//!
//! The handler only touches atomics and calls async-signal-safe functions.
//! It is installed without `SA_RESTART`, so a blocking `wait4` or `poll`
//! returns `EINTR` and the measurement loop notices promptly.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    let n = SIGNALS.fetch_add(1, Ordering::SeqCst) + 1;
    let group = CHILD_GROUP.load(Ordering::SeqCst);
    // SAFETY: kill, signal and raise are async-signal-safe.
    unsafe {
        if group > 0 {
            libc::kill(-group, if n >= 2 { libc::SIGKILL } else { libc::SIGINT });
        }
        if n >= 3 {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// Install the handler for SIGINT and SIGTERM.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a valid handler and empty mask is valid.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0; // no SA_RESTART: blocking calls return EINTR
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// Whether tardy has been asked to stop.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// The process group of the command being measured (0: none).
pub fn set_child_group(pgid: i32) {
    CHILD_GROUP.store(pgid, Ordering::SeqCst);
}

/// Forward a stop request to `pgid` if one arrived before the group was known.
pub fn forward_to(pgid: i32) {
    let n = SIGNALS.load(Ordering::SeqCst);
    if n > 0 && pgid > 0 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, if n >= 2 { libc::SIGKILL } else { libc::SIGINT });
        }
    }
}

/// SIGKILL one process or thread. Never 0, -1 or init: `kill(-1)` would
/// end every process the user may signal, and a recorder's model can hold
/// a bogus id (a reaped task reads as -1 in perf records).
pub fn sigkill(pid: i32) {
    if pid > 1 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// SIGKILL a process group (never 0 or 1: this process's own group, or all).
pub fn sigkill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}
