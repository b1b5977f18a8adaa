//! TAP, the Test Anything Protocol (versions 12 to 14): Perl's Test::More
//! and `prove`, node's test runner (`--test-reporter=tap`), many shells'
//! and C libraries' suites. Read line by line:
//!
//! - `ok N - name`, `not ok N - name`; a `# SKIP` or `# TODO` directive
//!   is skipped (a todo's failure is expected, and node and prove do not
//!   count its pass as one);
//! - a YAML block after a result (`---` ... `...`) gives its `duration_ms`;
//! - subtests are indented four spaces more and end with their parent's
//!   result line: the children are named under the parent (`parent >
//!   child`), and the parent's time, which includes them, is not summed;
//!   node's `describe` groups (`type: 'suite'`) are not tests;
//! - a plan (`1..N`) that more results were promised than came, or a
//!   `Bail out!`, is a run that stopped: one errored test says so, and a
//!   warning, so a run that died never reads as passed.

use std::io::BufRead;
use std::sync::Arc;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::{Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

/// Whether `t` (trimmed at its start) starts like TAP.
pub fn sniff(t: &str) -> bool {
    let first = t.lines().next().unwrap_or("").trim_end();
    first.starts_with("TAP version ")
        || is_plan(first)
        || first.starts_with("ok ")
        || first == "ok"
        || first.starts_with("not ok")
}

/// `1..N` (with an optional `# SKIP reason`): N.
fn plan(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("1..")?;
    let digits: &str = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    let after = rest[digits.len()..].trim();
    if digits.is_empty() || !(after.is_empty() || after.starts_with('#')) {
        return None;
    }
    digits.parse().ok()
}

fn is_plan(line: &str) -> bool {
    plan(line).is_some()
}

/// A result line: (passed, number, description, directive).
struct Line<'a> {
    ok: bool,
    name: &'a str,
    skip: bool,
    todo: bool,
}

fn result(line: &str) -> Option<Line<'_>> {
    let (ok, rest) = if let Some(r) = line.strip_prefix("not ok") {
        (false, r)
    } else {
        (true, line.strip_prefix("ok")?)
    };
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let rest = rest.trim_start();
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    // The directive: the last unescaped " # SKIP" or " # TODO".
    let (mut name, mut skip, mut todo) = (rest, false, false);
    if let Some(i) = directive_at(rest) {
        let d = rest[i + 1..].trim_start();
        let word: String = d.chars().take(4).collect::<String>().to_ascii_uppercase();
        skip = word == "SKIP";
        todo = word == "TODO";
        if skip || todo {
            name = rest[..i].trim_end();
        }
    }
    Some(Line {
        ok,
        name,
        skip,
        todo,
    })
}

/// Where the directive's `#` is (not one escaped as `\#`).
fn directive_at(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len())
        .rev()
        .find(|&i| b[i] == b'#' && (i == 0 || b[i - 1] != b'\\'))
}

/// One result read, waiting for its YAML block and its parent.
struct Pending {
    index: usize,
}

pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    let first = report.cases.len();
    let empty: Arc<str> = Arc::from("");
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    // Per depth: the results read at that depth since its last parent.
    let mut levels: Vec<Vec<usize>> = vec![Vec::new()];
    let mut last: Option<Pending> = None;
    let mut in_yaml: Option<usize> = None;
    let (mut planned, mut bailed, mut results) = (None::<usize>, None::<String>, 0usize);
    let mut top_level = 0usize;
    let mut stated_fail: Option<usize> = None;
    let mut stated_tests: Option<usize> = None;
    // Results that are groups (node's describe blocks), dropped at the end.
    let mut groups: Vec<usize> = Vec::new();
    let mut wall_ms: Option<f64> = None;
    for (i, line) in input.lines().enumerate() {
        if let Some(why) = crate::ingest::limits::check(i as u64 + 1, report.cases.len()) {
            return Err(IngestError::at(name, Some(i + 1), why));
        }
        let line =
            line.map_err(|e| IngestError::at(name, Some(i + 1), format!("cannot read: {e}")))?;
        budget.reset();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = line.trim();
        if let Some(at) = in_yaml {
            if t == "..." && indent <= at + 2 {
                in_yaml = None;
            } else if t == "type: 'suite'" || t == "type: suite" {
                // node's describe(): a group, not a test.
                if let Some(p) = last.as_ref() {
                    groups.push(p.index);
                }
            } else if let (Some(v), Some(p)) = (t.strip_prefix("duration_ms:"), last.as_ref())
                && let Ok(ms) = v.trim().trim_matches('\'').parse::<f64>()
                && ms.is_finite()
                && ms >= 0.0
            {
                report.cases[p.index].duration_s = Some(ms / 1e3);
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let depth = indent / 4;
        if t == "---" && last.is_some() {
            in_yaml = Some(indent.saturating_sub(2));
            continue;
        }
        if let Some(reason) = t.strip_prefix("Bail out!") {
            bailed = Some(reason.trim().to_string());
            continue;
        }
        if depth == 0 {
            if let Some(n) = plan(t) {
                planned = Some(n);
                continue;
            }
            // node's closing counts.
            if let Some(v) = t.strip_prefix("# tests ") {
                stated_tests = v.trim().parse().ok();
                continue;
            }
            if let Some(v) = t.strip_prefix("# fail ") {
                stated_fail = v.trim().parse().ok();
                continue;
            }
            if let Some(v) = t.strip_prefix("# duration_ms ") {
                wall_ms = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|m: &f64| m.is_finite() && *m >= 0.0);
                continue;
            }
        }
        let Some(r) = result(t) else {
            continue;
        };
        results += 1;
        // A todo is not a pass (node and prove count it apart) and its
        // failure is expected: skipped either way.
        let status = match (r.ok, r.skip || r.todo) {
            (_, true) => Status::Skipped,
            (true, false) => Status::Passed,
            (false, false) => Status::Failed,
        };
        let test_name = if r.name.is_empty() {
            format!("#{}", levels.get(depth).map_or(0, Vec::len) + 1)
        } else {
            r.name.to_string()
        };
        let index = report.cases.len();
        report.cases.push(TestCase {
            id: TestId::new(empty.clone(), empty.clone(), test_name.clone()),
            duration_s: None,
            status,
            retries: 0,
            has_children: false,
        });
        // Its children: the results one level deeper since its siblings
        // (with their own descendants).
        let children: Vec<usize> = if levels.len() > depth + 1 {
            levels.drain(depth + 1..).flatten().collect()
        } else {
            Vec::new()
        };
        if !children.is_empty() {
            report.cases[index].has_children = true;
            for &c in &children {
                let child = &mut report.cases[c];
                let suite = if child.id.suite.is_empty() {
                    test_name.clone()
                } else {
                    format!("{test_name} > {}", child.id.suite)
                };
                child.id.suite = Arc::from(suite.as_str());
            }
        }
        while levels.len() <= depth {
            levels.push(Vec::new());
        }
        levels[depth].push(index);
        levels[depth].extend(children);
        if depth == 0 {
            top_level += 1;
        }
        last = Some(Pending { index });
    }
    // Results at depths never closed by a parent line (a cut stream) stay
    // as they are.
    if results == 0 && planned != Some(0) && bailed.is_none() {
        return Err(IngestError::at(
            name,
            None,
            "holds no TAP result (`ok` or `not ok` lines)".into(),
        ));
    }
    if !groups.is_empty() {
        let mut k = 0;
        let mut g = groups.iter().peekable();
        report.cases.retain(|_| {
            let keep = g.peek() != Some(&&k);
            if !keep {
                g.next();
            }
            k += 1;
            keep
        });
    }
    if let Some(n) = stated_tests {
        let listed = report.cases[first..]
            .iter()
            .filter(|c| !c.has_children)
            .count();
        if n != listed {
            report.warnings.push(format!(
                "{name} says it holds {n} tests but lists {listed} results"
            ));
        }
    }
    if let Some(reason) = bailed {
        report.warnings.push(format!(
            "{name}: the run bailed out ({}); counted as one errored test",
            if reason.is_empty() {
                "no reason given"
            } else {
                &reason
            }
        ));
        report.cases.push(TestCase {
            id: TestId::new(empty.clone(), empty.clone(), "Bail out!".into()),
            duration_s: None,
            status: Status::Errored,
            retries: 0,
            has_children: false,
        });
    }
    if let Some(n) = planned
        && n != top_level
    {
        if n > top_level {
            let missing = n - top_level;
            report.warnings.push(format!(
                "{name}: its plan promises {n} tests and {top_level} reported (the script stopped early?); the {missing} missing count as one errored test"
            ));
            report.cases.push(TestCase {
                id: TestId::new(
                    empty.clone(),
                    empty.clone(),
                    format!("({missing} planned tests never reported)"),
                ),
                duration_s: None,
                status: Status::Errored,
                retries: 0,
                has_children: false,
            });
        } else {
            report.warnings.push(format!(
                "{name}: its plan promises {n} tests but {top_level} reported"
            ));
        }
    }
    if let Some(f) = stated_fail {
        let failing = report.cases[first..]
            .iter()
            .filter(|c| c.status.is_failure() && !c.has_children)
            .count();
        if f != failing {
            report.warnings.push(format!(
                "{name} says {f} tests failed but lists {failing} failed results"
            ));
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s: wall_ms.map(|m| m / 1e3),
        tests: report.cases.len() - first,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_and_directives() {
        let r = result("not ok 5 - someday # TODO write it").unwrap();
        assert!(!r.ok && r.todo && !r.skip);
        assert_eq!(r.name, "someday");
        let r = result("ok 4 # skip not today").unwrap();
        assert!(r.ok && r.skip && r.name.is_empty());
        let r = result("ok 7 - a \\# b").unwrap();
        assert_eq!(r.name, "a \\# b");
        assert!(result("okay then").is_none());
        assert_eq!(plan("1..6"), Some(6));
        assert_eq!(plan("1..0 # SKIP no db"), Some(0));
        assert_eq!(plan("1..x"), None);
    }
}
