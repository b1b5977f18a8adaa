//! Stack sampling and symbols: which code the command's CPU time went to.
//!
//! The kernel-event recorder samples every thread of the command's tree
//! with the software `cpu-clock` event (no hardware counters needed) and
//! its user and kernel call chains (frame pointers). [`Collector`] turns
//! each sample into frames of (module, offset in the file) through the
//! processes' mappings ([`maps`]) and adds it to a [`trie`] in place; no
//! record per sample is kept. After the runs, [`Profile::build`] names each
//! distinct frame once ([`symbols`]) and keeps the stacks with their time in
//! each run: what `tardy explain` ranks functions by, what `--save` keeps
//! and what the folded, pprof and flame-graph exports draw.

pub mod maps;
pub mod symbols;
pub mod trie;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

pub use maps::Maps;
pub use symbols::{Symbol, Symbolizer};
pub use trie::Trie;

/// Samples a second per running thread, by default.
pub const DEFAULT_HZ: u64 = 999;
/// Frames kept of one call chain (the kernel's own cap is 127).
pub const MAX_DEPTH: usize = 127;
/// Distinct frames a run's trie may hold.
const TRIE_CAP: usize = 500_000;
/// Distinct stacks a saved profile keeps (the rest fold into their callers).
const MAX_STACKS: usize = 50_000;

/// A frame before symbols: an offset in a module's file, or a kernel address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    pub module: u32,
    pub offset: u64,
}

impl Frame {
    /// The trie's root (never a real frame).
    pub const ROOT: Frame = Frame {
        module: u32::MAX - 2,
        offset: 0,
    };
    /// The module of a user address outside every known mapping (offset:
    /// the address).
    pub const UNMAPPED: u32 = u32::MAX - 1;
    /// The module of a kernel address (offset: the address).
    pub const KERNEL: u32 = u32::MAX;
}

/// A file mapped executable by some process of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    pub path: String,
    /// The build id the kernel saw mapped (kernels 5.12 and later), to
    /// tell a file replaced since the run.
    pub build_id: Option<Vec<u8>>,
}

// perf's markers inside a call chain (linux/perf_event.h).
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
const CONTEXT_USER: u64 = (-512i64) as u64;
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// One run's samples, aggregated while it runs.
#[derive(Debug)]
pub struct Collector {
    pub maps: Maps,
    trie: Trie,
    frames: Vec<Frame>,
    /// Call chains cut at [`MAX_DEPTH`].
    pub truncated: u64,
    /// Samples whose user stack was one frame deep (code built without
    /// frame pointers, or a leaf of such code).
    pub shallow: u64,
}

impl Default for Collector {
    fn default() -> Self {
        Collector::new()
    }
}

impl Collector {
    pub fn new() -> Collector {
        Collector {
            maps: Maps::new(),
            trie: Trie::new(TRIE_CAP),
            frames: Vec::with_capacity(MAX_DEPTH + 2),
            truncated: 0,
            shallow: 0,
        }
    }

    /// One sample of process `pid`: `chain` as the kernel gives it
    /// (innermost first, with its context markers), worth `ns` of CPU.
    pub fn sample(&mut self, pid: i32, chain: impl Iterator<Item = u64>, ns: u64) {
        self.frames.clear();
        let mut kernel = false;
        let mut first_user = true;
        let mut users = 0;
        let mut n = 0;
        for ip in chain {
            if ip >= CONTEXT_MAX {
                kernel = ip == CONTEXT_KERNEL;
                if ip == CONTEXT_USER {
                    first_user = true;
                }
                continue;
            }
            n += 1;
            if self.frames.len() >= MAX_DEPTH {
                self.truncated += 1;
                break;
            }
            if kernel {
                self.frames.push(Frame {
                    module: Frame::KERNEL,
                    offset: ip,
                });
            } else {
                // Return addresses point after the call: step back into it.
                let at = if first_user { ip } else { ip.saturating_sub(1) };
                first_user = false;
                users += 1;
                self.frames.push(self.maps.resolve(pid, at));
            }
        }
        if n == 0 {
            return;
        }
        if users == 1 {
            self.shallow += 1;
        }
        self.trie.add(self.frames.iter().rev().copied(), ns);
    }

