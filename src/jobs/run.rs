//! What `tardy run` keeps of a session besides its report: the exported
//! tables, the points saved in the history database and the upload to a
//! `tardy serve`. [`Keeper::open`] checks everything that can fail before
//! the first run (a path that cannot be written, a database that cannot be
//! opened), so an hour of measuring is never lost to a typo; [`Keeper::keep`]
//! writes it all once the runs are done (or interrupted: the runs taken are
//! kept).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::model::Results;
use crate::render::{self, table::Layout, table::Syntax};
use crate::store::{self, History};

use super::push::Event;

/// The files to write, each when given.
#[derive(Clone, Debug, Default)]
pub struct Exports {
    /// Every run and the statistics (docs/results-format.md).
    pub json: Option<PathBuf>,
    /// One CSV row of statistics per command.
    pub csv: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub asciidoc: Option<PathBuf>,
    pub orgmode: Option<PathBuf>,
    /// How the tables show times.
    pub layout: Layout,
}

/// Where the history goes and what labels it.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    /// The database (`--db`; default: the repository's `.tardy/tardy.db`).
    pub db: Option<PathBuf>,
    pub project: String,
    /// The commit and branch (default: HEAD and the current branch here).
    pub commit: Option<String>,
    pub branch: Option<String>,
}

/// What to keep.
#[derive(Clone, Debug, Default)]
pub struct Keep {
    pub exports: Exports,
    /// Save every benchmark as a point of this series (SERIES/NAME for each
    /// of several commands).
    pub save: Option<String>,
    /// Upload the results to this `tardy serve`, with this write token.
    pub push: Option<(String, Option<String>)>,
    pub labels: Labels,
}

/// What was kept.
#[derive(Clone, Debug, Default)]
pub struct Kept {
    /// Points saved, and where ("SQLite file .tardy/tardy.db").
    pub saved: Option<(usize, String)>,
    /// The server said a regression alert is open.
    pub regression: bool,
}

/// A [`Keep`] whose paths and database were checked.
pub struct Keeper {
    keep: Keep,
    db: Option<Box<dyn History + Send>>,
}

impl Keeper {
    /// Check every path and open the database now, before measuring.
    pub fn open(keep: Keep) -> Result<Keeper, String> {
        let labels = &keep.labels;
        if keep.save.is_none()
            && keep.push.is_none()
            && (labels.commit.is_some() || labels.branch.is_some())
        {
            return Err(
                "--commit and --branch label saved results: add --save SERIES or --push URL".into(),
            );
        }
        let db = match &keep.save {
            None => None,
            Some(_) => Some(
                super::store::open(labels.db.as_deref(), &labels.project)
                    .map_err(|e| e.to_string())?,
            ),
        };
        for p in keep.exports.paths() {
            store::check_writable(p).map_err(|e| e.to_string())?;
        }
        Ok(Keeper { keep, db })
    }

    /// The exports, the history series and the upload, as asked. Nothing
    /// is saved or uploaded when not one run was measured.
    pub fn keep(&mut self, results: &Results, on: &mut dyn FnMut(Event)) -> Result<Kept, String> {
        self.keep
            .exports
            .write(results)
            .map_err(|e| e.to_string())?;
        let mut kept = Kept::default();
        let measured = measured(results);
        let labels = &self.keep.labels;
        if let (Some(series), Some(db)) = (&self.keep.save, self.db.as_mut()) {
            let n = save(series, labels, db.as_mut(), results)?;
            kept.saved = Some((n, super::store::describe(labels.db.as_deref())));
        }
        if let (Some((url, token)), true) = (&self.keep.push, measured) {
            let (commit, branch) = (labels.commit.as_deref(), labels.branch.as_deref());
            let meta = super::push::meta_here(commit, branch, self.keep.save.as_deref())?;
            let opts = super::push::options(token.clone(), None, 60.0, 60.0)?;
            let body = render::json::results(results);
            kept.regression = super::push::push_results(url, body.as_bytes(), &meta, &opts, on)?;
        }
        Ok(kept)
    }
}

