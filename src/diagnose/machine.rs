//! Judging the machine: each `tardy doctor` probe against its healthy range, with
//! what an unhealthy value means in words (the real case it resembles and what code
//! suffers), and the comparison of two doctor reports (`tardy doctor --compare`):
//! which settings differ and which probes changed, significant on the raw samples,
//! ranked by likely impact, ending in a short diagnosis.
//!
//! Absolute thresholds are a fallback; the stronger signal is a comparison.

use serde::{Deserialize, Serialize};

use crate::probe::result::{Assessment, DoctorReport, Health, ProbeResult};
use crate::stats::compare::{self as engine, Verdict};

/// Nanoseconds in a short human unit (diagnoses are sentences, not tables).
fn ns(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2} s", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

fn grade(v: f64, warn: f64, bad: f64) -> Health {
    if v >= bad {
        Health::Bad
    } else if v >= warn {
        Health::Warn
    } else {
        Health::Ok
    }
}

fn assessment(health: Health, headline: &str, healthy: &str, meaning: String) -> Assessment {
    Assessment {
        health,
        headline: headline.to_string(),
        healthy: healthy.to_string(),
        meaning,
    }
}

/// Judge one probe (the fingerprint adds context: slack, clocksource, jiffy).
pub fn assess(p: &ProbeResult, machine: &crate::probe::Fingerprint) -> Assessment {
    if let Some(why) = &p.unavailable {
        return assessment(Health::Unavailable, "", "", format!("unavailable: {why}"));
    }
    let med = |k: &str| p.measure(k).map(|m| m.median);
    match p.id.as_str() {
        "sleep" => {
            let Some(over) = med("sleep_1ms") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let slack = p
                .fact_f64("timer_slack_ns")
                .or(machine.timer_slack_ns.map(|s| s as f64));
            let jiffy = machine.clock_res_coarse_ns.map(|j| j as f64);
            let health = grade(over, 250_000.0, 1_000_000.0);
            let cause = if (14.0e6..17.0e6).contains(&over) {
                "the 15.6 ms Windows default timer quantum that turned NUnit 3.4's Thread.Sleep(1) into 15.6 ms per wait"
                    .to_string()
            } else if let Some(s) =
                slack.filter(|&s| s > 60_000.0 && over > 0.6 * s && over < 1.6 * s + 200_000.0)
            {
                format!(
                    "this process's timer slack is {} (default 50 µs): the kernel may delay every timer by that much (PR_SET_TIMERSLACK, inherited by children)",
                    ns(s)
                )
            } else if let Some(j) = jiffy.filter(|&j| {
                machine.clock_res_monotonic_ns.is_some_and(|r| r > 1) && over > 0.5 * j
            }) {
                format!(
                    "no high-resolution timers: sleeps round up to the {} jiffy",
                    ns(j)
                )
            } else {
                "an overloaded or power-saving host (deep C-states), or a raised timer slack"
                    .to_string()
            };
            let meaning = if health == Health::Ok {
                format!(
                    "a 1 ms sleep lasts {} more; short sleeps and timeouts are precise",
                    ns(over)
                )
            } else {
                format!(
                    "a 1 ms sleep lasts {} more: {cause}. Code that sleeps, polls or waits with short timeouts in a loop (test harness event queues, retry loops) runs that much longer per wait",
                    ns(over)
                )
            };
            assessment(health, "sleep_1ms", "overshoot < 250 µs", meaning)
        }
        "clock" => {
            let Some(v) = med("vdso") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let ratio = p.fact_f64("syscall_over_vdso");
            let cs = p
                .fact_str("clocksource")
                .or(machine.clocksource.as_deref())
                .unwrap_or("unknown");
            let no_vdso = ratio.is_some_and(|r| r < 1.5);
            let mut health = grade(v, 100.0, 300.0);
            if no_vdso && health == Health::Ok {
                health = Health::Warn;
            }
            let meaning = if health == Health::Ok {
                format!(
                    "a clock read costs {} (clocksource {cs}, vDSO in use)",
                    ns(v)
                )
            } else {
                format!(
                    "a clock read costs {} (clocksource {cs}{}): as with hpet (1.2 µs) or acpi_pm (2.5 µs) against tsc (57 ns) in Red Hat's measurements, or Xen's fallback to a system call on EC2, every timestamp — tracing, logging, timeouts, benchmark harnesses — is that expensive",
                    ns(v),
                    if no_vdso {
                        ", no faster than a system call: the vDSO is not used"
                    } else {
                        ""
                    }
                )
            };
            assessment(health, "vdso", "< 100 ns via the vDSO", meaning)
        }
        "syscall" => {
            let Some(v) = med("getppid") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let health = grade(v, 500.0, 2000.0);
            let mit = p.fact_f64("mitigations_active").unwrap_or(0.0);
            let meaning = format!(
                "a null system call costs {}{}{}",
                ns(v),
                if mit > 0.0 {
                    format!("; {mit:.0} CPU vulnerability mitigations active")
                } else {
                    String::new()
                },
                if health == Health::Ok {
                    String::new()
                } else {
                    "; kernel entry this slow (KPTI and other mitigations, a nested hypervisor) makes syscall-heavy code (I/O, small files, IPC) 5-30% slower".into()
                }
            );
            assessment(
                health,
                "getppid",
                "< 500 ns (compare with a known-good snapshot)",
                meaning,
            )
        }
        "ctxswitch" => {
            let key = if p.measure("threads_2cpu").is_some() {
                "threads_2cpu"
            } else {
                "threads_1cpu"
            };
            let Some(v) = med(key) else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let health = grade(v, 20_000.0, 100_000.0);
            let meaning = if health == Health::Ok {
                format!("a blocked thread wakes in {}", ns(v))
            } else {
                format!(
                    "a blocked thread takes {} to wake on another CPU: {}; async runtimes, worker pools and client/server tests pay it on every hand-off",
                    ns(v),
                    if machine.hypervisor == Some(true) {
                        "in a virtual machine an idle vCPU is woken through the hypervisor"
                    } else {
                        "an oversubscribed host, noisy neighbours or deep idle states"
                    }
                )
            };
            assessment(health, key, "< 20 µs (bare metal: 1-5 µs)", meaning)
        }
        "locks" => {
            let Some(v) = med("condvar") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let spin = med("spin_park");
            let health = grade(v, 30_000.0, 150_000.0);
            let meaning = format!(
                "a mutex + condvar hand-off takes {}{}{}",
                ns(v),
                spin.map_or(String::new(), |s| format!(", spin-then-park {}", ns(s))),
                if health == Health::Ok {
                    String::new()
                } else {
                    "; blocking queues and lock-heavy tests are slow to hand work over".into()
                }
            );
            assessment(health, "condvar", "< 30 µs", meaning)
        }
        "spawn" => {
            let Some(v) = med("small") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let ratio = p.fact_f64("large_over_small").unwrap_or(1.0);
            let (sb, lb) = (
                p.fact_f64("small_bytes").unwrap_or(0.0),
                p.fact_f64("large_bytes").unwrap_or(0.0),
            );
            let mut health = grade(v, 3e6, 15e6);
            let size = if ratio >= 1.5 {
                if health == Health::Ok {
                    health = Health::Warn;
                }
                format!(
                    "spawn cost grows with binary size: a {:.0}x larger binary costs {ratio:.1}x as much to start, as CreateProcess did with Control Flow Guard on Windows 10 (Vivaldi's 300-600 ms process starts): process-per-test runners (nextest, CTest, Jest workers) pay it per test",
                    lb / sb.max(1.0)
                )
            } else {
                format!(
                    "no size dependence: a {:.0}x larger binary costs {ratio:.2}x as much to start",
                    lb / sb.max(1.0)
                )
            };
            let meaning = format!("spawning a tiny program costs {}; {size}", ns(v));
            assessment(health, "small", "< 3 ms, flat in binary size", meaning)
        }
        "first-exec" => {
            let (Some(first), Some(r)) = (med("first"), p.fact_f64("first_over_second")) else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let health = if first >= 100e6 {
                Health::Bad
            } else if r >= 2.0 && first >= 20e6 {
                Health::Warn
            } else {
                Health::Ok
            };
            let meaning = if health == Health::Ok {
                format!(
                    "a fresh binary starts in {} ({r:.2}x the second run)",
                    ns(first)
                )
            } else {
                format!(
                    "a freshly written binary takes {} to start, {r:.1}x its second run: on-access scanning (macOS XProtect: 120-300 ms per new binary, serialised) — every rebuilt test binary pays it once",
                    ns(first)
                )
            };
            assessment(health, "first", "< 2x the second run and < 20 ms", meaning)
        }
        "fork" => {
            let per = p.fact_f64("ns_per_mib");
            let base = p.measures.first().map(|m| m.median);
            let Some(base) = base else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let health = per.map_or(Health::Info, |v| grade(v, 80_000.0, 300_000.0));
            let meaning = match per {
                Some(v) => format!(
                    "fork costs {} plus {} per MiB the parent has touched{}",
                    ns(base),
                    ns(v),
                    if health == Health::Ok {
                        String::new()
                    } else {
                        "; test runners that fork from a big parent (multiprocessing's fork, pytest-forked, preforking servers) pay milliseconds per test".into()
                    }
                ),
                None => format!("fork costs {}", ns(base)),
            };
            let headline = p.measures.last().map(|m| m.key.clone()).unwrap_or_default();
            assessment(
                health,
                &headline,
                "< 80 µs per MiB touched (~30 µs typical)",
                meaning,
            )
        }
        "pause" => {
            if let Some(m) = p.measure("pause_cycles") {
                let c = m.min;
                let ns_v = p.measure("pause_ns").map_or(f64::NAN, |m| m.min);
                let (health, meaning) = if c > 30.0 {
                    (
                        Health::Warn,
                        format!(
                            "slow PAUSE (Skylake-class): {c:.0} cycles ({ns_v:.1} ns) per spin-wait hint, about {:.0}x the ~10 cycles of earlier cores (Skylake-SP's ~140 were 14x); spin loops with fixed spin counts (.NET SpinWait before 2017, InnoDB's ut_delay, hand-written spin locks) spin that much longer before they park",
                            c / 10.0
                        ),
                    )
                } else {
                    (
                        Health::Ok,
                        format!("fast PAUSE: {c:.0} cycles ({ns_v:.1} ns) per spin-wait hint"),
                    )
                };
                assessment(
                    health,
                    "pause_cycles",
                    "<= 30 cycles (MariaDB's threshold)",
                    meaning,
                )
            } else if let Some(v) = med("pause_ns") {
                assessment(
                    Health::Info,
                    "pause_ns",
                    "",
                    format!("the spin-wait hint takes {}", ns(v)),
                )
            } else {
                assessment(Health::Unavailable, "", "", "no samples".into())
            }
        }
        "counters" => {
            let fact = |k: &str| p.facts.get(k);
            let pmu = fact("pmu").and_then(|v| v.as_bool()).unwrap_or(false);
            let valgrind = fact("valgrind").and_then(|v| v.as_str());
            let meaning = match (pmu, valgrind) {
                (true, _) => format!(
                    "a hardware PMU: --metric instructions and cycles count the whole process tree at no cost{}",
                    if fact("pmu_kernel").and_then(|v| v.as_bool()) == Some(true) {
                        " (kernel counts permitted: --count-kernel)"
                    } else {
                        " (user space only here)"
                    }
                ),
                (false, Some(v)) => format!(
                    "no hardware PMU ({}): --metric instructions and estimated-cycles run under valgrind's cachegrind ({v}), exact but 20-50x slower; cycles cannot be counted",
                    fact("pmu_why").and_then(|v| v.as_str()).unwrap_or("?")
                ),
                (false, None) => format!(
                    "no hardware PMU ({}) and no valgrind: install the 'valgrind' package for --metric instructions",
                    fact("pmu_why").and_then(|v| v.as_str()).unwrap_or("?")
                ),
            };
            let health = if pmu || valgrind.is_some() {
                Health::Info
            } else {
                Health::Warn
            };
            assessment(health, "", "", meaning)
        }
        "frequency" => {
            let Some(m) = p.measure("ghz") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let ramp = p.fact_f64("ramp_ms").unwrap_or(0.0);
            let max = p.fact_f64("max_ghz");
            let share = max.map(|x| m.median / x);
            let mut health = match share {
                Some(s) if s < 0.7 => Health::Bad,
                Some(s) if s < 0.9 => Health::Warn,
                Some(_) => Health::Ok,
                None => Health::Info,
            };
            if ramp > 10.0 && health < Health::Warn {
                health = Health::Warn;
            }
            let meaning = format!(
                "a core runs at {:.2} GHz effective{}{}",
                m.median,
                match (max, share) {
                    (Some(x), Some(s)) => format!(
                        " ({:.0}% of the {x:.2} GHz {})",
                        s * 100.0,
                        if p.fact_str("max_ghz_source")
                            .is_some_and(|w| w.contains("nominal"))
                        {
                            "nominal rate"
                        } else {
                            "maximum"
                        }
                    ),
                    _ => " (maximum unknown here)".to_string(),
                },
                if ramp > 10.0 {
                    format!(
                        "; it takes {ramp:.0} ms to reach speed, so short tests run at idle clocks"
                    )
                } else if health >= Health::Warn {
                    "; a powersave governor, thermal throttling or turbo off makes every CPU-bound test slower by the same factor".to_string()
                } else {
                    String::new()
                }
            );
            assessment(
                health,
                "ghz",
                ">= 90% of the maximum, ramp < 10 ms",
                meaning,
            )
        }
        "contention" => {
            let Some(share) = med("cpu_share") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let steal = p.fact_f64("steal_ticks").unwrap_or(0.0);
            let thr = p.fact_f64("throttled_periods").unwrap_or(0.0);
            let others = p.fact_f64("others_running").unwrap_or(0.0);
            let mut health = if share < 0.6 {
                Health::Bad
            } else if share < 0.9 {
                Health::Warn
            } else {
                Health::Ok
            };
            if thr > 0.0 {
                health = Health::Bad;
            } else if steal > 0.0 && health == Health::Ok {
                health = Health::Warn;
            }
            let mut why = Vec::new();
            if others >= 1.0 && share < 0.9 {
                why.push(format!(
                    "{others:.0} other runnable task{} competed",
                    if others >= 2.0 { "s" } else { "" }
                ));
            }
            if steal > 0.0 {
                why.push(format!(
                    "the hypervisor stole {steal:.0} ticks (a noisy neighbour)"
                ));
            }
            if thr > 0.0 {
                why.push(format!("the cgroup quota throttled {thr:.0} periods (more workers than the quota's CPUs)"));
            }
            let meaning = format!(
                "busy threads got {:.0}% of their wall time on a CPU{}",
                share * 100.0,
                if why.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {}; timings on this machine are not comparable with an idle one",
                        why.join(", ")
                    )
                }
            );
            assessment(
                health,
                "cpu_share",
                ">= 90% CPU share, no steal, no throttling",
                meaning,
            )
        }
        "fsync" => {
            let Some(v) = med("fdatasync") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let fs = p.fact_str("filesystem").unwrap_or("unknown");
            let noop = matches!(fs, "tmpfs" | "ramfs");
            let health = if noop {
                Health::Info
            } else {
                grade(v, 1e6, 5e6)
            };
            let meaning = if noop {
                format!(
                    "fdatasync takes {} on {fs}, where it is a no-op: durable-write costs of real disks are not measured here (use --dir)",
                    ns(v)
                )
            } else if health == Health::Ok {
                format!("a durable 4 KiB write takes {} on {fs}", ns(v))
            } else {
                format!(
                    "a durable 4 KiB write takes {} on {fs}: tests using SQLite, RocksDB or other embedded databases, or git, become I/O-bound (as macOS's F_FULLFSYNC at ~20 ms made Go's File.Sync and RocksDB's Mac tests slow)",
                    ns(v)
                )
            };
            assessment(health, "fdatasync", "< 1 ms (no-op on tmpfs)", meaning)
        }
        "metadata" => {
            let Some(v) = med("create") else {
                return assessment(Health::Unavailable, "", "", "no samples".into());
            };
            let fs = p.fact_str("filesystem").unwrap_or("unknown");
            let health = grade(v, 100_000.0, 1e6);
            let meaning = format!(
                "creating a small file takes {} on {fs}{}",
                ns(v),
                if health == Health::Ok {
                    String::new()
                } else {
                    " — a network or virtual filesystem (9p, virtiofs, NFS, Docker Desktop bind mounts) or on-access scanning: compilers, module loaders and import-heavy test start-up suffer".into()
                }
            );
            assessment(health, "create", "< 100 µs per create", meaning)
        }
        other => assessment(
            Health::Info,
            "",
            "",
            format!("no assessment for probe {other}"),
        ),
    }
}

