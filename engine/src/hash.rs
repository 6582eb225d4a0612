//! Domain-separated SHA-256. Every hash the engine computes starts with its tag, so that no
//! output of one purpose can be replayed as the output of another.
//!
//! Encoding (docs/PROTOCOL.md, "Tagged hashes"): `SHA-256( u8(len(tag)) ‖ tag ‖ fields… )`.

use sha2::{Digest, Sha256};

/// Tag of hash-to-group (seed → element).
pub const TAG_HASH_TO_GROUP: &[u8] = b"vrs/v1/hash-to-group";
/// Tag of hash-to-prime (N, x, y, T → ℓ).
pub const TAG_HASH_TO_PRIME: &[u8] = b"vrs/v1/hash-to-prime";

/// A SHA-256 state that has absorbed `u8(len(tag)) ‖ tag`.
pub fn tagged(tag: &[u8]) -> Sha256 {
    debug_assert!(tag.len() < 256, "tags are short ASCII strings");
    let mut h = Sha256::new();
    h.update([tag.len() as u8]);
    h.update(tag);
    h
}
