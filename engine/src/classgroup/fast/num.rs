//! Stack-allocated sign-magnitude integers of at most `N` 64-bit limbs, with the few operations
//! NUDUPL needs, all in place: a result is written into a `Num` the caller owns (no value is
//! returned by copy, nothing is zeroed beyond what is written). Every operation that could
//! outgrow `N` limbs checks first and returns `None` (the caller then falls back to num-bigint);
//! nothing here allocates or panics.
//!
//! Limbs at and above `n` are never read: they may hold anything.

use num_bigint::{BigInt, BigUint, Sign};
use std::cmp::Ordering;

/// A signed integer of at most `N` limbs: `l[..n]` little-endian, `l[n - 1] != 0` (n = 0 for
/// zero, which is never negative).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Num<const N: usize> {
    pub(crate) l: [u64; N],
    pub(crate) n: usize,
    pub(crate) neg: bool,
}

impl<const N: usize> Num<N> {
    pub(crate) const ZERO: Self = Self {
        l: [0; N],
        n: 0,
        neg: false,
    };

    pub(crate) fn from_u64(v: u64) -> Self {
        let mut r = Self::ZERO;
        if v != 0 && N > 0 {
            r.l[0] = v;
            r.n = 1;
        }
        r
    }

    pub(crate) fn from_bigint(v: &BigInt) -> Option<Self> {
        let digits = v.magnitude().to_u64_digits();
        if digits.len() > N {
            return None;
        }
        let mut r = Self::ZERO;
        r.l[..digits.len()].copy_from_slice(&digits);
        r.n = digits.len();
        r.neg = v.sign() == Sign::Minus;
        r.trim();
        Some(r)
    }

    pub(crate) fn to_bigint(self) -> BigInt {
        let mut bytes = Vec::with_capacity(self.n * 8);
        for limb in &self.l[..self.n] {
            bytes.extend_from_slice(&limb.to_le_bytes());
        }
        let m = BigUint::from_bytes_le(&bytes);
        let sign = if self.n == 0 {
            Sign::NoSign
        } else if self.neg {
            Sign::Minus
        } else {
            Sign::Plus
        };
        BigInt::from_biguint(sign, m)
    }

    #[inline]
    pub(crate) fn limbs(&self) -> &[u64] {
        &self.l[..self.n]
    }

    #[inline]
    pub(crate) fn is_zero(&self) -> bool {
        self.n == 0
    }

    #[inline]
    pub(crate) fn is_even(&self) -> bool {
        self.n == 0 || self.l[0] & 1 == 0
    }

    #[inline]
    pub(crate) fn is_one(&self) -> bool {
        self.n == 1 && self.l[0] == 1 && !self.neg
    }

    /// Drops leading zero limbs; zero is made non-negative.
    #[inline]
    pub(crate) fn trim(&mut self) {
        while self.n > 0 && self.l[self.n - 1] == 0 {
            self.n -= 1;
        }
        if self.n == 0 {
            self.neg = false;
        }
    }

    /// Number of significant bits of |self| (0 for zero).
    #[inline]
    pub(crate) fn bits(&self) -> usize {
        if self.n == 0 {
            0
        } else {
            64 * self.n - self.l[self.n - 1].leading_zeros() as usize
        }
    }

    /// The 64 bits of |self| >> shift (the low word of the shifted magnitude).
    #[inline]
    pub(crate) fn word_at(&self, shift: usize) -> u64 {
        let i = shift / 64;
        let o = shift % 64;
        if i >= self.n {
            return 0;
        }
        let lo = self.l[i] >> o;
        if o == 0 || i + 1 >= self.n {
            lo
        } else {
            lo | (self.l[i + 1] << (64 - o))
        }
    }

    /// Compares magnitudes.
    #[inline]
    pub(crate) fn cmp_mag(&self, o: &Self) -> Ordering {
        cmp_slices(self.limbs(), o.limbs())
    }

    /// Signed comparison.
    pub(crate) fn cmp(&self, o: &Self) -> Ordering {
        match (self.neg, o.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_mag(o),
            (true, true) => o.cmp_mag(self),
        }
    }

    /// Copies `o` into self: its significant limbs only (limbs at and above `n` are never read).
    #[inline]
    pub(crate) fn set(&mut self, o: &Self) {
        self.l[..o.n].copy_from_slice(&o.l[..o.n]);
        self.n = o.n;
        self.neg = o.neg;
    }

