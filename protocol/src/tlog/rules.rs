//! The application rules a vrs witness applies on top of C2SP tlog-witness (docs/PROTOCOL.md
//! §21, "What a witness refuses"), as a function of its state, the new entries and its clock:
//!
//! - plans come in epoch order, one per epoch, each after its predecessor was committed or
//!   voided; a commitment only after its epoch's plan, matching it, closed within its
//!   deadline, and never a second one for an epoch; outputs one per epoch, in epoch order, of
//!   epochs planned; pool batches in order, each linking to the root before it; anchor
//!   batches one per number, in order, each starting where the one before ended (so a batch,
//!   and each record, has one root in every tree it cosigns);
//! - a plan's or a commitment's stamped time (opened, closed) lies within δ of the witness's
//!   clock when it first sees the entry, unless the same submission also voids that epoch (how
//!   an honest log recovers from an outage: it cannot take an entry back, but it can say that
//!   no outcome comes from it);
//! - a void's own stamp is not more than δ ahead of the clock; it may follow a commitment this
//!   witness cosigned earlier (a witness that was down catches up that way) and takes nothing
//!   back: verifiers judge an epoch by when its commitment was cosigned, never by a void;
//! - on first contact (a witness that has cosigned nothing of this log) the log's history is
//!   taken as it is, under the ordering rules but not the clock: its cosignatures then carry
//!   today's time, which is what a verifier compares.

use std::collections::{BTreeMap, BTreeSet};

use super::entry::{LogEntry, PlanEntry};

/// How many epochs back a witness keeps what it needs of each (plan, committed, void). A
/// submission that names an older epoch is refused.
pub const KEPT_EPOCHS: usize = 256;

/// What a witness remembers of the log's application state.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppState {
    /// The last epoch planned (0: none seen).
    pub last_plan: u64,
    /// The recent epochs, by number.
    pub epochs: BTreeMap<u64, EpochSeen>,
    /// The last pool batch (0: none seen), its root (hex) and the index after it.
    pub last_batch: u64,
    pub last_batch_root: String,
    pub next_pool_index: u64,
    /// The last epoch whose output was logged (0: none seen).
    #[serde(default)]
    pub last_output: u64,
    /// The last anchor batch logged (0: none seen).
    #[serde(default)]
    pub last_anchor: u64,
    /// Where the next anchor batch starts: the epoch after the last one's, and its pool and
    /// notary batches' ends.
    #[serde(default)]
    pub anchor_ends: Option<[u64; 3]>,
}

/// What the witness has seen of one epoch.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EpochSeen {
    pub previous: u64,
    pub iterations: u64,
    pub margin_centi: u32,
    pub squarings_per_second: u64,
    pub opened_ms: u64,
    pub deadline_ms: u64,
    pub committed: bool,
    pub void: bool,
    /// This witness cosigned the commitment at a time a verifier counts in time (its
    /// cosignature's second t with 1000 · t ≤ deadline + δ, whether or not a void came with
    /// it; on first contact always, to be safe): it refuses to move the epoch's games (rule
    /// 9). None: state written before this was kept, read as `committed`.
    #[serde(default)]
    pub in_time: Option<bool>,
    /// The commitment's bets root (hex) and count, which a move of the epoch repeats.
    #[serde(default)]
    pub bets: Option<(String, u64)>,
    /// Its games were moved to a later epoch.
    #[serde(default)]
    pub moved: bool,
}

impl EpochSeen {
    fn of(p: &PlanEntry) -> Self {
        Self {
            previous: p.previous,
            iterations: p.iterations,
            margin_centi: p.margin_centi,
            squarings_per_second: p.squarings_per_second,
            opened_ms: p.opened_ms,
            deadline_ms: p.deadline_ms,
            committed: false,
            void: false,
            in_time: None,
            bets: None,
            moved: false,
        }
    }
}

/// Why a witness refuses a submission: the index of the entry, and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("entry {index}: {reason}")]
pub struct Refusal {
    pub index: u64,
    pub reason: String,
}

