//! Games in the embedded store: committing into the open epoch, acceptance keys, reads.

use super::*;
use crate::{AcceptanceSigner, GameCounts, GameRecord, GameStore, NewGame, Signed, StoreResult};
use async_trait::async_trait;
use rusqlite::params;
use std::sync::Arc;
use tokio::sync::oneshot;

pub(super) fn constraint_or_unavailable(e: rusqlite::Error, game_id: &str) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Conflict(format!("game {game_id} already exists"))
        }
        other => unavailable(other),
    }
}

/// The open epoch, refused once past its deadline.
pub(super) fn open_for_games(tx: &Transaction<'_>) -> StoreResult<i64> {
    let (epoch, deadline): (i64, Option<i64>) = tx
        .prepare_cached("SELECT number, deadline_ms FROM epochs WHERE status = 'open'")
        .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(unavailable)?
        .ok_or_else(|| StoreError::Conflict("no epoch is open".into()))?;
    crate::refuse_overdue(epoch as u64, deadline, vrs_observe::clock::now_ms())?;
    Ok(epoch)
}

pub(super) fn insert_game(
    tx: &Transaction<'_>,
    g: &NewGame,
    signer: &AcceptanceSigner,
) -> StoreResult<(u64, Signed)> {
    // Both statements are cached: they run once per bet, and compiling them cost as much as
    // running them.
    let epoch = open_for_games(tx)?;
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO games (game_id, request_id, game, bet_type, target, combo, amount,
                 player_id, player_seed, operator_key, created_at_ms, epoch, seq, leaf,
                 acceptance_key, acceptance_sig)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,
                 (SELECT COALESCE(MAX(seq) + 1, 0) FROM games WHERE epoch = ?12), ?13, ?14, ?15)",
        )
        .map_err(unavailable)?;
    let signed = signer.sign(Place::Epoch(epoch as u64), &g.leaf, g.created_at_ms);
    insert
        .execute(params![
            g.game_id,
            g.request_id,
            g.game,
            g.bet_type,
            g.target,
            g.combo.map(|c| join_digits(&c)),
            g.amount,
            g.player_id,
            g.player_seed,
            g.operator_key,
            g.created_at_ms,
            epoch,
            g.leaf,
            signed.public_key.as_slice(),
            signed.signature.as_slice(),
        ])
        .map_err(|e| constraint_or_unavailable(e, &g.game_id))?;
    Ok((epoch as u64, signed))
}

/// The columns `game_from_row` reads ([`GAME_NAMES`]). An epoch game's result columns count only once
/// its epoch is resolved and its games not held: resolve_epoch and resolve_held_games write
/// them in several transactions before the one that resolves the epoch or releases them.
pub(super) const GAME_COLUMNS: &str =
    "game_id, request_id, game, bet_type, target, combo, amount, \
     player_id, player_seed, operator_key, created_at_ms, epoch, seq, leaf, \
     CASE WHEN pool_index IS NOT NULL \
          OR (SELECT status = 'resolved' AND games_held = 0 FROM epochs \
              WHERE number = games.epoch) \
          THEN rng_value END AS rng_value, \
     dice, won, payout, resolved_at_ms, pool_index, acceptance_key, acceptance_sig, bet_epoch";

/// The names of [`GAME_COLUMNS`] in order. `game_from_row` reads by these names, resolved to
/// positions when it is compiled (it runs for every game of an epoch at resolution, where a
/// lookup by name would scan the column names once per value); `query_games` checks in debug
/// builds that the statement's columns are these.
pub(super) const GAME_NAMES: [&str; 23] = [
    "game_id",
    "request_id",
    "game",
    "bet_type",
    "target",
    "combo",
    "amount",
    "player_id",
    "player_seed",
    "operator_key",
    "created_at_ms",
    "epoch",
    "seq",
    "leaf",
    "rng_value",
    "dice",
    "won",
    "payout",
    "resolved_at_ms",
    "pool_index",
    "acceptance_key",
    "acceptance_sig",
    "bet_epoch",
];

