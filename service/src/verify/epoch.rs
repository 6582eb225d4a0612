//! Verification of an epoch game (docs/PROTOCOL.md §13): its leaf, its inclusion in the
//! epoch's bets tree, the epoch chain and input, the Wesolowski proof, the timing rule, and the
//! outcome recomputed from y.

use super::outcome::{game_result, interface_members, outcome_checks, outcome_steps};
use std::sync::Arc;
use vrs_engine::classgroup::epoch::GROUP_PREFIX;
use vrs_engine::merkle;
use vrs_protocol::commit::bet_leaf;
use vrs_protocol::epoch_group::{veo_class, Group};
use vrs_protocol::outcome::Outcome;
use vrs_protocol::report::{check, Verification};
use vrs_protocol::timing::{timing_step, Floor, PriorEpoch, TimingFacts};
use vrs_protocol::verification::{
    BetDoc, Checkpoint, EpochBetCommitted, EpochProof, EpochPublished, Proof, ReplayStep, TimingDoc,
};
use vrs_store::{EpochRecord, GameRecord, Store};

/// The records an epoch's `timing` step reads besides its own: its predecessor p(e) (none for
/// p = 0) and epoch e − 1 (none for e = 1).
#[derive(Debug, Default)]
pub struct Neighbours {
    pub predecessor: Option<EpochRecord>,
    pub prior: Option<EpochRecord>,
}

impl Neighbours {
    pub async fn load(store: &dyn Store, epoch: &EpochRecord) -> anyhow::Result<Self> {
        let get = |n: u64| async move {
            match n {
                0 => Ok(None),
                n => store.epoch(n).await,
            }
        };
        Ok(Self {
            predecessor: get(epoch.previous()).await?,
            prior: get(epoch.number.saturating_sub(1)).await?,
        })
    }
}

/// [`timing_step`] over stored records.
pub fn timing_check(epoch: &EpochRecord, n: &Neighbours) -> Result<String, String> {
    if epoch.plan.is_some() && epoch.closed_at_ms.is_none() {
        return Err(format!("epoch {} is not closed", epoch.number));
    }
    timing_step(&TimingFacts {
        epoch: epoch.number,
        timing: epoch.timing(),
        ran_iterations: epoch.input.as_ref().map(|i| i.iterations),
        predecessor: n.predecessor.as_ref().and_then(|p| {
            Some(vrs_engine::timing::Predecessor {
                closed_at_ms: p.closed_at_ms?.max(0) as u64,
                iterations: p.iterations()?,
            })
        }),
        prior: n.prior.as_ref().map(|p| PriorEpoch {
            version: p.version(),
            closed_at_ms: p.closed_at_ms,
            resolved_at_ms: p.output.as_ref().map(|o| o.resolved_at_ms),
        }),
        // The service's own report judges its own store, which may hold version-1 epochs of
        // an older binary: it shows them as version 1, saying what that did not guarantee.
        // Independent verifiers refuse them unless told otherwise (docs/PROTOCOL.md §10).
        floor: Floor {
            allow_version_1: true,
            ..Floor::default()
        },
    })
}

/// The `timing` object of a verification's proof (docs/PROTOCOL.md §13).
fn timing_doc(epoch: &EpochRecord, n: &Neighbours) -> TimingDoc {
    let plan = epoch.plan;
    let pred = n.predecessor.as_ref().filter(|_| epoch.previous() > 0);
    TimingDoc {
        version: epoch.version(),
        previous_epoch: epoch.previous(),
        nonce: epoch.nonce.map(hex::encode),
        opened_at_ms: epoch.opened_at_ms,
        closed_at_ms: epoch.closed_at_ms,
        security_margin: plan.map(|p| f64::from(p.margin_centi) / 100.0),
        squarings_per_second: plan.map(|p| p.squarings_per_second),
        deadline_ms: plan.map(|p| p.deadline_ms),
        previous_closed_at_ms: pred.and_then(|p| p.closed_at_ms),
        previous_iterations: pred.and_then(EpochRecord::iterations),
        prior_resolved_at_ms: n
            .prior
            .as_ref()
            .and_then(|p| p.output.as_ref())
            .map(|o| o.resolved_at_ms),
    }
}

/// An epoch's input and output values, empty (zero) where not stored.
struct Committed<'a> {
    x: &'a [u8],
    y: &'a [u8],
    t: u64,
    bets_root: merkle::Hash,
    prev_y: &'a [u8],
}

