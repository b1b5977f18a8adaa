//! Unwinding what frame pointers miss, from a copy of the top of the user
//! stack and the unwind tables every ELF file carries (`.eh_frame`, looked
//! up through `.eh_frame_hdr`).
//!
//! The kernel walks user stacks by frame pointers. Code built without them
//! (most distributions' libc, `-O2` builds) breaks that walk: a thread
//! blocked in `pthread_mutex_lock` shows its caller's caller, and a sample
//! in a function without a frame loses the function that called it. With
//! the registers and the first bytes of the stack sampled beside the chain,
//! [`Unwinder::unwind`] follows the unwind tables up from the interrupted
//! instruction until it meets the frame-pointer chain again (or runs out of
//! copied stack), and [`splice`] joins the two.
//!
//! Each module's tables are read once, and each distinct address's rule
//! once, in tardy's process (never in the command's); the rules kept are
//! the common ones (the frame's base from the stack or frame pointer, the
//! return address and the saved frame pointer at fixed places from it).
//! x86-64 only: elsewhere the frame-pointer chain is used as the kernel
//! gives it.

use foldhash::{HashMap, HashMapExt};

use gimli::{
    BaseAddresses, CfaRule, EhFrame, EhFrameHdr, LittleEndian, Register, RegisterRule,
    UnwindContext, UnwindSection,
};

use super::{Frame, Maps};

/// Frames unwound at most from one copy of the stack.
const MAX_UNWIND: usize = 64;
/// Unwind tables larger than this are not read.
const MAX_TABLES: usize = 64 << 20;

// DWARF register numbers on x86-64.
const RBP: Register = Register(6);
const RSP: Register = Register(7);
const RA: Register = Register(16);

/// The user registers sampled with a chain, and the copy of the stack
/// from the stack pointer up.
#[derive(Debug, Clone, Copy)]
pub struct UserStack<'a> {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
    pub bytes: &'a [u8],
}

impl UserStack<'_> {
    fn read(&self, addr: u64) -> Option<u64> {
        let at = usize::try_from(addr.checked_sub(self.sp)?).ok()?;
        let b = self.bytes.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

/// How to find the caller's frame from one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rule {
    /// The frame's base (CFA) is the frame pointer plus `cfa_off` (else the
    /// stack pointer plus it).
    cfa_bp: bool,
    cfa_off: i64,
    /// Where the return address is, from the CFA (`None`: nowhere, the
    /// outermost frame, as `_start` and `clone3` mark themselves).
    ra_off: Option<i64>,
    /// Where the caller's frame pointer is saved, from the CFA (`None`: the
    /// register is unchanged).
    bp_off: Option<i64>,
}

/// One module's unwind tables.
struct Tables {
    eh_frame: Vec<u8>,
    eh_frame_addr: u64,
    hdr: Vec<u8>,
    hdr_addr: u64,
    text_addr: u64,
    segments: super::symbols::Segments,
}

impl Tables {
    fn read(path: &str) -> Option<Tables> {
        use object::{Object, ObjectSection};
        if !path.starts_with('/') {
            return None;
        }
        let cache = object::ReadCache::new(std::fs::File::open(path).ok()?);
        let file = object::File::parse(&cache).ok()?;
        let section = |name: &str| -> Option<(Vec<u8>, u64)> {
            let s = file.section_by_name(name)?;
            if s.size() as usize > MAX_TABLES {
                return None;
            }
            Some((s.data().ok()?.to_vec(), s.address()))
        };
        let (eh_frame, eh_frame_addr) = section(".eh_frame")?;
        let (hdr, hdr_addr) = section(".eh_frame_hdr")?;
        let text_addr = file.section_by_name(".text").map_or(0, |s| s.address());
        let segments = file
            .segments()
            .map(|s| {
                use object::ObjectSegment;
                let (off, size) = s.file_range();
                (off, size, s.address())
            })
            .collect();
        Some(Tables {
            eh_frame,
            eh_frame_addr,
            hdr,
            hdr_addr,
            text_addr,
            segments,
        })
    }

