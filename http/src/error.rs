//! The API's errors and their one mapping to HTTP status, headers and JSON body: every error
//! answer of the randomness and notary APIs is built in [`ApiError::into_response`]. Internal
//! detail is logged here, once, and never sent to the client.

use crate::schema::{
    BetError, ErrorBody, FieldErrorBody, GameNotFound, MethodNotAllowed, NoSuchEndpoint,
    PaymentRequired, ReceiptNotFound, ReceiptOnItsWay, RetryLater, SchemaError, VerifyNotFound,
};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use vrs_protocol::games::{example, valid_bet_types, Game};
use vrs_protocol::notary::schema::FieldError;
use vrs_protocol::sorted::Sorted;
use vrs_store::StoreError;

#[derive(Debug)]
pub enum ApiError {
    /// The caller's fault: a bet body that is not a valid bet of `game`.
    BadBet { game: Game, message: String },
    /// The caller's fault: any other invalid request.
    BadRequest(String),
    /// The request body is over the limit (bytes).
    BodyTooLarge(usize),
    /// The request body did not arrive within the limit.
    BodyTimeout(std::time::Duration),
    /// The request body could not be read (the connection broke off, or it is malformed).
    BodyUnreadable(String),
    /// Too many write requests from one client; retry after `retry_after` seconds.
    RateLimited {
        per_second: f64,
        burst: u32,
        retry_after: u64,
    },
    /// The path exists, the method does not (the router's `Allow` header lists these).
    MethodNotAllowed(Vec<String>),
    /// No endpoint has this path.
    NoSuchEndpoint(String),
    /// Any other error status the router answered without a body.
    Status(StatusCode),
    /// The caller's fault: a notary body member or header, named in the answer.
    BadField(FieldError),
    /// The caller's fault: a notary body member the body does not have.
    UnknownMember(String),
    /// The caller's fault: a notary schema that is missing, not a string or unknown.
    BadSchema {
        message: String,
        valid: Vec<&'static str>,
    },
    /// The caller asked for a game that does not exist.
    GameNotFound(String),
    /// The caller asked to verify a game that does not exist.
    VerifyNotFound(String),
    /// A `vrs-game-result` notarization names a game that does not exist.
    NotarizedGameNotFound(String),
    /// The caller asked for a receipt that does not exist.
    ReceiptNotFound(String),
    /// Any other resource that does not exist (the message says which).
    NotFound(String),
    /// A wrong, revoked or malformed API key; `code` is the RFC 6750 error code.
    Unauthorized { message: String, code: &'static str },
    /// What to pay (x402): the version-1 body, the version-2 header, and settlement's own
    /// failure header where settlement refused the payment.
    PaymentRequired {
        body: Box<PaymentRequired>,
        requirements: String,
        settlement: Option<(&'static str, String)>,
    },
    /// This Idempotency-Key was used with another body.
    IdempotencyKeyReused,
    /// A request with this Idempotency-Key is still running.
    IdempotencyKeyInFlight,
    /// The payment was sent, its settlement is not confirmed; the receipt may come within
    /// `within_s` seconds.
    PaymentUnconfirmed {
        why: String,
        receipt_id: String,
        within_s: u64,
    },
    /// Paid, the receipt is not stored yet (the database is down).
    PaidNotStored { receipt_id: String },
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
            Ok(store) => store.into(),
            Err(e) => Self::Internal(e),
        }
    }
}

impl From<FieldError> for ApiError {
    fn from(e: FieldError) -> Self {
        Self::BadField(e)
    }
}

/// An answer: its status, its extra headers and its body, with the members in byte order
/// as these bodies have always been written (`vrs_protocol::sorted`).
fn answer(
    status: StatusCode,
    headers: Vec<(HeaderName, String)>,
    body: impl Serialize,
) -> Response {
    let mut res = (status, Json(Sorted(body))).into_response();
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            res.headers_mut().insert(name, v);
        }
    }
    res
}

