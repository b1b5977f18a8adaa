//! What differs between architectures: syscall numbers, the audit
//! architecture the seccomp filter checks, and reading a stopped thread's
//! registers. x86_64 and aarch64 are supported; elsewhere `explain` records
//! without syscall tracing and says so.

/// The syscalls the recorder times, by what they mean to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sys {
    Nanosleep,
    ClockNanosleep,
    Poll,
    Ppoll,
    Select,
    Pselect6,
    EpollWait,
    EpollPwait,
    EpollPwait2,
    Futex,
    FutexWaitv,
    Wait4,
    Waitid,
    Fork,
    Clone,
    Clone3,
    Execve,
    Execveat,
    Fsync,
}

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const AUDIT_ARCH: u32 = 0xC000_003E;
    pub const SUPPORTED: bool = true;
    pub const SYS_FUTEX: i64 = libc::SYS_futex;
    pub const TABLE: &[(i64, super::Sys)] = {
        use super::Sys::*;
        &[
            (libc::SYS_nanosleep, Nanosleep),
            (libc::SYS_clock_nanosleep, ClockNanosleep),
            (libc::SYS_poll, Poll),
            (libc::SYS_ppoll, Ppoll),
            (libc::SYS_select, Select),
            (libc::SYS_pselect6, Pselect6),
            (libc::SYS_epoll_wait, EpollWait),
            (libc::SYS_epoll_pwait, EpollPwait),
            (libc::SYS_epoll_pwait2, EpollPwait2),
            (libc::SYS_futex_waitv, FutexWaitv),
            (libc::SYS_wait4, Wait4),
            (libc::SYS_waitid, Waitid),
            (libc::SYS_fork, Fork),
            (libc::SYS_vfork, Fork),
            (libc::SYS_clone, Clone),
            (libc::SYS_clone3, Clone3),
            (libc::SYS_execve, Execve),
            (libc::SYS_execveat, Execveat),
            (libc::SYS_fsync, Fsync),
            (libc::SYS_fdatasync, Fsync),
            (libc::SYS_sync_file_range, Fsync),
            (libc::SYS_syncfs, Fsync),
            (libc::SYS_sync, Fsync),
            (libc::SYS_msync, Fsync),
        ]
    };
}

#[cfg(target_arch = "aarch64")]
mod nr {
    pub const AUDIT_ARCH: u32 = 0xC000_00B7;
    pub const SUPPORTED: bool = true;
    pub const SYS_FUTEX: i64 = libc::SYS_futex;
    pub const TABLE: &[(i64, super::Sys)] = {
        use super::Sys::*;
        &[
            (libc::SYS_nanosleep, Nanosleep),
            (libc::SYS_clock_nanosleep, ClockNanosleep),
            (libc::SYS_ppoll, Ppoll),
            (libc::SYS_pselect6, Pselect6),
            (libc::SYS_epoll_pwait, EpollPwait),
            (libc::SYS_epoll_pwait2, EpollPwait2),
            (libc::SYS_futex_waitv, FutexWaitv),
            (libc::SYS_wait4, Wait4),
            (libc::SYS_waitid, Waitid),
            (libc::SYS_clone, Clone),
            (libc::SYS_clone3, Clone3),
            (libc::SYS_execve, Execve),
            (libc::SYS_execveat, Execveat),
            (libc::SYS_fsync, Fsync),
            (libc::SYS_fdatasync, Fsync),
            (libc::SYS_sync_file_range, Fsync),
            (libc::SYS_syncfs, Fsync),
            (libc::SYS_sync, Fsync),
            (libc::SYS_msync, Fsync),
        ]
    };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod nr {
    pub const AUDIT_ARCH: u32 = 0;
    pub const SUPPORTED: bool = false;
    pub const SYS_FUTEX: i64 = -1;
    pub const TABLE: &[(i64, super::Sys)] = &[];
}

pub use nr::{AUDIT_ARCH, SUPPORTED, SYS_FUTEX};

/// Every traced syscall number except futex (filtered on its operation).
pub const TRACED: &[i64] = &{
    let mut out = [0i64; nr::TABLE.len()];
    let mut i = 0;
    while i < nr::TABLE.len() {
        out[i] = nr::TABLE[i].0;
        i += 1;
    }
    out
};

/// What syscall `nr` is to the recorder.
pub fn classify(nr: i64) -> Option<Sys> {
    if nr == SYS_FUTEX {
        return Some(Sys::Futex);
    }
    nr::TABLE.iter().find(|(n, _)| *n == nr).map(|(_, s)| *s)
}

/// A stopped thread's syscall number, arguments, return value and
/// instruction pointer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Regs {
    pub nr: i64,
    pub args: [u64; 6],
    pub ret: i64,
    pub ip: u64,
}

