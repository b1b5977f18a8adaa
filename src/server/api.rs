//! The JSON API, version 1 (docs/api.md, docs/openapi.yaml): uploads of
//! results, test reports and points (bearer token with write scope; one
//! transaction each; a run id stored before is answered "duplicate" and
//! nothing is written), then incremental change-point detection on the
//! uploaded series; and reads of series, points, alerts, uploads, machines.

use std::sync::Arc;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::AppState;
use super::auth::{Scope, alert_id, authorize, query_params};
use super::error::ApiError;
use super::paging::{self, Paging};
use crate::history::detect::detect_with;
use crate::history::import::parse_time;
use crate::history::upload::{self, UploadKind, UploadMeta};
use crate::store::Batch;
use crate::store::history::{
    AlertState, Direction, PointFilter, SeriesOrder, Upload, UploadOutcome,
};

fn check_content_type(kind: UploadKind, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(ct) = headers.get(header::CONTENT_TYPE) else {
        return Ok(());
    };
    let ct = ct
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let ok: &[&str] = match kind {
        UploadKind::Runs => &["application/json", "text/plain"],
        UploadKind::Tests => &[
            "application/xml",
            "text/xml",
            "application/json",
            "application/x-ndjson",
            "application/gzip",
            "application/octet-stream",
            "text/plain",
        ],
        UploadKind::Points => &["text/csv", "application/json", "text/plain"],
    };
    if ok.contains(&ct.as_str()) || (ct.ends_with("+json") && ok.contains(&"application/json")) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!(
                "Content-Type '{}' is not accepted here (expected {})",
                ct.chars().take(60).collect::<String>(),
                ok.join(", ")
            ),
        ))
    }
}

/// A body over the server's limit (413).
fn too_large(max: u64) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the body is larger than this server's limit of {max} bytes (--max-body)"),
    )
}

/// The body's declared length, when it states one.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// The body, within the size limit and the body timeout.
async fn read_body(st: &AppState, headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let max = st.opts.max_body;
    let too_large = || too_large(max as u64);
    if declared_length(headers).is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    match tokio::time::timeout(st.opts.body_timeout, axum::body::to_bytes(body, max)).await {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!(
                "the body did not arrive within {} s",
                st.opts.body_timeout.as_secs_f64()
            ),
        )),
        Ok(Err(e)) => Err(body_error(&e, too_large)),
        Ok(Ok(b)) => Ok(b),
    }
}

/// What a body that could not be read is answered: too large (413), cut
/// off for its pace or its time (408), or else unreadable (400).
fn body_error(e: &(dyn std::error::Error + 'static), too_large: impl Fn() -> ApiError) -> ApiError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        match s.downcast_ref::<super::body::BodyError>() {
            Some(super::body::BodyError::TooLarge(_)) => return too_large(),
            Some(cut) => {
                return ApiError::new(StatusCode::REQUEST_TIMEOUT, "timeout", cut.to_string());
            }
            None => {}
        }
        if s.to_string().contains("length limit") {
            return too_large();
        }
        src = s.source();
    }
    ApiError::bad_request(format!("cannot read the body: {e}"))
}

/// The times a query parameter takes (`commit_time`, `since`): Unix seconds
/// or an RFC 3339 date, with a time or without, every day a real one. The
/// same pattern describes them in docs/openapi.yaml (a test holds the two
/// equal), so what the description calls invalid the server refuses, and
/// what it calls valid is taken: `0.5` or `2026-02-30` are a 400.
pub const QUERY_TIME_PATTERN: &str = concat!(
    "^([0-9]{1,11}|-[0-9]{1,10}|",
    "([1-9][0-9]{3}-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])",
    "|[1-9][0-9]{3}-(0[469]|11)-(0[1-9]|[12][0-9]|30)",
    "|[1-9][0-9]{3}-02-(0[1-9]|1[0-9]|2[0-8])",
    "|([1-9][0-9](0[48]|[2468][048]|[13579][26])|([13579][26]|[2468][048])00)-02-29)",
    "(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.][0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?)$"
);

