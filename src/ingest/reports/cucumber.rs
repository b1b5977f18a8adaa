//! Cucumber's JSON report (`cucumber-js --format json`, cucumber-jvm's and
//! cucumber-ruby's `json` plugin): an array of features, each with its
//! `elements` (scenarios, and backgrounds whose steps belong to the scenario
//! after them), each with `steps` and `before`/`after` hooks whose `result`
//! holds a `status` and a `duration` in nanoseconds.
//!
//! A scenario is a test in its feature's suite (an outline's rows told
//! apart by their examples line): failed
//! when a step or hook failed; errored when one is `undefined`, `pending` or
//! `ambiguous` (cucumber's strict mode, its default, fails the run for
//! those); skipped when every step was skipped; passed otherwise. Its time
//! is the sum of its steps' and hooks' (with its background's).

use std::sync::Arc;

use serde::Deserialize;

use super::{Report, Status, Suite, TestCase, TestId};

#[derive(Deserialize)]
pub(super) struct Feature {
    #[serde(default)]
    name: String,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    elements: Vec<super::counted::Counted<Element>>,
}

#[derive(Deserialize)]
pub(super) struct Element {
    #[serde(default)]
    name: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    keyword: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    steps: Vec<Step>,
    #[serde(default)]
    before: Vec<Step>,
    #[serde(default)]
    after: Vec<Step>,
}

#[derive(Deserialize)]
struct Step {
    #[serde(default)]
    result: Option<StepResult>,
}

#[derive(Deserialize)]
struct StepResult {
    #[serde(default)]
    status: String,
    #[serde(default)]
    duration: Option<f64>,
}

/// What a run of steps adds up to.
#[derive(Default)]
struct Outcome {
    failed: bool,
    broken: bool,
    ran: bool,
    any: bool,
    ns: f64,
}

impl Outcome {
    fn add(&mut self, steps: &[Step]) {
        for r in steps.iter().filter_map(|s| s.result.as_ref()) {
            self.any = true;
            match r.status.as_str() {
                "passed" => self.ran = true,
                "failed" => self.failed = true,
                "undefined" | "pending" | "ambiguous" => self.broken = true,
                _ => {}
            }
            if let Some(d) = r.duration.filter(|d| d.is_finite() && *d >= 0.0) {
                self.ns += d;
            }
        }
    }

    fn status(&self) -> Status {
        if self.failed {
            Status::Failed
        } else if self.broken {
            Status::Errored
        } else if self.ran || !self.any {
            Status::Passed
        } else {
            Status::Skipped
        }
    }
}

pub(super) fn read(features: Vec<Feature>, name: &str, report: &mut Report) {
    let first = report.cases.len();
    for f in features {
        let suite: Arc<str> = Arc::from(if f.name.is_empty() {
            f.uri.as_deref().unwrap_or("")
        } else {
            f.name.as_str()
        });
        let mut background = Outcome::default();
        for e in f.elements {
            let is_background = e.kind.as_deref() == Some("background")
                || e.keyword
                    .as_deref()
                    .is_some_and(|k| k.trim() == "Background");
            if is_background {
                background = Outcome::default();
                background.add(&e.before);
                background.add(&e.steps);
                background.add(&e.after);
                continue;
            }
            let mut o = std::mem::take(&mut background);
            o.add(&e.before);
            o.add(&e.steps);
            o.add(&e.after);
            // A Scenario Outline's rows share its name: each is told by
            // its examples row's line.
            let outline = e.keyword.as_deref().is_some_and(|k| k.contains("Outline"));
            let test = match e.line {
                Some(line) if outline => format!("{} (line {line})", e.name),
                _ => e.name.clone(),
            };
            report.cases.push(TestCase {
                id: TestId::new(suite.clone(), Arc::from(""), test),
                duration_s: o.any.then_some(o.ns / 1e9),
                status: o.status(),
                retries: 0,
                has_children: false,
            });
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: None,
        tests: report.cases.len() - first,
    });
}
