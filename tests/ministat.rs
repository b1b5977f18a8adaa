//! `tardy compare --ministat` against the real ministat: the committed golden
//! outputs (tests/data/ministat/golden, made by make_golden.sh with Debian's
//! ministat 20150715), and a differential run on random inputs when ministat
//! is installed.

use std::path::Path;
use std::process::{Command, Stdio};

fn data_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ministat"))
}

#[test]
fn golden_outputs_are_byte_identical() {
    let dir = data_dir();
    let mut checked = 0;
    let mut ids: Vec<_> = std::fs::read_dir(dir.join("golden"))
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".cmd")
                .map(String::from)
        })
        .collect();
    ids.sort();
    for id in ids {
        let read =
            |ext: &str| std::fs::read(dir.join("golden").join(format!("{id}.{ext}"))).unwrap();
        let cmd = String::from_utf8(read("cmd")).unwrap();
        let args: Vec<&str> = cmd.trim_end().split(' ').skip(1).collect();
        // Alternate the two spellings of the mode.
        let mut c = Command::new(assert_cmd::cargo::cargo_bin("tardy"));
        if checked % 2 == 0 {
            c.args(["compare", "--ministat"]);
        } else {
            c.arg("ministat");
        }
        let out = c
            .args(&args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let code: i32 = String::from_utf8(read("code"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&read("out")),
            "stdout of {cmd}"
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&read("err")),
            "stderr of {cmd}"
        );
        assert_eq!(out.status.code(), Some(code), "exit code of {cmd}");
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} golden cases");
}

#[test]
fn stdin_is_read_when_no_file_is_given() {
    let dir = data_dir();
    let iguana = std::fs::read(dir.join("iguana")).unwrap();
    let out = assert_cmd::Command::cargo_bin("tardy")
        .unwrap()
        .args(["ministat", "-n"])
        .write_stdin(iguana)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "x <stdin>\n    N           Min           Max        Median           Avg        Stddev\n\
x   7            50           750           200           300     238.04761\n"
    );
}

#[test]
fn where_ministat_crashes_tardy_explains() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "1\n2\ninf\n").unwrap();
    let out = assert_cmd::Command::cargo_bin("tardy")
        .unwrap()
        .args(["ministat", "f"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inf or nan"));
    let out = assert_cmd::Command::cargo_bin("tardy")
        .unwrap()
        .args(["ministat", "-w", "1", "iguana"])
        .current_dir(data_dir())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn differential_against_real_ministat() {
    if Command::new("ministat")
        .arg("-n")
        .arg("/dev/null")
        .output()
        .is_err()
    {
        println!(
            "SKIPPED: ministat is not installed (apt-get install ministat); golden tests still ran"
        );
        return;
    }
    let out = Command::new("python3")
        .arg(data_dir().join("differential.py"))
        .arg(assert_cmd::cargo::cargo_bin("tardy"))
        .args(["300", "11"])
        .output();
    match out {
        Err(e) => println!("SKIPPED: python3 is not available ({e})"),
        Ok(out) => assert!(
            out.status.success(),
            "differential run found differences:\n{}",
            String::from_utf8_lossy(&out.stdout)
        ),
    }
}

#[test]
fn ministat_is_listed_and_has_a_help_text() {
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("tardy")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, top) = run(&["--help"]);
    assert_eq!(code, Some(0));
    assert!(top.contains("ministat"), "{top}");
    for args in [
        &["help", "ministat"][..],
        &["ministat", "--help"],
        &["compare", "--ministat", "--help"],
    ] {
        let (code, help) = run(args);
        assert_eq!(code, Some(0), "{args:?}");
        assert!(
            help.contains("Options (ministat's own)") && help.contains("-c CONFIDENCE"),
            "{args:?}: {help}"
        );
    }
    let (_, compare) = run(&["compare", "--help"]);
    assert!(compare.contains("--ministat"), "{compare}");
    // --ministat elsewhere than first is a clear error, not a silent compare.
    let out = assert_cmd::Command::cargo_bin("tardy")
        .unwrap()
        .args(["compare", "a.txt", "b.txt", "--ministat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--ministat must come first"));
}
