//! ministat's statistics, exactly: the one-pass variance over values in
//! file order, the upper median for an even count, and Student's t from a
//! 3-decimal table (row 0 serves every df above 100). The table's "99.5%"
//! column really holds two-sided 99.8% values (z = 3.090 in the last row);
//! tardy reproduces that only in `--ministat` mode. Used by `--ministat`
//! and nowhere else: tardy's own tests are in the sibling modules.

/// The confidence levels ministat accepts, in percent.
pub const LEVELS: [f64; 6] = [80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

/// Student's t, two-sided, for df 1..=100 (row 0: infinity), columns as LEVELS.
#[allow(clippy::approx_constant)] // 2.718 is a t value, not e
pub const T_TABLE: [[f64; 6]; 101] = [
    [1.282, 1.645, 1.960, 2.326, 2.576, 3.090],
    [3.078, 6.314, 12.706, 31.821, 63.657, 318.313],
    [1.886, 2.920, 4.303, 6.965, 9.925, 22.327],
    [1.638, 2.353, 3.182, 4.541, 5.841, 10.215],
    [1.533, 2.132, 2.776, 3.747, 4.604, 7.173],
    [1.476, 2.015, 2.571, 3.365, 4.032, 5.893],
    [1.440, 1.943, 2.447, 3.143, 3.707, 5.208],
    [1.415, 1.895, 2.365, 2.998, 3.499, 4.782],
    [1.397, 1.860, 2.306, 2.896, 3.355, 4.499],
    [1.383, 1.833, 2.262, 2.821, 3.250, 4.296],
    [1.372, 1.812, 2.228, 2.764, 3.169, 4.143],
    [1.363, 1.796, 2.201, 2.718, 3.106, 4.024],
    [1.356, 1.782, 2.179, 2.681, 3.055, 3.929],
    [1.350, 1.771, 2.160, 2.650, 3.012, 3.852],
    [1.345, 1.761, 2.145, 2.624, 2.977, 3.787],
    [1.341, 1.753, 2.131, 2.602, 2.947, 3.733],
    [1.337, 1.746, 2.120, 2.583, 2.921, 3.686],
    [1.333, 1.740, 2.110, 2.567, 2.898, 3.646],
    [1.330, 1.734, 2.101, 2.552, 2.878, 3.610],
    [1.328, 1.729, 2.093, 2.539, 2.861, 3.579],
    [1.325, 1.725, 2.086, 2.528, 2.845, 3.552],
    [1.323, 1.721, 2.080, 2.518, 2.831, 3.527],
    [1.321, 1.717, 2.074, 2.508, 2.819, 3.505],
    [1.319, 1.714, 2.069, 2.500, 2.807, 3.485],
    [1.318, 1.711, 2.064, 2.492, 2.797, 3.467],
    [1.316, 1.708, 2.060, 2.485, 2.787, 3.450],
    [1.315, 1.706, 2.056, 2.479, 2.779, 3.435],
    [1.314, 1.703, 2.052, 2.473, 2.771, 3.421],
    [1.313, 1.701, 2.048, 2.467, 2.763, 3.408],
    [1.311, 1.699, 2.045, 2.462, 2.756, 3.396],
    [1.310, 1.697, 2.042, 2.457, 2.750, 3.385],
    [1.309, 1.696, 2.040, 2.453, 2.744, 3.375],
    [1.309, 1.694, 2.037, 2.449, 2.738, 3.365],
    [1.308, 1.692, 2.035, 2.445, 2.733, 3.356],
    [1.307, 1.691, 2.032, 2.441, 2.728, 3.348],
    [1.306, 1.690, 2.030, 2.438, 2.724, 3.340],
    [1.306, 1.688, 2.028, 2.434, 2.719, 3.333],
    [1.305, 1.687, 2.026, 2.431, 2.715, 3.326],
    [1.304, 1.686, 2.024, 2.429, 2.712, 3.319],
    [1.304, 1.685, 2.023, 2.426, 2.708, 3.313],
    [1.303, 1.684, 2.021, 2.423, 2.704, 3.307],
    [1.303, 1.683, 2.020, 2.421, 2.701, 3.301],
    [1.302, 1.682, 2.018, 2.418, 2.698, 3.296],
    [1.302, 1.681, 2.017, 2.416, 2.695, 3.291],
    [1.301, 1.680, 2.015, 2.414, 2.692, 3.286],
    [1.301, 1.679, 2.014, 2.412, 2.690, 3.281],
    [1.300, 1.679, 2.013, 2.410, 2.687, 3.277],
    [1.300, 1.678, 2.012, 2.408, 2.685, 3.273],
    [1.299, 1.677, 2.011, 2.407, 2.682, 3.269],
    [1.299, 1.677, 2.010, 2.405, 2.680, 3.265],
    [1.299, 1.676, 2.009, 2.403, 2.678, 3.261],
    [1.298, 1.675, 2.008, 2.402, 2.676, 3.258],
    [1.298, 1.675, 2.007, 2.400, 2.674, 3.255],
    [1.298, 1.674, 2.006, 2.399, 2.672, 3.251],
    [1.297, 1.674, 2.005, 2.397, 2.670, 3.248],
    [1.297, 1.673, 2.004, 2.396, 2.668, 3.245],
    [1.297, 1.673, 2.003, 2.395, 2.667, 3.242],
    [1.297, 1.672, 2.002, 2.394, 2.665, 3.239],
    [1.296, 1.672, 2.002, 2.392, 2.663, 3.237],
    [1.296, 1.671, 2.001, 2.391, 2.662, 3.234],
    [1.296, 1.671, 2.000, 2.390, 2.660, 3.232],
    [1.296, 1.670, 2.000, 2.389, 2.659, 3.229],
    [1.295, 1.670, 1.999, 2.388, 2.657, 3.227],
    [1.295, 1.669, 1.998, 2.387, 2.656, 3.225],
    [1.295, 1.669, 1.998, 2.386, 2.655, 3.223],
    [1.295, 1.669, 1.997, 2.385, 2.654, 3.220],
    [1.295, 1.668, 1.997, 2.384, 2.652, 3.218],
    [1.294, 1.668, 1.996, 2.383, 2.651, 3.216],
    [1.294, 1.668, 1.995, 2.382, 2.650, 3.214],
    [1.294, 1.667, 1.995, 2.382, 2.649, 3.213],
    [1.294, 1.667, 1.994, 2.381, 2.648, 3.211],
    [1.294, 1.667, 1.994, 2.380, 2.647, 3.209],
    [1.293, 1.666, 1.993, 2.379, 2.646, 3.207],
    [1.293, 1.666, 1.993, 2.379, 2.645, 3.206],
    [1.293, 1.666, 1.993, 2.378, 2.644, 3.204],
    [1.293, 1.665, 1.992, 2.377, 2.643, 3.202],
    [1.293, 1.665, 1.992, 2.376, 2.642, 3.201],
    [1.293, 1.665, 1.991, 2.376, 2.641, 3.199],
    [1.292, 1.665, 1.991, 2.375, 2.640, 3.198],
    [1.292, 1.664, 1.990, 2.374, 2.640, 3.197],
    [1.292, 1.664, 1.990, 2.374, 2.639, 3.195],
    [1.292, 1.664, 1.990, 2.373, 2.638, 3.194],
    [1.292, 1.664, 1.989, 2.373, 2.637, 3.193],
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.191],
    [1.292, 1.663, 1.989, 2.372, 2.636, 3.190],
    [1.292, 1.663, 1.988, 2.371, 2.635, 3.189],
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.188],
    [1.291, 1.663, 1.988, 2.370, 2.634, 3.187],
    [1.291, 1.662, 1.987, 2.369, 2.633, 3.185],
    [1.291, 1.662, 1.987, 2.369, 2.632, 3.184],
    [1.291, 1.662, 1.987, 2.368, 2.632, 3.183],
    [1.291, 1.662, 1.986, 2.368, 2.631, 3.182],
    [1.291, 1.662, 1.986, 2.368, 2.630, 3.181],
    [1.291, 1.661, 1.986, 2.367, 2.630, 3.180],
    [1.291, 1.661, 1.986, 2.367, 2.629, 3.179],
    [1.291, 1.661, 1.985, 2.366, 2.629, 3.178],
    [1.290, 1.661, 1.985, 2.366, 2.628, 3.177],
    [1.290, 1.661, 1.985, 2.365, 2.627, 3.176],
    [1.290, 1.661, 1.984, 2.365, 2.627, 3.175],
    [1.290, 1.660, 1.984, 2.365, 2.626, 3.175],
    [1.290, 1.660, 1.984, 2.364, 2.626, 3.174],
];

