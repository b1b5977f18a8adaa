//! `tardy ci`'s verdict: one line for the log, and Markdown for a pull
//! request comment and the job summary. The comment carries a hidden marker
//! so that a workflow can find it and edit it in place.

use super::style::Style;
use super::units::{percent, time};
use super::verdict;
use crate::ci::Judgement;
use crate::model::Results;
use crate::stats::Verdict;

/// The hidden line a workflow looks for to edit its comment instead of adding one.
pub const MARKER: &str = "<!-- tardy-ci -->";

/// The count the verdict is on, when it is one (not a CPU time).
fn count_metric(j: &Judgement) -> Option<&str> {
    j.metric.as_deref().filter(|m| !is_cpu_time(m))
}

fn is_cpu_time(m: &str) -> bool {
    matches!(m, "cpu" | "user" | "sys")
}

/// " in CPU time" for a verdict on a CPU time (`--metric cpu|user|sys`).
fn time_words(j: &Judgement) -> &'static str {
    match j.metric.as_deref() {
        Some("cpu") => " in CPU time",
        Some("user") => " in user CPU time",
        Some("sys") => " in system CPU time",
        _ => "",
    }
}

/// The headline: "head is 5.12% slower than base", "no difference proven"...
pub fn headline(j: &Judgement) -> String {
    let t = time_words(j);
    match &j.estimate {
        None => format!(
            "head and base could not be compared: {}",
            j.error.as_deref().unwrap_or("no estimate")
        ),
        Some(e) if count_metric(j).is_some() => {
            let m = count_metric(j).unwrap_or("counts");
            match e.verdict {
                Verdict::Inconclusive => {
                    format!("no difference in {m} proven between head and base")
                }
                _ => format!(
                    "head executes {} than base{}",
                    verdict::count_size(e.ratio, m),
                    if j.exact { ", every run identical" } else { "" }
                ),
            }
        }
        Some(e) => match e.verdict {
            Verdict::Slower => format!("head is {} than base{t}", verdict::size(e)),
            Verdict::Faster => format!("head is {} than base{t}", verdict::size(e)),
            Verdict::Same => format!(
                "head is the same as base{t} within ±{}",
                percent(e.target_effect)
            ),
            Verdict::Inconclusive => format!("no difference{t} proven between head and base"),
        },
    }
}

/// The gate's outcome, when there is one.
fn gate(j: &Judgement) -> Option<String> {
    let g = j.fail_if_slower?;
    Some(if j.regression {
        format!(
            "FAILED: proven slower by more than {} (the whole interval lies above +{})",
            percent(g),
            percent(g)
        )
    } else {
        format!(
            "passed: not proven slower by more than {} (--fail-if-slower)",
            percent(g)
        )
    })
}

/// The verdict for a terminal or a CI log, after `tardy run`'s report.
pub fn text(j: &Judgement, style: Style) -> String {
    let mut out = format!(
        "\nbase: {}  ({})\nhead: {}\n",
        j.base.label(),
        j.base_from,
        j.head.label()
    );
    match (&j.estimate, count_metric(j)) {
        (Some(e), Some(m)) => {
            out += &format!(
                "Verdict: {}\n",
                verdict::count_sentence(e, m, j.exact, style)
            )
        }
        (Some(e), None) => {
            out += &format!(
                "Verdict{}: {}\n",
                if time_words(j).is_empty() {
                    String::new()
                } else {
                    format!(" ({})", time_words(j).trim_start_matches(" in "))
                },
                verdict::sentence(e, style)
            )
        }
        (None, _) => out += &format!("Verdict: {}\n", headline(j)),
    }
    if let Some(g) = gate(j) {
        out += &format!("Gate: {g}\n");
    }
    if let Some(d) = &j.tests {
        out += &format!(
            "\nTests (the last run's reports, head against base):\n{}",
            super::suite::diff_text(d, style, 5)
        );
    }
    if let Some(e) = &j.tests_error {
        out += &format!("Tests: not compared: {e}\n");
    }
    out
}

