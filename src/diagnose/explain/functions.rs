//! Which code: the functions of the sampled CPU profiles, one side's top
//! ones, or A against B ranked by their share of the CPU-time difference,
//! each with an interval from the runs.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::profile::{FunctionInfo, Profile};
use crate::stats::ttest;

/// One function's CPU time, a run (self: sampled on top of the stack;
/// total: anywhere in it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCost {
    /// `function`, `module`, `file`, `line`.
    #[serde(flatten)]
    pub info: FunctionInfo,
    pub self_s: f64,
    pub total_s: f64,
    /// self / all sampled CPU.
    pub share: f64,
}

/// One function of A against B (self time, seconds a run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDelta {
    /// `function`, `module`, `file`, `line`.
    #[serde(flatten)]
    pub info: FunctionInfo,
    pub a_s: f64,
    pub b_s: f64,
    pub delta_s: f64,
    /// delta / the difference of all sampled CPU (B - A).
    pub share: f64,
    /// 95% interval of the difference (Welch), with 2+ runs a side.
    pub ci_s: Option<[f64; 2]>,
    /// The difference of its total time (itself and what it calls).
    pub total_delta_s: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// All sampled CPU of each run.
fn run_totals(p: &Profile) -> Vec<f64> {
    let mut t = vec![0.0; p.runs];
    for st in &p.stacks {
        for (r, s) in st.s.iter().enumerate().take(p.runs) {
            t[r] += s;
        }
    }
    t
}

/// The functions with the most self time, a run.
pub fn top(p: &Profile, n: usize) -> Vec<FunctionCost> {
    let total = mean(&run_totals(p));
    let per = p.per_function();
    let mut out: Vec<FunctionCost> = p
        .functions
        .iter()
        .zip(per.iter())
        .map(|(f, (s, t))| FunctionCost {
            info: f.clone(),
            self_s: mean(s),
            total_s: mean(t),
            share: if total > 0.0 { mean(s) / total } else { 0.0 },
        })
        .filter(|f| f.self_s > 0.0)
        .collect();
    out.sort_by(|a, b| b.self_s.total_cmp(&a.self_s));
    out.truncate(n);
    out
}

/// A against B: every function in either, by the size of its share of the
/// difference of all sampled CPU (largest first). Also that difference.
pub fn deltas(a: &Profile, b: &Profile) -> (Vec<FunctionDelta>, f64) {
    let total = mean(&run_totals(b)) - mean(&run_totals(a));
    let pa = a.per_function();
    let pb = b.per_function();
    type Key = (String, String);
    let mut rows: HashMap<Key, (usize, Option<usize>, Option<usize>)> = HashMap::new();
    let mut order: Vec<Key> = Vec::new();
    for (side, p) in [(0, a), (1, b)] {
        for (i, f) in p.functions.iter().enumerate() {
            let k = (f.function.clone(), f.module.clone());
            let e = rows.entry(k.clone()).or_insert_with(|| {
                order.push(k);
                (side, None, None)
            });
            if side == 0 {
                e.1 = Some(i);
            } else {
                e.2 = Some(i);
            }
        }
    }
    let zeros_a = vec![0.0; a.runs];
    let zeros_b = vec![0.0; b.runs];
    let mut out = Vec::new();
    for k in order {
        let (_, ia, ib) = rows[&k];
        let (sa, ta) = ia
            .and_then(|i| pa.get(i))
            .map_or((&zeros_a, &zeros_a), |(s, t)| (s, t));
        let (sb, tb) = ib
            .and_then(|i| pb.get(i))
            .map_or((&zeros_b, &zeros_b), |(s, t)| (s, t));
        let (ma, mb) = (mean(sa), mean(sb));
        if ma == 0.0 && mb == 0.0 {
            continue;
        }
        let info = ib
            .and_then(|i| b.functions.get(i))
            .or_else(|| ia.and_then(|i| a.functions.get(i)));
        let d = mb - ma;
        out.push(FunctionDelta {
            info: FunctionInfo {
                function: k.0,
                module: k.1,
                file: info.and_then(|f| f.file.clone()),
                line: info.and_then(|f| f.line),
            },
            a_s: ma,
            b_s: mb,
            delta_s: d,
            share: if total != 0.0 { d / total } else { 0.0 },
            ci_s: ttest::welch(sa, sb, 0.95)
                .map(|t| t.ci)
                .filter(|c| c.iter().all(|v| v.is_finite())),
            total_delta_s: mean(tb) - mean(ta),
        });
    }
    // The direction of the total difference first, largest first.
    let sign = if total < 0.0 { -1.0 } else { 1.0 };
    out.sort_by(|x, y| (sign * y.delta_s).total_cmp(&(sign * x.delta_s)));
    (out, total)
}

