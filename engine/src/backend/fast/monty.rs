//! Portable Montgomery arithmetic on L little-endian u64 limbs, R = 2^(64·L).
//!
//! Variable time in the exponent bits (`pow_vartime`); every VDF input is public, so nothing
//! here needs to be constant-time (see engine/README.md).

// Limb loops index several arrays at once (a[i], b[i], n[i]); iterators would hide that.
#![allow(clippy::needless_range_loop)]

use crate::error::{Error, Result};
use num_bigint::BigUint;

/// a + b·c + carry, as (low word, high word). Cannot overflow 128 bits.
#[inline(always)]
pub(crate) fn mac(a: u64, b: u64, c: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + (b as u128) * (c as u128) + carry as u128;
    (t as u64, (t >> 64) as u64)
}

/// a + b + carry, as (sum, carry out).
#[inline(always)]
pub(crate) fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + b as u128 + carry as u128;
    (t as u64, (t >> 64) as u64)
}

/// a − b − borrow, as (difference, borrow out ∈ {0, 1}).
#[inline(always)]
pub(crate) fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let t = (a as u128).wrapping_sub(b as u128 + borrow as u128);
    (t as u64, ((t >> 64) as u64) & 1)
}

/// Montgomery parameters of an odd modulus n < 2^(64·L).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Monty<const L: usize> {
    n: [u64; L],
    /// −n⁻¹ mod 2^64.
    n0inv: u64,
    /// R mod n: one in Montgomery form.
    one: [u64; L],
    /// R² mod n: takes a value into Montgomery form.
    r2: [u64; L],
}

impl<const L: usize> Monty<L> {
    /// Prepares the modulus; refuses an even modulus or one wider than L limbs.
    pub fn new(n: &BigUint) -> Result<Self> {
        if !n.bit(0) || n.bits() > 64 * L as u64 || n.bits() < 2 {
            return Err(Error::BadModulus(format!(
                "Montgomery arithmetic needs an odd modulus of at most {} bits",
                64 * L
            )));
        }
        let limbs = to_limbs::<L>(n);
        let r = BigUint::from(1u8) << (64 * L);
        let one = to_limbs::<L>(&(&r % n));
        let r2 = to_limbs::<L>(&((&r * &r) % n));
        Ok(Self {
            n: limbs,
            n0inv: neg_inv_u64(limbs[0]),
            one,
            r2,
        })
    }

    pub fn modulus(&self) -> &[u64; L] {
        &self.n
    }

    pub fn n0inv(&self) -> u64 {
        self.n0inv
    }

    /// One in Montgomery form.
    pub fn one(&self) -> [u64; L] {
        self.one
    }

    /// v·R mod n for v < n.
    pub fn to_monty(&self, v: &BigUint) -> [u64; L] {
        self.mul(&to_limbs::<L>(v), &self.r2)
    }

    /// The integer a·R⁻¹ mod n.
    pub fn from_monty(&self, a: &[u64; L]) -> BigUint {
        let mut unit = [0u64; L];
        unit[0] = 1;
        from_limbs(&self.mul(a, &unit))
    }

    /// a·b·R⁻¹ mod n, fully reduced (CIOS: multiply and reduce interleaved, word by word).
    #[inline]
    pub fn mul(&self, a: &[u64; L], b: &[u64; L]) -> [u64; L] {
        let mut t = [0u64; L];
        let mut t_hi = 0u64;
        for &bi in b.iter() {
            let mut carry = 0;
            for j in 0..L {
                (t[j], carry) = mac(t[j], a[j], bi, carry);
            }
            let (s, c) = adc(t_hi, carry, 0);
            t_hi = s;
            let t_hi2 = c;
            let m = t[0].wrapping_mul(self.n0inv);
            let (_, mut carry) = mac(t[0], m, self.n[0], 0);
            for j in 1..L {
                (t[j - 1], carry) = mac(t[j], m, self.n[j], carry);
            }
            let (s, c) = adc(t_hi, carry, 0);
            t[L - 1] = s;
            t_hi = t_hi2 + c;
        }
        reduce_once(&t, t_hi, &self.n)
    }

    /// a² · R⁻¹ mod n.
    #[inline]
    pub fn sqr(&self, a: &[u64; L]) -> [u64; L] {
        self.mul(a, a)
    }

