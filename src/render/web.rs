//! The pages of `tardy serve`: the overview (series, open alerts, recent uploads,
//! the pipeline of suite durations per build), a series, a test, an alert, the
//! machines, the login and error pages. They are maud templates, so every value is
//! escaped unless it is marked as HTML already made (the charts and tables shared
//! with the report, [`super::report`], which escape what they hold). What they show
//! was gathered by the server; nothing is computed here.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::history::{date, short};
use super::report::{STYLE, alerts_table, series_section, signed, value_fmt};
use super::svg::sparkline;
use crate::history::view::SeriesView;
use crate::probe::Fingerprint;
use crate::store::history::{Alert, AlertState, Annotation, MachineInfo, SeriesInfo, UploadInfo};

const WEB_STYLE: &str = r#"
nav { display: flex; gap: 1.2em; align-items: baseline; border-bottom: 1px solid var(--grid); padding-bottom: 0.5em; }
nav .brand { font-weight: 700; font-size: 1.1em; }
a { color: var(--line); }
.spark .series { opacity: 0.9; stroke-width: 1.5; }
table.pipeline td.cell { text-align: center; border-radius: 4px; font-size: 12px; padding: 0.2em 0.3em; }
td.ok { background: rgba(18,183,106,0.18); } td.warn { background: rgba(253,176,34,0.30); }
td.bad { background: rgba(217,45,32,0.28); } td.none { color: var(--muted); }
pre.cmd { background: var(--bg); border: 1px solid var(--grid); padding: 0.6em; white-space: pre-wrap; overflow-wrap: anywhere; }
main section { overflow-x: auto; } svg.chart { max-width: 100%; height: auto; }
form.inline { display: inline-flex; gap: 0.5em; align-items: center; margin-right: 1em; }
input, button { font: inherit; padding: 0.2em 0.5em; }
.state-open { color: var(--change); } .state-acknowledged, .state-dismissed, .state-retracted { color: var(--muted); }
ul.alert-lines { display: none; list-style: none; padding: 0; margin: 0.5em 0; }
ul.alert-lines li { margin: 0.4em 0; overflow-wrap: anywhere; }
@media (max-width: 640px) { ul.alert-lines { display: block; } div.alerts-table { display: none; } }
div.pipeline-scroll { overflow-x: auto; direction: rtl; } div.pipeline-scroll table { direction: ltr; }
table.pipeline tr > :first-child { position: sticky; left: 0; background: var(--card); }
"#;

/// A whole page around `body`.
fn page(project: &str, title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width";
                title { (title) " · tardy" }
                link rel="stylesheet" href="/static/tardy.css";
                script src="/static/tardy.js" defer {}
            }
            body {
                nav {
                    span.brand { "tardy" }
                    a href="/" { (project) }
                    a href="/machines" { "machines" }
                    a href="/api/v1/series" { "API" }
                }
                main { (body) }
            }
        }
    }
    .into_string()
}

/// The script served at `/static/tardy.js` (pages carry no inline script, so the
/// content security policy can forbid it): copy buttons.
pub fn script() -> &'static str {
    "document.addEventListener('click', function (e) {\n\
  var b = e.target.closest && e.target.closest('[data-copy]');\n\
  if (!b) return;\n\
  var t = document.getElementById(b.getAttribute('data-copy'));\n\
  if (t && navigator.clipboard) navigator.clipboard.writeText(t.textContent);\n\
});\n"
}

/// The stylesheet served at `/static/tardy.css`.
pub fn stylesheet() -> String {
    format!("{STYLE}\n{WEB_STYLE}")
}

/// One suite's durations over the recent builds.
pub struct PipelineRow {
    pub suite: String,
    pub unit: String,
    /// Per build: the duration and its ratio to the suite's baseline (its median
    /// before its latest change point).
    pub cells: Vec<Option<(f64, f64)>>,
}

/// Suites by build, oldest build first.
pub struct Pipeline {
    /// Build labels (short commit or date).
    pub builds: Vec<String>,
    pub rows: Vec<PipelineRow>,
}

/// A test whose latest build moved beyond its own spread.
#[derive(Debug, Clone, PartialEq)]
pub struct TestChange {
    pub suite: String,
    pub test: String,
    /// Its median over the builds before the latest, and its latest duration (seconds).
    pub before_s: f64,
    pub latest_s: f64,
    /// The latest build's commit.
    pub commit: Option<String>,
}

