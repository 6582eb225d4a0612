//! The response bodies of the randomness and games API as types, for the OpenAPI document
//! (`GET /api/v1/openapi.json`). The handlers build their answers from these types (and from
//! the verification documents of `vrs_protocol::verification`, re-exported here), so the
//! document describes what is served. `tests/integration/openapi.rs` checks every response the
//! suite provokes against this document and against the recorded wire shapes.
//!
//! Hex values are lowercase without `0x` unless a field says otherwise. Members not listed
//! here may be added in later versions (no schema forbids extra members).

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
pub use vrs_protocol::acceptance::AcceptanceDoc;
pub use vrs_protocol::notary::receipt_doc::{
    Receipt, ReceiptAnchor, ReceiptAnchorPending, ReceiptPayment, ReceiptProof,
    ReceiptVerification, ReceiptView,
};
pub use vrs_protocol::notary::schema::{MetadataRule, PayloadHashRule, SchemaDescription};
pub use vrs_protocol::report::Check;
use vrs_protocol::sorted::members_sorted;
pub use vrs_protocol::verification::{
    AnchorDoc, AnchorIncluded, AnchorPending, Anchoring, BatchSpan, BetDoc, BetEpochDoc,
    BetEvaluated, BetMembers, Checkpoint, DiceRolled, EpochBetCommitted, EpochProof,
    EpochPublished, EpochSpan, GameResult, InterfaceMembers, OutcomeDoc, PoolBetCommitted,
    PoolProof, PoolPublished, Proof, RandomnessDerived, ReplayStep, ResultMembers, RngMembers,
    TimingDoc,
};

pub use requests::{DiceBetRequest, NotarizeRequest, SicboBetRequest};

/// Any error: a message in words.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, in words.
    pub error: String,
}

/// 400 for a bet body that is not a valid bet (interface section 7).
#[derive(Debug, Serialize, ToSchema)]
pub struct BetError {
    pub error: String,
    /// The bet types of this game.
    pub valid_bet_types: Vec<String>,
    /// A valid request body for this game.
    #[schema(value_type = Object)]
    pub example: Value,
}

/// 404 of the verify endpoint (interface section 7).
#[derive(Debug, Serialize, ToSchema)]
pub struct VerifyNotFound {
    /// Always false.
    pub verified: bool,
    /// Says that the game was not found.
    pub error: String,
    pub game_id: String,
}

/// 404 for an unknown game id.
#[derive(Debug, Serialize, ToSchema)]
pub struct GameNotFound {
    pub error: String,
    pub game_id: String,
}

/// 503 while no epoch takes games (a leader failover); the `Retry-After` header says when to
/// retry.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetryLater {
    pub error: String,
    /// Seconds.
    pub retry_after: u64,
}

/// 405: the path exists, the method does not; the `Allow` header lists the methods.
#[derive(Debug, Serialize, ToSchema)]
pub struct MethodNotAllowed {
    pub error: String,
    pub allowed: Vec<String>,
}

/// 404 for a path no endpoint has.
#[derive(Debug, Serialize, ToSchema)]
pub struct NoSuchEndpoint {
    pub error: String,
    /// Where the endpoints are listed.
    pub docs: String,
}

/// `GET /` links (interface section 2.1).
#[derive(Debug, Serialize, ToSchema)]
pub struct Links {
    /// The in-browser verifier page (`/verify?game=<id>` verifies one game).
    pub verify: String,
    /// The protocol document as a page.
    pub whitepaper: String,
    /// The API reference generated from the OpenAPI document.
    pub api_docs: String,
    pub health: String,
    pub stats: String,
    pub recent: String,
    pub docs: String,
}

/// The epoch counters of `GET /`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EngineEpoch {
    /// The open epoch (bets join it).
    pub current: Option<u64>,
    /// The epoch whose VDF runs now.
    pub computing: Option<u64>,
    pub last_resolved: Option<u64>,
    /// T: squarings per epoch.
    pub iterations: u64,
    /// The group's modulus identifier (`rsa2048`, `test512`, `hex:…`).
    pub modulus: String,
}

/// `vdf_engine` of `GET /`.
#[derive(Debug, Serialize, ToSchema)]
pub struct VdfEngine {
    /// `active`, or `degraded` after an engine error.
    pub status: String,
    pub epoch: EngineEpoch,
    /// `leader` (runs the epoch chain) or `replica`.
    pub role: String,
    /// The last epoch's VDF time, e.g. `4.93s`.
    pub computation_time: String,
    pub security: Security,
}

