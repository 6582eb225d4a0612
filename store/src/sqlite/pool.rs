//! The instant-bet pool in the embedded store: committing batches, serving entries once.

use super::*;
use crate::{BuildInstant, GameRecord, PoolBatch, PoolCounts, PoolEntry, PoolStore, StoreResult};
use async_trait::async_trait;
use rusqlite::params;
use tokio::sync::oneshot;

#[async_trait]
impl PoolStore for SqliteStore {
    async fn last_pool_batch(&self) -> StoreResult<Option<PoolBatch>> {
        self.read(|c| query_pool_batch(c, "ORDER BY number DESC LIMIT 1", []))
            .await
    }

    async fn commit_pool_batch(
        &self,
        batch: &PoolBatch,
        entries: &[vrs_engine::pool::Entry],
    ) -> StoreResult<()> {
        let mut batch = batch.clone();
        let entries = entries.to_vec();
        self.write("commit_pool_batch", move |tx| {
            // The one writer thread: no bet served after this commit can predate this stamp.
            batch.committed_at_ms = vrs_observe::clock::now_ms();
            let last = query_pool_batch(tx, "ORDER BY number DESC LIMIT 1", [])?;
            crate::check_pool_link(last.as_ref(), &batch, &entries)?;
            tx.execute(
                "INSERT INTO pool_batches (number, first_index, size, prev_root, anchor_epoch,
                     seed, root, committed_at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    batch.number as i64,
                    batch.first_index as i64,
                    batch.size as i64,
                    batch.prev_root.to_vec(),
                    batch.anchor_epoch as i64,
                    batch.seed.to_vec(),
                    batch.root.to_vec(),
                    batch.committed_at_ms,
                ],
            )
            .map_err(|e| constraint_or_unavailable(e, "pool batch"))?;
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO pool_entries (idx, batch, iterations, x, y, l, pi, secret)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(unavailable)?;
            for e in &entries {
                stmt.execute(params![
                    e.index as i64,
                    batch.number as i64,
                    e.iterations as i64,
                    e.x,
                    e.y,
                    e.l,
                    e.pi,
                    e.secret.to_vec()
                ])
                .map_err(unavailable)?;
            }
            Ok(())
        })
        .await
    }

    async fn pool_counts(&self) -> StoreResult<PoolCounts> {
        self.read(|c| {
            let next: i64 = c
                .query_row("SELECT next_index FROM pool_state WHERE id = 1", [], |r| {
                    r.get(0)
                })
                .map_err(unavailable)?;
            let last_batch = query_pool_batch(c, "ORDER BY number DESC LIMIT 1", [])?;
            Ok(PoolCounts {
                generated: last_batch.as_ref().map_or(0, |b| b.end_index() - 1),
                served: (next - 1) as u64,
                last_batch,
            })
        })
        .await
    }

    async fn pool_batch(&self, number: u64) -> StoreResult<Option<PoolBatch>> {
        self.read(move |c| query_pool_batch(c, "WHERE number = ?1", [number as i64]))
            .await
    }

    async fn pool_batch_entries(&self, number: u64) -> StoreResult<Vec<PoolEntry>> {
        self.read(move |c| {
            query_pool_entries(c, "WHERE e.batch = ?1 ORDER BY e.idx", [number as i64])
        })
        .await
    }

    async fn pool_entry(&self, index: u64) -> StoreResult<Option<PoolEntry>> {
        self.read(move |c| Ok(query_pool_entries(c, "WHERE e.idx = ?1", [index as i64])?.pop()))
            .await
    }

    async fn serve_instant(&self, build: BuildInstant) -> StoreResult<Option<GameRecord>> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send(WriteReq::Bet(GroupItem::Instant(build, tx)))
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        rx.await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    async fn pool_batches(&self, from: u64, to: u64) -> StoreResult<Vec<PoolBatch>> {
        self.read(move |c| {
            query_pool_batches(
                c,
                "WHERE number >= ?1 AND number < ?2 ORDER BY number",
                [from as i64, to as i64],
            )
        })
        .await
    }
}
