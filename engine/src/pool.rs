//! The pool chain: independent VDF instances computed ahead of demand, so that a bet can be
//! resolved the moment it arrives (docs/PROTOCOL.md, "Pool chain").
//!
//! Entries come in batches. Batch b's seed binds it to the batch before it and to a resolved
//! epoch of the main chain, so batches form one sequence that nobody can reorder or replace,
//! and none of them could have been computed before its anchor epoch resolved. Each entry
//! also mixes in a 32-byte secret r_i drawn by the generator and revealed only when the entry
//! is served: without it anyone could compute upcoming outputs from public data and choose a
//! winning player seed for the next entry.
//!
//! ```text
//! batch_seed_b = H("vrs/v1/pool-batch", u64 b ‖ root_{b−1} ‖ u64 anchor_epoch ‖ y_anchor)
//! seed_i       = H("vrs/v1/pool-entry", batch_seed_b ‖ u64 i ‖ r_i)    (i: global index)
//! x_i          = hash_to_group(seed_i);  y_i = x_i^(2^T_i);  (ℓ_i, π_i) Wesolowski
//! leaf_i       = u8(16) ‖ "vrs/v1/pool-leaf" ‖ u64 i ‖ u64 T_i ‖ x_i ‖ y_i ‖ ℓ_i ‖ π_i
//! root_b       = RFC 6962 root over leaf_i of the batch, in index order
//! game_id_i    = hex(H("vrs/v1/pool-game", u64 i ‖ y_i)[..16])
//! ```
//!
//! H(tag, …) is the tagged SHA-256 of [`crate::hash`]; root_0 is 32 zero bytes.

use crate::backend::Backend;
use crate::batch::BatchBackend;
use crate::error::Result;
use crate::group::{Element, Modulus};
use crate::hash::tagged;
use crate::merkle::{self, Hash};
use crate::vdf::{self, EvalOptions, CHALLENGE_BYTES};
use num_bigint::BigUint;
use rayon::prelude::*;
use sha2::Digest;

pub const TAG_POOL_BATCH: &[u8] = b"vrs/v1/pool-batch";
pub const TAG_POOL_ENTRY: &[u8] = b"vrs/v1/pool-entry";
pub const TAG_POOL_LEAF: &[u8] = b"vrs/v1/pool-leaf";
pub const TAG_POOL_GAME: &[u8] = b"vrs/v1/pool-game";

/// The previous root of the first batch.
pub const GENESIS_ROOT: Hash = [0; 32];

/// Where a batch sits: its number, the root of the batch before it, and the resolved epoch of
/// the main chain it is anchored to (its y fixed-width big-endian).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchLink {
    pub batch: u64,
    pub prev_root: Hash,
    pub anchor_epoch: u64,
    pub anchor_y: Vec<u8>,
}

/// `batch_seed_b`.
pub fn batch_seed(link: &BatchLink) -> [u8; 32] {
    let mut h = tagged(TAG_POOL_BATCH);
    h.update(link.batch.to_be_bytes());
    h.update(link.prev_root);
    h.update(link.anchor_epoch.to_be_bytes());
    h.update(&link.anchor_y);
    h.finalize().into()
}

/// `seed_i`, the 32 bytes hashed to the group to give entry i's input.
pub fn entry_seed(batch_seed: &[u8; 32], index: u64, secret: &[u8; 32]) -> [u8; 32] {
    let mut h = tagged(TAG_POOL_ENTRY);
    h.update(batch_seed);
    h.update(index.to_be_bytes());
    h.update(secret);
    h.finalize().into()
}

/// A computed entry, every element fixed-width big-endian, ℓ in 32 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub index: u64,
    /// r_i: secret until the entry is served, then published with its proof.
    pub secret: [u8; 32],
    pub iterations: u64,
    pub x: Vec<u8>,
    pub y: Vec<u8>,
    pub l: Vec<u8>,
    pub pi: Vec<u8>,
}

/// Computes entry `index` of the batch with seed `batch_seed` and secret `secret` (32 bytes
/// from a CSPRNG): T squarings on `backend` and the proof. Single-threaded, so that a
/// generator runs many entries side by side.
pub fn compute_entry<B: Backend>(
    backend: &B,
    modulus: &Modulus,
    batch_seed: &[u8; 32],
    index: u64,
    secret: [u8; 32],
    iterations: u64,
) -> Result<Entry> {
    let x = modulus.hash_to_group(&entry_seed(batch_seed, index, &secret));
    let opts = EvalOptions {
        threads: 1,
        ..EvalOptions::default()
    };
    let out = vdf::evaluate(backend, modulus, &x, iterations, &opts, &mut |_| {})?.prove();
    let l = out.proof.l.to_bytes_be();
    let mut l_fixed = vec![0u8; CHALLENGE_BYTES.saturating_sub(l.len())];
    l_fixed.extend_from_slice(&l);
    Ok(Entry {
        index,
        secret,
        iterations,
        x: modulus.encode(&x),
        y: modulus.encode(&out.y),
        l: l_fixed,
        pi: modulus.encode(&out.proof.pi),
    })
}

