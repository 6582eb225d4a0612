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
mod notary;
mod pool;

use super::codec::{decode_checkpoints, join_digits, parse_combo, parse_digits};
use super::{
    AcceptanceSigner, BuildInstant, EpochInput, EpochOutput, EpochRecord, GameRecord,
    GameResolution, Lease, NewGame, PlanParams, PoolBatch, PoolEntry, Signed, Store, StoreError,
    StoreResult,
};
use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use std::collections::BTreeMap;
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
/// The bound for resolving an epoch: one transaction writing every game of the epoch.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(300);
/// Resolutions written per UPDATE statement.
const RESOLVE_CHUNK: usize = 5000;
/// How often the leader checks that its lock connection is alive.
const LEASE_CHECK: Duration = Duration::from_millis(500);

/// Advisory lock classes (the first key); the second key is `hashtext(current_schema())`, so
/// deployments in different schemas of one database do not contend.
const MIGRATE_LOCK: i32 = 0x7672_7301;
const LEADER_LOCK: i32 = 0x7672_7302;
const EPOCH_GATE: i32 = 0x7672_7303;
const POOL_LOCK: i32 = 0x7672_7304;

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

const INSERT_POOL_GAMES: &str = "INSERT INTO games (pool_index, resolved_at_ms, game_id,
         request_id, game, bet_type, target, combo, amount, player_id, player_seed,
         operator_key, created_at_ms, leaf, rng_value, dice, won, payout, bet_epoch,
         acceptance_key, acceptance_sig)
     SELECT u.idx, $1, u.game_id, u.request_id, u.game, u.bet_type, u.target, u.combo,
         u.amount, u.player_id, u.player_seed, u.operator_key, u.created_at_ms, u.leaf,
         u.rng_value, u.dice, u.won, u.payout, $19, u.acceptance_key, u.acceptance_sig
     FROM UNNEST($2::int8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int2[],
         $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::int8[],
         $14::bytea[], $15::text[], $16::text[], $17::bool[], $18::text[], $20::bytea[],
         $21::bytea[])
         AS u (idx, game_id, request_id, game, bet_type, target, combo, amount, player_id,
               player_seed, operator_key, created_at_ms, leaf, rng_value, dice, won, payout,
               acceptance_key, acceptance_sig)";

