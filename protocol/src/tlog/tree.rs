//! The log's Merkle tree (RFC 6962 over SHA-256, the hashing of C2SP tlog-tiles), on the
//! `tlog_tiles` crate's stored-hash layout: the writer's [`LogTree`] (entries, roots,
//! proofs, tiles and entry bundles), and the reader's [`Frontier`] (the O(log n) right edge a
//! witness keeps to check that fetched entries make up the tree it cosigns).

use tlog_tiles::{HashReader, Tile};

pub use tlog_tiles::Hash;

/// Tile height of C2SP tlog-tiles: 2^8 = 256 hashes a full tile.
pub const TILE_HEIGHT: u8 = 8;
/// Entries (or hashes) in a full tile or entry bundle.
pub const TILE_WIDTH: u64 = 1 << TILE_HEIGHT;

/// RFC 6962's leaf hash of an entry, SHA-256(0x00 ‖ entry).
pub fn leaf_hash(entry: &[u8]) -> Hash {
    tlog_tiles::record_hash(entry)
}

/// The root of the empty tree, SHA-256("").
pub const EMPTY_ROOT: Hash = tlog_tiles::EMPTY_HASH;

/// Entries and every stored hash, in memory: what the operator rebuilds from its store at
/// start-up (a million entries are two million SHA-256s) and appends to as it commits.
#[derive(Clone, Debug, Default)]
pub struct LogTree {
    entries: Vec<Vec<u8>>,
    hashes: Vec<Hash>,
}

impl HashReader for LogTree {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|&i| {
                self.hashes
                    .get(i as usize)
                    .copied()
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}

/// Why a proof or tile cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("size {asked} is beyond the log's {size} entries")]
    Beyond { asked: u64, size: u64 },
    #[error("entry of {0} bytes is over the 65 535 an entry bundle can hold")]
    TooLong(usize),
    #[error("{0}")]
    Tlog(String),
}

fn tlog_err(e: tlog_tiles::Error) -> TreeError {
    TreeError::Tlog(e.to_string())
}

impl LogTree {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn size(&self) -> u64 {
        self.entries.len() as u64
    }

    pub fn entry(&self, index: u64) -> Option<&[u8]> {
        self.entries.get(index as usize).map(Vec::as_slice)
    }

    /// Appends an entry; returns its index.
    pub fn append(&mut self, entry: Vec<u8>) -> Result<u64, TreeError> {
        if entry.len() > u16::MAX as usize {
            return Err(TreeError::TooLong(entry.len()));
        }
        let n = self.size();
        let new = tlog_tiles::stored_hashes(n, &entry, self).map_err(tlog_err)?;
        self.hashes.extend(new);
        self.entries.push(entry);
        Ok(n)
    }

    /// The root of the tree of the first `size` entries.
    pub fn root_at(&self, size: u64) -> Result<Hash, TreeError> {
        self.within(size)?;
        tlog_tiles::tree_hash(size, self).map_err(tlog_err)
    }

    pub fn root(&self) -> Hash {
        // The current size is always within the tree.
        self.root_at(self.size()).unwrap_or(EMPTY_ROOT)
    }

    /// The RFC 6962 consistency proof from the tree of `old` entries to that of `new` (empty
    /// when old is 0 or equals new, as C2SP tlog-witness wants).
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<Vec<Hash>, TreeError> {
        self.within(new)?;
        if old == 0 || old == new {
            return Ok(Vec::new());
        }
        if old > new {
            return Err(TreeError::Beyond {
                asked: old,
                size: new,
            });
        }
        tlog_tiles::prove_tree(new, old, self).map_err(tlog_err)
    }

    /// The RFC 6962 audit path of entry `index` in the tree of `size` entries.
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<Vec<Hash>, TreeError> {
        self.within(size)?;
        if index >= size {
            return Err(TreeError::Beyond {
                asked: index + 1,
                size,
            });
        }
        tlog_tiles::prove_record(size, index, self).map_err(tlog_err)
    }

    /// The hash tile at `level`, index `n`, `width` hashes (C2SP tlog-tiles), if the tree of
    /// the current size holds it.
    pub fn tile(&self, level: u8, n: u64, width: u32) -> Option<Vec<u8>> {
        if width == 0 || u64::from(width) > TILE_WIDTH || level > 63 {
            return None;
        }
        let span = TILE_WIDTH.checked_pow(u32::from(level))?;
        let last = n
            .checked_mul(TILE_WIDTH)?
            .checked_add(u64::from(width))?
            .checked_mul(span)?;
        if last > self.size() {
            return None;
        }
        Tile::new(TILE_HEIGHT, level, n, width, false)
            .read_data(self)
            .ok()
    }

