//! Input echoed in a message, made safe to print: at most [`QUOTE_MAX`]
//! characters of it, and control characters (an escape sequence, a newline)
//! written as escapes. A 1 GB name in a command line or an upload gives a
//! one-line error, and no terminal or log takes orders from it.

/// Most characters of one quoted input kept in a message.
pub const QUOTE_MAX: usize = 200;

/// `v` in single quotes, cut to [`QUOTE_MAX`] characters (saying how much was
/// left out), control characters escaped.
pub fn quote(v: &str) -> String {
    let mut out = String::from("'");
    push_escaped(&mut out, v, QUOTE_MAX);
    out.push('\'');
    out
}

fn push_escaped(out: &mut String, v: &str, max: usize) {
    for (kept, (i, c)) in v.char_indices().enumerate() {
        if kept == max {
            out.push_str(&format!("... ({} more bytes)", v.len() - i));
            return;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
}

/// A whole message made safe to print on one line: control characters
/// escaped, and every run of text between single quotes (the input a
/// message echoes) cut to [`QUOTE_MAX`] characters. Messages without long
/// quotes or control characters come back as they were.
pub fn message(m: &str) -> String {
    let long_quote = m
        .split('\'')
        .skip(1)
        .step_by(2)
        .any(|q| q.len() > QUOTE_MAX);
    if !long_quote && !m.chars().any(char::is_control) && m.len() <= 4 * QUOTE_MAX * 8 {
        return m.to_string();
    }
    let mut out = String::with_capacity(m.len().min(64 << 10));
    for (k, part) in m.split('\'').enumerate() {
        if k > 0 {
            out.push('\'');
        }
        // Odd parts are inside quotes; a message's own text is kept whole
        // unless it is itself enormous.
        let max = if k % 2 == 1 { QUOTE_MAX } else { 4 * QUOTE_MAX };
        push_escaped(&mut out, part, max);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_control_input_is_cut_and_escaped() {
        assert_eq!(quote("abc"), "'abc'");
        let q = quote(&"x".repeat(1 << 20));
        assert!(q.len() < 260, "{}", q.len());
        assert!(q.contains("more bytes"));
        assert_eq!(quote("a\nb\u{1b}"), "'a\\nb\\u{1b}'");
        let m = format!("no series named '{}' (see list)", "y".repeat(3 << 20));
        let c = message(&m);
        assert!(c.len() < 600 && c.ends_with("' (see list)"), "{c}");
        assert_eq!(message("plain 'short' text"), "plain 'short' text");
        assert_eq!(message("bad\u{7}bell"), "bad\\u{7}bell");
        // Multi-byte characters are cut on a character boundary.
        assert!(quote(&"é".repeat(500)).contains("... (600 more bytes)"));
    }
}
