//! Montgomery squaring in radix 2^52 for moduli below 2^2048: the arithmetic of the AVX-512
//! IFMA kernel (ifma.rs), written here digit by digit as its portable twin, and what both
//! share (the prepared modulus, the conversions, the way back to R-form).
//!
//! A value is 40 digits of 52 bits. With R₅₂ = 2^2080 > 4N the almost-Montgomery product
//! (no final subtraction) of two values below 2N is again below 2N, so a chain of squarings
//! never subtracts; the value is reduced once, when it leaves. Digits may exceed 52 bits
//! inside a product (a 64-bit lane gains less than 2^54 per step over at most 40 steps) and
//! are carried before the next, because the multipliers read only 52 bits.
//!
//! The `fast` backend keeps residues in Montgomery form for R = 2^2048; `sqr_n` enters R₅₂'s
//! form with one product by 2^2112 mod N (x·R · 2^2112 · R₅₂⁻¹ = x·R₅₂), squares, and leaves
//! by one 32-bit Montgomery step (x·R₅₂ · 2^−32 = x·R, [`leave`]).

use super::monty::{from_limbs, neg_inv_u64};
use super::LIMBS;
use num_bigint::BigUint;

/// Digits per value.
pub const DIGITS: usize = 40;
/// The low 52 bits.
pub const MASK: u64 = (1 << 52) - 1;

/// A value in radix 2^52, least significant digit first.
pub type Digits = [u64; DIGITS];

/// The modulus prepared for radix 2^52.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Amm52 {
    /// N.
    pub n: Digits,
    /// −N⁻¹ mod 2^52.
    pub k0: u64,
    /// 2^2112 mod N: a product with it takes R-form into R₅₂-form.
    pub into: Digits,
}

impl Amm52 {
    /// For an odd modulus below 2^2048, given in 64-bit limbs.
    pub fn new(n: &[u64; LIMBS]) -> Self {
        let modulus = from_limbs(n);
        let pow = |e: u32| digits_of(&((BigUint::from(1u8) << e) % &modulus));
        Self {
            n: from_limbs_52(n),
            k0: neg_inv_u64(n[0]) & MASK,
            into: pow(2112),
        }
    }
}

/// The low 52 bits of the product of the low 52 bits of a and b (what `vpmadd52luq` adds).
#[inline(always)]
pub fn lo52(a: u64, b: u64) -> u64 {
    (u128::from(a & MASK) * u128::from(b & MASK)) as u64 & MASK
}

/// Bits 52 to 103 of the same product (what `vpmadd52huq` adds).
#[inline(always)]
pub fn hi52(a: u64, b: u64) -> u64 {
    ((u128::from(a & MASK) * u128::from(b & MASK)) >> 52) as u64
}

/// a·b·R₅₂⁻¹ mod N, below 2N for a, b below 2N, in digits that may exceed 52 bits. Operand
/// scanning, one digit of b per step, the same steps as the IFMA kernel's.
pub fn amm(a: &Digits, b: &Digits, p: &Amm52) -> Digits {
    let mut acc = [0u64; DIGITS];
    for &bi in b {
        for (x, &aj) in acc.iter_mut().zip(a) {
            *x += lo52(aj, bi);
        }
        let a0 = acc[0];
        let m = a0.wrapping_mul(p.k0) & MASK;
        for (x, &nj) in acc.iter_mut().zip(&p.n) {
            *x += lo52(nj, m);
        }
        // The low digit is now 0 mod 2^52: drop it, keeping its carry.
        let carry = (a0 + lo52(p.n[0], m)) >> 52;
        acc.copy_within(1.., 0);
        acc[DIGITS - 1] = 0;
        acc[0] += carry;
        for ((x, &aj), &nj) in acc.iter_mut().zip(a).zip(&p.n) {
            *x += hi52(aj, bi) + hi52(nj, m);
        }
    }
    acc
}

/// Carries every digit's excess into the next, leaving 52-bit digits (the value must be below
/// 2^2080, as every product's is).
pub fn normalize(d: &mut Digits) {
    let mut carry = 0;
    for x in d.iter_mut() {
        let v = *x + carry;
        *x = v & MASK;
        carry = v >> 52;
    }
}

/// x ← x^(2^k) for x in Montgomery form (R = 2^2048): the portable twin of the IFMA kernel.
pub fn sqr_n(p: &Amm52, x: &mut [u64; LIMBS], k: u64) {
    let product = |a: &Digits, b: &Digits| {
        let mut d = amm(a, b, p);
        normalize(&mut d);
        d
    };
    let mut d = product(&from_limbs_52(x), &p.into);
    for _ in 0..k {
        d = product(&d, &d);
    }
    *x = leave(p, &d);
}

