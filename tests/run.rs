//! `tardy run` on real processes: the binary as a user runs it.

mod common;

use common::cmd as tardy;

use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Run `tardy run --json ARGS...`, expect success, return the parsed results.
fn run_json(args: &[&str]) -> Value {
    let out = tardy()
        .arg("run")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tardy run {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn runs(b: &Value) -> &Vec<Value> {
    b["runs"].as_array().unwrap()
}

fn measured(b: &Value) -> Vec<&Value> {
    runs(b).iter().filter(|r| r["warmup"] == false).collect()
}

#[test]
fn exact_run_count_and_warmups_are_not_counted() {
    let r = run_json(&["-N", "--runs", "7", "--warmup", "2", "true"]);
    let b = &r["benchmarks"][0];
    assert_eq!(measured(b).len(), 7);
    assert_eq!(runs(b).len(), 9);
    assert_eq!(b["summary"]["n"], 7);
    assert_eq!(r["status"], "complete");
    assert_eq!(r["stop_reason"]["rule"], "exact_runs");
    assert_eq!(r["schema"], "tardy.results");
}

#[test]
fn automatic_warmup_is_one_run_for_fast_commands() {
    let r = run_json(&["--runs", "3", "sleep 0.001"]);
    let b = &r["benchmarks"][0];
    assert_eq!(runs(b).iter().filter(|r| r["warmup"] == true).count(), 1);
    assert_eq!(measured(b).len(), 3);
    assert!(r["options"]["warmup"].is_null());
}

#[test]
fn rusage_belongs_to_each_run_alone() {
    // dd allocates a 200 MB buffer; `true` in the same interleaved session must not inherit it.
    let r = run_json(&[
        "--runs",
        "3",
        "--warmup",
        "0",
        "dd if=/dev/zero of=/dev/null bs=200M count=1",
        "true",
    ]);
    let big = &r["benchmarks"][0];
    let small = &r["benchmarks"][1];
    for run in measured(big) {
        let kib = run["max_rss_kib"].as_u64().unwrap();
        assert!(kib > 190 * 1024, "dd max RSS {kib} KiB");
    }
    for run in measured(small) {
        let kib = run["max_rss_kib"].as_u64().unwrap();
        assert!(
            kib < 50 * 1024,
            "true max RSS {kib} KiB: RUSAGE_CHILDREN leak?"
        );
    }
    assert!(big["resources"]["max_rss_median_kib"].as_u64().unwrap() > 190 * 1024);
}

#[test]
fn max_rss_is_the_commands_own_not_tardys() {
    // Linux carries the memory a process had before exec into its max RSS:
    // spawned from tardy (tens of MiB in a debug build), `true` read tardy's
    // peak. Through the trampoline it reads its own, as /usr/bin/time does
    // (about 1 MiB), and a program's buffer is counted once.
    let r = run_json(&[
        "--runs",
        "3",
        "--warmup",
        "0",
        "true",
        "dd if=/dev/zero of=/dev/null bs=64M count=1",
    ]);
    // Without it (TARDY_NO_TRAMPOLINE), `true` reads tardy's own memory:
    // what the trampoline is for.
    let out = tardy()
        .env("TARDY_NO_TRAMPOLINE", "1")
        .args(["run", "--json", "--runs", "3", "--warmup", "0", "true"])
        .output()
        .unwrap();
    let direct: Value = serde_json::from_slice(&out.stdout).unwrap();
    let direct_kib = direct["benchmarks"][0]["resources"]["max_rss_median_kib"]
        .as_u64()
        .unwrap();
    assert!(
        direct_kib > 4 * 1024,
        "spawned directly, true read {direct_kib} KiB"
    );
    // The spawner is tardy too: a few hundred KiB of its own in a release
    // build (bench/maxrss.sh: 1.0-1.1x /usr/bin/time), 1.5 MiB in a debug
    // one (whose binary has more to relocate); `true` read 2.6 MiB here
    // where directly it read 4.7.
    for run in measured(&r["benchmarks"][0]) {
        let kib = run["max_rss_kib"].as_u64().unwrap();
        assert!(
            kib < 8 * 1024 && kib * 3 < direct_kib * 2,
            "true max RSS {kib} KiB, {direct_kib} KiB spawned directly"
        );
    }
    for run in measured(&r["benchmarks"][1]) {
        let kib = run["max_rss_kib"].as_u64().unwrap();
        assert!(
            (64 * 1024..72 * 1024).contains(&kib),
            "dd bs=64M max RSS {kib} KiB"
        );
    }
    // A command's exit code still comes through it.
    let out = tardy()
        .args(["run", "--runs", "1", "--warmup", "0", "sh -c 'exit 3'"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("exited with code 3"));
}

#[test]
fn timeout_kills_the_run_and_records_it() {
    let start = Instant::now();
    let r = run_json(&[
        "--timeout",
        "0.3",
        "--runs",
        "2",
        "--warmup",
        "0",
        "sleep 5",
    ]);
    let b = &r["benchmarks"][0];
    let all = measured(b);
    assert_eq!(all.len(), 2, "timed-out runs are recorded, never dropped");
    assert_eq!(
        runs(b).len(),
        2,
        "a timed-out first run is not an automatic warm-up"
    );
    for run in all {
        assert_eq!(run["timed_out"], true);
        assert_eq!(run["signal"], 9);
        assert!(run["wall_ns"].as_u64().unwrap() < 2_000_000_000);
    }
    assert!(b["summary"].is_null());
    assert_eq!(b["warnings"][0]["kind"], "failed_runs");
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "sleep 5 was not killed"
    );
}

#[test]
fn timeout_kills_the_whole_process_group() {
    // The shell's child `sleep` must die too, or the pipe would keep the run alive.
    let r = run_json(&[
        "--timeout",
        "0.3",
        "--runs",
        "1",
        "--warmup",
        "0",
        "--output",
        "pipe",
        "sleep 5 | cat",
    ]);
    let run = &measured(&r["benchmarks"][0])[0].clone();
    assert_eq!(run["timed_out"], true);
    assert!(run["wall_ns"].as_u64().unwrap() < 2_000_000_000);
}

#[test]
fn shell_is_used_only_when_needed_and_corrected() {
    let r = run_json(&["--runs", "2", "echo hi | cat", "echo 'a b'"]);
    let piped = &r["benchmarks"][0];
    let plain = &r["benchmarks"][1];
    assert_eq!(piped["exec"]["mode"], "shell");
    assert_eq!(piped["exec"]["shell"], "sh");
    assert_eq!(plain["exec"]["mode"], "direct");
    assert_eq!(plain["exec"]["argv"], serde_json::json!(["echo", "a b"]));
    let correction = piped["shell_correction_ns"].as_u64().unwrap();
    assert!(correction > 0);
    assert_eq!(plain["shell_correction_ns"], 0);
    assert_eq!(r["shell_corrections"][0]["runs"], 30);
    for run in measured(piped) {
        let (wall, net) = (
            run["wall_ns"].as_u64().unwrap(),
            run["net_wall_ns"].as_u64().unwrap(),
        );
        assert_eq!(net, wall.saturating_sub(correction));
    }
}

#[test]
fn parameter_scan_and_list_expand_to_benchmarks() {
    let r = run_json(&[
        "--runs",
        "2",
        "-P",
        "n",
        "1",
        "3",
        "-n",
        "sleep {n}ms",
        "sleep 0.00{n}",
    ]);
    let b = r["benchmarks"].as_array().unwrap();
    assert_eq!(b.len(), 3);
    for (i, bench) in b.iter().enumerate() {
        let n = (i + 1).to_string();
        assert_eq!(bench["parameters"]["n"], n.as_str());
        assert_eq!(bench["command"], format!("sleep 0.00{n}"));
        assert_eq!(bench["name"], format!("sleep {n}ms"));
    }
    let r = run_json(&[
        "--runs",
        "1",
        "-L",
        "x",
        "a,b",
        "-L",
        "y",
        "1,2",
        "echo {x} {y}",
    ]);
    let cmds: Vec<&str> = r["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["command"].as_str().unwrap())
        .collect();
    assert_eq!(cmds, ["echo a 1", "echo a 2", "echo b 1", "echo b 2"]);
}

#[test]
fn interleaving_runs_each_command_once_per_round_in_shuffled_order() {
    let r = run_json(&[
        "-N", "--runs", "6", "--warmup", "0", "--seed", "42", "true", "echo x", "echo y",
    ]);
    let mut by_seq: Vec<(u64, u64, usize)> = Vec::new();
    for (i, b) in r["benchmarks"].as_array().unwrap().iter().enumerate() {
        for run in runs(b) {
            by_seq.push((
                run["seq"].as_u64().unwrap(),
                run["round"].as_u64().unwrap(),
                i,
            ));
        }
    }
    by_seq.sort();
    assert_eq!(by_seq.len(), 18);
    let mut orders = BTreeSet::new();
    for round in by_seq.chunks(3) {
        assert!(
            round.iter().all(|(_, r, _)| *r == round[0].1),
            "a round is contiguous"
        );
        let order: Vec<usize> = round.iter().map(|(_, _, b)| *b).collect();
        let set: BTreeSet<usize> = order.iter().copied().collect();
        assert_eq!(set.len(), 3, "each round is a permutation: {order:?}");
        orders.insert(order);
    }
    assert!(orders.len() > 1, "order is shuffled between rounds");
    // Same seed, same order.
    let again = run_json(&[
        "-N", "--runs", "6", "--warmup", "0", "--seed", "42", "true", "echo x", "echo y",
    ]);
    let seqs = |v: &Value| -> Vec<Vec<u64>> {
        v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| runs(b).iter().map(|r| r["seq"].as_u64().unwrap()).collect())
            .collect()
    };
    assert_eq!(seqs(&r), seqs(&again));
}

#[test]
fn sequential_runs_blocks() {
    let r = run_json(&[
        "-N",
        "--runs",
        "3",
        "--warmup",
        "0",
        "--sequential",
        "true",
        "echo x",
    ]);
    let first: Vec<u64> = runs(&r["benchmarks"][0])
        .iter()
        .map(|r| r["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(first, [0, 1, 2]);
    assert_eq!(r["options"]["interleaved"], false);
}

#[test]
fn comparison_has_a_verdict() {
    let r = run_json(&["--runs", "15", "sleep 0.01", "sleep 0.03"]);
    let c = &r["comparisons"][0];
    assert_eq!(c["reference"], 0);
    assert_eq!(c["candidate"], 1);
    let e = &c["estimate"];
    assert_eq!(e["verdict"], "slower");
    let ratio = e["ratio"].as_f64().unwrap();
    assert!(e["ci_low"].as_f64().unwrap() <= ratio && ratio <= e["ci_high"].as_f64().unwrap());
    assert!(ratio > 1.5, "ratio {ratio}");
}

#[test]
fn results_file_round_trips_through_the_library_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    tardy()
        .args(["run", "--runs", "3", "--export-json"])
        .arg(&path)
        .args(["sleep 0.001", "echo x | cat"])
        .assert()
        .success();
    let text = std::fs::read_to_string(&path).unwrap();
    let typed: tardy::model::Results =
        serde_json::from_str(&text).expect("schema matches the model");
    assert_eq!(typed.schema_version, tardy::model::SCHEMA_VERSION);
    let original: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), original);
    // Fingerprint and overhead are recorded.
    assert!(original["machine"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(original["machine"]["load_avg_after"].is_array());
    assert!(original["overhead"]["spawn_floor_ns"].as_u64().unwrap() > 0);
    assert!(original["overhead"]["measuring_wall_ns"].as_u64().unwrap() > 0);
}

#[test]
fn csv_and_markdown_exports() {
    let dir = tempfile::tempdir().unwrap();
    let (csv, md) = (dir.path().join("r.csv"), dir.path().join("r.md"));
    tardy()
        .args(["run", "--runs", "3", "-P", "n", "1", "2", "--export-csv"])
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .arg("sleep 0.00{n}")
        .assert()
        .success();
    let csv = std::fs::read_to_string(csv).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("command,mean,stddev,median,user,system,min,max,"));
    assert!(lines[0].ends_with(",parameter_n"));
    assert_eq!(lines.len(), 3);
    assert!(lines[1].starts_with("sleep 0.001,") && lines[1].ends_with(",reference,1"));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(md.starts_with("| Command | Mean [ms] |"), "{md}");
    assert!(md.contains("| `sleep 0.001` |") && md.contains("| 1.00 |"));
}

#[test]
fn program_not_found_is_one_line_and_exit_2() {
    let out = tardy()
        .args(["run", "no-such-program-xyz --flag"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("program not found: 'no-such-program-xyz'"),
        "{err}"
    );
}

#[test]
fn failing_command_names_exit_code_and_stderr() {
    let out = tardy()
        .args(["run", "sh -c 'echo boom >&2; exit 3'"])
        .output()
        .unwrap();
    // 1, as hyperfine exits for a failing command; 2 is for usage errors.
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exited with code 3"), "{err}");
    assert!(err.contains("boom"), "{err}");
    assert!(err.contains("--ignore-failure"), "{err}");
}

#[test]
fn ignore_failure_times_failed_runs_as_hyperfine_and_can_keep_them_out() {
    // hyperfine's -i: a failing run (grep with no match) is timed and counted.
    let r = run_json(&["-i", "--runs", "3", "sh -c 'exit 1'"]);
    let b = &r["benchmarks"][0];
    assert!(
        measured(b)
            .iter()
            .all(|r| r["failed"] == true && r["exit_code"] == 1)
    );
    assert_eq!(b["summary"]["n"], 3);
    let r = run_json(&["-i", "--include-failures", "--runs", "3", "sh -c 'exit 1'"]);
    assert_eq!(r["benchmarks"][0]["summary"]["n"], 3);
    // tardy's stricter rule: recorded and marked, out of the statistics.
    let r = run_json(&["-i", "--exclude-failures", "--runs", "3", "sh -c 'exit 1'"]);
    assert!(r["benchmarks"][0]["summary"].is_null());
    // Adaptive mode stops after --min-runs when nothing can be counted.
    let r = run_json(&[
        "-i",
        "--exclude-failures",
        "--min-runs",
        "4",
        "sh -c 'exit 1'",
    ]);
    assert_eq!(r["stop_reason"]["rule"], "no_counted_runs");
    assert_eq!(measured(&r["benchmarks"][0]).len(), 4);
    // Only the listed codes are tolerated.
    run_json(&["--ignore-failure=1,4", "--runs", "2", "sh -c 'exit 4'"]);
    let out = tardy()
        .args(["run", "--ignore-failure=1", "--runs", "2", "sh -c 'exit 4'"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn unwritable_export_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = tardy()
        .args([
            "run",
            "--runs",
            "1",
            "--export-json",
            "/nonexistent-dir/r.json",
        ])
        .arg(format!("touch {}", marker.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent-dir/r.json"));
    assert!(
        !marker.exists(),
        "the command ran although its results could not be saved"
    );
}

#[test]
fn hyperfine_style_and_command_name_are_taken() {
    let out = |style: &str| {
        let o = tardy()
            .args(["run", "--runs", "2", "--warmup", "0", "--style", style])
            .args(["--command-name", "quick", "true"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let basic = out("basic");
    assert!(
        basic.contains("quick") && !basic.contains('\u{1b}'),
        "{basic}"
    );
    assert!(out("color").contains('\u{1b}'));
    assert!(out("none").is_empty());
}

#[test]
fn bad_options_are_clear_errors() {
    for args in [
        vec!["run", "--precision", "abc", "true"],
        vec!["run", "--confidence", "100", "true"],
        vec!["run", "--runs", "0", "true"],
        vec!["run", "--env", "NOEQUALS", "true"],
        vec!["run", "-P", "n", "5", "1", "echo {n}"],
        vec!["run", "--timeout", "-1", "true"],
        vec![
            "run",
            "--prepare",
            "true",
            "--prepare",
            "true",
            "--prepare",
            "true",
            "a",
            "b",
        ],
        vec!["run"],
        vec!["run", "   "],
    ] {
        let out = tardy().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("error"), "{args:?}: {err}");
    }
}

#[test]
fn hooks_env_cwd_and_input_reach_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, "hello\n").unwrap();
    let log = dir.path().join("log");
    let out = dir.path().join("out");
    run_json(&[
        "--runs",
        "2",
        "--warmup",
        "1",
        "--env",
        "GREETING=hi",
        "--cwd",
        dir.path().to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--setup",
        &format!("sh -c 'echo setup >> {}'", log.display()),
        "--prepare",
        &format!("sh -c 'echo prepare >> {}'", log.display()),
        "--conclude",
        &format!("sh -c 'echo conclude >> {}'", log.display()),
        "--cleanup",
        &format!("sh -c 'echo cleanup >> {}'", log.display()),
        "sh -c 'echo $GREETING; pwd; cat'",
    ]);
    let log = std::fs::read_to_string(log).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        [
            "setup", "prepare", "conclude", "prepare", "conclude", "prepare", "conclude", "cleanup"
        ]
    );
    let out = std::fs::read_to_string(out).unwrap();
    let dir_name = dir.path().canonicalize().unwrap();
    assert_eq!(out.matches("hi\n").count(), 3, "{out}");
    assert_eq!(
        out.matches("hello\n").count(),
        3,
        "input is rewound for every run: {out}"
    );
    assert!(out.contains(dir_name.to_str().unwrap()), "{out}");
}

#[test]
fn argv_after_double_dash_is_executed_exactly() {
    let r = run_json(&["--runs", "1", "--", "echo", "a  b", "$HOME", "*"]);
    assert_eq!(
        r["benchmarks"][0]["exec"]["argv"],
        serde_json::json!(["echo", "a  b", "$HOME", "*"])
    );
    assert_eq!(r["benchmarks"][0]["exec"]["mode"], "direct");
}

#[test]
fn sigint_reaches_a_long_command_at_once() {
    // The spawner tells tardy the command's pid without waking it; a Ctrl-C
    // must still reach the command at once, not when it ends by itself.
    use std::os::unix::process::CommandExt;
    for small in [true, false] {
        let bin = assert_cmd::cargo::cargo_bin("tardy");
        let mut cmd = std::process::Command::new(bin);
        cmd.args(["run", "--runs", "3", "--warmup", "0", "-N", "sleep 60"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        if !small {
            cmd.env("TARDY_NO_SMALL_SPAWNER", "1");
        }
        // SAFETY: only async-signal-safe calls between fork and exec. A test
        // runner started in the background may ignore SIGINT; the user at a
        // terminal does not.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        // This tardy's own command (a `sleep 60` of another run, still
        // exiting, is not it: signalled before its handler, tardy dies).
        let ours = || descendant(child.id() as i32, "sleep 60");
        while !ours() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(ours(), "the command never started");
        let sent = Instant::now();
        // SAFETY: sending a signal to our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(130),
            "small spawner {small}: {:?}; stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            sent.elapsed() < Duration::from_secs(20),
            "small spawner {small}: Ctrl-C took {:?}",
            sent.elapsed()
        );
        // The command got its signal before tardy exited; on a loaded
        // machine it may not have been scheduled to die yet at that instant,
        // so it is given a few seconds (it would sleep for a minute).
        let gone = Instant::now() + Duration::from_secs(10);
        while alive("sleep 60") && Instant::now() < gone {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !alive("sleep 60"),
            "small spawner {small}: the command outlived tardy by 10 s"
        );
    }
}

#[test]
fn sigint_keeps_every_completed_sample() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let bin = assert_cmd::cargo::cargo_bin("tardy");
    let mut child = std::process::Command::new(bin)
        .args(["run", "--runs", "1000", "--export-json"])
        .arg(&path)
        .arg("sleep 0.05")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until some runs are saved, then interrupt.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let saved = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map_or(0, |v| measured(&v["benchmarks"][0]).len());
        if saved >= 5 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["status"], "interrupted");
    assert_eq!(v["stop_reason"]["rule"], "interrupted");
    let done = measured(&v["benchmarks"][0]);
    assert!(done.len() >= 5, "kept {} runs", done.len());
    assert!(
        done.iter()
            .all(|r| r["exit_code"] == 0 && r["failed"] == false),
        "no half-run is kept"
    );
    assert_eq!(
        v["benchmarks"][0]["summary"]["n"].as_u64().unwrap() as usize,
        done.len()
    );
}

#[test]
fn help_teaches() {
    let out = tardy().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "interleaved",
        "--precision",
        "--timeout",
        "--export-json",
        "Examples:",
    ] {
        assert!(help.contains(needle), "help lacks {needle}");
    }
}

#[test]
fn a_drift_over_the_session_is_reported() {
    // Each run sleeps 10 ms longer than the one before: a steady upward
    // trend, steps well above a busy machine's jitter.
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("n");
    std::fs::write(&counter, "0").unwrap();
    let script = format!(
        "sh -c 'n=$(($(cat {c}) + 1)); echo $n > {c}; sleep $(awk \"BEGIN {{ print 0.01 * $n }}\")'",
        c = counter.display()
    );
    let r = run_json(&["--runs", "15", "--warmup", "0", &script]);
    let warnings = r["benchmarks"][0]["warnings"].as_array().unwrap();
    let trend = warnings
        .iter()
        .find(|w| w["kind"] == "trend")
        .expect("trend warning");
    assert!(trend["trend"]["drift"].as_f64().unwrap() > 0.5);
    assert!(trend["trend"]["p_value"].as_f64().unwrap() < 0.001);
    // (That steady data raises no trend is tested on fixed data in stats::trend:
    // on a real machine a 1% false alarm rate would make this test flaky.)
}

/// Whether a process with exactly this command line is alive.
/// Whether a process with this command line descends from `root`.
fn descendant(root: i32, cmdline: &str) -> bool {
    let parent = |pid: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // pid (comm) state ppid ...: the comm may hold spaces and parentheses.
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            return false;
        };
        let matches = std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
            c.split(|&b| b == 0)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(&b' ')
                == cmdline.as_bytes()
        });
        let mut p = pid;
        matches
            && (0..64).any(|_| match parent(p) {
                Some(pp) if pp == root => true,
                Some(pp) if pp > 1 => {
                    p = pp;
                    false
                }
                _ => false,
            })
    })
}