/// The position of `name` in [`GAME_NAMES`]; a name not there does not compile.
pub(super) const fn game_col(name: &str) -> usize {
    let mut i = 0;
    while i < GAME_NAMES.len() {
        if same(GAME_NAMES[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("not a column of GAME_COLUMNS")
}

pub(super) const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub(super) fn game_from_row(r: &Row<'_>) -> rusqlite::Result<StoreResult<GameRecord>> {
    let combo: Option<String> = r.get(const { game_col("combo") })?;
    let combo = match parse_combo(combo.as_deref()) {
        Ok(c) => c,
        Err(e) => return Ok(Err(e)),
    };
    let game_id: String = r.get(const { game_col("game_id") })?;
    let rng_value: Option<String> = r.get(const { game_col("rng_value") })?;
    let resolution = match rng_value {
        Some(rng_value) => {
            let dice: Option<String> = r.get(const { game_col("dice") })?;
            let dice = match parse_digits(dice.as_deref().unwrap_or(""), "dice") {
                Ok(d) => d,
                Err(e) => return Ok(Err(e)),
            };
            Some(GameResolution {
                game_id: game_id.clone(),
                rng_value,
                dice,
                won: r.get::<_, Option<bool>>(const { game_col("won") })?,
                payout: r.get(const { game_col("payout") })?,
            })
        }
        None => None,
    };
    Ok(Ok(GameRecord {
        new: NewGame {
            game_id,
            request_id: r.get(const { game_col("request_id") })?,
            game: r.get(const { game_col("game") })?,
            bet_type: r.get(const { game_col("bet_type") })?,
            target: r.get(const { game_col("target") })?,
            combo,
            amount: r.get(const { game_col("amount") })?,
            player_id: r.get(const { game_col("player_id") })?,
            player_seed: r.get(const { game_col("player_seed") })?,
            operator_key: r.get(const { game_col("operator_key") })?,
            created_at_ms: r.get(const { game_col("created_at_ms") })?,
            leaf: r.get(const { game_col("leaf") })?,
            acceptance: match signed_from(
                r.get(const { game_col("acceptance_key") })?,
                r.get(const { game_col("acceptance_sig") })?,
            ) {
                Ok(a) => a,
                Err(e) => return Ok(Err(e)),
            },
        },
        epoch: r
            .get::<_, Option<i64>>(const { game_col("epoch") })?
            .map(|e| e as u64),
        pool_index: r
            .get::<_, Option<i64>>(const { game_col("pool_index") })?
            .map(|i| i as u64),
        bet_epoch: r
            .get::<_, Option<i64>>(const { game_col("bet_epoch") })?
            .map(|e| e as u64),
        seq: r
            .get::<_, Option<i64>>(const { game_col("seq") })?
            .map(|s| s as u64),
        resolved_at_ms: match resolution {
            Some(_) => r.get(const { game_col("resolved_at_ms") })?,
            None => None,
        },
        resolution,
    }))
}

pub(super) fn query_games(
    conn: &Connection,
    sql_tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<GameRecord>> {
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {GAME_COLUMNS} FROM games {sql_tail}"))
        .map_err(unavailable)?;
    debug_assert_eq!(
        stmt.column_names(),
        GAME_NAMES,
        "GAME_COLUMNS and GAME_NAMES differ"
    );
    let rows = stmt.query_map(p, game_from_row).map_err(unavailable)?;
    let mut out = Vec::new();
    for row in rows {
        out.push(row.map_err(unavailable)??);
    }
    Ok(out)
}

/// The epoch's tree: its epoch-path leaves in acceptance order, then the leaves of the
/// pool-served games bound to it in pool-index order (docs/PROTOCOL.md §11).
pub(super) fn epoch_leaves(conn: &Connection, epoch: u64) -> StoreResult<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for sql in [
        "SELECT leaf FROM games WHERE epoch = ?1 ORDER BY seq",
        "SELECT leaf FROM games WHERE bet_epoch = ?1 ORDER BY pool_index",
    ] {
        let mut stmt = conn.prepare_cached(sql).map_err(unavailable)?;
        let rows = stmt
            .query_map([epoch as i64], |r| r.get::<_, Vec<u8>>(0))
            .map_err(unavailable)?;
        for row in rows {
            out.push(row.map_err(unavailable)?);
        }
    }
    Ok(out)
}

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
            // through an index. The games of the epochs not resolved yet, or held, are pending (their
            // results may be half written, see resolve_epoch); instant games are resolved.
            let mut stmt = c
                .prepare_cached(
                    "WITH live_epochs AS (
                         SELECT number FROM epochs WHERE status = 'open'
                         UNION ALL SELECT number FROM epochs WHERE status = 'closed'
                         UNION ALL SELECT number FROM epochs WHERE games_held = 1),
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
