//! NUCOMP on fixed-width [`Num`]s: the product of two reduced forms of discriminant D with
//! Shanks' partial reduction stopped at L = ⌊|D|^(1/4)⌋, then a final reduction. The formulas
//! are those of [`form::nucomp`](super::super::form::nucomp) (Antic's `qfb_nucomp`, which
//! chiavdf uses), with both gcd steps: gcd(a1, a2) = 1 (the common case) and the general one.
//! Declines (`None`) where the fixed width or the common shape does not hold (a1 = a2 or a2 a
//! multiple of a1, which includes f·f and f·f⁻¹; a1 ≤ L, which only forms near the identity
//! have; an unusually long reduction; an operation outgrowing `N` limbs); the caller then
//! composes those two forms with num-bigint. Reduced forms are unique, so the result is the
//! reference's, bit for bit.
//!
//! Every intermediate lives in a [`Scratch`] made once per run of compositions and is computed
//! in place: nothing is allocated inside.

use super::euclid::Euclid;
use super::nudupl::reduce;
use super::num::Num;
use crate::classgroup::form::Form;
use std::cmp::Ordering;

/// A form (a, b, c) on fixed-width integers (not `Copy`: copies of it are explicit).
#[derive(Clone, Debug)]
pub(crate) struct NumForm<const N: usize> {
    pub(crate) a: Num<N>,
    pub(crate) b: Num<N>,
    pub(crate) c: Num<N>,
}

impl<const N: usize> NumForm<N> {
    pub(crate) const ZERO: Self = Self {
        a: Num::ZERO,
        b: Num::ZERO,
        c: Num::ZERO,
    };

    /// `None` where a coefficient does not fit in `N` limbs.
    pub(crate) fn from_form(f: &Form) -> Option<Self> {
        Some(Self {
            a: Num::from_bigint(&f.a)?,
            b: Num::from_bigint(&f.b)?,
            c: Num::from_bigint(&f.c)?,
        })
    }

    pub(crate) fn to_form(&self) -> Form {
        Form::new(self.a.to_bigint(), self.b.to_bigint(), self.c.to_bigint())
    }
}

/// The working space of [`nucomp`]; the product is left in `out`.
#[derive(Clone, Debug)]
pub(crate) struct Scratch<const N: usize> {
    e: Euclid<N>,
    a1: Num<N>,
    a2: Num<N>,
    c2: Num<N>,
    ss: Num<N>,
    m: Num<N>,
    k: Num<N>,
    /// The general case only: gcd(a1, a2), and g2 = gcd(a1, a2, ss).
    sp: Num<N>,
    g2: Num<N>,
    v2: Num<N>,
    u2: Num<N>,
    t: Num<N>,
    m1: Num<N>,
    m2: Num<N>,
    /// Temporaries u, v, w, x (also the reduction's).
    tmp: [Num<N>; 4],
    pub(crate) out: NumForm<N>,
}

impl<const N: usize> Scratch<N> {
    pub(crate) const fn new() -> Self {
        Self {
            e: Euclid::new(),
            a1: Num::ZERO,
            a2: Num::ZERO,
            c2: Num::ZERO,
            ss: Num::ZERO,
            m: Num::ZERO,
            k: Num::ZERO,
            sp: Num::ZERO,
            g2: Num::ZERO,
            v2: Num::ZERO,
            u2: Num::ZERO,
            t: Num::ZERO,
            m1: Num::ZERO,
            m2: Num::ZERO,
            tmp: [Num::ZERO; 4],
            out: NumForm::ZERO,
        }
    }
}

