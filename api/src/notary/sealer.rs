//! The leader's notary task: every `--notary-batch-ms` it seals the receipts accepted since the
//! last batch into one RFC 6962 tree, and now and then forgets Idempotency-Key records older
//! than their retention. One process seals at a time (the leader's lease), so batch numbers
//! and leaf orders are never contested.

use crate::epoch::now_ms;
use crate::store::Store;
use std::sync::Arc;
use std::time::Duration;

/// Most receipts in one batch (a backlog is sealed in several, back to back).
pub const MAX_BATCH: u64 = 65_536;
/// How long an Idempotency-Key record is kept (at least the 24 hours clients are promised).
pub const IDEMPOTENCY_RETENTION_MS: i64 = 25 * 3600 * 1000;
/// How often expired Idempotency-Key records are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(600);

#[derive(Clone, Debug)]
pub struct Sealer {
    store: Arc<dyn Store>,
    every: Duration,
}

impl Sealer {
    pub fn new(store: Arc<dyn Store>, every: Duration) -> Self {
        Self { store, every }
    }

    /// Runs while this process leads; never returns on its own (errors are retried).
    pub async fn run(&self) {
        let mut tick = tokio::time::interval(self.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_purge: Option<tokio::time::Instant> = None;
        loop {
            tick.tick().await;
            if let Err(e) = self.seal_all().await {
                tracing::warn!(error = %e, "sealing notary receipts failed; retrying");
            }
            if last_purge.is_none_or(|t| t.elapsed() >= PURGE_EVERY) {
                last_purge = Some(tokio::time::Instant::now());
                match self
                    .store
                    .purge_idempotency_keys(now_ms() - IDEMPOTENCY_RETENTION_MS)
                    .await
                {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(deleted = n, "expired Idempotency-Key records"),
                    Err(e) => tracing::warn!(error = %e, "purging Idempotency-Key records failed"),
                }
            }
        }
    }

    /// Seals every unsealed receipt (in batches of at most [`MAX_BATCH`]).
    pub async fn seal_all(&self) -> Result<(), crate::store::StoreError> {
        while let Some(b) = self.store.seal_notary_batch(MAX_BATCH, now_ms()).await? {
            tracing::debug!(
                batch = b.number,
                receipts = b.size,
                root = hex::encode(b.root),
                "notary batch sealed"
            );
            if b.size < MAX_BATCH {
                break;
            }
        }
        Ok(())
    }
}
