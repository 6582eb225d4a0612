//! Games in the PostgreSQL store: committing into the open epoch, acceptance keys, reads.

use super::*;
use crate::{
    AcceptanceSigner, GameCounts, GameRecord, GameStore, NewGame, Signed, StoreError, StoreResult,
};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::oneshot;

pub(super) const INSERT_GAMES: &str =
    "INSERT INTO games (epoch, game_id, request_id, game, bet_type, target,
         combo, amount, player_id, player_seed, operator_key, created_at_ms, leaf,
         acceptance_key, acceptance_sig)
     SELECT $1, u.* FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::int2[],
         $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int8[],
         $13::bytea[], $14::bytea[], $15::bytea[]) AS u";

/// Takes the epoch gate shared (held until commit: a close waits for this transaction, and
/// this statement waits for a close in progress; the next statement's snapshot is taken after
/// that wait, so it sees the epoch a close just opened), then the open epoch, refused once
/// past its deadline.
pub(super) async fn open_for_games(tx: &deadpool_postgres::Transaction<'_>) -> StoreResult<i64> {
    tx.execute(
        "SELECT pg_advisory_xact_lock_shared($1, hashtext(current_schema()))",
        &[&EPOCH_GATE],
    )
    .await
    .map_err(pg_err)?;
    let open = tx
        .query_opt(
            "SELECT number, deadline_ms FROM epochs WHERE status = 'open'",
            &[],
        )
        .await
        .map_err(pg_err)?
        .ok_or_else(|| StoreError::Conflict("no epoch is open".into()))?;
    let epoch: i64 = open.get(0);
    crate::refuse_overdue(epoch as u64, open.get(1), vrs_observe::clock::now_ms())?;
    Ok(epoch)
}

/// Commits `games` into the open epoch in one transaction, each signed by its signer; returns
/// the epoch and the signatures, in order.
pub(super) async fn insert_games(
    pool: &Pool,
    games: &[(&NewGame, &AcceptanceSigner)],
) -> StoreResult<(u64, Vec<Signed>)> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = read_committed(&mut client).await?;
    let epoch = open_for_games(&tx).await?;
    let signed: Vec<Signed> = games
        .iter()
        .map(|(g, signer)| signer.sign(Place::Epoch(epoch as u64), &g.leaf, g.created_at_ms))
        .collect();
    let keys: Vec<&[u8]> = signed.iter().map(|s| s.public_key.as_slice()).collect();
    let sigs: Vec<&[u8]> = signed.iter().map(|s| s.signature.as_slice()).collect();
    let games: Vec<&NewGame> = games.iter().map(|(g, _)| *g).collect();
    let col = |f: fn(&NewGame) -> Option<String>| games.iter().map(|g| f(g)).collect::<Vec<_>>();
    let game_ids = col(|g| Some(g.game_id.clone()));
    let request_ids = col(|g| Some(g.request_id.clone()));
    let names = col(|g| Some(g.game.clone()));
    let bet_types = col(|g| g.bet_type.clone());
    let targets: Vec<Option<i16>> = games.iter().map(|g| g.target.map(i16::from)).collect();
    let combos = col(|g| g.combo.map(|c| join_digits(&c)));
    let amounts = col(|g| g.amount.clone());
    let players = col(|g| Some(g.player_id.clone()));
    let seeds = col(|g| g.player_seed.clone());
    let operators = col(|g| Some(g.operator_key.clone()));
    let created: Vec<i64> = games.iter().map(|g| g.created_at_ms).collect();
    let leaves: Vec<&[u8]> = games.iter().map(|g| g.leaf.as_slice()).collect();
    let stmt = tx.prepare_cached(INSERT_GAMES).await.map_err(pg_err)?;
    tx.execute(
        &stmt,
        &[
            &epoch,
            &game_ids,
            &request_ids,
            &names,
            &bet_types,
            &targets,
            &combos,
            &amounts,
            &players,
            &seeds,
            &operators,
            &created,
            &leaves,
            &keys,
            &sigs,
        ],
    )
    .await
    .map_err(pg_err)?;
    tx.commit().await.map_err(pg_err)?;
    Ok((epoch as u64, signed))
}

