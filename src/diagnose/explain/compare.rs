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
    /// Its share of the difference: the same number the causes give (see
    /// [`Comparison::shares_of`]).
    pub share: f64,
    /// Whether this category's difference is beyond its runs' noise
    /// ([`Verdict`]).
    #[serde(default)]
    pub verdict: Verdict,
}

/// A category's (or cause's) difference against its own runs' noise,
/// tested for each category at once (the family: the categories whose runs
/// vary), so A against A names a false cause at most 5% of the time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The calls it is made of differ in number in every run, each side
    /// constant (0 vs 40 fsyncs a run): a difference in what the program
    /// does, exact, whatever its time does.
    Certain,
    /// Beyond the noise of its runs, after Holm's correction over the
    /// categories.
    Significant,
    /// Within the noise of its runs.
    #[default]
    Noise,
}

impl Verdict {
    pub fn proven(self) -> bool {
        matches!(self, Verdict::Certain | Verdict::Significant)
    }
}

/// One cause, ranked by its share of the difference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cause {
    pub kind: String,
    pub share: f64,
    pub delta_s: f64,
    pub evidence: String,
    /// For causes made of calls (sleeps, fsyncs, process starts, waits):
    /// how many a run and how long each, in A and B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_a: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_b: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_call_a_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_call_b_s: Option<f64>,
    /// What drives it: "more-calls", "slower-calls", "longer-asked"
    /// (sleeps that ask for more) or "both".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Whether the difference is beyond its runs' noise.
    #[serde(default)]
    pub verdict: Verdict,
    /// Its p-value after Holm's correction over the categories (none for a
    /// certain difference of counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_adjusted: Option<f64>,
    /// Every run of B beyond every run of A (or below), in this category.
    #[serde(default)]
    pub every_run: bool,
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
    /// What the shares are of: "wall" (the wall-time difference, when it is
    /// significant) or "changes" (the sum of every category's absolute
    /// change, when it is not: signed shares of a difference within the
    /// noise would run to 200% and 567%).
    #[serde(default)]
    pub shares_of: String,
    /// The category the run-queue delay is counted with, when it grew only
    /// with that cause (more work waits longer for a CPU): that row's share
    /// holds both, the run-queue row's none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_queue_counted_with: Option<String>,
    pub table: Vec<Row>,
    pub causes: Vec<Cause>,
    pub diagnosis: String,
    pub warnings: Vec<String>,
    /// Functions of the sampled CPU profiles, by share of the CPU-time
    /// difference (empty without profiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub functions: Vec<functions::FunctionDelta>,
    /// The difference of all sampled CPU, seconds a run (B - A).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled_cpu_delta_s: Option<f64>,
    /// One sentence naming the functions the CPU difference is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functions_summary: Option<String>,
    /// From the off-CPU stacks: the functions that waited, by kind of
    /// wait, ranked by their difference (empty without profiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting_functions: Vec<functions::WaitDelta>,
    /// One sentence naming the function behind the kind of wait that
    /// changed most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_summary: Option<String>,
}

/// The kinds of wait (as the off-CPU stacks name them) behind a cause.
fn wait_kinds(cause: &str) -> &'static [&'static str] {
    match cause {
        "lock-wait" => &["futex-wait", "join"],
        "timed-sleep" => &["sleep", "timeout"],
        "event-wait" => &["poll", "pipe-read"],
        "child-wait" => &["wait-child"],
        "io-wait" => &["block-io"],
        "fsync" => &["fsync"],
        _ => &[],
    }
}

/// The functions that waited, A against B; the causes that are waits get
/// the function behind them in their evidence.
fn wait_rows(
    a: &Trace,
    b: &Trace,
    causes: &mut [Cause],
) -> (Vec<functions::WaitDelta>, Option<String>) {
    let (Some(pa), Some(pb)) = (&a.profile, &b.profile) else {
        return (Vec::new(), None);
    };
    let mut rows = functions::wait_deltas(pa, pb);
    for c in causes.iter_mut() {
        let kinds = wait_kinds(&c.kind);
        let best = kinds
            .iter()
            .filter_map(|k| functions::wait_sentence(&rows, k))
            .next();
        if let Some(sentence) = best {
            c.evidence.push_str("; ");
            c.evidence.push_str(sentence.trim_end_matches('.'));
        }
    }
    // The kind of wait that changed most.
    let mut totals: Vec<(String, f64)> = Vec::new();
    for r in &rows {
        match totals.iter_mut().find(|(k, _)| *k == r.kind) {
            Some(t) => t.1 += r.delta_s,
            None => totals.push((r.kind.clone(), r.delta_s)),
        }
    }
    totals.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()));
    let summary = totals
        .iter()
        .take(3)
        .find_map(|(k, _)| functions::wait_sentence(&rows, k));
    rows.truncate(MAX_FUNCTIONS);
    (rows, summary)
}

/// Functions kept in a comparison.
const MAX_FUNCTIONS: usize = 100;

