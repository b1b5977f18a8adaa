//! The command-line interface: argument parsing, turning library errors into
//! one clear line and an exit code. Each subcommand has a file of its own.

use clap::{Parser, Subcommand};

mod bisect;
mod compare;
mod doctor;
mod exec;
mod explain;
pub mod history;
mod ministat;
pub mod push;
mod report;
mod run;
mod serve;
mod tests;

/// Exit code for bad input, bad usage and failed measurements.
pub const EXIT_ERROR: i32 = 2;
/// Exit code after Ctrl-C (128 + SIGINT), once results are saved.
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(Parser)]
#[command(
    name = "tardy",
    version,
    about = "Is it slower? By how much, with what certainty, and why?",
    long_about = "tardy measures commands and test suites, tells whether they got slower, by how much \
and with what certainty, and explains what in the machine makes them slow.",
    after_help = "Examples:\n  tardy run 'sleep 0.01' 'sleep 0.012'\n  tardy run --runs 50 --export-json r.json -- ./build/app --input big.txt"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure one or more commands, interleaved, and compare them to the first.
    Run(Box<run::RunArgs>),
    /// Compare result sets: is the candidate slower, by how much, with what certainty?
    Compare(Box<compare::CompareArgs>),
    /// Read test reports: per-test durations, and what made a suite slower.
    Tests(tests::TestsArgs),
    /// Probe the machine: timers, clocks, spawn, PAUSE, frequency, fsync; --compare two.
    Doctor(Box<doctor::DoctorArgs>),
    /// Find the commit or version that made a command slower (or sensitive to a setting).
    Bisect(Box<bisect::BisectArgs>),
    /// Where a command's time went, and why run B is slower than run A.
    Explain(Box<explain::ExplainArgs>),
    /// Run a command with a different timer slack (Linux), e.g. to reproduce NUnit 3.4's Thread.Sleep(1) under Windows' 15.6 ms timer.
    Exec(exec::ExecArgs),
    /// The history of saved runs: change points over time, alerts, from an alert to a bisection.
    History(Box<history::HistoryArgs>),
    /// Write one self-contained HTML report: series over time, alerts, result sets.
    Report(Box<report::ReportArgs>),
    /// Serve the history to a team: ingest API for CI uploads and web pages.
    Serve(Box<serve::ServeArgs>),
    /// Upload results, test reports or points to a `tardy serve`.
    Push(Box<push::PushArgs>),
    /// Make tokens for `tardy serve --token-file`.
    Token(serve::TokenArgs),
}

/// Parse arguments, run, and return the process exit code.
pub fn main() -> i32 {
    // `tardy compare --ministat ...` and `tardy ministat ...` take ministat's own
    // arguments (getopt-style), so they bypass clap.
    let args: Vec<String> = std::env::args().collect();
    match (
        args.get(1).map(String::as_str),
        args.get(2).map(String::as_str),
    ) {
        (Some("compare"), Some("--ministat")) => return ministat::main(&args[3..]),
        (Some("ministat"), _) => return ministat::main(&args[2..]),
        _ => {}
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_ERROR } else { 0 };
        }
    };
    match cli.command {
        Command::Run(args) => run::main(*args),
        Command::Compare(args) => compare::main(*args),
        Command::Tests(args) => tests::main(args),
        Command::Doctor(args) => doctor::main(*args),
        Command::Bisect(args) => bisect::main(*args),
        Command::Exec(args) => exec::main(args),
        Command::Explain(args) => explain::main(*args),
        Command::History(args) => history::main(*args),
        Command::Report(args) => report::main(*args),
        Command::Serve(args) => serve::main(*args),
        Command::Push(args) => push::main(*args),
        Command::Token(args) => serve::token_main(args),
    }
}

/// A percentage option ("5", "5%") as a fraction. A `level` (confidence,
/// precision) lies strictly between 0 and 100; anything else is at least 0.
pub fn percent(name: &str, s: &str, level: bool) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| format!("--{name} takes a percentage, not '{s}'"))?;
    let ok = v.is_finite()
        && if level {
            v > 0.0 && v < 100.0
        } else {
            v >= 0.0
        };
    if !ok {
        let range = if level {
            "between 0 and 100 (exclusive)"
        } else {
            "at least 0"
        };
        return Err(format!("--{name} must be {range}, not {s}"));
    }
    Ok(v / 100.0)
}

/// Print `tardy: error: MESSAGE` and return the error exit code.
pub fn fail(message: impl std::fmt::Display) -> i32 {
    eprintln!("tardy: error: {message}");
    EXIT_ERROR
}
