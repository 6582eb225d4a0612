//! The epoch chain of the PostgreSQL store: opening, closing, inputs, resolution, reads.

use super::*;
use crate::{
    codec::encode_checkpoints, codec::join_digits, EpochInput, EpochOutput, EpochRecord,
    EpochStatus, EpochStore, GameResolution, PlanParams, StoreError, StoreResult,
};
use async_trait::async_trait;
use std::collections::BTreeMap;

/// The bound for resolving an epoch: one transaction writing every game of the epoch.
pub(super) const RESOLVE_TIMEOUT: Duration = Duration::from_secs(300);

/// Resolutions written per UPDATE statement.
pub(super) const RESOLVE_CHUNK: usize = 5000;

pub(super) const EPOCH_GATE: i32 = 0x7672_7303;

/// Adds a just-resolved epoch's games (`epoch_games`, per game name), and the instant games
/// served since the last call, to `game_totals` (see migration 6), in the transaction that
/// resolves the epoch. The state row is locked first, so two of these take turns;
/// `next_index` is read once, and every instant game below it is committed (each was inserted
/// in the transaction that moved it).
pub(super) async fn settle_game_totals(
    tx: &deadpool_postgres::Transaction<'_>,
    epoch_games: &BTreeMap<String, i64>,
) -> StoreResult<()> {
    let from: i64 = tx
        .query_one(
            "SELECT pool_counted_to FROM game_totals_state WHERE id = 1 FOR UPDATE",
            &[],
        )
        .await
        .map_err(pg_err)?
        .get(0);
    let to: i64 = tx
        .query_one("SELECT next_index FROM pool_state WHERE id = 1", &[])
        .await
        .map_err(pg_err)?
        .get(0);
    let (names, counts): (Vec<&str>, Vec<i64>) =
        epoch_games.iter().map(|(g, n)| (g.as_str(), *n)).unzip();
    tx.execute(
        "INSERT INTO game_totals (game, games)
         SELECT game, SUM(n)::int8 FROM (
             SELECT * FROM UNNEST($1::text[], $2::int8[]) AS e (game, n)
             UNION ALL SELECT game, 1 FROM games WHERE pool_index >= $3 AND pool_index < $4) g
         GROUP BY game
         ON CONFLICT (game) DO UPDATE SET games = game_totals.games + EXCLUDED.games",
        &[&names, &counts, &from, &to],
    )
    .await
    .map_err(pg_err)?;
    tx.execute(
        "UPDATE game_totals_state SET pool_counted_to = $1 WHERE id = 1",
        &[&to],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

pub(super) const EPOCH_COLUMNS: &str =
    "number, status, modulus, opened_at_ms, closed_at_ms, iterations, \
     prev_y, bets_root, bet_count, x, y, pi, l, checkpoints, computation_ms, resolved_at_ms, \
     plan_previous, plan_iterations, plan_margin_centi, plan_rate, deadline_ms, nonce";

pub(super) fn epoch_from_row(r: &Row) -> StoreResult<EpochRecord> {
    let get_i64 = |name: &str| r.try_get::<_, Option<i64>>(name).map_err(corrupt);
    let get_bytes = |name: &str| r.try_get::<_, Option<Vec<u8>>>(name).map_err(corrupt);
    let input = match (get_i64("iterations")?, get_bytes("bets_root")?) {
        (Some(t), Some(root)) => Some(EpochInput {
            iterations: t as u64,
            prev_y: get_bytes("prev_y")?.unwrap_or_default(),
            bets_root: root
                .try_into()
                .map_err(|_| StoreError::Corrupt("bets_root is not 32 bytes".into()))?,
            bet_count: get_i64("bet_count")?.unwrap_or(0) as u64,
            x: get_bytes("x")?.unwrap_or_default(),
        }),
        _ => None,
    };
    let output = match get_bytes("y")? {
        Some(y) => {
            let checkpoints: Option<String> = r.try_get("checkpoints").map_err(corrupt)?;
            Some(EpochOutput {
                y,
                pi: get_bytes("pi")?.unwrap_or_default(),
                l: get_bytes("l")?.unwrap_or_default(),
                checkpoints: decode_checkpoints(checkpoints.as_deref().unwrap_or("[]"))?,
                computation_ms: get_i64("computation_ms")?.unwrap_or(0) as u64,
                resolved_at_ms: get_i64("resolved_at_ms")?.unwrap_or(0),
            })
        }
        None => None,
    };
    let status: String = r.try_get("status").map_err(corrupt)?;
    let margin: Option<i32> = r.try_get("plan_margin_centi").map_err(corrupt)?;
    Ok(EpochRecord {
        number: r.try_get::<_, i64>("number").map_err(corrupt)? as u64,
        status: crate::epoch_status(&status)?,
        modulus: r.try_get("modulus").map_err(corrupt)?,
        opened_at_ms: r.try_get("opened_at_ms").map_err(corrupt)?,
        closed_at_ms: get_i64("closed_at_ms")?,
        plan: crate::codec::epoch_plan(
            get_i64("plan_previous")?,
            get_i64("plan_iterations")?,
            margin.map(i64::from),
            get_i64("plan_rate")?,
            get_i64("deadline_ms")?,
        ),
        nonce: crate::codec::nonce(get_bytes("nonce")?)?,
        input,
        output,
    })
}

/// Inserts epoch `number`, open from `opened_at_ms`, with its plan from `params` (its
/// predecessor's close and T read in the same transaction).
pub(super) async fn open_epoch(
    tx: &deadpool_postgres::Transaction<'_>,
    number: u64,
    modulus: &str,
    opened_at_ms: i64,
    params: &PlanParams,
) -> StoreResult<()> {
    let previous = params.previous(number);
    let predecessor = match previous {
        0 => None,
        p => {
            let row = tx
                .query_opt(
                    &format!("SELECT {EPOCH_COLUMNS} FROM epochs WHERE number = $1"),
                    &[&(p as i64)],
                )
                .await
                .map_err(pg_err)?
                .ok_or_else(|| StoreError::Corrupt(format!("epoch {p} is missing")))?;
            Some(crate::predecessor_of(&epoch_from_row(&row)?, params)?)
        }
    };
    let plan = params.plan(number, opened_at_ms, predecessor);
    tx.execute(
        "INSERT INTO epochs (number, status, modulus, opened_at_ms, plan_previous,
             plan_iterations, plan_margin_centi, plan_rate, deadline_ms)
         VALUES ($1, 'open', $2, $3, $4, $5, $6, $7, $8)",
        &[
            &(number as i64),
            &modulus,
            &opened_at_ms,
            &(plan.previous as i64),
            &(plan.iterations as i64),
            &(plan.margin_centi as i32),
            &(plan.squarings_per_second as i64),
            &plan.deadline_ms,
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

/// The status of `epoch`, locked for the rest of the transaction (`FOR NO KEY UPDATE`: it
/// does not conflict with the key-share lock each game insert's foreign key takes).
pub(super) async fn lock_epoch(
    tx: &deadpool_postgres::Transaction<'_>,
    epoch: u64,
) -> StoreResult<EpochRecord> {
    let row = tx
        .query_opt(
            &format!("SELECT {EPOCH_COLUMNS} FROM epochs WHERE number = $1 FOR NO KEY UPDATE"),
            &[&(epoch as i64)],
        )
        .await
        .map_err(pg_err)?
        .ok_or_else(|| StoreError::Conflict(format!("epoch {epoch} does not exist")))?;
    epoch_from_row(&row)
}

/// A read-committed transaction with the resolution's statement timeout.
async fn resolving(
    client: &mut deadpool_postgres::Object,
) -> StoreResult<deadpool_postgres::Transaction<'_>> {
    let tx = read_committed(client).await?;
    tx.batch_execute(&format!(
        "SET LOCAL statement_timeout = '{}s'",
        RESOLVE_TIMEOUT.as_secs()
    ))
    .await
    .map_err(pg_err)?;
    Ok(tx)
}

/// Locks epoch `epoch`, which must be closed.
async fn require_closed(
    tx: &deadpool_postgres::Transaction<'_>,
    epoch: u64,
) -> StoreResult<EpochRecord> {
    let current = lock_epoch(tx, epoch).await?;
    if current.status != EpochStatus::Closed {
        return Err(StoreError::Conflict(format!(
            "epoch {epoch} is {}, not closed",
            current.status.as_str()
        )));
    }
    Ok(current)
}

/// Marks closed epoch `epoch` resolved with `output`, its games held or not.
async fn resolve_output(
    tx: &deadpool_postgres::Transaction<'_>,
    epoch: u64,
    output: &EpochOutput,
    held: bool,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE epochs SET status = 'resolved', y = $2, pi = $3, l = $4, checkpoints = $5,
             computation_ms = $6, resolved_at_ms = $7, games_held = $8
         WHERE number = $1",
        &[
            &(epoch as i64),
            &output.y,
            &output.pi,
            &output.l,
            &encode_checkpoints(&output.checkpoints),
            &(output.computation_ms as i64),
            &output.resolved_at_ms,
            &held,
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

/// Inserts `games`' results, resolved at `resolved_at`, and settles their counts, in the
/// caller's transaction: `games` must name each game of `epoch` once (`committed`: its
/// input's leaf count).
async fn write_results(
    tx: &deadpool_postgres::Transaction<'_>,
    epoch: u64,
    committed: Option<u64>,
    resolved_at: i64,
    games: &[GameResolution],
) -> StoreResult<()> {
    let e = epoch as i64;
    // Positions by acceptance order, then the games in chunks joined on the primary
    // key: linear in the epoch's size (a join against a window over the epoch was
    // planned as a nested loop, quadratic).
    let order = tx
        .query(
            "SELECT game_id, game FROM games WHERE epoch = $1 ORDER BY id",
            &[&e],
        )
        .await
        .map_err(pg_err)?;
    let mut seq_of = std::collections::HashMap::<String, i64>::with_capacity(order.len());
    // What the epoch adds to the settled game counts, from the same read.
    let mut per_game = BTreeMap::<String, i64>::new();
    for (seq, row) in order.iter().enumerate() {
        seq_of.insert(row.try_get::<_, String>(0).map_err(corrupt)?, seq as i64);
        *per_game
            .entry(row.try_get::<_, String>(1).map_err(corrupt)?)
            .or_default() += 1;
    }
    // The epoch's leaves are exactly those its input committed to: its own games and
    // the pool-served games bound to it (docs/PROTOCOL.md §11).
    let bound: i64 = tx
        .query_one("SELECT COUNT(*) FROM games WHERE bet_epoch = $1", &[&e])
        .await
        .map_err(pg_err)?
        .get(0);
    crate::check_resolutions(epoch, committed, &seq_of, bound as u64, games)?;
    // Inserted, not written into the games' rows (schema 9): the games table is only
    // appended to, and a result costs one row and one index entry.
    let insert = tx
        .prepare_cached(
            "INSERT INTO game_results (game_id, seq, rng_value, dice, won, payout,
                 resolved_at_ms)
                 SELECT u.game_id, u.seq, u.rng_value, u.dice, u.won, u.payout, $2
                 FROM UNNEST($3::text[], $4::int8[], $5::text[], $6::text[], $7::bool[],
                         $8::text[]) AS u (game_id, seq, rng_value, dice, won, payout)
                 JOIN games g ON g.game_id = u.game_id
                 WHERE g.epoch = $1 AND g.rng_value IS NULL
                 ON CONFLICT (game_id) DO NOTHING",
        )
        .await
        .map_err(pg_err)?;
    for chunk in games.chunks(RESOLVE_CHUNK) {
        let ids: Vec<&str> = chunk.iter().map(|g| g.game_id.as_str()).collect();
        let seqs = ids
            .iter()
            .map(|id| {
                seq_of.get(*id).copied().ok_or_else(|| {
                    StoreError::Conflict(format!("game {id} is not in epoch {epoch}"))
                })
            })
            .collect::<StoreResult<Vec<i64>>>()?;
        let values: Vec<&str> = chunk.iter().map(|g| g.rng_value.as_str()).collect();
        let dice: Vec<String> = chunk.iter().map(|g| join_digits(&g.dice)).collect();
        let won: Vec<Option<bool>> = chunk.iter().map(|g| g.won).collect();
        let payouts: Vec<Option<&str>> = chunk.iter().map(|g| g.payout.as_deref()).collect();
        let written = tx
            .execute(
                &insert,
                &[
                    &e,
                    &resolved_at,
                    &ids,
                    &seqs,
                    &values,
                    &dice,
                    &won,
                    &payouts,
                ],
            )
            .await
            .map_err(pg_err)?;
        // Every id is a game of this epoch (checked above); each must be written once.
        if written != chunk.len() as u64 {
            return Err(StoreError::Conflict(format!(
                "epoch {epoch}: {} resolutions named a game twice or one already \
                 resolved",
                chunk.len() as u64 - written.min(chunk.len() as u64)
            )));
        }
    }
    settle_game_totals(tx, &per_game).await
}

#[async_trait]
impl EpochStore for PgStore {
    async fn bootstrap(&self, modulus: &str, now_ms: i64, params: &PlanParams) -> StoreResult<()> {
        timed("bootstrap", async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg_err)?;
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
                &[&MIGRATE_LOCK],
            )
            .await
            .map_err(pg_err)?;
            let stored: Option<String> = tx
                .query_opt("SELECT value FROM meta WHERE key = 'modulus'", &[])
                .await
                .map_err(pg_err)?
                .map(|r| r.get(0));
            match stored {
                Some(m) if m != modulus => {
                    return Err(StoreError::Conflict(format!(
                        "this database holds an epoch chain over modulus {m}; start with \
                         --modulus {m} or use another database or schema"
                    )))
                }
                Some(_) => {}
                None => {
                    tx.execute(
                        "INSERT INTO meta (key, value) VALUES ('modulus', $1)",
                        &[&modulus],
                    )
                    .await
                    .map_err(pg_err)?;
                }
            }
            let open: i64 = tx
                .query_one("SELECT COUNT(*) FROM epochs WHERE status = 'open'", &[])
                .await
                .map_err(pg_err)?
                .get(0);
            if open == 0 {
                let next: i64 = tx
                    .query_one("SELECT COALESCE(MAX(number), 0) + 1 FROM epochs", &[])
                    .await
                    .map_err(pg_err)?
                    .get(0);
                open_epoch(&tx, next as u64, modulus, now_ms, params).await?;
            }
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn open_epoch(&self) -> StoreResult<EpochRecord> {
        self.query_epochs("WHERE status = 'open'", &[])
            .await?
            .pop()
            .ok_or_else(|| StoreError::Conflict("no epoch is open".into()))
    }

    async fn close_epoch(
        &self,
        epoch: u64,
        now_ms: i64,
        nonce: [u8; 32],
        next: &PlanParams,
    ) -> StoreResult<Vec<Vec<u8>>> {
        // Status only moves forward, so an epoch seen closed needs no gate (which would pause
        // inserts on every replica for nothing).
        match self.epoch(epoch).await?.map(|e| e.status) {
            Some(EpochStatus::Closed) => return self.leaves(epoch).await,
            Some(EpochStatus::Resolved) => {
                return Err(StoreError::Conflict(format!(
                    "epoch {epoch} is already resolved"
                )))
            }
            Some(EpochStatus::Open) | None => {}
        }
        timed("close epoch", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            // A stalled insert must not hold the gate, and with it every replica's bets, for
            // long: give up after a while and let the epoch loop retry.
            tx.batch_execute("SET LOCAL lock_timeout = '5s'")
                .await
                .map_err(pg_err)?;
            // Waits for every insert in flight (they hold the gate shared), so all of them
            // are committed before the epoch closes and visible to the leaves read below.
            tx.execute(
                "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
                &[&EPOCH_GATE],
            )
            .await
            .map_err(pg_err)?;
            let current = lock_epoch(&tx, epoch).await?;
            match current.status {
                EpochStatus::Open => {
                    // After the gate: every insert of this epoch has committed. Only a game
                    // stamped later than `now_ms` (another replica's clock ahead of ours) can
                    // move the close time, so only those are read: through `games_recent`,
                    // usually none, where the epoch's whole range would be read (and its hint
                    // bits written) while every replica's inserts wait on the gate.
                    let last_game: Option<i64> = tx
                        .query_one(
                            "SELECT MAX(created_at_ms) FROM games
                             WHERE created_at_ms > $2 AND (epoch = $1 OR bet_epoch = $1)",
                            &[&(epoch as i64), &now_ms],
                        )
                        .await
                        .map_err(pg_err)?
                        .get(0);
                    let closed_at = crate::close_time(
                        current.plan.as_ref(),
                        current.opened_at_ms,
                        last_game,
                        now_ms,
                    );
                    let nonce = current.plan.map(|_| nonce.to_vec());
                    tx.execute(
                        "UPDATE epochs SET status = 'closed', closed_at_ms = $2, nonce = $3
                         WHERE number = $1",
                        &[&(epoch as i64), &closed_at, &nonce],
                    )
                    .await
                    .map_err(pg_err)?;
                    // The next epoch opens now: after a stall past the deadline, the time
                    // between is no epoch's (games were refused then).
                    open_epoch(
                        &tx,
                        epoch + 1,
                        &current.modulus,
                        now_ms.max(closed_at),
                        next,
                    )
                    .await?;
                }
                EpochStatus::Closed => {}
                EpochStatus::Resolved => {
                    return Err(StoreError::Conflict(format!(
                        "epoch {epoch} is already resolved"
                    )))
                }
            }
            tx.commit().await.map_err(pg_err)
        })
        .await?;
        self.leaves(epoch).await
    }

    async fn set_epoch_input(&self, epoch: u64, input: &EpochInput) -> StoreResult<()> {
        timed("store epoch input", async {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(pg_err)?;
            let existing = lock_epoch(&tx, epoch).await?;
            if existing.status != EpochStatus::Closed {
                return Err(StoreError::Conflict(format!(
                    "epoch {epoch} is {}, not closed",
                    existing.status.as_str()
                )));
            }
            match existing.input {
                Some(prev) if prev == *input => return Ok(()),
                Some(_) => {
                    return Err(StoreError::Conflict(format!(
                        "epoch {epoch} already has a different input"
                    )))
                }
                None => {}
            }
            tx.execute(
                "UPDATE epochs SET iterations = $2, prev_y = $3, bets_root = $4, bet_count = $5,
                     x = $6
                 WHERE number = $1",
                &[
                    &(epoch as i64),
                    &(input.iterations as i64),
                    &input.prev_y,
                    &input.bets_root.as_slice(),
                    &(input.bet_count as i64),
                    &input.x,
                ],
            )
            .await
            .map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn resolve_epoch(
        &self,
        epoch: u64,
        output: &EpochOutput,
        games: &[GameResolution],
    ) -> StoreResult<()> {
        timed_for(RESOLVE_TIMEOUT, "resolve epoch", async {
            let mut client = self.client().await?;
            let tx = resolving(&mut client).await?;
            let input = require_closed(&tx, epoch).await?.input;
            resolve_output(&tx, epoch, output, false).await?;
            write_results(
                &tx,
                epoch,
                input.map(|i| i.bet_count),
                output.resolved_at_ms,
                games,
            )
            .await?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn resolve_epoch_holding_games(
        &self,
        epoch: u64,
        output: &EpochOutput,
    ) -> StoreResult<()> {
        timed("resolve epoch holding games", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            require_closed(&tx, epoch).await?;
            resolve_output(&tx, epoch, output, true).await?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn resolve_held_games(
        &self,
        epoch: u64,
        from: u64,
        games: &[GameResolution],
    ) -> StoreResult<()> {
        timed_for(RESOLVE_TIMEOUT, "resolve held games", async {
            let mut client = self.client().await?;
            let tx = resolving(&mut client).await?;
            let current = lock_epoch(&tx, epoch).await?;
            let held = tx
                .query_one(
                    "SELECT games_held FROM epochs WHERE number = $1",
                    &[&(epoch as i64)],
                )
                .await
                .map_err(pg_err)?
                .try_get::<_, bool>(0)
                .map_err(corrupt)?;
            if current.status != EpochStatus::Resolved || !held {
                return Err(StoreError::Conflict(format!(
                    "epoch {epoch}'s games are not held"
                )));
            }
            let now = vrs_observe::clock::now_ms();
            write_results(&tx, epoch, current.input.map(|i| i.bet_count), now, games).await?;
            tx.execute(
                "UPDATE epochs SET games_held = FALSE, games_from = $2 WHERE number = $1",
                &[&(epoch as i64), &(from as i64)],
            )
            .await
            .map_err(pg_err)?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn held_epochs(&self) -> StoreResult<Vec<u64>> {
        timed("held epochs", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT number FROM epochs WHERE status = 'resolved' AND games_held
                     ORDER BY number",
                    &[],
                )
                .await
                .map_err(pg_err)?;
            rows.iter()
                .map(|r| r.try_get::<_, i64>(0).map(|n| n as u64).map_err(corrupt))
                .collect()
        })
        .await
    }

    async fn games_outcome_epoch(&self, epoch: u64) -> StoreResult<Option<u64>> {
        timed("games outcome epoch", async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    "SELECT games_from FROM epochs
                     WHERE number = $1 AND status = 'resolved' AND NOT games_held",
                    &[&(epoch as i64)],
                )
                .await
                .map_err(pg_err)?;
            Ok(match row {
                None => None,
                Some(r) => Some(
                    r.try_get::<_, Option<i64>>(0)
                        .map_err(corrupt)?
                        .map_or(epoch, |f| f as u64),
                ),
            })
        })
        .await
    }

    async fn epoch(&self, epoch: u64) -> StoreResult<Option<EpochRecord>> {
        Ok(self
            .query_epochs("WHERE number = $1", &[&(epoch as i64)])
            .await?
            .pop())
    }

    async fn latest_resolved_epoch(&self) -> StoreResult<Option<EpochRecord>> {
        Ok(self
            .query_epochs(
                "WHERE status = 'resolved' ORDER BY number DESC LIMIT 1",
                &[],
            )
            .await?
            .pop())
    }

    async fn unresolved_epochs(&self) -> StoreResult<Vec<EpochRecord>> {
        self.query_epochs("WHERE status = 'closed' ORDER BY number", &[])
            .await
    }

    async fn resolved_epochs(&self, from: u64, to: u64) -> StoreResult<Vec<EpochRecord>> {
        self.query_epochs(
            "WHERE number BETWEEN $1 AND $2 AND status = 'resolved' ORDER BY number",
            &[&(from as i64), &(to as i64)],
        )
        .await
    }
}
