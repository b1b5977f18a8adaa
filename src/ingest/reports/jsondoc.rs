//! Test reports that are one JSON document: mocha's `json` reporter, jest's `--json`,
//! RSpec's `--format json` and CTRF (the Common Test Report Format, which reporters for
//! Jest, Playwright, Cypress, Vitest, pytest, Go and more write). Each is read into typed
//! structures that keep only what tardy uses (stack traces and captured output are skipped,
//! not stored); serde_json caps nesting at 128 levels, and the whole document at
//! [`DOCUMENT_LIMIT`]. mocha's and jest's, which reach a million tests, are read in two
//! passes and never held whole ([`super::mocha`], [`super::jest`]); the others are.
//!
//! Reruns are read where the tool marks them: mocha's `currentRetry` and jest's
//! `invocations` above one make a passing test flaky.

use std::io::BufRead;

use super::Report;
use super::bounded::Bounded;
use crate::ingest::error::IngestError;

/// The largest JSON report read (far above mocha's or jest's output for 100,000 tests).
pub const DOCUMENT_LIMIT: u64 = 1 << 30;

/// Which tool wrote the document, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Mocha,
    Jest,
    RSpec,
    Ctrf,
    /// Cucumber's JSON (an array of features: see [`super::cucumber`]).
    Cucumber,
    /// Playwright's JSON reporter (see [`super::playwright`]).
    Playwright,
}

/// Tell the kind from the head of a JSON document (the keys each tool writes first).
pub fn sniff(head: &str) -> Option<Kind> {
    let has = |k: &str| head.contains(&format!("\"{k}\""));
    if head.starts_with('[') {
        // Cucumber's array of features, each with its scenarios.
        return (has("elements") && (has("keyword") || has("steps"))).then_some(Kind::Cucumber);
    }
    if has("config") && has("suites") && (has("rootDir") || has("projects") || has("specs")) {
        // Before mocha's check: Playwright's tests have "stats" and "tests" too.
        return Some(Kind::Playwright);
    }
    if (has("reportFormat") && head.contains("\"CTRF\""))
        || (has("results") && has("tool") && has("summary"))
    {
        Some(Kind::Ctrf)
    } else if has("numTotalTests") || (has("testResults") && has("numFailedTests")) {
        Some(Kind::Jest)
    } else if has("stats") && (has("passes") || has("tests") || has("pending")) {
        Some(Kind::Mocha)
    } else if has("examples") && (has("version") || has("summary")) {
        Some(Kind::RSpec)
    } else {
        None
    }
}

/// Read the document `bytes` (of `kind`), already in memory, into `report`.
pub fn read_slice(
    bytes: &[u8],
    kind: Kind,
    name: &str,
    report: &mut Report,
) -> Result<(), IngestError> {
    let open = || -> Result<Box<dyn BufRead + '_>, IngestError> { Ok(Box::new(bytes)) };
    read(open()?, &open, kind, name, report, None)
}

/// Read the document `input` (of `kind`) into `report`. Mocha's and jest's
/// are read twice (`again` opens the input anew), their results handed to
/// `sink` as read when streaming; the others are read whole.
pub fn read<'a>(
    input: Box<dyn BufRead + 'a>,
    again: &dyn Fn() -> Result<Box<dyn BufRead + 'a>, IngestError>,
    kind: Kind,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn super::CaseSink + '_)>,
) -> Result<(), IngestError> {
    let json = |input: Box<dyn BufRead + 'a>| {
        let (input, _) = Bounded::new(crate::ingest::budget::Timed::new(input), DOCUMENT_LIMIT);
        // serde_json reads a byte at a time: from a buffer, not through the layers below.
        std::io::BufReader::with_capacity(1 << 16, input)
    };
    let input = json(input);
    let bad = |e: serde_json::Error| {
        let what = match kind {
            Kind::Mocha => "mocha's JSON reporter output",
            Kind::Jest => "jest --json output",
            Kind::RSpec => "RSpec --format json output",
            Kind::Ctrf => "a CTRF report (results.tool, results.summary, results.tests)",
            Kind::Cucumber => {
                "Cucumber's JSON report (an array of features with elements and steps)"
            }
            Kind::Playwright => "Playwright's JSON reporter output (config, suites, specs)",
        };
        IngestError::at(
            name,
            (e.line() > 0).then_some(e.line()),
            format!("expected {what}: {e}"),
        )
    };
    match kind {
        // Each first pass counts the results against the cap (a document
        // cut short past it is refused for its size, not its end); the
        // second counts them again from zero.
        Kind::Mocha => {
            let index = super::mocha::index(input).map_err(bad)?;
            crate::ingest::limits::begin_input();
            super::mocha::read(json(again()?), index, name, report, sink).map_err(bad)?
        }
        Kind::Jest => {
            let prefix = super::jest::shared_dir(input).map_err(bad)?;
            crate::ingest::limits::begin_input();
            super::jest::read(json(again()?), &prefix, report, sink).map_err(bad)?
        }
        Kind::RSpec => {
            let head = super::listed::rspec_head(input).map_err(bad)?;
            crate::ingest::limits::begin_input();
            super::listed::rspec(json(again()?), head, name, report, sink).map_err(bad)?
        }
        Kind::Ctrf => {
            let head = super::listed::ctrf_head(input).map_err(bad)?;
            crate::ingest::limits::begin_input();
            super::listed::ctrf(json(again()?), head, name, report, sink).map_err(bad)?
        }
        Kind::Cucumber => super::cucumber::read(input, name, report, sink).map_err(bad)?,
        Kind::Playwright => super::playwright::read(input, name, report, sink).map_err(bad)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::reports::jsonparts::CommonDir;

    #[test]
    fn common_directory_of_paths() {
        let common_dir = |paths: &[&str]| {
            let mut dir = CommonDir::default();
            paths.iter().for_each(|p| dir.add(p));
            dir.finish()
        };
        let p = ["/a/b/x.js", "/a/b/c/y.js", "/a/bc/z.js"];
        assert_eq!(common_dir(&p), "/a/");
        assert_eq!(common_dir(&["/a/b/x.js"]), "/a/b/");
        assert_eq!(common_dir(&["x.js", "/y.js"]), "");
        assert_eq!(common_dir(&[]), "");
    }

    #[test]
    fn sniffs_each_tool() {
        assert_eq!(
            sniff(r#"{"numFailedTestSuites":0,"numTotalTests":1"#),
            Some(Kind::Jest)
        );
        assert_eq!(
            sniff("{\n  \"stats\": {\n    \"suites\": 3,\n    \"tests\": 9, \"passes\": 7"),
            Some(Kind::Mocha)
        );
        assert_eq!(
            sniff(r#"{"version":"3.12.0","examples":[]"#),
            Some(Kind::RSpec)
        );
        assert_eq!(sniff(r#"{"results":[]}"#), None);
    }
}
