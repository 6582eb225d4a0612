//! Portable Montgomery squaring for 32 limbs (2048 bits): the scalar twin of the x86-64
//! kernel, and the fallback on CPUs without BMI2/ADX.
//!
//! A dedicated squaring computes each cross product a_i·a_j (i < j) once, doubles, adds the
//! squares a_i², then runs 32 rows of Montgomery reduction: 528 + 1056 word products instead
//! of the 2048 + 32 of a general multiplication.

// Limb loops index several arrays at once (a[i], b[i], n[i]); iterators would hide that.
#![allow(clippy::needless_range_loop)]

use super::monty::{adc, mac, reduce_once};

pub const LIMBS: usize = 32;

/// a² · 2^-2048 mod n, fully reduced. `n0inv` = −n⁻¹ mod 2^64; a < n.
#[inline]
pub fn mont_sqr_32(a: &[u64; LIMBS], n: &[u64; LIMBS], n0inv: u64) -> [u64; LIMBS] {
    let mut t = [0u64; 2 * LIMBS];
    // Cross products, each once.
    for i in 0..LIMBS {
        let mut carry = 0;
        for j in (i + 1)..LIMBS {
            (t[i + j], carry) = mac(t[i + j], a[i], a[j], carry);
        }
        t[i + LIMBS] = carry;
    }
    // Double them.
    let mut top = 0;
    for w in t.iter_mut() {
        let v = *w;
        *w = (v << 1) | top;
        top = v >> 63;
    }
    // Add the squares on the diagonal.
    let mut carry = 0;
    for i in 0..LIMBS {
        let sq = (a[i] as u128) * (a[i] as u128);
        let c;
        (t[2 * i], c) = adc(t[2 * i], sq as u64, carry);
        (t[2 * i + 1], carry) = adc(t[2 * i + 1], (sq >> 64) as u64, c);
    }
    redc(&mut t, n, n0inv)
}

/// Montgomery reduction of a 64-limb value t < n·R: t · R⁻¹ mod n.
#[inline(always)]
fn redc(t: &mut [u64; 2 * LIMBS], n: &[u64; LIMBS], n0inv: u64) -> [u64; LIMBS] {
    // `pending` is the carry out of the previous row's top word, due at this row's top word.
    let mut pending = 0;
    for i in 0..LIMBS {
        let m = t[i].wrapping_mul(n0inv);
        let mut carry = 0;
        for j in 0..LIMBS {
            (t[i + j], carry) = mac(t[i + j], m, n[j], carry);
        }
        (t[i + LIMBS], pending) = adc(t[i + LIMBS], carry, pending);
    }
    let mut hi = [0u64; LIMBS];
    hi.copy_from_slice(&t[LIMBS..]);
    reduce_once(&hi, pending, n)
}
