//! The instant-bet pool in the PostgreSQL store: committing batches, serving entries once.

use super::*;
use crate::{
    BuildInstant, GameRecord, PoolBatch, PoolCounts, PoolEntry, PoolStore, StoreError, StoreResult,
};
use async_trait::async_trait;
use tokio::sync::oneshot;

#[async_trait]
impl PoolStore for PgStore {
    async fn last_pool_batch(&self) -> StoreResult<Option<PoolBatch>> {
        self.query_pool_batch("ORDER BY number DESC LIMIT 1", &[])
            .await
    }

    async fn commit_pool_batch(
        &self,
        batch: &PoolBatch,
        entries: &[vrs_engine::pool::Entry],
    ) -> StoreResult<()> {
        timed_for(RESOLVE_TIMEOUT, "commit pool batch", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            // One generator at a time per schema (the leader; this makes a second one wait).
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
                &[&POOL_LOCK],
            )
            .await
            .map_err(pg_err)?;
            let last = tx
                .query_opt(
                    &format!(
                        "SELECT {POOL_BATCH_COLUMNS} FROM pool_batches
                         ORDER BY number DESC LIMIT 1"
                    ),
                    &[],
                )
                .await
                .map_err(pg_err)?
                .map(|r| pool_batch_from_row(&r))
                .transpose()?;
            crate::check_pool_link(last.as_ref(), batch, entries)?;
            // Stamped by the database's clock, the one every replica's serving compares with.
            tx.execute(
                "INSERT INTO pool_batches (number, first_index, size, prev_root, anchor_epoch,
                     seed, root, committed_at_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7,
                     (extract(epoch from clock_timestamp()) * 1000)::int8)",
                &[
                    &(batch.number as i64),
                    &(batch.first_index as i64),
                    &(batch.size as i64),
                    &batch.prev_root.as_slice(),
                    &(batch.anchor_epoch as i64),
                    &batch.seed.as_slice(),
                    &batch.root.as_slice(),
                ],
            )
            .await
            .map_err(pg_err)?;
            let idx: Vec<i64> = entries.iter().map(|e| e.index as i64).collect();
            let iterations: Vec<i64> = entries.iter().map(|e| e.iterations as i64).collect();
            let bytes = |f: fn(&vrs_engine::pool::Entry) -> &[u8]| {
                entries.iter().map(f).collect::<Vec<&[u8]>>()
            };
            tx.execute(
                "INSERT INTO pool_entries (batch, idx, iterations, x, y, l, pi, secret)
                 SELECT $1, u.* FROM UNNEST($2::int8[], $3::int8[], $4::bytea[], $5::bytea[],
                     $6::bytea[], $7::bytea[], $8::bytea[]) AS u",
                &[
                    &(batch.number as i64),
                    &idx,
                    &iterations,
                    &bytes(|e| &e.x),
                    &bytes(|e| &e.y),
                    &bytes(|e| &e.l),
                    &bytes(|e| &e.pi),
                    &bytes(|e| &e.secret),
                ],
            )
            .await
            .map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn pool_counts(&self) -> StoreResult<PoolCounts> {
        let last_batch = self.last_pool_batch().await?;
        let served: i64 = timed("read pool", async {
            let client = self.client().await?;
            Ok(client
                .query_one("SELECT next_index - 1 FROM pool_state WHERE id = 1", &[])
                .await
                .map_err(pg_err)?
                .get(0))
        })
        .await?;
        Ok(PoolCounts {
            generated: last_batch.as_ref().map_or(0, |b| b.end_index() - 1),
            served: served as u64,
            last_batch,
        })
    }

    async fn pool_batch(&self, number: u64) -> StoreResult<Option<PoolBatch>> {
        self.query_pool_batch("WHERE number = $1", &[&(number as i64)])
            .await
    }

    async fn pool_batch_entries(&self, number: u64) -> StoreResult<Vec<PoolEntry>> {
        self.query_pool_entries("WHERE e.batch = $1 ORDER BY e.idx", &[&(number as i64)])
            .await
    }

    async fn pool_entry(&self, index: u64) -> StoreResult<Option<PoolEntry>> {
        Ok(self
            .query_pool_entries("WHERE e.idx = $1", &[&(index as i64)])
            .await?
            .pop())
    }

    async fn serve_instant(&self, build: BuildInstant) -> StoreResult<Option<GameRecord>> {
        let (reply, rx) = oneshot::channel();
        self.instants
            .send(InstantReq { build, reply })
            .await
            .map_err(|_| StoreError::Unavailable("the instant committers have stopped".into()))?;
        rx.await
            .map_err(|_| StoreError::Unavailable("the instant committers have stopped".into()))?
    }

    async fn pool_batches(&self, from: u64, to: u64) -> StoreResult<Vec<PoolBatch>> {
        timed("read pool batches", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {POOL_BATCH_COLUMNS} FROM pool_batches
                         WHERE number >= $1 AND number < $2 ORDER BY number"
                    ),
                    &[&(from as i64), &(to as i64)],
                )
                .await
                .map_err(pg_err)?;
            rows.iter().map(pool_batch_from_row).collect()
        })
        .await
    }
}
