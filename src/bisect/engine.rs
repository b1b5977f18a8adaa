//! The search: confirm the regression at the endpoints, then halve the range with
//! sequential steps (skipping candidates that cannot be built), then re-run the
//! culprit against its parent (the "sandwich"). Every run is saved before the next,
//! and every decision is recorded, so a resumed search goes on exactly where it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::decide::{self, Call, Endpoints};
use super::git::{self, CommitInfo};
use super::posterior;
use super::runner::{self, Prepared};
use super::state::{self, Candidate, State, Step};
use super::{BisectError, Config, Mode};
use crate::measure::interrupt;
use crate::measure::stragglers::{self, Straggler};
use crate::stats::compare as engine;
use crate::stats::rng::SplitMix64;

/// What the engine reports while it works.
pub enum Event<'a> {
    /// A phase begins: "endpoints", "sandwich".
    Phase(String),
    /// A step begins: "step 3 (about 4 left): abc123 subject". Its result
    /// follows as a [`Event::Step`], so this is progress, not a line to keep.
    Measuring(String),
    /// One sample taken.
    Sample {
        label: &'a str,
        n: usize,
        total_runs: u64,
        /// Runs still expected (steps left x runs per step so far, plus the sandwich).
        runs_left: u64,
    },
    Step(&'a Step),
    /// Runs of `label` left processes behind (named, e.g. "1 process (sleep, pid
    /// 4242)"); tardy killed them.
    Stragglers {
        label: &'a str,
        what: String,
    },
    /// With `--jobs N`: how N runs at once compared with runs alone.
    Disturbance(&'a state::Disturbance),
}

/// The effect of the culprit: culprit / parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_value: f64,
    /// The culprit is significantly worse than its parent (95%).
    pub confirmed: bool,
}

/// Who did it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Culprit {
    Commit(CommitInfo),
    Version { version: String },
}

/// One candidate's probability of being the culprit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probability {
    pub key: String,
    pub label: String,
    pub probability: f64,
}

/// The one verdict of a bisection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Bad is not measurably slower than good, and the endpoints' interval
    /// lies below the threshold: nothing to bisect.
    #[default]
    NotReproduced,
    /// Bad is not measurably slower than good, but the endpoints' interval
    /// still holds the threshold: too noisy to tell (more runs, or a
    /// steadier metric, would decide).
    Underpowered,
    /// One candidate, confirmed slower than its parent by the sandwich re-run.
    Confirmed,
    /// The search's runs favoured one candidate, but the sandwich re-run did not
    /// show it slower than its parent: its probability does not hold.
    Unconfirmed,
    /// No single candidate reached the confidence: one of a range.
    Range,
}

/// The final document (`--format json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The regression was confirmed between the endpoints.
    pub reproduced: bool,
    pub endpoints: Option<Endpoints>,
    pub culprit: Option<Culprit>,
    /// The parent (last good) the culprit was compared with.
    pub parent: Option<String>,
    /// The commit hash (or version) of the last good candidate, the end of the search.
    pub last_good: Option<String>,
    /// The commit hash (or version) of the first bad candidate (the culprit, or the
    /// last of `culprit_range`).
    pub first_bad: Option<String>,
    /// When no candidate reaches the confidence: the fewest candidates whose
    /// probabilities add up to it, in order ("one of these N commits").
    pub culprit_range: Option<Vec<String>>,
    /// Every candidate with a probability of being the culprit of at least 1%, in order.
    #[serde(default)]
    pub probabilities: Vec<Probability>,
    pub effect: Option<Effect>,
    /// The sandwich re-run showed the culprit significantly worse than its parent.
    pub confirmed: bool,
    /// The one verdict: the regression did not reproduce, a culprit confirmed by
    /// the sandwich, a suspect the sandwich did not confirm, or a range.
    #[serde(default)]
    pub verdict: Outcome,
    /// The probability that the culprit is right (or, with a range, that the
    /// culprit is in it), from every run taken (see docs/bisect.md).
    pub confidence: f64,
    pub steps: Vec<Step>,
    pub total_runs: u64,
    /// Processes the measured command left running, found and killed after its runs.
    #[serde(default)]
    pub stragglers: u64,
    /// With `--jobs N`: how N runs at once compared with runs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<state::Disturbance>,
    /// What bad means: over good by this ratio (m).
    pub boundary: Option<f64>,
    /// Sensitivity mode: the value is condition B / condition A.
    pub sensitivity: bool,
    pub invert: bool,
}

