//! The change-point study of docs/changepoints.md: the real detectors (the
//! calibrated default and Otava's, as `tardy history` runs them) on simulated
//! series with the kinds of noise benchmark histories have, measuring the
//! false-alarm rate on pure noise and how often a step is found, and where.
//! `examples/cp_sim.rs` prints the tables; tests run small versions.

use crate::stats::changepoint;
use crate::stats::rank_cusum;
use crate::stats::rng::SplitMix64;

/// A kind of noise, each with unit standard deviation (so a step of 3 is 3 sigma).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Regime {
    Gaussian,
    /// exp(N(0, 0.5)) standardised: skewed to the right, as run times are.
    Lognormal,
    /// Student's t with 3 degrees of freedom: rare huge outliers.
    HeavyTailed,
    /// 80% in one mode, 20% in another 2.5 (unscaled) units slower: a machine
    /// that is sometimes in a slow state.
    Bimodal,
    /// Gaussian AR(1) with this lag-1 correlation: slow drifts of the machine.
    Autocorrelated(f64),
    /// Gaussian rounded to 0.5 units: timers with a coarse tick, many ties.
    Discrete,
}

impl Regime {
    pub fn all() -> Vec<Regime> {
        vec![
            Regime::Gaussian,
            Regime::Lognormal,
            Regime::HeavyTailed,
            Regime::Bimodal,
            Regime::Autocorrelated(0.3),
            Regime::Autocorrelated(0.6),
            Regime::Discrete,
        ]
    }

    pub fn name(&self) -> String {
        match self {
            Regime::Gaussian => "gaussian".into(),
            Regime::Lognormal => "lognormal".into(),
            Regime::HeavyTailed => "heavy-tailed (t3)".into(),
            Regime::Bimodal => "bimodal (20% slow mode)".into(),
            Regime::Autocorrelated(r) => format!("AR(1) rho {r}"),
            Regime::Discrete => "discrete (ties)".into(),
        }
    }

    /// `n` points of this noise, mean 0 and standard deviation 1.
    pub fn noise(&self, n: usize, rng: &mut SplitMix64) -> Vec<f64> {
        match *self {
            Regime::Gaussian => (0..n).map(|_| rng.normal()).collect(),
            Regime::Lognormal => {
                let s: f64 = 0.5;
                let mean = (s * s / 2.0).exp();
                let sd = ((s * s).exp_m1() * (s * s).exp()).sqrt();
                (0..n)
                    .map(|_| ((s * rng.normal()).exp() - mean) / sd)
                    .collect()
            }
            Regime::HeavyTailed => (0..n)
                .map(|_| {
                    let z = rng.normal();
                    let chi: f64 = (0..3).map(|_| rng.normal().powi(2)).sum();
                    z / (chi / 3.0).sqrt() / 3f64.sqrt()
                })
                .collect(),
            Regime::Bimodal => {
                // Mixture 0.8 N(0,1) + 0.2 N(2.5,1): mean 0.5, variance 1 + 0.16*6.25.
                let sd = (1.0 + 0.16 * 6.25f64).sqrt();
                (0..n)
                    .map(|_| {
                        let slow = if rng.next_f64() < 0.2 { 2.5 } else { 0.0 };
                        (rng.normal() + slow - 0.5) / sd
                    })
                    .collect()
            }
            Regime::Autocorrelated(rho) => {
                let innovation = (1.0 - rho * rho).sqrt();
                let mut x = rng.normal();
                (0..n)
                    .map(|_| {
                        x = rho * x + innovation * rng.normal();
                        x
                    })
                    .collect()
            }
            Regime::Discrete => (0..n).map(|_| (rng.normal() * 2.0).round() / 2.0).collect(),
        }
    }
}

/// Which detector.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Detector {
    /// The default, at this false-alarm rate per 1,000 points.
    Calibrated(f64),
    /// Otava 0.8 exactly (window 50, p 0.001).
    Otava,
}

impl Detector {
    /// Change-point indices of `series` (a level of 100 plus the noise scaled to 2%).
    pub fn indices(&self, series: &[f64]) -> Vec<usize> {
        match *self {
            Detector::Calibrated(a) => rank_cusum::detect(
                series,
                &rank_cusum::Options {
                    false_alarm: a,
                    ..rank_cusum::Options::default()
                },
            )
            .change_points
            .iter()
            .map(|c| c.index)
            .collect(),
            Detector::Otava => changepoint::detect(series, &changepoint::Options::default())
                .change_points
                .iter()
                .map(|c| c.index)
                .collect(),
        }
    }
}

/// A series as stored: level 100, noise with a 2% spread, plus `step` sigma
/// from index `at` on (and back after `until`, if given).
pub fn series(
    regime: Regime,
    n: usize,
    step: Option<(usize, Option<usize>, f64)>,
    rng: &mut SplitMix64,
) -> Vec<f64> {
    let noise = regime.noise(n, rng);
    noise
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let shift = match step {
                Some((at, until, size)) if i >= at && until.is_none_or(|u| i < u) => size,
                _ => 0.0,
            };
            100.0 + 2.0 * (e + shift)
        })
        .collect()
}

