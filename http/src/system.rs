//! Service info, health, entropy, stats, recent games and the embedded documents.

use super::{schema, ApiError, State, API_VERSION};
use axum::body::Bytes;
use axum::extract::State as AxState;
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use sha2::{Digest, Sha256};
use std::sync::atomic::Ordering;
use std::time::Instant;
use vrs_protocol::sorted::Sorted;
use vrs_service::verify::veo_class;

fn uptime(state: &State) -> u64 {
    state.started.elapsed().as_secs()
}

fn vdf_status(state: &State) -> &'static str {
    // The chain runs whichever replica leads it; `role` says whether this one does.
    if state.engine.error().is_some() {
        "degraded"
    } else {
        "active"
    }
}

/// Whether this process runs the epoch chain ("leader") or only serves ("replica").
fn role(state: &State) -> &'static str {
    if state.engine.leader.load(Ordering::Relaxed) {
        "leader"
    } else {
        "replica"
    }
}

/// Service info
///
/// Name, version, status, links (the in-browser verifier, the whitepaper, the API reference),
/// the database, the VDF engine's epoch and the anchoring state.
#[utoipa::path(
    get,
    path = "/",
    tag = "system",
    responses(
        (status = 200, description = "Service info (interface 2.1)", body = schema::ServiceInfo),
    )
)]
pub async fn info(
    AxState(state): AxState<State>,
) -> Result<Json<Sorted<schema::ServiceInfo>>, ApiError> {
    let connected = state.store.ping().await.is_ok();
    let open = state.store.open_epoch().await.ok().map(|e| e.number);
    let last_resolved = state
        .store
        .latest_resolved_epoch()
        .await
        .ok()
        .flatten()
        .map(|e| e.number);
    let e = &state.engine;
    let last_ms = e.last_computation_ms.load(Ordering::Relaxed);
    // The list a verifier checks acceptance signatures against (docs/PROTOCOL.md §11).
    let acceptance_keys = state
        .store
        .acceptance_keys()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(k, since)| schema::AcceptanceKey {
            public_key: hex::encode(k),
            since_ms: since,
        })
        .collect();
    Ok(Json(Sorted(schema::ServiceInfo {
        service: "vrs".into(),
        description: "Verifiable randomness: epochs resolved by a VDF (Wesolowski, RSA group) \
            over committed bets; provably fair dice and Sic Bo; every outcome verifiable offline"
            .into(),
        version: API_VERSION.into(),
        status: if connected { "operational" } else { "degraded" }.into(),
        links: schema::Links {
            verify: "/verify".into(),
            whitepaper: "/whitepaper".into(),
            api_docs: "/docs".into(),
            health: "/health".into(),
            stats: "/api/v1/stats".into(),
            recent: "/api/v1/recent".into(),
            docs: "/docs".into(),
        },
        database: schema::Database::of(connected),
        vdf_engine: schema::VdfEngine {
            status: vdf_status(&state).into(),
            epoch: schema::EngineEpoch {
                current: open,
                computing: non_zero(e.computing_epoch.load(Ordering::Relaxed)),
                last_resolved,
                iterations: state.current_iterations(),
                modulus: state.modulus.clone(),
            },
            role: role(&state).into(),
            computation_time: format!("{:.2}s", last_ms as f64 / 1000.0),
            security: security(&state),
        },
        anchoring: anchoring_summary(&state),
        acceptance_key: hex::encode(state.acceptance.public_key()),
        acceptance_keys,
        uptime: uptime(&state),
    })))
}

/// The timing rule in force (docs/PROTOCOL.md §10, "Timing"): the margin A this process opens
/// epochs with, the VDF threads that takes, and the squaring rate R the next epoch is measured
/// against.
fn security(state: &State) -> schema::Security {
    schema::Security {
        margin: f64::from(state.margin_centi) / 100.0,
        vdf_threads: state.lanes,
        squarings_per_second: state.engine.squarings_per_second.load(Ordering::Relaxed),
        protocol_version: 2,
        rule: "an epoch closes by max(opened, closed_p + a(T_p)) + a(T_e), a(T) = T / (margin × \
               squarings_per_second)"
            .into(),
    }
}

