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
                log_events: false,
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

/// The culprit against its parent, explained.
pub struct Explained {
    /// The last good candidate's label and the first bad one's.
    pub good: String,
    pub bad: String,
    pub a: crate::diagnose::explain::Trace,
    pub b: crate::diagnose::explain::Trace,
    pub comparison: crate::diagnose::explain::Comparison,
    /// The traces saved (relative to the current directory when under it).
    pub saved: Vec<String>,
    /// Paths that could not be written, and why (a warning, not a failure).
    pub not_saved: Vec<String>,
    /// Ctrl-C came: the runs completed so far are explained.
    pub interrupted: bool,
}

/// Why there is no explanation.
#[derive(Debug)]
pub enum ExplainFailure {
    /// Ctrl-C before a run of each side completed.
    Interrupted(String),
    Failed(String),
}

impl ExplainFailure {
    pub fn message(&self) -> &str {
        match self {
            ExplainFailure::Interrupted(m) | ExplainFailure::Failed(m) => m,
        }
    }
}

/// Progress of [`culprit`]: the pair (last good, first bad) about to be
/// recorded, a run of this candidate starts, a run ended.
pub enum Progress<'a> {
    Start(&'a str, &'a str),
    Run(&'a str),
    Done,
}

/// The two traces saved where `tardy bisect` keeps them; the paths saved
/// (relative to here when under it) and those that could not be.
fn save_traces(
    paths: &[PathBuf],
    traces: [&crate::diagnose::explain::Trace; 2],
) -> Result<(Vec<String>, Vec<String>), ExplainFailure> {
    let (mut saved, mut not_saved) = (Vec::new(), Vec::new());
    for (path, t) in paths.iter().zip(traces) {
        let text =
            serde_json::to_string_pretty(t).map_err(|e| ExplainFailure::Failed(e.to_string()))?;
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                crate::store::atomic::write_atomic(path, format!("{text}\n").as_bytes())
                    .map_err(|e| e.to_string())
            });
        match written {
            Ok(()) => {
                let shown = std::env::current_dir()
                    .ok()
                    .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
                    .unwrap_or_else(|| path.clone());
                saved.push(shown.display().to_string())
            }
            Err(e) => not_saved.push(format!("cannot save {}: {e}", path.display())),
        }
    }
    Ok((saved, not_saved))
}

/// `tardy bisect --explain`'s second half: the culprit and its parent
/// recorded `runs` times each, interleaved, compared, and the traces saved
/// in the state directory.
pub fn culprit(
    st: &State,
    dir: &Path,
    report: &Report,
    runs: u64,
    on: &mut dyn FnMut(Progress),
) -> Result<Explained, ExplainFailure> {
    use crate::diagnose::explain::session::{self, SessionError};
    let failed = |e: BisectError| ExplainFailure::Failed(e.to_string());
    let Some(pair) = pair(st, dir, report, true).map_err(failed)? else {
        return Err(ExplainFailure::Failed("no culprit to explain".into()));
    };
    on(Progress::Start(&pair.good.label, &pair.bad.label));
    let opts = session::Options {
        runs,
        ignore_failure: false,
        overhead_check: false,
        recorder: crate::record::Choice::Auto,
        warmup: 1,
        prepare: None,
    };
    let mut first = true;
    let outcome = session::record_set(&pair.specs, &opts, &mut |ev| match ev {
        session::Event::Run { .. } => {
            on(Progress::Run(if first {
                &pair.good.label
            } else {
                &pair.bad.label
            }));
            first = !first;
        }
        session::Event::Done => on(Progress::Done),
        _ => {}
    });
    let outcome = outcome.map_err(|e| match e {
        SessionError::NothingCompleted(_) => ExplainFailure::Interrupted(
            "interrupted before the culprit and its parent had each run once: nothing to explain"
                .into(),
        ),
        e => ExplainFailure::Failed(e.to_string()),
    })?;
    let mut traces = outcome.traces.into_iter();
    let (Some(a), Some(b)) = (traces.next(), traces.next()) else {
        return Err(ExplainFailure::Failed(
            "the recorder returned no traces".into(),
        ));
    };
    let comparison = crate::diagnose::explain::compare(&a, &b);
    let (saved, not_saved) = save_traces(&trace_paths(dir, &pair), [&a, &b])?;
    Ok(Explained {
        good: pair.good.label,
        bad: pair.bad.label,
        a,
        b,
        comparison,
        saved,
        not_saved,
        interrupted: outcome.interrupted,
    })
}
