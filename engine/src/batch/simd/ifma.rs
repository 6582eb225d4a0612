//! The AVX-512 IFMA kernel: 8 values per zmm register in radix 2^52.
//!
//! `vpmadd52luq` / `vpmadd52huq` add the low / high 52 bits of the 104-bit product of two
//! 52-bit digits to a 64-bit lane, so a Montgomery product is 4·D² of them for D digits (40
//! for 2048 bits, against 74 in the AVX2 kernel's radix 2^28), 8 values at a time.
//!
//! The product is operand scanning with lazy carries: row i adds a·b[i] and m[i]·N to the
//! accumulator digits i .. i+D (each digit of the product split into its low half at its column
//! and its high half at the next), with m[i] chosen so that column i becomes 0 mod 2^52 and its
//! carry moves to column i+1. A column receives at most 4·D halves below 2^52 (4·40·2^52 <
//! 2^60), so the lanes never overflow, and the carries are propagated once at the end.
//! R = 2^(52·D) > 4N: inputs below 2N give outputs below 2N, as in the AVX2 kernel.
//!
//! Generic over [`Lanes8`]: [`Portable8`] runs the same steps on `[u64; 8]` (the tests compare
//! it with the oracle on any CPU, and the zmm code with it where the CPU has IFMA).

use crate::batch::radix::{from_digits, to_digits, Params};
use crate::error::Result;
use crate::group::Modulus;
use num_bigint::BigUint;

/// Bits per digit.
const BITS: u32 = 52;
const MASK: u64 = (1 << BITS) - 1;
/// Values per chunk: one per lane.
pub(crate) const LANES: usize = 8;
/// Digits for the largest modulus (2078 bits, with the two bits of headroom R > 4N needs).
const MAX_DIGITS: usize = 40;

/// A modulus in radix 2^52.
pub(crate) type Params52 = Params;

/// The modulus in radix 2^52 (at most 2078 bits).
pub(crate) fn params52(modulus: &Modulus) -> Result<Params52> {
    Params::with_radix(modulus, "simd (avx512ifma)", BITS, MAX_DIGITS)
}

/// Eight independent 64-bit lanes and the operations the product needs, lane by lane.
pub(crate) trait Lanes8: Copy {
    fn zero() -> Self;
    fn splat(v: u64) -> Self;
    fn from_lanes(v: [u64; LANES]) -> Self;
    fn to_lanes(self) -> [u64; LANES];
    /// Wrapping addition.
    fn add(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    /// Logical shift right by 52.
    fn shr52(self) -> Self;
    /// self + the low 52 bits of (a mod 2^52)·(b mod 2^52) (`vpmadd52luq`).
    fn madd_lo(self, a: Self, b: Self) -> Self;
    /// self + the high 52 bits of (a mod 2^52)·(b mod 2^52) (`vpmadd52huq`).
    fn madd_hi(self, a: Self, b: Self) -> Self;
}

/// The portable twin (for the tests: a CPU without IFMA runs the radix 2^28 kernels).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Portable8([u64; LANES]);

#[cfg(test)]
impl Portable8 {
    #[inline(always)]
    fn product(a: u64, b: u64) -> u128 {
        u128::from(a & MASK) * u128::from(b & MASK)
    }
}

#[cfg(test)]
impl Lanes8 for Portable8 {
    #[inline(always)]
    fn zero() -> Self {
        Self([0; LANES])
    }
    #[inline(always)]
    fn splat(v: u64) -> Self {
        Self([v; LANES])
    }
    #[inline(always)]
    fn from_lanes(v: [u64; LANES]) -> Self {
        Self(v)
    }
    #[inline(always)]
    fn to_lanes(self) -> [u64; LANES] {
        self.0
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l].wrapping_add(o.0[l])))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] & o.0[l]))
    }
    #[inline(always)]
    fn shr52(self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] >> BITS))
    }
    #[inline(always)]
    fn madd_lo(self, a: Self, b: Self) -> Self {
        Self(std::array::from_fn(|l| {
            let lo = Self::product(a.0[l], b.0[l]) as u64 & MASK;
            self.0[l].wrapping_add(lo)
        }))
    }
    #[inline(always)]
    fn madd_hi(self, a: Self, b: Self) -> Self {
        Self(std::array::from_fn(|l| {
            let hi = (Self::product(a.0[l], b.0[l]) >> BITS) as u64;
            self.0[l].wrapping_add(hi)
        }))
    }
}

