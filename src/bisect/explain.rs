//! `tardy bisect --explain`: once the search has ended at a culprit (or a range
//! hidden by skipped candidates), the last good and the first bad candidate are
//! recorded with `tardy explain`'s recorder, interleaved, in their own worktrees,
//! so the answer is "this commit, and this is what it changed in the run".
//!
//! In sensitivity mode both run under condition B, where the difference shows.
//! The explanation is always of wall time, whatever metric was bisected.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::engine::Report;
use super::runner::{self, Prepared};
use super::state::{Candidate, State};
use super::{BisectError, Mode};
use crate::diagnose::explain::session::Spec;
use crate::record::RecordOptions;

/// What to record: the last good candidate (A) and the first bad one (B).
#[derive(Debug, Clone)]
pub struct Pair {
    pub good: Candidate,
    pub bad: Candidate,
    /// A then B.
    pub specs: [Spec; 2],
}

/// The candidate with this key.
fn candidate(st: &State, key: &str) -> Result<Candidate, BisectError> {
    st.candidates
        .iter()
        .find(|c| c.key == key)
        .cloned()
        .ok_or_else(|| BisectError::State {
            path: "state.json".into(),
            message: format!("{key} is not one of the bisection's candidates"),
        })
}

/// Where `key` is ready to run: its worktree (built during the search, or now
/// again if it was removed), or the repository for versions.
fn ready(st: &State, state_dir: &Path, key: &str) -> Result<PathBuf, BisectError> {
    let cfg = &st.config;
    let done = st.prepared.contains(key);
    match &cfg.mode {
        Mode::Commits { .. } => {
            let dir = runner::worktree_dir(state_dir, key);
            if done && dir.join(".git").exists() {
                return Ok(dir);
            }
        }
        Mode::Versions { .. } if done => return Ok(cfg.repo.clone()),
        Mode::Versions { .. } => {}
    }
    match runner::prepare(cfg, state_dir, key)? {
        Prepared::Ready(d) => Ok(d),
        Prepared::Skip(why) => Err(BisectError::Input(format!(
            "cannot prepare {key} to explain it: {why}"
        ))),
    }
}

/// The pair to explain after a search that produced `report`, or `None` when
/// there is none (the regression did not reproduce).
pub fn pair(
    st: &State,
    state_dir: &Path,
    report: &Report,
    trace: bool,
) -> Result<Option<Pair>, BisectError> {
    let (Some(good_key), Some(bad_key)) = (&report.last_good, &report.first_bad) else {
        return Ok(None);
    };
    let cfg = &st.config;
    let (good, bad) = (candidate(st, good_key)?, candidate(st, bad_key)?);
    let (env, prefix) = match &cfg.conditions {
        Some(c) => (c.b_env.clone(), c.b_prefix.clone()),
        None => (Vec::new(), None),
    };
    // Both sides carry the same name (the command as given), so the comparison
    // does not warn about different commands; which is which is the candidates'.
    let mut display = match &prefix {
        Some(p) => format!("{p} {}", cfg.command),
        None => cfg.command.clone(),
    };
    for (k, v) in env.iter().rev() {
        display = format!("{k}={v} {display}");
    }
    let spec = |c: &Candidate| -> Result<Spec, BisectError> {
        let dir = ready(st, state_dir, &c.key)?;
        let command = runner::substitute(&cfg.command, &c.key);
        let line = match &prefix {
            Some(p) => format!("{p} {command}"),
            None => command,
        };
        let exec = runner::exec_of(&line).map_err(BisectError::Input)?;
        Ok(Spec {
            display: display.clone(),
            exec,
            options: RecordOptions {
                env: env.clone(),
                cwd: Some(dir),
                timeout: cfg.timeout_s.map(Duration::from_secs_f64),
                straggler_wait: Duration::from_secs(10),
                show_output: false,
                trace,
                profile_hz: crate::profile::DEFAULT_HZ,
            },
        })
    };
    let specs = [spec(&good)?, spec(&bad)?];
    Ok(Some(Pair { good, bad, specs }))
}

/// Where the two traces are saved: `STATE_DIR/explain/{good,bad}-KEY.json` (KEY the
/// commit hash or the version, with characters unsafe in a file name replaced).
pub fn trace_paths(state_dir: &Path, pair: &Pair) -> [PathBuf; 2] {
    let short = |k: &str| {
        let hash = k.len() >= 40 && k.chars().all(|c| c.is_ascii_hexdigit());
        k.chars()
            .take(if hash { 12 } else { 64 })
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    let dir = state_dir.join("explain");
    [
        dir.join(format!("good-{}.json", short(&pair.good.key))),
        dir.join(format!("bad-{}.json", short(&pair.bad.key))),
    ]
}