    /// The rule at file offset `offset`.
    fn rule(&self, ctx: &mut UnwindContext<usize>, offset: u64) -> Option<Rule> {
        let addr = self
            .segments
            .iter()
            .find(|(off, size, _)| offset >= *off && offset < off + size)
            .map(|(off, _, vaddr)| offset - off + vaddr)?;
        let bases = BaseAddresses::default()
            .set_eh_frame_hdr(self.hdr_addr)
            .set_eh_frame(self.eh_frame_addr)
            .set_text(self.text_addr);
        let hdr = EhFrameHdr::new(&self.hdr, LittleEndian)
            .parse(&bases, 8)
            .ok()?;
        let table = hdr.table()?;
        let eh_frame = EhFrame::new(&self.eh_frame, LittleEndian);
        let row = table
            .unwind_info_for_address(&eh_frame, &bases, ctx, addr, EhFrame::cie_from_offset)
            .ok()?;
        let (cfa_bp, cfa_off) = match row.cfa() {
            CfaRule::RegisterAndOffset { register, offset } if *register == RSP => (false, *offset),
            CfaRule::RegisterAndOffset { register, offset } if *register == RBP => (true, *offset),
            _ => return None,
        };
        let ra_off = match row.register(RA) {
            RegisterRule::Offset(o) => Some(o),
            RegisterRule::Undefined => None,
            _ => return None,
        };
        let bp_off = match row.register(RBP) {
            RegisterRule::Offset(o) => Some(o),
            RegisterRule::Undefined | RegisterRule::SameValue => None,
            _ => return None,
        };
        Some(Rule {
            cfa_bp,
            cfa_off,
            ra_off,
            bp_off,
        })
    }
}

/// Unwinds copies of user stacks, caching tables and rules.
pub struct Unwinder {
    tables: HashMap<u32, Option<Tables>>,
    rules: HashMap<Frame, Option<Rule>>,
    ctx: Box<UnwindContext<usize>>,
    /// Stacks unwound further than the frame pointers went.
    pub helped: u64,
}

impl Default for Unwinder {
    fn default() -> Self {
        Unwinder::new()
    }
}

impl std::fmt::Debug for Unwinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unwinder")
            .field("modules", &self.tables.len())
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl Unwinder {
    pub fn new() -> Unwinder {
        Unwinder {
            tables: HashMap::new(),
            rules: HashMap::new(),
            ctx: Box::new(UnwindContext::new()),
            helped: 0,
        }
    }

    fn rule(&mut self, maps: &Maps, f: Frame) -> Option<Rule> {
        if let Some(r) = self.rules.get(&f) {
            return *r;
        }
        let path = maps.modules.get(f.module as usize).map(|m| m.path.as_str());
        let tables = self
            .tables
            .entry(f.module)
            .or_insert_with(|| path.and_then(Tables::read));
        let rule = tables
            .as_ref()
            .and_then(|t| t.rule(&mut self.ctx, f.offset));
        self.rules.insert(f, rule);
        rule
    }

    /// The return addresses above the interrupted instruction of process
    /// `pid` (innermost first), as far as the copy of the stack and the
    /// unwind tables go; true when they went all the way to the outermost
    /// frame.
    pub fn unwind(
        &mut self,
        maps: &mut Maps,
        pid: i32,
        stack: &UserStack,
        out: &mut Vec<u64>,
    ) -> bool {
        out.clear();
        if !cfg!(target_arch = "x86_64") {
            return false;
        }
        let (mut ip, mut sp, mut bp) = (stack.ip, stack.sp, stack.bp);
        for depth in 0..MAX_UNWIND {
            let at = if depth == 0 { ip } else { ip.saturating_sub(1) };
            let f = maps.resolve(pid, at);
            if f.module == Frame::UNMAPPED {
                return false;
            }
            let Some(rule) = self.rule(maps, f) else {
                return false;
            };
            let Some(ra_off) = rule.ra_off else {
                return true;
            };
            let base = if rule.cfa_bp { bp } else { sp };
            let cfa = base.wrapping_add_signed(rule.cfa_off);
            let Some(ra) = stack.read(cfa.wrapping_add_signed(ra_off)) else {
                return false;
            };
            if let Some(o) = rule.bp_off {
                match stack.read(cfa.wrapping_add_signed(o)) {
                    Some(v) => bp = v,
                    None => return false,
                }
            }
            if ra == 0 {
                return true;
            }
            if cfa <= sp {
                return false;
            }
            out.push(ra);
            sp = cfa;
            ip = ra;
        }
        false
    }
}

