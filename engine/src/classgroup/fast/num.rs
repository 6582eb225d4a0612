//! Stack-allocated sign-magnitude integers of at most `N` 64-bit limbs, with the few operations
//! NUDUPL needs. Every operation that could outgrow `N` limbs checks first and returns `None`
//! (the caller then falls back to num-bigint); nothing here allocates or panics.

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

    #[inline]
    pub(crate) fn neg(mut self) -> Self {
        if self.n != 0 {
            self.neg = !self.neg;
        }
        self
    }

    #[inline]
    pub(crate) fn abs(mut self) -> Self {
        self.neg = false;
        self
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

    /// self + o.
    #[inline]
    pub(crate) fn add(&self, o: &Self) -> Option<Self> {
        if self.neg == o.neg {
            let mut r = add_mag(self, o)?;
            r.neg = self.neg;
            r.trim();
            Some(r)
        } else {
            // Different signs: |larger| − |smaller| with the larger's sign.
            let (big, small) = if self.cmp_mag(o) != Ordering::Less {
                (self, o)
            } else {
                (o, self)
            };
            let mut r = sub_mag(big, small);
            r.neg = big.neg;
            r.trim();
            Some(r)
        }
    }

    /// self − o.
    #[inline]
    pub(crate) fn sub(&self, o: &Self) -> Option<Self> {
        self.add(&o.neg())
    }

    /// self · 2^k for k < 64.
    #[inline]
    pub(crate) fn shl_small(&self, k: u32) -> Option<Self> {
        if k == 0 || self.n == 0 {
            return Some(*self);
        }
        let mut r = Self::ZERO;
        let mut carry = 0u64;
        for i in 0..self.n {
            r.l[i] = (self.l[i] << k) | carry;
            carry = self.l[i] >> (64 - k);
        }
        r.n = self.n;
        if carry != 0 {
            if self.n >= N {
                return None;
            }
            r.l[self.n] = carry;
            r.n += 1;
        }
        r.neg = self.neg;
        Some(r)
    }

    /// |self| >> k, keeping the sign (only used where the low bits are zero).
    #[inline]
    pub(crate) fn shr_mag(&self, k: usize) -> Self {
        let ls = k / 64;
        let bs = (k % 64) as u32;
        let mut r = Self::ZERO;
        if ls >= self.n {
            return r;
        }
        let n = self.n - ls;
        for i in 0..n {
            let lo = self.l[i + ls] >> bs;
            let hi = if bs != 0 && i + ls + 1 < self.n {
                self.l[i + ls + 1] << (64 - bs)
            } else {
                0
            };
            r.l[i] = lo | hi;
        }
        r.n = n;
        r.neg = self.neg;
        r.trim();
        r
    }

    /// self · o.
    #[inline]
    pub(crate) fn mul(&self, o: &Self) -> Option<Self> {
        if self.n == 0 || o.n == 0 {
            return Some(Self::ZERO);
        }
        if self.n + o.n > N {
            return None;
        }
        let mut r = Self::ZERO;
        mul_into(&mut r.l[..self.n + o.n], self.limbs(), o.limbs());
        r.n = self.n + o.n;
        r.neg = self.neg != o.neg;
        r.trim();
        Some(r)
    }

    /// (x, y) ← (p·x + q·y, r·x + s·y) in place, in one pass; |p|, |q|, |r|, |s| < 2^62.
    /// Each row is a sum or a difference of two unsigned products, by the signs of its terms.
    #[inline]
    pub(crate) fn mat_apply(
        x: &mut Self,
        y: &mut Self,
        p: i64,
        q: i64,
        r: i64,
        s: i64,
    ) -> Option<()> {
        let n = x.n.max(y.n);
        if n + 1 > N {
            return None;
        }
        x.l[x.n..=n].fill(0);
        y.l[y.n..=n].fill(0);
        // Signs of the four terms p·x, q·y, r·x, s·y.
        let sp = (p < 0) != x.neg;
        let sq = (q < 0) != y.neg;
        let sr = (r < 0) != x.neg;
        let ss = (s < 0) != y.neg;
        let (pu, qu, ru, su) = (
            p.unsigned_abs(),
            q.unsigned_abs(),
            r.unsigned_abs(),
            s.unsigned_abs(),
        );
        // Row value = ±(A − B) or ±(A + B), A, B ≥ 0 the magnitudes of its two terms.
        let (cx, cy) = match (sp == sq, sr == ss) {
            (true, true) => rows::<N, false, false>(&mut x.l, &mut y.l, n, pu, qu, ru, su),
            (true, false) => rows::<N, false, true>(&mut x.l, &mut y.l, n, pu, qu, ru, su),
            (false, true) => rows::<N, true, false>(&mut x.l, &mut y.l, n, pu, qu, ru, su),
            (false, false) => rows::<N, true, true>(&mut x.l, &mut y.l, n, pu, qu, ru, su),
        };
        x.n = n + 1;
        y.n = n + 1;
        // Row value = sign_of_first_term · (two's complement result).
        x.l[n] = cx as u64;
        y.l[n] = cy as u64;
        x.fix_twos_complement(cx < 0);
        y.fix_twos_complement(cy < 0);
        if sp && x.n != 0 {
            x.neg = !x.neg;
        }
        if sr && y.n != 0 {
            y.neg = !y.neg;
        }
        Some(())
    }

    /// Turns the two's complement value in l[..n] (negative iff `negative`) into sign-magnitude.
    #[inline]
    fn fix_twos_complement(&mut self, negative: bool) {
        self.neg = false;
        if negative {
            let mut c = 1u64;
            for limb in self.l[..self.n].iter_mut() {
                let (v, o) = (!*limb).overflowing_add(c);
                *limb = v;
                c = o as u64;
            }
            self.neg = true;
        }
        self.trim();
    }

    /// (⌊self / d⌋, self mod d) with the remainder in [0, |d|); d ≠ 0 (else `None`).
    #[inline]
    pub(crate) fn floor_divmod(&self, d: &Self) -> Option<(Self, Self)> {
        let (mut q, mut r) = divrem_mag(self, d)?;
        // Truncated division of magnitudes; adjust to floor with a non-negative remainder.
        let qneg = self.neg != d.neg;
        q.neg = qneg;
        q.trim();
        if self.neg && !r.is_zero() {
            // self = −(|q||d| + r) → remainder |d| − r, quotient moves one away from zero.
            r = sub_mag(&d.abs(), &r);
            r.trim();
            let one = Self::from_u64(1);
            q = if qneg { q.sub(&one)? } else { q.add(&one)? };
        }
        r.neg = false;
        Some((q, r))
    }

    /// self mod m in [0, m), m > 0.
    #[inline]
    pub(crate) fn modp(&self, m: &Self) -> Option<Self> {
        if self.neg || self.cmp_mag(m) != Ordering::Less {
            Some(self.floor_divmod(m)?.1)
        } else {
            Some(*self)
        }
    }

    /// self / d where d divides self exactly (2-adic division); d ≠ 0.
    #[inline]
    pub(crate) fn divexact(&self, d: &Self) -> Option<Self> {
        if d.n == 0 {
            return None;
        }
        if self.n == 0 {
            return Some(Self::ZERO);
        }
        let tz = trailing_zeros(d.limbs());
        let (x, y) = if tz == 0 {
            (*self, *d)
        } else {
            (self.shr_mag(tz), d.shr_mag(tz))
        };
        if x.n < y.n {
            // Only possible if self was not a multiple of d, or is zero.
            return if x.n == 0 { Some(Self::ZERO) } else { None };
        }
        let qn = x.n - y.n + 1;
        let inv = inv_mod_2_64(y.l[0]);
        let mut rem = x.l;
        let mut q = Self::ZERO;
        for i in 0..qn {
            let qi = rem[i].wrapping_mul(inv);
            q.l[i] = qi;
            // rem[i..qn] −= qi · y (only the limbs below qn matter).
            let m = y.n.min(qn - i);
            let mut borrow = 0u64;
            let mut carry = 0u64;
            for j in 0..m {
                let p = (qi as u128) * (y.l[j] as u128) + carry as u128;
                carry = (p >> 64) as u64;
                let (v, b1) = rem[i + j].overflowing_sub(p as u64);
                let (v, b2) = v.overflowing_sub(borrow);
                rem[i + j] = v;
                borrow = (b1 | b2) as u64;
            }
            let mut k = i + m;
            let mut sub = carry + borrow;
            while k < qn && sub != 0 {
                let (v, b) = rem[k].overflowing_sub(sub);
                rem[k] = v;
                sub = b as u64;
                k += 1;
            }
        }
        q.n = qn;
        q.neg = self.neg != d.neg;
        q.trim();
        Some(q)
    }
}

