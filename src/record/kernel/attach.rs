//! A tree that is already running (`tardy explain --pid PID`), as /proc
//! shows it when recording begins: its processes (the root and every
//! descendant, each after its parent), their command lines and threads,
//! and where each blocked thread waits (the system call /proc says it is
//! in), so the model starts from what each thread is doing, not from a
//! fork it never saw.

use std::collections::{HashMap, VecDeque};

use super::ksyms::Site;
pub use super::timeline::Existing;

/// Processes of a tree held at most (a fork bomb stops here).
const MAX_PROCS: usize = 4096;

/// The tree of `root`: root first, each process after its parent; an error
/// when `root` is not a running process.
pub fn tree(root: i32) -> Result<Vec<Existing>, String> {
    if root <= 0 || !std::path::Path::new(&format!("/proc/{root}/stat")).exists() {
        return Err(format!("no running process has pid {root}"));
    }
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc")
        .map_err(|e| format!("/proc: {e}"))?
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = stat_field(&format!("/proc/{pid}/stat"), 1).and_then(|f| f.parse().ok())
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut queue = VecDeque::from([(root, 0)]);
    while let Some((pid, parent)) = queue.pop_front() {
        if out.len() >= MAX_PROCS {
            break;
        }
        let threads = threads(pid);
        if threads.is_empty() {
            continue; // gone meanwhile
        }
        out.push(Existing {
            pid,
            parent,
            command: crate::record::procfs::cmdline(pid, 300),
            exe: std::fs::read_link(format!("/proc/{pid}/exe"))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default(),
            threads,
        });
        let mut kids = children.remove(&pid).unwrap_or_default();
        kids.sort_unstable();
        queue.extend(kids.into_iter().map(|k| (k, pid)));
    }
    if out.is_empty() {
        return Err(format!("no running process has pid {root}"));
    }
    Ok(out)
}

/// The executable mappings of `pid` (start, length, file offset, path), as
/// the kernel's mmap records would have told them had the recording seen
/// the program start: anonymous code (a JIT's) as the process's own module.
pub fn exec_maps(pid: i32) -> Vec<(u64, u64, u64, String)> {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|line| {
            let mut f = line.splitn(6, ' ');
            let (range, perms, off) = (f.next()?, f.next()?, f.next()?);
            if !perms.contains('x') {
                return None;
            }
            let (_dev, _inode) = (f.next()?, f.next()?);
            let name = f.next().unwrap_or("").trim_start();
            let (a, b) = range.split_once('-')?;
            let start = u64::from_str_radix(a, 16).ok()?;
            let end = u64::from_str_radix(b, 16).ok()?;
            let off = u64::from_str_radix(off, 16).ok()?;
            Some(if crate::profile::maps::is_anon(name) {
                (
                    start,
                    end - start,
                    start,
                    crate::profile::maps::anon_path(pid),
                )
            } else {
                (start, end.saturating_sub(start), off, name.to_string())
            })
        })
        .collect()
}

/// The threads of `pid`: each running (or runnable), or blocked where its
/// system call says.
fn threads(pid: i32) -> Vec<(i32, Option<Site>)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out: Vec<(i32, Option<Site>)> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|tid| {
            let state = stat_field(&format!("/proc/{pid}/task/{tid}/stat"), 0)?;
            let blocked = match state.as_str() {
                "R" => None,
                "D" => Some(Site::BlockIo),
                _ => Some(
                    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/syscall"))
                        .ok()
                        .and_then(|s| s.split_whitespace().next()?.parse::<i64>().ok())
                        .map_or(Site::Unknown, site_of_syscall),
                ),
            };
            Some((tid, blocked))
        })
        .collect();
    out.sort_unstable_by_key(|t| t.0);
    out
}

/// Whether task `tid` still runs (not gone, not a zombie waiting to be
/// reaped).
pub fn alive(tid: i32) -> bool {
    stat_field(&format!("/proc/{tid}/stat"), 0).is_some_and(|s| s != "Z" && s != "X")
}

/// Field `n` of a /proc stat file after the command name (0: the state,
/// 1: the parent's pid); the name may hold spaces and parentheses, so the
/// fields start after its last ')'.
fn stat_field(path: &str, n: usize) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(n).map(str::to_string)
}

/// Where a thread blocked in system call `nr` waits.
fn site_of_syscall(nr: i64) -> Site {
    #[cfg(target_arch = "x86_64")]
    let polls = [
        libc::SYS_poll,
        libc::SYS_ppoll,
        libc::SYS_select,
        libc::SYS_pselect6,
        libc::SYS_epoll_wait,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
    #[cfg(not(target_arch = "x86_64"))]
    let polls = [
        libc::SYS_ppoll,
        libc::SYS_pselect6,
        libc::SYS_epoll_pwait,
        libc::SYS_epoll_pwait2,
    ];
    match nr {
        n if n == libc::SYS_nanosleep || n == libc::SYS_clock_nanosleep => Site::Sleep,
        n if n == libc::SYS_futex => Site::Futex,
        n if n == libc::SYS_wait4 || n == libc::SYS_waitid => Site::ChildWait,
        n if polls.contains(&n) => Site::Poll,
        n if n == libc::SYS_accept
            || n == libc::SYS_accept4
            || n == libc::SYS_recvfrom
            || n == libc::SYS_recvmsg =>
        {
            Site::Socket
        }
        n if n == libc::SYS_read || n == libc::SYS_readv => Site::Pipe,
        _ => Site::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_child_is_found_after_its_parent_and_blocked_in_a_sleep() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        // Until the child has exec'd and gone to sleep.
        let mut found = None;
        for _ in 0..200 {
            let t = tree(me).unwrap();
            if let Some(p) = t.iter().find(|p| p.pid == child.id() as i32)
                && p.command.starts_with("sleep")
                && p.threads.iter().all(|t| t.1 == Some(Site::Sleep))
            {
                found = Some(t);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        let t = found.expect("the sleeping child in the tree");
        assert_eq!(t[0].pid, me);
        let c = t.iter().find(|p| p.pid == child.id() as i32).unwrap();
        assert_eq!(c.parent, me);
        assert!(t[0].threads.iter().any(|&(tid, _)| tid == me));
        assert!(tree(-5).is_err());
        // The test binary's own code is mapped executable, at its offsets.
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        assert!(
            exec_maps(me)
                .iter()
                .any(|m| m.3 == exe.to_string_lossy() && m.1 > 0)
        );
    }
}
