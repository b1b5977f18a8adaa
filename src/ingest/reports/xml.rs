//! One streaming pass over a test-report XML file, whatever its dialect
//! (told by the root element): JUnit (`testsuites`/`testsuite`), NUnit 3
//! (`test-run`), NUnit 2 (`test-results`), TRX (`TestRun`) and xUnit.net v2
//! (`assemblies`/`assembly`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};

use std::sync::Arc;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::duration;
use super::{FxBuild, Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dialect {
    JUnit,
    NUnit3,
    NUnit2,
    Trx,
    XUnit,
}

/// An attribute's text: borrowed from the reader's buffer unless it needs unescaping or
/// whitespace normalisation (the rare case).
fn text<'e>(a: &Attribute<'e>) -> Cow<'e, str> {
    if let Cow::Borrowed(raw) = a.value
        && !raw
            .iter()
            .any(|b| matches!(b, b'&' | b'\t' | b'\n' | b'\r'))
        && let Ok(s) = std::str::from_utf8(raw)
    {
        return Cow::Borrowed(s);
    }
    match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
        Ok(v) => Cow::Owned(v.into_owned()),
        Err(_) => Cow::Owned(String::from_utf8_lossy(&a.value).into_owned()),
    }
}

/// Several attributes in one pass over the element (the hot path: one call per test).
fn attrs<'e, const N: usize>(e: &'e BytesStart, keys: [&str; N]) -> [Option<Cow<'e, str>>; N] {
    let mut out = [const { None }; N];
    for a in e.attributes().with_checks(false).flatten() {
        let k = a.key.local_name();
        if let Some(i) = keys.iter().position(|key| key.as_bytes() == k.as_ref())
            && out[i].is_none()
        {
            out[i] = Some(text(&a));
        }
    }
    out
}

fn attr(e: &BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .find(|a| a.key.local_name().as_ref() == key.as_bytes())
        .map(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map(|v| v.into_owned())
                .unwrap_or_else(|_| String::from_utf8_lossy(&a.value).into_owned())
        })
}

struct Parser<'a> {
    name: &'a str,
    dialect: Option<Dialect>,
    /// Names of the enclosing suites, and their path joined once per change.
    suites: Vec<String>,
    suite_path: Arc<str>,
    /// Class names, shared between the tests that have them.
    classes: HashMap<Box<str>, Arc<str>, FxBuild>,
    /// Index into report.suites of the outermost open suite, for counting.
    outer: Option<usize>,
    pending: Option<TestCase>,
    /// TRX: open UnitTestResult elements (InnerResults nest them).
    trx_depth: usize,
    trx_ids: Vec<Option<String>>,
    trx_class: HashMap<String, String>,
    trx_current_def: Option<String>,
    trx_cases: Vec<(usize, String)>,
    bad_durations: usize,
    first_bad: Option<String>,
    /// A lone `<testsuite>` root: one class per file (Surefire, Gradle, Ant).
    class_per_file: bool,
    /// A `<testsuites time=...>` root: the whole file's wall time (jest, mocha, GoogleTest).
    root_time: Option<f64>,
}