/// A query parameter's time (see [`QUERY_TIME_PATTERN`]) in Unix seconds.
fn query_time(v: &str, what: &str) -> Result<i64, ApiError> {
    static PATTERN: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(QUERY_TIME_PATTERN).ok());
    PATTERN
        .as_ref()
        .filter(|p| p.is_match(v))
        .and_then(|_| parse_time(v))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "{what} {} is not Unix seconds or an RFC 3339 date (2026-11-28 or 2026-11-28T09:30:00Z)",
                crate::fmt::clip::quote(v)
            ))
        })
}

fn clean(v: &str, what: &str) -> Result<String, ApiError> {
    crate::history::names::label(v, what).map_err(ApiError::bad_request)
}

/// The upload's metadata (query parameters and `X-Tardy-*` headers) and
/// its run id if the client named one.
fn upload_meta(
    raw: Option<&str>,
    headers: &HeaderMap,
) -> Result<(UploadMeta, Option<String>), ApiError> {
    let q = query_params(
        raw,
        &[
            "commit",
            "branch",
            "commit_time",
            "commit_subject",
            "series",
            "suite",
            "machine",
            "direction",
            "run_id",
        ],
    )?;
    let mut meta = UploadMeta::default();
    if let Some(c) = q.get("commit") {
        meta.commit = Some(clean(c, "commit")?);
    }
    if let Some(b) = q.get("branch") {
        meta.branch = Some(clean(b, "branch")?);
    }
    if let Some(t) = q.get("commit_time") {
        meta.commit_time = Some(query_time(t, "commit_time")?);
    }
    if let Some(s) = q.get("commit_subject") {
        // A subject is free text: controls become spaces and it is cut to 200
        // characters, never refused (a long subject is no reason to lose an upload).
        let s: String = s
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(200)
            .collect();
        meta.subject = Some(s.trim().to_string()).filter(|s| !s.is_empty());
    }
    if q.contains_key("series") && q.contains_key("suite") {
        return Err(ApiError::bad_request(
            "give series or suite (its alias), not both",
        ));
    }
    if let Some(s) = q.get("series").or(q.get("suite")) {
        meta.series =
            Some(crate::history::names::prefix(s, "series").map_err(ApiError::bad_request)?);
    }
    if let Some(d) = q.get("direction") {
        meta.direction = Some(Direction::parse(d).ok_or_else(|| {
            ApiError::bad_request(format!(
                "direction '{d}' is not lower-is-better or higher-is-better"
            ))
        })?);
    }
    if let Some(fp) = headers.get("x-tardy-fingerprint") {
        let fp = fp
            .to_str()
            .ok()
            .and_then(|s| serde_json::from_str(s).ok())
            .ok_or_else(|| {
                ApiError::bad_request(
                    "X-Tardy-Fingerprint is not a tardy machine fingerprint (JSON)",
                )
            })?;
        meta.fingerprint = Some(fp);
    }
    if let Some(m) = q.get("machine") {
        let mut fp = meta.fingerprint.take().unwrap_or_default();
        fp.hostname = Some(clean(m, "machine")?);
        meta.fingerprint = Some(fp);
    }
    if headers.contains_key("x-tardy-run-id") && q.contains_key("run_id") {
        return Err(ApiError::bad_request(
            "give the run id as the X-Tardy-Run-Id header or the run_id query parameter, not both",
        ));
    }
    let run_id = headers
        .get("x-tardy-run-id")
        .map(|v| v.to_str().unwrap_or("\u{0}").to_string())
        .or_else(|| q.get("run_id").cloned());
    if let Some(id) = &run_id {
        let ok = !id.is_empty()
            && id.len() <= 128
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c));
        if !ok {
            return Err(ApiError::bad_request(
                "run id must be 1 to 128 characters of letters, digits, '.', '_', ':' or '-'",
            ));
        }
    }
    Ok((meta, run_id))
}

/// The header on an empty upload's answer that tells the largest body taken.
pub const MAX_BODY_HEADER: &str = "x-tardy-max-body";