/// The modulus as lanes, and scratch space for the accumulator.
struct Ctx<V> {
    n: usize,
    m: Vec<V>,
    m0inv: V,
    mask: V,
    t: Vec<V>,
    /// A copy of the operand of a squaring (`mul` reads both factors until its last loop).
    sq: Vec<V>,
}

impl<V: Lanes8> Ctx<V> {
    #[inline(always)]
    fn new(p: &Params52) -> Self {
        Self {
            n: p.n,
            m: p.m.iter().map(|&d| V::splat(d)).collect(),
            m0inv: V::splat(p.m0inv),
            mask: V::splat(MASK),
            t: vec![V::zero(); 2 * p.n + 1],
            sq: vec![V::zero(); p.n],
        }
    }

    /// a ← a²·R⁻¹ mod N, without allocating.
    #[inline(always)]
    fn sqr(&mut self, a: &mut [V]) {
        let mut sq = std::mem::take(&mut self.sq);
        sq.copy_from_slice(a);
        self.mul(a, &sq);
        self.sq = sq;
    }

    /// a ← a·b·R⁻¹ mod N (below 2N, digits below 2^52), a and b below 2N.
    #[inline(always)]
    fn mul(&mut self, a: &mut [V], b: &[V]) {
        let n = self.n;
        let t = &mut self.t;
        t.fill(V::zero());
        for i in 0..n {
            let bi = b[i];
            let row = &mut t[i..=i + n];
            for j in 0..n {
                row[j] = row[j].madd_lo(a[j], bi);
                row[j + 1] = row[j + 1].madd_hi(a[j], bi);
            }
            let q = V::zero().madd_lo(row[0], self.m0inv);
            for j in 0..n {
                row[j] = row[j].madd_lo(q, self.m[j]);
                row[j + 1] = row[j + 1].madd_hi(q, self.m[j]);
            }
            // Column i is now 0 mod 2^52: only its carry is left.
            row[1] = row[1].add(row[0].shr52());
        }
        // Propagate the carries through columns n .. 2n; the value is below 2N < R, so
        // nothing is left above digit n − 1.
        let mut carry = V::zero();
        for (j, aj) in a.iter_mut().enumerate().take(n) {
            let v = t[n + j].add(carry);
            *aj = v.and(self.mask);
            carry = v.shr52();
        }
    }
}

/// vals[i] ← vals[i]^(2^k) mod N for a chunk of at most 8 values below N.
#[inline(always)]
pub(crate) fn square_chunk<V: Lanes8>(p: &Params52, vals: &mut [BigUint], k: u64) {
    let mut ctx = Ctx::<V>::new(p);
    let mut x = load::<V>(p, vals);
    let r2: Vec<V> = p.r2.iter().map(|&d| V::splat(d)).collect();
    ctx.mul(&mut x, &r2);
    for _ in 0..k {
        ctx.sqr(&mut x);
    }
    out_of_montgomery(&mut ctx, &mut x);
    store(p, &x, vals);
}

