//! API keys: `vrs_sk_` and 64 random hex digits, shown once at creation. The store keeps only
//! the key's SHA-256; a request's key is hashed, looked up by that hash, and the hashes are
//! compared again in constant time.

use rand::RngCore;
use sha2::{Digest, Sha256};
use vrs_store::{ApiKey, Store, StoreError};

/// What every key starts with (so that a leaked one is recognisable by secret scanners).
pub const KEY_PREFIX: &str = "vrs_sk_";

/// A new key and its stored record.
pub fn generate(name: &str, now_ms: i64) -> (String, ApiKey) {
    let mut secret = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let key = format!("{KEY_PREFIX}{}", hex::encode(secret));
    let mut id = [0u8; 6];
    rand::rngs::OsRng.fill_bytes(&mut id);
    let record = ApiKey {
        id: format!("key_{}", hex::encode(id)),
        name: name.to_owned(),
        key_hash: hash(&key),
        created_at_ms: now_ms,
        revoked_at_ms: None,
        uses: 0,
        last_used_ms: None,
    };
    (key, record)
}

pub fn hash(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Equality whose time does not depend on where the inputs differ.
pub fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Why a presented key was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyRefused {
    Unknown,
    Revoked,
}

/// The active key matching `presented`.
pub async fn authenticate(
    store: &dyn Store,
    presented: &str,
) -> Result<Result<ApiKey, KeyRefused>, StoreError> {
    let h = hash(presented);
    Ok(match store.api_key_by_hash(h).await? {
        Some(k) if ct_eq(&k.key_hash, &h) => match k.revoked_at_ms {
            None => Ok(k),
            Some(_) => Err(KeyRefused::Revoked),
        },
        _ => Err(KeyRefused::Unknown),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_and_only_their_hash_is_kept() {
        let (k1, r1) = generate("a", 1);
        let (k2, r2) = generate("a", 1);
        assert_ne!(k1, k2);
        assert_ne!(r1.id, r2.id);
        assert!(k1.starts_with(KEY_PREFIX) && k1.len() == KEY_PREFIX.len() + 64);
        assert_eq!(r1.key_hash, hash(&k1));
        assert!(!format!("{r1:?}").contains(&k1[KEY_PREFIX.len()..]));
        assert!(ct_eq(&r1.key_hash, &hash(&k1)));
        assert!(!ct_eq(&r1.key_hash, &r2.key_hash));
    }
}
