//! What `tardy run` measures, from plain options ([`RunSpec`]): commands as
//! strings (run directly, or through a shell when they need one) or one
//! program's argv, the parameter grid, per-command hooks, names and
//! outputs, the reference first, and how to run and when to stop
//! ([`SessionConfig`]). The CLI maps its flags to a `RunSpec`; a test or the
//! server can build one as well.

use std::path::PathBuf;
use std::time::Duration;

use super::MeasureError;
use super::command::{self, CommandLine};
use super::counters::{self, BackendChoice, Metric};
use super::plan::{self, Parameter};
use super::session::{Accept, BenchmarkSpec, Budget, SessionConfig};
use super::spawn::{ExecOptions, OutputMode};
use crate::fmt::amount::{confidence, percent};
use crate::model::Exec;
use crate::stats::rng::fresh_seed;

/// `tardy run`'s options, as plain values (the flags of the same names).
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Commands as strings.
    pub commands: Vec<String>,
    /// Or one program and its arguments (after `--`).
    pub argv: Vec<String>,
    /// The shell for commands that need one ("none": never one).
    pub shell: Option<String>,
    pub no_shell: bool,
    /// -P VAR MIN MAX, flattened.
    pub parameter_scan: Vec<String>,
    pub parameter_step_size: Option<String>,
    /// -L VAR VALUES, flattened.
    pub parameter_list: Vec<String>,
    pub names: Vec<String>,
    pub show_output: bool,
    pub output: Vec<String>,
    pub setup: Vec<String>,
    pub prepare: Vec<String>,
    pub conclude: Vec<String>,
    pub cleanup: Vec<String>,
    pub reference: Option<String>,
    /// KEY=VALUE.
    pub env: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub input: Option<PathBuf>,
    pub ignore_failure: Option<String>,
    pub include_failures: bool,
    pub exclude_failures: bool,
    pub budget: Budget,
    pub timeout: Option<Duration>,
    pub seed: Option<u64>,
    pub sequential: bool,
    pub keep_stragglers: bool,
}

impl RunSpec {
    /// No command yet, measured within `budget`; everything else as `tardy
    /// run` does without flags (a shell for commands that need one).
    pub fn new(budget: Budget) -> RunSpec {
        RunSpec {
            commands: Vec::new(),
            argv: Vec::new(),
            shell: None,
            no_shell: false,
            parameter_scan: Vec::new(),
            parameter_step_size: None,
            parameter_list: Vec::new(),
            names: Vec::new(),
            show_output: false,
            output: Vec::new(),
            setup: Vec::new(),
            prepare: Vec::new(),
            conclude: Vec::new(),
            cleanup: Vec::new(),
            reference: None,
            env: Vec::new(),
            cwd: None,
            input: None,
            ignore_failure: None,
            include_failures: false,
            exclude_failures: false,
            budget,
            timeout: None,
            seed: None,
            sequential: false,
            keep_stragglers: false,
        }
    }
}

/// The i-th of a per-command option given once (for all) or once per command.
fn pick<'a>(
    list: &'a [String],
    i: usize,
    n: usize,
    name: &str,
) -> Result<Option<&'a String>, MeasureError> {
    match list.len() {
        0 => Ok(None),
        1 => Ok(list.first()),
        len if len == n => Ok(list.get(i)),
        len => Err(MeasureError::Option(format!(
            "--{name} was given {len} times for {n} commands: give it once, or once per command"
        ))),
    }
}

