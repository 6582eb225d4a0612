//! The modulus in radix 2^28 and the conversions between `BigUint` and 28-bit limbs, for the
//! `simd` and `gpu` backends (both sum product columns in 64 bits without carries).
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

/// A modulus prepared for the lane arithmetic: R = 2^(28·n) with R > 4N (or another radix, see
/// [`Params::with_radix`]), so that values below 2N stay below 2N through every Montgomery
/// product (lazy reduction).
#[derive(Clone, Debug)]
pub(crate) struct Params {
    /// Limbs per value.
    pub n: usize,
    pub modulus: BigUint,
    /// N in n limbs.
    pub m: Vec<u64>,
    /// −N⁻¹ mod 2^28 (mod the radix).
    pub m0inv: u64,
    /// R² mod N: a Montgomery product with it takes a value into Montgomery form.
    pub r2: Vec<u64>,
    /// R mod N: one in Montgomery form.
    pub one: Vec<u64>,
}

impl Params {
    /// In radix 2^28. `backend` names the caller in the error for a modulus it cannot take.
    pub fn new(modulus: &Modulus, backend: &str) -> Result<Self> {
        Self::with_radix(modulus, backend, RADIX, MAX_LIMBS, 1)
    }

    /// In radix 2^bits with at most `max_digits` digits, their count rounded up to a multiple
    /// of `multiple` (the IFMA kernel: 52, 40 and 4, for its blocks of 4 columns).
    pub fn with_radix(
        modulus: &Modulus,
        backend: &str,
        bits: u32,
        max_digits: usize,
        multiple: usize,
    ) -> Result<Self> {
        let nn = modulus.n();
        let n = (nn.bits() as usize + 2)
            .div_ceil(bits as usize)
            .next_multiple_of(multiple);
        if !nn.bit(0) || n > max_digits || nn.bits() < 2 {
            return Err(Error::BadModulus(format!(
                "{}: the {backend} backend needs an odd modulus of at most {} bits",
                modulus.id(),
                max_digits * bits as usize - 2
            )));
        }
        let r = BigUint::from(1u8) << (bits as usize * n);
        let low = nn.iter_u64_digits().next().unwrap_or(1);
        Ok(Self {
            n,
            modulus: nn.clone(),
            m: to_digits(nn, n, bits),
            m0inv: neg_inv_u64(low) & (u64::MAX >> (64 - bits)),
            r2: to_digits(&((&r * &r) % nn), n, bits),
            one: to_digits(&(&r % nn), n, bits),
        })
    }
}

/// The n low 28-bit limbs of v (v must fit in 28·n bits).
pub(crate) fn to_radix(v: &BigUint, n: usize) -> Vec<u64> {
    to_digits(v, n, RADIX)
}

/// The integer Σ limbs[j] · 2^(28·j); limbs must be below 2^28.
pub(crate) fn from_radix(limbs: impl IntoIterator<Item = u64>) -> BigUint {
    from_digits(limbs, RADIX)
}

/// The n low digits of `bits` bits (1..=64) of v, least significant first.
pub(crate) fn to_digits(v: &BigUint, n: usize, bits: u32) -> Vec<u64> {
    let words: Vec<u64> = v.iter_u64_digits().collect();
    let word = |i: usize| words.get(i).copied().unwrap_or(0);
    let (bits, mask) = (bits as usize, u64::MAX >> (64 - bits));
    (0..n)
        .map(|j| {
            let bit = j * bits;
            let (w, b) = (bit / 64, bit % 64);
            let mut digit = word(w) >> b;
            if b + bits > 64 {
                digit |= word(w + 1) << (64 - b);
            }
            digit & mask
        })
        .collect()
}

/// The integer Σ digits[j] · 2^(bits·j); digits must be below 2^bits (bits ≤ 64).
pub(crate) fn from_digits(digits: impl IntoIterator<Item = u64>, bits: u32) -> BigUint {
    let mut words = Vec::new();
    let (mut acc, mut fill) = (0u128, 0u32);
    for digit in digits {
        acc |= u128::from(digit) << fill;
        fill += bits;
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
            prop_assert_eq!(from_radix(limbs), v.clone());
            let n52 = (v.bits() as usize).div_ceil(52) + 1;
            prop_assert_eq!(from_digits(to_digits(&v, n52, 52), 52), v);
        }
    }

    #[test]
    fn rsa2048_takes_74_limbs_and_the_inverse_holds() {
        let p = Params::new(&Modulus::rsa2048(), "test").expect("prepares");
        assert_eq!(p.n, MAX_LIMBS);
        assert_eq!((p.m[0] * p.m0inv + 1) & MASK, 0);
    }
}
