//! Discriminants: chiavdf's `create_discriminant(seed, bits)` and its "-0x…" strings.
//!
//! `create_discriminant(seed, bits)` = −`HashPrime(seed, bits, {0, 1, 2, bits − 1})`: a prime
//! p ≡ 7 (mod 8) of exactly `bits` bits, so D = −p ≡ 1 (mod 8). chiavdf 1.2.0 refuses an empty
//! seed, a size that is not a positive multiple of 8, and sizes above 1024 bits; so does
//! [`Discriminant::from_seed`].

use super::hash_prime::hash_prime;
use crate::error::{Error, Result};
use num_bigint::{BigInt, Sign};
use num_traits::{Num, Signed, ToPrimitive};

/// The largest discriminant chiavdf 1.2.0 creates, and the largest its 100-byte compressed forms
/// can hold.
pub const MAX_BITS: u32 = 1024;
/// The smallest discriminant accepted here (chiavdf's smallest `create_discriminant` size).
pub const MIN_BITS: u32 = 8;
/// Bytes of every compressed form chiavdf 1.2.0 writes or reads (`BQFC_FORM_SIZE`), whatever
/// the discriminant's size: smaller discriminants are zero-padded to it.
pub const FORM_SIZE: usize = (MAX_BITS as usize).div_ceil(32) * 3 + 4;

/// A negative discriminant D ≡ 1 (mod 4) of [`MIN_BITS`] to [`MAX_BITS`] bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discriminant {
    d: BigInt,
    bits: u32,
    /// ⌊|D|^(1/4)⌋: NUDUPL's bound (chiavdf's `L = root(-D, 4)`).
    fourth_root: BigInt,
}

impl Discriminant {
    /// chiavdf's `create_discriminant(seed, bits)`.
    pub fn from_seed(seed: &[u8], bits: u32) -> Result<Self> {
        if seed.is_empty() {
            return Err(Error::BadDiscriminant("the seed must not be empty".into()));
        }
        if bits == 0 || !bits.is_multiple_of(8) || !(MIN_BITS..=MAX_BITS).contains(&bits) {
            return Err(Error::BadDiscriminant(format!(
                "size {bits} bits: must be a multiple of 8 from {MIN_BITS} to {MAX_BITS}"
            )));
        }
        let p = hash_prime(seed, bits, &[0, 1, 2, bits - 1]).ok_or_else(|| {
            Error::BadDiscriminant(format!(
                "no {bits}-bit prime for this {}-byte seed: its counter wraps around without \
                 one (chiavdf would never return); use a longer seed",
                seed.len()
            ))
        })?;
        Self::new(-BigInt::from(p))
    }

    /// A discriminant from its value: negative, ≡ 1 (mod 4), [`MIN_BITS`] to [`MAX_BITS`] bits.
    /// Primality is not checked (chiavdf does not check it either).
    pub fn new(d: BigInt) -> Result<Self> {
        if !d.is_negative() {
            return Err(Error::BadDiscriminant("must be negative".into()));
        }
        let bits = d.bits();
        if !(u64::from(MIN_BITS)..=u64::from(MAX_BITS)).contains(&bits) {
            return Err(Error::BadDiscriminant(format!(
                "{bits} bits: must have {MIN_BITS} to {MAX_BITS} bits"
            )));
        }
        let low = (d.magnitude() % 4u8).to_u8().unwrap_or(0);
        // d is negative: d ≡ 1 (mod 4) means |d| ≡ 3 (mod 4).
        if low != 3 {
            return Err(Error::BadDiscriminant("must be 1 mod 4".into()));
        }
        let fourth_root = BigInt::from(d.magnitude().nth_root(4));
        Ok(Self {
            bits: bits as u32,
            d,
            fourth_root,
        })
    }

