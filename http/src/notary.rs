//! The notary endpoints (interface §4.4, docs/PROTOCOL.md §17): schemas, status, receipts,
//! and `POST /v1/notarize` with its order of checks:
//!
//! 1. the body and the Idempotency-Key's spelling (400 naming the field; 404 for a game result
//!    naming no game) — nobody pays for a request that cannot succeed;
//! 2. who pays: a Bearer API key (401 when wrong or revoked), else an x402 payment whose
//!    signature is checked here (402 when it is not good), else 402 with the requirements;
//! 3. the Idempotency-Key, scoped to the key or the payer: replay (same body), 422 (another
//!    body), 409 (the first is still running);
//! 4. for x402: requirements, the nonce (recorded before settling), settlement (402 on any
//!    failure, nothing stored);
//! 5. the receipt, committed with the key's usage or the settled payment and the stored
//!    answer of the Idempotency-Key, before the 202.
//!
//! Steps 1 and 2 parse the request; the game-result check and steps 3 to 5 are the service's
//! use case (`vrs_service::notary::notarize`); this module turns its outcome into the answer.

use super::{schema as doc, ApiError, State};
use axum::body::Bytes;
use axum::extract::{Path, State as AxState};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use vrs_chain::x402;
use vrs_protocol::notary::schema::{self, FieldError, Schema};
use vrs_protocol::sorted::Sorted;
use vrs_service::notary::keys;
use vrs_service::notary::notarize::{self, GameResultRefused, Notarized, Payer, Refused, Request};
use vrs_service::notary::receipt;
use vrs_store::IdempotentResponse;

/// Longest Idempotency-Key accepted.
pub const IDEMPOTENCY_KEY_MAX: usize = 255;

/// A JSON answer with `status` and the headers a use case asked for.
fn json_answer(
    status: StatusCode,
    body: impl serde::Serialize,
    headers: Vec<(&'static str, String)>,
) -> Response {
    let mut res = (status, Json(body)).into_response();
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(&value) {
            res.headers_mut().insert(HeaderName::from_static(name), v);
        }
    }
    res
}

/// The notary's base URL (receipt URLs are absolute): `--public-url` when configured, else
/// the `Host` this request came with, and `X-Forwarded-Proto` only from a declared proxy: a
/// client must not be able to write another site into a receipt or a payment's resource.
fn base_url(state: &State, headers: &HeaderMap) -> String {
    if let Some(url) = &state.public_url {
        return url.clone();
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b".-:[]".contains(&b))
        });
    let forwarded = headers
        .get("x-forwarded-proto")
        .and_then(|h| h.to_str().ok())
        .filter(|_| state.behind_proxy);
    let scheme = match forwarded {
        Some("https") => "https",
        _ => "http",
    };
    host.map_or_else(String::new, |h| format!("{scheme}://{h}"))
}

/// The notary's schemas
///
/// What each schema's payload hash is a digest of, and the rules of its metadata.
#[utoipa::path(
    get,
    path = "/v1/notarize/schemas",
    tag = "notary",
    responses((status = 200, description = "The schemas", body = doc::NotarySchemas))
)]
pub async fn schemas() -> Json<Sorted<doc::NotarySchemas>> {
    Json(Sorted(doc::NotarySchemas {
        schemas: schema::ALL.iter().map(|s| s.describe()).collect(),
    }))
}

