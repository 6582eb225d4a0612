//! The pool generator: keeps a reserve of precomputed VDF entries for instant bets
//! (docs/PROTOCOL.md §14). It runs on the epoch leader only, on its own rayon pool (all cores
//! but the one the epoch VDF occupies, by default), one batch at a time: each batch's seed
//! needs the previous batch's root.

use anyhow::Context;
use rand::RngCore;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use vrs_engine::batch::{self, BatchBackend, BatchKind};
use vrs_engine::group::Modulus;
use vrs_engine::pool::{self, BatchLink, Entry};
use vrs_observe::clock::now_ms;
use vrs_store::{PoolBatch, Store};

/// How the reserve is kept.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// Squarings per entry (T_pool).
    pub iterations: u64,
    /// Generator threads; 0 turns the generator off.
    pub threads: usize,
    pub batch_size: u64,
    /// Generation starts when the reserve falls below this...
    pub low_water: u64,
    /// ...and stops once it reaches this.
    pub target_depth: u64,
    /// Most entries generated per second (0: as fast as the threads go).
    pub refill_rate: u64,
    /// Whether a bet without `"instant"` takes the pool path.
    pub instant_default: bool,
    /// The batch backend entries are computed on (`None`: the fastest that runs here).
    pub batch_backend: Option<BatchKind>,
}

impl PoolConfig {
    /// No generator and no instant default (the in-process tests' router).
    pub fn disabled() -> Self {
        Self {
            iterations: 1024,
            threads: 0,
            batch_size: 256,
            low_water: 0,
            target_depth: 0,
            refill_rate: 0,
            instant_default: false,
            batch_backend: Some(BatchKind::Cpu),
        }
    }
}

/// The service-wide budget of instant bets (`--instant-rate`): a token bucket of `per_second`
/// entries refilled continuously, holding at most one second's worth. A bet that finds it
/// empty takes the epoch path: it is accepted as ever and resolves with the next epoch, so a
/// few addresses cannot drain the reserve however fast they post.
#[derive(Debug)]
pub struct InstantBudget {
    per_second: u64,
    tokens: std::sync::Mutex<(f64, Instant)>,
}

impl InstantBudget {
    /// `per_second` 0: no budget (every instant bet may take an entry while there is one).
    pub fn new(per_second: u64) -> Self {
        Self {
            per_second,
            tokens: std::sync::Mutex::new((per_second as f64, Instant::now())),
        }
    }

    /// The configured rate (0: unlimited).
    pub fn per_second(&self) -> u64 {
        self.per_second
    }

