//! A small process that starts the measured commands, started once per
//! session.
//!
//! Two things make starting a command from tardy itself wrong or slow. Linux
//! folds a process's memory before `exec` into its `ru_maxrss` (the old
//! memory's high-water mark is kept at exec), so a command forked or
//! `posix_spawn`ed from tardy (7 MiB and more once at work; a vfork shares
//! all of it) reports tardy's peak as its own. Execing tardy again as a
//! trampoline for every run ([`super::trampoline`]) fixed that, at the price
//! of loading a 21 MB binary per run: 1.4 ms, three times hyperfine's whole
//! cost for `true`.
//!
//! So tardy execs itself once, as this server (`tardy __spawner FD`, before
//! any of its own work: a few hundred KiB of memory of its own), the first
//! time a session runs a command. It waits on a socket; for each request
//! (program, argv, environment, directory, the three standard descriptors
//! passed with `SCM_RIGHTS`, the PMU's counters when asked) it forks the
//! command from its small self (a fork copies only its own few anonymous
//! pages, which are all a command's `ru_maxrss` can inherit), reports the
//! command's pid, waits for it with `wait4` and reports the status, its
//! rusage and its wall time from the child's first instruction to the end of
//! `wait4`. The command is in a process group of its own; tardy times out,
//! interrupts and sweeps it by that group as before. Between the fork and
//! the exec the child gets the user's process state back
//! ([`super::inherit`]): tardy starts the server with it, the server's own
//! constructor captures it again.
//!
//! The server ignores the terminal's signals (Ctrl-C reaches the command
//! through its own group and tardy through its handler) and ends when its
//! socket closes: when tardy exits, however it ends. Runs at the same moment
//! (bisect's `--jobs`) each take a server of their own from a small pool. Where it
//! cannot be started (`TARDY_NO_SPAWNER`), runs go through the trampoline.
//!
//! Where build.rs could build it (x86_64 and aarch64 Linux), the server for
//! runs that count no PMU events is smaller still: `helper/spawner.rs`, a
//! static program of 8 KiB without libc or std, carried in tardy's binary
//! and executed from a memfd. It speaks the same protocol and starts each
//! command with a vfork (the child borrows its few pages until it execs), so
//! a run costs a vfork, an exec and two socket messages, as hyperfine's
//! does. Runs that count instructions go to tardy's binary, which opens the
//! counters; `TARDY_NO_SMALL_SPAWNER` sends every run there.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

const MAGIC: u32 = 0x7461_7264;
/// Server -> tardy messages (one word of kind, then its data).
const STARTED: u64 = 1;
const EXEC_FAILED: u64 = 2;
const COUNT_FAILED: u64 = 3;
const DONE: u64 = 4;
/// The largest request (program, arguments, environment, directory): one
/// datagram of a local socket (larger ones run through the trampoline).
const MAX_REQUEST: usize = 128 * 1024;
/// The signals the spawner changes from the user's state: Rust's runtime
/// ignores SIGPIPE, the spawner the terminal's signals. Its children give
/// them back before they exec; the rest of the state is the user's already
/// (tardy started the spawner with it).
const CHANGED: [libc::c_int; 5] = [
    libc::SIGPIPE,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGQUIT,
    libc::SIGHUP,
];

/// What the server said about one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    Started(libc::pid_t),
    ExecFailed(i32),
    CountFailed(i32),
    Done(super::trampoline::Record),
}

struct Server {
    sock: OwnedFd,
    /// The small static spawner (helper/spawner.rs), not tardy's binary.
    small: bool,
    /// The page the small spawner writes the running command's pid into.
    slot: Option<Slot>,
}

/// One shared page (a memfd mapped here and in the small spawner) whose
/// first word is the running command's pid, 0 before it has started.
struct Slot {
    at: std::ptr::NonNull<libc::c_void>,
}

// SAFETY: the page is only read and written through an AtomicI32.
unsafe impl Send for Slot {}