/// Notary status, price and payment methods
#[utoipa::path(
    get,
    path = "/v1/notarize/status",
    tag = "notary",
    responses(
        (status = 200, description = "Status", body = doc::NotaryStatus),
        (status = 503, description = "The database is unavailable", body = doc::ErrorBody),
    )
)]
pub async fn status(
    AxState(state): AxState<State>,
) -> Result<Json<Sorted<doc::NotaryStatus>>, ApiError> {
    let counts = state.store.notary_counts().await?;
    let anchor = state.anchor.status.snapshot();
    let anchored = state
        .store
        .anchor_counts()
        .await?
        .last_confirmed
        .map(|b| b.notary_to.saturating_sub(1));
    let notary = &state.notary;
    let text = |s: &str| s.to_owned();
    Ok(Json(Sorted(doc::NotaryStatus {
        service: text("vrs notary"),
        status: text("operational"),
        receipts: counts.receipts,
        pending: counts.pending,
        batch_interval_ms: notary.batch_every.as_millis() as u64,
        last_batch: counts.last_batch.as_ref().map(|b| doc::NotaryBatchSummary {
            number: b.number,
            size: b.size,
            root: hex::encode(b.root),
            sealed_at: b.created_at_ms / 1000,
        }),
        anchoring: doc::NotaryAnchoring {
            enabled: anchor.enabled,
            state: text(anchor.state),
            chain: state.anchor.chain_name.clone(),
            chain_id: state.anchor.chain_id,
            anchored_through_batch: anchored.filter(|n| *n > 0),
        },
        price: notary.x402.as_ref().map(|x| {
            let c = &x.config;
            doc::NotaryPrice {
                amount: c.amount.to_string(),
                decimals: c.decimals,
                display: c.display_price(),
                asset: c.asset.to_checksum(None),
                asset_name: c.asset_name.clone(),
                network: c.network.clone(),
                network_v1: c.network_v1.clone(),
                pay_to: c.pay_to.to_checksum(None),
            }
        }),
        payment_methods: notary.methods().into_iter().map(text).collect(),
        x402: notary.x402.as_ref().map(|x| doc::X402Summary {
            versions: vec![2, 1],
            scheme: text("exact"),
            settlement: text(x.settles_via()),
            headers: doc::X402Headers {
                v2: doc::X402V2Headers {
                    required: text("PAYMENT-REQUIRED"),
                    payment: text("PAYMENT-SIGNATURE"),
                    response: text("PAYMENT-RESPONSE"),
                },
                v1: doc::X402V1Headers {
                    payment: text("X-PAYMENT"),
                    response: text("X-PAYMENT-RESPONSE"),
                },
            },
        }),
        api_keys: doc::ApiKeysSummary {
            header: text("Authorization: Bearer <key>"),
            issued_by: text("vrs keys create --name NAME"),
        },
    })))
}

/// A receipt
///
/// Its status, Merkle proof, anchor, and checks recomputed from the stored data at this
/// request.
#[utoipa::path(
    get,
    path = "/v1/notarize/{receipt_id}",
    tag = "notary",
    params(("receipt_id" = String, Path, description = "The receipt's id")),
    responses(
        (status = 200, description = "The receipt", body = doc::ReceiptView),
        (status = 404, description = "No such receipt", body = doc::ReceiptNotFound),
        (status = 503, description = "The database is unavailable", body = doc::ErrorBody),
    )
)]
pub async fn receipt(
    AxState(state): AxState<State>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !receipt::is_receipt_id(&id) {
        return Err(ApiError::ReceiptNotFound(id));
    }
    let Some(r) = state.store.receipt(&id).await? else {
        return Err(ApiError::ReceiptNotFound(id));
    };
    let view = receipt::full_view(
        state.store.as_ref(),
        &state.anchor,
        &r,
        &base_url(&state, &headers),
    )
    .await?;
    Ok(Json(Sorted(view)).into_response())
}

async fn parse_request(state: &State, body: &[u8]) -> Result<Request, ApiError> {
    let value = vrs_protocol::unique_json::parse(body)
        .map_err(|e| FieldError::new("body", format!("the body must be a JSON object: {e}")))?;
    let Value::Object(obj) = &value else {
        return Err(ApiError::BadField(FieldError::new(
            "body",
            format!(
                "the body must be a JSON object, not {}",
                schema::kind(&value)
            ),
        )));
    };
    if let Some(k) = obj
        .keys()
        .find(|k| !["schema", "payload_hash", "metadata"].contains(&k.as_str()))
    {
        return Err(ApiError::UnknownMember(k.clone()));
    }
    let bad_schema = |message: String| ApiError::BadSchema {
        message,
        valid: schema::ALL.iter().map(|s| s.id()).collect(),
    };
    let schema = match obj.get("schema") {
        Some(Value::String(s)) => Schema::parse(s).ok_or_else(|| {
            bad_schema(format!(
                "unknown schema {s:?}; see GET /v1/notarize/schemas"
            ))
        })?,
        None => return Err(bad_schema("schema is required".to_owned())),
        Some(v) => {
            return Err(bad_schema(format!(
                "schema must be a string, not {}",
                schema::kind(v)
            )))
        }
    };
    let payload_hash = match obj.get("payload_hash") {
        Some(Value::String(s)) => schema::parse_payload_hash(s)?,
        None => {
            return Err(ApiError::BadField(FieldError::new(
                "payload_hash",
                "payload_hash is required",
            )))
        }
        Some(v) => {
            return Err(ApiError::BadField(FieldError::new(
                "payload_hash",
                format!("payload_hash must be a string, not {}", schema::kind(v)),
            )))
        }
    };
    let metadata = schema::canonical_metadata(obj.get("metadata"))?;
    if schema == Schema::GameResult {
        check_game_result(state, &payload_hash, obj.get("metadata")).await?;
    }
    let canonical = vrs_protocol::notary::jcs::canonical(&value).unwrap_or_default();
    Ok(Request {
        schema,
        payload_hash,
        metadata,
        hash: Sha256::digest(canonical.as_bytes()).into(),
    })
}

