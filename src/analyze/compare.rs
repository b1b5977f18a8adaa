//! Pairing series across inputs and comparing each pair: the work behind
//! `tardy compare`.
//!
//! Inputs come in sides: the baseline side and one or more candidate sides,
//! each side pooling one or more files. When every input holds exactly one
//! series, sides are compared as wholes; otherwise series are matched by name
//! and unit, benchstat-style. A single input with several series (a
//! `tardy run` or hyperfine file with several commands) compares each series
//! with its first.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::ingest::{Dataset, Series};
use crate::probe::Fingerprint;
use crate::stats::compare::{self as engine, Correction, Estimate, Options};
use crate::stats::{Summary, summarize};

pub const SCHEMA: &str = "tardy.compare";
pub const SCHEMA_VERSION: u32 = 1;

/// One side of a comparison: the label and the datasets pooled into it.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub datasets: Vec<Dataset>,
}

impl Side {
    pub fn new(datasets: Vec<Dataset>) -> Side {
        let label = datasets
            .iter()
            .map(|d| d.source.as_str())
            .collect::<Vec<_>>()
            .join("+");
        Side { label, datasets }
    }
}

/// A candidate series against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Go: the configuration that sets this benchmark apart (`pkg=example.com/a`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    /// The series' name (the benchmark), or the candidate's label.
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    pub baseline: String,
    pub candidate: String,
    pub n: [usize; 2],
    pub center: [f64; 2],
    pub ratio: f64,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_value: f64,
    #[serde(deserialize_with = "crate::stats::nan_if_null")]
    pub p_adjusted: f64,
    pub test: String,
    /// `slower`, `faster`, `same` or `inconclusive`; for higher-is-better
    /// units (throughput) "slower" means worse, i.e. a lower value.
    pub verdict: engine::Verdict,
    pub min_detectable_effect: Option<f64>,
    pub runs_needed: Option<u64>,
    pub notes: Vec<String>,
    pub baseline_summary: Summary,
    pub candidate_summary: Summary,
    /// The full estimate behind the row.
    pub estimate: Estimate,
    /// Values for plots (not serialised): the raw values, or for a side of more than
    /// [`PLOT_VALUES`] that many evenly spaced order statistics (its shape, without a
    /// copy of every value).
    #[serde(skip)]
    pub values: [Vec<f64>; 2],
}

impl Row {
    /// A proven regression: slower (worse, for higher-is-better units) and
    /// significant or exact, whatever the target ([`Estimate::proven_slower`]).
    pub fn proven_regression(&self) -> bool {
        if self.higher_is_better {
            self.estimate.proven_faster()
        } else {
            self.estimate.proven_slower()
        }
    }

    /// A proven regression of more than `pct` (a fraction) at the lower
    /// end of its interval (for throughput, the lower end of the loss):
    /// what `--fail-if-slower` fails on.
    pub fn proven_slower_than(&self, pct: f64) -> bool {
        let least = match (self.ci_low, self.ci_high, self.higher_is_better) {
            (Some(lo), _, false) => lo - 1.0,
            (_, Some(hi), true) => 1.0 - hi,
            _ => 0.0,
        };
        self.proven_regression() && least > pct
    }
}

/// benchstat's summary row, per candidate and unit: the geometric mean of
/// each side's centres, and the geometric mean of the per-row ratios of
/// centres (not the Hodges-Lehmann ratios).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Geomean {
    pub candidate: String,
    pub unit: String,
    /// The group (`pkg=...`) it covers; empty for all rows of the candidate and unit.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub rows: usize,
    pub ratio: f64,
    pub center: [f64; 2],
}

/// What a family of many comparisons costs (see [`Report::family_cost`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyCost {
    /// The most common runs per side.
    pub runs: [usize; 2],
    /// The smallest p-value a rank test on that many runs can give.
    pub smallest_p: f64,
    /// The p-value the most significant row must reach: alpha / family
    /// for Holm and for Benjamini-Hochberg (whose later rows need less:
    /// the k-th smallest p-value passes at alpha k / family).
    pub first_bar: f64,
    /// The p-value every row must reach when each is tested alone.
    pub alpha: f64,
}

