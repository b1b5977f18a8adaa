//! `tardy ci` as one call: both sides prepared and measured
//! ([`crate::ci::run`]), the results exported, head explained when it is
//! proven slower, the Markdown verdict and GitHub's job summary written, and
//! the worktrees removed (or kept, as asked).

use std::path::PathBuf;

use crate::ci::{self, CiError, Explained, Outcome};
use crate::measure::session::Observer;
use crate::render;
use crate::store;

/// One `tardy ci`.
pub struct Job {
    pub options: ci::Options,
    /// Fail when head is proven slower by more than this fraction.
    pub gate: Option<f64>,
    /// Explain head against base with this many traced runs of each, when
    /// head is proven slower.
    pub explain_runs: Option<u64>,
    /// Write the verdict as Markdown here.
    pub markdown: Option<PathBuf>,
    /// Write every run of both sides here (tardy's results JSON).
    pub export_json: Option<PathBuf>,
    /// Append the Markdown to $GITHUB_STEP_SUMMARY.
    pub github: bool,
    /// Keep the worktrees (and their builds) for the next run.
    pub keep_worktrees: bool,
}

/// What the job did.
pub struct Done {
    pub outcome: Outcome,
    /// Head explained (when asked and proven slower), or why not.
    pub explained: Option<Result<Explained, String>>,
}

impl Job {
    /// Check that every file asked for can be written, before measuring.
    pub fn check(&self) -> Result<(), String> {
        for p in [&self.markdown, &self.export_json].into_iter().flatten() {
            store::check_writable(p).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Run it; `say` hears each step, `observer` each run.
    pub fn run(
        &self,
        say: &mut dyn FnMut(&str),
        observer: &mut dyn Observer,
    ) -> Result<Done, CiError> {
        let outcome = ci::run(&self.options, self.gate, say, observer)?;
        let write = |p: &PathBuf, text: &str| {
            store::write_atomic(p, text.as_bytes()).map_err(|e| CiError::Io(e.to_string()))
        };
        if let Some(p) = &self.export_json {
            write(p, &render::json::results(&outcome.results))?;
        }
        // Why head is slower, while both worktrees are still there.
        let slower = (outcome.judgement.estimate.as_ref()).is_some_and(|e| e.proven_slower());
        let explained = match self.explain_runs {
            Some(runs) if slower && outcome.error.is_none() => {
                say(&format!(
                    "explaining: {runs} traced runs of each side, interleaved"
                ));
                Some(ci::explain(&self.options, &outcome.prepared, runs).map_err(|e| e.to_string()))
            }
            _ => None,
        };
        let md = markdown(&outcome, explained.as_ref());
        if let Some(p) = &self.markdown {
            write(p, &md)?;
        }
        if self.github {
            ci::summary::append(&format!("{md}\n")).map_err(CiError::Io)?;
        }
        if self.keep_worktrees {
            let dir = outcome.prepared.state_dir.display();
            say(&format!("the worktrees stay in {dir} for the next run"));
        } else {
            ci::remove_worktrees(&outcome.prepared);
        }
        Ok(Done { outcome, explained })
    }
}

/// The verdict as Markdown (a pull-request comment).
pub fn markdown(outcome: &Outcome, explained: Option<&Result<Explained, String>>) -> String {
    let explained = explained.map(Result::as_ref);
    render::ci::markdown_with(&outcome.judgement, &outcome.results, explained)
}
