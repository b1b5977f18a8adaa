//! `tardy report`'s content, gathered: the history's series (all, or those
//! named) with their open alerts, and the files given read by kind (result
//! sets as strip charts, every later one's verdicts against the first, one
//! test report or the difference of two, two machines' doctor reports,
//! `explain --save` traces). `render::report` writes the page.

use std::path::{Path, PathBuf};

use crate::analyze::compare::{self, Side};
use crate::analyze::suite;
use crate::diagnose::machine;
use crate::history::view;
use crate::ingest::reports;
use crate::ingest::{self, Format, NumberOptions};
use crate::render::report::{ResultSet, ResultsView, STRIP_DOTS, TestsView};
use crate::server::pool::Backend;
use crate::stats::compare::{Correction, Options as CompareOptions};
use crate::stats::summary::{median_by_selection, spaced_order_statistics};
use crate::store::DbError;
use crate::store::history::{AlertState, PointFilter};

/// What to gather.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    /// Files: results, test reports, doctor reports, traces (by content).
    pub files: Vec<String>,
    /// Only these history series (empty: all).
    pub series: Vec<String>,
    /// Leave the history database out.
    pub no_history: bool,
    /// Only points of this branch.
    pub branch: Option<String>,
    /// The history database (`None`: the default place) and project.
    pub db: Option<PathBuf>,
    pub project: String,
}

/// Everything a report shows.
pub struct Gathered {
    pub series: Vec<view::SeriesView>,
    pub alerts: Vec<crate::store::history::Alert>,
    pub results: Vec<ResultsView>,
    pub compare: Option<crate::analyze::compare::Report>,
    pub tests: Vec<TestsView>,
    pub doctor: Option<crate::diagnose::machine::MachineComparison>,
    pub traces: Vec<crate::diagnose::explain::Trace>,
    pub flame: Option<crate::diagnose::explain::functions::ReportFlame>,
    /// Two traces given: the second explained against the first.
    pub explained: Option<crate::diagnose::explain::compare::Comparison>,
    /// How many files of each kind: results, test reports, doctor reports, traces.
    pub given: [usize; 4],
}

impl Gathered {
    /// The page of all that was gathered, titled `title`.
    pub fn page<'a>(&'a self, title: &'a str) -> crate::render::report::Page<'a> {
        crate::render::report::Page {
            title,
            series: &self.series,
            alerts: &self.alerts,
            results: &self.results,
            compare: self.compare.as_ref(),
            tests: &self.tests,
            doctor: self.doctor.as_ref(),
            traces: &self.traces,
            flame: self.flame.as_ref(),
            explained: self.explained.as_ref(),
        }
    }
}

/// Read and compute everything `spec` asks for; an error when nothing is
/// there to show.
pub fn gather(spec: &Spec) -> Result<Gathered, String> {
    let (series, alerts) = history_part(spec)?;
    let inputs = read_files(&spec.files)?;
    let results = result_views(&inputs.datasets);
    let compare = verdicts(inputs.datasets)?;
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
    let flame = crate::diagnose::explain::functions::report_flame(&traces);
    let explained = match traces.as_slice() {
        [a, b] => Some(crate::diagnose::explain::compare(a, b)),
        _ => None,
    };
    Ok(Gathered {
        series,
        alerts,
        results,
        compare,
        tests,
        doctor,
        traces,
        flame,
        explained,
        given: inputs.given,
    })
}

/// `tardy explain --html`: one self-contained page of an explanation: the
/// causes, each side's categories, both critical paths on one time axis
/// (from the runs' timelines), the (differential) flame graph of the
/// sampled CPU and the functions that waited.
pub fn explain_html(done: &crate::diagnose::explain::job::Explained, title: &str) -> String {
    let flame = crate::diagnose::explain::functions::report_flame(&done.traces);
    crate::render::report::html(&crate::render::report::Page {
        title,
        traces: &done.traces,
        flame: flame.as_ref(),
        explained: done.comparison.as_ref(),
        ..Default::default()
    })
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

type Alerts = Vec<crate::store::history::Alert>;

/// The history's series (all, or those named) and its open alerts; none
/// without a database (a SQLite file must exist: a report never creates
/// one; a PostgreSQL URL is simply used).
fn history_part(args: &Spec) -> Result<(Vec<view::SeriesView>, Alerts), String> {
    let err = |e: DbError| e.to_string();
    let exists = match super::store::backend(args.db.as_deref()) {
        _ if super::branch::branch_of(args.db.as_deref()).is_some() => true,
        Backend::Sqlite(path) => {
            if !args.no_history && args.db.is_some() && !path.exists() {
                return Err(format!("no history database at '{}'", path.display()));
            }
            path.exists()
        }
        Backend::Postgres(_) => true,
    };
    if args.no_history || (!exists && args.series.is_empty()) {
        return Ok((Vec::new(), Vec::new()));
    }
    let store = super::store::open(args.db.as_deref(), &args.project).map_err(err)?;
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
        skip_newest: 0,
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
    datasets: Vec<crate::ingest::Dataset>,
    test_reports: Vec<(String, reports::Report)>,
    doctors: Vec<(String, crate::probe::result::DoctorReport)>,
    traces: Vec<crate::diagnose::explain::Trace>,
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
        let path = Path::new(f);
        match kind {
            Kind::Trace => inputs
                .traces
                .push(crate::diagnose::explain::job::read_trace(path)?),
            Kind::Tests => {
                let r = reports::read_run(&[PathBuf::from(f)], false).map_err(|e| e.to_string())?;
                inputs.test_reports.push((f.clone(), r));
            }
            Kind::Doctor => inputs
                .doctors
                .push((f.clone(), crate::probe::result::load(path)?)),
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
fn result_views(datasets: &[crate::ingest::Dataset]) -> Vec<ResultsView> {
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
                quartiles: crate::stats::summarize(&s.values, 0.95).map(|x| (x.q1, x.q3)),
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
    datasets: Vec<crate::ingest::Dataset>,
) -> Result<Option<crate::analyze::compare::Report>, String> {
    if datasets.len() < 2 {
        return Ok(None);
    }
    let sides: Vec<Side> = datasets.into_iter().map(|d| Side::new(vec![d])).collect();
    let mut report = compare::compare(
        &sides,
        &CompareOptions::default(),
        Correction::BenjaminiHochberg,
    )
    .map_err(|e| e.to_string())?;
    rank_changes_first(&mut report.rows);
    Ok(Some(report))
}

/// The page's verdict table puts what changed in its first screen: proven
/// regressions, then proven improvements, each by the size of the change,
/// then every other row in the order of the files (a regression in the
/// 28th of 30 benchmarks was 1,300 px down).
fn rank_changes_first(rows: &mut [crate::analyze::compare::Row]) {
    use crate::stats::compare::Verdict;
    let rank = |r: &crate::analyze::compare::Row| match r.verdict {
        _ if r.proven_regression() => 0,
        Verdict::Slower | Verdict::Faster => 1,
        _ => 2,
    };
    let size = |r: &crate::analyze::compare::Row| {
        if r.ratio.is_finite() && r.ratio > 0.0 {
            r.ratio.ln().abs()
        } else {
            0.0
        }
    };
    // Stable: unchanged rows keep the files' order.
    rows.sort_by(|a, b| {
        rank(a).cmp(&rank(b)).then_with(|| {
            if rank(a) < 2 {
                size(b).total_cmp(&size(a))
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
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
                diff: Box::new(suite::diff(&[b], &[a])),
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
    doctors: &[(String, crate::probe::result::DoctorReport)],
) -> Result<Option<crate::diagnose::machine::MachineComparison>, String> {
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
