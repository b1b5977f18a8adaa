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

/// The headline: "head is 5.12% slower than base", "no difference proven"...
pub fn headline(j: &Judgement) -> String {
    match &j.estimate {
        None => format!(
            "head and base could not be compared: {}",
            j.error.as_deref().unwrap_or("no estimate")
        ),
        Some(e) if j.metric.is_some() => {
            let m = j.metric.as_deref().unwrap_or("counts");
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
            Verdict::Slower => format!("head is {} than base", verdict::size(e)),
            Verdict::Faster => format!("head is {} than base", verdict::size(e)),
            Verdict::Same => format!(
                "head is the same as base within ±{}",
                percent(e.target_effect)
            ),
            Verdict::Inconclusive => "no difference proven between head and base".to_string(),
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
    match (&j.estimate, &j.metric) {
        (Some(e), Some(m)) => {
            out += &format!(
                "Verdict: {}\n",
                verdict::count_sentence(e, m, j.exact, style)
            )
        }
        (Some(e), None) => out += &format!("Verdict: {}\n", verdict::sentence(e, style)),
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
    match metric {
        Some(m) => {
            out += &format!(
                "| | commit | {m} | median time | mean ± σ | runs |\n|---|---|---:|---:|---:|---:|\n"
            )
        }
        None => out += "| | commit | median | mean ± σ | runs |\n|---|---|---:|---:|---:|\n",
    }
    for (side, b) in [&j.base, &j.head].iter().zip(&results.benchmarks) {
        let (median, mean) = match &b.summary {
            Some(s) => (
                time(s.median),
                format!("{} ± {}", time(s.mean), time(s.stddev)),
            ),
            None => ("–".into(), "–".into()),
        };
        let runs = b.runs.iter().filter(|r| !r.warmup).count();
        let count = metric.map_or(String::new(), |m| {
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
        Some(e) if j.metric.is_some() => {
            let m = j.metric.as_deref().unwrap_or("counts");
            out += &format!(
                "**Change:** {}\n\n",
                escape(&verdict::count_sentence(e, m, j.exact, Style::default()))
            );
        }
        Some(e) => {
            out += &format!(
                "**Change:** {} ({}, {})\n\n",
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

/// `tardy explain`'s table for the comment, folded.
pub fn explained_markdown(text: &str) -> String {
    format!(
        "<details><summary>Where the time went (tardy explain)</summary>\n\n```text\n{}```\n</details>\n",
        text.replace("```", "'''")
    )
}
