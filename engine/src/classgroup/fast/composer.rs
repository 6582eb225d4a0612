//! Composition and powers of reduced forms on the fixed-width integers: NUCOMP (`nucomp.rs`)
//! and NUDUPL (`nudupl.rs`), for the Wesolowski prover's bucket products and small powers.
//! Whatever the fixed path declines (see `nucomp.rs`), and every discriminant beyond 2048 bits,
//! goes through [`form::multiply`] / [`form::square`] on num-bigint; reduced forms are unique,
//! so every result is the reference's, bit for bit.

use super::nucomp::{self, NumForm};
use super::nudupl;
use super::{Consts, Params, Width};
use crate::classgroup::form::{self, Form};
use crate::error::Result;
use num_bigint::{BigInt, BigUint};
use rayon::prelude::*;

/// Composition for one discriminant (precomputed: D, L = ⌊|D|^(1/4)⌋, the limb width).
#[derive(Clone, Debug)]
pub struct FastComposer {
    p: Params,
}

/// Per-bucket products and the scratch that makes them, for one part of the input.
type Buckets<const N: usize> = (Vec<Option<NumForm<N>>>, Box<nucomp::Scratch<N>>);

impl FastComposer {
    /// d: a negative discriminant ≡ 1 (mod 4), any size (beyond 2048 bits, all on num-bigint).
    pub fn new(d: &BigInt) -> Result<Self> {
        Ok(Self { p: Params::new(d)? })
    }

    /// Whether this discriminant runs on the fixed-width path.
    pub fn is_fixed_width(&self) -> bool {
        self.p.is_fixed_width()
    }

    /// The reduced product of the reduced forms `f` and `g` of D. For inputs that are not
    /// reduced forms of D the result is [`form::multiply`]'s or unspecified, but nothing panics.
    pub fn multiply(&self, f: &Form, g: &Form) -> Form {
        match &self.p.width {
            Width::W12(k) => self.multiply_fixed(k, f, g),
            Width::W20(k) => self.multiply_fixed(k, f, g),
            Width::W40(k) => self.multiply_fixed(k.as_ref(), f, g),
            Width::Big => None,
        }
        .unwrap_or_else(|| form::multiply(f, g, &self.p.d, &self.p.l))
    }

    /// f^e, reduced (the identity for e = 0), by left-to-right square-and-multiply.
    pub fn pow(&self, f: &Form, e: &BigUint) -> Form {
        match &self.p.width {
            Width::W12(k) => self.pow_fixed(k, f, e),
            Width::W20(k) => self.pow_fixed(k, f, e),
            Width::W40(k) => self.pow_fixed(k.as_ref(), f, e),
            Width::Big => None,
        }
        .unwrap_or_else(|| form::pow(f, e, &self.p.d, &self.p.l))
    }

    /// Products by bucket, on all cores: `out[w]` (w < `width`) is the product of the
    /// `forms[i]` with `bucket(i) = Some(w)`, `None` where there are none. Composition is
    /// commutative, so the order of the products does not matter.
    pub fn bucket_products(
        &self,
        forms: &[Form],
        width: usize,
        bucket: &(dyn Fn(usize) -> Option<usize> + Sync),
    ) -> Vec<Option<Form>> {
        match &self.p.width {
            Width::W12(k) => self.buckets_fixed(k, forms, width, bucket),
            Width::W20(k) => self.buckets_fixed(k, forms, width, bucket),
            Width::W40(k) => self.buckets_fixed(k.as_ref(), forms, width, bucket),
            Width::Big => None,
        }
        .unwrap_or_else(|| self.buckets_big(forms, width, bucket))
    }

    /// `s.out` ← f·g: by NUCOMP on the fixed width, or else by the reference. `None` only where
    /// the reference's result does not fit (inputs that are not forms of D).
    fn mul_fixed<const N: usize>(
        &self,
        k: &Consts<N>,
        s: &mut nucomp::Scratch<N>,
        f: &NumForm<N>,
        g: &NumForm<N>,
    ) -> Option<()> {
        if nucomp::nucomp(s, f, g, &k.d, &k.l).is_none() {
            let p = form::multiply(&f.to_form(), &g.to_form(), &self.p.d, &self.p.l);
            s.out = NumForm::from_form(&p)?;
        }
        Some(())
    }

