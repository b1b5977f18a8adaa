//! `tardy explain`: record where a command's wall time goes (syscalls that
//! sleep, wait, create processes or sync; CPU and run-queue delay per
//! thread), and compare two commands, two conditions or two saved traces.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use indicatif::ProgressBar;

use super::{EXIT_INTERRUPTED, fail};
use tardy::diagnose::explain::session::{self, Spec};
use tardy::diagnose::explain::{self, Trace};
use tardy::measure::command::{self, CommandLine};
use tardy::measure::interrupt;
use tardy::model::Exec;
use tardy::record::RecordOptions;
use tardy::render::{self, style::Style};

/// `tardy explain --help`'s description (on the subcommand, where clap reads it).
pub const LONG_ABOUT: &str = "Runs a command and records its whole process tree: from the kernel's own \
scheduler events when allowed (perf_event_open on a cgroup made for the command; the command is \
never stopped), else with ptrace and a seccomp filter (only the syscalls that sleep, wait, start \
processes or sync stop). Its wall time is attributed along the critical path to CPU, waiting \
for a CPU, timed sleeps, lock and event waits, process creation, fsync, block I/O and \"other\", \
summing to the wall time; with kernel events each thread's call stack is also sampled (about \
1,000 times a CPU-second), so the output names the functions the CPU went to. Given two \
commands, one command under two conditions, or two saved traces, it interleaves A and B, ranks \
what changed by its share of the difference, and ranks functions by their share of the CPU \
difference.";