/// One benchmark of a single file, summarised (benchstat's one-file table):
/// what `tardy compare` gives for one file of benchmarks, where comparing
/// one benchmark with another would mean nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summarised {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub group: String,
    pub name: String,
    pub unit: String,
    pub summary: Summary,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub schema_version: u32,
    pub confidence: f64,
    pub test: engine::TestChoice,
    pub correction: Correction,
    /// The rows whose p-values were adjusted together: every row that was
    /// tested. Rows that cannot vary (exact units, every run identical on
    /// each side) are not: their difference is exact.
    #[serde(default)]
    pub family: usize,
    /// Rows left out of the family because they cannot vary.
    #[serde(default)]
    pub exact_rows: usize,
    /// The smallest p-value the family's typical row (the most common
    /// number of runs a side) can reach, and what the correction asks of
    /// the most significant row: reading both says whether the family's
    /// size leaves any row able to pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family_cost: Option<FamilyCost>,
    pub target_effect: f64,
    pub sides: Vec<String>,
    pub rows: Vec<Row>,
    pub geomeans: Vec<Geomean>,
    /// One file of benchmarks: each benchmark summarised, none compared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<Summarised>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompareError {
    #[error("nothing to compare: {0}")]
    Nothing(String),
    #[error("{name}: {source}")]
    Stats {
        name: String,
        source: engine::CompareError,
    },
    #[error(
        "{base} and {candidate} differ in their `{key}:` configuration ({base}: {base_values}; {candidate}: {candidate_values}): benchstat compares nothing across a differing key, and neither does tardy; --ignore {key} compares across it"
    )]
    Config {
        key: String,
        base: String,
        candidate: String,
        base_values: String,
        candidate_values: String,
    },
}

/// Go configuration keys that set a file's results apart (`note:`,
/// `toolchain:`, a `commit:` label, any custom key), as benchstat's tables
/// do: when the sides hold different values of one (a key the side does not
/// state counts as empty), nothing is compared across it unless `ignore`
/// names it. The machine's keys (goos, goarch, cpu) are compared with a
/// warning instead, and `pkg` names benchmarks. Keys that vary within a file
/// are part of its benchmarks' names already.
pub fn check_config(sides: &[Side], ignore: &[String]) -> Result<(), CompareError> {
    use std::collections::BTreeMap;
    use std::collections::BTreeSet;
    // Per side: each file-level key's values (keys constant within a file).
    let keys_of = |side: &Side| -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for d in side
            .datasets
            .iter()
            .filter(|d| d.format == crate::ingest::Format::Go)
        {
            let mut seen: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for (k, v) in &d.config {
                seen.entry(k).or_default().insert(v);
            }
            for (k, vs) in seen {
                if vs.len() == 1 {
                    out.entry(k.to_string())
                        .or_default()
                        .extend(vs.into_iter().map(str::to_string));
                }
            }
        }
        out
    };
    let Some((base, candidates)) = sides.split_first() else {
        return Ok(());
    };
    if !base
        .datasets
        .iter()
        .any(|d| d.format == crate::ingest::Format::Go)
    {
        return Ok(());
    }
    let b = keys_of(base);
    for cand in candidates {
        let c = keys_of(cand);
        let keys: BTreeSet<&String> = b.keys().chain(c.keys()).collect();
        for key in keys {
            if GO_MACHINE_KEYS.contains(&key.as_str())
                || key == "pkg"
                || ignore.iter().any(|i| i == key)
            {
                continue;
            }
            let empty = BTreeSet::new();
            let (bv, cv) = (b.get(key).unwrap_or(&empty), c.get(key).unwrap_or(&empty));
            if bv != cv {
                let show = |v: &BTreeSet<String>| {
                    if v.is_empty() {
                        "none".to_string()
                    } else {
                        v.iter().cloned().collect::<Vec<_>>().join(", ")
                    }
                };
                return Err(CompareError::Config {
                    key: key.clone(),
                    base: base.label.clone(),
                    candidate: cand.label.clone(),
                    base_values: show(bv),
                    candidate_values: show(cv),
                });
            }
        }
    }
    Ok(())
}

/// A series as compared: what names it, and its values, borrowed from the input
/// when one file holds it, pooled into a copy only when several inputs add up (a
/// 20-million-value file is never copied to be compared).
#[derive(Debug, Clone)]
struct View<'a> {
    group: String,
    name: String,
    unit: String,
    higher_is_better: bool,
    exact: bool,
    values: Cow<'a, [f64]>,
    /// The harness's summary when it kept only that (one file's).
    described: Option<crate::stats::described::Described>,
    /// How many summaries were pooled into `values` (each file's centre
    /// is then one sample).
    summaries: usize,
}