/// The timing rule in force (docs/PROTOCOL.md §10, "Timing").
#[derive(Debug, Serialize, ToSchema)]
pub struct Security {
    /// The security margin A: how much faster than this server's squarer an adversary (the
    /// operator included) may be and still be unable to evaluate any bet set an epoch could
    /// still take.
    pub margin: f64,
    /// Epoch VDFs running side by side (one up to margin 1.8).
    pub vdf_threads: u64,
    /// The squaring rate R that the next epoch's window is measured against.
    pub squarings_per_second: u64,
    /// The protocol version of the epochs opened now (2).
    pub protocol_version: u8,
    /// The rule in one line.
    pub rule: String,
}

/// Anchoring as `GET /` summarises it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnchoringSummary {
    pub enabled: bool,
    pub state: String,
    pub chain: String,
    pub chain_id: u64,
    pub message: Option<String>,
}

/// Service info (interface section 2.1).
#[derive(Debug, Serialize, ToSchema)]
pub struct ServiceInfo {
    pub service: String,
    pub description: String,
    /// The API version (0.2.0).
    pub version: String,
    /// `operational` or `degraded`.
    pub status: String,
    pub links: Links,
    #[schema(inline)]
    pub database: Database,
    pub vdf_engine: VdfEngine,
    pub anchoring: AnchoringSummary,
    /// The key this replica signs acceptances with (64 hex digits).
    pub acceptance_key: String,
    /// Every key acceptances were signed with on this store, oldest first (empty while the
    /// database is unavailable).
    pub acceptance_keys: Vec<AcceptanceKey>,
    /// Seconds since start.
    pub uptime: u64,
}

/// A published acceptance key (docs/PROTOCOL.md §11).
#[derive(Debug, Serialize, ToSchema)]
pub struct AcceptanceKey {
    /// 64 hex digits (RFC 8032 encoding).
    pub public_key: String,
    /// When the store first recorded it (Unix ms).
    pub since_ms: i64,
}

/// Whether the store answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Database {
    Connected,
    Disconnected,
}

impl Database {
    pub fn of(connected: bool) -> Self {
        if connected {
            Self::Connected
        } else {
            Self::Disconnected
        }
    }
}

/// Health (interface section 2.2). Always HTTP 200: the body says what is wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok` when healthy, else `degraded`.
    pub status: String,
    pub uptime: u64,
    #[schema(inline)]
    pub database: Database,
    /// `active` when the VDF runs, `degraded` after an engine error.
    pub vdf: String,
    /// `leader` or `replica`.
    pub role: String,
    /// `embedded` or `postgres`.
    pub store: String,
}

/// Entropy of the latest resolved epoch (interface section 2.3).
#[derive(Debug, Serialize, ToSchema)]
pub struct Entropy {
    /// y of the epoch, k bytes in hex.
    pub entropy: String,
    /// SHA-256 of those bytes, hex.
    pub entropy_hash: String,
    /// `vdf_epoch`.
    pub source: String,
    pub epoch: u64,
    /// Unix time (seconds) the epoch resolved.
    pub timestamp: i64,
    /// `VEO-WESOLOWSKI-<GROUP>`.
    pub veo_class: String,
    /// The verify endpoint of the epoch's last game; null when the epoch had none.
    pub verify_url: Option<String>,
    pub iterations: Option<u64>,
    pub modulus: String,
}

/// 202 of the entropy endpoint before the first epoch resolves.
#[derive(Debug, Serialize, ToSchema)]
pub struct EntropyPending {
    /// `pending`.
    pub status: String,
    pub message: String,
    /// The open epoch.
    pub epoch: u64,
}

/// A game of the catalog (interface section 2.4).
#[derive(Debug, Serialize, ToSchema)]
pub struct CatalogEntry {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub description: String,
    pub bet_types: Vec<String>,
    pub house_edge: String,
    pub endpoint: String,
}

/// Raw RNG in the catalog.
#[derive(Debug, Serialize, ToSchema)]
pub struct RawRngEntry {
    pub description: String,
    pub endpoint: String,
}

