//! What every subcommand shares: options are parsed as options (a typo is an error
//! with a suggestion, never the start of the command), shell completions and man pages.

mod common;

use common::tardy;

fn stderr_of(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = tardy(dir).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_typo_before_the_command_is_an_error_with_a_suggestion() {
    let d = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            &["exec", "--timer-slak", "5", "--", "touch", "ran"][..],
            "'--timer-slack'",
        ),
        (
            &[
                "bisect", "--god", "HEAD~1", "--bad", "HEAD", "--", "touch", "ran",
            ][..],
            "'--good'",
        ),
        (&["tests", "show", "--tpo", "5", "x.xml"][..], "'--top'"),
        (
            &["run", "--rusn", "3", "--", "touch", "ran"][..],
            "'--runs'",
        ),
        (&["history", "list", "--jsno"][..], "'--json'"),
    ] {
        let (code, err) = stderr_of(d.path(), args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("a similar argument exists: {want}")),
            "{args:?}: {err}"
        );
    }
    assert!(!d.path().join("ran").exists(), "no command ran");
    // After the first word of the command, everything is the command's.
    succeeds_in(
        d.path(),
        &["exec", "--timer-slack", "50000", "touch", "-c", "ran"],
    );
    succeeds_in(
        d.path(),
        &["exec", "--timer-slack", "50000", "--", "touch", "ran"],
    );
    assert!(d.path().join("ran").exists());
}

