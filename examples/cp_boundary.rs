//! How often the plausible places of a step (`stats::boundary`) hold the
//! true one: 400 series of 30 + 10 points per noise family and step size,
//! the coverage of the 50%, 90% and 99% sets and their sizes.
//!
//!     cargo run --release --example cp_boundary

use tardy::stats::boundary::{plausible, step_position};
use tardy::stats::rng::SplitMix64;
fn main() {
    let mut rng = SplitMix64::new(1);
    for (name, noise) in [("gauss", 0), ("lognormal", 1), ("heavy", 2)] {
        for step in [1.0, 2.0, 4.0, 10.0] {
            let mut cover = [0usize; 3];
            let mut size = [0usize; 3];
            let trials = 400;
            for _ in 0..trials {
                let mut draw = || match noise {
                    0 => rng.normal(),
                    1 => (0.5 * rng.normal()).exp() / 0.6,
                    _ => {
                        let u = rng.next_f64();
                        (std::f64::consts::PI * (u - 0.5)).tan() * 0.3
                    }
                };
                let before = 30;
                let after = 10;
                let mut x: Vec<f64> = (0..before).map(|_| draw()).collect();
                x.extend((0..after).map(|_| step + draw()));
                let p = step_position(&x);
                for (j, leave) in [0.5, 0.1, 0.01].iter().enumerate() {
                    let t = plausible(&p, *leave);
                    size[j] += t.len();
                    if t.iter().any(|t| t.0 == before) {
                        cover[j] += 1;
                    }
                }
            }
            println!(
                "{name} {step}σ: coverage 50% {:.2} 90% {:.2} 99% {:.2}; sizes {:.1} {:.1} {:.1}",
                cover[0] as f64 / trials as f64,
                cover[1] as f64 / trials as f64,
                cover[2] as f64 / trials as f64,
                size[0] as f64 / trials as f64,
                size[1] as f64 / trials as f64,
                size[2] as f64 / trials as f64
            );
        }
    }
}