/// The game catalog.
#[derive(Debug, Serialize, ToSchema)]
pub struct Catalog {
    pub games: Vec<CatalogEntry>,
    pub raw_rng: RawRngEntry,
    /// The rules document.
    pub rules: String,
}

// The bet bodies (DiceBetRequest, SicboBetRequest) are in `requests` below.

/// A raw RNG request body (interface section 4.3); the body may be empty or `null`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // documents the request; parsed by games::parse_rng_body
pub struct RngRequest {
    /// Mixed into the value: rngValue = HMAC-SHA256(y, game_id ‖ client_seed). At most 256
    /// characters, no U+0000.
    #[schema(max_length = 256, pattern = "^[^\\u0000]*$")]
    pub client_seed: Option<String>,
}

/// 202 for a bet on the epoch path (BetAccepted).
#[derive(Debug, Serialize, ToSchema)]
pub struct BetAccepted {
    pub accepted: bool,
    pub bet_id: String,
    pub game_id: String,
    pub resolves_at_epoch: u64,
    /// Says the result comes after the next epoch (about 5 s).
    pub message: String,
    pub poll_url: String,
    /// Present (false) when the bet asked for the pool and the pool was empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_served: Option<bool>,
    /// The operator's signed acceptance (docs/PROTOCOL.md §11): keep it as evidence.
    pub acceptance: AcceptanceDoc,
}

/// 202 for a raw RNG request (interface section 2.12).
#[derive(Debug, Serialize, ToSchema)]
pub struct RngAccepted {
    pub accepted: bool,
    pub request_id: String,
    pub game_id: String,
    pub resolves_at_epoch: u64,
    pub poll_url: String,
    pub message: String,
    /// The operator's signed acceptance (docs/PROTOCOL.md §11): keep it as evidence.
    pub acceptance: AcceptanceDoc,
}

/// The result member of an instant (pool-served) bet.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstantResult {
    pub outcome: OutcomeDoc,
    pub won: Option<bool>,
    /// Decimal string.
    pub payout: Option<String>,
    /// HMAC-SHA256 hex.
    #[serde(rename = "rngValue")]
    pub rng_value: String,
    pub bet_type: Option<String>,
    pub amount: Option<String>,
}

/// 200 for a bet served at once from the precomputed pool (interface section 2.7).
#[derive(Debug, Serialize, ToSchema)]
pub struct InstantBet {
    /// `resolved`.
    pub status: String,
    pub game_id: String,
    pub bet_id: String,
    /// true.
    pub pool_served: bool,
    pub pool_index: Option<u64>,
    pub result: InstantResult,
    pub verify_url: String,
    /// The in-browser verifier for this game.
    pub verify_page: String,
    /// The operator's signed acceptance (docs/PROTOCOL.md §11): keep it as evidence.
    pub acceptance: Option<AcceptanceDoc>,
}

/// 202 while a game's epoch has not resolved.
#[derive(Debug, Serialize, ToSchema)]
pub struct GamePending {
    /// `pending`.
    pub status: String,
    pub game_id: String,
    pub resolves_at_epoch: Option<u64>,
    pub message: String,
}

/// 200 of `GET /api/v1/games/{gameId}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResolvedGame {
    /// `resolved`.
    pub status: String,
    pub game_id: String,
    pub result: GameResult,
    pub replay: Vec<ReplayStep>,
}

/// 200 of `GET /api/v1/verify/{gameId}` (interface section 2.9).
#[derive(Debug, Serialize, ToSchema)]
pub struct VerifyBody {
    pub game_id: String,
    /// True only when every check passed.
    pub verified: bool,
    pub checks: Vec<Check>,
    pub proof: Proof,
    pub replay_steps: Vec<ReplayStep>,
}

