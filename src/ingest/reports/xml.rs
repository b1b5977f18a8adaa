//! One streaming pass over a test-report XML file, whatever its dialect
//! (told by the root element): JUnit (`testsuites`/`testsuite`), NUnit 3
//! (`test-run`, or a bare `test-suite`), NUnit 2 (`test-results`), TRX (`TestRun`) and
//! xUnit.net v2 (`assemblies`/`assembly`).
//!
//! Markup must be well formed (a raw `"` inside an attribute value, a mismatched end
//! tag, an undefined entity are errors naming line and column); control characters
//! inside text and CDATA, which real NUnit files hold, are accepted.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::attributes::Attribute;
use quick_xml::events::{BytesStart, Event};

use std::sync::Arc;

use super::bounded::{Bounded, TOKEN_LIMIT};
use super::duration;
use super::{FxBuild, Report, Status, Suite, TestCase, TestId};
use crate::ingest::error::IngestError;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dialect {
    JUnit,
    NUnit3,
    NUnit2,
    Trx,
    XUnit,
    /// Allure 1 (`<ns2:test-suite xmlns:ns2="urn:model.allure.qatools.yandex.ru">`):
    /// names in `<name>` elements, statuses in attributes.
    Allure1,
}

/// Allure 1's `<name>` text wanted next: its suite's or its test case's.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Allure1Name {
    Suite,
    Case,
}

/// An attribute's text: borrowed from the reader's buffer unless it needs unescaping or
/// whitespace normalisation (the rare case). An undefined entity is an error, except in a
/// document with a DTD (`lenient`), whose entities tardy never expands: there the raw
/// text is kept.
fn text<'e>(a: &Attr<'e>, lenient: bool) -> Result<Cow<'e, str>, String> {
    if let Cow::Borrowed(raw) = a.value
        && a.class & (SPECIAL | NON_ASCII) == 0
    {
        // SAFETY: every byte is ASCII (below 0x80), so the bytes are UTF-8.
        return Ok(Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) }));
    }
    if let Cow::Borrowed(raw) = a.value
        && a.class & SPECIAL == 0
        && let Ok(s) = std::str::from_utf8(raw)
    {
        return Ok(Cow::Borrowed(s));
    }
    match a.normalized_value(quick_xml::XmlVersion::Implicit1_0) {
        Ok(v) => Ok(Cow::Owned(v.into_owned())),
        Err(_) if lenient => Ok(Cow::Owned(String::from_utf8_lossy(&a.value).into_owned())),
        Err(e) => Err(format!(
            "attribute {}: {e}",
            String::from_utf8_lossy(a.key.as_ref())
        )),
    }
}

/// What an attribute value's bytes hold, found in one pass over them: a raw
/// `<` (an error), what needs unescaping or normalising, bytes past ASCII.
const RAW_LT: u8 = 1;
const SPECIAL: u8 = 2;
const NON_ASCII: u8 = 4;
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0x80;
    while b < 256 {
        t[b] = NON_ASCII;
        b += 1;
    }
    t[b'<' as usize] = RAW_LT;
    t[b'&' as usize] = SPECIAL;
    t[b'\t' as usize] = SPECIAL;
    t[b'\n' as usize] = SPECIAL;
    t[b'\r' as usize] = SPECIAL;
    t
};

fn class_of(value: &[u8]) -> u8 {
    value.iter().fold(0, |c, &b| c | CLASS[b as usize])
}

/// An attribute, with what its value holds ([`CLASS`]).
struct Attr<'e> {
    attribute: Attribute<'e>,
    class: u8,
}

impl<'e> std::ops::Deref for Attr<'e> {
    type Target = Attribute<'e>;
    fn deref(&self) -> &Attribute<'e> {
        &self.attribute
    }
}

type Attributes<'e> = smallvec::SmallVec<[Attr<'e>; 8]>;

/// An element's attributes, checked (a raw `"` or `<` in a value, a missing `=` or
/// quote, a repeated name are errors), or the error and where in the element it is.
/// Held inline up to eight (a testcase has three or four): no allocation per
/// element.
fn checked<'e>(e: &'e BytesStart) -> Result<Attributes<'e>, (usize, String)> {
    let mut c = Checker::new(e);
    // The plain case (each `key="value"`) split here; any other, and every
    // error of syntax, through quick-xml's own reading, from the start.
    match split_plain(e.attributes_raw(), &mut c) {
        Some(done) => done.map(|()| c.out),
        None => checked_by_quick_xml(e),
    }
}

/// [`checked`] through quick-xml's reading of the attributes.
fn checked_by_quick_xml<'e>(e: &'e BytesStart) -> Result<Attributes<'e>, (usize, String)> {
    let mut c = Checker::new(e);
    for a in e.attributes().with_checks(false) {
        match a {
            Ok(a) => {
                let class = class_of(&a.value);
                c.add(a, class)?
            }
            Err(err) => {
                let at = match err {
                    quick_xml::events::attributes::AttrError::ExpectedEq(p)
                    | quick_xml::events::attributes::AttrError::ExpectedValue(p)
                    | quick_xml::events::attributes::AttrError::UnquotedValue(p)
                    | quick_xml::events::attributes::AttrError::ExpectedQuote(p, _)
                    | quick_xml::events::attributes::AttrError::Duplicated(p, _) => p,
                };
                return Err((at, format!("malformed attribute: {err}")));
            }
        }
    }
    Ok(c.out)
}

/// An element's attributes as they are checked.
struct Checker<'e> {
    out: Attributes<'e>,
    /// Repeated names are found here, not by quick-xml's check (a vector
    /// allocated per element): pairwise among the few a test case has,
    /// through a set past that, so that no element costs quadratic time.
    many: Option<std::collections::HashSet<&'e [u8], FxBuild>>,
    /// Where the element's text starts (errors say where in it they are).
    element: usize,
}

impl<'e> Checker<'e> {
    fn new(e: &'e BytesStart) -> Self {
        Checker {
            out: Attributes::new(),
            many: None,
            element: e.as_ptr() as usize,
        }
    }

    fn add(&mut self, a: Attribute<'e>, class: u8) -> Result<(), (usize, String)> {
        if class & RAW_LT != 0 {
            return Err((0, "a raw '<' in an attribute value".into()));
        }
        let key: &'e [u8] = a.key.into_inner();
        let repeated = match self.many.as_mut() {
            Some(set) => !set.insert(key),
            None => self.out.iter().any(|b: &Attr| b.key.as_ref() == key),
        };
        if repeated {
            let at = (key.as_ptr() as usize).saturating_sub(self.element);
            return Err((
                at,
                format!(
                    "malformed attribute: `{}` is repeated",
                    String::from_utf8_lossy(key)
                ),
            ));
        }
        if self.many.is_none() && self.out.len() >= 16 {
            self.many = Some(
                (self.out.iter())
                    .map(|b| b.key.into_inner())
                    .chain([key])
                    .collect(),
            );
        }
        self.out.push(Attr {
            attribute: a,
            class,
        });
        Ok(())
    }
}

