//! A machine fingerprint: the facts about the machine and its settings that
//! change run times, read from the kernel without timing anything (a few
//! milliseconds). Every field is optional: a fact that cannot be read here
//! (a container without /sys, a non-Linux system) is `null`, never a guess.

use serde::{Deserialize, Serialize};
use std::fs;

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
}

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
        }
    }
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

fn cpu_model() -> Option<String> {
    let info = fs::read_to_string("/proc/cpuinfo").ok()?;
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
fn affinity() -> Option<Vec<usize>> {
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
fn affinity() -> Option<Vec<usize>> {
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
    let info = fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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