    /// The run's stacks, still without names; `notes` say what limited them.
    pub fn finish(self, notes: Vec<String>) -> RawProfile {
        RawProfile {
            notes,
            stacks: self.trie.stacks(),
            modules: self.maps.modules,
            samples: self.trie.samples,
            total_ns: self.trie.total_ns,
            capped_ns: self.trie.capped_ns,
            truncated: self.truncated,
            shallow: self.shallow,
        }
    }
}

/// One run's sampled stacks (outermost frame first) before symbols.
#[derive(Debug, Clone, Default)]
pub struct RawProfile {
    pub notes: Vec<String>,
    pub stacks: Vec<(Vec<Frame>, u64)>,
    pub modules: Vec<Module>,
    pub samples: u64,
    pub total_ns: u64,
    pub capped_ns: u64,
    pub truncated: u64,
    pub shallow: u64,
}

/// A function, as the profile names it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionInfo {
    pub function: String,
    pub module: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// A stack of functions (indexes into `functions`, outermost first) and
/// the CPU seconds sampled with it on top, in each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StackRow {
    pub frames: Vec<u32>,
    pub s: Vec<f64>,
}

/// The sampled CPU profile of a set of runs, with names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    /// Samples a second per running thread.
    pub rate_hz: u64,
    pub runs: usize,
    pub samples: u64,
    pub functions: Vec<FunctionInfo>,
    pub stacks: Vec<StackRow>,
    /// What limits the profile (stripped modules, shallow stacks, caps), one line each.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Builds a [`Profile`] run by run, naming each frame once.
pub struct Builder {
    rate_hz: u64,
    symbolizer: Symbolizer,
    functions: Vec<FunctionInfo>,
    function_ids: HashMap<(String, String), u32>,
    stacks: HashMap<Vec<u32>, Vec<f64>>,
    runs: usize,
    samples: u64,
    truncated: u64,
    shallow: u64,
    capped: bool,
    folded: bool,
    notes: Vec<String>,
}

impl Builder {
    pub fn new(rate_hz: u64) -> Builder {
        Builder {
            rate_hz,
            symbolizer: Symbolizer::new(),
            functions: Vec::new(),
            function_ids: HashMap::new(),
            stacks: HashMap::new(),
            runs: 0,
            samples: 0,
            truncated: 0,
            shallow: 0,
            capped: false,
            folded: false,
            notes: Vec::new(),
        }
    }

    fn function(&mut self, s: Symbol) -> u32 {
        let key = (s.function, s.module);
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.functions.len() as u32;
        self.functions.push(FunctionInfo {
            function: key.0.clone(),
            module: key.1.clone(),
            file: s.file,
            line: s.line,
        });
        self.function_ids.insert(key, id);
        id
    }

    /// Add the next run (`None`: a run without a profile, counted as empty).
    pub fn add_run(&mut self, raw: Option<&RawProfile>) {
        let run = self.runs;
        self.runs += 1;
        for v in self.stacks.values_mut() {
            v.push(0.0);
        }
        let Some(raw) = raw else {
            return;
        };
        for n in &raw.notes {
            if !self.notes.contains(n) && self.notes.len() < 20 {
                self.notes.push(n.clone());
            }
        }
        self.samples += raw.samples;
        self.truncated += raw.truncated;
        self.shallow += raw.shallow;
        self.capped |= raw.capped_ns > 0;
        let mut named: HashMap<Frame, Vec<u32>> = HashMap::new();
        for (frames, ns) in &raw.stacks {
            let mut ids = Vec::with_capacity(frames.len());
            for f in frames {
                if !named.contains_key(f) {
                    let syms = self.symbolizer.symbolize(&raw.modules, *f);
                    let v: Vec<u32> = syms.into_iter().map(|s| self.function(s)).collect();
                    named.insert(*f, v);
                }
                if let Some(v) = named.get(f) {
                    ids.extend_from_slice(v);
                }
            }
            if ids.len() > MAX_DEPTH * 2 {
                ids.truncate(MAX_DEPTH * 2);
            }
            let secs = *ns as f64 / 1e9;
            if !self.stacks.contains_key(&ids) && self.stacks.len() >= MAX_STACKS {
                // Fold into the caller that is already known.
                self.folded = true;
                while !ids.is_empty() && !self.stacks.contains_key(&ids) {
                    ids.pop();
                }
            }
            let row = self.stacks.entry(ids).or_insert_with(|| vec![0.0; run + 1]);
            row[run] += secs;
        }
    }

