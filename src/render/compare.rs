//! `tardy compare` reports: text (a detailed view with a plot for one pair,
//! a benchstat-like table for many), Markdown, CSV and GitHub annotations.

use super::plot::{self, PlotSet};
use super::style::Style;
use super::units::{TimeUnit, display_width, p_value, pad_to, percent, truncate_to};
use super::verdict;
use crate::analyze::compare::{Report, Row};
use crate::stats::Verdict;

/// A value in its unit: times (unit "s", "sec/op" or a clock's "cpu-sec/op")
/// in s/ms/µs/ns.
pub fn value(v: f64, unit: &str) -> String {
    match unit {
        // Nothing at all is exact: "0 s", not "0.000 ns".
        "s" if v == 0.0 => "0 s".into(),
        "sec/op" if v == 0.0 => "0 s/op".into(),
        "s" => TimeUnit::for_value(v).format(v),
        "sec/op" => format!("{}/op", TimeUnit::for_value(v).format(v)),
        // Another clock's time per operation (Google Benchmark's
        // `cpu-sec/op`): a time, with the clock named.
        u if u.ends_with("-sec/op") => {
            let clock = u.trim_end_matches("-sec/op");
            if v == 0.0 {
                format!("0 s/op {clock}")
            } else {
                format!("{}/op {clock}", TimeUnit::for_value(v).format(v))
            }
        }
        "" => super::cfmt::g(v, 6),
        // Bytes with binary prefixes, as benchstat writes them (1.469Ki B/op).
        u if u == "B" || u.starts_with("B/") => format!("{} {u}", binary(v)),
        u => format!("{} {u}", si(v)),
    }
}

/// 1504 -> "1.50k": powers of 1000.
fn si(v: f64) -> String {
    scaled(v, 1e3, ["k", "M", "G"])
}

/// 1504 -> "1.469Ki": powers of 1024, as benchstat writes bytes.
fn binary(v: f64) -> String {
    scaled(v, 1024.0, ["Ki", "Mi", "Gi"])
}

/// `v` in the largest power of `base` it reaches, with about four
/// significant digits; zero is exact ("0", not "0.000").
fn scaled(v: f64, base: f64, prefixes: [&str; 3]) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let (x, p) = if a >= base.powi(3) {
        (v / base.powi(3), prefixes[2])
    } else if a >= base.powi(2) {
        (v / base.powi(2), prefixes[1])
    } else if a >= base {
        (v / base, prefixes[0])
    } else {
        (v, "")
    };
    let digits = if x.abs() >= 100.0 {
        1
    } else if x.abs() >= 10.0 {
        2
    } else {
        3
    };
    format!("{x:.digits$}{p}")
}

/// "± 1.2%": the half-width of the median's interval relative to it.
fn spread(row: &Row, side: usize) -> String {
    // A harness's summary without a spread: unknown, not zero.
    if row.estimate.test.starts_with("none (summaries") {
        return "± ?".to_string();
    }
    // Its mean's interval, from the harness's sd and n.
    let s = if side == 0 {
        &row.baseline_summary
    } else {
        &row.candidate_summary
    };
    if row.estimate.test.starts_with("welch-t (from each side")
        && let Some([lo, _]) = s.median_ci
        && s.median != 0.0
    {
        return format!("± {}", percent((1.0 - lo / s.median).abs()));
    }
    spread_of(if side == 0 {
        &row.baseline_summary
    } else {
        &row.candidate_summary
    })
}

fn spread_of(s: &crate::stats::Summary) -> String {
    match s.median_ci {
        // Every value the same (0 allocs/op eight times): no spread at all.
        _ if s.min == s.max => "± 0%".to_string(),
        Some([lo, hi]) if s.median != 0.0 => {
            format!(
                "± {}",
                percent(((hi / s.median - 1.0).max(1.0 - lo / s.median)).abs())
            )
        }
        // Too few values for an interval: benchstat's mark for it.
        _ => "± ∞".to_string(),
    }
}

fn verdict_word(row: &Row) -> &'static str {
    match (row.verdict, row.higher_is_better) {
        (Verdict::Slower, false) => "slower",
        (Verdict::Faster, false) => "faster",
        (Verdict::Slower, true) => "worse",
        (Verdict::Faster, true) => "better",
        (Verdict::Same, _) => "same",
        (Verdict::Inconclusive, _) => "~",
    }
}

