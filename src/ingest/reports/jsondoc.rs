//! Test reports that are one JSON document: mocha's `json` reporter, jest's `--json`,
//! RSpec's `--format json` and CTRF (the Common Test Report Format, which reporters for
//! Jest, Playwright, Cypress, Vitest, pytest, Go and more write). Each is read into typed structures that keep only what
//! tardy uses (stack traces and captured output are skipped, not stored); serde_json
//! caps nesting at 128 levels, and the whole document at [`DOCUMENT_LIMIT`].
//!
//! Reruns are read where the tool marks them: mocha's `currentRetry` and jest's
//! `invocations` above one make a passing test flaky.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::bounded::Bounded;
use super::{Report, Status, Suite, TestCase, TestId};
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

pub fn read(
    input: impl BufRead,
    kind: Kind,
    name: &str,
    report: &mut Report,
) -> Result<(), IngestError> {
    let (input, _budget) = Bounded::new(crate::ingest::budget::Timed::new(input), DOCUMENT_LIMIT);
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
        Kind::Mocha => mocha(serde_json::from_reader(input).map_err(bad)?, name, report),
        Kind::Jest => {
            let mut de = serde_json::Deserializer::from_reader(input);
            serde::de::DeserializeSeed::deserialize(JestSeed { report }, &mut de).map_err(bad)?;
            de.end().map_err(bad)?;
        }
        Kind::RSpec => rspec(serde_json::from_reader(input).map_err(bad)?, name, report),
        Kind::Ctrf => ctrf(serde_json::from_reader(input).map_err(bad)?, name, report),
        Kind::Cucumber => {
            super::cucumber::read(serde_json::from_reader(input).map_err(bad)?, name, report)
        }
        Kind::Playwright => {
            super::playwright::read(serde_json::from_reader(input).map_err(bad)?, name, report)
        }
    }
    Ok(())
}

pub(super) use super::counted::Counted;

/// The directory every path shares, so that absolute paths from two checkouts match.
fn common_dir<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut prefix: Option<&str> = None;
    for p in paths {
        let dir = p.rfind('/').map_or("", |i| &p[..=i]);
        prefix = Some(match prefix {
            None => dir,
            Some(q) => {
                let n = q
                    .char_indices()
                    .zip(dir.chars())
                    .take_while(|((_, a), b)| a == b)
                    .last()
                    .map_or(0, |((i, a), _)| i + a.len_utf8());
                let common = &q[..n];
                common.rfind('/').map_or("", |i| &common[..=i])
            }
        });
    }
    prefix.unwrap_or("").to_string()
}

fn push(report: &mut Report, suite: &Arc<str>, name: String, ms: Option<f64>, status: Status) {
    report.cases.push(TestCase {
        id: TestId::new(suite.clone(), super::EMPTY.clone(), name),
        duration_s: ms.filter(|m| m.is_finite() && *m >= 0.0).map(|m| m / 1e3),
        status,
        retries: 0,
        has_children: false,
    });
}

fn suite_of(cache: &mut HashMap<String, Arc<str>>, prefix: &str, path: &str) -> Arc<str> {
    let rel = path.strip_prefix(prefix).unwrap_or(path);
    cache
        .entry(rel.to_string())
        .or_insert_with(|| Arc::from(rel))
        .clone()
}

#[derive(Deserialize)]
struct MochaDoc {
    #[serde(default)]
    stats: Option<MochaStats>,
    #[serde(default)]
    tests: Vec<Counted<MochaTest>>,
    #[serde(default)]
    pending: Vec<Counted<MochaTest>>,
    #[serde(default)]
    failures: Vec<Counted<MochaTest>>,
}

#[derive(Deserialize)]
struct MochaStats {
    duration: Option<f64>,
}

#[derive(Deserialize)]
struct MochaTest {
    #[serde(rename = "fullTitle", default)]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
    duration: Option<f64>,
    #[serde(rename = "currentRetry", default)]
    current_retry: u32,
    #[serde(default)]
    err: Option<HashMap<String, IgnoredAny>>,
}

fn mocha(doc: MochaDoc, name: &str, report: &mut Report) {
    let first = report.cases.len();
    let prefix = common_dir(doc.tests.iter().filter_map(|t| t.file.as_deref()));
    let mut suites = HashMap::new();
    // Pending tests are listed in `tests` too; which ones, by title (titles repeat).
    let mut pending: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    for t in &doc.pending {
        *pending
            .entry((&t.full_title, t.file.as_deref()))
            .or_default() += 1;
    }
    let mut in_tests: HashMap<(&str, Option<&str>), usize> = HashMap::new();
    for t in &doc.tests {
        *in_tests
            .entry((&t.full_title, t.file.as_deref()))
            .or_default() += 1;
        let failed = t.err.as_ref().is_some_and(|e| !e.is_empty());
        let key = (t.full_title.as_str(), t.file.as_deref());
        let status = if failed {
            Status::Failed
        } else if let Some(n) = pending.get_mut(&key).filter(|n| **n > 0) {
            *n -= 1;
            Status::Skipped
        } else if t.current_retry > 0 {
            Status::Flaky
        } else {
            Status::Passed
        };
        let suite = suite_of(&mut suites, &prefix, t.file.as_deref().unwrap_or(""));
        push(report, &suite, t.full_title.clone(), t.duration, status);
        if let Some(c) = report.cases.last_mut() {
            c.retries = t.current_retry;
        }
    }
    // A failing hook ("before all" hook for ...) is a failure mocha counts but no test.
    for t in &doc.failures {
        let key = (t.full_title.as_str(), t.file.as_deref());
        match in_tests.get_mut(&key).filter(|n| **n > 0) {
            Some(n) => *n -= 1,
            None => {
                let suite = suite_of(&mut suites, &prefix, t.file.as_deref().unwrap_or(""));
                push(report, &suite, t.full_title.clone(), None, Status::Errored);
            }
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: doc
            .stats
            .and_then(|s| s.duration)
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| d / 1e3),
        tests: report.cases.len() - first,
    });
}

