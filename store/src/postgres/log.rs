//! The PostgreSQL store's witnessed log (schema version 10): entries and signed checkpoints.
//! One leader appends; the primary key turns a second writer's append into a conflict.

use super::*;
use crate::{LogStore, StoreError, StoreResult};

#[async_trait]
impl LogStore for PgStore {
    async fn append_log_entries(&self, first_index: u64, entries: Vec<Vec<u8>>) -> StoreResult<()> {
        timed("append log entries", async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg_err)?;
            let size: i64 = tx
                .query_one("SELECT COALESCE(MAX(idx) + 1, 0) FROM log_entries", &[])
                .await
                .map_err(pg_err)?
                .try_get(0)
                .map_err(corrupt)?;
            if size as u64 != first_index {
                return Err(StoreError::Conflict(format!(
                    "the log has {size} entries, not {first_index}"
                )));
            }
            let st = tx
                .prepare("INSERT INTO log_entries (idx, entry) VALUES ($1, $2)")
                .await
                .map_err(pg_err)?;
            for (i, e) in entries.iter().enumerate() {
                let idx = (first_index + i as u64) as i64;
                tx.execute(&st, &[&idx, &e.as_slice()]).await.map_err(|e| {
                    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                        StoreError::Conflict(format!(
                            "log entry {idx} was written by another process"
                        ))
                    } else {
                        pg_err(e)
                    }
                })?;
            }
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn log_entries(&self, from: u64, limit: u64) -> StoreResult<Vec<Vec<u8>>> {
        timed("read log entries", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT entry FROM log_entries WHERE idx >= $1 ORDER BY idx LIMIT $2",
                    &[&(from as i64), &(limit.min(i64::MAX as u64) as i64)],
                )
                .await
                .map_err(pg_err)?;
            rows.iter()
                .map(|r| r.try_get::<_, Vec<u8>>(0).map_err(corrupt))
                .collect()
        })
        .await
    }

    async fn put_log_checkpoint(&self, size: u64, note: String, now_ms: i64) -> StoreResult<()> {
        timed("put log checkpoint", async {
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO log_checkpoints (size, note, updated_ms) VALUES ($1, $2, $3)
                     ON CONFLICT (size) DO UPDATE SET note = EXCLUDED.note,
                                                      updated_ms = EXCLUDED.updated_ms",
                    &[&(size as i64), &note, &now_ms],
                )
                .await
                .map(|_| ())
                .map_err(pg_err)
        })
        .await
    }

    async fn latest_log_checkpoint(&self) -> StoreResult<Option<(u64, String)>> {
        timed("read log checkpoint", async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1",
                    &[],
                )
                .await
                .map_err(pg_err)?;
            row.as_ref().map(checkpoint_row).transpose()
        })
        .await
    }

    async fn log_checkpoints_covering(
        &self,
        index: u64,
        limit: u64,
    ) -> StoreResult<Vec<(u64, String)>> {
        timed("read log checkpoints", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT size, note FROM log_checkpoints WHERE size > $1 ORDER BY size \
                     LIMIT $2",
                    &[&(index as i64), &(limit.min(i64::MAX as u64) as i64)],
                )
                .await
                .map_err(pg_err)?;
            rows.iter().map(checkpoint_row).collect()
        })
        .await
    }
}

/// (size, note) of a log_checkpoints row.
fn checkpoint_row(r: &Row) -> StoreResult<(u64, String)> {
    Ok((
        r.try_get::<_, i64>(0).map_err(corrupt)? as u64,
        r.try_get::<_, String>(1).map_err(corrupt)?,
    ))
}
