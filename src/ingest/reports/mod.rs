//! Test reports: per-test records (suite, class, name, duration, status)
//! from JUnit XML in its dialects, NUnit 3 and 2, TRX, xUnit.net v2 and
//! `go test -json`, read from files, `.gz` files and directories.
//!
//! XML is streamed (quick-xml); entity declarations are never expanded, so
//! an entity bomb cannot grow in memory. Implausible durations are kept out
//! of the numbers with a warning, not a failure.

pub mod bounded;
pub mod duration;
pub mod gojson;
pub mod xml;

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
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
    Skipped,
}

/// One test's identity: suite path, class and name. Suite and class are
/// shared between the many tests that have them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TestId {
    pub suite: Arc<str>,
    pub class: Arc<str>,
    pub name: String,
}

/// FxHash (rustc's): fast hashing of the many short test identities; the
/// keys come from files, not from an adversary who could force collisions
/// at scale (and a collision only costs time).
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes([
                chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
            ]);
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        for &b in chunks.remainder() {
            self.write_u8(b);
        }
    }
    fn write_u8(&mut self, b: u8) {
        self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type FxBuild = BuildHasherDefault<FxHasher>;

/// A test id for duplicate detection, with its hash computed once: suite
/// and class strings are shared, so each distinct one is hashed once
/// (cached by address) and combined with the name's hash.
struct IdKey<'a> {
    id: &'a TestId,
    hash: u64,
}

impl PartialEq for IdKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.id == other.id
    }
}
impl Eq for IdKey<'_> {}

impl std::hash::Hash for IdKey<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

fn fx(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.write_usize(bytes.len());
    h.finish()
}

impl TestId {
    /// "suite :: class :: name", leaving out empty or repeated parts.
    pub fn display(&self) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for p in [&*self.suite, &*self.class, self.name.as_str()] {
            if !p.is_empty() && !parts.contains(&p) {
                parts.push(p);
            }
        }
        parts.join(" :: ")
    }
}

/// One test's result in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    pub id: TestId,
    /// Seconds; `None` when missing or implausible (see the warnings).
    pub duration_s: Option<f64>,
    pub status: Status,
    /// Extra executions of the same identity (retries, pytest teardown errors).
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
}

impl Report {
    /// Sum of test durations, leaves only (Go parents include their subtests).
    pub fn total_s(&self) -> f64 {
        self.cases
            .iter()
            .filter(|c| !c.has_children)
            .filter_map(|c| c.duration_s)
            .sum()
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

    /// Merge duplicate identities: durations add up, the last status wins
    /// (a failure followed by a pass is flaky).
    pub fn merge_duplicates(&mut self) {
        // First pass on borrowed ids: which later cases repeat an earlier one.
        let mut first: HashMap<IdKey, usize, FxBuild> =
            HashMap::with_capacity_and_hasher(self.cases.len(), FxBuild::default());
        let mut shared: HashMap<usize, u64, FxBuild> = HashMap::default();
        let mut hash_shared = |a: &Arc<str>| {
            *shared
                .entry(Arc::as_ptr(a) as *const u8 as usize)
                .or_insert_with(|| fx(a.as_bytes()))
        };
        let mut repeats: Vec<(usize, usize)> = Vec::new();
        for (i, c) in self.cases.iter().enumerate() {
            let hash = hash_shared(&c.id.suite).rotate_left(21)
                ^ hash_shared(&c.id.class).rotate_left(42)
                ^ fx(c.id.name.as_bytes());
            match first.entry(IdKey { id: &c.id, hash }) {
                std::collections::hash_map::Entry::Occupied(f) => repeats.push((i, *f.get())),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert(i);
                }
            }
        }
        drop(first);
        if repeats.is_empty() {
            return;
        }
        let mut gone = vec![false; self.cases.len()];
        for &(i, f) in &repeats {
            let c = self.cases[i].clone();
            let m = &mut self.cases[f];
            m.retries += 1 + c.retries;
            m.duration_s = match (m.duration_s, c.duration_s) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            m.status = match (m.status, c.status) {
                (Status::Failed | Status::Errored | Status::Flaky, Status::Passed) => Status::Flaky,
                (Status::Passed, Status::Errored) => Status::Errored, // pytest call + teardown error
                (_, s) => s,
            };
            m.has_children |= c.has_children;
            gone[i] = true;
        }
        let mut k = 0;
        self.cases.retain(|_| {
            k += 1;
            !gone[k - 1]
        });
        self.warnings.push(format!(
            "{} test results repeat an earlier identity (retries, or pytest teardown errors): their durations were added and the last status kept",
            repeats.len()
        ));
    }
}

