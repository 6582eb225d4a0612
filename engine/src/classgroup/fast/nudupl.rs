//! NUDUPL on fixed-width [`Num`]s: squaring of a reduced form (a, b, c) of discriminant D with
//! Shanks' partial reduction stopped at L = ⌊|D|^(1/4)⌋, then a final reduction (chiavdf's
//! `qfb_nudupl`, William Hart's formulation). Returns `None` wherever the fixed width or the
//! common case does not hold (gcd(a, b) ≠ 1, a < L, an unusually long reduction); the caller
//! then does that squaring with num-bigint.

use super::num::Num;
use std::cmp::Ordering;

/// The most reduction steps tried before giving up (NUDUPL's output needs one or two).
const MAX_REDUCE_STEPS: usize = 64;

/// Runs Euclid's algorithm on (r2, r1), r2 ≥ r1 ≥ 0, until r1 ≤ bound, keeping the cofactors:
/// the invariant r ≡ −co·r1₀ (mod r2₀) holds for (r2, co2) and (r1, co1) throughout (start with
/// co2 = 0, co1 = −1). Lehmer's method: runs of quotients are computed on the leading 63 bits
/// (Jebelean's exact stopping conditions, as chiavdf's `mpz_xgcd_partial`), then applied to the
/// full numbers as one 2×2 matrix.
#[inline]
pub(crate) fn euclid<const N: usize>(
    r2: &mut Num<N>,
    r1: &mut Num<N>,
    co2: &mut Num<N>,
    co1: &mut Num<N>,
    bound: &Num<N>,
    track_co: bool,
) -> Option<()> {
    while !r1.is_zero() && r1.cmp_mag(bound) == Ordering::Greater {
        let bits = r2.bits().max(r1.bits()).saturating_sub(63);
        let mut rr2 = r2.word_at(bits) as i64;
        let mut rr1 = r1.word_at(bits) as i64;
        let bb = bound.word_at(bits) as i64;
        let (mut aa2, mut aa1, mut bb2, mut bb1) = (0i64, 1i64, 1i64, 0i64);
        let mut i = 0usize;
        while rr1 != 0 && rr1 > bb {
            // q = 1 (about 40% of the quotients) without a division or multiplications.
            let (t1, t2, t3) = if (rr2 as u64) < (rr1 as u64) << 1 {
                (
                    rr2.wrapping_sub(rr1),
                    aa2.wrapping_sub(aa1),
                    bb2.wrapping_sub(bb1),
                )
            } else {
                let qq = ((rr2 as u64) / (rr1 as u64)) as i64;
                (
                    rr2.wrapping_sub(qq.wrapping_mul(rr1)),
                    aa2.wrapping_sub(qq.wrapping_mul(aa1)),
                    bb2.wrapping_sub(qq.wrapping_mul(bb1)),
                )
            };
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
            // One exact step with a multi-limb quotient.
            let (q, r) = r2.floor_divmod(r1)?;
            *r2 = *r1;
            *r1 = r;
            if track_co {
                let next = co2.sub(&co1.mul(&q)?)?;
                *co2 = *co1;
                *co1 = next;
            }
        } else {
            Num::mat_apply(r2, r1, bb2, aa2, bb1, aa1)?;
            if track_co {
                Num::mat_apply(co2, co1, bb2, aa2, bb1, aa1)?;
            }
            if r1.neg {
                *r1 = r1.neg();
                *co1 = co1.neg();
            }
            if r2.neg {
                *r2 = r2.neg();
                *co2 = co2.neg();
            }
        }
    }
    Some(())
}

/// The reduced square of the reduced form (a, b, c) of discriminant `d`, `l` = ⌊|d|^(1/4)⌋.
pub(crate) fn nudupl<const N: usize>(
    a: &Num<N>,
    b: &Num<N>,
    c: &Num<N>,
    d: &Num<N>,
    l: &Num<N>,
) -> Option<(Num<N>, Num<N>, Num<N>)> {
    if a.cmp(l) != Ordering::Greater || a.neg || c.neg {
        return None;
    }
    // |b|⁻¹ mod a: Euclid on (a, |b|); at the end r2 = gcd = 1 ≡ −co2·|b|.
    let mut r2 = *a;
    let mut r1 = b.abs();
    let mut co2 = Num::ZERO;
    let mut co1 = Num::from_u64(1).neg();
    euclid(&mut r2, &mut r1, &mut co2, &mut co1, &Num::ZERO, true)?;
    if !r2.is_one() {
        return None;
    }
    // k = −c·b⁻¹ mod a = c·co2·sgn(b) mod a.
    let cm = c.modp(a)?;
    let mut v = co2;
    if b.neg {
        v = v.neg();
    }
    let k = cm.mul(&v)?.modp(a)?;

    // Partial Euclid on (a, k) down to L.
    let mut r2 = *a;
    let mut r1 = k;
    let mut co2 = Num::ZERO;
    let mut co1 = Num::from_u64(1).neg();
    euclid(&mut r2, &mut r1, &mut co2, &mut co1, l, true)?;

    // m2 = (b·r1 − c·co1) / a
    let m2 = b.mul(&r1)?.sub(&c.mul(&co1)?)?.divexact(a)?;
    // na = ±(r1² − co1·m2), negated when co1 ≥ 0
    let mut na = r1.mul(&r1)?.sub(&co1.mul(&m2)?)?;
    if !co1.neg {
        na = na.neg();
    }
    // cb = 2(a·r1 − na·co2)/co1 − b, mod 2|na|
    let t = a.mul(&r1)?.sub(&na.mul(&co2)?)?.shl_small(1)?;
    let cb = t.divexact(&co1)?.sub(b)?;
    let na = na.abs();
    if na.is_zero() {
        return None;
    }
    let two_na = na.shl_small(1)?;
    let cb = cb.modp(&two_na)?;
    // nc = (cb² − d) / 4na
    let nc = cb.mul(&cb)?.sub(d)?.divexact(&na.shl_small(2)?)?;
    reduce(na, cb, nc)
}

/// The reduced form equivalent to (a, b, c), a, c > 0.
pub(crate) fn reduce<const N: usize>(
    mut a: Num<N>,
    mut b: Num<N>,
    mut c: Num<N>,
) -> Option<(Num<N>, Num<N>, Num<N>)> {
    normalize(&a, &mut b, &mut c)?;
    for _ in 0..MAX_REDUCE_STEPS {
        match a.cmp(&c) {
            Ordering::Greater => {
                std::mem::swap(&mut a, &mut c);
                b = b.neg();
                normalize(&a, &mut b, &mut c)?;
            }
            Ordering::Equal => {
                if b.neg {
                    b = b.neg();
                }
                return Some((a, b, c));
            }
            Ordering::Less => return Some((a, b, c)),
        }
    }
    None
}

/// Brings b into (−a, a]: r = ⌊(a − b)/2a⌋, b += 2ra, c += r(ar + b).
#[inline]
fn normalize<const N: usize>(a: &Num<N>, b: &mut Num<N>, c: &mut Num<N>) -> Option<()> {
    let in_range = if b.neg {
        b.cmp_mag(a) == Ordering::Less
    } else {
        b.cmp_mag(a) != Ordering::Greater
    };
    if in_range {
        return Some(());
    }
    let two_a = a.shl_small(1)?;
    let (r, _) = a.sub(b)?.floor_divmod(&two_a)?;
    let ra = r.mul(a)?;
    *c = c.add(&r.mul(&ra.add(b)?)?)?;
    *b = b.add(&ra.shl_small(1)?)?;
    Some(())
}
