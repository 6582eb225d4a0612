//! One epoch's public record: what `vrs verify` and `vrs audit` need to check the chain of
//! epochs without trusting the server (its input, output and proof, and the hashes of its
//! leaves, enough to recompute the bets root).

use super::{ApiError, State};
use crate::verify::veo_class;
use axum::extract::{Path, State as AxState};
use axum::Json;
use serde_json::{json, Value};
use vrs_engine::merkle;

pub async fn epoch(
    AxState(state): AxState<State>,
    Path(number): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let n: u64 = number.parse().map_err(|_| {
        ApiError::BadRequest(format!("epoch number must be an integer, got {number:?}"))
    })?;
    let Some(e) = state.store.epoch(n).await? else {
        return Err(ApiError::NotFound(format!("no epoch {n}")));
    };
    let leaf_hashes: Vec<String> = match e.input {
        Some(_) => state
            .store
            .epoch_leaves(n)
            .await?
            .iter()
            .map(|l| hex::encode(merkle::leaf_hash(l)))
            .collect(),
        None => Vec::new(),
    };
    let input = e.input.as_ref();
    let output = e.output.as_ref();
    Ok(Json(json!({
        "epoch": e.number,
        "status": e.status.as_str(),
        "modulus": e.modulus,
        "veo_class": veo_class(&e.modulus),
        "opened_at_ms": e.opened_at_ms,
        "closed_at_ms": e.closed_at_ms,
        "iterations": input.map(|i| i.iterations),
        "previous_output": input.map(|i| hex::encode(&i.prev_y)),
        "bets_root": input.map(|i| hex::encode(i.bets_root)),
        "bet_count": input.map(|i| i.bet_count),
        "x": input.map(|i| hex::encode(&i.x)),
        "y": output.map(|o| hex::encode(&o.y)),
        "pi": output.map(|o| hex::encode(&o.pi)),
        "l": output.map(|o| hex::encode(&o.l)),
        "resolved_at_ms": output.map(|o| o.resolved_at_ms),
        "leaf_hashes": leaf_hashes,
    })))
}
