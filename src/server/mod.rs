//! `tardy serve`: the team's server. An ingest API (`/api/v1/...`, see
//! docs/api.md) that CI runners upload results, test reports and points to,
//! JSON reads, and server-rendered pages drawn with the report's SVG charts.
//! The data lives in the history store (SQLite or PostgreSQL, [`pool`]);
//! the server keeps no state of its own, so several may share one
//! PostgreSQL database.
//!
//! [`auth`] checks bearer tokens, [`api`] serves the API, [`pages`] the web
//! pages, [`error`] turns failures into JSON answers; [`client`] is the
//! uploading side (`tardy push`). The listener here
//! bounds what a client can hold: header and body read timeouts (slow
//! clients are cut off), a body size limit and a connection limit.

pub mod api;
pub mod auth;
pub mod body;
pub mod cache;
pub mod client;
pub mod error;
pub mod pages;
pub mod paging;
pub mod pool;
pub mod scope;
pub mod session;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;

use auth::Tokens;
use pool::{Backend, Pool};

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub backend: Backend,
    pub project: String,
    pub listen: String,
    pub tokens: Tokens,
    /// Reads need a token too (read or write scope).
    pub read_protected: bool,
    /// Largest request body accepted.
    pub max_body: usize,
    /// A client must send its request headers within this time...
    pub header_timeout: Duration,
    /// ...and its body within this one.
    pub body_timeout: Duration,
    /// Time one upload may take to be read (parsed) once its body is in; past it
    /// the upload is refused (422) and the reading thread stops.
    pub read_budget: Duration,
    /// What one upload may become: inflated bytes, results, distinct names.
    pub limits: crate::ingest::limits::Limits,
    pub max_connections: usize,
    /// Connections one client (its /24 or /64, [`client_range`]) may hold
    /// at once, and request bodies it may be sending at once.
    pub max_per_client: usize,
    /// Reverse proxies whose connections carry many clients: not limited
    /// per client themselves; their requests' client is the last address
    /// of `X-Forwarded-For`.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Run change-point detection after each upload, with these options.
    pub detect: Option<crate::history::detect::DetectOptions>,
    /// Memory for the suites' windows held between uploads
    /// ([`crate::history::window`]), in bytes.
    pub detect_memory: usize,
}

