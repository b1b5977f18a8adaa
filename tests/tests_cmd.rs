//! `tardy tests show` and `tardy tests diff` on real reports.

mod common;

use common::cmd as tardy;
use common::{refuses, stdout_of};

use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    common::data("reports").join(name)
}

fn json(args: &[&str]) -> Value {
    let out = tardy()
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A JUnit file with `tests` as (name, seconds, status child).
fn junit(dir: &Path, file: &str, tests: &[(&str, f64, &str)], suite_time: f64) -> PathBuf {
    let mut x = format!("<testsuites><testsuite name=\"s\" time=\"{suite_time}\">");
    for (name, t, child) in tests {
        x.push_str(&format!(
            "<testcase classname=\"C\" name=\"{name}\" time=\"{t}\">{child}</testcase>"
        ));
    }
    x.push_str("</testsuite></testsuites>");
    let p = dir.join(file);
    std::fs::write(&p, x).unwrap();
    p
}

#[test]
fn show_summarises_a_report() {
    let r = json(&["tests", "show", data("pytest-xunit2.xml").to_str().unwrap()]);
    assert_eq!(r["schema"], "tardy.tests-show");
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["tests"], 6);
    assert_eq!(r["by_status"]["failed"], 1);
    assert_eq!(r["by_status"]["skipped"], 1);
    assert!(
        r["slowest_tests"][0]["name"]
            .as_str()
            .unwrap()
            .contains("test_sleepy")
    );
    let text = tardy()
        .args(["tests", "show", data("gtest.xml").to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("Slowest tests") && text.contains("Test durations"),
        "{text}"
    );
}

#[test]
fn seed_000_is_named_a_constant_per_test_overhead() {
    // Real pytest reports of examples/nunit-sleep: default timer slack vs 15.6 ms.
    let r = json(&[
        "tests",
        "diff",
        data("seed000-before.xml").to_str().unwrap(),
        "--vs",
        data("seed000-after.xml").to_str().unwrap(),
    ]);
    for key in [
        "tests",
        "matched",
        "added",
        "removed",
        "total_before_s",
        "total_after_s",
        "shapes",
    ] {
        assert!(!r[key].is_null(), "missing {key}");
    }
    assert_eq!(r["matched"], 60);
    let top = &r["shapes"][0];
    assert_eq!(top["kind"], "constant_overhead");
    let c = top["per_test_overhead_s"].as_f64().unwrap();
    assert!((0.014..0.02).contains(&c), "{c}");
    assert!(top["quantum"].as_str().unwrap().contains("15.6 ms"));
    assert!(top["explained_share"].as_f64().unwrap() > 0.9);
    assert!(r["tests"].as_array().unwrap().len() == 60);
}

#[test]
fn repeated_runs_give_per_test_verdicts() {
    let d = tempfile::tempdir().unwrap();
    let mut before = Vec::new();
    let mut after = Vec::new();
    for run in 0..3 {
        let jitter = 0.0001 * run as f64;
        let base: Vec<(String, f64)> = (0..20)
            .map(|i| (format!("t{i}"), 0.010 + 0.001 * i as f64 + jitter))
            .collect();
        let b: Vec<(&str, f64, &str)> = base.iter().map(|(n, t)| (n.as_str(), *t, "")).collect();
        let a: Vec<(&str, f64, &str)> = base
            .iter()
            .map(|(n, t)| (n.as_str(), if n == "t3" { t + 0.5 } else { *t }, ""))
            .collect();
        before.push(junit(d.path(), &format!("b{run}.xml"), &b, 1.0));
        after.push(junit(d.path(), &format!("a{run}.xml"), &a, 1.5));
    }
    let mut args: Vec<String> = vec!["tests".into(), "diff".into()];
    args.extend(before.iter().map(|p| p.display().to_string()));
    args.push("--vs".into());
    args.extend(after.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = json(&args);
    assert_eq!(r["runs"], serde_json::json!([3, 3]));
    let rows = r["tests"].as_array().unwrap();
    assert_eq!(rows[0]["test"], "t3", "largest change first");
    assert_eq!(rows[0]["verdict"], "slower");
    assert!(rows[1..].iter().all(|x| x["verdict"] != "slower"));
    assert_eq!(r["shapes"][0]["kind"], "concentrated");
}

#[test]
fn added_removed_failing_and_renamed() {
    let d = tempfile::tempdir().unwrap();
    let b = junit(
        d.path(),
        "b.xml",
        &[("keep", 0.1, ""), ("gone", 0.2, ""), ("breaks", 0.1, "")],
        0.5,
    );
    let a = junit(
        d.path(),
        "a.xml",
        &[
            ("keep", 0.1, ""),
            ("new", 0.3, ""),
            ("breaks", 0.1, "<failure message=\"x\"/>"),
        ],
        0.6,
    );
    let r = json(&[
        "tests",
        "diff",
        b.to_str().unwrap(),
        "--vs",
        a.to_str().unwrap(),
    ]);
    assert_eq!(r["added"], serde_json::json!(["s :: C :: new"]));
    assert_eq!(r["removed"], serde_json::json!(["s :: C :: gone"]));
    assert_eq!(r["newly_failing"], serde_json::json!(["s :: C :: breaks"]));
}

#[test]
fn fail_if_slower_and_formats() {
    let d = tempfile::tempdir().unwrap();
    let b = junit(d.path(), "b.xml", &[("x", 1.0, ""), ("y", 1.0, "")], 2.0);
    let a = junit(d.path(), "a.xml", &[("x", 1.5, ""), ("y", 1.0, "")], 2.5);
    let diff = |extra: &[&str]| {
        tardy()
            .args(["tests", "diff"])
            .arg(&b)
            .arg("--vs")
            .arg(&a)
            .args(extra)
            .output()
            .unwrap()
    };
    assert_eq!(diff(&["--fail-if-slower", "10"]).status.code(), Some(1));
    assert_eq!(diff(&["--fail-if-slower", "30"]).status.code(), Some(0));
    let md = diff(&["--format", "markdown"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("| Test | Before | After | Change |"));
    let csv = diff(&["--format", "csv"]);
    assert!(String::from_utf8_lossy(&csv.stdout).starts_with("suite,class,test,before_s,after_s"));
}

#[test]
fn bad_reports_fail_clearly_or_are_skipped_with_keep_going() {
    let d = tempfile::tempdir().unwrap();
    junit(d.path(), "good.xml", &[("x", 1.0, "")], 1.0);
    let bad = d.path().join("bad.xml");
    std::fs::write(&bad, "<testsuite name=\"a\"><testcase name=\"x\"").unwrap();
    let out = tardy().args(["tests", "show"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.xml") && err.trim().lines().count() == 1,
        "{err}"
    );
    // A directory with one bad file: stop, or skip it with --keep-going.
    tardy()
        .args(["tests", "show"])
        .arg(d.path())
        .assert()
        .code(2);
    let out = tardy()
        .args(["tests", "show", "--keep-going", "--format", "json"])
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tests"], 1);
    assert!(v["warnings"].to_string().contains("bad.xml"));
    tardy()
        .args(["tests", "show", "/nonexistent/dir"])
        .assert()
        .code(2);
}

#[test]
fn two_gigabytes_of_junk_fail_fast_with_flat_memory() {
    // Sparse files: 2 GiB each on disk in no space. One starts like a report and then
    // never closes its token (a 2 GiB text node of NULs, a 2 GiB NDJSON line); one is junk
    // from the first byte. Each must end in one clear line, reading at most 64 MiB.
    let d = tempfile::tempdir().unwrap();
    for (file, head, expect) in [
        ("text.xml", "<testsuites>", "longer than 64 MiB"),
        (
            "attr.xml",
            "<testsuites><testcase name=\"",
            "longer than 64 MiB",
        ),
        (
            "line.json",
            "{\"Action\":\"run\",\"Test\":\"",
            "longer than 64 MiB",
        ),
        ("junk.bin", "\u{7f}ELF", "is not a test report"),
    ] {
        let path = d.path().join(file);
        std::fs::write(&path, head).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        let out = tardy().args(["tests", "show"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(file) && err.contains(expect) && err.trim().lines().count() == 1,
            "{file}: {err}"
        );
    }
    let empty = tempfile::tempdir().unwrap();
    let out = tardy()
        .args(["tests", "show"])
        .arg(empty.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("without report files"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_file_of_the_bad_corpus_is_one_clear_line() {
    let bad = data("bad");
    let mut n = 0;
    for entry in std::fs::read_dir(&bad).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        if file == "README.md" {
            continue;
        }
        n += 1;
        let out = tardy().args(["tests", "show"]).arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&file) && err.trim().lines().count() == 1 && !err.contains("panicked"),
            "{file}: {err}"
        );
    }
    assert!(n >= 7);
    // Beside a good report, --keep-going turns each into a warning.
    let d = tempfile::tempdir().unwrap();
    junit(d.path(), "good.xml", &[("x", 1.0, "")], 1.0);
    let v = json(&[
        "tests",
        "show",
        "--keep-going",
        bad.to_str().unwrap(),
        d.path().join("good.xml").to_str().unwrap(),
    ]);
    assert_eq!(v["tests"], 1);
    // The billion-laughs document is read with its entities left unexpanded.
    let v = json(&["tests", "show", data("entity-bomb.xml").to_str().unwrap()]);
    assert!(v["slowest_tests"].to_string().contains("&lol9;"), "{v}");
}

#[test]
fn deep_nesting_is_refused_at_a_documented_depth() {
    // 100k nested <testsuite> elements cost the reader quadratic time before; now
    // it stops at the 257th level with the place, and 200 levels still read.
    let d = tempfile::tempdir().unwrap();
    let nest = |levels: usize| {
        let mut s = String::from("<?xml version=\"1.0\"?>\n");
        for i in 0..levels {
            s += &format!("<testsuite name=\"s{i}\">");
        }
        s += "<testcase name=\"t\" classname=\"c\" time=\"0.5\"/>";
        for _ in 0..levels {
            s += "</testsuite>";
        }
        s
    };
    let deep = d.path().join("deep.xml");
    std::fs::write(&deep, nest(100_000)).unwrap();
    let out = tardy()
        .args(["tests", "show", deep.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nests elements more than 256 deep") && err.contains("line 2"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let ok = d.path().join("ok.xml");
    std::fs::write(&ok, nest(200)).unwrap();
    let r = json(&["tests", "show", ok.to_str().unwrap()]);
    assert_eq!(r["tests"], 1, "{r}");
}

/// Runs that failed without a failing test read as failed, whatever wrote
/// them: `go test -json` from Go 1.26 (a package that does not build, a
/// TestMain exit, a panic, a -timeout, a panic after the tests passed) and
/// with the older text build errors before the events, a JUnit suite's own
/// error, UTF-16 and UTF-32 XML, CTRF.
#[test]
fn failed_runs_never_read_as_passed() {
    // gotestsum on the same file (`gotestsum --raw-command -- cat FILE`):
    // "DONE 11 tests, 8 failures, 1 error": it counts four packages and the
    // four tests that never ended; tardy counts the packages with no failed
    // test of their own once each.
    let go = json(&[
        "tests",
        "show",
        &data("go-test-failures.json").to_string_lossy(),
    ]);
    assert_eq!(go["by_status"]["failed"], 4, "{go}");
    assert_eq!(go["by_status"]["errored"], 3, "{go}");
    assert_eq!(go["by_status"]["passed"], 7, "{go}");
    let warnings = go["warnings"].to_string();
    assert!(
        warnings.contains("panic: test timed out after 2s"),
        "{warnings}"
    );
    // gotestsum refuses this one ("failed to parse test output: ##[group]...").
    let old = json(&[
        "tests",
        "show",
        &data("go-test-buildtext.json").to_string_lossy(),
    ]);
    assert_eq!(old["by_status"]["errored"], 1, "{old}");
    let suite = json(&[
        "tests",
        "show",
        &data("junit-suite-error.xml").to_string_lossy(),
    ]);
    assert_eq!(suite["by_status"]["errored"], 1, "{suite}");
    let ctrf = json(&["tests", "show", &data("ctrf-jest.json").to_string_lossy()]);
    assert_eq!(ctrf["by_status"]["failed"], 1, "{ctrf}");
    assert_eq!(ctrf["tests"], 8, "{ctrf}");
    for (wide, utf8) in [
        ("nunit3-utf16.xml", "nunit3.xml"),
        ("gtest-utf32be.xml", "gtest.xml"),
    ] {
        let a = json(&["tests", "show", &data(wide).to_string_lossy()]);
        let b = json(&["tests", "show", &data(utf8).to_string_lossy()]);
        assert_eq!(a["by_status"], b["by_status"], "{wide}");
        assert_eq!(a["total_s"], b["total_s"], "{wide}");
    }
    // `compare` sniffs the same way: a UTF-16 report is a test report there too.
    let out = tardy()
        .args(["compare"])
        .arg(data("nunit3-utf16.xml"))
        .arg(data("nunit3.xml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("binary"), "{err}");
}

/// Two `go test -json` runs (tests/data/reports/make.sh) where only the
/// subtest `TestRender/big` went 20 -> 60 ms: the change is that one test,
/// its parent `TestRender` (whose time holds it) is not listed beside it as
/// a second +40 ms regression, and no shape with a factor of 1.00 claims to
/// explain it (before: "proportional (explains 100%) ... scaled by about
/// 1.00x").
#[test]
fn a_subtest_that_slowed_is_one_change_not_two() {
    let d = json(&[
        "tests",
        "diff",
        &data("go-subtest-before.json").to_string_lossy(),
        "--vs",
        &data("go-subtest-after.json").to_string_lossy(),
    ]);
    let shapes = d["shapes"].as_array().unwrap();
    assert!(
        shapes[0]["summary"]
            .as_str()
            .unwrap()
            .starts_with("1 of 6 tests hold 100%"),
        "{shapes:?}"
    );
    assert!(
        !d["shapes"].to_string().contains("scaled by about 1.00x"),
        "{shapes:?}"
    );
    let parent = d["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["test"] == "TestRender")
        .unwrap();
    assert_eq!(parent["parent"], true, "{parent}");
    let text = String::from_utf8(
        tardy()
            .args(["tests", "diff"])
            .arg(data("go-subtest-before.json"))
            .arg("--vs")
            .arg(data("go-subtest-after.json"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let top = text
        .split("Top regressions (absolute)")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert!(
        top.contains("TestRender/big") && !top.contains(":: TestRender\n"),
        "{top}"
    );
}

/// A gzip "report" of 1.2 million identical test cases (a few hundred KiB
/// on disk, 58 MB inflated).
fn junit_bomb(dir: &Path) -> PathBuf {
    use std::io::Write;
    let p = dir.join("bomb.xml.gz");
    let f = std::fs::File::create(&p).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    gz.write_all(b"<testsuite name=\"s\">\n").unwrap();
    let line = b"<testcase classname=\"c\" name=\"t\" time=\"0.001\"/>\n".repeat(10_000);
    for _ in 0..120 {
        gz.write_all(&line).unwrap();
    }
    gz.write_all(b"</testsuite>\n").unwrap();
    gz.finish().unwrap();
    p
}

#[test]
fn every_cli_reader_is_bounded_and_says_which_flag_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = junit_bomb(dir.path());
    // The default caps: a million results.
    let out = tardy().args(["tests", "show"]).arg(&bomb).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-results") && err.contains("1000000"),
        "{err}"
    );
    // history import reads through the same caps.
    let out = tardy()
        .current_dir(dir.path())
        .args(["history", "--db", "h.db", "import", "--series", "s"])
        .arg(&bomb)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-results"));
    // Inflation: a lower cap stops the same file by its size.
    let out = tardy()
        .args(["--max-inflated-mib", "4", "tests", "show"])
        .arg(&bomb)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-inflated-mib") && err.contains("4 MiB"),
        "{err}"
    );
    // Raised, it reads.
    let out = tardy()
        .args([
            "--max-results",
            "2000000",
            "tests",
            "show",
            "--format",
            "json",
        ])
        .arg(&bomb)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A gzip file of `copies` times `unit` between `head` and `tail`.
fn gz_bomb(path: &Path, head: &[u8], unit: &[u8], copies: usize, tail: &[u8]) {
    use std::io::Write;
    let f = std::fs::File::create(path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::best());
    gz.write_all(head).unwrap();
    let chunk = unit.repeat(10_000);
    for _ in 0..copies / 10_000 {
        gz.write_all(&chunk).unwrap();
    }
    gz.write_all(tail).unwrap();
    gz.finish().unwrap();
}

/// Run `cmd` to its end: its output and its peak memory (max RSS, KiB),
/// from its own rusage (wait4), not the test process's children's.
#[allow(clippy::zombie_processes)] // waited for below, with wait4, for its rusage
fn output_and_max_rss(cmd: &mut std::process::Command) -> (std::process::Output, u64) {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let (mut out, mut err) = (child.stdout.unwrap(), child.stderr.unwrap());
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut err, &mut stderr).unwrap();
    let stdout = reader.join().unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our own child, not yet waited for; both pointers are live.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    let status = std::os::unix::process::ExitStatusExt::from_raw(status);
    (
        std::process::Output {
            status,
            stdout,
            stderr,
        },
        usage.ru_maxrss as u64,
    )
}

/// Bombs in the other formats a CI job reads (go test -json, mocha's JSON,
/// TAP: 1.2 million results, a few hundred KiB of gzip each) are refused by
/// the results cap, naming its flag, and tardy stays under 256 MiB reading
/// each (mocha's and go's bombs took 2.9 and 2.6 GiB before any cap).
#[test]
fn bombs_in_every_format_are_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let n = 1_200_000;
    let go = dir.path().join("go.json.gz");
    gz_bomb(
        &go,
        b"",
        b"{\"Action\":\"pass\",\"Package\":\"example.com/p\",\"Test\":\"TestT\",\"Elapsed\":0.001}\n",
        n,
        b"{\"Action\":\"pass\",\"Package\":\"example.com/p\",\"Elapsed\":1}\n",
    );
    let mocha = dir.path().join("mocha.json.gz");
    gz_bomb(
        &mocha,
        b"{\"stats\": {\"tests\": 1200000, \"duration\": 1000}, \"tests\": [{\"title\": \"t\", \"fullTitle\": \"s t\", \"duration\": 1, \"err\": {}}",
        b", {\"title\": \"t\", \"fullTitle\": \"s t\", \"duration\": 1, \"err\": {}}",
        n,
        b"], \"pending\": [], \"failures\": [], \"passes\": []}\n",
    );
    let tap = dir.path().join("results.tap.gz");
    gz_bomb(&tap, b"TAP version 13\n", b"ok - t\n", n, b"1..1200000\n");
    for bomb in [&go, &mocha, &tap] {
        let (out, kib) = output_and_max_rss(
            std::process::Command::new(assert_cmd::cargo::cargo_bin("tardy"))
                .env_remove("TARDY_MAX_RESULTS")
                .args(["tests", "show"])
                .arg(bomb),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", bomb.display());
        assert!(
            err.contains("--max-results") && err.contains("1000000"),
            "{}: {err}",
            bomb.display()
        );
        assert!(
            kib < 256 * 1024,
            "{}: refused, but at {} MiB",
            bomb.display(),
            kib / 1024
        );
    }
}

/// An Allure results folder holds one result a file: its files count
/// together against the cap on one input's results (each file counted on
/// its own, a folder of millions of results was read whole whatever the
/// cap).
#[test]
fn an_allure_folder_counts_its_results_together_against_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("allure-results");
    std::fs::create_dir(&results).unwrap();
    for i in 0..30 {
        std::fs::write(
            results.join(format!("{i:08x}-0000-4000-8000-000000000000-result.json")),
            format!(
                r#"{{"name": "test_{i}", "status": "passed", "start": 1795526420000, "stop": 1795526420{i:03}, "uuid": "{i:08x}-0000-4000-8000-000000000000", "historyId": "h{i}", "fullName": "test_sample#test_{i}", "labels": [{{"name": "suite", "value": "test_sample"}}]}}"#
            ),
        )
        .unwrap();
    }
    let show = |cap: &str| {
        tardy()
            .args(["--max-results", cap, "tests", "show", "--format", "json"])
            .arg(&results)
            .output()
            .unwrap()
    };
    let out = show("20");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-results") && err.contains("20"), "{err}");
    let out = show("30");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tests"], 30, "{v:#}");
}

/// `tests diff` keeps every test's name of both sides: a run whose names
/// add up to more than the cap on names held is refused with the flag that
/// raises it (a million tests named with a kilobyte each would otherwise
/// take gigabytes), and read once it is raised.
#[test]
fn the_names_a_diff_holds_are_capped_and_say_which_flag_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    let report = |file: &str, ms: u32| {
        let mut x = String::from("<testsuite name=\"s\">\n");
        for i in 0..30_000 {
            x.push_str(&format!(
                "<testcase classname=\"c\" name=\"test_{i:06}_{}\" time=\"0.{ms:03}\"/>\n",
                "p".repeat(90)
            ));
        }
        x.push_str("</testsuite>\n");
        let p = dir.path().join(file);
        std::fs::write(&p, x).unwrap();
        p
    };
    let (a, b) = (report("a.xml", 5), report("b.xml", 9));
    let diff = |mib: &str| {
        tardy()
            .args(["--max-names-mib", mib, "tests", "diff"])
            .arg(&a)
            .arg("--vs")
            .arg(&b)
            .output()
            .unwrap()
    };
    // 30,000 names of 103 bytes: 3 MiB.
    let out = diff("2");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-names-mib") && err.contains("2 MiB") && err.trim().lines().count() == 1,
        "{err}"
    );
    let out = diff("8");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("30000 matched"));
}

/// A run read whole (its reruns marked and repeated, to merge: Surefire's
/// flakyFailure here) counts the names it holds against the same cap as a
/// diff: a report of long names is refused by it, not held however large.
#[test]
fn a_run_read_whole_for_its_reruns_is_held_to_the_names_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut x = String::from("<testsuite name=\"s\">\n");
    for i in 0..30_000 {
        let name = format!("test_{i:06}_{}", "p".repeat(90));
        x.push_str(&format!(
            "<testcase classname=\"c\" name=\"{name}\" time=\"0.005\"/>\n"
        ));
        if i % 1000 == 0 {
            // The same test run again after a failure, as Surefire writes it.
            x.push_str(&format!(
                "<testcase classname=\"c\" name=\"{name}\" time=\"0.007\"><flakyFailure message=\"m\"/></testcase>\n"
            ));
        }
    }
    x.push_str("</testsuite>\n");
    let p = dir.path().join("TEST-s.xml");
    std::fs::write(&p, x).unwrap();
    let show = |mib: &str| {
        tardy()
            .args(["--max-names-mib", mib, "tests", "show"])
            .arg(&p)
            .output()
            .unwrap()
    };
    // 30,000 names of 103 bytes held at once: 3 MiB.
    let out = show("2");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-names-mib") && err.contains("2 MiB") && err.trim().lines().count() == 1,
        "{err}"
    );
    let out = show("8");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Tests: 30000 (flaky 30"), "{text}");
}

/// The cap on results counts one input: two files under it each are read,
/// a file over it is refused with the flag that raises it (jest's JSON,
/// read file by file of its test files).
#[test]
fn the_results_cap_counts_each_input_on_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let jest = |n: usize, ms: u64| {
        let tests: Vec<String> = (0..n)
            .map(|i| {
                format!(
                    r#"{{"fullName":"s t{i}","title":"t{i}","status":"passed","duration":{ms}}}"#
                )
            })
            .collect();
        format!(
            r#"{{"numTotalTests":{n},"numFailedTests":0,"testResults":[{{"name":"/repo/a.test.js","startTime":0,"endTime":9,"assertionResults":[{}]}}]}}"#,
            tests.join(",")
        )
    };
    let (a, b, big) = (
        dir.path().join("a.json"),
        dir.path().join("b.json"),
        dir.path().join("big.json"),
    );
    std::fs::write(&a, jest(20, 5)).unwrap();
    std::fs::write(&b, jest(20, 9)).unwrap();
    std::fs::write(&big, jest(40, 5)).unwrap();
    let out = stdout_of(
        tardy()
            .args(["--max-results", "30", "tests", "diff"])
            .arg(&a)
            .arg("--vs")
            .arg(&b),
    );
    let out = String::from_utf8_lossy(&out);
    assert!(out.contains("20 matched"), "{out}");
    refuses(
        tardy()
            .args(["--max-results", "30", "tests", "show"])
            .arg(&big),
        "--max-results",
    );
}
