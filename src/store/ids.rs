//! Test ids a server has already looked up, shared by its pool's stores.
//!
//! A test's id never changes once its row is committed (tardy deletes no
//! test and no series), so a server that stored a suite's 2,000 test names
//! once need not look them up again in every later upload: that lookup was
//! 43% of the server's CPU for a 2,000-test JUnit upload (SQLite, 500 names
//! an `IN` list). Ids are remembered only after the transaction that found
//! or inserted them commits, so a rolled-back insert is never remembered.
//! Memory is bounded: past the cap the map is emptied and warms up again.

use std::collections::HashMap;
use std::sync::Mutex;

/// The names' map: foldhash, not SipHash (a lookup per test of every upload;
/// the names come from a write-token holder's reports).
type Names = foldhash::HashMap<Box<str>, i64>;

/// Ids of one batch's test names, by name.
pub type IdsByName<'n> = foldhash::HashMap<&'n str, i64>;

/// Bytes a remembered name costs beside its text (its box, id and slot).
const PER_NAME: usize = 64;

/// Test ids by series and name, bounded to `cap` bytes.
pub struct TestIds {
    inner: Mutex<Inner>,
    cap: usize,
}

#[derive(Default)]
struct Inner {
    by_series: HashMap<i64, Names>,
    held: usize,
}

/// Ids found or made in one transaction, to remember once it commits.
#[derive(Default)]
pub struct Learned(Vec<(i64, Box<str>, i64)>);

impl Learned {
    pub fn push(&mut self, series_id: i64, name: &str, id: i64) {
        self.0.push((series_id, name.into(), id));
    }
}

impl TestIds {
    /// A map of at most `cap_bytes` (names and their overhead).
    pub fn new(cap_bytes: usize) -> TestIds {
        TestIds {
            inner: Mutex::new(Inner::default()),
            cap: cap_bytes,
        }
    }

    /// Fill `out` with the ids of `names` (of `series_id`) already known.
    pub fn known<'n>(&self, series_id: i64, names: &[&'n str], out: &mut IdsByName<'n>) {
        let Ok(inner) = self.inner.lock() else {
            return;
        };
        let Some(map) = inner.by_series.get(&series_id) else {
            return;
        };
        for n in names {
            if let Some(id) = map.get(*n) {
                out.insert(n, *id);
            }
        }
    }

    /// Remember what a committed transaction learned.
    pub fn remember(&self, learned: Learned) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        for (series, name, id) in learned.0 {
            let cost = name.len() + PER_NAME;
            if inner.held + cost > self.cap {
                inner.by_series.clear();
                inner.held = 0;
            }
            if cost > self.cap {
                continue;
            }
            if inner
                .by_series
                .entry(series)
                .or_default()
                .insert(name, id)
                .is_none()
            {
                inner.held += cost;
            }
        }
    }

    /// Names remembered now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.inner
            .lock()
            .map(|i| i.by_series.values().map(|m| m.len()).sum())
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_come_back_and_the_cap_holds() {
        let ids = TestIds::new(10 * (PER_NAME + 2));
        let mut l = Learned::default();
        for i in 0..8 {
            l.push(1, &format!("t{i}"), 100 + i);
        }
        l.push(2, "t0", 7);
        ids.remember(l);
        let mut out = IdsByName::default();
        ids.known(1, &["t3", "t9", "t0"], &mut out);
        assert_eq!(out.get("t3"), Some(&103));
        assert_eq!(out.get("t0"), Some(&100));
        assert_eq!(out.get("t9"), None);
        let mut out = IdsByName::default();
        ids.known(2, &["t0"], &mut out);
        assert_eq!(out.get("t0"), Some(&7));
        // Past the cap the map starts again: never more than the cap.
        let mut l = Learned::default();
        for i in 0..25 {
            l.push(3, &format!("u{i}"), i);
        }
        ids.remember(l);
        assert!((1..=10).contains(&ids.len()), "{}", ids.len());
    }
}
