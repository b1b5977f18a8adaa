//! The CPU's own counters through `perf_event_open`.
//!
//! The trampoline ([`crate::measure::trampoline`]) opens one counter per
//! event on itself, disabled and inherited, enables them just before it forks
//! the command and disables them once `wait4` returns. The kernel adds each
//! exited descendant's count into its parent's, so one read at the end gives
//! the whole process tree (shell, children, threads) without touching the
//! command, and the counts cost nothing while it runs. What the trampoline
//! itself executes between the enable and the fork is a few hundred
//! instructions, the same in every run.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use perf_event_open_sys as sys;
use sys::bindings as b;

/// The events to count on the PMU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmuSpec {
    pub instructions: bool,
    pub cycles: bool,
    /// Count in the kernel too (where `perf_event_paranoid` allows it).
    pub kernel: bool,
}

/// The trampoline's argument that carries a [`PmuSpec`].
pub const ARG_PREFIX: &str = "--count=";

impl PmuSpec {
    pub fn events(&self) -> Vec<String> {
        let suffix = if self.kernel { "" } else { ":u" };
        if let Some((_, sw)) = software_override() {
            return vec![format!(
                "{sw}{suffix} (the software event {EVENT_OVERRIDE} named, counted in place of every hardware event: not instructions)"
            )];
        }
        let mut v = Vec::new();
        if self.instructions {
            v.push(format!("instructions{suffix}"));
        }
        if self.cycles {
            v.push(format!("cycles{suffix}"));
        }
        v
    }

    /// As the trampoline's argument.
    pub fn to_arg(&self) -> String {
        let mut s = String::from(ARG_PREFIX);
        if self.instructions {
            s.push('i');
        }
        if self.cycles {
            s.push('c');
        }
        if self.kernel {
            s.push('k');
        }
        s
    }

    pub fn from_arg(arg: &str) -> Option<PmuSpec> {
        let flags = arg.strip_prefix(ARG_PREFIX)?;
        Some(PmuSpec {
            instructions: flags.contains('i'),
            cycles: flags.contains('c'),
            kernel: flags.contains('k'),
        })
    }
}

/// `TARDY_PMU_EVENT=task-clock|page-faults|context-switches`: count that
/// software event in place of every hardware one. For machines without a PMU
/// (CI's VMs, this project's own) to run the whole counting path: the
/// trampoline's inherited counters, enabled around the fork and read after
/// `wait4`. The results name the substitute in `counter.events`, so such a
/// file can never pass for instructions.
pub const EVENT_OVERRIDE: &str = "TARDY_PMU_EVENT";

fn software_override() -> Option<(u64, &'static str)> {
    let name = std::env::var(EVENT_OVERRIDE).ok()?;
    [
        (b::PERF_COUNT_SW_TASK_CLOCK as u64, "task-clock"),
        (b::PERF_COUNT_SW_PAGE_FAULTS as u64, "page-faults"),
        (b::PERF_COUNT_SW_CONTEXT_SWITCHES as u64, "context-switches"),
    ]
    .into_iter()
    .find(|(_, n)| *n == name)
}

fn attr(config: u32, kernel: bool) -> sys::bindings::perf_event_attr {
    let mut a = sys::bindings::perf_event_attr::default();
    a.size = std::mem::size_of::<sys::bindings::perf_event_attr>() as u32;
    match software_override() {
        Some((sw, _)) => {
            a.type_ = b::PERF_TYPE_SOFTWARE;
            a.config = sw;
        }
        None => {
            a.type_ = b::PERF_TYPE_HARDWARE;
            a.config = config as u64;
        }
    }
    a.read_format = (b::PERF_FORMAT_TOTAL_TIME_ENABLED | b::PERF_FORMAT_TOTAL_TIME_RUNNING) as u64;
    a.set_disabled(1);
    a.set_inherit(1);
    a.set_exclude_hv(1);
    if !kernel {
        a.set_exclude_kernel(1);
    }
    a
}

