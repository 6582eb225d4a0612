//! The `witnessed` step (docs/PROTOCOL.md §21, "The witnessed step"): an epoch's plan and
//! commitment are entries of the operator's log, included in checkpoints that a quorum of the
//! verifier's own witnesses cosigned, each in time by that witness's clock:
//!
//! ```text
//! 1000 · t_p(w) ≤ opened_e + δ                   the plan was cosigned as the epoch opened
//! 1000 · t_c(w) ≤ deadline_e + δ                 the commitment, by the deadline (else void)
//! (t_c(w) − t_p(w) + 1) · S ≤ T_e                less than T_e / S seconds between the two
//! ```
//!
//! t_p(w), t_c(w): witness w's cosigned Unix seconds on the two checkpoints; S: the verifier's
//! bound on the fastest squarer (never the operator's declaration); δ: the verifier's clock
//! tolerance. The + 1 covers the cosignatures' whole-second resolution.

use std::collections::BTreeSet;

use super::entry::{CommitmentEntry, LogEntry, PlanEntry};
use super::note::{verify_checkpoint, VKey};
use super::policy::Policy;
use super::tree::{check_inclusion, leaf_hash, parse_b64_hash};

/// One log entry as a verifier receives it: its index, bytes (hex), the signed checkpoint
/// (with the cosignatures the operator collected) that includes it, and the audit path
/// (base64 hashes, RFC 6962, sibling nearest the leaf first).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct LoggedEntry {
    pub index: u64,
    pub entry: String,
    pub checkpoint: String,
    pub proof: Vec<String>,
}

/// What the verifier sets: its witnesses and quorum, S and δ.
#[derive(Clone, Debug)]
pub struct WitnessFloor {
    pub policy: Policy,
    /// S, squarings per second.
    pub max_rate: u64,
    pub delta_ms: u64,
}

/// An entry proven in a cosigned checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProvenEntry {
    pub entry: LogEntry,
    pub index: u64,
    pub size: u64,
    /// (witness key name, cosigned second).
    pub cosignatures: Vec<(String, u64)>,
}

/// Checks `logged` against the policy's log key and witnesses: the checkpoint's signature,
/// every known cosignature, the entry's audit path to its root.
pub fn prove(logged: &LoggedEntry, policy: &Policy) -> Result<ProvenEntry, String> {
    let bytes = hex::decode(&logged.entry).map_err(|_| "the entry is not hex".to_owned())?;
    let origin = logged
        .checkpoint
        .lines()
        .next()
        .ok_or("the checkpoint is empty")?;
    let log: &VKey = policy
        .logs
        .iter()
        .map(|(k, _)| k)
        .find(|k| k.name == origin)
        .ok_or_else(|| format!("the policy names no log with origin {origin:?}"))?;
    let witnesses: Vec<VKey> = policy.witnesses.iter().map(|w| w.key.clone()).collect();
    let cp = verify_checkpoint(logged.checkpoint.as_bytes(), log, &witnesses)
        .map_err(|e| format!("checkpoint of entry {}: {e}", logged.index))?;
    let proof = logged
        .proof
        .iter()
        .map(|h| parse_b64_hash(h))
        .collect::<Result<Vec<_>, String>>()?;
    check_inclusion(&proof, cp.size, cp.root, logged.index, leaf_hash(&bytes))?;
    let entry = LogEntry::decode(&bytes).map_err(|e| e.to_string())?;
    Ok(ProvenEntry {
        entry,
        index: logged.index,
        size: cp.size,
        cosignatures: cp.cosignatures,
    })
}

/// The step's verdict for one epoch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witnessed {
    pub plan: PlanEntry,
    pub commitment: CommitmentEntry,
    /// The policy names of the witnesses that cosigned both in time.
    pub in_time: Vec<String>,
    pub detail: String,
}

