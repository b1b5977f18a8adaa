//! The web pages: each handler gathers what its page shows from the store
//! (on a blocking thread) and hands it to [`crate::render::web`]. Changing
//! an alert's state from a page needs a write token typed into the form, or a
//! sign-in session of a write token with the form's CSRF token and a same-origin
//! `Origin`/`Referer` (see [`super::session`]); with `--read-token` every page
//! needs a token.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};

use super::AppState;
use super::auth::Scope;
use super::auth::{alert_id, authorize, check_token, query_params, session_of};
use super::error::ApiError;
use super::paging;
use super::session;
use crate::history::bisect::{bisect_plan, shell_line};
use crate::history::view::{series_view, test_view};
use crate::probe::Fingerprint;
use crate::render::web::{self, Overview, Pipeline, PipelineRow, TestChange};
use crate::stats::summary::median_by_selection;
use crate::store::history::{AlertState, PointFilter, SeriesKind, SeriesOrder};
use crate::store::{DbError, History};

/// Builds shown in the pipeline and points in the overview's sparklines.
const RECENT: usize = 12;

/// An error as an HTML page (the API answers JSON instead).
fn html_error(st: &AppState, e: ApiError) -> Response {
    let mut r = (
        e.status,
        Html(web::error_page(
            &st.opts.project,
            e.status.as_u16(),
            &e.message,
        )),
    )
        .into_response();
    if e.status == StatusCode::UNAUTHORIZED {
        r = (
            StatusCode::UNAUTHORIZED,
            Html(web::login_page(&st.opts.project, &e.message)),
        )
            .into_response();
    }
    r
}

fn respond(st: &AppState, r: Result<String, ApiError>) -> Response {
    match r {
        Ok(html) => Html(html).into_response(),
        Err(e) => html_error(st, e),
    }
}

pub fn not_found_page(path: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Html(web::error_page(
            "tardy",
            404,
            &format!(
                "There is no page at {}.",
                path.chars().take(80).collect::<String>()
            ),
        )),
    )
        .into_response()
}

/// A page read from the store: the read token checked, then `build` (made
/// from the request's parameters, or the reason it could not be) run with
/// the store and the project's name on a blocking thread.
async fn read_page<F>(
    st: &Arc<AppState>,
    headers: &HeaderMap,
    build: Result<F, ApiError>,
) -> Response
where
    F: FnOnce(&mut dyn History, &str) -> Result<String, DbError> + Send + 'static,
{
    let r = async {
        authorize(st, headers, Scope::Read)?;
        let build = build?;
        let project = st.opts.project.clone();
        st.db(move |s| build(s, &project)).await
    }
    .await;
    respond(st, r)
}

/// Points a series page draws (the newest; the API has them all).
pub const SERIES_PAGE_POINTS: usize = 2000;

/// Series a page of the overview lists.
pub const OVERVIEW_PAGE: usize = 100;
/// Points read for a series' sparkline and for a suite's pipeline row (its
/// latest change point is looked for among them).
const OVERVIEW_POINTS: usize = 300;

/// The overview: open alerts, then one page of the series, the most
/// recently measured first (`?page=N`), each with its recent points. The
/// page reads its own series only (their rank is kept at upload time), so
/// its cost and size do not grow with the history.
pub async fn overview(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let build = query_params(q.as_deref(), &["page"]).and_then(|q| {
        let page = paging::number(&q, "page", paging::MAX_PAGE, 1)?;
        Ok(move |s: &mut dyn History, project: &str| {
            let (total, infos) = s.series_page(
                (page - 1) * OVERVIEW_PAGE,
                OVERVIEW_PAGE,
                SeriesOrder::Recent,
            )?;
            let mut series = Vec::new();
            let mut suites = Vec::new();
            for info in infos {
                let points = s.recent_points(info.id, OVERVIEW_POINTS)?;
                let recent: Vec<f64> = points
                    .iter()
                    .rev()
                    .take(60)
                    .rev()
                    .map(|p| p.value)
                    .collect();
                if info.kind == SeriesKind::Suite {
                    suites.push((info.clone(), points));
                }
                series.push((info, recent));
            }
            let alerts = s.alerts(&[AlertState::Open])?;
            let commits: Vec<&str> = alerts
                .iter()
                .filter_map(|a| a.to_commit.as_deref())
                .collect();
            let subjects = s.commit_subjects(&commits)?;
            let uploads = s.uploads(15)?;
            let pipeline = pipeline(&suites);
            let changes = test_changes(s, &suites)?;
            Ok(web::overview(&Overview {
                project,
                series: &series,
                total_series: total,
                page,
                page_size: OVERVIEW_PAGE,
                alerts: &alerts,
                subjects: &subjects,
                uploads: &uploads,
                pipeline: &pipeline,
                changes: &changes,
            }))
        })
    });
    read_page(&st, &headers, build).await
}

