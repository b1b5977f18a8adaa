//! The pages of `tardy serve`, as HTML strings: the overview (series,
//! open alerts, recent uploads, the pipeline of suite durations per
//! build), a series, a test, an alert, the machines, the login and error
//! pages. They share the report's style and charts ([`super::report`]);
//! what they show was gathered by the server, nothing is computed here.

use std::fmt::Write;

use super::history::{date, short};
use super::report::{STYLE, alerts_table, series_section, signed, value_fmt};
use super::svg::{esc, sparkline};
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
.state-open { color: var(--change); } .state-acknowledged, .state-dismissed { color: var(--muted); }
"#;

/// A whole page around `body`.
pub fn page(project: &str, title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
<title>{} · tardy</title><link rel=\"stylesheet\" href=\"/static/tardy.css\"><script src=\"/static/tardy.js\" defer></script></head><body>\n\
<nav><span class=\"brand\">tardy</span><a href=\"/\">{}</a><a href=\"/machines\">machines</a>\
<a href=\"/api/v1/series\">API</a></nav>\n<main>\n{body}</main>\n</body></html>\n",
        esc(title),
        esc(project)
    )
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

/// What the overview shows.
pub struct Overview<'a> {
    pub project: &'a str,
    /// Each series with its recent values.
    pub series: &'a [(SeriesInfo, Vec<f64>)],
    pub alerts: &'a [Alert],
    pub uploads: &'a [UploadInfo],
    pub pipeline: &'a Pipeline,
}

fn series_link(name: &str) -> String {
    let q: String = form_urlencoded::byte_serialize(name.as_bytes()).collect();
    format!("<a href=\"/series?name={q}\">{}</a>", esc(name))
}

fn test_link(series: &str, test: &str) -> String {
    let s: String = form_urlencoded::byte_serialize(series.as_bytes()).collect();
    let t: String = form_urlencoded::byte_serialize(test.as_bytes()).collect();
    format!(
        "<a href=\"/test?series={s}&amp;name={t}\">{}</a>",
        esc(test)
    )
}

pub fn overview(v: &Overview) -> String {
    let mut out = format!(
        "<h1>{}</h1><p class=\"muted\">{} series · {} open alert{} · {} recent upload{}</p>\n",
        esc(v.project),
        v.series.len(),
        v.alerts.len(),
        if v.alerts.len() == 1 { "" } else { "s" },
        v.uploads.len(),
        if v.uploads.len() == 1 { "" } else { "s" },
    );
    out.push_str("<h2>Open alerts</h2>\n");
    if v.alerts.is_empty() {
        out.push_str("<section class=\"muted\">No open alerts.</section>\n");
    } else {
        out.push_str(&alerts_table(v.alerts, Some("/alert/")));
    }
    if !v.pipeline.rows.is_empty() {
        out.push_str("<h2>Pipeline</h2>\n<section class=\"wide\"><p class=\"muted\">Each build's suite time against the suite's baseline before its latest change point: green within 3%, amber within 10%, red beyond.</p><table class=\"pipeline\"><tr><th>suite</th>");
        for b in &v.pipeline.builds {
            let _ = write!(out, "<th><code>{}</code></th>", esc(b));
        }
        out.push_str("</tr>\n");
        for r in &v.pipeline.rows {
            let fmt = value_fmt(&r.unit);
            let _ = write!(out, "<tr><td>{}</td>", series_link(&r.suite));
            for c in &r.cells {
                match c {
                    None => out.push_str("<td class=\"cell none\">·</td>"),
                    Some((value, ratio)) => {
                        let class = if *ratio > 1.10 {
                            "bad"
                        } else if *ratio > 1.03 {
                            "warn"
                        } else {
                            "ok"
                        };
                        let _ = write!(
                            out,
                            "<td class=\"cell {class}\" title=\"{:+.1}% vs the baseline before the latest change\">{}</td>",
                            (ratio - 1.0) * 100.0,
                            esc(&fmt(*value))
                        );
                    }
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></section>\n");
    }
    out.push_str("<h2>Series</h2>\n<section><table><tr><th>series</th><th>kind</th><th class=\"num\">points</th><th>recent</th><th class=\"num\">last</th><th>last commit</th><th class=\"num\">open alerts</th></tr>\n");
    for (s, recent) in v.series {
        let fmt = value_fmt(&s.unit);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td class=\"num\">{}</td></tr>",
            series_link(&s.name),
            s.kind.as_str(),
            s.points,
            sparkline(recent),
            s.last_value.map_or(String::new(), |v| esc(&fmt(v))),
            esc(&short(s.last_commit.as_deref())),
            s.open_alerts
        );
    }
    if v.series.is_empty() {
        out.push_str("<tr><td colspan=\"7\" class=\"muted\">Nothing uploaded yet: see <code>tardy push</code>.</td></tr>\n");
    }
    out.push_str("</table></section>\n<h2>Recent uploads</h2>\n<section><table><tr><th>received</th><th>kind</th><th>commit</th><th>branch</th><th>series</th><th class=\"num\">points</th></tr>\n");
    for u in v.uploads {
        let names: Vec<String> = u.series.iter().take(4).map(|n| series_link(n)).collect();
        let more = u.series.len().saturating_sub(4);
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}{}</td><td class=\"num\">{}</td></tr>",
            esc(&date(u.received_at)),
            esc(&u.kind),
            esc(&short(u.commit.as_deref())),
            esc(u.branch.as_deref().unwrap_or("")),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            },
            u.points
        );
    }
    out.push_str("</table></section>\n");
    page(v.project, v.project, &out)
}

