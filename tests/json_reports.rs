//! mocha's, jest's, RSpec's, CTRF's, Cucumber's and Playwright's JSON documents and `go test
//! -json` streams are read in
//! bounded memory: a document in two passes (what names its tests first,
//! then test by test, each handed on as read), a stream line by line. This
//! holds them to a straightforward reading of the whole document kept here
//! (a `serde_json::Value`, the way tardy read them before), and the streamed
//! `tests show` and `tests diff` to the same commands on the run read whole,
//! on random documents large enough to be handed on in several chunks:
//! titles that repeat, pending tests, failed hooks, retries, tests without a
//! time, files in several directories.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Value, json};
use tardy::analyze::suite::{DiffBuilder, diff, show, show_run};
use tardy::ingest::reports::{Report, Status, read_run};

/// A small random generator, so that a drawn seed makes a large document.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What a reading gives of each test: suite, name, status, duration, retries.
type Row = (String, String, Status, Option<f64>, u32);

fn rows(r: &Report) -> Vec<Row> {
    (r.cases.iter())
        .map(|c| {
            (
                c.id.suite.to_string(),
                c.id.name.clone(),
                c.status,
                c.duration_s,
                c.retries,
            )
        })
        .collect()
}

/// The directory every path shares.
fn shared(paths: &[&str]) -> String {
    let mut dirs = paths
        .iter()
        .map(|p| &p[..p.rfind('/').map_or(0, |i| i + 1)]);
    let Some(first) = dirs.next() else {
        return String::new();
    };
    let mut common = first.to_string();
    for d in dirs {
        let n = (common.bytes().zip(d.bytes()))
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(common[..n].rfind('/').map_or(0, |i| i + 1));
    }
    common
}

fn ms(v: &Value) -> Option<f64> {
    v.as_f64()
        .filter(|m| m.is_finite() && *m >= 0.0)
        .map(|m| m / 1e3)
}

/// mocha's document as tardy read it whole: a pending test is one of
/// `tests` whose title and file `pending` lists (as many times as listed); a
/// failure no test in `tests` accounts for is a failed hook, an errored
/// result at the end.
fn mocha_reference(doc: &Value) -> (Vec<Row>, Option<f64>) {
    let list = |k: &str| doc[k].as_array().cloned().unwrap_or_default();
    let (tests, pending, failures) = (list("tests"), list("pending"), list("failures"));
    let key = |t: &Value| {
        (
            t["fullTitle"].as_str().unwrap_or("").to_string(),
            t["file"].as_str().map(str::to_string),
        )
    };
    let files: Vec<&str> = tests.iter().filter_map(|t| t["file"].as_str()).collect();
    let prefix = shared(&files);
    let suite = |t: &Value| {
        let f = t["file"].as_str().unwrap_or("");
        f.strip_prefix(prefix.as_str()).unwrap_or(f).to_string()
    };
    let mut left: HashMap<_, usize> = HashMap::new();
    pending
        .iter()
        .for_each(|t| *left.entry(key(t)).or_default() += 1);
    let mut in_tests: HashMap<_, usize> = HashMap::new();
    let mut out = Vec::new();
    for t in &tests {
        *in_tests.entry(key(t)).or_default() += 1;
        let retry = t["currentRetry"].as_u64().unwrap_or(0) as u32;
        let failed = t["err"].as_object().is_some_and(|e| !e.is_empty());
        let status = if failed {
            Status::Failed
        } else if let Some(n) = left.get_mut(&key(t)).filter(|n| **n > 0) {
            *n -= 1;
            Status::Skipped
        } else if retry > 0 {
            Status::Flaky
        } else {
            Status::Passed
        };
        let name = key(t).0;
        out.push((suite(t), name, status, ms(&t["duration"]), retry));
    }
    for f in &failures {
        match in_tests.get_mut(&key(f)).filter(|n| **n > 0) {
            Some(n) => *n -= 1,
            None => out.push((suite(f), key(f).0, Status::Errored, None, 0)),
        }
    }
    (out, ms(&doc["stats"]["duration"]))
}