/// One function that waited, A against B: the time threads spent blocked
/// with it as the innermost frame of their own code, in one kind of wait,
/// seconds a run (all threads: waits overlap, so they can exceed the wall).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitDelta {
    /// The kind of wait, as saved traces name it ("futex-wait", "sleep",
    /// "pipe-read", "poll", "wait-child", "fsync", "block-io"...).
    pub kind: String,
    /// `function`, `module`, `file`, `line`.
    #[serde(flatten)]
    pub info: FunctionInfo,
    /// The library or runtime function it waited in ("pthread_mutex_lock").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    pub a_s: f64,
    pub b_s: f64,
    pub delta_s: f64,
    /// delta / the difference of all waits of this kind (B - A).
    pub share: f64,
    pub ci_s: Option<[f64; 2]>,
    /// Who ended these waits in B (threads of the tree, largest first):
    /// the rest ended from outside it (a timer, a device, another program).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub woken_by: Vec<Waker>,
}

/// A thread that ended waits: its process (command), which thread, and
/// the function of its own code it woke them from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waker {
    pub process: String,
    pub thread: String,
    /// `function`, `module`, `file`, `line`.
    #[serde(flatten)]
    pub info: FunctionInfo,
    /// The library function it woke them through ("pthread_cond_signal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    /// Seconds of the waits it ended, a run.
    pub s: f64,
    /// Of the waiting function's time (`b_s`).
    pub share: f64,
}

/// A waiting function's identity by names: kind, function, module, through.
type WaitKey = (String, String, String, Option<String>);

/// Per waiting function (by names), who ended its waits: seconds a run.
fn wakers(p: &Profile) -> HashMap<WaitKey, Vec<Waker>> {
    let name = |f: u32| p.functions.get(f as usize);
    let mut sums: HashMap<(WaitKey, String, String, u32, Option<u32>), f64> = HashMap::new();
    for w in &p.wakes {
        let (Some((f, through)), Some((wf, wthrough))) =
            (waiter(p, &w.frames), woke_from(p, &w.waker))
        else {
            continue;
        };
        let Some(fi) = name(f) else { continue };
        let key = (
            w.kind.clone(),
            fi.function.clone(),
            fi.module.clone(),
            through.and_then(name).map(|t| t.function.clone()),
        );
        *sums
            .entry((key, w.process.clone(), w.thread.clone(), wf, wthrough))
            .or_default() += mean(&w.s);
    }
    let mut out: HashMap<WaitKey, Vec<Waker>> = HashMap::new();
    for ((key, process, thread, wf, wthrough), s) in sums {
        let Some(info) = name(wf) else { continue };
        out.entry(key).or_default().push(Waker {
            process,
            thread,
            info: info.clone(),
            through: wthrough.and_then(name).map(|t| t.function.clone()),
            s,
            share: 0.0,
        });
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| {
            b.s.total_cmp(&a.s)
                .then_with(|| a.info.function.cmp(&b.info.function))
        });
        v.truncate(5);
    }
    out
}

