//! Test identities stored once, compactly: every test name of every run of
//! both sides of a `tests diff` lives in one text arena, suites and classes
//! are interned (a few hundred distinct strings for a million tests), and
//! an identity is a `u32`. A million tests cost about 40 bytes each here
//! instead of the ~170 of a read report's `TestCase`s, so two sides of a
//! million tests compare in bounded memory (the read reports are dropped
//! run by run).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::Hasher;
use std::sync::Arc;

use crate::ingest::reports::{FxBuild, TestId, hasher};

/// No identity (the end of a hash chain).
const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Ident {
    suite: u32,
    class: u32,
    start: usize,
    len: u32,
    nth: u32,
    /// The next identity with the same hash ([`NONE`]: the last).
    next: u32,
}

/// The identities of a diff's tests.
#[derive(Debug, Clone, Default)]
pub struct Names {
    arena: String,
    idents: Vec<Ident>,
    strs: Vec<Arc<str>>,
    /// Bytes of the distinct suites and classes in `strs`.
    strs_bytes: usize,
    by_str: HashMap<Arc<str>, u32, FxBuild>,
    by_hash: HashMap<u64, u32, FxBuild>,
}

impl Names {
    /// How many identities.
    pub fn len(&self) -> usize {
        self.idents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.idents.is_empty()
    }

    fn intern_str(&mut self, s: &Arc<str>) -> u32 {
        if let Some(&i) = self.by_str.get(s) {
            return i;
        }
        let i = self.strs.len() as u32;
        self.strs_bytes += s.len();
        self.strs.push(s.clone());
        self.by_str.insert(s.clone(), i);
        i
    }

    /// The identity of `id`, added when new.
    pub fn intern(&mut self, id: &TestId) -> u32 {
        let (suite, class) = (self.intern_str(&id.suite), self.intern_str(&id.class));
        let hash = {
            let mut h = hasher();
            h.write_u32(suite);
            h.write_u32(class);
            h.write(id.name.as_bytes());
            h.write_u32(id.nth);
            h.finish()
        };
        let first = self.by_hash.get(&hash).copied().unwrap_or(NONE);
        let mut at = first;
        while at != NONE {
            let e = self.idents[at as usize];
            if e.suite == suite && e.class == class && e.nth == id.nth && self.test(at) == id.name {
                return at;
            }
            at = e.next;
        }
        let i = self.idents.len() as u32;
        self.idents.push(Ident {
            suite,
            class,
            start: self.arena.len(),
            len: id.name.len() as u32,
            nth: id.nth,
            next: first,
        });
        self.arena.push_str(&id.name);
        self.by_hash.insert(hash, i);
        // Over the cap on names held, the reader stops at its next check.
        let _ = crate::ingest::limits::hold_text(self.text_bytes());
        i
    }

    /// Bytes of names held: the tests', the suites' and the classes'.
    pub fn text_bytes(&self) -> u64 {
        (self.arena.len() + self.strs_bytes) as u64
    }

    pub fn suite(&self, i: u32) -> &str {
        &self.strs[self.idents[i as usize].suite as usize]
    }

    pub fn class(&self, i: u32) -> &str {
        &self.strs[self.idents[i as usize].class as usize]
    }

    /// The test's own name.
    pub fn test(&self, i: u32) -> &str {
        let e = &self.idents[i as usize];
        &self.arena[e.start..e.start + e.len as usize]
    }

    pub fn nth(&self, i: u32) -> u32 {
        self.idents[i as usize].nth
    }

    /// "suite :: class :: name" as [`TestId::display`] writes it.
    pub fn display(&self, i: u32) -> String {
        display(self.suite(i), self.class(i), self.test(i), self.nth(i))
    }

    /// The order of [`TestId`]'s: suite, class, name, then which result.
    pub fn cmp(&self, a: u32, b: u32) -> Ordering {
        (self.suite(a).cmp(self.suite(b)))
            .then_with(|| self.class(a).cmp(self.class(b)))
            .then_with(|| self.test(a).cmp(self.test(b)))
            .then_with(|| self.nth(a).cmp(&self.nth(b)))
    }

    /// The lookup tables are not needed once every run is read.
    pub fn freeze(&mut self) {
        self.by_str = HashMap::default();
        self.by_hash = HashMap::default();
        self.arena.shrink_to_fit();
        self.idents.shrink_to_fit();
    }
}

/// "suite :: class :: name", leaving out empty or repeated parts, and " #N"
/// for the N-th result of a repeated identity (as [`TestId::display`]).
pub fn display(suite: &str, class: &str, name: &str, nth: u32) -> String {
    let mut parts: Vec<&str> = Vec::with_capacity(3);
    for p in [suite, class, name] {
        if !p.is_empty() && !parts.contains(&p) {
            parts.push(p);
        }
    }
    let mut s = parts.join(" :: ");
    if s.is_empty() {
        s.push_str("(unnamed)");
    }
    if nth > 0 {
        s.push_str(&format!(" #{}", nth + 1));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_found_again_and_displayed_as_test_ids() {
        let mut n = Names::default();
        let suite: Arc<str> = Arc::from("s");
        let a = TestId::new(suite.clone(), Arc::from("c"), "t".into());
        let mut b = a.clone();
        b.nth = 1;
        let other_arc = TestId::new(Arc::from("s"), Arc::from("c"), "t".into());
        let (ia, ib) = (n.intern(&a), n.intern(&b));
        assert_ne!(ia, ib);
        assert_eq!(n.intern(&other_arc), ia, "equal strings in other Arcs");
        assert_eq!(n.display(ib), b.display());
        assert_eq!(n.cmp(ia, ib), a.cmp(&b));
        let empty = TestId::new(Arc::from(""), Arc::from(""), String::new());
        let ie = n.intern(&empty);
        assert_eq!(n.display(ie), empty.display());
        assert_eq!(n.len(), 3);
    }
}