/// Serves the next entries, in index order, to `builds` in one transaction: the counter row
/// is locked, so replicas take turns and every entry goes to exactly one bet. Bets beyond the
/// committed entries get `None`.
async fn serve_group(
    pool: &Pool,
    builds: &[&BuildInstant],
) -> StoreResult<Vec<Option<GameRecord>>> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = read_committed(&mut client).await?;
    // The gate first, as inserts take it: served bets are bound to the open epoch's tree
    // (docs/PROTOCOL.md §14, "Binding served bets"), so its close waits for them.
    let bet_epoch = open_for_games(&tx).await?;
    let next: i64 = tx
        .query_one(
            "SELECT next_index FROM pool_state WHERE id = 1 FOR UPDATE",
            &[],
        )
        .await
        .map_err(pg_err)?
        .get(0);
    // Entries at or above the counter are unserved: no game to join (and a join against the
    // fast-growing games table can be planned as a scan).
    let next_entries = tx
        .prepare_cached(
            "SELECT e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, e.secret,
                 NULL::text AS game_id, NULL::int8 AS served_at_ms,
                 b.committed_at_ms AS batch_committed_at_ms
             FROM pool_entries e JOIN pool_batches b ON b.number = e.batch
             WHERE e.idx >= $1 AND e.idx < $2 ORDER BY e.idx",
        )
        .await
        .map_err(pg_err)?;
    let rows = tx
        .query(&next_entries, &[&next, &(next + builds.len() as i64)])
        .await
        .map_err(pg_err)?;
    let entries = rows
        .iter()
        .map(|r| {
            let committed: i64 = r.try_get("batch_committed_at_ms").map_err(corrupt)?;
            Ok((pool_entry_from_row(r)?, committed))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    let now = vrs_observe::clock::now_ms();
    let mut made = Vec::with_capacity(entries.len());
    for (build, (stored, committed_at)) in builds.iter().zip(&entries) {
        let (new, resolution) = build(&stored.entry).map_err(StoreError::Conflict)?;
        if *committed_at > new.created_at_ms {
            // Committed after this bet arrived (database clock against the replica's): not
            // for this bet, nor (younger still) the entries after it. The rest of the group
            // takes the epoch path.
            break;
        }
        made.push((stored.entry.index, new, resolution));
    }
    if !made.is_empty() {
        let col = |f: &dyn Fn(&NewGame) -> Option<String>| {
            made.iter().map(|(_, g, _)| f(g)).collect::<Vec<_>>()
        };
        let idx: Vec<i64> = made.iter().map(|(i, _, _)| *i as i64).collect();
        let ids = col(&|g| Some(g.game_id.clone()));
        let stmt = tx.prepare_cached(INSERT_POOL_GAMES).await.map_err(pg_err)?;
        tx.execute(
            &stmt,
            &[
                &now,
                &idx,
                &ids,
                &col(&|g| Some(g.request_id.clone())),
                &col(&|g| Some(g.game.clone())),
                &col(&|g| g.bet_type.clone()),
                &made
                    .iter()
                    .map(|(_, g, _)| g.target.map(i16::from))
                    .collect::<Vec<_>>(),
                &col(&|g| g.combo.map(|c| join_digits(&c))),
                &col(&|g| g.amount.clone()),
                &col(&|g| Some(g.player_id.clone())),
                &col(&|g| g.player_seed.clone()),
                &col(&|g| Some(g.operator_key.clone())),
                &made
                    .iter()
                    .map(|(_, g, _)| g.created_at_ms)
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, g, _)| g.leaf.as_slice())
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| r.rng_value.as_str())
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| join_digits(&r.dice))
                    .collect::<Vec<_>>(),
                &made.iter().map(|(_, _, r)| r.won).collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, _, r)| r.payout.as_deref())
                    .collect::<Vec<_>>(),
                &bet_epoch,
                &made
                    .iter()
                    .map(|(_, g, _)| g.acceptance.map(|a| a.public_key.to_vec()))
                    .collect::<Vec<_>>(),
                &made
                    .iter()
                    .map(|(_, g, _)| g.acceptance.map(|a| a.signature.to_vec()))
                    .collect::<Vec<_>>(),
            ],
        )
        .await
        .map_err(pg_err)?;
        tx.execute(
            "UPDATE pool_state SET next_index = next_index + $1 WHERE id = 1",
            &[&(made.len() as i64)],
        )
        .await
        .map_err(pg_err)?;
    }
    tx.commit().await.map_err(pg_err)?;
    let mut out: Vec<Option<GameRecord>> = made
        .into_iter()
        .map(|(index, new, resolution)| {
            Some(GameRecord {
                new,
                epoch: None,
                pool_index: Some(index),
                bet_epoch: Some(bet_epoch as u64),
                seq: None,
                resolution: Some(resolution),
                resolved_at_ms: Some(now),
            })
        })
        .collect();
    out.resize(builds.len(), None);
    Ok(out)
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

const INSERT_GAMES: &str = "INSERT INTO games (epoch, game_id, request_id, game, bet_type, target,
         combo, amount, player_id, player_seed, operator_key, created_at_ms, leaf,
         acceptance_key, acceptance_sig)
     SELECT $1, u.* FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::int2[],
         $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int8[],
         $13::bytea[], $14::bytea[], $15::bytea[]) AS u";

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

