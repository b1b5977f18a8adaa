//! `tardy report`: a self-contained HTML page of the history and of result files.

use std::path::PathBuf;

use clap::Args;

use tardy::analyze::compare::{self, Side};
use tardy::analyze::suite;
use tardy::diagnose::machine;
use tardy::history::view;
use tardy::ingest::reports;
use tardy::ingest::{self, Format, NumberOptions};
use tardy::render::report::{self, ResultSet, ResultsView, STRIP_DOTS, TestsView};
use tardy::server::pool::Backend;
use tardy::stats::compare::{Correction, Options as CompareOptions};
use tardy::stats::summary::{median_by_selection, spaced_order_statistics};
use tardy::store::DbError;
use tardy::store::history::{AlertState, PointFilter};

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

/// What a file given to `tardy report` holds.
enum Kind {
    Results,
    Tests,
    Doctor,
    /// A `tardy explain --save` trace.
    Trace,
}

/// From the first bytes: test reports (XML, gzip, `go test -json`), doctor
/// reports (JSON of schema tardy-doctor), else results.
fn kind_of(path: &str) -> Result<Kind, String> {
    use std::io::Read;
    let mut head = vec![0u8; 4096];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .map_err(|e| format!("{path}: cannot read: {e}"))?;
    head.truncate(n);
    let text = String::from_utf8_lossy(&head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    Ok(
        if head.starts_with(&[0x1f, 0x8b])
            || t.starts_with('<')
            || (t.starts_with('{') && t.lines().next().is_some_and(|l| l.contains("\"Action\"")))
        {
            Kind::Tests
        } else if t.starts_with('{') && t.contains("\"tardy.doctor\"") {
            Kind::Doctor
        } else if t.starts_with('{') && t.contains("\"tardy.trace\"") {
            Kind::Trace
        } else {
            Kind::Results
        },
    )
}

pub fn main(args: ReportArgs) -> i32 {
    match run(&args) {
        Ok(()) => 0,
        Err(e) => fail(e),
    }
}

fn run(args: &ReportArgs) -> Result<(), String> {
    let (series, alerts) = history_part(args)?;
    let inputs = read_files(&args.files)?;
    let results = result_views(&inputs.datasets);
    let verdicts = verdicts(inputs.datasets)?;
    let tests = tests_view(inputs.test_reports)?;
    let doctor = doctor_view(&inputs.doctors)?;
    let traces = inputs.traces;
    if series.is_empty()
        && results.is_empty()
        && tests.is_empty()
        && doctor.is_none()
        && traces.is_empty()
    {
        return Err(
            "nothing to report: no history database here (see `tardy run --save`) and no files given"
                .into(),
        );
    }
    let flame = tardy::diagnose::explain::functions::report_flame(&traces);
    let page = report::Page {
        title: &args.title,
        series: &series,
        alerts: &alerts,
        results: &results,
        compare: verdicts.as_ref(),
        tests: &tests,
        doctor: doctor.as_ref(),
        traces: &traces,
        flame: flame.as_ref(),
    };
    let html = match args.format.as_str() {
        "svg" => report::single_chart(&page).map_err(|e| format!("--format svg: {e}"))?,
        _ => report::html(&page),
    };
    tardy::store::write_atomic(&args.output, html.as_bytes()).map_err(|e| e.to_string())?;
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut parts = vec![format!("{} history series", series.len())];
    for (n, what) in
        inputs
            .given
            .into_iter()
            .zip(["result file", "test report", "doctor report", "trace"])
    {
        if n > 0 || what == "result file" {
            parts.push(count(n, what));
        }
    }
    eprintln!(
        "tardy: wrote {} ({}, {} KiB)",
        args.output.display(),
        parts.join(", "),
        html.len().div_ceil(1024)
    );
    Ok(())
}

type Alerts = Vec<tardy::store::history::Alert>;

/// The history's series (all, or those named) and its open alerts; none
/// without a database (a SQLite file must exist: a report never creates
/// one; a PostgreSQL URL is simply used).
fn history_part(args: &ReportArgs) -> Result<(Vec<view::SeriesView>, Alerts), String> {
    let err = |e: DbError| e.to_string();
    let exists = match super::history::backend(&args.db.db) {
        Backend::Sqlite(path) => {
            if !args.no_history && args.db.db.is_some() && !path.exists() {
                return Err(format!("no history database at '{}'", path.display()));
            }
            path.exists()
        }
        Backend::Postgres(_) => true,
    };
    if args.no_history || (!exists && args.series.is_empty()) {
        return Ok((Vec::new(), Vec::new()));
    }
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
        newest: None,
    };
    let mut series = Vec::new();
    for info in all
        .into_iter()
        .filter(|s| args.series.is_empty() || args.series.contains(&s.name))
    {
        series.push(view::series_view(&*store, info, &filter).map_err(err)?);
    }
    let alerts = store.alerts(&[AlertState::Open]).map_err(err)?;
    Ok((series, alerts))
}

/// The files given, read by kind.
struct Inputs {
    /// How many of each: results, test reports, doctor reports, traces.
    given: [usize; 4],
    datasets: Vec<tardy::ingest::Dataset>,
    test_reports: Vec<(String, reports::Report)>,
    doctors: Vec<(String, tardy::probe::result::DoctorReport)>,
    traces: Vec<tardy::diagnose::explain::Trace>,
}

