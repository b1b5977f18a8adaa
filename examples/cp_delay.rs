//! How soon tardy's detector calls a step as points arrive, and how often
//! its end test alone raises a false alarm when checked after every point
//! (docs/changepoints.md, "As uploads arrive").
//!
//!     cargo run --release --example cp_delay [TRIALS_PER_ROW] [NOISE_SERIES]    (default 300, and as many)
//!
//! Series are 100 + 2 x noise with unit-variance noise; steps are in units of
//! that standard deviation, after 200 points of history (and 20, a short
//! series).

use tardy::history::simulate::{Detector, Regime, delay, end_test_false_alarm_rate};

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let noise_trials: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(trials);
    let cal = Detector::Calibrated(0.01);
    println!(
        "{trials} series per cell ({noise_trials} noise series); calibrated detector at 1% per 1,000 points\n"
    );
    println!("### False alarms of the end test checked after every point of 1,000\n");
    println!("| noise | series with a false alarm |");
    println!("|---|---:|");
    for (k, r) in Regime::all().into_iter().enumerate() {
        let f = end_test_false_alarm_rate(r, 0.005, 1000, noise_trials, 700 + k as u64);
        println!("| {} | {:.1}% |", r.name(), f * 100.0);
    }
    println!(
        "\n### Points after the step when it is called (median), placed within 2 points, found within 40\n"
    );
    println!("| noise | 2 sigma | 4 sigma | 10 sigma | 4 sigma after 20 points |");
    println!("|---|---:|---:|---:|---:|");
    for (k, r) in Regime::all().into_iter().enumerate() {
        let mut cells = Vec::new();
        for (i, (hist, size)) in [(200, 2.0), (200, 4.0), (200, 10.0), (20, 4.0)]
            .into_iter()
            .enumerate()
        {
            let d = delay(
                r,
                cal,
                hist,
                size,
                40,
                trials,
                900 + 10 * k as u64 + i as u64,
            );
            cells.push(format!(
                "{} ({:.0}%, {:.0}%)",
                if d.median > 40 {
                    ">40".to_string()
                } else {
                    d.median.to_string()
                },
                d.placed * 100.0,
                d.found * 100.0
            ));
        }
        println!("| {} | {} |", r.name(), cells.join(" | "));
    }
}