#[derive(Deserialize)]
struct JestFile {
    #[serde(default)]
    name: String,
    #[serde(rename = "startTime")]
    start_time: Option<f64>,
    #[serde(rename = "endTime")]
    end_time: Option<f64>,
    #[serde(rename = "assertionResults", default)]
    assertion_results: Vec<Counted<JestTest>>,
    /// A file that failed to run at all (syntax error, missing module).
    #[serde(rename = "testExecError", default)]
    exec_error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct JestTest {
    #[serde(rename = "fullName", default)]
    full_name: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    status: String,
    duration: Option<f64>,
    #[serde(default)]
    invocations: Option<u32>,
}

/// jest's document read test file by test file: each file's results become
/// cases as soon as the file is read, so memory holds the cases and one
/// file's results, not the whole document as well. Suites are named by the
/// file's path below the directory all files share, known once all are
/// read: each file's cases get it then.
struct JestSeed<'a> {
    report: &'a mut Report,
}

/// Each file read: its full path, its first case and its suite's index.
struct JestFiles<'a> {
    report: &'a mut Report,
    files: Vec<(String, usize, usize)>,
}

impl<'de> serde::de::DeserializeSeed<'de> for JestSeed<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for JestSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with testResults")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut files = JestFiles {
            report: self.report,
            files: Vec::new(),
        };
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            if key == "testResults" {
                map.next_value_seed(&mut files)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        files.name_suites();
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut JestFiles<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut JestFiles<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of test files")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(f) = seq.next_element::<JestFile>()? {
            self.file(f);
        }
        Ok(())
    }
}

impl JestFiles<'_> {
    fn file(&mut self, f: JestFile) {
        let report = &mut *self.report;
        let first = report.cases.len();
        let suite: Arc<str> = Arc::from("");
        for Counted(t) in f.assertion_results {
            let retries = t.invocations.unwrap_or(1).saturating_sub(1);
            let status = match t.status.as_str() {
                "passed" if retries > 0 => Status::Flaky,
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped, // pending, skipped, todo, disabled, focused-out
            };
            let name = t.full_name.unwrap_or(t.title);
            push(report, &suite, name, t.duration, status);
            if let Some(c) = report.cases.last_mut() {
                c.retries = retries;
            }
        }
        if f.exec_error.is_some() && report.cases.len() == first {
            // The file did not run: jest counts it as a failed suite.
            let name = "(test file failed to run)".into();
            push(report, &suite, name, None, Status::Errored);
        }
        let time_s = match (f.start_time, f.end_time) {
            (Some(a), Some(b)) if b >= a => Some((b - a) / 1e3),
            _ => None,
        };
        report.suites.push(Suite {
            name: String::new(),
            time_s,
            tests: report.cases.len() - first,
        });
        self.files.push((f.name, first, report.suites.len() - 1));
    }

    /// Each file's cases and suite named by its path below the shared directory.
    fn name_suites(&mut self) {
        let prefix = common_dir(self.files.iter().map(|f| f.0.as_str()));
        let mut suites = HashMap::new();
        let report = &mut *self.report;
        for (i, (path, first, at)) in self.files.iter().enumerate() {
            let suite = suite_of(&mut suites, &prefix, path);
            let end = self.files.get(i + 1).map_or(report.cases.len(), |n| n.1);
            for c in &mut report.cases[*first..end] {
                c.id.suite = suite.clone();
            }
            report.suites[*at].name = suite.to_string();
        }
    }
}

#[derive(Deserialize)]
struct RSpecDoc {
    #[serde(default)]
    examples: Vec<Counted<RSpecExample>>,
    summary: Option<RSpecSummary>,
}

#[derive(Deserialize)]
struct RSpecSummary {
    duration: Option<f64>,
    #[serde(default)]
    errors_outside_of_examples_count: usize,
}

#[derive(Deserialize)]
struct RSpecExample {
    #[serde(default)]
    full_description: String,
    #[serde(default)]
    file_path: String,
    #[serde(default)]
    status: String,
    run_time: Option<f64>,
}