/// Whether a session measured anything (a run that was not a warm-up).
pub fn measured(results: &Results) -> bool {
    (results.benchmarks.iter()).any(|b| b.runs.iter().any(|r| !r.warmup))
}

impl Exports {
    /// The paths given.
    pub fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        [
            &self.json,
            &self.csv,
            &self.markdown,
            &self.asciidoc,
            &self.orgmode,
        ]
        .into_iter()
        .flatten()
    }

    /// Write each file given (atomically).
    pub fn write(&self, results: &Results) -> Result<(), store::StoreError> {
        if let Some(p) = &self.json {
            store::write_atomic(p, render::json::results(results).as_bytes())?;
        }
        if let Some(p) = &self.csv {
            store::write_atomic(p, render::csv::summary(results).as_bytes())?;
        }
        for (path, syntax) in [
            (&self.markdown, Syntax::Markdown),
            (&self.asciidoc, Syntax::AsciiDoc),
            (&self.orgmode, Syntax::OrgMode),
        ] {
            if let Some(p) = path {
                let table = render::table::results(results, &self.layout, syntax);
                store::write_atomic(p, table.as_bytes())?;
            }
        }
        Ok(())
    }
}

/// The measured runs of every benchmark, one point each.
fn save(
    series: &str,
    labels: &Labels,
    db: &mut dyn History,
    results: &Results,
) -> Result<usize, String> {
    let provenance =
        super::store::provenance_now(labels.commit.as_deref(), labels.branch.as_deref())?;
    let labels = crate::history::import::Labels {
        series: Some(series.to_string()),
        provenance: Some(provenance),
        fingerprint: Some(results.machine.clone()),
        direction: None,
    };
    let batches = crate::history::import::session_batches(results.clone(), &labels)
        .map_err(|e| e.to_string())?;
    let n = batches.len();
    db.save(&batches).map_err(|e| e.to_string())?;
    Ok(n)
}

/// The results JSON saved while runs complete, so that a killed session
/// keeps every run taken: after every run, unless saving would take over 1%
/// of the time; then at most every 100x the cost of one save (Ctrl-C and
/// the end save everything in any case).
pub struct Autosave {
    path: PathBuf,
    last: Option<Instant>,
    cost: Duration,
}

impl Autosave {
    pub fn new(path: PathBuf) -> Autosave {
        Autosave {
            path,
            last: None,
            cost: Duration::ZERO,
        }
    }

    /// A run completed: save when due.
    pub fn after_run(&mut self, results: &Results) -> Result<(), String> {
        if self.last.is_some_and(|t| t.elapsed() < self.cost * 100) {
            return Ok(());
        }
        let t = Instant::now();
        store::write_atomic(&self.path, render::json::results(results).as_bytes())
            .map_err(|e| e.to_string())?;
        self.cost = t.elapsed();
        self.last = Some(Instant::now());
        Ok(())
    }
}

/// What counting costs, said once: the line to say after the first run
/// that tells (a session under cachegrind takes many times as long).
#[derive(Default)]
pub struct CostNote {
    told: bool,
}

impl CostNote {
    /// The line, the first time `results` can tell it.
    pub fn after_run(&mut self, results: &Results) -> Option<String> {
        // Without counters there is no cost to tell (and looking for one
        // after every run read every run so far: quadratic).
        if self.told || results.options.counter.is_none() {
            self.told = true;
            return None;
        }
        let c = crate::analyze::run::counting_cost(results)?;
        self.told = true;
        Some(render::terminal::counting_cost(&c))
    }
}

/// The progress bar's message while measuring: the precision reached and
/// the one aimed at, and cachegrind's slowness when counting under it.
pub fn precision_message(results: &Results, now: f64, target: f64) -> String {
    let cachegrind = (results.options.counter.as_ref()).is_some_and(|c| c.backend == "cachegrind");
    let counting = if cachegrind {
        "cachegrind (20-50x slower) "
    } else {
        ""
    };
    let (now, target) = (render::units::percent(now), render::units::percent(target));
    format!("{counting}±{now} of ±{target}")
}