/// The clock rule's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// The witness's time, Unix ms.
    pub now_ms: u64,
    /// δ: how far a stamped time may be from it.
    pub delta_ms: u64,
    /// First contact: the history is not timed.
    pub first_contact: bool,
    /// An auditor's replay of the whole log (history.rs): as first contact, and no commitment
    /// is vouched for, since the auditor cosigned nothing (rule 9's in-time clause is the
    /// auditor's own check).
    pub audit: bool,
    /// The Unix second the witness's cosignature of this submission carries, which a
    /// verifier's deadline line reads: it vouches for a commitment taken here when
    /// 1000 · cosign_s ≤ deadline + δ (rule 9).
    pub cosign_s: u64,
}

/// Applies the rules to `entries` (decoded, in log order, the first at `first_index`);
/// returns the new state, or the first rule broken. `state` is untouched either way.
pub fn apply(
    state: &AppState,
    first_index: u64,
    entries: &[LogEntry],
    clock: Clock,
) -> Result<AppState, Refusal> {
    let mut s = state.clone();
    // Epochs this submission voids: their stale plan or commitment is allowed.
    let voided_here: BTreeSet<u64> = entries
        .iter()
        .filter_map(|e| match e {
            LogEntry::Void(v) => Some(v.epoch),
            _ => None,
        })
        .collect();
    // Epochs whose commitment came in this submission (not yet cosigned by this witness).
    let mut committed_here = BTreeSet::new();
    for (i, entry) in entries.iter().enumerate() {
        let index = first_index + i as u64;
        let refuse = |reason: String| Refusal { index, reason };
        let fresh = |what: &str, stamped: u64| -> Result<(), Refusal> {
            if clock.first_contact {
                return Ok(());
            }
            let off = clock.now_ms.abs_diff(stamped);
            if off > clock.delta_ms {
                let dir = if stamped < clock.now_ms {
                    "behind"
                } else {
                    "ahead of"
                };
                return Err(refuse(format!(
                    "{what} is stamped {stamped} ms, {off} ms {dir} this witness's clock \
                     ({} ms; δ = {} ms)",
                    clock.now_ms, clock.delta_ms
                )));
            }
            Ok(())
        };
        match entry {
            LogEntry::Operator(_) => {}
            LogEntry::Plan(p) => {
                let e = p.epoch;
                if s.last_plan != 0 && e != s.last_plan + 1 {
                    return Err(refuse(format!(
                        "plan of epoch {e} after that of {}: plans come one per epoch, in order",
                        s.last_plan
                    )));
                }
                if e == 0 || p.previous >= e {
                    return Err(refuse(format!(
                        "plan of epoch {e} takes the output of {}: p must be below e",
                        p.previous
                    )));
                }
                if p.iterations == 0
                    || p.margin_centi < vrs_engine::timing::MIN_MARGIN_CENTI
                    || p.squarings_per_second == 0
                    || p.deadline_ms < p.opened_ms
                {
                    return Err(refuse(format!(
                        "plan of epoch {e} is out of range (T {}, margin {}, rate {}, opened {}, \
                         deadline {})",
                        p.iterations,
                        p.margin_centi,
                        p.squarings_per_second,
                        p.opened_ms,
                        p.deadline_ms
                    )));
                }
                if let Some(prev) = s.epochs.get(&(e - 1)) {
                    if !prev.committed && !prev.void {
                        return Err(refuse(format!(
                            "plan of epoch {e} while epoch {} is neither committed nor void",
                            e - 1
                        )));
                    }
                }
                if !voided_here.contains(&e) {
                    fresh(&format!("the plan of epoch {e}"), p.opened_ms)?;
                }
                s.last_plan = e;
                s.epochs.insert(e, EpochSeen::of(p));
            }
            LogEntry::Commitment(c) => {
                let e = c.epoch;
                let Some(seen) = s.epochs.get_mut(&e) else {
                    return Err(refuse(if e > s.last_plan {
                        format!("commitment of epoch {e} before its plan")
                    } else {
                        format!("commitment of epoch {e}, older than this witness keeps")
                    }));
                };
                if seen.committed {
                    return Err(refuse(format!(
                        "a second commitment for epoch {e}: a witness cosigns one per epoch"
                    )));
                }
                if seen.void {
                    return Err(refuse(format!("commitment of epoch {e}, which is void")));
                }
                let plan_matches = c.previous == seen.previous
                    && c.iterations == seen.iterations
                    && c.margin_centi == seen.margin_centi
                    && c.squarings_per_second == seen.squarings_per_second
                    && c.opened_ms == seen.opened_ms;
                if !plan_matches {
                    return Err(refuse(format!(
                        "commitment of epoch {e} differs from its plan (p, T, margin, rate or \
                         opening)"
                    )));
                }
                if c.closed_ms < c.opened_ms || c.closed_ms > seen.deadline_ms {
                    return Err(refuse(format!(
                        "epoch {e} closed at {} ms, outside its window {}..={} ms",
                        c.closed_ms, c.opened_ms, seen.deadline_ms
                    )));
                }
                seen.committed = true;
                seen.bets = Some((hex::encode(c.bets_root), c.bet_count));
                // What a verifier's deadline line counts in time (its δ_v at most this δ), read
                // off the very cosignature this submission gets: this witness then vouched for
                // the epoch, even when a void came with it.
                let by = seen.deadline_ms.saturating_add(clock.delta_ms);
                let cosigned_ms = clock.cosign_s.saturating_mul(1000);
                seen.in_time = Some(!clock.audit && (clock.first_contact || cosigned_ms <= by));
                committed_here.insert(e);
                if !voided_here.contains(&e) {
                    fresh(&format!("the commitment of epoch {e}"), c.closed_ms)?;
                }
            }
            LogEntry::Void(v) => {
                let e = v.epoch;
                let Some(seen) = s.epochs.get_mut(&e) else {
                    return Err(refuse(format!(
                        "void of epoch {e}, which this witness has no plan of"
                    )));
                };
                if seen.void {
                    return Err(refuse(format!("epoch {e} is already void")));
                }
                seen.void = true;
                // A void decides nothing, so only an early stamp is refused: a witness that
                // was down meets its catch-up voids after their stamps.
                if v.stamped_ms > clock.now_ms.saturating_add(clock.delta_ms) {
                    fresh(&format!("the void of epoch {e}"), v.stamped_ms)?;
                }
            }
            LogEntry::Output(o) => {
                let e = o.epoch;
                if s.last_output != 0 && e != s.last_output + 1 {
                    return Err(refuse(format!(
                        "output of epoch {e} after that of {}: outputs come one per epoch, in \
                         order",
                        s.last_output
                    )));
                }
                if e == 0 || e > s.last_plan {
                    return Err(refuse(format!(
                        "output of epoch {e}, which is not planned (last plan {})",
                        s.last_plan
                    )));
                }
                s.last_output = e;
            }
            LogEntry::PoolBatch(b) => {
                if s.last_batch != 0 {
                    if b.batch != s.last_batch + 1 {
                        return Err(refuse(format!(
                            "pool batch {} after {}: batches come in order",
                            b.batch, s.last_batch
                        )));
                    }
                    if hex::encode(b.prev_root) != s.last_batch_root {
                        return Err(refuse(format!(
                            "pool batch {} does not link to batch {}'s root",
                            b.batch, s.last_batch
                        )));
                    }
                    if b.first_index != s.next_pool_index {
                        return Err(refuse(format!(
                            "pool batch {} starts at entry {}, not {}",
                            b.batch, b.first_index, s.next_pool_index
                        )));
                    }
                }
                s.last_batch = b.batch;
                s.last_batch_root = hex::encode(b.root);
                s.next_pool_index = b.first_index + b.size;
            }
            LogEntry::Anchor(a) => {
                let n = a.batch;
                if n == 0 {
                    return Err(refuse("anchor batch 0: batches count from 1".to_owned()));
                }
                if a.first_epoch > a.last_epoch
                    || a.pool_from > a.pool_to
                    || a.notary_from > a.notary_to
                {
                    return Err(refuse(format!(
                        "anchor batch {n} covers epochs {}..={}, pool batches {}..{} and notary \
                         batches {}..{}: a range ends before it starts",
                        a.first_epoch,
                        a.last_epoch,
                        a.pool_from,
                        a.pool_to,
                        a.notary_from,
                        a.notary_to
                    )));
                }
                if s.last_anchor != 0 {
                    if n <= s.last_anchor {
                        return Err(refuse(format!(
                            "a second root for anchor batch {n} (the last was {}): a witness \
                             cosigns one per batch",
                            s.last_anchor
                        )));
                    }
                    if n != s.last_anchor + 1 {
                        return Err(refuse(format!(
                            "anchor batch {n} after {}: batches come one per number, in order",
                            s.last_anchor
                        )));
                    }
                    let start = [a.first_epoch, a.pool_from, a.notary_from];
                    if s.anchor_ends != Some(start) {
                        let [e, p, q] = s.anchor_ends.unwrap_or_default();
                        return Err(refuse(format!(
                            "anchor batch {n} starts at epoch {}, pool batch {} and notary batch \
                             {}, not where batch {} ended (epoch {e}, pool batch {p}, notary \
                             batch {q}): no record is in two batches",
                            a.first_epoch, a.pool_from, a.notary_from, s.last_anchor
                        )));
                    }
                }
                s.anchor_ends = Some([a.last_epoch + 1, a.pool_to, a.notary_to]);
                s.last_anchor = n;
            }
            LogEntry::Move(m) => {
                let (e, d) = (m.epoch, m.to);
                let Some(seen) = s.epochs.get(&e) else {
                    return Err(refuse(format!(
                        "move of epoch {e}, which this witness has no plan of"
                    )));
                };
                if !seen.void {
                    return Err(refuse(format!(
                        "move of epoch {e}, which is not void: only a void epoch's games take \
                         another epoch's outcome"
                    )));
                }
                if seen.moved {
                    return Err(refuse(format!(
                        "a second move of epoch {e}: its games go to one epoch"
                    )));
                }
                // On first contact the history's moves are taken as they are (this witness
                // cosigned none of it in time); later ones are judged by what it vouched for.
                if !clock.first_contact && seen.in_time.unwrap_or(seen.committed) {
                    return Err(refuse(format!(
                        "move of epoch {e}, whose commitment this witness cosigned in time: its \
                         games keep its outcome"
                    )));
                }
                if seen.committed && seen.bets.is_none() {
                    return Err(refuse(format!(
                        "move of epoch {e}, whose committed bets this witness does not hold"
                    )));
                }
                if let Some((root, count)) = &seen.bets {
                    if *root != hex::encode(m.bets_root) || *count != m.bet_count {
                        return Err(refuse(format!(
                            "move of epoch {e} with other bets than its commitment's ({count} \
                             under {root})"
                        )));
                    }
                }
                let open = d > e && s.epochs.get(&d).is_some_and(|t| !t.committed && !t.void);
                if !open {
                    return Err(refuse(format!(
                        "move of epoch {e} to epoch {d}, which is not an open epoch after it \
                         (planned, neither committed nor void)"
                    )));
                }
                if let Some(seen) = s.epochs.get_mut(&e) {
                    seen.moved = true;
                }
            }
        }
    }
    while s.epochs.len() > KEPT_EPOCHS {
        s.epochs.pop_first();
    }
    Ok(s)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::entry::{
        AnchorEntry, CommitmentEntry, OutputEntry, PoolBatchEntry, VoidEntry,
    };
    use super::*;

    const T0: u64 = 1_800_000_000_000;

    fn plan(e: u64, opened: u64) -> LogEntry {
        LogEntry::Plan(PlanEntry {
            epoch: e,
            previous: e - 1,
            iterations: 1000,
            margin_centi: 150,
            squarings_per_second: 1000,
            opened_ms: opened,
            deadline_ms: opened + 1000,
        })
    }

    fn commit(e: u64, opened: u64, closed: u64) -> LogEntry {
        LogEntry::Commitment(CommitmentEntry {
            epoch: e,
            previous: e - 1,
            bets_root: [0; 32],
            bet_count: 0,
            nonce: [e as u8; 32],
            iterations: 1000,
            margin_centi: 150,
            squarings_per_second: 1000,
            opened_ms: opened,
            closed_ms: closed,
        })
    }

    fn void(e: u64, at: u64) -> LogEntry {
        LogEntry::Void(VoidEntry {
            epoch: e,
            stamped_ms: at,
        })
    }

    fn at(now: u64) -> Clock {
        Clock {
            now_ms: now,
            delta_ms: 500,
            first_contact: false,
            audit: false,
            cosign_s: now / 1000,
        }
    }

    fn started() -> AppState {
        apply(&AppState::default(), 0, &[plan(1, T0)], at(T0)).unwrap()
    }

    #[test]
    fn an_honest_sequence_passes() {
        let s = started();
        let s = apply(
            &s,
            1,
            &[commit(1, T0, T0 + 900), plan(2, T0 + 900)],
            at(T0 + 1000),
        )
        .unwrap();
        let s = apply(&s, 3, &[commit(2, T0 + 900, T0 + 1800)], at(T0 + 1800)).unwrap();
        assert_eq!(s.last_plan, 2);
        assert!(s.epochs[&2].committed);
    }

    #[test]
    fn a_second_commitment_is_refused() {
        let s = apply(&started(), 1, &[commit(1, T0, T0 + 900)], at(T0 + 900)).unwrap();
        let e = apply(&s, 2, &[commit(1, T0, T0 + 901)], at(T0 + 901)).unwrap_err();
        assert!(e.reason.contains("second commitment"), "{e}");
        assert_eq!(e.index, 2);
        // Also within one submission.
        let e = apply(
            &started(),
            1,
            &[commit(1, T0, T0 + 900), commit(1, T0, T0 + 900)],
            at(T0 + 900),
        )
        .unwrap_err();
        assert_eq!(e.index, 2);
    }

    #[test]
    fn a_commitment_needs_its_plan_and_must_match_it() {
        let e = apply(&started(), 1, &[commit(2, T0, T0 + 10)], at(T0 + 10)).unwrap_err();
        assert!(e.reason.contains("before its plan"), "{e}");
        let e = apply(&started(), 1, &[commit(1, T0 + 1, T0 + 10)], at(T0 + 10)).unwrap_err();
        assert!(e.reason.contains("differs from its plan"), "{e}");
        let e = apply(&started(), 1, &[commit(1, T0, T0 + 1001)], at(T0 + 1001)).unwrap_err();
        assert!(e.reason.contains("outside its window"), "{e}");
    }

    #[test]
    fn a_late_commitment_is_refused_unless_voided() {
        // Withheld for 2 s past its close: refused.
        let late = at(T0 + 900 + 2000);
        let e = apply(&started(), 1, &[commit(1, T0, T0 + 900)], late).unwrap_err();
        assert!(e.reason.contains("behind this witness's clock"), "{e}");
        // Backdated: the same.
        let e = apply(&started(), 1, &[commit(1, T0, T0 + 100)], at(T0 + 900)).unwrap_err();
        assert!(e.reason.contains("behind"), "{e}");
        // An honest log after an outage voids it in the same submission.
        let s = apply(
            &started(),
            1,
            &[
                commit(1, T0, T0 + 900),
                void(1, T0 + 2900),
                plan(2, T0 + 2900),
            ],
            late,
        )
        .unwrap();
        assert!(s.epochs[&1].void);
        // A witness that was down meets the void after its stamp: taken.
        apply(&started(), 1, &[void(1, T0)], late).unwrap();
        // An early one is refused.
        let e = apply(&started(), 1, &[void(1, T0 + 5000)], at(T0)).unwrap_err();
        assert!(e.reason.contains("void of epoch 1"), "{e}");
    }

    #[test]
    fn a_void_may_follow_a_cosigned_commitment_but_only_in_time() {
        let s = apply(&started(), 1, &[commit(1, T0, T0 + 900)], at(T0 + 900)).unwrap();
        // Long after the deadline (T0 + 1000): a witness that cosigned the commitment still
        // takes the void another witness needs to catch up; it is stamped now.
        let later = T0 + 60_000;
        let s2 = apply(&s, 2, &[void(1, later)], at(later)).unwrap();
        assert!(s2.epochs[&1].void && s2.epochs[&1].committed);
        let e = apply(&s2, 3, &[void(1, later)], at(later)).unwrap_err();
        assert!(e.reason.contains("already void"), "{e}");
    }

    #[test]
    fn outputs_come_one_per_epoch_in_order() {
        let out = |e: u64, y: &[u8]| LogEntry::Output(OutputEntry::of(e, y));
        let s = apply(
            &started(),
            1,
            &[commit(1, T0, T0 + 900), plan(2, T0 + 900)],
            at(T0 + 900),
        )
        .unwrap();
        let s = apply(&s, 3, &[out(1, b"y1")], at(T0 + 950)).unwrap();
        assert_eq!(s.last_output, 1);
        // A second output of epoch 1, with another y or the same: refused.
        for y in [&b"y1'"[..], b"y1"] {
            let e = apply(&s, 4, &[out(1, y)], at(T0 + 960)).unwrap_err();
            assert!(e.reason.contains("one per epoch, in order"), "{e}");
        }
        // Skipping an epoch, or an epoch not planned yet: refused.
        let e = apply(&s, 4, &[out(3, b"y3")], at(T0 + 960)).unwrap_err();
        assert!(e.reason.contains("in order"), "{e}");
        let s2 = apply(&s, 4, &[out(2, b"y2")], at(T0 + 960)).unwrap();
        let e = apply(&s2, 5, &[out(3, b"y3")], at(T0 + 960)).unwrap_err();
        assert!(e.reason.contains("not planned"), "{e}");
        // Outputs carry no stamp: one logged late is taken (verifiers time it).
        apply(&s, 4, &[out(2, b"y2")], at(T0 + 3_600_000)).unwrap();
    }

    #[test]
    fn plans_come_in_order_after_their_predecessor_settled() {
        let e = apply(&started(), 1, &[plan(2, T0)], at(T0)).unwrap_err();
        assert!(e.reason.contains("neither committed nor void"), "{e}");
        let s = apply(&started(), 1, &[commit(1, T0, T0 + 10)], at(T0 + 10)).unwrap();
        let e = apply(&s, 2, &[plan(3, T0 + 10)], at(T0 + 10)).unwrap_err();
        assert!(e.reason.contains("in order"), "{e}");
    }

    #[test]
    fn first_contact_takes_the_history_untimed() {
        let first = Clock {
            first_contact: true,
            ..at(T0 + 86_400_000)
        };
        let s = apply(
            &AppState::default(),
            0,
            &[plan(1, T0), commit(1, T0, T0 + 900), plan(2, T0 + 900)],
            first,
        )
        .unwrap();
        assert_eq!(s.last_plan, 2);
    }

    #[test]
    fn pool_batches_link() {
        let b = |n: u64, first: u64, prev: u8, root: u8| {
            LogEntry::PoolBatch(PoolBatchEntry {
                batch: n,
                first_index: first,
                size: 10,
                prev_root: [prev; 32],
                anchor_epoch: 0,
                seed: [0; 32],
                root: [root; 32],
                committed_ms: T0,
            })
        };
        let s = apply(&AppState::default(), 0, &[b(1, 1, 0, 1)], at(T0)).unwrap();
        apply(&s, 1, &[b(2, 11, 1, 2)], at(T0)).unwrap();
        assert!(apply(&s, 1, &[b(2, 11, 3, 2)], at(T0)).is_err());
        assert!(apply(&s, 1, &[b(3, 11, 1, 2)], at(T0)).is_err());
        assert!(apply(&s, 1, &[b(2, 12, 1, 2)], at(T0)).is_err());
    }

    #[test]
    fn an_anchor_batch_has_one_root() {
        // Batch n over epochs 10n..=10n + 9, pool batch n, no notary batch.
        let a = |n: u64, root: u8| {
            LogEntry::Anchor(AnchorEntry {
                batch: n,
                first_epoch: 10 * n,
                last_epoch: 10 * n + 9,
                pool_from: n,
                pool_to: n + 1,
                notary_from: 1,
                notary_to: 1,
                root: [root; 32],
            })
        };
        // A log may begin anchoring at any batch (its earlier ones predate the log).
        let s = apply(&AppState::default(), 0, &[a(4, 1)], at(T0)).unwrap();
        assert_eq!(s.last_anchor, 4);
        apply(&s, 1, &[a(5, 2)], at(T0)).unwrap();
        let second = apply(&s, 1, &[a(4, 9)], at(T0)).unwrap_err();
        assert!(
            second.reason.contains("a second root for anchor batch 4"),
            "{second}"
        );
        assert!(apply(&s, 1, &[a(6, 2)], at(T0)).is_err());
        assert!(apply(&s, 1, &[a(3, 2)], at(T0)).is_err());
        assert!(apply(&AppState::default(), 0, &[a(0, 1)], at(T0)).is_err());
        assert!(apply(&s, 1, &[a(5, 2), a(5, 3)], at(T0)).is_err());
        // A next batch over records batch 4 already holds: another root for pool batch 4.
        let LogEntry::Anchor(mut again) = a(5, 2) else {
            unreachable!()
        };
        again.pool_from = 4;
        let overlap = apply(&s, 1, &[LogEntry::Anchor(again)], at(T0)).unwrap_err();
        assert!(
            overlap.reason.contains("no record is in two batches"),
            "{overlap}"
        );
        again.pool_from = 6;
        assert!(apply(&s, 1, &[LogEntry::Anchor(again)], at(T0)).is_err());
        let LogEntry::Anchor(mut backwards) = a(5, 2) else {
            unreachable!()
        };
        backwards.last_epoch = 49;
        assert!(apply(&s, 1, &[LogEntry::Anchor(backwards)], at(T0)).is_err());
    }

    fn moved(e: u64, to: u64, root: u8, count: u64) -> LogEntry {
        LogEntry::Move(super::super::entry::MoveEntry {
            epoch: e,
            to,
            bets_root: [root; 32],
            bet_count: count,
        })
    }

    #[test]
    fn a_void_epochs_games_move_once_to_an_open_epoch() {
        // Epoch 1's plan came late: void with it; its games go to epoch 2, open.
        let late = at(T0 + 5000);
        let s = apply(
            &started(),
            1,
            &[void(1, T0 + 5000), plan(2, T0 + 5000), moved(1, 2, 0, 3)],
            late,
        )
        .unwrap();
        assert!(s.epochs[&1].moved);
        let e = apply(&s, 4, &[moved(1, 2, 0, 3)], late).unwrap_err();
        assert!(e.reason.contains("a second move of epoch 1"), "{e}");
        // Nor to an epoch that is not open after it, nor of an epoch that is not void.
        let s = apply(&started(), 1, &[void(1, T0 + 5000)], late).unwrap();
        let e = apply(&s, 2, &[moved(1, 2, 0, 0)], late).unwrap_err();
        assert!(e.reason.contains("not an open epoch after it"), "{e}");
        let s = apply(&s, 2, &[plan(2, T0 + 5000)], late).unwrap();
        let e = apply(&s, 3, &[moved(1, 1, 0, 0)], late).unwrap_err();
        assert!(e.reason.contains("not an open epoch after it"), "{e}");
        let e = apply(&s, 3, &[moved(2, 3, 0, 0)], late).unwrap_err();
        assert!(e.reason.contains("which is not void"), "{e}");
    }

    /// A void and epoch 2's plan after epoch 1's commitment (entries 1 and 2), then a move of
    /// epoch 1: refused as vouched for.
    fn assert_move_refused_after_void(s: &AppState, now: u64) {
        let e = apply(
            s,
            2,
            &[void(1, now), plan(2, now), moved(1, 2, 0, 0)],
            at(now),
        )
        .unwrap_err();
        assert!(e.reason.contains("cosigned in time"), "{e}");
    }

    #[test]
    fn a_commitment_cosigned_in_time_keeps_its_games() {
        let s = apply(&started(), 1, &[commit(1, T0, T0 + 900)], at(T0 + 900)).unwrap();
        assert_eq!(s.epochs[&1].in_time, Some(true));
        // A void may follow (for a witness catching up), a move may not: this witness saw
        // the commitment in time, so the epoch's outcome stands.
        let later = T0 + 60_000;
        assert_move_refused_after_void(&s, later);
        // Nor when the operator sends a void with the commitment, in time: the void exempts
        // the commitment from the stamp check, not the epoch from its outcome (the operator
        // would otherwise look at y_e and move the games if it disliked it).
        let s = apply(
            &started(),
            1,
            &[
                commit(1, T0, T0 + 900),
                void(1, T0 + 900),
                plan(2, T0 + 900),
            ],
            at(T0 + 900),
        )
        .unwrap();
        assert_eq!(s.epochs[&1].in_time, Some(true));
        let e = apply(&s, 4, &[moved(1, 2, 0, 0)], at(later)).unwrap_err();
        assert!(e.reason.contains("cosigned in time"), "{e}");
        // A commitment first seen past deadline + δ + 1 s, with its void, vouches for
        // nothing: its games move, with the bets it committed.
        let s = apply(
            &started(),
            1,
            &[commit(1, T0, T0 + 900), void(1, later), plan(2, later)],
            at(later),
        )
        .unwrap();
        assert_eq!(s.epochs[&1].in_time, Some(false));
        let e = apply(&s, 4, &[moved(1, 2, 9, 0)], at(later)).unwrap_err();
        assert!(e.reason.contains("other bets than its commitment's"), "{e}");
        apply(&s, 4, &[moved(1, 2, 0, 0)], at(later)).unwrap();
        // On first contact every commitment counts as vouched for (a witness that re-joins
        // forgot what it cosigned); an auditor's replay vouches for none.
        let first = Clock {
            first_contact: true,
            ..at(later)
        };
        let history = [plan(1, T0), commit(1, T0, T0 + 900)];
        let s = apply(&AppState::default(), 0, &history, first).unwrap();
        assert_eq!(s.epochs[&1].in_time, Some(true));
        let replay = Clock {
            audit: true,
            ..first
        };
        let s = apply(&AppState::default(), 0, &history, replay).unwrap();
        assert_eq!(s.epochs[&1].in_time, Some(false));
        // A witness joining a log that already moved a committed epoch's games takes that
        // history (it vouched for none of it); a later move of an epoch it took is refused.
        let moved_history = [
            plan(1, T0),
            commit(1, T0, T0 + 900),
            void(1, later),
            plan(2, later),
            moved(1, 2, 0, 0),
        ];
        let s = apply(&AppState::default(), 0, &moved_history, first).unwrap();
        assert!(s.epochs[&1].moved);
        let s = apply(
            &s,
            5,
            &[
                commit(2, later, later + 100),
                void(2, later + 100),
                plan(3, later + 100),
            ],
            at(later + 100),
        )
        .unwrap();
        let e = apply(&s, 8, &[moved(2, 3, 0, 0)], at(later + 200)).unwrap_err();
        assert!(e.reason.contains("cosigned in time"), "{e}");
    }

    #[test]
    fn state_kept_before_rule_9_reads_a_committed_epoch_as_vouched_for() {
        let mut s = apply(&started(), 1, &[commit(1, T0, T0 + 900)], at(T0 + 900)).unwrap();
        let old = s.epochs.get_mut(&1).unwrap();
        (old.in_time, old.bets) = (None, None);
        let later = T0 + 60_000;
        assert_move_refused_after_void(&s, later);
    }
}