impl Slot {
    /// A fresh page and the descriptor to hand the spawner.
    fn new() -> Option<(Slot, OwnedFd)> {
        // SAFETY: a NUL-terminated name; the fd is owned below.
        let fd = unsafe { libc::memfd_create(c"tardy-spawner-pid".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        // SAFETY: fresh descriptor, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sizing and mapping a descriptor we own; the mapping is
        // unmapped in Drop.
        let at = unsafe {
            if libc::ftruncate(fd.as_raw_fd(), 4096) != 0 {
                return None;
            }
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return None;
        }
        Some((
            Slot {
                at: std::ptr::NonNull::new(at)?,
            },
            fd,
        ))
    }

    fn word(&self) -> &std::sync::atomic::AtomicI32 {
        // SAFETY: the mapping is live, page-aligned and shared only through
        // atomics.
        unsafe { std::sync::atomic::AtomicI32::from_ptr(self.at.as_ptr().cast()) }
    }

    fn clear(&self) {
        self.word().store(0, std::sync::atomic::Ordering::Release);
    }

    fn pid(&self) -> Option<libc::pid_t> {
        let p = self.word().load(std::sync::atomic::Ordering::Acquire);
        (p > 0).then_some(p)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        // SAFETY: our own mapping of one page.
        unsafe { libc::munmap(self.at.as_ptr(), 4096) };
    }
}

/// The small spawner's bytes, built by build.rs for this target.
#[cfg(tardy_helper)]
static HELPER: &[u8] = include_bytes!(env!("TARDY_HELPER_PATH"));
#[cfg(not(tardy_helper))]
static HELPER: &[u8] = &[];

/// Set when the small spawner could not be started (no memfd, a noexec
/// policy): runs go through tardy's own binary.
static SMALL_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The memfd that holds the small spawner, written once.
static HELPER_FD: std::sync::OnceLock<Option<OwnedFd>> = std::sync::OnceLock::new();

/// Idle servers. A run takes one (starting one when none is idle: runs at
/// the same moment, as bisect's `--jobs`, each need their own) and gives it
/// back.
static IDLE: Mutex<Vec<Server>> = Mutex::new(Vec::new());
/// Every server's pid (children of tardy that are no stragglers).
static PIDS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
/// Set when a server could not be started: runs use the trampoline.
static FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `pid` is one of tardy's spawners.
pub fn is_spawner(pid: libc::pid_t) -> bool {
    PIDS.lock().is_ok_and(|p| p.contains(&pid))
}

/// Whether runs may go through a server (not with `TARDY_NO_SPAWNER`,
/// nor `TARDY_NO_TRAMPOLINE`, which asks for direct spawns).
fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        cfg!(target_os = "linux")
            && std::env::var_os("TARDY_NO_SPAWNER").is_none()
            && std::env::var_os("TARDY_NO_TRAMPOLINE").is_none()
    })
}

/// The first argument that starts tardy as the spawner.
pub const ARG: &str = "__spawner";

/// When this process was started as the spawner: serve, then exit. Returns
/// otherwise (tardy goes on).
pub fn run_if_asked() {
    use std::os::unix::ffi::OsStrExt;
    let mut args = std::env::args_os();
    args.next();
    if args.next().is_none_or(|a| a.as_bytes() != ARG.as_bytes()) {
        return;
    }
    let Some(fd) = args
        .next()
        .and_then(|a| a.to_str().and_then(|a| a.parse::<libc::c_int>().ok()))
    else {
        std::process::exit(125);
    };
    super::inherit::prepare();
    serve(fd);
}

/// The small spawner as an executable memfd (close-on-exec; a child execs
/// it by its /proc path). None where there is none or it cannot be made.
fn helper_fd() -> Option<RawFd> {
    HELPER_FD
        .get_or_init(|| {
            if HELPER.is_empty() || std::env::var_os("TARDY_NO_SMALL_SPAWNER").is_some() {
                return None;
            }
            // SAFETY: a NUL-terminated name; the fd is owned below.
            let fd = unsafe { libc::memfd_create(c"tardy-spawner".as_ptr(), libc::MFD_CLOEXEC) };
            if fd < 0 {
                return None;
            }
            // SAFETY: fresh descriptor, owned here.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let mut f = std::fs::File::from(fd);
            std::io::Write::write_all(&mut f, HELPER).ok()?;
            Some(OwnedFd::from(f))
        })
        .as_ref()
        .map(|f| f.as_raw_fd())
}

