//! What every probe produces and how it times things: [`Measure`] (raw samples with
//! their min/median/p90), the monotonic clock, and lmbench-style auto-calibrated
//! batches (enough operations per batch to be timed well, at least 7 batches).

use serde::{Deserialize, Serialize};

use crate::stats::summary::quantile_sorted;

/// One measured quantity of a probe, e.g. "sleep 1 ms: actual duration".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Stable key within the probe, e.g. `sleep_1ms`.
    pub key: String,
    /// What it is, in words.
    pub label: String,
    /// `ns`, `cycles`, `GHz`, `share` (0..1) or `ratio`.
    pub unit: String,
    pub min: f64,
    pub median: f64,
    pub p90: f64,
    /// Operations timed together for one sample (the per-operation value is the
    /// batch's time divided by this).
    pub batch: u64,
    /// Larger values are better (frequency, CPU share); otherwise smaller is.
    #[serde(default)]
    pub higher_is_better: bool,
    /// The raw per-operation samples (kept by `--save`; left out of `--json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
}

impl Measure {
    /// Summarise `samples` (at least one) as a measure.
    pub fn new(key: &str, label: &str, unit: &str, batch: u64, samples: Vec<f64>) -> Measure {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Measure {
            key: key.to_string(),
            label: label.to_string(),
            unit: unit.to_string(),
            min: sorted.first().copied().unwrap_or(f64::NAN),
            median: quantile_sorted(&sorted, 0.5),
            p90: quantile_sorted(&sorted, 0.9),
            batch,
            higher_is_better: false,
            samples,
        }
    }

    pub fn higher_is_better(mut self) -> Measure {
        self.higher_is_better = true;
        self
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// How long a probe may take: the full run or `--quick`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Target duration of one timed batch.
    pub batch_ns: u64,
    /// Batches per measure (at least 7).
    pub batches: usize,
    pub quick: bool,
}

impl Budget {
    pub fn new(quick: bool) -> Budget {
        if quick {
            Budget {
                batch_ns: 1_000_000,
                batches: 7,
                quick,
            }
        } else {
            Budget {
                batch_ns: 2_000_000,
                batches: 15,
                quick,
            }
        }
    }

    /// `full` in a full run, `quick` under `--quick`.
    pub fn pick<T>(&self, full: T, quick: T) -> T {
        if self.quick { quick } else { full }
    }
}

/// Time `op(n)` (which performs `n` operations) in calibrated batches and return the
/// per-operation nanoseconds: the batch size grows until one batch lasts
/// `budget.batch_ns`, one batch is discarded as warm-up, then `budget.batches` are kept.
pub fn batched(key: &str, label: &str, budget: &Budget, mut op: impl FnMut(u64)) -> Measure {
    let mut n: u64 = 1;
    loop {
        let t0 = now_ns();
        op(n);
        let t = now_ns().saturating_sub(t0).max(1);
        if t >= budget.batch_ns || n >= 1 << 32 {
            break;
        }
        let grow = (budget.batch_ns as f64 / t as f64 * 1.2).clamp(2.0, 100.0);
        n = ((n as f64) * grow).ceil() as u64;
    }
    op(n); // warm-up
    let samples = (0..budget.batches)
        .map(|_| {
            let t0 = now_ns();
            op(n);
            now_ns().saturating_sub(t0) as f64 / n as f64
        })
        .collect();
    Measure::new(key, label, "ns", n, samples)
}

/// Time `op()` once per sample, `count` times after one warm-up, in ns.
pub fn each(key: &str, label: &str, count: usize, mut op: impl FnMut()) -> Measure {
    op();
    let samples = (0..count)
        .map(|_| {
            let t0 = now_ns();
            op();
            now_ns().saturating_sub(t0) as f64
        })
        .collect();
    Measure::new(key, label, "ns", 1, samples)
}

/// A scratch directory inside `dir` (removed on drop), or why there cannot be one.
pub fn scratch_dir(dir: &std::path::Path, prefix: &str) -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(dir)
        .map_err(|e| format!("cannot create a directory in {}: {e}", dir.display()))
}

/// Pin the calling thread to one CPU (Linux); returns false where it cannot.
pub fn pin_to(cpu: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: cpu_set_t is plain data; we pass its true size.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpu;
        false
    }
}

/// Restore the calling thread's affinity to `cpus`.
pub fn pin_to_set(cpus: &[usize]) {
    #[cfg(target_os = "linux")]
    // SAFETY: as in pin_to.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cpus;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_summarises() {
        let m = Measure::new("k", "l", "ns", 1, vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((m.min, m.median), (1.0, 3.0));
        assert!((m.p90 - 4.6).abs() < 1e-12);
    }

    #[test]
    fn batches_are_calibrated_and_at_least_seven() {
        let b = Budget::new(true);
        let m = batched("spin", "spin", &b, |n| {
            for i in 0..n {
                std::hint::black_box(i);
            }
        });
        assert_eq!(m.samples.len(), 7);
        assert!(m.batch > 1000, "{}", m.batch);
    }
}
