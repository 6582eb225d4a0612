//! The PostgreSQL store (`DATABASE_URL=postgres://…`): several `vrs serve` replicas may share
//! one database.
//!
//! - Tables live in the first schema of the connection's `search_path` (append
//!   `?options=-csearch_path%3Dname` to the URL to pick one). Migrations run at start-up under
//!   an advisory lock, so replicas starting together do not race.
//! - Every session runs with `synchronous_commit = on`: a commit is flushed before it returns,
//!   whatever the server's default.
//! - Game inserts are committed in groups: inserts queue on a channel and each committer task
//!   takes everything queued into one transaction, so a burst of bets shares one WAL flush and
//!   every caller is answered only after its group committed.
//! - Notary receipts are committed in groups the same way, by committers of their own
//!   (`postgres/notary.rs`).
//! - Inserting games and closing an epoch are serialised by the "epoch gate", an advisory lock
//!   per schema: an insert transaction holds it shared, a close takes it exclusive. The close
//!   therefore waits for every insert already in flight, and an insert that waited for a close
//!   reads the open epoch afterwards and joins the next one: no game lands in a closed epoch,
//!   none is dropped, whichever replica accepted it. (Row locks would do the same, `FOR SHARE`
//!   against `FOR UPDATE`, but a stream of overlapping share lockers starves the closer, which
//!   under sustained load left an epoch open for as long as the load lasted. The lock manager
//!   queues a new shared request behind a waiting exclusive one, so the gate is fair.)
//! - Acceptance order within an epoch is the identity column `id`; `seq` is written when the
//!   epoch resolves.
//! - Leadership of the epoch chain is a session advisory lock held on a dedicated connection
//!   ([`Store::try_lead`]).

mod anchor;
mod epochs;
mod games;
mod leadership;
mod log;
mod notary;
mod pool;

use leadership::LockConnection;

use pool::{
    pool_batch_from_row, pool_entry_from_row, serve_group, POOL_BATCH_COLUMNS, POOL_ENTRY_COLUMNS,
};

use games::{game_from_row, insert_games, open_for_games, GAMES_WITH_RESULTS, GAME_COLUMNS};

use epochs::{epoch_from_row, EPOCH_COLUMNS, EPOCH_GATE, RESOLVE_TIMEOUT};

use super::codec::{decode_checkpoints, join_digits, parse_combo, parse_digits};
use super::{
    AcceptanceSigner, BuildInstant, EpochRecord, GameRecord, GameResolution, NewGame, PoolBatch,
    PoolEntry, Signed, Store, StoreError, StoreResult,
};
use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_postgres::error::SqlState;
use tokio_postgres::{NoTls, Row};
use vrs_protocol::acceptance::Place;

/// Versioned migrations, applied in order; the version is the file's number.
const MIGRATIONS: &[(i64, &str)] = &[
    (1, include_str!("../../migrations/postgres/0001_init.sql")),
    (2, include_str!("../../migrations/postgres/0002_pool.sql")),
    (3, include_str!("../../migrations/postgres/0003_anchor.sql")),
    (4, include_str!("../../migrations/postgres/0004_notary.sql")),
    (
        5,
        include_str!("../../migrations/postgres/0005_payment_recovery.sql"),
    ),
    (
        6,
        include_str!("../../migrations/postgres/0006_game_totals.sql"),
    ),
    (
        7,
        include_str!("../../migrations/postgres/0007_epoch_timing.sql"),
    ),
    (
        8,
        include_str!("../../migrations/postgres/0008_acceptance.sql"),
    ),
    (
        9,
        include_str!("../../migrations/postgres/0009_game_results.sql"),
    ),
    (
        10,
        include_str!("../../migrations/postgres/0010_witnessed_log.sql"),
    ),
    (
        11,
        include_str!("../../migrations/postgres/0011_held_games.sql"),
    ),
];