/// Fill in every probe's assessment.
pub fn assess_all(report: &mut DoctorReport) {
    let machine = report.machine.clone();
    for p in &mut report.probes {
        p.assessment = Some(assess(p, &machine));
    }
}

/// A setting that differs between two machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingDiff {
    pub setting: String,
    pub a: String,
    pub b: String,
}

/// One measure of one probe on both machines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeDiff {
    pub probe: String,
    pub key: String,
    pub label: String,
    pub unit: String,
    pub a_median: f64,
    pub b_median: f64,
    /// B / A (Hodges-Lehmann on the raw samples when both have them).
    pub ratio: f64,
    /// Two-sided p-value (Mann-Whitney U), Holm-adjusted across every measure
    /// compared; `None` without raw samples.
    pub p_value: Option<f64>,
    /// `slower`, `faster`, `same` or `inconclusive`, from B's point of view: `slower`
    /// means B is worse (a larger time, or a smaller frequency or CPU share).
    pub verdict: String,
    /// |ln ratio| when significant, 0 otherwise: the ranking key.
    pub impact: f64,
}

/// `tardy doctor --compare`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineComparison {
    pub a_source: String,
    pub b_source: String,
    pub settings: Vec<SettingDiff>,
    /// Ranked by impact, largest first.
    pub probes: Vec<ProbeDiff>,
    /// Sentences, most important first.
    pub diagnosis: Vec<String>,
}

