//! `tests diff` keeps a million tests a side in bounded memory (names once in
//! an arena, a few numbers per test and run, the reports dropped run by
//! run). This holds it to the straightforward implementation it replaced,
//! kept here: on random runs (repeated identities, Go parents, tests without
//! a time, tests on one side only, one to three runs a side) both give the
//! same JSON, row for row.

use std::collections::HashMap;
use std::sync::Arc;

use proptest::prelude::*;
use tardy::diagnose::shape;
use tardy::ingest::reports::{Report, Status, Suite, TestCase, TestId};
use tardy::stats::compare::{self as engine, Correction, Options, TestChoice};
use tardy::stats::summary::median_by_selection;

/// The diff as it was computed before: every test of every run borrowed
/// into one map per side, rows with their strings.
fn reference(before: &[Report], after: &[Report]) -> serde_json::Value {
    struct Seen {
        durations: Vec<f64>,
        status: Status,
        parent: bool,
    }
    fn side(runs: &[Report]) -> HashMap<&TestId, Seen> {
        let mut s: HashMap<&TestId, Seen> = HashMap::new();
        for r in runs {
            for c in &r.cases {
                let e = s.entry(&c.id).or_insert_with(|| Seen {
                    durations: Vec::new(),
                    status: c.status,
                    parent: false,
                });
                e.parent |= c.has_children;
                if let Some(d) = c.duration_s {
                    e.durations.push(d);
                }
                e.status = c.status;
            }
        }
        s
    }
    let med = |v: &[f64]| (!v.is_empty()).then(|| median_by_selection(&mut v.to_vec()));
    let (b, a) = (side(before), side(after));
    let mut ids: Vec<&TestId> = b.keys().chain(a.keys()).copied().collect();
    ids.sort_unstable();
    ids.dedup();
    let many = before.len() >= 2 && after.len() >= 2;
    let opts = Options {
        test: TestChoice::Welch,
        ..Options::default()
    };
    let mut rows: Vec<serde_json::Value> = Vec::new();
    let mut estimates: Vec<(usize, engine::Estimate)> = Vec::new();
    let (mut added, mut removed, mut failing, mut skipped) = (vec![], vec![], vec![], vec![]);
    let mut matched: Vec<(u32, f64, f64)> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let (mut added_s, mut removed_s) = (0.0, 0.0);
    let (mut cv_b, mut cv_a) = (Vec::new(), Vec::new());
    let mut deltas: Vec<(f64, String)> = Vec::new();
    for id in ids {
        let (tb, ta) = (b.get(id), a.get(id));
        let parent = tb.is_some_and(|t| t.parent) || ta.is_some_and(|t| t.parent);
        let (db, da) = (tb.map(|t| &t.durations), ta.map(|t| &t.durations));
        let (mb, ma) = (db.and_then(|v| med(v)), da.and_then(|v| med(v)));
        let (sb, sa) = (tb.map(|t| t.status), ta.map(|t| t.status));
        let name = id.display();
        match (db.is_some(), da.is_some()) {
            (true, false) => {
                removed.push(name.clone());
                removed_s += if parent { 0.0 } else { mb.unwrap_or(0.0) };
            }
            (false, true) => {
                added.push(name.clone());
                added_s += if parent { 0.0 } else { ma.unwrap_or(0.0) };
            }
            _ => {}
        }
        if let (Some(sb), Some(sa)) = (sb, sa) {
            if sa.is_failure() && !sb.is_failure() {
                failing.push(name.clone());
            }
            if sa == Status::Skipped && sb != Status::Skipped {
                skipped.push(name.clone());
            }
        }
        if let (Some(x), Some(y), false) = (mb, ma, parent) {
            matched.push((names.len() as u32, x, y));
            names.push(name.clone());
        }
        if many
            && !parent
            && let (Some(vb), Some(va)) = (db, da)
        {
            let cv = |v: &[f64]| {
                let s = tardy::stats::summarize(v, 0.95)?;
                (s.mean > 0.0).then_some(s.cv)
            };
            cv_b.extend(cv(vb));
            cv_a.extend(cv(va));
            if let Ok(e) = engine::compare(vb, va, &opts) {
                estimates.push((rows.len(), e));
            }
        }
        let delta = mb.zip(ma).map(|(x, y)| y - x);
        deltas.push((delta.map_or(0.0, f64::abs), name.clone()));
        rows.push(serde_json::json!({
            "name": name,
            "suite": &*id.suite,
            "class": &*id.class,
            "test": id.name,
            "before_s": mb,
            "after_s": ma,
            "delta_s": delta,
            "ratio": mb.zip(ma).and_then(|(x, y)| (x > 0.0).then_some(y / x)),
            "status_before": sb,
            "status_after": sa,
            "runs": [db.map_or(0, Vec::len), da.map_or(0, Vec::len)],
            "p_adjusted": null,
            "verdict": null,
        }));
        if parent {
            rows.last_mut().unwrap()["parent"] = true.into();
        }
    }
    if !estimates.is_empty() {
        let mut refs: Vec<&mut engine::Estimate> = estimates.iter_mut().map(|(_, e)| e).collect();
        engine::adjust(&mut refs, Correction::BenjaminiHochberg);
        for (i, e) in estimates {
            rows[i]["p_adjusted"] = e.p_adjusted.into();
            rows[i]["verdict"] = serde_json::to_value(e.verdict).unwrap();
        }
    }
    let mut renamed = Vec::new();
    for r in &removed {
        let tail = r.rsplit(" :: ").next().unwrap_or(r);
        if let Some(a) = added.iter().find(|a| a.rsplit(" :: ").next() == Some(tail)) {
            renamed.push((r.clone(), a.clone()));
        }
    }
    let total =
        |runs: &[Report]| med(&runs.iter().map(Report::total_s).collect::<Vec<_>>()).unwrap_or(0.0);
    let wall = |runs: &[Report]| {
        let w: Option<Vec<f64>> = runs.iter().map(Report::suite_wall_s).collect();
        w.and_then(|w| med(&w))
    };
    let (wb, wa) = (wall(before), wall(after));
    let input = shape::Input {
        matched,
        added_s,
        removed_s,
        added: added.len(),
        removed: removed.len(),
        wall: wb.zip(wa),
        spread: (!cv_b.is_empty() && !cv_a.is_empty()).then(|| {
            (
                median_by_selection(&mut cv_b),
                median_by_selection(&mut cv_a),
            )
        }),
    };
    let shapes = shape::diagnose(&input, &|i| names[i as usize].clone());
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&x, &y| {
        deltas[y]
            .0
            .total_cmp(&deltas[x].0)
            .then(deltas[x].1.cmp(&deltas[y].1))
    });
    let rows: Vec<serde_json::Value> = order.into_iter().map(|i| rows[i].clone()).collect();
    let mut warnings: Vec<String> = before
        .iter()
        .chain(after)
        .flat_map(|r| r.warnings.iter().cloned())
        .collect();
    warnings.dedup();
    let per_side =
        [before, after].map(|runs| runs.iter().map(|r| r.cases.len()).max().unwrap_or(0));
    serde_json::json!({
        "schema": "tardy.tests-diff",
        "schema_version": 1,
        "runs": [before.len(), after.len()],
        "tests_per_side": per_side,
        "matched": names.len(),
        "added": added,
        "removed": removed,
        "renamed": renamed,
        "newly_failing": failing,
        "newly_skipped": skipped,
        "total_before_s": total(before),
        "total_after_s": total(after),
        "suite_wall_before_s": wb,
        "suite_wall_after_s": wa,
        "shapes": shapes,
        "tests": rows,
        "warnings": warnings,
    })
}

