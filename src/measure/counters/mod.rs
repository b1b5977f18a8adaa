//! Counts that noise cannot move: the instructions (and cycles, or cycles
//! estimated from a simulated cache) of a command's whole process tree.
//!
//! One file per backend, as hyperfine's `timer/` has one per OS:
//! - [`pmu`]: the CPU's own counters through `perf_event_open`, opened by
//!   the trampoline around the command and inherited by every process it
//!   starts; read once at the end, no slowdown.
//! - [`cachegrind`]: valgrind's cachegrind following children, for machines
//!   without a PMU (most VMs and containers, this one included). Exact
//!   instruction counts, and `estimated-cycles` from its simulated caches;
//!   the command runs 20-50x slower, so these runs are taken beside the
//!   timed ones, never instead of them.

pub mod cachegrind;
pub mod pmu;

use std::path::PathBuf;

pub use crate::model::Metric;

/// Which counter backend to use (`--counter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// The PMU where the machine has one, else cachegrind.
    Auto,
    Pmu,
    Cachegrind,
}

impl std::str::FromStr for BackendChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "pmu" | "perf" => Ok(BackendChoice::Pmu),
            "cachegrind" | "valgrind" => Ok(BackendChoice::Cachegrind),
            _ => Err(format!(
                "unknown counter backend '{s}': expected auto, pmu or cachegrind"
            )),
        }
    }
}

/// How the counts of a session are taken.
#[derive(Debug, Clone, PartialEq)]
pub enum Counter {
    /// The PMU, in the same runs as the wall time.
    Pmu(pmu::PmuSpec),
    /// Cachegrind, in runs of their own beside the timed ones.
    Cachegrind(cachegrind::CachegrindSpec),
}

impl Counter {
    pub fn backend(&self) -> &'static str {
        match self {
            Counter::Pmu(_) => "pmu",
            Counter::Cachegrind(_) => "cachegrind",
        }
    }

    /// The events this counter reads, as recorded in the results.
    pub fn events(&self) -> Vec<String> {
        match self {
            Counter::Pmu(s) => s.events(),
            Counter::Cachegrind(s) => s.events(),
        }
    }

    /// How the counts were taken, as the results record it.
    pub fn record(&self) -> crate::model::CounterRecord {
        crate::model::CounterRecord {
            backend: self.backend().to_string(),
            events: self.events(),
            cache: match self {
                Counter::Cachegrind(s) if s.cache_sim => Some(format!(
                    "I1 {}, D1 {}, LL {}",
                    cachegrind::I1,
                    cachegrind::D1,
                    cachegrind::LL
                )),
                _ => None,
            },
        }
    }
}

/// Why counting cannot start.
#[derive(Debug, thiserror::Error)]
pub enum CounterError {
    #[error(
        "--metric {metric} needs a hardware PMU, and this machine has none ({why}); `tardy doctor` says what it has. Use --metric estimated-cycles (cachegrind's simulated cache) or instructions"
    )]
    NoPmu { metric: &'static str, why: String },
    #[error(
        "--counter pmu: this machine has no usable hardware PMU ({why}); use --counter cachegrind (valgrind) or leave --counter at auto"
    )]
    PmuRefused { why: String },
    #[error(
        "counting {metric} on a machine without a hardware PMU needs valgrind, which is not installed: install the 'valgrind' package (apt-get install valgrind, dnf install valgrind, apk add valgrind, brew install valgrind), or name it with TARDY_VALGRIND=/path/to/valgrind"
    )]
    NoValgrind { metric: &'static str },
    #[error(
        "estimated-cycles come from cachegrind's simulated cache; --counter pmu cannot give them (ask for cycles instead)"
    )]
    EstimatedNeedsCachegrind,
    #[error("counts need tardy's trampoline, which TARDY_NO_TRAMPOLINE turned off")]
    NoTrampoline,
}