#[test]
fn a_command_given_first_is_pointed_to_run_and_a_hyperfine_csv_to_its_json() {
    let d = tempfile::tempdir().unwrap();
    // hyperfine's habit: the command first.
    let (code, err) = stderr_of(d.path(), &["sleep 0.1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("tip: to measure a command, give it to `tardy run`: tardy run 'sleep 0.1'"),
        "{err}"
    );
    // Unquoted, the words after a program are one command, even where clap
    // finds a subcommand near the program's name (`sleep`, `serve`).
    let (code, err) = stderr_of(d.path(), &["sleep", "0.1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("tardy run 'sleep 0.1'"), "{err}");
    // And the tip comes first, without clap's "similar subcommand: serve".
    assert!(!err.contains("serve"), "{err}");
    assert!(err.starts_with("error: 'sleep' is a program"), "{err}");
    // A misspelt subcommand gets clap's suggestion, not the tip.
    let (code, err) = stderr_of(d.path(), &["comapre", "a", "b"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("compare") && !err.contains("tardy run"),
        "{err}"
    );
    // hyperfine's --export-csv holds summaries, not runs.
    let csv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/compare/hyperfine-export.csv"
    );
    let (code, err) = stderr_of(d.path(), &["compare", csv, csv]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("hyperfine's --export-csv") && err.contains("--export-json"),
        "{err}"
    );
}

#[test]
fn a_confidence_is_taken_as_a_percentage_or_a_fraction_everywhere() {
    let d = tempfile::tempdir().unwrap();
    let data = |f: &str| format!("{}/tests/data/compare/{f}", env!("CARGO_MANIFEST_DIR"));
    let compare = |level: &str| {
        let out = tardy(d.path())
            .args([
                "compare",
                &data("old.txt"),
                &data("new.txt"),
                "--format",
                "json",
            ])
            .args(["--confidence", level])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A file compared with itself is said to be.
    let (code, err) = stderr_of(d.path(), &["compare", &data("old.txt"), &data("old.txt")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("are the same file"), "{err}");
    let pct = compare("90");
    assert_eq!(pct, compare("0.90"));
    assert_eq!(pct, compare("90%"));
    assert_ne!(pct, compare("99"));
    // bisect took only 0.95; 95 now passes its options (and stops at git).
    let bisect = |level: &str| {
        stderr_of(
            d.path(),
            &[
                "bisect",
                "--good",
                "a",
                "--bad",
                "b",
                "--confidence",
                level,
                "--",
                "true",
            ],
        )
    };
    for level in ["95", "0.95"] {
        let (code, err) = bisect(level);
        assert_eq!(code, Some(2), "{err}");
        assert!(!err.contains("--confidence"), "{level}: {err}");
    }
    let (_, err) = bisect("30");
    assert!(err.contains("at least 50%"), "{err}");
}

#[test]
fn an_amount_is_taken_as_a_percentage_or_a_fraction_everywhere() {
    // bisect's --threshold took percent, history's --min-magnitude a fraction:
    // both now take 5, 5% and 0.05 alike, as every amount option does.
    let d = tempfile::tempdir().unwrap();
    let data = |f: &str| format!("{}/tests/data/compare/{f}", env!("CARGO_MANIFEST_DIR"));
    let gate = |amount: &str| {
        let out = tardy(d.path())
            .args(["compare", &data("old.txt"), &data("new.txt"), "--no-plot"])
            .args(["--fail-if-slower", amount, "--target-effect", amount])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // Sum-2 is 10% slower: a 20% gate passes, a 0.2% gate fails.
    let twenty = gate("20");
    assert_eq!(twenty.0, Some(0), "{}", twenty.1);
    assert_eq!(twenty, gate("20%"));
    assert_eq!(twenty, gate("0.2"));
    assert_eq!(gate("0.2%").0, Some(1));
    let (code, err) = stderr_of(
        d.path(),
        &[
            "compare",
            &data("old.txt"),
            &data("new.txt"),
            "--fail-if-slower=-3",
        ],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("5, 5% or 0.05"), "{err}");
    for amount in ["2", "2%", "0.02"] {
        succeeds_in(d.path(), &["history", "detect", "--min-magnitude", amount]);
    }
    let (code, err) = stderr_of(d.path(), &["history", "detect", "--min-magnitude", "x"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--min-magnitude"), "{err}");
}

fn succeeds_in(dir: &std::path::Path, args: &[&str]) {
    let out = tardy(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn bash_completion_completes_subcommands_and_options() {
    let d = tempfile::tempdir().unwrap();
    let out = tardy(d.path())
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(out.status.success());
    std::fs::write(d.path().join("tardy.bash"), &out.stdout).unwrap();
    // Ask bash for completions as the shell would on <TAB> (the function gets the
    // command, the word and the word before it).
    let script = "source ./tardy.bash\n\
        COMP_WORDS=(tardy ex); COMP_CWORD=1; _tardy tardy ex tardy; echo \"${COMPREPLY[@]}\"\n\
        COMP_WORDS=(tardy doctor --fa); COMP_CWORD=2; _tardy tardy --fa doctor; echo \"${COMPREPLY[@]}\"\n";
    let out = std::process::Command::new("bash")
        .current_dir(d.path())
        .args(["-c", script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(lines[0].split(' ').any(|w| w == "explain"), "{text}");
    assert!(lines[0].split(' ').any(|w| w == "exec"), "{text}");
    assert_eq!(lines[1], "--fail-on", "{text}");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let out = tardy(d.path())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success() && out.stdout.len() > 1000, "{shell}");
    }
    let (code, _) = stderr_of(d.path(), &["completions", "tcsh"]);
    assert_eq!(code, Some(2));
}

#[test]
fn man_pages_for_tardy_and_every_subcommand() {
    let d = tempfile::tempdir().unwrap();
    succeeds_in(d.path(), &["man", "--dir", "man"]);
    let dir = d.path().join("man");
    for page in [
        "tardy.1",
        "tardy-run.1",
        "tardy-compare.1",
        "tardy-history-import.1",
        "tardy-explain.1",
    ] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page}");
    }
    let run = std::fs::read_to_string(dir.join("tardy-run.1")).unwrap();
    assert!(run.contains("\\-\\-runs") && run.contains("\\-\\-export\\-json"));
    // man renders it, where man is installed.
    if let Ok(out) = std::process::Command::new("man")
        .args(["-l", dir.join("tardy-run.1").to_str().unwrap()])
        .env("MANWIDTH", "80")
        .output()
    {
        if out.status.success() {
            assert!(String::from_utf8_lossy(&out.stdout).contains("tardy-run"));
        } else {
            eprintln!("SKIPPED rendering: man failed here");
        }
    } else {
        eprintln!("SKIPPED rendering: man is not installed");
    }
}

/// Every subcommand's `--help` (nested ones too) ends with examples, and
/// each example's flags are flags of that subcommand (run with `--help`
/// appended, which parses them and prints the help).
#[test]
fn every_subcommand_teaches_with_examples_that_parse() {
    fn help(path: &[String]) -> String {
        let out = tardy_cmd().args(path).arg("--help").output().unwrap();
        assert!(out.status.success(), "{path:?} --help failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn subcommands(text: &str) -> Vec<String> {
        let Some(at) = text.find("Commands:") else {
            return Vec::new();
        };
        text[at..]
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  ") || l.is_empty())
            // A command's own line: two spaces, then its name (wrapped
            // descriptions are indented further).
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|c| c != "help")
            .collect()
    }
    /// Shell words of an example (single quotes kept together), up to a
    /// redirection or a trailing note in parentheses.
    fn words(line: &str) -> Vec<String> {
        let line = line.split("   (").next().unwrap_or(line);
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                ' ' if !quoted => {
                    if !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                }
                _ => cur.push(c),
            }
        }
        if !cur.is_empty() {
            out.push(cur);
        }
        out.into_iter()
            .take_while(|w| w != ">" && w != "|" && w != "&&" && !w.starts_with('#'))
            .collect()
    }
    let mut queue: Vec<Vec<String>> = subcommands(&help(&[]))
        .into_iter()
        .map(|c| vec![c])
        .collect();
    let mut checked = 0;
    let mut problems = Vec::new();
    while let Some(path) = queue.pop() {
        if path[0] == "ministat" {
            continue; // ministat's own getopt arguments, not clap's
        }
        let text = help(&path);
        let subs = subcommands(&text);
        for s in &subs {
            let mut p = path.clone();
            p.push(s.clone());
            queue.push(p);
        }
        if !subs.is_empty() {
            continue;
        }
        let Some(at) = text.find("Examples:") else {
            problems.push(format!("tardy {} --help has no examples", path.join(" ")));
            continue;
        };
        for line in text[at..].lines().skip(1).map(str::trim) {
            let Some(rest) = line.strip_prefix("tardy ") else {
                continue;
            };
            if rest.contains("--ministat") {
                continue;
            }
            let mut w = words(rest);
            // `--help` before any `--` (after it, it is the measured
            // command's argument, and the example would run).
            let at = w.iter().position(|x| x == "--").unwrap_or(w.len());
            w.insert(at, "--help".into());
            w.truncate(at + 1);
            let out = tardy_cmd().args(&w).output().unwrap();
            if !out.status.success() {
                problems.push(format!(
                    "tardy {}: example `{line}` does not parse: {}",
                    path.join(" "),
                    String::from_utf8_lossy(&out.stderr)
                        .lines()
                        .next()
                        .unwrap_or("")
                ));
            }
            checked += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked > 40, "{checked} examples checked");
}

fn tardy_cmd() -> std::process::Command {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("tardy"))
}
