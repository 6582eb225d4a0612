//! The `moved` step (docs/PROTOCOL.md §21, "Moved games"): the games of a void epoch e were
//! sent on by move entries, e → d_1 → … → D, each logged (under a policy: in checkpoints a
//! quorum cosigned, at any time) and the last before D's commitment, so they are judged as
//! games of D, their leaf in the tree the first move repeats.

use std::collections::BTreeSet;

use super::entry::{LogEntry, MoveEntry};
use super::policy::Policy;
use super::witnessed::{prove_all, LoggedEntry};

/// A chain of moves that checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveChain {
    /// The first move: the game's epoch e, its bets root and count.
    pub first: MoveEntry,
    /// The last destination D.
    pub destination: u64,
    pub detail: String,
}

/// The entry of one move list, decoded from its bytes alone (no checkpoint checked).
fn entry_of(list: &[LoggedEntry], i: usize) -> Result<(u64, MoveEntry), String> {
    let first = list
        .first()
        .ok_or_else(|| format!("move {} has no logged entry", i + 1))?;
    if list
        .iter()
        .any(|l| l.index != first.index || l.entry != first.entry)
    {
        return Err(format!(
            "move {}'s checkpoints name different entries",
            i + 1
        ));
    }
    let bytes =
        hex::decode(&first.entry).map_err(|_| format!("move {}: the entry is not hex", i + 1))?;
    match LogEntry::decode(&bytes) {
        Ok(LogEntry::Move(m)) => Ok((first.index, m)),
        Ok(other) => Err(format!(
            "entry {} is a {}, not a move",
            first.index,
            other.kind()
        )),
        Err(e) => Err(format!("entry {}: {e}", first.index)),
    }
}

/// The first move's entry, for `merkle_inclusion` (the game's leaf is in the tree it repeats).
pub fn first_move(moves: &[Vec<LoggedEntry>]) -> Result<MoveEntry, String> {
    let list = moves.first().ok_or("the proof shows no move")?;
    entry_of(list, 0).map(|(_, m)| m)
}

/// The index of D's commitment, from the bytes of its first `LoggedEntry`; None when the list
/// is empty.
fn commitment_index(commitment: &[LoggedEntry], destination: u64) -> Result<Option<u64>, String> {
    let Some(first) = commitment.first() else {
        return Ok(None);
    };
    let bytes =
        hex::decode(&first.entry).map_err(|_| "the commitment entry is not hex".to_owned())?;
    match LogEntry::decode(&bytes) {
        Ok(LogEntry::Commitment(c)) if c.epoch == destination => Ok(Some(first.index)),
        Ok(LogEntry::Commitment(c)) => Err(format!(
            "the commitment shown is epoch {}'s, not epoch {destination}'s",
            c.epoch
        )),
        Ok(other) => Err(format!(
            "entry {} is a {}, not a commitment",
            first.index,
            other.kind()
        )),
        Err(e) => Err(format!("entry {}: {e}", first.index)),
    }
}

