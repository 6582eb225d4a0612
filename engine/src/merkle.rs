//! RFC 6962 (Certificate Transparency) Merkle trees over SHA-256: the commitment used for the
//! bets of an epoch (and later for pool entries, notary receipts and anchors).
//!
//! - leaf hash: `SHA-256(0x00 ‖ leaf bytes)`
//! - node hash: `SHA-256(0x01 ‖ left ‖ right)`
//! - MTH of n > 1 leaves splits at k, the largest power of two < n (so the tree is not padded);
//!   the empty tree's root is `SHA-256("")`.
//!
//! Inclusion proofs are the RFC 6962 §2.1.1 audit paths, checked by the RFC 9162 §2.1.3.2
//! algorithm.

use sha2::{Digest, Sha256};

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// `SHA-256(0x00 ‖ bytes)`.
pub fn leaf_hash(bytes: &[u8]) -> Hash {
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(bytes);
    h.finalize().into()
}

/// `SHA-256(0x01 ‖ left ‖ right)`.
pub fn node_hash(left: &Hash, right: &Hash) -> Hash {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(left);
    h.update(right);
    h.finalize().into()
}

/// The root of the empty tree, `SHA-256("")`.
pub fn empty_root() -> Hash {
    Sha256::digest([]).into()
}

/// The largest power of two strictly below `n` (n ≥ 2).
fn split(n: usize) -> usize {
    debug_assert!(n >= 2);
    1 << (usize::BITS - 1 - (n - 1).leading_zeros())
}

/// MTH over already-hashed leaves.
pub fn root(leaves: &[Hash]) -> Hash {
    match leaves.len() {
        0 => empty_root(),
        1 => leaves[0],
        n => {
            let k = split(n);
            node_hash(&root(&leaves[..k]), &root(&leaves[k..]))
        }
    }
}

/// A whole tree kept level by level, for many audit paths of one tree: [`audit_path`] hashes
/// the tree again for each path, [`Tree::path`] only reads it. An RFC 6962 tree is the same
/// as pairing each level left to right and carrying an odd last node up unchanged, which is
/// how the levels are built.
#[derive(Clone, Debug)]
pub struct Tree {
    /// `levels[0]` holds the leaf hashes, the last level the root alone (none when empty).
    levels: Vec<Vec<Hash>>,
}

impl Tree {
    pub fn new(leaves: Vec<Hash>) -> Self {
        let mut levels = vec![leaves];
        while let Some(below) = levels.last().filter(|l| l.len() > 1) {
            let above = below
                .chunks(2)
                .map(|pair| match pair {
                    [left, right, ..] => node_hash(left, right),
                    [carried, ..] => *carried,
                    [] => empty_root(), // chunks are never empty
                })
                .collect();
            levels.push(above);
        }
        Self { levels }
    }

    pub fn leaves(&self) -> &[Hash] {
        &self.levels[0]
    }

    pub fn len(&self) -> usize {
        self.levels[0].len()
    }

    pub fn is_empty(&self) -> bool {
        self.levels[0].is_empty()
    }

    /// MTH, the same as [`root`] over the leaves.
    pub fn root(&self) -> Hash {
        match self.levels.last().and_then(|top| top.first()) {
            Some(top) if !self.is_empty() => *top,
            _ => empty_root(),
        }
    }

    /// The same as [`audit_path`] over the leaves.
    pub fn path(&self, index: usize) -> Option<Vec<Hash>> {
        if index >= self.len() {
            return None;
        }
        let mut i = index;
        let mut path = Vec::new();
        for level in &self.levels[..self.levels.len() - 1] {
            if let Some(sibling) = level.get(i ^ 1) {
                path.push(*sibling);
            }
            i >>= 1;
        }
        Some(path)
    }
}

/// The audit path of leaf `index` (RFC 6962 §2.1.1), nearest sibling first; `None` when
/// `index` is out of range.
pub fn audit_path(leaves: &[Hash], index: usize) -> Option<Vec<Hash>> {
    if index >= leaves.len() {
        return None;
    }
    let mut path = Vec::new();
    collect_path(leaves, index, &mut path);
    Some(path)
}

fn collect_path(leaves: &[Hash], index: usize, path: &mut Vec<Hash>) {
    if leaves.len() <= 1 {
        return;
    }
    let k = split(leaves.len());
    if index < k {
        collect_path(&leaves[..k], index, path);
        path.push(root(&leaves[k..]));
    } else {
        collect_path(&leaves[k..], index - k, path);
        path.push(root(&leaves[..k]));
    }
}

