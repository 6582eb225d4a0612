//! Verification of a resolved game, computed from the stored data at read time and never
//! stored as a flag. Every check an outsider would run is run here, on the same data the
//! response hands out, so that anyone can redo it offline (docs/PROTOCOL.md, "Verifying a game").

pub mod acceptance;
pub mod cache;
mod epoch;
mod outcome;
pub mod pool;

use crate::anchor::batch::Subject;
use crate::anchor::proof::attach;
use crate::anchor::AnchorView;
use crate::epoch::previous_output;
use crate::read_workers::ReadWorkers;
use crate::tlog::OperatorLog;
use acceptance::{add_acceptance, add_pool_binding, PublishedKeys};
use anyhow::Context;
use cache::KeptReport;
pub use cache::VerifyCache;
use epoch::EpochFacts;
pub use epoch::{timing_check, verify, Neighbours, Origin};
use std::sync::Arc;
use vrs_engine::merkle;
pub use vrs_protocol::epoch_group::veo_class;
use vrs_protocol::epoch_group::Group;
pub use vrs_protocol::report::{check, Check, Verification};
pub use vrs_protocol::timing::{timing_step, PriorEpoch, TimingFacts};
use vrs_protocol::tlog::entry::{output_hash, CommitmentEntry};
use vrs_protocol::tlog::moved;
use vrs_protocol::tlog::witnessed::{self, LogEvidence, ShownEpoch};
use vrs_protocol::verification::Proof;
use vrs_store::{EpochRecord, GameRecord, Store};

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    NotFound,
    Pending(Box<GameRecord>),
    Resolved(Box<Verification>),
}

/// Loads `game_id` and, when resolved, verifies it. What `cache` keeps is not recomputed
/// (see [`cache`]); the anchor members are read anew every time.
pub async fn lookup(
    store: &dyn Store,
    anchor: &AnchorView,
    cache: &VerifyCache,
    workers: &ReadWorkers,
    log: Option<&OperatorLog>,
    game_id: &str,
) -> anyhow::Result<Lookup> {
    if let Some(kept) = cache.report(game_id) {
        let mut v = kept.report.clone();
        attach(store, anchor, kept.subject, &mut v).await?;
        return Ok(Lookup::Resolved(Box::new(v)));
    }
    let Some(game) = store.game(game_id).await? else {
        return Ok(Lookup::NotFound);
    };
    if game.resolution.is_none() {
        return Ok(Lookup::Pending(Box::new(game)));
    }
    let (subject, v, settled) = match game.epoch {
        None => lookup_pool(store, cache, &game).await?,
        Some(n) => lookup_epoch(store, cache, workers, log, &game, n).await?,
    };
    // A report that failed a check is not kept: the next request shows the store as it is.
    if settled && v.verified() {
        let report = v.clone();
        cache.keep_report(game_id, KeptReport { subject, report });
    }
    let mut v = v;
    attach(store, anchor, subject, &mut v).await?;
    Ok(Lookup::Resolved(Box::new(v)))
}

/// The bets tree of `epoch`, from its stored leaves; kept once its input committed the root.
pub async fn epoch_tree(
    store: &dyn Store,
    cache: &VerifyCache,
    epoch: &EpochRecord,
) -> anyhow::Result<Arc<merkle::Tree>> {
    let n = epoch.number;
    let load = || async move {
        let leaves = store.epoch_leaves(n).await?;
        let hashes = leaves.iter().map(|l| merkle::leaf_hash(l)).collect();
        anyhow::Ok(Arc::new(merkle::Tree::new(hashes)))
    };
    match epoch.input {
        Some(_) => cache.tree(n).get_or_try_init(load).await.cloned(),
        None => load().await,
    }
}