/// Start a server: the small one when `small`, tardy's binary otherwise.
/// None when it cannot be.
fn start(small: bool) -> Option<Server> {
    use std::os::unix::process::CommandExt;
    let (program, arg0) = if small {
        let fd = helper_fd()?;
        (
            std::path::PathBuf::from(format!("/proc/self/fd/{fd}")),
            std::ffi::OsString::from("tardy-spawner"),
        )
    } else {
        let me = std::env::current_exe().ok()?;
        (me.clone(), me.into_os_string())
    };
    super::inherit::prepare();
    let page = if small { Slot::new() } else { None };
    let mut sv = [0 as libc::c_int; 2];
    // SAFETY: socketpair fills two fds, both close-on-exec.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            sv.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: fresh descriptors, owned here.
    let (mine, theirs) = unsafe { (OwnedFd::from_raw_fd(sv[0]), OwnedFd::from_raw_fd(sv[1])) };
    let their_fd = theirs.as_raw_fd();
    let mut cmd = std::process::Command::new(program);
    cmd.arg0(arg0);
    if !small {
        cmd.arg(ARG);
    }
    cmd.arg(their_fd.to_string())
        .stdin(std::process::Stdio::null());
    let page_fd = page.as_ref().map_or(-1, |(_, fd)| fd.as_raw_fd());
    if page_fd >= 0 {
        cmd.arg(page_fd.to_string());
    }
    // SAFETY: restore and fcntl are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            // The server starts with the user's state (its constructor
            // captures it for the commands), and its end of the socket.
            super::inherit::restore();
            libc::fcntl(their_fd, libc::F_SETFD, 0);
            if page_fd >= 0 {
                libc::fcntl(page_fd, libc::F_SETFD, 0);
            }
            Ok(())
        });
    }
    let child = cmd.spawn().ok()?;
    drop(theirs);
    if let Ok(mut p) = PIDS.lock() {
        p.push(child.id() as libc::pid_t);
    }
    // The server outlives this handle: it ends when tardy closes the
    // socket or exits.
    std::mem::forget(child);
    Some(Server {
        sock: mine,
        small,
        slot: page.map(|(slot, _)| slot),
    })
}

/// An idle server, started if none is: the small one unless the run
/// counts on the PMU (only tardy's binary opens counters) or the small one
/// cannot start. None when servers are not wanted or cannot be started.
fn take(pmu: bool) -> Option<Server> {
    use std::sync::atomic::Ordering::Relaxed;
    if !enabled() {
        return None;
    }
    let small = !pmu && !SMALL_FAILED.load(Relaxed) && !HELPER.is_empty();
    if let Some(s) = IDLE.lock().ok().and_then(|mut i| {
        let at = i.iter().rposition(|s| s.small == small)?;
        Some(i.swap_remove(at))
    }) {
        return Some(s);
    }
    if small {
        if let Some(s) = start(true) {
            return Some(s);
        }
        SMALL_FAILED.store(true, Relaxed);
    }
    if FAILED.load(Relaxed) {
        return None;
    }
    let s = start(false);
    if s.is_none() {
        FAILED.store(true, Relaxed);
    }
    s
}

/// Whether runs (counting on the PMU or not) can go through a server
/// (starting the first one).
pub fn available(pmu: bool) -> bool {
    match take(pmu) {
        Some(s) => {
            if let Ok(mut i) = IDLE.lock() {
                i.push(s);
            }
            true
        }
        None => false,
    }
}

use super::trampoline::now_ns;

/// A request, encoded once per command and sent for each run.
#[derive(Debug, Clone)]
pub struct Request {
    bytes: Vec<u8>,
    pmu: bool,
}

impl Request {
    /// `program` run as `argv` (argv[0] first) with `env` (the whole
    /// environment, `K=V`), in `cwd`, counted on the PMU when `pmu` is given
    /// (its `to_arg` form). `None` when it does not fit one message.
    pub fn new(
        program: &std::ffi::OsStr,
        argv: &[&std::ffi::OsStr],
        env: &[std::ffi::OsString],
        cwd: Option<&std::path::Path>,
        pmu: Option<&str>,
    ) -> Option<Request> {
        use std::os::unix::ffi::OsStrExt;
        let mut b = Vec::new();
        let word = |b: &mut Vec<u8>, w: u32| b.extend_from_slice(&w.to_le_bytes());
        word(&mut b, MAGIC);
        word(&mut b, argv.len() as u32);
        word(&mut b, env.len() as u32);
        word(&mut b, u32::from(cwd.is_some()));
        word(&mut b, u32::from(pmu.is_some()));
        let mut string = |s: &[u8]| -> Option<()> {
            if s.contains(&0) {
                return None;
            }
            b.extend_from_slice(s);
            b.push(0);
            Some(())
        };
        string(program.as_bytes())?;
        for a in argv {
            string(a.as_bytes())?;
        }
        for e in env {
            string(e.as_bytes())?;
        }
        if let Some(c) = cwd {
            string(c.as_os_str().as_bytes())?;
        }
        if let Some(p) = pmu {
            string(p.as_bytes())?;
        }
        (b.len() <= MAX_REQUEST).then_some(Request {
            bytes: b,
            pmu: pmu.is_some(),
        })
    }
}