    /// Entry bundle `n` of `width` entries: each entry as u16(len) ‖ bytes.
    pub fn entry_bundle(&self, n: u64, width: u32) -> Option<Vec<u8>> {
        if width == 0 || u64::from(width) > TILE_WIDTH {
            return None;
        }
        let start = n.checked_mul(TILE_WIDTH)?;
        let end = start.checked_add(u64::from(width))?;
        if end > self.size() {
            return None;
        }
        let mut out = Vec::new();
        for e in &self.entries[start as usize..end as usize] {
            out.extend_from_slice(&(e.len() as u16).to_be_bytes());
            out.extend_from_slice(e);
        }
        Some(out)
    }

    fn within(&self, size: u64) -> Result<(), TreeError> {
        if size > self.size() {
            return Err(TreeError::Beyond {
                asked: size,
                size: self.size(),
            });
        }
        Ok(())
    }
}

/// A hash in standard base64 (a proof line, an audit path member).
pub fn parse_b64_hash(s: &str) -> Result<Hash, String> {
    use base64::prelude::{Engine as _, BASE64_STANDARD};
    let v = BASE64_STANDARD
        .decode(s)
        .ok()
        .filter(|v| v.len() == 32)
        .ok_or_else(|| format!("{s:?} is not a base64 SHA-256 hash"))?;
    let mut h = [0u8; 32];
    h.copy_from_slice(&v);
    Ok(Hash(h))
}

/// Splits an entry bundle into its entries.
pub fn split_bundle(bundle: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bundle.len() {
        if at + 2 > bundle.len() {
            return Err("entry bundle ends inside a length prefix".into());
        }
        let len = u16::from_be_bytes([bundle[at], bundle[at + 1]]) as usize;
        at += 2;
        if at + len > bundle.len() {
            return Err("entry bundle ends inside an entry".into());
        }
        out.push(&bundle[at..at + len]);
        at += len;
    }
    Ok(out)
}

/// Checks an RFC 6962 consistency proof between two tree heads. A size-0 old tree is
/// consistent with anything; equal sizes need equal roots and an empty proof.
pub fn check_consistency(
    proof: &[Hash],
    old_size: u64,
    old_root: Hash,
    new_size: u64,
    new_root: Hash,
) -> Result<(), String> {
    if old_size > new_size {
        return Err(format!("old size {old_size} is above the new {new_size}"));
    }
    if old_size == 0 {
        return if proof.is_empty() {
            Ok(())
        } else {
            Err("a proof from the empty tree must be empty".into())
        };
    }
    if old_size == new_size {
        return if old_root != new_root {
            Err(format!("two roots for size {new_size}"))
        } else if !proof.is_empty() {
            Err("a proof between equal sizes must be empty".into())
        } else {
            Ok(())
        };
    }
    tlog_tiles::check_tree(&proof.to_vec(), new_size, new_root, old_size, old_root)
        .map_err(|e| format!("the consistency proof from {old_size} to {new_size}: {e}"))
}

/// Checks an RFC 6962 audit path of entry `index` (leaf hash `leaf`) in a tree head.
pub fn check_inclusion(
    proof: &[Hash],
    size: u64,
    root: Hash,
    index: u64,
    leaf: Hash,
) -> Result<(), String> {
    if index >= size {
        return Err(format!("entry {index} is not in a tree of {size}"));
    }
    tlog_tiles::check_record(&proof.to_vec(), size, root, index, leaf)
        .map_err(|e| format!("the inclusion proof of entry {index} in {size}: {e}"))
}

/// The right edge of a tree: the roots of its perfect subtrees, largest first (one for each
/// bit set in the size). Enough to append leaves and compute each new root.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Frontier {
    pub size: u64,
    /// Hex of each subtree root, largest (leftmost) first.
    pub nodes: Vec<String>,
}

impl Frontier {
    fn hashes(&self) -> Result<Vec<Hash>, String> {
        self.nodes
            .iter()
            .map(|h| {
                let mut a = [0u8; 32];
                hex::decode_to_slice(h, &mut a).map_err(|_| format!("bad frontier hash {h}"))?;
                Ok(Hash(a))
            })
            .collect()
    }

