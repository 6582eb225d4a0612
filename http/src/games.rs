//! Game catalog, bets, raw RNG requests, results and verification.

use super::schema::AcceptanceDoc;
use super::{schema, ApiError, State};
use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State as AxState};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use serde_json::Value;
use vrs_protocol::acceptance::Place;
use vrs_protocol::games::{catalog as game_catalog, parse_bet, valid_bet_types, Game};
use vrs_protocol::sorted::Sorted;
use vrs_protocol::verification::OutcomeDoc;
use vrs_service::bets::{self, Accepted, Placement};
use vrs_service::verify::{lookup, Lookup};
use vrs_store::GameRecord;

/// Longest client_seed of a raw RNG request, in characters.
const MAX_CLIENT_SEED: usize = 256;

pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The id a game path names: a segment that does not decode (invalid UTF-8 after its percent
/// escapes) names no game, so it gets the same 404 as any unknown id, echoing the segment as
/// it was sent.
fn requested_id(decoded: Result<Path<String>, PathRejection>, uri: &Uri) -> String {
    match decoded {
        Ok(Path(id)) => id,
        Err(_) => uri.path().rsplit('/').next().unwrap_or_default().to_owned(),
    }
}

/// A game id as the API hands them out: 32 lowercase hex digits.
fn is_game_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// About how long an epoch's VDF takes (T at the current squaring rate), for messages: "5",
/// or "0.3" under ten seconds.
fn vdf_seconds(state: &State) -> String {
    let rate = state
        .engine
        .squarings_per_second
        .load(std::sync::atomic::Ordering::Relaxed);
    let secs = match rate {
        0 => state.epoch_ms as f64 / 1000.0,
        r => state.current_iterations() as f64 / r as f64,
    };
    if secs < 9.95 {
        format!("{secs:.1}")
    } else {
        format!("{secs:.0}")
    }
}

/// The game catalog
#[utoipa::path(
    get,
    path = "/api/v1/games",
    tag = "games",
    responses((status = 200, description = "Games and raw RNG (interface 2.4)", body = schema::Catalog))
)]
pub async fn catalog() -> Json<schema::Catalog> {
    let games = game_catalog()
        .into_iter()
        .filter(|c| c.game != Game::Rng) // raw RNG has its own member below
        .map(|c| schema::CatalogEntry {
            kind: c.game.name().into(),
            name: c.name.into(),
            description: c.description.into(),
            bet_types: valid_bet_types(c.game)
                .iter()
                .map(|t| t.to_string())
                .collect(),
            house_edge: c.house_edge,
            endpoint: format!("/api/v1/games/{}/bet", c.game.name()),
        })
        .collect();
    Json(schema::Catalog {
        games,
        raw_rng: schema::RawRngEntry {
            description: "Verifiable random value without a game: rngValue = HMAC-SHA256(y_e, \
                game_id ‖ client_seed), resolved with the next epoch"
                .into(),
            endpoint: "/api/v1/rng/generate".into(),
        },
        rules: "/docs/games".into(),
    })
}