/// What a file holds, from its first bytes.
fn sniff(head: &[u8]) -> Option<&'static str> {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('<') {
        Some("xml")
    } else if t.starts_with('{') && t.contains("\"Action\"") {
        Some("go-json")
    } else {
        None
    }
}

/// Read a report file (plain or gzip), appending to `report`.
pub fn read_file(path: &Path, report: &mut Report) -> Result<(), IngestError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| IngestError::io(&name, e))?;
    read_reader(
        Box::new(std::io::BufReader::with_capacity(1 << 16, file)),
        &name,
        report,
    )
}

/// Read a report already in memory (plain or gzip), named `name` in errors.
fn read_bytes(bytes: &[u8], name: &str, report: &mut Report) -> Result<(), IngestError> {
    read_reader(Box::new(bytes), name, report)
}

fn read_reader(
    mut reader: Box<dyn std::io::BufRead + '_>,
    name: &str,
    report: &mut Report,
) -> Result<(), IngestError> {
    let name = name.to_string();
    let head = reader
        .fill_buf()
        .map_err(|e| IngestError::io(&name, e))?
        .to_vec();
    if head.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::read::GzDecoder::new(reader);
        reader = Box::new(std::io::BufReader::with_capacity(1 << 16, gz));
    }
    let head = reader
        .fill_buf()
        .map_err(|e| IngestError::io(&name, e))?
        .to_vec();
    report.sources.push(name.clone());
    match sniff(&head) {
        Some("xml") => xml::read(reader, &name, report),
        Some("go-json") => gojson::read(reader, &name, report),
        _ if head.is_empty() => Err(IngestError::at(&name, None, "is empty: expected a test report".into())),
        _ => Err(IngestError::at(
            &name,
            None,
            "is not a test report: expected JUnit, NUnit, TRX or xUnit XML, or `go test -json` output".into(),
        )),
    }
}

/// Files a path stands for: the file itself, or every report-looking file
/// under a directory (recursively, sorted).
pub fn expand(path: &Path) -> Result<Vec<PathBuf>, IngestError> {
    let name = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| IngestError::io(&name, e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
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
                if [".xml", ".trx", ".json", ".jsonl", ".ndjson"]
                    .iter()
                    .any(|ext| n.ends_with(ext))
                {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(IngestError::at(
            &name,
            None,
            "is a directory without report files (*.xml, *.trx, *.json, .gz)".into(),
        ));
    }
    Ok(out)
}

/// Read one run: files and directories, merged.
pub fn read_run(paths: &[PathBuf], keep_going: bool) -> Result<Report, IngestError> {
    let mut report = Report::default();
    for p in paths {
        for f in expand(p)? {
            let mark = (
                report.cases.len(),
                report.suites.len(),
                report.sources.len(),
            );
            if let Err(e) = read_file(&f, &mut report) {
                if keep_going {
                    // A file counts whole or not at all.
                    report.cases.truncate(mark.0);
                    report.suites.truncate(mark.1);
                    report.sources.truncate(mark.2);
                    report.warnings.push(format!("skipped {e}"));
                } else {
                    return Err(e);
                }
            }
        }
    }
    report.merge_duplicates();
    report.mark_parents();
    if report.cases.is_empty() {
        let what = paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(IngestError::at(&what, None, "holds no test results".into()));
    }
    Ok(report)
}

/// Read one report held in memory (an upload's body) as a run.
pub fn read_run_bytes(bytes: &[u8], name: &str) -> Result<Report, IngestError> {
    let mut report = Report::default();
    read_bytes(bytes, name, &mut report)?;
    report.merge_duplicates();
    report.mark_parents();
    if report.cases.is_empty() {
        return Err(IngestError::at(name, None, "holds no test results".into()));
    }
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
    }

    #[test]
    fn bad_reports_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let cases: [(&str, &str, &str); 6] = [
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
            ("zero.xml", "<testsuites></testsuites>", "no test results"),
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
}
