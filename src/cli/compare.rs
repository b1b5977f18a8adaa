//! `tardy compare`: read result sets, say whether they differ, by how much,
//! with what certainty, and what it would take to know more.

use std::io::Write;

use clap::Args;

use tardy::analyze::compare::{Report, Row};
use tardy::analyze::files;
use tardy::ingest::{Format, NumberOptions};
use tardy::render;
use tardy::stats::compare::{Correction, Options};

use super::percent;

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/compare.about.txt"),
    after_help = include_str!("../../docs/help/compare.examples.txt")
)]
pub struct CompareArgs {
    /// Behave as FreeBSD's ministat, byte for byte, with ministat's own options after
    /// it (it must come first: `tardy compare --ministat [-c 99] [-s] FILES`; see
    /// `tardy ministat --help`).
    #[arg(long)]
    ministat: bool,
    /// Result files; the first is the baseline. `NAME=FILE` labels a file
    /// (benchstat's `old=a.txt new=b.txt`).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<String>,
    /// Candidate files, pooled; the files before --vs are pooled into the baseline.
    #[arg(long, num_args = 1.., value_name = "FILE")]
    vs: Vec<String>,
    /// Go benchmark files: compare across this configuration key although
    /// the sides differ in it (`note:`, `toolchain:`, `commit:`...), as
    /// benchstat's -ignore; repeat it or give a comma-separated list.
    #[arg(long, value_name = "KEY", value_delimiter = ',')]
    ignore: Vec<String>,
    #[command(flatten, next_help_heading = "Statistics")]
    stats: StatsArgs,
    #[command(flatten, next_help_heading = "Input")]
    input: InputArgs,
    #[command(flatten, next_help_heading = "Output")]
    output: OutputArgs,
}

#[derive(Args)]
struct StatsArgs {
    /// Confidence level: 95, 95% or 0.95.
    #[arg(long, default_value = "95", value_name = "PCT")]
    confidence: String,
    /// benchstat's -alpha: significant when p < ALPHA, the same as a
    /// confidence of 1 - ALPHA (0.05 is 95%).
    #[arg(long, value_name = "ALPHA", conflicts_with = "confidence")]
    alpha: Option<f64>,
    /// auto (Mann-Whitney U with the Hodges-Lehmann ratio), student, welch, log-welch, u, bootstrap.
    #[arg(long, default_value = "auto", value_name = "TEST")]
    test: String,
    /// The relative difference worth detecting, in percent: sizes "same" and the runs-needed
    /// advice [default: 1 for times, 0.1 for counts such as instructions]
    #[arg(long, value_name = "PCT")]
    target_effect: Option<String>,
    /// Control the false discovery rate (Benjamini-Hochberg): the default; kept for scripts.
    #[arg(long, conflicts_with = "correction")]
    fdr: bool,
    /// How many comparisons at once are controlled: bh (Benjamini-Hochberg, the default: keeps
    /// power on suites of thousands of benchmarks), holm (the family-wise error), or none (each
    /// row's own p-value, as benchstat prints it).
    #[arg(long, value_name = "HOW")]
    correction: Option<String>,
    /// Seed of the bootstrap and of pair sampling.
    #[arg(long, default_value_t = 1, value_name = "N")]
    seed: u64,
    /// Bootstrap resamples.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    resamples: usize,
}

#[derive(Args)]
struct InputArgs {
    /// Column of plain number files (1-based).
    #[arg(short = 'C', long, default_value_t = 1, value_name = "N")]
    column: usize,
    /// Delimiter characters of plain number files.
    #[arg(short = 'd', long, default_value = " \t", value_name = "CHARS")]
    delimiter: String,
    /// Compare only the benchmarks this benchstat query keeps: `/size:1000`,
    /// `.name:Sum`, `.unit:sec/op`, `goos:linux`, `.name:/Dec.*/`, with
    /// AND, OR, -x (not) and parentheses.
    #[arg(long, value_name = "QUERY")]
    filter: Option<String>,
    /// benchstat's -col: what makes the columns compared with the first:
    /// `.file` (the default: each input), a sub-benchmark key (`/impl`: the
    /// inputs' benchmarks split by their impl=... part), or a configuration
    /// key (`goos`).
    #[arg(long, value_name = "KEY", default_value = ".file")]
    col: String,
    /// benchstat's -row: what names the rows (default `.fullname`): `.name`,
    /// a sub-benchmark key (`/size`), a configuration key (`goos`) or `.unit`.
    /// Benchmarks that share a row's value in one column are pooled.
    #[arg(long, value_name = "KEY", default_value = ".fullname")]
    row: String,
    /// auto, or one of: tardy, hyperfine, numbers, go, pytest-benchmark, criterion, jmh,
    /// google-benchmark, benchmarkdotnet, catch2, tinybench (vitest), benchmarkjs, asv,
    /// benchmark-ips, libtest, divan, iai-callgrind, julia, bencher.
    #[arg(long, default_value = "auto", value_name = "FORMAT")]
    input_format: String,
}

