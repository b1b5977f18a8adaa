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
//!
//! Read a feature at a time, each step folded into its scenario's outcome as
//! it is read: the steps are never held, and a streaming read's sink gets
//! each feature's scenarios once the feature is read (its name may follow
//! its elements: cucumber-js writes keys in alphabetical order).

use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeSeed;

use super::jsonparts::Each;
use super::{CaseSink, Report, Status, Suite, TestCase, TestId};

#[derive(Deserialize)]
struct Feature {
    #[serde(default)]
    name: String,
    #[serde(default)]
    uri: Option<String>,
    #[serde(default)]
    elements: Vec<super::counted::Counted<Element>>,
}

#[derive(Deserialize)]
struct Element {
    #[serde(default)]
    name: String,
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    keyword: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    #[serde(default)]
    steps: Outcome,
    #[serde(default)]
    before: Outcome,
    #[serde(default)]
    after: Outcome,
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
#[derive(Default, Clone, Copy)]
struct Outcome {
    failed: bool,
    broken: bool,
    ran: bool,
    any: bool,
    ns: f64,
}

impl Outcome {
    fn step(&mut self, r: &StepResult) {
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

    fn and(self, o: Outcome) -> Outcome {
        Outcome {
            failed: self.failed || o.failed,
            broken: self.broken || o.broken,
            ran: self.ran || o.ran,
            any: self.any || o.any,
            ns: self.ns + o.ns,
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

/// An array of steps (or hooks), each folded in as it is read.
impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut o = Outcome::default();
        Each::new(&mut |step: Step| {
            if let Some(r) = &step.result {
                o.step(r);
            }
            Ok(())
        })
        .deserialize(d)?;
        Ok(o)
    }
}

/// Read a Cucumber JSON report, each feature's scenarios handed to `sink`
/// (when streaming) once a chunk of them is held.
pub(super) fn read<R: Read>(
    input: R,
    name: &str,
    report: &mut Report,
    mut sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut tests = 0;
    Each::new(&mut |f: Feature| {
        tests += feature(f, report);
        super::spill_some(report, &mut sink);
        Ok(())
    })
    .deserialize(&mut de)?;
    de.end()?;
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: None,
        tests,
    });
    Ok(())
}

/// One feature's scenarios pushed: how many.
fn feature(f: Feature, report: &mut Report) -> usize {
    let suite: Arc<str> = Arc::from(if f.name.is_empty() {
        f.uri.as_deref().unwrap_or("")
    } else {
        f.name.as_str()
    });
    let mut background = Outcome::default();
    let mut n = 0;
    for super::counted::Counted(e) in f.elements {
        let is_background = e.kind.as_deref() == Some("background")
            || e.keyword
                .as_deref()
                .is_some_and(|k| k.trim() == "Background");
        let own = e.before.and(e.steps).and(e.after);
        if is_background {
            background = own;
            continue;
        }
        let o = std::mem::take(&mut background).and(own);
        // A Scenario Outline's rows share its name: each is told by its
        // examples row's line.
        let outline = e.keyword.as_deref().is_some_and(|k| k.contains("Outline"));
        let test = match e.line {
            Some(line) if outline => format!("{} (line {line})", e.name),
            _ => e.name,
        };
        report.push_case(TestCase {
            id: TestId::new(suite.clone(), super::EMPTY.clone(), test),
            duration_s: o.any.then_some(o.ns / 1e9),
            status: o.status(),
            retries: 0,
            has_children: false,
        });
        n += 1;
    }
    n
}
