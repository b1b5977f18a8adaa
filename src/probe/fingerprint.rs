//! A machine fingerprint: the facts about the machine and its settings that
//! change run times, read from the kernel without timing anything (a few
//! milliseconds). Every field is optional: a fact that cannot be read here
//! (a container without /sys, a non-Linux system) is `null`, never a guess.

use std::collections::BTreeMap;
use std::fs;

pub use crate::model::{Fingerprint, Throttling};

impl Fingerprint {
    /// Read the fingerprint now (load average as "before").
    pub fn capture() -> Fingerprint {
        let (os, kernel, hostname) = uname();
        Fingerprint {
            hostname,
            os,
            kernel,
            arch: std::env::consts::ARCH.to_string(),
            cpu_model: cpu_model(),
            logical_cpus: Some(num_configured_cpus()).filter(|&n| n > 0),
            physical_cores: physical_cores(),
            affinity: affinity(),
            cgroup_cpu_quota: cgroup_cpu_quota(),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            clocksource: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            ),
            timer_slack_ns: read_trimmed("/proc/self/timerslack_ns").and_then(|s| s.parse().ok()),
            memory_total_bytes: memory_total(),
            load_avg_before: load_average(),
            load_avg_after: None,
            microcode: cpuinfo_field("microcode"),
            smt_active: read_trimmed("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            cgroup_throttling: cgroup_throttling(),
            turbo: turbo(),
            energy_preference: read_trimmed(
                "/sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference",
            ),
            max_freq_khz: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
                .and_then(|s| s.parse().ok()),
            cpuidle_driver: read_trimmed("/sys/devices/system/cpu/cpuidle/current_driver"),
            clocksources_available: read_trimmed(
                "/sys/devices/system/clocksource/clocksource0/available_clocksource",
            )
            .map(|s| s.split_whitespace().map(String::from).collect()),
            clock_res_monotonic_ns: clock_res(libc::CLOCK_MONOTONIC),
            clock_res_coarse_ns: coarse_res(),
            transparent_hugepages: read_trimmed("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|s| bracketed(&s)),
            swappiness: read_trimmed("/proc/sys/vm/swappiness").and_then(|s| s.parse().ok()),
            aslr: read_trimmed("/proc/sys/kernel/randomize_va_space").and_then(|s| s.parse().ok()),
            vulnerabilities: vulnerabilities(),
            hypervisor: cpuinfo_field("flags")
                .map(|f| f.split_whitespace().any(|x| x == "hypervisor")),
            dmi_system: dmi_system(),
            memory_available_bytes: meminfo("MemAvailable:"),
            steal_ticks: steal_ticks(),
            cwd_filesystem: std::env::current_dir()
                .ok()
                .and_then(|d| filesystem_type(&d)),
            runtime_env: runtime_env(),
        }
    }
}

/// /proc/cpuinfo, read once per process: the kernel formats every CPU's
/// entry on each read (a few hundred µs on a large machine), and a
/// session's fingerprint asks for several of its fields.
fn cpuinfo() -> Option<&'static str> {
    static INFO: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    INFO.get_or_init(|| fs::read_to_string("/proc/cpuinfo").ok())
        .as_deref()
}

