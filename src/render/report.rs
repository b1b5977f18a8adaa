//! `tardy report`: one self-contained HTML file (inline CSS and SVG, no
//! scripts, no network) of history series with their change points and
//! environment boundaries, open alerts, and result sets side by side.
//! Light and dark mode follow the reader's setting; it prints.

use std::fmt::Write;

use super::history::{date, short};
use super::svg::{ChartMark, ChartPoint, ChartSegment, esc, strips, time_chart};
use super::units::{p_value, percent};
use crate::analyze::compare::Report as CompareReport;
use crate::analyze::suite::{Diff, Show};
use crate::diagnose::machine::MachineComparison;
pub use crate::history::view::SeriesView;
use crate::stats::compare::Correction;
use crate::store::history::Alert;

/// One results file's sets (name, values, median) in `unit`.
pub struct ResultsView {
    pub source: String,
    pub unit: String,
    pub sets: Vec<ResultSet>,
}

/// One set of a results file as drawn: its name, how many values it holds, their
/// median, and the values drawn as dots (all of them, or at most [`STRIP_DOTS`]
/// evenly spaced order statistics of a large set).
pub struct ResultSet {
    pub name: String,
    pub n: usize,
    pub median: f64,
    pub dots: Vec<f64>,
}

/// The most dots drawn for one set: a strip of 20 million dots would make a
/// report of gigabytes that no browser opens.
pub const STRIP_DOTS: usize = 400;

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
svg .bar.up { fill: var(--change); opacity: 0.8; } svg .bar.down { fill: #12b76a; opacity: 0.8; }
.verdict-slower { color: var(--change); font-weight: 600; } .verdict-faster { color: #12b76a; font-weight: 600; }
.verdict-same, .verdict-inconclusive { color: var(--muted); }
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

/// A `tardy tests diff` of two reports, or the slowest tests of one.
pub enum TestsView {
    Diff {
        before: String,
        after: String,
        diff: Diff,
    },
    One {
        source: String,
        show: Show,
    },
}

/// Everything one report shows; empty parts are left out.
#[derive(Default)]
pub struct Page<'a> {
    pub title: &'a str,
    pub series: &'a [SeriesView],
    pub alerts: &'a [Alert],
    pub results: &'a [ResultsView],
    /// The verdicts of every later result file against the first.
    pub compare: Option<&'a CompareReport>,
    pub tests: &'a [TestsView],
    pub doctor: Option<&'a MachineComparison>,
    /// `tardy explain` traces, drawn as stacked bars of their categories.
    pub traces: &'a [crate::diagnose::explain::Trace],
}

/// The whole page.
pub fn html(page: &Page) -> String {
    let Page {
        title,
        series,
        alerts,
        results,
        ..
    } = *page;
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
        out.push_str(&series_section(s, true));
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
        for set in &r.sets {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&set.name),
                set.n,
                esc(&fmt(set.median))
            );
        }
        out.push_str("</table>");
        if r.sets.iter().any(|set| set.dots.len() < set.n) {
            let _ = write!(
                out,
                "<p class=\"muted\">Sets of more than {STRIP_DOTS} values are drawn as {STRIP_DOTS} evenly spaced order statistics (smallest to largest).</p>"
            );
        }
        out.push_str("</section>\n");
    }
    if let Some(c) = page.compare {
        out.push_str(&compare_section(c));
    }
    for t in page.tests {
        out.push_str(&tests_section(t));
    }
    if let Some(d) = page.doctor {
        out.push_str(&doctor_section(d));
    }
    if !page.traces.is_empty() {
        out.push_str(&traces_section(page.traces));
    }
    out.push_str("</body></html>\n");
    out
}