/// Code that only passes a wait on: the C and C++ runtimes, the dynamic
/// loader, the kernel, and the language runtimes' own wait loops.
fn is_plumbing(f: &FunctionInfo) -> bool {
    let m = f.module.as_str();
    let lib = |p: &str| m.starts_with(p);
    if m == "[kernel]"
        || m == "[vdso]"
        || lib("libc.so")
        || lib("libc-")
        || lib("libpthread")
        || lib("ld-linux")
        || lib("ld-musl")
        || lib("libstdc++")
        || lib("libc++")
        || lib("libgcc_s")
        || lib("librt")
        || lib("libdl")
    {
        return true;
    }
    let n = f.function.as_str();
    [
        "runtime.",
        "syscall.",
        "internal/poll.",
        "std::sys::",
        "std::thread::park",
        "std::sync::",
        "parking_lot",
    ]
    .iter()
    .any(|p| n.starts_with(p))
}

/// The function that waited in a stack (outermost first): the innermost
/// frame of the program's own code, and the library function it called to
/// wait. A stack of plumbing alone names its innermost user frame.
pub fn waiter(p: &Profile, frames: &[u32]) -> Option<(u32, Option<u32>)> {
    let info = |i: u32| p.functions.get(i as usize);
    let own = frames
        .iter()
        .rposition(|&f| info(f).is_some_and(|f| !is_plumbing(f)))
        .or_else(|| {
            frames
                .iter()
                .rposition(|&f| info(f).is_some_and(|f| f.module != "[kernel]"))
        })?;
    let through = frames
        .get(own + 1)
        .copied()
        .filter(|&f| info(f).is_some_and(|f| f.module != "[kernel]"));
    Some((frames[own], through))
}

/// The function a waker woke from: as [`waiter`] names a waiting one; a
/// stack of plumbing alone (unwinding stopped in the C library) names its
/// outermost frame, the library call the program made (`sem_post`), not
/// the futex call inside it.
fn woke_from(p: &Profile, frames: &[u32]) -> Option<(u32, Option<u32>)> {
    let info = |i: u32| p.functions.get(i as usize);
    if frames
        .iter()
        .any(|&f| info(f).is_some_and(|f| !is_plumbing(f)))
    {
        return waiter(p, frames);
    }
    frames
        .iter()
        .copied()
        .find(|&f| info(f).is_some_and(|f| f.module != "[kernel]"))
        .map(|f| (f, None))
}

/// Per (kind, waiting function, through): seconds in each run.
fn waiting(p: &Profile) -> HashMap<(String, u32, Option<u32>), Vec<f64>> {
    let mut out: HashMap<(String, u32, Option<u32>), Vec<f64>> = HashMap::new();
    for w in &p.waits {
        let Some((f, through)) = waiter(p, &w.frames) else {
            continue;
        };
        let row = out
            .entry((w.kind.clone(), f, through))
            .or_insert_with(|| vec![0.0; p.runs]);
        for (r, s) in w.s.iter().enumerate().take(p.runs) {
            row[r] += s;
        }
    }
    out
}

