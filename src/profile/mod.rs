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

pub mod kallsyms;
pub mod maps;
pub mod spin;
pub mod symbols;
pub mod trie;
pub mod unwind;

use foldhash::{HashMap, HashMapExt};

use serde::{Deserialize, Serialize};

pub use maps::Maps;
pub use symbols::{Symbol, Symbolizer};
pub use trie::Trie;
pub use unwind::{Unwinder, UserStack};

/// Samples a second per running thread, by default.
pub const DEFAULT_HZ: u64 = 999;
/// Frames kept of one call chain (the kernel's own cap is 127).
pub const MAX_DEPTH: usize = 127;
/// Distinct frames a run's trie may hold.
const TRIE_CAP: usize = 500_000;
/// Distinct frames the off-CPU trie of one kind of wait may hold.
const WAIT_TRIE_CAP: usize = 100_000;
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
#[cfg(test)]
const CONTEXT_USER: u64 = (-512i64) as u64;
const CONTEXT_MAX: u64 = (-4095i64) as u64;

/// One run's samples, aggregated while it runs.
#[derive(Debug)]
pub struct Collector {
    pub maps: Maps,
    trie: Trie,
    /// Off-CPU: the time threads waited, by kind of wait, on the stack
    /// they blocked with.
    waits: Vec<(&'static str, Trie)>,
    frames: Vec<Frame>,
    unwinder: Unwinder,
    // Scratch: a chain's user addresses, the unwound ones, both joined.
    user: Vec<u64>,
    unwound: Vec<u64>,
    joined: Vec<u64>,
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
            waits: Vec::new(),
            frames: Vec::with_capacity(MAX_DEPTH + 2),
            unwinder: Unwinder::new(),
            user: Vec::with_capacity(MAX_DEPTH),
            unwound: Vec::new(),
            joined: Vec::new(),
            truncated: 0,
            shallow: 0,
        }
    }

    /// `chain` as the kernel gives it (innermost first, with its context
    /// markers) into `self.frames`, innermost first, with the frames the
    /// frame pointers missed unwound from `stack` when it was sampled; the
    /// number of user frames, or `None` for an empty chain.
    fn resolve(
        &mut self,
        pid: i32,
        chain: impl Iterator<Item = u64>,
        stack: Option<&UserStack>,
    ) -> Option<usize> {
        self.frames.clear();
        self.user.clear();
        let mut kernel = false;
        let mut n = 0;
        for ip in chain {
            if ip >= CONTEXT_MAX {
                kernel = ip == CONTEXT_KERNEL;
                continue;
            }
            n += 1;
            if kernel {
                if self.frames.len() >= MAX_DEPTH {
                    self.truncated += 1;
                    break;
                }
                self.frames.push(Frame {
                    module: Frame::KERNEL,
                    offset: ip,
                });
            } else {
                self.user.push(ip);
            }
        }
        if n == 0 {
            return None;
        }
        let mut user = std::mem::take(&mut self.user);
        if let Some(st) = stack.filter(|st| user.first() == Some(&st.ip)) {
            let mut up = std::mem::take(&mut self.unwound);
            let complete = self.unwinder.unwind(&mut self.maps, pid, st, &mut up);
            let mut joined = std::mem::take(&mut self.joined);
            if unwind::splice(&user, &up, complete, &mut joined) {
                self.unwinder.helped += 1;
                std::mem::swap(&mut user, &mut joined);
            }
            self.unwound = up;
            self.joined = joined;
        }
        let mut users = 0;
        let known = self.maps.knows(pid);
        for (i, &ip) in user.iter().enumerate() {
            if self.frames.len() >= MAX_DEPTH {
                self.truncated += 1;
                break;
            }
            // Return addresses point after the call: step back into it.
            let at = if i == 0 { ip } else { ip.saturating_sub(1) };
            // A return address in no executable mapping of a process whose
            // mappings are known is not one: in code built without frame
            // pointers the kernel's walk read other data (a timespec's
            // 999999 ns became a frame at 0xf423f). The chain ends there.
            if i > 0 && known && !self.maps.maps_address(pid, at) {
                break;
            }
            users += 1;
            self.frames.push(self.maps.resolve(pid, at));
        }
        self.user = user;
        Some(users)
    }

    /// One sample of process `pid`: `chain` as the kernel gives it
    /// (innermost first, with its context markers), worth `ns` of CPU;
    /// `stack`, the registers and top of the user stack sampled with it.
    pub fn sample(
        &mut self,
        pid: i32,
        chain: impl Iterator<Item = u64>,
        stack: Option<&UserStack>,
        ns: u64,
    ) {
        let Some(users) = self.resolve(pid, chain, stack) else {
            return;
        };
        if users == 1 {
            self.shallow += 1;
        }
        self.trie.add(self.frames.iter().rev().copied(), ns);
    }

    /// The stack (outermost first) of a thread of `pid` that blocks, from
    /// its call chain, resolved through the mappings of that moment.
    pub fn stack(
        &mut self,
        pid: i32,
        chain: impl Iterator<Item = u64>,
        stack: Option<&UserStack>,
    ) -> Vec<Frame> {
        match self.resolve(pid, chain, stack) {
            Some(_) => self.frames.iter().rev().copied().collect(),
            None => Vec::new(),
        }
    }

    /// A wait of kind `kind` that lasted `ns`, on the stack `frames`
    /// (outermost first) its thread blocked with.
    pub fn waited(&mut self, kind: &'static str, frames: &[Frame], ns: u64) {
        self.waited_many(kind, frames, ns, 1);
    }

    /// `n` waits of kind `kind` that lasted `ns` in all, on the stack `frames`.
    pub fn waited_many(&mut self, kind: &'static str, frames: &[Frame], ns: u64, n: u64) {
        if frames.is_empty() || n == 0 {
            return;
        }
        let i = match self.waits.iter().position(|(k, _)| *k == kind) {
            Some(i) => i,
            None => {
                self.waits.push((kind, Trie::new(WAIT_TRIE_CAP)));
                self.waits.len() - 1
            }
        };
        self.waits[i].1.add_many(frames.iter().copied(), ns, n);
    }

    /// The run's stacks, still without names; `notes` say what limited them.
    pub fn finish(self, notes: Vec<String>) -> RawProfile {
        let capped_ns = self.trie.capped_ns + self.waits.iter().map(|w| w.1.capped_ns).sum::<u64>();
        RawProfile {
            notes,
            stacks: self.trie.stacks(),
            waits: self.waits.iter().map(|(k, t)| (*k, t.stacks())).collect(),
            wakes: Vec::new(),
            modules: self.maps.modules,
            samples: self.trie.samples,
            total_ns: self.trie.total_ns,
            capped_ns,
            truncated: self.truncated,
            shallow: self.shallow,
        }
    }
}

