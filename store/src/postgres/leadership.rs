//! Leadership on the PostgreSQL store.

use super::*;
use crate::{LeaderStore, Lease, StoreResult};
use async_trait::async_trait;

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
