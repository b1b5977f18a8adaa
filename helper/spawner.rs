//! tardy's small spawner: a static program of a few KiB, without the C
//! library or Rust's standard library, that starts the measured commands.
//! build.rs compiles it with the same rustc (panic=abort, no start files,
//! static), tardy carries its bytes and runs it from a memfd, once per
//! session (`src/measure/spawner.rs` says why and speaks its protocol).
//!
//! Why a program of its own: Linux folds the memory a process had before
//! `exec` into the new program's `ru_maxrss`, so the command must start from
//! a process smaller than any command (tardy itself is 7 MiB and more; a
//! server that is tardy's binary is 4.5 MiB); and a fork of even a small
//! Rust process copies and then faults in pages the command never uses (160
//! µs a run here). This one's whole footprint is a few pages, so it can
//! start each command with a vfork (the child borrows its memory until it
//! execs): the cheapest start there is, and still the command's own
//! `ru_maxrss`.
//!
//! Protocol (one SOCK_SEQPACKET socket, fd number in argv[1]): a request is
//! one datagram `MAGIC, argc, envc, has_cwd, has_pmu` (u32 little-endian)
//! then NUL-terminated program, argv, env, cwd, with the command's stdin,
//! stdout and stderr passed by SCM_RIGHTS. Answers are u64 words: STARTED
//! pid, or EXEC_FAILED errno; then DONE status, wall ns, user ns, sys ns,
//! max RSS KiB, voluntary and involuntary switches, two u64::MAX (no
//! counters: requests that count instructions go to tardy's own server) and
//! the pid. With a second argument (a memfd of one page, shared with
//! tardy), STARTED is not sent: the pid is stored in that page's first
//! word, where tardy reads it when it needs it (a timeout, Ctrl-C), and a
//! run wakes tardy once, not twice (on this 2-CPU VM the second wake-up was
//! 60-100 µs a run, most of the harness's cost).
//! It changes no signal disposition or mask (the command inherits the
//! user's, as tardy started this program with them), leaves the terminal's
//! process group (Ctrl-C reaches the command's group, and tardy), and exits
//! when the socket closes.

#![no_std]
#![no_main]

use core::arch::{asm, global_asm};

const MAGIC: u32 = 0x7461_7264;
const STARTED: u64 = 1;
const EXEC_FAILED: u64 = 2;
const DONE: u64 = 4;
const MAX_REQUEST: usize = 128 * 1024;
/// Every string of a request could be one byte and its NUL.
const MAX_STRINGS: usize = MAX_REQUEST / 2 + 2;

const EINTR: isize = 4;
const EINVAL: u64 = 22;
const ENOSYS: u64 = 38;

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const CLOSE: usize = 3;
    pub const SENDTO: usize = 44;
    pub const RECVMSG: usize = 47;
    pub const EXECVE: usize = 59;
    pub const EXIT_GROUP: usize = 231;
    pub const WAIT4: usize = 61;
    pub const FCNTL: usize = 72;
    pub const CHDIR: usize = 80;
    pub const SETPGID: usize = 109;
    pub const CLOCK_GETTIME: usize = 228;
    pub const DUP3: usize = 292;
    pub const MMAP: usize = 9;
}

#[cfg(target_arch = "aarch64")]
mod nr {
    pub const CLOSE: usize = 57;
    pub const SENDTO: usize = 206;
    pub const RECVMSG: usize = 212;
    pub const EXECVE: usize = 221;
    pub const EXIT_GROUP: usize = 94;
    pub const WAIT4: usize = 260;
    pub const FCNTL: usize = 25;
    pub const CHDIR: usize = 49;
    pub const SETPGID: usize = 154;
    pub const CLOCK_GETTIME: usize = 113;
    pub const DUP3: usize = 24;
    pub const MMAP: usize = 222;
}

#[cfg(target_arch = "x86_64")]
unsafe fn syscall6(n: usize, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the Linux x86_64 system call convention.
    unsafe {
        asm!("syscall", inlateout("rax") n as isize => ret,
             in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
             in("r10") a[3], in("r8") a[4], in("r9") a[5],
             lateout("rcx") _, lateout("r11") _, options(nostack));
    }
    ret
}

#[cfg(target_arch = "aarch64")]
unsafe fn syscall6(n: usize, a: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the Linux aarch64 system call convention.
    unsafe {
        asm!("svc 0", in("x8") n,
             inlateout("x0") a[0] as isize => ret,
             in("x1") a[1], in("x2") a[2], in("x3") a[3], in("x4") a[4], in("x5") a[5],
             options(nostack));
    }
    ret
}

