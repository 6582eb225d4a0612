//! Anchor batches from the store: which records a batch takes, its leaves (recomputed from the
//! stored epochs and pool batches, never stored), and the path from one record to its root.

use crate::bounded::Bounded;
use anyhow::{bail, Context};
use std::sync::{Arc, Mutex, PoisonError};
use vrs_engine::anchor::{self, AnchorLeaf, LeafKind};
use vrs_engine::merkle::Hash;
use vrs_store::{AnchorBatch, AnchorState, EpochRecord, Store};

/// Most epochs in one batch. A batch normally takes `--anchor-every` epochs; after anchoring
/// was off or the chain was unreachable, the backlog goes out in batches this large.
pub const MAX_EPOCHS: u64 = 1024;
/// Most pool batches in one anchor batch (the rest go in the next).
pub const MAX_POOL_BATCHES: u64 = 4096;
/// Most notary batches in one anchor batch (the rest go in the next).
pub const MAX_NOTARY_BATCHES: u64 = 4096;

/// The records one anchor batch covers: epochs `first..=last`, pool batches `pool`, notary
/// batches `notary` (half-open ranges).
#[derive(Clone, Copy, Debug)]
pub struct Ranges {
    pub first: u64,
    pub last: u64,
    pub pool: (u64, u64),
    pub notary: (u64, u64),
}

impl Ranges {
    pub fn of(b: &AnchorBatch) -> Self {
        Self {
            first: b.first_epoch,
            last: b.last_epoch,
            pool: (b.pool_from, b.pool_to),
            notary: (b.notary_from, b.notary_to),
        }
    }
}

/// The leaf of a resolved epoch: kind 1, its number, its record hash.
pub fn epoch_leaf(e: &EpochRecord) -> anyhow::Result<AnchorLeaf> {
    let input = e
        .input
        .as_ref()
        .with_context(|| format!("epoch {} has no input", e.number))?;
    let output = e
        .output
        .as_ref()
        .with_context(|| format!("epoch {} is not resolved", e.number))?;
    let hash = anchor::epoch_record_hash(&anchor::EpochRecord {
        epoch: e.number,
        iterations: input.iterations,
        bets_root: &input.bets_root,
        prev_y: &input.prev_y,
        x: &input.x,
        y: &output.y,
        l: &output.l,
        pi: &output.pi,
    });
    Ok(AnchorLeaf {
        kind: LeafKind::Epoch,
        number: e.number,
        hash,
    })
}

/// The leaves of the records in `r`, in canonical order. Fails if any of them is missing from
/// the store.
pub async fn leaves(store: &dyn Store, r: Ranges) -> anyhow::Result<Vec<AnchorLeaf>> {
    let (first, last) = (r.first, r.last);
    let (pool_from, pool_to) = r.pool;
    let (notary_from, notary_to) = r.notary;
    let epochs = store.resolved_epochs(first, last).await?;
    if epochs.len() as u64 != last - first + 1 {
        bail!(
            "epochs {first}..={last}: {} of {} are resolved",
            epochs.len(),
            last - first + 1
        );
    }
    let pool = store.pool_batches(pool_from, pool_to).await?;
    if pool.len() as u64 != pool_to - pool_from {
        bail!(
            "pool batches {pool_from}..{pool_to}: {} of {} are stored",
            pool.len(),
            pool_to - pool_from
        );
    }
    let notary = store.notary_batches(notary_from, notary_to).await?;
    if notary.len() as u64 != notary_to - notary_from {
        bail!(
            "notary batches {notary_from}..{notary_to}: {} of {} are stored",
            notary.len(),
            notary_to - notary_from
        );
    }
    let mut out = epochs
        .iter()
        .map(epoch_leaf)
        .collect::<anyhow::Result<Vec<_>>>()?;
    out.extend(pool.iter().map(|b| AnchorLeaf {
        kind: LeafKind::PoolBatch,
        number: b.number,
        hash: b.root,
    }));
    out.extend(notary.iter().map(|b| AnchorLeaf {
        kind: LeafKind::NotaryBatch,
        number: b.number,
        hash: b.root,
    }));
    anchor::canonical_order(&mut out);
    Ok(out)
}

