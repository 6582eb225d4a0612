//! `crypto-bigint`: the library's constant-time Montgomery form for U2048 (a modulus of fewer
//! bits sits in the same 32 limbs; R = 2^2048 works for any odd N below it).

use super::Backend;
use crate::error::{Error, Result};
use crate::group::Modulus;
use crypto_bigint::modular::{FixedMontyForm, FixedMontyParams};
use crypto_bigint::{Odd, U2048};
use num_bigint::BigUint;

#[derive(Clone, Debug)]
pub struct CryptoBigint {
    params: FixedMontyParams<{ U2048::LIMBS }>,
    byte_len: usize,
}

fn to_u2048(v: &BigUint) -> U2048 {
    let raw = v.to_bytes_be();
    let mut buf = [0u8; 256];
    buf[256 - raw.len()..].copy_from_slice(&raw);
    U2048::from_be_slice(&buf)
}

impl Backend for CryptoBigint {
    type Elem = FixedMontyForm<{ U2048::LIMBS }>;

    fn name(&self) -> &'static str {
        "crypto-bigint"
    }

    fn prepare(modulus: &Modulus) -> Result<Self> {
        let odd = Odd::new(to_u2048(modulus.n()))
            .into_option()
            .ok_or(Error::BadModulus(
                "crypto-bigint needs an odd modulus".into(),
            ))?;
        Ok(Self {
            params: FixedMontyParams::new_vartime(odd),
            byte_len: modulus.byte_len(),
        })
    }

    fn load(&self, v: &BigUint) -> Self::Elem {
        FixedMontyForm::new(&to_u2048(v), &self.params)
    }

    fn value(&self, x: &Self::Elem) -> BigUint {
        BigUint::from_bytes_be(&x.retrieve().to_be_bytes())
    }

    fn square_n(&self, x: &mut Self::Elem, n: u64) {
        for _ in 0..n {
            *x = x.square();
        }
    }

    fn byte_len(&self) -> usize {
        self.byte_len
    }
}
