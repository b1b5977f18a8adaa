//! C's `strtod`, as glibc implements it for the "C" locale: the prefix of a
//! string that is a decimal or hexadecimal floating-point number, `inf`,
//! `infinity` or `nan`/`nan(...)`, after optional leading whitespace. tardy
//! needs it to read number files exactly as ministat does.

/// Parse the longest numeric prefix of `s`. Returns the value and how many
/// bytes were consumed (0 when there is no number, like strtod's endptr == s).
pub fn strtod(s: &str) -> (f64, usize) {
    // Fast path: a whole token Rust's (correctly rounded) parser accepts is a
    // whole token strtod accepts, with the same value.
    if s.as_bytes()
        .first()
        .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.'))
    {
        if let Ok(v) = s.parse::<f64>() {
            return (v, s.len());
        }
    }
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) {
        i += 1;
    }
    let start = i;
    let mut negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        negative = b[i] == b'-';
        i += 1;
    }
    let sign = if negative { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let starts = |word: &str| {
        rest.len() >= word.len()
            && rest.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
    };
    if starts("infinity") {
        return (sign * f64::INFINITY, i + 8);
    }
    if starts("inf") {
        return (sign * f64::INFINITY, i + 3);
    }
    if starts("nan") {
        let mut end = i + 3;
        if b.get(end) == Some(&b'(') {
            let mut j = end + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if b.get(j) == Some(&b')') {
                end = j + 1;
            }
        }
        return (f64::NAN, end);
    }
    if rest.len() >= 2 && (rest.starts_with("0x") || rest.starts_with("0X")) {
        if let Some((v, used)) = hex(&rest[2..]) {
            return (sign * v, i + 2 + used);
        }
        // "0x" without hex digits: just the "0".
        return (sign * 0.0, i + 1);
    }
    // Decimal: digits [. digits] [e [sign] digits]
    let mut j = i;
    let mut digits = 0;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
        digits += 1;
    }
    if j < b.len() && b[j] == b'.' {
        j += 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        let _ = start;
        return (0.0, 0);
    }
    if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
        let mut k = j + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        if k < b.len() && b[k].is_ascii_digit() {
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    let text = &s[i..j];
    let text = text.strip_suffix('.').unwrap_or(text);
    let text = if let Some(t) = text.strip_prefix('.') {
        format!("0.{t}")
    } else {
        text.to_string()
    };
    let v: f64 = text.parse().unwrap_or_else(|_| mantissa_fallback(&text));
    (sign * v, j)
}

/// Rust's parser rejects some forms C accepts ("1.e5"); rebuild them.
fn mantissa_fallback(text: &str) -> f64 {
    let cleaned = text.replace(".e", "e").replace(".E", "E");
    cleaned.parse().unwrap_or(0.0)
}

/// Hex digits [. hex digits] [p [sign] decimal digits], after "0x".
fn hex(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut j = 0;
    let mut mantissa = 0.0f64;
    let mut exp: i32 = 0;
    let mut digits = 0;
    while j < b.len() && b[j].is_ascii_hexdigit() {
        mantissa = mantissa * 16.0 + (b[j] as char).to_digit(16)? as f64;
        j += 1;
        digits += 1;
    }
    if j < b.len() && b[j] == b'.' {
        j += 1;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            mantissa = mantissa * 16.0 + (b[j] as char).to_digit(16)? as f64;
            exp -= 4;
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if j < b.len() && (b[j] == b'p' || b[j] == b'P') {
        let mut k = j + 1;
        let mut neg = false;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            neg = b[k] == b'-';
            k += 1;
        }
        if k < b.len() && b[k].is_ascii_digit() {
            let mut e: i32 = 0;
            while k < b.len() && b[k].is_ascii_digit() {
                e = e.saturating_mul(10).saturating_add((b[k] - b'0') as i32);
                k += 1;
            }
            exp = exp.saturating_add(if neg { -e } else { e });
            j = k;
        }
    }
    Some((mantissa * 2f64.powi(exp), j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_glibc() {
        // Values and end offsets as glibc's strtod gives them (checked with a C program).
        assert_eq!(strtod("720\t"), (720.0, 3));
        assert_eq!(strtod("  -1.5e3x"), (-1500.0, 8));
        assert_eq!(strtod("0x10"), (16.0, 4));
        assert_eq!(strtod("0x1.8p1"), (3.0, 7));
        assert_eq!(strtod("0x"), (0.0, 1));
        assert_eq!(strtod("1e"), (1.0, 1));
        assert_eq!(strtod("1.e5"), (100000.0, 4));
        assert_eq!(strtod(".5"), (0.5, 2));
        assert_eq!(strtod("5."), (5.0, 2));
        assert_eq!(strtod("abc"), (0.0, 0));
        assert_eq!(strtod("-"), (0.0, 0));
        assert_eq!(strtod("."), (0.0, 0));
        assert_eq!(strtod("INF"), (f64::INFINITY, 3));
        assert_eq!(strtod("-Infinity!"), (f64::NEG_INFINITY, 9));
        assert!(strtod("nan(0x1)").0.is_nan());
        assert_eq!(strtod("nan(0x1)").1, 8);
        assert_eq!(strtod("1,5"), (1.0, 1));
    }
}
