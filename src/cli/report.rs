//! `tardy report`: a self-contained HTML page of the history and of result files.

use std::path::PathBuf;

use clap::Args;

use tardy::jobs::report::Spec;
use tardy::render::report;

#[derive(Args)]
#[command(
    long_about = include_str!("../../docs/help/report.about.txt"),
    after_help = include_str!("../../docs/help/report.examples.txt")
)]
pub struct ReportArgs {
    /// Result files to show as distributions.
    files: Vec<String>,
    /// Where to write the HTML.
    #[arg(short, long, value_name = "FILE", default_value = "tardy-report.html")]
    output: PathBuf,
    /// Only these history series (repeatable; default: all).
    #[arg(long, value_name = "NAME")]
    series: Vec<String>,
    /// Leave the history database out (only the files given are shown).
    #[arg(long, conflicts_with = "series")]
    no_history: bool,
    /// Only points of this branch.
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Page title.
    #[arg(long, default_value = "tardy report")]
    title: String,
    /// html: the whole page; svg: one chart alone (there must be exactly
    /// one: pick a series with --series, or give one set of files).
    #[arg(long, value_parser = ["html", "svg"], default_value = "html")]
    format: String,
    #[command(flatten)]
    db: super::history::DbArgs,
}

/// The subcommand, run; its exit code.
pub fn run(args: ReportArgs) -> Result<i32, String> {
    let g = tardy::jobs::report::gather(&Spec {
        files: args.files,
        series: args.series,
        no_history: args.no_history,
        branch: args.branch,
        db: args.db.db,
        project: args.db.project,
    })?;
    let page = g.page(&args.title);
    let html = match args.format.as_str() {
        "svg" => report::single_chart(&page).map_err(|e| format!("--format svg: {e}"))?,
        _ => report::html(&page),
    };
    tardy::store::write_atomic(&args.output, html.as_bytes()).map_err(|e| e.to_string())?;
    eprintln!(
        "tardy: wrote {} ({}, {} KiB)",
        args.output.display(),
        report::given_summary(g.series.len(), g.given),
        html.len().div_ceil(1024)
    );
    Ok(0)
}
