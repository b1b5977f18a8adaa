//! The screen a server runs before the whole-series search on each test of
//! a suite (`stats::rank_cusum::screen`): how many noise series it lets
//! through (the search's cost), and of the series where the search finds a
//! change, how many it would have let through (must be all).
//!
//!     cargo run --release --example cp_screen
use tardy::stats::rank_cusum::{Options, detect, screen};
use tardy::stats::rng::SplitMix64;

fn main() {
    let mut rng = SplitMix64::new(3);
    let o = Options::default();
    for (name, family) in [
        ("gaussian", 0),
        ("lognormal", 1),
        ("heavy", 2),
        ("bimodal", 3),
        ("ar0.6", 4),
    ] {
        for n in [30usize, 100, 256] {
            let (mut pass, mut found, mut missed, trials) = (0, 0, 0, 2000);
            for trial in 0..trials {
                let step = [0.0, 0.5, 1.0, 2.0, 4.0][trial % 5];
                let at = n / 2 + (trial % 7) * n / 20;
                let mut v = 0.0;
                let x: Vec<f64> = (0..n)
                    .map(|i| {
                        let e = match family {
                            0 => rng.normal(),
                            1 => (0.5 * rng.normal()).exp() / 0.6,
                            2 => (std::f64::consts::PI * (rng.next_f64() - 0.5)).tan() * 0.3,
                            3 => rng.normal() * 0.3 + if rng.next_f64() < 0.3 { 2.0 } else { 0.0 },
                            _ => {
                                v = 0.6 * v + rng.normal() * 0.8;
                                v
                            }
                        };
                        e + if i >= at.min(n - 1) { step } else { 0.0 }
                    })
                    .collect();
                let s = screen(&x);
                if step == 0.0 {
                    pass += usize::from(s);
                }
                if !detect(&x, &o).change_points.is_empty() {
                    found += 1;
                    missed += usize::from(!s);
                }
            }
            println!(
                "{name:9} n={n:3}: noise let through {:5.1}%; search found {found:4}, screen missed {missed}",
                100.0 * pass as f64 / (trials / 5) as f64
            );
        }
    }
}
