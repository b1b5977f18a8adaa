//! Simulates the null distribution of the calibrated change-point detector's
//! maximum statistic (src/stats/rank_cusum.rs) and prints the table of
//! src/stats/rank_cusum_null.rs.
//!
//!   cargo run --release --example cp_calibrate [SERIES_PER_ROW]   (default 20000)
//!
//! For each n it draws SERIES_PER_ROW series of n independent uniforms (only
//! ranks matter, so any continuous distribution gives the same answer), takes
//! the largest standardised rank CUSUM over all seeded intervals, and fits
//! ln P(max ≥ z) = a + b·z² by least squares over the empirical upper tail
//! (survival between 0.002 and 0.2). It also prints how well the fit matches
//! the empirical 5%, 1% and 0.5% points.

use tardy::stats::rank_cusum::max_statistic;
use tardy::stats::rng::SplitMix64;

const NS: &[usize] = &[
    12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144,
    8192,
];

fn simulate(n: usize, reps: usize, seed: u64) -> Vec<f64> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per = reps.div_ceil(threads);
    let mut out: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut rng = SplitMix64::new(seed ^ (n as u64) << 20 ^ t as u64);
                    let mut x = vec![0.0; n];
                    (0..per)
                        .map(|_| {
                            for v in x.iter_mut() {
                                *v = rng.next_f64();
                            }
                            max_statistic(&x)
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
    println!("// {reps} series per row; cargo run --release --example cp_calibrate {reps}");
    let mut report = Vec::new();
    for &n in NS {
        let v = simulate(n, reps, 0xC0FFEE);
        let m = v.len() as f64;
        // Empirical survival at each sorted value.
        let (mut sx, mut sy, mut sxx, mut sxy, mut k) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (i, &z) in v.iter().enumerate() {
            let p = (m - i as f64) / m;
            if !(0.002..=0.2).contains(&p) {
                continue;
            }
            let (x, y) = (z * z, p.ln());
            sx += x;
            sy += y;
            sxx += x * x;
            sxy += x * y;
            k += 1.0;
        }
        let b = (k * sxy - sx * sy) / (k * sxx - sx * sx);
        let a = (sy - b * sx) / k;
        println!("    ({n}, {a:.4}, {b:.5}),");
        let q = |p: f64| v[((1.0 - p) * m) as usize];
        let fit = |p: f64| ((p.ln() - a) / b).sqrt();
        report.push(format!(
            "// n {n:>5}: 5% {:.3} (fit {:.3})  1% {:.3} ({:.3})  0.5% {:.3} ({:.3})",
            q(0.05),
            fit(0.05),
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
