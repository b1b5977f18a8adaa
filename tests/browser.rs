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

use common::{Server, junit, post, stdout_of, tardy, tokens};

/// Chromium on PATH, or `None` after saying `test` is skipped (past the
/// harness's capture, so the skip shows in every run); with
/// TARDY_REQUIRE_BROWSER set (.ci/run sets it) a missing one fails.
fn chromium(test: &str) -> Option<PathBuf> {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(c);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    assert!(
        std::env::var_os("TARDY_REQUIRE_BROWSER").is_none(),
        "TARDY_REQUIRE_BROWSER is set but no chromium is on PATH"
    );
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: no chromium on PATH (.ci/run installs Debian's chromium)"
    );
    None
}

/// A page in a headless Chromium driven over the DevTools protocol (a minimal
/// WebSocket client: the test needs only a few commands): the viewport's width is
/// set, the page loaded, and the page itself asked what overflows it.
struct DevTools {
    child: std::process::Child,
    ws: std::net::TcpStream,
    next: u64,
    _profile: tempfile::TempDir,
}

impl DevTools {
    fn start(browser: &Path) -> DevTools {
        use std::io::{BufRead, BufReader, Read, Write};
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let port = loop {
            line.clear();
            assert!(
                err.read_line(&mut line).unwrap() > 0,
                "chromium printed no DevTools address"
            );
            if let Some(rest) = line
                .trim()
                .strip_prefix("DevTools listening on ws://127.0.0.1:")
            {
                break rest.split('/').next().unwrap().to_string();
            }
        };
        // Keep reading its stderr so that it never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = err.read_to_end(&mut sink);
        });
        let list: serde_json::Value =
            common::get(&format!("http://127.0.0.1:{port}/json/list"), &[]).json();
        let page = list
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .expect("a page target");
        let url = page["webSocketDebuggerUrl"].as_str().unwrap();
        let path = &url[url.find("/devtools").unwrap()..];
        let mut ws = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        write!(
            ws,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        // The handshake's answer ends with an empty line.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            ws.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        DevTools {
            child,
            ws,
            next: 0,
            _profile: profile,
        }
    }

    /// Send one command and wait for its answer (events in between are skipped).
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::{Read, Write};
        self.next += 1;
        let id = self.next;
        let text = serde_json::json!({"id": id, "method": method, "params": params}).to_string();
        // A client frame: FIN + text, masked (with a zero mask: the bytes as they are).
        let mut frame = vec![0x81u8];
        let n = text.len();
        if n < 126 {
            frame.push(0x80 | n as u8);
        } else if n < 65536 {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        } else {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
        frame.extend_from_slice(&[0, 0, 0, 0]);
        frame.extend_from_slice(text.as_bytes());
        self.ws.write_all(&frame).unwrap();
        loop {
            let mut message = Vec::new();
            loop {
                let mut h = [0u8; 2];
                self.ws.read_exact(&mut h).unwrap();
                let len = match h[1] & 0x7f {
                    126 => {
                        let mut b = [0u8; 2];
                        self.ws.read_exact(&mut b).unwrap();
                        u16::from_be_bytes(b) as usize
                    }
                    127 => {
                        let mut b = [0u8; 8];
                        self.ws.read_exact(&mut b).unwrap();
                        u64::from_be_bytes(b) as usize
                    }
                    l => l as usize,
                };
                let mut body = vec![0u8; len];
                self.ws.read_exact(&mut body).unwrap();
                message.extend_from_slice(&body);
                if h[0] & 0x80 != 0 {
                    break;
                }
            }
            let v: serde_json::Value = serde_json::from_slice(&message).unwrap();
            if v["id"] == id {
                assert!(v["error"].is_null(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// Load `url` in a viewport `width` pixels wide and wait until it is loaded.
    fn navigate(&mut self, url: &str, width: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            serde_json::json!({"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": width < 600}),
        );
        self.call("Page.navigate", serde_json::json!({ "url": url }));
        for _ in 0..100 {
            let r = self.call(
                "Runtime.evaluate",
                serde_json::json!({"expression": "document.readyState", "returnByValue": true}),
            );
            if r["result"]["value"] == "complete" {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Load `url` in a viewport `width` pixels wide and evaluate `expression`
    /// (which returns a string) there.
    fn eval_at(&mut self, url: &str, width: u32, expression: &str) -> String {
        self.navigate(url, width);
        let r = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": expression, "returnByValue": true}),
        );
        r["result"]["value"].as_str().unwrap_or("").to_string()
    }

    /// Load `url` in a viewport `width` pixels wide; return what overflows: the page's
    /// own horizontal scroll width beyond the viewport, and the elements that reach
    /// past the right edge without a scrolling box around them.
    fn overflow(&mut self, url: &str, width: u32) -> (i64, Vec<String>) {
        self.navigate(url, width);
        let script = r#"(() => {
            const w = document.documentElement.clientWidth;
            const scrolls = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
                const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll') return true; } return false; };
            const out = [];
            for (const e of document.querySelectorAll('main *')) {
                const r = e.getBoundingClientRect();
                if (r.width > 0 && r.right > w + 1 && !scrolls(e)) out.push(e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(r.right));
            }
            return JSON.stringify([document.documentElement.scrollWidth - w, out.slice(0, 10)]);
        })()"#;
        let r = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": script, "returnByValue": true}),
        );
        let v: serde_json::Value =
            serde_json::from_str(r["result"]["value"].as_str().unwrap()).unwrap();
        let list = v[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        (v[0].as_i64().unwrap(), list)
    }
}

impl Drop for DevTools {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .output()
        .unwrap()
}

/// The DOM after load, and the size of the screenshot saved as `name` (the window
/// 1400 px wide; a second screenshot `name-420` as a phone shows it).
fn load(browser: &Path, url: &str, shots: &Path, name: &str) -> (String, u64) {
    let dom = headless(browser, &["--window-size=1400,1600", "--dump-dom", url]);
    let text = String::from_utf8_lossy(&dom.stdout).to_string();
    assert!(
        dom.status.success() && !text.is_empty(),
        "{url}: {}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let png = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&png);
    let shot = headless(
        browser,
        &[
            "--window-size=1400,1600",
            &format!("--screenshot={}", png.display()),
            url,
        ],
    );
    assert!(
        shot.status.success(),
        "{url}: {}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let narrow = shots.join(format!("{name}-420.png"));
    let _ = headless(
        browser,
        &[
            "--window-size=420,1600",
            &format!("--screenshot={}", narrow.display()),
            url,
        ],
    );
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    (text, size)
}

#[test]
fn every_page_renders_in_chromium() {
    let Some(browser) = chromium("every_page_renders_in_chromium") else {
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
                "{}/api/v1/tests?suite=unit&commit=c{b:02}&branch=main&machine={machine}&commit_time={}&commit_subject={}",
                s.url,
                1_700_000_000 + b * 3600,
                if b == 18 {
                    "parser%3A+retry+every+read"
                } else {
                    "routine"
                }
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
    let mut devtools = DevTools::start(&browser);
    let alert_path = format!("/alert/{alert}");
    for (name, path, needles) in [
        (
            "overview",
            "/",
            vec![
                "Open alerts",
                "Largest test changes",
                "Pipeline",
                "Recent uploads",
                "class=\"spark\"",
            ],
        ),
        (
            "series",
            "/series?name=unit",
            vec![
                "class=\"chart\"",
                "mark change",
                "mark alert",
                "<circle",
                "Runs",
            ],
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
                "What changed",
                "Shape of the change in unit",
                "class=\"chart\"",
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
        // Nothing reaches past the window, wide or narrow, unless inside a box that
        // scrolls (a wide table in its card).
        for width in [1400, 420] {
            let (page_overflow, elements) = devtools.overflow(&format!("{}{path}", s.url), width);
            assert!(
                page_overflow <= 0 && elements.is_empty(),
                "{name} at {width} px: the page is {page_overflow} px too wide; past the edge: {elements:?}"
            );
        }
    }
    // The book's pictures of the pages are these screenshots:
    // `TARDY_BOOK_SCREENSHOTS=1 cargo test --test browser` puts them in
    // docs/book/img/ (tests/readme.rs checks every picture the book shows exists).
    if std::env::var_os("TARDY_BOOK_SCREENSHOTS").is_some() {
        let img = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book/img");
        std::fs::create_dir_all(&img).unwrap();
        for name in ["overview", "alert"] {
            std::fs::copy(
                shots.join(format!("{name}.png")),
                img.join(format!("{name}.png")),
            )
            .unwrap();
        }
    }
    // On a phone the open alert says, on screen and without scrolling sideways,
    // what regressed, by how much and since which commit (with its subject);
    // on a wide screen the table does.
    let visible = r#"(() => {
        const seen = (sel) => [...document.querySelectorAll(sel)].filter((e) => {
            const r = e.getBoundingClientRect();
            return r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= document.documentElement.clientWidth + 1;
        }).map((e) => e.innerText);
        return JSON.stringify({lines: seen('ul.alert-lines li'), table: seen('div.alerts-table table'),
            builds: seen('table.pipeline th code')});
    })()"#;
    let narrow: serde_json::Value =
        serde_json::from_str(&devtools.eval_at(&format!("{}/", s.url), 420, visible)).unwrap();
    let line = narrow["lines"][0].as_str().unwrap_or_default();
    for want in ["pkg.A :: t7", "+", "since c18", "parser: retry every read"] {
        assert!(
            line.contains(want),
            "at 420 px the alert line lacks {want:?}: {narrow}"
        );
    }
    assert!(narrow["table"].as_array().unwrap().is_empty(), "{narrow}");
    // The newest build is on screen without scrolling, in commit order.
    let builds: Vec<&str> = narrow["builds"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.as_str())
        .collect();
    assert_eq!(builds.last(), Some(&"c29"), "{narrow}");
    assert!(builds.windows(2).all(|w| w[0] < w[1]), "{builds:?}");
    let wide: serde_json::Value =
        serde_json::from_str(&devtools.eval_at(&format!("{}/", s.url), 1400, visible)).unwrap();
    assert!(wide["lines"].as_array().unwrap().is_empty(), "{wide}");
    assert!(
        wide["table"][0]
            .as_str()
            .unwrap_or_default()
            .contains("parser: retry every read"),
        "{wide}"
    );
    // Above the fold of a 1400 x 900 window: the planted regression is named
    // in the first screen (the test, not only its suite, whose total stays
    // green in the pipeline).
    let fold = r#"(() => JSON.stringify([...document.querySelectorAll('div.alerts-table tr')]
        .filter((r) => r.innerText.includes('pkg.A :: t7'))
        .map((r) => r.getBoundingClientRect().bottom)))()"#;
    let bottoms: Vec<f64> =
        serde_json::from_str(&devtools.eval_at(&format!("{}/", s.url), 1400, fold)).unwrap();
    assert!(
        bottoms.first().is_some_and(|b| *b <= 900.0),
        "the regressed test is not in the first 900 px: {bottoms:?}"
    );
    // What changed is ranked first: the alerts, then the largest per-test
    // changes of the latest builds, above the pipeline and the series.
    let order = r#"(() => JSON.stringify([...document.querySelectorAll('h2')]
        .map((h) => [h.innerText, h.getBoundingClientRect().top])))()"#;
    let heads: Vec<(String, f64)> =
        serde_json::from_str(&devtools.eval_at(&format!("{}/", s.url), 1400, order)).unwrap();
    let names: Vec<&str> = heads.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(
        &names[..3],
        ["Open alerts", "Largest test changes", "Pipeline"],
        "{heads:?}"
    );
    assert!(
        heads[1].1 <= 900.0,
        "the test changes start below the fold: {heads:?}"
    );
    // The alert page has one token box for all its buttons, and q-values as numbers.
    let (dom, _) = load(&browser, &format!("{}{alert_path}", s.url), &shots, "alert");
    assert_eq!(dom.matches("name=\"token\"").count(), 1, "{dom}");
    // No command was stored for this suite: a template to fill in, not a Copy button.
    assert!(
        dom.contains("Put your own command in this template") && !dom.contains("data-copy"),
        "{dom}"
    );
    for cell in dom.split("<td class=\"num\">").skip(1) {
        let cell = &cell[..cell.find("</td>").unwrap_or(0)];
        assert!(
            !cell.contains("e0") && !cell.contains("e-"),
            "a number in exponent form: {cell}"
        );
    }
}

/// `tardy explain --html`: Skylake-SP's hand-off, 40 against 2,000 PAUSEs
/// a check, as one page in Chromium: the causes, both critical paths
/// drawn on one time axis, and the flame graph.
#[test]
fn the_explain_page_shows_both_critical_paths() {
    let Some(browser) = chromium("the_explain_page_shows_both_critical_paths") else {
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let w = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/workload");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("explain.html");
    let stdout = stdout_of(
        tardy(dir.path())
            .args(["explain", "--json", "--runs", "3", "--html"])
            .arg(&page)
            .arg(format!("{} handoff 3000 40", w.display()))
            .arg(format!("{} handoff 3000 10000", w.display())),
    );
    let c: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    if c["a"]["overhead"]["recorder"] != "kernel-events" {
        eprintln!(
            "SKIPPED the_explain_page_shows_both_critical_paths: no kernel events here ({})",
            c["a"]["overhead"]["recorder"]
        );
        return;
    }
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let (dom, png) = load(
        &browser,
        &format!("file://{}", page.display()),
        &shots,
        "explain",
    );
    assert!(png > 20_000, "a blank screenshot: {png} bytes");
    for side in ["A", "B"] {
        let row = format!("class=\"cp-row\" data-side=\"{side}\"");
        assert!(dom.contains(&row), "no critical path for {side}");
    }
    // Which cause leads is tests/explain.rs's to hold (beside two CPU hogs
    // three runs may lead with the wait for a core); the page shows them.
    assert!(dom.contains("Why B is slower than A"), "no causes");
    assert!(dom.contains("Which code: B against A"), "no flame graph");
}

/// `tardy report` of two Go benchmark files, 30 benchmarks, one of them
/// (the 28th) 1.5x slower: at 1400 x 900 the regression is named, slower,
/// in the first screen, above every chart.
#[test]
fn the_report_names_the_regression_in_its_first_screen() {
    let Some(browser) = chromium("the_report_names_the_regression_in_its_first_screen") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Deterministic noise: 2% either way, different for every line.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut noise = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        1.0 + ((x % 4001) as f64 - 2000.0) / 100_000.0
    };
    for (file, slow) in [("old.txt", 1.0), ("new.txt", 1.5)] {
        let mut text = String::from("goos: linux\ngoarch: amd64\npkg: example.com/app\n");
        for _ in 0..10 {
            for b in 0..30 {
                let ns = (1000.0 + 997.0 * b as f64) * if b == 27 { slow } else { 1.0 };
                text.push_str(&format!(
                    "BenchmarkOp{b:02}-2 \t 1000000\t {:.1} ns/op\n",
                    ns * noise()
                ));
            }
        }
        std::fs::write(dir.path().join(file), text).unwrap();
    }
    stdout_of(tardy(dir.path()).args([
        "report",
        "old.txt",
        "new.txt",
        "--no-history",
        "-o",
        "report.html",
    ]));
    let page = format!("file://{}", dir.path().join("report.html").display());
    let mut devtools = DevTools::start(&browser);
    let fold = r#"(() => {
        const row = [...document.querySelectorAll('tr')].find((r) => r.innerText.includes('Op27'));
        const chart = document.querySelector('svg');
        return JSON.stringify({
            bottom: row ? row.getBoundingClientRect().bottom : null,
            text: row ? row.innerText : '',
            chart: chart ? chart.getBoundingClientRect().top : null,
        });
    })()"#;
    let v: serde_json::Value = serde_json::from_str(&devtools.eval_at(&page, 1400, fold)).unwrap();
    let bottom = v["bottom"].as_f64().unwrap_or(f64::MAX);
    assert!(
        bottom <= 900.0 && v["text"].as_str().unwrap_or("").contains("slower"),
        "the regressed benchmark is not named slower in the first 900 px: {v}"
    );
    if let Some(chart) = v["chart"].as_f64() {
        assert!(chart > bottom, "a chart above the verdict: {v}");
    }
}
