//! The Go benchmark format (`go test -bench` output; benchstat's input):
//! `BenchmarkName[-P]  <iterations>  <value> <unit> [<value> <unit>...]`,
//! with `key: value` configuration lines. Each line is one sample of each of
//! its units; lines of the same name and unit form a series. Units are
//! normalised as benchstat does: `ns/op` becomes `sec/op`.

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

/// The unit after normalisation, the divisor to it, and whether higher is better.
fn normalise(unit: &str) -> (String, f64, bool) {
    match unit {
        "ns/op" => ("sec/op".to_string(), 1e9, false),
        u if u.ends_with("/s") => (u.to_string(), 1.0, true),
        u => (u.to_string(), 1.0, false),
    }
}

pub fn read(text: &str, source: &str) -> Result<Dataset, IngestError> {
    let mut series: Vec<Series> = Vec::new();
    let mut config = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if is_benchmark_line(line) {
            let mut f = line.split_whitespace();
            let name = f
                .next()
                .unwrap_or_default()
                .trim_start_matches("Benchmark")
                .to_string();
            let _iters = f.next();
            let rest: Vec<&str> = f.collect();
            if rest.len() % 2 != 0 {
                return Err(IngestError::at(
                    source,
                    Some(i + 1),
                    "expected pairs of <value> <unit> after the iteration count".into(),
                ));
            }
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
                let (unit, scale, higher) = normalise(pair[1]);
                let key = (name.clone(), unit.clone());
                let at = *index.entry(key).or_insert_with(|| {
                    series.push(Series {
                        name: name.clone(),
                        unit,
                        higher_is_better: higher,
                        values: Vec::new(),
                    });
                    series.len() - 1
                });
                series[at].values.push(value / scale);
            }
        } else if let Some((k, v)) = line.split_once(": ") {
            if !k.is_empty()
                && !k.contains(char::is_whitespace)
                && k.chars().next().is_some_and(|c| c.is_lowercase())
            {
                config.push((k.to_string(), v.trim().to_string()));
            }
        }
    }
    if series.is_empty() {
        return Err(IngestError::at(
            source,
            None,
            "has no Go benchmark lines (BenchmarkName N value unit)".into(),
        ));
    }
    Ok(Dataset {
        source: source.to_string(),
        format: Format::Go,
        series,
        config,
        machine: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_benchstat_style_input() {
        let text = "goos: linux\ngoarch: amd64\npkg: x\nBenchmarkEncode/format=json-48   1000  1718 ns/op  1024 B/op  3 allocs/op\n\
BenchmarkEncode/format=json-48   1000  1720 ns/op  1024 B/op  3 allocs/op\nBenchmarkCopy-8 10 250.5 MB/s\nPASS\nok  x 1.2s\n";
        let ds = read(text, "old.txt").unwrap();
        assert_eq!(ds.config[0], ("goos".into(), "linux".into()));
        assert_eq!(ds.series.len(), 4);
        assert_eq!(ds.series[0].name, "Encode/format=json-48");
        assert_eq!(ds.series[0].unit, "sec/op");
        assert_eq!(ds.series[0].values, vec![1718e-9, 1720e-9]);
        assert!(ds.series[3].higher_is_better);
    }

    #[test]
    fn odd_fields_are_an_error_with_a_line() {
        let e = read("BenchmarkX 10 5 ns/op 7\n", "f").unwrap_err();
        assert_eq!(e.line, Some(1));
    }
}
