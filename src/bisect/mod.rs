//! `tardy bisect`: find the commit (or version) that made a command slower, or
//! that made it sensitive to a setting, with a stated confidence and few runs.
//!
//! - [`git`]: revisions, commit lists and worktrees (the working tree is never touched);
//! - [`runner`]: preparing a candidate (worktree + build, or `{version}` + prepare) and
//!   taking one sample of the metric there (under conditions A and B in sensitivity mode);
//! - [`decide`]: the statistics of each decision (pure);
//! - [`posterior`]: the probability of each candidate being the culprit (pure);
//! - [`state`]: what is saved after every run, so `--resume` repeats nothing;
//! - [`engine`]: the search itself, driving the others;
//! - [`explain`]: `--explain`, the culprit against its parent through `tardy explain`'s recorder.

pub mod decide;
pub mod engine;
pub mod exact;
pub mod explain;
pub mod git;
pub mod posterior;
pub mod runner;
pub mod session;
pub mod simulate;
pub mod state;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use decide::Policy;

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error("{0} is not inside a git repository")]
    NotARepository(String),
    #[error("unknown revision '{0}'")]
    UnknownRevision(String),
    #[error("{0}")]
    Git(String),
    #[error("{0}")]
    Input(String),
    #[error("the command fails at both ends: {0}")]
    BothFail(String),
    #[error("{path}: {message}")]
    State { path: String, message: String },
    #[error("cannot create {path}: {message}")]
    Io { path: String, message: String },
    #[error("interrupted; `tardy bisect --resume` continues where it stopped")]
    Interrupted,
}

/// What is measured in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Metric {
    Wall,
    Cpu,
    User,
    Sys,
    Rss,
    /// A count of the whole process tree (`instructions`, `cycles` or
    /// `estimated-cycles`; see `measure::counters`): when every run agrees,
    /// one run per commit decides it ([`exact`]).
    Count {
        metric: String,
    },
    /// The first capture group of a regex over the command's stdout.
    Regex {
        pattern: String,
    },
    /// From the JUnit-style reports at `path` (a file or directory, relative to the
    /// candidate's directory): the sum of test times, or one test's time.
    Junit {
        path: String,
        test: Option<String>,
    },
}

/// Sensitivity mode: the property bisected is the ratio condition B / condition A.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    pub a_env: Vec<(String, String)>,
    pub b_env: Vec<(String, String)>,
    /// Wrappers put in front of the command, e.g. `taskset -c 0`.
    pub a_prefix: Option<String>,
    pub b_prefix: Option<String>,
}

/// What the candidates are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Mode {
    Commits {
        first_parent: bool,
    },
    /// Oldest first; `{version}` is substituted in the build, prepare and command.
    Versions {
        list: Vec<String>,
    },
}

/// Everything a bisection needs; saved in the state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub repo: PathBuf,
    pub good: String,
    pub bad: String,
    pub mode: Mode,
    pub build: Option<String>,
    pub prepare: Option<String>,
    /// The command, run with `sh -c` unless it is plain words (as `tardy run`).
    pub command: String,
    pub metric: Metric,
    pub conditions: Option<Conditions>,
    /// Boundary over good as a fraction (0.05 = 5%); `None`: half the regression.
    pub threshold: Option<f64>,
    /// Find an improvement: bad is faster than good.
    pub invert: bool,
    pub policy: Policy,
    pub seed: u64,
    pub timeout_s: Option<f64>,
    /// Runs taken at the same moment (`--jobs`); 1 = one at a time.
    #[serde(default = "one")]
    pub jobs: usize,
}

fn one() -> usize {
    1
}

impl Metric {
    /// The count this metric is, when it is one.
    pub fn count(&self) -> Option<crate::measure::counters::Metric> {
        match self {
            Metric::Count { metric } => crate::measure::counters::Metric::parse(metric)
                .ok()
                .filter(|m| m.is_count()),
            _ => None,
        }
    }
}

impl Config {
    /// Identifies what a sample means: runs are reused from the cache only when the
    /// command, metric, conditions, build and prepare are the same.
    pub fn signature(&self) -> String {
        // Runs taken N at a time are slower and noisier than runs taken
        // alone: they are not mixed (one at a time keeps its old signature).
        let mut parts = serde_json::json!([
            self.command,
            self.metric,
            self.conditions,
            self.build,
            self.prepare,
            self.repo
        ]);
        if self.jobs > 1
            && let Some(a) = parts.as_array_mut()
        {
            a.push(serde_json::json!({ "jobs": self.jobs }));
        }
        let key = parts.to_string();
        let mut h: u64 = 0xcbf29ce484222325;
        for b in key.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        format!("{h:016x}")
    }
}