/// `vrs-game-result`: the game exists, is resolved, and its result hash is the payload hash.
async fn check_game_result(
    state: &State,
    payload_hash: &[u8; 32],
    metadata: Option<&Value>,
) -> Result<(), ApiError> {
    let Some(game_id) = metadata
        .and_then(|m| m.get("game_id"))
        .and_then(Value::as_str)
    else {
        return Err(ApiError::BadField(FieldError::new(
            "metadata.game_id",
            "schema vrs-game-result needs metadata.game_id, the id of a resolved game",
        )));
    };
    notarize::check_game_result(state.store.as_ref(), game_id, payload_hash)
        .await
        .map_err(|e| match e {
            GameResultRefused::NotFound => ApiError::NotarizedGameNotFound(game_id.to_owned()),
            GameResultRefused::NotResolved => ApiError::BadField(FieldError::new(
                "metadata.game_id",
                format!("game {game_id} is not resolved yet; notarize it once it is"),
            )),
            GameResultRefused::OtherHash(expected) => ApiError::BadField(FieldError::new(
                "payload_hash",
                format!(
                    "payload_hash is not game {game_id}'s result hash ({})",
                    hex::encode(expected)
                ),
            )),
            GameResultRefused::Store(e) => e.into(),
        })
}

fn unauthorized(message: impl Into<String>, code: &'static str) -> ApiError {
    ApiError::Unauthorized {
        message: message.into(),
        code,
    }
}

/// 402 with what to pay (or 401 where payments are not configured); `settlement` is
/// settlement's own failure header where it refused the payment.
fn payment_required(
    state: &State,
    headers: &HeaderMap,
    reason: &str,
    settlement: Option<(&'static str, String)>,
) -> ApiError {
    let Some(x) = &state.notary.x402 else {
        return unauthorized(
            format!("{reason}; this service takes API keys only (Authorization: Bearer <key>)"),
            "invalid_request",
        );
    };
    let resource = format!("{}/v1/notarize", base_url(state, headers));
    let (requirements, v1) = x402::payment_required(&x.config, &resource, reason);
    ApiError::PaymentRequired {
        body: Box::new(doc::PaymentRequired {
            x402_version: v1.x402_version,
            error: v1.error,
            accepts: v1.accepts,
            payment_methods: state
                .notary
                .methods()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }),
        requirements,
        settlement,
    }
}

async fn identify(state: &State, headers: &HeaderMap) -> Result<Payer, ApiError> {
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        let text = auth.to_str().unwrap_or_default().trim();
        let key = match text.split_once(' ') {
            Some((scheme, key)) if scheme.eq_ignore_ascii_case("bearer") => key.trim(),
            _ => {
                return Err(unauthorized(
                    "the Authorization header must be \"Bearer <API key>\"",
                    "invalid_request",
                ))
            }
        };
        return match keys::authenticate(state.store.as_ref(), key).await? {
            Ok(k) => Ok(Payer::Key(k)),
            // One answer for both, so that a key's state cannot be probed.
            Err(keys::KeyRefused::Revoked | keys::KeyRefused::Unknown) => {
                Err(unauthorized("unknown or revoked API key", "invalid_token"))
            }
        };
    }
    let v2 = headers
        .get(x402::HEADER_SIGNATURE)
        .map(|v| v.to_str().unwrap_or_default());
    let v1 = headers
        .get(x402::HEADER_V1_PAYMENT)
        .map(|v| v.to_str().unwrap_or_default());
    if v2.is_none() && v1.is_none() {
        return Err(payment_required(
            state,
            headers,
            "payment required: send an API key (Authorization: Bearer <key>) or an x402 payment \
             (PAYMENT-SIGNATURE, or X-PAYMENT for x402 v1)",
            None,
        ));
    }
    let Some(x) = &state.notary.x402 else {
        return Err(payment_required(
            state,
            headers,
            "x402 payments are not accepted here",
            None,
        ));
    };
    match x402::decode(&x.config, v2, v1) {
        Ok(Some(p)) => Ok(Payer::X402(Box::new(p))),
        Ok(None) => Err(payment_required(state, headers, "payment required", None)),
        Err(r) => Err(payment_required(state, headers, &r.0, None)),
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(v) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let bad = |why: &str| {
        ApiError::BadField(FieldError::new(
            "Idempotency-Key",
            format!(
                "Idempotency-Key {why}; use 1 to {IDEMPOTENCY_KEY_MAX} printable ASCII characters"
            ),
        ))
    };
    let text = v.to_str().map_err(|_| bad("is not ASCII"))?;
    if text.is_empty() {
        return Err(bad("is empty"));
    }
    if text.len() > IDEMPOTENCY_KEY_MAX {
        return Err(bad(&format!("is {} characters long", text.len())));
    }
    if !text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(bad("holds a control character"));
    }
    Ok(Some(text.to_owned()))
}

