//! Hash-to-prime: the Wesolowski challenge ℓ = H_prime(N, x, y, T), a 256-bit prime (2λ bits
//! for λ = 128).
//!
//! For j = 0, 1, …: h_j = SHA-256(u8(20) ‖ "vrs/v1/hash-to-prime" ‖ u16(byte_len) ‖ N ‖ x ‖ y ‖
//! u64(T) ‖ u64(j)), all integers big-endian, N, x, y fixed-width; the candidate is
//! c_j = int(h_j) | 2^255 | 1; ℓ is the first c_j that passes Baillie-PSW. See
//! docs/PROTOCOL.md, "Hash to prime".

use super::prime::is_probable_prime;
use crate::group::{Element, Modulus};
use crate::hash::{tagged, TAG_HASH_TO_PRIME};
use num_bigint::BigUint;
use sha2::Digest;

/// Bits of the challenge prime ℓ.
pub const CHALLENGE_BITS: u64 = 256;
/// Bytes of ℓ's encoding.
pub const CHALLENGE_BYTES: usize = 32;

/// ℓ for (N, x, y, T), with the counter j of the candidate that was taken.
pub fn hash_to_prime(modulus: &Modulus, x: &Element, y: &Element, t: u64) -> (BigUint, u64) {
    let mut prefix = tagged(TAG_HASH_TO_PRIME);
    prefix.update((modulus.byte_len() as u16).to_be_bytes());
    prefix.update(modulus.to_be_bytes());
    prefix.update(modulus.encode(x));
    prefix.update(modulus.encode(y));
    prefix.update(t.to_be_bytes());
    for j in 0u64.. {
        let mut h = prefix.clone();
        h.update(j.to_be_bytes());
        let mut candidate = BigUint::from_bytes_be(&h.finalize());
        candidate.set_bit(CHALLENGE_BITS - 1, true);
        candidate.set_bit(0, true);
        if is_probable_prime(&candidate) {
            return (candidate, j);
        }
    }
    unreachable!("2^64 candidates without a prime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_is_a_256_bit_prime_bound_to_every_input() {
        let m = Modulus::by_name("test512").expect("named modulus");
        let x = m.hash_to_group(&[7; 32]);
        let y = m.hash_to_group(&[8; 32]);
        let (l, _) = hash_to_prime(&m, &x, &y, 10);
        assert_eq!(l.bits(), 256);
        assert!(is_probable_prime(&l));
        assert_eq!(hash_to_prime(&m, &x, &y, 10).0, l);
        assert_ne!(hash_to_prime(&m, &x, &y, 11).0, l);
        assert_ne!(hash_to_prime(&m, &y, &x, 10).0, l);
        let m2 = Modulus::by_name("test1024").expect("named modulus");
        let x2 = m2.hash_to_group(&[7; 32]);
        let y2 = m2.hash_to_group(&[8; 32]);
        assert_ne!(hash_to_prime(&m2, &x2, &y2, 10).0, l);
    }
}
