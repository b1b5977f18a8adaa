//! `tardy run`: measure commands, interleaved, and compare them to the first.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use tardy::analyze;
use tardy::jobs::run::{
    Autosave, CostNote, Exports, Keep, Keeper, Kept, Labels, precision_message,
};
use tardy::measure::session::{Observer, Progress, SessionConfig};
use tardy::measure::spec::{self, RunSpec};
use tardy::measure::{MeasureError, interrupt};
use tardy::model::{Results, SessionStatus};
use tardy::render::{self, terminal::Style};

use super::{EXIT_INTERRUPTED, fail};

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/run.about.txt"),
    after_help = include_str!("../../docs/help/run.examples.txt")
)]
pub struct RunArgs {
    /// Commands to measure; the first is the reference.
    #[arg(value_name = "COMMAND")]
    commands: Vec<String>,

    /// After `--`: one program and its arguments, executed exactly as given.
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    argv: Vec<String>,

    #[command(flatten)]
    db: super::history::DbArgs,
    #[command(flatten)]
    budget: super::budget::BudgetArgs,

    #[command(flatten, next_help_heading = "Hooks")]
    hooks: Hooks,
    #[command(flatten, next_help_heading = "Execution")]
    exec: Execution,
    #[command(flatten, next_help_heading = "Parameters")]
    params: Parameters,
    #[command(flatten, next_help_heading = "Output")]
    out: Output,
    #[command(flatten, next_help_heading = "History")]
    keep: Keeping,
}

#[derive(Args)]
struct Hooks {
    /// Run once per command before its first run (once, or once per command).
    #[arg(short = 's', long, value_name = "CMD")]
    setup: Vec<String>,
    /// Run before every run of a command, untimed (once, or once per command).
    #[arg(short = 'p', long, value_name = "CMD")]
    prepare: Vec<String>,
    /// Run after every run of a command, untimed (once, or once per command).
    #[arg(short = 'C', long, value_name = "CMD")]
    conclude: Vec<String>,
    /// Run once per command after its last run (once, or once per command).
    #[arg(short = 'c', long, value_name = "CMD")]
    cleanup: Vec<String>,
}

#[derive(Args)]
struct Execution {
    /// Kill a run (its whole process group) after this many seconds; it is recorded as timed out.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Leave alive the processes a run leaves behind after its command exits (a daemon
    /// forked into the background, a setsid grandchild). By default tardy kills them
    /// and names them in a warning: the run ends when the command exits.
    #[arg(long)]
    keep_stragglers: bool,
    /// Keep measuring when runs fail: all non-zero exits, or only the listed codes (-i=1,2).
    /// Failed runs are timed, marked, and counted in the statistics, as hyperfine's -i
    /// (think `grep` with no match); --exclude-failures leaves them out.
    #[arg(short = 'i', long, num_args = 0..=1, require_equals = true, default_missing_value = "all-non-zero",
          value_name = "CODES")]
    ignore_failure: Option<String>,
    /// Failed runs count in the statistics (with --ignore-failure): the default
    /// now, as hyperfine's; kept for scripts that give it.
    #[arg(long, hide = true)]
    include_failures: bool,
    /// With --ignore-failure: keep failed runs out of the statistics (they are
    /// still recorded and marked): tardy's stricter rule.
    #[arg(long, conflicts_with = "include_failures")]
    exclude_failures: bool,
    /// Set an environment variable for the commands (repeatable).
    #[arg(short = 'e', long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Working directory for the commands.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Shell for commands with shell syntax; `none` is the same as -N.
    #[arg(short = 'S', long, value_name = "SHELL")]
    shell: Option<String>,
    /// Never use a shell: split each command on whitespace and execute it directly.
    #[arg(short = 'N', long)]
    no_shell: bool,
    /// Where command output goes: null, pipe, inherit or a FILE (once, or once per command).
    #[arg(long, value_name = "WHERE")]
    output: Vec<String>,
    /// Show the commands' output (same as --output inherit).
    #[arg(long)]
    show_output: bool,
    /// Feed this file to the commands' standard input (default: /dev/null).
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Run each command's runs in one block (hyperfine's order) instead of interleaving.
    #[arg(long)]
    sequential: bool,
    /// Seed of the run order shuffle (recorded in the results).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
}

#[derive(Args)]
struct Parameters {
    /// A name for each command, in order (use {VAR} for parameters).
    #[arg(
        short = 'n',
        long = "name",
        visible_alias = "command-name",
        value_name = "NAME"
    )]
    names: Vec<String>,
    /// Scan VAR from MIN to MAX (step 1, or -D); use {VAR} in commands.
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], allow_hyphen_values = true)]
    parameter_scan: Vec<String>,
    /// Step of --parameter-scan.
    #[arg(short = 'D', long, value_name = "STEP")]
    parameter_step_size: Option<String>,
    /// Give VAR each comma-separated value (repeatable: all combinations run).
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"])]
    parameter_list: Vec<String>,
}

