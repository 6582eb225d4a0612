//! The documents a verification hands out (docs/PROTOCOL.md §13, §14, §20): the proof of an
//! epoch game or a pool-served game, the result of a resolved game, the replay steps and the
//! anchor object. The service builds them, the HTTP layer serves them and derives their OpenAPI
//! schemas from them.
//!
//! `Option<Option<T>>` marks a member that some games have and others lack (absent), and whose
//! value may be null where present; a plain `Option<T>` with `skip_serializing_if` is a member
//! that is absent or set, never null.

use crate::acceptance::AcceptanceDoc;
use crate::record::NewGame;
use serde::Serialize;
use utoipa::ToSchema;

fn absent<T>(v: &Option<T>) -> bool {
    v.is_none()
}

/// The OpenAPI schema of an untagged enum whose variants' schemas overlap (one variant's
/// required members are a subset of another's): `anyOf` its variants, where the derived `oneOf`
/// would reject a body that matches two of them.
macro_rules! any_of_schema {
    ($ty:ty, $description:expr, $($variant:ty),+) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::AnyOfBuilder::new()
                    $(.item(utoipa::openapi::Ref::from_schema_name(
                        <$variant as utoipa::ToSchema>::name(),
                    )))+
                    .description(Some($description))
                    .into()
            }
        }

        impl utoipa::ToSchema for $ty {
            fn schemas(
                schemas: &mut Vec<(
                    String,
                    utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
                )>,
            ) {
                $(
                    schemas.push((
                        <$variant as utoipa::ToSchema>::name().into_owned(),
                        <$variant as utoipa::PartialSchema>::schema(),
                    ));
                    <$variant as utoipa::ToSchema>::schemas(schemas);
                )+
            }
        }
    };
}
pub(crate) use any_of_schema;

/// The committed fields of a game (`proof.bet`).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BetDoc {
    pub game_id: String,
    /// `dice`, `sicbo` or `rng`.
    pub game: String,
    pub bet_type: Option<String>,
    pub target: Option<u8>,
    pub combo: Option<[u8; 2]>,
    /// Two fraction digits, e.g. "1.00".
    pub amount: Option<String>,
    pub player_id: String,
    pub player_seed: Option<String>,
    pub operator_key: String,
}

impl From<&NewGame> for BetDoc {
    fn from(g: &NewGame) -> Self {
        Self {
            game_id: g.game_id.clone(),
            game: g.game.clone(),
            bet_type: g.bet_type.clone(),
            target: g.target,
            combo: g.combo,
            amount: g.amount.clone(),
            player_id: g.player_id.clone(),
            player_seed: g.player_seed.clone(),
            operator_key: g.operator_key.clone(),
        }
    }
}

/// The dice of a game: die1, die2 (die3 for Sic Bo) and their total.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct OutcomeDoc {
    #[serde(skip_serializing_if = "absent")]
    pub die1: Option<u8>,
    #[serde(skip_serializing_if = "absent")]
    pub die2: Option<u8>,
    #[serde(skip_serializing_if = "absent")]
    pub die3: Option<u8>,
    pub total: u32,
}

impl OutcomeDoc {
    pub fn of(dice: &[u8]) -> Self {
        Self {
            die1: dice.first().copied(),
            die2: dice.get(1).copied(),
            die3: dice.get(2).copied(),
            total: dice.iter().map(|&d| u32::from(d)).sum(),
        }
    }
}

/// A version-2 epoch's timing commitment as a verification shows it (docs/PROTOCOL.md §10,
/// "Timing"): what the `timing` step checks. Version-1 epochs show `version` 1, their
/// predecessor and times, and null for the rest.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct TimingDoc {
    /// 1 or 2.
    pub version: u8,
    /// p(e): the epoch whose output the input takes (0: the genesis output y_0).
    pub previous_epoch: u64,
    /// 64 hex digits, chosen when the epoch closed.
    pub nonce: Option<String>,
    pub opened_at_ms: i64,
    pub closed_at_ms: Option<i64>,
    /// The declared margin A.
    pub security_margin: Option<f64>,
    /// The declared squaring rate R.
    pub squarings_per_second: Option<u64>,
    /// The bound the plan computed when the epoch opened.
    pub deadline_ms: Option<i64>,
    /// closed_at_ms of p(e) (null for p = 0).
    pub previous_closed_at_ms: Option<i64>,
    /// T of p(e) (null for p = 0).
    pub previous_iterations: Option<u64>,
    /// When y of epoch e − 1 was stored (its resolved_at_ms; null for e = 1 or while e − 1 is
    /// unresolved): the epoch's games were fixed before it.
    pub prior_resolved_at_ms: Option<i64>,
}

