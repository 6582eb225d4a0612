//! Wesolowski verification: recompute ℓ, then check π^ℓ · x^(2^T mod ℓ) = y in Z_N^*/{±1}.
//! Two exponents below 2^256 (Straus' simultaneous windows, shared squarings) plus
//! hash-to-prime: well under a millisecond for RSA-2048.

use super::{hash_to_prime, Proof, CHALLENGE_BYTES};
use crate::backend::fast::monty::pow2_window;
use crate::backend::fast::Fast;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::group::{Element, Modulus};
use num_bigint::BigUint;
use num_traits::One;

/// Checks a proof of y = x^(2^T). `Ok(())` when valid; otherwise the reason.
pub fn verify(modulus: &Modulus, x: &Element, y: &Element, t: u64, proof: &Proof) -> Result<()> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    if x.value().is_one() {
        return Err(Error::NotCanonical {
            what: "x",
            reason: "±1 has order 2 and is refused",
        });
    }
    let (l, _) = hash_to_prime(modulus, x, y, t);
    if l != proof.l {
        return Err(Error::WrongChallenge);
    }
    let r = BigUint::from(2u8).modpow(&BigUint::from(t), &l);
    let fast = Fast::prepare(modulus)?;
    let w = pow2_window(
        &fast,
        &fast.to_monty(proof.pi.value()),
        &l,
        &fast.to_monty(x.value()),
        &r,
    );
    let w = modulus.canonical(&fast.from_monty(&w));
    if &w == y.value() {
        Ok(())
    } else {
        Err(Error::ProofMismatch)
    }
}

/// [`verify`] on encodings: x, y, π fixed-width big-endian, ℓ 32 bytes big-endian. Every
/// malformed field is an error naming it, never a panic.
pub fn verify_encoded(
    modulus: &Modulus,
    x: &[u8],
    y: &[u8],
    t: u64,
    l: &[u8],
    pi: &[u8],
) -> Result<()> {
    let x = modulus.decode_input(x)?;
    let y = modulus.decode("y", y)?;
    let pi = modulus.decode("pi", pi)?;
    if l.len() != CHALLENGE_BYTES {
        return Err(Error::WrongLength {
            what: "l",
            expected: CHALLENGE_BYTES,
            got: l.len(),
        });
    }
    verify(
        modulus,
        &x,
        &y,
        t,
        &Proof {
            l: BigUint::from_bytes_be(l),
            pi,
        },
    )
}
