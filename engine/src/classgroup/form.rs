//! Binary quadratic forms (a, b, c) = ax² + bxy + cy² of a negative discriminant D = b² − 4ac:
//! reduction, composition (Gauss/Shanks, Cohen's Algorithm 5.4.7), squaring by NUDUPL as
//! chiavdf's `nucomp.h` does it (with its Lehmer-accelerated partial extended GCD,
//! [`xgcd_partial`], which chiavdf's compressed encoding needs bit for bit too), and powers.
//!
//! Every group element has exactly one reduced form: −a < b ≤ a ≤ c, and b ≥ 0 when a = c.
//! Results here are always reduced, so two correct algorithms give the same bytes.
//!
//! Variable time (every input is public). Nothing here panics: divisions are guarded, and a
//! form that is not positive definite is returned unreduced rather than looped on.

use super::discriminant::Discriminant;
use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// A binary quadratic form (a, b, c).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Form {
    pub a: BigInt,
    pub b: BigInt,
    pub c: BigInt,
}

impl Form {
    /// The form (a, b, c) as given (not checked, not reduced).
    pub fn new(a: BigInt, b: BigInt, c: BigInt) -> Self {
        Self { a, b, c }
    }

    /// (a, b, (b² − D)/4a), or `None` where a ≤ 0 or 4a does not divide b² − D.
    pub fn from_ab(a: BigInt, b: BigInt, d: &BigInt) -> Option<Self> {
        if !a.is_positive() {
            return None;
        }
        let num = &b * &b - d;
        let den: BigInt = &a << 2u32;
        let (c, r) = num.div_rem(&den);
        r.is_zero().then_some(Self { a, b, c })
    }

    /// The identity (1, 1, (1 − D)/4).
    pub fn identity(d: &Discriminant) -> Self {
        let one = BigInt::one();
        let c = (&one - d.value()) >> 2u32;
        Self {
            a: one.clone(),
            b: one,
            c,
        }
    }

    /// chiavdf's generator (2, 1, (1 − D)/8), the form its byte 0x08 stands for; `None` unless
    /// D ≡ 1 (mod 8) (every discriminant chiavdf creates is).
    pub fn generator(d: &Discriminant) -> Option<Self> {
        Self::from_ab(BigInt::from(2), BigInt::one(), d.value()).map(|f| f.reduce())
    }

    /// b² − 4ac.
    pub fn discriminant(&self) -> BigInt {
        &self.b * &self.b - ((&self.a * &self.c) << 2u32)
    }

    /// Whether the form is reduced: −a < b ≤ a ≤ c, and b ≥ 0 if a = c (a > 0).
    pub fn is_reduced(&self) -> bool {
        let neg_a = -&self.a;
        self.a.is_positive()
            && neg_a < self.b
            && self.b <= self.a
            && self.a <= self.c
            && !(self.a == self.c && self.b.is_negative())
    }

    /// Whether the form is a reduced, primitive form of discriminant `d`.
    pub fn is_valid_for(&self, d: &Discriminant) -> bool {
        self.check(d).is_ok()
    }

    /// Why the form is not a reduced, primitive form of `d` (the reason of
    /// [`Error::BadForm`](crate::Error::BadForm)).
    pub(crate) fn check(&self, d: &Discriminant) -> Result<(), &'static str> {
        if !self.a.is_positive() {
            return Err("a is not positive");
        }
        if self.discriminant() != *d.value() {
            return Err("b^2 - 4ac is not the discriminant");
        }
        if !self.is_reduced() {
            return Err("not reduced");
        }
        if !self.a.gcd(&self.b).gcd(&self.c).is_one() {
            return Err("not primitive");
        }
        Ok(())
    }

    /// The inverse (a, −b, c), reduced.
    pub fn inverse(&self) -> Self {
        Self::new(self.a.clone(), -&self.b, self.c.clone()).reduce()
    }

    /// The reduced form equivalent to this one. A form that is not positive definite (a ≤ 0 or
    /// c ≤ 0) is returned as it is.
    pub fn reduce(mut self) -> Self {
        if !self.a.is_positive() || !self.c.is_positive() {
            return self;
        }
        self.normalize();
        while self.a > self.c || (self.a == self.c && self.b.is_negative()) {
            if self.a > self.c {
                std::mem::swap(&mut self.a, &mut self.c);
                self.b = -std::mem::take(&mut self.b);
                self.normalize();
            } else {
                self.b = -std::mem::take(&mut self.b);
            }
        }
        self
    }

    /// Brings b into (−a, a] (a > 0): r = ⌊(a − b)/2a⌋, (a, b + 2ra, ar² + br + c).
    fn normalize(&mut self) {
        let neg_a = -&self.a;
        if neg_a < self.b && self.b <= self.a {
            return;
        }
        let two_a: BigInt = &self.a << 1u32;
        let r = (&self.a - &self.b).div_floor(&two_a);
        let ra = &r * &self.a;
        // c' = r(ar + b) + c, b' = b + 2ra
        self.c += &r * (&ra + &self.b);
        self.b += ra << 1u32;
    }

    /// The reduced product of two forms of discriminant `d` (Cohen, Algorithm 5.4.7).
    pub fn compose(&self, other: &Self, d: &Discriminant) -> Self {
        multiply(self, other, d.value(), d.fourth_root())
    }

    /// The reduced square, by NUDUPL.
    pub fn square(&self, d: &Discriminant) -> Self {
        square(self, d.value(), d.fourth_root())
    }

    /// self^e, reduced (the identity for e = 0).
    pub fn pow(&self, e: &BigUint, d: &Discriminant) -> Self {
        pow(self, e, d.value(), d.fourth_root())
    }
}

