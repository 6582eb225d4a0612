//! Signed acceptance (docs/PROTOCOL.md §11, "Signed acceptance"): the operator's Ed25519
//! signature over what it accepted, handed to the player with every 202 or instant 200, so a
//! bet the service later drops or alters is provable to anyone.
//!
//! ```text
//! message = u8(17) ‖ "vrs/v2/acceptance" ‖ u8(kind) ‖ u64(number) ‖ leaf_hash ‖ u64(accepted_at_ms)
//! kind 1: the epoch path, number = the epoch;  kind 2: pool-served, number = the pool entry
//! ```
//! Pure rules and the key in memory: no I/O (the key file is the binary's, `vrs/src/cli/acceptance_key.rs`).

use anyhow::Context;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use rand::RngCore;

/// Domain tag of the signed message.
pub const TAG: &[u8] = b"vrs/v2/acceptance";

/// Where a game was accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Committed into epoch e (the epoch path).
    Epoch(u64),
    /// Served from pool entry i (an instant bet).
    Pool(u64),
}

impl Place {
    pub fn kind(self) -> u8 {
        match self {
            Self::Epoch(_) => 1,
            Self::Pool(_) => 2,
        }
    }

    pub fn number(self) -> u64 {
        match self {
            Self::Epoch(n) | Self::Pool(n) => n,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Epoch(_) => "epoch",
            Self::Pool(_) => "pool",
        }
    }
}

/// The signed bytes (67 of them).
pub fn message(place: Place, leaf_hash: &[u8; 32], accepted_at_ms: i64) -> Vec<u8> {
    let mut m = Vec::with_capacity(67);
    m.push(TAG.len() as u8);
    m.extend_from_slice(TAG);
    m.push(place.kind());
    m.extend_from_slice(&place.number().to_be_bytes());
    m.extend_from_slice(leaf_hash);
    m.extend_from_slice(&(accepted_at_ms.max(0) as u64).to_be_bytes());
    m
}

/// A stored signature and the key that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signed {
    pub public_key: [u8; 32],
    pub signature: [u8; 64],
}

/// Checks `signed` over `message` (RFC 8032 §5.1.7, strict: canonical S and A, no small-order
/// A or R).
pub fn verify(signed: &Signed, message: &[u8]) -> Result<(), String> {
    let key = VerifyingKey::from_bytes(&signed.public_key)
        .map_err(|_| "the public key is not a valid Ed25519 point".to_owned())?;
    let sig = Signature::from_bytes(&signed.signature);
    key.verify_strict(message, &sig)
        .map_err(|_| "the Ed25519 signature does not verify".to_owned())
}

/// The `acceptance` object of a 202 or instant 200, and of a verification's proof
/// (docs/PROTOCOL.md §11): what a player saves as evidence.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct AcceptanceDoc {
    /// 2.
    pub version: u8,
    /// `epoch` (kind 1) or `pool` (kind 2).
    pub kind: String,
    pub epoch: Option<u64>,
    pub pool_index: Option<u64>,
    /// The bet leaf, hex.
    pub leaf: String,
    /// SHA-256(0x00 ‖ leaf), 64 hex digits.
    pub leaf_hash: String,
    pub accepted_at_ms: i64,
    /// 64 hex digits.
    pub public_key: String,
    /// 128 hex digits (R ‖ S).
    pub signature: String,
}

impl AcceptanceDoc {
    pub fn new(place: Place, leaf: &[u8], accepted_at_ms: i64, signed: &Signed) -> Self {
        Self {
            version: 2,
            kind: place.name().to_owned(),
            epoch: matches!(place, Place::Epoch(_)).then_some(place.number()),
            pool_index: matches!(place, Place::Pool(_)).then_some(place.number()),
            leaf: hex::encode(leaf),
            leaf_hash: hex::encode(vrs_engine::merkle::leaf_hash(leaf)),
            accepted_at_ms,
            public_key: hex::encode(signed.public_key),
            signature: hex::encode(signed.signature),
        }
    }

    /// Where the document says the game was accepted.
    pub fn place(&self) -> Result<Place, String> {
        match (self.kind.as_str(), self.epoch, self.pool_index) {
            ("epoch", Some(e), _) => Ok(Place::Epoch(e)),
            ("pool", _, Some(i)) => Ok(Place::Pool(i)),
            (k, _, _) => Err(format!(
                "kind {k:?} must be \"epoch\" with an epoch or \"pool\" with a pool_index"
            )),
        }
    }

