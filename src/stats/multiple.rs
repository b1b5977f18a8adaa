//! Multiple-comparison control: adjusted p-values for a family of tests.
//! Holm (1979) controls the family-wise error rate; Benjamini-Hochberg (1995)
//! the false discovery rate. A test "survives" when its adjusted p-value is
//! below alpha.

/// Holm's step-down adjusted p-values, in the input order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let mut adjusted = vec![0.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

/// Benjamini-Hochberg adjusted p-values (q-values), in the input order.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| p[j].total_cmp(&p[i])); // largest first
    let mut adjusted = vec![0.0; m];
    let mut running = 1.0f64;
    for (k, &i) in order.iter().enumerate() {
        let rank = m - k; // 1-based rank in ascending order
        running = running.min((p[i] * m as f64 / rank as f64).min(1.0));
        adjusted[i] = running;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference: statsmodels.stats.multitest.multipletests(p, method="holm" / "fdr_bh")
    //   p = [0.01, 0.04, 0.03, 0.005, 0.2]
    //   holm   -> [0.04, 0.09, 0.09, 0.025, 0.2]
    //   fdr_bh -> [0.025, 0.05, 0.05, 0.025, 0.2]
    #[test]
    fn known_answers() {
        let p = [0.01, 0.04, 0.03, 0.005, 0.2];
        let h = holm(&p);
        for (x, y) in h.iter().zip([0.04, 0.09, 0.09, 0.025, 0.2]) {
            assert!((x - y).abs() < 1e-12, "{h:?}");
        }
        let q = benjamini_hochberg(&p);
        for (x, y) in q.iter().zip([0.025, 0.05, 0.05, 0.025, 0.2]) {
            assert!((x - y).abs() < 1e-12, "{q:?}");
        }
    }
}