impl ServeOptions {
    pub fn new(backend: Backend, project: &str) -> ServeOptions {
        ServeOptions {
            backend,
            project: project.to_string(),
            listen: "127.0.0.1:8080".into(),
            tokens: Tokens::default(),
            read_protected: false,
            max_body: 32 << 20,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            read_budget: Duration::from_secs(20),
            limits: crate::ingest::limits::Limits {
                cli: false,
                inflated: 4 * (32 << 20),
                results: 500_000,
                names: 250_000,
                series: 10_000,
                text: u64::MAX,
            },
            max_connections: 512,
            max_per_client: 64,
            trusted_proxies: Vec::new(),
            detect: Some(crate::history::detect::DetectOptions {
                window: Some(crate::history::detect::SERVER_WINDOW),
                search_every: crate::history::detect::SERVER_SEARCH_EVERY,
                ..Default::default()
            }),
            detect_memory: crate::history::window::DEFAULT_BUDGET,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("{0}")]
    Db(#[from] crate::store::DbError),
    #[error("cannot listen on {addr}: {detail}")]
    Listen { addr: String, detail: String },
    #[error("cannot start the server's runtime: {0}")]
    Runtime(std::io::Error),
}

/// What every request sees.
pub struct AppState {
    pub pool: Pool,
    pub opts: ServeOptions,
    /// Sign-in sessions of the web pages.
    pub sessions: session::Sessions,
    /// Uploads over [`LARGE_UPLOAD`] bytes are parsed and stored one at a
    /// time, so that memory stays bounded however many arrive at once. Their
    /// bodies arrive first, spooled to temporary files ([`SPOOL_BUDGET`] in
    /// all), so a slow sender holds no one's turn.
    pub large_uploads: tokio::sync::Semaphore,
    /// Bytes of bodies being spooled now.
    pub spooled: std::sync::atomic::AtomicU64,
    /// Each suite's newest points, held so an upload's check reads only
    /// its own.
    pub windows: Arc<crate::history::window::Windows>,
    /// The database's state as last checked (every few seconds, off the
    /// requests): `/healthz` answers from it at once, whatever the pool.
    pub health: Health,
    /// Pages for anonymous readers, until the next write.
    pub pages: cache::PageCache,
}

/// The database's health as a background check last found it.
#[derive(Default)]
pub struct Health {
    pub ok: std::sync::atomic::AtomicBool,
    /// The newest schema migration applied.
    pub schema_version: std::sync::atomic::AtomicI64,
    /// When it was checked (Unix seconds).
    pub checked_at: std::sync::atomic::AtomicI64,
}

impl Health {
    /// Check the database now (one query on a pooled store) and remember.
    async fn check(st: &Arc<AppState>) {
        use std::sync::atomic::Ordering::Relaxed;
        let found = st.db(|s| s.schema_version()).await;
        st.health.ok.store(found.is_ok(), Relaxed);
        if let Ok(v) = found {
            st.health.schema_version.store(v, Relaxed);
        }
        st.health
            .checked_at
            .store(crate::history::import::now_s(), Relaxed);
    }
}

/// Seconds between health checks.
const HEALTH_EVERY: Duration = Duration::from_secs(5);

/// The body size from which an upload waits for its turn.
pub const LARGE_UPLOAD: u64 = 1 << 20;

/// Disk that large bodies arriving at once may take in temporary files;
/// past it, a large upload waits for its turn before its body is read.
pub const SPOOL_BUDGET: u64 = 1 << 30;

impl AppState {
    /// Run blocking database work off the async threads.
    pub async fn db<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&mut dyn crate::store::History) -> Result<T, crate::store::DbError>
        + Send
        + 'static,
    ) -> Result<T, error::ApiError> {
        let st = self.clone();
        match tokio::task::spawn_blocking(move || st.pool.with(f)).await {
            Ok(r) => r.map_err(error::ApiError::from),
            Err(_) => Err(error::ApiError::new(
                axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "the request's worker failed",
            )),
        }
    }
}

/// The routes.
pub fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/healthz", get(api::health))
        .route("/api/v1/runs", post(api::upload_runs))
        .route("/api/v1/tests", post(api::upload_tests))
        .route("/api/v1/points", post(api::upload_points).get(api::points))
        .route("/api/v1/series", get(api::series))
        .route("/api/v1/alerts", get(api::alerts))
        .route("/api/v1/alerts/{id}", get(api::alert))
        .route("/api/v1/alerts/{id}/{action}", post(api::alert_action))
        .route("/api/v1/uploads", get(api::uploads))
        .route("/api/v1/machines", get(api::machines))
        .merge(
            Router::new()
                .route("/", get(pages::overview))
                .route("/series", get(pages::series))
                .route("/test", get(pages::test))
                .route("/alert/{id}", get(pages::alert).post(pages::alert_form))
                .route("/machines", get(pages::machines))
                .route_layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    cache::pages,
                )),
        )
        .route("/login", get(pages::login_form).post(pages::login))
        .route("/static/{*path}", get(pages::static_file))
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            cache::writes,
        ))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(state)
}

/// Serve until SIGINT or SIGTERM. `ready` is called with the bound address
/// (port 0 picks a free one) before the first request is taken.
/// Headers on every answer: no content sniffing (a JSON error is never read as
/// HTML); on pages, a policy without inline script, and no framing.
async fn security_headers(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    let mut r = next.run(req).await;
    let html = r
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let h = r.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if html {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        );
        h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        h.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        );
    }
    r
}