/// The series page: chart with change points and machine changes, the
/// segments, annotations, the suite's tests, and the raw points.
pub fn series_page(
    project: &str,
    view: &SeriesView,
    annotations: &[Annotation],
    tests: &[String],
) -> String {
    let fmt = value_fmt(&view.info.unit);
    let mut out = format!(
        "<h1>{}</h1>\n{}",
        esc(&view.info.name),
        series_section(view, false)
    );
    if !annotations.is_empty() {
        out.push_str("<h2>Annotations</h2><section><table><tr><th>commits</th><th>note</th><th>added</th></tr>\n");
        for a in annotations {
            let _ = writeln!(
                out,
                "<tr><td><code>{}{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&short(Some(&a.from_commit))),
                a.to_commit
                    .as_deref()
                    .map_or(String::new(), |t| format!("..{}", esc(&short(Some(t))))),
                esc(&a.text),
                esc(&date(a.created_at))
            );
        }
        out.push_str("</table></section>\n");
    }
    if !tests.is_empty() {
        let _ = write!(
            out,
            "<h2>Tests</h2><section><details><summary>{} tests</summary><ul>",
            tests.len()
        );
        for t in tests {
            let _ = write!(out, "<li>{}</li>", test_link(&view.info.name, t));
        }
        out.push_str("</ul></details></section>\n");
    }
    out.push_str("<h2>Runs</h2><section><table><tr><th>#</th><th>commit</th><th>branch</th><th>time</th><th class=\"num\">value</th><th class=\"num\">samples</th><th class=\"num\">machine</th></tr>\n");
    for (i, p) in view.points.iter().enumerate().rev().take(200) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            i + 1,
            esc(&short(p.commit.as_deref())),
            esc(p.branch.as_deref().unwrap_or("")),
            esc(&date(p.time())),
            esc(&fmt(p.value)),
            p.n,
            p.fingerprint_id.map_or(String::new(), |f| format!(
                "<a href=\"/machines#m{f}\">{f}</a>"
            ))
        );
    }
    out.push_str("</table></section>\n");
    page(project, &view.info.name, &out)
}

/// A test of a suite over time.
pub fn test_page(project: &str, view: &SeriesView) -> String {
    let test = view.test.as_deref().unwrap_or("");
    let out = format!(
        "<h1>{}</h1><p>in suite {}</p>\n{}",
        esc(test),
        series_link(&view.info.name),
        series_section(view, false)
    );
    page(project, test, &out)
}

/// What the alert page shows besides the alert itself.
#[derive(Default)]
pub struct AlertContext {
    /// The first affected series, to draw (their change points marked).
    pub charts: Vec<crate::history::view::SeriesView>,
    /// Per suite: the shape of the change over its tests.
    pub shapes: Vec<(String, Vec<crate::diagnose::shape::Shape>)>,
}