/// One checkpoint of the VDF evaluation: x^(2^iteration).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Checkpoint {
    pub iteration: u64,
    /// The group element, hex.
    pub value: String,
}

/// The interface's proof members (interface section 2.9).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct InterfaceMembers {
    /// The epoch whose output the game derives from (a pool game's anchor epoch).
    #[serde(rename = "vdfEpoch")]
    pub vdf_epoch: u64,
    #[serde(rename = "rngValue")]
    pub rng_value: String,
    /// rngValue's formula in words.
    pub derivation: String,
}

/// The anchor object of a record (docs/PROTOCOL.md §16): pending while the record is in no
/// anchor batch, else its batch, leaf, path and the transaction once confirmed.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum AnchorDoc {
    Pending(AnchorPending),
    Included(Box<AnchorIncluded>),
}

any_of_schema!(
    AnchorDoc,
    "The anchor of a record (docs/PROTOCOL.md §16): pending while it is in no anchor batch, \
     else its batch, leaf, audit path and root, and the transaction once confirmed.",
    AnchorPending,
    AnchorIncluded
);

/// The anchor object of a record in no anchor batch yet.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct AnchorPending {
    /// `pending`.
    pub status: String,
    pub enabled: bool,
    /// Why it is pending, in words.
    #[serde(skip_serializing_if = "absent")]
    pub message: Option<String>,
    /// The record's anchor data did not add up (the `anchor_inclusion` check fails).
    #[serde(skip_serializing_if = "absent")]
    pub error: Option<String>,
}

/// The first and last epoch of an anchor batch.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EpochSpan {
    pub first: u64,
    pub last: u64,
}

/// The pool or notary batches `from..to` of an anchor batch (none when equal).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BatchSpan {
    pub from: u64,
    pub to: u64,
}

/// The anchor object of a record in an anchor batch.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct AnchorIncluded {
    /// pending, submitted or confirmed.
    pub status: String,
    pub enabled: bool,
    pub batch: u64,
    pub epochs: EpochSpan,
    pub pool_batches: BatchSpan,
    pub notary_batches: BatchSpan,
    pub leaf: String,
    pub leaf_hash: String,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub audit_path: Vec<String>,
    pub root: String,
    /// `0x` hex of the anchor transaction's input (version 2 when `log` is present).
    pub calldata: String,
    /// The batch's entry in the operator's log, which the version-2 calldata binds (§16,
    /// "Binding"); absent for a version-1 batch.
    #[serde(skip_serializing_if = "absent")]
    pub log: Option<crate::tlog::anchored::AnchorLog>,
    /// `0x` hash of the transaction; null until confirmed.
    pub tx: Option<String>,
    pub block: Option<u64>,
    pub chain: String,
    pub chain_id: u64,
}

/// The anchor members of a proof.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Anchoring {
    /// `0x` hash of the anchor transaction; null until the batch is confirmed.
    #[serde(rename = "anchorTx")]
    pub anchor_tx: Option<String>,
    /// Deprecated alias of anchorTx (same value).
    #[serde(rename = "legacyTx")]
    #[schema(deprecated)]
    pub legacy_tx: Option<String>,
    #[serde(rename = "anchorChain")]
    pub anchor_chain: String,
    #[serde(rename = "anchorChainId")]
    pub anchor_chain_id: u64,
    /// pending, submitted or confirmed.
    pub anchor_status: String,
    pub anchor: AnchorDoc,
}

