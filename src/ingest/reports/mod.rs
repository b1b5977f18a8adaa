//! Test reports: per-test records (suite, class, name, duration, status)
//! from JUnit XML in its dialects, NUnit 3 and 2, TRX, xUnit.net v2,
//! `go test -json`, mocha's and jest's JSON, RSpec's JSON and Dart's JSON
//! reporter, read from files, `.gz` files and directories.
//!
//! XML is streamed (quick-xml); entity declarations are never expanded, so
//! an entity bomb cannot grow in memory. Implausible durations are kept out
//! of the numbers with a warning, not a failure.
//!
//! Every result in a file is a result: two `<testcase>` elements with the
//! same identity are two tests (told apart by [`TestId::nth`], their order
//! among the results of that identity), as the producing tool counts them.
//! Only where the report marks reruns (Surefire's and nextest's
//! `flakyFailure`/`rerunFailure`, pytest-rerunfailures' `rerun` elements)
//! are the attempts of one test merged into one flaky or failed test.

pub mod allure;
pub mod bounded;
pub mod counted;
pub mod cucumber;
pub mod dart;
pub mod duration;
pub mod gojson;
pub mod jest;
pub mod jsondoc;
pub mod jsonparts;
pub mod listed;
pub mod mocha;
pub mod playwright;
pub mod tap;
pub mod xml;

use std::collections::{HashMap, HashSet};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::error::IngestError;

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Passed,
    /// Failed at first, passed on a retry.
    Flaky,
    Failed,
    Errored,
    /// The run was aborted while this test ran (TRX `Aborted`): counted with the failures.
    Aborted,
    Skipped,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Flaky => "flaky",
            Status::Failed => "failed",
            Status::Errored => "errored",
            Status::Aborted => "aborted",
            Status::Skipped => "skipped",
        }
    }

    /// Failed, errored or aborted.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Failed | Status::Errored | Status::Aborted)
    }
}

/// The empty suite or class the tests of formats without one share (one
/// allocation, not one a test).
pub(crate) static EMPTY: std::sync::LazyLock<Arc<str>> = std::sync::LazyLock::new(|| Arc::from(""));

/// One test's identity: suite path, class and name. Suite and class are
/// shared between the many tests that have them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TestId {
    pub suite: Arc<str>,
    pub class: Arc<str>,
    pub name: String,
    /// Which result of this suite/class/name it is in its run, in file order (0 for the
    /// first): distinct tests with one title (jest `test.each` titles, TestNG data
    /// providers, nameless cases) stay distinct and are matched across runs by order.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub nth: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The hasher of the many short test identities: foldhash with a fixed
/// seed (deterministic, fast on short keys, and well mixed: a word-at-a-time
/// multiply without a finisher, as FxHash is, collided on names as plain as
/// "item 119" and "item 192", which sent streaming reads back to whole
/// ones). The keys come from files, not from an adversary who could force
/// collisions at scale, and every use checks equality behind the hash.
pub type FxBuild = foldhash::fast::FixedState;

/// A hasher of [`FxBuild`].
pub fn hasher() -> foldhash::fast::FoldHasher {
    use std::hash::BuildHasher;
    FxBuild::default().build_hasher()
}

fn fx(bytes: &[u8]) -> u64 {
    let mut h = hasher();
    h.write(bytes);
    h.write_usize(bytes.len());
    h.finish()
}

impl TestId {
    pub fn new(suite: Arc<str>, class: Arc<str>, name: String) -> TestId {
        TestId {
            suite,
            class,
            name,
            nth: 0,
        }
    }

    /// "suite :: class :: name", leaving out empty or repeated parts, and " #N" for the
    /// N-th result of a repeated identity.
    pub fn display(&self) -> String {
        // One allocation (this is called once per test of every upload).
        let parts = [&*self.suite, &*self.class, self.name.as_str()];
        let mut s = String::with_capacity(parts.iter().map(|p| p.len() + 4).sum::<usize>() + 8);
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || parts[..i].contains(p) {
                continue;
            }
            if !s.is_empty() {
                s.push_str(" :: ");
            }
            s.push_str(p);
        }
        if s.is_empty() {
            s.push_str("(unnamed)");
        }
        if self.nth > 0 {
            use std::fmt::Write as _;
            let _ = write!(s, " #{}", self.nth + 1);
        }
        s
    }
}

/// One test's result in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    pub id: TestId,
    /// Seconds; `None` when missing or implausible (see the warnings).
    pub duration_s: Option<f64>,
    pub status: Status,
    /// Reruns the report marks for this test (flakyFailure/rerunFailure, rerun elements,
    /// or attempts of a marked rerun merged into it).
    pub retries: u32,
    /// Go: a parent test whose time includes its subtests (not summed).
    pub has_children: bool,
}

/// A suite's own totals as the report states them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    pub name: String,
    /// The suite's wall time (setup and parallelism included), when stated.
    pub time_s: Option<f64>,
    pub tests: usize,
}

/// Everything read for one run: possibly many files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub sources: Vec<String>,
    pub cases: Vec<TestCase>,
    pub suites: Vec<Suite>,
    pub warnings: Vec<String>,
    /// The report marks reruns (its producer ran failing tests again and said so), so
    /// repeated identities are attempts of one test, not distinct tests.
    #[serde(default)]
    pub reruns_marked: bool,
    /// Allure results read, to merge the attempts of one test once the run
    /// is read ([`allure::merge_attempts`]).
    #[serde(skip)]
    pub attempts: Vec<allure::Attempt>,
    /// Cases of this run already handed to a [`CaseSink`] (a streaming read:
    /// [`read_run_streaming`]); 0 when every case is in `cases`.
    #[serde(skip)]
    pub spilled: usize,
    /// A file turned out, after some of its cases were handed on, to need
    /// them all (a pytest suite named late): read the run whole.
    #[serde(skip)]
    pub whole_needed: bool,
    /// A file whose repeated identities would be reruns (pytest's) was
    /// handed on: if the streaming read finds a repeat, read the run whole.
    #[serde(skip)]
    pub whole_if_repeated: bool,
    /// Bytes of test names this report's cases hold, counted on the reading
    /// thread against the names cap ([`limits::hold_read_text`]) while the
    /// report lives: a run read whole (reruns to merge, an Allure folder)
    /// is bounded by the names it holds, as a diff is.
    ///
    /// [`limits::hold_read_text`]: crate::ingest::limits::hold_read_text
    #[serde(skip)]
    pub held: HeldText,
}

/// Bytes of names a [`Report`] counted against its reading thread's names
/// cap, given back when the report drops. A clone counts nothing (it was
/// not read), and two reports compare equal whatever they counted.
#[derive(Debug, Default)]
pub struct HeldText(u64);

impl Clone for HeldText {
    fn clone(&self) -> Self {
        HeldText(0)
    }
}

impl PartialEq for HeldText {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Drop for HeldText {
    fn drop(&mut self) {
        crate::ingest::limits::release_read_text(self.0);
    }
}

/// The bytes of names one case holds: its name, and its class when the
/// case is the class's first holder (readers share one class among its
/// cases; one allocated per case counts with each).
fn name_bytes(c: &TestCase) -> u64 {
    let class = if Arc::strong_count(&c.id.class) <= 2 {
        c.id.class.len()
    } else {
        0
    };
    (c.id.name.len() + class) as u64
}

/// Where a streaming read hands the cases it no longer needs to hold, in
/// file order, as read (a repeated identity not yet numbered: the sink
/// numbers repeats and marks Go parents, as [`Report::resolve_repeats`] and
/// [`Report::mark_parents`] do for a report held whole).
pub trait CaseSink {
    fn case(&mut self, c: TestCase);
    /// The run is read: how many results repeated an earlier identity.
    fn end(&mut self) -> usize;
}

/// How a streaming read of a run ended.
pub enum Streamed {
    /// The run was read whole (nothing streamed): a report as
    /// [`read_run`] gives it, its cases in it.
    Whole(Report),
    /// Every case went to the sink; the report holds the rest (sources,
    /// suites, warnings), and `spilled` counts the cases.
    Streamed(Report),
    /// The run needs a whole read after all (its reruns are marked and some
    /// result repeats, Allure attempts to merge, or a file failed part-way
    /// under --keep-going): read it again with [`read_run`].
    Again,
}

/// Cases held before a streaming read hands them on.
const SPILL_CHUNK: usize = 8192;

/// The warning of a run whose results repeat identities (see
/// [`Report::resolve_repeats`]).
fn repeats_warning(n: usize) -> String {
    format!(
        "{n} results repeat the suite, class and name of an earlier one: they are distinct tests, as the report counts them (named \"#2\", \"#3\"... and matched across runs by their order)"
    )
}

impl Report {
    /// Keep one more case, its names counted against the reading thread's
    /// names cap (the reader's next check refuses the run past it).
    pub fn push_case(&mut self, c: TestCase) {
        self.hold_text(name_bytes(&c));
        self.cases.push(c);
    }

    /// `bytes` more of text kept beside the cases (an Allure attempt's
    /// key), counted as their names are.
    pub(crate) fn hold_text(&mut self, bytes: u64) {
        self.held.0 += bytes;
        crate::ingest::limits::hold_read_text(bytes);
    }

    /// Sum of test durations, leaves only (Go parents include their subtests); 0 (not -0)
    /// when no test has a time.
    pub fn total_s(&self) -> f64 {
        self.cases
            .iter()
            .filter(|c| !c.has_children)
            .filter_map(|c| c.duration_s)
            .fold(0.0, |a, b| a + b)
    }

    /// Sum of the suites' own wall times, when every suite states one.
    pub fn suite_wall_s(&self) -> Option<f64> {
        if self.suites.is_empty() || self.suites.iter().any(|s| s.time_s.is_none()) {
            return None;
        }
        Some(self.suites.iter().filter_map(|s| s.time_s).sum())
    }

