//! `tardy explain` as text: one set of runs (where the time went) or two
//! (the table of differences, the diagnosis and the ranked causes).

use crate::diagnose::explain::compare::Verdict;
use crate::diagnose::explain::functions;
use crate::diagnose::explain::{CATEGORIES, CATEGORY_WORDS, Comparison, NCAT, Trace};
use crate::fmt::dur;

use super::style::Style;

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

fn coverage_line(t: &Trace) -> Option<String> {
    match t.coverage.as_str() {
        "full" => None,
        "no-syscalls" => Some(format!(
            "note: syscalls not timed ({}); only CPU, run-queue delay and the process tree are explained",
            t.coverage_note.clone().unwrap_or_default()
        )),
        _ => Some(format!(
            "note: not traced ({}); explained from wall time, rusage and the command's own schedstat only",
            t.coverage_note.clone().unwrap_or_default()
        )),
    }
}

fn overhead_line(t: &Trace) -> Option<String> {
    let o = &t.overhead;
    if t.coverage == "untraced" {
        return None;
    }
    let mut s = match o.stop_cost_ns {
        _ if o.recorder == "kernel-events" && o.dropped_events_per_run > 0.0 => format!(
            "recorded from kernel events: {:.0} events a run, no stop of the command; the kernel dropped {:.0} a run ({} of them: its buffers filled)",
            o.stops_per_run,
            o.dropped_events_per_run,
            pct(o.dropped_share)
        ),
        _ if o.recorder == "kernel-events" => format!(
            "recorded from kernel events: {:.0} events a run, none dropped, no stop of the command",
            o.stops_per_run
        ),
        Some(c) => format!(
            "tracing added about {} to the wall time ({:.0} traced syscalls a run at {} each)",
            pct(o.fraction),
            o.stops_per_run / 2.0,
            dur(c as f64 / 1e9)
        ),
        None => format!("{:.0} traced syscalls a run", o.stops_per_run / 2.0),
    };
    if !o.blind_spots.is_empty() {
        s.push_str(&format!("\n  recorder: {}", o.blind_spots));
    }
    if let Some(f) = &o.fallback {
        s.push_str(&format!("\n  kernel events not used: {f}"));
    }
    if let Some(r) = o.measured_ratio {
        s.push_str(&format!(
            "; measured: traced runs took {:.3}x the untraced ones",
            r
        ));
    }
    Some(s)
}

/// One set of runs.
pub fn single(t: &Trace, style: Style, top: usize) -> String {
    let mut out = String::new();
    out.push_str(&style.bold(&format!(
        "{}  ({} run{}, wall {} a run)\n",
        t.command,
        t.runs.len(),
        if t.runs.len() == 1 { "" } else { "s" },
        dur(t.wall_s)
    )));
    if let Some(l) = coverage_line(&t.clone()) {
        out.push_str(&style.yellow(&l));
        out.push('\n');
    }
    out.push_str("\n  where the wall time went (critical path)\n");
    let mut rows: Vec<(usize, f64)> = (0..NCAT)
        .map(|i| (i, t.categories.get(CATEGORIES[i]).copied().unwrap_or(0.0)))
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (i, v) in rows {
        if v <= 0.0 && i != crate::diagnose::explain::OTHER {
            continue;
        }
        let share = if t.wall_s > 0.0 { v / t.wall_s } else { 0.0 };
        out.push_str(&format!(
            "  {:<18} {:>10}  {:>6}  {}\n",
            CATEGORIES[i],
            dur(v),
            pct(share),
            CATEGORY_WORDS
                .get(i)
                .copied()
                .unwrap_or("other (not attributed)")
        ));
    }
    out.push_str(&format!("  {:<18} {:>10}\n", "wall", dur(t.wall_s)));
    details(&mut out, t, top);
    profile_lines(&mut out, t, style, top);
    if let Some(l) = overhead_line(t) {
        out.push('\n');
        out.push_str(&style.dim(&l));
        out.push('\n');
    }
    out
}