const ANCHORING_DISABLED: &str =
    "anchoring is disabled: start with --anchor-rpc-url (and a signing key) to anchor batch roots";

/// Anchoring as `GET /` shows it (no database read).
fn anchoring_summary(state: &State) -> schema::AnchoringSummary {
    let a = &state.anchor;
    let s = a.status.snapshot();
    schema::AnchoringSummary {
        enabled: s.enabled,
        state: s.state.into(),
        chain: a.chain_name.clone(),
        chain_id: a.chain_id,
        message: (!s.enabled).then(|| ANCHORING_DISABLED.into()),
    }
}

fn anchor_batch_summary(b: &vrs_store::AnchorBatch) -> schema::AnchorBatchSummary {
    schema::AnchorBatchSummary {
        number: b.number,
        status: b.status.as_str().into(),
        epochs: schema::EpochSpan {
            first: b.first_epoch,
            last: b.last_epoch,
        },
        pool_batches: schema::BatchSpan {
            from: b.pool_from,
            to: b.pool_to,
        },
        notary_batches: schema::BatchSpan {
            from: b.notary_from,
            to: b.notary_to,
        },
        leaves: b.leaves,
        root: hex::encode(b.root),
        created_at: b.created_at_ms / 1000,
        tx: b.tx_hash.as_ref().map(vrs_service::anchor::tx_hex),
        block: b.block_number,
        confirmed_at: b.confirmed_at_ms.map(|ms| ms / 1000),
    }
}

/// Anchoring for stats: the live state of the loop and the batches as stored.
async fn anchoring_stats(
    state: &State,
    last_resolved: Option<u64>,
) -> Result<schema::AnchoringStats, ApiError> {
    let a = &state.anchor;
    let s = a.status.snapshot();
    let c = state.store.anchor_counts().await?;
    let batched_through = c.last_batch.as_ref().map_or(0, |b| b.last_epoch);
    Ok(schema::AnchoringStats {
        enabled: s.enabled,
        state: s.state.into(),
        message: (!s.enabled).then(|| ANCHORING_DISABLED.into()),
        chain: a.chain_name.clone(),
        chain_id: a.chain_id,
        every_epochs: a.every,
        confirmations: a.confirmations,
        address: s.address,
        to: s.to,
        batches: schema::AnchorBatchCounts {
            pending: c.pending,
            submitted: c.submitted,
            confirmed: c.confirmed,
        },
        pending_batches: c.pending + c.submitted,
        unbatched_epochs: last_resolved.unwrap_or(0).saturating_sub(batched_through),
        anchored_through_epoch: c.last_confirmed.as_ref().map(|b| b.last_epoch),
        last_batch: c.last_batch.as_ref().map(anchor_batch_summary),
        last_anchor: c.last_confirmed.as_ref().map(anchor_batch_summary),
        last_error: s.last_error,
        last_error_at: s.last_error_at_ms.map(|ms| ms / 1000),
        consecutive_failures: s.consecutive_failures,
    })
}

fn non_zero(v: u64) -> Option<u64> {
    (v != 0).then_some(v)
}

/// Health
///
/// Always 200 (the interface's success code): the body says what is wrong.
#[utoipa::path(
    get,
    path = "/health",
    tag = "system",
    responses((status = 200, description = "Health (interface 2.2)", body = schema::Health))
)]
pub async fn health(AxState(state): AxState<State>) -> Json<schema::Health> {
    let ok = state.store.ping().await.is_ok();
    Json(schema::Health {
        status: if ok { "ok" } else { "degraded" }.into(),
        uptime: uptime(&state),
        database: schema::Database::of(ok),
        vdf: vdf_status(&state).into(),
        role: role(&state).into(),
        store: state.store.kind().into(),
    })
}