/// Choose how to count `metrics` (the counts among them; wall needs nothing).
/// `None` when no count is asked for.
pub fn choose(
    metrics: &[Metric],
    choice: BackendChoice,
    kernel: bool,
) -> Result<Option<Counter>, CounterError> {
    let counts: Vec<Metric> = metrics.iter().copied().filter(|m| m.is_count()).collect();
    let Some(&first) = counts.first() else {
        return Ok(None);
    };
    let wants_estimate = counts.contains(&Metric::EstimatedCycles);
    let wants_cycles = counts.contains(&Metric::Cycles);
    let pmu = || pmu::available(kernel);
    let use_pmu = match choice {
        BackendChoice::Pmu => {
            if wants_estimate {
                return Err(CounterError::EstimatedNeedsCachegrind);
            }
            if let Err(why) = pmu() {
                return Err(CounterError::PmuRefused { why });
            }
            true
        }
        BackendChoice::Cachegrind => {
            if wants_cycles {
                return Err(CounterError::NoPmu {
                    metric: "cycles",
                    why: "cachegrind counts no real cycles".into(),
                });
            }
            false
        }
        BackendChoice::Auto => {
            if wants_estimate && wants_cycles {
                // Both: cycles need the PMU, the estimate needs cachegrind.
                return Err(CounterError::EstimatedNeedsCachegrind);
            }
            if wants_estimate {
                false
            } else {
                match pmu() {
                    Ok(()) => true,
                    Err(why) if wants_cycles => {
                        return Err(CounterError::NoPmu {
                            metric: "cycles",
                            why,
                        });
                    }
                    Err(_) => false,
                }
            }
        }
    };
    if use_pmu {
        if !crate::measure::spawn::trampoline_enabled() {
            return Err(CounterError::NoTrampoline);
        }
        return Ok(Some(Counter::Pmu(pmu::PmuSpec {
            instructions: counts.contains(&Metric::Instructions),
            cycles: wants_cycles,
            kernel,
        })));
    }
    let valgrind = find_valgrind().ok_or(CounterError::NoValgrind {
        metric: first.name(),
    })?;
    Ok(Some(Counter::Cachegrind(cachegrind::CachegrindSpec {
        valgrind,
        cache_sim: wants_estimate,
    })))
}

/// valgrind: `TARDY_VALGRIND`, else the first `valgrind` in PATH.
pub fn find_valgrind() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TARDY_VALGRIND") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    crate::measure::command::resolve_program("valgrind", None).ok()
}

/// A command prepared for counted runs: on the PMU, its runs counted as they
/// are timed; under cachegrind, wrapped in valgrind with a directory for its
/// per-process files.
pub struct CountingExecutor {
    executor: crate::measure::spawn::Executor,
    /// Cachegrind's output directory (and whether it simulates the cache).
    cachegrind: Option<(tempfile::TempDir, bool)>,
}

impl CountingExecutor {
    pub fn new(
        counter: &Counter,
        display: &str,
        exec: &crate::model::Exec,
        output: &crate::measure::spawn::OutputMode,
        output_file: Option<&std::fs::File>,
        opts: &crate::measure::spawn::ExecOptions,
    ) -> Result<CountingExecutor, crate::measure::MeasureError> {
        use crate::measure::MeasureError;
        use crate::measure::spawn::Executor;
        match counter {
            Counter::Pmu(spec) => {
                let mut o = opts.clone();
                o.pmu = Some(*spec);
                Ok(CountingExecutor {
                    executor: Executor::new(display, exec, output, output_file, &o)?,
                    cachegrind: None,
                })
            }
            Counter::Cachegrind(spec) => {
                let dir = tempfile::Builder::new()
                    .prefix("tardy-cachegrind-")
                    .tempdir()
                    .map_err(|e| {
                        MeasureError::Option(format!(
                            "cannot create a directory for cachegrind's files: {e}"
                        ))
                    })?;
                let program = match exec {
                    crate::model::Exec::Direct { argv } => {
                        let first = argv.first().ok_or(MeasureError::EmptyCommand)?;
                        Some(crate::measure::command::resolve_program(
                            first,
                            opts.cwd.as_deref(),
                        )?)
                    }
                    crate::model::Exec::Shell { .. } => None,
                };
                let wrapped = spec.wrap(exec, program.as_deref(), dir.path());
                let mut o = opts.clone();
                o.pmu = None;
                Ok(CountingExecutor {
                    executor: Executor::new(display, &wrapped, output, output_file, &o)?,
                    cachegrind: Some((dir, spec.cache_sim)),
                })
            }
        }
    }

    /// The processes the last run left behind.
    pub fn take_stragglers(&mut self) -> Vec<crate::measure::stragglers::Straggler> {
        self.executor.take_stragglers()
    }

    /// One counted run: its outcome, and its counts when it succeeded.
    pub fn run(
        &mut self,
        capture_stderr: Option<&std::fs::File>,
        output_file: Option<&std::fs::File>,
    ) -> Result<
        (
            crate::measure::spawn::RunOutcome,
            Option<crate::model::Counts>,
        ),
        crate::measure::MeasureError,
    > {
        if let Some((dir, _)) = &self.cachegrind
            && let Ok(entries) = std::fs::read_dir(dir.path())
        {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let o = self.executor.run(capture_stderr, output_file)?;
        if !o.success() || o.interrupted {
            return Ok((o, None));
        }
        let mut counts = match &self.cachegrind {
            None => crate::model::Counts {
                backend: "pmu".into(),
                instructions: o.instructions,
                cycles: o.cycles,
                ..Default::default()
            },
            Some((dir, cache_sim)) => cachegrind::collect(dir.path(), *cache_sim).map_err(|e| {
                crate::measure::MeasureError::Option(format!(
                    "reading cachegrind's counts of '{}': {e}",
                    self.executor.display()
                ))
            })?,
        };
        if self.cachegrind.is_some() {
            counts.counted_wall_ns = Some(o.wall_ns);
        }
        Ok((o, Some(counts)))
    }
}
