//! Text for `tardy history`: the series list, a series' chart and segments,
//! alerts, and the change points of `tardy history analyze`.

use std::fmt::Write;

use super::compare::value;
use super::style::Style;
use super::units::{p_value, percent};

use crate::history::bisect::Plan;
use crate::history::ops::{Exported, Imported, Shown};
use crate::store::history::{Alert, Annotation, SeriesInfo};

/// "2026-11-21 09:30" (UTC).
pub fn date(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| t.to_string())
}

/// A commit hash shortened to 10 characters.
pub fn short(commit: Option<&str>) -> String {
    match commit {
        Some(c) => c.chars().take(10).collect(),
        None => "-".into(),
    }
}

fn shown(v: f64, unit: &str) -> String {
    if unit.is_empty() {
        super::cfmt::g(v, 6)
    } else {
        value(v, unit)
    }
}

/// The table of `tardy history list`.
pub fn list(series: &[SeriesInfo], style: Style) -> String {
    if series.is_empty() {
        return "no series yet: save some with `tardy run --save NAME`, `tardy tests show --save NAME` \
or `tardy history import FILE`\n"
            .into();
    }
    let w = series
        .iter()
        .map(|s| super::units::display_width(&s.name))
        .max()
        .unwrap_or(6)
        .max(6);
    let mut out = format!(
        "{:<w$}  {:>6}  {:>7}  {:>12}  {:<10}  {}\n",
        "series", "kind", "points", "last", "commit", "open alerts"
    );
    for s in series {
        let kind = if s.tests > 0 {
            format!("{}+{}t", s.kind.as_str(), s.tests)
        } else {
            s.kind.as_str().to_string()
        };
        let alerts = if s.open_alerts > 0 {
            style.red(&s.open_alerts.to_string())
        } else {
            "0".into()
        };
        let _ = writeln!(
            out,
            "{}  {:>6}  {:>7}  {:>12}  {:<10}  {}",
            super::units::pad_to(&s.name, w),
            kind,
            s.points,
            s.last_value.map_or("-".into(), |v| shown(v, &s.unit)),
            short(s.last_commit.as_deref()),
            alerts
        );
    }
    out
}

/// A sparkline of `values` at most `width` wide (bucket means) with `^`
/// under the buckets holding a change point.
pub fn sparkline(values: &[f64], change_points: &[usize], width: usize, unicode: bool) -> String {
    if values.is_empty() {
        return String::new();
    }
    let width = width.clamp(10, 400);
    let buckets = values.len().min(width);
    let bucket_of = |i: usize| i * buckets / values.len();
    let mut sums = vec![(0.0, 0usize); buckets];
    for (i, &v) in values.iter().enumerate() {
        let b = bucket_of(i);
        sums[b].0 += v;
        sums[b].1 += 1;
    }
    let means: Vec<f64> = sums.iter().map(|(s, n)| s / (*n).max(1) as f64).collect();
    let (lo, hi) = means
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let ramp: Vec<char> = if unicode {
        "▁▂▃▄▅▆▇█".chars().collect()
    } else {
        "_.-=+*#@".chars().collect()
    };
    let mut line: String = means
        .iter()
        .map(|&m| {
            let f = if hi > lo { (m - lo) / (hi - lo) } else { 0.5 };
            ramp[((f * (ramp.len() - 1) as f64).round() as usize).min(ramp.len() - 1)]
        })
        .collect();
    line.push('\n');
    let mut marks = vec![' '; buckets];
    for &c in change_points {
        if c < values.len() {
            marks[bucket_of(c)] = '^';
        }
    }
    let marks: String = marks.into_iter().collect();
    line.push_str(marks.trim_end());
    line.push('\n');
    line
}