/// Room in the spool for one body: its bytes, given back when dropped.
struct Spool<'a>(&'a AppState, u64);

impl<'a> Spool<'a> {
    fn reserve(st: &'a AppState, bytes: u64) -> Option<Spool<'a>> {
        use std::sync::atomic::Ordering::SeqCst;
        st.spooled
            .fetch_update(SeqCst, SeqCst, |now| {
                (now + bytes <= super::SPOOL_BUDGET).then_some(now + bytes)
            })
            .ok()
            .map(|_| Spool(st, bytes))
    }
}

impl Drop for Spool<'_> {
    fn drop(&mut self) {
        self.0
            .spooled
            .fetch_sub(self.1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The body written to an unnamed temporary file as it arrives, within
/// the size limit and the body timeout (the same answers as [`read_body`]).
async fn spool_body(
    st: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<std::fs::File, ApiError> {
    use http_body_util::BodyExt;
    let max = st.opts.max_body as u64;
    let too_large = || too_large(max);
    if declared_length(headers).is_some_and(|n| n > max) {
        return Err(too_large());
    }
    let mut file = tempfile::tempfile()
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "spool", e.to_string()))?;
    let read = async {
        let mut body = body;
        let mut n = 0u64;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| body_error(&e, too_large))?;
            if let Ok(data) = frame.into_data() {
                n += data.len() as u64;
                if n > max {
                    return Err(too_large());
                }
                std::io::Write::write_all(&mut file, &data).map_err(|e| {
                    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "spool", e.to_string())
                })?;
            }
        }
        Ok(())
    };
    match tokio::time::timeout(st.opts.body_timeout, read).await {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!(
                "the body did not arrive within {} s",
                st.opts.body_timeout.as_secs_f64()
            ),
        )),
        Ok(r) => r,
    }?;
    std::io::Seek::rewind(&mut file)
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "spool", e.to_string()))?;
    Ok(file)
}

/// The turn of a large upload (one at a time).
async fn large_turn(st: &AppState) -> Result<tokio::sync::SemaphorePermit<'_>, ApiError> {
    st.large_uploads.acquire().await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the server is stopping",
        )
    })
}