    /// Appends leaves, returning the new frontier.
    pub fn extend(&self, leaves: &[Hash]) -> Result<Self, String> {
        let mut nodes = self.hashes()?;
        if nodes.len() != self.size.count_ones() as usize {
            return Err("the frontier does not match its size".into());
        }
        let mut size = self.size;
        for &leaf in leaves {
            nodes.push(leaf);
            // Each trailing one bit of the old size completes a subtree with the new leaf.
            let mut s = size;
            while s & 1 == 1 {
                let right = nodes.pop().ok_or("frontier underflow")?;
                let left = nodes.pop().ok_or("frontier underflow")?;
                nodes.push(tlog_tiles::node_hash(left, right));
                s >>= 1;
            }
            size += 1;
        }
        Ok(Self {
            size,
            nodes: nodes.iter().map(|h| hex::encode(h.0)).collect(),
        })
    }

    /// MTH of the tree.
    pub fn root(&self) -> Result<Hash, String> {
        let nodes = self.hashes()?;
        let mut it = nodes.iter().rev();
        let Some(&last) = it.next() else {
            return Ok(EMPTY_ROOT);
        };
        Ok(it.fold(last, |acc, &left| tlog_tiles::node_hash(left, acc)))
    }
}

/// The C2SP tlog-tiles path element of a tile or bundle index: zero-padded groups of three
/// digits, all but the last prefixed with `x` (1234067 → `x001/x234/067`).
pub fn index_path(n: u64) -> String {
    let mut parts = vec![format!("{:03}", n % 1000)];
    let mut rest = n / 1000;
    while rest > 0 {
        parts.push(format!("x{:03}", rest % 1000));
        rest /= 1000;
    }
    parts.reverse();
    parts.join("/")
}

/// Parses [`index_path`]'s form back (strictly: the canonical spelling only).
pub fn parse_index_path(path: &str) -> Option<u64> {
    let parts: Vec<&str> = path.split('/').collect();
    let (last, front) = parts.split_last()?;
    let mut n: u64 = 0;
    for p in front {
        let d = p.strip_prefix('x')?;
        if d.len() != 3 || !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        n = n.checked_mul(1000)?.checked_add(d.parse::<u64>().ok()?)?;
    }
    if last.len() != 3 || !last.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n = n
        .checked_mul(1000)?
        .checked_add(last.parse::<u64>().ok()?)?;
    (index_path(n) == path).then_some(n)
}

/// The bundles (index, width) that hold entries `[from, to)` of a tree of `to` entries: full
/// bundles have width 256, the last one the tree's remainder.
pub fn bundles_for(from: u64, to: u64) -> Vec<(u64, u32)> {
    if from >= to {
        return Vec::new();
    }
    (from / TILE_WIDTH..=(to - 1) / TILE_WIDTH)
        .map(|k| {
            let width = (to - k * TILE_WIDTH).min(TILE_WIDTH);
            (k, width as u32)
        })
        .collect()
}

/// The path of a bundle under a log's prefix: `tile/entries/<N>[.p/<W>]`.
pub fn bundle_path(n: u64, width: u32) -> String {
    if u64::from(width) == TILE_WIDTH {
        format!("tile/entries/{}", index_path(n))
    } else {
        format!("tile/entries/{}.p/{width}", index_path(n))
    }
}

/// What a path under a log's prefix names (C2SP tlog-tiles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TilePath {
    /// `tile/<L>/<N>[.p/<W>]`
    Hashes { level: u8, n: u64, width: u32 },
    /// `tile/entries/<N>[.p/<W>]`
    Entries { n: u64, width: u32 },
}

/// Parses a tile or bundle path (canonical spellings only).
pub fn parse_tile_path(path: &str) -> Option<TilePath> {
    let rest = path.strip_prefix("tile/")?;
    let (kind, rest) = rest.split_once('/')?;
    let (index, width) = match rest.split_once(".p/") {
        Some((i, w)) => {
            let width: u32 = w.parse().ok()?;
            if !(1..TILE_WIDTH as u32).contains(&width) || w != width.to_string() {
                return None;
            }
            (i, width)
        }
        None => (rest, TILE_WIDTH as u32),
    };
    let n = parse_index_path(index)?;
    if kind == "entries" {
        return Some(TilePath::Entries { n, width });
    }
    let level: u8 = kind.parse().ok().filter(|l| *l <= 63)?;
    (kind == level.to_string()).then_some(TilePath::Hashes { level, n, width })
}