/// Most inserts committed in one group.
const MAX_GROUP: usize = 1024;
/// Group committers per process: while one group waits for its flush, the next is formed.
const COMMITTERS: usize = 2;
const INSTANT_COMMITTERS: usize = 1;
/// Connections per process by default (plus one for the leader lock).
pub const DEFAULT_POOL_SIZE: usize = 16;

/// How long a connection attempt, or a wait for a pooled connection, may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long any one store operation may take before the caller hears "unavailable". The
/// server enforces the same bound on each statement (`statement_timeout`), so a statement
/// whose caller gave up does not run on.
const OP_TIMEOUT: Duration = Duration::from_secs(15);

/// Advisory lock classes (the first key); the second key is `hashtext(current_schema())`, so
/// deployments in different schemas of one database do not contend.
const MIGRATE_LOCK: i32 = 0x7672_7301;

struct InsertReq {
    game: NewGame,
    signer: Arc<AcceptanceSigner>,
    reply: oneshot::Sender<StoreResult<(u64, Signed)>>,
}

struct InstantReq {
    build: BuildInstant,
    reply: oneshot::Sender<StoreResult<Option<GameRecord>>>,
}

impl std::fmt::Debug for InstantReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InstantReq")
    }
}

#[derive(Debug)]
pub struct PgStore {
    pool: Pool,
    /// For the leader's dedicated connection.
    config: tokio_postgres::Config,
    inserts: mpsc::Sender<InsertReq>,
    instants: mpsc::Sender<InstantReq>,
    receipts: mpsc::Sender<notary::ReceiptReq>,
    schema: String,
    /// The connection a replica asks for the leader lock on, kept between attempts.
    candidate: Mutex<Option<LockConnection>>,
}

impl std::fmt::Debug for InsertReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InsertReq({})", self.game.game_id)
    }
}

/// A PostgreSQL error with its cause (tokio-postgres's own message is only the kind).
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => match std::error::Error::source(e) {
            Some(cause) => format!("{e}: {cause}"),
            None => e.to_string(),
        },
    }
}

/// Which failures are the database's (503, retry later) and which are the data's.
pub(super) fn pg_err(e: tokio_postgres::Error) -> StoreError {
    let Some(code) = e.code() else {
        // No SQLSTATE: the connection failed or closed.
        return StoreError::Unavailable(describe(&e));
    };
    if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        // A revoked grant is an outage of this service's access, not bad data.
        return StoreError::Unavailable(describe(&e));
    }
    match &code.code()[..2] {
        // Connection exceptions, authorization, transaction rollbacks (serialization,
        // deadlock), resources, lock timeouts, operator intervention (shutdown, statement
        // timeout), system and internal errors.
        "08" | "28" | "40" | "53" | "55" | "57" | "58" | "XX" => {
            StoreError::Unavailable(describe(&e))
        }
        // Integrity constraints (a duplicate id), data exceptions (a value the column refuses):
        // the rows' fault, so a group retries them one by one.
        "23" | "22" => StoreError::Conflict(describe(&e)),
        // Anything else (undefined table, syntax, privileges) means schema or setup trouble.
        _ => StoreError::Schema(describe(&e)),
    }
}

pub(super) fn pool_err(e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(e) => {
            StoreError::Unavailable(format!("cannot connect: {}", describe(&e)))
        }
        PoolError::Timeout(_) => {
            StoreError::Unavailable(format!("no database connection within {CONNECT_TIMEOUT:?}"))
        }
        other => StoreError::Unavailable(format!("no database connection: {other}")),
    }
}

/// Bounds `f` by [`OP_TIMEOUT`]: a database that stops answering is unavailable, not a hang.
pub(super) async fn timed<T>(
    what: &str,
    f: impl Future<Output = StoreResult<T>>,
) -> StoreResult<T> {
    timed_for(OP_TIMEOUT, what, f).await
}

