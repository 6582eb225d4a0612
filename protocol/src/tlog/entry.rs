//! The entries of the witnessed log (docs/PROTOCOL.md §21): what the operator commits to, each
//! at the moment it commits to it, so that witnesses can time it.
//!
//! ```text
//! entry      = u8(len(tag)) ‖ tag ‖ fields          (tag: "vrs/log/<kind>")
//! operator   = u64(stamped_ms) ‖ f(group) ‖ acceptance_key[32] ‖ u64(anchor_chain_id)
//!              ‖ anchor_address[20]
//! plan       = u64(e) ‖ u64(p) ‖ u64(T) ‖ u32(margin_centi) ‖ u64(R) ‖ u64(opened_ms)
//!              ‖ u64(deadline_ms)
//! commitment = u64(e) ‖ u64(p) ‖ bets_root[32] ‖ u64(bet_count) ‖ nonce[32] ‖ u64(T)
//!              ‖ u32(margin_centi) ‖ u64(R) ‖ u64(opened_ms) ‖ u64(closed_ms)
//! void       = u64(e) ‖ u64(stamped_ms)
//! output     = u64(e) ‖ SHA-256(y_e)[32]
//! pool-batch = u64(b) ‖ u64(first_index) ‖ u64(size) ‖ prev_root[32] ‖ u64(anchor_epoch)
//!              ‖ seed[32] ‖ root[32] ‖ u64(committed_ms)
//! anchor     = u64(n) ‖ u64(first_epoch) ‖ u64(last_epoch) ‖ u64(pool_from) ‖ u64(pool_to)
//!              ‖ u64(notary_from) ‖ u64(notary_to) ‖ root[32]   (anchor batch n, §16)
//! move       = u64(e) ‖ u64(d) ‖ bets_root[32] ‖ u64(bet_count)  (void e's games go to d)
//! f(s)       = u16(len(UTF-8(s))) ‖ UTF-8(s)
//! ```
//!
//! Integers are big-endian. An entry's leaf hash in the log is RFC 6962's, SHA-256(0x00 ‖
//! entry). Decoding is strict: an unknown tag, a short or a long entry is an error, so one
//! entry has one meaning.

use std::fmt;

/// The operator's declaration: which group its epochs run in, the key that signs its
/// acceptances, and where it anchors (chain id 0 and a zero address: it does not anchor).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorEntry {
    pub stamped_ms: u64,
    pub group: String,
    pub acceptance_key: [u8; 32],
    pub anchor_chain_id: u64,
    pub anchor_address: [u8; 20],
}

/// What a version-2 epoch fixes when it opens (§10, "Plan").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanEntry {
    pub epoch: u64,
    pub previous: u64,
    pub iterations: u64,
    pub margin_centi: u32,
    pub squarings_per_second: u64,
    pub opened_ms: u64,
    pub deadline_ms: u64,
}

/// What an epoch fixes when it closes: every input of seed_e but y_p, which the log's earlier
/// entries determine (§10, "Input of epoch e").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommitmentEntry {
    pub epoch: u64,
    pub previous: u64,
    pub bets_root: [u8; 32],
    pub bet_count: u64,
    pub nonce: [u8; 32],
    pub iterations: u64,
    pub margin_centi: u32,
    pub squarings_per_second: u64,
    pub opened_ms: u64,
    pub closed_ms: u64,
}

/// The operator's statement that no outcome is derived from epoch e (its commitment was not
/// witnessed in time, or never made).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VoidEntry {
    pub epoch: u64,
    pub stamped_ms: u64,
}

/// Epoch e's output once the service stored it: SHA-256 of y_e as stored (k bytes, what a
/// later epoch's seed takes as y_p). One per epoch, in epoch order, so every client of the
/// log sees one y_p; its cosigned time bounds when the operator fixed it (§21).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputEntry {
    pub epoch: u64,
    pub output_hash: [u8; 32],
}

impl OutputEntry {
    /// The entry of epoch `epoch` whose output is `y` (bytes as stored).
    pub fn of(epoch: u64, y: &[u8]) -> Self {
        Self {
            epoch,
            output_hash: output_hash(y),
        }
    }
}

/// SHA-256(y): what an output entry holds of y.
pub fn output_hash(y: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(y).into()
}

/// A committed pool batch (§14, "Commitment before use").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolBatchEntry {
    pub batch: u64,
    pub first_index: u64,
    pub size: u64,
    pub prev_root: [u8; 32],
    pub anchor_epoch: u64,
    pub seed: [u8; 32],
    pub root: [u8; 32],
    pub committed_ms: u64,
}