/// A stack (outermost frame first) and its time, ns.
pub type RawStack = (Vec<Frame>, u64);

/// One run's sampled stacks (outermost frame first) before symbols.
#[derive(Debug, Clone, Default)]
pub struct RawProfile {
    pub notes: Vec<String>,
    pub stacks: Vec<RawStack>,
    /// Off-CPU stacks by kind of wait (as `record::Kind` names them).
    pub waits: Vec<(&'static str, Vec<RawStack>)>,
    /// Who ended the waits: each wait stack with the thread that woke it
    /// and that thread's own stack then.
    pub wakes: Vec<RawWake>,
    pub modules: Vec<Module>,
    pub samples: u64,
    pub total_ns: u64,
    pub capped_ns: u64,
    pub truncated: u64,
    pub shallow: u64,
}

/// Waits of one kind on one stack that one thread ended from one stack
/// (its stack when it woke them): the waker named by its process's command
/// and its thread ("main thread", or the thread's name), as the same code
/// is in every run whatever its pids.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawWake {
    pub kind: &'static str,
    pub wait: Vec<Frame>,
    pub process: String,
    pub thread: String,
    pub waker: Vec<Frame>,
    pub ns: u64,
    pub n: u64,
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

/// A stack a thread blocked with (indexes into `functions`, outermost
/// first, innermost the kernel's frames), the kind of wait (as saved
/// traces name kinds: "futex-wait", "sleep", "pipe-read"...) and the
/// seconds waited there in each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitRow {
    pub kind: String,
    pub frames: Vec<u32>,
    pub s: Vec<f64>,
}