async fn upload(st: Arc<AppState>, req: Request, kind: UploadKind) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    authorize(&st, &parts.headers, Scope::Write)?;
    check_content_type(kind, &parts.headers)?;
    let (meta, run_id) = upload_meta(parts.uri.query(), &parts.headers)?;
    // A large upload (or one of unknown length) waits for its turn before its body
    // is read: one at a time, whatever arrives at once.
    // An empty body is refused at once, saying how large a body may be:
    // `tardy push` asks this way before it sends a large file, so that a
    // bad token or an oversized file is told in one round trip, not after
    // the whole body (the answer would be lost in a reset connection).
    if parts
        .headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|v| v.as_bytes() == b"0")
    {
        let mut r = ApiError::bad_request("the body is empty").into_response();
        r.headers_mut()
            .insert(MAX_BODY_HEADER, HeaderValue::from(st.opts.max_body as u64));
        return Ok(r);
    }
    // What a body weighs says little when it is compressed: a gzip body
    // always takes the turn.
    let compressed = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("gzip"));
    let declared = declared_length(&parts.headers);
    let large = compressed || declared.is_none_or(|n| n >= super::LARGE_UPLOAD);
    // A large body arrives into a temporary file before the turn is taken
    // (a slow sender then holds only its own connection), unless the files
    // of bodies arriving now already hold the spool's budget.
    let spool = if large {
        Spool::reserve(&st, declared.unwrap_or(st.opts.max_body as u64))
    } else {
        None
    };
    let (mut turn, bytes) = match spool {
        Some(spool) => {
            let file = spool_body(&st, &parts.headers, body).await?;
            let turn = large_turn(&st).await?;
            drop(spool);
            let bytes = tokio::task::spawn_blocking(move || {
                let mut f = file;
                let mut v = Vec::new();
                std::io::Read::read_to_end(&mut f, &mut v).map(|_| Bytes::from(v))
            })
            .await
            .map_err(|_| ApiError::bad_request("reading the spooled body failed"))?
            .map_err(|e| ApiError::bad_request(format!("reading the spooled body: {e}")))?;
            (Some(turn), bytes)
        }
        None => {
            let turn = if large {
                Some(large_turn(&st).await?)
            } else {
                None
            };
            (turn, read_body(&st, &parts.headers, body).await?)
        }
    };
    if bytes.is_empty() {
        return Err(ApiError::bad_request("the body is empty"));
    }
    let large = large || bytes.starts_with(&[0x1f, 0x8b]);
    if large && turn.is_none() {
        // Gzip sent under another content type: its turn once it is in
        // (it is small on the wire, so waiting with it costs little).
        turn = Some(large_turn(&st).await?);
    }
    let _turn = turn;
    let run_id = run_id.unwrap_or_else(|| upload::content_run_id(kind, &meta, &bytes));
    let subject = meta.commit.clone().zip(meta.subject.clone());
    let budget = st.opts.read_budget;
    let limits = st.opts.limits;
    let started = std::time::Instant::now();
    let detect_after = st.opts.detect.clone();
    let windows = st.windows.clone();
    let rec = Upload {
        run_id: run_id.clone(),
        kind: kind.as_str().into(),
    };
    let worker = st.clone();
    // Read and store on one blocking thread: a hand-off between two was a
    // thread wake-up per upload.
    let stored = tokio::task::spawn_blocking(move || {
        // Reading's budget and limits hold while the body is read and its
        // error is told (which limit it hit); storing has its own.
        let reading_budget = crate::ingest::budget::start(budget);
        let reading_limits = crate::ingest::limits::start(limits);
        let parsed = upload::batches(kind, &bytes, "body", &meta);
        drop(bytes);
        let (batches, warnings): (Vec<Batch>, Vec<String>) = parsed.map_err(|e| {
            // A limit on what the body became is 413, naming the limit.
            match crate::ingest::limits::hit() {
                Some(w) => ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "too_large",
                    format!("the body {}", w.message()),
                ),
                None => ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid_body",
                    e.to_string(),
                ),
            }
        })?;
        drop(reading_limits);
        drop(reading_budget);
        let names: Vec<String> = batches.iter().map(|b| b.spec.name.clone()).collect();
        let points: usize = batches.iter().map(|b| b.points.len()).sum();
        let saved = worker.pool.with(move |store| {
            // Storing shares the upload's time budget with reading.
            let outcome = {
                let _budget =
                    crate::ingest::budget::start(budget.saturating_sub(started.elapsed()));
                store.save_upload(&rec, &batches)?
            };
            if let Some((commit, subject)) = &subject {
                store.note_commit(commit, subject)?;
            }
            let mut detection = None;
            if let Some(opts) = detect_after
                && matches!(outcome, UploadOutcome::Stored(_))
            {
                // Stored already: a failed detection is reported, not fatal.
                let names: Vec<String> = batches.iter().map(|b| b.spec.name.clone()).collect();
                detection =
                    Some(detect_with(store, &names, &opts, &windows).map_err(|e| e.to_string()));
            }
            // Regressions still open (not acknowledged or dismissed) in the
            // series of this upload, new or not: what `push --fail-on-regression`
            // fails on.
            // The upload is committed: from here on nothing turns the answer
            // into a failure (a client would send it again, or think it lost).
            let open: Result<Vec<crate::store::history::Alert>, String> =
                if matches!(outcome, UploadOutcome::Stored(_)) {
                    store
                        .alerts(&[AlertState::Open])
                        .map(|all| {
                            all.into_iter()
                                .filter(|a| {
                                    a.environment.is_empty()
                                        && a.members.iter().any(|m| {
                                            m.regression
                                                && batches.iter().any(|b| b.spec.name == m.series)
                                        })
                                })
                                .collect()
                        })
                        .map_err(|e| e.to_string())
                } else {
                    Ok(Vec::new())
                };
            Ok((outcome, detection, open))
        });
        saved
            .map(|(outcome, detection, open)| (names, points, warnings, outcome, detection, open))
            .map_err(ApiError::from)
    })
    .await
    .map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the request's worker failed",
        )
    })?;
    let (names, points, warnings, outcome, detection, open) = stored?;
    if large {
        // Give the large upload's memory back to the system now: glibc keeps freed
        // memory per thread arena, and the next large upload may run on another
        // thread, so without this the peak grows with the arenas used.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        tokio::task::spawn_blocking(|| {
            // SAFETY: malloc_trim only releases free memory.
            unsafe { libc::malloc_trim(0) };
        });
    }
    let (status, body) = match outcome {
        UploadOutcome::Duplicate { received_at } => (
            StatusCode::OK,
            json!({"status": "duplicate", "run_id": run_id, "received_at": received_at,
                   "message": "this run id was stored before; nothing was written"}),
        ),
        UploadOutcome::Stored(_) => {
            let alerts: Vec<serde_json::Value> = match &detection {
                Some(Ok(r)) => r
                    .new_alerts
                    .iter()
                    .map(|a| {
                        json!({"id": a.id, "kind": a.kind(), "from_commit": a.from_commit,
                               "to_commit": a.to_commit, "series": a.members.len(),
                               "url": format!("/alert/{}", a.id)})
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let (open, open_error) = match open {
                Ok(v) => (v, None),
                Err(e) => (Vec::new(), Some(e)),
            };
            let open: Vec<serde_json::Value> = open
                .iter()
                .map(|a| {
                    json!({"id": a.id, "kind": a.kind(), "from_commit": a.from_commit,
                           "to_commit": a.to_commit, "series": a.members.len(),
                           "url": format!("/alert/{}", a.id)})
                })
                .collect();
            let mut body = json!({"status": "stored", "run_id": run_id, "series": names,
                                  "points": points, "alerts": alerts,
                                  "open_regressions": open});
            if !warnings.is_empty() {
                body["warnings"] = json!(warnings);
            }
            if let Some(e) = open_error {
                eprintln!(
                    "tardy serve: upload {run_id} stored; its open alerts could not be read: {e}"
                );
                body["open_regressions_error"] = json!(e);
            }
            if let Some(Err(e)) = detection {
                eprintln!("tardy serve: detection after upload {run_id} failed: {e}");
                body["detection_error"] = json!(e);
            }
            (StatusCode::CREATED, body)
        }
    };
    Ok((status, Json(body)).into_response())
}

pub async fn upload_runs(
    State(st): State<Arc<AppState>>,
    req: Request,
) -> Result<Response, ApiError> {
    upload(st, req, UploadKind::Runs).await
}

pub async fn upload_tests(
    State(st): State<Arc<AppState>>,
    req: Request,
) -> Result<Response, ApiError> {
    upload(st, req, UploadKind::Tests).await
}

pub async fn upload_points(
    State(st): State<Arc<AppState>>,
    req: Request,
) -> Result<Response, ApiError> {
    upload(st, req, UploadKind::Points).await
}

/// `/healthz`: ok or not, and the schema version, from the last background
/// check (constant time, no database work per request); with a write
/// token, the details (tardy's version, the database, when it was checked).
pub async fn health(State(st): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    use std::sync::atomic::Ordering::Relaxed;
    let ok = st.health.ok.load(Relaxed);
    let mut body = json!({
        "status": if ok { "ok" } else { "unavailable" },
        "schema_version": st.health.schema_version.load(Relaxed),
    });
    let details = headers.contains_key(header::AUTHORIZATION)
        && authorize(&st, &headers, Scope::Write).is_ok();
    if details && let Some(o) = body.as_object_mut() {
        o.insert("version".into(), env!("CARGO_PKG_VERSION").into());
        o.insert("database".into(), st.pool.backend().describe().into());
        o.insert(
            "checked_at".into(),
            st.health.checked_at.load(Relaxed).into(),
        );
    }
    let code = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(body)).into_response()
}

pub async fn series(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    let q = query_params(q.as_deref(), &paging::PARAMS)?;
    let p = Paging::from_query(&q, SERIES_PER_PAGE, SERIES_PER_PAGE)?;
    let (total, rows) = st
        .db(move |s| s.series_page(p.offset(), p.per_page, SeriesOrder::Name))
        .await?;
    Ok(paged(
        Json(rows),
        p.headers("/api/v1/series", &q, Some(total), false),
    ))
}

/// Series a page of `/api/v1/series` lists (about 250 bytes each).
const SERIES_PER_PAGE: usize = 1000;
/// Points a page of `/api/v1/points` holds (about 150 bytes each).
const POINTS_PER_PAGE: usize = 5000;
/// Alerts a page of `/api/v1/alerts` lists, and the members each shows
/// (its largest changes; `/api/v1/alerts/{id}` pages through the rest).
const ALERTS_PER_PAGE: usize = 50;
const ALERTS_MAX_PER_PAGE: usize = 100;
const MEMBERS_IN_LIST: usize = 20;
/// Members a page of `/api/v1/alerts/{id}` holds (about 400 bytes each).
const MEMBERS_PER_PAGE: usize = 1000;

fn paged(body: impl IntoResponse, links: HeaderMap) -> Response {
    let mut r = body.into_response();
    r.headers_mut().extend(links);
    r
}

/// An alert with one page of its members (largest change first) and how
/// many it has in all (`members_total`).
fn alert_page(mut a: crate::store::history::Alert, members: Paging) -> serde_json::Value {
    let total = a.members.len();
    a.members = members.slice(std::mem::take(&mut a.members));
    let mut v = serde_json::to_value(a).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("members_total".into(), total.into());
    }
    v
}

