//! What a thread blocked in, from the kernel call chain taken as it
//! switched out: the syscall it was in (the `__x64_sys_*` frame) and the
//! inner functions that say why it waited (a pipe, a socket, block I/O, a
//! futex, a child's exit). `/proc/kallsyms` is read once; each address is
//! then classified by a binary search over the few functions that matter.

use crate::profile::kallsyms::KernelSymbols;

/// Where a blocked thread waited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Site {
    #[default]
    Unknown = 0,
    Sleep,
    Futex,
    Poll,
    ChildWait,
    Pipe,
    Socket,
    Tty,
    BlockIo,
    Fsync,
    Exec,
    Fork,
    KernelLock,
    Read,
    Write,
    PageFault,
    Exit,
}

/// A classified address range.
#[derive(Debug, Clone, Copy)]
struct Range {
    start: u64,
    end: u64,
    site: Site,
    /// A syscall entry (outermost) rather than an inner hint.
    syscall: bool,
}

/// Kernel symbols that classify blocking sites.
#[derive(Debug, Default)]
pub struct Ksyms {
    ranges: Vec<Range>,
    /// The address of `hrtimer_wakeup` (the function of every sleeping
    /// timer), when kallsyms shows addresses.
    pub hrtimer_wakeup: Option<u64>,
}

fn syscall_site(name: &str) -> Option<Site> {
    Some(match name {
        "fsync" | "fdatasync" | "sync_file_range" | "syncfs" | "sync" | "msync" => Site::Fsync,
        "nanosleep" | "clock_nanosleep" => Site::Sleep,
        "futex" | "futex_waitv" => Site::Futex,
        "poll" | "ppoll" | "select" | "pselect6" | "epoll_wait" | "epoll_pwait"
        | "epoll_pwait2" | "io_uring_enter" | "io_getevents" | "io_pgetevents" | "pause"
        | "rt_sigsuspend" | "rt_sigtimedwait" | "accept" | "accept4" | "connect" => Site::Poll,
        "wait4" | "waitid" => Site::ChildWait,
        "read" | "readv" | "pread64" | "preadv" | "preadv2" | "recvfrom" | "recvmsg"
        | "recvmmsg" => Site::Read,
        "write" | "writev" | "pwrite64" | "pwritev" | "pwritev2" | "sendto" | "sendmsg"
        | "sendmmsg" | "splice" => Site::Write,
        "execve" | "execveat" => Site::Exec,
        "clone" | "clone3" | "fork" | "vfork" => Site::Fork,
        "flock" => Site::KernelLock,
        "exit" | "exit_group" => Site::Exit,
        _ => return None,
    })
}

fn inner_site(name: &str) -> Option<Site> {
    Some(match name {
        "io_schedule"
        | "io_schedule_timeout"
        | "folio_wait_bit_common"
        | "__folio_lock"
        | "folio_wait_bit"
        | "bit_wait_io"
        | "blk_mq_get_tag"
        | "__wait_on_buffer"
        | "wait_on_page_bit_common"
        | "__lock_page" => Site::BlockIo,
        "jbd2_log_wait_commit" | "file_write_and_wait_range" | "vfs_fsync_range" => Site::Fsync,
        "pipe_read" | "pipe_write" | "pipe_wait_readable" | "pipe_wait_writable" => Site::Pipe,
        "unix_stream_read_generic"
        | "unix_stream_data_wait"
        | "sk_wait_data"
        | "__skb_wait_for_more_packets"
        | "tcp_recvmsg_locked"
        | "sk_stream_wait_memory"
        | "inet_csk_accept"
        | "unix_wait_for_peer" => Site::Socket,
        "n_tty_read" | "tty_read" => Site::Tty,
        "futex_wait_queue" | "futex_wait_queue_me" | "__futex_wait" => Site::Futex,
        "do_nanosleep" => Site::Sleep,
        "do_sys_poll" | "do_select" | "ep_poll" | "io_cqring_wait" | "do_epoll_wait" => Site::Poll,
        "do_wait" | "kernel_waitid" => Site::ChildWait,
        "wait_for_vfork_done" => Site::Fork,
        "rwsem_down_read_slowpath"
        | "rwsem_down_write_slowpath"
        | "__mutex_lock"
        | "__mutex_lock_slowpath"
        | "locks_lock_inode_wait" => Site::KernelLock,
        "exc_page_fault" | "handle_mm_fault" | "filemap_fault" => Site::PageFault,
        _ => return None,
    })
}

impl Ksyms {
    /// From `/proc/kallsyms`; empty when it hides addresses (not root).
    pub fn load() -> Ksyms {
        Ksyms::from_symbols(&KernelSymbols::get())
    }

    /// From kallsyms text (the tests' samples).
    #[cfg(test)]
    pub fn parse(text: &str) -> Ksyms {
        Ksyms::from_symbols(&KernelSymbols::parse(text.as_bytes()))
    }