pub fn serve(opts: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    // Two malloc arenas, not one per thread: a large upload parsed on one thread and
    // stored on another would otherwise leave its freed memory spread over arenas
    // that the next upload does not reuse.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only tunes the allocator, before the runtime's threads start.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
    let pool = Pool::new(opts.backend.clone(), &opts.project, 16)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&opts.listen)
            .await
            .map_err(|e| ServeError::Listen {
                addr: opts.listen.clone(),
                detail: e.to_string(),
            })?;
        let addr = listener.local_addr().map_err(|e| ServeError::Listen {
            addr: opts.listen.clone(),
            detail: e.to_string(),
        })?;
        ready(addr);
        let windows = Arc::new(crate::history::window::Windows::new(opts.detect_memory));
        let state = Arc::new(AppState {
            pool,
            opts,
            windows,
            sessions: session::Sessions::default(),
            large_uploads: tokio::sync::Semaphore::new(1),
            spooled: std::sync::atomic::AtomicU64::new(0),
            health: Health::default(),
            pages: cache::PageCache::default(),
        });
        Health::check(&state).await;
        let checker = {
            let st = state.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(HEALTH_EVERY).await;
                    Health::check(&st).await;
                }
            })
        };
        accept_loop(listener, state.clone()).await;
        checker.abort();
        // The stores are closed on a blocking thread: dropping PostgreSQL's
        // blocking client on an async worker panics ("Cannot start a runtime
        // from within a runtime"), and a supervisor's SIGTERM must end the
        // server cleanly.
        let stores = state.pool.drain();
        let _ = tokio::task::spawn_blocking(move || drop(stores)).await;
        Ok::<(), ServeError>(())
    })?;
    // Blocking work still running (a read past its checks) is not waited
    // for: the process ends, and the database rolls back what it had not
    // committed.
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(())
}

async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    match (term, int) {
        (Ok(mut t), Ok(mut i)) => {
            tokio::select! {
                _ = t.recv() => {}
                _ = i.recv() => {}
            }
        }
        _ => std::future::pending::<()>().await,
    }
}

/// The connections being served, oldest first: when the slots run low, the oldest
/// one with no request in the application (a slowloris trickling headers, or an
/// idle keep-alive socket) is closed to make room, so a new client always gets in.
#[derive(Default)]
struct Conns {
    list: std::sync::Mutex<Vec<ConnEntry>>,
}

struct ConnEntry {
    id: u64,
    peer: std::net::IpAddr,
    /// Requests of this connection in the application now (0: waiting for
    /// headers, trickling them, or idle between requests).
    served: Arc<std::sync::atomic::AtomicUsize>,
    /// Its request body, while one is arriving.
    receiving: Arc<body::Receiving>,
    close: Arc<tokio::sync::Notify>,
}

impl ConnEntry {
    /// Not sending anything the server waits on: waiting for (or trickling)
    /// headers, or idle between requests.
    fn idle(&self) -> bool {
        self.served.load(std::sync::atomic::Ordering::Relaxed) == 0
    }

    /// Bytes of the body arriving now, if one is.
    fn body_bytes(&self) -> Option<u64> {
        use std::sync::atomic::Ordering::Relaxed;
        (self.receiving.bodies.load(Relaxed) > 0).then(|| self.receiving.bytes.load(Relaxed))
    }
}

impl Conns {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ConnEntry>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connections of `peer`'s range ([`client_range`]).
    fn per_client(&self, peer: std::net::IpAddr) -> usize {
        self.lock().iter().filter(|c| c.peer == peer).count()
    }

    /// Close the oldest connection with no request in the application (one
    /// trickling its headers, or idle), or else the one whose body has
    /// brought the fewest bytes (a slow body); whether there was one.
    /// Only among the connections of `of`, when given.
    fn evict_one(&self, of: Option<std::net::IpAddr>) -> bool {
        let mut list = self.lock();
        let mine = |c: &ConnEntry| of.is_none_or(|ip| c.peer == ip);
        let victim = list.iter().position(|c| c.idle() && mine(c)).or_else(|| {
            list.iter()
                .enumerate()
                .filter(|(_, c)| mine(c))
                .filter_map(|(i, c)| Some((c.body_bytes()?, i)))
                .min()
                .map(|(_, i)| i)
        });
        let victim = victim.map(|i| list.remove(i));
        match victim {
            Some(c) => {
                c.close.notify_one();
                true
            }
            None => false,
        }
    }

