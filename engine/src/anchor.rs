//! Anchor batches: what the service puts on an external chain (docs/PROTOCOL.md §16). Every
//! few resolved epochs, one RFC 6962 tree over the records committed since the last anchor
//! (epoch records, pool batch roots, later notary batch roots); its root goes on chain as the
//! calldata of one transaction.
//!
//! ```text
//! epoch_record_e = H("vrs/v1/epoch-record", u64 e ‖ u64 T ‖ bets_root ‖ y_{e−1} ‖ x_e ‖ y_e ‖ ℓ_e ‖ π_e)
//! anchor leaf    = u8(kind) ‖ u64 number ‖ 32-byte hash
//!                  kind 1: epoch e, hash = epoch_record_e
//!                  kind 2: pool batch b, hash = root_b
//!                  kind 3: notary batch n, hash = its root
//! anchor root    = RFC 6962 root over the batch's leaves, in the order listed above, each kind
//!                  in ascending number
//! calldata v2    = "vrs-anchor-v2:" (14 ASCII bytes) ‖ u64 n ‖ u64 log size ‖ log root
//!                  ‖ anchor root                                   (94 bytes)
//! calldata v1    = "vrs-anchor-v1:" (14 ASCII bytes) ‖ anchor root (46 bytes; no log)
//! ```
//!
//! Version 2 binds batch n and the operator's log (docs/PROTOCOL.md §21) as it stood once n's
//! anchor entry was appended: the tree of size index + 1, the entry its last leaf.

use crate::hash::tagged;
use crate::merkle::{self, Hash};
use sha2::Digest;

pub const TAG_EPOCH_RECORD: &[u8] = b"vrs/v1/epoch-record";
/// The prefix of an anchor transaction's calldata.
pub const CALLDATA_TAG: &[u8] = b"vrs-anchor-v1:";
/// Calldata length: the tag and the root.
pub const CALLDATA_LEN: usize = CALLDATA_TAG.len() + 32;
/// The prefix of a version-2 anchor transaction's calldata.
pub const CALLDATA_TAG_V2: &[u8] = b"vrs-anchor-v2:";
/// Version-2 calldata length: the tag, n, the log's size and root, the anchor root.
pub const CALLDATA_V2_LEN: usize = CALLDATA_TAG_V2.len() + 8 + 8 + 32 + 32;

/// The operator's log at the anchor batch's entry: the tree of `size` entries (the batch's
/// anchor entry the last of them) and its RFC 6962 root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogBinding {
    pub size: u64,
    pub root: Hash,
}

/// What anchor calldata read back from a chain says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calldata {
    /// `vrs-anchor-v1:` ‖ root: binds no batch number.
    V1 { root: Hash },
    /// `vrs-anchor-v2:` ‖ n ‖ log size ‖ log root ‖ root.
    V2 {
        batch: u64,
        log: LogBinding,
        root: Hash,
    },
}

impl Calldata {
    /// The calldata of batch `batch` with root `root`: version 2 when the log binds it.
    pub fn of(batch: u64, log: Option<LogBinding>, root: Hash) -> Self {
        match log {
            Some(log) => Self::V2 { batch, log, root },
            None => Self::V1 { root },
        }
    }

