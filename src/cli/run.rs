//! `tardy run`: measure commands, interleaved, and compare them to the first.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use tardy::analyze;
use tardy::measure::session::{Observer, Progress, SessionConfig};
use tardy::measure::spec::{self, RunSpec};
use tardy::measure::{MeasureError, interrupt};
use tardy::model::{Results, SessionStatus};
use tardy::render::{self, terminal::Style};
use tardy::store;

use super::{EXIT_INTERRUPTED, fail};

#[derive(Args)]
#[command(
    about = "Measure one or more commands, interleaved, and compare them to the first",
    long_about = include_str!("../../docs/help/run.about.txt"),
    after_help = "Examples:\n  tardy run 'sleep 0.01' 'sleep 0.012'\n  tardy run -P level 1 4 'xz -{level} -k -c big.tar'\n  \
tardy run --runs 30 --export-json base.json 'make -s test'\n  tardy run -- ./app --flag 'an argument with spaces'"
)]
pub struct RunArgs {
    /// Commands to measure; the first is the reference.
    #[arg(value_name = "COMMAND")]
    commands: Vec<String>,

    /// After `--`: one program and its arguments, executed exactly as given.
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    argv: Vec<String>,

    #[command(flatten)]
    budget: super::budget::BudgetArgs,

    /// Run once per command before its first run (once, or once per command).
    #[arg(short = 's', long, value_name = "CMD", help_heading = "Hooks")]
    setup: Vec<String>,
    /// Run before every run of a command, untimed (once, or once per command).
    #[arg(short = 'p', long, value_name = "CMD", help_heading = "Hooks")]
    prepare: Vec<String>,
    /// Run after every run of a command, untimed (once, or once per command).
    #[arg(short = 'C', long, value_name = "CMD", help_heading = "Hooks")]
    conclude: Vec<String>,
    /// Run once per command after its last run (once, or once per command).
    #[arg(short = 'c', long, value_name = "CMD", help_heading = "Hooks")]
    cleanup: Vec<String>,

