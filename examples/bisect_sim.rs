//! The error-rate and calibration study of docs/bisect.md: the real bisection
//! engine on simulated 64-commit histories under several kinds of noise, and the
//! fixed-N-runs-per-step bisection of `git bisect run` + a t-test script on the
//! same noise, for the N that matches tardy's accuracy.
//!
//!     cargo run --release --example bisect_sim [SIMS_PER_ROW]     (default 200)
//!
//! Prints, per regime and effect: how often tardy names the right commit, how
//! often it names a wrong one, how often it says "one of these N" (and whether
//! the culprit is among them), its runs, and the fixed bisection's accuracy and
//! runs at several N. Then the calibration table: every stated probability of a
//! named culprit, bucketed, against how often such culprits were right.

use tardy::bisect::simulate::{Noise, fixed_once, fixed_paired_once, tardy_sim};
use tardy::stats::rng::SplitMix64;

struct Regime {
    name: &'static str,
    noise: Noise,
    second: bool,
}

fn regimes() -> Vec<Regime> {
    let vm = Noise::vm();
    vec![
        Regime {
            name: "VM (3% spread, 10% runs 8% slower, ±2% drift)",
            noise: vm,
            second: false,
        },
        Regime {
            name: "drift ±3%",
            noise: Noise { drift: 0.03, ..vm },
            second: false,
        },
        Regime {
            name: "20% slow mode (+8%)",
            noise: Noise {
                slow_mode_prob: 0.2,
                ..vm
            },
            second: false,
        },
        Regime {
            name: "heavy tail (2% of runs 20-100% slower)",
            noise: Noise {
                outlier_prob: 0.02,
                ..vm
            },
            second: false,
        },
        Regime {
            name: "two regressions in range",
            noise: vm,
            second: true,
        },
    ]
}

fn main() {
    let sims: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let n = 64;
    println!("{n} commits, {sims} bisections per row, culprit at a random commit\n");
    println!(
        "| noise | effect | right | wrong | range (holds it) | mean range | runs | fixed N=10 | N=20 | N=30 | N=50 | runs at N=30 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut calib: Vec<(f64, bool)> = Vec::new();
    for r in regimes() {
        for effect in [0.03, 0.05, 0.10] {
            let mut rng = SplitMix64::new(42);
            let (mut right, mut wrong, mut ranged, mut held, mut range_len, mut runs) =
                (0, 0, 0, 0, 0usize, 0u64);
            let mut fixed = [0usize; 4];
            let mut fixed_runs30 = 0u64;
            for s in 0..sims {
                let culprit = 1 + (rng.next_f64() * (n - 1) as f64) as usize;
                let second = r.second.then(|| {
                    let at = (culprit + 1 + (rng.next_f64() * 10.0) as usize).min(n);
                    (at, effect / 2.0)
                });
                let second = second.filter(|&(at, _)| at > culprit && at <= n);
                match tardy_sim(
                    n,
                    culprit,
                    effect,
                    second,
                    r.noise,
                    s as u64 + 1,
                    dir.path(),
                ) {
                    Ok(o) => {
                        runs += o.runs;
                        if o.named {
                            calib.push((o.confidence, o.right));
                            if o.right {
                                right += 1;
                            } else {
                                wrong += 1;
                            }
                        } else {
                            ranged += 1;
                            held += usize::from(o.in_range);
                            range_len += o.range_len;
                        }
                    }
                    Err(e) => eprintln!("simulation {s}: {e}"),
                }
                for (k, per) in [10, 20, 30, 50].into_iter().enumerate() {
                    let (ok, fr) = fixed_once(n, culprit, effect, per, r.noise, s as u64 + 1);
                    fixed[k] += usize::from(ok);
                    if per == 30 {
                        fixed_runs30 += fr;
                    }
                }
            }
            let pct = |k: usize| format!("{:.1}%", 100.0 * k as f64 / sims as f64);
            println!(
                "| {} | {:.0}% | {} | {} | {} ({}) | {:.1} | {:.0} | {} | {} | {} | {} | {:.0} |",
                r.name,
                effect * 100.0,
                pct(right),
                pct(wrong),
                pct(ranged),
                pct(held),
                if ranged > 0 {
                    range_len as f64 / ranged as f64
                } else {
                    0.0
                },
                runs as f64 / sims as f64,
                pct(fixed[0]),
                pct(fixed[1]),
                pct(fixed[2]),
                pct(fixed[3]),
                fixed_runs30 as f64 / sims as f64
            );
        }
    }
    // The fixed bisection a careful script runs: good re-measured beside
    // every step, interleaved, at a stricter per-step level too.
    println!(
        "\nFixed N per step with good re-measured beside each step (interleaved), Welch's t one-sided:\n"
    );
    println!(
        "| noise | effect | p<0.05 N=30 | N=50 | N=100 | p<0.01 N=30 | N=50 | N=100 | N=200 | runs at N=100 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in regimes() {
        for effect in [0.03, 0.05, 0.10] {
            let mut rng = SplitMix64::new(42);
            let cols = [
                (0.05, 30),
                (0.05, 50),
                (0.05, 100),
                (0.01, 30),
                (0.01, 50),
                (0.01, 100),
                (0.01, 200),
            ];
            let mut ok = [0usize; 7];
            let mut runs100 = 0u64;
            for s in 0..sims {
                let culprit = 1 + (rng.next_f64() * (n - 1) as f64) as usize;
                if r.second {
                    // Keep the draws in step with the table above.
                    let _ = rng.next_f64();
                }
                for (k, &(alpha, per)) in cols.iter().enumerate() {
                    let (right, runs) =
                        fixed_paired_once(n, culprit, effect, per, alpha, r.noise, s as u64 + 1);
                    ok[k] += usize::from(right);
                    if per == 100 && alpha == 0.01 {
                        runs100 += runs;
                    }
                }
            }
            let pct = |k: usize| format!("{:.1}%", 100.0 * k as f64 / sims as f64);
            println!(
                "| {} | {:.0}% | {} | {} | {} | {} | {} | {} | {} | {:.0} |",
                r.name,
                effect * 100.0,
                pct(ok[0]),
                pct(ok[1]),
                pct(ok[2]),
                pct(ok[3]),
                pct(ok[4]),
                pct(ok[5]),
                pct(ok[6]),
                runs100 as f64 / sims as f64
            );
        }
    }
    println!("\nCalibration of named culprits, all regimes and effects together:\n");
    println!("| stated probability | culprits named | right | observed |");
    println!("|---|---:|---:|---:|");
    for (lo, hi) in [(0.95, 0.99), (0.99, 0.999), (0.999, 1.0001)] {
        let in_bucket: Vec<&(f64, bool)> =
            calib.iter().filter(|(p, _)| *p >= lo && *p < hi).collect();
        let ok = in_bucket.iter().filter(|(_, r)| *r).count();
        println!(
            "| {:.1}% - {:.1}% | {} | {} | {:.1}% |",
            lo * 100.0,
            (hi * 100.0).min(100.0),
            in_bucket.len(),
            ok,
            if in_bucket.is_empty() {
                0.0
            } else {
                100.0 * ok as f64 / in_bucket.len() as f64
            }
        );
    }
}