/// `tardy history show`: header, sparkline, segments, annotations.
pub fn show(v: &Shown, style: Style, unicode: bool, width: usize) -> String {
    let values: Vec<f64> = v.points.iter().map(|p| p.value).collect();
    let values = values.as_slice();
    let (s, test, segments, annotations) =
        (&v.series, v.test.as_deref(), &v.segments, &v.annotations);
    let mut out = String::new();
    let title = match test {
        Some(t) => format!("{} :: {t}", s.name),
        None => s.name.clone(),
    };
    let _ = writeln!(
        out,
        "{}  ({} points, {}, {})",
        style.bold(&title),
        values.len(),
        s.metric,
        s.direction.as_str()
    );
    if let Some(c) = &s.command {
        let _ = writeln!(out, "command: {c}");
    }
    if values.is_empty() {
        out.push_str("no points\n");
        return out;
    }
    let cps: Vec<usize> = segments.iter().skip(1).map(|g| g.start).collect();
    out.push('\n');
    out.push_str(&sparkline(values, &cps, width, unicode));
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let _ = writeln!(
        out,
        "min {}  max {}\n",
        shown(lo, &s.unit),
        shown(hi, &s.unit)
    );
    let _ = writeln!(
        out,
        "{:>5}  {:>5}  {:<23}  {:>11}  {:>10}  {:>9}  {:<8}",
        "from", "to", "commits", "mean", "spread", "change", "p"
    );
    for g in segments {
        let commits = format!(
            "{}..{}",
            short(g.first_commit.as_deref()),
            short(g.last_commit.as_deref())
        );
        let change = match g.change {
            Some(c) if c > 0.0 => style.red(&format!("{:>9}", format!("+{}", percent(c)))),
            Some(c) => style.green(&format!("{:>9}", percent(c))),
            None => format!("{:>9}", ""),
        };
        let _ = writeln!(
            out,
            "{:>5}  {:>5}  {:<23}  {:>11}  {:>10}  {}  {:<8}",
            g.start,
            g.end - 1,
            commits,
            shown(g.mean, &s.unit),
            format!("±{}", shown(g.stddev, &s.unit)),
            change,
            g.pvalue.map_or(String::new(), p_value)
        );
        if !g.environment.is_empty() {
            let _ = writeln!(
                out,
                "       {} {}",
                style.yellow("environment change:"),
                g.environment.join("; ")
            );
        }
    }
    let notes: Vec<&Annotation> = annotations
        .iter()
        .filter(|a| a.series.as_deref().is_none_or(|n| n == s.name))
        .collect();
    if !notes.is_empty() {
        out.push_str("\nannotations:\n");
        for a in notes {
            let range = match &a.to_commit {
                Some(t) => format!("{}..{}", short(Some(&a.from_commit)), short(Some(t))),
                None => short(Some(&a.from_commit)),
            };
            let _ = writeln!(out, "  #{} {range}: {}", a.id, a.text);
        }
    }
    out
}

/// What a young series needs before a change in it can be called: one
/// line.
pub fn young(y: &crate::history::detect::Young) -> String {
    let after = |k: Option<usize>| k.map_or("more than 64".to_string(), |k| k.to_string());
    format!(
        "{} has {} points: a step of 4 times its noise would be called after {} more points, of 10 times after {}\n",
        y.series,
        y.points,
        after(y.step_4_sigma),
        after(y.step_10_sigma)
    )
}

