//! Human units for times and sizes.

/// A time unit chosen for a magnitude in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimeUnit {
    Nanos,
    Micros,
    Millis,
    Seconds,
}

impl TimeUnit {
    /// The unit that shows `seconds` with 1 to 3 digits before the point.
    pub fn for_value(seconds: f64) -> TimeUnit {
        let s = seconds.abs();
        if s >= 1.0 {
            TimeUnit::Seconds
        } else if s >= 1e-3 {
            TimeUnit::Millis
        } else if s >= 1e-6 {
            TimeUnit::Micros
        } else {
            TimeUnit::Nanos
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            TimeUnit::Nanos => "ns",
            TimeUnit::Micros => "µs",
            TimeUnit::Millis => "ms",
            TimeUnit::Seconds => "s",
        }
    }

    pub fn scale(self) -> f64 {
        match self {
            TimeUnit::Nanos => 1e9,
            TimeUnit::Micros => 1e6,
            TimeUnit::Millis => 1e3,
            TimeUnit::Seconds => 1.0,
        }
    }

    /// `seconds` in this unit with 4 significant digits, without the suffix.
    pub fn number(self, seconds: f64) -> String {
        let v = seconds * self.scale();
        let digits = if v.abs() >= 100.0 {
            1
        } else if v.abs() >= 10.0 {
            2
        } else {
            3
        };
        format!("{v:.digits$}")
    }

    /// `seconds` in this unit with its suffix.
    pub fn format(self, seconds: f64) -> String {
        format!("{} {}", self.number(seconds), self.suffix())
    }
}

/// `seconds` in the unit that suits it.
pub fn time(seconds: f64) -> String {
    if seconds == 0.0 {
        return "0 s".to_string();
    }
    TimeUnit::for_value(seconds).format(seconds)
}

/// A size given in KiB, in KiB/MiB/GiB.
pub fn kib(kib: u64) -> String {
    let v = kib as f64;
    if v >= 1024.0 * 1024.0 {
        format!("{:.2} GiB", v / (1024.0 * 1024.0))
    } else if v >= 1024.0 {
        format!("{:.1} MiB", v / 1024.0)
    } else {
        format!("{kib} KiB")
    }
}

/// A fraction as a percentage with sensible digits: 0.0123 -> "1.23%".
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if p.abs() >= 10.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// A p-value for people: "p<0.0001", "p=0.0032", "p=0.41".
pub fn p_value(p: f64) -> String {
    if p.is_nan() {
        "p=?".to_string()
    } else if p < 1e-4 {
        "p<0.0001".to_string()
    } else if p < 0.01 {
        format!("p={p:.4}")
    } else {
        format!("p={p:.2}")
    }
}

/// A q-value (a p-value adjusted for many series) as a table cell: `0.03`,
/// `0.0042`, `<0.0001` (never `0.00e0` or `q=0`).
pub fn q_value(q: f64) -> String {
    let p = p_value(q);
    p.strip_prefix("p=")
        .or_else(|| p.strip_prefix('p'))
        .unwrap_or(&p)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_values_read_as_numbers() {
        assert_eq!(q_value(0.0), "<0.0001");
        assert_eq!(q_value(0.03), "0.03");
        assert_eq!(q_value(0.0042), "0.0042");
    }

    #[test]
    fn picks_units() {
        assert_eq!(time(0.0106), "10.60 ms");
        assert_eq!(time(1.5), "1.500 s");
        assert_eq!(time(0.000_123_4), "123.4 µs");
        assert_eq!(time(5e-8), "50.00 ns");
        assert_eq!(time(0.0), "0 s");
        assert_eq!(kib(2048), "2.0 MiB");
        assert_eq!(percent(0.0123), "1.23%");
    }
}

/// Columns `s` takes on a terminal (a CJK character two, a combining mark none), not
/// its count of characters: what lines up a table of names.
pub fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` followed by spaces up to `w` columns.
pub fn pad_to(s: &str, w: usize) -> String {
    format!("{s}{}", " ".repeat(w.saturating_sub(display_width(s))))
}

/// `s` cut to at most `w` columns, with `…` where it was cut.
pub fn truncate_to(s: &str, w: usize) -> String {
    if display_width(s) <= w {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod width_tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(display_width("ベンチ"), 6);
        assert_eq!(pad_to("ベンチ", 8), "ベンチ  ");
        assert_eq!(pad_to("abc", 5), "abc  ");
        assert_eq!(truncate_to("ベンチマーク", 7), "ベンチ…");
        assert_eq!(truncate_to("abcdef", 4), "abc…");
        assert_eq!(truncate_to("abc", 4), "abc");
    }
}
