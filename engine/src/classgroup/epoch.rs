//! Epochs over class groups (docs/PROTOCOL.md §19): every epoch gets a fresh discriminant from
//! its seed, so nobody can precompute in its group before the epoch's bets are committed.
//!
//! ```text
//! seed_e = the RSA chain's epoch seed (epoch::epoch_seed_bytes), over y_{e−1}'s 100 bytes
//! D_e    = create_discriminant(seed_e, bits)                  (chiavdf's, byte for byte)
//! x_e    = the generator (2, 1) of D_e                         (bytes 0x08 ‖ 0^99)
//! y_e    = x_e^(2^T) in Cl(D_e),  π_e = chiavdf's Wesolowski proof,  ℓ_e = B = GetB(D_e, x, y)
//! y_0    = the generator's bytes (public and predictable, like the RSA genesis output)
//! ```
//! x, y, π and checkpoints are stored as chiavdf's 100-byte compressed forms and ℓ as 33 bytes
//! big-endian, so `chiavdf.verify_wesolowski(str(D_e), x, y, π, T)` checks an epoch as stored.

use super::bqfc::{self, decode_as};
use super::discriminant::{Discriminant, MAX_BITS, MIN_BITS};
use super::form::Form;
use super::hash_prime::B_BITS;
use super::wesolowski::get_b;
use super::wesolowski::{self, Squarer};
use crate::error::{Error, Result};
use num_bigint::BigUint;

/// The prefix of class-group ids: `classgroup-<bits>`.
pub const GROUP_PREFIX: &str = "classgroup-";
/// Bytes of ℓ = B as stored: B has exactly [`B_BITS`] bits.
pub const L_BYTES: usize = (B_BITS as usize).div_ceil(8);

/// The discriminant size of a class-group id: `Some(Ok(bits))` for `classgroup-<bits>` (and
/// `classgroup`, 1024 bits), `Some(Err)` for a malformed one, `None` for an id of another
/// family (an RSA modulus).
pub fn group_bits(id: &str) -> Option<Result<u32>> {
    let rest = id.strip_prefix("classgroup")?;
    if rest.is_empty() {
        return Some(Ok(MAX_BITS));
    }
    let bits = rest
        .strip_prefix('-')
        .and_then(|b| b.parse::<u32>().ok())
        .filter(|b| b.is_multiple_of(8) && (MIN_BITS..=MAX_BITS).contains(b));
    Some(bits.ok_or_else(|| {
        Error::BadDiscriminant(format!(
            "group {id:?}: expected classgroup-<bits> with bits a multiple of 8 from {MIN_BITS} \
             to {MAX_BITS}, e.g. classgroup-1024"
        ))
    }))
}

/// The canonical id of the class group of `bits`-bit discriminants.
pub fn group_id(bits: u32) -> String {
    format!("{GROUP_PREFIX}{bits}")
}

/// The generator's compressed form, the same bytes for every discriminant: x_e, and y_0.
pub fn generator_bytes() -> Vec<u8> {
    let mut g = vec![0u8; super::FORM_SIZE];
    g[0] = 0x08;
    g
}

/// D_e, from the epoch's 32-byte seed.
pub fn epoch_discriminant(seed: &[u8; 32], bits: u32) -> Result<Discriminant> {
    Discriminant::from_seed(seed, bits)
}

/// An evaluated epoch, every value encoded as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochProof {
    pub y: Vec<u8>,
    pub pi: Vec<u8>,
    /// B, [`L_BYTES`] big-endian.
    pub l: Vec<u8>,
    /// (i, x^(2^i)) every `replay_every` squarings below T.
    pub checkpoints: Vec<(u64, Vec<u8>)>,
}