impl<'a> Committed<'a> {
    fn of(epoch: &'a EpochRecord) -> Self {
        let input = epoch.input.as_ref();
        Self {
            x: input.map_or(&[], |i| &i.x),
            y: epoch.output.as_ref().map_or(&[], |o| &o.y),
            t: input.map_or(0, |i| i.iterations),
            bets_root: input.map_or([0; 32], |i| i.bets_root),
            prev_y: input.map_or(&[], |i| &i.prev_y),
        }
    }
}

/// What every game of one epoch shares in its verification, computed once from the epoch's
/// record, y of its predecessor as stored (`chain_prev`, or the genesis output) and its bets
/// tree: the checks `bets_root`, `epoch_chain`, `epoch_input` and `vdf_proof`, and the seed
/// and discriminant the proof shows.
#[derive(Debug)]
pub struct EpochFacts {
    pub tree: Arc<merkle::Tree>,
    bets_root: Result<String, String>,
    chain: Result<String, String>,
    input: Result<String, String>,
    proof: Result<String, String>,
    seed_hex: String,
    /// D_e for a class group (None for RSA groups).
    discriminant: Option<Result<String, String>>,
}

impl EpochFacts {
    pub fn compute(
        group: &Group,
        epoch: &EpochRecord,
        chain_prev: &[u8],
        tree: Arc<merkle::Tree>,
    ) -> Self {
        let empty = Vec::new();
        let input = epoch.input.as_ref();
        let output = epoch.output.as_ref();
        let Committed {
            x: x_bytes,
            y: y_bytes,
            t,
            bets_root,
            prev_y,
        } = Committed::of(epoch);

        let count = input.map_or(0, |i| i.bet_count);
        let bets_root_check = if tree.root() != bets_root {
            Err("the epoch's leaves do not hash to its bets root".into())
        } else if count != tree.len() as u64 {
            Err(format!("bet count {count} but {} leaves", tree.len()))
        } else {
            Ok(format!("{} leaves hash to the bets root", tree.len()))
        };

        // The input continues the chain: previous output, then x_e from the formula.
        let source = match epoch.previous() {
            0 => "the genesis output y_0".to_owned(),
            p => format!("y of epoch {p}"),
        };
        let chain = if prev_y == chain_prev {
            Ok(format!("previous output is {source}"))
        } else {
            Err(format!("previous output differs from {source}"))
        };
        let seed =
            crate::epoch::epoch_input_of(group, epoch, prev_y, &bets_root, t).map(|(s, _)| s);
        // A class group's discriminant D_e follows from the seed (None for RSA groups).
        let discriminant = seed
            .as_ref()
            .ok()
            .and_then(|s| group.discriminant(s))
            .map(|d| d.map(|d| d.to_hex()).map_err(|e| format!("{e:#}")));
        let input_check = match &seed {
            Ok(seed) => {
                let fields = match epoch.version() {
                    1 => "e ‖ y_{e−1} ‖ bets_root ‖ T",
                    _ => "e ‖ p ‖ y_p ‖ bets_root ‖ nonce ‖ T ‖ opened ‖ closed ‖ margin ‖ rate",
                };
                let rule = match group {
                    Group::Rsa(_) => format!("x = hash_to_group(SHA-256(tag ‖ {fields}))"),
                    Group::Class { .. } => format!(
                        "x = the generator of D_e = create_discriminant(SHA-256(tag ‖ {fields}))"
                    ),
                };
                match &discriminant {
                    Some(Err(err)) => Err(err.clone()),
                    _ if group.epoch_x(seed) == x_bytes => Ok(rule),
                    _ => Err(format!(
                        "x does not follow from the epoch's committed fields ({fields})"
                    )),
                }
            }
            Err(err) => Err(format!("{err:#}")),
        };

        // The Wesolowski proof of y = x^(2^T).
        let proof = {
            let l = output.map_or(&empty, |o| &o.l);
            let pi = output.map_or(&empty, |o| &o.pi);
            match &seed {
                Ok(seed) => group.verify_proof(seed, x_bytes, y_bytes, t, l, pi),
                Err(err) => Err(format!("no seed: {err:#}")),
            }
        };
        Self {
            tree,
            bets_root: bets_root_check,
            chain,
            input: input_check,
            proof,
            seed_hex: seed.as_ref().map(hex::encode).unwrap_or_default(),
            discriminant,
        }
    }
}

