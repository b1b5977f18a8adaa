//! `tardy tests` reports: `show` (totals, slowest tests and suites, a
//! duration histogram) and `diff` (totals, the shape of the change with its
//! evidence, top regressions and improvements, added/removed/failing tests).

use super::style::Style;
use super::units::{percent, time};
use crate::analyze::rows::RowView;
use crate::analyze::suite::{Diff, Show};
use crate::stats::Verdict;

pub fn show_text(s: &Show, style: Style) -> String {
    let mut out = String::new();
    let statuses: Vec<String> = s
        .by_status
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let statuses = if s.tests == 0 {
        "an empty report".to_string()
    } else {
        statuses.join(", ")
    };
    out.push_str(&format!(
        "{} {} ({statuses})\n",
        style.bold("Tests:"),
        s.tests
    ));
    out.push_str(&format!(
        "{} {}",
        style.bold("Sum of test times:"),
        time(s.total_s)
    ));
    if let Some(w) = s.suite_wall_s {
        out.push_str(&format!(
            "   {} {}",
            style.bold("suites' own wall time:"),
            time(w)
        ));
    }
    out.push('\n');
    let by_status: Vec<String> = s
        .time_by_status
        .iter()
        .map(|(k, v)| format!("{k} {}", time(*v)))
        .collect();
    out.push_str(&format!("Time by status: {}\n", by_status.join(", ")));
    out.push_str(&format!("\n{}\n", style.bold("Slowest tests")));
    for t in &s.slowest_tests {
        out.push_str(&format!("  {:>10}  {}\n", time(t.seconds), t.name));
    }
    out.push_str(&format!(
        "\n{}\n",
        style.bold("Slowest suites (sum of their tests)")
    ));
    for t in &s.slowest_suites {
        out.push_str(&format!(
            "  {:>10}  {}\n",
            time(t.seconds),
            if t.name.is_empty() {
                "(no suite)"
            } else {
                &t.name
            }
        ));
    }
    out.push_str(&format!("\n{}\n", style.bold("Test durations")));
    let max = s.histogram.iter().map(|h| h.1).max().unwrap_or(1).max(1);
    let mut lower = 0.0;
    for (upper, n) in &s.histogram {
        let label = if upper.is_infinite() {
            format!(">= {}", time(lower))
        } else {
            format!("< {}", time(*upper))
        };
        out.push_str(&format!(
            "  {label:>12}  {:<40} {n}\n",
            "#".repeat((n * 40).div_ceil(max))
        ));
        lower = *upper;
    }
    for w in &s.warnings {
        out.push_str(&format!("{} {w}\n", style.yellow("Warning:")));
    }
    out
}

fn change(x: f64, y: f64) -> String {
    let d = y - x;
    let rel = if x > 0.0 {
        format!(" ({}{})", if d >= 0.0 { "+" } else { "" }, percent(d / x))
    } else {
        String::new()
    };
    format!("{}{}{rel}", if d >= 0.0 { "+" } else { "-" }, time(d.abs()))
}

fn row_line(r: &RowView) -> String {
    let (b, a) = (r.before_s().unwrap_or(0.0), r.after_s().unwrap_or(0.0));
    let sig = match (r.verdict(), r.p_adjusted()) {
        (Some(v), Some(p)) => format!(
            "  [{}, q={p:.3}]",
            match v {
                Verdict::Slower => "slower",
                Verdict::Faster => "faster",
                Verdict::Same => "same",
                Verdict::Inconclusive => "not significant",
            }
        ),
        _ => String::new(),
    };
    format!(
        "  {:>22}  {} → {}  {}{sig}\n",
        change(b, a),
        time(b),
        time(a),
        r.name()
    )
}

