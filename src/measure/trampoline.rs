//! A small process between tardy and the command it times, so that the
//! command's max RSS is its own.
//!
//! Linux keeps a process's peak RSS across `exec`: the peak of the memory it
//! had before is carried into `ru_maxrss`. A command spawned straight from
//! tardy (posix_spawn shares tardy's memory until the exec) therefore
//! reported tardy's own peak: `true` read 7.2 MiB where `/usr/bin/time`
//! says 1.0 MiB. hyperfine and GNU time fork from small processes; tardy
//! cannot be small, so it starts itself in this mode instead
//! (`tardy __trampoline FD PROGRAM ARG0 ARGS...`), before any of its own
//! work: the trampoline forks the command from a few hundred KiB of memory,
//! times it from fork to `wait4`, and writes the command's status and
//! rusage to FD (a pipe to tardy) as one [`Record`].
//!
//! The trampoline ignores the terminal's signals (they reach the command
//! through its process group; the command gets them as usual, its
//! dispositions reset before the exec) and exits with the command's code.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

/// The first argument that starts tardy as a trampoline.
pub const ARG: &str = "__trampoline";

const MAGIC: u64 = 0x7472_616d_706f_6c69;
const RESULT: u64 = 1;
const EXEC_FAILED: u64 = 2;
const CHILD_START: u64 = 3;
/// The command's counts: instructions, cycles (`u64::MAX` when not counted).
const COUNTS: u64 = 4;
/// The counters could not be opened (errno in the last word): nothing ran.
const COUNT_FAILED: u64 = 5;
const WORDS: usize = 10;

/// What the trampoline tells tardy about one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Record {
    /// The command's wait status (as `wait4` gives it).
    pub status: i32,
    /// From the command's first instruction after the fork (before its
    /// exec) to `wait4`'s return: the fork itself, which copies the
    /// trampoline's page tables, is not the command's time (a vfork, as
    /// tardy's and hyperfine's own spawns are, costs next to nothing).
    pub wall_ns: u64,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub max_rss_kib: u64,
    pub voluntary_cs: u64,
    pub involuntary_cs: u64,
    /// The PMU's counts of the command's process tree, when asked.
    pub instructions: Option<u64>,
    pub cycles: Option<u64>,
}

/// What a read of the pipe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Ran(Record),
    /// The command could not be executed (errno).
    ExecFailed(i32),
    /// The counters could not be opened (errno); the command did not run.
    CountFailed(i32),
    /// Nothing (the trampoline was killed, say by a timeout).
    Nothing,
}

/// Parse what the trampoline (and, on a failed exec, its child) wrote.
pub fn parse(bytes: &[u8]) -> Report {
    let mut exec_failed = None;
    let mut count_failed = None;
    let mut counts = None;
    let mut ran = None;
    let mut child_start = None;
    let mut end = None;
    for chunk in bytes.chunks_exact(WORDS * 8) {
        let w: Vec<u64> = chunk
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .collect();
        if w[0] != MAGIC {
            continue;
        }
        match w[1] {
            EXEC_FAILED => exec_failed = Some(w[9] as i32),
            CHILD_START => child_start = Some(w[2]),
            COUNT_FAILED => count_failed = Some(w[9] as i32),
            COUNTS => counts = Some((w[2], w[3])),
            RESULT => {
                end = Some(w[9]);
                ran = Some(Record {
                    status: w[2] as i32,
                    wall_ns: w[3],
                    user_ns: w[4],
                    sys_ns: w[5],
                    max_rss_kib: w[6],
                    voluntary_cs: w[7],
                    involuntary_cs: w[8],
                    instructions: None,
                    cycles: None,
                })
            }
            _ => {}
        }
    }
    if let Some(e) = count_failed {
        return Report::CountFailed(e);
    }
    match (exec_failed, ran) {
        (Some(e), _) => Report::ExecFailed(e),
        (None, Some(mut r)) => {
            if let Some((i, c)) = counts {
                r.instructions = (i != u64::MAX).then_some(i);
                r.cycles = (c != u64::MAX).then_some(c);
            }
            if let (Some(s), Some(e)) = (child_start, end)
                && e > s
            {
                r.wall_ns = e - s;
            }
            Report::Ran(r)
        }
        (None, None) => Report::Nothing,
    }
}