/// The reduced product (Cohen, Algorithm 5.4.7), for forms of discriminant `d`.
pub(crate) fn compose(f1: &Form, f2: &Form, d: &BigInt) -> Form {
    let (f1, f2) = if f1.a > f2.a { (f2, f1) } else { (f1, f2) };
    let (a1, b1) = (&f1.a, &f1.b);
    let (a2, b2, c2) = (&f2.a, &f2.b, &f2.c);
    if !a1.is_positive() {
        return f1.clone();
    }
    let s: BigInt = (b1 + b2) >> 1u32;
    let n = b2 - &s;
    // y1·a1 ≡ d (mod a2), d = gcd(a1, a2)
    let (dd, y1) = if a2.is_multiple_of(a1) {
        (a1.clone(), BigInt::zero())
    } else {
        let (g, u, _) = xgcd(a2, a1);
        (g, u)
    };
    let (d1, x2, y2) = if s.is_multiple_of(&dd) {
        (dd.clone(), BigInt::zero(), -BigInt::one())
    } else {
        let (g, u, v) = xgcd(&s, &dd);
        (g, u, -v)
    };
    if d1.is_zero() {
        return f1.clone();
    }
    let v1 = a1 / &d1;
    let v2 = a2 / &d1;
    if v1.is_zero() {
        return f1.clone();
    }
    let r = (&y1 * &y2 * &n - &x2 * c2).mod_floor(&v1);
    let b3 = b2 + ((&v2 * &r) << 1u32);
    let a3 = &v1 * &v2;
    match Form::from_ab(a3, b3, d) {
        Some(f) => f.reduce(),
        None => f1.clone(),
    }
}

/// The reduced product by NUCOMP ([`nucomp`]) then reduction: intermediates stay about half
/// the size of Gauss composition's, so the reduction is a step or two instead of hundreds.
/// Falls back to [`compose`] where NUCOMP declines.
pub(crate) fn multiply(f1: &Form, f2: &Form, d: &BigInt, l: &BigInt) -> Form {
    match nucomp(f1, f2, d, l) {
        Some(g) => g.reduce(),
        None => compose(f1, f2, d),
    }
}

