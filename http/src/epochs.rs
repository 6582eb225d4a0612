//! One epoch's public record: what `vrs verify` and `vrs audit` need to check the chain of
//! epochs without trusting the server (its input, output and proof, and the hashes of its
//! leaves, enough to recompute the bets root).

use super::{schema, ApiError, State};
use axum::extract::{Path, State as AxState};
use axum::Json;
use vrs_engine::merkle;
use vrs_protocol::verification::{AnchorDoc, AnchorPending};
use vrs_service::anchor::batch::{inclusion, Subject};
use vrs_service::anchor::proof::{inclusion_doc, pending_doc};
use vrs_service::verify::veo_class;
use vrs_store::{EpochStatus, StoreError};

/// An epoch's public record
///
/// Its input x (from the previous output, the bets root and T), output y, the Wesolowski proof
/// (π, ℓ) and the hashes of its leaves in order: what `vrs verify`, `vrs audit` and the
/// in-browser verifier need to check the chain of epochs (docs/PROTOCOL.md §10, §13).
#[utoipa::path(
    get,
    path = "/api/v1/epochs/{number}",
    tag = "audit",
    params(("number" = u64, Path, minimum = 1, description = "The epoch number (from 1)")),
    responses(
        (status = 200, description = "The epoch", body = schema::EpochRecord),
        (status = 400, description = "The number is not an integer", body = schema::ErrorBody),
        (status = 404, description = "No such epoch", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn epoch(
    AxState(state): AxState<State>,
    Path(number): Path<String>,
) -> Result<Json<schema::EpochRecord>, ApiError> {
    let n: u64 = number.parse().map_err(|_| {
        ApiError::BadRequest(format!("epoch number must be an integer, got {number:?}"))
    })?;
    let Some(e) = state.store.epoch(n).await? else {
        return Err(ApiError::NotFound(format!("no epoch {n}")));
    };
    // A closed epoch's games are fixed: its leaves and bets root are public from the close,
    // before its input exists (it waits for y_p).
    let hashes: Vec<merkle::Hash> = match e.status {
        EpochStatus::Open => Vec::new(),
        _ => state
            .store
            .epoch_leaves(n)
            .await?
            .iter()
            .map(|l| merkle::leaf_hash(l))
            .collect(),
    };
    let input = e.input.as_ref();
    let (bets_root, bet_count) = match (input, e.status) {
        (Some(i), _) => (Some(hex::encode(i.bets_root)), Some(i.bet_count)),
        (None, EpochStatus::Open) => (None, None),
        (None, _) => (
            Some(hex::encode(merkle::root(&hashes))),
            Some(hashes.len() as u64),
        ),
    };
    let leaf_hashes = hashes.iter().map(hex::encode).collect();
    let output = e.output.as_ref();
    Ok(Json(schema::EpochRecord {
        epoch: e.number,
        status: e.status.as_str().into(),
        veo_class: veo_class(&e.modulus),
        modulus: e.modulus.clone(),
        opened_at_ms: e.opened_at_ms,
        closed_at_ms: e.closed_at_ms,
        iterations: e.iterations(),
        version: e.version(),
        previous_epoch: e.previous(),
        previous_output: input.map(|i| hex::encode(&i.prev_y)),
        security_margin: e.plan.map(|p| f64::from(p.margin_centi) / 100.0),
        squarings_per_second: e.plan.map(|p| p.squarings_per_second),
        deadline_ms: e.plan.map(|p| p.deadline_ms),
        nonce: e.nonce.map(hex::encode),
        bets_root,
        bet_count,
        x: input.map(|i| hex::encode(&i.x)),
        y: output.map(|o| hex::encode(&o.y)),
        pi: output.map(|o| hex::encode(&o.pi)),
        l: output.map(|o| hex::encode(&o.l)),
        resolved_at_ms: output.map(|o| o.resolved_at_ms),
        leaf_hashes,
        anchor: anchor_doc(&state, n).await?,
    }))
}

/// The epoch's `anchor` object, the same shape as a verification's (docs/PROTOCOL.md §16, "In
/// the verification response"), so that `vrs audit` can check a range of epochs against their
/// anchor batches. The store failing is a 503; records that no longer add up to their batch
/// only add an `error` (a verifier's own recomputation then fails).
async fn anchor_doc(state: &State, n: u64) -> Result<AnchorDoc, ApiError> {
    let enabled = state.anchor.status.snapshot().enabled;
    match inclusion(state.store.as_ref(), Subject::Epoch(n)).await {
        Ok(Some(inc)) => Ok(inclusion_doc(&inc, &state.anchor, enabled)),
        Ok(None) => Ok(pending_doc(enabled)),
        Err(e) if e.downcast_ref::<StoreError>().is_some() => Err(e.into()),
        Err(e) => match pending_doc(enabled) {
            AnchorDoc::Pending(p) => Ok(AnchorDoc::Pending(AnchorPending {
                error: Some(format!("{e:#}")),
                ..p
            })),
            included => Ok(included),
        },
    }
}