/// Compare machine A with machine B.
pub fn compare(
    a: &DoctorReport,
    b: &DoctorReport,
    a_source: &str,
    b_source: &str,
) -> MachineComparison {
    let settings: Vec<SettingDiff> = a
        .machine
        .differences(&b.machine)
        .into_iter()
        .map(|(s, x, y)| SettingDiff {
            setting: s.to_string(),
            a: x,
            b: y,
        })
        .collect();
    let opts = engine::Options::default();
    let mut pairs = Vec::new();
    for pa in &a.probes {
        let Some(pb) = b.probe(&pa.id) else { continue };
        for ma in &pa.measures {
            let Some(mb) = pb.measure(&ma.key) else {
                continue;
            };
            if !(ma.median.is_finite() && mb.median.is_finite())
                || ma.median <= 0.0
                || mb.median <= 0.0
            {
                continue;
            }
            let est = if ma.samples.len() >= 2 && mb.samples.len() >= 2 {
                engine::compare(&ma.samples, &mb.samples, &opts).ok()
            } else {
                None
            };
            pairs.push((pa, ma, mb, est));
        }
    }
    // Holm across every measure compared: dozens of tests at once.
    let mut ests: Vec<&mut engine::Estimate> =
        pairs.iter_mut().filter_map(|p| p.3.as_mut()).collect();
    engine::adjust(&mut ests, engine::Correction::Holm);
    let mut probes = Vec::new();
    for (pa, ma, mb, est) in &pairs {
        let ratio = est.as_ref().map_or(mb.median / ma.median, |e| e.ratio);
        let worse_if_larger = !ma.higher_is_better;
        let verdict = match est.as_ref().map(|e| e.verdict) {
            Some(Verdict::Slower) if worse_if_larger => "slower",
            Some(Verdict::Slower) => "faster",
            Some(Verdict::Faster) if worse_if_larger => "faster",
            Some(Verdict::Faster) => "slower",
            Some(Verdict::Same) => "same",
            Some(Verdict::Inconclusive) => "inconclusive",
            None => "no raw samples",
        };
        // Significant but under 5%: with thousands of samples a 0.3% shift is
        // "proven", and says nothing about the machine.
        let verdict = if matches!(verdict, "slower" | "faster") && ratio.ln().abs() < 1.05f64.ln() {
            "same"
        } else {
            verdict
        };
        let significant = matches!(verdict, "slower" | "faster");
        probes.push(ProbeDiff {
            probe: pa.id.clone(),
            key: ma.key.clone(),
            label: ma.label.clone(),
            unit: ma.unit.clone(),
            a_median: ma.median,
            b_median: mb.median,
            ratio,
            p_value: est.as_ref().map(|e| e.p_adjusted),
            verdict: verdict.to_string(),
            impact: if significant || est.is_none() {
                ratio.ln().abs()
            } else {
                0.0
            },
        });
    }
    probes.sort_by(|x, y| y.impact.total_cmp(&x.impact));
    let diagnosis = diagnose(&probes, &settings, b);
    MachineComparison {
        a_source: a_source.to_string(),
        b_source: b_source.to_string(),
        settings,
        probes,
        diagnosis,
    }
}