/// The R-form residue (2^2048, fully reduced) of a value in R₅₂-form (normalized, below 2N):
/// z·2^−32 mod N by one 32-bit Montgomery step, z + m·N with m = −z·N⁻¹ mod 2^32 shifted down
/// 32 bits, below N·(1 + 2^−31) < 2N, then at most one subtraction. Far cheaper than a
/// product with 2^2048 mod N, and it runs at every checkpoint.
pub fn leave(p: &Amm52, z: &Digits) -> [u64; LIMBS] {
    // z and N in 33 64-bit limbs (z may pass 2^2048).
    let (z, n) = (pack::<{ LIMBS + 1 }>(z), pack::<{ LIMBS + 1 }>(&p.n));
    let m = (z[0] as u32).wrapping_mul(p.k0 as u32);
    // w = z + m·N, one limb more.
    let mut w = [0u64; LIMBS + 2];
    let mut carry = 0u128;
    for i in 0..=LIMBS {
        let v = u128::from(z[i]) + u128::from(m) * u128::from(n[i]) + carry;
        w[i] = v as u64;
        carry = v >> 64;
    }
    w[LIMBS + 1] = carry as u64;
    // r = w >> 32, below 2N < 2^2049.
    let mut r = [0u64; LIMBS + 1];
    for i in 0..=LIMBS {
        r[i] = (w[i] >> 32) | (w[i + 1] << 32);
    }
    // One subtraction if r ≥ N.
    let at_least_n = r.iter().rev().zip(n.iter().rev()).find(|(a, b)| a != b);
    if !matches!(at_least_n, Some((a, b)) if a < b) {
        let mut borrow = false;
        for (ri, &ni) in r.iter_mut().zip(&n) {
            let (v, b1) = ri.overflowing_sub(ni);
            let (v, b2) = v.overflowing_sub(u64::from(borrow));
            *ri = v;
            borrow = b1 || b2;
        }
    }
    let mut out = [0u64; LIMBS];
    out.copy_from_slice(&r[..LIMBS]);
    out
}

/// 64-bit limbs (a value below 2^2048) as 52-bit digits.
pub fn from_limbs_52(x: &[u64; LIMBS]) -> Digits {
    let mut d = [0u64; DIGITS];
    for (j, dj) in d.iter_mut().enumerate() {
        let (w, s) = (52 * j / 64, 52 * j % 64);
        let mut v = x[w] >> s;
        if s > 12 && w + 1 < LIMBS {
            v |= x[w + 1] << (64 - s);
        }
        *dj = v & MASK;
    }
    d
}

/// Normalized 52-bit digits of a value below 2^2048 as 64-bit limbs.
pub fn to_limbs_64(d: &Digits) -> [u64; LIMBS] {
    pack::<LIMBS>(d)
}

/// Normalized 52-bit digits as L 64-bit limbs (the value must fit in them).
fn pack<const L: usize>(d: &Digits) -> [u64; L] {
    let mut x = [0u64; L];
    for (j, &dj) in d.iter().enumerate() {
        let (w, s) = (52 * j / 64, 52 * j % 64);
        x[w] |= dj << s;
        if s > 12 && w + 1 < L {
            x[w + 1] |= dj >> (64 - s);
        }
    }
    x
}

fn digits_of(v: &BigUint) -> Digits {
    from_limbs_52(&super::monty::to_limbs::<LIMBS>(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value(d: &Digits) -> BigUint {
        d.iter()
            .rev()
            .fold(BigUint::default(), |acc, &x| (acc << 52u32) + x)
    }

    proptest! {
        #[test]
        fn conversions_round_trip(limbs in proptest::array::uniform32(any::<u64>())) {
            let d = from_limbs_52(&limbs);
            prop_assert!(d.iter().all(|&x| x <= MASK));
            prop_assert_eq!(value(&d), from_limbs(&limbs));
            prop_assert_eq!(to_limbs_64(&d), limbs);
        }

        #[test]
        fn amm_is_a_montgomery_product(nb in proptest::collection::vec(any::<u8>(), 256),
                                       ab in proptest::collection::vec(any::<u8>(), 256),
                                       bb in proptest::collection::vec(any::<u8>(), 256)) {
            let mut n = BigUint::from_bytes_be(&nb);
            n.set_bit(0, true);
            prop_assume!(n.bits() >= 64);
            let p = Amm52::new(&super::super::monty::to_limbs::<LIMBS>(&n));
            // Any inputs below 2N.
            let two_n = &n << 1u32;
            let (a, b) = (BigUint::from_bytes_be(&ab) % &two_n, BigUint::from_bytes_be(&bb) % &two_n);
            let mut d = amm(&digits_of_wide(&a), &digits_of_wide(&b), &p);
            normalize(&mut d);
            let r_inv = (BigUint::from(1u8) << 2080u32).modinv(&n).expect("n odd");
            prop_assert!(value(&d) < two_n);
            prop_assert_eq!(value(&d) % &n, (&a * &b % &n) * r_inv % &n);
        }
    }

    /// Digits of a value below 2^2080 (2N may pass 2^2048).
    fn digits_of_wide(v: &BigUint) -> Digits {
        let mut d = [0u64; DIGITS];
        for (j, dj) in d.iter_mut().enumerate() {
            *dj = ((v >> (52 * j)) & BigUint::from(MASK))
                .iter_u64_digits()
                .next()
                .unwrap_or(0);
        }
        d
    }
}
