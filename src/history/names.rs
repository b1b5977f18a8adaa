//! The rules every label follows, whether it comes from a query parameter,
//! a flag or inside an upload's body: series, metric, unit, commit, branch,
//! machine and suite names are 1 to [`LABEL_MAX`] characters with no control
//! characters; a test's name (from a report) is at most [`TEST_NAME_MAX`]
//! characters and its control characters are written as escapes, so no page,
//! terminal or CSV ever prints them raw.

use std::borrow::Cow;

/// Longest label, in characters.
pub const LABEL_MAX: usize = 200;
/// Longest series prefix an upload names (its `series` or `suite` query
/// parameter, or `push --series`): a prefix, `/` and a name from the body
/// together stay within [`LABEL_MAX`] when each is at most this long.
pub const PREFIX_MAX: usize = (LABEL_MAX - 1) / 2;
/// Longest test name, in characters (parametrised test ids run long).
pub const TEST_NAME_MAX: usize = 1000;

/// `v` trimmed, when it is a valid label; else what is wrong with it,
/// naming `what` (e.g. "series", "commit").
pub fn label(v: &str, what: &str) -> Result<String, String> {
    let v = v.trim();
    let n = v.chars().count();
    if n == 0 || n > LABEL_MAX {
        return Err(format!(
            "{what} must be 1 to {LABEL_MAX} characters, not {n}: {}",
            crate::fmt::clip::quote(v)
        ));
    }
    if v.chars().any(char::is_control) {
        return Err(format!(
            "{what} {} holds a control character (a newline, tab or escape)",
            crate::fmt::clip::quote(v)
        ));
    }
    Ok(v.to_string())
}

/// `v` trimmed, when it is a valid series prefix (a label of at most
/// [`PREFIX_MAX`] characters); else what is wrong with it.
pub fn prefix(v: &str, what: &str) -> Result<String, String> {
    let v = label(v, what)?;
    let n = v.chars().count();
    if n > PREFIX_MAX {
        return Err(format!(
            "{what} must be 1 to {PREFIX_MAX} characters, not {n} (it is joined to each name in the body, and a stored name is at most {LABEL_MAX}): {}",
            crate::fmt::clip::quote(&v)
        ));
    }
    Ok(v)
}

/// A test's name as stored: control characters escaped (`\n`, `\u{1b}`).
/// Only control characters are escaped; quotes and backslashes stay as
/// they were.
pub fn test_name(v: &str) -> Cow<'_, str> {
    // Control characters are C0 and DEL (single bytes) and C1 (U+0080-U+009F,
    // encoded 0xC2 0x80-0x9F): a name with none of those bytes has none.
    if !v.bytes().any(|b| b < 0x20 || b == 0x7f || b == 0xc2) || !v.chars().any(char::is_control) {
        return Cow::Borrowed(v);
    }
    let mut out = String::with_capacity(v.len() + 8);
    for c in v.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a test name is short enough to keep; else the error.
pub fn check_test_name(v: &str) -> Result<(), String> {
    if v.len() <= TEST_NAME_MAX {
        return Ok(()); // no more characters than bytes
    }
    let n = v.chars().count();
    if n > TEST_NAME_MAX {
        return Err(format!(
            "test name of {n} characters is longer than the {TEST_NAME_MAX} allowed: {}",
            crate::fmt::clip::quote(v)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_test_names_follow_one_rule() {
        assert_eq!(label("  main ", "branch").unwrap(), "main");
        assert!(label("", "branch").unwrap_err().contains("1 to 200"));
        assert_eq!(prefix(&"p".repeat(99), "series").unwrap().len(), 99);
        assert!(
            prefix(&"p".repeat(100), "series")
                .unwrap_err()
                .contains("1 to 99 characters, not 100")
        );
        let long = "x".repeat(1 << 20);
        let e = label(&long, "series").unwrap_err();
        assert!(e.len() < 400, "{}", e.len());
        assert!(
            label("a\u{1b}[31mred", "series")
                .unwrap_err()
                .contains("\\u{1b}")
        );
        assert_eq!(
            test_name("plain 'quoted' \\ name"),
            "plain 'quoted' \\ name"
        );
        assert_eq!(test_name("two\nlines\t!"), "two\\nlines\\t!");
        assert!(check_test_name(&"t".repeat(1000)).is_ok());
        assert!(check_test_name(&"t".repeat(1001)).is_err());
        // Characters, not bytes: 1000 two-byte characters are allowed.
        assert!(check_test_name(&"é".repeat(1000)).is_ok());
        assert!(check_test_name(&"é".repeat(1001)).is_err());
        // C1 controls (two bytes in UTF-8) are escaped; other characters
        // from the same lead byte are not.
        assert_eq!(test_name("a\u{85}b\u{9f}"), "a\\u{85}b\\u{9f}");
        assert_eq!(test_name("¡nbsp\u{a0}!"), "¡nbsp\u{a0}!");
    }

    proptest::proptest! {
        /// The byte-level shortcut escapes exactly what the character rule does.
        #[test]
        fn test_names_escape_as_the_character_rule_does(v in "\\PC{0,8}[\\x00-\\x{ff}]{0,6}\\PC{0,8}") {
            let reference: String = v
                .chars()
                .flat_map(|c| {
                    let plain = (!c.is_control()).then_some(c);
                    plain.into_iter().map(String::from).chain(
                        c.is_control().then(|| c.escape_debug().to_string()),
                    )
                })
                .collect();
            proptest::prop_assert_eq!(test_name(&v).into_owned(), reference);
            proptest::prop_assert_eq!(
                check_test_name(&v).is_ok(),
                v.chars().count() <= TEST_NAME_MAX
            );
        }
    }
}

/// The series that holds a benchmark's count beside its wall time:
/// "NAME [instructions]".
pub fn count_series(base: &str, metric: crate::measure::counters::Metric) -> String {
    format!("{base} [{}]", metric.name())
}

/// The series measured alongside `name`: its wall time and each of its
/// counts, `name` itself left out (they may not all exist).
pub fn companions(name: &str) -> Vec<String> {
    use crate::measure::counters::Metric;
    let base = Metric::ALL
        .into_iter()
        .filter(|m| m.is_count())
        .find_map(|m| name.strip_suffix(&format!(" [{}]", m.name())))
        .unwrap_or(name);
    std::iter::once(base.to_string())
        .chain(
            Metric::ALL
                .into_iter()
                .filter(|m| m.is_count())
                .map(|m| count_series(base, m)),
        )
        .filter(|n| n != name)
        .collect()
}

#[cfg(test)]
mod companion_tests {
    use super::*;

    #[test]
    fn a_benchmark_and_its_counts_are_companions() {
        assert_eq!(
            companions("nightly"),
            [
                "nightly [instructions]",
                "nightly [cycles]",
                "nightly [estimated-cycles]"
            ]
        );
        let c = companions("a/b [instructions]");
        assert_eq!(c[0], "a/b");
        assert!(!c.contains(&"a/b [instructions]".to_string()));
    }
}
