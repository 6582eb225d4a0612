//! The records of the protocol as the service keeps them: games as accepted and resolved,
//! epochs with their plan, input and output, pool batches and entries. Plain data with the
//! rules that read it (an epoch's version, T and predecessor); the store persists them, the
//! verifier and the outcome rules read them.

use crate::acceptance::Signed;

/// Lifecycle of an epoch: open for games → closed (games fixed, input committed) → resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpochStatus {
    Open,
    Closed,
    Resolved,
}

impl EpochStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Closed => "closed",
            Self::Resolved => "resolved",
        }
    }

    /// `None` for a word that is not a status.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "open" => Some(Self::Open),
            "closed" => Some(Self::Closed),
            "resolved" => Some(Self::Resolved),
            _ => None,
        }
    }
}

/// A game (bet or raw RNG request) as accepted, before it has an epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewGame {
    pub game_id: String,
    /// bet_id of a bet, request_id of a raw RNG request.
    pub request_id: String,
    /// "dice", "sicbo" or "rng".
    pub game: String,
    pub bet_type: Option<String>,
    pub target: Option<u8>,
    pub combo: Option<[u8; 2]>,
    /// Two fraction digits, e.g. "1.00"; None for raw RNG.
    pub amount: Option<String>,
    pub player_id: String,
    pub player_seed: Option<String>,
    pub operator_key: String,
    pub created_at_ms: i64,
    /// The committed leaf bytes (see `commit::bet_leaf`).
    pub leaf: Vec<u8>,
    /// The operator's signed acceptance (docs/PROTOCOL.md §11); set by the store (epoch path)
    /// or the instant builder (pool path); `None` for games accepted before protocol version 2.
    pub acceptance: Option<Signed>,
}

/// What resolution adds to a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameResolution {
    pub game_id: String,
    /// 64 hex digits.
    pub rng_value: String,
    /// Empty for raw RNG.
    pub dice: Vec<u8>,
    pub won: Option<bool>,
    pub payout: Option<String>,
}

/// A stored game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    pub new: NewGame,
    /// The epoch a game was committed into; `None` for a pool-served game.
    pub epoch: Option<u64>,
    /// The pool entry a pool-served game consumed (docs/PROTOCOL.md, "Pool chain").
    pub pool_index: Option<u64>,
    /// The epoch whose bets tree holds a pool-served game's leaf (docs/PROTOCOL.md §14,
    /// "Binding served bets"); `None` for epoch-path games and pool games from version 1.
    pub bet_epoch: Option<u64>,
    /// Position in the epoch's bets tree (acceptance order, from 0). Always known once the
    /// epoch is resolved, and in `epoch_games`; elsewhere the PostgreSQL store reports `None`
    /// until then (counting the position of a pending game on every poll costs O(epoch)).
    pub seq: Option<u64>,
    pub resolution: Option<GameResolution>,
    pub resolved_at_ms: Option<i64>,
}

/// The epoch's input, committed before its VDF starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochInput {
    pub iterations: u64,
    pub prev_y: Vec<u8>,
    pub bets_root: [u8; 32],
    pub bet_count: u64,
    pub x: Vec<u8>,
}

/// The epoch's output: y, the Wesolowski proof and the published replay checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochOutput {
    pub y: Vec<u8>,
    pub pi: Vec<u8>,
    /// ℓ, 32 bytes big-endian.
    pub l: Vec<u8>,
    /// (iteration, value) pairs, values fixed-width big-endian.
    pub checkpoints: Vec<(u64, Vec<u8>)>,
    pub computation_ms: u64,
    pub resolved_at_ms: i64,
}

/// How a version-2 epoch is bounded in time, fixed when it opens (docs/PROTOCOL.md §10,
/// "Timing"): the earlier epoch whose output its input takes, its T, the declared margin and
/// squaring rate, and the deadline they give. No game is accepted into it after the deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochPlan {
    /// p(e) < e; 0 stands for the genesis output.
    pub previous: u64,
    pub iterations: u64,
    /// The security margin A in hundredths.
    pub margin_centi: u32,
    pub squarings_per_second: u64,
    /// The latest close the timing rule allows (Unix ms).
    pub deadline_ms: i64,
}

