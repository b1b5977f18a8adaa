//! `tardy ci`: a pull request measured against its merge base in one job.
//!
//! Comparing a pull request with whatever ran last on the main branch, on
//! another runner at another hour, compares two machines: CodSpeed measured a
//! 2.66% coefficient of variation for the same code on hosted runners. Here the
//! base (by default the merge base of HEAD with the default branch) and the
//! head are checked out into worktrees, built there, and the same command is
//! measured in both, interleaved in shuffled rounds, so the runner's noise hits
//! both alike; the verdict is `tardy run`'s, with its interval.
//!
//! This module prepares the two sides (git and the builds) and builds the
//! session; measuring is `measure::session`'s, the statistics `analyze`'s, and
//! the text and Markdown `render::ci`'s.

pub mod comment;
pub mod summary;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::bisect::BisectError;
use crate::bisect::git::{self, CommitInfo};
use crate::measure::command::{self, CommandLine};
use crate::measure::error::MeasureError;
use crate::measure::session::{Accept, BenchmarkSpec, Budget, SessionConfig};
use crate::measure::spawn::{ExecOptions, OutputMode};
use crate::model::{Exec, Results};
use crate::stats::Estimate;

/// The schema of `tardy ci --json`.
pub const SCHEMA: &str = "tardy.ci";

/// What went wrong, in one line each.
#[derive(Debug, thiserror::Error)]
pub enum CiError {
    #[error(transparent)]
    Git(#[from] BisectError),
    #[error(
        "base and head are the same commit ({0}): on the default branch itself there is nothing to compare; give --base (e.g. --base HEAD~1)"
    )]
    Same(String),
    #[error(
        "no base: none of origin/HEAD, origin/main, origin/master, main or master exists here; give --base REV (in a shallow CI checkout, fetch with fetch-depth: 0)"
    )]
    NoDefaultBranch,
    #[error(
        "the build failed for the {side} ({commit}): `{command}` {how}; its last lines:\n{tail}"
    )]
    Build {
        side: &'static str,
        commit: String,
        command: String,
        how: String,
        tail: String,
    },
    #[error(transparent)]
    Measure(#[from] MeasureError),
    #[error("{0}")]
    Io(String),
}

/// What to measure and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where tardy was started (inside the repository).
    pub dir: PathBuf,
    /// The base revision; `None`: the merge base of `head` with the default branch.
    pub base: Option<String>,
    pub head: String,
    /// Run in each worktree before measuring (`sh -c`).
    pub build: Option<String>,
    /// The command measured in each worktree.
    pub command: String,
    /// Where the worktrees and build logs go (`.tardy/ci` of the repository).
    pub state_dir: Option<PathBuf>,
    /// How much to measure, and by what (wall time, instructions).
    pub budget: Budget,
    pub timeout: Option<Duration>,
    pub seed: u64,
    pub env: Vec<(String, String)>,
    /// Test reports the command writes, relative to each worktree (files,
    /// directories or globs): the last run's reports of both sides are
    /// compared test by test, as `tardy tests diff` does.
    pub tests: Option<String>,
}

/// One side: the revision as asked, its commit, and its worktree.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub role: &'static str,
    pub rev: String,
    pub commit: CommitInfo,
    pub dir: PathBuf,
    /// The build's output (`None` without --build).
    pub build_log: Option<PathBuf>,
}

impl Side {
    /// "abc1234567 subject".
    pub fn label(&self) -> String {
        format!("{} {}", short(&self.commit.commit), self.commit.subject)
    }
}

