//! Closing the session's perf events off tardy's critical path.
//!
//! The last close of a tracepoint's perf events waits for an RCU grace
//! period under the kernel's event mutex (`tracepoint_synchronize_unregister`):
//! about 36 ms each on a 2-core VM, one after another, so a session's dozen
//! tracepoints took 0.5-0.6 s to close whatever the command (a 3-run
//! explain of `true` took seconds on 16 CPUs). Closing them in threads does
//! not help (the mutex serialises them). So, once the events are disabled
//! (nothing more is written) and the rings unmapped, a small child of tardy
//! holds the descriptors and closes them while tardy goes on (or exits).
//! It closes every other descriptor first (a pipe reading tardy's output
//! ends with tardy), leaves the terminal's process group, waits until
//! tardy has dropped its own copies (else the two race, and whichever
//! closes second pays the grace periods: tardy, half the time), and exits
//! when the last close returns.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Close `fds` in a detached child (synchronously when it cannot be made);
/// then remove directory `rmdir`, if given and still there.
pub fn close_detached(fds: Vec<OwnedFd>, rmdir: Option<std::ffi::CString>) {
    if fds.is_empty() {
        if let Some(d) = &rmdir {
            // SAFETY: a NUL-terminated path.
            unsafe { libc::rmdir(d.as_ptr()) };
        }
        return;
    }
    // The handshake: the child reads this pipe to its end, which comes when
    // tardy has closed its copies and the pipe's writing end (or exited).
    let mut pipe: [RawFd; 2] = [-1, -1];
    // SAFETY: pipe2 writes two descriptors into the array.
    let piped = unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
    let mut keep: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    if piped {
        keep.push(pipe[0]);
    }
    keep.sort_unstable();
    keep.dedup();
    // SAFETY: the child makes only async-signal-safe calls (setsid,
    // close_range, close, rmdir, _exit) on data prepared before the fork.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        unsafe {
            libc::setsid();
            let mut next: RawFd = 0;
            for &fd in &keep {
                if fd > next {
                    close_range(next as u32, (fd - 1) as u32);
                }
                next = fd + 1;
            }
            close_range(next as u32, u32::MAX);
            if piped {
                let mut byte = 0u8;
                while libc::read(pipe[0], (&raw mut byte).cast(), 1) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
            }
            for &fd in &keep {
                libc::close(fd);
            }
            if let Some(d) = &rmdir {
                libc::rmdir(d.as_ptr());
            }
            libc::_exit(0);
        }
    }
    if pid > 0 {
        crate::measure::stragglers::own_helper(pid);
    }
    // The parent's copies: not the last references when the child holds
    // them (cheap), the real close when no child could be made.
    drop(fds);
    if piped {
        // SAFETY: the two ends this call made; closing the writing end is
        // the child's signal to start.
        unsafe {
            libc::close(pipe[0]);
            libc::close(pipe[1]);
        }
    }
    if pid < 0
        && let Some(d) = &rmdir
    {
        // SAFETY: a NUL-terminated path.
        unsafe { libc::rmdir(d.as_ptr()) };
    }
}

/// close_range(2) (Linux 5.9); one close at a time where it is missing.
unsafe fn close_range(first: u32, last: u32) {
    // SAFETY: closing descriptors of this (forked) process only.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if rc != 0 {
        let hi = last.min(65_535);
        for fd in first..=hi {
            // SAFETY: as above.
            unsafe { libc::close(fd as RawFd) };
        }
    }
}