/// NUCOMP (Shanks, in the form of Antic's `qfb_nucomp` that chiavdf uses): the product of two
/// reduced forms of `d`, not necessarily reduced. `l` = ⌊|D|^(1/4)⌋. `None` where a division
/// by zero would follow (inputs that are not forms of `d`).
pub(crate) fn nucomp(f: &Form, g: &Form, d: &BigInt, l: &BigInt) -> Option<Form> {
    let (f, g) = if f.a > g.a { (g, f) } else { (f, g) };
    if !f.a.is_positive() || !g.a.is_positive() {
        return None;
    }
    let (mut a1, mut a2, mut c2) = (f.a.clone(), g.a.clone(), g.c.clone());
    let ss: BigInt = (&f.b + &g.b) >> 1u32;
    let m: BigInt = (&f.b - &g.b) >> 1u32;
    // sp = gcd(a2 mod a1, a1) = v1·(a2 mod a1) + …·a1
    let t = a2.mod_floor(&a1);
    let (sp, v1) = if t.is_zero() {
        (a1.clone(), BigInt::zero())
    } else {
        let (g, u, _) = xgcd(&t, &a1);
        (g, u)
    };
    let mut k = (&m * &v1).mod_floor(&a1);
    if !sp.is_one() {
        // s = gcd(ss, sp) = v2·ss + u2·sp
        let (s, v2, u2) = xgcd(&ss, &sp);
        k = &k * &u2 - &v2 * &c2;
        if !s.is_one() {
            if s.is_zero() {
                return None;
            }
            a1 = &a1 / &s;
            a2 = &a2 / &s;
            c2 *= &s;
        }
        k = k.mod_floor(&a1);
    }
    if a1 < *l {
        let t = &a2 * &k;
        let ca = &a2 * &a1;
        let cb = (&t << 1u32) + &g.b;
        let cc = ((&g.b + &t) * &k + &c2) / &a1;
        return Some(Form::new(ca, cb, cc));
    }
    let (co2, co1, _r2, r1) = xgcd_partial(a1.clone(), k, l);
    if co1.is_zero() {
        return None;
    }
    let t = &a2 * &r1;
    let m1 = (&m * &co1 + &t) / &a1;
    let m2 = (&ss * &r1 - &c2 * &co1) / &a1;
    let mut ca = if co1.is_negative() {
        &r1 * &m1 - &co1 * &m2
    } else {
        &co1 * &m2 - &r1 * &m1
    };
    if ca.is_zero() {
        return None;
    }
    let cb = (((&t - &ca * &co2) << 1u32) / &co1 - &g.b).mod_floor(&(&ca << 1u32));
    let mut cc: BigInt = ((&cb * &cb - d) / &ca) >> 2u32;
    if ca.is_negative() {
        ca = -ca;
        cc = -cc;
    }
    Some(Form::new(ca, cb, cc))
}

/// The reduced square, by NUDUPL ([`nudupl`]) then reduction.
pub(crate) fn square(f: &Form, d: &BigInt, l: &BigInt) -> Form {
    match nudupl(f, d, l) {
        Some(g) => g.reduce(),
        None => compose(f, f, d),
    }
}

/// self^e by left-to-right square-and-multiply.
pub(crate) fn pow(f: &Form, e: &BigUint, d: &BigInt, l: &BigInt) -> Form {
    let bits = e.bits();
    if bits == 0 {
        let c = (BigInt::one() - d) >> 2u32;
        return Form::new(BigInt::one(), BigInt::one(), c);
    }
    let mut res = f.clone();
    for i in (0..bits - 1).rev() {
        res = square(&res, d, l);
        if e.bit(i) {
            res = multiply(&res, f, d, l);
        }
    }
    res
}

/// chiavdf's `qfb_nudupl` (William Hart's NUDUPL from Antic/Flint): the square of a reduced
/// form, not necessarily reduced. `l` = ⌊|D|^(1/4)⌋. `None` only for inputs that are not
/// forms of `d` (a division by zero would follow).
pub(crate) fn nudupl(f: &Form, d: &BigInt, l: &BigInt) -> Option<Form> {
    let (a, b, c) = (&f.a, &f.b, &f.c);
    if !a.is_positive() {
        return None;
    }
    // s = gcd(|b|, a), v2·b ≡ s (mod a)
    let (s, v2_abs) = gcd_cofactor(a, &b.abs());
    let v2 = if b.is_negative() { -v2_abs } else { v2_abs };
    let mut k = -(&v2 * c);
    let (a1, c1) = if s.is_one() {
        (a.clone(), c.clone())
    } else {
        if s.is_zero() {
            return None;
        }
        (a.div_floor(&s), c * &s)
    };
    k = k.mod_floor(&a1);
    if a1 < *l {
        let t = &a1 * &k;
        let ra = &a1 * &a1;
        let cb = (&t << 1u32) + b;
        let rc = ((b + &t) * &k + &c1).div_floor(&a1);
        return Some(Form::new(ra, cb, rc));
    }
    let (co2, co1, _r2, r1) = xgcd_partial(a1.clone(), k, l);
    if co1.is_zero() {
        return None;
    }
    let m2 = (b * &r1 - &c1 * &co1) / &a1;
    let mut ra = &r1 * &r1 - &co1 * &m2;
    if !co1.is_negative() {
        ra = -ra;
    }
    if ra.is_zero() {
        return None;
    }
    let mut cb = &a1 * &r1 - &ra * &co2;
    cb = (cb << 1u32) / &co1 - b;
    cb = cb.mod_floor(&(&ra << 1u32));
    let mut rc = (&cb * &cb - d) / &ra;
    rc /= 4;
    if ra.is_negative() {
        ra = -ra;
        rc = -rc;
    }
    Some(Form::new(ra, cb, rc))
}

