//! The epoch chain of the embedded store: opening, closing, inputs, resolution, reads.

use super::games::epoch_leaves;
use super::*;
use crate::{
    codec::encode_checkpoints, codec::join_digits, EpochInput, EpochOutput, EpochRecord,
    EpochStatus, EpochStore, GameResolution, PlanParams, StoreError, StoreResult,
};
use async_trait::async_trait;
use rusqlite::params;
use std::collections::BTreeMap;
use std::collections::HashMap;

/// Games resolved per write transaction: a few milliseconds of the writer, so bets queued
/// behind a large epoch's resolution wait about as long as for one group commit.
pub(super) const RESOLVE_CHUNK: usize = 1000;

/// The columns `epoch_from_row` reads, by name.
pub(super) const EPOCH_COLUMNS: &str =
    "number, status, modulus, opened_at_ms, closed_at_ms, iterations, \
     prev_y, bets_root, bet_count, x, y, pi, l, checkpoints, computation_ms, resolved_at_ms, \
     plan_previous, plan_iterations, plan_margin_centi, plan_rate, deadline_ms, nonce";

pub(super) fn epoch_from_row(r: &Row<'_>) -> rusqlite::Result<StoreResult<EpochRecord>> {
    let status: String = r.get("status")?;
    let iterations: Option<i64> = r.get("iterations")?;
    let bets_root: Option<Vec<u8>> = r.get("bets_root")?;
    let y: Option<Vec<u8>> = r.get("y")?;
    let checkpoints: Option<String> = r.get("checkpoints")?;
    let input = match (iterations, bets_root) {
        (Some(t), Some(root)) => Some((|| -> rusqlite::Result<EpochInput> {
            Ok(EpochInput {
                iterations: t as u64,
                prev_y: r.get::<_, Option<Vec<u8>>>("prev_y")?.unwrap_or_default(),
                bets_root: root.try_into().map_err(|_| {
                    rusqlite::Error::InvalidColumnType(
                        7,
                        "bets_root".into(),
                        rusqlite::types::Type::Blob,
                    )
                })?,
                bet_count: r.get::<_, Option<i64>>("bet_count")?.unwrap_or(0) as u64,
                x: r.get::<_, Option<Vec<u8>>>("x")?.unwrap_or_default(),
            })
        })()?),
        _ => None,
    };
    let output = match y {
        Some(y) => {
            let checkpoints = match decode_checkpoints(checkpoints.as_deref().unwrap_or("[]")) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            };
            Some(EpochOutput {
                y,
                pi: r.get::<_, Option<Vec<u8>>>("pi")?.unwrap_or_default(),
                l: r.get::<_, Option<Vec<u8>>>("l")?.unwrap_or_default(),
                checkpoints,
                computation_ms: r.get::<_, Option<i64>>("computation_ms")?.unwrap_or(0) as u64,
                resolved_at_ms: r.get::<_, Option<i64>>("resolved_at_ms")?.unwrap_or(0),
            })
        }
        None => None,
    };
    let status = match crate::epoch_status(&status) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    let plan = crate::codec::epoch_plan(
        r.get("plan_previous")?,
        r.get("plan_iterations")?,
        r.get("plan_margin_centi")?,
        r.get("plan_rate")?,
        r.get("deadline_ms")?,
    );
    let nonce = match crate::codec::nonce(r.get("nonce")?) {
        Ok(n) => n,
        Err(e) => return Ok(Err(e)),
    };
    Ok(Ok(EpochRecord {
        number: r.get::<_, i64>("number")? as u64,
        status,
        modulus: r.get("modulus")?,
        opened_at_ms: r.get("opened_at_ms")?,
        closed_at_ms: r.get("closed_at_ms")?,
        plan,
        nonce,
        input,
        output,
    }))
}

