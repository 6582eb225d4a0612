//! Persistence behind one trait per aggregate (epochs, games, the pool, anchors, the notary,
//! leadership), which [`Store`] gathers, so that the embedded store (SQLite, the default) and
//! the PostgreSQL store answer the service identically. Each backend keeps one file per
//! aggregate (sqlite/epochs.rs, postgres/epochs.rs, …); the rules both must enforce are
//! written once here ([`check_resolutions`], [`check_pool_link`], [`check_anchor_link`],
//! [`NotaryBatch::seal`], [`refuse_overdue`]).
//!
//! What every implementation guarantees:
//! - [`GameStore::insert_game`] returns only once the game is committed, with its signed
//!   acceptance, in the epoch that was open at that commit; a game never lands in an epoch
//!   that is already closed. A pool-served game is bound to that epoch the same way.
//! - [`EpochStore::close_epoch`] fixes the epoch's games (in acceptance order) and opens the
//!   next epoch atomically.
//! - A resolved epoch and its games are written once and never rewritten, and no reader sees
//!   a game resolved before its epoch is. PostgreSQL writes them in one transaction; the
//!   embedded store writes the games in transactions of 1 000 (bets commit between them) and
//!   marks the epoch resolved in a last one, hiding every result until then, so a crash in
//!   between leaves nothing visible and the retry writes the same bytes.
//! - At most one process holds the lease from [`LeaderStore::try_lead`] at a time.

/// Column codecs shared by both stores (public for the store-codec fuzz target).
pub mod codec;
pub mod postgres;
pub mod sqlite;

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::sync::Arc;
pub use vrs_protocol::acceptance::{AcceptanceSigner, Signed};
pub use vrs_protocol::record::{
    EpochInput, EpochOutput, EpochPlan, EpochRecord, EpochStatus, GameRecord, GameResolution,
    NewGame, PlanParams, PoolBatch, PoolEntry,
};

/// Store failures. `Unavailable` is the database's fault (the service answers 503 and retries);
/// `Conflict` and `Corrupt` mean the data does not match what the caller expected; `Config`
/// and `Schema` stop the service at start-up.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database unavailable: {0}")]
    Unavailable(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("stored data is not readable: {0}")]
    Corrupt(String),
    #[error("schema: {0}")]
    Schema(String),
    #[error("configuration: {0}")]
    Config(String),
    /// The open epoch is past its deadline and no leader has closed it yet (a failover is
    /// under way): a game is refused rather than accepted into a window that the timing rule
    /// no longer covers. The caller retries in a moment.
    #[error("epoch closing: {0}")]
    EpochOverdue(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// An epoch status as stored; a word that is not one is corrupt data.
pub(crate) fn epoch_status(s: &str) -> StoreResult<EpochStatus> {
    EpochStatus::parse(s).ok_or_else(|| StoreError::Corrupt(format!("epoch status {s:?}")))
}

/// The pool's counters for `GET /api/v1/stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolCounts {
    /// Entries committed so far (the highest index).
    pub generated: u64,
    /// Entries served so far (the next index to serve is `served + 1`).
    pub served: u64,
    pub last_batch: Option<PoolBatch>,
}

impl PoolCounts {
    /// Committed entries not served yet.
    pub fn depth(&self) -> u64 {
        self.generated.saturating_sub(self.served)
    }
}

/// Where an anchor batch stands on chain (docs/PROTOCOL.md §16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnchorState {
    /// Built; no transaction sent yet.
    Pending,
    /// A transaction was recorded and broadcast; not confirmed yet.
    Submitted,
    /// One of its transactions is included with the configured confirmations.
    Confirmed,
}

impl AnchorState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Submitted => "submitted",
            Self::Confirmed => "confirmed",
        }
    }

    pub fn parse(s: &str) -> StoreResult<Self> {
        match s {
            "pending" => Ok(Self::Pending),
            "submitted" => Ok(Self::Submitted),
            "confirmed" => Ok(Self::Confirmed),
            other => Err(StoreError::Corrupt(format!(
                "anchor batch status {other:?}"
            ))),
        }
    }
}