/// Check an element's attributes (the text after its name) when each is
/// `key="value"` or `key='value'`, apart by whitespace or not (as
/// quick-xml reads them), with nothing else between: `None` for anything
/// else, which is left to quick-xml (and its errors).
fn split_plain<'e>(raw: &'e [u8], c: &mut Checker<'e>) -> Option<Result<(), (usize, String)>> {
    // Whitespace as quick-xml reads it between attributes (XML's four bytes).
    let ws = quick_xml::utils::is_whitespace;
    let mut i = 0;
    loop {
        while raw.get(i).is_some_and(|&b| ws(b)) {
            i += 1;
        }
        if i == raw.len() {
            return Some(Ok(()));
        }
        let key = i;
        while raw.get(i).is_some_and(|&b| b != b'=' && !ws(b)) {
            i += 1;
        }
        if i == key || raw.get(i) != Some(&b'=') {
            return None;
        }
        let key = &raw[key..i];
        let quote = match raw.get(i + 1) {
            Some(&q) if q == b'"' || q == b'\'' => q,
            _ => return None,
        };
        let from = i + 2;
        let (len, class) = value_end(raw.get(from..)?, quote)?;
        let added = c.add(
            Attribute {
                key: quick_xml::name::QName(key),
                value: Cow::Borrowed(&raw[from..from + len]),
            },
            class,
        );
        if added.is_err() {
            return Some(added);
        }
        i = from + len + 1;
    }
}

/// The length of an attribute's value (up to its closing `quote`) and its
/// [`CLASS`], in one pass: eight bytes at a time while none of them is the
/// quote or a byte that has a class (`<`, `&`, below a space, past ASCII).
fn value_end(rest: &[u8], quote: u8) -> Option<(usize, u8)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `w` is zero (or one after such a byte is flagged too: those
    // words are read byte by byte, exactly).
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut class = 0;
    let mut i = 0;
    while let Some(word) = rest.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let notable = (w & HIGH)
            | zero(w ^ (ONES * u64::from(quote)))
            | zero(w ^ (ONES * u64::from(b'<')))
            | zero(w ^ (ONES * u64::from(b'&')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH);
        if notable != 0 {
            break;
        }
        i += 8;
    }
    for (j, &b) in rest.iter().enumerate().skip(i) {
        if b == quote {
            return Some((j, class));
        }
        class |= CLASS[b as usize];
    }
    None
}

/// Several attributes in one pass over the element (the hot path: one call per test).
fn attrs<'e, const N: usize>(
    list: &[Attr<'e>],
    keys: [&str; N],
    lenient: bool,
) -> Result<[Option<Cow<'e, str>>; N], String> {
    let mut out = [const { None }; N];
    for a in list {
        // The local name (after a prefix), found without a call: names are short.
        let k = a.key.as_ref();
        let k = match k.iter().position(|&b| b == b':') {
            Some(colon) => &k[colon + 1..],
            None => k,
        };
        // Byte by byte, not through `memcmp`: a call costs more than these
        // few bytes, and most names differ at the first.
        let same = |key: &&str| key.len() == k.len() && key.bytes().zip(k).all(|(x, &y)| x == y);
        if let Some(i) = keys.iter().position(same)
            && out[i].is_none()
        {
            out[i] = Some(text(a, lenient)?);
        }
    }
    Ok(out)
}

fn attr(list: &[Attr], key: &str, lenient: bool) -> Result<Option<String>, String> {
    let [v] = attrs(list, [key], lenient)?;
    Ok(v.map(Cow::into_owned))
}

/// The deepest element nesting read. Real reports nest a few levels (NUnit's
/// namespaces and fixtures perhaps a few dozen); without a cap, 100k nested suites
/// cost seconds of CPU in the suite-path bookkeeping before any error.
pub const MAX_DEPTH: usize = 256;

struct Parser<'a> {
    name: &'a str,
    dialect: Option<Dialect>,
    /// Names of the enclosing suites, and their path joined once per change.
    suites: Vec<String>,
    suite_path: Arc<str>,
    /// Class names, shared between the tests that have them.
    classes: HashMap<Box<str>, Arc<str>, FxBuild>,
    /// Index into report.suites of the outermost open suite, for counting.
    outer: Option<usize>,
    pending: Option<TestCase>,
    /// How the pending case's status is decided (see [`Decided`]).
    decided: Decided,
    /// Allure 1: the open elements' names, and whose `<name>` text comes next.
    allure1_open: Vec<Box<str>>,
    allure1_want: Option<Allure1Name>,
    /// Allure 1: a suite seen whose name has not come yet.
    allure1_suite: bool,
    /// TRX: open UnitTestResult elements (InnerResults nest them).
    trx_depth: usize,
    trx_ids: Vec<Option<String>>,
    trx_class: HashMap<String, String>,
    trx_current_def: Option<String>,
    trx_cases: Vec<(usize, String)>,
    /// TRX's classes read ahead of its results ([`trx_classes`]): each result
    /// gets its class as read, so results can be handed on as read.
    trx_known: Option<TrxClasses>,
    bad_durations: usize,
    first_bad: Option<String>,
    /// A lone `<testsuite>` root: one class per file (Surefire, Gradle, Ant).
    class_per_file: bool,
    /// A `<testsuites time=...>` root: the whole file's wall time (jest, mocha, GoogleTest).
    root_time: Option<f64>,
    /// The document has a DTD: undefined entities are kept raw, never expanded.
    lenient: bool,
    /// Written by pytest (its default suite names): node ids are unique in a pytest
    /// session, so a repeated one is a rerun (pytest-rerunfailures) or the teardown
    /// error pytest writes as a second element.
    pytest: bool,
    /// pytest's suite came after cases were handed on.
    pytest_late: bool,
    /// Index in report.cases of this file's first case.
    first_case: usize,
    /// JUnit: the tests the file says it holds (the root's `tests=`, else the sum over the
    /// outermost suites'), to warn when it lists another number.
    stated: Option<usize>,
    /// The root stated the total (the suites' are not added), or a suite did not (no check).
    stated_by_root: bool,
    stated_unknown: bool,
    /// The failing tests (failures and errors) the file says it holds, in
    /// every dialect that states them; a run it calls failed never reads
    /// as passed.
    failing: Option<usize>,
    failing_by_root: bool,
    failing_unknown: bool,
    /// This file's cases handed to a streaming read's sink, and how many of
    /// them failed.
    spilled: usize,
    spilled_failing: usize,
}

