//! The API's errors and their one mapping to HTTP status and JSON body. Internal detail is
//! logged here, once, and never sent to the client.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use vrs_protocol::games::{example, valid_bet_types, Game};
use vrs_store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    /// The caller's fault: a bet body that is not a valid bet of `game`.
    BadBet { game: Game, message: String },
    /// The caller's fault: any other invalid request.
    BadRequest(String),
    /// The caller asked for a game that does not exist.
    GameNotFound(String),
    /// The caller asked to verify a game that does not exist.
    VerifyNotFound(String),
    /// Any other resource that does not exist (the message says which).
    NotFound(String),
    /// The database does not answer; retry later.
    Unavailable(String),
    /// The open epoch is past its deadline and is being closed (a leader failover): retry in
    /// a moment, when the next epoch takes games.
    EpochClosing(String),
    /// Our fault.
    Internal(anyhow::Error),
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(msg) => Self::Unavailable(msg),
            StoreError::EpochOverdue(msg) => Self::EpochClosing(msg),
            other => Self::Internal(other.into()),
        }
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<StoreError>() {
            Ok(StoreError::Unavailable(msg)) => Self::Unavailable(msg),
            Ok(StoreError::EpochOverdue(msg)) => Self::EpochClosing(msg),
            Ok(other) => Self::Internal(other.into()),
            Err(e) => Self::Internal(e),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match self {
            Self::BadBet { game, message } => (
                StatusCode::BAD_REQUEST,
                json!({
                    "error": message,
                    "valid_bet_types": valid_bet_types(game),
                    "example": example(game),
                }),
            ),
            Self::BadRequest(message) => (StatusCode::BAD_REQUEST, json!({ "error": message })),
            Self::NotFound(message) => (StatusCode::NOT_FOUND, json!({ "error": message })),
            Self::GameNotFound(id) => (
                StatusCode::NOT_FOUND,
                json!({ "error": format!("game {id} not found"), "game_id": id }),
            ),
            Self::VerifyNotFound(id) => (
                StatusCode::NOT_FOUND,
                json!({
                    "verified": false,
                    "error": format!("game {id} not found"),
                    "game_id": id,
                }),
            ),
            Self::Unavailable(detail) => {
                tracing::warn!(%detail, "database unavailable");
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    json!({ "error": "the database is unavailable; retry shortly" }),
                )
            }
            Self::EpochClosing(detail) => {
                let body = json!({
                    "error": format!(
                        "no epoch is taking games right now ({detail}); retry in a moment"
                    ),
                    "retry_after": 1,
                });
                return (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(axum::http::header::RETRY_AFTER, "1")],
                    Json(body),
                )
                    .into_response();
            }
            Self::Internal(e) => {
                tracing::error!(error = %format!("{e:#}"), "internal error");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    json!({ "error": "internal error" }),
                )
            }
        };
        (status, Json(body)).into_response()
    }
}