fn function_rows(
    a: &Trace,
    b: &Trace,
    causes: &[Cause],
) -> (Vec<functions::FunctionDelta>, Option<f64>, Option<String>) {
    let (Some(pa), Some(pb)) = (&a.profile, &b.profile) else {
        return (Vec::new(), None, None);
    };
    if pa.samples == 0 && pb.samples == 0 {
        return (Vec::new(), None, None);
    }
    let (mut rows, total) = functions::deltas(pa, pb);
    let words = match causes.first().map(|c| c.kind.as_str()) {
        Some("cpu-user") | Some("spinning") => "user CPU",
        Some("cpu-system") => "system CPU",
        _ => "CPU",
    };
    let sentence = functions::sentence(&rows, total, words);
    rows.truncate(MAX_FUNCTIONS);
    (rows, Some(total), sentence)
}

pub use crate::fmt::dur;

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

/// Calls behind a category, a run on average: (count, total seconds), and
/// for sleeps the time asked and the timer slack.
#[derive(Debug, Clone, Copy, Default)]
struct Calls {
    count: f64,
    total: f64,
    asked: f64,
    slack: f64,
}

impl Calls {
    fn per(&self, v: f64) -> f64 {
        if self.count > 0.0 {
            v / self.count
        } else {
            0.0
        }
    }
}

fn calls_of(t: &Trace, kinds: &[&str]) -> Calls {
    let n = t.runs.len().max(1) as f64;
    let mut c = Calls::default();
    for r in &t.runs {
        for k in kinds {
            let x = r.kind(k);
            c.count += x.count as f64 / n;
            c.total += x.total_s / n;
            c.asked += x.asked_s / n;
            c.slack += x.slack_s / n;
        }
    }
    c
}

/// The calls a category is made of, when it is made of calls.
fn calls(i: usize, t: &Trace) -> Option<Calls> {
    Some(match i {
        TIMED_SLEEP => calls_of(t, &["sleep", "timeout"]),
        FSYNC => calls_of(t, &["fsync"]),
        LOCK_WAIT => calls_of(t, &["futex-wait"]),
        EVENT_WAIT => calls_of(t, &["poll", "pipe-read"]),
        IO_WAIT => calls_of(t, &["block-io"]),
        CHILD_WAIT => calls_of(t, &["wait-child"]),
        PROCESS_CREATION => Calls {
            count: t.mean(|r| r.execs as f64),
            total: t.categories.get("process-creation").copied().unwrap_or(0.0),
            ..Calls::default()
        },
        _ => return None,
    })
}

/// What drives a difference made of calls: more of them, slower ones, or
/// both (the difference split as (cb - ca) x per_a + cb x (per_b - per_a)).
fn driver(a: &Calls, b: &Calls) -> &'static str {
    if a.count <= 0.0 || b.count <= 0.0 {
        return "more-calls";
    }
    // Five times as many (or as few): the count is the change; each call's
    // cost is compared against too different a set of calls to mean much.
    if b.count >= 5.0 * a.count || a.count >= 5.0 * b.count {
        return "more-calls";
    }
    let (pa, pb) = (a.per(a.total), b.per(b.total));
    let more = (b.count - a.count) * pa;
    let slower = b.count * (pb - pa);
    let total = more + slower;
    if total.abs() < 1e-12 {
        return "both";
    }
    let f = more / total;
    if f >= 0.75 {
        "more-calls"
    } else if f <= 0.25 {
        "slower-calls"
    } else {
        "both"
    }
}

fn times(x: f64) -> String {
    if x >= 10.0 {
        format!("{x:.0}x")
    } else {
        format!("{x:.1}x")
    }
}

/// "B makes 20x more fsyncs (200 vs 10 a run), each as fast (9 µs vs 9 µs)".
fn calls_sentence(noun: &str, drv: &str, a: &Calls, b: &Calls) -> String {
    let (pa, pb) = (a.per(a.total), b.per(b.total));
    let counts = format!("{:.0} vs {:.0} a run", b.count, a.count);
    let each = format!("{} vs {}", dur(pb), dur(pa));
    let more_or_fewer = |r: f64| {
        if r >= 1.0 {
            format!("{} more", times(r))
        } else {
            format!("{} fewer", times(1.0 / r.max(1e-9)))
        }
    };
    // The words follow the numbers: "about as long" and "as many" only
    // within 15%; the driver says which of the two made the difference.
    let near = |r: f64| (1.0 / 1.15..=1.15).contains(&r);
    let per_call = |pa: f64, pb: f64| {
        let r = pb / pa.max(1e-12);
        if near(r) {
            format!("each about as long ({each})")
        } else if r > 1.0 {
            format!("each {} longer ({each})", times(r))
        } else {
            format!("each {} shorter ({each})", times(1.0 / r.max(1e-12)))
        }
    };
    match drv {
        "more-calls" if a.count <= 0.0 => {
            format!("B makes {noun} A does not ({counts}), {} each", dur(pb))
        }
        "more-calls" => format!(
            "B makes {} {noun} ({counts}), {}",
            more_or_fewer(b.count / a.count),
            per_call(pa, pb)
        ),
        "slower-calls" => format!(
            "each of B's {noun} takes {} {} ({each}), {} ({counts})",
            times(if pb >= pa {
                pb / pa.max(1e-12)
            } else {
                pa / pb.max(1e-12)
            }),
            if pb >= pa { "longer" } else { "less" },
            if near(b.count / a.count.max(1e-12)) {
                "as many of them".to_string()
            } else {
                format!("{} of them", more_or_fewer(b.count / a.count.max(1e-12)))
            }
        ),
        _ => format!(
            "B makes {} {noun} ({counts}) and each takes {} ({each})",
            more_or_fewer(b.count / a.count.max(1e-9)),
            if pb >= pa {
                format!("{} longer", times(pb / pa.max(1e-12)))
            } else {
                format!("{} less", times(pa / pb.max(1e-12)))
            }
        ),
    }
}