/// The sum of these numeric attributes, `None` when none is there.
fn count(list: &[Attr], keys: &[&str], lenient: bool) -> Result<Option<usize>, String> {
    let mut total: Option<usize> = None;
    for k in keys {
        if let Some(v) = attr(list, k, lenient)?.and_then(|v| v.trim().parse::<usize>().ok()) {
            *total.get_or_insert(0) += v;
        }
    }
    Ok(total)
}

/// How a pending test case's status gets decided.
#[derive(Default)]
struct Decided {
    /// The case's attributes settle it (JUnit `status="disabled"`, NUnit `result=`).
    by_attributes: bool,
    /// NUnit 2 without `result=`: `executed`/`success` and the children decide.
    nunit2_executed: Option<bool>,
    nunit2_success: Option<bool>,
    /// pytest's second element for an error in teardown.
    teardown_error: bool,
}

impl Parser<'_> {
    /// Whether the cases read so far may be handed on: every index into
    /// them is settled (TRX's classes, which come after its results, read
    /// ahead; Allure 1 names its cases after them), and the run's cases so
    /// far need no merging (a pytest file's repeated node ids, reruns, send
    /// the run to a whole read: [`Report::whole_if_repeated`]).
    fn may_spill(&self, report: &Report) -> bool {
        let settled = match self.dialect {
            Some(Dialect::JUnit | Dialect::NUnit3 | Dialect::NUnit2 | Dialect::XUnit) => true,
            Some(Dialect::Trx) => self.trx_known.is_some(),
            _ => false,
        };
        settled && report.attempts.is_empty()
    }

    fn duration(&mut self, raw: Option<impl AsRef<str>>, timespan: bool) -> Option<f64> {
        let raw = raw?;
        let parsed = if timespan {
            duration::timespan(raw.as_ref())
        } else {
            duration::seconds(raw.as_ref())
        };
        match parsed {
            Ok(v) => Some(v),
            Err(why) => {
                self.bad_durations += 1;
                self.first_bad.get_or_insert(why);
                None
            }
        }
    }

    fn open_suite(&mut self, report: &mut Report, name: String, time: Option<String>, empty: bool) {
        if self.suites.is_empty() {
            let time_s = self.duration(time, false);
            report.suites.push(Suite {
                name: name.clone(),
                time_s,
                tests: 0,
            });
            if !empty {
                self.outer = Some(report.suites.len() - 1);
            }
        }
        if !empty {
            self.suites.push(name);
            self.suite_path = Arc::from(self.suites.join(" / "));
        }
    }

    fn close_suite(&mut self) {
        self.suites.pop();
        self.suite_path = Arc::from(self.suites.join(" / "));
        if self.suites.is_empty() {
            self.outer = None;
        }
    }

    fn class(&mut self, name: &str) -> Arc<str> {
        if let Some(c) = self.classes.get(name) {
            return c.clone();
        }
        let shared: Arc<str> = Arc::from(name);
        self.classes.insert(Box::from(name), shared.clone());
        shared
    }

    fn start_case(&mut self, class: &str, name: String, duration_s: Option<f64>, status: Status) {
        let class = self.class(class);
        // In one-class-per-file reports the class names the test, not the file: Surefire
        // writes a JUnit 5 rerun of `A` into `TEST-A$Inner.xml` under suite `A$Inner`.
        let suite = if self.class_per_file && self.suites.len() == 1 && !class.is_empty() {
            class.clone()
        } else {
            self.suite_path.clone()
        };
        self.pending = Some(TestCase {
            id: TestId::new(suite, class, name),
            duration_s,
            status,
            retries: 0,
            has_children: false,
        });
        self.decided = Decided::default();
    }

    fn finish_case(&mut self, report: &mut Report) {
        let Some(mut c) = self.pending.take() else {
            return;
        };
        let d = std::mem::take(&mut self.decided);
        if let Some(executed) = d.nunit2_executed {
            // NUnit 2.2-2.4: no result attribute.
            if !executed {
                c.status = Status::Skipped;
            } else if d.nunit2_success == Some(false) && c.status == Status::Passed {
                c.status = Status::Failed;
            }
        }
        if d.teardown_error
            && report.cases[self.first_case..]
                .last()
                .is_some_and(|prev| prev.id == c.id && prev.status.is_failure())
        {
            // pytest writes an error in teardown after a failed call as a second element
            // and counts it as a result of its own: the test's teardown.
            c.id.name.push_str(" (teardown)");
        }
        if let Some(i) = self.outer {
            report.suites[i].tests += 1;
        }
        report.push_case(c);
    }

    /// A child element says how the pending case ended.
    fn set_status(&mut self, s: Status) {
        if self.decided.by_attributes {
            return;
        }
        if let Some(c) = self.pending.as_mut() {
            c.status = match (c.status, s) {
                (Status::Errored, _) => Status::Errored,
                (Status::Passed, Status::Flaky) => Status::Flaky,
                (_, Status::Flaky) => c.status,
                (_, s) => s,
            };
        }
    }

    fn element(
        &mut self,
        e: &BytesStart,
        list: &[Attr],
        empty: bool,
        report: &mut Report,
    ) -> Result<(), String> {
        let local = e.local_name();
        let local = local.as_ref();
        let tag = if local.iter().all(u8::is_ascii) {
            // SAFETY: every byte is ASCII (below 0x80), so the bytes are UTF-8
            // (checked here, inline: `from_utf8`'s call cost more than these few bytes).
            unsafe { std::str::from_utf8_unchecked(local) }
        } else {
            std::str::from_utf8(local).unwrap_or("")
        };
        let lenient = self.lenient;
        let dialect = match self.dialect {
            Some(d) => d,
            None => {
                let allure1 = tag == "test-suite"
                    && list.iter().any(|a| {
                        a.key.as_ref().starts_with(b"xmlns")
                            && a.value.windows(6).any(|w| w == b"allure")
                    });
                let d = match tag {
                    "test-suite" if allure1 => Dialect::Allure1,
                    "testsuites" | "testsuite" => Dialect::JUnit,
                    "test-run" | "test-suite" => Dialect::NUnit3,
                    "test-results" => Dialect::NUnit2,
                    "TestRun" => Dialect::Trx,
                    "assemblies" | "assembly" => Dialect::XUnit,
                    other => {
                        return Err(format!(
                            "is not a test report: the root element is <{other}>, expected testsuites, testsuite, test-run, test-suite, test-results, TestRun or assemblies"
                        ));
                    }
                };
                self.dialect = Some(d);
                self.class_per_file = tag == "testsuite";
                let name = attr(list, "name", lenient)?;
                self.pytest = matches!(name.as_deref(), Some("pytest tests" | "pytest"));
                if tag == "testsuites" {
                    self.root_time = self.duration(attr(list, "time", lenient)?, false);
                    self.stated = attr(list, "tests", lenient)?.and_then(|t| t.parse().ok());
                    self.stated_by_root = self.stated.is_some();
                    self.failing = count(list, &["failures", "errors"], lenient)?;
                    self.failing_by_root = self.failing.is_some();
                }
                // The roots that state the run's failures.
                match tag {
                    "test-run" => self.failing = count(list, &["failed"], lenient)?,
                    "test-results" => self.failing = count(list, &["failures", "errors"], lenient)?,
                    _ => {}
                }
                if matches!(
                    tag,
                    "testsuites" | "assemblies" | "test-run" | "test-results" | "TestRun"
                ) {
                    return Ok(());
                }
                d
            }
        };
        match (dialect, tag) {
            (Dialect::JUnit, "testsuite") => {
                let [name, time, tests] = attrs(list, ["name", "time", "tests"], lenient)?;
                if self.suites.is_empty() && !self.stated_by_root {
                    match tests.and_then(|t| t.parse::<usize>().ok()) {
                        Some(n) => *self.stated.get_or_insert(0) += n,
                        None => self.stated_unknown = true,
                    }
                }
                if self.suites.is_empty() && !self.failing_by_root {
                    match count(list, &["failures", "errors"], lenient)? {
                        Some(n) => *self.failing.get_or_insert(0) += n,
                        None => self.failing_unknown = true,
                    }
                }
                if name.as_deref() == Some("pytest") {
                    // Named late: the cases already handed on were read as
                    // plain JUnit's.
                    self.pytest_late |= !self.pytest && self.spilled > 0;
                    self.pytest = true;
                }
                self.open_suite(
                    report,
                    name.map(Cow::into_owned).unwrap_or_default(),
                    time.map(Cow::into_owned),
                    empty,
                );
            }
            (Dialect::JUnit, "testcase") => {
                let [time, st, result, class, name] = attrs(
                    list,
                    ["time", "status", "result", "classname", "name"],
                    lenient,
                )?;
                let d = self.duration(time, false);
                let skipped = matches!(st.as_deref(), Some("notrun" | "disabled"))
                    || matches!(result.as_deref(), Some("skipped" | "suppressed"));
                let status = if skipped {
                    Status::Skipped
                } else {
                    Status::Passed
                };
                // A test case holding results of its own (a nested suite):
                // kept before them, as their parent; one that failed itself
                // stays a failed test (it was lost when its first child
                // replaced it), its time left out as it includes theirs.
                if let Some(outer) = self.pending.as_mut() {
                    outer.has_children = !outer.status.is_failure();
                    if !outer.has_children {
                        outer.duration_s = None;
                    }
                    self.finish_case(report);
                }
                self.start_case(
                    class.as_deref().unwrap_or_default(),
                    name.map(Cow::into_owned).unwrap_or_default(),
                    d,
                    status,
                );
                // GoogleTest writes a failure for a disabled test it did not run.
                self.decided.by_attributes = skipped;
                if empty {
                    self.finish_case(report);
                }
            }
            (Dialect::JUnit, "failure" | "error")
                if self.pending.is_none() && !self.suites.is_empty() =>
            {
                // A suite's own failure, outside any test case: Surefire's
                // when a test class fails to load. Jenkins counts it as a
                // failed test; it is one, named for the suite.
                let suite = self.suites.last().cloned().unwrap_or_default();
                let status = if tag == "error" {
                    Status::Errored
                } else {
                    Status::Failed
                };
                self.start_case("", suite, None, status);
                self.finish_case(report);
            }
            (Dialect::JUnit, "failure") => self.set_status(Status::Failed),
            (Dialect::JUnit, "error") => {
                if self.pytest
                    && attr(list, "message", lenient)?
                        .is_some_and(|m| m.starts_with("failed on teardown with"))
                {
                    self.decided.teardown_error = true;
                }
                self.set_status(Status::Errored)
            }
            (Dialect::JUnit, "rerunFailure") => {
                report.reruns_marked = true;
                self.set_status(Status::Failed)
            }
            (Dialect::JUnit, "rerunError") => {
                report.reruns_marked = true;
                self.set_status(Status::Errored)
            }
            (Dialect::JUnit, "skipped") => self.set_status(Status::Skipped),
            (Dialect::JUnit, "flakyFailure" | "flakyError") => {
                report.reruns_marked = true;
                self.set_status(Status::Flaky)
            }
            (Dialect::Allure1, _) => self.allure1_element(tag, list, empty, report)?,
            (Dialect::NUnit3 | Dialect::NUnit2, "test-suite") => {
                let [name, duration, time] = attrs(list, ["name", "duration", "time"], lenient)?;
                self.open_suite(
                    report,
                    name.map(Cow::into_owned).unwrap_or_default(),
                    duration.or(time).map(Cow::into_owned),
                    empty,
                );
            }
            (Dialect::NUnit3 | Dialect::NUnit2, "test-case") => {
                let [
                    duration,
                    time,
                    result,
                    label,
                    executed,
                    success,
                    name,
                    class,
                ] = attrs(
                    list,
                    [
                        "duration",
                        "time",
                        "result",
                        "label",
                        "executed",
                        "success",
                        "name",
                        "classname",
                    ],
                    lenient,
                )?;
                let d = self.duration(duration.or(time), false);
                let truth =
                    |v: &Option<Cow<str>>| v.as_deref().map(|v| v.eq_ignore_ascii_case("true"));
                let (executed, success) = (truth(&executed), truth(&success));
                let status = match (result.as_deref(), label.as_deref()) {
                    (_, Some("Error")) | (Some("Error"), _) => Some(Status::Errored),
                    (Some(r), _) if r.starts_with("Fail") || r == "Cancelled" => {
                        Some(Status::Failed)
                    }
                    (Some("Passed" | "Success"), _) => Some(Status::Passed),
                    (
                        Some("Skipped" | "Ignored" | "NotRunnable" | "Inconclusive" | "Warning"),
                        _,
                    ) => Some(Status::Skipped),
                    (Some(_), _) if executed == Some(false) => Some(Status::Skipped),
                    (Some(_), _) if success == Some(false) => Some(Status::Failed),
                    (Some(_), _) => Some(Status::Passed),
                    (None, _) => None,
                };
                self.start_case(
                    class.as_deref().unwrap_or_default(),
                    name.map(Cow::into_owned).unwrap_or_default(),
                    d,
                    status.unwrap_or(Status::Passed),
                );
                match status {
                    Some(_) => self.decided.by_attributes = true,
                    None => {
                        // NUnit 2.2-2.4: executed/success and the children decide.
                        self.decided.nunit2_executed = Some(executed.unwrap_or(true));
                        self.decided.nunit2_success = success;
                    }
                }
                if empty {
                    self.finish_case(report);
                }
            }
            (Dialect::NUnit3 | Dialect::NUnit2, "failure") => self.set_status(Status::Failed),
            (Dialect::Trx, "UnitTestResult") => {
                let [duration, outcome, test_name, test_id] =
                    attrs(list, ["duration", "outcome", "testName", "testId"], lenient)?;
                // TRX omits durations of zero.
                let d = self.duration(duration.or(Some(Cow::Borrowed("00:00:00"))), true);
                let status = match outcome.as_deref() {
                    Some("Passed" | "Completed" | "PassedButRunAborted" | "Warning") => {
                        Status::Passed
                    }
                    Some("Error") => Status::Errored,
                    Some("Aborted" | "Disconnected") => Status::Aborted,
                    Some("Failed" | "Timeout") => Status::Failed,
                    _ => Status::Skipped,
                };
                if let Some(parent) = self.pending.take() {
                    // The enclosing result has inner results: keep it as a
                    // parent, its class fixed at the end as its children's
                    // are (it lost it before: two parents of one name then
                    // read as one test repeated).
                    let mut parent = parent;
                    parent.has_children = true;
                    if let Some(Some(id)) = self.trx_ids.last() {
                        self.trx_cases.push((report.cases.len(), id.clone()));
                    }
                    report.push_case(parent);
                }
                let known = (self.trx_known.as_ref())
                    .zip(test_id.as_deref())
                    .and_then(|(k, id)| k.class_of(id));
                self.start_case(
                    known.as_deref().unwrap_or(""),
                    test_name.map(Cow::into_owned).unwrap_or_default(),
                    d,
                    status,
                );
                // Classes known already need no fixing at the end.
                let id = test_id
                    .filter(|_| self.trx_known.is_none())
                    .map(Cow::into_owned);
                if empty {
                    if let Some(id) = id {
                        self.trx_cases.push((report.cases.len(), id));
                    }
                    self.finish_case(report);
                } else {
                    self.trx_depth += 1;
                    self.trx_ids.push(id);
                }
            }
            // Classes read ahead need not be read again.
            (Dialect::Trx, "UnitTest" | "TestMethod") if self.trx_known.is_some() => {}
            (Dialect::Trx, "UnitTest") => self.trx_current_def = attr(list, "id", lenient)?,
            (Dialect::Trx, "TestMethod") => {
                if let (Some(id), Some(class)) = (
                    self.trx_current_def.clone(),
                    attr(list, "className", lenient)?,
                ) {
                    self.trx_class.insert(id, class);
                }
            }
            (Dialect::Trx, "Counters") => {
                self.failing = count(list, &["failed", "error", "timeout", "aborted"], lenient)?;
            }
            (Dialect::XUnit, "assembly" | "collection") => {
                if tag == "assembly" {
                    match count(list, &["failed"], lenient)? {
                        Some(n) => *self.failing.get_or_insert(0) += n,
                        None => self.failing_unknown = true,
                    }
                }
                let [name, time] = attrs(list, ["name", "time"], lenient)?;
                self.open_suite(
                    report,
                    name.map(Cow::into_owned).unwrap_or_default(),
                    time.map(Cow::into_owned),
                    empty,
                );
            }
            (Dialect::XUnit, "test") => {
                let [time, result, class, name] =
                    attrs(list, ["time", "result", "type", "name"], lenient)?;
                let d = self.duration(time, false);
                let status = match result.as_deref() {
                    Some("Fail") => Status::Failed,
                    Some("Skip" | "NotRun") => Status::Skipped,
                    _ => Status::Passed,
                };
                self.start_case(
                    class.as_deref().unwrap_or_default(),
                    name.map(Cow::into_owned).unwrap_or_default(),
                    d,
                    status,
                );
                if empty {
                    self.finish_case(report);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn end(&mut self, tag: &[u8], report: &mut Report) {
        match (self.dialect, tag) {
            (Some(Dialect::JUnit), b"testsuite")
            | (Some(Dialect::NUnit3 | Dialect::NUnit2), b"test-suite")
            | (Some(Dialect::XUnit), b"assembly" | b"collection") => self.close_suite(),
            (Some(Dialect::JUnit), b"testcase")
            | (Some(Dialect::NUnit3 | Dialect::NUnit2), b"test-case")
            | (Some(Dialect::XUnit), b"test") => self.finish_case(report),
            (Some(Dialect::Trx), b"UnitTestResult") => {
                self.trx_depth = self.trx_depth.saturating_sub(1);
                if let Some(Some(id)) = self.trx_ids.pop()
                    && self.pending.is_some()
                {
                    self.trx_cases.push((report.cases.len(), id));
                }
                self.finish_case(report);
            }
            (Some(Dialect::Trx), b"UnitTest") => self.trx_current_def = None,
            (Some(Dialect::Allure1), _) => {
                self.allure1_open.pop();
                self.allure1_want = None;
                match tag {
                    b"test-case" => self.finish_case(report),
                    b"test-suite" => {
                        self.allure1_open_suite(report, String::new());
                        self.close_suite();
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// An Allure 1 element: suites and test cases (their status and times
    /// in attributes, their names in a `<name>` child), a failure's text
    /// and steps (not tests) ignored.
    fn allure1_element(
        &mut self,
        tag: &str,
        list: &[Attr],
        empty: bool,
        report: &mut Report,
    ) -> Result<(), String> {
        let parent = self.allure1_open.last().map(|p| &**p);
        match (tag, parent) {
            ("test-suite", _) => {
                // A suite inside a suite's case list opens once named.
                self.allure1_open_suite(report, String::new());
                self.allure1_suite = true;
            }
            ("test-case", _) => {
                self.allure1_open_suite(report, String::new());
                let [status, start, stop] = attrs(list, ["status", "start", "stop"], self.lenient)?;
                let ms =
                    |v: &Option<Cow<str>>| v.as_deref().and_then(|v| v.trim().parse::<f64>().ok());
                let duration_s = match (ms(&start), ms(&stop)) {
                    (Some(a), Some(b)) if b >= a && b.is_finite() => Some((b - a) / 1e3),
                    _ => None,
                };
                let status = match status.as_deref() {
                    Some("passed") => Status::Passed,
                    Some("failed") => Status::Failed,
                    Some("canceled" | "pending" | "skipped") => Status::Skipped,
                    // broken: an error outside an assertion.
                    _ => Status::Errored,
                };
                self.start_case("", String::new(), duration_s, status);
                if empty {
                    self.finish_case(report);
                }
            }
            ("name", Some("test-case")) if self.pending.is_some() => {
                self.allure1_want = Some(Allure1Name::Case);
            }
            ("name", Some("test-suite")) if self.allure1_suite => {
                self.allure1_want = Some(Allure1Name::Suite);
            }
            _ => {}
        }
        if !empty {
            self.allure1_open.push(tag.into());
        }
        Ok(())
    }

    /// Open the Allure 1 suite seen, under `name`, if it is still waiting.
    fn allure1_open_suite(&mut self, report: &mut Report, name: String) {
        if std::mem::take(&mut self.allure1_suite) {
            self.open_suite(report, name, None, false);
        }
    }

    /// Text inside an element: an Allure 1 suite's or test case's name.
    fn text(&mut self, text: &str, report: &mut Report) {
        match self.allure1_want.take() {
            Some(Allure1Name::Suite) => self.allure1_open_suite(report, text.trim().to_string()),
            Some(Allure1Name::Case) => {
                if let Some(c) = self.pending.as_mut()
                    && c.id.name.is_empty()
                {
                    let suite = self.suite_path.clone();
                    c.id = TestId::new(suite, c.id.class.clone(), text.trim().to_string());
                }
            }
            None => {}
        }
    }
}

/// Parse one XML report from `input`, appending to `report`.
pub fn read(input: impl BufRead, name: &str, report: &mut Report) -> Result<(), IngestError> {
    read_with(input, name, report, None, None)
}

/// TRX's classes (`UnitTest id` to `TestMethod className`), which follow
/// the results they name: read ahead in a first pass so that the results
/// can be handed on as they are read. Each id is kept as a 128-bit hash and
/// each class once: about 20 bytes a test.
#[derive(Default)]
pub struct TrxClasses {
    /// Each id's hash (bytes, so that an entry packs into 20 bytes) to its
    /// class's place in `classes`.
    by_id: HashMap<[u8; 16], u32, FxBuild>,
    classes: Vec<Arc<str>>,
    class_at: HashMap<Box<str>, u32, FxBuild>,
}

impl TrxClasses {
    fn key(id: &str) -> [u8; 16] {
        use std::hash::{BuildHasher, Hasher};
        let half = |seed: u64| {
            let mut h = foldhash::fast::FixedState::with_seed(seed).build_hasher();
            h.write(id.as_bytes());
            h.finish().to_le_bytes()
        };
        let (a, b) = (half(0x9e37_79b9_7f4a_7c15), half(0x2545_f491_4f6c_dd1d));
        let mut k = [0u8; 16];
        k[..8].copy_from_slice(&a);
        k[8..].copy_from_slice(&b);
        k
    }

    fn class_of(&self, id: &str) -> Option<Arc<str>> {
        let at = *self.by_id.get(&Self::key(id))?;
        self.classes.get(at as usize).cloned()
    }

    fn add(&mut self, id: &str, class: &str) {
        let at = match self.class_at.get(class) {
            Some(&at) => at,
            None => {
                let at = self.classes.len() as u32;
                self.classes.push(Arc::from(class));
                self.class_at.insert(Box::from(class), at);
                at
            }
        };
        self.by_id.insert(Self::key(id), at);
    }
}

/// The first pass over a TRX file: its tests' classes. A file that is not
/// well-formed, or names more tests than one input may hold, gives what was
/// read before (the second pass reports what is wrong with it).
pub(super) fn trx_classes(input: impl BufRead) -> TrxClasses {
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let mut reader = Reader::from_reader(input);
    reader.config_mut().trim_text(true);
    let mut known = TrxClasses::default();
    let mut current: Option<String> = None;
    let mut buf = Vec::with_capacity(4096);
    for events in 1u64.. {
        if crate::ingest::limits::check(events, known.by_id.len()).is_some() {
            break;
        }
        let event = reader.read_event_into(&mut buf);
        budget.reset();
        match event {
            Ok(Event::Start(ref e) | Event::Empty(ref e)) => {
                let tag = e.local_name();
                if !matches!(tag.as_ref(), b"UnitTest" | b"TestMethod") {
                    buf.clear();
                    continue;
                }
                // Read as the second pass reads them.
                let Ok(list) = checked(e) else { break };
                let value = |key: &str| attr(&list, key, true).ok().flatten();
                match tag.as_ref() {
                    b"UnitTest" => current = value("id"),
                    b"TestMethod" => {
                        if let (Some(id), Some(class)) = (&current, value("className")) {
                            known.add(id, &class);
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::End(ref e)) if e.local_name().as_ref() == b"UnitTest" => current = None,
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
        buf.clear();
    }
    known
}

/// [`read`], handing settled cases to `sink` as the file is read when its
/// dialect allows (TRX only with its classes read ahead, `trx_known`, as
/// they come after its results; pytest's with its reruns marked, so that a
/// repeated node id, a rerun, sends the run to a whole read).
pub(super) fn read_with(
    input: impl BufRead,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn super::CaseSink + '_)>,
    trx_known: Option<TrxClasses>,
) -> Result<(), IngestError> {
    let (input, budget) = Bounded::new(input, TOKEN_LIMIT);
    let source = Streamed {
        reader: configured(Reader::from_reader(input)),
        buf: Vec::with_capacity(4096),
        budget,
    };
    parse(source, name, report, sink, trx_known)
}

/// [`read`] of a document already in memory (a server's upload): its events
/// borrow from it, with no copy through a reader's buffer and no line
/// counting as it goes (an error's line is counted from the text).
pub(super) fn read_slice(input: &[u8], name: &str, report: &mut Report) -> Result<(), IngestError> {
    let source = Whole {
        reader: configured(Reader::from_reader(input)),
        all: input,
    };
    parse(source, name, report, None, None)
}

fn configured<R>(mut reader: Reader<R>) -> Reader<R> {
    reader.config_mut().trim_text(true);
    reader.config_mut().check_end_names = true;
    reader
}

/// Where a parse's events come from: a stream through a bounded buffer, or
/// a document in memory.
trait Source<'d> {
    /// The next event (once the previous one is done with) and the byte
    /// offset after it; or the error, with the offset read to and the
    /// offset of the error.
    fn next(&mut self) -> Result<(Event<'_>, u64), (quick_xml::Error, u64, u64)>;
    /// What places a byte offset by line and column.
    fn locator(&self) -> Locator<'d>;
}

/// Places a byte offset of the document by line and column.
enum Locator<'a> {
    /// From the newlines a stream counted as it went by.
    Counted(super::bounded::Budget),
    /// From the document's text.
    Text(&'a [u8]),
}

impl Locator<'_> {
    /// The 1-based line and column (in bytes) of `offset`, when it can be told.
    fn locate(&self, offset: u64) -> Option<(u64, u64)> {
        match self {
            Locator::Counted(budget) => budget.locate(offset),
            Locator::Text(all) => {
                let before = all.get(..usize::try_from(offset).ok()?)?;
                let line_start = memchr::memrchr(b'\n', before).map_or(0, |n| n + 1);
                let lines = memchr::memchr_iter(b'\n', before).count() as u64;
                Some((lines + 1, (before.len() - line_start) as u64 + 1))
            }
        }
    }
}

struct Streamed<R> {
    reader: Reader<Bounded<R>>,
    buf: Vec<u8>,
    budget: super::bounded::Budget,
}

impl<R: BufRead> Source<'static> for Streamed<R> {
    fn next(&mut self) -> Result<(Event<'_>, u64), (quick_xml::Error, u64, u64)> {
        self.buf.clear();
        self.budget.reset();
        match self.reader.read_event_into(&mut self.buf) {
            Ok(e) => Ok((e, self.reader.buffer_position())),
            Err(e) => Err((
                e,
                self.reader.buffer_position(),
                self.reader.error_position(),
            )),
        }
    }
    fn locator(&self) -> Locator<'static> {
        Locator::Counted(self.budget.clone())
    }
}

struct Whole<'a> {
    reader: Reader<&'a [u8]>,
    all: &'a [u8],
}

impl<'a> Source<'a> for Whole<'a> {
    fn next(&mut self) -> Result<(Event<'_>, u64), (quick_xml::Error, u64, u64)> {
        match self.reader.read_event() {
            Ok(e) => Ok((e, self.reader.buffer_position())),
            Err(e) => Err((
                e,
                self.reader.buffer_position(),
                self.reader.error_position(),
            )),
        }
    }
    fn locator(&self) -> Locator<'a> {
        Locator::Text(self.all)
    }
}

fn parse<'d>(
    mut source: impl Source<'d>,
    name: &str,
    report: &mut Report,
    mut sink: Option<&mut (dyn super::CaseSink + '_)>,
    trx_known: Option<TrxClasses>,
) -> Result<(), IngestError> {
    let mut p = Parser {
        name,
        dialect: None,
        suites: Vec::new(),
        suite_path: Arc::from(""),
        classes: HashMap::default(),
        outer: None,
        pending: None,
        decided: Decided::default(),
        allure1_open: Vec::new(),
        allure1_want: None,
        allure1_suite: false,
        trx_depth: 0,
        trx_ids: Vec::new(),
        trx_class: HashMap::new(),
        trx_current_def: None,
        trx_cases: Vec::new(),
        trx_known,
        bad_durations: 0,
        first_bad: None,
        class_per_file: false,
        root_time: None,
        lenient: false,
        pytest: false,
        pytest_late: false,
        first_case: report.cases.len(),
        stated: None,
        stated_by_root: false,
        stated_unknown: false,
        failing: None,
        failing_by_root: false,
        failing_unknown: false,
        spilled: 0,
        spilled_failing: 0,
    };
    // "line L, column C" of a byte offset, or the offset when it is too far back.
    let locator = source.locator();
    let place = |offset: u64| match locator.locate(offset) {
        Some((l, c)) => format!("line {l}, column {c}"),
        None => format!("byte {offset}"),
    };
    let first_suite = report.suites.len();
    let mut depth = 0usize;
    let mut roots = 0usize;
    let mut events = 0u64;
    // The byte offset read to.
    let mut end = 0u64;
    loop {
        events += 1;
        if let Some(why) = crate::ingest::limits::check(events, report.cases.len() + report.spilled)
        {
            return Err(IngestError::at(
                name,
                None,
                format!("{why} (stopped at byte {end})"),
            ));
        }
        let event;
        (event, end) = source.next().map_err(|(e, at, error_at)| {
            let why = match e {
                quick_xml::Error::Io(io) => format!("cannot read on from byte {at}: {io}"),
                e => format!("malformed XML at {}: {e}", place(error_at)),
            };
            IngestError::at(name, None, why)
        })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(event, Event::Empty(_));
                // Where the element starts: `<`, its content, `/>` or `>`.
                let start = end.saturating_sub(e.len() as u64 + if empty { 3 } else { 2 });
                if depth == 0 {
                    roots += 1;
                    if roots > 1 {
                        return Err(IngestError::at(
                            name,
                            None,
                            format!(
                                "malformed XML at {}: a second root element <{}> after the first one closed",
                                place(start),
                                String::from_utf8_lossy(e.name().as_ref())
                            ),
                        ));
                    }
                }
                let list = checked(e).map_err(|(at, why)| {
                    IngestError::at(
                        name,
                        None,
                        format!("malformed XML at {}: {why}", place(start + 1 + at as u64)),
                    )
                })?;
                if !empty {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(IngestError::at(
                            name,
                            None,
                            format!(
                                "nests elements more than {MAX_DEPTH} deep (at {}); no test report does, and tardy reads no deeper",
                                place(start)
                            ),
                        ));
                    }
                }
                p.element(e, &list, empty, report).map_err(|m| {
                    if m.starts_with("is not") {
                        IngestError::at(name, None, m)
                    } else {
                        IngestError::at(
                            name,
                            None,
                            format!("malformed XML at {}: {m}", place(start)),
                        )
                    }
                })?;
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                p.end(e.local_name().as_ref(), report);
            }
            Event::DocType(_) => p.lenient = true,
            Event::Text(ref t) if depth > 0 && p.allure1_want.is_some() => {
                let text = t
                    .decode()
                    .ok()
                    .and_then(|d| quick_xml::escape::unescape(&d).ok().map(|u| u.into_owned()))
                    .unwrap_or_default();
                p.text(&text, report);
            }
            Event::CData(ref t) if p.allure1_want.is_some() => {
                p.text(&String::from_utf8_lossy(t), report);
            }
            Event::Text(ref t) if depth == 0 && !t.iter().all(u8::is_ascii_whitespace) => {
                let start = end.saturating_sub(t.len() as u64);
                return Err(IngestError::at(
                    name,
                    None,
                    format!(
                        "malformed XML at {}: text outside the root element",
                        place(start)
                    ),
                ));
            }
            Event::Eof => break,
            _ => {}
        }
        if let Some(s) = sink.as_deref_mut()
            && report.cases.len() >= super::SPILL_CHUNK
            && p.may_spill(report)
        {
            // This file's cases among those handed on, and its failures.
            let n = report.cases.len() - 1;
            let first = p.first_case.min(n);
            p.spilled += n - first;
            p.spilled_failing += report.cases[first..n]
                .iter()
                .filter(|c| c.status.is_failure())
                .count();
            super::spill(report, s);
            p.first_case = 0;
        }
    }
    if depth > 0 {
        return Err(IngestError::at(
            name,
            None,
            format!(
                "is truncated: it ends at {} inside {depth} open element(s)",
                place(end)
            ),
        ));
    }
    if p.dialect.is_none() {
        return Err(IngestError::at(name, None, "holds no XML elements".into()));
    }
    for (i, id) in std::mem::take(&mut p.trx_cases) {
        if let (Some(c), Some(class)) = (report.cases.get_mut(i), p.trx_class.get(&id)) {
            c.id.class = Arc::from(class.as_str());
        }
    }
    if p.pytest_late {
        report.whole_needed = true;
    } else if p.pytest && p.spilled > 0 {
        // Some of its cases were handed on: a repeated node id (a rerun,
        // pytest-rerunfailures) is found by the streaming read's sink, and
        // the run is then read whole, to merge them.
        report.whole_if_repeated = true;
    } else if p.pytest {
        // pytest node ids are unique: a repeated one is a rerun (pytest-rerunfailures).
        let mut seen = std::collections::HashSet::new();
        if !report.cases[p.first_case..]
            .iter()
            .all(|c| seen.insert(&c.id))
        {
            report.reruns_marked = true;
        }
    }
    let listed = report.cases.len() - p.first_case + p.spilled;
    if p.dialect == Some(Dialect::JUnit)
        && let Some(stated) = p.stated
        && stated != listed
        && !p.stated_unknown
    {
        report.warnings.push(format!(
            "{name} says it holds {stated} tests but lists {listed} results (its producer counts reruns, or leaves out tests it counts, such as pending ones)"
        ));
    }
    if let Some(stated) = p.failing
        && !p.failing_unknown
    {
        super::check_failing(report, name, p.first_case, stated, p.spilled_failing);
    }
    if p.bad_durations > 0 {
        report.warnings.push(format!(
            "{}: {} durations were unusable and left out (first: {})",
            p.name,
            p.bad_durations,
            p.first_bad.unwrap_or_default()
        ));
    }
    if let Some(t) = p.root_time {
        // The root's time covers the whole file, setup between suites included.
        let tests = report.suites.drain(first_suite..).map(|s| s.tests).sum();
        report.suites.push(Suite {
            name: name.to_string(),
            time_s: Some(t),
            tests,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Checked = Result<Vec<(Vec<u8>, Vec<u8>, u8)>, (usize, String)>;

    fn owned(r: Result<Attributes, (usize, String)>) -> Checked {
        r.map(|list| {
            list.iter()
                .map(|a| (a.key.as_ref().to_vec(), a.value.to_vec(), a.class))
                .collect()
        })
    }

    /// Attribute text near the plain case and past it: quotes of both
    /// kinds, missing and doubled, `=` apart by whitespace, repeated and
    /// empty names, `<`, `&`, control and non-ASCII bytes.
    fn attribute_text() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            4 => Just(&b" "[..]),
            1 => Just(&b"\t"[..]),
            1 => Just(&b"\n"[..]),
            4 => Just(&b"a"[..]),
            2 => Just(&b"bc"[..]),
            1 => Just(&b"x:y"[..]),
            4 => Just(&b"="[..]),
            4 => Just(&b"\""[..]),
            2 => Just(&b"'"[..]),
            1 => Just(&b"<"[..]),
            1 => Just(&b">"[..]),
            1 => Just(&b"&amp;"[..]),
            1 => Just(&b"\r"[..]),
            1 => Just("\u{e9}".as_bytes()),
            1 => Just(&b"\x01"[..]),
            4 => Just(&b"name=\"t1\""[..]),
            2 => Just(&b"time='0.5'"[..]),
            2 => Just(&b"classname=\"com.example.Some_Long_Class_Name\""[..]),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|p| p.concat())
    }

    proptest! {
        /// The plain case's own split checks attributes exactly as
        /// quick-xml's reading does: the same attributes and classes, or
        /// the same error at the same place.
        #[test]
        fn plain_split_agrees_with_quick_xml(text in attribute_text()) {
            let mut content = b"testcase ".to_vec();
            content.extend_from_slice(&text);
            let e = BytesStart::from_content(String::from_utf8_lossy(&content).into_owned(), 8);
            prop_assert_eq!(owned(checked(&e)), owned(checked_by_quick_xml(&e)));
        }

        /// A value's end and class, eight bytes at a time, are those found
        /// byte by byte.
        #[test]
        fn value_end_is_the_bytewise_scan(
            rest in proptest::collection::vec(
                prop_oneof![
                    16 => 0x20u8..0x7f,
                    1 => Just(b'\t'),
                    1 => Just(b'\n'),
                    1 => Just(b'\r'),
                    1 => Just(b'<'),
                    1 => Just(b'&'),
                    2 => any::<u8>(),
                ],
                0..40,
            ),
            double in any::<bool>(),
        ) {
            let quote = if double { b'"' } else { b'\'' };
            let bytewise = rest.iter().position(|&b| b == quote).map(|n| {
                (n, rest[..n].iter().fold(0, |c, &b| c | CLASS[b as usize]))
            });
            prop_assert_eq!(value_end(&rest, quote), bytewise);
        }
    }

    #[test]
    fn plain_attributes_take_the_plain_split() {
        let e = BytesStart::from_content(
            "testcase classname=\"a.B\" name='t\u{e9}'\ttime=\"1&amp;\"x=\"<\"",
            8,
        );
        let mut c = Checker::new(&e);
        // The raw `<` of the last value is the plain split's own error.
        let done = split_plain(e.attributes_raw(), &mut c);
        assert!(done.is_some_and(|d| d.is_err()), "left to quick-xml");
        assert_eq!(c.out.len(), 3);
        assert_eq!(c.out[1].class, NON_ASCII);
        assert_eq!(c.out[2].class, SPECIAL);
    }
}
