//! chiavdf's `HashPrime`: hash-and-check primes.
//!
//! `HashPrime(seed, length, bitmask)`: a counter `sprout`, initially the seed, is incremented as
//! a big-endian integer of the seed's length (wrapping) before every SHA-256; the digests are
//! concatenated and cut to `length / 8` bytes, read as a big-endian integer, the bits in
//! `bitmask` and bit 0 are set, and the first candidate that passes chiavdf's primality test
//! ([`is_probable_prime`](super::primality::is_probable_prime)) is the answer.
//! (`GetB`, the Wesolowski challenge built on it, is in [`super::wesolowski`].)

use super::primality::is_probable_prime;
use num_bigint::BigUint;
use sha2::{Digest, Sha256};

/// Bits of the Wesolowski challenge prime B (chiavdf's `B_bits`).
pub const B_BITS: u32 = 264;

/// chiavdf's `HashPrime(seed, length, bitmask)`. `length` must be a positive multiple of 8
/// (callers check); every bit index in `bitmask` must be below `length`.
///
/// `None` where chiavdf never returns: the counter went through all 256^len(seed) values back
/// to the seed without meeting a prime (an empty seed, or for example the 1-byte seed 0x01 with
/// 256 bits, 256 candidates and no prime among them).
pub(crate) fn hash_prime(seed: &[u8], length: u32, bitmask: &[u32]) -> Option<BigUint> {
    if seed.is_empty() || length == 0 {
        return None;
    }
    let want = (length / 8) as usize;
    let mut sprout = seed.to_vec();
    let mut blob = Vec::with_capacity(want);
    loop {
        blob.clear();
        while blob.len() < want {
            for byte in sprout.iter_mut().rev() {
                *byte = byte.wrapping_add(1);
                if *byte != 0 {
                    break;
                }
            }
            if sprout == seed {
                return None;
            }
            let digest = Sha256::digest(&sprout);
            let take = (want - blob.len()).min(digest.len());
            blob.extend_from_slice(&digest[..take]);
        }
        let mut p = BigUint::from_bytes_be(&blob);
        for &bit in bitmask {
            p.set_bit(u64::from(bit), true);
        }
        p.set_bit(0, true);
        if is_probable_prime(&p) {
            return Some(p);
        }
    }
}