impl<'a> View<'a> {
    fn of(s: &'a Series) -> View<'a> {
        View {
            group: s.group.clone(),
            name: s.name.clone(),
            unit: s.unit.clone(),
            higher_is_better: s.higher_is_better,
            exact: s.exact,
            values: Cow::Borrowed(&s.values),
            described: s.described.clone(),
            summaries: usize::from(s.described.is_some()),
        }
    }

    /// Pool another input's series of the same benchmark into this one.
    fn pool(&mut self, s: &Series) {
        self.values.to_mut().extend_from_slice(&s.values);
        self.exact |= s.exact;
        self.summaries += usize::from(s.described.is_some());
        self.described = None;
    }
}

/// A map with a fast hasher (names are not chosen by an adversary here).
type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Series of a side, pooled by (group, name, unit), in first-seen order
/// (looked up in a map: a scan per series was quadratic in the number of
/// benchmarks).
fn pooled(side: &Side) -> Vec<View<'_>> {
    let mut out: Vec<View> = Vec::new();
    let mut at: FastMap<(&str, &str, &str), usize> = FastMap::default();
    for d in &side.datasets {
        for s in &d.series {
            match at.entry((s.group.as_str(), s.name.as_str(), s.unit.as_str())) {
                std::collections::hash_map::Entry::Occupied(e) => out[*e.get()].pool(s),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(out.len());
                    out.push(View::of(s));
                }
            }
        }
    }
    out
}

/// The candidates of one comparison, indexed for [`Partners::of`].
struct Partners<'v, 'a> {
    cs: &'v [View<'a>],
    exact: FastMap<(&'v str, &'v str, &'v str), usize>,
    /// By (name, unit): the candidates, and how many baseline series share it.
    loose: FastMap<(&'v str, &'v str), (Vec<usize>, usize)>,
}

impl<'v, 'a> Partners<'v, 'a> {
    fn new(bs: &'v [View], cs: &'v [View<'a>]) -> Partners<'v, 'a> {
        let mut exact = FastMap::default();
        let mut loose: FastMap<(&str, &str), (Vec<usize>, usize)> = FastMap::default();
        for (i, c) in cs.iter().enumerate() {
            exact
                .entry((c.group.as_str(), c.name.as_str(), c.unit.as_str()))
                .or_insert(i);
            loose
                .entry((c.name.as_str(), c.unit.as_str()))
                .or_default()
                .0
                .push(i);
        }
        for b in bs {
            if let Some(e) = loose.get_mut(&(b.name.as_str(), b.unit.as_str())) {
                e.1 += 1;
            }
        }
        Partners { cs, exact, loose }
    }

    /// The candidate series that matches `b` (its index): same group, name
    /// and unit; or, when one side states no group (a file without `pkg:`
    /// lines), the only one with that name and unit.
    fn of(&self, b: &View) -> Option<usize> {
        if let Some(&i) = self
            .exact
            .get(&(b.group.as_str(), b.name.as_str(), b.unit.as_str()))
        {
            return Some(i);
        }
        let (candidates, baselines) = self.loose.get(&(b.name.as_str(), b.unit.as_str()))?;
        let mut found = candidates
            .iter()
            .filter(|&&i| self.cs[i].group.is_empty() || b.group.is_empty());
        let c = *found.next()?;
        (found.next().is_none() && *baselines == 1).then_some(c)
    }
}

fn label(s: &View) -> String {
    if s.group.is_empty() {
        format!("'{}' ({})", s.name, s.unit)
    } else {
        format!("'{}' ({}, {})", s.name, s.unit, s.group)
    }
}

/// All values of a side whose inputs hold one series each (borrowed when it is one
/// input).
fn whole(side: &Side) -> View<'_> {
    let mut v = View::of(&side.datasets[0].series[0]);
    for d in &side.datasets[1..] {
        v.pool(&d.series[0]);
    }
    View {
        name: side.label.clone(),
        ..v
    }
}

/// One pair to compare: its name, the baseline's and the candidate's
/// labels, and their series.
type Pair<'a> = (String, String, String, View<'a>, View<'a>);

