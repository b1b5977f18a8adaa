//! jest's `--json` document, read in two passes so that a million tests
//! never sit in memory at once: the first reads only the test files' paths
//! (each file's suite is its path below the directory all of them share,
//! known only at the document's end), the second reads file by file, each
//! file's results named at once and handed on (to a streaming read's sink)
//! as they settle.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::counted::Counted;
use super::jsonparts::{CommonDir, Each, Tally, push, suite_of};
use super::{CaseSink, Report, Status, Suite};

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

/// A test file's path, all the first pass reads of it (its results only
/// counted).
#[derive(Deserialize)]
struct JestPath {
    #[serde(default)]
    name: String,
    #[serde(rename = "assertionResults", default)]
    _results: Tally,
}

/// The directory all the document's test files share (the first pass).
pub fn shared_dir<R: Read>(input: R) -> Result<String, serde_json::Error> {
    let mut dir = CommonDir::default();
    let mut de = serde_json::Deserializer::from_reader(input);
    test_results(|f: JestPath| {
        dir.add(&f.name);
        Ok(())
    })
    .deserialize(&mut de)?;
    de.end()?;
    Ok(dir.finish())
}

/// The document's results into `report` (the second pass), handed on to
/// `sink` as each file is read when streaming.
pub fn read<R: Read>(
    input: R,
    prefix: &str,
    report: &mut Report,
    mut sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let mut suites = HashMap::new();
    let mut de = serde_json::Deserializer::from_reader(input);
    test_results(|f: JestFile| {
        let suite = suite_of(&mut suites, prefix, &f.name);
        file(report, suite, f);
        super::spill_some(report, &mut sink);
        Ok(())
    })
    .deserialize(&mut de)?;
    de.end()
}

fn file(report: &mut Report, suite: Arc<str>, f: JestFile) {
    let first = report.cases.len();
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
        name: suite.to_string(),
        time_s,
        tests: report.cases.len() - first,
    });
}

/// jest's top-level object: its `testResults` array read element by
/// element, everything else skipped.
struct TestResults<F, T>(F, std::marker::PhantomData<T>);

fn test_results<F, T>(f: F) -> TestResults<F, T> {
    TestResults(f, std::marker::PhantomData)
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> DeserializeSeed<'de>
    for TestResults<F, T>
{
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> Visitor<'de>
    for TestResults<F, T>
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with testResults")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            if key == "testResults" {
                map.next_value_seed(Each::new(&mut self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}
