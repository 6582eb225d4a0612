//! Fast repeated squaring of reduced binary quadratic forms: NUDUPL (chiavdf's `qfb_nudupl`)
//! on stack-allocated fixed-width integers (`num.rs`), with Euclid's algorithm by double-word
//! Lehmer (`euclid.rs`: two leading words per update of the full numbers, magnitudes only), 2-adic
//! exact divisions, and every intermediate computed in place in a scratch made once per run: no
//! allocation, no zeroing and no whole-number copies in the loop.
//!
//! Widths by discriminant size: |D| ≤ 512 bits on 12 limbs, ≤ 1024 bits on 20, ≤ 2048 bits on
//! 40; larger discriminants, and the rare squarings the fixed path declines (a < |D|^(1/4),
//! gcd(a, b) ≠ 1, which happen only for forms near the identity or the generator, or for
//! discriminants that are not prime), go through the same algorithm on num-bigint.
//!
//! [`FastComposer`] (`composer.rs`) does the same for the Wesolowski prover's compositions:
//! NUCOMP on the same integers (`nucomp.rs`), both gcd cases, with the same fallback.
//!
//! Variable time: every input of a VDF is public.

mod composer;
mod euclid;
mod nucomp;
mod nudupl;
mod num;
mod slow;

pub use composer::FastComposer;

use num::Num;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Signed;

use crate::error::{Error, Result};

/// Repeated squaring for one discriminant.
#[derive(Clone, Debug)]
pub struct FastSquarer {
    p: Params,
}

/// What squaring and composition precompute for one discriminant: D, L = ⌊|D|^(1/4)⌋ and the
/// limb width.
#[derive(Clone, Debug)]
struct Params {
    d: BigInt,
    l: BigInt,
    width: Width,
}

impl Params {
    /// d: a negative discriminant ≡ 1 (mod 4), any size; sizes beyond what the fixed-width path
    /// supports run on num-bigint.
    fn new(d: &BigInt) -> Result<Self> {
        let (l, width) = Width::for_discriminant(d)?;
        Ok(Self {
            d: d.clone(),
            l,
            width,
        })
    }

    fn is_fixed_width(&self) -> bool {
        !matches!(self.width, Width::Big)
    }
}

#[derive(Clone, Debug)]
enum Width {
    W12(Consts<12>),
    W20(Consts<20>),
    W40(Box<Consts<40>>),
    Big,
}

#[derive(Clone, Debug)]
struct Consts<const N: usize> {
    d: Num<N>,
    l: Num<N>,
}

impl<const N: usize> Consts<N> {
    fn new(d: &BigInt, l: &BigInt) -> Option<Self> {
        Some(Self {
            d: Num::from_bigint(d)?,
            l: Num::from_bigint(l)?,
        })
    }
}

impl Width {
    /// ⌊|d|^(1/4)⌋ and the width for `d`, a negative discriminant ≡ 1 (mod 4) of any size.
    fn for_discriminant(d: &BigInt) -> Result<(BigInt, Self)> {
        if !d.is_negative() || d.mod_floor(&BigInt::from(4)) != BigInt::from(1) {
            return Err(Error::BadDiscriminant(
                "a discriminant must be negative and 1 mod 4".into(),
            ));
        }
        let l = d.abs().nth_root(4);
        let bits = d.bits();
        let width = if bits <= 512 {
            Consts::new(d, &l).map(Width::W12)
        } else if bits <= 1024 {
            Consts::new(d, &l).map(Width::W20)
        } else if bits <= 2048 {
            Consts::new(d, &l).map(|k| Width::W40(Box::new(k)))
        } else {
            None
        }
        .unwrap_or(Width::Big);
        Ok((l, width))
    }
}

impl FastSquarer {
    /// d: a negative discriminant ≡ 1 (mod 4), any size; sizes beyond what the fixed-width path
    /// supports fall back to a plain (slower) path.
    pub fn new(d: &BigInt) -> Result<Self> {
        Ok(Self { p: Params::new(d)? })
    }

    /// Whether this discriminant runs on the fixed-width path.
    pub fn is_fixed_width(&self) -> bool {
        self.p.is_fixed_width()
    }

    /// Square the reduced form (a, b) of discriminant d `n` times (c = (b² − d)/4a implied);
    /// the result is the reduced (a, b). For an input that is not a form of d (a ≤ 0, or 4a not
    /// dividing b² − d) the result is unspecified, but nothing panics.
    pub fn square_n(&self, a: &BigInt, b: &BigInt, n: u64) -> (BigInt, BigInt) {
        if !a.is_positive() || n == 0 {
            return (a.clone(), b.clone());
        }
        let c = (b * b - &self.p.d).div_floor(&(a << 2u32));
        let (a, b, _) = match &self.p.width {
            Width::W12(k) => self.run(k, a, b, &c, n),
            Width::W20(k) => self.run(k, a, b, &c, n),
            Width::W40(k) => self.run(k.as_ref(), a, b, &c, n),
            Width::Big => self.run_big(a.clone(), b.clone(), c, n),
        };
        (a, b)
    }

    fn run<const N: usize>(
        &self,
        k: &Consts<N>,
        a: &BigInt,
        b: &BigInt,
        c: &BigInt,
        n: u64,
    ) -> (BigInt, BigInt, BigInt) {
        let (mut fa, mut fb, mut fc) = match (
            Num::<N>::from_bigint(a),
            Num::<N>::from_bigint(b),
            Num::<N>::from_bigint(c),
        ) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => return self.run_big(a.clone(), b.clone(), c.clone(), n),
        };
        let mut scratch = nudupl::Scratch::<N>::new();
        let mut i = 0;
        while i < n {
            if nudupl::nudupl(&mut scratch, &mut fa, &mut fb, &mut fc, &k.d, &k.l).is_none() {
                // The rare step the fixed path declines: one squaring on num-bigint.
                let (a, b, c) = slow::nudupl(
                    &fa.to_bigint(),
                    &fb.to_bigint(),
                    &fc.to_bigint(),
                    &self.p.d,
                    &self.p.l,
                );
                match (
                    Num::<N>::from_bigint(&a),
                    Num::<N>::from_bigint(&b),
                    Num::<N>::from_bigint(&c),
                ) {
                    (Some(na), Some(nb), Some(nc)) => {
                        fa = na;
                        fb = nb;
                        fc = nc;
                    }
                    _ => return self.run_big(a, b, c, n - i - 1),
                }
            }
            i += 1;
        }
        (fa.to_bigint(), fb.to_bigint(), fc.to_bigint())
    }

    fn run_big(&self, a: BigInt, b: BigInt, c: BigInt, n: u64) -> (BigInt, BigInt, BigInt) {
        let (mut a, mut b, mut c) = (a, b, c);
        for _ in 0..n {
            (a, b, c) = slow::nudupl(&a, &b, &c, &self.p.d, &self.p.l);
        }
        (a, b, c)
    }
}

#[cfg(test)]
mod tests;
