//! Which history database a command means, opened: `--db PATH` (a SQLite
//! file, `sqlite:PATH`, `postgres://...`, or `git:BRANCH` for a history
//! kept in a branch of the repository, [`super::branch`]), else
//! `.tardy/tardy.db` at the repository's top (or here); and the provenance
//! of a point saved now.

use std::path::{Path, PathBuf};

use crate::history::import;
use crate::server::pool::Backend;
use crate::store::history::Provenance;
use crate::store::{DbError, History};

/// The database path: `db`, else .tardy/tardy.db at the repository's top or here.
pub fn db_path(db: Option<&Path>) -> PathBuf {
    if let Some(p) = db {
        return p.to_path_buf();
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = import::repo_root(&here).unwrap_or(here);
    root.join(".tardy").join("tardy.db")
}

/// Where the history is: a SQLite file (`PATH` or `sqlite:PATH`) or a
/// PostgreSQL database (`postgres://...`).
pub fn backend(db: Option<&Path>) -> Backend {
    Backend::parse(&db_path(db).to_string_lossy())
}

/// Where the history is, in words ("SQLite file .tardy/tardy.db", "branch
/// perf-history of /repo").
pub fn describe(db: Option<&Path>) -> String {
    match super::branch::branch_of(db) {
        Some(b) => format!("branch {b}"),
        None => backend(db).describe(),
    }
}

/// Open (or make) the history database of `project`.
pub fn open(db: Option<&Path>, project: &str) -> Result<Box<dyn History + Send>, DbError> {
    if let Some(branch) = super::branch::branch_of(db) {
        let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        return Ok(Box::new(super::branch::BranchHistory::open(
            &here, &branch, project,
        )?));
    }
    let backend = backend(db);
    let store = backend.open(project)?;
    if let Backend::Sqlite(path) = &backend {
        ignore_dir(path);
    }
    Ok(store)
}

/// Open a database that must exist already: commands that only read (or
/// change alerts) never create one (`history show --db typo.db` made an
/// empty `typo.db`).
pub fn open_existing(db: Option<&Path>, project: &str) -> Result<Box<dyn History + Send>, String> {
    if super::branch::branch_of(db).is_none()
        && let Backend::Sqlite(path) = backend(db)
        && !path.exists()
    {
        return Err(format!(
            "no history database at '{}' (`tardy run --save` and `tardy history import` make one)",
            path.display()
        ));
    }
    open(db, project).map_err(|e| e.to_string())
}

/// Keep `git status` clean: a `.gitignore` of `*` in a `.tardy` directory we made.
fn ignore_dir(db: &Path) {
    if let Some(dir) = db.parent()
        && dir.file_name().is_some_and(|n| n == ".tardy")
    {
        let gi = dir.join(".gitignore");
        if !gi.exists() {
            let _ = std::fs::write(gi, "*\n");
        }
    }
}

/// Provenance of a point saved now: git HEAD (or `commit`) when in a repository.
pub fn provenance_now(commit: Option<&str>, branch: Option<&str>) -> Result<Provenance, String> {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut p = match import::git_provenance(&here, commit) {
        Some(p) => p,
        None => match commit {
            Some(c) if import::repo_root(&here).is_some() => {
                return Err(format!(
                    "--commit: '{c}' is not a commit of this repository"
                ));
            }
            Some(c) => Provenance {
                commit: Some(c.to_string()),
                run_time: import::now_s(),
                ..Provenance::default()
            },
            None => Provenance {
                run_time: import::now_s(),
                ..Provenance::default()
            },
        },
    };
    if let Some(b) = branch {
        p.branch = Some(b.to_string());
    }
    Ok(p)
}

/// The provenance `history import` stamps: HEAD's commit with `--commit`,
/// or only a branch or a time (no commit of HEAD implied).
pub fn import_provenance(
    commit: Option<&str>,
    branch: Option<&str>,
    time: Option<&str>,
) -> Result<Option<Provenance>, String> {
    if commit.is_none() && branch.is_none() && time.is_none() {
        return Ok(None);
    }
    let mut p = provenance_now(commit, branch)?;
    if commit.is_none() {
        p.commit = None;
        p.commit_time = None;
    }
    if let Some(t) = time {
        p.run_time = import::parse_time(t)
            .ok_or_else(|| format!("--time: '{t}' is not a time (try 2026-11-20T10:00:00Z)"))?;
    }
    Ok(Some(p))
}