/// The session `tardy run` measures: its commands (strings, or one program's
/// argv), their parameters, hooks and names, and how to run and stop.
pub fn session_config(args: &RunSpec) -> Result<SessionConfig, MeasureError> {
    if !args.commands.is_empty() && !args.argv.is_empty() {
        return Err(MeasureError::Option(
            "give commands as strings or one program after `--`, not both".into(),
        ));
    }
    if args.commands.is_empty() && args.argv.is_empty() {
        return Err(MeasureError::Option(
            "nothing to measure: give a command, e.g. tardy run 'sleep 0.1'".into(),
        ));
    }
    let shell = match args.shell.as_deref() {
        Some("none") => None,
        Some("") => return Err(MeasureError::Option("--shell needs a shell name".into())),
        Some(s) => Some(s.to_string()),
        None => Some("sh".to_string()),
    };
    let force_direct = args.no_shell || shell.is_none();
    let shell_name = shell.unwrap_or_else(|| "sh".into());
    let to_exec = |cmd: &str| -> Result<Exec, MeasureError> {
        Ok(match command::parse(cmd, force_direct)? {
            CommandLine::Direct(argv) => Exec::Direct { argv },
            CommandLine::Shell(script) => Exec::Shell {
                shell: shell_name.clone(),
                script,
            },
        })
    };

    let mut params: Vec<Parameter> = Vec::new();
    for chunk in args.parameter_scan.chunks(3) {
        if let [var, min, max] = chunk {
            params.push(plan::scan(
                var,
                min,
                max,
                args.parameter_step_size.as_deref(),
            )?);
        }
    }
    if args.parameter_step_size.is_some() && args.parameter_scan.is_empty() {
        return Err(MeasureError::Option(
            "-D/--parameter-step-size needs -P/--parameter-scan".into(),
        ));
    }
    for chunk in args.parameter_list.chunks(2) {
        if let [var, values] = chunk {
            params.push(plan::list(var, values)?);
        }
    }
    let combos = plan::combinations(&params)?;

    let sources: Vec<String> = if args.argv.is_empty() {
        args.commands.clone()
    } else {
        vec![command::join_quoted(&args.argv)]
    };
    let n = sources.len();
    if !args.names.is_empty() && args.names.len() != n {
        return Err(MeasureError::Option(format!(
            "{} names for {n} commands: give one --name per command",
            args.names.len()
        )));
    }
    let outputs: Vec<String> = if args.show_output {
        vec!["inherit".into()]
    } else {
        args.output.clone()
    };
    let mut benchmarks = Vec::new();
    for (i, source) in sources.iter().enumerate() {
        let output: OutputMode = match pick(&outputs, i, n, "output")? {
            Some(s) => s.parse().map_err(MeasureError::Option)?,
            None => OutputMode::Null,
        };
        for combo in &combos {
            let command = plan::substitute(source, combo);
            let exec = if args.argv.is_empty() {
                to_exec(&command)?
            } else {
                Exec::Direct {
                    argv: args
                        .argv
                        .iter()
                        .map(|w| plan::substitute(w, combo))
                        .collect(),
                }
            };
            if let Exec::Direct { argv } = &exec {
                command::resolve_program(&argv[0], args.cwd.as_deref())?;
            }
            let hook = |list: &[String], name: &str| -> Result<Option<Exec>, MeasureError> {
                pick(list, i, n, name)?
                    .map(|h| to_exec(&plan::substitute(h, combo)))
                    .transpose()
            };
            let name = match args.names.get(i) {
                Some(name) => plan::substitute(name, combo),
                None => command.clone(),
            };
            benchmarks.push(BenchmarkSpec {
                name,
                command,
                exec,
                parameters: combo.clone(),
                setup: hook(&args.setup, "setup")?,
                prepare: hook(&args.prepare, "prepare")?,
                conclude: hook(&args.conclude, "conclude")?,
                cleanup: hook(&args.cleanup, "cleanup")?,
                output: output.clone(),
                cwd: None,
            });
        }
    }
    if let Some(r) = &args.reference {
        let at = benchmarks
            .iter()
            .position(|b| b.name == *r || b.command == *r)
            .or_else(|| {
                r.parse::<usize>()
                    .ok()
                    .filter(|&k| (1..=benchmarks.len()).contains(&k))
                    .map(|k| k - 1)
            });
        match at {
            Some(k) => {
                let b = benchmarks.remove(k);
                benchmarks.insert(0, b);
            }
            None => {
                let exec = to_exec(r)?;
                if let Exec::Direct { argv } = &exec {
                    command::resolve_program(&argv[0], args.cwd.as_deref())?;
                }
                // A hook given once applies to the reference too.
                let shared = |list: &[String]| match list {
                    [one] => to_exec(one).map(Some),
                    _ => Ok(None),
                };
                benchmarks.insert(
                    0,
                    BenchmarkSpec {
                        name: r.clone(),
                        command: r.clone(),
                        exec,
                        parameters: Default::default(),
                        setup: shared(&args.setup)?,
                        prepare: shared(&args.prepare)?,
                        conclude: shared(&args.conclude)?,
                        cleanup: shared(&args.cleanup)?,
                        output: OutputMode::Null,
                        cwd: None,
                    },
                );
            }
        }
    }

    let mut env = Vec::new();
    for kv in &args.env {
        match kv.split_once('=') {
            Some((k, v)) if !k.is_empty() => env.push((k.to_string(), v.to_string())),
            _ => {
                return Err(MeasureError::Option(format!(
                    "--env takes KEY=VALUE, not '{kv}'"
                )));
            }
        }
    }
    if let Some(dir) = &args.cwd
        && !dir.is_dir()
    {
        return Err(MeasureError::Option(format!(
            "--cwd '{}' is not a directory",
            dir.display()
        )));
    }
    if let Some(input) = &args.input {
        std::fs::File::open(input).map_err(|source| MeasureError::Open {
            what: "input file",
            path: input.clone(),
            source,
        })?;
    }
    let accept = match args.ignore_failure.as_deref() {
        None => Accept::OnlyZero,
        Some("all-non-zero") | Some("all") => Accept::AllNonZero,
        Some(list) => Accept::Codes(
            list.split(',')
                .map(|c| {
                    c.trim().parse::<i32>().map_err(|_| {
                        MeasureError::Option(format!(
                            "--ignore-failure takes exit codes like 1,2 or all-non-zero, not '{list}'"
                        ))
                    })
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    if (args.include_failures || args.exclude_failures) && args.ignore_failure.is_none() {
        return Err(MeasureError::Option(
            "--include-failures and --exclude-failures need --ignore-failure".into(),
        ));
    }
    let budget = args.budget.clone();
    let timeout = args.timeout;
    if timeout == Some(Duration::ZERO) {
        return Err(MeasureError::Option("--timeout must be above 0".into()));
    }
    let seed = args.seed.unwrap_or_else(fresh_seed);
    let interleaved = !args.sequential;
    let mut record = budget.record(seed, interleaved);
    record.timeout_s = timeout.map(|d| d.as_secs_f64());
    record.ignore_failure = args.ignore_failure.clone();
    record.include_failures_in_stats = args.ignore_failure.is_some() && !args.exclude_failures;
    record.env = args.env.clone();
    record.cwd = args.cwd.as_ref().map(|p| p.display().to_string());
    record.input = args.input.as_ref().map(|p| p.display().to_string());
    Ok(SessionConfig {
        benchmarks,
        exec: ExecOptions {
            env,
            cwd: args.cwd.clone(),
            input: args.input.clone(),
            timeout,
            keep_stragglers: args.keep_stragglers,
            pmu: None,
        },
        budget,
        seed,
        interleaved,
        accept,
        record,
    })
}

/// How many runs and what each measures, as `tardy run`'s and `tardy ci`'s
/// flags say it (amounts as typed: "1%", "95").
#[derive(Debug, Clone, Default)]
pub struct BudgetFlags {
    pub runs: Option<u64>,
    pub min_runs: Option<u64>,
    pub max_runs: Option<u64>,
    pub min_time: f64,
    pub max_time: Option<f64>,
    pub precision: String,
    pub confidence: String,
    pub warmup: Option<u64>,
    /// `--metric` values as given (comma-separated lists split).
    pub metric: Vec<String>,
    /// auto, pmu or cachegrind.
    pub counter: String,
    pub count_kernel: bool,
}

/// The budget `f` asks for, checked: one clear line when not.
pub fn budget(f: &BudgetFlags) -> Result<Budget, String> {
    if f.runs == Some(0) {
        return Err("--runs must be at least 1".into());
    }
    // `--metric` values, in order, without repeats; wall when none.
    let mut metrics: Vec<Metric> = Vec::new();
    for g in f.metric.iter().filter(|g| !g.trim().is_empty()) {
        let m = Metric::parse(g).map_err(|e| format!("--metric: {e}"))?;
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    if metrics.is_empty() {
        metrics.push(Metric::Wall);
    }
    let choice: BackendChoice = f.counter.parse()?;
    let counter = counters::choose(&metrics, choice, f.count_kernel).map_err(|e| e.to_string())?;
    let fewest = if metrics[0].is_count() { 5 } else { 10 };
    let min_runs = f.min_runs.unwrap_or(fewest).max(1);
    if let Some(max) = f.max_runs
        && max < min_runs
        && f.runs.is_none()
    {
        return Err(format!("--max-runs {max} is below --min-runs {min_runs}"));
    }
    Ok(Budget {
        runs: f.runs,
        min_runs,
        max_runs: f.max_runs,
        min_time: seconds("min-time", Some(f.min_time))?.unwrap_or_default(),
        max_time: seconds("max-time", f.max_time)?,
        precision: percent("precision", &f.precision, true)?,
        confidence: confidence("confidence", &f.confidence)?,
        warmup: f.warmup,
        metrics,
        counter,
    })
}

/// A non-negative number of seconds given as `--NAME`, or none.
pub fn seconds(name: &str, v: Option<f64>) -> Result<Option<Duration>, String> {
    match v {
        None => Ok(None),
        Some(s) if s.is_finite() && (0.0..1e9).contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        Some(s) => Err(format!(
            "--{name} must be a non-negative number of seconds, not {s}"
        )),
    }
}