/// The low 64 bits of |x| >> shift, as a signed limb (chiavdf: `mpz_tdiv_q_2exp` then
/// `mpz_get_ui`).
fn limb_of_shift(x: &BigInt, shift: u64) -> i64 {
    let m: BigUint = x.magnitude() >> shift;
    m.iter_u64_digits().next().unwrap_or(0) as i64
}

/// Bit length as GMP's `mpz_sizeinbase(x, 2)` (1 for 0).
fn size_in_base2(x: &BigInt) -> i64 {
    x.bits().max(1) as i64
}

/// chiavdf's `mpz_xgcd_partial(co2, co1, r2, r1, L)` (William Hart's, Lehmer-accelerated with
/// Jebelean's conditions): runs the extended Euclidean algorithm on (r2, r1) until r1 ≤ L,
/// keeping r ≡ −co·r1_orig (mod r2_orig). Returns (co2, co1, r2, r1). Reproduced step for step:
/// where it stops is visible in chiavdf's compressed form encoding.
pub fn xgcd_partial(
    mut r2: BigInt,
    mut r1: BigInt,
    l: &BigInt,
) -> (BigInt, BigInt, BigInt, BigInt) {
    let mut co2 = BigInt::zero();
    let mut co1 = -BigInt::one();
    while !r1.is_zero() && r1 > *l {
        let bits = (size_in_base2(&r2).max(size_in_base2(&r1)) - 64 + 1).max(0) as u64;
        let mut rr2 = limb_of_shift(&r2, bits);
        let mut rr1 = limb_of_shift(&r1, bits);
        let bb = limb_of_shift(l, bits);
        let (mut aa2, mut aa1, mut bb2, mut bb1) = (0i64, 1i64, 1i64, 0i64);
        let mut i = 0u64;
        while rr1 != 0 && rr1 > bb {
            let qq = rr2 / rr1;
            let t1 = rr2.wrapping_sub(qq.wrapping_mul(rr1));
            let t2 = aa2.wrapping_sub(qq.wrapping_mul(aa1));
            let t3 = bb2.wrapping_sub(qq.wrapping_mul(bb1));
            let stop = if i & 1 == 1 {
                t1 < t3.wrapping_neg() || rr1.wrapping_sub(t1) < t2.wrapping_sub(aa1)
            } else {
                t1 < t2.wrapping_neg() || rr1.wrapping_sub(t1) < t3.wrapping_sub(bb1)
            };
            if stop {
                break;
            }
            rr2 = rr1;
            rr1 = t1;
            aa2 = aa1;
            aa1 = t2;
            bb2 = bb1;
            bb1 = t3;
            i += 1;
        }
        if i == 0 {
            let (q, r) = r2.div_mod_floor(&r1);
            r2 = r1;
            r1 = r;
            let next = &co2 - &co1 * &q;
            co2 = std::mem::replace(&mut co1, next);
        } else {
            let new_r2 = &r2 * bb2 + &r1 * aa2;
            r1 = &r1 * aa1 + &r2 * bb1;
            r2 = new_r2;
            let new_co2 = &co2 * bb2 + &co1 * aa2;
            co1 = &co1 * aa1 + &co2 * bb1;
            co2 = new_co2;
            if r1.is_negative() {
                co1 = -co1;
                r1 = -r1;
            }
            if r2.is_negative() {
                co2 = -co2;
                r2 = -r2;
            }
        }
    }
    if r2.is_negative() {
        co2 = -co2;
        co1 = -co1;
        r2 = -r2;
    }
    (co2, co1, r2, r1)
}

/// For a, b ≥ 0: (g, v) with g = gcd(a, b) and v·b ≡ g (mod a), by [`xgcd_partial`] run to the
/// end.
fn gcd_cofactor(a: &BigInt, b: &BigInt) -> (BigInt, BigInt) {
    let (co2, _co1, r2, _r1) = xgcd_partial(a.clone(), b.clone(), &BigInt::zero());
    (r2, -co2)
}