impl LogTree {
    /// The bytes of a tile or bundle path, if the tree holds it.
    pub fn serve_path(&self, path: &str) -> Option<Vec<u8>> {
        match parse_tile_path(path)? {
            TilePath::Hashes { level, n, width } => self.tile(level, n, width),
            TilePath::Entries { n, width } => self.entry_bundle(n, width),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tile_paths_parse_strictly() {
        assert_eq!(
            parse_tile_path("tile/entries/x001/234.p/17"),
            Some(TilePath::Entries { n: 1234, width: 17 })
        );
        assert_eq!(
            parse_tile_path("tile/2/000"),
            Some(TilePath::Hashes {
                level: 2,
                n: 0,
                width: 256
            })
        );
        for bad in [
            "tile/02/000",
            "tile/1/000.p/256",
            "tile/1/000.p/0",
            "tile/entries/1",
            "tile/64/000",
            "x/1/000",
        ] {
            assert_eq!(parse_tile_path(bad), None, "{bad}");
        }
        let mut t = LogTree::new();
        t.append(b"a".to_vec()).unwrap();
        assert_eq!(t.serve_path("tile/entries/000.p/1").unwrap(), b"\x00\x01a");
        assert!(t.serve_path("tile/entries/000.p/2").is_none());
    }

    fn tree(n: u64) -> LogTree {
        let mut t = LogTree::new();
        for i in 0..n {
            t.append(format!("entry {i}").into_bytes()).unwrap();
        }
        t
    }

    #[test]
    fn roots_match_the_engines_rfc6962_trees() {
        let t = tree(300);
        for size in [0u64, 1, 2, 3, 7, 8, 255, 256, 257, 300] {
            let leaves: Vec<[u8; 32]> = (0..size)
                .map(|i| vrs_engine::merkle::leaf_hash(format!("entry {i}").as_bytes()))
                .collect();
            assert_eq!(
                t.root_at(size).unwrap().0,
                vrs_engine::merkle::root(&leaves),
                "size {size}"
            );
        }
    }

    #[test]
    fn proofs_check_and_altered_ones_do_not() {
        let t = tree(70);
        for (old, new) in [(1u64, 2u64), (3, 7), (8, 70), (69, 70), (70, 70)] {
            let p = t.consistency_proof(old, new).unwrap();
            let (ro, rn) = (t.root_at(old).unwrap(), t.root_at(new).unwrap());
            check_consistency(&p, old, ro, new, rn).unwrap();
            if !p.is_empty() {
                let mut bad = p.clone();
                bad[0].0[0] ^= 1;
                assert!(check_consistency(&bad, old, ro, new, rn).is_err());
            }
            assert!(check_consistency(&p, old, rn, new, ro).is_err() || ro == rn);
        }
        let p = t.inclusion_proof(5, 70).unwrap();
        let leaf = leaf_hash(b"entry 5");
        check_inclusion(&p, 70, t.root(), 5, leaf).unwrap();
        assert!(check_inclusion(&p, 70, t.root(), 6, leaf).is_err());
    }

    #[test]
    fn the_frontier_follows_the_tree() {
        let t = tree(600);
        let mut f = Frontier::default();
        assert_eq!(f.root().unwrap(), EMPTY_ROOT);
        for chunk in [1u64, 2, 5, 248, 0, 300, 44] {
            let from = f.size;
            let leaves: Vec<Hash> = (from..from + chunk)
                .map(|i| leaf_hash(t.entry(i).unwrap()))
                .collect();
            f = f.extend(&leaves).unwrap();
            assert_eq!(f.root().unwrap(), t.root_at(f.size).unwrap(), "{}", f.size);
        }
    }

    #[test]
    fn tiles_and_bundles_are_c2sps() {
        let t = tree(600);
        let tile = t.tile(0, 0, 256).unwrap();
        assert_eq!(tile.len(), 256 * 32);
        assert_eq!(&tile[32..64], &leaf_hash(b"entry 1").0);
        // A level-1 hash is the root of the full tile beneath it.
        let l1 = t.tile(1, 0, 2).unwrap();
        assert_eq!(&l1[..32], &t.root_at(256).unwrap().0);
        assert!(t.tile(1, 0, 3).is_none());
        let bundle = t.entry_bundle(2, 88).unwrap();
        let entries = split_bundle(&bundle).unwrap();
        assert_eq!(entries.len(), 88);
        assert_eq!(entries[0], b"entry 512");
        assert!(t.entry_bundle(2, 89).is_none());
        assert_eq!(index_path(1_234_067), "x001/x234/067");
        assert_eq!(index_path(5), "005");
        assert_eq!(index_path(1000), "x001/000");
        assert_eq!(parse_index_path("x001/x234/067"), Some(1_234_067));
        assert_eq!(parse_index_path("x000/067"), None);
        assert_eq!(parse_index_path("67"), None);
        assert_eq!(bundles_for(250, 600), vec![(0, 256), (1, 256), (2, 88)]);
        assert_eq!(bundles_for(256, 512), vec![(1, 256)]);
        assert_eq!(bundle_path(2, 88), "tile/entries/002.p/88");
        assert_eq!(bundle_path(1, 256), "tile/entries/001");
    }
}