fn io(path: &Path, e: impl std::fmt::Display) -> BisectError {
    BisectError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// Build the list of candidates for a new bisection.
pub fn candidates(cfg: &Config) -> Result<Vec<Candidate>, BisectError> {
    match &cfg.mode {
        Mode::Commits { first_parent } => {
            let good = git::resolve(&cfg.repo, &cfg.good)?;
            let bad = git::resolve(&cfg.repo, &cfg.bad)?;
            if good == bad {
                return Err(BisectError::Input(format!(
                    "--good {} and --bad {} are the same commit",
                    cfg.good, cfg.bad
                )));
            }
            if !git::is_ancestor(&cfg.repo, &good, &bad) {
                return Err(BisectError::Input(
                    if git::is_ancestor(&cfg.repo, &bad, &good) {
                        format!(
                            "--good {} is newer than --bad {}: swap them (the good commit comes first); to find the commit that made it faster, keep them and add --invert",
                            cfg.good, cfg.bad
                        )
                    } else {
                        format!(
                            "--good {} is not an ancestor of --bad {}",
                            cfg.good, cfg.bad
                        )
                    },
                ));
            }
            let mut keys = vec![good.clone()];
            keys.extend(git::commits_between(&cfg.repo, &good, &bad, *first_parent)?);
            keys.iter()
                .map(|k| {
                    let info = git::info(&cfg.repo, k)?;
                    Ok(Candidate {
                        key: k.clone(),
                        label: format!("{} {}", &k[..k.len().min(10)], info.subject),
                        info: Some(info),
                    })
                })
                .collect()
        }
        Mode::Versions { list } => {
            let pos = |v: &str| {
                list.iter().position(|x| x == v).ok_or_else(|| {
                    BisectError::Input(format!("version '{v}' is not in the version list"))
                })
            };
            let (g, b) = (pos(&cfg.good)?, pos(&cfg.bad)?);
            if g >= b {
                return Err(BisectError::Input(format!(
                    "--good {} does not come before --bad {} in the version list (oldest first); to find an improvement add --invert",
                    cfg.good, cfg.bad
                )));
            }
            Ok(list[g..=b]
                .iter()
                .map(|v| Candidate {
                    key: v.clone(),
                    label: v.clone(),
                    info: None,
                })
                .collect())
        }
    }
}

/// A new state for `cfg`, with samples cached by an earlier bisection of the
/// same configuration on this machine reused (unless `use_cache` is false), and
/// what was done with the cache.
pub fn new_state(
    cfg: Config,
    dir: &Path,
    use_cache: bool,
) -> Result<(State, state::CacheUse), BisectError> {
    let list = candidates(&cfg)?;
    let (cached, mut used) = if use_cache {
        state::cached_samples(dir, &cfg.signature())
    } else {
        (Default::default(), state::CacheUse::None)
    };
    let mut st = State::new(cfg, list);
    let (mut cands, mut samples) = (0, 0);
    for c in &st.candidates {
        if let Some(v) = cached.get(&c.key) {
            cands += 1;
            samples += v.len();
            st.samples.insert(c.key.clone(), v.clone());
        }
    }
    if let state::CacheUse::Reused { age_s, .. } = used {
        used = if cands == 0 {
            state::CacheUse::None
        } else {
            state::CacheUse::Reused {
                candidates: cands,
                samples,
                age_s,
            }
        };
    }
    Ok((st, used))
}

/// Where candidates are prepared and sampled: the real machine ([`Real`]), or a
/// simulation (the error-rate study in docs/bisect.md runs this same engine on one).
pub trait Lab {
    fn prepare(
        &mut self,
        cfg: &Config,
        state_dir: &Path,
        key: &str,
    ) -> Result<Prepared, BisectError>;
    fn sample(
        &mut self,
        cfg: &Config,
        key: &str,
        dir: &Path,
        rng: &mut SplitMix64,
    ) -> Result<(f64, u64), String>;
    /// The processes the last sample's runs left behind (killed).
    fn take_stragglers(&mut self) -> Vec<Straggler> {
        Vec::new()
    }
    /// One sample of each `(key, dir)`, all started at the same moment
    /// (`--jobs`), with the seeds given; in order. One after the other unless
    /// the lab can do better.
    fn sample_group(
        &mut self,
        cfg: &Config,
        items: &[(String, PathBuf)],
        seeds: &[u64],
    ) -> Vec<Result<(f64, u64), String>> {
        items
            .iter()
            .zip(seeds)
            .map(|((key, dir), &seed)| self.sample(cfg, key, dir, &mut SplitMix64::new(seed)))
            .collect()
    }
}

/// Worktrees, builds and real runs of the command.
#[derive(Default)]
pub struct Real {
    stragglers: Vec<Straggler>,
}

impl Lab for Real {
    fn prepare(
        &mut self,
        cfg: &Config,
        state_dir: &Path,
        key: &str,
    ) -> Result<Prepared, BisectError> {
        runner::prepare(cfg, state_dir, key)
    }
    fn sample(
        &mut self,
        cfg: &Config,
        key: &str,
        dir: &Path,
        rng: &mut SplitMix64,
    ) -> Result<(f64, u64), String> {
        runner::sample(cfg, key, dir, rng, &mut self.stragglers)
    }
    fn take_stragglers(&mut self) -> Vec<Straggler> {
        std::mem::take(&mut self.stragglers)
    }
    /// A thread per sample, each spawning and timing its own runs.
    fn sample_group(
        &mut self,
        cfg: &Config,
        items: &[(String, PathBuf)],
        seeds: &[u64],
    ) -> Vec<Result<(f64, u64), String>> {
        type Taken = (Result<(f64, u64), String>, Vec<Straggler>);
        let results: Vec<Taken> = std::thread::scope(|scope| {
            let handles: Vec<_> = items
                .iter()
                .zip(seeds)
                .map(|((key, dir), &seed)| {
                    scope.spawn(move || {
                        let mut left = Vec::new();
                        let mut rng = SplitMix64::new(seed);
                        let r = runner::sample(cfg, key, dir, &mut rng, &mut left);
                        (r, left)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        (
                            Err("the thread taking this sample panicked".into()),
                            Vec::new(),
                        )
                    })
                })
                .collect()
        });
        results
            .into_iter()
            .map(|(r, left)| {
                self.stragglers.extend(left);
                r
            })
            .collect()
    }
}

struct Search<'s, 'e> {
    st: &'s mut State,
    dir: PathBuf,
    dirs: BTreeMap<String, PathBuf>,
    on: &'e mut dyn FnMut(Event),
    lab: &'e mut dyn Lab,
    /// Steps still expected after the current one.
    steps_left: usize,
}

impl Search<'_, '_> {
    /// Runs still expected: the steps left at the average cost of the steps so far
    /// (a candidate run plus half a reference run each), and the sandwich.
    fn runs_left(&self) -> u64 {
        let decided: Vec<usize> = self.st.steps.iter().map(|s| s.runs).collect();
        let per_step = if decided.is_empty() {
            12.0
        } else {
            1.5 * decided.iter().sum::<usize>() as f64 / decided.len() as f64
        };
        let sandwich = 20u64.saturating_sub(
            self.st
                .sandwich
                .as_ref()
                .map_or(0, |s| (s.parent.len() + s.culprit.len()) as u64),
        );
        (self.steps_left as f64 * per_step) as u64 + sandwich
    }

    fn value(&self, v: f64) -> f64 {
        if self.st.config.invert { 1.0 / v } else { v }
    }

    /// The values of this session's runs of `key` (cached ones left out).
    fn fresh(&self, key: &str) -> Vec<f64> {
        let v = self.values(key);
        let n = self.st.seq_of(key).len().min(v.len());
        v[v.len() - n..].to_vec()
    }

    fn values(&self, key: &str) -> Vec<f64> {
        self.st
            .samples_of(key)
            .iter()
            .map(|&v| self.value(v))
            .collect()
    }

    /// Prepare `key` once; `Err(reason)` when it must be skipped.
    fn prepare(&mut self, key: &str) -> Result<Result<PathBuf, String>, BisectError> {
        if let Some(d) = self.dirs.get(key) {
            return Ok(Ok(d.clone()));
        }
        let done = self.st.prepared.contains(key);
        let dir = match &self.st.config.mode {
            Mode::Commits { .. } => runner::worktree_dir(&self.dir, key),
            Mode::Versions { .. } => self.st.config.repo.clone(),
        };
        if done
            && (matches!(self.st.config.mode, Mode::Versions { .. }) || dir.join(".git").exists())
        {
            self.dirs.insert(key.to_string(), dir.clone());
            return Ok(Ok(dir));
        }
        match self.lab.prepare(&self.st.config, &self.dir, key)? {
            Prepared::Ready(d) => {
                self.st.prepared.insert(key.to_string());
                state::save(&self.dir, self.st)?;
                self.dirs.insert(key.to_string(), d.clone());
                Ok(Ok(d))
            }
            // A build killed by Ctrl-C is not a failed build.
            Prepared::Skip(_) if interrupt::requested() => Err(BisectError::Interrupted),
            Prepared::Skip(why) => Ok(Err(why)),
        }
    }

    /// Take one sample of `key`, save, report.
    fn take(
        &mut self,
        key: &str,
        dir: &Path,
        label: &str,
    ) -> Result<Result<(), String>, BisectError> {
        if interrupt::requested() {
            return Err(BisectError::Interrupted);
        }
        let mut rng =
            SplitMix64::new(self.st.config.seed ^ self.st.total_runs.wrapping_mul(0x9E37_79B9));
        let sampled = self.lab.sample(&self.st.config, key, dir, &mut rng);
        self.name_stragglers(label);
        match sampled {
            Ok((v, runs)) => {
                self.st.samples.entry(key.to_string()).or_default().push(v);
                let at = self.st.total_runs;
                self.st.seq.entry(key.to_string()).or_default().push(at);
                self.st.total_runs += runs;
                state::save(&self.dir, self.st)?;
                let n = self.st.samples_of(key).len();
                let runs_left = self.runs_left();
                (self.on)(Event::Sample {
                    label,
                    n,
                    total_runs: self.st.total_runs,
                    runs_left,
                });
                Ok(Ok(()))
            }
            Err(_) if interrupt::requested() => Err(BisectError::Interrupted),
            Err(why) => Ok(Err(why)),
        }
    }

    /// Take one sample of each `(candidate index, dir)`, `--jobs` at a time
    /// (all of a group started at the same moment, so a candidate and the
    /// references beside it share the same load), in order; save, report.
    /// Stops at the first failure: `Ok(Err((index, why)))`.
    fn take_all(
        &mut self,
        items: &[(usize, PathBuf)],
    ) -> Result<Result<(), (usize, String)>, BisectError> {
        let jobs = self.st.config.jobs.max(1);
        if jobs == 1 {
            for (i, dir) in items {
                let c = self.st.candidates[*i].clone();
                if let Err(why) = self.take(&c.key, dir, &c.label)? {
                    return Ok(Err((*i, why)));
                }
            }
            return Ok(Ok(()));
        }
        for group in items.chunks(jobs) {
            if interrupt::requested() {
                return Err(BisectError::Interrupted);
            }
            let keyed: Vec<(String, PathBuf)> = group
                .iter()
                .map(|(i, d)| (self.st.candidates[*i].key.clone(), d.clone()))
                .collect();
            let seeds: Vec<u64> = (0..group.len() as u64)
                .map(|j| self.st.config.seed ^ (self.st.total_runs + j).wrapping_mul(0x9E37_79B9))
                .collect();
            let results = self.lab.sample_group(&self.st.config, &keyed, &seeds);
            // Warned once per candidate, as one at a time: the group's first.
            let first = self.st.candidates[group[0].0].label.clone();
            self.name_stragglers(&first);
            let at = self.st.total_runs;
            let mut failed = None;
            for ((i, _), r) in group.iter().zip(results) {
                let key = self.st.candidates[*i].key.clone();
                match r {
                    Ok((v, runs)) => {
                        self.st.samples.entry(key.clone()).or_default().push(v);
                        // Every sample of a group was taken at the same time.
                        self.st.seq.entry(key).or_default().push(at);
                        self.st.total_runs += runs;
                    }
                    Err(why) => {
                        failed.get_or_insert((*i, why));
                    }
                }
            }
            // Every sample the group took is kept, even when Ctrl-C stopped
            // the rest.
            state::save(&self.dir, self.st)?;
            if failed.is_some() && interrupt::requested() {
                return Err(BisectError::Interrupted);
            }
            let (label, n) = {
                let (i, _) = &group[0];
                let c = &self.st.candidates[*i];
                (c.label.clone(), self.st.samples_of(&c.key).len())
            };
            let runs_left = self.runs_left();
            (self.on)(Event::Sample {
                label: &label,
                n,
                total_runs: self.st.total_runs,
                runs_left,
            });
            if let Some(f) = failed {
                return Ok(Err(f));
            }
        }
        Ok(Ok(()))
    }

    /// The directory a prepared candidate is measured in.
    fn dir_of(&self, i: usize) -> Result<PathBuf, BisectError> {
        let c = &self.st.candidates[i];
        self.dirs
            .get(&c.key)
            .cloned()
            .ok_or_else(|| BisectError::Input(format!("{} was not prepared", c.label)))
    }

    /// With `--jobs N`: runs of the good end alone, then N at once, to say how
    /// much parallel runs disturb each other.
    fn disturbance(&mut self) -> Result<(), BisectError> {
        let jobs = self.st.config.jobs;
        if jobs <= 1 || self.st.disturbance.is_some() {
            return Ok(());
        }
        (self.on)(Event::Phase(format!(
            "parallel: how {jobs} runs at once disturb each other (the good end alone, then {jobs} at once)"
        )));
        let dir = self.dir_of(0)?;
        let key = self.st.candidates[0].key.clone();
        let rounds = 8usize;
        let (mut alone, mut together) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            if interrupt::requested() {
                return Err(BisectError::Interrupted);
            }
            let seed = self.st.config.seed ^ (r as u64).wrapping_mul(0x51_7CC1);
            let one = self
                .lab
                .sample(&self.st.config, &key, &dir, &mut SplitMix64::new(seed));
            let items = vec![(key.clone(), dir.clone()); jobs];
            let seeds: Vec<u64> = (0..jobs as u64).map(|j| seed ^ (j + 1)).collect();
            let many = self.lab.sample_group(&self.st.config, &items, &seeds);
            self.name_stragglers("the parallel check");
            let fail = |why: String| {
                if interrupt::requested() {
                    BisectError::Interrupted
                } else {
                    BisectError::Input(format!("the good end failed in the parallel check: {why}"))
                }
            };
            let (v, runs) = one.map_err(fail)?;
            alone.push(self.value(v));
            self.st.total_runs += runs;
            for m in many {
                let (v, runs) = m.map_err(fail)?;
                together.push(self.value(v));
                self.st.total_runs += runs;
            }
        }
        let d = decide::disturbance(jobs, alone, together);
        (self.on)(Event::Disturbance(&d));
        self.st.disturbance = Some(d);
        state::save(&self.dir, self.st)?;
        Ok(())
    }

    /// Say which processes the last sample's runs left behind, and count them.
    fn name_stragglers(&mut self, label: &str) {
        let left = self.lab.take_stragglers();
        if !left.is_empty() {
            self.st.stragglers += left.len() as u64;
            (self.on)(Event::Stragglers {
                label,
                what: stragglers::describe(&left),
            });
        }
    }

    fn reference(&mut self, which: usize) -> Result<(), BisectError> {
        let c = self.st.candidates[which].clone();
        let dir = self
            .dirs
            .get(&c.key)
            .cloned()
            .ok_or_else(|| BisectError::Input(format!("{} was not prepared", c.label)))?;
        self.take(&c.key, &dir, &c.label)?
            .map_err(|why| BisectError::Input(format!("the command failed at {}: {why}", c.label)))
    }

    fn endpoints(&mut self) -> Result<Endpoints, BisectError> {
        let last = self.st.candidates.len() - 1;
        (self.on)(Event::Phase(
            "endpoints: measuring good and bad, interleaved".into(),
        ));
        for i in [0, last] {
            let c = self.st.candidates[i].clone();
            if let Err(why) = self.prepare(&c.key)? {
                return Err(BisectError::Input(format!(
                    "the {} end ({}) cannot be built or prepared: {why}",
                    if i == 0 { "good" } else { "bad" },
                    c.label
                )));
            }
        }
        self.disturbance()?;
        let p = self.st.config.policy;
        let mut target = p.endpoint_batch;
        loop {
            // Only this session's runs: cached ones were taken at another time,
            // perhaps under other load, and must not decide that it reproduces.
            // The rounds still to take, good and bad alternating which goes
            // first; with --jobs they are taken that many at a time.
            let (dg, db) = (self.dir_of(0)?, self.dir_of(last)?);
            let mut have = [
                self.st.seq_of(&self.st.candidates[0].key.clone()).len(),
                self.st.seq_of(&self.st.candidates[last].key.clone()).len(),
            ];
            let mut items = Vec::new();
            let mut round = self.st.total_runs;
            while have[0] < target || have[1] < target {
                let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
                for w in order {
                    if have[w] < target {
                        have[w] += 1;
                        items.push(if w == 0 {
                            (0, dg.clone())
                        } else {
                            (last, db.clone())
                        });
                    }
                }
                round += 1;
            }
            if let Err((i, why)) = self.take_all(&items)? {
                let c = &self.st.candidates[i];
                let m = format!("the command failed at {}: {why}", c.label);
                // Does the other end fail too?
                let other = if i == 0 { last } else { 0 };
                if let Err(BisectError::Input(m2)) = self.reference(other) {
                    return Err(BisectError::BothFail(format!("{m}; {m2}")));
                }
                return Err(BisectError::Input(m));
            }
            let g = self.fresh(&self.st.candidates[0].key.clone());
            let b = self.fresh(&self.st.candidates[last].key.clone());
            let looks = decide::endpoint_looks(&p);
            let e =
                decide::endpoints(&g, &b, looks, self.st.config.threshold).ok_or_else(|| {
                    BisectError::Input(
                        "the endpoints' samples cannot be compared (zero or non-finite values)"
                            .into(),
                    )
                })?;
            if e.reproduced
                || target >= p.endpoint_max
                || decide::below_threshold(&e, self.st.config.threshold)
            {
                self.st.endpoints = Some(e.clone());
                state::save(&self.dir, self.st)?;
                return Ok(e);
            }
            // Looks at 10, 20, 40, 80 rounds: a small regression gets the runs
            // it needs, a clear one stops at the first look.
            target = (target * 2).min(p.endpoint_max);
        }
    }

    /// Lower and upper ends of the range still open, and the skipped indexes, from the
    /// recorded steps.
    fn range(&self) -> (usize, usize, Vec<usize>) {
        let (mut lo, mut hi) = (0, self.st.candidates.len() - 1);
        let mut skipped = Vec::new();
        for s in self.st.steps.iter().filter(|s| !s.refine) {
            let Some(i) = self.st.candidates.iter().position(|c| c.key == s.candidate) else {
                continue;
            };
            match s.call {
                Call::Good => lo = lo.max(i),
                Call::Bad => hi = hi.min(i),
                Call::Skip => skipped.push(i),
                Call::Unknown => {}
            }
        }
        (lo, hi, skipped)
    }

    /// The next candidate of the binary search, with `steps_left` set to the
    /// steps still expected after it; `None` when the range is closed.
    fn next_candidate(&mut self) -> Option<usize> {
        let (lo, hi, skipped) = self.range();
        if hi - lo <= 1 {
            return None;
        }
        let i = Search::pick(lo, hi, &skipped)?;
        let open = hi - lo - 1 - skipped.iter().filter(|&&k| k > lo && k < hi).count();
        self.steps_left = (open as f64 + 1.0).log2().ceil() as usize;
        Some(i)
    }

    /// The candidate nearest the middle of (lo, hi) that is not skipped.
    fn pick(lo: usize, hi: usize, skipped: &[usize]) -> Option<usize> {
        let mid = (lo + hi) / 2;
        (0..hi - lo)
            .flat_map(|d| [mid + d, mid.wrapping_sub(d)])
            .find(|&i| i > lo && i < hi && !skipped.contains(&i))
    }

    fn step(&mut self, i: usize, left: usize) -> Result<(), BisectError> {
        let c = self.st.candidates[i].clone();
        (self.on)(Event::Measuring(format!(
            "step {} (about {left} left): {}",
            self.st.steps.len() + 1,
            c.label
        )));
        let skip = |st: &mut State, why: String| {
            st.steps.push(Step {
                candidate: c.key.clone(),
                label: c.label.clone(),
                runs: st.samples_of(&c.key).len(),
                call: Call::Skip,
                decision: None,
                note: Some(why),
                refine: false,
            });
        };
        let dir = match self.prepare(&c.key)? {
            Ok(d) => d,
            Err(why) => {
                skip(self.st, why);
                state::save(&self.dir, self.st)?;
                if let Some(s) = self.st.steps.last() {
                    (self.on)(Event::Step(s));
                }
                return Ok(());
            }
        };
        let p = self.st.config.policy;
        let last = self.st.candidates.len() - 1;
        let (g_key, b_key) = (
            self.st.candidates[0].key.clone(),
            self.st.candidates[last].key.clone(),
        );
        let mut target = p
            .first_batch
            .max(self.st.samples_of(&c.key).len().min(p.max_runs));
        let mut fresh = 0usize;
        loop {
            // One reference run per two candidate runs, good and bad
            // alternately, so that drift reaches the references too; with
            // --jobs they run at the same moment as the candidate's.
            let mut items = Vec::new();
            let mut n = self.st.samples_of(&c.key).len();
            while n < target {
                items.push((i, dir.clone()));
                n += 1;
                if n % 2 == 0 {
                    let r = if fresh % 2 == 0 { 0 } else { last };
                    items.push((r, self.dir_of(r)?));
                    fresh += 1;
                }
            }
            match self.take_all(&items)? {
                Ok(()) => {}
                Err((k, why)) if k == i => {
                    skip(self.st, why);
                    state::save(&self.dir, self.st)?;
                    if let Some(s) = self.st.steps.last() {
                        (self.on)(Event::Step(s));
                    }
                    return Ok(());
                }
                Err((k, why)) => {
                    return Err(BisectError::Input(format!(
                        "the command failed at {}: {why}",
                        self.st.candidates[k].label
                    )));
                }
            }
            let cand = self.values(&c.key);
            let g = self.values(&g_key);
            let b = self.values(&b_key);
            let at_cap = target >= p.max_runs;
            let d = decide::classify(
                &cand,
                decide::recent(&g, p.refs),
                decide::recent(&b, p.refs),
                self.st.config.threshold,
                &p,
                at_cap,
            )
            .ok_or_else(|| {
                BisectError::Input(format!("the samples of {} cannot be compared", c.label))
            })?;
            if d.call != Call::Unknown {
                self.st.steps.push(Step {
                    candidate: c.key.clone(),
                    label: c.label.clone(),
                    runs: cand.len(),
                    call: d.call,
                    decision: Some(d),
                    note: None,
                    refine: false,
                });
                state::save(&self.dir, self.st)?;
                if let Some(s) = self.st.steps.last() {
                    (self.on)(Event::Step(s));
                }
                return Ok(());
            }
            target = (target + p.next_batch).min(p.max_runs);
        }
    }

    /// The probability of each candidate being the culprit, from every run.
    fn posterior(&self) -> Vec<f64> {
        let last = self.st.candidates.len() - 1;
        // This session's runs only: what it states must not rest on runs taken
        // at another time (cached ones steer the search, nothing more).
        let vals = |k: usize| self.fresh(&self.st.candidates[k].key);
        let (g, b) = (vals(0), vals(last));
        let (gs, bs) = (
            self.st.seq_of(&self.st.candidates[0].key),
            self.st.seq_of(&self.st.candidates[last].key),
        );
        let good = posterior::Samples {
            values: &g,
            seq: gs,
        };
        let bad = posterior::Samples {
            values: &b,
            seq: bs,
        };
        let judges = posterior::Judge::around(good, bad);
        if judges.is_empty() {
            return posterior::posterior(&vec![0.0; last + 1]);
        }
        let runs: Vec<Vec<f64>> = (0..=last).map(vals).collect();
        let mut post = vec![0.0; last + 1];
        for (w, judge) in &judges {
            let mut e = vec![0.0; last + 1];
            for (k, ek) in e.iter_mut().enumerate().take(last).skip(1) {
                let cand = posterior::Samples {
                    values: &runs[k],
                    seq: self.st.seq_of(&self.st.candidates[k].key),
                };
                *ek = judge.evidence(cand, posterior::TEMPER);
            }
            for (p, q) in post.iter_mut().zip(posterior::posterior(&e)) {
                *p += w * q;
            }
        }
        post
    }

    /// The measurable candidate (not skipped, under the run cap) whose "good or
    /// bad" is least settled, if any is unsettled enough to be worth runs.
    fn most_uncertain(&self, post: &[f64]) -> Option<usize> {
        let last = self.st.candidates.len() - 1;
        let (_, _, skipped) = self.range();
        let f = posterior::cdf(post);
        let cap = self.st.config.policy.max_runs;
        (1..last)
            .filter(|k| !skipped.contains(k))
            .filter(|&k| self.st.samples_of(&self.st.candidates[k].key).len() < cap)
            .map(|k| (k, f[k].min(1.0 - f[k])))
            .filter(|&(_, u)| u > 0.002)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }

    /// Record a refinement step on `c` that could not run (`why`), and save.
    fn skipped(&mut self, c: &Candidate, why: String) -> Result<(), BisectError> {
        self.st.steps.push(Step {
            candidate: c.key.clone(),
            label: c.label.clone(),
            runs: self.st.samples_of(&c.key).len(),
            call: Call::Skip,
            decision: None,
            note: Some(why),
            refine: true,
        });
        state::save(&self.dir, self.st)
    }

    /// A batch of runs of candidate `k` (with references interleaved), recorded
    /// as a step whose call is what the probabilities say after it.
    fn refine_step(&mut self, k: usize, n: usize) -> Result<(), BisectError> {
        let c = self.st.candidates[k].clone();
        (self.on)(Event::Measuring(format!(
            "refining {n}: {} (the probabilities are still spread)",
            c.label
        )));
        let dir = match self.prepare(&c.key)? {
            Ok(d) => d,
            Err(why) => {
                return self.skipped(&c, why);
            }
        };
        let p = self.st.config.policy;
        let last = self.st.candidates.len() - 1;
        let batch = p.first_batch.max(2);
        let have = self.st.samples_of(&c.key).len();
        let want = (have + batch).min(p.max_runs);
        let mut items = Vec::new();
        let mut i = 0usize;
        let mut n = have;
        while n < want {
            items.push((k, dir.clone()));
            n += 1;
            i += 1;
            if i % 2 == 0 {
                // Good and bad in turn, across batches too.
                let r = if (i / 2 + self.st.steps.len()) % 2 == 0 {
                    0
                } else {
                    last
                };
                items.push((r, self.dir_of(r)?));
            }
        }
        // A reference of each end next to these runs, so they are judged by
        // references taken at the same time.
        items.push((0, self.dir_of(0)?));
        items.push((last, self.dir_of(last)?));
        match self.take_all(&items)? {
            Ok(()) => {}
            Err((j, why)) if j == k => return self.skipped(&c, why),
            Err((j, why)) => {
                return Err(BisectError::Input(format!(
                    "the command failed at {}: {why}",
                    self.st.candidates[j].label
                )));
            }
        }
        let post = self.posterior();
        let f = posterior::cdf(&post);
        let (g_key, b_key) = (
            self.st.candidates[0].key.clone(),
            self.st.candidates[last].key.clone(),
        );
        let cand = self.values(&c.key);
        let d = decide::classify(
            &cand,
            decide::recent(&self.values(&g_key), p.refs),
            decide::recent(&self.values(&b_key), p.refs),
            self.st.config.threshold,
            &p,
            false,
        );
        let bad = f[k] >= 0.5;
        self.st.steps.push(Step {
            candidate: c.key.clone(),
            label: c.label.clone(),
            runs: cand.len(),
            call: if bad { Call::Bad } else { Call::Good },
            decision: d,
            note: Some(format!("P(culprit at or before it) = {:.3}", f[k])),
            refine: true,
        });
        state::save(&self.dir, self.st)?;
        if let Some(s) = self.st.steps.last() {
            (self.on)(Event::Step(s));
        }
        Ok(())
    }

    fn sandwich(&mut self, parent: usize, culprit: usize) -> Result<Effect, BisectError> {
        let (pc, cc) = (
            self.st.candidates[parent].clone(),
            self.st.candidates[culprit].clone(),
        );
        (self.on)(Event::Phase(format!(
            "sandwich: {} against its parent {}",
            cc.label, pc.label
        )));
        let (pd, cd) = match (self.prepare(&pc.key)?, self.prepare(&cc.key)?) {
            (Ok(a), Ok(b)) => (a, b),
            _ => {
                return Err(BisectError::Input(
                    "the culprit or its parent can no longer be prepared".into(),
                ));
            }
        };
        let rounds = 10;
        let mut sw = self.st.sandwich.clone().unwrap_or_default();
        while sw.parent.len() < rounds || sw.culprit.len() < rounds {
            if interrupt::requested() {
                return Err(BisectError::Interrupted);
            }
            let mut rng = SplitMix64::new(self.st.config.seed ^ self.st.total_runs);
            let parent_first = rng.next_f64() < 0.5;
            if self.st.config.jobs > 1 {
                // Parent and culprit at the same moment, under the same load.
                let want = [sw.parent.len() < rounds, sw.culprit.len() < rounds];
                let items: Vec<(String, PathBuf)> = [(&pc.key, &pd), (&cc.key, &cd)]
                    .into_iter()
                    .zip(want)
                    .filter(|(_, w)| *w)
                    .map(|((k, d), _)| (k.clone(), d.clone()))
                    .collect();
                let seeds: Vec<u64> = (0..items.len() as u64)
                    .map(|j| self.st.config.seed ^ (self.st.total_runs + j))
                    .collect();
                let results = self.lab.sample_group(&self.st.config, &items, &seeds);
                self.name_stragglers("sandwich");
                for ((key, _), r) in items.iter().zip(results) {
                    let (v, runs) = r.map_err(sandwich_failed)?;
                    if *key == pc.key {
                        sw.parent.push(v);
                    } else {
                        sw.culprit.push(v);
                    }
                    self.st.total_runs += runs;
                }
            } else {
                for first in [parent_first, !parent_first] {
                    let (key, dir, into) = if first {
                        (&pc.key, &pd, &mut sw.parent)
                    } else {
                        (&cc.key, &cd, &mut sw.culprit)
                    };
                    if into.len() >= rounds {
                        continue;
                    }
                    let sampled = self.lab.sample(&self.st.config, key, dir, &mut rng);
                    self.name_stragglers("sandwich");
                    let (v, runs) = sampled.map_err(sandwich_failed)?;
                    into.push(v);
                    self.st.total_runs += runs;
                }
            }
            self.st.sandwich = Some(sw.clone());
            state::save(&self.dir, self.st)?;
            let runs_left = self.runs_left();
            (self.on)(Event::Sample {
                label: "sandwich",
                n: sw.culprit.len(),
                total_runs: self.st.total_runs,
                runs_left,
            });
        }
        let t = |v: &[f64]| v.iter().map(|&x| self.value(x)).collect::<Vec<_>>();
        let e = engine::compare(&t(&sw.parent), &t(&sw.culprit), &engine::Options::default())
            .map_err(|e| {
                BisectError::Input(format!("the sandwich samples cannot be compared: {e}"))
            })?;
        Ok(Effect {
            ratio: e.ratio,
            ci_low: e.ci_low,
            ci_high: e.ci_high,
            p_value: e.p_value,
            confirmed: e.proven_slower(),
        })
    }
}