/// An epoch's public record (input, output, proof and leaf hashes).
#[derive(Debug, Serialize, ToSchema)]
pub struct EpochRecord {
    pub epoch: u64,
    /// open, closed (computing) or resolved.
    pub status: String,
    pub modulus: String,
    pub veo_class: String,
    pub opened_at_ms: i64,
    pub closed_at_ms: Option<i64>,
    /// T: fixed when a version-2 epoch opens; a version-1 epoch's is null while it is open.
    pub iterations: Option<u64>,
    /// 1 (no timing commitment) or 2 (docs/PROTOCOL.md §10).
    pub version: u8,
    /// p(e): the epoch whose output the input takes (e − 1 for version 1; 0: y_0).
    pub previous_epoch: u64,
    /// y of epoch p(e) (or y_0).
    pub previous_output: Option<String>,
    /// Version 2: the declared security margin A.
    pub security_margin: Option<f64>,
    /// Version 2: the declared squaring rate R.
    pub squarings_per_second: Option<u64>,
    /// Version 2: the latest close the timing rule allows (fixed when the epoch opened).
    pub deadline_ms: Option<i64>,
    /// Version 2: 64 hex digits chosen when the epoch closed (null while open).
    pub nonce: Option<String>,
    pub bets_root: Option<String>,
    pub bet_count: Option<u64>,
    pub x: Option<String>,
    pub y: Option<String>,
    pub pi: Option<String>,
    pub l: Option<String>,
    pub resolved_at_ms: Option<i64>,
    /// The hashes of the epoch's leaves in order (enough to recompute bets_root); with
    /// `?leaf_from=`/`?leaf_limit=`, only that range.
    pub leaf_hashes: Vec<String>,
    /// Present only when a range was asked for: the index of the first hash in `leaf_hashes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaf_from: Option<u64>,
    /// The epoch's anchor, the same object as a verification's `proof.anchor`: its anchor
    /// batch, kind-1 leaf, audit path and root, and the transaction once confirmed (§16).
    #[serde(serialize_with = "members_sorted")]
    pub anchor: AnchorDoc,
    /// The epoch's plan and commitment in the operator's witnessed log with the cosigned
    /// checkpoints that prove them (docs/PROTOCOL.md §21); absent when the service keeps no
    /// log, or the log holds no plan of this epoch (version 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<vrs_protocol::tlog::witnessed::LogEvidence>,
}

/// A served entry of a pool batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServedEntry {
    pub index: u64,
    pub game_id: String,
    pub served_at_ms: Option<i64>,
    pub verify_url: String,
}

/// A committed pool batch (docs/PROTOCOL.md §14).
#[derive(Debug, Serialize, ToSchema)]
pub struct PoolBatch {
    pub number: u64,
    pub root: String,
    pub previous_root: String,
    pub first_index: u64,
    pub size: u64,
    pub anchor_epoch: u64,
    pub seed: String,
    pub committed_at: i64,
    pub committed_at_ms: i64,
    /// Every entry's leaf hash, in index order (enough to recompute root).
    pub leaf_hashes: Vec<String>,
    pub served: Vec<ServedEntry>,
    pub unserved: u64,
}

/// The epoch counters of stats.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatsEpoch {
    pub current: u64,
    /// Unix seconds.
    pub open_since: i64,
    pub computing: Option<u64>,
    /// Fraction of the running VDF done, 0 to 1.
    pub progress: Option<f64>,
    pub last_resolved: Option<u64>,
    pub iterations: u64,
    pub modulus: String,
    pub target_ms: u64,
    pub last_computation_ms: u64,
    pub security: Security,
}

/// Engine statistics (interface section 2.10).
#[derive(Debug, Serialize, ToSchema)]
pub struct Stats {
    pub epoch: StatsEpoch,
    pub total_games: u64,
    pub resolved_games: u64,
    pub pending_games: u64,
    /// Games per type (dice, sicbo, rng).
    pub games_by_type: std::collections::BTreeMap<String, u64>,
    pub performance: Performance,
    /// The instant-bet pool: depth, generation, the last committed batch.
    pub pool: PoolStats,
    /// The anchoring loop and its batches.
    pub anchoring: AnchoringStats,
    /// `sqlite` or `postgres`.
    pub store: String,
    /// `leader` or `replica`.
    pub role: String,
    pub engine_error: Option<String>,
}

/// The engine's speed and uptime.
#[derive(Debug, Serialize, ToSchema)]
pub struct Performance {
    pub squarings_per_second: u64,
    pub epochs_resolved_since_start: u64,
    /// Seconds since start.
    pub uptime: u64,
}