/// What the overview shows.
pub struct Overview<'a> {
    pub project: &'a str,
    /// This page's series, each with its recent values.
    pub series: &'a [(SeriesInfo, Vec<f64>)],
    /// Series in all, the page shown (from 1) and series a page.
    pub total_series: usize,
    pub page: usize,
    pub page_size: usize,
    pub alerts: &'a [Alert],
    /// Commit subjects by hash, as uploads told them.
    pub subjects: &'a std::collections::BTreeMap<String, String>,
    pub uploads: &'a [UploadInfo],
    pub pipeline: &'a Pipeline,
    /// The largest per-test changes of the latest builds, largest first.
    pub changes: &'a [TestChange],
}

fn series_link(name: &str) -> Markup {
    let q: String = form_urlencoded::byte_serialize(name.as_bytes()).collect();
    html! { a href={ "/series?name=" (q) } { (name) } }
}

fn test_link(series: &str, test: &str) -> Markup {
    let s: String = form_urlencoded::byte_serialize(series.as_bytes()).collect();
    let t: String = form_urlencoded::byte_serialize(test.as_bytes()).collect();
    html! { a href={ "/test?series=" (s) "&name=" (t) } { (test) } }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// The tests that moved most in their suite's latest build: where a suite's
/// total is noise, a test that doubled still shows.
fn test_changes(changes: &[TestChange]) -> Markup {
    let fmt = value_fmt("s");
    html! {
        h2 { "Largest test changes" }
        @if changes.is_empty() {
            section.muted { "No test's latest build moved beyond its own spread." }
        } @else {
            section.wide {
                p.muted {
                    "Each test's latest build against its median over the builds before it (up to 8): "
                    "changes of at least 1 ms and beyond three times the test's own spread, largest first."
                }
                table.changes {
                        tr { th { "test" } th.num { "before" } th.num { "latest" } th.num { "change" } th { "commit" } }
                        @for c in changes {
                            @let rel = if c.before_s > 0.0 { c.latest_s / c.before_s - 1.0 } else { 0.0 };
                            tr {
                                td { (series_link(&c.suite)) " :: " (test_link(&c.suite, &c.test)) }
                                td.num { (fmt(c.before_s)) }
                                td.num { (fmt(c.latest_s)) }
                                td.num { (PreEscaped(signed(rel))) }
                                td { code { (short(c.commit.as_deref())) } }
                            }
                        }
                }
            }
        }
    }
}

pub fn overview(v: &Overview) -> String {
    let body = html! {
        h1 { (v.project) }
        p.muted {
            (v.total_series) " series · "
            (plural(v.alerts.len(), "open alert")) " · "
            (plural(v.uploads.len(), "recent upload"))
        }
        h2 { "Open alerts" }
        @if v.alerts.is_empty() {
            section.muted { "No open alerts." }
        } @else {
            // On a phone, one line per alert that wraps: what regressed, by how
            // much, since which commit; the table (which scrolls) on a wide screen.
            ul.alert-lines {
                @for a in v.alerts {
                    li {
                        a href={ "/alert/" (a.id) } { "#" (a.id) } " " (a.kind()) ": "
                        @if let Some(m) = a.members.first() {
                            @match &m.test {
                                Some(t) => { (m.series) " :: " (t) },
                                None => (m.series),
                            }
                            " " (PreEscaped(signed(m.change)))
                            @if a.members.len() > 1 { " (and " (a.members.len() - 1) " more)" }
                        }
                        " since " code { (short(a.to_commit.as_deref())) }
                        @if let Some(s) = a.to_commit.as_ref().and_then(|c| v.subjects.get(c)) {
                            " " span.muted { (s) }
                        }
                    }
                }
            }
            div.alerts-table { (PreEscaped(alerts_table(v.alerts, Some("/alert/"), v.subjects))) }
        }
        @if !v.pipeline.rows.is_empty() {
            (test_changes(v.changes))
            h2 { "Pipeline" }
            section.wide {
                p.muted { "Each build's suite time against the suite's baseline before its latest change point: green within 3%, amber within 10%, red beyond." }
                // Scrolled to its right end from the start (a right-to-left box
                // around a left-to-right table): the newest builds show first.
                div.pipeline-scroll {
                    table.pipeline {
                        tr {
                            th { "suite" }
                            @for b in &v.pipeline.builds { th { code { (b) } } }
                        }
                        @for r in &v.pipeline.rows {
                            tr {
                                td { (series_link(&r.suite)) }
                                @for c in &r.cells {
                                    @match c {
                                        None => td.cell.none { "·" },
                                        Some((value, ratio)) => {
                                            @let class = if *ratio > 1.10 { "bad" } else if *ratio > 1.03 { "warn" } else { "ok" };
                                            td class={ "cell " (class) }
                                                title=(format!("{:+.1}% vs the baseline before the latest change", (ratio - 1.0) * 100.0)) {
                                                (value_fmt(&r.unit)(*value))
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Series" }
        @let pages = v.total_series.div_ceil(v.page_size.max(1)).max(1);
        @if pages > 1 {
            p.muted.pager {
                "The most recently measured first: "
                (v.series.len()) " of " (v.total_series) ", page " (v.page) " of " (pages) ". "
                @if v.page > 1 { a href={ "/?page=" (v.page - 1) } { "← newer" } " " }
                @if v.page < pages { a href={ "/?page=" (v.page + 1) } { "older →" } }
            }
        }
        section {
            table {
                tr {
                    th { "series" } th { "kind" } th.num { "points" } th { "recent" }
                    th.num { "last" } th { "last commit" } th.num { "open alerts" }
                }
                @for (s, recent) in v.series {
                    tr {
                        td { (series_link(&s.name)) }
                        td { (s.kind.as_str()) }
                        td.num { (s.points) }
                        td { (PreEscaped(sparkline(recent))) }
                        td.num { @if let Some(x) = s.last_value { (value_fmt(&s.unit)(x)) } }
                        td { code { (short(s.last_commit.as_deref())) } }
                        td.num { (s.open_alerts) }
                    }
                }
                @if v.series.is_empty() {
                    tr { td colspan="7" class="muted" { "Nothing uploaded yet: see " code { "tardy push" } "." } }
                }
            }
        }
        h2 { "Recent uploads" }
        section {
            table {
                tr {
                    th { "received" } th { "kind" } th { "commit" } th { "branch" }
                    th { "series" } th.num { "points" }
                }
                @for u in v.uploads {
                    tr {
                        td { (date(u.received_at)) }
                        td { (u.kind) }
                        td { code { (short(u.commit.as_deref())) } }
                        td { (u.branch.as_deref().unwrap_or("")) }
                        td {
                            @for (i, n) in u.series.iter().take(4).enumerate() {
                                @if i > 0 { ", " }
                                (series_link(n))
                            }
                            @if u.series.len() > 4 { " and " (u.series.len() - 4) " more" }
                        }
                        td.num { (u.points) }
                    }
                }
            }
        }
    };
    page(v.project, v.project, body)
}

/// Tests a series page lists at once.
pub const TESTS_PER_PAGE: usize = 1000;

/// One page of a suite's tests, by name.
pub struct TestsShown {
    pub names: Vec<String>,
    /// Tests the suite has in all, and which page this is (from 1).
    pub total: usize,
    pub page: usize,
}

/// The series page: chart with change points and machine changes, the
/// segments, annotations, the suite's tests, and the raw points.
pub fn series_page(
    project: &str,
    view: &SeriesView,
    alongside: &[SeriesView],
    annotations: &[Annotation],
    tests: &TestsShown,
) -> String {
    let link = |page: usize| {
        format!(
            "/series?name={}&tests={page}#tests",
            form_urlencoded::byte_serialize(view.info.name.as_bytes()).collect::<String>()
        )
    };
    let first = (tests.page - 1) * TESTS_PER_PAGE;
    let fmt = value_fmt(&view.info.unit);
    let shown = view.points.len() as i64;
    let body = html! {
        h1 { (view.info.name) }
        @if view.info.points > shown {
            p.muted {
                "The newest " (shown) " of " (view.info.points) " points (and the change points among them); all of them: "
                a href={ "/api/v1/points?series=" (form_urlencoded::byte_serialize(view.info.name.as_bytes()).collect::<String>()) } { "/api/v1/points" }
                " or " code { "tardy history export" } "."
            }
        }
        (PreEscaped(series_section(view, false)))
        @if !alongside.is_empty() {
            h2 { "Measured alongside" }
            p.muted {
                "The same runs by another metric: a change in wall time that the instruction count does not share is in what counts cannot see (sleeps, I/O, waits, the cache)."
            }
            @for other in alongside {
                p { (series_link(&other.info.name)) }
                (PreEscaped(series_section(other, false)))
            }
        }
        @if !annotations.is_empty() {
            h2 { "Annotations" }
            section {
                table {
                    tr { th { "commits" } th { "note" } th { "added" } }
                    @for a in annotations {
                        tr {
                            td { code {
                                (short(Some(&a.from_commit)))
                                @if let Some(t) = &a.to_commit { ".." (short(Some(t))) }
                            } }
                            td { (a.text) }
                            td { (date(a.created_at)) }
                        }
                    }
                }
            }
        }
        @if tests.total > 0 {
            h2 #tests { "Tests" }
            section {
                details open[tests.page > 1] {
                    summary { (tests.total) " tests" }
                    @if tests.total > TESTS_PER_PAGE {
                        p.muted {
                            "Tests " (first + 1) "-" (first + tests.names.len()) " of " (tests.total) ", by name."
                            @if tests.page > 1 { " " a href=(link(tests.page - 1)) { "Previous" } }
                            @if first + tests.names.len() < tests.total { " " a href=(link(tests.page + 1)) { "Next" } }
                        }
                    }
                    ul { @for t in &tests.names { li { (test_link(&view.info.name, t)) } } }
                }
            }
        }
        h2 { "Runs" }
        section {
            table {
                tr {
                    th { "#" } th { "commit" } th { "branch" } th { "time" }
                    th.num { "value" } th.num { "samples" } th.num { "machine" }
                }
                @for (i, p) in view.points.iter().enumerate().rev().take(200) {
                    tr {
                        td { (i + 1) }
                        td { code { (short(p.commit.as_deref())) } }
                        td { (p.branch.as_deref().unwrap_or("")) }
                        td { (date(p.time())) }
                        td.num { (fmt(p.value)) }
                        td.num { (p.n) }
                        td.num { @if let Some(f) = p.fingerprint_id { a href={ "/machines#m" (f) } { (f) } } }
                    }
                }
            }
        }
    };
    page(project, &view.info.name, body)
}

/// A test of a suite over time.
pub fn test_page(project: &str, view: &SeriesView) -> String {
    let test = view.test.as_deref().unwrap_or("");
    let body = html! {
        h1 { (test) }
        p { "in suite " (series_link(&view.info.name)) }
        (PreEscaped(series_section(view, false)))
    };
    page(project, test, body)
}

/// What the alert page shows besides the alert itself.
#[derive(Default)]
pub struct AlertContext {
    /// The first affected series, to draw (their change points marked).
    pub charts: Vec<crate::history::view::SeriesView>,
    /// Per suite: the shape of the change over its tests.
    pub shapes: Vec<(String, Vec<crate::diagnose::shape::Shape>)>,
    /// Subjects of the alert's commits, by hash.
    pub subjects: std::collections::BTreeMap<String, String>,
}

/// The alert page: every affected series by commit range, the state with
/// buttons to change it, the charts and the shape of the change, and the
/// What the alert page offers to bisect with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BisectOffer {
    /// The command (ready to run) or a template (to fill in).
    pub command: Option<String>,
    pub ready: bool,
    /// Why there is only a template, or none.
    pub note: Option<String>,
    /// The next wider range, for when the ends do not reproduce.
    pub wider: Option<String>,
}

/// `tardy bisect` command to copy (or, without a stored command, a template
/// to fill in, not offered for copying).
/// Members an alert page lists (the largest changes).
pub const ALERT_PAGE_MEMBERS: usize = 500;

pub fn alert_page(
    project: &str,
    alert: &Alert,
    bisect: &BisectOffer,
    csrf: Option<&str>,
    context: &AlertContext,
) -> String {
    // The largest changes (the page stays small however many series one
    // commit moved; the API lists them all), then by series.
    let mut members: Vec<_> = alert.members.iter().collect();
    members.sort_by(|a, b| b.change.abs().total_cmp(&a.change.abs()));
    members.truncate(ALERT_PAGE_MEMBERS);
    members.sort_by(|a, b| {
        a.series
            .cmp(&b.series)
            .then(a.test.is_some().cmp(&b.test.is_some()))
            .then(b.change.abs().total_cmp(&a.change.abs()))
    });
    let body = html! {
        h1 { "Alert #" (alert.id) ": " (alert.kind()) }
        p {
            "State: " strong class={ "state-" (alert.state.as_str()) } { (alert.state.as_str()) }
            " · commits " code { (alert.from_commit.as_deref().unwrap_or("?")) ".." (alert.to_commit.as_deref().unwrap_or("?")) }
            " · " (date(alert.from_time)) " to " (date(alert.to_time))
            @if let Some(b) = &alert.branch { " · branch " (b) }
        }
        @for c in [&alert.from_commit, &alert.to_commit].into_iter().flatten() {
            @if let Some(s) = context.subjects.get(c) {
                p.subject { code { (short(Some(c))) } " " (s) }
            }
        }
        @if let Some(reason) = &alert.reason {
            section.env {
                "Retracted: " (reason) ". Detection no longer finds this change; it reopens if the change is found again."
            }
        }
        @if !alert.environment.is_empty() {
            section.env {
                "The machine changed at this boundary: " (alert.environment.join("; "))
                ". Not a code change; bisecting will not find a commit."
            }
        }
        // One form: the token box (or the session's CSRF token) once, a button per state.
        section {
            form.inline method="post" action={ "/alert/" (alert.id) } {
                @match csrf {
                    Some(c) => input type="hidden" name="csrf" value=(c);,
                    None => input type="password" name="token" placeholder="write token" autocomplete="off";,
                }
                @for (state, label) in [
                    (AlertState::Acknowledged, "Acknowledge"),
                    (AlertState::Dismissed, "Dismiss"),
                    (AlertState::Open, "Reopen"),
                ] {
                    @if state != alert.state {
                        button type="submit" name="state" value=(state.as_str()) { (label) }
                    }
                }
            }
        }
        @if alert.boundary.len() > 1 || alert.boundary.first().is_some_and(|b| b.probability < 0.99) {
            section {
                "Where the change is: "
                @for (i, b) in alert.boundary.iter().take(5).enumerate() {
                    @if i > 0 { "; " }
                    code { (b.from_commit.as_deref().unwrap_or("?")) ".." (b.to_commit.as_deref().unwrap_or("?")) }
                    " " (format!("{:.0}%", b.probability * 100.0))
                }
                @if alert.boundary.len() > 5 { "; ..." }
                span.muted { " (the range above spans them)" }
            }
        }
        h2 { "Bisect this" }
        section {
            @match (&bisect.command, bisect.ready) {
                // A stored command: ready to run.
                (Some(cmd), true) => {
                    pre.cmd id="bisect" { (cmd) }
                    button type="button" data-copy="bisect" { "Copy" }
                    " "
                    span.muted { "Run it in a clone of the repository." }
                }
                // No command stored: say why, and show the shape of the command to write.
                (Some(template), false) => {
                    @if let Some(note) = &bisect.note {
                        p.muted { (note.trim_end_matches('.')) ". Put your own command in this template:" }
                    }
                    pre.cmd { (template) }
                }
                (None, _) => @if let Some(note) = &bisect.note { p.muted { (note) } },
            }
            @if let Some(w) = &bisect.wider { p.muted { (w) } }
        }
        @if !context.charts.is_empty() || !context.shapes.is_empty() {
            h2 { "What changed" }
        }
        @for (suite, shapes) in &context.shapes {
            section {
                h3 { "Shape of the change in " (suite) }
                ol {
                    @for sh in shapes {
                        li {
                            strong { (format!("{:.0}%", sh.explained_share * 100.0)) }
                            " " (sh.summary)
                            br;
                            span.muted { "→ " (sh.advice) }
                        }
                    }
                }
                p.muted { "Each of the builds before this boundary and after it as one run of the suite, as " code { "tardy tests diff" } " reads two reports." }
            }
        }
        @for v in &context.charts {
            (PreEscaped(series_section(v, true)))
        }
        @if alert.environment.is_empty() {
            h2 { "Explain it" }
            section {
                p {
                    "See where the extra time goes: in a checkout of "
                    code { (alert.from_commit.as_deref().unwrap_or("the commit before")) }
                    " and one of "
                    code { (alert.to_commit.as_deref().unwrap_or("the commit after")) }
                    ", run the measured command under " code { "tardy explain --save a.json -- CMD" }
                    " (and " code { "--save b.json" } "), then:"
                }
                pre.cmd { "tardy explain a.json b.json" }
            }
        }
        h2 { "Affected series (" (alert.members.len()) ")" }
        @if alert.members.len() > members.len() {
            p.muted {
                "The " (members.len()) " largest changes; all " (alert.members.len()) ", 1,000 a page: "
                a href={ "/api/v1/alerts/" (alert.id) } { "/api/v1/alerts/" (alert.id) } "."
            }
        }
        section {
            table {
                tr {
                    th { "series" } th { "test" } th.num { "before" } th.num { "after" }
                    th.num { "change" } th.num { "q" }
                }
                @for (i, m) in members.iter().enumerate() {
                    @let fmt = value_fmt(&m.unit);
                    tr {
                        td { @if i == 0 || members[i - 1].series != m.series { (series_link(&m.series)) } }
                        td { @if let Some(t) = &m.test { (test_link(&m.series, t)) } }
                        td.num { (fmt(m.mean_before)) }
                        td.num { (fmt(m.mean_after)) }
                        td.num { (PreEscaped(signed(m.change))) }
                        td.num { (crate::render::units::q_value(m.qvalue)) }
                    }
                }
            }
        }
    };
    page(project, &format!("alert #{}", alert.id), body)
}

fn fp_cell(fp: Option<&Fingerprint>, f: impl Fn(&Fingerprint) -> Option<String>) -> String {
    fp.and_then(f).unwrap_or_default()
}

/// The machines, oldest first, with what changed from the one before.
pub fn machines_page(project: &str, machines: &[(MachineInfo, Vec<String>)]) -> String {
    let body = html! {
        h1 { "Machines" }
        p.muted { (plural(machines.len(), "fingerprint")) " (run-to-run fields like load left out)" }
        section {
            table {
                tr {
                    th { "#" } th { "host" } th { "CPU" } th.num { "CPUs" } th { "kernel" }
                    th { "governor" } th { "first seen" } th { "last seen" } th.num { "points" }
                    th { "changed from the one before" }
                }
                @for (m, changes) in machines {
                    @let fp = m.fingerprint.as_ref();
                    tr id={ "m" (m.id) } {
                        td { (m.id) }
                        td { (fp_cell(fp, |f| f.hostname.clone())) }
                        td { (fp_cell(fp, |f| f.cpu_model.clone())) }
                        td.num { (fp_cell(fp, |f| f.logical_cpus.map(|n| n.to_string()))) }
                        td { (fp_cell(fp, |f| f.kernel.clone())) }
                        td { (fp_cell(fp, |f| f.governor.clone())) }
                        td { (date(m.first_seen)) }
                        td { (date(m.last_seen)) }
                        td.num { (m.points) }
                        td.env { (changes.join("; ")) }
                    }
                }
            }
        }
    };
    page(project, "machines", body)
}

/// The form that sets the session cookie (servers started with --read-token).
pub fn login_page(project: &str, message: &str) -> String {
    let body = html! {
        h1 { "Sign in" }
        section {
            p { (message) }
            form method="post" action="/login" {
                input type="password" name="token" placeholder="token" autocomplete="off";
                " "
                button type="submit" { "Sign in" }
            }
        }
    };
    page(project, "sign in", body)
}

/// An error as a page.
pub fn error_page(project: &str, status: u16, message: &str) -> String {
    let body = html! {
        h1 { (status) }
        section { (message) }
        p { a href="/" { "Back to the overview" } }
    };
    page(project, &status.to_string(), body)
}

/// What `tardy serve` says once listening: the database, the tokens, who
/// may read.
pub fn listening_line(database: &str, tokens: usize, read_protected: bool) -> String {
    format!(
        "tardy serve: database {database}, {tokens} token{}{}, {}; Ctrl-C stops",
        if tokens == 1 { "" } else { "s" },
        if tokens == 0 {
            " (uploads are off: see `tardy token add`)"
        } else {
            ""
        },
        if read_protected {
            "reads need a token"
        } else {
            "reads are public"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_by_the_templates() {
        let html = error_page("<p>", 404, "no series '<script>alert(1)</script>' & more");
        assert!(
            html.contains("no series &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39; &amp; more")
                || html.contains("no series '&lt;script&gt;alert(1)&lt;/script&gt;' &amp; more"),
            "{html}"
        );
        assert!(!html.contains("<script>alert"));
        assert!(html.contains("<a href=\"/\">&lt;p&gt;</a>"), "{html}");
    }
}
