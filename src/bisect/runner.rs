//! Preparing a candidate and taking one sample there. A commit gets a detached
//! worktree of its own under the state directory and the `--build` command runs in
//! it once (failure = skip, like `git bisect run`'s exit 125); a version gets
//! `{version}` substituted and `--prepare` run once. A sample is one run of the
//! command and its metric, or in sensitivity mode one run under each condition (in
//! random order) and the ratio B / A.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::measure::command::{self, CommandLine};
use crate::measure::spawn::{ExecOptions, Executor, OutputMode, RunOutcome};
use crate::measure::stragglers::Straggler;
use crate::model::Exec;
use crate::stats::rng::SplitMix64;

use super::{BisectError, Config, Metric, Mode, git};

/// The result of preparing a candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    Ready(PathBuf),
    /// Could not be built or prepared: the reason (last lines of the output).
    Skip(String),
}

/// `{commit}` / `{version}` substituted.
pub fn substitute(text: &str, key: &str) -> String {
    text.replace("{commit}", key).replace("{version}", key)
}

fn shell(script: &str, dir: &Path) -> Result<(), String> {
    let out = crate::measure::inherit::command(&mut std::process::Command::new("sh"))
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = tail[tail.len().saturating_sub(2)..].join(" / ");
    Err(format!(
        "`{script}` {}{}",
        match out.status.code() {
            Some(c) => format!("exited with code {c}"),
            None => "was killed by a signal".into(),
        },
        if tail.is_empty() {
            String::new()
        } else {
            format!(": {tail}")
        }
    ))
}