/// The epoch-wide checks of `epoch`, computed on a read worker (a class group's discriminant
/// takes a while); kept once the epoch is resolved.
async fn epoch_facts(
    store: &dyn Store,
    cache: &VerifyCache,
    workers: &ReadWorkers,
    group: &Group,
    epoch: &EpochRecord,
) -> anyhow::Result<Arc<EpochFacts>> {
    let compute = || async move {
        let chain_prev = previous_output(store, group, epoch).await?;
        let tree = epoch_tree(store, cache, epoch).await?;
        let (group, epoch) = (group.clone(), epoch.clone());
        let facts = workers
            .run(move || EpochFacts::compute(&group, &epoch, &chain_prev, tree))
            .await?;
        anyhow::Ok(Arc::new(facts))
    };
    match epoch.output {
        Some(_) => cache
            .epoch(epoch.number)
            .get_or_try_init(compute)
            .await
            .cloned(),
        None => compute().await,
    }
}

/// Verifies an epoch game; says whether every record the report read is final. A game whose
/// epoch is void and whose games were moved is verified as a game of the epoch they resolved
/// with (docs/PROTOCOL.md §21, "Moved games").
async fn lookup_epoch(
    store: &dyn Store,
    cache: &VerifyCache,
    workers: &ReadWorkers,
    log: Option<&OperatorLog>,
    game: &GameRecord,
    epoch_number: u64,
) -> anyhow::Result<(Subject, Verification, bool)> {
    let game_id = &game.new.game_id;
    let load = |n: u64| async move {
        store
            .epoch(n)
            .await?
            .with_context(|| format!("epoch {n} of game {game_id} is missing"))
    };
    let own = load(epoch_number).await?;
    let outcome = match log {
        Some(_) => store.games_outcome_epoch(epoch_number).await?,
        None => None,
    };
    let moved_to = outcome.filter(|&d| d != epoch_number);
    let epoch = match moved_to {
        Some(d) => load(d).await?,
        None => own.clone(),
    };
    let group = Group::by_name(&epoch.modulus)
        .with_context(|| format!("epoch {} names group {}", epoch.number, epoch.modulus))?;
    let facts = epoch_facts(store, cache, workers, &group, &epoch).await?;
    let neighbours = Neighbours::load(store, &epoch).await?;
    let own_tree = match moved_to {
        Some(_) => Some(epoch_tree(store, cache, &own).await?),
        None => None,
    };
    let origin = own_tree.as_deref().map(|tree| Origin { epoch: &own, tree });
    let mut v = verify(&group, game, &epoch, &facts, &neighbours, origin);
    let keys = PublishedKeys::load(store).await?;
    add_acceptance(&mut v, game, &keys);
    if let Some(log) = log {
        add_witnessed(&mut v, log, &epoch, moved_to.map(|_| &own)).await?;
    }
    // `timing` reads when y of epoch e − 1 was stored: final once it is.
    let settled =
        epoch.output.is_some() && neighbours.prior.as_ref().is_none_or(|p| p.output.is_some());
    Ok((Subject::Epoch(epoch.number), v, settled))
}

/// Adds the epoch's log evidence to the proof and, with witnesses, the `witnessed` check
/// against the server's own policy (docs/PROTOCOL.md §21, "The witnessed step"); for a moved
/// game (`moved_from`: its own epoch), the moves from its epoch on and the `moved` check.
async fn add_witnessed(
    v: &mut Verification,
    log: &OperatorLog,
    epoch: &EpochRecord,
    moved_from: Option<&EpochRecord>,
) -> anyhow::Result<()> {
    let mut evidence = log.evidence(epoch.number).await?;
    if let (None, Some(ev)) = (moved_from, evidence.as_mut()) {
        // The game took its epoch's own outcome: a move of the epoch (one its quorum never
        // cosigned, say) is not its verification's.
        ev.moves.clear();
    }
    if let (Some(own), Some(ev)) = (moved_from, evidence.as_mut()) {
        ev.moves = log.moves_from(own.number).await?;
        let result = moved_check(ev, own, epoch.number, log.floor());
        let at = v
            .checks
            .iter()
            .position(|c| c.name == "merkle_inclusion")
            .map_or(v.checks.len(), |i| i + 1);
        let mut one = Vec::new();
        check(&mut one, "moved", result);
        v.checks.splice(at..at, one);
    }
    if let Some(floor) = log.floor() {
        let result = match (&evidence, shown(epoch)) {
            (None, _) | (_, None) => Err(format!(
                "the log holds no plan and commitment of epoch {}",
                epoch.number
            )),
            (Some(ev), Some(shown)) => {
                witnessed::check(&ev.plan, &ev.commitment, &ev.previous_output, floor)
                    .and_then(|w| w.matches(&shown).map(|()| w.detail))
            }
        };
        check(&mut v.checks, "witnessed", result);
    }
    if let Proof::Epoch(p) = v.proof_mut() {
        p.log = evidence;
    }
    v.seal();
    Ok(())
}

