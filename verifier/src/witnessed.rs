//! The `witnessed` step of `vrs verify` and `vrs audit` (docs/PROTOCOL.md §21, "The witnessed
//! step"): an epoch's plan and commitment, and the output of the epoch its input takes, are in
//! checkpoints that a quorum of the verifier's own witnesses cosigned in time, and the epoch
//! record judged is the one the log proves.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Args;
use serde_json::Value;
use vrs_engine::epoch::Timing;
use vrs_engine::merkle::Hash;
use vrs_protocol::tlog::entry::{output_hash, CommitmentEntry};
use vrs_protocol::tlog::policy::Policy;
use vrs_protocol::tlog::witnessed::{
    self, default_max_rate, LogEvidence, ShownEpoch, WitnessFloor,
};

/// What a verifier without a policy says of every epoch game it checks.
pub const UNCHECKED_NOTE: &str = "witnessed: not checked (no --witness-policy): the operator is \
    trusted not to withhold an epoch's commitment, stage a stall or backdate its times \
    (docs/PROTOCOL.md §21)";

/// What a verifier with a policy says of the policy itself: a quorum that two disjoint sets of
/// witnesses meet lets two histories pass, each shown to one set (docs/PROTOCOL.md §21).
pub fn policy_notes(floor: &WitnessFloor) -> Vec<String> {
    match floor.policy.disjoint_quorums() {
        Some((a, b)) => vec![format!(
            "witnessed: the policy's quorum is met by two disjoint sets of witnesses ([{}] and \
             [{}]): two histories of the log, each cosigned by one set, both pass; a quorum \
             whose every two sets share a witness (a majority) excludes that \
             (docs/PROTOCOL.md §21)",
            a.join(", "),
            b.join(", ")
        )],
        None => Vec::new(),
    }
}

/// `--witness-policy`, `--max-rate` and `--delta-ms` of `vrs verify` and `vrs audit`.
#[derive(Debug, Args)]
pub struct WitnessArg {
    /// Your witnesses: a C2SP tlog-policy file naming the operator's log key (`log <vkey>`),
    /// the witnesses you trust (`witness <name> <vkey> [url]`), groups and one `quorum`
    /// (docs/PROTOCOL.md §21). Adds the `witnessed` step: each epoch's plan and commitment must
    /// be in checkpoints cosigned in time by a quorum of them. Without it the operator is
    /// trusted not to withhold an epoch's commitment, and the report says so.
    #[arg(long, value_name = "FILE", env = "VRS_WITNESS_POLICY")]
    pub witness_policy: Option<PathBuf>,
    /// S: your bound on the fastest squarer in the epochs' group, in squarings a second
    /// (`9000000` or `9e6`), never the operator's declared rate. An epoch passes `witnessed`
    /// only if its T outlasts, at S, the time from its plan's cosignature to its
    /// commitment's. Default 9e6 for RSA groups (the FPGA class), 1e6 for class groups.
    #[arg(long, value_name = "S", value_parser = vrs_protocol::schedule::parse_rate)]
    pub max_rate: Option<u64>,
    /// Your clock tolerance δ in milliseconds: how far after an epoch's stamped opening (and
    /// its deadline) a witness's cosignature may come.
    #[arg(long, value_name = "MS", default_value_t = witnessed::DELTA_MS)]
    pub delta_ms: u64,
}

impl WitnessArg {
    /// The floor the flags ask for in `group`; None without a policy.
    pub fn floor(&self, group: &str) -> anyhow::Result<Option<WitnessFloor>> {
        let Some(path) = &self.witness_policy else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--witness-policy {}", path.display()))?;
        let policy = Policy::parse(&text)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--witness-policy {}", path.display()))?;
        anyhow::ensure!(
            !policy.logs.is_empty(),
            "--witness-policy {}: it names no log (a `log <vkey>` line)",
            path.display()
        );
        Ok(Some(WitnessFloor {
            policy,
            max_rate: self.max_rate.unwrap_or_else(|| default_max_rate(group)),
            delta_ms: self.delta_ms,
        }))
    }
}

/// The `log` member of a proof or an epoch record; None when absent.
pub(crate) fn evidence_of(v: &Value) -> Result<Option<LogEvidence>, String> {
    match v.get("log") {
        None | Some(Value::Null) => Ok(None),
        Some(log) => serde_json::from_value(log.clone())
            .map(Some)
            .map_err(|e| format!("the log member is malformed: {e}")),
    }
}

/// The record shown of a version-2 epoch (its committed timing and nonce, bets root, count,
/// deadline and the previous output its input takes).
pub(crate) fn shown(
    epoch: u64,
    committed: Option<(Timing, [u8; 32])>,
    bets_root: Hash,
    bet_count: u64,
    deadline_ms: Option<u64>,
    previous_output: &[u8],
) -> Result<ShownEpoch, String> {
    let (t, nonce) = committed.ok_or_else(|| {
        format!("epoch {epoch} is version 1: it committed to no plan, so no log can time it")
    })?;
    Ok(ShownEpoch {
        commitment: CommitmentEntry {
            epoch,
            previous: t.previous,
            bets_root,
            bet_count,
            nonce,
            iterations: t.iterations,
            margin_centi: t.margin_centi,
            squarings_per_second: t.squarings_per_second,
            opened_ms: t.opened_at_ms,
            closed_ms: t.closed_at_ms,
        },
        deadline_ms: deadline_ms.ok_or_else(|| format!("epoch {epoch} shows no deadline_ms"))?,
        previous_output_hash: output_hash(previous_output),
    })
}

/// The step for epoch `epoch`: its logged plan and commitment cosigned in time by the
/// floor's quorum, and equal to the record shown.
pub(crate) fn step(
    floor: &WitnessFloor,
    epoch: u64,
    evidence: Option<&LogEvidence>,
    shown: Result<ShownEpoch, String>,
) -> Result<String, String> {
    let shown = shown?;
    let ev = evidence
        .ok_or_else(|| format!("the server publishes no witnessed log for epoch {epoch}"))?;
    let w = witnessed::check(&ev.plan, &ev.commitment, &ev.previous_output, floor)?;
    if w.plan.epoch != epoch {
        return Err(format!(
            "the log's entries are epoch {}'s, not epoch {epoch}'s",
            w.plan.epoch
        ));
    }
    w.matches(&shown)?;
    Ok(w.detail)
}

/// A moved game's moves (docs/PROTOCOL.md §21, "Moved games"): `moved_from`, the `log.moves`
/// lists and the destination's commitment.
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    pub(crate) from: Option<u64>,
    pub(crate) moves: Vec<Vec<witnessed::LoggedEntry>>,
    /// The destination's commitment (`log.commitment`).
    pub(crate) commitment: Vec<witnessed::LoggedEntry>,
}

/// The moves of a proof; None for a game that was not moved (no `moved_from`, no or empty
/// `log.moves`).
pub(crate) fn moves_of(proof: &Value) -> Result<Option<Moved>, String> {
    let from = match proof.get("moved_from") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_u64().ok_or("moved_from is not an epoch number")?),
    };
    let ev = evidence_of(proof)?;
    let moves = ev.as_ref().map(|e| e.moves.clone()).unwrap_or_default();
    if from.is_none() && moves.is_empty() {
        return Ok(None);
    }
    Ok(Some(Moved {
        from,
        moves,
        commitment: ev.map(|e| e.commitment).unwrap_or_default(),
    }))
}