unsafe fn sys(n: usize, a0: usize, a1: usize, a2: usize, a3: usize, a4: usize) -> isize {
    // SAFETY: forwarded.
    unsafe { syscall6(n, [a0, a1, a2, a3, a4, 0]) }
}

// The process entry: the stack pointer holds argc, argv...
#[cfg(target_arch = "x86_64")]
global_asm!(
    ".globl _start",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call tardy_main",
    "ud2",
    // tardy_vfork(stack_top, job): clone(CLONE_VM | CLONE_VFORK | SIGCHLD)
    // onto a stack of its own; the child calls tardy_child(job); the
    // parent returns the pid (or -errno) once the child has execed or ended.
    ".globl tardy_vfork",
    "tardy_vfork:",
    "mov r9, rsi",
    "mov rsi, rdi",
    "mov edi, 0x4111",
    "xor edx, edx",
    "xor r10d, r10d",
    "xor r8d, r8d",
    "mov eax, 56",
    "syscall",
    "test rax, rax",
    "jnz 2f",
    "mov rdi, r9",
    "and rsp, -16",
    "call tardy_child",
    "ud2",
    "2:",
    "ret",
);

#[cfg(target_arch = "aarch64")]
global_asm!(
    ".globl _start",
    "_start:",
    "mov x29, xzr",
    "mov x0, sp",
    "bl tardy_main",
    "brk #0",
    ".globl tardy_vfork",
    "tardy_vfork:",
    "mov x9, x1",
    "mov x1, x0",
    "mov x0, #0x4111",
    "mov x2, xzr",
    "mov x3, xzr",
    "mov x4, xzr",
    "mov x8, #220",
    "svc #0",
    "cbnz x0, 2f",
    "mov x0, x9",
    "bl tardy_child",
    "brk #0",
    "2:",
    "ret",
);

unsafe extern "C" {
    fn tardy_vfork(stack_top: *mut u8, job: *mut Job) -> isize;
}

// The C library's memory functions, which compiled code may call (written
// in assembly, so the compiler cannot turn their loops back into calls).
#[cfg(target_arch = "x86_64")]
global_asm!(
    ".globl memcpy", "memcpy:", "mov rax, rdi", "mov rcx, rdx", "rep movsb", "ret",
    ".globl memmove", "memmove:", "mov rax, rdi", "mov rcx, rdx",
    "cmp rdi, rsi", "jbe 3f",
    "lea rsi, [rsi + rdx - 1]", "lea rdi, [rdi + rdx - 1]", "std", "rep movsb", "cld", "ret",
    "3:", "rep movsb", "ret",
    ".globl memset", "memset:", "mov r8, rdi", "mov eax, esi", "mov rcx, rdx", "rep stosb",
    "mov rax, r8", "ret",
    ".globl memcmp", "memcmp:", "xor eax, eax", "test rdx, rdx", "jz 5f",
    "4:", "movzx eax, byte ptr [rdi]", "movzx ecx, byte ptr [rsi]", "sub eax, ecx", "jnz 5f",
    "inc rdi", "inc rsi", "dec rdx", "jnz 4b", "5:", "ret",
    ".globl bcmp", "bcmp:", "jmp memcmp",
);

#[cfg(target_arch = "aarch64")]
global_asm!(
    ".globl memcpy", "memcpy:", "mov x3, x0", "cbz x2, 2f",
    "1:", "ldrb w4, [x1], #1", "strb w4, [x3], #1", "subs x2, x2, #1", "b.ne 1b", "2:", "ret",
    ".globl memmove", "memmove:", "cmp x0, x1", "b.ls memcpy", "add x3, x0, x2", "add x1, x1, x2",
    "cbz x2, 4f",
    "3:", "ldrb w4, [x1, #-1]!", "strb w4, [x3, #-1]!", "subs x2, x2, #1", "b.ne 3b", "4:", "ret",
    ".globl memset", "memset:", "mov x3, x0", "cbz x2, 6f",
    "5:", "strb w1, [x3], #1", "subs x2, x2, #1", "b.ne 5b", "6:", "ret",
    ".globl memcmp", "memcmp:", "mov w3, #0", "cbz x2, 8f",
    "7:", "ldrb w4, [x0], #1", "ldrb w5, [x1], #1", "subs w3, w4, w5", "b.ne 8f",
    "subs x2, x2, #1", "b.ne 7b", "8:", "mov w0, w3", "ret",
    ".globl bcmp", "bcmp:", "b memcmp",
);

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    exit(126)
}

