//! TAP, the Test Anything Protocol (versions 12 to 14): Perl's Test::More
//! and `prove`, node's test runner (`--test-reporter=tap`), node-tap, many
//! shells' and C libraries' suites. A run reads as failed exactly when
//! `prove` (Test::Harness's `TAP::Parser`) fails it: besides `not ok`
//! lines, every parse error TAP::Parser reports makes the run fail, and is
//! counted as one errored test (named after the error) with a warning:
//!
//! - no plan, more than one plan, a plan in the middle (`Plan (1..N) must be
//!   at the beginning or end`), more or fewer tests than planned (`Bad
//!   plan`; a test beyond the plan is itself failed, as TAP::Parser's
//!   unplanned tests are), tests out of sequence (a number repeated, zero,
//!   out of order or beyond the plan);
//! - `TAP version` after a plan or a test, below 13 or above 14;
//! - under `pragma +strict`, any line that is not TAP (blank ones too);
//! - `Bail out!`.
//!
//! Lines are TAP::Parser's tokens: `TAP version N` (any case), a plan
//! `1..N` (with `# SKIP why` when N is 0, or TAP 12's `todo 3 5` list; any
//! other tail makes it no plan), `ok`/`not ok` (the word `ok` whole) with an
//! optional number and a description whose first unescaped `#` may start a
//! `SKIP` or `TODO` directive (the whole word: `# TODOORNOTTODO` is none),
//! `Bail out!`, comments, pragmas and YAML blocks (`---` ... `...`, giving
//! `duration_ms`). A `not ok # SKIP` is a failure (only TODO excuses one); a
//! TODO is skipped either way (node and prove do not count its pass as
//! one). A line `not` followed by an `ok` line is neither (prove reads none).
//!
//! Subtests (TAP 14, node) are indented four spaces more and end with their
//! parent's result line: the children are named under the parent (`parent >
//! child`), and the parent's time, which includes them, is not summed;
//! node's `describe` groups (`type: 'suite'`) are not tests. TAP::Parser
//! does not count them, and neither do the plan and sequence checks.

use std::io::BufRead;
use std::sync::Arc;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::{Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

/// Lines of a file's head looked at to tell TAP.
const SNIFF_LINES: usize = 64;

/// Whether `t` (trimmed at its start) is TAP: within its first 64 lines, a
/// `TAP version` line, a plan or an `ok`/`not ok` line at the start of a
/// line, and no line that says it is `go test`'s output (whose `ok  \tpkg`
/// lines would pass for results). A comment or a log line may come first.
pub fn sniff(t: &str) -> bool {
    let mut tap = false;
    for line in t.lines().take(SNIFF_LINES) {
        if line.starts_with("=== RUN")
            || line.starts_with("--- FAIL:")
            || line.starts_with("--- PASS:")
            || line.starts_with("ok  \t")
            || line.starts_with("FAIL\t")
        {
            return false;
        }
        let l = line.trim_end();
        tap |= version(l).is_some() || plan(l).is_some() || result(l).is_some();
    }
    tap
}

/// `TAP version N`, the words in any case.
fn version(line: &str) -> Option<u64> {
    let mut w = line.split_ascii_whitespace();
    let (tap, word, n) = (w.next()?, w.next()?, w.next()?);
    (tap.eq_ignore_ascii_case("TAP") && word.eq_ignore_ascii_case("version") && w.next().is_none())
        .then(|| n.parse().ok())?
}

/// A plan as TAP::Parser reads one.
#[derive(Debug, PartialEq)]
struct Plan {
    tests: usize,
    /// TAP 12's `1..N todo 3 5`: tests expected to fail.
    todo: Vec<usize>,
}

/// `1..N`, then nothing, `# SKIP why` when N is 0, or `todo N N`; `None`
/// for any other tail (TAP::Parser takes `1..5 # note` for no plan).
fn plan(line: &str) -> Option<Plan> {
    let rest = line.strip_prefix("1..")?;
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    let tests: usize = digits.parse().ok()?;
    let tail = rest[digits.len()..].trim_start();
    if let Some(list) = tail.strip_prefix("todo")
        && list.starts_with(|c: char| c.is_ascii_whitespace())
    {
        let todo: Vec<usize> = list
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|n| n.parse().ok())
            .collect();
        if !todo.is_empty() {
            return Some(Plan { tests, todo });
        }
    }
    (tests == 0 || tail.is_empty()).then_some(Plan {
        tests,
        todo: Vec::new(),
    })
}

