//! History without a server: `--db git:BRANCH` keeps every saved run as one
//! line of JSON in a branch of the repository (as github-action-benchmark
//! keeps its data in `gh-pages`), one append-only JSON Lines file per series
//! group (`nightly.jsonl` for `nightly/build` and `nightly/test`).
//!
//! Opening reads the branch (fetched from `origin` first, when there is one)
//! into a scratch SQLite database, so every command reads it as it reads any
//! history: `history show/detect/alerts/export`, `report`. Saving writes the
//! new runs to that database and appends their lines to the branch with a
//! commit of its own, made without touching the working tree or the index
//! (a temporary index, `commit-tree`), then pushes it. A push refused because
//! another job pushed first (non-fast-forward) is retried on top of theirs:
//! lines are merged by run id, so nothing is lost and nothing is stored twice.
//!
//! What lives only in the scratch database is gone when the command ends:
//! alerts are found again by `history detect` from the points; acknowledging
//! one needs a database that stays (a file or `tardy serve`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::server::pool::Backend;
use crate::store::db::{DetectionKey, TestId, TestVisitor, TestWindow, VectorVisitor};
use crate::store::history::{
    Alert, AlertMark, AlertState, Annotation, DetectionState, MachineInfo, Point, PointFilter,
    SeriesInfo, SeriesOrder, Upload, UploadInfo, UploadOutcome,
};
use crate::store::{Batch, DbError, History};

/// How `--db` names a branch: `git:BRANCH`.
pub const PREFIX: &str = "git:";

/// Pushes tried before giving up, each after a fetch of the other jobs' runs.
const ATTEMPTS: u32 = 10;

/// The branch `db` names (`git:BRANCH`), if it names one.
pub fn branch_of(db: Option<&Path>) -> Option<String> {
    let s = db?.to_str()?;
    s.strip_prefix(PREFIX).map(str::to_string)
}

/// One saved run: a line of a branch's file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Line {
    run_id: String,
    batches: Vec<Batch>,
}

/// A history kept in a git branch (see the module's description).
pub struct BranchHistory {
    inner: Box<dyn History + Send>,
    _scratch: tempfile::TempDir,
    repo: PathBuf,
    branch: String,
    /// `origin`, when the repository has it.
    remote: Option<String>,
}

fn bad(detail: impl Into<String>) -> DbError {
    DbError::Invalid(detail.into())
}

