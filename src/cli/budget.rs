//! The options `tardy run` and `tardy ci` share: how many runs, when to stop,
//! and what each run is measured by (wall time, instructions).

use clap::Args;

use tardy::measure::session::Budget;
use tardy::measure::spec::{self, BudgetFlags};

#[derive(Args, Clone, Debug)]
pub struct BudgetArgs {
    #[command(flatten, next_help_heading = "Run count")]
    count: CountArgs,
    #[command(flatten, next_help_heading = "Metrics")]
    metrics: MetricArgs,
}

#[derive(Args, Clone, Debug)]
struct CountArgs {
    /// Exact number of measured runs per command (no adaptive stopping).
    #[arg(short = 'r', long, value_name = "N")]
    runs: Option<u64>,
    /// Fewest measured runs per command (default 10; 5 when the first --metric is a count).
    #[arg(short = 'm', long, value_name = "N")]
    min_runs: Option<u64>,
    /// Most measured runs per command.
    #[arg(short = 'M', long, value_name = "N")]
    max_runs: Option<u64>,
    /// Fewest seconds of measured time per command (wall time; counts need none).
    #[arg(long, default_value_t = 3.0, value_name = "SECS")]
    min_time: f64,
    /// Stop adding runs after this many seconds of measuring (default: 6 s per command,
    /// about twice hyperfine's 3 s); never cuts below --min-runs.
    #[arg(long, value_name = "SECS")]
    max_time: Option<f64>,
    /// Target half-width of the mean's confidence interval: 1, 1% or 0.01.
    #[arg(long, default_value = "1", value_name = "AMOUNT")]
    precision: String,
    /// Confidence level for intervals and verdicts: 95, 95% or 0.95.
    #[arg(long, default_value = "95", value_name = "PCT")]
    confidence: String,
    /// Warm-up runs per command before measuring (default: 1, or 0 when a run takes over 1 s).
    #[arg(short = 'w', long, value_name = "N")]
    warmup: Option<u64>,
}

#[derive(Args, Clone, Debug)]
struct MetricArgs {
    /// What to measure: wall (default), cpu (user + system CPU time of the whole tree:
    /// waiting for a CPU on a busy machine does not count), user, sys, instructions,
    /// cycles, estimated-cycles; several may be given (comma-separated or repeated), the
    /// first deciding the verdict (a count also decides when to stop; CPU times stop on
    /// wall time's precision). Counts cover the command's whole process tree and do not move with load: on a
    /// hardware PMU (perf_event_open) at no cost, else under valgrind's cachegrind
    /// (20-50x slower runs, taken beside the timed ones; estimated-cycles always use it).
    #[arg(long, value_name = "METRIC", value_delimiter = ',')]
    metric: Vec<String>,
    /// Where counts come from: auto (the PMU when this machine has one, else
    /// cachegrind), pmu, or cachegrind.
    #[arg(long, value_name = "BACKEND", default_value = "auto")]
    counter: String,
    /// On a PMU, count kernel instructions too (user space only by default).
    #[arg(long)]
    count_kernel: bool,
}

impl BudgetArgs {
    /// The budget these options ask for, checked: one clear line when not.
    pub fn resolve(&self) -> Result<Budget, String> {
        let (c, m) = (self.count.clone(), self.metrics.clone());
        spec::budget(&BudgetFlags {
            runs: c.runs,
            min_runs: c.min_runs,
            max_runs: c.max_runs,
            min_time: c.min_time,
            max_time: c.max_time,
            precision: c.precision,
            confidence: c.confidence,
            warmup: c.warmup,
            metric: m.metric,
            counter: m.counter,
            count_kernel: m.count_kernel,
        })
    }
}
