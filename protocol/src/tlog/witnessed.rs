//! The `witnessed` step (docs/PROTOCOL.md §21, "The witnessed step"): an epoch's plan and
//! commitment, and the output of the epoch p its input takes (for p ≥ 1), are entries of the
//! operator's log, included in checkpoints that a quorum of the verifier's own witnesses
//! cosigned, each in time by that witness's clock:
//!
//! ```text
//! 1000 · t_p(w) ≤ opened_e + δ                       the plan was cosigned as the epoch opened
//! 1000 · t_c(w) ≤ deadline_e + δ                     the commitment, by the deadline (else void)
//! t_l(w) = max(t_c(w), t_o(w))                       the last input of x_e to be fixed
//! t_c(w) ≥ t_p(w) and
//! (1000 · (t_l(w) + 1) + δ − opened_e) · S ≤ 1000 · T_e   under T_e / S from the opening − δ
//! ```
//!
//! t_p(w), t_c(w), t_o(w): witness w's cosigned Unix seconds on the plan, the commitment and
//! p's output (t_o = t_c for p = 0, whose y_0 nobody chooses); S: the verifier's bound on the
//! fastest squarer (never the operator's declaration); δ: the verifier's clock tolerance.
//! The added second covers the cosignatures' whole-second resolution; the δ, a stamped
//! opening up to δ before the plan's cosignature (bets count from the opening).

use std::collections::BTreeSet;

use super::entry::{CommitmentEntry, LogEntry, OperatorEntry, OutputEntry, PlanEntry};
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

/// An epoch's entries as a verification serves them (`log` of the proof and of the epoch
/// record): each with every checkpoint the operator holds cosigned for it, earliest first.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct LogEvidence {
    pub origin: String,
    pub plan: Vec<LoggedEntry>,
    pub commitment: Vec<LoggedEntry>,
    /// A void epoch's moves, from it on (docs/PROTOCOL.md §21, "Moved games"): one list per
    /// move entry, the last into the epoch the games are judged by. Absent when none.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_empty"
    )]
    pub moves: Vec<Vec<LoggedEntry>>,
    /// The output entry of epoch p(e), the y_p its input takes; empty for p = 0 (y_0) and
    /// until p's output is logged.
    #[serde(default)]
    pub previous_output: Vec<LoggedEntry>,
    /// The log's first entry, the operator's declaration (its anchor chain and address).
    #[serde(default)]
    pub operator: Vec<LoggedEntry>,
}

/// An absent or null list reads as empty (docs/PROTOCOL.md §21, "Moved games").
fn null_as_empty<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Vec<Vec<LoggedEntry>>, D::Error> {
    use serde::Deserialize as _;
    Ok(Option::<Vec<Vec<LoggedEntry>>>::deserialize(d)?.unwrap_or_default())
}

/// The epoch record a verifier was shown (the proof's or the epoch endpoint's), in the terms
/// of a commitment entry, to compare with the one proven in the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShownEpoch {
    pub commitment: CommitmentEntry,
    pub deadline_ms: u64,
    /// SHA-256 of the shown `previous_output` (the bytes of y_p seed_e takes).
    pub previous_output_hash: [u8; 32],
}

impl Witnessed {
    /// The record judged is the one proven in the log: every field shown must equal it.
    pub fn matches(&self, shown: &ShownEpoch) -> Result<(), String> {
        let (p, c) = (&self.plan, &self.commitment);
        if let Some(o) = &self.previous_output {
            if o.output_hash != shown.previous_output_hash {
                return Err(format!(
                    "the epoch record shown is not the one logged: previous_output hashes to \
                     {}, the log's output of epoch {} says {}",
                    hex::encode(shown.previous_output_hash),
                    o.epoch,
                    hex::encode(o.output_hash)
                ));
            }
        }
        let (shown, deadline_ms) = (&shown.commitment, shown.deadline_ms);
        let fields: [(&str, String, String); 11] = [
            ("epoch", c.epoch.to_string(), shown.epoch.to_string()),
            (
                "previous_epoch",
                c.previous.to_string(),
                shown.previous.to_string(),
            ),
            (
                "bets_root",
                hex::encode(c.bets_root),
                hex::encode(shown.bets_root),
            ),
            (
                "bet_count",
                c.bet_count.to_string(),
                shown.bet_count.to_string(),
            ),
            ("nonce", hex::encode(c.nonce), hex::encode(shown.nonce)),
            (
                "iterations",
                c.iterations.to_string(),
                shown.iterations.to_string(),
            ),
            (
                "security_margin (hundredths)",
                c.margin_centi.to_string(),
                shown.margin_centi.to_string(),
            ),
            (
                "squarings_per_second",
                c.squarings_per_second.to_string(),
                shown.squarings_per_second.to_string(),
            ),
            (
                "opened_at_ms",
                c.opened_ms.to_string(),
                shown.opened_ms.to_string(),
            ),
            (
                "closed_at_ms",
                c.closed_ms.to_string(),
                shown.closed_ms.to_string(),
            ),
            (
                "deadline_ms",
                p.deadline_ms.to_string(),
                deadline_ms.to_string(),
            ),
        ];
        for (name, logged, served) in fields {
            if logged != served {
                return Err(format!(
                    "the epoch record shown is not the one logged: {name} is {served}, the \
                     log's commitment says {logged}"
                ));
            }
        }
        // Rule 3 of the witnesses holds the plan and the commitment equal; a verifier that
        // trusts no witness with it checks again.
        let plan_says = (
            p.previous,
            p.iterations,
            p.margin_centi,
            p.squarings_per_second,
            p.opened_ms,
        );
        let commitment_says = (
            c.previous,
            c.iterations,
            c.margin_centi,
            c.squarings_per_second,
            c.opened_ms,
        );
        if plan_says != commitment_says {
            return Err("the logged commitment differs from its logged plan".into());
        }
        Ok(())
    }
}

