//! `tardy report`: one self-contained HTML file (inline CSS and SVG, no
//! scripts, no network) of history series with their change points and
//! environment boundaries, open alerts, and result sets side by side.
//! Light and dark mode follow the reader's setting; it prints.

use maud::{DOCTYPE, PreEscaped, html};

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

pub use super::svg::{ResultSet, STRIP_DOTS};

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
svg .mark.alert { stroke: var(--change); stroke-dasharray: none; stroke-width: 5; opacity: 0.25; }
svg .spread { stroke: var(--line); stroke-width: 1.5; opacity: 0.45; }
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
        diff: Box<Diff>,
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
    /// Their flame graph (`diagnose::explain::functions::report_flame`).
    pub flame: Option<&'a crate::diagnose::explain::functions::ReportFlame>,
    /// Two traces compared: the causes, ranked, and the waiting functions.
    pub explained: Option<&'a crate::diagnose::explain::compare::Comparison>,
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
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                p.muted {
                    "tardy " (env!("CARGO_PKG_VERSION")) " · " (series.len()) " series · "
                    (alerts.len()) " open alert" @if alerts.len() != 1 { "s" }
                }
                @if !alerts.is_empty() {
                    h2 { "Open alerts" }
                    (PreEscaped(alerts_table(alerts, None, &Default::default())))
                }
                @if !series.is_empty() { h2 { "Series" } }
                @for s in series { (PreEscaped(series_section(s, true))) }
                // The verdicts first: what changed, then the distributions.
                @if let Some(c) = page.compare { (PreEscaped(compare_section(c))) }
                @if !results.is_empty() {
                    h2 { "Results" }
                    p.muted { "Each line is a set of runs, its median the bar. A value more than 3 interquartile ranges beyond the quartiles is drawn as a ring at the axis's end (its value in its tooltip), so a few outliers do not crush the rest." }
                }
                @for r in results {
                    // Values in the units the command line shows (82.33 ns/op).
                    @let fmt = |v: f64| super::compare::value(v, &r.unit);
                    section {
                        h3 {
                            (r.source)
                            @if r.unit != "s" && !r.unit.is_empty() { " · " (r.unit) }
                        }
                        (PreEscaped(strips(&r.sets, &fmt)))
                        table {
                            tr { th { "set" } th.num { "n" } th.num { "median" } }
                            @for set in &r.sets {
                                tr { td { (set.name) } td.num { (set.n) } td.num { (fmt(set.median)) } }
                            }
                        }
                        @if r.sets.iter().any(|set| set.dots.len() < set.n) {
                            p.muted { "Sets of more than " (STRIP_DOTS) " values are drawn as " (STRIP_DOTS) " evenly spaced order statistics (smallest to largest)." }
                        }
                    }
                }
                @for t in page.tests { (PreEscaped(tests_section(t))) }
                @if let Some(d) = page.doctor { (PreEscaped(doctor_section(d))) }
                @if let Some(c) = page.explained { (PreEscaped(causes_section(c))) }
                @if !page.traces.is_empty() { (PreEscaped(traces_section(page.traces, page.flame))) }
                @if page.traces.iter().any(|t| t.timeline.is_some()) { (PreEscaped(paths_section(page.traces))) }
            }
        }
    }
    .into_string()
        + "\n"
}

