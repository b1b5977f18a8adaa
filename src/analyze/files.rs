//! `tardy compare`'s job as a library call: read the inputs (in parallel),
//! label them, keep what `--filter` keeps, regroup by `--col`, split them
//! into sides (each file its own, or the files against the `--vs` files)
//! and compare. The CLI checks its flags, builds a [`Request`] and renders
//! the [`super::compare::Report`].

use super::compare::{self, Report, Side};
use super::select::Filter;
use crate::ingest::{self, Format, NumberOptions};
use crate::stats::compare::{Correction, Options};

/// What to compare, and how.
pub struct Request<'a> {
    /// The inputs, a label each may carry (benchstat's `NAME=FILE`); `-`
    /// is standard input.
    pub files: Vec<(Option<&'a str>, &'a str)>,
    /// How many of `files` are the baseline when the rest are `--vs`
    /// candidates (`None`: each file is a side).
    pub baseline_files: Option<usize>,
    pub format: Format,
    pub numbers: NumberOptions,
    pub filter: Option<(Filter, &'a str)>,
    /// `--col KEY` (`.file`: by file).
    pub col: &'a str,
    /// `--row KEY` (`.fullname`: each benchmark its own row).
    pub row: &'a str,
    /// Configuration keys whose differences are allowed.
    pub ignore: &'a [String],
    pub options: Options,
    pub correction: Correction,
}

/// benchstat's labels: `NAME=FILE` is FILE labelled NAME, unless the whole
/// argument is itself a file.
pub fn labelled(args: &[String]) -> Vec<(Option<&str>, &str)> {
    fn label(f: &str) -> (Option<&str>, &str) {
        match f.split_once('=') {
            Some((name, path)) if !name.is_empty() && !std::path::Path::new(f).exists() => {
                (Some(name), path)
            }
            _ => (None, f),
        }
    }
    args.iter().map(|f| label(f)).collect()
}

/// `--filter QUERY` parsed (benchstat's query syntax), kept with its text.
pub fn filter(query: Option<&str>) -> Result<Option<(Filter, &str)>, String> {
    let parse = |q| {
        Filter::parse(q)
            .map(|p| (p, q))
            .map_err(|e| format!("--filter: {e}"))
    };
    query.map(parse).transpose()
}

/// The comparison, and what was noticed on the way (inputs that are one
/// file).
pub struct Compared {
    pub report: Report,
    pub warnings: Vec<String>,
}

/// Read, select, split and compare.
pub fn compare(req: Request) -> Result<Compared, String> {
    if req.numbers.column == 0 {
        return Err("--column starts at 1".into());
    }
    if req.numbers.delimiters.is_empty() {
        return Err("--delimiter needs at least one character".into());
    }
    if req.options.resamples == 0 {
        return Err("--resamples must be at least 1".into());
    }
    if req.col != ".file" && req.baseline_files.is_some() {
        return Err("--col regroups every input by a key; it cannot be used with --vs".into());
    }
    let all: Vec<&str> = req.files.iter().map(|(_, f)| *f).collect();
    if all.iter().filter(|f| **f == "-").count() > 1 {
        return Err("standard input (-) can be read only once".into());
    }
    let warnings = same_files(&all);
    let read = |f: &str| ingest::read_path(f, req.format, &req.numbers).map_err(|e| e.to_string());
    let mut datasets = std::thread::scope(|scope| {
        let handles: Vec<_> = all.iter().map(|&f| scope.spawn(move || read(f))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("reading an input failed".to_string()))
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    for (d, (label, _)) in datasets.iter_mut().zip(&req.files) {
        if let Some(l) = label {
            d.source = l.to_string();
        }
    }
    if let Some((f, text)) = &req.filter {
        super::select::filter(&mut datasets, f);
        if datasets.iter().all(|d| d.series.is_empty()) {
            return Err(format!(
                "--filter '{text}' keeps no benchmark of the inputs"
            ));
        }
    }
    if req.col != ".file" {
        datasets = super::select::columns(datasets, req.col);
        if datasets.len() < 2 {
            return Err(format!(
                "--col {}: every benchmark has the same value of it ('{}'), so there is nothing to compare",
                req.col,
                datasets.first().map_or("", |d| d.source.as_str())
            ));
        }
    }
    if req.row != ".fullname" {
        datasets = super::select::rows(datasets, req.row);
    }
    let sides: Vec<Side> = match req.baseline_files {
        None => datasets.into_iter().map(|d| Side::new(vec![d])).collect(),
        Some(n) => {
            let candidates = datasets.split_off(n);
            vec![Side::new(datasets), Side::new(candidates)]
        }
    };
    compare::check_config(&sides, req.ignore).map_err(|e| e.to_string())?;
    let report =
        compare::compare(&sides, &req.options, req.correction).map_err(|e| e.to_string())?;
    Ok(Compared { report, warnings })
}

/// A file compared with itself: any verdict is "same", by construction,
/// and says nothing about the program.
fn same_files(all: &[&str]) -> Vec<String> {
    let mut seen: Vec<(std::path::PathBuf, &str)> = Vec::new();
    let mut out = Vec::new();
    for f in all {
        if *f == "-" {
            continue;
        }
        if let Ok(p) = std::fs::canonicalize(f) {
            if let Some((_, first)) = seen.iter().find(|(q, _)| *q == p) {
                out.push(format!(
                    "{} and {} are the same file: it is compared with itself, so the samples are identical and any verdict is \"same\"",
                    crate::fmt::clip::quote(first),
                    crate::fmt::clip::quote(f)
                ));
            } else {
                seen.push((p, f));
            }
        }
    }
    out
}
