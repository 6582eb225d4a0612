//! The group: Z_N^* modulo {±1}, for an RSA modulus N of unknown factorisation.
//!
//! Why the quotient: −1 has order 2 and is known to everyone, so in Z_N^* a prover could
//! return −y instead of y, or multiply a proof by −1, and still pass some checks. Working with
//! classes {v, N − v} and their canonical representative min(v, N − v) removes that freedom:
//! each class has exactly one encoding, and ±1 (the only elements of known small order) are
//! refused as inputs. See docs/PROTOCOL.md, "Group and encoding".

mod moduli;

use crate::error::{Error, Result};
use crate::hash::{tagged, TAG_HASH_TO_GROUP};
use num_bigint::BigUint;
use num_traits::{One, Zero};
use sha2::Digest;
use std::fmt;

pub use moduli::{RSA2048_DECIMAL, TEST1024_HEX, TEST512_HEX};

/// Smallest modulus accepted: enough for tests, far too small for security.
pub const MIN_MODULUS_BITS: u64 = 64;
/// Largest modulus accepted: the fast backends work on 32 limbs of 64 bits.
pub const MAX_MODULUS_BITS: u64 = 2048;

/// An odd RSA modulus with its identifier and the derived constants every backend needs.
#[derive(Clone, PartialEq, Eq)]
pub struct Modulus {
    id: String,
    n: BigUint,
    /// (N − 1) / 2: the largest canonical representative.
    half: BigUint,
    byte_len: usize,
}

impl fmt::Debug for Modulus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Modulus({}, {} bits)", self.id, self.bits())
    }
}

impl Modulus {
    /// The RSA-2048 challenge modulus: the default, and the one for production.
    pub fn rsa2048() -> Self {
        Self::from_decimal_unchecked("rsa2048", RSA2048_DECIMAL)
    }

    /// Looks a modulus up by name: `rsa2048`, `test512`, `test1024` (insecure, for tests), or
    /// `hex:<digits>` for any odd modulus of 64 to 2048 bits.
    pub fn by_name(name: &str) -> Result<Self> {
        match name {
            "rsa2048" => Ok(Self::rsa2048()),
            "test512" => Self::from_hex("test512", TEST512_HEX),
            "test1024" => Self::from_hex("test1024", TEST1024_HEX),
            other => match other.strip_prefix("hex:") {
                Some(digits) => Self::from_hex(other, digits),
                None => Err(Error::BadModulus(format!(
                    "unknown modulus {other:?}; use rsa2048, test512, test1024 or hex:<digits>"
                ))),
            },
        }
    }

    /// A modulus from hexadecimal digits (no `0x`), validated.
    pub fn from_hex(id: &str, digits: &str) -> Result<Self> {
        let n = BigUint::parse_bytes(digits.as_bytes(), 16)
            .ok_or_else(|| Error::BadModulus(format!("{id}: not a hexadecimal number")))?;
        Self::new(id, n)
    }