/// The most recently measured suites of the page whose tests' latest
/// changes the overview ranks, the builds read for each (the latest and
/// those it is held against) and the tests listed.
const CHANGE_SUITES: usize = 5;
const CHANGE_POINTS: usize = 9;
const CHANGES: usize = 10;

/// The tests whose latest duration moved most from their median over the
/// builds before it, at least 1 ms and beyond three times their own spread
/// (the median absolute deviation, scaled), across the page's most recently
/// measured suites. Bounded: a few suites, a few builds each.
fn test_changes(
    s: &dyn History,
    suites: &[(
        crate::store::history::SeriesInfo,
        Vec<crate::store::history::Point>,
    )],
) -> Result<Vec<TestChange>, DbError> {
    let mut out = Vec::new();
    for (info, points) in suites.iter().take(CHANGE_SUITES) {
        let lo = points.len().saturating_sub(CHANGE_POINTS);
        if points.len() - lo < 4 {
            continue;
        }
        let w = s.tests_at(info.id, points[lo..].to_vec())?;
        let n = w.points.len();
        for (t, test) in w.tests.iter().enumerate() {
            let row = w.row(t);
            let latest = f64::from(row[n - 1]);
            let mut before: Vec<f64> = (row[..n - 1].iter())
                .filter(|v| !v.is_nan())
                .map(|&v| f64::from(v))
                .collect();
            if latest.is_nan() || before.len() < 3 {
                continue;
            }
            let med = median_by_selection(&mut before);
            let mut dev: Vec<f64> = before.iter().map(|v| (v - med).abs()).collect();
            let spread = 3.0 * 1.4826 * median_by_selection(&mut dev);
            if (latest - med).abs() < spread.max(0.001) {
                continue;
            }
            out.push(TestChange {
                suite: info.name.clone(),
                test: test.name.clone(),
                before_s: med,
                latest_s: latest,
                commit: w.points[n - 1].commit.clone(),
            });
        }
    }
    let size = |c: &TestChange| (c.latest_s - c.before_s).abs();
    out.sort_by(|a, b| {
        (size(b).total_cmp(&size(a)))
            .then_with(|| a.suite.cmp(&b.suite))
            .then_with(|| a.test.cmp(&b.test))
    });
    out.truncate(CHANGES);
    Ok(out)
}

fn pipeline(
    suites: &[(
        crate::store::history::SeriesInfo,
        Vec<crate::store::history::Point>,
    )],
) -> Pipeline {
    let key = |p: &crate::store::history::Point| {
        p.commit
            .clone()
            .unwrap_or_else(|| crate::render::history::date(p.time()))
    };
    // Builds in time order, newest RECENT. Commits that share a time (a
    // rebase gives every commit the same one) keep the order they were
    // uploaded in, which is the branch's order: the points' ids (by hash
    // they would shuffle).
    let mut builds: Vec<(i64, i64, String)> = Vec::new();
    for (_, points) in suites {
        for p in points.iter().rev().take(RECENT) {
            let k = key(p);
            match builds.iter_mut().find(|(_, _, b)| *b == k) {
                Some(b) => b.1 = b.1.min(p.id),
                None => builds.push((p.time(), p.id, k)),
            }
        }
    }
    builds.sort_by_key(|b| (b.0, b.1));
    let builds: Vec<String> = builds
        .into_iter()
        .rev()
        .take(RECENT)
        .rev()
        .map(|b| b.2)
        .collect();
    let rows = suites
        .iter()
        .map(|(info, points)| {
            let values: Vec<Option<f64>> = builds
                .iter()
                .map(|b| points.iter().rev().find(|p| key(p) == *b).map(|p| p.value))
                .collect();
            // The baseline is the suite before its latest change point: a lasting
            // slowdown stays red however many builds it fills (a median of the builds
            // shown would turn it green once it is most of them).
            let all: Vec<f64> = points.iter().map(|p| p.value).collect();
            let cps = crate::history::detect::Method::default().detect(&all);
            let (from, to) = match cps.as_slice() {
                [] => (0, all.len()),
                [only] => (0, only.index),
                [.., before, last] => (before.index, last.index),
            };
            let mut base: Vec<f64> = all[from.min(all.len())..to.min(all.len())].to_vec();
            let median = if base.is_empty() {
                f64::NAN
            } else {
                median_by_selection(&mut base)
            };
            PipelineRow {
                suite: info.name.clone(),
                unit: info.unit.clone(),
                cells: values
                    .into_iter()
                    .map(|v| v.map(|v| (v, if median > 0.0 { v / median } else { 1.0 })))
                    .collect(),
            }
        })
        .collect();
    Pipeline {
        builds: builds
            .iter()
            .map(|b| crate::render::history::short(Some(b)))
            .collect(),
        rows,
    }
}