pub async fn points(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    let q = query_params(
        q.as_deref(),
        &["series", "branch", "since", "page", "per_page"],
    )?;
    let p = Paging::from_query(&q, POINTS_PER_PAGE, POINTS_PER_PAGE)?;
    let name = q
        .get("series")
        .cloned()
        .ok_or_else(|| ApiError::bad_request("missing query parameter 'series'"))?;
    let filter = PointFilter {
        branch: q.get("branch").cloned(),
        since: match q.get("since") {
            None => None,
            Some(t) => Some(query_time(t, "since")?),
        },
        // One more than the page: whether an older page has any.
        newest: Some(p.per_page + 1),
        skip_newest: p.offset(),
    };
    let (body, more) = st
        .db(move |s| {
            let info = s
                .series(&name)?
                .ok_or_else(|| crate::store::DbError::NoSeries(name.clone()))?;
            let mut points = s.points(info.id, &filter)?;
            let more = points.len() > p.per_page;
            if more {
                points.remove(0);
            }
            Ok((json!({"series": info, "points": points}), more))
        })
        .await?;
    Ok(paged(
        Json(body),
        p.headers("/api/v1/points", &q, None, more),
    ))
}

/// `open` (default), `acknowledged`, `dismissed`, `retracted` or `all`.
pub fn alert_states(q: Option<&String>) -> Result<Vec<AlertState>, ApiError> {
    Ok(match q.map(String::as_str) {
        None | Some("open") => vec![AlertState::Open],
        Some("acknowledged") => vec![AlertState::Acknowledged],
        Some("dismissed") => vec![AlertState::Dismissed],
        Some("retracted") => vec![AlertState::Retracted],
        Some("all") => vec![
            AlertState::Open,
            AlertState::Acknowledged,
            AlertState::Dismissed,
            AlertState::Retracted,
        ],
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "state '{}' is not open, acknowledged, dismissed, retracted or all",
                other.chars().take(40).collect::<String>()
            )));
        }
    })
}

