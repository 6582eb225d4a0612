//! Squaring backends: one trait shaped like the hot loop. `prepare` the modulus once, `load`
//! a residue, `square_n` it in place, read it back. No allocation inside `square_n` for the
//! fast backends.

pub mod crypto_bigint;
pub mod fast;
#[cfg(feature = "gmp")]
pub mod gmp;
pub mod reference;

use crate::error::{Error, Result};
use crate::group::Modulus;
use fast::{Fast, Limbs};
use num_bigint::BigUint;

/// A modulus prepared for one backend, and the arithmetic of the VDF's hot loop on it.
pub trait Backend: Send + Sync + Sized {
    /// The backend's working form of a residue (Montgomery form for most).
    type Elem: Clone + Send + Sync;

    /// The name used on the command line and in benchmark tables.
    fn name(&self) -> &'static str;

    /// Prepares the modulus: precomputes whatever the hot loop needs.
    fn prepare(modulus: &Modulus) -> Result<Self>;

    /// The working form of an integer v < N.
    fn load(&self, v: &BigUint) -> Self::Elem;

    /// The integer held by a working-form residue, in [0, N).
    fn value(&self, x: &Self::Elem) -> BigUint;

    /// x ← x^(2^n) mod N: n sequential squarings in place.
    fn square_n(&self, x: &mut Self::Elem, n: u64);

    /// Width in bytes of encoded residues.
    fn byte_len(&self) -> usize;

    /// Converts to the `fast` backend's Montgomery form, which the prover works in.
    fn to_fast(&self, x: &Self::Elem, fast: &Fast) -> Limbs {
        fast.to_monty(&self.value(x))
    }

    /// Loads fixed-width big-endian bytes (the caller has checked they encode a value < N).
    fn load_be_bytes(&self, bytes: &[u8]) -> Result<Self::Elem> {
        if bytes.len() != self.byte_len() {
            return Err(Error::WrongLength {
                what: "residue",
                expected: self.byte_len(),
                got: bytes.len(),
            });
        }
        Ok(self.load(&BigUint::from_bytes_be(bytes)))
    }

    /// Fixed-width big-endian bytes of a residue.
    fn store_be_bytes(&self, x: &Self::Elem) -> Vec<u8> {
        let raw = self.value(x).to_bytes_be();
        let mut out = vec![0u8; self.byte_len().saturating_sub(raw.len())];
        out.extend_from_slice(&raw);
        out
    }
}

/// The backends a build knows, by command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// num-bigint, x ← x² mod N: plain and obviously correct, the test oracle.
    Reference,
    /// crypto-bigint's constant-time Montgomery form for U2048.
    CryptoBigint,
    /// Our Montgomery squaring, best kernel for this CPU: the default.
    Fast,
    /// Our Montgomery squaring, the `mulx`/`adcx`/`adox` kernel even where the CPU has AVX-512
    /// IFMA (which `Fast` runs there): the row to compare the two by.
    #[cfg(target_arch = "x86_64")]
    FastMulx,
    /// Our Montgomery squaring, portable kernel (what a CPU without BMI2/ADX runs).
    FastPortable,
    /// GMP `mpz_powm` by 2^n: the yardstick (feature `gmp`).
    #[cfg(feature = "gmp")]
    Gmp,
    /// GMP `mpz_mul` + `mpz_mod` per squaring (feature `gmp`).
    #[cfg(feature = "gmp")]
    GmpMulmod,
}

impl BackendKind {
    /// Every backend of this build that this CPU runs, the default first.
    pub fn all() -> Vec<BackendKind> {
        let mut all = vec![BackendKind::Fast];
        #[cfg(target_arch = "x86_64")]
        if fast::Kernel::Adx.is_supported() {
            all.push(BackendKind::FastMulx);
        }
        all.extend([
            BackendKind::FastPortable,
            BackendKind::CryptoBigint,
            BackendKind::Reference,
            #[cfg(feature = "gmp")]
            BackendKind::Gmp,
            #[cfg(feature = "gmp")]
            BackendKind::GmpMulmod,
        ]);
        all
    }

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Reference => "reference",
            BackendKind::CryptoBigint => "crypto-bigint",
            BackendKind::Fast => "fast",
            #[cfg(target_arch = "x86_64")]
            BackendKind::FastMulx => "fast-mulx",
            BackendKind::FastPortable => "fast-portable",
            #[cfg(feature = "gmp")]
            BackendKind::Gmp => "gmp",
            #[cfg(feature = "gmp")]
            BackendKind::GmpMulmod => "gmp-mulmod",
        }
    }

    /// Whether this backend is GMP (a yardstick row in benchmarks).
    pub fn is_gmp(self) -> bool {
        self.name().starts_with("gmp")
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::all()
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::all().iter().map(|k| k.name()).collect();
                let hint = if name.starts_with("gmp") {
                    " (gmp needs --features gmp)"
                } else {
                    ""
                };
                Error::UnknownBackend(name.to_owned(), format!("{}{hint}", names.join(", ")))
            })
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Runs `$body` with `$b` bound to the prepared backend `$kind` for `$modulus`: static dispatch
/// from a run-time choice. Evaluates to `Result<_>` of the body's value.
#[macro_export]
macro_rules! with_backend {
    ($kind:expr, $modulus:expr, |$b:ident| $body:expr) => {{
        use $crate::backend::{Backend as _, BackendKind};
        match $kind {
            BackendKind::Reference => {
                $crate::backend::reference::Reference::prepare($modulus).map(|$b| $body)
            }
            BackendKind::CryptoBigint => {
                $crate::backend::crypto_bigint::CryptoBigint::prepare($modulus).map(|$b| $body)
            }
            BackendKind::Fast => $crate::backend::fast::Fast::prepare($modulus).map(|$b| $body),
            #[cfg(target_arch = "x86_64")]
            BackendKind::FastMulx => $crate::backend::fast::Fast::with_kernel(
                $modulus,
                $crate::backend::fast::Kernel::Adx,
            )
            .map(|$b| $body),
            BackendKind::FastPortable => $crate::backend::fast::Fast::with_kernel(
                $modulus,
                $crate::backend::fast::Kernel::Portable,
            )
            .map(|$b| $body),
            #[cfg(feature = "gmp")]
            BackendKind::Gmp => $crate::backend::gmp::Gmp::prepare($modulus).map(|$b| $body),
            #[cfg(feature = "gmp")]
            BackendKind::GmpMulmod => {
                $crate::backend::gmp::GmpMulmod::prepare($modulus).map(|$b| $body)
            }
        }
    }};
}