pub(super) fn query_epoch(
    conn: &Connection,
    sql_tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Option<EpochRecord>> {
    conn.query_row(
        &format!("SELECT {EPOCH_COLUMNS} FROM epochs {sql_tail}"),
        p,
        epoch_from_row,
    )
    .optional()
    .map_err(unavailable)?
    .transpose()
}

/// Inserts epoch `number`, open from `opened_at_ms`, with its plan from `params` (its
/// predecessor's close and T read here, in the same transaction).
pub(super) fn open_epoch(
    tx: &Transaction<'_>,
    number: u64,
    modulus: &str,
    opened_at_ms: i64,
    params: &PlanParams,
) -> StoreResult<()> {
    let previous = params.previous(number);
    let predecessor = match previous {
        0 => None,
        p => {
            let rec = query_epoch(tx, "WHERE number = ?1", [p as i64])?
                .ok_or_else(|| StoreError::Corrupt(format!("epoch {p} is missing")))?;
            Some(crate::predecessor_of(&rec, params)?)
        }
    };
    let plan = params.plan(number, opened_at_ms, predecessor);
    tx.execute(
        "INSERT INTO epochs (number, status, modulus, opened_at_ms, plan_previous,
             plan_iterations, plan_margin_centi, plan_rate, deadline_ms)
         VALUES (?1, 'open', ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            number as i64,
            modulus,
            opened_at_ms,
            plan.previous as i64,
            plan.iterations as i64,
            plan.margin_centi,
            plan.squarings_per_second as i64,
            plan.deadline_ms
        ],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn status_of(conn: &Connection, epoch: u64) -> StoreResult<Option<EpochStatus>> {
    let s: Option<String> = conn
        .query_row(
            "SELECT status FROM epochs WHERE number = ?1",
            [epoch as i64],
            |r| r.get(0),
        )
        .optional()
        .map_err(unavailable)?;
    s.map(|s| crate::epoch_status(&s)).transpose()
}

/// Adds a just-resolved epoch's games (`epoch_games`, per game name), and the instant games
/// served since the last call, to `game_totals` (see migration 7), in the transaction that
/// resolves the epoch.
pub(super) fn settle_game_totals(
    tx: &Transaction<'_>,
    epoch_games: &BTreeMap<String, i64>,
) -> StoreResult<()> {
    let (from, to): (i64, i64) = tx
        .query_row(
            "SELECT s.pool_counted_to, p.next_index
             FROM game_totals_state s, pool_state p WHERE s.id = 1 AND p.id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(unavailable)?;
    let mut add = tx
        .prepare_cached(
            "INSERT INTO game_totals (game, games) VALUES (?1, ?2)
             ON CONFLICT (game) DO UPDATE SET games = games + excluded.games",
        )
        .map_err(unavailable)?;
    for (game, n) in epoch_games {
        add.execute(params![game, n]).map_err(unavailable)?;
    }
    tx.prepare_cached(
        "INSERT INTO game_totals (game, games)
         SELECT game, COUNT(*) FROM games WHERE pool_index >= ?1 AND pool_index < ?2
         GROUP BY game
         ON CONFLICT (game) DO UPDATE SET games = games + excluded.games",
    )
    .and_then(|mut st| st.execute(params![from, to]))
    .map_err(unavailable)?;
    tx.execute(
        "UPDATE game_totals_state SET pool_counted_to = ?1 WHERE id = 1",
        [to],
    )
    .map_err(unavailable)?;
    Ok(())
}

/// Refuses unless `epoch` exists and is closed: the one state whose games may be resolved.
pub(super) fn require_closed(conn: &Connection, epoch: u64) -> StoreResult<()> {
    match status_of(conn, epoch)? {
        Some(EpochStatus::Closed) => Ok(()),
        Some(s) => Err(StoreError::Conflict(format!(
            "epoch {epoch} is {}, not closed",
            s.as_str()
        ))),
        None => Err(StoreError::Conflict(format!(
            "epoch {epoch} does not exist"
        ))),
    }
}

/// Whether the results written are of an epoch still closed or of one resolved with its
/// games held.
#[derive(Clone, Copy, Debug)]
enum Held {
    No,
    Yes,
}

fn require_held(conn: &Connection, epoch: u64) -> StoreResult<()> {
    let held: Option<(String, i64)> = conn
        .query_row(
            "SELECT status, games_held FROM epochs WHERE number = ?1",
            [epoch as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(unavailable)?;
    match held {
        Some((status, 1)) if status == "resolved" => Ok(()),
        Some(_) => Err(StoreError::Conflict(format!(
            "epoch {epoch}'s games are not held"
        ))),
        None => Err(StoreError::Conflict(format!(
            "epoch {epoch} does not exist"
        ))),
    }
}

/// Marks closed epoch `epoch` resolved with `output`, its games held or not.
fn resolve_output(
    tx: &Connection,
    epoch: u64,
    output: &EpochOutput,
    held: bool,
) -> StoreResult<()> {
    tx.execute(
        "UPDATE epochs SET status = 'resolved', y = ?2, pi = ?3, l = ?4, checkpoints = ?5,
             computation_ms = ?6, resolved_at_ms = ?7, games_held = ?8
         WHERE number = ?1",
        params![
            epoch as i64,
            output.y,
            output.pi,
            output.l,
            encode_checkpoints(&output.checkpoints),
            output.computation_ms as i64,
            output.resolved_at_ms,
            held as i64,
        ],
    )
    .map_err(unavailable)?;
    Ok(())
}

impl SqliteStore {
    /// Writes `games`' results into their rows, in chunks of their own transactions, so that
    /// bets queued meanwhile commit between them instead of waiting for one long write (an
    /// epoch of 20 000 bets took 100-200 ms, every bet's p99). Readers see none of it until
    /// the caller's last transaction resolves the epoch or releases its held games
    /// (`GAME_COLUMNS` hides a result until then); a crash in between leaves results that the
    /// next attempt writes again, the same bytes. Every update must find its row in this
    /// epoch: with the set checked first, that is what proves the whole epoch written. Returns
    /// what the epoch adds to the settled game counts, counted here rather than in the last
    /// transaction, which every queued bet waits for.
    async fn write_results(
        &self,
        epoch: u64,
        held: Held,
        resolved_at: i64,
        games: &[GameResolution],
    ) -> StoreResult<BTreeMap<String, i64>> {
        let require = move |c: &Connection| match held {
            Held::No => require_closed(c, epoch),
            Held::Yes => require_held(c, epoch),
        };
        // The epoch's games by id, with their game names, its committed count and the
        // pool-served games bound to it. A closed epoch gains no games, so a reader's snapshot
        // is the set the writes below must cover.
        let (stored, committed, bound) = self
            .read(move |c| {
                require(c)?;
                let mut st = c
                    .prepare_cached("SELECT game_id, rowid, game FROM games WHERE epoch = ?1")
                    .map_err(unavailable)?;
                let rows = st
                    .query_map([epoch as i64], |r| {
                        Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?)))
                    })
                    .map_err(unavailable)?;
                let stored = rows
                    .collect::<rusqlite::Result<HashMap<String, (i64, String)>>>()
                    .map_err(unavailable)?;
                let committed: Option<i64> = c
                    .query_row(
                        "SELECT bet_count FROM epochs WHERE number = ?1",
                        [epoch as i64],
                        |r| r.get(0),
                    )
                    .map_err(unavailable)?;
                let bound: i64 = c
                    .query_row(
                        "SELECT COUNT(*) FROM games WHERE bet_epoch = ?1",
                        [epoch as i64],
                        |r| r.get(0),
                    )
                    .map_err(unavailable)?;
                Ok((stored, committed.map(|n| n as u64), bound as u64))
            })
            .await?;
        crate::check_resolutions(epoch, committed, &stored, bound, games)?;
        let updates: Vec<(i64, GameResolution)> = games
            .iter()
            .filter_map(|g| stored.get(&g.game_id).map(|&(rowid, _)| (rowid, g.clone())))
            .collect();
        let mut per_game: BTreeMap<String, i64> = BTreeMap::new();
        for (_, game) in stored.into_values() {
            *per_game.entry(game).or_default() += 1;
        }
        let mut updates = updates.into_iter();
        loop {
            let chunk: Vec<(i64, GameResolution)> = updates.by_ref().take(RESOLVE_CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            self.write("resolve_games", move |tx| {
                require(tx)?;
                let mut stmt = tx
                    .prepare_cached(
                        "UPDATE games SET rng_value = ?2, dice = ?3, won = ?4, payout = ?5,
                             resolved_at_ms = ?6
                         WHERE rowid = ?1 AND epoch = ?7",
                    )
                    .map_err(unavailable)?;
                for (rowid, g) in &chunk {
                    let changed = stmt
                        .execute(params![
                            rowid,
                            g.rng_value,
                            join_digits(&g.dice),
                            g.won,
                            g.payout,
                            resolved_at,
                            epoch as i64,
                        ])
                        .map_err(unavailable)?;
                    if changed != 1 {
                        return Err(StoreError::Corrupt(format!(
                            "game {} of epoch {epoch} vanished while it was resolved",
                            g.game_id
                        )));
                    }
                }
                Ok(())
            })
            .await?;
        }
        Ok(per_game)
    }
}

#[async_trait]
impl EpochStore for SqliteStore {
    async fn bootstrap(&self, modulus: &str, now_ms: i64, params: &PlanParams) -> StoreResult<()> {
        let modulus = modulus.to_owned();
        let params = *params;
        self.write("bootstrap", move |tx| {
            let stored: Option<String> = tx
                .query_row("SELECT value FROM meta WHERE key = 'modulus'", [], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(unavailable)?;
            match stored {
                Some(m) if m != modulus => {
                    return Err(StoreError::Conflict(format!(
                        "this data dir holds an epoch chain over modulus {m}; start with \
                         --modulus {m} or use another --data-dir"
                    )))
                }
                Some(_) => {}
                None => {
                    tx.execute(
                        "INSERT INTO meta (key, value) VALUES ('modulus', ?1)",
                        [&modulus],
                    )
                    .map_err(unavailable)?;
                }
            }
            let open: i64 = tx
                .query_row(
                    "SELECT COUNT(*) FROM epochs WHERE status = 'open'",
                    [],
                    |r| r.get(0),
                )
                .map_err(unavailable)?;
            if open == 0 {
                let next: i64 = tx
                    .query_row("SELECT COALESCE(MAX(number), 0) + 1 FROM epochs", [], |r| {
                        r.get(0)
                    })
                    .map_err(unavailable)?;
                open_epoch(tx, next as u64, &modulus, now_ms, &params)?;
            }
            Ok(())
        })
        .await
    }

    async fn open_epoch(&self) -> StoreResult<EpochRecord> {
        self.read(|c| {
            query_epoch(c, "WHERE status = 'open'", [])?
                .ok_or_else(|| StoreError::Conflict("no epoch is open".into()))
        })
        .await
    }

    async fn close_epoch(
        &self,
        epoch: u64,
        now_ms: i64,
        nonce: [u8; 32],
        next: &PlanParams,
    ) -> StoreResult<Vec<Vec<u8>>> {
        let next = *next;
        self.write("close_epoch", move |tx| {
            match status_of(tx, epoch)? {
                Some(EpochStatus::Open) => {
                    let current = query_epoch(tx, "WHERE number = ?1", [epoch as i64])?
                        .ok_or_else(|| {
                            StoreError::Conflict(format!("epoch {epoch} does not exist"))
                        })?;
                    let last_game: Option<i64> = tx
                        .query_row(
                            "SELECT MAX(created_at_ms) FROM games
                             WHERE epoch = ?1 OR bet_epoch = ?1",
                            [epoch as i64],
                            |r| r.get(0),
                        )
                        .map_err(unavailable)?;
                    let closed_at = crate::close_time(
                        current.plan.as_ref(),
                        current.opened_at_ms,
                        last_game,
                        now_ms,
                    );
                    let nonce = current.plan.map(|_| nonce.to_vec());
                    tx.execute(
                        "UPDATE epochs SET status = 'closed', closed_at_ms = ?2, nonce = ?3
                         WHERE number = ?1",
                        params![epoch as i64, closed_at, nonce],
                    )
                    .map_err(unavailable)?;
                    // The next epoch opens now: after a stall past the deadline, the time
                    // between is no epoch's (games were refused then).
                    open_epoch(
                        tx,
                        epoch + 1,
                        &current.modulus,
                        now_ms.max(closed_at),
                        &next,
                    )?;
                }
                Some(EpochStatus::Closed) => {}
                Some(EpochStatus::Resolved) => {
                    return Err(StoreError::Conflict(format!(
                        "epoch {epoch} is already resolved"
                    )))
                }
                None => {
                    return Err(StoreError::Conflict(format!(
                        "epoch {epoch} does not exist"
                    )))
                }
            }
            Ok(())
        })
        .await?;
        // Read once the close is committed, off the writer (bets wait on it): a closed epoch
        // gains no games, so this is the set the close sealed.
        self.read(move |c| epoch_leaves(c, epoch)).await
    }

    async fn set_epoch_input(&self, epoch: u64, input: &EpochInput) -> StoreResult<()> {
        let input = input.clone();
        self.write("store_epoch_input", move |tx| {
            let existing = query_epoch(tx, "WHERE number = ?1", [epoch as i64])?
                .ok_or_else(|| StoreError::Conflict(format!("epoch {epoch} does not exist")))?;
            if existing.status != EpochStatus::Closed {
                return Err(StoreError::Conflict(format!(
                    "epoch {epoch} is {}, not closed",
                    existing.status.as_str()
                )));
            }
            match existing.input {
                Some(prev) if prev == input => Ok(()),
                Some(_) => Err(StoreError::Conflict(format!(
                    "epoch {epoch} already has a different input"
                ))),
                None => {
                    tx.execute(
                        "UPDATE epochs SET iterations = ?2, prev_y = ?3, bets_root = ?4,
                             bet_count = ?5, x = ?6
                         WHERE number = ?1",
                        params![
                            epoch as i64,
                            input.iterations as i64,
                            input.prev_y,
                            input.bets_root.to_vec(),
                            input.bet_count as i64,
                            input.x
                        ],
                    )
                    .map_err(unavailable)?;
                    Ok(())
                }
            }
        })
        .await
    }

    async fn resolve_epoch(
        &self,
        epoch: u64,
        output: &EpochOutput,
        games: &[GameResolution],
    ) -> StoreResult<()> {
        // The chunks first, hidden until the last transaction resolves the epoch.
        let per_game = self
            .write_results(epoch, Held::No, output.resolved_at_ms, games)
            .await?;
        let output = output.clone();
        self.write("resolve_epoch", move |tx| {
            require_closed(tx, epoch)?;
            resolve_output(tx, epoch, &output, false)?;
            settle_game_totals(tx, &per_game)
        })
        .await
    }

    async fn resolve_epoch_holding_games(
        &self,
        epoch: u64,
        output: &EpochOutput,
    ) -> StoreResult<()> {
        let output = output.clone();
        self.write("resolve_epoch_holding_games", move |tx| {
            require_closed(tx, epoch)?;
            resolve_output(tx, epoch, &output, true)
        })
        .await
    }

    async fn resolve_held_games(
        &self,
        epoch: u64,
        from: u64,
        games: &[GameResolution],
    ) -> StoreResult<()> {
        let per_game = self
            .write_results(epoch, Held::Yes, vrs_observe::clock::now_ms(), games)
            .await?;
        self.write("resolve_held_games", move |tx| {
            require_held(tx, epoch)?;
            tx.execute(
                "UPDATE epochs SET games_held = 0, games_from = ?2 WHERE number = ?1",
                params![epoch as i64, from as i64],
            )
            .map_err(unavailable)?;
            settle_game_totals(tx, &per_game)
        })
        .await
    }

    async fn held_epochs(&self) -> StoreResult<Vec<u64>> {
        self.read(|c| {
            let mut stmt = c
                .prepare_cached(
                    "SELECT number FROM epochs WHERE status = 'resolved' AND games_held = 1
                     ORDER BY number",
                )
                .map_err(unavailable)?;
            let rows = stmt
                .query_map([], |r| r.get::<_, i64>(0))
                .map_err(unavailable)?;
            rows.map(|r| r.map(|n| n as u64).map_err(unavailable))
                .collect()
        })
        .await
    }

    async fn games_outcome_epoch(&self, epoch: u64) -> StoreResult<Option<u64>> {
        self.read(move |c| {
            let row: Option<(String, i64, Option<i64>)> = c
                .query_row(
                    "SELECT status, games_held, games_from FROM epochs WHERE number = ?1",
                    [epoch as i64],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(unavailable)?;
            Ok(match row {
                Some((status, 0, from)) if status == "resolved" => {
                    Some(from.map_or(epoch, |f| f as u64))
                }
                _ => None,
            })
        })
        .await
    }

    async fn epoch(&self, epoch: u64) -> StoreResult<Option<EpochRecord>> {
        self.read(move |c| query_epoch(c, "WHERE number = ?1", [epoch as i64]))
            .await
    }

    async fn latest_resolved_epoch(&self) -> StoreResult<Option<EpochRecord>> {
        self.read(|c| {
            query_epoch(
                c,
                "WHERE status = 'resolved' ORDER BY number DESC LIMIT 1",
                [],
            )
        })
        .await
    }

    async fn unresolved_epochs(&self) -> StoreResult<Vec<EpochRecord>> {
        self.read(|c| {
            let mut stmt = c
                .prepare(&format!(
                    "SELECT {EPOCH_COLUMNS} FROM epochs WHERE status = 'closed' ORDER BY number"
                ))
                .map_err(unavailable)?;
            let rows = stmt.query_map([], epoch_from_row).map_err(unavailable)?;
            let mut out = Vec::new();
            for row in rows {
                out.push(row.map_err(unavailable)??);
            }
            Ok(out)
        })
        .await
    }

    async fn resolved_epochs(&self, from: u64, to: u64) -> StoreResult<Vec<EpochRecord>> {
        self.read(move |c| {
            let mut stmt = c
                .prepare_cached(&format!(
                    "SELECT {EPOCH_COLUMNS} FROM epochs
                     WHERE number BETWEEN ?1 AND ?2 AND status = 'resolved' ORDER BY number"
                ))
                .map_err(unavailable)?;
            let rows = stmt
                .query_map([from as i64, to as i64], epoch_from_row)
                .map_err(unavailable)?;
            rows.map(|r| r.map_err(unavailable)?).collect()
        })
        .await
    }
}