/// The verdict table of `tardy compare`.
pub(crate) fn compare_section(c: &CompareReport) -> String {
    let mut out = format!(
        "<h2>Verdicts</h2>\n<section><p class=\"muted\">{:.0}% confidence, {} across {} comparison{}, target effect ±{}</p>\n\
<table><tr><th>benchmark</th><th>baseline → candidate</th><th class=\"num\">n</th><th class=\"num\">baseline</th><th class=\"num\">candidate</th><th class=\"num\">ratio</th><th>interval</th><th class=\"num\">p</th><th>verdict</th></tr>\n",
        c.confidence * 100.0,
        match c.correction {
            Correction::None => "p-values not adjusted",
            Correction::Holm => "p-values Holm-adjusted",
            Correction::BenjaminiHochberg => "p-values Benjamini-Hochberg-adjusted",
        },
        c.rows.len(),
        if c.rows.len() == 1 { "" } else { "s" },
        esc(&percent(c.target_effect))
    );
    for r in &c.rows {
        let verdict = format!("{:?}", r.verdict).to_lowercase();
        let interval = match (r.ci_low, r.ci_high) {
            (Some(l), Some(h)) => format!("{:.3}x – {:.3}x", l, h),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{} → {}</td><td class=\"num\">{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}x</td><td>{}</td><td class=\"num\">{}</td><td class=\"verdict-{verdict}\">{verdict}</td></tr>",
            esc(&r.name),
            esc(&r.baseline),
            esc(&r.candidate),
            r.n[0],
            r.n[1],
            esc(&super::compare::value(r.center[0], &r.unit)),
            esc(&super::compare::value(r.center[1], &r.unit)),
            r.ratio,
            esc(&interval),
            esc(&p_value(r.p_adjusted))
        );
        for n in &r.notes {
            let _ = writeln!(
                out,
                "<tr><td></td><td colspan=\"8\" class=\"muted\">{}</td></tr>",
                esc(n)
            );
        }
    }
    out.push_str("</table>\n");
    for w in &c.warnings {
        let _ = writeln!(out, "<p class=\"env\">{}</p>", esc(w));
    }
    out.push_str("</section>\n");
    out
}

fn seconds(v: f64) -> String {
    super::compare::value(v, "s")
}

/// A tests diff as a waterfall of the biggest per-test changes, with the
/// shape of the slowdown; or one report's slowest tests.
pub(crate) fn tests_section(t: &TestsView) -> String {
    const TOP: usize = 25;
    match t {
        TestsView::One { source, show } => {
            let rows: Vec<(String, f64, String)> = show
                .slowest_tests
                .iter()
                .take(TOP)
                .map(|n| {
                    (
                        n.name.clone(),
                        n.seconds,
                        format!("{} {}", n.name, seconds(n.seconds)),
                    )
                })
                .collect();
            format!(
                "<h2>Tests: {}</h2>\n<section><p class=\"muted\">{} tests, {} in total{}</p>{}</section>\n",
                esc(source),
                show.tests,
                esc(&seconds(show.total_s)),
                show.suite_wall_s.map_or(String::new(), |w| format!(
                    ", suite wall time {}",
                    esc(&seconds(w))
                )),
                super::svg::bars(&rows, &seconds)
            )
        }
        TestsView::Diff {
            before,
            after,
            diff,
        } => {
            let mut changed: Vec<&crate::analyze::suite::TestRow> =
                diff.tests.iter().filter(|r| r.delta_s.is_some()).collect();
            changed.sort_by(|a, b| {
                b.delta_s
                    .unwrap_or(0.0)
                    .abs()
                    .total_cmp(&a.delta_s.unwrap_or(0.0).abs())
            });
            let rows: Vec<(String, f64, String)> = changed
                .iter()
                .take(TOP)
                .map(|r| {
                    let d = r.delta_s.unwrap_or(0.0);
                    (
                        r.name.clone(),
                        d,
                        format!(
                            "{}: {} -> {}",
                            r.name,
                            r.before_s.map_or("-".into(), seconds),
                            r.after_s.map_or("-".into(), seconds)
                        ),
                    )
                })
                .collect();
            let signed_s = |v: f64| {
                if v > 0.0 {
                    format!("+{}", seconds(v))
                } else {
                    format!("-{}", seconds(-v))
                }
            };
            let mut out = format!(
                "<h2>Tests: {} → {}</h2>\n<section><p>{} matched tests: total {} → {} ({}){}</p>\n",
                esc(before),
                esc(after),
                diff.matched,
                esc(&seconds(diff.total_before_s)),
                esc(&seconds(diff.total_after_s)),
                signed(if diff.total_before_s > 0.0 {
                    diff.total_after_s / diff.total_before_s - 1.0
                } else {
                    0.0
                }),
                if diff.added.is_empty() && diff.removed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} added, {} removed",
                        diff.added.len(),
                        diff.removed.len()
                    )
                }
            );
            for shape in &diff.shapes {
                let _ = writeln!(
                    out,
                    "<p><strong>{}</strong> <span class=\"muted\">({:.0}% of the change)</span><br>{}</p>",
                    esc(&shape.summary),
                    shape.explained_share * 100.0,
                    esc(&shape.advice)
                );
            }
            let _ = writeln!(
                out,
                "<h3>The {} biggest changes</h3>{}",
                rows.len(),
                super::svg::bars(&rows, &signed_s)
            );
            for w in &diff.warnings {
                let _ = writeln!(out, "<p class=\"muted\">{}</p>", esc(w));
            }
            out.push_str("</section>\n");
            out
        }
    }
}

