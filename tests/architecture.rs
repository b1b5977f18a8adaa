//! The house's rules, checked on the source tree (docs/book/11-inside.md):
//!
//! - no import circle: no two files of `src/` reach each other through
//!   `crate::`/`super::`/`self::` paths (a `mod.rs` naming its own children
//!   does not count, nor test modules);
//! - the floors, bottom up: `model`, `stats` and `fmt`; then `ingest`, `measure`,
//!   `probe`, `record`, `profile`, `store`; then `analyze`, `diagnose`,
//!   `history`, `bisect`, `ci`; then `render`, `server`, `cli`. Nothing
//!   imports from a floor above its own, and `render/` calls no `analyze/`
//!   or `diagnose/` function (it may name their types);
//! - `src/cli/`: under 3,000 non-blank lines, no function over 80 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every .rs file under src/, as its module path (`measure::spawn`).
fn modules() -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src()).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|l| l == "mod") {
                    parts.pop();
                }
                let name = parts.join("::");
                let name = match name.as_str() {
                    "lib" => "crate".to_string(),
                    "main" => "main".to_string(),
                    _ => name,
                };
                out.insert(name, p);
            }
        }
    }
    out
}

/// The file's text without its test module (`#[cfg(test)] mod tests {`
/// to the end, where this project keeps them) and without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a file names: `crate::a::b`, `super::x`, `self::y`,
/// and `use` groups (`crate::a::{b, c::d}`), each resolved to the longest
/// module that exists.
fn imports(name: &str, text: &str, all: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    // The module that `self` and `super` are relative to.
    let here: Vec<&str> = if name == "crate" || name == "main" {
        Vec::new()
    } else {
        name.split("::").collect()
    };
    let mut found = BTreeSet::new();
    let bytes = text.as_bytes();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(i) = text[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            // The path: identifiers, `::`, and one level of `{...}` groups.
            let mut end = at;
            let mut depth = 0;
            while end < bytes.len() {
                let c = bytes[end];
                if c == b'{' {
                    depth += 1;
                } else if c == b'}' {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                } else if !(c.is_ascii_alphanumeric()
                    || c == b'_'
                    || c == b':'
                    || (depth > 0 && (c == b',' || c.is_ascii_whitespace())))
                {
                    break;
                }
                end += 1;
            }
            for path in expand(&text[at..end]) {
                let mut parts = path.split("::").filter(|s| !s.is_empty()).peekable();
                let mut segs: Vec<String> = match parts.peek().copied() {
                    Some("crate") => {
                        parts.next();
                        Vec::new()
                    }
                    Some("self") => {
                        parts.next();
                        here.iter().map(|s| s.to_string()).collect()
                    }
                    Some("super") => {
                        // Each `super` climbs one module from this one.
                        let mut up = here.len();
                        while parts.peek().copied() == Some("super") {
                            parts.next();
                            up = up.saturating_sub(1);
                        }
                        here[..up].iter().map(|s| s.to_string()).collect()
                    }
                    _ => continue,
                };
                for p in parts {
                    segs.push(p.to_string());
                }
                // The longest existing module.
                while !segs.is_empty() {
                    let m = segs.join("::");
                    if all.contains_key(&m) {
                        found.insert(m);
                        break;
                    }
                    segs.pop();
                }
            }
        }
    }
    found.remove(name);
    found
}

/// `a::{b, c::{d, e}}` -> `a::b`, `a::c::d`, `a::c::e`.
fn expand(path: &str) -> Vec<String> {
    let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
    match path.find('{') {
        None => vec![path.trim_end_matches("::").to_string()],
        Some(i) => {
            let head = &path[..i];
            let inner = path[i + 1..].trim_end_matches('}');
            let mut parts = Vec::new();
            let (mut depth, mut last) = (0, 0);
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(&inner[last..k]);
                        last = k + 1;
                    }
                    _ => {}
                }
            }
            parts.push(&inner[last..]);
            parts
                .into_iter()
                .filter(|p| !p.is_empty() && *p != "self")
                .flat_map(|p| expand(&format!("{head}{p}")))
                .chain(std::iter::once(head.trim_end_matches("::").to_string()))
                .collect()
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let all = modules();
    all.iter()
        .map(|(name, path)| {
            let mut deps = imports(name, &code(path), &all);
            // A parent naming its own children (`pub mod x;`, `x::f()` in its
            // mod.rs) is not an import.
            deps.retain(|d| !d.starts_with(&format!("{name}::")) && name != "crate");
            (name.clone(), deps)
        })
        .collect()
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.g.contains_key(w) {
                continue;
            }
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on: BTreeSet::new(),
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