/// The instant-bet pool: its reserve, configuration and generation, and the last committed
/// batch (its root is published here before any of its entries is served).
#[derive(Debug, Serialize, ToSchema)]
pub struct PoolStats {
    /// Committed entries not served yet.
    pub depth: u64,
    pub served: u64,
    pub generated: u64,
    pub generated_since_start: u64,
    pub generated_per_second: f64,
    /// The batch backend that generates entries (null before the first batch).
    pub backend: Option<String>,
    pub threads: usize,
    pub iterations: u64,
    pub batch_size: u64,
    pub low_water: u64,
    pub target_depth: u64,
    pub refill_rate: u64,
    pub instant_default: bool,
    /// Whether this replica generates entries (it leads and has pool threads).
    pub generating: bool,
    pub last_batch: Option<PoolBatchSummary>,
}

/// A committed pool batch as stats shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct PoolBatchSummary {
    pub number: u64,
    pub root: String,
    pub first_index: u64,
    pub size: u64,
    pub previous_root: String,
    pub anchor_epoch: u64,
    pub seed: String,
    pub committed_at: i64,
    pub committed_at_ms: i64,
    /// The batch's public record.
    pub url: String,
}

/// The anchoring loop and its batches, for stats.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnchoringStats {
    pub enabled: bool,
    /// disabled, standby, starting, active, retrying or refused.
    pub state: String,
    /// Why anchoring is off (null while it is on).
    pub message: Option<String>,
    pub chain: String,
    pub chain_id: u64,
    pub every_epochs: u64,
    pub confirmations: u64,
    /// The anchoring account.
    pub address: Option<String>,
    /// The anchor contract or recipient.
    pub to: Option<String>,
    pub batches: AnchorBatchCounts,
    pub pending_batches: u64,
    pub unbatched_epochs: u64,
    pub anchored_through_epoch: Option<u64>,
    pub last_batch: Option<AnchorBatchSummary>,
    pub last_anchor: Option<AnchorBatchSummary>,
    pub last_error: Option<String>,
    /// Unix seconds.
    pub last_error_at: Option<i64>,
    pub consecutive_failures: u64,
}

/// Anchor batches by state.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnchorBatchCounts {
    pub pending: u64,
    pub submitted: u64,
    pub confirmed: u64,
}

/// An anchor batch as stats shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnchorBatchSummary {
    pub number: u64,
    /// pending, submitted or confirmed.
    pub status: String,
    pub epochs: EpochSpan,
    pub pool_batches: BatchSpan,
    pub notary_batches: BatchSpan,
    pub leaves: u64,
    pub root: String,
    /// Unix seconds.
    pub created_at: i64,
    /// `0x` hash of the transaction.
    pub tx: Option<String>,
    pub block: Option<u64>,
    /// Unix seconds.
    pub confirmed_at: Option<i64>,
}

/// A game of the recent list (interface section 2.11).
#[derive(Debug, Serialize, ToSchema)]
pub struct RecentGame {
    pub game_id: String,
    pub game: String,
    pub bet_type: Option<String>,
    pub amount: Option<String>,
    pub player_id: String,
    /// resolved or pending.
    pub status: String,
    pub epoch: Option<u64>,
    pub dice: Option<Vec<u8>>,
    pub won: Option<bool>,
    pub payout: Option<String>,
    /// Unix seconds.
    pub created_at: i64,
    pub verify_url: String,
    /// The in-browser verifier for this game.
    pub verify_page: String,
}

/// The 20 most recent games, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct Recent {
    pub games: Vec<RecentGame>,
}

// ---- The notary API (docs/PROTOCOL.md §17) ----

/// 400 of the notary: the message and the field at fault.
#[derive(Debug, Serialize, ToSchema)]
pub struct FieldErrorBody {
    pub error: String,
    /// The body member or header at fault (e.g. `payload_hash`, `Idempotency-Key`).
    pub field: Option<String>,
}

/// 400 of the notary for a schema that is missing, not a string or unknown.
#[derive(Debug, Serialize, ToSchema)]
pub struct SchemaError {
    pub error: String,
    /// `schema`.
    pub field: String,
    /// The schemas this service notarizes.
    pub valid_schemas: Vec<String>,
}

/// 503 of the notary after a payment: the receipt is on its way; retry with the same
/// Idempotency-Key.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptOnItsWay {
    pub error: String,
    /// The receipt the payment will get.
    pub receipt_id: String,
}

/// 404 for an unknown receipt.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptNotFound {
    pub error: String,
    pub receipt_id: String,
}