/// What one category's difference is: its cause kind, its driver (for
/// categories made of calls), and the evidence in a sentence.
struct Explained {
    kind: &'static str,
    driver: Option<&'static str>,
    calls: Option<(Calls, Calls)>,
    evidence: String,
}

fn size_of_top(t: &Trace) -> (String, Option<u64>) {
    t.runs
        .first()
        .and_then(|r| r.exec_files.first().cloned())
        .map(|f| (format!("{} ({})", f.file, size(f.size_bytes)), f.size_bytes))
        .unwrap_or_else(|| ("?".into(), None))
}

fn explain_category(i: usize, a: &Trace, b: &Trace, delta: f64) -> Explained {
    let d = dur(delta.abs());
    let sign = if delta >= 0.0 { "+" } else { "-" };
    let with_calls = |kind: &'static str, noun: &str, tail: &str| {
        let (ca, cb) = (
            calls(i, a).unwrap_or_default(),
            calls(i, b).unwrap_or_default(),
        );
        let drv = driver(&ca, &cb);
        let mut evidence = calls_sentence(noun, drv, &ca, &cb);
        if !tail.is_empty() && drv != "more-calls" {
            evidence.push_str(": ");
            evidence.push_str(tail);
        }
        Explained {
            kind,
            driver: Some(drv),
            calls: Some((ca, cb)),
            evidence,
        }
    };
    match i {
        TIMED_SLEEP => {
            let (ca, cb) = (
                calls(i, a).unwrap_or_default(),
                calls(i, b).unwrap_or_default(),
            );
            let mut drv = driver(&ca, &cb);
            let (aa, ab) = (ca.per(ca.asked), cb.per(cb.asked));
            let (pa, pb) = (ca.per(ca.total), cb.per(cb.total));
            let (over_a, over_b) = (pa - aa, pb - ab);
            let (slack_a, slack_b) = (ca.per(ca.slack), cb.per(cb.slack));
            let asked_same = (ab - aa).abs() <= 0.1 * aa.max(ab) + 50e-6;
            if drv != "more-calls" && !asked_same && (ab - aa) >= 0.5 * (pb - pa) {
                drv = "longer-asked";
            }
            let evidence = match drv {
                "longer-asked" => format!(
                    "B's sleeps ask for longer: {} each vs {} ({:.0} vs {:.0} a run), overshooting by {} vs {}",
                    dur(ab),
                    dur(aa),
                    cb.count,
                    ca.count,
                    dur(over_b),
                    dur(over_a)
                ),
                "more-calls" => calls_sentence("sleeps", drv, &ca, &cb),
                _ if asked_same && over_b > over_a * 2.0 + 50e-6 => {
                    let slack = if slack_b > 0.0 || slack_a > 0.0 {
                        format!(", timer slack {} vs {}", dur(slack_b), dur(slack_a))
                    } else {
                        String::new()
                    };
                    format!(
                        "each sleep asks for the same ({} vs {}) but overshoots by {} in B ({} in A){slack}: a coarse timer or raised timer slack, as NUnit 3.4's Thread.Sleep(1) under Windows' 15.6 ms timer (see `tardy doctor`'s sleep probe)",
                        dur(ab),
                        dur(aa),
                        dur(over_b),
                        dur(over_a)
                    )
                }
                _ => calls_sentence("sleeps", drv, &ca, &cb),
            };
            Explained {
                kind: "timed-sleep",
                driver: Some(drv),
                calls: Some((ca, cb)),
                evidence,
            }
        }
        PROCESS_CREATION => {
            let (ca, cb) = (
                calls(i, a).unwrap_or_default(),
                calls(i, b).unwrap_or_default(),
            );
            let drv = driver(&ca, &cb);
            let (top_a, sa) = size_of_top(a);
            let (top_b, sb) = size_of_top(b);
            let bigger = matches!((sa, sb), (Some(x), Some(y)) if y > x.saturating_mul(2));
            let mut evidence = calls_sentence("process starts", drv, &ca, &cb);
            if drv == "more-calls" {
                evidence.push_str(&format!("; B's costliest program {top_b}, A's {top_a}"));
            } else if bigger {
                evidence.push_str(&format!(
                    "; B's costliest program {top_b}, A's {top_a}: process creation growing with the binary's size, as CreateProcess did for Vivaldi on Windows 10"
                ));
            } else {
                evidence.push_str(&format!(
                    "; B's costliest program {top_b}, A's {top_a}: each start (fork, exec, dynamic loading) is slower"
                ));
            }
            Explained {
                kind: if drv == "more-calls" {
                    "more-processes"
                } else {
                    "process-creation"
                },
                driver: Some(drv),
                calls: Some((ca, cb)),
                evidence,
            }
        }
        FSYNC => with_calls(
            "fsync",
            "fsyncs",
            "B's file system or device takes longer to make data durable (see `tardy doctor`'s fsync probe)",
        ),
        LOCK_WAIT => with_calls(
            "lock-wait",
            "lock waits",
            "each wait for a lock lasts longer",
        ),
        EVENT_WAIT => with_calls(
            "event-wait",
            "waits on pipes, sockets or poll",
            "what they wait for answers later",
        ),
        IO_WAIT => with_calls(
            "io-wait",
            "waits for the disk",
            "each block I/O takes longer",
        ),
        CHILD_WAIT => with_calls(
            "child-wait",
            "waits for children",
            "the children it waits for take longer",
        ),
        RUN_QUEUE => {
            let text = format!(
                "waiting for a CPU on the critical path {sign}{d} ({} in B, {} in A)",
                dur(b.categories.get("run-queue").copied().unwrap_or(0.0)),
                dur(a.categories.get("run-queue").copied().unwrap_or(0.0))
            );
            let why = match hungriest_sibling(a, b) {
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
            Explained {
                kind: "run-queue",
                driver: None,
                calls: None,
                evidence: format!("{text}: {why}"),
            }
        }
        CPU_USER => {
            let la = kind_mean(a, "futex-wait");
            let lb = kind_mean(b, "futex-wait");
            let spinning = delta > 0.0 && spins(a, b, delta);
            let mut evidence = format!(
                "user CPU on the critical path {sign}{d}; whole tree {} in B vs {} in A; {} lock waits a run in B, {} in A",
                dur(b.mean(|r| r.cpu_user_s)),
                dur(a.mean(|r| r.cpu_user_s)),
                lb.count,
                la.count
            );
            if spinning {
                match (spin_median(a), spin_median(b)) {
                    (Some(sa), Some(sb)) => evidence.push_str(&format!(
                        "; spinning: the profile puts {} a run (median) in spin-wait loops in B, {} in A (loops whose machine code holds PAUSE, or sched_yield): threads spin longer before they take what they wait for or park, as with Skylake-SP's 140-cycle PAUSE",
                        dur(sb),
                        dur(sa)
                    )),
                    _ => evidence.push_str(&format!(
                        "; spinning in user space with no more lock waits ({} a run in B, {} in A): threads spin longer before they park, as with Skylake-SP's 140-cycle PAUSE",
                        lb.count, la.count
                    )),
                }
            } else if delta > 0.0 {
                evidence.push_str(": more work (more user CPU with the same waits)");
            }
            Explained {
                kind: if spinning { "spinning" } else { "cpu-user" },
                driver: None,
                calls: None,
                evidence,
            }
        }
        CPU_SYSTEM => {
            let fa = a.mean(|r| (r.minor_faults + r.major_faults) as f64);
            let fb = b.mean(|r| (r.minor_faults + r.major_faults) as f64);
            Explained {
                kind: if fb > fa * 1.5 && fb - fa > 1000.0 {
                    "page-faults"
                } else {
                    "cpu-system"
                },
                driver: None,
                calls: None,
                evidence: format!(
                    "system CPU {sign}{d}; {fb:.0} page faults a run in B, {fa:.0} in A"
                ),
            }
        }
        _ => Explained {
            kind: CATEGORIES[i],
            driver: None,
            calls: None,
            evidence: format!("{} {sign}{d}", category_words(i)),
        },
    }
}

