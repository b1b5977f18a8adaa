//! A bisection as one library call: [`Request`] holds what the command
//! line said (plain values), [`config`] checks it and finds the
//! repository, [`start`] resumes or begins one in its state directory,
//! and [`search`] runs it to its report, telling an observer each event.

use std::path::{Path, PathBuf};

use super::decide::Policy;
use super::engine::{self, Event, Report};
use super::{BisectError, Conditions, Config, Metric, Mode, git, state};
use crate::measure::command::join_quoted;

/// A bisection as asked for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub good: Option<String>,
    pub bad: Option<String>,
    pub build: Option<String>,
    pub prepare: Option<String>,
    /// `--versions a,b,c` (oldest first), or a file of one version a line.
    pub versions: Option<String>,
    pub versions_file: Option<PathBuf>,
    pub first_parent: bool,
    /// wall, cpu, user, sys, rss, instructions, cycles, estimated-cycles.
    pub metric: String,
    pub metric_regex: Option<String>,
    pub metric_junit: Option<String>,
    pub metric_test: Option<String>,
    /// KEY=VALUE settings of the sensitivity mode's two conditions.
    pub condition_a: Vec<String>,
    pub condition_b: Vec<String>,
    pub prefix_a: Option<String>,
    pub prefix_b: Option<String>,
    /// The boundary as a fraction (None: half the regression).
    pub threshold: Option<f64>,
    pub invert: bool,
    /// As a fraction (0.95).
    pub confidence: f64,
    pub max_runs: usize,
    pub seed: u64,
    pub timeout: Option<f64>,
    pub jobs: usize,
    /// The command and its arguments.
    pub cmd: Vec<String>,
}

/// The state directory: `explicit`, else `.tardy/bisect` at the
/// repository's top (or here).
pub fn default_state(explicit: Option<PathBuf>) -> Result<PathBuf, BisectError> {
    if let Some(d) = explicit {
        return Ok(d);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| BisectError::Input(format!("no working directory: {e}")))?;
    let top = git::toplevel(&cwd).unwrap_or(cwd);
    Ok(top.join(".tardy").join("bisect"))
}

/// The bisection's configuration, every option checked (a count this
/// machine cannot take is said now, before the first build).
pub fn config(a: &Request) -> Result<Config, BisectError> {
    let command = match a.cmd.len() {
        0 => {
            return Err(BisectError::Input(
                "nothing to measure: give the command after --, e.g. tardy bisect --good v1 --bad main -- ./bench".into(),
            ));
        }
        1 => a.cmd[0].clone(),
        _ => join_quoted(&a.cmd),
    };
    if a.confidence < 0.5 {
        return Err(BisectError::Input(format!(
            "--confidence must be at least 50% (95, 95% or 0.95), not {}%",
            a.confidence * 100.0
        )));
    }
    if a.max_runs < 6 {
        return Err(BisectError::Input("--max-runs must be at least 6".into()));
    }
    let versions = versions_of(a)?;
    let (mode, repo, good, bad) = mode_of(a, versions)?;
    Ok(Config {
        repo,
        good,
        bad,
        mode,
        build: a.build.clone(),
        prepare: a.prepare.clone(),
        command,
        metric: metric_of(a)?,
        conditions: conditions_of(a)?,
        threshold: a.threshold,
        invert: a.invert,
        policy: Policy {
            max_runs: a.max_runs,
            confidence: a.confidence,
            ..Policy::default()
        },
        seed: a.seed,
        timeout_s: a.timeout,
        jobs: a.jobs,
    })
}

fn env_pairs(list: &[String], flag: &str) -> Result<Vec<(String, String)>, BisectError> {
    list.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| BisectError::Input(format!("--{flag} takes KEY=VALUE, not '{kv}'")))
        })
        .collect()
}

/// `--metric`, `--metric-regex` or `--metric-junit` (checked now: a count
/// this machine cannot take is said before the first build).
fn metric_of(a: &Request) -> Result<Metric, BisectError> {
    let metric = match (&a.metric_regex, &a.metric_junit, a.metric.as_str()) {
        (Some(_), Some(_), _) => {
            return Err(BisectError::Input(
                "--metric-regex and --metric-junit exclude each other".into(),
            ));
        }
        (Some(re), None, _) => {
            regex::Regex::new(re)
                .map_err(|e| BisectError::Input(format!("--metric-regex: {e}")))?;
            Metric::Regex {
                pattern: re.clone(),
            }
        }
        (None, Some(p), _) => Metric::Junit {
            path: p.clone(),
            test: a.metric_test.clone(),
        },
        (None, None, "wall") => Metric::Wall,
        (None, None, "cpu") => Metric::Cpu,
        (None, None, "user") => Metric::User,
        (None, None, "sys") => Metric::Sys,
        (None, None, "rss") => Metric::Rss,
        (None, None, other @ ("instructions" | "cycles" | "estimated-cycles")) => {
            let m = crate::measure::counters::Metric::parse(other).map_err(BisectError::Input)?;
            // Say now, not at the first run, when this machine cannot count it.
            crate::measure::counters::choose(
                &[m],
                crate::measure::counters::BackendChoice::Auto,
                false,
            )
            .map_err(|e| BisectError::Input(e.to_string()))?;
            Metric::Count {
                metric: m.name().to_string(),
            }
        }
        (None, None, other) => {
            return Err(BisectError::Input(format!(
                "--metric is wall, cpu, user, sys, rss, instructions, cycles or estimated-cycles, not '{other}'"
            )));
        }
    };
    Ok(metric)
}

