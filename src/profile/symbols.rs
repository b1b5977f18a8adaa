//! Names for frames, once per distinct frame and after the runs (never on
//! the event path): ELF symbol tables and DWARF (inline frames, file:line)
//! through `addr2line`, kernel functions from `/proc/kallsyms`. A stripped
//! module is read from its separate debug file when one is installed
//! (`/usr/lib/debug/.build-id/xx/yyyy.debug`, or the file its
//! `.gnu_debuglink` names, with the same build id), as gdb and perf find
//! them. A module without symbols shows as `module+0xOFFSET`, said once; a
//! module that is gone or unreadable likewise.

use foldhash::HashMap;
use std::path::Path;

use super::{Frame, Module};

/// One function of a stack, after symbols.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol {
    pub function: String,
    /// The file name of the module ("libc.so.6", "[kernel]").
    pub module: String,
    pub file: Option<String>,
    pub line: Option<u32>,
}

/// A frame's module (path and build id) and offset.
type CacheKey = (String, Option<Vec<u8>>, u64);

/// Files larger than this are not read for symbols.
const MAX_FILE: u64 = 2 << 30;

struct Loaded {
    loader: addr2line::Loader,
    /// Where the symbols are read: the module, or its separate debug file.
    symbols_from: String,
    /// The file's build id now, when it has one.
    build_id: Option<Vec<u8>>,
    /// PT_LOAD segments: (file offset, size in the file, virtual address).
    segments: Vec<(u64, u64, u64)>,
    /// The ELF symbols with a size, (start, end, name) by start: read the
    /// first time DWARF does not name an address.
    symbols: std::cell::OnceCell<Vec<(u64, u64, String)>>,
}

impl Loaded {
    /// The function symbol whose extent holds `addr`. (The nearest symbol
    /// before it would name a local function of a stripped library, such
    /// as libc's start_thread, after an unrelated exported one.)
    fn symbol(&self, addr: u64) -> Option<&str> {
        let syms = self
            .symbols
            .get_or_init(|| sized_symbols(&self.symbols_from));
        let i = syms.partition_point(|s| s.0 <= addr);
        // Symbols may nest (aliases): look back a little for one that holds it.
        syms[..i]
            .iter()
            .rev()
            .take(8)
            .find(|s| addr < s.1)
            .map(|s| s.2.as_str())
    }
}

/// Function symbols with a size, from the symbol table and the dynamic one.
fn sized_symbols(path: &str) -> Vec<(u64, u64, String)> {
    use object::{Object, ObjectSymbol, SymbolKind};
    let Ok(f) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let cache = object::ReadCache::new(f);
    let Ok(file) = object::File::parse(&cache) else {
        return Vec::new();
    };
    let mut v: Vec<(u64, u64, String)> = file
        .symbols()
        .chain(file.dynamic_symbols())
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            let name = s.name().ok()?;
            Some((
                s.address(),
                s.address().saturating_add(s.size()),
                addr2line::demangle_auto(name.into(), None).into_owned(),
            ))
        })
        .collect();
    v.sort();
    v.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    v
}

/// Symbolizes frames, caching each module's tables and each answer.
#[derive(Default)]
pub struct Symbolizer {
    modules: HashMap<String, Option<Loaded>>,
    kernel: Option<std::sync::Arc<super::kallsyms::KernelSymbols>>,
    cache: HashMap<CacheKey, Vec<Symbol>>,
    /// JIT perf maps read, by pid: (start, end, name), sorted.
    perf_maps: HashMap<i32, Vec<(u64, u64, String)>>,
    /// One line per module that could not be named (stripped, gone).
    pub notes: Vec<String>,
}

fn base_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

pub(crate) type Segments = Vec<(u64, u64, u64)>;

/// Where distributions install separate debug files.
const DEBUG_DIR: &str = "/usr/lib/debug";

/// The separate debug file of the module at `path` with build id `id`,
/// when one is installed: by build id, else by the name its
/// `.gnu_debuglink` gives (beside it, in `.debug/`, or under
/// /usr/lib/debug), taken only when its build id is the module's.
fn debug_file(path: &str, id: &[u8]) -> Option<String> {
    debug_file_in(Path::new(DEBUG_DIR), path, id)
}