    /// Sets self to the small non-negative value v.
    #[inline]
    pub(crate) fn set_u64(&mut self, v: u64) {
        self.neg = false;
        self.n = 0;
        if v != 0 && N > 0 {
            self.l[0] = v;
            self.n = 1;
        }
    }

    /// ⌊|self| / 2^shift⌋ mod 2^128 for shift ≥ 0, |self|·2^−shift for shift < 0 (the caller
    /// makes sure that fits in 128 bits).
    #[inline]
    pub(crate) fn u128_at(&self, shift: isize) -> u128 {
        if shift < 0 {
            let k = shift.unsigned_abs();
            let v = self.word_at(0) as u128 | (self.word_at(64) as u128) << 64;
            return if k >= 128 { 0 } else { v << k };
        }
        let s = shift as usize;
        self.word_at(s) as u128 | (self.word_at(s + 64) as u128) << 64
    }

    /// ⌊|self| / 2^shift⌋ (|self|·2^−shift for shift < 0), saturated at u64::MAX.
    #[inline]
    pub(crate) fn word_sat(&self, shift: isize) -> u64 {
        let bits = self.bits() as isize;
        if bits == 0 {
            return 0;
        }
        if bits - shift > 64 {
            return u64::MAX;
        }
        if shift >= 0 {
            self.word_at(shift as usize)
        } else {
            // |self| < 2^(64 + shift) here: one limb at most, shifted left without overflow.
            self.word_at(0) << shift.unsigned_abs()
        }
    }

    /// self ← a · b.
    #[inline]
    pub(crate) fn set_mul(&mut self, a: &Self, b: &Self) -> Option<()> {
        if a.n == 0 || b.n == 0 {
            self.set_u64(0);
            return Some(());
        }
        let n = a.n + b.n;
        if n > N {
            return None;
        }
        let (x, y) = if a.n >= b.n { (a, b) } else { (b, a) };
        mul_fresh(&mut self.l[..n], x.limbs(), y.limbs());
        self.n = n;
        self.neg = a.neg != b.neg;
        self.trim();
        Some(())
    }

    /// self ← a².
    #[inline]
    pub(crate) fn set_sqr(&mut self, a: &Self) -> Option<()> {
        if a.n == 0 {
            self.set_u64(0);
            return Some(());
        }
        let n = 2 * a.n;
        if n > N {
            return None;
        }
        sqr_fresh(&mut self.l[..n], a.limbs());
        self.n = n;
        self.neg = false;
        self.trim();
        Some(())
    }

    /// self ← self + (−1)^o_neg·|o|.
    #[inline]
    pub(crate) fn add_signed(&mut self, o: &Self, o_neg: bool) -> Option<()> {
        if o.n == 0 {
            return Some(());
        }
        if self.n == 0 {
            self.set(o);
            self.neg = o_neg;
            return Some(());
        }
        if self.neg == o_neg {
            add_mag_assign(self, o)?;
        } else if cmp_slices(self.limbs(), o.limbs()) != Ordering::Less {
            sub_mag_assign(self, o);
        } else {
            rsub_mag_assign(self, o);
            self.neg = o_neg;
        }
        self.trim();
        Some(())
    }

    /// self ← self + o.
    #[inline]
    pub(crate) fn add_assign(&mut self, o: &Self) -> Option<()> {
        self.add_signed(o, o.neg)
    }

    /// self ← self − o.
    #[inline]
    pub(crate) fn sub_assign(&mut self, o: &Self) -> Option<()> {
        self.add_signed(o, !o.neg && o.n != 0)
    }

    /// self ← −self.
    #[inline]
    pub(crate) fn negate(&mut self) {
        if self.n != 0 {
            self.neg = !self.neg;
        }
    }

    /// self ← self · 2^k for k < 64.
    #[inline]
    pub(crate) fn shl_assign(&mut self, k: u32) -> Option<()> {
        if k == 0 || self.n == 0 {
            return Some(());
        }
        let top = self.l[self.n - 1] >> (64 - k);
        if top != 0 && self.n >= N {
            return None;
        }
        for i in (1..self.n).rev() {
            self.l[i] = (self.l[i] << k) | (self.l[i - 1] >> (64 - k));
        }
        self.l[0] <<= k;
        if top != 0 {
            self.l[self.n] = top;
            self.n += 1;
        }
        Some(())
    }

