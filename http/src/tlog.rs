//! The witnessed log's C2SP endpoints (docs/PROTOCOL.md §21), mounted only when the service
//! keeps a log (`vrs serve --log-origin`): `GET /log/checkpoint` (the latest signed checkpoint
//! with the cosignatures collected, text) and `GET /log/tile/…` (hash tiles and entry bundles,
//! bytes, immutable). Not part of the JSON API: their formats are C2SP's.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::error::ApiError;

type St = std::sync::Arc<crate::AppState>;

pub fn routes() -> Router<St> {
    Router::new()
        .route("/log/checkpoint", get(checkpoint))
        .route("/log/tile/{*path}", get(tile))
}

fn log_of(state: &St) -> Result<&std::sync::Arc<vrs_service::tlog::OperatorLog>, ApiError> {
    state
        .log
        .as_ref()
        .ok_or_else(|| ApiError::NotFound("this service keeps no witnessed log".into()))
}

async fn checkpoint(State(state): State<St>) -> Result<Response, ApiError> {
    let note = log_of(&state)?
        .checkpoint()
        .await
        .map_err(ApiError::Internal)?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        note,
    )
        .into_response())
}

async fn tile(State(state): State<St>, Path(path): Path<String>) -> Result<Response, ApiError> {
    let bytes = log_of(&state)?
        .serve_path(&format!("tile/{path}"))
        .await
        .map_err(ApiError::Internal)?
        .ok_or_else(|| ApiError::NotFound(format!("the log has no tile/{path}")))?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream"),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        bytes,
    )
        .into_response())
}