/// Entropy of the latest resolved epoch
///
/// y of the latest resolved epoch, its SHA-256, and the verify endpoint of its last game.
/// 202 with a pending body before the first epoch resolves.
#[utoipa::path(
    get,
    path = "/api/v1/entropy",
    tag = "randomness",
    responses(
        (status = 200, description = "Entropy (interface 2.3)", body = schema::Entropy),
        (status = 202, description = "No epoch has resolved yet", body = schema::EntropyPending),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn entropy(AxState(state): AxState<State>) -> Result<Response, ApiError> {
    let resolved_here = || state.engine.epochs_resolved.load(Ordering::Relaxed);
    if let Some(body) = state.entropy.fresh(resolved_here(), Instant::now()) {
        return Ok(json_bytes(body));
    }
    let _refreshing = state.entropy.refreshing().await;
    // Another request may have refreshed it while this one waited.
    if let Some(body) = state.entropy.fresh(resolved_here(), Instant::now()) {
        return Ok(json_bytes(body));
    }
    let counted = resolved_here();
    let Some(epoch) = state.store.latest_resolved_epoch().await? else {
        let open = state.store.open_epoch().await?;
        let pending = schema::EntropyPending {
            status: "pending".into(),
            message: "no epoch has resolved yet; the first entropy is published when the \
                first epoch's VDF finishes"
                .into(),
            epoch: open.number,
        };
        return Ok((StatusCode::ACCEPTED, Json(pending)).into_response());
    };
    if let Some(body) = state.entropy.confirm(epoch.number, counted, Instant::now()) {
        return Ok(json_bytes(body));
    }
    let Some(out) = epoch.output.as_ref() else {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "epoch {} is resolved without output",
            epoch.number
        )));
    };
    let last_game = state.store.last_game_id(epoch.number).await?;
    let body = schema::Entropy {
        entropy: hex::encode(&out.y),
        entropy_hash: hex::encode(Sha256::digest(&out.y)),
        source: "vdf_epoch".into(),
        epoch: epoch.number,
        timestamp: out.resolved_at_ms / 1000,
        veo_class: veo_class(&epoch.modulus),
        verify_url: last_game.map(|id| format!("/api/v1/verify/{id}")),
        iterations: epoch.input.as_ref().map(|i| i.iterations),
        modulus: epoch.modulus.clone(),
    };
    let body =
        Bytes::from(serde_json::to_vec(&body).map_err(|e| ApiError::Internal(anyhow::anyhow!(e)))?);
    state
        .entropy
        .store(epoch.number, body.clone(), counted, Instant::now());
    Ok(json_bytes(body))
}