    /// Parses chiavdf's string: "-0x" and hexadecimal digits (either case). Decimal "-123…" is
    /// accepted too.
    pub fn from_hex(s: &str) -> Result<Self> {
        let s = s.trim();
        let bad = |why: &str| Error::BadDiscriminant(format!("{why}: {:?}", truncate(s)));
        let Some(magnitude) = s.strip_prefix('-') else {
            return Err(bad("must be negative (\"-0x…\")"));
        };
        let (digits, radix) = match magnitude
            .strip_prefix("0x")
            .or_else(|| magnitude.strip_prefix("0X"))
        {
            Some(hex) => (hex, 16),
            None => (magnitude, 10),
        };
        if digits.is_empty() || digits.len() > 600 || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(bad("not a number"));
        }
        let m = BigInt::from_str_radix(digits, radix).map_err(|_| bad("not a number"))?;
        Self::new(-m)
    }

    /// chiavdf's string for D: "-0x" and lower-case hexadecimal digits, no leading zeros.
    pub fn to_hex(&self) -> String {
        format!("-0x{}", self.d.magnitude().to_str_radix(16))
    }

    /// D itself (negative).
    pub fn value(&self) -> &BigInt {
        &self.d
    }

    /// Bit length of |D| (chiavdf's `D.num_bits()`).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// Bytes of one encoded form on the wire: always [`FORM_SIZE`] (100) in chiavdf 1.2.0.
    pub fn form_size(&self) -> usize {
        FORM_SIZE
    }

    /// Bytes of a form's encoding that carry information (bqfc's `bqfc_get_compr_size`):
    /// ⌈bits/32⌉·3 + 4, 100 for 1024 bits; the rest of [`Self::form_size`] is zeros.
    pub fn compressed_size(&self) -> usize {
        (self.bits as usize).div_ceil(32) * 3 + 4
    }

    /// ⌊|D|^(1/4)⌋.
    pub fn fourth_root(&self) -> &BigInt {
        &self.fourth_root
    }

    /// D ≡ 1 (mod 8), where chiavdf's generator (2, 1, c) exists.
    pub fn has_generator(&self) -> bool {
        self.d.sign() == Sign::Minus && (-&self.d).iter_u64_digits().next().unwrap_or(0) % 8 == 7
    }
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_chiavdf_refuses() {
        assert!(Discriminant::from_seed(b"", 512).is_err());
        assert!(Discriminant::from_seed(b"x", 0).is_err());
        assert!(Discriminant::from_seed(b"x", 1028).is_err());
        assert!(Discriminant::from_seed(b"x", 1032).is_err());
        assert!(Discriminant::from_seed(b"x", 2048).is_err());
        assert!(Discriminant::from_seed(b"x", 513).is_err());
        // chiavdf loops forever on this one: 256 candidates, none prime.
        assert!(matches!(
            Discriminant::from_seed(b"\x01", 256),
            Err(Error::BadDiscriminant(_))
        ));
    }

    #[test]
    fn parses_and_prints_chiavdf_strings() {
        let d = Discriminant::from_seed(b"\x01\x02", 512).unwrap();
        let s = d.to_hex();
        assert!(s.starts_with("-0xdc6b269ab19b9f74d"), "{s}");
        assert_eq!(Discriminant::from_hex(&s).unwrap(), d);
        assert_eq!(
            Discriminant::from_hex(&s.to_uppercase().replace("-0X", "-0x")).unwrap(),
            d
        );
        assert!(d.has_generator());
        assert_eq!(d.bits(), 512);
        assert_eq!(d.form_size(), 100);
        assert_eq!(d.compressed_size(), 52);
    }

    #[test]
    fn from_hex_refuses_bad_values() {
        for bad in [
            "", "-", "-0x", "0x17", "17", "-0x10", "-0x1f", "-0xg7", "- 0x17", "-0x-17", "-0x3",
        ] {
            assert!(Discriminant::from_hex(bad).is_err(), "{bad:?}");
        }
        // 1 mod 4 and ≥ 8 bits: accepted
        assert!(Discriminant::from_hex("-0xef").is_ok());
        // −0xed ≡ 3 (mod 4): refused
        assert!(Discriminant::from_hex("-0xed").is_err());
        let huge = format!("-0x{}", "f".repeat(300));
        assert!(Discriminant::from_hex(&huge).is_err());
    }
}
