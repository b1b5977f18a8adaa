//! Probes of time itself: how long a short sleep really lasts (timer slack, HZ,
//! the 15.6 ms quantum of seed 000), what reading the clock costs (vDSO or a real
//! system call: clocksource tsc against hpet/acpi_pm/xen), and the cost of a null
//! system call (kernel entry, mitigations).

use super::result::ProbeResult;
use super::sample::{Budget, Measure, batched, now_ns};

fn sleep_ns(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    #[cfg(target_os = "linux")]
    // SAFETY: a relative sleep on a timespec we own; no remaining-time output.
    unsafe {
        libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut());
    }
    #[cfg(not(target_os = "linux"))]
    // SAFETY: as above.
    unsafe {
        libc::nanosleep(&ts, std::ptr::null_mut());
    }
}

/// Probe 1: `clock_nanosleep` of 1 ms and 100 µs (actual duration and overshoot),
/// a zero-length sleep and `sched_yield`.
pub fn sleep(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("sleep", "sleep granularity");
    for (key, label, ns, count) in [
        (
            "sleep_1ms",
            "clock_nanosleep(1 ms): overshoot",
            1_000_000u64,
            budget.pick(100, 25),
        ),
        (
            "sleep_100us",
            "clock_nanosleep(100 µs): overshoot",
            100_000,
            budget.pick(200, 50),
        ),
    ] {
        sleep_ns(ns);
        let samples: Vec<f64> = (0..count)
            .map(|_| {
                let t0 = now_ns();
                sleep_ns(ns);
                now_ns().saturating_sub(t0) as f64 - ns as f64
            })
            .collect();
        r.measures.push(Measure::new(key, label, "ns", 1, samples));
    }
    r.measures
        .push(batched("sleep_0", "nanosleep(0)", budget, |n| {
            for _ in 0..n {
                sleep_ns(0);
            }
        }));
    r.measures
        .push(batched("yield", "sched_yield()", budget, |n| {
            for _ in 0..n {
                // SAFETY: no arguments, no memory.
                unsafe { libc::sched_yield() };
            }
        }));
    if let Some(slack) = std::fs::read_to_string("/proc/self/timerslack_ns")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        r.fact("timer_slack_ns", slack);
    }
    r
}

fn gettime(clock: libc::clockid_t) -> libc::timespec {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes one timespec we own.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts
}

/// Probe 2: `clock_gettime(MONOTONIC)` through libc (the vDSO) against the raw
/// system call; a ratio near 1 means the vDSO falls back to the kernel.
pub fn clock(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("clock", "clock read cost");
    r.measures.push(batched(
        "vdso",
        "clock_gettime(MONOTONIC) via libc/vDSO",
        budget,
        |n| {
            for _ in 0..n {
                std::hint::black_box(gettime(libc::CLOCK_MONOTONIC));
            }
        },
    ));
    #[cfg(target_os = "linux")]
    {
        r.measures.push(batched(
            "syscall",
            "clock_gettime(MONOTONIC) as a system call",
            budget,
            |n| {
                let mut ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                for _ in 0..n {
                    // SAFETY: the raw system call writes one timespec we own.
                    unsafe {
                        libc::syscall(
                            libc::SYS_clock_gettime,
                            libc::CLOCK_MONOTONIC,
                            &mut ts as *mut libc::timespec,
                        )
                    };
                    std::hint::black_box(&ts);
                }
            },
        ));
        r.measures.push(batched(
            "coarse",
            "clock_gettime(MONOTONIC_COARSE)",
            budget,
            |n| {
                for _ in 0..n {
                    std::hint::black_box(gettime(libc::CLOCK_MONOTONIC_COARSE));
                }
            },
        ));
        if let (Some(v), Some(s)) = (r.measure("vdso"), r.measure("syscall")) {
            let ratio = s.median / v.median;
            r.fact("syscall_over_vdso", ratio);
        }
    }
    if let Ok(cs) =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    {
        r.fact("clocksource", cs.trim());
    }
    r
}

/// Probe 3: a null system call (`getppid` by raw syscall, lmbench's `lat_syscall null`)
/// and a 1-byte read of /dev/zero.
pub fn syscall(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("syscall", "null system call");
    #[cfg(target_os = "linux")]
    r.measures
        .push(batched("getppid", "syscall(getppid)", budget, |n| {
            for _ in 0..n {
                // SAFETY: getppid takes no arguments.
                std::hint::black_box(unsafe { libc::syscall(libc::SYS_getppid) });
            }
        }));
    if let Ok(f) = std::fs::File::open("/dev/zero") {
        use std::os::fd::AsRawFd;
        let fd = f.as_raw_fd();
        r.measures.push(batched(
            "read_1b",
            "read 1 byte of /dev/zero",
            budget,
            |n| {
                let mut b = [0u8; 1];
                for _ in 0..n {
                    // SAFETY: reads at most 1 byte into our buffer from an open fd.
                    std::hint::black_box(unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) });
                }
            },
        ));
    }
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") {
        let (mut mitigated, mut vulnerable) = (0u64, 0u64);
        for e in dir.flatten() {
            let v = std::fs::read_to_string(e.path()).unwrap_or_default();
            if v.starts_with("Mitigation") {
                mitigated += 1;
            } else if v.starts_with("Vulnerable") {
                vulnerable += 1;
            }
        }
        r.fact("mitigations_active", mitigated);
        r.fact("vulnerable", vulnerable);
    }
    if r.measures.is_empty() {
        r.unavailable = Some("no raw system call interface on this OS".into());
    }
    r
}
