//! Reading result files from tardy and its peers into named series of
//! values: tardy's results JSON, hyperfine `--export-json`, plain number
//! files as ministat reads them, Go benchmark output (benchstat's input),
//! pytest-benchmark JSON and criterion's `sample.json`. The format is
//! detected from the content unless given.
//!
//! Every error names the file and, where it has one, the line.

pub mod budget;
pub mod cnum;
pub mod error;
pub mod gobench;
pub mod harness;
pub mod json;
pub mod limits;
pub mod numbers;
pub mod reports;
pub mod sniff;
pub mod wide;

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
    /// JMH's `-rf json` (each fork's iteration scores).
    Jmh,
    /// Google Benchmark's JSON (one entry per repetition).
    GoogleBenchmark,
    /// BenchmarkDotNet's full JSON exporter (every measurement).
    BenchmarkDotNet,
    /// Catch2's XML reporter (mean and sd of each benchmark's samples).
    Catch2,
    /// tinybench's task results, or vitest bench's `--outputJson`.
    Tinybench,
    /// Benchmark.js's cycle lines.
    BenchmarkJs,
    /// asv's results files.
    Asv,
    /// Ruby's benchmark-ips JSON.
    BenchmarkIps,
    /// Rust's libtest `#[bench]` output (text or `--format json`).
    Libtest,
    /// divan's table.
    Divan,
    /// iai-callgrind's counts (exact).
    IaiCallgrind,
    /// Julia's BenchmarkTools JSON.
    Julia,
    /// Bencher Metric Format JSON.
    Bencher,
}

/// Every format's name, as `--format` takes it.
pub const FORMAT_NAMES: &str = "auto, tardy, hyperfine, numbers, go, pytest-benchmark, criterion, jmh, google-benchmark, benchmarkdotnet, catch2, tinybench (also vitest bench), benchmarkjs, asv, benchmark-ips, libtest, divan, iai-callgrind, julia or bencher";

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Tardy => "tardy",
            Format::Hyperfine => "hyperfine",
            Format::Numbers => "numbers",
            Format::Go => "go",
            Format::PytestBenchmark => "pytest-benchmark",
            Format::Criterion => "criterion",
            Format::Jmh => "jmh",
            Format::GoogleBenchmark => "google-benchmark",
            Format::BenchmarkDotNet => "benchmarkdotnet",
            Format::Catch2 => "catch2",
            Format::Tinybench => "tinybench",
            Format::BenchmarkJs => "benchmarkjs",
            Format::Asv => "asv",
            Format::BenchmarkIps => "benchmark-ips",
            Format::Libtest => "libtest",
            Format::Divan => "divan",
            Format::IaiCallgrind => "iai-callgrind",
            Format::Julia => "julia",
            Format::Bencher => "bencher",
        }
    }

    /// A harness's benchmarks (not commands run side by side): comparing
    /// one file's entries with each other means nothing.
    pub fn is_benchmarks(self) -> bool {
        !matches!(
            self,
            Format::Auto | Format::Tardy | Format::Hyperfine | Format::Numbers
        )
    }
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
            "jmh" => Format::Jmh,
            "google-benchmark" | "gbench" => Format::GoogleBenchmark,
            "benchmarkdotnet" | "bdn" => Format::BenchmarkDotNet,
            "catch2" => Format::Catch2,
            "tinybench" | "vitest" => Format::Tinybench,
            "benchmarkjs" | "benchmark.js" => Format::BenchmarkJs,
            "asv" => Format::Asv,
            "benchmark-ips" | "ips" => Format::BenchmarkIps,
            "libtest" => Format::Libtest,
            "divan" => Format::Divan,
            "iai-callgrind" | "iai" => Format::IaiCallgrind,
            "julia" | "benchmarktools" => Format::Julia,
            "bencher" | "bmf" => Format::Bencher,
            other => {
                return Err(format!(
                    "unknown input format '{other}': use {FORMAT_NAMES}"
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
    /// The command that was measured, when the file records it (tardy and
    /// hyperfine JSON), with the `tardy bisect` options that measure it
    /// the same way (`--timeout S`); its environment is part of it
    /// (`env K=V CMD`).
    pub command: Option<(String, Vec<String>)>,
    /// Set when the harness kept only a summary of this benchmark (a mean
    /// and sd, a median and range): `values` then holds its centre alone,
    /// and `tardy compare` tests from the summary, never from invented
    /// samples.
    pub described: Option<crate::stats::described::Described>,
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
    let mut input: Box<dyn std::io::Read> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(p).map_err(|e| IngestError::io(&source, e))?)
    };
    // The kind from the first 64 KiB: a file of the wrong kind is refused before the
    // rest is read.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut input, sniff::HEAD as u64),
        &mut bytes,
    )
    .map_err(|e| IngestError::io(&source, e))?;
    refuse_wrong_kind(&bytes, &source, format, numbers)?;
    // tardy's and hyperfine's results, known from their first key, are read typed
    // straight from the file: memory is the values, not the text and a JSON tree.
    if path != "-"
        && matches!(format, Format::Auto | Format::Tardy | Format::Hyperfine)
        && let Some(kind) = json::head_format(&String::from_utf8_lossy(&bytes))
        && (format == Format::Auto || format == kind)
    {
        let head = sniff::strip_bom(&bytes);
        let file = std::fs::File::open(p).map_err(|e| IngestError::io(&source, e))?;
        let mut rest = file;
        std::io::Seek::seek(&mut rest, std::io::SeekFrom::Start(bytes.len() as u64))
            .map_err(|e| IngestError::io(&source, e))?;
        if let Some(ds) = json::read_typed(std::io::Read::chain(head, rest), &source, kind) {
            let ds = ds?;
            if ds.series.iter().all(|s| s.values.is_empty()) {
                return Err(IngestError::at(
                    &source,
                    None,
                    "holds no measurements".into(),
                ));
            }
            return Ok(ds);
        }
    }
    std::io::Read::read_to_end(&mut input, &mut bytes).map_err(|e| IngestError::io(&source, e))?;
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

