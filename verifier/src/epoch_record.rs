//! An epoch's public record as `GET /api/v1/epochs/{n}` publishes it (docs/PROTOCOL.md §20.3),
//! decoded for the offline checks of `vrs audit` and `vrs verify`.

use anyhow::{bail, Context};
use serde_json::Value;
use vrs_engine::epoch::Timing;
use vrs_engine::merkle::Hash;
use vrs_protocol::tlog::witnessed::LogEvidence;

/// What one epoch published, decoded enough to check.
#[derive(Clone)]
pub(crate) struct Epoch {
    pub number: u64,
    pub modulus: String,
    pub iterations: u64,
    /// p(e) (e − 1 for version 1).
    pub previous_epoch: u64,
    /// The version-2 commitment (None: version 1).
    pub committed: Option<(Timing, [u8; 32])>,
    pub closed_at_ms: Option<u64>,
    pub resolved_at_ms: Option<i64>,
    pub previous_output: Vec<u8>,
    pub bets_root: Hash,
    pub bet_count: u64,
    pub leaf_hashes: Vec<Hash>,
    pub x: Vec<u8>,
    pub y: Vec<u8>,
    pub pi: Vec<u8>,
    pub l: Vec<u8>,
    /// The published `anchor` object (null from a server that does not publish it).
    pub anchor: Value,
    /// The plan's deadline (version 2).
    pub deadline_ms: Option<u64>,
    /// The epoch's entries in the operator's witnessed log, as published (`log`).
    pub log: Result<Option<LogEvidence>, String>,
}

/// An epoch record as `GET /api/v1/epochs/{n}` gives it; unresolved epochs are an error (the
/// range must end at a resolved epoch).
pub(crate) fn decode(body: &Value) -> anyhow::Result<Epoch> {
    let number = body["epoch"].as_u64().context("no epoch number")?;
    let hex_of = |key: &str| -> anyhow::Result<Vec<u8>> {
        let s = body[key]
            .as_str()
            .with_context(|| format!("epoch {number} has no {key} (not resolved yet?)"))?;
        hex::decode(s).with_context(|| format!("epoch {number}: {key} is not hex"))
    };
    let hash = |v: Vec<u8>, key: &str| -> anyhow::Result<Hash> {
        v.try_into()
            .map_err(|_| anyhow::anyhow!("epoch {number}: {key} is not 32 bytes"))
    };
    let leaf_hashes = body["leaf_hashes"]
        .as_array()
        .context("no leaf_hashes")?
        .iter()
        .map(|h| hash(hex::decode(h.as_str().unwrap_or_default())?, "a leaf hash"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let iterations = body["iterations"].as_u64().context("no iterations")?;
    let closed_at_ms = body["closed_at_ms"].as_u64();
    let previous_epoch = body["previous_epoch"]
        .as_u64()
        .unwrap_or(number.saturating_sub(1));
    let committed = match body["version"].as_u64() {
        None | Some(1) => None,
        Some(2) => {
            let nonce: [u8; 32] = hex_of("nonce")?
                .try_into()
                .map_err(|_| anyhow::anyhow!("epoch {number}: nonce is not 32 bytes"))?;
            let margin = body["security_margin"]
                .as_f64()
                .with_context(|| format!("epoch {number} has no security_margin"))?;
            Some((
                Timing {
                    previous: previous_epoch,
                    iterations,
                    opened_at_ms: body["opened_at_ms"]
                        .as_u64()
                        .with_context(|| format!("epoch {number} has no opened_at_ms"))?,
                    closed_at_ms: closed_at_ms
                        .with_context(|| format!("epoch {number} has no closed_at_ms"))?,
                    margin_centi: (margin * 100.0).round() as u32,
                    squarings_per_second: body["squarings_per_second"]
                        .as_u64()
                        .with_context(|| format!("epoch {number} has no squarings_per_second"))?,
                },
                nonce,
            ))
        }
        Some(v) => bail!("epoch {number}: version {v} is not a protocol version"),
    };
    Ok(Epoch {
        number,
        modulus: body["modulus"].as_str().unwrap_or_default().to_owned(),
        iterations,
        previous_epoch,
        committed,
        closed_at_ms,
        resolved_at_ms: body["resolved_at_ms"].as_i64(),
        previous_output: hex_of("previous_output")?,
        bets_root: hash(hex_of("bets_root")?, "bets_root")?,
        bet_count: body["bet_count"].as_u64().context("no bet_count")?,
        leaf_hashes,
        x: hex_of("x")?,
        y: hex_of("y")?,
        pi: hex_of("pi")?,
        l: hex_of("l")?,
        anchor: body["anchor"].clone(),
        deadline_ms: body["deadline_ms"].as_u64(),
        log: crate::witnessed::evidence_of(body),
    })
}
