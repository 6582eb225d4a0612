//! Euclid's algorithm with cofactors on fixed-width [`Num`]s, Lehmer-accelerated, two words of
//! leading bits per update of the full numbers ("double-word Lehmer").
//!
//! One round: take the leading 126 bits of the pair (X, Y), run the quotients of their leading
//! 63 bits with Jebelean's exact conditions (the matrix M1, entries below 2^32, valid for the
//! full numbers), apply M1 to the 126-bit window (exact in 128-bit arithmetic, off from the true
//! leading bits by less than M1's largest entry), run the quotients of the new window's leading
//! word with conditions that allow for that error (M2), and apply M2·M1 (entries below 2^62) to
//! the full remainders and cofactors in one pass each. That halves the passes over the full
//! numbers of single-word Lehmer. The conditions make every quotient the true one, so the
//! result is exactly Euclid's: the same stopping point, the same cofactors.
//!
//! Remainders and cofactors are kept as magnitudes: the cofactors' signs alternate with the
//! number of steps, so the updates need no sign handling.

use super::num::Num;
use std::cmp::Ordering;

/// The magnitudes of the matrix of a run of `steps` Euclid steps on (X, Y): the pair after is
/// x = (−1)^steps·(s2·X − t2·Y), y = (−1)^steps·(t1·Y − s1·X).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mat {
    pub(crate) s2: u64,
    pub(crate) t2: u64,
    pub(crate) s1: u64,
    pub(crate) t1: u64,
    pub(crate) steps: u32,
}

impl Mat {
    fn max_entry(&self) -> u64 {
        self.s2.max(self.t2).max(self.s1).max(self.t1)
    }

    /// The run of `self` followed by the run of `next` (the magnitudes add: the signs agree).
    fn then(&self, next: &Self) -> Self {
        Self {
            s2: next.s2 * self.s2 + next.t2 * self.s1,
            t2: next.s2 * self.t2 + next.t2 * self.t1,
            s1: next.t1 * self.s1 + next.s1 * self.s2,
            t1: next.t1 * self.t1 + next.s1 * self.t2,
            steps: self.steps + next.steps,
        }
    }

    /// The pair (X, Y) < 2^126 after the run, modulo 2^128, as signed numbers: exact whenever
    /// the true values lie in (−2^127, 2^127).
    fn apply_u128(&self, x: u128, y: u128) -> (i128, i128) {
        let a = (self.s2 as u128)
            .wrapping_mul(x)
            .wrapping_sub((self.t2 as u128).wrapping_mul(y)) as i128;
        let b = (self.t1 as u128)
            .wrapping_mul(y)
            .wrapping_sub((self.s1 as u128).wrapping_mul(x)) as i128;
        if self.steps & 1 == 1 {
            (a.wrapping_neg(), b.wrapping_neg())
        } else {
            (a, b)
        }
    }
}

/// (⌊x / y⌋, x mod y) for x ≥ y > 0: quotients below 8 (83 % of Euclid's) by three
/// compare-and-subtract stages, without a division.
#[inline(always)]
pub(crate) fn quot(x: u64, y: u64) -> (u64, u64) {
    if (x >> 3) >= y {
        return (x / y, x % y);
    }
    let b2 = ((x >> 2) >= y) as u64;
    let x = x - ((y << 2) & b2.wrapping_neg());
    let b1 = ((x >> 1) >= y) as u64;
    let x = x - ((y << 1) & b1.wrapping_neg());
    let b0 = (x >= y) as u64;
    let x = x - (y & b0.wrapping_neg());
    (4 * b2 + 2 * b1 + b0, x)
}

/// The longest run of Euclid steps on (x, y), x ≥ y, x < 2^63, the leading words of (X, Y) at
/// one shift, that is the run of (X, Y) for all lower bits (Jebelean's conditions), and makes
/// steps only while the divisor is certainly above the bound, whose leading word is `bb`.
///
/// After some steps y is the word of t1·Y − s1·X (an even count) or s1·X − t1·Y (odd), so the
/// true divisor lies above y − s1 (even) or y − t1 (odd) in units of the word's last bit, and
/// the bound below bb + 1: a step is certain to be Euclid's only while y exceeds bb by that
/// cofactor. (chiavdf tests y > bb alone and can go a step past the bound.)
#[inline(never)]
pub(crate) fn lehmer_exact(mut x: u64, mut y: u64, bb: u64) -> Mat {
    let (mut s2, mut t2, mut s1, mut t1) = (1u64, 0u64, 0u64, 1u64);
    let mut steps = 0u32;
    // Two steps per iteration: the conditions alternate between the s and t cofactors. Every
    // cofactor is below x₀/y ≤ 2^63 (continuants), so nothing overflows.
    loop {
        if y.saturating_sub(s1) <= bb {
            break;
        }
        let (q, r) = quot(x, y);
        let sn = s2 + q * s1;
        let tn = t2 + q * t1;
        if r < tn || y - r < sn + s1 {
            break;
        }
        (x, y, s2, s1, t2, t1) = (y, r, s1, sn, t1, tn);
        steps += 1;
        if y.saturating_sub(t1) <= bb {
            break;
        }
        let (q, r) = quot(x, y);
        let sn = s2 + q * s1;
        let tn = t2 + q * t1;
        if r < sn || y - r < tn + t1 {
            break;
        }
        (x, y, s2, s1, t2, t1) = (y, r, s1, sn, t1, tn);
        steps += 1;
    }
    Mat {
        s2,
        t2,
        s1,
        t1,
        steps,
    }
}

