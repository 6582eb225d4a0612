//! The JSON form of a VDF proof, shared by `vrs vdf prove`, `vrs vdf verify` and the test
//! vectors in docs/test-vectors/. Integers are fixed-width lowercase hex, big-endian.

use serde::{Deserialize, Serialize};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{Output, CHALLENGE_BYTES};

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