/// Refuse a file whose first bytes (`head`) show it is not of a kind this reader reads.
fn refuse_wrong_kind(
    head: &[u8],
    source: &str,
    format: Format,
    numbers: &NumberOptions,
) -> Result<(), IngestError> {
    const EXPECTED: &str = "expected benchmark results (tardy, hyperfine, Go, pytest-benchmark, criterion, JMH, Google Benchmark, BenchmarkDotNet, Catch2, tinybench/vitest, Benchmark.js, asv, benchmark-ips, libtest, divan, BenchmarkTools or Bencher Metric Format) or a file of numbers";
    let why = match sniff::sniff(head) {
        sniff::Kind::Binary => format!(
            "is binary data, not text (a NUL or invalid UTF-8 byte in its first {} KiB): {EXPECTED}",
            sniff::HEAD / 1024
        ),
        sniff::Kind::Gzip => "is gzip-compressed: decompress it first (gunzip)".to_string(),
        sniff::Kind::TestReport if format == Format::Auto => {
            "is a test report, not benchmark results: read it with `tardy tests show` or compare two with `tardy tests diff`".to_string()
        }
        sniff::Kind::OtherText if format == Format::Auto && head.len() >= sniff::HEAD => {
            // Not JSON, no Go benchmark line, no number first: read as numbers, it
            // fails on its first line; say so from the head alone.
            let text = std::str::from_utf8(sniff::strip_bom(head)).unwrap_or("");
            let whole_lines = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
            return read_text(whole_lines, source, format, numbers).map(|_| ());
        }
        _ => return Ok(()),
    };
    Err(IngestError::at(source, None, why))
}

/// Read already loaded text.
pub fn read_text(
    text: &str,
    source: &str,
    format: Format,
    numbers: &NumberOptions,
) -> Result<Dataset, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
        | Format::Jmh
        | Format::GoogleBenchmark
        | Format::BenchmarkDotNet
        | Format::Tinybench
        | Format::Asv
        | Format::BenchmarkIps
        | Format::Julia
        | Format::Bencher
        | Format::Auto => json::read(text, source, format)?,
        Format::Catch2
        | Format::BenchmarkJs
        | Format::Libtest
        | Format::Divan
        | Format::IaiCallgrind => harness::read_text(text, source, format)?,
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
    if let Some(f) = harness::detect_text(text) {
        return f;
    }
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
