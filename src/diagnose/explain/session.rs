//! A set of recordings: one or two commands run through the recorder,
//! interleaved (A, B, B, A, ...), each run attributed as soon as it ends (so
//! only its summary is kept), then turned into one [`Trace`] per command.
//! `tardy explain` and `tardy bisect --explain` both record through this.

use crate::measure::interrupt;
use crate::model::Exec;
use crate::probe::fingerprint::Fingerprint;
use crate::record::{self, Choice, Coverage, Hist, NKIND, Prepared, RecordOptions, Recorder};

use super::{Overhead, RunSummary, Trace, attribute, build_trace};

/// One command to record.
#[derive(Debug, Clone)]
pub struct Spec {
    /// How the command is named in the output.
    pub display: String,
    pub exec: Exec,
    pub options: RecordOptions,
}

/// How to record the set.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Runs of each command.
    pub runs: u64,
    /// Keep going when a run fails (otherwise the first failure ends the set).
    pub ignore_failure: bool,
    /// Also run each command untraced, interleaved, to measure the overhead.
    pub overhead_check: bool,
    /// Which recorder (`--recorder`); `--no-trace` is `Choice::None`.
    pub recorder: Choice,
    /// Untraced, unrecorded runs of each command first (caches, compiled
    /// bytecode, a cold disk), as hyperfine's --warmup.
    pub warmup: u64,
    /// A shell command run before every run, warm-up or recorded, neither
    /// timed nor traced (`sync; echo 3 > /proc/sys/vm/drop_caches` for a
    /// cold-cache run), as `tardy run --prepare` and hyperfine's.
    pub prepare: Option<String>,
}

/// `--prepare`: run to its end, untraced; a failure ends the set.
fn prepare(opts: &Options) -> Result<(), SessionError> {
    let Some(cmd) = &opts.prepare else {
        return Ok(());
    };
    let status = std::process::Command::new("sh")
        .args(["-c", cmd])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .status()
        .map_err(|e| SessionError::Failed(format!("--prepare '{cmd}' could not start: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(SessionError::Failed(format!(
            "--prepare '{cmd}' failed ({status}): the runs after it would not be what was asked"
        )))
    }
}

/// Progress, for a bar or a log.
pub enum Event<'a> {
    /// A warm-up run of `display` starts (not recorded).
    Warmup { display: &'a str },
    /// A run of `display` starts.
    Run { display: &'a str },
    /// A run ended.
    Done,
}

/// What the recordings gave.
pub struct Outcome {
    /// One trace per spec, in order.
    pub traces: Vec<Trace>,
    /// Ctrl-C ended the set early; the traces hold the runs completed before it.
    pub interrupted: bool,
}

/// Why a set of recordings could not give a trace of every command.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Record(#[from] record::RecordError),
    /// A run failed: the message says which, how, and how its stderr began.
    #[error("{0}")]
    Failed(String),
    /// Interrupted before one run of this command completed.
    #[error("interrupted before a run of '{0}' completed: nothing to explain")]
    NothingCompleted(String),
    /// The recorder asked for cannot run here.
    #[error("{0}")]
    Recorder(String),
}

struct Live {
    display: String,
    prepared: Box<Prepared>,
    untraced: Option<Box<Prepared>>,
    runs: Vec<RunSummary>,
    hists: Box<[Hist; NKIND]>,
    coverage: Option<Coverage>,
    untraced_walls: Vec<f64>,
    /// The profile so far (named run by run), when asked for.
    profile: Option<crate::profile::Builder>,
    /// Each run's timeline, when asked for.
    logs: Vec<crate::record::events::EventLog>,
}

