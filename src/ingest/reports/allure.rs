//! Allure 2 results (`--alluredir`: allure-pytest, allure-junit5,
//! allure-jest, allure-playwright...): a folder of `*-result.json` files,
//! one per test attempt, beside containers and attachments (not read).
//!
//! A result's `name` is the test (`parameters` make repeated names distinct
//! when the name does not show them), its `suite` labels (`parentSuite`,
//! `suite`, `subSuite`) the suite and `testClass` the class, `stop - start`
//! (milliseconds) its time. `broken` (an error outside an assertion) is
//! errored; `unknown` is errored too (the run lost track of it). Attempts
//! of one test share a `historyId`: they are merged in order of `start`
//! into one test, flaky when the last passed after a failure, failed when
//! the last failed ([`merge_attempts`], once every file of a run is read).

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::Arc;

use serde::Deserialize;

use super::bounded::Bounded;
use super::{Report, Status, TestCase, TestId};
use crate::ingest::error::IngestError;

/// The largest result file read (a result holds steps and attachment
/// names, not the attachments).
const RESULT_LIMIT: u64 = 64 << 20;

/// Whether a JSON document's head is an Allure result, by its keys alone
/// (`historyId`, `fullName` or `testCaseId` beside `uuid` and `status`).
pub fn sniff(head: &str) -> bool {
    let has = |k: &str| head.contains(&format!("\"{k}\""));
    has("uuid") && has("status") && (has("historyId") || has("fullName") || has("testCaseId"))
}

/// Whether a file named `name` with this head is an Allure result: a
/// `*-result.json` file with `uuid`, `status` and `name` is one, whatever
/// else it carries (older allure-java and other producers write no
/// `historyId` nor `fullName`).
pub fn sniff_named(name: &str, head: &str) -> bool {
    let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let has = |k: &str| head.contains(&format!("\"{k}\""));
    sniff(head) || (is_result_file(file) && has("uuid") && has("status") && has("name"))
}

/// Whether a file name is an Allure result's.
pub fn is_result_file(name: &str) -> bool {
    name.to_ascii_lowercase().ends_with("-result.json")
}

#[derive(Deserialize)]
struct Result {
    #[serde(default)]
    name: String,
    #[serde(rename = "fullName", default)]
    full_name: Option<String>,
    #[serde(rename = "historyId", default)]
    history_id: Option<String>,
    #[serde(default)]
    status: Option<String>,
    start: Option<f64>,
    stop: Option<f64>,
    #[serde(default)]
    labels: Vec<Pair>,
    #[serde(default)]
    parameters: Vec<Pair>,
}

#[derive(Deserialize)]
struct Pair {
    #[serde(default)]
    name: String,
    #[serde(default)]
    value: serde_json::Value,
}

impl Pair {
    fn text(&self) -> String {
        match &self.value {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        }
    }
}

/// One attempt read, for [`merge_attempts`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attempt {
    /// Index of its case in the report.
    pub case: usize,
    /// Attempts of one test share it.
    pub key: String,
    /// Its start (ms), for their order.
    pub start: f64,
}

pub fn read(
    input: impl BufRead,
    name: &str,
    report: &mut Report,
) -> std::result::Result<(), IngestError> {
    let (input, _budget) = Bounded::new(input, RESULT_LIMIT);
    let r: Result = serde_json::from_reader(input).map_err(|e| {
        IngestError::at(
            name,
            (e.line() > 0).then_some(e.line()),
            format!("expected an Allure result (name, status, start, stop): {e}"),
        )
    })?;
    // One result a file: a folder's files count together against the cap
    // on one input's results (a folder is one run).
    if let Some(why) = crate::ingest::limits::one_result() {
        return Err(IngestError::at(name, None, why));
    }
    let label = |k: &str| {
        r.labels
            .iter()
            .find(|l| l.name == k)
            .map(|l| l.text())
            .filter(|v| !v.is_empty())
    };
    let suite: Vec<String> = ["parentSuite", "suite", "subSuite"]
        .iter()
        .filter_map(|k| label(k))
        .collect();
    let class = label("testClass").unwrap_or_default();
    let mut test = r.name.clone();
    if !r.parameters.is_empty() && !test.contains('[') && !test.contains('(') {
        let shown: Vec<String> = r
            .parameters
            .iter()
            .map(|p| format!("{}={}", p.name, p.text()))
            .collect();
        test = format!("{test}[{}]", shown.join(", "));
    }
    let status = match r.status.as_deref() {
        Some("passed") => Status::Passed,
        Some("failed") => Status::Failed,
        Some("skipped") => Status::Skipped,
        // broken: an error outside an assertion; unknown: lost track.
        _ => Status::Errored,
    };
    let duration_s = match (r.start, r.stop) {
        (Some(a), Some(b)) if b >= a && a.is_finite() && b.is_finite() => Some((b - a) / 1e3),
        _ => None,
    };
    // Attempts of one test: its historyId, or else (older producers) its
    // full name, suite and class with the test's name and parameters.
    let key = r.history_id.clone().unwrap_or_else(|| {
        format!(
            "{}|{}|{class}|{test}",
            r.full_name.clone().unwrap_or_else(|| r.name.clone()),
            suite.join(" > ")
        )
    });
    let case = report.cases.len();
    report.push_case(TestCase {
        id: TestId::new(
            Arc::from(suite.join(" > ").as_str()),
            Arc::from(class.as_str()),
            test,
        ),
        duration_s,
        status,
        retries: 0,
        has_children: false,
    });
    report.hold_text(key.len() as u64);
    report.attempts.push(Attempt {
        case,
        key,
        start: r.start.filter(|s| s.is_finite()).unwrap_or(0.0),
    });
    Ok(())
}

/// Merge the attempts of each test (one `historyId`) read into `report`:
/// in order of start, the last one stays with the others counted as its
/// retries; flaky when it passed after a failure.
pub fn merge_attempts(report: &mut Report) {
    let attempts = std::mem::take(&mut report.attempts);
    if attempts.len() < 2 {
        return;
    }
    let mut by_key: HashMap<&str, Vec<&Attempt>> = HashMap::new();
    for a in &attempts {
        by_key.entry(a.key.as_str()).or_default().push(a);
    }
    let mut drop = vec![false; report.cases.len()];
    let mut merged = 0;
    for group in by_key.values_mut().filter(|g| g.len() > 1) {
        group.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.case.cmp(&b.case)));
        let Some((last, earlier)) = group.split_last() else {
            continue;
        };
        let failed_before = earlier.iter().any(|a| {
            report
                .cases
                .get(a.case)
                .is_some_and(|c| c.status.is_failure())
        });
        if let Some(c) = report.cases.get_mut(last.case) {
            c.retries = earlier.len() as u32;
            if c.status == Status::Passed && failed_before {
                c.status = Status::Flaky;
            }
        }
        for a in earlier {
            if let Some(d) = drop.get_mut(a.case) {
                *d = true;
                merged += 1;
            }
        }
    }
    if merged == 0 {
        return;
    }
    let mut k = 0;
    report.cases.retain(|_| {
        let keep = !drop[k];
        k += 1;
        keep
    });
    report.warnings.push(format!(
        "{merged} Allure results are earlier attempts of a test (same historyId): each test counts once, flaky when its last attempt passed after a failure"
    ));
}