/// One anchor batch: epochs `first_epoch..=last_epoch`, pool batches `pool_from..pool_to` and
/// notary batches `notary_from..notary_to`, under one root that goes on chain in one
/// transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorBatch {
    pub number: u64,
    pub first_epoch: u64,
    pub last_epoch: u64,
    pub pool_from: u64,
    pub pool_to: u64,
    pub notary_from: u64,
    pub notary_to: u64,
    pub leaves: u64,
    pub root: [u8; 32],
    pub created_at_ms: i64,
    pub status: AnchorState,
    /// The mined transaction, once confirmed.
    pub tx_hash: Option<[u8; 32]>,
    pub block_number: Option<u64>,
    pub confirmed_at_ms: Option<i64>,
}

/// A signed anchor transaction, recorded before it is broadcast. A batch has several when a
/// stuck one was replaced (same nonce, higher fee); at most one of them can be mined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorTx {
    pub hash: [u8; 32],
    pub batch: u64,
    pub nonce: u64,
    pub max_fee: u128,
    pub priority_fee: u128,
    pub raw: Vec<u8>,
    pub sent_at_ms: i64,
}

/// Anchor batches by status, for stats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnchorCounts {
    pub pending: u64,
    pub submitted: u64,
    pub confirmed: u64,
    /// The newest batch, whatever its status.
    pub last_batch: Option<AnchorBatch>,
    /// The newest confirmed batch.
    pub last_confirmed: Option<AnchorBatch>,
}

/// Checks that `batch` extends `last`: next number, the next epochs, the next pool batches.
pub(crate) fn check_anchor_link(
    last: Option<&AnchorBatch>,
    batch: &AnchorBatch,
) -> StoreResult<()> {
    let (number, first_epoch, pool_from, notary_from) = match last {
        Some(l) => (l.number + 1, l.last_epoch + 1, l.pool_to, l.notary_to),
        None => (1, batch.first_epoch, batch.pool_from, batch.notary_from),
    };
    if batch.number != number
        || batch.first_epoch != first_epoch
        || batch.pool_from != pool_from
        || batch.notary_from != notary_from
    {
        return Err(StoreError::Conflict(format!(
            "anchor batch {} (epochs {}..={}, pool batches from {}, notary batches from {}) \
             does not follow batch {} (next: number {number}, first epoch {first_epoch}, pool \
             batches from {pool_from}, notary batches from {notary_from})",
            batch.number,
            batch.first_epoch,
            batch.last_epoch,
            batch.pool_from,
            batch.notary_from,
            number - 1
        )));
    }
    if batch.last_epoch < batch.first_epoch
        || batch.pool_to < batch.pool_from
        || batch.notary_to < batch.notary_from
    {
        return Err(StoreError::Conflict(format!(
            "anchor batch {} has an empty or reversed range",
            batch.number
        )));
    }
    Ok(())
}

/// How a notarization was paid for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payment {
    /// By an API key (its id); the key's usage count goes up with the receipt.
    ApiKey(String),
    /// By an x402 payment, settled before the receipt was stored; the payment's nonce is
    /// marked settled with the receipt.
    X402 {
        asset: String,
        payer: String,
        nonce: String,
        tx_hash: Option<String>,
    },
}

impl Payment {
    pub fn method(&self) -> &'static str {
        match self {
            Self::ApiKey(_) => "api_key",
            Self::X402 { .. } => "x402",
        }
    }
}

/// A receipt as accepted (docs/PROTOCOL.md §17).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewReceipt {
    pub receipt_id: String,
    pub schema: String,
    /// Canonical form (lowercase hex as the schema spells it).
    pub payload_hash: String,
    /// RFC 8785 canonical JSON of the metadata object.
    pub metadata: String,
    pub leaf_hash: [u8; 32],
    pub submitted_at_ms: i64,
    pub payment: Payment,
}

/// A stored receipt: the payment's method and payer, and once sealed its place in a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReceiptRecord {
    pub receipt_id: String,
    pub schema: String,
    pub payload_hash: String,
    pub metadata: String,
    pub leaf_hash: [u8; 32],
    pub submitted_at_ms: i64,
    pub payment_method: String,
    /// The API key id or the paying address.
    pub payer: String,
    pub payment_tx: Option<String>,
    /// (batch number, leaf index), once sealed.
    pub sealed: Option<(u64, u64)>,
}

