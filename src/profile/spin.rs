//! Spin-wait loops, found in the machine code where CPU samples landed.
//!
//! Skylake-SP's story: a PAUSE that takes 140 cycles instead of 10 makes
//! every spin-then-park lock burn more CPU before it parks. No hardware
//! counter in a VM counts PAUSEs, and a symbol name ("spin", "backoff")
//! proves nothing, so the profile's own evidence decides: a sample is
//! spinning when the instruction it interrupted lies inside a short loop
//! whose body holds a spin-wait hint (`PAUSE` on x86-64), read from the
//! sampled file's own bytes and decoded with `iced-x86`.
//!
//! A sample's leaf address is an instruction boundary (the interrupted
//! instruction), so decoding forward from it is exact: the first backward
//! branch found within [`AHEAD`] bytes whose target lies at or before the
//! sample closes the innermost loop around it, and that loop's body is
//! decoded from its target (a branch target: also a boundary) to the
//! branch. Only that loop decides (a thread's main loop holds its spin
//! loop and its work alike); loops longer than [`LOOP_MAX`] bytes are not
//! spin loops.

use std::collections::HashMap;
use std::os::unix::fs::FileExt;

use iced_x86::{Decoder, DecoderOptions, FlowControl, Mnemonic};

/// Bytes decoded forward from a sample looking for its loop's back edge.
const AHEAD: usize = 256;
/// The longest loop body (bytes) taken for a spin-wait loop.
const LOOP_MAX: u64 = 512;

/// Whether sampled addresses (file offsets in executable files) lie in
/// spin-wait loops; each file is opened once and each address decided once.
#[derive(Default)]
pub struct SpinLoops {
    files: HashMap<String, Option<std::fs::File>>,
    decided: HashMap<(String, u64), bool>,
}

impl SpinLoops {
    pub fn new() -> SpinLoops {
        SpinLoops::default()
    }

    /// Whether the instruction at file offset `at` of `path` is inside a
    /// loop that holds a spin-wait hint (false when the file cannot be
    /// read, as after it was replaced, or off x86-64).
    pub fn spinning(&mut self, path: &str, at: u64) -> bool {
        if !cfg!(target_arch = "x86_64") {
            return false;
        }
        if let Some(&d) = self.decided.get(&(path.to_string(), at)) {
            return d;
        }
        let file = self
            .files
            .entry(path.to_string())
            .or_insert_with(|| std::fs::File::open(path).ok());
        let d = match file {
            Some(f) => {
                let from = at.saturating_sub(LOOP_MAX);
                let mut buf = vec![0u8; (at - from) as usize + AHEAD];
                let n = read_at_most(f, &mut buf, from);
                buf.truncate(n);
                in_spin_loop(&buf, from, at)
            }
            None => false,
        };
        if self.decided.len() < 100_000 {
            self.decided.insert((path.to_string(), at), d);
        }
        d
    }
}

fn read_at_most(f: &std::fs::File, buf: &mut [u8], from: u64) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], from + n as u64) {
            Ok(0) | Err(_) => break,
            Ok(k) => n += k,
        }
    }
    n
}

/// `code` holds the bytes from address `base`; is the instruction at `at`
/// inside a loop (of at most [`LOOP_MAX`] bytes) with a PAUSE in its body?
pub fn in_spin_loop(code: &[u8], base: u64, at: u64) -> bool {
    let Some(start) = at.checked_sub(base).map(|o| o as usize) else {
        return false;
    };
    if start >= code.len() {
        return false;
    }
    let mut ahead = Decoder::with_ip(64, &code[start..], at, DecoderOptions::NONE);
    let mut seen = 0;
    while ahead.can_decode() && seen < AHEAD {
        let ins = ahead.decode();
        if ins.is_invalid() {
            return false;
        }
        seen += ins.len();
        match ins.flow_control() {
            FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
                if ins.is_jcc_short_or_near() || ins.is_jmp_short_or_near() =>
            {
                let target = ins.near_branch_target();
                // The innermost loop around the sample decides: work in a
                // loop that also spins elsewhere (a thread's main loop) is
                // work.
                if target <= at {
                    return target >= base
                        && ins.next_ip() - target <= LOOP_MAX
                        && holds_pause(code, base, target, ins.next_ip());
                }
                // A jump forward or out of reach: the sample's path leaves
                // this straight line; nothing further is sure to be its loop.
                if ins.flow_control() == FlowControl::UnconditionalBranch && target > at {
                    return false;
                }
            }
            FlowControl::Return
            | FlowControl::IndirectBranch
            | FlowControl::Exception
            | FlowControl::Interrupt => return false,
            _ => {}
        }
    }
    false
}