/// The default S of RSA groups: the FPGA class of §10, about 110 ns a 2048-bit squaring.
pub const MAX_RATE_RSA: u64 = 9_000_000;
/// The default S of class groups: about 1.4 times Chia's fastest reported timelord.
pub const MAX_RATE_CLASS_GROUP: u64 = 1_000_000;
/// The default δ of a verifier (and of `vrs witness`).
pub const DELTA_MS: u64 = 2_000;

/// The default S for a group id (`classgroup-…`, else an RSA modulus).
pub fn default_max_rate(group: &str) -> u64 {
    if group.starts_with("classgroup") {
        MAX_RATE_CLASS_GROUP
    } else {
        MAX_RATE_RSA
    }
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
    /// ((witness key name, key ID), cosigned second).
    pub cosignatures: Vec<((String, u32), u64)>,
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
    /// The output of epoch p(e); None for p = 0.
    pub previous_output: Option<OutputEntry>,
    /// The policy names of the witnesses that cosigned both in time.
    pub in_time: Vec<String>,
    pub detail: String,
}

/// One entry proven in one or more checkpoints (each witness may have cosigned a different
/// size), all of the same index and bytes, with each witness's earliest cosigned second.
#[derive(Debug)]
pub struct Proven {
    pub entry: LogEntry,
    pub index: u64,
    /// ((witness key name, key ID), earliest cosigned second).
    pub earliest: std::collections::BTreeMap<(String, u32), u64>,
}

pub fn prove_all(what: &str, logged: &[LoggedEntry], policy: &Policy) -> Result<Proven, String> {
    let first = logged
        .first()
        .ok_or_else(|| format!("no cosigned checkpoint holds the {what}"))?;
    let mut earliest = std::collections::BTreeMap::new();
    let mut entry = None;
    for l in logged {
        if l.index != first.index || l.entry != first.entry {
            return Err(format!(
                "the {what}'s checkpoints name different entries ({} and {})",
                first.index, l.index
            ));
        }
        let p = prove(l, policy).map_err(|e| format!("the {what}: {e}"))?;
        for (name, t) in p.cosignatures {
            let slot = earliest.entry(name).or_insert(t);
            *slot = (*slot).min(t);
        }
        entry = Some(p.entry);
    }
    Ok(Proven {
        entry: entry.ok_or("no entry")?,
        index: first.index,
        earliest,
    })
}

/// The operator's declaration, the log's entry 0, in checkpoints that a quorum of the policy's
/// witnesses cosigned (at any time: it is not timed, but a witness cosigns one tree of each
/// size, so every client of the quorum sees this one): what a verifier takes the operator's
/// anchor chain and address from (docs/PROTOCOL.md §16, "The sender").
pub fn operator_of(logged: &[LoggedEntry], policy: &Policy) -> Result<OperatorEntry, String> {
    let o = prove_all("operator declaration", logged, policy)?;
    let LogEntry::Operator(entry) = o.entry else {
        return Err(format!(
            "entry {} is a {}, not the operator declaration",
            o.index,
            o.entry.kind()
        ));
    };
    if o.index != 0 {
        return Err(format!(
            "the operator declaration is entry {}, not the log's first",
            o.index
        ));
    }
    let cosigned: BTreeSet<String> = policy
        .witnesses
        .iter()
        .filter(|w| o.earliest.contains_key(&(w.key.name.clone(), w.key.id)))
        .map(|w| w.name.clone())
        .collect();
    if !policy.satisfied_by(&cosigned) {
        return Err(format!(
            "the operator declaration is cosigned by [{}], short of the quorum {}",
            cosigned.into_iter().collect::<Vec<_>>().join(", "),
            policy.describe()
        ));
    }
    Ok(entry)
}