/// A result line.
struct Line<'a> {
    ok: bool,
    number: Option<usize>,
    name: &'a str,
    skip: bool,
    todo: bool,
}

/// `ok` or `not ok` (the word whole), an optional number, the description
/// and its directive.
fn result(line: &str) -> Option<Line<'_>> {
    let (ok, rest) = match line.strip_prefix("not ok") {
        Some(r) => (false, r),
        None => (true, line.strip_prefix("ok")?),
    };
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.trim_start();
    let digits = rest
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap_or("");
    let number = digits.parse().ok();
    let rest = rest[digits.len()..].trim_start();
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
    let (mut name, mut skip, mut todo) = (rest, false, false);
    if let Some(i) = first_unescaped_hash(rest) {
        let d = rest[i + 1..].trim_start();
        let word = |w: &str| {
            d.get(..4).is_some_and(|h| h.eq_ignore_ascii_case(w))
                && !d[4..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        };
        skip = word("SKIP");
        todo = word("TODO");
        if skip || todo {
            name = rest[..i].trim_end();
        }
    }
    Some(Line {
        ok,
        number,
        name,
        skip,
        todo,
    })
}

/// The first `#` not escaped by a backslash.
fn first_unescaped_hash(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'#' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Where the plan stands, as TAP::Parser's state table has it.
#[derive(Clone, Copy, PartialEq)]
enum State {
    /// Nothing yet (comments and unknown lines keep it).
    Init,
    /// A plan before any test.
    Planned,
    /// Tests after a leading plan.
    PlannedAfterTest,
    /// Tests, then a plan: another test is an error.
    GotPlan,
    /// Tests and no plan yet.
    Unplanned,
}

/// The top level's bookkeeping: plan, count, errors.
struct Top {
    state: State,
    planned: Option<usize>,
    plan_line: String,
    todo: Vec<usize>,
    tests_run: usize,
    strict: bool,
    /// A `TAP version` line was read.
    versioned: bool,
    /// The previous line was a lone `not` (TAP::Parser joins it to the next).
    lone_not: bool,
    errors: Vec<String>,
}

impl Top {
    fn new() -> Top {
        Top {
            state: State::Init,
            planned: None,
            plan_line: String::new(),
            todo: Vec::new(),
            tests_run: 0,
            strict: false,
            versioned: false,
            lone_not: false,
            errors: Vec::new(),
        }
    }

    fn error(&mut self, e: String) {
        if self.errors.len() < 100 && !self.errors.contains(&e) {
            self.errors.push(e);
        }
    }

    fn version(&mut self, v: u64) {
        if self.state != State::Init || std::mem::replace(&mut self.versioned, true) {
            self.error("If TAP version is present it must be the first line of output".into());
        } else if v < 13 {
            self.error(format!(
                "Explicit TAP version must be at least 13. Got version {v}"
            ));
        } else if v > 14 {
            self.error(format!(
                "TAP specified version {v} but we don't know about versions later than 14"
            ));
        }
    }

    fn plan(&mut self, p: Plan, line: &str) {
        match self.state {
            State::Init | State::Unplanned => {
                self.planned = Some(p.tests);
                self.plan_line = line.trim().to_string();
                self.todo = p.todo;
                self.state = if self.state == State::Init {
                    State::Planned
                } else {
                    State::GotPlan
                };
            }
            _ => self.error("More than one plan found in TAP output".into()),
        }
    }

    /// Count a top-level test; whether it lies beyond the plan.
    fn test(&mut self, number: Option<usize>) -> bool {
        self.tests_run += 1;
        let run = self.tests_run;
        match self.state {
            State::Init => self.state = State::Unplanned,
            State::Planned => self.state = State::PlannedAfterTest,
            State::GotPlan => {
                let e = format!(
                    "Plan ({}) must be at the beginning or end of the TAP output",
                    self.plan_line
                );
                self.error(e);
                self.state = State::PlannedAfterTest;
            }
            State::PlannedAfterTest | State::Unplanned => {}
        }
        if let Some(n) = number
            && n != run
        {
            self.error(format!(
                "Tests out of sequence.  Found ({n}) but expected ({run})"
            ));
        }
        self.state != State::Unplanned && self.planned.is_some_and(|p| run > p)
    }

    /// The checks at the end of the stream.
    fn finish(&mut self) {
        match self.planned {
            None => self.error("No plan found in TAP output".into()),
            Some(p) if p != self.tests_run => self.error(format!(
                "Bad plan.  You planned {p} tests but ran {}.",
                self.tests_run
            )),
            Some(_) => {}
        }
    }
}

/// A YAML block's end, and the result it belongs to.
struct Yaml {
    indent: usize,
    of: Option<usize>,
}

pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    read_with(input, name, report, None)
}

