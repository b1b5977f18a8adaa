//! A profile as pprof's `profile.proto`, gzip'd: what `go tool pprof` (its
//! `-top`, `-http` and `-diff_base` views) and other pprof readers open.
//!
//! The message is small and fixed (profile, sample, location, line,
//! function, value type, string table), so it is encoded here by hand with
//! protobuf's two wire types it needs, rather than through a code generator
//! and `protoc` at build time (docs/dependencies.md).

use std::io::Write;

use crate::profile::Profile;

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, ((field as u64) << 3) | wire as u64);
}

/// A varint field (int64 and uint64 alike; negative values are not used).
fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
    if v != 0 {
        key(out, field, 0);
        varint(out, v);
    }
}

fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
    key(out, field, 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A packed repeated varint field.
fn packed(out: &mut Vec<u8>, field: u32, vs: impl Iterator<Item = u64>) {
    let mut body = Vec::new();
    for v in vs {
        varint(&mut body, v);
    }
    bytes(out, field, &body);
}

struct Strings {
    table: Vec<String>,
    index: std::collections::HashMap<String, u64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings {
            table: Vec::new(),
            index: std::collections::HashMap::new(),
        };
        s.id("");
        s
    }
    fn id(&mut self, v: &str) -> u64 {
        if let Some(&i) = self.index.get(v) {
            return i;
        }
        let i = self.table.len() as u64;
        self.table.push(v.to_string());
        self.index.insert(v.to_string(), i);
        i
    }
}

/// The uncompressed `profile.proto` message: one location per function,
/// values in CPU nanoseconds summed over the runs.
/// `main`: the command's program (its path), listed first among the
/// mappings as pprof's "main binary" (go tool pprof says "Main binary
/// filename not available" without one).
pub fn encode(p: &Profile, main: Option<&str>) -> Vec<u8> {
    let mut strings = Strings::new();
    let mut out = Vec::new();
    // One mapping per module, the main program's first.
    let base = |m: &str| m.rsplit('/').next().unwrap_or(m).to_string();
    let main_base = main.map(base);
    let mut modules: Vec<String> = Vec::new();
    if let Some(m) = &main_base
        && p.functions.iter().any(|f| base(&f.module) == *m)
    {
        modules.push(m.clone());
    }
    for f in &p.functions {
        let m = base(&f.module);
        if !modules.contains(&m) {
            modules.push(m);
        }
    }
    let mapping_of = |f: &crate::profile::FunctionInfo| {
        let m = base(&f.module);
        modules
            .iter()
            .position(|x| *x == m)
            .map_or(0, |i| i as u64 + 1)
    };
    let (cpu, ns) = (strings.id("cpu"), strings.id("nanoseconds"));
    let mut vt = Vec::new();
    uint(&mut vt, 1, cpu);
    uint(&mut vt, 2, ns);
    bytes(&mut out, 1, &vt); // sample_type
    for st in &p.stacks {
        let v = (st.s.iter().sum::<f64>() * 1e9).round() as u64;
        if v == 0 || st.frames.is_empty() {
            continue;
        }
        let mut s = Vec::new();
        // Leaf first; location ids are function index + 1.
        packed(&mut s, 1, st.frames.iter().rev().map(|&f| f as u64 + 1));
        packed(&mut s, 2, std::iter::once(v));
        bytes(&mut out, 2, &s);
    }
    for (i, f) in p.functions.iter().enumerate() {
        let id = i as u64 + 1;
        let mut line = Vec::new();
        uint(&mut line, 1, id);
        uint(&mut line, 2, f.line.unwrap_or(0) as u64);
        let mut loc = Vec::new();
        uint(&mut loc, 1, id);
        uint(&mut loc, 2, mapping_of(f));
        bytes(&mut loc, 4, &line);
        bytes(&mut out, 4, &loc);
    }
    for (i, m) in modules.iter().enumerate() {
        let file = match (&main_base, main) {
            (Some(b), Some(path)) if i == 0 && b == m => path.to_string(),
            _ => m.clone(),
        };
        let ours = p.functions.iter().filter(|f| base(&f.module) == *m);
        let mut mapping = Vec::new();
        uint(&mut mapping, 1, i as u64 + 1);
        uint(&mut mapping, 5, strings.id(&file));
        uint(&mut mapping, 7, 1); // has_functions
        uint(
            &mut mapping,
            8,
            ours.clone().any(|f| f.file.is_some()) as u64,
        );
        uint(
            &mut mapping,
            9,
            ours.clone().any(|f| f.line.is_some()) as u64,
        );
        bytes(&mut out, 3, &mapping);
    }
    for (i, f) in p.functions.iter().enumerate() {
        let mut func = Vec::new();
        let name = strings.id(&f.function);
        let file = match &f.file {
            Some(file) => strings.id(file),
            None => strings.id(&f.module),
        };
        uint(&mut func, 1, i as u64 + 1);
        uint(&mut func, 2, name);
        uint(&mut func, 3, name);
        uint(&mut func, 4, file);
        bytes(&mut out, 5, &func);
    }
    let mut period_type = Vec::new();
    uint(&mut period_type, 1, cpu);
    uint(&mut period_type, 2, ns);
    let comment = strings.id(&format!(
        "tardy explain: {} runs, sampled at {} Hz",
        p.runs, p.rate_hz
    ));
    for s in &strings.table {
        bytes(&mut out, 6, s.as_bytes());
    }
    bytes(&mut out, 11, &period_type);
    uint(&mut out, 12, 1_000_000_000 / p.rate_hz.max(1));
    packed(&mut out, 13, std::iter::once(comment));
    out
}

/// The gzip'd message, as `go tool pprof` reads it.
pub fn gzipped(p: &Profile, main: Option<&str>) -> std::io::Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&encode(p, main))?;
    gz.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_protobufs() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut f = Vec::new();
        uint(&mut f, 1, 150);
        assert_eq!(f, [0x08, 0x96, 0x01]);
        let mut s = Strings::new();
        assert_eq!(s.id(""), 0);
        assert_eq!(s.id("cpu"), 1);
        assert_eq!(s.id("cpu"), 1);
    }
}