impl ReceiptRecord {
    /// A receipt as stored on acceptance, before any batch.
    pub fn accepted(r: &NewReceipt) -> Self {
        let (payer, payment_tx) = match &r.payment {
            Payment::ApiKey(id) => (id.clone(), None),
            Payment::X402 { payer, tx_hash, .. } => (payer.clone(), tx_hash.clone()),
        };
        Self {
            receipt_id: r.receipt_id.clone(),
            schema: r.schema.clone(),
            payload_hash: r.payload_hash.clone(),
            metadata: r.metadata.clone(),
            leaf_hash: r.leaf_hash,
            submitted_at_ms: r.submitted_at_ms,
            payment_method: r.payment.method().to_owned(),
            payer,
            payment_tx,
            sealed: None,
        }
    }
}

/// A sealed batch of receipts: an RFC 6962 root over their leaf hashes in acceptance order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotaryBatch {
    pub number: u64,
    pub size: u64,
    pub root: [u8; 32],
    pub created_at_ms: i64,
}

impl NotaryBatch {
    /// Batch `number` sealed at `now_ms` over `leaves` (the receipts' leaf hashes in acceptance
    /// order): both stores seal through this, so the root is computed one way.
    pub(crate) fn seal(number: u64, leaves: &[[u8; 32]], now_ms: i64) -> Self {
        Self {
            number,
            size: leaves.len() as u64,
            root: vrs_engine::merkle::root(leaves),
            created_at_ms: now_ms,
        }
    }
}

/// The notary's counters for its status endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotaryCounts {
    pub receipts: u64,
    /// Receipts not sealed into a batch yet.
    pub pending: u64,
    pub last_batch: Option<NotaryBatch>,
}

/// An API key as stored (only the SHA-256 of the key itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    pub key_hash: [u8; 32],
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
    pub uses: u64,
    pub last_used_ms: Option<i64>,
}

/// The response an Idempotency-Key replays, stored with the receipt it produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotentResponse {
    pub status: u16,
    /// JSON: the response's body and the headers a replay repeats.
    pub response: String,
}

/// Where an Idempotency-Key stands when a request claims it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// New (or an abandoned claim taken over): this request runs.
    Started,
    /// Done before with the same request: replay this.
    Replay(IdempotentResponse),
    /// Used before with a different request body.
    Mismatch,
    /// The first request with this key is still running.
    InFlight,
}

/// An Idempotency-Key claim: who (`scope`), which key, the request's hash, and when this
/// request claimed it. The claim time is the claim's token: completing or releasing the key
/// only touches the record while it still holds this claim (a stale claim taken over by a
/// later request is not finished by the request that lost it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdempotencyKey {
    pub scope: String,
    pub key: String,
    pub request_hash: [u8; 32],
    pub claimed_at_ms: i64,
}

impl IdempotencyKey {
    /// The same key claimed at `ms`.
    pub fn at(&self, ms: i64) -> Self {
        Self {
            claimed_at_ms: ms,
            ..self.clone()
        }
    }
}

/// An x402 payment's authorization nonce (EIP-3009: one per asset and payer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentNonce {
    pub asset: String,
    pub payer: String,
    pub nonce: String,
}

/// A payment nonce still being settled: what the recovery looks at when its request's
/// process may have died.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettlingPayment {
    pub nonce: PaymentNonce,
    pub seen_at_ms: i64,
    /// What the request prepared before settling (opaque to the store; `None` for nonces
    /// reserved before schema version 5).
    pub prepared: Option<String>,
}

/// Builds a pool-served game from the entry it is given (its id, outcome and resolution are
/// fixed by the entry), signed for that entry. Runs inside the store's transaction.
/// Pure (it may run again if a group's transaction is retried).
pub type BuildInstant = Box<
    dyn Fn(&vrs_engine::pool::Entry) -> Result<(NewGame, GameResolution), String> + Send + Sync,