/// The notary's schemas.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotarySchemas {
    /// id, description, payload_hash and metadata rules of each schema.
    pub schemas: Vec<SchemaDescription>,
}

/// The notary's status, price and payment methods.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotaryStatus {
    pub service: String,
    pub status: String,
    pub receipts: u64,
    pub pending: u64,
    pub batch_interval_ms: u64,
    pub last_batch: Option<NotaryBatchSummary>,
    pub anchoring: NotaryAnchoring,
    /// The x402 price (null when only API keys are taken).
    pub price: Option<NotaryPrice>,
    /// `api_key`, and `x402` when payments are configured.
    pub payment_methods: Vec<String>,
    pub x402: Option<X402Summary>,
    pub api_keys: ApiKeysSummary,
}

/// The last sealed notary batch.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotaryBatchSummary {
    pub number: u64,
    pub size: u64,
    pub root: String,
    /// Unix seconds.
    pub sealed_at: i64,
}

/// Anchoring as the notary's status shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotaryAnchoring {
    pub enabled: bool,
    pub state: String,
    pub chain: String,
    pub chain_id: u64,
    /// The last notary batch whose root is in a confirmed anchor transaction.
    pub anchored_through_batch: Option<u64>,
}

/// The price of one receipt paid with x402.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotaryPrice {
    /// In the asset's smallest unit.
    pub amount: String,
    pub decimals: u32,
    /// In whole units, e.g. `0.02`.
    pub display: String,
    pub asset: String,
    pub asset_name: String,
    /// x402 version 2's network id (CAIP-2).
    pub network: String,
    /// x402 version 1's name for the same network.
    pub network_v1: String,
    pub pay_to: String,
}

/// How to pay with x402.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402Summary {
    pub versions: Vec<u8>,
    /// `exact`.
    pub scheme: String,
    /// `facilitator` or `chain`.
    pub settlement: String,
    pub headers: X402Headers,
}

/// The x402 headers of each version.
#[derive(Debug, Serialize, ToSchema)]
pub struct X402Headers {
    pub v2: X402V2Headers,
    pub v1: X402V1Headers,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct X402V2Headers {
    pub required: String,
    pub payment: String,
    pub response: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct X402V1Headers {
    pub payment: String,
    pub response: String,
}

/// How to pay with an API key.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeysSummary {
    pub header: String,
    pub issued_by: String,
}

/// 402: what to pay (x402 v2 `PAYMENT-REQUIRED` header, and the same as JSON).
#[derive(Debug, Serialize, ToSchema)]
pub struct PaymentRequired {
    /// 1: the body is x402 version 1 (version 2 is in the header).
    #[serde(rename = "x402Version")]
    pub x402_version: u32,
    pub error: String,
    /// The accepted payment requirements (scheme, network, asset, amount, payTo, …).
    #[schema(value_type = Vec<Object>)]
    pub accepts: Vec<vrs_chain::x402::RequirementsV1>,
    pub payment_methods: Vec<String>,
}

/// The request bodies written out rather than derived: a body valid under the document must be a
/// body the service accepts (schemathesis sends such bodies and checks just that), which a
/// derived struct cannot say (which bet types need a target and its range, no NUL in text). A
/// module of their own, so that the schema builders' names stay out of the derived code's way.
mod requests {
    use std::ops::RangeInclusive;
    use utoipa::openapi::schema::{
        AdditionalProperties, AllOfBuilder, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema,
        SchemaType, Type,
    };
    use utoipa::openapi::RefOr;
    use utoipa::ToSchema;
    use vrs_protocol::games::{
        valid_bet_types, Game, DICE_BET_TYPES, EXACT_TARGETS, FACES, MAX_OPERATOR_KEY_CHARS,
        MAX_PLAYER_ID_CHARS, MAX_PLAYER_SEED_CHARS, TOTAL_TARGETS,
    };

    /// A dice bet body (interface sections 2.5, 4.1; rules in docs/GAMES.md §5).
    #[derive(Debug)]
    pub struct DiceBetRequest;

    /// A Sic Bo bet body (interface sections 2.5, 4.2; rules in docs/GAMES.md §5).
    #[derive(Debug)]
    pub struct SicboBetRequest;