/// Takes the epoch gate shared (held until commit: a close waits for this transaction, and
/// this statement waits for a close in progress; the next statement's snapshot is taken after
/// that wait, so it sees the epoch a close just opened), then the open epoch, refused once
/// past its deadline.
async fn open_for_games(tx: &deadpool_postgres::Transaction<'_>) -> StoreResult<i64> {
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
    super::refuse_overdue(epoch as u64, open.get(1), vrs_observe::clock::now_ms())?;
    Ok(epoch)
}

/// Commits `games` into the open epoch in one transaction, each signed by its signer; returns
/// the epoch and the signatures, in order.
async fn insert_games(
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

/// Adds a just-resolved epoch's games (`epoch_games`, per game name), and the instant games
/// served since the last call, to `game_totals` (see migration 6), in the transaction that
/// resolves the epoch. The state row is locked first, so two of these take turns;
/// `next_index` is read once, and every instant game below it is committed (each was inserted
/// in the transaction that moved it).
async fn settle_game_totals(
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

const EPOCH_COLUMNS: &str = "number, status, modulus, opened_at_ms, closed_at_ms, iterations, \
     prev_y, bets_root, bet_count, x, y, pi, l, checkpoints, computation_ms, resolved_at_ms, \
     plan_previous, plan_iterations, plan_margin_centi, plan_rate, deadline_ms, nonce";

pub(super) fn corrupt(e: tokio_postgres::Error) -> StoreError {
    StoreError::Corrupt(describe(&e))
}

fn epoch_from_row(r: &Row) -> StoreResult<EpochRecord> {
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
        plan: super::codec::epoch_plan(
            get_i64("plan_previous")?,
            get_i64("plan_iterations")?,
            margin.map(i64::from),
            get_i64("plan_rate")?,
            get_i64("deadline_ms")?,
        ),
        nonce: super::codec::nonce(get_bytes("nonce")?)?,
        input,
        output,
    })
}

/// Game columns, followed by a `seq` expression.
const GAME_COLUMNS: &str = "g.game_id, g.request_id, g.game, g.bet_type, g.target, g.combo, \
     g.amount, g.player_id, g.player_seed, g.operator_key, g.created_at_ms, g.epoch, g.leaf, \
     g.rng_value, g.dice, g.won, g.payout, g.resolved_at_ms, g.pool_index, g.acceptance_key, \
     g.acceptance_sig, g.bet_epoch";

/// A game's position as stored: written when its epoch resolves, NULL before.
const SEQ_OF_ONE: &str = "g.seq";

/// Positions of a whole epoch's games in one pass (the per-row count would be quadratic).
const SEQ_IN_EPOCH: &str = "row_number() OVER (ORDER BY g.id) - 1";

/// Entry columns, with the game that consumed it (if any) joined in.
const POOL_ENTRY_COLUMNS: &str = "e.idx, e.batch, e.iterations, e.x, e.y, e.l, e.pi, \
     g.game_id, g.resolved_at_ms AS served_at_ms, e.secret";

fn pool_entry_from_row(r: &Row) -> StoreResult<PoolEntry> {
    Ok(PoolEntry {
        batch: r.try_get::<_, i64>("batch").map_err(corrupt)? as u64,
        entry: vrs_engine::pool::Entry {
            index: r.try_get::<_, i64>("idx").map_err(corrupt)? as u64,
            secret: r
                .try_get::<_, Vec<u8>>("secret")
                .map_err(corrupt)?
                .try_into()
                .map_err(|_| StoreError::Corrupt("pool entry secret is not 32 bytes".into()))?,
            iterations: r.try_get::<_, i64>("iterations").map_err(corrupt)? as u64,
            x: r.try_get("x").map_err(corrupt)?,
            y: r.try_get("y").map_err(corrupt)?,
            l: r.try_get("l").map_err(corrupt)?,
            pi: r.try_get("pi").map_err(corrupt)?,
        },
        game_id: r.try_get("game_id").map_err(corrupt)?,
        served_at_ms: r.try_get("served_at_ms").map_err(corrupt)?,
    })
}

