//! The history store's behaviour, run the same way against both backends:
//! SQLite in a temporary file, and PostgreSQL in a throwaway database when
//! `TARDY_TEST_POSTGRES` names a server (skipped with a printed reason
//! otherwise; `.ci/run` starts one). Round trips, all-or-nothing batches,
//! idempotent uploads under concurrency, detection into alerts, migrations
//! raced by several servers.

mod common;

use tardy::history::detect::{DetectOptions, detect};
use tardy::store::history::{
    AlertState, NewPoint, PointFilter, Provenance, SeriesKind, SeriesSpec, TestResult, Upload,
    UploadOutcome,
};
use tardy::store::{Batch, History, PgStore, SqliteStore};

/// Opens a new connection to the same database, as often as asked.
type Opener = Box<dyn Fn() -> Box<dyn History + Send> + Send + Sync>;

/// Run `check` on SQLite, then on PostgreSQL when a server is configured.
fn on_both(test: &str, check: fn(&Opener)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.db");
    let sqlite: Opener = Box::new(move || Box::new(SqliteStore::open(&path, "p").unwrap()));
    check(&sqlite);
    if let Some(pg) = common::temp_postgres(test) {
        let url = pg.url.clone();
        let postgres: Opener = Box::new(move || Box::new(PgStore::connect(&url, "p").unwrap()));
        check(&postgres);
    }
}

fn point(commit: &str, t: i64, v: f64) -> NewPoint {
    NewPoint {
        provenance: Provenance {
            commit: Some(commit.into()),
            branch: Some("main".into()),
            commit_time: Some(t),
            run_time: t + 5,
        },
        fingerprint: None,
        value: v,
        samples: vec![v, v * 1.01],
        tests: vec![
            TestResult {
                name: "a::b".into(),
                duration: v / 2.0,
                status: "passed".into(),
            },
            TestResult {
                name: "it's \"quoted\"; DROP TABLE points; --".into(),
                duration: 0.25,
                status: "failed".into(),
            },
        ],
    }
}

fn suite() -> SeriesSpec {
    let mut spec = SeriesSpec::new("suite", "suite", "s");
    spec.kind = SeriesKind::Suite;
    spec
}

#[test]
fn round_trip() {
    on_both("round_trip", |open| {
        let mut db = open();
        let ids = db
            .save(&[Batch {
                spec: suite(),
                points: vec![point("b", 20, 2.0), point("a", 10, 1.0)],
            }])
            .unwrap();
        assert_eq!(ids[0].len(), 2);
        let info = db.series("suite").unwrap().unwrap();
        assert_eq!((info.points, info.tests), (2, 2));
        assert_eq!(info.last_value, Some(2.0));
        assert_eq!(info.kind, SeriesKind::Suite);
        let pts = db.points(info.id, &PointFilter::default()).unwrap();
        assert_eq!(pts[0].commit.as_deref(), Some("a"));
        assert_eq!(db.samples(pts[0].id).unwrap(), vec![1.0, 1.01]);
        let mut seen = Vec::new();
        db.for_each_test(info.id, &PointFilter::default(), &mut |t, p| {
            seen.push((
                t.name.clone(),
                p.iter().map(|x| x.value).collect::<Vec<_>>(),
            ));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen[0], ("a::b".to_string(), vec![0.5, 1.0]));
        assert!(seen[1].0.contains("DROP TABLE"));
        let filtered = db
            .points(
                info.id,
                &PointFilter {
                    branch: Some("main".into()),
                    since: Some(15),
                    newest: None,
                    skip_newest: 0,
                },
            )
            .unwrap();
        assert_eq!(filtered.len(), 1);
        let other = PointFilter {
            branch: Some("x' OR '1'='1".into()),
            since: None,
            newest: None,
            skip_newest: 0,
        };
        assert!(db.points(info.id, &other).unwrap().is_empty());
        assert!(db.series("suite' OR '1'='1").unwrap().is_none());
        // A second connection sees the same, and migrates nothing twice.
        let again = open();
        assert_eq!(again.list().unwrap().len(), 1);
    });
}

#[test]
fn a_bad_value_rolls_the_whole_save_back() {
    on_both("bad_value", |open| {
        let mut db = open();
        let err = db.save(&[
            Batch {
                spec: SeriesSpec::new("ok", "wall", "s"),
                points: vec![point("a", 1, 1.0)],
            },
            Batch {
                spec: SeriesSpec::new("x", "wall", "s"),
                points: vec![point("a", 1, 1.0), point("b", 2, f64::NAN)],
            },
        ]);
        assert!(err.is_err());
        assert!(db.list().unwrap().is_empty());
        let upload = Upload {
            run_id: "r".into(),
            kind: "runs".into(),
        };
        let bad = Batch {
            spec: SeriesSpec::new("y", "wall", "s"),
            points: vec![point("a", 1, f64::INFINITY)],
        };
        assert!(db.save_upload(&upload, &[bad]).is_err());
        assert!(db.uploads(10).unwrap().is_empty());
        assert!(db.list().unwrap().is_empty());
    });
}

#[test]
fn an_upload_is_stored_once_however_often_it_is_sent() {
    on_both("upload_once", |open| {
        let batch = Batch {
            spec: SeriesSpec::new("bench", "wall", "s"),
            points: vec![point("c1", 100, 1.0)],
        };
        // 8 connections send the same run at once, twice each.
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let mut db = open();
                    let upload = Upload {
                        run_id: "same".into(),
                        kind: "runs".into(),
                    };
                    for _ in 0..2 {
                        db.save_upload(&upload, std::slice::from_ref(&batch))
                            .unwrap();
                    }
                });
            }
        });
        let db = open();
        let info = db.series("bench").unwrap().unwrap();
        assert_eq!(info.points, 1);
        let ups = db.uploads(10).unwrap();
        assert_eq!(ups.len(), 1);
        assert_eq!(ups[0].series, vec!["bench".to_string()]);
        assert_eq!(ups[0].commit.as_deref(), Some("c1"));
        let mut db = open();
        let again = db
            .save_upload(
                &Upload {
                    run_id: "same".into(),
                    kind: "runs".into(),
                },
                std::slice::from_ref(&batch),
            )
            .unwrap();
        assert!(matches!(again, UploadOutcome::Duplicate { .. }));
        // Different runs into one series from 8 connections: all kept.
        std::thread::scope(|s| {
            for k in 0..8 {
                let batch = batch.clone();
                s.spawn(move || {
                    let mut db = open();
                    let upload = Upload {
                        run_id: format!("run-{k}"),
                        kind: "runs".into(),
                    };
                    let out = db.save_upload(&upload, &[batch]).unwrap();
                    assert!(matches!(out, UploadOutcome::Stored(_)));
                });
            }
        });
        assert_eq!(open().series("bench").unwrap().unwrap().points, 9);
    });
}