/// [`read`], handing results on to `sink` (when given) once nothing can
/// amend them any more: outside any subtest, YAML block or node's groups.
pub fn read_with(
    input: impl BufRead,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn super::CaseSink + '_)>,
) -> Result<(), IngestError> {
    let first = report.cases.len();
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let mut r = Reader {
        name,
        report,
        sink,
        spilled: 0,
        spilled_listed: 0,
        spilled_failing: 0,
        first,
        empty: Arc::from(""),
        levels: vec![Vec::new()],
        last: None,
        groups: Vec::new(),
        top: Top::new(),
        results: 0,
        bailed: None,
        stated_tests: None,
        stated_fail: None,
        wall_ms: None,
    };
    let mut yaml: Option<Yaml> = None;
    for (i, line) in input.lines().enumerate() {
        if let Some(why) =
            crate::ingest::limits::check(i as u64 + 1, r.report.cases.len() + r.spilled)
        {
            return Err(IngestError::at(name, Some(i + 1), why));
        }
        let line =
            line.map_err(|e| IngestError::at(name, Some(i + 1), format!("cannot read: {e}")))?;
        budget.reset();
        let indent = line.len() - line.trim_start_matches(' ').len();
        let t = line.trim();
        if let Some(y) = &yaml {
            if t == "..." && indent <= y.indent + 2 {
                yaml = None;
            } else {
                r.yaml_line(t, y.of);
            }
            continue;
        }
        if t == "---" && indent > 0 {
            yaml = Some(Yaml {
                indent: indent.saturating_sub(2),
                of: r.last,
            });
            continue;
        }
        r.line(&line, t, indent);
        r.spill();
    }
    r.finish()
}

/// The reading of one file.
struct Reader<'r, 's> {
    name: &'r str,
    report: &'r mut Report,
    sink: Option<&'r mut (dyn super::CaseSink + 's)>,
    /// This file's results handed on, those of them that are not parents,
    /// and those of these that failed (for the closing counts' check).
    spilled: usize,
    spilled_listed: usize,
    spilled_failing: usize,
    first: usize,
    empty: Arc<str>,
    /// Per depth: the results read at that depth since its last parent.
    levels: Vec<Vec<usize>>,
    /// The last result read (a YAML block belongs to it).
    last: Option<usize>,
    /// Results that are groups (node's describe blocks), dropped at the end.
    groups: Vec<usize>,
    top: Top,
    results: usize,
    bailed: Option<String>,
    stated_tests: Option<usize>,
    stated_fail: Option<usize>,
    wall_ms: Option<f64>,
}

impl Reader<'_, '_> {
    /// Hand on every result but the last (a YAML block may follow it) when
    /// no subtest is open and no result is a group to drop at the end.
    fn spill(&mut self) {
        let Some(s) = self.sink.as_deref_mut() else {
            return;
        };
        if self.report.cases.len() < super::SPILL_CHUNK
            || !self.groups.is_empty()
            || self.levels.iter().skip(1).any(|l| !l.is_empty())
        {
            return;
        }
        let n = self.report.cases.len() - 1;
        let first = self.first.min(n);
        for c in &self.report.cases[first..n] {
            if !c.has_children {
                self.spilled_listed += 1;
                self.spilled_failing += usize::from(c.status.is_failure());
            }
        }
        self.spilled += n - first;
        super::spill(self.report, s);
        self.first = 0;
        self.last = self.last.map(|l| l.saturating_sub(n));
    }

