//! The modulus in radix 2^28 and the conversions between `BigUint` and 28-bit limbs.
//!
//! Why 28 bits: `vpmuludq` multiplies 32-bit halves into 64-bit products, and a column of
//! a Montgomery product receives at most 2n products below 2^56 (n ≤ 74 limbs for 2048
//! bits), so 148 · 2^56 < 2^64: every column accumulates without carries until the
//! reduction passes it (radix 2^29 would overflow at 2048 bits).

use crate::backend::fast::monty::neg_inv_u64;
use crate::error::{Error, Result};
use crate::group::Modulus;
use num_bigint::BigUint;

/// Bits per limb.
pub(crate) const RADIX: u32 = 28;
/// The low `RADIX` bits.
pub(crate) const MASK: u64 = (1 << RADIX) - 1;
/// Most limbs the column bound allows: 2 · 74 · 2^56 + 2^36 < 2^64. 74 limbs hold 2072 bits,
/// enough for any modulus up to 2048 bits with the two bits of headroom R > 4N needs.
pub(crate) const MAX_LIMBS: usize = 74;

/// A modulus prepared for the lane arithmetic: R = 2^(28·n) with R > 4N, so that values
/// below 2N stay below 2N through every Montgomery product (lazy reduction).
#[derive(Clone, Debug)]
pub(crate) struct Params {
    /// Limbs per value.
    pub n: usize,
    pub modulus: BigUint,
    /// N in n limbs.
    pub m: Vec<u64>,
    /// −N⁻¹ mod 2^28.
    pub m0inv: u64,
    /// R² mod N: a Montgomery product with it takes a value into Montgomery form.
    pub r2: Vec<u64>,
    /// R mod N: one in Montgomery form.
    pub one: Vec<u64>,
}

impl Params {
    pub fn new(modulus: &Modulus) -> Result<Self> {
        let nn = modulus.n();
        let n = (nn.bits() as usize + 2).div_ceil(RADIX as usize);
        if !nn.bit(0) || n > MAX_LIMBS || nn.bits() < 2 {
            return Err(Error::BadModulus(format!(
                "the simd backend needs an odd modulus of at most {} bits",
                MAX_LIMBS * RADIX as usize - 2
            )));
        }
        let r = BigUint::from(1u8) << (RADIX as usize * n);
        let low = nn.iter_u64_digits().next().unwrap_or(1);
        Ok(Self {
            n,
            modulus: nn.clone(),
            m: to_radix(nn, n),
            m0inv: neg_inv_u64(low) & MASK,
            r2: to_radix(&((&r * &r) % nn), n),
            one: to_radix(&(&r % nn), n),
        })
    }
}

/// The n low 28-bit limbs of v (v must fit in 28·n bits).
pub(crate) fn to_radix(v: &BigUint, n: usize) -> Vec<u64> {
    let words: Vec<u64> = v.iter_u64_digits().collect();
    let word = |i: usize| words.get(i).copied().unwrap_or(0);
    (0..n)
        .map(|j| {
            let bit = j * RADIX as usize;
            let (w, b) = (bit / 64, bit % 64);
            let mut limb = word(w) >> b;
            if b + RADIX as usize > 64 {
                limb |= word(w + 1) << (64 - b);
            }
            limb & MASK
        })
        .collect()
}

/// The integer Σ limbs[j] · 2^(28·j); limbs must be below 2^28.
pub(crate) fn from_radix(limbs: impl IntoIterator<Item = u64>) -> BigUint {
    let mut words = Vec::new();
    let (mut acc, mut fill) = (0u128, 0u32);
    for limb in limbs {
        acc |= u128::from(limb) << fill;
        fill += RADIX;
        if fill >= 64 {
            words.push(acc as u64);
            acc >>= 64;
            fill -= 64;
        }
    }
    words.push(acc as u64);
    let digits: Vec<u32> = words
        .iter()
        .flat_map(|w| [*w as u32, (w >> 32) as u32])
        .collect();
    BigUint::new(digits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn radix_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..259)) {
            let v = BigUint::from_bytes_le(&bytes);
            let n = (v.bits() as usize).div_ceil(RADIX as usize) + 1;
            let limbs = to_radix(&v, n);
            prop_assert!(limbs.iter().all(|l| *l <= MASK));
            prop_assert_eq!(from_radix(limbs), v);
        }
    }

    #[test]
    fn rsa2048_takes_74_limbs_and_the_inverse_holds() {
        let p = Params::new(&Modulus::rsa2048()).expect("prepares");
        assert_eq!(p.n, MAX_LIMBS);
        assert_eq!((p.m[0] * p.m0inv + 1) & MASK, 0);
    }
}
