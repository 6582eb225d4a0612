//! Batch verification of Wesolowski proofs: the per-proof work that is not exponentiation
//! (hash-to-prime, 2^T mod ℓ) runs on rayon, and the two exponentiations of every proof,
//! π^ℓ and x^r, go to a [`BatchBackend`] in one call. Same checks and same answers as
//! [`crate::vdf::verify`], one per item.

use super::BatchBackend;
use crate::error::{Error, Result};
use crate::group::{Element, Modulus};
use crate::vdf::{hash_to_prime, Proof};
use num_bigint::BigUint;
use num_traits::One;
use rayon::prelude::*;

/// One claimed evaluation y = x^(2^T) and its proof.
#[derive(Clone, Debug)]
pub struct VerifyItem {
    pub x: Element,
    pub y: Element,
    pub t: u64,
    pub proof: Proof,
}

/// Verifies every item; the answer for item i is what `vdf::verify` says about it. `Err`
/// only when the backend itself fails.
pub fn verify_many(
    backend: &dyn BatchBackend,
    modulus: &Modulus,
    items: &[VerifyItem],
) -> Result<Vec<Result<()>>> {
    // Checks that need no exponentiation, and r = 2^T mod ℓ.
    let pre: Vec<Result<BigUint>> = items
        .par_iter()
        .map(|it| {
            if it.t == 0 {
                return Err(Error::ZeroIterations);
            }
            if it.x.value().is_one() {
                return Err(Error::NotCanonical {
                    what: "x",
                    reason: "±1 has order 2 and is refused",
                });
            }
            let (l, _) = hash_to_prime(modulus, &it.x, &it.y, it.t);
            if l != it.proof.l {
                return Err(Error::WrongChallenge);
            }
            Ok(BigUint::from(2u8).modpow(&BigUint::from(it.t), &l))
        })
        .collect();
    let live: Vec<usize> = (0..items.len()).filter(|i| pre[*i].is_ok()).collect();
    let mut bases = Vec::with_capacity(2 * live.len());
    let mut exps = Vec::with_capacity(2 * live.len());
    for &i in &live {
        let (it, r) = (&items[i], &pre[i]);
        bases.push(it.proof.pi.value().clone());
        exps.push(it.proof.l.clone());
        bases.push(it.x.value().clone());
        exps.push(r.as_ref().map_or_else(|_| BigUint::default(), Clone::clone));
    }
    let powers = backend.pow_many(modulus, &bases, &exps)?;
    let mut out: Vec<Result<()>> = pre.into_iter().map(|p| p.map(drop)).collect();
    for (j, &i) in live.iter().enumerate() {
        let w = (&powers[2 * j] * &powers[2 * j + 1]) % modulus.n();
        if &modulus.canonical(&w) != items[i].y.value() {
            out[i] = Err(Error::ProofMismatch);
        }
    }
    Ok(out)
}