/// The prebuilt `core` refers to the unwinder's personality routine even
/// with panic=abort; nothing here unwinds, so it is never called.
#[unsafe(no_mangle)]
extern "C" fn rust_eh_personality() {}

fn exit(code: usize) -> ! {
    loop {
        // SAFETY: exit_group never returns.
        unsafe { sys(nr::EXIT_GROUP, code, 0, 0, 0, 0) };
    }
}

/// What the vfork child needs, and what it tells the parent.
#[repr(C)]
struct Job {
    program: *const u8,
    argv: *const *const u8,
    envp: *const *const u8,
    cwd: *const u8,
    fds: [i32; 3],
    start_ns: u64,
    errno: u64,
}

#[repr(C, align(16))]
struct Stack([u8; 32 * 1024]);

static mut REQUEST: [u8; MAX_REQUEST + 64] = [0; MAX_REQUEST + 64];
static mut ARGV: [*const u8; MAX_STRINGS] = [core::ptr::null(); MAX_STRINGS];
static mut ENVP: [*const u8; MAX_STRINGS] = [core::ptr::null(); MAX_STRINGS];
static mut CHILD_STACK: Stack = Stack([0; 32 * 1024]);
/// The page tardy shares (argv[2], a memfd): the running command's pid is
/// written there instead of sent, so tardy is not woken while the command
/// runs; null without one (then STARTED is sent).
static mut PID_SLOT: *mut i32 = core::ptr::null_mut();

fn slot() -> *mut i32 {
    // SAFETY: written once at start, before any request.
    unsafe { *(&raw const PID_SLOT) }
}

fn now_ns() -> u64 {
    let mut ts = [0i64; 2];
    // SAFETY: CLOCK_MONOTONIC (1) into a timespec.
    unsafe { sys(nr::CLOCK_GETTIME, 1, ts.as_mut_ptr() as usize, 0, 0, 0) };
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}

fn send_words(sock: usize, words: &[u64]) {
    let mut b = [0u8; 88];
    let n = words.len().min(11);
    for (i, w) in words.iter().take(n).enumerate() {
        let bytes = w.to_le_bytes();
        let mut k = 0;
        while k < 8 {
            b[i * 8 + k] = bytes[k];
            k += 1;
        }
    }
    // SAFETY: b is valid for n * 8 bytes; MSG_NOSIGNAL (0x4000).
    unsafe { sys(nr::SENDTO, sock, b.as_ptr() as usize, n * 8, 0x4000, 0) };
}

fn close(fd: i32) {
    if fd >= 0 {
        // SAFETY: a descriptor this process owns.
        unsafe { sys(nr::CLOSE, fd as usize, 0, 0, 0, 0) };
    }
}

#[repr(C)]
struct Iovec {
    base: *mut u8,
    len: usize,
}

#[repr(C)]
struct Msghdr {
    name: *mut u8,
    namelen: u32,
    iov: *mut Iovec,
    iovlen: usize,
    control: *mut u8,
    controllen: usize,
    flags: i32,
}

/// One request and its descriptors; the datagram's length (0: the socket
/// closed).
fn receive(sock: usize, buf: &mut [u8], fds: &mut [i32; 3]) -> isize {
    let mut iov = Iovec {
        base: buf.as_mut_ptr(),
        len: buf.len(),
    };
    // cmsghdr (len u64, level i32, type i32) then three ints, 8-aligned.
    let mut control = [0u64; 4];
    let mut msg = Msghdr {
        name: core::ptr::null_mut(),
        namelen: 0,
        iov: &mut iov,
        iovlen: 1,
        control: control.as_mut_ptr() as *mut u8,
        controllen: 32,
        flags: 0,
    };
    let n = loop {
        // SAFETY: msg points at live buffers; MSG_CMSG_CLOEXEC (0x40000000).
        let n = unsafe { sys(nr::RECVMSG, sock, &mut msg as *mut Msghdr as usize, 0x4000_0000, 0, 0) };
        if n != -EINTR {
            break n;
        }
    };
    let len = control[0] as usize;
    let (level, kind) = (control[1] as u32, (control[1] >> 32) as u32);
    // SOL_SOCKET (1), SCM_RIGHTS (1), 16 + 3 * 4 bytes.
    if n > 0 && msg.controllen >= 28 && level == 1 && kind == 1 && len >= 28 {
        fds[0] = control[2] as u32 as i32;
        fds[1] = (control[2] >> 32) as u32 as i32;
        fds[2] = control[3] as u32 as i32;
    }
    n
}

