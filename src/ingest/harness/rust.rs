//! Rust's harnesses that print summaries: libtest's `#[bench]` (`test name
//! ... bench: 1,234.56 ns/iter (+/- 56.78)`, or `--format json`'s `{"type":
//! "bench", "median": ..., "deviation": ...}` lines) keeps the median of
//! its 50 samples and their range (max - min after winsorizing), not a
//! standard deviation; divan's table keeps the fastest, slowest, median
//! and mean of N samples. Neither allows a test from one file; several
//! runs' files make samples of the centres. iai-callgrind counts
//! (instructions, cache hits, estimated cycles) under Callgrind: exact
//! numbers, compared as exact.

use super::{Read, described};
use crate::ingest::Series;
use crate::ingest::error::IngestError;
use crate::stats::described::{Centre, Described};

/// libtest runs 50 samples a benchmark.
const LIBTEST_SAMPLES: u64 = 50;

/// `test NAME ... bench: 1,234 ns/iter (+/- 56)` -> (name, ns, range, MB/s).
fn libtest_line(line: &str) -> Option<(&str, f64, f64, Option<f64>)> {
    let rest = line.trim().strip_prefix("test ")?;
    let (name, rest) = rest.split_once(" ... bench:")?;
    let (ns, rest) = rest.trim().split_once(" ns/iter (+/- ")?;
    let (dev, rest) = rest.split_once(')')?;
    let num = |s: &str| s.trim().replace(',', "").parse::<f64>().ok();
    let mbs = rest
        .trim()
        .strip_prefix("= ")
        .and_then(|r| r.strip_suffix(" MB/s"))
        .and_then(num);
    Some((name.trim(), num(ns)?, num(dev)?, mbs))
}

/// `{ "type": "bench", "name": "...", "median": 247, "deviation": 136 }`.
fn libtest_json(line: &str) -> Option<(String, f64, f64, Option<f64>)> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    if v.get("type")?.as_str()? != "bench" {
        return None;
    }
    Some((
        v.get("name")?.as_str()?.to_string(),
        v.get("median")?.as_f64()?,
        v.get("deviation")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0),
        v.get("mib_per_second").and_then(serde_json::Value::as_f64),
    ))
}

pub fn is_libtest_line(line: &str) -> bool {
    libtest_line(line).is_some()
        || (line.trim_start().starts_with('{')
            && line.contains("\"bench\"")
            && libtest_json(line).is_some())
}

pub fn libtest(text: &str, _source: &str) -> Result<Read, IngestError> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((name, ns, _range, mbs)) = libtest_line(line)
            .map(|(n, a, b, c)| (n.to_string(), a, b, c))
            .or_else(|| libtest_json(line))
        else {
            continue;
        };
        out.push(described(
            &name,
            "sec/op",
            false,
            Described {
                centre: ns * 1e-9,
                kind: Centre::Median,
                sd: None,
                n: Some(LIBTEST_SAMPLES),
                kept: format!("libtest prints the median and range (+/-) of {LIBTEST_SAMPLES} samples, not a standard deviation"),
            },
        ));
        if let Some(m) = mbs {
            out.push(Series {
                name: name.clone(),
                unit: "B/s".into(),
                higher_is_better: true,
                values: vec![m * 1e6],
                ..Series::default()
            });
        }
    }
    Ok((out, Vec::new()))
}

/// divan's header: `name  fastest │ slowest │ median │ mean │ samples │ iters`.
pub fn is_divan_header(line: &str) -> bool {
    let cells: Vec<&str> = line.split('│').map(str::trim).collect();
    cells.len() >= 6
        && cells[0].ends_with("fastest")
        && cells[1] == "slowest"
        && cells[2] == "median"
        && cells[3] == "mean"
        && cells[4] == "samples"
}

/// `1.052 µs` in seconds.
fn duration(cell: &str) -> Option<f64> {
    let (x, unit) = cell.trim().split_once(' ')?;
    Some(x.parse::<f64>().ok()? * super::seconds(unit.trim())?)
}

/// divan's tree table. The first cell holds the tree, the name and the
/// fastest time (at the header's `fastest` column); a row whose cells are
/// empty is a group; rows without a name (counters) are skipped.
pub fn divan(text: &str, source: &str) -> Result<Read, IngestError> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate().peekable();
    while let Some((_, line)) = lines.next() {
        if !is_divan_header(line) {
            continue;
        }
        let first = line.split('│').next().unwrap_or("");
        let col = first.chars().count() - first.trim_start().len().min(first.chars().count());
        let fastest_at = first
            .find("fastest")
            .map(|b| first[..b].chars().count())
            .unwrap_or(col);
        let file = first.split_whitespace().next().unwrap_or("");
        let mut path: Vec<(usize, String)> = Vec::new();
        while let Some((no, row)) = lines.next_if(|(_, l)| l.contains('│')) {
            let cells: Vec<&str> = row.split('│').collect();
            if cells.len() < 6 {
                continue;
            }
            let head: String = cells[0].chars().take(fastest_at).collect();
            let tree_end = head
                .char_indices()
                .find(|(_, c)| !matches!(c, '│' | '├' | '╰' | '─' | ' '))
                .map(|(i, _)| i);
            let Some(start) = tree_end else {
                continue; // a counter's row
            };
            let depth = head[..start].chars().count();
            let name = head[start..].trim().to_string();
            path.retain(|(d, _)| *d < depth);
            path.push((depth, name));
            let fastest: String = cells[0].chars().skip(fastest_at).collect();
            if fastest.trim().is_empty() {
                continue; // a group
            }
            let full = std::iter::once(file)
                .chain(path.iter().map(|(_, n)| n.as_str()))
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("/");
            let median = duration(cells[2]);
            let samples = cells[4].trim().parse::<u64>().ok();
            let Some(median) = median else {
                return Err(IngestError::at(
                    source,
                    Some(no + 1),
                    format!(
                        "divan row '{full}' has no median time ('{}')",
                        cells[2].trim()
                    ),
                ));
            };
            out.push(described(
                &full,
                "sec/op",
                false,
                Described {
                    centre: median,
                    kind: Centre::Median,
                    sd: None,
                    n: samples,
                    kept: "divan prints the fastest, slowest, median and mean, not a standard deviation".into(),
                },
            ));
        }
    }
    Ok((out, Vec::new()))
}

