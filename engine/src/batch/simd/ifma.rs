//! The AVX-512 IFMA kernels: 16 values in two zmm registers (`avx512ifma`) or 8 in two ymm
//! registers (`avx512ifma-256`), in radix 2^52.
//!
//! `vpmadd52luq` / `vpmadd52huq` add the low / high 52 bits of the 104-bit product of two
//! 52-bit digits to a 64-bit lane. A 2048-bit number is n = 40 digits; a squaring is
//! n(n+1)/2 = 820 digit products for the square (each cross product once, its column doubled)
//! and n² = 1,600 for the Montgomery reduction, two IFMAs each: 4,840 per squaring of a
//! vector of values.
//!
//! Columns go in blocks of 4 ([`Block`]): the block's sums stay in registers while the rows
//! pass through it, each row one digit x_i against a window of 4 digits of the other operand
//! that slides down one digit per row, so a row is 2 loads for 8 products; low halves and
//! high halves are summed in separate registers so that no register takes two IFMAs per row.
//! The product and the reduction are two passes over the 2n columns (product scanning); a
//! reduction block works out its own 4 q's in turn after the rows of the earlier q's, so the
//! chain from one q to the next overlaps the next block's rows. Numbers are padded with zero
//! digits on both sides so that the triangles at the ends of a block need no special case,
//! and n is rounded up to a multiple of 4. Columns never carry until their block is done: a
//! column receives at most about 4n halves below 2^52 (4·40·2^52 < 2^60). R = 2^(52·n) > 4N:
//! inputs below 2N give outputs below 2N, with no subtraction.
//!
//! Why two registers per digit: the q chain and the carries are sequential, and one vector's
//! work per row is too little to cover their latency; two vectors in step (a [`Wide`]) double
//! the independent work. Four do not fit the 32 registers (docs/PERFORMANCE.md has the figures).
//!
//! Generic over [`Lanes52`]: [`Portable`] runs the same steps on plain arrays (the tests compare
//! it with the oracle on any CPU, and the vector code with it where the CPU has IFMA).

use crate::batch::radix::{from_digits, to_digits, Params};
use crate::error::Result;
use crate::group::Modulus;
use num_bigint::BigUint;

/// Bits per digit.
const BITS: u32 = 52;
const MASK: u64 = (1 << BITS) - 1;
/// Digits for the largest modulus (2078 bits, with the two bits of headroom R > 4N needs).
const MAX_DIGITS: usize = 40;

/// A modulus in radix 2^52.
pub(crate) type Params52 = Params;

/// The modulus in radix 2^52 (at most 2078 bits).
pub(crate) fn params52(modulus: &Modulus) -> Result<Params52> {
    Params::with_radix(modulus, "simd (avx512ifma)", BITS, MAX_DIGITS, BLOCK)
}