    /// self ← self / 2^k for k < 64, where 2^k divides self.
    #[inline]
    pub(crate) fn shr_assign(&mut self, k: u32) {
        if k == 0 || self.n == 0 {
            return;
        }
        for i in 0..self.n - 1 {
            self.l[i] = (self.l[i] >> k) | (self.l[i + 1] << (64 - k));
        }
        self.l[self.n - 1] >>= k;
        self.trim();
    }

    /// self ← x / d where d divides x exactly (2-adic division); d ≠ 0. The quotient's limbs
    /// are computed in place of the remainder's.
    #[inline]
    pub(crate) fn set_divexact(&mut self, x: &Self, d: &Self) -> Option<()> {
        if d.n == 0 {
            return None;
        }
        if x.n == 0 {
            self.set_u64(0);
            return Some(());
        }
        let tz = trailing_zeros(d.limbs());
        let neg = x.neg != d.neg;
        if tz == 0 {
            self.set(x);
            divexact_in_place(self, d.limbs())?;
        } else {
            let mut dd = Self::ZERO;
            shr_into(&mut dd, d, tz);
            shr_into(self, x, tz);
            divexact_in_place(self, dd.limbs())?;
        }
        self.neg = neg && self.n != 0;
        Some(())
    }

    /// self ← x mod m in [0, m), m > 0.
    #[inline]
    pub(crate) fn set_mod(&mut self, x: &Self, m: &Self) -> Option<()> {
        if !x.neg && x.cmp_mag(m) == Ordering::Less {
            self.set(x);
            return Some(());
        }
        divrem_into(self, None, x, m)?;
        if x.neg && !self.is_zero() {
            rsub_mag_assign(self, m);
            self.trim();
        }
        Some(())
    }

    /// (q, r) ← (⌊x / d⌋, x mod d), d > 0, r in [0, d).
    #[inline]
    pub(crate) fn floor_divmod_into(q: &mut Self, r: &mut Self, x: &Self, d: &Self) -> Option<()> {
        divrem_into(r, Some(&mut *q), x, d)?;
        if x.neg {
            if !r.is_zero() {
                // x = −(|q|·d + r) = −(|q| + 1)·d + (d − r)
                rsub_mag_assign(r, d);
                r.trim();
                add_mag_assign(q, &Self::from_u64(1))?;
            }
            q.negate();
        }
        Some(())
    }

    /// A run of Euclid steps on a pair of non-negative remainders, (x, y) ← (x', y') with
    /// x' = p·x − q·y, y' = s·y − r·x (ODD: x' = q·y − p·x, y' = r·x − s·y), in one pass; p, q,
    /// r, s < 2^62. The results are remainders of Euclid's algorithm on (x, y), so they are
    /// non-negative and at most max(x, y): anything else (a caller's bug) gives `None`.
    #[inline]
    pub(crate) fn lehmer_rows<const ODD: bool>(
        x: &mut Self,
        y: &mut Self,
        p: u64,
        q: u64,
        r: u64,
        s: u64,
    ) -> Option<()> {
        let n = x.n.max(y.n);
        zero_extend(x, n);
        zero_extend(y, n);
        let (p, q, r, s) = (p as u128, q as u128, r as u128, s as u128);
        let (mut cx, mut cy) = (0i128, 0i128);
        for i in 0..n {
            let xi = x.l[i] as u128;
            let yi = y.l[i] as u128;
            // Each product is below 2^126: a difference of two plus a carry fits in an i128.
            let a = (xi * p) as i128;
            let b = (yi * q) as i128;
            let c = (xi * r) as i128;
            let d = (yi * s) as i128;
            let vx = if ODD { b - a + cx } else { a - b + cx };
            let vy = if ODD { c - d + cy } else { d - c + cy };
            x.l[i] = vx as u64;
            y.l[i] = vy as u64;
            cx = vx >> 64;
            cy = vy >> 64;
        }
        if cx != 0 || cy != 0 {
            return None;
        }
        x.n = n;
        y.n = n;
        x.neg = false;
        y.neg = false;
        x.trim();
        y.trim();
        Some(())
    }