/// One file of benchmarks: a line per benchmark (median, its interval's
/// half-width, n), grouped by `pkg`, as benchstat's one-file table.
fn summaries(r: &Report, style: Style) -> String {
    let mut out = String::new();
    let name_w = r
        .summaries
        .iter()
        .map(|s| display_width(&s.name))
        .max()
        .unwrap_or(4)
        .max(4);
    let mut group: Option<&str> = None;
    for s in &r.summaries {
        if group != Some(s.group.as_str()) {
            group = Some(&s.group);
            if !s.group.is_empty() {
                out.push_str(&format!("{}\n", style.bold(&s.group)));
            }
        }
        out.push_str(&format!(
            "  {}  {:>14} {:<8} n={}\n",
            pad_to(&s.name, name_w),
            value(s.summary.median, &s.unit),
            spread_of(&s.summary),
            s.summary.n
        ));
    }
    out.push_str(&style.dim(&format!(
        "One file of benchmarks ({}): each summarised (median ± the half-width of its {:.0}% interval), none compared with another; give a second file, or --vs FILES, to compare.\n",
        r.sides.join(", "),
        r.confidence * 100.0
    )));
    out
}

/// The text report.
pub fn text(r: &Report, style: Style, with_plot: bool, unicode: bool, width: usize) -> String {
    let mut out = String::new();
    for w in &r.warnings {
        out.push_str(&format!("{} {w}\n", style.yellow("Warning:")));
    }
    if !r.summaries.is_empty() {
        out.push_str(&summaries(r, style));
        return out;
    }
    if r.rows.len() == 1 {
        out.push_str(&detail(&r.rows[0], style, with_plot, unicode, width));
    } else {
        out.push_str(&table(r, style));
        out.push_str(&style.dim(
            "Δ (HL): the Hodges-Lehmann ratio (the median of all candidate/baseline ratios), not the ratio of the two medians shown; geomean rows use the medians, as benchstat does.\n",
        ));
    }
    out.push_str(&style.dim(&format!(
        "Confidence {:.0}%{}.\n",
        r.confidence * 100.0,
        family_line(r)
    )));
    out
}