/// Independent 64-bit lanes and the operations the product needs, lane by lane.
pub(crate) trait Lanes52: Copy {
    /// Lanes, i.e. values per chunk.
    const LANES: usize;
    fn zero() -> Self;
    fn splat(v: u64) -> Self;
    /// Lane l from v[l]; v holds `LANES` values.
    fn load(v: &[u64]) -> Self;
    /// Lane l into out[l]; out holds `LANES` values.
    fn store(self, out: &mut [u64]);
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

/// K vectors side by side, each operation applied to each: a chunk of K·LANES values whose
/// dependency chains (the q's, the carries) advance together, so that one vector's work fills
/// the latency of the other's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wide<V, const K: usize>([V; K]);

impl<V: Lanes52, const K: usize> Wide<V, K> {
    #[inline(always)]
    fn map2(mut self, o: Self, f: impl Fn(V, V) -> V) -> Self {
        for i in 0..K {
            self.0[i] = f(self.0[i], o.0[i]);
        }
        self
    }
}

impl<V: Lanes52, const K: usize> Lanes52 for Wide<V, K> {
    const LANES: usize = K * V::LANES;
    #[inline(always)]
    fn zero() -> Self {
        Self([V::zero(); K])
    }
    #[inline(always)]
    fn splat(v: u64) -> Self {
        Self([V::splat(v); K])
    }
    #[inline(always)]
    fn load(v: &[u64]) -> Self {
        let mut out = Self::zero();
        for (o, part) in out.0.iter_mut().zip(v.chunks_exact(V::LANES)) {
            *o = V::load(part);
        }
        out
    }
    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        for (v, part) in self.0.iter().zip(out.chunks_exact_mut(V::LANES)) {
            v.store(part);
        }
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self.map2(o, V::add)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self.map2(o, V::and)
    }
    #[inline(always)]
    fn shr52(mut self) -> Self {
        for i in 0..K {
            self.0[i] = self.0[i].shr52();
        }
        self
    }
    #[inline(always)]
    fn madd_lo(mut self, a: Self, b: Self) -> Self {
        for i in 0..K {
            self.0[i] = self.0[i].madd_lo(a.0[i], b.0[i]);
        }
        self
    }
    #[inline(always)]
    fn madd_hi(mut self, a: Self, b: Self) -> Self {
        for i in 0..K {
            self.0[i] = self.0[i].madd_hi(a.0[i], b.0[i]);
        }
        self
    }
}

/// The portable twin (for the tests: a CPU without IFMA runs the radix 2^28 kernels).
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Portable<const L: usize>([u64; L]);

#[cfg(test)]
impl<const L: usize> Portable<L> {
    fn product(a: u64, b: u64) -> u128 {
        u128::from(a & MASK) * u128::from(b & MASK)
    }
}

#[cfg(test)]
impl<const L: usize> Lanes52 for Portable<L> {
    const LANES: usize = L;
    fn zero() -> Self {
        Self([0; L])
    }
    fn splat(v: u64) -> Self {
        Self([v; L])
    }
    fn load(v: &[u64]) -> Self {
        Self(std::array::from_fn(|l| v[l]))
    }
    fn store(self, out: &mut [u64]) {
        out[..L].copy_from_slice(&self.0);
    }
    fn add(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l].wrapping_add(o.0[l])))
    }
    fn and(self, o: Self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] & o.0[l]))
    }
    fn shr52(self) -> Self {
        Self(std::array::from_fn(|l| self.0[l] >> BITS))
    }
    fn madd_lo(self, a: Self, b: Self) -> Self {
        Self(std::array::from_fn(|l| {
            let lo = Self::product(a.0[l], b.0[l]) as u64 & MASK;
            self.0[l].wrapping_add(lo)
        }))
    }
    fn madd_hi(self, a: Self, b: Self) -> Self {
        Self(std::array::from_fn(|l| {
            let hi = (Self::product(a.0[l], b.0[l]) >> BITS) as u64;
            self.0[l].wrapping_add(hi)
        }))
    }
}

/// Columns per block: a block's sums stay in registers while the rows pass through it.
const BLOCK: usize = 4;
/// Zero digits on each side of a number in a [`Ctx`]: a block reads its window up to 3 digits
/// past either end, so that edge rows need no special case.
const PAD: usize = BLOCK;

/// The sums of a block of 4 columns c .. c+3: lo[u] holds the low halves at column c+u, hi[u]
/// the high halves at column c+u+1 (hi[3] belongs to the next block). Kept apart so that each
/// register takes one IFMA per row, which the next row waits for 4 cycles later.
struct Block<V> {
    lo: [V; BLOCK],
    hi: [V; BLOCK],
}

impl<V: Lanes52> Block<V> {
    #[inline(always)]
    fn new(lo: [V; BLOCK]) -> Self {
        Self {
            lo,
            hi: [V::zero(); BLOCK],
        }
    }

