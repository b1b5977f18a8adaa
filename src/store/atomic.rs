//! Atomic file writes: a temporary file in the target's directory, then a
//! rename, so a reader (or a crash) sees the old file or the new one, never
//! half of one.

use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("cannot write '{path}': {source}")]
pub struct StoreError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

/// The error as the user's path would give it: tempfile names its own
/// temporary file ("at path .../.tardy-2OX5Wl"), which the user never gave;
/// a missing directory is said plainly.
fn plain(path: &Path, e: std::io::Error) -> std::io::Error {
    let dir = dir_of(path);
    if e.kind() == std::io::ErrorKind::NotFound && !dir.exists() {
        return std::io::Error::new(
            e.kind(),
            format!("the directory '{}' does not exist", dir.display()),
        );
    }
    // tempfile's PathError shows as "<the OS error> at path \"<its file>\"".
    let text = e.to_string();
    match text.split_once(" at path \"") {
        Some((os, _)) => std::io::Error::new(e.kind(), os.to_string()),
        None => e,
    }
}

fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Replace `path` with `bytes` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let err = |source| StoreError {
        path: path.to_path_buf(),
        source: plain(path, source),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".tardy-")
        .suffix(".tmp")
        .tempfile_in(dir_of(path))
        .map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    // A temporary file is private (0600); the result is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// Fail early, before measuring, when `path` could not be written later.
pub fn check_writable(path: &Path) -> Result<(), StoreError> {
    let err = |source| StoreError {
        path: path.to_path_buf(),
        source: plain(path, source),
    };
    if path.is_dir() {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        )));
    }
    tempfile::Builder::new()
        .prefix(".tardy-")
        .tempfile_in(dir_of(path))
        .map(drop)
        .map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwritable_path_is_named_as_the_user_gave_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing").join("r.json");
        let e = write_atomic(&p, b"x").unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("cannot write '{}'", p.display())),
            "{e}"
        );
        assert!(
            e.contains("does not exist") && !e.contains(".tardy-"),
            "{e}"
        );
        let e = check_writable(&p).unwrap_err().to_string();
        assert!(!e.contains(".tardy-"), "{e}");
        // A file where the directory should be.
        std::fs::write(dir.path().join("f"), b"").unwrap();
        let e = write_atomic(&dir.path().join("f").join("r.json"), b"x")
            .unwrap_err()
            .to_string();
        assert!(!e.contains(".tardy-") && e.contains("cannot write"), "{e}");
    }

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp files left"
        );
    }

    #[test]
    fn unwritable_paths_are_detected() {
        assert!(check_writable(Path::new("/nonexistent-dir/x.json")).is_err());
        let dir = tempfile::tempdir().unwrap();
        assert!(check_writable(dir.path()).is_err());
        assert!(check_writable(&dir.path().join("ok.json")).is_ok());
    }
}