/// Fraction of `trials` noise series of `n` points with any change point.
pub fn false_alarm_rate(
    regime: Regime,
    detector: Detector,
    n: usize,
    trials: usize,
    seed: u64,
) -> f64 {
    sequential_false_alarm_rate(regime, detector, n, n, 1, trials, seed)
}

/// A noise series checked after every `every` new points from `start` to `n`,
/// as a server does after each upload: the fraction with any alert at any check.
pub fn sequential_false_alarm_rate(
    regime: Regime,
    detector: Detector,
    start: usize,
    n: usize,
    every: usize,
    trials: usize,
    seed: u64,
) -> f64 {
    noise_share(regime, n, trials, seed, |s| {
        (start..=n)
            .step_by(every.max(1))
            .any(|m| !detector.indices(&s[..m]).is_empty())
    })
}

/// The share of `trials` noise series of `n` points for which `alarm` is true.
fn noise_share(
    regime: Regime,
    n: usize,
    trials: usize,
    seed: u64,
    alarm: impl Fn(&[f64]) -> bool,
) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let hits = (0..trials)
        .filter(|_| alarm(&series(regime, n, None, &mut rng)))
        .count();
    hits as f64 / trials.max(1) as f64
}

/// How often a step of `size` sigma at `at` in `n` points (lasting to the end,
/// or `len` points) is found within `tolerance` points, and the mean number of
/// other (false) change points per series.
pub struct Power {
    pub found: f64,
    pub extra_per_series: f64,
}

/// A step to plant: `size` sigma from index `at` on (for `len` points, or to
/// the end), found when a change point is within `tolerance` points of it.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub at: usize,
    pub len: Option<usize>,
    pub size: f64,
    pub tolerance: usize,
}

pub fn power(
    regime: Regime,
    detector: Detector,
    n: usize,
    step: Step,
    trials: usize,
    seed: u64,
) -> Power {
    let Step {
        at,
        len,
        size,
        tolerance,
    } = step;
    let mut rng = SplitMix64::new(seed);
    let (mut found, mut extra) = (0usize, 0usize);
    let until = len.map(|l| at + l);
    let truth: Vec<usize> = std::iter::once(at)
        .chain(until.filter(|&u| u < n))
        .collect();
    for _ in 0..trials {
        let s = series(regime, n, Some((at, until, size)), &mut rng);
        let idx = detector.indices(&s);
        if idx.iter().any(|&i| i.abs_diff(at) <= tolerance) {
            found += 1;
        }
        extra += idx
            .iter()
            .filter(|&&i| truth.iter().all(|&t| i.abs_diff(t) > tolerance))
            .count();
    }
    Power {
        found: found as f64 / trials.max(1) as f64,
        extra_per_series: extra as f64 / trials.max(1) as f64,
    }
}

/// Fraction of `trials` noise series of `n` points in which the end test
/// alone ([`crate::stats::sequential`]), checked after every point as uploads
/// arrive, calls a change somewhere.
pub fn end_test_false_alarm_rate(
    regime: Regime,
    alpha: f64,
    n: usize,
    trials: usize,
    seed: u64,
) -> f64 {
    use crate::stats::sequential;
    noise_share(regime, n, trials, seed, |s| {
        (1..=n).any(|m| sequential::end_change(&s[..m], alpha).is_some())
    })
}

/// How soon a step is called as the points after it arrive.
#[derive(Debug, Clone, Copy)]
pub struct Delay {
    /// Median number of points after the step (the first one included) when
    /// the first change point was reported (`max_after + 1` when never).
    pub median: usize,
    /// Of the steps called, the share placed within 2 points of the step.
    pub placed: f64,
    /// The share called within `max_after` points.
    pub found: f64,
}

/// A step of `size` sigma after `history` points of noise, the detector run
/// on the whole series after each new point (as a server does after each
/// upload) until it reports a change point at or after the step's start
/// minus 5, or `max_after` points have come.
pub fn delay(
    regime: Regime,
    detector: Detector,
    history: usize,
    size: f64,
    max_after: usize,
    trials: usize,
    seed: u64,
) -> Delay {
    let mut rng = SplitMix64::new(seed);
    let mut delays = Vec::with_capacity(trials);
    let (mut found, mut placed) = (0usize, 0usize);
    for _ in 0..trials {
        let s = series(
            regime,
            history + max_after,
            Some((history, None, size)),
            &mut rng,
        );
        let mut d = max_after + 1;
        for after in 1..=max_after {
            let idx = detector.indices(&s[..history + after]);
            if let Some(&i) = idx.iter().find(|&&i| i + 5 >= history) {
                d = after;
                found += 1;
                if i.abs_diff(history) <= 2 {
                    placed += 1;
                }
                break;
            }
        }
        delays.push(d);
    }
    delays.sort_unstable();
    Delay {
        median: delays.get(trials / 2).copied().unwrap_or(max_after + 1),
        placed: placed as f64 / found.max(1) as f64,
        found: found as f64 / trials.max(1) as f64,
    }
}