    /// Adds x·y at column c+u (u < 4): low half there, high half at the next column.
    #[inline(always)]
    fn add_product(&mut self, u: usize, x: V, y: V) {
        self.lo[u] = self.lo[u].madd_lo(x, y);
        self.hi[u] = self.hi[u].madd_hi(x, y);
    }

    /// Column c+u: its low halves and the high halves from column c+u−1 (`carried` for u = 0).
    #[inline(always)]
    fn column(&self, u: usize, carried: V) -> V {
        self.lo[u].add(if u == 0 { carried } else { self.hi[u - 1] })
    }

    /// Adds rows i0 .. i1 of the block at column c: x_i·y_(c+u−i) for u in 0..4. `xp` and `yp`
    /// are padded (digit j at j + PAD); the window of y slides down one digit per row, so a
    /// row loads two vectors for its eight products.
    #[inline(always)]
    fn add_rows(&mut self, xp: &[V], yp: &[V], c: usize, i0: usize, i1: usize) {
        if i0 >= i1 {
            return;
        }
        let top = c + PAD - i0;
        let mut w = [V::zero(); BLOCK];
        w.copy_from_slice(&yp[top..top + BLOCK]);
        let below = yp[top - (i1 - i0)..top].iter().rev();
        for (&x, &y) in xp[i0 + PAD..i1 + PAD].iter().zip(below) {
            for (u, &wu) in w.iter().enumerate() {
                self.add_product(u, x, wu);
            }
            for u in (1..BLOCK).rev() {
                w[u] = w[u - 1];
            }
            w[0] = y;
        }
    }
}

/// The modulus as lanes, and the scratch space of a product. Numbers are padded: n digits
/// with PAD zero digits before and after, digit j at index j + PAD.
struct Ctx<V> {
    n: usize,
    m: Vec<V>,
    m0inv: V,
    mask: V,
    /// The 2n columns of a product before its reduction (not padded).
    t: Vec<V>,
    /// The reduction's multipliers q_0 .. q_(n−1), padded.
    q: Vec<V>,
}

impl<V: Lanes52> Ctx<V> {
    #[inline(always)]
    fn new(p: &Params52) -> Self {
        Self {
            n: p.n,
            m: padded(p.m.iter().map(|&d| V::splat(d)), p.n),
            m0inv: V::splat(p.m0inv),
            mask: V::splat(MASK),
            t: vec![V::zero(); 2 * p.n],
            q: vec![V::zero(); p.n + 2 * PAD],
        }
    }

    /// a ← a²·R⁻¹ mod N (below 2N, digits below 2^52), a below 2N and padded.
    #[inline(always)]
    fn sqr(&mut self, a: &mut [V]) {
        self.square_columns(a);
        self.reduce(&mut a[PAD..PAD + self.n]);
    }

    /// a ← a·b·R⁻¹ mod N (below 2N, digits below 2^52), a and b below 2N and padded.
    #[inline(always)]
    fn mul(&mut self, a: &mut [V], b: &[V]) {
        self.product_columns(a, b);
        self.reduce(&mut a[PAD..PAD + self.n]);
    }

    /// a ← a·R⁻¹ mod N, at most N (N only for a ≡ 0): out of Montgomery form.
    #[inline(always)]
    fn leave(&mut self, a: &mut [V]) {
        let n = self.n;
        self.t[..n].copy_from_slice(&a[PAD..PAD + n]);
        self.t[n..].fill(V::zero());
        self.reduce(&mut a[PAD..PAD + n]);
    }