pub(crate) fn cpuinfo_field(name: &str) -> Option<String> {
    let info = cpuinfo()?;
    info.lines()
        .find(|l| l.split(':').next().map(str::trim) == Some(name))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// "always [madvise] never" -> "madvise".
fn bracketed(s: &str) -> Option<String> {
    let start = s.find('[')?;
    let end = s[start..].find(']')? + start;
    Some(s[start + 1..end].to_string())
}

fn clock_res(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes one timespec we own.
    let rc = unsafe { libc::clock_getres(clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(target_os = "linux")]
fn coarse_res() -> Option<u64> {
    clock_res(libc::CLOCK_MONOTONIC_COARSE)
}

#[cfg(not(target_os = "linux"))]
fn coarse_res() -> Option<u64> {
    None
}

fn turbo() -> Option<bool> {
    if let Some(v) = read_trimmed("/sys/devices/system/cpu/intel_pstate/no_turbo") {
        return Some(v == "0");
    }
    read_trimmed("/sys/devices/system/cpu/cpufreq/boost").map(|v| v == "1")
}

fn vulnerabilities() -> Option<BTreeMap<String, String>> {
    let dir = fs::read_dir("/sys/devices/system/cpu/vulnerabilities").ok()?;
    let map: BTreeMap<String, String> = dir
        .flatten()
        .filter_map(|e| {
            let v = fs::read_to_string(e.path()).ok()?;
            Some((
                e.file_name().to_string_lossy().into_owned(),
                v.trim().to_string(),
            ))
        })
        .collect();
    (!map.is_empty()).then_some(map)
}

fn dmi_system() -> Option<String> {
    let vendor = read_trimmed("/sys/class/dmi/id/sys_vendor");
    let product = read_trimmed("/sys/class/dmi/id/product_name");
    match (vendor, product) {
        (Some(v), Some(p)) => Some(format!("{v} {p}")),
        (v, p) => v.or(p),
    }
}

pub(crate) fn meminfo(key: &str) -> Option<u64> {
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Steal ticks since boot: the 8th value of the aggregate `cpu` line of /proc/stat.
pub fn steal_ticks() -> Option<u64> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    line.split_whitespace().nth(8)?.parse().ok()
}

/// This process's cgroup v2 directory, when there is one.
fn cgroup_v2_dir() -> Option<String> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|path| format!("/sys/fs/cgroup{}", path.trim()))
}

/// cgroup v2 `cpu.stat` throttling counters.
pub fn cgroup_throttling() -> Option<Throttling> {
    let stat = fs::read_to_string(format!("{}/cpu.stat", cgroup_v2_dir()?)).ok()?;
    let get = |key: &str| -> Option<u64> {
        stat.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            .and_then(|v| v.trim().parse().ok())
    };
    Some(Throttling {
        nr_periods: get("nr_periods")?,
        nr_throttled: get("nr_throttled")?,
        throttled_usec: get("throttled_usec")?,
    })
}

/// The filesystem type of `dir`, from statfs's magic number.
#[cfg(target_os = "linux")]
pub fn filesystem_type(dir: &std::path::Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs is plain data; statfs fills it for a NUL-terminated path.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let name = match st.f_type as i64 {
        0xEF53 => "ext4",
        0x58465342 => "xfs",
        0x9123683E => "btrfs",
        0x01021994 => "tmpfs",
        0x794C7630 => "overlayfs",
        0x6969 => "nfs",
        0x01021997 => "9p",
        0x65735546 => "fuse",
        0x2FC12FC1 => "zfs",
        0x5346544E => "ntfs",
        0x4d44 => "vfat",
        0xFF534D42 => "cifs",
        0xFE534D42 => "smb2",
        0x6a656a63 => "virtiofs",
        0x73717368 => "squashfs",
        0xF2F52010 => "f2fs",
        0x858458F6 => "ramfs",
        other => return Some(format!("unknown (0x{other:x})")),
    };
    Some(name.to_string())
}

#[cfg(not(target_os = "linux"))]
pub fn filesystem_type(_dir: &std::path::Path) -> Option<String> {
    None
}

/// Variables that change how a runtime uses CPUs, memory or timers.
fn runtime_env() -> Option<BTreeMap<String, String>> {
    const EXACT: &[&str] = &[
        "GOMAXPROCS",
        "GOGC",
        "GOMEMLIMIT",
        "GODEBUG",
        "RAYON_NUM_THREADS",
        "RUST_TEST_THREADS",
        "NEXTEST_TEST_THREADS",
        "CARGO_BUILD_JOBS",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "MAVEN_OPTS",
        "GRADLE_OPTS",
        "NODE_OPTIONS",
        "UV_THREADPOOL_SIZE",
        "PYTHONHASHSEED",
        "PYTHONMALLOC",
        "PYTHONDEVMODE",
        "MALLOC_ARENA_MAX",
        "LD_PRELOAD",
        "LD_BIND_NOW",
    ];
    let map: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| {
            EXACT.contains(&k.as_str()) || k.starts_with("DOTNET_") || k.starts_with("COMPlus_")
        })
        .collect();
    Some(map)
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> Option<[f64; 3]> {
    let mut loads = [0f64; 3];
    // SAFETY: getloadavg writes at most 3 doubles into the array we pass.
    let n = unsafe { libc::getloadavg(loads.as_mut_ptr(), 3) };
    (n == 3).then_some(loads)
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn uname() -> (Option<String>, Option<String>, Option<String>) {
    // SAFETY: utsname is plain old data; uname fills it with NUL-terminated strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return (None, None, None);
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned()).filter(|s| !s.is_empty())
    };
    (field(&u.sysname), field(&u.release), field(&u.nodename))
}