    /// A modulus from its value, validated: odd, 64 to 2048 bits.
    pub fn new(id: &str, n: BigUint) -> Result<Self> {
        let bits = n.bits();
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(Error::BadModulus(format!(
                "{id}: {bits} bits; must be {MIN_MODULUS_BITS} to {MAX_MODULUS_BITS}"
            )));
        }
        if !n.bit(0) {
            return Err(Error::BadModulus(format!("{id}: must be odd")));
        }
        let half = (&n - 1u32) >> 1;
        let byte_len = bits.div_ceil(8) as usize;
        Ok(Self {
            id: id.to_owned(),
            n,
            half,
            byte_len,
        })
    }

    fn from_decimal_unchecked(id: &str, digits: &str) -> Self {
        let n = BigUint::parse_bytes(digits.as_bytes(), 10).unwrap_or_default();
        let half = (&n - 1u32) >> 1;
        let byte_len = n.bits().div_ceil(8) as usize;
        Self {
            id: id.to_owned(),
            n,
            half,
            byte_len,
        }
    }

    /// The identifier recorded next to every output (`rsa2048`, `test512`, `hex:…`).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// N itself.
    pub fn n(&self) -> &BigUint {
        &self.n
    }

    /// Bit length of N.
    pub fn bits(&self) -> u64 {
        self.n.bits()
    }

    /// Width in bytes of every encoded element: ⌈bits(N) / 8⌉.
    pub fn byte_len(&self) -> usize {
        self.byte_len
    }

    /// N as fixed-width big-endian bytes.
    pub fn to_be_bytes(&self) -> Vec<u8> {
        self.encode_int(&self.n)
    }

    /// min(v, N − v) for v in [0, N): the canonical representative of v's class.
    pub fn canonical(&self, v: &BigUint) -> BigUint {
        debug_assert!(v < &self.n);
        if v > &self.half {
            &self.n - v
        } else {
            v.clone()
        }
    }

    /// The canonical element of the class of `v` (any v < N that is not 0).
    pub fn element(&self, v: &BigUint) -> Result<Element> {
        if v >= &self.n {
            return Err(Error::NotCanonical {
                what: "element",
                reason: "not below N",
            });
        }
        let c = self.canonical(v);
        if c.is_zero() {
            return Err(Error::NotCanonical {
                what: "element",
                reason: "zero is not in the group",
            });
        }
        Ok(Element(c))
    }

    /// Decodes a group element from fixed-width big-endian bytes. Refuses a wrong length,
    /// zero, values ≥ N and non-canonical values (v > (N − 1)/2): each class has one encoding.
    pub fn decode(&self, what: &'static str, bytes: &[u8]) -> Result<Element> {
        if bytes.len() != self.byte_len {
            return Err(Error::WrongLength {
                what,
                expected: self.byte_len,
                got: bytes.len(),
            });
        }
        let v = BigUint::from_bytes_be(bytes);
        if v.is_zero() {
            return Err(Error::NotCanonical {
                what,
                reason: "zero is not in the group",
            });
        }
        if v > self.half {
            return Err(Error::NotCanonical {
                what,
                reason: "not canonical: must be at most (N - 1) / 2, use min(v, N - v)",
            });
        }
        Ok(Element(v))
    }

    /// Decodes an input x of the VDF: as [`Modulus::decode`], and also refuses the class ±1.
    pub fn decode_input(&self, bytes: &[u8]) -> Result<Element> {
        let x = self.decode("x", bytes)?;
        if x.0.is_one() {
            return Err(Error::NotCanonical {
                what: "x",
                reason: "±1 has order 2 and is refused",
            });
        }
        Ok(x)
    }

    /// Decodes an element from hex of exactly 2 × byte_len digits.
    pub fn decode_hex(&self, what: &'static str, hex_digits: &str) -> Result<Element> {
        let bytes = decode_hex(what, hex_digits)?;
        self.decode(what, &bytes)
    }

    /// Fixed-width big-endian bytes of an integer below 2^(8·byte_len).
    pub fn encode_int(&self, v: &BigUint) -> Vec<u8> {
        let raw = v.to_bytes_be();
        let mut out = vec![0u8; self.byte_len.saturating_sub(raw.len())];
        out.extend_from_slice(&raw);
        out
    }

    /// Fixed-width big-endian bytes of an element.
    pub fn encode(&self, e: &Element) -> Vec<u8> {
        self.encode_int(&e.0)
    }

    /// Fixed-width lowercase hex of an element.
    pub fn encode_hex(&self, e: &Element) -> String {
        hex::encode(self.encode(e))
    }

    /// Hash-to-group: a 32-byte seed → an element of Z_N^*/{±1}, neither 0 nor ±1.
    ///
    /// For attempt a = 0, 1, …: the stream S = B_0 ‖ B_1 ‖ … with
    /// B_i = SHA-256(u8(20) ‖ "vrs/v1/hash-to-group" ‖ u16(byte_len) ‖ N ‖ seed ‖ u32(a) ‖ u32(i))
    /// is cut to byte_len + 16 bytes (at least bits(N) + 128 bits, so the reduction mod N is
    /// within 2^-128 of uniform), read big-endian as v, and x = min(v mod N, N − v mod N).
    /// If x ∈ {0, 1} (probability about 2^-2046 for RSA-2048) the next attempt is taken.
    pub fn hash_to_group(&self, seed: &[u8; 32]) -> Element {
        let stream_len = self.byte_len + 16;
        let blocks = stream_len.div_ceil(32);
        let mut prefix = tagged(TAG_HASH_TO_GROUP);
        prefix.update((self.byte_len as u16).to_be_bytes());
        prefix.update(self.to_be_bytes());
        prefix.update(seed);
        for attempt in 0u32.. {
            let mut stream = Vec::with_capacity(blocks * 32);
            for i in 0..blocks as u32 {
                let mut h = prefix.clone();
                h.update(attempt.to_be_bytes());
                h.update(i.to_be_bytes());
                stream.extend_from_slice(&h.finalize());
            }
            stream.truncate(stream_len);
            let v = BigUint::from_bytes_be(&stream) % &self.n;
            let x = self.canonical(&v);
            if x > BigUint::one() {
                return Element(x);
            }
        }
        unreachable!("2^32 attempts of hash-to-group all gave 0 or ±1")
    }
}

