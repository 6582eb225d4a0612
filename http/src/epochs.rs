//! One epoch's public record: what `vrs verify` and `vrs audit` need to check the chain of
//! epochs without trusting the server (its input, output and proof, and the hashes of its
//! leaves, enough to recompute the bets root).

use super::{schema, ApiError, State};
use axum::extract::{Path, RawQuery, State as AxState};
use axum::Json;
use vrs_engine::merkle;
use vrs_protocol::verification::{AnchorDoc, AnchorPending};
use vrs_service::anchor::batch::{inclusion, Subject};
use vrs_service::anchor::proof::{inclusion_doc, pending_doc};
use vrs_service::verify::{epoch_tree, veo_class};
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
    params(
        ("number" = u64, Path, minimum = 1, description = "The epoch number (from 1)"),
        ("leaf_from" = Option<u64>, Query, minimum = 0, description = "Opt-in range: the first leaf hash to return (default 0). With either range parameter, `leaf_hashes` holds only the range and `leaf_from` says where it starts"),
        ("leaf_limit" = Option<u64>, Query, minimum = 0, description = "Opt-in range: at most this many leaf hashes (default all; 0 for none). Without either parameter every leaf hash is returned"),
    ),
    responses(
        (status = 200, description = "The epoch", body = schema::EpochRecord),
        (status = 400, description = "The number, leaf_from or leaf_limit is not an integer", body = schema::ErrorBody),
        (status = 404, description = "No such epoch", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn epoch(
    AxState(state): AxState<State>,
    Path(number): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<schema::EpochRecord>, ApiError> {
    let n: u64 = number.parse().map_err(|_| {
        ApiError::BadRequest(format!("epoch number must be an integer, got {number:?}"))
    })?;
    let range = LeafRange::parse(query.as_deref().unwrap_or(""))?;
    let Some(e) = state.store.epoch(n).await? else {
        return Err(ApiError::NotFound(format!("no epoch {n}")));
    };
    // A closed epoch's games are fixed: its leaves and bets root are public from the close,
    // before its input exists (it waits for y_p).
    let tree = match e.status {
        EpochStatus::Open => None,
        _ => Some(epoch_tree(state.store.as_ref(), &state.verify_cache, &e).await?),
    };
    let hashes = tree.as_ref().map_or(&[][..], |t| t.leaves());
    let input = e.input.as_ref();
    let (bets_root, bet_count) = match (input, e.status) {
        (Some(i), _) => (Some(hex::encode(i.bets_root)), Some(i.bet_count)),
        (None, EpochStatus::Open) => (None, None),
        (None, _) => (
            Some(hex::encode(merkle::root(hashes))),
            Some(hashes.len() as u64),
        ),
    };
    let leaf_hashes = range.of(hashes).iter().map(hex::encode).collect();
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
        leaf_from: range.asked.then_some(range.from),
        anchor: anchor_doc(&state, n).await?,
        log: match &state.log {
            Some(log) => log.evidence(n).await?,
            None => None,
        },
    }))
}

/// The opt-in range of leaf hashes (`?leaf_from=A&leaf_limit=B`); without either parameter,
/// all of them. Other query parameters are ignored.
#[derive(Debug, PartialEq)]
struct LeafRange {
    asked: bool,
    from: u64,
    limit: Option<u64>,
}

impl LeafRange {
    fn parse(query: &str) -> Result<Self, ApiError> {
        let mut range = Self {
            asked: false,
            from: 0,
            limit: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let slot = match name {
                "leaf_from" => &mut range.from,
                "leaf_limit" => range.limit.insert(0),
                _ => continue,
            };
            // At most 2^63 − 1, the int64 range the OpenAPI document declares.
            *slot = value
                .parse::<i64>()
                .ok()
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| {
                    let shown: String = value.chars().take(32).collect();
                    ApiError::BadRequest(format!(
                        "{name} must be a non-negative integer (below 2^63), got {shown:?}"
                    ))
                })?;
            range.asked = true;
        }
        Ok(range)
    }

    /// The part of `all` the range selects (empty past the end).
    fn of<'a, T>(&self, all: &'a [T]) -> &'a [T] {
        let from = usize::try_from(self.from)
            .unwrap_or(usize::MAX)
            .min(all.len());
        let rest = &all[from..];
        let limit = self
            .limit
            .map_or(rest.len(), |l| usize::try_from(l).unwrap_or(usize::MAX));
        &rest[..limit.min(rest.len())]
    }
}

/// The epoch's `anchor` object, the same shape as a verification's (docs/PROTOCOL.md §16, "In
/// the verification response"), so that `vrs audit` can check a range of epochs against their
/// anchor batches. The store failing is a 503; records that no longer add up to their batch
/// only add an `error` (a verifier's own recomputation then fails).
async fn anchor_doc(state: &State, n: u64) -> Result<AnchorDoc, ApiError> {
    let enabled = state.anchor.status.snapshot().enabled;
    match inclusion(state.store.as_ref(), &state.anchor.paths, Subject::Epoch(n)).await {
        Ok(Some(inc)) => inclusion_doc(state.store.as_ref(), &inc, &state.anchor, enabled)
            .await
            .map_err(ApiError::from),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_selects_its_slice_and_the_default_is_everything() {
        let all = [0, 1, 2, 3, 4];
        let range = |q: &str| LeafRange::parse(q).expect(q);
        assert_eq!(range("").of(&all), all);
        assert!(!range("other=1").asked);
        assert_eq!(range("leaf_from=1&leaf_limit=2").of(&all), [1, 2]);
        assert_eq!(range("leaf_from=3").of(&all), [3, 4]);
        assert_eq!(range("leaf_limit=0").of(&all), [0; 0]);
        assert_eq!(range("leaf_from=9&leaf_limit=2").of(&all), [0; 0]);
        assert_eq!(range("leaf_limit=9223372036854775807").of(&all), all);
        for bad in [
            "leaf_from=-1",
            "leaf_limit=x",
            "leaf_from",
            "leaf_limit=1e3",
            "leaf_limit=9223372036854775808",
        ] {
            assert!(LeafRange::parse(bad).is_err(), "{bad}");
        }
    }
}