fn encode(words: [u64; WORDS]) -> [u8; WORDS * 8] {
    let mut out = [0u8; WORDS * 8];
    for (i, w) in words.iter().enumerate() {
        out[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// CLOCK_MONOTONIC in nanoseconds (async-signal-safe: no allocation).
pub(super) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is valid for writing.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// When this process was started as a trampoline: run the command and
/// return the exit code to end with. `None` otherwise (tardy goes on).
pub fn run_if_asked() -> Option<i32> {
    let mut args = std::env::args_os();
    args.next()?;
    if args.next()?.as_bytes() != ARG.as_bytes() {
        return None;
    }
    Some(trampoline(args.collect()))
}

fn trampoline(args: Vec<OsString>) -> i32 {
    let Some(fd) = args
        .first()
        .and_then(|a| a.to_str())
        .and_then(|a| a.parse::<libc::c_int>().ok())
    else {
        return 125;
    };
    // `--count=FLAGS` after the descriptor: count on the PMU (counters::pmu).
    let mut args = args;
    let count = args
        .get(1)
        .and_then(|a| a.to_str())
        .and_then(crate::measure::counters::pmu::PmuSpec::from_arg);
    if count.is_some() {
        args.remove(1);
    }
    if args.len() < 3 {
        return 125;
    }
    let cstr = |a: &OsString| CString::new(a.as_bytes()).ok();
    let Some(program) = cstr(&args[1]) else {
        return 125;
    };
    let Some(argv) = args[2..].iter().map(cstr).collect::<Option<Vec<_>>>() else {
        return 125;
    };
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    super::inherit::prepare();
    const TERMINAL: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGQUIT, libc::SIGHUP];
    // SAFETY: fcntl and signal on our own fd and process; the child only
    // calls async-signal-safe functions between fork and exec (this process
    // has one thread).
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        for s in TERMINAL {
            libc::signal(s, libc::SIG_IGN);
        }
        let counters = match count.map(crate::measure::counters::pmu::Open::new) {
            None => None,
            Some(Ok(c)) => Some(c),
            Some(Err(errno)) => {
                let rec = encode([MAGIC, COUNT_FAILED, 0, 0, 0, 0, 0, 0, 0, errno as u64]);
                libc::write(fd, rec.as_ptr().cast(), rec.len());
                return 125;
            }
        };
        if let Some(c) = &counters {
            c.enable();
        }
        let start = now_ns();
        let pid = libc::fork();
        if pid == 0 {
            let rec = encode([MAGIC, CHILD_START, now_ns(), 0, 0, 0, 0, 0, 0, 0]);
            libc::write(fd, rec.as_ptr().cast(), rec.len());
            // The user's state (tardy started this trampoline with it), less
            // the report pipe.
            super::inherit::restore();
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::execvp(program.as_ptr(), argv_ptrs.as_ptr());
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            let rec = encode([MAGIC, EXEC_FAILED, 0, 0, 0, 0, 0, 0, 0, errno as u64]);
            libc::write(fd, rec.as_ptr().cast(), rec.len());
            libc::_exit(127);
        }
        if pid < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            let rec = encode([MAGIC, EXEC_FAILED, 0, 0, 0, 0, 0, 0, 0, errno as u64]);
            libc::write(fd, rec.as_ptr().cast(), rec.len());
            return 126;
        }
        let mut status: libc::c_int = 0;
        let mut ru: libc::rusage = std::mem::zeroed();
        loop {
            let rc = libc::wait4(pid, &mut status, 0, &mut ru);
            if rc == pid {
                break;
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return 126;
            }
        }
        let end = now_ns();
        if let Some(c) = &counters {
            c.disable();
            let [i, cy] = c.read();
            let rec = encode([MAGIC, COUNTS, i, cy, 0, 0, 0, 0, 0, 0]);
            libc::write(fd, rec.as_ptr().cast(), rec.len());
        }
        let wall = end.saturating_sub(start);
        let rec = encode([
            MAGIC,
            RESULT,
            status as u32 as u64,
            wall,
            super::trampoline::timeval_ns(ru.ru_utime),
            super::trampoline::timeval_ns(ru.ru_stime),
            ru.ru_maxrss.max(0) as u64,
            ru.ru_nvcsw.max(0) as u64,
            ru.ru_nivcsw.max(0) as u64,
            end,
        ]);
        libc::write(fd, rec.as_ptr().cast(), rec.len());
        if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            128 + libc::WTERMSIG(status)
        }
    }
}

/// A `timeval` (rusage's times) in nanoseconds.
pub(super) fn timeval_ns(tv: libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_an_exec_failure_wins() {
        let ran = encode([MAGIC, RESULT, 256, 5, 6, 7, 1024, 1, 2, 0]);
        // With the child's start, the wall runs from it to the end.
        let mut timed = encode([MAGIC, CHILD_START, 100, 0, 0, 0, 0, 0, 0, 0]).to_vec();
        timed.extend_from_slice(&encode([MAGIC, RESULT, 0, 999, 6, 7, 1024, 1, 2, 130]));
        let Report::Ran(t) = parse(&timed) else {
            panic!()
        };
        assert_eq!(t.wall_ns, 30);
        let Report::Ran(r) = parse(&ran) else {
            panic!()
        };
        assert_eq!((r.status, r.wall_ns, r.max_rss_kib), (256, 5, 1024));
        let mut both = encode([MAGIC, EXEC_FAILED, 0, 0, 0, 0, 0, 0, 0, 2]).to_vec();
        both.extend_from_slice(&ran);
        assert_eq!(parse(&both), Report::ExecFailed(2));
        assert_eq!(parse(b"junk"), Report::Nothing);
        // Counts ride beside the result; a refused counter wins over all.
        let mut counted = encode([MAGIC, COUNTS, 1000, u64::MAX, 0, 0, 0, 0, 0, 0]).to_vec();
        counted.extend_from_slice(&ran);
        let Report::Ran(c) = parse(&counted) else {
            panic!()
        };
        assert_eq!((c.instructions, c.cycles), (Some(1000), None));
        let mut refused = encode([MAGIC, COUNT_FAILED, 0, 0, 0, 0, 0, 0, 0, 2]).to_vec();
        refused.extend_from_slice(&ran);
        assert_eq!(parse(&refused), Report::CountFailed(2));
    }
}
