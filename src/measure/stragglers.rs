//! Processes that outlive their run.
//!
//! A run ends when the command tardy started exits. What it left behind — a daemon
//! forked into the background (`(sleep 3 &)`), a `setsid` grandchild that left the
//! process group — is found after each run and, unless told otherwise, killed, so
//! that it neither holds the output pipe open nor slows the runs after it.
//!
//! Finding them: tardy makes itself a child subreaper (Linux), so an orphaned
//! descendant is reparented to tardy instead of init, wherever its process group
//! is. After a run, anything alive in the run's process group, any child of tardy
//! in another session (a `setsid` escapee, reparented), and their descendants are
//! stragglers. tardy's own helpers (git, a probe) stay in tardy's session and are
//! never touched. Two syscalls decide whether there is
//! anything to look for (`kill(-pgid, 0)` and a non-reaping `waitid`), so a run
//! that leaves nothing behind costs no /proc walk.

pub use crate::model::Straggler;

/// Make tardy the reaper of its orphaned descendants (once per process; Linux only).
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer flag.
            unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        });
    }
}

/// Children of tardy that are its own helpers, not the command's: the
/// closer of a session's perf events (`record::kernel::teardown`).
static HELPERS: std::sync::Mutex<Vec<libc::pid_t>> = std::sync::Mutex::new(Vec::new());

/// Count `pid` as tardy's own helper, never a straggler.
pub fn own_helper(pid: libc::pid_t) {
    if let Ok(mut h) = HELPERS.lock() {
        h.push(pid);
    }
}

/// Whether `pid` is one of tardy's own processes (a spawner, a helper);
/// a helper that has finished is reaped here.
fn is_own(pid: libc::pid_t) -> bool {
    if super::spawner::is_spawner(pid) {
        return true;
    }
    let Ok(mut h) = HELPERS.lock() else {
        return false;
    };
    if !h.contains(&pid) {
        return false;
    }
    let mut status = 0;
    // SAFETY: reaping our own child if it has ended; never blocks.
    if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
        h.retain(|&p| p != pid);
    }
    true
}

/// Whether anything may be left: a live member of group `pgid`, or a child
/// of tardy other than its spawner (a reparented orphan, alive or a zombie).
fn anything_left(pgid: libc::pid_t) -> bool {
    // SAFETY: kill with signal 0 only checks for existence.
    let group = unsafe { libc::kill(-pgid, 0) } == 0;
    group || other_children()
}

/// Whether tardy has a child besides its spawner. Orphans are handed to a
/// subreaper's first live thread, its main thread, so its
/// `/proc/self/task/PID/children` lists every one; the file is opened once
/// and read with `pread` (opening the task directory and each thread's file
/// after every run cost 50 µs of CPU a run, most of tardy's own cost).
/// Where that file is missing, any child at all.
fn other_children() -> bool {
    use std::os::unix::fs::FileExt;
    static CHILDREN: std::sync::OnceLock<Option<std::fs::File>> = std::sync::OnceLock::new();
    let file = CHILDREN.get_or_init(|| {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        std::fs::File::open(format!("/proc/self/task/{me}/children")).ok()
    });
    if let Some(f) = file {
        let mut buf = [0u8; 4096];
        let mut text = Vec::new();
        let mut at = 0u64;
        let read_all = loop {
            match f.read_at(&mut buf, at) {
                Ok(0) => break true,
                Ok(n) => {
                    text.extend_from_slice(&buf[..n]);
                    at += n as u64;
                    // One read returns the whole list unless it is long.
                    if n < buf.len() {
                        break true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break false,
            }
        };
        if read_all {
            return text
                .split(|b| b.is_ascii_whitespace())
                .filter_map(|p| std::str::from_utf8(p).ok()?.parse::<libc::pid_t>().ok())
                .any(|p| !is_own(p));
        }
    }
    // SAFETY: waitid with WNOWAIT|WNOHANG reaps nothing; info is plain data.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    rc == 0
}

/// One /proc entry.
#[cfg(target_os = "linux")]
struct Proc {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    sid: i32,
    zombie: bool,
    comm: String,
}

#[cfg(target_os = "linux")]
fn processes() -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) S ppid pgrp ...": comm may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = stat[open + 1..close].to_string();
        let mut rest = stat[close + 1..].split_ascii_whitespace();
        let state = rest.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let mut num = || rest.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let (ppid, pgrp, sid) = (num(), num(), num());
        out.push(Proc {
            pid,
            ppid,
            pgrp,
            sid,
            zombie: state == 'Z',
            comm,
        });
    }
    out
}