fn alive(cmdline: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        std::fs::read(e.path().join("cmdline"))
            .map(|c| {
                c.split(|&b| b == 0)
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(&b' ')
                    == cmdline.as_bytes()
            })
            .unwrap_or(false)
    })
}

#[test]
fn a_run_ends_when_its_command_exits_and_what_it_left_behind_is_killed() {
    // A daemon forked into the background keeps the output pipe open: the run still
    // ends when the shell exits (not 7 s later), is not timed out by --timeout 4,
    // and the daemon is named and killed, as is a setsid grandchild that left the
    // process group.
    for (script, sleeper) in [
        ("(sleep 7.123 &); echo hi", "sleep 7.123"),
        ("setsid sleep 7.321 & echo hi", "sleep 7.321"),
    ] {
        let started = Instant::now();
        let r = run_json(&[
            "--output",
            "pipe",
            "--timeout",
            "4",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--",
            "sh",
            "-c",
            script,
        ]);
        assert!(started.elapsed() < Duration::from_secs(6), "{script}");
        let b = &r["benchmarks"][0];
        for run in measured(b) {
            assert_eq!(run["timed_out"], false, "{script}: {run}");
            assert!(
                run["wall_ns"].as_u64().unwrap() < 3_000_000_000,
                "{script}: {run}"
            );
            let s = run["stragglers"].as_array().unwrap();
            assert!(
                !s.is_empty() && s.iter().all(|p| p["killed"] == true),
                "{script}: {run}"
            );
        }
        let w = &b["warnings"].as_array().unwrap();
        assert!(
            w.iter()
                .any(|w| w["kind"] == "stragglers" && w["runs"] == 2),
            "{script}: {w:?}"
        );
        assert!(!alive(sleeper), "{sleeper} outlived tardy");
    }
    // --keep-stragglers leaves it alive, reported once.
    let r = run_json(&[
        "--keep-stragglers",
        "--runs",
        "2",
        "--warmup",
        "0",
        "--",
        "sh",
        "-c",
        "setsid sleep 3.217 & echo",
    ]);
    let w = &r["benchmarks"][0]["warnings"][0];
    assert_eq!(w["kind"], "stragglers", "{w}");
    assert_eq!(w["killed"], false);
    // Two runs, one sleeper each: the first run's sleeper, still alive at the second
    // sweep, is not counted again.
    assert_eq!((&w["runs"], &w["processes"]), (&2.into(), &2.into()), "{w}");
    assert!(alive("sleep 3.217"));
}