/// An element of Z_N^*/{±1}, held as its canonical representative. Only [`Modulus`] makes
/// them, so an `Element` is always canonical and nonzero for the modulus that made it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Element(BigUint);

impl Element {
    /// The canonical representative as an integer.
    pub fn value(&self) -> &BigUint {
        &self.0
    }
}

/// Decodes hex digits (upper or lower case, no prefix) with a clear error.
pub fn decode_hex(what: &'static str, digits: &str) -> Result<Vec<u8>> {
    hex::decode(digits.trim()).map_err(|e| Error::BadHex {
        what,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsa2048_is_the_challenge_number() {
        let m = Modulus::rsa2048();
        assert_eq!(RSA2048_DECIMAL.len(), 617);
        assert_eq!(m.bits(), 2048);
        assert_eq!(m.byte_len(), 256);
        assert_eq!(&hex::encode(m.to_be_bytes())[..16], "c7970ceedcc3b075");
    }

    #[test]
    fn decode_refuses_malformed_elements() {
        let m = Modulus::by_name("test512").expect("named modulus");
        let len = m.byte_len();
        assert!(matches!(
            m.decode("y", &vec![0; len - 1]),
            Err(Error::WrongLength { .. })
        ));
        assert!(matches!(
            m.decode("y", &vec![0; len]),
            Err(Error::NotCanonical { .. })
        ));
        let n_minus_1 = m.encode_int(&(m.n() - 1u32));
        assert!(matches!(
            m.decode("y", &n_minus_1),
            Err(Error::NotCanonical { .. })
        ));
        let n = m.encode_int(m.n());
        assert!(m.decode("y", &n).is_err());
        let one = m.encode_int(&BigUint::one());
        assert!(m.decode("y", &one).is_ok());
        assert!(m.decode_input(&one).is_err());
        let half = m.encode_int(&((m.n() - 1u32) >> 1));
        assert!(m.decode_input(&half).is_ok());
    }

    #[test]
    fn bad_moduli_are_refused() {
        assert!(Modulus::by_name("rsa4096").is_err());
        assert!(Modulus::from_hex("even", "10000000000000000000").is_err());
        assert!(Modulus::from_hex("tiny", "ff").is_err());
        assert!(Modulus::from_hex("junk", "xyz").is_err());
    }

    #[test]
    fn hash_to_group_is_canonical_and_seed_sensitive() {
        let m = Modulus::rsa2048();
        let a = m.hash_to_group(&[0u8; 32]);
        let b = m.hash_to_group(&[1u8; 32]);
        assert_ne!(a, b);
        assert_eq!(m.decode_input(&m.encode(&a)), Ok(a.clone()));
        assert_eq!(a, m.hash_to_group(&[0u8; 32]));
    }
}