fn floor(module: &str) -> usize {
    let room = module.split("::").next().unwrap_or("");
    match room {
        "model" | "stats" | "fmt" => 0,
        "ingest" | "measure" | "probe" | "record" | "profile" | "store" => 1,
        "analyze" | "diagnose" | "history" | "bisect" | "ci" => 2,
        _ => 3,
    }
}

#[test]
fn no_file_imports_its_importer() {
    let c = circles(&graph());
    assert!(
        c.is_empty(),
        "import circles:\n{}",
        c.iter()
            .map(|c| c.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn nothing_imports_from_a_floor_above_its_own() {
    let mut bad = Vec::new();
    for (m, deps) in graph() {
        for d in deps {
            if floor(&d) > floor(&m) {
                bad.push(format!("{m} -> {d}"));
            }
        }
    }
    assert!(bad.is_empty(), "upward imports:\n{}", bad.join("\n"));
}

#[test]
fn render_calls_no_analysis() {
    let all = modules();
    let mut bad = Vec::new();
    for (name, path) in &all {
        if !name.starts_with("render") {
            continue;
        }
        let text = code(path);
        for room in ["diagnose::", "analyze::"] {
            let mut from = 0;
            while let Some(i) = text[from..].find(room) {
                let at = from + i;
                from = at + room.len();
                let rest = &text[at..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                let path = &rest[..end];
                let last = path.rsplit("::").next().unwrap_or("");
                // A call: a lowercase item followed by `(`.
                if last.starts_with(|c: char| c.is_ascii_lowercase())
                    && rest[end..].starts_with('(')
                {
                    bad.push(format!("{name}: {path}(...)"));
                }
            }
        }
    }
    // And functions imported from them by `use` (called by their bare name).
    for (name, path) in &all {
        if !name.starts_with("render") {
            continue;
        }
        let text = code(path);
        for line in text.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let u = line.trim().trim_start_matches("use ").trim_end_matches(';');
            for p in expand(u) {
                let p = p.trim_start_matches("crate::");
                if !(p.starts_with("diagnose::") || p.starts_with("analyze::")) {
                    continue;
                }
                let last = p.rsplit("::").next().unwrap_or("");
                let is_module = all.contains_key(p);
                if !is_module && last.starts_with(|c: char| c.is_ascii_lowercase()) {
                    bad.push(format!("{name}: use {p}"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "render/ computing through analysis:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_cli_function_is_over_80_lines() {
    let dir = src().join("cli");
    let mut lines = 0;
    let mut long = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let text = match text.find("#[cfg(test)]\nmod tests") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        lines += text.lines().filter(|l| !l.trim().is_empty()).count();
        // Functions: from a line with `fn name(` to the line closing it at
        // the same indentation.
        let ls: Vec<&str> = text.lines().collect();
        for (i, l) in ls.iter().enumerate() {
            let t = l.trim_start();
            let indent = l.len() - t.len();
            let is_fn = (t.starts_with("fn ")
                || t.starts_with("pub fn ")
                || t.starts_with("pub(crate) fn ")
                || t.starts_with("pub(super) fn ")
                || t.starts_with("async fn ")
                || t.starts_with("pub async fn "))
                && !t.ends_with(';');
            if !is_fn {
                continue;
            }
            let close = " ".repeat(indent) + "}";
            if let Some(len) = ls[i + 1..].iter().position(|x| *x == close) {
                if len + 2 > 80 {
                    let name = t.split('(').next().unwrap_or(t);
                    long.push(format!(
                        "{}: {name} ({} lines)",
                        e.file_name().to_string_lossy(),
                        len + 2
                    ));
                }
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 80 lines in src/cli/:\n{}",
        long.join("\n")
    );
    eprintln!("src/cli/ is {lines} non-blank lines (the target is under 3,000)");
}

/// The CLI parses, calls and prints: all of it, argument definitions and
/// their help included, stays under 3,000 non-blank lines (prose of `--help`
/// lives in docs/help/, work in the library's `jobs/` and below).
#[test]
fn the_cli_is_under_3000_lines() {
    let lines: usize = std::fs::read_dir(src().join("cli"))
        .unwrap()
        .flatten()
        .map(|e| {
            std::fs::read_to_string(e.path())
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count()
        })
        .sum();
    assert!(
        lines < 3000,
        "src/cli/ is {lines} non-blank lines (the limit is 3,000)"
    );
}
