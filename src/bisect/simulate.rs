//! Simulated bisections, for the error rates in docs/bisect.md: the real engine
//! ([`super::engine::run_in`]) on a [`SimLab`] whose "commits" take a noisy time with a
//! step at the culprit, and the fixed 30-runs-per-step bisection that `git bisect run`
//! with a t-test script performs, on the same noise.

use std::path::Path;

use super::decide::Policy;
use super::engine::{self, Culprit, Lab};
use super::runner::Prepared;
use super::state::{Candidate, State};
use super::{BisectError, Config, Metric, Mode};
use crate::stats::rng::SplitMix64;

/// The noise of one run: lognormal spread, a slow mode taken now and then (bimodal),
/// and a slow drift over the session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    pub sigma: f64,
    pub slow_mode_prob: f64,
    pub slow_mode_factor: f64,
    /// Peak relative drift, a sine over 400 runs.
    pub drift: f64,
    /// Probability of a hiccup: a run 20-100% slower (heavy right tail).
    pub outlier_prob: f64,
}

impl Noise {
    /// Like this 2-core VM: 3% spread, 10% of runs 8% slower, ±2% drift.
    pub fn vm() -> Noise {
        Noise {
            sigma: 0.03,
            slow_mode_prob: 0.1,
            slow_mode_factor: 1.08,
            drift: 0.02,
            outlier_prob: 0.0,
        }
    }

    fn apply(&self, base: f64, run: u64, rng: &mut SplitMix64) -> f64 {
        let (u1, u2) = (rng.next_f64().max(1e-300), rng.next_f64());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        let slow = if rng.next_f64() < self.slow_mode_prob {
            self.slow_mode_factor
        } else {
            1.0
        };
        let drift = 1.0 + self.drift * (run as f64 / 400.0 * std::f64::consts::TAU).sin();
        let hiccup = if self.outlier_prob > 0.0 && rng.next_f64() < self.outlier_prob {
            1.2 + 0.8 * rng.next_f64()
        } else {
            1.0
        };
        base * (self.sigma * z).exp() * slow * drift * hiccup
    }
}

/// Commits 0..n (0 good, n bad); from `culprit` on, runs take `1 + effect` times longer.
pub struct SimLab {
    pub culprit: usize,
    pub effect: f64,
    /// A second regression (commit, effect) later in the range.
    pub second: Option<(usize, f64)>,
    pub noise: Noise,
    rng: SplitMix64,
    runs: u64,
}

impl SimLab {
    pub fn new(culprit: usize, effect: f64, noise: Noise, seed: u64) -> SimLab {
        SimLab {
            culprit,
            effect,
            second: None,
            noise,
            rng: SplitMix64::new(seed),
            runs: 0,
        }
    }

    fn value(&mut self, index: usize) -> f64 {
        self.runs += 1;
        let mut base = if index >= self.culprit {
            1.0 + self.effect
        } else {
            1.0
        };
        if let Some((at, effect)) = self.second
            && index >= at
        {
            base *= 1.0 + effect;
        }
        self.noise.apply(base, self.runs, &mut self.rng)
    }
}

impl Lab for SimLab {
    fn prepare(
        &mut self,
        _cfg: &Config,
        state_dir: &Path,
        _key: &str,
    ) -> Result<Prepared, BisectError> {
        Ok(Prepared::Ready(state_dir.to_path_buf()))
    }
    fn sample(
        &mut self,
        _cfg: &Config,
        key: &str,
        _dir: &Path,
        _rng: &mut SplitMix64,
    ) -> Result<(f64, u64), String> {
        let index: usize = key.parse().map_err(|_| "bad key".to_string())?;
        Ok((self.value(index), 1))
    }
}

/// What one simulated bisection said, and whether it was right.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// A single culprit was named.
    pub named: bool,
    /// ... and it is the culprit (or, with two regressions, one of them).
    pub right: bool,
    /// The stated probability: of the named culprit, or of the range.
    pub confidence: f64,
    /// Without a name: the range holds a culprit.
    pub in_range: bool,
    pub range_len: usize,
    pub runs: u64,
    /// The endpoints reproduced the regression (else nothing was bisected).
    pub reproduced: bool,
    /// Not reproduced, but not ruled out either: too noisy to tell.
    pub underpowered: bool,
}

/// One simulated tardy bisection over `n` commits.
pub fn tardy_once(
    n: usize,
    culprit: usize,
    effect: f64,
    noise: Noise,
    seed: u64,
    dir: &Path,
) -> Result<(bool, u64), BisectError> {
    let o = tardy_sim(n, culprit, effect, None, noise, seed, dir)?;
    Ok((o.right, o.runs))
}