pub async fn alerts(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    let q = query_params(q.as_deref(), &["state", "page", "per_page"])?;
    let states = alert_states(q.get("state"))?;
    let p = Paging::from_query(&q, ALERTS_PER_PAGE, ALERTS_MAX_PER_PAGE)?;
    let all = st.db(move |s| s.alerts(&states)).await?;
    let total = all.len();
    let first = Paging {
        page: 1,
        per_page: MEMBERS_IN_LIST,
    };
    let rows: Vec<_> = p
        .slice(all)
        .into_iter()
        .map(|a| alert_page(a, first))
        .collect();
    Ok(paged(
        Json(rows),
        p.headers("/api/v1/alerts", &q, Some(total), false),
    ))
}

pub async fn alert(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    let id = alert_id(&id)?;
    let q = query_params(q.as_deref(), &paging::PARAMS)?;
    let p = Paging::from_query(&q, MEMBERS_PER_PAGE, MEMBERS_PER_PAGE)?;
    let a = st
        .db(move |s| s.alert(id)?.ok_or(crate::store::DbError::NoAlert(id)))
        .await?;
    let total = a.members.len();
    Ok(paged(
        Json(alert_page(a, p)),
        p.headers(&format!("/api/v1/alerts/{id}"), &q, Some(total), false),
    ))
}