/// Record every spec `opts.runs` times, interleaved, alternating the order
/// each round so neither side always goes first.
pub fn record_set(
    specs: &[Spec],
    opts: &Options,
    on: &mut dyn FnMut(Event),
) -> Result<Outcome, SessionError> {
    let mut sides = Vec::with_capacity(specs.len());
    for s in specs {
        let untraced = if opts.overhead_check {
            let o = RecordOptions {
                trace: false,
                ..s.options.clone()
            };
            Some(Box::new(Prepared::new(&s.display, &s.exec, &o)?))
        } else {
            None
        };
        sides.push(Live {
            display: s.display.clone(),
            prepared: Box::new(Prepared::new(&s.display, &s.exec, &s.options)?),
            untraced,
            runs: Vec::new(),
            hists: Box::new([Hist::default(); NKIND]),
            coverage: None,
            untraced_walls: Vec::new(),
            profile: (s.options.profile_hz > 0)
                .then(|| crate::profile::Builder::new(s.options.profile_hz)),
            logs: Vec::new(),
        });
    }
    let tracing = specs.iter().any(|s| s.options.trace);
    let choice = if tracing { opts.recorder } else { Choice::None };
    let (recorder, fallback) = record::choose(choice).map_err(SessionError::Recorder)?;
    let stop_cost = if recorder.name() == "ptrace" {
        record::calibrate_stop_cost()
    } else {
        None
    };
    // kernel.task_delayacct is the machine's: left as it is. With it on
    // already, ptrace's threads report their block-I/O delays; otherwise the
    // sampler's uninterruptible sleeps stand for them (the kernel's events
    // show them directly).
    let interrupted = rounds(&mut sides, opts, recorder.as_ref(), on)?;
    let machine = Fingerprint::capture();
    let mut traces = Vec::with_capacity(sides.len());
    for side in sides {
        if side.runs.is_empty() {
            return Err(SessionError::NothingCompleted(side.display));
        }
        let mut overhead = Overhead {
            stop_cost_ns: stop_cost,
            recorder: recorder.name().to_string(),
            blind_spots: recorder.blind_spots(),
            fallback: fallback.clone(),
            ..Overhead::default()
        };
        let walls: Vec<f64> = side.runs.iter().map(|r| r.wall_s).collect();
        if let (Some(t), Some(u)) = (median(&walls), median(&side.untraced_walls))
            && u > 0.0
        {
            overhead.measured_ratio = Some(t / u);
        }
        overhead.untraced_wall_s = side.untraced_walls;
        let timeline = median_log(side.logs);
        let mut trace = build_trace(
            &side.display,
            side.runs,
            &side.hists,
            side.coverage.as_ref(),
            overhead,
            machine.clone(),
            interrupted,
        );
        trace.timeline = timeline;
        if let Some(b) = side.profile {
            let p = b.finish();
            if recorder.name() != "kernel-events" {
                trace.profile_note = Some(format!(
                    "no CPU profile: it needs the kernel-event recorder ({})",
                    fallback
                        .clone()
                        .unwrap_or_else(|| format!("the {} recorder ran", recorder.name()))
                ));
            } else if p.samples == 0 {
                trace.profile_note = Some(if p.notes.is_empty() {
                    "no CPU profile: no sample was taken (the runs used almost no CPU)".into()
                } else {
                    p.notes.join("; ")
                });
                trace.profile = Some(p);
            } else {
                trace.profile = Some(p);
            }
        }
        traces.push(trace);
    }
    Ok(Outcome {
        traces,
        interrupted,
    })
}