/// Like [`lehmer_exact`] for leading words (x, y) whose true values (in units of the word's
/// last bit) are x + α, y + β with α, β ∈ (−½, 1½): then every step's remainder moves by less
/// than 1½·(s + t) of its cofactors, and the run stops while that cannot change a quotient:
/// each new remainder at least 2(s + t), each difference of remainders at least twice the sum
/// of both cofactor pairs, and a divisor above the bound word by 2(s + t). Cofactor sums stay
/// at most `lim`.
#[inline(never)]
pub(crate) fn lehmer_margin(mut x: u64, mut y: u64, bb: u64, lim: u64) -> Mat {
    let (mut s2, mut t2, mut s1, mut t1) = (1u64, 0u64, 0u64, 1u64);
    let mut u1 = 1u64;
    let mut steps = 0u32;
    // y < 2^63, so a bound word of 2^63 or more allows no step; below that, and with u1 ≤
    // lim < 2^62, nothing here overflows (saturating arithmetic would cost half the speed).
    if bb < 1 << 63 {
        while y > bb + 2 * u1 {
            let (q, r) = quot(x, y);
            // sn, tn < 2^63 (continuants of the exact run on x, y).
            let sn = s2 + q * s1;
            let tn = t2 + q * t1;
            let un = sn + tn;
            if un > lim || r < 2 * un || y - r < 2 * (u1 + un) {
                break;
            }
            (x, y, s2, s1, t2, t1, u1) = (y, r, s1, sn, t1, tn, un);
            steps += 1;
        }
    }
    Mat {
        s2,
        t2,
        s1,
        t1,
        steps,
    }
}

/// Entries of a combined matrix stay below this (the limb kernels' bound).
const ENTRY_LIMIT: u64 = (1 << 62) - 1;

/// Euclid's algorithm on (r2, r1), r2 ≥ r1 ≥ 0, with the cofactors' magnitudes (c2, c1): for
/// the pair it started from (A, B), r ≡ −co·B (mod A) holds for (r2, co2) and (r1, co1), with
/// co2 = (−1)^steps·c2 and co1 = (−1)^(steps+1)·c1 (co starts at 0 and −1).
#[derive(Clone, Debug)]
pub(crate) struct Euclid<const N: usize> {
    pub(crate) r2: Num<N>,
    pub(crate) r1: Num<N>,
    pub(crate) c2: Num<N>,
    pub(crate) c1: Num<N>,
    /// Whether the number of steps made is odd.
    pub(crate) odd: bool,
}

impl<const N: usize> Euclid<N> {
    pub(crate) const fn new() -> Self {
        Self {
            r2: Num::ZERO,
            r1: Num::ZERO,
            c2: Num::ZERO,
            c1: Num::ZERO,
            odd: false,
        }
    }

    /// Starts on (|a|, |b|), |a| ≥ |b|.
    pub(crate) fn start(&mut self, a: &Num<N>, b: &Num<N>) {
        self.r2.set(a);
        self.r2.neg = false;
        self.r1.set(b);
        self.r1.neg = false;
        self.c2.set_u64(0);
        self.c1.set_u64(1);
        self.odd = false;
    }

    /// Whether co1 is negative (co1 ≠ 0).
    pub(crate) fn co1_negative(&self) -> bool {
        !self.odd
    }

    /// Whether co2 is negative (when co2 ≠ 0).
    pub(crate) fn co2_negative(&self) -> bool {
        self.odd
    }

    /// Runs Euclid's steps while r1 > bound (bound ≥ 0). `None` only where the fixed width
    /// overflows.
    /// The partial Euclid that NUDUPL and NUCOMP share: (a, b) run down to `bound` (L), then
    /// the cofactors given their signs. `None` (the caller declines) on a width overflow or
    /// when c1 ends at zero.
    pub(crate) fn partial(&mut self, a: &Num<N>, b: &Num<N>, bound: &Num<N>) -> Option<()> {
        self.start(a, b);
        self.run(bound)?;
        if self.c1.is_zero() {
            return None;
        }
        self.c1.neg = self.co1_negative();
        self.c2.neg = self.co2_negative() && !self.c2.is_zero();
        Some(())
    }

    pub(crate) fn run(&mut self, bound: &Num<N>) -> Option<()> {
        while !self.r1.is_zero() && self.r1.cmp_mag(bound) == Ordering::Greater {
            if self.r2.bits() <= 62 {
                self.finish_small(bound)?;
                continue;
            }
            let m = lehmer_round(&self.r2, &self.r1, bound);
            if m.steps == 0 {
                self.divide_step()?;
            } else {
                self.apply(&m)?;
            }
        }
        Some(())
    }