/// `ack`/`acknowledge`, `dismiss` or `reopen`.
pub fn action_state(action: &str) -> Result<AlertState, ApiError> {
    match action {
        "ack" | "acknowledge" => Ok(AlertState::Acknowledged),
        "dismiss" => Ok(AlertState::Dismissed),
        "reopen" => Ok(AlertState::Open),
        other => Err(ApiError::not_found(format!(
            "no action '{}' (ack, dismiss or reopen)",
            other.chars().take(40).collect::<String>()
        ))),
    }
}

pub async fn alert_action(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    Path((id, action)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Write)?;
    let id = alert_id(&id)?;
    let state = action_state(&action)?;
    st.db(move |s| s.set_alert_state(id, state)).await?;
    Ok(Json(json!({"id": id, "state": state})).into_response())
}

pub async fn uploads(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    let q = query_params(q.as_deref(), &["limit"])?;
    let limit = paging::number(&q, "limit", 1000, 50)? as i64;
    Ok(Json(st.db(move |s| s.uploads(limit)).await?).into_response())
}

pub async fn machines(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    authorize(&st, &headers, Scope::Read)?;
    Ok(Json(st.db(|s| s.machines()).await?).into_response())
}

pub async fn not_found(req: Request) -> Response {
    let path = req.uri().path().to_string();
    if path.starts_with("/api/") {
        ApiError::not_found(format!(
            "no such endpoint: {}",
            path.chars().take(80).collect::<String>()
        ))
        .into_response()
    } else {
        super::pages::not_found_page(&path)
    }
}

pub async fn method_not_allowed(req: Request) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} is not allowed on {}", req.method(), req.uri().path()),
    )
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/openapi.yaml describes `commit_time` and `since` with the very
    /// pattern the server checks (schemathesis's negative cases found the
    /// server taking `0.5`, which the description called invalid).
    #[test]
    fn the_query_time_pattern_is_the_described_one() {
        let yaml = include_str!("../../docs/openapi.yaml");
        let described = yaml
            .lines()
            .find_map(|l| l.split("schema: &when {type: string, pattern: '").nth(1))
            .and_then(|rest| rest.split("'}").next())
            .expect("docs/openapi.yaml describes commit_time with a pattern (&when)");
        assert_eq!(described, QUERY_TIME_PATTERN);
        for ok in [
            "0",
            "1795832499",
            "-86400",
            "2026-11-28",
            "2024-02-29",
            "2000-02-29",
            "2026-11-28T09:30:00Z",
            "2026-11-28T09:30:00.123+05:30",
            "1999-12-31T23:59:59-08:00",
        ] {
            assert!(query_time(ok, "since").is_ok(), "{ok}");
        }
        for bad in [
            "0.5",
            "",
            " 1",
            "1e9",
            "2026-02-30",
            "2023-02-29",
            "1900-02-29",
            "2026-11-28T24:00:00Z",
            "2026-11-28T09:30:00",
            "2026-11-28 09:30:00Z",
            "999999999999",
        ] {
            let e = query_time(bad, "since").unwrap_err();
            assert_eq!(e.status, StatusCode::BAD_REQUEST, "{bad}");
        }
    }
}
