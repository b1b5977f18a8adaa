//! A time budget for reading one input, set by whoever reads on behalf of someone
//! else (the server, for each upload). Readers call [`over`] every few thousand
//! events; when the budget has run out they stop with an error instead of holding a
//! thread for as long as a crafted body can make them. Reading is linear in the
//! input's size, so this is a second line of defence behind the body-size limit.

use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static BUDGET: Cell<Option<(Instant, Duration)>> = const { Cell::new(None) };
}

/// Set when the whole process is stopping: every budget has run out.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// End every budget now, on every thread (a server told to stop): reads
/// and stores in flight stop at their next check and roll back.
pub fn stop_all() {
    STOPPING.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// While the guard lives, reads on this thread stop once `limit` has passed.
pub struct Guard {
    before: Option<(Instant, Duration)>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.before));
    }
}

/// Start a budget of `limit` for reads on this thread, from now.
pub fn start(limit: Duration) -> Guard {
    let before = BUDGET.with(|b| b.replace(Some((Instant::now(), limit))));
    Guard { before }
}

/// `Some(limit)` when this thread's budget has run out.
pub fn over() -> Option<Duration> {
    BUDGET.with(|b| match b.get() {
        Some(_) if STOPPING.load(std::sync::atomic::Ordering::Relaxed) => Some(Duration::ZERO),
        Some((start, limit)) if start.elapsed() > limit => Some(limit),
        _ => None,
    })
}

/// The error text for a read stopped by its budget.
pub fn message(limit: Duration) -> String {
    if limit.is_zero() {
        return "was not read and stored: the server is stopping; nothing was stored".into();
    }
    format!(
        "took longer than the {} s allowed for reading and storing one upload (--read-budget); \
         nothing was stored",
        limit.as_secs_f64()
    )
}

/// Every `EVERY` events, the check costs one clock read.
pub const EVERY: u64 = 4096;

/// For the `n`th event (line, element) of a read: the error text when this is a
/// checking point and the budget has run out.
pub fn check(n: u64) -> Option<String> {
    if n % EVERY == 0 {
        over().map(message)
    } else {
        None
    }
}

/// A reader that checks this thread's budget every MiB it passes on, for
/// readers that hand the whole input to a parser with no events of their own
/// (a JSON document deserialised at once).
pub struct Timed<R> {
    inner: R,
    since: usize,
}

impl<R> Timed<R> {
    pub fn new(inner: R) -> Self {
        Timed { inner, since: 0 }
    }

    fn passed(&mut self, n: usize) -> std::io::Result<()> {
        self.since += n;
        if self.since >= 1 << 20 {
            self.since = 0;
            if let Some(l) = over() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    message(l),
                ));
            }
        }
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for Timed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.passed(n)?;
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Timed<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.since >= 1 << 20 {
            self.passed(0)?;
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.since += amt;
        self.inner.consume(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_runs_out_and_ends_with_its_guard() {
        assert_eq!(over(), None);
        {
            let _g = start(Duration::from_millis(1));
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(over(), Some(Duration::from_millis(1)));
            assert!(message(Duration::from_millis(1500)).contains("1.5 s"));
        }
        assert_eq!(over(), None);
    }

    #[test]
    fn a_timed_reader_stops_a_read_past_its_budget() {
        use std::io::Read;
        let _g = start(Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(5));
        let mut r = Timed::new(std::io::repeat(b' ').take(4 << 20));
        let e = std::io::copy(&mut r, &mut std::io::sink()).unwrap_err();
        assert!(e.to_string().contains("took longer"), "{e}");
    }
}