fn filter_from(q: &std::collections::BTreeMap<String, String>) -> PointFilter {
    PointFilter {
        branch: q.get("branch").cloned().filter(|b| !b.is_empty()),
        since: None,
        newest: None,
        skip_newest: 0,
    }
}

pub async fn series(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let build = query_params(q.as_deref(), &["name", "branch", "tests"]).and_then(|q| {
        let name = q
            .get("name")
            .cloned()
            .ok_or_else(|| ApiError::bad_request("which series? (/series?name=NAME)"))?;
        let tests_page = paging::number(&q, "tests", paging::MAX_PAGE, 1)?;
        // The newest points only: a page stays small whatever the history.
        let filter = PointFilter {
            newest: Some(SERIES_PAGE_POINTS),
            ..filter_from(&q)
        };
        Ok(move |s: &mut dyn History, project: &str| {
            let info = s
                .series(&name)?
                .ok_or_else(|| DbError::NoSeries(name.clone()))?;
            // One page of a suite's tests: a suite of 100,000 tests listed
            // whole was a page of megabytes.
            let all = s.tests(info.id)?;
            let tests = web::TestsShown {
                total: all.len(),
                page: tests_page,
                names: all
                    .into_iter()
                    .skip((tests_page - 1) * web::TESTS_PER_PAGE)
                    .take(web::TESTS_PER_PAGE)
                    .map(|t| t.name)
                    .collect(),
            };
            let annotations: Vec<_> = s
                .annotations()?
                .into_iter()
                .filter(|a| a.series.as_deref().is_none_or(|n| n == name))
                .collect();
            // Its wall time and its counts, measured alongside (tardy run --metric).
            let mut alongside = Vec::new();
            for other in crate::history::names::companions(&name) {
                if let Some(o) = s.series(&other)? {
                    alongside.push(series_view(s, o, &filter)?);
                }
            }
            let view = series_view(s, info, &filter)?;
            Ok(web::series_page(
                project,
                &view,
                &alongside,
                &annotations,
                &tests,
            ))
        })
    });
    read_page(&st, &headers, build).await
}

pub async fn test(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    let build = query_params(q.as_deref(), &["series", "name", "branch"]).and_then(|q| {
        let (Some(series), Some(name)) = (q.get("series").cloned(), q.get("name").cloned()) else {
            return Err(ApiError::bad_request(
                "which test? (/test?series=SUITE&name=TEST)",
            ));
        };
        let filter = filter_from(&q);
        Ok(move |s: &mut dyn History, project: &str| {
            let info = s
                .series(&series)?
                .ok_or_else(|| DbError::NoSeries(series.clone()))?;
            let view = test_view(s, info, &name, &filter)?.ok_or(DbError::NoTest {
                suite: series,
                test: name,
            })?;
            Ok(web::test_page(project, &view))
        })
    });
    read_page(&st, &headers, build).await
}