    /// (a + b) mod n for a, b < n.
    pub fn add(&self, a: &[u64; L], b: &[u64; L]) -> [u64; L] {
        let mut s = [0u64; L];
        let mut carry = 0;
        for i in 0..L {
            (s[i], carry) = adc(a[i], b[i], carry);
        }
        reduce_once(&s, carry, &self.n)
    }

    /// (a − b) mod n for a, b < n.
    pub fn sub(&self, a: &[u64; L], b: &[u64; L]) -> [u64; L] {
        let (mut d, borrow) = sub_limbs(a, b);
        if borrow != 0 {
            let mut carry = 0;
            for i in 0..L {
                (d[i], carry) = adc(d[i], self.n[i], carry);
            }
        }
        d
    }

    /// a / 2 mod n for a < n (n is odd, so a + n is even when a is odd).
    pub fn half(&self, a: &[u64; L]) -> [u64; L] {
        let mut v = *a;
        let mut top = 0;
        if v[0] & 1 == 1 {
            let mut carry = 0;
            for i in 0..L {
                (v[i], carry) = adc(v[i], self.n[i], carry);
            }
            top = carry;
        }
        for i in 0..L {
            let next = if i + 1 < L { v[i + 1] } else { top };
            v[i] = (v[i] >> 1) | (next << 63);
        }
        v
    }

    /// base^exp in Montgomery form, by fixed 4-bit windows. Variable time in `exp`.
    pub fn pow_vartime(&self, base: &[u64; L], exp: &BigUint) -> [u64; L] {
        pow_window(self, base, exp)
    }
}

/// Modular multiplication in some Montgomery domain, for the shared exponentiation code.
pub trait MulMod {
    type E: Copy;
    fn one(&self) -> Self::E;
    fn mul(&self, a: &Self::E, b: &Self::E) -> Self::E;
    fn sqr(&self, a: &Self::E) -> Self::E;
}

impl<const L: usize> MulMod for Monty<L> {
    type E = [u64; L];
    fn one(&self) -> [u64; L] {
        self.one
    }
    fn mul(&self, a: &[u64; L], b: &[u64; L]) -> [u64; L] {
        Monty::mul(self, a, b)
    }
    fn sqr(&self, a: &[u64; L]) -> [u64; L] {
        Monty::sqr(self, a)
    }
}

/// Table of base^0 … base^15.
fn window_table<M: MulMod>(m: &M, base: &M::E) -> [M::E; 16] {
    let mut t = [m.one(); 16];
    for i in 1..16 {
        t[i] = m.mul(&t[i - 1], base);
    }
    t
}

/// The 4-bit digit of `e` at position `i` (bits 4i .. 4i+3).
fn nibble(e: &BigUint, i: u64) -> usize {
    (0..4).fold(0, |acc, b| acc | ((e.bit(4 * i + b) as usize) << b))
}

/// base^exp by left-to-right fixed 4-bit windows. Variable time.
pub fn pow_window<M: MulMod>(m: &M, base: &M::E, exp: &BigUint) -> M::E {
    let table = window_table(m, base);
    let digits = exp.bits().div_ceil(4);
    let mut acc = m.one();
    for i in (0..digits).rev() {
        if i + 1 != digits {
            for _ in 0..4 {
                acc = m.sqr(&acc);
            }
        }
        let d = nibble(exp, i);
        if d != 0 {
            acc = m.mul(&acc, &table[d]);
        }
    }
    acc
}

/// Width of the sliding windows of [`pow2_window`].
const SLIDING_BITS: u64 = 5;

/// Sliding-window digits of e, scanning from the low end: (position of the digit's low bit,
/// odd digit below 2^SLIDING_BITS), so that e = Σ digit · 2^position.
fn sliding_digits(e: &BigUint) -> Vec<(u64, usize)> {
    let bits = e.bits();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bits {
        if !e.bit(i) {
            i += 1;
            continue;
        }
        let len = SLIDING_BITS.min(bits - i);
        let d = (0..len).fold(0, |acc, b| acc | (usize::from(e.bit(i + b)) << b));
        out.push((i, d));
        i += len;
    }
    out
}

/// base^1, base^3, …, base^(2^SLIDING_BITS − 1).
fn odd_powers<M: MulMod>(m: &M, base: &M::E) -> Vec<M::E> {
    let sq = m.sqr(base);
    let mut t = vec![*base];
    for i in 1..(1usize << (SLIDING_BITS - 1)) {
        t.push(m.mul(&t[i - 1], &sq));
    }
    t
}

