//! C's printf conversions that ministat's output uses: `%g` with a
//! precision (and a field width), as glibc prints them.

/// `%.{precision}g`.
pub fn g(v: f64, precision: usize) -> String {
    let p = precision.max(1);
    if v.is_nan() {
        return if v.is_sign_negative() {
            "-nan".into()
        } else {
            "nan".into()
        };
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e_form = format!("{:.*e}", p - 1, v);
    let (mantissa, exp) = e_form.split_once('e').unwrap_or((&e_form, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(mantissa);
        format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

/// `%{width}.{precision}g`: right-aligned.
pub fn g_width(v: f64, width: usize, precision: usize) -> String {
    format!("{:>width$}", g(v, precision))
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected strings are glibc's: printf("%g|%.8g", v, v) (see the C check in
    // tests/data/ministat/README.md).
    #[test]
    fn like_glibc() {
        assert_eq!(g(238.04761386, 8), "238.04761");
        assert_eq!(g(300.0, 8), "300");
        assert_eq!(g(212.2148, 6), "212.215");
        assert_eq!(g(70.73842, 6), "70.7384");
        assert_eq!(g(1e-5, 6), "1e-05");
        assert_eq!(g(0.0001, 6), "0.0001");
        assert_eq!(g(123456789.0, 8), "1.2345679e+08");
        assert_eq!(g(1e100, 6), "1e+100");
        assert_eq!(g(-0.5, 6), "-0.5");
        assert_eq!(g(100000.0, 6), "100000");
        assert_eq!(g(1000000.0, 6), "1e+06");
        assert_eq!(g(0.5, 1), "0.5");
        assert_eq!(g(f64::NAN, 6), "nan");
        assert_eq!(g_width(50.0, 13, 8), "           50");
    }
}