/// A test as the generator draws it: which of a few suites and classes,
/// a name, which result of its identity, a time, a status, a parent.
type Drawn = (u8, u8, u8, u8, Option<u16>, u8, bool);

fn run(cases: &[Drawn], wall: Option<u16>, warn: bool) -> Report {
    let suites: [Arc<str>; 3] = [Arc::from("a"), Arc::from("b"), Arc::from("")];
    let classes: [Arc<str>; 3] = [Arc::from("C"), Arc::from("a"), Arc::from("")];
    let status = [
        Status::Passed,
        Status::Failed,
        Status::Skipped,
        Status::Flaky,
        Status::Errored,
    ];
    let mut r = Report::default();
    let mut seen = std::collections::HashSet::new();
    // With `warn`, the run is two files that name the same tests (a
    // report copied into two folders): each test twice, its times differing.
    for pass in 0..if warn { 2 } else { 1 } {
        for &(s, c, name, nth, ms, st, parent) in cases {
            let mut id = TestId::new(
                suites[s as usize % 3].clone(),
                classes[c as usize % 3].clone(),
                format!("t{}", name % 12),
            );
            id.nth = (nth % 2) as u32;
            if !seen.insert((pass, id.clone())) {
                continue; // one result per identity in a file, as one read file has
            }
            r.cases.push(TestCase {
                id,
                duration_s: ms.map(|m| (m as f64 + 7.0 * pass as f64) / 1000.0),
                status: status[(st as usize + pass) % 5],
                retries: 0,
                has_children: parent,
            });
        }
    }
    if let Some(w) = wall {
        r.suites.push(Suite {
            name: "s".into(),
            time_s: Some(w as f64 / 100.0),
            tests: r.cases.len(),
        });
    }
    if warn {
        r.warnings.push("a warning".into());
    }
    r
}

