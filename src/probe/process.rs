//! Probes of process creation: spawning a tiny and a large program (does the cost
//! grow with the binary's size, as `CreateProcess` did in seed 001?), the first
//! exec of a freshly written binary (on-access scanning, macOS XProtect), and
//! `fork` as the parent's resident memory grows.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::result::ProbeResult;
use super::sample::{Budget, Measure, each};

/// The environment variable that makes `tardy` exit at once: the large program of the
/// spawn and first-exec probes is tardy's own binary, run as a no-op.
pub const NOOP_ENV: &str = "TARDY_PROBE_NOOP";

fn cstr(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/bin"), PathBuf::from("/usr/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Spawn `path` with posix_spawn and wait for it; false when it could not run.
fn spawn_wait(path: &CString, env: &[CString]) -> bool {
    let argv = [path.as_ptr(), std::ptr::null()];
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut pid: libc::pid_t = 0;
    // SAFETY: NUL-terminated argv/envp arrays of live CStrings; default attributes.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            path.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            argv.as_ptr() as *const *mut libc::c_char,
            envp.as_ptr() as *const *mut libc::c_char,
        )
    };
    if rc != 0 {
        return false;
    }
    let mut status = 0;
    // SAFETY: reaps our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

/// fork + execve of `path`, then wait.
fn fork_exec_wait(path: &CString, env: &[CString]) -> bool {
    let argv = [path.as_ptr(), std::ptr::null()];
    let mut envp: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    // SAFETY: the child only calls execve and _exit (async-signal-safe).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return false;
    }
    if pid == 0 {
        // SAFETY: as above; _exit if execve returns.
        unsafe {
            libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
            libc::_exit(127);
        }
    }
    let mut status = 0;
    // SAFETY: reaps our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn noop_env() -> Vec<CString> {
    vec![CString::new(format!("{NOOP_ENV}=1")).unwrap_or_default()]
}

/// Probe 6: posix_spawn of a tiny program (`true`) and of a large one (tardy's own
/// binary as a no-op), and fork+exec of the tiny one.
pub fn spawn(budget: &Budget) -> ProbeResult {
    let mut r = ProbeResult::new("spawn", "process spawn cost");
    let count = budget.pick(40, 12);
    let env = noop_env();
    let small = which("true").and_then(|p| Some((cstr(&p)?, p)));
    let large = std::env::current_exe()
        .ok()
        .and_then(|p| Some((cstr(&p)?, p)));
    let (Some((small_c, small_p)), Some((large_c, large_p))) = (small, large) else {
        r.unavailable = Some("cannot find `true` in PATH or tardy's own binary".into());
        return r;
    };
    if !spawn_wait(&small_c, &env) || !spawn_wait(&large_c, &env) {
        r.unavailable = Some(format!(
            "cannot spawn {} or {}",
            small_p.display(),
            large_p.display()
        ));
        return r;
    }
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    r.measures
        .push(each("small", "posix_spawn + wait: `true`", count, || {
            spawn_wait(&small_c, &env);
        }));
    r.measures.push(each(
        "large",
        "posix_spawn + wait: tardy's own binary (no-op)",
        count,
        || {
            spawn_wait(&large_c, &env);
        },
    ));
    r.measures.push(each(
        "fork_exec",
        "fork + exec + wait: `true`",
        count,
        || {
            fork_exec_wait(&small_c, &env);
        },
    ));
    r.fact("small_path", small_p.display().to_string());
    r.fact("small_bytes", size(&small_p));
    r.fact("large_path", large_p.display().to_string());
    r.fact("large_bytes", size(&large_p));
    if let (Some(s), Some(l)) = (r.measure("small"), r.measure("large")) {
        r.fact("large_over_small", l.median / s.median);
    }
    r
}

