//! The command-line interface: argument parsing, turning library errors into
//! one clear line and an exit code. Each subcommand has a file of its own.

use clap::{Parser, Subcommand};

mod bisect;
mod budget;
mod ci;
mod comment;
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
    after_help = include_str!("../../docs/help/tardy.examples.txt")
)]
pub(crate) struct Cli {
    /// Bytes (MiB) a compressed input may inflate to when tardy reads it
    /// (test reports, results); put it before the subcommand:
    /// `tardy --max-inflated-mib 4096 tests show big.xml.gz`.
    #[arg(long, value_name = "MIB", env = "TARDY_MAX_INFLATED_MIB", default_value_t = tardy::ingest::limits::CLI_INFLATED_MIB)]
    max_inflated_mib: u64,
    /// Test results one input may hold (a JUnit file of a million test cases
    /// reads with the default).
    #[arg(long, value_name = "N", env = "TARDY_MAX_RESULTS", default_value_t = tardy::ingest::limits::CLI_RESULTS)]
    max_results: u64,
    /// Test names (MiB, all told) one command may hold at once: `tests diff`
    /// keeps every name of both sides (a million tests named with 134 bytes
    /// on average read with the default).
    #[arg(long, value_name = "MIB", env = "TARDY_MAX_NAMES_MIB", default_value_t = tardy::ingest::limits::CLI_NAMES_MIB)]
    max_names_mib: u64,
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
    /// Measure a pull request against its merge base in one job: both built, interleaved, one verdict.
    Ci(Box<ci::CiArgs>),
    /// Post a pull request's tardy comment, or edit the one already there.
    Comment(comment::CommentArgs),
    /// Where a command's time went, and why run B is slower than run A.
    #[command(long_about = explain::LONG_ABOUT)]
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
    /// FreeBSD's ministat, byte for byte: its options, its table, its "No difference
    /// proven at 95.0% confidence" (also `tardy compare --ministat`).
    #[command(
        long_about = "FreeBSD's ministat, byte for byte: the same options (parsed as ministat parses them, so scripts keep working), the same plot, table and Student's t verdict. Each file holds one number per line (column -C, delimiters -d). `tardy compare` says more: the ratio with its interval, a test that suits the data, and how many runs a verdict would take.",
        override_usage = "tardy ministat [-C column] [-c confidence] [-d delimiter(s)] [-Ans] [-w width] [file [file ...]]",
        after_help = include_str!("../../docs/help/ministat.examples.txt")
    )]
    Ministat(MinistatArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        after_help = include_str!("../../docs/help/completions.examples.txt")
    )]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write man pages: tardy.1 and one per subcommand (tardy-run.1, ...).
    #[command(
        after_help = include_str!("../../docs/help/man.examples.txt")
    )]
    Man {
        /// Directory to write the pages into (created if missing).
        #[arg(long, value_name = "DIR", default_value = ".")]
        dir: std::path::PathBuf,
    },
}

/// `tardy ministat`'s arguments are read by ministat's own parser; this only
/// names them for `tardy help`.
#[derive(clap::Args)]
struct MinistatArgs {
    /// ministat's options and files (see below).
    #[arg(
        value_name = "ARGS",
        allow_hyphen_values = true,
        trailing_var_arg = true
    )]
    args: Vec<String>,
}

/// Parse arguments, run, and return the process exit code.
/// benchstat's single-dash flags (`-alpha 0.01`, `-filter Q`, `-col /impl`,
/// `-row`, `-ignore`, `-confidence`, `-format`) as `tardy compare` spells
/// them, so a benchstat command line works with `tardy compare` in front.
pub(crate) fn benchstat_flags(mut args: Vec<String>) -> Vec<String> {
    const FLAGS: &str = "alpha filter col row ignore confidence format";
    if args.get(1).map(String::as_str) != Some("compare") {
        return args;
    }
    for a in args.iter_mut().skip(2) {
        if a == "--" {
            break;
        }
        let Some(rest) = a.strip_prefix('-').filter(|r| !r.starts_with('-')) else {
            continue;
        };
        let name = rest.split_once('=').map_or(rest, |(n, _)| n);
        if FLAGS.split(' ').any(|f| f == name) {
            *a = format!("-{a}");
        }
    }
    args
}

