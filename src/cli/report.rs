//! `tardy report`: a self-contained HTML page of the history and of result files.

use std::path::PathBuf;

use clap::Args;

use tardy::history::view;
use tardy::ingest::{self, Format, NumberOptions};
use tardy::render::report::{self, ResultsView};
use tardy::stats::summary::median_by_selection;
use tardy::store::history::{AlertState, PointFilter};
use tardy::store::{DbError, History};

use super::fail;

#[derive(Args)]
#[command(
    about = "Write one self-contained HTML report: history series with change points, alerts, result sets",
    long_about = "Write one self-contained HTML file (inline SVG charts and CSS, no scripts, no network) that shows \
the history database's series over time with their change points (E-Divisive, as `tardy history detect`) and the \
points where the machine changed, the open alerts, and any result files given (tardy or hyperfine JSON, number \
files, Go benchmark output...) as strip charts side by side. Light and dark mode follow the reader; it prints.",
    after_help = "Examples:\n  tardy report -o report.html\n  tardy report --series build --series unit -o build.html\n  tardy report base.json new.json --no-history -o compare.html"
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
    /// Leave the history database out.
    #[arg(long)]
    no_history: bool,
    /// Only points of this branch.
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Page title.
    #[arg(long, default_value = "tardy report")]
    title: String,
    #[command(flatten)]
    db: super::history::DbArgs,
}

pub fn main(args: ReportArgs) -> i32 {
    match run(&args) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

fn run(args: &ReportArgs) -> Result<(), String> {
    let err = |e: DbError| e.to_string();
    let mut series = Vec::new();
    let mut alerts = Vec::new();
    let path = super::history::db_path(&args.db.db);
    if !args.no_history && args.db.db.is_some() && !path.exists() {
        return Err(format!("no history database at '{}'", path.display()));
    }
    let use_history = !args.no_history && (path.exists() || !args.series.is_empty());
    if use_history {
        let store = super::history::open(&args.db).map_err(err)?;
        let all = store.list().map_err(err)?;
        for name in &args.series {
            if !all.iter().any(|s| &s.name == name) {
                return Err(DbError::NoSeries(name.clone()).to_string());
            }
        }
        let filter = PointFilter {
            branch: args.branch.clone(),
            since: None,
        };
        for info in all
            .into_iter()
            .filter(|s| args.series.is_empty() || args.series.contains(&s.name))
        {
            series.push(view::series_view(&store, info, &filter).map_err(err)?);
        }
        alerts = store.alerts(&[AlertState::Open]).map_err(err)?;
    }
    let mut results = Vec::new();
    for f in &args.files {
        let data = ingest::read_path(f, Format::Auto, &NumberOptions::default())
            .map_err(|e| e.to_string())?;
        let unit = data
            .series
            .first()
            .map_or("s".to_string(), |s| s.unit.clone());
        let sets = data
            .series
            .iter()
            .map(|s| {
                let mut v = s.values.clone();
                let median = if v.is_empty() {
                    f64::NAN
                } else {
                    median_by_selection(&mut v)
                };
                (s.name.clone(), s.values.clone(), median)
            })
            .collect();
        results.push(ResultsView {
            source: f.clone(),
            unit,
            sets,
        });
    }
    if series.is_empty() && results.is_empty() {
        return Err(
            "nothing to report: no history database here (see `tardy run --save`) and no result files given"
                .into(),
        );
    }
    let html = report::html(&args.title, &series, &alerts, &results);
    tardy::store::write_atomic(&args.output, html.as_bytes()).map_err(|e| e.to_string())?;
    eprintln!(
        "tardy: wrote {} ({} series, {} result file{}, {} KiB)",
        args.output.display(),
        series.len(),
        results.len(),
        if results.len() == 1 { "" } else { "s" },
        html.len().div_ceil(1024)
    );
    Ok(())
}