    /// Checks the document on its own: the leaf hash is the leaf's, and the signature is the
    /// key's over the message. Whether the key is the operator's is the caller's to check.
    pub fn check_signature(&self) -> Result<(Vec<u8>, Signed), String> {
        if self.version != 2 {
            return Err(format!("version {} (expected 2)", self.version));
        }
        let leaf = hex::decode(&self.leaf).map_err(|_| "leaf is not hex".to_owned())?;
        let leaf_hash = vrs_engine::merkle::leaf_hash(&leaf);
        if hex::encode(leaf_hash) != self.leaf_hash.to_ascii_lowercase() {
            return Err("leaf_hash is not SHA-256(0x00 ‖ leaf)".into());
        }
        let signed = Signed {
            public_key: decode_fixed(&self.public_key, "public_key")?,
            signature: decode_fixed(&self.signature, "signature")?,
        };
        verify(
            &signed,
            &message(self.place()?, &leaf_hash, self.accepted_at_ms),
        )?;
        Ok((leaf, signed))
    }
}

fn decode_fixed<const N: usize>(text: &str, what: &str) -> Result<[u8; N], String> {
    hex::decode(text)
        .ok()
        .and_then(|b| <[u8; N]>::try_from(b).ok())
        .ok_or_else(|| format!("{what} is not {} hex digits", 2 * N))
}

/// The operator's acceptance key.
pub struct AcceptanceSigner {
    key: SigningKey,
}

impl std::fmt::Debug for AcceptanceSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        write!(f, "AcceptanceSigner({})", hex::encode(self.public_key()))
    }
}

impl AcceptanceSigner {
    /// A fresh random key (tests, and a data dir's first start).
    pub fn generate() -> Self {
        let mut seed = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        Self::from_seed(seed)
    }

    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// A key written as 64 hex digits (surrounding whitespace ignored).
    pub fn from_hex(text: &str) -> anyhow::Result<Self> {
        let bytes = hex::decode(text.trim())
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .context("an acceptance signing key is 64 hex digits (a 32-byte Ed25519 seed)")?;
        Ok(Self::from_seed(bytes))
    }

    /// The 32-byte seed the key is made from: the secret, for writing the key file only.
    pub fn seed(&self) -> [u8; 32] {
        self.key.to_bytes()
    }

    pub fn public_key(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// Signs the acceptance of the game whose bet leaf is `leaf`.
    pub fn sign(&self, place: Place, leaf: &[u8], accepted_at_ms: i64) -> Signed {
        let leaf_hash = vrs_engine::merkle::leaf_hash(leaf);
        let sig = self.key.sign(&message(place, &leaf_hash, accepted_at_ms));
        Signed {
            public_key: self.public_key(),
            signature: sig.to_bytes(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn message_layout() {
        let m = message(Place::Pool(7), &[0xab; 32], 1_000);
        assert_eq!(m.len(), 67);
        assert_eq!(m[0], 17);
        assert_eq!(&m[1..18], TAG);
        assert_eq!(m[18], 2);
        assert_eq!(&m[19..27], &7u64.to_be_bytes());
        assert_eq!(&m[27..59], &[0xab; 32]);
        assert_eq!(&m[59..67], &1_000u64.to_be_bytes());
    }

    #[test]
    fn signatures_bind_every_field() {
        let s = AcceptanceSigner::generate();
        let leaf = b"leaf".to_vec();
        let signed = s.sign(Place::Epoch(3), &leaf, 5);
        let h = vrs_engine::merkle::leaf_hash(&leaf);
        verify(&signed, &message(Place::Epoch(3), &h, 5)).unwrap();
        for other in [
            message(Place::Epoch(4), &h, 5),
            message(Place::Pool(3), &h, 5),
            message(Place::Epoch(3), &h, 6),
            message(Place::Epoch(3), &vrs_engine::merkle::leaf_hash(b"leag"), 5),
        ] {
            assert!(verify(&signed, &other).is_err());
        }
        let other_key = AcceptanceSigner::generate().sign(Place::Epoch(3), &leaf, 5);
        let forged = Signed {
            public_key: s.public_key(),
            signature: other_key.signature,
        };
        assert!(verify(&forged, &message(Place::Epoch(3), &h, 5)).is_err());
    }

    #[test]
    fn hex_keys_are_64_digits_and_debug_hides_them() {
        let a = AcceptanceSigner::generate();
        let text = hex::encode(a.seed());
        assert_eq!(
            AcceptanceSigner::from_hex(&text).unwrap().public_key(),
            a.public_key()
        );
        assert!(AcceptanceSigner::from_hex("zz").is_err());
        assert!(!format!("{a:?}").contains(&text));
    }
}
