//! Each subcommand's work is a library call: these tests call the entries
//! the CLI calls, with plain typed options, and read typed results (no
//! process, no parsing of printed text).

mod common;

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

#[test]
fn tests_show_and_diff_are_library_calls() {
    use tardy::jobs::tests::{SaveTo, diff, show};
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str, ms: [u32; 2]| {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!(
                r#"<testsuite name="unit" tests="2"><testcase classname="a" name="fast" time="{}"/><testcase classname="a" name="slow" time="{}"/></testsuite>"#,
                ms[0] as f64 / 1000.0,
                ms[1] as f64 / 1000.0
            ),
        )
        .unwrap();
        p
    };
    let (before, after) = (
        report("before.xml", [10, 100]),
        report("after.xml", [10, 400]),
    );
    // `tardy tests show --save unit`: summarised and saved as a suite point.
    let db = dir.path().join("t.db");
    let save = SaveTo {
        suite: "unit".into(),
        db: Some(db.clone()),
        project: "default".into(),
        commit: None,
        branch: Some("main".into()),
        time: Some("2026-11-20T10:00:00Z".into()),
    };
    let shown = show(std::slice::from_ref(&before), false, 5, Some(&save)).unwrap();
    assert_eq!(
        shown.saved.as_ref().map(|s| s.0),
        Some(2),
        "two tests saved"
    );
    let json = serde_json::to_value(&shown.show).unwrap();
    assert!(json.to_string().contains("slow"), "{json}");
    let store = tardy::jobs::store::open_existing(Some(&db), "default").unwrap();
    assert_eq!(store.list().unwrap().len(), 1, "the suite is a series");
    // `tardy tests diff --fail-if-slower 10`: the gate says why it fails.
    let d = diff(
        std::slice::from_ref(&before),
        std::slice::from_ref(&after),
        false,
        Some(0.10),
    )
    .unwrap();
    let why = d.too_slow.expect("300 ms more of 110 ms is more than 10%");
    assert!(why.contains("more than 10"), "{why}");
    let same = diff(
        std::slice::from_ref(&before),
        std::slice::from_ref(&before),
        false,
        Some(0.10),
    )
    .unwrap();
    assert!(same.too_slow.is_none());
    // A report that is not there: a typed error, not a panic.
    assert!(show(&[dir.path().join("missing.xml")], false, 5, None).is_err());
}