/// `tardy explain --pid`: the tree of a running process recorded once, for
/// `duration` (or until Ctrl-C, or until it exits), with the kernel-event
/// recorder (the only one that can join a tree without stopping it): one
/// trace, where its time went while recorded.
pub fn record_running(
    pid: i32,
    duration: Option<std::time::Duration>,
    options: &RecordOptions,
    on: &mut dyn FnMut(Event),
) -> Result<Outcome, SessionError> {
    let recorder = record::kernel::KernelRecorder::new().map_err(|why| {
        SessionError::Recorder(format!(
            "--pid records with the kernel's scheduler events, which are not allowed here: {why}"
        ))
    })?;
    let command = record::procfs::cmdline(pid, 200);
    let display = if command.is_empty() {
        format!("pid {pid}")
    } else {
        format!("pid {pid} ({command})")
    };
    on(Event::Run { display: &display });
    let mut rec = recorder
        .attach(pid, duration, options)
        .map_err(SessionError::Recorder)?;
    on(Event::Done);
    let tck = record::procfs::ticks_per_second();
    let summary = attribute(&rec, tck);
    let hists = rec.hists;
    let log = rec.log.take().map(|l| std::sync::Arc::new(*l));
    let mut profile =
        (options.profile_hz > 0).then(|| crate::profile::Builder::new(options.profile_hz));
    if let Some(b) = profile.as_mut() {
        b.add_run(rec.profile.as_ref());
    }
    let overhead = Overhead {
        recorder: recorder.name().to_string(),
        blind_spots: format!(
            "kernel events (perf_event_open) on each thread of a running tree, inherited by what it starts; \
             what happened before the recording began is not seen (a wait already going counts from its start), \
             and {}",
            "a wait ended from outside the tree includes the wait for a CPU after it"
        ),
        ..Overhead::default()
    };
    let mut trace = build_trace(
        &display,
        vec![summary],
        &hists,
        rec.coverage.as_ref(),
        overhead,
        Fingerprint::capture(),
        false,
    );
    trace.timeline = log;
    if let Some(b) = profile {
        let p = b.finish();
        if p.samples == 0 {
            trace.profile_note =
                Some("no CPU profile: no sample was taken (the tree used almost no CPU)".into());
        }
        trace.profile = Some(p);
    }
    Ok(Outcome {
        traces: vec![trace],
        interrupted: false,
    })
}

/// The rounds themselves; `Ok(true)` when Ctrl-C ended them early.
fn rounds(
    sides: &mut [Live],
    opts: &Options,
    recorder: &dyn Recorder,
    on: &mut dyn FnMut(Event),
) -> Result<bool, SessionError> {
    let tck = record::procfs::ticks_per_second();
    for side in sides.iter() {
        let plain = match &side.untraced {
            Some(u) => u.as_ref(),
            None => side.prepared.as_ref(),
        };
        for _ in 0..opts.warmup {
            if interrupt::requested() {
                return Ok(true);
            }
            on(Event::Warmup {
                display: &side.display,
            });
            prepare(opts)?;
            record::Untraced.record(plain)?;
        }
    }
    for round in 0..opts.runs {
        let order: Vec<usize> = if round % 2 == 0 {
            (0..sides.len()).collect()
        } else {
            (0..sides.len()).rev().collect()
        };
        for i in order {
            if interrupt::requested() {
                return Ok(true);
            }
            let side = &mut sides[i];
            on(Event::Run {
                display: &side.display,
            });
            prepare(opts)?;
            let mut rec = recorder.record(&side.prepared)?;
            if rec.interrupted {
                return Ok(true);
            }
            if !rec.success() && !opts.ignore_failure {
                let stderr = if rec.stderr_head.is_empty() {
                    String::new()
                } else {
                    format!("; its stderr began: {}", rec.stderr_head)
                };
                return Err(SessionError::Failed(format!(
                    "command '{}' {} (run {}){stderr}",
                    side.display,
                    rec.describe(),
                    round + 1
                )));
            }
            for (h, r) in side.hists.iter_mut().zip(rec.hists.iter()) {
                h.merge(r);
            }
            if side.coverage.is_none() {
                side.coverage = rec.coverage.clone();
            }
            side.runs.push(attribute(&rec, tck));
            side.logs.extend(rec.log.take().map(|l| *l));
            if let Some(b) = side.profile.as_mut() {
                b.add_run(rec.profile.as_ref());
            }
            if let Some(u) = &side.untraced {
                prepare(opts)?;
                let r = record::Untraced.record(u)?;
                side.untraced_walls.push(r.wall_ns as f64 / 1e9);
            }
            on(Event::Done);
        }
    }
    Ok(false)
}

/// The timeline of the run of median wall time.
fn median_log(
    mut logs: Vec<crate::record::events::EventLog>,
) -> Option<std::sync::Arc<crate::record::events::EventLog>> {
    logs.sort_by_key(|l| l.wall_ns);
    let mid = logs.len().checked_sub(1)? / 2;
    Some(std::sync::Arc::new(logs.swap_remove(mid)))
}

fn median(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| crate::stats::summary::median_by_selection(&mut v.to_vec()))
}