/// CPU seconds the profile sampled in spin-wait loops in the middle run,
/// when the side has a profile. The median, not the mean: beside CPU hogs
/// one run whose baton holder sat two seconds in the run queue spins for
/// those two seconds, and one such run in A must not outweigh nine.
fn spin_median(t: &Trace) -> Option<f64> {
    let p = t.profile.as_ref().filter(|p| !p.spin_s.is_empty())?;
    Some(crate::stats::summary::median_by_selection(
        &mut p.spin_s.clone(),
    ))
}

/// The middle run's value of `f`.
fn median_of(t: &Trace, f: impl Fn(&RunSummary) -> f64) -> f64 {
    let mut v: Vec<f64> = t.runs.iter().map(f).collect();
    if v.is_empty() {
        return 0.0;
    }
    crate::stats::summary::median_by_selection(&mut v)
}

/// Spin-waits grew. With a profile, its evidence decides, never a name: in
/// each side's middle run, at least 40% of B's extra user CPU was sampled inside spin-wait loops (a
/// PAUSE in the loop's machine code, or `sched_yield`), in a program whose
/// threads also park on futexes (joins not counted), whatever the futex
/// time did. Without one (the ptrace recorder, `--profile-hz 0`): several
/// threads, no more lock waits in B, and the CPU in the threads that wait
/// on locks, the ones handing a lock to each other. More work in many
/// threads, whose only lock waits are a runtime's idle threads (Go's, the
/// JVM's), is not spinning.
fn spins(a: &Trace, b: &Trace, cpu_delta: f64) -> bool {
    if let (Some(sa), Some(sb)) = (spin_median(a), spin_median(b)) {
        let tree = median_of(b, |r| r.cpu_user_s) - median_of(a, |r| r.cpu_user_s);
        let parks = kind_mean(a, "futex-wait")
            .count
            .max(kind_mean(b, "futex-wait").count)
            >= 1;
        return parks && sb > sa && sb - sa >= 0.4 * tree.max(cpu_delta);
    }
    let (ka, kb) = (kind_mean(a, "futex-wait"), kind_mean(b, "futex-wait"));
    let (la, lb) = (ka.count as f64, kb.count as f64);
    // Threads that park longer while a holder works more are waiting, not
    // spinning: spinning replaces parked time with CPU.
    if kb.total_s - ka.total_s > 0.5 * cpu_delta {
        return false;
    }
    let threaded = b.mean(|r| r.threads as f64) > b.mean(|r| r.processes as f64);
    // The extra CPU is B's: is it in threads that hand a lock around?
    let locking = b.mean(|r| r.lock_thread_cpu_share);
    threaded && la.max(lb) >= 1.0 && lb <= la * 1.2 + 5.0 && locking >= 0.5
}