/// Send one run's request with its standard descriptors; `on` gets every
/// message up to and including the final one (`Done`, or a failure before
/// the command ran); `Started` comes before `Done` whenever the command
/// ran. `wait(sock, started)` blocks until the socket is readable (true)
/// or something else needs a look (false: a signal, a deadline), after
/// which a pid the small spawner has published is passed on as `Started`.
/// Err: the server is gone.
pub fn run(
    req: &Request,
    stdio: [RawFd; 3],
    on: &mut dyn FnMut(Message),
    wait: &mut dyn FnMut(RawFd, bool) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let server = take(req.pmu).ok_or_else(|| std::io::Error::other("no spawner"))?;
    let result = run_on(&server, req, stdio, on, wait);
    // A server that failed is dropped (its socket closes, it exits).
    if result.is_ok()
        && let Ok(mut i) = IDLE.lock()
    {
        i.push(server);
    }
    result
}

fn run_on(
    server: &Server,
    req: &Request,
    stdio: [RawFd; 3],
    on: &mut dyn FnMut(Message),
    wait: &mut dyn FnMut(RawFd, bool) -> std::io::Result<bool>,
) -> std::io::Result<()> {
    let sock = server.sock.as_raw_fd();
    if let Some(slot) = &server.slot {
        slot.clear();
    }
    send_with_fds(sock, &req.bytes, &stdio)?;
    let mut started = false;
    loop {
        if !started && let Some(pid) = server.slot.as_ref().and_then(Slot::pid) {
            started = true;
            on(Message::Started(pid));
        }
        if !wait(sock, started)? {
            continue;
        }
        let mut buf = [0u8; 8 * 11];
        // SAFETY: buf is valid for its length.
        let n = unsafe { libc::recv(sock, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::other("the spawner exited"));
        }
        let w: Vec<u64> = buf[..n as usize]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let msg = match w.first() {
            Some(&STARTED) => {
                started = true;
                Message::Started(w.get(1).copied().unwrap_or(0) as libc::pid_t)
            }
            Some(&EXEC_FAILED) => Message::ExecFailed(w.get(1).copied().unwrap_or(0) as i32),
            Some(&COUNT_FAILED) => Message::CountFailed(w.get(1).copied().unwrap_or(0) as i32),
            Some(&DONE) if w.len() >= 10 => {
                // The small spawner names the pid at the end when tardy
                // had no reason to look for it before.
                if !started && let Some(&pid) = w.get(10).filter(|&&p| p > 0) {
                    started = true;
                    on(Message::Started(pid as libc::pid_t));
                }
                Message::Done(super::trampoline::Record {
                    status: w[1] as i32,
                    wall_ns: w[2],
                    user_ns: w[3],
                    sys_ns: w[4],
                    max_rss_kib: w[5],
                    voluntary_cs: w[6],
                    involuntary_cs: w[7],
                    instructions: (w[8] != u64::MAX).then_some(w[8]),
                    cycles: (w[9] != u64::MAX).then_some(w[9]),
                })
            }
            _ => continue,
        };
        let last = matches!(
            msg,
            Message::Done(_) | Message::CountFailed(_) | Message::ExecFailed(_)
        );
        on(msg);
        if last {
            // An exec failure is followed by the failed child's end: read it
            // too, so the next run starts clean.
            if let Message::ExecFailed(_) = msg {
                drain_until_done(sock);
            }
            return Ok(());
        }
    }
}

/// Read messages until the run's `Done` (after a failed exec).
fn drain_until_done(sock: RawFd) {
    let mut buf = [0u8; 8 * 11];
    loop {
        // SAFETY: buf is valid for its length.
        let n = unsafe { libc::recv(sock, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n < 8 || u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8])) == DONE {
            return;
        }
    }
}

fn send_with_fds(sock: RawFd, bytes: &[u8], fds: &[RawFd; 3]) -> std::io::Result<()> {
    // SAFETY: the message header points at valid buffers for the call; the
    // control buffer is sized for three descriptors (CMSG_SPACE).
    unsafe {
        let mut iov = libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        };
        let space = libc::CMSG_SPACE(std::mem::size_of::<[RawFd; 3]>() as u32) as usize;
        let mut control = vec![0u8; space];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<[RawFd; 3]>() as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast::<RawFd>(), 3);
        loop {
            let n = libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL);
            if n >= 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