/// out[i] ← bases[i]^exps[i] mod N for a chunk of at most 8 values, left to right, one bit at
/// a time: every bit squares all lanes, then lanes whose bit is set take the product with their
/// base (a bit clear in every lane skips the product). Exponents are public.
#[inline(always)]
pub(crate) fn pow_chunk<V: Lanes8>(
    p: &Params52,
    bases: &[BigUint],
    exps: &[BigUint],
    out: &mut [BigUint],
) {
    let mut ctx = Ctx::<V>::new(p);
    let mut base = load::<V>(p, bases);
    let r2: Vec<V> = p.r2.iter().map(|&d| V::splat(d)).collect();
    ctx.mul(&mut base, &r2);
    // acc = 1 in Montgomery form: R mod N, the product of R² with 1.
    let mut acc: Vec<V> = (0..p.n).map(|j| V::splat(u64::from(j == 0))).collect();
    ctx.mul(&mut acc, &r2);
    let bits = exps.iter().map(BigUint::bits).max().unwrap_or(0);
    for b in (0..bits).rev() {
        ctx.sqr(&mut acc);
        let take: [bool; LANES] = std::array::from_fn(|l| exps.get(l).is_some_and(|e| e.bit(b)));
        if take.iter().any(|&t| t) {
            let mut prod = acc.clone();
            ctx.mul(&mut prod, &base);
            for (a, q) in acc.iter_mut().zip(&prod) {
                let (al, ql) = (a.to_lanes(), q.to_lanes());
                *a = V::from_lanes(std::array::from_fn(|l| if take[l] { ql[l] } else { al[l] }));
            }
        }
    }
    out_of_montgomery(&mut ctx, &mut acc);
    store(p, &acc, out);
}

/// x ← x·R⁻¹ mod N: the product with 1, at most N (below N unless x ≡ 0).
#[inline(always)]
fn out_of_montgomery<V: Lanes8>(ctx: &mut Ctx<V>, x: &mut [V]) {
    let one: Vec<V> = (0..x.len()).map(|j| V::splat(u64::from(j == 0))).collect();
    ctx.mul(x, &one);
}

/// The values into lanes, zeros past the end.
#[inline(always)]
fn load<V: Lanes8>(p: &Params52, vals: &[BigUint]) -> Vec<V> {
    let digits: Vec<Vec<u64>> = vals.iter().map(|v| to_digits(v, p.n, BITS)).collect();
    (0..p.n)
        .map(|j| V::from_lanes(std::array::from_fn(|l| digits.get(l).map_or(0, |d| d[j]))))
        .collect()
}

