//! What `tardy bisect` says while it searches: each event of the engine
//! ([`Event`]) as a line to keep on stderr or as the live status (what is
//! measured, samples, time left). The CLI draws the status on its spinner;
//! a test or another front end hears the same words.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::bisect::engine::Event;
use crate::render::bisect::{disturbance_line, step_line};

/// One thing to say.
pub enum Say {
    /// A line to keep (a phase, a step's verdict, a warning).
    Line(String),
    /// The live line's prefix: what is being measured.
    Measuring(String),
    /// The live line's message: samples and time left.
    Progress(String),
    /// Nothing (a phase or step in quiet mode).
    Nothing,
}

/// The words for a search's events, in order.
pub struct Narrator {
    /// Phases and steps unsaid (JSON output, off a terminal); warnings
    /// are always said.
    quiet: bool,
    steps_seen: usize,
    started: Instant,
    runs: u64,
    /// Candidates whose stragglers were named (once each).
    warned: BTreeSet<String>,
}

impl Narrator {
    /// A narrator for a search that already has `steps_seen` steps (resumed).
    pub fn new(quiet: bool, steps_seen: usize) -> Narrator {
        Narrator {
            quiet,
            steps_seen,
            started: Instant::now(),
            runs: 0,
            warned: BTreeSet::new(),
        }
    }

    /// What `ev` says.
    pub fn hear(&mut self, ev: Event) -> Say {
        match ev {
            Event::Phase(p) if !self.quiet => Say::Line(p),
            Event::Phase(_) => Say::Nothing,
            Event::Measuring(what) => Say::Measuring(what.chars().take(60).collect()),
            Event::Sample {
                label,
                n,
                total_runs,
                runs_left,
            } => {
                self.runs += 1;
                let l: String = label.chars().take(40).collect();
                let per_run = self.started.elapsed().as_secs_f64() / self.runs as f64;
                let left = per_run * runs_left as f64;
                Say::Progress(format!(
                    "{l}: {n} samples ({total_runs} runs in all), about {left:.0} s left"
                ))
            }
            // A warning, not progress: said in every format, once per candidate.
            Event::Stragglers { label, what } if self.warned.insert(label.to_string()) => {
                Say::Line(format!(
                    "  warning: the command, run for {label}, left {what} running after it exited (killed; said once per candidate)"
                ))
            }
            Event::Stragglers { .. } => Say::Nothing,
            Event::Disturbance(d) => Say::Line(format!("  {}", disturbance_line(d))),
            Event::Step(s) => {
                self.steps_seen += 1;
                if self.quiet {
                    Say::Nothing
                } else {
                    Say::Line(step_line(self.steps_seen - 1, s))
                }
            }
        }
    }
}