    /// Kill a run (its whole process group) after this many seconds; it is recorded as timed out.
    #[arg(long, value_name = "SECS", help_heading = "Execution")]
    timeout: Option<f64>,
    /// Leave alive the processes a run leaves behind after its command exits (a daemon
    /// forked into the background, a setsid grandchild). By default tardy kills them
    /// and names them in a warning: the run ends when the command exits.
    #[arg(long, help_heading = "Execution")]
    keep_stragglers: bool,
    /// Keep measuring when runs fail: all non-zero exits, or only the listed codes (-i=1,2).
    /// Failed runs are timed, marked, and counted in the statistics, as hyperfine's -i
    /// (think `grep` with no match); --exclude-failures leaves them out.
    #[arg(short = 'i', long, num_args = 0..=1, require_equals = true, default_missing_value = "all-non-zero",
          value_name = "CODES", help_heading = "Execution")]
    ignore_failure: Option<String>,
    /// Failed runs count in the statistics (with --ignore-failure): the default
    /// now, as hyperfine's; kept for scripts that give it.
    #[arg(long, hide = true, help_heading = "Execution")]
    include_failures: bool,
    /// With --ignore-failure: keep failed runs out of the statistics (they are
    /// still recorded and marked): tardy's stricter rule.
    #[arg(long, help_heading = "Execution", conflicts_with = "include_failures")]
    exclude_failures: bool,
    /// Set an environment variable for the commands (repeatable).
    #[arg(
        short = 'e',
        long = "env",
        value_name = "KEY=VALUE",
        help_heading = "Execution"
    )]
    env: Vec<String>,
    /// Working directory for the commands.
    #[arg(long, value_name = "DIR", help_heading = "Execution")]
    cwd: Option<PathBuf>,
    /// Shell for commands with shell syntax; `none` is the same as -N.
    #[arg(short = 'S', long, value_name = "SHELL", help_heading = "Execution")]
    shell: Option<String>,
    /// Never use a shell: split each command on whitespace and execute it directly.
    #[arg(short = 'N', long, help_heading = "Execution")]
    no_shell: bool,
    /// Where command output goes: null, pipe, inherit or a FILE (once, or once per command).
    #[arg(long, value_name = "WHERE", help_heading = "Execution")]
    output: Vec<String>,
    /// Show the commands' output (same as --output inherit).
    #[arg(long, help_heading = "Execution")]
    show_output: bool,
    /// Feed this file to the commands' standard input (default: /dev/null).
    #[arg(long, value_name = "FILE", help_heading = "Execution")]
    input: Option<PathBuf>,
    /// Run each command's runs in one block (hyperfine's order) instead of interleaving.
    #[arg(long, help_heading = "Execution")]
    sequential: bool,
    /// Seed of the run order shuffle (recorded in the results).
    #[arg(long, value_name = "N", help_heading = "Execution")]
    seed: Option<u64>,

    /// A name for each command, in order (use {VAR} for parameters).
    #[arg(
        short = 'n',
        long = "name",
        visible_alias = "command-name",
        value_name = "NAME",
        help_heading = "Parameters"
    )]
    names: Vec<String>,
    /// Scan VAR from MIN to MAX (step 1, or -D); use {VAR} in commands.
    #[arg(short = 'P', long, num_args = 3, value_names = ["VAR", "MIN", "MAX"], allow_hyphen_values = true,
          help_heading = "Parameters")]
    parameter_scan: Vec<String>,
    /// Step of --parameter-scan.
    #[arg(short = 'D', long, value_name = "STEP", help_heading = "Parameters")]
    parameter_step_size: Option<String>,
    /// Give VAR each comma-separated value (repeatable: all combinations run).
    #[arg(short = 'L', long, num_args = 2, value_names = ["VAR", "VALUES"], help_heading = "Parameters")]
    parameter_list: Vec<String>,

    /// Write every run and the statistics as JSON (docs/results-format.md); saved after every run.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    export_json: Option<PathBuf>,
    /// Write one CSV row of statistics per command.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    export_csv: Option<PathBuf>,
    /// Write a Markdown table with each command's ratio to the reference.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    export_markdown: Option<PathBuf>,
    /// Write an AsciiDoc table (as --export-markdown).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    export_asciidoc: Option<PathBuf>,
    /// Write an Emacs org-mode table (as --export-markdown).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    export_orgmode: Option<PathBuf>,
    /// Show every time in this unit (default: the one that suits each value).
    #[arg(short = 'u', long, value_name = "UNIT", help_heading = "Output",
          value_parser = ["nanosecond", "microsecond", "millisecond", "second", "ns", "us", "ms", "s"])]
    time_unit: Option<String>,
    /// Order of the comparison lines and exported tables: as given (auto, command) or by
    /// mean time, fastest first (mean-time).
    #[arg(long, value_name = "ORDER", help_heading = "Output",
          value_parser = ["auto", "command", "mean-time"], default_value = "auto")]
    sort: String,
    /// The command every other is compared with: a name (-n), a command as given, or its
    /// 1-based position; anything else is measured as a command of its own, first (as
    /// hyperfine's --reference). Default: the first command.
    #[arg(long, value_name = "NAME", help_heading = "Output")]
    reference: Option<String>,
    /// Print the results JSON to stdout instead of the report.
    #[arg(long, help_heading = "Output")]
    json: bool,
    /// No progress bar.
    #[arg(short = 'q', long, help_heading = "Output")]
    quiet: bool,
    /// Output style, as hyperfine's: auto (colour and a progress bar on a
    /// terminal), full or color (colour even when piped; color without the
    /// bar), basic or nocolor (no colour; basic without the bar), none (no
    /// report and no bar; exports and --json still written).
    #[arg(long, value_name = "STYLE", help_heading = "Output",
          value_parser = ["auto", "full", "basic", "nocolor", "color", "none"], default_value = "auto")]
    style: String,

    /// Save the results in the history database as SERIES (SERIES/NAME for each of several
    /// commands), with the commit, branch, time and machine fingerprint.
    #[arg(long, value_name = "SERIES", help_heading = "History")]
    save: Option<String>,
    /// Upload the results to a `tardy serve` at URL (series named by --save
    /// when given), with the commit and branch; retried on failure.
    #[arg(long, value_name = "URL", help_heading = "History")]
    push: Option<String>,
    /// Write token for --push (or $TARDY_TOKEN).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "TARDY_TOKEN",
        hide_env_values = true,
        help_heading = "History"
    )]
    push_token: Option<String>,
    #[command(flatten)]
    history: super::history::SaveMeta,
}

/// Upload the results to `url`; whether a regression alert is open.
fn push_results(args: &RunArgs, url: &str, results: &Results) -> Result<bool, String> {
    let meta = tardy::jobs::push::meta_here(
        args.history.commit.as_deref(),
        args.history.branch.as_deref(),
        args.save.as_deref(),
    )?;
    let opts = tardy::jobs::push::options(args.push_token.clone(), None, 60.0, 60.0)?;
    let body = render::json::results(results);
    tardy::jobs::push::push_results(url, body.as_bytes(), &meta, &opts, &mut |e| {
        super::push::tell(url, e)
    })
}

