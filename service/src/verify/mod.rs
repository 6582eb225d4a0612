//! Verification of a resolved game, computed from the stored data at read time and never
//! stored as a flag. Every check an outsider would run is run here, on the same data the
//! response hands out, so that anyone can redo it offline (docs/PROTOCOL.md, "Verifying a game").

pub mod acceptance;
mod epoch;
mod outcome;
pub mod pool;

use crate::anchor::batch::Subject;
use crate::anchor::proof::attach;
use crate::anchor::AnchorView;
use crate::epoch::previous_output;
use acceptance::{add_acceptance, add_pool_binding, PublishedKeys};
use anyhow::Context;
pub use epoch::{timing_check, verify, Neighbours};
pub use vrs_protocol::epoch_group::veo_class;
use vrs_protocol::epoch_group::Group;
pub use vrs_protocol::report::{check, Check, Verification};
pub use vrs_protocol::timing::{timing_step, PriorEpoch, TimingFacts};
use vrs_store::{GameRecord, Store};

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    NotFound,
    Pending(Box<GameRecord>),
    Resolved(Box<Verification>),
}

/// Loads `game_id` and, when resolved, verifies it.
pub async fn lookup(
    store: &dyn Store,
    anchor: &AnchorView,
    game_id: &str,
) -> anyhow::Result<Lookup> {
    let Some(game) = store.game(game_id).await? else {
        return Ok(Lookup::NotFound);
    };
    if game.resolution.is_none() {
        return Ok(Lookup::Pending(Box::new(game)));
    }
    let Some(epoch_number) = game.epoch else {
        return lookup_pool(store, anchor, game).await;
    };
    let epoch = store
        .epoch(epoch_number)
        .await?
        .with_context(|| format!("epoch {epoch_number} of game {game_id} is missing"))?;
    let group = Group::by_name(&epoch.modulus)
        .with_context(|| format!("epoch {} names group {}", epoch.number, epoch.modulus))?;
    let chain_prev = previous_output(store, &group, &epoch).await?;
    let leaves = store.epoch_leaves(epoch.number).await?;
    let neighbours = Neighbours::load(store, &epoch).await?;
    let mut v = verify(&group, &game, &epoch, &chain_prev, &leaves, &neighbours);
    let keys = PublishedKeys::load(store).await?;
    add_acceptance(&mut v, &game, &keys);
    attach(store, anchor, Subject::Epoch(epoch.number), &mut v).await?;
    Ok(Lookup::Resolved(Box::new(v)))
}

/// Loads what a pool-served game is checked against and verifies it.
async fn lookup_pool(
    store: &dyn Store,
    anchor_view: &AnchorView,
    game: GameRecord,
) -> anyhow::Result<Lookup> {
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
    let mut v = pool::verify_pool(&modulus, &game, &evidence);
    let keys = PublishedKeys::load(store).await?;
    add_pool_binding(store, &mut v, &game, &keys).await?;
    add_acceptance(&mut v, &game, &keys);
    attach(store, anchor_view, Subject::PoolBatch(pool_batch), &mut v).await?;
    Ok(Lookup::Resolved(Box::new(v)))
}