#[test]
fn a_step_becomes_one_alert_that_can_be_acknowledged() {
    on_both("step_alert", |open| {
        let mut db = open();
        let points: Vec<NewPoint> = (0..40)
            .map(|i| {
                let base = if i < 25 { 10.0 } else { 12.0 };
                point(
                    &format!("c{i:03}"),
                    1000 + i as i64,
                    base + common::noise(i, 1) * 0.2,
                )
            })
            .collect();
        db.save(&[Batch {
            spec: suite(),
            points,
        }])
        .unwrap();
        let report = detect(db.as_mut(), &[], &DetectOptions::default()).unwrap();
        assert_eq!(report.new_alerts.len(), 1, "{report:?}");
        let alert = &report.new_alerts[0];
        assert_eq!(alert.from_commit.as_deref(), Some("c024"));
        assert_eq!(alert.to_commit.as_deref(), Some("c025"));
        // The suite and its test a::b (half the suite time) both stepped.
        assert_eq!(alert.members.len(), 2, "{alert:?}");
        // Nothing new: detection again alerts nothing.
        let again = detect(db.as_mut(), &[], &DetectOptions::default()).unwrap();
        assert!(again.new_alerts.is_empty());
        let id = db.alerts(&[AlertState::Open]).unwrap()[0].id;
        db.set_alert_state(id, AlertState::Acknowledged).unwrap();
        assert!(db.alerts(&[AlertState::Open]).unwrap().is_empty());
        assert!(
            db.set_alert_state(id + 1000, AlertState::Dismissed)
                .is_err()
        );
        db.annotate(Some("suite"), "c025", None, "moved to the new runner")
            .unwrap();
        assert_eq!(db.annotations().unwrap()[0].text, "moved to the new runner");
    });
}

#[test]
fn machines_are_listed_with_when_they_were_seen() {
    on_both("machines", |open| {
        let mut db = open();
        let fp = tardy::probe::Fingerprint {
            cpu_model: Some("Old CPU".into()),
            ..Default::default()
        };
        let mut newer = fp.clone();
        newer.cpu_model = Some("New CPU".into());
        let mut pts = vec![
            point("a", 10, 1.0),
            point("b", 20, 1.0),
            point("c", 30, 1.0),
        ];
        pts[0].fingerprint = Some(std::sync::Arc::new(fp.clone()));
        pts[1].fingerprint = Some(std::sync::Arc::new(fp));
        // An old commit measured much later: the machine was seen then.
        pts[1].provenance.run_time = 500;
        pts[2].fingerprint = Some(std::sync::Arc::new(newer));
        db.save(&[Batch {
            spec: SeriesSpec::new("m", "wall", "s"),
            points: pts,
        }])
        .unwrap();
        let m = db.machines().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].first_seen, m[0].last_seen, m[0].points), (15, 500, 2));
        assert_eq!(
            m[1].fingerprint.as_ref().unwrap().cpu_model.as_deref(),
            Some("New CPU")
        );
    });
}