/// A data set as ministat keeps it.
#[derive(Debug, Clone)]
pub struct Set {
    pub name: String,
    /// Sorted ascending.
    pub points: Vec<f64>,
    sy: f64,
    syy: f64,
}

impl Set {
    /// `values` in file order (the sums depend on it).
    pub fn new(name: &str, values: &[f64]) -> Set {
        let (mut sy, mut syy) = (0.0, 0.0);
        for &a in values {
            sy += a;
            syy += a * a;
        }
        let mut points = values.to_vec();
        points.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        Set {
            name: name.to_string(),
            points,
            sy,
            syy,
        }
    }
    pub fn n(&self) -> usize {
        self.points.len()
    }
    pub fn min(&self) -> f64 {
        self.points[0]
    }
    pub fn max(&self) -> f64 {
        self.points[self.n() - 1]
    }
    /// ministat's sum / n; when that overflows although every value is finite (values
    /// near f64::MAX), the same mean computed on values scaled by the largest magnitude.
    pub fn avg(&self) -> f64 {
        let naive = self.sy / self.n() as f64;
        if naive.is_finite() || !self.finite() {
            return naive;
        }
        let k = self.scale();
        k * (self.points.iter().map(|x| x / k).sum::<f64>() / self.n() as f64)
    }
    fn finite(&self) -> bool {
        self.points.iter().all(|x| x.is_finite())
    }
    fn scale(&self) -> f64 {
        self.points.iter().fold(0.0f64, |m, x| m.max(x.abs()))
    }
    pub fn median(&self) -> f64 {
        self.points[self.n() / 2]
    }
    pub fn var(&self) -> f64 {
        (self.syy - self.sy * self.sy / self.n() as f64) / (self.n() as f64 - 1.0)
    }
    /// ministat's sqrt of the sum-of-squares variance; when that overflows (or cancels
    /// to NaN) with finite values, computed on scaled deviations from the mean instead.
    pub fn stddev(&self) -> f64 {
        let naive = self.var().sqrt();
        if naive.is_finite() || !self.finite() || self.n() < 2 {
            return naive;
        }
        let (k, m) = (self.scale(), self.avg());
        let ss: f64 = self.points.iter().map(|x| (x / k - m / k).powi(2)).sum();
        k * (ss / (self.n() as f64 - 1.0)).sqrt()
    }
}