/// A 200 answer of ready JSON bytes.
fn json_bytes(body: Bytes) -> Response {
    (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response()
}

/// Engine and game statistics
///
/// The epoch counters, game counts, squarings per second, the instant-bet pool (with its last
/// committed batch root) and the anchoring loop.
#[utoipa::path(
    get,
    path = "/api/v1/stats",
    tag = "system",
    responses(
        (status = 200, description = "Statistics (interface 2.10)", body = schema::Stats),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn stats(
    AxState(state): AxState<State>,
) -> Result<Json<Sorted<schema::Stats>>, ApiError> {
    let open = state.store.open_epoch().await?;
    let counts = state.store.game_counts().await?;
    let last_resolved = state.store.latest_resolved_epoch().await?.map(|e| e.number);
    let pool = state.store.pool_counts().await?;
    let e = &state.engine;
    let computing = e.computing_epoch.load(Ordering::Relaxed);
    let done = e.squarings_done.load(Ordering::Relaxed);
    let total = e.squarings_total.load(Ordering::Relaxed);
    Ok(Json(Sorted(schema::Stats {
        epoch: schema::StatsEpoch {
            current: open.number,
            open_since: open.opened_at_ms / 1000,
            computing: non_zero(computing),
            progress: (computing != 0 && total != 0)
                .then(|| (done as f64 / total as f64 * 1000.0).round() / 1000.0),
            last_resolved,
            iterations: state.current_iterations(),
            modulus: state.modulus.clone(),
            target_ms: state.epoch_ms,
            last_computation_ms: e.last_computation_ms.load(Ordering::Relaxed),
            security: security(&state),
        },
        total_games: counts.total,
        resolved_games: counts.resolved,
        pending_games: counts.total - counts.resolved,
        games_by_type: counts.by_game,
        performance: schema::Performance {
            squarings_per_second: e.squarings_per_second.load(Ordering::Relaxed),
            epochs_resolved_since_start: e.epochs_resolved.load(Ordering::Relaxed),
            uptime: uptime(&state),
        },
        pool: pool_stats(&state, &pool),
        anchoring: anchoring_stats(&state, last_resolved).await?,
        store: state.store.kind().into(),
        role: role(&state).into(),
        engine_error: e.error(),
    })))
}

/// The instant-bet pool: reserve, configuration, generation, and the last committed batch
/// (its root is published here before any of its entries is served).
fn pool_stats(state: &State, pool: &vrs_store::PoolCounts) -> schema::PoolStats {
    let c = &state.pool;
    let st = &state.pool_status;
    schema::PoolStats {
        depth: pool.depth(),
        served: pool.served,
        generated: pool.generated,
        generated_since_start: st.generated_since_start.load(Ordering::Relaxed),
        generated_per_second: st.rate_milli.load(Ordering::Relaxed) as f64 / 1000.0,
        backend: st.backend.get().cloned(),
        threads: c.threads,
        iterations: c.iterations,
        batch_size: c.batch_size,
        low_water: c.low_water,
        target_depth: c.target_depth,
        refill_rate: c.refill_rate,
        instant_default: c.instant_default,
        generating: role(state) == "leader" && c.threads > 0,
        last_batch: pool.last_batch.as_ref().map(|b| schema::PoolBatchSummary {
            number: b.number,
            root: hex::encode(b.root),
            first_index: b.first_index,
            size: b.size,
            previous_root: hex::encode(b.prev_root),
            anchor_epoch: b.anchor_epoch,
            seed: hex::encode(b.seed),
            committed_at: b.committed_at_ms / 1000,
            committed_at_ms: b.committed_at_ms,
            url: format!("/api/v1/pool/batches/{}", b.number),
        }),
    }
}

/// The 20 most recent games
#[utoipa::path(
    get,
    path = "/api/v1/recent",
    tag = "games",
    responses(
        (status = 200, description = "Recent games, newest first (interface 2.11)", body = schema::Recent),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn recent(
    AxState(state): AxState<State>,
) -> Result<Json<Sorted<schema::Recent>>, ApiError> {
    let games = state
        .store
        .recent_games(20)
        .await?
        .into_iter()
        .map(|g| {
            let r = g.resolution.as_ref();
            schema::RecentGame {
                status: if r.is_some() { "resolved" } else { "pending" }.into(),
                epoch: g.epoch,
                dice: r.map(|r| r.dice.clone()),
                won: r.and_then(|r| r.won),
                payout: r.and_then(|r| r.payout.clone()),
                created_at: g.new.created_at_ms / 1000,
                verify_url: format!("/api/v1/verify/{}", g.new.game_id),
                verify_page: format!("/verify?game={}", g.new.game_id),
                game_id: g.new.game_id,
                game: g.new.game,
                bet_type: g.new.bet_type,
                amount: g.new.amount,
                player_id: g.new.player_id,
            }
        })
        .collect();
    Ok(Json(Sorted(schema::Recent { games })))
}

pub async fn not_found(uri: Uri) -> Response {
    ApiError::NoSuchEndpoint(uri.path().to_owned()).into_response()
}