/// Save the measured runs of every benchmark as one point each.
fn save_history(
    args: &RunArgs,
    name: &str,
    db: &mut dyn tardy::store::History,
    results: &Results,
) -> Result<usize, String> {
    let labels = tardy::history::import::Labels {
        series: Some(name.to_string()),
        provenance: Some(args.history.provenance()?),
        fingerprint: Some(results.machine.clone()),
        direction: None,
    };
    let batches = tardy::history::import::session_batches(results.clone(), &labels)
        .map_err(|e| e.to_string())?;
    let n = batches.len();
    db.save(&batches).map_err(|e| e.to_string())?;
    Ok(n)
}

fn build(args: &RunArgs) -> Result<SessionConfig, MeasureError> {
    let budget = args.budget.resolve().map_err(MeasureError::Option)?;
    let timeout = super::budget::seconds("timeout", args.timeout).map_err(MeasureError::Option)?;
    spec::session_config(&RunSpec {
        commands: args.commands.clone(),
        argv: args.argv.clone(),
        shell: args.shell.clone(),
        no_shell: args.no_shell,
        parameter_scan: args.parameter_scan.clone(),
        parameter_step_size: args.parameter_step_size.clone(),
        parameter_list: args.parameter_list.clone(),
        names: args.names.clone(),
        show_output: args.show_output,
        output: args.output.clone(),
        setup: args.setup.clone(),
        prepare: args.prepare.clone(),
        conclude: args.conclude.clone(),
        cleanup: args.cleanup.clone(),
        reference: args.reference.clone(),
        env: args.env.clone(),
        cwd: args.cwd.clone(),
        input: args.input.clone(),
        ignore_failure: args.ignore_failure.clone(),
        include_failures: args.include_failures,
        exclude_failures: args.exclude_failures,
        budget,
        timeout,
        seed: args.seed,
        sequential: args.sequential,
        keep_stragglers: args.keep_stragglers,
    })
}

/// Progress bar and periodic saving of the JSON results.
pub(super) struct CliObserver {
    pub(super) bar: ProgressBar,
    json_path: Option<PathBuf>,
    last_save: Option<Instant>,
    save_cost: Duration,
    last_draw: Option<Instant>,
    /// What counting costs has been said.
    told_cost: bool,
    quiet: bool,
}

impl CliObserver {
    /// A bar (hidden when `quiet` or off a terminal) that saves the results
    /// JSON to `json_path` as runs complete.
    pub(super) fn new(quiet: bool, json_path: Option<PathBuf>) -> CliObserver {
        CliObserver {
            bar: progress_bar(quiet),
            json_path,
            last_save: None,
            save_cost: Duration::ZERO,
            last_draw: None,
            told_cost: false,
            quiet,
        }
    }
}

impl Observer for CliObserver {
    fn phase(&mut self, message: &str) {
        self.bar.set_message(message.to_string());
    }