/// (g, u, v) with u·a + v·b = g = gcd(a, b) ≥ 0, for any signs.
pub(crate) fn xgcd(a: &BigInt, b: &BigInt) -> (BigInt, BigInt, BigInt) {
    let sign = |x: &BigInt| match x.sign() {
        Sign::Minus => -BigInt::one(),
        _ => BigInt::one(),
    };
    let (aa, ba) = (a.abs(), b.abs());
    if ba.is_zero() {
        return (aa, sign(a), BigInt::zero());
    }
    if aa.is_zero() {
        return (ba, BigInt::zero(), sign(b));
    }
    let (g, v) = gcd_cofactor(&aa, &ba);
    let u = (&g - &v * &ba) / &aa;
    (g, u * sign(a), v * sign(b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn disc() -> Discriminant {
        Discriminant::from_seed(b"form tests", 512).unwrap()
    }

    /// A pseudo-random reduced form: the generator to a random power.
    fn random_form(d: &Discriminant, e: u64) -> Form {
        Form::generator(d).unwrap().pow(&BigUint::from(e), d)
    }

    #[test]
    fn xgcd_is_a_bezout_identity() {
        let cases = [
            (240i64, 46i64),
            (-240, 46),
            (17, -5),
            (0, 9),
            (9, 0),
            (1, 1),
        ];
        for (a, b) in cases {
            let (a, b) = (BigInt::from(a), BigInt::from(b));
            let (g, u, v) = xgcd(&a, &b);
            assert_eq!(g, a.gcd(&b));
            assert_eq!(&u * &a + &v * &b, g);
        }
        let big = BigInt::parse_bytes(b"123456789012345678901234567890123456789012345678901", 10)
            .unwrap();
        let other = BigInt::parse_bytes(b"98765432109876543210987654321098765431", 10).unwrap();
        let (g, u, v) = xgcd(&big, &other);
        assert_eq!(&u * &big + &v * &other, g);
        assert_eq!(g, big.gcd(&other));
    }

    #[test]
    fn identity_and_generator_are_valid() {
        let d = disc();
        assert!(Form::identity(&d).is_valid_for(&d));
        let g = Form::generator(&d).unwrap();
        assert!(g.is_valid_for(&d));
        assert_eq!(g.compose(&Form::identity(&d), &d), g);
        assert_eq!(g.compose(&g.inverse(), &d), Form::identity(&d));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn square_is_compose_with_itself(e in 1u64..1_000_000) {
            let d = disc();
            let f = random_form(&d, e);
            prop_assert!(f.is_valid_for(&d));
            let sq = f.square(&d);
            prop_assert!(sq.is_valid_for(&d));
            prop_assert_eq!(&sq, &f.compose(&f, &d));
        }

        #[test]
        fn composition_is_associative_and_commutative(
            e1 in 1u64..1_000_000, e2 in 1u64..1_000_000, e3 in 1u64..1_000_000
        ) {
            let d = disc();
            let (f, g, h) = (random_form(&d, e1), random_form(&d, e2), random_form(&d, e3));
            let left = f.compose(&g, &d).compose(&h, &d);
            let right = f.compose(&g.compose(&h, &d), &d);
            prop_assert!(left.is_valid_for(&d));
            prop_assert_eq!(&left, &right);
            prop_assert_eq!(f.compose(&g, &d), g.compose(&f, &d));
        }

        #[test]
        fn nucomp_equals_gauss_composition(e1 in 1u64..1_000_000, e2 in 1u64..1_000_000, inv: bool) {
            let d = disc();
            let f = random_form(&d, e1);
            let g = random_form(&d, e2);
            let g = if inv { g.inverse() } else { g };
            prop_assert_eq!(multiply(&f, &g, d.value(), d.fourth_root()), compose(&f, &g, d.value()));
            prop_assert_eq!(multiply(&f, &f, d.value(), d.fourth_root()), compose(&f, &f, d.value()));
            prop_assert_eq!(multiply(&f, &f.inverse(), d.value(), d.fourth_root()), Form::identity(&d));
        }

        #[test]
        fn powers_add(e1 in 0u64..100_000, e2 in 0u64..100_000) {
            let d = disc();
            let f = random_form(&d, 12345);
            let lhs = f.pow(&BigUint::from(e1 + e2), &d);
            let rhs = f.pow(&BigUint::from(e1), &d).compose(&f.pow(&BigUint::from(e2), &d), &d);
            prop_assert_eq!(lhs, rhs);
        }

        #[test]
        fn reduce_finds_the_same_form_from_any_equivalent_one(e in 1u64..100_000, r in -50i64..50) {
            let d = disc();
            let f = random_form(&d, e);
            // (a, b + 2ra, ar² + br + c) is equivalent to (a, b, c).
            let r = BigInt::from(r);
            let moved = Form::new(
                f.a.clone(),
                &f.b + ((&r * &f.a) << 1u32),
                &f.a * &r * &r + &f.b * &r + &f.c,
            );
            prop_assert_eq!(moved.discriminant(), d.value().clone());
            // and swapping (c, -b, a) too
            let swapped = Form::new(moved.c.clone(), -&moved.b, moved.a.clone());
            prop_assert_eq!(swapped.reduce(), f);
        }
    }
}