fn debug_file_in(root: &Path, path: &str, id: &[u8]) -> Option<String> {
    use object::Object;
    let same_id = |p: &Path| {
        segments(&p.to_string_lossy()).is_some_and(|(_, got)| got.as_deref() == Some(id))
    };
    if id.len() >= 2 {
        let hex = hex::encode(id);
        let by_id = root
            .join(".build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if by_id.is_file() && same_id(&by_id) {
            return Some(by_id.to_string_lossy().into_owned());
        }
    }
    let cache = object::ReadCache::new(std::fs::File::open(path).ok()?);
    let file = object::File::parse(&cache).ok()?;
    let (name, _crc) = file.gnu_debuglink().ok()??;
    let name = std::str::from_utf8(name).ok()?;
    let dir = Path::new(path).parent()?;
    let under_root = root.join(dir.strip_prefix("/").unwrap_or(dir));
    [
        dir.join(name),
        dir.join(".debug").join(name),
        under_root.join(name),
    ]
    .into_iter()
    .find(|p| p.is_file() && p.to_string_lossy() != path && same_id(p))
    .map(|p| p.to_string_lossy().into_owned())
}

/// The PT_LOAD segments and the build id of an ELF file.
pub(crate) fn segments(path: &str) -> Option<(Segments, Option<Vec<u8>>)> {
    use object::{Object, ObjectSegment};
    // Only the headers and the build-id note are read, not the whole file
    // (the loader maps it for DWARF).
    let cache = object::ReadCache::new(std::fs::File::open(path).ok()?);
    let file = object::File::parse(&cache).ok()?;
    let mut out = Vec::new();
    for s in file.segments() {
        let (off, size) = s.file_range();
        out.push((off, size, s.address()));
    }
    let id = file.build_id().ok().flatten().map(|b| b.to_vec());
    Some((out, id))
}

impl Symbolizer {
    pub fn new() -> Symbolizer {
        Symbolizer::default()
    }

    fn load(&mut self, path: &str) -> Option<&Loaded> {
        if !self.modules.contains_key(path) {
            let loaded = (|| {
                let meta = std::fs::metadata(path).ok()?;
                if !meta.is_file() || meta.len() > MAX_FILE {
                    return None;
                }
                let (segments, build_id) = segments(path)?;
                let symbols_from = build_id
                    .as_deref()
                    .and_then(|id| debug_file(path, id))
                    .unwrap_or_else(|| path.to_string());
                let loader = addr2line::Loader::new(&symbols_from)
                    .or_else(|_| addr2line::Loader::new(path))
                    .ok()?;
                Some(Loaded {
                    loader,
                    symbols_from,
                    build_id,
                    segments,
                    symbols: std::cell::OnceCell::new(),
                })
            })();
            if loaded.is_none() && self.notes.len() < 100 {
                self.notes.push(format!(
                    "{path}: not readable as ELF here (gone, replaced or not a file): its frames show as offsets"
                ));
            }
            self.modules.insert(path.to_string(), loaded);
        }
        self.modules.get(path)?.as_ref()
    }

    /// The functions at `frame`, outermost first (more than one when
    /// functions were inlined there).
    pub fn symbolize(&mut self, modules: &[Module], frame: Frame) -> Vec<Symbol> {
        match frame.module {
            Frame::KERNEL => {
                let syms = self
                    .kernel
                    .get_or_insert_with(super::kallsyms::KernelSymbols::get);
                let function = match syms.function_at(frame.offset) {
                    Some(n) => n.to_string(),
                    None => format!("0x{:x}", frame.offset),
                };
                vec![Symbol {
                    function,
                    module: "[kernel]".into(),
                    file: None,
                    line: None,
                }]
            }
            m if m == Frame::UNMAPPED || m == Frame::ROOT.module => vec![Symbol {
                function: format!("0x{:x}", frame.offset),
                module: "[unknown]".into(),
                file: None,
                line: None,
            }],
            m => {
                let Some(module) = modules.get(m as usize) else {
                    return vec![];
                };
                let path = module.path.clone();
                let key = (path.clone(), module.build_id.clone(), frame.offset);
                if let Some(s) = self.cache.get(&key) {
                    return s.clone();
                }
                let out = self.lookup(&path, module.build_id.as_deref(), frame.offset);
                if self.cache.len() < 1_000_000 {
                    self.cache.insert(key, out.clone());
                }
                out
            }
        }
    }