fn drawn() -> impl Strategy<Value = Drawn> {
    (
        0u8..3,
        0u8..3,
        0u8..12,
        0u8..4,
        proptest::option::weighted(0.9, 0u16..3000),
        0u8..5,
        proptest::bool::weighted(0.05),
    )
}

fn runs() -> impl Strategy<Value = Vec<Report>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(drawn(), 0..40),
            proptest::option::of(1u16..500),
            proptest::bool::weighted(0.2),
        ),
        1..4,
    )
    .prop_map(|v| v.iter().map(|(c, w, warn)| run(c, *w, *warn)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn the_compact_diff_is_the_straightforward_one(before in runs(), after in runs()) {
        let fast = serde_json::to_value(tardy::analyze::suite::diff(&before, &after)).unwrap();
        let slow = reference(&before, &after);
        prop_assert_eq!(fast, slow);
    }
}

#[test]
fn a_diff_read_back_from_json_is_the_same() {
    let before = vec![run(
        &[
            (0, 0, 1, 0, Some(10), 0, false),
            (1, 1, 2, 1, None, 1, false),
        ],
        Some(5),
        false,
    )];
    let after = vec![run(
        &[
            (0, 0, 1, 0, Some(30), 1, false),
            (2, 2, 3, 0, Some(4), 2, true),
        ],
        None,
        true,
    )];
    let d = tardy::analyze::suite::diff(&before, &after);
    let json = serde_json::to_string(&d).unwrap();
    let back: tardy::analyze::suite::Diff = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    assert_eq!(back.tests.len(), 3);
    assert_eq!(
        back.tests.get(0).unwrap().name(),
        d.tests.get(0).unwrap().name()
    );
}

/// A JUnit file of `n` results written the way real producers do, with
/// what a streaming read must get right: results that repeat an identity
/// (the second counts as "#2"), Go subtests whose parent holds their time,
/// failures the header counts, suites' own times, and tests without a time.
fn junit(path: &std::path::Path, n: usize, seed: u64, extra: &str) {
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::from("<?xml version=\"1.0\"?>\n<testsuites>\n");
    let per = 1000;
    for s in 0..n.div_ceil(per) {
        let failures = (0..per).filter(|t| (s * per + t) % 97 == 0).count();
        out.push_str(&format!(
            "<testsuite name=\"suite{s}\" tests=\"{per}\" failures=\"{failures}\" time=\"{}.5\">\n",
            s % 7 + 1
        ));
        for t in 0..per.min(n - s * per) {
            let i = s * per + t;
            // Every 50th result repeats the identity before it; every 40th is a Go subtest.
            let name = if i % 50 == 49 {
                format!("test{}", i - 1)
            } else if i % 40 == 7 {
                format!("TestGo/case{i}")
            } else if i % 40 == 8 {
                "TestGo".to_string()
            } else {
                format!("test{i}")
            };
            let time = if next() % 20 == 0 {
                String::new()
            } else {
                format!(" time=\"{}.{:03}\"", next() % 2, next() % 1000)
            };
            let body = if i % 97 == 0 {
                "<failure message=\"boom\">x</failure>"
            } else {
                ""
            };
            let class = match i % 50 {
                _ if name.starts_with("TestGo") => "Go".to_string(),
                49 => format!("C{}", (t - 1) % 5), // the one before's: a repeat
                _ => format!("C{}", t % 5),
            };
            out.push_str(&format!(
                "<testcase classname=\"{class}\" name=\"{name}\"{time}>{body}</testcase>\n"
            ));
        }
        out.push_str("</testsuite>\n");
    }
    out.push_str(extra);
    out.push_str("</testsuites>\n");
    std::fs::write(path, out).unwrap();
}

/// Each run read whole (as before) against each run streamed into the
/// builder: the same diff, also where a run must be read whole again.
fn streamed_and_whole(before: &[Vec<std::path::PathBuf>], after: &[Vec<std::path::PathBuf>]) {
    use tardy::analyze::suite::{DiffBuilder, diff};
    use tardy::ingest::reports::read_run;
    let whole = |runs: &[Vec<std::path::PathBuf>]| -> Vec<Report> {
        runs.iter().map(|r| read_run(r, false).unwrap()).collect()
    };
    let reference = serde_json::to_value(diff(&whole(before), &whole(after))).unwrap();
    let mut b = DiffBuilder::new();
    for (side, runs) in [before, after].into_iter().enumerate() {
        for r in runs {
            b.read(side, r, false).unwrap();
        }
    }
    let streamed = serde_json::to_value(b.finish()).unwrap();
    assert_eq!(streamed, reference);
}

#[test]
fn a_streamed_run_is_diffed_as_a_run_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    junit(&p("a.xml"), 30_000, 1, "");
    junit(&p("b.xml"), 30_000, 2, "");
    junit(&p("small.xml"), 300, 3, "");
    // A run of several files (a small one first: its cases go before the big one's).
    streamed_and_whole(&[vec![p("small.xml"), p("a.xml")]], &[vec![p("b.xml")]]);
    // Two runs a side: per-test significance.
    junit(&p("c.xml"), 20_000, 4, "");
    streamed_and_whole(
        &[vec![p("a.xml")], vec![p("c.xml")]],
        &[vec![p("b.xml")], vec![p("a.xml")]],
    );
    // Reruns marked late in the file (Surefire's flakyFailure) with repeated
    // identities: attempts are merged, so the run is read whole again.
    junit(
        &p("flaky.xml"),
        20_000,
        5,
        "<testsuite name=\"late\"><testcase classname=\"C\" name=\"t\"><flakyFailure message=\"x\"/></testcase></testsuite>\n",
    );
    streamed_and_whole(&[vec![p("flaky.xml")]], &[vec![p("a.xml")]]);
}