/// A mocha document of `n` tests: titles drawn from a pool (they repeat),
/// files in a few directories, some pending, some failed, some retried,
/// some without a time; failures that are hooks; `failures` before `tests`
/// when `failures_first` (a writer other than mocha's own may order keys so).
fn mocha_doc(rng: &mut Rng, n: usize, failures_first: bool) -> (String, Value) {
    let dirs = [
        "/ci/repo/test/",
        "/ci/repo/test/unit/",
        "/ci/repo/test/api/v2/",
    ];
    let pool = (n as u64 / 3).max(1);
    let (mut tests, mut pending, mut failures) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let file = format!("{}f{}.spec.js", dirs[rng.below(3) as usize], rng.below(5));
        let title = format!("Calc item {}", rng.below(pool));
        let mut t = json!({"title": "t", "fullTitle": title, "file": file,
                           "currentRetry": if rng.below(50) == 0 { 1 } else { 0 }, "err": {}});
        match rng.below(40) {
            0 => {
                t["err"] = json!({"message": "expected 1", "stack": "AssertionError"});
                failures.push(t.clone());
            }
            1 => pending.push(t.clone()), // pending: no duration
            2 => {}                       // a time mocha did not take
            _ => t["duration"] = json!(rng.below(300)),
        }
        tests.push(t);
    }
    for h in 0..rng.below(4) {
        failures.push(json!({"title": "\"before all\" hook", "fullTitle": format!("Calc \"before all\" hook {h}"),
                             "file": format!("{}hooks.spec.js", dirs[rng.below(3) as usize]),
                             "err": {"message": "boom"}}));
    }
    let stats = json!({"tests": n, "duration": rng.below(100_000)});
    let passes: Vec<&Value> = tests.iter().filter(|t| t["duration"].is_number()).collect();
    // In the writer's order (serde_json's map would sort the keys).
    let (tests, pending, failures) = (json!(tests), json!(pending), json!(failures));
    let text = if failures_first {
        format!(
            r#"{{"stats":{stats},"failures":{failures},"tests":{tests},"pending":{pending},"passes":{}}}"#,
            json!(passes)
        )
    } else {
        format!(
            r#"{{"stats":{stats},"tests":{tests},"pending":{pending},"failures":{failures},"passes":{}}}"#,
            json!(passes)
        )
    };
    let doc = serde_json::from_str(&text).unwrap();
    (text, doc)
}