async fn timed_for<T>(
    limit: Duration,
    what: &str,
    f: impl Future<Output = StoreResult<T>>,
) -> StoreResult<T> {
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(limit, f).await;
    vrs_observe::metrics::global()
        .store_ops
        .with(&[&what.replace(' ', "_")])
        .observe(started.elapsed().as_secs_f64());
    result.map_err(|_| StoreError::Unavailable(format!("{what}: no answer within {limit:?}")))?
}

/// Parses the URL and fixes the session settings the store relies on.
fn session_config(url: &str) -> StoreResult<tokio_postgres::Config> {
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
        StoreError::Config(format!("the database URL is not a PostgreSQL URL: {e}"))
    })?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("vrs");
    }
    // Durable commits whatever the server's default; no statement or abandoned transaction
    // outlives the caller that gave up on it.
    // The server probes and drops a silent peer too (a leader whose host died must not keep
    // its lock for the OS default of two hours).
    let ours = format!(
        "-c synchronous_commit=on -c statement_timeout={}s \
         -c idle_in_transaction_session_timeout=10s -c tcp_keepalives_idle=5 \
         -c tcp_keepalives_interval=2 -c tcp_keepalives_count=3 -c tcp_user_timeout=10000",
        OP_TIMEOUT.as_secs()
    );
    let options = match config.get_options() {
        Some(o) if !o.trim().is_empty() => format!("{o} {ours}"),
        _ => ours,
    };
    config.options(options);
    // Notice a dead peer (a leader's lock connection included) within seconds, not hours.
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(5));
    config.keepalives_interval(Duration::from_secs(2));
    config.keepalives_retries(3);
    config.tcp_user_timeout(Duration::from_secs(10));
    Ok(config)
}

impl PgStore {
    /// Connects with the default pool size, applies migrations, starts the group committers.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with_pool(url, DEFAULT_POOL_SIZE).await
    }

    /// [`PgStore::connect`] with at most `pool_size` pooled connections.
    pub async fn connect_with_pool(url: &str, pool_size: usize) -> StoreResult<Self> {
        if pool_size < 2 {
            return Err(StoreError::Config(format!(
                "the pool needs at least 2 connections (group commit and reads), not {pool_size}"
            )));
        }
        let config = session_config(url)?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Config(format!("database pool: {e}")))?;
        let schema = timed("migrations", migrate(&pool)).await?;
        let (inserts, rx) = mpsc::channel(MAX_GROUP * 8);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..COMMITTERS {
            tokio::spawn(committer(pool.clone(), Arc::clone(&rx)));
        }
        let (instants, rx) = mpsc::channel(MAX_GROUP * 8);
        let rx = Arc::new(Mutex::new(rx));
        // One: instant transactions queue on the counter row anyway, so a second committer
        // would only halve the groups.
        for _ in 0..INSTANT_COMMITTERS {
            tokio::spawn(instant_committer(pool.clone(), Arc::clone(&rx)));
        }
        let (receipts, rx) = mpsc::channel(MAX_GROUP * 8);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..notary::RECEIPT_COMMITTERS {
            tokio::spawn(notary::receipt_committer(pool.clone(), Arc::clone(&rx)));
        }
        Ok(Self {
            pool,
            config,
            inserts,
            instants,
            receipts,
            schema,
            candidate: Mutex::new(None),
        })
    }

    /// The schema holding the tables.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Client> {
        self.pool.get().await.map_err(pool_err)
    }
}

