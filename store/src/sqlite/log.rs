//! The embedded store's witnessed log (schema version 10): entries and signed checkpoints.

use super::*;
use crate::{LogStore, StoreError, StoreResult};

#[async_trait]
impl LogStore for SqliteStore {
    async fn append_log_entries(&self, first_index: u64, entries: Vec<Vec<u8>>) -> StoreResult<()> {
        self.write("append_log_entries", move |tx| {
            let size: i64 = tx
                .query_row(
                    "SELECT COALESCE(MAX(idx) + 1, 0) FROM log_entries",
                    [],
                    |r| r.get(0),
                )
                .map_err(unavailable)?;
            if size as u64 != first_index {
                return Err(StoreError::Conflict(format!(
                    "the log has {size} entries, not {first_index}"
                )));
            }
            let mut st = tx
                .prepare_cached("INSERT INTO log_entries (idx, entry) VALUES (?1, ?2)")
                .map_err(unavailable)?;
            for (i, e) in entries.iter().enumerate() {
                st.execute(params![(first_index + i as u64) as i64, e])
                    .map_err(unavailable)?;
            }
            Ok(())
        })
        .await
    }

    async fn log_entries(&self, from: u64, limit: u64) -> StoreResult<Vec<Vec<u8>>> {
        self.read(move |c| {
            let mut st = c
                .prepare_cached(
                    "SELECT entry FROM log_entries WHERE idx >= ?1 ORDER BY idx LIMIT ?2",
                )
                .map_err(unavailable)?;
            let rows = st
                .query_map(
                    params![from as i64, limit.min(i64::MAX as u64) as i64],
                    |r| r.get::<_, Vec<u8>>(0),
                )
                .map_err(unavailable)?;
            rows.map(|r| r.map_err(unavailable)).collect()
        })
        .await
    }

    async fn put_log_checkpoint(&self, size: u64, note: String, now_ms: i64) -> StoreResult<()> {
        self.write("put_log_checkpoint", move |tx| {
            tx.execute(
                "INSERT INTO log_checkpoints (size, note, updated_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (size) DO UPDATE SET note = excluded.note,
                                                  updated_ms = excluded.updated_ms",
                params![size as i64, note, now_ms],
            )
            .map(|_| ())
            .map_err(unavailable)
        })
        .await
    }

    async fn latest_log_checkpoint(&self) -> StoreResult<Option<(u64, String)>> {
        self.read(|c| {
            c.query_row(
                "SELECT size, note FROM log_checkpoints ORDER BY size DESC LIMIT 1",
                [],
                |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?)),
            )
            .optional()
            .map_err(unavailable)
        })
        .await
    }

    async fn log_checkpoints_covering(
        &self,
        index: u64,
        limit: u64,
    ) -> StoreResult<Vec<(u64, String)>> {
        self.read(move |c| {
            let mut q = c
                .prepare_cached(
                    "SELECT size, note FROM log_checkpoints WHERE size > ?1 ORDER BY size \
                     LIMIT ?2",
                )
                .map_err(unavailable)?;
            let rows = q
                .query_map([index as i64, limit.min(i64::MAX as u64) as i64], |r| {
                    Ok((r.get::<_, i64>(0)? as u64, r.get::<_, String>(1)?))
                })
                .map_err(unavailable)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(unavailable)
        })
        .await
    }
}