pub async fn alert(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    // Signed in with a write token: the forms carry the session's CSRF token and
    // need no token box.
    let csrf = session_of(&st, &headers)
        .filter(|s| s.scope == Scope::Write)
        .map(|s| s.csrf);
    let build = alert_id(&id).map(|id| {
        move |s: &mut dyn History, project: &str| {
            let alert = s.alert(id)?.ok_or(DbError::NoAlert(id))?;
            let bisect = match bisect_plan(s, &alert, None, 0) {
                Ok(plan) => web::BisectOffer {
                    command: Some(format!("tardy {}", shell_line(&plan.argv))),
                    ready: true,
                    note: None,
                    wider: plan.wider.map(|(good, bad)| {
                        format!(
                            "If its ends do not reproduce the change, widen the range to {good}..{bad}: tardy history bisect {} --widen 1",
                            alert.id
                        )
                    }),
                },
                // Without a stored command: the range, and a command to fill in.
                Err(why) => match (&alert.from_commit, &alert.to_commit) {
                    (Some(good), Some(bad)) => web::BisectOffer {
                        command: Some(format!(
                            "tardy bisect --good {} --bad {} -- 'YOUR BENCHMARK OR TEST COMMAND'",
                            shell_line(std::slice::from_ref(good)),
                            shell_line(std::slice::from_ref(bad))
                        )),
                        ready: false,
                        note: Some(why),
                        wider: None,
                    },
                    _ => web::BisectOffer {
                        note: Some(why),
                        ..Default::default()
                    },
                },
            };
            let context = alert_context(s, &alert)?;
            Ok(web::alert_page(
                project,
                &alert,
                &bisect,
                csrf.as_deref(),
                &context,
            ))
        }
    });
    read_page(&st, &headers, build).await
}

/// The most points a side of an alert's boundary contributes to a test's mean.
const SIDE_POINTS: usize = 20;

/// What the alert page draws beside its table: the charts of the first three
/// affected series, and for a suite, the shape of its slowdown from every test's
/// mean before and after the boundary (as `tardy tests diff` gives it).
fn alert_context(
    s: &mut dyn History,
    alert: &crate::store::history::Alert,
) -> Result<web::AlertContext, DbError> {
    // The first three series among the members (largest change first): an
    // alert of 100,000 series reads three, not all of them.
    let mut names: Vec<&str> = Vec::new();
    for m in &alert.members {
        if names.len() == 3 {
            break;
        }
        if !names.contains(&m.series.as_str()) {
            names.push(&m.series);
        }
    }
    let mut context = web::AlertContext::default();
    let commits: Vec<&str> = [&alert.from_commit, &alert.to_commit]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    context.subjects = s.commit_subjects(&commits)?;
    for name in names {
        let Some(info) = s.series(name)? else {
            continue;
        };
        if info.kind == SeriesKind::Suite
            && let Some(shapes) = suite_shapes(s, &info, alert)?
        {
            context.shapes.push((info.name.clone(), shapes));
        }
        context
            .charts
            .push(series_view(s, info, &PointFilter::default())?);
    }
    Ok(context)
}

/// The shape of a suite's change at an alert, from the same code as
/// `tardy tests diff`: each of the suite's points either side of the
/// boundary (up to [`SIDE_POINTS`]) is one run of the suite. The boundary is
/// the point of the alert's member for this suite, by position (commits
/// of a rebase share one time, so times cannot split them).
fn suite_shapes(
    s: &mut dyn History,
    info: &crate::store::history::SeriesInfo,
    alert: &crate::store::history::Alert,
) -> Result<Option<Vec<crate::diagnose::shape::Shape>>, DbError> {
    use crate::ingest::reports::{Report, Status, TestCase, TestId};
    let points = s.points(info.id, &PointFilter::default())?;
    let member = alert.members.iter().find(|m| m.series_id == info.id);
    let at = match member.and_then(|m| points.iter().position(|p| p.id == m.point_id)) {
        Some(i) => i,
        None => match points.iter().position(|p| p.time() >= alert.to_time) {
            Some(i) => i,
            None => return Ok(None),
        },
    };
    let lo = at.saturating_sub(SIDE_POINTS);
    let hi = (at + SIDE_POINTS).min(points.len());
    if at == 0 || at >= hi {
        return Ok(None);
    }
    let window = s.tests_at(info.id, points[lo..hi].to_vec())?;
    let n = window.points.len();
    let run = |i: usize| Report {
        sources: Vec::new(),
        cases: window
            .tests
            .iter()
            .enumerate()
            .filter_map(|(t, test)| {
                let d = window.values[t * n + i];
                (!d.is_nan()).then(|| TestCase {
                    id: TestId {
                        suite: "".into(),
                        class: "".into(),
                        name: test.name.clone(),
                        nth: 0,
                    },
                    duration_s: Some(f64::from(d)),
                    status: Status::Passed,
                    retries: 0,
                    has_children: false,
                })
            })
            .collect(),
        ..Report::default()
    };
    let split = at - lo;
    let before: Vec<Report> = (0..split).map(run).collect();
    let after: Vec<Report> = (split..n).map(run).collect();
    let diff = crate::analyze::suite::diff(&before, &after);
    Ok((diff.matched >= 3 && !diff.shapes.is_empty()).then_some(diff.shapes))
}

