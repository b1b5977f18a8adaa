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
        Some((start, limit)) if start.elapsed() > limit => Some(limit),
        _ => None,
    })
}

/// The error text for a read stopped by its budget.
pub fn message(limit: Duration) -> String {
    format!(
        "took longer than the {} s allowed for reading one upload, and was not read further",
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
}