>;

/// Counters for `GET /api/v1/stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameCounts {
    pub total: u64,
    pub resolved: u64,
    /// Totals per game name.
    pub by_game: BTreeMap<String, u64>,
}

impl GameCounts {
    /// Adds one game name's row: its games, and how many of them are resolved.
    pub fn add(&mut self, game: String, total: i64, resolved: i64) {
        self.total += total as u64;
        self.resolved += resolved as u64;
        self.by_game.insert(game, total as u64);
    }
}

/// When an epoch closing at `now_ms` fixed its games: now, but never before it opened or
/// before a game it holds was accepted (a clock read before the close waited for inserts), and
/// never after a version-2 epoch's deadline (no game is accepted after it: [`refuse_overdue`]).
pub(crate) fn close_time(
    plan: Option<&EpochPlan>,
    opened_at_ms: i64,
    last_game_ms: Option<i64>,
    now_ms: i64,
) -> i64 {
    let t = now_ms
        .max(opened_at_ms)
        .max(last_game_ms.unwrap_or(i64::MIN));
    plan.map_or(t, |p| t.min(p.deadline_ms))
}

/// What both stores check before resolving `epoch`, on what they read in the resolving
/// transaction (or, on the embedded store, the read before its chunks; a closed epoch gains no
/// games): its leaves, its own games (`stored`, by id) and the `bound` pool-served games bound
/// to it, are the `committed` count its input holds; and `games` names each of its games
/// exactly once. Nothing is written when this fails.
pub(crate) fn check_resolutions<V>(
    epoch: u64,
    committed: Option<u64>,
    stored: &std::collections::HashMap<String, V>,
    bound: u64,
    games: &[GameResolution],
) -> StoreResult<()> {
    let leaves = stored.len() as u64 + bound;
    if let Some(committed) = committed.filter(|c| *c != leaves) {
        return Err(StoreError::Corrupt(format!(
            "epoch {epoch} holds {leaves} leaves ({bound} of them served from the pool) but its \
             input committed {committed}"
        )));
    }
    let mut named = std::collections::HashSet::with_capacity(games.len());
    for g in games {
        if !stored.contains_key(&g.game_id) || !named.insert(g.game_id.as_str()) {
            return Err(StoreError::Conflict(format!(
                "game {} is not a game of epoch {epoch}, or is named twice",
                g.game_id
            )));
        }
    }
    if named.len() != stored.len() {
        return Err(StoreError::Conflict(format!(
            "{} games of epoch {epoch} were not resolved",
            stored.len() - named.len()
        )));
    }
    Ok(())
}

/// Refuses a game for the open epoch `epoch` once `now_ms` is past its deadline.
pub(crate) fn refuse_overdue(epoch: u64, deadline_ms: Option<i64>, now_ms: i64) -> StoreResult<()> {
    match deadline_ms {
        Some(d) if now_ms > d => Err(StoreError::EpochOverdue(format!(
            "epoch {epoch} passed its deadline {} ms ago and is being closed",
            now_ms - d
        ))),
        _ => Ok(()),
    }
}

/// (closed_at_ms, T) of `rec` as the predecessor of an epoch being opened; T from `params`
/// for a closed version-1 epoch whose input is not stored yet (it takes the current T).
pub(crate) fn predecessor_of(rec: &EpochRecord, params: &PlanParams) -> StoreResult<(i64, u64)> {
    let closed = rec.closed_at_ms.ok_or_else(|| {
        StoreError::Corrupt(format!(
            "epoch {} is the predecessor of an epoch being opened but is not closed",
            rec.number
        ))
    })?;
    Ok((closed, rec.iterations().unwrap_or(params.legacy_iterations)))
}

/// A store: every aggregate's operations on one database (the embedded SQLite store or
/// PostgreSQL). Each aggregate's trait says what its writes guarantee.
#[async_trait]
pub trait Store:
    EpochStore
    + GameStore
    + PoolStore
    + AnchorStore
    + NotaryStore
    + LogStore
    + LeaderStore
    + Send
    + Sync
    + 'static
{
    /// Which implementation this is ("sqlite", "postgres"), for logs and stats.
    fn kind(&self) -> &'static str;

    /// Whether the database answers.
    async fn ping(&self) -> StoreResult<()>;
}