/// The row of one pair, or the warning that says why it has none; an
/// empty side is an error.
fn row_of(pair: Pair, opts: &Options) -> Result<Result<Row, String>, CompareError> {
    let (name, base_label, cand_label, a, b) = pair;
    // Counts (instructions, cycles) are sized by the counts' target.
    let counts = opts.for_counts();
    let opts = if crate::measure::counters::Metric::of_unit(&a.unit).is_some() {
        &counts
    } else {
        opts
    };
    let result = match described(&a, &b) {
        Some((da, db)) => crate::stats::described::compare(&da, &db, opts),
        None => match engine::compare(&a.values, &b.values, opts) {
            Err(engine::CompareError::TooFew { .. })
                if !a.values.is_empty() && !b.values.is_empty() =>
            {
                single_run(&a.values, &b.values, opts)
            }
            r => r,
        },
    };
    let result = result.map(|mut e| {
        for v in [&a, &b] {
            if v.summaries >= 2 {
                e.notes.push(format!(
                    "{} summaries pooled: each file's centre is one sample",
                    v.summaries
                ));
            }
        }
        e
    });
    let e = match result {
        Ok(e) => exact(e, &a, &b),
        Err(source) => {
            // Named by the row (one file's rows share their labels).
            let err = CompareError::Stats {
                name: format!("{}: {cand_label} vs {base_label}", label(&a)),
                source,
            };
            return Ok(Err(format!("not compared: {err}")));
        }
    };
    let summary = |v: &View| {
        v.described
            .as_ref()
            .map(|d| d.summary(opts.confidence))
            .or_else(|| summarize(&v.values, opts.confidence))
    };
    let (sa, sb) = (
        summary(&a).ok_or_else(|| CompareError::Nothing(format!("{name}: empty baseline")))?,
        summary(&b).ok_or_else(|| CompareError::Nothing(format!("{name}: empty candidate")))?,
    );
    Ok(Ok(Row {
        group: a.group.clone(),
        name,
        unit: a.unit.clone(),
        higher_is_better: a.higher_is_better,
        baseline: base_label,
        candidate: cand_label,
        n: [e.n_baseline, e.n_candidate],
        center: [e.center_baseline, e.center_candidate],
        ratio: e.ratio,
        ci_low: e.ci_low,
        ci_high: e.ci_high,
        p_value: e.p_value,
        p_adjusted: e.p_adjusted,
        test: e.test.clone(),
        verdict: e.verdict,
        min_detectable_effect: e.min_detectable_effect,
        runs_needed: e.runs_needed,
        notes: e.notes.clone(),
        baseline_summary: sa,
        candidate_summary: sb,
        estimate: e,
        values: [for_plot(&a.values), for_plot(&b.values)],
    }))
}