/// Items 2–4 of the step: the moves chain from `moved_from` to `destination`, in increasing
/// indices, the last below the index of `commitment` (D's commitment, `log.commitment`; empty:
/// not logged, a failure); under `policy` each move is proven in checkpoints a quorum
/// cosigned.
pub fn check(
    moves: &[Vec<LoggedEntry>],
    moved_from: u64,
    destination: u64,
    commitment: &[LoggedEntry],
    policy: Option<&Policy>,
) -> Result<MoveChain, String> {
    let commitment_index = commitment_index(commitment, destination)?;
    // One log: every move in checkpoints of the origin D's commitment is shown in (a policy
    // may name several logs, and rule 9 holds within each).
    if let Some(origin) = commitment.first().and_then(|c| c.checkpoint.lines().next()) {
        if let Some(other) = moves
            .iter()
            .flatten()
            .find(|l| l.checkpoint.lines().next() != Some(origin))
        {
            return Err(format!(
                "entry {} is shown in a checkpoint of another log than epoch {destination}'s \
                 commitment ({origin})",
                other.index
            ));
        }
    }
    if moves.is_empty() {
        return Err("the proof names no move".into());
    }
    let mut chain: Vec<(u64, MoveEntry)> = Vec::with_capacity(moves.len());
    for (i, list) in moves.iter().enumerate() {
        chain.push(entry_of(list, i)?);
    }
    let mut expected = moved_from;
    let mut last_index = None;
    for (index, m) in &chain {
        if m.epoch != expected {
            return Err(format!(
                "entry {index} moves the games of epoch {}, not of epoch {expected}",
                m.epoch
            ));
        }
        if last_index.is_some_and(|l| *index <= l) {
            return Err(format!(
                "entry {index} comes before the move it follows in the log"
            ));
        }
        last_index = Some(*index);
        expected = m.to;
    }
    if expected != destination {
        return Err(format!(
            "the moves end at epoch {expected}, but the proof is epoch {destination}'s"
        ));
    }
    let last = last_index.unwrap_or(0);
    match commitment_index {
        None => {
            return Err(format!(
                "epoch {destination}'s commitment is not logged: nothing shows the move came \
                 before it"
            ))
        }
        Some(c) if c <= last => {
            return Err(format!(
                "the move into epoch {destination} (entry {last}) comes after its commitment \
                 (entry {c}): its input was fixed without these games"
            ))
        }
        Some(_) => {}
    }
    let mut cosigned = String::new();
    if let Some(policy) = policy {
        let mut all: Option<BTreeSet<String>> = None;
        for (i, list) in moves.iter().enumerate() {
            let what = format!("move of epoch {}", chain[i].1.epoch);
            let proven = prove_all(&what, list, policy)?;
            let names: BTreeSet<String> = policy
                .witnesses
                .iter()
                .filter(|w| {
                    proven
                        .earliest
                        .contains_key(&(w.key.name.clone(), w.key.id))
                })
                .map(|w| w.name.clone())
                .collect();
            if !policy.satisfied_by(&names) {
                return Err(format!(
                    "the {what} (entry {}) is cosigned by [{}], short of the quorum {}",
                    chain[i].0,
                    names.into_iter().collect::<Vec<_>>().join(", "),
                    policy.describe()
                ));
            }
            all = Some(match all {
                None => names,
                Some(a) => a.intersection(&names).cloned().collect(),
            });
        }
        let names: Vec<String> = all.unwrap_or_default().into_iter().collect();
        cosigned = format!(", cosigned by [{}]", names.join(", "));
    }
    let path: Vec<String> = chain
        .iter()
        .map(|(i, m)| format!("epoch {} (entry {i})", m.to))
        .collect();
    Ok(MoveChain {
        first: chain[0].1,
        destination,
        detail: format!(
            "epoch {moved_from} is void: its games moved to {}{cosigned}",
            path.join(", then to ")
        ),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tlog::entry::MoveEntry;

    fn logged(index: u64, e: &LogEntry) -> Vec<LoggedEntry> {
        vec![LoggedEntry {
            index,
            entry: hex::encode(e.encode()),
            checkpoint: String::new(),
            proof: Vec::new(),
        }]
    }

    fn mv(epoch: u64, to: u64) -> LogEntry {
        LogEntry::Move(MoveEntry {
            epoch,
            to,
            bets_root: [7; 32],
            bet_count: 3,
        })
    }

    fn commitment(index: u64, epoch: u64) -> Vec<LoggedEntry> {
        logged(
            index,
            &LogEntry::Commitment(crate::tlog::entry::CommitmentEntry {
                epoch,
                previous: epoch - 1,
                bets_root: [1; 32],
                bet_count: 1,
                nonce: [2; 32],
                iterations: 10,
                margin_centi: 150,
                squarings_per_second: 100,
                opened_ms: 1,
                closed_ms: 2,
            }),
        )
    }

    #[test]
    fn a_chain_of_moves_ends_at_the_destination_before_its_commitment() {
        let moves = vec![logged(10, &mv(4, 5)), logged(14, &mv(5, 7))];
        let c = check(&moves, 4, 7, &commitment(20, 7), None).unwrap();
        assert_eq!(c.first.epoch, 4);
        assert_eq!(c.first.bet_count, 3);
        assert!(c.detail.contains("epoch 4 is void"), "{}", c.detail);
        assert_eq!(first_move(&moves).unwrap().bets_root, [7; 32]);
    }

    #[test]
    fn each_break_in_the_chain_fails_naming_it() {
        let ok = || vec![logged(10, &mv(4, 5)), logged(14, &mv(5, 7))];
        let fails = |moves: Vec<Vec<LoggedEntry>>, from, to, c: Option<u64>, says: &str| {
            let c = c.map(|i| commitment(i, to)).unwrap_or_default();
            let err = check(&moves, from, to, &c, None).unwrap_err();
            assert!(err.contains(says), "{err}");
        };
        fails(ok(), 3, 7, Some(20), "not of epoch 3");
        fails(ok(), 4, 8, Some(20), "end at epoch 7");
        fails(ok(), 4, 7, Some(14), "comes after its commitment");
        fails(ok(), 4, 7, None, "not logged");
        fails(
            vec![logged(14, &mv(4, 5)), logged(10, &mv(5, 7))],
            4,
            7,
            Some(20),
            "comes before the move it follows",
        );
        fails(
            vec![logged(10, &mv(4, 5)), logged(14, &mv(6, 7))],
            4,
            7,
            Some(20),
            "not of epoch 5",
        );
        let void = LogEntry::Void(crate::tlog::entry::VoidEntry {
            epoch: 4,
            stamped_ms: 1,
        });
        fails(vec![logged(10, &void)], 4, 7, Some(20), "not a move");
        fails(Vec::new(), 4, 7, Some(20), "names no move");
        fails(vec![Vec::new()], 4, 7, Some(20), "no logged entry");
        let err = check(&ok(), 4, 7, &commitment(20, 6), None).unwrap_err();
        assert!(err.contains("not epoch 7's"), "{err}");
    }
}
