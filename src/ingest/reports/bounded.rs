//! A cap on how much of a report one token may span, so that memory stays flat on any
//! input: a 2 GB file with no `<` (one giant text node) or no newline (one giant
//! `go test -json` line) is refused after [`TOKEN_LIMIT`] bytes instead of being buffered.
//! It also counts lines as bytes go by, so that an error at a byte offset can be named by
//! line and column without keeping the file.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// The longest single XML event or NDJSON line accepted (64 MiB: far above any real
/// stack trace or captured output).
pub const TOKEN_LIMIT: u64 = 64 << 20;

/// A `BufRead` that fails once more than `limit` bytes were consumed since the last
/// [`Budget::reset`].
pub struct Bounded<R> {
    inner: R,
    /// Bytes consumed, and bytes whose newlines were counted (read ahead of
    /// those consumed).
    consumed: u64,
    seen: u64,
    used: Rc<Cell<u64>>,
    lines: Rc<RefCell<Lines>>,
    limit: u64,
}

/// Newlines seen so far: their count and the offsets of the most recent ones (enough to
/// place an error inside the token being parsed).
#[derive(Default)]
struct Lines {
    offset: u64,
    count: u64,
    recent: VecDeque<u64>,
}

const RECENT_NEWLINES: usize = 1 << 16;

/// The handle that resets the count (after each complete token) and places offsets.
#[derive(Clone)]
pub struct Budget(Rc<Cell<u64>>, Rc<RefCell<Lines>>);

impl Budget {
    pub fn reset(&self) {
        self.0.set(0);
    }

    /// The 1-based line and column (in bytes) of byte `offset` of the stream, when it
    /// was read recently enough to be placed.
    pub fn locate(&self, offset: u64) -> Option<(u64, u64)> {
        let l = self.1.borrow();
        if offset > l.offset {
            return None;
        }
        // Newlines at or after `offset` were counted but come later.
        let later = l.recent.iter().rev().take_while(|&&n| n >= offset).count();
        if later == l.recent.len() && (l.count as usize) > l.recent.len() {
            return None; // older than what is kept
        }
        let line_start = l
            .recent
            .iter()
            .rev()
            .find(|&&n| n < offset)
            .map_or(0, |&n| n + 1);
        Some((l.count - later as u64 + 1, offset - line_start + 1))
    }
}

impl<R> Bounded<R> {
    pub fn new(inner: R, limit: u64) -> (Self, Budget) {
        let used = Rc::new(Cell::new(0));
        let lines = Rc::new(RefCell::new(Lines::default()));
        (
            Bounded {
                inner,
                consumed: 0,
                seen: 0,
                used: used.clone(),
                lines: lines.clone(),
                limit,
            },
            Budget(used, lines),
        )
    }
}

impl<R: BufRead> Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Bounded<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.used.get() > self.limit {
            return Err(io::Error::other(format!(
                "one element, text or line is longer than {} MiB",
                self.limit >> 20
            )));
        }
        let buf = self.inner.fill_buf()?;
        // Newlines are counted once, as bytes first come into the buffer (one
        // pass over each buffer's worth, not one per consume: a parser calls
        // consume many times an element).
        let end = self.consumed + buf.len() as u64;
        if end > self.seen {
            let mut l = self.lines.borrow_mut();
            let fresh =
                usize::try_from(self.seen.saturating_sub(self.consumed)).unwrap_or(buf.len());
            let base = self.seen;
            for i in memchr::memchr_iter(b'\n', &buf[fresh.min(buf.len())..]) {
                l.count += 1;
                if l.recent.len() == RECENT_NEWLINES {
                    l.recent.pop_front();
                }
                l.recent.push_back(base + i as u64);
            }
            l.offset = end;
            self.seen = end;
        }
        Ok(buf)
    }

    fn consume(&mut self, n: usize) {
        self.used.set(self.used.get() + n as u64);
        self.consumed += n as u64;
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fails_past_the_limit_until_reset() {
        let data = [b'a'; 100];
        // A reader that hands out 8 bytes at a time, like a small buffer.
        let (mut r, budget) = Bounded::new(std::io::BufReader::with_capacity(8, &data[..]), 10);
        let mut chunk = [0u8; 8];
        r.read_exact(&mut chunk).unwrap();
        budget.reset();
        r.read_exact(&mut chunk).unwrap();
        r.read_exact(&mut chunk).unwrap(); // 16 used: still under until the next fill
        let err = r.read_exact(&mut chunk).unwrap_err();
        assert!(err.to_string().contains("longer than 0 MiB"), "{err}");
        budget.reset();
        assert_eq!(r.read(&mut chunk).unwrap(), 8);
    }

    #[test]
    fn places_offsets_by_line_and_column() {
        let data = b"ab\ncd\n\nefg";
        let (mut r, budget) = Bounded::new(std::io::BufReader::with_capacity(3, &data[..]), 100);
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        assert_eq!(budget.locate(0), Some((1, 1)));
        assert_eq!(budget.locate(1), Some((1, 2)));
        assert_eq!(budget.locate(3), Some((2, 1)));
        assert_eq!(budget.locate(7), Some((4, 1)));
        assert_eq!(budget.locate(9), Some((4, 3)));
        assert_eq!(budget.locate(99), None);
    }
}