/// A against B: the functions that waited, by kind, ranked by the size of
/// their difference; each share is of its kind's difference.
pub fn wait_deltas(a: &Profile, b: &Profile) -> Vec<WaitDelta> {
    type Key = (String, String, String, Option<String>);
    let key = |p: &Profile, (kind, f, through): &(String, u32, Option<u32>)| -> Option<Key> {
        let fi = p.functions.get(*f as usize)?;
        Some((
            kind.clone(),
            fi.function.clone(),
            fi.module.clone(),
            through
                .and_then(|t| p.functions.get(t as usize))
                .map(|t| t.function.clone()),
        ))
    };
    let mut rows: HashMap<Key, (Vec<f64>, Vec<f64>, FunctionInfo)> = HashMap::new();
    let mut woken = wakers(b);
    for (side, p) in [(0, a), (1, b)] {
        for (k, v) in waiting(p) {
            let Some(key) = key(p, &k) else { continue };
            let info = p.functions[k.1 as usize].clone();
            let e = rows
                .entry(key)
                .or_insert_with(|| (vec![0.0; a.runs], vec![0.0; b.runs], info.clone()));
            if side == 0 {
                e.0 = v;
            } else {
                e.1 = v;
                e.2 = info;
            }
        }
    }
    let mut kind_total: HashMap<String, f64> = HashMap::new();
    for (k, (va, vb, _)) in &rows {
        *kind_total.entry(k.0.clone()).or_default() += mean(vb) - mean(va);
    }
    let mut out: Vec<WaitDelta> = rows
        .into_iter()
        .map(|((kind, function, module, through), (va, vb, info))| {
            let d = mean(&vb) - mean(&va);
            let total = kind_total.get(&kind).copied().unwrap_or(0.0);
            let b_s = mean(&vb);
            let mut woken_by = woken
                .remove(&(kind.clone(), function, module, through.clone()))
                .unwrap_or_default();
            for w in woken_by.iter_mut() {
                w.share = if b_s > 0.0 { (w.s / b_s).min(1.0) } else { 0.0 };
            }
            WaitDelta {
                woken_by,
                share: if total != 0.0 { d / total } else { 0.0 },
                kind,
                info,
                through,
                a_s: mean(&va),
                b_s: mean(&vb),
                delta_s: d,
                ci_s: ttest::welch(&va, &vb, 0.95)
                    .map(|t| t.ci)
                    .filter(|c| c.iter().all(|v| v.is_finite())),
            }
        })
        .filter(|w| w.a_s > 0.0 || w.b_s > 0.0)
        .collect();
    out.sort_by(|x, y| {
        y.delta_s
            .abs()
            .total_cmp(&x.delta_s.abs())
            .then_with(|| x.info.function.cmp(&y.info.function))
    });
    out
}

/// One side alone: the functions that waited longest (seconds a run).
pub fn top_waits(p: &Profile, n: usize) -> Vec<WaitDelta> {
    let empty = Profile {
        runs: 1,
        functions: p.functions.clone(),
        ..Profile::default()
    };
    let mut rows = wait_deltas(&empty, p);
    rows.truncate(n);
    for r in rows.iter_mut() {
        r.ci_s = None;
    }
    rows
}

/// What a wait of kind `kind` is called in a sentence.
pub fn wait_words(kind: &str) -> &str {
    match kind {
        "futex-wait" => "lock waits",
        "join" => "joins",
        "sleep" => "sleeps",
        "timeout" => "timed-out waits",
        "poll" => "poll waits",
        "pipe-read" => "pipe and socket reads",
        "wait-child" => "waits for children",
        "fsync" => "fsyncs",
        "block-io" => "disk waits",
        "fork" | "exec" | "load" => "process starts",
        other => other,
    }
}

/// One sentence naming the function that waited more, for a kind of wait
/// whose total grew: "lock waits +0.80 s a run (all threads): 97% of it in
/// `take_batch` (prog, queue.c:30), through pthread_mutex_lock."
pub fn wait_sentence(rows: &[WaitDelta], kind: &str) -> Option<String> {
    let mine: Vec<&WaitDelta> = rows.iter().filter(|r| r.kind == kind).collect();
    let total: f64 = mine.iter().map(|r| r.delta_s).sum();
    let first = mine.first()?;
    if total.abs() < 1e-3 || first.share < 0.25 {
        return None;
    }
    let mut s = format!(
        "{} {}{} a run (all threads): {:.0}% of it in {}",
        wait_words(kind),
        if total >= 0.0 { "+" } else { "-" },
        crate::fmt::dur(total.abs()),
        first.share * 100.0,
        name(&first.info)
    );
    if let Some(t) = &first.through {
        s.push_str(&format!(", through {t}"));
    }
    s.push('.');
    Some(s)
}

/// "`checksum_blocks` (libfoo.so, src/sum.c:88)".
pub fn name(f: &FunctionInfo) -> String {
    crate::fmt::function_name(&f.function, &f.module, f.file.as_deref(), f.line)
}

