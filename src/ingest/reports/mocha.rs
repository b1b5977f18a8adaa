//! mocha's JSON reporter output (`{stats, tests, pending, failures,
//! passes}`), read in two passes so that a million tests never sit in memory
//! at once. The first pass reads what the second needs before its tests:
//! the directory all test files share (each test's suite is its file below
//! it), which tests are pending (listed in `tests` too, told apart by title
//! and file, which repeat), and the failures, some of which are hooks ("before
//! all" hook for ...) that mocha counts as failures with no test. The
//! second reads `tests` test by test, each handed on (to a streaming read's
//! sink) as read; hook failures come last.

use std::collections::HashMap;
use std::io::Read;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::counted::Counted;
use super::jsonparts::{CommonDir, Each, counted, push, suite_of};
use super::{CaseSink, Report, Status, Suite};

#[derive(Deserialize)]
struct MochaStats {
    duration: Option<f64>,
}

#[derive(Deserialize)]
struct MochaTest {
    #[serde(rename = "fullTitle", default)]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
    duration: Option<f64>,
    #[serde(rename = "currentRetry", default)]
    current_retry: u32,
    #[serde(default)]
    err: Option<HashMap<String, IgnoredAny>>,
}

/// What names a test: its full title and file.
#[derive(Deserialize)]
struct Key {
    #[serde(rename = "fullTitle", default)]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
}

/// `title` and `file` as one unambiguous key, written into `buf`.
fn key<'b>(buf: &'b mut String, title: &str, file: Option<&str>) -> &'b str {
    use std::fmt::Write;
    buf.clear();
    let _ = write!(buf, "{}:{title}", title.len());
    match file {
        Some(f) => {
            buf.push('+');
            buf.push_str(f);
        }
        None => buf.push('-'),
    }
    buf
}

/// What the first pass learns.
#[derive(Default)]
pub struct Index {
    dir: CommonDir,
    /// Pending tests by key, and how many.
    pending: HashMap<String, usize>,
    /// The failures in order.
    failures: Vec<Key>,
}

/// A list past the cap on one input's results.
fn capped(n: usize) -> Result<(), String> {
    match crate::ingest::limits::results(n) {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// The first pass: the shared directory, the pending tests and the failures
/// (each list held to the cap on one input's results).
pub fn index<R: Read>(input: R) -> Result<Index, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut index = Index::default();
    IndexPass(&mut index).deserialize(&mut de)?;
    de.end()?;
    Ok(index)
}

struct IndexPass<'a>(&'a mut Index);

impl<'de> DeserializeSeed<'de> for IndexPass<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IndexPass<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with stats and tests")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let index = self.0;
        let mut buf = String::new();
        while let Some(field) = map.next_key::<std::borrow::Cow<str>>()? {
            match &*field {
                "tests" => map.next_value_seed(Each::new(&mut |k: Key| {
                    counted()?;
                    if let Some(f) = &k.file {
                        index.dir.add(f);
                    }
                    Ok(())
                }))?,
                "pending" => {
                    let mut n = 0;
                    map.next_value_seed(Each::new(&mut |k: Key| {
                        n += 1;
                        capped(n)?;
                        let k = key(&mut buf, &k.full_title, k.file.as_deref());
                        *index.pending.entry(k.to_string()).or_default() += 1;
                        Ok(())
                    }))?
                }
                "failures" => map.next_value_seed(Each::new(&mut |k: Key| {
                    capped(index.failures.len() + 1)?;
                    index.failures.push(k);
                    Ok(())
                }))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The second pass: every test into `report`, handed on to `sink` as read
/// when streaming, then the hook failures, then the file's suite.
pub fn read<R: Read>(
    input: R,
    index: Index,
    name: &str,
    report: &mut Report,
    sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_reader(input);
    let mut pass = Tests {
        prefix: index.dir.finish(),
        pending: index.pending,
        // How many tests carry each failure's key.
        in_tests: HashMap::new(),
        suites: HashMap::new(),
        duration_ms: None,
        read: 0,
        report,
        sink,
    };
    let mut buf = String::new();
    for f in &index.failures {
        let k = key(&mut buf, &f.full_title, f.file.as_deref());
        pass.in_tests.insert(k.to_string(), 0);
    }
    (&mut pass).deserialize(&mut de)?;
    de.end()?;
    // A failing hook ("before all" hook for ...) is a failure mocha counts but no test.
    for f in index.failures {
        let k = key(&mut buf, &f.full_title, f.file.as_deref());
        match pass.in_tests.get_mut(k).filter(|n| **n > 0) {
            Some(n) => *n -= 1,
            None => {
                if let Some(why) = crate::ingest::limits::one_result() {
                    return Err(serde::de::Error::custom(why));
                }
                let suite = suite_of(
                    &mut pass.suites,
                    &pass.prefix,
                    f.file.as_deref().unwrap_or(""),
                );
                push(pass.report, &suite, f.full_title, None, Status::Errored);
                pass.read += 1;
            }
        }
    }
    pass.report.suites.push(Suite {
        name: name.to_string(),
        time_s: (pass.duration_ms)
            .filter(|d| d.is_finite() && *d >= 0.0)
            .map(|d| d / 1e3),
        tests: pass.read,
    });
    Ok(())
}

struct Tests<'r, 's> {
    prefix: String,
    pending: HashMap<String, usize>,
    in_tests: HashMap<String, usize>,
    suites: HashMap<String, std::sync::Arc<str>>,
    duration_ms: Option<f64>,
    /// Results of this document so far.
    read: usize,
    report: &'r mut Report,
    sink: Option<&'r mut (dyn CaseSink + 's)>,
}

impl Tests<'_, '_> {
    fn test(&mut self, t: MochaTest, buf: &mut String) {
        let failed = t.err.as_ref().is_some_and(|e| !e.is_empty());
        let k = if self.pending.is_empty() && self.in_tests.is_empty() {
            ""
        } else {
            key(buf, &t.full_title, t.file.as_deref())
        };
        if let Some(n) = self.in_tests.get_mut(k) {
            *n += 1;
        }
        let status = if failed {
            Status::Failed
        } else if let Some(n) = self.pending.get_mut(k).filter(|n| **n > 0) {
            *n -= 1;
            Status::Skipped
        } else if t.current_retry > 0 {
            Status::Flaky
        } else {
            Status::Passed
        };
        let suite = suite_of(
            &mut self.suites,
            &self.prefix,
            t.file.as_deref().unwrap_or(""),
        );
        push(self.report, &suite, t.full_title, t.duration, status);
        if let Some(c) = self.report.cases.last_mut() {
            c.retries = t.current_retry;
        }
        self.read += 1;
        super::spill_some(self.report, &mut self.sink);
    }
}

impl<'de> DeserializeSeed<'de> for &mut Tests<'_, '_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Tests<'_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object with stats and tests")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut buf = String::new();
        while let Some(field) = map.next_key::<std::borrow::Cow<str>>()? {
            match &*field {
                "stats" => {
                    let stats: Option<MochaStats> = map.next_value()?;
                    self.duration_ms = stats.and_then(|s| s.duration);
                }
                "tests" => {
                    map.next_value_seed(Each::new(&mut |Counted(t): Counted<MochaTest>| {
                        self.test(t, &mut buf);
                        Ok(())
                    }))?
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}