/// Applies the migrations this binary knows; refuses a database written by a newer one.
/// Returns the schema the tables live in.
async fn migrate(pool: &Pool) -> StoreResult<String> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = client.transaction().await.map_err(pg_err)?;
    let schema: Option<String> = tx
        .query_one("SELECT current_schema()", &[])
        .await
        .map_err(pg_err)?
        .get(0);
    let schema = schema.ok_or_else(|| {
        StoreError::Config(
            "no schema of the connection's search_path exists; create it or fix the URL's \
             search_path"
                .into(),
        )
    })?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
        &[&MIGRATE_LOCK],
    )
    .await
    .map_err(pg_err)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version BIGINT PRIMARY KEY, applied_at_ms BIGINT NOT NULL)",
    )
    .await
    .map_err(pg_err)?;
    let current: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
            &[],
        )
        .await
        .map_err(pg_err)?
        .get(0);
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::Schema(format!(
            "schema {schema:?} is at version {current}, newer than this binary knows \
             ({known}); run a newer vrs or point DATABASE_URL at another schema"
        )));
    }
    for (version, sql) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        tx.batch_execute(sql)
            .await
            .map_err(|e| StoreError::Schema(format!("migration {version}: {}", describe(&e))))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, applied_at_ms) VALUES ($1, $2)",
            &[version, &vrs_observe::clock::now_ms()],
        )
        .await
        .map_err(pg_err)?;
    }
    tx.commit().await.map_err(pg_err)?;
    Ok(schema)
}

/// Takes whatever inserts are queued (at least one) and commits them together, forever.
async fn committer(pool: Pool, queue: Arc<Mutex<mpsc::Receiver<InsertReq>>>) {
    while let Some(group) = next_group(&queue).await {
        commit_group(&pool, group).await;
    }
}

/// Everything queued, at least one request (waiting for it); `None` once the store is gone.
pub(super) async fn next_group<R>(queue: &Mutex<mpsc::Receiver<R>>) -> Option<Vec<R>> {
    let mut rx = queue.lock().await;
    let first = rx.recv().await?;
    let mut group = vec![first];
    while group.len() < MAX_GROUP {
        match rx.try_recv() {
            Ok(r) => group.push(r),
            Err(_) => break,
        }
    }
    vrs_observe::metrics::global()
        .store_group_size
        .observe(group.len() as f64);
    Some(group)
}

async fn instant_committer(pool: Pool, queue: Arc<Mutex<mpsc::Receiver<InstantReq>>>) {
    while let Some(group) = next_group(&queue).await {
        let builds: Vec<&BuildInstant> = group.iter().map(|r| &r.build).collect();
        match timed("serve instant bets", serve_group(&pool, &builds)).await {
            Ok(served) => {
                let mut served = served.into_iter();
                for r in group {
                    let _ = r.reply.send(Ok(served.next().flatten()));
                }
            }
            Err(e) if group.len() == 1 || matches!(e, StoreError::Unavailable(_)) => {
                for r in group {
                    let _ = r.reply.send(Err(e.clone()));
                }
            }
            Err(_) => {
                for r in group {
                    let one = timed("serve instant bet", serve_group(&pool, &[&r.build])).await;
                    let _ = r.reply.send(one.map(|mut v| v.pop().flatten()));
                }
            }
        }
    }
}

/// One transaction for the group; if a row is refused (a duplicate id), each is retried on its
/// own so one bad row cannot fail the others.
async fn commit_group(pool: &Pool, group: Vec<InsertReq>) {
    let games: Vec<(&NewGame, &AcceptanceSigner)> =
        group.iter().map(|r| (&r.game, &*r.signer)).collect();
    match timed("insert", insert_games(pool, &games)).await {
        Ok((epoch, signed)) => {
            for (r, s) in group.into_iter().zip(signed) {
                let _ = r.reply.send(Ok((epoch, s)));
            }
        }
        Err(e) if group.len() == 1 || matches!(e, StoreError::Unavailable(_)) => {
            for r in group {
                let _ = r.reply.send(Err(e.clone()));
            }
        }
        Err(_) => {
            for r in group {
                let one = timed("insert", insert_games(pool, &[(&r.game, &*r.signer)])).await;
                let one = one.and_then(|(epoch, mut signed)| {
                    signed
                        .pop()
                        .map(|s| (epoch, s))
                        .ok_or_else(|| StoreError::Corrupt("an insert signed nothing".into()))
                });
                let _ = r.reply.send(one);
            }
        }
    }
}

