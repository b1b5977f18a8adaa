//! Probes of the CPU core: the latency of the spin-wait hint (PAUSE on x86, 10
//! cycles before Skylake and ~140 after: seed 004), and the effective clock rate
//! over time from a dependent chain of adds (governor, turbo, throttling, ramp-up).

use super::result::ProbeResult;
use super::sample::{Budget, Measure, now_ns};

/// TSC ticks per ns, measured against the monotonic clock over `ms`.
#[cfg(target_arch = "x86_64")]
fn tsc_per_ns(ms: u64) -> f64 {
    use core::arch::x86_64::_rdtsc;
    // SAFETY: rdtsc has no preconditions on x86_64.
    let (t0, c0) = (now_ns(), unsafe { _rdtsc() });
    while now_ns() - t0 < ms * 1_000_000 {
        std::hint::spin_loop();
    }
    // SAFETY: as above.
    let (t1, c1) = (now_ns(), unsafe { _rdtsc() });
    (c1 - c0) as f64 / (t1 - t0) as f64
}

/// Probe 9: PAUSE latency as MariaDB's detector measures it: the TSC around 16
/// unrolled PAUSEs, twice in a row, keeping the faster half; repeated, min kept.
#[cfg(target_arch = "x86_64")]
pub fn pause(budget: &Budget) -> ProbeResult {
    use core::arch::x86_64::{_mm_pause, _rdtsc};
    let mut r = ProbeResult::new("pause", "spin-wait hint (PAUSE)");
    let per_ns = tsc_per_ns(budget.pick(20, 5));
    let mut samples = Vec::new();
    for _ in 0..budget.pick(2000, 300) {
        // SAFETY: rdtsc and pause have no preconditions on x86_64.
        let (t0, t1, t2) = unsafe {
            let t0 = _rdtsc();
            for _ in 0..16 {
                _mm_pause();
            }
            let t1 = _rdtsc();
            for _ in 0..16 {
                _mm_pause();
            }
            (t0, t1, _rdtsc())
        };
        let fast = (t1 - t0).min(t2 - t1);
        samples.push(fast as f64 / 16.0);
    }
    let ns: Vec<f64> = samples.iter().map(|c| c / per_ns).collect();
    r.measures.push(Measure::new(
        "pause_cycles",
        "PAUSE latency in TSC cycles",
        "cycles",
        16,
        samples,
    ));
    r.measures
        .push(Measure::new("pause_ns", "PAUSE latency", "ns", 16, ns));
    r.fact("tsc_ghz", per_ns);
    r
}

/// Probe 9 on aarch64: the YIELD hint, timed in batches with the monotonic clock.
#[cfg(target_arch = "aarch64")]
pub fn pause(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("pause", "spin-wait hint (YIELD)");
    r.measures.push(super::sample::batched(
        "pause_ns",
        "YIELD latency",
        budget,
        |n| {
            for _ in 0..n {
                // SAFETY: yield is a hint with no effects on memory or registers.
                unsafe { core::arch::asm!("yield") };
            }
        },
    ));
    r
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn pause(_budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("pause", "spin-wait hint");
    r.unavailable = Some(format!("no spin-wait probe for {}", std::env::consts::ARCH));
    r
}

/// `iters` x 100 dependent register-register adds: one cycle each on any core of the
/// last 20 years. (An immediate operand would not do: Golden Cove-class cores fold
/// chains of `add reg, imm` at rename, several per cycle.)
#[cfg(target_arch = "x86_64")]
fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n = iters.max(1);
    // SAFETY: register-only arithmetic; the loop count is positive.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {one}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            one = in(reg) 1u64,
            options(nomem, nostack),
        );
    }
    let _ = n;
    x
}

#[cfg(target_arch = "aarch64")]
fn add_chain(iters: u64) -> u64 {
    let mut x: u64 = 0;
    let mut n = iters.max(1);
    // SAFETY: register-only arithmetic; the loop count is positive.
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {x}, #1",
            ".endr",
            "subs {n}, {n}, #1",
            "b.ne 2b",
            x = inout(reg) x,
            n = inout(reg) n,
            options(nomem, nostack),
        );
    }
    let _ = n;
    x
}

/// Probe 10: effective frequency in ~1 ms slices over ~200 ms, after a short idle
/// pause so that a slow ramp-up shows in the first slices.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn frequency(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("frequency", "effective CPU frequency");
    std::thread::sleep(std::time::Duration::from_millis(budget.pick(50, 10)));
    // 3,000,000 adds: ~1 ms at 3 GHz.
    let iters = 30_000u64;
    let total = budget.pick(200_000_000u64, 50_000_000);
    let start = now_ns();
    let mut slices = Vec::new();
    let mut at = Vec::new();
    while now_ns() - start < total {
        let t0 = now_ns();
        std::hint::black_box(add_chain(std::hint::black_box(iters)));
        let dt = (now_ns() - t0).max(1);
        slices.push((iters * 100) as f64 / dt as f64);
        at.push((t0 - start) as f64 / 1e6);
    }
    let first = slices.first().copied().unwrap_or(f64::NAN);
    let m = Measure::new(
        "ghz",
        "adds per ns (effective GHz) per ~1 ms slice",
        "GHz",
        iters * 100,
        slices.clone(),
    )
    .higher_is_better();
    // Ramp-up: the first slice at 90% of the steady (median) rate.
    let steady = m.median;
    if let Some(i) = slices.iter().position(|&g| g >= 0.9 * steady) {
        r.fact("ramp_ms", at[i]);
    }
    r.fact("first_slice_ghz", first);
    if let Some(khz) =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
    {
        r.fact("max_ghz", khz / 1e6);
        r.fact("max_ghz_source", "cpuinfo_max_freq");
    } else if let Some(ghz) = advertised_ghz() {
        r.fact("max_ghz", ghz);
        r.fact("max_ghz_source", "CPU model name");
    } else if let Some(mhz) =
        super::fingerprint::cpuinfo_field("cpu MHz").and_then(|s| s.parse::<f64>().ok())
    {
        // In a virtual machine this is the host's nominal (TSC) rate.
        r.fact("max_ghz", mhz / 1e3);
        r.fact("max_ghz_source", "cpu MHz in /proc/cpuinfo (nominal)");
    }
    r.measures.push(m);
    r
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn frequency(_budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("frequency", "effective CPU frequency");
    r.unavailable = Some(format!("no add-chain probe for {}", std::env::consts::ARCH));
    r
}

/// "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz" -> 2.4.
fn advertised_ghz() -> Option<f64> {
    let model = super::fingerprint::cpu_model()?;
    let at = model.rfind('@')?;
    model[at + 1..]
        .trim()
        .trim_end_matches("GHz")
        .trim()
        .parse()
        .ok()
}
