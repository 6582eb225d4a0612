//! The instant-bet pool in the PostgreSQL store: committing batches, serving entries once.

use super::*;
use crate::{
    BuildInstant, GameRecord, PoolBatch, PoolCounts, PoolEntry, PoolStore, StoreError, StoreResult,
};
use async_trait::async_trait;
use tokio::sync::oneshot;

pub(super) const POOL_LOCK: i32 = 0x7672_7304;

pub(super) const INSERT_POOL_GAMES: &str = "INSERT INTO games (pool_index, resolved_at_ms, game_id,
         request_id, game, bet_type, target, combo, amount, player_id, player_seed,
         operator_key, created_at_ms, leaf, rng_value, dice, won, payout, bet_epoch,
         acceptance_key, acceptance_sig)
     SELECT u.idx, $1, u.game_id, u.request_id, u.game, u.bet_type, u.target, u.combo,
         u.amount, u.player_id, u.player_seed, u.operator_key, u.created_at_ms, u.leaf,
         u.rng_value, u.dice, u.won, u.payout, $19, u.acceptance_key, u.acceptance_sig
     FROM UNNEST($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int2[],
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int8[],
         $14::bytea[], $15::text[], $16::text[], $17::bool[], $18::text[], $20::bytea[],
         $21::bytea[])
         AS u (idx, game_id, request_id, game, bet_type, target, combo, amount, player_id,
               player_seed, operator_key, created_at_ms, leaf, rng_value, dice, won, payout,
               acceptance_key, acceptance_sig)";

/// Serves the next entries, in index order, to `builds` in one transaction: the counter row
/// is locked, so replicas take turns and every entry goes to exactly one bet. Bets beyond the
/// committed entries get `None`.
pub(super) async fn serve_group(
    pool: &Pool,
    builds: &[&BuildInstant],
) -> StoreResult<Vec<Option<GameRecord>>> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = read_committed(&mut client).await?;
    // The gate first, as inserts take it: served bets are bound to the open epoch's tree
    // (docs/PROTOCOL.md §14, "Binding served bets"), so its close waits for them.
    let bet_epoch = open_for_games(&tx).await?;
    let next: i64 = tx
        .query_one(
            "SELECT next_index FROM pool_state WHERE id = 1 FOR UPDATE",
            &[],
        )
        .await
        .map_err(pg_err)?
        .get(0);
    // Entries at or above the counter are unserved: no game to join (and a join against the
    // fast-growing games table can be planned as a scan).
    let next_entries = tx
        .prepare_cached(
            "SELECT e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, e.secret,
                 NULL::text AS game_id, NULL::int8 AS served_at_ms,
                 b.committed_at_ms AS batch_committed_at_ms
             FROM pool_entries e JOIN pool_batches b ON b.number = e.batch
             WHERE e.idx >= $1 AND e.idx < $2 ORDER BY e.idx",
        )
        .await
        .map_err(pg_err)?;
    let rows = tx
        .query(&next_entries, &[&next, &(next + builds.len() as i64)])
        .await
        .map_err(pg_err)?;
    let entries = rows
        .iter()
        .map(|r| {
            let committed: i64 = r.try_get("batch_committed_at_ms").map_err(corrupt)?;
            Ok((pool_entry_from_row(r)?, committed))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let now = vrs_observe::clock::now_ms();
    let mut made = Vec::with_capacity(entries.len());
    for (build, (stored, committed_at)) in builds.iter().zip(&entries) {
        let (new, resolution) = build(&stored.entry).map_err(StoreError::Conflict)?;
        if *committed_at > new.created_at_ms {
            // Committed after this bet arrived (database clock against the replica's): not
            // for this bet, nor (younger still) the entries after it. The rest of the group
            // takes the epoch path.
            break;
        }
        made.push((stored.entry.index, new, resolution));
    }
    if !made.is_empty() {
        let col = |f: &dyn Fn(&NewGame) -> Option<String>| {
            made.iter().map(|(_, g, _)| f(g)).collect::<Vec<_>>()
        };
        let idx: Vec<i64> = made.iter().map(|(i, _, _)| *i as i64).collect();
        let ids = col(&|g| Some(g.game_id.clone()));
        let stmt = tx.prepare_cached(INSERT_POOL_GAMES).await.map_err(pg_err)?;
        tx.execute(
            &stmt,
            &[
                &now,
                &idx,
                &ids,
                &col(&|g| Some(g.request_id.clone())),
                &col(&|g| Some(g.game.clone())),
                &col(&|g| g.bet_type.clone()),
                &made
                    .iter()
                    .map(|(_, g, _)| g.target.map(i16::from))
                    .collect::<Vec<_>>(),
                &col(&|g| g.combo.map(|c| join_digits(&c))),
                &col(&|g| g.amount.clone()),
                &col(&|g| Some(g.player_id.clone())),
                &col(&|g| g.player_seed.clone()),
                &col(&|g| Some(g.operator_key.clone())),
                &made
                    .iter()
                    .map(|(_, g, _)| g.created_at_ms)
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, g, _)| g.leaf.as_slice())
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| r.rng_value.as_str())
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| join_digits(&r.dice))
                    .collect::<Vec<_>>(),
                &made.iter().map(|(_, _, r)| r.won).collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| r.payout.as_deref())
                    .collect::<Vec<_>>(),
                &bet_epoch,
                &made
                    .iter()
                    .map(|(_, g, _)| g.acceptance.map(|a| a.public_key.to_vec()))
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, g, _)| g.acceptance.map(|a| a.signature.to_vec()))
                    .collect::<Vec<_>>(),
            ],
        )
        .await
        .map_err(pg_err)?;
        tx.execute(
            "UPDATE pool_state SET next_index = next_index + $1 WHERE id = 1",
            &[&(made.len() as i64)],
        )
        .await
        .map_err(pg_err)?;
    }
    tx.commit().await.map_err(pg_err)?;
    let mut out: Vec<Option<GameRecord>> = made
        .into_iter()
        .map(|(index, new, resolution)| {
            Some(GameRecord {
                new,
                epoch: None,
                pool_index: Some(index),
                bet_epoch: Some(bet_epoch as u64),
                seq: None,
                resolution: Some(resolution),
                resolved_at_ms: Some(now),
            })
        })
        .collect();
    out.resize(builds.len(), None);
    Ok(out)
}