/// Make `key` (a commit hash or a version) ready to measure.
pub fn prepare(cfg: &Config, state_dir: &Path, key: &str) -> Result<Prepared, BisectError> {
    let dir = match &cfg.mode {
        Mode::Commits { .. } => {
            let dir = worktree_dir(state_dir, key);
            if !dir.join(".git").exists() {
                if dir.exists() {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                std::fs::create_dir_all(dir.parent().unwrap_or(state_dir)).map_err(|e| {
                    BisectError::Io {
                        path: dir.display().to_string(),
                        message: e.to_string(),
                    }
                })?;
                git::add_worktree(&cfg.repo, &dir, key).map_err(|e| BisectError::Io {
                    path: dir.display().to_string(),
                    message: e.to_string(),
                })?;
            }
            dir
        }
        Mode::Versions { .. } => cfg.repo.clone(),
    };
    for script in [&cfg.prepare, &cfg.build].into_iter().flatten() {
        if let Err(why) = shell(&substitute(script, key), &dir) {
            return Ok(Prepared::Skip(why));
        }
    }
    Ok(Prepared::Ready(dir))
}

/// Where the worktree of `commit` lives.
pub fn worktree_dir(state_dir: &Path, commit: &str) -> PathBuf {
    state_dir
        .join("worktrees")
        .join(&commit[..commit.len().min(12)])
}

pub(crate) fn exec_of(command_line: &str) -> Result<Exec, String> {
    Ok(
        match command::parse(command_line, false).map_err(|e| e.to_string())? {
            CommandLine::Direct(argv) => Exec::Direct { argv },
            CommandLine::Shell(script) => Exec::Shell {
                shell: "sh".into(),
                script,
            },
        },
    )
}

/// One run of `command_line` in `dir`, returning the metric's value.
fn run_once(
    cfg: &Config,
    command_line: &str,
    dir: &Path,
    env: &[(String, String)],
    left: &mut Vec<Straggler>,
) -> Result<f64, String> {
    let exec = exec_of(command_line)?;
    let opts = ExecOptions {
        env: env.to_vec(),
        cwd: Some(dir.to_path_buf()),
        input: None,
        timeout: cfg.timeout_s.map(Duration::from_secs_f64),
        keep_stragglers: false,
        pmu: None,
    };
    let capture = matches!(cfg.metric, Metric::Regex { .. });
    let out_file = if capture {
        Some(tempfile::tempfile().map_err(|e| format!("cannot create a temporary file: {e}"))?)
    } else {
        None
    };
    let mode = if capture {
        OutputMode::File(PathBuf::from("(captured stdout)"))
    } else {
        OutputMode::Null
    };
    if let Some(m) = cfg.metric.count() {
        return count_once(m, command_line, &exec, &opts, left);
    }
    let mut ex = Executor::new(command_line, &exec, &mode, out_file.as_ref(), &opts)
        .map_err(|e| e.to_string())?;
    let o = ex.run(None, out_file.as_ref());
    left.extend(ex.take_stragglers());
    let o: RunOutcome = o.map_err(|e| e.to_string())?;
    if o.interrupted {
        return Err("interrupted".into());
    }
    if !o.success() {
        return Err(format!("`{command_line}` {}", o.describe()));
    }
    let secs = |ns: u64| ns as f64 / 1e9;
    match &cfg.metric {
        Metric::Wall => Ok(secs(o.wall_ns)),
        Metric::Cpu => Ok(secs(o.user_ns + o.sys_ns)),
        Metric::User => Ok(secs(o.user_ns)),
        Metric::Sys => Ok(secs(o.sys_ns)),
        Metric::Rss => Ok(o.max_rss_kib as f64),
        Metric::Count { .. } => Err("a count is taken by count_once".into()),
        Metric::Regex { pattern } => {
            use std::io::{Read, Seek};
            let mut f = out_file.ok_or("no captured output")?;
            let mut text = String::new();
            f.seek(std::io::SeekFrom::Start(0))
                .and_then(|_| f.read_to_string(&mut text))
                .map_err(|e| format!("cannot read the command's output: {e}"))?;
            let re = regex::Regex::new(pattern).map_err(|e| format!("--metric-regex: {e}"))?;
            let cap = re.captures(&text).and_then(|c| c.get(1)).ok_or_else(|| {
                format!("--metric-regex '{pattern}' did not match the output of `{command_line}`")
            })?;
            cap.as_str()
                .trim()
                .parse::<f64>()
                .map_err(|_| format!("--metric-regex captured '{}', not a number", cap.as_str()))
        }
        Metric::Junit { path, test } => {
            let report = crate::ingest::reports::read_run(&glob(dir, path)?, false)
                .map_err(|e| e.to_string())?;
            match test {
                None => Ok(report.total_s()),
                Some(name) => report
                    .cases
                    .iter()
                    .find(|c| c.id.name == *name || c.id.display() == *name)
                    .and_then(|c| c.duration_s)
                    .ok_or_else(|| format!("no test named '{name}' with a duration in {path}")),
            }
        }
    }
}

/// One counted run of `exec`: its count of `metric` (the PMU where there is
/// one, else cachegrind).
fn count_once(
    metric: crate::measure::counters::Metric,
    command_line: &str,
    exec: &Exec,
    opts: &ExecOptions,
    left: &mut Vec<Straggler>,
) -> Result<f64, String> {
    use crate::measure::counters::{self, BackendChoice, CountingExecutor};
    let counter = counters::choose(&[metric], BackendChoice::Auto, false)
        .map_err(|e| e.to_string())?
        .ok_or("no counter for this metric")?;
    let mut ex = CountingExecutor::new(&counter, command_line, exec, &OutputMode::Null, None, opts)
        .map_err(|e| e.to_string())?;
    let r = ex.run(None, None);
    left.extend(ex.take_stragglers());
    let (o, counts) = r.map_err(|e| e.to_string())?;
    if o.interrupted {
        return Err("interrupted".into());
    }
    if !o.success() {
        return Err(format!("`{command_line}` {}", o.describe()));
    }
    counts
        .as_ref()
        .and_then(|c| metric.of(c))
        .map(|v| v as f64)
        .ok_or_else(|| format!("no {} were counted for `{command_line}`", metric.name()))
}

/// `*` wildcards in the last component of `pattern` (relative to `dir`), e.g.
/// `target/surefire-reports/TEST-*.xml`; a plain path is itself (a file or directory).
pub fn glob(dir: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    let full = dir.join(pattern);
    let name = full
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains('*') {
        return Ok(vec![full]);
    }
    let parent = full.parent().unwrap_or(dir);
    let parts: Vec<&str> = name.split('*').collect();
    let matches = |n: &str| {
        let (first, last) = (parts[0], parts[parts.len() - 1]);
        if !n.starts_with(first) || !n.ends_with(last) || n.len() < first.len() + last.len() {
            return false;
        }
        let mut rest = &n[first.len()..n.len() - last.len()];
        for mid in &parts[1..parts.len() - 1] {
            match rest.find(mid) {
                Some(i) => rest = &rest[i + mid.len()..],
                None => return false,
            }
        }
        true
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(parent)
        .map_err(|e| {
            format!(
                "--metric-junit {pattern}: cannot list {}: {e}",
                parent.display()
            )
        })?
        .flatten()
        .filter(|e| matches(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!(
            "--metric-junit {pattern}: no file matches in {}",
            parent.display()
        ));
    }
    Ok(out)
}

/// One sample of `key` in `dir`: the metric, or B / A in sensitivity mode. Returns the
/// value and how many times the command ran.
pub fn sample(
    cfg: &Config,
    key: &str,
    dir: &Path,
    rng: &mut SplitMix64,
    left: &mut Vec<Straggler>,
) -> Result<(f64, u64), String> {
    let command_line = substitute(&cfg.command, key);
    match &cfg.conditions {
        None => run_once(cfg, &command_line, dir, &[], left).map(|v| (v, 1)),
        Some(c) => {
            let with = |prefix: &Option<String>| match prefix {
                Some(p) => format!("{p} {command_line}"),
                None => command_line.clone(),
            };
            let (a_cmd, b_cmd) = (with(&c.a_prefix), with(&c.b_prefix));
            let (a, b) = if rng.next_f64() < 0.5 {
                let a = run_once(cfg, &a_cmd, dir, &c.a_env, left)?;
                (a, run_once(cfg, &b_cmd, dir, &c.b_env, left)?)
            } else {
                let b = run_once(cfg, &b_cmd, dir, &c.b_env, left)?;
                (run_once(cfg, &a_cmd, dir, &c.a_env, left)?, b)
            };
            if a <= 0.0 {
                return Err(format!(
                    "condition A measured {a}: a ratio needs a positive value"
                ));
            }
            Ok((b / a, 2))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_stars_in_the_file_name() {
        let d = tempfile::tempdir().unwrap();
        for f in ["TEST-a.xml", "TEST-b.xml", "other.xml", "TEST-c.txt"] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        let got = glob(d.path(), "TEST-*.xml").unwrap();
        let names: Vec<String> = got
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["TEST-a.xml", "TEST-b.xml"]);
        assert_eq!(glob(d.path(), "*-b*").unwrap().len(), 1);
        assert!(glob(d.path(), "none-*").is_err());
        assert_eq!(
            glob(d.path(), "plain.xml").unwrap(),
            [d.path().join("plain.xml")]
        );
    }
}
