//! The change-point study of docs/changepoints.md: tardy's calibrated detector
//! (the default) and Otava's E-Divisive (`--otava`) on simulated series.
//!
//!     cargo run --release --example cp_sim [TRIALS_PER_ROW]    (default 500)
//!
//! Every noise has unit standard deviation; series are 100 + 2 x noise (a 2%
//! spread), steps are in units of that standard deviation.

use tardy::history::simulate::{
    Detector, Regime, Step, false_alarm_rate, power, sequential_false_alarm_rate,
};

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500);
    let cal = Detector::Calibrated(0.01);
    println!("{trials} series per cell; calibrated detector at 1% per 1,000 points\n");
    println!("## False alarms on pure noise (fraction of series with any change point)\n");
    println!(
        "| noise | 1,000 points | 2,000 points | 1,000 points checked every 10 points from 50 on (as uploads arrive) | Otava, 1,000 points |"
    );
    println!("|---|---:|---:|---:|---:|");
    for (k, r) in Regime::all().into_iter().enumerate() {
        let seed = 100 + k as u64;
        let f1 = false_alarm_rate(r, cal, 1000, trials, seed);
        let f2 = false_alarm_rate(r, cal, 2000, trials, seed + 50);
        let fs = sequential_false_alarm_rate(r, cal, 50, 1000, 10, (trials / 2).max(20), seed + 70);
        let fo = false_alarm_rate(r, Detector::Otava, 1000, (trials / 5).max(20), seed + 90);
        println!(
            "| {} | {:.1}% | {:.1}% | {:.1}% | {:.0}% |",
            r.name(),
            f1 * 100.0,
            f2 * 100.0,
            fs * 100.0,
            fo * 100.0
        );
    }
    println!("\n## A 3-sigma step (found within 3 points of where it is)\n");
    println!(
        "| noise | 20 points before the end of 1,000 | 40 before the end | mid-series, lasting 20 points | at 500 of 1,000 | false extra points per series | Otava: 20 before the end |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (k, r) in Regime::all().into_iter().enumerate() {
        let seed = 300 + k as u64;
        let end = power(
            r,
            cal,
            1000,
            Step {
                at: 980,
                len: None,
                size: 3.0,
                tolerance: 3,
            },
            trials,
            seed,
        );
        let end40 = power(
            r,
            cal,
            1000,
            Step {
                at: 960,
                len: None,
                size: 3.0,
                tolerance: 3,
            },
            trials,
            seed + 5,
        );
        let blip = power(
            r,
            cal,
            1000,
            Step {
                at: 490,
                len: Some(20),
                size: 3.0,
                tolerance: 3,
            },
            trials,
            seed + 10,
        );
        let mid = power(
            r,
            cal,
            1000,
            Step {
                at: 500,
                len: None,
                size: 3.0,
                tolerance: 3,
            },
            trials,
            seed + 20,
        );
        let otava = power(
            r,
            Detector::Otava,
            1000,
            Step {
                at: 980,
                len: None,
                size: 3.0,
                tolerance: 3,
            },
            (trials / 5).max(20),
            seed + 30,
        );
        println!(
            "| {} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.3} | {:.0}% |",
            r.name(),
            end.found * 100.0,
            end40.found * 100.0,
            blip.found * 100.0,
            mid.found * 100.0,
            (end.extra_per_series + mid.extra_per_series) / 2.0,
            otava.found * 100.0
        );
    }
    println!("\n## Smaller steps, Gaussian noise, 20 points before the end of 1,000\n");
    println!("| step (sigma) | found | ");
    println!("|---:|---:|");
    for (k, size) in [1.0, 1.5, 2.0, 2.5, 3.0, 4.0].into_iter().enumerate() {
        let p = power(
            Regime::Gaussian,
            cal,
            1000,
            Step {
                at: 980,
                len: None,
                size,
                tolerance: 3,
            },
            trials,
            500 + k as u64,
        );
        println!("| {size} | {:.1}% |", p.found * 100.0);
    }
}