/// `s.out` ← the reduced product of the reduced forms `f` and `g` of discriminant `d`,
/// `l` = ⌊|d|^(1/4)⌋. On `None` (declined) `s.out` is unspecified.
pub(crate) fn nucomp<const N: usize>(
    s: &mut Scratch<N>,
    f: &NumForm<N>,
    g: &NumForm<N>,
    d: &Num<N>,
    l: &Num<N>,
) -> Option<()> {
    // a1 ≤ a2.
    let (f, g) = if f.a.cmp(&g.a) == Ordering::Greater {
        (g, f)
    } else {
        (f, g)
    };
    if f.a.neg || f.a.cmp(l) != Ordering::Greater || f.c.neg || g.c.neg {
        return None;
    }
    let Scratch {
        e,
        a1,
        a2,
        c2,
        ss,
        m,
        k,
        sp,
        g2,
        v2,
        u2,
        t,
        m1,
        m2,
        tmp,
        out,
    } = s;
    {
        let [u, v, w, x] = &mut *tmp;
        a1.set(&f.a);
        a2.set(&g.a);
        c2.set(&g.c);
        // ss = (b1 + b2)/2, m = (b1 − b2)/2: b1 and b2 are odd for forms of d ≡ 1 (mod 4).
        ss.set(&f.b);
        ss.add_assign(&g.b)?;
        m.set(&f.b);
        m.sub_assign(&g.b)?;
        if !ss.is_even() || !m.is_even() {
            return None;
        }
        ss.shr_assign(1);
        m.shr_assign(1);

        // sp = gcd(a2 mod a1, a1), by Euclid on (a1, a2 mod a1): at the end
        // r2 = sp ≡ −co2·a2 (mod a1), so v1 = −co2 has v1·a2 ≡ sp (mod a1).
        t.set_mod(a2, a1)?;
        if t.is_zero() {
            return None;
        }
        e.start(a1, t);
        e.run(&Num::ZERO)?;
        // k = m·v1 mod a1 = −m·co2 mod a1 (co2 = ±c2, negative when the steps are odd).
        u.set(m);
        u.neg = false;
        v.set_mod(u, a1)?;
        w.set_mul(v, &e.c2)?;
        v.set_mod(w, a1)?;
        if m.neg == e.co2_negative() && !v.is_zero() {
            k.set(a1);
            k.sub_assign(v)?;
        } else {
            k.set(v);
        }

        if !e.r2.is_one() {
            // The general case: s = gcd(ss, sp) = v2·ss + u2·sp, k ← k·u2 − v2·c2, and
            // (a1, a2, c2) ← (a1/s, a2/s, c2·s) where s ≠ 1.
            sp.set(&e.r2);
            if sp.is_zero() {
                return None;
            }
            u.set_mod(ss, sp)?;
            if u.is_zero() {
                // ss is a multiple of sp: s = sp = 0·ss + 1·sp, and k stays.
                g2.set(sp);
            } else {
                // Euclid on (sp, ss mod sp): r2 = s ≡ −co2·ss (mod sp), so v2 = −co2 and
                // u2 = (s − v2·ss)/sp.
                e.start(sp, u);
                e.run(&Num::ZERO)?;
                g2.set(&e.r2);
                v2.set(&e.c2);
                v2.neg = !e.co2_negative() && !v2.is_zero();
                w.set_mul(v2, ss)?;
                x.set(g2);
                x.sub_assign(w)?;
                u2.set_divexact(x, sp)?;
                // k ← k·u2 − v2·c2
                w.set_mul(k, u2)?;
                x.set_mul(v2, c2)?;
                w.sub_assign(x)?;
                k.set(w);
            }
            if !g2.is_one() {
                x.set_divexact(a1, g2)?;
                a1.set(x);
                x.set_divexact(a2, g2)?;
                a2.set(x);
                x.set_mul(c2, g2)?;
                c2.set(x);
            }
            x.set_mod(k, a1)?;
            k.set(x);
            if a1.cmp(l) != Ordering::Greater {
                return None;
            }
        }

        // Partial Euclid on (a1, k) down to L.
        e.partial(a1, k, l)?;
        let (r1, co1, co2) = (&e.r1, &e.c1, &e.c2);

        // t = a2·r1; m1 = (m·co1 + t)/a1; m2 = (ss·r1 − c2·co1)/a1
        t.set_mul(a2, r1)?;
        u.set_mul(m, co1)?;
        u.add_assign(t)?;
        m1.set_divexact(u, a1)?;
        u.set_mul(ss, r1)?;
        v.set_mul(c2, co1)?;
        u.sub_assign(v)?;
        m2.set_divexact(u, a1)?;
        // ca = ±(r1·m1 − co1·m2), negated when co1 ≥ 0
        let (na, nb, nc) = (&mut out.a, &mut out.b, &mut out.c);
        na.set_mul(r1, m1)?;
        u.set_mul(co1, m2)?;
        na.sub_assign(u)?;
        if !co1.neg {
            na.negate();
        }
        if na.is_zero() {
            return None;
        }
        // cb = 2(t − ca·co2)/co1 − b2, mod 2|ca|
        u.set_mul(na, co2)?;
        t.sub_assign(u)?;
        t.shl_assign(1)?;
        u.set_divexact(t, co1)?;
        u.sub_assign(&g.b)?;
        // (|ca|, cb, −) is the reference's (ca, cb, −) with its signs fixed, up to a translation
        // of b by a multiple of 2ca: the same reduced form.
        na.neg = false;
        v.set(na);
        v.shl_assign(1)?;
        nb.set_mod(u, v)?;
        // cc = (cb² − d) / 4|ca|
        t.set_sqr(nb)?;
        t.sub_assign(d)?;
        t.shr_assign(2);
        nc.set_divexact(t, na)?;
    }
    reduce(&mut out.a, &mut out.b, &mut out.c, tmp)
}