/// Markdown for the pull request comment and `$GITHUB_STEP_SUMMARY`.
pub fn markdown(j: &Judgement, results: &Results) -> String {
    let mut out = format!("{MARKER}\n### tardy: {}\n\n", headline(j));
    let metric = j.metric.as_deref();
    // A CPU time's medians come with its estimate (render computes nothing).
    let cpu_centres = match (&j.estimate, metric) {
        (Some(e), Some(m)) if is_cpu_time(m) => Some([e.center_baseline, e.center_candidate]),
        _ => None,
    };
    match metric {
        Some(m) => {
            let m = match m {
                "cpu" => "median CPU time",
                "user" => "median user CPU",
                "sys" => "median system CPU",
                m => m,
            };
            out += &format!(
                "| | commit | {m} | median time | mean ± σ | runs |\n|---|---|---:|---:|---:|---:|\n"
            )
        }
        None => out += "| | commit | median | mean ± σ | runs |\n|---|---|---:|---:|---:|\n",
    }
    for (k, (side, b)) in [&j.base, &j.head]
        .iter()
        .zip(&results.benchmarks)
        .enumerate()
    {
        let (median, mean) = match &b.summary {
            Some(s) => (
                time(s.median),
                format!("{} ± {}", time(s.mean), time(s.stddev)),
            ),
            None => ("–".into(), "–".into()),
        };
        let runs = b.runs.iter().filter(|r| !r.warmup).count();
        let count = metric.map_or(String::new(), |m| {
            if let Some(c) = cpu_centres {
                return format!(" {} |", time(c[k]));
            }
            let c = b.counts.iter().find(|c| c.metric == m);
            format!(
                " {} |",
                c.map_or("–".into(), |c| super::terminal::count(c.stats.median))
            )
        });
        out += &format!(
            "| **{}** | `{}` {} |{count} {median} | {mean} | {runs} |\n",
            side.role,
            crate::ci::short(&side.commit.commit),
            escape(&side.commit.subject)
        );
    }
    out += "\n";
    match &j.estimate {
        Some(e) if count_metric(j).is_some() => {
            let m = count_metric(j).unwrap_or("counts");
            out += &format!(
                "**Change:** {}\n\n",
                escape(&verdict::count_sentence(e, m, j.exact, Style::default()))
            );
        }
        Some(e) => {
            out += &format!(
                "**Change{}:** {} ({}, {})\n\n",
                if time_words(j).is_empty() {
                    String::new()
                } else {
                    format!(" ({})", time_words(j).trim_start_matches(" in "))
                },
                match e.verdict {
                    Verdict::Same => format!("same within ±{}", percent(e.target_effect)),
                    Verdict::Inconclusive => "no difference proven".into(),
                    _ => verdict::size(e),
                },
                verdict::interval(e),
                verdict::evidence(e)
            );
            if e.verdict == Verdict::Inconclusive {
                out += &format!("{}\n\n", escape(&verdict::sentence(e, Style::default())));
            }
        }
        None => out += &format!("{}\n\n", escape(&headline(j))),
    }
    if let Some(g) = gate(j) {
        out += &format!("**Gate:** {g}\n\n");
    }
    if let Some(d) = &j.tests {
        out += &format!(
            "<details><summary>Tests: the last run's reports, head against base</summary>\n\n{}\n</details>\n\n",
            super::suite::diff_markdown(d, 10)
        );
    }
    if let Some(e) = &j.tests_error {
        out += &format!("Tests: not compared: {}\n\n", escape(e));
    }
    out += &format!(
        "<sub>`{}` measured in the base's and the head's worktree, interleaved in shuffled rounds in one job \
         (base: {}); seed {}; `tardy ci`</sub>\n",
        escape(&j.command).replace('`', "'"),
        escape(&j.base_from),
        results.options.seed
    );
    out
}

/// Markdown table cells: no pipes or line breaks from a commit subject.
fn escape(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `tardy explain`'s part of the comment: one line naming the cause (the
/// most important proven one: counts that differ in every run first), a
/// short table of the categories that changed, and where the full text is
/// (the job log).
pub fn explained_markdown(x: &crate::ci::Explained) -> String {
    use crate::diagnose::explain::compare::Verdict;
    use crate::fmt::dur;
    let c = &x.comparison;
    let runs = x.base.runs.len().min(x.head.runs.len());
    let signed = |d: f64| format!("{}{}", if d >= 0.0 { "+" } else { "-" }, dur(d.abs()));
    let mut out = format!("**Why** (`tardy explain`, {runs} traced runs a side): ");
    match c.causes.iter().find(|k| k.verdict.proven()) {
        Some(k) => {
            let words: String = crate::diagnose::explain::CATEGORIES
                .iter()
                .position(|n| *n == k.kind)
                .map_or(k.kind.clone(), |i| {
                    crate::diagnose::explain::CATEGORY_WORDS
                        .get(i)
                        .copied()
                        .unwrap_or("other (not attributed)")
                        .to_string()
                });
            let calls = match (k.count_a, k.count_b) {
                (Some(a), Some(b)) if (a - b).abs() >= 0.5 => format!(
                    "head makes {b:.0} {} a run, base {a:.0}: ",
                    call_noun(&k.kind)
                ),
                _ => format!("{words} "),
            };
            let how = match (k.verdict, k.every_run) {
                (Verdict::Certain, _) => "in every run, certain",
                (_, true) => "in every run",
                _ => "beyond the runs' noise",
            };
            out += &escape(&format!(
                "{calls}{} a run ({how}){}",
                signed(k.delta_s),
                where_of(c, k).map(|w| format!(", {w}")).unwrap_or_default()
            ));
            if !c.significant {
                out += "; the wall time of these few traced runs is too noisy to add up";
            }
            out += ".\n\n";
        }
        None => {
            out += &format!("{}\n\n", escape(&c.diagnosis));
        }
    }
    let mut rows: Vec<_> = c
        .table
        .iter()
        .filter(|r| r.a_s != 0.0 || r.b_s != 0.0)
        .collect();
    rows.sort_by(|p, q| {
        q.verdict
            .proven()
            .cmp(&p.verdict.proven())
            .then(q.delta_s.abs().total_cmp(&p.delta_s.abs()))
    });
    out += "| category | base | head | Δ a run | beyond its noise? |\n|---|---:|---:|---:|---|\n";
    for r in rows.iter().take(5) {
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            r.category,
            dur(r.a_s),
            dur(r.b_s),
            signed(r.delta_s),
            match r.verdict {
                Verdict::Certain => "certain (calls differ in every run)",
                Verdict::Significant => "yes",
                Verdict::Noise => "no",
            }
        );
    }
    out += &format!(
        "| **wall** | {} | {} | {} | {} |\n\nThe full explanation (causes, functions, waits) is in the job's log.\n",
        dur(c.wall_a_s),
        dur(c.wall_b_s),
        signed(c.delta_s),
        if c.significant { "yes" } else { "no" }
    );
    out
}