/// What the leader opens each next epoch with: how many epochs' VDFs run side by side (p(e) =
/// e − lanes), T, the margin and the squaring rate it currently measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanParams {
    pub lanes: u64,
    pub iterations: u64,
    pub margin_centi: u32,
    pub squarings_per_second: u64,
    /// T of a version-1 epoch closed without an input yet (its T is the one its input will
    /// take: the service's T at start-up, not the rate-following one).
    pub legacy_iterations: u64,
}

impl PlanParams {
    /// p(e) for epoch `number`.
    pub fn previous(&self, number: u64) -> u64 {
        number.saturating_sub(self.lanes.max(1))
    }

    /// The plan of epoch `number` opening at `opened_at_ms`; `predecessor` is (closed_at_ms,
    /// T) of p(e) when p(e) ≥ 1.
    pub fn plan(
        &self,
        number: u64,
        opened_at_ms: i64,
        predecessor: Option<(i64, u64)>,
    ) -> EpochPlan {
        let previous = self.previous(number);
        let timing = self.timing(previous, opened_at_ms);
        let pred = predecessor.map(|(closed, t)| vrs_engine::timing::Predecessor {
            closed_at_ms: closed.max(0) as u64,
            iterations: t,
        });
        let deadline = vrs_engine::timing::close_bound_ms(&timing, pred)
            .and_then(|d| i64::try_from(d).ok())
            .unwrap_or(opened_at_ms);
        EpochPlan {
            previous,
            iterations: self.iterations,
            margin_centi: self.margin_centi,
            squarings_per_second: self.squarings_per_second,
            deadline_ms: deadline,
        }
    }

    fn timing(&self, previous: u64, opened_at_ms: i64) -> vrs_engine::epoch::Timing {
        vrs_engine::epoch::Timing {
            previous,
            iterations: self.iterations,
            opened_at_ms: opened_at_ms.max(0) as u64,
            closed_at_ms: 0,
            margin_centi: self.margin_centi,
            squarings_per_second: self.squarings_per_second,
        }
    }
}

/// A stored epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochRecord {
    pub number: u64,
    pub status: EpochStatus,
    pub modulus: String,
    pub opened_at_ms: i64,
    pub closed_at_ms: Option<i64>,
    /// Version 2 epochs only (None: a version-1 epoch, from before timing was committed).
    pub plan: Option<EpochPlan>,
    /// Chosen at random when a version-2 epoch closes.
    pub nonce: Option<[u8; 32]>,
    pub input: Option<EpochInput>,
    pub output: Option<EpochOutput>,
}

impl EpochRecord {
    /// The protocol version the epoch's input follows (docs/PROTOCOL.md §10).
    pub fn version(&self) -> u8 {
        if self.plan.is_some() {
            2
        } else {
            1
        }
    }

    /// T as committed: at opening (version 2) or with the input (version 1).
    pub fn iterations(&self) -> Option<u64> {
        self.plan
            .map(|p| p.iterations)
            .or(self.input.as_ref().map(|i| i.iterations))
    }

    /// The number whose output enters this epoch's input: p(e), or e − 1 for version 1.
    pub fn previous(&self) -> u64 {
        self.plan
            .map_or(self.number.saturating_sub(1), |p| p.previous)
    }

    /// The timing commitment of a closed version-2 epoch.
    pub fn timing(&self) -> Option<vrs_engine::epoch::Timing> {
        let plan = self.plan?;
        Some(vrs_engine::epoch::Timing {
            previous: plan.previous,
            iterations: plan.iterations,
            opened_at_ms: self.opened_at_ms.max(0) as u64,
            closed_at_ms: self.closed_at_ms?.max(0) as u64,
            margin_centi: plan.margin_centi,
            squarings_per_second: plan.squarings_per_second,
        })
    }
}

/// A committed batch of pool entries: its link in the pool chain and its root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolBatch {
    pub number: u64,
    pub first_index: u64,
    pub size: u64,
    pub prev_root: [u8; 32],
    pub anchor_epoch: u64,
    pub seed: [u8; 32],
    pub root: [u8; 32],
    pub committed_at_ms: i64,
}

impl PoolBatch {
    /// The index after this batch's last entry.
    pub fn end_index(&self) -> u64 {
        self.first_index + self.size
    }
}

/// A stored pool entry and who consumed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolEntry {
    pub batch: u64,
    pub entry: vrs_engine::pool::Entry,
    pub game_id: Option<String>,
    pub served_at_ms: Option<i64>,
}