impl From<&crate::record::PoolBatch> for PoolBatchEntry {
    fn from(b: &crate::record::PoolBatch) -> Self {
        Self {
            batch: b.number,
            first_index: b.first_index,
            size: b.size,
            prev_root: b.prev_root,
            anchor_epoch: b.anchor_epoch,
            seed: b.seed,
            root: b.root,
            committed_ms: b.committed_at_ms.max(0) as u64,
        }
    }
}

/// Anchor batch n, what it covers and its root (§16, "Binding"): logged before the batch goes
/// on chain, so that witnesses, who cosign one per batch number, each starting where the one
/// before ended, make a second root for n, or a second batch over the same records, show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnchorEntry {
    pub batch: u64,
    /// Its epochs, first..=last.
    pub first_epoch: u64,
    pub last_epoch: u64,
    /// Its pool and notary batches, from..to (to exclusive).
    pub pool_from: u64,
    pub pool_to: u64,
    pub notary_from: u64,
    pub notary_to: u64,
    pub root: [u8; 32],
}

/// The games of void epoch e (the tree of `bets_root`, `bet_count` leaves) take their outcome
/// from epoch d, which is open (planned, not committed) when this is logged, so that they are
/// fixed before anything of y_d is (docs/PROTOCOL.md §21, "Voids").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveEntry {
    pub epoch: u64,
    pub to: u64,
    pub bets_root: [u8; 32],
    pub bet_count: u64,
}

/// One entry of the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LogEntry {
    Operator(OperatorEntry),
    Plan(PlanEntry),
    Commitment(CommitmentEntry),
    Void(VoidEntry),
    Output(OutputEntry),
    PoolBatch(PoolBatchEntry),
    Anchor(AnchorEntry),
    Move(MoveEntry),
}

pub const TAG_OPERATOR: &str = "vrs/log/operator";
pub const TAG_PLAN: &str = "vrs/log/plan";
pub const TAG_COMMITMENT: &str = "vrs/log/commitment";
pub const TAG_VOID: &str = "vrs/log/void";
pub const TAG_OUTPUT: &str = "vrs/log/output";
pub const TAG_POOL_BATCH: &str = "vrs/log/pool-batch";
pub const TAG_ANCHOR: &str = "vrs/log/anchor";
pub const TAG_MOVE: &str = "vrs/log/move";

/// Why bytes are not an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a log entry: {}", self.0)
    }
}

impl std::error::Error for DecodeError {}