    /// Mark Go-style parents: a test named `X` when `X/...` exists beside it
    /// (go test -json, go-junit-report, gotestsum list both; the parent's
    /// time includes its subtests).
    pub fn mark_parents(&mut self) {
        if !self.cases.iter().any(|c| c.id.name.contains('/')) {
            return;
        }
        let mut parents: HashSet<(&str, &str, &str), FxBuild> = HashSet::default();
        for c in &self.cases {
            let name = c.id.name.as_str();
            for (i, _) in name.match_indices('/') {
                parents.insert((&c.id.suite, &c.id.class, &name[..i]));
            }
        }
        let flags: Vec<bool> = self
            .cases
            .iter()
            .map(|c| parents.contains(&(&*c.id.suite, &*c.id.class, c.id.name.as_str())))
            .collect();
        for (c, p) in self.cases.iter_mut().zip(flags) {
            c.has_children |= p;
        }
    }

    /// After every file of a run is read: repeats resolved, Go parents marked, and an
    /// empty run (a valid report with no test, like an empty CI shard) said so.
    fn finish(&mut self) {
        allure::merge_attempts(self);
        self.resolve_repeats();
        self.mark_parents();
        if self.cases.is_empty() {
            self.warnings.push(format!(
                "{} holds no test results (0 tests: an empty shard, or every test filtered out?)",
                self.sources.join(", ")
            ));
        }
    }

    /// Number the results that share an identity (`TestId::nth`), or, where the report
    /// marks reruns, merge the attempts of one test into one: a pass after a failure is
    /// flaky, failures only stay failed, the duration is the last attempt's (the one
    /// that decided), never a sum.
    pub fn resolve_repeats(&mut self) {
        // Which later cases repeat an earlier one: the cases' identity
        // hashes sorted (16 bytes a case, not a map of them all), then each
        // run of equal hashes split by identity, in file order.
        let mut shared: HashMap<usize, u64, FxBuild> = HashMap::default();
        let mut hash_shared = |a: &Arc<str>| {
            *shared
                .entry(Arc::as_ptr(a) as *const u8 as usize)
                .or_insert_with(|| fx(a.as_bytes()))
        };
        let mut keyed: Vec<(u64, usize)> = (self.cases.iter().enumerate())
            .map(|(i, c)| {
                let hash = hash_shared(&c.id.suite).rotate_left(21)
                    ^ hash_shared(&c.id.class).rotate_left(42)
                    ^ fx(c.id.name.as_bytes());
                (hash, i)
            })
            .collect();
        keyed.sort_unstable();
        // (index, index of the first result of its identity, its order among them)
        let mut repeats: Vec<(usize, usize, u32)> = Vec::new();
        for run in keyed.chunk_by(|a, b| a.0 == b.0).filter(|r| r.len() > 1) {
            let mut firsts: Vec<(usize, u32)> = Vec::new();
            for &(_, i) in run {
                match firsts
                    .iter_mut()
                    .find(|(f, _)| self.cases[*f].id == self.cases[i].id)
                {
                    Some((f, seen)) => {
                        repeats.push((i, *f, *seen));
                        *seen += 1;
                    }
                    None => firsts.push((i, 1)),
                }
            }
        }
        drop(keyed);
        repeats.sort_unstable_by_key(|r| r.0);
        if repeats.is_empty() {
            return;
        }
        if !self.reruns_marked {
            let n = repeats.len();
            for (i, _, nth) in repeats {
                self.cases[i].id.nth = nth;
            }
            self.warnings.push(repeats_warning(n));
            return;
        }
        // An attempt was run again because it failed: every attempt but the last is a
        // failure (pytest-rerunfailures writes them as bare <testcase/> elements).
        let mut gone = vec![false; self.cases.len()];
        for &(i, f, _) in &repeats {
            let c = self.cases[i].clone();
            let m = &mut self.cases[f];
            m.retries += 1 + c.retries;
            m.status = match c.status {
                Status::Passed | Status::Flaky => Status::Flaky,
                s => s,
            };
            if c.duration_s.is_some() {
                m.duration_s = c.duration_s;
            }
            m.has_children |= c.has_children;
            gone[i] = true;
        }
        let mut k = 0;
        self.cases.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
        self.warnings.push(format!(
            "{} results are reruns of an earlier attempt (the report marks reruns): each test counts once, flaky when its last attempt passed, with that attempt's time",
            repeats.len()
        ));
    }
}

/// A file's stated number of failing tests against the failing results it
/// lists from `first` on: a warning when they disagree, and when it states
/// more, one failed entry for those it does not list, so that a run its
/// own totals call failed never reads as passed.
/// `spilled`: the file's failing results already handed to a sink.
pub(crate) fn check_failing(
    report: &mut Report,
    name: &str,
    first: usize,
    stated: usize,
    spilled: usize,
) {
    let listed = spilled
        + report.cases[first.min(report.cases.len())..]
            .iter()
            .filter(|c| c.status.is_failure())
            .count();
    if stated == listed {
        return;
    }
    report.warnings.push(format!(
        "{name} says {stated} tests failed but lists {listed} failed results"
    ));
    // A header that counts more than the failed tests listed: a failure
    // the file does not list (a class that failed to load) makes the run
    // fail. Where the file lists a failure already, or marks reruns, the
    // header counts <failure> elements, reruns or a flaky test's failed
    // attempts (Surefire, TAP::Harness::JUnit's summary suite): the run's
    // verdict stands, and no test is made up.
    let explained = listed > 0 || report.reruns_marked;
    if stated > listed && !explained {
        report.push_case(TestCase {
            id: TestId::new(
                Arc::from(""),
                Arc::from(""),
                format!(
                    "({} failures the report counts but does not list)",
                    stated - listed
                ),
            ),
            duration_s: None,
            status: Status::Failed,
            retries: 0,
            has_children: false,
        });
    }
}

/// What a file holds, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Xml,
    GoJson,
    Tap,
    Allure,
    Dart,
    Doc(jsondoc::Kind),
}

/// The head as text, without its byte-order mark and leading space (the
/// head is read as UTF-8, wide text already decoded).
fn head_text(head: &[u8]) -> &str {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    text.trim_start_matches('\u{feff}').trim_start()
}

/// The root elements of the XML reports read.
const REPORT_ROOTS: [&str; 8] = [
    "testsuites",
    "testsuite",
    "test-run",
    "test-suite",
    "test-results",
    "TestRun",
    "assemblies",
    "assembly",
];

/// The local name of the first element of XML text, past its declaration,
/// comments and doctype; `None` when the head ends first.
fn xml_root(t: &str) -> Option<&str> {
    let mut rest = t;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("<?") {
            rest = &r[r.find("?>")? + 2..];
        } else if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->")? + 3..];
        } else if let Some(r) = rest.strip_prefix("<!") {
            // A doctype, perhaps with an internal subset.
            let end = match (r.find('['), r.find('>')) {
                (Some(b), Some(g)) if b < g => b + r[b..].find("]>")? + 1,
                (_, g) => g?,
            };
            rest = &r[end + 1..];
        } else {
            let r = rest.strip_prefix('<')?;
            let end = r.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
            let name = &r[..end];
            return Some(name.rsplit(':').next().unwrap_or(name));
        }
    }
}

/// Whether text (BOM and leading space removed) starts like a test report.
pub fn is_report_head(t: &str) -> bool {
    sniff(t.as_bytes()).is_some()
}

fn sniff(head: &[u8]) -> Option<Kind> {
    let text = match std::str::from_utf8(head) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        // Cut inside a character, or not UTF-8.
        Err(_) => String::from_utf8_lossy(head),
    };
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('<') {
        // XML whose root is a report's (an HTML page is not one, for every
        // entry point alike); a root past the head is left to the reader.
        match xml_root(t) {
            Some(root) if !REPORT_ROOTS.contains(&root) => None,
            _ => Some(Kind::Xml),
        }
    } else if t.starts_with('{') && t.contains("\"Action\"") {
        Some(Kind::GoJson)
    } else if t.starts_with('{') && allure::sniff(t) {
        Some(Kind::Allure)
    } else if t.starts_with('{') && dart::sniff(t) {
        Some(Kind::Dart)
    } else if t.starts_with('{') || t.starts_with('[') {
        jsondoc::sniff(t).map(Kind::Doc)
    } else if tap::sniff(t) {
        Some(Kind::Tap)
    } else if t.lines().any(gojson::is_event_line) {
        // `go test -json ./... 2>&1`: build errors or a CI log before the
        // events.
        Some(Kind::GoJson)
    } else {
        None
    }
}

/// Read a report file (plain or gzip), appending to `report`.
pub fn read_file(path: &Path, report: &mut Report) -> Result<(), IngestError> {
    read_file_with(path, report, None)
}

fn read_file_with(
    path: &Path,
    report: &mut Report,
    sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), IngestError> {
    let name = path.display().to_string();
    let open = || -> Result<Box<dyn std::io::BufRead>, IngestError> {
        let file = std::fs::File::open(path).map_err(|e| IngestError::io(&name, e))?;
        Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, file)))
    };
    read_reader(&open, None, &name, report, sink)
}

/// Read a report already in memory (plain or gzip), named `name` in errors.
fn read_bytes(bytes: &[u8], name: &str, report: &mut Report) -> Result<(), IngestError> {
    let open = || -> Result<Box<dyn std::io::BufRead + '_>, IngestError> { Ok(Box::new(bytes)) };
    read_reader(&open, Some(bytes), name, report, None)
}

/// Opens an input from its first byte, as often as a reader needs (a JSON
/// document whose tests are named by what its end says is read twice).
pub(crate) type Open<'a> = dyn Fn() -> Result<Box<dyn std::io::BufRead + 'a>, IngestError> + 'a;