/// An iai-callgrind metric line: `  Instructions:   1415|N/A   (*********)`
/// -> (metric, this run's count).
fn iai_line(line: &str) -> Option<(&str, f64)> {
    if !line.starts_with("  ") {
        return None;
    }
    let (metric, rest) = line.trim().split_once(':')?;
    let (new, _old) = rest.trim().split_once('|')?;
    let v = new.trim().parse::<f64>().ok()?;
    let ok = !metric.is_empty()
        && metric
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | '+' | '-' | '_'));
    ok.then_some((metric, v))
}

pub fn is_iai_line(line: &str) -> bool {
    iai_line(line).is_some_and(|(m, _)| m == "Instructions")
}

/// iai-callgrind's metric names as units: `Instructions` is tardy's
/// `instructions`, `Estimated Cycles` its `estimated-cycles`.
fn iai_unit(metric: &str) -> String {
    metric.trim().to_ascii_lowercase().replace(' ', "-")
}

/// iai-callgrind's output: a benchmark's id on a line of its own, then its
/// metrics, each `this run|the previous run (change)`; this run's counts are
/// read (the previous run is the other file of a comparison).
pub fn iai(text: &str, _source: &str) -> Result<Read, IngestError> {
    let mut out = Vec::new();
    let mut id: Option<String> = None;
    for line in text.lines() {
        if let Some((metric, v)) = iai_line(line) {
            if let Some(id) = &id {
                out.push(Series {
                    name: id.clone(),
                    unit: iai_unit(metric),
                    exact: true,
                    values: vec![v],
                    ..Series::default()
                });
            }
        } else if !line.starts_with(' ') && !line.trim().is_empty() {
            let t = line.trim();
            let noise = t.starts_with("running ")
                || t.starts_with("test ")
                || t.starts_with("Iai-Callgrind result")
                || t == "i";
            id = (!noise).then(|| t.to_string());
        }
    }
    Ok((out, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines_in_text_and_json() {
        let l = "test benches::bench_sum    ... bench:       1,019.11 ns/iter (+/- 22.31)";
        assert_eq!(
            libtest_line(l),
            Some(("benches::bench_sum", 1019.11, 22.31, None))
        );
        let l = "test b ... bench:         100 ns/iter (+/- 3) = 2000 MB/s";
        assert_eq!(libtest_line(l), Some(("b", 100.0, 3.0, Some(2000.0))));
        let j = r#"{ "type": "bench", "name": "b", "median": 247, "deviation": 136 }"#;
        assert!(is_libtest_line(j));
        assert!(!is_libtest_line("test b ... ok"));
    }

    #[test]
    fn iai_callgrind_counts_are_this_runs() {
        let t = "calc::calc::sum short:100\n  Instructions:                        5611|1415                 (+296.537%) [+3.96537x]\n  Estimated Cycles:                    5716|N/A                  (*********)\n";
        let (s, _) = iai(t, "t").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].name.as_str(), s[0].unit.as_str()),
            ("calc::calc::sum short:100", "instructions")
        );
        assert_eq!(s[0].values, [5611.0]);
        assert!(s[0].exact);
        assert_eq!(s[1].unit, "estimated-cycles");
    }

    #[test]
    fn a_divan_tree_is_named_by_its_path() {
        let t = "calc        fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ concat   238.9 ns      │ 293.7 ns      │ 247.6 ns      │ 248.5 ns      │ 100     │ 800
╰─ sum                    │               │               │               │         │
   ├─ 100   129.7 ns      │ 143.5 ns      │ 134.3 ns      │ 133.4 ns      │ 100     │ 1600
   ╰─ 1000  1.052 µs      │ 1.081 µs      │ 1.063 µs      │ 1.064 µs      │ 100     │ 200
";
        let (s, _) = divan(t, "t").unwrap();
        let names: Vec<&str> = s.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["calc/concat", "calc/sum/100", "calc/sum/1000"]);
        assert!((s[2].values[0] - 1.063e-6).abs() < 1e-15);
        assert_eq!(s[2].described.as_ref().unwrap().n, Some(100));
    }
}