/// The epoch chain: opening, closing, committing inputs and resolving epochs, and reading them.
/// Every write is durable on return.
#[async_trait]
pub trait EpochStore: Send + Sync {
    /// Makes sure an epoch is open (epoch 1 on an empty store), opening one with a plan from
    /// `params`. The modulus identifier is recorded on first use; a store created with another
    /// modulus is refused.
    async fn bootstrap(&self, modulus: &str, now_ms: i64, params: &PlanParams) -> StoreResult<()>;

    /// The epoch currently open for games.
    async fn open_epoch(&self) -> StoreResult<EpochRecord>;

    /// Closes `epoch` (which must be open or already closed) and opens `epoch + 1` with a plan
    /// from `next`; returns the closed epoch's leaves in acceptance order. A version-2 epoch
    /// records `nonce` and closes at `now_ms` or its deadline, whichever is earlier (no game
    /// was accepted after the deadline). Idempotent for an epoch already closed.
    async fn close_epoch(
        &self,
        epoch: u64,
        now_ms: i64,
        nonce: [u8; 32],
        next: &PlanParams,
    ) -> StoreResult<Vec<Vec<u8>>>;

    /// Records the input of a closed epoch. Refused if a different input is already stored.
    async fn set_epoch_input(&self, epoch: u64, input: &EpochInput) -> StoreResult<()>;

    /// Resolves a closed epoch and all its games, atomically as readers see them: no game
    /// reads resolved before its epoch does (one transaction on PostgreSQL; on the embedded
    /// store, chunks whose results stay hidden until the last transaction resolves the epoch).
    /// Refused if resolved, and before anything is written when [`check_resolutions`] fails:
    /// `games` must name each of the epoch's games once, and its leaves must be the count its
    /// input committed.
    async fn resolve_epoch(
        &self,
        epoch: u64,
        output: &EpochOutput,
        games: &[GameResolution],
    ) -> StoreResult<()>;

    /// Resolves a closed epoch's output but holds its games: they stay pending until
    /// [`Self::resolve_held_games`]. A server with witnesses resolves an epoch's games only
    /// once its commitment is witnessed, or, if it is void, with the epoch its games were moved
    /// to (docs/PROTOCOL.md §21, "Voids"); the chain of outputs goes on meanwhile.
    async fn resolve_epoch_holding_games(
        &self,
        epoch: u64,
        output: &EpochOutput,
    ) -> StoreResult<()>;

    /// Resolves the held games of epoch `epoch` from the output of epoch `from` (`epoch`
    /// itself, or the witnessed epoch its games were moved to), atomically as readers see
    /// them. Refused unless the epoch is resolved with its games held, and, as
    /// [`Self::resolve_epoch`], unless `games` names each of its games once.
    async fn resolve_held_games(
        &self,
        epoch: u64,
        from: u64,
        games: &[GameResolution],
    ) -> StoreResult<()>;

    /// Resolved epochs whose games are held, oldest first.
    async fn held_epochs(&self) -> StoreResult<Vec<u64>>;

    /// The epoch whose output epoch `epoch`'s games took: `epoch` itself, or the epoch they
    /// were moved to; None while they are pending (unresolved or held).
    async fn games_outcome_epoch(&self, epoch: u64) -> StoreResult<Option<u64>>;

    async fn epoch(&self, epoch: u64) -> StoreResult<Option<EpochRecord>>;

    async fn latest_resolved_epoch(&self) -> StoreResult<Option<EpochRecord>>;

    /// Closed but unresolved epochs, oldest first (work left by a stop or crash).
    async fn unresolved_epochs(&self) -> StoreResult<Vec<EpochRecord>>;

    /// Resolved epochs `from..=to`, in order.
    async fn resolved_epochs(&self, from: u64, to: u64) -> StoreResult<Vec<EpochRecord>>;
}

