//! The web pages in a real browser: `tardy serve` on a temporary database
//! with uploaded data, each page loaded by headless Chromium, its DOM
//! checked (content and chart elements) and a screenshot saved under
//! target/screenshots/ (kept by CI as artifacts). A chart-less blank page
//! is screenshotted too: each page's image must hold more than it.
//! Skipped with a printed reason when Chromium is absent (`.ci/run`
//! installs it and sets TARDY_REQUIRE_BROWSER=1, which turns the skip into
//! a failure).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Server, junit, post, tardy, tokens};

fn chromium() -> Option<PathBuf> {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(c);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn headless(browser: &Path, args: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1200,1600",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap()
}

/// The DOM after load, and the size of the screenshot saved as `name`.
fn load(browser: &Path, url: &str, shots: &Path, name: &str) -> (String, u64) {
    let dom = headless(browser, &["--dump-dom", url]);
    let text = String::from_utf8_lossy(&dom.stdout).to_string();
    assert!(
        dom.status.success() && !text.is_empty(),
        "{url}: {}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let png = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let shot = headless(browser, &[&format!("--screenshot={}", png.display()), url]);
    assert!(
        shot.status.success(),
        "{url}: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    (text, size)
}

#[test]
fn every_page_renders_in_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("TARDY_REQUIRE_BROWSER").is_none(),
            "TARDY_REQUIRE_BROWSER is set but no chromium is on PATH"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED every_page_renders_in_chromium: no chromium on PATH (.ci/run installs Debian's chromium)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (write, _) = tokens(dir.path());
    let s = Server::start(
        dir.path(),
        &["--db", "sqlite:h.db", "--token-file", "tokens"],
    );
    let auth = format!("Bearer {write}");
    // 30 builds of a suite that slows at build 18, the last 10 on a new machine.
    let mut alert = 0;
    for b in 0..30 {
        let machine = if b < 20 { "runner-a" } else { "runner-b" };
        let a = post(
            &format!(
                "{}/api/v1/tests?suite=unit&commit=c{b:02}&branch=main&machine={machine}&commit_time={}",
                s.url,
                1_700_000_000 + b * 3600
            ),
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/xml"),
            ],
            junit(b, 18).as_bytes(),
        );
        assert_eq!(a.status, 201, "{}", a.text);
        for x in a.json()["alerts"].as_array().unwrap() {
            if x["to_commit"] == "c18" {
                alert = x["id"].as_i64().unwrap();
            }
        }
    }
    assert!(alert > 0);
    let out = tardy(dir.path())
        .env("TARDY_TOKEN", &write)
        .args(["push", &s.url, "--commit", "c29"])
        .arg(format!(
            "{}/tests/data/compare/hyperfine.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .output()
        .unwrap();
    assert!(out.status.success());

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let blank = dir.path().join("blank.html");
    std::fs::write(&blank, "<!doctype html><title>blank</title>").unwrap();
    let (_, blank_size) = load(
        &browser,
        &format!("file://{}", blank.display()),
        &shots,
        "blank",
    );
    let test = "/test?series=unit&name=pkg.A%20%3A%3A%20t7";
    let alert_path = format!("/alert/{alert}");
    for (name, path, needles) in [
        (
            "overview",
            "/",
            vec![
                "Open alerts",
                "Pipeline",
                "Recent uploads",
                "class=\"spark\"",
            ],
        ),
        (
            "series",
            "/series?name=unit",
            vec!["class=\"chart\"", "mark change", "<circle", "Runs"],
        ),
        (
            "test",
            test,
            vec!["pkg.A :: t7", "class=\"chart\"", "<circle"],
        ),
        (
            "alert",
            &alert_path,
            vec![
                "Bisect this",
                "tardy bisect --good c17 --bad c18",
                "Acknowledge",
            ],
        ),
        (
            "machines",
            "/machines",
            vec!["runner-a", "runner-b", "hostname: runner-a -&gt; runner-b"],
        ),
    ] {
        let (dom, size) = load(&browser, &format!("{}{path}", s.url), &shots, name);
        for n in needles {
            assert!(dom.contains(n), "{name}: the page lacks {n:?}");
        }
        // The stylesheet was applied (it colours the change marks).
        assert!(!dom.contains("404"), "{name}: {dom}");
        assert!(
            size > blank_size * 3 / 2,
            "{name}: screenshot of {size} bytes, no more than a blank page ({blank_size})"
        );
    }
}
