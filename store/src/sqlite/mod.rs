//! The embedded store: SQLite (bundled) in `<data-dir>/vrs.sqlite3`, WAL journal with
//! `synchronous = FULL`, so a commit is on disk before the caller hears of it.
//!
//! All writes go through one writer thread. Game inserts that queue up while a transaction is
//! being written share the next one (group commit): one fsync for many bets, each caller
//! answered only after its group is durable. Reads use their own connections (WAL lets them
//! run beside the writer) on tokio's blocking pool.

mod anchor;
mod epochs;
mod games;
mod leadership;
mod notary;
mod pool;

use super::codec::{decode_checkpoints, join_digits, parse_combo, parse_digits, signed_from};
use super::{
    AcceptanceSigner, BuildInstant, EpochInput, EpochOutput, EpochRecord, EpochStatus, GameRecord,
    GameResolution, IdempotencyKey, IdempotentResponse, Lease, NewGame, NewReceipt, PlanParams,
    PoolBatch, PoolEntry, Signed, Store, StoreError, StoreResult,
};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;
use tokio::sync::oneshot;
use vrs_protocol::acceptance::Place;

/// Versioned migrations, applied in order; the version is the file's number.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/sqlite/0001_init.sql")),
    (2, include_str!("../../migrations/sqlite/0002_pool.sql")),
    (3, include_str!("../../migrations/sqlite/0003_anchor.sql")),
    (4, include_str!("../../migrations/sqlite/0004_notary.sql")),
    (
        5,
        include_str!("../../migrations/sqlite/0005_payment_recovery.sql"),
    ),
    (
        6,
        include_str!("../../migrations/sqlite/0006_epoch_status.sql"),
    ),
    (
        7,
        include_str!("../../migrations/sqlite/0007_game_totals.sql"),
    ),
    (
        8,
        include_str!("../../migrations/sqlite/0008_epoch_timing.sql"),
    ),
    (
        9,
        include_str!("../../migrations/sqlite/0009_acceptance.sql"),
    ),
];

/// Most inserts committed in one group.
const MAX_GROUP: usize = 1024;

/// Games resolved per write transaction: a few milliseconds of the writer, so bets queued
/// behind a large epoch's resolution wait about as long as for one group commit.
const RESOLVE_CHUNK: usize = 1000;

type WriteFn = Box<dyn FnOnce(&mut Connection) + Send>;

enum WriteReq {
    Bet(GroupItem),
    /// A transaction of its own, named for the store's metrics.
    Other(&'static str, WriteFn),
}

/// A receipt and the Idempotency-Key response stored with it.
type ReceiptWrite = (NewReceipt, Option<(IdempotencyKey, IdempotentResponse)>);

/// A write that shares a group transaction with others: a game into the open epoch, a
/// pool-served game, or a notary receipt.
enum GroupItem {
    Insert(
        Box<(NewGame, Arc<AcceptanceSigner>)>,
        oneshot::Sender<StoreResult<(u64, Signed)>>,
    ),
    Receipt(Box<ReceiptWrite>, oneshot::Sender<StoreResult<()>>),
    Instant(
        BuildInstant,
        oneshot::Sender<StoreResult<Option<GameRecord>>>,
    ),
}

enum GroupResult {
    Insert((u64, Signed)),
    Receipt,
    Instant(Option<Box<GameRecord>>),
}

impl GroupItem {
    fn apply(
        &self,
        tx: &Transaction<'_>,
        pool: &mut Option<PoolCursor>,
    ) -> StoreResult<GroupResult> {
        match self {
            Self::Insert(game, _) => insert_game(tx, &game.0, &game.1).map(GroupResult::Insert),
            Self::Receipt(r, _) => {
                notary::insert_receipt(tx, &r.0, r.1.as_ref()).map(|()| GroupResult::Receipt)
            }
            Self::Instant(build, _) => {
                let cursor = match pool {
                    Some(c) => c,
                    None => pool.insert(PoolCursor::load(tx, 1)?),
                };
                serve_one(tx, cursor, build).map(|g| GroupResult::Instant(g.map(Box::new)))
            }
        }
    }

