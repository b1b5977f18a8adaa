//! Limits on what one input may *become*, set by whoever reads on behalf of
//! someone else (the server, for each upload), beside the time [`budget`]
//! (crate::ingest::budget). A body's size on the wire says little: 1 MB of
//! gzip can inflate to gigabytes, and a few bytes of repeated XML can list
//! millions of results. So the reading thread carries three caps:
//!
//! - `inflated`: bytes a compressed input may inflate to ([`Inflated`] wraps
//!   the decoder and fails past it);
//! - `results`: test results one read may produce (readers check it where
//!   they check the time budget, every few thousand events, and the JSON
//!   documents per result);
//! - `names`: distinct test names one upload may store (checked by whoever
//!   stores, [`names`]);
//! - `text`: bytes of test names one command may hold at once (`tests
//!   diff` keeps every name of both sides: [`hold_text`]), so that a million
//!   tests named with a kilobyte each do not take gigabytes.
//!
//! The first limit reached is remembered ([`hit`]), so the server can answer
//! 413 naming it rather than a generic "cannot read".

use std::cell::Cell;
use std::io::{self, Read};

/// The caps of one read. Any may be `u64::MAX` (no cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The command line's own defaults ([`cli`]), named with its flags in
    /// errors; else a server's, named with its options.
    pub cli: bool,
    /// Bytes a compressed input may inflate to.
    pub inflated: u64,
    /// Test results one read may produce.
    pub results: u64,
    /// Distinct test names one upload may store.
    pub names: u64,
    /// Series one upload may store (columns of a CSV, benchmarks of a
    /// results file): each costs its own statements and its own check.
    pub series: u64,
    /// Bytes of test names one command may hold at once.
    pub text: u64,
}

/// The process's limits for threads that set none (the command line sets
/// them once; its reading threads inherit them).
static DEFAULT: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();

impl Limits {
    /// The command line's defaults: generous for real reports (a JUnit file
    /// of a million test cases reads, 1 GiB inflated), and memory bounded
    /// whatever the input (a gzip bomb of ten million test cases is refused
    /// within its first hundred MiB of results).
    pub fn cli(inflated_mib: u64, results: u64) -> Limits {
        Limits {
            cli: true,
            inflated: inflated_mib.saturating_mul(1 << 20),
            results,
            names: results,
            series: 100_000,
            text: CLI_NAMES_MIB << 20,
        }
    }

    /// These limits with `mib` MiB of test names held at once.
    pub fn with_names_mib(self, mib: u64) -> Limits {
        Limits {
            text: mib.saturating_mul(1 << 20),
            ..self
        }
    }

    /// A server's caps (`tardy serve --max-inflated-mib ... --max-series`),
    /// each at least 1.
    pub fn server(
        inflated_mib: u64,
        results: u64,
        names: u64,
        series: u64,
    ) -> Result<Limits, String> {
        if inflated_mib == 0 || results == 0 || names == 0 || series == 0 {
            return Err(
                "--max-inflated-mib, --max-results, --max-tests and --max-series must be at least 1"
                    .into(),
            );
        }
        Ok(Limits {
            cli: false,
            inflated: inflated_mib.saturating_mul(1 << 20),
            results,
            names,
            series,
            text: u64::MAX,
        })
    }
}

/// The command line's default inflation cap, MiB.
pub const CLI_INFLATED_MIB: u64 = 1024;
/// The command line's default cap on results of one read.
pub const CLI_RESULTS: u64 = 1_000_000;
/// The command line's default cap on test names held at once, MiB: a
/// million distinct tests named with 134 bytes on average, and with the
/// rest of a `tests diff` of two million-test runs, under 256 MiB.
pub const CLI_NAMES_MIB: u64 = 128;

/// Set the limits of every thread that sets none (once; later calls are
/// ignored).
pub fn set_default(limits: Limits) {
    let _ = DEFAULT.set(limits);
}

thread_local! {
    static LIMITS: Cell<Option<Limits>> = const { Cell::new(None) };
    static RESULTS: Cell<u64> = const { Cell::new(0) };
    static HIT: Cell<Option<Which>> = const { Cell::new(None) };
    static TEXT: Cell<u64> = const { Cell::new(0) };
    static READ_TEXT: Cell<u64> = const { Cell::new(0) };
}

/// Which limit stopped a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Inflated(u64),
    Results(u64),
    Names(u64),
    Series(u64),
    Text(u64),
}