/// `tardy doctor --compare` as a table.
pub(crate) fn doctor_section(c: &MachineComparison) -> String {
    let mut out = format!(
        "<h2>Machines: {} → {}</h2>\n<section>",
        esc(&c.a_source),
        esc(&c.b_source)
    );
    for d in &c.diagnosis {
        let _ = writeln!(out, "<p><strong>{}</strong></p>", esc(d));
    }
    if !c.settings.is_empty() {
        out.push_str(
            "<h3>Settings that differ</h3><table><tr><th>setting</th><th>A</th><th>B</th></tr>\n",
        );
        for s in &c.settings {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&s.setting),
                esc(&s.a),
                esc(&s.b)
            );
        }
        out.push_str("</table>\n");
    }
    out.push_str("<h3>Probes, largest difference first</h3><table><tr><th>probe</th><th>measure</th><th class=\"num\">A</th><th class=\"num\">B</th><th class=\"num\">B/A</th><th class=\"num\">p</th><th>verdict (B)</th></tr>\n");
    for p in &c.probes {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}x</td><td class=\"num\">{}</td><td class=\"verdict-{}\">{}</td></tr>",
            esc(&p.probe),
            esc(&p.label),
            esc(&super::doctor::value(p.a_median, &p.unit)),
            esc(&super::doctor::value(p.b_median, &p.unit)),
            p.ratio,
            p.p_value.map_or(String::new(), p_value),
            esc(&p.verdict),
            esc(&p.verdict)
        );
    }
    out.push_str("</table></section>\n");
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