/// One alert, with up to `top` affected series.
pub fn alert(a: &Alert, top: usize, style: Style) -> String {
    let mut out = String::new();
    let kind = match a.kind() {
        "regression" => style.red("regression"),
        "improvement" => style.green("improvement"),
        "environment change" => style.yellow("environment change"),
        k => k.to_string(),
    };
    let _ = writeln!(
        out,
        "{} {kind} [{}]  {}..{}  ({} -> {}){}",
        style.bold(&format!("#{}", a.id)),
        a.state.as_str(),
        short(a.from_commit.as_deref()),
        short(a.to_commit.as_deref()),
        date(a.from_time),
        date(a.to_time),
        a.branch
            .as_deref()
            .map_or(String::new(), |b| format!("  on {b}"))
    );
    if let Some(reason) = &a.reason {
        let _ = writeln!(out, "  retracted: {reason}");
    }
    if a.boundary.len() > 1 || a.boundary.first().is_some_and(|b| b.probability < 0.99) {
        let places: Vec<String> = a
            .boundary
            .iter()
            .take(5)
            .map(|b| {
                format!(
                    "{}..{} {:.0}%",
                    short(b.from_commit.as_deref()),
                    short(b.to_commit.as_deref()),
                    b.probability * 100.0
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "  where: {}{}",
            places.join(", "),
            if a.boundary.len() > 5 { ", ..." } else { "" }
        );
    }
    let n = a.members.len();
    let _ = writeln!(
        out,
        "  {n} series changed ({} slower, {} faster)",
        a.regressions(),
        n - a.regressions()
    );
    for m in a.members.iter().take(top) {
        let name = match &m.test {
            Some(t) => format!("{} :: {t}", m.series),
            None => m.series.clone(),
        };
        let _ = writeln!(
            out,
            "    {:>8}  {name}  ({} -> {}, {}, q{})",
            if m.change > 0.0 {
                format!("+{}", percent(m.change))
            } else {
                percent(m.change)
            },
            shown(m.mean_before, &m.unit),
            shown(m.mean_after, &m.unit),
            p_value(m.pvalue),
            {
                let q = super::units::q_value(m.qvalue);
                if q.starts_with('<') {
                    q
                } else {
                    format!("={q}")
                }
            }
        );
    }
    if n > top {
        let _ = writeln!(out, "    ... and {} more", n - top);
    }
    if !a.environment.is_empty() {
        let _ = writeln!(
            out,
            "  {} the machine changed at the same point, not (only) the code: {}",
            style.yellow("environment:"),
            a.environment.join("; ")
        );
    }
    if a.from_commit.is_some()
        && a.to_commit.is_some()
        && a.environment.is_empty()
        && a.state != crate::store::history::AlertState::Retracted
    {
        // The stored command is what `history bisect` runs: runs saved by
        // `tardy run --save`/`--push` carry it; reports and CSVs do not.
        let _ = writeln!(
            out,
            "  find the commit: tardy history bisect {} (runs saved by `tardy run --save` carry the command it runs; else tardy bisect --good {} --bad {} -- CMD)",
            a.id,
            short(a.from_commit.as_deref()),
            short(a.to_commit.as_deref())
        );
        let _ = writeln!(
            out,
            "  see where the time goes: tardy explain --save a.json -- CMD at {}, --save b.json at {}, then tardy explain a.json b.json",
            short(a.from_commit.as_deref()),
            short(a.to_commit.as_deref())
        );
    }
    out
}

/// `tardy history detect`'s summary: what was examined and found, young
/// series, new alerts (their top `5` tests), retractions and reopenings.
pub fn detect_summary(report: &crate::history::detect::DetectReport, style: Style) -> String {
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let mut out = format!(
        "{} series examined ({} incremental), {} change points, {} below the FDR bar, {} new alert{}\n",
        report.series,
        report.incremental,
        report.change_points,
        report.rejected_by_fdr,
        report.new_alerts.len(),
        plural(report.new_alerts.len())
    );
    if report.too_short > 0 {
        out.push_str(&format!(
            "{} series {} fewer than {} points: too few for the calibrated detector to call a change yet (`--otava` tests them with Otava's t-test, at the price of false alerts on noise)\n",
            report.too_short,
            if report.too_short == 1 { "has" } else { "have" },
            crate::stats::rank_cusum::MIN_POINTS
        ));
    }
    for y in report.young.iter().take(10) {
        out.push_str(&young(y));
    }
    if report.young.len() > 10 {
        out.push_str(&format!(
            "... and {} more young series\n",
            report.young.len() - 10
        ));
    }
    for a in &report.new_alerts {
        out.push('\n');
        out.push_str(&alert(a, 5, style));
    }
    for a in &report.retracted {
        out.push_str(&format!(
            "\nalert #{} retracted: {}\n",
            a.id,
            a.reason
                .as_deref()
                .unwrap_or("its change is no longer found")
        ));
    }
    for a in &report.reopened {
        out.push_str(&format!(
            "\nalert #{} reopened: its change is found again\n",
            a.id
        ));
    }
    out
}

/// `tardy history analyze`'s text: the table's size, then each change
/// point's metrics grouped by point, then the young metrics.
pub fn analyzed(name: &str, a: &crate::history::ops::Analyzed, method: &str) -> String {
    let mut out = format!(
        "{}: {} metrics x {} points, {} change points ({})\n",
        name,
        a.metrics,
        a.points,
        a.changes.len(),
        method
    );
    let mut last_index = usize::MAX;
    for c in &a.changes {
        if c.index != last_index {
            out.push_str(&format!(
                "\n{} {} (point {})\n",
                date(c.time),
                c.commit.as_deref().unwrap_or("-"),
                c.index
            ));
            last_index = c.index;
        }
        out.push_str(&format!(
            "  {:<20} {:>+8.1}%  {} -> {}  {}\n",
            c.metric,
            c.forward_change_percent,
            super::cfmt::g(c.mean_before, 6),
            super::cfmt::g(c.mean_after, 6),
            super::units::p_value(c.pvalue)
        ));
    }
    if !a.young.is_empty() {
        out.push('\n');
    }
    for y in &a.young {
        out.push_str(&young(y));
    }
    out
}

/// `tardy history export --format csv`: one row a point (a suite's tests'
/// points after its own, named in the test column).
pub fn export_csv(series: &[crate::history::ops::Exported]) -> String {
    let mut table = super::csv::Table::new(&[
        "series", "test", "time", "commit", "branch", "value", "unit",
    ]);
    for e in series {
        let s = &e.series;
        let mut rows = |test: &str, pts: &[crate::store::history::Point]| {
            for p in pts {
                table.row([
                    s.name.clone(),
                    test.to_string(),
                    chrono::DateTime::from_timestamp(p.time(), 0)
                        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
                        .unwrap_or_default(),
                    p.commit.clone().unwrap_or_default(),
                    p.branch.clone().unwrap_or_default(),
                    p.value.to_string(),
                    s.unit.clone(),
                ]);
            }
        };
        rows("", &e.points);
        for (t, p) in &e.tests {
            rows(t, p);
        }
    }
    table.finish()
}

/// `tardy history alerts`: each alert with its `top` series, or a line
/// saying there is none.
pub fn alerts(alerts: &[Alert], all: bool, top: usize, style: Style) -> String {
    if alerts.is_empty() {
        return if all {
            "no alerts\n"
        } else {
            "no open alerts\n"
        }
        .to_string();
    }
    let text: Vec<String> = alerts.iter().map(|a| alert(a, top, style)).collect();
    text.join("\n")
}

/// One imported file: its points and series.
pub fn imported(f: &Imported) -> String {
    format!(
        "{}: {} point{} in {} series",
        f.file.display(),
        f.points,
        if f.points == 1 { "" } else { "s" },
        f.series
    )
}

/// `tardy history show --json`: the series, the test, its points and segments.
pub fn shown_json(s: &Shown) -> serde_json::Value {
    serde_json::json!({
        "series": s.series,
        "test": s.test,
        "points": s.points,
        "segments": s.segments,
    })
}

/// `tardy history export --format json`: each series with its points.
pub fn export_json(series: &[Exported]) -> serde_json::Value {
    series
        .iter()
        .map(|e| serde_json::json!({ "series": e.series, "points": e.points }))
        .collect()
}

/// `--fail-on-regression`: the regression alerts still open and how to
/// close them.
pub fn open_regressions(open: &[i64], new_open: usize) -> String {
    format!(
        "tardy: {} open regression alert{} ({}; {new_open} new): `tardy history ack ID` once handled, `tardy history dismiss ID` if not a regression",
        open.len(),
        if open.len() == 1 { "" } else { "s" },
        open.iter()
            .map(|i| format!("#{i}"))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

/// `tardy history bisect`: what to try when the ends of alert `id`'s range
/// (widened `widen` times) do not reproduce its change.
pub fn widen_hint(plan: &Plan, id: i64, widen: u32) -> String {
    match &plan.wider {
        Some((good, bad)) => format!(
            "the next wider range is {good}..{bad}: tardy history bisect {id} --widen {}",
            widen + 1
        ),
        None => "the range already reaches the series' ends; the change may not be in the code (see the alert's environment) or is too small for --threshold".to_string(),
    }
}