/// Everything needed to redo an epoch game's checks offline (docs/PROTOCOL.md §13).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EpochProof {
    /// The VDF class (VEO) of the group.
    pub veo_class: String,
    /// The group identifier: an RSA modulus (rsa2048, …) or classgroup-<bits>.
    pub modulus: String,
    /// N in hex (RSA groups).
    #[serde(skip_serializing_if = "absent")]
    pub modulus_n: Option<String>,
    /// Class groups: the epoch's discriminant D_e as chiavdf writes it ("-0x…"); null when it
    /// cannot be derived.
    #[serde(skip_serializing_if = "absent")]
    #[schema(value_type = Option<String>)]
    pub discriminant: Option<Option<String>>,
    /// Class groups: bits of D_e.
    #[serde(skip_serializing_if = "absent")]
    pub discriminant_bits: Option<u32>,
    /// T.
    pub iterations: u64,
    pub x: String,
    pub y: String,
    pub pi: String,
    pub l: String,
    pub epoch_seed: String,
    pub previous_output: String,
    pub bets_root: String,
    pub bet_count: u64,
    /// The game's committed leaf, hex.
    pub leaf: String,
    pub leaf_hash: String,
    pub leaf_index: Option<u64>,
    pub audit_path: Vec<String>,
    pub checkpoints: Vec<Checkpoint>,
    pub bet: BetDoc,
    /// The epoch's timing commitment, checked by the `timing` step.
    pub timing: TimingDoc,
    /// When the game was accepted.
    pub bet_created_at_ms: i64,
    #[serde(flatten)]
    pub interface: InterfaceMembers,
    /// The operator's signed acceptance (null for a game accepted before protocol version 2).
    #[serde(skip_serializing_if = "absent")]
    #[schema(value_type = Option<AcceptanceDoc>)]
    pub acceptance: Option<Option<AcceptanceDoc>>,
    /// The epoch's plan and commitment in the operator's witnessed log, with the cosigned
    /// checkpoints that prove them (docs/PROTOCOL.md §21); absent when the service keeps no log.
    #[serde(skip_serializing_if = "absent")]
    pub log: Option<crate::tlog::witnessed::LogEvidence>,
    /// A moved game's own epoch e: the proof is its last destination's, its leaf in e's tree
    /// (docs/PROTOCOL.md §21, "Moved games"). Absent for other games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<u64>,
    #[serde(flatten, skip_serializing_if = "absent")]
    pub anchoring: Option<Anchoring>,
}

/// The binding of a pool-served bet to an epoch's bets tree (docs/PROTOCOL.md §14, "Binding
/// served bets").
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BetEpochDoc {
    pub epoch: u64,
    /// missing, pending (the epoch has not closed) or bound.
    pub status: String,
    #[serde(skip_serializing_if = "absent")]
    #[schema(value_type = Option<u64>)]
    pub leaf_index: Option<Option<u64>>,
    #[serde(skip_serializing_if = "absent")]
    pub tree_size: Option<u64>,
    #[serde(skip_serializing_if = "absent")]
    pub audit_path: Option<Vec<String>>,
    #[serde(skip_serializing_if = "absent")]
    pub bets_root: Option<String>,
}

impl BetEpochDoc {
    /// The binding of an epoch that is missing or has not closed.
    pub fn short(epoch: u64, status: &str) -> Self {
        Self {
            epoch,
            status: status.to_owned(),
            leaf_index: None,
            tree_size: None,
            audit_path: None,
            bets_root: None,
        }
    }
}

