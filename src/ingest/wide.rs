//! UTF-16 and UTF-32 text (Windows tools write XML reports in UTF-16), told
//! from its first bytes (a byte-order mark, or the zero bytes around an
//! ASCII `<` or `{` when an encoding declaration stands in for the mark)
//! and turned into UTF-8 as it is read, so every reader sees UTF-8 and
//! stays streamed and bounded.
//!
//! Written by hand: encoding_rs (the crate browsers use) has no UTF-32, and
//! the decoding is a few dozen lines of `char::decode_utf16`-style work.

use std::io::{self, Read};

/// A wide encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wide {
    Utf16Le,
    Utf16Be,
    Utf32Le,
    Utf32Be,
}

impl Wide {
    fn unit(self) -> usize {
        match self {
            Wide::Utf16Le | Wide::Utf16Be => 2,
            Wide::Utf32Le | Wide::Utf32Be => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Wide::Utf16Le => "UTF-16LE",
            Wide::Utf16Be => "UTF-16BE",
            Wide::Utf32Le => "UTF-32LE",
            Wide::Utf32Be => "UTF-32BE",
        }
    }
}

/// The wide encoding of text starting with `head`, and the length of its
/// byte-order mark; `None` for anything else (UTF-8 among it).
pub fn detect(head: &[u8]) -> Option<(Wide, usize)> {
    match head {
        [0xFF, 0xFE, 0, 0, ..] => Some((Wide::Utf32Le, 4)),
        [0, 0, 0xFE, 0xFF, ..] => Some((Wide::Utf32Be, 4)),
        [0xFF, 0xFE, ..] => Some((Wide::Utf16Le, 2)),
        [0xFE, 0xFF, ..] => Some((Wide::Utf16Be, 2)),
        // No mark: an ASCII first character between zero bytes.
        [c, 0, 0, 0, ..] if is_start(*c) => Some((Wide::Utf32Le, 0)),
        [0, 0, 0, c, ..] if is_start(*c) => Some((Wide::Utf32Be, 0)),
        [c, 0, d, 0, ..] if is_start(*c) && d.is_ascii() => Some((Wide::Utf16Le, 0)),
        [0, c, 0, d, ..] if is_start(*c) && d.is_ascii() => Some((Wide::Utf16Be, 0)),
        _ => None,
    }
}

fn is_start(c: u8) -> bool {
    matches!(c, b'<' | b'{' | b'[' | b' ' | b'\t' | b'\r' | b'\n')
}

/// UTF-8 of the wide text in `bytes` (after any mark), invalid sequences
/// as U+FFFD; a unit cut at the end is left out.
pub fn decode(bytes: &[u8], wide: Wide) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut d = Decoder::new(wide);
    d.push(bytes, &mut out);
    out
}

struct Decoder {
    wide: Wide,
    /// A high surrogate waiting for its pair.
    high: Option<u16>,
}

impl Decoder {
    fn new(wide: Wide) -> Decoder {
        Decoder { wide, high: None }
    }

    /// Decode whole units of `bytes` into `out`; returns the bytes used.
    fn push(&mut self, bytes: &[u8], out: &mut String) -> usize {
        let unit = self.wide.unit();
        let whole = bytes.len() / unit * unit;
        for u in bytes[..whole].chunks_exact(unit) {
            match self.wide {
                Wide::Utf16Le | Wide::Utf16Be => {
                    let v = if self.wide == Wide::Utf16Le {
                        u16::from_le_bytes([u[0], u[1]])
                    } else {
                        u16::from_be_bytes([u[0], u[1]])
                    };
                    match (self.high.take(), v) {
                        (Some(h), 0xDC00..=0xDFFF) => {
                            let c =
                                0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(v) - 0xDC00);
                            out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                        }
                        (h, 0xD800..=0xDBFF) => {
                            if h.is_some() {
                                out.push('\u{FFFD}');
                            }
                            self.high = Some(v);
                        }
                        (h, _) => {
                            if h.is_some() {
                                out.push('\u{FFFD}');
                            }
                            out.push(char::from_u32(u32::from(v)).unwrap_or('\u{FFFD}'));
                        }
                    }
                }
                Wide::Utf32Le | Wide::Utf32Be => {
                    let v = if self.wide == Wide::Utf32Le {
                        u32::from_le_bytes([u[0], u[1], u[2], u[3]])
                    } else {
                        u32::from_be_bytes([u[0], u[1], u[2], u[3]])
                    };
                    out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                }
            }
        }
        whole
    }
}

