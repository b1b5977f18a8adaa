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

/// `tardy compare ARGS EXTRA`'s standard output, after checking it succeeded.
fn compare_out(args: &[&str], extra: &[&str]) -> Vec<u8> {
    let out = tardy()
        .arg("compare")
        .args(args)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&compare_out(args, &["--format", "json"])).unwrap()
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
        .args(["--no-plot", "--target-effect", "0.1%"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no difference proven at 95%"), "{text}");
    assert!(text.contains("runs per side would detect 0.10%"), "{text}");
    let r = json(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--target-effect",
        "0.1%",
    ]);
    assert_eq!(r["rows"][0]["verdict"], "inconclusive");
    assert!(r["rows"][0]["min_detectable_effect"].as_f64().unwrap() > 0.0);
}

#[test]
fn go_benchmarks_match_benchstat() {
    // benchstat old.txt new.txt: Sum-2 +10.11% (p=0.000), Small-2 ~ (p=0.038), Alloc-2 ~ (p=0.574),
    // geomean +10.35% (tests/data/compare/README.md). benchstat does not adjust p-values: --test u
    // gives the raw U p-values; tardy adjusts them (Benjamini-Hochberg by default, Holm on request)
    // for the verdicts, over the rows that can vary.
    let r = json(&[
        data("old.txt").to_str().unwrap(),
        data("new.txt").to_str().unwrap(),
        "--correction",
        "holm",
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
    ]);
    assert_eq!(fdr["correction"], "benjamini-hochberg");
    // The B/op and allocs/op rows identical in every run are not tested:
    // the family is the three sec/op rows.
    assert_eq!(fdr["family"], 3, "{fdr}");
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
            .starts_with("| Benchmark | Baseline | Candidate | Δ (HL) |")
    );
    let csv = tardy()
        .arg("compare")
        .arg(&a)
        .arg(&b)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.starts_with(
            "group,name,unit,baseline,candidate,n_baseline,n_candidate,center_baseline"
        )
    );
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

fn bench(name: &str) -> String {
    common::data("bench").join(name).display().to_string()
}

fn compare_text(args: &[&str]) -> String {
    String::from_utf8(compare_out(args, &["--no-plot"])).unwrap()
}

/// `go test -bench . -count 6 ./...` over two packages that both have BenchmarkEncode;
/// package b's got 20% slower. benchstat 0.0.0-20260908 (`benchstat old.txt new.txt`):
/// pkg a Encode ~ (p=0.485), Decode ~ (p=0.615), geomean +0.19%; pkg b Encode +18.75%
/// (p=0.002), Decode ~ (p=0.418), geomean +9.12%.
#[test]
fn go_packages_are_part_of_a_benchmarks_identity() {
    let v = json(&[
        &bench("go-two-packages-old.txt"),
        &bench("go-two-packages-new.txt"),
        "--correction",
        "none",
    ]);
    let rows = v["rows"].as_array().unwrap();
    let row = |group: &str, name: &str| {
        rows.iter()
            .find(|r| r["group"] == group && r["name"] == name && r["unit"] == "sec/op")
            .unwrap_or_else(|| panic!("no {group} {name}"))
    };
    let (a, b) = ("pkg=example.com/bench/a", "pkg=example.com/bench/b");
    assert!((row(a, "Encode-2")["p_value"].as_f64().unwrap() - 0.485).abs() < 0.001);
    assert!((row(a, "Decode-2")["p_value"].as_f64().unwrap() - 0.615).abs() < 0.001);
    assert!((row(b, "Decode-2")["p_value"].as_f64().unwrap() - 0.418).abs() < 0.001);
    let enc = row(b, "Encode-2");
    assert!((enc["p_value"].as_f64().unwrap() - 0.002).abs() < 0.0006);
    assert_eq!(enc["verdict"], "slower");
    // Medians of the two packages are ~80 ns and ~750 ns: never pooled into one sample.
    assert!(row(a, "Encode-2")["center"][0].as_f64().unwrap() < 100e-9);
    assert!(enc["center"][0].as_f64().unwrap() > 700e-9);
    // Geomeans per package and over both.
    let g: Vec<(String, f64)> = v["geomeans"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["unit"] == "sec/op")
        .map(|g| {
            (
                g["group"].as_str().unwrap_or("").to_string(),
                g["ratio"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(g.len(), 3, "{g:?}");
    assert!((g[0].1 - 1.0019).abs() < 0.0005, "{g:?}");
    assert!((g[1].1 - 1.0912).abs() < 0.0005, "{g:?}");
    assert_eq!(g[2].0, "");
    assert!(v["warnings"].as_array().unwrap().is_empty());
    // The text names the groups and says what Δ and p hold.
    let text = compare_text(&[
        &bench("go-two-packages-old.txt"),
        &bench("go-two-packages-new.txt"),
    ]);
    assert!(text.contains("pkg=example.com/bench/b"), "{text}");
    assert!(text.contains("Δ (HL)") && text.contains("p (BH)"), "{text}");
}

/// The same new.txt with its `cpu:` line changed (as if run on another machine).
#[test]
fn different_go_machines_are_compared_with_a_warning() {
    let v = json(&[
        &bench("go-two-packages-old.txt"),
        &bench("go-other-cpu-new.txt"),
    ]);
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains("different machines") && w.contains("AMD EPYC")
        }),
        "{w:?}"
    );
    let text = compare_text(&[
        &bench("go-two-packages-old.txt"),
        &bench("go-other-cpu-new.txt"),
    ]);
    assert!(text.contains("Warning:") && text.contains("cpu:"), "{text}");
}

#[test]
fn exact_units_and_single_runs() {
    // `Unit B/op assume=exact`: 16 -> 24 B/op is a difference, no test needed.
    let v = json(&[&bench("go-exact-old.txt"), &bench("go-exact-new.txt")]);
    let bop: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["unit"] == "B/op")
        .collect();
    assert_eq!(bop.len(), 4);
    assert!(
        bop.iter()
            .all(|r| r["verdict"] == "slower" && r["ratio"] == 1.5)
    );
    // -count=1 on both sides: both values, the ratio, and why there is no verdict.
    let v = json(&[&bench("go-count1-old.txt"), &bench("go-count1-new.txt")]);
    let r = &v["rows"][0];
    assert_eq!(
        r["name"], "Encode-2",
        "the benchmark's name, not the file's"
    );
    assert_eq!(r["verdict"], "inconclusive");
    assert!(r["ratio"].as_f64().unwrap() > 1.5);
    let text = compare_text(&[&bench("go-count1-old.txt"), &bench("go-count1-new.txt")]);
    assert!(text.contains("Encode-2"), "{text}");
    assert!(
        text.contains("no test is possible") && text.contains("-count"),
        "{text}"
    );
    // One benchmark per file: the row is the benchmark.
    let v = json(&[
        &bench("go-one-benchmark-old.txt"),
        &bench("go-one-benchmark-new.txt"),
    ]);
    assert_eq!(v["rows"][0]["name"], "Encode-2");
    assert_eq!(v["rows"][0]["verdict"], "slower");
}