/// The verdict table of `tardy compare`.
pub(crate) fn compare_section(c: &CompareReport) -> String {
    let adjusted = match c.correction {
        Correction::None => "p-values not adjusted",
        Correction::Holm => "p-values Holm-adjusted",
        Correction::BenjaminiHochberg => "p-values Benjamini-Hochberg-adjusted",
    };
    html! {
        h2 { "Verdicts" }
        section {
            p.muted {
                (format!("{:.0}", c.confidence * 100.0)) "% confidence, " (adjusted) " across "
                (c.family) " comparison" @if c.family != 1 { "s" }
                @if c.exact_rows > 0 { " (" (c.exact_rows) " exact rows, not tested)" }
                ", target effect ±" (percent(c.target_effect))
            }
            table {
                tr {
                    th { "benchmark" } th { "baseline → candidate" } th.num { "n" } th.num { "baseline" }
                    th.num { "candidate" } th.num { "ratio" } th { "interval" } th.num { "p" } th { "verdict" }
                }
                @for r in &c.rows {
                    @let verdict = format!("{:?}", r.verdict).to_lowercase();
                    tr {
                        td {
                            (r.name)
                            @if !r.group.is_empty() { br; span.muted { (r.group) } }
                        }
                        td { (r.baseline) " → " (r.candidate) }
                        td.num { (r.n[0]) "/" (r.n[1]) }
                        td.num { (super::compare::value(r.center[0], &r.unit)) }
                        td.num { (super::compare::value(r.center[1], &r.unit)) }
                        td.num { (format!("{:.3}x", r.ratio)) }
                        td { @if let (Some(l), Some(h)) = (r.ci_low, r.ci_high) { (format!("{l:.3}x – {h:.3}x")) } }
                        td.num {
                            @if r.p_adjusted.is_nan() { "exact" } @else { (p_value(r.p_adjusted)) }
                        }
                        td class={ "verdict-" (verdict) } { (verdict) }
                    }
                    @for n in &r.notes {
                        tr { td {} td colspan="8" class="muted" { (n) } }
                    }
                }
            }
            @for w in &c.warnings { p.env { (w) } }
        }
    }
    .into_string()
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
            html! {
                h2 { "Tests: " (source) }
                section {
                    p.muted {
                        (show.tests) " tests, " (seconds(show.total_s)) " in total"
                        @if let Some(w) = show.suite_wall_s { ", suite wall time " (seconds(w)) }
                    }
                    (PreEscaped(super::svg::bars(&rows, &seconds)))
                }
            }
            .into_string()
        }
        TestsView::Diff {
            before,
            after,
            diff,
        } => {
            let mut changed: Vec<crate::analyze::rows::RowView> = diff
                .tests
                .iter()
                .filter(|r| r.delta_s().is_some())
                .collect();
            changed.sort_by(|a, b| {
                b.delta_s()
                    .unwrap_or(0.0)
                    .abs()
                    .total_cmp(&a.delta_s().unwrap_or(0.0).abs())
            });
            let rows: Vec<(String, f64, String)> = changed
                .iter()
                .take(TOP)
                .map(|r| {
                    let d = r.delta_s().unwrap_or(0.0);
                    (
                        r.name(),
                        d,
                        format!(
                            "{}: {} -> {}",
                            r.name(),
                            r.before_s().map_or("-".into(), seconds),
                            r.after_s().map_or("-".into(), seconds)
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
            let relative = if diff.total_before_s > 0.0 {
                diff.total_after_s / diff.total_before_s - 1.0
            } else {
                0.0
            };
            html! {
                h2 { "Tests: " (before) " → " (after) }
                section {
                    p {
                        (diff.matched) " matched tests: total " (seconds(diff.total_before_s)) " → "
                        (seconds(diff.total_after_s)) " (" (PreEscaped(signed(relative))) ")"
                        @if !(diff.added.is_empty() && diff.removed.is_empty()) {
                            "; " (diff.added.len()) " added, " (diff.removed.len()) " removed"
                        }
                    }
                    @for shape in &diff.shapes {
                        p {
                            strong { (shape.summary) } " "
                            span.muted { "(" (format!("{:.0}", shape.explained_share * 100.0)) "% of the change)" }
                            br;
                            (shape.advice)
                        }
                    }
                    h3 { "The " (rows.len()) " biggest changes" }
                    (PreEscaped(super::svg::bars(&rows, &signed_s)))
                    @for w in &diff.warnings { p.muted { (w) } }
                }
            }
            .into_string()
        }
    }
}

/// `tardy doctor --compare` as a table.
pub(crate) fn doctor_section(c: &MachineComparison) -> String {
    html! {
        h2 { "Machines: " (c.a_source) " → " (c.b_source) }
        section {
            @for d in &c.diagnosis { p { strong { (d) } } }
            @if !c.settings.is_empty() {
                h3 { "Settings that differ" }
                table {
                    tr { th { "setting" } th { "A" } th { "B" } }
                    @for st in &c.settings { tr { td { (st.setting) } td { (st.a) } td { (st.b) } } }
                }
            }
            h3 { "Probes, largest difference first" }
            table {
                tr {
                    th { "probe" } th { "measure" } th.num { "A" } th.num { "B" } th.num { "B/A" }
                    th.num { "p" } th { "verdict (B)" }
                }
                @for p in &c.probes {
                    tr {
                        td { (p.probe) }
                        td { (p.label) }
                        td.num { (super::doctor::value(p.a_median, &p.unit)) }
                        td.num { (super::doctor::value(p.b_median, &p.unit)) }
                        td.num { (format!("{:.3}x", p.ratio)) }
                        td.num { @if let Some(v) = p.p_value { (p_value(v)) } }
                        td class={ "verdict-" (p.verdict) } { (p.verdict) }
                    }
                }
            }
        }
    }
    .into_string()
}

/// A relative change as a coloured span: `+12.3%` (up) or `-4.0%` (down).
pub(crate) fn signed(change: f64) -> String {
    let text = if change > 0.0 {
        format!("+{}", percent(change))
    } else {
        percent(change)
    };
    let class = if change > 0.0 { "up" } else { "down" };
    html! { span class=(class) { (text) } }.into_string()
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
            spread: None,
        })
        .collect();
    let points: Vec<ChartPoint> = points
        .into_iter()
        .zip(s.spread.iter().chain(std::iter::repeat(&None)))
        .map(|(mut p, sp)| {
            p.spread = *sp;
            p
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
    for (i, _, label) in &s.alerts {
        marks.push(ChartMark {
            index: *i,
            label: label.clone(),
            kind: "alert",
        });
    }
    time_chart(&points, &segments, &marks, &fmt)
}

/// A series' chart and segment table; `titled`: with its name as a heading (not
/// on a page whose own heading names it already).
pub(crate) fn series_section(s: &SeriesView, titled: bool) -> String {
    let fmt = value_fmt(&s.info.unit);
    html! {
        section {
            @if titled {
                h3 {
                    @match &s.test {
                        Some(t) => { (s.info.name) " :: " (t) },
                        None => (s.info.name),
                    }
                }
            }
            p.muted {
                (s.points.len()) " points · " (s.info.metric) " · " (s.info.direction.as_str())
                @if let Some(c) = &s.info.command { " · " code { (c) } }
            }
            (PreEscaped(series_chart(s)))
            table {
                tr {
                    th { "points" } th { "commits" } th.num { "mean" } th.num { "spread" }
                    th.num { "change" } th { "p" }
                }
                @for g in &s.segments {
                    tr {
                        td { (g.start + 1) "-" (g.end) }
                        td { code { (short(g.first_commit.as_deref())) ".." (short(g.last_commit.as_deref())) } }
                        td.num { (fmt(g.mean)) }
                        td.num { "±" (fmt(g.stddev)) }
                        td.num { @if let Some(c) = g.change { (PreEscaped(signed(c))) } }
                        td { @if let Some(p) = g.pvalue { (p_value(p)) } }
                    }
                    @if !g.environment.is_empty() {
                        tr { td {} td colspan="5" class="env" { "environment change: " (g.environment.join("; ")) } }
                    }
                }
            }
        }
    }
    .into_string()
}

/// A table of alerts; with `link`, each alert's number links to
/// `{link}{id}`.
/// A known commit subject shows under the range: the first commit after the
/// change, the one that did it when the range is one commit.
pub(crate) fn alerts_table(
    alerts: &[Alert],
    link: Option<&str>,
    subjects: &std::collections::BTreeMap<String, String>,
) -> String {
    html! {
        section {
            table {
                tr {
                    th { "#" } th { "kind" } th { "state" } th { "commits" } th { "when" }
                    th.num { "series" } th { "largest change" }
                }
                @for a in alerts {
                    tr {
                        td {
                            @match link {
                                Some(l) => a href={ (l) (a.id) } { (a.id) },
                                None => (a.id),
                            }
                        }
                        td class=[(!a.environment.is_empty()).then_some("env")] { (a.kind()) }
                        td { (a.state.as_str()) }
                        td {
                            code { (short(a.from_commit.as_deref())) ".." (short(a.to_commit.as_deref())) }
                            @if let Some(s) = a.to_commit.as_ref().and_then(|c| subjects.get(c)) {
                                br; span.muted.subject { (s) }
                            }
                        }
                        td { (date(a.to_time)) }
                        td.num { (a.members.len()) }
                        td {
                            @if let Some(m) = a.members.first() {
                                (PreEscaped(signed(m.change))) " "
                                @match &m.test {
                                    Some(t) => { (m.series) " :: " (t) },
                                    None => (m.series),
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    .into_string()
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

/// The colour of each of explain's categories, in `CATEGORIES` order.
const COLORS: [&str; 11] = [
    "#2f6fdb", "#7a5af8", "#f79009", "#d92d20", "#12b76a", "#0ba5ec", "#98a2b3", "#ee46bc",
    "#875bf7", "#667085", "#d0d5dd",
];

/// The colour of a category by name ("cpu", user and system together,
/// takes user CPU's).
fn category_color(cat: &str) -> &'static str {
    let cat = if cat == "cpu" { "cpu-user" } else { cat };
    crate::diagnose::explain::CATEGORIES
        .iter()
        .position(|c| *c == cat)
        .map_or(COLORS[10], |i| COLORS[i])
}

/// `tardy explain` traces: one stacked bar each, its categories (critical
/// path, mean of the runs) in proportion to the longest wall time.
pub(crate) fn traces_section(
    traces: &[crate::diagnose::explain::Trace],
    flame: Option<&crate::diagnose::explain::functions::ReportFlame>,
) -> String {
    use crate::diagnose::explain::CATEGORIES;
    use crate::fmt::dur;
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
    if let Some(f) = flame {
        out.push_str(&flame_section(f));
    }
    out
}

/// Two traces compared: the diagnosis, the causes by share, and the
/// functions that waited longer.
fn causes_section(c: &crate::diagnose::explain::compare::Comparison) -> String {
    use crate::fmt::dur;
    let signed = |v: f64| format!("{}{}", if v >= 0.0 { "+" } else { "" }, dur(v));
    let mut out = format!(
        "<h2>Why B is slower than A</h2>\n<section><p class=\"diagnosis\">{}</p>\n",
        esc(&c.diagnosis)
    );
    if !c.causes.is_empty() {
        out.push_str("<table class=\"causes\"><tr><th>cause</th><th>share</th><th>Δ a run</th><th>evidence</th></tr>\n");
        for k in &c.causes {
            out.push_str(&format!(
                "<tr><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td></tr>\n",
                esc(&k.kind),
                k.share * 100.0,
                esc(&signed(k.delta_s)),
                esc(&k.evidence)
            ));
        }
        out.push_str("</table>\n");
    }
    if !c.waiting_functions.is_empty() {
        out.push_str("<h3>Where the threads waited (B against A)</h3>\n<table class=\"waits\"><tr><th>wait</th><th>function</th><th>A</th><th>B</th><th>Δ</th></tr>\n");
        for w in c.waiting_functions.iter().take(10) {
            let through = w
                .through
                .as_deref()
                .map(|t| format!(" through {t}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&w.kind),
                esc(&w.info.function),
                esc(&through),
                esc(&dur(w.a_s)),
                esc(&dur(w.b_s)),
                esc(&signed(w.delta_s))
            ));
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
    out
}

/// Each trace's critical path (its run of median wall time) on one time
/// axis: the chain of threads the wall time is made of, coloured by what
/// each was doing, so A's and B's can be read one above the other.
fn paths_section(traces: &[crate::diagnose::explain::Trace]) -> String {
    use crate::fmt::dur;
    let max = traces
        .iter()
        .filter_map(|t| t.timeline.as_ref())
        .map(|l| l.wall_ns)
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let (w, left, row, gap) = (900.0, 160.0, 28.0, 18.0);
    let rows: Vec<_> = traces
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.timeline.as_ref().map(|l| (i, t, l)))
        .collect();
    let h = rows.len() as f64 * (row + gap) + 36.0;
    let mut out = format!(
        "<h2>The critical paths, on one time axis</h2>\n<section><p class=\"muted\">Each side's run of median wall time: the chain of threads its wall time is made of (walked back from the last exit along the wake-ups), coloured by what each was doing. Hover a stretch for its process and thread; <code>--export-trace</code> writes the whole timeline for ui.perfetto.dev.</p>\n<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"critical paths on one time axis\">\n"
    );
    let mut seen: Vec<&str> = Vec::new();
    for (k, (i, t, log)) in rows.iter().enumerate() {
        let y = 8.0 + k as f64 * (row + gap);
        let side = match (traces.len(), i) {
            (2, 0) => "A: ".to_string(),
            (2, _) => "B: ".to_string(),
            _ => String::new(),
        };
        let name: String = format!("{side}{}", t.command).chars().take(24).collect();
        out.push_str(&format!(
            "<g class=\"cp-row\" data-side=\"{}\"><text x=\"0\" y=\"{:.1}\" fill=\"currentColor\" font-size=\"12\">{}</text>\n",
            esc(side.trim_end_matches(": ")),
            y + row * 0.65,
            esc(&name)
        ));
        let pid_of: std::collections::HashMap<i32, i32> =
            log.threads.iter().map(|t| (t.0, t.1)).collect();
        let commands: std::collections::HashMap<i32, &str> = log
            .processes
            .iter()
            .map(|(p, c)| (*p, c.as_str()))
            .collect();
        for s in log.path_slices() {
            let cat = s.doing.category();
            if !seen.contains(&cat) {
                seen.push(cat);
            }
            let x = left + s.start as f64 / max * (w - left - 20.0);
            let bw = (s.dur as f64 / max * (w - left - 20.0)).max(0.2);
            let pid = pid_of.get(&s.tid).copied().unwrap_or(s.tid);
            let command: String = commands
                .get(&pid)
                .copied()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            out.push_str(&format!(
                "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{bw:.2}\" height=\"{row}\" fill=\"{}\"><title>{cat} {} in {} [pid {pid}, thread {}]</title></rect>\n",
                category_color(cat),
                esc(&dur(s.dur as f64 / 1e9)),
                esc(&command),
                s.tid
            ));
        }
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"currentColor\" font-size=\"11\">{}</text></g>\n",
            left + log.wall_ns as f64 / max * (w - left - 20.0) - 40.0,
            y + row + 12.0,
            esc(&dur(log.wall_ns as f64 / 1e9))
        ));
    }
    out.push_str("</svg>\n<p>");
    for cat in seen {
        out.push_str(&format!(
            "<span style=\"color:{}\">&#9632;</span> {} &nbsp; ",
            category_color(cat),
            esc(cat)
        ));
    }
    out.push_str("</p></section>\n");
    out
}

/// The traces' CPU profiles as a flame graph: B against A as a
/// differential one, or one alone.
fn flame_section(f: &crate::diagnose::explain::functions::ReportFlame) -> String {
    let mut out = String::new();
    match &f.a {
        Some(a) => {
            out.push_str(&format!(
                "<h2>Which code: B against A (sampled CPU)</h2>\n<section><p>A: {} &nbsp; B: {}. Width: B's CPU time a run; red: grew against A, blue: shrank (the deeper, the more). Hover a box for both times.</p>\n",
                esc(a),
                esc(&f.b)
            ));
            out.push_str(&super::flame::svg(&f.tree, 880.0, true));
        }
        None => {
            out.push_str(&format!(
                "<h2>Which code: {} (sampled CPU)</h2>\n<section>\n",
                esc(&f.b)
            ));
            out.push_str(&super::flame::svg(&f.tree, 880.0, false));
        }
    }
    out.push_str("</section>\n");
    out
}

/// What a report was made of, for the line `tardy report` ends with: the
/// history series, then the result files (always) and any other kind
/// given (`given`: results, test reports, doctor reports, traces).
pub fn given_summary(series: usize, given: [usize; 4]) -> String {
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![format!("{series} history series")];
    for (n, what) in given
        .into_iter()
        .zip(["result file", "test report", "doctor report", "trace"])
    {
        if n > 0 || what == "result file" {
            parts.push(count(n, what));
        }
    }
    parts.join(", ")
}