/// Games: committing one into the open epoch with its signed acceptance, the published
/// acceptance keys, and reading games back.
#[async_trait]
pub trait GameStore: Send + Sync {
    /// Commits a game into the open epoch, signed by `signer` for that epoch (its `acceptance`
    /// is ignored); returns the epoch and the signature. Durable on return. Refused with
    /// [`StoreError::EpochOverdue`] once the open epoch is past its deadline.
    async fn insert_game(
        &self,
        game: NewGame,
        signer: &Arc<AcceptanceSigner>,
    ) -> StoreResult<(u64, Signed)>;

    /// Records a key games are signed with (idempotent: a key keeps its first time).
    async fn register_acceptance_key(&self, public_key: [u8; 32], now_ms: i64) -> StoreResult<()>;

    /// Every key recorded, oldest first, with when it was first recorded.
    async fn acceptance_keys(&self) -> StoreResult<Vec<([u8; 32], i64)>>;

    async fn game(&self, game_id: &str) -> StoreResult<Option<GameRecord>>;

    /// The epoch-path games of one epoch in acceptance order (what resolves from it).
    async fn epoch_games(&self, epoch: u64) -> StoreResult<Vec<GameRecord>>;

    /// The leaves of one epoch's bets tree: its epoch-path games in acceptance order, then
    /// the pool-served games bound to it in pool-index order (docs/PROTOCOL.md §11).
    async fn epoch_leaves(&self, epoch: u64) -> StoreResult<Vec<Vec<u8>>>;

    /// The id of the game accepted last into `epoch`, if any.
    async fn last_game_id(&self, epoch: u64) -> StoreResult<Option<String>>;

    /// The most recently accepted games, newest first.
    async fn recent_games(&self, limit: u32) -> StoreResult<Vec<GameRecord>>;

    async fn game_counts(&self) -> StoreResult<GameCounts>;
}

/// The instant-bet pool: committing batches of precomputed entries and serving each entry
/// once, in index order.
#[async_trait]
pub trait PoolStore: Send + Sync {
    /// The last committed pool batch.
    async fn last_pool_batch(&self) -> StoreResult<Option<PoolBatch>>;

    /// Commits a batch and its entries in one transaction. Refused unless it extends the pool
    /// chain: number = last + 1, first index = last's end, prev_root = last's root, and the
    /// entries are exactly the batch's indices in order. The store stamps `committed_at_ms`
    /// with its own clock inside that transaction (the value passed in is ignored).
    async fn commit_pool_batch(
        &self,
        batch: &PoolBatch,
        entries: &[vrs_engine::pool::Entry],
    ) -> StoreResult<()>;

    async fn pool_counts(&self) -> StoreResult<PoolCounts>;

    async fn pool_batch(&self, number: u64) -> StoreResult<Option<PoolBatch>>;

    /// The entries of one batch, in index order.
    async fn pool_batch_entries(&self, number: u64) -> StoreResult<Vec<PoolEntry>>;

    async fn pool_entry(&self, index: u64) -> StoreResult<Option<PoolEntry>>;

    /// Serves the next pool entry to one bet: takes the lowest unserved committed index,
    /// builds the game from it and stores the game resolved and bound to the open epoch
    /// (refused with [`StoreError::EpochOverdue`] once that epoch is past its deadline), in
    /// one transaction. Durable on return. Only an entry whose batch was committed at or before the bet's `created_at_ms`
    /// is served (so no entry can have been made after the bet arrived). `None`: no such entry
    /// is left (nothing was written).
    async fn serve_instant(&self, build: BuildInstant) -> StoreResult<Option<GameRecord>>;

    /// Pool batches `from..to`, in order.
    async fn pool_batches(&self, from: u64, to: u64) -> StoreResult<Vec<PoolBatch>>;
}

/// Anchor batches: the roots that go on chain, their transactions and confirmations.
#[async_trait]
pub trait AnchorStore: Send + Sync {
    /// The newest anchor batch.
    async fn last_anchor_batch(&self) -> StoreResult<Option<AnchorBatch>>;

    /// Stores a new anchor batch (status pending). Refused (`Conflict`) unless it extends the
    /// last one ([`check_anchor_link`]), so two leaders can never store overlapping batches.
    async fn insert_anchor_batch(&self, batch: &AnchorBatch) -> StoreResult<()>;

