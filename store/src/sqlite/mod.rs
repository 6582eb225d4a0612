//! The embedded store: SQLite (bundled) in `<data-dir>/vrs.sqlite3`, WAL journal with
//! `synchronous = FULL`, so a commit is on disk before the caller hears of it.
//!
//! All writes go through one writer thread. Game inserts that queue up while a transaction is
//! being written share the next one (group commit): one fsync for many bets, each caller
//! answered only after its group is durable. Reads use their own connections (WAL lets them
//! run beside the writer) on tokio's blocking pool.

mod anchor;
mod notary;

use super::codec::{
    decode_checkpoints, encode_checkpoints, join_digits, parse_combo, parse_digits, signed_from,
};
use super::{
    AcceptanceSigner, AnchorBatch, AnchorCounts, AnchorTx, ApiKey, BuildInstant, EpochInput,
    EpochOutput, EpochRecord, EpochStatus, GameCounts, GameRecord, GameResolution,
    IdempotencyClaim, IdempotencyKey, IdempotentResponse, Lease, NewGame, NewReceipt, NotaryBatch,
    NotaryCounts, PaymentNonce, PlanParams, PoolBatch, PoolCounts, PoolEntry, ReceiptRecord,
    SettlingPayment, Signed, Store, StoreError, StoreResult,
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
                out.push((super::codec::acceptance_key(k)?, at));
            }
            Ok(out)
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
                    let closed_at = super::close_time(
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
        // The epoch's games by id, with their game names. A closed epoch gains no games, so a
        // reader's snapshot is the set the writes below must cover.
        let stored = self
            .read(move |c| {
                require_closed(c, epoch)?;
                let mut st = c
                    .prepare_cached("SELECT game_id, rowid, game FROM games WHERE epoch = ?1")
                    .map_err(unavailable)?;
                let rows = st
                    .query_map([epoch as i64], |r| {
                        Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?)))
                    })
                    .map_err(unavailable)?;
                rows.collect::<rusqlite::Result<HashMap<String, (i64, String)>>>()
                    .map_err(unavailable)
            })
            .await?;
        let mut updates = Vec::with_capacity(games.len());
        let mut named = std::collections::HashSet::with_capacity(games.len());
        for g in games {
            match stored.get(&g.game_id) {
                Some(&(rowid, _)) if named.insert(rowid) => updates.push((rowid, g.clone())),
                _ => {
                    return Err(StoreError::Conflict(format!(
                        "game {} is not a game of epoch {epoch}, or is named twice",
                        g.game_id
                    )))
                }
            }
        }
        if updates.len() != stored.len() {
            return Err(StoreError::Conflict(format!(
                "{} games of epoch {epoch} were not resolved",
                stored.len() - updates.len()
            )));
        }
        // What the epoch adds to the settled game counts, counted here rather than in the
        // last transaction, which every queued bet waits for.
        let mut per_game: BTreeMap<String, i64> = BTreeMap::new();
        for (_, game) in stored.into_values() {
            *per_game.entry(game).or_default() += 1;
        }
        // The games in chunks of their own transactions, so that bets queued meanwhile commit
        // between them instead of waiting for one long write (an epoch of 20 000 bets took
        // 100-200 ms, every bet's p99). Readers see none of it until the last transaction
        // marks the epoch resolved (game_from_row hides a result until then); a crash in
        // between leaves results that the next attempt writes again, the same bytes. Every
        // update must find its row in this epoch: with the set checked above, that is what
        // proves the whole epoch written when the last transaction resolves it.
        let resolved_at = output.resolved_at_ms;
        let mut updates = updates.into_iter();
        loop {
            let chunk: Vec<(i64, GameResolution)> = updates.by_ref().take(RESOLVE_CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            self.write("resolve_games", move |tx| {
                require_closed(tx, epoch)?;
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
        let output = output.clone();
        self.write("resolve_epoch", move |tx| {
            require_closed(tx, epoch)?;
            tx.execute(
                "UPDATE epochs SET status = 'resolved', y = ?2, pi = ?3, l = ?4, checkpoints = ?5,
                     computation_ms = ?6, resolved_at_ms = ?7
                 WHERE number = ?1",
                params![
                    epoch as i64,
                    output.y,
                    output.pi,
                    output.l,
                    encode_checkpoints(&output.checkpoints),
                    output.computation_ms as i64,
                    output.resolved_at_ms
                ],
            )
            .map_err(unavailable)?;
            settle_game_totals(tx, &per_game)
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
            super::check_pool_link(last.as_ref(), &batch, &entries)?;
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

    async fn last_anchor_batch(&self) -> StoreResult<Option<AnchorBatch>> {
        self.read(anchor::last).await
    }

    async fn insert_anchor_batch(&self, batch: &AnchorBatch) -> StoreResult<()> {
        let batch = batch.clone();
        self.write("insert_anchor_batch", move |tx| anchor::insert(tx, &batch))
            .await
    }

    async fn anchor_batch(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| Ok(anchor::batches(c, "WHERE number = ?1", [number as i64])?.pop()))
            .await
    }

    async fn anchor_batch_for_epoch(&self, epoch: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = anchor::batches(
                c,
                "WHERE last_epoch >= ?1 ORDER BY last_epoch LIMIT 1",
                [epoch as i64],
            )?;
            Ok(found.into_iter().find(|b| b.first_epoch <= epoch))
        })
        .await
    }

    async fn anchor_batch_for_pool(&self, pool_batch: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = anchor::batches(
                c,
                "WHERE pool_to > ?1 AND pool_from <= ?1 ORDER BY pool_to LIMIT 1",
                [pool_batch as i64],
            )?;
            Ok(found.into_iter().next())
        })
        .await
    }

    async fn open_anchor_batches(&self) -> StoreResult<Vec<AnchorBatch>> {
        self.read(|c| anchor::batches(c, "WHERE status <> 'confirmed' ORDER BY number", []))
            .await
    }

    async fn record_anchor_tx(&self, tx: &AnchorTx) -> StoreResult<()> {
        let t = tx.clone();
        self.write("record_anchor_transaction", move |tx| {
            anchor::record_tx(tx, &t)
        })
        .await
    }

    async fn anchor_txs(&self, batch: u64) -> StoreResult<Vec<AnchorTx>> {
        self.read(move |c| anchor::txs(c, batch)).await
    }

    async fn confirm_anchor_batch(
        &self,
        batch: u64,
        tx_hash: [u8; 32],
        block: u64,
        now_ms: i64,
    ) -> StoreResult<()> {
        self.write("confirm_anchor_batch", move |tx| {
            anchor::confirm(tx, batch, tx_hash, block, now_ms)
        })
        .await
    }

    async fn anchor_counts(&self) -> StoreResult<AnchorCounts> {
        self.read(anchor::counts).await
    }

    async fn insert_receipt(
        &self,
        receipt: NewReceipt,
        idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
    ) -> StoreResult<()> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send(WriteReq::Bet(GroupItem::Receipt(
                Box::new((receipt, idempotency)),
                tx,
            )))
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        rx.await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<ReceiptRecord>> {
        let id = receipt_id.to_owned();
        self.read(move |c| notary::receipt(c, &id)).await
    }

    async fn seal_notary_batch(&self, max: u64, now_ms: i64) -> StoreResult<Option<NotaryBatch>> {
        self.write("seal_notary_batch", move |tx| notary::seal(tx, max, now_ms))
            .await
    }

    async fn notary_batch(&self, number: u64) -> StoreResult<Option<NotaryBatch>> {
        self.read(move |c| Ok(notary::batches(c, "WHERE number = ?1", [number as i64])?.pop()))
            .await
    }

    async fn notary_batch_leaves(&self, number: u64) -> StoreResult<Vec<[u8; 32]>> {
        self.read(move |c| notary::batch_leaves(c, number)).await
    }

    async fn notary_batches(&self, from: u64, to: u64) -> StoreResult<Vec<NotaryBatch>> {
        self.read(move |c| {
            notary::batches(
                c,
                "WHERE number >= ?1 AND number < ?2 ORDER BY number",
                [from as i64, to as i64],
            )
        })
        .await
    }

    async fn anchor_batch_for_notary(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = anchor::batches(
                c,
                "WHERE notary_to > ?1 AND notary_from <= ?1 ORDER BY notary_to LIMIT 1",
                [number as i64],
            )?;
            Ok(found.into_iter().next())
        })
        .await
    }

    async fn notary_counts(&self) -> StoreResult<NotaryCounts> {
        self.read(notary::counts).await
    }

    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        let key = key.clone();
        self.write("create_api_key", move |tx| notary::create_key(tx, &key))
            .await
    }

    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>> {
        self.read(|c| notary::keys(c, "ORDER BY created_at_ms, id", []))
            .await
    }

    async fn api_key_by_hash(&self, key_hash: [u8; 32]) -> StoreResult<Option<ApiKey>> {
        self.read(move |c| Ok(notary::keys(c, "WHERE key_hash = ?1", [key_hash.to_vec()])?.pop()))
            .await
    }

    async fn revoke_api_key(&self, id: &str, now_ms: i64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.write("revoke_api_key", move |tx| {
            notary::revoke_key(tx, &id, now_ms)
        })
        .await
    }

    async fn reserve_payment_nonce(
        &self,
        nonce: &PaymentNonce,
        now_ms: i64,
        prepared: &str,
    ) -> StoreResult<bool> {
        let (nonce, prepared) = (nonce.clone(), prepared.to_owned());
        self.write("reserve_payment_nonce", move |tx| {
            notary::reserve_nonce(tx, &nonce, now_ms, &prepared)
        })
        .await
    }

    async fn settling_payments(
        &self,
        seen_before_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<SettlingPayment>> {
        self.read(move |c| notary::settling_payments(c, seen_before_ms, limit))
            .await
    }

    async fn fail_payment_nonce(&self, nonce: &PaymentNonce, detail: &str) -> StoreResult<()> {
        let (nonce, detail) = (nonce.clone(), detail.to_owned());
        self.write("fail_payment_nonce", move |tx| {
            notary::fail_nonce(tx, &nonce, &detail)
        })
        .await
    }

    async fn claim_idempotency_key(
        &self,
        key: &IdempotencyKey,
        stale_ms: i64,
    ) -> StoreResult<IdempotencyClaim> {
        let key = key.clone();
        self.write("claim_idempotency_key", move |tx| {
            notary::claim_idempotency(tx, &key, stale_ms)
        })
        .await
    }

    async fn release_idempotency_key(&self, key: &IdempotencyKey) -> StoreResult<()> {
        let key = key.clone();
        self.write("release_idempotency_key", move |tx| {
            notary::release_idempotency(tx, &key)
        })
        .await
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> StoreResult<u64> {
        self.write("purge_idempotency_keys", move |tx| {
            notary::purge_idempotency(tx, before_ms)
        })
        .await
    }

    async fn try_lead(&self) -> StoreResult<Option<Box<dyn Lease>>> {
        Ok(Some(Box::new(DataDirLease)))
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
