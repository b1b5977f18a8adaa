//! The seccomp-BPF filter installed in the traced command before its first
//! `execve`: it returns `SECCOMP_RET_TRACE` for the syscalls `tardy explain`
//! times and `SECCOMP_RET_ALLOW` for everything else, so untraced syscalls
//! run at full speed (the approach of `strace --seccomp-bpf`). `futex` is
//! traced only for its waiting operations, never for wakes.

use super::arch;

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const AND_K: u16 = 0x04 | 0x50; // BPF_ALU | BPF_AND | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRACE: u32 = 0x7ff0_0000;

// Offsets in struct seccomp_data.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG1_LO: u32 = 16 + 8; // args[1], low 32 bits (little-endian)

/// futex operations that wait (FUTEX_WAIT, FUTEX_LOCK_PI, FUTEX_WAIT_BITSET,
/// FUTEX_WAIT_REQUEUE_PI, FUTEX_LOCK_PI2), after masking the private and
/// clock flags.
pub const FUTEX_WAIT_OPS: [u32; 5] = [0, 6, 9, 11, 13];

/// One instruction, before jump offsets are known.
enum Ins {
    Ld(u32),
    And(u32),
    /// Jump to TRACE when equal, else fall through.
    JeqTrace(u32),
    /// Fall through when equal, else jump to ALLOW.
    JneAllow(u32),
    RetAllow,
    RetTrace,
}

/// The filter program for this architecture.
pub fn program() -> Vec<libc::sock_filter> {
    let mut ins = vec![
        Ins::Ld(OFF_ARCH),
        Ins::JneAllow(arch::AUDIT_ARCH),
        Ins::Ld(OFF_NR),
    ];
    for &nr in arch::TRACED {
        ins.push(Ins::JeqTrace(nr as u32));
    }
    ins.push(Ins::JneAllow(arch::SYS_FUTEX as u32));
    ins.push(Ins::Ld(OFF_ARG1_LO));
    ins.push(Ins::And(0x7f));
    for op in FUTEX_WAIT_OPS {
        ins.push(Ins::JeqTrace(op));
    }
    ins.push(Ins::RetAllow);
    ins.push(Ins::RetTrace);
    let allow = ins.len() - 2;
    let trace = ins.len() - 1;
    let stmt = |code: u16, k: u32| libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    };
    ins.iter()
        .enumerate()
        .map(|(i, op)| {
            // Offsets are relative to the next instruction; the program is far
            // shorter than 255 instructions.
            let to = |target: usize| (target - i - 1) as u8;
            match *op {
                Ins::Ld(off) => stmt(LD_W_ABS, off),
                Ins::And(k) => stmt(AND_K, k),
                Ins::JeqTrace(k) => libc::sock_filter {
                    code: JEQ_K,
                    jt: to(trace),
                    jf: 0,
                    k,
                },
                Ins::JneAllow(k) => libc::sock_filter {
                    code: JEQ_K,
                    jt: 0,
                    jf: to(allow),
                    k,
                },
                Ins::RetAllow => stmt(RET_K, SECCOMP_RET_ALLOW),
                Ins::RetTrace => stmt(RET_K, SECCOMP_RET_TRACE),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_the_two_returns() {
        let p = program();
        assert!(p.len() < 255);
        let n = p.len();
        for (i, f) in p.iter().enumerate() {
            if f.code == JEQ_K {
                for off in [f.jt, f.jf] {
                    let target = i + 1 + off as usize;
                    assert!(target < n, "jump out of the program at {i}");
                }
                if f.jt > 0 {
                    assert_eq!(i + 1 + f.jt as usize, n - 1);
                }
                if f.jf > 0 {
                    assert_eq!(i + 1 + f.jf as usize, n - 2);
                }
            }
        }
        assert_eq!(p[n - 1].k, SECCOMP_RET_TRACE);
        assert_eq!(p[n - 2].k, SECCOMP_RET_ALLOW);
    }
}