/// Entries `first`, `first + 1`, … of a batch (one per secret), computed side by side on a
/// batch backend: every input squared T times at once, then every proof π = x^⌊2^T/ℓ⌋ as
/// one batch of exponentiations. The same entries, byte for byte, as [`compute_entry`].
pub fn compute_entries(
    batch: &dyn BatchBackend,
    modulus: &Modulus,
    batch_seed: &[u8; 32],
    first: u64,
    secrets: &[[u8; 32]],
    iterations: u64,
) -> Result<Vec<Entry>> {
    if iterations == 0 {
        return Err(crate::error::Error::ZeroIterations);
    }
    let xs: Vec<Element> = secrets
        .par_iter()
        .enumerate()
        .map(|(k, r)| modulus.hash_to_group(&entry_seed(batch_seed, first + k as u64, r)))
        .collect();
    let mut ys: Vec<BigUint> = xs.iter().map(|x| x.value().clone()).collect();
    batch.square_many(modulus, &mut ys, iterations)?;
    let ys = ys
        .iter()
        .map(|y| modulus.element(&modulus.canonical(y)))
        .collect::<Result<Vec<_>>>()?;
    let ls: Vec<BigUint> = xs
        .par_iter()
        .zip(&ys)
        .map(|(x, y)| vdf::hash_to_prime(modulus, x, y, iterations).0)
        .collect();
    let two_t = BigUint::from(1u8) << iterations;
    let quotients: Vec<BigUint> = ls.iter().map(|l| &two_t / l).collect();
    let bases: Vec<BigUint> = xs.iter().map(|x| x.value().clone()).collect();
    let pis = batch.pow_many(modulus, &bases, &quotients)?;
    let mut entries = Vec::with_capacity(secrets.len());
    for (k, secret) in secrets.iter().enumerate() {
        let pi = modulus.element(&modulus.canonical(&pis[k]))?;
        let l = ls[k].to_bytes_be();
        let mut l_fixed = vec![0u8; CHALLENGE_BYTES.saturating_sub(l.len())];
        l_fixed.extend_from_slice(&l);
        entries.push(Entry {
            index: first + k as u64,
            secret: *secret,
            iterations,
            x: modulus.encode(&xs[k]),
            y: modulus.encode(&ys[k]),
            l: l_fixed,
            pi: modulus.encode(&pi),
        });
    }
    Ok(entries)
}

/// Checks that `entry` is entry `entry.index` of the batch with seed `batch_seed`: its input
/// is the one derived with its (revealed) secret, and its proof verifies.
pub fn verify_entry(modulus: &Modulus, batch_seed: &[u8; 32], entry: &Entry) -> Result<()> {
    let x = modulus.hash_to_group(&entry_seed(batch_seed, entry.index, &entry.secret));
    if modulus.encode(&x) != entry.x {
        return Err(crate::error::Error::PoolInputMismatch { index: entry.index });
    }
    vdf::verify_encoded(
        modulus,
        &entry.x,
        &entry.y,
        entry.iterations,
        &entry.l,
        &entry.pi,
    )
}

/// The bytes entry i commits to in its batch's tree.
pub fn entry_leaf(entry: &Entry) -> Vec<u8> {
    let mut leaf =
        Vec::with_capacity(1 + TAG_POOL_LEAF.len() + 16 + entry.x.len() * 3 + entry.l.len());
    leaf.push(TAG_POOL_LEAF.len() as u8);
    leaf.extend_from_slice(TAG_POOL_LEAF);
    leaf.extend_from_slice(&entry.index.to_be_bytes());
    leaf.extend_from_slice(&entry.iterations.to_be_bytes());
    leaf.extend_from_slice(&entry.x);
    leaf.extend_from_slice(&entry.y);
    leaf.extend_from_slice(&entry.l);
    leaf.extend_from_slice(&entry.pi);
    leaf
}

/// `root_b` over a batch's entries, in index order.
pub fn batch_root(entries: &[Entry]) -> Hash {
    let hashes: Vec<Hash> = entries
        .iter()
        .map(|e| merkle::leaf_hash(&entry_leaf(e)))
        .collect();
    merkle::root(&hashes)
}

