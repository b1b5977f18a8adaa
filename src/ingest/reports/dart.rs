//! Dart and Flutter's `--reporter json` (`dart test`, `flutter test --machine`): one JSON
//! event a line. A test is its `testStart` (name, suite, start time in ms) and its
//! `testDone` (`result` success/failure/error, `skipped`, `hidden`); hidden tests are the
//! runner's own ("loading test/x_test.dart") and are left out. An `error` event after a
//! test was done makes it errored, as the protocol allows. `done` gives the run's time.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::sync::Arc;

use serde::Deserialize;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::{Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

/// Whether the head of a file looks like the Dart JSON reporter's stream.
pub fn sniff(head: &str) -> bool {
    head.contains("\"protocolVersion\"") && head.contains("\"runnerVersion\"")
        || head.contains("\"type\":\"testStart\"")
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    time: Option<f64>,
    suite: Option<SuiteInfo>,
    test: Option<TestInfo>,
    #[serde(rename = "testID")]
    test_id: Option<u64>,
    result: Option<String>,
    #[serde(default)]
    skipped: bool,
    #[serde(default)]
    hidden: bool,
}

#[derive(Deserialize)]
struct SuiteInfo {
    id: u64,
    #[serde(default)]
    path: Option<String>,
}

#[derive(Deserialize)]
struct TestInfo {
    id: u64,
    #[serde(default)]
    name: String,
    #[serde(rename = "suiteID")]
    suite_id: Option<u64>,
}

pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    read_pass(input, name, report, None, None)
}

/// [`read`], handing results on to `sink` as they are read. An `error`
/// event may come after its test was done, so a first pass finds those
/// tests (keeping the ids of tests done, 8 bytes a test) and the second
/// reads the stream with them known.
pub fn read_with<'a>(
    input: Box<dyn BufRead + 'a>,
    again: &dyn Fn() -> Result<Box<dyn BufRead + 'a>, IngestError>,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn super::CaseSink + '_)>,
) -> Result<(), IngestError> {
    if sink.is_none() {
        return read_pass(input, name, report, None, None);
    }
    let late = late_errors(input);
    read_pass(again()?, name, report, Some(&late), sink)
}