/// Builds and stores the next batch if `every` resolved epochs are waiting and no built batch
/// is still waiting for its first transaction (a backlog then goes out as one larger batch
/// instead of many small ones). Returns the batch stored.
pub async fn build_next(
    store: &dyn Store,
    every: u64,
    now_ms: i64,
) -> anyhow::Result<Option<AnchorBatch>> {
    let last = store.last_anchor_batch().await?;
    if last
        .as_ref()
        .is_some_and(|b| b.status == AnchorState::Pending)
    {
        return Ok(None);
    }
    let Some(latest) = store.latest_resolved_epoch().await? else {
        return Ok(None);
    };
    let first = last.as_ref().map_or(1, |b| b.last_epoch + 1);
    let pool_from = last.as_ref().map_or(1, |b| b.pool_to);
    let pool_end = store.last_pool_batch().await?.map_or(1, |b| b.number + 1);
    // A full batch's worth of pool batches goes out at once, so that a busy pool with small
    // batches never outgrows the anchors (one new epoch is still needed: a batch is never
    // without one).
    let pool_full = pool_end.saturating_sub(pool_from) >= MAX_POOL_BATCHES;
    let notary_from = last.as_ref().map_or(1, |b| b.notary_to);
    let notary_end = store
        .notary_counts()
        .await?
        .last_batch
        .map_or(1, |b| b.number + 1);
    let notary_full = notary_end.saturating_sub(notary_from) >= MAX_NOTARY_BATCHES;
    if latest.number < first || (latest.number + 1 < first + every && !pool_full && !notary_full) {
        return Ok(None);
    }
    let last_epoch = latest.number.min(first + MAX_EPOCHS.max(every) - 1);
    let pool_to = pool_end.clamp(pool_from, pool_from + MAX_POOL_BATCHES);
    let notary_to = notary_end.clamp(notary_from, notary_from + MAX_NOTARY_BATCHES);
    let ranges = Ranges {
        first,
        last: last_epoch,
        pool: (pool_from, pool_to),
        notary: (notary_from, notary_to),
    };
    let leaves = leaves(store, ranges).await?;
    let batch = AnchorBatch {
        number: last.as_ref().map_or(1, |b| b.number + 1),
        first_epoch: first,
        last_epoch,
        pool_from,
        pool_to,
        notary_from,
        notary_to,
        leaves: leaves.len() as u64,
        root: anchor::anchor_root(&leaves),
        created_at_ms: now_ms,
        status: AnchorState::Pending,
        tx_hash: None,
        block_number: None,
        confirmed_at_ms: None,
    };
    store
        .insert_anchor_batch(&batch)
        .await
        .with_context(|| format!("storing anchor batch {}", batch.number))?;
    Ok(Some(batch))
}

/// What an anchor proof is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    Epoch(u64),
    PoolBatch(u64),
    NotaryBatch(u64),
}

/// The path from one record to its batch's root, recomputed from the store.
#[derive(Clone, Debug)]
pub struct Inclusion {
    pub batch: AnchorBatch,
    pub leaf: AnchorLeaf,
    pub index: u64,
    pub tree_size: u64,
    pub path: Vec<Hash>,
    /// The root the recomputed leaves give (equal to `batch.root` unless data changed).
    pub recomputed_root: Hash,
}

/// Where a record sits in a built batch: fixed once the batch is built, since a batch's
/// records (resolved epochs, pool and notary batches) are never rewritten.
#[derive(Debug)]
struct Placed {
    leaf: AnchorLeaf,
    index: u64,
    tree_size: u64,
    path: Vec<Hash>,
    recomputed_root: Hash,
}

/// Batch paths kept between requests, so that a verification reads one batch row instead of
/// every record of the batch. The batch row itself (status, transaction) is read every time.
#[derive(Debug)]
pub struct KeptPaths(Mutex<Bounded<(u64, Subject), Arc<Placed>>>);

/// Paths kept: one per record verified lately.
const PATHS_KEPT: usize = 4096;

impl Default for KeptPaths {
    fn default() -> Self {
        Self(Mutex::new(Bounded::new(PATHS_KEPT)))
    }
}

impl KeptPaths {
    fn get(&self, key: &(u64, Subject)) -> Option<Arc<Placed>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
    }

    fn keep(&self, key: (u64, Subject), placed: Arc<Placed>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, placed);
    }
}

/// The batch holding `subject`, if one does, and the path from its leaf to the batch's root
/// (recomputed from the stored records once per batch and record; see [`KeptPaths`]).
pub async fn inclusion(
    store: &dyn Store,
    kept: &KeptPaths,
    subject: Subject,
) -> anyhow::Result<Option<Inclusion>> {
    let batch = match subject {
        Subject::Epoch(e) => store.anchor_batch_for_epoch(e).await?,
        Subject::PoolBatch(b) => store.anchor_batch_for_pool(b).await?,
        Subject::NotaryBatch(b) => store.anchor_batch_for_notary(b).await?,
    };
    let Some(batch) = batch else {
        return Ok(None);
    };
    let key = (batch.number, subject);
    let placed = match kept.get(&key) {
        Some(p) => p,
        None => {
            let p = Arc::new(place(store, &batch, subject).await?);
            kept.keep(key, Arc::clone(&p));
            p
        }
    };
    Ok(Some(Inclusion {
        batch,
        leaf: placed.leaf.clone(),
        index: placed.index,
        tree_size: placed.tree_size,
        path: placed.path.clone(),
        recomputed_root: placed.recomputed_root,
    }))
}

async fn place(store: &dyn Store, batch: &AnchorBatch, subject: Subject) -> anyhow::Result<Placed> {
    let leaves = leaves(store, Ranges::of(batch)).await?;
    let (kind, number) = match subject {
        Subject::Epoch(e) => (LeafKind::Epoch, e),
        Subject::PoolBatch(b) => (LeafKind::PoolBatch, b),
        Subject::NotaryBatch(b) => (LeafKind::NotaryBatch, b),
    };
    let index = leaves
        .iter()
        .position(|l| l.kind == kind && l.number == number)
        .with_context(|| format!("anchor batch {} has no leaf for {subject:?}", batch.number))?;
    let path = anchor::anchor_path(&leaves, index)
        .with_context(|| format!("no audit path for leaf {index}"))?;
    Ok(Placed {
        leaf: leaves[index].clone(),
        index: index as u64,
        tree_size: leaves.len() as u64,
        path,
        recomputed_root: anchor::anchor_root(&leaves),
    })
}