/// Compare every candidate side with the first side.
pub fn compare(
    sides: &[Side],
    opts: &Options,
    correction: Correction,
) -> Result<Report, CompareError> {
    let mut warnings = machine_warnings(sides);
    let mut pairs: Vec<Pair> = Vec::new();
    match sides {
        [] => return Err(CompareError::Nothing("no inputs".into())),
        [only] if of_benchmarks(only) => {
            let mut r = summarise_only(only, opts, correction);
            r.warnings.extend(warnings);
            return Ok(r);
        }
        [only] => {
            let series = pooled(only);
            if series.len() < 2 {
                return Err(CompareError::Nothing(format!(
                    "{} holds one series; give a second file, or --vs FILES",
                    only.label
                )));
            }
            for s in &series[1..] {
                pairs.push((
                    s.name.clone(),
                    series[0].name.clone(),
                    s.name.clone(),
                    series[0].clone(),
                    s.clone(),
                ));
            }
        }
        [base, candidates @ ..] => {
            let single = sides
                .iter()
                .all(|s| s.datasets.iter().all(|d| d.series.len() == 1));
            for cand in candidates {
                if single {
                    let (b, c) = (whole(base), whole(cand));
                    // One benchmark per file: the row is the benchmark when both name it
                    // alike (Go, criterion); number files are named by their file.
                    let named = |s: &Side| {
                        let n = &s.datasets[0].series[0].name;
                        (s.datasets.iter().all(|d| d.series[0].name == *n)
                            && !s.datasets.iter().any(|d| d.source == *n))
                        .then(|| n.clone())
                    };
                    let name = match (named(base), named(cand)) {
                        (Some(x), Some(y)) if x == y => x,
                        _ => cand.label.clone(),
                    };
                    let group = base.datasets[0].series[0].group.clone();
                    pairs.push((
                        name,
                        base.label.clone(),
                        cand.label.clone(),
                        View { group, ..b },
                        c,
                    ));
                    continue;
                }
                let (bs, cs) = (pooled(base), pooled(cand));
                // Benchmarks pair by name, never by position: two files
                // that share no name hold different benchmarks (benchstat
                // compares nothing there either).
                let partners = Partners::new(&bs, &cs);
                let by_name = bs.iter().any(|b| partners.of(b).is_some());
                if !by_name {
                    // A few names a side, not thousands on one line.
                    let names = |v: &[View]| {
                        let shown: Vec<String> =
                            v.iter().take(5).map(|s| format!("'{}'", s.name)).collect();
                        match v.len().saturating_sub(shown.len()) {
                            0 => shown.join(", "),
                            more => format!("{} and {more} more", shown.join(", ")),
                        }
                    };
                    warnings.push(format!(
                        "nothing pairs by name: {} holds {}; {} holds {}; give both runs the same names (tardy run -n/--name), or compare files of one series each",
                        base.label,
                        names(&bs),
                        cand.label,
                        names(&cs)
                    ));
                    continue;
                }
                let mut used = vec![false; cs.len()];
                for b in &bs {
                    match partners.of(b) {
                        Some(i) => {
                            used[i] = true;
                            pairs.push((
                                b.name.clone(),
                                base.label.clone(),
                                cand.label.clone(),
                                b.clone(),
                                cs[i].clone(),
                            ))
                        }
                        None => {
                            warnings.push(format!("{} is missing from {}", label(b), cand.label))
                        }
                    }
                }
                for (c, used) in cs.iter().zip(used) {
                    if !used {
                        warnings.push(format!("{} is only in {}", label(c), cand.label));
                    }
                }
            }
        }
    }
    let pair_count = pairs.len();
    if pairs.is_empty() {
        let why = warnings
            .iter()
            .find(|w| w.starts_with("nothing pairs by name"))
            .cloned()
            .unwrap_or_else(|| "no series with the same name and unit on both sides".into());
        return Err(CompareError::Nothing(why));
    }
    // Each pair's row on its own (the tests dominate a large compare): in
    // chunks across the CPUs, in order.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(pairs.len().div_ceil(256).max(1));
    let chunk = pairs.len().div_ceil(threads).max(1);
    let outcomes: Vec<Result<Row, String>> = if threads <= 1 {
        pairs
            .into_iter()
            .map(|p| row_of(p, opts))
            .collect::<Result<_, _>>()?
    } else {
        let mut chunks: Vec<Vec<Pair>> = Vec::new();
        let mut it = pairs.into_iter();
        loop {
            let c: Vec<Pair> = it.by_ref().take(chunk).collect();
            if c.is_empty() {
                break;
            }
            chunks.push(c);
        }
        let parts: Vec<Result<Vec<Result<Row, String>>, CompareError>> =
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunks
                    .into_iter()
                    .map(|c| scope.spawn(move || c.into_iter().map(|p| row_of(p, opts)).collect()))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(CompareError::Nothing("a comparison thread failed".into()))
                        })
                    })
                    .collect()
            });
        let mut all = Vec::new();
        for p in parts {
            all.extend(p?);
        }
        all
    };
    let mut rows = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        match o {
            Ok(r) => rows.push(r),
            Err(w) => warnings.push(w),
        }
    }
    if rows.is_empty() {
        return Err(CompareError::Nothing(format!(
            "none of the {pair_count} pairs could be compared ({})",
            warnings.last().cloned().unwrap_or_default()
        )));
    }
    // Rows with no test (one run a side, a harness summary without a
    // spread) have no p-value to adjust: like exact rows, they stay out of
    // the family, so they never change another row's verdict.
    let family_size = rows.iter().filter(|r| in_family(&r.estimate)).count();
    let exact_rows = rows.iter().filter(|r| is_exact(&r.estimate)).count();
    let correction = if family_size > 1 {
        correction
    } else {
        Correction::None
    };
    {
        // Rows that cannot vary are not tested (any difference is exact):
        // they are not in the family, and have no p-value (null in JSON).
        let mut family: Vec<&mut Estimate> = rows
            .iter_mut()
            .map(|r| &mut r.estimate)
            .filter(|e| in_family(e))
            .collect();
        engine::adjust(&mut family, correction);
    }
    let family_cost = family_cost(&rows, opts, correction, family_size);
    for r in rows.iter_mut().filter(|r| is_exact(&r.estimate)) {
        r.estimate.p_value = f64::NAN;
        r.estimate.p_adjusted = f64::NAN;
        r.p_value = f64::NAN;
    }
    // Verdicts after the family's control; for throughput-like units a larger
    // value is an improvement, so the words flip, not the numbers.
    for r in &mut rows {
        let flip = r.higher_is_better;
        r.p_adjusted = r.estimate.p_adjusted;
        r.verdict = match (r.estimate.verdict, flip) {
            (engine::Verdict::Slower, true) => engine::Verdict::Faster,
            (engine::Verdict::Faster, true) => engine::Verdict::Slower,
            (v, _) => v,
        };
    }
    single_run_advice(&mut rows);
    let geomeans = geomeans(&rows);
    Ok(Report {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        confidence: opts.confidence,
        test: opts.test,
        correction,
        family: family_size,
        exact_rows,
        family_cost,
        target_effect: opts.target_effect,
        sides: sides.iter().map(|s| s.label.clone()).collect(),
        rows,
        geomeans,
        summaries: Vec::new(),
        warnings,
    })
}

/// A file whose entries are benchmarks (Go, pytest-benchmark, criterion),
/// not commands run side by side: comparing its entries with each other
/// means nothing.
fn of_benchmarks(side: &Side) -> bool {
    side.datasets.iter().all(|d| d.format.is_benchmarks())
}