/// The root that `path` proves for `leaf` at `index` in a tree of `size` leaves (RFC 9162
/// §2.1.3.2), or `None` when the path has the wrong length for that position.
pub fn root_from_path(leaf: &Hash, index: u64, size: u64, path: &[Hash]) -> Option<Hash> {
    if index >= size {
        return None;
    }
    let (mut fn_, mut sn) = (index, size - 1);
    let mut r = *leaf;
    for p in path {
        if sn == 0 {
            return None;
        }
        if fn_ & 1 == 1 || fn_ == sn {
            r = node_hash(p, &r);
            if fn_ & 1 == 0 {
                while fn_ & 1 == 0 && fn_ != 0 {
                    fn_ >>= 1;
                    sn >>= 1;
                }
            }
        } else {
            r = node_hash(&r, p);
        }
        fn_ >>= 1;
        sn >>= 1;
    }
    (sn == 0).then_some(r)
}

/// Whether `path` proves `leaf` at `index` in the tree of `size` leaves with root `root`.
pub fn verify_inclusion(leaf: &Hash, index: u64, size: u64, path: &[Hash], root: &Hash) -> bool {
    root_from_path(leaf, index, size, path).is_some_and(|r| &r == root)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn leaves(n: usize) -> Vec<Hash> {
        (0..n)
            .map(|i| leaf_hash(&(i as u32).to_be_bytes()))
            .collect()
    }

    /// The tree of RFC 6962 §2.1.3 built by hand: seven leaves d0…d6.
    #[test]
    fn seven_leaf_tree_matches_the_rfc_shape() {
        let l = leaves(7);
        let a = node_hash(&l[0], &l[1]);
        let b = node_hash(&l[2], &l[3]);
        let c = node_hash(&l[4], &l[5]);
        let k = node_hash(&a, &b);
        let right = node_hash(&c, &l[6]);
        assert_eq!(root(&l), node_hash(&k, &right));
        // RFC 6962: PATH(d3, D[7]) = [c, g, l] in its names = [l2, a, right subtree].
        assert_eq!(audit_path(&l, 3).unwrap(), vec![l[2], a, right]);
        // PATH(d6, D[7]) = [c(4,5 node), k].
        assert_eq!(audit_path(&l, 6).unwrap(), vec![c, k]);
    }

    #[test]
    fn a_kept_tree_gives_the_same_root_and_paths() {
        for n in 0..70 {
            let hashes = leaves(n);
            let tree = Tree::new(hashes.clone());
            assert_eq!(tree.root(), root(&hashes), "n = {n}");
            for i in 0..=n {
                assert_eq!(tree.path(i), audit_path(&hashes, i), "n = {n}, i = {i}");
            }
        }
    }

    #[test]
    fn known_empty_and_single_roots() {
        assert_eq!(
            hex::encode(empty_root()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        // leaf hash of the empty string, a fixed RFC 6962 test value.
        assert_eq!(
            hex::encode(leaf_hash(b"")),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"
        );
        let l = leaves(1);
        assert_eq!(root(&l), l[0]);
        assert_eq!(audit_path(&l, 0).unwrap(), Vec::<Hash>::new());
        assert!(verify_inclusion(&l[0], 0, 1, &[], &l[0]));
    }

    #[test]
    fn every_path_verifies_and_tampering_fails() {
        for n in 1..=33 {
            let l = leaves(n);
            let r = root(&l);
            for i in 0..n {
                let path = audit_path(&l, i).unwrap();
                assert!(
                    verify_inclusion(&l[i], i as u64, n as u64, &path, &r),
                    "n={n} i={i}"
                );
                // Wrong index, wrong size, wrong leaf, flipped path byte, truncated path.
                if n > 1 {
                    let j = (i + 1) % n;
                    assert!(!verify_inclusion(&l[i], j as u64, n as u64, &path, &r));
                    assert!(!verify_inclusion(&l[j], i as u64, n as u64, &path, &r));
                    let mut bad = path.clone();
                    bad[0][0] ^= 1;
                    assert!(!verify_inclusion(&l[i], i as u64, n as u64, &bad, &r));
                    assert!(!verify_inclusion(&l[i], i as u64, n as u64, &path[1..], &r));
                }
            }
            assert!(audit_path(&l, n).is_none());
        }
    }
}
