//! Reading what the kernel keeps about a traced thread: `/proc/<pid>/task/<tid>/
//! schedstat` (time on a CPU and time runnable but waiting for one) and `stat`
//! (user/system ticks, page faults, block-I/O delay), read when the thread
//! exits. These run on the tracer's event path, so they format paths into a
//! stack buffer and read with raw syscalls: no allocation.

/// Whether /proc names tasks in another PID namespace than tardy's own:
/// tardy runs in a PID namespace whose /proc was not mounted again
/// (`unshare -p -f tardy ...` without `--mount-proc`), so `/proc/N` is some
/// other process than tardy's N. Then every read goes through [`proc_pid`]
/// and [`proc_task`]; otherwise they cost nothing.
pub fn foreign() -> bool {
    static FOREIGN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOREIGN.get_or_init(|| {
        let own = std::process::id() as i32;
        std::fs::read_link("/proc/self")
            .ok()
            .and_then(|p| p.to_str()?.parse::<i32>().ok())
            .is_some_and(|p| p != own)
    })
}

/// tardy's task ids -> /proc's, learnt once each (foreign /proc only).
static PROC_IDS: std::sync::Mutex<Option<std::collections::HashMap<i32, i32>>> =
    std::sync::Mutex::new(None);

fn cached(id: i32) -> Option<i32> {
    PROC_IDS.lock().ok()?.as_ref()?.get(&id).copied()
}

fn remember(id: i32, proc_id: i32) {
    if let Ok(mut m) = PROC_IDS.lock() {
        let m = m.get_or_insert_with(Default::default);
        if m.len() >= 100_000 {
            m.clear();
        }
        m.insert(id, proc_id);
    }
}

/// Forget task `id` (it is gone; its number may be used again).
pub fn forget(id: i32) {
    if foreign()
        && let Ok(mut m) = PROC_IDS.lock()
        && let Some(m) = m.as_mut()
    {
        m.remove(&id);
    }
}

/// /proc's number for process `pid` (tardy's number for it): the `Pid:`
/// line of a pidfd's fdinfo is in /proc's namespace. `pid` itself when
/// /proc is tardy's own (or the process is gone).
pub fn proc_pid(pid: i32) -> i32 {
    if !foreign() || pid <= 0 {
        return pid;
    }
    if let Some(p) = cached(pid) {
        return p;
    }
    // SAFETY: pidfd_open takes a pid and flags; a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
    if fd < 0 {
        return pid;
    }
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")).unwrap_or_default();
    // SAFETY: closing the fd opened above.
    unsafe { libc::close(fd) };
    match info
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))
        .and_then(|v| v.trim().parse::<i32>().ok())
        .filter(|&p| p > 0)
    {
        Some(p) => {
            remember(pid, p);
            p
        }
        None => pid,
    }
}

