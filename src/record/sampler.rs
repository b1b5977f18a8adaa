//! What the ptrace recorder's untraced waits were, without a stop per call:
//! a thread beside the tracer reads each live thread's
//! `/proc/<pid>/task/<tid>/syscall` every 10 ms (one small read, no stop;
//! "running" for a thread on a CPU) and tallies the syscalls it finds them
//! blocked in that the filter does not trace: reads and writes of pipes,
//! sockets and terminals, of files, and waits such as io_uring's. Each
//! thread's otherwise unexplained blocked time is then split by its tally.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Classes of an untraced wait, in [`crate::record::TaskRow::sampled`].
pub const EVENT: usize = 0;
pub const PIPE: usize = 1;
pub const DISK: usize = 2;
pub const UNKNOWN: usize = 3;
pub const NCLASS: usize = 4;

const PERIOD: Duration = Duration::from_millis(10);
const MAX_THREADS: usize = 10_000;

/// The sampling thread and what it has tallied.
pub struct Sampler {
    live: Arc<Mutex<Vec<(i32, i32)>>>,
    tallies: Arc<Mutex<HashMap<i32, [u32; NCLASS]>>>,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub fn start() -> Sampler {
        let live: Arc<Mutex<Vec<(i32, i32)>>> = Arc::default();
        let tallies: Arc<Mutex<HashMap<i32, [u32; NCLASS]>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (l, t, s) = (live.clone(), tallies.clone(), stop.clone());
        let handle = std::thread::Builder::new()
            .name("tardy-sampler".into())
            .spawn(move || {
                let mut now: Vec<(i32, i32)> = Vec::new();
                while !s.load(Ordering::Relaxed) {
                    std::thread::sleep(PERIOD);
                    now.clear();
                    if let Ok(v) = l.lock() {
                        now.extend_from_slice(&v);
                    }
                    for &(tgid, tid) in &now {
                        if let Some(c) = sample(tgid, tid)
                            && let Ok(mut t) = t.lock()
                            && (t.len() < MAX_THREADS || t.contains_key(&tid))
                        {
                            t.entry(tid).or_default()[c] += 1;
                        }
                    }
                }
            })
            .ok();
        Sampler {
            live,
            tallies,
            stop,
            handle,
        }
    }

    /// A thread to sample from now on.
    pub fn add(&self, tgid: i32, tid: i32) {
        if let Ok(mut v) = self.live.lock()
            && v.len() < MAX_THREADS
        {
            v.push((tgid, tid));
        }
    }

    /// A thread gone (or about to exit).
    pub fn remove(&self, tid: i32) {
        if let Ok(mut v) = self.live.lock() {
            v.retain(|&(_, t)| t != tid);
        }
    }

    /// Stop sampling; the tallies by thread.
    pub fn finish(mut self) -> HashMap<i32, [u32; NCLASS]> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.tallies
            .lock()
            .map(|mut t| std::mem::take(&mut *t))
            .unwrap_or_default()
    }
}

/// The class of what a thread is blocked in, when it is blocked in a
/// syscall the seccomp filter lets through.
fn sample(tgid: i32, tid: i32) -> Option<usize> {
    let (ptgid, ptid) = super::procfs::proc_task(tgid, tid);
    let text = std::fs::read_to_string(format!("/proc/{ptgid}/task/{ptid}/syscall")).ok()?;
    let mut f = text.split_whitespace();
    let first = f.next()?;
    // Not in a system call ("running", or -1 while the kernel works for the
    // thread): blocked all the same in uninterruptible sleep ('D') is the
    // disk, a page fault on a file most often. This, not the machine-wide
    // kernel.task_delayacct, is how block-I/O waits outside system calls
    // are seen.
    if first == "running" || first == "-1" {
        return (thread_state(ptgid, ptid) == Some(b'D')).then_some(DISK);
    }
    let nr: i64 = first.parse().ok()?;
    let arg0 = f
        .next()
        .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
    classify(nr, || arg0.map(|fd| fd_kind(ptid, fd)))
}

/// A thread's state letter ('R', 'S', 'D'...), from its stat line (ids
/// as /proc names them).
fn thread_state(tgid: i32, tid: i32) -> Option<u8> {
    let stat = std::fs::read(format!("/proc/{tgid}/task/{tid}/stat")).ok()?;
    let close = stat.iter().rposition(|&b| b == b')')?;
    stat.get(close + 2).copied()
}

/// What an fd is: a pipe or socket, a terminal, a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FdKind {
    Pipe,
    Tty,
    File,
}

fn fd_kind(tid: i32, fd: u64) -> FdKind {
    let link = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).unwrap_or_default();
    let s = link.to_string_lossy();
    if s.starts_with("pipe:") || s.starts_with("socket:") || s.starts_with("anon_inode:") {
        FdKind::Pipe
    } else if s.starts_with("/dev/pts") || s.starts_with("/dev/tty") {
        FdKind::Tty
    } else {
        FdKind::File
    }
}

fn classify(nr: i64, fd: impl FnOnce() -> Option<FdKind>) -> Option<usize> {
    use libc::*;
    let io = [
        SYS_read,
        SYS_readv,
        SYS_pread64,
        SYS_preadv,
        SYS_write,
        SYS_writev,
        SYS_pwrite64,
        SYS_recvfrom,
        SYS_recvmsg,
        SYS_sendto,
        SYS_sendmsg,
    ];
    let waits = [
        SYS_io_uring_enter,
        SYS_rt_sigsuspend,
        SYS_rt_sigtimedwait,
        SYS_accept4,
        SYS_connect,
        SYS_io_getevents,
    ];
    let files = [
        SYS_openat,
        SYS_newfstatat,
        SYS_statx,
        SYS_getdents64,
        SYS_fstatfs,
    ];
    if io.contains(&nr) {
        return Some(match fd() {
            Some(FdKind::Pipe) => PIPE,
            Some(FdKind::Tty) => EVENT,
            Some(FdKind::File) => DISK,
            None => UNKNOWN,
        });
    }
    if waits.contains(&nr) {
        return Some(EVENT);
    }
    if files.contains(&nr) {
        return Some(DISK);
    }
    // "running", a traced syscall (already timed), or something else.
    (nr >= 0 && !crate::record::arch::TRACED.contains(&nr) && nr != crate::record::arch::SYS_FUTEX)
        .then_some(UNKNOWN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untraced_waits_are_classed_by_what_they_wait_on() {
        assert_eq!(classify(libc::SYS_read, || Some(FdKind::Pipe)), Some(PIPE));
        assert_eq!(classify(libc::SYS_read, || Some(FdKind::File)), Some(DISK));
        assert_eq!(classify(libc::SYS_read, || Some(FdKind::Tty)), Some(EVENT));
        assert_eq!(classify(libc::SYS_io_uring_enter, || None), Some(EVENT));
        // Timed by the tracer already: not sampled.
        assert_eq!(classify(libc::SYS_nanosleep, || None), None);
        assert_eq!(classify(libc::SYS_futex, || None), None);
        assert_eq!(classify(-1, || None), None);
    }

    #[test]
    fn a_thread_blocked_on_a_pipe_is_sampled_as_such() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let s = Sampler::start();
        s.add(pid, pid);
        std::thread::sleep(Duration::from_millis(300));
        let t = s.finish();
        let _ = child.kill();
        let _ = child.wait();
        let counts = t.get(&pid).copied().unwrap_or_default();
        assert!(counts[PIPE] > 0, "{counts:?}");
    }
}
