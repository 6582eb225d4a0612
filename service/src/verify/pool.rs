//! Verification of a pool-served game (docs/PROTOCOL.md §14, "Verifying a pool-served game"):
//! every check recomputed from the stored entry, its batch, the batch before it and the anchor
//! epoch, on the data the response hands out.

use super::outcome::{game_result, interface_members, outcome_checks, outcome_steps};
use vrs_engine::group::Modulus;
use vrs_engine::merkle;
use vrs_engine::pool::{self, BatchLink};
use vrs_engine::vdf;
use vrs_protocol::commit::bet_leaf;
use vrs_protocol::epoch_group::veo_class;
use vrs_protocol::report::{check, Verification};
use vrs_protocol::verification::{
    BetDoc, PoolBetCommitted, PoolProof, PoolPublished, Proof, ReplayStep,
};
use vrs_store::{EpochRecord, GameRecord, PoolBatch, PoolEntry};

/// What a pool-served game is checked against, as stored.
#[derive(Debug)]
pub struct PoolEvidence {
    pub entry: PoolEntry,
    pub batch: PoolBatch,
    /// Batch b − 1 as stored (`None` for the first batch, or if missing).
    pub prev_batch: Option<PoolBatch>,
    /// The batch's anchor epoch as stored (`None` if missing).
    pub anchor: Option<EpochRecord>,
    /// Every entry of the batch, in index order (for the audit path).
    pub batch_entries: Vec<pool::Entry>,
}