/// The commit hash cut to 10 characters.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// Both sides checked out (and built).
#[derive(Debug, Clone, Serialize)]
pub struct Prepared {
    pub repo: PathBuf,
    pub state_dir: PathBuf,
    pub base: Side,
    pub head: Side,
    /// How the base was chosen: "--base v1.2" or "merge base of HEAD and origin/main".
    pub base_from: String,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> CiError {
    CiError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Resolve both revisions, check them out into worktrees (reusing one that is
/// already at the right commit, build artefacts and all) and build them.
/// `say` hears each step.
pub fn prepare(o: &Options, say: &mut dyn FnMut(&str)) -> Result<Prepared, CiError> {
    let repo = git::toplevel(&o.dir)?;
    let head = git::resolve(&repo, &o.head)?;
    let (base, base_from) = match &o.base {
        Some(b) => (git::resolve(&repo, b)?, format!("--base {b}")),
        None => {
            let branch = git::default_branch(&repo).ok_or(CiError::NoDefaultBranch)?;
            let mb = git::merge_base(&repo, &branch, &head)?;
            (mb, format!("the merge base of {} and {branch}", o.head))
        }
    };
    if base == head {
        return Err(CiError::Same(short(&head).to_string()));
    }
    let state_dir = o
        .state_dir
        .clone()
        .unwrap_or_else(|| repo.join(".tardy").join("ci"));
    std::fs::create_dir_all(&state_dir).map_err(|e| io("create", &state_dir, e))?;
    let mut sides = Vec::new();
    for (role, rev, commit) in [
        ("base", base_from.clone(), base),
        ("head", o.head.clone(), head),
    ] {
        let dir = state_dir.join(format!("{role}-{}", short(&commit)));
        let at = std::process::Command::new("git")
            .arg("-C")
            .arg(&dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        if at.as_deref() == Some(commit.as_str()) {
            say(&format!("{role}: reusing the worktree {}", dir.display()));
        } else {
            if dir.exists() {
                let _ = git::remove_worktree(&repo, &dir);
                let _ = std::fs::remove_dir_all(&dir);
            }
            say(&format!(
                "{role}: checking out {} into {}",
                short(&commit),
                dir.display()
            ));
            git::add_worktree(&repo, &dir, &commit)?;
        }
        let info = git::info(&repo, &commit)?;
        sides.push(Side {
            role,
            rev,
            commit: info,
            dir,
            build_log: None,
        });
    }
    if let Some(build) = &o.build {
        for side in &mut sides {
            say(&format!("{}: building ({build})", side.role));
            side.build_log = Some(run_build(build, side, &state_dir, &o.env)?);
        }
    }
    let head = sides
        .pop()
        .ok_or_else(|| CiError::Io("no head side".into()))?;
    let base = sides
        .pop()
        .ok_or_else(|| CiError::Io("no base side".into()))?;
    Ok(Prepared {
        repo,
        state_dir,
        base,
        head,
        base_from,
    })
}

/// Run the build in the side's worktree, its output in a log beside it.
fn run_build(
    build: &str,
    side: &Side,
    state_dir: &Path,
    env: &[(String, String)],
) -> Result<PathBuf, CiError> {
    let log = state_dir.join(format!("{}-build.log", side.role));
    let f = std::fs::File::create(&log).map_err(|e| io("create", &log, e))?;
    let f2 = f.try_clone().map_err(|e| io("open", &log, e))?;
    let status = crate::measure::inherit::command(&mut std::process::Command::new("sh"))
        .args(["-c", build])
        .current_dir(&side.dir)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .stdout(f)
        .stderr(f2)
        .status()
        .map_err(|e| io("run the build in", &side.dir, e))?;
    if status.success() {
        return Ok(log);
    }
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(8)..].join("\n");
    Err(CiError::Build {
        side: side.role,
        commit: short(&side.commit.commit).to_string(),
        command: build.to_string(),
        how: match status.code() {
            Some(c) => format!("exited with {c}"),
            None => "was killed by a signal".to_string(),
        },
        tail: format!("{tail}\n(the whole log: {})", log.display()),
    })
}

/// The session: the same command in the base's and the head's worktree,
/// interleaved (base first, so it is the reference).
pub fn session(o: &Options, p: &Prepared) -> Result<SessionConfig, CiError> {
    let mut benchmarks = Vec::new();
    for side in [&p.base, &p.head] {
        let exec = match command::parse(&o.command, false)? {
            CommandLine::Direct(argv) => {
                command::resolve_program(&argv[0], Some(&side.dir))?;
                Exec::Direct { argv }
            }
            CommandLine::Shell(script) => Exec::Shell {
                shell: "sh".into(),
                script,
            },
        };
        benchmarks.push(BenchmarkSpec {
            name: format!("{} {}", side.role, short(&side.commit.commit)),
            command: o.command.clone(),
            exec,
            parameters: Default::default(),
            setup: None,
            prepare: None,
            conclude: None,
            cleanup: None,
            output: OutputMode::Null,
            cwd: Some(side.dir.clone()),
        });
    }
    let mut record = o.budget.record(o.seed, true);
    record.timeout_s = o.timeout.map(|d| d.as_secs_f64());
    record.env = o.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(SessionConfig {
        benchmarks,
        exec: ExecOptions {
            env: o.env.clone(),
            cwd: None,
            input: None,
            timeout: o.timeout,
            keep_stragglers: false,
            pmu: None,
        },
        budget: o.budget.clone(),
        seed: o.seed,
        interleaved: true,
        accept: Accept::OnlyZero,
        record,
    })
}

/// The verdict on head against base.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub schema: &'static str,
    pub base: Side,
    pub head: Side,
    pub base_from: String,
    pub command: String,
    /// Head against base (`None` when the runs could not be compared).
    pub estimate: Option<Estimate>,
    /// Why there is no estimate.
    pub error: Option<String>,
    /// The count the verdict is on (`--metric instructions`); absent: wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    /// Every run of both sides gave the same count: the difference is exact.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// The gate asked for (`--fail-if-slower`), as a fraction.
    pub fail_if_slower: Option<f64>,
    /// Head is proven slower than base by more than the gate: the whole
    /// interval of the ratio lies above 1 + gate.
    pub regression: bool,
    /// With `--tests`: the last run's test reports, head against base.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<crate::analyze::suite::Diff>,
    /// Why the test reports could not be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests_error: Option<String>,
}

/// Judge the measured session against the gate.
pub fn judge(p: &Prepared, command: &str, results: &Results, gate: Option<f64>) -> Judgement {
    // The comparison by the metric that decided the runs: wall time, or the
    // first count of --metric.
    let metric = results.options.metrics.first().filter(|m| *m != "wall");
    let cmp = results
        .comparisons
        .iter()
        .find(|c| c.metric.as_ref() == metric);
    let estimate = cmp.and_then(|c| c.estimate.clone());
    let error = cmp.and_then(|c| c.error.clone()).or_else(|| {
        cmp.is_none()
            .then(|| "the runs of one side could not be counted".to_string())
    });
    let regression = match (&estimate, gate) {
        (Some(e), Some(g)) => e.proven_slower() && e.ci_low.unwrap_or(e.ratio) - 1.0 > g,
        _ => false,
    };
    Judgement {
        schema: SCHEMA,
        base: p.base.clone(),
        head: p.head.clone(),
        base_from: p.base_from.clone(),
        command: command.to_string(),
        estimate,
        error,
        metric: cmp.and_then(|c| c.metric.clone()),
        exact: cmp.is_some_and(|c| c.exact),
        fail_if_slower: gate,
        regression,
        tests: None,
        tests_error: None,
    }
}

/// The test reports at `rel` in both worktrees, compared test by test.
fn tests_diff(p: &Prepared, rel: &str) -> Result<crate::analyze::suite::Diff, String> {
    let read = |side: &Side| {
        crate::ingest::reports::read_run(&[side.dir.join(rel)], false)
            .map_err(|e| format!("the {}'s test reports ({rel}): {e}", side.role))
    };
    let (b, h) = (read(&p.base)?, read(&p.head)?);
    Ok(crate::analyze::suite::diff(&[b], &[h]))
}

/// Remove both worktrees (their builds with them); the state directory stays.
pub fn remove_worktrees(p: &Prepared) {
    for side in [&p.base, &p.head] {
        let _ = git::remove_worktree(&p.repo, &side.dir);
        let _ = std::fs::remove_dir_all(&side.dir);
    }
}

/// Everything one `tardy ci` did.
#[derive(Debug)]
pub struct Outcome {
    pub prepared: Prepared,
    pub results: Results,
    pub judgement: Judgement,
    /// A failure while measuring (the runs taken before it are in `results`).
    pub error: Option<MeasureError>,
}

/// Prepare both sides, measure them interleaved, and judge head against base.
pub fn run(
    o: &Options,
    gate: Option<f64>,
    say: &mut dyn FnMut(&str),
    observer: &mut dyn crate::measure::session::Observer,
) -> Result<Outcome, CiError> {
    let prepared = prepare(o, say)?;
    let cfg = session(o, &prepared)?;
    say(&format!(
        "measuring `{}` in both worktrees, interleaved",
        o.command
    ));
    let (mut results, error) = crate::measure::session::run(&cfg, observer)?;
    crate::analyze::run::finalize(&mut results);
    let mut judgement = judge(&prepared, &o.command, &results, gate);
    if let Some(rel) = &o.tests {
        match tests_diff(&prepared, rel) {
            Ok(d) => judgement.tests = Some(d),
            Err(e) => judgement.tests_error = Some(e),
        }
    }
    Ok(Outcome {
        prepared,
        results,
        judgement,
        error,
    })
}

/// Head against base, recorded with `tardy explain`'s recorder in their
/// worktrees, interleaved: where the time went, and why head is slower.
pub struct Explained {
    pub base: crate::diagnose::explain::Trace,
    pub head: crate::diagnose::explain::Trace,
    pub comparison: crate::diagnose::explain::Comparison,
}

/// Record `runs` runs of each side (after one untraced warm-up each) and
/// compare them. Ctrl-C keeps the runs completed.
pub fn explain(o: &Options, p: &Prepared, runs: u64) -> Result<Explained, String> {
    use crate::diagnose::explain::session::{self, Spec};
    let spec = |side: &Side| -> Result<Spec, String> {
        let exec = match command::parse(&o.command, false).map_err(|e| e.to_string())? {
            CommandLine::Direct(argv) => Exec::Direct { argv },
            CommandLine::Shell(script) => Exec::Shell {
                shell: "sh".into(),
                script,
            },
        };
        Ok(Spec {
            // The same name on both sides: which is which is the side's.
            display: o.command.clone(),
            exec,
            options: crate::record::RecordOptions {
                env: o.env.clone(),
                cwd: Some(side.dir.clone()),
                timeout: o.timeout,
                straggler_wait: Duration::from_secs(10),
                show_output: false,
                trace: true,
                profile_hz: crate::profile::DEFAULT_HZ,
                log_events: false,
            },
        })
    };
    let specs = [spec(&p.base)?, spec(&p.head)?];
    let opts = session::Options {
        runs: runs.max(1),
        ignore_failure: false,
        overhead_check: false,
        recorder: crate::record::Choice::Auto,
        warmup: 1,
        prepare: None,
    };
    let outcome = session::record_set(&specs, &opts, &mut |_| {}).map_err(|e| e.to_string())?;
    let mut traces = outcome.traces.into_iter();
    let (Some(base), Some(head)) = (traces.next(), traces.next()) else {
        return Err("the recorder returned no traces".into());
    };
    let comparison = crate::diagnose::explain::compare(&base, &head);
    Ok(Explained {
        base,
        head,
        comparison,
    })
}