#[derive(Args)]
#[command(
    about = "Where a command's time went, and why run B is slower than run A",
    after_help = "Examples:
  tardy explain -- python3 -c 'import time; [time.sleep(0.001) for _ in range(100)]'
  tardy explain 'sleep 0.1' 'sleep 0.2'
  tardy explain --prefix-b 'tardy exec --timer-slack 15600000 --' \\
      -- python3 -c 'import time; [time.sleep(0.001) for _ in range(100)]'
  tardy explain --condition-b OMP_NUM_THREADS=1 -- ./bench
  tardy explain --save a.json -- ./suite     (then on the other machine or version: --save b.json)
  tardy explain a.json b.json
  tardy explain --export-pprof-b b.pb.gz './bench v1' './bench v2'   (go tool pprof -top b.pb.gz)
  tardy explain --json 'sh -c \"true; true\"'"
)]
pub struct ExplainArgs {
    /// One or two command strings (run with `sh -c` when they use shell syntax) or
    /// saved traces (`--save` files).
    #[arg(value_name = "COMMAND|TRACE")]
    inputs: Vec<String>,
    /// The command and its arguments, run directly (after --).
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    argv: Vec<String>,
    /// Runs of each command (interleaved A, B, A, B...).
    #[arg(short, long, default_value_t = 3)]
    runs: u64,
    /// Unrecorded runs of each command first, to warm caches (a first run
    /// that compiles bytecode or reads a cold disk is not the program's usual cost).
    #[arg(short, long, default_value_t = 1)]
    warmup: u64,
    /// Compare the command with itself under an environment change (KEY=VALUE, repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    condition_b: Vec<String>,
    /// Compare the command with itself run through a wrapper, e.g. 'tardy exec --timer-slack 15600000 --'.
    #[arg(long, value_name = "CMD")]
    prefix_b: Option<String>,
    /// Save the (first) set of runs as a trace file.
    #[arg(long, value_name = "FILE")]
    save: Option<PathBuf>,
    /// Save B's runs as a trace file.
    #[arg(long, value_name = "FILE")]
    save_b: Option<PathBuf>,
    /// Print JSON (keys in docs/results-format.md).
    #[arg(long)]
    json: bool,
    /// Kill the command's process tree after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Without --timeout: how long to follow processes that outlive the command.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    straggler_wait: f64,
    /// Keep measuring when the command fails.
    #[arg(short = 'i', long)]
    ignore_failure: bool,
    /// Show the command's output (default: discarded).
    #[arg(long)]
    show_output: bool,
    /// Do not trace: explain from wall time, rusage and schedstat only.
    #[arg(long)]
    no_trace: bool,
    /// Which recorder: the kernel's scheduler events (perf_event_open: root,
    /// CAP_PERFMON or perf_event_paranoid <= 1; never stops the command),
    /// ptrace with a seccomp filter (the fallback), or auto (kernel events
    /// when allowed).
    #[arg(long, value_enum, default_value_t = RecorderArg::Auto)]
    recorder: RecorderArg,
    /// Also run the command untraced, interleaved, and report the measured overhead.
    #[arg(long)]
    overhead_check: bool,
    /// Accepted for scripts and ignored: tardy never changes kernel.task_delayacct (it did,
    /// for the whole machine, during ptrace runs).
    #[arg(long, hide = true)]
    no_delayacct: bool,
    /// Run command strings directly, never through a shell.
    #[arg(short = 'N', long)]
    no_shell: bool,
    /// Working directory of the command.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// How many processes and programs to list (functions: at least 10).
    #[arg(long, default_value_t = 5)]
    top: usize,
    /// Sample each thread's call stack this many times a second of CPU
    /// (software cpu-clock; the kernel-event recorder only). 0: no profile.
    #[arg(long, value_name = "HZ", default_value_t = tardy::profile::DEFAULT_HZ)]
    profile_hz: u64,
    /// Write the (first) side's sampled stacks as collapsed stacks
    /// ("a;b;c MICROSECONDS" per line: flamegraph.pl, inferno, speedscope).
    #[arg(long, value_name = "FILE")]
    export_folded: Option<PathBuf>,
    /// Write B's sampled stacks as collapsed stacks.
    #[arg(long, value_name = "FILE")]
    export_folded_b: Option<PathBuf>,
    /// Write the (first) side's sampled stacks as a gzip'd pprof profile
    /// (go tool pprof -top FILE; -diff_base A.pb.gz B.pb.gz).
    #[arg(long, value_name = "FILE")]
    export_pprof: Option<PathBuf>,
    /// Write B's sampled stacks as a gzip'd pprof profile.
    #[arg(long, value_name = "FILE")]
    export_pprof_b: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RecorderArg {
    Auto,
    Kernel,
    Ptrace,
}

/// One side of the comparison: a command to run, or a saved trace.
enum Side {
    Run(Spec),
    Saved(Box<Trace>),
}

fn looks_like_trace(s: &str) -> bool {
    let p = Path::new(s);
    if !p.is_file() {
        return false;
    }
    // A .json file, or a file that is not executable, is read as a trace
    // (and refused as "not a tardy trace" when it is not one).
    use std::os::unix::fs::PermissionsExt;
    let executable = std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if p.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        || !executable
    {
        return true;
    }
    let mut head = [0u8; 64];
    let n = std::fs::File::open(p)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    head[..n]
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{')
}

/// Read a saved trace: bounded size, versioned, validated.
pub fn read_trace(path: &Path) -> Result<Trace, String> {
    const MAX: u64 = 64 << 20;
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.len() > MAX {
        return Err(format!(
            "{}: {} bytes is more than a trace summary holds (limit 64 MiB)",
            path.display(),
            meta.len()
        ));
    }
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        format!(
            "{}:{}:{}: not a tardy trace: not JSON: {e}",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    let schema = v.get("schema").and_then(|s| s.as_str()).unwrap_or("");
    if schema != explain::SCHEMA {
        let hint = if schema == tardy::model::SCHEMA {
            " (this is a `tardy run` results file; `tardy compare` reads those)"
        } else {
            ""
        };
        return Err(format!(
            "{}: not a tardy trace: expected schema \"{}\", found {}{hint}",
            path.display(),
            explain::SCHEMA,
            if schema.is_empty() {
                "none".to_string()
            } else {
                format!("\"{schema}\"")
            }
        ));
    }
    if let Some(ver) = v.get("schema_version").and_then(|s| s.as_u64())
        && ver > explain::SCHEMA_VERSION as u64
    {
        return Err(format!(
            "{}: trace schema version {ver} is newer than this tardy reads ({}); upgrade tardy",
            path.display(),
            explain::SCHEMA_VERSION
        ));
    }
    let t: Trace = serde_json::from_value(v).map_err(|e| format!("{}: {e}", path.display()))?;
    t.validate()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(t)
}

fn env_pairs(list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("--condition-b takes KEY=VALUE, not '{kv}'"))
        })
        .collect()
}