/// One simulated tardy bisection, with an optional second regression.
pub fn tardy_sim(
    n: usize,
    culprit: usize,
    effect: f64,
    second: Option<(usize, f64)>,
    noise: Noise,
    seed: u64,
    dir: &Path,
) -> Result<Outcome, BisectError> {
    let list: Vec<String> = (0..=n).map(|i| i.to_string()).collect();
    let cfg = Config {
        repo: dir.to_path_buf(),
        good: "0".into(),
        bad: n.to_string(),
        mode: Mode::Versions { list: list.clone() },
        build: None,
        prepare: None,
        command: "simulated".into(),
        metric: Metric::Wall,
        conditions: None,
        threshold: None,
        invert: false,
        policy: Policy::default(),
        seed,
        timeout_s: None,
        jobs: 1,
    };
    let candidates = list
        .iter()
        .map(|k| Candidate {
            key: k.clone(),
            label: k.clone(),
            info: None,
        })
        .collect();
    let mut st = State::new(cfg, candidates);
    let _ = std::fs::remove_file(super::state::state_file(dir));
    let mut lab = sim_lab(culprit, effect, noise, seed);
    lab.second = second;
    let r = engine::run_in(&mut st, dir, &mut |_| {}, &mut lab)?;
    let truth: Vec<String> = std::iter::once(culprit)
        .chain(second.map(|s| s.0))
        .map(|c| c.to_string())
        .collect();
    let (named, right) = match &r.culprit {
        Some(Culprit::Version { version }) => (true, truth.contains(version)),
        _ => (false, false),
    };
    let range = r.culprit_range.clone().unwrap_or_default();
    Ok(Outcome {
        named,
        right,
        confidence: r.confidence,
        in_range: range.iter().any(|l| truth.contains(l)),
        range_len: range.len(),
        runs: r.total_runs,
        reproduced: r.reproduced,
        underpowered: r.verdict == engine::Outcome::Underpowered,
    })
}

/// `cand` is slower than `good` by Welch's t at one-sided p < `alpha`.
fn slower(good: &[f64], cand: &[f64], alpha: f64) -> bool {
    crate::stats::ttest::welch(good, cand, 0.95)
        .is_some_and(|t| t.diff > 0.0 && t.p_value / 2.0 < alpha)
}

/// The plain bisection of `git bisect run` over commits 0..n with `bad`
/// deciding each step; the first bad commit it ends on.
fn fixed_search(n: usize, mut bad: impl FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, n);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if bad(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

fn sim_lab(culprit: usize, effect: f64, noise: Noise, seed: u64) -> SimLab {
    SimLab::new(
        culprit,
        effect,
        noise,
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15),
    )
}

/// One simulated fixed bisection: `per` runs of the good end once, then `per` runs per
/// step, each step bad when Welch's t says slower than the good end at p < 0.05
/// (one-sided).
pub fn fixed_once(
    n: usize,
    culprit: usize,
    effect: f64,
    per: usize,
    noise: Noise,
    seed: u64,
) -> (bool, u64) {
    let mut lab = sim_lab(culprit, effect, noise, seed);
    let good: Vec<f64> = (0..per).map(|_| lab.value(0)).collect();
    let mut runs = per as u64;
    let first_bad = fixed_search(n, |mid| {
        let c: Vec<f64> = (0..per).map(|_| lab.value(mid)).collect();
        runs += per as u64;
        slower(&good, &c, 0.05)
    });
    (first_bad == culprit, runs)
}

/// One simulated fixed bisection as a careful script would run it: at every
/// step `per` runs of the candidate and `per` of the good end, interleaved (so
/// drift reaches both), the candidate bad when Welch's t says slower at
/// one-sided p < `alpha`. Returns (right, runs).
pub fn fixed_paired_once(
    n: usize,
    culprit: usize,
    effect: f64,
    per: usize,
    alpha: f64,
    noise: Noise,
    seed: u64,
) -> (bool, u64) {
    let mut lab = sim_lab(culprit, effect, noise, seed);
    let mut runs = 0u64;
    let first_bad = fixed_search(n, |mid| {
        let (mut good, mut c) = (Vec::with_capacity(per), Vec::with_capacity(per));
        for _ in 0..per {
            good.push(lab.value(0));
            c.push(lab.value(mid));
        }
        runs += 2 * per as u64;
        slower(&good, &c, alpha)
    });
    (first_bad == culprit, runs)
}