/// The tests an `error` event followed after they were done (the first
/// pass). A line that is not an event is left for the second pass to judge.
fn late_errors(input: impl BufRead) -> HashSet<u64> {
    let (mut input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let (mut started, mut done, mut late) = (HashSet::new(), HashSet::new(), HashSet::new());
    let mut line = String::new();
    for i in 1u64.. {
        if crate::ingest::limits::check(i, done.len().max(started.len())).is_some() {
            break;
        }
        line.clear();
        if !matches!(input.read_line(&mut line), Ok(n) if n > 0) {
            break;
        }
        budget.reset();
        let Ok(ev) = serde_json::from_str::<Event>(line.trim()) else {
            continue;
        };
        match (ev.kind.as_str(), ev.test.map(|t| t.id).or(ev.test_id)) {
            ("testStart", Some(id)) => {
                started.insert(id);
            }
            ("testDone", Some(id)) => {
                let was_started = started.remove(&id);
                if was_started && !ev.hidden {
                    done.insert(id);
                }
            }
            ("error", Some(id)) if done.contains(&id) => {
                late.insert(id);
            }
            _ => {}
        }
    }
    late
}

/// One pass over the stream; `late`: the tests an error followed after
/// they were done, when known ahead (then results are handed on to `sink`).
fn read_pass(
    input: impl BufRead,
    name: &str,
    report: &mut Report,
    late: Option<&HashSet<u64>>,
    mut sink: Option<&mut (dyn super::CaseSink + '_)>,
) -> Result<(), IngestError> {
    let mut first = report.cases.len();
    let mut spilled = 0;
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let mut suites: HashMap<u64, Arc<str>> = HashMap::new();
    // testID -> (name, suite, start ms)
    let mut started: HashMap<u64, (String, Arc<str>, Option<f64>)> = HashMap::new();
    // testID -> index in report.cases
    let mut done: HashMap<u64, usize> = HashMap::new();
    let empty: Arc<str> = Arc::from("");
    let mut wall = None;
    for (i, line) in input.lines().enumerate() {
        if let Some(why) = crate::ingest::limits::check(
            i as u64 + 1,
            (report.cases.len() + spilled).max(started.len()),
        ) {
            return Err(IngestError::at(name, Some(i + 1), why));
        }
        let line =
            line.map_err(|e| IngestError::at(name, Some(i + 1), format!("cannot read: {e}")))?;
        budget.reset();
        let line = line.trim();
        if !line.starts_with('{') {
            continue; // `flutter test --machine` may print other lines
        }
        let ev: Event = serde_json::from_str(line).map_err(|e| {
            IngestError::at(
                name,
                Some(i + 1),
                format!("expected a Dart JSON reporter event: {e}"),
            )
        })?;
        match ev.kind.as_str() {
            "suite" => {
                if let Some(s) = ev.suite {
                    let path = s.path.unwrap_or_default();
                    suites.insert(s.id, Arc::from(path.as_str()));
                }
            }
            "testStart" => {
                if let Some(t) = ev.test {
                    let suite = t
                        .suite_id
                        .and_then(|id| suites.get(&id).cloned())
                        .unwrap_or_else(|| empty.clone());
                    started.insert(t.id, (t.name, suite, ev.time));
                }
            }
            "testDone" => {
                let Some(id) = ev.test_id else { continue };
                let Some((test, suite, start)) = started.remove(&id) else {
                    continue;
                };
                if ev.hidden {
                    continue;
                }
                let status = if ev.skipped {
                    Status::Skipped
                } else {
                    match ev.result.as_deref() {
                        Some("success") => Status::Passed,
                        Some("failure") => Status::Failed,
                        _ => Status::Errored,
                    }
                };
                let duration_s = match (start, ev.time) {
                    (Some(a), Some(b)) if b >= a => Some((b - a) / 1e3),
                    _ => None,
                };
                let status = match late {
                    Some(l) if l.contains(&id) && !status.is_failure() => Status::Errored,
                    Some(_) => status,
                    None => {
                        done.insert(id, report.cases.len());
                        status
                    }
                };
                report.push_case(TestCase {
                    id: TestId::new(suite, empty.clone(), test),
                    duration_s,
                    status,
                    retries: 0,
                    has_children: false,
                });
                if let Some(s) = sink.as_deref_mut()
                    && report.cases.len() >= super::SPILL_CHUNK
                {
                    let n = report.cases.len() - 1;
                    spilled += n - first.min(n);
                    super::spill(report, s);
                    first = 0;
                }
            }
            "error" => {
                if let Some(&at) = ev.test_id.as_ref().and_then(|id| done.get(id))
                    && let Some(c) = report.cases.get_mut(at)
                    && !c.status.is_failure()
                {
                    c.status = Status::Errored;
                }
            }
            "done" => wall = ev.time.filter(|t| t.is_finite() && *t >= 0.0),
            _ => {}
        }
    }
    let unfinished = started.len();
    if unfinished > 0 {
        report.warnings.push(format!(
            "{name}: {unfinished} test(s) started but never finished (the run was cut short?); counted as failed"
        ));
        // A run cut short never reads as passed: the tests it was running failed.
        let mut left: Vec<_> = started.into_iter().collect();
        left.sort_by_key(|e| e.0);
        for (_, (test, suite, _)) in left {
            report.push_case(TestCase {
                id: TestId::new(suite, empty.clone(), test),
                duration_s: None,
                status: Status::Failed,
                retries: 0,
                has_children: false,
            });
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: wall.map(|t| t / 1e3),
        tests: report.cases.len() - first + spilled,
    });
    Ok(())
}