/// Debian's ministat 20150715 reads CRLF, \v and \f line ends, and these values near
/// f64::MAX, which it prints as `Avg inf  Stddev -nan`.
#[test]
fn ministat_line_ends_and_huge_values() {
    for f in ["crlf.txt", "vf.txt"] {
        let out = tardy()
            .args(["ministat", "-n", &bench(f)])
            .output()
            .unwrap();
        assert!(out.status.success(), "{f}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("2.5     1.2909944"));
    }
    let out = tardy()
        .args(["ministat", "-n", &bench("big.txt")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1.4e+308 3.6055513e+307"), "{text}");
}

/// One benchmark with one run a side beside one with six: the advice uses the spread the
/// other row shows.
#[test]
fn a_single_run_row_borrows_the_runs_needed_from_rows_with_a_spread() {
    let d = tempfile::tempdir().unwrap();
    let side = |one: &str, many: &str, out: &str| {
        let one = std::fs::read_to_string(bench(one)).unwrap();
        let many: String = std::fs::read_to_string(bench(many))
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("BenchmarkDecode"))
            .take(6)
            .map(|l| format!("{l}\n"))
            .collect();
        let p = d.path().join(out);
        std::fs::write(&p, one + &many).unwrap();
        p.display().to_string()
    };
    let a = side("go-count1-old.txt", "go-two-packages-old.txt", "a.txt");
    let b = side("go-count1-new.txt", "go-two-packages-new.txt", "b.txt");
    let v = json(&[&a, &b]);
    let enc = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "Encode-2" && r["unit"] == "sec/op")
        .unwrap();
    assert_eq!(enc["verdict"], "inconclusive");
    assert!(enc["runs_needed"].as_u64().unwrap() >= 2, "{enc}");
    assert!(
        enc["notes"][0]
            .as_str()
            .unwrap()
            .contains("runs a side detect"),
        "{enc}"
    );
}

#[test]
fn wrong_kinds_and_impossible_values_are_refused_from_the_first_bytes() {
    let d = tempfile::tempdir().unwrap();
    let good = write_numbers(d.path(), "good.txt", 1.0, 10);
    let refuse = |file: &Path, needle: &str| {
        let out = tardy()
            .args(["compare", file.to_str().unwrap(), good.to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    };
    let p = d.path().join("binary.dat");
    std::fs::write(&p, [0u8, 159, 146, 150, 0, 1]).unwrap();
    refuse(&p, "is binary data, not text");
    refuse(&common::data("reports/gtest.xml"), "is a test report");
    let p = d.path().join("neg.json");
    std::fs::write(
        &p,
        r#"{"results": [{"command": "x", "mean": 1, "times": [0.5, -0.2, 0.4]}]}"#,
    )
    .unwrap();
    refuse(&p, "negative time");
    let p = d.path().join("neg.txt");
    std::fs::write(&p, "BenchmarkX-8  100  -12 ns/op\n").unwrap();
    refuse(&p, "negative ns/op");
    // A byte-order mark is read past.
    let p = d.path().join("bom.json");
    std::fs::write(
        &p,
        "\u{feff}{\"results\": [{\"command\": \"x\", \"mean\": 1, \"times\": [0.5, 0.6, 0.4]}]}",
    )
    .unwrap();
    compare_out(&[p.to_str().unwrap(), p.to_str().unwrap()], &[]);
}

#[test]
fn results_files_known_from_their_first_key_read_the_same_typed() {
    // tardy and hyperfine files are read typed, straight from the file; what they
    // give equals the general reader's (stdin takes the general path), and a file
    // that does not parse typed still gets the general reader's error.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("h.json");
    std::fs::write(
        &p,
        r#"{"results": [{"command": "a", "mean": 1, "times": [0.5, 0.6, 0.4, 0.55], "exit_codes": [0, 0, 1, 0]},
                        {"command": "b", "mean": 1, "times": [0.7, 0.8, 0.75, 0.72], "exit_codes": [0, 0, 0, 0]}]}"#,
    )
    .unwrap();
    let from_file = compare_out(&[p.to_str().unwrap()], &["--format", "json"]);
    let from_stdin = tardy()
        .args(["compare", "-", "--format", "json"])
        .write_stdin(std::fs::read(&p).unwrap())
        .output()
        .unwrap();
    assert!(from_stdin.status.success());
    let strip = |b: &[u8]| {
        let mut v: Value = serde_json::from_slice(b).unwrap();
        v["sides"] = Value::Null;
        v
    };
    assert_eq!(strip(&from_file), strip(&from_stdin.stdout));
    let bad = d.path().join("bad.json");
    std::fs::write(&bad, r#"{"results": [{"command": "a", "times": "oops"}]}"#).unwrap();
    let out = tardy()
        .args(["compare", bad.to_str().unwrap(), p.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("is not a valid hyperfine JSON file"), "{err}");
}

#[test]
fn files_of_differently_named_commands_are_never_paired_by_position() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, cmds: &[(&str, f64)]| {
        let results: Vec<Value> = cmds
            .iter()
            .map(|(c, m)| {
                let times: Vec<f64> = (0..20)
                    .map(|i| m * (1.0 + 0.001 * (i % 7) as f64))
                    .collect();
                serde_json::json!({"command": c, "mean": m, "times": times})
            })
            .collect();
        let path = d.path().join(name);
        std::fs::write(&path, serde_json::json!({ "results": results }).to_string()).unwrap();
        path.to_str().unwrap().to_string()
    };
    let base = write(
        "base.json",
        &[("./old/app --fast", 1.0), ("./old/app --full", 2.0)],
    );
    let new = write(
        "new.json",
        &[("./new/app --fast", 1.1), ("./new/app --full", 2.2)],
    );
    let three = write("three.json", &[("x", 1.0), ("y", 2.0), ("z", 3.0)]);
    // Two sets of names that share none are refused, whatever their
    // counts: both sides' names, and what to do (benchstat compares
    // nothing there either; pairing by position once compared
    // `FloatSub/100-4` with `Encode/format=json-48`).
    for other in [&new, &three] {
        let out = tardy().args(["compare", &base, other]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("holds './old/app --fast', './old/app --full'")
                && err.contains("-n/--name"),
            "{err}"
        );
    }
    let out = tardy().args(["compare", &base, &three]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds 'x', 'y', 'z'"));
}

/// Go files whose configuration differs in a key other than the machine's
/// are not compared across it, as benchstat does (benchstat a.txt b.txt on
/// these files prints two tables, one per `note:`; `benchstat -ignore note`
/// one comparison: "A-2 10.50n 12.50n ~ (p=0.100 n=3)").
#[test]
fn go_files_differing_in_a_label_are_compared_only_when_told() {
    let d = tempfile::tempdir().unwrap();
    let file = |name: &str, extra: &str, values: [f64; 3]| {
        let mut t = format!("goos: linux\ngoarch: amd64\npkg: x\n{extra}");
        for v in values {
            t.push_str(&format!("BenchmarkA-2 100 {v} ns/op\n"));
        }
        let p = d.path().join(name);
        std::fs::write(&p, t).unwrap();
        p.to_string_lossy().to_string()
    };
    let a = file(
        "a.txt",
        "note: before\ntoolchain: go1.26\n",
        [10.0, 11.0, 10.5],
    );
    let b = file(
        "b.txt",
        "note: after\ntoolchain: go1.26\n",
        [12.0, 13.0, 12.5],
    );
    let out = tardy().args(["compare", &a, &b]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`note:`") && err.contains("before") && err.contains("--ignore note"),
        "{err}"
    );
    // A key one side does not state differs too.
    let c = file("c.txt", "toolchain: go1.26\n", [12.0, 13.0, 12.5]);
    let out = tardy()
        .args(["compare", &a, &c, "--ignore", "toolchain"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Told to ignore it: one comparison, benchstat's p.
    let v = json(&[&a, &b, "--ignore", "note"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert!(
        (rows[0]["p_value"].as_f64().unwrap() - 0.1).abs() < 1e-9,
        "{v}"
    );
    // Keys that agree, and the machine's keys, never stop a comparison.
    let e = file(
        "e.txt",
        "note: before\ntoolchain: go1.26\n",
        [12.0, 13.0, 12.5],
    );
    assert_eq!(json(&[&a, &e])["rows"].as_array().unwrap().len(), 1);
}

/// One file of benchmarks is summarised per benchmark and unit, never
/// compared across benchmarks: `benchstat go-two-packages-old.txt` prints
/// "Encode-2 82.33n ± 46%", "Decode-2 200.0n ± 30%" for package a.
#[test]
fn one_file_of_benchmarks_is_summarised_not_compared_across_benchmarks() {
    let v = json(&[&bench("go-two-packages-old.txt")]);
    assert_eq!(v["rows"].as_array().unwrap().len(), 0, "{v}");
    let s = v["summaries"].as_array().unwrap();
    assert_eq!(s.len(), 12, "two packages, two benchmarks, three units");
    let encode = s
        .iter()
        .find(|x| {
            x["name"] == "Encode-2"
                && x["unit"] == "sec/op"
                && x["group"] == "pkg=example.com/bench/a"
        })
        .unwrap();
    assert!(
        (encode["summary"]["median"].as_f64().unwrap() - 82.33e-9).abs() < 0.01e-9,
        "{encode}"
    );
    let text = compare_text(&[&bench("go-two-packages-old.txt")]);
    assert!(
        text.contains("± 46.2%") && text.contains("none compared"),
        "{text}"
    );
    assert!(
        !text.contains("slower") && !text.contains("faster"),
        "{text}"
    );
    // Commands in one file (hyperfine) are still compared with each other.
    let h = json(&[data("hyperfine.json").to_str().unwrap()]);
    assert!(!h["rows"].as_array().unwrap().is_empty(), "{h}");
}

/// benchstat's smaller rules: zero baselines named row by row, an exact
/// unit with one value a side has a ratio and no p-value, and heavily tied
/// rows whose interval is exactly [1, 1] are the same.
#[test]
fn zero_baselines_exact_units_and_tied_rows() {
    let d = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().to_string()
    };
    // Four rows with a zero baseline: four warnings, each naming its row.
    let go = |bop: u32, sec: f64| {
        let mut t = String::from("pkg: x\n");
        for name in ["A", "B", "C", "D"] {
            for k in 0..6 {
                t.push_str(&format!(
                    "Benchmark{name}-2 100 {} ns/op {bop} B/op\n",
                    sec + k as f64 * 0.1
                ));
            }
        }
        t
    };
    let (a, b) = (write("a.txt", go(0, 10.0)), write("b.txt", go(8, 10.0)));
    let v = json(&[&a, &b]);
    let w: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for name in ["'A-2'", "'B-2'", "'C-2'", "'D-2'"] {
        assert_eq!(
            w.iter().filter(|x| x.contains(name)).count(),
            1,
            "{name}: {w:?}"
        );
    }
    // assume=exact, one value a side: the ratio, no p-value.
    let exact = |v: f64| format!("Unit B/op assume=exact\npkg: x\nBenchmarkE-2 1 {v} B/op\n");
    let (a, b) = (
        write("ea.txt", exact(1.0)),
        write("eb.txt", exact(1.000000000006)),
    );
    let v = json(&[&a, &b]);
    let row = &v["rows"][0];
    assert!(
        row["p_value"].is_null() && row["p_adjusted"].is_null(),
        "{row}"
    );
    // 6e-12 of a difference: exact, shown, and inside the 1% target.
    assert_eq!(row["verdict"], "same", "{row}");
    assert!(row["ratio"].as_f64().unwrap() > 1.0, "{row}");
    let text = compare_text(&[&a, &b]);
    assert!(
        !text.contains("p<0.0001") && !text.contains("p=0"),
        "{text}"
    );
    // 40 values of 16 against 30 of 16 and 10 of 17: the ranks differ
    // (p = 0.0008) but the shift and its interval are exactly nothing.
    let nums =
        |sixteens: usize, seventeens: usize| "16\n".repeat(sixteens) + &"17\n".repeat(seventeens);
    let (a, b) = (write("ta.txt", nums(40, 0)), write("tb.txt", nums(30, 10)));
    let v = json(&[&a, &b]);
    let row = &v["rows"][0];
    assert_eq!(
        (row["ci_low"].as_f64(), row["ci_high"].as_f64()),
        (Some(1.0), Some(1.0)),
        "{row}"
    );
    assert_eq!(row["verdict"], "same", "{row}");
}

#[test]
fn two_runs_a_side_say_no_rank_test_can_decide() {
    // 2+2 values: the U test's smallest two-sided p is 2/6 = 0.33, so no
    // difference, however large, can be proven at 95%. Said so, with the runs
    // it takes, instead of a detectable size.
    let d = tempfile::tempdir().unwrap();
    let a = write_numbers(d.path(), "a.txt", 10.0, 2);
    let b = write_numbers(d.path(), "b.txt", 20.0, 2);
    let out = tardy()
        .args(["compare", "--no-plot"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("with 2+2 runs the rank test can never reach 95%")
            && text.contains("take at least 4 runs per side"),
        "{text}"
    );
    assert!(!text.contains("detect only changes over"), "{text}");
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(r["rows"][0]["estimate"]["runs_for_any_verdict"], 4, "{r}");
    assert!(r["rows"][0]["min_detectable_effect"].is_null(), "{r}");
    // 4+4 can: no such remark.
    let a = write_numbers(d.path(), "a4.txt", 10.0, 4);
    let b = write_numbers(d.path(), "b4.txt", 20.0, 4);
    let r = json(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        r["rows"][0]["estimate"]["runs_for_any_verdict"].is_null(),
        "{r}"
    );
    assert_eq!(r["rows"][0]["verdict"], "slower");
}

#[test]
fn benchstat_command_lines_work_with_tardy_compare_in_front() {
    // Known answers from benchstat (tests/data/compare/README.md):
    //   benchstat -col /impl sub-new.txt
    //     Sum/size=1000-2 +158.87% (p=0.002 n=6), Sum/size=4000-2 +106.58% (p=0.002 n=6)
    //   benchstat -filter '/impl:slow -/size:4000' -alpha 0.01 old=sub-old.txt new=sub-new.txt
    //     Sum/size=1000/impl=slow-2 +33.19% (p=0.004 n=6)
    let data = |f: &str| format!("{}/tests/data/compare/{f}", env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        let out = tardy().arg("compare").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let r = run(&[
        "-col",
        "/impl",
        &data("sub-new.txt"),
        "-format",
        "json",
        "--correction",
        "none",
    ]);
    assert_eq!(r["sides"], serde_json::json!(["fast", "slow"]), "{r}");
    let rows = r["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Sum/size=1000-2", "Sum/size=4000-2"]);
    for row in rows {
        assert_eq!(row["verdict"], "slower");
        assert!(
            (row["p_value"].as_f64().unwrap() - 0.002).abs() < 0.0006,
            "{row}"
        );
    }
    let r = run(&[
        "-filter",
        "/impl:slow -/size:4000",
        "-alpha",
        "0.01",
        &format!("old={}", data("sub-old.txt")),
        &format!("new={}", data("sub-new.txt")),
        "-format=json",
    ]);
    assert_eq!(r["sides"], serde_json::json!(["old", "new"]), "{r}");
    assert_eq!(r["confidence"], 0.99);
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{r}");
    assert_eq!(rows[0]["name"], "Sum/size=1000/impl=slow-2");
    assert!((rows[0]["p_value"].as_f64().unwrap() - 0.004).abs() < 0.0006);
    // A query that cannot be read says where; one that keeps nothing says so.
    for (q, said) in [
        ("/size:(1000", "character 12"),
        (".name:Nothing", "keeps no benchmark"),
    ] {
        let out = tardy()
            .args([
                "compare",
                "--filter",
                q,
                &data("sub-old.txt"),
                &data("sub-new.txt"),
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(said) && err.lines().count() == 1, "{q}: {err}");
    }
}

/// Each harness's rows: name -> (mean of the values read, verdict).
fn harness_rows(before: &str, after: &str) -> Vec<(String, String, f64, String)> {
    let r = json(&[&bench(before), &bench(after)]);
    r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["unit"].as_str().unwrap().to_string(),
                x["baseline_summary"]["mean"].as_f64().unwrap(),
                x["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-300)
}

#[test]
fn jmh_google_benchmark_and_benchmarkdotnet_read_every_sample() {
    // JMH: every fork's iterations; the mean is JMH's own score, in
    // benchstat's units (ns/op -> sec/op, ops/ms -> ops/s).
    let jmh: Value =
        serde_json::from_str(&std::fs::read_to_string(bench("jmh-before.json")).unwrap()).unwrap();
    let rows = harness_rows("jmh-before.json", "jmh-after.json");
    for b in jmh.as_array().unwrap() {
        let name = format!(
            "{}/n={}",
            b["benchmark"].as_str().unwrap(),
            b["params"]["n"].as_str().unwrap()
        );
        let score = b["primaryMetric"]["score"].as_f64().unwrap();
        let row = rows.iter().find(|r| r.0 == name).unwrap();
        let want = match row.1.as_str() {
            "sec/op" => score * 1e-9,
            "ops/s" => score * 1e3,
            u => panic!("unit {u}"),
        };
        assert!(close(row.2, want), "{name}: {} vs JMH {want}", row.2);
    }
    // The after file's sum does three times the work: slower, surely.
    for n in ["10", "100"] {
        let row = rows
            .iter()
            .find(|r| r.0 == format!("bench.Calc.sum/n={n}"))
            .unwrap();
        assert_eq!(row.3, "slower", "{row:?}");
    }
    // Google Benchmark: the repetitions are the samples; their mean is the
    // file's own `_mean` aggregate.
    let gb: Value = serde_json::from_str(
        &std::fs::read_to_string(bench("google-benchmark-before.json")).unwrap(),
    )
    .unwrap();
    let rows = harness_rows(
        "google-benchmark-before.json",
        "google-benchmark-after.json",
    );
    for agg in gb["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["aggregate_name"] == "mean")
    {
        let name = agg["run_name"].as_str().unwrap();
        let row = rows
            .iter()
            .find(|r| r.0 == name && r.1 == "sec/op")
            .unwrap();
        assert!(
            close(row.2, agg["real_time"].as_f64().unwrap() * 1e-9),
            "{name}: {} vs {}",
            row.2,
            agg["real_time"]
        );
        assert!(rows.iter().any(|r| r.0 == name && r.1 == "cpu-sec/op"));
    }
    // BenchmarkDotNet: the Workload/Result measurements per operation; their
    // mean is Statistics.Mean; Concat is 25% slower.
    let bdn: Value = serde_json::from_str(
        &std::fs::read_to_string(bench("benchmarkdotnet-before.json")).unwrap(),
    )
    .unwrap();
    let rows = harness_rows("benchmarkdotnet-before.json", "benchmarkdotnet-after.json");
    for b in bdn["Benchmarks"].as_array().unwrap() {
        let mut name = b["FullName"]
            .as_str()
            .unwrap()
            .split('(')
            .next()
            .unwrap()
            .to_string();
        if let Some(p) = b["Parameters"].as_str().filter(|p| !p.is_empty()) {
            name = format!("{name}/{p}");
        }
        let row = rows
            .iter()
            .find(|r| r.0 == name && r.1 == "sec/op")
            .unwrap();
        let mean = b["Statistics"]["Mean"].as_f64().unwrap() * 1e-9;
        assert!(close(row.2, mean), "{name}: {} vs {mean}", row.2);
        let want = if name.ends_with("Concat") {
            "slower"
        } else {
            "inconclusive"
        };
        assert!(
            row.3 == want || (want == "inconclusive" && row.3 != "slower" && row.3 != "faster"),
            "{name}: {row:?}"
        );
    }
}

/// One row of a harness pair: (centre of the baseline, ratio, verdict,
/// test, n of the baseline), by name and unit.
fn harness_row(r: &Value, name: &str, unit: &str) -> (f64, f64, String, String, u64) {
    let row = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name && x["unit"] == unit)
        .unwrap_or_else(|| panic!("no row {name} ({unit}) in {r:#}"));
    (
        row["center"][0].as_f64().unwrap(),
        row["ratio"].as_f64().unwrap(),
        row["verdict"].as_str().unwrap().to_string(),
        row["test"].as_str().unwrap().to_string(),
        row["n"][0].as_u64().unwrap(),
    )
}

fn harness_pair(p: &str, ext: &str) -> Value {
    json(&[
        &bench(&format!("harnesses/{p}-before.{ext}")),
        &bench(&format!("harnesses/{p}-after.{ext}")),
    ])
}

fn file_json(p: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(bench(&format!("harnesses/{p}"))).unwrap())
        .unwrap()
}

/// Harnesses that keep every sample: the mean of the values read is the
/// harness's own; the work made 3-4x slower is `slower`.
#[test]
fn harnesses_that_keep_samples_are_read_sample_by_sample() {
    // tinybench (retainSamples): its latency mean, in ms.
    let r = harness_pair("tinybench", "json");
    let tb = file_json("tinybench-before.json");
    let row = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "roundtrip")
        .unwrap();
    let own = tb[0]["result"]["latency"]["mean"].as_f64().unwrap() * 1e-3;
    let mean = row["baseline_summary"]["mean"].as_f64().unwrap();
    assert!(close_to(mean, own, 1e-9), "{mean} vs tinybench {own}");
    assert_eq!(
        row["n"][0].as_u64(),
        tb[0]["result"]["latency"]["samplesCount"].as_u64()
    );
    assert_eq!(row["verdict"], "slower");
    // asv --record-samples: every sample; asv's result is their median.
    let r = harness_pair("asv", "json");
    let asv = file_json("asv-before.json");
    let (c, _, v, _, n) = harness_row(&r, "bench_calc.time_sum", "sec/op");
    let own = asv["results"]["bench_calc.time_sum"][0][0]
        .as_f64()
        .unwrap();
    assert!(close_to(c, own, 1e-9), "{c} vs asv {own}");
    assert_eq!((v.as_str(), n), ("slower", 10));
    let (c, _, v, _, _) = harness_row(&r, "bench_calc.TimeJoin.time_join(100)", "sec/op");
    let own = asv["results"]["bench_calc.TimeJoin.time_join"][0][1]
        .as_f64()
        .unwrap();
    assert!(close_to(c, own, 1e-9), "{c} vs asv {own}");
    assert_ne!(v, "slower");
    // BenchmarkTools: every Trial's times; allocations exact.
    let r = harness_pair("julia", "json");
    let (_, ratio, v, _, n) = harness_row(&r, "calc/sum", "sec/op");
    assert_eq!((v.as_str(), n), ("slower", 200));
    assert!(ratio > 2.5, "{ratio}");
    let (_, _, v, t, _) = harness_row(&r, "calc/join/100", "B/op");
    assert_eq!(v, "same");
    assert!(t.starts_with("none (exact"), "{t}");
    // iai-callgrind: Callgrind's counts are exact, this run's (not the
    // previous run's beside it).
    let r = harness_pair("iai", "txt");
    let (c, ratio, v, t, _) = harness_row(&r, "calc::calc::sum short:100", "instructions");
    assert_eq!((c, v.as_str()), (1415.0, "slower"));
    assert!(close_to(ratio, 5611.0 / 1415.0, 1e-12));
    assert!(t.starts_with("none (exact"), "{t}");
    let (_, _, v, _, _) = harness_row(&r, "calc::calc::concat", "estimated-cycles");
    assert_eq!(v, "same");
}

fn close_to(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// Harnesses that keep a mean, an sd and n: Welch's t from those, the
/// centre the harness's own; those that keep no spread: the ratio, no
/// verdict, never in the family of the tested rows.
#[test]
fn harnesses_that_keep_summaries_are_compared_from_them_honestly() {
    // Catch2 XML: mean and sd of 100 samples, in ns.
    let r = harness_pair("catch2", "xml");
    let (c, ratio, v, t, n) = harness_row(&r, "calc/sum 1000", "sec/op");
    assert!(close_to(c, 944.867e-9, 1e-9), "{c}");
    assert_eq!((v.as_str(), n), ("slower", 100));
    assert!(t.starts_with("welch-t (from"), "{t}");
    assert!(ratio > 3.0);
    // vitest bench --outputJson: mean, sd and sampleCount, in ms.
    let r = harness_pair("vitest", "json");
    let vb = file_json("vitest-before.json");
    let b = &vb["files"][0]["groups"][0]["benchmarks"][0];
    let (c, _, v, _, n) = harness_row(&r, "json.bench.js > json > roundtrip", "sec/op");
    assert!(close_to(c, b["mean"].as_f64().unwrap() * 1e-3, 1e-12));
    assert_eq!(Some(n), b["sampleCount"].as_u64());
    assert_eq!(v, "slower");
    // Benchmark.js: the mean time of a run is 1 / hz.
    let r = harness_pair("benchmarkjs", "txt");
    let line = std::fs::read_to_string(bench("harnesses/benchmarkjs-before.txt")).unwrap();
    let hz: f64 = line
        .lines()
        .next()
        .unwrap()
        .split(" x ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    let (c, _, v, _, _) = harness_row(&r, "roundtrip", "sec/op");
    assert!(close_to(c, 1.0 / hz, 1e-12), "{c} vs {}", 1.0 / hz);
    assert_eq!(v, "slower");
    // benchmark-ips: its rate, higher is better: a quarter the rate is worse.
    let r = harness_pair("ips", "json");
    let ips = file_json("ips-before.json");
    let (c, ratio, v, _, n) = harness_row(&r, "sum", "ops/s");
    assert!(close_to(c, ips[0]["ips"].as_f64().unwrap(), 1e-12));
    assert_eq!(n, 12, "iterations / cycles samples");
    assert_eq!(v, "slower");
    assert!(ratio < 0.3);
    // libtest, divan, Bencher Metric Format, an asv file without samples:
    // the ratio of the centres, no test, no verdict.
    for (p, ext, name, want) in [
        ("libtest", "txt", "benches::bench_sum", 4046.41 / 1019.11),
        ("divan", "txt", "calc/sum/1000", 4.117 / 1.063),
        ("bencher", "json", "calc::sum", 3.0),
    ] {
        let r = harness_pair(p, ext);
        let (_, ratio, v, t, _) = harness_row(&r, name, "sec/op");
        assert!(close_to(ratio, want, 1e-9), "{p}: {ratio} vs {want}");
        assert_eq!(v, "inconclusive", "{p}");
        assert!(t.starts_with("none (summaries"), "{p}: {t}");
        assert_eq!(r["family"], 0, "{p}: untested rows are no family");
        let text = compare_text(&[
            &bench(&format!("harnesses/{p}-before.{ext}")),
            &bench(&format!("harnesses/{p}-after.{ext}")),
        ]);
        assert!(
            text.contains("no test") && text.contains("no verdict"),
            "{text}"
        );
    }
    let r = json(&[
        &bench("harnesses/asv-nosamples.json"),
        &bench("harnesses/asv-after.json"),
    ]);
    let (_, ratio, v, _, _) = harness_row(&r, "bench_calc.time_sum", "sec/op");
    assert!(ratio > 3.0);
    assert_eq!(v, "inconclusive");
    // Several runs' files a side: each file's centre is a sample.
    let f = |s: &str| bench(&format!("harnesses/libtest-{s}.txt"));
    let (b1, b2, b3) = (f("before"), f("before-2"), f("before-3"));
    let (a1, a2, a3) = (f("after"), f("after-2"), f("after-3"));
    let r = json(&[&b1, &b2, &b3, "--vs", &a1, &a2, &a3]);
    let (_, _, _, t, n) = harness_row(&r, "benches::bench_sum", "sec/op");
    assert!(t.starts_with("mann-whitney"), "{t}");
    assert_eq!(n, 3);
}

#[test]
fn a_harness_file_of_the_wrong_shape_is_named() {
    let d = tempfile::tempdir().unwrap();
    let empty_vitest = d.path().join("vitest.json");
    std::fs::write(
        &empty_vitest,
        r#"{"files": [{"filepath": "x", "groups": []}]}"#,
    )
    .unwrap();
    let asv_list = bench("harnesses/asv-benchmarks.json");
    for (file, said) in [
        (asv_list.as_str(), "asv's benchmarks.json"),
        (
            empty_vitest.to_str().unwrap(),
            "tinybench output without a benchmark",
        ),
    ] {
        let out = tardy().args(["compare", file, file]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(said) && err.lines().count() == 1,
            "{file}: {err}"
        );
    }
}

/// benchstat's -row, -col on a key that changes within one file, and its
/// unit names. benchstat (v0.0.0-20260908200009) on the same files:
/// `benchstat -row /size -col /poly go-rows.txt`: 64 +1311.94% (p=0.002
/// n=6), 4096 +12855.24% (p=0.002 n=6), sec/op geomean 29.45n -> 1.259µ;
/// B/s 6020.3Mi -> 429.2Mi, geomean 16.19Gi -> 388.9Mi.
/// `benchstat -col note go-notes.txt`: Encode-2 +32.19% (p=0.008 n=5).
#[test]
fn rows_columns_and_units_as_benchstat_makes_them() {
    let r = json(&[
        "--correction",
        "none",
        "--row",
        "/size",
        "--col",
        "/poly",
        &bench("go-rows.txt"),
    ]);
    let rows = r["rows"].as_array().unwrap();
    let mut seen: Vec<(String, String)> = rows
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["unit"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("4096".into(), "B/s".into()),
            ("4096".into(), "sec/op".into()),
            ("64".into(), "B/s".into()),
            ("64".into(), "sec/op".into())
        ]
    );
    for x in rows {
        assert_eq!(x["baseline"], "IEEE");
        assert_eq!(x["candidate"], "Koopman");
        let p = x["p_value"].as_f64().unwrap();
        assert!((p - 0.002165).abs() < 1e-5, "{p}");
    }
    let b = rows
        .iter()
        .find(|x| x["name"] == "64" && x["unit"] == "B/s")
        .unwrap();
    // MB/s as B/s: benchstat's 6020.3Mi is 6312.7 MB/s.
    let median = b["center"][0].as_f64().unwrap();
    assert!((median / 1024f64.powi(2) - 6020.3).abs() < 0.1, "{median}");
    let text = compare_text(&["--row", "/size", "--col", "/poly", &bench("go-rows.txt")]);
    assert!(
        text.contains("6.020Gi B/s") || text.contains("5.879Gi B/s"),
        "{text}"
    );
    // -filter .unit:B/s keeps the throughput rows only.
    let r = json(&[
        "--filter",
        ".unit:B/s",
        "--col",
        "/poly",
        &bench("go-rows.txt"),
    ]);
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["unit"] == "B/s")
    );
    // -col note where the note changes within the file.
    let r = json(&["--col", "note", &bench("go-notes.txt")]);
    let row = &r["rows"][0];
    assert_eq!(
        (row["baseline"].as_str(), row["candidate"].as_str()),
        (Some("before"), Some("after"))
    );
    assert!((row["p_value"].as_f64().unwrap() - 0.0079).abs() < 1e-4);
    // `assume=exact` whose values vary: compared as exact by the medians,
    // with the range said (benchstat: "exact distribution expected, but
    // values range from 100 to 101").
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("exact.txt");
    std::fs::write(
        &f,
        "Unit text-bytes assume=exact\nnote: before\nBenchmarkSize 1 100 text-bytes\nBenchmarkSize 1 101 text-bytes\nBenchmarkSize 1 101 text-bytes\nnote: after\nBenchmarkSize 1 101 text-bytes\nBenchmarkSize 1 101 text-bytes\nBenchmarkSize 1 101 text-bytes\n",
    )
    .unwrap();
    let r = json(&["--col", "note", f.to_str().unwrap()]);
    let row = &r["rows"][0];
    assert_eq!(row["verdict"], "same");
    assert_eq!(r["family"], 0);
    let notes = row["notes"].to_string();
    assert!(notes.contains("range from 100 to 101"), "{notes}");
    assert!(!notes.contains("never reach"), "{notes}");
}

/// Two Go benchmark files that share no name: the error names a few of
/// each side's benchmarks, not every one (5,000 names made one line of
/// 100 KB).
#[test]
fn files_that_share_no_benchmark_name_a_few_of_each() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, prefix: &str| {
        let text: String = (0..400)
            .flat_map(|i| {
                (0..3).map(move |r| format!("Benchmark{prefix}{i}-8 1000 {} ns/op\n", 100 + r))
            })
            .collect();
        let p = dir.path().join(name);
        std::fs::write(&p, format!("goos: linux\npkg: x\n{text}")).unwrap();
        p
    };
    let (old, new) = (file("old.txt", "Old"), file("new.txt", "New"));
    let out = tardy().arg("compare").arg(&old).arg(&new).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing pairs by name"), "{err}");
    assert!(
        err.contains("'Old0-8'") && err.contains("'New0-8'"),
        "{err}"
    );
    assert!(err.contains("and 395 more"), "{err}");
    assert!(err.len() < 1000, "{} bytes: {err}", err.len());
}
