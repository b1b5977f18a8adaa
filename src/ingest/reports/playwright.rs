//! Playwright's JSON reporter (`--reporter=json`): `config`, then `suites`
//! (a file, then `describe` blocks nested as `suites`), each with `specs`;
//! a spec holds one test per project, each with its `results` (one per
//! attempt) and a `status` Playwright decided: `expected`, `unexpected`,
//! `flaky` or `skipped`. Errors outside any test (a file that did not load)
//! are in the top-level `errors`.
//!
//! Each test of each project is a test, named by the spec's title (with
//! ` [project]` when the project is named), in the suite `file > describe`.
//! `unexpected` is failed (errored when its last attempt timed out or was
//! interrupted), `flaky` flaky, `skipped` (or an expected skip) skipped;
//! its time is its last attempt's, its retries the attempts before it. The
//! top-level errors make one errored test: the run failed.
//!
//! Read a top-level suite (a test file) at a time: a streaming read's sink
//! gets each file's tests once a chunk of them is held.

use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::jsonparts::Each;
use super::{CaseSink, Report, Status, Suite, TestCase, TestId};

#[derive(Deserialize)]
struct PwSuite {
    #[serde(default)]
    title: String,
    #[serde(default)]
    specs: Vec<Spec>,
    #[serde(default)]
    suites: Vec<PwSuite>,
}

#[derive(Deserialize)]
struct Spec {
    #[serde(default)]
    title: String,
    #[serde(default)]
    tests: Vec<super::counted::Counted<PwTest>>,
}

#[derive(Deserialize)]
struct PwTest {
    #[serde(rename = "projectName", default)]
    project: String,
    #[serde(rename = "expectedStatus", default)]
    expected: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    results: Vec<PwResult>,
}

#[derive(Deserialize)]
struct PwResult {
    #[serde(default)]
    status: String,
    #[serde(default)]
    duration: Option<f64>,
}

/// Nesting of `describe` blocks read (serde_json stops at 128 anyway).
const MAX_DEPTH: usize = 64;

/// Read Playwright's JSON report, each file's tests handed to `sink` (when
/// streaming) once a chunk of them is held.
pub(super) fn read<R: Read>(
    input: R,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut doc = DocReader {
        report,
        sink,
        tests: 0,
        errors: 0,
    };
    (&mut doc).deserialize(&mut de)?;
    de.end()?;
    let DocReader {
        report,
        mut tests,
        errors,
        ..
    } = doc;
    if errors > 0 {
        report.warnings.push(format!(
            "{name}: {errors} errors outside any test (a test file that did not load?); counted as one errored test"
        ));
        report.push_case(TestCase {
            id: TestId::new(
                Arc::from(""),
                Arc::from(""),
                format!("({errors} errors outside any test)"),
            ),
            duration_s: None,
            status: Status::Errored,
            retries: 0,
            has_children: false,
        });
        tests += 1;
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: None,
        tests,
    });
    Ok(())
}

/// The top-level object: `suites` read a file at a time, `errors` counted.
struct DocReader<'r, 's, 'c> {
    report: &'r mut Report,
    sink: Option<&'s mut (dyn CaseSink + 'c)>,
    tests: usize,
    errors: usize,
}

impl<'de> DeserializeSeed<'de> for &mut DocReader<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut DocReader<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("Playwright's JSON report (an object with suites)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            match key.as_ref() {
                "suites" => {
                    let (report, sink, tests) =
                        (&mut *self.report, &mut self.sink, &mut self.tests);
                    map.next_value_seed(Each::new(&mut |s: PwSuite| {
                        let before = report.cases.len();
                        suite(&s, &mut Vec::new(), report);
                        *tests += report.cases.len() - before;
                        super::spill_some(report, sink);
                        Ok(())
                    }))?;
                }
                "errors" => {
                    let errors = &mut self.errors;
                    map.next_value_seed(Each::new(&mut |_: IgnoredAny| {
                        *errors += 1;
                        Ok(())
                    }))?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

fn suite<'a>(s: &'a PwSuite, path: &mut Vec<&'a str>, report: &mut Report) {
    if path.len() >= MAX_DEPTH {
        return;
    }
    path.push(&s.title);
    let name: Arc<str> = Arc::from(
        path.iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" > ")
            .as_str(),
    );
    for spec in &s.specs {
        for t in &spec.tests {
            report.push_case(case(&name, &spec.title, t));
        }
    }
    for inner in &s.suites {
        suite(inner, path, report);
    }
    path.pop();
}

fn case(suite: &Arc<str>, title: &str, t: &PwTest) -> TestCase {
    let last = t.results.last();
    let status = match t.status.as_str() {
        "flaky" => Status::Flaky,
        "skipped" => Status::Skipped,
        "expected" if t.expected == "skipped" => Status::Skipped,
        "expected" => Status::Passed,
        // unexpected, or a status this reader does not know: not a pass.
        _ => match last.map(|r| r.status.as_str()) {
            Some("timedOut" | "interrupted") => Status::Errored,
            _ => Status::Failed,
        },
    };
    let name = if t.project.is_empty() {
        title.to_string()
    } else {
        format!("{title} [{}]", t.project)
    };
    TestCase {
        id: TestId::new(suite.clone(), super::EMPTY.clone(), name),
        duration_s: last
            .and_then(|r| r.duration)
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| d / 1e3),
        status,
        retries: t.results.len().saturating_sub(1) as u32,
        has_children: false,
    }
}
