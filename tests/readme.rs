//! README.md's examples run as written, in order, from a fresh clone: every shell
//! block is taken out of the README and run with this build's `tardy` first on PATH,
//! in a scratch directory holding the repository's `examples/` (where the example data
//! lives). A block the test cannot run says why, in the README itself, on the line
//! before it: `<!-- readme-test: not run: REASON -->` (a server that serves forever,
//! the set-up command that builds tardy). Output blocks are fenced as `text`.
//!
//! In a block of `$ command` lines, each command runs on its own, and when the output
//! shown under it is a `tardy: error:` line, the command must fail with that line.
//! A block marked `<!-- readme-test: golden -->` (deterministic output) must print
//! exactly what it shows, so the page cannot drift from the program.
//! Any other shell block runs whole, as one script, and must succeed.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

struct Block {
    line: usize,
    lang: String,
    body: Vec<String>,
    skip: Option<String>,
    golden: bool,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    let mut last_text = String::new();
    for (i, line) in readme.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("```") {
            match current.take() {
                Some(b) => out.push(b),
                None => {
                    let skip = last_text
                        .trim()
                        .strip_prefix("<!-- readme-test: not run:")
                        .and_then(|r| r.strip_suffix("-->"))
                        .map(|r| r.trim().to_string());
                    current = Some(Block {
                        line: i + 1,
                        lang: rest.trim().to_string(),
                        body: Vec::new(),
                        skip,
                        golden: last_text.trim() == "<!-- readme-test: golden -->",
                    });
                }
            }
            continue;
        }
        match &mut current {
            Some(b) => b.body.push(line.to_string()),
            None if !line.trim().is_empty() => last_text = line.to_string(),
            None => {}
        }
    }
    out
}

fn scratch() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::os::unix::fs::symlink(repo.join("examples"), d.path().join("examples")).unwrap();
    d
}

fn shell(dir: &Path, script: &str) -> std::process::Output {
    let bin: PathBuf = assert_cmd::cargo::cargo_bin("tardy");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("timeout")
        .args(["300", "bash", "-e", "-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("NO_COLOR", "1")
        // Golden outputs are drawn for a 100-column terminal.
        .env("COLUMNS", "100")
        .env_remove("TARDY_DB")
        // The scratch directory is no git repository, whatever holds it.
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .output()
        .unwrap()
}

#[test]
fn every_shell_block_in_the_readme_runs_as_written() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let d = scratch();
    let mut ran = 0;
    for b in blocks(&readme) {
        if b.lang == "text" || b.lang == "json" || b.lang == "yaml" || b.lang == "csv" {
            continue;
        }
        assert!(
            ["sh", "console"].contains(&b.lang.as_str()),
            "README.md:{}: fence a shell block as sh (or console), output as text; found '{}'",
            b.line,
            b.lang
        );
        if let Some(why) = &b.skip {
            assert!(
                !why.is_empty(),
                "README.md:{}: say why it is not run",
                b.line
            );
            eprintln!("README.md:{}: not run: {why}", b.line);
            continue;
        }
        let transcript = b.body.iter().any(|l| l.starts_with("$ "));
        if transcript {
            let mut i = 0;
            while i < b.body.len() {
                let Some(cmd) = b.body[i].strip_prefix("$ ") else {
                    i += 1;
                    continue;
                };
                let output: Vec<&String> = b.body[i + 1..]
                    .iter()
                    .take_while(|l| !l.starts_with("$ "))
                    .collect();
                let out = shell(d.path(), cmd);
                let err = String::from_utf8_lossy(&out.stderr);
                match output.first().filter(|l| l.starts_with("tardy: error:")) {
                    Some(want) => {
                        assert!(
                            !out.status.success(),
                            "README.md:{}: `{cmd}` should fail",
                            b.line
                        );
                        assert!(
                            err.lines().any(|l| l == want.as_str()),
                            "README.md:{}: `{cmd}` should say\n{want}\nbut said\n{err}",
                            b.line
                        );
                    }
                    None => {
                        assert!(
                            out.status.success(),
                            "README.md:{}: `{cmd}` failed ({:?}):\n{err}",
                            b.line,
                            out.status.code()
                        );
                        if b.golden {
                            let got = String::from_utf8_lossy(&out.stdout);
                            let got: Vec<&str> = got.lines().map(str::trim_end).collect();
                            let want: Vec<&str> = output.iter().map(|l| l.trim_end()).collect();
                            assert_eq!(
                                got, want,
                                "README.md:{}: `{cmd}` prints something else than the README shows",
                                b.line
                            );
                        }
                    }
                }
                ran += 1;
                i += 1;
            }
        } else {
            let script = b.body.join("\n");
            let out = shell(d.path(), &script);
            assert!(
                out.status.success(),
                "README.md:{}: the block failed ({:?}):\n{script}\n---\n{}",
                b.line,
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 20, "only {ran} commands and blocks ran");
}

#[test]
fn the_readme_points_at_nothing_outside_the_repository() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        !readme.contains("../shared"),
        "README.md points outside the repository"
    );
    for (i, l) in readme.lines().enumerate() {
        assert!(
            !l.to_ascii_lowercase().contains("seed 00"),
            "README.md:{}: name the story, not its seed number",
            i + 1
        );
    }
}