fn word(b: &[u8], i: usize) -> Option<u32> {
    let s = b.get(i * 4..i * 4 + 4)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Lay a request's strings out as the child's argv and envp; the job
/// without descriptors, or None when it is not one.
fn parse(b: &mut [u8]) -> Option<Job> {
    if word(b, 0)? != MAGIC {
        return None;
    }
    let (argc, envc) = (word(b, 1)? as usize, word(b, 2)? as usize);
    let (has_cwd, has_pmu) = (word(b, 3)? != 0, word(b, 4)? != 0);
    if has_pmu || argc + 1 >= MAX_STRINGS || envc + 1 >= MAX_STRINGS {
        return None;
    }
    // The request must end with a NUL (every string terminated).
    if b.last() != Some(&0) {
        return None;
    }
    let base = b.as_ptr();
    let mut at = 20usize;
    let mut next = || -> Option<*const u8> {
        if at >= b.len() {
            return None;
        }
        // SAFETY: `at` is inside the request.
        let p = unsafe { base.add(at) };
        while *b.get(at)? != 0 {
            at += 1;
        }
        at += 1;
        Some(p)
    };
    let program = next()?;
    // SAFETY: this single-threaded program is the only user of the tables.
    let (argv, envp) = (&raw mut ARGV, &raw mut ENVP);
    for i in 0..argc {
        // SAFETY: i < MAX_STRINGS - 1.
        unsafe { (*argv)[i] = next()? };
    }
    // SAFETY: as above.
    unsafe { (*argv)[argc] = core::ptr::null() };
    for i in 0..envc {
        // SAFETY: as above.
        unsafe { (*envp)[i] = next()? };
    }
    // SAFETY: as above.
    unsafe { (*envp)[envc] = core::ptr::null() };
    let cwd = if has_cwd { next()? } else { core::ptr::null() };
    Some(Job {
        program,
        argv: argv as *const *const u8,
        envp: envp as *const *const u8,
        cwd,
        fds: [-1; 3],
        start_ns: 0,
        errno: 0,
    })
}

/// The vfork child: its own process group, the command's descriptors and
/// directory, then exec. It shares this program's memory until then, so it
/// only writes into the job.
#[unsafe(no_mangle)]
extern "C" fn tardy_child(job: *mut Job) -> ! {
    // SAFETY: the parent is suspended until this child execs or exits; the
    // job and the strings it points at stay put meanwhile.
    unsafe {
        let job = &mut *job;
        job.start_ns = now_ns();
        sys(nr::SETPGID, 0, 0, 0, 0, 0);
        for (i, &fd) in job.fds.iter().enumerate() {
            if fd >= 0 && fd as usize != i {
                sys(nr::DUP3, fd as usize, i, 0, 0, 0);
            }
        }
        if !job.cwd.is_null() {
            let rc = sys(nr::CHDIR, job.cwd as usize, 0, 0, 0, 0);
            if rc < 0 {
                job.errno = (-rc) as u64;
                exit(127);
            }
        }
        let rc = sys(nr::EXECVE, job.program as usize, job.argv as usize, job.envp as usize, 0, 0);
        job.errno = (-rc) as u64;
        exit(127)
    }
}

#[repr(C)]
struct Rusage {
    utime: [i64; 2],
    stime: [i64; 2],
    maxrss: i64,
    ixrss: i64,
    idrss: i64,
    isrss: i64,
    minflt: i64,
    majflt: i64,
    nswap: i64,
    inblock: i64,
    oublock: i64,
    msgsnd: i64,
    msgrcv: i64,
    nsignals: i64,
    nvcsw: i64,
    nivcsw: i64,
}

fn tv_ns(tv: [i64; 2]) -> u64 {
    (tv[0].max(0) as u64) * 1_000_000_000 + (tv[1].max(0) as u64) * 1000
}

fn serve_one(sock: usize, n: usize, fds: [i32; 3]) {
    // SAFETY: this single-threaded program is the only user of REQUEST.
    let req = unsafe { &mut *(&raw mut REQUEST) };
    let buf = &mut req[..n];
    let Some(mut job) = parse(buf) else {
        for fd in fds {
            close(fd);
        }
        let why = if word(buf, 4).is_some_and(|w| w != 0) { ENOSYS } else { EINVAL };
        send_words(sock, &[EXEC_FAILED, why]);
        send_words(sock, &[DONE, 0, 0, 0, 0, 0, 0, 0, u64::MAX, u64::MAX]);
        return;
    };
    job.fds = fds;
    // SAFETY: the stack is this program's and only the child uses it.
    let top = unsafe { (&raw mut CHILD_STACK as *mut u8).add(32 * 1024) };
    // SAFETY: tardy_vfork runs tardy_child on `top` with `job`.
    let pid = unsafe { tardy_vfork(top, &mut job) };
    for fd in fds {
        close(fd);
    }
    if pid < 0 {
        send_words(sock, &[EXEC_FAILED, (-pid) as u64]);
        send_words(sock, &[DONE, 0, 0, 0, 0, 0, 0, 0, u64::MAX, u64::MAX]);
        return;
    }
    if job.errno != 0 {
        send_words(sock, &[EXEC_FAILED, job.errno]);
    } else if slot().is_null() {
        send_words(sock, &[STARTED, pid as u64]);
    } else {
        // SAFETY: the shared page is mapped for the life of this program;
        // tardy reads the word atomically.
        unsafe { core::sync::atomic::AtomicI32::from_ptr(slot()) }
            .store(pid as i32, core::sync::atomic::Ordering::Release);
    }
    let mut status: i32 = 0;
    let mut ru = Rusage {
        utime: [0; 2],
        stime: [0; 2],
        maxrss: 0,
        ixrss: 0,
        idrss: 0,
        isrss: 0,
        minflt: 0,
        majflt: 0,
        nswap: 0,
        inblock: 0,
        oublock: 0,
        msgsnd: 0,
        msgrcv: 0,
        nsignals: 0,
        nvcsw: 0,
        nivcsw: 0,
    };
    loop {
        // SAFETY: valid pointers to status and rusage.
        let rc = unsafe {
            sys(
                nr::WAIT4,
                pid as usize,
                &mut status as *mut i32 as usize,
                0,
                &mut ru as *mut Rusage as usize,
                0,
            )
        };
        if rc != -EINTR {
            break;
        }
    }
    let end = now_ns();
    send_words(
        sock,
        &[
            DONE,
            status as u32 as u64,
            end.saturating_sub(job.start_ns),
            tv_ns(ru.utime),
            tv_ns(ru.stime),
            ru.maxrss.max(0) as u64,
            ru.nvcsw.max(0) as u64,
            ru.nivcsw.max(0) as u64,
            u64::MAX,
            u64::MAX,
            pid as u64,
        ],
    );
}

/// A descriptor number given as a decimal argument.
///
/// # Safety
/// `arg` points at a NUL-terminated string.
unsafe fn fd_arg(arg: *const u8) -> Option<usize> {
    let mut v = 0usize;
    let mut i = 0;
    loop {
        // SAFETY: within the string, up to its NUL.
        let c = unsafe { *arg.add(i) };
        if c == 0 {
            break;
        }
        if !c.is_ascii_digit() || i > 9 {
            return None;
        }
        v = v * 10 + (c - b'0') as usize;
        i += 1;
    }
    (i > 0).then_some(v)
}

#[unsafe(no_mangle)]
extern "C" fn tardy_main(sp: *const usize) -> ! {
    // SAFETY: the kernel's initial stack: argc, then argv pointers.
    let (sock, page) = unsafe {
        let argc = *sp;
        if argc < 2 {
            exit(125);
        }
        let Some(sock) = fd_arg(*sp.add(2) as *const u8) else {
            exit(125)
        };
        let page = if argc >= 3 { fd_arg(*sp.add(3) as *const u8) } else { None };
        (sock, page)
    };
    // SAFETY: plain system calls on this process.
    unsafe {
        // Out of the terminal's process group: Ctrl-C is the command's and
        // tardy's to handle. The socket is not the command's.
        sys(nr::SETPGID, 0, 0, 0, 0, 0);
        sys(nr::FCNTL, sock, 2, 1, 0, 0);
        if let Some(fd) = page {
            // mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            let at = syscall6(nr::MMAP, [0, 4096, 3, 1, fd, 0]);
            if at > 0 {
                *(&raw mut PID_SLOT) = at as *mut i32;
            }
            close(fd as i32);
        }
    }
    loop {
        let mut fds = [-1i32; 3];
        // SAFETY: this single-threaded program is the only user of REQUEST.
        let buf = unsafe { &mut *(&raw mut REQUEST) };
        let n = receive(sock, buf, &mut fds);
        if n <= 0 {
            exit(0);
        }
        serve_one(sock, n as usize, fds);
    }
}
