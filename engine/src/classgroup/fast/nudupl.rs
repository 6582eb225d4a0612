//! NUDUPL on fixed-width [`Num`]s: squaring of a reduced form (a, b, c) of discriminant D with
//! Shanks' partial reduction stopped at L = ⌊|D|^(1/4)⌋, then a final reduction (chiavdf's
//! `qfb_nudupl`, William Hart's formulation). Declines (`None`, the form left as it was) wherever
//! the fixed width or the common case does not hold (gcd(a, b) ≠ 1, a ≤ L, an unusually long
//! reduction); the caller then does that squaring with num-bigint.
//!
//! Every intermediate lives in a [`Scratch`] made once per run of squarings, and is computed in
//! place: nothing is allocated, zeroed or copied whole inside the loop.

use super::euclid::Euclid;
use super::num::Num;
use std::cmp::Ordering;

/// The most reduction steps tried before giving up (NUDUPL's output needs one or two).
const MAX_REDUCE_STEPS: usize = 64;

/// The working space of [`nudupl`].
#[derive(Clone, Debug)]
pub(crate) struct Scratch<const N: usize> {
    e: Euclid<N>,
    k: Num<N>,
    /// Temporaries t, u, v, w.
    tmp: [Num<N>; 4],
    m2: Num<N>,
    na: Num<N>,
    nb: Num<N>,
    nc: Num<N>,
}

impl<const N: usize> Scratch<N> {
    pub(crate) const fn new() -> Self {
        Self {
            e: Euclid::new(),
            k: Num::ZERO,
            tmp: [Num::ZERO; 4],
            m2: Num::ZERO,
            na: Num::ZERO,
            nb: Num::ZERO,
            nc: Num::ZERO,
        }
    }
}

/// (a, b, c) ← the reduced square of the reduced form (a, b, c) of discriminant `d`,
/// `l` = ⌊|d|^(1/4)⌋. On `None` (declined) (a, b, c) is unchanged.
pub(crate) fn nudupl<const N: usize>(
    s: &mut Scratch<N>,
    a: &mut Num<N>,
    b: &mut Num<N>,
    c: &mut Num<N>,
    d: &Num<N>,
    l: &Num<N>,
) -> Option<()> {
    if a.cmp(l) != Ordering::Greater || a.neg || c.neg || b.cmp_mag(a) == Ordering::Greater {
        return None;
    }
    let Scratch {
        e,
        k,
        tmp,
        m2,
        na,
        nb,
        nc,
    } = s;
    let [t, u, v, _] = tmp;

    // |b|⁻¹ mod a: Euclid on (a, |b|); at the end r2 = gcd = 1 ≡ −co2·|b| (mod a).
    e.start(a, b);
    e.run(&Num::ZERO)?;
    if !e.r2.is_one() {
        return None;
    }
    // k = −c·b⁻¹ mod a = c·co2·sgn(b) mod a.
    t.set_mod(c, a)?;
    u.set_mul(t, &e.c2)?;
    t.set_mod(u, a)?;
    if e.co2_negative() != b.neg && !t.is_zero() {
        k.set(a);
        k.sub_assign(t)?;
    } else {
        k.set(t);
    }

    // Partial Euclid on (a, k) down to L.
    e.partial(a, k, l)?;
    let (r1, co1, co2) = (&e.r1, &e.c1, &e.c2);

    // m2 = (b·r1 − c·co1) / a
    t.set_mul(b, r1)?;
    u.set_mul(c, co1)?;
    t.sub_assign(u)?;
    m2.set_divexact(t, a)?;
    // na = ±(r1² − co1·m2), negated when co1 ≥ 0
    na.set_sqr(r1)?;
    u.set_mul(co1, m2)?;
    na.sub_assign(u)?;
    if !co1.neg {
        na.negate();
    }
    if na.is_zero() {
        return None;
    }
    // nb = 2(a·r1 − na·co2)/co1 − b, mod 2|na|
    t.set_mul(a, r1)?;
    u.set_mul(na, co2)?;
    t.sub_assign(u)?;
    t.shl_assign(1)?;
    u.set_divexact(t, co1)?;
    u.sub_assign(b)?;
    na.neg = false;
    v.set(na);
    v.shl_assign(1)?;
    nb.set_mod(u, v)?;
    // nc = (nb² − d) / 4na
    t.set_sqr(nb)?;
    t.sub_assign(d)?;
    t.shr_assign(2);
    nc.set_divexact(t, na)?;
    reduce(na, nb, nc, tmp)?;
    std::mem::swap(a, na);
    std::mem::swap(b, nb);
    std::mem::swap(c, nc);
    Some(())
}

/// (a, b, c) ← the reduced form equivalent to (a, b, c), a, c > 0 (tmp: scratch).
pub(crate) fn reduce<const N: usize>(
    a: &mut Num<N>,
    b: &mut Num<N>,
    c: &mut Num<N>,
    tmp: &mut [Num<N>; 4],
) -> Option<()> {
    normalize(a, b, c, tmp)?;
    for _ in 0..MAX_REDUCE_STEPS {
        match a.cmp(c) {
            Ordering::Greater => {
                std::mem::swap(a, c);
                b.negate();
                normalize(a, b, c, tmp)?;
            }
            Ordering::Equal => {
                if b.neg {
                    b.negate();
                }
                return Some(());
            }
            Ordering::Less => return Some(()),
        }
    }
    None
}

/// Brings b into (−a, a]: r = ⌊(a − b)/2a⌋, b += 2ra, c += r(ar + b) (t, u, v, w: scratch).
#[inline]
fn normalize<const N: usize>(
    a: &Num<N>,
    b: &mut Num<N>,
    c: &mut Num<N>,
    [t, u, v, w]: &mut [Num<N>; 4],
) -> Option<()> {
    let in_range = if b.neg {
        b.cmp_mag(a) == Ordering::Less
    } else {
        b.cmp_mag(a) != Ordering::Greater
    };
    if in_range {
        return Some(());
    }
    // w = a − b, u = 2a, t = r = ⌊w / u⌋ (v: the remainder, unused)
    w.set(a);
    w.sub_assign(b)?;
    u.set(a);
    u.shl_assign(1)?;
    Num::floor_divmod_into(t, v, w, u)?;
    // w = ra, u = ra + b, v = r(ra + b)
    w.set_mul(t, a)?;
    u.set(w);
    u.add_assign(b)?;
    v.set_mul(t, u)?;
    c.add_assign(v)?;
    w.shl_assign(1)?;
    b.add_assign(w)
}
