//! The num-bigint fallback: for sizes beyond the fixed-width path and for the rare squarings it
//! declines (gcd(a, b) ≠ 1, a < L, a width overflow). It is the reference NUDUPL of
//! [`form`](super::super::form) (chiavdf's `qfb_nudupl`, then reduction), on bare (a, b, c).

use super::super::form::{self, Form};
use num_bigint::BigInt;

/// The reduced square of (a, b, c) (discriminant d, l = ⌊|d|^(1/4)⌋). For an input that is
/// not a form of d the result is unspecified, but nothing panics.
pub(crate) fn nudupl(
    a: &BigInt,
    b: &BigInt,
    c: &BigInt,
    d: &BigInt,
    l: &BigInt,
) -> (BigInt, BigInt, BigInt) {
    let f = form::square(&Form::new(a.clone(), b.clone(), c.clone()), d, l);
    (f.a, f.b, f.c)
}