/// How the family of comparisons was controlled, how large it is, what was
/// left out of it, and what its size asks of a row.
fn family_line(r: &Report) -> String {
    use crate::stats::compare::Correction;
    let exact = if r.exact_rows > 0 {
        format!(
            " ({} row{} that cannot vary left out: every run identical on each side, the difference exact)",
            r.exact_rows,
            if r.exact_rows == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    let how = match r.correction {
        Correction::None if r.exact_rows > 0 && r.family > 0 => {
            return format!("; each row's own p-value{exact}");
        }
        Correction::None => return String::new(),
        Correction::Holm => format!(
            "; p-values adjusted with Holm across {} comparisons (family-wise error {:.0}%){exact}",
            r.family,
            (1.0 - r.confidence) * 100.0
        ),
        Correction::BenjaminiHochberg => format!(
            "; p-values adjusted with Benjamini-Hochberg across {} comparisons (false discovery rate {:.0}%){exact}",
            r.family,
            (1.0 - r.confidence) * 100.0
        ),
    };
    let Some(c) = &r.family_cost else {
        return how;
    };
    let g = |v: f64| super::cfmt::g(v, 2);
    let reach = format!(
        "{}+{} runs reach p = {} at best",
        c.runs[0],
        c.runs[1],
        g(c.smallest_p)
    );
    let alone = if c.smallest_p >= c.alpha {
        format!("; {reach}: no row can pass even alone, more runs a side would")
    } else if r.correction == Correction::Holm && c.smallest_p >= c.first_bar {
        format!(
            "; each row needs p < {}, and {reach}: no row can pass; more runs a side, fewer rows, or --correction bh would let them",
            g(c.first_bar)
        )
    } else if r.correction == Correction::Holm {
        format!("; each row needs p < {} ({reach})", g(c.first_bar))
    } else if c.smallest_p >= c.first_bar {
        format!(
            "; the k-th smallest p passes at {} x k: one change alone cannot pass ({reach}), several together can",
            g(c.first_bar)
        )
    } else {
        format!(
            "; the k-th smallest p passes at {} x k ({reach})",
            g(c.first_bar)
        )
    };
    format!("{how}{alone}")
}

fn detail(row: &Row, style: Style, with_plot: bool, unicode: bool, width: usize) -> String {
    let mut out = String::new();
    let labels = [
        format!("x {}", row.baseline),
        format!("+ {}", row.candidate),
    ];
    let lw = labels.iter().map(|l| display_width(l)).max().unwrap_or(0);
    for (i, s) in [&row.baseline_summary, &row.candidate_summary]
        .iter()
        .enumerate()
    {
        let ci = s
            .median_ci
            .map_or("(no interval: too few values)".to_string(), |[lo, hi]| {
                format!("[{} … {}]", value(lo, &row.unit), value(hi, &row.unit))
            });
        out.push_str(&format!(
            "{}  n={:<4} median {} {ci}   mean {} ± {}\n",
            pad_to(&labels[i], lw),
            s.n,
            style.bold(&value(s.median, &row.unit)),
            value(s.mean, &row.unit),
            value(s.stddev, &row.unit),
        ));
    }
    if with_plot {
        out.push('\n');
        let sets = [
            PlotSet {
                label: labels[0].clone(),
                values: &row.values[0],
            },
            PlotSet {
                label: labels[1].clone(),
                values: &row.values[1],
            },
        ];
        let unit = row.unit.clone();
        out.push_str(&plot::distributions(
            &sets,
            width.saturating_sub(lw + 1).min(72),
            unicode,
            &|v| value(v, &unit),
        ));
    }
    out.push('\n');
    let mut subject = format!("{} vs {}:", row.candidate, row.baseline);
    if row.name != row.candidate {
        let what = if row.group.is_empty() {
            row.name.clone()
        } else {
            format!("{} ({})", row.name, row.group)
        };
        subject = format!("{what}: {subject}");
    }
    out.push_str(&format!(
        "{} {}\n",
        style.bold(&subject),
        verdict::sentence(&row.estimate, style)
    ));
    for n in &row.notes {
        out.push_str(&format!("  {} {n}\n", style.yellow("Note:")));
    }
    out
}

/// The p column's heading: which p-value it holds.
fn p_heading(r: &Report) -> &'static str {
    match r.correction {
        crate::stats::compare::Correction::None => "p",
        crate::stats::compare::Correction::Holm => "p (Holm)",
        crate::stats::compare::Correction::BenjaminiHochberg => "p (BH)",
    }
}

fn signed_percent(c: f64) -> String {
    if c >= 0.0 {
        format!("+{}", percent(c))
    } else {
        percent(c)
    }
}

fn table(r: &Report, style: Style) -> String {
    let name_w = r
        .rows
        .iter()
        .map(|x| display_width(&x.name))
        .chain(
            r.geomeans
                .iter()
                .map(|g| display_width(&g.group) + "geomean  ".len()),
        )
        .max()
        .unwrap_or(4)
        .clamp(7, 50);
    let mut out = String::new();
    let mut groups: Vec<(&str, &str)> = Vec::new();
    for x in &r.rows {
        if !groups.contains(&(x.candidate.as_str(), x.unit.as_str())) {
            groups.push((x.candidate.as_str(), x.unit.as_str()));
        }
    }
    for (cand, unit) in groups {
        let rows: Vec<&Row> = r
            .rows
            .iter()
            .filter(|x| x.candidate == cand && x.unit == unit)
            .collect();
        let base = &rows[0].baseline;
        let cells: Vec<[String; 5]> = rows
            .iter()
            .map(|x| {
                // A difference proven but inside the target reads `same`
                // beside its size: never hidden behind a `~`.
                let proven = x.p_adjusted < 1.0 - r.confidence
                    || (x.p_adjusted.is_nan() && x.center[0] != x.center[1]);
                // A harness summary without a spread: its ratio, in
                // parentheses (measured, not tested).
                let untested = x.estimate.test.starts_with("none (summaries");
                let change = if untested {
                    format!("({})", signed_percent(x.ratio - 1.0))
                } else if matches!(x.verdict, Verdict::Slower | Verdict::Faster) || proven {
                    signed_percent(x.ratio - 1.0)
                } else {
                    "~".to_string()
                };
                [
                    format!("{} {}", value(x.center[0], &x.unit), spread(x, 0)),
                    format!("{} {}", value(x.center[1], &x.unit), spread(x, 1)),
                    change,
                    format!(
                        "{} n={}+{}",
                        if x.p_adjusted.is_nan() {
                            "exact".to_string()
                        } else if untested {
                            "no test".to_string()
                        } else {
                            p_value(x.p_adjusted).trim_start_matches("p=").to_string()
                        },
                        x.n[0],
                        x.n[1]
                    ),
                    verdict_word(x).to_string(),
                ]
            })
            .collect();
        let headings = ["", "", "Δ (HL)", p_heading(r), ""];
        let w: Vec<usize> = (0..5)
            .map(|i| {
                cells
                    .iter()
                    .map(|c| display_width(&c[i]))
                    .chain([display_width(headings[i])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let (w0, w1) = (w[0].max(display_width(base)), w[1].max(display_width(cand)));
        out.push_str(&format!(
            "{:<name_w$}  {}  {}  {:>w2$} {:<w3$}\n",
            "",
            style.bold(&pad_to(base, w0)),
            style.bold(&pad_to(cand, w1)),
            headings[2],
            headings[3],
            w2 = w[2],
            w3 = w[3],
        ));
        let mut group: Option<&str> = None;
        for (x, c) in rows.iter().zip(&cells) {
            if group != Some(x.group.as_str()) && !x.group.is_empty() {
                out.push_str(&format!("{}\n", style.dim(&x.group)));
            }
            group = Some(&x.group);
            let change = match x.verdict {
                Verdict::Slower => style.red(&format!("{:>w$}", c[2], w = w[2])),
                Verdict::Faster => style.green(&format!("{:>w$}", c[2], w = w[2])),
                _ => format!("{:>w$}", c[2], w = w[2]),
            };
            out.push_str(&format!(
                "{}  {:<w0$}  {:<w1$}  {change} {:<w3$} {}\n",
                pad_to(&truncate_to(&x.name, name_w), name_w),
                c[0],
                c[1],
                c[3],
                c[4],
                w3 = w[3]
            ));
        }
        for g in r
            .geomeans
            .iter()
            .filter(|g| g.candidate == cand && g.unit == unit)
        {
            let unit = &rows[0].unit;
            let name = if g.group.is_empty() {
                "geomean".to_string()
            } else {
                format!("geomean {}", g.group)
            };
            out.push_str(&format!(
                "{}  {:<w0$}  {:<w1$}  {:>w2$}\n",
                pad_to(&truncate_to(&name, name_w), name_w),
                value(g.center[0], unit),
                value(g.center[1], unit),
                signed_percent(g.ratio - 1.0),
                w2 = w[2]
            ));
        }
        let notes: Vec<&String> = rows.iter().flat_map(|x| x.notes.iter()).collect();
        let mut seen = std::collections::BTreeSet::new();
        for n in notes {
            if seen.insert(n) {
                out.push_str(&format!("{} {n}\n", style.yellow("Note:")));
            }
        }
        out.push('\n');
    }
    out
}

/// A Markdown table of every row.
pub fn markdown(r: &Report) -> String {
    if !r.summaries.is_empty() {
        let mut out = String::from("| Benchmark | Median | ± | n |\n|:---|---:|:---|---:|\n");
        for s in &r.summaries {
            let name = if s.group.is_empty() {
                s.name.clone()
            } else {
                format!("{} ({})", s.name, s.group)
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                name.replace('|', "\\|"),
                value(s.summary.median, &s.unit),
                spread_of(&s.summary).trim_start_matches("± "),
                s.summary.n
            ));
        }
        return out;
    }
    let mut out = String::from(
        "| Benchmark | Baseline | Candidate | Δ (HL) | CI | p (adjusted) | Verdict |\n|:---|---:|---:|---:|:---|---:|:---|\n",
    );
    for x in &r.rows {
        let ci = match (x.ci_low, x.ci_high) {
            (Some(lo), Some(hi)) => {
                format!("{:+.2}% .. {:+.2}%", (lo - 1.0) * 100.0, (hi - 1.0) * 100.0)
            }
            _ => "–".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {:+.2}% | {ci} | {} | {} |\n",
            if x.group.is_empty() {
                x.name.replace('|', "\\|")
            } else {
                format!("{} ({})", x.name, x.group).replace('|', "\\|")
            },
            value(x.center[0], &x.unit),
            value(x.center[1], &x.unit),
            (x.ratio - 1.0) * 100.0,
            if x.p_adjusted.is_nan() {
                "exact".to_string()
            } else {
                p_value(x.p_adjusted).trim_start_matches("p=").to_string()
            },
            verdict_word(x)
        ));
    }
    for g in &r.geomeans {
        out.push_str(&format!(
            "| geomean ({}{}) | | | {:+.2}% | | | |\n",
            g.candidate,
            if g.group.is_empty() {
                String::new()
            } else {
                format!(", {}", g.group)
            },
            (g.ratio - 1.0) * 100.0
        ));
    }
    out
}

/// One CSV row per comparison (per benchmark for one file of them).
pub fn csv(r: &Report) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    if !r.summaries.is_empty() {
        let mut out = super::csv::Table::new(&[
            "group",
            "name",
            "unit",
            "n",
            "median",
            "median_ci_low",
            "median_ci_high",
            "mean",
            "stddev",
        ]);
        for s in &r.summaries {
            let m = &s.summary;
            out.row([
                s.group.clone(),
                s.name.clone(),
                s.unit.clone(),
                m.n.to_string(),
                m.median.to_string(),
                opt(m.median_ci.map(|c| c[0])),
                opt(m.median_ci.map(|c| c[1])),
                m.mean.to_string(),
                m.stddev.to_string(),
            ]);
        }
        return out.finish();
    }
    let mut out = super::csv::Table::new(&[
        "group",
        "name",
        "unit",
        "baseline",
        "candidate",
        "n_baseline",
        "n_candidate",
        "center_baseline",
        "center_candidate",
        "ratio",
        "ci_low",
        "ci_high",
        "p_value",
        "p_adjusted",
        "test",
        "verdict",
        "min_detectable_effect",
        "runs_needed",
    ]);
    for x in &r.rows {
        out.row([
            x.group.clone(),
            x.name.clone(),
            x.unit.clone(),
            x.baseline.clone(),
            x.candidate.clone(),
            x.n[0].to_string(),
            x.n[1].to_string(),
            x.center[0].to_string(),
            x.center[1].to_string(),
            x.ratio.to_string(),
            opt(x.ci_low),
            opt(x.ci_high),
            opt(Some(x.p_value).filter(|p| !p.is_nan())),
            opt(Some(x.p_adjusted).filter(|p| !p.is_nan())),
            x.test.clone(),
            verdict_word(x).replace('~', "inconclusive"),
            opt(x.min_detectable_effect),
            x.runs_needed.map_or(String::new(), |n| n.to_string()),
        ]);
    }
    out.finish()
}

/// GitHub workflow commands: an annotation per proven regression.
pub fn github_annotations(r: &Report, failing: &dyn Fn(&Row) -> bool) -> String {
    let mut out = String::new();
    for x in r
        .rows
        .iter()
        .filter(|x| x.verdict == Verdict::Slower || failing(x))
    {
        let level = if failing(x) { "error" } else { "warning" };
        out.push_str(&format!(
            "::{level} title=tardy: {} slower::{} vs {}: {} ({}, {})\n",
            x.name.replace([':', ',', '\n'], " "),
            x.candidate,
            x.baseline,
            verdict::size(&x.estimate),
            verdict::interval(&x.estimate),
            verdict::evidence(&x.estimate)
        ));
    }
    out
}

/// `--fail-if-slower`: the comparisons proven slower than `pct`.
pub fn gate_line(failed: &[&crate::analyze::compare::Row], pct: f64) -> String {
    let names: Vec<&str> = failed.iter().map(|r| r.name.as_str()).collect();
    format!(
        "tardy: {} proven slower by more than {}: {}",
        if failed.len() == 1 {
            "1 comparison is"
        } else {
            "comparisons are"
        },
        super::units::percent(pct),
        names.join(", ")
    )
}
