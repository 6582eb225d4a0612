//! The accept loop of `vrs serve`, in place of `axum::serve`: the same hyper connections, plus
//! what a public listener needs and `axum::serve` cannot set:
//! - a header-read timeout, which also bounds an idle keep-alive connection: a client that
//!   sends its request headers slowly, or not at all, cannot hold a connection for longer;
//! - the peer address on every request ([`axum::extract::ConnectInfo`]), for the per-client
//!   rate limit;
//! - a bounded graceful shutdown: stop accepting, let requests in flight finish, and give up on
//!   connections still busy after the grace period.

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Pause after a failed `accept` (out of file descriptors, say), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How connections are served.
#[derive(Debug, Clone, Copy)]
pub struct ConnOptions {
    /// Longest wait for a request's headers, counted from the moment the connection is ready
    /// for the next request (so also the idle keep-alive limit).
    pub header_timeout: Duration,
    /// Longest wait for requests in flight once shutdown begins.
    pub shutdown_grace: Duration,
}

/// How a shutdown ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drained {
    /// Every connection finished its requests in time.
    All,
    /// Some connections were still busy when the grace period ran out; they are dropped.
    TimedOut,
}

/// Serves `app` on `listener` until `shutdown` resolves, then drains within the grace period.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    options: ConnOptions,
    shutdown: impl Future<Output = ()>,
) -> Drained {
    // HTTP/1.1 only: HTTP/2 reaches a public service through a TLS-terminating proxy, and
    // sniffing for a cleartext HTTP/2 preface would wait on a silent client with no timeout.
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(options.header_timeout);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Small JSON answers: send them at once rather than wait for Nagle.
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            app.clone().oneshot(req)
        });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // Resets, timeouts and malformed requests end a connection; none is the server's
            // failure, so they are not logged above debug.
            if let Err(e) = conn.await {
                tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
            }
        });
    }
    // Stop accepting before draining: new connections are refused from here on.
    drop(listener);
    match tokio::time::timeout(options.shutdown_grace, graceful.shutdown()).await {
        Ok(()) => Drained::All,
        Err(_) => {
            tracing::warn!(
                grace_s = options.shutdown_grace.as_secs_f64(),
                "connections still busy after the shutdown grace period: closing them"
            );
            Drained::TimedOut
        }
    }
}

/// The peer address of a request served by [`serve`] (absent in in-process tests).
pub fn peer_addr<B>(req: &hyper::Request<B>) -> Option<SocketAddr> {
    req.extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| *a)
}
