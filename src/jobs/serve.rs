//! `tardy serve`'s settings, as its flags give them, checked and turned into
//! the server's [`ServeOptions`].

use std::path::PathBuf;
use std::time::Duration;

use crate::history::detect::{self, DetectOptions, Method};
use crate::server::ServeOptions;
use crate::server::auth::Tokens;
use crate::server::pool::Backend;

/// The flags of `tardy serve`, in their units (MiB, seconds).
#[derive(Clone, Debug)]
pub struct Settings {
    /// sqlite:PATH (or a path) or postgres://...; default: the repository's
    /// `.tardy/tardy.db`.
    pub db: Option<String>,
    pub project: String,
    pub listen: String,
    pub token_file: Option<PathBuf>,
    pub read_token: bool,
    pub max_body_mib: usize,
    /// Default: 4 times `max_body_mib`.
    pub max_inflated_mib: Option<usize>,
    pub max_results: u64,
    pub max_tests: u64,
    pub max_series: u64,
    pub header_timeout: f64,
    pub body_timeout: f64,
    pub read_budget: f64,
    pub max_connections: usize,
    pub max_per_client: usize,
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// No change-point detection after uploads.
    pub no_detect: bool,
    pub detect_memory_mib: usize,
    /// Detection's method (min. magnitude, false-alarm rate or Otava's).
    pub method: Method,
}

/// The server's options, every setting checked (one line naming the flag
/// when one is out of range).
pub fn options(s: &Settings) -> Result<ServeOptions, String> {
    let backend = match &s.db {
        Some(db) if db.starts_with(super::branch::PREFIX) => {
            return Err(format!(
                "--db {db}: a server keeps its history in a database (a SQLite file or postgres://...); git: branches are for CI without one"
            ));
        }
        Some(db) => Backend::parse(db),
        None => Backend::Sqlite(super::store::db_path(None)),
    };
    let mut o = ServeOptions::new(backend, &s.project);
    o.listen = s.listen.clone();
    if let Some(f) = &s.token_file {
        o.tokens = Tokens::load(f).map_err(|e| e.to_string())?;
    }
    o.read_protected = s.read_token;
    if s.max_body_mib == 0 {
        return Err("--max-body-mib must be at least 1".into());
    }
    o.max_body = s.max_body_mib << 20;
    let inflated = s
        .max_inflated_mib
        .unwrap_or(s.max_body_mib.saturating_mul(4));
    o.limits = crate::ingest::limits::Limits::server(
        inflated as u64,
        s.max_results,
        s.max_tests,
        s.max_series,
    )?;
    o.header_timeout = seconds("header-timeout", s.header_timeout)?;
    o.body_timeout = seconds("body-timeout", s.body_timeout)?;
    o.read_budget = seconds("read-budget", s.read_budget)?;
    o.max_connections = s.max_connections.max(1);
    o.max_per_client = s.max_per_client.max(1);
    o.trusted_proxies = s.trusted_proxies.clone();
    o.detect_memory = s.detect_memory_mib.saturating_mul(1 << 20);
    o.detect = (!s.no_detect).then(|| DetectOptions {
        changepoint: s.method,
        window: Some(detect::SERVER_WINDOW),
        search_every: detect::SERVER_SEARCH_EVERY,
        ..Default::default()
    });
    Ok(o)
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(Duration::from_secs_f64(v))
    } else {
        Err(format!(
            "--{name} must be between 0 and 86400 seconds, not {v}"
        ))
    }
}
