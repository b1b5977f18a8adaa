//! An upload's body and metadata as history points: what `tardy serve`
//! stores for `POST /api/v1/runs` (results JSON), `/api/v1/tests` (a test
//! report) and `/api/v1/points` (CSV or the points JSON below), and the run
//! id that makes a retried upload a no-op. `tardy push` uses the same run
//! id, so a retry after a lost answer is recognised.
//!
//! The points JSON:
//! `{"series": [{"name": "build", "unit": "s", "direction": "lower-is-better",
//!   "points": [{"value": 61.2, "commit": "3f2a", "branch": "main",
//!   "time": "2026-11-02T10:00:00Z", "samples": [61.0, 61.4]}]}]}`

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::import::{self, Labels, parse_time, read_csv, suite_batch};
use crate::ingest::error::IngestError;
use crate::ingest::reports;
use crate::probe::Fingerprint;
use crate::store::Batch;
use crate::store::history::{Direction, NewPoint, Provenance, SeriesSpec, now_s};

/// Which endpoint an upload came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadKind {
    Runs,
    Tests,
    Points,
}

impl UploadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            UploadKind::Runs => "runs",
            UploadKind::Tests => "tests",
            UploadKind::Points => "points",
        }
    }
}

/// What the uploader says about the body.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UploadMeta {
    pub commit: Option<String>,
    pub branch: Option<String>,
    /// Unix seconds.
    pub commit_time: Option<i64>,
    /// Series name (or prefix "NAME/benchmark" when a file holds several);
    /// for a test report, the suite's name (default "tests").
    pub series: Option<String>,
    /// The machine: a full fingerprint, or at least a name.
    pub fingerprint: Option<Fingerprint>,
    pub direction: Option<Direction>,
    /// The commit's subject line, shown beside its hash on the pages.
    pub subject: Option<String>,
}

impl UploadMeta {
    fn labels(&self) -> Labels {
        let now = now_s();
        Labels {
            series: self.series.clone(),
            provenance: Some(Provenance {
                commit: self.commit.clone(),
                branch: self.branch.clone(),
                commit_time: self.commit_time,
                run_time: now,
            }),
            fingerprint: self.fingerprint.clone(),
            direction: self.direction,
        }
    }
}

/// The run id of an upload nobody named: the SHA-256 of what was sent, so
/// the same upload sent twice is one run.
pub fn content_run_id(kind: UploadKind, meta: &UploadMeta, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(kind.as_str());
    for part in [&meta.commit, &meta.branch, &meta.series] {
        h.update([0]);
        h.update(part.as_deref().unwrap_or("").as_bytes());
    }
    h.update([0]);
    h.update(meta.commit_time.unwrap_or(0).to_le_bytes());
    h.update([0]);
    h.update(body);
    let digest = h.finalize();
    let hex = hex::encode(digest);
    format!("sha256-{}", &hex[..32])
}

/// The batches an upload holds, and warnings about what was read but left out.
/// `source` names the body in errors.
pub fn batches(
    kind: UploadKind,
    body: &[u8],
    source: &str,
    meta: &UploadMeta,
) -> Result<(Vec<Batch>, Vec<String>), IngestError> {
    let (batches, warnings) = read_batches(kind, body, source, meta)?;
    Ok((settle(batches, source)?, warnings))
}

/// Batches as stored: their labels follow the rules query labels follow
/// ([`names`](crate::history::names)), one batch per series (a series named
/// twice has its points joined), and no more series than this thread's cap
/// on distinct names ([`crate::ingest::limits`]).
fn settle(batches: Vec<Batch>, source: &str) -> Result<Vec<Batch>, IngestError> {
    use crate::history::names;
    let bad = |e: String| IngestError::at(source, None, e);
    let mut out: Vec<Batch> = Vec::with_capacity(batches.len());
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for mut b in batches {
        b.spec.name = names::label(&b.spec.name, "series name").map_err(bad)?;
        b.spec.metric = names::label(&b.spec.metric, "metric name").map_err(bad)?;
        if !b.spec.unit.is_empty() {
            b.spec.unit = names::label(&b.spec.unit, "unit").map_err(bad)?;
        }
        for p in &b.points {
            for (what, v) in [
                ("commit", &p.provenance.commit),
                ("branch", &p.provenance.branch),
            ] {
                if let Some(v) = v {
                    names::label(v, what).map_err(bad)?;
                }
            }
            for t in &p.tests {
                names::check_test_name(&t.name).map_err(bad)?;
            }
        }
        match seen.get(&b.spec.name) {
            Some(&i) => out[i].points.extend(b.points),
            None => {
                seen.insert(b.spec.name.clone(), out.len());
                out.push(b);
            }
        }
        if let Some(why) = crate::ingest::limits::series(out.len()) {
            return Err(IngestError::at(source, None, why));
        }
    }
    Ok(out)
}

