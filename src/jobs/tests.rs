//! `tardy tests show` and `tardy tests diff` as calls: test reports read,
//! summarised or compared test by test, a run saved in the history, and the
//! `--fail-if-slower` gate decided.

use std::path::PathBuf;

use crate::analyze::suite::{self, Diff, Show};
use crate::ingest::reports;
use crate::render::units;

/// Where `tests show --save` puts the run.
#[derive(Clone, Debug, Default)]
pub struct SaveTo {
    /// The suite's name in the history.
    pub suite: String,
    /// The database (default: the repository's `.tardy/tardy.db`) and project.
    pub db: Option<PathBuf>,
    pub project: String,
    /// The commit and branch (default: HEAD and the current branch here).
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// When the tests ran (default: now).
    pub time: Option<String>,
}

/// A run read and summarised; saved when asked.
pub struct Shown {
    pub show: Show,
    /// Tests saved, and where ("SQLite file .tardy/tardy.db").
    pub saved: Option<(usize, String)>,
}

/// Read `paths` as one run and summarise it (the `top` slowest of each
/// kind); with `save`, store the run in the history as a suite point.
pub fn show(
    paths: &[PathBuf],
    keep_going: bool,
    top: usize,
    save: Option<&SaveTo>,
) -> Result<Shown, String> {
    let Some(save) = save else {
        // Nothing to save: streamed, in a few MiB.
        let show = suite::show_run(paths, keep_going, top).map_err(|e| e.to_string())?;
        return Ok(Shown { show, saved: None });
    };
    // The database opens first: a bad one fails before a long read.
    let mut db =
        super::store::open(save.db.as_deref(), &save.project).map_err(|e| e.to_string())?;
    let mut report = reports::read_run(paths, keep_going).map_err(|e| e.to_string())?;
    // Summarised first: saving takes the report's cases.
    let show = suite::show(&report, top);
    let provenance = super::store::provenance_now(save.commit.as_deref(), save.branch.as_deref())?;
    let time = save.time.as_deref();
    let n =
        crate::history::ops::save_suite(db.as_mut(), &save.suite, &mut report, provenance, time)?;
    let saved = Some((n, super::store::describe(save.db.as_deref())));
    Ok(Shown { show, saved })
}

/// Two sides compared test by test.
pub struct Diffed {
    pub diff: Diff,
    /// Why the `--fail-if-slower` gate fails ("the sum of test times grew
    /// from 1.20 s to 1.50 s, more than 10%"), when it does.
    pub too_slow: Option<String>,
}

/// Each path of `before` and `after` is one run; `fail_pct`: the gate.
pub fn diff(
    before: &[PathBuf],
    after: &[PathBuf],
    keep_going: bool,
    fail_pct: Option<f64>,
) -> Result<Diffed, String> {
    // Each run is read, digested and dropped: memory holds the names once
    // and a few numbers per test, not the reports.
    let mut builder = suite::DiffBuilder::new();
    for (side, paths) in [before, after].into_iter().enumerate() {
        for p in paths {
            let one = std::slice::from_ref(p);
            builder
                .read(side, one, keep_going)
                .map_err(|e| e.to_string())?;
        }
    }
    let diff = builder.finish();
    let too_slow = fail_pct
        .filter(|&pct| suite::slower_than(&diff, pct))
        .map(|pct| {
            format!(
                "the sum of test times grew from {} to {}, more than {}",
                units::time(diff.total_before_s),
                units::time(diff.total_after_s),
                units::percent(pct)
            )
        });
    Ok(Diffed { diff, too_slow })
}
