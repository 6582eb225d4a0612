//! A whole log replayed under the witnesses' rules (docs/PROTOCOL.md §21, "Reading the whole
//! log"): what an auditor sees for itself that the `witnessed` step leaves to the witnesses.
//! The step proves one plan, one commitment and one output; that the log holds no second
//! commitment of the epoch, no second output of p and no second root of a batch rests on
//! rules 3, 6, 7 and 8 of a vrs witness in the quorum. Replaying every entry from the first,
//! as one submission under rules 1–3 and 5–9 (not the clock: the auditor was not there, and
//! so not rule 9's in-time clause, which the auditor checks against its own `witnessed`
//! verdicts through [`History::moves`]), checks them whatever witnesses the log had, plain
//! C2SP ones included. A replay keeps every epoch, not a witness's last 256.

use std::collections::BTreeMap;

use super::entry::LogEntry;
use super::rules::{self, AppState, Clock, Refusal};
use super::tree::LogTree;
use super::Hash;

/// The replayed log.
#[derive(Debug)]
pub struct History {
    pub tree: LogTree,
    /// Each epoch's void entry, by epoch: the index of the void.
    pub voids: BTreeMap<u64, u64>,
    /// Each epoch's commitment, by epoch: its index.
    pub commitments: BTreeMap<u64, u64>,
    /// Each epoch whose games a move sends elsewhere: (the move's index, the destination).
    pub moves: BTreeMap<u64, (u64, u64)>,
}

impl History {
    /// Whether the checkpoint of `size` and `root` shows this history's first `size` entries
    /// (so that an entry proven in it is the one replayed at its index).
    pub fn holds(&self, size: u64, root: Hash) -> Result<(), String> {
        let here = self.tree.root_at(size).map_err(|_| {
            format!(
                "a checkpoint of size {size} is beyond the log's history read ({} entries)",
                self.tree.size()
            )
        })?;
        if here != root {
            return Err(format!(
                "the checkpoint of size {size} has another root than the log's history at that \
                 size: two histories of one log"
            ));
        }
        Ok(())
    }
}

/// Why a log does not replay: the first entry that breaks a rule, the epoch it names (if it
/// decodes and names one) and the rule's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broken {
    pub index: u64,
    pub epoch: Option<u64>,
    pub reason: String,
}