    fn yaml_line(&mut self, t: &str, of: Option<usize>) {
        if t == "type: 'suite'" || t == "type: suite" {
            // node's describe(): a group, not a test.
            if let Some(p) = of {
                self.groups.push(p);
            }
        } else if let (Some(v), Some(p)) = (t.strip_prefix("duration_ms:"), of)
            && let Ok(ms) = v.trim().trim_matches('\'').parse::<f64>()
            && ms.is_finite()
            && ms >= 0.0
        {
            self.report.cases[p].duration_s = Some(ms / 1e3);
        }
    }

    fn line(&mut self, raw: &str, t: &str, indent: usize) {
        let lone_not = std::mem::take(&mut self.top.lone_not);
        if let Some(reason) = t.strip_prefix("Bail out!") {
            self.bailed = Some(reason.trim().to_string());
            return;
        }
        if indent > 0 {
            // A subtest's line (TAP 14), or an indented line TAP::Parser
            // ignores.
            if let Some(l) = result(t) {
                self.add(l, indent.div_ceil(4), false);
            }
            return;
        }
        if let Some(v) = version(t) {
            self.top.version(v);
        } else if let Some(p) = plan(raw.trim_end()) {
            self.top.plan(p, raw);
        } else if let Some(l) = result(raw.trim_end()) {
            if lone_not && l.ok {
                // `not` then `ok 1`: TAP::Parser reads neither as a test.
                self.strict_unknown(raw);
                return;
            }
            let beyond = self.top.test(l.number);
            self.add(l, 0, beyond);
        } else if let Some(c) = t.strip_prefix('#') {
            self.comment(c.trim());
        } else if let Some(p) = t.strip_prefix("pragma ") {
            for flag in p.split(',').map(str::trim) {
                match flag {
                    "+strict" => self.top.strict = true,
                    "-strict" => self.top.strict = false,
                    _ => {}
                }
            }
        } else {
            self.top.lone_not = t == "not";
            self.strict_unknown(raw);
        }
    }

    fn strict_unknown(&mut self, raw: &str) {
        if self.top.strict {
            let shown: String = raw.chars().take(80).collect();
            self.top.error(format!("Unknown TAP token: \"{shown}\""));
        }
    }

    /// node's closing counts, in comments.
    fn comment(&mut self, c: &str) {
        if let Some(v) = c.strip_prefix("tests ") {
            self.stated_tests = v.trim().parse().ok();
        } else if let Some(v) = c.strip_prefix("fail ") {
            self.stated_fail = v.trim().parse().ok();
        } else if let Some(v) = c.strip_prefix("duration_ms ") {
            self.wall_ms = v
                .trim()
                .parse()
                .ok()
                .filter(|m: &f64| m.is_finite() && *m >= 0.0);
        }
    }

    /// A result at `depth`; `beyond`: a top-level test past the plan.
    fn add(&mut self, l: Line<'_>, depth: usize, beyond: bool) {
        self.results += 1;
        let todo = l.todo || (depth == 0 && self.top.todo.contains(&self.top.tests_run));
        // TAP::Parser's is_ok: a test beyond the plan fails; a TODO is ok
        // either way; a SKIP excuses an `ok` only.
        let status = if beyond {
            Status::Failed
        } else if todo || (l.skip && l.ok) {
            Status::Skipped
        } else if l.ok {
            Status::Passed
        } else {
            Status::Failed
        };
        let test_name = if l.name.is_empty() {
            format!("#{}", self.levels.get(depth).map_or(0, Vec::len) + 1)
        } else {
            l.name.to_string()
        };
        let index = self.report.cases.len();
        self.report.push_case(TestCase {
            id: TestId::new(self.empty.clone(), self.empty.clone(), test_name.clone()),
            duration_s: None,
            status,
            retries: 0,
            has_children: false,
        });
        // Its children: the results one level deeper since its siblings
        // (with their own descendants).
        let children: Vec<usize> = if self.levels.len() > depth + 1 {
            self.levels.drain(depth + 1..).flatten().collect()
        } else {
            Vec::new()
        };
        if !children.is_empty() {
            self.report.cases[index].has_children = true;
            for &c in &children {
                let child = &mut self.report.cases[c];
                let suite = if child.id.suite.is_empty() {
                    test_name.clone()
                } else {
                    format!("{test_name} > {}", child.id.suite)
                };
                child.id.suite = Arc::from(suite.as_str());
            }
        }
        while self.levels.len() <= depth {
            self.levels.push(Vec::new());
        }
        self.levels[depth].push(index);
        self.levels[depth].extend(children);
        self.last = Some(index);
    }