/// A READ COMMITTED transaction whatever the role's default: the epoch gate relies on each
/// statement taking a fresh snapshot after the lock wait before it.
pub(super) async fn read_committed(
    client: &mut deadpool_postgres::Client,
) -> StoreResult<deadpool_postgres::Transaction<'_>> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::ReadCommitted)
        .start()
        .await
        .map_err(pg_err)
}

pub(super) fn corrupt(e: tokio_postgres::Error) -> StoreError {
    StoreError::Corrupt(describe(&e))
}

impl PgStore {
    async fn query_epochs(
        &self,
        tail: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<EpochRecord>> {
        timed("read epochs", async {
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(&format!("SELECT {EPOCH_COLUMNS} FROM epochs {tail}"))
                .await
                .map_err(pg_err)?;
            let rows = client.query(&stmt, params).await.map_err(pg_err)?;
            rows.iter().map(epoch_from_row).collect()
        })
        .await
    }

    async fn query_games(
        &self,
        seq: &str,
        tail: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<GameRecord>> {
        timed("read games", async {
            let client = self.client().await?;
            let stmt = client
                .prepare_cached(&format!(
                    "SELECT {GAME_COLUMNS}, {seq} AS seq FROM {GAMES_WITH_RESULTS} {tail}"
                ))
                .await
                .map_err(pg_err)?;
            let rows = client.query(&stmt, params).await.map_err(pg_err)?;
            rows.iter().map(game_from_row).collect()
        })
        .await
    }

    async fn query_pool_batch(
        &self,
        tail: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Option<PoolBatch>> {
        timed("read pool batches", async {
            let client = self.client().await?;
            let row = client
                .query_opt(
                    &format!("SELECT {POOL_BATCH_COLUMNS} FROM pool_batches {tail}"),
                    params,
                )
                .await
                .map_err(pg_err)?;
            row.map(|r| pool_batch_from_row(&r)).transpose()
        })
        .await
    }

    async fn query_pool_entries(
        &self,
        tail: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> StoreResult<Vec<PoolEntry>> {
        timed("read pool entries", async {
            let client = self.client().await?;
            let rows = client
                .query(
                    &format!(
                        "SELECT {POOL_ENTRY_COLUMNS} FROM pool_entries e
                         LEFT JOIN games g ON g.pool_index = e.idx {tail}"
                    ),
                    params,
                )
                .await
                .map_err(pg_err)?;
            rows.iter().map(pool_entry_from_row).collect()
        })
        .await
    }

    async fn leaves(&self, epoch: u64) -> StoreResult<Vec<Vec<u8>>> {
        timed("read leaves", async {
            let client = self.client().await?;
            // The epoch-path leaves in acceptance order, then the bound pool-served ones in
            // pool-index order (docs/PROTOCOL.md §11).
            let stmt = client
                .prepare_cached(
                    "SELECT leaf FROM (
                         SELECT leaf, 0 AS part, id AS k FROM games WHERE epoch = $1
                         UNION ALL
                         SELECT leaf, 1, pool_index FROM games WHERE bet_epoch = $1
                     ) t ORDER BY part, k",
                )
                .await
                .map_err(pg_err)?;
            let rows = client
                .query(&stmt, &[&(epoch as i64)])
                .await
                .map_err(pg_err)?;
            rows.iter()
                .map(|r| r.try_get::<_, Vec<u8>>(0).map_err(corrupt))
                .collect()
        })
        .await
    }
}

#[async_trait]
impl Store for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    async fn ping(&self) -> StoreResult<()> {
        timed("ping", async {
            let client = self.client().await?;
            client.simple_query("SELECT 1").await.map_err(pg_err)?;
            Ok(())
        })
        .await
    }
}