/// One side of benchmarks: each summarised (benchstat's one-file table).
fn summarise_only(side: &Side, opts: &Options, correction: Correction) -> Report {
    let mut series = pooled(side);
    // Unit by unit within each group, as benchstat's tables (stable: the
    // file's order within).
    let first_seen = |keys: Vec<&str>| -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for k in keys {
            if !seen.iter().any(|x| x == k) {
                seen.push(k.to_string());
            }
        }
        seen
    };
    let groups = first_seen(series.iter().map(|v| v.group.as_str()).collect());
    let units = first_seen(series.iter().map(|v| v.unit.as_str()).collect());
    let at = |list: &[String], x: &str| list.iter().position(|y| y == x).unwrap_or(0);
    series.sort_by_key(|s| (at(&groups, &s.group), at(&units, &s.unit)));
    let summaries: Vec<Summarised> = series
        .iter()
        .filter_map(|s| {
            Some(Summarised {
                group: s.group.clone(),
                name: s.name.clone(),
                unit: s.unit.clone(),
                summary: crate::stats::summarize(&s.values, opts.confidence)?,
            })
        })
        .collect();
    Report {
        schema: SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        confidence: opts.confidence,
        test: opts.test,
        correction,
        family: 0,
        exact_rows: 0,
        family_cost: None,
        target_effect: opts.target_effect,
        sides: vec![side.label.clone()],
        rows: Vec::new(),
        geomeans: Vec::new(),
        summaries,
        warnings: Vec::new(),
    }
}

/// What the family costs: with Holm or Benjamini-Hochberg over many rows,
/// the first row must reach alpha / family, which few runs cannot (10 + 10
/// runs of a rank test reach 1.1e-5 at best: Holm over 15,000 rows asks
/// 3.3e-6 and finds nothing). `None` for one row or no correction.
fn family_cost(
    rows: &[Row],
    opts: &Options,
    correction: Correction,
    family: usize,
) -> Option<FamilyCost> {
    if correction == Correction::None || family < 2 {
        return None;
    }
    let mut counts: std::collections::HashMap<[usize; 2], usize> = Default::default();
    for r in rows.iter().filter(|r| in_family(&r.estimate)) {
        *counts.entry(r.n).or_default() += 1;
    }
    let (&runs, _) = counts.iter().max_by_key(|(n, c)| (**c, n[0], n[1]))?;
    let alpha = 1.0 - opts.confidence;
    Some(FamilyCost {
        runs,
        smallest_p: crate::stats::utest::min_p(runs[0], runs[1]),
        first_bar: alpha / family as f64,
        alpha,
    })
}

/// Geometric means per candidate and unit, per group (`pkg`) when there are several,
/// and over all of them.
fn geomeans(rows: &[Row]) -> Vec<Geomean> {
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.candidate.as_str(), r.unit.as_str())) {
            keys.push((r.candidate.as_str(), r.unit.as_str()));
        }
    }
    let mut out = Vec::new();
    for (cand, unit) in keys {
        let of: Vec<&Row> = rows
            .iter()
            .filter(|r| {
                r.candidate == cand && r.unit == unit && r.center[0] > 0.0 && r.center[1] > 0.0
            })
            .collect();
        let mut groups: Vec<&str> = Vec::new();
        for r in &of {
            if !groups.contains(&r.group.as_str()) {
                groups.push(&r.group);
            }
        }
        if groups.len() > 1 {
            for g in &groups {
                let rs: Vec<&Row> = of.iter().copied().filter(|r| r.group == *g).collect();
                out.extend(geomean(cand, unit, g, &rs));
            }
        }
        out.extend(geomean(cand, unit, "", &of));
    }
    out
}

fn geomean(cand: &str, unit: &str, group: &str, rs: &[&Row]) -> Option<Geomean> {
    if rs.len() < 2 {
        return None;
    }
    let n = rs.len() as f64;
    let g = |f: &dyn Fn(&Row) -> f64| (rs.iter().map(|r| f(r).ln()).sum::<f64>() / n).exp();
    Some(Geomean {
        candidate: cand.to_string(),
        unit: unit.to_string(),
        group: group.to_string(),
        rows: rs.len(),
        ratio: g(&|r| r.center[1] / r.center[0]),
        center: [g(&|r| r.center[0]), g(&|r| r.center[1])],
    })
}

/// Above this many values a side's plot is drawn from this many order statistics.
pub const PLOT_VALUES: usize = 1 << 16;

/// `values`, or `PLOT_VALUES` of their order statistics evenly spaced from the
/// smallest to the largest.
fn for_plot(values: &[f64]) -> Vec<f64> {
    crate::stats::summary::spaced_order_statistics(values, PLOT_VALUES)
}