    fn lookup(&mut self, path: &str, mapped_id: Option<&[u8]>, offset: u64) -> Vec<Symbol> {
        let module = base_name(path);
        let fallback = |module: &str| {
            vec![Symbol {
                function: format!("{module}+0x{offset:x}"),
                module: module.to_string(),
                file: None,
                line: None,
            }]
        };
        if let Some(pid) = path
            .strip_prefix("[anon:")
            .and_then(|p| p.strip_suffix(']'))
            .and_then(|p| p.parse::<i32>().ok())
        {
            return self.jit(pid, offset);
        }
        if path.starts_with('[') || path.starts_with("//") || path.is_empty() {
            // [vdso] and the like.
            return fallback(&module);
        }
        let replaced = match (self.load(path), mapped_id) {
            (None, _) => return fallback(&module),
            (Some(l), Some(id)) => l.build_id.as_deref().is_some_and(|now| now != id),
            _ => false,
        };
        if replaced {
            let note = format!(
                "{path} was replaced since it ran (its build id differs): its frames show as offsets"
            );
            if self.notes.len() < 100 && !self.notes.contains(&note) {
                self.notes.push(note);
            }
            return fallback(&module);
        }
        let Some(loaded) = self.load(path) else {
            return fallback(&module);
        };
        let Some(addr) = loaded
            .segments
            .iter()
            .find(|(off, size, _)| offset >= *off && offset < off + size.max(&1))
            .map(|(off, _, vaddr)| offset - off + vaddr)
        else {
            return fallback(&module);
        };
        let mut out = Vec::new();
        if let Ok(mut frames) = loaded.loader.find_frames(addr) {
            while let Ok(Some(f)) = frames.next() {
                let Some(name) = f.function.as_ref().and_then(|n| n.demangle().ok()) else {
                    continue;
                };
                let (file, line) = match &f.location {
                    Some(l) => (l.file.map(short_path), l.line),
                    None => (None, None),
                };
                out.push(Symbol {
                    function: name.into_owned(),
                    module: module.clone(),
                    file,
                    line,
                });
            }
        }
        if out.is_empty() {
            match loaded.symbol(addr) {
                Some(name) => out.push(Symbol {
                    function: name.to_string(),
                    module: module.clone(),
                    file: None,
                    line: None,
                }),
                None => {
                    let none = loaded.symbols.get().is_none_or(|v| v.is_empty());
                    let note = if none {
                        format!("{path} has no symbols: its frames show as offsets")
                    } else {
                        format!(
                            "{path} is stripped of its local functions: those frames show as offsets (install its debug symbols to name them)"
                        )
                    };
                    if self.notes.len() < 100 && !self.notes.contains(&note) {
                        self.notes.push(note);
                    }
                    return fallback(&module);
                }
            }
        }
        // find_frames gives the innermost inlined function first.
        out.reverse();
        out
    }
}

/// Most JIT maps read for one process, lines.
const MAX_PERF_MAP_LINES: usize = 2_000_000;

impl Symbolizer {
    /// Code a JIT compiler wrote, named from the process's perf map
    /// (`/tmp/perf-PID.map`: "START SIZE NAME" in hex, as Node's
    /// --perf-basic-prof, Python 3.12's -X perf and the JVM's agents write).
    fn jit(&mut self, pid: i32, addr: u64) -> Vec<Symbol> {
        if !self.perf_maps.contains_key(&pid) {
            let path = format!("/tmp/perf-{pid}.map");
            let mut v = Vec::new();
            let mut bad = 0u64;
            if let Ok(f) = std::fs::File::open(&path) {
                use std::io::BufRead;
                for line in std::io::BufReader::new(f).lines().take(MAX_PERF_MAP_LINES) {
                    let Ok(line) = line else {
                        bad += 1;
                        continue;
                    };
                    let mut f = line.splitn(3, ' ');
                    let parsed = (|| {
                        let start =
                            u64::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
                        let size =
                            u64::from_str_radix(f.next()?.trim_start_matches("0x"), 16).ok()?;
                        let name = f.next()?.trim();
                        (!name.is_empty())
                            .then(|| (start, start.saturating_add(size), name.to_string()))
                    })();
                    match parsed {
                        Some(e) => v.push(e),
                        None if line.trim().is_empty() => {}
                        None => bad += 1,
                    }
                }
                if bad > 0 && self.notes.len() < 100 {
                    self.notes.push(format!(
                        "{path}: {bad} malformed lines skipped (expected \"START SIZE NAME\" in hex)"
                    ));
                }
            }
            v.sort_by_key(|e| e.0);
            self.perf_maps.insert(pid, v);
        }
        let entries = self
            .perf_maps
            .get(&pid)
            .map(|v| v.as_slice())
            .unwrap_or(&[]);
        let i = entries.partition_point(|e| e.0 <= addr);
        let hit = i
            .checked_sub(1)
            .and_then(|i| entries.get(i))
            .filter(|e| addr < e.1.max(e.0 + 1));
        vec![match hit {
            Some((_, _, name)) => Symbol {
                function: name.clone(),
                module: "[jit]".into(),
                file: None,
                line: None,
            },
            None => Symbol {
                function: format!("0x{addr:x}"),
                module: "[anonymous]".into(),
                file: None,
                line: None,
            },
        }]
    }
}

