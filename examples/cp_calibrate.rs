//! Simulates the null distribution of the calibrated change-point detector's
//! statistics, scale by scale (src/stats/rank_cusum.rs), and prints the table
//! of src/stats/rank_cusum_null.rs.
//!
//!   cargo run --release --example cp_calibrate [SERIES_PER_SCALE]   (default 20000)
//!
//! For each scale (its family: intervals of l points ending at every multiple
//! of its `grid`) it draws series of independent uniforms holding K members of
//! the family (K·grid = 2,000 points or 2·l, whichever is more; only ranks
//! matter, so any continuous distribution gives the same answer), takes the
//! largest statistic over those K intervals, and fits ln P(max ≥ z) = a' + b·z²
//! by least squares over the empirical upper tail (survival between 0.0005, or
//! 50 series, and 0.05: where the thresholds are taken). Members end 1000/grid times per 1,000 points, so alarms per 1,000
//! points are P(max ≥ z)·1000/(K·grid): a = a' + ln(1000/(K·grid)). Longer
//! scales use fewer series (they are slow and smooth; the counts are printed).
//! It also prints how well the fit matches the empirical 1% and 0.5% points.

use tardy::stats::rank_cusum::{scale, scale_maximum};
use tardy::stats::rng::SplitMix64;

const SCALES: usize = 11;

fn simulate(k: usize, n: usize, reps: usize, seed: u64) -> Vec<f64> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = reps.div_ceil(threads);
    let mut out: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = SplitMix64::new(seed ^ (k as u64) << 20 ^ t as u64);
                    let mut x = vec![0.0; n];
                    (0..per)
                        .map(|_| {
                            for v in x.iter_mut() {
                                *v = rng.next_f64();
                            }
                            scale_maximum(&x, k)
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    out.sort_by(f64::total_cmp);
    out
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20000);
    println!("// {reps} series per scale; cargo run --release --example cp_calibrate {reps}");
    let mut report = Vec::new();
    for k in 0..SCALES {
        let sc = scale(k);
        let intervals = 2000usize.max(2 * sc.len).div_ceil(sc.grid);
        let n = sc.len + sc.grid * (intervals - 1);
        let reps = reps
            / match sc.len {
                l if l <= 96 => 1,
                l if l <= 384 => 2,
                l if l <= 768 => 4,
                l if l <= 1536 => 10,
                _ => 20,
            };
        let v = simulate(k, n, reps, 0xC0FFEE);
        let m = v.len() as f64;
        // The tail where thresholds are taken (alarms of 0.1-5% per 1,000
        // points at a scale's share), as far out as 50 series reach.
        let lo = (50.0 / m).max(0.0005);
        let (mut sx, mut sy, mut sxx, mut sxy, mut cnt) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (i, &z) in v.iter().enumerate() {
            let p = (m - i as f64) / m;
            if !(lo..=0.05).contains(&p) {
                continue;
            }
            let (x, y) = (z * z, p.ln());
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            cnt += 1.0;
        }
        let b = (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx);
        let a0 = (sy - b * sx) / cnt;
        let a = a0 + (1000.0 / (intervals * sc.grid) as f64).ln();
        println!("    ({}, {a:.4}, {b:.5}),", sc.len);
        let q = |p: f64| v[((1.0 - p) * m) as usize];
        let fit = |p: f64| ((p.ln() - a0) / b).sqrt();
        report.push(format!(
            "// l {:>5} grid {:>4}, {intervals} intervals in {n} points, {} series: 1% {:.3} (fit {:.3})  0.5% {:.3} ({:.3})",
            sc.len,
            sc.grid,
            v.len(),
            q(0.01),
            fit(0.01),
            q(0.005),
            fit(0.005)
        ));
    }
    for l in report {
        println!("{l}");
    }
}