/// An input's first bytes, as a file's 64 KiB buffer gives them: a body
/// already in memory (a server's upload) is not copied and sniffed whole.
fn head_of(buf: &[u8]) -> Vec<u8> {
    buf[..buf.len().min(1 << 16)].to_vec()
}

/// An input's text: inflated when it is gzip (capped at what the reading
/// thread allows: 1 MB of gzip can be gigabytes), as UTF-8 when it is
/// UTF-16 or UTF-32 (Windows tools); with its first bytes.
fn decoded<'a>(
    open: &Open<'a>,
    name: &str,
) -> Result<(Box<dyn std::io::BufRead + 'a>, Vec<u8>), IngestError> {
    let mut reader = open()?;
    let head = head_of(reader.fill_buf().map_err(|e| IngestError::io(name, e))?);
    if head.starts_with(&[0x1f, 0x8b]) {
        // Every member: `cat a.gz b.gz` is valid gzip.
        let gz = crate::ingest::limits::Inflated::new(flate2::read::MultiGzDecoder::new(reader));
        reader = Box::new(std::io::BufReader::with_capacity(1 << 16, gz));
    }
    let mut head = head_of(reader.fill_buf().map_err(|e| IngestError::io(name, e))?);
    if let Some((wide, mark)) = crate::ingest::wide::detect(&head) {
        reader.consume(mark);
        let decoded = crate::ingest::wide::WideReader::new(reader, wide);
        reader = Box::new(std::io::BufReader::with_capacity(1 << 16, decoded));
        head = head_of(reader.fill_buf().map_err(|e| IngestError::io(name, e))?);
    }
    Ok((reader, head))
}

/// `whole`: the input, when it is in memory (an XML document there is read
/// in place, not through a reader's buffer).
fn read_reader<'a>(
    open: &Open<'a>,
    whole: Option<&[u8]>,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), IngestError> {
    let name = name.to_string();
    let (reader, head) = decoded(open, &name)?;
    let again = || decoded(open, &name).map(|d| d.0);
    report.sources.push(name.clone());
    let kind = if head_text(&head).starts_with('{') && allure::sniff_named(&name, head_text(&head))
    {
        Some(Kind::Allure)
    } else {
        sniff(&head)
    };
    // Each file is one input for the cap on results, but an Allure folder's
    // files (one result each) are one together: its count starts with the
    // path that named the folder ([`read_files`]).
    if kind != Some(Kind::Allure) {
        crate::ingest::limits::begin_input();
    }
    match kind {
        Some(Kind::Xml) if sink.is_some() && xml_root(head_text(&head)) == Some("TestRun") => {
            // TRX: its classes first, so that its results can be handed on.
            let known = xml::trx_classes(reader);
            xml::read_with(again()?, &name, report, sink, Some(known))
        }
        Some(Kind::Xml) => match whole {
            // Plain text (not gzip, not UTF-16 or UTF-32), nothing to hand on.
            Some(text)
                if sink.is_none()
                    && !text.starts_with(&[0x1f, 0x8b])
                    && crate::ingest::wide::detect(text).is_none() =>
            {
                xml::read_slice(text, &name, report)
            }
            _ => xml::read_with(reader, &name, report, sink, None),
        },
        Some(Kind::GoJson) => gojson::read_with(reader, &name, report, sink),
        Some(Kind::Tap) => tap::read_with(reader, &name, report, sink),
        Some(Kind::Allure) => allure::read(reader, &name, report),
        Some(Kind::Dart) => dart::read_with(reader, &again, &name, report, sink),
        Some(Kind::Doc(kind)) => jsondoc::read(reader, &again, kind, &name, report, sink),
        None if xml_root(head_text(&head)).is_some_and(|r| unread_xml(r).is_some()) => {
            let root = xml_root(head_text(&head)).unwrap_or("?");
            Err(IngestError::at(&name, None, unread_xml(root).unwrap_or_default()))
        }
        None if xml_root(head_text(&head)).is_some() => {
            let root = xml_root(head_text(&head)).unwrap_or("?");
            Err(IngestError::at(
                &name,
                None,
                format!(
                    "is not a test report: the root element is <{root}>, expected {}",
                    REPORT_ROOTS.join(", ")
                ),
            ))
        }
        None if head.is_empty() => Err(IngestError::at(
            &name,
            None,
            "is empty: expected a test report".into(),
        )),
        None => Err(IngestError::at(
            &name,
            None,
            "is not a test report: expected JUnit, NUnit, TRX or xUnit XML (UTF-8, UTF-16 or UTF-32), Allure 1 XML, `go test -json`, mocha or jest JSON, RSpec JSON, CTRF JSON, Cucumber JSON, Playwright's JSON reporter, Allure 2 results, TAP, or Dart's JSON reporter output".into(),
        )),
    }
}

/// Reports tardy recognises by their root element and does not read: what
/// it is and the way out.
fn unread_xml(root: &str) -> Option<String> {
    let (what, way) = match root {
        "robot" => (
            "Robot Framework's output.xml",
            "write JUnit XML with `robot --xunit junit.xml` (or `rebot --xunit junit.xml output.xml`)",
        ),
        "testng-results" => (
            "TestNG's testng-results.xml",
            "read the JUnit XML TestNG writes beside it (`junitreports/TEST-*.xml`) or Surefire's `target/surefire-reports/TEST-*.xml`",
        ),
        "plist" => (
            "a property list (an Xcode result bundle's Info.plist?)",
            "export JUnit XML from the .xcresult bundle with `xcrun xcresulttool` or xcpretty (`xcpretty --report junit`)",
        ),
        _ => return None,
    };
    Some(format!("is {what}, which tardy does not read: {way}"))
}

/// A directory tardy recognises and does not read: what it is and the way
/// out.
fn unread_dir(path: &Path) -> Option<String> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if file_name.ends_with(".xcresult")
        || path.join("Info.plist").is_file() && path.join("Data").is_dir()
    {
        return Some("is an Xcode result bundle (.xcresult), which tardy does not read: export JUnit XML with `xcrun xcresulttool` (or `xcpretty --report junit`, or fastlane's trainer) and give tardy that file".into());
    }
    if path.join("index.html").is_file() && path.join("data").join("test-cases").is_dir() {
        return Some("is a generated Allure report (its HTML site), which tardy does not read: give tardy the results folder the tests wrote (`--alluredir`, `allure-results/`, its *-result.json files)".into());
    }
    None
}

/// Files a path stands for: the file itself, or every report-looking file
/// under a directory (recursively, sorted).
pub fn expand(path: &Path) -> Result<Vec<PathBuf>, IngestError> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(&name, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    if let Some(why) = unread_dir(path) {
        return Err(IngestError::at(&name, None, why));
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| IngestError::io(&dir.display().to_string(), e))?;
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let n = p
                    .file_name()
                    .map(|n| n.to_string_lossy().to_lowercase())
                    .unwrap_or_default();
                let n = n.strip_suffix(".gz").unwrap_or(&n);
                if [".xml", ".trx", ".json", ".jsonl", ".ndjson", ".tap"]
                    .iter()
                    .any(|ext| n.ends_with(ext))
                {
                    out.push(p);
                }
            }
        }
    }
    // An Allure results folder: its results only (not its containers,
    // attachments, executor.json...).
    let allure_dirs: std::collections::HashSet<PathBuf> = out
        .iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| allure::is_result_file(&n.to_string_lossy()))
        })
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    if !allure_dirs.is_empty() {
        out.retain(|p| {
            !p.parent().is_some_and(|d| allure_dirs.contains(d))
                || p.file_name()
                    .is_some_and(|n| allure::is_result_file(&n.to_string_lossy()))
        });
    }
    out.sort();
    if out.is_empty() {
        return Err(IngestError::at(
            &name,
            None,
            "is a directory without report files (*.xml, *.trx, *.json, *.tap, .gz)".into(),
        ));
    }
    Ok(out)
}

/// Each path read as a run of its own (`tests diff`'s runs: several
/// before, several after).
pub fn read_each(paths: &[PathBuf], keep_going: bool) -> Result<Vec<Report>, IngestError> {
    paths
        .iter()
        .map(|p| read_run(std::slice::from_ref(p), keep_going))
        .collect()
}

/// Read one run: files and directories, merged.
pub fn read_run(paths: &[PathBuf], keep_going: bool) -> Result<Report, IngestError> {
    let mut report = read_files(paths, keep_going, None)?.unwrap_or_default();
    report.finish();
    Ok(report)
}

/// Every file of `paths` into one report, its cases handed to `sink` (when
/// given) where a reader can; `None` when, under `keep_going`, a file failed
/// after some of its cases were handed on (a file counts whole or not at
/// all, so the run must be read again without a sink).
fn read_files(
    paths: &[PathBuf],
    keep_going: bool,
    mut sink: Option<&mut dyn CaseSink>,
) -> Result<Option<Report>, IngestError> {
    let mut report = Report::default();
    for p in paths {
        crate::ingest::limits::begin_input();
        for f in expand(p)? {
            let mark = (
                report.cases.len(),
                report.suites.len(),
                report.sources.len(),
            );
            let spilled = report.spilled;
            if let Err(e) = read_file_with(&f, &mut report, sink.as_deref_mut()) {
                if !keep_going {
                    return Err(e);
                }
                if report.spilled > spilled {
                    return Ok(None);
                }
                report.cases.truncate(mark.0);
                report.suites.truncate(mark.1);
                report.sources.truncate(mark.2);
                report.warnings.push(format!("skipped {e}"));
            }
        }
    }
    Ok(Some(report))
}

