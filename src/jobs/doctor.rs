//! `tardy doctor --compare` as one call: two saved reports, or a saved
//! report and this machine measured now with the same probes and budget.

use std::path::{Path, PathBuf};

use crate::diagnose::machine::{self, MachineComparison};
use crate::probe::doctor::Options;
use crate::probe::result::{self, DoctorReport};

/// A compared with B: the comparison and B (measured now when `files` names only A).
pub struct Compared {
    pub comparison: MachineComparison,
    pub b: DoctorReport,
}

/// Compare `files[0]` (A) with `files[1]`, or with this machine measured by
/// `measure` (A's probes unless `only` names others, A's budget unless
/// `quick`), probes taken in `dir`.
pub fn compare(
    files: &[PathBuf],
    quick: bool,
    only: Option<Vec<String>>,
    dir: &Path,
    measure: &mut dyn FnMut(&Options) -> DoctorReport,
) -> Result<Compared, String> {
    let a_file = files
        .first()
        .ok_or("--compare takes one or two saved reports")?;
    let a = result::load(a_file)?;
    let (b, b_name) = match files.get(1) {
        Some(f) => (result::load(f)?, f.display().to_string()),
        None => {
            let ids: Vec<String> = a.probes.iter().map(|p| p.id.clone()).collect();
            let opts = Options {
                quick: quick || a.quick,
                only: Some(only.unwrap_or(ids)),
                dir: dir.to_path_buf(),
            };
            (measure(&opts), "this machine, now".to_string())
        }
    };
    let comparison = machine::compare(&a, &b, &a_file.display().to_string(), &b_name);
    Ok(Compared { comparison, b })
}
