//! The results of a `tardy run` as a table, as hyperfine exports them: Markdown,
//! AsciiDoc and Emacs org-mode, with the ratio's confidence interval as the relative
//! column. One set of cells, three syntaxes.

use super::units::TimeUnit;
use crate::model::Results;

/// How times are shown and rows ordered (`-u/--time-unit`, `--sort`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// Every time in this unit; `None`: the unit that suits the fastest mean.
    pub unit: Option<TimeUnit>,
    /// Rows by mean time, fastest first, instead of as given.
    pub by_mean: bool,
}

impl Layout {
    /// The order in which to show the benchmarks `r` holds.
    pub fn order(&self, r: &Results) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..r.benchmarks.len()).collect();
        if self.by_mean {
            let mean = |i: usize| {
                r.benchmarks[i]
                    .summary
                    .as_ref()
                    .map_or(f64::INFINITY, |s| s.mean)
            };
            idx.sort_by(|&a, &b| mean(a).total_cmp(&mean(b)));
        }
        idx
    }
}

/// Table syntaxes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Syntax {
    Markdown,
    AsciiDoc,
    OrgMode,
}

/// The header and the rows of the table (cells, without markup).
fn cells(r: &Results, layout: &Layout) -> (Vec<String>, Vec<Vec<String>>) {
    let fastest = r
        .benchmarks
        .iter()
        .filter_map(|b| b.summary.as_ref().map(|s| s.mean))
        .fold(f64::INFINITY, f64::min);
    let unit = layout
        .unit
        .unwrap_or_else(|| TimeUnit::for_value(if fastest.is_finite() { fastest } else { 1.0 }));
    let u = unit.suffix();
    let header = vec![
        "Command".to_string(),
        format!("Mean [{u}]"),
        format!("Median [{u}]"),
        format!("Min [{u}]"),
        format!("Max [{u}]"),
        "Runs".to_string(),
        "Relative".to_string(),
    ];
    let mut rows = Vec::new();
    for i in layout.order(r) {
        let b = &r.benchmarks[i];
        let Some(s) = &b.summary else {
            let dash = "–".to_string();
            rows.push(vec![
                b.name.clone(),
                dash.clone(),
                dash.clone(),
                dash.clone(),
                dash.clone(),
                "0".into(),
                dash,
            ]);
            continue;
        };
        let relative = if i == 0 {
            "1.00".to_string()
        } else {
            match r
                .comparisons
                .iter()
                .find(|c| c.candidate == i)
                .and_then(|c| c.estimate.as_ref())
            {
                Some(e) => match (e.ci_low, e.ci_high) {
                    (Some(lo), Some(hi)) => format!("{:.2} [{lo:.2}, {hi:.2}]", e.ratio),
                    _ => format!("{:.2}", e.ratio),
                },
                None => "–".to_string(),
            }
        };
        rows.push(vec![
            b.name.clone(),
            format!("{} ± {}", unit.number(s.mean), unit.number(s.stddev)),
            unit.number(s.median),
            unit.number(s.min),
            unit.number(s.max),
            s.n.to_string(),
            relative,
        ]);
    }
    (header, rows)
}

/// The table in `syntax`. The reference (the first command measured) is the one
/// with relative 1.00, wherever `layout` puts it.
pub fn results(r: &Results, layout: &Layout, syntax: Syntax) -> String {
    let (header, rows) = cells(r, layout);
    match syntax {
        Syntax::Markdown => {
            let mut out = format!(
                "| {} |\n|:---|{}\n",
                header.join(" | "),
                "---:|".repeat(header.len() - 1)
            );
            for row in rows {
                let cmd = format!("`{}`", row[0].replace('|', "\\|").replace('`', "'"));
                out.push_str(&format!("| {cmd} | {} |\n", row[1..].join(" | ")));
            }
            out
        }
        Syntax::AsciiDoc => {
            let esc = |c: &str| c.replace('|', "\\|");
            let mut out = format!(
                "[cols=\"<,{}\"]\n|===\n",
                vec![">"; header.len() - 1].join(",")
            );
            out.push_str(&format!(
                "| {}\n",
                header
                    .iter()
                    .map(|h| esc(h))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
            for row in rows {
                out.push('\n');
                out.push_str(&format!("| `{}`\n", esc(&row[0]).replace('`', "'")));
                for c in &row[1..] {
                    out.push_str(&format!("| {}\n", esc(c)));
                }
            }
            out.push_str("|===\n");
            out
        }
        Syntax::OrgMode => {
            // '|' cannot be escaped inside an org table cell; \vert is its entity.
            let esc = |c: &str| c.replace('|', "\\vert{}");
            let mut out = format!(
                "| {} |\n|{}|\n",
                header
                    .iter()
                    .map(|h| esc(h))
                    .collect::<Vec<_>>()
                    .join(" | "),
                vec!["--"; header.len()].join("+")
            );
            for row in rows {
                out.push_str(&format!(
                    "| ={}= | {} |\n",
                    esc(&row[0]),
                    row[1..]
                        .iter()
                        .map(|c| esc(c))
                        .collect::<Vec<_>>()
                        .join(" | ")
                ));
            }
            out
        }
    }
}