#[derive(Args)]
struct Output {
    /// Write every run and the statistics as JSON (docs/results-format.md); saved after every run.
    #[arg(long, value_name = "FILE")]
    export_json: Option<PathBuf>,
    /// Write one CSV row of statistics per command.
    #[arg(long, value_name = "FILE")]
    export_csv: Option<PathBuf>,
    /// Write a Markdown table with each command's ratio to the reference.
    #[arg(long, value_name = "FILE")]
    export_markdown: Option<PathBuf>,
    /// Write an AsciiDoc table (as --export-markdown).
    #[arg(long, value_name = "FILE")]
    export_asciidoc: Option<PathBuf>,
    /// Write an Emacs org-mode table (as --export-markdown).
    #[arg(long, value_name = "FILE")]
    export_orgmode: Option<PathBuf>,
    /// Show every time in this unit (default: the one that suits each value).
    #[arg(short = 'u', long, value_name = "UNIT",
          value_parser = ["nanosecond", "microsecond", "millisecond", "second", "ns", "us", "ms", "s"])]
    time_unit: Option<String>,
    /// Order of the comparison lines and exported tables: as given (auto, command) or by
    /// mean time, fastest first (mean-time).
    #[arg(long, value_name = "ORDER",
          value_parser = ["auto", "command", "mean-time"], default_value = "auto")]
    sort: String,
    /// The command every other is compared with: a name (-n), a command as given, or its
    /// 1-based position; anything else is measured as a command of its own, first (as
    /// hyperfine's --reference). Default: the first command.
    #[arg(long, value_name = "NAME")]
    reference: Option<String>,
    /// Print the results JSON to stdout instead of the report.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Output style, as hyperfine's: auto (colour and a progress bar on a
    /// terminal), full or color (colour even when piped; color without the
    /// bar), basic or nocolor (no colour; basic without the bar), none (no
    /// report and no bar; exports and --json still written).
    #[arg(long, value_name = "STYLE",
          value_parser = ["auto", "full", "basic", "nocolor", "color", "none"], default_value = "auto")]
    style: String,
}

#[derive(Args)]
struct Keeping {
    /// Save the results in the history database as SERIES (SERIES/NAME for each of several
    /// commands), with the commit, branch, time and machine fingerprint.
    #[arg(long, value_name = "SERIES")]
    save: Option<String>,
    /// Upload the results to a `tardy serve` at URL (series named by --save
    /// when given), with the commit and branch; retried on failure.
    #[arg(long, value_name = "URL")]
    push: Option<String>,
    /// Write token for --push (or $TARDY_TOKEN).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TARDY_TOKEN",
        hide_env_values = true
    )]
    push_token: Option<String>,
    /// The commit the results belong to (default: HEAD of the repository here).
    #[arg(long, value_name = "REV")]
    commit: Option<String>,
    /// The branch (default: the current branch).
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
}

fn build(args: &RunArgs) -> Result<SessionConfig, MeasureError> {
    let budget = args.budget.resolve().map_err(MeasureError::Option)?;
    let timeout = tardy::measure::spec::seconds("timeout", args.exec.timeout);
    let (hooks, exec, params) = (&args.hooks, &args.exec, &args.params);
    spec::session_config(&RunSpec {
        commands: args.commands.clone(),
        argv: args.argv.clone(),
        shell: exec.shell.clone(),
        no_shell: exec.no_shell,
        parameter_scan: params.parameter_scan.clone(),
        parameter_step_size: params.parameter_step_size.clone(),
        parameter_list: params.parameter_list.clone(),
        names: params.names.clone(),
        show_output: exec.show_output,
        output: exec.output.clone(),
        setup: hooks.setup.clone(),
        prepare: hooks.prepare.clone(),
        conclude: hooks.conclude.clone(),
        cleanup: hooks.cleanup.clone(),
        reference: args.out.reference.clone(),
        env: exec.env.clone(),
        cwd: exec.cwd.clone(),
        input: exec.input.clone(),
        ignore_failure: exec.ignore_failure.clone(),
        include_failures: exec.include_failures,
        exclude_failures: exec.exclude_failures,
        budget,
        timeout: timeout.map_err(MeasureError::Option)?,
        seed: exec.seed,
        sequential: exec.sequential,
        keep_stragglers: exec.keep_stragglers,
    })
}

/// What to keep besides the report: exports, history points, the upload.
fn keeping(args: &RunArgs) -> Keep {
    let o = &args.out;
    Keep {
        exports: Exports {
            json: o.export_json.clone(),
            csv: o.export_csv.clone(),
            markdown: o.export_markdown.clone(),
            asciidoc: o.export_asciidoc.clone(),
            orgmode: o.export_orgmode.clone(),
            layout: layout(o),
        },
        save: args.keep.save.clone(),
        push: (args.keep.push.clone()).map(|url| (url, args.keep.push_token.clone())),
        labels: Labels {
            db: args.db.db.clone(),
            project: args.db.project.clone(),
            commit: args.keep.commit.clone(),
            branch: args.keep.branch.clone(),
        },
    }
}

