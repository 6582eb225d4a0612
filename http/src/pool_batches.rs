//! The pool's audit view: a committed batch with its leaf hashes (enough to recompute its
//! root) and which game consumed each served entry. Nothing about an unserved entry but its
//! leaf hash leaves the service: its output would let anyone pick a winning seed for it.

use super::{schema, ApiError, State};
use axum::extract::{Path, State as AxState};
use axum::Json;
use vrs_engine::merkle;
use vrs_engine::pool::entry_leaf;

/// A committed pool batch
///
/// The batch's row (seed, root, previous root, anchor epoch, commit time), the leaf hash of
/// every entry (enough to recompute the root) and the game that consumed each served entry
/// (docs/PROTOCOL.md §14). An unserved entry shows only its leaf hash.
#[utoipa::path(
    get,
    path = "/api/v1/pool/batches/{number}",
    tag = "audit",
    params(("number" = u64, Path, minimum = 1, description = "The batch number (from 1)")),
    responses(
        (status = 200, description = "The batch", body = schema::PoolBatch),
        (status = 400, description = "The number is not an integer", body = schema::ErrorBody),
        (status = 404, description = "No such batch", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn batch(
    AxState(state): AxState<State>,
    Path(number): Path<String>,
) -> Result<Json<schema::PoolBatch>, ApiError> {
    let n: u64 = number.parse().map_err(|_| {
        ApiError::BadRequest(format!("batch number must be an integer, got {number:?}"))
    })?;
    let Some(b) = state.store.pool_batch(n).await? else {
        return Err(ApiError::NotFound(format!("no pool batch {n}")));
    };
    let entries = state.store.pool_batch_entries(n).await?;
    let leaf_hashes: Vec<String> = entries
        .iter()
        .map(|e| hex::encode(merkle::leaf_hash(&entry_leaf(&e.entry))))
        .collect();
    let served: Vec<schema::ServedEntry> = entries
        .iter()
        .filter_map(|e| {
            e.game_id.as_ref().map(|id| schema::ServedEntry {
                index: e.entry.index,
                game_id: id.clone(),
                served_at_ms: e.served_at_ms,
                verify_url: format!("/api/v1/verify/{id}"),
            })
        })
        .collect();
    Ok(Json(schema::PoolBatch {
        number: b.number,
        root: hex::encode(b.root),
        previous_root: hex::encode(b.prev_root),
        first_index: b.first_index,
        size: b.size,
        anchor_epoch: b.anchor_epoch,
        seed: hex::encode(b.seed),
        committed_at: b.committed_at_ms / 1000,
        committed_at_ms: b.committed_at_ms,
        leaf_hashes,
        unserved: (entries.len() - served.len()) as u64,
        served,
    }))
}
