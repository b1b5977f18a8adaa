//! The power table of docs/changepoints.md: how soon tardy's detector calls a
//! step, checked after every new point as a server does, beside a CUSUM tuned
//! to the same false-alarm rate on the same noise (the statistical limit: a
//! CUSUM that knows the level before the step, the noise's spread and the
//! step's size is the fastest detector at its false-alarm rate, Lorden's
//! bound, Moustakides 1986).
//!
//!     cargo run --release --example cp_power [TRIALS_PER_CELL]   (default 200)
//!
//! Series are 100 + 2 x noise (unit-variance noise), `history` points of it,
//! then a step of `size` standard deviations; each is checked after every
//! new point, up to 40 points at the new level. A cell reads: the median
//! number of points at the new level when the step is called (">40" when
//! more than half are not), and the share called within 40 points. Both
//! detectors' false alarms are tuned to 1% of 1,000-point noise series
//! checked at every point: tardy's by its calibration, the CUSUM's
//! threshold by simulation on each noise (so the CUSUM is tuned to the
//! noise it is tested on, which no real detector is).

use tardy::history::simulate::Regime;
use tardy::stats::rank_cusum::{Options, detect};
use tardy::stats::rng::SplitMix64;

const MOST: usize = 40;

/// Two-sided CUSUM on (x - 100) / 2 with reference k: the first index at
/// which either side's sum passes h, from `from` on.
fn cusum_alarm(x: &[f64], k: f64, h: f64) -> Option<usize> {
    let (mut up, mut down) = (0.0f64, 0.0f64);
    for (i, v) in x.iter().enumerate() {
        let z = (v - 100.0) / 2.0;
        up = (up + z - k).max(0.0);
        down = (down - z - k).max(0.0);
        if up > h || down > h {
            return Some(i);
        }
    }
    None
}

fn series(regime: Regime, n: usize, step_at: usize, size: f64, rng: &mut SplitMix64) -> Vec<f64> {
    regime
        .noise(n, rng)
        .iter()
        .enumerate()
        .map(|(i, e)| 100.0 + 2.0 * (e + if i >= step_at { size } else { 0.0 }))
        .collect()
}

/// The CUSUM threshold h at which 1% of 1,000-point series of this noise
/// raise an alarm (bisection over h, `trials` series a try).
fn tune_cusum(regime: Regime, k: f64, trials: usize, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let noise: Vec<Vec<f64>> = (0..trials)
        .map(|_| series(regime, 1000, 1000, 0.0, &mut rng))
        .collect();
    let rate = |h: f64| {
        noise
            .iter()
            .filter(|x| cusum_alarm(x, k, h).is_some())
            .count() as f64
            / trials as f64
    };
    let (mut lo, mut hi) = (0.0, 200.0);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if rate(mid) > 0.01 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// (median delay, share found within MOST) of one detector.
fn cell(delays: &[Option<usize>]) -> String {
    let mut d: Vec<usize> = delays.iter().map(|d| d.unwrap_or(usize::MAX)).collect();
    d.sort_unstable();
    let median = d[d.len() / 2];
    let found = delays.iter().filter(|d| d.is_some()).count() as f64 / delays.len() as f64;
    format!(
        "{} ({:.0}%)",
        if median > MOST {
            format!(">{MOST}")
        } else {
            median.to_string()
        },
        found * 100.0
    )
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    println!(
        "{trials} series a cell; median points at the new level when called (share called within {MOST}); tardy | CUSUM tuned to the same false-alarm rate on that noise\n"
    );
    println!("| noise | step | 20 points before | 60 points before | 200 points before |");
    println!("|---|---:|---|---|---|");
    let noises = [
        Regime::Gaussian,
        Regime::Lognormal,
        Regime::HeavyTailed,
        Regime::Autocorrelated(0.6),
        Regime::Autocorrelated(0.8),
    ];
    for (r, regime) in noises.into_iter().enumerate() {
        for (s, size) in [2.0f64, 4.0, 10.0].into_iter().enumerate() {
            let k = size / 2.0;
            let h = tune_cusum(regime, k, 2000, 77 + r as u64);
            let mut cells = Vec::new();
            for (l, history) in [20usize, 60, 200].into_iter().enumerate() {
                let mut rng = SplitMix64::new(1000 + 100 * r as u64 + 10 * s as u64 + l as u64);
                let mut ours = Vec::with_capacity(trials);
                let mut theirs = Vec::with_capacity(trials);
                for _ in 0..trials {
                    let x = series(regime, history + MOST, history, size, &mut rng);
                    ours.push((1..=MOST).find(|&after| {
                        detect(&x[..history + after], &Options::default())
                            .change_points
                            .iter()
                            .any(|c| c.index.abs_diff(history) <= 3)
                    }));
                    theirs.push(match cusum_alarm(&x, k, h) {
                        Some(i) if i >= history => Some(i - history + 1),
                        _ => None,
                    });
                }
                cells.push(format!("{} \\| {}", cell(&ours), cell(&theirs)));
            }
            println!("| {} | {size} sd | {} |", regime.name(), cells.join(" | "));
        }
    }
}