/// One run a side: both values and their ratio, no test (there is no spread to test
/// against), and how many runs a test would need where the other rows show a spread.
fn single_run(a: &[f64], b: &[f64], opts: &Options) -> Result<Estimate, engine::CompareError> {
    let (ca, cb) = (
        crate::stats::summary::median_by_selection(&mut a.to_vec()),
        crate::stats::summary::median_by_selection(&mut b.to_vec()),
    );
    if !(ca.is_finite() && cb.is_finite()) {
        return Err(engine::CompareError::NonFinite);
    }
    if ca == 0.0 && cb != 0.0 {
        return Err(engine::CompareError::ZeroBaseline);
    }
    let few = a.len().min(b.len());
    Ok(Estimate {
        n_baseline: a.len(),
        n_candidate: b.len(),
        center_baseline: ca,
        center_candidate: cb,
        center_kind: "median".into(),
        ratio: if ca == cb { 1.0 } else { cb / ca },
        ci_low: None,
        ci_high: None,
        confidence: opts.confidence,
        p_value: 1.0,
        p_adjusted: 1.0,
        test: "none (one run on a side)".into(),
        verdict: engine::Verdict::Inconclusive,
        min_detectable_effect: None,
        runs_needed: None,
        runs_for_any_verdict: None,
        target_effect: opts.target_effect,
        notes: vec![format!(
            "{few} run on a side: no test is possible (a single value shows no spread); run more, e.g. `go test -bench . -count=10`"
        )],
    })
}

/// The two sides as summaries when either is one harness summary (the
/// other side's samples, when it has them, summarised alike).
fn described(
    a: &View,
    b: &View,
) -> Option<(
    crate::stats::described::Described,
    crate::stats::described::Described,
)> {
    use crate::stats::described::Described;
    if a.described.is_none() && b.described.is_none() {
        return None;
    }
    let of = |v: &View| {
        v.described
            .clone()
            .or_else(|| Described::of_values(&v.values))
    };
    Some((of(a)?, of(b)?))
}

/// Rows with one run on a side cannot say how many runs a test needs; rows of the same
/// unit that have a spread can: their median runs-needed is the advice.
fn single_run_advice(rows: &mut [Row]) {
    let single = |r: &Row| r.n[0].min(r.n[1]) < 2 && r.estimate.test.starts_with("none (one run");
    for i in 0..rows.len() {
        if !single(&rows[i]) {
            continue;
        }
        let mut needed: Vec<u64> = rows
            .iter()
            .filter(|o| o.unit == rows[i].unit && !single(o))
            .filter_map(|o| o.runs_needed)
            .collect();
        if needed.is_empty() {
            continue;
        }
        needed.sort_unstable();
        let n = needed[needed.len() / 2];
        let r = &mut rows[i];
        r.runs_needed = Some(n);
        r.estimate.runs_needed = Some(n);
        for note in &mut r.notes {
            if note.contains("run on a side") {
                note.push_str(&format!(
                    "; the other rows' spread says ~{n} runs a side detect {:.0}%",
                    r.estimate.target_effect * 100.0
                ));
            }
        }
        r.estimate.notes = r.notes.clone();
    }
}

/// The test named for an exact unit's rows.
const EXACT_TEST: &str = "none (exact: any difference is a difference)";

/// A row whose p-value the family's control adjusts: tested, not exact.
fn in_family(e: &Estimate) -> bool {
    !is_exact(e) && !e.test.starts_with("none (one run") && !e.test.starts_with("none (summaries")
}

fn is_exact(e: &Estimate) -> bool {
    e.test == EXACT_TEST
}

