//! What a file is, from its first bytes: one routine for every reader, so that
//! `compare`, `tests`, `history import` and the server agree on what a file is,
//! and a file of the wrong kind is refused after reading a few kilobytes, not
//! after loading a gigabyte.

use super::{cnum, gobench, reports};

/// How many bytes decide (and how many a reader reads before refusing a file).
pub const HEAD: usize = 64 * 1024;

/// The kinds of input tardy tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing but whitespace, or nothing at all.
    Empty,
    /// gzip: decompress and sniff again.
    Gzip,
    /// A test report: JUnit/NUnit/TRX/xUnit XML, `go test -json`, mocha, jest,
    /// RSpec or Dart JSON.
    TestReport,
    /// Results JSON: tardy's, hyperfine's, pytest-benchmark's, criterion's, or
    /// another JSON document (the reader says which shape it expected).
    ResultsJson,
    /// A CSV table with a header line (Otava, `history import`).
    Csv,
    /// `go test -bench` output.
    GoBench,
    /// A benchmark harness's text output (libtest, divan, Benchmark.js,
    /// Catch2 XML).
    HarnessText,
    /// One number per line (ministat's input).
    Numbers,
    /// Text of none of these kinds.
    OtherText,
    /// Not text: NUL bytes or invalid UTF-8.
    Binary,
}

impl Kind {
    /// "a test report", "binary data", ...
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Empty => "empty",
            Kind::Gzip => "gzip-compressed data",
            Kind::TestReport => "a test report",
            Kind::ResultsJson => "JSON results",
            Kind::Csv => "a CSV table",
            Kind::GoBench => "Go benchmark output",
            Kind::HarnessText => "a benchmark harness's output",
            Kind::Numbers => "a file of numbers",
            Kind::OtherText => "text of no known kind",
            Kind::Binary => "binary data, not text",
        }
    }
}

/// The head without a UTF-8 byte-order mark.
pub fn strip_bom(head: &[u8]) -> &[u8] {
    head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head)
}

/// Whether the head is text: no NUL, valid UTF-8 (a character cut at the end of
/// the head is allowed).
fn is_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    }
}

/// The kind of a file from its first bytes (up to [`HEAD`]).
pub fn sniff(head: &[u8]) -> Kind {
    if head.starts_with(&[0x1f, 0x8b]) {
        return Kind::Gzip;
    }
    let head = &head[..head.len().min(HEAD)];
    if let Some((w, mark)) = super::wide::detect(head) {
        // UTF-16 or UTF-32: the kind of its text.
        return sniff_text(super::wide::decode(&head[mark..], w).as_bytes());
    }
    sniff_text(head)
}

fn sniff_text(head: &[u8]) -> Kind {
    let head = strip_bom(head);
    if !is_text(head) {
        return Kind::Binary;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    let t = text.trim_start();
    if t.is_empty() {
        return Kind::Empty;
    }
    if reports::is_report_head(t) {
        return Kind::TestReport;
    }
    if super::harness::detect_text(t).is_some() {
        return Kind::HarnessText;
    }
    if t.starts_with('{') || t.starts_with('[') {
        return Kind::ResultsJson;
    }
    if text.lines().any(gobench::is_benchmark_line) {
        return Kind::GoBench;
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let Some(first) = first else {
        return Kind::OtherText;
    };
    let is_number = |t: &str| {
        let t = t.trim().trim_matches('"');
        !t.is_empty() && cnum::strtod(t).1 == t.len()
    };
    if first
        .split_whitespace()
        .next()
        .is_some_and(|tok| is_number(tok) && !tok.contains(','))
    {
        return Kind::Numbers;
    }
    if first.contains(',') && first.split(',').any(|f| !is_number(f)) {
        return Kind::Csv;
    }
    Kind::OtherText
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_from_its_first_bytes() {
        let cases: &[(&[u8], Kind)] = &[
            (b"", Kind::Empty),
            (b"  \n", Kind::Empty),
            (b"\x1f\x8b\x08\x00", Kind::Gzip),
            (b"<?xml version=\"1.0\"?><testsuites/>", Kind::TestReport),
            (b"\xEF\xBB\xBF<TestRun/>", Kind::TestReport),
            (
                b"{\"Time\":\"2024-01-01T00:00:00Z\",\"Action\":\"start\",\"Package\":\"p\"}\n{\"Action\":\"run\"}",
                Kind::TestReport,
            ),
            (b"\xEF\xBB\xBF{\"results\": []}", Kind::ResultsJson),
            (b"{\"schema\": \"tardy.results\"}", Kind::ResultsJson),
            (b"[1, 2]", Kind::ResultsJson),
            (
                b"goos: linux\nBenchmarkX-8  100  12 ns/op\n",
                Kind::GoBench,
            ),
            (b"# times\n1.5\n2.5\n", Kind::Numbers),
            (b"time,commit,metric\n2024-01-01,abc,1.0\n", Kind::Csv),
            (b"time,metric\n", Kind::Csv),
            (b"hello world\n", Kind::OtherText),
            (
                b"test b::sum ... bench:       1,019.11 ns/iter (+/- 22.31)\n",
                Kind::HarnessText,
            ),
            (b"\x00\x01\x02junk", Kind::Binary),
            // UTF-16 (with its mark) and UTF-32BE (without): their text's kind.
            (b"\xff\xfe<\x00x\x00", Kind::TestReport),
            (b"\x00\x00\x00<\x00\x00\x00x", Kind::TestReport),
            (b"\x00\x01\x02\x03junk", Kind::Binary),
            // An HTML page is not a test report here either (`tests show`
            // says so too): only a report's root element makes one.
            (b"<!DOCTYPE html>\n<html><body>x</body></html>", Kind::OtherText),
            (b"<?xml version=\"1.0\"?><!-- c --><ns:testsuites/>", Kind::TestReport),
        ];
        for (head, want) in cases {
            assert_eq!(sniff(head), *want, "{}", String::from_utf8_lossy(head));
        }
        // A character cut by the end of the head is still text.
        assert_eq!(
            sniff("1.5\n2.5 é".as_bytes().split_last().unwrap().1),
            Kind::Numbers
        );
    }
}