fn read_batches(
    kind: UploadKind,
    body: &[u8],
    source: &str,
    meta: &UploadMeta,
) -> Result<(Vec<Batch>, Vec<String>), IngestError> {
    let labels = meta.labels();
    match kind {
        UploadKind::Runs => Ok((
            import::results_text_batches(text(body, source)?, source, &labels)?,
            Vec::new(),
        )),
        UploadKind::Tests => {
            let mut report = reports::read_run_bytes(body, source)?;
            // Tests that all lost their durations would store an empty suite: refuse,
            // naming the first bad value, rather than answer "stored" with 0 tests.
            if !report.cases.is_empty() && report.cases.iter().all(|c| c.duration_s.is_none()) {
                if let Some(w) = report.warnings.iter().find(|w| w.contains("unusable")) {
                    return Err(IngestError::at(
                        source,
                        None,
                        format!("no test has a usable `time`: {w}"),
                    ));
                }
            }
            let name = meta.series.clone().unwrap_or_else(|| "tests".into());
            let warnings = report.warnings.clone();
            let batch = suite_batch(
                &name,
                &mut report,
                &Labels {
                    series: None,
                    ..labels
                },
            );
            // Each distinct name is a test kept for good: capped per upload.
            let names = batch.points.first().map_or(0, |p| p.tests.len());
            if let Some(why) = crate::ingest::limits::names(names) {
                return Err(IngestError::at(source, None, why));
            }
            Ok((vec![batch], warnings))
        }
        UploadKind::Points => {
            let t = text(body, source)?;
            if t.trim_start().starts_with('{') {
                Ok((points_json(t, source, meta)?, Vec::new()))
            } else {
                let table = read_csv(t, source, "time")?;
                let warnings: Vec<String> = if table.text_columns.is_empty() {
                    Vec::new()
                } else {
                    vec![format!(
                        "text columns left out (not metrics): {}",
                        table.text_columns.join(", ")
                    )]
                };
                let out = import::csv_batches_owned(table, &labels);
                if out.iter().all(|b| b.points.is_empty()) {
                    return Err(IngestError::at(source, None, "holds no values".into()));
                }
                Ok((out, warnings))
            }
        }
    }
}