    /// The cofactors that go with [`Num::lehmer_rows`], as magnitudes: (x, y) ← (p·x + q·y,
    /// r·x + s·y), p, q, r, s < 2^62, x, y ≥ 0.
    #[inline]
    pub(crate) fn lehmer_cofactors(
        x: &mut Self,
        y: &mut Self,
        p: u64,
        q: u64,
        r: u64,
        s: u64,
    ) -> Option<()> {
        let n = x.n.max(y.n);
        if n + 1 > N {
            return None;
        }
        zero_extend(x, n);
        zero_extend(y, n);
        let (p, q, r, s) = (p as u128, q as u128, r as u128, s as u128);
        let (mut cx, mut cy) = (0u64, 0u64);
        for i in 0..n {
            let xi = x.l[i] as u128;
            let yi = y.l[i] as u128;
            // Below 2^127 + 2^64: no overflow.
            let vx = xi * p + yi * q + cx as u128;
            let vy = xi * r + yi * s + cy as u128;
            x.l[i] = vx as u64;
            y.l[i] = vy as u64;
            cx = (vx >> 64) as u64;
            cy = (vy >> 64) as u64;
        }
        x.l[n] = cx;
        y.l[n] = cy;
        x.n = n + 1;
        y.n = n + 1;
        x.neg = false;
        y.neg = false;
        x.trim();
        y.trim();
        Some(())
    }
}

#[inline]
fn cmp_slices(a: &[u64], b: &[u64]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for i in (0..a.len()).rev() {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
    }
    Ordering::Equal
}

/// |x| ← |x| + |y| in place.
#[inline]
fn add_mag_assign<const N: usize>(x: &mut Num<N>, y: &Num<N>) -> Option<()> {
    let n = x.n.max(y.n);
    x.l[x.n..n].fill(0);
    let mut carry = false;
    for i in 0..y.n {
        let (v, c1) = x.l[i].overflowing_add(y.l[i]);
        let (v, c2) = v.overflowing_add(carry as u64);
        x.l[i] = v;
        carry = c1 | c2;
    }
    let mut i = y.n;
    while carry && i < n {
        let (v, c) = x.l[i].overflowing_add(1);
        x.l[i] = v;
        carry = c;
        i += 1;
    }
    x.n = n;
    if carry {
        if n >= N {
            return None;
        }
        x.l[n] = 1;
        x.n = n + 1;
    }
    Some(())
}

/// |x| ← |x| − |y| in place, |x| ≥ |y| (not trimmed).
#[inline]
fn sub_mag_assign<const N: usize>(x: &mut Num<N>, y: &Num<N>) {
    let mut borrow = false;
    for i in 0..y.n {
        let (v, b1) = x.l[i].overflowing_sub(y.l[i]);
        let (v, b2) = v.overflowing_sub(borrow as u64);
        x.l[i] = v;
        borrow = b1 | b2;
    }
    let mut i = y.n;
    while borrow && i < x.n {
        let (v, b) = x.l[i].overflowing_sub(1);
        x.l[i] = v;
        borrow = b;
        i += 1;
    }
}

/// |x| ← |y| − |x| in place, |y| > |x| (not trimmed).
#[inline]
fn rsub_mag_assign<const N: usize>(x: &mut Num<N>, y: &Num<N>) {
    x.l[x.n..y.n].fill(0);
    let mut borrow = false;
    for i in 0..y.n {
        let (v, b1) = y.l[i].overflowing_sub(x.l[i]);
        let (v, b2) = v.overflowing_sub(borrow as u64);
        x.l[i] = v;
        borrow = b1 | b2;
    }
    x.n = y.n;
}

/// out ← |x| >> k (k > 0), sign unset.
#[inline]
fn shr_into<const N: usize>(out: &mut Num<N>, x: &Num<N>, k: usize) {
    let ls = k / 64;
    let bs = (k % 64) as u32;
    if ls >= x.n {
        out.set_u64(0);
        return;
    }
    let n = x.n - ls;
    for i in 0..n {
        let lo = x.l[i + ls] >> bs;
        let hi = if bs != 0 && i + ls + 1 < x.n {
            x.l[i + ls + 1] << (64 - bs)
        } else {
            0
        };
        out.l[i] = lo | hi;
    }
    out.n = n;
    out.neg = false;
    out.trim();
}

