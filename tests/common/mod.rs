//! What several test files share: the binary in a directory, deterministic
//! noise, and a throwaway PostgreSQL database when one is available.
#![allow(dead_code)]

use std::path::Path;

/// The real `tardy` binary, run in `dir`, without colour, without the
/// user's database, and with git confined to `dir`.
pub fn tardy(dir: &Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("tardy").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("TARDY_DB")
        .env_remove("TARDY_TOKEN")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir));
    c
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
