//! Durations as test reports write them, read leniently: `0.` (GoogleTest),
//! exponents, thousands separators (`2,120.532`, Surefire 3.1.0), decimal
//! commas (`0,03`), TRX TimeSpans (`00:00:00.1084258`, `1.02:03:04.5`).
//! Negative or absurd values are rejected with a reason, for a warning.

use crate::ingest::cnum::strtod;

/// A single test longer than this is implausible: probably nanoseconds.
const MAX_PLAUSIBLE_S: f64 = 7.0 * 24.0 * 3600.0;

/// Seconds from a `time`/`duration` attribute.
pub fn seconds(raw: &str) -> Result<f64, String> {
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