    fn answer(self, result: StoreResult<GroupResult>) {
        match (self, result) {
            (Self::Insert(_, reply), Ok(GroupResult::Insert(e))) => {
                let _ = reply.send(Ok(e));
            }
            (Self::Instant(_, reply), Ok(GroupResult::Instant(g))) => {
                let _ = reply.send(Ok(g.map(|g| *g)));
            }
            (Self::Receipt(_, reply), Ok(GroupResult::Receipt)) => {
                let _ = reply.send(Ok(()));
            }
            (Self::Insert(_, reply), Err(e)) => {
                let _ = reply.send(Err(e));
            }
            (Self::Receipt(_, reply), Err(e)) => {
                let _ = reply.send(Err(e));
            }
            (Self::Receipt(_, reply), Ok(_)) => {
                let _ = reply.send(Err(StoreError::Corrupt("mismatched group result".into())));
            }
            (Self::Instant(_, reply), Err(e)) => {
                let _ = reply.send(Err(e));
            }
            (Self::Insert(_, reply), Ok(_)) => {
                let _ = reply.send(Err(StoreError::Corrupt("mismatched group result".into())));
            }
            (Self::Instant(_, reply), Ok(_)) => {
                let _ = reply.send(Err(StoreError::Corrupt("mismatched group result".into())));
            }
        }
    }
}

#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    /// Held for the store's lifetime: one process per data dir (the OS drops it on exit).
    /// `None` for an administrative handle ([`SqliteStore::open_admin`]).
    _lock: Option<std::fs::File>,
    writer: mpsc::Sender<WriteReq>,
    readers: Arc<Vec<Mutex<Connection>>>,
}

impl std::fmt::Debug for WriteReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Bet(GroupItem::Insert(..)) => "Insert",
            Self::Bet(GroupItem::Instant(..)) => "Instant",
            Self::Bet(GroupItem::Receipt(..)) => "Receipt",
            Self::Other(op, _) => op,
        })
    }
}

pub(super) fn unavailable(e: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

fn open_connection(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)
        .map_err(|e| unavailable(format!("cannot open {}: {e}", path.display())))?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = FULL;
         PRAGMA foreign_keys = ON;
         PRAGMA busy_timeout = 10000;",
    )
    .map_err(unavailable)?;
    // The writer caches a statement per kind of write (bets, receipts, pool serves, epochs);
    // rusqlite's default of 16 would evict the per-bet ones.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

/// Applies the migrations this binary knows; refuses a database written by a newer one.
fn migrate(conn: &mut Connection) -> StoreResult<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version INTEGER PRIMARY KEY, applied_at_ms INTEGER NOT NULL)",
    )
    .map_err(unavailable)?;
    let current: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
            [],
            |r| r.get(0),
        )
        .map_err(unavailable)?;
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::Schema(format!(
            "the database is at schema version {current}, newer than this binary knows \
             ({known}); run a newer vrs or use another --data-dir"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let tx = conn.transaction().map_err(unavailable)?;
        tx.execute_batch(sql)
            .map_err(|e| StoreError::Schema(format!("migration {version}: {e}")))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at_ms) VALUES (?1, ?2)",
            params![version, vrs_observe::clock::now_ms()],
        )
        .map_err(unavailable)?;
        tx.commit().map_err(unavailable)?;
    }
    Ok(())
}

