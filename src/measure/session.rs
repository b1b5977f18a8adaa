//! The session scheduler: calibrate, set up, warm up, then measure in rounds
//! until a stopping rule holds, keeping every completed run.
//!
//! With several commands each round runs every command once in a freshly
//! shuffled order (seeded SplitMix64), so drift hits all commands alike;
//! `interleaved = false` gives hyperfine's block order instead. The stopping
//! rule is evaluated in O(1) per command from running sums.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::calibrate;
use super::counters::{Counter, CountingExecutor, Metric};
use super::error::MeasureError;
use super::interrupt;
use super::spawn::{ExecOptions, Executor, OutputMode, RunOutcome};
use crate::model::{
    Benchmark, Exec, OptionsRecord, Overhead, Results, Run, SCHEMA, SCHEMA_VERSION, SessionStatus,
    StopReason,
};
use crate::probe::Fingerprint;
use crate::stats::rng::SplitMix64;
use crate::stats::running::Running;
use crate::stats::summary::relative_ci_half_width;

/// Runs longer than this are not warmed up by the automatic rule.
pub const AUTO_WARMUP_LIMIT: Duration = Duration::from_secs(1);
/// Default measuring budget per command when `--max-time` is not given.
pub const DEFAULT_MAX_TIME_PER_COMMAND: Duration = Duration::from_secs(6);

/// One command to measure, after parameter substitution.
#[derive(Debug, Clone)]
pub struct BenchmarkSpec {
    pub name: String,
    pub command: String,
    pub exec: Exec,
    pub parameters: BTreeMap<String, String>,
    pub setup: Option<Exec>,
    pub prepare: Option<Exec>,
    pub conclude: Option<Exec>,
    pub cleanup: Option<Exec>,
    pub output: OutputMode,
    /// This command's working directory, over the session's (`tardy ci`
    /// runs the same command in the base's and the head's worktree).
    pub cwd: Option<std::path::PathBuf>,
}

/// Which non-zero exits are kept (marked failed) rather than stopping the session.
#[derive(Debug, Clone, PartialEq)]
pub enum Accept {
    OnlyZero,
    AllNonZero,
    Codes(Vec<i32>),
}

impl Accept {
    fn tolerates(&self, o: &RunOutcome) -> bool {
        match self {
            Accept::OnlyZero => false,
            Accept::AllNonZero => true,
            Accept::Codes(codes) => o.exit_code.is_some_and(|c| codes.contains(&c)),
        }
    }
}

/// How much to measure, and by what: the run count, the stopping rule and
/// the metrics. `tardy run` and `tardy ci` take it from the same options.
#[derive(Debug, Clone)]
pub struct Budget {
    /// Exactly this many measured runs per command (no adaptive stopping).
    pub runs: Option<u64>,
    pub min_runs: u64,
    pub max_runs: Option<u64>,
    pub min_time: Duration,
    pub max_time: Option<Duration>,
    /// Target relative half-width of the deciding metric's interval.
    pub precision: f64,
    pub confidence: f64,
    pub warmup: Option<u64>,
    /// What each run is measured by, the first deciding when to stop (never empty).
    pub metrics: Vec<Metric>,
    /// How counts are taken, when `metrics` asks for any.
    pub counter: Option<Counter>,
}

impl Budget {
    /// The metric whose precision decides when to stop.
    pub fn primary(&self) -> Metric {
        self.metrics.first().copied().unwrap_or(Metric::Wall)
    }

    /// The metrics as recorded in the results (empty for wall time alone).
    pub fn metric_names(&self) -> Vec<String> {
        if self.metrics.iter().all(|m| *m == Metric::Wall) {
            Vec::new()
        } else {
            self.metrics.iter().map(|m| m.name().to_string()).collect()
        }
    }