    async fn anchor_batch(&self, number: u64) -> StoreResult<Option<AnchorBatch>>;

    /// The batch whose epoch range holds `epoch`.
    async fn anchor_batch_for_epoch(&self, epoch: u64) -> StoreResult<Option<AnchorBatch>>;

    /// The batch whose pool range holds pool batch `pool_batch`.
    async fn anchor_batch_for_pool(&self, pool_batch: u64) -> StoreResult<Option<AnchorBatch>>;

    /// Batches not confirmed yet, oldest first.
    async fn open_anchor_batches(&self) -> StoreResult<Vec<AnchorBatch>>;

    /// Records a signed transaction for its batch (which becomes `submitted`), durably, before
    /// it is broadcast. Refused for a confirmed batch.
    async fn record_anchor_tx(&self, tx: &AnchorTx) -> StoreResult<()>;

    /// The transactions recorded for a batch, oldest first.
    async fn anchor_txs(&self, batch: u64) -> StoreResult<Vec<AnchorTx>>;

    /// Marks a batch confirmed by `tx_hash` (one of its recorded transactions) in `block`.
    async fn confirm_anchor_batch(
        &self,
        batch: u64,
        tx_hash: [u8; 32],
        block: u64,
        now_ms: i64,
    ) -> StoreResult<()>;

    async fn anchor_counts(&self) -> StoreResult<AnchorCounts>;

    /// The anchor batch whose notary range holds notary batch `number`.
    async fn anchor_batch_for_notary(&self, number: u64) -> StoreResult<Option<AnchorBatch>>;
}

/// The notary: receipts and their sealed batches, API keys, x402 payment nonces and
/// Idempotency-Keys.
#[async_trait]
pub trait NotaryStore: Send + Sync {
    /// Stores a receipt, durably, in one transaction with what pays for it (the API key's
    /// usage, or the x402 nonce marked settled) and with the Idempotency-Key's response
    /// (only while the key still holds this request's claim; see [`IdempotencyKey`]).
    async fn insert_receipt(
        &self,
        receipt: NewReceipt,
        idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
    ) -> StoreResult<()>;

    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<ReceiptRecord>>;

    /// Seals up to `max` unsealed receipts, oldest first, into the next notary batch (its
    /// root computed from their leaf hashes in that order). `None`: nothing to seal.
    async fn seal_notary_batch(&self, max: u64, now_ms: i64) -> StoreResult<Option<NotaryBatch>>;

    async fn notary_batch(&self, number: u64) -> StoreResult<Option<NotaryBatch>>;

    /// The leaf hashes of one notary batch, in leaf order.
    async fn notary_batch_leaves(&self, number: u64) -> StoreResult<Vec<[u8; 32]>>;

    /// Notary batches `from..to`, in order.
    async fn notary_batches(&self, from: u64, to: u64) -> StoreResult<Vec<NotaryBatch>>;

    async fn notary_counts(&self) -> StoreResult<NotaryCounts>;

    /// Stores a new API key. Refused (`Conflict`) if its id or hash exists.
    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()>;

    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>>;

    /// The key whose SHA-256 is `key_hash` (revoked or not).
    async fn api_key_by_hash(&self, key_hash: [u8; 32]) -> StoreResult<Option<ApiKey>>;

    /// Revokes a key; false if no key has that id. Revoking twice keeps the first time.
    async fn revoke_api_key(&self, id: &str, now_ms: i64) -> StoreResult<bool>;

    /// Records an x402 payment nonce as being settled, with what its request prepared
    /// (`prepared`, kept for the recovery); false if it was seen before (whatever became of
    /// it), so one signed authorization is never settled twice.
    async fn reserve_payment_nonce(
        &self,
        nonce: &PaymentNonce,
        now_ms: i64,
        prepared: &str,
    ) -> StoreResult<bool>;

    /// Marks a reserved nonce whose settlement failed (it stays seen).
    async fn fail_payment_nonce(&self, nonce: &PaymentNonce, detail: &str) -> StoreResult<()>;

