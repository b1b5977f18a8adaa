//! Markdown: hyperfine's table, with the ratio's confidence interval as the
//! relative column.

use super::units::TimeUnit;
use crate::model::Results;

pub fn table(r: &Results) -> String {
    let fastest = r
        .benchmarks
        .iter()
        .filter_map(|b| b.summary.as_ref().map(|s| s.mean))
        .fold(f64::INFINITY, f64::min);
    let unit = TimeUnit::for_value(if fastest.is_finite() { fastest } else { 1.0 });
    let u = unit.suffix();
    let mut out = format!(
        "| Command | Mean [{u}] | Median [{u}] | Min [{u}] | Max [{u}] | Runs | Relative |\n|:---|---:|---:|---:|---:|---:|---:|\n"
    );
    for (i, b) in r.benchmarks.iter().enumerate() {
        let cmd = format!("`{}`", b.name.replace('|', "\\|").replace('`', "'"));
        let Some(s) = &b.summary else {
            out.push_str(&format!("| {cmd} | – | – | – | – | 0 | – |\n"));
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
        out.push_str(&format!(
            "| {cmd} | {} ± {} | {} | {} | {} | {} | {relative} |\n",
            unit.number(s.mean),
            unit.number(s.stddev),
            unit.number(s.median),
            unit.number(s.min),
            unit.number(s.max),
            s.n
        ));
    }
    out
}