#[test]
fn every_help_example_is_one_whole_command() {
    // `{n}` once became a line break inside a quoted example; a long example once
    // wrapped inside its quotes. Each example line (joined at a trailing `\`, its
    // comment left out) must hold balanced quotes.
    for sub in [
        "run", "compare", "tests", "doctor", "bisect", "history", "report", "serve", "push",
        "explain",
    ] {
        let out = tardy().args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout).to_string();
        let Some(at) = help.find("Examples:") else {
            continue;
        };
        let mut line = String::new();
        for raw in help[at..].lines().skip(1) {
            let t = raw.trim();
            if t.is_empty() {
                break;
            }
            line.push_str(t.trim_end_matches('\\'));
            if t.ends_with('\\') {
                line.push(' ');
                continue;
            }
            let command = line
                .split("   #")
                .next()
                .unwrap()
                .split("   (")
                .next()
                .unwrap();
            if command.starts_with("tardy") {
                assert_eq!(
                    command.matches('\'').count() % 2,
                    0,
                    "tardy {sub} --help: {command}"
                );
            }
            line.clear();
        }
    }
}

#[test]
fn reference_sort_time_unit_and_table_exports_as_hyperfine_has_them() {
    let d = tempfile::tempdir().unwrap();
    let path = |f: &str| d.path().join(f).to_str().unwrap().to_string();
    let out = tardy()
        .args([
            "run",
            "--runs",
            "3",
            "-q",
            "-u",
            "ms",
            "--sort",
            "mean-time",
        ])
        .args(["-n", "slow", "-n", "fast", "--reference", "fast"])
        .args(["--export-markdown", &path("t.md")])
        .args(["--export-asciidoc", &path("t.adoc")])
        .args(["--export-orgmode", &path("t.org")])
        .args(["--export-json", &path("t.json")])
        .args(["sleep 0.05", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The reference named is measured first and every other is compared with it.
    assert!(text.contains("Comparison (reference: fast)"), "{text}");
    assert!(text.contains("Benchmark 1: fast"), "{text}");
    // -u ms: every time in milliseconds, even the 1 ms-ish `true`.
    assert!(!text.contains(" µs ±") && !text.contains(" s ±"), "{text}");
    let md = std::fs::read_to_string(path("t.md")).unwrap();
    let rows: Vec<&str> = md.lines().skip(2).collect();
    assert!(md.starts_with("| Command | Mean [ms] |"), "{md}");
    assert!(
        rows[0].starts_with("| `fast` |") && rows[0].ends_with("| 1.00 |"),
        "{md}"
    );
    assert!(rows[1].starts_with("| `slow` |"), "{md}");
    let adoc = std::fs::read_to_string(path("t.adoc")).unwrap();
    assert!(
        adoc.starts_with("[cols=\"<,>,>,>,>,>,>\"]\n|===\n| Command | Mean [ms]"),
        "{adoc}"
    );
    assert!(
        adoc.contains("\n| `fast`\n") && adoc.trim_end().ends_with("|==="),
        "{adoc}"
    );
    let org = std::fs::read_to_string(path("t.org")).unwrap();
    assert!(
        org.contains("\n|--+--+--+--+--+--+--|\n| =fast= |"),
        "{org}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(path("t.json")).unwrap()).unwrap();
    assert_eq!(json["benchmarks"][0]["name"], "fast");
    // A reference that names no command is measured as one of its own, first.
    let text = String::from_utf8_lossy(
        &tardy()
            .args([
                "run",
                "--runs",
                "2",
                "-q",
                "--reference",
                "sleep 0.001",
                "true",
            ])
            .output()
            .unwrap()
            .stdout,
    )
    .to_string();
    assert!(
        text.contains("Comparison (reference: sleep 0.001)"),
        "{text}"
    );
    assert!(text.contains("Benchmark 2: true"), "{text}");
}

#[test]
fn every_run_failing_under_ignore_failure_is_said() {
    // hyperfine warns when every run failed; tardy printed a median as if
    // nothing had.
    let out = tardy()
        .args(["run", "-i", "--runs", "3", "--warmup", "0", "false"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("every run failed"), "{text}");
    let r = run_json(&["-i", "--runs", "3", "--warmup", "0", "false"]);
    let w = &r["benchmarks"][0]["warnings"];
    let counted = w
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "failures_counted")
        .unwrap_or_else(|| panic!("{w}"));
    assert_eq!(
        (counted["failed"].as_u64(), counted["runs"].as_u64()),
        (Some(3), Some(3))
    );
}
