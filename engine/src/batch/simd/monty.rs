//! Montgomery products on 4 lanes in radix 2^28, generic over [`Lanes`].
//!
//! A number is n limbs `x[j]` (limb j of the 4 lanes), followed by `PAD` zero limbs. A
//! product builds 2n lazy columns t[c] (u64 per lane, never carried into each other;
//! radix.rs has the bound) and reduces them row by row: row i adds q_i·N at column i, with
//! q_i chosen to clear column i's low 28 bits, and carries only out of column i.
//!
//! Everything goes in tiles of 4 rows whose operands stay in registers, sweeping the
//! columns with one load and one store per column:
//! - a squaring fuses its rows into the reduction's: tile i adds 2a_(i+s)·a_j (j ≥ i + 4)
//!   and q_(i+s)·N_j to the same column in the same visit, 8 products per load and store
//!   (the diagonal and the cross products inside the tile go first);
//! - a tile's 4 q's come from its 4 columns, final once the first 4 columns of the previous
//!   tile's sweep are in, so they are worked out right there (a chain of about 40 cycles)
//!   and the rest of that sweep overlaps the chain;
//! - the n mod 4 rows left over form one shorter tile.
//!
//! The sliding operand (a, or b of a product) shifts through 4 registers by value, and N is
//! read from memory at constant offsets into a slice taken once per 4 columns, so no index
//! into a window is computed at run time and the sweeps check bounds once per 4 columns.
//! Every function is `#[inline(always)]`: the AVX2 entry points (kernel.rs) compile the
//! whole tree with AVX2.
//!
//! Costs for 2048 bits (n = 74), per squaring of 4 lanes: 74·75/2 products for the square
//! and 74² for the reduction, about 8,300 `vpmuludq` each with its `vpaddq`; the rest (q's,
//! triangles, carries) is about a tenth of that.

use super::lanes::Lanes;
use crate::batch::radix::{Params, MASK, RADIX};

/// Rows per tile.
const ROWS: usize = 4;

/// Zero limbs after the n limbs of a number: a sweep reads its source up to 3 past the end.
pub(crate) const PAD: usize = ROWS;

/// The modulus in every lane.
pub(crate) struct Ctx<V> {
    /// Limbs per value.
    pub n: usize,
    /// N followed by zero limbs (the sweeps read up to N_(n+2)).
    m: Vec<V>,
    m0inv: V,
    mask: V,
}

impl<V: Lanes> Ctx<V> {
    #[inline(always)]
    pub fn new(p: &Params) -> Self {
        let mut m: Vec<V> = p.m.iter().map(|&l| V::splat(l)).collect();
        m.resize(p.n + 2 * ROWS, V::zero());
        Self {
            n: p.n,
            m,
            m0inv: V::splat(p.m0inv),
            mask: V::splat(MASK),
        }
    }

    /// q = acc · (−N⁻¹) mod 2^28: the multiple of N that clears the column's low 28 bits
    /// (only acc mod 2^28 matters, and the multiply reads the low 32 bits).
    #[inline(always)]
    fn q_of(&self, acc: V) -> V {
        acc.mul(self.m0inv).and(self.mask)
    }

    /// (acc + q·N_0) / 2^28, exact: the column's carry into the next.
    #[inline(always)]
    fn carry_out(&self, acc: V, q: V) -> V {
        acc.add(q.mul(self.m[0])).shr::<{ RADIX as i32 }>()
    }

    /// A constant (the limbs of one value) in every lane, padded.
    #[inline(always)]
    pub fn splat(&self, limbs: &[u64]) -> Vec<V> {
        let mut x = self.zeros();
        for (xj, &l) in x.iter_mut().zip(limbs) {
            *xj = V::splat(l);
        }
        x
    }

    /// Zero in every lane, padded.
    #[inline(always)]
    pub fn zeros(&self) -> Vec<V> {
        vec![V::zero(); self.n + PAD]
    }
}

/// The 2n columns of a product, all zero between products: the reduction zeroes each
/// column as it consumes it, so nothing else clears them.
pub(crate) struct Scratch<V> {
    t: Vec<V>,
}

