//! `tardy ci` on real git repositories made here: a main branch and a feature
//! branch whose benchmark (a real program that prints, reads its input and
//! sleeps) is made slower, or not. The effects planted are large against any
//! machine's noise (4x), and the A/A pair is only asked not to fail a 20%
//! gate (its whole interval above +20%), so the tests pass beside CPU hogs.

mod common;

use std::path::Path;

use common::{git, tardy};
use serde_json::Value;

/// A benchmark that behaves like a real one: it reads a file, prints, and
/// does its work (a sleep of `ms` milliseconds).
fn bench(ms: u32) -> String {
    format!("wc -l < input.txt\necho working\nsleep 0.0{ms:02}\n")
}

/// main: one commit with a 20 ms benchmark and a build step; feature: a
/// commit that makes it `feature_ms`, then one that touches only a README.
fn repo(dir: &Path, feature_ms: u32) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "Tester"]);
    std::fs::write(dir.join("input.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(dir.join("bench.sh"), bench(20)).unwrap();
    std::fs::write(
        dir.join("build.sh"),
        "echo compiling; cp bench.sh built.sh\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "main: the benchmark"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("bench.sh"), bench(feature_ms)).unwrap();
    std::fs::write(dir.join("change.txt"), "under review\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "feature: the change under review"]);
    std::fs::write(dir.join("README"), "docs\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "feature: docs"]);
}

fn ci(dir: &Path, args: &[&str]) -> std::process::Output {
    tardy(dir)
        .arg("ci")
        .args(["--build", "sh build.sh", "--runs", "8"])
        .args(args)
        .args(["--", "sh", "built.sh"])
        .output()
        .unwrap()
}

#[test]
fn a_slower_pull_request_is_caught_against_its_merge_base() {
    let d = tempfile::tempdir().unwrap();
    repo(d.path(), 80);
    // main moves on after the branch: the merge base, not main's tip, is the base.
    git(d.path(), &["checkout", "-q", "main"]);
    std::fs::write(d.path().join("bench.sh"), bench(90)).unwrap();
    git(d.path(), &["commit", "-qam", "main: much slower since"]);
    git(d.path(), &["checkout", "-q", "feature"]);
    let base = git(d.path(), &["rev-parse", "HEAD~2"]);
    let md = d.path().join("comment.md");
    let out = ci(
        d.path(),
        &["--fail-if-slower", "10", "--markdown", md.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(text.contains("Gate: FAILED"), "{text}");
    assert!(
        text.contains(&format!("base: {} main: the benchmark", &base[..10])),
        "{text}"
    );
    assert!(text.contains("the merge base of HEAD and main"), "{text}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.starts_with("<!-- tardy-ci -->\n### tardy: head is"),
        "{md}"
    );
    assert!(
        md.contains("slower than base") && md.contains("**Gate:** FAILED"),
        "{md}"
    );
    // The worktrees are gone, the repository as it was.
    assert_eq!(git(d.path(), &["worktree", "list"]).lines().count(), 1);
    assert_eq!(
        git(d.path(), &["status", "--short", "--untracked-files=no"]),
        ""
    );
    // The same as JSON, with the worktrees kept and reused by the next run.
    let out = ci(
        d.path(),
        &["--fail-if-slower", "10", "--json", "--keep-worktrees"],
    );
    assert_eq!(out.status.code(), Some(1));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["schema"], "tardy.ci");
    assert_eq!(j["base"]["commit"]["commit"], base.as_str());
    assert_eq!(j["estimate"]["verdict"], "slower");
    assert!(j["estimate"]["ratio"].as_f64().unwrap() > 1.5, "{j}");
    assert_eq!(j["regression"], true);
    let out = ci(d.path(), &["--json", "--keep-worktrees"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("reusing the worktree"));
    // No gate: a regression is reported, the job is not failed.
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_unchanged_benchmark_passes_the_gate() {
    // A/A: the feature branch changes nothing the benchmark does.
    let d = tempfile::tempdir().unwrap();
    repo(d.path(), 20);
    let out = ci(d.path(), &["--fail-if-slower", "20", "--json"]);
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{j}");
    assert_eq!(j["regression"], false);
    // Not a verdict on the ratio itself: a busy machine moves it, the gate
    // (the whole interval) is what must hold.
    assert!(j["estimate"]["ratio"].as_f64().unwrap() < 2.0, "{j}");
}

#[test]
fn bad_setups_are_one_clear_error() {
    let d = tempfile::tempdir().unwrap();
    repo(d.path(), 20);
    // On main itself the merge base is HEAD: nothing to compare.
    git(d.path(), &["checkout", "-q", "main"]);
    let out = ci(d.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("same commit") && err.contains("--base"),
        "{err}"
    );
    // A build that fails names the side and shows its last lines.
    git(d.path(), &["checkout", "-q", "feature"]);
    std::fs::write(
        d.path().join("build.sh"),
        "echo 'error: missing ;'; exit 3\n",
    )
    .unwrap();
    git(d.path(), &["commit", "-qam", "feature: broken build"]);
    let out = ci(d.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the build failed for the head") && err.contains("error: missing ;"),
        "{err}"
    );
    // Unknown revisions and no repository at all.
    let out = ci(d.path(), &["--base", "no-such-branch"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown revision 'no-such-branch'"));
    let empty = tempfile::tempdir().unwrap();
    let out = ci(empty.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"));
}

#[test]
fn the_test_reports_of_both_sides_are_compared_test_by_test() {
    // The measured command is a test run that writes a JUnit report; on the
    // branch one test became slower.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let suite = |t2: &str| {
        format!(
            "mkdir -p out\nsleep 0.01\ncat > out/junit.xml <<'XML'\n<testsuite name=\"s\" tests=\"2\"><testcase classname=\"s\" name=\"t1\" time=\"0.010\"/><testcase classname=\"s\" name=\"t2\" time=\"{t2}\"/></testsuite>\nXML\n"
        )
    };
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "Tester"]);
    std::fs::write(dir.join("suite.sh"), suite("0.010")).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "the suite"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("suite.sh"), suite("0.250")).unwrap();
    git(dir, &["commit", "-qam", "t2 waits"]);
    let out = tardy(dir)
        .args([
            "ci",
            "--runs",
            "3",
            "--tests",
            "out/junit.xml",
            "--json",
            "--",
            "sh",
            "suite.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &j["tests"];
    assert!(t.is_object(), "{j}");
    let text = t.to_string();
    assert!(text.contains("t2"), "{t}");
    assert!(
        (t["total_after_s"].as_f64().unwrap() - 0.26).abs() < 1e-9,
        "{t}"
    );
    assert!(
        (t["total_before_s"].as_f64().unwrap() - 0.02).abs() < 1e-9,
        "{t}"
    );
    // A path with no report says so, and the verdict on the runs stands.
    let out = tardy(dir)
        .args([
            "ci",
            "--runs",
            "3",
            "--tests",
            "nowhere.xml",
            "--",
            "sh",
            "suite.sh",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Tests: not compared: the base's test reports (nowhere.xml)"),
        "{text}"
    );
}

#[test]
fn a_proven_regression_is_explained_on_request() {
    // The branch starts 40 processes where main slept as long: the regression
    // is real, and what changed in the run is process creation.
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "Tester"]);
    std::fs::write(dir.join("bench.sh"), "sleep 0.01\n").unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "the benchmark"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(
        dir.join("bench.sh"),
        "sleep 0.01\ni=0; while [ $i -lt 40 ]; do /bin/true; i=$((i+1)); done\n",
    )
    .unwrap();
    git(dir, &["commit", "-qam", "a process per item"]);
    let md = dir.join("comment.md");
    let out = tardy(dir)
        .args([
            "ci",
            "--runs",
            "6",
            "--explain",
            "--explain-runs",
            "2",
            "--json",
        ])
        .args(["--markdown", md.to_str().unwrap(), "--", "sh", "bench.sh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["estimate"]["verdict"], "slower", "{j}");
    let top = j["explain"]["causes"][0]["kind"]
        .as_str()
        .unwrap_or_default();
    assert!(
        top == "more-processes" || top == "process-creation",
        "{top}: {:#}",
        j["explain"]["causes"]
    );
    // The comment leads with the cause in one line: the processes started
    // differ in every run, so it is certain whatever the traced walls do.
    let md = std::fs::read_to_string(&md).unwrap();
    let why = md
        .lines()
        .find(|l| l.starts_with("**Why**"))
        .unwrap_or_else(|| panic!("no **Why** line: {md}"));
    assert!(
        why.contains("head makes 4")
            && why.contains("process starts a run, base 2")
            && why.contains("certain"),
        "{why}"
    );
    assert!(md.contains("| category | base | head |"), "{md}");
    assert!(md.contains("in the job's log"), "{md}");
    // The full text is in the job's log (standard output without --json).
}

/// `--metric cpu` judges by the tree's CPU time (user + system), which a
/// loaded runner's waits for a CPU do not move: a branch that does three
/// times the shell work is slower in CPU time, beside two CPU hogs too.
#[test]
fn cpu_time_decides_with_metric_cpu() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "Tester"]);
    let work =
        |n: u32| format!("echo start\ni=0; while [ $i -lt {n} ]; do i=$((i+1)); done\necho done\n");
    std::fs::write(dir.join("bench.sh"), work(3000)).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "the benchmark"]);
    git(dir, &["checkout", "-qb", "feature"]);
    std::fs::write(dir.join("bench.sh"), work(9000)).unwrap();
    git(dir, &["commit", "-qam", "three times the work"]);
    let md = dir.join("comment.md");
    let _hogs = common::Hogs::start(2);
    let out = tardy(dir)
        .args(["ci", "--metric", "cpu", "--runs", "8", "--json"])
        .args(["--markdown", md.to_str().unwrap(), "--", "sh", "bench.sh"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["metric"], "cpu", "{j}");
    assert_eq!(j["estimate"]["verdict"], "slower", "{j}");
    assert!(j["estimate"]["ratio"].as_f64().unwrap() > 1.5, "{j}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("slower than base in CPU time"), "{md}");
}