fn text<'a>(body: &'a [u8], source: &str) -> Result<&'a str, IngestError> {
    std::str::from_utf8(body).map_err(|e| {
        IngestError::at(
            source,
            None,
            format!(
                "is not UTF-8 text (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointsDoc {
    series: Vec<SeriesDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeriesDoc {
    name: String,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    metric: Option<String>,
    #[serde(default)]
    direction: Option<String>,
    points: Vec<PointDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointDoc {
    value: f64,
    #[serde(default)]
    commit: Option<String>,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    time: Option<serde_json::Value>,
    #[serde(default)]
    samples: Vec<f64>,
}

fn points_json(text: &str, source: &str, meta: &UploadMeta) -> Result<Vec<Batch>, IngestError> {
    let doc: PointsDoc = serde_json::from_str(text).map_err(|e| {
        IngestError::at(
            source,
            Some(e.line()),
            format!("column {}: {e}", e.column()),
        )
    })?;
    let now = now_s();
    let fingerprint = meta.fingerprint.clone().map(std::sync::Arc::new);
    let mut out = Vec::new();
    for (i, s) in doc.series.iter().enumerate() {
        if s.name.trim().is_empty() {
            return Err(IngestError::at(
                source,
                None,
                format!("series {}: needs a name", i + 1),
            ));
        }
        let mut spec = SeriesSpec::new(
            &match &meta.series {
                Some(prefix) => format!("{prefix}/{}", s.name),
                None => s.name.clone(),
            },
            s.metric.as_deref().unwrap_or("value"),
            &s.unit,
        );
        if let Some(d) = &s.direction {
            spec.direction = Direction::parse(d).ok_or_else(|| {
                IngestError::at(
                    source,
                    None,
                    format!(
                        "series '{}': direction '{d}' is not lower-is-better or higher-is-better",
                        s.name
                    ),
                )
            })?;
        } else if let Some(d) = meta.direction {
            spec.direction = d;
        }
        let mut points = Vec::new();
        for (k, p) in s.points.iter().enumerate() {
            let time = match &p.time {
                None => meta.commit_time,
                Some(serde_json::Value::Number(n)) => n.as_i64(),
                Some(serde_json::Value::String(t)) => Some(parse_time(t).ok_or_else(|| {
                    IngestError::at(
                        source,
                        None,
                        format!(
                            "series '{}' point {}: time '{t}' is not a date or Unix seconds",
                            s.name,
                            k + 1
                        ),
                    )
                })?),
                Some(other) => {
                    return Err(IngestError::at(
                        source,
                        None,
                        format!(
                            "series '{}' point {}: time {other} is not a date or Unix seconds",
                            s.name,
                            k + 1
                        ),
                    ));
                }
            };
            if !p.value.is_finite() || p.samples.iter().any(|v| !v.is_finite()) {
                return Err(IngestError::at(
                    source,
                    None,
                    format!(
                        "series '{}' point {}: values must be finite numbers",
                        s.name,
                        k + 1
                    ),
                ));
            }
            points.push(NewPoint {
                provenance: Provenance {
                    commit: p.commit.clone().or_else(|| meta.commit.clone()),
                    branch: p.branch.clone().or_else(|| meta.branch.clone()),
                    commit_time: time,
                    run_time: time.unwrap_or(now),
                },
                fingerprint: fingerprint.clone(),
                value: p.value,
                samples: p.samples.clone(),
                tests: Vec::new(),
            });
        }
        out.push(Batch { spec, points });
    }
    if out.iter().all(|b| b.points.is_empty()) {
        return Err(IngestError::at(source, None, "holds no points".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_json_and_its_errors() {
        let meta = UploadMeta {
            branch: Some("main".into()),
            ..UploadMeta::default()
        };
        let body = br#"{"series":[{"name":"build","unit":"s","points":[{"value":2,"commit":"a","time":"2026-01-02"},{"value":3,"time":1767400000}]}]}"#;
        let (b, _) = batches(UploadKind::Points, body, "body", &meta).unwrap();
        assert_eq!(b[0].points.len(), 2);
        assert_eq!(b[0].points[0].provenance.commit_time, Some(1767312000));
        assert_eq!(b[0].points[1].provenance.branch.as_deref(), Some("main"));
        for bad in [
            &br#"{"series":[{"name":"x","points":[{"valu":1}]}]}"#[..],
            br#"{"series":[{"name":"x","points":[{"value":1,"time":"soon"}]}]}"#,
            br#"{"series":[{"name":"","points":[{"value":1}]}]}"#,
            br#"{"series":[]}"#,
            b"time,x\n2026-01-01,abc\n",
            b"\xff\xfe",
        ] {
            assert!(batches(UploadKind::Points, bad, "body", &meta).is_err());
        }
    }

    #[test]
    fn the_same_upload_has_the_same_id() {
        let m = UploadMeta::default();
        let a = content_run_id(UploadKind::Runs, &m, b"x");
        assert_eq!(a, content_run_id(UploadKind::Runs, &m, b"x"));
        assert_ne!(a, content_run_id(UploadKind::Tests, &m, b"x"));
        let other = UploadMeta {
            commit: Some("c".into()),
            ..UploadMeta::default()
        };
        assert_ne!(a, content_run_id(UploadKind::Runs, &other, b"x"));
    }
}