fn details(out: &mut String, t: &Trace, top: usize) {
    let Some(r) = t.runs.first() else { return };
    let n = t.runs.len() as f64;
    // Syscalls, averaged per run.
    let mut kinds: Vec<(String, u64, f64, f64)> = Vec::new();
    for name in r
        .syscalls
        .keys()
        .chain(t.runs.iter().flat_map(|x| x.syscalls.keys()))
    {
        if kinds.iter().any(|k| &k.0 == name) {
            continue;
        }
        let c: u64 = t.runs.iter().map(|x| x.kind(name).count).sum();
        let tot: f64 = t.runs.iter().map(|x| x.kind(name).total_s).sum();
        let asked: f64 = t.runs.iter().map(|x| x.kind(name).asked_s).sum();
        kinds.push((name.clone(), c, tot, asked));
    }
    if !kinds.is_empty() {
        kinds.sort_by(|a, b| b.2.total_cmp(&a.2));
        out.push_str("\n  traced syscalls, whole tree, a run: count, total, mean (asked for)\n");
        for (name, c, tot, asked) in kinds {
            let per = c as f64 / n;
            let mean = if c > 0 { tot / c as f64 } else { 0.0 };
            let asked_s = if asked > 0.0 && c > 0 {
                format!(
                    "  (asked {} each, {} over)",
                    dur(asked / c as f64),
                    dur(mean - asked / c as f64)
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "  {:<12} {:>8.0}  {:>10}  {:>10}{}\n",
                name,
                per,
                dur(tot / n),
                dur(mean),
                asked_s
            ));
        }
    }
    if !r.exec_files.is_empty() {
        out.push_str("\n  programs started (first run): starts, size, each start (exec + load)\n");
        for f in r.exec_files.iter().take(top) {
            let each = if f.count > 0 {
                f.start_s / f.count as f64
            } else {
                0.0
            };
            out.push_str(&format!(
                "  {:>5}  {:>9}  {:>10}  {}\n",
                f.count,
                f.size_bytes
                    .map(|b| format!("{:.1} MB", b as f64 / 1048576.0))
                    .unwrap_or_else(|| "?".into()),
                dur(each),
                f.file
            ));
        }
    }
    if !r.process_rows.is_empty() {
        out.push_str(&format!(
            "\n  processes (first run, top {top}): user, system, waiting for a CPU, on the critical path, CPU off it\n"
        ));
        for p in r.process_rows.iter().take(top) {
            let cmd: String = p.command.chars().take(60).collect();
            out.push_str(&format!(
                "  {:>9} {:>9} {:>9} {:>9} {:>9}  {}{}{}\n",
                dur(p.cpu_user_s),
                dur(p.cpu_system_s),
                dur(p.run_queue_s),
                dur(p.on_path_s),
                dur(p.off_path_cpu_s),
                if p.count > 1 {
                    format!("{}x ", p.count)
                } else {
                    String::new()
                },
                cmd,
                p.pid
                    .map(|pid| format!("  [pid {pid}]"))
                    .unwrap_or_default()
            ));
        }
        out.push_str(&format!(
            "  {} processes, {} threads, {} execs; {:.0} minor and {:.0} major page faults; steal {}\n",
            r.processes,
            r.threads,
            r.execs,
            t.mean(|x| x.minor_faults as f64),
            t.mean(|x| x.major_faults as f64),
            r.steal_s.map(dur).unwrap_or_else(|| "n/a".into())
        ));
    }
    for s in &r.stragglers {
        out.push_str(&format!("  outlived the command: {s}\n"));
    }
}

/// Where one side's CPU went, by function.
fn profile_lines(out: &mut String, t: &Trace, style: Style, top: usize) {
    if let Some(n) = &t.profile_note {
        out.push_str(&style.dim(&format!("\n  {n}\n")));
    }
    let Some(p) = &t.profile else { return };
    let rows = functions::top(p, top.max(10));
    if rows.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\n  where the CPU went (sampled at {} Hz, a run): self, share, total, function\n",
        p.rate_hz
    ));
    for r in rows {
        out.push_str(&format!(
            "  {:>10} {:>6} {:>10}  {}\n",
            dur(r.self_s),
            pct(r.share),
            dur(r.total_s),
            name(&r.info)
        ));
    }
    let waits = functions::top_waits(p, top.max(5));
    if !waits.is_empty() {
        out.push_str(
            "\n  where the threads waited (off-CPU stacks, all threads, a run): time, kind, function\n",
        );
        for w in waits {
            out.push_str(&format!(
                "  {:>10}  {:<10}  {}{}\n",
                dur(w.b_s),
                w.kind,
                name(&w.info),
                through(&w)
            ));
            out.push_str(&woken_by(&w, 26));
        }
    }
    for n in &p.notes {
        out.push_str(&style.dim(&format!("  note: {n}\n")));
    }
}