impl Which {
    /// What was over, and the server option that sets it (or the command
    /// line's flag, when `cli`).
    pub fn message(self) -> String {
        if current().is_some_and(|l| l.cli) {
            return self.cli_message();
        }
        match self {
            Which::Inflated(n) => format!(
                "inflates to more than {} MiB, this server's limit for a compressed body \
                 (--max-inflated-mib); nothing was stored",
                n >> 20
            ),
            Which::Results(n) => format!(
                "holds more than {n} test results, this server's limit for one upload \
                 (--max-results); nothing was stored"
            ),
            Which::Names(n) => format!(
                "names more than {n} distinct tests, this server's limit for one upload \
                 (--max-tests); nothing was stored"
            ),
            Which::Series(n) => format!(
                "holds more than {n} series (columns of a CSV, benchmarks), this server's \
                 limit for one upload (--max-series); nothing was stored"
            ),
            Which::Text(n) => format!(
                "names its tests with more than {} MiB in all, this server's limit; nothing was stored",
                n >> 20
            ),
        }
    }
}

impl Which {
    fn cli_message(self) -> String {
        match self {
            Which::Inflated(n) => format!(
                "inflates to more than {} MiB, tardy's limit for a compressed input (raise it with `tardy --max-inflated-mib N ...`)",
                n >> 20
            ),
            Which::Results(n) | Which::Names(n) => format!(
                "holds more than {n} test results, tardy's limit for one input (raise it with `tardy --max-results N ...`)"
            ),
            Which::Series(n) => format!(
                "holds more than {n} series (columns of a CSV, benchmarks), tardy's limit for one input"
            ),
            Which::Text(n) => format!(
                "brings the test names held to more than {} MiB, tardy's limit (raise it with `tardy --max-names-mib N ...`)",
                n >> 20
            ),
        }
    }
}

/// While the guard lives, reads on this thread keep to its limits.
pub struct Guard {
    before: Option<Limits>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        LIMITS.with(|l| l.set(self.before));
    }
}

/// Apply `limits` to reads on this thread until the guard drops; counts
/// start from zero.
pub fn start(limits: Limits) -> Guard {
    RESULTS.with(|r| r.set(0));
    TEXT.with(|t| t.set(0));
    HIT.with(|h| h.set(None));
    Guard {
        before: LIMITS.with(|l| l.replace(Some(limits))),
    }
}

/// A new input begins on this thread (a file, an upload): its results
/// count from zero against the cap on one input's results.
pub fn begin_input() {
    RESULTS.with(|r| r.set(0));
}

/// This thread's limits, if any were set (or the process's default).
pub fn current() -> Option<Limits> {
    LIMITS.with(|l| l.get()).or_else(|| DEFAULT.get().copied())
}

/// The first limit a read on this thread ran into since [`start`].
pub fn hit() -> Option<Which> {
    HIT.with(|h| h.get())
}

fn record(w: Which) -> String {
    HIT.with(|h| {
        if h.get().is_none() {
            h.set(Some(w));
        }
    });
    w.message()
}

/// A reader holding `n` results so far: the error text once that is over
/// the cap (or once the names held are: see [`hold_text`]).
pub fn results(n: usize) -> Option<String> {
    let l = current()?;
    if n as u64 > l.results {
        return Some(record(Which::Results(l.results)));
    }
    text_over(l)
}

/// Whoever keeps test names (a `tests diff`) holds `bytes` of them in all
/// now: the error text when that is over the cap. Readers on this thread
/// then stop at their next check ([`check`], [`one_result`]), so a run is
/// refused within a few thousand results of the cap.
pub fn hold_text(bytes: u64) -> Option<String> {
    TEXT.with(|t| t.set(bytes));
    text_over(current()?)
}

/// A report read whole on this thread keeps `bytes` more of test names
/// (its cases': [`Report::push_case`]); they count with the names a diff
/// holds, and readers stop at their next check once the two are over the
/// cap. A run whose reruns must be merged, or an Allure folder, is held
/// whole, so this is what bounds it.
///
/// [`Report::push_case`]: crate::ingest::reports::Report::push_case
pub fn hold_read_text(bytes: u64) {
    READ_TEXT.with(|t| t.set(t.get().saturating_add(bytes)));
}

