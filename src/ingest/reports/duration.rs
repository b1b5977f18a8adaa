//! Durations as test reports write them, read leniently: `0.` (GoogleTest),
//! exponents, thousands separators (`2,120.532`, Surefire 3.1.0), decimal
//! commas (`0,03`), TRX TimeSpans (`00:00:00.1084258`, `1.02:03:04.5`).
//! Negative or absurd values are rejected with a reason, for a warning.

use crate::ingest::cnum::strtod;

/// A single test longer than this is implausible: probably nanoseconds.
const MAX_PLAUSIBLE_S: f64 = 7.0 * 24.0 * 3600.0;

/// Seconds from a `time`/`duration` attribute.
pub fn seconds(raw: &str) -> Result<f64, String> {
    if let Some(v) = plain_decimal(raw.as_bytes()) {
        return check(v, raw);
    }
    let t = raw.trim();
    if t.is_empty() {
        return Err("empty".into());
    }
    let normalised;
    let text = if t.contains(',') {
        // "2,120.532" and "1,024" are thousands separators; "0,03" a decimal comma.
        let thousands = t.contains('.')
            || (t.split(',').nth(1).is_some_and(|f| f.len() == 3) && !t.starts_with("0,"));
        normalised = if thousands {
            t.replace(',', "")
        } else {
            t.replace(',', ".")
        };
        normalised.as_str()
    } else {
        t
    };
    let (v, used) = strtod(text);
    if used != text.len() || used == 0 {
        return Err(format!("'{raw}' is not a number"));
    }
    check(v, raw)
}

/// The value of `digits[.digits]` of at most 15 digits in all (what
/// nearly every report writes), as the correctly rounded parse gives it:
/// the digits make an integer below 2^53 and ten to the power of the
/// fraction's length is exact, so one division rounds once (Clinger's fast
/// path). `None` for anything else.
fn plain_decimal(b: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (int, frac) = match memchr::memchr(b'.', b) {
        Some(dot) => (&b[..dot], &b[dot + 1..]),
        None => (b, &b[b.len()..]),
    };
    if int.is_empty() || int.len() + frac.len() > 15 {
        return None;
    }
    let mut m: u64 = 0;
    for &d in int.iter().chain(frac) {
        if !d.is_ascii_digit() {
            return None;
        }
        m = m * 10 + u64::from(d - b'0');
    }
    Some(m as f64 / POW10[frac.len()])
}

fn check(v: f64, raw: &str) -> Result<f64, String> {
    if !v.is_finite() {
        return Err(format!("'{raw}' is not finite"));
    }
    if v < 0.0 {
        return Err(format!("'{raw}' is negative"));
    }
    if v > MAX_PLAUSIBLE_S {
        if v / 1e9 <= MAX_PLAUSIBLE_S {
            return Ok(v / 1e9); // container-structure-test writes nanoseconds
        }
        return Err(format!("'{raw}' seconds is implausible"));
    }
    Ok(v)
}

/// Seconds from a .NET TimeSpan `[d.]hh:mm:ss[.fffffff]`.
pub fn timespan(raw: &str) -> Result<f64, String> {
    let t = raw.trim();
    let (days, rest) = match t.split_once(':') {
        Some((head, _)) if head.contains('.') => {
            let (d, _) = head.split_once('.').unwrap_or(("0", head));
            (
                d.parse::<f64>()
                    .map_err(|_| format!("'{raw}' is not a TimeSpan"))?,
                &t[d.len() + 1..],
            )
        }
        _ => (0.0, t),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() != 3 {
        return Err(format!("'{raw}' is not a TimeSpan"));
    }
    let h: f64 = parts[0]
        .parse()
        .map_err(|_| format!("'{raw}' is not a TimeSpan"))?;
    let m: f64 = parts[1]
        .parse()
        .map_err(|_| format!("'{raw}' is not a TimeSpan"))?;
    let s: f64 = parts[2]
        .parse()
        .map_err(|_| format!("'{raw}' is not a TimeSpan"))?;
    check(days * 86400.0 + h * 3600.0 + m * 60.0 + s, raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The plain decimal's value is the standard library's parse of it,
        /// to the bit, and only plain decimals take that path.
        #[test]
        fn plain_decimals_parse_as_the_standard_library_does(
            int in "[0-9]{0,12}",
            dot in any::<bool>(),
            frac in "[0-9]{0,12}",
            noise in proptest::option::of("[ ,eE+-]"),
        ) {
            let mut text = int.clone();
            if dot {
                text.push('.');
                text.push_str(&frac);
            }
            if let Some(n) = &noise {
                text.push_str(n);
            }
            let fast = plain_decimal(text.as_bytes());
            if int.is_empty() || noise.is_some() || int.len() + if dot { frac.len() } else { 0 } > 15 {
                prop_assert_eq!(fast, None);
            } else {
                prop_assert_eq!(fast.map(f64::to_bits), text.parse::<f64>().ok().map(f64::to_bits));
            }
        }
    }

    #[test]
    fn lenient_numbers() {
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert_eq!(seconds("0."), Ok(0.0));
        assert_eq!(seconds(" 4.5e-05 "), Ok(4.5e-05));
        assert_eq!(seconds("2,120.532"), Ok(2120.532));
        assert_eq!(seconds("0,03"), Ok(0.03));
        assert_eq!(seconds("999638317"), Ok(0.999638317));
        assert!(seconds("-1.0").is_err());
        assert!(seconds("abc").is_err());
        assert!(seconds("").is_err());
    }

    #[test]
    fn timespans() {
        assert!((timespan("00:00:00.1084258").unwrap() - 0.1084258).abs() < 1e-12);
        assert_eq!(timespan("01:02:03"), Ok(3723.0));
        assert_eq!(timespan("1.00:00:01"), Ok(86401.0));
        assert!(timespan("12").is_err());
    }
}
