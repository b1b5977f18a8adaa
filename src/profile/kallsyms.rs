//! The kernel's functions, from `/proc/kallsyms`: read once per process and
//! shared, since both the recorder (which kernel function a thread blocked
//! in) and the profile (names for kernel frames) need them. The file has
//! over 100,000 lines; it is read as bytes and parsed without an allocation
//! per line (two parses into owned strings took 0.3 s of every
//! `tardy explain` in a debug build).

use std::sync::{Arc, OnceLock};

/// The kernel's text symbols by address (`t`, `T`, `w`, `W` lines with a
/// non-zero address; empty when kallsyms hides addresses, as it does to
/// users without CAP_SYSLOG).
#[derive(Debug, Default)]
pub struct KernelSymbols {
    addrs: Vec<u64>,
    /// Each symbol's name in `names`: (start, length).
    spans: Vec<(u32, u32)>,
    names: String,
}

impl KernelSymbols {
    /// This machine's, read the first time they are asked for.
    pub fn get() -> Arc<KernelSymbols> {
        static ONCE: OnceLock<Arc<KernelSymbols>> = OnceLock::new();
        ONCE.get_or_init(|| {
            let bytes = std::fs::read("/proc/kallsyms").unwrap_or_default();
            Arc::new(KernelSymbols::parse(&bytes))
        })
        .clone()
    }

    /// Parse kallsyms text ("ADDR KIND NAME[\t[MODULE]]" lines); lines
    /// that are not text symbols, or not well formed, are skipped.
    pub fn parse(bytes: &[u8]) -> KernelSymbols {
        let mut rows: Vec<(u64, u32, u32)> = Vec::new();
        let mut names = String::new();
        let mut from = 0;
        while from < bytes.len() {
            let to = memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |i| from + i);
            let line = &bytes[from..to];
            from = to + 1;
            let Some((addr, kind, name)) = fields(line) else {
                continue;
            };
            if addr == 0 || !matches!(kind, b't' | b'T' | b'w' | b'W') {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            let (Ok(start), Ok(len)) = (u32::try_from(names.len()), u32::try_from(name.len()))
            else {
                break;
            };
            names.push_str(name);
            rows.push((addr, start, len));
        }
        // kallsyms is sorted by address but for a few modules' symbols.
        if !rows.is_sorted_by_key(|r| r.0) {
            rows.sort_by_key(|r| r.0);
        }
        KernelSymbols {
            addrs: rows.iter().map(|r| r.0).collect(),
            spans: rows.iter().map(|r| (r.1, r.2)).collect(),
            names,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.addrs.is_empty()
    }

    pub fn len(&self) -> usize {
        self.addrs.len()
    }

    fn name(&self, i: usize) -> &str {
        let (s, n) = self.spans[i];
        self.names
            .get(s as usize..s as usize + n as usize)
            .unwrap_or("")
    }

    /// (address, name), by address.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &str)> {
        (0..self.addrs.len()).map(|i| (self.addrs[i], self.name(i)))
    }

    /// The function holding `addr`: the nearest symbol at or below it.
    pub fn function_at(&self, addr: u64) -> Option<&str> {
        let i = self.addrs.partition_point(|&a| a <= addr);
        Some(self.name(i.checked_sub(1)?))
    }
}

/// The address (hex), kind byte and name of one kallsyms line.
fn fields(line: &[u8]) -> Option<(u64, u8, &[u8])> {
    let i = memchr::memchr(b' ', line)?;
    if i == 0 || i > 16 {
        return None;
    }
    // from_str_radix is the standard library's, optimised even in a
    // debug build (a loop here over 1.6 million digits is not).
    let hex = std::str::from_utf8(&line[..i]).ok()?;
    if hex.starts_with('+') {
        return None;
    }
    let addr = u64::from_str_radix(hex, 16).ok()?;
    let kind = *line.get(i + 1)?;
    if line.get(i + 2) != Some(&b' ') {
        return None;
    }
    let rest = line.get(i + 3..)?;
    let end = memchr::memchr3(b'\t', b' ', b'\r', rest).unwrap_or(rest.len());
    let name = &rest[..end];
    (!name.is_empty()).then_some((addr, kind, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_symbols_by_address_and_nothing_else() {
        let k = KernelSymbols::parse(
            b"ffffffff81000100 T do_nanosleep\n\
              ffffffff81000000 t hrtimer_wakeup\n\
              ffffffff81000200 D some_data\n\
              ffffffffc0000000 t nfs_fsync\t[nfs]\n\
              0000000000000000 T hidden\n\
              zzzz T bad\n\
              ffffffff81000300 W\n\
              ffffffff81000400 w weak_one\r\n",
        );
        let all: Vec<(u64, &str)> = k.iter().collect();
        assert_eq!(
            all,
            vec![
                (0xffffffff81000000, "hrtimer_wakeup"),
                (0xffffffff81000100, "do_nanosleep"),
                (0xffffffff81000400, "weak_one"),
                (0xffffffffc0000000, "nfs_fsync"),
            ]
        );
        assert_eq!(k.function_at(0xffffffff81000150), Some("do_nanosleep"));
        assert_eq!(k.function_at(0xffffffff80000000), None);
        assert!(KernelSymbols::parse(b"0000000000000000 T hidden\n").is_empty());
        assert!(KernelSymbols::parse(b"").is_empty());
    }
}