/// The alert page: every affected series by commit range, the state with
/// buttons to change it, the charts and the shape of the change, and the
/// `tardy bisect` command to copy (`bisect`: the command, and a note on it;
/// without a stored command, a template to fill in, not offered for copying).
pub fn alert_page(
    project: &str,
    alert: &Alert,
    bisect: &(Option<String>, Option<String>),
    csrf: Option<&str>,
    context: &AlertContext,
) -> String {
    let mut out = format!(
        "<h1>Alert #{}: {}</h1>\n<p>State: <strong class=\"state-{}\">{}</strong> · commits <code>{}..{}</code> · {} to {}{}</p>\n",
        alert.id,
        esc(alert.kind()),
        alert.state.as_str(),
        alert.state.as_str(),
        esc(alert.from_commit.as_deref().unwrap_or("?")),
        esc(alert.to_commit.as_deref().unwrap_or("?")),
        esc(&date(alert.from_time)),
        esc(&date(alert.to_time)),
        alert
            .branch
            .as_deref()
            .map_or(String::new(), |b| format!(" · branch {}", esc(b)))
    );
    if !alert.environment.is_empty() {
        let _ = writeln!(
            out,
            "<section class=\"env\">The machine changed at this boundary: {}. Not a code change; bisecting will not find a commit.</section>",
            esc(&alert.environment.join("; "))
        );
    }
    // One form: the token box (or the session's CSRF token) once, a button per state.
    let auth = match csrf {
        Some(c) => format!("<input type=\"hidden\" name=\"csrf\" value=\"{}\">", esc(c)),
        None => "<input type=\"password\" name=\"token\" placeholder=\"write token\" autocomplete=\"off\">".to_string(),
    };
    let _ = write!(
        out,
        "<section><form class=\"inline\" method=\"post\" action=\"/alert/{}\">{auth}",
        alert.id
    );
    for (state, label) in [
        (AlertState::Acknowledged, "Acknowledge"),
        (AlertState::Dismissed, "Dismiss"),
        (AlertState::Open, "Reopen"),
    ] {
        if state != alert.state {
            let _ = write!(
                out,
                "<button type=\"submit\" name=\"state\" value=\"{}\">{label}</button>",
                state.as_str()
            );
        }
    }
    out.push_str("</form>");
    out.push_str("</section>\n<h2>Bisect this</h2>\n");
    out.push_str("<section>");
    match (&bisect.0, &bisect.1) {
        // A stored command: ready to run.
        (Some(cmd), None) => {
            let _ = write!(
                out,
                "<pre class=\"cmd\" id=\"bisect\">{}</pre><button type=\"button\" data-copy=\"bisect\">Copy</button> <span class=\"muted\">Run it in a clone of the repository.</span>",
                esc(cmd)
            );
        }
        // No command stored: say why, and show the shape of the command to write.
        (Some(template), Some(note)) => {
            let _ = write!(
                out,
                "<p class=\"muted\">{}. Put your own command in this template:</p><pre class=\"cmd\">{}</pre>",
                esc(note.trim_end_matches('.')),
                esc(template)
            );
        }
        (None, Some(note)) => {
            let _ = write!(out, "<p class=\"muted\">{}</p>", esc(note));
        }
        (None, None) => {}
    }
    out.push_str("</section>\n");
    if !context.charts.is_empty() || !context.shapes.is_empty() {
        out.push_str("<h2>What changed</h2>\n");
    }
    for (suite, shapes) in &context.shapes {
        let _ = write!(
            out,
            "<section><h3>Shape of the change in {}</h3><ol>",
            esc(suite)
        );
        for sh in shapes {
            let _ = write!(
                out,
                "<li><strong>{:.0}%</strong> {}<br><span class=\"muted\">→ {}</span></li>",
                sh.explained_share * 100.0,
                esc(&sh.summary),
                esc(&sh.advice)
            );
        }
        out.push_str("</ol><p class=\"muted\">Each test's mean over the builds before this boundary against the builds after it, as <code>tardy tests diff</code> reads two reports.</p></section>\n");
    }
    for v in &context.charts {
        out.push_str(&crate::render::report::series_section(v, true));
    }
    if alert.environment.is_empty() {
        let _ = writeln!(
            out,
            "<h2>Explain it</h2>\n<section><p>See where the extra time goes: in a checkout of <code>{}</code> and one of <code>{}</code>, run the measured command under <code>tardy explain --save a.json -- CMD</code> (and <code>--save b.json</code>), then:</p><pre class=\"cmd\">tardy explain a.json b.json</pre></section>",
            esc(alert.from_commit.as_deref().unwrap_or("the commit before")),
            esc(alert.to_commit.as_deref().unwrap_or("the commit after"))
        );
    }
    let _ = writeln!(
        out,
        "<h2>Affected series ({})</h2>\n<section><table><tr><th>series</th><th>test</th><th class=\"num\">before</th><th class=\"num\">after</th><th class=\"num\">change</th><th class=\"num\">q</th></tr>",
        alert.members.len()
    );
    let mut members: Vec<_> = alert.members.iter().collect();
    members.sort_by(|a, b| {
        a.series
            .cmp(&b.series)
            .then(a.test.is_some().cmp(&b.test.is_some()))
            .then(b.change.abs().total_cmp(&a.change.abs()))
    });
    let mut last = None;
    for m in members {
        let fmt = value_fmt(&m.unit);
        let series = if last == Some(&m.series) {
            String::new()
        } else {
            series_link(&m.series)
        };
        last = Some(&m.series);
        let _ = writeln!(
            out,
            "<tr><td>{series}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            m.test
                .as_deref()
                .map_or(String::new(), |t| test_link(&m.series, t)),
            esc(&fmt(m.mean_before)),
            esc(&fmt(m.mean_after)),
            signed(m.change),
            crate::render::units::q_value(m.qvalue)
        );
    }
    out.push_str("</table></section>\n");
    page(project, &format!("alert #{}", alert.id), &out)
}

