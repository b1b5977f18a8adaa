//! A seeded percentile bootstrap of the ratio of two samples' centres
//! (median or mean), candidate / reference.

use super::rng::SplitMix64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Center {
    Median,
    Mean,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BootstrapRatio {
    pub ratio: f64,
    pub ci: [f64; 2],
    /// Two-sided p-value by inverting the percentile interval: twice the
    /// smaller share of resampled ratios on either side of 1.
    pub p_value: f64,
    pub resamples: usize,
}

fn center(values: &mut [f64], c: Center) -> f64 {
    match c {
        Center::Mean => values.iter().sum::<f64>() / values.len() as f64,
        Center::Median => {
            let n = values.len();
            let mid = n / 2;
            let (_, hi, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
            let hi = *hi;
            if n % 2 == 1 {
                hi
            } else {
                let lo = values[..mid]
                    .iter()
                    .copied()
                    .fold(f64::NEG_INFINITY, f64::max);
                (lo + hi) / 2.0
            }
        }
    }
}

/// Percentile bootstrap of center(b) / center(a). `None` for empty samples
/// or a zero reference centre.
pub fn ratio(
    a: &[f64],
    b: &[f64],
    c: Center,
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<BootstrapRatio> {
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return None;
    }
    let ca = center(&mut a.to_vec(), c);
    if ca == 0.0 {
        return None;
    }
    let point = center(&mut b.to_vec(), c) / ca;
    let mut rng = SplitMix64::new(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for x in ra.iter_mut() {
            *x = a[rng.below(a.len() as u64) as usize];
        }
        for x in rb.iter_mut() {
            *x = b[rng.below(b.len() as u64) as usize];
        }
        let denom = center(&mut ra, c);
        if denom != 0.0 {
            ratios.push(center(&mut rb, c) / denom);
        }
    }
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_unstable_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    let q = |p: f64| super::summary::quantile_sorted(&ratios, p);
    let below = ratios.iter().filter(|&&r| r <= 1.0).count() as f64 / ratios.len() as f64;
    let above = ratios.iter().filter(|&&r| r >= 1.0).count() as f64 / ratios.len() as f64;
    Some(BootstrapRatio {
        ratio: point,
        ci: [q(alpha / 2.0), q(1.0 - alpha / 2.0)],
        p_value: (2.0 * below.min(above)).min(1.0),
        resamples: ratios.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_sensible() {
        let a: Vec<f64> = (0..40).map(|i| 10.0 + (i % 7) as f64 * 0.1).collect();
        let b: Vec<f64> = a.iter().map(|v| v * 1.2).collect();
        let r1 = ratio(&a, &b, Center::Median, 0.95, 2000, 9).unwrap();
        let r2 = ratio(&a, &b, Center::Median, 0.95, 2000, 9).unwrap();
        assert_eq!(r1, r2);
        assert!((r1.ratio - 1.2).abs() < 1e-12);
        assert!(r1.ci[0] > 1.1 && r1.ci[1] < 1.3);
        assert!(r1.p_value < 0.01);
    }
}
