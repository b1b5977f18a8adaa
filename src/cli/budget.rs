//! The options `tardy run` and `tardy ci` share: how many runs, when to stop,
//! and what each run is measured by (wall time, instructions).

use std::time::Duration;

use clap::Args;

use tardy::measure::counters::{self, BackendChoice, Metric};
use tardy::measure::session::Budget;

#[derive(Args, Clone, Debug)]
pub struct BudgetArgs {
    /// Exact number of measured runs per command (no adaptive stopping).
    #[arg(short = 'r', long, value_name = "N", help_heading = "Run count")]
    runs: Option<u64>,
    /// Fewest measured runs per command (default 10; 5 when the first --metric is a count).
    #[arg(short = 'm', long, value_name = "N", help_heading = "Run count")]
    min_runs: Option<u64>,
    /// Most measured runs per command.
    #[arg(short = 'M', long, value_name = "N", help_heading = "Run count")]
    max_runs: Option<u64>,
    /// Fewest seconds of measured time per command (wall time; counts need none).
    #[arg(
        long,
        default_value_t = 3.0,
        value_name = "SECS",
        help_heading = "Run count"
    )]
    min_time: f64,
    /// Stop adding runs after this many seconds of measuring (default: 6 s per command,
    /// about twice hyperfine's 3 s); never cuts below --min-runs.
    #[arg(long, value_name = "SECS", help_heading = "Run count")]
    max_time: Option<f64>,
    /// Target half-width of the mean's confidence interval: 1, 1% or 0.01.
    #[arg(
        long,
        default_value = "1",
        value_name = "AMOUNT",
        help_heading = "Run count"
    )]
    precision: String,
    /// Confidence level for intervals and verdicts: 95, 95% or 0.95.
    #[arg(
        long,
        default_value = "95",
        value_name = "PCT",
        help_heading = "Run count"
    )]
    confidence: String,
    /// Warm-up runs per command before measuring (default: 1, or 0 when a run takes over 1 s).
    #[arg(short = 'w', long, value_name = "N", help_heading = "Run count")]
    warmup: Option<u64>,
    /// What to measure: wall (default), cpu (user + system CPU time of the whole tree:
    /// waiting for a CPU on a busy machine does not count), user, sys, instructions,
    /// cycles, estimated-cycles; several may be given (comma-separated or repeated), the
    /// first deciding the verdict (a count also decides when to stop; CPU times stop on
    /// wall time's precision). Counts cover the command's whole process tree and do not move with load: on a
    /// hardware PMU (perf_event_open) at no cost, else under valgrind's cachegrind
    /// (20-50x slower runs, taken beside the timed ones; estimated-cycles always use it).
    #[arg(
        long,
        value_name = "METRIC",
        value_delimiter = ',',
        help_heading = "Metrics"
    )]
    metric: Vec<String>,
    /// Where counts come from: auto (the PMU when this machine has one, else
    /// cachegrind), pmu, or cachegrind.
    #[arg(
        long,
        value_name = "BACKEND",
        default_value = "auto",
        help_heading = "Metrics"
    )]
    counter: String,
    /// On a PMU, count kernel instructions too (user space only by default).
    #[arg(long, help_heading = "Metrics")]
    count_kernel: bool,
}

impl BudgetArgs {
    /// The budget these options ask for, checked: one clear line when not.
    pub fn resolve(&self) -> Result<Budget, String> {
        if self.runs == Some(0) {
            return Err("--runs must be at least 1".into());
        }
        let metrics = metrics(&self.metric)?;
        let choice: BackendChoice = self.counter.parse()?;
        let counter =
            counters::choose(&metrics, choice, self.count_kernel).map_err(|e| e.to_string())?;
        let min_runs = self
            .min_runs
            .unwrap_or(if metrics[0].is_count() { 5 } else { 10 })
            .max(1);
        if let Some(max) = self.max_runs
            && max < min_runs
            && self.runs.is_none()
        {
            return Err(format!("--max-runs {max} is below --min-runs {min_runs}"));
        }
        Ok(Budget {
            runs: self.runs,
            min_runs,
            max_runs: self.max_runs,
            min_time: seconds("min-time", Some(self.min_time))?.unwrap_or_default(),
            max_time: seconds("max-time", self.max_time)?,
            precision: super::percent("precision", &self.precision, true)?,
            confidence: super::confidence("confidence", &self.confidence)?,
            warmup: self.warmup,
            metrics,
            counter,
        })
    }
}

/// `--metric` values, in order, without repeats; wall when none.
fn metrics(given: &[String]) -> Result<Vec<Metric>, String> {
    let mut out: Vec<Metric> = Vec::new();
    for g in given.iter().filter(|g| !g.trim().is_empty()) {
        let m = Metric::parse(g).map_err(|e| format!("--metric: {e}"))?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    if out.is_empty() {
        out.push(Metric::Wall);
    }
    Ok(out)
}

/// A non-negative number of seconds, or none.
pub fn seconds(name: &str, v: Option<f64>) -> Result<Option<Duration>, String> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && (0.0..1e9).contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(format!(
            "--{name} must be a non-negative number of seconds, not {s}"
        )),
    }
}
