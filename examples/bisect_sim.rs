//! The error-rate study of docs/bisect.md: the real bisection engine on simulated
//! 64-commit histories with this VM's kind of noise (3% lognormal spread, 10% of runs
//! in an 8%-slower mode, ±2% drift), against the fixed 30-runs-per-step bisection of
//! `git bisect run` + a t-test script on the same noise.
//!
//!     cargo run --release --example bisect_sim [SIMS_PER_ROW]

use tardy::bisect::simulate::{Noise, fixed_once, tardy_once};
use tardy::stats::rng::SplitMix64;

fn main() {
    let sims: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let n = 64;
    println!(
        "{n} commits, {sims} bisections per row, culprit at a random commit, noise: 3% spread, 10% of runs 8% slower, ±2% drift"
    );
    println!(
        "{:>7} | {:>14} {:>10} | {:>14} {:>10} | {:>10}",
        "effect", "tardy correct", "runs/bis.", "fixed correct", "runs/bis.", "runs ratio"
    );
    for (effect, sigma) in [(0.03, 0.03), (0.05, 0.03), (0.10, 0.03), (0.05, 0.06)] {
        let noise = Noise {
            sigma,
            ..Noise::vm()
        };
        let mut rng = SplitMix64::new(42);
        let (mut t_ok, mut t_runs, mut f_ok, mut f_runs) = (0, 0u64, 0, 0u64);
        for s in 0..sims {
            let culprit = 1 + (rng.next_f64() * n as f64) as usize % n;
            match tardy_once(n, culprit, effect, noise, s as u64 + 1, dir.path()) {
                Ok((ok, runs)) => {
                    t_ok += ok as usize;
                    t_runs += runs;
                }
                Err(e) => eprintln!("simulation {s}: {e}"),
            }
            let (ok, runs) = fixed_once(n, culprit, effect, noise, s as u64 + 1);
            f_ok += ok as usize;
            f_runs += runs;
        }
        println!(
            "{:>6.0}% | {:>13.1}% {:>10.0} | {:>13.1}% {:>10.0} | {:>10.2}   (spread {:.0}%)",
            effect * 100.0,
            100.0 * t_ok as f64 / sims as f64,
            t_runs as f64 / sims as f64,
            100.0 * f_ok as f64 / sims as f64,
            f_runs as f64 / sims as f64,
            t_runs as f64 / f_runs as f64,
            sigma * 100.0
        );
    }
}