    /// t ← the columns of a², a block of 4 at a time: each cross product a_i·a_j (i < j)
    /// once, the sums doubled, then the squares of the diagonal. In the block at column c the
    /// rows i < c/2 are whole; rows c/2 and c/2 + 1 keep the products with j > i.
    #[inline(always)]
    fn square_columns(&mut self, a: &[V]) {
        let n = self.n;
        let mut spill = V::zero();
        for c in (0..2 * n).step_by(BLOCK) {
            let half = c / 2;
            let mut b = Block::new(first_column(spill));
            b.add_rows(a, a, c, (c + 1).saturating_sub(n), half);
            // Rows half + r: the products with j > i, then the square of the diagonal.
            for r in 0..BLOCK / 2 {
                let d = a[PAD + half + r];
                for u in 2 * r + 1..BLOCK {
                    b.add_product(u, d, a[PAD + c + u - half - r]);
                }
            }
            spill = b.hi[BLOCK - 1];
            for u in 0..BLOCK {
                let d = a[PAD + half + u / 2];
                let column = twice(b.column(u, V::zero()));
                self.t[c + u] = if u % 2 == 0 {
                    column.madd_lo(d, d)
                } else {
                    column.madd_hi(d, d)
                };
            }
        }
    }

    /// t ← the columns of a·b, a block of 4 at a time.
    #[inline(always)]
    fn product_columns(&mut self, a: &[V], b: &[V]) {
        let n = self.n;
        let mut spill = V::zero();
        for c in (0..2 * n).step_by(BLOCK) {
            let mut blk = Block::new(first_column(spill));
            blk.add_rows(a, b, c, (c + 1).saturating_sub(n), n.min(c + BLOCK));
            for u in 0..BLOCK {
                self.t[c + u] = blk.column(u, V::zero());
            }
            spill = blk.hi[BLOCK - 1];
        }
    }

    /// out ← t·R⁻¹ mod N, digits normalised, a block of 4 columns at a time. A block below
    /// column n adds q_i·N for the q's of earlier blocks, then works out its own 4 q's in turn
    /// (each makes its column 0 mod 2^52 and carries the rest); the blocks from column n on
    /// are the result. A block's rows do not wait for the previous block's q chain until its
    /// last 4 rows, so that chain overlaps the next block's work.
    #[inline(always)]
    fn reduce(&mut self, out: &mut [V]) {
        let n = self.n;
        let m0 = self.m[PAD];
        let mut carry = V::zero();
        for c in (0..n).step_by(BLOCK) {
            let mut lo = [V::zero(); BLOCK];
            lo.copy_from_slice(&self.t[c..c + BLOCK]);
            let mut b = Block::new(lo);
            b.add_rows(&self.q, &self.m, c, 0, c);
            for r in 0..BLOCK {
                let column = b.column(r, V::zero()).add(carry);
                let q = V::zero().madd_lo(column, self.m0inv);
                carry = column.madd_lo(q, m0).shr52();
                b.hi[r] = b.hi[r].madd_hi(q, m0);
                for u in r + 1..BLOCK {
                    b.add_product(u, q, self.m[PAD + u - r]);
                }
                self.q[PAD + c + r] = q;
            }
            carry = carry.add(b.hi[BLOCK - 1]);
        }
        for c in (n..2 * n).step_by(BLOCK) {
            let mut lo = [V::zero(); BLOCK];
            lo.copy_from_slice(&self.t[c..c + BLOCK]);
            let mut b = Block::new(lo);
            b.add_rows(&self.q, &self.m, c, c + 1 - n, n);
            for u in 0..BLOCK {
                let column = b.column(u, V::zero()).add(carry);
                out[c - n + u] = column.and(self.mask);
                carry = column.shr52();
            }
            carry = carry.add(b.hi[BLOCK - 1]);
        }
    }
}

/// A block's low sums: `v` at its first column, zeros at the others.
#[inline(always)]
fn first_column<V: Lanes52>(v: V) -> [V; BLOCK] {
    let mut out = [V::zero(); BLOCK];
    out[0] = v;
    out
}

#[inline(always)]
fn twice<V: Lanes52>(v: V) -> V {
    v.add(v)
}

/// n digits, padded with PAD zeros on each side.
#[inline(always)]
fn padded<V: Lanes52>(digits: impl Iterator<Item = V>, n: usize) -> Vec<V> {
    let mut out = vec![V::zero(); n + 2 * PAD];
    for (o, d) in out[PAD..PAD + n].iter_mut().zip(digits) {
        *o = d;
    }
    out
}