/// Game columns, read `FROM` [`GAMES_WITH_RESULTS`], followed by a `seq` expression. An epoch
/// game's result is in game_results (schema 9); a pool-served game's, and one resolved before
/// schema 9, in its own row.
pub(super) const GAME_COLUMNS: &str =
    "g.game_id, g.request_id, g.game, g.bet_type, g.target, g.combo, \
     g.amount, g.player_id, g.player_seed, g.operator_key, g.created_at_ms, g.epoch, g.leaf, \
     COALESCE(r.rng_value, g.rng_value) AS rng_value, COALESCE(r.dice, g.dice) AS dice, \
     CASE WHEN r.game_id IS NULL THEN g.won ELSE r.won END AS won, \
     CASE WHEN r.game_id IS NULL THEN g.payout ELSE r.payout END AS payout, \
     COALESCE(r.resolved_at_ms, g.resolved_at_ms) AS resolved_at_ms, g.pool_index, \
     g.acceptance_key, g.acceptance_sig, g.bet_epoch";

/// The games with their results, for [`GAME_COLUMNS`]: each game's result looked up by its
/// key. As a plain join, an epoch's read was planned as a hash join over every result ever
/// stored, growing with the store (docs/PERFORMANCE.md, "PostgreSQL soak"); the LIMIT keeps
/// the subquery from being flattened into one.
pub(super) const GAMES_WITH_RESULTS: &str = "games g LEFT JOIN LATERAL (
         SELECT * FROM game_results x WHERE x.game_id = g.game_id LIMIT 1) r ON true";

/// A game's position as stored: written when its epoch resolves, NULL before.
pub(super) const SEQ_OF_ONE: &str = "COALESCE(r.seq, g.seq)";

/// Positions of a whole epoch's games in one pass (the per-row count would be quadratic).
pub(super) const SEQ_IN_EPOCH: &str = "row_number() OVER (ORDER BY g.id) - 1";

pub(super) fn game_from_row(r: &Row) -> StoreResult<GameRecord> {
    let text = |name: &str| r.try_get::<_, Option<String>>(name).map_err(corrupt);
    let game_id: String = r.try_get("game_id").map_err(corrupt)?;
    let resolution = match text("rng_value")? {
        Some(rng_value) => Some(GameResolution {
            game_id: game_id.clone(),
            rng_value,
            dice: parse_digits(text("dice")?.as_deref().unwrap_or(""), "dice")?,
            won: r.try_get("won").map_err(corrupt)?,
            payout: text("payout")?,
        }),
        None => None,
    };
    let target: Option<i16> = r.try_get("target").map_err(corrupt)?;
    Ok(GameRecord {
        new: NewGame {
            game_id,
            request_id: r.try_get("request_id").map_err(corrupt)?,
            game: r.try_get("game").map_err(corrupt)?,
            bet_type: text("bet_type")?,
            target: target
                .map(u8::try_from)
                .transpose()
                .map_err(|_| StoreError::Corrupt(format!("target {target:?}")))?,
            combo: parse_combo(text("combo")?.as_deref())?,
            amount: text("amount")?,
            player_id: r.try_get("player_id").map_err(corrupt)?,
            player_seed: text("player_seed")?,
            operator_key: r.try_get("operator_key").map_err(corrupt)?,
            created_at_ms: r.try_get("created_at_ms").map_err(corrupt)?,
            leaf: r.try_get("leaf").map_err(corrupt)?,
            acceptance: crate::codec::signed_from(
                r.try_get("acceptance_key").map_err(corrupt)?,
                r.try_get("acceptance_sig").map_err(corrupt)?,
            )?,
        },
        bet_epoch: r
            .try_get::<_, Option<i64>>("bet_epoch")
            .map_err(corrupt)?
            .map(|e| e as u64),
        epoch: r
            .try_get::<_, Option<i64>>("epoch")
            .map_err(corrupt)?
            .map(|e| e as u64),
        pool_index: r
            .try_get::<_, Option<i64>>("pool_index")
            .map_err(corrupt)?
            .map(|i| i as u64),
        seq: r
            .try_get::<_, Option<i64>>("seq")
            .map_err(corrupt)?
            .map(|s| s as u64),
        resolution,
        resolved_at_ms: r.try_get("resolved_at_ms").map_err(corrupt)?,
    })
}

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
            // epoch index). The games of the epochs not resolved yet, or held, are pending; instant games
            // are resolved.
            let stmt = client
                .prepare_cached(
                    "WITH parts (game, total, resolved) AS (
                         SELECT game, games, games FROM game_totals
                         UNION ALL SELECT game, 1, 0 FROM games WHERE epoch = ANY (ARRAY(
                             SELECT number FROM epochs WHERE status = 'open'
                             UNION ALL SELECT number FROM epochs WHERE status = 'closed'
                             UNION ALL SELECT number FROM epochs WHERE games_held))
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
