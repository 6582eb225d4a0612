//! The leader's notary task: every `--notary-batch-ms` it seals the receipts accepted since the
//! last batch into one RFC 6962 tree; now and then it finishes x402 payments whose request's
//! process died while they settled ([`settlement::recover`]) and forgets Idempotency-Key
//! records older than their retention. One process seals at a time (the leader's lease), so
//! batch numbers and leaf orders are never contested.

use super::{settlement, Notary};
use std::sync::Arc;
use std::time::Duration;
use vrs_observe::clock::now_ms;
use vrs_store::Store;

/// Most receipts in one batch (a backlog is sealed in several, back to back).
pub const MAX_BATCH: u64 = 65_536;
/// How long an Idempotency-Key record is kept (at least the 24 hours clients are promised).
pub const IDEMPOTENCY_RETENTION_MS: i64 = 25 * 3600 * 1000;
/// How often expired Idempotency-Key records are deleted.
const PURGE_EVERY: Duration = Duration::from_secs(600);
/// Most time between two looks for abandoned payments.
const RECOVER_EVERY: Duration = Duration::from_secs(30);

#[derive(Clone, Debug)]
pub struct Sealer {
    store: Arc<dyn Store>,
    notary: Arc<Notary>,
    every: Duration,
}

impl Sealer {
    pub fn new(store: Arc<dyn Store>, notary: Arc<Notary>) -> Self {
        let every = notary.batch_every;
        Self {
            store,
            notary,
            every,
        }
    }

    /// Runs while this process leads; never returns on its own (errors are retried).
    pub async fn run(&self) {
        let mut tick = tokio::time::interval(self.every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last_purge: Option<tokio::time::Instant> = None;
        let mut last_recovery: Option<tokio::time::Instant> = None;
        let recover_every = RECOVER_EVERY.min(self.notary.recover_after / 2);
        loop {
            tick.tick().await;
            if let Some(x) = &self.notary.x402 {
                // Before sealing, so that a recovered receipt joins this batch.
                if last_recovery.is_none_or(|t| t.elapsed() >= recover_every) {
                    last_recovery = Some(tokio::time::Instant::now());
                    let store = self.store.as_ref();
                    if let Err(e) = settlement::recover(store, x, self.notary.recover_after).await {
                        tracing::warn!(error = %e, "recovering abandoned x402 payments failed; retrying");
                    }
                }
            }
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
    pub async fn seal_all(&self) -> Result<(), vrs_store::StoreError> {
        while let Some(b) = self.store.seal_notary_batch(MAX_BATCH, now_ms()).await? {
            vrs_observe::metrics::global().notary_sealed.add(b.size);
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