    fn from_symbols(k: &KernelSymbols) -> Ksyms {
        // Every text symbol's start, to bound each classified one.
        let mut starts: Vec<u64> = Vec::with_capacity(k.len());
        let mut wanted: Vec<(u64, Site, bool)> = Vec::new();
        let mut hrtimer_wakeup = None;
        for (addr, name) in k.iter() {
            starts.push(addr);
            // Strip compiler suffixes: "do_wait.part.0", "foo.isra.0".
            let base = name.split('.').next().unwrap_or(name);
            if base == "hrtimer_wakeup" {
                hrtimer_wakeup = Some(addr);
            }
            let sys = ["__x64_sys_", "__arm64_sys_", "__riscv_sys_", "__se_sys_"]
                .iter()
                .find_map(|p| base.strip_prefix(p));
            if let Some(s) = sys.and_then(syscall_site) {
                wanted.push((addr, s, true));
            } else if let Some(s) = inner_site(base) {
                wanted.push((addr, s, false));
            }
        }
        starts.sort_unstable();
        starts.dedup();
        let mut ranges: Vec<Range> = wanted
            .into_iter()
            .map(|(start, site, syscall)| {
                let i = starts.partition_point(|&a| a <= start);
                let end = starts.get(i).copied().unwrap_or(start + 4096);
                Range {
                    start,
                    end,
                    site,
                    syscall,
                }
            })
            .collect();
        ranges.sort_by_key(|r| r.start);
        Ksyms {
            ranges,
            hrtimer_wakeup,
        }
    }

    /// Whether any address can be classified.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    fn lookup(&self, addr: u64) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.start <= addr);
        let r = self.ranges.get(i.checked_sub(1)?)?;
        (addr < r.end).then_some(r)
    }

    /// Classify a kernel call chain (innermost first; perf's context
    /// markers, values above `u64::MAX - 4096`, are skipped).
    pub fn classify(&self, chain: impl Iterator<Item = u64>) -> Site {
        let mut syscall = None;
        let mut inner = None;
        for addr in chain {
            if addr >= u64::MAX - 4095 {
                continue;
            }
            if let Some(r) = self.lookup(addr) {
                if r.syscall {
                    syscall.get_or_insert(r.site);
                } else {
                    inner.get_or_insert(r.site);
                }
            }
        }
        decide(syscall, inner)
    }
}

/// The syscall says what was asked; an inner frame says what it waited on.
fn decide(syscall: Option<Site>, inner: Option<Site>) -> Site {
    match (syscall, inner) {
        (Some(Site::Fsync), _) | (_, Some(Site::Fsync)) => Site::Fsync,
        (_, Some(Site::BlockIo)) => Site::BlockIo,
        (Some(Site::Read | Site::Write), Some(i)) => i,
        (Some(Site::Read | Site::Write), None) => Site::Poll,
        (Some(s), _) => s,
        (None, Some(i)) => i,
        (None, None) => Site::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
ffffffff81000000 T _stext
ffffffff81100000 t pipe_read
ffffffff81100400 t pipe_write
ffffffff81200000 T __x64_sys_read
ffffffff81200100 T __x64_sys_write
ffffffff81300000 T __x64_sys_fsync
ffffffff81300100 T __x64_sys_futex
ffffffff81400000 t io_schedule
ffffffff81400100 t folio_wait_bit_common
ffffffff81500000 t do_wait.part.0
ffffffff81500400 T __x64_sys_wait4
ffffffff81600000 t hrtimer_wakeup
ffffffff81600100 T __x64_sys_nanosleep
ffffffff81700000 T schedule
";

    #[test]
    fn classifies_chains_by_syscall_and_inner_frames() {
        let k = Ksyms::parse(SAMPLE);
        assert_eq!(k.hrtimer_wakeup, Some(0xffffffff81600000));
        let c = |v: &[u64]| k.classify(v.iter().copied());
        // schedule <- pipe_read <- __x64_sys_read
        assert_eq!(
            c(&[0xffffffff81700010, 0xffffffff81100020, 0xffffffff81200010]),
            Site::Pipe
        );
        // a read that waited on the disk
        assert_eq!(c(&[0xffffffff81400010, 0xffffffff81200010]), Site::BlockIo);
        // fsync, whatever it waited on inside
        assert_eq!(c(&[0xffffffff81400010, 0xffffffff81300010]), Site::Fsync);
        assert_eq!(c(&[0xffffffff81300110]), Site::Futex);
        assert_eq!(
            c(&[0xffffffff81500010, 0xffffffff81500410]),
            Site::ChildWait
        );
        assert_eq!(c(&[0xffffffff81600110]), Site::Sleep);
        // perf's context marker and unknown addresses
        assert_eq!(c(&[u64::MAX - 127, 0xffffffff81000010]), Site::Unknown);
        assert_eq!(c(&[]), Site::Unknown);
        assert!(Ksyms::parse("0000000000000000 T hidden\n").is_empty());
    }
}
