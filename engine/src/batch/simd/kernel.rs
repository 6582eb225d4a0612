//! Chunk drivers: up to 4 values, one per lane, loaded, taken into Montgomery form, squared
//! k times (or raised to per-lane exponents), taken out and stored. A missing value of a
//! short chunk is a zero lane (0² = 0, 0^e ≤ 1) and is not stored.
//!
//! Generic over [`Lanes`]; the AVX2 entry points below compile the same code with AVX2.

use super::lanes::Lanes;
use super::monty::{mul, redc, sqr, Ctx, Scratch};
use crate::batch::radix::{from_radix, to_radix, Params};
use num_bigint::BigUint;

/// Values per chunk: one per lane.
pub(crate) const LANES: usize = 4;

/// vals[i] ← vals[i]^(2^k) mod N for a chunk of at most 4 values below N.
#[inline(always)]
pub(crate) fn square_chunk<V: Lanes>(p: &Params, vals: &mut [BigUint], k: u64) {
    let ctx = Ctx::<V>::new(p);
    let mut s = Scratch::<V>::new(p.n);
    let mut x = load::<V>(&ctx, p, vals);
    mul(&ctx, &mut x, &ctx.splat(&p.r2), &mut s);
    for _ in 0..k {
        sqr(&ctx, &mut x, &mut s);
    }
    redc(&ctx, &mut x, &mut s);
    store(p, &x, vals);
}

/// out[i] ← bases[i]^exps[i] mod N for a chunk of at most 4 values, by fixed 4-bit windows
/// with a table per lane: every window squares all lanes 4 times, then multiplies each
/// lane by its own table entry (gathered lane by lane). A lane whose exponent is shorter
/// than the longest of the chunk reads leading zero digits, i.e. multiplies by one; a
/// window whose digits are all zero skips the product.
#[inline(always)]
pub(crate) fn pow_chunk<V: Lanes>(
    p: &Params,
    bases: &[BigUint],
    exps: &[BigUint],
    out: &mut [BigUint],
) {
    let ctx = Ctx::<V>::new(p);
    let mut s = Scratch::<V>::new(p.n);
    let mut base = load::<V>(&ctx, p, bases);
    mul(&ctx, &mut base, &ctx.splat(&p.r2), &mut s);
    let mut table: Vec<Vec<V>> = Vec::with_capacity(16);
    table.push(ctx.splat(&p.one));
    for e in 1..16 {
        let mut next = table[e - 1].clone();
        mul(&ctx, &mut next, &base, &mut s);
        table.push(next);
    }
    let windows = exps
        .iter()
        .map(BigUint::bits)
        .max()
        .unwrap_or(0)
        .div_ceil(4);
    let digits = |w: u64| -> [usize; LANES] {
        let mut d = [0; LANES];
        for (dl, e) in d.iter_mut().zip(exps) {
            *dl = nibble(e, w);
        }
        d
    };
    let mut acc = ctx.zeros();
    gather(&table, digits(windows.saturating_sub(1)), &mut acc);
    let mut y = ctx.zeros();
    for w in (0..windows.saturating_sub(1)).rev() {
        for _ in 0..4 {
            sqr(&ctx, &mut acc, &mut s);
        }
        let d = digits(w);
        if d.iter().any(|&x| x != 0) {
            gather(&table, d, &mut y);
            mul(&ctx, &mut acc, &y, &mut s);
        }
    }
    redc(&ctx, &mut acc, &mut s);
    store(p, &acc, out);
}

/// The 4-bit digit of `e` at window `w` (bits 4w .. 4w+3).
fn nibble(e: &BigUint, w: u64) -> usize {
    (0..4).fold(0, |acc, b| acc | (usize::from(e.bit(4 * w + b)) << b))
}

/// y ← in each lane l, that lane of table entry d[l].
#[inline(always)]
fn gather<V: Lanes>(table: &[Vec<V>], d: [usize; LANES], y: &mut [V]) {
    for (j, yj) in y.iter_mut().enumerate() {
        let mut lanes = [0u64; LANES];
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane = table[d[l]][j].to_lanes()[l];
        }
        *yj = V::from_lanes(lanes);
    }
}

/// The values into lanes, zeros past the end (and in the padding limbs).
#[inline(always)]
fn load<V: Lanes>(ctx: &Ctx<V>, p: &Params, vals: &[BigUint]) -> Vec<V> {
    let limbs: Vec<Vec<u64>> = vals.iter().map(|v| to_radix(v, p.n)).collect();
    let mut x = ctx.zeros();
    for (j, xj) in x.iter_mut().take(p.n).enumerate() {
        let mut lanes = [0u64; LANES];
        for (lane, v) in lanes.iter_mut().zip(&limbs) {
            *lane = v[j];
        }
        *xj = V::from_lanes(lanes);
    }
    x
}

/// The lanes back into values, fully reduced (the lanes hold values ≤ N after `redc`).
#[inline(always)]
fn store<V: Lanes>(p: &Params, x: &[V], vals: &mut [BigUint]) {
    let limbs: Vec<[u64; LANES]> = x[..p.n].iter().map(|v| v.to_lanes()).collect();
    for (l, out) in vals.iter_mut().enumerate() {
        let mut v = from_radix(limbs.iter().map(|limb| limb[l]));
        if v >= p.modulus {
            v -= &p.modulus;
        }
        *out = v;
    }
}

/// The same drivers compiled with AVX2.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use super::super::lanes::Avx2;
    use crate::batch::radix::Params;
    use num_bigint::BigUint;

    /// [`super::square_chunk`] on ymm registers. Call only where the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) fn square_chunk(p: &Params, vals: &mut [BigUint], k: u64) {
        super::square_chunk::<Avx2>(p, vals, k)
    }

    /// [`super::pow_chunk`] on ymm registers. Call only where the CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(crate) fn pow_chunk(p: &Params, bases: &[BigUint], exps: &[BigUint], out: &mut [BigUint]) {
        super::pow_chunk::<Avx2>(p, bases, exps, out)
    }
}
