//! The Go benchmark format (`go test -bench` output; benchstat's input):
//! `BenchmarkName[-P]  <iterations>  <value> <unit> [<value> <unit>...]`,
//! with `key: value` configuration lines and `Unit U key=value` metadata
//! lines. Each line is one sample of each of its units; lines of the same
//! name, unit and configuration form a series. Units are normalised as
//! benchstat does (benchunit): `ns/op` becomes `sec/op`, `MB/s` `B/s`.
//!
//! The configuration is part of a benchmark's identity, as in benchstat:
//! `go test -bench ./...` prints a `pkg:` line per package, and two packages'
//! `BenchmarkEncode` are two benchmarks. A series' group names `pkg` and every
//! key that takes more than one value in the file; keys constant in the file
//! (`goos`, `cpu`, a `commit:` label) describe the whole file and are compared
//! between files by `tardy compare` instead.

use std::collections::HashMap;

use super::error::IngestError;
use super::{Dataset, Format, Series};

/// Whether `line` is a benchmark result line.
pub fn is_benchmark_line(line: &str) -> bool {
    let mut f = line.split_whitespace();
    match (f.next(), f.next(), f.next(), f.next()) {
        (Some(name), Some(iters), Some(value), Some(_unit)) => {
            name.starts_with("Benchmark")
                && iters.bytes().all(|b| b.is_ascii_digit())
                && value.parse::<f64>().is_ok()
        }
        _ => false,
    }
}

/// A configuration line's key: lower-case first, no spaces or upper case (benchfmt).
fn config_line(line: &str) -> Option<(&str, &str)> {
    let (k, v) = match line.split_once(':') {
        Some((k, v)) if v.is_empty() || v.starts_with([' ', '\t']) => (k, v),
        _ => return None,
    };
    (k.chars().next().is_some_and(char::is_lowercase)
        && !k.chars().any(|c| c.is_whitespace() || c.is_uppercase()))
    .then(|| (k, v.trim()))
}

/// The unit after normalisation, the divisor to it, and whether higher is better.
fn normalise(unit: &str) -> (String, f64, bool) {
    let (u, factor) = tidy(unit);
    let higher = u.ends_with("/s");
    (u, factor, higher)
}

/// benchstat's unit tidying (golang.org/x/perf/benchunit): in the
/// numerator, `ns` becomes `sec` (x 1e-9) and `MB` becomes `B` (x 1e6), so
/// `ns/op` is `sec/op`, `MB/s` is `B/s` and a custom `gc-ns/op` is
/// `gc-sec/op`. Tokens are separated by `*`, `/`, `-` and spaces; `/`
/// starts the denominator, `*` ends it.
fn tidy(unit: &str) -> (String, f64) {
    match unit {
        "ns/op" => return ("sec/op".into(), 1e-9),
        "MB/s" => return ("B/s".into(), 1e6),
        "B/op" | "allocs/op" => return (unit.into(), 1.0),
        _ => {}
    }
    if !(unit.contains("ns") || unit.contains("MB")) {
        return (unit.into(), 1.0);
    }
    let mut out = String::with_capacity(unit.len() + 2);
    let mut factor = 1.0;
    let mut denom = false;
    let mut tok = String::new();
    let flush = |tok: &mut String, out: &mut String, denom: bool, factor: &mut f64| {
        match tok.as_str() {
            "ns" if !denom => {
                out.push_str("sec");
                *factor /= 1e9;
            }
            "MB" if !denom => {
                out.push('B');
                *factor *= 1e6;
            }
            t => out.push_str(t),
        }
        tok.clear();
    };
    for c in unit.chars() {
        if c == '*' || c == '/' || c == '-' || c.is_whitespace() {
            flush(&mut tok, &mut out, denom, &mut factor);
            if c == '*' {
                denom = false;
            } else if c == '/' {
                denom = true;
            }
            out.push(c);
        } else {
            tok.push(c);
        }
    }
    flush(&mut tok, &mut out, denom, &mut factor);
    (out, factor)
}

