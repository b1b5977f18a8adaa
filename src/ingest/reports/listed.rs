//! RSpec's `--format json` and CTRF: documents that list their tests in one
//! array beside a summary, read in two passes so that a million tests never
//! sit in memory at once. The first reads the summary and the directory all
//! test files share (a test's suite is its file below it); the second reads
//! the array test by test, each handed on (to a streaming read's sink) as
//! read.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::counted::Counted;
use super::jsonparts::{CommonDir, Each, counted, push, suite_of};
use super::{CaseSink, Report, Status, Suite};

/// The array at `path` (keys from the top) read element by element, each
/// handed to `f`; every other value skipped.
fn each_at<'de, T, F, D>(d: D, path: &[&str], f: &mut F) -> Result<(), D::Error>
where
    T: Deserialize<'de>,
    F: FnMut(T) -> Result<(), String>,
    D: serde::Deserializer<'de>,
{
    At {
        path,
        f,
        t: std::marker::PhantomData,
    }
    .deserialize(d)
}

struct At<'p, 'f, T, F> {
    path: &'p [&'p str],
    f: &'f mut F,
    t: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> DeserializeSeed<'de>
    for At<'_, '_, T, F>
{
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.path {
            [] => Each::new(self.f).deserialize(d),
            _ => d.deserialize_map(self),
        }
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T) -> Result<(), String>> Visitor<'de>
    for At<'_, '_, T, F>
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a JSON object with {}", self.path.join("."))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<str>>()? {
            if key == self.path[0] {
                map.next_value_seed(At {
                    path: &self.path[1..],
                    f: &mut *self.f,
                    t: std::marker::PhantomData,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

/// The directory the files of an array of tests share, read as the array
/// goes by (the first pass).
struct SharedDir<P>(CommonDir, std::marker::PhantomData<P>);

impl<P> Default for SharedDir<P> {
    fn default() -> Self {
        SharedDir(CommonDir::default(), std::marker::PhantomData)
    }
}

/// A test's file, all the first pass reads of it.
trait FileOf {
    fn file(&self) -> Option<&str>;
}

impl<'de, P: Deserialize<'de> + FileOf> Deserialize<'de> for SharedDir<P> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut dir = CommonDir::default();
        Each::new(&mut |p: P| {
            counted()?;
            if let Some(f) = p.file() {
                dir.add(f);
            }
            Ok(())
        })
        .deserialize(d)?;
        Ok(SharedDir(dir, std::marker::PhantomData))
    }
}

// RSpec

#[derive(Deserialize)]
struct RSpecPath {
    #[serde(default)]
    file_path: String,
}

impl FileOf for RSpecPath {
    fn file(&self) -> Option<&str> {
        Some(&self.file_path)
    }
}

#[derive(Deserialize)]
struct RSpecSummary {
    duration: Option<f64>,
    #[serde(default)]
    errors_outside_of_examples_count: usize,
}

/// What the first pass reads of RSpec's document.
#[derive(Deserialize)]
pub struct RSpecHead {
    #[serde(default)]
    examples: SharedDir<RSpecPath>,
    summary: Option<RSpecSummary>,
}

#[derive(Deserialize)]
struct RSpecExample {
    #[serde(default)]
    full_description: String,
    #[serde(default)]
    file_path: String,
    #[serde(default)]
    status: String,
    run_time: Option<f64>,
}

pub fn rspec_head<R: Read>(input: R) -> Result<RSpecHead, serde_json::Error> {
    serde_json::from_reader(input)
}

pub fn rspec<R: Read>(
    input: R,
    head: RSpecHead,
    name: &str,
    report: &mut Report,
    mut sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let prefix = head.examples.0.finish();
    let mut suites = HashMap::new();
    let mut listed = 0;
    let mut de = serde_json::Deserializer::from_reader(input);
    each_at(&mut de, &["examples"], &mut |Counted(e): Counted<
        RSpecExample,
    >| {
        let status = match e.status.as_str() {
            "passed" => Status::Passed,
            "failed" => Status::Failed,
            _ => Status::Skipped, // pending
        };
        let suite = suite_of(&mut suites, &prefix, &e.file_path);
        let ms = e.run_time.map(|s| s * 1e3);
        push(report, &suite, e.full_description, ms, status);
        listed += 1;
        super::spill_some(report, &mut sink);
        Ok(())
    })?;
    de.end()?;
    let (time_s, outside) = head.summary.map_or((None, 0), |s| {
        (
            s.duration.filter(|d| d.is_finite() && *d >= 0.0),
            s.errors_outside_of_examples_count,
        )
    });
    if outside > 0 {
        report.warnings.push(format!(
            "{name}: RSpec reports {outside} error(s) outside of examples (a file that did not load?)"
        ));
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s,
        tests: listed,
    });
    Ok(())
}

