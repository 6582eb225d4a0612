//! The witness's HTTP API:
//!
//! - `POST /add-checkpoint` (C2SP tlog-witness), bodies up to 16 KiB;
//! - `GET /<lowercase hex SHA-256 of the origin>/checkpoint`: the latest checkpoint it
//!   cosigned for that log, with the log's signature and its own cosignature (404 if none);
//! - `GET /`: its name, verifier key, δ and, for each log, the size it cosigned (JSON).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::witness::{Answer, Witness};

/// Largest add-checkpoint body: 63 proof lines and a checkpoint with a few signatures fit in
/// far less.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

pub fn router(witness: Arc<Witness>) -> Router {
    Router::new()
        .route("/add-checkpoint", post(add_checkpoint))
        .route("/{origin_hash}/checkpoint", get(checkpoint))
        .route("/", get(info))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(witness)
}

fn respond(a: Answer) -> Response {
    let status = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut r = (status, [(header::CONTENT_TYPE, a.content_type)], a.body).into_response();
    if a.status == 503 {
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    }
    r
}

async fn add_checkpoint(State(w): State<Arc<Witness>>, body: Bytes) -> Response {
    respond(w.add_checkpoint(&body).await)
}

async fn checkpoint(State(w): State<Arc<Witness>>, Path(hash): Path<String>) -> Response {
    match w.latest(&hash) {
        Ok(Some(note)) => respond(Answer {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: note.into_bytes(),
        }),
        Ok(None) => respond(Answer {
            status: 404,
            content_type: "text/plain; charset=utf-8",
            body: b"this witness has cosigned no checkpoint of that log\n".to_vec(),
        }),
        Err(e) => respond(Answer {
            status: 500,
            content_type: "text/plain; charset=utf-8",
            body: format!("{e:#}\n").into_bytes(),
        }),
    }
}

/// The witness's own description.
#[derive(Debug, serde::Serialize)]
pub struct Info {
    pub name: String,
    pub vkey: String,
    pub delta_ms: u64,
    pub logs: Vec<LogInfo>,
}

#[derive(Debug, serde::Serialize)]
pub struct LogInfo {
    pub origin: String,
    pub origin_hash: String,
    /// Whether the witness reads the log's entries and applies the application rules.
    pub application_rules: bool,
    pub size: u64,
    pub root: String,
    pub cosigned_at: u64,
}

async fn info(State(w): State<Arc<Witness>>) -> Response {
    let states = match w.states() {
        Ok(s) => s,
        Err(e) => {
            return (StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}\n")).into_response();
        }
    };
    let logs = w
        .config
        .logs
        .iter()
        .zip(states)
        .map(|(l, s)| LogInfo {
            origin: l.key.name.clone(),
            origin_hash: crate::state::origin_hash(&l.key.name),
            application_rules: l.url.is_some(),
            size: s.size,
            root: s.root,
            cosigned_at: s.cosigned_at,
        })
        .collect();
    Json(Info {
        name: w.config.cosigner.name().to_owned(),
        vkey: w.config.cosigner.vkey(),
        delta_ms: w.config.delta_ms,
        logs,
    })
    .into_response()
}