#[derive(Args)]
struct OutputArgs {
    /// text, json, markdown or csv.
    #[arg(long, default_value = "text", value_name = "FORMAT")]
    format: String,
    /// Exit 1 when a candidate is proven slower than the baseline by more than PCT percent
    /// (the whole confidence interval above +PCT, after multiple-comparison control).
    #[arg(long, value_name = "PCT")]
    fail_if_slower: Option<String>,
    /// Write a job summary to $GITHUB_STEP_SUMMARY and ::warning/::error annotations.
    #[arg(long)]
    github: bool,
    /// No distribution plot.
    #[arg(long)]
    no_plot: bool,
    /// ASCII characters only in the plot.
    #[arg(long)]
    ascii: bool,
}

/// The statistics' options, from the flags (checked).
fn options(args: &CompareArgs) -> Result<Options, String> {
    let s = &args.stats;
    if args.ministat {
        return Err("--ministat must come first, right after `compare`: tardy compare --ministat [ministat options] FILES".into());
    }
    let confidence = match s.alpha {
        Some(a) if a.is_finite() && a > 0.0 && a < 1.0 => 1.0 - a,
        Some(a) => return Err(format!("--alpha lies between 0 and 1 (0.05), not {a}")),
        None => super::confidence("confidence", &s.confidence)?,
    };
    let target = s
        .target_effect
        .as_deref()
        .map(|t| percent("target-effect", t, false));
    let target = target.transpose()?;
    let d = Options::default();
    Ok(Options {
        confidence,
        test: s.test.parse()?,
        target_effect: target.unwrap_or(d.target_effect),
        count_target_effect: target.unwrap_or(d.count_target_effect),
        seed: s.seed,
        resamples: s.resamples,
    })
}

/// The subcommand, run; its exit code.
pub fn run(args: CompareArgs) -> Result<i32, String> {
    let (args, i) = (&args, &args.input);
    let options = options(args)?;
    let format: Format = i.input_format.parse()?;
    let fail_pct = (args.output.fail_if_slower.as_deref())
        .map(|s| percent("fail-if-slower", s, false))
        .transpose()?;
    let out = args.output.format.as_str();
    if !matches!(out, "text" | "json" | "markdown" | "csv") {
        return Err(format!(
            "--format takes text, json, markdown or csv, not '{out}'"
        ));
    }
    let files = args
        .files
        .iter()
        .chain(&args.vs)
        .cloned()
        .collect::<Vec<_>>();
    let done = files::compare(files::Request {
        files: files::labelled(&files),
        baseline_files: (!args.vs.is_empty()).then_some(args.files.len()),
        format,
        numbers: NumberOptions {
            column: i.column,
            delimiters: i.delimiter.clone(),
        },
        filter: files::filter(i.filter.as_deref())?,
        col: &i.col,
        row: &i.row,
        ignore: &args.ignore,
        options,
        correction: match (args.stats.fdr, args.stats.correction.as_deref()) {
            (true, _) | (_, None) => Correction::BenjaminiHochberg,
            (_, Some(c)) => c.parse()?,
        },
    })?;
    for w in &done.warnings {
        eprintln!("tardy: warning: {w}");
    }
    print_and_gate(args, &done.report, fail_pct)
}

/// The report in the format asked, GitHub's annotations and summary, and
/// exit 1 when a comparison is proven slower than `--fail-if-slower`.
fn print_and_gate(
    args: &CompareArgs,
    report: &Report,
    fail_pct: Option<f64>,
) -> Result<i32, String> {
    let o = &args.output;
    let text = match o.format.as_str() {
        "json" => super::json(report),
        "markdown" => render::compare::markdown(report),
        "csv" => render::compare::csv(report),
        _ => {
            let unicode = !o.ascii && render::plot::unicode_supported();
            let width = super::terminal_width().unwrap_or(80);
            render::compare::text(report, super::style(), !o.no_plot, unicode, width)
        }
    };
    let failing = |r: &Row| fail_pct.is_some_and(|pct| r.proven_slower_than(pct));
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    if o.github {
        let _ = out.write_all(render::compare::github_annotations(report, &failing).as_bytes());
        let md = format!(
            "### tardy compare\n\n{}\n",
            render::compare::markdown(report)
        );
        if !tardy::ci::summary::append(&md)? {
            eprintln!("tardy: GITHUB_STEP_SUMMARY is not set; no job summary written");
        }
    }
    let failed: Vec<&Row> = report.rows.iter().filter(|r| failing(r)).collect();
    if failed.is_empty() {
        return Ok(0);
    }
    eprintln!(
        "{}",
        render::compare::gate_line(&failed, fail_pct.unwrap_or(0.0))
    );
    Ok(1)
}
