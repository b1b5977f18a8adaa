//! Reading result files from tardy and its peers into named series of
//! values: tardy's results JSON, hyperfine `--export-json`, plain number
//! files as ministat reads them, Go benchmark output (benchstat's input),
//! pytest-benchmark JSON and criterion's `sample.json`. The format is
//! detected from the content unless given.
//!
//! Every error names the file and, where it has one, the line.

pub mod cnum;
pub mod error;
pub mod gobench;
pub mod json;
pub mod numbers;
pub mod reports;

use std::path::Path;

pub use error::IngestError;

use crate::probe::Fingerprint;

/// Formats tardy reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Auto,
    Tardy,
    Hyperfine,
    Numbers,
    Go,
    PytestBenchmark,
    Criterion,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "auto" => Format::Auto,
            "tardy" => Format::Tardy,
            "hyperfine" => Format::Hyperfine,
            "numbers" | "ministat" => Format::Numbers,
            "go" | "benchstat" => Format::Go,
            "pytest-benchmark" => Format::PytestBenchmark,
            "criterion" => Format::Criterion,
            other => {
                return Err(format!(
                    "unknown input format '{other}': use auto, tardy, hyperfine, numbers, go, pytest-benchmark or criterion"
                ));
            }
        })
    }
}

/// One named sequence of measurements.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Go: the configuration that sets this benchmark apart from others of its name
    /// (`pkg=example.com/a`), empty elsewhere. Part of the identity, as in benchstat.
    pub group: String,
    pub name: String,
    /// "s" for times in seconds; Go units as written ("sec/op", "B/op", "MB/s").
    pub unit: String,
    /// True for throughput-like units (MB/s, ops/s): a larger value is better.
    pub higher_is_better: bool,
    /// benchstat's `Unit U assume=exact`: the values have no noise, so any difference is
    /// a difference.
    pub exact: bool,
    pub values: Vec<f64>,
}

/// Everything read from one input.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The path as given ("<stdin>" for -).
    pub source: String,
    pub format: Format,
    pub series: Vec<Series>,
    /// Configuration lines (Go `goos: linux`) or other context.
    pub config: Vec<(String, String)>,
    /// The machine the results came from, when the file records it.
    pub machine: Option<Fingerprint>,
}

/// How to read plain number files.
#[derive(Debug, Clone)]
pub struct NumberOptions {
    /// 1-based column.
    pub column: usize,
    /// Token delimiters (strtok-style), default space and tab.
    pub delimiters: String,
}

impl Default for NumberOptions {
    fn default() -> Self {
        NumberOptions {
            column: 1,
            delimiters: " \t".to_string(),
        }
    }
}

/// Read `path` ("-" for standard input) in `format`.
pub fn read_path(
    path: &str,
    format: Format,
    numbers: &NumberOptions,
) -> Result<Dataset, IngestError> {
    let source = if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    };
    let p = Path::new(path);
    if path != "-" && p.is_dir() {
        return json::read_criterion_dir(p, &source);
    }
    let bytes = if path == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| IngestError::io(&source, e))?;
        buf
    } else {
        std::fs::read(p).map_err(|e| IngestError::io(&source, e))?
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        IngestError::at(
            &source,
            None,
            format!(
                "is not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    read_text(&text, &source, format, numbers)
}

/// Read already loaded text.
pub fn read_text(
    text: &str,
    source: &str,
    format: Format,
    numbers: &NumberOptions,
) -> Result<Dataset, IngestError> {
    let format = if format == Format::Auto {
        detect(text)
    } else {
        format
    };
    let mut ds = match format {
        Format::Tardy
        | Format::Hyperfine
        | Format::PytestBenchmark
        | Format::Criterion
        | Format::Auto => json::read(text, source, format)?,
        Format::Go => gobench::read(text, source)?,
        Format::Numbers => {
            let values = numbers::read_lenient(text, source, numbers)?;
            Dataset {
                source: source.to_string(),
                format,
                series: vec![Series {
                    name: source.to_string(),
                    values,
                    ..Series::default()
                }],
                config: Vec::new(),
                machine: None,
            }
        }
    };
    if ds.series.iter().all(|s| s.values.is_empty()) {
        return Err(IngestError::at(
            source,
            None,
            "holds no measurements".to_string(),
        ));
    }
    ds.source = source.to_string();
    Ok(ds)
}

/// Guess the format from the content.
pub fn detect(text: &str) -> Format {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Format::Auto; // json::read tells the JSON shapes apart
    }
    // A file whose first data line is a number is a number file; anything
    // else is scanned for Go benchmark lines.
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    if first.is_some_and(|l| {
        l.split_whitespace()
            .next()
            .is_some_and(|t| cnum::strtod(t).1 == t.len())
    }) {
        return Format::Numbers;
    }
    if text.lines().any(gobench::is_benchmark_line) {
        return Format::Go;
    }
    Format::Numbers
}