#[test]
fn a_streamed_show_is_the_show_of_the_whole_run() {
    use tardy::analyze::suite::{show, show_run};
    use tardy::ingest::reports::read_run;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let same = |paths: &[std::path::PathBuf]| {
        let whole = serde_json::to_value(show(&read_run(paths, false).unwrap(), 10)).unwrap();
        let streamed = serde_json::to_value(show_run(paths, false, 10).unwrap()).unwrap();
        assert_eq!(streamed, whole, "{paths:?}");
    };
    // Repeats and Go subtests: read whole again.
    junit(&p("mixed.xml"), 25_000, 7, "");
    same(&[p("mixed.xml")]);
    // Neither: streamed through (ties in time at the top broken by file order).
    let plain: String = (0..20_000)
        .map(|i| {
            format!(
                "<testcase classname=\"C{}\" name=\"t{i}\" time=\"0.{:03}\"/>\n",
                i % 7,
                i % 13
            )
        })
        .collect();
    std::fs::write(
        p("plain.xml"),
        format!("<testsuites><testsuite name=\"s\">\n{plain}</testsuite></testsuites>"),
    )
    .unwrap();
    same(&[p("plain.xml")]);
    same(&[p("plain.xml"), p("mixed.xml")]);
    // A suite that comes back after another began: its results may repeat.
    let back = format!(
        "<testsuites><testsuite name=\"s\">\n{plain}</testsuite><testsuite name=\"x\"><testcase name=\"y\" time=\"1\"/></testsuite><testsuite name=\"s\"><testcase classname=\"C0\" name=\"t0\" time=\"2\"/></testsuite></testsuites>"
    );
    std::fs::write(p("back.xml"), back).unwrap();
    same(&[p("back.xml")]);
}