    fn remove(&self, id: u64) {
        self.lock().retain(|c| c.id != id);
    }
}

/// The client a trusted proxy forwarded: the last address of
/// `X-Forwarded-For` (the one the proxy itself appended).
fn forwarded_for(h: &hyper::HeaderMap) -> Option<std::net::IpAddr> {
    let last = h
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .last()?;
    last.trim().parse().ok()
}

/// Request bodies being sent, per client range.
#[derive(Default)]
struct Bodies(std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>);

/// One body of a client: its count goes down when dropped.
struct BodySlot(Arc<Bodies>, std::net::IpAddr);

impl Drop for BodySlot {
    fn drop(&mut self) {
        let mut m = (self.0).0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

trait Enter {
    fn enter(&self, ip: std::net::IpAddr, limit: usize) -> Option<BodySlot>;
}

impl Enter for Arc<Bodies> {
    /// A slot for one more body of `ip`'s range, unless it has `limit`.
    fn enter(&self, ip: std::net::IpAddr, limit: usize) -> Option<BodySlot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= limit {
            return None;
        }
        *n += 1;
        Some(BodySlot(self.clone(), ip))
    }
}

/// The range a client address stands for in per-client limits: its /24
/// for IPv4 (and IPv4-mapped IPv6), its /64 for IPv6. Addresses are cheap
/// inside one range, so a limit per address is a limit on nothing.
pub fn client_range(ip: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let v4 = |a: Ipv4Addr| {
        let o = a.octets();
        IpAddr::V4(Ipv4Addr::new(o[0], o[1], o[2], 0))
    };
    match ip {
        IpAddr::V4(a) => v4(a),
        IpAddr::V6(a) => match a.to_ipv4_mapped() {
            Some(m) => v4(m),
            None => {
                let s = a.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

async fn accept_loop(listener: tokio::net::TcpListener, state: Arc<AppState>) {
    let max = state.opts.max_connections;
    // Below this many free slots, a new connection makes room by closing the oldest
    // one that has not sent a request yet.
    let reserve = (max / 8).max(1);
    let per_client = state.opts.max_per_client.max(1);
    let slots = Arc::new(tokio::sync::Semaphore::new(max));
    let conns = Arc::new(Conns::default());
    let bodies = Arc::new(Bodies::default());
    let app = router(state.clone());
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let mut next_id = 0u64;
    loop {
        let accepted = tokio::select! {
            _ = &mut shutdown => break,
            a = listener.accept() => a,
        };
        let Ok((stream, peer)) = accepted else {
            // Out of file descriptors and the like: let it pass.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        // One address may not hold every slot (loopback and a shared NAT are one
        // address: the eviction below is what keeps room for them).
        // A client is its address range: one host of a /24 (or /64) can
        // bring its neighbours' addresses, not a listener's worth of them.
        let range = client_range(peer.ip());
        let trusted = state.opts.trusted_proxies.contains(&peer.ip());
        if !trusted && conns.per_client(range) >= per_client && !conns.evict_one(Some(range)) {
            drop(stream);
            continue;
        }
        if slots.available_permits() <= reserve {
            conns.evict_one(None);
        }
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let id = next_id;
        let served = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let receiving = Arc::new(body::Receiving::default());
        let close = Arc::new(tokio::sync::Notify::new());
        conns.lock().push(ConnEntry {
            id,
            peer: range,
            served: served.clone(),
            receiving: receiving.clone(),
            close: close.clone(),
        });
        let busy = served.clone();
        let (upload_rules, form_rules) = (
            body::Rules {
                max: state.opts.max_body as u64,
                deadline: state.opts.body_timeout,
            },
            body::Rules {
                max: body::FORM_LIMIT,
                deadline: state.opts.header_timeout,
            },
        );
        // Every body under its route's rules: uploads their size and time,
        // everything else (the forms anyone may post) a few KiB in seconds.
        // The client of this connection's current request, and whether it
        // sends a body (set per request; a connection's requests are served
        // one after another).
        let current: Arc<std::sync::Mutex<Option<std::net::IpAddr>>> = Default::default();
        let (current_in, proxied) = (current.clone(), trusted);
        let guarded = tower::ServiceExt::<axum::extract::Request>::map_request(
            app.clone(),
            move |req: hyper::Request<hyper::body::Incoming>| {
                let rules = if req.uri().path().starts_with("/api/v1/") {
                    upload_rules
                } else {
                    form_rules
                };
                let client = if proxied {
                    forwarded_for(req.headers()).map_or(range, client_range)
                } else {
                    range
                };
                let sends_body = req.headers().contains_key(hyper::header::TRANSFER_ENCODING)
                    || req
                        .headers()
                        .get(hyper::header::CONTENT_LENGTH)
                        .and_then(|v| v.to_str().ok())
                        .is_some_and(|v| v.trim() != "0");
                if let Ok(mut c) = current_in.lock() {
                    *c = sends_body.then_some(client);
                }
                let receiving = receiving.clone();
                req.map(|b| axum::body::Body::new(body::Guarded::new(b, rules, receiving)))
            },
        );
        let bodies = bodies.clone();
        let service = TowerToHyperService::new(tower::ServiceExt::<
            hyper::Request<hyper::body::Incoming>,
        >::map_future(
            guarded,
            move |fut: axum::routing::future::RouteFuture<std::convert::Infallible>| {
                let busy = busy.clone();
                busy.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // A body from a client already sending its share of bodies
                // is refused before it is read (429), so one range cannot
                // hold every connection with slow bodies.
                let client = current.lock().ok().and_then(|mut c| c.take());
                let slot = client.map(|ip| bodies.enter(ip, per_client));
                async move {
                    let r = match slot {
                        Some(None) => Ok(axum::response::IntoResponse::into_response(
                            error::ApiError::new(
                                hyper::StatusCode::TOO_MANY_REQUESTS,
                                "too_many_bodies",
                                format!(
                                    "this client's address range is sending {per_client} request bodies already (--max-per-client): retry when one is done"
                                ),
                            ),
                        )),
                        _ => fut.await,
                    };
                    busy.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
                    r
                }
            },
        ));
        let header_timeout = state.opts.header_timeout;
        let mut stopping = stopping.clone();
        let slots = slots.clone();
        let conns = conns.clone();
        tokio::spawn(async move {
            // A slot freed by an eviction comes within moments; past that, refuse.
            let slot = match tokio::time::timeout(Duration::from_millis(200), slots.acquire_owned())
                .await
            {
                Ok(Ok(slot)) => slot,
                _ => {
                    conns.remove(id);
                    return;
                }
            };
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = close.notified() => {}
                _ = stopping.changed() => {
                    // Finish the request in flight, then close.
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
            conns.remove(id);
            drop(slot);
        });
    }
    let _ = stop.send(true);
    // Let requests in flight finish (their writes commit or roll back)...
    let all = slots.acquire_many(max as u32);
    tokio::pin!(all);
    if tokio::time::timeout(STOP_GRACE, &mut all).await.is_err() {
        // ...then stop the uploads still being read or stored: they roll
        // back at their next check, and the clients may send them again.
        eprintln!("tardy serve: stopping the uploads still in flight (they roll back)");
        crate::ingest::budget::stop_all();
        let _ = tokio::time::timeout(STOP_ABORT, &mut all).await;
    }
}

/// After SIGTERM: time the requests in flight have to finish...
const STOP_GRACE: Duration = Duration::from_secs(5);
/// ...and then to roll back, within 10 s of the signal.
const STOP_ABORT: Duration = Duration::from_secs(3);