/// Entry columns, with the game that consumed it (if any) joined in.
pub(super) const POOL_ENTRY_COLUMNS: &str = "e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, \
     g.game_id, g.resolved_at_ms AS served_at_ms, e.secret";

pub(super) fn pool_entry_from_row(r: &Row) -> StoreResult<PoolEntry> {
    Ok(PoolEntry {
        batch: r.try_get::<_, i64>("batch").map_err(corrupt)? as u64,
        entry: vrs_engine::pool::Entry {
            index: r.try_get::<_, i64>("idx").map_err(corrupt)? as u64,
            secret: r
                .try_get::<_, Vec<u8>>("secret")
                .map_err(corrupt)?
                .try_into()
                .map_err(|_| StoreError::Corrupt("pool entry secret is not 32 bytes".into()))?,
            iterations: r.try_get::<_, i64>("iterations").map_err(corrupt)? as u64,
            x: r.try_get("x").map_err(corrupt)?,
            y: r.try_get("y").map_err(corrupt)?,
            l: r.try_get("l").map_err(corrupt)?,
            pi: r.try_get("pi").map_err(corrupt)?,
        },
        game_id: r.try_get("game_id").map_err(corrupt)?,
        served_at_ms: r.try_get("served_at_ms").map_err(corrupt)?,
    })
}

pub(super) const POOL_BATCH_COLUMNS: &str =
    "number, first_index, size, prev_root, anchor_epoch, seed, root, committed_at_ms";

pub(super) fn pool_batch_from_row(r: &Row) -> StoreResult<PoolBatch> {
    let hash = |name: &str| -> StoreResult<[u8; 32]> {
        r.try_get::<_, Vec<u8>>(name)
            .map_err(corrupt)?
            .try_into()
            .map_err(|_| StoreError::Corrupt(format!("pool batch {name} is not 32 bytes")))
    };
    Ok(PoolBatch {
        number: r.try_get::<_, i64>("number").map_err(corrupt)? as u64,
        first_index: r.try_get::<_, i64>("first_index").map_err(corrupt)? as u64,
        size: r.try_get::<_, i64>("size").map_err(corrupt)? as u64,
        prev_root: hash("prev_root")?,
        anchor_epoch: r.try_get::<_, i64>("anchor_epoch").map_err(corrupt)? as u64,
        seed: hash("seed")?,
        root: hash("root")?,
        committed_at_ms: r.try_get("committed_at_ms").map_err(corrupt)?,
    })
}

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