/// The last three components of a source path (enough to find it).
fn short_path(p: &str) -> String {
    let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    let n = parts.len();
    parts[n.saturating_sub(3)..].join("/")
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_debug_file_is_found_by_build_id_and_only_with_the_same_id() {
        // A system program with a build id stands in for a stripped module;
        // its copy under a scratch root is its "debug file".
        let Some((_, Some(id))) = segments("/bin/ls") else {
            eprintln!("SKIPPED: /bin/ls has no build id here");
            return;
        };
        let root = tempfile::tempdir().unwrap();
        let hex = hex::encode(&id);
        let dir = root.path().join(".build-id").join(&hex[..2]);
        std::fs::create_dir_all(&dir).unwrap();
        let debug = dir.join(format!("{}.debug", &hex[2..]));
        std::fs::copy("/bin/ls", &debug).unwrap();
        assert_eq!(
            debug_file_in(root.path(), "/bin/ls", &id).as_deref(),
            Some(debug.to_string_lossy().as_ref())
        );
        // Another file at that place (a stale install) is not taken.
        if segments("/bin/cat").is_some_and(|(_, other)| other.is_some_and(|o| o != id)) {
            std::fs::copy("/bin/cat", &debug).unwrap();
            assert_eq!(debug_file_in(root.path(), "/bin/ls", &id), None);
        }
    }

    use super::*;

    #[test]
    fn jit_code_is_named_from_the_perf_map_and_bad_lines_are_said() {
        // A pid that cannot be running: its map file is ours to write.
        let pid = 999_999_001;
        let path = format!("/tmp/perf-{pid}.map");
        std::fs::write(
            &path,
            "1000 100 JS:~hot [eval]:1:13\nnot a line\n2000 10 LazyCompile:*parse app.js:7\n\n",
        )
        .unwrap();
        let modules = vec![Module {
            path: format!("[anon:{pid}]"),
            build_id: None,
        }];
        let mut s = Symbolizer::new();
        let f = |offset| Frame { module: 0, offset };
        let hot = s.symbolize(&modules, f(0x1010));
        let parse = s.symbolize(&modules, f(0x2005));
        let none = s.symbolize(&modules, f(0x3000));
        let _ = std::fs::remove_file(&path);
        assert_eq!(hot[0].function, "JS:~hot [eval]:1:13");
        assert_eq!(hot[0].module, "[jit]");
        assert_eq!(parse[0].function, "LazyCompile:*parse app.js:7");
        assert_eq!(none[0].function, "0x3000");
        assert!(
            s.notes.iter().any(|n| n.contains("1 malformed")),
            "{:?}",
            s.notes
        );
    }

    #[test]
    fn the_kernel_and_unknown_frames_are_named() {
        let mut s = Symbolizer::new();
        let k = s.symbolize(
            &[],
            Frame {
                module: Frame::UNMAPPED,
                offset: 0x1234,
            },
        );
        assert_eq!(k[0].function, "0x1234");
        assert_eq!(short_path("/a/b/c/d/e.c"), "c/d/e.c");
        assert_eq!(short_path("e.c"), "e.c");
    }

    #[test]
    fn a_function_of_this_test_binary_is_found_by_its_file_offset() {
        // This very test binary: map an address of a function back to its
        // file offset through /proc/self/maps, and symbolize it.
        let target = short_path as fn(&str) -> String as usize as u64;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let exe = exe.to_string_lossy().into_owned();
        let mut found = None;
        for l in maps.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (lo, hi) = f[0].split_once('-').unwrap();
            let (lo, hi) = (
                u64::from_str_radix(lo, 16).unwrap(),
                u64::from_str_radix(hi, 16).unwrap(),
            );
            if target >= lo && target < hi && f.get(5) == Some(&exe.as_str()) {
                found = Some(target - lo + u64::from_str_radix(f[2], 16).unwrap());
            }
        }
        let offset = found.expect("the test binary maps its own code");
        let modules = vec![Module {
            path: exe,
            build_id: None,
        }];
        let mut s = Symbolizer::new();
        let syms = s.symbolize(&modules, Frame { module: 0, offset });
        let last = syms.last().expect("a symbol");
        assert!(last.function.contains("short_path"), "{syms:?}");
        // Mapped with another build id: the file was replaced since.
        let has_id = segments(&modules[0].path).is_some_and(|(_, id)| id.is_some());
        if has_id {
            let other = vec![Module {
                path: modules[0].path.clone(),
                build_id: Some(vec![1, 2, 3]),
            }];
            let syms = s.symbolize(&other, Frame { module: 0, offset });
            assert!(syms[0].function.contains("+0x"), "{syms:?}");
            assert!(
                s.notes.iter().any(|n| n.contains("replaced")),
                "{:?}",
                s.notes
            );
        }
    }
}
