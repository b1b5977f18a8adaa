//! Each subcommand's work is a library call: these tests call the entries
//! the CLI calls, with plain typed options, and read typed results (no
//! process, no parsing of printed text).

use std::path::PathBuf;

use tardy::history::detect::{DetectOptions, Method};
use tardy::history::import::Labels;
use tardy::history::ops;
use tardy::store::History;
use tardy::store::history::{AlertState, PointFilter};

/// A CSV of 30 points at 100 then 30 at 1100 (a 10x step), one metric.
fn step_csv(dir: &std::path::Path) -> PathBuf {
    let mut text = String::from("time,commit,latency\n");
    for i in 0..60 {
        let v = if i < 30 { 100.0 } else { 1100.0 } + (i % 7) as f64 * 0.3;
        text.push_str(&format!(
            "2026-10-{:02}T{:02}:00:00Z,c{i},{v}\n",
            1 + i / 24,
            i % 24
        ));
    }
    let p = dir.join("latency.csv");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn history_import_detect_show_export_and_alerts_are_library_calls() {
    let dir = tempfile::tempdir().unwrap();
    let csv = step_csv(dir.path());
    // `tardy history analyze`: the step in the file itself.
    let a = ops::analyze(&csv, "time", &Method::default()).unwrap();
    assert_eq!((a.metrics, a.points), (1, 60));
    assert!(
        a.changes.iter().any(|c| c.index == 30),
        "{:?}",
        a.changes.iter().map(|c| c.index).collect::<Vec<_>>()
    );
    // `tardy history import`, then `detect` with the gate.
    let mut db = tardy::store::sqlite::SqliteStore::open(&dir.path().join("h.db"), "p").unwrap();
    let spec = ops::ImportSpec {
        format: "auto",
        time_column: "time",
        labels: Labels {
            series: None,
            provenance: None,
            fingerprint: None,
            direction: None,
        },
    };
    let mut heard = Vec::new();
    let total = ops::import(&mut db, std::slice::from_ref(&csv), &spec, &mut |f| {
        heard.push((f.points, f.series))
    })
    .unwrap();
    assert_eq!((total, heard), (60, vec![(60, 1)]));
    let d = ops::detect(&mut db, &[], &DetectOptions::default(), true).unwrap();
    assert_eq!(d.report.new_alerts.len(), 1, "a 10x step raises an alert");
    assert_eq!(d.open_regressions.len(), 1);
    assert_eq!(d.new_open, 1);
    // `show`: two segments around the step.
    let name = db.list().unwrap()[0].name.clone();
    let s = ops::show(
        &db,
        &name,
        None,
        &PointFilter::default(),
        &Method::default(),
    )
    .unwrap();
    assert_eq!(s.points.len(), 60);
    assert_eq!(s.segments.len(), 2);
    // `ack`: the gate opens.
    let id = d.open_regressions[0];
    ops::set_states(&mut db, &[id], AlertState::Acknowledged).unwrap();
    assert!(ops::alerts(&db, false).unwrap().is_empty());
    assert_eq!(ops::alerts(&db, true).unwrap().len(), 1);
    let again = ops::detect(&mut db, &[], &DetectOptions::default(), true).unwrap();
    assert!(again.open_regressions.is_empty());
    // `export`: every point.
    let e = ops::export(&db, &[], &PointFilter::default(), true).unwrap();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].points.len(), 60);
    // A typed error, not a print: an unknown series.
    assert!(
        ops::show(
            &db,
            "nope",
            None,
            &PointFilter::default(),
            &Method::default()
        )
        .is_err()
    );
    assert!(ops::set_states(&mut db, &[], AlertState::Dismissed).is_err());
}