/// Find what the run whose process group is `pgid` left behind (its direct child
/// already reaped); kill it unless `keep`. Reaps every zombie reparented to tardy.
pub fn sweep(pgid: libc::pid_t, keep: bool) -> Vec<Straggler> {
    if pgid <= 0 || !anything_left(pgid) {
        return Vec::new();
    }
    #[cfg(target_os = "linux")]
    {
        sweep_proc(pgid, keep)
    }
    #[cfg(not(target_os = "linux"))]
    {
        if !keep {
            super::interrupt::sigkill_group(pgid);
        }
        Vec::new()
    }
}

#[cfg(target_os = "linux")]
fn sweep_proc(pgid: libc::pid_t, keep: bool) -> Vec<Straggler> {
    // SAFETY: getpid and getsid(0) have no preconditions.
    let (me, my_sid) = unsafe { (libc::getpid(), libc::getsid(0)) };
    let ours = |p: &Proc| {
        p.pid != me && !is_own(p.pid) && (p.pgrp == pgid || (p.ppid == me && p.sid != my_sid))
    };
    let mut found: Vec<Straggler> = Vec::new();
    // A few passes: killing a parent reparents its children to tardy.
    for pass in 0..20 {
        let procs = processes();
        let mut set: std::collections::HashSet<i32> = std::collections::HashSet::new();
        for p in &procs {
            if p.zombie {
                if p.ppid == me && ours(p) {
                    reap(p.pid);
                }
            } else if ours(p) {
                set.insert(p.pid);
            }
        }
        // Their descendants, wherever their group.
        loop {
            let before = set.len();
            for p in &procs {
                if !p.zombie && set.contains(&p.ppid) {
                    set.insert(p.pid);
                }
            }
            if set.len() == before {
                break;
            }
        }
        set.remove(&me);
        if set.is_empty() {
            break;
        }
        for p in &procs {
            if set.contains(&p.pid) && !found.iter().any(|s| s.pid == p.pid) {
                found.push(Straggler {
                    pid: p.pid,
                    comm: p.comm.clone(),
                    killed: !keep,
                });
            }
        }
        if keep {
            break;
        }
        super::interrupt::sigkill_group(pgid);
        for &pid in &set {
            super::interrupt::sigkill(pid);
        }
        // Let the kernel deliver the kills before looking again.
        std::thread::sleep(std::time::Duration::from_millis(if pass < 5 {
            1
        } else {
            10
        }));
    }
    found.sort_by_key(|s| s.pid);
    found
}

fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: status is valid for writing; reaps only that pid, without blocking.
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
}

/// "1 process (sleep, pid 4242)", "3 processes (sleep, pid 4242, ...)".
pub fn describe(s: &[Straggler]) -> String {
    let first = s
        .first()
        .map(|p| {
            format!(
                " ({}, pid {}{})",
                p.comm,
                p.pid,
                if s.len() > 1 { ", ..." } else { "" }
            )
        })
        .unwrap_or_default();
    format!(
        "{} process{}{first}",
        s.len(),
        if s.len() == 1 { "" } else { "es" }
    )
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_backgrounded_and_a_setsid_descendant_are_found_and_killed() {
        become_subreaper();
        let mut c = std::process::Command::new("sh");
        c.arg("-c")
            .arg("(sleep 30 &); setsid sleep 31 & exit 0")
            .process_group(0);
        let mut child = c.spawn().unwrap();
        let pgid = child.id() as i32;
        child.wait().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let s = sweep(pgid, false);
        assert!(s.len() >= 2, "{s:?}");
        assert!(s.iter().all(|p| p.comm == "sleep" && p.killed), "{s:?}");
        for p in &s {
            // SAFETY: signal 0 checks for existence only.
            let alive = unsafe { libc::kill(p.pid, 0) } == 0;
            assert!(!alive, "{} still alive", p.pid);
        }
        assert!(sweep(pgid, false).is_empty());
        assert!(describe(&s).starts_with(&format!("{} processes (sleep, pid", s.len())));
    }
}
