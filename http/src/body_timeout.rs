//! Request bodies are read whole, within a time limit, before any handler runs: a client that
//! trickles its body cannot hold a connection and a handler for longer (408), and one that
//! sends more than the limit is stopped at the limit (413). Bodies here are small JSON
//! documents, so buffering them costs nothing.

use super::{ApiError, BODY_LIMIT};
use axum::body::{Body, HttpBody as _};
use axum::extract::{Request, State};
use axum::http::{header, Response};
use axum::middleware::Next;
use axum::response::IntoResponse;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use std::time::Duration;

/// Middleware: buffers the body within `limit`, then hands the request on.
pub async fn read_body_within(
    State(limit): State<Duration>,
    req: Request,
    next: Next,
) -> Response<Body> {
    // Reads (and empty POSTs) have nothing to wait for.
    if req.body().is_end_stream() {
        return next.run(req).await;
    }
    // A declared length over the limit is refused before any of the body is read: a client
    // that sent `Expect: 100-continue` gets the 413 now, not a `100 Continue` and a timeout.
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        return ApiError::BodyTooLarge(BODY_LIMIT).into_response();
    }
    let (parts, body) = req.into_parts();
    let read = tokio::time::timeout(limit, Limited::new(body, BODY_LIMIT).collect()).await;
    match read {
        Ok(Ok(collected)) => {
            let req = Request::from_parts(parts, Body::from(collected.to_bytes()));
            next.run(req).await
        }
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            ApiError::BodyTooLarge(BODY_LIMIT).into_response()
        }
        Ok(Err(e)) => ApiError::BodyUnreadable(e.to_string()).into_response(),
        Err(_) => ApiError::BodyTimeout(limit).into_response(),
    }
}