/// Run-queue delay is contention only when a sibling in the tree burns CPU
/// beside the path, or when it grows faster than both the CPU time it waits
/// to get and the tasks that must each get a CPU (a loaded machine makes
/// longer work, and every new process, wait longer).
fn contention(a: &Trace, b: &Trace) -> bool {
    let rq = |t: &Trace| t.categories.get("run-queue").copied().unwrap_or(0.0);
    let drq = rq(b) - rq(a);
    if drq <= 0.0 {
        return false;
    }
    // A process of the tree that burns CPU beside the critical path.
    if let Some((_, vb, va)) = hungriest_sibling(a, b)
        && vb - va > drq * 0.25
    {
        return true;
    }
    // Time on a CPU: the command's own, and starting processes (mostly
    // the kernel's and the loader's CPU work).
    let cpu = |t: &Trace| {
        ["cpu-user", "cpu-system", "process-creation"]
            .iter()
            .map(|c| t.categories.get(*c).copied().unwrap_or(0.0))
            .sum::<f64>()
    };
    // The tree's own threads burning more CPU (more work, longer spins)
    // make its other threads wait: that is not load from outside.
    let tree = |t: &Trace| t.mean(|r| r.cpu_user_s + r.cpu_system_s);
    if tree(b) - tree(a) >= 0.5 * drq {
        return false;
    }
    // A side with little work says little about how long work waits.
    if cpu(a) < 0.2 * cpu(b) || cpu(b) < 0.2 * cpu(a) {
        return false;
    }
    // Every task started and every wait ended must get a CPU anew.
    let tasks = |t: &Trace| {
        t.mean(|r| {
            let waits: u64 = r
                .syscalls
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "fork" | "exec" | "load" | "exec-failed"))
                .map(|(_, v)| v.count)
                .sum();
            (r.threads + r.execs + waits) as f64
        })
        .max(1.0)
    };
    let grew = (cpu(b) / cpu(a).max(1e-6)).max(tasks(b) / tasks(a));
    rq(b) / rq(a).max(1e-6) > 1.5 * grew
}

/// The process off the critical path whose CPU grew most from A to B:
/// (command, B's CPU a run, A's).
fn hungriest_sibling(a: &Trace, b: &Trace) -> Option<(String, f64, f64)> {
    let (oa, ob) = (off_path(a), off_path(b));
    let mut best: Option<(String, f64, f64)> = None;
    for (cmd, vb) in &ob {
        let va = oa.get(cmd).copied().unwrap_or(0.0);
        if vb - va > best.as_ref().map_or(0.0, |x| x.1 - x.2) {
            best = Some((cmd.clone(), *vb, va));
        }
    }
    best
}

/// Whether B's walls differ from A's beyond the run-to-run noise: an exact
/// rank test on the walls, or, when the sides are too small for it to reach
/// 5% (3 runs a side), complete separation with a clear ratio on the log
/// scale (Welch's t on log walls at 5%: noise that separates the sides by
/// chance, one time in ten at 3 runs, rarely also gives a clear ratio).
pub fn walls_differ(wa: &[f64], wb: &[f64]) -> bool {
    if wa.is_empty() || wb.is_empty() {
        return false;
    }
    if wa.len() < 2 || wb.len() < 2 {
        let (ma, mb) = (
            wa.iter().sum::<f64>() / wa.len() as f64,
            wb.iter().sum::<f64>() / wb.len() as f64,
        );
        return (mb - ma).abs() > 0.05 * ma.max(mb);
    }
    if let Some(u) = crate::stats::utest::mann_whitney(wa, wb, None)
        && u.p_value <= 0.05
    {
        return true;
    }
    let max = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max);
    let min = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min);
    let separated = max(wa) < min(wb) || max(wb) < min(wa);
    let logs = |v: &[f64]| v.iter().map(|x| x.max(1e-12).ln()).collect::<Vec<_>>();
    separated && ttest::welch(&logs(wa), &logs(wb), 0.95).is_some_and(|t| t.p_value < 0.05)
}

