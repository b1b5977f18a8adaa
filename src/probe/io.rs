//! Probes of storage: the latency of a durable 4 KiB write (`fdatasync`, `fsync`)
//! and of small-file metadata operations (create, stat, unlink), in the directory
//! the tests would use, with its filesystem type (a no-op fsync on tmpfs is said so).

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::result::ProbeResult;
use super::sample::{Budget, Measure, now_ns};

fn fs_fact(r: &mut ProbeResult, dir: &Path) {
    r.fact("dir", dir.display().to_string());
    if let Some(fs) = super::fingerprint::filesystem_type(dir) {
        r.fact("filesystem", fs);
    }
}

/// Probe 12: write 4 KiB at offset 0 then `fdatasync`, and then `fsync`, N times each.
pub fn fsync(budget: &Budget, dir: &Path) -> ProbeResult {
    let mut r = ProbeResult::new("fsync", "durable write latency");
    fs_fact(&mut r, dir);
    let mut file = match tempfile::Builder::new()
        .prefix(".tardy-fsync-")
        .tempfile_in(dir)
    {
        Ok(f) => f,
        Err(e) => {
            r.unavailable = Some(format!("cannot create a file in {}: {e}", dir.display()));
            return r;
        }
    };
    let block = [0x5au8; 4096];
    let count = budget.pick(20, 7);
    let fd = file.as_file().as_raw_fd();
    for (key, label, sync) in [
        ("fdatasync", "4 KiB write + fdatasync", true),
        ("fsync", "4 KiB write + fsync", false),
    ] {
        let mut samples = Vec::with_capacity(count);
        for i in 0..=count {
            let t0 = now_ns();
            // SAFETY: writes our 4 KiB buffer at offset 0 of a file we own, then syncs it.
            let ok = unsafe {
                libc::pwrite(fd, block.as_ptr().cast(), block.len(), 0) == block.len() as isize
                    && if sync {
                        libc::fdatasync(fd) == 0
                    } else {
                        libc::fsync(fd) == 0
                    }
            };
            if !ok {
                r.unavailable = Some(format!(
                    "write or sync failed in {}: {}",
                    dir.display(),
                    std::io::Error::last_os_error()
                ));
                return r;
            }
            if i > 0 {
                samples.push((now_ns() - t0) as f64);
            }
        }
        r.measures.push(Measure::new(key, label, "ns", 1, samples));
    }
    let _ = file.flush();
    r
}

/// Probe 13: create, stat and unlink N empty files, timed in batches of 50.
pub fn metadata(budget: &Budget, dir: &Path) -> ProbeResult {
    let mut r = ProbeResult::new("metadata", "small-file metadata");
    fs_fact(&mut r, dir);
    let tmp = match super::sample::scratch_dir(dir, ".tardy-meta-") {
        Ok(t) => t,
        Err(why) => {
            r.unavailable = Some(why);
            return r;
        }
    };
    let per = 50usize;
    let batches = budget.pick(10, 7);
    let names: Vec<_> = (0..per * batches)
        .map(|i| tmp.path().join(format!("f{i:05}")))
        .collect();
    let mut phase = |key: &str, label: &str, op: &dyn Fn(&Path) -> std::io::Result<()>| {
        let mut samples = Vec::new();
        for chunk in names.chunks(per) {
            let t0 = now_ns();
            for p in chunk {
                op(p)?;
            }
            samples.push((now_ns() - t0) as f64 / per as f64);
        }
        r.measures
            .push(Measure::new(key, label, "ns", per as u64, samples));
        Ok::<(), std::io::Error>(())
    };
    let result = phase("create", "create an empty file", &|p| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .map(drop)
    })
    .and_then(|_| phase("stat", "stat a file", &|p| std::fs::metadata(p).map(drop)))
    .and_then(|_| phase("unlink", "unlink a file", &|p| std::fs::remove_file(p)));
    if let Err(e) = result {
        r.measures.clear();
        r.unavailable = Some(format!("file operations failed in {}: {e}", dir.display()));
    }
    r.fact("files", names.len());
    r
}