    /// Nonces still settling that were reserved before `seen_before_ms`, oldest first, at
    /// most `limit`.
    async fn settling_payments(
        &self,
        seen_before_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<SettlingPayment>>;

    /// Claims an Idempotency-Key for a request at `key.claimed_at_ms`. A claim still in
    /// flight after `stale_ms` is taken to be abandoned (its process died) and is taken over.
    async fn claim_idempotency_key(
        &self,
        key: &IdempotencyKey,
        stale_ms: i64,
    ) -> StoreResult<IdempotencyClaim>;

    /// Drops this request's in-flight claim (its request failed), so the key can be used
    /// again; a claim taken over since is left alone.
    async fn release_idempotency_key(&self, key: &IdempotencyKey) -> StoreResult<()>;

    /// Deletes Idempotency-Key records created before `before_ms`; returns how many.
    async fn purge_idempotency_keys(&self, before_ms: i64) -> StoreResult<u64>;
}

/// Leadership: which one process closes and resolves epochs on this store.
/// The witnessed log (docs/PROTOCOL.md §21): its entries in order, and the checkpoints the
/// operator signed, each with the cosignature lines it collected. Every write is durable on
/// return.
#[async_trait]
pub trait LogStore: Send + Sync {
    /// Appends `entries` at `first_index`, which must be the log's size: another size is a
    /// `Conflict` (a second writer, or a stale view), and nothing is written.
    async fn append_log_entries(&self, first_index: u64, entries: Vec<Vec<u8>>) -> StoreResult<()>;

    /// Up to `limit` entries from index `from` on, in order.
    async fn log_entries(&self, from: u64, limit: u64) -> StoreResult<Vec<Vec<u8>>>;

    /// Records the signed checkpoint of the tree of `size` entries with the cosignature lines
    /// collected so far (replacing what was recorded for that size).
    async fn put_log_checkpoint(&self, size: u64, note: String, now_ms: i64) -> StoreResult<()>;

    /// The recorded checkpoint of the largest size.
    async fn latest_log_checkpoint(&self) -> StoreResult<Option<(u64, String)>>;

    /// Up to `limit` recorded checkpoints of sizes above `index` (those that include entry
    /// `index`), smallest first.
    async fn log_checkpoints_covering(
        &self,
        index: u64,
        limit: u64,
    ) -> StoreResult<Vec<(u64, String)>>;
}

#[async_trait]
pub trait LeaderStore: Send + Sync {
    /// Tries to become the one process that closes and resolves epochs on this store.
    /// `None`: another process leads now (ask again later).
    async fn try_lead(&self) -> StoreResult<Option<Box<dyn Lease>>>;
}

/// Leadership of the epoch chain, held until dropped or until [`Lease::lost`] resolves.
#[async_trait]
pub trait Lease: Send + std::fmt::Debug {
    /// Resolves once leadership is lost (the connection that holds it failed).
    async fn lost(&mut self);
}

/// What every store checks before committing a pool batch: it extends the chain, and its
/// entries are exactly its indices, in order.
pub(crate) fn check_pool_link(
    last: Option<&PoolBatch>,
    batch: &PoolBatch,
    entries: &[vrs_engine::pool::Entry],
) -> StoreResult<()> {
    let (number, first, prev) = match last {
        Some(l) => (l.number + 1, l.end_index(), l.root),
        None => (1, 1, vrs_engine::pool::GENESIS_ROOT),
    };
    if batch.number != number || batch.first_index != first || batch.prev_root != prev {
        return Err(StoreError::Conflict(format!(
            "pool batch {} does not extend the chain (expected batch {number} from index {first})",
            batch.number
        )));
    }
    let indices_match = entries.len() as u64 == batch.size
        && entries.iter().zip(first..).all(|(e, i)| e.index == i);
    if batch.size == 0 || !indices_match {
        return Err(StoreError::Conflict(format!(
            "pool batch {}: entries are not indices {first}..{}",
            batch.number,
            first + batch.size
        )));
    }
    Ok(())
}

impl std::fmt::Debug for dyn Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.kind())
    }
}