/// `tardy compare --ministat ...` and `tardy ministat ...`: ministat's own
/// arguments, past clap; `None` for every other command line.
fn ministat_mode(args: &[String]) -> Option<i32> {
    match (
        args.get(1).map(String::as_str),
        args.get(2).map(String::as_str),
    ) {
        (Some("compare"), Some("--ministat")) | (Some("ministat"), _) => {
            let rest = &args[if args[1] == "ministat" { 2 } else { 3 }..];
            // ministat has no -h; `--help` gives tardy's description of it.
            if rest.first().is_some_and(|a| a == "--help" || a == "-h") {
                use clap::CommandFactory;
                let mut cmd = Cli::command();
                if let Some(m) = cmd.find_subcommand_mut("ministat") {
                    let _ = m.print_long_help();
                }
                return Some(0);
            }
            Some(ministat::main(rest))
        }
        _ => None,
    }
}

/// clap's error, with the tip for a program given where a subcommand goes.
fn parse_error(mut e: clap::Error, args: &[String]) -> i32 {
    // A program where a subcommand goes (`tardy sleep 0.1`): say how
    // to measure it first, not a subcommand that merely looks alike.
    use clap::CommandFactory;
    use tardy::render::usage::{program_on_path, run_tip, suggest};
    if let Some(tip) = run_tip(&e, args)
        && args
            .get(1)
            .is_some_and(|w| w.split_whitespace().next().is_some_and(program_on_path))
    {
        eprintln!(
            "error: '{}' is a program, not a tardy subcommand\n\n{tip}\n\nThe subcommands: tardy --help",
            args[1]
        );
        return EXIT_ERROR;
    }
    suggest(&mut e, &Cli::command(), args);
    let _ = e.print();
    if let Some(tip) = run_tip(&e, args) {
        eprintln!("\n{tip}");
    }
    if e.use_stderr() { EXIT_ERROR } else { 0 }
}

pub fn main() -> i32 {
    use clap::CommandFactory;
    let args: Vec<String> = std::env::args().collect();
    if let Some(code) = ministat_mode(&args) {
        return code;
    }
    let args = benchstat_flags(args);
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return parse_error(e, &args),
    };
    tardy::ingest::limits::set_default(
        tardy::ingest::limits::Limits::cli(cli.max_inflated_mib, cli.max_results)
            .with_names_mib(cli.max_names_mib),
    );
    match cli.command {
        Command::Run(args) => run::main(*args),
        Command::Compare(args) => exit(compare::run(*args)),
        Command::Tests(args) => exit(tests::run(args)),
        Command::Doctor(args) => exit(doctor::run(*args)),
        Command::Bisect(args) => bisect::main(*args),
        Command::Ci(args) => exit(ci::run(*args)),
        Command::Comment(args) => exit(comment::run(args)),
        Command::Exec(args) => exec::main(args),
        Command::Explain(args) => exit(explain::run(*args)),
        Command::History(args) => exit(history::run(*args)),
        Command::Report(args) => exit(report::run(*args)),
        Command::Serve(args) => exit(serve::run(*args)),
        Command::Push(args) => exit(push::run(*args)),
        Command::Token(args) => exit(serve::token(args)),
        // Reached only through `tardy help`-style parsing; run it as ministat would.
        Command::Ministat(m) => ministat::main(&m.args),
        Command::Completions { shell } => {
            let script = tardy::render::man::completions(shell, &mut Cli::command());
            match std::io::Write::write_all(&mut std::io::stdout(), &script) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    fail(format!("cannot write the completion script: {e}"))
                }
                _ => 0,
            }
        }
        Command::Man { dir } => match tardy::render::man::pages(&mut Cli::command(), &dir) {
            Ok(n) => {
                eprintln!("tardy: wrote {n} man pages to {}", dir.display());
                0
            }
            Err(e) => fail(e),
        },
    }
}

/// The width of the terminal stdout goes to: $COLUMNS when set, else the tty's, else
/// `None` (a pipe or a file).
pub fn terminal_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(c);
    }
    terminal_size::terminal_size_of(std::io::stdout()).map(|(w, _)| w.0 as usize)
}

pub use tardy::fmt::amount::{confidence, percent};

/// How stdout is written: in colour on a terminal unless NO_COLOR is set.
pub fn style() -> tardy::render::style::Style {
    use std::io::IsTerminal;
    tardy::render::style::Style {
        color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
    }
}

/// Write `text` to stdout (a reader that went away is not an error).
pub fn emit(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// `v` as pretty JSON and a newline.
pub fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

/// A subcommand's exit code, or its error said (see [`fail`]).
fn exit(r: Result<i32, String>) -> i32 {
    r.unwrap_or_else(fail)
}

/// Print `tardy: error: MESSAGE` and return the error exit code.
/// Input the message echoes is cut to 200 characters, control characters
/// escaped (a 1 GB name gives a one-line error).
pub fn fail(message: impl std::fmt::Display) -> i32 {
    eprintln!(
        "tardy: error: {}",
        tardy::fmt::clip::message(&message.to_string())
    );
    EXIT_ERROR
}
