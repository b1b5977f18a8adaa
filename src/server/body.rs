//! Every request body, on every route, under the same three rules, enforced
//! as its bytes arrive (before any handler or extractor sees them):
//!
//! - a size cap (the upload routes' `--max-body-mib`; a few KiB for the
//!   sign-in and alert forms, which anyone can post to);
//! - a deadline for the whole body (`--body-timeout` on uploads, the header
//!   timeout on forms);
//! - a least rate: after a few seconds' grace the body must keep arriving at
//!   [`MIN_RATE`] on average, so a client trickling bytes is cut off in
//!   seconds, not minutes (Apache's `mod_reqtimeout` MinRate).
//!
//! While a body is arriving its connection counts as *receiving*: the
//! listener may close it to make room, as it closes connections still
//! sending their headers ([`Receiving`]).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The least average rate of a body after [`GRACE`], in bytes per second.
pub const MIN_RATE: u64 = 16 << 10;
/// Time a body may take before the least rate applies.
pub const GRACE: Duration = Duration::from_secs(5);
/// The largest body of a form (sign-in, an alert's buttons).
pub const FORM_LIMIT: u64 = 16 << 10;

/// What a connection's current body has done so far, seen by the listener.
#[derive(Default, Debug)]
pub struct Receiving {
    /// Bodies of this connection still arriving (0 or 1 on HTTP/1).
    pub bodies: AtomicUsize,
    /// Bytes of them received.
    pub bytes: AtomicU64,
}

/// Why a body was cut off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    #[error("the body is larger than {0} bytes, the limit of this route")]
    TooLarge(u64),
    #[error("the body did not arrive within {0} s")]
    Deadline(u64),
    #[error(
        "the body arrived slower than {} KiB/s (after {} s of grace); it was cut off",
        MIN_RATE >> 10,
        GRACE.as_secs()
    )]
    TooSlow,
}

/// The rules of one body.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub max: u64,
    pub deadline: Duration,
}

/// A request body kept to [`Rules`]. Its clock starts when the server
/// starts reading it (an upload waiting for its turn is not sending late).
pub struct Guarded<B> {
    inner: B,
    rules: Rules,
    start: Instant,
    started: bool,
    received: u64,
    done: bool,
    state: Arc<Receiving>,
    timer: Pin<Box<Sleep>>,
}

impl<B: Body> Guarded<B> {
    pub fn new(inner: B, rules: Rules, state: Arc<Receiving>) -> Self {
        let start = Instant::now();
        let done = inner.is_end_stream();
        Guarded {
            inner,
            rules,
            start,
            started: false,
            received: 0,
            done,
            state,
            timer: Box::pin(tokio::time::sleep_until(start + GRACE.min(rules.deadline))),
        }
    }

    /// The first read: the clock starts and the connection counts as
    /// receiving.
    fn begin(&mut self) {
        if !self.started {
            self.started = true;
            self.start = Instant::now();
            self.state.bodies.fetch_add(1, Ordering::Relaxed);
            self.state.bytes.store(0, Ordering::Relaxed);
        }
    }

    /// When the body, as received so far, stops being on time.
    fn due(&self) -> Instant {
        let by_rate = GRACE + Duration::from_secs_f64(self.received as f64 / MIN_RATE as f64);
        self.start + by_rate.min(self.rules.deadline)
    }

    fn finish(&mut self) {
        if !self.done {
            self.done = true;
            if self.started {
                self.state.bodies.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    fn cut(&mut self, e: BodyError) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        self.finish();
        Poll::Ready(Some(Err(e)))
    }
}

impl<B> Drop for Guarded<B> {
    fn drop(&mut self) {
        if !self.done && self.started {
            self.state.bodies.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl<B> Body for Guarded<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        this.begin();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(d) = frame.data_ref() {
                    this.received += d.len() as u64;
                    this.state.bytes.store(this.received, Ordering::Relaxed);
                    if this.received > this.rules.max {
                        let max = this.rules.max;
                        return this.cut(BodyError::TooLarge(max));
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            // The connection failed (reset, bad chunking): the body ends.
            Poll::Ready(Some(Err(_))) => this.cut(BodyError::TooSlow),
            Poll::Pending => {
                let due = this.due();
                if this.timer.deadline() != due {
                    this.timer.as_mut().reset(due);
                }
                if this.timer.as_mut().poll(cx).is_ready() {
                    let e = if Instant::now() >= this.start + this.rules.deadline {
                        BodyError::Deadline(this.rules.deadline.as_secs())
                    } else {
                        BodyError::TooSlow
                    };
                    return this.cut(e);
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

use std::future::Future as _;

#[cfg(test)]
mod tests {
    use super::*;

    /// A body that sends one byte, then never again.
    struct Trickle(bool);

    impl Body for Trickle {
        type Data = Bytes;
        type Error = std::convert::Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            if self.0 {
                Poll::Pending
            } else {
                self.0 = true;
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"x")))))
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickling_body_is_cut_after_its_grace_and_counted_while_it_lasts() {
        use axum::body::to_bytes;
        let state = Arc::new(Receiving::default());
        let body = Guarded::new(
            Trickle(false),
            Rules {
                max: 1 << 20,
                deadline: Duration::from_secs(60),
            },
            state.clone(),
        );
        // Not read yet: not receiving, and its clock has not started.
        assert_eq!(state.bodies.load(Ordering::Relaxed), 0);
        tokio::time::sleep(GRACE * 3).await;
        let t = Instant::now();
        let e = to_bytes(axum::body::Body::new(body), usize::MAX)
            .await
            .unwrap_err();
        let waited = t.elapsed();
        assert!(waited >= GRACE && waited < GRACE * 2, "{waited:?}");
        assert!(e.to_string().contains("slower than") || format!("{e:?}").contains("TooSlow"));
        assert_eq!(state.bodies.load(Ordering::Relaxed), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_over_its_route_limit_is_cut() {
        let state = Arc::new(Receiving::default());
        let big = axum::body::Body::from(vec![b'a'; 100]);
        let body = Guarded::new(
            big,
            Rules {
                max: 10,
                deadline: Duration::from_secs(60),
            },
            state.clone(),
        );
        let e = axum::body::to_bytes(axum::body::Body::new(body), usize::MAX)
            .await
            .unwrap_err();
        assert!(format!("{e:?}").contains("TooLarge"), "{e:?}");
        assert_eq!(state.bodies.load(Ordering::Relaxed), 0);
    }
}