    /// The options record of a session with this budget; the caller fills
    /// in what else it ran with (timeout, environment, failures accepted).
    pub fn record(&self, seed: u64, interleaved: bool) -> OptionsRecord {
        OptionsRecord {
            runs: self.runs,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            min_time_s: self.min_time.as_secs_f64(),
            max_time_s: self.max_time.map(|d| d.as_secs_f64()),
            precision: self.precision,
            confidence: self.confidence,
            warmup: self.warmup,
            seed,
            interleaved,
            timeout_s: None,
            ignore_failure: None,
            include_failures_in_stats: false,
            env: Vec::new(),
            cwd: None,
            input: None,
            metrics: self.metric_names(),
            counter: self.counter.as_ref().map(Counter::record),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub benchmarks: Vec<BenchmarkSpec>,
    pub exec: ExecOptions,
    pub budget: Budget,
    pub seed: u64,
    pub interleaved: bool,
    pub accept: Accept,
    pub record: OptionsRecord,
}

/// Progress as the session goes.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub executions: u64,
    /// Best current estimate of the total number of executions.
    pub expected: u64,
    pub warming_up: bool,
    /// The widest relative half-width of a mean's interval so far (z-based),
    /// and the target: what the adaptive rule is waiting for.
    pub precision: Option<(f64, f64)>,
}

/// Hooks for the caller: progress display and saving. Called between runs,
/// never inside the timed window.
pub trait Observer {
    fn phase(&mut self, _message: &str) {}
    fn after_run(&mut self, _results: &Results, _progress: Progress) -> Result<(), String> {
        Ok(())
    }
}

/// A no-op observer.
pub struct Silent;
impl Observer for Silent {}

struct Slot {
    executor: Executor,
    /// Cachegrind's runs, beside the timed ones.
    counting: Option<CountingExecutor>,
    /// The primary metric's values when it is a count (else `counted` decides).
    primary: Running,
    hooks: [Option<Executor>; 4],
    output_file: Option<File>,
    stderr_capture: Option<File>,
    executions: u64,
    measured: u64,
    counted: Running,
    correction_ns: u64,
}

const SETUP: usize = 0;
const PREPARE: usize = 1;
const CONCLUDE: usize = 2;
const CLEANUP: usize = 3;
const HOOK_NAMES: [&str; 4] = ["setup", "prepare", "conclude", "cleanup"];

/// How an [`Exec`] reads on a command line, for messages.
fn exec_display(exec: &Exec) -> String {
    match exec {
        Exec::Direct { argv } => super::command::join_quoted(argv),
        Exec::Shell { script, .. } => script.clone(),
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

fn self_cpu_ns() -> u64 {
    // SAFETY: rusage is plain data filled by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv =
        |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000_000 + t.tv_usec.max(0) as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The first lines of a captured stderr, for error messages.
fn stderr_excerpt(file: Option<&mut File>) -> String {
    let Some(f) = file else { return String::new() };
    let mut buf = Vec::new();
    if f.seek(SeekFrom::Start(0)).is_err() || f.take(4096).read_to_end(&mut buf).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&buf);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(5)
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; its stderr began: {}", lines.join(" | "))
    }
}

/// A session in progress.
struct Session<'a> {
    cfg: &'a SessionConfig,
    slots: Vec<Slot>,
    results: Results,
    seq: u64,
    hook_wall_ns: u64,
    run_wall_ns: u64,
    /// Normal quantile of the confidence level: a cheap lower bound of t,
    /// so the exact t quantile is only computed when it could matter.
    z: f64,
    /// Last estimate of the total executions, refreshed every 100 ms.
    expected: u64,
    expected_at: Option<Instant>,
}

/// Measure every benchmark of `cfg`. Setup problems (a program that does not
/// exist, an unopenable file) are returned as `Err` before anything runs;
/// a failure while measuring is returned beside the results gathered so far.
pub fn run(
    cfg: &SessionConfig,
    observer: &mut dyn Observer,
) -> Result<(Results, Option<MeasureError>), MeasureError> {
    let started_at_ns = now_ns();
    let machine = Fingerprint::capture();
    let mut output_files: BTreeMap<std::path::PathBuf, File> = BTreeMap::new();
    let mut slots = Vec::with_capacity(cfg.benchmarks.len());
    for spec in &cfg.benchmarks {
        let output_file = match &spec.output {
            OutputMode::File(path) => {
                if !output_files.contains_key(path) {
                    let f = File::create(path).map_err(|source| MeasureError::Open {
                        what: "output file",
                        path: path.clone(),
                        source,
                    })?;
                    output_files.insert(path.clone(), f);
                }
                output_files[path].try_clone().ok()
            }
            _ => None,
        };
        let mut exec_opts = cfg.exec.clone();
        if let Some(dir) = &spec.cwd {
            exec_opts.cwd = Some(dir.clone());
        }
        let mut run_opts = exec_opts.clone();
        if let Some(Counter::Pmu(p)) = &cfg.budget.counter {
            run_opts.pmu = Some(*p);
        }
        let executor = Executor::new(
            &spec.command,
            &spec.exec,
            &spec.output,
            output_file.as_ref(),
            &run_opts,
        )?;
        let counting = match &cfg.budget.counter {
            Some(c @ Counter::Cachegrind(_)) => Some(CountingExecutor::new(
                c,
                &spec.command,
                &spec.exec,
                &spec.output,
                output_file.as_ref(),
                &exec_opts,
            )?),
            _ => None,
        };
        let mut hooks: [Option<Executor>; 4] = [None, None, None, None];
        for (i, hook) in [&spec.setup, &spec.prepare, &spec.conclude, &spec.cleanup]
            .iter()
            .enumerate()
        {
            if let Some(exec) = hook {
                let mut opts = exec_opts.clone();
                opts.timeout = None;
                opts.input = None;
                // A setup may start a server for the runs: leave what it starts alone.
                opts.keep_stragglers = true;
                hooks[i] = Some(Executor::new(
                    &exec_display(exec),
                    exec,
                    &spec.output,
                    output_file.as_ref(),
                    &opts,
                )?);
            }
        }
        slots.push(Slot {
            executor,
            counting,
            primary: Running::default(),
            hooks,
            output_file,
            // Only when output is discarded: otherwise the user sees stderr anyway.
            stderr_capture: if spec.output == OutputMode::Null {
                tempfile::tempfile().ok()
            } else {
                None
            },
            executions: 0,
            measured: 0,
            counted: Running::default(),
            correction_ns: 0,
        });
    }

    // Calibration: the spawn floor, and each shell in use.
    observer.phase("calibrating");
    let calibration_start = Instant::now();
    let mut overhead = Overhead::default();
    if let Some((program, floor)) = calibrate::spawn_floor(&cfg.exec) {
        overhead.noop_program = Some(program);
        overhead.spawn_floor_ns = Some(floor);
    }
    let mut corrections = Vec::new();
    for spec in &cfg.benchmarks {
        if let Exec::Shell { shell, .. } = &spec.exec
            && !corrections
                .iter()
                .any(|c: &crate::model::ShellCorrection| &c.shell == shell)
        {
            corrections.push(calibrate::shell_correction(shell, &cfg.exec)?);
        }
    }
    for (slot, spec) in slots.iter_mut().zip(&cfg.benchmarks) {
        if let Exec::Shell { shell, .. } = &spec.exec {
            slot.correction_ns = corrections
                .iter()
                .find(|c| &c.shell == shell)
                .map_or(0, |c| c.wall_ns);
        }
    }
    overhead.calibration_wall_ns = calibration_start.elapsed().as_nanos() as u64;

    let results = Results {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        tardy_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at_ns,
        finished_at_ns: None,
        status: SessionStatus::Running,
        stop_reason: None,
        options: cfg.record.clone(),
        machine,
        shell_corrections: corrections,
        overhead,
        benchmarks: cfg
            .benchmarks
            .iter()
            .zip(&slots)
            .map(|(s, slot)| Benchmark {
                name: s.name.clone(),
                command: s.command.clone(),
                exec: s.exec.clone(),
                parameters: s.parameters.clone(),
                shell_correction_ns: slot.correction_ns,
                runs: Vec::new(),
                summary: None,
                counts: Vec::new(),
                resources: None,
                warnings: Vec::new(),
            })
            .collect(),
        comparisons: Vec::new(),
    };
    let z = crate::stats::dist::z_critical(cfg.budget.confidence);
    let mut session = Session {
        cfg,
        slots,
        results,
        seq: 0,
        hook_wall_ns: 0,
        run_wall_ns: 0,
        z,
        expected: 0,
        expected_at: None,
    };
    let error = session.measure(observer).err();
    Ok((session.results, error))
}

impl Session<'_> {
    fn measure(&mut self, observer: &mut dyn Observer) -> Result<(), MeasureError> {
        let cpu_start = self_cpu_ns();
        let start = Instant::now();
        let outcome = self.measure_inner(observer);
        // Cleanup runs whatever happened, best effort.
        let cleanup = (0..self.slots.len()).try_for_each(|b| self.hook(b, CLEANUP));
        let outcome = outcome.and(cleanup);
        let wall = start.elapsed().as_nanos() as u64;
        let executions: u64 = self.slots.iter().map(|s| s.executions).sum();
        let r = &mut self.results;
        r.overhead.measuring_wall_ns = wall;
        r.overhead.self_cpu_ns = self_cpu_ns().saturating_sub(cpu_start);
        let outside = wall.saturating_sub(self.run_wall_ns + self.hook_wall_ns);
        r.overhead.self_cpu_per_run_ns =
            r.overhead.self_cpu_ns.checked_div(executions).unwrap_or(0);
        r.overhead.between_runs_ns = outside.checked_div(executions).unwrap_or(0);
        r.machine.load_avg_after = crate::probe::fingerprint::load_average();
        r.finished_at_ns = Some(now_ns());
        match &outcome {
            Err(e) => {
                r.status = SessionStatus::Failed;
                r.stop_reason = Some(StopReason::Failed {
                    message: e.to_string(),
                });
            }
            Ok(()) if interrupt::requested() => {
                r.status = SessionStatus::Interrupted;
                r.stop_reason = Some(StopReason::Interrupted);
            }
            Ok(()) => r.status = SessionStatus::Complete,
        }
        outcome
    }