/// Open one hardware counter on this process and what it will start.
fn open(config: u32, kernel: bool) -> io::Result<OwnedFd> {
    let mut a = attr(config, kernel);
    // SAFETY: a fully initialised attr; pid 0 (this process), any CPU.
    let fd = unsafe {
        sys::perf_event_open(&mut a, 0, -1, -1, sys::bindings::PERF_FLAG_FD_CLOEXEC as _)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether this machine counts instructions (and, with `kernel`, in the kernel
/// too); the reason when not, in words.
pub fn available(kernel: bool) -> Result<(), String> {
    match open(b::PERF_COUNT_HW_INSTRUCTIONS, kernel) {
        Ok(_) => Ok(()),
        Err(e) => Err(why(&e, kernel)),
    }
}

/// A failed open, in words.
pub fn why(e: &io::Error, kernel: bool) -> String {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) | Some(libc::ENODEV) => {
            "the kernel exposes no hardware counters here, as in most VMs and containers".into()
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "?".into());
            if kernel {
                format!(
                    "kernel counts are not permitted (perf_event_paranoid is {paranoid}; 1 or lower allows them)"
                )
            } else {
                format!(
                    "counters are not permitted (perf_event_paranoid is {paranoid}; 2 or lower allows user-space counts)"
                )
            }
        }
        Some(libc::ENOSYS) => "this kernel has no perf_event_open".into(),
        _ => format!("perf_event_open failed: {e}"),
    }
}

/// Counters the trampoline holds around one command.
pub struct Open {
    fds: Vec<(u32, OwnedFd)>,
}

impl Open {
    /// Open every event of `spec`, disabled; the errno of the first refusal.
    pub fn new(spec: PmuSpec) -> Result<Open, i32> {
        let mut fds = Vec::new();
        for (wanted, config) in [
            (spec.instructions, b::PERF_COUNT_HW_INSTRUCTIONS),
            (spec.cycles, b::PERF_COUNT_HW_CPU_CYCLES),
        ] {
            if wanted {
                let fd = open(config, spec.kernel)
                    .map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL))?;
                fds.push((config, fd));
            }
        }
        Ok(Open { fds })
    }

    fn ioctl(&self, request: u64) {
        for (_, fd) in &self.fds {
            // SAFETY: an ioctl on a perf descriptor we own.
            unsafe { libc::ioctl(fd.as_raw_fd(), request as _, 0) };
        }
    }

    pub fn enable(&self) {
        self.ioctl(sys::bindings::ENABLE as u64);
    }

    pub fn disable(&self) {
        self.ioctl(sys::bindings::DISABLE as u64);
    }

    /// (instructions, cycles), each `u64::MAX` when not counted; scaled when
    /// the kernel multiplexed the counters (time running < time enabled).
    pub fn read(&self) -> [u64; 2] {
        let mut out = [u64::MAX; 2];
        for (config, fd) in &self.fds {
            let mut buf = [0u64; 3];
            // SAFETY: reading three u64s (value, enabled, running) into buf.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), 24) };
            if n != 24 {
                continue;
            }
            let [value, enabled, running] = buf;
            let value = if running > 0 && running < enabled {
                (value as f64 * enabled as f64 / running as f64).round() as u64
            } else {
                value
            };
            let slot = if *config == b::PERF_COUNT_HW_INSTRUCTIONS {
                0
            } else {
                1
            };
            out[slot] = value;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_survives_the_trampolines_argument() {
        for spec in [
            PmuSpec {
                instructions: true,
                cycles: false,
                kernel: false,
            },
            PmuSpec {
                instructions: true,
                cycles: true,
                kernel: true,
            },
        ] {
            assert_eq!(PmuSpec::from_arg(&spec.to_arg()), Some(spec));
        }
        assert_eq!(PmuSpec::from_arg("/bin/true"), None);
    }
}