/// Below this factor a significant difference is not diagnosed: the samples of one
/// run share its conditions, so two runs on the same machine differ by up to ~1.5-2x
/// on spawn and file probes (measured on a 2-vCPU VM). Frequency and CPU share are
/// bounded quantities where a smaller change already matters.
fn diagnosis_threshold(probe: &str) -> f64 {
    match probe {
        "frequency" | "contention" => 1.15,
        _ => 2.0,
    }
}

/// The sentences: one per probe where B is significantly worse by its threshold (the
/// probe's most changed measure), then the settings that commonly explain them.
fn diagnose<'a>(
    probes: &'a [ProbeDiff],
    settings: &[SettingDiff],
    b: &DoctorReport,
) -> Vec<String> {
    let setting = |name: &str| settings.iter().find(|s| s.setting == name);
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Per probe, speak of its headline measure when that one is worse too.
    let headline = |id: &str| {
        b.probe(id)
            .and_then(|p| p.assessment.as_ref())
            .map(|a| a.headline.clone())
    };
    let pick = |d: &'a ProbeDiff| -> &'a ProbeDiff {
        let key = headline(&d.probe);
        probes
            .iter()
            .find(|x| x.probe == d.probe && Some(&x.key) == key.as_ref() && x.verdict == d.verdict)
            .unwrap_or(d)
    };
    for d in probes {
        let d = pick(d);
        let worse = d.verdict == "slower" || (d.verdict == "no raw samples" && d.impact > 0.0);
        let factor = if d.unit == "GHz" || d.unit == "share" {
            1.0 / d.ratio
        } else {
            d.ratio
        };
        if !worse || factor < diagnosis_threshold(&d.probe) || !seen.insert(d.probe.clone()) {
            continue;
        }
        let what = format!(
            "{} ({} vs {}, {:.1}x)",
            d.label,
            show(d.a_median, &d.unit),
            show(d.b_median, &d.unit),
            factor
        );
        let sentence = match d.probe.as_str() {
            "sleep" => format!(
                "B's short sleeps overshoot more: {what}{}: code that sleeps, polls or waits with short timeouts (as NUnit 3.4's Thread.Sleep(1) was under Windows' 15.6 ms timer) will be slower per wait",
                setting("timer slack (ns)").map_or(String::new(), |s| format!(
                    "; timer slack is {} ns on A and {} ns on B",
                    s.a, s.b
                ))
            ),
            "clock" => format!(
                "B's clock reads are slower: {what}{}: every timestamp (tracing, logging, timeouts, benchmark harnesses) costs more",
                setting("clocksource").map_or_else(
                    || b.machine
                        .clocksource
                        .as_ref()
                        .map_or(String::new(), |c| format!("; B's clocksource is {c}")),
                    |s| format!("; clocksource {} on A, {} on B", s.a, s.b)
                )
            ),
            "syscall" => format!(
                "B's system calls are slower: {what}: syscall-heavy code (I/O, small files, IPC) will be slower; compare kernels and mitigations"
            ),
            "ctxswitch" | "locks" => format!(
                "B hands work between threads more slowly: {what}: thread pools, async runtimes and client/server tests will be slower"
            ),
            "spawn" => format!(
                "B starts processes more slowly: {what}: process-per-test runners (nextest, CTest, Jest workers, pytest-xdist) pay it per test"
            ),
            "first-exec" => format!(
                "B starts fresh binaries more slowly: {what}: every rebuilt test binary pays it once (on-access scanning)"
            ),
            "fork" => format!(
                "B forks more slowly: {what}: runners that fork from a large parent pay it per test"
            ),
            "pause" => format!(
                "B's PAUSE is {factor:.1}x slower: {what}: spin-wait heavy code (spin locks, .NET SpinWait, InnoDB) will be slower, as MySQL was on Skylake-SP, whose PAUSE takes 140 cycles instead of 10"
            ),
            "frequency" => format!(
                "B's cores run slower: {what}{}: every CPU-bound test is slower by about that factor",
                setting("governor")
                    .or(setting("turbo"))
                    .map_or(String::new(), |s| format!(
                        "; {} is {} on A and {} on B",
                        s.setting, s.a, s.b
                    ))
            ),
            "contention" => format!(
                "B's busy threads got less CPU: {what}: B was shared (other processes, steal or a cgroup quota), so its timings are not comparable"
            ),
            "fsync" => format!(
                "B's durable writes are slower: {what}: database- and git-heavy tests become I/O-bound"
            ),
            "metadata" => format!(
                "B's file operations are slower: {what}: compilers, module loaders and import-heavy test start-up suffer"
            ),
            _ => format!("B is slower at {what}"),
        };
        out.push(sentence);
    }
    for s in settings {
        let note = match s.setting.as_str() {
            "CPU model" => "a different CPU: per-core speed, PAUSE latency and caches differ",
            "logical CPUs" | "cgroup CPU quota" => {
                "a different number of CPUs: parallel test runners pick different worker counts"
            }
            "governor" | "turbo" | "energy preference" | "max frequency (kHz)" => {
                "frequency scaling differs: CPU-bound code scales with the clock"
            }
            "clocksource" => "a different clocksource: timestamps cost differ",
            "timer slack (ns)" => {
                "a different timer slack: short sleeps and timeouts overshoot differently"
            }
            "jiffy (coarse clock resolution, ns)" | "monotonic clock resolution (ns)" => {
                "a different timer resolution: sleeps round to a different quantum"
            }
            "kernel" | "microcode" | "CPU vulnerabilities" => {
                "a different kernel or microcode: system call and context-switch costs may differ"
            }
            "runtime environment variables" => {
                "different runtime settings (thread counts, GC, JVM options)"
            }
            _ => continue,
        };
        if out.len() < 12 {
            out.push(format!(
                "{} differs ({} on A, {} on B): {note}",
                s.setting, s.a, s.b
            ));
        }
    }
    if out.is_empty() {
        out.push(
            "no probe is significantly worse on B and no setting that shapes run times differs"
                .into(),
        );
    }
    out
}