/// Whether the instructions from `from` up to `to` hold a PAUSE.
fn holds_pause(code: &[u8], base: u64, from: u64, to: u64) -> bool {
    let (s, e) = (
        (from - base) as usize,
        ((to - base) as usize).min(code.len()),
    );
    if s >= e {
        return false;
    }
    let mut d = Decoder::with_ip(64, &code[s..e], from, DecoderOptions::NONE);
    while d.can_decode() {
        let ins = d.decode();
        if ins.is_invalid() {
            return false;
        }
        if ins.mnemonic() == Mnemonic::Pause {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    // Machine code as rustc and gcc emit a spin-then-park loop.
    //   0: f3 90        pause
    //   2: ff c9        dec ecx
    //   4: 75 fa        jne 0
    //   6: c3           ret
    const SPIN: &[u8] = &[0xf3, 0x90, 0xff, 0xc9, 0x75, 0xfa, 0xc3];
    //   0: 48 ff c0     inc rax
    //   3: ff c9        dec ecx
    //   5: 75 f9        jne 0
    //   7: c3           ret
    const WORK: &[u8] = &[0x48, 0xff, 0xc0, 0xff, 0xc9, 0x75, 0xf9, 0xc3];

    #[test]
    fn a_sample_in_a_pause_loop_is_spinning_wherever_it_landed() {
        for at in [0x1000, 0x1002, 0x1004] {
            assert!(in_spin_loop(SPIN, 0x1000, at), "{at:x}");
        }
        // The return after the loop is outside it.
        assert!(!in_spin_loop(SPIN, 0x1000, 0x1006));
    }

    #[test]
    fn a_loop_without_pause_is_not_spinning() {
        for at in [0x1000, 0x1003, 0x1005] {
            assert!(!in_spin_loop(WORK, 0x1000, at), "{at:x}");
        }
    }

    #[test]
    fn an_outer_retry_loop_around_the_pause_loop_counts() {
        // 0: 31 c0        xor eax,eax     (the retry: a compare-exchange stands here)
        // 2: f3 90        pause
        // 4: ff c9        dec ecx
        // 6: 75 fa        jne 2
        // 8: ff ca        dec edx
        // a: 75 f4        jne 0
        // c: c3           ret
        let code = [
            0x31, 0xc0, 0xf3, 0x90, 0xff, 0xc9, 0x75, 0xfa, 0xff, 0xca, 0x75, 0xf4, 0xc3,
        ];
        assert!(in_spin_loop(&code, 0, 0));
        assert!(in_spin_loop(&code, 0, 8));
        assert!(!in_spin_loop(&code, 0, 0xc));
    }

    #[test]
    fn work_in_a_loop_beside_a_spin_loop_is_work() {
        // 0: f3 90        pause           (the spin loop)
        // 2: ff c9        dec ecx
        // 4: 75 fa        jne 0
        // 6: 48 ff c0     inc rax         (the work loop)
        // 9: ff ca        dec edx
        // b: 75 f9        jne 6
        // d: ff cb        dec ebx
        // f: 75 ef        jne 0           (the thread's main loop)
        //11: c3           ret
        let code = [
            0xf3, 0x90, 0xff, 0xc9, 0x75, 0xfa, 0x48, 0xff, 0xc0, 0xff, 0xca, 0x75, 0xf9, 0xff,
            0xcb, 0x75, 0xef, 0xc3,
        ];
        assert!(in_spin_loop(&code, 0, 2));
        assert!(!in_spin_loop(&code, 0, 6));
        assert!(!in_spin_loop(&code, 0, 9));
        // Between the two: only the main loop is around it, and it holds a PAUSE.
        assert!(in_spin_loop(&code, 0, 0xd));
    }

    #[test]
    fn bytes_that_are_not_code_decide_nothing() {
        assert!(!in_spin_loop(&[0xff; 64], 0, 4));
        assert!(!in_spin_loop(&[], 0, 0));
        assert!(!in_spin_loop(SPIN, 0x1000, 0x0fff));
        let mut s = SpinLoops::new();
        assert!(!s.spinning("/nonexistent/file", 0));
    }

    /// This test binary's own `std::hint::spin_loop` loop, found through
    /// the file: the compiled code, not hand-written bytes.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_compiled_spin_loop_is_found_in_its_file() {
        use std::hint::black_box;
        #[inline(never)]
        fn spin(n: u32) {
            for _ in 0..black_box(n) {
                std::hint::spin_loop();
            }
        }
        spin(3);
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        // The function's address, as a file offset: find it through the
        // maps of this process.
        let addr = spin as fn(u32) as usize as u64;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let off = maps
            .lines()
            .find_map(|l| {
                let mut f = l.split_whitespace();
                let (range, perms, pgoff) = (f.next()?, f.next()?, f.next()?);
                let (s, e) = range.split_once('-')?;
                let (s, e) = (
                    u64::from_str_radix(s, 16).ok()?,
                    u64::from_str_radix(e, 16).ok()?,
                );
                (perms.contains('x') && (s..e).contains(&addr))
                    .then(|| addr - s + u64::from_str_radix(pgoff, 16).unwrap_or(0))
            })
            .unwrap();
        // Some instruction of the function (walked boundary by boundary)
        // is in the loop, read from the bytes and through the file.
        let mut d =
            iced_x86::Decoder::with_ip(64, &bytes[off as usize..], off, DecoderOptions::NONE);
        let mut loops = SpinLoops::new();
        let found = (0..64).any(|_| {
            let at = d.decode().ip();
            in_spin_loop(&bytes[..], 0, at) && loops.spinning(exe.to_str().unwrap(), at)
        });
        assert!(
            found,
            "no PAUSE loop found in spin() at file offset {off:#x}"
        );
    }
}