/// jest's document as tardy read it whole: each file's results in its
/// suite, the file's path below the directory all files share; a file that
/// did not run, one errored result.
fn jest_reference(doc: &Value) -> Vec<Row> {
    let files = doc["testResults"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = files
        .iter()
        .map(|f| f["name"].as_str().unwrap_or(""))
        .collect();
    let prefix = shared(&names);
    let mut out = Vec::new();
    for f in &files {
        let path = f["name"].as_str().unwrap_or("");
        let suite = path
            .strip_prefix(prefix.as_str())
            .unwrap_or(path)
            .to_string();
        let results = f["assertionResults"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for t in &results {
            let retries = (t["invocations"].as_u64().unwrap_or(1) as u32).saturating_sub(1);
            let status = match t["status"].as_str().unwrap_or("") {
                "passed" if retries > 0 => Status::Flaky,
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped,
            };
            let name = (t["fullName"].as_str())
                .unwrap_or(t["title"].as_str().unwrap_or(""))
                .to_string();
            out.push((suite.clone(), name, status, ms(&t["duration"]), retries));
        }
        if results.is_empty() && !f["testExecError"].is_null() {
            out.push((
                suite,
                "(test file failed to run)".into(),
                Status::Errored,
                None,
                0,
            ));
        }
    }
    out
}

fn jest_doc(rng: &mut Rng, n: usize) -> Value {
    let dirs = ["/ci/repo/src/", "/ci/repo/src/ui/", "/ci/repo/src/api/v2/"];
    let mut files = Vec::new();
    let mut left = n;
    while left > 0 || files.is_empty() {
        let k = (rng.below(2500) as usize).min(left);
        left -= k;
        let pool = (k as u64 / 2).max(1);
        let results: Vec<Value> = (0..k)
            .map(|_| {
                let status = ["passed", "passed", "passed", "failed", "pending", "todo"];
                let status = status[rng.below(6) as usize];
                let mut t = json!({"ancestorTitles": ["Calc"], "title": "adds", "status": status});
                if rng.below(20) != 0 {
                    t["fullName"] = json!(format!("Calc adds {}", rng.below(pool)));
                }
                if rng.below(10) != 0 {
                    t["duration"] = json!(rng.below(500));
                }
                if rng.below(30) == 0 {
                    t["invocations"] = json!(2);
                }
                t
            })
            .collect();
        let mut f = json!({"name": format!("{}m{}/f{}.test.js", dirs[rng.below(3) as usize], rng.below(4), files.len()),
                           "startTime": 1000, "endTime": 1000 + rng.below(5000), "assertionResults": results});
        if k == 0 && rng.below(2) == 0 {
            f["testExecError"] = json!({"message": "Cannot find module"});
        }
        files.push(f);
    }
    json!({"numTotalTests": n, "numFailedTests": 0, "success": false, "testResults": files})
}

/// jest's document in jest's order: the counts first (serde_json's map
/// would sort the keys).
fn jest_text(doc: &Value) -> String {
    format!(
        r#"{{"numTotalTests":{},"numFailedTests":0,"success":false,"testResults":{}}}"#,
        doc["numTotalTests"], doc["testResults"]
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The run `paths` streamed (show and diff) as read whole.
fn streamed_as_whole(before: &[PathBuf], after: &[PathBuf]) {
    for paths in [before, after] {
        let whole = serde_json::to_value(show(&read_run(paths, false).unwrap(), 10)).unwrap();
        let streamed = serde_json::to_value(show_run(paths, false, 10).unwrap()).unwrap();
        assert_eq!(streamed, whole, "tests show of {paths:?}");
    }
    let reports = |p: &[PathBuf]| vec![read_run(p, false).unwrap()];
    let whole = serde_json::to_value(diff(&reports(before), &reports(after))).unwrap();
    let mut b = DiffBuilder::new();
    b.read(0, before, false).unwrap();
    b.read(1, after, false).unwrap();
    assert_eq!(
        serde_json::to_value(b.finish()).unwrap(),
        whole,
        "tests diff"
    );
}

/// RSpec's document (examples in files of a few directories, a summary
/// after them) and what tardy reads of it: each example in the suite of its
/// file below the directory all share.
fn rspec_doc(rng: &mut Rng, n: usize) -> (String, Vec<Row>) {
    let dirs = ["./spec/", "./spec/models/", "./spec/api/v2/"];
    let (mut examples, mut paths) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let path = format!("{}f{}_spec.rb", dirs[rng.below(3) as usize], rng.below(6));
        let status = ["passed", "passed", "failed", "pending"][rng.below(4) as usize];
        let mut e = json!({"full_description": format!("Calc adds {}", rng.below(n as u64 / 2 + 1)),
                           "file_path": path, "status": status});
        if rng.below(10) != 0 {
            e["run_time"] = json!(rng.below(10_000) as f64 / 1e5);
        }
        paths.push(path);
        examples.push(e);
    }
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let prefix = shared(&refs);
    let rows = (examples.iter().zip(&paths))
        .map(|(e, p)| {
            let status = match e["status"].as_str().unwrap() {
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped,
            };
            let d = e["run_time"].as_f64().map(|s| s * 1e3 / 1e3);
            let name = e["full_description"].as_str().unwrap().to_string();
            (
                p.strip_prefix(prefix.as_str()).unwrap().to_string(),
                name,
                status,
                d,
                0,
            )
        })
        .collect();
    let text = format!(
        r#"{{"version":"3.12.0","examples":{},"summary":{{"duration":12.5,"example_count":{n},"errors_outside_of_examples_count":0}}}}"#,
        json!(examples)
    );
    (text, rows)
}

/// A CTRF report (tests with a suite, a path or neither; a summary that
/// counts one failure more than it lists when `short`) and what tardy reads.
fn ctrf_doc(rng: &mut Rng, n: usize, short: bool) -> (String, Vec<Row>) {
    let mut tests = Vec::new();
    for _ in 0..n {
        let status = ["passed", "passed", "failed", "skipped", "other"][rng.below(5) as usize];
        let mut t = json!({"name": format!("adds {}", rng.below(n as u64 / 2 + 1)), "status": status,
                           "duration": rng.below(400)});
        match rng.below(3) {
            0 => t["suite"] = json!(format!("calc > group {}", rng.below(4))),
            1 => {
                t["filePath"] = json!(format!(
                    "/ci/repo/src/m{}/f{}.test.js",
                    rng.below(3),
                    rng.below(5)
                ))
            }
            _ => {}
        }
        if rng.below(25) == 0 {
            t["retries"] = json!(1);
        }
        tests.push(t);
    }
    let paths: Vec<&str> = tests
        .iter()
        .filter_map(|t| t["filePath"].as_str())
        .collect();
    let prefix = shared(&paths);
    let mut rows: Vec<Row> = (tests.iter())
        .map(|t| {
            let retries = t["retries"].as_u64().unwrap_or(0) as u32;
            let status = match t["status"].as_str().unwrap() {
                "passed" if retries > 0 => Status::Flaky,
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                _ => Status::Skipped,
            };
            let suite = match (t["suite"].as_str(), t["filePath"].as_str()) {
                (Some(s), _) => s.to_string(),
                (None, Some(f)) => f.strip_prefix(prefix.as_str()).unwrap().to_string(),
                _ => String::new(),
            };
            let name = t["name"].as_str().unwrap().to_string();
            (suite, name, status, ms(&t["duration"]), retries)
        })
        .collect();
    let failed = rows.iter().filter(|r| r.2 == Status::Failed).count() + usize::from(short);
    if short {
        let what = "(1 failures the report counts but does not list)".to_string();
        rows.push(("jest".into(), what, Status::Failed, None, 0));
    }
    let text = format!(
        r#"{{"reportFormat":"CTRF","results":{{"tool":{{"name":"jest"}},"tests":{},"summary":{{"tests":{n},"failed":{failed},"start":1,"stop":5000}}}}}}"#,
        json!(tests)
    );
    (text, rows)
}

/// The first row where two readings part, if any.
fn first_difference(got: &[Row], want: &[Row]) -> Option<String> {
    if let Some(i) = (0..got.len().min(want.len())).find(|&i| got[i] != want[i]) {
        return Some(format!(
            "row {i}: read {:?}, expected {:?}",
            got[i], want[i]
        ));
    }
    (got.len() != want.len()).then(|| format!("{} rows read, {} expected", got.len(), want.len()))
}

/// A Cucumber JSON report (features named or known by their file only,
/// backgrounds, outlines, hooks, steps without a result or a time) and what
/// tardy reads: a scenario in its feature's suite, failed when a step or
/// hook failed, errored when one is undefined or pending, skipped when all
/// were skipped, its time its steps' and hooks' (and its background's).
fn cucumber_doc(rng: &mut Rng, n: usize) -> (String, Vec<Row>) {
    let (mut features, mut rows) = (Vec::new(), Vec::new());
    let mut left = n;
    let mut f = 0;
    while left > 0 {
        let named = rng.below(4) != 0;
        let suite = if named {
            format!("Feature {f}")
        } else {
            format!("features/f{f}.feature")
        };
        let mut elements = Vec::new();
        // What the background before the next scenario adds to it.
        let mut pending: Option<(Vec<&str>, u64, bool)> = None;
        let per = (1 + rng.below(300) as usize).min(left);
        for k in 0..per {
            if rng.below(8) == 0 {
                let (steps, statuses, ns, timed) = steps(rng);
                elements.push(json!({"type": "background", "keyword": "Background", "name": "", "steps": steps}));
                pending = Some((statuses, ns, timed));
            }
            let outline = rng.below(5) == 0;
            let line = 10 + k as u64;
            let title = format!("scenario {}", rng.below(per as u64));
            let (steps, mut statuses, mut ns, mut timed) = steps(rng);
            let mut e = json!({"type": "scenario", "keyword": if outline { "Scenario Outline" } else { "Scenario" },
                               "name": title, "line": line, "steps": steps});
            if rng.below(3) == 0 {
                let (hooks, st, hn, ht) = steps_of(rng, 1);
                e["before"] = hooks;
                statuses.extend(st);
                ns += hn;
                timed |= ht;
            }
            if let Some((st, bn, bt)) = pending.take() {
                statuses.extend(st);
                ns += bn;
                timed |= bt;
            }
            elements.push(e);
            let status = if statuses.contains(&"failed") {
                Status::Failed
            } else if statuses
                .iter()
                .any(|s| matches!(*s, "undefined" | "pending"))
            {
                Status::Errored
            } else if statuses.is_empty() || statuses.contains(&"passed") {
                Status::Passed
            } else {
                Status::Skipped
            };
            let name = if outline {
                format!("{title} (line {line})")
            } else {
                title
            };
            rows.push((
                suite.clone(),
                name,
                status,
                timed.then_some(ns as f64 / 1e9),
                0,
            ));
        }
        let mut feature = json!({"elements": elements, "id": format!("f{f}"), "keyword": "Feature",
                                 "uri": format!("features/f{f}.feature")});
        if named {
            feature["name"] = json!(suite);
        }
        features.push(feature);
        left -= per;
        f += 1;
    }
    (json!(features).to_string(), rows)
}

/// A scenario's steps: the JSON, each result's status, the nanoseconds
/// they add up to, and whether any step had a result.
fn steps(rng: &mut Rng) -> (Value, Vec<&'static str>, u64, bool) {
    let k = rng.below(5) as usize;
    steps_of(rng, k)
}

fn steps_of(rng: &mut Rng, k: usize) -> (Value, Vec<&'static str>, u64, bool) {
    let (mut out, mut statuses, mut ns, mut timed) = (Vec::new(), Vec::new(), 0, false);
    for i in 0..k {
        let status = [
            "passed",
            "passed",
            "passed",
            "failed",
            "skipped",
            "undefined",
            "pending",
        ][rng.below(7) as usize];
        let mut step = json!({"keyword": "Given ", "name": format!("step {i}"), "line": i});
        match rng.below(6) {
            0 => {} // no result at all
            1 => {
                // A result without a time counts as no time, not none.
                step["result"] = json!({"status": status});
                statuses.push(status);
                timed = true;
            }
            _ => {
                let d = rng.below(50_000_000);
                step["result"] = json!({"status": status, "duration": d});
                statuses.push(status);
                ns += d;
                timed = true;
            }
        }
        out.push(step);
    }
    (json!(out), statuses, ns, timed)
}

/// Playwright's JSON report (files, nested describes, projects, retries,
/// tests without a result, errors outside any test) and what tardy reads.
fn playwright_doc(rng: &mut Rng, n: usize) -> (String, Vec<Row>) {
    let (mut files, mut rows) = (Vec::new(), Vec::new());
    let mut left = n;
    let mut f = 0;
    while left > 0 {
        let file = format!("tests/f{f}.spec.ts");
        let mut specs = Vec::new();
        let mut inner = Vec::new();
        let per = (1 + rng.below(200) as usize).min(left);
        let mut made = 0;
        // Specs of the file, then of a describe inside it.
        let mut specs_in = |rng: &mut Rng, suite: &str, out: &mut Vec<Value>, count: usize| {
            for _ in 0..count {
                let title = format!("works {}", rng.below(50));
                let mut tests = Vec::new();
                for project in ["", "chromium", "firefox"]
                    .iter()
                    .take(1 + rng.below(3) as usize)
                {
                    let status = ["expected", "expected", "unexpected", "flaky", "skipped"]
                        [rng.below(5) as usize];
                    let expected = if status == "skipped" || rng.below(10) == 0 {
                        "skipped"
                    } else {
                        "passed"
                    };
                    let attempts = if status == "skipped" {
                        rng.below(2)
                    } else {
                        1 + rng.below(3)
                    };
                    let mut results = Vec::new();
                    let mut last = None;
                    for _ in 0..attempts {
                        let st =
                            ["passed", "failed", "timedOut", "interrupted"][rng.below(4) as usize];
                        let d = rng.below(20_000);
                        results
                            .push(json!({"status": st, "duration": d, "errors": [], "stdout": []}));
                        last = Some((st, d));
                    }
                    tests.push(
                        json!({"projectName": project, "expectedStatus": expected, "status": status,
                                      "results": results, "annotations": []}),
                    );
                    let st = match status {
                        "flaky" => Status::Flaky,
                        "skipped" => Status::Skipped,
                        "expected" if expected == "skipped" => Status::Skipped,
                        "expected" => Status::Passed,
                        _ => match last {
                            Some(("timedOut" | "interrupted", _)) => Status::Errored,
                            _ => Status::Failed,
                        },
                    };
                    let name = if project.is_empty() {
                        title.clone()
                    } else {
                        format!("{title} [{project}]")
                    };
                    rows.push((
                        suite.to_string(),
                        name,
                        st,
                        last.map(|l| l.1 as f64 / 1e3),
                        attempts.saturating_sub(1) as u32,
                    ));
                }
                out.push(json!({"title": title, "ok": true, "tests": tests}));
            }
        };
        let here = per / 2;
        specs_in(rng, &file, &mut specs, here);
        made += here;
        let describe = format!("group {}", rng.below(3));
        let mut dspecs = Vec::new();
        specs_in(
            rng,
            &format!("{file} > {describe}"),
            &mut dspecs,
            per - made,
        );
        inner.push(json!({"title": describe, "file": file, "specs": dspecs, "suites": []}));
        files.push(json!({"title": file, "file": file, "specs": specs, "suites": inner}));
        left -= per;
        f += 1;
    }
    let errors = rng.below(3);
    if errors > 0 {
        rows.push((
            String::new(),
            format!("({errors} errors outside any test)"),
            Status::Errored,
            None,
            0,
        ));
    }
    let errs: Vec<Value> = (0..errors)
        .map(|i| json!({"message": format!("boom {i}")}))
        .collect();
    let doc = json!({"config": {"version": "1.49.0"}, "suites": files, "errors": errs, "stats": {"expected": 1}});
    (doc.to_string(), rows)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn mocha_read_in_two_passes_is_the_whole_document_read(
        seed in 1u64.., n in prop_oneof![0usize..50, 9_000usize..14_000], first in any::<bool>()
    ) {
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let (a_text, a) = mocha_doc(&mut rng, n, first);
        let (b_text, _) = mocha_doc(&mut rng, n / 2 + 10, !first);
        let (pa, pb) = (write(dir.path(), "a.json", &a_text), write(dir.path(), "b.json", &b_text));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        let (want, wall) = mocha_reference(&a);
        prop_assert_eq!(rows(&r), want);
        prop_assert_eq!(r.suite_wall_s(), wall);
        prop_assert_eq!(r.suites[0].tests, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
        streamed_as_whole(&[pb, pa.clone()], &[pa]);
    }

    #[test]
    fn jest_read_in_two_passes_is_the_whole_document_read(
        seed in 1u64.., n in prop_oneof![0usize..50, 9_000usize..14_000]
    ) {
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let a = jest_doc(&mut rng, n);
        let b = jest_doc(&mut rng, n / 2 + 10);
        let (pa, pb) = (write(dir.path(), "a.json", &jest_text(&a)), write(dir.path(), "b.json", &jest_text(&b)));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        prop_assert_eq!(rows(&r), jest_reference(&a));
        let per_suite: usize = r.suites.iter().map(|s| s.tests).sum();
        prop_assert_eq!(per_suite, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
        streamed_as_whole(&[pa.clone(), pb], &[pa]);
    }

    #[test]
    fn rspec_and_ctrf_read_in_two_passes_are_the_whole_document_read(
        seed in 1u64.., n in prop_oneof![0usize..50, 9_000usize..14_000], short in any::<bool>()
    ) {
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let (ra, want) = rspec_doc(&mut rng, n);
        let (rb, _) = rspec_doc(&mut rng, n / 2 + 10);
        let (pa, pb) = (write(dir.path(), "a.json", &ra), write(dir.path(), "b.json", &rb));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        prop_assert_eq!(rows(&r), want);
        prop_assert_eq!(r.suites[0].tests, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
        let (ca, want) = ctrf_doc(&mut rng, n, short);
        let (cb, _) = ctrf_doc(&mut rng, n / 2 + 10, !short);
        let (pa, pb) = (write(dir.path(), "c.json", &ca), write(dir.path(), "d.json", &cb));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        prop_assert_eq!(rows(&r), want);
        prop_assert_eq!(r.suites[0].tests, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
    }

    #[test]
    fn cucumber_and_playwright_read_a_file_at_a_time_are_the_whole_document_read(
        seed in 1u64.., n in prop_oneof![1usize..50, 9_000usize..14_000]
    ) {
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let (ca, want) = cucumber_doc(&mut rng, n);
        let (cb, _) = cucumber_doc(&mut rng, n / 2 + 10);
        let (pa, pb) = (write(dir.path(), "a.json", &ca), write(dir.path(), "b.json", &cb));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        prop_assert_eq!(first_difference(&rows(&r), &want), None);
        prop_assert_eq!(r.suites[0].tests, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
        let (wa, want) = playwright_doc(&mut rng, n);
        let (wb, _) = playwright_doc(&mut rng, n / 2 + 10);
        let (pa, pb) = (write(dir.path(), "c.json", &wa), write(dir.path(), "d.json", &wb));
        let r = read_run(std::slice::from_ref(&pa), false).unwrap();
        prop_assert_eq!(first_difference(&rows(&r), &want), None);
        prop_assert_eq!(r.suites[0].tests, r.cases.len());
        streamed_as_whole(std::slice::from_ref(&pa), std::slice::from_ref(&pb));
    }

    #[test]
    fn a_go_test_json_stream_read_line_by_line_is_the_run_read_whole(
        seed in 1u64.., n in prop_oneof![1usize..50, 9_000usize..14_000]
    ) {
        let mut rng = Rng(seed);
        let dir = tempfile::tempdir().unwrap();
        let mut doc = String::new();
        let mut per_package: HashMap<String, usize> = HashMap::new();
        let mut failed = std::collections::HashSet::new();
        let line = |doc: &mut String, v: Value| {
            doc.push_str(&v.to_string());
            doc.push('\n');
        };
        let packages = 1 + rng.below(8);
        for i in 0..n {
            let pkg = format!("example.com/m/p{}", (i as u64 * packages) / n as u64);
            let test = match rng.below(10) {
                0 => format!("TestParent{}/case{}", rng.below(20), rng.below(5)),
                1 => format!("TestParent{}", rng.below(20)),
                _ => format!("Test{}", rng.below(n as u64)),
            };
            line(&mut doc, json!({"Action": "run", "Package": pkg, "Test": test}));
            line(&mut doc, json!({"Action": "output", "Package": pkg, "Test": test, "Output": "=== RUN\n"}));
            let action = ["pass", "pass", "pass", "fail", "skip"][rng.below(5) as usize];
            line(&mut doc, json!({"Action": action, "Package": pkg, "Test": test, "Elapsed": rng.below(900) as f64 / 1e3}));
            *per_package.entry(pkg.clone()).or_default() += 1;
            if action == "fail" {
                failed.insert(pkg);
            }
        }
        let mut names: Vec<&String> = per_package.keys().collect();
        names.sort();
        for p in &names {
            let action = if failed.contains(*p) { "fail" } else { "pass" };
            line(&mut doc, json!({"Action": action, "Package": p, "Elapsed": 2.5}));
        }
        let path = dir.path().join("go.json");
        std::fs::write(&path, &doc).unwrap();
        let r = read_run(std::slice::from_ref(&path), false).unwrap();
        prop_assert_eq!(r.cases.len(), n);
        for s in &r.suites {
            prop_assert_eq!(Some(&s.tests), per_package.get(&s.name), "{}", s.name);
        }
        let other = dir.path().join("go2.json");
        std::fs::write(&other, doc.replace("\"Elapsed\":0.1", "\"Elapsed\":0.3")).unwrap();
        streamed_as_whole(std::slice::from_ref(&path), &[other]);
    }
}

/// Dart's JSON reporter stream of `n` tests (hidden loading tests, skips,
/// failures, `error` events during and after tests, tests left unfinished),
/// handed on as read after a first pass finds the errors that come after
/// their test was done: the same show and diff as the stream read whole.
#[test]
fn a_dart_stream_handed_on_as_read_is_the_stream_read_whole() {
    let mut rng = Rng(17);
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (f, n) in [("a.json", 20_000u64), ("b.json", 15_000)] {
        let mut out = String::new();
        let mut line = |v: Value| {
            out.push_str(&v.to_string());
            out.push('\n');
        };
        line(
            json!({"protocolVersion": "0.1.1", "runnerVersion": "1.24.0", "type": "start", "time": 0}),
        );
        line(
            json!({"suite": {"id": 0, "path": "test/calc_test.dart"}, "type": "suite", "time": 1}),
        );
        let mut t = 2;
        let mut pending_late = Vec::new();
        for id in 1..=n {
            let hidden = id % 997 == 1;
            line(
                json!({"test": {"id": id, "name": format!("Calc item {}", id % (n / 2)), "suiteID": 0}, "type": "testStart", "time": t}),
            );
            if id % 50 == 3 {
                line(json!({"testID": id, "error": "boom", "type": "error", "time": t}));
            }
            t += rng.below(30);
            if id == n {
                break; // cut short: started, never done
            }
            let result = ["success", "success", "failure", "error"][rng.below(4) as usize];
            line(
                json!({"testID": id, "result": result, "skipped": rng.below(40) == 0, "hidden": hidden, "type": "testDone", "time": t}),
            );
            if id % 61 == 5 {
                pending_late.push(id);
            }
            if id % 7 == 0 {
                for late in pending_late.drain(..) {
                    line(json!({"testID": late, "error": "late", "type": "error", "time": t}));
                }
            }
        }
        line(json!({"success": false, "type": "done", "time": t}));
        files.push(write(dir.path(), f, &out));
    }
    let r = read_run(&files[..1], false).unwrap();
    assert!(r.cases.iter().any(|c| c.status == Status::Errored));
    streamed_as_whole(&files[..1], &files[1..]);
    streamed_as_whole(&files, &files[..1]);
}

/// A real mocha file of 1% failures and exactly the cap's number of tests
/// reads: its failures are the same tests again, not more results.
#[test]
fn mocha_failures_do_not_count_twice_against_the_results_cap() {
    let mut rng = Rng(9);
    let (text, doc) = mocha_doc(&mut rng, 3000, false);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "m.json", &text);
    let hooks = (doc["failures"].as_array().unwrap().iter())
        .filter(|f| f["fullTitle"].as_str().unwrap().contains("hook"))
        .count();
    let tardy = env!("CARGO_BIN_EXE_tardy");
    let out = std::process::Command::new(tardy)
        .args([
            "--max-results",
            &(3000 + hooks).to_string(),
            "tests",
            "show",
            "--format",
            "json",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(show["tests"], json!(3000 + hooks));
}

/// A diff refused for the names it would hold leaves nothing held behind:
/// the next read on the same thread (a server's next request) is not
/// refused for the names of the one before. A run read whole counts its
/// names while the report lives, and gives them back when it drops.
#[test]
fn a_diff_refused_for_its_names_leaves_none_held() {
    use tardy::ingest::limits::{Limits, start};
    let dir = tempfile::tempdir().unwrap();
    let report = |file: &str, n: usize, pad: usize| {
        let cases: String = (0..n)
            .map(|i| {
                format!(
                    "<testcase classname=\"c\" name=\"test_{i}_{}\" time=\"0.001\"/>\n",
                    "x".repeat(pad)
                )
            })
            .collect();
        write(
            dir.path(),
            file,
            &format!("<testsuite name=\"s\">\n{cases}</testsuite>\n"),
        )
    };
    // 5,000 names of about 310 bytes: 1.5 MiB; 4,500 of 160: 0.7 MiB
    // (readers check every 4,096 events, a case or so each).
    let (a, small) = (report("a.xml", 5000, 300), report("small.xml", 4500, 150));
    let _g = start(Limits::cli(1024, 1_000_000).with_names_mib(1));
    let mut b = DiffBuilder::new();
    let err = b.read(0, std::slice::from_ref(&a), false).unwrap_err();
    assert!(err.to_string().contains("--max-names-mib"), "{err}");
    // Read whole and shown after it: nothing held, nothing refused.
    let r = read_run(std::slice::from_ref(&small), false).unwrap();
    assert_eq!(r.cases.len(), 4500);
    // Held while another is read whole: 1.4 MiB at once, refused; once the
    // first drops, read.
    let refused = |p: &std::path::Path| match read_run(&[p.to_path_buf()], false) {
        Ok(r) => panic!("read {} cases, not refused", r.cases.len()),
        Err(e) => assert!(e.to_string().contains("--max-names-mib"), "{e}"),
    };
    refused(&small);
    drop(r);
    assert_eq!(
        show_run(std::slice::from_ref(&small), false, 10)
            .unwrap()
            .tests,
        4500
    );
    assert_eq!(
        read_run(std::slice::from_ref(&small), false)
            .map(|r| r.cases.len())
            .map_err(|e| e.to_string()),
        Ok(4500)
    );
    // A file over the cap read whole on its own is refused.
    refused(&a);
}