/// vals[i] ← vals[i]^(2^k) mod N for a chunk of at most `V::LANES` values below N.
#[inline(always)]
pub(crate) fn square_chunk<V: Lanes52>(p: &Params52, vals: &mut [BigUint], k: u64) {
    let mut ctx = Ctx::<V>::new(p);
    let mut x = load::<V>(p, vals);
    let r2 = padded(p.r2.iter().map(|&d| V::splat(d)), p.n);
    ctx.mul(&mut x, &r2);
    for _ in 0..k {
        ctx.sqr(&mut x);
    }
    ctx.leave(&mut x);
    store(p, &x, vals);
}

/// Bits per window of an exponentiation.
const WINDOW: u64 = 4;

/// out[i] ← bases[i]^exps[i] mod N for a chunk of at most `V::LANES` values, by fixed 4-bit
/// windows with a table per lane: every window squares all lanes 4 times, then multiplies
/// each lane by its own table entry (gathered lane by lane). A lane whose exponent is shorter
/// than the longest of the chunk reads leading zero digits, i.e. multiplies by one; a window
/// whose digits are all zero skips the product. Exponents are public.
#[inline(always)]
pub(crate) fn pow_chunk<V: Lanes52>(
    p: &Params52,
    bases: &[BigUint],
    exps: &[BigUint],
    out: &mut [BigUint],
) {
    let mut ctx = Ctx::<V>::new(p);
    let mut base = load::<V>(p, bases);
    let r2 = padded(p.r2.iter().map(|&d| V::splat(d)), p.n);
    ctx.mul(&mut base, &r2);
    // table[e] = base^e in Montgomery form, as lanes (padded); table[0] = R mod N.
    let mut power = padded(p.one.iter().map(|&d| V::splat(d)), p.n);
    let mut table: Vec<Vec<u64>> = vec![lanes_of(&power)];
    for _ in 1..1 << WINDOW {
        ctx.mul(&mut power, &base);
        table.push(lanes_of(&power));
    }
    let windows = exps
        .iter()
        .map(BigUint::bits)
        .max()
        .unwrap_or(0)
        .div_ceil(WINDOW);
    let digits = |w: u64| -> Vec<usize> {
        (0..V::LANES)
            .map(|l| {
                exps.get(l).map_or(0, |e| {
                    (0..WINDOW).fold(0, |d, b| d | usize::from(e.bit(WINDOW * w + b)) << b)
                })
            })
            .collect()
    };
    let mut acc = gather::<V>(&table, &digits(windows.saturating_sub(1)));
    for w in (0..windows.saturating_sub(1)).rev() {
        for _ in 0..WINDOW {
            ctx.sqr(&mut acc);
        }
        let d = digits(w);
        if d.iter().any(|&x| x != 0) {
            let y = gather::<V>(&table, &d);
            ctx.mul(&mut acc, &y);
        }
    }
    ctx.leave(&mut acc);
    store(p, &acc, out);
}

/// Digit j of lane l at [j·LANES + l].
#[inline(always)]
fn lanes_of<V: Lanes52>(x: &[V]) -> Vec<u64> {
    let mut out = vec![0; x.len() * V::LANES];
    for (v, part) in x.iter().zip(out.chunks_exact_mut(V::LANES)) {
        v.store(part);
    }
    out
}

/// In each lane l, that lane of table entry d[l].
#[inline(always)]
fn gather<V: Lanes52>(table: &[Vec<u64>], d: &[usize]) -> Vec<V> {
    let digits = table[0].len() / V::LANES;
    let mut lanes = vec![0; V::LANES];
    (0..digits)
        .map(|j| {
            for (l, lane) in lanes.iter_mut().enumerate() {
                *lane = table[d[l]][j * V::LANES + l];
            }
            V::load(&lanes)
        })
        .collect()
}