/// Read one run as [`read_run`] does, handing its cases to `sink` as they
/// are read when the files allow it (JUnit, NUnit and xUnit XML), so that
/// memory holds a few thousand cases, not the run.
pub fn read_run_streaming(
    paths: &[PathBuf],
    keep_going: bool,
    sink: &mut dyn CaseSink,
) -> Result<Streamed, IngestError> {
    let Some(mut report) = read_files(paths, keep_going, Some(&mut *sink))? else {
        return Ok(Streamed::Again);
    };
    if report.spilled == 0 {
        report.finish();
        return Ok(Streamed::Whole(report));
    }
    if !report.attempts.is_empty() || report.whole_needed {
        return Ok(Streamed::Again);
    }
    let rest = std::mem::take(&mut report.cases);
    report.spilled += rest.len();
    rest.into_iter().for_each(|c| sink.case(c));
    let repeats = sink.end();
    if repeats > 0 && (report.reruns_marked || report.whole_if_repeated) {
        return Ok(Streamed::Again); // attempts of one test, to merge
    }
    if repeats > 0 {
        report.warnings.push(repeats_warning(repeats));
    }
    Ok(Streamed::Streamed(report))
}

/// A reader's settled cases handed on to `sink`, when streaming, once a
/// chunk of them is held.
pub(crate) fn spill_some(report: &mut Report, sink: &mut Option<&mut (dyn CaseSink + '_)>) {
    if let Some(s) = sink.as_deref_mut()
        && report.cases.len() >= SPILL_CHUNK
    {
        spill(report, s);
    }
}

/// Hand every case of `report` but the last to `sink` (the last may still
/// change: a pytest teardown error names the case before it).
pub(crate) fn spill(report: &mut Report, sink: &mut dyn CaseSink) -> usize {
    let n = report.cases.len().saturating_sub(1);
    let mut bytes = 0;
    report.cases.drain(..n).for_each(|c| {
        bytes += name_bytes(&c);
        sink.case(c)
    });
    let bytes = bytes.min(report.held.0);
    report.held.0 -= bytes;
    crate::ingest::limits::release_read_text(bytes);
    report.spilled += n;
    n
}

/// Read one report held in memory (an upload's body) as a run.
pub fn read_run_bytes(bytes: &[u8], name: &str) -> Result<Report, IngestError> {
    let mut report = Report::default();
    read_bytes(bytes, name, &mut report)?;
    report.finish();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/reports")
            .join(name)
    }

    fn read(name: &str) -> Report {
        read_run(&[data(name)], false).unwrap()
    }

    fn case<'a>(r: &'a Report, name: &str) -> &'a TestCase {
        r.cases
            .iter()
            .find(|c| c.id.name == name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", r.cases))
    }

    #[test]
    fn pytest_both_families() {
        for f in ["pytest-xunit2.xml", "pytest-xunit1.xml"] {
            let r = read(f);
            assert_eq!(r.cases.len(), 6, "{f}");
            assert_eq!(case(&r, "test_fails").status, Status::Failed);
            assert_eq!(case(&r, "test_skipped").status, Status::Skipped);
            assert!(case(&r, "test_sleepy").duration_s.unwrap() >= 0.02);
            assert_eq!(&*case(&r, "test_param[2]").id.class, "test_sample");
            assert_eq!(r.suites.len(), 1);
            assert!(r.suite_wall_s().unwrap() > 0.0);
        }
    }

    #[test]
    fn go_json_and_go_junit_report_do_not_double_count_parents() {
        for f in ["go-test.json", "go-junit-report.xml"] {
            let r = read(f);
            let parent = case(&r, "TestParent");
            assert!(parent.has_children, "{f}");
            assert!(!case(&r, "TestParent/a").has_children);
            assert_eq!(case(&r, "TestFail").status, Status::Failed);
            assert_eq!(case(&r, "TestSkip").status, Status::Skipped);
            // Leaves only: a (20 ms) + b (30 ms) + fail (10 ms) + skip (0), at 10 ms resolution.
            assert!((r.total_s() - 0.06).abs() < 0.015, "{f}: {}", r.total_s());
        }
    }

    fn status_of(r: &Report, suite: &str, name: &str) -> Status {
        r.cases
            .iter()
            .find(|c| c.id.name == name && c.id.suite.ends_with(suite))
            .unwrap_or_else(|| panic!("no {suite} {name} in {:?}", r.cases))
            .status
    }

    #[test]
    fn a_go_run_that_failed_never_reads_as_passed() {
        // Go 1.26 (make.sh): a package that does not build, a TestMain that
        // exits 2, a panic in a goroutine while tests run, a -timeout while
        // two parallel tests run, a panic after the tests passed.
        let r = read("go-test-failures.json");
        assert_eq!(status_of(&r, "/broken", "[build failed]"), Status::Errored);
        assert_eq!(
            status_of(&r, "/mainexit", "[package failed]"),
            Status::Errored
        );
        assert_eq!(status_of(&r, "/late", "[package failed]"), Status::Errored);
        assert_eq!(status_of(&r, "/late", "TestA"), Status::Passed);
        // Tests that started and never ended failed; the package that ran
        // them is not counted again.
        for (pkg, test) in [
            ("/timeout", "TestSlowA"),
            ("/timeout", "TestSlowB"),
            ("/crash", "TestWaits"),
            ("/crash", "TestBoom"),
        ] {
            assert_eq!(status_of(&r, pkg, test), Status::Failed, "{pkg} {test}");
        }
        assert!(
            !r.cases
                .iter()
                .any(|c| c.id.suite.ends_with("/timeout") && c.id.name.starts_with('['))
        );
        assert_eq!(status_of(&r, "/timeout", "TestQuick"), Status::Passed);
        assert!(
            !r.cases
                .iter()
                .any(|c| c.id.suite.ends_with("/ok") && c.status.is_failure())
        );
        let failing = r.cases.iter().filter(|c| c.status.is_failure()).count();
        assert_eq!(failing, 7, "{:?}", r.cases);
        // The causes, from the packages' output.
        let warned = r.warnings.join("\n");
        for cause in [
            "cannot use \"no\"",
            "setup: cannot reach the database",
            "panic: test timed out after 2s",
            "panic: worker exploded",
            "panic: cleanup: could not remove the scratch database",
        ] {
            assert!(warned.contains(cause), "{cause} not in {warned}");
        }
    }

    #[test]
    fn text_around_go_events_is_output_and_old_build_failures_count() {
        // GODEBUG=gotestjsonbuildtext=1 (Go before 1.24): the compiler's
        // errors as text before the events, after a CI log's lines.
        let r = read("go-test-buildtext.json");
        assert_eq!(status_of(&r, "/broken", "[build failed]"), Status::Errored);
        assert_eq!(status_of(&r, "/ok", "TestFine"), Status::Passed);
        assert!(
            r.warnings.iter().any(|w| w.contains("cannot use \"no\"")),
            "{:?}",
            r.warnings
        );
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("not test2json events"))
        );
        // Text alone is not a report.
        let mut none = Report::default();
        let e = gojson::read("FAIL\tx [build failed]\n".as_bytes(), "t", &mut none).unwrap_err();
        assert!(e.to_string().contains("no test2json event"), "{e}");
    }

    #[test]
    fn a_go_stream_cut_off_fails_the_tests_it_was_running() {
        // Derived from go-test-failures.json: the timeout package's lines up
        // to its tests' start (a CI job killed mid-run).
        let text = std::fs::read_to_string(data("go-test-failures.json")).unwrap();
        let cut: String = text
            .lines()
            .filter(|l| l.contains("gofail/timeout"))
            .take_while(|l| !l.contains("\"Action\":\"cont\""))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut r = Report::default();
        gojson::read(cut.as_bytes(), "cut", &mut r).unwrap();
        assert_eq!(status_of(&r, "/timeout", "TestSlowA"), Status::Failed);
        assert_eq!(status_of(&r, "/timeout", "TestQuick"), Status::Passed);
        assert!(
            r.warnings.iter().any(|w| w.contains("the stream ends")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn wide_encodings_read_as_their_utf8_originals() {
        for (wide, utf8) in [
            ("nunit3-utf16.xml", "nunit3.xml"),
            ("gtest-utf32be.xml", "gtest.xml"),
        ] {
            let (a, b) = (read(wide), read(utf8));
            assert!(!b.cases.is_empty());
            assert_eq!(a.cases, b.cases, "{wide}");
            let shape = |r: &Report| -> Vec<(Option<f64>, usize)> {
                r.suites.iter().map(|s| (s.time_s, s.tests)).collect()
            };
            assert_eq!(shape(&a), shape(&b), "{wide}");
            let head = std::fs::read(data(wide)).unwrap();
            assert_eq!(
                crate::ingest::sniff::sniff(&head),
                crate::ingest::sniff::Kind::TestReport,
                "{wide}"
            );
        }
    }

    #[test]
    fn a_suite_level_error_is_one_errored_test_named_for_the_suite() {
        let r = read("junit-suite-error.xml");
        assert_eq!(r.cases.len(), 3, "{:?}", r.cases);
        let broken = case(&r, "calc.BrokenTest");
        assert_eq!(broken.status, Status::Errored);
        assert_eq!(case(&r, "adds").status, Status::Passed);
        // It is among the three tests the file states: no disagreement.
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn ctrf_from_jests_reporter() {
        // jest 30 + jest-ctrf-json-reporter (make.sh).
        let r = read("ctrf-jest.json");
        assert_eq!(r.cases.len(), 8, "{:?}", r.cases);
        assert_eq!(case(&r, "Calc fails").status, Status::Failed);
        assert_eq!(case(&r, "Calc later").status, Status::Skipped);
        assert_eq!(case(&r, "Calc someday").status, Status::Skipped);
        let flaky = case(&r, "flaky once");
        assert_eq!((flaky.status, flaky.retries), (Status::Flaky, 1));
        assert_eq!(
            &*case(&r, "Calc nested param 2").id.suite,
            "calc.test.js > Calc > nested"
        );
        assert!(case(&r, "Calc sleeps").duration_s.unwrap() >= 0.02);
        assert!(r.suite_wall_s().unwrap() > 0.0);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // A summary that counts more failures than it lists never reads as
        // passed (derived: the failed test's status edited to passed).
        let text = std::fs::read_to_string(data("ctrf-jest.json")).unwrap();
        let edited = text.replacen("\"status\": \"failed\"", "\"status\": \"passed\"", 1);
        assert_ne!(edited, text);
        let mut r = Report::default();
        read_bytes(edited.as_bytes(), "edited", &mut r).unwrap();
        assert!(
            r.cases.iter().any(|c| c.status.is_failure()),
            "{:?}",
            r.cases
        );
        assert!(
            r.warnings.iter().any(|w| w.contains("says 1 tests failed")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn tap_runs_fail_exactly_when_prove_fails_them() {
        // tap-spec/make.sh: each file's verdict from `prove -e cat FILE`
        // (Test::Harness 3.44), beside the file.
        let dir = data("tap-spec");
        let expected = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
        let mut checked = 0;
        for line in expected.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let (file, verdict, tests) = (f[0], f[1], f[2].parse::<usize>().unwrap());
            let r = read_run(&[dir.join(file)], false)
                .unwrap_or_else(|e| panic!("{file}: refused: {e}"));
            let failed = r.cases.iter().any(|c| c.status.is_failure());
            assert_eq!(
                failed,
                verdict == "FAIL",
                "{file}: {:?} {:?}",
                r.cases,
                r.warnings
            );
            let real = r
                .cases
                .iter()
                .filter(|c| !c.id.name.starts_with('('))
                .count();
            let top = r
                .cases
                .iter()
                .filter(|c| c.id.suite.is_empty() && !c.id.name.starts_with('('))
                .count();
            assert_eq!(top, tests, "{file}: tests run, as prove counts them");
            assert!(real >= top, "{file}");
            if verdict == "FAIL" && !f[3].is_empty() {
                let said = f[3].split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(
                    r.warnings.iter().any(|w| w
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .contains(&said)
                        || said.starts_with("TAP specified version")),
                    "{file}: no warning says {said:?}: {:?}",
                    r.warnings
                );
            }
            checked += 1;
        }
        assert!(checked >= 30);
        // TAP 14 (node-tap) is a version tardy reads (prove 3.44 knows 13).
        let mut r = Report::default();
        read_bytes(b"TAP version 14\n1..1\nok 1 - a\n", "v14", &mut r).unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        assert!(r.cases.iter().all(|c| c.status == Status::Passed));
    }

    #[test]
    fn tap_from_node_and_perl() {
        // node 20 --test --test-reporter=tap, Test::More (make.sh).
        for f in ["node-test.tap", "perl-test-more.tap"] {
            let r = read(f);
            assert_eq!(case(&r, "fails").status, Status::Failed, "{f}");
            assert_eq!(case(&r, "someday").status, Status::Skipped, "{f}");
            assert_eq!(case(&r, "param 2").status, Status::Passed, "{f}");
            assert_eq!(&*case(&r, "param 2").id.suite, "nested", "{f}");
            let counts = |s: Status| {
                r.cases
                    .iter()
                    .filter(|c| c.status == s && !c.has_children)
                    .count()
            };
            assert_eq!(counts(Status::Failed), 1, "{f}");
            assert_eq!(counts(Status::Skipped), 2, "{f}");
            assert!(r.warnings.is_empty(), "{f}: {:?}", r.warnings);
        }
        // node: as its own counts say (tests 8, pass 5): describe groups
        // are not tests, a nested group names its tests.
        let n = read("node-test.tap");
        assert_eq!(n.cases.len(), 8, "{:?}", n.cases);
        assert_eq!(&*case(&n, "inner").id.suite, "nested > deeper");
        assert!(case(&n, "sleeps").duration_s.unwrap() >= 0.02);
        assert!(n.suite_wall_s().is_some());
        // Test::More's subtest is a test holding its own (not summed).
        let p = read("perl-test-more.tap");
        assert!(case(&p, "nested").has_children);
        // A script that died after 2 of its 4 planned tests.
        let d = read("perl-dies.tap");
        assert!(
            d.cases.iter().any(|c| c.status == Status::Errored),
            "{:?}",
            d.cases
        );
        assert!(
            d.warnings
                .iter()
                .any(|w| w.contains("You planned 4 tests but ran 2"))
        );
        // Bail out! is a failed run too (derived).
        let mut b = Report::default();
        read_bytes(
            b"1..3\nok 1 - a\nBail out! database is down\n",
            "bail",
            &mut b,
        )
        .unwrap();
        assert!(
            b.cases
                .iter()
                .any(|c| c.status == Status::Errored && c.id.name == "Bail out!")
        );
    }

    #[test]
    fn allure_results_folder_from_allure_pytest() {
        // allure-pytest with pytest-rerunfailures (make.sh): pytest says
        // "2 failed, 5 passed, 1 skipped, 1 rerun".
        let r = read("allure-pytest");
        assert_eq!(r.cases.len(), 8, "{:?}", r.cases);
        assert_eq!(case(&r, "test_broken").status, Status::Errored);
        assert_eq!(case(&r, "test_fails").status, Status::Failed);
        assert_eq!(case(&r, "test_skipped").status, Status::Skipped);
        let flaky = case(&r, "test_flaky");
        assert_eq!((flaky.status, flaky.retries), (Status::Flaky, 1));
        assert_eq!(&*case(&r, "test_param[2]").id.suite, "test_sample");
        assert!(case(&r, "test_sleepy").duration_s.unwrap() >= 0.015);
        // The folder's containers are not results.
        assert!(r.sources.iter().all(|s| s.ends_with("-result.json")));
    }

    #[test]
    fn allure_results_without_history_ids_and_allure_1_xml() {
        // Older producers write no historyId, fullName or testCaseId: the
        // file's name and uuid + status + name say what it is.
        let r = read("allure-legacy");
        assert_eq!(r.cases.len(), 8, "{:?}", r.cases);
        let flaky = case(&r, "test_flaky");
        assert_eq!((flaky.status, flaky.retries), (Status::Flaky, 1));
        assert_eq!(case(&r, "test_broken").status, Status::Errored);
        // Allure 1 XML, not NUnit: names from <name>, pending and canceled
        // skipped, broken errored.
        let a = read("allure1");
        assert_eq!(a.cases.len(), 6, "{:?}", a.cases);
        assert_eq!(case(&a, "adds").status, Status::Passed);
        assert_eq!(&*case(&a, "adds").id.suite, "calc.CalcTest");
        assert_eq!(case(&a, "fails").status, Status::Failed);
        assert_eq!(case(&a, "errors").status, Status::Errored);
        assert_eq!(case(&a, "later").status, Status::Skipped);
        assert_eq!(case(&a, "skipped by an assumption").status, Status::Skipped);
        assert!((case(&a, "param[1]").duration_s.unwrap() - 0.28).abs() < 1e-9);
    }

    #[test]
    fn cucumber_and_playwright_json() {
        // cucumber-js 12.9 (make.sh): 5 scenarios, 1 failed, 1 undefined.
        let c = read("cucumber-js.json");
        assert_eq!(c.cases.len(), 5, "{:?}", c.cases);
        assert_eq!(case(&c, "fails").status, Status::Failed);
        assert_eq!(case(&c, "undefined step").status, Status::Errored);
        assert_eq!(case(&c, "adds").status, Status::Passed);
        assert_eq!(&*case(&c, "adds").id.suite, "Calculator");
        assert_eq!(case(&c, "param (line 21)").status, Status::Passed);
        assert_eq!(case(&c, "param (line 22)").status, Status::Passed);
        // Playwright's JSON reporter (make.sh): expected 2, unexpected 3,
        // skipped 1; retries 1.
        let p = read("playwright.json");
        assert_eq!(p.cases.len(), 6, "{:?}", p.cases);
        let count = |s: Status| p.cases.iter().filter(|c| c.status == s).count();
        assert_eq!(count(Status::Passed), 2);
        assert_eq!(count(Status::Skipped), 1);
        assert_eq!(p.cases.iter().filter(|c| c.status.is_failure()).count(), 3);
        assert_eq!(case(&p, "times out [node]").status, Status::Errored);
        assert_eq!(case(&p, "fails [node]").retries, 1);
        assert_eq!(
            &*case(&p, "sleeps [node]").id.suite,
            "tests/calc.spec.js > nested"
        );
        assert!(case(&p, "sleeps [node]").duration_s.unwrap() >= 0.03);
    }

    /// A server's upload (XML read in place, [`read_run_bytes`]) reads as
    /// the same document read from a file: the same tests, warnings and
    /// errors, each error at the same line and column.
    #[test]
    fn xml_in_memory_reads_as_the_same_file_does() {
        let dir = tempfile::tempdir().unwrap();
        // Twenty attributes: past the pairwise check for repeated names.
        let twenty = (0..20)
            .map(|i| format!("a{i}=\"{i}\""))
            .collect::<Vec<_>>()
            .join(" ");
        let docs: [&str; 11] = [
            "<?xml version=\"1.0\"?>\n<testsuites tests=\"3\">\n<testsuite name=\"s\" tests=\"3\" time=\"1.5\">\n  <testcase classname=\"a.B\" name=\"x &amp; y\" time=\"0.5\"/>\n  <testcase classname=\"a.B\" name=\"f\" time=\"0.25\"><failure message=\"no\">trace</failure></testcase>\n  <testcase classname=\"a.C\" name=\"s\"><skipped/></testcase>\n</testsuite>\n</testsuites>\n",
            "\u{feff}<testsuite name=\"one\" tests=\"2\"><testcase name=\"a\" time=\"bad\"/><testcase name=\"a\"/></testsuite>",
            "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\" name=\"b\"/>\n</testsuite></testsuites>",
            "<testsuites>\n<testsuite name=\"s\">\n\n   <testcase name=\"a\" time=\"1\">\n</testsuite></testsuites>",
            "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a<b\"/>\n</testsuite></testsuites>",
            "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"&bogus;\"/></testsuite></testsuites>",
            "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\"/>",
            "<testsuites/>\n<testsuites/>",
            "<testsuites/>\ntrailing text",
            // Many attributes, one repeated, and then none repeated.
            &format!(
                "<testsuites>\n<testsuite name=\"s\">\n<testcase {twenty} a7=\"again\"/>\n</testsuite></testsuites>"
            ),
            &format!(
                "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"t\" {twenty}/>\n</testsuite></testsuites>"
            ),
        ];
        for (i, doc) in docs.iter().enumerate() {
            let path = dir.path().join(format!("r{i}.xml"));
            std::fs::write(&path, doc).unwrap();
            let name = path.display().to_string();
            let from_file = read_run(std::slice::from_ref(&path), false);
            let in_memory = read_run_bytes(doc.as_bytes(), &name);
            match (from_file, in_memory) {
                (Ok(f), Ok(m)) => {
                    assert!(i < 2 || i == 10, "document {i} should not read");
                    assert_eq!(f.cases, m.cases, "document {i}");
                    assert_eq!(f.warnings, m.warnings, "document {i}");
                    assert_eq!(f.suites.len(), m.suites.len(), "document {i}");
                }
                (Err(f), Err(m)) => {
                    assert_eq!(f.to_string(), m.to_string(), "document {i}");
                    if i == 2 || i == 9 {
                        assert!(f.to_string().contains("is repeated"), "document {i}: {f}");
                    }
                    if (3..=7).contains(&i) {
                        assert!(f.to_string().contains("line "), "document {i}: {f}");
                    }
                }
                (f, m) => panic!(
                    "document {i}: file {:?}, memory {:?}",
                    f.map(|r| r.cases.len()),
                    m.map(|r| r.cases.len())
                ),
            }
        }
    }

    #[test]
    fn formats_tardy_knows_and_does_not_read_are_named_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let bundle = dir.path().join("Tests.xcresult");
        std::fs::create_dir_all(bundle.join("Data")).unwrap();
        std::fs::write(bundle.join("Info.plist"), "<?xml version=\"1.0\"?><plist/>").unwrap();
        let e = read_run(&[bundle], false).unwrap_err().to_string();
        assert!(
            e.contains("Xcode result bundle") && e.contains("xcresulttool"),
            "{e}"
        );
        let robot = dir.path().join("output.xml");
        std::fs::write(
            &robot,
            "<?xml version=\"1.0\"?><robot generator=\"Robot 7\"></robot>",
        )
        .unwrap();
        let e = read_run(&[robot], false).unwrap_err().to_string();
        assert!(
            e.contains("Robot Framework") && e.contains("--xunit"),
            "{e}"
        );
    }

    #[test]
    fn stated_failures_a_file_does_not_list_keep_the_run_failed() {
        // Derived: totals that say a test failed over results that all
        // passed (a producer that lost a result), in each dialect that
        // states failures.
        for (what, x) in [
            (
                "junit",
                "<testsuites tests=\"1\" failures=\"1\"><testsuite name=\"s\"><testcase name=\"a\"/></testsuite></testsuites>",
            ),
            (
                "nunit3",
                "<test-run total=\"1\" failed=\"2\"><test-suite type=\"Assembly\" name=\"x\"><test-case name=\"a\" result=\"Passed\"/></test-suite></test-run>",
            ),
            (
                "xunit",
                "<assemblies><assembly name=\"x\" total=\"1\" failed=\"1\"><collection name=\"c\"><test name=\"a\" type=\"T\" result=\"Pass\"/></collection></assembly></assemblies>",
            ),
        ] {
            let r = read_run_bytes(x.as_bytes(), what).unwrap();
            assert!(
                r.cases.iter().any(|c| c.status == Status::Failed),
                "{what}: {:?}",
                r.cases
            );
            assert!(
                r.warnings
                    .iter()
                    .any(|w| w.contains("tests failed but lists 0")),
                "{what}: {:?}",
                r.warnings
            );
        }
        let text = std::fs::read_to_string(data("vstest.trx")).unwrap();
        assert!(
            read("vstest.trx")
                .warnings
                .iter()
                .all(|w| !w.contains("tests failed"))
        );
        let edited = text.replacen("outcome=\"Failed\"", "outcome=\"Passed\"", 1);
        assert_ne!(edited, text);
        let r = read_run_bytes(edited.as_bytes(), "trx").unwrap();
        assert!(
            r.warnings
                .iter()
                .any(|w| w.contains("tests failed but lists")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn a_dart_stream_cut_off_fails_the_tests_it_was_running() {
        // Derived from dart.json: its lines up to the last test's start.
        let text = std::fs::read_to_string(data("dart.json")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let last_start = lines
            .iter()
            .rposition(|l| l.contains("\"type\":\"testStart\""))
            .unwrap();
        let cut = lines[..=last_start].join("\n");
        let mut r = Report::default();
        dart::read(cut.as_bytes(), "cut", &mut r).unwrap();
        assert!(
            r.cases.iter().any(|c| c.status == Status::Failed),
            "{:?}",
            r.cases
        );
        assert!(
            r.warnings.iter().any(|w| w.contains("counted as failed")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn gtest_ctest_nunit_trx_xunit() {
        let g = read("gtest.xml");
        assert_eq!(case(&g, "DISABLED_Later").status, Status::Skipped);
        assert_eq!(case(&g, "Fails").status, Status::Failed);
        assert_eq!(case(&g, "Adds").duration_s, Some(0.0));
        let c = read("ctest.xml");
        assert_eq!(case(&c, "broken").status, Status::Failed);
        assert!(case(&c, "slow").duration_s.unwrap() > 0.19);
        assert_eq!(c.suite_wall_s(), Some(0.0), "CTest writes whole seconds");
        let n = read("nunit3.xml");
        assert_eq!(n.cases.len(), 4);
        assert_eq!(case(&n, "Throws").status, Status::Errored);
        assert_eq!(case(&n, "Later").status, Status::Skipped);
        assert_eq!(
            &*case(&n, "Sleeps").id.suite,
            "Calc.Tests.dll / Calc / CalcTests"
        );
        assert_eq!(
            n.suite_wall_s(),
            Some(0.6),
            "only the outermost suite counts"
        );
        let t = read("vstest.trx");
        assert_eq!(
            case(&t, "Zero").duration_s,
            Some(0.0),
            "TRX omits zero durations"
        );
        assert_eq!(&*case(&t, "Adds").id.class, "Calc.Tests.MathTests");
        assert_eq!(
            case(&t, "Should be even number(i: 3)").status,
            Status::Failed
        );
        assert_eq!(case(&t, "Skipped").status, Status::Skipped);
        let x = read("xunit2.xml");
        assert_eq!(x.cases.len(), 3);
        assert_eq!(
            case(&x, "Calc.Tests.MathTests.Divides").status,
            Status::Failed
        );
        assert_eq!(
            case(&x, "Calc.Tests.MathTests.Adds").duration_s,
            Some(0.012)
        );
    }

    #[test]
    fn surefire_reruns_are_flaky_even_across_files() {
        let r = read("surefire");
        assert_eq!(r.cases.len(), 8);
        assert_eq!(case(&r, "flaky").status, Status::Flaky);
        assert_eq!(case(&r, "fails").status, Status::Failed);
        assert_eq!(case(&r, "errors").status, Status::Errored);
        assert_eq!(case(&r, "later").status, Status::Skipped);
        assert_eq!(&*case(&r, "param(int)[2]").id.suite, "calc.CalcTest");
        // With an @Nested class Surefire writes first attempts under `CalcTest$Inner` and
        // the reruns under `CalcTest`: the class, not the file, names the test.
        let n = read("surefire-nested");
        assert_eq!(n.cases.len(), 9, "{:?}", n.cases);
        assert_eq!(case(&n, "flaky").status, Status::Flaky);
        assert!(case(&n, "fails").retries >= 1);
        assert_eq!(&*case(&n, "nestedSleeps").id.suite, "calc.CalcTest$Inner");
    }

    #[test]
    fn headers_that_count_attempts_make_up_no_failure() {
        // The real Surefire file with its header edited as other versions
        // write it: the flaky test's failed attempt counted as a failure
        // (it passed on rerun: the run passed), then each rerun of the test
        // that always failed counted too (one failed test, not three).
        let real =
            std::fs::read_to_string(data("surefire").join("TEST-calc.CalcTest.xml")).unwrap();
        for (failures, errors) in [("2", "1"), ("4", "1")] {
            let edited = real.replacen(
                "errors=\"1\" skipped=\"0\" failures=\"1\"",
                &format!("errors=\"{errors}\" skipped=\"0\" failures=\"{failures}\""),
                1,
            );
            assert_ne!(edited, real);
            let mut r = Report::default();
            read_bytes(edited.as_bytes(), "edited", &mut r).unwrap();
            let failing = r.cases.iter().filter(|c| c.status.is_failure()).count();
            assert_eq!(failing, 2, "fails and errors only: {:?}", r.cases);
            assert_eq!(case(&r, "flaky").status, Status::Flaky);
        }
        // A passing run whose only "failure" is a flaky attempt passes.
        let flaky_only = br#"<testsuite name="s" tests="2" failures="1" errors="0">
<testcase name="a" classname="s"/>
<testcase name="flaky" classname="s"><flakyFailure message="first time"/></testcase>
</testsuite>"#;
        let mut r = Report::default();
        read_bytes(flaky_only, "flaky", &mut r).unwrap();
        assert!(
            r.cases.iter().all(|c| !c.status.is_failure()),
            "{:?}",
            r.cases
        );
        // A header's failure the file does not list still fails the run.
        let hidden = br#"<testsuite name="s" tests="1" failures="1" errors="0">
<testcase name="a" classname="s"/>
</testsuite>"#;
        let mut r = Report::default();
        read_bytes(hidden, "hidden", &mut r).unwrap();
        assert!(r.cases.iter().any(|c| c.status.is_failure()));
    }

    #[test]
    fn a_failed_test_case_holding_a_suite_stays_failed() {
        let x = br#"<testsuites><testsuite name="outer" tests="2">
<testcase name="parent" classname="c" time="1.5">
  <error message="setup broke"/>
  <failure message="and it failed"/>
  <testsuite name="inner"><testcase name="child" classname="c" time="0.5"/></testsuite>
</testcase>
<testcase name="fine" classname="c"/>
<testcase name="group" classname="c" time="2"><testsuite name="g"><testcase name="leaf" classname="c" time="2"/></testsuite></testcase>
</testsuite></testsuites>"#;
        let mut r = Report::default();
        read_bytes(x, "nested", &mut r).unwrap();
        let p = case(&r, "parent");
        assert!(p.status.is_failure() && !p.has_children, "{:?}", r.cases);
        assert_eq!(case(&r, "child").status, Status::Passed);
        assert!(case(&r, "group").has_children);
        assert_eq!(case(&r, "leaf").status, Status::Passed);
    }

    #[test]
    fn go_tests_that_never_ended_in_a_passing_package_fail() {
        let events = br#"{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"p","Elapsed":0.2}
"#;
        let mut r = Report::default();
        read_bytes(events, "go", &mut r).unwrap();
        assert_eq!(case(&r, "TestB").status, Status::Failed, "{:?}", r.cases);
        assert_eq!(case(&r, "TestA").status, Status::Passed);
        assert!(
            r.warnings.iter().any(|w| w.contains("never ended")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn nextest_retries() {
        let r = read("nextest.xml");
        assert_eq!(r.cases.len(), 5, "ignored tests are not listed by nextest");
        assert_eq!(case(&r, "tests::flaky").status, Status::Flaky);
        assert_eq!(case(&r, "tests::fails").status, Status::Failed);
        assert_eq!(&*case(&r, "tests::nested::param_1").id.suite, "calc");
        assert!(r.suite_wall_s().unwrap() > 0.1);
    }

    #[test]
    fn javascript_php_and_ruby_reporters() {
        let j = read("jest-junit.xml");
        assert_eq!(j.cases.len(), 6);
        assert_eq!(case(&j, "Calc fails").status, Status::Failed);
        assert_eq!(case(&j, "Calc later").status, Status::Skipped);
        assert!(case(&j, "Calc sleeps").duration_s.unwrap() >= 0.02);
        // jest's root <testsuites time> covers the whole run, more than its one suite.
        assert!(j.suite_wall_s().unwrap() > 0.45, "{:?}", j.suites);
        let m = read("mocha-junit.xml");
        assert_eq!(
            m.cases.len(),
            5,
            "mocha-junit-reporter leaves out pending tests"
        );
        assert_eq!(&*case(&m, "Calc nested param 2").id.suite, "nested");
        let x = read("mocha-xunit.xml");
        assert_eq!(x.cases.len(), 6);
        assert_eq!(&*case(&x, "param 1").id.class, "Calc nested");
        assert_eq!(case(&x, "later").status, Status::Skipped);
        let p = read("phpunit.xml");
        assert_eq!(p.cases.len(), 7);
        assert!(
            case(&p, "testParam with data set \"two\"")
                .id
                .suite
                .ends_with("/ CalcTest / CalcTest::testParam")
        );
        assert_eq!(case(&p, "testErrors").status, Status::Errored);
        assert_eq!(case(&p, "testLater").status, Status::Skipped);
        assert!(p.suite_wall_s().unwrap() >= 0.03, "{:?}", p.suites);
        assert_eq!(p.suites.len(), 1, "nested suites are not counted twice");
        let s = read("rspec.xml");
        assert_eq!(s.cases.len(), 6);
        assert_eq!(case(&s, "Calc fails").status, Status::Failed);
        assert_eq!(case(&s, "Calc later").status, Status::Skipped);
        assert_eq!(&*case(&s, "Calc nested param 1").id.class, "spec.calc_spec");
    }

    #[test]
    fn a_directory_is_one_run_and_gzip_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(data("gtest.xml"), dir.path().join("a.xml")).unwrap();
        let gz = std::fs::File::create(dir.path().join("b.xml.gz")).unwrap();
        let mut enc = flate2::write::GzEncoder::new(gz, flate2::Compression::fast());
        std::io::Write::write_all(&mut enc, &std::fs::read(data("ctest.xml")).unwrap()).unwrap();
        enc.finish().unwrap();
        let r = read_run(&[dir.path().to_path_buf()], false).unwrap();
        assert_eq!(r.cases.len(), 4 + 3);
        assert_eq!(r.sources.len(), 2);
        // Two gzip members one after the other (`cat a.gz b.gz`) are one
        // valid gzip stream: both are read.
        let text = std::fs::read_to_string(data("ctest.xml")).unwrap();
        let cut = text.len() / 2;
        let mut both = Vec::new();
        for part in [&text[..cut], &text[cut..]] {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut enc, part.as_bytes()).unwrap();
            both.extend(enc.finish().unwrap());
        }
        let one = dir.path().join("cat.xml.gz");
        std::fs::write(&one, both).unwrap();
        let r = read_run(&[one], false).unwrap();
        assert_eq!(r.cases.len(), 3);
    }

    #[test]
    fn bad_reports_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &str, &str); 5] = [
            (
                "trunc.xml",
                "<testsuite name=\"a\"><testcase name=\"x\" time=\"1\">",
                "truncated",
            ),
            ("html.xml", "<html><body/></html>", "root element is <html>"),
            (
                "bomb.xml",
                "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><testsuite name=\"&b;\"><testcase name=\"t\" time=\"1\"/></testsuite>",
                "",
            ),
            ("junk.xml", "\u{1}\u{2}binary", "not a test report"),
            ("empty.xml", "", "is empty"),
        ];
        for (name, content, expect) in cases {
            let p = dir.path().join(name);
            std::fs::write(&p, content).unwrap();
            match read_run(&[p], false) {
                Ok(r) => {
                    // The bomb parses, but its entity is never expanded.
                    assert_eq!(name, "bomb.xml");
                    assert!(
                        r.cases[0].id.suite.len() < 100,
                        "entity expanded: {}",
                        r.cases[0].id.suite.len()
                    );
                }
                Err(e) => assert!(e.to_string().contains(expect), "{name}: {e}"),
            }
        }
        let dir2 = tempfile::tempdir().unwrap();
        let e = read_run(&[dir2.path().to_path_buf()], false).unwrap_err();
        assert!(e.to_string().contains("without report files"), "{e}");
    }

    fn count(r: &Report, s: Status) -> usize {
        r.cases.iter().filter(|c| c.status == s).count()
    }

    #[test]
    fn nunit2_failures_are_failures_with_or_without_result() {
        let r = read("nunit2-failures.xml");
        assert_eq!(r.cases.len(), 8);
        assert_eq!(case(&r, "Calc.CalcTests.Fails").status, Status::Failed);
        assert_eq!(case(&r, "Calc.CalcTests.Throws").status, Status::Errored);
        assert_eq!(case(&r, "Calc.CalcTests.Later").status, Status::Skipped);
        assert_eq!(case(&r, "Calc.OldTests.FailsOld").status, Status::Failed);
        assert_eq!(
            case(&r, "Calc.OldTests.FailureChildOnly").status,
            Status::Failed
        );
        assert_eq!(case(&r, "Calc.OldTests.PassesOld").status, Status::Passed);
        assert_eq!(case(&r, "Calc.OldTests.NotRunOld").status, Status::Skipped);
        // The file's own totals: 6 run (errors 1, failures 2 by NUnit 2.6's count + 2 old).
        assert_eq!(count(&r, Status::Passed), 2);
        assert_eq!(r.suite_wall_s(), Some(0.412));
    }

    #[test]
    fn nunit3_assembly_root_is_read() {
        let r = read("nunit3-assembly-root.xml");
        assert_eq!(r.cases.len(), 3);
        assert_eq!(case(&r, "Fails").status, Status::Failed);
        assert_eq!(case(&r, "Later").status, Status::Skipped);
        assert_eq!(&*case(&r, "Adds").id.class, "Calc.CalcTests");
        assert_eq!(r.suite_wall_s(), Some(0.512));
    }

    #[test]
    fn repeated_identities_are_distinct_tests_counted_as_the_file_counts() {
        // Surefire + TestNG invocationCount = 3: tests="10", `repeated` three times.
        let r = read("surefire-testng");
        assert_eq!(r.cases.len(), 10);
        let reps: Vec<&TestCase> = r.cases.iter().filter(|c| c.id.name == "repeated").collect();
        assert_eq!(reps.len(), 3);
        assert_eq!(
            reps.iter().map(|c| c.id.nth).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        assert!(
            reps.iter().all(|c| c.duration_s.unwrap() < 0.004),
            "no sums"
        );
        assert_eq!(reps[1].id.display(), "calc.CalcTest :: repeated #2");
        assert_eq!(count(&r, Status::Failed), 2);
        assert_eq!(count(&r, Status::Skipped), 1);
        // jest-junit: three distinct tests titled "Calc same checks a value".
        let j = read("jest-junit-same-title.xml");
        assert_eq!(j.cases.len(), 9);
        assert_eq!(count(&j, Status::Passed), 7, "jest: numPassedTests 7");
        // Four nameless <testcase/>: four tests, each its own time.
        let n = read("junit-nameless.xml");
        assert_eq!(n.cases.len(), 4);
        assert_eq!(count(&n, Status::Failed), 1);
        assert_eq!(n.total_s(), 1.0);
        assert_eq!(n.cases[3].id.display(), "generated #4");
    }

    #[test]
    fn repeats_never_pick_a_status_by_order() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("param.xml");
        std::fs::write(
            &p,
            r#"<testsuite name="s"><testcase classname="C" name="p" time="0.5"><skipped/></testcase><testcase classname="C" name="p" time="0.25"><failure/></testcase><testcase classname="C" name="p" time="1"/></testsuite>"#,
        )
        .unwrap();
        let r = read_run(&[p], false).unwrap();
        let st: Vec<(Status, Option<f64>)> =
            r.cases.iter().map(|c| (c.status, c.duration_s)).collect();
        assert_eq!(
            st,
            vec![
                (Status::Skipped, Some(0.5)),
                (Status::Failed, Some(0.25)),
                (Status::Passed, Some(1.0))
            ]
        );
    }

    #[test]
    fn marked_reruns_are_one_flaky_test() {
        // pytest-rerunfailures 16.7 --reruns 2: reruns are repeated bare <testcase/>s.
        let r = read("pytest-rerun.xml");
        assert_eq!(r.cases.len(), 6, "{:?}", r.cases);
        assert_eq!(case(&r, "test_flaky").status, Status::Flaky);
        assert_eq!(case(&r, "test_flaky").retries, 1);
        assert_eq!(case(&r, "test_always").status, Status::Failed);
        assert_eq!(case(&r, "test_always").retries, 2);
        assert_eq!(case(&r, "test_ok").status, Status::Passed);
        assert_eq!(case(&r, "test_fail_and_teardown").status, Status::Failed);
        assert_eq!(case(&r, "test_pass_and_teardown").status, Status::Errored);
        assert!(r.warnings.iter().any(|w| w.contains("says it holds 8")));
        // pytest without reruns: a failed call plus a teardown error are two results, as
        // pytest counts them (tests="6", failures="3", errors="2"): the second is the
        // test's teardown.
        let t = read("pytest-teardown.xml");
        assert_eq!(t.cases.len(), 6);
        assert_eq!(case(&t, "test_fail_and_teardown").status, Status::Failed);
        assert_eq!(
            case(&t, "test_fail_and_teardown (teardown)").status,
            Status::Errored
        );
        assert_eq!(case(&t, "test_pass_and_teardown").status, Status::Errored);
        assert!(t.cases.iter().all(|c| c.id.nth == 0));
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn empty_reports_are_zero_tests() {
        for f in [
            "junit-zero.xml",
            "jest-junit.xml",
            "phpunit.xml",
            "vstest.trx",
            "go-test.json",
        ] {
            let r = read_run(&[data("empty").join(f)], false).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(r.cases.len(), 0, "{f}");
            assert_eq!(r.total_s().to_bits(), 0.0f64.to_bits(), "{f}: not -0");
            assert!(r.warnings.iter().any(|w| w.contains("0 tests")), "{f}");
        }
    }

    #[test]
    fn malformed_xml_names_line_and_column() {
        let bad = |f: &str| {
            read_run(&[data("bad").join(f)], false)
                .unwrap_err()
                .to_string()
        };
        let e = bad("raw-quote.xml");
        assert!(e.contains("line 3, column"), "{e}");
        assert!(e.contains("malformed"), "{e}");
        let e = bad("undefined-entity.xml");
        assert!(e.contains("line 2"), "{e}");
        let e = bad("two-roots.xml");
        assert!(e.contains("line 2, column 1"), "{e}");
        let e = bad("mismatched.xml");
        assert!(e.contains("line "), "{e}");
        // Control characters inside CDATA (captured console output) are fine.
        assert_eq!(read("nunit3-assembly-root.xml").cases.len(), 3);
    }

    #[test]
    fn disabled_stays_skipped_and_aborted_is_named() {
        let g = read("junit-disabled-failure.xml");
        assert_eq!(case(&g, "DISABLED_Flaky").status, Status::Skipped);
        assert_eq!(case(&g, "Fails").status, Status::Failed);
        let t = read("vstest-aborted.trx");
        assert_eq!(case(&t, "HangsForever").status, Status::Aborted);
        assert!(Status::Aborted.is_failure());
        assert_eq!(case(&t, "NeverRan").status, Status::Skipped);
        assert_eq!(&*case(&t, "HangsForever").id.class, "Calc.Tests.MathTests");
    }

    #[test]
    fn mocha_jest_rspec_and_dart_json() {
        // mocha 10 --reporter json: stats say 9 tests, 7 passes, 1 pending, 1 failure.
        let m = read("mocha.json");
        assert_eq!(m.cases.len(), 9);
        assert_eq!(count(&m, Status::Passed), 7);
        assert_eq!(count(&m, Status::Skipped), 1);
        assert_eq!(case(&m, "Calc fails").status, Status::Failed);
        assert_eq!(case(&m, "Calc later").status, Status::Skipped);
        assert_eq!(&*case(&m, "Calc adds").id.suite, "calc.spec.js");
        assert!(case(&m, "Calc sleeps").duration_s.unwrap() >= 0.025);
        // jest 30 --json: numTotalTests 9, 7 passed, 1 failed, 1 pending.
        let j = read("jest.json");
        assert_eq!(j.cases.len(), 9);
        assert_eq!(count(&j, Status::Passed), 7);
        assert_eq!(count(&j, Status::Failed), 1);
        assert_eq!(count(&j, Status::Skipped), 1);
        assert_eq!(&*case(&j, "Calc adds").id.suite, "calc.test.js");
        assert!(j.suite_wall_s().unwrap() > 0.05);
        // RSpec 3.12 --format json: 10 examples, 1 failure, 2 pending.
        let r = read("rspec.json");
        assert_eq!(r.cases.len(), 10);
        assert_eq!(count(&r, Status::Failed), 1);
        assert_eq!(count(&r, Status::Skipped), 2);
        assert_eq!(
            r.cases
                .iter()
                .filter(|c| c.id.name == "Calc same checks a value")
                .count(),
            3
        );
        assert!(case(&r, "Calc sleeps").duration_s.unwrap() >= 0.025);
        // Dart --reporter json: the hidden loading test is not a test.
        let d = read("dart.json");
        assert_eq!(d.cases.len(), 8, "{:?}", d.cases);
        assert_eq!(case(&d, "Calc fails").status, Status::Failed);
        assert_eq!(case(&d, "Calc throws").status, Status::Errored);
        assert_eq!(case(&d, "Calc later").status, Status::Skipped);
        assert_eq!(case(&d, "Calc late error").status, Status::Errored);
        assert_eq!(case(&d, "Calc sleeps").duration_s, Some(0.027));
        assert_eq!(&*case(&d, "Calc adds").id.suite, "test/calc_test.dart");
        assert_eq!(d.suite_wall_s(), Some(0.48));
    }

    /// Plain, numbered names hash apart: the hand-written FxHash used
    /// before gave "suite 10 renders item 119" and "... 192" one hash (and
    /// 40 such pairs in a suite of 1,000), which sent a streamed `tests
    /// show` back to reading the run whole.
    #[test]
    fn numbered_names_do_not_collide() {
        let mut seen = HashSet::new();
        for s in 0..20 {
            for i in 0..1000 {
                assert!(seen.insert(fx(format!("suite {s} renders item {i}").as_bytes())));
                assert!(seen.insert(fx(format!("test_case_number_{i}_{s}").as_bytes())));
            }
        }
    }

    /// Repeats found through sorted hashes are the repeats a map of every
    /// identity finds (the way it was done), numbered and merged alike.
    #[test]
    fn repeats_are_numbered_and_merged_as_a_map_of_identities_finds_them() {
        let mut x = 7u64;
        for round in 0..200 {
            let mut r = Report::default();
            let names: [Arc<str>; 3] = [Arc::from("a"), Arc::from("b"), Arc::from("")];
            for _ in 0..(round % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                r.cases.push(TestCase {
                    id: TestId::new(
                        names[(x % 3) as usize].clone(),
                        Arc::from(if x % 5 == 0 { "c" } else { "" }),
                        format!("t{}", (x >> 8) % 6),
                    ),
                    duration_s: ((x >> 20) % 4 > 0).then_some(((x >> 24) % 100) as f64),
                    status: [Status::Passed, Status::Failed, Status::Skipped]
                        [((x >> 30) % 3) as usize],
                    retries: 0,
                    has_children: false,
                });
            }
            r.reruns_marked = round % 2 == 1;
            // The reference: a map of identities, in file order.
            let mut expect = r.clone();
            let mut seen: HashMap<TestId, (usize, u32)> = HashMap::new();
            let mut gone = vec![false; expect.cases.len()];
            #[allow(clippy::needless_range_loop)] // merges into earlier cases by index
            for i in 0..expect.cases.len() {
                let id = expect.cases[i].id.clone();
                match seen.get_mut(&id) {
                    Some((f, n)) if expect.reruns_marked => {
                        let c = expect.cases[i].clone();
                        let m = &mut expect.cases[*f];
                        m.retries += 1 + c.retries;
                        m.status = match c.status {
                            Status::Passed | Status::Flaky => Status::Flaky,
                            s => s,
                        };
                        if c.duration_s.is_some() {
                            m.duration_s = c.duration_s;
                        }
                        gone[i] = true;
                        *n += 1;
                    }
                    Some((_, n)) => {
                        expect.cases[i].id.nth = *n;
                        *n += 1;
                    }
                    None => {
                        seen.insert(id, (i, 1));
                    }
                }
            }
            let mut k = 0;
            expect.cases.retain(|_| {
                k += 1;
                !gone[k - 1]
            });
            r.resolve_repeats();
            assert_eq!(r.cases, expect.cases, "round {round}");
        }
    }
}
