//! `tardy explain`: record where a command's wall time goes (syscalls that
//! sleep, wait, create processes or sync; CPU and run-queue delay per
//! thread), and compare two commands, two conditions or two saved traces.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;
use indicatif::ProgressBar;

use super::EXIT_INTERRUPTED;
use tardy::diagnose::explain::job;
use tardy::diagnose::explain::session;
use tardy::jobs::explain::Files;
use tardy::measure::interrupt;
use tardy::record::RecordOptions;
use tardy::render::{self};

/// `tardy explain --help`'s description (on the subcommand, where clap reads it).
pub const LONG_ABOUT: &str = include_str!("../../docs/help/explain.about.txt");

#[derive(Args)]
#[command(
    after_help = include_str!("../../docs/help/explain.examples.txt")
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
    /// A shell command run before every run, neither timed nor traced
    /// (e.g. 'sync; echo 3 > /proc/sys/vm/drop_caches' for cold-cache runs).
    #[arg(long, value_name = "CMD")]
    prepare: Option<String>,
    /// Compare the command with itself under an environment change (KEY=VALUE, repeatable).
    #[arg(long, value_name = "KEY=VALUE")]
    condition_b: Vec<String>,
    /// Compare the command with itself run through a wrapper, e.g. 'tardy exec --timer-slack 15600000 --'.
    #[arg(long, value_name = "CMD")]
    prefix_b: Option<String>,
    /// Record a program that is already running (a test runner's worker, a
    /// server under load): its process tree, each thread it has and every
    /// one it starts, for --duration seconds or until Ctrl-C or its exit.
    /// The program is left as it was. Kernel-event recorder only.
    #[arg(long, value_name = "PID", conflicts_with_all = ["inputs", "argv", "condition_b", "prefix_b", "save_b"])]
    pid: Option<i32>,
    /// How long --pid records (default: until Ctrl-C or the program's exit).
    #[arg(long, value_name = "SECS", requires = "pid")]
    duration: Option<f64>,
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
    /// Write the (first) side's timeline (its run of median wall time) as
    /// trace-event JSON for ui.perfetto.dev: a track per thread, waits,
    /// wake-up arrows and the critical path (kernel-event recorder).
    #[arg(long, value_name = "FILE")]
    export_trace: Option<PathBuf>,
    /// Write B's timeline as trace-event JSON.
    #[arg(long, value_name = "FILE")]
    export_trace_b: Option<PathBuf>,
    /// Write the explanation as one self-contained HTML page: the causes,
    /// both critical paths on one time axis, the flame graph, the waits.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum RecorderArg {
    Auto,
    Kernel,
    Ptrace,
}

/// The subcommand, run; its exit code.
pub fn run(args: ExplainArgs) -> Result<i32, String> {
    let opts = record_options(&args)?;
    let req = job::Request {
        inputs: args.inputs.clone(),
        argv: args.argv.clone(),
        no_shell: args.no_shell,
        cwd: args.cwd.clone(),
        condition_b: args.condition_b.clone(),
        prefix_b: args.prefix_b.clone(),
        pid: args.pid,
        duration: job::duration(args.duration)?,
    };
    let sides = job::sides(&req, &opts)?;
    interrupt::install();
    if let Some(pid) = args.pid.filter(|_| std::io::stderr().is_terminal()) {
        eprintln!("tardy: recording pid {pid}: Ctrl-C stops it");
    }
    let commands = sides
        .iter()
        .filter(|s| matches!(s, job::Side::Run(_)))
        .count();
    let bar = if std::io::stderr().is_terminal() && commands > 0 {
        let b = ProgressBar::new(args.runs * commands as u64);
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
        prepare: args.prepare.clone(),
        recorder: match args.recorder {
            RecorderArg::Auto => tardy::record::Choice::Auto,
            RecorderArg::Kernel => tardy::record::Choice::Kernel,
            RecorderArg::Ptrace => tardy::record::Choice::Ptrace,
        },
    };
    let done = job::explain(sides, &session_opts, &mut |ev| match ev {
        session::Event::Run { display } => {
            bar.set_message(display.chars().take(40).collect::<String>())
        }
        session::Event::Warmup { display } => bar.set_message(format!(
            "warm-up: {}",
            display.chars().take(32).collect::<String>()
        )),
        session::Event::Done => bar.inc(1),
    });
    bar.finish_and_clear();
    let done = done?;
    tardy::jobs::explain::write(&files(&args), &done)?;
    print!("{}", text(&args, &done)?);
    if done.interrupted {
        eprintln!("tardy: interrupted; explained the runs completed so far");
        return Ok(EXIT_INTERRUPTED);
    }
    Ok(0)
}

/// How each run is recorded, from the flags (checked).
fn record_options(a: &ExplainArgs) -> Result<RecordOptions, String> {
    if a.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(RecordOptions {
        cwd: a.cwd.clone(),
        show_output: a.show_output,
        trace: !a.no_trace,
        log_events: files(a).need_timeline(),
        ..RecordOptions::checked(a.timeout, a.straggler_wait, a.profile_hz)?
    })
}

/// The files asked for.
fn files(a: &ExplainArgs) -> Files {
    Files {
        save: [a.save.clone(), a.save_b.clone()],
        trace: [a.export_trace.clone(), a.export_trace_b.clone()],
        folded: [a.export_folded.clone(), a.export_folded_b.clone()],
        pprof: [a.export_pprof.clone(), a.export_pprof_b.clone()],
        html: a.html.clone(),
    }
}

/// The explanation as text or JSON.
fn text(args: &ExplainArgs, done: &job::Explained) -> Result<String, String> {
    let style = super::style();
    Ok(match (done.traces.as_slice(), &done.comparison) {
        ([t], _) if args.json => super::json(t),
        ([t], _) => render::explain::single(t, style, args.top),
        ([a, b], Some(c)) if args.json => super::json(&render::explain::comparison_json(a, b, c)),
        ([a, b], Some(c)) => render::explain::comparison(a, b, c, style, args.top),
        _ => return Err("nothing to explain".into()),
    })
}
