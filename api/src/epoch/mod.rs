//! The epoch loop: close the open epoch → commit its bets (Merkle root) → x_e → VDF thread →
//! y_e, π → resolve every game of the epoch → repeat (docs/PROTOCOL.md, "Epochs").
//!
//! The loop is a state machine driven by what the store holds, so a stop, a crash or a
//! database error at any point resumes where it left off: a closed epoch without an input gets
//! its input (recomputed from its stored leaves, deterministically), a closed epoch with an
//! input gets its VDF run and is resolved, and otherwise the open epoch is closed once it has
//! been open for `epoch_ms`.

mod vdf_thread;

pub use vdf_thread::{Job, VdfThread, REPLAY_SEGMENTS};

use crate::group::Group;
use crate::outcome;
use crate::store::{EpochInput, EpochOutput, EpochRecord, Store, StoreError};
use anyhow::{anyhow, bail, Context};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use vrs_engine::merkle;

/// What the loop is doing, for `/health`, `/` and `/api/v1/stats`.
#[derive(Debug, Default)]
pub struct EngineStatus {
    /// Whether this process leads the epoch chain (other replicas only accept and serve).
    pub leader: AtomicBool,
    /// Epoch whose VDF is running (0: none).
    pub computing_epoch: AtomicU64,
    pub squarings_done: AtomicU64,
    pub squarings_total: AtomicU64,
    pub last_computation_ms: AtomicU64,
    pub epochs_resolved: AtomicU64,
    /// The last error the loop hit (cleared when a step succeeds).
    pub last_error: Mutex<Option<String>>,
}

impl EngineStatus {
    fn set_error(&self, e: Option<String>) {
        if let Ok(mut slot) = self.last_error.lock() {
            *slot = e;
        }
    }

    pub fn error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

/// Unix time in milliseconds (the only clock the epoch records use).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The epoch loop's configuration.
#[derive(Debug, Clone)]
pub struct EpochConfig {
    pub group: Group,
    /// T for epochs closed from now on (an epoch keeps the T recorded in its input).
    pub iterations: u64,
    /// Least time an epoch stays open for bets.
    pub epoch_ms: u64,
}

#[derive(Debug)]
pub struct EpochLoop {
    store: Arc<dyn Store>,
    config: EpochConfig,
    status: Arc<EngineStatus>,
    vdf: VdfThread,
    /// A computed output not yet stored (kept so a database error does not cost a VDF run).
    computed: Option<(u64, EpochOutput)>,
}

impl EpochLoop {
    pub fn new(
        store: Arc<dyn Store>,
        config: EpochConfig,
        status: Arc<EngineStatus>,
    ) -> anyhow::Result<Self> {
        let vdf = VdfThread::spawn(config.group.clone(), Arc::clone(&status))?;
        Ok(Self {
            store,
            config,
            status,
            vdf,
            computed: None,
        })
    }