/// Takes `<data_dir>/vrs.lock` exclusively, so two processes never run epochs on one store.
fn lock_data_dir(data_dir: &Path) -> StoreResult<std::fs::File> {
    let path = data_dir.join("vrs.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| unavailable(format!("cannot open {}: {e}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Conflict(format!(
            "{} is in use by another vrs process; stop it or use another --data-dir",
            data_dir.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(unavailable(format!("cannot lock {}: {e}", path.display())))
        }
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `data_dir` and applies migrations.
    pub fn open(data_dir: &Path) -> StoreResult<Self> {
        Self::open_with(data_dir, true)
    }

    /// Opens the store beside a running service, without its data-dir lock: for commands
    /// that only manage API keys (SQLite serialises their writes with the service's).
    pub fn open_admin(data_dir: &Path) -> StoreResult<Self> {
        Self::open_with(data_dir, false)
    }

    fn open_with(data_dir: &Path, lock: bool) -> StoreResult<Self> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            unavailable(format!(
                "cannot create data dir {}: {e}",
                data_dir.display()
            ))
        })?;
        let lock = if lock {
            Some(lock_data_dir(data_dir)?)
        } else {
            None
        };
        let path = data_dir.join("vrs.sqlite3");
        let mut conn = open_connection(&path)?;
        migrate(&mut conn)?;
        let readers = (0..2)
            .map(|_| open_connection(&path).map(Mutex::new))
            .collect::<StoreResult<Vec<_>>>()?;
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || writer_loop(conn, rx))
            .map_err(|e| unavailable(format!("cannot start the writer thread: {e}")))?;
        Ok(Self {
            path,
            _lock: lock,
            writer: tx,
            readers: Arc::new(readers),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` in one transaction on the writer thread.
    async fn write<T: Send + 'static>(
        &self,
        op: &'static str,
        f: impl FnOnce(&Transaction<'_>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let (tx, rx) = oneshot::channel();
        let job: WriteFn = Box::new(move |conn: &mut Connection| {
            let result = conn.transaction().map_err(unavailable).and_then(|t| {
                let v = f(&t)?;
                t.commit().map_err(unavailable)?;
                Ok(v)
            });
            let _ = tx.send(result);
        });
        self.writer
            .send(WriteReq::Other(op, job))
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        rx.await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    /// Runs `f` on a reader connection on the blocking pool.
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        let readers = Arc::clone(&self.readers);
        tokio::task::spawn_blocking(move || {
            // Take whichever reader is free; wait on the first if both are busy.
            for m in readers.iter() {
                if let Ok(conn) = m.try_lock() {
                    return f(&conn);
                }
            }
            let conn = readers[0]
                .lock()
                .map_err(|_| unavailable("a reader connection was poisoned"))?;
            f(&conn)
        })
        .await
        .map_err(|e| unavailable(format!("reader task failed: {e}")))?
    }
}

fn writer_loop(mut conn: Connection, rx: mpsc::Receiver<WriteReq>) {
    let mut pending: Option<WriteReq> = None;
    loop {
        let first = match pending.take() {
            Some(r) => r,
            None => match rx.recv() {
                Ok(r) => r,
                Err(_) => return, // the store was dropped
            },
        };
        match first {
            WriteReq::Other(op, job) => {
                let started = Instant::now();
                job(&mut conn);
                observe_write(op, started);
            }
            WriteReq::Bet(item) => {
                let started = Instant::now();
                let mut group = vec![item];
                while group.len() < MAX_GROUP {
                    match rx.try_recv() {
                        Ok(WriteReq::Bet(item)) => group.push(item),
                        Ok(other) => {
                            pending = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                vrs_observe::metrics::global()
                    .store_group_size
                    .observe(group.len() as f64);
                commit_group(&mut conn, group);
                observe_write("group_commit", started);
            }
        }
    }
}

fn observe_write(op: &str, started: Instant) {
    vrs_observe::metrics::global()
        .store_ops
        .with(&[op])
        .observe(started.elapsed().as_secs_f64());
}

/// Commits a group of bets in one transaction; if that fails, retries each on its own so
/// that one bad row cannot fail the others.
fn commit_group(conn: &mut Connection, group: Vec<GroupItem>) {
    let instants = group
        .iter()
        .filter(|i| matches!(i, GroupItem::Instant(..)))
        .count();
    let together = (|| {
        let tx = conn.transaction().map_err(unavailable)?;
        let mut pool = match instants {
            0 => None,
            n => Some(PoolCursor::load(&tx, n)?),
        };
        let mut results = Vec::with_capacity(group.len());
        for item in &group {
            results.push(item.apply(&tx, &mut pool)?);
        }
        if let Some(p) = &pool {
            p.finish(&tx)?;
        }
        tx.commit().map_err(unavailable)?;
        Ok::<_, StoreError>(results)
    })();
    match together {
        Ok(results) => {
            for (item, r) in group.into_iter().zip(results) {
                item.answer(Ok(r));
            }
        }
        Err(e) if group.len() == 1 => {
            if let Some(item) = group.into_iter().next() {
                item.answer(Err(e));
            }
        }
        Err(_) => {
            for item in group {
                let one = conn.transaction().map_err(unavailable).and_then(|tx| {
                    let mut pool = None;
                    let r = item.apply(&tx, &mut pool)?;
                    if let Some(p) = &pool {
                        p.finish(&tx)?;
                    }
                    tx.commit().map_err(unavailable)?;
                    Ok(r)
                });
                item.answer(one);
            }
        }
    }
}

/// The next entries to serve, read once per group transaction (the one writer thread makes
/// the counter ours until commit).
struct PoolCursor {
    next: i64,
    /// The next entries, each with its batch's commit time.
    entries: std::collections::VecDeque<(PoolEntry, i64)>,
    taken: i64,
}

impl PoolCursor {
    fn load(tx: &Transaction<'_>, want: usize) -> StoreResult<Self> {
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
    fn finish(&self, tx: &Transaction<'_>) -> StoreResult<()> {
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
fn serve_one(
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

fn constraint_or_unavailable(e: rusqlite::Error, game_id: &str) -> StoreError {
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
fn open_for_games(tx: &Transaction<'_>) -> StoreResult<i64> {
    let (epoch, deadline): (i64, Option<i64>) = tx
        .prepare_cached("SELECT number, deadline_ms FROM epochs WHERE status = 'open'")
        .and_then(|mut st| st.query_row([], |r| Ok((r.get(0)?, r.get(1)?))).optional())
        .map_err(unavailable)?
        .ok_or_else(|| StoreError::Conflict("no epoch is open".into()))?;
    super::refuse_overdue(epoch as u64, deadline, vrs_observe::clock::now_ms())?;
    Ok(epoch)
}

fn insert_game(
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

/// The columns `epoch_from_row` reads, by name.
const EPOCH_COLUMNS: &str = "number, status, modulus, opened_at_ms, closed_at_ms, iterations, \
     prev_y, bets_root, bet_count, x, y, pi, l, checkpoints, computation_ms, resolved_at_ms, \
     plan_previous, plan_iterations, plan_margin_centi, plan_rate, deadline_ms, nonce";

fn epoch_from_row(r: &Row<'_>) -> rusqlite::Result<StoreResult<EpochRecord>> {
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
    let plan = super::codec::epoch_plan(
        r.get("plan_previous")?,
        r.get("plan_iterations")?,
        r.get("plan_margin_centi")?,
        r.get("plan_rate")?,
        r.get("deadline_ms")?,
    );
    let nonce = match super::codec::nonce(r.get("nonce")?) {
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

fn query_epoch(
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

/// The columns `game_from_row` reads ([`GAME_NAMES`]). An epoch game's result columns count only once
/// its epoch is resolved: resolve_epoch writes them in several transactions before the one
/// that resolves the epoch.
const GAME_COLUMNS: &str = "game_id, request_id, game, bet_type, target, combo, amount, \
     player_id, player_seed, operator_key, created_at_ms, epoch, seq, leaf, \
     CASE WHEN pool_index IS NOT NULL \
          OR (SELECT status FROM epochs WHERE number = games.epoch) = 'resolved' \
          THEN rng_value END AS rng_value, \
     dice, won, payout, resolved_at_ms, pool_index, acceptance_key, acceptance_sig, bet_epoch";

/// The names of [`GAME_COLUMNS`] in order. `game_from_row` reads by these names, resolved to
/// positions when it is compiled (it runs for every game of an epoch at resolution, where a
/// lookup by name would scan the column names once per value); `query_games` checks in debug
/// builds that the statement's columns are these.
const GAME_NAMES: [&str; 23] = [
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
const fn game_col(name: &str) -> usize {
    let mut i = 0;
    while i < GAME_NAMES.len() {
        if same(GAME_NAMES[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("not a column of GAME_COLUMNS")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
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

fn game_from_row(r: &Row<'_>) -> rusqlite::Result<StoreResult<GameRecord>> {
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

fn query_games(
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
fn epoch_leaves(conn: &Connection, epoch: u64) -> StoreResult<Vec<Vec<u8>>> {
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

pub(super) fn hash32(v: Vec<u8>, what: &str) -> StoreResult<[u8; 32]> {
    v.try_into()
        .map_err(|_| StoreError::Corrupt(format!("{what} is not 32 bytes")))
}

/// Entry columns, with the game that consumed it (if any) joined in; read by name.
const POOL_ENTRY_COLUMNS: &str = "e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, \
     g.game_id, g.resolved_at_ms, e.secret";

fn query_pool_entries(
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
const POOL_BATCH_COLUMNS: &str =
    "number, first_index, size, prev_root, anchor_epoch, seed, root, committed_at_ms";

fn query_pool_batch(
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

/// Inserts epoch `number`, open from `opened_at_ms`, with its plan from `params` (its
/// predecessor's close and T read here, in the same transaction).
fn open_epoch(
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
            Some(super::predecessor_of(&rec, params)?)
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

fn status_of(conn: &Connection, epoch: u64) -> StoreResult<Option<EpochStatus>> {
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
fn settle_game_totals(
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
fn require_closed(conn: &Connection, epoch: u64) -> StoreResult<()> {
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

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    async fn ping(&self) -> StoreResult<()> {
        self.read(|c| c.query_row("SELECT 1", [], |_| Ok(())).map_err(unavailable))
            .await
    }
}

/// The embedded store already belongs to one process (the data-dir lock), so it always leads.
#[derive(Debug)]
struct DataDirLease;

#[async_trait]
impl Lease for DataDirLease {
    async fn lost(&mut self) {
        std::future::pending::<()>().await
    }
}