/// The alert page's buttons: `state=acknowledged|dismissed|open`, and either a
/// write token typed into the form or the sign-in session's CSRF token from a
/// page of this server.
pub async fn alert_form(
    State(st): State<Arc<AppState>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let r = async {
        let form = query_params(std::str::from_utf8(&body).ok(), &["state", "token", "csrf"])?;
        match form.get("token").filter(|t| !t.is_empty()) {
            Some(t) => {
                from_this_server(&headers, false)?;
                check_token(&st, t, Scope::Write)?
            }
            None => {
                from_this_server(&headers, true)?;
                let s = session_of(&st, &headers).ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNAUTHORIZED,
                        "unauthorized",
                        "sign in with a write token, or type one into the form",
                    )
                })?;
                if s.scope < Scope::Write {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "forbidden",
                        "you signed in with a read token: type a write token into the form",
                    ));
                }
                let field = form.get("csrf").map(String::as_str).unwrap_or("");
                if !session::csrf_matches(&s, field) {
                    return Err(ApiError::new(
                        StatusCode::FORBIDDEN,
                        "forbidden",
                        "this form did not come from this server's page (its CSRF token is missing or stale): reload the page",
                    ));
                }
            }
        }
        let id = alert_id(&id)?;
        let state = match form.get("state").map(String::as_str) {
            Some("acknowledged") => AlertState::Acknowledged,
            Some("dismissed") => AlertState::Dismissed,
            Some("open") => AlertState::Open,
            _ => {
                return Err(ApiError::bad_request(
                    "state must be acknowledged, dismissed or open",
                ));
            }
        };
        st.db(move |s| s.set_alert_state(id, state)).await?;
        Ok(id)
    }
    .await;
    match r {
        Ok(id) => Redirect::to(&format!("/alert/{id}")).into_response(),
        Err(e) => html_error(&st, e),
    }
}

/// Where a form post came from: `Some(true)` when its `Origin` (or, without one,
/// its `Referer`) names the `Host` it was sent to, `Some(false)` when it names
/// another site (another port of the same host included), `None` when it says
/// nothing (not a browser: curl with a typed token). Browsers send `Origin` with
/// every form post.
fn origin(headers: &HeaderMap) -> Option<bool> {
    let get = |h: header::HeaderName| headers.get(h).and_then(|v| v.to_str().ok());
    let host = get(header::HOST).unwrap_or("");
    get(header::ORIGIN)
        .or_else(|| get(header::REFERER))
        .map(|o| session::same_origin(o, host))
}

/// A form post from another site is refused; one authorised by the sign-in
/// cookie alone must also say it came from this server.
fn from_this_server(headers: &HeaderMap, by_cookie: bool) -> Result<(), ApiError> {
    match origin(headers) {
        Some(true) => Ok(()),
        None if !by_cookie => Ok(()),
        _ => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_site",
            "a form post from another site, or signed in by cookie without an Origin or Referer, is refused",
        )),
    }
}

/// What changed from machine `a` to machine `b`, host name first.
fn machine_changes(a: &Fingerprint, b: &Fingerprint) -> Vec<String> {
    let mut out = Vec::new();
    if a.hostname != b.hostname {
        out.push(format!(
            "hostname: {} -> {}",
            a.hostname.as_deref().unwrap_or("?"),
            b.hostname.as_deref().unwrap_or("?")
        ));
    }
    out.extend(
        a.differences(b)
            .into_iter()
            .map(|(what, x, y)| format!("{what}: {x} -> {y}")),
    );
    out
}

pub async fn machines(State(st): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    read_page(
        &st,
        &headers,
        Ok(|s: &mut dyn History, project: &str| {
            let list = s.machines()?;
            let mut rows = Vec::new();
            for (i, m) in list.iter().enumerate() {
                let prev = i.checked_sub(1).and_then(|j| list[j].fingerprint.as_ref());
                let changes = match (prev, &m.fingerprint) {
                    (Some(a), Some(b)) => machine_changes(a, b),
                    _ => Vec::new(),
                };
                rows.push((m.clone(), changes));
            }
            Ok(web::machines_page(project, &rows))
        }),
    )
    .await
}