impl Parser<'_> {
    fn duration(&mut self, raw: Option<impl AsRef<str>>, timespan: bool) -> Option<f64> {
        let raw = raw?;
        let parsed = if timespan {
            duration::timespan(raw.as_ref())
        } else {
            duration::seconds(raw.as_ref())
        };
        match parsed {
            Ok(v) => Some(v),
            Err(why) => {
                self.bad_durations += 1;
                self.first_bad.get_or_insert(why);
                None
            }
        }
    }

    fn open_suite(&mut self, report: &mut Report, name: String, time: Option<String>, empty: bool) {
        if self.suites.is_empty() {
            let time_s = self.duration(time, false);
            report.suites.push(Suite {
                name: name.clone(),
                time_s,
                tests: 0,
            });
            if !empty {
                self.outer = Some(report.suites.len() - 1);
            }
        }
        if !empty {
            self.suites.push(name);
            self.suite_path = Arc::from(self.suites.join(" / "));
        }
    }

    fn close_suite(&mut self) {
        self.suites.pop();
        self.suite_path = Arc::from(self.suites.join(" / "));
        if self.suites.is_empty() {
            self.outer = None;
        }
    }

    fn class(&mut self, name: &str) -> Arc<str> {
        if let Some(c) = self.classes.get(name) {
            return c.clone();
        }
        let shared: Arc<str> = Arc::from(name);
        self.classes.insert(Box::from(name), shared.clone());
        shared
    }

    fn start_case(&mut self, class: &str, name: String, duration_s: Option<f64>, status: Status) {
        let class = self.class(class);
        // In one-class-per-file reports the class names the test, not the file: Surefire
        // writes a JUnit 5 rerun of `A` into `TEST-A$Inner.xml` under suite `A$Inner`.
        let suite = if self.class_per_file && self.suites.len() == 1 && !class.is_empty() {
            class.clone()
        } else {
            self.suite_path.clone()
        };
        self.pending = Some(TestCase {
            id: TestId { suite, class, name },
            duration_s,
            status,
            retries: 0,
            has_children: false,
        });
    }

    fn finish_case(&mut self, report: &mut Report) {
        if let Some(c) = self.pending.take() {
            if let Some(i) = self.outer {
                report.suites[i].tests += 1;
            }
            report.cases.push(c);
        }
    }

    fn set_status(&mut self, s: Status) {
        if let Some(c) = self.pending.as_mut() {
            c.status = match (c.status, s) {
                (Status::Errored, _) => Status::Errored,
                (Status::Passed, Status::Flaky) => Status::Flaky,
                (_, Status::Flaky) => c.status,
                (_, s) => s,
            };
        }
    }

    fn element(&mut self, e: &BytesStart, empty: bool, report: &mut Report) -> Result<(), String> {
        let local = e.local_name();
        let tag = std::str::from_utf8(local.as_ref()).unwrap_or("");
        let dialect = match self.dialect {
            Some(d) => d,
            None => {
                let d = match tag {
                    "testsuites" | "testsuite" => Dialect::JUnit,
                    "test-run" => Dialect::NUnit3,
                    "test-results" => Dialect::NUnit2,
                    "TestRun" => Dialect::Trx,
                    "assemblies" | "assembly" => Dialect::XUnit,
                    other => {
                        return Err(format!(
                            "is not a test report: the root element is <{other}>, expected testsuites, testsuite, test-run, test-results, TestRun or assemblies"
                        ));
                    }
                };
                self.dialect = Some(d);
                self.class_per_file = tag == "testsuite";
                if tag == "testsuites" {
                    self.root_time = self.duration(attr(e, "time"), false);
                }
                if matches!(
                    tag,
                    "testsuites" | "assemblies" | "test-run" | "test-results" | "TestRun"
                ) {
                    return Ok(());
                }
                d
            }
        };
        match (dialect, tag) {
            (Dialect::JUnit, "testsuite") => {
                let name = attr(e, "name").unwrap_or_default();
                self.open_suite(report, name, attr(e, "time"), empty);
            }
            (Dialect::JUnit, "testcase") => {
                let [time, st, result, class, name] =
                    attrs(e, ["time", "status", "result", "classname", "name"]);
                let d = self.duration(time, false);
                let skipped = matches!(st.as_deref(), Some("notrun" | "disabled"))
                    || matches!(result.as_deref(), Some("skipped" | "suppressed"));
                let status = if skipped {
                    Status::Skipped
                } else {
                    Status::Passed
                };
                self.start_case(
                    class.as_deref().unwrap_or_default(),
                    name.map(Cow::into_owned).unwrap_or_default(),
                    d,
                    status,
                );
                if empty {
                    self.finish_case(report);
                }
            }
            (Dialect::JUnit, "failure" | "rerunFailure") => self.set_status(Status::Failed),
            (Dialect::JUnit, "error" | "rerunError") => self.set_status(Status::Errored),
            (Dialect::JUnit, "skipped") => self.set_status(Status::Skipped),
            (Dialect::JUnit, "flakyFailure" | "flakyError") => self.set_status(Status::Flaky),
            (Dialect::NUnit3 | Dialect::NUnit2, "test-suite") => {
                let name = attr(e, "name").unwrap_or_default();
                let time = attr(e, "duration").or_else(|| attr(e, "time"));
                self.open_suite(report, name, time, empty);
            }
            (Dialect::NUnit3 | Dialect::NUnit2, "test-case") => {
                let d = self.duration(attr(e, "duration").or_else(|| attr(e, "time")), false);
                let result = attr(e, "result").unwrap_or_default();
                let label = attr(e, "label").unwrap_or_default();
                let status = match (result.as_str(), label.as_str()) {
                    (_, "Error") | ("Error", _) => Status::Errored,
                    (r, _) if r.starts_with("Fail") => Status::Failed,
                    ("Passed" | "Success", _) => Status::Passed,
                    _ if attr(e, "executed").as_deref() == Some("False") => Status::Skipped,
                    ("Skipped" | "Ignored" | "NotRunnable" | "Inconclusive" | "Warning", _) => {
                        Status::Skipped
                    }
                    _ => Status::Passed,
                };
                let name = attr(e, "name").unwrap_or_default();
                let class = attr(e, "classname").unwrap_or_default();
                self.start_case(&class, name, d, status);
                if empty {
                    self.finish_case(report);
                }
            }
            (Dialect::Trx, "UnitTestResult") => {
                // TRX omits durations of zero.
                let d = self.duration(
                    attr(e, "duration").or_else(|| Some("00:00:00".into())),
                    true,
                );
                let status = match attr(e, "outcome").as_deref() {
                    Some("Passed" | "Completed" | "PassedButRunAborted" | "Warning") => {
                        Status::Passed
                    }
                    Some("Error") => Status::Errored,
                    Some("Failed" | "Timeout" | "Aborted") => Status::Failed,
                    _ => Status::Skipped,
                };
                if let Some(parent) = self.pending.take() {
                    // The enclosing result has inner results: keep it as a parent.
                    let mut parent = parent;
                    parent.has_children = true;
                    report.cases.push(parent);
                }
                self.start_case("", attr(e, "testName").unwrap_or_default(), d, status);
                let id = attr(e, "testId");
                if empty {
                    if let Some(id) = id {
                        self.trx_cases.push((report.cases.len(), id));
                    }
                    self.finish_case(report);
                } else {
                    self.trx_depth += 1;
                    self.trx_ids.push(id);
                }
            }
            (Dialect::Trx, "UnitTest") => self.trx_current_def = attr(e, "id"),
            (Dialect::Trx, "TestMethod") => {
                if let (Some(id), Some(class)) =
                    (self.trx_current_def.clone(), attr(e, "className"))
                {
                    self.trx_class.insert(id, class);
                }
            }
            (Dialect::XUnit, "assembly" | "collection") => {
                let name = attr(e, "name").unwrap_or_default();
                self.open_suite(report, name, attr(e, "time"), empty);
            }
            (Dialect::XUnit, "test") => {
                let d = self.duration(attr(e, "time"), false);
                let status = match attr(e, "result").as_deref() {
                    Some("Fail") => Status::Failed,
                    Some("Skip" | "NotRun") => Status::Skipped,
                    _ => Status::Passed,
                };
                self.start_case(
                    attr(e, "type").as_deref().unwrap_or_default(),
                    attr(e, "name").unwrap_or_default(),
                    d,
                    status,
                );
                if empty {
                    self.finish_case(report);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, tag: &[u8], report: &mut Report) {
        match (self.dialect, tag) {
            (Some(Dialect::JUnit), b"testsuite")
            | (Some(Dialect::NUnit3 | Dialect::NUnit2), b"test-suite")
            | (Some(Dialect::XUnit), b"assembly" | b"collection") => self.close_suite(),
            (Some(Dialect::JUnit), b"testcase")
            | (Some(Dialect::NUnit3 | Dialect::NUnit2), b"test-case")
            | (Some(Dialect::XUnit), b"test") => self.finish_case(report),
            (Some(Dialect::Trx), b"UnitTestResult") => {
                self.trx_depth = self.trx_depth.saturating_sub(1);
                if let Some(Some(id)) = self.trx_ids.pop() {
                    if self.pending.is_some() {
                        self.trx_cases.push((report.cases.len(), id));
                    }
                }
                self.finish_case(report);
            }
            (Some(Dialect::Trx), b"UnitTest") => self.trx_current_def = None,
            _ => {}
        }
    }
}

/// Parse one XML report from `input`, appending to `report`.
pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let mut reader = Reader::from_reader(input);
    reader.config_mut().trim_text(true);
    let mut p = Parser {
        name,
        dialect: None,
        suites: Vec::new(),
        suite_path: Arc::from(""),
        classes: HashMap::default(),
        outer: None,
        pending: None,
        trx_depth: 0,
        trx_ids: Vec::new(),
        trx_class: HashMap::new(),
        trx_current_def: None,
        trx_cases: Vec::new(),
        bad_durations: 0,
        first_bad: None,
        class_per_file: false,
        root_time: None,
    };
    let first_suite = report.suites.len();
    let mut depth = 0usize;
    let mut buf = Vec::with_capacity(4096);
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            let why = match e {
                quick_xml::Error::Io(io) => format!(
                    "cannot read on from byte {}: {io}",
                    reader.buffer_position()
                ),
                e => format!("malformed XML at byte {}: {e}", reader.error_position()),
            };
            IngestError::at(name, None, why)
        })?;
        match event {
            Event::Start(e) => {
                depth += 1;
                p.element(&e, false, report)
                    .map_err(|m| IngestError::at(name, None, m))?;
            }
            Event::Empty(e) => {
                p.element(&e, true, report)
                    .map_err(|m| IngestError::at(name, None, m))?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                p.end(e.local_name().as_ref(), report);
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
        budget.reset();
    }
    if depth > 0 {
        return Err(IngestError::at(
            name,
            None,
            format!(
                "is truncated: it ends at byte {} inside {depth} open element(s)",
                reader.buffer_position()
            ),
        ));
    }
    if p.dialect.is_none() {
        return Err(IngestError::at(name, None, "holds no XML elements".into()));
    }
    for (i, id) in std::mem::take(&mut p.trx_cases) {
        if let (Some(c), Some(class)) = (report.cases.get_mut(i), p.trx_class.get(&id)) {
            c.id.class = Arc::from(class.as_str());
        }
    }
    if p.bad_durations > 0 {
        report.warnings.push(format!(
            "{}: {} durations were unusable and left out (first: {})",
            p.name,
            p.bad_durations,
            p.first_bad.unwrap_or_default()
        ));
    }
    if let Some(t) = p.root_time {
        // The root's time covers the whole file, setup between suites included.
        let tests = report.suites.drain(first_suite..).map(|s| s.tests).sum();
        report.suites.push(Suite {
            name: name.to_string(),
            time_s: Some(t),
            tests,
        });
    }
    Ok(())
}
