//! Two sets of runs -> every category's difference (with an interval), the
//! causes ranked by their share of the wall-time difference, and a
//! diagnosis in a sentence or two that names what the numbers point to.

use serde::{Deserialize, Serialize};

use super::*;
use crate::stats::ttest;

/// One category of the comparison table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub category: String,
    pub a_s: f64,
    pub b_s: f64,
    pub delta_s: f64,
    /// 95% interval of the difference (Welch), when both sides have 2+ runs.
    pub ci_s: Option<[f64; 2]>,
    /// delta / wall-time delta.
    pub share: f64,
}

/// One cause, ranked by its share of the difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    pub kind: String,
    pub share: f64,
    pub delta_s: f64,
    pub evidence: String,
}

/// A and B compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub wall_a_s: f64,
    pub wall_b_s: f64,
    pub delta_s: f64,
    pub ratio: f64,
    pub ci_s: Option<[f64; 2]>,
    /// Whether the wall-time difference is beyond the run-to-run noise.
    pub significant: bool,
    pub table: Vec<Row>,
    pub causes: Vec<Cause>,
    pub diagnosis: String,
    pub warnings: Vec<String>,
}

/// "2.31 s", "16.6 ms", "840 µs".
pub fn dur(s: f64) -> String {
    fn trim(x: String) -> String {
        if x.contains('.') {
            x.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            x
        }
    }
    let a = s.abs();
    if !s.is_finite() {
        "?".into()
    } else if a >= 1.0 {
        format!("{s:.2} s")
    } else if a >= 1e-3 {
        trim(format!("{:.2}", s * 1e3)) + " ms"
    } else if a >= 1e-6 {
        format!("{:.0} µs", s * 1e6)
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

fn size(bytes: Option<u64>) -> String {
    match bytes {
        None => "size unknown".into(),
        Some(b) if b >= 1 << 30 => format!("{:.1} GB", b as f64 / (1u64 << 30) as f64),
        Some(b) if b >= 1 << 20 => format!("{:.0} MB", b as f64 / (1u64 << 20) as f64),
        Some(b) if b >= 1 << 10 => format!("{:.0} KB", b as f64 / 1024.0),
        Some(b) => format!("{b} B"),
    }
}

fn per_run(t: &Trace, f: impl Fn(&RunSummary) -> f64) -> Vec<f64> {
    t.runs.iter().map(f).collect()
}

fn kind_mean(t: &Trace, name: &str) -> KindTotals {
    let n = t.runs.len().max(1) as f64;
    let mut k = KindTotals::default();
    for r in &t.runs {
        let x = r.kind(name);
        k.count += x.count;
        k.total_s += x.total_s;
        k.asked_s += x.asked_s;
        k.slack_s += x.slack_s;
    }
    KindTotals {
        count: (k.count as f64 / n).round() as u64,
        total_s: k.total_s / n,
        asked_s: k.asked_s / n,
        slack_s: k.slack_s / n,
    }
}

/// Sleeps and expired timeouts together, averaged per run.
fn sleeps(t: &Trace) -> (f64, f64, f64) {
    let n = t.runs.len().max(1) as f64;
    let mut count = 0.0;
    let mut total = 0.0;
    let mut asked = 0.0;
    for r in &t.runs {
        for k in ["sleep", "timeout"] {
            let x = r.kind(k);
            count += x.count as f64;
            total += x.total_s;
            asked += x.asked_s;
        }
    }
    (count / n, total / n, asked / n)
}

/// CPU used by processes that were never on the critical path (siblings
/// running beside it), by command, averaged per run.
fn off_path(t: &Trace) -> BTreeMap<String, f64> {
    let n = t.runs.len().max(1) as f64;
    let mut m: BTreeMap<String, f64> = BTreeMap::new();
    for r in &t.runs {
        for p in &r.process_rows {
            if p.on_path_s <= 0.0 {
                *m.entry(p.command.clone()).or_default() += p.off_path_cpu_s / n;
            }
        }
    }
    m
}

fn evidence(i: usize, a: &Trace, b: &Trace, delta: f64) -> (String, String) {
    let d = dur(delta.abs());
    let sign = if delta >= 0.0 { "+" } else { "-" };
    match i {
        TIMED_SLEEP => {
            let (ca, ta, aa) = sleeps(a);
            let (cb, tb, ab) = sleeps(b);
            let avg = |t: f64, c: f64| if c > 0.0 { t / c } else { 0.0 };
            let text = format!(
                "{} sleeps a run asked for {} and took {} on average in B ({} sleeps, {} asked, {} taken in A)",
                cb.round(),
                dur(avg(ab, cb)),
                dur(avg(tb, cb)),
                ca.round(),
                dur(avg(aa, ca)),
                dur(avg(ta, ca))
            );
            let over_a = avg(ta - aa, ca);
            let over_b = avg(tb - ab, cb);
            let why = if over_b > over_a * 2.0 + 50e-6 {
                format!(
                    "each sleep overshoots by {} in B ({} in A): a coarse timer or raised timer slack, as NUnit 3.4's Thread.Sleep(1) under Windows' 15.6 ms timer (see `tardy doctor`'s sleep probe)",
                    dur(over_b),
                    dur(over_a)
                )
            } else if cb > ca * 1.2 {
                "more sleeps".to_string()
            } else {
                "longer sleeps asked for".to_string()
            };
            (text, why)
        }
        PROCESS_CREATION => {
            let ea = a.mean(|r| r.execs as f64);
            let eb = b.mean(|r| r.execs as f64);
            let cost = |t: &Trace, execs: f64| {
                if execs > 0.0 {
                    t.categories.get("process-creation").copied().unwrap_or(0.0) / execs
                } else {
                    0.0
                }
            };
            let (pa, pb) = (cost(a, ea), cost(b, eb));
            let top = |t: &Trace| {
                t.runs
                    .first()
                    .and_then(|r| r.exec_files.first().cloned())
                    .map(|f| format!("{} ({})", f.file, size(f.size_bytes)))
                    .unwrap_or_else(|| "?".into())
            };
            let text = format!(
                "{} process starts a run costing {} each in B ({} at {} each in A); B's costliest program {}, A's {}",
                eb.round(),
                dur(pb),
                ea.round(),
                dur(pa),
                top(b),
                top(a)
            );
            let sa = a
                .runs
                .first()
                .and_then(|r| r.exec_files.first())
                .and_then(|f| f.size_bytes);
            let sb = b
                .runs
                .first()
                .and_then(|r| r.exec_files.first())
                .and_then(|f| f.size_bytes);
            let why = match (sa, sb) {
                (Some(x), Some(y)) if y > x.saturating_mul(2) && pb > pa * 1.3 => {
                    "each process start costs more and the program is larger: process creation growing with the binary's size, as CreateProcess did for Vivaldi on Windows 10".to_string()
                }
                _ if pb > pa * 1.3 => "each process start is slower".to_string(),
                _ => "more process starts".to_string(),
            };
            (text, why)
        }
        FSYNC => {
            let ka = kind_mean(a, "fsync");
            let kb = kind_mean(b, "fsync");
            let avg = |k: &KindTotals| {
                if k.count > 0 {
                    k.total_s / k.count as f64
                } else {
                    0.0
                }
            };
            (
                format!(
                    "{} syncs a run at {} each in B ({} at {} in A)",
                    kb.count,
                    dur(avg(&kb)),
                    ka.count,
                    dur(avg(&ka))
                ),
                "slow fsync: B's file system or device takes longer to make data durable (see `tardy doctor`'s fsync probe)".into(),
            )
        }
        RUN_QUEUE => {
            let oa = off_path(a);
            let ob = off_path(b);
            let mut best: Option<(String, f64, f64)> = None;
            for (cmd, vb) in &ob {
                let va = oa.get(cmd).copied().unwrap_or(0.0);
                if vb - va > best.as_ref().map_or(0.0, |x| x.1 - x.2) {
                    best = Some((cmd.clone(), *vb, va));
                }
            }
            let text = format!(
                "the command waited {} a run for a CPU in B ({} in A)",
                dur(b.categories.get("run-queue").copied().unwrap_or(0.0)),
                dur(a.categories.get("run-queue").copied().unwrap_or(0.0))
            );
            let why = match best {
                Some((cmd, vb, va)) if vb - va > delta.abs() * 0.25 => format!(
                    "CPU contention from another process in the tree: `{cmd}` used {} of CPU a run beside it in B ({} in A)",
                    dur(vb),
                    dur(va)
                ),
                _ => {
                    let steal =
                        b.mean(|r| r.steal_s.unwrap_or(0.0)) - a.mean(|r| r.steal_s.unwrap_or(0.0));
                    if steal > delta.abs() * 0.25 {
                        format!(
                            "CPU contention on the machine: the hypervisor stole {} more a run",
                            dur(steal)
                        )
                    } else {
                        "CPU contention from outside the command's tree (other load on the machine)"
                            .into()
                    }
                }
            };
            (text, why)
        }
        CPU_USER => {
            let la = kind_mean(a, "futex-wait");
            let lb = kind_mean(b, "futex-wait");
            let text = format!(
                "user CPU on the critical path {sign}{d}; whole tree {} in B vs {} in A; {} lock waits a run in B, {} in A",
                dur(b.mean(|r| r.cpu_user_s)),
                dur(a.mean(|r| r.cpu_user_s)),
                lb.count,
                la.count
            );
            (text, String::new())
        }
        CPU_SYSTEM => {
            let fa = a.mean(|r| (r.minor_faults + r.major_faults) as f64);
            let fb = b.mean(|r| (r.minor_faults + r.major_faults) as f64);
            (
                format!(
                    "system CPU {sign}{d}; {:.0} page faults a run in B, {:.0} in A",
                    fb, fa
                ),
                String::new(),
            )
        }
        _ => {
            let (ka, kb) = match i {
                LOCK_WAIT => (kind_mean(a, "futex-wait"), kind_mean(b, "futex-wait")),
                EVENT_WAIT => {
                    let mut x = kind_mean(a, "poll");
                    let y = kind_mean(a, "pipe-read");
                    x.count += y.count;
                    let mut z = kind_mean(b, "poll");
                    let w = kind_mean(b, "pipe-read");
                    z.count += w.count;
                    (x, z)
                }
                _ => (KindTotals::default(), KindTotals::default()),
            };
            let counts = if ka.count + kb.count > 0 {
                format!(" ({} waits a run in B, {} in A)", kb.count, ka.count)
            } else {
                String::new()
            };
            (
                format!("{} {sign}{d}{counts}", category_words(i)),
                String::new(),
            )
        }
    }
}

/// The cause kind for a category's difference, refined by the evidence.
fn kind_for(i: usize, a: &Trace, b: &Trace) -> &'static str {
    match i {
        CPU_USER => {
            // Threads that synchronise (several threads, some lock waits) and
            // burn more user CPU without waiting more: spin-waits grew.
            let la = kind_mean(a, "futex-wait").count as f64;
            let lb = kind_mean(b, "futex-wait").count as f64;
            let threaded = b.mean(|r| r.threads as f64) > b.mean(|r| r.processes as f64);
            if threaded && la.max(lb) >= 1.0 && lb <= la * 1.2 + 5.0 {
                "spinning"
            } else {
                "cpu-user"
            }
        }
        CPU_SYSTEM => {
            let fa = a.mean(|r| (r.minor_faults + r.major_faults) as f64);
            let fb = b.mean(|r| (r.minor_faults + r.major_faults) as f64);
            if fb > fa * 1.5 && fb - fa > 1000.0 {
                "page-faults"
            } else {
                "cpu-system"
            }
        }
        PROCESS_CREATION => {
            let ea = a.mean(|r| r.execs as f64);
            let eb = b.mean(|r| r.execs as f64);
            let ca = a.categories.get("process-creation").copied().unwrap_or(0.0) / ea.max(1.0);
            let cb = b.categories.get("process-creation").copied().unwrap_or(0.0) / eb.max(1.0);
            if eb > ea * 1.5 && cb < ca * 1.3 {
                "more-processes"
            } else {
                "process-creation"
            }
        }
        IO_WAIT => "io-wait",
        _ => CATEGORIES[i],
    }
}

fn spin_sentence(a: &Trace, b: &Trace) -> String {
    let la = kind_mean(a, "futex-wait").count;
    let lb = kind_mean(b, "futex-wait").count;
    format!(
        "spinning in user space with no more lock waits ({lb} a run in B, {la} in A): threads spin longer before they park, as with Skylake-SP's 140-cycle PAUSE"
    )
}

/// Compare A and B.
pub fn compare(a: &Trace, b: &Trace) -> Comparison {
    let wa = per_run(a, |r| r.wall_s);
    let wb = per_run(b, |r| r.wall_s);
    let delta = b.wall_s - a.wall_s;
    let test = ttest::welch(&wa, &wb, 0.95);
    let ci = test.as_ref().map(|t| t.ci);
    let significant = match &test {
        Some(t) => t.ci[0] > 0.0 || t.ci[1] < 0.0,
        None => delta.abs() > 0.05 * a.wall_s.max(b.wall_s),
    };
    let mut table = Vec::new();
    for (i, name) in CATEGORIES.iter().enumerate() {
        let ca = per_run(a, |r| r.cat()[i]);
        let cb = per_run(b, |r| r.cat()[i]);
        let ma = a.categories.get(*name).copied().unwrap_or(0.0);
        let mb = b.categories.get(*name).copied().unwrap_or(0.0);
        let d = mb - ma;
        let ci = ttest::welch(&ca, &cb, 0.95)
            .map(|t| t.ci)
            .filter(|c| c.iter().all(|v| v.is_finite()));
        table.push(Row {
            category: name.to_string(),
            a_s: ma,
            b_s: mb,
            delta_s: d,
            ci_s: ci,
            share: if delta != 0.0 { d / delta } else { 0.0 },
        });
    }
    let mut order: Vec<usize> = (0..NCAT).collect();
    order.sort_by(|&x, &y| table[y].share.total_cmp(&table[x].share));
    let mut causes = Vec::new();
    for &i in &order {
        let r = &table[i];
        if r.share < 0.01 || r.delta_s == 0.0 {
            continue;
        }
        let kind = kind_for(i, a, b);
        let (mut ev, why) = evidence(i, a, b, r.delta_s);
        if kind == "spinning" {
            ev = format!("{ev}; {}", spin_sentence(a, b));
        } else if kind == "cpu-user" && r.delta_s > 0.0 {
            ev = format!("{ev}: more work (more user CPU with the same waits)");
        } else if !why.is_empty() {
            ev = format!("{ev}: {why}");
        }
        causes.push(Cause {
            kind: kind.into(),
            share: r.share,
            delta_s: r.delta_s,
            evidence: ev,
        });
    }
    let ratio = if a.wall_s > 0.0 {
        b.wall_s / a.wall_s
    } else {
        f64::NAN
    };
    let head = if !significant {
        format!(
            "No difference beyond the run-to-run noise: A {} and B {} a run ({}{}).",
            dur(a.wall_s),
            dur(b.wall_s),
            if delta >= 0.0 { "+" } else { "-" },
            dur(delta.abs())
        )
    } else if delta > 0.0 {
        format!("B is {} slower (+{}).", ratio_words(ratio), dur(delta))
    } else {
        format!(
            "B is {} faster (-{}).",
            ratio_words(1.0 / ratio),
            dur(-delta)
        )
    };
    let diagnosis = match causes.first() {
        Some(top) if significant && top.share >= 0.5 => {
            let i = CATEGORIES
                .iter()
                .position(|c| *c == table[order[0]].category)
                .unwrap_or(OTHER);
            let words = match top.kind.as_str() {
                "spinning" => "user CPU spent spinning",
                "page-faults" => "system CPU (page faults)",
                "more-processes" => "process creation (more processes)",
                _ => category_words(i),
            };
            format!(
                "{head} {:.0}% of the difference is {words}: {}.",
                top.share * 100.0,
                top.evidence
            )
        }
        _ if significant => {
            let parts: Vec<String> = causes
                .iter()
                .take(3)
                .map(|c| format!("{} {:.0}%", c.kind, c.share * 100.0))
                .collect();
            format!("{head} No single cause: {}.", parts.join(", "))
        }
        _ => head,
    };
    let mut warnings = Vec::new();
    let related = a.command.contains(&b.command) || b.command.contains(&a.command);
    if !related && !a.command.is_empty() && !b.command.is_empty() {
        warnings.push(format!(
            "A and B ran different commands ('{}' vs '{}')",
            a.command, b.command
        ));
    }
    for (side, t) in [("A", a), ("B", b)] {
        if t.coverage != "full" {
            warnings.push(format!(
                "{side} was recorded without {}: {}",
                if t.coverage == "untraced" {
                    "tracing"
                } else {
                    "syscall tracing"
                },
                t.coverage_note.clone().unwrap_or_default()
            ));
        }
    }
    for (what, x, y) in a.machine.differences(&b.machine) {
        if what != "hostname" {
            warnings.push(format!("machines differ in {what}: {x} vs {y}"));
        }
    }
    Comparison {
        wall_a_s: a.wall_s,
        wall_b_s: b.wall_s,
        delta_s: delta,
        ratio,
        ci_s: ci,
        significant,
        table,
        causes,
        diagnosis,
        warnings,
    }
}

fn ratio_words(r: f64) -> String {
    if r >= 1.5 {
        format!("{r:.1}x")
    } else {
        format!("{:.0}%", (r - 1.0) * 100.0)
    }
}