/// The `witnessed` step over an epoch's plan and commitment and p's output, each given with
/// every checkpoint the operator holds cosigned for it (a witness's time is its earliest).
pub fn check(
    plan: &[LoggedEntry],
    commitment: &[LoggedEntry],
    previous_output: &[LoggedEntry],
    floor: &WitnessFloor,
) -> Result<Witnessed, String> {
    let p = prove_all("plan", plan, &floor.policy)?;
    let c = prove_all("commitment", commitment, &floor.policy)?;
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
    // y_p is fixed when p's output is logged: for p ≥ 1 that entry is one more input of x_e
    // to time, so that no client is shown a y_p chosen after the commitment.
    let o = match plan.previous {
        0 if previous_output.is_empty() => None,
        0 => {
            return Err(format!(
                "epoch {} takes the genesis output y_0: no output entry belongs to it",
                plan.epoch
            ))
        }
        prev => {
            let o = prove_all(
                &format!("output of epoch {prev}"),
                previous_output,
                &floor.policy,
            )?;
            let LogEntry::Output(out) = o.entry else {
                return Err(format!(
                    "entry {} is a {}, not an output",
                    o.index,
                    o.entry.kind()
                ));
            };
            if out.epoch != prev {
                return Err(format!(
                    "the output logged is epoch {}'s; epoch {} takes that of epoch {prev}",
                    out.epoch, plan.epoch
                ));
            }
            Some((out, o))
        }
    };
    let delta = floor.delta_ms;
    let mut in_time = Vec::new();
    let mut late = Vec::new();
    for w in &floor.policy.witnesses {
        let key = (w.key.name.clone(), w.key.id);
        let (Some(&tp), Some(&tc)) = (p.earliest.get(&key), c.earliest.get(&key)) else {
            continue;
        };
        let to = match &o {
            None => tc,
            Some((_, proven)) => match proven.earliest.get(&key) {
                Some(&to) => to,
                None => continue,
            },
        };
        // Bets count from the stamped opening, which may precede the plan's cosignature by δ;
        // the last input was fixed before the end of its cosigned second.
        let last = tc.max(to);
        let span_ms = (u128::from(last) + 1) * 1000 + u128::from(delta);
        let span_ms = span_ms.saturating_sub(u128::from(plan.opened_ms));
        let ok_plan = u128::from(tp) * 1000 <= u128::from(plan.opened_ms) + u128::from(delta);
        let ok_close = u128::from(tc) * 1000 <= u128::from(plan.deadline_ms) + u128::from(delta);
        let ok_window =
            tc >= tp && span_ms * u128::from(floor.max_rate) <= u128::from(plan.iterations) * 1000;
        if ok_plan && ok_close && ok_window {
            in_time.push(w.name.clone());
        } else {
            let output = match &o {
                Some((out, _)) => format!(", output of epoch {} at {to} s", out.epoch),
                None => String::new(),
            };
            late.push(format!(
                "{}: plan at {tp} s{}, commitment at {tc} s{}{output}, {span_ms} ms after the \
                 opening{}",
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
    let entries = match &o {
        Some((out, proven)) => format!(
            "plan (entry {}), commitment (entry {}) and output of epoch {} (entry {})",
            p.index, c.index, out.epoch, proven.index
        ),
        None => format!(
            "plan (entry {}) and commitment (entry {})",
            p.index, c.index
        ),
    };
    Ok(Witnessed {
        detail: format!(
            "epoch {}: {entries} cosigned in time by {} (quorum {}; S = {} squarings/s, δ = {} \
             ms)",
            plan.epoch,
            in_time.join(", "),
            floor.policy.describe(),
            floor.max_rate,
            delta
        ),
        plan,
        commitment,
        previous_output: o.map(|(out, _)| out),
        in_time,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::entry::{output_hash, OperatorEntry, VoidEntry};
    use super::super::keep_vector;
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
        let mut w = World {
            log,
            witnesses,
            tree: LogTree::new(),
            policy: Policy::parse("quorum none\n").unwrap(),
        };
        w.policy = Policy::parse(&policy_text(&w, k)).unwrap();
        w
    }

    fn policy_text(w: &World, k: usize) -> String {
        let mut text = format!("log {}\n", w.log.vkey());
        for (i, c) in w.witnesses.iter().enumerate() {
            text += &format!("witness W{i} {}\n", c.vkey());
        }
        text + &format!("group all3 {k} W0 W1 W2\nquorum all3\n")
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

    impl World {
        /// Entry `index` under the current tree's checkpoint, cosigned by `who` at second `t`.
        fn logged_at(&self, index: u64, t: u64, who: &[usize]) -> LoggedEntry {
            let size = self.tree.size();
            let note = self.log.sign(size, self.tree.root()).unwrap();
            let text_end = note.windows(2).position(|w| w == b"\n\n").unwrap() + 1;
            let mut cp = note.clone();
            for &i in who {
                cp.extend(self.witnesses[i].cosign(&note[..text_end], t).unwrap());
            }
            LoggedEntry {
                index,
                entry: hex::encode(self.tree.entry(index).unwrap()),
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
        plan_of(1, 0)
    }

    fn plan_of(epoch: u64, previous: u64) -> LogEntry {
        LogEntry::Plan(PlanEntry {
            epoch,
            previous,
            iterations: 45_000_000,
            margin_centi: 150,
            squarings_per_second: 1_000_000,
            opened_ms: T0,
            deadline_ms: T0 + 5_000,
        })
    }

    fn commitment(closed: u64) -> LogEntry {
        commitment_of(1, 0, closed)
    }

    /// The output entry of `epoch`, whose y is a byte string of its number.
    fn output(epoch: u64) -> LogEntry {
        LogEntry::Output(OutputEntry::of(epoch, &epoch.to_be_bytes()))
    }

    fn commitment_of(epoch: u64, previous: u64, closed: u64) -> LogEntry {
        LogEntry::Commitment(CommitmentEntry {
            epoch,
            previous,
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

    /// The shared vector (docs/test-vectors/witnessed.json) that the Python and TypeScript
    /// verifiers check themselves against: this test fails when the file differs from what the
    /// Rust step computes (`VRS_WRITE_VECTORS=1` rewrites it).
    #[test]
    fn the_shared_vector_holds() {
        let mut cases = Vec::new();
        let mut case = |name: &str,
                        plan: Vec<LoggedEntry>,
                        com: Vec<LoggedEntry>,
                        out: Vec<LoggedEntry>,
                        w: &World| {
            let verdict = check(&plan, &com, &out, &floor(w));
            cases.push(serde_json::json!({
                "name": name,
                "plan": plan,
                "commitment": com,
                "previous_output": out,
                "passes": verdict.is_ok(),
                "detail": verdict.map_or_else(|e| e, |ok| ok.detail),
            }));
        };
        let t = T0 / 1000;
        // W1 cosigned a later size: its earliest time on the commitment is its own.
        let mut w = world(2);
        let p = w.add(&plan(), t, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 3_000), t + 3, &[0, 2]);
        let c1 = w.add(
            &LogEntry::Void(VoidEntry {
                epoch: 9,
                stamped_ms: T0,
            }),
            t + 4,
            &[1],
        );
        let c_again = LoggedEntry {
            proof: w
                .tree
                .inclusion_proof(c.index, c1.index + 1)
                .unwrap()
                .iter()
                .map(|h| BASE64_STANDARD.encode(h.0))
                .collect(),
            checkpoint: c1.checkpoint.clone(),
            ..c.clone()
        };
        case(
            "in time, quorum 2 of 3",
            vec![p.clone()],
            vec![c.clone(), c_again],
            vec![],
            &w,
        );
        let mut wrong = c.clone();
        wrong.entry.replace_range(60..62, "ee");
        case(
            "an altered commitment",
            vec![p.clone()],
            vec![wrong],
            vec![],
            &w,
        );
        let mut forged = c.clone();
        let sig_at = forged.checkpoint.rfind(' ').unwrap() + 10;
        let flipped = if &forged.checkpoint[sig_at..=sig_at] == "A" {
            "B"
        } else {
            "A"
        };
        forged.checkpoint.replace_range(sig_at..=sig_at, flipped);
        case(
            "a policy witness's cosignature does not verify",
            vec![p.clone()],
            vec![forged],
            vec![],
            &w,
        );
        case(
            "no checkpoint for the commitment",
            vec![p.clone()],
            vec![],
            vec![],
            &w,
        );
        case(
            "the commitment given as the plan",
            vec![c.clone()],
            vec![p.clone()],
            vec![],
            &w,
        );

        let mut w = world(2);
        let p = w.add(&plan(), t, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 4_900), t + 5, &[0, 1, 2]);
        case(
            "withheld: 5 s apart, T_e / S = 5 s",
            vec![p],
            vec![c],
            vec![],
            &w,
        );

        let mut w = world(2);
        let p = w.add(&plan(), t, &[0, 1]);
        let c = w.add(&commitment(T0 + 1_000), t + 1, &[0]);
        case(
            "one witness of a quorum of two",
            vec![p],
            vec![c],
            vec![],
            &w,
        );

        let mut w = world(2);
        let p = w.add(&plan(), t + 2, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 3_000), t + 3, &[0, 1, 2]);
        case(
            "the plan cosigned 2 s after its opening (δ = 1 s)",
            vec![p],
            vec![c],
            vec![],
            &w,
        );

        let mut w = world(2);
        let stranger = Cosigner::new("w1", SigningKey::from_bytes(&[99; 32])).unwrap();
        w.witnesses[1] = stranger;
        let p = w.add(&plan(), t, &[0, 1]);
        let c = w.add(&commitment(T0 + 1_000), t + 1, &[0, 1]);
        case(
            "a stranger under a policy witness's name",
            vec![p],
            vec![c],
            vec![],
            &w,
        );

        // Epoch 2 takes epoch 1's output: its entry is timed with the commitment.
        let mut w = world(2);
        let p = w.add(&plan_of(2, 1), t, &[0, 1, 2]);
        let c = w.add(&commitment_of(2, 1, T0 + 3_000), t + 3, &[0, 1, 2]);
        let o = w.add(&output(1), t + 3, &[0, 1, 2]);
        case(
            "the previous output logged with the commitment",
            vec![p.clone()],
            vec![c.clone()],
            vec![o.clone()],
            &w,
        );
        case(
            "no checkpoint for the previous output",
            vec![p.clone()],
            vec![c.clone()],
            vec![],
            &w,
        );
        case(
            "the commitment given as the previous output",
            vec![p.clone()],
            vec![c.clone()],
            vec![c.clone()],
            &w,
        );
        let late = w.add(&output(2), t + 5, &[0, 1, 2]);
        case(
            "another epoch's output",
            vec![p.clone()],
            vec![c.clone()],
            vec![late],
            &w,
        );

        let mut w = world(2);
        let p = w.add(&plan_of(2, 1), t, &[0, 1, 2]);
        let c = w.add(&commitment_of(2, 1, T0 + 3_000), t + 3, &[0, 1, 2]);
        let o = w.add(&output(1), t + 5, &[0, 1, 2]);
        case(
            "the previous output fixed 5 s after the opening, T_e / S = 5 s",
            vec![p],
            vec![c],
            vec![o],
            &w,
        );

        // Rule 2 in full: each of these cases also gives the proof's record, which a verifier
        // compares with the logged entries (the epoch, the commitment's fields, the plan's
        // deadline and SHA-256 of previous_output).
        let mut w = world(2);
        let p = w.add(&plan_of(2, 1), t, &[0, 1, 2]);
        let c = w.add(&commitment_of(2, 1, T0 + 3_000), t + 3, &[0, 1, 2]);
        let o = w.add(&output(1), t + 3, &[0, 1, 2]);
        let (LogEntry::Plan(pe), LogEntry::Commitment(ce)) =
            (plan_of(2, 1), commitment_of(2, 1, T0 + 3_000))
        else {
            unreachable!()
        };
        let proof = |ce: &CommitmentEntry, y: &[u8]| {
            serde_json::json!({
                "vdfEpoch": ce.epoch,
                "iterations": ce.iterations,
                "bets_root": hex::encode(ce.bets_root),
                "bet_count": ce.bet_count,
                "previous_output": hex::encode(y),
                "timing": {
                    "version": 2,
                    "previous_epoch": ce.previous,
                    "nonce": hex::encode(ce.nonce),
                    "security_margin": f64::from(ce.margin_centi) / 100.0,
                    "squarings_per_second": ce.squarings_per_second,
                    "opened_at_ms": ce.opened_ms,
                    "closed_at_ms": ce.closed_ms,
                    "deadline_ms": pe.deadline_ms,
                },
            })
        };
        let y1 = 1u64.to_be_bytes();
        let mut other_nonce = ce;
        other_nonce.nonce = [9; 32];
        for (name, shown, y) in [
            ("the record shown is the logged one", ce, &y1[..]),
            (
                "a previous output other than the logged one",
                ce,
                &b"y_1'"[..],
            ),
            ("a nonce other than the logged one", other_nonce, &y1[..]),
        ] {
            let verdict = check(
                std::slice::from_ref(&p),
                std::slice::from_ref(&c),
                std::slice::from_ref(&o),
                &floor(&w),
            )
            .and_then(|ok| {
                ok.matches(&ShownEpoch {
                    commitment: shown,
                    deadline_ms: pe.deadline_ms,
                    previous_output_hash: output_hash(y),
                })
                .map(|()| ok.detail)
            });
            cases.push(serde_json::json!({
                "name": name,
                "plan": [p],
                "commitment": [c],
                "previous_output": [o],
                "proof": proof(&shown, y),
                "passes": verdict.is_ok(),
                "detail": verdict.unwrap_or_else(|e| e),
            }));
        }

        let w = world(2);
        let doc = serde_json::json!({
            "about": "docs/PROTOCOL.md §21, the witnessed step: each case gives an epoch's plan, \
                      commitment and previous output (p's output entry; empty for p = 0) as \
                      LoggedEntry lists, and some the proof's record the entries must equal \
                      (`proof`, whose `log` is the three lists); a verifier with this policy, S \
                      and δ must pass exactly the cases marked passes (detail: the Rust step's \
                      words)",
            "policy": policy_text(&w, 2),
            "max_rate": 9_000_000,
            "delta_ms": 1_000,
            "cases": cases,
        });
        keep_vector("witnessed.json", &doc);
    }

    /// docs/test-vectors/anchor-binding.json: the calldata an anchor batch must carry
    /// (§16, "Binding"), from its `anchor.log`, with and without the policy; checked by the
    /// Python and TypeScript verifiers too (`VRS_WRITE_VECTORS=1` rewrites it).
    #[test]
    fn the_shared_anchor_vector_holds() {
        use super::super::anchored::{expected_calldata, AnchorLog};
        use super::super::entry::AnchorEntry;
        use vrs_engine::anchor::Calldata;
        let t = T0 / 1000;
        let mut w = world(2);
        w.add(&plan(), t, &[]);
        let claim = AnchorEntry {
            batch: 3,
            first_epoch: 25,
            last_epoch: 36,
            pool_from: 4,
            pool_to: 6,
            notary_from: 1,
            notary_to: 2,
            root: [0xab; 32],
        };
        let bound = w.add(&LogEntry::Anchor(claim), t, &[]);
        w.add(&commitment(T0 + 3_000), t + 3, &[]);
        let both = w.logged_at(bound.index, t + 3, &[0, 2]);
        let one = w.logged_at(bound.index, t + 3, &[1]);
        let honest = AnchorLog {
            bound: bound.clone(),
            cosigned: vec![both.clone()],
        };
        // A second root for batch 3 in a history of the operator's own (same key), which the
        // witnesses never cosigned.
        let second = AnchorEntry {
            root: [0xcd; 32],
            ..claim
        };
        let mut fork = world(2);
        fork.add(&plan(), t, &[]);
        let forged = fork.add(&LogEntry::Anchor(second), t, &[]);
        let other_entry = w.add(&output(1), t + 4, &[]);
        let mut other_key = bound.clone();
        other_key.checkpoint = {
            let other = LogSigner::new("vrs.test/log", SigningKey::from_bytes(&[2; 32])).unwrap();
            let size = bound.index + 1;
            let note = other.sign(size, w.tree.root_at(size).unwrap()).unwrap();
            String::from_utf8(note).unwrap()
        };
        let not_last = w.logged_at(bound.index, t + 4, &[]);
        let with = |bound: &LoggedEntry, cosigned: &[&LoggedEntry]| {
            Some(AnchorLog {
                bound: bound.clone(),
                cosigned: cosigned.iter().map(|c| (*c).clone()).collect(),
            })
        };
        // (name, the anchor the proof claims, the calldata version it shows, anchor.log, with
        // the policy)
        type Case<'a> = (&'a str, AnchorEntry, u8, Option<AnchorLog>, bool);
        let cases: Vec<Case> = vec![
            (
                "bound, and cosigned by a quorum",
                claim,
                2,
                Some(honest.clone()),
                true,
            ),
            (
                "the same, without a policy",
                claim,
                2,
                Some(honest.clone()),
                false,
            ),
            (
                "version-1 calldata of a batch the log bound later, cosigned",
                claim,
                1,
                Some(honest.clone()),
                true,
            ),
            (
                "cosigned by one witness, short of the quorum",
                claim,
                2,
                with(&bound, &[&one]),
                true,
            ),
            (
                "another batch's number",
                AnchorEntry { batch: 4, ..claim },
                2,
                Some(honest.clone()),
                true,
            ),
            (
                "the same root claimed over other pool batches",
                AnchorEntry {
                    pool_from: 5,
                    ..claim
                },
                2,
                Some(honest.clone()),
                true,
            ),
            (
                "a second root for the batch, from a history no witness cosigned",
                second,
                2,
                with(&forged, &[]),
                true,
            ),
            (
                "the same second root, without a policy",
                second,
                2,
                with(&forged, &[]),
                false,
            ),
            (
                "a bound log that does not end with the entry",
                claim,
                2,
                with(&not_last, &[&both]),
                true,
            ),
            (
                "not an anchor entry",
                claim,
                2,
                with(&other_entry, &[&both]),
                false,
            ),
            (
                "the bound checkpoint signed by another key",
                claim,
                2,
                with(&other_key, &[&both]),
                true,
            ),
            (
                "version 1 (no anchor.log), under a policy",
                claim,
                1,
                None,
                true,
            ),
            (
                "version 1 (no anchor.log), without a policy",
                claim,
                1,
                None,
                false,
            ),
        ];
        let cases: Vec<serde_json::Value> = cases
            .into_iter()
            .map(|(name, c, version, log, with_policy)| {
                let policy = with_policy.then_some(&w.policy);
                let shown = (version == 1).then_some(Calldata::V1 { root: c.root });
                let verdict = expected_calldata(&c, shown.as_ref(), log.as_ref(), policy);
                serde_json::json!({
                    "name": name,
                    "batch": c.batch,
                    "epochs": {"first": c.first_epoch, "last": c.last_epoch},
                    "pool_batches": {"from": c.pool_from, "to": c.pool_to},
                    "notary_batches": {"from": c.notary_from, "to": c.notary_to},
                    "root": hex::encode(c.root),
                    "shown_version": version,
                    "log": log,
                    "with_policy": with_policy,
                    "passes": verdict.is_ok(),
                    "calldata": verdict.as_ref().ok().map(|(c, _)| format!("0x{}", hex::encode(c.bytes()))),
                    "detail": verdict.map_or_else(|e| e, |(_, d)| d),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "about": "docs/PROTOCOL.md §16, Binding: each case gives the anchor batch a proof \
                      claims (batch, epochs, pool_batches, notary_batches and root, as the \
                      proof's anchor members), the version of the calldata it shows, and its \
                      anchor.log (null: none); a verifier applying the policy where \
                      with_policy is true must pass exactly the cases marked passes, computing \
                      calldata (detail: the Rust verifier's words)",
            "policy": policy_text(&w, 2),
            "cases": cases,
        });
        keep_vector("anchor-binding.json", &doc);

        // `quorum none` requires no cosignature: an entry that no witness cosigned passes.
        let none = policy_text(&w, 2).replace("quorum all3", "quorum none");
        let none = Policy::parse(&none).unwrap();
        let uncosigned = with(&bound, &[]);
        let (calldata, detail) =
            expected_calldata(&claim, None, uncosigned.as_ref(), Some(&none)).unwrap();
        assert!(detail.ends_with("cosigned by [])"), "{detail}");
        assert_eq!(
            calldata,
            expected_calldata(&claim, None, Some(&honest), None)
                .unwrap()
                .0
        );
    }

    #[test]
    fn the_record_judged_is_the_logged_one() {
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 3_000), T0 / 1000 + 3, &[0, 1, 2]);
        let ok = check(&[p], &[c], &[], &floor(&w)).unwrap();
        let shown = ShownEpoch {
            commitment: ok.commitment,
            deadline_ms: ok.plan.deadline_ms,
            previous_output_hash: [0; 32],
        };
        ok.matches(&shown).unwrap();
        // A second history served to one client: another nonce, another close.
        let mut fork = shown;
        fork.commitment.nonce = [7; 32];
        assert!(ok.matches(&fork).unwrap_err().contains("nonce"));
        let mut backdated = shown;
        backdated.commitment.closed_ms -= 2_000;
        assert!(ok.matches(&backdated).unwrap_err().contains("closed_at_ms"));
    }

    #[test]
    fn the_previous_output_shown_is_the_logged_one() {
        let mut w = world(2);
        let p = w.add(&plan_of(2, 1), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment_of(2, 1, T0 + 3_000), T0 / 1000 + 3, &[0, 1, 2]);
        let o = w.add(&output(1), T0 / 1000 + 3, &[0, 1, 2]);
        let ok = check(&[p], &[c], &[o], &floor(&w)).unwrap();
        let mut shown = ShownEpoch {
            commitment: ok.commitment,
            deadline_ms: ok.plan.deadline_ms,
            previous_output_hash: output_hash(&1u64.to_be_bytes()),
        };
        ok.matches(&shown).unwrap();
        // y_p′ served to one client, with every other field as logged.
        shown.previous_output_hash = output_hash(b"y_p'");
        let e = ok.matches(&shown).unwrap_err();
        assert!(e.contains("previous_output"), "{e}");
    }

    #[test]
    fn the_operator_declaration_is_entry_0_cosigned_by_a_quorum() {
        let declaration = LogEntry::Operator(OperatorEntry {
            stamped_ms: T0,
            group: "test512".into(),
            acceptance_key: [5; 32],
            anchor_chain_id: 8453,
            anchor_address: [0xaa; 20],
        });
        let mut w = world(2);
        let one = w.add(&declaration, T0 / 1000, &[0]);
        let e = operator_of(std::slice::from_ref(&one), &w.policy).unwrap_err();
        assert!(e.contains("short of the quorum"), "{e}");
        let mut w = world(2);
        let two = w.add(&declaration, T0 / 1000, &[0, 2]);
        let op = operator_of(&[two], &w.policy).unwrap();
        assert_eq!((op.anchor_chain_id, op.anchor_address), (8453, [0xaa; 20]));
        // A declaration that is not the log's first entry is not the operator's.
        let later = w.add(&declaration, T0 / 1000, &[0, 1, 2]);
        let e = operator_of(&[later], &w.policy).unwrap_err();
        assert!(e.contains("not the log's first"), "{e}");
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        assert!(operator_of(&[p], &w.policy).is_err());
    }

    #[test]
    fn an_epoch_cosigned_in_time_by_a_quorum_passes() {
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 3_000), T0 / 1000 + 3, &[0, 2]);
        let ok = check(
            std::slice::from_ref(&p),
            std::slice::from_ref(&c),
            &[],
            &floor(&w),
        )
        .unwrap();
        assert_eq!(ok.in_time, vec!["W0", "W2"]);
    }

    #[test]
    fn a_withheld_commitment_fails() {
        // 45e6 / 9e6 = 5 s: a commitment cosigned 5 s after the plan is past T_e / S.
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1, 2]);
        let c = w.add(&commitment(T0 + 4_900), T0 / 1000 + 5, &[0, 1, 2]);
        let e = check(
            std::slice::from_ref(&p),
            std::slice::from_ref(&c),
            &[],
            &floor(&w),
        )
        .unwrap_err();
        assert!(e.contains("short of the quorum"), "{e}");
        assert!(e.contains("T_e / S"), "{e}");
    }

    #[test]
    fn too_few_witnesses_fail_and_strangers_do_not_count() {
        let mut w = world(2);
        let p = w.add(&plan(), T0 / 1000, &[0, 1]);
        let c = w.add(&commitment(T0 + 1_000), T0 / 1000 + 1, &[0]);
        assert!(check(
            std::slice::from_ref(&p),
            std::slice::from_ref(&c),
            &[],
            &floor(&w)
        )
        .is_err());
        // A policy that names other witnesses: nothing counts.
        let stranger = world_of(1, 50);
        let mut f = floor(&stranger);
        f.policy.logs = w.policy.logs.clone();
        assert!(
            check(std::slice::from_ref(&p), std::slice::from_ref(&c), &[], &f)
                .unwrap_err()
                .contains("short of the quorum")
        );
    }

    #[test]
    fn an_altered_entry_or_proof_fails() {
        let mut w = world(1);
        let p = w.add(&plan(), T0 / 1000, &[0]);
        let c = w.add(&commitment(T0 + 1_000), T0 / 1000 + 1, &[0]);
        let mut bad = c.clone();
        bad.entry.replace_range(40..42, "ff");
        assert!(check(
            std::slice::from_ref(&p),
            std::slice::from_ref(&bad),
            &[],
            &floor(&w)
        )
        .is_err());
        let mut bad = c.clone();
        bad.index = 0;
        assert!(check(
            std::slice::from_ref(&p),
            std::slice::from_ref(&bad),
            &[],
            &floor(&w)
        )
        .is_err());
        assert!(check(
            std::slice::from_ref(&c),
            std::slice::from_ref(&p),
            &[],
            &floor(&w)
        )
        .is_err());
    }
}