/// Who ended a function's waits (in B), two lines at most, indented by
/// `indent`: "woken by 97%: `feeder` (python3 th.py, thread python3)".
fn woken_by(w: &functions::WaitDelta, indent: usize) -> String {
    w.woken_by
        .iter()
        .filter(|k| k.share >= 0.01)
        .take(2)
        .map(|k| {
            let through = k
                .through
                .as_ref()
                .map(|t| format!(" in {}", t.chars().take(40).collect::<String>()))
                .unwrap_or_default();
            format!(
                "{:indent$}woken by {:>3.0}%: {}{} ({}, {})\n",
                "",
                k.share * 100.0,
                name(&k.info),
                through,
                k.process.chars().take(50).collect::<String>(),
                k.thread
            )
        })
        .collect()
}

/// " in pthread_mutex_lock", when the wait went through a library.
fn through(w: &functions::WaitDelta) -> String {
    w.through
        .as_ref()
        .map(|t| format!(" in {}", t.chars().take(60).collect::<String>()))
        .unwrap_or_default()
}

/// Two sets of runs.
pub fn comparison(a: &Trace, b: &Trace, c: &Comparison, style: Style, top: usize) -> String {
    let mut out = String::new();
    out.push_str(&format!("A: {}  ({} runs)\n", a.command, a.runs.len()));
    out.push_str(&format!("B: {}  ({} runs)\n", b.command, b.runs.len()));
    for w in &c.warnings {
        out.push_str(&style.yellow(&format!("warning: {w}\n")));
    }
    for t in [a, b] {
        if let Some(l) = coverage_line(t) {
            out.push_str(&style.yellow(&l));
            out.push('\n');
        }
    }
    out.push('\n');
    out.push_str(&format!(
        "  {:<18} {:>10} {:>10} {:>11}  {:<24} {:>7}  {}\n",
        "category", "A", "B", "Δ", "95% CI of Δ", "share", "beyond its noise?"
    ));
    let mut rows = c.table.clone();
    rows.sort_by(|x, y| y.delta_s.abs().total_cmp(&x.delta_s.abs()));
    for r in &rows {
        if r.a_s == 0.0 && r.b_s == 0.0 {
            continue;
        }
        let ci = r
            .ci_s
            .map(|[lo, hi]| format!("[{}, {}]", signed(lo), signed(hi)))
            .unwrap_or_else(|| "-".into());
        let verdict = match r.verdict {
            Verdict::Certain => "certain (calls)",
            Verdict::Significant => "yes",
            Verdict::Noise => "",
        };
        // The run-queue delay counted with the cause it grew with: its share
        // is in that row (marked *), said below the table.
        let folded = c.run_queue_counted_with.as_deref();
        let share = match (r.category.as_str(), folded) {
            ("run-queue", Some(_)) => "*".to_string(),
            (cat, Some(host)) if cat == host => format!("{}*", pct(r.share)),
            _ => pct(r.share),
        };
        out.push_str(&format!(
            "  {:<18} {:>10} {:>10} {:>11}  {:<24} {:>7}  {verdict}\n",
            r.category,
            dur(r.a_s),
            dur(r.b_s),
            signed(r.delta_s),
            ci,
            share
        ));
    }
    let ci = c
        .ci_s
        .map(|[lo, hi]| format!("[{}, {}]", signed(lo), signed(hi)))
        .unwrap_or_else(|| "-".into());
    out.push_str(&style.bold(&format!(
        "  {:<18} {:>10} {:>10} {:>11}  {:<24} {:>7}  {}\n",
        "wall",
        dur(c.wall_a_s),
        dur(c.wall_b_s),
        signed(c.delta_s),
        ci,
        if c.shares_of == "changes" {
            ""
        } else {
            "100.0%"
        },
        if c.significant { "yes" } else { "" }
    )));
    if c.shares_of == "changes" {
        out.push_str(&style.dim(
            "  (the wall time's difference is within its noise: shares are of the sum of every category's absolute change)\n",
        ));
    }
    if let (Some(host), Some(rq)) = (
        c.run_queue_counted_with.as_deref(),
        c.table.iter().find(|r| r.category == "run-queue"),
    ) {
        out.push_str(&style.dim(&format!(
            "  * {host}'s share holds the run-queue's {} too: waiting for a CPU grew with it\n",
            signed(rq.delta_s)
        )));
    }
    out.push('\n');
    out.push_str(&style.bold(&c.diagnosis));
    out.push('\n');
    let proven = c.causes.iter().any(|x| x.verdict.proven());
    if (c.significant || proven) && !c.causes.is_empty() {
        out.push_str(&format!(
            "\ncauses, by share of {}:\n",
            if c.shares_of == "changes" {
                "the changes"
            } else {
                "the difference"
            }
        ));
        for (i, cause) in c.causes.iter().take(top.max(3)).enumerate() {
            let mark = match cause.verdict {
                Verdict::Certain => " (certain)",
                Verdict::Significant => "",
                Verdict::Noise => " (within its noise)",
            };
            out.push_str(&format!(
                "  {}. {:<17} {:>6}  {:>10}  {}{mark}\n",
                i + 1,
                cause.kind,
                pct(cause.share),
                signed(cause.delta_s),
                cause.evidence
            ));
        }
    }
    if !c.functions.is_empty() {
        out.push_str(&format!(
            "\nwhich code (sampled CPU, a run; all functions {}): A, B, Δ, 95% CI of Δ, share of it\n",
            c.sampled_cpu_delta_s.map(signed).unwrap_or_default()
        ));
        // The functions that carry the difference: at least three rows,
        // then those with 1% of it or more.
        let shown = c
            .functions
            .iter()
            .enumerate()
            .take_while(|(i, f)| *i < 3 || f.share.abs() >= 0.01)
            .map(|(_, f)| f)
            .take(top.max(10));
        for f in shown {
            let ci = f
                .ci_s
                .map(|[lo, hi]| format!("[{}, {}]", signed(lo), signed(hi)))
                .unwrap_or_else(|| "-".into());
            out.push_str(&format!(
                "  {:>10} {:>10} {:>11}  {:<24} {:>7}  {}\n",
                dur(f.a_s),
                dur(f.b_s),
                signed(f.delta_s),
                ci,
                pct(f.share),
                name(&f.info)
            ));
        }
        if let Some(s) = &c.functions_summary {
            out.push_str(&style.bold(&format!("  {s}\n")));
        }
        // The functions whose waits changed most (off-CPU stacks).
        let waits: Vec<_> = c
            .waiting_functions
            .iter()
            .filter(|w| w.delta_s.abs() >= 1e-4)
            .take(top.max(5))
            .collect();
        if !waits.is_empty() {
            out.push_str(
                "\nwhere the threads waited (off-CPU stacks, all threads, a run): A, B, Δ, kind, function\n",
            );
            for w in waits {
                out.push_str(&format!(
                    "  {:>10} {:>10} {:>11}  {:<10}  {}{}\n",
                    dur(w.a_s),
                    dur(w.b_s),
                    signed(w.delta_s),
                    w.kind,
                    name(&w.info),
                    through(w)
                ));
                out.push_str(&woken_by(w, 48));
            }
            if let Some(s) = &c.waits_summary {
                out.push_str(&style.bold(&format!("  {s}\n")));
            }
        }
        // A library stripped for A is stripped for B: each note once.
        let mut said = std::collections::HashSet::new();
        for n in [a, b]
            .into_iter()
            .flat_map(|t| t.profile.iter().flat_map(|p| p.notes.iter()))
        {
            if said.insert(n.as_str()) {
                out.push_str(&style.dim(&format!("  note: {n}\n")));
            }
        }
    }
    for (side, t) in [("A", a), ("B", b)] {
        if let Some(l) = overhead_line(t) {
            out.push_str(&style.dim(&format!("{side}: {l}\n")));
        }
    }
    out
}

fn signed(v: f64) -> String {
    if v >= 0.0 {
        format!("+{}", dur(v))
    } else {
        format!("-{}", dur(-v))
    }
}

/// The comparison as one JSON document (keys in docs/results-format.md).
pub fn comparison_json(a: &Trace, b: &Trace, c: &Comparison) -> serde_json::Value {
    serde_json::json!({
        "a": a,
        "b": b,
        "wall_delta_s": c.delta_s,
        "ratio": c.ratio,
        "ci_s": c.ci_s,
        "significant": c.significant,
        "shares_of": c.shares_of,
        "run_queue_counted_with": c.run_queue_counted_with,
        "table": c.table,
        "causes": c.causes,
        "diagnosis": c.diagnosis,
        "warnings": c.warnings,
        "functions": c.functions,
        "sampled_cpu_delta_s": c.sampled_cpu_delta_s,
        "functions_summary": c.functions_summary,
        "waiting_functions": c.waiting_functions,
        "waits_summary": c.waits_summary,
    })
}

/// "`checksum_blocks` (libfoo.so, src/sum.c:88)".
fn name(f: &crate::profile::FunctionInfo) -> String {
    crate::fmt::function_name(&f.function, &f.module, f.file.as_deref(), f.line)
}
