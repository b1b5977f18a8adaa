//! `perf_event_open` for the kernel-event recorder: opening events on the
//! command (one per CPU, inherited by every task it creates), sending them
//! all into one ring buffer per CPU, and reading that ring without copying
//! more than one record at a time.
//!
//! The bindings (`perf_event_attr`, the ioctls) come from
//! `perf-event-open-sys2`; what is here is tardy's use of them.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use perf_event_open_sys as sys;
use sys::bindings::{self as b, perf_event_attr};

pub const SAMPLE_IDENTIFIER: u64 = b::PERF_SAMPLE_IDENTIFIER as u64;
pub const SAMPLE_TID: u64 = b::PERF_SAMPLE_TID as u64;
pub const SAMPLE_TIME: u64 = b::PERF_SAMPLE_TIME as u64;
pub const SAMPLE_RAW: u64 = b::PERF_SAMPLE_RAW as u64;
pub const SAMPLE_CALLCHAIN: u64 = b::PERF_SAMPLE_CALLCHAIN as u64;
pub const SAMPLE_PERIOD: u64 = b::PERF_SAMPLE_PERIOD as u64;
pub const SAMPLE_REGS_USER: u64 = b::PERF_SAMPLE_REGS_USER as u64;
pub const SAMPLE_STACK_USER: u64 = b::PERF_SAMPLE_STACK_USER as u64;

/// The marker before a call chain's user frames (linux/perf_event.h).
pub const CONTEXT_USER: u64 = (-512i64) as u64;
pub const RECORD_LOST: u32 = b::PERF_RECORD_LOST;
pub const RECORD_COMM: u32 = b::PERF_RECORD_COMM;
pub const RECORD_MMAP2: u32 = b::PERF_RECORD_MMAP2;
/// `misc` bit of a comm record made by an exec (before the new program is mapped).
pub const MISC_COMM_EXEC: u16 = b::PERF_RECORD_MISC_COMM_EXEC as u16;
/// `misc` bit of an mmap2 record that carries a build id.
pub const MISC_MMAP_BUILD_ID: u16 = b::PERF_RECORD_MISC_MMAP_BUILD_ID as u16;
pub const RECORD_EXIT: u32 = b::PERF_RECORD_EXIT;
pub const RECORD_FORK: u32 = b::PERF_RECORD_FORK;
pub const RECORD_SAMPLE: u32 = b::PERF_RECORD_SAMPLE;
pub const RECORD_SWITCH: u32 = b::PERF_RECORD_SWITCH;
/// A switch record of an event opened on a whole CPU (its body adds the other task's ids).
pub const RECORD_SWITCH_CPU_WIDE: u32 = b::PERF_RECORD_SWITCH_CPU_WIDE;
/// `misc` bits of a switch record.
pub const MISC_SWITCH_OUT: u16 = b::PERF_RECORD_MISC_SWITCH_OUT as u16;
pub const MISC_SWITCH_OUT_PREEMPT: u16 = b::PERF_RECORD_MISC_SWITCH_OUT_PREEMPT as u16;

/// What one event is, before it is opened.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A software dummy event that records nothing: it owns a CPU's ring
    /// buffer for a whole session, so other events can come and go. Its
    /// ring wakes a reader polling it once this many bytes are waiting.
    RingOwner { wakeup_bytes: u32 },
    /// The software dummy event that carries the side-band records: fork,
    /// exit, exec (comm), context switches, and (`mmaps`) the executable
    /// mappings the profile resolves addresses with.
    Sideband { mmaps: bool, build_id: bool },
    /// The software `cpu-clock` event, sampled this many times a second
    /// per running thread, with user and kernel call chains.
    CpuClock(u64),
    /// A tracepoint (or a probe defined in tracefs) by its id.
    Tracepoint(u64),
}

