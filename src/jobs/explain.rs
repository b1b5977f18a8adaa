//! The files `tardy explain` writes beside its report: saved traces, the
//! CPU profiles (collapsed stacks, pprof), the timelines for Perfetto and
//! the one-page HTML explanation. Each is asked for by a path; a path for
//! side B when there is no B, or for a profile or timeline the recording
//! did not keep, is an error that says why.

use std::path::PathBuf;

use crate::diagnose::explain::{Trace, job::Explained};
use crate::render;
use crate::store::atomic::write_atomic;

/// The files asked for (A is the first side, B the second).
#[derive(Clone, Debug, Default)]
pub struct Files {
    /// The traces as JSON (`tardy explain A.json B.json` reads them).
    pub save: [Option<PathBuf>; 2],
    /// Timelines as trace-event JSON (ui.perfetto.dev).
    pub trace: [Option<PathBuf>; 2],
    /// Sampled stacks as collapsed stacks (flamegraph.pl, inferno).
    pub folded: [Option<PathBuf>; 2],
    /// Sampled stacks as gzip'd pprof profiles.
    pub pprof: [Option<PathBuf>; 2],
    /// The explanation as one HTML page.
    pub html: Option<PathBuf>,
}

impl Files {
    /// Whether a file needs each run's timeline kept while recording.
    pub fn need_timeline(&self) -> bool {
        self.trace.iter().any(Option::is_some) || self.html.is_some()
    }
}

const NO_B: &str = "needs a B side (two commands or --condition-b/--prefix-b)";

/// Write every file asked for.
pub fn write(files: &Files, done: &Explained) -> Result<(), String> {
    let sides = [done.traces.first(), done.traces.get(1)];
    for (i, side) in sides.iter().enumerate() {
        let b = if i == 1 { "-b" } else { "" };
        let asked = [
            (&files.save[i], format!("--save{b}")),
            (&files.trace[i], format!("--export-trace{b}")),
            (&files.folded[i], format!("--export-folded{b}")),
            (&files.pprof[i], format!("--export-pprof{b}")),
        ];
        for (path, flag) in asked {
            let Some(path) = path else { continue };
            let t = side.ok_or_else(|| format!("{flag} {NO_B}"))?;
            let data = contents(&flag, t)?;
            write_atomic(path, &data)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    if let Some(path) = &files.html {
        let page = super::report::explain_html(done, "tardy explain");
        write_atomic(path, page.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// What `flag` writes of trace `t`.
fn contents(flag: &str, t: &Trace) -> Result<Vec<u8>, String> {
    if flag.starts_with("--save") {
        let json = serde_json::to_string_pretty(t).map_err(|e| e.to_string())?;
        return Ok((json + "\n").into_bytes());
    }
    if flag.starts_with("--export-trace") {
        let log = t.timeline.as_deref().ok_or_else(|| {
            format!(
                "{flag}: '{}' has no timeline: one is kept only while recording with the kernel-event recorder (this one: {}), never in a saved trace",
                t.command, t.overhead.recorder
            )
        })?;
        let mut data = Vec::new();
        render::perfetto::write(log, &t.command, &mut data).map_err(|e| e.to_string())?;
        return Ok(data);
    }
    let Some(p) = &t.profile else {
        let why = t.profile_note.clone().unwrap_or_else(|| {
            "no CPU profile (recorded with --profile-hz 0, or by an older tardy)".into()
        });
        return Err(format!("{flag}: '{}': {why}", t.command));
    };
    if flag.starts_with("--export-pprof") {
        render::pprof::gzipped(p, t.main_binary().as_deref()).map_err(|e| e.to_string())
    } else {
        Ok(render::folded::folded(p).into_bytes())
    }
}