    /// Takes one entry's allowance at `now`; false when the budget is spent.
    pub fn try_take(&self, now: Instant) -> bool {
        if self.per_second == 0 {
            return true;
        }
        let Ok(mut t) = self.tokens.lock() else {
            return false;
        };
        let rate = self.per_second as f64;
        let refilled = now.saturating_duration_since(t.1).as_secs_f64() * rate;
        t.0 = (t.0 + refilled).min(rate);
        t.1 = now;
        if t.0 >= 1.0 {
            t.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

impl Default for InstantBudget {
    fn default() -> Self {
        Self::new(0)
    }
}

/// What the generator reports to `/api/v1/stats`.
#[derive(Debug, Default)]
pub struct PoolStatus {
    pub generated_since_start: AtomicU64,
    /// Entries per second over the last batch, ×1000.
    pub rate_milli: AtomicU64,
    pub batches_since_start: AtomicU64,
    /// The batch backend the generator computes on, once it has started.
    pub backend: OnceLock<String>,
}

#[derive(Debug)]
pub struct Generator {
    store: Arc<dyn Store>,
    modulus: Modulus,
    config: PoolConfig,
    status: Arc<PoolStatus>,
    /// Opened on the first batch (timing the candidates takes a moment).
    batch: Option<Arc<dyn BatchBackend>>,
    /// Whether the reserve is being refilled (between low water and the target depth).
    filling: bool,
}

impl Generator {
    pub fn new(
        store: Arc<dyn Store>,
        modulus: Modulus,
        config: PoolConfig,
        status: Arc<PoolStatus>,
    ) -> anyhow::Result<Self> {
        Ok(Self {
            store,
            modulus,
            config,
            status,
            batch: None,
            filling: true,
        })
    }

    /// The batch backend: the one configured, or the fastest that runs here. A configured
    /// one that cannot run here falls back to the fastest, with a warning. Opening one can
    /// take seconds (a GPU device, the timing of candidates): done off the async runtime.
    async fn backend(&mut self) -> anyhow::Result<Arc<dyn BatchBackend>> {
        if let Some(b) = &self.batch {
            return Ok(Arc::clone(b));
        }
        let threads = self.config.threads.max(1);
        let (configured, modulus) = (self.config.batch_backend, self.modulus.clone());
        let chosen = tokio::task::spawn_blocking(move || {
            match configured.map(|k| batch::open_with(k, threads)) {
                Some(Ok(b)) => b,
                other => {
                    if let Some(Err(e)) = other {
                        tracing::warn!(error = %e, "pool generator: the configured batch backend cannot run here; using the fastest that can");
                    }
                    let (b, notes) = batch::fastest(&modulus, threads);
                    for n in notes {
                        tracing::info!(note = %n, "pool generator: batch backend not used");
                    }
                    b
                }
            }
        })
        .await
        .context("opening the pool generator's batch backend")?;
        let b: Arc<dyn BatchBackend> = Arc::from(chosen);
        let described = format!("{} ({})", b.name(), b.describe());
        tracing::info!(backend = %described, "pool generator: batch backend");
        let _ = self.status.backend.set(described);
        self.batch = Some(Arc::clone(&b));
        Ok(b)
    }

    /// Keeps the reserve between low water and the target depth, forever. Errors are logged
    /// and retried; dropping the future stops it between batches.
    pub async fn run(&mut self) {
        if self.config.threads == 0 {
            return std::future::pending().await;
        }
        loop {
            match self.step().await {
                Ok(true) => {}
                Ok(false) => tokio::time::sleep(Duration::from_millis(200)).await,
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "pool generation failed; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Generates and commits one batch if the reserve needs it; `false` when it does not (or
    /// no epoch has resolved yet to anchor it).
    async fn step(&mut self) -> anyhow::Result<bool> {
        let counts = self.store.pool_counts().await?;
        let depth = counts.depth();
        if depth >= self.config.target_depth {
            self.filling = false;
        } else if depth <= self.config.low_water {
            self.filling = true;
        }
        if !self.filling {
            return Ok(false);
        }
        let Some(anchor) = self.store.latest_resolved_epoch().await? else {
            return Ok(false);
        };
        let anchor_y = anchor
            .output
            .map(|o| o.y)
            .with_context(|| format!("epoch {} is resolved without output", anchor.number))?;
        let last = counts.last_batch;
        let link = BatchLink {
            batch: last.as_ref().map_or(1, |b| b.number + 1),
            prev_root: last.as_ref().map_or(pool::GENESIS_ROOT, |b| b.root),
            anchor_epoch: anchor.number,
            anchor_y,
        };
        let first = last.as_ref().map_or(1, PoolBatch::end_index);
        let size = self
            .config
            .batch_size
            .min(self.config.target_depth.saturating_sub(depth))
            .max(1);
        let started = Instant::now();
        let entries = self.compute(&link, first, size).await?;
        let batch = PoolBatch {
            number: link.batch,
            first_index: first,
            size,
            prev_root: link.prev_root,
            anchor_epoch: link.anchor_epoch,
            seed: pool::batch_seed(&link),
            root: pool::batch_root(&entries),
            committed_at_ms: now_ms(),
        };
        self.store.commit_pool_batch(&batch, &entries).await?;
        let secs = started.elapsed().as_secs_f64().max(1e-6);
        self.status
            .generated_since_start
            .fetch_add(size, Ordering::Relaxed);
        vrs_observe::metrics::global().pool_generated.add(size);
        self.status
            .batches_since_start
            .fetch_add(1, Ordering::Relaxed);
        self.status
            .rate_milli
            .store((size as f64 / secs * 1000.0) as u64, Ordering::Relaxed);
        tracing::debug!(batch = batch.number, first, size, "pool batch committed");
        if self.config.refill_rate > 0 {
            let floor = Duration::from_secs_f64(size as f64 / self.config.refill_rate as f64);
            if let Some(rest) = floor.checked_sub(started.elapsed()) {
                tokio::time::sleep(rest).await;
            }
        }
        Ok(true)
    }

    /// The batch's entries, computed side by side on the batch backend.
    async fn compute(
        &mut self,
        link: &BatchLink,
        first: u64,
        size: u64,
    ) -> anyhow::Result<Vec<Entry>> {
        let seed = pool::batch_seed(link);
        let modulus = self.modulus.clone();
        let t = self.config.iterations;
        let secrets: Vec<[u8; 32]> = (0..size)
            .map(|_| {
                let mut r = [0u8; 32];
                rand::rngs::OsRng.fill_bytes(&mut r);
                r
            })
            .collect();
        let backend = self.backend().await?;
        tokio::task::spawn_blocking(move || {
            pool::compute_entries(backend.as_ref(), &modulus, &seed, first, &secrets, t)
        })
        .await
        .context("the pool generator's task failed")?
        .map_err(anyhow::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_instant_budget_holds_one_second_and_refills_at_its_rate() {
        let b = InstantBudget::new(4);
        let t0 = Instant::now();
        let taken = (0..10).filter(|_| b.try_take(t0)).count();
        assert_eq!(taken, 4, "one second's worth at once");
        assert!(
            !b.try_take(t0 + Duration::from_millis(200)),
            "0.8 of an entry"
        );
        assert!(
            b.try_take(t0 + Duration::from_millis(250)),
            "one entry after 1/4 s"
        );
        let later = t0 + Duration::from_secs(60);
        assert_eq!(
            (0..10).filter(|_| b.try_take(later)).count(),
            4,
            "never more"
        );
        let unlimited = InstantBudget::default();
        assert!((0..1000).all(|_| unlimited.try_take(t0)));
    }
}