/// The stored answer of an Idempotency-Key, replayed as it was.
fn replay(stored: &IdempotentResponse) -> Response {
    let saved: Value = serde_json::from_str(&stored.response).unwrap_or(Value::Null);
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::ACCEPTED);
    let body = saved.get("body").cloned().unwrap_or(Value::Null);
    let mut res = json_answer(status, body, Vec::new());
    if let Some(Value::Object(h)) = saved.get("headers") {
        for (name, value) in h {
            if let (Ok(n), Some(Ok(v))) = (
                HeaderName::try_from(name.as_str()),
                value.as_str().map(HeaderValue::from_str),
            ) {
                res.headers_mut().insert(n, v);
            }
        }
    }
    res.headers_mut().insert(
        HeaderName::from_static("idempotent-replayed"),
        HeaderValue::from_static("true"),
    );
    res
}

/// Notarize a payload hash
///
/// Paid per request: a Bearer API key, or an x402 payment (without one, 402 says what to pay).
/// An `Idempotency-Key` header makes retries safe: the same key and body get the first answer
/// again, never a second charge. 202 means the receipt is stored durably.
#[utoipa::path(
    post,
    path = "/v1/notarize",
    tag = "notary",
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, min_length = 1,
        max_length = 255, pattern = "^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$",
        description = "1 to 255 printable ASCII characters; scoped to the API key or the payer")),
    request_body(content = doc::NotarizeRequest, content_type = "application/json",
        example = json!({"schema": "sha256", "payload_hash": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "metadata": {"name": "report.pdf"}})),
    security(("api_key" = []), ("x402" = [])),
    responses(
        (status = 202, description = "The receipt, stored", body = doc::Receipt),
        (status = 400, description = "An invalid body member or header (named in `field`)", body = doc::FieldErrorBody),
        (status = 401, description = "A wrong or revoked API key", body = doc::ErrorBody),
        (status = 402, description = "Payment required, or the payment was refused", body = doc::PaymentRequired,
            headers(("PAYMENT-REQUIRED" = String, description = "x402 v2 requirements, base64 JSON"))),
        (status = 404, description = "vrs-game-result: metadata.game_id names no game", body = doc::FieldErrorBody),
        (status = 409, description = "A request with this Idempotency-Key is still running", body = doc::FieldErrorBody),
        (status = 413, description = "Body over 16 KiB", body = doc::ErrorBody),
        (status = 422, description = "This Idempotency-Key was used with another body", body = doc::FieldErrorBody),
        (status = 503, description = "The database is unavailable", body = doc::ErrorBody),
    )
)]
pub async fn notarize(
    AxState(state): AxState<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    // A write without this header is a CORS "simple request" any web page could send.
    if !super::games::is_json(&headers) {
        return Err(ApiError::BadField(FieldError::new(
            "Content-Type",
            "Content-Type must be application/json",
        )));
    }
    let request = parse_request(&state, &body).await?;
    // Its spelling is checked with the body, before anyone is asked to pay.
    let key = idempotency_key(&headers)?;
    let payer = identify(&state, &headers).await?;
    let done = notarize::notarize(
        Arc::clone(&state.store),
        Arc::clone(&state.notary),
        base_url(&state, &headers),
        request,
        payer,
        key,
    )
    .await;
    match done {
        Notarized::Receipted(r) => {
            let r = *r;
            Ok(json_answer(StatusCode::ACCEPTED, Sorted(r.body), r.headers))
        }
        Notarized::Replay(stored) => Ok(replay(&stored)),
        Notarized::KeyReused => Err(ApiError::IdempotencyKeyReused),
        Notarized::KeyInFlight => Err(ApiError::IdempotencyKeyInFlight),
        Notarized::Refused(r) => Err(refused(&state, &headers, r)),
    }
}

/// The error of a notarization that got no receipt.
fn refused(state: &State, headers: &HeaderMap, r: Refused) -> ApiError {
    match r {
        Refused::PaymentRequired(reason) => payment_required(state, headers, &reason, None),
        Refused::SettlementRefused { reason, header } => {
            payment_required(state, headers, &reason, Some(header))
        }
        Refused::Unconfirmed { why, receipt_id } => ApiError::PaymentUnconfirmed {
            why,
            receipt_id,
            within_s: state.notary.recover_after.as_secs() + 30,
        },
        Refused::PaidNotStored { receipt_id } => ApiError::PaidNotStored { receipt_id },
        Refused::Store(e) => e.into(),
        Refused::Internal => ApiError::Internal(anyhow::anyhow!(
            "notarization failed (the cause is logged above)"
        )),
    }
}
