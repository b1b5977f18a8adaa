//! `tardy report`: one self-contained HTML file (inline CSS and SVG, no
//! scripts, no network) of history series with their change points and
//! environment boundaries, open alerts, and result sets side by side.
//! Light and dark mode follow the reader's setting; it prints.

use std::fmt::Write;

use super::history::{date, short};
use super::svg::{ChartMark, ChartPoint, ChartSegment, esc, strips, time_chart};
use super::units::{p_value, percent};
pub use crate::history::view::SeriesView;
use crate::store::history::Alert;

/// One results file's sets (name, values, median) in `unit`.
pub struct ResultsView {
    pub source: String,
    pub unit: String,
    pub sets: Vec<(String, Vec<f64>, f64)>,
}

pub(crate) const STYLE: &str = r#"
:root { --fg:#1d2330; --bg:#ffffff; --muted:#667085; --grid:#e4e7ec; --line:#2f6fdb; --seg:#111827;
        --change:#d92d20; --env:#dc6803; --card:#f8f9fb; }
@media (prefers-color-scheme: dark) {
  :root { --fg:#e6e8ee; --bg:#111318; --muted:#98a2b3; --grid:#2a2f3a; --line:#6ea8fe; --seg:#f2f4f7;
          --change:#f97066; --env:#fdb022; --card:#181b22; }
}
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 2em auto; max-width: 960px; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
.muted { color: var(--muted); }
section { background: var(--card); border-radius: 8px; padding: 0.8em 1em; margin: 1em 0; break-inside: avoid; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 0.25em 0.6em; border-bottom: 1px solid var(--grid); }
td.num, th.num { text-align: right; }
.up { color: var(--change); } .down { color: #12b76a; } .env { color: var(--env); }
svg.chart { width: 100%; height: auto; }
svg .grid { stroke: var(--grid); stroke-width: 1; }
svg .axis, svg .label { fill: var(--muted); font-size: 11px; }
svg .series { fill: none; stroke: var(--line); stroke-width: 1; opacity: 0.5; }
svg .dot { fill: var(--line); }
svg .segment { stroke: var(--seg); stroke-width: 2; }
svg .mark { stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .mark.change { stroke: var(--change); }
svg .mark.env { stroke: var(--env); stroke-dasharray: 1 3; stroke-width: 2.5; }
@media print { body { margin: 0; } section { background: none; border: 1px solid #ccc; } }
"#;

pub(crate) fn value_fmt(unit: &str) -> impl Fn(f64) -> String + '_ {
    move |v: f64| {
        if unit == "s" {
            super::compare::value(v, unit)
        } else {
            super::cfmt::g(v, 4)
        }
    }
}

/// The whole page.
pub fn html(
    title: &str,
    series: &[SeriesView],
    alerts: &[Alert],
    results: &[ResultsView],
) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n<p class=\"muted\">tardy {} · {} series · {} open alert{}</p>\n",
        esc(title),
        esc(title),
        env!("CARGO_PKG_VERSION"),
        series.len(),
        alerts.len(),
        if alerts.len() == 1 { "" } else { "s" }
    );
    if !alerts.is_empty() {
        out.push_str("<h2>Open alerts</h2>\n");
        out.push_str(&alerts_table(alerts, None));
    }
    if !series.is_empty() {
        out.push_str("<h2>Series</h2>\n");
    }
    for s in series {
        out.push_str(&series_section(s));
    }
    if !results.is_empty() {
        out.push_str("<h2>Results</h2>\n");
    }
    for r in results {
        let fmt = value_fmt(&r.unit);
        let _ = writeln!(
            out,
            "<section><h3>{}</h3>{}\n<table><tr><th>set</th><th class=\"num\">n</th><th class=\"num\">median</th></tr>",
            esc(&r.source),
            strips(&r.sets, &fmt)
        );
        for (name, values, median) in &r.sets {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(name),
                values.len(),
                esc(&fmt(*median))
            );
        }
        out.push_str("</table></section>\n");
    }
    out.push_str("</body></html>\n");
    out
}

pub(crate) fn signed(change: f64) -> String {
    let text = if change > 0.0 {
        format!("+{}", percent(change))
    } else {
        percent(change)
    };
    let class = if change > 0.0 { "up" } else { "down" };
    format!("<span class=\"{class}\">{}</span>", esc(&text))
}

pub(crate) fn series_section(s: &SeriesView) -> String {
    let fmt = value_fmt(&s.info.unit);
    let points: Vec<ChartPoint> = s
        .points
        .iter()
        .map(|p| ChartPoint {
            value: p.value,
            label: format!(
                "{} {} {}",
                short(p.commit.as_deref()),
                date(p.time()),
                fmt(p.value)
            ),
        })
        .collect();
    let segments: Vec<ChartSegment> = s
        .segments
        .iter()
        .map(|g| ChartSegment {
            start: g.start,
            end: g.end,
            mean: g.mean,
            label: format!("mean {} over points {}-{}", fmt(g.mean), g.start + 1, g.end),
        })
        .collect();
    let mut marks: Vec<ChartMark> = s
        .segments
        .iter()
        .skip(1)
        .map(|g| ChartMark {
            index: g.start,
            label: format!(
                "change point at {}: {}",
                short(g.first_commit.as_deref()),
                g.change
                    .map_or(String::new(), |c| format!("{:+.1}%", c * 100.0))
            ),
            kind: "change",
        })
        .collect();
    for (i, what) in &s.environment {
        marks.push(ChartMark {
            index: *i,
            label: format!("machine changed: {}", what.join("; ")),
            kind: "env",
        });
    }
    let mut out = format!(
        "<section><h3>{}</h3><p class=\"muted\">{} points · {} · {}{}</p>\n{}\n",
        esc(&match &s.test {
            Some(t) => format!("{} :: {t}", s.info.name),
            None => s.info.name.clone(),
        }),
        s.points.len(),
        esc(&s.info.metric),
        s.info.direction.as_str(),
        s.info
            .command
            .as_ref()
            .map_or(String::new(), |c| format!(" · <code>{}</code>", esc(c))),
        time_chart(&points, &segments, &marks, &fmt)
    );
    out.push_str("<table><tr><th>points</th><th>commits</th><th class=\"num\">mean</th><th class=\"num\">spread</th><th class=\"num\">change</th><th>p</th></tr>\n");
    for g in &s.segments {
        let _ = writeln!(
            out,
            "<tr><td>{}-{}</td><td><code>{}..{}</code></td><td class=\"num\">{}</td><td class=\"num\">±{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            g.start + 1,
            g.end,
            esc(&short(g.first_commit.as_deref())),
            esc(&short(g.last_commit.as_deref())),
            esc(&fmt(g.mean)),
            esc(&fmt(g.stddev)),
            g.change.map_or(String::new(), signed),
            g.pvalue.map_or(String::new(), p_value)
        );
        if !g.environment.is_empty() {
            let _ = writeln!(
                out,
                "<tr><td></td><td colspan=\"5\" class=\"env\">environment change: {}</td></tr>",
                esc(&g.environment.join("; "))
            );
        }
    }
    out.push_str("</table></section>\n");
    out
}

/// A table of alerts; with `link`, each alert's number links to
/// `{link}{id}`.
pub(crate) fn alerts_table(alerts: &[Alert], link: Option<&str>) -> String {
    let mut out = String::from(
        "<section><table><tr><th>#</th><th>kind</th><th>state</th><th>commits</th><th>when</th><th class=\"num\">series</th><th>largest change</th></tr>\n",
    );
    for a in alerts {
        let top = a.members.first().map_or(String::new(), |m| {
            let name = match &m.test {
                Some(t) => format!("{} :: {t}", m.series),
                None => m.series.clone(),
            };
            format!("{} {}", signed(m.change), esc(&name))
        });
        let kind_class = if a.environment.is_empty() {
            ""
        } else {
            " class=\"env\""
        };
        let id = match link {
            Some(l) => format!("<a href=\"{l}{}\">{}</a>", a.id, a.id),
            None => a.id.to_string(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{id}</td><td{kind_class}>{}</td><td>{}</td><td><code>{}..{}</code></td><td>{}</td><td class=\"num\">{}</td><td>{top}</td></tr>",
            esc(a.kind()),
            a.state.as_str(),
            esc(&short(a.from_commit.as_deref())),
            esc(&short(a.to_commit.as_deref())),
            esc(&date(a.to_time)),
            a.members.len()
        );
    }
    out.push_str("</table></section>\n");
    out
}