/// The comparison ministat prints for `ds` against the reference `rs`.
#[derive(Debug, Clone, PartialEq)]
pub enum Relative {
    Difference {
        diff: f64,
        err: f64,
        pct: f64,
        pct_err: f64,
        pooled: f64,
    },
    NoDifference,
}

/// Student's t with pooled s at `LEVELS[level]`.
pub fn relative(ds: &Set, rs: &Set, level: usize) -> Relative {
    let df = ds.n() + rs.n() - 2;
    let t = if df > 100 {
        T_TABLE[0][level]
    } else {
        T_TABLE[df][level]
    };
    let mut spool = (ds.n() as f64 - 1.0) * ds.var() + (rs.n() as f64 - 1.0) * rs.var();
    spool /= (ds.n() + rs.n()) as f64 - 2.0;
    spool = spool.sqrt();
    if !spool.is_finite() {
        // Variances past f64::MAX: pool the standard deviations scaled by the larger.
        let (a, b) = (ds.stddev(), rs.stddev());
        let k = a.max(b);
        if k.is_finite() && k > 0.0 {
            let w =
                (ds.n() as f64 - 1.0) * (a / k).powi(2) + (rs.n() as f64 - 1.0) * (b / k).powi(2);
            spool = k * (w / ((ds.n() + rs.n()) as f64 - 2.0)).sqrt();
        }
    }
    let s = spool * (1.0 / ds.n() as f64 + 1.0 / rs.n() as f64).sqrt();
    let d = ds.avg() - rs.avg();
    let e = t * s;
    if d.abs() > e {
        Relative::Difference {
            diff: d,
            err: e,
            pct: d * 100.0 / rs.avg(),
            pct_err: e * 100.0 / rs.avg(),
            pooled: spool,
        }
    } else {
        Relative::NoDifference
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_near_the_largest_double_do_not_overflow() {
        let s = Set::new("big", &[1e308, 1.5e308, 1.7e308]);
        assert!((s.avg() / 1.4e308 - 1.0).abs() < 1e-12, "{}", s.avg());
        // sample sd of 1, 1.5, 1.7 is 0.360555...
        assert!((s.stddev() / 0.36055512754639896e308 - 1.0).abs() < 1e-12);
        let t = Set::new("t", &[1.1e308, 1.6e308, 1.75e308]);
        match relative(&t, &s, 1) {
            Relative::NoDifference => {}
            r => assert!(matches!(r, Relative::Difference { pooled, .. } if pooled.is_finite())),
        }
        // Ordinary values keep ministat's own arithmetic.
        let o = Set::new("o", &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(o.stddev(), ((30.0f64 - 100.0 / 4.0) / 3.0).sqrt());
    }

    #[test]
    fn the_man_page_example() {
        let iguana = Set::new("iguana", &[50.0, 200.0, 150.0, 400.0, 750.0, 400.0, 150.0]);
        let chameleon = Set::new("chameleon", &[150.0, 400.0, 720.0, 500.0, 930.0]);
        assert_eq!(iguana.median(), 200.0);
        assert!((iguana.stddev() - 238.04761).abs() < 1e-5);
        assert_eq!(relative(&chameleon, &iguana, 2), Relative::NoDifference);
        match relative(&chameleon, &iguana, 0) {
            Relative::Difference {
                diff,
                err,
                pct,
                pct_err,
                pooled,
            } => {
                assert_eq!(diff, 240.0);
                assert!((err - 212.215).abs() < 1e-3 && (pooled - 264.159).abs() < 1e-3);
                assert_eq!(pct, 80.0);
                assert!((pct_err - 70.7384).abs() < 1e-4);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_995_column_is_really_998() {
        // Exact two-sided 99.8% quantiles (statrs) match the table's last column.
        for df in [5usize, 10, 30, 100] {
            let exact = crate::stats::dist::t_critical(0.998, df as f64);
            assert!(
                (T_TABLE[df][5] - exact).abs() < 0.0051,
                "df {df}: {} vs {exact}",
                T_TABLE[df][5]
            );
            let labelled = crate::stats::dist::t_critical(0.995, df as f64);
            assert!((T_TABLE[df][5] - labelled).abs() > 0.1 || df > 60);
        }
    }
}