/// The `moved` check of a game of `own` resolved with epoch `destination`: the log's moves
/// lead there, before its commitment, cosigned by the server's quorum, the first repeating
/// the bets the game's epoch committed.
fn moved_check(
    ev: &LogEvidence,
    own: &EpochRecord,
    destination: u64,
    floor: Option<&witnessed::WitnessFloor>,
) -> Result<String, String> {
    let chain = moved::check(
        &ev.moves,
        own.number,
        destination,
        &ev.commitment,
        floor.map(|f| &f.policy),
    )?;
    let committed = own.input.as_ref().map(|i| (i.bets_root, i.bet_count));
    if committed != Some((chain.first.bets_root, chain.first.bet_count)) {
        return Err(format!(
            "the move of epoch {} names other bets than the epoch committed",
            own.number
        ));
    }
    Ok(chain.detail)
}

/// The stored record of a closed version-2 epoch, as the log's entries state it.
fn shown(e: &EpochRecord) -> Option<ShownEpoch> {
    let plan = e.plan?;
    let input = e.input.as_ref()?;
    Some(ShownEpoch {
        commitment: CommitmentEntry {
            epoch: e.number,
            previous: plan.previous,
            bets_root: input.bets_root,
            bet_count: input.bet_count,
            nonce: e.nonce?,
            iterations: plan.iterations,
            margin_centi: plan.margin_centi,
            squarings_per_second: plan.squarings_per_second,
            opened_ms: u64::try_from(e.opened_at_ms).ok()?,
            closed_ms: u64::try_from(e.closed_at_ms?).ok()?,
        },
        deadline_ms: u64::try_from(plan.deadline_ms).ok()?,
        previous_output_hash: output_hash(&input.prev_y),
    })
}

/// Loads what a pool-served game is checked against and verifies it.
/// Says whether every record the report read is final.
async fn lookup_pool(
    store: &dyn Store,
    cache: &VerifyCache,
    game: &GameRecord,
) -> anyhow::Result<(Subject, Verification, bool)> {
    let id = &game.new.game_id;
    let index = game
        .pool_index
        .with_context(|| format!("game {id} has neither an epoch nor a pool entry"))?;
    let entry = store
        .pool_entry(index)
        .await?
        .with_context(|| format!("pool entry {index} of game {id} is missing"))?;
    let batch = store
        .pool_batch(entry.batch)
        .await?
        .with_context(|| format!("pool batch {} is missing", entry.batch))?;
    let prev_batch = match batch.number {
        1 => None,
        n => store.pool_batch(n - 1).await?,
    };
    let anchor = store.epoch(batch.anchor_epoch).await?;
    let modulus_id = anchor
        .as_ref()
        .map(|a| a.modulus.clone())
        .with_context(|| format!("anchor epoch {} is missing", batch.anchor_epoch))?;
    // Pool entries are squared modulo N: a class-group service keeps no pool.
    let modulus = vrs_engine::group::Modulus::by_name(&modulus_id).with_context(|| {
        format!("anchor epoch names group {modulus_id}, not an RSA modulus of a pool")
    })?;
    let batch_entries = store
        .pool_batch_entries(batch.number)
        .await?
        .into_iter()
        .map(|e| e.entry)
        .collect();
    let evidence = pool::PoolEvidence {
        entry,
        batch,
        prev_batch,
        anchor,
        batch_entries,
    };
    let pool_batch = evidence.batch.number;
    let mut v = pool::verify_pool(&modulus, game, &evidence);
    let keys = PublishedKeys::load(store).await?;
    let bound = add_pool_binding(store, cache, &mut v, game, &keys).await?;
    add_acceptance(&mut v, game, &keys);
    Ok((Subject::PoolBatch(pool_batch), v, bound))
}