fn send_words(sock: RawFd, words: &[u64]) {
    let mut b = [0u8; 8 * 10];
    for (i, w) in words.iter().take(10).enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&w.to_le_bytes());
    }
    // SAFETY: b is valid for the length sent.
    unsafe {
        libc::send(
            sock,
            b.as_ptr().cast(),
            words.len().min(10) * 8,
            libc::MSG_NOSIGNAL,
        )
    };
}

/// The server: serve requests until tardy closes the socket, then exit.
fn serve(sock: RawFd) -> ! {
    // SAFETY: signal dispositions and prctl of this process only.
    unsafe {
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGQUIT, libc::SIGHUP] {
            libc::signal(s, libc::SIG_IGN);
        }
        // No PR_SET_PDEATHSIG: it fires when the *thread* that started the
        // server ends (a bisect --jobs worker), not tardy; the socket's end
        // (tardy exits, or is killed) ends the server instead.
        libc::fcntl(sock, libc::F_SETFD, libc::FD_CLOEXEC);
    }
    // The child's first instruction's time, written by the child.
    let mut tp = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills two fds.
    if unsafe { libc::pipe2(tp.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        // SAFETY: exit at once.
        unsafe { libc::_exit(0) };
    }
    let mut buf = vec![0u8; MAX_REQUEST + 64];
    loop {
        let mut fds = [-1 as RawFd; 3];
        let n = recv_with_fds(sock, &mut buf, &mut fds);
        if n <= 0 {
            // SAFETY: tardy is gone or done: exit at once.
            unsafe { libc::_exit(0) };
        }
        serve_one(sock, &buf[..n as usize], fds, tp);
    }
}

/// Close the descriptors a request brought.
fn close_all(fds: [RawFd; 3]) {
    for fd in fds.into_iter().filter(|&f| f >= 0) {
        // SAFETY: received descriptors are ours to close, once.
        unsafe { libc::close(fd) };
    }
}

fn recv_with_fds(sock: RawFd, buf: &mut [u8], fds: &mut [RawFd; 3]) -> isize {
    // SAFETY: as in send_with_fds, for receiving.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let space = libc::CMSG_SPACE(std::mem::size_of::<[RawFd; 3]>() as u32) as usize;
        let mut control = [0u8; 64];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space.min(control.len()) as _;
        let n = loop {
            let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break n;
        };
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n > 0 && !cmsg.is_null() && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
            std::ptr::copy_nonoverlapping(
                libc::CMSG_DATA(cmsg).cast::<RawFd>(),
                fds.as_mut_ptr(),
                3,
            );
        }
        n
    }
}

/// Split a request into its strings.
fn parse(b: &[u8]) -> Option<Parsed> {
    let word = |i: usize| -> Option<u32> {
        Some(u32::from_le_bytes(
            b.get(i * 4..i * 4 + 4)?.try_into().ok()?,
        ))
    };
    if word(0)? != MAGIC {
        return None;
    }
    let (nargv, nenv, has_cwd, has_pmu) = (word(1)?, word(2)?, word(3)? != 0, word(4)? != 0);
    let mut strings = b[20..].split(|&c| c == 0).map(|s| CString::new(s).ok());
    let program = strings.next()??;
    let argv: Option<Vec<CString>> = (0..nargv).map(|_| strings.next()?).collect();
    let env: Option<Vec<CString>> = (0..nenv).map(|_| strings.next()?).collect();
    let cwd = if has_cwd {
        Some(strings.next()??)
    } else {
        None
    };
    let pmu = if has_pmu {
        Some(strings.next()??.into_string().ok()?)
    } else {
        None
    };
    Some(Parsed {
        program,
        argv: argv?,
        env: env?,
        cwd,
        pmu,
    })
}

struct Parsed {
    program: CString,
    argv: Vec<CString>,
    env: Vec<CString>,
    cwd: Option<CString>,
    pmu: Option<String>,
}