#[test]
fn servers_starting_together_migrate_once() {
    on_both("migrate_race", |open| {
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    open().list().unwrap();
                });
            }
        });
        assert!(open().list().unwrap().is_empty());
    });
}

#[test]
fn a_large_save_keeps_every_points_samples_and_tests_with_it() {
    // Points go in by multi-row INSERTs of 500; 1234 points (not a multiple), each
    // with its own value, samples and test duration, must come back paired.
    on_both("large_save", |open| {
        let mut db = open();
        let points: Vec<NewPoint> = (0..1234)
            .map(|i| point(&format!("c{i:04}"), 1000 + i, 1.0 + i as f64))
            .collect();
        let ids = db
            .save(&[Batch {
                spec: suite(),
                points,
            }])
            .unwrap();
        assert_eq!(ids[0].len(), 1234);
        let info = db.series("suite").unwrap().unwrap();
        let pts = db.points(info.id, &PointFilter::default()).unwrap();
        assert_eq!(pts.len(), 1234);
        for (i, p) in pts.iter().enumerate() {
            let v = 1.0 + i as f64;
            assert_eq!(p.commit.as_deref(), Some(format!("c{i:04}").as_str()));
            assert_eq!(p.value, v);
            assert_eq!(db.samples(p.id).unwrap(), vec![v, v * 1.01], "point {i}");
        }
        let mut durations = Vec::new();
        db.for_each_test(info.id, &PointFilter::default(), &mut |t, p| {
            if t.name == "a::b" {
                durations = p.iter().map(|x| x.value).collect();
            }
            Ok(())
        })
        .unwrap();
        let want: Vec<f64> = (0..1234).map(|i| (1.0 + i as f64) / 2.0).collect();
        assert_eq!(durations, want);
    });
}

/// `history import` of a CSV stores its series one at a time
/// (`History::save_each`, so a million points are never all in memory):
/// what it stores is exactly what saving every batch at once stores, on
/// random tables with holes, one to five metrics, with and without a prefix.
#[test]
fn a_table_stored_series_by_series_is_the_table_stored_at_once() {
    use proptest::prelude::*;
    use tardy::history::import::{Labels, csv_batches, read_csv};
    use tardy::history::ops::{ImportSpec, import};
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases: 24,
        ..Default::default()
    });
    let table = (1usize..6, 1usize..40, any::<bool>()).prop_flat_map(|(m, rows, prefix)| {
        (
            proptest::collection::vec(
                proptest::collection::vec(proptest::option::weighted(0.85, 0.0f64..1e6), m),
                rows,
            ),
            Just(prefix),
        )
    });
    runner
        .run(&table, |(rows, prefix)| {
            let dir = tempfile::tempdir().unwrap();
            let m = rows[0].len();
            let mut csv = String::from("time,commit");
            for j in (0..m).rev() {
                csv.push_str(&format!(",metric{j}"));
            }
            csv.push('\n');
            for (i, r) in rows.iter().enumerate() {
                csv.push_str(&format!("{},c{i}", 1_700_000_000 + i * 60));
                for v in r {
                    match v {
                        Some(v) => csv.push_str(&format!(",{v}")),
                        None => csv.push(','),
                    }
                }
                csv.push('\n');
            }
            let file = dir.path().join("t.csv");
            std::fs::write(&file, &csv).unwrap();
            let labels = Labels {
                series: prefix.then(|| "pre".to_string()),
                ..Labels::default()
            };
            let mut each = SqliteStore::open(&dir.path().join("each.db"), "p").unwrap();
            let spec = ImportSpec {
                format: "csv",
                time_column: "time",
                labels: labels.clone(),
            };
            import(&mut each, &[file], &spec, &mut |_| {}).unwrap();
            let mut once = SqliteStore::open(&dir.path().join("once.db"), "p").unwrap();
            let table = read_csv(&csv, "t.csv", "time").unwrap();
            once.save(&csv_batches(&table, &labels)).unwrap();
            let (a, b) = (each.list().unwrap(), once.list().unwrap());
            prop_assert_eq!(
                a.iter().map(|s| (&s.name, s.points)).collect::<Vec<_>>(),
                b.iter().map(|s| (&s.name, s.points)).collect::<Vec<_>>()
            );
            for (x, y) in a.iter().zip(&b) {
                let strip = |p: Vec<tardy::store::history::Point>| -> Vec<_> {
                    p.into_iter()
                        .map(|p| (p.commit, p.branch, p.commit_time, p.value.to_bits()))
                        .collect()
                };
                let f = PointFilter::default();
                prop_assert_eq!(
                    strip(each.points(x.id, &f).unwrap()),
                    strip(once.points(y.id, &f).unwrap())
                );
            }
            Ok(())
        })
        .unwrap();
}