/// Place a two-dice bet
///
/// 202 on the epoch path (the result comes after the next epoch, about 5 s); 200 at once when
/// the bet is served from the precomputed pool (`"instant": true`, or the operator's default).
/// Rules and payouts: /docs/games.
#[utoipa::path(
    post,
    path = "/api/v1/games/dice/bet",
    tag = "games",
    request_body(content = schema::DiceBetRequest, content_type = "application/json",
        description = "bet_type: exact (with target 2–12), over7, under7, odd, even",
        example = json!({"bet_type": "over7", "amount": 1.0, "player_seed": "my seed"})),
    responses(
        (status = 200, description = "Served at once from the pool (interface 2.7)", body = schema::InstantBet),
        (status = 202, description = "Accepted into the open epoch", body = schema::BetAccepted),
        (status = 400, description = "Invalid bet type or parameters", body = schema::BetError),
        (status = 413, description = "Body over 16 KiB", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn dice_bet(
    AxState(state): AxState<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    place_bet(state, Game::Dice, &headers, &body).await
}

/// Place a Sic Bo bet
///
/// Three dice. 202 on the epoch path; 200 at once when served from the pool. Rules and
/// payouts: /docs/games.
#[utoipa::path(
    post,
    path = "/api/v1/games/sicbo/bet",
    tag = "games",
    request_body(content = schema::SicboBetRequest, content_type = "application/json",
        description = "bet_type: big, small, odd, even, total (target 4–17), single, double, \
            triple (target 1–6), anyTriple, combo (combo: two different faces)",
        example = json!({"bet_type": "total", "target": 10, "amount": 1.0})),
    responses(
        (status = 200, description = "Served at once from the pool (interface 2.7)", body = schema::InstantBet),
        (status = 202, description = "Accepted into the open epoch", body = schema::BetAccepted),
        (status = 400, description = "Invalid bet type or parameters", body = schema::BetError),
        (status = 413, description = "Body over 16 KiB", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn sicbo_bet(
    AxState(state): AxState<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    place_bet(state, Game::Sicbo, &headers, &body).await
}

async fn place_bet(
    state: State,
    game: Game,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::BadBet {
            game,
            message: "Content-Type must be application/json".into(),
        });
    }
    let bet = parse_bet(game, body, &state.limits).map_err(|e| ApiError::BadBet {
        game,
        message: e.message,
    })?;
    // The path depends on the request only (and the operator's default), never on an
    // outcome (docs/PROTOCOL.md §15).
    let wanted = bet.instant.unwrap_or(state.pool.instant_default);
    let over_budget = wanted && !state.instant_budget.try_take(std::time::Instant::now());
    let instant = wanted && !over_budget;
    let accepted = match bets::place(&*state.store, &state.acceptance, game, bet, instant).await? {
        Placement::Instant(served) => {
            return Ok((StatusCode::OK, Json(Sorted(instant_body(&served)))).into_response())
        }
        Placement::Epoch(accepted) => *accepted,
    };
    let epoch = accepted.epoch;
    let (game_id, bet_id) = (
        accepted.game.game_id.clone(),
        accepted.game.request_id.clone(),
    );
    let acceptance = acceptance_doc(&accepted);
    let wait = format!(
        "the result comes when that epoch resolves, after the next VDF epoch (about {} s). \
         Poll /api/v1/games/{game_id}.",
        vdf_seconds(&state)
    );
    let class_group = state
        .modulus
        .starts_with(vrs_engine::classgroup::epoch::GROUP_PREFIX);
    let message = if over_budget {
        format!(
            "This service serves at most {} instant bets per second and that budget is spent, \
             so the bet took the epoch path: accepted into epoch {epoch}; {wait}",
            state.instant_budget.per_second()
        )
    } else if instant && class_group {
        format!(
            "Instant bets need an RSA group and this server runs {}, so the bet took the epoch \
             path: accepted into epoch {epoch}; {wait}",
            state.modulus
        )
    } else if instant {
        format!(
            "The instant pool is empty, so the bet took the epoch path: accepted into epoch \
             {epoch}; {wait}"
        )
    } else {
        format!("Bet accepted into epoch {epoch}; {wait}")
    };
    let body = schema::BetAccepted {
        accepted: true,
        bet_id,
        poll_url: format!("/api/v1/games/{game_id}"),
        game_id,
        resolves_at_epoch: epoch,
        message,
        pool_served: wanted.then_some(false),
        acceptance,
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// The signed acceptance of an epoch-path game, as the player keeps it.
fn acceptance_doc(a: &Accepted) -> AcceptanceDoc {
    AcceptanceDoc::new(
        Place::Epoch(a.epoch),
        &a.game.leaf,
        a.game.created_at_ms,
        &a.signed,
    )
}

/// The instant (pool-served) response, interface section 2.7.
fn instant_body(game: &GameRecord) -> schema::InstantBet {
    let empty = vrs_store::GameResolution {
        game_id: game.new.game_id.clone(),
        rng_value: String::new(),
        dice: Vec::new(),
        won: None,
        payout: None,
    };
    let stored = game.resolution.as_ref().unwrap_or(&empty);
    let g = &game.new;
    let acceptance = match (game.pool_index, g.acceptance) {
        (Some(i), Some(signed)) => Some(AcceptanceDoc::new(
            Place::Pool(i),
            &g.leaf,
            g.created_at_ms,
            &signed,
        )),
        _ => None,
    };
    schema::InstantBet {
        status: "resolved".into(),
        game_id: g.game_id.clone(),
        bet_id: g.request_id.clone(),
        pool_served: true,
        pool_index: game.pool_index,
        result: schema::InstantResult {
            outcome: OutcomeDoc::of(&stored.dice),
            won: stored.won,
            payout: stored.payout.clone(),
            rng_value: stored.rng_value.clone(),
            bet_type: g.bet_type.clone(),
            amount: g.amount.clone(),
        },
        verify_url: format!("/api/v1/verify/{}", g.game_id),
        verify_page: format!("/verify?game={}", g.game_id),
        acceptance,
    }
}

/// Request a raw verifiable random value
///
/// No game: rngValue = HMAC-SHA256(y_e, game_id ‖ client_seed) once the next epoch resolves.
/// `Content-Type: application/json` is required, with or without a body: this document asks
/// for a body (`{}` for no seed), and the service also takes an empty body or `null`.
#[utoipa::path(
    post,
    path = "/api/v1/rng/generate",
    tag = "randomness",
    request_body(content = Option<schema::RngRequest>, content_type = "application/json",
        example = json!({"client_seed": "my seed"})),
    responses(
        (status = 202, description = "Accepted into the open epoch (interface 2.12)", body = schema::RngAccepted),
        (status = 400, description = "The body is not a JSON object with an optional client_seed, or the Content-Type is not application/json", body = schema::ErrorBody),
        (status = 413, description = "Body over 16 KiB", body = schema::ErrorBody),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn rng_generate(
    AxState(state): AxState<State>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    // Even with no body: a write without this header is a CORS "simple request", which any
    // web page could make its visitors' browsers send; with it, the browser asks first (a
    // preflight), and this server allows no cross-origin writes.
    if !is_json(&headers) {
        return Err(ApiError::BadRequest(
            "Content-Type must be application/json (the body is optional, the header is not)"
                .into(),
        ));
    }
    let client_seed = parse_rng_body(&body).map_err(ApiError::BadRequest)?;
    let accepted = bets::request_rng(&*state.store, &state.acceptance, client_seed).await?;
    let epoch = accepted.epoch;
    let (game_id, request_id) = (
        accepted.game.game_id.clone(),
        accepted.game.request_id.clone(),
    );
    let acceptance = acceptance_doc(&accepted);
    let body = schema::RngAccepted {
        accepted: true,
        request_id,
        poll_url: format!("/api/v1/games/{game_id}"),
        game_id,
        resolves_at_epoch: epoch,
        message: format!("Request accepted into epoch {epoch}; poll the URL for the value."),
        acceptance,
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

/// The optional body of a raw RNG request: nothing, `null`, or a JSON object with
/// `client_seed`.
fn parse_rng_body(body: &[u8]) -> Result<Option<String>, String> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let v = vrs_protocol::unique_json::parse(body)
        .map_err(|e| format!("body must be a JSON object: {e}"))?;
    let v = match v {
        // `null` is no body, as null is an absent member in a bet (docs/GAMES.md §5).
        Value::Null => return Ok(None),
        Value::Object(v) => v,
        _ => return Err("body must be a JSON object".into()),
    };
    if let Some(k) = v.keys().find(|k| *k != "client_seed") {
        return Err(format!("unknown field `{k}`; expected `client_seed`"));
    }
    match v.get("client_seed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.contains('\0') => {
            Err("client_seed must not contain U+0000 (NUL)".into())
        }
        Some(Value::String(s)) if s.chars().count() <= MAX_CLIENT_SEED => Ok(Some(s.clone())),
        Some(Value::String(_)) => Err(format!(
            "client_seed is longer than {MAX_CLIENT_SEED} characters"
        )),
        Some(_) => Err("client_seed must be a string".into()),
    }
}

/// The result of a game
///
/// The outcome with its proof and replay once the game's epoch has resolved (200); 202 while
/// it is pending.
#[utoipa::path(
    get,
    path = "/api/v1/games/{gameId}",
    tag = "games",
    params(("gameId" = String, Path, description = "The game's id: 32 lowercase hex digits")),
    responses(
        (status = 200, description = "Resolved: result and replay", body = schema::ResolvedGame),
        (status = 202, description = "Pending: its epoch has not resolved yet", body = schema::GamePending),
        (status = 404, description = "No such game", body = schema::GameNotFound),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn game_result(
    AxState(state): AxState<State>,
    game_id: Result<Path<String>, PathRejection>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let game_id = requested_id(game_id, &uri);
    if !is_game_id(&game_id) {
        return Err(ApiError::GameNotFound(game_id));
    }
    match look_up(&state, &game_id).await? {
        Lookup::NotFound => Err(ApiError::GameNotFound(game_id)),
        Lookup::Pending(g) => Ok(pending(&state, &g)),
        Lookup::Resolved(v) => {
            let v = *v;
            let body = schema::ResolvedGame {
                status: "resolved".into(),
                game_id,
                result: v.result,
                replay: v.replay_steps,
            };
            json_off_the_runtime(&state, body).await
        }
    }
}

/// Verify a game
///
/// Recomputes every check from the stored data at this request (bet leaf, Merkle inclusion,
/// epoch chain and input, the Wesolowski proof, rngValue, the dice, the payout, the anchor)
/// and returns the proof data and replay steps to redo them offline (docs/PROTOCOL.md §13).
#[utoipa::path(
    get,
    path = "/api/v1/verify/{gameId}",
    tag = "games",
    params(("gameId" = String, Path, description = "The game's id: 32 lowercase hex digits")),
    responses(
        (status = 200, description = "Verification (interface 2.9)", body = schema::VerifyBody),
        (status = 202, description = "Pending: its epoch has not resolved yet", body = schema::GamePending),
        (status = 404, description = "No such game", body = schema::VerifyNotFound),
        (status = 503, description = "The database is unavailable", body = schema::ErrorBody),
    )
)]
pub async fn verify(
    AxState(state): AxState<State>,
    game_id: Result<Path<String>, PathRejection>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let game_id = requested_id(game_id, &uri);
    if !is_game_id(&game_id) {
        return Err(ApiError::VerifyNotFound(game_id));
    }
    match look_up(&state, &game_id).await? {
        Lookup::NotFound => Err(ApiError::VerifyNotFound(game_id)),
        Lookup::Pending(g) => Ok(pending(&state, &g)),
        Lookup::Resolved(v) => {
            let v = *v;
            let body = schema::VerifyBody {
                game_id,
                verified: v.verified(),
                checks: v.checks,
                proof: v.result.proof,
                replay_steps: v.replay_steps,
            };
            json_off_the_runtime(&state, body).await
        }
    }
}

async fn look_up(state: &State, game_id: &str) -> Result<Lookup, ApiError> {
    let (cache, workers) = (&state.verify_cache, &state.read_workers);
    let log = state.log.as_deref();
    Ok(lookup(
        state.store.as_ref(),
        &state.anchor,
        cache,
        workers,
        log,
        game_id,
    )
    .await?)
}

/// A 200 with `body` (members sorted), serialized on a read worker: a verification is a few
/// kilobytes of JSON, and a flood of them must not hold the runtime bets are answered on.
async fn json_off_the_runtime<T: Serialize + Send + 'static>(
    state: &State,
    body: T,
) -> Result<Response, ApiError> {
    let bytes = state
        .read_workers
        .run(move || serde_json::to_vec(&Sorted(body)))
        .await?
        .map_err(|e| {
            ApiError::Internal(anyhow::Error::from(e).context("serializing the answer"))
        })?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response())
}

/// 202: the game is accepted but its epoch has not resolved yet.
fn pending(state: &State, g: &GameRecord) -> Response {
    let body = schema::GamePending {
        status: "pending".into(),
        game_id: g.new.game_id.clone(),
        resolves_at_epoch: g.epoch,
        message: format!(
            "waiting for epoch {} to resolve (its VDF takes about {} s)",
            g.epoch.unwrap_or_default(),
            vdf_seconds(state)
        ),
    };
    (StatusCode::ACCEPTED, Json(body)).into_response()
}