/// A reader of wide text that yields its UTF-8.
pub struct WideReader<R> {
    inner: R,
    decoder: Decoder,
    /// Raw bytes not yet decoded (a unit cut by a read).
    raw: Vec<u8>,
    /// Decoded text not yet handed out.
    text: String,
    at: usize,
    done: bool,
}

impl<R: Read> WideReader<R> {
    /// `inner` positioned after the byte-order mark (if any).
    pub fn new(inner: R, wide: Wide) -> WideReader<R> {
        WideReader {
            inner,
            decoder: Decoder::new(wide),
            raw: Vec::new(),
            text: String::new(),
            at: 0,
            done: false,
        }
    }
}

impl<R: Read> Read for WideReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at >= self.text.len() && !self.done {
            self.text.clear();
            self.at = 0;
            let mut chunk = [0u8; 16 * 1024];
            let n = self.inner.read(&mut chunk)?;
            if n == 0 {
                self.done = true;
                if !self.raw.is_empty() || self.decoder.high.is_some() {
                    // A cut unit or a lone surrogate at the end.
                    self.text.push('\u{FFFD}');
                    self.raw.clear();
                }
                break;
            }
            self.raw.extend_from_slice(&chunk[..n]);
            let used = self.decoder.push(&self.raw, &mut self.text);
            self.raw.drain(..used);
        }
        let rest = &self.text.as_bytes()[self.at..];
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(s: &str, wide: Wide, mark: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let units: Vec<u32> = match wide {
            Wide::Utf16Le | Wide::Utf16Be => {
                let mut v: Vec<u32> = s.encode_utf16().map(u32::from).collect();
                if mark {
                    v.insert(0, 0xFEFF);
                }
                v
            }
            _ => {
                let mut v: Vec<u32> = s.chars().map(u32::from).collect();
                if mark {
                    v.insert(0, 0xFEFF);
                }
                v
            }
        };
        for u in units {
            match wide {
                Wide::Utf16Le => out.extend_from_slice(&(u as u16).to_le_bytes()),
                Wide::Utf16Be => out.extend_from_slice(&(u as u16).to_be_bytes()),
                Wide::Utf32Le => out.extend_from_slice(&u.to_le_bytes()),
                Wide::Utf32Be => out.extend_from_slice(&u.to_be_bytes()),
            }
        }
        out
    }

    #[test]
    fn every_wide_encoding_with_and_without_a_mark_reads_back() {
        let text = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><t name=\"Größe 😀 ∑\"/>\n";
        for wide in [Wide::Utf16Le, Wide::Utf16Be, Wide::Utf32Le, Wide::Utf32Be] {
            for mark in [true, false] {
                let bytes = encode(text, wide, mark);
                let (found, skip) = detect(&bytes).expect("detected");
                assert_eq!(found, wide, "{wide:?} {mark}");
                // Read through a reader that hands out a byte or three at a time.
                struct Drip<'a>(&'a [u8]);
                impl Read for Drip<'_> {
                    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                        let n = self.0.len().min(buf.len()).min(3);
                        buf[..n].copy_from_slice(&self.0[..n]);
                        self.0 = &self.0[n..];
                        Ok(n)
                    }
                }
                let mut out = String::new();
                WideReader::new(Drip(&bytes[skip..]), wide)
                    .read_to_string(&mut out)
                    .unwrap();
                assert_eq!(out, text, "{wide:?} {mark}");
                assert_eq!(decode(&bytes[skip..], wide), text);
            }
        }
        assert_eq!(detect(b"<?xml"), None);
        assert_eq!(detect("\u{feff}<a/>".as_bytes()), None);
    }

    #[test]
    fn broken_wide_text_reads_as_replacement_characters() {
        // A lone high surrogate, then a cut unit.
        let bytes = [0x3C, 0x00, 0x00, 0xD8, 0x41, 0x00, 0x42];
        let mut out = String::new();
        WideReader::new(&bytes[..], Wide::Utf16Le)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "<\u{FFFD}A\u{FFFD}");
    }
}