impl LogEntry {
    pub fn tag(&self) -> &'static str {
        match self {
            Self::Operator(_) => TAG_OPERATOR,
            Self::Plan(_) => TAG_PLAN,
            Self::Commitment(_) => TAG_COMMITMENT,
            Self::Void(_) => TAG_VOID,
            Self::Output(_) => TAG_OUTPUT,
            Self::PoolBatch(_) => TAG_POOL_BATCH,
            Self::Anchor(_) => TAG_ANCHOR,
            Self::Move(_) => TAG_MOVE,
        }
    }

    /// The entry's kind as a word (`plan`, `commitment`, …): the tag without its prefix.
    pub fn kind(&self) -> &'static str {
        self.tag().trim_start_matches("vrs/log/")
    }

    /// The epoch an epoch entry is about.
    pub fn epoch(&self) -> Option<u64> {
        match self {
            Self::Plan(p) => Some(p.epoch),
            Self::Commitment(c) => Some(c.epoch),
            Self::Void(v) => Some(v.epoch),
            Self::Output(o) => Some(o.epoch),
            Self::Move(m) => Some(m.epoch),
            Self::Operator(_) | Self::PoolBatch(_) | Self::Anchor(_) => None,
        }
    }

    /// The time the operator stamped on the entry (Unix ms): what a witness compares with its
    /// own clock. An output carries none: its witnesses' cosigned time is what counts.
    pub fn stamped_ms(&self) -> Option<u64> {
        match self {
            Self::Operator(o) => Some(o.stamped_ms),
            Self::Plan(p) => Some(p.opened_ms),
            Self::Commitment(c) => Some(c.closed_ms),
            Self::Void(v) => Some(v.stamped_ms),
            Self::Output(_) | Self::Anchor(_) | Self::Move(_) => None,
            Self::PoolBatch(b) => Some(b.committed_ms),
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let tag = self.tag().as_bytes();
        let mut out = Vec::with_capacity(200);
        out.push(tag.len() as u8);
        out.extend_from_slice(tag);
        let w = &mut out;
        match self {
            Self::Operator(o) => {
                u64b(w, o.stamped_ms);
                let g = o.group.as_bytes();
                w.extend_from_slice(&(g.len().min(u16::MAX as usize) as u16).to_be_bytes());
                w.extend_from_slice(&g[..g.len().min(u16::MAX as usize)]);
                w.extend_from_slice(&o.acceptance_key);
                u64b(w, o.anchor_chain_id);
                w.extend_from_slice(&o.anchor_address);
            }
            Self::Plan(p) => {
                u64b(w, p.epoch);
                u64b(w, p.previous);
                u64b(w, p.iterations);
                w.extend_from_slice(&p.margin_centi.to_be_bytes());
                u64b(w, p.squarings_per_second);
                u64b(w, p.opened_ms);
                u64b(w, p.deadline_ms);
            }
            Self::Commitment(c) => {
                u64b(w, c.epoch);
                u64b(w, c.previous);
                w.extend_from_slice(&c.bets_root);
                u64b(w, c.bet_count);
                w.extend_from_slice(&c.nonce);
                u64b(w, c.iterations);
                w.extend_from_slice(&c.margin_centi.to_be_bytes());
                u64b(w, c.squarings_per_second);
                u64b(w, c.opened_ms);
                u64b(w, c.closed_ms);
            }
            Self::Void(v) => {
                u64b(w, v.epoch);
                u64b(w, v.stamped_ms);
            }
            Self::Output(o) => {
                u64b(w, o.epoch);
                w.extend_from_slice(&o.output_hash);
            }
            Self::PoolBatch(b) => {
                u64b(w, b.batch);
                u64b(w, b.first_index);
                u64b(w, b.size);
                w.extend_from_slice(&b.prev_root);
                u64b(w, b.anchor_epoch);
                w.extend_from_slice(&b.seed);
                w.extend_from_slice(&b.root);
                u64b(w, b.committed_ms);
            }
            Self::Anchor(a) => {
                for v in [
                    a.batch,
                    a.first_epoch,
                    a.last_epoch,
                    a.pool_from,
                    a.pool_to,
                    a.notary_from,
                    a.notary_to,
                ] {
                    u64b(w, v);
                }
                w.extend_from_slice(&a.root);
            }
            Self::Move(m) => {
                u64b(w, m.epoch);
                u64b(w, m.to);
                w.extend_from_slice(&m.bets_root);
                u64b(w, m.bet_count);
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader { bytes, at: 0 };
        let tag_len = r.u8()? as usize;
        let tag = r.take(tag_len)?;
        let tag = std::str::from_utf8(tag).map_err(|_| DecodeError("tag is not UTF-8".into()))?;
        let entry = match tag {
            TAG_OPERATOR => {
                let stamped_ms = r.u64()?;
                let len = r.u16()? as usize;
                let group = std::str::from_utf8(r.take(len)?)
                    .map_err(|_| DecodeError("group is not UTF-8".into()))?
                    .to_owned();
                Self::Operator(OperatorEntry {
                    stamped_ms,
                    group,
                    acceptance_key: r.array()?,
                    anchor_chain_id: r.u64()?,
                    anchor_address: r.array()?,
                })
            }
            TAG_PLAN => Self::Plan(PlanEntry {
                epoch: r.u64()?,
                previous: r.u64()?,
                iterations: r.u64()?,
                margin_centi: r.u32()?,
                squarings_per_second: r.u64()?,
                opened_ms: r.u64()?,
                deadline_ms: r.u64()?,
            }),
            TAG_COMMITMENT => Self::Commitment(CommitmentEntry {
                epoch: r.u64()?,
                previous: r.u64()?,
                bets_root: r.array()?,
                bet_count: r.u64()?,
                nonce: r.array()?,
                iterations: r.u64()?,
                margin_centi: r.u32()?,
                squarings_per_second: r.u64()?,
                opened_ms: r.u64()?,
                closed_ms: r.u64()?,
            }),
            TAG_VOID => Self::Void(VoidEntry {
                epoch: r.u64()?,
                stamped_ms: r.u64()?,
            }),
            TAG_OUTPUT => Self::Output(OutputEntry {
                epoch: r.u64()?,
                output_hash: r.array()?,
            }),
            TAG_POOL_BATCH => Self::PoolBatch(PoolBatchEntry {
                batch: r.u64()?,
                first_index: r.u64()?,
                size: r.u64()?,
                prev_root: r.array()?,
                anchor_epoch: r.u64()?,
                seed: r.array()?,
                root: r.array()?,
                committed_ms: r.u64()?,
            }),
            TAG_ANCHOR => Self::Anchor(AnchorEntry {
                batch: r.u64()?,
                first_epoch: r.u64()?,
                last_epoch: r.u64()?,
                pool_from: r.u64()?,
                pool_to: r.u64()?,
                notary_from: r.u64()?,
                notary_to: r.u64()?,
                root: r.array()?,
            }),
            TAG_MOVE => Self::Move(MoveEntry {
                epoch: r.u64()?,
                to: r.u64()?,
                bets_root: r.array()?,
                bet_count: r.u64()?,
            }),
            other => return Err(DecodeError(format!("unknown tag {other:?}"))),
        };
        if r.at != bytes.len() {
            return Err(DecodeError(format!(
                "{} bytes after the {} entry",
                bytes.len() - r.at,
                entry.kind()
            )));
        }
        Ok(entry)
    }
}

fn u64b(w: &mut Vec<u8>, v: u64) {
    w.extend_from_slice(&v.to_be_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| DecodeError(format!("short entry ({} bytes)", self.bytes.len())))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    pub(crate) fn samples() -> Vec<LogEntry> {
        vec![
            LogEntry::Operator(OperatorEntry {
                stamped_ms: 1,
                group: "rsa2048".into(),
                acceptance_key: [7; 32],
                anchor_chain_id: 8453,
                anchor_address: [9; 20],
            }),
            LogEntry::Plan(PlanEntry {
                epoch: 3,
                previous: 2,
                iterations: 5_000_000,
                margin_centi: 150,
                squarings_per_second: 1_000_000,
                opened_ms: 1_700_000_000_000,
                deadline_ms: 1_700_000_006_000,
            }),
            LogEntry::Commitment(CommitmentEntry {
                epoch: 3,
                previous: 2,
                bets_root: [1; 32],
                bet_count: 4,
                nonce: [2; 32],
                iterations: 5_000_000,
                margin_centi: 150,
                squarings_per_second: 1_000_000,
                opened_ms: 1_700_000_000_000,
                closed_ms: 1_700_000_005_000,
            }),
            LogEntry::Void(VoidEntry {
                epoch: 3,
                stamped_ms: 5,
            }),
            LogEntry::Output(OutputEntry::of(3, b"y")),
            LogEntry::PoolBatch(PoolBatchEntry {
                batch: 1,
                first_index: 1,
                size: 512,
                prev_root: [0; 32],
                anchor_epoch: 2,
                seed: [3; 32],
                root: [4; 32],
                committed_ms: 6,
            }),
            LogEntry::Anchor(AnchorEntry {
                batch: 2,
                first_epoch: 13,
                last_epoch: 24,
                pool_from: 3,
                pool_to: 5,
                notary_from: 1,
                notary_to: 1,
                root: [5; 32],
            }),
            LogEntry::Move(MoveEntry {
                epoch: 3,
                to: 5,
                bets_root: [1; 32],
                bet_count: 4,
            }),
        ]
    }

    /// Each sample's fields as the shared vector writes them: integers as numbers, byte
    /// strings as lowercase hex, names as in docs/PROTOCOL.md §21.
    fn fields(e: &LogEntry) -> serde_json::Value {
        use serde_json::json;
        match e {
            LogEntry::Operator(o) => json!({"stamped_ms": o.stamped_ms, "group": o.group,
                "acceptance_key": hex::encode(o.acceptance_key),
                "anchor_chain_id": o.anchor_chain_id,
                "anchor_address": hex::encode(o.anchor_address)}),
            LogEntry::Plan(p) => json!({"epoch": p.epoch, "previous": p.previous,
                "iterations": p.iterations, "margin_centi": p.margin_centi,
                "squarings_per_second": p.squarings_per_second, "opened_ms": p.opened_ms,
                "deadline_ms": p.deadline_ms}),
            LogEntry::Commitment(c) => json!({"epoch": c.epoch, "previous": c.previous,
                "bets_root": hex::encode(c.bets_root), "bet_count": c.bet_count,
                "nonce": hex::encode(c.nonce), "iterations": c.iterations,
                "margin_centi": c.margin_centi,
                "squarings_per_second": c.squarings_per_second, "opened_ms": c.opened_ms,
                "closed_ms": c.closed_ms}),
            LogEntry::Void(v) => json!({"epoch": v.epoch, "stamped_ms": v.stamped_ms}),
            LogEntry::Output(o) => json!({"epoch": o.epoch,
                "output_hash": hex::encode(o.output_hash)}),
            LogEntry::PoolBatch(b) => json!({"batch": b.batch, "first_index": b.first_index,
                "size": b.size, "prev_root": hex::encode(b.prev_root),
                "anchor_epoch": b.anchor_epoch, "seed": hex::encode(b.seed),
                "root": hex::encode(b.root), "committed_ms": b.committed_ms}),
            LogEntry::Anchor(a) => json!({"batch": a.batch, "first_epoch": a.first_epoch,
                "last_epoch": a.last_epoch, "pool_from": a.pool_from, "pool_to": a.pool_to,
                "notary_from": a.notary_from, "notary_to": a.notary_to,
                "root": hex::encode(a.root)}),
            LogEntry::Move(m) => json!({"epoch": m.epoch, "to": m.to,
                "bets_root": hex::encode(m.bets_root), "bet_count": m.bet_count}),
        }
    }

    /// docs/test-vectors/log-entries.json: one entry of each kind, its bytes and its fields;
    /// the Python and TypeScript decoders read it too (`VRS_WRITE_VECTORS=1` rewrites it).
    #[test]
    fn the_shared_entry_vector_holds() {
        let entries: Vec<serde_json::Value> = samples()
            .iter()
            .map(|e| {
                serde_json::json!({"kind": e.kind(), "hex": hex::encode(e.encode()),
                    "fields": fields(e)})
            })
            .collect();
        let doc = serde_json::json!({
            "description": "vrs witnessed-log entries (docs/PROTOCOL.md §21, \"Entries\"): one of \
                each kind, its bytes (hex) and its fields (integers as numbers, byte strings as \
                lowercase hex). A decoder must give exactly these fields, and refuse the bytes \
                with one byte more or one less.",
            "entries": entries,
        });
        super::super::keep_vector("log-entries.json", &doc);
    }

    #[test]
    fn a_move_has_its_documented_bytes() {
        let m = &samples()[7];
        let bytes = m.encode();
        assert_eq!(bytes.len(), 1 + 12 + 8 + 8 + 32 + 8);
        assert_eq!(&bytes[..13], b"\x0cvrs/log/move");
        assert_eq!(&bytes[13..21], &3u64.to_be_bytes());
        assert_eq!(&bytes[21..29], &5u64.to_be_bytes());
        assert_eq!(&bytes[29..61], &[1; 32]);
        assert_eq!(&bytes[61..], &4u64.to_be_bytes());
        assert_eq!(
            (m.kind(), m.epoch(), m.stamped_ms()),
            ("move", Some(3), None)
        );
    }

    #[test]
    fn every_entry_decodes_to_itself_and_nothing_else_does() {
        for e in samples() {
            let bytes = e.encode();
            assert_eq!(LogEntry::decode(&bytes).unwrap(), e);
            let mut long = bytes.clone();
            long.push(0);
            assert!(LogEntry::decode(&long).is_err(), "{}", e.kind());
            assert!(LogEntry::decode(&bytes[..bytes.len() - 1]).is_err());
        }
        assert!(LogEntry::decode(b"\x07vrs/log").is_err());
        assert!(LogEntry::decode(&[]).is_err());
    }

    #[test]
    fn a_plan_has_its_documented_bytes() {
        let plan = &samples()[1];
        let bytes = plan.encode();
        assert_eq!(bytes.len(), 1 + 12 + 8 * 6 + 4);
        assert_eq!(&bytes[..13], b"\x0cvrs/log/plan");
        assert_eq!(&bytes[13..21], &3u64.to_be_bytes());
        assert_eq!(plan.stamped_ms(), Some(1_700_000_000_000));
        assert_eq!(plan.kind(), "plan");
    }

    #[test]
    fn an_output_holds_the_hash_of_y() {
        let o = LogEntry::Output(OutputEntry::of(9, b"abc"));
        let bytes = o.encode();
        assert_eq!(&bytes[..15], b"\x0evrs/log/output");
        assert_eq!(&bytes[15..23], &9u64.to_be_bytes());
        assert_eq!(
            hex::encode(&bytes[23..]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(o.stamped_ms(), None);
    }

    #[test]
    fn an_anchor_entry_has_its_documented_bytes() {
        let a = &samples()[6];
        let bytes = a.encode();
        assert_eq!(bytes.len(), 1 + 14 + 7 * 8 + 32);
        assert_eq!(&bytes[..15], b"\x0evrs/log/anchor");
        let u64s: Vec<u64> = bytes[15..71]
            .chunks(8)
            .map(|c| u64::from_be_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(u64s, [2, 13, 24, 3, 5, 1, 1]);
        assert_eq!(&bytes[71..], &[5; 32]);
        assert_eq!((a.stamped_ms(), a.epoch()), (None, None));
    }
}