/// /proc's numbers for thread `tid` of process `tgid`: the thread of the
/// process whose last `NSpid` (its number in the innermost namespace,
/// tardy's) is `tid`.
pub fn proc_task(tgid: i32, tid: i32) -> (i32, i32) {
    if !foreign() {
        return (tgid, tid);
    }
    let host_tgid = proc_pid(tgid);
    if tid == tgid {
        return (host_tgid, host_tgid);
    }
    if let Some(t) = cached(tid) {
        return (host_tgid, t);
    }
    let found = std::fs::read_dir(format!("/proc/{host_tgid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .take(100_000)
        .find_map(|e| {
            let host: i32 = e.file_name().to_str()?.parse().ok()?;
            let status = std::fs::read_to_string(e.path().join("status")).ok()?;
            let inner: i32 = status
                .lines()
                .find_map(|l| l.strip_prefix("NSpid:"))?
                .split_whitespace()
                .last()?
                .parse()
                .ok()?;
            (inner == tid).then_some(host)
        });
    match found {
        Some(h) => {
            remember(tid, h);
            (host_tgid, h)
        }
        None => (host_tgid, tid),
    }
}

/// A path built on the stack.
struct StackPath {
    buf: [u8; 96],
    len: usize,
}

impl StackPath {
    fn new() -> StackPath {
        StackPath {
            buf: [0; 96],
            len: 0,
        }
    }
    fn push(&mut self, s: &[u8]) -> &mut Self {
        for &b in s {
            if self.len < self.buf.len() - 1 {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
        self
    }
    fn num(&mut self, mut n: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let len = self.len;
        for (k, &d) in digits[i..].iter().enumerate() {
            if len + k < self.buf.len() - 1 {
                self.buf[len + k] = d;
                self.len += 1;
            }
        }
        self
    }
    /// NUL-terminated.
    fn as_ptr(&mut self) -> *const libc::c_char {
        self.buf[self.len] = 0;
        self.buf.as_ptr() as *const libc::c_char
    }
}

/// Read up to `buf.len()` bytes of a file; the byte count, 0 on failure.
fn read_into(path: &mut StackPath, buf: &mut [u8]) -> usize {
    // SAFETY: a NUL-terminated path; read into a live buffer of its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return 0;
        }
        let n = libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
        libc::close(fd);
        n.max(0) as usize
    }
}

fn task_path(tgid: i32, tid: i32, file: &[u8]) -> StackPath {
    let (tgid, tid) = proc_task(tgid, tid);
    let mut p = StackPath::new();
    p.push(b"/proc/")
        .num(tgid as u64)
        .push(b"/task/")
        .num(tid as u64)
        .push(b"/")
        .push(file);
    p
}

/// What the kernel counted for one thread.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadStats {
    /// Time on a CPU (schedstat), ns.
    pub cpu_ns: u64,
    /// Time runnable but waiting for a CPU (schedstat), ns.
    pub run_delay_ns: u64,
    pub utime_ticks: u64,
    pub stime_ticks: u64,
    pub minflt: u64,
    pub majflt: u64,
    /// Block-I/O delay (delay accounting), ticks; 0 when it is off.
    pub blkio_ticks: u64,
}

fn parse_u64(s: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &b in s {
        if !b.is_ascii_digit() {
            break;
        }
        v = v.saturating_mul(10).saturating_add((b - b'0') as u64);
    }
    v
}

/// Read a thread's schedstat and stat; zeros for what cannot be read.
pub fn thread_stats(tgid: i32, tid: i32) -> ThreadStats {
    let mut out = ThreadStats::default();
    let mut buf = [0u8; 1024];
    let n = read_into(&mut task_path(tgid, tid, b"schedstat"), &mut buf);
    let mut fields = buf[..n].split(|&b| b == b' ' || b == b'\n');
    out.cpu_ns = fields.next().map(parse_u64).unwrap_or(0);
    out.run_delay_ns = fields.next().map(parse_u64).unwrap_or(0);
    let n = read_into(&mut task_path(tgid, tid, b"stat"), &mut buf);
    if let Some(close) = buf[..n].iter().rposition(|&b| b == b')') {
        // Fields after "comm)" start at field 3 (state).
        let rest = &buf[close + 1..n];
        for (i, f) in rest
            .split(|&b| b == b' ')
            .filter(|f| !f.is_empty())
            .enumerate()
        {
            match i + 3 {
                10 => out.minflt = parse_u64(f),
                12 => out.majflt = parse_u64(f),
                14 => out.utime_ticks = parse_u64(f),
                15 => out.stime_ticks = parse_u64(f),
                42 => {
                    out.blkio_ticks = parse_u64(f);
                    break;
                }
                _ => {}
            }
        }
    }
    out
}

/// Clock ticks per second for `stat`'s tick fields.
pub fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// A process's command line, arguments joined by spaces, at most `max` bytes
/// (read once per exec, not per event).
pub fn cmdline(pid: i32, max: usize) -> String {
    let raw = std::fs::read(format!("/proc/{}/cmdline", proc_pid(pid))).unwrap_or_default();
    let mut s = String::new();
    for arg in raw.split(|&b| b == 0).filter(|a| !a.is_empty()) {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&String::from_utf8_lossy(arg));
        if s.len() > max {
            let mut cut = max;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push('…');
            break;
        }
    }
    s
}

/// A process's pid in each PID namespace it is in, outermost first (the
/// `NSpid` line of its status); empty when it cannot be read.
pub fn nspids(pid: i32) -> Vec<i32> {
    std::fs::read_to_string(format!("/proc/{}/status", proc_pid(pid)))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("NSpid:")).map(|v| {
                v.split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect()
            })
        })
        .unwrap_or_default()
}

/// The entry point of the program a process runs (AT_ENTRY from its auxv).
pub fn entry_point(pid: i32) -> Option<u64> {
    let raw = std::fs::read(format!("/proc/{}/auxv", proc_pid(pid))).ok()?;
    const AT_ENTRY: u64 = 9;
    raw.chunks_exact(16).find_map(|c| {
        let key = u64::from_ne_bytes(c[..8].try_into().ok()?);
        let val = u64::from_ne_bytes(c[8..].try_into().ok()?);
        (key == AT_ENTRY).then_some(val)
    })
}

/// The size of the file a process executes, resolving a relative path
/// against its working directory.
pub fn exe_size(pid: i32, path: &str) -> Option<u64> {
    let full = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/proc/{}/cwd/{path}", proc_pid(pid))
    };
    std::fs::metadata(full).ok().map(|m| m.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_thread() {
        let pid = std::process::id() as i32;
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::syscall(libc::SYS_gettid) } as i32;
        // Spin until the kernel's tick accounting sees some CPU time (it
        // counts in ticks of 10 ms or so; an optimised build finishes a
        // fixed loop before the first tick).
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut s = thread_stats(pid, tid);
        while s.cpu_ns == 0 && start.elapsed() < std::time::Duration::from_secs(10) {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_add(i * i));
            }
            s = thread_stats(pid, tid);
        }
        assert!(s.cpu_ns > 0, "{s:?} {x}");
        assert!(!cmdline(pid, 100).is_empty());
        assert!(entry_point(pid).is_some());
    }

    #[test]
    fn stack_paths_format_numbers() {
        let mut p = task_path(12, 3405, b"stat");
        assert_eq!(&p.buf[..p.len], b"/proc/12/task/3405/stat");
        let _ = p.as_ptr();
        let mut q = StackPath::new();
        q.num(0);
        assert_eq!(&q.buf[..q.len], b"0");
    }
}