/// A TRX file of `n` results: classes after the results (as Visual Studio
/// writes them), some results with inner results (data rows), some whose
/// test has no definition, some whose class repeats another's test name.
fn trx(path: &std::path::Path, n: usize, seed: u64) {
    let mut x = seed.wrapping_mul(6364136223846793005) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<TestRun id=\"r\" xmlns=\"http://microsoft.com/schemas/VisualStudio/TeamTest/2010\">\n<Results>\n",
    );
    let outcome = |v: u64| ["Passed", "Passed", "Failed", "NotExecuted", "Error"][(v % 5) as usize];
    for i in 0..n {
        let d = format!("00:00:0{}.{:07}", next() % 3, next() % 10_000_000);
        let head = format!(
            "<UnitTestResult testId=\"id-{i}\" testName=\"Test{}\" duration=\"{d}\" outcome=\"{}\"",
            i % (n / 3 + 1),
            outcome(next())
        );
        if i % 97 == 5 {
            out.push_str(&format!("{head}><InnerResults>"));
            for k in 0..3 {
                out.push_str(&format!(
                    "<UnitTestResult testId=\"id-{i}\" testName=\"Test{i} (row {k})\" duration=\"00:00:00.0{k}\" outcome=\"Passed\"/>"
                ));
            }
            out.push_str("</InnerResults></UnitTestResult>\n");
        } else {
            out.push_str(&format!("{head}/>\n"));
        }
    }
    out.push_str("</Results>\n<TestDefinitions>\n");
    for i in (0..n).filter(|i| i % 50 != 7) {
        out.push_str(&format!(
            "<UnitTest name=\"Test{i}\" id=\"id-{i}\"><TestMethod codeBase=\"t.dll\" className=\"App.C{}\" name=\"Test{i}\"/></UnitTest>\n",
            i % 13
        ));
    }
    out.push_str("</TestDefinitions>\n</TestRun>\n");
    std::fs::write(path, out).unwrap();
}

/// TRX names its results' classes after them: a streamed read takes them
/// in a first pass, a whole read fixes them at the end. Both give the same
/// show and the same diff.
#[test]
fn a_trx_run_streamed_with_its_classes_read_first_is_the_run_read_whole() {
    use tardy::analyze::suite::{show, show_run};
    use tardy::ingest::reports::read_run;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    trx(&p("a.trx"), 30_000, 1);
    trx(&p("b.trx"), 25_000, 2);
    let a = read_run(&[p("a.trx")], false).unwrap();
    assert!(a.cases.iter().any(|c| &*c.id.class == "App.C3"));
    assert!(a.cases.iter().any(|c| c.id.class.is_empty()));
    // A result with inner results keeps its class (a whole read lost it).
    assert!(
        (a.cases.iter()).any(|c| c.has_children && c.id.class.starts_with("App.C")),
        "{:?}",
        a.cases.iter().find(|c| c.has_children)
    );
    for paths in [vec![p("a.trx")], vec![p("b.trx"), p("a.trx")]] {
        let whole = serde_json::to_value(show(&read_run(&paths, false).unwrap(), 10)).unwrap();
        let streamed = serde_json::to_value(show_run(&paths, false, 10).unwrap()).unwrap();
        assert_eq!(streamed, whole, "{paths:?}");
    }
    streamed_and_whole(&[vec![p("a.trx")]], &[vec![p("b.trx")]]);
}

/// A TAP stream of `n` top-level results as node's test runner and prove
/// write them: YAML blocks with durations after results, subtests whose
/// parent line comes after them, nameless results, a `describe` group near
/// the end (dropped at the end), the plan last and closing counts.
fn tap(path: &std::path::Path, n: usize, seed: u64) {
    let mut x = seed.wrapping_mul(6364136223846793005) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::from("TAP version 13\n");
    for i in 1..=n {
        let ok = if next() % 30 == 0 { "not ok" } else { "ok" };
        if i % 500 == 7 || i == n - 2 {
            out.push_str(&format!("# Subtest: group {i}\n"));
            for k in 1..=3 {
                out.push_str(&format!(
                    "    ok {k} - case {k}\n      ---\n      duration_ms: {}\n      ...\n",
                    next() % 90
                ));
            }
            out.push_str("    1..3\n");
            let group = if i == n - 2 { "  type: 'suite'\n" } else { "" };
            out.push_str(&format!(
                "{ok} {i} - group {i}\n  ---\n  duration_ms: 300\n{group}  ...\n"
            ));
        } else if i % 211 == 3 {
            out.push_str(&format!("{ok} {i}\n"));
        } else {
            out.push_str(&format!(
                "{ok} {i} - test {}\n  ---\n  duration_ms: {}.{}\n  ...\n",
                i % (n / 2 + 1),
                next() % 400,
                next() % 10
            ));
        }
    }
    out.push_str(&format!("1..{n}\n# tests 5\n# fail 2\n"));
    std::fs::write(path, out).unwrap();
}