fn show(v: f64, unit: &str) -> String {
    match unit {
        "ns" => ns(v),
        "GHz" => format!("{v:.2} GHz"),
        "share" => format!("{:.0}%", v * 100.0),
        "cycles" => format!("{v:.0} cycles"),
        _ => format!("{v:.3} {unit}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Fingerprint;
    use crate::probe::sample::Measure;

    fn probe(id: &str, measures: &[(&str, &str, f64)], facts: &[(&str, f64)]) -> ProbeResult {
        let mut p = ProbeResult::new(id, id);
        for (key, unit, v) in measures {
            p.measures
                .push(Measure::new(key, key, unit, 1, vec![v * 0.9, *v, v * 1.1]));
        }
        for (k, v) in facts {
            p.fact(k, *v);
        }
        p
    }

    #[test]
    fn each_pathology_is_named() {
        let m = Fingerprint::default();
        let a = assess(
            &probe(
                "pause",
                &[("pause_cycles", "cycles", 140.0), ("pause_ns", "ns", 50.0)],
                &[],
            ),
            &m,
        );
        assert_eq!(a.health, Health::Warn);
        assert!(a.meaning.contains("Skylake"), "{}", a.meaning);
        // (the helper's minimum is 0.9 of the value given: 126 cycles)
        assert!(
            a.meaning.contains("about 13x the ~10 cycles"),
            "{}",
            a.meaning
        );
        // The ratio is this machine's, not a fixed text.
        let a = assess(
            &probe("pause", &[("pause_cycles", "cycles", 57.0)], &[]),
            &m,
        );
        assert!(
            a.meaning.contains("51 cycles") && a.meaning.contains("about 5x the"),
            "{}",
            a.meaning
        );
        let a = assess(
            &probe("pause", &[("pause_cycles", "cycles", 10.0)], &[]),
            &m,
        );
        assert_eq!(a.health, Health::Ok);
        let a = assess(&probe("sleep", &[("sleep_1ms", "ns", 14.8e6)], &[]), &m);
        assert_eq!(a.health, Health::Bad);
        assert!(a.meaning.contains("15.6 ms"), "{}", a.meaning);
        let a = assess(
            &probe(
                "clock",
                &[("vdso", "ns", 80.0)],
                &[("syscall_over_vdso", 1.05)],
            ),
            &m,
        );
        assert_eq!(a.health, Health::Warn);
        assert!(a.meaning.contains("vDSO is not used"), "{}", a.meaning);
        let a = assess(&probe("clock", &[("vdso", "ns", 1200.0)], &[]), &m);
        assert_eq!(a.health, Health::Bad);
        let a = assess(
            &probe(
                "spawn",
                &[("small", "ns", 1e6)],
                &[
                    ("large_over_small", 4.0),
                    ("small_bytes", 1e4),
                    ("large_bytes", 1e7),
                ],
            ),
            &m,
        );
        assert!(
            a.meaning.contains("grows with binary size")
                && a.meaning.contains("Control Flow Guard"),
            "{}",
            a.meaning
        );
        let a = assess(
            &probe("frequency", &[("ghz", "GHz", 1.2)], &[("max_ghz", 3.0)]),
            &m,
        );
        assert_eq!(a.health, Health::Bad);
        let a = assess(
            &probe(
                "contention",
                &[("cpu_share", "share", 0.95)],
                &[("throttled_periods", 12.0)],
            ),
            &m,
        );
        assert_eq!(a.health, Health::Bad);
        assert!(a.meaning.contains("quota"));
        let a = assess(&probe("fsync", &[("fdatasync", "ns", 3000.0)], &[]), &m);
        assert_eq!(a.health, Health::Ok);
        let mut t = probe("fsync", &[("fdatasync", "ns", 3000.0)], &[]);
        t.fact("filesystem", "tmpfs");
        assert!(assess(&t, &m).meaning.contains("no-op"));
        let mut u = ProbeResult::new("fork", "fork");
        u.unavailable = Some("no fork here".into());
        assert_eq!(assess(&u, &m).health, Health::Unavailable);
    }

    fn report(probes: Vec<ProbeResult>, slack: u64) -> DoctorReport {
        DoctorReport {
            schema: "tardy.doctor".into(),
            schema_version: 1,
            tardy_version: "test".into(),
            taken_at_ns: 0,
            quick: true,
            dir: None,
            machine: Fingerprint {
                timer_slack_ns: Some(slack),
                ..Fingerprint::default()
            },
            probes,
            elapsed_s: 0.0,
        }
    }

    fn spread(key: &str, unit: &str, center: f64) -> Measure {
        let samples: Vec<f64> = (0..20).map(|i| center * (1.0 + 0.01 * i as f64)).collect();
        Measure::new(key, key, unit, 1, samples)
    }

    #[test]
    fn compare_ranks_the_changed_probe_and_names_the_setting() {
        let mk = |pause: f64, slack: u64| {
            let mut p = ProbeResult::new("pause", "pause");
            p.measures.push(spread("pause_cycles", "cycles", pause));
            let mut c = ProbeResult::new("clock", "clock");
            c.measures.push(spread("vdso", "ns", 25.0));
            report(vec![p, c], slack)
        };
        let c = compare(&mk(10.0, 50_000), &mk(140.0, 50_000), "a", "b");
        assert_eq!(c.probes[0].probe, "pause");
        assert_eq!(c.probes[0].verdict, "slower");
        assert!(
            (c.probes[0].ratio - 14.0).abs() < 0.5,
            "{}",
            c.probes[0].ratio
        );
        assert!(matches!(
            c.probes[1].verdict.as_str(),
            "same" | "inconclusive"
        ));
        assert_eq!(c.probes[1].impact, 0.0);
        assert!(
            c.diagnosis[0].contains("PAUSE is 14.0x slower"),
            "{:?}",
            c.diagnosis
        );
        assert!(c.settings.is_empty());
        let c = compare(&mk(10.0, 50_000), &mk(10.0, 5_000_000), "a", "b");
        assert_eq!(c.settings[0].setting, "timer slack (ns)");
        assert!(c.diagnosis.iter().any(|d| d.contains("timer slack")));
        // A frequency drop is "slower" although the number is smaller.
        let f = |ghz: f64| {
            let mut p = ProbeResult::new("frequency", "frequency");
            p.measures
                .push(spread("ghz", "GHz", ghz).higher_is_better());
            report(vec![p], 50_000)
        };
        let c = compare(&f(3.0), &f(2.0), "a", "b");
        assert_eq!(c.probes[0].verdict, "slower");
        assert!(
            c.diagnosis[0].contains("cores run slower"),
            "{:?}",
            c.diagnosis
        );
    }
}