/// The calls a cause is made of, as a plural noun.
fn call_noun(kind: &str) -> &'static str {
    match kind {
        "fsync" => "fsyncs",
        "timed-sleep" => "sleeps",
        "lock-wait" => "lock waits",
        "event-wait" => "waits on pipes, sockets or poll",
        "io-wait" => "waits for the disk",
        "child-wait" => "waits for children",
        "process-creation" | "more-processes" => "process starts",
        _ => "calls",
    }
}

/// Where a cause's time is: the function that waited (for waits) or the
/// functions the CPU is in (for CPU), as explain's profile names them.
fn where_of(
    c: &crate::diagnose::explain::Comparison,
    k: &crate::diagnose::explain::compare::Cause,
) -> Option<String> {
    if matches!(k.kind.as_str(), "cpu-user" | "cpu-system" | "spinning") {
        return c.functions_summary.clone();
    }
    let kinds: &[&str] = match k.kind.as_str() {
        "fsync" => &["fsync"],
        "timed-sleep" => &["sleep", "timeout"],
        "lock-wait" => &["futex-wait"],
        "event-wait" => &["poll", "pipe-read"],
        "io-wait" => &["block-io"],
        "child-wait" => &["wait-child"],
        _ => return None,
    };
    let w = c
        .waiting_functions
        .iter()
        .filter(|w| kinds.contains(&w.kind.as_str()))
        .max_by(|p, q| p.delta_s.abs().total_cmp(&q.delta_s.abs()))?;
    Some(format!(
        "in `{}`{}",
        w.info.function,
        w.through
            .as_ref()
            .map(|t| format!(" through `{t}`"))
            .unwrap_or_default()
    ))
}

/// What `tardy ci --explain` found (or why it could not), as text.
pub fn explained_text(x: Result<&crate::ci::Explained, &String>) -> String {
    match x {
        Ok(x) => format!(
            "Where the time went (tardy explain, {} traced runs each, interleaved; A = base, B = head):\n{}",
            x.base.runs.len().min(x.head.runs.len()),
            super::explain::comparison(&x.base, &x.head, &x.comparison, Style { color: false }, 5)
        ),
        Err(e) => format!("Where the time went: not explained: {e}\n"),
    }
}

/// The pull request's Markdown, with where the time went when explained.
pub fn markdown_with(
    j: &Judgement,
    results: &Results,
    explained: Option<Result<&crate::ci::Explained, &String>>,
) -> String {
    let mut md = markdown(j, results);
    match explained {
        Some(Ok(x)) => md.push_str(&explained_markdown(x)),
        Some(Err(e)) => md.push_str(&explained_text(Err(e))),
        None => {}
    }
    md
}

/// `tardy ci --json`: the judgement, with the explanation (or its error).
pub fn json(
    j: &Judgement,
    explained: Option<Result<&crate::ci::Explained, &String>>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(j).unwrap_or_default();
    if let (Some(obj), Some(x)) = (v.as_object_mut(), explained) {
        obj.insert(
            "explain".into(),
            match x {
                Ok(x) => super::explain::comparison_json(&x.base, &x.head, &x.comparison),
                Err(e) => serde_json::json!({ "error": e }),
            },
        );
    }
    v
}