/// x ← x / y in place for an odd y that divides x, sign unset: the limbs of the remainder below
/// the quotient's length become the quotient's as they are cleared. `None` if x is shorter
/// than y (so y does not divide it).
#[inline]
fn divexact_in_place<const N: usize>(x: &mut Num<N>, y: &[u64]) -> Option<()> {
    if x.n < y.len() {
        return if x.n == 0 { Some(()) } else { None };
    }
    let qn = x.n - y.len() + 1;
    let inv = inv_mod_2_64(y[0]);
    for i in 0..qn {
        let qi = x.l[i].wrapping_mul(inv);
        // x[i..qn] −= qi · y (only the limbs below qn matter); x[i] becomes 0.
        let m = y.len().min(qn - i);
        let mut borrow = 0u64;
        let mut carry = 0u64;
        for (xj, &yj) in x.l[i..i + m].iter_mut().zip(y) {
            let p = (qi as u128) * (yj as u128) + carry as u128;
            carry = (p >> 64) as u64;
            let (v, b1) = xj.overflowing_sub(p as u64);
            let (v, b2) = v.overflowing_sub(borrow);
            *xj = v;
            borrow = (b1 | b2) as u64;
        }
        // carry ≤ 2^64 − 2, so carry + borrow does not overflow.
        let mut k = i + m;
        let mut sub = carry + borrow;
        while k < qn && sub != 0 {
            let (v, b) = x.l[k].overflowing_sub(sub);
            x.l[k] = v;
            sub = b as u64;
            k += 1;
        }
        x.l[i] = qi;
    }
    x.n = qn;
    x.trim();
    Some(())
}

/// out ← a · b (a.len() ≥ b.len() ≥ 1, out.len() == a.len() + b.len()); out need not be zeroed.
#[inline]
fn mul_fresh(out: &mut [u64], a: &[u64], b: &[u64]) {
    let an = a.len();
    // First row (b[0]) written, not accumulated.
    let mut carry = 0u64;
    let b0 = b[0] as u128;
    for j in 0..an {
        let p = (a[j] as u128) * b0 + carry as u128;
        out[j] = p as u64;
        carry = (p >> 64) as u64;
    }
    out[an] = carry;
    for (i, &bi) in b.iter().enumerate().skip(1) {
        let bi = bi as u128;
        let mut carry = 0u64;
        let row = &mut out[i..i + an + 1];
        for j in 0..an {
            let p = (a[j] as u128) * bi + row[j] as u128 + carry as u128;
            row[j] = p as u64;
            carry = (p >> 64) as u64;
        }
        row[an] = carry;
    }
}

/// out ← a² (out.len() == 2·a.len()); out need not be zeroed.
#[inline]
fn sqr_fresh(out: &mut [u64], a: &[u64]) {
    let n = a.len();
    out.fill(0);
    // Off-diagonal products a[i]·a[j], i < j, once.
    for i in 0..n {
        let ai = a[i] as u128;
        let mut carry = 0u64;
        for j in i + 1..n {
            let p = ai * (a[j] as u128) + out[i + j] as u128 + carry as u128;
            out[i + j] = p as u64;
            carry = (p >> 64) as u64;
        }
        out[i + n] = carry;
    }
    // Double them, then add the squares a[i]².
    let mut top = 0u64;
    for v in out.iter_mut() {
        let nv = (*v << 1) | top;
        top = *v >> 63;
        *v = nv;
    }
    let mut carry = 0u64;
    for i in 0..n {
        let p = (a[i] as u128) * (a[i] as u128);
        let s = out[2 * i] as u128 + (p as u64) as u128 + carry as u128;
        out[2 * i] = s as u64;
        let s2 = out[2 * i + 1] as u128 + (p >> 64) + (s >> 64);
        out[2 * i + 1] = s2 as u64;
        carry = (s2 >> 64) as u64;
    }
}

/// Zeroes the limbs of v from v.n up to n (no more than a limb or two in the Lehmer kernels: a
/// plain loop, not a call to memset).
#[inline(always)]
fn zero_extend<const N: usize>(v: &mut Num<N>, n: usize) {
    let mut i = v.n;
    while i < n {
        v.l[i] = 0;
        i += 1;
        if i < n {
            v.l[i] = 0;
            i += 1;
        }
    }
}

/// The normalised 64-bit word at limb i of v << s: (v[i] << s) | (v[i − 1] >> (64 − s)), with
/// v[−1] = 0 (s < 64).
#[inline(always)]
fn norm_word(v: &[u64], i: usize, s: u32) -> u64 {
    let hi = v[i] << s;
    if s == 0 || i == 0 {
        hi
    } else {
        hi | (v[i - 1] >> (64 - s))
    }
}