    /// Runs the loop whenever this process holds the store's lease, until `shutdown` turns
    /// true. Replicas that do not lead ask again every `poll`; a leader whose lease is lost
    /// (its lock connection failed) stops at once and becomes a candidate again.
    /// While leading, `generator` (if any) keeps the instant-bet pool filled beside the loop.
    pub async fn lead(
        mut self,
        mut shutdown: watch::Receiver<bool>,
        poll: Duration,
        mut generator: Option<crate::pool::Generator>,
        anchorer: Option<crate::anchor::Anchorer>,
        sealer: Option<crate::notary::sealer::Sealer>,
    ) {
        loop {
            if *shutdown.borrow() {
                return;
            }
            let attempt = tokio::select! {
                r = self.store.try_lead() => r,
                _ = shutdown.changed() => return,
            };
            match attempt {
                Ok(Some(mut lease)) => {
                    self.status.leader.store(true, Ordering::Relaxed);
                    tracing::info!("this process now leads the epoch chain");
                    let generate = async {
                        match generator.as_mut() {
                            Some(g) => g.run().await,
                            None => std::future::pending().await,
                        }
                    };
                    // Its own task, so that nothing in it (a panic in the RPC client) can stop
                    // the epochs; aborted when this term ends.
                    let anchor = async {
                        if let Some(mut a) = anchorer.clone() {
                            let task = tokio::spawn(async move { a.run().await });
                            let _abort = AbortOnDrop(task.abort_handle());
                            if let Err(e) = task.await {
                                tracing::error!(error = %e, "the anchor loop stopped; anchoring resumes when this process leads again");
                            }
                        }
                        std::future::pending::<()>().await
                    };
                    let seal = async {
                        if let Some(s) = sealer.clone() {
                            let task = tokio::spawn(async move { s.run().await });
                            let _abort = AbortOnDrop(task.abort_handle());
                            if let Err(e) = task.await {
                                tracing::error!(error = %e, "the notary sealer stopped; it resumes when this process leads again");
                            }
                        }
                        std::future::pending::<()>().await
                    };
                    tokio::select! {
                        _ = self.run(&mut shutdown) => return,
                        _ = generate => {}
                        _ = anchor => {}
                        _ = seal => {}
                        _ = lease.lost() => {
                            tracing::warn!("lost the epoch lease (its database connection failed); standing by");
                        }
                    }
                    self.status.leader.store(false, Ordering::Relaxed);
                    if let Some(a) = anchorer.as_ref() {
                        a.stand_by();
                    }
                    // Its errors were the leader's; a replica reports none of its own.
                    self.status.set_error(None);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "leader election failed"),
            }
            tokio::select! {
                _ = tokio::time::sleep(poll) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// Runs until `shutdown` turns true. Errors are logged and the step retried after a pause;
    /// the loop never gives up on its own.
    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let mut backoff = Duration::from_millis(200);
        loop {
            if *shutdown.borrow() {
                return;
            }
            let result = tokio::select! {
                r = self.step() => r,
                _ = shutdown.changed() => return,
            };
            match result {
                Ok(()) => {
                    self.status.set_error(None);
                    backoff = Duration::from_millis(200);
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), retry_ms = backoff.as_millis() as u64, "epoch step failed");
                    self.status.set_error(Some(format!("{e:#}")));
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = shutdown.changed() => return,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    }

    /// Does the next thing the store's state calls for.
    async fn step(&mut self) -> anyhow::Result<()> {
        if let Some(epoch) = self.store.unresolved_epochs().await?.into_iter().next() {
            return self.finish(epoch).await;
        }
        let open = self.store.open_epoch().await?;
        let due = open.opened_at_ms + self.config.epoch_ms as i64;
        let wait = due - now_ms();
        if wait > 0 {
            tokio::time::sleep(Duration::from_millis(wait as u64)).await;
        }
        let leaves = self.store.close_epoch(open.number, now_ms()).await?;
        tracing::debug!(epoch = open.number, bets = leaves.len(), "epoch closed");
        Ok(())
    }

    /// Commits the input of a closed epoch (if not yet), runs its VDF and resolves it.
    async fn finish(&mut self, epoch: EpochRecord) -> anyhow::Result<()> {
        let e = epoch.number;
        let group = &self.config.group;
        if epoch.modulus != group.id() {
            bail!(
                "epoch {e} uses group {}, this service runs {}",
                epoch.modulus,
                group.id()
            );
        }
        let input = match epoch.input {
            Some(input) => input,
            None => {
                let input = self.commit_input(e).await?;
                self.store.set_epoch_input(e, &input).await?;
                tracing::debug!(epoch = e, bets = input.bet_count, "epoch input committed");
                input
            }
        };
        let output = match self.computed.take() {
            Some((ce, out)) if ce == e => out,
            _ => {
                let seed = group
                    .epoch_seed(e, &input.prev_y, &input.bets_root, input.iterations)
                    .with_context(|| format!("stored input of epoch {e}"))?;
                let job = Job {
                    epoch: e,
                    seed,
                    x: input.x.clone(),
                    t: input.iterations,
                };
                let c = self.vdf.compute(job).await.map_err(|msg| anyhow!(msg))?;
                EpochOutput {
                    y: c.y,
                    pi: c.pi,
                    l: c.l,
                    checkpoints: c.checkpoints,
                    computation_ms: c.computation_ms,
                    resolved_at_ms: 0,
                }
            }
        };
        // Keep the output until it is stored: a failed write retries without a new VDF run.
        self.computed = Some((e, output.clone()));
        let settle_start = std::time::Instant::now();
        let games = self.store.epoch_games(e).await?;
        // Tens of milliseconds of hashing for a large epoch: off the async workers (one by
        // default), which would answer no request meanwhile, every epoch (the soak's p99).
        let y = output.y.clone();
        let (games, resolutions) = tokio::task::spawn_blocking(move || {
            let mut resolutions = Vec::with_capacity(games.len());
            for g in &games {
                let o = outcome::derive(&y, &g.new)?;
                resolutions.push(o.resolution(&g.new.game_id));
            }
            Ok::<_, String>((games, resolutions))
        })
        .await
        .context("deriving the epoch's outcomes")?
        .map_err(|msg| anyhow!(msg))?;
        let mut output = output;
        output.resolved_at_ms = now_ms();
        match self.store.resolve_epoch(e, &output, &resolutions).await {
            Ok(()) => {}
            // A retry after a commit whose answer was lost: already resolved is success.
            Err(StoreError::Conflict(_))
                if self
                    .store
                    .epoch(e)
                    .await?
                    .is_some_and(|r| r.output.is_some()) => {}
            Err(err) => return Err(err.into()),
        }
        self.computed = None;
        self.status
            .last_computation_ms
            .store(output.computation_ms, Ordering::Relaxed);
        self.status.epochs_resolved.fetch_add(1, Ordering::Relaxed);
        let m = crate::metrics::global();
        m.epochs_resolved.inc();
        if let Some(closed) = epoch.closed_at_ms {
            m.epoch_seconds
                .observe((output.resolved_at_ms - closed).max(0) as f64 / 1000.0);
        }
        let mut per_game = std::collections::BTreeMap::<&str, u64>::new();
        for g in &games {
            *per_game.entry(g.new.game.as_str()).or_default() += 1;
        }
        for (game, n) in per_game {
            m.bets_resolved.with(&[game, "epoch"]).add(n);
        }
        tracing::info!(
            epoch = e,
            games = games.len(),
            iterations = input.iterations,
            computation_ms = output.computation_ms,
            settle_ms = settle_start.elapsed().as_millis() as u64,
            "epoch resolved"
        );
        Ok(())
    }

    /// bets_root and x_e of closed epoch `e` from its stored leaves and y_{e−1}.
    async fn commit_input(&self, e: u64) -> anyhow::Result<EpochInput> {
        let group = &self.config.group;
        let leaves = self.store.close_epoch(e, now_ms()).await?;
        let bet_count = leaves.len() as u64;
        // Two hashes a bet, tens of milliseconds for a large epoch: off the async workers,
        // like the derivation of the outcomes.
        let bets_root = tokio::task::spawn_blocking(move || {
            let leaf_hashes: Vec<merkle::Hash> =
                leaves.iter().map(|l| merkle::leaf_hash(l)).collect();
            merkle::root(&leaf_hashes)
        })
        .await
        .context("hashing the epoch's bets")?;
        let prev_y = previous_output(self.store.as_ref(), group, e).await?;
        let t = self.config.iterations;
        let (_, x) = group.epoch_input(e, &prev_y, &bets_root, t)?;
        Ok(EpochInput {
            iterations: t,
            prev_y,
            bets_root,
            bet_count,
            x,
        })
    }
}

/// y_{e−1} as stored (fixed-width bytes), or the genesis output for the first epoch.
pub async fn previous_output(store: &dyn Store, group: &Group, e: u64) -> anyhow::Result<Vec<u8>> {
    if e <= 1 {
        return Ok(group.genesis_output());
    }
    let prev = store
        .epoch(e - 1)
        .await?
        .with_context(|| format!("epoch {} is missing", e - 1))?;
    let out = prev
        .output
        .with_context(|| format!("epoch {} is not resolved yet", e - 1))?;
    Ok(out.y)
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
