//! A cgroup made for the session's commands. Events opened once per CPU
//! with perf's cgroup filter then see exactly the tasks of the command's
//! tree, with nothing to copy when it forks: an inherited event is cloned
//! into every new thread and process (about 20 µs a fork with tardy's eight
//! events), which made a shell loop of short processes 1.2x slower.
//!
//! The group is a child of tardy's own cgroup in the hierarchy that holds
//! the perf_event controller (cgroup v2, or a v1 perf_event mount), so any
//! limits over tardy still hold over the command. Each command joins it
//! while gated, before it execs; whatever is left in it after a run moves
//! back to tardy's cgroup; the directory is removed when the session ends
//! (and a directory left by a killed tardy is removed by the next one).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The session's cgroup.
pub struct Group {
    dir: PathBuf,
    dirfd: OwnedFd,
    parent: PathBuf,
}

impl Group {
    /// Make `tardy-PID` under this process's own cgroup, or `None` when
    /// cgroups are not mounted or not writable here.
    pub fn create() -> Option<Group> {
        let parent = own_dir()?;
        sweep(&parent);
        let dir = parent.join(format!("tardy-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
        let dirfd = match File::open(&dir) {
            Ok(f) => OwnedFd::from(f),
            Err(_) => {
                let _ = std::fs::remove_dir(&dir);
                return None;
            }
        };
        Some(Group { dir, dirfd, parent })
    }

    /// The directory's fd, for `perf_event_open` with `PERF_FLAG_PID_CGROUP`.
    pub fn fd(&self) -> &OwnedFd {
        &self.dirfd
    }

    /// Move process `pid` (all its threads) into the group.
    pub fn add(&self, pid: i32) -> io::Result<()> {
        write_pid(&self.dir, pid)
    }

    /// Move every process still in the group back to tardy's cgroup (a
    /// daemon the command left behind is not the next run's).
    pub fn evict(&self) {
        for pid in members(&self.dir) {
            let _ = write_pid(&self.parent, pid);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.evict();
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn write_pid(dir: &Path, pid: i32) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))?;
    f.write_all(format!("{pid}\n").as_bytes())
}

fn members(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .take(100_000)
        .collect()
}

/// Remove groups left by tardy processes that are gone (killed before they
/// could). A group still holding a process is kept.
fn sweep(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten().take(10_000) {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("tardy-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// This process's cgroup directory in the hierarchy holding perf_event.
fn own_dir() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    locate(&cgroups, &mountinfo)
}

/// From `/proc/self/cgroup` and `/proc/self/mountinfo`: a v1 hierarchy
/// with the perf_event controller if one is mounted, else the v2 one.
fn locate(cgroups: &str, mountinfo: &str) -> Option<PathBuf> {
    let mut v1: Option<&str> = None;
    let mut v2: Option<&str> = None;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(ctrls), Some(path)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if id == "0" && ctrls.is_empty() {
            v2 = Some(path);
        } else if ctrls.split(',').any(|c| c == "perf_event") {
            v1 = Some(path);
        }
    }
    // mountinfo: id parent major:minor root mountpoint options - fstype source superoptions
    for line in mountinfo.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let pre: Vec<&str> = pre.split(' ').collect();
        let post: Vec<&str> = post.split(' ').collect();
        if pre.len() < 5 || post.len() < 3 {
            continue;
        }
        let (root, mnt) = (pre[3], unescape(pre[4]));
        let own = match (post[0], v1, v2) {
            ("cgroup", Some(p), _) if post[2].split(',').any(|o| o == "perf_event") => p,
            ("cgroup2", None, Some(p)) => p,
            _ => continue,
        };
        // The mount shows the hierarchy from `root` down.
        let rel = own.strip_prefix(root)?;
        if root != "/" && !rel.is_empty() && !rel.starts_with('/') {
            return None;
        }
        let rel = rel.trim_start_matches('/');
        return Some(PathBuf::from(mnt).join(rel));
    }
    None
}

/// Mount points escape space, tab, newline and backslash as octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn v2_when_perf_event_is_not_on_v1() {
        let cg = "4:memory:/x\n0::/user.slice/job 1\n";
        assert_eq!(
            locate(cg, HYBRID),
            Some(PathBuf::from("/sys/fs/cgroup/unified/user.slice/job 1"))
        );
    }

    #[test]
    fn v1_perf_event_mount_wins() {
        let mi = format!(
            "{HYBRID}50 31 0:40 / /sys/fs/cgroup/perf_event rw - cgroup cgroup rw,perf_event\n"
        );
        let cg = "5:perf_event:/ci\n0::/\n";
        assert_eq!(
            locate(cg, &mi),
            Some(PathBuf::from("/sys/fs/cgroup/perf_event/ci"))
        );
    }

    #[test]
    fn a_container_sees_its_own_root() {
        let mi = "60 50 0:38 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            locate("0::/docker/abc/sub\n", mi),
            Some(PathBuf::from("/sys/fs/cgroup/sub"))
        );
        // Outside the mount's root: not reachable.
        assert_eq!(locate("0::/elsewhere\n", mi), None);
        assert_eq!(locate("garbage", "garbage"), None);
    }

    #[test]
    fn escaped_mount_points() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/a\\04"), "/a\\04");
    }
}
