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
        log_events: false,
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

/// `tardy ministat`: ministat's command line as one call, byte for byte
/// the output Debian's ministat gave (the golden files' first case:
/// `ministat -s -w 60 iguana chameleon`).
#[test]
fn ministat_is_a_library_call() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ministat");
    let golden = std::fs::read_to_string(dir.join("golden/01.out")).unwrap();
    let path = |n: &str| dir.join(n).display().to_string();
    let args: Vec<String> = vec![
        "-s".into(),
        "-w".into(),
        "60".into(),
        path("iguana"),
        path("chameleon"),
    ];
    let out = tardy::jobs::ministat::run(&args, &mut std::io::empty(), 74);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The golden file names the sets as given on ministat's command line.
    let ours = out
        .stdout
        .replace(&path("iguana"), "iguana")
        .replace(&path("chameleon"), "chameleon");
    assert_eq!(ours, golden);
    // ministat's own usage error and exit code.
    let bad = tardy::jobs::ministat::run(&["-x".into()], &mut std::io::empty(), 74);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("invalid option -- 'x'"),
        "{}",
        bad.stderr
    );
}

/// `tardy report`: what the page shows is gathered by one call; the CLI
/// only hands it to `render::report`.
#[test]
fn report_is_a_library_call() {
    use tardy::jobs::report::{Spec, gather};
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let file = |p: &str| data.join(p).display().to_string();
    let g = gather(&Spec {
        files: vec![
            file("bench/jmh-before.json"),
            file("bench/jmh-after.json"),
            file("reports/jest-junit.xml"),
        ],
        no_history: true,
        project: "default".into(),
        ..Spec::default()
    })
    .unwrap();
    assert_eq!(g.given, [2, 1, 0, 0]);
    let compare = g.compare.expect("two result files give verdicts");
    assert!(
        compare
            .rows
            .iter()
            .any(|r| r.name == "bench.Calc.sum/n=100" && r.verdict == tardy::stats::Verdict::Slower)
    );
    assert!(!g.results.is_empty());
    assert_eq!(g.tests.len(), 1);
    assert!(g.series.is_empty() && g.doctor.is_none() && g.traces.is_empty());
    let nothing = gather(&Spec {
        no_history: true,
        ..Spec::default()
    });
    assert!(nothing.is_err_and(|e| e.contains("nothing to report")));
}

/// `tardy push`: the uploads are one call telling an observer what happens;
/// a server that never answers is a failed file (the next one is still
/// sent), a URL that is not one is an error before anything is sent.
#[test]
fn push_is_a_library_call() {
    use tardy::jobs::push::{Event, Plan, options, push};
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.txt");
    std::fs::write(&f, "1\n2\n3\n").unwrap();
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let plan = Plan {
        url: format!("http://127.0.0.1:{port}"),
        files: vec![f.clone(), f],
        kind: None,
        fingerprint: false,
        meta: Default::default(),
        run_id: None,
        options: options(None, Some(0), 0.0, 5.0).unwrap(),
    };
    let mut failed = Vec::new();
    let out = push(&plan, &mut |e| {
        if let Event::Failed { file, .. } = e {
            failed.push(file.to_string());
        }
    })
    .unwrap();
    assert_eq!(out.failed, 2);
    assert_eq!(failed.len(), 2);
    assert!(!out.regression);
    let not_a_url = push(
        &Plan {
            url: "localhost:8080".into(),
            ..plan
        },
        &mut |_| {},
    );
    assert!(not_a_url.is_err_and(|e| e.contains("not a server URL")));
    assert!(options(None, None, -1.0, 5.0).is_err());
}

/// `tardy bisect`: the command line's values become a checked
/// configuration in one call (before any build).
#[test]
fn bisect_configuration_is_a_library_call() {
    use tardy::bisect::session::{Request, config};
    let req = Request {
        versions: Some("3.2.1, 3.3.0,3.4.0".into()),
        metric: "wall".into(),
        confidence: 0.95,
        max_runs: 200,
        jobs: 1,
        cmd: vec!["python3".into(), "bench.py".into()],
        ..Request::default()
    };
    let c = config(&req).unwrap();
    assert_eq!((c.good.as_str(), c.bad.as_str()), ("3.2.1", "3.4.0"));
    assert!(matches!(&c.mode, tardy::bisect::Mode::Versions { list } if list.len() == 3));
    assert_eq!(c.command, "python3 bench.py");
    let e = |r: Request| config(&r).unwrap_err().to_string();
    assert!(
        e(Request {
            cmd: vec![],
            ..req.clone()
        })
        .contains("nothing to measure")
    );
    assert!(
        e(Request {
            confidence: 0.3,
            ..req.clone()
        })
        .contains("at least 50%")
    );
    assert!(
        e(Request {
            condition_b: vec!["NOEQUALS".into()],
            ..req.clone()
        })
        .contains("KEY=VALUE")
    );
    assert!(
        e(Request {
            metric: "joules".into(),
            ..req
        })
        .contains("--metric is wall")
    );
}