impl<V: Lanes> Scratch<V> {
    #[inline(always)]
    pub fn new(n: usize) -> Self {
        Self {
            t: vec![V::zero(); 2 * n + PAD],
        }
    }
}

/// x ← x² / R in every lane. Values below 2N stay below 2N.
#[inline(always)]
pub(crate) fn sqr<V: Lanes>(ctx: &Ctx<V>, x: &mut [V], s: &mut Scratch<V>) {
    reduce::<V, true>(ctx, &mut s.t, x);
}

/// x ← x · y / R in every lane.
#[inline(always)]
pub(crate) fn mul<V: Lanes>(ctx: &Ctx<V>, x: &mut [V], y: &[V], s: &mut Scratch<V>) {
    let n = ctx.n;
    mul_cols(&x[..n], &y[..n + PAD], &mut s.t[..2 * n]);
    reduce::<V, false>(ctx, &mut s.t, x);
}

/// x ← x / R: out of Montgomery form. The result is at most N (N only for x ≡ 0).
#[inline(always)]
pub(crate) fn redc<V: Lanes>(ctx: &Ctx<V>, x: &mut [V], s: &mut Scratch<V>) {
    let n = ctx.n;
    s.t[..n].copy_from_slice(&x[..n]);
    reduce::<V, false>(ctx, &mut s.t, x);
}

/// t (zero on entry) += the columns of a·b; b carries at least 3 zero limbs of padding.
#[inline(always)]
fn mul_cols<V: Lanes>(a: &[V], b: &[V], t: &mut [V]) {
    let (n, nb) = (a.len(), b.len() - PAD);
    let mut i = 0;
    while i + ROWS <= n {
        let rows = [a[i], a[i + 1], a[i + 2], a[i + 3]];
        let mut w = [V::zero(); ROWS];
        slide(&rows, &mut w, &b[..nb + 3], &mut t[i..i + nb + 3]);
        i += ROWS;
    }
    // The last n mod 4 rows, one at a time (a product is rare next to the squarings).
    for (r, &ar) in a.iter().enumerate().skip(i) {
        for (tc, &bj) in t[r..r + nb].iter_mut().zip(&b[..nb]) {
            *tc = tc.add(ar.mul(bj));
        }
    }
}

/// For each column k: shift src[k] into the window w, t[k] += Σ_s rows[s] · w[s].
#[inline(always)]
fn slide<V: Lanes>(rows: &[V; 4], w: &mut [V; 4], src: &[V], t: &mut [V]) {
    let mut tc = t.chunks_exact_mut(4);
    let mut sc = src.chunks_exact(4);
    for (t4, s4) in (&mut tc).zip(&mut sc) {
        for u in 0..4 {
            shift(w, s4[u]);
            t4[u] = t4[u].add(dot(rows, w));
        }
    }
    for (tk, &sk) in tc.into_remainder().iter_mut().zip(sc.remainder()) {
        shift(w, sk);
        *tk = tk.add(dot(rows, w));
    }
}

/// w ← [new, w0, w1, …]: a register window sliding over a source, by value, so that every
/// index into it is a constant.
#[inline(always)]
fn shift<V: Lanes, const R: usize>(w: &mut [V; R], new: V) {
    for s in (1..R).rev() {
        w[s] = w[s - 1];
    }
    w[0] = new;
}

/// Σ_s a[s] · b[s] (as a tree for 4 terms).
#[inline(always)]
fn dot<V: Lanes, const R: usize>(a: &[V; R], b: &[V; R]) -> V {
    if R == 4 {
        return a[0]
            .mul(b[0])
            .add(a[1].mul(b[1]))
            .add(a[2].mul(b[2]).add(a[3].mul(b[3])));
    }
    let mut acc = a[0].mul(b[0]);
    for s in 1..R {
        acc = acc.add(a[s].mul(b[s]));
    }
    acc
}

