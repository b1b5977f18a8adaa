//! `go test -json` event streams (test2json NDJSON): a test's duration is the
//! `Elapsed` of its pass/fail/skip event; a parent test's time includes its
//! subtests (`Parent/sub`), so parents are marked (by `Report::mark_parents`)
//! and not summed; a package's own pass/fail event gives the suite's wall time.
//!
//! A failed run never reads as passed. A package can fail without any test
//! failing: it does not build (Go 1.24's `build-output`/`build-fail`
//! events, or the `FAIL pkg [build failed]` line older Go prints as text),
//! its `TestMain` exits, or its binary dies after its tests passed (a
//! `-timeout` in cleanup). Then the package is one errored test,
//! `[build failed]` or `[package failed]`. Tests that started and never
//! ended (the binary panicked or timed out while they ran, or the stream
//! stops) are failed. Each time, a warning names the packages and the cause
//! from their output (the `panic:` line, the first compiler error, or what
//! the package printed), as gotestsum and tparse show them.
//!
//! Lines that are not events (a CI log's preamble, build errors written to
//! the same file by `2>&1`) are kept as output; only a file without any
//! event is refused.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::{Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

/// One event, its text borrowed from the line where it has no escapes.
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "Action", borrow)]
    action: Cow<'a, str>,
    #[serde(rename = "Package", default, borrow)]
    package: Cow<'a, str>,
    #[serde(rename = "ImportPath", default, borrow)]
    import_path: Cow<'a, str>,
    #[serde(rename = "Test", borrow)]
    test: Option<Cow<'a, str>>,
    #[serde(rename = "Elapsed")]
    elapsed: Option<f64>,
    #[serde(rename = "Output", borrow)]
    output: Option<Cow<'a, str>>,
    #[serde(rename = "FailedBuild")]
    failed_build: Option<IgnoredAny>,
}

/// The longest cause kept for a package.
const CAUSE_LIMIT: usize = 300;

/// What a package did so far.
#[derive(Default)]
struct Package {
    /// Tests that started and have not ended, in the order they started.
    running: Vec<String>,
    failed_tests: usize,
    build_failed: bool,
    /// The first `panic:` line or compiler error.
    cause: Option<String>,
    /// The first line the package itself printed that is not go test's own.
    said: Option<String>,
    /// Its pass or fail event came.
    ended: bool,
    /// Its failure was counted already (a text line and an event may both
    /// say it).
    counted: bool,
    /// Its results read so far.
    tests: usize,
}

fn clip(line: &str) -> String {
    let line = line.trim_end();
    if line.len() <= CAUSE_LIMIT {
        return line.to_string();
    }
    let mut end = CAUSE_LIMIT;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &line[..end])
}

/// A line go test writes about the run rather than the package's own words.
fn is_go_test_line(line: &str) -> bool {
    let t = line.trim();
    t.is_empty()
        || t == "PASS"
        || t == "FAIL"
        || t.starts_with("FAIL\t")
        || t.starts_with("ok  \t")
        || t.starts_with("ok \t")
        || t.starts_with("?   \t")
        || t.starts_with("=== ")
        || t.starts_with("--- ")
        || t.starts_with("exit status ")
        || t.starts_with("coverage:")
        || t.starts_with("testing: warning: no tests to run")
}