/// A series' time chart alone.
fn series_chart(s: &SeriesView) -> String {
    let fmt = value_fmt(&s.info.unit);
    let points: Vec<ChartPoint> = s
        .points
        .iter()
        .map(|p| ChartPoint {
            value: p.value,
            tick: format!("{} {}", short(p.commit.as_deref()), date(p.time()))
                .trim()
                .to_string(),
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
    time_chart(&points, &segments, &marks, &fmt)
}

/// A series' chart and segment table; `titled`: with its name as a heading (not
/// on a page whose own heading names it already).
pub(crate) fn series_section(s: &SeriesView, titled: bool) -> String {
    let fmt = value_fmt(&s.info.unit);
    let chart = series_chart(s);
    let title = if titled {
        format!(
            "<h3>{}</h3>",
            esc(&match &s.test {
                Some(t) => format!("{} :: {t}", s.info.name),
                None => s.info.name.clone(),
            })
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "<section>{title}<p class=\"muted\">{} points · {} · {}{}</p>\n{}\n",
        s.points.len(),
        esc(&s.info.metric),
        s.info.direction.as_str(),
        s.info
            .command
            .as_ref()
            .map_or(String::new(), |c| format!(" · <code>{}</code>", esc(c))),
        chart
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

/// The page's only chart as a standalone SVG file (light colours inlined),
/// or why there is not exactly one.
pub fn single_chart(page: &Page) -> Result<String, String> {
    let mut charts: Vec<String> = page.series.iter().map(series_chart).collect();
    for r in page.results {
        charts.push(strips(&r.sets, &value_fmt(&r.unit)));
    }
    for t in page.tests {
        let html = tests_section(t);
        if let (Some(a), Some(b)) = (html.find("<svg"), html.rfind("</svg>")) {
            charts.push(html[a..b + 6].to_string());
        }
    }
    if charts.len() != 1 {
        return Err(format!(
            "the inputs hold {} charts; choose one (--series NAME, --no-history, or one set of files)",
            charts.len()
        ));
    }
    let chart = charts.remove(0);
    let light = STYLE
        .split("@media")
        .next()
        .unwrap_or("")
        .replace(":root", "svg");
    let rules: String = STYLE
        .lines()
        .filter(|l| l.trim_start().starts_with("svg "))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(chart.replacen(
        "xmlns=\"http://www.w3.org/2000/svg\">",
        &format!(
            "xmlns=\"http://www.w3.org/2000/svg\" width=\"880\"><style>{light}\n{rules}\nsvg {{ background: #ffffff; font-family: sans-serif; }}</style>"
        ),
        1,
    ) + "\n")
}

/// `tardy explain` traces: one stacked bar each, its categories (critical
/// path, mean of the runs) in proportion to the longest wall time.
pub(crate) fn traces_section(traces: &[crate::diagnose::explain::Trace]) -> String {
    use crate::diagnose::explain::{CATEGORIES, compare::dur};
    const COLORS: [&str; 11] = [
        "#2f6fdb", "#7a5af8", "#f79009", "#d92d20", "#12b76a", "#0ba5ec", "#98a2b3", "#ee46bc",
        "#875bf7", "#667085", "#d0d5dd",
    ];
    let max = traces.iter().map(|t| t.wall_s).fold(0.0f64, f64::max);
    let (w, left, bar_h, gap) = (900.0, 220.0, 26.0, 14.0);
    let h = traces.len() as f64 * (bar_h + gap) + 40.0;
    let mut out = format!(
        "<h2>Where the time went (tardy explain)</h2>\n<section><svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"stacked bars of each trace's categories\">\n"
    );
    for (i, t) in traces.iter().enumerate() {
        let y = 10.0 + i as f64 * (bar_h + gap);
        let name: String = t.command.chars().take(32).collect();
        out.push_str(&format!(
            "<text x=\"0\" y=\"{:.1}\" fill=\"currentColor\" font-size=\"12\">{}</text>\n",
            y + bar_h * 0.65,
            esc(&name)
        ));
        let mut x = left;
        for (k, cat) in CATEGORIES.iter().enumerate() {
            let v = t.categories.get(*cat).copied().unwrap_or(0.0);
            if v <= 0.0 || max <= 0.0 {
                continue;
            }
            let bw = v / max * (w - left - 80.0);
            out.push_str(&format!(
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bw:.2}\" height=\"{bar_h}\" fill=\"{}\"><title>{}: {} ({:.1}%)</title></rect>\n",
                COLORS[k],
                esc(cat),
                esc(&dur(v)),
                if t.wall_s > 0.0 { v / t.wall_s * 100.0 } else { 0.0 }
            ));
            x += bw;
        }
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"currentColor\" font-size=\"12\">{}</text>\n",
            x + 6.0,
            y + bar_h * 0.65,
            esc(&dur(t.wall_s))
        ));
    }
    out.push_str("</svg>\n<p>");
    for (k, cat) in CATEGORIES.iter().enumerate() {
        if traces
            .iter()
            .any(|t| t.categories.get(*cat).copied().unwrap_or(0.0) > 0.0)
        {
            out.push_str(&format!(
                "<span style=\"color:{}\">&#9632;</span> {} &nbsp; ",
                COLORS[k],
                esc(cat)
            ));
        }
    }
    out.push_str("</p></section>\n");
    out
}