/// Replays `entries`, the log from its first entry, and checks that they make up the tree of
/// `root` (their number is its size). No stamp is compared.
pub fn replay(entries: Vec<Vec<u8>>, root: Hash) -> Result<History, Broken> {
    let mut decoded = Vec::with_capacity(entries.len());
    let mut tree = LogTree::new();
    let mut voids = BTreeMap::new();
    let mut commitments = BTreeMap::new();
    let mut moves = BTreeMap::new();
    for bytes in entries {
        let index = tree.size();
        let refuse = |reason: String| Broken {
            index,
            epoch: None,
            reason,
        };
        let entry = LogEntry::decode(&bytes).map_err(|e| refuse(e.to_string()))?;
        match (&entry, index) {
            (LogEntry::Operator(_), 0) => {}
            (LogEntry::Operator(_), _) => {
                return Err(refuse(
                    "a second operator declaration: the log declares its operator once, as its \
                     first entry"
                        .into(),
                ))
            }
            (other, 0) => {
                return Err(refuse(format!(
                    "the log's first entry is a {}, not the operator declaration",
                    other.kind()
                )))
            }
            (LogEntry::Void(v), _) => {
                voids.insert(v.epoch, index);
            }
            (LogEntry::Commitment(c), _) => {
                commitments.insert(c.epoch, index);
            }
            (LogEntry::Move(m), _) => {
                moves.insert(m.epoch, (index, m.to));
            }
            _ => {}
        }
        tree.append(bytes).map_err(|e| refuse(e.to_string()))?;
        decoded.push(entry);
    }
    if tree.root() != root {
        return Err(Broken {
            index: tree.size(),
            epoch: None,
            reason: format!(
                "the log's {} entries do not make up the checkpoint's tree",
                tree.size()
            ),
        });
    }
    let clock = Clock {
        now_ms: 0,
        delta_ms: 0,
        first_contact: true,
        audit: true,
        cosign_s: 0,
    };
    rules::apply(&AppState::default(), 0, &decoded, clock).map_err(|r: Refusal| Broken {
        index: r.index,
        epoch: decoded.get(r.index as usize).and_then(LogEntry::epoch),
        reason: r.reason,
    })?;
    Ok(History {
        tree,
        voids,
        commitments,
        moves,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::entry::{CommitmentEntry, MoveEntry, OperatorEntry, PlanEntry, VoidEntry};
    use super::*;

    const T0: u64 = 1_800_000_000_000;

    fn operator() -> LogEntry {
        LogEntry::Operator(OperatorEntry {
            stamped_ms: T0,
            group: "rsa2048".into(),
            acceptance_key: [7; 32],
            anchor_chain_id: 0,
            anchor_address: [0; 20],
        })
    }

    fn plan(e: u64) -> LogEntry {
        LogEntry::Plan(PlanEntry {
            epoch: e,
            previous: e - 1,
            iterations: 1000,
            margin_centi: 150,
            squarings_per_second: 1000,
            opened_ms: T0 + e * 1000,
            deadline_ms: T0 + e * 1000 + 1000,
        })
    }

    fn commit(e: u64, nonce: u8) -> LogEntry {
        LogEntry::Commitment(CommitmentEntry {
            epoch: e,
            previous: e - 1,
            bets_root: [0; 32],
            bet_count: 0,
            nonce: [nonce; 32],
            iterations: 1000,
            margin_centi: 150,
            squarings_per_second: 1000,
            opened_ms: T0 + e * 1000,
            closed_ms: T0 + e * 1000 + 900,
        })
    }

    fn run(entries: &[LogEntry]) -> Result<History, Broken> {
        let bytes: Vec<Vec<u8>> = entries.iter().map(LogEntry::encode).collect();
        let mut tree = LogTree::new();
        for b in &bytes {
            tree.append(b.clone()).unwrap();
        }
        replay(bytes, tree.root())
    }

    #[test]
    fn an_honest_log_replays() {
        let void = LogEntry::Void(VoidEntry {
            epoch: 2,
            stamped_ms: T0 + 5000,
        });
        let moved = LogEntry::Move(MoveEntry {
            epoch: 2,
            to: 3,
            bets_root: [0; 32],
            bet_count: 0,
        });
        let log = [
            operator(),
            plan(1),
            commit(1, 1),
            plan(2),
            void,
            plan(3),
            moved,
        ];
        let h = run(&log).unwrap();
        assert_eq!(h.tree.size(), 7);
        assert_eq!(h.voids.get(&2), Some(&4));
        assert_eq!(h.commitments.get(&1), Some(&2));
        assert_eq!(h.moves.get(&2), Some(&(6, 3)));
        h.holds(3, h.tree.root_at(3).unwrap()).unwrap();
        assert!(h.holds(3, h.tree.root_at(4).unwrap()).is_err());
        assert!(h.holds(8, h.tree.root()).is_err());
    }

    #[test]
    fn a_second_commitment_anywhere_fails() {
        // Far from the first: a replay keeps every epoch, not a witness's last 256.
        let mut log = vec![operator(), plan(1), commit(1, 1)];
        for e in 2..300 {
            log.push(plan(e));
            log.push(commit(e, 1));
        }
        log.push(commit(1, 2));
        let r = run(&log).unwrap_err();
        assert_eq!(r.index, log.len() as u64 - 1);
        assert!(
            r.reason.contains("a second commitment for epoch 1"),
            "{r:?}"
        );
        assert_eq!(r.epoch, Some(1));
    }

    #[test]
    fn the_declaration_comes_first_and_once() {
        let r = run(&[plan(1), operator()]).unwrap_err();
        assert!(r.reason.contains("not the operator declaration"), "{r:?}");
        let r = run(&[operator(), plan(1), operator()]).unwrap_err();
        assert_eq!(r.index, 2);
        assert!(r.reason.contains("a second operator declaration"), "{r:?}");
    }

    #[test]
    fn entries_that_are_not_the_checkpoints_tree_fail() {
        let bytes: Vec<Vec<u8>> = [operator(), plan(1)].iter().map(LogEntry::encode).collect();
        let r = replay(bytes, Hash([9; 32])).unwrap_err();
        assert!(r.reason.contains("do not make up"), "{r:?}");
    }
}