/// A sandwich run that failed: interrupted by Ctrl-C, or the command failed.
fn sandwich_failed(why: String) -> BisectError {
    if interrupt::requested() {
        BisectError::Interrupted
    } else {
        BisectError::Input(format!("the sandwich run failed: {why}"))
    }
}

/// Run (or resume) the bisection saved in `dir`.
impl Report {
    /// The report once the endpoints are known: nothing found yet.
    fn begun(endpoints: Endpoints, boundary: f64, st: &State) -> Report {
        let underpowered = decide::underpowered(&endpoints, st.config.threshold);
        Report {
            reproduced: endpoints.reproduced,
            endpoints: Some(endpoints),
            culprit: None,
            parent: None,
            last_good: None,
            first_bad: None,
            culprit_range: None,
            probabilities: Vec::new(),
            effect: None,
            confirmed: false,
            verdict: if underpowered {
                Outcome::Underpowered
            } else {
                Outcome::NotReproduced
            },
            confidence: 0.0,
            steps: Vec::new(),
            total_runs: st.total_runs,
            stragglers: st.stragglers,
            disturbance: st.disturbance.clone(),
            boundary: Some(boundary),
            sensitivity: st.config.conditions.is_some(),
            invert: st.config.invert,
        }
    }
}

pub fn run(st: &mut State, dir: &Path, on: &mut dyn FnMut(Event)) -> Result<Report, BisectError> {
    run_in(st, dir, on, &mut Real::default())
}