// CTRF

#[derive(Deserialize)]
struct CtrfPath {
    #[serde(rename = "filePath", default)]
    file_path: Option<String>,
}

impl FileOf for CtrfPath {
    fn file(&self) -> Option<&str> {
        self.file_path.as_deref()
    }
}

/// What the first pass reads of a CTRF document.
#[derive(Deserialize)]
pub struct CtrfHead {
    results: CtrfResults,
}

#[derive(Deserialize)]
struct CtrfResults {
    #[serde(default)]
    tool: Option<CtrfTool>,
    #[serde(default)]
    summary: Option<CtrfSummary>,
    #[serde(default)]
    tests: SharedDir<CtrfPath>,
}

#[derive(Deserialize)]
struct CtrfTool {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct CtrfSummary {
    tests: Option<u64>,
    failed: Option<u64>,
    start: Option<f64>,
    stop: Option<f64>,
}

/// CTRF's `suite`: a string ("file > describe") or, in later versions, the
/// path as an array.
#[derive(Deserialize)]
#[serde(untagged)]
enum CtrfSuite {
    One(String),
    Path(Vec<String>),
}

#[derive(Deserialize)]
struct CtrfTest {
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    duration: Option<f64>,
    #[serde(default)]
    suite: Option<CtrfSuite>,
    #[serde(rename = "filePath", default)]
    file_path: Option<String>,
    #[serde(default)]
    retries: Option<u32>,
    #[serde(default)]
    flaky: Option<bool>,
}

pub fn ctrf_head<R: Read>(input: R) -> Result<CtrfHead, serde_json::Error> {
    serde_json::from_reader(input)
}

pub fn ctrf<R: Read>(
    input: R,
    head: CtrfHead,
    name: &str,
    report: &mut Report,
    mut sink: Option<&mut (dyn CaseSink + '_)>,
) -> Result<(), serde_json::Error> {
    let r = head.results;
    let prefix = r.tests.0.finish();
    let mut suites = HashMap::new();
    let (mut listed, mut failing) = (0usize, 0u64);
    let mut de = serde_json::Deserializer::from_reader(input);
    each_at(
        &mut de,
        &["results", "tests"],
        &mut |Counted(t): Counted<CtrfTest>| {
            let retries = t.retries.unwrap_or(0);
            let status = match t.status.as_str() {
                "passed" if t.flaky == Some(true) || retries > 0 => Status::Flaky,
                "passed" => Status::Passed,
                "failed" => Status::Failed,
                // skipped, pending, other (todo and the like)
                _ => Status::Skipped,
            };
            let suite = match t.suite {
                Some(CtrfSuite::One(s)) => s,
                Some(CtrfSuite::Path(p)) => p.join(" > "),
                None => t
                    .file_path
                    .as_deref()
                    .map(|f| f.strip_prefix(prefix.as_str()).unwrap_or(f).to_string())
                    .unwrap_or_default(),
            };
            let suite = suite_of(&mut suites, "", &suite);
            push(report, &suite, t.name, t.duration, status);
            if let Some(c) = report.cases.last_mut() {
                c.retries = retries;
            }
            listed += 1;
            failing += u64::from(status.is_failure());
            super::spill_some(report, &mut sink);
            Ok(())
        },
    )?;
    de.end()?;
    let mut tests = listed;
    let (stated, stated_failed, time_s) = r.summary.map_or((None, None, None), |s| {
        let time = match (s.start, s.stop) {
            (Some(a), Some(b)) if b >= a && a > 0.0 => Some((b - a) / 1e3),
            _ => None,
        };
        (s.tests, s.failed, time)
    });
    if let Some(n) = stated
        && n != listed as u64
    {
        report.warnings.push(format!(
            "{name} says it holds {n} tests but lists {listed} results"
        ));
    }
    if let Some(f) = stated_failed
        && f != failing
    {
        report.warnings.push(format!(
            "{name} says {f} tests failed but lists {failing} failed results"
        ));
        if f > failing {
            // Never green on a failed run: the failures it counts and does
            // not list are one failed entry.
            let suite: Arc<str> = Arc::from(r.tool.map(|t| t.name).unwrap_or_default().as_str());
            let what = format!(
                "({} failures the report counts but does not list)",
                f - failing
            );
            push(report, &suite, what, None, Status::Failed);
            tests += 1;
        }
    }
    report.suites.push(Suite {
        name: name.to_string(),
        time_s,
        tests,
    });
    Ok(())
}
