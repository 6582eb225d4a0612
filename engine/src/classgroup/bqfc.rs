//! chiavdf's compressed form encoding (`bqfc.c`), byte for byte, in both directions.
//!
//! Every form takes [`FORM_SIZE`] = 100 bytes. With d_bits = ⌈bits(D)/32⌉·32:
//!
//! | bytes                  | content                                                     |
//! |------------------------|-------------------------------------------------------------|
//! | 1                      | flags: bit 0 sign of b, bit 1 sign of t, bit 2 identity, bit 3 generator |
//! | 1                      | g_size = bytes(g) − 1                                       |
//! | d_bits/16 − g_size     | a' = a/g, little-endian                                     |
//! | d_bits/32 − g_size     | \|t'\| = \|t\|/g, little-endian                             |
//! | g_size + 1             | g = gcd(a, t)                                               |
//! | g_size + 1             | b0 = ⌊\|b\|/a'⌋ (0 when g = 1)                              |
//! | rest                   | zeros                                                       |
//!
//! where t comes from the partial extended GCD of (a, |b|) stopped at √a ([`xgcd_partial`]),
//! negated. The identity (1, 1) and the generator (2, 1) are one flag byte (0x04, 0x08) and 99
//! zeros; a form with a = b has t = g = b0 = 0.
//!
//! Decoding is chiavdf's: a first byte with the identity or generator flag stands for that form
//! **whatever the other 99 bytes hold** (chiavdf 1.2.0 accepts such encodings, so this does
//! too: those are the only non-canonical encodings accepted). Any other encoding is
//! decompressed and accepted only when re-encoding the result gives the same 100 bytes. On top
//! of chiavdf, the result must be a reduced, primitive form of D (chiavdf computes c by a
//! truncating division and does not check): a decoded form is always one this module's
//! arithmetic can trust.

use super::discriminant::{Discriminant, FORM_SIZE};
use super::form::{xgcd_partial, Form};
use crate::error::{Error, Result};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

const B_SIGN: u8 = 1 << 0;
const T_SIGN: u8 = 1 << 1;
const IS_1: u8 = 1 << 2;
const IS_GEN: u8 = 1 << 3;

/// bqfc's `struct qfb_c`.
struct Compressed {
    a: BigInt,
    t: BigInt,
    g: BigInt,
    b0: BigInt,
    b_sign: bool,
}

/// The 100-byte encoding of `f`, reduced first (as chiavdf's `SerializeForm` does). Refuses a
/// form that is not a form of `d`.
pub fn encode(d: &Discriminant, f: &Form) -> Result<Vec<u8>> {
    if !f.a.is_positive() || f.discriminant() != *d.value() {
        return Err(Error::BadForm {
            what: "form",
            reason: "b^2 - 4ac is not the discriminant",
        });
    }
    let f = f.clone().reduce();
    serialize(&f.a, &f.b, d.bits()).ok_or(Error::BadForm {
        what: "form",
        reason: "does not fit the compressed encoding",
    })
}

/// The form of `d` that `bytes` encode. Never panics; every refusal is an error.
pub fn decode(d: &Discriminant, bytes: &[u8]) -> Result<Form> {
    decode_as("form", d, bytes)
}

pub(crate) fn decode_as(what: &'static str, d: &Discriminant, bytes: &[u8]) -> Result<Form> {
    let bad = |reason: &str| Error::BadFormEncoding {
        what,
        reason: reason.to_owned(),
    };
    if bytes.len() != FORM_SIZE {
        return Err(Error::WrongLength {
            what,
            expected: FORM_SIZE,
            got: bytes.len(),
        });
    }
    let (a, b) = if bytes[0] & (IS_1 | IS_GEN) != 0 {
        let a = if bytes[0] & IS_GEN != 0 { 2u8 } else { 1 };
        (BigInt::from(a), BigInt::one())
    } else {
        let c = deserialize_only(bytes, d.bits()).ok_or_else(|| bad("g_size out of range"))?;
        let (a, b) = decompress(d.value(), &c).map_err(bad)?;
        match serialize(&a, &b, d.bits()) {
            Some(canon) if canon.as_slice() == bytes => {}
            _ => return Err(bad("not the canonical encoding")),
        }
        (a, b)
    };
    let f = Form::from_ab(a, b, d.value())
        .ok_or_else(|| bad("4a does not divide b^2 - D: not a form of this discriminant"))?;
    f.check(d)
        .map_err(|reason| Error::BadForm { what, reason })?;
    Ok(f)
}