/// At most 64 characters of what the client sent, for echoing it back: an answer stays small
/// whatever the request held.
fn echo(text: &str) -> String {
    const MAX: usize = 64;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

fn message(error: impl Into<String>) -> ErrorBody {
    ErrorBody {
        error: error.into(),
    }
}

fn field(error: impl Into<String>, field: &str) -> FieldErrorBody {
    FieldErrorBody {
        error: error.into(),
        field: Some(field.to_owned()),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        use StatusCode as S;
        let none = Vec::new;
        match self {
            Self::BadBet { game, message } => answer(
                S::BAD_REQUEST,
                none(),
                BetError {
                    error: message,
                    valid_bet_types: valid_bet_types(game)
                        .iter()
                        .map(|t| (*t).to_owned())
                        .collect(),
                    example: example(game),
                },
            ),
            Self::BadRequest(m) => answer(S::BAD_REQUEST, none(), message(m)),
            // The rest of what the client sent is unread: this connection cannot carry another
            // request.
            Self::BodyTooLarge(limit) => answer(
                S::PAYLOAD_TOO_LARGE,
                vec![(header::CONNECTION, "close".into())],
                message(format!(
                    "request body too large; the limit is {limit} bytes"
                )),
            ),
            Self::BodyUnreadable(why) => answer(
                S::BAD_REQUEST,
                vec![(header::CONNECTION, "close".into())],
                message(format!("the request body could not be read: {why}")),
            ),
            Self::BodyTimeout(limit) => answer(
                S::REQUEST_TIMEOUT,
                vec![(header::CONNECTION, "close".into())],
                message(format!(
                    "the request body did not arrive within {} s",
                    limit.as_secs_f64()
                )),
            ),
            Self::RateLimited {
                per_second,
                burst,
                retry_after,
            } => answer(
                S::TOO_MANY_REQUESTS,
                vec![(header::RETRY_AFTER, retry_after.to_string())],
                RetryLater {
                    error: format!(
                        "rate limit exceeded: at most {per_second} write requests per second \
                         per client (bursts of {burst}); retry after {retry_after} s"
                    ),
                    retry_after,
                },
            ),
            Self::MethodNotAllowed(allowed) => answer(
                S::METHOD_NOT_ALLOWED,
                none(),
                MethodNotAllowed {
                    error: format!(
                        "method not allowed; this path accepts {}",
                        allowed.join(", ")
                    ),
                    allowed,
                },
            ),
            Self::NoSuchEndpoint(path) => {
                let path = echo(&path);
                answer(
                    S::NOT_FOUND,
                    none(),
                    NoSuchEndpoint {
                        error: format!("no such endpoint: {path}"),
                        docs: "/docs".into(),
                    },
                )
            }
            Self::Status(status) => answer(
                status,
                none(),
                message(status.canonical_reason().unwrap_or("error").to_lowercase()),
            ),
            Self::BadField(e) => answer(S::BAD_REQUEST, none(), field(e.message, e.field)),
            Self::UnknownMember(k) => answer(
                S::BAD_REQUEST,
                none(),
                field(
                    format!("unknown member {k:?}; the body has schema, payload_hash and metadata"),
                    &k,
                ),
            ),
            Self::BadSchema { message, valid } => answer(
                S::BAD_REQUEST,
                none(),
                SchemaError {
                    error: message,
                    field: "schema".into(),
                    valid_schemas: valid.into_iter().map(str::to_owned).collect(),
                },
            ),
            Self::NotFound(m) => answer(S::NOT_FOUND, none(), message(m)),
            Self::GameNotFound(id) => {
                let id = echo(&id);
                answer(
                    S::NOT_FOUND,
                    none(),
                    GameNotFound {
                        error: format!("game {id} not found"),
                        game_id: id,
                    },
                )
            }
            Self::VerifyNotFound(id) => {
                let id = echo(&id);
                answer(
                    S::NOT_FOUND,
                    none(),
                    VerifyNotFound {
                        verified: false,
                        error: format!("game {id} not found"),
                        game_id: id,
                    },
                )
            }
            // 404, not 400: the body is well formed, the game it names does not exist.
            Self::NotarizedGameNotFound(id) => answer(
                S::NOT_FOUND,
                none(),
                field(format!("game {} not found", echo(&id)), "metadata.game_id"),
            ),
            Self::ReceiptNotFound(id) => {
                let id = echo(&id);
                answer(
                    S::NOT_FOUND,
                    none(),
                    ReceiptNotFound {
                        error: format!("receipt {id} not found"),
                        receipt_id: id,
                    },
                )
            }
            Self::Unauthorized { message: m, code } => answer(
                S::UNAUTHORIZED,
                vec![(
                    header::WWW_AUTHENTICATE,
                    format!("Bearer realm=\"vrs-notary\", error=\"{code}\""),
                )],
                message(m),
            ),
            Self::PaymentRequired {
                body,
                requirements,
                settlement,
            } => {
                let mut headers = vec![(
                    HeaderName::from_static(vrs_chain::x402::HEADER_REQUIRED),
                    requirements,
                )];
                if let Some((name, value)) = settlement {
                    headers.push((HeaderName::from_static(name), value));
                }
                answer(S::PAYMENT_REQUIRED, headers, body)
            }
            Self::IdempotencyKeyReused => answer(
                S::UNPROCESSABLE_ENTITY,
                none(),
                field(
                    "this Idempotency-Key was used with a different request body; use a new key \
                     for a new request",
                    "Idempotency-Key",
                ),
            ),
            Self::IdempotencyKeyInFlight => answer(
                S::CONFLICT,
                none(),
                field(
                    "a request with this Idempotency-Key is still being processed; retry \
                     shortly to get its answer",
                    "Idempotency-Key",
                ),
            ),
            Self::PaymentUnconfirmed {
                why,
                receipt_id,
                within_s,
            } => answer(
                S::SERVICE_UNAVAILABLE,
                vec![(header::RETRY_AFTER, "30".into())],
                ReceiptOnItsWay {
                    error: format!(
                        "your payment was sent but its settlement is not confirmed yet ({why}). \
                         Do not pay again: if it settles, receipt {receipt_id} is stored within \
                         about {within_s} s; retry with the same Idempotency-Key to get it"
                    ),
                    receipt_id,
                },
            ),
            Self::PaidNotStored { receipt_id } => answer(
                S::SERVICE_UNAVAILABLE,
                none(),
                ReceiptOnItsWay {
                    error: "your payment has settled but the database is unavailable; the \
                            receipt will be stored once it is back. Retry with the same \
                            Idempotency-Key to get it"
                        .into(),
                    receipt_id,
                },
            ),
            Self::Unavailable(detail) => {
                tracing::warn!(%detail, "database unavailable");
                answer(
                    S::SERVICE_UNAVAILABLE,
                    none(),
                    message("the database is unavailable; retry shortly"),
                )
            }
            Self::EpochClosing(detail) => answer(
                S::SERVICE_UNAVAILABLE,
                vec![(header::RETRY_AFTER, "1".into())],
                RetryLater {
                    error: format!(
                        "no epoch is taking games right now ({detail}); retry in a moment"
                    ),
                    retry_after: 1,
                },
            ),
            Self::Internal(e) => {
                tracing::error!(error = %format!("{e:#}"), "internal error");
                answer(S::INTERNAL_SERVER_ERROR, none(), message("internal error"))
            }
        }
    }
}