/// A report read on this thread let go of `bytes` of names (it dropped,
/// or handed its cases on).
pub fn release_read_text(bytes: u64) {
    READ_TEXT.with(|t| t.set(t.get().saturating_sub(bytes)));
}

fn text_over(l: Limits) -> Option<String> {
    let held = TEXT
        .with(|t| t.get())
        .saturating_add(READ_TEXT.with(|t| t.get()));
    (held > l.text).then(|| record(Which::Text(l.text)))
}

/// For the `n`th event of a read holding `results` results so far: the
/// error text when this is a checking point (every [`budget::EVERY`]
/// events) and the time budget has run out or the results are over the cap.
///
/// [`budget::EVERY`]: crate::ingest::budget::EVERY
pub fn check(n: u64, results_so_far: usize) -> Option<String> {
    crate::ingest::budget::check(n).or_else(|| {
        if n % crate::ingest::budget::EVERY == 0 {
            results(results_so_far)
        } else {
            None
        }
    })
}

/// One more result read (for readers that cannot see a running count, such
/// as a JSON document being deserialised): the error text past the cap.
pub fn one_result() -> Option<String> {
    let cap = current()?.results;
    let n = RESULTS.with(|r| {
        let n = r.get() + 1;
        r.set(n);
        n
    });
    if n > cap {
        return Some(record(Which::Results(cap)));
    }
    if n % 1024 == 0 {
        return text_over(current()?);
    }
    None
}

/// An upload naming `n` distinct tests: the error text over the cap.
pub fn names(n: usize) -> Option<String> {
    let cap = current()?.names;
    (n as u64 > cap).then(|| record(Which::Names(cap)))
}

/// An upload of `n` series: the error text over the cap.
pub fn series(n: usize) -> Option<String> {
    let cap = current()?.series;
    (n as u64 > cap).then(|| record(Which::Series(cap)))
}

/// A decoder's output, failing once it passes this thread's `inflated` cap
/// (no cap when none is set).
pub struct Inflated<R> {
    inner: R,
    read: u64,
    cap: Option<u64>,
}

impl<R> Inflated<R> {
    pub fn new(inner: R) -> Self {
        Inflated {
            inner,
            read: 0,
            cap: current().map(|l| l.inflated),
        }
    }
}

impl<R: Read> Read for Inflated<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if let Some(cap) = self.cap
            && self.read > cap
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                record(Which::Inflated(cap)),
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_apply_while_the_guard_lives_and_name_the_option() {
        assert_eq!(results(usize::MAX), None);
        {
            let _g = start(Limits {
                cli: false,
                inflated: 1 << 20,
                results: 3,
                names: 2,
                series: 1,
                text: 100,
            });
            assert_eq!(results(3), None);
            assert!(results(4).unwrap().contains("--max-results"));
            for _ in 0..3 {
                assert_eq!(one_result(), None);
            }
            assert!(one_result().is_some());
            assert!(names(3).unwrap().contains("--max-tests"));
            assert!(series(2).unwrap().contains("--max-series"));
            // The first limit reached is the one remembered.
            assert_eq!(hit(), Some(Which::Results(3)));
            let mut r = Inflated::new(io::repeat(b'x'));
            let mut sink = Vec::new();
            let e = r.read_to_end(&mut sink).unwrap_err();
            assert!(e.to_string().contains("1 MiB"), "{e}");
            assert!(sink.len() <= 1 << 20);
        }
        assert_eq!(current(), None);
        assert_eq!(one_result(), None);
        // The command line's limits name its flags.
        let _g = start(Limits::cli(1, 2));
        assert!(results(3).unwrap().contains("--max-results"));
        let mut r = Inflated::new(io::repeat(b'x'));
        let e = r.read_to_end(&mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("--max-inflated-mib"), "{e}");
        // Names held over the cap stop the reader at its next check.
        let _g = start(Limits::cli(1, 1_000_000).with_names_mib(1));
        assert_eq!(hold_text(1 << 20), None);
        assert_eq!(results(10), None);
        assert!(
            hold_text((1 << 20) + 1)
                .unwrap()
                .contains("--max-names-mib")
        );
        assert!(results(10).unwrap().contains("--max-names-mib"));
        let mut stopped = false;
        for _ in 0..2048 {
            stopped |= one_result().is_some();
        }
        assert!(stopped);
        // A new read starts from nothing held.
        let _g = start(Limits::cli(1, 1_000_000).with_names_mib(1));
        assert_eq!(results(10), None);
    }
}