/// TAP results are handed on once nothing can amend them (outside any
/// subtest and YAML block, before any group): the same show and diff as
/// the stream read whole.
#[test]
fn a_tap_stream_handed_on_as_read_is_the_stream_read_whole() {
    use tardy::analyze::suite::{show, show_run};
    use tardy::ingest::reports::read_run;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    tap(&p("a.tap"), 30_000, 1);
    tap(&p("b.tap"), 20_000, 2);
    let a = read_run(&[p("a.tap")], false).unwrap();
    assert!(a.cases.iter().any(|c| c.has_children));
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("says it holds 5 tests"))
    );
    for paths in [vec![p("a.tap")], vec![p("b.tap"), p("a.tap")]] {
        let whole = serde_json::to_value(show(&read_run(&paths, false).unwrap(), 10)).unwrap();
        let streamed = serde_json::to_value(show_run(&paths, false, 10).unwrap()).unwrap();
        assert_eq!(streamed, whole, "{paths:?}");
    }
    streamed_and_whole(&[vec![p("a.tap")]], &[vec![p("b.tap")]]);
    streamed_and_whole(&[vec![p("b.tap"), p("a.tap")]], &[vec![p("a.tap")]]);
}

/// pytest's JUnit XML (`--junitxml`) of `n` tests: node ids are unique, so
/// a repeated one is a rerun (pytest-rerunfailures writes each attempt)
/// when `reruns`; `late` names the pytest suite only after a first suite
/// of plain JUnit.
fn pytest_xml(path: &std::path::Path, n: usize, reruns: bool, late: bool) {
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><testsuites>");
    if late {
        out.push_str("<testsuite name=\"plain\">");
        for i in 0..9000 {
            out.push_str(&format!(
                "<testcase classname=\"plain.C\" name=\"t{i}\" time=\"0.{i:03}\"/>"
            ));
        }
        out.push_str("</testsuite>");
    }
    out.push_str(&format!("<testsuite name=\"pytest\" tests=\"{n}\">"));
    for i in 0..n {
        let case = format!(
            "<testcase classname=\"tests.test_m{}\" name=\"test_{i}\" time=\"0.{:03}\"",
            i % 40,
            (i * 7) % 1000
        );
        if reruns && i % 1000 == 999 {
            out.push_str(&format!(
                "{case}><failure message=\"boom\">x</failure></testcase>"
            ));
        }
        if i % 301 == 17 {
            out.push_str(&format!("{case}><skipped message=\"no\"/></testcase>"));
        } else {
            out.push_str(&format!("{case}/>"));
        }
    }
    out.push_str("</testsuite></testsuites>\n");
    std::fs::write(path, out).unwrap();
}

/// pytest's reports are handed on as read; one that turns out to hold
/// reruns, or names its pytest suite late, is read whole again: the same
/// show and diff either way.
#[test]
fn a_pytest_report_streamed_is_the_report_read_whole() {
    use tardy::analyze::suite::{show, show_run};
    use tardy::ingest::reports::read_run;
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    pytest_xml(&p("plain.xml"), 20_000, false, false);
    pytest_xml(&p("reruns.xml"), 20_000, true, false);
    pytest_xml(&p("late.xml"), 12_000, true, true);
    let r = read_run(&[p("reruns.xml")], false).unwrap();
    assert!(
        r.cases
            .iter()
            .any(|c| c.status == tardy::ingest::reports::Status::Flaky)
    );
    for paths in [
        vec![p("plain.xml")],
        vec![p("reruns.xml")],
        vec![p("late.xml")],
        vec![p("plain.xml"), p("reruns.xml")],
    ] {
        let whole = serde_json::to_value(show(&read_run(&paths, false).unwrap(), 10)).unwrap();
        let streamed = serde_json::to_value(show_run(&paths, false, 10).unwrap()).unwrap();
        assert_eq!(streamed, whole, "{paths:?}");
    }
    streamed_and_whole(&[vec![p("plain.xml")]], &[vec![p("reruns.xml")]]);
    streamed_and_whole(
        &[vec![p("late.xml")]],
        &[vec![p("plain.xml"), p("reruns.xml")]],
    );
}