pub async fn login_form(State(st): State<Arc<AppState>>) -> Response {
    Html(web::login_page(
        &st.opts.project,
        "Paste a token (read or write) to see this server's pages.",
    ))
    .into_response()
}

/// Check the token and start a session: the cookie holds the session's random id,
/// never the token.
pub async fn login(State(st): State<Arc<AppState>>, headers: HeaderMap, body: Bytes) -> Response {
    let form = match query_params(std::str::from_utf8(&body).ok(), &["token"]) {
        Ok(f) => f,
        Err(e) => return html_error(&st, e),
    };
    if let Err(e) = from_this_server(&headers, false) {
        return html_error(&st, e);
    }
    let token = form.get("token").cloned().unwrap_or_default();
    let Some((scope, _)) = st.opts.tokens.check(&token) else {
        return (
            StatusCode::UNAUTHORIZED,
            Html(web::login_page(
                &st.opts.project,
                "That token is not known here.",
            )),
        )
            .into_response();
    };
    let Some((id, _)) = st.sessions.create(scope, &token) else {
        return html_error(
            &st,
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_randomness",
                "the operating system gave no random bytes for a session",
            ),
        );
    };
    let mut r = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&format!(
        "{}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}",
        session::COOKIE,
        session::TTL.as_secs()
    )) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// The only static file is the stylesheet; any other path (`..` included)
/// is not found.
pub async fn static_file(Path(path): Path<String>) -> Response {
    if path == "tardy.js" {
        (
            [
                (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            web::script(),
        )
            .into_response()
    } else if path == "tardy.css" {
        (
            [
                (header::CONTENT_TYPE, "text/css; charset=utf-8"),
                (header::CACHE_CONTROL, "max-age=3600"),
            ],
            web::stylesheet(),
        )
            .into_response()
    } else {
        not_found_page(&format!("/static/{path}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::history::{Direction, Point, SeriesInfo};

    fn suite(values: &[f64]) -> (SeriesInfo, Vec<Point>) {
        let info = SeriesInfo {
            id: 1,
            name: "unit".into(),
            metric: "wall".into(),
            unit: "s".into(),
            direction: Direction::LowerIsBetter,
            kind: SeriesKind::Suite,
            tags: Default::default(),
            command: None,
            options: Vec::new(),
            threshold: None,
            points: values.len() as i64,
            last_value: values.last().copied(),
            last_commit: None,
            tests: 0,
            open_alerts: 0,
        };
        let points = values
            .iter()
            .enumerate()
            .map(|(i, &value)| Point {
                id: i as i64 + 1,
                commit: Some(format!("c{i:03}")),
                branch: None,
                commit_time: Some(1_700_000_000 + i as i64 * 3600),
                run_time: 0,
                fingerprint_id: None,
                value,
                n: 1,
            })
            .collect();
        (info, points)
    }

    #[test]
    fn builds_that_share_a_time_keep_their_upload_order() {
        // A rebase: five commits with one commit time, uploaded in the
        // branch's order, whose hashes sort the other way.
        let (info, mut points) = suite(&[1.0, 1.0, 1.0, 1.0, 1.0]);
        for (i, p) in points.iter_mut().enumerate() {
            p.commit = Some(["f0", "d1", "b2", "a3", "03"][i].to_string());
            p.commit_time = Some(1_700_000_000);
        }
        let p = pipeline(&[(info, points)]);
        assert_eq!(p.builds, ["f0", "d1", "b2", "a3", "03"]);
    }

    #[test]
    fn a_lasting_slowdown_stays_red_however_many_builds_it_fills() {
        // 60 builds at about 10 s, then 20 at about 36 s (3.6x): every build shown is
        // one of the slow ones, and each is red against the baseline before the change.
        let values: Vec<f64> = (0..80)
            .map(|i| (if i < 60 { 10.0 } else { 36.0 }) * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0)))
            .collect();
        let p = pipeline(&[suite(&values)]);
        assert_eq!(p.builds.len(), RECENT);
        for cell in &p.rows[0].cells {
            let (_, ratio) = cell.expect("every build has the suite");
            assert!((ratio - 3.6).abs() < 0.2, "{ratio}");
        }
        // Without a change, the builds are near their baseline.
        let flat: Vec<f64> = values[..60].to_vec();
        let p = pipeline(&[suite(&flat)]);
        assert!(
            p.rows[0]
                .cells
                .iter()
                .flatten()
                .all(|(_, r)| (r - 1.0).abs() < 0.05)
        );
    }
}