/// Compare A and B.
pub fn compare(a: &Trace, b: &Trace) -> Comparison {
    let wa = per_run(a, |r| r.wall_s);
    let wb = per_run(b, |r| r.wall_s);
    let delta = b.wall_s - a.wall_s;
    let test = ttest::welch(&wa, &wb, 0.95);
    let ci = test
        .as_ref()
        .map(|t| t.ci)
        .filter(|c| c.iter().all(|v| v.is_finite()));
    let significant = walls_differ(&wa, &wb);
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
            share: 0.0,
            verdict: Verdict::Noise,
        });
    }
    // Waiting for a CPU that grows only with the work or the processes
    // that wait for it is part of that cause, not contention: ranked with
    // the largest other growth (more work, more processes).
    let mut deltas: Vec<f64> = table.iter().map(|r| r.delta_s).collect();
    // The largest other growth takes them; when nothing else grew much and
    // the tree's own CPU did (threads spinning beside the path), user CPU.
    let largest = (0..NCAT)
        .filter(|&i| i != RUN_QUEUE && i != OTHER && deltas[i] > 0.0)
        .max_by(|&x, &y| deltas[x].total_cmp(&deltas[y]));
    let tree_cpu_grew = b.mean(|r| r.cpu_user_s) > a.mean(|r| r.cpu_user_s) * 1.05;
    let host = match largest {
        Some(i) if deltas[i] >= 0.25 * deltas[RUN_QUEUE] => Some(i),
        _ if tree_cpu_grew && deltas[CPU_USER] > -deltas[RUN_QUEUE] => Some(CPU_USER),
        other => other,
    };
    let rq_folded = match host {
        Some(h) if !contention(a, b) && deltas[RUN_QUEUE] > 0.0 => {
            deltas[h] += deltas[RUN_QUEUE];
            deltas[RUN_QUEUE] = 0.0;
            Some(h)
        }
        _ => None,
    };
    // Each category's verdict against its own runs' noise, the run-queue
    // delay counted with the cause it was folded into.
    let verdicts = category_verdicts(a, b, rq_folded);
    // One share per category, used by the table and the causes alike: of
    // the wall-time difference when it is significant, else of the sum of
    // every category's absolute change (said so).
    let changes: f64 = deltas.iter().map(|d| d.abs()).sum();
    let (base, shares_of) = if significant && delta != 0.0 {
        (delta, "wall")
    } else {
        (changes, "changes")
    };
    let share = |d: f64| if base != 0.0 { d / base } else { 0.0 };
    for (i, row) in table.iter_mut().enumerate() {
        row.share = share(deltas[i]);
        row.verdict = verdicts[i].0;
    }
    let mut order: Vec<usize> = (0..NCAT).collect();
    // Proven differences first, then by share (for a difference within the
    // noise, by size whatever its sign). A difference proven against very
    // tight runs but under 5% of the base (127 µs of process start-up in a
    // 114 ms slowdown, beside CPU hogs) is real but not what the difference
    // is made of: it ranks by its share with the rest. Counts that differ in
    // every run are certain and always lead.
    let rank = |i: usize| match verdicts[i].0 {
        Verdict::Certain => 0,
        Verdict::Significant if share(deltas[i]).abs() >= 0.05 => 0,
        _ => 1,
    };
    order.sort_by(|&x, &y| {
        rank(x).cmp(&rank(y)).then_with(|| {
            if shares_of == "wall" {
                share(deltas[y]).total_cmp(&share(deltas[x]))
            } else {
                share(deltas[y]).abs().total_cmp(&share(deltas[x]).abs())
            }
        })
    });
    let mut causes = Vec::new();
    for &i in &order {
        let d = deltas[i];
        let sh = share(d);
        let shown = if shares_of == "wall" { sh } else { sh.abs() };
        if d == 0.0
            || (shown < 0.01 && !verdicts[i].0.proven())
            || (shares_of == "wall" && sh < 0.0)
        {
            continue;
        }
        let mut e = explain_category(i, a, b, d);
        if rq_folded == Some(i) {
            e.evidence.push_str(&format!(
                "; waiting for a CPU grew with it ({} of the difference), as more work and more processes wait longer on a busy machine",
                dur(table[RUN_QUEUE].delta_s)
            ));
        }
        let (count_a, count_b, per_a, per_b) = match e.calls {
            Some((ca, cb)) => (
                Some(ca.count),
                Some(cb.count),
                Some(ca.per(ca.total)),
                Some(cb.per(cb.total)),
            ),
            None => (None, None, None, None),
        };
        let (verdict, p_adjusted, every_run) = verdicts[i];
        causes.push(Cause {
            kind: e.kind.into(),
            share: sh,
            delta_s: d,
            evidence: e.evidence,
            count_a,
            count_b,
            per_call_a_s: per_a,
            per_call_b_s: per_b,
            driver: e.driver.map(String::from),
            verdict,
            p_adjusted,
            every_run,
        });
    }
    let (waiting_functions, waits_summary) = wait_rows(a, b, &mut causes);
    let ratio = if a.wall_s > 0.0 {
        b.wall_s / a.wall_s
    } else {
        1.0
    };
    let walls = format!(
        "A {} and B {} a run ({}{})",
        dur(a.wall_s),
        dur(b.wall_s),
        if delta >= 0.0 { "+" } else { "-" },
        dur(delta.abs())
    );
    let head = if !significant {
        format!("No difference beyond the run-to-run noise: {walls}.")
    } else if delta > 0.0 {
        format!("B is {} slower (+{}).", ratio_words(ratio), dur(delta))
    } else {
        format!(
            "B is {} faster (-{}).",
            ratio_words(1.0 / ratio),
            dur(-delta)
        )
    };
    let words_of = |c: &Cause| -> &'static str {
        match c.kind.as_str() {
            "spinning" => "user CPU spent spinning",
            "page-faults" => "system CPU (page faults)",
            "more-processes" => "process creation (more processes)",
            _ => CATEGORIES
                .iter()
                .position(|k| *k == c.kind)
                .map_or("other (not attributed)", category_words),
        }
    };
    let proven: Vec<&Cause> = causes.iter().filter(|c| c.verdict.proven()).collect();
    let diagnosis = match causes.first() {
        Some(top) if significant && top.verdict.proven() && top.share >= 0.5 => {
            let i = order.first().copied().unwrap_or(OTHER);
            let words = match top.kind.as_str() {
                "spinning" | "page-faults" | "more-processes" => words_of(top),
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
                .map(|c| {
                    format!(
                        "{} {:.0}%{}",
                        c.kind,
                        c.share * 100.0,
                        if c.verdict.proven() {
                            ""
                        } else {
                            " (within its noise)"
                        }
                    )
                })
                .collect();
            format!("{head} No single cause: {}.", parts.join(", "))
        }
        // The wall time is too noisy to tell, but a category's runs are
        // not: say what is certain first.
        _ if !proven.is_empty() => {
            let parts: Vec<String> = proven
                .iter()
                .take(3)
                .map(|c| {
                    let how = match (c.verdict, c.every_run) {
                        (Verdict::Certain, _) => "in every run, certain".to_string(),
                        (_, true) => "in every run".to_string(),
                        _ => match c.p_adjusted {
                            Some(p) if p < 0.001 => "p<0.001".to_string(),
                            Some(p) => format!("p={p:.3}"),
                            None => "beyond its noise".to_string(),
                        },
                    };
                    format!(
                        "{} {}{} a run ({how})",
                        words_of(c),
                        if c.delta_s >= 0.0 { "+" } else { "-" },
                        dur(c.delta_s.abs())
                    )
                })
                .collect();
            format!(
                "{}; the wall time is too noisy to add up: {walls}, within the run-to-run noise. {}",
                capitalise(&parts.join("; ")),
                proven
                    .first()
                    .map(|c| format!("{}.", capitalise(&c.evidence)))
                    .unwrap_or_default()
            )
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
    let (functions, sampled_cpu_delta_s, functions_summary) = function_rows(a, b, &causes);
    for (side, t) in [("A", a), ("B", b)] {
        if let Some(n) = &t.profile_note {
            warnings.push(format!("{side}: {n}"));
        }
    }
    Comparison {
        wall_a_s: a.wall_s,
        wall_b_s: b.wall_s,
        delta_s: delta,
        ratio,
        ci_s: ci,
        significant,
        shares_of: shares_of.to_string(),
        run_queue_counted_with: rq_folded.map(|i| CATEGORIES[i].to_string()),
        table,
        causes,
        diagnosis,
        warnings,
        functions,
        sampled_cpu_delta_s,
        functions_summary,
        waiting_functions,
        waits_summary,
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The per-run count of the calls a category is made of, when it is made
/// of calls.
fn run_counts(i: usize, t: &Trace) -> Option<Vec<f64>> {
    let kinds: &[&str] = match i {
        TIMED_SLEEP => &["sleep", "timeout"],
        FSYNC => &["fsync"],
        LOCK_WAIT => &["futex-wait"],
        EVENT_WAIT => &["poll", "pipe-read"],
        IO_WAIT => &["block-io"],
        CHILD_WAIT => &["wait-child"],
        PROCESS_CREATION => return Some(t.runs.iter().map(|r| r.execs as f64).collect()),
        _ => return None,
    };
    Some(
        t.runs
            .iter()
            .map(|r| kinds.iter().map(|k| r.kind(k).count as f64).sum())
            .collect(),
    )
}

/// Every category's verdict, its p-value after Holm's correction over the
/// categories tested (those whose runs vary), and whether every run of B is
/// beyond every run of A in it. A category made of calls whose count is
/// the same in every run of each side and differs between them is
/// [`Verdict::Certain`] and not tested. The others: the exact rank test on
/// the runs' times, or, when the sides are completely separated, the
/// smaller of it and Welch's t on their logarithms (with 3 runs a side no
/// rank test can reach 5%: [`walls_differ`]'s rule, held at 5% on A
/// against A). `folded`: the category the run-queue delay was counted with.
pub fn category_verdicts(
    a: &Trace,
    b: &Trace,
    folded: Option<usize>,
) -> [(Verdict, Option<f64>, bool); NCAT] {
    let mut out = [(Verdict::Noise, None, false); NCAT];
    let series = |t: &Trace, i: usize| -> Vec<f64> {
        t.runs
            .iter()
            .map(|r| {
                let c = r.cat();
                match folded {
                    Some(h) if h == i => c[i] + c[RUN_QUEUE],
                    Some(_) if i == RUN_QUEUE => 0.0,
                    _ => c[i],
                }
            })
            .collect()
    };
    let constant = |v: &[f64]| v.iter().all(|x| *x == v[0]);
    let mut tested: Vec<(usize, f64)> = Vec::new();
    for (i, slot) in out.iter_mut().enumerate() {
        let (va, vb) = (series(a, i), series(b, i));
        if va.is_empty() || vb.is_empty() {
            continue;
        }
        let max = |v: &[f64]| v.iter().cloned().fold(f64::MIN, f64::max);
        let min = |v: &[f64]| v.iter().cloned().fold(f64::MAX, f64::min);
        let separated = max(&va) < min(&vb) || max(&vb) < min(&va);
        slot.2 = separated;
        if let (Some(ka), Some(kb)) = (run_counts(i, a), run_counts(i, b))
            && constant(&ka)
            && constant(&kb)
            && ka[0] != kb[0]
        {
            slot.0 = Verdict::Certain;
            continue;
        }
        if constant(&va) && constant(&vb) {
            continue;
        }
        let rank = crate::stats::utest::mann_whitney(&va, &vb, None).map_or(1.0, |u| u.p_value);
        let logs = |v: &[f64]| v.iter().map(|x| x.max(1e-9).ln()).collect::<Vec<_>>();
        let log_welch = if separated && va.len() >= 2 && vb.len() >= 2 {
            ttest::welch(&logs(&va), &logs(&vb), 0.95).map_or(1.0, |t| t.p_value)
        } else {
            1.0
        };
        tested.push((i, rank.min(log_welch)));
    }
    let ps: Vec<f64> = tested.iter().map(|t| t.1).collect();
    for ((i, _), q) in tested.iter().zip(crate::stats::multiple::holm(&ps)) {
        out[*i].1 = Some(q);
        if q < 0.05 {
            out[*i].0 = Verdict::Significant;
        }
    }
    out
}

fn ratio_words(r: f64) -> String {
    if r >= 1.5 {
        format!("{r:.1}x")
    } else {
        format!("{:.0}%", (r - 1.0) * 100.0)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn per_call_words_follow_the_numbers() {
        let c = |count: f64, total: f64| Calls {
            count,
            total,
            ..Calls::default()
        };
        // Five times the calls, each 5x longer: never "about as long".
        let t = calls_sentence(
            "waits",
            "more-calls",
            &c(1.0, 0.00162),
            &c(5.0, 5.0 * 0.00848),
        );
        assert!(
            t.contains("each 5.2x longer") && !t.contains("about as long"),
            "{t}"
        );
        let t = calls_sentence("waits", "more-calls", &c(1.0, 0.010), &c(2.0, 0.0205));
        assert!(t.contains("each about as long"), "{t}");
        // Slower calls, and twice as many of them: not "as many".
        let t = calls_sentence("waits", "slower-calls", &c(2.0, 0.002), &c(4.0, 0.040));
        assert!(
            t.contains("2.0x more of them") && !t.contains("as many"),
            "{t}"
        );
    }
    use super::{Calls, calls_sentence, walls_differ};
    use crate::stats::rng::SplitMix64;

    /// Walls of runs on a noisy machine: lognormal around `m`, with a slow
    /// mode (one run in ten 30% slower), as this VM shows.
    fn walls(rng: &mut SplitMix64, n: usize, m: f64) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let slow = if rng.next_f64() < 0.1 { 1.3 } else { 1.0 };
                m * slow * (0.06 * rng.normal()).exp()
            })
            .collect()
    }

    #[test]
    fn a_against_a_is_called_different_at_most_five_percent_of_the_time() {
        let mut rng = SplitMix64::new(26);
        for n in [2, 3, 4, 5, 10] {
            let trials = 4000;
            let hits = (0..trials)
                .filter(|_| {
                    let (a, b) = (walls(&mut rng, n, 1.0), walls(&mut rng, n, 1.0));
                    walls_differ(&a, &b)
                })
                .count();
            let rate = hits as f64 / trials as f64;
            eprintln!("{n} runs a side: A/A called different {:.1}%", rate * 100.0);
            // 5% plus three binomial standard errors.
            assert!(
                rate <= 0.05 + 3.0 * (0.05f64 * 0.95 / trials as f64).sqrt(),
                "{n}: {rate}"
            );
        }
    }

    #[test]
    fn a_clean_tenfold_difference_is_seen_with_three_runs() {
        let mut rng = SplitMix64::new(7);
        for _ in 0..200 {
            let (a, b) = (walls(&mut rng, 3, 1.0), walls(&mut rng, 3, 10.0));
            assert!(walls_differ(&a, &b), "{a:?} {b:?}");
        }
        // One run a side: only a clear ratio.
        assert!(walls_differ(&[1.0], &[1.5]));
        assert!(!walls_differ(&[1.0], &[1.02]));
        assert!(!walls_differ(&[], &[1.0]));
    }
}