/// Who ended waits: the waits of `kind` on the stack `frames` that a
/// thread (`thread` of the process `process`) ended from the stack `waker`
/// (indexes into `functions`, outermost first), seconds in each run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WakeRow {
    pub kind: String,
    pub frames: Vec<u32>,
    pub process: String,
    pub thread: String,
    pub waker: Vec<u32>,
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
    /// Off-CPU: where the threads waited, by kind of wait.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<WaitRow>,
    /// Who ended those waits (kernel-event recorder, threads of the tree).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wakes: Vec<WakeRow>,
    /// What limits the profile (stripped modules, shallow stacks, caps), one line each.
    #[serde(default)]
    pub notes: Vec<String>,
    /// CPU seconds sampled in spin-wait loops in each run: the sampled
    /// instruction inside a loop whose machine code holds PAUSE ([`spin`]),
    /// or a thread in `sched_yield`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spin_s: Vec<f64>,
}

/// A [`WakeRow`]'s identity: kind, wait stack, process, thread, waker stack.
type WakeKey = (&'static str, Vec<u32>, String, String, Vec<u32>);

/// Builds a [`Profile`] run by run, naming each frame once.
pub struct Builder {
    rate_hz: u64,
    symbolizer: Symbolizer,
    functions: Vec<FunctionInfo>,
    function_ids: HashMap<(String, String), u32>,
    stacks: HashMap<Vec<u32>, Vec<f64>>,
    waits: HashMap<(&'static str, Vec<u32>), Vec<f64>>,
    wakes: HashMap<WakeKey, Vec<f64>>,
    runs: usize,
    samples: u64,
    truncated: u64,
    shallow: u64,
    capped: bool,
    folded: bool,
    notes: Vec<String>,
    spin_s: Vec<f64>,
    loops: spin::SpinLoops,
}

impl Builder {
    pub fn new(rate_hz: u64) -> Builder {
        Builder {
            rate_hz,
            symbolizer: Symbolizer::new(),
            functions: Vec::new(),
            function_ids: HashMap::new(),
            stacks: HashMap::new(),
            waits: HashMap::new(),
            wakes: HashMap::new(),
            runs: 0,
            samples: 0,
            truncated: 0,
            shallow: 0,
            capped: false,
            folded: false,
            notes: Vec::new(),
            spin_s: Vec::new(),
            loops: spin::SpinLoops::new(),
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
        self.spin_s.push(0.0);
        for v in self
            .stacks
            .values_mut()
            .chain(self.waits.values_mut())
            .chain(self.wakes.values_mut())
        {
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
            let mut ids = self.name_stack(&raw.modules, frames, &mut named);
            let secs = *ns as f64 / 1e9;
            if self.spun(&raw.modules, frames, &ids) {
                self.spin_s[run] += secs;
            }
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
        for (kind, stacks) in &raw.waits {
            for (frames, ns) in stacks {
                let ids = self.name_stack(&raw.modules, frames, &mut named);
                let mut key = (*kind, ids);
                if !self.waits.contains_key(&key) && self.waits.len() >= MAX_STACKS {
                    self.folded = true;
                    while !key.1.is_empty() && !self.waits.contains_key(&key) {
                        key.1.pop();
                    }
                }
                let row = self.waits.entry(key).or_insert_with(|| vec![0.0; run + 1]);
                row[run] += *ns as f64 / 1e9;
            }
        }
        for w in &raw.wakes {
            let key = (
                w.kind,
                self.name_stack(&raw.modules, &w.wait, &mut named),
                w.process.clone(),
                w.thread.clone(),
                self.name_stack(&raw.modules, &w.waker, &mut named),
            );
            if !self.wakes.contains_key(&key) && self.wakes.len() >= MAX_STACKS {
                self.folded = true;
                continue;
            }
            let row = self.wakes.entry(key).or_insert_with(|| vec![0.0; run + 1]);
            row[run] += w.ns as f64 / 1e9;
        }
    }

    /// A stack of frames as function ids (inline frames expanded), each
    /// frame named once a run.
    fn name_stack(
        &mut self,
        modules: &[Module],
        frames: &[Frame],
        named: &mut HashMap<Frame, Vec<u32>>,
    ) -> Vec<u32> {
        let mut ids = Vec::with_capacity(frames.len());
        for f in frames {
            if !named.contains_key(f) {
                let syms = self.symbolizer.symbolize(modules, *f);
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
        ids
    }

    /// Whether a sampled stack was spinning: its leaf (a user address)
    /// inside a PAUSE loop, or a thread in `sched_yield`.
    fn spun(&mut self, modules: &[Module], frames: &[Frame], ids: &[u32]) -> bool {
        if let Some(leaf) = frames.last()
            && let Some(m) = modules.get(leaf.module as usize)
            && self.loops.spinning(&m.path, leaf.offset)
        {
            return true;
        }
        ids.iter().any(|&i| {
            self.functions.get(i as usize).is_some_and(|f| {
                matches!(
                    f.function.as_str(),
                    "sched_yield" | "__sched_yield" | "do_sched_yield" | "__x64_sys_sched_yield"
                )
            })
        })
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
        let mut waits: Vec<WaitRow> = self
            .waits
            .into_iter()
            .map(|((kind, frames), s)| WaitRow {
                kind: kind.to_string(),
                frames,
                s,
            })
            .collect();
        waits.sort_by(|a, b| (&a.kind, &a.frames).cmp(&(&b.kind, &b.frames)));
        let mut wakes: Vec<WakeRow> = self
            .wakes
            .into_iter()
            .map(|((kind, frames, process, thread, waker), s)| WakeRow {
                kind: kind.to_string(),
                frames,
                process,
                thread,
                waker,
                s,
            })
            .collect();
        wakes.sort_by(|a, b| {
            (&a.kind, &a.frames, &a.process, &a.thread, &a.waker)
                .cmp(&(&b.kind, &b.frames, &b.process, &b.thread, &b.waker))
        });
        Profile {
            rate_hz: self.rate_hz,
            runs: self.runs,
            samples: self.samples,
            functions: self.functions,
            stacks,
            waits,
            wakes,
            notes,
            spin_s: if self.samples > 0 {
                self.spin_s
            } else {
                Vec::new()
            },
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
        for (i, w) in self.waits.iter().enumerate() {
            if w.frames.iter().any(|&f| f >= n) {
                return Err(format!(
                    "profile wait stack {} names a function out of range",
                    i + 1
                ));
            }
            if w.s.len() != self.runs || w.s.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(format!("profile wait stack {} has invalid times", i + 1));
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
        c.sample(7, chain.into_iter(), None, 1_000_000);
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
    fn a_return_address_in_no_mapping_ends_the_chain() {
        // `sleep` built without frame pointers: the kernel's walk read the
        // timespec's 999999 ns as a return address. JIT code the kernel
        // reported as an anonymous executable mapping stays a frame.
        let mut c = Collector::new();
        c.maps.mmap(7, 0x1000, 0x1000, 0, "/lib/libc.so");
        c.maps.mmap(7, 0x8000, 0x1000, 0x8000, &maps::anon_path(7));
        let frames = c.stack(7, [CONTEXT_USER, 0x1010, 0xf423f, 0x1101].into_iter(), None);
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(frames[0].offset, 0x10);
        let frames = c.stack(7, [CONTEXT_USER, 0x1010, 0x8101, 0x1101].into_iter(), None);
        assert_eq!(frames.len(), 3, "{frames:?}");
        // An interrupted instruction in unknown memory is kept (code the
        // kernel did not report yet), and so is anything of a process
        // whose mappings were never seen.
        assert_eq!(
            c.stack(7, [CONTEXT_USER, 0x5000].into_iter(), None).len(),
            1
        );
        assert_eq!(
            c.stack(8, [CONTEXT_USER, 0x1010, 0xf423f].into_iter(), None)
                .len(),
            2
        );
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
            waits: vec![],
            wakes: vec![],
            notes: vec![],
            spin_s: vec![],
        };
        p.validate().unwrap();
        let f = p.per_function();
        assert_eq!(f[1].0, vec![1.0, 2.0]);
        assert_eq!(f[1].1, vec![1.0, 2.0]);
        assert_eq!(f[0].0, vec![0.5, 0.0]);
        assert_eq!(f[0].1, vec![1.5, 2.0]);
    }
}
