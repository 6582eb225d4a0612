//! CORS: every GET and HEAD answer is readable from any origin, so that third-party verifiers
//! and dashboards can fetch results, proofs and epochs from a browser. Nothing is sent with
//! credentials (`*` forbids it), and the write methods get no CORS headers, so a page elsewhere
//! cannot place bets or spend a notary key through a visitor's browser.
//!
//! A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) for GET or HEAD is
//! answered 204; any other OPTIONS request is routed as usual (405 with `Allow`).

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, Method, Response, StatusCode};
use axum::middleware::Next;

/// How long a browser may cache a preflight answer (a day).
const PREFLIGHT_MAX_AGE_S: u32 = 86_400;

/// Middleware: the CORS headers of public reads, and their preflights.
pub async fn public_reads(req: Request, next: Next) -> Response<Body> {
    let method = req.method().clone();
    if method == Method::OPTIONS && req.headers().contains_key(header::ORIGIN) {
        let asked = req
            .headers()
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|v| v.to_str().ok());
        if matches!(asked, Some("GET" | "HEAD")) {
            return preflight(req.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS));
        }
    }
    let mut res = next.run(req).await;
    if matches!(method, Method::GET | Method::HEAD) {
        res.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
    res
}

fn preflight(requested_headers: Option<&HeaderValue>) -> Response<Body> {
    let mut res = Response::new(Body::empty());
    *res.status_mut() = StatusCode::NO_CONTENT;
    let h = res.headers_mut();
    h.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, HEAD"),
    );
    // Reads carry no secrets, so any request header a reader wants to send is fine.
    if let Some(v) = requested_headers {
        h.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, v.clone());
    }
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from(PREFLIGHT_MAX_AGE_S),
    );
    res
}