/// Which call chain a sample carries, and how deep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    None,
    /// The kernel's side only (where a thread blocked).
    Kernel(u16),
    /// Kernel and user frames (profile samples, off-CPU stacks), with the
    /// user registers and this many bytes of the top of the user stack
    /// (x86-64; 0: none), for frames the frame pointers miss.
    Both(u16, u32),
    /// User frames only, as `Both` (a waker's chain: its kernel side, the
    /// wake-up itself, says nothing the event does not).
    User(u16, u32),
}

/// The user registers sampled with a stack copy: x86-64's bp, sp and ip
/// (perf's register numbers 6, 7, 8), written in that order.
pub const USER_REGS: u64 = (1 << 6) | (1 << 7) | (1 << 8);
/// Whether this machine's registers are the ones [`USER_REGS`] names.
pub const COPIES_STACKS: bool = cfg!(target_arch = "x86_64");

/// One event to open on the command.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub source: Source,
    pub sample_type: u64,
    /// The call chain each sample carries.
    pub chain: Chain,
    /// Opened on a CPU for every task (pid -1), enabled now, not inherited:
    /// the session's ring owners and uprobes.
    pub cpu_wide: bool,
}

/// The attributes every event shares: inherited by new tasks, enabled when
/// the command execs, stamped with CLOCK_MONOTONIC (as tardy's own clock).
fn attr(spec: &Spec) -> perf_event_attr {
    let mut a = perf_event_attr::default();
    a.size = std::mem::size_of::<perf_event_attr>() as u32;
    match spec.source {
        Source::RingOwner { wakeup_bytes } => {
            a.type_ = b::PERF_TYPE_SOFTWARE;
            a.config = b::PERF_COUNT_SW_DUMMY as u64;
            a.set_watermark(1);
            a.__bindgen_anon_2.wakeup_watermark = wakeup_bytes;
        }
        Source::Sideband { mmaps, build_id } => {
            a.type_ = b::PERF_TYPE_SOFTWARE;
            a.config = b::PERF_COUNT_SW_DUMMY as u64;
            a.set_task(1);
            a.set_comm(1);
            a.set_comm_exec(1);
            a.set_context_switch(1);
            if mmaps {
                a.set_mmap(1);
                a.set_mmap2(1);
                // Kernels 5.12 and later: the build id instead of the inode.
                if build_id {
                    a.set_build_id(1);
                }
            }
        }
        Source::CpuClock(hz) => {
            a.type_ = b::PERF_TYPE_SOFTWARE;
            a.config = b::PERF_COUNT_SW_CPU_CLOCK as u64;
            a.set_freq(1);
            a.sample_freq = hz.max(1);
        }
        Source::Tracepoint(id) => {
            a.type_ = b::PERF_TYPE_TRACEPOINT;
            a.config = id;
            a.sample_period = 1;
        }
    }
    a.sample_type = spec.sample_type;
    if !spec.cpu_wide {
        a.set_disabled(1);
        a.set_inherit(1);
        a.set_enable_on_exec(1);
    }
    a.set_sample_id_all(1);
    a.set_use_clockid(1);
    a.clockid = libc::CLOCK_MONOTONIC;
    match spec.chain {
        Chain::None => {}
        Chain::Kernel(depth) => {
            a.set_exclude_callchain_user(1);
            a.sample_max_stack = depth;
        }
        Chain::Both(depth, copy) | Chain::User(depth, copy) => {
            if matches!(spec.chain, Chain::User(..)) {
                a.set_exclude_callchain_kernel(1);
            }
            a.sample_max_stack = depth;
            if copy > 0 && COPIES_STACKS {
                a.sample_type |= SAMPLE_REGS_USER | SAMPLE_STACK_USER;
                a.sample_regs_user = USER_REGS;
                a.sample_stack_user = copy;
            }
        }
    }
    a
}

