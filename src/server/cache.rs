//! Pages for anonymous readers, kept until the next write. A page is the
//! same for every reader without a session or a token, and changes only
//! when something is written (an upload, an alert acknowledged): so an
//! anonymous page is rendered once per write, however many readers loop on
//! it. Entries live at most [`MAX_AGE`] (another server on the same
//! database writes without telling this one), hold at most [`ENTRY_MAX`]
//! bytes each and [`BUDGET`] in all (oldest dropped first). Answers say
//! `X-Tardy-Cache: hit` or `miss`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;

/// How long a page may be served from the cache at most.
pub const MAX_AGE: Duration = Duration::from_secs(2);
/// The largest page kept.
pub const ENTRY_MAX: usize = 1 << 20;
/// Bytes of pages kept in all.
pub const BUDGET: usize = 16 << 20;
/// The header that says whether a page came from the cache.
pub const HEADER: &str = "x-tardy-cache";

struct Entry {
    generation: u64,
    made: Instant,
    body: Bytes,
}

#[derive(Default)]
struct Pages {
    entries: HashMap<String, Entry>,
    /// Keys, oldest first (a key may appear again after it was replaced).
    order: VecDeque<String>,
    bytes: usize,
}

/// The cache of anonymous pages and the count of writes.
#[derive(Default)]
pub struct PageCache {
    generation: AtomicU64,
    pages: Mutex<Pages>,
}

impl PageCache {
    /// Something was written: every page kept so far is stale.
    pub fn wrote(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    fn get(&self, key: &str) -> Option<Bytes> {
        let now = self.generation.load(Ordering::SeqCst);
        let pages = self.pages.lock().ok()?;
        let e = pages.entries.get(key)?;
        (e.generation == now && e.made.elapsed() < MAX_AGE).then(|| e.body.clone())
    }

    fn put(&self, key: String, generation: u64, body: Bytes) {
        if body.len() > ENTRY_MAX {
            return;
        }
        let Ok(mut p) = self.pages.lock() else {
            return;
        };
        if let Some(old) = p.entries.remove(&key) {
            p.bytes -= old.body.len();
        }
        while p.bytes + body.len() > BUDGET {
            let Some(k) = p.order.pop_front() else { break };
            if let Some(old) = p.entries.remove(&k) {
                p.bytes -= old.body.len();
            }
        }
        p.bytes += body.len();
        p.order.push_back(key.clone());
        p.entries.insert(
            key,
            Entry {
                generation,
                made: Instant::now(),
                body,
            },
        );
        // Keys replaced in place leave stale names in the order: drop them
        // when they outnumber the entries.
        if p.order.len() > 2 * p.entries.len() + 64 {
            let Pages { entries, order, .. } = &mut *p;
            order.retain(|k| entries.contains_key(k));
            let mut seen = std::collections::HashSet::new();
            order.retain(|k| seen.insert(k.clone()));
        }
    }
}

fn anonymous(req: &axum::extract::Request) -> bool {
    let h = req.headers();
    req.method() == Method::GET
        && !h.contains_key(header::AUTHORIZATION)
        && !h.contains_key(header::COOKIE)
}

/// Middleware on the pages: an anonymous GET is answered from the cache
/// when the page is there and fresh, else rendered and kept (a 200 HTML
/// page only). Other requests pass through.
pub async fn pages(
    axum::extract::State(st): axum::extract::State<std::sync::Arc<super::AppState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    if !anonymous(&req) {
        return next.run(req).await;
    }
    let key = req.uri().to_string();
    if let Some(body) = st.pages.get(&key) {
        return html(StatusCode::OK, body, "hit");
    }
    let generation = st.pages.generation.load(Ordering::SeqCst);
    let r = next.run(req).await;
    let is_html = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if r.status() != StatusCode::OK || !is_html {
        return r;
    }
    let (parts, body) = r.into_parts();
    match axum::body::to_bytes(body, ENTRY_MAX).await {
        Ok(bytes) => {
            st.pages.put(key, generation, bytes.clone());
            let mut r = Response::from_parts(parts, Body::from(bytes));
            r.headers_mut()
                .insert(HEADER, HeaderValue::from_static("miss"));
            r
        }
        // Larger than a page may be (never, by design): not kept.
        Err(_) => html(
            StatusCode::INTERNAL_SERVER_ERROR,
            Bytes::from_static(b"page too large"),
            "miss",
        ),
    }
}

fn html(status: StatusCode, body: Bytes, cache: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(HEADER, HeaderValue::from_static(cache));
    r
}

/// Middleware on every route: a request that may write (anything but GET
/// and HEAD) makes the kept pages stale once it is answered.
pub async fn writes(
    axum::extract::State(st): axum::extract::State<std::sync::Arc<super::AppState>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let writes = !matches!(*req.method(), Method::GET | Method::HEAD);
    let r = next.run(req).await;
    if writes {
        st.pages.wrote();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_or_age_makes_a_page_stale_and_the_budget_holds() {
        let c = PageCache::default();
        c.put("/".into(), 0, Bytes::from_static(b"a"));
        assert_eq!(c.get("/").as_deref(), Some(&b"a"[..]));
        c.wrote();
        assert!(c.get("/").is_none());
        // Over the budget, the oldest go first.
        let page = Bytes::from(vec![b'x'; ENTRY_MAX]);
        for i in 0..(BUDGET / ENTRY_MAX + 3) {
            c.put(format!("/p{i}"), 1, page.clone());
        }
        let p = c.pages.lock().unwrap();
        assert!(p.bytes <= BUDGET);
        assert!(!p.entries.contains_key("/p0"));
        drop(p);
        assert!(c.get(&format!("/p{}", BUDGET / ENTRY_MAX + 2)).is_some());
        // Too large to keep.
        c.put("/big".into(), 1, Bytes::from(vec![0; ENTRY_MAX + 1]));
        assert!(c.get("/big").is_none());
    }
}
