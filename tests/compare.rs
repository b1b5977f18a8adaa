//! `tardy compare` on real files: the binary as a user runs it.

mod common;

use common::cmd as tardy;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    common::data("compare").join(name)
}

/// Deterministic "timings": a sawtooth around `center` with 2% spread.
fn write_numbers(dir: &Path, name: &str, center: f64, n: usize) -> PathBuf {
    let text: String = (0..n)
        .map(|i| {
            format!(
                "{}\n",
                center * (1.0 + 0.02 * ((i * 7 % 11) as f64 / 10.0 - 0.5))
            )
        })
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn json(args: &[&str]) -> Value {
    let out = tardy()
        .arg("compare")
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

#[test]
fn two_number_files_give_a_verdict_with_every_documented_key() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 30);
    let b = write_numbers(d.path(), "b.txt", 10.4, 30);
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let row = &r["rows"][0];
    for key in [
        "baseline",
        "candidate",
        "n",
        "center",
        "ratio",
        "ci_low",
        "ci_high",
        "p_value",
        "test",
        "verdict",
        "min_detectable_effect",
    ] {
        assert!(!row[key].is_null(), "missing {key}: {row}");
    }
    assert_eq!(row["verdict"], "slower");
    assert_eq!(row["n"], serde_json::json!([30, 30]));
    assert!((row["ratio"].as_f64().unwrap() - 1.04).abs() < 0.005);
    assert!(row["test"].as_str().unwrap().starts_with("mann-whitney-u"));
    assert_eq!(r["schema"], "tardy.compare");
}

#[test]
fn text_says_slower_and_plots() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 30);
    let b = write_numbers(d.path(), "b.txt", 10.4, 30);
    let out = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .arg("--ascii")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("4.00% slower") || text.contains("4.0"),
        "{text}"
    );
    assert!(
        text.contains("b.txt vs ") && text.contains("95% CI +"),
        "{text}"
    );
    assert!(
        text.contains('M') && text.contains('['),
        "plot missing: {text}"
    );
}

#[test]
fn no_difference_says_what_it_would_take() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 8);
    let b = write_numbers(d.path(), "b.txt", 10.0, 8);
    // Identical data: proven the same within +-1%, but not within +-0.1%.
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r["rows"][0]["verdict"], "same");
    let out = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--no-plot", "--target-effect", "0.1"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no difference proven at 95%"), "{text}");
    assert!(text.contains("runs per side would detect 0.10%"), "{text}");
    let r = json(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--target-effect",
        "0.1",
    ]);
    assert_eq!(r["rows"][0]["verdict"], "inconclusive");
    assert!(r["rows"][0]["min_detectable_effect"].as_f64().unwrap() > 0.0);
}

#[test]
fn go_benchmarks_match_benchstat() {
    // benchstat old.txt new.txt: Sum-2 +10.11% (p=0.000), Small-2 ~ (p=0.038), Alloc-2 ~ (p=0.574),
    // geomean +10.35% (tests/data/compare/README.md). benchstat does not adjust p-values: --test u
    // gives the raw U p-values; tardy adjusts them with Holm for the verdicts.
    let r = json(&[
        data("old.txt").to_str().unwrap(),
        data("new.txt").to_str().unwrap(),
    ]);
    let row = |name: &str, unit: &str| {
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == name && x["unit"] == unit)
            .unwrap()
            .clone()
    };
    assert_eq!(row("Sum-2", "sec/op")["verdict"], "slower");
    assert!(row("Sum-2", "sec/op")["p_value"].as_f64().unwrap() < 0.0005);
    assert_eq!(
        format!(
            "{:.3}",
            row("Small-2", "sec/op")["p_value"].as_f64().unwrap()
        ),
        "0.038"
    );
    assert_eq!(
        format!(
            "{:.3}",
            row("Alloc-2", "sec/op")["p_value"].as_f64().unwrap()
        ),
        "0.574"
    );
    assert_eq!(
        row("Small-2", "sec/op")["verdict"],
        "inconclusive",
        "0.038 does not survive Holm over 5"
    );
    assert_eq!(row("Alloc-2", "B/op")["verdict"], "same");
    let g = r["geomeans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["unit"] == "sec/op")
        .unwrap();
    assert!(
        (g["ratio"].as_f64().unwrap() - 1.1035).abs() < 0.0005,
        "{g}"
    );
    assert_eq!(r["correction"], "holm");
    let fdr = json(&[
        data("old.txt").to_str().unwrap(),
        data("new.txt").to_str().unwrap(),
        "--fdr",
    ]);
    assert_eq!(fdr["correction"], "benjamini-hochberg");
}

#[test]
fn one_file_with_several_commands_compares_each_with_the_first() {
    let r = json(&[data("hyperfine.json").to_str().unwrap()]);
    assert_eq!(r["rows"].as_array().unwrap().len(), 1);
    let row = &r["rows"][0];
    assert_eq!(row["baseline"], "sleep 0.01");
    assert_eq!(row["candidate"], "sleep 0.011");
    assert_eq!(row["verdict"], "slower");
}

#[test]
fn pytest_benchmark_files_are_matched_by_test() {
    let r = json(&[
        data("pytest-old.json").to_str().unwrap(),
        data("pytest-new.json").to_str().unwrap(),
    ]);
    let work = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "test_b.py::test_work")
        .unwrap();
    assert_eq!(work["verdict"], "slower", "N 2000 -> 3000");
}