/// A server's stores share the test ids they have found (`store::TestIds`),
/// so an upload of a suite stored before looks none of its names up. What
/// they store is exactly what stores looking every name up store: random
/// uploads of two suites, names coming and going, through two connections
/// sharing one map (as the server's pool does), with saves that fail on a
/// bad value and roll back the names they had inserted (a map that kept
/// those would point later uploads at rows that are gone or another's).
#[test]
fn shared_test_ids_store_what_looking_every_name_up_stores() {
    use proptest::prelude::*;
    use std::sync::Arc;
    use tardy::store::TestIds;
    type Plan = Vec<(bool, u8, Vec<u8>, bool)>;
    let check = |plain: &mut dyn History, shared: [&mut dyn History; 2], plan: &Plan| {
        for (i, (which, suite, names, bad)) in plan.iter().enumerate() {
            let mut spec = SeriesSpec::new(&format!("suite{suite}"), "suite", "s");
            spec.kind = SeriesKind::Suite;
            let mut p = point(&format!("c{i}"), 100 + i as i64, 1.0 + i as f64);
            p.tests = names
                .iter()
                .map(|n| TestResult {
                    name: format!("com.example.Suite{suite}.test_{n}"),
                    duration: i as f64 + *n as f64 / 1000.0,
                    status: "passed".into(),
                })
                .collect();
            if *bad {
                p.value = f64::NAN;
            }
            let upload = Upload {
                run_id: format!("r{i}"),
                kind: "tests".into(),
            };
            let batch = [Batch {
                spec,
                points: vec![p],
            }];
            let a = plain.save_upload(&upload, &batch).is_ok();
            let b = shared[usize::from(*which)]
                .save_upload(&upload, &batch)
                .is_ok();
            assert_eq!((a, b), (!bad, !bad), "upload {i}");
        }
        let seen = |db: &dyn History| {
            let mut out = Vec::new();
            for s in db.list().unwrap() {
                db.for_each_test(s.id, &PointFilter::default(), &mut |t, p| {
                    let values: Vec<f64> = p.iter().map(|x| x.value).collect();
                    out.push((s.name.clone(), t.name.clone(), values));
                    Ok(())
                })
                .unwrap();
            }
            out.sort_by(|x, y| (&x.0, &x.1).cmp(&(&y.0, &y.1)));
            out
        };
        assert_eq!(seen(plain), seen(shared[0]));
        assert_eq!(seen(shared[0]), seen(shared[1]));
    };
    let plans = prop::collection::vec(
        (
            any::<bool>(),
            0u8..2,
            prop::collection::vec(0u8..40, 0..25),
            prop::bool::weighted(0.2),
        ),
        1..25,
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    });
    let pg = common::temp_postgres("shared_test_ids");
    runner
        .run(&plans, |plan| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("h.db");
            let ids = Arc::new(TestIds::new(1 << 20));
            let mut plain = SqliteStore::open(&path, "plain").unwrap();
            let mut s0 = SqliteStore::open(&path, "shared")
                .unwrap()
                .sharing_test_ids(Arc::clone(&ids));
            let mut s1 = SqliteStore::open(&path, "shared")
                .unwrap()
                .sharing_test_ids(Arc::clone(&ids));
            check(&mut plain, [&mut s0, &mut s1], &plan);
            if let Some(pg) = &pg {
                // One database for every case: each case its own projects.
                static CASE: std::sync::atomic::AtomicUsize =
                    std::sync::atomic::AtomicUsize::new(0);
                let n = CASE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let ids = Arc::new(TestIds::new(1 << 20));
                let mut plain = PgStore::connect(&pg.url, &format!("plain{n}")).unwrap();
                let mut s0 = PgStore::connect(&pg.url, &format!("shared{n}"))
                    .unwrap()
                    .sharing_test_ids(Arc::clone(&ids));
                let mut s1 = PgStore::connect(&pg.url, &format!("shared{n}"))
                    .unwrap()
                    .sharing_test_ids(Arc::clone(&ids));
                check(&mut plain, [&mut s0, &mut s1], &plan);
            }
            Ok(())
        })
        .unwrap();
}