/// `path/file.go:3:43: message`: what the compiler says.
fn is_compiler_error(line: &str) -> bool {
    line.split_once(".go:")
        .is_some_and(|(_, rest)| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// `FAIL\tpkg [build failed]` (or `[setup failed]`): the package, when a
/// text line says it failed before running.
fn failed_before_running(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("FAIL")?.trim_start();
    let (pkg, why) = rest.split_once(char::is_whitespace)?;
    let why = why.trim();
    (why == "[build failed]" || why == "[setup failed]").then_some(pkg)
}

struct Reader<'r, 's> {
    report: &'r mut Report,
    /// Where settled results go as the stream is read, when streaming.
    sink: Option<&'r mut (dyn super::CaseSink + 's)>,
    /// Results of this file so far.
    results: usize,
    empty: Arc<str>,
    names: HashMap<String, Arc<str>>,
    /// Each package's place in `order`.
    packages: HashMap<String, usize>,
    /// Packages in the order first seen.
    order: Vec<(String, Package)>,
    /// The first compiler error of text lines not yet claimed by a package.
    loose_cause: Option<String>,
}

impl Reader<'_, '_> {
    fn package(&mut self, name: &str) -> &mut Package {
        let i = match self.packages.get(name) {
            Some(&i) => i,
            None => {
                self.packages.insert(name.to_string(), self.order.len());
                self.order.push((name.to_string(), Package::default()));
                self.order.len() - 1
            }
        };
        &mut self.order[i].1
    }

    fn known(&mut self, name: &str) -> Option<&mut Package> {
        let i = *self.packages.get(name)?;
        self.order.get_mut(i).map(|p| &mut p.1)
    }

    /// A result of `package`, counted as one of its tests.
    fn push(&mut self, package: &str, test: String, duration_s: Option<f64>, status: Status) {
        let id = self.id(package, test);
        self.report.push_case(TestCase {
            id,
            duration_s,
            status,
            retries: 0,
            has_children: false,
        });
        self.results += 1;
        if let Some(p) = self.known(package) {
            p.tests += 1;
        }
        super::spill_some(self.report, &mut self.sink);
    }

    fn id(&mut self, package: &str, test: String) -> TestId {
        let suite = self
            .names
            .entry(package.to_string())
            .or_insert_with(|| Arc::from(package))
            .clone();
        TestId::new(suite, self.empty.clone(), test)
    }

    fn output(&mut self, package: &str, test: bool, text: &str) {
        let p = self.package(package);
        for line in text.lines() {
            if p.cause.is_none() && line.starts_with("panic: ") {
                p.cause = Some(clip(line));
            }
            if !test && p.said.is_none() && !is_go_test_line(line) {
                p.said = Some(clip(line));
            }
            if let Some(pkg) = failed_before_running(line)
                && pkg == package
            {
                p.build_failed = true;
            }
        }
    }

    /// A text line that is not an event.
    fn text(&mut self, line: &str) {
        if let Some(pkg) = failed_before_running(line) {
            let cause = self.loose_cause.take();
            let p = self.package(pkg);
            p.build_failed = true;
            if p.cause.is_none() {
                p.cause = cause;
            }
            // Older Go writes no event for a package that did not build:
            // this line is its end.
            p.ended = true;
            let p = pkg.to_string();
            self.finish(&p, None);
        } else if self.loose_cause.is_none() && is_compiler_error(line) {
            self.loose_cause = Some(clip(line));
        }
    }

    fn event(&mut self, ev: Event) {
        // Build events name the package under test as "pkg [pkg.test]".
        let package: Cow<str> = if ev.package.is_empty() {
            Cow::Owned(
                (ev.import_path.split_whitespace().next())
                    .unwrap_or("")
                    .to_string(),
            )
        } else {
            ev.package
        };
        match &*ev.action {
            "build-output" => {
                let text = ev.output.unwrap_or_default();
                let p = self.package(&package);
                if p.cause.is_none()
                    && let Some(line) = text
                        .lines()
                        .find(|l| !l.starts_with('#') && !l.trim().is_empty())
                {
                    p.cause = Some(clip(line));
                }
            }
            "build-fail" => self.package(&package).build_failed = true,
            "output" => {
                if let Some(text) = ev.output {
                    self.output(&package, ev.test.is_some(), &text);
                }
            }
            "run" => {
                if let Some(test) = ev.test {
                    let p = self.package(&package);
                    if !p.running.iter().any(|t| *t == *test) {
                        p.running.push(test.into_owned());
                    }
                }
            }
            "pass" | "fail" | "skip" => {
                let status = match &*ev.action {
                    "pass" => Status::Passed,
                    "fail" => Status::Failed,
                    _ => Status::Skipped,
                };
                let elapsed = ev.elapsed.filter(|e| e.is_finite() && *e >= 0.0);
                match ev.test {
                    Some(test) => {
                        let p = self.package(&package);
                        if let Some(k) = p.running.iter().position(|t| *t == test) {
                            p.running.remove(k);
                        }
                        if status == Status::Failed {
                            p.failed_tests += 1;
                        }
                        self.push(&package, test.into_owned(), elapsed, status);
                    }
                    None => {
                        let p = self.package(&package);
                        p.ended = true;
                        if ev.failed_build.is_some() {
                            p.build_failed = true;
                        }
                        let failed = status == Status::Failed;
                        self.finish(&package, failed.then_some(elapsed));
                        let tests = self.known(&package).map_or(0, |p| p.tests);
                        self.report.suites.push(Suite {
                            name: package.into_owned(),
                            time_s: elapsed,
                            tests,
                        });
                    }
                }
            }
            _ => {}
        }
    }

    /// The package ended (`failed`: it failed, with its elapsed time), or the
    /// stream did (`None` and not ended): tests still running failed, and a
    /// failed package without a failed test is one errored test.
    fn finish(&mut self, package: &str, failed: Option<Option<f64>>) {
        let loose = self.loose_cause.take();
        let at = self.packages.get(package).copied();
        let Some((_, p)) = at.and_then(|i| self.order.get_mut(i)) else {
            self.loose_cause = loose;
            return;
        };
        if p.cause.is_none() && p.build_failed {
            p.cause = loose;
        } else {
            self.loose_cause = loose;
        }
        let failed = failed.is_some() || p.build_failed || !p.ended;
        // A package that passed with tests that started and never ended:
        // their end events are missing; gotestsum fails them, and so does
        // tardy (they were dropped without a word).
        if (!failed && p.running.is_empty()) || (p.counted && p.running.is_empty()) {
            return;
        }
        p.counted = true;
        let running = std::mem::take(&mut p.running);
        let cause = p
            .cause
            .clone()
            .or_else(|| p.said.clone())
            .unwrap_or_else(|| "no output said why".into());
        let build_failed = p.build_failed;
        let ended = p.ended;
        p.failed_tests += running.len();
        let failed_tests = p.failed_tests;
        // Counted once: a later event of the package starts afresh.
        p.failed_tests = 0;
        p.build_failed = false;
        let stopped = if !failed {
            "the package passed without their end events"
        } else if ended {
            "the test binary stopped"
        } else {
            "the stream ends"
        };
        if !running.is_empty() {
            let shown: Vec<&str> = running.iter().take(5).map(String::as_str).collect();
            let more = if running.len() > 5 {
                format!(" and {} more", running.len() - 5)
            } else {
                String::new()
            };
            self.report.warnings.push(format!(
                "{package}: {} {} started and never ended ({}{more}): {stopped} ({cause}); counted as failed",
                running.len(),
                if running.len() == 1 { "test" } else { "tests" },
                shown.join(", "),
            ));
            for test in running {
                self.push(package, test, None, Status::Failed);
            }
        }
        if failed_tests == 0 {
            let (name, what) = if build_failed {
                ("[build failed]", "did not build")
            } else if ended {
                ("[package failed]", "failed with no failing test")
            } else {
                ("[package failed]", "has no end in the stream")
            };
            self.report.warnings.push(format!(
                "{package}: the package {what} ({cause}); counted as one errored test, {name}"
            ));
            self.push(package, name.to_string(), None, Status::Errored);
        }
    }
}

pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    read_with(input, name, report, None)
}