/// The limb loop of [`Num::mat_apply`]: x' = |p|·|x| ∓ |q|·|y|, y' = |r|·|x| ∓ |s|·|y| over n limbs
/// (subtracting where SUBX / SUBY), in place; returns the signed top limbs. Each product is
/// below 2^126, so one i128 accumulator per row holds a limb's sum and the carry.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn rows<const N: usize, const SUBX: bool, const SUBY: bool>(
    x: &mut [u64; N],
    y: &mut [u64; N],
    n: usize,
    p: u64,
    q: u64,
    r: u64,
    s: u64,
) -> (i64, i64) {
    let (mut cx, mut cy) = (0i128, 0i128);
    let n = n.min(N);
    for i in 0..n {
        let xi = x[i] as u128;
        let yi = y[i] as u128;
        let a = (xi * p as u128) as i128;
        let b = (yi * q as u128) as i128;
        let c = (xi * r as u128) as i128;
        let d = (yi * s as u128) as i128;
        let vx = if SUBX { a - b + cx } else { a + b + cx };
        let vy = if SUBY { c - d + cy } else { c + d + cy };
        x[i] = vx as u64;
        y[i] = vy as u64;
        cx = vx >> 64;
        cy = vy >> 64;
    }
    (cx as i64, cy as i64)
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

/// |x| + |y| (sign unset).
#[inline]
fn add_mag<const N: usize>(x: &Num<N>, y: &Num<N>) -> Option<Num<N>> {
    let (a, b) = if x.n >= y.n { (x, y) } else { (y, x) };
    let mut r = Num::ZERO;
    let mut carry = false;
    for i in 0..a.n {
        let bi = if i < b.n { b.l[i] } else { 0 };
        let (v, c1) = a.l[i].overflowing_add(bi);
        let (v, c2) = v.overflowing_add(carry as u64);
        r.l[i] = v;
        carry = c1 | c2;
    }
    r.n = a.n;
    if carry {
        if a.n >= N {
            return None;
        }
        r.l[a.n] = 1;
        r.n += 1;
    }
    Some(r)
}

/// |x| − |y| for |x| ≥ |y| (sign unset, not trimmed).
#[inline]
fn sub_mag<const N: usize>(x: &Num<N>, y: &Num<N>) -> Num<N> {
    let mut r = Num::ZERO;
    let mut borrow = false;
    for i in 0..x.n {
        let yi = if i < y.n { y.l[i] } else { 0 };
        let (v, b1) = x.l[i].overflowing_sub(yi);
        let (v, b2) = v.overflowing_sub(borrow as u64);
        r.l[i] = v;
        borrow = b1 | b2;
    }
    r.n = x.n;
    r
}

/// out = a · b, out.len() == a.len() + b.len() (out zeroed by the caller).
#[inline]
pub(crate) fn mul_into(out: &mut [u64], a: &[u64], b: &[u64]) {
    for (i, &ai) in a.iter().enumerate() {
        let mut carry = 0u64;
        let row = &mut out[i..i + b.len() + 1];
        for (j, &bj) in b.iter().enumerate() {
            let p = (ai as u128) * (bj as u128) + row[j] as u128 + carry as u128;
            row[j] = p as u64;
            carry = (p >> 64) as u64;
        }
        row[b.len()] = carry;
    }
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

/// Truncated division of magnitudes: (|x| / |d|, |x| mod |d|), signs unset; `None` for d = 0.
/// Knuth's Algorithm D.
#[inline]
pub(crate) fn divrem_mag<const N: usize>(x: &Num<N>, d: &Num<N>) -> Option<(Num<N>, Num<N>)> {
    if d.n == 0 {
        return None;
    }
    if x.cmp_mag(d) == Ordering::Less {
        return Some((Num::ZERO, x.abs()));
    }
    let mut q = Num::ZERO;
    let mut r = Num::ZERO;
    if d.n == 1 {
        let dv = d.l[0] as u128;
        let mut rem = 0u128;
        for i in (0..x.n).rev() {
            let cur = (rem << 64) | x.l[i] as u128;
            q.l[i] = (cur / dv) as u64;
            rem = cur % dv;
        }
        q.n = x.n;
        q.trim();
        r.l[0] = rem as u64;
        r.n = 1;
        r.trim();
        return Some((q, r));
    }
    let n = d.n;
    let m = x.n - n;
    let s = d.l[n - 1].leading_zeros();
    // Normalised copies: v = d << s (n limbs), u = x << s (x.n + 1 limbs).
    let mut v = [0u64; N];
    let mut u = [0u64; N];
    // u needs x.n + 1 limbs; x.n + 1 ≤ N may fail for a full-width x.
    if x.n + 1 > N {
        return None;
    }
    for i in (0..n).rev() {
        v[i] = (d.l[i] << s)
            | if s != 0 && i > 0 {
                d.l[i - 1] >> (64 - s)
            } else {
                0
            };
    }
    u[x.n] = if s != 0 { x.l[x.n - 1] >> (64 - s) } else { 0 };
    for i in (0..x.n).rev() {
        u[i] = (x.l[i] << s)
            | if s != 0 && i > 0 {
                x.l[i - 1] >> (64 - s)
            } else {
                0
            };
    }
    let vtop = v[n - 1] as u128;
    let vsec = v[n - 2] as u128;
    for j in (0..=m).rev() {
        let num = ((u[j + n] as u128) << 64) | u[j + n - 1] as u128;
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >> 64 != 0 || qhat * vsec > ((rhat << 64) | u[j + n - 2] as u128) {
            qhat -= 1;
            rhat += vtop;
            if rhat >> 64 != 0 {
                break;
            }
        }
        // u[j..j+n+1] −= qhat · v
        let mut borrow = 0u64;
        let mut carry = 0u64;
        for i in 0..n {
            let p = qhat * v[i] as u128 + carry as u128;
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
                let (t, c1) = u[i + j].overflowing_add(v[i]);
                let (t, c2) = t.overflowing_add(c as u64);
                u[i + j] = t;
                c = c1 | c2;
            }
            u[j + n] = u[j + n].wrapping_add(c as u64);
        }
        q.l[j] = qj;
    }
    q.n = m + 1;
    q.trim();
    for i in 0..n {
        r.l[i] = (u[i] >> s) | if s != 0 { u[i + 1] << (64 - s) } else { 0 };
    }
    r.n = n;
    r.trim();
    Some((q, r))
}
