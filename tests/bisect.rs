//! `tardy bisect` on real git repositories made here, whose commits change how long a
//! real command takes (sleeps, so the effect is large against this machine's noise).

mod common;

use common::{git, tardy};

use serde_json::Value;
use std::path::Path;

/// A repository of `n` commits after "initial"; `edit(i, dir)` changes files before
/// commit i (1-based). Returns the hashes, initial first.
fn repo(dir: &Path, n: usize, edit: impl Fn(usize, &Path)) -> Vec<String> {
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "Tester"]);
    edit(0, dir);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "initial"]);
    let mut hashes = vec![git(dir, &["rev-parse", "HEAD"])];
    for i in 1..=n {
        std::fs::write(dir.join("n.txt"), i.to_string()).unwrap();
        edit(i, dir);
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", &format!("change {i}")]);
        hashes.push(git(dir, &["rev-parse", "HEAD"]));
    }
    hashes
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn json(out: &std::process::Output) -> Value {
    assert!(
        out.status.code() == Some(0),
        "exit {:?}\n{}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A sleep of 20 ms up to commit `bad - 1`, 32 ms from commit `bad` on.
fn sleeper(bad: usize) -> impl Fn(usize, &Path) {
    move |i, d| {
        if i == 0 || i == bad {
            let s = if i == 0 { "0.020" } else { "0.032" };
            write(d, "run.sh", &format!("sleep {s}\n"));
        }
    }
}

#[test]
fn finds_the_commit_that_made_it_slower_and_leaves_the_tree_alone() {
    let d = tempfile::tempdir().unwrap();
    let h = repo(d.path(), 12, sleeper(7));
    // A dirty working tree is fine: worktrees are used.
    write(d.path(), "run.sh", "exit 99\n");
    let out = tardy(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", "HEAD", "--", "sh", "run.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    // Each step is printed once, as it runs; the report says where they went,
    // gives one verdict, and says how to remove the worktrees.
    let (text, live) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(text.contains("(shown above as they ran"), "{text}");
    // Step lines ("   3  ebd32f3eea change 7  3 runs  bad ..."): numbered 1..N,
    // each once (a busy machine may take a refining step more, so N varies),
    // and N is the count the report gives.
    let numbers: Vec<usize> = live
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let n = w.next()?.parse::<usize>().ok()?;
            let hash = w.next()?;
            (hash.len() == 10 && hash.chars().all(|c| c.is_ascii_hexdigit())).then_some(n)
        })
        .collect();
    assert!(!numbers.is_empty(), "{live}");
    assert_eq!(numbers, (1..=numbers.len()).collect::<Vec<_>>(), "{live}");
    assert!(
        text.contains(&format!("Steps: {} (shown above", numbers.len())),
        "{text}{live}"
    );
    // The sandwich and the culprit, once each, at change 7.
    let all = format!("{text}{live}");
    assert_eq!(all.matches("sandwich: ").count(), 1, "{all}");
    assert_eq!(all.matches("Culprit: ").count(), 1, "{all}");
    assert!(
        all.lines()
            .any(|l| l.starts_with("Culprit: ") && l.ends_with("change 7")),
        "{all}"
    );
    assert!(
        text.contains("Culprit:") && text.contains("Confidence in the culprit"),
        "{text}"
    );
    assert!(live.contains("`tardy bisect reset` removes them"), "{live}");
    let out = tardy(d.path())
        .args(["bisect", "--resume", "--format", "json"])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["commit"], h[7].as_str(), "{r}");
    assert_eq!(r["culprit"]["subject"], "change 7");
    assert_eq!(r["confirmed"], true);
    assert_eq!(r["verdict"], "confirmed");
    let eff = r["effect"]["ratio"].as_f64().unwrap();
    assert!(eff > 1.3 && eff < 1.9, "{eff}");
    assert!(r["confidence"].as_f64().unwrap() >= 0.9);
    assert!(r["total_runs"].as_u64().unwrap() >= 40);
    assert!(!r["steps"].as_array().unwrap().is_empty());
    assert_eq!(
        std::fs::read_to_string(d.path().join("run.sh")).unwrap(),
        "exit 99\n"
    );
    assert_eq!(git(d.path(), &["status", "--short"]), "M run.sh");
    // log shows the steps; reset removes every worktree.
    let log = tardy(d.path()).args(["bisect", "log"]).output().unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains("change 7"));
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
    assert_eq!(git(d.path(), &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn failed_builds_are_skipped_and_an_adjacent_skip_gives_a_range() {
    let d = tempfile::tempdir().unwrap();
    // Commit 3 and commit 6 do not build; the regression is at 7.
    let h = repo(d.path(), 10, |i, p| {
        sleeper(7)(i, p);
        match i {
            3 | 6 => write(p, "broken", ""),
            4 | 7 => {
                let _ = std::fs::remove_file(p.join("broken"));
            }
            _ => {}
        }
    });
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            &h[10],
            "--build",
            "test ! -e broken",
            "--format",
            "json",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert!(r["culprit"].is_null(), "{r}");
    let range = r["culprit_range"].to_string();
    assert!(
        range.contains("change 6") && range.contains("change 7"),
        "{range}"
    );
    let skips: Vec<&Value> = r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["call"] == "skip")
        .collect();
    assert!(
        skips
            .iter()
            .all(|s| s["note"].as_str().unwrap().contains("test ! -e broken"))
    );
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
}

#[test]
fn sensitivity_mode_finds_the_commit_that_became_sensitive() {
    // Up to commit 4 the "suite" only runs processes; commit 5 swaps ten of them for 1 ms
    // sleeps (NUnit 3.4's Thread.Sleep(1)); commit 2 makes it 3x slower for everyone, which must not matter.
    let d = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("tardy");
    let h = repo(d.path(), 8, |i, p| match i {
        0 => write(p, "run.sh", "for i in 1 2 3 4 5; do /bin/true; done\n"),
        2 => write(p, "run.sh", "for i in $(seq 15); do /bin/true; done\n"),
        5 => write(
            p,
            "run.sh",
            "for i in $(seq 5); do /bin/true; done; for i in $(seq 10); do sleep 0.001; done\n",
        ),
        _ => {}
    });
    // The same cheap wrapper on both sides: the default slack and 8 ms.
    let prefix_a = format!("{} exec --timer-slack 50000 --", bin.display());
    let prefix_b = format!("{} exec --timer-slack 8000000 --", bin.display());
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            &h[8],
            "--prefix-a",
            &prefix_a,
            "--prefix-b",
            &prefix_b,
            "--format",
            "json",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["sensitivity"], true);
    assert_eq!(r["culprit"]["subject"], "change 5", "{r}");
    // Under an 8 ms slack ten 1 ms sleeps cost far more than under 50 µs
    // (on a loaded machine the processes' own cost grows and dilutes it).
    assert!(r["endpoints"]["ratio"].as_f64().unwrap() > 1.2, "{r}");
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
}