fn to_exec(cmd: &str, no_shell: bool) -> Result<Exec, String> {
    Ok(
        match command::parse(cmd, no_shell).map_err(|e| e.to_string())? {
            CommandLine::Direct(argv) => Exec::Direct { argv },
            CommandLine::Shell(script) => Exec::Shell {
                shell: "sh".into(),
                script,
            },
        },
    )
}

fn run_side(display: &str, exec: &Exec, opts: &RecordOptions) -> Side {
    Side::Run(Spec {
        display: display.into(),
        exec: exec.clone(),
        options: opts.clone(),
    })
}

pub fn main(args: ExplainArgs) -> i32 {
    match explain_main(args) {
        Ok(code) => code,
        Err(e) => fail(e),
    }
}

fn explain_main(args: ExplainArgs) -> Result<i32, String> {
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if let Some(t) = args.timeout
        && !(t.is_finite() && t > 0.0)
    {
        return Err(format!(
            "--timeout must be a positive number of seconds, not {t}"
        ));
    }
    if !(args.straggler_wait.is_finite() && args.straggler_wait >= 0.0) {
        return Err("--straggler-wait must be a number of seconds".into());
    }
    let opts = RecordOptions {
        env: Vec::new(),
        cwd: args.cwd.clone(),
        timeout: args.timeout.map(Duration::from_secs_f64),
        straggler_wait: Duration::from_secs_f64(args.straggler_wait.min(86_400.0)),
        show_output: args.show_output,
        trace: !args.no_trace,
        profile_hz: args.profile_hz,
    };
    if args.profile_hz > 100_000 {
        return Err(format!(
            "--profile-hz {} is more than the kernel samples (at most 100000)",
            args.profile_hz
        ));
    }
    let conditioned = !args.condition_b.is_empty() || args.prefix_b.is_some();
    let mut sides: Vec<Side> = Vec::new();
    if !args.argv.is_empty() {
        if !args.inputs.is_empty() {
            return Err("give the command either as strings or after --, not both".into());
        }
        let display = command::join_quoted(&args.argv);
        sides.push(run_side(
            &display,
            &Exec::Direct {
                argv: args.argv.clone(),
            },
            &opts,
        ));
    } else {
        match args.inputs.len() {
            0 => {
                return Err(
                    "nothing to explain: give a command, e.g. tardy explain -- ./suite, or two saved traces"
                        .into(),
                );
            }
            2 if !args.inputs.iter().any(|i| looks_like_trace(i))
                && !args.inputs[1].contains(char::is_whitespace)
                && command::resolve_program(&args.inputs[1], args.cwd.as_deref()).is_err() =>
            {
                return Err(format!(
                    "'{}' is not a program: to explain one command with arguments, quote it (tardy explain '{} {}') or put it after -- (tardy explain -- {} {})",
                    args.inputs[1], args.inputs[0], args.inputs[1], args.inputs[0], args.inputs[1]
                ));
            }
            1 | 2 => {
                for input in &args.inputs {
                    if looks_like_trace(input) {
                        sides.push(Side::Saved(Box::new(read_trace(Path::new(input))?)));
                    } else {
                        let exec = to_exec(input, args.no_shell)?;
                        sides.push(run_side(input, &exec, &opts));
                    }
                }
            }
            n => {
                return Err(format!(
                    "tardy explain compares at most two commands or traces, not {n}"
                ));
            }
        }
    }
    if conditioned {
        if sides.len() != 1 {
            return Err(
                "--condition-b and --prefix-b compare one command with itself: give one command"
                    .into(),
            );
        }
        let base = match &sides[0] {
            Side::Run(spec) => spec.display.clone(),
            Side::Saved(_) => {
                return Err(
                    "--condition-b and --prefix-b need a command, not a saved trace".into(),
                );
            }
        };
        let cmd_b = match &args.prefix_b {
            Some(p) => format!("{p} {base}"),
            None => base.clone(),
        };
        let exec_b = if args.prefix_b.is_none() && !args.argv.is_empty() {
            Exec::Direct {
                argv: args.argv.clone(),
            }
        } else {
            to_exec(&cmd_b, args.no_shell)?
        };
        let mut opts_b = opts.clone();
        opts_b.env = env_pairs(&args.condition_b)?;
        let mut label = cmd_b.clone();
        for (k, v) in &opts_b.env {
            label = format!("{k}={v} {label}");
        }
        sides.push(run_side(&label, &exec_b, &opts_b));
    }

    interrupt::install();
    let specs: Vec<Spec> = sides
        .iter()
        .filter_map(|s| match s {
            Side::Run(spec) => Some(spec.clone()),
            Side::Saved(_) => None,
        })
        .collect();
    let bar = if std::io::stderr().is_terminal() && !specs.is_empty() {
        let b = ProgressBar::new(args.runs * specs.len() as u64);
        b.set_message("explain");
        b
    } else {
        ProgressBar::hidden()
    };
    let session_opts = session::Options {
        runs: args.runs,
        ignore_failure: args.ignore_failure,
        overhead_check: args.overhead_check,
        warmup: args.warmup,
        recorder: match args.recorder {
            RecorderArg::Auto => tardy::record::Choice::Auto,
            RecorderArg::Kernel => tardy::record::Choice::Kernel,
            RecorderArg::Ptrace => tardy::record::Choice::Ptrace,
        },
    };
    let mut recorded = if specs.is_empty() {
        session::Outcome {
            traces: Vec::new(),
            interrupted: false,
        }
    } else {
        session::record_set(&specs, &session_opts, &mut |ev| match ev {
            session::Event::Run { display } => {
                bar.set_message(display.chars().take(40).collect::<String>())
            }
            session::Event::Warmup { display } => bar.set_message(format!(
                "warm-up: {}",
                display.chars().take(32).collect::<String>()
            )),
            session::Event::Done => bar.inc(1),
        })
        .map_err(|e| match e {
            session::SessionError::Failed(m) => {
                format!("{m}; use --ignore-failure to explain failing runs")
            }
            e => e.to_string(),
        })?
    };
    bar.finish_and_clear();
    let interrupted = recorded.interrupted;
    let mut fresh = recorded.traces.drain(..);
    let mut traces: Vec<Trace> = Vec::new();
    for side in sides {
        match side {
            Side::Saved(t) => traces.push(*t),
            Side::Run(_) => traces.extend(fresh.next()),
        }
    }
    drop(fresh);
    for (path, t) in [(&args.save, traces.first()), (&args.save_b, traces.get(1))] {
        if let (Some(path), Some(t)) = (path, t) {
            let json = serde_json::to_string_pretty(t).map_err(|e| e.to_string())?;
            tardy::store::atomic::write_atomic(path, format!("{json}\n").as_bytes())
                .map_err(|e| format!("cannot save {}: {e}", path.display()))?;
        } else if path.is_some() && t.is_none() {
            return Err(
                "--save-b needs a B side (two commands or --condition-b/--prefix-b)".into(),
            );
        }
    }
    for (path, t, flag) in [
        (&args.export_folded, traces.first(), "--export-folded"),
        (&args.export_folded_b, traces.get(1), "--export-folded-b"),
        (&args.export_pprof, traces.first(), "--export-pprof"),
        (&args.export_pprof_b, traces.get(1), "--export-pprof-b"),
    ] {
        let Some(path) = path else { continue };
        let Some(t) = t else {
            return Err(format!(
                "{flag} needs a B side (two commands or --condition-b/--prefix-b)"
            ));
        };
        let Some(p) = &t.profile else {
            return Err(format!(
                "{flag}: '{}': {}",
                t.command,
                t.profile_note.clone().unwrap_or_else(|| {
                    "no CPU profile (recorded with --profile-hz 0, or by an older tardy)".into()
                })
            ));
        };
        let data = if flag.starts_with("--export-pprof") {
            render::pprof::gzipped(p).map_err(|e| e.to_string())?
        } else {
            render::folded::folded(p).into_bytes()
        };
        tardy::store::atomic::write_atomic(path, &data)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let style = Style {
        color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    };
    let out = match traces.as_slice() {
        [t] => {
            if args.json {
                serde_json::to_string_pretty(t).map_err(|e| e.to_string())? + "\n"
            } else {
                render::explain::single(t, style, args.top)
            }
        }
        [a, b] => {
            let c = explain::compare(a, b);
            if args.json {
                let v = render::explain::comparison_json(a, b, &c);
                serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"
            } else {
                render::explain::comparison(a, b, &c, style, args.top)
            }
        }
        _ => return Err("nothing to explain".into()),
    };
    print!("{out}");
    if interrupted {
        eprintln!("tardy: interrupted; explained the runs completed so far");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(0)
}