#[cfg(target_arch = "x86_64")]
pub fn get_regs(tid: i32) -> Option<Regs> {
    // SAFETY: user_regs_struct is plain data; PTRACE_GETREGS fills it for a
    // stopped tracee or fails.
    unsafe {
        let mut r: libc::user_regs_struct = std::mem::zeroed();
        if libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut r as *mut _) != 0 {
            return None;
        }
        Some(Regs {
            nr: r.orig_rax as i64,
            args: [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9],
            ret: r.rax as i64,
            ip: r.rip,
        })
    }
}

/// Set a stopped thread's instruction pointer (to re-run the instruction a
/// breakpoint replaced).
#[cfg(target_arch = "x86_64")]
pub fn set_ip(tid: i32, ip: u64) -> bool {
    // SAFETY: as in get_regs; only rip is changed.
    unsafe {
        let mut r: libc::user_regs_struct = std::mem::zeroed();
        if libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut r as *mut _) != 0 {
            return false;
        }
        r.rip = ip;
        libc::ptrace(libc::PTRACE_SETREGS, tid, 0, &r as *const _) == 0
    }
}

/// The breakpoint instruction placed at a new program's entry point (int3),
/// and how far past it the instruction pointer is when it traps.
#[cfg(target_arch = "x86_64")]
pub const BREAKPOINT: Option<(u8, u64)> = Some((0xCC, 1));

#[cfg(target_arch = "aarch64")]
pub fn get_regs(tid: i32) -> Option<Regs> {
    #[repr(C)]
    struct UserPt {
        regs: [u64; 31],
        sp: u64,
        pc: u64,
        pstate: u64,
    }
    // SAFETY: PTRACE_GETREGSET with NT_PRSTATUS fills user_pt_regs.
    unsafe {
        let mut r: UserPt = std::mem::zeroed();
        let mut iov = libc::iovec {
            iov_base: &mut r as *mut _ as *mut libc::c_void,
            iov_len: std::mem::size_of::<UserPt>(),
        };
        if libc::ptrace(libc::PTRACE_GETREGSET, tid, 1usize, &mut iov as *mut _) != 0 {
            return None;
        }
        let mut nr_iov_val: i32 = 0;
        let mut iov2 = libc::iovec {
            iov_base: &mut nr_iov_val as *mut _ as *mut libc::c_void,
            iov_len: 4,
        };
        // NT_ARM_SYSTEM_CALL = 0x404
        let nr = if libc::ptrace(libc::PTRACE_GETREGSET, tid, 0x404usize, &mut iov2 as *mut _) == 0
        {
            nr_iov_val as i64
        } else {
            r.regs[8] as i64
        };
        Some(Regs {
            nr,
            args: [
                r.regs[0], r.regs[1], r.regs[2], r.regs[3], r.regs[4], r.regs[5],
            ],
            ret: r.regs[0] as i64,
            ip: r.pc,
        })
    }
}

#[cfg(not(target_arch = "x86_64"))]
pub fn set_ip(_tid: i32, _ip: u64) -> bool {
    false
}

#[cfg(not(target_arch = "x86_64"))]
pub const BREAKPOINT: Option<(u8, u64)> = None;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn get_regs(_tid: i32) -> Option<Regs> {
    None
}