#[test]
fn versions_are_bisected_with_substitution() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "delay.sh",
        "case $1 in 1.0|1.1|1.2) sleep 0.02;; *) sleep 0.035;; esac\n",
    );
    let out = tardy(d.path())
        .args([
            "bisect",
            "--versions",
            "1.0,1.1,1.2,1.3,1.4,1.5",
            "--prepare",
            "echo {version} > prepared-{version}",
            "--state",
            d.path().join("st").to_str().unwrap(),
            "--format",
            "json",
            "--",
            "sh delay.sh {version}",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["version"], "1.3", "{r}");
    assert!(d.path().join("prepared-1.3").exists());
}

#[test]
fn processes_left_behind_by_the_command_are_named_and_killed() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "delay.sh",
        "(sleep 30 &)\ncase $1 in 1.0|1.1) sleep 0.02;; *) sleep 0.035;; esac\n",
    );
    let out = tardy(d.path())
        .args([
            "bisect",
            "--versions",
            "1.0,1.1,1.2,1.3",
            "--state",
            d.path().join("st").to_str().unwrap(),
            "--format",
            "json",
            "--",
            "sh delay.sh {version}",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["version"], "1.2", "{r}");
    // Every run left one sleep behind: each was named and killed, none counted twice.
    let runs = r["total_runs"].as_u64().unwrap();
    assert_eq!(r["stragglers"].as_u64(), Some(runs), "{r}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left 1 process (sleep, pid ") && err.contains("(killed;"),
        "{err}"
    );
    // Nothing of it is still running.
    let ps = std::process::Command::new("pgrep")
        .args(["-f", "^sleep 30$"])
        .output()
        .unwrap();
    let alive = String::from_utf8_lossy(&ps.stdout).lines().count();
    assert!(alive < 2, "{alive} sleeps still alive");
}