const POOL_BATCH_COLUMNS: &str =
    "number, first_index, size, prev_root, anchor_epoch, seed, root, committed_at_ms";

fn pool_batch_from_row(r: &Row) -> StoreResult<PoolBatch> {
    let hash = |name: &str| -> StoreResult<[u8; 32]> {
        r.try_get::<_, Vec<u8>>(name)
            .map_err(corrupt)?
            .try_into()
            .map_err(|_| StoreError::Corrupt(format!("pool batch {name} is not 32 bytes")))
    };
    Ok(PoolBatch {
        number: r.try_get::<_, i64>("number").map_err(corrupt)? as u64,
        first_index: r.try_get::<_, i64>("first_index").map_err(corrupt)? as u64,
        size: r.try_get::<_, i64>("size").map_err(corrupt)? as u64,
        prev_root: hash("prev_root")?,
        anchor_epoch: r.try_get::<_, i64>("anchor_epoch").map_err(corrupt)? as u64,
        seed: hash("seed")?,
        root: hash("root")?,
        committed_at_ms: r.try_get("committed_at_ms").map_err(corrupt)?,
    })
}

fn game_from_row(r: &Row) -> StoreResult<GameRecord> {
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
            acceptance: super::codec::signed_from(
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

/// Inserts epoch `number`, open from `opened_at_ms`, with its plan from `params` (its
/// predecessor's close and T read in the same transaction).
async fn open_epoch(
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
            Some(super::predecessor_of(&epoch_from_row(&row)?, params)?)
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
async fn lock_epoch(
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
                    "SELECT {GAME_COLUMNS}, {seq} AS seq FROM games g {tail}"
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

/// A dedicated connection for the leader lock (never from the pool: the lock lives as long
/// as this session).
#[derive(Debug)]
struct LockConnection {
    client: tokio_postgres::Client,
    connection: tokio::task::JoinHandle<()>,
}

impl LockConnection {
    async fn open(config: &tokio_postgres::Config) -> StoreResult<Self> {
        let (client, connection) = config.connect(NoTls).await.map_err(pg_err)?;
        let connection = tokio::spawn(async move {
            let _ = connection.await;
        });
        // A leader that stops talking (a stopped process, a frozen host whose kernel still
        // answers keepalives) loses its session, and with it the lock, after 5 s. The leader
        // pings every LEASE_CHECK, so a live one is never idle that long. PostgreSQL 14+.
        if let Err(e) = client
            .batch_execute("SET idle_session_timeout = '5s'")
            .await
        {
            tracing::warn!(
                error = %describe(&e),
                "idle_session_timeout unsupported (PostgreSQL < 14): a frozen leader keeps its \
                 lock until its connection drops"
            );
        }
        Ok(Self { client, connection })
    }
}

impl Drop for LockConnection {
    fn drop(&mut self) {
        // Closing the connection releases the lock at once, even if the peer is unreachable.
        self.connection.abort();
    }
}

/// Leadership held through a session advisory lock on a dedicated connection: it lasts as
/// long as that connection, and PostgreSQL releases it the moment the connection dies.
#[derive(Debug)]
struct PgLease {
    lock: LockConnection,
}

#[async_trait]
impl Lease for PgLease {
    async fn lost(&mut self) {
        // A closed connection is lost at once; a slow answer three times in a row counts as
        // lost too (a busy moment on the server is not a failover).
        let mut misses = 0;
        loop {
            tokio::select! {
                _ = &mut self.lock.connection => return,
                _ = tokio::time::sleep(LEASE_CHECK) => {}
            }
            let answered =
                tokio::time::timeout(LEASE_CHECK * 4, self.lock.client.simple_query("SELECT 1"))
                    .await
                    .is_ok_and(|r| r.is_ok());
            if answered {
                misses = 0;
            } else {
                misses += 1;
                if misses >= 3 || self.lock.client.is_closed() {
                    return;
                }
            }
        }
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
