//! Which file each code address of each process belongs to, from the
//! kernel's mmap records (executable mappings only), so a sampled address
//! becomes (module, offset in the file) while the process may already be
//! gone: the same code in a hundred short processes is one frame.

use foldhash::HashMap;
use std::sync::Arc;

use super::{Frame, Module};

/// At most this many modules and processes are remembered.
const MAX_MODULES: usize = 65_536;
const MAX_PROCS: usize = 100_000;
const MAX_MAPS: usize = 4_096;

#[derive(Debug, Clone, Copy)]
struct Map {
    start: u64,
    end: u64,
    pgoff: u64,
    module: u32,
}

/// The executable mappings of every process seen.
#[derive(Debug, Default)]
pub struct Maps {
    pub modules: Vec<Module>,
    by_key: HashMap<(String, Option<Vec<u8>>), u32>,
    /// Shared between a parent and the children it forked until either maps more.
    procs: HashMap<i32, Arc<Vec<Map>>>,
}

impl Maps {
    pub fn new() -> Maps {
        Maps::default()
    }

    /// The module of `path` as mapped with `build_id` (`None` past the cap).
    pub fn intern(&mut self, path: &str, build_id: Option<&[u8]>) -> Option<u32> {
        let key = (path.to_string(), build_id.map(|b| b.to_vec()));
        if let Some(&m) = self.by_key.get(&key) {
            return Some(m);
        }
        if self.modules.len() >= MAX_MODULES {
            return None;
        }
        let m = self.modules.len() as u32;
        self.modules.push(Module {
            path: key.0.clone(),
            build_id: key.1.clone(),
        });
        self.by_key.insert(key, m);
        Some(m)
    }

    /// An executable mapping of `path` at `start..start+len`, file offset `pgoff`.
    pub fn mmap(&mut self, pid: i32, start: u64, len: u64, pgoff: u64, path: &str) {
        if let Some(module) = self.intern(path, None) {
            self.mmap_module(pid, start, len, pgoff, module);
        }
    }

    /// The same, for a module already interned.
    pub fn mmap_module(&mut self, pid: i32, start: u64, len: u64, pgoff: u64, module: u32) {
        if !self.procs.contains_key(&pid) && self.procs.len() >= MAX_PROCS {
            return;
        }
        let maps = Arc::make_mut(self.procs.entry(pid).or_default());
        let end = start.saturating_add(len);
        // A new mapping replaces whatever it overlaps.
        maps.retain(|m| m.end <= start || m.start >= end);
        if maps.len() >= MAX_MAPS {
            return;
        }
        let at = maps.partition_point(|m| m.start < start);
        maps.insert(
            at,
            Map {
                start,
                end,
                pgoff,
                module,
            },
        );
    }

    /// A new process: it starts with its parent's mappings.
    pub fn fork(&mut self, parent: i32, child: i32) {
        if let Some(m) = self.procs.get(&parent).cloned()
            && (self.procs.len() < MAX_PROCS || self.procs.contains_key(&child))
        {
            self.procs.insert(child, m);
        }
    }

    /// An exec: the old program's mappings are gone.
    pub fn exec(&mut self, pid: i32) {
        self.procs.remove(&pid);
    }

    /// Whether any executable mapping of process `pid` was reported.
    pub fn knows(&self, pid: i32) -> bool {
        self.procs.get(&pid).is_some_and(|m| !m.is_empty())
    }

    /// Whether `addr` lies in an executable mapping of process `pid` that
    /// the kernel reported (a file's code or anonymous code alike).
    pub fn maps_address(&self, pid: i32, addr: u64) -> bool {
        self.find(pid, addr).is_some()
    }

    /// The mapping of process `pid` that holds `addr`.
    fn find(&self, pid: i32, addr: u64) -> Option<&Map> {
        let maps = self.procs.get(&pid)?;
        let i = maps.partition_point(|m| m.start <= addr);
        maps.get(i.checked_sub(1)?).filter(|m| addr < m.end)
    }

    /// The frame of user address `addr` in process `pid`. An address in
    /// no file (code a JIT compiler wrote into anonymous memory) belongs to
    /// the process's own `[anon:PID]` module, at its address, for the
    /// process's perf map (`/tmp/perf-PID.map`) to name.
    pub fn resolve(&mut self, pid: i32, addr: u64) -> Frame {
        if let Some(m) = self.find(pid, addr) {
            return Frame {
                module: m.module,
                offset: addr - m.start + m.pgoff,
            };
        }
        match self.intern(&anon_path(pid), None) {
            Some(module) => Frame {
                module,
                offset: addr,
            },
            None => Frame {
                module: Frame::UNMAPPED,
                offset: addr,
            },
        }
    }
}

/// The module of process `pid`'s anonymous code.
pub fn anon_path(pid: i32) -> String {
    format!("[anon:{pid}]")
}

/// Whether a mapping's name is anonymous memory (JIT code), by the kernel's
/// names for it.
pub fn is_anon(name: &str) -> bool {
    name.is_empty() || name.starts_with("//anon") || name.starts_with("[anon")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_of(m: &mut Maps, pid: i32, addr: u64) -> String {
        let f = m.resolve(pid, addr);
        m.modules[f.module as usize].path.clone()
    }

    #[test]
    fn addresses_become_file_offsets_and_children_inherit() {
        let mut m = Maps::new();
        m.mmap(10, 0x1000, 0x2000, 0x0, "/bin/a");
        m.mmap(10, 0x7000, 0x1000, 0x3000, "/lib/libc.so");
        let a = m.resolve(10, 0x1800);
        assert_eq!(m.modules[a.module as usize].path, "/bin/a");
        assert_eq!(a.offset, 0x800);
        let c = m.resolve(10, 0x7010);
        assert_eq!(m.modules[c.module as usize].path, "/lib/libc.so");
        assert_eq!(c.offset, 0x3010);
        let anon = m.resolve(10, 0x5000);
        assert_eq!(m.modules[anon.module as usize].path, "[anon:10]");
        assert_eq!(anon.offset, 0x5000);
        // A fork shares; an exec in the child forgets; the parent keeps.
        m.fork(10, 11);
        assert_eq!(m.resolve(11, 0x1800), a);
        m.exec(11);
        m.mmap(11, 0x1000, 0x1000, 0, "/bin/b");
        assert_eq!(path_of(&mut m, 11, 0x1800), "/bin/b");
        assert_eq!(m.resolve(10, 0x1800), a);
        // The same file in two processes is one module.
        m.mmap(11, 0x9000, 0x1000, 0x3000, "/lib/libc.so");
        assert_eq!(m.resolve(11, 0x9010), c);
    }

    #[test]
    fn a_new_mapping_replaces_what_it_overlaps() {
        let mut m = Maps::new();
        m.mmap(1, 0x1000, 0x3000, 0, "/x");
        m.mmap(1, 0x2000, 0x1000, 0, "/y");
        assert_eq!(path_of(&mut m, 1, 0x2100), "/y");
        assert_eq!(path_of(&mut m, 1, 0x1100), "[anon:1]");
    }
}
