//! Amounts and levels as the options spell them: "95", "95%" or "0.95" for
//! a confidence level, "5", "5%" or "0.05" for five percent. One convention
//! for every such option of every subcommand (and for a library caller
//! reading the same strings); `name` is the option, quoted in the error.

/// A confidence level as a fraction, written either way: "95", "95%" or
/// "0.95" (one convention for `run`, `compare` and `bisect`, both spellings
/// taken). Strictly between 0 and 1.
pub fn confidence(name: &str, s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("--{name} takes a level such as 95 or 0.95, not '{s}'"))?;
    let f = if t.ends_with('%') || v >= 1.0 {
        v / 100.0
    } else {
        v
    };
    if f.is_finite() && f > 0.0 && f < 1.0 {
        Ok(f)
    } else {
        Err(format!(
            "--{name} must lie between 0 and 100% (95, 95% or 0.95), not '{s}'"
        ))
    }
}

/// An amount ("5", "5%" or "0.05": five percent) as a fraction: one
/// convention for every such option (`--threshold`, `--min-magnitude`,
/// `--target-effect`, `--fail-if-slower`, `--precision`), the same as
/// [`confidence`]'s: a number with `%`, or a bare number of at least 1, is a
/// percentage; a bare number below 1 is a fraction (Otava's `-M 0.05`). Half a
/// percent is written "0.5%". A `level` (precision) lies strictly between 0
/// and 100%; anything else is at least 0.
pub fn percent(name: &str, s: &str, level: bool) -> Result<f64, String> {
    let t = s.trim();
    let v: f64 = t
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("--{name} takes an amount such as 5, 5% or 0.05, not '{s}'"))?;
    let f = if t.ends_with('%') || v >= 1.0 {
        v / 100.0
    } else {
        v
    };
    let ok = f.is_finite() && if level { f > 0.0 && f < 1.0 } else { f >= 0.0 };
    if !ok {
        let range = if level {
            "between 0 and 100% (exclusive)"
        } else {
            "at least 0"
        };
        return Err(format!(
            "--{name} must be {range} (5, 5% or 0.05 are five percent), not '{s}'"
        ));
    }
    Ok(f)
}