/// [`dot`] of 4 with the b's read from memory by the multiplies.
#[inline(always)]
fn dot_mem<V: Lanes>(a: &[V; 4], b: [&V; 4]) -> V {
    a[0].mul_mem(b[0])
        .add(a[1].mul_mem(b[1]))
        .add(a[2].mul_mem(b[2]).add(a[3].mul_mem(b[3])))
}

/// x ← (t + Q·N) / R, with the square of x added into t on the way when `SQR` (t holds
/// zeros then); the high n columns are carried into 28-bit limbs. Leaves t all zero.
#[inline(always)]
fn reduce<V: Lanes, const SQR: bool>(ctx: &Ctx<V>, t: &mut [V], x: &mut [V]) {
    let n = ctx.n;
    let full = n / ROWS * ROWS;
    let mut carry = V::zero();
    if full > 0 {
        if SQR {
            sqr_triangle::<V, 4>(&x[..4], &mut t[..7]);
        }
        let mut q = tile_q::<V, 4>(ctx, &mut t[..4], &mut carry);
        let mut i = 0;
        while i < full {
            let next = i + ROWS < full;
            let a = [x[i], x[i + 1], x[i + 2], x[i + 3]];
            let d = [
                a[0].add(a[0]),
                a[1].add(a[1]),
                a[2].add(a[2]),
                a[3].add(a[3]),
            ];
            if SQR && next {
                sqr_triangle::<V, 4>(&x[i + 4..i + 8], &mut t[2 * i + 8..2 * i + 15]);
            }
            // Columns i + J, J = 4 .. n + 3: reduction only below J = i + 4, where the
            // square's rows begin (everywhere for a plain reduction).
            let cols = &mut t[i + 4..i + n + 3];
            let (red, fused) = cols.split_at_mut(if SQR { i } else { n - 1 });
            if !SQR || i > 0 {
                let (head, rest) = red.split_at_mut(red.len().min(ROWS));
                sweep_red(ctx, &q, 4, head);
                let q_next = if next {
                    tile_q::<V, 4>(ctx, head, &mut carry)
                } else {
                    q
                };
                sweep_red(ctx, &q, 8, rest);
                if SQR {
                    let mut w = [V::zero(); ROWS];
                    sweep_fused(ctx, &q, &d, i + 4, &x[i + 4..n + 3], &mut w, fused);
                }
                q = q_next;
            } else {
                // The first tile of a square: its head columns already hold the square.
                let (head, rest) = fused.split_at_mut(fused.len().min(ROWS));
                let src = &x[i + 4..n + 3];
                let mut w = [V::zero(); ROWS];
                sweep_fused(ctx, &q, &d, i + 4, &src[..head.len()], &mut w, head);
                let q_next = if next {
                    tile_q::<V, 4>(ctx, head, &mut carry)
                } else {
                    q
                };
                sweep_fused(ctx, &q, &d, i + 8, &src[head.len()..], &mut w, rest);
                q = q_next;
            }
            i += ROWS;
        }
    }
    match n - full {
        1 => reduce_tail::<V, SQR, 1>(ctx, t, x, &mut carry),
        2 => reduce_tail::<V, SQR, 2>(ctx, t, x, &mut carry),
        3 => reduce_tail::<V, SQR, 3>(ctx, t, x, &mut carry),
        _ => {}
    }
    // The result is below 2N < R, so the carry out of the top limb is zero.
    for (xj, tj) in x[..n].iter_mut().zip(&mut t[n..2 * n]) {
        let v = tj.add(carry);
        *tj = V::zero();
        *xj = v.and(ctx.mask);
        carry = v.shr::<{ RADIX as i32 }>();
    }
}

/// The last R = n mod 4 rows, from row i = n − R: their own square triangle, their q's,
/// and a reduction sweep.
#[inline(always)]
fn reduce_tail<V: Lanes, const SQR: bool, const R: usize>(
    ctx: &Ctx<V>,
    t: &mut [V],
    x: &[V],
    carry: &mut V,
) {
    let n = ctx.n;
    let i = n - R;
    if SQR {
        sqr_triangle::<V, R>(&x[i..n], &mut t[2 * i..2 * n - 1]);
    }
    let q = tile_q::<V, R>(ctx, &mut t[i..n], carry);
    sweep_red(ctx, &q, R, &mut t[n..i + n + R - 1]);
}