/// benchstat's `assume=exact`: the values have no noise, so the centres differ or not.
fn exact(mut e: Estimate, a: &View, b: &View) -> Estimate {
    let varies = |v: &[f64]| v.iter().any(|x| *x != v[0]);
    // Rows that cannot vary: every run of each side agreed (B/op, allocs/op,
    // instruction counts, a coarse timer): the difference, or its absence,
    // is exact whatever the number of runs. Such a row is never tested, and
    // never enters the family whose p-values are adjusted.
    let constant_sides =
        a.values.len() >= 2 && b.values.len() >= 2 && !varies(&a.values) && !varies(&b.values);
    if !(a.exact || b.exact || constant_sides) {
        return e;
    }
    if e.center_baseline != 0.0 {
        e.ratio = e.center_candidate / e.center_baseline;
    }
    e.ci_low = Some(e.ratio);
    e.ci_high = Some(e.ratio);
    e.p_value = if e.center_baseline == e.center_candidate {
        1.0
    } else {
        0.0
    };
    e.p_adjusted = e.p_value;
    e.verdict = engine::exact_verdict(e.center_baseline, e.center_candidate, e.target_effect);
    e.test = EXACT_TEST.into();
    e.min_detectable_effect = None;
    e.runs_needed = None;
    e.runs_for_any_verdict = None;
    // The notes of a test that was not run (its reach, its interval) go too.
    e.notes.retain(|n| {
        !n.contains("run on a side")
            && n != "all samples are equal"
            && !n.contains("test can never reach")
            && !n.starts_with("too few values for a")
    });
    if constant_sides && e.center_baseline != e.center_candidate {
        e.notes.push(format!(
            "every run identical on each side ({} and {} runs): the difference in {} is exact, not tested",
            e.n_baseline, e.n_candidate, a.unit
        ));
    } else if constant_sides {
        e.notes.push("all samples are equal".into());
    } else if varies(&a.values) || varies(&b.values) {
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        let (lo, hi) = range(if varies(&a.values) {
            &a.values
        } else {
            &b.values
        });
        e.notes.push(format!(
            "{} is declared exact (Unit {} assume=exact) but its values range from {lo} to {hi}: compared as exact, by their medians, as benchstat does",
            a.unit, a.unit
        ));
    }
    e
}

/// The Go configuration keys that describe the machine: benchstat puts results whose
/// values differ in separate tables and never compares them; tardy compares and warns.
const GO_MACHINE_KEYS: [&str; 3] = ["goos", "goarch", "cpu"];

fn go_machine_warnings(sides: &[Side]) -> Vec<String> {
    fn values<'a>(side: &'a Side, key: &str) -> Vec<&'a str> {
        let mut v: Vec<&str> = Vec::new();
        for d in &side.datasets {
            for (k, val) in &d.config {
                if k == key && !v.contains(&val.as_str()) {
                    v.push(val);
                }
            }
        }
        v
    }
    let Some((base, cands)) = sides.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for cand in cands {
        let diffs: Vec<String> = GO_MACHINE_KEYS
            .iter()
            .filter_map(|k| {
                let (a, b) = (values(base, k), values(cand, k));
                (!a.is_empty() && !b.is_empty() && a != b)
                    .then(|| format!("{k}: {} vs {}", a.join(", "), b.join(", ")))
            })
            .collect();
        if !diffs.is_empty() {
            out.push(format!(
                "{} and {} ran on different machines ({}): the difference includes the machine's (benchstat would not compare them)",
                base.label,
                cand.label,
                diffs.join("; ")
            ));
        }
    }
    out
}

/// Warn when the inputs were measured on machines or settings that differ.
fn machine_warnings(sides: &[Side]) -> Vec<String> {
    let mut out = go_machine_warnings(sides);
    out.extend(fingerprint_warnings(sides));
    out
}

fn fingerprint_warnings(sides: &[Side]) -> Vec<String> {
    let machines: Vec<(&str, &Fingerprint)> = sides
        .iter()
        .flat_map(|s| s.datasets.iter())
        .filter_map(|d| d.machine.as_ref().map(|m| (d.source.as_str(), m)))
        .collect();
    let Some((first_src, first)) = machines.first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (src, m) in &machines[1..] {
        let mut diffs: Vec<String> = first
            .differences(m)
            .into_iter()
            .map(|(what, a, b)| format!("{what} {a} vs {b}"))
            .collect();
        if first.hostname != m.hostname {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
            diffs.push(format!(
                "host {} vs {}",
                show(&first.hostname),
                show(&m.hostname)
            ));
        }
        if !diffs.is_empty() {
            out.push(format!(
                "{first_src} and {src} ran on different machines or settings: {}",
                diffs.join(", ")
            ));
        }
        let load = |f: &Fingerprint| f.load_avg_before.map_or(0.0, |l| l[0]);
        if (load(first) - load(m)).abs() > 1.0 {
            out.push(format!(
                "{first_src} and {src} ran under different load (1-minute load average {:.2} vs {:.2})",
                load(first),
                load(m)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_side_is_plotted_from_its_order_statistics() {
        let v: Vec<f64> = (0..200_000).rev().map(|i| i as f64).collect();
        let p = for_plot(&v);
        assert_eq!(p.len(), PLOT_VALUES);
        assert_eq!((p[0], p[PLOT_VALUES - 1]), (0.0, 199_999.0));
        assert!(p.windows(2).all(|w| w[0] <= w[1]));
        // The middle order statistic is the median, within one value.
        assert!(
            (p[PLOT_VALUES / 2] - 100_000.0).abs() < 4.0,
            "{}",
            p[PLOT_VALUES / 2]
        );
        assert_eq!(for_plot(&[3.0, 1.0]), [3.0, 1.0]);
    }
}