fn read_files(files: &[String]) -> Result<Inputs, String> {
    let mut inputs = Inputs {
        given: [0; 4],
        datasets: Vec::new(),
        test_reports: Vec::new(),
        doctors: Vec::new(),
        traces: Vec::new(),
    };
    for f in files {
        let kind = kind_of(f)?;
        let path = std::path::Path::new(f);
        match kind {
            Kind::Trace => inputs.traces.push(super::explain::read_trace(path)?),
            Kind::Tests => {
                let r = reports::read_run(&[PathBuf::from(f)], false).map_err(|e| e.to_string())?;
                inputs.test_reports.push((f.clone(), r));
            }
            Kind::Doctor => inputs.doctors.push((f.clone(), super::doctor::load(path)?)),
            Kind::Results => inputs.datasets.push(
                ingest::read_path(f, Format::Auto, &NumberOptions::default())
                    .map_err(|e| e.to_string())?,
            ),
        }
        inputs.given[match kind {
            Kind::Results => 0,
            Kind::Tests => 1,
            Kind::Doctor => 2,
            Kind::Trace => 3,
        }] += 1;
    }
    Ok(inputs)
}

/// Commands (tardy, hyperfine, numbers): one chart per unit, every file's
/// sets in it side by side (a set named by its file when there are several
/// files). Benchmarks of a harness (Go, JMH, ...): one small chart per
/// benchmark and unit, its files side by side on its own scale (on one
/// axis, 80 ns and 27 µs benchmarks crushed each other).
fn result_views(datasets: &[tardy::ingest::Dataset]) -> Vec<ResultsView> {
    let mut results: Vec<ResultsView> = Vec::new();
    let several = datasets.len() > 1;
    for d in datasets {
        let file = std::path::Path::new(&d.source)
            .file_name()
            .map_or(d.source.clone(), |n| n.to_string_lossy().into_owned());
        let per_benchmark = d.format.is_benchmarks();
        for s in &d.series {
            let bench = if s.group.is_empty() {
                s.name.clone()
            } else {
                format!("{} ({})", s.name, s.group)
            };
            let set = ResultSet {
                name: if per_benchmark {
                    file.clone()
                } else if several {
                    format!("{file}: {}", s.name)
                } else {
                    s.name.clone()
                },
                n: s.values.len(),
                median: if s.values.is_empty() {
                    f64::NAN
                } else {
                    median_by_selection(&mut s.values.clone())
                },
                dots: spaced_order_statistics(&s.values, STRIP_DOTS),
                quartiles: tardy::stats::summarize(&s.values, 0.95).map(|x| (x.q1, x.q3)),
            };
            if per_benchmark {
                match results
                    .iter_mut()
                    .find(|r| r.unit == s.unit && r.source == bench)
                {
                    Some(r) => r.sets.push(set),
                    None => results.push(ResultsView {
                        source: bench,
                        unit: s.unit.clone(),
                        sets: vec![set],
                    }),
                }
                continue;
            }
            match results.iter_mut().find(|r| r.unit == s.unit) {
                Some(r) => {
                    r.sets.push(set);
                    if !r.source.split(", ").any(|x| x == file) {
                        r.source = format!("{}, {file}", r.source);
                    }
                }
                None => results.push(ResultsView {
                    source: file.clone(),
                    unit: s.unit.clone(),
                    sets: vec![set],
                }),
            }
        }
    }
    // A benchmark whose every value is one number (0 B/op in every run of
    // every file) has nothing to draw: the verdicts say it.
    let per_benchmark = datasets.iter().any(|d| d.format.is_benchmarks());
    results.retain(|r| {
        let mut all = r.sets.iter().flat_map(|s| s.dots.iter().copied());
        let first = all.next();
        !per_benchmark || all.any(|v| Some(v) != first)
    });
    results
}

/// Two or more result files: every later one against the first.
fn verdicts(
    datasets: Vec<tardy::ingest::Dataset>,
) -> Result<Option<tardy::analyze::compare::Report>, String> {
    if datasets.len() < 2 {
        return Ok(None);
    }
    let sides: Vec<Side> = datasets.into_iter().map(|d| Side::new(vec![d])).collect();
    compare::compare(
        &sides,
        &CompareOptions::default(),
        Correction::BenjaminiHochberg,
    )
    .map(Some)
    .map_err(|e| e.to_string())
}

fn tests_view(mut test_reports: Vec<(String, reports::Report)>) -> Result<Vec<TestsView>, String> {
    Ok(match test_reports.len() {
        0 => Vec::new(),
        1 => {
            let (source, r) = test_reports.remove(0);
            vec![TestsView::One {
                source,
                show: suite::show(&r, 25),
            }]
        }
        2 => {
            let (after, a) = test_reports.remove(1);
            let (before, b) = test_reports.remove(0);
            vec![TestsView::Diff {
                before,
                after,
                diff: suite::diff(&[b], &[a]),
            }]
        }
        n => {
            return Err(format!(
                "{n} test reports given: a report shows one, or the difference of two (before, after)"
            ));
        }
    })
}

fn doctor_view(
    doctors: &[(String, tardy::probe::result::DoctorReport)],
) -> Result<Option<tardy::diagnose::machine::MachineComparison>, String> {
    match doctors {
        [] => Ok(None),
        [(a_src, a), (b_src, b)] => Ok(Some(machine::compare(a, b, a_src, b_src))),
        _ => Err(format!(
            "{} doctor report{} given: a report compares two (`tardy doctor --save` on each machine)",
            doctors.len(),
            if doctors.len() == 1 { "" } else { "s" }
        )),
    }
}