/// Truncated division of magnitudes, in place: r ← |x| mod |d| and, when asked, q ← ⌊|x| / |d|⌋
/// (signs positive); `None` for d = 0 or an x of N limbs. Knuth's Algorithm D with the
/// quotient digits estimated from normalised leading words, the subtractions done on the
/// unnormalised numbers: no shifted copies.
pub(crate) fn divrem_into<const N: usize>(
    r: &mut Num<N>,
    q: Option<&mut Num<N>>,
    x: &Num<N>,
    d: &Num<N>,
) -> Option<()> {
    let n = d.n;
    if n == 0 {
        return None;
    }
    if x.cmp_mag(d) == Ordering::Less {
        r.set(x);
        r.neg = false;
        if let Some(q) = q {
            q.set_u64(0);
        }
        return Some(());
    }
    let m = x.n - n;
    if n == 1 {
        let dv = d.l[0] as u128;
        let mut rem = 0u128;
        let mut qq = q;
        for i in (0..x.n).rev() {
            let cur = (rem << 64) | x.l[i] as u128;
            if let Some(q) = qq.as_deref_mut() {
                q.l[i] = (cur / dv) as u64;
            }
            rem = cur % dv;
        }
        if let Some(q) = qq {
            q.n = x.n;
            q.neg = false;
            q.trim();
        }
        r.set_u64(rem as u64);
        return Some(());
    }
    if x.n + 1 > N {
        return None;
    }
    let u = &mut r.l;
    u[..x.n].copy_from_slice(&x.l[..x.n]);
    u[x.n] = 0;
    let dl = &d.l[..n];
    let s = dl[n - 1].leading_zeros();
    let vtop = norm_word(dl, n - 1, s) as u128;
    let vsec = norm_word(dl, n - 2, s) as u128;
    let mut qq = q;
    for j in (0..=m).rev() {
        let u2 = norm_word(u, j + n, s);
        let u1 = norm_word(u, j + n - 1, s);
        let u0 = norm_word(u, j + n - 2, s);
        let num = ((u2 as u128) << 64) | u1 as u128;
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >> 64 != 0 || qhat * vsec > ((rhat << 64) | u0 as u128) {
            qhat -= 1;
            rhat += vtop;
            if rhat >> 64 != 0 {
                break;
            }
        }
        // u[j..=j+n] −= qhat · d
        let mut borrow = 0u64;
        let mut carry = 0u64;
        for i in 0..n {
            let p = qhat * dl[i] as u128 + carry as u128;
            carry = (p >> 64) as u64;
            let (t, b1) = u[i + j].overflowing_sub(p as u64);
            let (t, b2) = t.overflowing_sub(borrow);
            u[i + j] = t;
            borrow = (b1 | b2) as u64;
        }
        let (t, b1) = u[j + n].overflowing_sub(carry);
        let (t, b2) = t.overflowing_sub(borrow);
        u[j + n] = t;
        let mut qj = qhat as u64;
        if b1 | b2 {
            // Added back: qhat was one too large.
            qj = qj.wrapping_sub(1);
            let mut c = false;
            for i in 0..n {
                let (t, c1) = u[i + j].overflowing_add(dl[i]);
                let (t, c2) = t.overflowing_add(c as u64);
                u[i + j] = t;
                c = c1 | c2;
            }
            u[j + n] = u[j + n].wrapping_add(c as u64);
        }
        if let Some(q) = qq.as_deref_mut() {
            q.l[j] = qj;
        }
    }
    if let Some(q) = qq {
        q.n = m + 1;
        q.neg = false;
        q.trim();
    }
    r.n = n;
    r.neg = false;
    r.trim();
    Some(())
}

fn trailing_zeros(l: &[u64]) -> usize {
    let mut z = 0;
    for &v in l {
        if v == 0 {
            z += 64;
        } else {
            return z + v.trailing_zeros() as usize;
        }
    }
    z
}

/// v^-1 mod 2^64 for odd v (Newton's iteration).
#[inline]
fn inv_mod_2_64(v: u64) -> u64 {
    let mut x = v.wrapping_mul(3) ^ 2; // 5 bits
    for _ in 0..4 {
        x = x.wrapping_mul(2u64.wrapping_sub(v.wrapping_mul(x)));
    }
    x
}
