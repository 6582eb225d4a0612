//! The verification report: named checks and their outcomes, and the data behind them. The
//! service's verification, the anchors and the notary's receipts all report this way.

use crate::verification::{GameResult, Proof, ReplayStep};
use serde::Serialize;
use utoipa::ToSchema;

/// One named check and its outcome.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct Check {
    /// bet_leaf, merkle_inclusion, bets_root, epoch_chain, epoch_input, vdf_proof, timing,
    /// rng_value, dice, payout, acceptance, anchor_inclusion; pool_* for pool-served games
    /// (docs/PROTOCOL.md §13–14).
    #[schema(value_type = String)]
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
}

/// A resolved game with its recomputed checks and the data behind them. The result holds the
/// proof and the verdict; [`Verification::seal`] brings the verdict up to date after checks
/// are added.
#[derive(Clone, Debug)]
pub struct Verification {
    pub checks: Vec<Check>,
    pub result: GameResult,
    pub replay_steps: Vec<ReplayStep>,
}

impl Verification {
    pub fn new(checks: Vec<Check>, result: GameResult, replay_steps: Vec<ReplayStep>) -> Self {
        let mut v = Self {
            checks,
            result,
            replay_steps,
        };
        v.seal();
        v
    }

    /// True only when every check passed.
    pub fn verified(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }

    pub fn proof(&self) -> &Proof {
        &self.result.proof
    }

    pub fn proof_mut(&mut self) -> &mut Proof {
        &mut self.result.proof
    }

    /// Sets the result's `verified` from the checks.
    pub fn seal(&mut self) {
        self.result.verified = self.verified();
    }
}

/// Adds the check `name` with `result` (its detail either way).
pub fn check(checks: &mut Vec<Check>, name: &'static str, result: Result<String, String>) {
    let (passed, detail) = match result {
        Ok(d) => (true, d),
        Err(d) => (false, d),
    };
    checks.push(Check {
        name,
        passed,
        detail,
    });
}