/// Everything needed to redo a pool-served game's checks offline (docs/PROTOCOL.md §14).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PoolProof {
    /// True.
    pub pool_served: bool,
    pub pool_index: u64,
    pub pool_batch: u64,
    pub veo_class: String,
    pub modulus: String,
    pub modulus_n: String,
    pub iterations: u64,
    pub x: String,
    pub y: String,
    pub pi: String,
    pub l: String,
    pub secret: String,
    pub entry_seed: String,
    pub batch_seed: String,
    pub batch_root: String,
    pub batch_first_index: u64,
    pub batch_size: u64,
    pub previous_batch_root: String,
    pub anchor_epoch: u64,
    pub anchor_y: String,
    pub batch_committed_at_ms: i64,
    pub bet_created_at_ms: i64,
    pub entry_leaf: String,
    pub entry_leaf_hash: String,
    pub leaf_index: u64,
    pub audit_path: Vec<String>,
    /// The game's committed leaf, hex.
    pub leaf: String,
    pub bet: BetDoc,
    #[serde(flatten)]
    pub interface: InterfaceMembers,
    /// The epoch whose bets tree binds the served bet (null before protocol version 2).
    #[serde(skip_serializing_if = "absent")]
    #[schema(value_type = Option<BetEpochDoc>)]
    pub bet_epoch: Option<Option<BetEpochDoc>>,
    /// The operator's signed acceptance (null for a game accepted before protocol version 2).
    #[serde(skip_serializing_if = "absent")]
    #[schema(value_type = Option<AcceptanceDoc>)]
    pub acceptance: Option<Option<AcceptanceDoc>>,
    #[serde(flatten, skip_serializing_if = "absent")]
    pub anchoring: Option<Anchoring>,
}

/// Everything needed to redo a game's checks offline.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum Proof {
    Epoch(Box<EpochProof>),
    Pool(Box<PoolProof>),
}

impl Proof {
    pub fn set_acceptance(&mut self, doc: Option<AcceptanceDoc>) {
        match self {
            Proof::Epoch(p) => p.acceptance = Some(doc),
            Proof::Pool(p) => p.acceptance = Some(doc),
        }
    }

    pub fn set_anchoring(&mut self, anchoring: Anchoring) {
        match self {
            Proof::Epoch(p) => p.anchoring = Some(anchoring),
            Proof::Pool(p) => p.anchoring = Some(anchoring),
        }
    }
}

/// The members of a raw RNG request's result.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RngMembers {
    pub request_id: String,
    pub client_seed: Option<String>,
    /// The value (same as rngValue).
    pub random: String,
}

/// The members of a dice or Sic Bo bet's result.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BetMembers {
    pub bet_id: String,
    pub bet_type: Option<String>,
    pub target: Option<u8>,
    pub combo: Option<[u8; 2]>,
    pub amount: Option<String>,
    pub player_id: String,
    pub player_seed: Option<String>,
    pub operator_key: String,
    pub outcome: OutcomeDoc,
    pub won: Option<bool>,
    /// Decimal string.
    pub payout: Option<String>,
    /// The payout rule applied, in words (absent when the outcome could not be recomputed).
    #[serde(skip_serializing_if = "absent")]
    pub rule: Option<String>,
}

/// What kind of game a result is of.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ResultMembers {
    Rng(RngMembers),
    Bet(Box<BetMembers>),
}

/// The result of a resolved game (dice and Sic Bo members, or raw RNG members).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct GameResult {
    pub game_id: String,
    /// `dice`, `sicbo` or `rng`.
    pub game: String,
    /// The epoch that resolved it; null for a pool-served game.
    pub epoch: Option<u64>,
    #[serde(rename = "rngValue")]
    pub rng_value: String,
    /// The output the game derives from (hex).
    pub entropy: Option<String>,
    /// Unix seconds.
    pub resolved_at: Option<i64>,
    pub verify_url: String,
    /// The in-browser verifier for this game.
    pub verify_page: String,
    /// SHA-256 of the game's result (what a notary receipt of schema vrs-game-result binds).
    pub result_hash: String,
    #[serde(flatten)]
    pub members: ResultMembers,
    /// Pool-served games: true.
    #[serde(skip_serializing_if = "absent")]
    pub pool_served: Option<bool>,
    /// Pool-served games: the pool entry the game consumed.
    #[serde(skip_serializing_if = "absent")]
    pub pool_index: Option<u64>,
    /// True only when every check passed.
    pub verified: bool,
    /// The proof object of the verify endpoint.
    pub proof: Proof,
}