    pub fn root(&self) -> Hash {
        match self {
            Self::V1 { root } | Self::V2 { root, .. } => *root,
        }
    }

    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Self::V1 { root } => calldata(root),
            Self::V2 { batch, log, root } => {
                let mut d = Vec::with_capacity(CALLDATA_V2_LEN);
                d.extend_from_slice(CALLDATA_TAG_V2);
                d.extend_from_slice(&batch.to_be_bytes());
                d.extend_from_slice(&log.size.to_be_bytes());
                d.extend_from_slice(&log.root);
                d.extend_from_slice(root);
                d
            }
        }
    }

    /// Anchor calldata of either version, or None.
    pub fn parse(data: &[u8]) -> Option<Self> {
        if let Some(root) = root_from_calldata(data) {
            return Some(Self::V1 { root });
        }
        if data.len() != CALLDATA_V2_LEN || !data.starts_with(CALLDATA_TAG_V2) {
            return None;
        }
        let rest = &data[CALLDATA_TAG_V2.len()..];
        Some(Self::V2 {
            batch: u64::from_be_bytes(rest[..8].try_into().ok()?),
            log: LogBinding {
                size: u64::from_be_bytes(rest[8..16].try_into().ok()?),
                root: rest[16..48].try_into().ok()?,
            },
            root: rest[48..80].try_into().ok()?,
        })
    }

    /// In words, for a verifier's detail.
    pub fn describe(&self) -> String {
        match self {
            Self::V1 { root } => format!("\"vrs-anchor-v1:\" ‖ root {}", hex::encode(root)),
            Self::V2 { batch, log, root } => format!(
                "\"vrs-anchor-v2:\" ‖ batch {batch} ‖ log size {} ‖ log root {} ‖ root {}",
                log.size,
                hex::encode(log.root),
                hex::encode(root)
            ),
        }
    }
}

/// What an anchor leaf commits to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeafKind {
    Epoch = 1,
    PoolBatch = 2,
    NotaryBatch = 3,
}

/// One leaf of an anchor batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnchorLeaf {
    pub kind: LeafKind,
    pub number: u64,
    pub hash: Hash,
}

impl AnchorLeaf {
    /// `u8(kind) ‖ u64 number ‖ hash`.
    pub fn bytes(&self) -> [u8; 41] {
        let mut b = [0u8; 41];
        b[0] = self.kind as u8;
        b[1..9].copy_from_slice(&self.number.to_be_bytes());
        b[9..].copy_from_slice(&self.hash);
        b
    }
}

/// The fields of a resolved epoch an anchor commits to (elements fixed-width big-endian).
#[derive(Clone, Copy, Debug)]
pub struct EpochRecord<'a> {
    pub epoch: u64,
    pub iterations: u64,
    pub bets_root: &'a Hash,
    pub prev_y: &'a [u8],
    pub x: &'a [u8],
    pub y: &'a [u8],
    pub l: &'a [u8],
    pub pi: &'a [u8],
}

/// `epoch_record_e`.
pub fn epoch_record_hash(r: &EpochRecord<'_>) -> Hash {
    let mut h = tagged(TAG_EPOCH_RECORD);
    h.update(r.epoch.to_be_bytes());
    h.update(r.iterations.to_be_bytes());
    h.update(r.bets_root);
    h.update(r.prev_y);
    h.update(r.x);
    h.update(r.y);
    h.update(r.l);
    h.update(r.pi);
    h.finalize().into()
}

/// The leaves in their canonical order: by kind, then by number.
pub fn canonical_order(leaves: &mut [AnchorLeaf]) {
    leaves.sort_by_key(|l| (l.kind, l.number));
}

/// The anchor root over leaves already in canonical order.
pub fn anchor_root(leaves: &[AnchorLeaf]) -> Hash {
    let hashes: Vec<Hash> = leaves
        .iter()
        .map(|l| merkle::leaf_hash(&l.bytes()))
        .collect();
    merkle::root(&hashes)
}

/// The audit path of leaf `index` (canonical order) up to the anchor root.
pub fn anchor_path(leaves: &[AnchorLeaf], index: usize) -> Option<Vec<Hash>> {
    let hashes: Vec<Hash> = leaves
        .iter()
        .map(|l| merkle::leaf_hash(&l.bytes()))
        .collect();
    merkle::audit_path(&hashes, index)
}

/// The calldata of the anchor transaction for `root`.
pub fn calldata(root: &Hash) -> Vec<u8> {
    let mut d = Vec::with_capacity(CALLDATA_LEN);
    d.extend_from_slice(CALLDATA_TAG);
    d.extend_from_slice(root);
    d
}