#[test]
fn interrupted_bisections_resume_without_repeating_runs() {
    let d = tempfile::tempdir().unwrap();
    // Slow runs (50 and 80 ms), so that the interrupt lands while the ends are measured.
    let h = repo(d.path(), 16, |i, p| match i {
        0 => write(p, "run.sh", "sleep 0.05\n"),
        11 => write(p, "run.sh", "sleep 0.08\n"),
        _ => {}
    });
    let bin = assert_cmd::cargo::cargo_bin("tardy");
    let mut child = std::process::Command::new(&bin)
        .current_dir(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", &h[16], "--format", "json", "--", "sh", "run.sh",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt once a run is saved (on a loaded machine the worktrees alone
    // can take seconds): the state is written after every run.
    let state = d.path().join(".tardy/bisect/state.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        let runs = std::fs::read(&state)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .and_then(|v| v["total_runs"].as_u64())
            .unwrap_or(0);
        if runs > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let saved: Value =
        serde_json::from_slice(&std::fs::read(d.path().join(".tardy/bisect/state.json")).unwrap())
            .unwrap();
    let before = saved["total_runs"].as_u64().unwrap();
    assert!(before > 0);
    // A new bisection refuses to start over it.
    let out = tardy(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", &h[16], "--", "sh", "run.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    let out = tardy(d.path())
        .args(["bisect", "--resume", "--format", "json"])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["subject"], "change 11", "{r}");
    let samples: usize = serde_json::from_slice::<Value>(
        &std::fs::read(d.path().join(".tardy/bisect/state.json")).unwrap(),
    )
    .unwrap()["samples"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_array().unwrap().len())
        .sum();
    // Every run counted once: the samples kept (plus the sandwich's 20) are the runs made.
    assert_eq!(r["total_runs"].as_u64().unwrap() as usize, samples + 20);
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
    assert_eq!(git(d.path(), &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let err = |dir: &Path, args: &[&str]| {
        let out = tardy(dir).args(args).output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr).to_string();
        (out.status.code(), e)
    };
    let (code, e) = err(
        plain.path(),
        &["bisect", "--good", "a", "--bad", "b", "--", "true"],
    );
    assert_eq!(code, Some(2));
    assert!(e.contains("not inside a git repository"), "{e}");
    let h = repo(d.path(), 4, sleeper(2));
    let (code, e) = err(
        d.path(),
        &["bisect", "--good", "nope", "--bad", "HEAD", "--", "true"],
    );
    assert_eq!(code, Some(2));
    assert!(e.contains("unknown revision 'nope'"), "{e}");
    let (code, e) = err(
        d.path(),
        &["bisect", "--good", "HEAD", "--bad", &h[0], "--", "true"],
    );
    assert_eq!(code, Some(2));
    assert!(e.contains("swap them") && e.contains("--invert"), "{e}");
    let (code, e) = err(
        d.path(),
        &["bisect", "--good", &h[0], "--bad", "HEAD", "--", "false"],
    );
    assert_eq!(code, Some(2));
    assert!(e.contains("fails at both ends"), "{e}");
    let (code, e) = err(d.path(), &["bisect", "--good", &h[0], "--bad", "HEAD"]);
    assert_eq!(code, Some(2));
    assert!(e.contains("nothing to measure"), "{e}");
    let (code, e) = err(
        d.path(),
        &[
            "bisect", "--good", &h[0], "--bad", "HEAD", "--metric", "joules", "--", "true",
        ],
    );
    assert_eq!(code, Some(2));
    assert!(
        e.contains("--metric is wall") && e.trim().lines().count() == 1,
        "{e}"
    );
    // No regression between two commits with the same run time: it says so, exit 1.
    // (--threshold 50%: a false "it reproduces" is then impossible, not just rare.)
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            &h[1],
            "--threshold",
            "50%",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("does not reproduce"), "{text}");
    // Its interval lies below 50% at the first look: no more rounds are taken.
    assert!(text.contains("less than 50.0% slower"), "{text}");
    assert!(text.contains("10+10 runs"), "{text}");
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
}

#[test]
fn metrics_from_stdout_and_from_test_reports() {
    let d = tempfile::tempdir().unwrap();
    let h = repo(d.path(), 6, |i, p| match i {
        0 => write(
            p,
            "run.sh",
            "echo 'time: 1.0'; mkdir -p out; echo '<testsuite><testcase name=\"t\" time=\"0.1\"/></testsuite>' > out/TEST-a.xml\n",
        ),
        4 => write(
            p,
            "run.sh",
            "echo 'time: 2.5'; mkdir -p out; echo '<testsuite><testcase name=\"t\" time=\"0.4\"/></testsuite>' > out/TEST-a.xml\n",
        ),
        _ => {}
    });
    for metric in [
        vec!["--metric-regex", "time: ([0-9.]+)"],
        vec!["--metric-junit", "out/TEST-*.xml", "--metric-test", "t"],
    ] {
        let out = tardy(d.path())
            .args([
                "bisect", "--good", &h[0], "--bad", &h[6], "--format", "json",
            ])
            .args(&metric)
            .args(["--", "sh", "run.sh"])
            .output()
            .unwrap();
        let r = json(&out);
        assert_eq!(r["culprit"]["subject"], "change 4", "{metric:?}: {r}");
        let e = r["effect"]["ratio"].as_f64().unwrap();
        assert!(e > 2.4 && e < 4.1, "{metric:?}: {e}");
        tardy(d.path()).args(["bisect", "reset"]).assert().success();
    }
}

#[test]
fn explain_says_what_the_culprit_changed_in_the_run() {
    // Commit 4 starts 60 processes where its parent started 5 (Vivaldi's slow
    // process creation, in its simplest form): the bisection names commit 4, then
    // explains it against commit 3 and finds process creation. (The contrast and
    // the five traced runs keep it clear of the noise of a loaded CI machine, where
    // three runs of 60 processes once came out "no difference beyond the noise".)
    let d = tempfile::tempdir().unwrap();
    let h = repo(d.path(), 6, |i, p| match i {
        0 => write(
            p,
            "run.sh",
            "for i in $(seq 5); do /bin/true; done; sleep 0.02\n",
        ),
        4 => write(
            p,
            "run.sh",
            "for i in $(seq 60); do /bin/true; done; sleep 0.02\n",
        ),
        _ => {}
    });
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            "HEAD",
            "--explain",
            "--explain-runs",
            "5",
            "--format",
            "json",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["subject"], "change 4", "{r}");
    assert_eq!(r["last_good"], h[3].as_str());
    assert_eq!(r["first_bad"], h[4].as_str());
    let e = &r["explain"];
    assert_eq!(
        e["last_good"].as_str().unwrap(),
        r["parent"].as_str().unwrap()
    );
    assert_eq!(e["a"]["runs"].as_array().unwrap().len(), 5);
    assert_eq!(e["b"]["runs"].as_array().unwrap().len(), 5);
    // Each side's categories sum to its wall time.
    for side in ["a", "b"] {
        let t = &e[side];
        let sum: f64 = t["categories"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum();
        let wall = t["wall_s"].as_f64().unwrap();
        assert!((sum - wall).abs() <= 0.05 * wall, "{side}: {sum} vs {wall}");
    }
    let saved: Vec<String> = e["saved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(saved.len(), 2, "{e}");
    assert!(saved[0].contains(&h[3][..12]) && saved[1].contains(&h[4][..12]));
    if e["a"]["coverage"] != "full" || e["b"]["coverage"] != "full" {
        eprintln!(
            "SKIPPED explain_says_what_the_culprit_changed_in_the_run (cause check): tracing is not allowed here: {}",
            e["a"]["coverage_note"]
        );
    } else {
        let top = e["causes"][0]["kind"].as_str().unwrap();
        assert!(
            top == "more-processes" || top == "process-creation",
            "{top}: {e:#}"
        );
        let said = e["diagnosis"].as_str().unwrap();
        assert!(said.contains("process"), "{said}");
    }
    // The saved traces are ordinary `tardy explain` input.
    let again = tardy(d.path())
        .args(["explain", "--json", &saved[0], &saved[1]])
        .output()
        .unwrap();
    let again = json(&again);
    assert_eq!(again["causes"][0]["kind"], e["causes"][0]["kind"]);
    // The finished bisection explained again, in text: the culprit, then the table.
    let out = tardy(d.path())
        .args(["bisect", "--resume", "--explain", "--explain-runs", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let culprit = text.find("Culprit:").unwrap();
    let table = text.find("Where the time went").unwrap();
    assert!(culprit < table, "{text}");
    assert!(
        text.contains("A = last good") && text.contains("B = culprit"),
        "{text}"
    );
    assert!(text.contains("process-creation"), "{text}");
    // Ctrl-C while explaining: the runs completed so far are explained, exit 130.
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tardy"))
        .current_dir(d.path())
        .env("GIT_CEILING_DIRECTORIES", d.path().parent().unwrap())
        .args(["bisect", "--resume", "--explain", "--explain-runs", "500"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough for the warm-up and a few runs, on a loaded machine too
    // (a run of each side there takes about a second and a half).
    std::thread::sleep(std::time::Duration::from_millis(3500));
    // SAFETY: signals our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("Where the time went"), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("explained the runs completed so far"));
    // Nothing to explain when the regression does not reproduce: said, exit 1.
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            &h[2],
            "--threshold",
            "50%",
            "--explain",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to explain"), "{err}");
    // It said that it reused the samples the bisections above took, and how old.
    assert!(
        err.contains("cache: reusing") && err.contains("ago (--no-cache measures afresh)"),
        "{err}"
    );
    let out = tardy(d.path())
        .args([
            "bisect",
            "--good",
            &h[0],
            "--bad",
            &h[2],
            "--threshold",
            "50%",
            "--no-cache",
            "--",
            "sh",
            "run.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("cache:"));
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
}

#[test]
fn jobs_take_runs_at_the_same_moment_and_say_how_they_disturb_each_other() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("runs.log");
    let log_s = log.display().to_string();
    // Every commit's run.sh marks its start and end in one log outside the
    // worktrees; commit 5 sleeps 32 ms instead of 20.
    let h = repo(d.path(), 8, move |i, dir| {
        if i == 0 || i == 5 {
            let s = if i == 0 { "0.020" } else { "0.032" };
            write(
                dir,
                "run.sh",
                &format!("echo start >> '{log_s}'\nsleep {s}\necho end >> '{log_s}'\n"),
            );
        }
    });
    let out = tardy(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", "HEAD", "--jobs", "2", "--format", "json", "--",
            "sh", "run.sh",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["commit"], h[5].as_str(), "{r}");
    let dist = &r["disturbance"];
    assert_eq!(dist["jobs"], 2, "{r}");
    assert_eq!(dist["alone"].as_array().unwrap().len(), 8);
    assert_eq!(dist["together"].as_array().unwrap().len(), 16);
    assert!(dist["slowdown"].as_f64().unwrap() > 0.0);
    // Runs overlapped: a second start before the first one's end.
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("start\nstart\n"), "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 runs at once"), "{err}");

    // One at a time, runs never overlap (and the cache of --jobs 2 samples
    // is not reused: its signature differs).
    std::fs::remove_file(&log).unwrap();
    tardy(d.path()).args(["bisect", "reset"]).assert().success();
    let out = tardy(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", "HEAD", "--format", "json", "--", "sh", "run.sh",
        ])
        .output()
        .unwrap();
    let r = json(&out);
    assert_eq!(r["culprit"]["commit"], h[5].as_str(), "{r}");
    assert!(r.get("disturbance").is_none(), "{r}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("start\nstart\n"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("reusing"));

    // --jobs 0 is refused.
    tardy(d.path())
        .args([
            "bisect", "--good", &h[0], "--bad", "HEAD", "--jobs", "0", "--", "true",
        ])
        .assert()
        .code(2);
}
