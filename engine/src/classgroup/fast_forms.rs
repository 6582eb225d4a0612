//! [`fast::FastSquarer`] (which squares bare (a, b) pairs) as a [`Squarer`] of [`Form`]s.

use super::fast::FastSquarer;
use super::{Discriminant, Form, Squarer};
use crate::error::Result;
use num_bigint::BigInt;
use num_traits::Zero;

/// The fast squaring for the forms of one discriminant: what the prover runs by default.
#[derive(Clone, Debug)]
pub struct FastFormSquarer {
    d: BigInt,
    fast: FastSquarer,
}

impl FastFormSquarer {
    pub fn new(d: &Discriminant) -> Result<Self> {
        Ok(Self {
            d: d.value().clone(),
            fast: FastSquarer::new(d.value())?,
        })
    }
}

impl Squarer for FastFormSquarer {
    fn square_n(&self, f: &Form, n: u64) -> Form {
        let (a, b) = self.fast.square_n(&f.a, &f.b, n);
        // (a, b) is a form of D whenever f was; otherwise return a form that is not one (a = 0),
        // which the prover's own checks refuse as a squarer fault instead of using it.
        Form::from_ab(a, b, &self.d)
            .unwrap_or_else(|| Form::new(BigInt::zero(), BigInt::zero(), BigInt::zero()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::classgroup::ReferenceSquarer;

    #[test]
    fn fast_forms_equal_the_reference_from_the_generator() {
        for (seed, bits) in [(&b"fast-forms"[..], 1024), (b"fast-forms-512", 512)] {
            let d = Discriminant::from_seed(seed, bits).unwrap();
            let g = Form::generator(&d).unwrap();
            let (fast, reference) = (FastFormSquarer::new(&d).unwrap(), ReferenceSquarer::new(&d));
            let mut f = g.clone();
            for n in [1, 2, 7, 100, 333] {
                let want = reference.square_n(&f, n);
                assert_eq!(fast.square_n(&f, n), want, "{bits} bits, n = {n}");
                f = want;
            }
        }
    }
}