/// One sentence tying the top functions to the CPU difference, or `None`
/// when the profiles say nothing clear (too little sampled difference).
pub fn sentence(rows: &[FunctionDelta], total: f64, cpu_words: &str) -> Option<String> {
    let first = rows.first()?;
    if total.abs() < 1e-3 || first.share < 0.1 {
        return None;
    }
    let mut s = format!(
        "{cpu_words} {}{} a run: {:.0}% of it in {}",
        if total >= 0.0 { "+" } else { "-" },
        crate::fmt::dur(total.abs()),
        first.share * 100.0,
        name(&first.info)
    );
    if let Some(second) = rows.get(1).filter(|r| r.share >= 0.1) {
        s.push_str(&format!(
            ", {:.0}% in {}",
            second.share * 100.0,
            name(&second.info)
        ));
    }
    s.push('.');
    Some(s)
}

/// One frame of a flame graph: a function reached by one path of calls,
/// with its total time (itself and what it calls), seconds a run, in A and B.
#[derive(Debug, Clone, PartialEq)]
pub struct FlameNode {
    pub name: String,
    pub a_s: f64,
    pub b_s: f64,
    pub children: Vec<FlameNode>,
}

/// Frames deeper than this are not drawn.
const FLAME_DEPTH: usize = 64;

fn add_stacks(root: &mut FlameNode, p: &Profile, side_b: bool) {
    let runs = p.runs.max(1) as f64;
    for st in &p.stacks {
        let v = st.s.iter().sum::<f64>() / runs;
        if v <= 0.0 {
            continue;
        }
        let mut node = &mut *root;
        if side_b {
            node.b_s += v;
        } else {
            node.a_s += v;
        }
        for &f in st.frames.iter().take(FLAME_DEPTH) {
            let name = p
                .functions
                .get(f as usize)
                .map_or("?", |f| f.function.as_str());
            let i = match node.children.iter().position(|c| c.name == name) {
                Some(i) => i,
                None => {
                    node.children.push(FlameNode {
                        name: name.to_string(),
                        a_s: 0.0,
                        b_s: 0.0,
                        children: Vec::new(),
                    });
                    node.children.len() - 1
                }
            };
            node = &mut node.children[i];
            if side_b {
                node.b_s += v;
            } else {
                node.a_s += v;
            }
        }
    }
}

fn sort_tree(n: &mut FlameNode) {
    n.children.sort_by(|x, y| x.name.cmp(&y.name));
    for c in n.children.iter_mut() {
        sort_tree(c);
    }
}

/// The flame graph a report draws of explain traces: B against A (the
/// first two traces with profiles) as a differential one, or one alone.
pub struct ReportFlame {
    /// A's command, when B is drawn against it.
    pub a: Option<String>,
    pub b: String,
    pub tree: FlameNode,
}

/// [`ReportFlame`] of `traces`, or `None` when none has a sampled profile.
pub fn report_flame(traces: &[super::Trace]) -> Option<ReportFlame> {
    let with: Vec<_> = traces
        .iter()
        .filter_map(|t| t.profile.as_ref().map(|p| (t, p)))
        .filter(|(_, p)| p.samples > 0)
        .collect();
    match with.as_slice() {
        [] => None,
        [(ta, a), (tb, b), ..] => Some(ReportFlame {
            a: Some(ta.command.clone()),
            b: tb.command.clone(),
            tree: flame_tree(Some(a), b),
        }),
        [(t, p)] => Some(ReportFlame {
            a: None,
            b: t.command.clone(),
            tree: flame_tree(None, p),
        }),
    }
}

