//! A suite point's test durations in one value (`test_vectors.body`), so
//! the newest points of every test of a suite are read with one row per
//! point instead of one per test and point: what keeps a server's check of
//! a 100,000-test upload flat in the length of the history.
//!
//! The encoding: entries sorted by test id, each the LEB128 varint of its
//! id's distance from the previous id and the duration as a little-endian
//! IEEE single (seven significant digits: test durations carry at most six),
//! the whole in unpadded base64 so both SQLite and PostgreSQL hold it as
//! text.

use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD;

/// The body of `(test id, duration)` pairs (any order; a repeated id keeps
/// its last duration).
pub fn encode(entries: &[(i64, f64)]) -> String {
    let mut sorted: Vec<(i64, f64)> = entries.to_vec();
    sorted.sort_by_key(|e| e.0);
    sorted.dedup_by(|later, earlier| {
        if later.0 == earlier.0 {
            earlier.1 = later.1;
            true
        } else {
            false
        }
    });
    let mut bytes = Vec::with_capacity(sorted.len() * 6);
    let mut prev = 0i64;
    for (id, d) in sorted {
        let mut delta = (id - prev).max(0) as u64;
        prev = id;
        loop {
            let b = (delta & 0x7f) as u8;
            delta >>= 7;
            if delta == 0 {
                bytes.push(b);
                break;
            }
            bytes.push(b | 0x80);
        }
        bytes.extend_from_slice(&(d as f32).to_le_bytes());
    }
    STANDARD_NO_PAD.encode(bytes)
}

/// The pairs of a body, in id order; `None` when it is not one this
/// module wrote.
pub fn decode(body: &str) -> Option<Vec<(i64, f32)>> {
    let bytes = STANDARD_NO_PAD.decode(body).ok()?;
    let mut out = Vec::with_capacity(bytes.len() / 5);
    let (mut i, mut prev) = (0usize, 0i64);
    while i < bytes.len() {
        let (mut delta, mut shift) = (0u64, 0u32);
        loop {
            let b = *bytes.get(i)?;
            i += 1;
            if shift > 56 {
                return None;
            }
            delta |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let d = f32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?);
        i += 4;
        prev = prev.checked_add(i64::try_from(delta).ok()?)?;
        out.push((prev, d));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_id_order_last_duplicate_wins() {
        let body = encode(&[(300, 0.5), (7, 1.25), (100_000, 2.0), (7, 3.0)]);
        assert_eq!(
            decode(&body),
            Some(vec![(7, 3.0), (300, 0.5), (100_000, 2.0)])
        );
        assert_eq!(decode(&encode(&[])), Some(vec![]));
        assert_eq!(decode("!!"), None);
        // A truncated entry is refused, not read short.
        let mut cut = encode(&[(5, 1.0)]);
        cut.pop();
        cut.pop();
        assert_eq!(decode(&cut), None);
    }
}