/// The root in anchor calldata read back from a chain, if it is one.
pub fn root_from_calldata(data: &[u8]) -> Option<Hash> {
    if data.len() != CALLDATA_LEN || !data.starts_with(CALLDATA_TAG) {
        return None;
    }
    data[CALLDATA_TAG.len()..].try_into().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn record(e: u64) -> Hash {
        let root = [e as u8; 32];
        epoch_record_hash(&EpochRecord {
            epoch: e,
            iterations: 1000,
            bets_root: &root,
            prev_y: &[1; 64],
            x: &[2; 64],
            y: &[3; 64],
            l: &[4; 32],
            pi: &[5; 64],
        })
    }

    #[test]
    fn records_bind_every_field() {
        let base = EpochRecord {
            epoch: 7,
            iterations: 1000,
            bets_root: &[9; 32],
            prev_y: &[1; 64],
            x: &[2; 64],
            y: &[3; 64],
            l: &[4; 32],
            pi: &[5; 64],
        };
        let h = epoch_record_hash(&base);
        let other_root = [8; 32];
        let changed = [
            EpochRecord { epoch: 8, ..base },
            EpochRecord {
                iterations: 999,
                ..base
            },
            EpochRecord {
                bets_root: &other_root,
                ..base
            },
            EpochRecord {
                prev_y: &[0; 64],
                ..base
            },
            EpochRecord {
                x: &[0; 64],
                ..base
            },
            EpochRecord {
                y: &[0; 64],
                ..base
            },
            EpochRecord {
                l: &[0; 32],
                ..base
            },
            EpochRecord {
                pi: &[0; 64],
                ..base
            },
        ];
        for c in changed {
            assert_ne!(epoch_record_hash(&c), h);
        }
    }

    #[test]
    fn roots_paths_and_calldata() {
        let mut leaves = vec![
            AnchorLeaf {
                kind: LeafKind::PoolBatch,
                number: 3,
                hash: [7; 32],
            },
            AnchorLeaf {
                kind: LeafKind::Epoch,
                number: 2,
                hash: record(2),
            },
            AnchorLeaf {
                kind: LeafKind::Epoch,
                number: 1,
                hash: record(1),
            },
        ];
        canonical_order(&mut leaves);
        assert_eq!(
            leaves
                .iter()
                .map(|l| (l.kind, l.number))
                .collect::<Vec<_>>(),
            [
                (LeafKind::Epoch, 1),
                (LeafKind::Epoch, 2),
                (LeafKind::PoolBatch, 3)
            ]
        );
        let root = anchor_root(&leaves);
        for (i, leaf) in leaves.iter().enumerate() {
            let path = anchor_path(&leaves, i).unwrap();
            let lh = merkle::leaf_hash(&leaf.bytes());
            assert!(merkle::verify_inclusion(&lh, i as u64, 3, &path, &root));
        }
        assert_eq!(leaves[0].bytes()[0], 1);
        assert_eq!(&leaves[0].bytes()[1..9], &1u64.to_be_bytes());
        let data = calldata(&root);
        assert_eq!(data.len(), CALLDATA_LEN);
        assert_eq!(root_from_calldata(&data), Some(root));
        assert_eq!(root_from_calldata(&data[1..]), None);
        let mut wrong = data.clone();
        wrong[0] ^= 1;
        assert_eq!(root_from_calldata(&wrong), None);
    }

    #[test]
    fn version_2_calldata_binds_the_batch_and_the_log() {
        let log = LogBinding {
            size: 300,
            root: [6; 32],
        };
        let c = Calldata::of(7, Some(log), [8; 32]);
        let b = c.bytes();
        assert_eq!(b.len(), CALLDATA_V2_LEN);
        assert_eq!(b.len(), 94);
        assert_eq!(&b[..14], b"vrs-anchor-v2:");
        assert_eq!(&b[14..22], &7u64.to_be_bytes());
        assert_eq!(&b[22..30], &300u64.to_be_bytes());
        assert_eq!(&b[30..62], &[6; 32]);
        assert_eq!(&b[62..], &[8; 32]);
        assert_eq!(Calldata::parse(&b), Some(c));
        assert_eq!(Calldata::parse(&b[..93]), None);
        let v1 = Calldata::of(7, None, [8; 32]);
        assert_eq!(v1.bytes(), calldata(&[8; 32]));
        assert_eq!(Calldata::parse(&v1.bytes()), Some(v1));
        assert_eq!(v1.root(), c.root());
    }
}