/// Run git in `repo`; its stdout, or what it said on failure.
fn git(
    repo: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    input: Option<&[u8]>,
) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut c = Command::new("git");
    c.current_dir(repo)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin
            .write_all(bytes)
            .map_err(|e| format!("cannot write to git: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8_lossy(&b).trim().to_string()
}

/// The file a run's lines go to: the first part of its first series' name.
fn file_of(line: &Line) -> String {
    let name = line
        .batches
        .first()
        .map_or("history", |b| b.spec.name.as_str());
    let group = name.split('/').next().unwrap_or(name);
    let safe: String = group
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let safe = safe.trim_start_matches('.');
    format!("{}.jsonl", if safe.is_empty() { "history" } else { safe })
}

impl BranchHistory {
    /// Open `branch` of the repository around `dir`: fetched, read into a
    /// scratch database. A branch that does not exist yet is an empty
    /// history (the first save makes it).
    pub fn open(dir: &Path, branch: &str, project: &str) -> Result<BranchHistory, DbError> {
        let repo = crate::history::import::repo_root(dir).ok_or_else(|| {
            bad(format!(
                "--db {PREFIX}{branch}: '{}' is not in a git repository",
                dir.display()
            ))
        })?;
        git(&repo, &["check-ref-format", "--branch", branch], &[], None)
            .map_err(|_| bad(format!("--db {PREFIX}{branch}: not a branch name")))?;
        let remote = git(&repo, &["remote"], &[], None)
            .ok()
            .map(text)
            .filter(|r| r.lines().any(|l| l == "origin"))
            .map(|_| "origin".to_string());
        let scratch = tempfile::tempdir().map_err(|e| bad(format!("no scratch directory: {e}")))?;
        let inner = Backend::Sqlite(scratch.path().join("history.db")).open(project)?;
        let mut h = BranchHistory {
            inner,
            _scratch: scratch,
            repo,
            branch: branch.to_string(),
            remote,
        };
        h.fetch();
        if let Some(tip) = h.tip() {
            for (_, lines) in h.files_at(&tip)? {
                for line in lines {
                    let upload = Upload {
                        run_id: line.run_id.clone(),
                        kind: "branch".into(),
                    };
                    h.inner.save_upload(&upload, &line.batches)?;
                }
            }
        }
        Ok(h)
    }

    /// Where the branch is said to be: `git:BRANCH` and the repository.
    pub fn describe(&self) -> String {
        format!(
            "branch {} of {}{}",
            self.branch,
            self.repo.display(),
            if self.remote.is_some() {
                " (pushed to origin)"
            } else {
                ""
            }
        )
    }

    fn remote_ref(&self) -> String {
        format!("refs/remotes/origin/{}", self.branch)
    }

    /// The other jobs' runs: origin's branch, when there is an origin (a
    /// branch it does not have yet is no error).
    fn fetch(&self) {
        if self.remote.is_some() {
            let spec = format!("+refs/heads/{}:{}", self.branch, self.remote_ref());
            let _ = git(
                &self.repo,
                &["fetch", "--quiet", "origin", &spec],
                &[],
                None,
            );
        }
    }

    /// The newest commit of the branch: origin's when there is an origin,
    /// else the local branch's.
    fn tip(&self) -> Option<String> {
        let local = format!("refs/heads/{}", self.branch);
        let refs = match &self.remote {
            Some(_) => vec![self.remote_ref(), local],
            None => vec![local],
        };
        refs.iter().find_map(|r| {
            git(
                &self.repo,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{r}^{{commit}}"),
                ],
                &[],
                None,
            )
            .ok()
            .map(text)
        })
    }

    /// Every `.jsonl` file of `commit`, each line read.
    fn files_at(&self, commit: &str) -> Result<BTreeMap<String, Vec<Line>>, DbError> {
        let names = git(&self.repo, &["ls-tree", "--name-only", commit], &[], None).map_err(bad)?;
        let mut files = BTreeMap::new();
        for name in text(names).lines().filter(|n| n.ends_with(".jsonl")) {
            let body = git(
                &self.repo,
                &["cat-file", "blob", &format!("{commit}:{name}")],
                &[],
                None,
            )
            .map_err(bad)?;
            let mut lines = Vec::new();
            for (i, l) in String::from_utf8_lossy(&body).lines().enumerate() {
                if l.trim().is_empty() {
                    continue;
                }
                let line: Line = serde_json::from_str(l).map_err(|e| {
                    bad(format!(
                        "branch {}: {name}:{}: not a line tardy wrote: {e}",
                        self.branch,
                        i + 1
                    ))
                })?;
                lines.push(line);
            }
            files.insert(name.to_string(), lines);
        }
        Ok(files)
    }

    /// Append `new` to the branch in one commit and push it, on top of
    /// whatever the other jobs pushed meanwhile.
    fn append(&self, new: &[Line]) -> Result<(), DbError> {
        let mut last = String::new();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                // Someone pushed first: take their runs, then ours again on top.
                std::thread::sleep(std::time::Duration::from_millis(100 << attempt.min(4)));
                self.fetch();
            }
            let base = self.tip();
            let commit = self.commit_on(base.as_deref(), new)?;
            let Some(commit) = commit else {
                return Ok(()); // every run is there already
            };
            match self.publish(base.as_deref(), &commit) {
                Ok(()) => return Ok(()),
                Err(e) => last = e,
            }
        }
        Err(bad(format!(
            "branch {}: not saved after {ATTEMPTS} attempts: {last}",
            self.branch
        )))
    }

    /// A commit with `new`'s lines appended to their files on top of
    /// `base`; `None` when every run is in `base` already.
    fn commit_on(&self, base: Option<&str>, new: &[Line]) -> Result<Option<String>, DbError> {
        let mut files = match base {
            Some(b) => self.files_at(b)?,
            None => BTreeMap::new(),
        };
        let known: BTreeSet<String> = files.values().flatten().map(|l| l.run_id.clone()).collect();
        let mut changed = BTreeSet::new();
        for line in new.iter().filter(|l| !known.contains(&l.run_id)) {
            let f = file_of(line);
            files.entry(f.clone()).or_default().push(line.clone());
            changed.insert(f);
        }
        if changed.is_empty() {
            return Ok(None);
        }
        let scratch = tempfile::tempdir().map_err(|e| bad(format!("no scratch directory: {e}")))?;
        let index = scratch.path().join("index");
        let index = index.to_string_lossy().into_owned();
        let env = [("GIT_INDEX_FILE", index.as_str())];
        match base {
            Some(b) => git(&self.repo, &["read-tree", b], &env, None),
            None => git(&self.repo, &["read-tree", "--empty"], &env, None),
        }
        .map_err(bad)?;
        for name in &changed {
            let mut body = String::new();
            for l in &files[name] {
                body.push_str(&serde_json::to_string(l).map_err(|e| bad(e.to_string()))?);
                body.push('\n');
            }
            let blob = text(
                git(
                    &self.repo,
                    &["hash-object", "-w", "--stdin"],
                    &env,
                    Some(body.as_bytes()),
                )
                .map_err(bad)?,
            );
            let info = format!("100644,{blob},{name}");
            git(
                &self.repo,
                &["update-index", "--add", "--cacheinfo", &info],
                &env,
                None,
            )
            .map_err(bad)?;
        }
        let tree = text(git(&self.repo, &["write-tree"], &env, None).map_err(bad)?);
        let runs = new.len();
        let message = format!(
            "tardy: {runs} run{} saved ({})",
            if runs == 1 { "" } else { "s" },
            changed.iter().cloned().collect::<Vec<_>>().join(", ")
        );
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
        if let Some(b) = base {
            args.extend(["-p", b]);
        }
        // A CI runner often has no identity configured: tardy signs as itself then.
        let named = git(&self.repo, &["config", "user.email"], &[], None).is_ok();
        let me = [
            ("GIT_AUTHOR_NAME", "tardy"),
            ("GIT_AUTHOR_EMAIL", "tardy@localhost"),
            ("GIT_COMMITTER_NAME", "tardy"),
            ("GIT_COMMITTER_EMAIL", "tardy@localhost"),
        ];
        let commit = git(&self.repo, &args, if named { &[] } else { &me }, None).map_err(bad)?;
        Ok(Some(text(commit)))
    }

    /// Make `commit` the branch: pushed to origin (refused when origin moved
    /// on), and the local branch moved only if it is still at `base`.
    fn publish(&self, base: Option<&str>, commit: &str) -> Result<(), String> {
        let head = format!("refs/heads/{}", self.branch);
        if self.remote.is_some() {
            git(
                &self.repo,
                &["push", "--quiet", "origin", &format!("{commit}:{head}")],
                &[],
                None,
            )?;
            let _ = git(
                &self.repo,
                &["update-ref", &self.remote_ref(), commit],
                &[],
                None,
            );
        }
        let local = git(
            &self.repo,
            &["rev-parse", "--verify", "--quiet", &head],
            &[],
            None,
        )
        .ok()
        .map(text);
        // The local branch follows when it is not ahead of what we built on
        // (a branch checked out elsewhere is left alone).
        let follows = match (&local, base) {
            (None, _) => true,
            (Some(l), Some(b)) => l == b || self.remote.is_some() && self.is_ancestor(l, commit),
            (Some(_), None) => false,
        };
        if follows {
            let old = local.unwrap_or_else(|| "0".repeat(40));
            let r = git(&self.repo, &["update-ref", &head, commit, &old], &[], None);
            if self.remote.is_none() {
                // Without an origin the local branch is the history: a race lost
                // here is a retry.
                r?;
            }
        } else if self.remote.is_none() {
            return Err(format!("{head} moved"));
        }
        Ok(())
    }

    fn is_ancestor(&self, a: &str, b: &str) -> bool {
        git(
            &self.repo,
            &["merge-base", "--is-ancestor", a, b],
            &[],
            None,
        )
        .is_ok()
    }
}