/// a^e · b^f with interleaved sliding windows (Möller): the squarings are shared, each
/// exponent costs about bits/(w + 1) multiplications. Variable time.
pub fn pow2_window<M: MulMod>(m: &M, a: &M::E, e: &BigUint, b: &M::E, f: &BigUint) -> M::E {
    let (ta, tb) = (odd_powers(m, a), odd_powers(m, b));
    let (mut da, mut db) = (sliding_digits(e), sliding_digits(f));
    let top = e.bits().max(f.bits());
    let mut acc: Option<M::E> = None;
    for i in (0..top).rev() {
        if let Some(x) = acc.as_mut() {
            *x = m.sqr(x);
        }
        for (digits, table) in [(&mut da, &ta), (&mut db, &tb)] {
            if digits.last().is_some_and(|&(pos, _)| pos == i) {
                if let Some((_, d)) = digits.pop() {
                    let t = &table[d >> 1];
                    acc = Some(match acc {
                        Some(x) => m.mul(&x, t),
                        None => *t,
                    });
                }
            }
        }
    }
    acc.unwrap_or_else(|| m.one())
}

/// −n⁻¹ mod 2^64 for odd n, by Newton iteration (each step doubles the correct bits).
pub(crate) fn neg_inv_u64(n0: u64) -> u64 {
    let mut inv: u64 = 1;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(n0.wrapping_mul(inv)));
    }
    inv.wrapping_neg()
}

/// a − b over L limbs with the borrow out.
#[inline(always)]
pub(crate) fn sub_limbs<const L: usize>(a: &[u64; L], b: &[u64; L]) -> ([u64; L], u64) {
    let mut d = [0u64; L];
    let mut borrow = 0;
    for i in 0..L {
        (d[i], borrow) = sbb(a[i], b[i], borrow);
    }
    (d, borrow)
}

/// The value t + hi·R, known to be below 2n, reduced into [0, n).
#[inline(always)]
pub(crate) fn reduce_once<const L: usize>(t: &[u64; L], hi: u64, n: &[u64; L]) -> [u64; L] {
    let (d, borrow) = sub_limbs(t, n);
    // t + hi·R ≥ n exactly when hi is set or the subtraction did not borrow.
    if hi != 0 || borrow == 0 {
        d
    } else {
        *t
    }
}

/// Little-endian limbs of v; v must fit (callers check).
pub(crate) fn to_limbs<const L: usize>(v: &BigUint) -> [u64; L] {
    let mut out = [0u64; L];
    for (o, d) in out.iter_mut().zip(v.iter_u64_digits()) {
        *o = d;
    }
    out
}

pub(crate) fn from_limbs(limbs: &[u64]) -> BigUint {
    let mut bytes = Vec::with_capacity(limbs.len() * 8);
    for l in limbs {
        bytes.extend_from_slice(&l.to_le_bytes());
    }
    BigUint::from_bytes_le(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn odd(bytes: &[u8]) -> BigUint {
        BigUint::from_bytes_be(bytes) | BigUint::from(1u8)
    }

    proptest! {
        #[test]
        fn mul_add_sub_half_match_bigint(nb in proptest::collection::vec(any::<u8>(), 2..=32),
                                         ab in proptest::collection::vec(any::<u8>(), 32),
                                         bb in proptest::collection::vec(any::<u8>(), 32)) {
            let n = odd(&nb);
            prop_assume!(n > BigUint::from(1u8));
            let m = Monty::<4>::new(&n).expect("odd modulus");
            let a = BigUint::from_bytes_be(&ab) % &n;
            let b = BigUint::from_bytes_be(&bb) % &n;
            let (am, bm) = (m.to_monty(&a), m.to_monty(&b));
            prop_assert_eq!(m.from_monty(&m.mul(&am, &bm)), (&a * &b) % &n);
            prop_assert_eq!(m.from_monty(&m.add(&am, &bm)), (&a + &b) % &n);
            prop_assert_eq!(m.from_monty(&m.sub(&am, &bm)), (&a + &n - &b) % &n);
            let h = m.from_monty(&m.half(&am));
            prop_assert_eq!((&h * 2u8) % &n, a.clone());
            let e = BigUint::from_bytes_be(&bb);
            prop_assert_eq!(m.from_monty(&m.pow_vartime(&am, &e)), a.modpow(&e, &n));
            let f = BigUint::from_bytes_be(&ab);
            prop_assert_eq!(m.from_monty(&pow2_window(&m, &am, &e, &bm, &f)),
                            (a.modpow(&e, &n) * b.modpow(&f, &n)) % &n);
        }
    }
}