fn serve_one(sock: RawFd, request: &[u8], fds: [RawFd; 3], tp: [RawFd; 2]) {
    let Some(p) = parse(request) else {
        close_all(fds);
        send_words(sock, &[EXEC_FAILED, libc::EINVAL as u64]);
        send_words(sock, &[DONE, 0, 0, 0, 0, 0, 0, 0, u64::MAX, u64::MAX]);
        return;
    };
    let mut argv: Vec<*const libc::c_char> = p.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = p.env.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    let counters = match p
        .pmu
        .as_deref()
        .and_then(super::counters::pmu::PmuSpec::from_arg)
        .map(super::counters::pmu::Open::new)
    {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(errno)) => {
            close_all(fds);
            send_words(sock, &[COUNT_FAILED, errno as u64]);
            return;
        }
    };
    if let Some(c) = &counters {
        c.enable();
    }
    // Stale bytes of an earlier run.
    let mut stale = [0u8; 64];
    // SAFETY: stale is valid for its length; the pipe is non-blocking.
    while unsafe { libc::read(tp[0], stale.as_mut_ptr().cast(), stale.len()) } > 0 {}
    // A fork, not a vfork: the command may inherit only this small
    // process's own anonymous pages into its max RSS, never a shared
    // address space's whole resident set.
    // SAFETY: this process has one thread; the child makes only
    // async-signal-safe calls before execve.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: async-signal-safe calls on valid arguments, then execve or _exit.
        unsafe {
            let t = now_ns().to_le_bytes();
            libc::write(tp[1], t.as_ptr().cast(), 8);
            libc::setpgid(0, 0);
            for (i, &fd) in fds.iter().enumerate() {
                if fd >= 0 {
                    libc::dup2(fd, i as libc::c_int);
                }
            }
            if let Some(c) = &p.cwd
                && libc::chdir(c.as_ptr()) != 0
            {
                let e = *libc::__errno_location();
                send_words(sock, &[EXEC_FAILED, e as u64]);
                libc::_exit(127);
            }
            super::inherit::restore_signals(&CHANGED);
            libc::execve(p.program.as_ptr(), argv.as_ptr(), envp.as_ptr());
            let e = *libc::__errno_location();
            send_words(sock, &[EXEC_FAILED, e as u64]);
            libc::_exit(127);
        }
    }
    if pid < 0 {
        // SAFETY: reading errno.
        let e = unsafe { *libc::__errno_location() };
        close_all(fds);
        send_words(sock, &[EXEC_FAILED, e as u64]);
        send_words(sock, &[DONE, 0, 0, 0, 0, 0, 0, 0, u64::MAX, u64::MAX]);
        return;
    }
    // Close the parent's copies now: a pipe's reader sees its end when the
    // command's copies close.
    close_all(fds);
    send_words(sock, &[STARTED, pid as u64]);
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data filled by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            break;
        }
        // SAFETY: reading errno.
        if unsafe { *libc::__errno_location() } != libc::EINTR {
            break;
        }
    }
    let end = now_ns();
    let mut t = [0u8; 8];
    // SAFETY: t is valid for 8 bytes.
    let got = unsafe { libc::read(tp[0], t.as_mut_ptr().cast(), 8) };
    let start = if got == 8 { u64::from_le_bytes(t) } else { end };
    let (mut instructions, mut cycles) = (u64::MAX, u64::MAX);
    if let Some(c) = &counters {
        c.disable();
        [instructions, cycles] = c.read();
    }
    send_words(
        sock,
        &[
            DONE,
            status as u32 as u64,
            end.saturating_sub(start),
            super::trampoline::timeval_ns(ru.ru_utime),
            super::trampoline::timeval_ns(ru.ru_stime),
            ru.ru_maxrss.max(0) as u64,
            ru.ru_nvcsw.max(0) as u64,
            ru.ru_nivcsw.max(0) as u64,
            instructions,
            cycles,
        ],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        let req = Request::new(
            std::ffi::OsStr::new("/bin/echo"),
            &[std::ffi::OsStr::new("echo"), std::ffi::OsStr::new("")],
            &["A=1".into(), "B=".into()],
            Some(std::path::Path::new("/tmp")),
            Some("x"),
        )
        .unwrap();
        let p = parse(&req.bytes).unwrap();
        assert_eq!(p.program.to_str().unwrap(), "/bin/echo");
        assert_eq!(p.argv.len(), 2);
        assert_eq!(p.argv[1].to_str().unwrap(), "");
        assert_eq!(p.env.len(), 2);
        assert_eq!(p.cwd.unwrap().to_str().unwrap(), "/tmp");
        assert_eq!(p.pmu.as_deref(), Some("x"));
        assert!(parse(b"junk").is_none());
        // A NUL inside an argument cannot be sent.
        assert!(
            Request::new(
                std::ffi::OsStr::new("a"),
                &[std::ffi::OsStr::new("a\0b")],
                &[],
                None,
                None
            )
            .is_none()
        );
    }
}