/// [`read`], handing settled results to `sink` as the stream is read (when
/// given), so that memory holds a few thousand results, not the run's.
pub fn read_with(
    input: impl BufRead,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn super::CaseSink + '_)>,
) -> Result<(), IngestError> {
    let mut r = Reader {
        report,
        sink,
        results: 0,
        empty: Arc::from(""),
        names: HashMap::new(),
        packages: HashMap::new(),
        order: Vec::new(),
        loose_cause: None,
    };
    let (mut input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let (mut events, mut text_lines) = (0usize, 0usize);
    let mut buf = String::new();
    for i in 0.. {
        if let Some(why) = crate::ingest::limits::check(i as u64 + 1, r.results.max(r.names.len()))
        {
            return Err(IngestError::at(name, Some(i + 1), why));
        }
        buf.clear();
        let n = (input.read_line(&mut buf))
            .map_err(|e| IngestError::at(name, Some(i + 1), format!("cannot read: {e}")))?;
        if n == 0 {
            break;
        }
        budget.reset();
        let line = buf.trim();
        if line.is_empty() {
            continue;
        }
        match line
            .starts_with('{')
            .then(|| serde_json::from_str::<Event>(line).ok())
            .flatten()
        {
            Some(ev) => {
                events += 1;
                r.event(ev);
            }
            None => {
                text_lines += 1;
                r.text(line);
            }
        }
    }
    if events == 0 {
        return Err(IngestError::at(
            name,
            None,
            "holds no test2json event (`go test -json` writes one JSON object per line with an \"Action\")".into(),
        ));
    }
    // Packages the stream left running.
    let left: Vec<String> = (r.order.iter())
        .filter(|p| !p.1.ended)
        .map(|p| p.0.clone())
        .collect();
    for p in &left {
        {
            r.finish(p, None);
        }
    }
    if text_lines > 0 {
        r.report.warnings.push(format!(
            "{name}: {text_lines} lines are not test2json events (build output or a log around the JSON); read as output"
        ));
    }
    Ok(())
}

/// Whether a line is a test2json event (for sniffing a stream that starts
/// with other text).
pub fn is_event_line(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("{\"")
        && t.contains("\"Action\":\"")
        && (t.contains("\"Package\":\"") || t.contains("\"ImportPath\":\""))
}