fn conditions_of(a: &Request) -> Result<Option<Conditions>, BisectError> {
    let conditions = if a.condition_a.is_empty()
        && a.condition_b.is_empty()
        && a.prefix_a.is_none()
        && a.prefix_b.is_none()
    {
        None
    } else {
        Some(Conditions {
            a_env: env_pairs(&a.condition_a, "condition-a")?,
            b_env: env_pairs(&a.condition_b, "condition-b")?,
            a_prefix: a.prefix_a.clone(),
            b_prefix: a.prefix_b.clone(),
        })
    };
    Ok(conditions)
}

/// `--versions a,b,c` or `--versions-file`: the versions, oldest first.
fn versions_of(a: &Request) -> Result<Option<Vec<String>>, BisectError> {
    let versions = match (&a.versions, &a.versions_file) {
        (Some(v), _) => Some(
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>(),
        ),
        (None, Some(f)) => Some(
            std::fs::read_to_string(f)
                .map_err(|e| BisectError::Input(format!("{}: cannot read: {e}", f.display())))?
                .lines()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .collect(),
        ),
        (None, None) => None,
    };
    Ok(versions)
}

/// Commits of the repository here, or the versions given; and the ends.
fn mode_of(
    a: &Request,
    versions: Option<Vec<String>>,
) -> Result<(Mode, std::path::PathBuf, String, String), BisectError> {
    let cwd = std::env::current_dir()
        .map_err(|e| BisectError::Input(format!("no working directory: {e}")))?;
    let (mode, repo, good, bad) = match versions {
        Some(list) => {
            if list.len() < 2 {
                return Err(BisectError::Input(
                    "--versions needs at least two versions, oldest first".into(),
                ));
            }
            let good = a.good.clone().unwrap_or_else(|| list[0].clone());
            let bad = a
                .bad
                .clone()
                .unwrap_or_else(|| list[list.len() - 1].clone());
            (Mode::Versions { list }, cwd, good, bad)
        }
        None => {
            let (Some(good), Some(bad)) = (&a.good, &a.bad) else {
                return Err(BisectError::Input(
                    "give --good REV and --bad REV (or --versions)".into(),
                ));
            };
            let repo = git::toplevel(&cwd)?;
            (
                Mode::Commits {
                    first_parent: a.first_parent,
                },
                repo,
                good.clone(),
                bad.clone(),
            )
        }
    };
    Ok((mode, repo, good, bad))
}

/// The bisection in `dir`: resumed (`resume`), or new from `request`
/// (refusing to overwrite an unfinished one); with what the cache of
/// earlier builds gave it.
pub fn start(
    dir: &Path,
    resume: bool,
    request: &Request,
    cache: bool,
) -> Result<(state::State, state::CacheUse), BisectError> {
    if resume {
        return Ok((state::load(dir)?, state::CacheUse::None));
    }
    let cfg = config(request)?;
    if state::state_file(dir).exists()
        && let Ok(old) = state::load(dir)
        && !old.finished
    {
        return Err(BisectError::Input(format!(
            "an unfinished bisection is saved in {}: continue it with --resume, or remove it with `tardy bisect reset`",
            dir.display()
        )));
    }
    engine::new_state(cfg, dir, cache)
}

/// Run the search to its report. A new bisection that could not even
/// measure its ends leaves nothing worth resuming: its worktrees and
/// state are removed.
pub fn search(
    st: &mut state::State,
    dir: &Path,
    resumed: bool,
    on: &mut dyn FnMut(Event),
) -> Result<Report, BisectError> {
    engine::run(st, dir, on).inspect_err(|e| {
        if !resumed && st.endpoints.is_none() && !matches!(e, BisectError::Interrupted) {
            let _ = engine::reset(dir);
        }
    })
}

/// How many candidates' worktrees stay in `dir`.
pub fn worktrees_kept(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("worktrees")).map_or(0, |d| d.count())
}
