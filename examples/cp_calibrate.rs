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
//!
//!   cargo run --release --example cp_calibrate -- --jump [SERIES_PER_NOISE]   (default 20000)
//!
//! prints the table of src/stats/jump_null.rs instead: for each kind of noise
//! the plain-step test must stay quiet on (src/stats/jump.rs; AR(1) up to
//! ρ = 0.8 among them) and each block length, the largest |t| over every
//! split of a 1,000-point series, its tail fitted as ln P(max ≥ t) = a + b·t
//! over survival 0.0005 (or 50 series) to 0.05. The detector takes, at each
//! t, the largest rate of any noise.

use tardy::history::simulate::Regime;
use tardy::stats::jump::{BLOCKS, block_maximum};
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let jump = args.iter().any(|a| a == "--jump");
    let reps: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(20000);
    if jump {
        calibrate_jump(reps);
        return;
    }
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

/// The kinds of noise the plain-step test is calibrated on.
fn jump_noises() -> Vec<Regime> {
    let mut v = Regime::all();
    v.retain(|r| !matches!(r, Regime::Autocorrelated(_)));
    v.extend([0.3, 0.5, 0.6, 0.7, 0.8].map(Regime::Autocorrelated));
    v
}

fn calibrate_jump(reps: usize) {
    const N: usize = 1000;
    println!(
        "// {reps} series of {N} points per noise; cargo run --release --example cp_calibrate -- --jump {reps}"
    );
    println!("// (noise, block, a, b): ln(alarms per 1,000 points) = a + b·t");
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let mut report = Vec::new();
    for (r, noise) in jump_noises().into_iter().enumerate() {
        let per = reps.div_ceil(threads);
        // maxima[m][series]
        let mut maxima: Vec<Vec<f64>> = vec![Vec::new(); BLOCKS.len()];
        let parts: Vec<Vec<Vec<f64>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let mut rng = SplitMix64::new(0x5EED ^ (r as u64) << 24 ^ t as u64);
                        let mut out: Vec<Vec<f64>> = vec![Vec::with_capacity(per); BLOCKS.len()];
                        for _ in 0..per {
                            let x = noise.noise(N, &mut rng);
                            for (i, &m) in BLOCKS.iter().enumerate() {
                                out[i].push(block_maximum(&x, m));
                            }
                        }
                        out
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        for part in parts {
            for (i, v) in part.into_iter().enumerate() {
                maxima[i].extend(v);
            }
        }
        for (i, v) in maxima.iter_mut().enumerate() {
            v.sort_by(f64::total_cmp);
            let m = v.len() as f64;
            let lo = (50.0 / m).max(0.0005);
            let (mut sx, mut sy, mut sxx, mut sxy, mut cnt) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for (j, &t) in v.iter().enumerate() {
                let p = (m - j as f64) / m;
                if !(lo..=0.05).contains(&p) || !t.is_finite() {
                    continue;
                }
                sx += t;
                sy += p.ln();
                sxx += t * t;
                sxy += t * p.ln();
                cnt += 1.0;
            }
            let b = (cnt * sxy - sx * sy) / (cnt * sxx - sx * sx);
            let a = (sy - b * sx) / cnt;
            println!("    ({r}, {}, {a:.4}, {b:.5}),", BLOCKS[i]);
            let q = |p: f64| v[((1.0 - p) * m) as usize];
            let fit = |p: f64| (p.ln() - a) / b;
            report.push(format!(
                "// {:>24} m {:>2}: 1% {:.3} (fit {:.3})  0.1% {:.3} ({:.3})",
                noise.name(),
                BLOCKS[i],
                q(0.01),
                fit(0.01),
                q(0.001),
                fit(0.001)
            ));
        }
    }
    for (r, noise) in jump_noises().into_iter().enumerate() {
        println!("// noise {r}: {}", noise.name());
    }
    for l in report {
        println!("{l}");
    }
}
