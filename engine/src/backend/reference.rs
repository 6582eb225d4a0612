//! `reference`: num-bigint, x ← x² mod N. Slow, plain and obviously correct: every other
//! backend is tested against it.

use super::Backend;
use crate::error::Result;
use crate::group::Modulus;
use num_bigint::BigUint;

#[derive(Clone, Debug)]
pub struct Reference {
    n: BigUint,
    byte_len: usize,
}

impl Backend for Reference {
    type Elem = BigUint;

    fn name(&self) -> &'static str {
        "reference"
    }

    fn prepare(modulus: &Modulus) -> Result<Self> {
        Ok(Self {
            n: modulus.n().clone(),
            byte_len: modulus.byte_len(),
        })
    }

    fn load(&self, v: &BigUint) -> BigUint {
        v % &self.n
    }

    fn value(&self, x: &BigUint) -> BigUint {
        x.clone()
    }

    fn square_n(&self, x: &mut BigUint, n: u64) {
        for _ in 0..n {
            *x = (&*x * &*x) % &self.n;
        }
    }

    fn byte_len(&self) -> usize {
        self.byte_len
    }
}