/// The `witnessed` step over an epoch's proven plan and commitment.
pub fn check(
    plan: &LoggedEntry,
    commitment: &LoggedEntry,
    floor: &WitnessFloor,
) -> Result<Witnessed, String> {
    let p = prove(plan, &floor.policy)?;
    let c = prove(commitment, &floor.policy)?;
    let LogEntry::Plan(plan) = p.entry else {
        return Err(format!(
            "entry {} is a {}, not a plan",
            p.index,
            p.entry.kind()
        ));
    };
    let LogEntry::Commitment(commitment) = c.entry else {
        return Err(format!(
            "entry {} is a {}, not a commitment",
            c.index,
            c.entry.kind()
        ));
    };
    if plan.epoch != commitment.epoch {
        return Err(format!(
            "the plan is epoch {}'s and the commitment epoch {}'s",
            plan.epoch, commitment.epoch
        ));
    }
    if p.index >= c.index {
        return Err("the commitment comes before the plan in the log".into());
    }
    let delta = floor.delta_ms;
    let mut in_time = Vec::new();
    let mut late = Vec::new();
    for w in &floor.policy.witnesses {
        let t = |e: &ProvenEntry| {
            e.cosignatures
                .iter()
                .find(|(n, _)| *n == w.key.name)
                .map(|(_, t)| *t)
        };
        let (Some(tp), Some(tc)) = (t(&p), t(&c)) else {
            continue;
        };
        let window = tc.saturating_sub(tp);
        let ok_plan = u128::from(tp) * 1000 <= u128::from(plan.opened_ms) + u128::from(delta);
        let ok_close = u128::from(tc) * 1000 <= u128::from(plan.deadline_ms) + u128::from(delta);
        let ok_window = tc >= tp
            && (u128::from(window) + 1) * u128::from(floor.max_rate) <= u128::from(plan.iterations);
        if ok_plan && ok_close && ok_window {
            in_time.push(w.name.clone());
        } else {
            late.push(format!(
                "{}: plan at {tp} s{}, commitment at {tc} s{}, {window} s apart{}",
                w.name,
                if ok_plan {
                    ""
                } else {
                    " (after the opening + δ)"
                },
                if ok_close {
                    ""
                } else {
                    " (after the deadline + δ)"
                },
                if ok_window {
                    String::new()
                } else {
                    format!(
                        " (T_e / S = {} / {} allows under {:.3} s)",
                        plan.iterations,
                        floor.max_rate,
                        plan.iterations as f64 / floor.max_rate.max(1) as f64
                    )
                }
            ));
        }
    }
    let set: BTreeSet<String> = in_time.iter().cloned().collect();
    if !floor.policy.satisfied_by(&set) {
        return Err(format!(
            "epoch {}: cosigned in time by [{}], short of the quorum {}{}",
            plan.epoch,
            in_time.join(", "),
            floor.policy.describe(),
            if late.is_empty() {
                String::new()
            } else {
                format!("; not in time: {}", late.join("; "))
            }
        ));
    }
    Ok(Witnessed {
        plan,
        commitment,
        detail: format!(
            "epoch {}: plan (entry {}) and commitment (entry {}) cosigned in time by {} \
             (quorum {}; S = {} squarings/s, δ = {} ms)",
            plan.epoch,
            p.index,
            c.index,
            in_time.join(", "),
            floor.policy.describe(),
            floor.max_rate,
            delta
        ),
        in_time,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::note::{Cosigner, LogSigner};
    use super::super::tree::LogTree;
    use super::*;
    use base64::prelude::{Engine as _, BASE64_STANDARD};
    use ed25519_dalek::SigningKey;

    const T0: u64 = 1_800_000_000_000;

    struct World {
        log: LogSigner,
        witnesses: Vec<Cosigner>,
        tree: LogTree,
        policy: Policy,
    }

    fn world(k: usize) -> World {
        world_of(k, 10)
    }

    fn world_of(k: usize, seed: u8) -> World {
        let log = LogSigner::new("vrs.test/log", SigningKey::from_bytes(&[1; 32])).unwrap();
        let witnesses: Vec<Cosigner> = (0..3)
            .map(|i| {
                Cosigner::new(&format!("w{i}"), SigningKey::from_bytes(&[seed + i; 32])).unwrap()
            })
            .collect();
        let mut text = format!("log {}\n", log.vkey());
        for (i, w) in witnesses.iter().enumerate() {
            text += &format!("witness W{i} {}\n", w.vkey());
        }
        text += &format!("group all3 {k} W0 W1 W2\nquorum all3\n");
        World {
            log,
            witnesses,
            tree: LogTree::new(),
            policy: Policy::parse(&text).unwrap(),
        }
    }

    impl World {
        /// Appends, then has witnesses `who` cosign the new checkpoint at second `t`.
        fn add(&mut self, e: &LogEntry, t: u64, who: &[usize]) -> LoggedEntry {
            let bytes = e.encode();
            let index = self.tree.append(bytes.clone()).unwrap();
            let size = self.tree.size();
            let note = self.log.sign(size, self.tree.root()).unwrap();
            let text_end = note.windows(2).position(|w| w == b"\n\n").unwrap() + 1;
            let mut cp = note.clone();
            for &i in who {
                cp.extend(self.witnesses[i].cosign(&note[..text_end], t).unwrap());
            }
            LoggedEntry {
                index,
                entry: hex::encode(bytes),
                checkpoint: String::from_utf8(cp).unwrap(),
                proof: self
                    .tree
                    .inclusion_proof(index, size)
                    .unwrap()
                    .iter()
                    .map(|h| BASE64_STANDARD.encode(h.0))
                    .collect(),
            }
        }
    }

    fn plan() -> LogEntry {
        LogEntry::Plan(PlanEntry {
            epoch: 1,
            previous: 0,
            iterations: 45_000_000,
            margin_centi: 150,
            squarings_per_second: 1_000_000,
            opened_ms: T0,
            deadline_ms: T0 + 5_000,
        })
    }

    fn commitment(closed: u64) -> LogEntry {
        LogEntry::Commitment(CommitmentEntry {
            epoch: 1,
            previous: 0,
            bets_root: [0; 32],
            bet_count: 0,
            nonce: [1; 32],
            iterations: 45_000_000,
            margin_centi: 150,
            squarings_per_second: 1_000_000,
            opened_ms: T0,
            closed_ms: closed,
        })
    }

    fn floor(w: &World) -> WitnessFloor {
        WitnessFloor {
            policy: w.policy.clone(),
            max_rate: 9_000_000,
            delta_ms: 1_000,
        }
    }

    #[test]
    fn an_epoch_cosigned_in_time_by_a_quorum_passes() {
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 3_000), T0 / 1000 + 3, &[0, 2]);
        let ok = check(&p, &c, &floor(&w)).unwrap();
        assert_eq!(ok.in_time, vec!["W0", "W2"]);
    }

    #[test]
    fn a_withheld_commitment_fails() {
        // 45e6 / 9e6 = 5 s: a commitment cosigned 5 s after the plan is past T_e / S.
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 4_900), T0 / 1000 + 5, &[0, 1, 2]);
        let e = check(&p, &c, &floor(&w)).unwrap_err();
        assert!(e.contains("short of the quorum"), "{e}");
        assert!(e.contains("T_e / S"), "{e}");
    }

    #[test]
    fn too_few_witnesses_fail_and_strangers_do_not_count() {
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1]);
        let c = w.add(&commitment(T0 + 1_000), T0 / 1000 + 1, &[0]);
        assert!(check(&p, &c, &floor(&w)).is_err());
        // A policy that names other witnesses: nothing counts.
        let stranger = world_of(1, 50);
        let mut f = floor(&stranger);
        f.policy.logs = w.policy.logs.clone();
        assert!(check(&p, &c, &f)
            .unwrap_err()
            .contains("short of the quorum"));
    }

    #[test]
    fn an_altered_entry_or_proof_fails() {
        let mut w = world(1);
        let p = w.add(&plan(), T0 / 1000, &[0]);
        let c = w.add(&commitment(T0 + 1_000), T0 / 1000 + 1, &[0]);
        let mut bad = c.clone();
        bad.entry.replace_range(40..42, "ff");
        assert!(check(&p, &bad, &floor(&w)).is_err());
        let mut bad = c.clone();
        bad.index = 0;
        assert!(check(&p, &bad, &floor(&w)).is_err());
        assert!(check(&c, &p, &floor(&w)).is_err());
    }
}
