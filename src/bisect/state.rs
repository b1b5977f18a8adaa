//! The saved state of a bisection (`STATE_DIR/state.json`, written atomically after
//! every run): its configuration, the candidates, every sample taken, the steps
//! decided and the result. `--resume` rebuilds the search from it and repeats no run.
//! Samples are also kept per configuration signature in `STATE_DIR/cache/`, so a
//! later bisection of the same command over overlapping history reuses them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::decide::Disturbance;
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
    /// Taken after the search, where the probabilities were still spread: it
    /// does not move the search's range.
    #[serde(default)]
    pub refine: bool,
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
    /// The run number (`total_runs` before it) of each sample taken in this
    /// bisection, per key: the last `seq.len()` samples (earlier ones came from
    /// the cache). References nearest in time are what a candidate is judged by.
    #[serde(default)]
    pub seq: BTreeMap<String, Vec<u64>>,
    /// Candidates already built or prepared.
    pub prepared: BTreeSet<String>,
    pub endpoints: Option<Endpoints>,
    pub steps: Vec<Step>,
    pub sandwich: Option<Sandwich>,
    /// Every execution of the measured command, endpoints and sandwich included.
    pub total_runs: u64,
    /// Processes the measured command left running (found and killed after its runs).
    #[serde(default)]
    pub stragglers: u64,
    /// With `--jobs N`: how N runs at once disturbed each other.
    #[serde(default)]
    pub disturbance: Option<Disturbance>,
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
            seq: BTreeMap::new(),
            prepared: BTreeSet::new(),
            endpoints: None,
            steps: Vec::new(),
            sandwich: None,
            total_runs: 0,
            stragglers: 0,
            disturbance: None,
            finished: false,
        }
    }

    pub fn samples_of(&self, key: &str) -> &[f64] {
        self.samples.get(key).map_or(&[], |v| v.as_slice())
    }

    pub fn seq_of(&self, key: &str) -> &[u64] {
        self.seq.get(key).map_or(&[], |v| v.as_slice())
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

/// The sample cache of one configuration signature: when it was last written,
/// on which machine, and the samples per candidate.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cache {
    pub schema: String,
    /// Unix seconds of the last write.
    pub saved_at: i64,
    pub machine: crate::probe::fingerprint::Fingerprint,
    pub samples: BTreeMap<String, Vec<f64>>,
}

const CACHE_SCHEMA: &str = "tardy.bisect-cache";

fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
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
    let machine = MACHINE.get_or_init(crate::probe::fingerprint::Fingerprint::capture);
    let body = Cache {
        schema: CACHE_SCHEMA.into(),
        saved_at: now_s(),
        machine: machine.clone(),
        samples: state.samples.clone(),
    };
    let json = serde_json::to_vec(&body).map_err(|e| io_err(&cache, e))?;
    write_atomic(&cache, &json).map_err(|e| io_err(&cache, e))
}

/// This machine, captured once per process (saving happens after every run).
static MACHINE: std::sync::OnceLock<crate::probe::fingerprint::Fingerprint> =
    std::sync::OnceLock::new();

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

/// What the sample cache offered a new bisection.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum CacheUse {
    /// No cache for this configuration (or `--no-cache`).
    #[default]
    None,
    /// Reused: samples of this many candidates, last written this many seconds ago.
    Reused {
        candidates: usize,
        samples: usize,
        age_s: i64,
    },
    /// Not reused: taken on a machine that differs in these settings.
    OtherMachine {
        samples: usize,
        differences: Vec<String>,
    },
    /// Not reused: a cache of an older tardy, without its machine or age.
    Unknown { samples: usize },
}

/// Samples cached for this configuration by an earlier bisection on this
/// machine, and what was done with the cache. Samples of another machine (any
/// fingerprint difference but load and hostname) are never mixed in.
pub fn cached_samples(dir: &Path, signature: &str) -> (BTreeMap<String, Vec<f64>>, CacheUse) {
    let Ok(text) = std::fs::read_to_string(cache_file(dir, signature)) else {
        return (BTreeMap::new(), CacheUse::None);
    };
    let count = |m: &BTreeMap<String, Vec<f64>>| m.values().map(Vec::len).sum::<usize>();
    match serde_json::from_str::<Cache>(&text) {
        Ok(c) if c.schema == CACHE_SCHEMA => {
            let here = MACHINE.get_or_init(crate::probe::fingerprint::Fingerprint::capture);
            let diff = here.differences(&c.machine);
            if !diff.is_empty() {
                let samples = count(&c.samples);
                return (
                    BTreeMap::new(),
                    CacheUse::OtherMachine {
                        samples,
                        differences: diff
                            .into_iter()
                            .map(|(what, now, then)| format!("{what}: {then} then, {now} now"))
                            .collect(),
                    },
                );
            }
            let used = CacheUse::Reused {
                candidates: c.samples.len(),
                samples: count(&c.samples),
                age_s: (now_s() - c.saved_at).max(0),
            };
            (c.samples, used)
        }
        _ => match serde_json::from_str::<BTreeMap<String, Vec<f64>>>(&text) {
            Ok(old) => {
                let samples = count(&old);
                (BTreeMap::new(), CacheUse::Unknown { samples })
            }
            Err(_) => (BTreeMap::new(), CacheUse::None),
        },
    }
}