/// The square's diagonal and cross products among R consecutive limbs a (columns 2i ..
/// 2i + 2R − 2 of t, passed from column 2i).
#[inline(always)]
fn sqr_triangle<V: Lanes, const R: usize>(a: &[V], t: &mut [V]) {
    for s in 0..R {
        t[2 * s] = t[2 * s].add(a[s].mul(a[s]));
        let d = a[s].add(a[s]);
        for s2 in s + 1..R {
            t[s + s2] = t[s + s2].add(d.mul(a[s2]));
        }
    }
}

/// The R q's of a tile from its R columns (each final once the rows before it are in),
/// zeroing the columns; `carry` comes in from the column before and goes out of the last.
#[inline(always)]
fn tile_q<V: Lanes, const R: usize>(ctx: &Ctx<V>, cols: &mut [V], carry: &mut V) -> [V; R] {
    let mut q = [V::zero(); R];
    for u in 0..R {
        let mut acc = cols[u].add(*carry);
        cols[u] = V::zero();
        for (s, qs) in q.iter().enumerate().take(u) {
            acc = acc.add(qs.mul(ctx.m[u - s]));
        }
        q[u] = ctx.q_of(acc);
        *carry = ctx.carry_out(acc, q[u]);
    }
    q
}

/// The reduction alone: column k of t is column J = j0 + k of the tile (J ≥ R) and gets
/// Σ_s q_s · N_(J−s), with N sliding through a window of registers.
#[inline(always)]
fn sweep_red<V: Lanes, const R: usize>(ctx: &Ctx<V>, q: &[V; R], j0: usize, t: &mut [V]) {
    let mut w = [V::zero(); R];
    for (s, ws) in w.iter_mut().enumerate() {
        *ws = ctx.m[j0 - 1 - s];
    }
    let src = &ctx.m[j0..j0 + t.len()];
    let mut tc = t.chunks_exact_mut(4);
    let mut sc = src.chunks_exact(4);
    for (t4, s4) in (&mut tc).zip(&mut sc) {
        for u in 0..4 {
            shift(&mut w, s4[u]);
            t4[u] = t4[u].add(dot(q, &w));
        }
    }
    for (tk, &sk) in tc.into_remainder().iter_mut().zip(sc.remainder()) {
        shift(&mut w, sk);
        *tk = tk.add(dot(q, &w));
    }
}

/// The fused sweep of a square: as [`sweep_red`] for 4 rows, plus Σ_s d_s · w_s where the
/// window w shifts in src[k] (the limbs a_(i+4) … of the square, then zeros) each column.
#[inline(always)]
fn sweep_fused<V: Lanes>(
    ctx: &Ctx<V>,
    q: &[V; 4],
    d: &[V; 4],
    j0: usize,
    src: &[V],
    w: &mut [V; 4],
    t: &mut [V],
) {
    let base = j0 + 1 - ROWS;
    let mut tc = t.chunks_exact_mut(4);
    let mut sc = src.chunks_exact(4);
    let mut k = 0;
    for (t4, s4) in (&mut tc).zip(&mut sc) {
        let nw = &ctx.m[base + k..base + k + 7];
        for u in 0..4 {
            shift(w, s4[u]);
            let red = dot_mem(q, [&nw[u + 3], &nw[u + 2], &nw[u + 1], &nw[u]]);
            t4[u] = t4[u].add(red).add(dot(d, w));
        }
        k += 4;
    }
    for (u, (tk, &sk)) in tc
        .into_remainder()
        .iter_mut()
        .zip(sc.remainder())
        .enumerate()
    {
        let nw = &ctx.m[base + k + u..base + k + u + 4];
        shift(w, sk);
        let red = dot_mem(q, [&nw[3], &nw[2], &nw[1], &nw[0]]);
        *tk = tk.add(red).add(dot(d, w));
    }
}