fn rspec(doc: RSpecDoc, name: &str, report: &mut Report) {
    let first = report.cases.len();
    let prefix = common_dir(doc.examples.iter().map(|e| e.file_path.as_str()));
    let mut suites = HashMap::new();
    for Counted(e) in doc.examples {
        let status = match e.status.as_str() {
            "passed" => Status::Passed,
            "failed" => Status::Failed,
            _ => Status::Skipped, // pending
        };
        let suite = suite_of(&mut suites, &prefix, &e.file_path);
        push(
            report,
            &suite,
            e.full_description,
            e.run_time.map(|s| s * 1e3),
            status,
        );
    }
    let (time_s, outside) = doc.summary.map_or((None, 0), |s| {
        (
            s.duration.filter(|d| d.is_finite() && *d >= 0.0),
            s.errors_outside_of_examples_count,
        )
    });
    if outside > 0 {
        report.warnings.push(format!(
            "{name}: RSpec reports {outside} error(s) outside of examples (a file that did not load?)"
        ));
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s,
        tests: report.cases.len() - first,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_directory_of_paths() {
        let p = ["/a/b/x.js", "/a/b/c/y.js", "/a/bc/z.js"];
        assert_eq!(common_dir(p.iter().copied()), "/a/");
        assert_eq!(common_dir(["/a/b/x.js"].iter().copied()), "/a/b/");
        assert_eq!(common_dir(["x.js", "/y.js"].iter().copied()), "");
        assert_eq!(common_dir(std::iter::empty()), "");
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

#[derive(Deserialize)]
struct CtrfDoc {
    results: CtrfResults,
}

#[derive(Deserialize)]
struct CtrfResults {
    #[serde(default)]
    tool: Option<CtrfTool>,
    #[serde(default)]
    summary: Option<CtrfSummary>,
    #[serde(default)]
    tests: Vec<Counted<CtrfTest>>,
}

#[derive(Deserialize)]
struct CtrfTool {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct CtrfSummary {
    tests: Option<u64>,
    failed: Option<u64>,
    start: Option<f64>,
    stop: Option<f64>,
}

/// CTRF's `suite`: a string ("file > describe") or, in later versions, the
/// path as an array.
#[derive(Deserialize)]
#[serde(untagged)]
enum CtrfSuite {
    One(String),
    Path(Vec<String>),
}

#[derive(Deserialize)]
struct CtrfTest {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    duration: Option<f64>,
    #[serde(default)]
    suite: Option<CtrfSuite>,
    #[serde(rename = "filePath", default)]
    file_path: Option<String>,
    #[serde(default)]
    retries: Option<u32>,
    #[serde(default)]
    flaky: Option<bool>,
}

fn ctrf(doc: CtrfDoc, name: &str, report: &mut Report) {
    let first = report.cases.len();
    let r = doc.results;
    let prefix = common_dir(r.tests.iter().filter_map(|t| t.file_path.as_deref()));
    let mut suites = HashMap::new();
    for Counted(t) in r.tests {
        let retries = t.retries.unwrap_or(0);
        let status = match t.status.as_str() {
            "passed" if t.flaky == Some(true) || retries > 0 => Status::Flaky,
            "passed" => Status::Passed,
            "failed" => Status::Failed,
            // skipped, pending, other (todo and the like)
            _ => Status::Skipped,
        };
        let suite = match t.suite {
            Some(CtrfSuite::One(s)) => s,
            Some(CtrfSuite::Path(p)) => p.join(" > "),
            None => t
                .file_path
                .as_deref()
                .map(|f| f.strip_prefix(prefix.as_str()).unwrap_or(f).to_string())
                .unwrap_or_default(),
        };
        let suite = suite_of(&mut suites, "", &suite);
        push(report, &suite, t.name, t.duration, status);
        if let Some(c) = report.cases.last_mut() {
            c.retries = retries;
        }
    }
    let listed = report.cases.len() - first;
    let failing = report.cases[first..]
        .iter()
        .filter(|c| c.status.is_failure())
        .count() as u64;
    let (stated, stated_failed, time_s) = r.summary.map_or((None, None, None), |s| {
        let time = match (s.start, s.stop) {
            (Some(a), Some(b)) if b >= a && a > 0.0 => Some((b - a) / 1e3),
            _ => None,
        };
        (s.tests, s.failed, time)
    });
    if let Some(n) = stated
        && n != listed as u64
    {
        report.warnings.push(format!(
            "{name} says it holds {n} tests but lists {listed} results"
        ));
    }
    if let Some(f) = stated_failed
        && f != failing
    {
        report.warnings.push(format!(
            "{name} says {f} tests failed but lists {failing} failed results"
        ));
        if f > failing {
            // Never green on a failed run: the failures it counts and does
            // not list are one failed entry.
            let suite: Arc<str> = Arc::from(r.tool.map(|t| t.name).unwrap_or_default().as_str());
            push(
                report,
                &suite,
                format!(
                    "({} failures the report counts but does not list)",
                    f - failing
                ),
                None,
                Status::Failed,
            );
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s,
        tests: report.cases.len() - first,
    });
}