/// The user part of a chain (`user[0]`: the interrupted instruction, then
/// the return addresses the frame pointers gave) joined with what the
/// unwind tables found (`unwound`, the return addresses above `user[0]`):
/// the unwound frames up to where they meet the frame-pointer chain, then
/// that chain. When they never meet, the unwound frames stand alone if
/// they reached the outermost frame (`complete`: the frame pointers were
/// other data, in code built without them) or the frame pointers found
/// nothing.
pub fn splice(user: &[u64], unwound: &[u64], complete: bool, out: &mut Vec<u64>) -> bool {
    out.clear();
    let Some(&first) = user.first() else {
        return false;
    };
    out.push(first);
    for (k, ra) in unwound.iter().enumerate() {
        if let Some(j) = user.iter().skip(1).position(|u| u == ra) {
            out.extend_from_slice(&unwound[..k]);
            out.extend_from_slice(&user[1 + j..]);
            return k > 0;
        }
    }
    if (complete || user.len() == 1) && !unwound.is_empty() {
        out.extend_from_slice(unwound);
        return true;
    }
    out.extend_from_slice(&user[1..]);
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwound_frames_fill_the_gap_until_the_frame_pointers_take_over() {
        let mut out = Vec::new();
        // Frame pointers: leaf, then main (the caller of the frameless
        // function that called the leaf is lost).
        let user = [0x10, 0x300, 0x400];
        // Unwind tables: the leaf's caller 0x200, then main's 0x300.
        assert!(splice(&user, &[0x200, 0x300, 0x999], false, &mut out));
        assert_eq!(out, vec![0x10, 0x200, 0x300, 0x400]);
        // Nothing missing: the chain as it was.
        assert!(!splice(&user, &[0x300], false, &mut out));
        assert_eq!(out, vec![0x10, 0x300, 0x400]);
        // Never meeting, the copy ran out: the frame-pointer chain stands.
        assert!(!splice(&user, &[0x777], false, &mut out));
        assert_eq!(out, vec![0x10, 0x300, 0x400]);
        // Never meeting, but unwound to the outermost frame: the "frame
        // pointers" were other data.
        assert!(splice(&user, &[0x777, 0x888], true, &mut out));
        assert_eq!(out, vec![0x10, 0x777, 0x888]);
        // No frame pointers at all: the unwound frames.
        assert!(splice(&[0x10], &[0x200, 0x300], false, &mut out));
        assert_eq!(out, vec![0x10, 0x200, 0x300]);
    }

    #[test]
    fn this_test_binary_unwinds_its_own_stack() {
        // A copy of our own stack, unwound with our own tables, finds the
        // return address into the caller.
        #[inline(never)]
        fn here(out: &mut Vec<u64>) -> (u64, u64, u64, Vec<u8>) {
            let (ip, sp, bp): (u64, u64, u64);
            // SAFETY: reads registers only.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                std::arch::asm!("lea {0}, [rip]", "mov {1}, rsp", "mov {2}, rbp", out(reg) ip, out(reg) sp, out(reg) bp);
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                (ip, sp, bp) = (0, 0, 0);
            }
            // SAFETY: the 2 KiB above our stack pointer are our own stack.
            let bytes = unsafe { std::slice::from_raw_parts(sp as *const u8, 2048) }.to_vec();
            out.push(ip);
            (ip, sp, bp, bytes)
        }
        if !cfg!(target_arch = "x86_64") {
            return;
        }
        let mut ips = Vec::new();
        let (ip, sp, bp, bytes) = here(&mut ips);
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let maps_text = std::fs::read_to_string("/proc/self/maps").unwrap();
        let mut maps = Maps::new();
        for line in maps_text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 6 || !f[1].contains('x') {
                continue;
            }
            let (s, e) = f[0].split_once('-').unwrap();
            let s = u64::from_str_radix(s, 16).unwrap();
            let e = u64::from_str_radix(e, 16).unwrap();
            let off = u64::from_str_radix(f[2], 16).unwrap();
            maps.mmap(1, s, e - s, off, f[5]);
        }
        let mut u = Unwinder::new();
        let mut out = Vec::new();
        let stack = UserStack {
            ip,
            sp,
            bp,
            bytes: &bytes,
        };
        let _ = u.unwind(&mut maps, 1, &stack, &mut out);
        assert!(!out.is_empty(), "nothing unwound in {}", exe.display());
        // The first return address is in this test function's own code.
        let f = maps.resolve(1, out[0] - 1);
        assert_ne!(f.module, Frame::UNMAPPED);
        assert!(
            maps.modules[f.module as usize]
                .path
                .ends_with(&*exe.file_name().unwrap().to_string_lossy())
        );
    }
}