    pub fn finish(self) -> Profile {
        let mut notes = self.notes.clone();
        notes.extend(self.symbolizer.notes.iter().cloned());
        if self.samples > 0 && self.shallow * 2 > self.samples {
            notes.push(format!(
                "{}% of the samples have a one-frame user stack: code built without frame pointers shows its leaf functions only",
                self.shallow * 100 / self.samples
            ));
        }
        if self.truncated > 0 {
            notes.push(format!(
                "{} samples had call chains deeper than {MAX_DEPTH} frames: cut there",
                self.truncated
            ));
        }
        if self.capped || self.folded {
            notes.push(
                "more distinct stacks than the profile keeps: the rest are counted with their callers"
                    .into(),
            );
        }
        let mut stacks: Vec<StackRow> = self
            .stacks
            .into_iter()
            .map(|(frames, s)| StackRow { frames, s })
            .collect();
        stacks.sort_by(|a, b| a.frames.cmp(&b.frames));
        Profile {
            rate_hz: self.rate_hz,
            runs: self.runs,
            samples: self.samples,
            functions: self.functions,
            stacks,
            notes,
        }
    }
}

impl Profile {
    /// Per function: (self, total) CPU seconds in each run.
    pub fn per_function(&self) -> Vec<(Vec<f64>, Vec<f64>)> {
        let mut out = vec![(vec![0.0; self.runs], vec![0.0; self.runs]); self.functions.len()];
        let mut seen: Vec<u32> = Vec::new();
        for st in &self.stacks {
            if let Some(&leaf) = st.frames.last()
                && let Some(f) = out.get_mut(leaf as usize)
            {
                for (r, s) in st.s.iter().enumerate().take(self.runs) {
                    f.0[r] += s;
                }
            }
            seen.clear();
            for &fr in &st.frames {
                if seen.contains(&fr) {
                    continue; // recursion: once per stack
                }
                seen.push(fr);
                if let Some(f) = out.get_mut(fr as usize) {
                    for (r, s) in st.s.iter().enumerate().take(self.runs) {
                        f.1[r] += s;
                    }
                }
            }
        }
        out
    }

    /// Check a profile read from a file: indexes in range, runs consistent.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.functions.len() as u32;
        for (i, st) in self.stacks.iter().enumerate() {
            if st.frames.iter().any(|&f| f >= n) {
                return Err(format!(
                    "profile stack {} names a function out of range",
                    i + 1
                ));
            }
            if st.s.len() != self.runs || st.s.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(format!("profile stack {} has invalid times", i + 1));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_becomes_a_stack_of_file_offsets_outermost_first() {
        let mut c = Collector::new();
        c.maps.mmap(7, 0x1000, 0x1000, 0, "/bin/x");
        let chain = [
            CONTEXT_KERNEL,
            0xffff_ffff_8100_0000,
            CONTEXT_USER,
            0x1010, // the interrupted instruction
            0x1101, // a return address: looked up at 0x1100
        ];
        c.sample(7, chain.into_iter(), 1_000_000);
        let raw = c.finish(Vec::new());
        assert_eq!(raw.stacks.len(), 1);
        let (frames, ns) = &raw.stacks[0];
        assert_eq!(*ns, 1_000_000);
        assert_eq!(
            frames[0],
            Frame {
                module: 0,
                offset: 0x100
            }
        );
        assert_eq!(
            frames[1],
            Frame {
                module: 0,
                offset: 0x10
            }
        );
        assert_eq!(frames[2].module, Frame::KERNEL);
    }

    #[test]
    fn per_function_self_and_total_count_recursion_once() {
        let p = Profile {
            rate_hz: 999,
            runs: 2,
            samples: 3,
            functions: vec![
                FunctionInfo {
                    function: "main".into(),
                    ..FunctionInfo::default()
                },
                FunctionInfo {
                    function: "f".into(),
                    ..FunctionInfo::default()
                },
            ],
            stacks: vec![
                StackRow {
                    frames: vec![0, 1, 1],
                    s: vec![1.0, 2.0],
                },
                StackRow {
                    frames: vec![0],
                    s: vec![0.5, 0.0],
                },
            ],
            notes: vec![],
        };
        p.validate().unwrap();
        let f = p.per_function();
        assert_eq!(f[1].0, vec![1.0, 2.0]);
        assert_eq!(f[1].1, vec![1.0, 2.0]);
        assert_eq!(f[0].0, vec![0.5, 0.0]);
        assert_eq!(f[0].1, vec![1.5, 2.0]);
    }
}
