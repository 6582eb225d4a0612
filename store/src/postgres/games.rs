//! Games in the PostgreSQL store: committing into the open epoch, acceptance keys, reads.

use super::*;
use crate::{
    AcceptanceSigner, GameCounts, GameRecord, GameStore, NewGame, Signed, StoreError, StoreResult,
};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::oneshot;

#[async_trait]
impl GameStore for PgStore {
    async fn insert_game(
        &self,
        game: NewGame,
        signer: &Arc<AcceptanceSigner>,
    ) -> StoreResult<(u64, Signed)> {
        let (reply, rx) = oneshot::channel();
        let signer = Arc::clone(signer);
        self.inserts
            .send(InsertReq {
                game,
                signer,
                reply,
            })
            .await
            .map_err(|_| StoreError::Unavailable("the group committers have stopped".into()))?;
        rx.await
            .map_err(|_| StoreError::Unavailable("the group committers have stopped".into()))?
    }

    async fn register_acceptance_key(&self, public_key: [u8; 32], now_ms: i64) -> StoreResult<()> {
        timed("register acceptance key", async {
            let client = self.client().await?;
            client
                .execute(
                    "INSERT INTO acceptance_keys (public_key, since_ms) VALUES ($1, $2)
                     ON CONFLICT (public_key) DO NOTHING",
                    &[&public_key.as_slice(), &now_ms],
                )
                .await
                .map(|_| ())
                .map_err(pg_err)
        })
        .await
    }

    async fn acceptance_keys(&self) -> StoreResult<Vec<([u8; 32], i64)>> {
        timed("read acceptance keys", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT public_key, since_ms FROM acceptance_keys
                     ORDER BY since_ms, public_key",
                    &[],
                )
                .await
                .map_err(pg_err)?;
            rows.iter()
                .map(|r| {
                    let k: Vec<u8> = r.try_get(0).map_err(corrupt)?;
                    let at: i64 = r.try_get(1).map_err(corrupt)?;
                    Ok((crate::codec::acceptance_key(k)?, at))
                })
                .collect()
        })
        .await
    }

    async fn game(&self, game_id: &str) -> StoreResult<Option<GameRecord>> {
        Ok(self
            .query_games(SEQ_OF_ONE, "WHERE g.game_id = $1", &[&game_id])
            .await?
            .pop())
    }

    async fn epoch_games(&self, epoch: u64) -> StoreResult<Vec<GameRecord>> {
        self.query_games(
            SEQ_IN_EPOCH,
            "WHERE g.epoch = $1 ORDER BY g.id",
            &[&(epoch as i64)],
        )
        .await
    }

    async fn epoch_leaves(&self, epoch: u64) -> StoreResult<Vec<Vec<u8>>> {
        self.leaves(epoch).await
    }

    async fn last_game_id(&self, epoch: u64) -> StoreResult<Option<String>> {
        timed("read games", async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT game_id FROM games WHERE epoch = $1 ORDER BY id DESC LIMIT 1",
                    &[&(epoch as i64)],
                )
                .await
                .map_err(pg_err)?;
            Ok(row.map(|r| r.get(0)))
        })
        .await
    }

    async fn recent_games(&self, limit: u32) -> StoreResult<Vec<GameRecord>> {
        self.query_games(
            SEQ_OF_ONE,
            "ORDER BY g.created_at_ms DESC, g.id DESC LIMIT $1",
            &[&i64::from(limit)],
        )
        .await
    }

    async fn game_counts(&self) -> StoreResult<GameCounts> {
        timed("count games", async {
            let client = self.client().await?;
            // One statement, so one snapshot: the settled totals plus what is live, each part
            // through an index (ANY over an array keeps the epochs' lookups on the games'
            // epoch index). The games of the epochs not resolved yet are pending; instant games
            // are resolved.
            let stmt = client
                .prepare_cached(
                    "WITH parts (game, total, resolved) AS (
                         SELECT game, games, games FROM game_totals
                         UNION ALL SELECT game, 1, 0 FROM games WHERE epoch = ANY (ARRAY(
                             SELECT number FROM epochs WHERE status = 'open'
                             UNION ALL SELECT number FROM epochs WHERE status = 'closed'))
                         UNION ALL SELECT game, 1, 1 FROM games WHERE pool_index >=
                             (SELECT pool_counted_to FROM game_totals_state WHERE id = 1))
                     SELECT game, SUM(total)::int8, SUM(resolved)::int8 FROM parts GROUP BY game",
                )
                .await
                .map_err(pg_err)?;
            let rows = client.query(&stmt, &[]).await.map_err(pg_err)?;
            let mut counts = GameCounts::default();
            for r in rows {
                counts.add(r.get(0), r.get(1), r.get(2));
            }
            Ok(counts)
        })
        .await
    }
}
