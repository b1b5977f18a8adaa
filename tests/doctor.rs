//! `tardy doctor` on this machine: each probe measures what it claims when Linux lets
//! a test change the condition (timer slack, touched memory, a busy neighbour, an
//! unwritable directory), and `--compare` names the difference.

mod common;

use common::cmd as tardy;

use serde_json::Value;
use std::os::unix::process::CommandExt;

/// The probes measure the machine: tests in this file take turns, so that one test's
/// busy neighbours do not disturb another's sleeps.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("tardy")
}

fn json_of(out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn probe<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no probe {id}"))
}

fn measure<'a>(p: &'a Value, key: &str) -> &'a Value {
    p["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["key"] == key)
        .unwrap_or_else(|| panic!("no measure {key} in {p}"))
}

/// `tardy doctor ARGS` with this process's timer slack set to `slack_ns` for the child
/// (prctl PR_SET_TIMERSLACK is inherited across exec).
fn with_slack(slack_ns: u64, args: &[&str]) -> std::process::Output {
    let mut cmd = std::process::Command::new(bin());
    cmd.arg("doctor").args(args).env("NO_COLOR", "1");
    // SAFETY: prctl only changes the child's own timer slack before exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_TIMERSLACK, slack_ns as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

#[test]
fn timer_slack_shows_in_the_sleep_probe_and_in_compare() {
    let _turn = turn();
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    let out = with_slack(
        50_000,
        &[
            "--quick",
            "--only",
            "sleep,clock",
            "--json",
            "--save",
            a.to_str().unwrap(),
        ],
    );
    let normal = json_of(&out);
    let out = with_slack(
        5_000_000,
        &[
            "--quick",
            "--only",
            "sleep,clock",
            "--json",
            "--save",
            b.to_str().unwrap(),
        ],
    );
    let slack = json_of(&out);
    assert_eq!(slack["machine"]["timer_slack_ns"], 5_000_000);
    let s = probe(&slack, "sleep");
    // A 1 ms sleep may end up to 5 ms late, and does (the kernel coalesces to the slack).
    assert!(
        measure(s, "sleep_1ms")["median"].as_f64().unwrap() > 2.5e6,
        "{s}"
    );
    assert!(
        measure(s, "sleep_1ms")["samples"].is_null(),
        "--json leaves out samples"
    );
    assert_eq!(s["assessment"]["health"], "bad");
    assert!(
        s["assessment"]["meaning"]
            .as_str()
            .unwrap()
            .contains("timer slack")
    );
    let n = probe(&normal, "sleep");
    assert!(measure(n, "sleep_1ms")["median"].as_f64().unwrap() < 2.5e6);
    // --save keeps the raw samples.
    let saved: Value = serde_json::from_slice(&std::fs::read(&b).unwrap()).unwrap();
    assert_eq!(
        measure(probe(&saved, "sleep"), "sleep_1ms")["samples"]
            .as_array()
            .unwrap()
            .len(),
        25
    );
    // --compare names the setting and ranks the sleep probe first.
    let out = tardy()
        .args(["doctor", "--compare"])
        .args([&a, &b])
        .arg("--json")
        .output()
        .unwrap();
    let c = json_of(&out);
    assert_eq!(c["probes"][0]["probe"], "sleep");
    // The measure timer slack moves is slower; which sleep measure ranks
    // first can vary (sched_yield beside other tests' load swings 10x either
    // way, and was once first as "faster" on a busy machine).
    let one_ms = c["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == "sleep_1ms")
        .unwrap();
    assert_eq!(one_ms["verdict"], "slower", "{c}");
    assert!(c["settings"].to_string().contains("timer slack"), "{c}");
    let first = c["diagnosis"][0].as_str().unwrap();
    assert!(
        first.contains("sleeps") && first.contains("timer slack"),
        "{first}"
    );
    // The same comparison against this machine now, measured under the raised slack.
    let out = with_slack(5_000_000, &["--compare", a.to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("this machine, now") && text.contains("timer slack"),
        "{text}"
    );
}

#[test]
fn fork_cost_grows_with_touched_memory() {
    let _turn = turn();
    use tardy::probe::process;
    use tardy::probe::sample::Budget;
    // 512 MiB of pages to copy the tables of (131,072 entries, a few ms)
    // against none; the fastest fork of each, since two CPU hogs beside the
    // test only ever add to a fork's time.
    let r = process::fork(&Budget::new(true), &[0, 512]);
    if r.facts.contains_key("skipped_512mib") {
        eprintln!(
            "SKIPPED fork_cost_grows_with_touched_memory: not enough free memory for 512 MiB"
        );
        return;
    }
    let small = r.measure("fork_0mib").unwrap().min;
    let big = r.measure("fork_512mib").unwrap().min;
    assert!(
        big > small,
        "fork with 512 MiB touched {big} ns, with none {small} ns"
    );
}

#[test]
fn spawn_reports_its_size_dependence_either_way() {
    let _turn = turn();
    let out = tardy()
        .args(["doctor", "--quick", "--only", "spawn", "--json"])
        .output()
        .unwrap();
    let r = json_of(&out);
    let p = probe(&r, "spawn");
    let small = measure(p, "small")["median"].as_f64().unwrap();
    let large = measure(p, "large")["median"].as_f64().unwrap();
    assert!(
        p["facts"]["large_bytes"].as_f64().unwrap()
            > 10.0 * p["facts"]["small_bytes"].as_f64().unwrap()
    );
    let meaning = p["assessment"]["meaning"].as_str().unwrap();
    if large / small >= 1.5 {
        assert!(meaning.contains("grows with binary size"), "{meaning}");
    } else {
        assert!(meaning.contains("no size dependence"), "{meaning}");
    }
}

#[test]
fn a_busy_neighbour_shows_in_the_contention_probe() {
    let _turn = turn();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Twice as many busy processes as CPUs: our busy threads get about a third.
    let hogs = common::Hogs::start(2 * cpus);
    let out = tardy()
        .args(["doctor", "--quick", "--only", "contention", "--json"])
        .output()
        .unwrap();
    drop(hogs);
    let r = json_of(&out);
    let p = probe(&r, "contention");
    let share = measure(p, "cpu_share")["median"].as_f64().unwrap();
    assert!(share < 0.8, "busy threads still got {share} of a CPU: {p}");
    assert!(
        matches!(p["assessment"]["health"].as_str(), Some("warn" | "bad")),
        "{p}"
    );
    assert!(p["facts"]["others_running"].as_f64().unwrap() >= 1.0, "{p}");
}

#[test]
fn unusable_directories_make_probes_unavailable_not_the_run() {
    let _turn = turn();
    // /proc takes no new files: the I/O probes say why, the others still run.
    let out = tardy()
        .args([
            "doctor",
            "--quick",
            "--only",
            "fsync,metadata,first-exec,clock",
            "--dir",
            "/proc",
            "--json",
        ])
        .output()
        .unwrap();
    let r = json_of(&out);
    for id in ["fsync", "metadata", "first-exec"] {
        let p = probe(&r, id);
        assert!(p["unavailable"].as_str().unwrap().contains("/proc"), "{p}");
        assert_eq!(p["assessment"]["health"], "unavailable");
    }
    assert!(probe(&r, "clock")["unavailable"].is_null());
    // The text report marks them n/a.
    let out = tardy()
        .args(["doctor", "--quick", "--only", "fsync", "--dir", "/proc"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("n/a"));
}

#[test]
fn every_probe_runs_and_is_judged() {
    let _turn = turn();
    let d = tempfile::tempdir().unwrap();
    let out = tardy()
        .args(["doctor", "--quick", "--json", "--dir"])
        .arg(d.path())
        .output()
        .unwrap();
    let r = json_of(&out);
    assert_eq!(r["schema"], "tardy.doctor");
    assert_eq!(r["schema_version"], 1);
    let probes = r["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 14);
    assert!(
        probes
            .iter()
            .any(|p| p["id"] == "counters" && p["facts"]["pmu"].is_boolean())
    );
    for p in probes {
        let a = &p["assessment"];
        assert!(
            matches!(
                a["health"].as_str(),
                Some("ok" | "info" | "warn" | "bad" | "unavailable")
            ),
            "{p}"
        );
        assert!(!a["meaning"].as_str().unwrap().is_empty());
        if p["unavailable"].is_null() {
            for m in p["measures"].as_array().unwrap() {
                let (min, med, p90) = (
                    m["min"].as_f64().unwrap(),
                    m["median"].as_f64().unwrap(),
                    m["p90"].as_f64().unwrap(),
                );
                assert!(min <= med && med <= p90, "{m}");
            }
        }
    }
    // The fingerprint carries the new facts.
    for key in ["clock_res_monotonic_ns", "runtime_env", "cwd_filesystem"] {
        assert!(r["machine"].get(key).is_some(), "{key}");
    }
}

#[test]
fn bad_compare_files_are_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let cases = [
        (write("garbage.json", "not json"), "not JSON"),
        (
            write(
                "results.json",
                r#"{"schema":"tardy.results","schema_version":1}"#,
            ),
            "tardy.results",
        ),
        (
            write(
                "future.json",
                r#"{"schema":"tardy.doctor","schema_version":99}"#,
            ),
            "schema_version 99",
        ),
        (write("noschema.json", r#"{"probes":[]}"#), "no \"schema\""),
        (write("binary.json", "\u{0}\u{1}junk"), "binary data"),
        (
            write(
                "shape.json",
                r#"{"schema":"tardy.doctor","schema_version":1,"probes":7}"#,
            ),
            "not a doctor report",
        ),
        (d.path().join("missing.json"), "cannot read"),
    ];
    for (path, expect) in &cases {
        let out = tardy()
            .args(["doctor", "--compare"])
            .arg(path)
            .arg(path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(expect) && err.trim().lines().count() == 1,
            "{}: {err}",
            path.display()
        );
    }
    let out = tardy()
        .args(["doctor", "--only", "sleep,warp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown probe 'warp'"));
}

#[test]
fn fail_on_turns_a_bad_probe_into_exit_1() {
    let _turn = turn();
    // A 5 ms timer slack makes the sleep probe bad (see above).
    let out = with_slack(5_000_000, &["--quick", "--only", "sleep"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "without --fail-on: a report, exit 0"
    );
    let out = with_slack(
        5_000_000,
        &["--quick", "--only", "sleep", "--fail-on", "bad"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 probe at or past --fail-on bad: sleep (bad)"),
        "{err}"
    );
    assert!(!out.stdout.is_empty(), "the report is still printed");
    let out = with_slack(
        5_000_000,
        &["--quick", "--only", "sleep", "--fail-on", "worse"],
    );
    assert_eq!(out.status.code(), Some(2));
}