    fn measure_inner(&mut self, observer: &mut dyn Observer) -> Result<(), MeasureError> {
        let n = self.slots.len();
        for b in 0..n {
            self.hook(b, SETUP)?;
        }
        let mut rng = SplitMix64::new(self.cfg.seed);
        let mut order: Vec<usize> = (0..n).collect();
        let mut round = 0u64;

        // Warm-up: explicit rounds, or the automatic probe round.
        observer.phase("warming up");
        let warmup_rounds = self.cfg.budget.warmup.unwrap_or(1);
        for _ in 0..warmup_rounds {
            if self.cfg.interleaved {
                rng.shuffle(&mut order);
            }
            for &b in &order {
                let auto = self.cfg.budget.warmup.is_none();
                self.execute(
                    b,
                    round,
                    if auto {
                        WarmupMode::Auto
                    } else {
                        WarmupMode::Yes
                    },
                )?;
                self.notify(observer, true)?;
                if interrupt::requested() {
                    return Ok(());
                }
            }
            round += 1;
        }

        observer.phase(match &self.cfg.budget.counter {
            Some(Counter::Cachegrind(_)) => "counting (cachegrind: 20-50x slower runs)",
            _ => "measuring",
        });
        let measure_start = Instant::now();
        let max_time = self
            .cfg
            .budget
            .max_time
            .unwrap_or(DEFAULT_MAX_TIME_PER_COMMAND * n as u32);
        loop {
            if let Some(reason) = self.stop_reason(measure_start.elapsed(), max_time) {
                self.results.stop_reason = Some(reason);
                return Ok(());
            }
            if self.cfg.interleaved {
                rng.shuffle(&mut order);
                for &b in &order {
                    if self.wants_more(b) {
                        self.execute(b, round, WarmupMode::No)?;
                        self.notify(observer, false)?;
                        if interrupt::requested() {
                            return Ok(());
                        }
                    }
                }
                round += 1;
            } else {
                // Block order: finish each command before the next one.
                let elapsed = measure_start.elapsed();
                let Some(b) = (0..n).find(|&b| !self.done(b, elapsed, max_time)) else {
                    // Every command met its own rule; say which rule ended the last one.
                    self.results.stop_reason = Some(self.stop_reason(elapsed, max_time).unwrap_or(
                        StopReason::MaxTime {
                            seconds: max_time.as_secs_f64(),
                        },
                    ));
                    return Ok(());
                };
                self.execute(b, round, WarmupMode::No)?;
                round += 1;
                self.notify(observer, false)?;
                if interrupt::requested() {
                    return Ok(());
                }
            }
        }
    }