#[test]
fn run_and_explain_are_library_calls() {
    use tardy::diagnose::explain::{job, session};
    use tardy::measure::session::{Budget, Observer, Progress};
    use tardy::measure::spec::{RunSpec, session_config};
    // `tardy run`: a RunSpec (the flags as values) is a session; measuring
    // it gives typed results, finished.
    struct Quiet(usize);
    impl Observer for Quiet {
        fn phase(&mut self, _: &str) {}
        fn after_run(&mut self, _: &tardy::model::Results, _: Progress) -> Result<(), String> {
            self.0 += 1;
            Ok(())
        }
    }
    let budget = || Budget {
        runs: Some(3),
        min_runs: 3,
        max_runs: None,
        min_time: std::time::Duration::ZERO,
        max_time: None,
        precision: 0.01,
        confidence: 0.95,
        warmup: Some(0),
        metrics: vec![tardy::model::Metric::Wall],
        counter: None,
    };
    let spec = RunSpec {
        commands: vec!["true".into()],
        ..RunSpec::new(budget())
    };
    let cfg = session_config(&spec).unwrap();
    let mut seen = Quiet(0);
    let (results, error) = tardy::analyze::run::measure(&cfg, &mut seen).unwrap();
    assert!(error.is_none());
    assert_eq!(
        results.benchmarks[0]
            .runs
            .iter()
            .filter(|r| !r.warmup)
            .count(),
        3
    );
    assert!(
        results.benchmarks[0].summary.is_some(),
        "finished: statistics computed"
    );
    assert!(seen.0 >= 3);
    // Typed errors, not prints.
    let bad = RunSpec {
        commands: vec!["true".into()],
        env: vec!["NOEQUALS".into()],
        ..RunSpec::new(budget())
    };
    assert!(session_config(&bad).is_err());
    // `tardy explain`: sides from a request, recorded and compared.
    let opts = tardy::record::RecordOptions {
        env: Vec::new(),
        cwd: None,
        timeout: None,
        straggler_wait: std::time::Duration::from_secs(1),
        show_output: false,
        trace: true,
        profile_hz: 0,
    };
    let req = job::Request {
        inputs: vec!["true".into(), "sleep 0.02".into()],
        ..Default::default()
    };
    let sides = job::sides(&req, &opts).unwrap();
    assert_eq!(sides.len(), 2);
    let runs = session::Options {
        runs: 2,
        ignore_failure: false,
        overhead_check: false,
        recorder: tardy::record::Choice::Auto,
        warmup: 0,
        prepare: None,
    };
    let mut events = 0;
    let done = job::explain(sides, &runs, &mut |_| events += 1).unwrap();
    assert_eq!(done.traces.len(), 2);
    assert!(done.comparison.is_some());
    assert!(events >= 4);
    assert!(job::sides(&job::Request::default(), &opts).is_err());
}

#[test]
fn compare_is_a_library_call() {
    use tardy::analyze::files::{Request, compare};
    use tardy::ingest::{Format, NumberOptions};
    use tardy::stats::compare::{Correction, Options};
    let bench = |n: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/bench")
            .join(n)
            .display()
            .to_string()
    };
    let (a, b) = (bench("jmh-before.json"), bench("jmh-after.json"));
    let request = |files| Request {
        files,
        baseline_files: None,
        format: Format::Auto,
        numbers: NumberOptions::default(),
        filter: None,
        col: ".file",
        row: ".fullname",
        ignore: &[],
        options: Options::default(),
        correction: Correction::BenjaminiHochberg,
    };
    let done = compare(request(vec![
        (None, a.as_str()),
        (Some("after"), b.as_str()),
    ]))
    .unwrap();
    let sum = done
        .report
        .rows
        .iter()
        .find(|r| r.name == "bench.Calc.sum/n=100")
        .unwrap();
    assert_eq!(sum.verdict, tardy::stats::Verdict::Slower);
    assert!(done.warnings.is_empty());
    // The same file twice: said, not hidden.
    let same = compare(request(vec![(None, a.as_str()), (None, a.as_str())])).unwrap();
    assert_eq!(same.warnings.len(), 1);
}
