//! The saved state of a bisection (`STATE_DIR/state.json`, written atomically after
//! every run): its configuration, the candidates, every sample taken, the steps
//! decided and the result. `--resume` rebuilds the search from it and repeats no run.
//! Samples are also kept per configuration signature in `STATE_DIR/cache/`, so a
//! later bisection of the same command over overlapping history reuses them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::decide::{Call, Decision, Endpoints};
use super::git::CommitInfo;
use super::{BisectError, Config};
use crate::store::atomic::write_atomic;

pub const SCHEMA: &str = "tardy.bisect";
pub const SCHEMA_VERSION: u32 = 1;

/// One commit or version in the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// Full commit hash, or the version.
    pub key: String,
    /// Short hash and subject, or the version.
    pub label: String,
    pub info: Option<CommitInfo>,
}

/// One decided (or skipped) step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub candidate: String,
    pub label: String,
    /// Samples of the candidate when it was decided.
    pub runs: usize,
    pub call: Call,
    pub decision: Option<Decision>,
    /// Why it was skipped.
    pub note: Option<String>,
}

/// The confirming re-run of the culprit's parent against the culprit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sandwich {
    pub parent: Vec<f64>,
    pub culprit: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    pub schema: String,
    pub schema_version: u32,
    pub config: Config,
    /// Index 0 is the good end, the last the bad end.
    pub candidates: Vec<Candidate>,
    /// Raw samples per candidate key, in the order taken.
    pub samples: BTreeMap<String, Vec<f64>>,
    /// Candidates already built or prepared.
    pub prepared: BTreeSet<String>,
    pub endpoints: Option<Endpoints>,
    pub steps: Vec<Step>,
    pub sandwich: Option<Sandwich>,
    /// Every execution of the measured command, endpoints and sandwich included.
    pub total_runs: u64,
    pub finished: bool,
}

impl State {
    pub fn new(config: Config, candidates: Vec<Candidate>) -> State {
        State {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            config,
            candidates,
            samples: BTreeMap::new(),
            prepared: BTreeSet::new(),
            endpoints: None,
            steps: Vec::new(),
            sandwich: None,
            total_runs: 0,
            finished: false,
        }
    }

    pub fn samples_of(&self, key: &str) -> &[f64] {
        self.samples.get(key).map_or(&[], |v| v.as_slice())
    }
}

pub fn state_file(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

fn cache_file(dir: &Path, signature: &str) -> PathBuf {
    dir.join("cache").join(format!("{signature}.json"))
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> BisectError {
    BisectError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Save the state and the signature's sample cache.
pub fn save(dir: &Path, state: &State) -> Result<(), BisectError> {
    std::fs::create_dir_all(dir.join("cache")).map_err(|e| io_err(dir, e))?;
    // Keep the state, worktrees and cache out of the user's `git status`.
    let ignore = dir.join(".gitignore");
    if !ignore.exists() {
        std::fs::write(&ignore, "*\n").map_err(|e| io_err(&ignore, e))?;
    }
    let path = state_file(dir);
    let json = serde_json::to_vec_pretty(state).map_err(|e| io_err(&path, e))?;
    write_atomic(&path, &json).map_err(|e| io_err(&path, e))?;
    let cache = cache_file(dir, &state.config.signature());
    let json = serde_json::to_vec(&state.samples).map_err(|e| io_err(&cache, e))?;
    write_atomic(&cache, &json).map_err(|e| io_err(&cache, e))
}

/// Load a saved state.
pub fn load(dir: &Path) -> Result<State, BisectError> {
    let path = state_file(dir);
    let text = std::fs::read_to_string(&path).map_err(|e| BisectError::State {
        path: path.display().to_string(),
        message: format!("no bisection to resume here ({e})"),
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| BisectError::State {
        path: path.display().to_string(),
        message: format!("not JSON at line {}: {e}", e.line()),
    })?;
    if v.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA)
        || v.get("schema_version").and_then(|s| s.as_u64()) != Some(SCHEMA_VERSION as u64)
    {
        return Err(BisectError::State {
            path: path.display().to_string(),
            message: format!("not a {SCHEMA} v{SCHEMA_VERSION} state file"),
        });
    }
    serde_json::from_value(v).map_err(|e| BisectError::State {
        path: path.display().to_string(),
        message: format!("unreadable state: {e}"),
    })
}

/// Samples cached for this configuration by an earlier bisection.
pub fn cached_samples(dir: &Path, signature: &str) -> BTreeMap<String, Vec<f64>> {
    std::fs::read_to_string(cache_file(dir, signature))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}