/// A benchmark line: the configuration snapshot in force, its name and its
/// (value, unit) pairs, borrowed from the text (no allocation per line but
/// the pairs' list, inline up to four).
type BenchLine<'t> = (usize, &'t str, smallvec::SmallVec<[(f64, &'t str); 4]>);

/// `Unit U assume=exact better=higher`: what benchstat's unit metadata says of U.
#[derive(Default, Clone, Copy)]
struct UnitMeta {
    exact: Option<bool>,
    higher: Option<bool>,
}

/// The configuration keys that set benchmarks apart: `pkg`, and any key
/// that some snapshot lacks or gives another value, in order of appearance.
fn group_keys(snapshots: &[Vec<(String, String)>]) -> Vec<&str> {
    // A key varies when some snapshot lacks it or gives it another value:
    // each key's snapshots and values counted in one pass (a scan of every
    // snapshot for each was quadratic: bent's files change pkg hundreds of times).
    let mut seen: HashMap<&str, (usize, &str, bool), foldhash::fast::RandomState> =
        HashMap::default();
    for snap in snapshots {
        for (k, v) in snap {
            let e = seen.entry(k.as_str()).or_insert((0, v.as_str(), false));
            e.0 += 1;
            e.2 |= e.1 != v;
        }
    }
    let varies = |k: &str| {
        seen.get(k)
            .is_some_and(|&(n, _, differ)| differ || n < snapshots.len())
    };
    let mut keys: Vec<&str> = Vec::new();
    for snap in snapshots {
        for (k, _) in snap {
            if (k == "pkg" || varies(k)) && !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    keys
}

pub fn read(text: &str, source: &str) -> Result<Dataset, IngestError> {
    // One pass: each benchmark line with the configuration in force.
    let mut config: Vec<(String, String)> = Vec::new();
    let mut all_config = Vec::new();
    let mut snapshots: Vec<Vec<(String, String)>> = Vec::new();
    let mut lines: Vec<BenchLine> = Vec::new();
    let mut units: HashMap<String, UnitMeta> = HashMap::new();
    let mut changed = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if is_benchmark_line(line) {
            let mut f = line.split_whitespace();
            let name = f.next().unwrap_or_default().trim_start_matches("Benchmark");
            let _iters = f.next();
            let rest: smallvec::SmallVec<[&str; 8]> = f.collect();
            if rest.len() % 2 != 0 {
                return Err(IngestError::at(
                    source,
                    Some(i + 1),
                    "expected pairs of <value> <unit> after the iteration count".into(),
                ));
            }
            let mut pairs = smallvec::SmallVec::with_capacity(rest.len() / 2);
            for pair in rest.chunks(2) {
                let value: f64 = pair[0].parse().map_err(|_| {
                    IngestError::at(
                        source,
                        Some(i + 1),
                        format!(
                            "expected a number before unit '{}', found '{}'",
                            pair[1], pair[0]
                        ),
                    )
                })?;
                if !value.is_finite() {
                    return Err(IngestError::at(
                        source,
                        Some(i + 1),
                        format!("expected a finite number, found '{}'", pair[0]),
                    ));
                }
                // Times, sizes, counts and rates cannot be negative; a custom unit may.
                let counts = matches!(pair[1], "ns/op" | "sec/op" | "B/op" | "allocs/op")
                    || pair[1].ends_with("/s");
                if counts && value < 0.0 {
                    return Err(IngestError::at(
                        source,
                        Some(i + 1),
                        format!("a negative {} ('{}') cannot be measured", pair[1], pair[0]),
                    ));
                }
                pairs.push((value, pair[1]));
            }
            if changed {
                snapshots.push(config.clone());
                changed = false;
            }
            lines.push((snapshots.len() - 1, name, pairs));
        } else if let Some(rest) = line.strip_prefix("Unit ") {
            let mut f = rest.split_whitespace();
            let Some(unit) = f.next() else { continue };
            let meta = units.entry(unit.to_string()).or_default();
            for kv in f {
                match kv.split_once('=') {
                    Some(("assume", v)) => meta.exact = Some(v == "exact"),
                    Some(("better", v)) => meta.higher = Some(v == "higher"),
                    _ => {}
                }
            }
        } else if let Some((k, v)) = config_line(line) {
            all_config.push((k.to_string(), v.to_string()));
            match config.iter_mut().find(|(ck, _)| ck == k) {
                Some((_, cv)) if cv == v => {}
                Some((_, cv)) => {
                    *cv = v.to_string();
                    changed = true;
                }
                None => {
                    config.push((k.to_string(), v.to_string()));
                    changed = true;
                }
            }
        }
    }
    if lines.is_empty() {
        return Err(IngestError::at(
            source,
            None,
            "has no Go benchmark lines (BenchmarkName N value unit)".into(),
        ));
    }
    // Keys that set benchmarks apart: pkg, and any key with two values among the lines.
    let keys = group_keys(&snapshots);
    let groups: Vec<String> = snapshots
        .iter()
        .map(|snap| {
            keys.iter()
                .filter_map(|k| snap.iter().find(|(sk, _)| sk == k))
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut series: Vec<Series> = Vec::new();
    // Each (snapshot, name, unit as written) to its series and the unit's
    // scale: a hit, every value after a series' first, allocates nothing.
    let mut index: HashMap<(usize, &str, &str), (usize, f64), foldhash::fast::RandomState> =
        HashMap::default();
    // The same series by its group text, name and unit: a lookup, not a
    // scan of every series (quadratic in the number of benchmarks).
    let mut by_group: HashMap<(String, String, String), usize, foldhash::fast::RandomState> =
        HashMap::default();
    for (snap, name, pairs) in lines {
        for (value, raw_unit) in pairs {
            let (at, scale) = *index.entry((snap, name, raw_unit)).or_insert_with(|| {
                let (unit, scale, higher) = normalise(raw_unit);
                let meta = units
                    .get(raw_unit)
                    .or_else(|| units.get(&unit))
                    .copied()
                    .unwrap_or_default();
                let name = name.to_string();
                // The same group text may come from two snapshots (a key that did not
                // matter changed): those are one series.
                let group = &groups[snap];
                let at = *by_group
                    .entry((group.clone(), name.clone(), unit.clone()))
                    .or_insert_with(|| {
                        series.push(Series {
                            group: group.clone(),
                            name: name.clone(),
                            unit,
                            higher_is_better: meta.higher.unwrap_or(higher),
                            exact: meta.exact.unwrap_or(false),
                            values: Vec::new(),
                            command: None,
                            described: None,
                        });
                        series.len() - 1
                    });
                (at, scale)
            });
            series[at].values.push(value * scale);
        }
    }
    Ok(Dataset {
        source: source.to_string(),
        format: Format::Go,
        series,
        config: all_config,
        machine: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The keys found in one pass are those a scan of every snapshot for
        /// each key finds (the quadratic way it was done).
        #[test]
        fn group_keys_are_the_quadratic_scans(
            snaps in proptest::collection::vec(
                proptest::collection::btree_map("[a-d]|pkg", "[xy]", 0..4), 0..12),
        ) {
            let snapshots: Vec<Vec<(String, String)>> =
                snaps.into_iter().map(|m| m.into_iter().collect()).collect();
            let mut reference: Vec<&str> = Vec::new();
            for snap in &snapshots {
                for (k, v) in snap {
                    let varies = snapshots.iter().any(|o| {
                        o.iter().find(|(ok, _)| ok == k).is_none_or(|(_, ov)| ov != v)
                    });
                    if (k == "pkg" || varies) && !reference.contains(&k.as_str()) {
                        reference.push(k);
                    }
                }
            }
            proptest::prop_assert_eq!(group_keys(&snapshots), reference);
        }
    }

    #[test]
    fn units_are_tidied_as_benchstat_tidies_them() {
        assert_eq!(tidy("ns/op"), ("sec/op".into(), 1e-9));
        assert_eq!(tidy("MB/s"), ("B/s".into(), 1e6));
        assert_eq!(tidy("gc-ns/op"), ("gc-sec/op".into(), 1e-9));
        assert_eq!(tidy("ns/GC"), ("sec/GC".into(), 1e-9));
        assert_eq!(tidy("op/ns"), ("op/ns".into(), 1.0));
        assert_eq!(tidy("text-bytes"), ("text-bytes".into(), 1.0));
        assert_eq!(tidy("MB*ns/op"), ("B*sec/op".into(), 1e6 / 1e9));
    }

    #[test]
    fn reads_benchstat_style_input() {
        let text = "goos: linux\ngoarch: amd64\npkg: x\nBenchmarkEncode/format=json-48   1000  1718 ns/op  1024 B/op  3 allocs/op\n\
BenchmarkEncode/format=json-48   1000  1720 ns/op  1024 B/op  3 allocs/op\nBenchmarkCopy-8 10 250.5 MB/s\nPASS\nok  x 1.2s\n";
        let ds = read(text, "old.txt").unwrap();
        assert_eq!(ds.config[0], ("goos".into(), "linux".into()));
        assert_eq!(ds.series.len(), 4);
        assert_eq!(ds.series[0].name, "Encode/format=json-48");
        assert_eq!(ds.series[0].unit, "sec/op");
        // As benchstat scales: value x 1e-9.
        assert_eq!(ds.series[0].values, vec![1718.0 * 1e-9, 1720.0 * 1e-9]);
        assert!(ds.series[3].higher_is_better);
        assert!(ds.series.iter().all(|s| s.group == "pkg=x"));
    }

    #[test]
    fn packages_are_part_of_the_identity() {
        let text = "goos: linux\npkg: a\nBenchmarkX-8 10 100 ns/op\nBenchmarkX-8 10 101 ns/op\n\
pkg: b\nBenchmarkX-8 10 1000 ns/op\nBenchmarkX-8 10 1001 ns/op\n";
        let ds = read(text, "f").unwrap();
        assert_eq!(ds.series.len(), 2);
        assert_eq!(ds.series[0].group, "pkg=a");
        assert_eq!(ds.series[1].group, "pkg=b");
        assert_eq!(ds.series[1].values, vec![1000.0 * 1e-9, 1001.0 * 1e-9]);
        // A key that varies within the file joins the identity; constant ones do not.
        let text = "goos: linux\nnote: x\nBenchmarkY 1 5 ns/op\nnote: y\nBenchmarkY 1 6 ns/op\n";
        let ds = read(text, "f").unwrap();
        let groups: Vec<&str> = ds.series.iter().map(|s| s.group.as_str()).collect();
        assert_eq!(groups, vec!["note=x", "note=y"]);
    }

    #[test]
    fn unit_metadata_is_honoured() {
        let text = "Unit B/op assume=exact\nUnit score better=higher\nBenchmarkZ 1 5 ns/op 64 B/op 3 score\n";
        let ds = read(text, "f").unwrap();
        let by = |u: &str| ds.series.iter().find(|s| s.unit == u).unwrap();
        assert!(by("B/op").exact);
        assert!(!by("sec/op").exact);
        assert!(by("score").higher_is_better);
        assert!(!by("B/op").higher_is_better);
    }

    #[test]
    fn odd_fields_are_an_error_with_a_line() {
        let e = read("BenchmarkX 10 5 ns/op 7\n", "f").unwrap_err();
        assert_eq!(e.line, Some(1));
    }
}