/// Probe 7: copy tardy's binary to a fresh path, exec it twice (first and second
/// time), several copies.
pub fn first_exec(budget: &Budget, dir: &Path) -> ProbeResult {
    let mut r = ProbeResult::new("first-exec", "first exec of a new binary");
    let Ok(me) = std::env::current_exe() else {
        r.unavailable = Some("cannot find tardy's own binary".into());
        return r;
    };
    let tmp = match super::sample::scratch_dir(dir, ".tardy-exec-") {
        Ok(t) => t,
        Err(why) => {
            r.unavailable = Some(why);
            return r;
        }
    };
    let env = noop_env();
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for i in 0..budget.pick(7, 3) {
        let copy = tmp.path().join(format!("probe-{i}"));
        // A new inode and, with the appended byte, a new hash for every copy.
        let written = std::fs::read(&me).and_then(|mut bytes| {
            bytes.push(i as u8);
            std::fs::write(&copy, bytes)?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755))
        });
        let Some(c) = written.ok().and_then(|_| cstr(&copy)) else {
            r.unavailable = Some(format!(
                "cannot write a binary into {}",
                tmp.path().display()
            ));
            return r;
        };
        for out in [&mut first, &mut second] {
            let t0 = super::sample::now_ns();
            if !spawn_wait(&c, &env) {
                r.unavailable = Some(format!(
                    "cannot execute binaries in {} (mounted noexec?)",
                    dir.display()
                ));
                return r;
            }
            out.push((super::sample::now_ns() - t0) as f64);
        }
    }
    let n = first.len();
    r.measures.push(Measure::new(
        "first",
        "first exec of a fresh copy",
        "ns",
        1,
        first,
    ));
    r.measures.push(Measure::new(
        "second",
        "second exec of the same copy",
        "ns",
        1,
        second,
    ));
    if let (Some(a), Some(b)) = (r.measure("first"), r.measure("second")) {
        r.fact("first_over_second", a.median / b.median);
    }
    r.fact("copies", n);
    r
}

/// Anonymous memory of `bytes`, every page touched; unmapped on drop.
struct Touched {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Touched {
    fn new(len: usize) -> Option<Touched> {
        if len == 0 {
            return Some(Touched {
                ptr: std::ptr::null_mut(),
                len,
            });
        }
        // SAFETY: a fresh private anonymous mapping; checked for failure.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let bytes = ptr as *mut u8;
        for off in (0..len).step_by(4096) {
            // SAFETY: within the mapping we just made.
            unsafe { bytes.add(off).write_volatile(1) };
        }
        Some(Touched { ptr, len })
    }
}

impl Drop for Touched {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping exactly what `new` mapped.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

/// fork + `_exit` in the child + wait: the cost of copying the parent's page tables.
pub fn fork_once() -> bool {
    // SAFETY: the child only calls _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return false;
    }
    if pid == 0 {
        // SAFETY: leave at once.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: reaps our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    true
}

/// Probe 8: fork cost with 0, 64 and 512 MiB of the parent's memory touched.
pub fn fork(budget: &Budget, sizes_mib: &[usize]) -> ProbeResult {
    let mut r = ProbeResult::new("fork", "fork cost vs resident memory");
    let available = super::fingerprint::meminfo("MemAvailable:");
    for &mib in sizes_mib {
        let bytes = mib << 20;
        if available.is_some_and(|a| (bytes as u64) * 3 > a) {
            r.fact(&format!("skipped_{mib}mib"), "not enough free memory");
            continue;
        }
        let Some(mem) = Touched::new(bytes) else {
            r.fact(&format!("skipped_{mib}mib"), "mmap failed");
            continue;
        };
        let m = each(
            &format!("fork_{mib}mib"),
            &format!("fork + exit + wait, {mib} MiB touched"),
            budget.pick(12, 7),
            || {
                fork_once();
            },
        );
        drop(mem);
        r.measures.push(m);
    }
    if let (Some(a), Some(b)) = (r.measures.first(), r.measures.last())
        && r.measures.len() > 1
    {
        let (ma, mb) = (mib_of(&a.key), mib_of(&b.key));
        if mb > ma {
            r.fact("ns_per_mib", (b.median - a.median) / (mb - ma) as f64);
        }
    }
    r
}

fn mib_of(key: &str) -> usize {
    key.trim_start_matches("fork_")
        .trim_end_matches("mib")
        .parse()
        .unwrap_or(0)
}
