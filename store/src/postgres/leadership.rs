//! Leadership on the PostgreSQL store.

use super::*;
use crate::{LeaderStore, Lease, StoreResult};
use async_trait::async_trait;

/// How often the leader checks that its lock connection is alive.
pub(super) const LEASE_CHECK: Duration = Duration::from_millis(500);

pub(super) const LEADER_LOCK: i32 = 0x7672_7302;

/// A dedicated connection for the leader lock (never from the pool: the lock lives as long
/// as this session).
#[derive(Debug)]
pub(super) struct LockConnection {
    pub(super) client: tokio_postgres::Client,
    pub(super) connection: tokio::task::JoinHandle<()>,
}

impl LockConnection {
    pub(super) async fn open(config: &tokio_postgres::Config) -> StoreResult<Self> {
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
pub(super) struct PgLease {
    pub(super) lock: LockConnection,
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
impl LeaderStore for PgStore {
    async fn try_lead(&self) -> StoreResult<Option<Box<dyn Lease>>> {
        timed("leader election", async {
            let mut candidate = self.candidate.lock().await;
            let lock = match candidate.take() {
                Some(c) if !c.client.is_closed() => c,
                _ => LockConnection::open(&self.config).await?,
            };
            let won: bool = lock
                .client
                .query_one(
                    "SELECT pg_try_advisory_lock($1, hashtext(current_schema()))",
                    &[&LEADER_LOCK],
                )
                .await
                .map_err(pg_err)?
                .get(0);
            if won {
                Ok(Some(Box::new(PgLease { lock }) as Box<dyn Lease>))
            } else {
                *candidate = Some(lock);
                Ok(None)
            }
        })
        .await
    }
}