/// The game id of the bet that consumes entry `index` with output `y` (32 lowercase hex
/// digits, like every game id): fixed by the entry, so a bet cannot be re-rolled under
/// another id.
pub fn game_id(index: u64, y: &[u8]) -> String {
    let mut h = tagged(TAG_POOL_GAME);
    h.update(index.to_be_bytes());
    h.update(y);
    let d: [u8; 32] = h.finalize().into();
    hex::encode(&d[..16])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::backend::fast::Fast;

    fn link() -> BatchLink {
        let m = Modulus::by_name("test512").unwrap();
        BatchLink {
            batch: 1,
            prev_root: GENESIS_ROOT,
            anchor_epoch: 3,
            anchor_y: m.encode(&m.hash_to_group(&[7; 32])),
        }
    }

    #[test]
    fn entries_are_deterministic_and_verify() {
        let m = Modulus::by_name("test512").unwrap();
        let fast = Fast::prepare(&m).unwrap();
        let seed = batch_seed(&link());
        let a = compute_entry(&fast, &m, &seed, 5, [9; 32], 200).unwrap();
        assert_eq!(a, compute_entry(&fast, &m, &seed, 5, [9; 32], 200).unwrap());
        verify_entry(&m, &seed, &a).unwrap();
        let b = compute_entry(&fast, &m, &seed, 6, [9; 32], 200).unwrap();
        assert_ne!(a.x, b.x, "each index has its own input");
        assert_eq!(a.l.len(), CHALLENGE_BYTES);
    }

    #[test]
    fn batched_entries_equal_one_by_one_entries() {
        let seed = batch_seed(&link());
        let secrets: Vec<[u8; 32]> = (0..5u8).map(|i| [i; 32]).collect();
        for (name, t) in [("test512", 1), ("test512", 200), ("rsa2048", 64)] {
            let m = Modulus::by_name(name).unwrap();
            let fast = Fast::prepare(&m).unwrap();
            let batched =
                compute_entries(&crate::batch::cpu::Cpu::new(), &m, &seed, 10, &secrets, t)
                    .unwrap();
            for (k, e) in batched.iter().enumerate() {
                let one = compute_entry(&fast, &m, &seed, 10 + k as u64, secrets[k], t).unwrap();
                assert_eq!(e, &one, "{name}, T = {t}, entry {k}");
                verify_entry(&m, &seed, e).unwrap();
            }
        }
    }

    #[test]
    fn a_tampered_entry_fails() {
        let m = Modulus::by_name("test512").unwrap();
        let fast = Fast::prepare(&m).unwrap();
        let seed = batch_seed(&link());
        let e = compute_entry(&fast, &m, &seed, 1, [9; 32], 100).unwrap();
        let other = compute_entry(&fast, &m, &seed, 2, [9; 32], 100).unwrap();
        let mut moved = other.clone();
        moved.index = 1;
        assert!(
            verify_entry(&m, &seed, &moved).is_err(),
            "input not derived"
        );
        let mut y = e.clone();
        y.y = other.y.clone();
        assert!(verify_entry(&m, &seed, &y).is_err(), "wrong output");
        let mut t = e.clone();
        t.iterations = 101;
        assert!(verify_entry(&m, &seed, &t).is_err(), "wrong T");
        let mut seed2 = seed;
        seed2[0] ^= 1;
        assert!(verify_entry(&m, &seed2, &e).is_err(), "another batch");
        let mut r = e.clone();
        r.secret[0] ^= 1;
        assert!(verify_entry(&m, &seed, &r).is_err(), "another secret");
        assert_ne!(
            compute_entry(&fast, &m, &seed, 1, [8; 32], 100).unwrap().x,
            e.x,
            "the secret changes the input"
        );
    }

    #[test]
    fn the_batch_seed_binds_every_link_field() {
        let base = link();
        let seeds = [
            batch_seed(&base),
            batch_seed(&BatchLink {
                batch: 2,
                ..base.clone()
            }),
            batch_seed(&BatchLink {
                prev_root: [1; 32],
                ..base.clone()
            }),
            batch_seed(&BatchLink {
                anchor_epoch: 4,
                ..base.clone()
            }),
            batch_seed(&BatchLink {
                anchor_y: vec![0; 64],
                ..base.clone()
            }),
        ];
        for i in 0..seeds.len() {
            for j in i + 1..seeds.len() {
                assert_ne!(seeds[i], seeds[j]);
            }
        }
    }

    #[test]
    fn leaves_roots_and_game_ids() {
        let m = Modulus::by_name("test512").unwrap();
        let fast = Fast::prepare(&m).unwrap();
        let seed = batch_seed(&link());
        let entries: Vec<Entry> = (1..=3)
            .map(|i| compute_entry(&fast, &m, &seed, i, [i as u8; 32], 50).unwrap())
            .collect();
        let leaf = entry_leaf(&entries[0]);
        assert_eq!(leaf[0] as usize, TAG_POOL_LEAF.len());
        assert_eq!(leaf.len(), 1 + 16 + 8 + 8 + 64 + 64 + 32 + 64);
        let root = batch_root(&entries);
        let hashes: Vec<Hash> = entries
            .iter()
            .map(|e| merkle::leaf_hash(&entry_leaf(e)))
            .collect();
        let path = merkle::audit_path(&hashes, 1).unwrap();
        assert!(merkle::verify_inclusion(&hashes[1], 1, 3, &path, &root));
        let mut swapped = entries.clone();
        swapped.swap(0, 1);
        assert_ne!(batch_root(&swapped), root, "order is committed");
        let id = game_id(1, &entries[0].y);
        assert_eq!(id.len(), 32);
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(id, game_id(2, &entries[0].y));
    }
}