/// Open one event on task `pid` (and the tasks it creates) on `cpu`, or on
/// every task of `cpu` when `pid` is -1.
pub fn open(spec: &Spec, pid: i32, cpu: i32) -> io::Result<OwnedFd> {
    let mut a = attr(spec);
    // SAFETY: a fully initialised attr.
    let fd = unsafe {
        sys::perf_event_open(
            &mut a,
            pid,
            cpu,
            -1,
            b::PERF_FLAG_FD_CLOEXEC as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Open one event on `cpu` for the tasks of a cgroup (`group`: its
/// directory's fd); `spec` must be `cpu_wide`.
pub fn open_cgroup(spec: &Spec, group: &OwnedFd, cpu: i32) -> io::Result<OwnedFd> {
    let mut a = attr(spec);
    // SAFETY: a fully initialised attr; the cgroup's fd stands for the pid.
    let fd = unsafe {
        sys::perf_event_open(
            &mut a,
            group.as_raw_fd(),
            cpu,
            -1,
            (b::PERF_FLAG_FD_CLOEXEC | b::PERF_FLAG_PID_CGROUP) as libc::c_ulong,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A tracepoint event on tardy's own thread, disabled, not inherited and
/// never mapped: it records nothing, but while it is open the kernel keeps
/// the tracepoint (or uprobe) registered, so closing a run's events on it
/// is not the last close, which waits for an RCU grace period (about 36 ms
/// each here, one after another under the kernel's event mutex).
pub fn open_anchor(id: u64) -> io::Result<OwnedFd> {
    let mut a = perf_event_attr::default();
    a.size = std::mem::size_of::<perf_event_attr>() as u32;
    a.type_ = b::PERF_TYPE_TRACEPOINT;
    a.config = id;
    a.sample_period = 1;
    a.set_disabled(1);
    // SAFETY: a fully initialised attr; pid 0 is this thread.
    let fd = unsafe {
        sys::perf_event_open(&mut a, 0, -1, -1, b::PERF_FLAG_FD_CLOEXEC as libc::c_ulong)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd owned here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Start an event opened disabled on a task that will not exec (a running
/// program, `tardy explain --pid`): from now on it records.
pub fn enable(fd: &OwnedFd) {
    // SAFETY: PERF_EVENT_IOC_ENABLE takes no argument.
    unsafe { sys::ioctls::ENABLE(fd.as_raw_fd(), 0) };
}

/// Stop an event recording (its tasks may live on; nothing more is written).
pub fn disable(fd: &OwnedFd) {
    // SAFETY: PERF_EVENT_IOC_DISABLE takes no argument.
    unsafe { sys::ioctls::DISABLE(fd.as_raw_fd(), 0) };
}

/// The id the kernel stamps on records of this event (and of its inherited copies).
pub fn id(fd: &OwnedFd) -> io::Result<u64> {
    let mut id = 0u64;
    // SAFETY: PERF_EVENT_IOC_ID writes one u64.
    if unsafe { sys::ioctls::ID(fd.as_raw_fd(), &mut id) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(id)
}

/// Send `fd`'s records into `into`'s ring buffer (same CPU).
pub fn set_output(fd: &OwnedFd, into: &OwnedFd) -> io::Result<()> {
    // SAFETY: both are perf event fds.
    if unsafe { sys::ioctls::SET_OUTPUT(fd.as_raw_fd(), into.as_raw_fd()) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A tracepoint filter ("prev_state & 255"), evaluated in the kernel.
pub fn set_filter(fd: &OwnedFd, filter: &str) -> io::Result<()> {
    let c = std::ffi::CString::new(filter).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: a NUL-terminated string the kernel copies.
    if unsafe { sys::ioctls::SET_FILTER(fd.as_raw_fd(), c.as_ptr() as *mut libc::c_char) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One CPU's ring buffer, mapped.
pub struct Ring {
    fd: OwnedFd,
    base: *mut u8,
    len: usize,
    data_off: usize,
    data_size: usize,
    /// One record, reassembled when it wraps around the end.
    scratch: Vec<u8>,
}

// SAFETY: the mapping is owned by the Ring and only touched through &mut self.
unsafe impl Send for Ring {}

impl Ring {
    /// Map `pages` (a power of two) data pages of `fd`'s buffer.
    pub fn map(fd: OwnedFd, pages: usize) -> io::Result<Ring> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = page * (pages + 1);
        // SAFETY: mapping a perf fd read-write (so data_tail can be written).
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let meta = base as *const b::perf_event_mmap_page;
        // SAFETY: the first page is the metadata page, mapped above.
        let (data_off, data_size) = unsafe {
            let off = (*meta).data_offset as usize;
            let size = (*meta).data_size as usize;
            if size == 0 {
                (page, page * pages)
            } else {
                (off, size)
            }
        };
        Ok(Ring {
            fd,
            base: base as *mut u8,
            len,
            data_off,
            data_size,
            scratch: Vec::with_capacity(4096),
        })
    }

    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Call `f` with each record now in the ring (header included), then
    /// free their space. Returns how many records there were.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> usize {
        let meta = self.base as *mut b::perf_event_mmap_page;
        // SAFETY: reading the kernel-written head, then an acquire fence so
        // the records before it are visible (as perf's ring_buffer_read_head).
        let head = unsafe { std::ptr::read_volatile(&(*meta).data_head) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        // SAFETY: data_tail is ours to read and write.
        let mut tail = unsafe { std::ptr::read_volatile(&(*meta).data_tail) };
        let mut n = 0;
        let size = self.data_size as u64;
        while tail < head {
            let at = (tail % size) as usize;
            let data = unsafe { self.base.add(self.data_off) };
            let mut hdr = [0u8; 8];
            copy_wrapped(data, self.data_size, at, &mut hdr);
            let len = u16::from_ne_bytes([hdr[6], hdr[7]]) as usize;
            if len < 8 || len as u64 > head - tail {
                break; // a torn or corrupt header: drop the rest of this pass
            }
            if at + len <= self.data_size {
                // SAFETY: the record lies wholly inside the data area.
                let rec = unsafe { std::slice::from_raw_parts(data.add(at), len) };
                f(rec);
            } else {
                self.scratch.resize(len, 0);
                copy_wrapped(data, self.data_size, at, &mut self.scratch);
                f(&self.scratch);
            }
            tail += len as u64;
            n += 1;
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
        // SAFETY: publishing the new tail frees the space for the kernel.
        unsafe { std::ptr::write_volatile(&mut (*meta).data_tail, tail) };
        n
    }
}

fn copy_wrapped(data: *const u8, size: usize, at: usize, out: &mut [u8]) {
    let first = (size - at).min(out.len());
    // SAFETY: both pieces lie inside the data area of `size` bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(data.add(at), out.as_mut_ptr(), first);
        if first < out.len() {
            std::ptr::copy_nonoverlapping(data, out.as_mut_ptr().add(first), out.len() - first);
        }
    }
}

impl Ring {
    /// Unmap the ring and keep its event's fd (to close it elsewhere).
    pub fn into_fd(self) -> OwnedFd {
        let me = std::mem::ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the mapping is unmapped once
        // here and the fd and scratch are moved out once.
        unsafe {
            libc::munmap(me.base as *mut libc::c_void, me.len);
            drop(std::ptr::read(&me.scratch));
            std::ptr::read(&me.fd)
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once.
        unsafe {
            libc::munmap(self.base as *mut libc::c_void, self.len);
        }
    }
}

/// The CPUs the kernel can schedule on (perf events are opened on each).
pub fn online_cpus() -> Vec<i32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap_or_default();
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.parse().ok(), b.parse().ok()),
            None => (part.parse().ok(), part.parse().ok()),
        };
        if let (Some(lo), Some(hi)) = (lo, hi) {
            for c in lo..=hi {
                if out.len() < 4096 {
                    out.push(c);
                }
            }
        }
    }
    if out.is_empty() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        out = (0..n as i32).collect();
    }
    out
}

/// Little-endian-agnostic field readers over a record.
pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}