    fn wants_more(&self, b: usize) -> bool {
        match self.cfg.budget.runs {
            Some(runs) => self.slots[b].measured < runs,
            None => true,
        }
    }

    /// Whether benchmark `b` has met its own stopping rule (for block order).
    fn done(&self, b: usize, elapsed: Duration, max_time: Duration) -> bool {
        let s = &self.slots[b];
        if let Some(runs) = self.cfg.budget.runs {
            return s.measured >= runs;
        }
        if self.cfg.budget.max_runs.is_some_and(|m| s.measured >= m) {
            return true;
        }
        let share = max_time.as_secs_f64() * (b + 1) as f64 / self.slots.len() as f64;
        if s.measured >= self.cfg.budget.min_runs && elapsed.as_secs_f64() >= share {
            return true;
        }
        self.precise(s)
    }

    /// The running statistics of the metric that decides when to stop.
    fn deciding<'s>(&self, s: &'s Slot) -> &'s Running {
        if self.cfg.budget.primary().is_count() {
            &s.primary
        } else {
            &s.counted
        }
    }

    fn precise(&self, s: &Slot) -> bool {
        let r = self.deciding(s);
        let (n, mean, sd) = (r.n(), r.mean(), r.stddev());
        // Counts do not need time to average over: --min-time is for clocks.
        let enough = s.measured >= self.cfg.budget.min_runs
            && (self.cfg.budget.primary().is_count()
                || s.counted.sum() >= self.cfg.budget.min_time.as_secs_f64());
        if !enough || n < 2 || mean <= 0.0 {
            return false;
        }
        // t > z, so failing with z settles it without the costly t quantile.
        if self.z * sd / (n as f64).sqrt() / mean > self.cfg.budget.precision {
            return false;
        }
        relative_ci_half_width(n, mean, sd, self.cfg.budget.confidence)
            .is_some_and(|w| w <= self.cfg.budget.precision)
    }

    fn stop_reason(&self, elapsed: Duration, max_time: Duration) -> Option<StopReason> {
        let measured_min = self.slots.iter().map(|s| s.measured).min().unwrap_or(0);
        if let Some(runs) = self.cfg.budget.runs {
            return (measured_min >= runs).then_some(StopReason::ExactRuns { runs });
        }
        // Commands with no counted run (all failing) cannot reach any precision.
        if measured_min >= self.cfg.budget.min_runs && self.slots.iter().all(|s| s.counted.n() < 2)
        {
            return Some(StopReason::NoCountedRuns { runs: measured_min });
        }
        let all_precise = self.slots.iter().all(|s| {
            self.precise(s) || (s.measured >= self.cfg.budget.min_runs && s.counted.n() < 2)
        });
        if all_precise {
            return Some(StopReason::Precision {
                precision: self.cfg.budget.precision,
            });
        }
        if let Some(max) = self.cfg.budget.max_runs
            && measured_min >= max
        {
            return Some(StopReason::MaxRuns { runs: max });
        }
        if measured_min >= self.cfg.budget.min_runs && elapsed >= max_time {
            return Some(StopReason::MaxTime {
                seconds: max_time.as_secs_f64(),
            });
        }
        None
    }

    fn notify(
        &mut self,
        observer: &mut dyn Observer,
        warming_up: bool,
    ) -> Result<(), MeasureError> {
        let progress = self.progress(warming_up);
        observer
            .after_run(&self.results, progress)
            .map_err(MeasureError::Save)
    }

    /// Current estimate of the total executions, for the progress bar.
    fn progress(&mut self, warming_up: bool) -> Progress {
        let executions: u64 = self.slots.iter().map(|s| s.executions).sum();
        if self
            .expected_at
            .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return Progress {
                executions,
                expected: self.expected.max(executions),
                warming_up,
                precision: self.precision_now(),
            };
        }
        self.expected_at = Some(Instant::now());
        let warm: u64 = self.slots.iter().map(|s| s.executions - s.measured).sum();
        let per_command = match self.cfg.budget.runs {
            Some(runs) => runs,
            None => {
                let max_time = self
                    .cfg
                    .budget
                    .max_time
                    .unwrap_or(DEFAULT_MAX_TIME_PER_COMMAND * self.slots.len() as u32)
                    .as_secs_f64();
                let total_mean: f64 = self.slots.iter().map(|s| s.counted.mean()).sum();
                self.slots
                    .iter()
                    .map(|s| {
                        let r = self.deciding(s);
                        let (n, mean, sd) = (r.n(), r.mean(), r.stddev());
                        let mut need = self.cfg.budget.min_runs;
                        if n >= 2 && mean > 0.0 {
                            if !self.cfg.budget.primary().is_count() {
                                need = need
                                    .max((self.cfg.budget.min_time.as_secs_f64() / mean).ceil()
                                        as u64);
                            }
                            let t = self.z;
                            let precise =
                                (t * sd / (self.cfg.budget.precision * mean)).powi(2).ceil();
                            let by_time = if total_mean > 0.0 {
                                (max_time / total_mean).ceil()
                            } else {
                                f64::MAX
                            };
                            need = need.max(precise.min(by_time).min(1e9) as u64);
                        }
                        if let Some(m) = self.cfg.budget.max_runs {
                            need = need.min(m);
                        }
                        need.max(s.measured)
                    })
                    .max()
                    .unwrap_or(0)
            }
        };
        self.expected = warm + per_command * self.slots.len() as u64;
        Progress {
            executions,
            expected: self.expected.max(executions),
            warming_up,
            precision: self.precision_now(),
        }
    }

    /// The widest relative half-width among the commands (normal
    /// approximation), with the target; `None` with fixed --runs or too few.
    fn precision_now(&self) -> Option<(f64, f64)> {
        if self.cfg.budget.runs.is_some() {
            return None;
        }
        let widest = self
            .slots
            .iter()
            .map(|s| self.deciding(s))
            .filter(|r| r.n() >= 2 && r.mean() > 0.0)
            .map(|r| self.z * r.stddev() / (r.n() as f64).sqrt() / r.mean())
            .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))))?;
        Some((widest, self.cfg.budget.precision))
    }

    fn hook(&mut self, b: usize, which: usize) -> Result<(), MeasureError> {
        let slot = &mut self.slots[b];
        let Some(ex) = slot.hooks[which].as_mut() else {
            return Ok(());
        };
        let capture = slot.stderr_capture.as_mut();
        if let Some(f) = capture {
            let _ = f.set_len(0);
            let _ = f.seek(SeekFrom::Start(0));
        }
        let o = ex.run(slot.stderr_capture.as_ref(), slot.output_file.as_ref())?;
        self.hook_wall_ns += o.wall_ns;
        if !o.success() && !o.interrupted {
            return Err(MeasureError::HookFailed {
                hook: HOOK_NAMES[which],
                command: ex.display().to_string(),
                how: format!(
                    "(for '{}') {}",
                    self.results.benchmarks[b].name,
                    o.describe()
                ),
                stderr: stderr_excerpt(slot.stderr_capture.as_mut()),
            });
        }
        Ok(())
    }

    fn execute(&mut self, b: usize, round: u64, warmup: WarmupMode) -> Result<(), MeasureError> {
        self.hook(b, PREPARE)?;
        let slot = &mut self.slots[b];
        let first = slot.executions == 0;
        if first && let Some(f) = slot.stderr_capture.as_mut() {
            let _ = f.set_len(0);
            let _ = f.seek(SeekFrom::Start(0));
        }
        let capture = if first {
            slot.stderr_capture.as_ref()
        } else {
            None
        };
        let o = slot.executor.run(capture, slot.output_file.as_ref())?;
        self.run_wall_ns += o.wall_ns;
        if o.interrupted {
            // Killed by our own forwarding of Ctrl-C: not a real sample.
            return Ok(());
        }
        self.hook(b, CONCLUDE)?;
        let slot = &mut self.slots[b];
        let is_warmup = match warmup {
            WarmupMode::Yes => true,
            WarmupMode::No => false,
            WarmupMode::Auto => !o.timed_out && o.wall_ns <= AUTO_WARMUP_LIMIT.as_nanos() as u64,
        };
        let failed = !o.success();
        let mut counts = match &self.cfg.budget.counter {
            Some(Counter::Pmu(_)) if !failed => Some(crate::model::Counts {
                backend: "pmu".into(),
                instructions: o.instructions,
                cycles: o.cycles,
                ..Default::default()
            }),
            _ => None,
        };
        if slot.counting.is_some() && !is_warmup && !failed {
            counts = self.count(b)?;
        }
        let slot = &mut self.slots[b];
        let run = Run {
            round,
            seq: self.seq,
            warmup: is_warmup,
            started_at_ns: o.started_at_ns,
            wall_ns: o.wall_ns,
            net_wall_ns: o.wall_ns.saturating_sub(slot.correction_ns),
            user_ns: o.user_ns,
            sys_ns: o.sys_ns,
            max_rss_kib: o.max_rss_kib,
            voluntary_cs: o.voluntary_cs,
            involuntary_cs: o.involuntary_cs,
            exit_code: o.exit_code,
            signal: o.signal,
            timed_out: o.timed_out,
            failed,
            stragglers: slot.executor.take_stragglers(),
            counts,
        };
        self.seq += 1;
        slot.executions += 1;
        if !is_warmup {
            slot.measured += 1;
            if run.counted(self.cfg.record.include_failures_in_stats) {
                slot.counted.push(crate::model::ns_to_s(run.net_wall_ns));
                if let Some(v) = run.count(self.cfg.budget.primary()) {
                    slot.primary.push(v);
                }
            }
        }
        self.results.benchmarks[b].runs.push(run);
        if failed && !o.timed_out && !self.cfg.accept.tolerates(&o) {
            let stderr = if first {
                stderr_excerpt(slot.stderr_capture.as_mut())
            } else {
                String::new()
            };
            let hint = if stderr.is_empty() && !first {
                "; rerun with --show-output to see its output".to_string()
            } else {
                stderr
            };
            return Err(MeasureError::CommandFailed {
                command: self.results.benchmarks[b].name.clone(),
                how: o.describe(),
                run: slot.executions,
                stderr: hint,
            });
        }
        Ok(())
    }
}

