//! What several test files share: the binary in a directory, deterministic
//! noise, and a throwaway PostgreSQL database when one is available.
#![allow(dead_code)]

use std::path::Path;

/// The real `tardy` binary, without colour and without the user's
/// database, token or CI summary file.
pub fn cmd() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("tardy").unwrap();
    c.env("NO_COLOR", "1")
        .env_remove("TARDY_DB")
        .env_remove("TARDY_TOKEN")
        .env_remove("GITHUB_STEP_SUMMARY");
    c
}

/// `tardy explain --json ARGS`, which must succeed: its JSON.
pub fn explain_json(args: &[&str]) -> serde_json::Value {
    let out = cmd()
        .arg("explain")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tardy explain {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What an explain comparison concluded, in a few lines: its diagnosis,
/// each cause with its share and verdict, and the table. A failing
/// assertion shows this, not the whole document, whose first lines (the
/// runs and histograms) are all a CI log keeps.
pub fn brief(c: &serde_json::Value) -> String {
    let mut out = format!(
        "diagnosis: {}\nsignificant {} ratio {} wall delta {} run-queue counted with {}\n",
        c["diagnosis"],
        c["significant"],
        c["ratio"],
        c["wall_delta_s"],
        c["run_queue_counted_with"]
    );
    for cause in c["causes"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "cause {} share {} verdict {} p {}: {}\n",
            cause["kind"], cause["share"], cause["verdict"], cause["p_adjusted"], cause["evidence"]
        ));
    }
    for row in c["table"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "row {} A {} B {} delta {} share {} verdict {}\n",
            row["category"], row["a_s"], row["b_s"], row["delta_s"], row["share"], row["verdict"]
        ));
    }
    for side in ["a", "b"] {
        let t = &c[side];
        let walls: Vec<String> = t["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{:.3}", r["wall_s"].as_f64().unwrap_or(f64::NAN)))
            .collect();
        out.push_str(&format!(
            "{side}: walls [{}] spin_s {} profile note {}\n",
            walls.join(" "),
            t["profile"]["spin_s"],
            t["profile_note"]
        ));
    }
    out
}

/// [`cmd`] run in `dir`, with git confined to `dir`.
pub fn tardy(dir: &Path) -> assert_cmd::Command {
    let mut c = cmd();
    c.current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir));
    c
}

/// A file or directory under tests/data.
pub fn data(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Deterministic noise in [-0.5, 0.5).
pub fn noise(i: usize, k: usize) -> f64 {
    let mut x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ (k as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    (x % 10_000) as f64 / 10_000.0 - 0.5
}

/// A database of its own on the PostgreSQL server named by
/// `TARDY_TEST_POSTGRES` (an admin URL, e.g.
/// `postgres://tardy:tardy@127.0.0.1/postgres`), dropped afterwards.
pub struct TempPostgres {
    admin: String,
    name: String,
    pub url: String,
}

impl Drop for TempPostgres {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A fresh PostgreSQL database for `test`, or None (with the reason
/// printed) when no server is configured. With `TARDY_REQUIRE_POSTGRES=1`
/// (as `.ci/run` sets) a missing server fails the test instead.
pub fn temp_postgres(test: &str) -> Option<TempPostgres> {
    let Ok(admin) = std::env::var("TARDY_TEST_POSTGRES") else {
        assert!(
            std::env::var_os("TARDY_REQUIRE_POSTGRES").is_none(),
            "{test}: TARDY_REQUIRE_POSTGRES is set but TARDY_TEST_POSTGRES is not"
        );
        // Written to the real stderr, past the test harness's capture, so
        // the skip shows in every run.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED {test} on PostgreSQL: TARDY_TEST_POSTGRES is not set (an admin URL; .ci/run starts a server and sets it)"
        );
        return None;
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "tardy_t_{}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst),
        test.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(20)
            .collect::<String>()
            .to_lowercase()
    );
    let mut c = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("TARDY_TEST_POSTGRES={admin}: cannot connect: {e}"));
    c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    let url = format!("{base}/{name}");
    Some(TempPostgres { admin, name, url })
}

/// A `tardy serve` running on a free port, stopped when dropped.
pub struct Server {
    child: std::process::Child,
    pub url: String,
}

impl Server {
    /// Start `tardy serve --listen 127.0.0.1:0 ARGS...` in `dir`.
    pub fn start(dir: &Path, args: &[&str]) -> Server {
        use std::io::BufRead as _;
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tardy"))
            .current_dir(dir)
            .env_remove("TARDY_DB")
            .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut line).unwrap();
        if line.is_empty() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("tardy serve did not start: {err}");
        }
        let url = line.trim().rsplit(' ').next().unwrap().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{line}");
        Server { child, url }
    }

    /// The server's peak resident memory so far (VmHWM), in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        kib / 1024.0
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, and wait for the process to finish its requests and exit.
    pub fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer: status, body, and the body as JSON when it is.
pub struct Answer {
    pub status: u16,
    pub text: String,
    pub headers: Vec<(String, String)>,
}

impl Answer {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(std::time::Duration::from_secs(60)))
        .build()
        .into()
}

fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Answer {
    let mut r = r.unwrap();
    let headers = r
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    Answer {
        status: r.status().as_u16(),
        text: r.body_mut().read_to_string().unwrap_or_default(),
        headers,
    }
}

/// GET with optional headers.
pub fn get(url: &str, headers: &[(&str, &str)]) -> Answer {
    let mut req = agent().get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.call())
}

/// POST a body with headers.
pub fn post(url: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut req = agent().post(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    answer(req.send(body))
}

/// A JUnit report of a 20-test suite for build `build`; test `pkg.A.t7`
/// takes 50 ms longer from build `slow_from` on.
pub fn junit(build: usize, slow_from: usize) -> String {
    let mut cases = String::new();
    let mut total = 0.0;
    for t in 0..20 {
        let mut d = 0.1 + 0.01 * t as f64 + noise(build, t) * 0.002;
        if t == 7 && build >= slow_from {
            d += 0.05;
        }
        total += d;
        cases.push_str(&format!(
            "<testcase classname=\"pkg.A\" name=\"t{t}\" time=\"{d:.4}\"/>\n"
        ));
    }
    format!(
        "<?xml version=\"1.0\"?>\n<testsuite name=\"unit\" tests=\"20\" time=\"{total:.4}\">\n{cases}</testsuite>\n"
    )
}

/// Make a write token (and a read one) in `dir/tokens`: (write, read).
pub fn tokens(dir: &Path) -> (String, String) {
    let mk = |scope: &str| {
        let out = tardy(dir)
            .args(["token", "add", "--token-file", "tokens", "--scope", scope])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    (mk("write"), mk("read"))
}

/// Run `cmd`; it must succeed. Its stderr.
pub fn succeeds(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    err
}

/// Run `cmd`; it must succeed. Its stdout.
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Run `cmd`; it must fail with exit 2 and say `needle` on stderr.
pub fn refuses(cmd: &mut assert_cmd::Command, needle: &str) -> String {
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(needle), "expected {needle:?} in: {err}");
    err
}

/// `git ARGS` in `dir`, which must succeed, with a fixed identity: its
/// stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Busy-looping shells competing for the CPUs, stopped when dropped.
pub struct Hogs(Vec<std::process::Child>);

impl Hogs {
    pub fn start(n: usize) -> Hogs {
        Hogs(
            (0..n)
                .map(|_| {
                    std::process::Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .unwrap()
                })
                .collect(),
        )
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for h in &mut self.0 {
            let _ = h.kill();
            let _ = h.wait();
        }
    }
}