/// The lanes back into values, fully reduced.
#[inline(always)]
fn store<V: Lanes8>(p: &Params52, x: &[V], vals: &mut [BigUint]) {
    let lanes: Vec<[u64; LANES]> = x.iter().map(|v| v.to_lanes()).collect();
    for (l, out) in vals.iter_mut().enumerate() {
        let mut v = from_digits(lanes.iter().map(|d| d[l]), BITS);
        if v >= p.modulus {
            v -= &p.modulus;
        }
        *out = v;
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use zmm::{pow_chunk_avx512, square_chunk_avx512};

#[cfg(target_arch = "x86_64")]
mod zmm {
    use super::{Lanes8, Params52, LANES};
    use num_bigint::BigUint;
    use std::arch::x86_64::*;

    /// Eight lanes in one zmm register. Values of this type exist only inside the two entry
    /// points below, `#[target_feature(enable = "avx512f,avx512ifma")]` functions reached only
    /// after `is_x86_feature_detected!("avx512ifma")` held; every method is
    /// `#[inline(always)]`, so it is compiled into them with those features enabled.
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub(crate) struct Zmm(__m512i);

    // SAFETY (all the `unsafe` blocks below): the intrinsics need AVX-512F and IFMA, which the
    // CPU has wherever a `Zmm` is used (see the type's comment); loads and stores go through
    // references to `[u64; 8]`, valid for 64 bytes.
    impl Lanes8 for Zmm {
        #[inline(always)]
        fn zero() -> Self {
            Self(unsafe { _mm512_setzero_si512() })
        }
        #[inline(always)]
        fn splat(v: u64) -> Self {
            Self(unsafe { _mm512_set1_epi64(v as i64) })
        }
        #[inline(always)]
        fn from_lanes(v: [u64; LANES]) -> Self {
            Self(unsafe { _mm512_loadu_si512(v.as_ptr().cast()) })
        }
        #[inline(always)]
        fn to_lanes(self) -> [u64; LANES] {
            let mut out = [0u64; LANES];
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) };
            out
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Self(unsafe { _mm512_add_epi64(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Self(unsafe { _mm512_and_si512(self.0, o.0) })
        }
        #[inline(always)]
        fn shr52(self) -> Self {
            Self(unsafe { _mm512_srli_epi64::<52>(self.0) })
        }
        #[inline(always)]
        fn madd_lo(self, a: Self, b: Self) -> Self {
            Self(unsafe { _mm512_madd52lo_epu64(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn madd_hi(self, a: Self, b: Self) -> Self {
            Self(unsafe { _mm512_madd52hi_epu64(self.0, a.0, b.0) })
        }
    }

    /// [`super::square_chunk`] on zmm registers. Call only where the CPU has AVX-512 IFMA.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn square_chunk_avx512(p: &Params52, vals: &mut [BigUint], k: u64) {
        super::square_chunk::<Zmm>(p, vals, k)
    }

    /// [`super::pow_chunk`] on zmm registers. Call only where the CPU has AVX-512 IFMA.
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub(crate) fn pow_chunk_avx512(
        p: &Params52,
        bases: &[BigUint],
        exps: &[BigUint],
        out: &mut [BigUint],
    ) {
        super::pow_chunk::<Zmm>(p, bases, exps, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{reference_pow_many, reference_square_many};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn random_odd(rng: &mut StdRng, bits: u64) -> Modulus {
        let mut n = BigUint::from(1u8) << (bits - 1);
        n += BigUint::from_bytes_le(&(0..bits / 8).map(|_| rng.gen()).collect::<Vec<u8>>())
            % (BigUint::from(1u8) << (bits - 2));
        n |= BigUint::from(1u8);
        Modulus::new("ifma test", n).expect("odd modulus")
    }

    fn values(rng: &mut StdRng, m: &Modulus, count: usize) -> Vec<BigUint> {
        let mut xs: Vec<BigUint> = (0..count)
            .map(|_| {
                let bytes: Vec<u8> = (0..m.bits().div_ceil(8)).map(|_| rng.gen()).collect();
                BigUint::from_bytes_le(&bytes) % m.n()
            })
            .collect();
        // Edge values: 0, 1 and N − 1.
        xs[0] = BigUint::default();
        if count > 2 {
            xs[1] = BigUint::from(1u8);
            xs[2] = m.n() - 1u8;
        }
        xs
    }

    /// Squares and powers through `square`/`pow` equal the oracles on several sizes.
    fn check(
        square: impl Fn(&Params52, &mut [BigUint], u64),
        pow: impl Fn(&Params52, &[BigUint], &[BigUint], &mut [BigUint]),
    ) {
        let mut rng = StdRng::seed_from_u64(52);
        for bits in [64u64, 100, 521, 1024, 2047, 2048] {
            let m = random_odd(&mut rng, bits);
            let p = params52(&m).expect("params");
            for (count, k) in [(1usize, 0u64), (3, 1), (8, 13), (5, 40)] {
                let xs = values(&mut rng, &m, count);
                let mut got = xs.clone();
                square(&p, &mut got, k);
                assert_eq!(got, reference_square_many(&m, &xs, k), "{bits} bits, k {k}");
                let exps: Vec<BigUint> = (0..count)
                    .map(|i| BigUint::from(rng.gen::<u64>() >> (i * 7)))
                    .collect();
                let mut out = vec![BigUint::default(); count];
                pow(&p, &xs, &exps, &mut out);
                assert_eq!(out, reference_pow_many(&m, &xs, &exps), "{bits} bits, pow");
            }
        }
    }

    #[test]
    fn portable_twin_equals_the_oracles() {
        check(square_chunk::<Portable8>, pow_chunk::<Portable8>);
    }

    /// Runs where the CPU has AVX-512 IFMA (not on the 2-core CI machines, which lack it).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512ifma_equals_the_oracles_where_the_cpu_has_it() {
        if !std::arch::is_x86_feature_detected!("avx512ifma") {
            return;
        }
        // SAFETY: the CPU has AVX-512 IFMA (checked just above).
        check(
            |p, v, k| unsafe { square_chunk_avx512(p, v, k) },
            |p, b, e, o| unsafe { pow_chunk_avx512(p, b, e, o) },
        );
    }
}