impl Session<'_> {
    /// Benchmark `b`'s counted run under cachegrind, between its own
    /// prepare and conclude hooks; a failure here is the command's failure.
    fn count(&mut self, b: usize) -> Result<Option<crate::model::Counts>, MeasureError> {
        self.hook(b, PREPARE)?;
        let slot = &mut self.slots[b];
        let Some(counting) = slot.counting.as_mut() else {
            return Ok(None);
        };
        let (o, counts) = counting.run(None, slot.output_file.as_ref())?;
        let _ = counting.take_stragglers();
        self.run_wall_ns += o.wall_ns;
        if o.interrupted {
            return Ok(None);
        }
        self.hook(b, CONCLUDE)?;
        if !o.success() {
            return Err(MeasureError::CommandFailed {
                command: self.results.benchmarks[b].name.clone(),
                how: format!("{} under cachegrind (valgrind)", o.describe()),
                run: self.slots[b].executions + 1,
                stderr: "; it succeeded without valgrind: run it under `valgrind --tool=cachegrind --trace-children=yes` to see why"
                    .into(),
            });
        }
        Ok(counts)
    }
}

#[derive(Clone, Copy)]
enum WarmupMode {
    Yes,
    No,
    /// Warm-up if the run took at most a second, else a measured run.
    Auto,
}