#[test]
fn tardy_results_files_compare_and_warn_about_different_machines() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.json"), d.path().join("b.json"));
    for (p, cmd) in [(&a, "sleep 0.01"), (&b, "sleep 0.05")] {
        tardy()
            .args(["run", "--runs", "10", "--export-json"])
            .arg(p)
            .arg(cmd)
            .assert()
            .success();
    }
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r["rows"][0]["verdict"], "slower");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| !w.as_str().unwrap().contains("different machines"))
    );
    // The same file with another CPU model recorded.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    v["machine"]["cpu_model"] = Value::from("Some Other CPU");
    std::fs::write(&b, serde_json::to_string(&v).unwrap()).unwrap();
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let w = r["warnings"].to_string();
    assert!(
        w.contains("different machines") && w.contains("Some Other CPU"),
        "{w}"
    );
}

#[test]
fn vs_pools_files_per_side_and_stdin_works() {
    let d = tempfile::tempdir().unwrap();
    let a1 = write_numbers(d.path(), "a1", 10.0, 10);
    let a2 = write_numbers(d.path(), "a2", 10.0, 12);
    let b1 = write_numbers(d.path(), "b1", 11.0, 9);
    let out = tardy()
        .arg("compare")
        .args([
            a1.to_str().unwrap(),
            a2.to_str().unwrap(),
            "--vs",
            b1.to_str().unwrap(),
            "-",
            "--format",
            "json",
        ])
        .write_stdin("11.1\n10.9\n11.0\n")
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["rows"][0]["n"], serde_json::json!([22, 12]));
    assert!(
        r["rows"][0]["candidate"]
            .as_str()
            .unwrap()
            .ends_with("+<stdin>")
    );
}

#[test]
fn fail_if_slower_gates_ci() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 30);
    let b = write_numbers(d.path(), "b.txt", 11.0, 30);
    let out = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--fail-if-slower", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("proven slower by more than 5.00%"));
    // 10% slower is not proven to be more than 20% slower.
    tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--fail-if-slower", "20"])
        .assert()
        .code(0);
    // Faster never fails.
    tardy()
        .arg("compare")
        .arg(&b)
        .arg(&a)
        .args(["--fail-if-slower", "0"])
        .assert()
        .code(0);
}

#[test]
fn github_summary_and_annotations() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 30);
    let b = write_numbers(d.path(), "b.txt", 11.0, 30);
    let summary = d.path().join("summary.md");
    let out = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--github", "--fail-if-slower", "2", "--no-plot"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("::error title=tardy:"), "{stdout}");
    let md = std::fs::read_to_string(summary).unwrap();
    assert!(
        md.starts_with("### tardy compare")
            && md.contains("| Benchmark |")
            && md.contains("slower"),
        "{md}"
    );
}

#[test]
fn markdown_and_csv() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 10);
    let b = write_numbers(d.path(), "b.txt", 10.5, 10);
    let md = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&md.stdout)
            .starts_with("| Benchmark | Baseline | Candidate | Change |")
    );
    let csv = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.starts_with("name,unit,baseline,candidate,n_baseline,n_candidate,center_baseline"));
    assert!(csv.lines().nth(1).unwrap().contains(",slower,"), "{csv}");
}

#[test]
fn every_test_choice_runs() {
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 20);
    let b = write_numbers(d.path(), "b.txt", 10.5, 20);
    for (test, name) in [
        ("student", "student-t"),
        ("welch", "welch-t"),
        ("log-welch", "welch-log-t"),
        ("u", "mann-whitney-u"),
        ("bootstrap", "bootstrap-median"),
    ] {
        let r = json(&[
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--test",
            test,
            "--resamples",
            "500",
        ]);
        assert!(
            r["rows"][0]["test"].as_str().unwrap().starts_with(name),
            "{test}: {}",
            r["rows"][0]["test"]
        );
        assert_eq!(r["rows"][0]["verdict"], "slower", "{test}");
    }
}

#[test]
fn bad_inputs_give_one_line_naming_the_file_and_exit_2() {
    let good = data("old.txt");
    let d = tempfile::tempdir().unwrap();
    let numbers = write_numbers(d.path(), "good.txt", 1.0, 5);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare/bad");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bad = entry.unwrap().path();
        let partner = if bad.to_string_lossy().contains("go-") {
            &good
        } else {
            &numbers
        };
        let out = tardy()
            .arg("compare")
            .arg(&bad)
            .arg(partner)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", bad.display());
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{}: {err}",
            bad.display()
        );
        assert!(!err.contains("panicked"));
        let file = bad.file_name().unwrap().to_string_lossy().to_string();
        assert!(err.contains(&file), "{file}: {err}");
        n += 1;
    }
    assert!(n >= 12);
    // Options too.
    for args in [
        vec!["--confidence", "0"],
        vec!["--test", "magic"],
        vec!["--format", "xml"],
        vec!["--column", "0"],
    ] {
        tardy()
            .arg("compare")
            .arg(&numbers)
            .arg(&numbers)
            .args(&args)
            .assert()
            .code(2);
    }
    tardy()
        .arg("compare")
        .arg("/nonexistent/file")
        .arg(&numbers)
        .assert()
        .code(2);
}