    fn after_run(&mut self, results: &Results, p: Progress) -> Result<(), String> {
        // Without counters there is no cost to tell (and looking for one
        // after every run read every run so far: quadratic).
        if results.options.counter.is_none() {
            self.told_cost = true;
        }
        if !self.told_cost
            && let Some(c) = analyze::run::counting_cost(results)
        {
            self.told_cost = true;
            let line = render::terminal::counting_cost(&c);
            if !self.bar.is_hidden() {
                self.bar.println(line);
            } else if !self.quiet {
                eprintln!("tardy: {line}");
            }
        }
        // The bar redraws at most 20 times a second; skip the work in between.
        if self
            .last_draw
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(50))
        {
            self.bar.set_length(p.expected);
            self.bar.set_position(p.executions);
            if let (false, Some((now, target))) = (p.warming_up, p.precision) {
                let counting = if results
                    .options
                    .counter
                    .as_ref()
                    .is_some_and(|c| c.backend == "cachegrind")
                {
                    "cachegrind (20-50x slower) "
                } else {
                    ""
                };
                self.bar.set_message(format!(
                    "{counting}±{} of ±{}",
                    render::units::percent(now),
                    render::units::percent(target)
                ));
            }
            self.last_draw = Some(Instant::now());
        }
        if let Some(path) = &self.json_path {
            // After every run, unless saving would take over 1% of the time:
            // then at most every 100x the cost of one save (Ctrl-C and the
            // end save everything in any case).
            let due = self
                .last_save
                .is_none_or(|t| t.elapsed() >= self.save_cost * 100);
            if due {
                let t = Instant::now();
                store::write_atomic(path, render::json::results(results).as_bytes())
                    .map_err(|e| e.to_string())?;
                self.save_cost = t.elapsed();
                self.last_save = Some(Instant::now());
            }
        }
        Ok(())
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
fn layout(args: &RunArgs) -> render::table::Layout {
    use render::units::TimeUnit;
    render::table::Layout {
        unit: args.time_unit.as_deref().map(|u| match u {
            "nanosecond" | "ns" => TimeUnit::Nanos,
            "microsecond" | "us" => TimeUnit::Micros,
            "millisecond" | "ms" => TimeUnit::Millis,
            _ => TimeUnit::Seconds,
        }),
        by_mean: args.sort == "mean-time",
    }
}

fn save_exports(args: &RunArgs, results: &Results) -> Result<(), store::StoreError> {
    use render::table::Syntax;
    if let Some(p) = &args.export_json {
        store::write_atomic(p, render::json::results(results).as_bytes())?;
    }
    if let Some(p) = &args.export_csv {
        store::write_atomic(p, render::csv::summary(results).as_bytes())?;
    }
    for (path, syntax) in [
        (&args.export_markdown, Syntax::Markdown),
        (&args.export_asciidoc, Syntax::AsciiDoc),
        (&args.export_orgmode, Syntax::OrgMode),
    ] {
        if let Some(p) = path {
            let table = render::table::results(results, &layout(args), syntax);
            store::write_atomic(p, table.as_bytes())?;
        }
    }
    Ok(())
}

pub fn main(args: RunArgs) -> i32 {
    let (config, mut history_db) = match prepare(&args) {
        Ok(p) => p,
        Err(code) => return code,
    };
    interrupt::install();
    let mut observer = CliObserver::new(
        args.quiet || matches!(args.style.as_str(), "basic" | "color" | "none"),
        args.export_json.clone(),
    );
    let (results, error) = match analyze::run::measure(&config, &mut observer) {
        Ok(r) => r,
        Err(e) => {
            observer.bar.finish_and_clear();
            if interrupt::requested() {
                eprintln!("tardy: interrupted before measuring started; nothing to save");
                return EXIT_INTERRUPTED;
            }
            return fail_run(e);
        }
    };
    observer.bar.finish_and_clear();
    if let Err(code) = keep(&args, history_db.as_mut(), &results) {
        return code;
    }
    report(&args, &results);
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

type Db = Box<dyn tardy::store::History + Send>;

/// The session, and the history database opened before measuring (a bad
/// one, or an export path that cannot be written, fails now, not after).
fn prepare(args: &RunArgs) -> Result<(SessionConfig, Option<Db>), i32> {
    let config = build(args).map_err(fail)?;
    args.history
        .check_used(
            args.save.is_some() || args.push.is_some(),
            "--save SERIES or --push URL",
        )
        .map_err(fail)?;
    let db = match &args.save {
        None => None,
        Some(_) => Some(super::history::open(&args.history.db).map_err(fail)?),
    };
    for p in [
        &args.export_json,
        &args.export_csv,
        &args.export_markdown,
        &args.export_asciidoc,
        &args.export_orgmode,
    ]
    .into_iter()
    .flatten()
    {
        store::check_writable(p).map_err(fail)?;
    }
    Ok((config, db))
}

/// The exports, the history series and the push, as asked.
fn keep(args: &RunArgs, db: Option<&mut Db>, results: &Results) -> Result<(), i32> {
    save_exports(args, results).map_err(fail)?;
    if let (Some(name), Some(db)) = (&args.save, db) {
        let n = save_history(args, name, db.as_mut(), results).map_err(fail)?;
        eprintln!(
            "tardy: saved {n} point{} to {} (series {name})",
            if n == 1 { "" } else { "s" },
            tardy::jobs::store::describe(args.history.db.db.as_deref())
        );
    }
    if let Some(url) = &args.push
        && measured(results)
    {
        push_results(args, url, results).map_err(fail)?;
    }
    Ok(())
}

fn measured(results: &Results) -> bool {
    results
        .benchmarks
        .iter()
        .any(|b| b.runs.iter().any(|r| !r.warmup))
}

/// The JSON or the terminal report on standard output.
fn report(args: &RunArgs, results: &Results) {
    if args.json {
        print!("{}", render::json::results(results));
    } else if measured(results) && args.style != "none" {
        let color = match args.style.as_str() {
            "full" | "color" => true,
            "basic" | "nocolor" => false,
            _ => std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        };
        print!(
            "{}",
            render::terminal::report_with(results, Style { color }, &layout(args))
        );
    }
}

/// A benchmarked command that failed exits 1, as in hyperfine; 2 stays for
/// usage errors and tardy's own.
fn fail_run(e: tardy::measure::error::MeasureError) -> i32 {
    let code = if matches!(e, tardy::measure::error::MeasureError::CommandFailed { .. }) {
        1
    } else {
        super::EXIT_ERROR
    };
    fail(e);
    code
}