/// Step 1 of an epoch game's replay: its leaf was committed in the epoch's bets tree.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EpochBetCommitted {
    pub step: u8,
    #[schema(pattern = "^bet_committed$")]
    pub action: String,
    pub description: String,
    pub game_id: String,
    pub epoch: Option<u64>,
    /// Unix seconds.
    pub accepted_at: i64,
    pub leaf: String,
    pub leaf_hash: String,
    pub leaf_index: Option<u64>,
    pub bet_count: Option<u64>,
    pub audit_path: Vec<String>,
    pub bets_root: Option<String>,
    /// Unix seconds.
    pub closed_at: Option<i64>,
}

/// Step 2 of an epoch game's replay: the epoch's VDF input, output and proof.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct EpochPublished {
    pub step: u8,
    #[schema(pattern = "^vdf_epoch_published$")]
    pub action: String,
    pub description: String,
    pub epoch: u64,
    pub version: u8,
    pub previous_epoch: u64,
    pub modulus: String,
    pub iterations: Option<u64>,
    pub previous_output: Option<String>,
    pub bets_root: Option<String>,
    pub epoch_seed: String,
    pub input: Option<String>,
    pub output: String,
    pub pi: Option<String>,
    pub l: Option<String>,
    pub computation_ms: Option<u64>,
    /// Unix seconds.
    pub published_at: Option<i64>,
}

/// Step 1 of a pool-served game's replay: the bet consumed the next pool entry.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PoolBetCommitted {
    pub step: u8,
    #[schema(pattern = "^bet_committed$")]
    pub action: String,
    pub description: String,
    pub game_id: String,
    pub pool_index: u64,
    /// Unix seconds.
    pub accepted_at: i64,
    pub leaf: String,
    pub entry_leaf_hash: String,
    pub leaf_index: u64,
    pub batch_size: u64,
    pub audit_path: Vec<String>,
    pub batch_root: String,
    /// Unix seconds.
    pub batch_committed_at: i64,
}

/// Step 2 of a pool-served game's replay: the entry's VDF input, output and proof.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct PoolPublished {
    pub step: u8,
    #[schema(pattern = "^vdf_epoch_published$")]
    pub action: String,
    pub description: String,
    /// The batch's anchor epoch.
    pub epoch: u64,
    pub pool_batch: u64,
    pub modulus: String,
    pub iterations: u64,
    pub batch_seed: String,
    pub secret: String,
    pub input: String,
    pub output: String,
    pub pi: String,
    pub l: String,
}

/// Step 3: rngValue = HMAC-SHA256(key y, message game_id ‖ player_seed).
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct RandomnessDerived {
    pub step: u8,
    #[schema(pattern = "^randomness_derived$")]
    pub action: String,
    pub formula: String,
    pub key: String,
    pub message: String,
    pub game_id: String,
    pub player_seed: Option<String>,
    #[serde(rename = "rngValue")]
    pub rng_value: String,
}

/// Step 4: the dice drawn from HMAC blocks.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct DiceRolled {
    pub step: u8,
    #[schema(pattern = "^dice_rolled$")]
    pub action: String,
    pub rule: String,
    pub dice: Vec<u8>,
    pub bytes_used: Option<String>,
    pub skipped: Option<u64>,
    pub hmac_blocks: Option<u32>,
    pub note: Option<String>,
}

/// Step 5: the bet evaluated against the dice.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct BetEvaluated {
    pub step: u8,
    #[schema(pattern = "^bet_evaluated$")]
    pub action: String,
    pub bet_type: Option<String>,
    pub target: Option<u8>,
    pub combo: Option<[u8; 2]>,
    pub amount: Option<String>,
    pub total: Option<u32>,
    pub won: Option<bool>,
    pub payout: Option<String>,
    pub rule: Option<String>,
    pub note: Option<String>,
}

/// One step of the replay trace: bet_committed, vdf_epoch_published, randomness_derived,
/// dice_rolled, bet_evaluated, each with its inputs and outputs.
#[derive(Clone, Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ReplayStep {
    EpochBetCommitted(Box<EpochBetCommitted>),
    EpochPublished(Box<EpochPublished>),
    PoolBetCommitted(Box<PoolBetCommitted>),
    PoolPublished(Box<PoolPublished>),
    RandomnessDerived(Box<RandomnessDerived>),
    DiceRolled(Box<DiceRolled>),
    BetEvaluated(Box<BetEvaluated>),
}