    impl utoipa::PartialSchema for DiceBetRequest {
        fn schema() -> RefOr<Schema> {
            let others: Vec<&str> = DICE_BET_TYPES
                .iter()
                .copied()
                .filter(|t| *t != "exact")
                .collect();
            bet_schema(
                Game::Dice,
                "A dice bet. bet_type `exact` needs target 2–12; the others take no target (an \
                 integer given anyway is ignored).",
                [
                    variant(
                        &["exact"],
                        Member::Required(Box::new(integer_in(EXACT_TARGETS).into())),
                        Member::Any,
                    ),
                    variant(&others, Member::Any, Member::Any),
                ],
            )
        }
    }

    impl ToSchema for DiceBetRequest {}

    impl utoipa::PartialSchema for SicboBetRequest {
        fn schema() -> RefOr<Schema> {
            bet_schema(
                Game::Sicbo,
                "A Sic Bo bet. `total` needs target 4–17; `single`, `double` and `triple` need target \
                 1–6 (the face); `combo` needs combo (two different faces) and takes no target; \
                 `big`, `small`, `odd`, `even` and `anyTriple` take neither (an integer target is \
                 ignored).",
                [
                    variant(
                        &["big", "small", "odd", "even", "anyTriple"],
                        Member::Any,
                        Member::Refused,
                    ),
                    variant(
                        &["total"],
                        Member::Required(Box::new(integer_in(TOTAL_TARGETS).into())),
                        Member::Refused,
                    ),
                    variant(
                        &["single", "double", "triple"],
                        Member::Required(Box::new(integer_in(FACES).into())),
                        Member::Refused,
                    ),
                    variant(
                        &["combo"],
                        Member::Refused,
                        Member::Required(Box::new(combo(Type::Array).into())),
                    ),
                ],
            )
        }
    }

    impl ToSchema for SicboBetRequest {}

    /// Text the stores can hold: no U+0000 (docs/GAMES.md §5).
    const NO_NUL: &str = "^[^\\u0000]*$";

    /// `t`, or null (an optional member given as null is absent; its default applies).
    fn nullable(t: Type) -> SchemaType {
        SchemaType::from_iter([t, Type::Null])
    }

    fn text(max_chars: usize, description: &str) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(nullable(Type::String))
            .max_length(Some(max_chars))
            .pattern(Some(NO_NUL))
            .description(Some(description))
    }

