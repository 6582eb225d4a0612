//! Column encodings both stores share: replay checkpoints as JSON, dice and combos as
//! comma-separated digits, acceptances as key and signature.

use super::{Signed, StoreError, StoreResult};

/// Checkpoints are stored as a JSON array of [iteration, "hex"] pairs.
pub fn encode_checkpoints(c: &[(u64, Vec<u8>)]) -> String {
    let items: Vec<serde_json::Value> = c
        .iter()
        .map(|(i, v)| serde_json::json!([i, hex::encode(v)]))
        .collect();
    serde_json::Value::Array(items).to_string()
}

pub fn decode_checkpoints(s: &str) -> StoreResult<Vec<(u64, Vec<u8>)>> {
    let bad = |what: &str| StoreError::Corrupt(format!("checkpoints: {what}"));
    let items: Vec<(u64, String)> = serde_json::from_str(s).map_err(|e| bad(&e.to_string()))?;
    items
        .into_iter()
        .map(|(i, h)| Ok((i, hex::decode(h).map_err(|e| bad(&e.to_string()))?)))
        .collect()
}

/// "3,5" for [3, 5]; "" for none.
pub fn join_digits(d: &[u8]) -> String {
    d.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

pub fn parse_digits(s: &str, what: &str) -> StoreResult<Vec<u8>> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.parse::<u8>()
                .map_err(|_| StoreError::Corrupt(format!("{what}: {s:?}")))
        })
        .collect()
}

pub fn parse_combo(s: Option<&str>) -> StoreResult<Option<[u8; 2]>> {
    match s.map(|c| parse_digits(c, "combo")).transpose()? {
        Some(v) if v.len() == 2 => Ok(Some([v[0], v[1]])),
        Some(_) => Err(StoreError::Corrupt(format!("combo {s:?}"))),
        None => Ok(None),
    }
}

/// A version-2 epoch's plan from its columns (all set, or all NULL for version 1).
pub fn epoch_plan(
    previous: Option<i64>,
    iterations: Option<i64>,
    margin_centi: Option<i64>,
    rate: Option<i64>,
    deadline_ms: Option<i64>,
) -> Option<super::EpochPlan> {
    Some(super::EpochPlan {
        previous: previous? as u64,
        iterations: iterations? as u64,
        margin_centi: u32::try_from(margin_centi?).ok()?,
        squarings_per_second: rate? as u64,
        deadline_ms: deadline_ms?,
    })
}

/// An epoch's nonce column: 32 bytes or NULL.
pub fn nonce(bytes: Option<Vec<u8>>) -> StoreResult<Option<[u8; 32]>> {
    bytes
        .map(|b| {
            b.try_into()
                .map_err(|_| StoreError::Corrupt("an epoch nonce is not 32 bytes".into()))
        })
        .transpose()
}

/// A stored acceptance key (32 bytes).
pub(crate) fn acceptance_key(k: Vec<u8>) -> StoreResult<[u8; 32]> {
    k.try_into()
        .map_err(|_| StoreError::Corrupt("an acceptance key is not 32 bytes".into()))
}

/// A stored acceptance: both columns or neither.
pub(crate) fn signed_from(
    key: Option<Vec<u8>>,
    sig: Option<Vec<u8>>,
) -> StoreResult<Option<Signed>> {
    match (key, sig) {
        (None, None) => Ok(None),
        (Some(k), Some(s)) => Ok(Some(Signed {
            public_key: acceptance_key(k)?,
            signature: s.try_into().map_err(|_| {
                StoreError::Corrupt("an acceptance signature is not 64 bytes".into())
            })?,
        })),
        _ => Err(StoreError::Corrupt(
            "a game has an acceptance key without a signature, or the reverse".into(),
        )),
    }
}

/// Fees are stored as decimal wei.
pub(crate) fn parse_wei(s: &str) -> StoreResult<u128> {
    s.parse()
        .map_err(|_| StoreError::Corrupt(format!("anchor fee {s:?} is not a wei amount")))
}
