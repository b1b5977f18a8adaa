//! `go test -json` event streams (test2json NDJSON): a test's duration is the
//! `Elapsed` of its pass/fail/skip event; a parent test's time includes its
//! subtests (`Parent/sub`), so parents are marked (by `Report::mark_parents`)
//! and not summed; a package's own pass/fail event gives the suite's wall time.

use std::io::BufRead;

use serde::Deserialize;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::{Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "Test")]
    test: Option<String>,
    #[serde(rename = "Elapsed")]
    elapsed: Option<f64>,
}

pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    let first = report.cases.len();
    let empty: std::sync::Arc<str> = std::sync::Arc::from("");
    let mut packages: std::collections::HashMap<String, std::sync::Arc<str>> = Default::default();
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    for (i, line) in input.lines().enumerate() {
        if let Some(why) = crate::ingest::budget::check(i as u64 + 1) {
            return Err(IngestError::at(name, Some(i + 1), why));
        }
        let line =
            line.map_err(|e| IngestError::at(name, Some(i + 1), format!("cannot read: {e}")))?;
        budget.reset();
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('{') {
            continue; // build output interleaved by some wrappers
        }
        let ev: Event = serde_json::from_str(line).map_err(|e| {
            IngestError::at(
                name,
                Some(i + 1),
                format!("expected a test2json event: {e}"),
            )
        })?;
        let status = match ev.action.as_str() {
            "pass" => Status::Passed,
            "fail" => Status::Failed,
            "skip" => Status::Skipped,
            _ => continue,
        };
        let elapsed = ev.elapsed.filter(|e| e.is_finite() && *e >= 0.0);
        match ev.test {
            Some(test) => report.cases.push(TestCase {
                id: TestId::new(
                    packages
                        .entry(ev.package.clone())
                        .or_insert_with(|| std::sync::Arc::from(ev.package.as_str()))
                        .clone(),
                    empty.clone(),
                    test,
                ),
                duration_s: elapsed,
                status,
                retries: 0,
                has_children: false,
            }),
            None => {
                let tests = report.cases[first..]
                    .iter()
                    .filter(|c| *c.id.suite == *ev.package)
                    .count();
                report.suites.push(Suite {
                    name: ev.package,
                    time_s: elapsed,
                    tests,
                });
            }
        }
    }
    let _ = first;
    Ok(())
}