    /// f ← f²: by NUDUPL on the fixed width, or else by the reference.
    fn square_fixed<const N: usize>(
        &self,
        k: &Consts<N>,
        s: &mut nudupl::Scratch<N>,
        f: &mut NumForm<N>,
    ) -> Option<()> {
        if nudupl::nudupl(s, &mut f.a, &mut f.b, &mut f.c, &k.d, &k.l).is_none() {
            let p = form::square(&f.to_form(), &self.p.d, &self.p.l);
            *f = NumForm::from_form(&p)?;
        }
        Some(())
    }

    fn multiply_fixed<const N: usize>(&self, k: &Consts<N>, f: &Form, g: &Form) -> Option<Form> {
        let (f, g) = (NumForm::from_form(f)?, NumForm::from_form(g)?);
        let mut s = Box::new(nucomp::Scratch::new());
        self.mul_fixed(k, &mut s, &f, &g)?;
        Some(s.out.to_form())
    }

    fn pow_fixed<const N: usize>(&self, k: &Consts<N>, f: &Form, e: &BigUint) -> Option<Form> {
        let bits = e.bits();
        if bits == 0 {
            return None;
        }
        let base = NumForm::from_form(f)?;
        let mut res = base.clone();
        let mut sq = Box::new(nudupl::Scratch::new());
        let mut s = Box::new(nucomp::Scratch::new());
        for i in (0..bits - 1).rev() {
            self.square_fixed(k, &mut sq, &mut res)?;
            if e.bit(i) {
                self.mul_fixed(k, &mut s, &res, &base)?;
                std::mem::swap(&mut res, &mut s.out);
            }
        }
        Some(res.to_form())
    }

    /// `slot` ← slot·g (g where the slot is empty).
    fn accumulate<const N: usize>(
        &self,
        k: &Consts<N>,
        s: &mut nucomp::Scratch<N>,
        slot: &mut Option<NumForm<N>>,
        g: NumForm<N>,
    ) -> Option<()> {
        match slot {
            None => *slot = Some(g),
            Some(acc) => {
                self.mul_fixed(k, s, acc, &g)?;
                std::mem::swap(acc, &mut s.out);
            }
        }
        Some(())
    }

    fn buckets_fixed<const N: usize>(
        &self,
        k: &Consts<N>,
        forms: &[Form],
        width: usize,
        bucket: &(dyn Fn(usize) -> Option<usize> + Sync),
    ) -> Option<Vec<Option<Form>>> {
        let init = || -> Buckets<N> { (vec![None; width], Box::new(nucomp::Scratch::new())) };
        let (ys, _) = forms
            .par_iter()
            .enumerate()
            .try_fold(init, |(mut ys, mut s), (i, f)| {
                if let Some(slot) = bucket(i).and_then(|w| ys.get_mut(w)) {
                    self.accumulate(k, &mut s, slot, NumForm::from_form(f)?)?;
                }
                Some((ys, s))
            })
            .try_reduce(init, |(mut ys, mut s), (other, _)| {
                for (slot, g) in ys.iter_mut().zip(other) {
                    if let Some(g) = g {
                        self.accumulate(k, &mut s, slot, g)?;
                    }
                }
                Some((ys, s))
            })?;
        Some(ys.into_iter().map(|f| f.map(|f| f.to_form())).collect())
    }

    fn buckets_big(
        &self,
        forms: &[Form],
        width: usize,
        bucket: &(dyn Fn(usize) -> Option<usize> + Sync),
    ) -> Vec<Option<Form>> {
        let (d, l) = (&self.p.d, &self.p.l);
        let put = |slot: &mut Option<Form>, f: Form| {
            *slot = Some(match slot.take() {
                None => f,
                Some(a) => form::multiply(&a, &f, d, l),
            });
        };
        forms
            .par_iter()
            .enumerate()
            .fold(
                || vec![None; width],
                |mut ys: Vec<Option<Form>>, (i, f)| {
                    if let Some(slot) = bucket(i).and_then(|w| ys.get_mut(w)) {
                        put(slot, f.clone());
                    }
                    ys
                },
            )
            .reduce(
                || vec![None; width],
                |mut ys, other| {
                    for (slot, g) in ys.iter_mut().zip(other) {
                        if let Some(g) = g {
                            put(slot, g);
                        }
                    }
                    ys
                },
            )
    }
}