/// Run the bisection with candidates prepared and sampled by `lab`.
pub fn run_in(
    st: &mut State,
    dir: &Path,
    on: &mut dyn FnMut(Event),
    lab: &mut dyn Lab,
) -> Result<Report, BisectError> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    state::save(dir, st)?;
    let mut s = Search {
        st,
        dir: dir.to_path_buf(),
        dirs: BTreeMap::new(),
        on,
        lab,
        steps_left: 0,
    };
    // A count that every run agrees on: one run per commit, a plain binary
    // search (exact.rs); counts that vary fall through to the statistics.
    if s.st.config.metric.count().is_some()
        && s.st.config.conditions.is_none()
        && let Some(report) = s.exact()?
    {
        return Ok(report);
    }
    let e = s.endpoints()?;
    let mut report = Report::begun(
        e.clone(),
        decide::boundary(s.st.config.threshold, e.ratio),
        s.st,
    );
    if !e.reproduced {
        s.st.finished = true;
        state::save(dir, s.st)?;
        return Ok(report);
    }
    while let Some(i) = s.next_candidate() {
        s.step(i, s.steps_left)?;
    }
    // The search's range rests on each step's own test; the probabilities rest
    // on every run. Where they are still spread (a wrong call, drift, a slow
    // mode, skipped candidates), measure where they are most uncertain until one
    // candidate reaches the confidence or nothing measurable would help.
    let target = s.st.config.policy.confidence.clamp(0.5, 0.9999);
    let mut refined = 0;
    loop {
        let post = s.posterior();
        if posterior::top(&post).1 >= target {
            break;
        }
        let Some(k) = s.most_uncertain(&post) else {
            break;
        };
        refined += 1;
        s.steps_left = 1;
        s.refine_step(k, refined)?;
    }
    let post = s.posterior();
    let (top, p_top) = posterior::top(&post);
    report.probabilities = post
        .iter()
        .enumerate()
        .filter(|&(_, &p)| p >= 0.01)
        .map(|(i, &p)| Probability {
            key: s.st.candidates[i].key.clone(),
            label: s.st.candidates[i].label.clone(),
            probability: p,
        })
        .collect();
    if p_top >= target {
        let lo = top - 1;
        report.last_good = Some(s.st.candidates[lo].key.clone());
        report.first_bad = Some(s.st.candidates[top].key.clone());
        let eff = s.sandwich(lo, top)?;
        report.confirmed = eff.confirmed;
        report.verdict = if eff.confirmed {
            Outcome::Confirmed
        } else {
            Outcome::Unconfirmed
        };
        let c = &s.st.candidates[top];
        report.culprit = Some(match &c.info {
            Some(info) => Culprit::Commit(info.clone()),
            None => Culprit::Version {
                version: c.key.clone(),
            },
        });
        report.parent = Some(s.st.candidates[lo].label.clone());
        report.effect = Some(eff);
        report.confidence = p_top;
    } else {
        let set = posterior::credible_set(&post, target);
        let (first, last) = (set[0], set[set.len() - 1]);
        report.last_good = Some(s.st.candidates[first - 1].key.clone());
        report.first_bad = Some(s.st.candidates[last].key.clone());
        report.verdict = Outcome::Range;
        report.culprit_range = Some(
            set.iter()
                .map(|&i| s.st.candidates[i].label.clone())
                .collect(),
        );
        report.confidence = set.iter().map(|&i| post[i]).sum::<f64>().min(1.0);
    }
    s.st.finished = true;
    state::save(dir, s.st)?;
    report.steps = s.st.steps.clone();
    report.total_runs = s.st.total_runs;
    report.stragglers = s.st.stragglers;
    Ok(report)
}

