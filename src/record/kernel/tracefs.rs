//! Finding tracepoints: tracefs holds each event's id and the layout of its
//! record (`events/<group>/<name>/format`). Offsets are read at run time,
//! never assumed. When tracefs is not mounted and tardy runs as root, it
//! mounts it where the kernel documents it, as `perf` does.

use std::path::{Path, PathBuf};

/// Where tracefs is (mounted now, or mounted by this call when allowed).
pub fn root() -> Result<PathBuf, String> {
    for p in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        if Path::new(p).join("events").is_dir() {
            return Ok(PathBuf::from(p));
        }
    }
    let target = c"/sys/kernel/tracing";
    // SAFETY: mount(2) with static NUL-terminated strings; fails harmlessly
    // without privilege.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 && Path::new("/sys/kernel/tracing/events").is_dir() {
        return Ok(PathBuf::from("/sys/kernel/tracing"));
    }
    Err(format!(
        "tracefs is not mounted and could not be mounted ({})",
        std::io::Error::last_os_error()
    ))
}

/// The tracefs group of this process's uprobes: `tardy_PID`, so that a
/// later tardy can tell the probes of a live session from those a killed
/// one left behind.
pub fn probe_group() -> String {
    format!("tardy_{}", std::process::id())
}

/// The uprobe definitions (`GROUP/NAME`) in `uprobe_events`.
fn probes(root: &Path) -> Vec<(String, String)> {
    std::fs::read_to_string(root.join("uprobe_events"))
        .unwrap_or_default()
        .lines()
        .take(100_000)
        .filter_map(|l| {
            let def = l.split_whitespace().next()?;
            let (_, name) = def.split_once(':')?;
            let (g, n) = name.split_once('/')?;
            Some((g.to_string(), n.to_string()))
        })
        .collect()
}

/// Remove definition `group/name` (refused while an event is open on it).
fn remove_probe(root: &Path, group: &str, name: &str) -> bool {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(root.join("uprobe_events"))
        .and_then(|mut f| f.write_all(format!("-:{group}/{name}\n").as_bytes()))
        .is_ok()
}

/// Whether group `g` is tardy's and its owner is gone: `tardy_PID` of a
/// process that no longer exists, or plain `tardy`, where earlier versions
/// left theirs for good.
fn orphaned(g: &str) -> bool {
    if g == "tardy" {
        return true;
    }
    g.strip_prefix("tardy_")
        .and_then(|p| p.parse::<u32>().ok())
        .is_some_and(|pid| {
            pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
        })
}

/// Remove the uprobes tardy processes that are gone left behind (killed
/// before they could); one still held open by a process stays.
pub fn sweep_probes(root: &Path) {
    for (g, n) in probes(root) {
        if orphaned(&g) {
            remove_probe(root, &g, &n);
        }
    }
}

/// Remove this process's uprobes (after their events are closed).
pub fn remove_own_probes(root: &Path) {
    let own = probe_group();
    for (g, n) in probes(root) {
        if g == own {
            remove_probe(root, &g, &n);
        }
    }
}

/// One tracepoint: its id and its fields' (offset, size).
#[derive(Debug, Clone, Default)]
pub struct Tracepoint {
    pub id: u64,
    pub fields: Vec<(String, usize, usize)>,
}

impl Tracepoint {
    /// Offset of a field, if the record has it.
    pub fn offset(&self, name: &str) -> Option<usize> {
        self.fields
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, o, _)| *o)
    }
}

/// Read `events/<group>/<name>/format`.
pub fn tracepoint(root: &Path, group: &str, name: &str) -> Option<Tracepoint> {
    let text =
        std::fs::read_to_string(root.join("events").join(group).join(name).join("format")).ok()?;
    parse_format(&text)
}

/// Parse a tracepoint `format` file.
pub fn parse_format(text: &str) -> Option<Tracepoint> {
    let mut tp = Tracepoint::default();
    let mut have_id = false;
    for line in text.lines() {
        let line = line.trim();
        if let Some(id) = line.strip_prefix("ID:") {
            tp.id = id.trim().parse().ok()?;
            have_id = true;
        } else if let Some(rest) = line.strip_prefix("field:") {
            // "field:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;"
            let mut decl = "";
            let mut off = None;
            let mut size = None;
            for part in rest.split(';') {
                let part = part.trim();
                if let Some(v) = part.strip_prefix("offset:") {
                    off = v.trim().parse().ok();
                } else if let Some(v) = part.strip_prefix("size:") {
                    size = v.trim().parse().ok();
                } else if decl.is_empty() {
                    decl = part;
                }
            }
            // The name is the last word of the declaration, before any [N].
            let name = decl
                .split_whitespace()
                .last()
                .unwrap_or("")
                .split('[')
                .next()
                .unwrap_or("")
                .to_string();
            if let (Some(o), Some(s)) = (off, size)
                && !name.is_empty()
            {
                tp.fields.push((name, o, s));
            }
        }
    }
    have_id.then_some(tp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_format_file() {
        let text = "name: sched_waking\nID: 375\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\n\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\nprint fmt: \"comm=%s\"\n";
        let tp = parse_format(text).unwrap();
        assert_eq!(tp.id, 375);
        assert_eq!(tp.offset("pid"), Some(24));
        assert_eq!(tp.offset("comm"), Some(8));
        assert_eq!(tp.offset("common_flags"), Some(2));
        assert_eq!(tp.offset("nope"), None);
        assert!(parse_format("garbage").is_none());
    }

    #[test]
    fn only_probes_of_gone_tardies_are_orphaned() {
        assert!(orphaned("tardy"));
        assert!(orphaned("tardy_999999999"));
        assert!(!orphaned(&probe_group()));
        assert!(!orphaned("tardy_1"), "pid 1 is alive");
        assert!(!orphaned("probe_libc"));
        assert!(!orphaned("tardy_x"));
    }
}