/// bqfc's `bqfc_compr`.
fn compress(a: &BigInt, b: &BigInt) -> Compressed {
    if a == b {
        return Compressed {
            a: a.clone(),
            t: BigInt::zero(),
            g: BigInt::zero(),
            b0: BigInt::zero(),
            b_sign: false,
        };
    }
    let sign = b.is_negative();
    let a_sqrt = a.magnitude().sqrt();
    let (_, co1, _, _) = xgcd_partial(a.clone(), b.abs(), &BigInt::from(a_sqrt));
    let mut t = -co1;
    let g = a.gcd(&t);
    let (ca, b0) = if g.is_one() {
        (a.clone(), BigInt::zero())
    } else if g.is_zero() {
        // t = 0 and a = 0: not a form; keep bqfc's arithmetic total.
        (a.clone(), BigInt::zero())
    } else {
        let ca = a / &g;
        t = &t / &g;
        let mut b0 = if ca.is_zero() {
            BigInt::zero()
        } else {
            b / &ca
        };
        if sign {
            b0 = -b0;
        }
        (ca, b0)
    };
    Compressed {
        a: ca,
        t,
        g,
        b0,
        b_sign: sign,
    }
}

/// bqfc's `bqfc_decompr`.
fn decompress(d: &BigInt, c: &Compressed) -> std::result::Result<(BigInt, BigInt), &'static str> {
    if c.t.is_zero() {
        return Ok((c.a.clone(), c.a.clone()));
    }
    if c.a.is_zero() {
        return Err("a' is zero");
    }
    let t = if c.t.is_negative() {
        &c.t + &c.a
    } else {
        c.t.clone()
    };
    let e = t.extended_gcd(&c.a);
    if !e.gcd.is_one() {
        return Err("t is not invertible mod a'");
    }
    let t_inv = e.x.mod_floor(&c.a);
    let dm = d.mod_floor(&c.a);
    let tmp = ((&c.t * &c.t).mod_floor(&c.a) * dm) % &c.a;
    let root = tmp.sqrt();
    if &root * &root != tmp {
        return Err("t^2 * D mod a' is not a square");
    }
    let mut b = (root * t_inv) % &c.a;
    let a = if c.g > BigInt::one() {
        &c.a * &c.g
    } else {
        c.a.clone()
    };
    if c.b0.is_positive() {
        b += &c.a * &c.b0;
    }
    if c.b_sign {
        b = -b;
    }
    Ok((a, b))
}

/// Number of bytes in GMP's `mpz_export` of |n| (0 for 0).
fn byte_len(n: &BigInt) -> usize {
    n.bits().div_ceil(8) as usize
}

/// Appends |n| little-endian in exactly `size` bytes; `None` if it does not fit.
fn export(out: &mut Vec<u8>, size: usize, n: &BigInt) -> Option<()> {
    if byte_len(n) > size {
        return None;
    }
    let mut bytes = if n.is_zero() {
        Vec::new()
    } else {
        n.magnitude().to_bytes_le()
    };
    bytes.resize(size, 0);
    out.extend_from_slice(&bytes);
    Some(())
}

/// Reads `size` little-endian bytes from `bytes[*offset..]`.
fn import(bytes: &[u8], offset: &mut usize, size: usize) -> Option<BigInt> {
    let chunk = bytes.get(*offset..offset.checked_add(size)?)?;
    *offset += size;
    Some(BigInt::from(BigUint::from_bytes_le(chunk)))
}

fn round_bits(d_bits: u32) -> usize {
    (d_bits as usize).div_ceil(32) * 32
}

/// bqfc's `bqfc_serialize` on (a, b) (no reduction): `None` where a field would overflow
/// (chiavdf would write past its buffer; never the case for a reduced form of D).
fn serialize(a: &BigInt, b: &BigInt, d_bits: u32) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(FORM_SIZE);
    if b.is_one() && *a <= BigInt::from(2) {
        out.push(if *a == BigInt::from(2) { IS_GEN } else { IS_1 });
        out.resize(FORM_SIZE, 0);
        return Some(out);
    }
    let c = compress(a, b);
    let d_bits = round_bits(d_bits);
    // mpz_sizeinbase(g, 2) is 1 for g = 0.
    let g_size = (c.g.bits().max(1) as usize).div_ceil(8) - 1;
    if g_size > usize::from(u8::MAX) || g_size >= d_bits / 32 {
        return None;
    }
    let mut flags = if c.b_sign { B_SIGN } else { 0 };
    if c.t.is_negative() {
        flags |= T_SIGN;
    }
    out.push(flags);
    out.push(g_size as u8);
    export(&mut out, d_bits / 16 - g_size, &c.a)?;
    export(&mut out, d_bits / 32 - g_size, &c.t)?;
    export(&mut out, g_size + 1, &c.g)?;
    export(&mut out, g_size + 1, &c.b0)?;
    if out.len() > FORM_SIZE {
        return None;
    }
    out.resize(FORM_SIZE, 0);
    Some(out)
}