/// Progress bar and periodic saving of the JSON results.
pub(super) struct CliObserver {
    pub(super) bar: ProgressBar,
    autosave: Option<Autosave>,
    last_draw: Option<Instant>,
    cost: CostNote,
    quiet: bool,
}

impl CliObserver {
    /// A bar (hidden when `quiet` or off a terminal) that saves the results
    /// JSON to `json_path` as runs complete.
    pub(super) fn new(quiet: bool, json_path: Option<PathBuf>) -> CliObserver {
        CliObserver {
            bar: progress_bar(quiet),
            autosave: json_path.map(Autosave::new),
            last_draw: None,
            cost: CostNote::default(),
            quiet,
        }
    }
}

impl Observer for CliObserver {
    fn phase(&mut self, message: &str) {
        self.bar.set_message(message.to_string());
    }

    fn after_run(&mut self, results: &Results, p: Progress) -> Result<(), String> {
        if let Some(line) = self.cost.after_run(results) {
            if !self.bar.is_hidden() {
                self.bar.println(line);
            } else if !self.quiet {
                eprintln!("tardy: {line}");
            }
        }
        // The bar redraws at most 20 times a second; skip the work in between.
        if (self.last_draw).is_none_or(|t| t.elapsed() >= Duration::from_millis(50)) {
            self.bar.set_length(p.expected);
            self.bar.set_position(p.executions);
            if let (false, Some((now, target))) = (p.warming_up, p.precision) {
                self.bar
                    .set_message(precision_message(results, now, target));
            }
            self.last_draw = Some(Instant::now());
        }
        match &mut self.autosave {
            Some(a) => a.after_run(results),
            None => Ok(()),
        }
    }
}

fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(1), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>16} [{bar:28.cyan/blue}] {pos}/{len} runs  {elapsed_precise}, about {eta} left",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// How the report and the tables show times: `-u` and `--sort`.
fn layout(o: &Output) -> render::table::Layout {
    use render::units::TimeUnit;
    render::table::Layout {
        unit: o.time_unit.as_deref().map(|u| match u {
            "nanosecond" | "ns" => TimeUnit::Nanos,
            "microsecond" | "us" => TimeUnit::Micros,
            "millisecond" | "ms" => TimeUnit::Millis,
            _ => TimeUnit::Seconds,
        }),
        by_mean: o.sort == "mean-time",
    }
}

pub fn main(args: RunArgs) -> i32 {
    let config = match build(&args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    // A bad database, or an export path that cannot be written, fails now.
    let mut keeper = match Keeper::open(keeping(&args)) {
        Ok(k) => k,
        Err(e) => return fail(e),
    };
    interrupt::install();
    let o = &args.out;
    let quiet = o.quiet || matches!(o.style.as_str(), "basic" | "color" | "none");
    let mut observer = CliObserver::new(quiet, o.export_json.clone());
    let measured = analyze::run::measure(&config, &mut observer);
    observer.bar.finish_and_clear();
    let (results, error) = match measured {
        Ok(r) => r,
        Err(_) if interrupt::requested() => {
            eprintln!("tardy: interrupted before measuring started; nothing to save");
            return EXIT_INTERRUPTED;
        }
        Err(e) => return fail_run(e),
    };
    let url = args.keep.push.as_deref().unwrap_or_default();
    match keeper.keep(&results, &mut |e| super::push::tell(url, e)) {
        Ok(kept) => said(&args, &kept),
        Err(e) => return fail(e),
    }
    report(o, &results);
    if let Some(e) = error {
        return fail_run(e);
    }
    if results.status == SessionStatus::Interrupted {
        let kept: usize = results.benchmarks.iter().map(|b| b.runs.len()).sum();
        eprintln!("tardy: interrupted; {kept} completed runs kept");
        return EXIT_INTERRUPTED;
    }
    0
}

/// "saved N points to DB (series S)".
fn said(args: &RunArgs, kept: &Kept) {
    if let (Some((n, db)), Some(name)) = (&kept.saved, &args.keep.save) {
        let s = if *n == 1 { "" } else { "s" };
        eprintln!("tardy: saved {n} point{s} to {db} (series {name})");
    }
}

/// The JSON or the terminal report on standard output.
fn report(o: &Output, results: &Results) {
    if o.json {
        print!("{}", render::json::results(results));
    } else if tardy::jobs::run::measured(results) && o.style != "none" {
        let color = match o.style.as_str() {
            "full" | "color" => true,
            "basic" | "nocolor" => false,
            _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        };
        print!(
            "{}",
            render::terminal::report_with(results, Style { color }, &layout(o))
        );
    }
}

/// A benchmarked command that failed exits 1, as in hyperfine; 2 stays for
/// usage errors and tardy's own.
fn fail_run(e: MeasureError) -> i32 {
    let code = if matches!(e, MeasureError::CommandFailed { .. }) {
        1
    } else {
        super::EXIT_ERROR
    };
    fail(e);
    code
}