    /// Applies the run `m` to the remainders and the cofactors.
    #[inline]
    fn apply(&mut self, m: &Mat) -> Option<()> {
        // The kernels are exact for entries below 2^62, which the runs guarantee; a check costs
        // four comparisons and turns a broken guarantee into a declined squaring.
        if m.max_entry() > ENTRY_LIMIT {
            return None;
        }
        if m.steps & 1 == 1 {
            Num::lehmer_rows::<true>(&mut self.r2, &mut self.r1, m.s2, m.t2, m.s1, m.t1)?;
        } else {
            Num::lehmer_rows::<false>(&mut self.r2, &mut self.r1, m.s2, m.t2, m.s1, m.t1)?;
        }
        Num::lehmer_cofactors(&mut self.c2, &mut self.c1, m.s2, m.t2, m.s1, m.t1)?;
        self.odd ^= m.steps & 1 == 1;
        Some(())
    }

    /// One step with a quotient too large for the leading word, by a full division.
    fn divide_step(&mut self) -> Option<()> {
        let (mut q, mut r) = (Num::<N>::ZERO, Num::<N>::ZERO);
        Num::floor_divmod_into(&mut q, &mut r, &self.r2, &self.r1)?;
        // (r2, r1) ← (r1, r2 − q·r1); (c2, c1) ← (c1, c2 + q·c1)
        std::mem::swap(&mut self.r2, &mut self.r1);
        self.r1.set(&r);
        r.set_mul(&q, &self.c1)?;
        r.add_assign(&self.c2)?;
        std::mem::swap(&mut self.c2, &mut self.c1);
        self.c1.set(&r);
        self.odd = !self.odd;
        Some(())
    }

    /// The remaining steps once r2 < 2^62: plain Euclid on machine words.
    fn finish_small(&mut self, bound: &Num<N>) -> Option<()> {
        let mut x = self.r2.word_at(0);
        let mut y = self.r1.word_at(0);
        let bb = bound.word_sat(0);
        let (mut s2, mut t2, mut s1, mut t1) = (1u64, 0u64, 0u64, 1u64);
        let mut steps = 0u32;
        // Cofactors stay at most x₀ < 2^62.
        while y > bb {
            let (q, r) = quot(x, y);
            (x, y) = (y, r);
            (s2, s1) = (s1, s2 + q * s1);
            (t2, t1) = (t1, t2 + q * t1);
            steps += 1;
        }
        self.r2.set_u64(x);
        self.r1.set_u64(y);
        Num::lehmer_cofactors(&mut self.c2, &mut self.c1, s2, t2, s1, t1)?;
        self.odd ^= steps & 1 == 1;
        Some(())
    }
}

/// The run of Euclid steps of one round on (r2, r1), r2 ≥ r1, r2 ≥ 2^62, while r1 > bound (see
/// the module doc): exactly the steps of Euclid's algorithm, as many as the leading words make
/// certain (none where the next quotient is too large for them).
#[inline]
pub(crate) fn lehmer_round<const N: usize>(r2: &Num<N>, r1: &Num<N>, bound: &Num<N>) -> Mat {
    // The window: the leading 126 bits of r2 (its bits shifted left if it is shorter).
    let s = r2.bits() as isize - 126;
    let (wx, wy) = (r2.u128_at(s), r1.u128_at(s));
    let m1 = lehmer_exact((wx >> 63) as u64, (wy >> 63) as u64, bound.word_sat(s + 63));
    if m1.steps == 0 {
        return m1;
    }
    second_run(&m1, wx, wy, s, bound).unwrap_or(m1)
}

/// The second run of a round: `None` where the window after `m1` is too short or no step is
/// certain.
#[inline]
fn second_run<const N: usize>(
    m1: &Mat,
    wx: u128,
    wy: u128,
    s: isize,
    bound: &Num<N>,
) -> Option<Mat> {
    // The true values after m1 lie in [0, 2^126): wx, wy < 2^126 and the error is below m1's
    // largest entry e1 < 2^32, so the 128-bit results are exact.
    let (x, y) = m1.apply_u128(wx, wy);
    if y <= 0 || x <= y {
        return None;
    }
    let e1 = m1.max_entry();
    let e1_bits = 64 - e1.leading_zeros() as isize;
    // Leading 63 bits of the new window; where the window was truncated (s > 0) its error,
    // below e1, must be under half a unit of the word's last bit.
    let t = (128 - x.leading_zeros() as isize - 63).max(0);
    if s > 0 && t < e1_bits + 1 {
        return None;
    }
    let (x2, y2) = ((x >> t) as u64, (y >> t) as u64);
    // Cofactor sums below 2^(62 − e1_bits) keep the combined entries below 2^62.
    let m2 = lehmer_margin(x2, y2, bound.word_sat(s + t), ENTRY_LIMIT >> e1_bits);
    if m2.steps == 0 {
        return None;
    }
    Some(m1.then(&m2))
}