/// bqfc's `bqfc_deserialize_only`; `None` for a g_size chiavdf refuses.
fn deserialize_only(bytes: &[u8], d_bits: u32) -> Option<Compressed> {
    let d_bits = round_bits(d_bits);
    let g_size = usize::from(*bytes.get(1)?);
    if g_size >= d_bits / 32 {
        return None;
    }
    let mut offset = 2;
    let a = import(bytes, &mut offset, d_bits / 16 - g_size)?;
    let mut t = import(bytes, &mut offset, d_bits / 32 - g_size)?;
    let g = import(bytes, &mut offset, g_size + 1)?;
    let b0 = import(bytes, &mut offset, g_size + 1)?;
    let flags = bytes[0];
    if flags & T_SIGN != 0 {
        t = -t;
    }
    Some(Compressed {
        a,
        t,
        g,
        b0,
        b_sign: flags & B_SIGN != 0,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn disc(bits: u32) -> Discriminant {
        Discriminant::from_seed(b"bqfc tests", bits).unwrap()
    }

    #[test]
    fn special_forms_are_one_flag_byte() {
        let d = disc(1024);
        let id = encode(&d, &Form::identity(&d)).unwrap();
        assert_eq!(id[0], 0x04);
        assert!(id[1..].iter().all(|&x| x == 0));
        let g = encode(&d, &Form::generator(&d).unwrap()).unwrap();
        assert_eq!(g[0], 0x08);
        assert_eq!(decode(&d, &g).unwrap(), Form::generator(&d).unwrap());
        assert_eq!(decode(&d, &id).unwrap(), Form::identity(&d));
        // chiavdf ignores everything after a special flag byte.
        let mut junk = id.clone();
        junk[50] = 0x77;
        junk[0] |= 0xf0;
        assert_eq!(decode(&d, &junk).unwrap(), Form::identity(&d));
        let mut both = g.clone();
        both[0] |= IS_1;
        assert_eq!(decode(&d, &both).unwrap(), Form::generator(&d).unwrap());
    }

    #[test]
    fn wrong_lengths_are_refused() {
        let d = disc(512);
        for len in [0usize, 1, 2, 52, 99, 101, 200] {
            assert!(matches!(
                decode(&d, &vec![0u8; len]),
                Err(Error::WrongLength { .. })
            ));
        }
    }

    #[test]
    fn padding_must_be_zero() {
        let d = disc(512);
        let f = Form::generator(&d)
            .unwrap()
            .pow(&BigUint::from(987654u32), &d);
        let mut bytes = encode(&d, &f).unwrap();
        assert!(bytes[d.compressed_size()..].iter().all(|&x| x == 0));
        bytes[99] = 1;
        assert!(decode(&d, &bytes).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn encode_decode_roundtrip(e in 0u64..u64::MAX, big in any::<bool>()) {
            let d = disc(if big { 1024 } else { 512 });
            let f = Form::generator(&d).unwrap().pow(&BigUint::from(e), &d);
            let bytes = encode(&d, &f).unwrap();
            prop_assert_eq!(bytes.len(), FORM_SIZE);
            prop_assert_eq!(decode(&d, &bytes).unwrap(), f.clone());
            // the inverse (negative b) too
            let inv = f.inverse();
            let bytes = encode(&d, &inv).unwrap();
            prop_assert_eq!(decode(&d, &bytes).unwrap(), inv.clone());
            prop_assert_eq!(inv.b.is_negative(), bytes[0] & B_SIGN != 0);
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 100), flags in 0u8..4) {
            let d = disc(1024);
            let mut bytes = bytes;
            bytes[0] &= 0xf3;
            bytes[0] |= flags;
            if let Ok(f) = decode(&d, &bytes) {
                prop_assert!(f.is_valid_for(&d));
                prop_assert_eq!(encode(&d, &f).unwrap(), bytes);
            }
        }

        #[test]
        fn decode_accepts_only_the_canonical_bytes(e in 1u64..u64::MAX, i in 0usize..100, x in 1u8..=255) {
            let d = disc(1024);
            let f = Form::generator(&d).unwrap().pow(&BigUint::from(e), &d);
            let mut bytes = encode(&d, &f).unwrap();
            bytes[i] ^= x;
            // a changed byte can only decode to another form, or to a special form when it
            // set a flag
            if let Ok(g) = decode(&d, &bytes) {
                prop_assert!(g != f || bytes[0] & (IS_1 | IS_GEN) != 0);
            }
        }
    }
}