/// The values into lanes, zeros past the end, padded.
#[inline(always)]
fn load<V: Lanes52>(p: &Params52, vals: &[BigUint]) -> Vec<V> {
    let mut lanes = vec![0; p.n * V::LANES];
    for (l, v) in vals.iter().enumerate() {
        for (j, d) in to_digits(v, p.n, BITS).into_iter().enumerate() {
            lanes[j * V::LANES + l] = d;
        }
    }
    padded(lanes.chunks_exact(V::LANES).map(V::load), p.n)
}

/// The lanes of a padded number back into values, fully reduced.
#[inline(always)]
fn store<V: Lanes52>(p: &Params52, x: &[V], vals: &mut [BigUint]) {
    let lanes = lanes_of(&x[PAD..PAD + p.n]);
    for (l, out) in vals.iter_mut().enumerate() {
        let mut v = from_digits(lanes.iter().skip(l).step_by(V::LANES).copied(), BITS);
        if v >= p.modulus {
            v -= &p.modulus;
        }
        *out = v;
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    //! The vector types, and the entry points that compile the generic kernel for them with
    //! AVX-512 IFMA enabled.
    //!
    //! Values of [`Zmm`] and [`Ymm`] exist only inside the entry points below,
    //! `#[target_feature(enable = "avx512f,avx512vl,avx512ifma")]` functions reached only
    //! after `is_x86_feature_detected!` held for those features; every method is
    //! `#[inline(always)]`, so it is compiled into them with the features enabled.

    use super::{Lanes52, Params52, Wide};
    use num_bigint::BigUint;
    use std::arch::x86_64::*;

    /// Eight lanes in one zmm register.
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub(crate) struct Zmm(__m512i);

    /// Four lanes in one ymm register (AVX-512VL's 256-bit IFMA).
    #[derive(Clone, Copy, Debug)]
    #[repr(transparent)]
    pub(crate) struct Ymm(__m256i);

    // SAFETY (all the `unsafe` blocks below): the intrinsics need AVX-512F, VL and IFMA, which
    // the CPU has wherever these types are used (see the module's comment); loads and stores
    // go through slices of at least LANES u64s (checked by the slicing), valid for 64 or 32
    // bytes.
    impl Lanes52 for Zmm {
        const LANES: usize = 8;
        #[inline(always)]
        fn zero() -> Self {
            Self(unsafe { _mm512_setzero_si512() })
        }
        #[inline(always)]
        fn splat(v: u64) -> Self {
            Self(unsafe { _mm512_set1_epi64(v as i64) })
        }
        #[inline(always)]
        fn load(v: &[u64]) -> Self {
            let v = &v[..Self::LANES];
            Self(unsafe { _mm512_loadu_si512(v.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u64]) {
            let out = &mut out[..Self::LANES];
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) };
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

    impl Lanes52 for Ymm {
        const LANES: usize = 4;
        #[inline(always)]
        fn zero() -> Self {
            Self(unsafe { _mm256_setzero_si256() })
        }
        #[inline(always)]
        fn splat(v: u64) -> Self {
            Self(unsafe { _mm256_set1_epi64x(v as i64) })
        }
        #[inline(always)]
        fn load(v: &[u64]) -> Self {
            let v = &v[..Self::LANES];
            Self(unsafe { _mm256_loadu_si256(v.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, out: &mut [u64]) {
            let out = &mut out[..Self::LANES];
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) };
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            Self(unsafe { _mm256_add_epi64(self.0, o.0) })
        }
        #[inline(always)]
        fn and(self, o: Self) -> Self {
            Self(unsafe { _mm256_and_si256(self.0, o.0) })
        }
        #[inline(always)]
        fn shr52(self) -> Self {
            Self(unsafe { _mm256_srli_epi64::<52>(self.0) })
        }
        #[inline(always)]
        fn madd_lo(self, a: Self, b: Self) -> Self {
            Self(unsafe { _mm256_madd52lo_epu64(self.0, a.0, b.0) })
        }
        #[inline(always)]
        fn madd_hi(self, a: Self, b: Self) -> Self {
            Self(unsafe { _mm256_madd52hi_epu64(self.0, a.0, b.0) })
        }
    }

    /// Entry points for one lane type: `$square` and `$pow` compile [`super::square_chunk`]
    /// and [`super::pow_chunk`] for `$v`. Call them only where the CPU has AVX-512F, VL and
    /// IFMA.
    macro_rules! entry_points {
        ($v:ty, $square:ident, $pow:ident) => {
            #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
            pub(crate) fn $square(p: &Params52, vals: &mut [BigUint], k: u64) {
                super::square_chunk::<$v>(p, vals, k)
            }

            #[target_feature(enable = "avx512f,avx512vl,avx512ifma")]
            pub(crate) fn $pow(p: &Params52, b: &[BigUint], e: &[BigUint], out: &mut [BigUint]) {
                super::pow_chunk::<$v>(p, b, e, out)
            }
        };
    }

    /// Two zmm registers per number digit: 16 values, two chains in step.
    pub(crate) type Zmm2 = Wide<Zmm, 2>;
    /// Two ymm registers: 8 values, the same schedule in 256-bit vectors.
    pub(crate) type Ymm2 = Wide<Ymm, 2>;

    entry_points!(Zmm2, square_zmm2, pow_zmm2);
    entry_points!(Ymm2, square_ymm2, pow_ymm2);
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

    /// Squares and powers through `square`/`pow` (chunks of up to `lanes` values) equal the
    /// oracles on several sizes.
    fn check(
        lanes: usize,
        square: impl Fn(&Params52, &mut [BigUint], u64),
        pow: impl Fn(&Params52, &[BigUint], &[BigUint], &mut [BigUint]),
    ) {
        let mut rng = StdRng::seed_from_u64(52);
        for bits in [64u64, 100, 521, 1024, 2047, 2048] {
            let m = random_odd(&mut rng, bits);
            let p = params52(&m).expect("params");
            for (count, k) in [(1usize, 0u64), (3, 1), (lanes, 13), (lanes - 1, 40)] {
                let xs = values(&mut rng, &m, count);
                let mut got = xs.clone();
                square(&p, &mut got, k);
                assert_eq!(got, reference_square_many(&m, &xs, k), "{bits} bits, k {k}");
                let exps: Vec<BigUint> = (0..count)
                    .map(|i| BigUint::from(rng.gen::<u64>() >> (i * 7 % 64)))
                    .collect();
                let mut out = vec![BigUint::default(); count];
                pow(&p, &xs, &exps, &mut out);
                assert_eq!(out, reference_pow_many(&m, &xs, &exps), "{bits} bits, pow");
            }
        }
    }

    #[test]
    fn portable_twins_equal_the_oracles() {
        check(
            16,
            square_chunk::<Wide<Portable<8>, 2>>,
            pow_chunk::<Wide<Portable<8>, 2>>,
        );
        check(
            8,
            square_chunk::<Wide<Portable<4>, 2>>,
            pow_chunk::<Wide<Portable<4>, 2>>,
        );
    }

    /// Runs where the CPU has AVX-512 IFMA (not on every CI machine).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn both_vector_widths_equal_the_oracles_where_the_cpu_has_ifma() {
        use x86::*;
        if !super::super::Kernel::Avx512Ifma.is_supported() {
            return;
        }
        // SAFETY (each closure): the CPU has AVX-512F, VL and IFMA (checked just above).
        check(
            16,
            |p, v, k| unsafe { square_zmm2(p, v, k) },
            |p, b, e, o| unsafe { pow_zmm2(p, b, e, o) },
        );
        check(
            8,
            |p, v, k| unsafe { square_ymm2(p, v, k) },
            |p, b, e, o| unsafe { pow_ymm2(p, b, e, o) },
        );
    }
}
