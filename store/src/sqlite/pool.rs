//! The instant-bet pool in the embedded store: committing batches, serving entries once.

use super::*;
use crate::{BuildInstant, GameRecord, PoolBatch, PoolCounts, PoolEntry, PoolStore, StoreResult};
use async_trait::async_trait;
use rusqlite::params;
use tokio::sync::oneshot;

/// The next entries to serve, read once per group transaction (the one writer thread makes
/// the counter ours until commit).
pub(super) struct PoolCursor {
    pub(super) next: i64,
    /// The next entries, each with its batch's commit time.
    pub(super) entries: std::collections::VecDeque<(PoolEntry, i64)>,
    pub(super) taken: i64,
}

impl PoolCursor {
    pub(super) fn load(tx: &Transaction<'_>, want: usize) -> StoreResult<Self> {
        let next: i64 = tx
            .prepare_cached("SELECT next_index FROM pool_state WHERE id = 1")
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(unavailable)?;
        // Unserved entries only (at or above the counter): the join finds no game.
        let entries = query_pool_entries(
            tx,
            "WHERE e.idx >= ?1 AND e.idx < ?2 ORDER BY e.idx",
            [next, next + want as i64],
        )?;
        let mut committed = HashMap::new();
        let mut with_times = std::collections::VecDeque::with_capacity(entries.len());
        for e in entries {
            let at = match committed.get(&e.batch) {
                Some(at) => *at,
                None => {
                    let at: i64 = tx
                        .prepare_cached(
                            "SELECT committed_at_ms FROM pool_batches WHERE number = ?1",
                        )
                        .and_then(|mut st| st.query_row([e.batch as i64], |r| r.get(0)))
                        .map_err(unavailable)?;
                    committed.insert(e.batch, at);
                    at
                }
            };
            with_times.push_back((e, at));
        }
        Ok(Self {
            next,
            entries: with_times,
            taken: 0,
        })
    }

    /// Advances the counter past the entries taken.
    pub(super) fn finish(&self, tx: &Transaction<'_>) -> StoreResult<()> {
        if self.taken > 0 {
            tx.prepare_cached("UPDATE pool_state SET next_index = ?1 WHERE id = 1")
                .and_then(|mut st| st.execute([self.next + self.taken]))
                .map_err(unavailable)?;
        }
        Ok(())
    }
}

/// Serves the cursor's next entry, if any, to one bet: the game built from it is stored
/// resolved and the entry names it.
pub(super) fn serve_one(
    tx: &Transaction<'_>,
    cursor: &mut PoolCursor,
    build: &BuildInstant,
) -> StoreResult<Option<GameRecord>> {
    let Some((stored, committed_at)) = cursor.entries.front() else {
        return Ok(None);
    };
    let index = stored.entry.index as i64;
    let (new, resolution) = build(&stored.entry).map_err(StoreError::Conflict)?;
    if *committed_at > new.created_at_ms {
        // The entry's batch was committed after this bet arrived: not for this bet (the
        // entries after it are younger still). The bet takes the epoch path.
        return Ok(None);
    }
    // Bound to the open epoch's tree (docs/PROTOCOL.md §14, "Binding served bets").
    let bet_epoch = open_for_games(tx)?;
    let now = vrs_observe::clock::now_ms();
    tx.prepare_cached(
        "INSERT INTO games (game_id, request_id, game, bet_type, target, combo, amount,
             player_id, player_seed, operator_key, created_at_ms, pool_index, leaf, rng_value,
             dice, won, payout, resolved_at_ms, acceptance_key, acceptance_sig, bet_epoch)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?19, ?20, ?21)",
    )
    .and_then(|mut st| {
        st.execute(params![
            new.game_id,
            new.request_id,
            new.game,
            new.bet_type,
            new.target,
            new.combo.map(|c| join_digits(&c)),
            new.amount,
            new.player_id,
            new.player_seed,
            new.operator_key,
            new.created_at_ms,
            index,
            new.leaf,
            resolution.rng_value,
            join_digits(&resolution.dice),
            resolution.won,
            resolution.payout,
            now,
            new.acceptance.map(|a| a.public_key.to_vec()),
            new.acceptance.map(|a| a.signature.to_vec()),
            bet_epoch,
        ])
    })
    .map_err(|e| constraint_or_unavailable(e, &new.game_id))?;
    cursor.entries.pop_front();
    cursor.taken += 1;
    Ok(Some(GameRecord {
        new,
        epoch: None,
        pool_index: Some(index as u64),
        bet_epoch: Some(bet_epoch as u64),
        seq: None,
        resolution: Some(resolution),
        resolved_at_ms: Some(now),
    }))
}

/// Entry columns, with the game that consumed it (if any) joined in; read by name.
pub(super) const POOL_ENTRY_COLUMNS: &str = "e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, \
     g.game_id, g.resolved_at_ms, e.secret";

pub(super) fn query_pool_entries(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<PoolEntry>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {POOL_ENTRY_COLUMNS} FROM pool_entries e \
             LEFT JOIN games g ON g.pool_index = e.idx {tail}"
        ))
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(p, |r| {
            Ok(PoolEntry {
                batch: r.get::<_, i64>("batch")? as u64,
                entry: vrs_engine::pool::Entry {
                    index: r.get::<_, i64>("idx")? as u64,
                    secret: r.get::<_, [u8; 32]>("secret")?,
                    iterations: r.get::<_, i64>("iterations")? as u64,
                    x: r.get("x")?,
                    y: r.get("y")?,
                    l: r.get("l")?,
                    pi: r.get("pi")?,
                },
                game_id: r.get("game_id")?,
                served_at_ms: r.get("resolved_at_ms")?,
            })
        })
        .map_err(unavailable)?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(unavailable)
}

/// Batch columns, read by name.
pub(super) const POOL_BATCH_COLUMNS: &str =
    "number, first_index, size, prev_root, anchor_epoch, seed, root, committed_at_ms";

pub(super) fn query_pool_batch(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Option<PoolBatch>> {
    Ok(query_pool_batches(conn, tail, p)?.pop())
}

pub(super) fn query_pool_batches(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<PoolBatch>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {POOL_BATCH_COLUMNS} FROM pool_batches {tail}"
        ))
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(p, |r| {
            Ok((
                r.get::<_, i64>("number")?,
                r.get::<_, i64>("first_index")?,
                r.get::<_, i64>("size")?,
                r.get::<_, Vec<u8>>("prev_root")?,
                r.get::<_, i64>("anchor_epoch")?,
                r.get::<_, Vec<u8>>("seed")?,
                r.get::<_, Vec<u8>>("root")?,
                r.get::<_, i64>("committed_at_ms")?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|row| {
        let (number, first, size, prev, anchor, seed, root, at) = row.map_err(unavailable)?;
        Ok(PoolBatch {
            number: number as u64,
            first_index: first as u64,
            size: size as u64,
            prev_root: hash32(prev, "prev_root")?,
            anchor_epoch: anchor as u64,
            seed: hash32(seed, "seed")?,
            root: hash32(root, "root")?,
            committed_at_ms: at,
        })
    })
    .collect()
}

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