#[test]
fn run_keeps_exports_and_history_through_a_library_call() {
    use tardy::jobs::run::{Exports, Keep, Keeper, Labels};
    use tardy::measure::session::{Observer, Progress};
    use tardy::measure::spec::{BudgetFlags, RunSpec, budget, session_config};
    struct Quiet;
    impl Observer for Quiet {
        fn phase(&mut self, _: &str) {}
        fn after_run(&mut self, _: &tardy::model::Results, _: Progress) -> Result<(), String> {
            Ok(())
        }
    }
    // The flags as typed become a budget, checked.
    let flags = BudgetFlags {
        runs: Some(3),
        precision: "1%".into(),
        confidence: "95".into(),
        counter: "auto".into(),
        warmup: Some(0),
        ..Default::default()
    };
    let b = budget(&flags).unwrap();
    assert_eq!((b.runs, b.confidence), (Some(3), 0.95));
    let zero = BudgetFlags {
        runs: Some(0),
        ..flags.clone()
    };
    assert!(budget(&zero).unwrap_err().contains("--runs"));
    let cfg = session_config(&RunSpec {
        commands: vec!["true".into()],
        ..RunSpec::new(b)
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keep = Keep {
        exports: Exports {
            json: Some(dir.path().join("r.json")),
            markdown: Some(dir.path().join("r.md")),
            ..Default::default()
        },
        save: Some("noop".into()),
        push: None,
        labels: Labels {
            db: Some(dir.path().join("h.db")),
            project: "default".into(),
            commit: None,
            branch: Some("main".into()),
        },
    };
    // Checked before measuring: a path in a missing directory fails now.
    let mut bad = keep.clone();
    bad.exports.csv = Some(dir.path().join("no/such/dir/r.csv"));
    assert!(Keeper::open(bad).is_err());
    let mut keeper = Keeper::open(keep).unwrap();
    let (results, error) = tardy::analyze::run::measure(&cfg, &mut Quiet).unwrap();
    assert!(error.is_none());
    let kept = keeper.keep(&results, &mut |_| {}).unwrap();
    assert_eq!(kept.saved.as_ref().map(|s| s.0), Some(1), "one point");
    assert!(
        std::fs::read_to_string(dir.path().join("r.md"))
            .unwrap()
            .contains("true")
    );
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(back["benchmarks"][0]["runs"].as_array().unwrap().len(), 3);
}

#[test]
fn serve_and_explain_files_are_library_calls() {
    use tardy::diagnose::explain::{job, session};
    use tardy::jobs::explain::{Files, write};
    use tardy::jobs::serve::{Settings, options};
    // `tardy serve`'s flags, checked into the server's options.
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        db: Some(dir.path().join("s.db").display().to_string()),
        project: "default".into(),
        listen: "127.0.0.1:0".into(),
        token_file: None,
        read_token: false,
        max_body_mib: 8,
        max_inflated_mib: None,
        max_results: 1000,
        max_tests: 1000,
        max_series: 100,
        header_timeout: 10.0,
        body_timeout: 60.0,
        read_budget: 20.0,
        max_connections: 64,
        max_per_client: 8,
        trusted_proxies: Vec::new(),
        no_detect: false,
        detect_memory_mib: 16,
        method: Method::from_flags(false, None, None, None, 0.0).unwrap(),
    };
    let o = options(&settings).unwrap();
    assert_eq!(o.max_body, 8 << 20);
    assert!(o.detect.is_some());
    for bad in [
        Settings {
            max_body_mib: 0,
            ..settings.clone()
        },
        Settings {
            header_timeout: f64::NAN,
            ..settings.clone()
        },
        Settings {
            db: Some("git:perf".into()),
            ..settings.clone()
        },
    ] {
        assert!(options(&bad).is_err());
    }
    // `tardy explain --save A --export-folded-b B.folded --html page.html`:
    // the files each side keeps, or why one cannot be written.
    let rec = tardy::record::RecordOptions::checked(None, 1.0, 0).unwrap();
    let req = job::Request {
        inputs: vec!["true".into()],
        ..Default::default()
    };
    let runs = session::Options {
        runs: 1,
        ignore_failure: false,
        overhead_check: false,
        recorder: tardy::record::Choice::Auto,
        warmup: 0,
        prepare: None,
    };
    let done = job::explain(job::sides(&req, &rec).unwrap(), &runs, &mut |_| {}).unwrap();
    let files = Files {
        save: [Some(dir.path().join("a.json")), None],
        html: Some(dir.path().join("page.html")),
        ..Default::default()
    };
    write(&files, &done).unwrap();
    assert!(
        std::fs::read_to_string(dir.path().join("page.html"))
            .unwrap()
            .contains("<html")
    );
    let saved = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&saved).is_ok());
    let no_b = Files {
        folded: [None, Some(dir.path().join("b.folded"))],
        ..Default::default()
    };
    assert!(write(&no_b, &done).unwrap_err().contains("needs a B side"));
    assert!(tardy::record::RecordOptions::checked(Some(-1.0), 1.0, 0).is_err());
}

