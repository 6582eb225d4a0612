//! GMP through `rug` (system libgmp): the yardstick in benchmarks, never a default.
//! `gmp` uses `mpz_powm` by 2^n (GMP's best path for this job: sqr + redc in its own loop);
//! `gmp-mulmod` does `mpz_mul` + `mpz_mod` per squaring.

use super::Backend;
use crate::error::Result;
use crate::group::Modulus;
use num_bigint::BigUint;
use rug::integer::Order;
use rug::Integer;

fn to_rug(v: &BigUint) -> Integer {
    Integer::from_digits(&v.to_bytes_be(), Order::MsfBe)
}

fn from_rug(x: &Integer) -> BigUint {
    BigUint::from_bytes_be(&x.to_digits::<u8>(Order::MsfBe))
}

#[derive(Clone, Debug)]
pub struct Gmp {
    n: Integer,
    byte_len: usize,
}

impl Backend for Gmp {
    type Elem = Integer;

    fn name(&self) -> &'static str {
        "gmp"
    }

    fn prepare(modulus: &Modulus) -> Result<Self> {
        Ok(Self {
            n: to_rug(modulus.n()),
            byte_len: modulus.byte_len(),
        })
    }

    fn load(&self, v: &BigUint) -> Integer {
        to_rug(v)
    }

    fn value(&self, x: &Integer) -> BigUint {
        from_rug(x)
    }

    fn square_n(&self, x: &mut Integer, n: u64) {
        // One mpz_powm per chunk of at most 2^30 squarings (2^n must fit a u32 shift).
        let mut left = n;
        while left > 0 {
            let chunk = left.min(1 << 30);
            let exp = Integer::from(1) << chunk as u32;
            // pow_mod_mut fails only for a negative exponent without an inverse; 2^n is positive.
            let ok = x.pow_mod_mut(&exp, &self.n).is_ok();
            debug_assert!(ok);
            left -= chunk;
        }
    }

    fn byte_len(&self) -> usize {
        self.byte_len
    }
}

#[derive(Clone, Debug)]
pub struct GmpMulmod {
    n: Integer,
    byte_len: usize,
}

impl Backend for GmpMulmod {
    type Elem = Integer;

    fn name(&self) -> &'static str {
        "gmp-mulmod"
    }

    fn prepare(modulus: &Modulus) -> Result<Self> {
        Ok(Self {
            n: to_rug(modulus.n()),
            byte_len: modulus.byte_len(),
        })
    }

    fn load(&self, v: &BigUint) -> Integer {
        to_rug(v)
    }

    fn value(&self, x: &Integer) -> BigUint {
        from_rug(x)
    }

    fn square_n(&self, x: &mut Integer, n: u64) {
        for _ in 0..n {
            x.square_mut();
            *x %= &self.n;
        }
    }

    fn byte_len(&self) -> usize {
        self.byte_len
    }
}