impl Search<'_, '_> {
    /// Take runs of candidate `i` until it has `n`; `Err(why)` when one fails.
    fn runs_of(&mut self, i: usize, n: usize) -> Result<Result<Vec<f64>, String>, BisectError> {
        let key = self.st.candidates[i].key.clone();
        let dir = match self.prepare(&key)? {
            Ok(d) => d,
            Err(why) => return Ok(Err(why)),
        };
        let have = self.st.samples_of(&key).len();
        let items: Vec<(usize, PathBuf)> = (have..n).map(|_| (i, dir.clone())).collect();
        if let Err((_, why)) = self.take_all(&items)? {
            return Ok(Err(why));
        }
        Ok(Ok(self.values(&key)))
    }

    /// The exact search on counts (see [`super::exact`]); `None` when the
    /// endpoints' counts vary too much for it.
    fn exact(&mut self) -> Result<Option<Report>, BisectError> {
        use super::exact;
        let last = self.st.candidates.len() - 1;
        let metric = self.st.config.metric.count().map_or("counts", |m| m.name());
        (self.on)(Event::Phase(format!(
            "endpoints: counting {metric} of good and bad, {} runs each",
            exact::ENDPOINT_RUNS
        )));
        let mut ends = [Vec::new(), Vec::new()];
        for (w, i) in [(0, 0), (1, last)] {
            match self.runs_of(i, exact::ENDPOINT_RUNS)? {
                Ok(v) => ends[w] = v,
                Err(why) => {
                    return Err(BisectError::Input(format!(
                        "the {} end ({}) cannot be counted: {why}",
                        if i == 0 { "good" } else { "bad" },
                        self.st.candidates[i].label
                    )));
                }
            }
        }
        let Some(e) = exact::endpoints(&ends[0], &ends[1], self.st.config.threshold) else {
            return Err(BisectError::Input(
                "the endpoints' counts cannot be compared (zero or non-finite)".into(),
            ));
        };
        if !e.agree {
            (self.on)(Event::Phase(format!(
                "{metric} vary by {:.4}% between runs, too much to place a {:+.4}% step with one run per commit: bisecting them with the statistics",
                e.jitter * 100.0,
                (e.ratio - 1.0) * 100.0
            )));
            return Ok(None);
        }
        let endpoints = Endpoints {
            ratio: e.ratio,
            ci_low: Some(e.ratio),
            ci_high: Some(e.ratio),
            p_value: f64::NAN,
            reproduced: e.reproduced,
            runs: [ends[0].len(), ends[1].len()],
            runs_needed: None,
        };
        self.st.endpoints = Some(endpoints.clone());
        state::save(&self.dir, self.st)?;
        let mut report = Report::begun(endpoints, e.boundary, self.st);
        if e.reproduced {
            while let Some(i) = self.next_candidate() {
                let c = self.st.candidates[i].clone();
                (self.on)(Event::Measuring(format!(
                    "step {} (about {} left): {}",
                    self.st.steps.len() + 1,
                    self.steps_left,
                    c.label
                )));
                let step = match self.runs_of(i, 1)? {
                    Ok(v) => {
                        let d = exact::classify(v[v.len() - 1], &e);
                        Step {
                            candidate: c.key.clone(),
                            label: c.label.clone(),
                            runs: v.len(),
                            call: d.call,
                            decision: Some(d),
                            note: None,
                            refine: false,
                        }
                    }
                    Err(why) => Step {
                        candidate: c.key.clone(),
                        label: c.label.clone(),
                        runs: self.st.samples_of(&c.key).len(),
                        call: Call::Skip,
                        decision: None,
                        note: Some(why),
                        refine: false,
                    },
                };
                self.st.steps.push(step);
                state::save(&self.dir, self.st)?;
                if let Some(s) = self.st.steps.last() {
                    (self.on)(Event::Step(s));
                }
            }
            let (lo, hi, skipped) = self.range();
            report.last_good = Some(self.st.candidates[lo].key.clone());
            report.first_bad = Some(self.st.candidates[hi].key.clone());
            let open: Vec<usize> = (lo + 1..=hi).filter(|k| !skipped.contains(k)).collect();
            if open.len() == 1 && hi == lo + 1 {
                // The check: a second run of the culprit and of its parent agree
                // with their first.
                (self.on)(Event::Phase(
                    "check: a second run of the culprit and of its parent".into(),
                ));
                let mut runs = [Vec::new(), Vec::new()];
                for (w, i) in [(0, lo), (1, hi)] {
                    match self.runs_of(i, 2)? {
                        Ok(v) => runs[w] = v,
                        Err(why) => {
                            return Err(BisectError::Input(format!(
                                "the check run of {} failed: {why}",
                                self.st.candidates[i].label
                            )));
                        }
                    }
                }
                let (p, c) = (&runs[0], &runs[1]);
                let agree = exact::agree(p, &e) && exact::agree(c, &e);
                let ratio = c[c.len() - 1] / p[p.len() - 1];
                let confirmed = agree && ratio - 1.0 > exact::SMALLEST_STEP;
                self.st.sandwich = Some(state::Sandwich {
                    parent: p.clone(),
                    culprit: c.clone(),
                });
                report.effect = Some(Effect {
                    ratio,
                    ci_low: Some(ratio),
                    ci_high: Some(ratio),
                    p_value: f64::NAN,
                    confirmed,
                });
                report.confirmed = confirmed;
                report.verdict = if confirmed {
                    Outcome::Confirmed
                } else {
                    Outcome::Unconfirmed
                };
                report.confidence = if confirmed { 1.0 } else { 0.0 };
                let cand = &self.st.candidates[hi];
                report.culprit = Some(match &cand.info {
                    Some(info) => Culprit::Commit(info.clone()),
                    None => Culprit::Version {
                        version: cand.key.clone(),
                    },
                });
                report.parent = Some(self.st.candidates[lo].label.clone());
                report.probabilities = vec![Probability {
                    key: cand.key.clone(),
                    label: cand.label.clone(),
                    probability: report.confidence,
                }];
            } else {
                // Skipped candidates between the last good and the first bad.
                report.verdict = Outcome::Range;
                report.culprit_range = Some(
                    (lo + 1..=hi)
                        .map(|i| self.st.candidates[i].label.clone())
                        .collect(),
                );
                report.confidence = 1.0;
            }
        }
        self.st.finished = true;
        state::save(&self.dir, self.st)?;
        report.steps = self.st.steps.clone();
        report.total_runs = self.st.total_runs;
        report.stragglers = self.st.stragglers;
        Ok(Some(report))
    }
}

/// Remove every worktree this bisection made (and the state, keeping the cache).
pub fn reset(dir: &Path) -> Result<Vec<PathBuf>, BisectError> {
    let mut removed = Vec::new();
    let repo = state::load(dir).ok().map(|s| s.config.repo);
    let wt = dir.join("worktrees");
    if let Ok(entries) = std::fs::read_dir(&wt) {
        for e in entries.flatten() {
            let p = e.path();
            if let Some(r) = &repo {
                let _ = git::remove_worktree(r, &p);
            }
            if p.exists() {
                std::fs::remove_dir_all(&p).map_err(|e| io(&p, e))?;
            }
            removed.push(p);
        }
        let _ = std::fs::remove_dir(&wt);
    }
    if let Some(r) = &repo {
        let _ = std::process::Command::new("git")
            .arg("-C")
            .arg(r)
            .args(["worktree", "prune"])
            .status();
    }
    let f = state::state_file(dir);
    if f.exists() {
        std::fs::remove_file(&f).map_err(|e| io(&f, e))?;
    }
    Ok(removed)
}