#[test]
fn ci_and_doctor_are_library_calls() {
    use tardy::jobs::ci::Job;
    use tardy::measure::session::{Observer, Progress};
    use tardy::measure::spec::{BudgetFlags, budget};
    struct Quiet;
    impl Observer for Quiet {
        fn phase(&mut self, _: &str) {}
        fn after_run(&mut self, _: &tardy::model::Results, _: Progress) -> Result<(), String> {
            Ok(())
        }
    }
    // `tardy ci --base HEAD~1 --markdown v.md 'sh work.sh'`: two commits,
    // both measured in their worktrees, a verdict and its Markdown.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let git = |args: &[&str]| common::git(repo, args);
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("work.sh"), "sleep 0.01\n").unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "base"]);
    std::fs::write(repo.join("work.sh"), "sleep 0.02\n").unwrap();
    git(&["commit", "-q", "-am", "head"]);
    let b = budget(&BudgetFlags {
        runs: Some(3),
        precision: "1".into(),
        confidence: "95".into(),
        counter: "auto".into(),
        warmup: Some(0),
        ..Default::default()
    })
    .unwrap();
    let md = repo.join("verdict.md");
    let job = Job {
        options: tardy::ci::Options {
            dir: repo.to_path_buf(),
            base: Some("HEAD~1".into()),
            head: "HEAD".into(),
            build: None,
            command: "sh work.sh".into(),
            state_dir: None,
            budget: b,
            timeout: None,
            seed: 1,
            env: Vec::new(),
            tests: None,
        },
        gate: None,
        explain_runs: None,
        markdown: Some(md.clone()),
        export_json: None,
        github: false,
        keep_worktrees: false,
    };
    job.check().unwrap();
    let mut steps = Vec::new();
    let done = job
        .run(&mut |s| steps.push(s.to_string()), &mut Quiet)
        .unwrap();
    assert!(done.outcome.error.is_none());
    let runs: usize = (done.outcome.results.benchmarks.iter())
        .map(|b| b.runs.len())
        .sum();
    assert_eq!(runs, 6, "three runs of each side");
    assert!(std::fs::read_to_string(&md).unwrap().contains("sh work.sh"));
    assert!(!steps.is_empty(), "each step told: {steps:?}");
    assert!(
        !done.outcome.prepared.head.dir.exists(),
        "worktrees removed"
    );

    // `tardy doctor --quick --only clock --save a.json`, then `--compare a.json b.json`.
    let opts = tardy::probe::doctor::Options {
        quick: true,
        only: Some(vec!["clock".into()]),
        dir: repo.to_path_buf(),
    };
    let report = tardy::probe::doctor::run(&opts, |_, _, _| {});
    assert_eq!(report.probes.len(), 1);
    let (a, b) = (repo.join("a.json"), repo.join("b.json"));
    for p in [&a, &b] {
        std::fs::write(p, serde_json::to_string(&report).unwrap()).unwrap();
    }
    let c = tardy::jobs::doctor::compare(&[a.clone(), b], false, None, repo, &mut |_| {
        unreachable!("two saved reports: nothing measured")
    })
    .unwrap();
    assert!(
        serde_json::to_string(&c.comparison)
            .unwrap()
            .contains("clock")
    );
    // One report: B is this machine now, measured with A's probes.
    let mut asked = Vec::new();
    let now = tardy::jobs::doctor::compare(&[a], false, None, repo, &mut |o| {
        asked = o.only.clone().unwrap_or_default();
        tardy::probe::doctor::run(o, |_, _, _| {})
    })
    .unwrap();
    assert_eq!(asked, vec!["clock".to_string()]);
    assert_eq!(now.b.probes.len(), 1);
}

#[test]
fn comment_and_exec_are_library_calls() {
    use tardy::ci::comment::{Target, body};
    // `tardy comment FILE --pr 7 --repo o/r`: the target from what a workflow gives.
    let t = Target::from_job(
        Some(7),
        Some("o/r".into()),
        Some("tok".into()),
        None,
        "m".into(),
    )
    .unwrap();
    assert_eq!((t.pr, t.api.as_str()), (7, "https://api.github.com"));
    let no_token = Target::from_job(
        Some(7),
        Some("o/r".into()),
        Some(String::new()),
        None,
        "m".into(),
    );
    assert!(no_token.unwrap_err().contains("GITHUB_TOKEN"));
    let bad_repo = Target::from_job(
        Some(7),
        Some("r".into()),
        Some("t".into()),
        None,
        "m".into(),
    );
    assert!(bad_repo.unwrap_err().contains("OWNER/NAME"));
    let dir = tempfile::tempdir().unwrap();
    let (small, big) = (dir.path().join("s.md"), dir.path().join("b.md"));
    std::fs::write(&small, "### tardy\n").unwrap();
    std::fs::write(&big, "x".repeat(70_000)).unwrap();
    assert_eq!(body(&small).unwrap(), "### tardy\n");
    assert!(body(&big).unwrap_err().contains("65,536"));
    // `tardy exec --timer-slack 0` is refused before anything runs; a
    // program that is not there is said so (exec returns only on failure).
    let argv = vec!["/nonexistent/program".to_string()];
    assert!(tardy::measure::inherit::exec_with_timer_slack(0, &argv).contains("at least 1 ns"));
    assert!(tardy::measure::inherit::exec_with_timer_slack(1, &[]).contains("no command"));
}

#[test]
fn token_add_is_a_library_call() {
    use std::os::unix::fs::PermissionsExt;
    use tardy::server::auth::{Scope, Tokens, add_token};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens");
    let write = add_token(&file, Scope::Write, "ci").unwrap();
    let read = add_token(&file, Scope::Read, "dashboard\n").unwrap();
    assert!(write.starts_with("tardy_") && write != read);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(&write), "only hashes are stored");
    assert_eq!(text.lines().count(), 2);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(Tokens::load(&file).unwrap().len(), 2);
    // Not a token file: refused, left as it was.
    let other = dir.path().join("notes");
    std::fs::write(&other, "hello world\n").unwrap();
    assert!(add_token(&other, Scope::Write, "x").is_err());
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "hello world\n");
}
