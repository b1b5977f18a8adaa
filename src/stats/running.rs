//! Running mean and variance (Welford), so the measurement loop can evaluate
//! its stopping rule in O(1) per run instead of re-reading every sample.

#[derive(Debug, Clone, Default)]
pub struct Running {
    n: u64,
    mean: f64,
    m2: f64,
    sum: f64,
}

impl Running {
    pub fn push(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        let delta = x - self.mean;
        self.mean += delta / self.n as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn n(&self) -> u64 {
        self.n
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    pub fn sum(&self) -> f64 {
        self.sum
    }

    /// Sample standard deviation (n - 1); 0 below two values.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn matches_two_pass(values in proptest::collection::vec(0.0f64..1e3, 2..300)) {
            let mut r = Running::default();
            values.iter().for_each(|&v| r.push(v));
            let s = crate::stats::summarize(&values, 0.95).unwrap();
            prop_assert!((r.mean() - s.mean).abs() <= 1e-9 * s.mean.abs().max(1.0));
            prop_assert!((r.stddev() - s.stddev).abs() <= 1e-7 * s.stddev.max(1.0));
        }
    }
}