    fn errored(&mut self, name: String) {
        self.report.push_case(TestCase {
            id: TestId::new(self.empty.clone(), self.empty.clone(), name),
            duration_s: None,
            status: Status::Errored,
            retries: 0,
            has_children: false,
        });
    }

    fn finish(mut self) -> Result<(), IngestError> {
        let name = self.name;
        // A plan or a version line says it is TAP even without results
        // (`1..3` and nothing: a run that died, which prove fails).
        if self.results == 0
            && self.top.planned.is_none()
            && !self.top.versioned
            && self.bailed.is_none()
        {
            return Err(IngestError::at(
                name,
                None,
                "holds no TAP result (`ok` or `not ok` lines)".into(),
            ));
        }
        self.drop_groups();
        self.check_stated();
        if let Some(reason) = self.bailed.take() {
            let why = if reason.is_empty() {
                "no reason given"
            } else {
                &reason
            };
            self.report.warnings.push(format!(
                "{name}: the run bailed out ({why}); counted as one errored test"
            ));
            self.errored("Bail out!".into());
        } else {
            // A run that bailed out has no plan to keep.
            self.top.finish();
        }
        let errors = std::mem::take(&mut self.top.errors);
        if let Some(head) = errors.first() {
            for e in &errors {
                self.report.warnings.push(format!(
                    "{name}: {e} (prove fails the run; counted as one errored test)"
                ));
            }
            let more = match errors.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            self.errored(format!("(TAP parse error: {head}{more})"));
        }
        let tests = self.report.cases.len() - self.first + self.spilled;
        self.report.suites.push(Suite {
            name: name.to_string(),
            time_s: self.wall_ms.map(|m| m / 1e3),
            tests,
        });
        Ok(())
    }

    fn drop_groups(&mut self) {
        if self.groups.is_empty() {
            return;
        }
        let mut k = 0;
        let mut g = self.groups.iter().peekable();
        self.report.cases.retain(|_| {
            let keep = g.peek() != Some(&&k);
            if !keep {
                g.next();
            }
            k += 1;
            keep
        });
    }

    /// node's closing `# tests` and `# fail` against what was listed.
    fn check_stated(&mut self) {
        let name = self.name;
        let cases = &self.report.cases[self.first..];
        if let Some(n) = self.stated_tests {
            let listed = cases.iter().filter(|c| !c.has_children).count() + self.spilled_listed;
            if n != listed {
                self.report.warnings.push(format!(
                    "{name} says it holds {n} tests but lists {listed} results"
                ));
            }
        }
        if let Some(f) = self.stated_fail {
            let failing = (cases.iter())
                .filter(|c| c.status.is_failure() && !c.has_children)
                .count()
                + self.spilled_failing;
            if f != failing {
                self.report.warnings.push(format!(
                    "{name} says {f} tests failed but lists {failing} failed results"
                ));
            }
        }
    }
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
        assert!(result("ok1").is_none());
        let r = result("not ok 1 - x # TODOORNOTTODO").unwrap();
        assert!(!r.todo && !r.ok);
        let r = result("ok 1 - a # b # SKIP x").unwrap();
        assert!(!r.skip, "only the first unescaped # may start a directive");
        assert_eq!(plan("1..6").map(|p| p.tests), Some(6));
        assert_eq!(plan("1..0 # SKIP no db").map(|p| p.tests), Some(0));
        assert_eq!(plan("1..3 todo 3 2;").map(|p| p.todo), Some(vec![3, 2]));
        assert_eq!(plan("1..2 # note"), None);
        assert_eq!(plan("1..x"), None);
        assert_eq!(version("TAP Version 13"), Some(13));
        assert!(sniff("# a comment\nTAP version 13\n1..1\nok 1\n"));
        assert!(sniff("junk\n  indented\n1..2\nok 1\n"));
        assert!(!sniff(
            "=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \tpkg\t0.01s\n"
        ));
        assert!(!sniff("building...\nlinking\ndone\n"));
    }
}
