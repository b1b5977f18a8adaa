//! The git operations bisection needs, through the `git` program: find the
//! repository, resolve revisions, list the commits between two of them, describe a
//! commit, and add or remove detached worktrees (the user's working tree is never
//! touched).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::BisectError;

/// A commit as shown in reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitInfo {
    pub commit: String,
    pub subject: String,
    pub author: String,
    /// Author date, ISO 8601.
    pub date: String,
}

fn git(repo: &Path, args: &[&str]) -> Result<String, BisectError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| BisectError::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        return Err(BisectError::Git(format!(
            "git {} failed: {first}",
            args.join(" ")
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_string())
}

/// The top directory of the repository containing `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, BisectError> {
    git(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|_| BisectError::NotARepository(dir.display().to_string()))
}

/// The full hash of `rev` (a commit).
pub fn resolve(repo: &Path, rev: &str) -> Result<String, BisectError> {
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .ok()
    .filter(|h| !h.is_empty())
    .ok_or_else(|| BisectError::UnknownRevision(rev.to_string()))
}

/// Whether `a` is an ancestor of `b`.
pub fn is_ancestor(repo: &Path, a: &str, b: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["merge-base", "--is-ancestor", a, b])
        .status()
        .is_ok_and(|s| s.success())
}

/// The commits after `good` up to and including `bad`, oldest first, on the
/// ancestry path (`--first-parent` follows only first parents, like git bisect's).
pub fn commits_between(
    repo: &Path,
    good: &str,
    bad: &str,
    first_parent: bool,
) -> Result<Vec<String>, BisectError> {
    let range = format!("{good}..{bad}");
    let mut args = vec!["rev-list", "--reverse", "--ancestry-path"];
    if first_parent {
        args.push("--first-parent");
    }
    args.push(&range);
    let out = git(repo, &args)?;
    Ok(out.lines().map(str::to_string).collect())
}

/// Subject, author and date of `commit`.
pub fn info(repo: &Path, commit: &str) -> Result<CommitInfo, BisectError> {
    let out = git(
        repo,
        &["show", "-s", "--format=%H%x00%s%x00%an%x00%aI", commit],
    )?;
    let mut parts = out.split('\0');
    Ok(CommitInfo {
        commit: parts.next().unwrap_or(commit).to_string(),
        subject: parts.next().unwrap_or("").to_string(),
        author: parts.next().unwrap_or("").to_string(),
        date: parts.next().unwrap_or("").to_string(),
    })
}

/// Check `commit` out, detached, into `dir` (a new directory).
pub fn add_worktree(repo: &Path, dir: &Path, commit: &str) -> Result<(), BisectError> {
    let d = dir.to_string_lossy();
    git(
        repo,
        &["worktree", "add", "--detach", "--force", &d, commit],
    )
    .map(|_| ())
}

/// Remove the worktree at `dir` (and git's record of it).
pub fn remove_worktree(repo: &Path, dir: &Path) -> Result<(), BisectError> {
    let d = dir.to_string_lossy();
    let r = git(repo, &["worktree", "remove", "--force", &d]).map(|_| ());
    let _ = git(repo, &["worktree", "prune"]);
    r
}

/// The branch pull requests merge into, as a revision: `origin/$GITHUB_BASE_REF`
/// in a GitHub pull-request job, else the remote's default branch
/// (`origin/HEAD`), else the first of origin/main, origin/master, main, master
/// that exists.
pub fn default_branch(repo: &Path) -> Option<String> {
    let mut tries = Vec::new();
    if let Ok(b) = std::env::var("GITHUB_BASE_REF")
        && !b.is_empty()
    {
        tries.push(format!("origin/{b}"));
        tries.push(b);
    }
    if let Ok(r) = git(
        repo,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    ) && !r.is_empty()
    {
        tries.push(r);
    }
    for b in ["origin/main", "origin/master", "main", "master"] {
        tries.push(b.to_string());
    }
    tries.into_iter().find(|b| resolve(repo, b).is_ok())
}

/// The best common ancestor of `a` and `b`.
pub fn merge_base(repo: &Path, a: &str, b: &str) -> Result<String, BisectError> {
    git(repo, &["merge-base", a, b])
}
