//! A cap on how much of a report one token may span, so that memory stays flat on any
//! input: a 2 GB file with no `<` (one giant text node) or no newline (one giant
//! `go test -json` line) is refused after [`TOKEN_LIMIT`] bytes instead of being buffered.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

/// The longest single XML event or NDJSON line accepted (64 MiB: far above any real
/// stack trace or captured output).
pub const TOKEN_LIMIT: u64 = 64 << 20;

/// A `BufRead` that fails once more than `limit` bytes were consumed since the last
/// [`Budget::reset`].
pub struct Bounded<R> {
    inner: R,
    used: Rc<Cell<u64>>,
    limit: u64,
}

/// The handle that resets the count (after each complete token).
#[derive(Clone)]
pub struct Budget(Rc<Cell<u64>>);

impl Budget {
    pub fn reset(&self) {
        self.0.set(0);
    }
}

impl<R> Bounded<R> {
    pub fn new(inner: R, limit: u64) -> (Self, Budget) {
        let used = Rc::new(Cell::new(0));
        (
            Bounded {
                inner,
                used: used.clone(),
                limit,
            },
            Budget(used),
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
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        self.used.set(self.used.get() + n as u64);
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
}
