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

/// Run every shell block of one page (README.md or a chapter of the book),
/// in order, in one scratch directory; returns how many commands and blocks ran.
fn run_page(page: &str) -> usize {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
    let d = scratch();
    let mut ran = 0;
    for b in blocks(&readme) {
        if b.lang == "text" || b.lang == "json" || b.lang == "yaml" || b.lang == "csv" {
            continue;
        }
        assert!(
            ["sh", "console"].contains(&b.lang.as_str()),
            "{page}:{}: fence a shell block as sh (or console), output as text; found '{}'",
            b.line,
            b.lang
        );
        if let Some(why) = &b.skip {
            assert!(!why.is_empty(), "{page}:{}: say why it is not run", b.line);
            eprintln!("{page}:{}: not run: {why}", b.line);
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
                            "{page}:{}: `{cmd}` should fail",
                            b.line
                        );
                        assert!(
                            err.lines().any(|l| l == want.as_str()),
                            "{page}:{}: `{cmd}` should say\n{want}\nbut said\n{err}",
                            b.line
                        );
                    }
                    None => {
                        assert!(
                            out.status.success(),
                            "{page}:{}: `{cmd}` failed ({:?}):\n{err}",
                            b.line,
                            out.status.code()
                        );
                        if b.golden {
                            let got = String::from_utf8_lossy(&out.stdout);
                            let got: Vec<&str> = got.lines().map(str::trim_end).collect();
                            let want: Vec<&str> = output.iter().map(|l| l.trim_end()).collect();
                            assert_eq!(
                                got, want,
                                "{page}:{}: `{cmd}` prints something else than the page shows",
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
                "{page}:{}: the block failed ({:?}):\n{script}\n---\n{}",
                b.line,
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    ran
}

#[test]
fn every_shell_block_in_the_readme_runs_as_written() {
    let ran = run_page("README.md");
    assert!(ran >= 7, "only {ran} commands and blocks ran");
}

/// The book's chapters, one test each (so they run side by side).
macro_rules! chapters {
    ($($name:ident => $file:literal, $least:literal;)*) => {$(
        #[test]
        #[allow(unused_comparisons)]
        fn $name() {
            let ran = run_page(concat!("docs/book/", $file));
            assert!(ran >= $least, "{}: only {ran} commands and blocks ran", $file);
        }
    )*};
}

chapters! {
    book_01_measuring => "01-measuring.md", 3;
    book_02_comparing => "02-comparing.md", 3;
    book_03_test_reports => "03-test-reports.md", 2;
    book_04_ci_and_server => "04-ci-and-server.md", 1;
    book_05_history => "05-history.md", 3;
    book_06_bisect => "06-bisect.md", 1;
    book_07_explain => "07-explain.md", 1;
    book_08_doctor => "08-doctor.md", 1;
    book_09_formats => "09-formats.md", 1;
    book_10_coming_from => "10-coming-from.md", 3;
    book_11_inside => "11-inside.md", 0;
}

#[test]
fn every_chapter_of_the_book_is_tested_and_every_link_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let this = std::fs::read_to_string(root.join("tests/readme.rs")).unwrap();
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs/book")).unwrap() {
        let p = e.unwrap().path();
        // img/: the pages' screenshots (tests/browser.rs takes them), shown
        // by the chapters; their links are checked below with the others.
        if p.is_dir() {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            this.contains(&format!("\"{name}\"")),
            "docs/book/{name} is not run by tests/readme.rs"
        );
        pages.push(p);
    }
    // Relative links ([text](path) and [text](path#anchor)) name files that exist.
    let link = regex::Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").unwrap();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for c in link.captures_iter(&text) {
            let target = &c[1];
            if target.starts_with("http") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = page.parent().unwrap().join(target);
            assert!(
                resolved.exists(),
                "{}: the link to {target} leads nowhere",
                page.display()
            );
        }
    }
    let lines = std::fs::read_to_string(root.join("README.md"))
        .unwrap()
        .lines()
        .count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines: the book takes the detail"
    );
}

#[test]
fn the_readme_points_at_nothing_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    pages.extend(
        std::fs::read_dir(root.join("docs/book"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    );
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            !text.contains("../shared"),
            "{} points outside the repository",
            page.display()
        );
        for (i, l) in text.lines().enumerate() {
            assert!(
                !l.to_ascii_lowercase().contains("seed 00"),
                "{}:{}: name the story, not its seed number",
                page.display(),
                i + 1
            );
        }
    }
}