pub fn verify_pool(m: &Modulus, game: &GameRecord, ev: &PoolEvidence) -> Verification {
    let mut checks = Vec::new();
    let g = &game.new;
    let e = &ev.entry.entry;
    let b = &ev.batch;
    let empty = Vec::new();
    let anchor_y = ev
        .anchor
        .as_ref()
        .and_then(|a| a.output.as_ref())
        .map_or(&empty, |o| &o.y);

    check(&mut checks, "bet_leaf", {
        if bet_leaf(g) == g.leaf {
            Ok("leaf bytes encode this game's fields".into())
        } else {
            Err("leaf bytes do not encode this game's fields".into())
        }
    });
    check(&mut checks, "pool_batch_chain", {
        let (expected_prev, expected_first) = match &ev.prev_batch {
            Some(p) => (p.root, p.end_index()),
            None => (pool::GENESIS_ROOT, 1),
        };
        if b.number > 1 && ev.prev_batch.is_none() {
            Err(format!("batch {} is missing", b.number - 1))
        } else if b.prev_root != expected_prev {
            Err(format!(
                "batch {} does not link to batch {}'s root",
                b.number,
                b.number - 1
            ))
        } else if b.first_index != expected_first {
            Err(format!(
                "batch {} starts at index {}, not {expected_first}",
                b.number, b.first_index
            ))
        } else if !(b.first_index..b.end_index()).contains(&e.index) {
            Err(format!("entry {} is outside batch {}", e.index, b.number))
        } else {
            Ok(format!(
                "batch {} follows root {} and holds entries {} to {} ({} entries from {})",
                b.number,
                hex::encode(b.prev_root),
                b.first_index,
                b.end_index() - 1,
                b.size,
                b.first_index
            ))
        }
    });
    check(&mut checks, "pool_anchor", {
        match &ev.anchor {
            Some(a) if a.output.is_some() => Ok(format!(
                "anchored to resolved epoch {} (its y is in the batch seed)",
                a.number
            )),
            _ => Err(format!("anchor epoch {} is not resolved", b.anchor_epoch)),
        }
    });
    let link = BatchLink {
        batch: b.number,
        prev_root: b.prev_root,
        anchor_epoch: b.anchor_epoch,
        anchor_y: anchor_y.clone(),
    };
    let batch_seed = pool::batch_seed(&link);
    check(&mut checks, "pool_batch_seed", {
        if batch_seed == b.seed {
            Ok("batch seed = H(b ‖ previous root ‖ anchor epoch ‖ anchor y)".into())
        } else {
            Err("the stored batch seed does not follow from its link".into())
        }
    });
    let entry_seed = pool::entry_seed(&batch_seed, e.index, &e.secret);
    check(&mut checks, "pool_entry_input", {
        if m.encode(&m.hash_to_group(&entry_seed)) == e.x {
            Ok("x = hash_to_group(H(batch seed ‖ index ‖ revealed secret))".into())
        } else {
            Err("x does not follow from the batch seed, index and secret".into())
        }
    });
    check(&mut checks, "vdf_proof", {
        match vdf::verify_encoded(m, &e.x, &e.y, e.iterations, &e.l, &e.pi) {
            Ok(()) => Ok(format!("π^ℓ · x^(2^T mod ℓ) = y for T = {}", e.iterations)),
            Err(err) => Err(err.to_string()),
        }
    });
    let hashes: Vec<merkle::Hash> = ev
        .batch_entries
        .iter()
        .map(|x| merkle::leaf_hash(&pool::entry_leaf(x)))
        .collect();
    let position = e.index.saturating_sub(b.first_index);
    let path = merkle::audit_path(&hashes, position as usize).unwrap_or_default();
    let leaf = pool::entry_leaf(e);
    let leaf_hash = merkle::leaf_hash(&leaf);
    check(&mut checks, "pool_inclusion", {
        if merkle::verify_inclusion(&leaf_hash, position, b.size, &path, &b.root) {
            Ok(format!(
                "entry {} is leaf {position} of {} under batch root {}",
                e.index,
                b.size,
                hex::encode(b.root)
            ))
        } else {
            Err(format!(
                "entry {} is not under batch root {}",
                e.index,
                hex::encode(b.root)
            ))
        }
    });
    check(&mut checks, "pool_committed", {
        if b.committed_at_ms <= g.created_at_ms {
            Ok(format!(
                "batch committed {} ms before the bet",
                g.created_at_ms - b.committed_at_ms
            ))
        } else {
            Err("the batch was committed after the bet".into())
        }
    });
    let expected_id = pool::game_id(e.index, &e.y);
    check(&mut checks, "pool_game_id", {
        if expected_id == g.game_id && ev.entry.game_id.as_deref() == Some(&g.game_id) {
            Ok("game id = H(index ‖ y), and the entry names this game".into())
        } else {
            Err(format!("the entry's game id is {expected_id}"))
        }
    });
    let (stored, derived) = outcome_checks(&mut checks, &e.y, game);

    let y_hex = hex::encode(&e.y);
    let audit_path: Vec<String> = path.iter().map(hex::encode).collect();
    let proof = PoolProof {
        pool_served: true,
        pool_index: e.index,
        pool_batch: b.number,
        veo_class: veo_class(m.id()),
        modulus: m.id().to_owned(),
        modulus_n: hex::encode(m.to_be_bytes()),
        iterations: e.iterations,
        x: hex::encode(&e.x),
        y: y_hex.clone(),
        pi: hex::encode(&e.pi),
        l: hex::encode(&e.l),
        secret: hex::encode(e.secret),
        entry_seed: hex::encode(entry_seed),
        batch_seed: hex::encode(b.seed),
        batch_root: hex::encode(b.root),
        batch_first_index: b.first_index,
        batch_size: b.size,
        previous_batch_root: hex::encode(b.prev_root),
        anchor_epoch: b.anchor_epoch,
        anchor_y: hex::encode(anchor_y),
        batch_committed_at_ms: b.committed_at_ms,
        bet_created_at_ms: g.created_at_ms,
        entry_leaf: hex::encode(&leaf),
        entry_leaf_hash: hex::encode(leaf_hash),
        leaf_index: position,
        audit_path: audit_path.clone(),
        leaf: hex::encode(&g.leaf),
        bet: BetDoc::from(g),
        interface: interface_members(b.anchor_epoch, &stored.rng_value),
        bet_epoch: None,
        acceptance: None,
        anchoring: None,
    };
    let mut result = game_result(
        game,
        Some(y_hex.clone()),
        &stored,
        derived.as_ref().ok(),
        Proof::Pool(Box::new(proof)),
    );
    result.pool_served = Some(true);
    result.pool_index = game.pool_index;
    let mut replay_steps = vec![
        ReplayStep::PoolBetCommitted(Box::new(PoolBetCommitted {
            step: 1,
            action: "bet_committed".into(),
            description: "the bet consumed the next pool entry, in index order; the entry was \
                committed under its batch's RFC 6962 root before the bet arrived"
                .into(),
            game_id: g.game_id.clone(),
            pool_index: e.index,
            accepted_at: g.created_at_ms / 1000,
            leaf: hex::encode(&g.leaf),
            entry_leaf_hash: hex::encode(leaf_hash),
            leaf_index: position,
            batch_size: b.size,
            audit_path,
            batch_root: hex::encode(b.root),
            batch_committed_at: b.committed_at_ms / 1000,
        })),
        ReplayStep::PoolPublished(Box::new(PoolPublished {
            step: 2,
            action: "vdf_epoch_published".into(),
            description: "pool entry: x = hash_to_group(H(batch seed ‖ index ‖ secret)); \
                y = x^(2^T) with a Wesolowski proof (π, ℓ); the batch seed chains the previous \
                batch's root and the output of the anchor epoch"
                .into(),
            epoch: b.anchor_epoch,
            pool_batch: b.number,
            modulus: m.id().to_owned(),
            iterations: e.iterations,
            batch_seed: hex::encode(b.seed),
            secret: hex::encode(e.secret),
            input: hex::encode(&e.x),
            output: y_hex.clone(),
            pi: hex::encode(&e.pi),
            l: hex::encode(&e.l),
        })),
    ];
    replay_steps.extend(outcome_steps(game, &y_hex, &stored, derived.as_ref().ok()));
    Verification::new(checks, result, replay_steps)
}