fn fp_cell(fp: Option<&Fingerprint>, f: impl Fn(&Fingerprint) -> Option<String>) -> String {
    esc(&fp.and_then(f).unwrap_or_default())
}

/// The machines, oldest first, with what changed from the one before.
pub fn machines_page(project: &str, machines: &[(MachineInfo, Vec<String>)]) -> String {
    let mut out = format!(
        "<h1>Machines</h1><p class=\"muted\">{} fingerprint{} (run-to-run fields like load left out)</p>\n<section><table><tr><th>#</th><th>host</th><th>CPU</th><th class=\"num\">CPUs</th><th>kernel</th><th>governor</th><th>first seen</th><th>last seen</th><th class=\"num\">points</th><th>changed from the one before</th></tr>\n",
        machines.len(),
        if machines.len() == 1 { "" } else { "s" }
    );
    for (m, changes) in machines {
        let fp = m.fingerprint.as_ref();
        let _ = writeln!(
            out,
            "<tr id=\"m{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"env\">{}</td></tr>",
            m.id,
            m.id,
            fp_cell(fp, |f| f.hostname.clone()),
            fp_cell(fp, |f| f.cpu_model.clone()),
            fp_cell(fp, |f| f.logical_cpus.map(|n| n.to_string())),
            fp_cell(fp, |f| f.kernel.clone()),
            fp_cell(fp, |f| f.governor.clone()),
            esc(&date(m.first_seen)),
            esc(&date(m.last_seen)),
            m.points,
            esc(&changes.join("; "))
        );
    }
    out.push_str("</table></section>\n");
    page(project, "machines", &out)
}

/// The form that sets the token cookie (servers started with --read-token).
pub fn login_page(project: &str, message: &str) -> String {
    let body = format!(
        "<h1>Sign in</h1><section><p>{}</p><form method=\"post\" action=\"/login\">\
<input type=\"password\" name=\"token\" placeholder=\"token\" autocomplete=\"off\"> <button type=\"submit\">Sign in</button></form></section>",
        esc(message)
    );
    page(project, "sign in", &body)
}

/// An error as a page.
pub fn error_page(project: &str, status: u16, message: &str) -> String {
    page(
        project,
        &format!("{status}"),
        &format!(
            "<h1>{status}</h1><section>{}</section><p><a href=\"/\">Back to the overview</a></p>",
            esc(message)
        ),
    )
}