pub fn diff_text(d: &Diff, style: Style, top: usize) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{} {} test(s): {} matched, {} added, {} removed; runs per side {} → {}\n",
        style.bold("Tests:"),
        d.tests.len(),
        d.matched,
        d.added.len(),
        d.removed.len(),
        d.runs[0],
        d.runs[1]
    ));
    for (side, n) in ["before", "after"].iter().zip(d.tests_per_side) {
        if n == 0 {
            out.push_str(&format!(
                "{} the {side} side is an empty report (0 tests): every test of the other side counts as {}\n",
                style.yellow("Note:"),
                if *side == "before" { "added" } else { "removed" }
            ));
        }
    }
    out.push_str(&format!(
        "{} {} → {}  ({})\n",
        style.bold("Sum of test times:"),
        time(d.total_before_s),
        time(d.total_after_s),
        change(d.total_before_s, d.total_after_s)
    ));
    if let (Some(b), Some(a)) = (d.suite_wall_before_s, d.suite_wall_after_s) {
        out.push_str(&format!(
            "{} {} → {}  ({})\n",
            style.bold("Suites' own wall time:"),
            time(b),
            time(a),
            change(b, a)
        ));
    }
    out.push_str(&format!("\n{}\n", style.bold("Shape of the change")));
    if d.shapes.is_empty() {
        out.push_str("  no clear shape: the change is small or spread unevenly\n");
    }
    for (i, s) in d.shapes.iter().enumerate() {
        let kind = serde_json::to_value(&s.kind)
            .ok()
            .and_then(|v| v["kind"].as_str().map(str::to_string))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}. {} (explains {:.0}%): {}\n     → {}\n",
            i + 1,
            style.bold(&kind.replace('_', " ")),
            s.explained_share * 100.0,
            s.summary,
            s.advice
        ));
        if let crate::diagnose::shape::ShapeKind::Concentrated { tests } = &s.kind {
            for (name, delta) in tests.iter().take(top) {
                out.push_str(&format!("       +{}  {name}\n", time(*delta)));
            }
        }
    }
    // Tests with subtests hold their subtests' time: the subtests are
    // listed (their names carry the parent), the parent is not counted again.
    let regressions: Vec<RowView> = d
        .tests
        .iter()
        .filter(|r| !r.parent() && r.delta_s().is_some_and(|x| x > 0.0))
        .take(top)
        .collect();
    let improvements: Vec<RowView> = d
        .tests
        .iter()
        .filter(|r| !r.parent() && r.delta_s().is_some_and(|x| x < 0.0))
        .take(top)
        .collect();
    let mut by_rel: Vec<RowView> = d
        .tests
        .iter()
        .filter(|r| {
            !r.parent() && r.ratio().is_some_and(|x| x > 1.0) && r.after_s().unwrap_or(0.0) >= 0.001
        })
        .collect();
    by_rel.sort_by(|a, b| {
        b.ratio()
            .unwrap_or(0.0)
            .total_cmp(&a.ratio().unwrap_or(0.0))
    });
    out.push_str(&format!("\n{}\n", style.bold("Top regressions (absolute)")));
    regressions.iter().for_each(|r| out.push_str(&row_line(r)));
    out.push_str(&format!(
        "\n{}\n",
        style.bold("Top regressions (relative, tests over 1 ms)")
    ));
    by_rel
        .iter()
        .take(top)
        .for_each(|r| out.push_str(&row_line(r)));
    if !improvements.is_empty() {
        out.push_str(&format!("\n{}\n", style.bold("Top improvements")));
        improvements.iter().for_each(|r| out.push_str(&row_line(r)));
    }
    let list = |out: &mut String, title: &str, items: &[String]| {
        if !items.is_empty() {
            out.push_str(&format!("\n{} ({})\n", style.bold(title), items.len()));
            for i in items.iter().take(top) {
                out.push_str(&format!("  {i}\n"));
            }
            if items.len() > top {
                out.push_str(&format!("  … and {} more\n", items.len() - top));
            }
        }
    };
    list(&mut out, "Newly failing", &d.newly_failing);
    list(&mut out, "Newly skipped", &d.newly_skipped);
    list(&mut out, "Added", &d.added);
    list(&mut out, "Removed", &d.removed);
    if !d.renamed.is_empty() {
        out.push_str(&format!(
            "\n{} ({})\n",
            style.bold("Renamed-looking"),
            d.renamed.len()
        ));
        for (r, a) in d.renamed.iter().take(top) {
            out.push_str(&format!("  {r}  →  {a}\n"));
        }
    }
    for w in &d.warnings {
        out.push_str(&format!("{} {w}\n", style.yellow("Warning:")));
    }
    if d.total_after_s > d.total_before_s {
        out.push_str(&style.dim(
            "To see where the extra time goes: run the suite under `tardy explain --save before.json -- CMD` on the before side and `--save after.json` on the after side, then `tardy explain before.json after.json`.\n",
        ));
    }
    out
}

/// Markdown: the shapes, then the top regressions.
pub fn diff_markdown(d: &Diff, top: usize) -> String {
    let mut out = format!(
        "**Tests**: {} ({} matched, {} added, {} removed) · **sum of test times** {} → {} ({})\n\n",
        d.tests.len(),
        d.matched,
        d.added.len(),
        d.removed.len(),
        time(d.total_before_s),
        time(d.total_after_s),
        change(d.total_before_s, d.total_after_s)
    );
    for s in &d.shapes {
        out.push_str(&format!(
            "- **{:.0}%** {}\n",
            s.explained_share * 100.0,
            s.summary
        ));
    }
    out.push_str("\n| Test | Before | After | Change |\n|:---|---:|---:|---:|\n");
    for r in d.tests.iter().filter(|r| r.delta_s().is_some()).take(top) {
        let (b, a) = (r.before_s().unwrap_or(0.0), r.after_s().unwrap_or(0.0));
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            r.name().replace('|', "\\|"),
            time(b),
            time(a),
            change(b, a)
        ));
    }
    out
}

/// CSV: one row per test.
pub fn diff_csv(d: &Diff) -> String {
    let o = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let st = |s: Option<crate::ingest::reports::Status>| {
        s.and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    };
    let mut out = super::csv::Table::new(&[
        "suite",
        "class",
        "test",
        "before_s",
        "after_s",
        "delta_s",
        "ratio",
        "status_before",
        "status_after",
        "runs_before",
        "runs_after",
        "p_adjusted",
    ]);
    for r in d.tests.iter() {
        out.row([
            r.suite().to_string(),
            r.class().to_string(),
            r.test().to_string(),
            o(r.before_s()),
            o(r.after_s()),
            o(r.delta_s()),
            o(r.ratio()),
            st(r.status_before()),
            st(r.status_after()),
            r.runs()[0].to_string(),
            r.runs()[1].to_string(),
            o(r.p_adjusted()),
        ]);
    }
    out.finish()
}