/// A moved game's own epoch e (docs/PROTOCOL.md §21, "Moved games"): its leaf is in e's
/// tree, its outcome the destination's.
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub epoch: &'a EpochRecord,
    pub tree: &'a merkle::Tree,
}

/// Verifies `game` of `epoch` with the epoch's shared [`EpochFacts`] and `neighbours`, what
/// `timing` reads; for a moved game, `epoch` is the destination and `origin` the game's own.
pub fn verify(
    group: &Group,
    game: &GameRecord,
    epoch: &EpochRecord,
    facts: &EpochFacts,
    neighbours: &Neighbours,
    origin: Option<Origin<'_>>,
) -> Verification {
    let mut checks = Vec::new();
    let g = &game.new;
    let e = epoch.number;
    let empty = Vec::new();
    let input = epoch.input.as_ref();
    let output = epoch.output.as_ref();
    let Committed {
        x: x_bytes,
        y: y_bytes,
        t,
        bets_root,
        prev_y,
    } = Committed::of(epoch);

    // 1. The stored leaf is the encoding of the stored bet.
    check(&mut checks, "bet_leaf", {
        if bet_leaf(g) == g.leaf {
            Ok("leaf bytes encode this game's fields".into())
        } else {
            Err("leaf bytes do not encode this game's fields".into())
        }
    });

    // 2. The leaf is at its index in the epoch's bets tree, whose root the input committed (a
    //    moved game's: its own epoch's).
    let (tree, leaf_root) = match origin {
        None => (facts.tree.as_ref(), bets_root),
        Some(o) => (o.tree, Committed::of(o.epoch).bets_root),
    };
    // A position the store does not know (never the case for a resolved game) fails the check.
    let seq = game.seq.unwrap_or(u64::MAX);
    let index = usize::try_from(seq).unwrap_or(usize::MAX);
    let path = tree.path(index).unwrap_or_default();
    let leaf_hash = merkle::leaf_hash(&g.leaf);
    check(&mut checks, "merkle_inclusion", {
        let bets_root = leaf_root;
        if merkle::verify_inclusion(&leaf_hash, seq, tree.len() as u64, &path, &bets_root) {
            Ok(format!(
                "leaf {index} of {} is included under bets root {}",
                tree.len(),
                hex::encode(bets_root)
            ))
        } else {
            Err(format!(
                "leaf {index} of {} does not lead to bets root {}",
                tree.len(),
                hex::encode(bets_root)
            ))
        }
    });
    check(&mut checks, "bets_root", facts.bets_root.clone());

    // 3. The input continues the chain: previous output, then x_e from the formula.
    check(&mut checks, "epoch_chain", facts.chain.clone());
    check(&mut checks, "epoch_input", facts.input.clone());

    // 4. The Wesolowski proof of y = x^(2^T).
    check(&mut checks, "vdf_proof", facts.proof.clone());

    // 5. The epoch's games were fixed in time: before y_{e−1} existed, within the bound.
    check(&mut checks, "timing", timing_check(epoch, neighbours));

    // 6. rngValue, dice and payout recomputed from y.
    let (stored, derived) = outcome_checks(&mut checks, y_bytes, game);

    let seed_hex = &facts.seed_hex;
    let discriminant = &facts.discriminant;
    // The group's own description: N for an RSA group, D_e (chiavdf's string) for a class group.
    let (modulus_n, discriminant, discriminant_bits) = match (group, discriminant) {
        (Group::Rsa(m), _) => (Some(hex::encode(m.to_be_bytes())), None, None),
        (Group::Class { bits }, d) => (
            None,
            Some(d.as_ref().and_then(|d| d.as_ref().ok()).cloned()),
            Some(*bits),
        ),
    };
    let proof = EpochProof {
        veo_class: veo_class(&epoch.modulus),
        modulus: epoch.modulus.clone(),
        modulus_n,
        discriminant,
        discriminant_bits,
        iterations: t,
        x: hex::encode(x_bytes),
        y: hex::encode(y_bytes),
        pi: hex::encode(output.map_or(&empty, |o| &o.pi)),
        l: hex::encode(output.map_or(&empty, |o| &o.l)),
        epoch_seed: seed_hex.clone(),
        previous_output: hex::encode(prev_y),
        bets_root: hex::encode(bets_root),
        bet_count: input.map_or(0, |i| i.bet_count),
        leaf: hex::encode(&g.leaf),
        leaf_hash: hex::encode(leaf_hash),
        leaf_index: game.seq,
        audit_path: path.iter().map(hex::encode).collect(),
        checkpoints: output
            .map(|o| {
                o.checkpoints
                    .iter()
                    .map(|(i, v)| Checkpoint {
                        iteration: *i,
                        value: hex::encode(v),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        bet: BetDoc::from(g),
        timing: timing_doc(epoch, neighbours),
        bet_created_at_ms: g.created_at_ms,
        interface: interface_members(e, &stored.rng_value),
        acceptance: None,
        log: None,
        moved_from: origin.map(|o| o.epoch.number),
        anchoring: None,
    };
    let y = epoch.output.as_ref().map(|o| hex::encode(&o.y));
    let result = game_result(
        game,
        y,
        &stored,
        derived.as_ref().ok(),
        Proof::Epoch(Box::new(proof)),
    );
    let replay_steps = replay_steps(
        game,
        epoch,
        origin.map_or(epoch, |o| o.epoch),
        &leaf_hash,
        &path,
        seed_hex,
        &stored,
        derived.as_ref().ok(),
    );
    Verification::new(checks, result, replay_steps)
}

/// `own` is the game's epoch (for a moved game not `epoch`, whose output it takes).
#[allow(clippy::too_many_arguments)]
fn replay_steps(
    game: &GameRecord,
    epoch: &EpochRecord,
    own: &EpochRecord,
    leaf_hash: &merkle::Hash,
    path: &[merkle::Hash],
    seed_hex: &str,
    stored: &vrs_store::GameResolution,
    derived: Option<&Outcome>,
) -> Vec<ReplayStep> {
    let g = &game.new;
    let input = epoch.input.as_ref();
    let output = epoch.output.as_ref();
    let y_hex = output.map(|o| hex::encode(&o.y)).unwrap_or_default();
    let fields = match epoch.version() {
        1 => "epoch ‖ previous output ‖ bets root ‖ T",
        _ => "epoch ‖ p ‖ y_p ‖ bets root ‖ nonce ‖ T ‖ opened ‖ closed ‖ margin ‖ rate",
    };
    let description = if epoch.modulus.starts_with(GROUP_PREFIX) {
        format!(
            "seed = SHA-256(tag ‖ {fields}); D = create_discriminant(seed); x = the generator \
             of D; y = x^(2^T) in the class group of D with a Wesolowski proof (π, ℓ = B)"
        )
    } else {
        format!(
            "x = hash_to_group(SHA-256(tag ‖ {fields})); y = x^(2^T) with a Wesolowski proof \
             (π, ℓ)"
        )
    };
    let mut steps = vec![
        ReplayStep::EpochBetCommitted(Box::new(EpochBetCommitted {
            step: 1,
            action: "bet_committed".into(),
            description: "the game joined the open epoch; when the epoch closed, its leaf was \
                committed in the epoch's RFC 6962 bets tree"
                .into(),
            game_id: g.game_id.clone(),
            epoch: game.epoch,
            accepted_at: g.created_at_ms / 1000,
            leaf: hex::encode(&g.leaf),
            leaf_hash: hex::encode(leaf_hash),
            leaf_index: game.seq,
            bet_count: own.input.as_ref().map(|i| i.bet_count),
            audit_path: path.iter().map(hex::encode).collect(),
            bets_root: own.input.as_ref().map(|i| hex::encode(i.bets_root)),
            closed_at: own.closed_at_ms.map(|ms| ms / 1000),
        })),
        ReplayStep::EpochPublished(Box::new(EpochPublished {
            step: 2,
            action: "vdf_epoch_published".into(),
            description,
            epoch: epoch.number,
            version: epoch.version(),
            previous_epoch: epoch.previous(),
            modulus: epoch.modulus.clone(),
            iterations: input.map(|i| i.iterations),
            previous_output: input.map(|i| hex::encode(&i.prev_y)),
            bets_root: input.map(|i| hex::encode(i.bets_root)),
            epoch_seed: seed_hex.to_owned(),
            input: input.map(|i| hex::encode(&i.x)),
            output: y_hex.clone(),
            pi: output.map(|o| hex::encode(&o.pi)),
            l: output.map(|o| hex::encode(&o.l)),
            computation_ms: output.map(|o| o.computation_ms),
            published_at: output.map(|o| o.resolved_at_ms / 1000),
        })),
    ];
    steps.extend(outcome_steps(game, &y_hex, stored, derived));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use vrs_engine::epoch::Timing;
    use vrs_engine::timing::Predecessor;

    /// Epoch 5 taking y of epoch 4 (one lane); epoch 4 closed when 5 opened and its y was
    /// stored after 5 closed.
    fn facts() -> TimingFacts {
        TimingFacts {
            epoch: 5,
            timing: Some(Timing {
                previous: 4,
                iterations: 1_000_000,
                opened_at_ms: 9_400,
                closed_at_ms: 10_000,
                margin_centi: 200,
                squarings_per_second: 1_000_000,
            }),
            ran_iterations: Some(1_000_000),
            predecessor: Some(Predecessor {
                closed_at_ms: 9_000,
                iterations: 1_000_000,
            }),
            prior: Some(PriorEpoch {
                version: 2,
                closed_at_ms: Some(9_400),
                resolved_at_ms: Some(10_050),
            }),
            floor: Floor::default(),
        }
    }

    fn fails(f: TimingFacts, why: &str) {
        let err = timing_step(&f).expect_err(why);
        assert!(err.contains(why), "{err}");
    }

    #[test]
    fn the_rule_holds_and_each_part_of_it_fails_alone() {
        let ok = timing_step(&facts()).expect("an honest epoch");
        assert!(
            ok.starts_with("closed 50 ms before y of epoch 4 was stored"),
            "{ok}"
        );
        let with = |f: fn(&mut TimingFacts)| {
            let mut x = facts();
            f(&mut x);
            x
        };
        fails(
            with(|f| {
                f.prior = Some(PriorEpoch {
                    resolved_at_ms: Some(9_999),
                    ..f.prior.unwrap_or_default()
                })
            }),
            "after y of epoch 4 was stored",
        );
        fails(with(|f| f.prior = None), "epoch 4's record is missing");
        fails(
            with(|f| {
                f.prior = Some(PriorEpoch {
                    resolved_at_ms: None,
                    ..f.prior.unwrap_or_default()
                })
            }),
            "no stored output",
        );
        fails(
            with(|f| {
                f.prior = Some(PriorEpoch {
                    closed_at_ms: Some(9_401),
                    ..f.prior.unwrap_or_default()
                })
            }),
            "two epochs took games at once",
        );
        fails(with(|f| f.ran_iterations = Some(999_999)), "the VDF ran T");
        fails(
            with(|f| f.floor.margin_centi = 250),
            "below the 2.5 this check requires",
        );
        // An understated rate buys the operator time: the window is timed against R_e.
        fails(
            with(|f| f.floor.rate = 1_000_001),
            "declares R = 1000000 squarings/s, below the 1000001",
        );
        assert!(timing_step(&with(|f| f.floor.rate = 1_000_000)).is_ok());
        fails(
            with(|f| f.predecessor = None),
            "(the predecessor) is missing",
        );
    }

    #[test]
    fn version_1_passes_only_when_allowed_and_not_after_version_2_or_under_a_floor() {
        let refused = TimingFacts {
            timing: None,
            prior: Some(PriorEpoch {
                version: 1,
                ..PriorEpoch::default()
            }),
            ..facts()
        };
        fails(refused.clone(), "refused unless version 1 is allowed");
        let v1 = TimingFacts {
            floor: Floor {
                allow_version_1: true,
                ..Floor::default()
            },
            ..refused
        };
        assert!(timing_step(&v1)
            .expect("version 1")
            .starts_with("version 1: no timing commitment"));
        fails(
            TimingFacts {
                prior: Some(PriorEpoch {
                    version: 2,
                    ..PriorEpoch::default()
                }),
                ..v1.clone()
            },
            "a version-1 epoch after version-2 epoch 4",
        );
        fails(
            TimingFacts {
                floor: Floor {
                    margin_centi: 100,
                    ..v1.floor
                },
                ..v1.clone()
            },
            "makes no timing commitment, and a margin of 1 was required",
        );
        fails(
            TimingFacts {
                floor: Floor {
                    rate: 2_000_000,
                    ..v1.floor
                },
                ..v1
            },
            "and a rate of 2000000 squarings/s was required",
        );
    }
}
