//! Games in the embedded store: committing into the open epoch, acceptance keys, reads.

use super::*;
use crate::{AcceptanceSigner, GameCounts, GameRecord, GameStore, NewGame, Signed, StoreResult};
use async_trait::async_trait;
use rusqlite::params;
use std::sync::Arc;
use tokio::sync::oneshot;

#[async_trait]
impl GameStore for SqliteStore {
    async fn insert_game(
        &self,
        game: NewGame,
        signer: &Arc<AcceptanceSigner>,
    ) -> StoreResult<(u64, Signed)> {
        let (tx, rx) = oneshot::channel();
        let item = Box::new((game, Arc::clone(signer)));
        self.writer
            .send(WriteReq::Bet(GroupItem::Insert(item, tx)))
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        rx.await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    async fn register_acceptance_key(&self, public_key: [u8; 32], now_ms: i64) -> StoreResult<()> {
        self.write("register_acceptance_key", move |tx| {
            tx.execute(
                "INSERT INTO acceptance_keys (public_key, since_ms) VALUES (?1, ?2)
                 ON CONFLICT (public_key) DO NOTHING",
                params![public_key.to_vec(), now_ms],
            )
            .map(|_| ())
            .map_err(unavailable)
        })
        .await
    }

    async fn acceptance_keys(&self) -> StoreResult<Vec<([u8; 32], i64)>> {
        self.read(|c| {
            let mut st = c
                .prepare_cached(
                    "SELECT public_key, since_ms FROM acceptance_keys ORDER BY since_ms, public_key",
                )
                .map_err(unavailable)?;
            let rows = st
                .query_map([], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, i64>(1)?)))
                .map_err(unavailable)?;
            let mut out = Vec::new();
            for row in rows {
                let (k, at) = row.map_err(unavailable)?;
                out.push((crate::codec::acceptance_key(k)?, at));
            }
            Ok(out)
        })
        .await
    }

    async fn game(&self, game_id: &str) -> StoreResult<Option<GameRecord>> {
        let id = game_id.to_owned();
        self.read(move |c| Ok(query_games(c, "WHERE game_id = ?1", [id])?.pop()))
            .await
    }

    async fn epoch_games(&self, epoch: u64) -> StoreResult<Vec<GameRecord>> {
        self.read(move |c| query_games(c, "WHERE epoch = ?1 ORDER BY seq", [epoch as i64]))
            .await
    }

    async fn epoch_leaves(&self, epoch: u64) -> StoreResult<Vec<Vec<u8>>> {
        self.read(move |c| epoch_leaves(c, epoch)).await
    }

    async fn last_game_id(&self, epoch: u64) -> StoreResult<Option<String>> {
        self.read(move |c| {
            c.query_row(
                "SELECT game_id FROM games WHERE epoch = ?1 ORDER BY seq DESC LIMIT 1",
                [epoch as i64],
                |r| r.get(0),
            )
            .optional()
            .map_err(unavailable)
        })
        .await
    }

    async fn recent_games(&self, limit: u32) -> StoreResult<Vec<GameRecord>> {
        self.read(move |c| {
            query_games(
                c,
                "ORDER BY created_at_ms DESC, epoch DESC, seq DESC LIMIT ?1",
                [limit],
            )
        })
        .await
    }

    async fn game_counts(&self) -> StoreResult<GameCounts> {
        self.read(|c| {
            let mut counts = GameCounts::default();
            // One statement, so one snapshot: the settled totals plus what is live, each part
            // through an index. The games of the epochs not resolved yet are pending (their
            // results may be half written, see resolve_epoch); instant games are resolved.
            let mut stmt = c
                .prepare_cached(
                    "WITH live_epochs AS (
                         SELECT number FROM epochs WHERE status = 'open'
                         UNION ALL SELECT number FROM epochs WHERE status = 'closed'),
                     parts (game, total, resolved) AS (
                         SELECT game, games, games FROM game_totals
                         UNION ALL SELECT game, 1, 0 FROM games
                             WHERE epoch IN (SELECT number FROM live_epochs)
                         UNION ALL SELECT game, 1, 1 FROM games WHERE pool_index >=
                             (SELECT pool_counted_to FROM game_totals_state WHERE id = 1))
                     SELECT game, SUM(total), SUM(resolved) FROM parts GROUP BY game",
                )
                .map_err(unavailable)?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                    ))
                })
                .map_err(unavailable)?;
            for row in rows {
                let (game, total, resolved) = row.map_err(unavailable)?;
                counts.add(game, total, resolved);
            }
            Ok(counts)
        })
        .await
    }
}