    fn integer_in(range: RangeInclusive<u8>) -> ObjectBuilder {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(*range.start()))
            .maximum(Some(*range.end()))
    }

    /// Two different faces, e.g. [2, 5]; `t` is `array`, or `array` or `null`.
    fn combo(t: impl Into<SchemaType>) -> ArrayBuilder {
        ArrayBuilder::new()
            .schema_type(t)
            .items(integer_in(FACES))
            .min_items(Some(2))
            .max_items(Some(2))
            .unique_items(true)
    }

    /// What a bet type does with a member (target or combo).
    enum Member {
        /// It needs the member, in this schema (boxed: built once per document, and it keeps
        /// the enum small).
        Required(Box<Schema>),
        /// It refuses the member (absent or null only).
        Refused,
        /// Whatever the member's own schema allows.
        Any,
    }

    /// The bet types `types` with what they do with target and combo.
    fn variant(types: &[&str], target: Member, combo: Member) -> Schema {
        let mut v = ObjectBuilder::new()
            .property(
                "bet_type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(types.iter().copied())),
            )
            .required("bet_type");
        for (name, member) in [("target", target), ("combo", combo)] {
            v = match member {
                Member::Required(schema) => v.property(name, *schema).required(name),
                Member::Refused => v.property(name, ObjectBuilder::new().schema_type(Type::Null)),
                Member::Any => v,
            };
        }
        v.into()
    }

    /// An amount as a JSON number (exact for the default limits: whole cents below 2^53).
    fn cents(a: vrs_protocol::games::Amount) -> f64 {
        a.cents() as f64 / 100.0
    }

    /// Every member of a bet body of `game` at its widest, all of them optional but bet_type, and
    /// exactly one of `variants` (by bet_type) narrowing target and combo.
    fn bet_schema<const N: usize>(
        game: Game,
        description: &str,
        variants: [Schema; N],
    ) -> RefOr<Schema> {
        let limits = vrs_protocol::games::Limits::default();
        let mut members = ObjectBuilder::new()
            .additional_properties(Some(AdditionalProperties::FreeForm(false)))
            .property(
                "bet_type",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(valid_bet_types(game).iter().copied()))
                    .description(Some("The bet type (case-sensitive).")),
            )
            .required("bet_type")
            .property(
                "target",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Integer))
                    .description(Some(
                        "The target of the bet types that take one, in their range (see bet_type).",
                    )),
            );
        if game == Game::Sicbo {
            members = members.property(
                "combo",
                combo(nullable(Type::Array)).description(Some(
                    "bet_type `combo` only: two different faces, e.g. [2, 5].",
                )),
            );
        }
        let members = members
            .property(
                "amount",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Number))
                    .minimum(Some(cents(limits.min_amount)))
                    .maximum(Some(cents(limits.max_amount)))
                    .multiple_of(Some(0.01))
                    .description(Some(
                        "The stake, default 1.00: at most two fraction digits, within the operator's \
                         limits (by default 0.01 to 10000.00).",
                    )),
            )
            .property(
                "player_id",
                text(MAX_PLAYER_ID_CHARS, "Who bets (default `anonymous`)."),
            )
            .property(
                "player_seed",
                text(
                    MAX_PLAYER_SEED_CHARS,
                    "Mixed into rngValue: the player's own contribution.",
                ),
            )
            .property(
                "operator_key",
                text(MAX_OPERATOR_KEY_CHARS, "The operator key (default `vrs-house`)."),
            )
            .property(
                "instant",
                ObjectBuilder::new()
                    .schema_type(nullable(Type::Boolean))
                    .description(Some(
                        "true: serve from the precomputed pool at once (HTTP 200); false: the epoch \
                         path (202). Absent: the operator's default.",
                    )),
            );
        let mut one_of = OneOfBuilder::new();
        for v in variants {
            one_of = one_of.item(v);
        }
        AllOfBuilder::new()
            .item(members)
            .item(one_of)
            .description(Some(description))
            .into()
    }

    /// The body of `POST /v1/notarize` (docs/PROTOCOL.md §17).
    #[derive(Debug)]
    pub struct NotarizeRequest;

    impl utoipa::PartialSchema for NotarizeRequest {
        fn schema() -> RefOr<Schema> {
            use vrs_protocol::notary::schema::{
                Schema as Notary, ALL, METADATA_MAX_BYTES, METADATA_MAX_DEPTH,
            };
            let ids = |keep: fn(&Notary) -> bool| {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(ALL.iter().filter(|s| keep(s)).map(|s| s.id())))
            };
            let members = ObjectBuilder::new()
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
                .property(
                    "schema",
                    ids(|_| true).description(Some("A schema id of `GET /v1/notarize/schemas`.")),
                )
                .required("schema")
                .property(
                    "payload_hash",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .pattern(Some("^(0x)?[0-9a-fA-F]{64}$"))
                        .description(Some("32 bytes: 64 hex digits, either case, 0x optional.")),
                )
                .required("payload_hash")
                .property(
                    "metadata",
                    ObjectBuilder::new()
                        .schema_type(nullable(Type::Object))
                        .description(Some(format!(
                            "Optional JSON object of at most {METADATA_MAX_DEPTH} levels and \
                             {METADATA_MAX_BYTES} bytes in RFC 8785 canonical form, stored in that \
                             form."
                        ))),
                );
            let game_result = ObjectBuilder::new()
                .property("schema", ids(|s| *s == Notary::GameResult))
                .required("schema")
                .property(
                    "metadata",
                    ObjectBuilder::new()
                        .property(
                            "game_id",
                            ObjectBuilder::new()
                                .schema_type(Type::String)
                                .pattern(Some("^[0-9a-f]{32}$"))
                                .description(Some(
                                    "The resolved game whose result_hash is payload_hash (404 when \
                                     no game has this id).",
                                )),
                        )
                        .required("game_id"),
                )
                .required("metadata");
            AllOfBuilder::new()
                .item(members)
                .item(
                    OneOfBuilder::new()
                        .item(
                            ObjectBuilder::new()
                                .property("schema", ids(|s| *s != Notary::GameResult)),
                        )
                        .item(game_result),
                )
                .description(Some("The body of `POST /v1/notarize`."))
                .into()
        }
    }

    impl ToSchema for NotarizeRequest {}
}