fn num_configured_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 { n as usize } else { 0 }
}

pub(crate) fn cpu_model() -> Option<String> {
    let info = cpuinfo()?;
    info.lines()
        .find(|l| {
            l.starts_with("model name") || l.starts_with("Model") || l.starts_with("cpu model")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn physical_cores() -> Option<usize> {
    let mut cores = std::collections::BTreeSet::new();
    for entry in fs::read_dir("/sys/devices/system/cpu").ok()?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("cpu")
            && name[3..].chars().all(|c| c.is_ascii_digit())
            && name.len() > 3)
        {
            continue;
        }
        let topo = entry.path().join("topology");
        let package = fs::read_to_string(topo.join("physical_package_id")).ok();
        let core = fs::read_to_string(topo.join("core_id")).ok();
        if let (Some(p), Some(c)) = (package, core) {
            cores.insert((p.trim().to_string(), c.trim().to_string()));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

#[cfg(target_os = "linux")]
pub(crate) fn affinity() -> Option<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for pid 0 (us).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return None;
    }
    Some(
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect(),
    )
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn affinity() -> Option<Vec<usize>> {
    None
}

/// cgroup v2 `cpu.max` ("max 100000" or "200000 100000"), else v1
/// `cpu.cfs_quota_us` / `cpu.cfs_period_us`, for this process's cgroup.
fn cgroup_cpu_quota() -> Option<f64> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if id == "0" && controllers.is_empty() {
            let file = format!("/sys/fs/cgroup{path}/cpu.max");
            if let Some(s) = read_trimmed(&file) {
                let mut it = s.split_whitespace();
                let (quota, period) = (it.next()?, it.next()?);
                if quota == "max" {
                    return None;
                }
                return Some(quota.parse::<f64>().ok()? / period.parse::<f64>().ok()?);
            }
        } else if controllers.split(',').any(|c| c == "cpu") {
            for base in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"] {
                let quota = read_trimmed(&format!("{base}{path}/cpu.cfs_quota_us"))
                    .or_else(|| read_trimmed(&format!("{base}/cpu.cfs_quota_us")));
                let period = read_trimmed(&format!("{base}{path}/cpu.cfs_period_us"))
                    .or_else(|| read_trimmed(&format!("{base}/cpu.cfs_period_us")));
                if let (Some(q), Some(p)) = (quota, period) {
                    let q: f64 = q.parse().ok()?;
                    if q < 0.0 {
                        return None;
                    }
                    return Some(q / p.parse::<f64>().ok()?);
                }
            }
        }
    }
    None
}

fn memory_total() -> Option<u64> {
    meminfo("MemTotal:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_reads_basic_facts() {
        let f = Fingerprint::capture();
        assert!(!f.arch.is_empty());
        if cfg!(target_os = "linux") {
            assert_eq!(f.os.as_deref(), Some("Linux"));
            assert!(f.logical_cpus.unwrap_or(0) >= 1);
            assert!(f.memory_total_bytes.unwrap_or(0) > 0);
            assert!(!f.affinity.unwrap_or_default().is_empty());
        }
    }
}
