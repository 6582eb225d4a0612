//! The verification report: named checks and their outcomes, and the data behind them. The
//! service's verification, the anchors and the notary's receipts all report this way.

use serde_json::Value;

/// One named check and its outcome.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: &'static str,
    pub passed: bool,
    pub detail: String,
}

/// A resolved game with its recomputed checks and the data behind them.
#[derive(Debug)]
pub struct Verification {
    pub verified: bool,
    pub checks: Vec<Check>,
    pub proof: Value,
    pub result: Value,
    pub replay_steps: Vec<Value>,
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
