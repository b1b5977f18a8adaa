//! The machine a measurement was taken on: the fingerprint's fields (probe
//! captures them) and what differs between two.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: Option<String>,
    /// `uname -s`, e.g. "Linux".
    pub os: Option<String>,
    /// `uname -r`.
    pub kernel: Option<String>,
    pub arch: String,
    pub cpu_model: Option<String>,
    pub logical_cpus: Option<usize>,
    /// Distinct (package, core) pairs; fewer than logical CPUs means SMT.
    pub physical_cores: Option<usize>,
    /// CPUs this process may run on (sched_getaffinity).
    pub affinity: Option<Vec<usize>>,
    /// cgroup CPU quota in CPUs (quota / period); `None` when unlimited or unreadable.
    pub cgroup_cpu_quota: Option<f64>,
    /// cpufreq scaling governor of CPU 0, e.g. "performance".
    pub governor: Option<String>,
    /// Current clocksource, e.g. "tsc" (hpet or acpi_pm make every timestamp slow).
    pub clocksource: Option<String>,
    /// This process's timer slack in ns (50,000 by default on Linux).
    pub timer_slack_ns: Option<u64>,
    pub memory_total_bytes: Option<u64>,
    /// 1, 5 and 15 minute load averages when the session started.
    pub load_avg_before: Option<[f64; 3]>,
    /// The same when the session ended.
    pub load_avg_after: Option<[f64; 3]>,
    /// CPU microcode revision (/proc/cpuinfo), e.g. "0xf0".
    pub microcode: Option<String>,
    /// Simultaneous multithreading active (/sys/devices/system/cpu/smt/active).
    pub smt_active: Option<bool>,
    /// cgroup v2 `cpu.stat` throttling counters of this process's cgroup.
    pub cgroup_throttling: Option<Throttling>,
    /// Turbo/boost enabled (intel_pstate/no_turbo inverted, or cpufreq/boost).
    pub turbo: Option<bool>,
    /// cpufreq energy_performance_preference of CPU 0, e.g. "balance_performance".
    pub energy_preference: Option<String>,
    /// Highest frequency CPU 0 may reach (cpuinfo_max_freq), kHz.
    pub max_freq_khz: Option<u64>,
    /// cpuidle driver, e.g. "intel_idle", "acpi_idle", "haltpoll".
    pub cpuidle_driver: Option<String>,
    /// Every clocksource the kernel could use.
    pub clocksources_available: Option<Vec<String>>,
    /// clock_getres(CLOCK_MONOTONIC) in ns: 1 with high-resolution timers.
    pub clock_res_monotonic_ns: Option<u64>,
    /// clock_getres(CLOCK_MONOTONIC_COARSE) in ns: one jiffy (1/HZ), e.g. 4,000,000 at HZ=250.
    pub clock_res_coarse_ns: Option<u64>,
    /// Transparent huge pages mode: "always", "madvise" or "never".
    pub transparent_hugepages: Option<String>,
    pub swappiness: Option<u64>,
    /// /proc/sys/kernel/randomize_va_space: 0 off, 1 partial, 2 full.
    pub aslr: Option<u64>,
    /// CPU vulnerabilities and their mitigation state, by name.
    pub vulnerabilities: Option<BTreeMap<String, String>>,
    /// The CPU's hypervisor flag: running in a virtual machine.
    pub hypervisor: Option<bool>,
    /// DMI system vendor and product, e.g. "QEMU Standard PC".
    pub dmi_system: Option<String>,
    pub memory_available_bytes: Option<u64>,
    /// Steal time since boot across all CPUs (USER_HZ ticks; column 8 of /proc/stat).
    pub steal_ticks: Option<u64>,
    /// Filesystem type of the working directory, e.g. "ext4", "overlayfs", "tmpfs".
    pub cwd_filesystem: Option<String>,
    /// Environment variables that change how runtimes use the machine.
    pub runtime_env: Option<BTreeMap<String, String>>,
}

/// cgroup v2 CPU bandwidth counters (`cpu.stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Throttling {
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_usec: u64,
}

impl Fingerprint {
    /// The settings that differ between two fingerprints, as (what, this, other) in
    /// words, most consequential first. Hostnames and load are left out.
    pub fn differences(&self, other: &Fingerprint) -> Vec<(&'static str, String, String)> {
        fn show<T: std::fmt::Debug>(v: &Option<T>) -> String {
            match v {
                Some(v) => format!("{v:?}").trim_matches('"').to_string(),
                None => "unknown".to_string(),
            }
        }
        let mut out = Vec::new();
        let mut check = |what: &'static str, a: String, b: String, known: bool| {
            if known && a != b {
                out.push((what, a, b));
            }
        };
        macro_rules! field {
            ($name:literal, $f:ident) => {
                check(
                    $name,
                    show(&self.$f),
                    show(&other.$f),
                    self.$f.is_some() && other.$f.is_some(),
                )
            };
        }
        field!("CPU model", cpu_model);
        field!("clocksource", clocksource);
        field!("timer slack (ns)", timer_slack_ns);
        field!("monotonic clock resolution (ns)", clock_res_monotonic_ns);
        field!("jiffy (coarse clock resolution, ns)", clock_res_coarse_ns);
        field!("logical CPUs", logical_cpus);
        field!("physical cores", physical_cores);
        field!("cgroup CPU quota", cgroup_cpu_quota);
        field!("governor", governor);
        field!("turbo", turbo);
        field!("energy preference", energy_preference);
        field!("max frequency (kHz)", max_freq_khz);
        field!("SMT active", smt_active);
        field!("microcode", microcode);
        field!("kernel", kernel);
        field!("cpuidle driver", cpuidle_driver);
        field!("virtual machine", hypervisor);
        field!("transparent huge pages", transparent_hugepages);
        field!("ASLR", aslr);
        field!("filesystem of the working directory", cwd_filesystem);
        field!("runtime environment variables", runtime_env);
        field!("CPU vulnerabilities", vulnerabilities);
        field!("swappiness", swappiness);
        field!("os", os);
        out
    }
}
