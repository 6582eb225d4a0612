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
mod log;
mod notary;
mod pool;

use pool::{serve_one, PoolCursor};

use games::{constraint_or_unavailable, insert_game, open_for_games};

use super::codec::{decode_checkpoints, join_digits, parse_combo, parse_digits, signed_from};
use super::{
    AcceptanceSigner, BuildInstant, GameRecord, GameResolution, IdempotencyKey, IdempotentResponse,
    NewGame, NewReceipt, Signed, Store, StoreError, StoreResult,
};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use std::collections::HashMap;
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
    (
        10,
        include_str!("../../migrations/sqlite/0010_witnessed_log.sql"),
    ),
    (
        11,
        include_str!("../../migrations/sqlite/0011_held_games.sql"),
    ),
];

/// Most inserts committed in one group.
const MAX_GROUP: usize = 1024;

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

pub(super) fn hash32(v: Vec<u8>, what: &str) -> StoreResult<[u8; 32]> {
    v.try_into()
        .map_err(|_| StoreError::Corrupt(format!("{what} is not 32 bytes")))
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
