//! Words for numbers and names, shared by every room (the ground floor, with
//! `model` and `stats`): durations as people read them, a profiled
//! function's name with where it lives, and input echoed in a message made
//! safe to print ([`clip`]); amounts and levels as options spell them
//! ([`amount`]). No room above computes anything here.

pub mod amount;
pub mod clip;

/// "2.31 s", "16.6 ms", "840 µs".
pub fn dur(s: f64) -> String {
    fn trim(x: String) -> String {
        if x.contains('.') {
            x.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            x
        }
    }
    let a = s.abs();
    if !s.is_finite() {
        "?".into()
    } else if a >= 1.0 {
        format!("{s:.2} s")
    } else if a >= 1e-3 {
        trim(format!("{:.2}", s * 1e3)) + " ms"
    } else if a >= 1e-6 {
        format!("{:.0} µs", s * 1e6)
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

/// "`checksum_blocks` (libfoo.so, src/sum.c:88)": a function, its module,
/// and its source line where known (the name cut to 80 characters).
pub fn function_name(
    function: &str,
    module: &str,
    file: Option<&str>,
    line: Option<u32>,
) -> String {
    let short: String = function.chars().take(80).collect();
    match (file, line) {
        (Some(file), Some(l)) => format!("`{short}` ({module}, {file}:{l})"),
        (Some(file), None) => format!("`{short}` ({module}, {file})"),
        _ => format!("`{short}` ({module})"),
    }
}