/// The run id of a save without one: a hash of what it saves.
fn content_id(batches: &[Batch]) -> String {
    use sha2::{Digest, Sha256};
    let json = serde_json::to_vec(batches).unwrap_or_default();
    format!("sha256:{}", hex::encode(Sha256::digest(&json)))
}

impl History for BranchHistory {
    fn save(&mut self, batches: &[Batch]) -> Result<Vec<Vec<i64>>, DbError> {
        let ids = self.inner.save(batches)?;
        self.append(&[Line {
            run_id: content_id(batches),
            batches: batches.to_vec(),
        }])?;
        Ok(ids)
    }
    fn save_upload(
        &mut self,
        upload: &Upload,
        batches: &[Batch],
    ) -> Result<UploadOutcome, DbError> {
        let outcome = self.inner.save_upload(upload, batches)?;
        if matches!(outcome, UploadOutcome::Stored(_)) {
            self.append(&[Line {
                run_id: upload.run_id.clone(),
                batches: batches.to_vec(),
            }])?;
        }
        Ok(outcome)
    }
    fn uploads(&self, limit: i64) -> Result<Vec<UploadInfo>, DbError> {
        self.inner.uploads(limit)
    }
    fn machines(&self) -> Result<Vec<MachineInfo>, DbError> {
        self.inner.machines()
    }
    fn list(&self) -> Result<Vec<SeriesInfo>, DbError> {
        self.inner.list()
    }
    fn series_page(
        &self,
        offset: usize,
        limit: usize,
        order: SeriesOrder,
    ) -> Result<(usize, Vec<SeriesInfo>), DbError> {
        self.inner.series_page(offset, limit, order)
    }
    fn recent_points(&self, series_id: i64, n: usize) -> Result<Vec<Point>, DbError> {
        self.inner.recent_points(series_id, n)
    }
    fn schema_version(&self) -> Result<i64, DbError> {
        self.inner.schema_version()
    }
    fn series(&self, name: &str) -> Result<Option<SeriesInfo>, DbError> {
        self.inner.series(name)
    }
    fn points(&self, series_id: i64, filter: &PointFilter) -> Result<Vec<Point>, DbError> {
        self.inner.points(series_id, filter)
    }
    fn samples(&self, point_id: i64) -> Result<Vec<f64>, DbError> {
        self.inner.samples(point_id)
    }
    fn series_samples(&self, series_id: i64) -> Result<BTreeMap<i64, Vec<f64>>, DbError> {
        self.inner.series_samples(series_id)
    }
    fn tests(&self, series_id: i64) -> Result<Vec<TestId>, DbError> {
        self.inner.tests(series_id)
    }
    fn for_each_test(
        &self,
        series_id: i64,
        filter: &PointFilter,
        f: &mut TestVisitor<'_>,
    ) -> Result<(), DbError> {
        self.inner.for_each_test(series_id, filter, f)
    }
    fn each_vector(&self, points: &[Point], f: &mut VectorVisitor<'_>) -> Result<(), DbError> {
        self.inner.each_vector(points, f)
    }
    fn tests_at(&self, series_id: i64, points: Vec<Point>) -> Result<TestWindow, DbError> {
        self.inner.tests_at(series_id, points)
    }
    fn fingerprint(&self, id: i64) -> Result<Option<crate::probe::Fingerprint>, DbError> {
        self.inner.fingerprint(id)
    }
    fn detection(&self, key: &DetectionKey) -> Result<Option<DetectionState>, DbError> {
        self.inner.detection(key)
    }
    fn alerted_points(&self, series_id: i64) -> Result<Vec<(i64, i64)>, DbError> {
        self.inner.alerted_points(series_id)
    }
    fn commit_detection(
        &mut self,
        states: &[(DetectionKey, DetectionState)],
        alerts: &[Alert],
    ) -> Result<Vec<i64>, DbError> {
        self.inner.commit_detection(states, alerts)
    }
    fn alerts(&self, states: &[AlertState]) -> Result<Vec<Alert>, DbError> {
        self.inner.alerts(states)
    }
    fn alert_marks(&self, series_id: i64) -> Result<Vec<AlertMark>, DbError> {
        self.inner.alert_marks(series_id)
    }
    fn alert(&self, id: i64) -> Result<Option<Alert>, DbError> {
        self.inner.alert(id)
    }
    fn set_alert_state(&mut self, _id: i64, _state: AlertState) -> Result<(), DbError> {
        Err(bad(format!(
            "--db {PREFIX}{}: an alert's state is not kept in a branch (alerts are found again from the points each time); acknowledge alerts in a database that stays (a file or `tardy serve`)",
            self.branch
        )))
    }
    fn retract_alert(&mut self, id: i64, reason: &str) -> Result<(), DbError> {
        self.inner.retract_alert(id, reason)
    }
    fn annotate(
        &mut self,
        _series: Option<&str>,
        _from_commit: &str,
        _to_commit: Option<&str>,
        _text: &str,
    ) -> Result<i64, DbError> {
        Err(bad(format!(
            "--db {PREFIX}{}: annotations are not kept in a branch; use a database that stays (a file or `tardy serve`)",
            self.branch
        )))
    }
    fn annotations(&self) -> Result<Vec<Annotation>, DbError> {
        self.inner.annotations()
    }
    fn note_commit(&mut self, hash: &str, subject: &str) -> Result<(), DbError> {
        self.inner.note_commit(hash, subject)
    }
    fn commit_subjects(&self, hashes: &[&str]) -> Result<BTreeMap<String, String>, DbError> {
        self.inner.commit_subjects(hashes)
    }
}