/// The call tree of B's profile (its widths) with A's time at the same
/// paths (its colours), children in name order as flame graphs draw them;
/// `a` absent: one profile alone.
pub fn flame_tree(a: Option<&Profile>, b: &Profile) -> FlameNode {
    let mut root = FlameNode {
        name: "all".into(),
        a_s: 0.0,
        b_s: 0.0,
        children: Vec::new(),
    };
    add_stacks(&mut root, b, true);
    if let Some(a) = a {
        add_stacks(&mut root, a, false);
    }
    sort_tree(&mut root);
    root
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{FunctionInfo, StackRow};

    fn profile(runs: usize, stacks: Vec<(Vec<&str>, Vec<f64>)>) -> Profile {
        let mut functions: Vec<FunctionInfo> = Vec::new();
        let mut rows = Vec::new();
        for (names, s) in stacks {
            let mut frames = Vec::new();
            for n in names {
                let i = match functions.iter().position(|f| f.function == n) {
                    Some(i) => i,
                    None => {
                        functions.push(FunctionInfo {
                            function: n.into(),
                            module: "prog".into(),
                            ..FunctionInfo::default()
                        });
                        functions.len() - 1
                    }
                };
                frames.push(i as u32);
            }
            rows.push(StackRow { frames, s });
        }
        Profile {
            rate_hz: 999,
            runs,
            samples: 100,
            functions,
            stacks: rows,
            waits: vec![],
            wakes: vec![],
            notes: vec![],
            spin_s: vec![],
        }
    }

    #[test]
    fn the_function_that_grew_comes_first_with_its_share() {
        let a = profile(
            3,
            vec![
                (vec!["main", "parse"], vec![0.10, 0.11, 0.09]),
                (vec!["main", "checksum"], vec![0.10, 0.10, 0.10]),
            ],
        );
        let b = profile(
            3,
            vec![
                (vec!["main", "parse"], vec![0.10, 0.10, 0.10]),
                (vec!["main", "checksum"], vec![1.00, 1.02, 0.98]),
                (vec!["main", "new_thing"], vec![0.10, 0.10, 0.10]),
            ],
        );
        let (rows, total) = deltas(&a, &b);
        assert!((total - 1.0).abs() < 1e-9, "{total}");
        assert_eq!(rows[0].info.function, "checksum");
        assert!((rows[0].share - 0.9).abs() < 1e-6);
        let ci = rows[0].ci_s.unwrap();
        assert!(ci[0] > 0.8 && ci[1] < 1.0, "{ci:?}");
        assert_eq!(rows[1].info.function, "new_thing");
        assert_eq!(rows[1].a_s, 0.0);
        // main only calls: no self time, but its total grew by all of it.
        assert!(rows.iter().all(|r| r.info.function != "main"));
        let s = sentence(&rows, total, "user CPU").unwrap();
        assert!(
            s.starts_with("user CPU +1.00 s a run: 90% of it in `checksum` (prog)"),
            "{s}"
        );
        let t = top(&b, 2);
        assert_eq!(t[0].info.function, "checksum");
        assert!((t[0].self_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_flame_tree_merges_paths_and_keeps_both_sides() {
        let a = profile(2, vec![(vec!["main", "parse"], vec![0.2, 0.2])]);
        let b = profile(
            2,
            vec![
                (vec!["main", "parse"], vec![0.2, 0.2]),
                (vec!["main", "sum"], vec![1.0, 1.0]),
            ],
        );
        let t = flame_tree(Some(&a), &b);
        assert!((t.b_s - 1.2).abs() < 1e-9 && (t.a_s - 0.2).abs() < 1e-9);
        let main = &t.children[0];
        assert_eq!(main.name, "main");
        assert_eq!(main.children.len(), 2);
        assert_eq!(main.children[0].name, "parse");
        assert!((main.children[1].b_s - 1.0).abs() < 1e-9);
        assert_eq!(main.children[1].a_s, 0.0);
    }

    /// A wait: kind, stack of (function, module), seconds a run.
    type Wait<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<f64>);

    fn waits(runs: usize, rows: Vec<Wait>) -> Profile {
        let mut p = profile(runs, vec![]);
        for (kind, stack, s) in rows {
            let mut frames = Vec::new();
            for (f, m) in stack {
                let i = match p
                    .functions
                    .iter()
                    .position(|x| x.function == f && x.module == m)
                {
                    Some(i) => i,
                    None => {
                        p.functions.push(FunctionInfo {
                            function: f.into(),
                            module: m.into(),
                            ..FunctionInfo::default()
                        });
                        p.functions.len() - 1
                    }
                };
                frames.push(i as u32);
            }
            p.waits.push(crate::profile::WaitRow {
                kind: kind.into(),
                frames,
                s,
            });
        }
        p
    }

    #[test]
    fn the_function_that_waited_is_the_programs_own_below_the_library() {
        let lock = |f: &'static str| {
            vec![
                ("__libc_start_main", "libc.so.6"),
                ("main", "prog"),
                (f, "prog"),
                ("__pthread_mutex_lock", "libc.so.6"),
                ("libc.so.6+0x8612b", "libc.so.6"),
                ("futex_wait", "[kernel]"),
                ("schedule", "[kernel]"),
            ]
        };
        let a = waits(
            2,
            vec![
                ("futex-wait", lock("lookup_entry"), vec![0.05, 0.05]),
                ("futex-wait", lock("flush_log"), vec![0.10, 0.10]),
                (
                    "sleep",
                    vec![("main", "prog"), ("nanosleep", "libc.so.6")],
                    vec![0.2, 0.2],
                ),
            ],
        );
        let b = waits(
            2,
            vec![
                ("futex-wait", lock("lookup_entry"), vec![0.85, 0.81]),
                ("futex-wait", lock("flush_log"), vec![0.10, 0.11]),
                (
                    "sleep",
                    vec![("main", "prog"), ("nanosleep", "libc.so.6")],
                    vec![0.2, 0.2],
                ),
            ],
        );
        let rows = wait_deltas(&a, &b);
        let first = &rows[0];
        assert_eq!(first.kind, "futex-wait");
        assert_eq!(first.info.function, "lookup_entry");
        assert_eq!(first.through.as_deref(), Some("__pthread_mutex_lock"));
        assert!((first.delta_s - 0.78).abs() < 1e-9, "{first:?}");
        assert!(first.share > 0.95 && first.share < 1.0, "{first:?}");
        // A sleep in main itself: main waited, through nanosleep.
        let sleep = rows.iter().find(|r| r.kind == "sleep").unwrap();
        assert_eq!(sleep.info.function, "main");
        assert_eq!(sleep.delta_s, 0.0);
        let s = wait_sentence(&rows, "futex-wait").unwrap();
        assert!(
            s.starts_with("lock waits +785 ms a run (all threads): 99% of it in `lookup_entry` (prog), through __pthread_mutex_lock"),
            "{s}"
        );
        assert!(wait_sentence(&rows, "sleep").is_none());
        let top = top_waits(&b, 2);
        assert_eq!(top[0].info.function, "lookup_entry");
        assert!((top[0].b_s - 0.83).abs() < 1e-9);
    }

    #[test]
    fn a_stack_of_plumbing_alone_names_its_innermost_user_frame() {
        let p = waits(
            1,
            vec![(
                "poll",
                vec![
                    ("runtime.main", "server"),
                    ("runtime.netpoll", "server"),
                    ("do_epoll_wait", "[kernel]"),
                ],
                vec![1.0],
            )],
        );
        let (f, through) = waiter(&p, &p.waits[0].frames).unwrap();
        assert_eq!(p.functions[f as usize].function, "runtime.netpoll");
        assert!(through.is_none());
    }

    #[test]
    fn no_sentence_without_a_clear_difference() {
        let a = profile(2, vec![(vec!["main"], vec![0.1, 0.1])]);
        let (rows, total) = deltas(&a, &a.clone());
        assert_eq!(total, 0.0);
        assert!(sentence(&rows, total, "user CPU").is_none());
    }
}
