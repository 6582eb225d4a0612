//! The JSON form of a VDF proof, shared by `vrs vdf prove`, `vrs vdf verify` and the test
//! vectors in docs/test-vectors/. Integers are fixed-width lowercase hex, big-endian.

use anyhow::Context;
use serde::{Deserialize, Serialize};
use vrs_engine::group::{decode_hex, Modulus};
use vrs_engine::vdf::{self, Checkpoint, Output, CHALLENGE_BYTES};

/// A proof document. `seed` is optional on input: when present, x must equal
/// hash_to_group(seed).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProofDoc {
    /// Modulus identifier: rsa2048, test512, test1024 or hex:<digits>.
    pub modulus: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// T, the number of sequential squarings.
    pub iterations: u64,
    pub x: String,
    pub y: String,
    /// The 256-bit challenge prime ℓ, 64 hex digits.
    pub l: String,
    pub pi: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replay: Vec<ReplayPoint>,
}

/// A published checkpoint: value = x^(2^iteration), canonical.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReplayPoint {
    pub iteration: u64,
    pub value: String,
}

impl ProofDoc {
    pub fn new(modulus: &Modulus, seed: Option<&[u8; 32]>, out: &Output) -> Self {
        Self {
            modulus: modulus.id().to_owned(),
            seed: seed.map(hex::encode),
            iterations: out.t,
            x: modulus.encode_hex(&out.x),
            y: modulus.encode_hex(&out.y),
            l: format!(
                "{:0>width$}",
                out.proof.l.to_str_radix(16),
                width = 2 * CHALLENGE_BYTES
            ),
            pi: modulus.encode_hex(&out.proof.pi),
            replay: out
                .replay
                .iter()
                .map(|c| ReplayPoint {
                    iteration: c.iteration,
                    value: modulus.encode_hex(&c.value),
                })
                .collect(),
        }
    }
}

/// A seed given as 64 hex digits.
pub fn parse_seed(hex_seed: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = decode_hex("seed", hex_seed)?;
    bytes.as_slice().try_into().with_context(|| {
        format!(
            "--seed must be 32 bytes (64 hex digits), got {}",
            bytes.len()
        )
    })
}

/// Every check of a document (and its replay segments when asked); the first failure's reason.
pub fn check(doc: &ProofDoc, replay: bool) -> Result<(), String> {
    let modulus = Modulus::by_name(&doc.modulus).map_err(|e| e.to_string())?;
    let field = |what: &'static str, hex: &str| decode_hex(what, hex).map_err(|e| e.to_string());
    let x = field("x", &doc.x)?;
    if let Some(seed) = &doc.seed {
        let seed = parse_seed(seed).map_err(|e| e.to_string())?;
        if modulus.encode(&modulus.hash_to_group(&seed)) != x {
            return Err("x is not hash_to_group(seed)".into());
        }
    }
    let y = field("y", &doc.y)?;
    vdf::verify_encoded(
        &modulus,
        &x,
        &y,
        doc.iterations,
        &field("l", &doc.l)?,
        &field("pi", &doc.pi)?,
    )
    .map_err(|e| e.to_string())?;
    if replay {
        let checkpoints = doc
            .replay
            .iter()
            .map(|p| {
                let value = modulus.decode_hex("replay value", &p.value)?;
                Ok(Checkpoint {
                    iteration: p.iteration,
                    value,
                })
            })
            .collect::<Result<Vec<_>, vrs_engine::Error>>()
            .map_err(|e| e.to_string())?;
        let (x, y) = (modulus.decode_input(&x), modulus.decode("y", &y));
        let (x, y) = (x.map_err(|e| e.to_string())?, y.map_err(|e| e.to_string())?);
        vdf::verify_replay(&modulus, &x, &y, doc.iterations, &checkpoints)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