/// y = x^(2^T) from the generator of `d`, its proof, B and the replay checkpoints.
pub fn evaluate(
    sq: &dyn Squarer,
    d: &Discriminant,
    t: u64,
    replay_every: Option<u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<EpochProof> {
    let x = generator(d)?;
    let proved = wesolowski::prove_with_replay(sq, d, &x, t, replay_every, progress)?;
    let b = get_b(d, &x, &proved.y)?;
    Ok(EpochProof {
        y: bqfc::encode(d, &proved.y)?,
        pi: bqfc::encode(d, &proved.proof)?,
        l: l_bytes(&b),
        checkpoints: proved
            .replay
            .iter()
            .map(|(i, f)| Ok((*i, bqfc::encode(d, f)?)))
            .collect::<Result<_>>()?,
    })
}

/// Checks a stored epoch: x is the generator's bytes, ℓ is B = GetB(D, x, y), and the
/// Wesolowski proof holds. Never panics on any bytes.
pub fn verify(d: &Discriminant, x: &[u8], y: &[u8], pi: &[u8], l: &[u8], t: u64) -> Result<()> {
    if x != generator_bytes().as_slice() {
        return Err(Error::BadFormEncoding {
            what: "x",
            reason: "an epoch's input is the generator (08 then 99 zero bytes)".into(),
        });
    }
    let xf = generator(d)?;
    let yf = decode_as("y", d, y)?;
    // y's bytes key the outcomes (HMAC): only the one encoding of y counts, never the bytes
    // a flag byte lets through after it.
    if bqfc::encode(d, &yf)? != y {
        return Err(Error::BadFormEncoding {
            what: "y",
            reason: "not the canonical encoding of its form".into(),
        });
    }
    let b = l_bytes(&get_b(d, &xf, &yf)?);
    if l != b.as_slice() {
        return Err(Error::WrongClassGroupChallenge {
            expected: hex::encode(b),
        });
    }
    wesolowski::verify_encoded(d, x, y, pi, t)
}

/// Re-runs the squarings between stored checkpoints ([`wesolowski::verify_replay`]).
pub fn verify_replay(
    sq: &dyn Squarer,
    d: &Discriminant,
    y: &[u8],
    t: u64,
    checkpoints: &[(u64, Vec<u8>)],
) -> Result<()> {
    let x = generator(d)?;
    let y = decode_as("y", d, y)?;
    let points = checkpoints
        .iter()
        .map(|(i, v)| Ok((*i, decode_as("checkpoint", d, v)?)))
        .collect::<Result<Vec<_>>>()?;
    wesolowski::verify_replay(sq, d, &x, &y, t, &points)
}

/// B as stored: [`L_BYTES`] big-endian.
pub fn l_bytes(b: &BigUint) -> Vec<u8> {
    let raw = b.to_bytes_be();
    let mut out = vec![0u8; L_BYTES.saturating_sub(raw.len())];
    out.extend_from_slice(&raw);
    out
}

fn generator(d: &Discriminant) -> Result<Form> {
    Form::generator(d).ok_or_else(|| {
        Error::BadDiscriminant("D ≢ 1 (mod 8): the form (2, 1) is not one of its forms".into())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::classgroup::{FastFormSquarer, ReferenceSquarer};

    fn d512() -> Discriminant {
        epoch_discriminant(&[7; 32], 512).unwrap()
    }

    #[test]
    fn ids_round_trip_and_refuse_bad_sizes() {
        assert_eq!(group_bits("classgroup-1024").unwrap().unwrap(), 1024);
        assert_eq!(group_bits("classgroup").unwrap().unwrap(), 1024);
        assert_eq!(group_bits(&group_id(512)).unwrap().unwrap(), 512);
        assert!(group_bits("rsa2048").is_none());
        for bad in [
            "classgroup-",
            "classgroup-1025",
            "classgroup-2048",
            "classgroup-0",
            "classgroupx",
        ] {
            assert!(group_bits(bad).unwrap().is_err(), "{bad}");
        }
    }

    #[test]
    fn generator_bytes_are_the_encoded_generator() {
        let d = d512();
        let g = bqfc::encode(&d, &generator(&d).unwrap()).unwrap();
        assert_eq!(g, generator_bytes());
    }

    #[test]
    fn an_evaluated_epoch_verifies_and_replays_and_tampering_fails() {
        let d = d512();
        let sq = FastFormSquarer::new(&d).unwrap();
        let t = 1000;
        let p = evaluate(&sq, &d, t, Some(t.div_ceil(16)), &mut |_| {}).unwrap();
        assert_eq!(p.l.len(), L_BYTES);
        assert_eq!(p.checkpoints.len(), 15);
        assert!(p.checkpoints.iter().all(|(i, _)| i % 63 == 0 && *i < t));
        let x = generator_bytes();
        verify(&d, &x, &p.y, &p.pi, &p.l, t).unwrap();
        verify_replay(&ReferenceSquarer::new(&d), &d, &p.y, t, &p.checkpoints).unwrap();
        // The same y and proof as the plain prover (so chiavdf's, by its interop tests).
        let g = generator(&d).unwrap();
        let (y, proof) = wesolowski::prove(&sq, &d, &g, t, &mut |_| {}).unwrap();
        assert_eq!(p.y, bqfc::encode(&d, &y).unwrap());
        assert_eq!(p.pi, bqfc::encode(&d, &proof).unwrap());

        assert!(verify(&d, &x, &p.y, &p.pi, &p.l, t + 1).is_err());
        let mut l = p.l.clone();
        l[32] ^= 2;
        assert!(verify(&d, &x, &p.y, &p.pi, &l, t).is_err());
        let other = p.checkpoints[3].1.clone();
        assert!(verify(&d, &other, &p.y, &p.pi, &p.l, t).is_err());
        let mut cps = p.checkpoints.clone();
        cps[5].1 = other;
        assert!(matches!(
            verify_replay(&sq, &d, &p.y, t, &cps),
            Err(Error::ReplayMismatch { .. })
        ));
        let other_d = epoch_discriminant(&[8; 32], 512).unwrap();
        assert!(verify(&other_d, &x, &p.y, &p.pi, &p.l, t).is_err());
    }
}
