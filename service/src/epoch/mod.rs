//! The epoch loop (docs/PROTOCOL.md §10): epochs open for games one after another; each closes
//! by its deadline, or earlier when the output its successor's gate waits on is one squaring
//! away; a closed epoch's input takes y_p of its predecessor p(e) = e − lanes as soon as that
//! exists, its VDF runs on a thread of its own, and epochs resolve in order.
//!
//! What keeps the promise (the timing rule): no output exists while the epoch after it still
//! takes games (a VDF job stops one squaring short until then), and every epoch closes by the
//! bound its plan fixed when it opened.
//!
//! The loop is driven by what the store holds, so a stop, a crash or a database error at any
//! point resumes where it left off: a closed epoch without an input gets its input once y_p is
//! known (recomputed, deterministically), a closed epoch with an input gets its VDF run again
//! and is resolved, and the open epoch closes by its deadline.

mod vdf_thread;

pub use vdf_thread::{Event, Job, REPLAY_SEGMENTS};

use anyhow::{anyhow, bail, Context};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc as tmpsc, watch};
use vrs_engine::merkle;
use vrs_observe::clock::now_ms;
use vrs_protocol::epoch_group::{Group, SeedRule};
use vrs_protocol::outcome;
use vrs_store::{
    EpochInput, EpochOutput, EpochRecord, GameRecord, GameResolution, PlanParams, Store, StoreError,
};

/// What the loop is doing, for `/health`, `/` and `/api/v1/stats`.
#[derive(Debug, Default)]
pub struct LoopStatus {
    /// Whether this process leads the epoch chain (other replicas only accept and serve).
    pub leader: AtomicBool,
    /// Epoch whose VDF started last and is running (0: none).
    pub computing_epoch: AtomicU64,
    pub squarings_done: AtomicU64,
    pub squarings_total: AtomicU64,
    pub last_computation_ms: AtomicU64,
    pub epochs_resolved: AtomicU64,
    /// The squaring rate R the next epochs are planned with (squarings per second): the
    /// start-up calibration, then each VDF's own.
    pub squarings_per_second: AtomicU64,
    /// T of the epoch opened last.
    pub iterations: AtomicU64,
    /// The last error the loop hit (cleared when a step succeeds).
    pub last_error: Mutex<Option<String>>,
}

impl LoopStatus {
    pub(crate) fn set_error(&self, e: Option<String>) {
        if let Ok(mut slot) = self.last_error.lock() {
            *slot = e;
        }
    }

    pub fn error(&self) -> Option<String> {
        self.last_error.lock().ok().and_then(|e| e.clone())
    }
}

/// Test-only (feature `testkit`, never in a release build): what a modified operator would
/// change in the epoch loop, for the attack tests of docs/PROTOCOL.md §21.
#[cfg(feature = "testkit")]
pub mod testkit {
    /// The squaring rate every plan declares from now on, in place of the measured one (an
    /// understated rate: T follows it, so T shrinks while the hardware stays as fast).
    pub static DECLARED_RATE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    /// How long the log holds each epoch's output back after the service has y (Unix ms), as
    /// an operator choosing y_p after the commitments that take it would (read by the log).
    pub static HELD_OUTPUT_MS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    /// The epoch whose commitment the log gets twice, the second with another nonce (read by
    /// the log): what a witness's rule 3 refuses and a plain C2SP witness cosigns.
    pub static SECOND_COMMITMENT_OF: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    /// Set (to 1): a void epoch's games resolve with its own output, never moved (read by the
    /// log's settlement), as an operator that stalled to grind an epoch would want.
    pub static KEEP_VOID_OUTCOMES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
}

/// How a closed epoch's games resolve, as the witnessed log settles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// With the epoch's own output: its commitment was witnessed in time (or it has no plan in
    /// the log).
    Own,
    /// Not known yet: held.
    Wait,
    /// Void: its games were moved to this later epoch.
    MovedTo(u64),
}

/// What decides how a closed epoch's games resolve (the operator's witnessed log).
#[async_trait::async_trait]
pub trait Settle: Send + Sync + std::fmt::Debug {
    async fn settlement(&self, epoch: u64) -> anyhow::Result<Settlement>;
}

/// Most moves followed from one epoch to the one its games resolve with.
const MAX_MOVES: usize = 256;

/// How often the held epochs are looked at again.
const SETTLE_EVERY: Duration = Duration::from_millis(200);

/// The epoch loop's configuration.
#[derive(Debug, Clone)]
pub struct EpochConfig {
    pub group: Group,
    /// The margin, the lanes and T (fixed, or following the rate): an epoch keeps the T of
    /// its plan.
    pub schedule: vrs_protocol::schedule::Schedule,
}

impl EpochConfig {
    /// The plan parameters of the next epoch at squaring rate `rate`.
    pub fn plan_params(&self, rate: u64) -> PlanParams {
        #[cfg(feature = "testkit")]
        let rate = testkit::DECLARED_RATE.get().copied().unwrap_or(rate);
        PlanParams {
            lanes: self.schedule.lanes,
            iterations: self.schedule.iterations_at(rate as f64),
            margin_centi: self.schedule.margin_centi,
            squarings_per_second: rate.max(1),
            legacy_iterations: self.schedule.iterations,
        }
    }
}

#[derive(Debug)]
pub struct EpochLoop {
    store: Arc<dyn Store>,
    config: EpochConfig,
    status: Arc<LoopStatus>,
    settler: Option<Arc<dyn Settle>>,
}

impl EpochLoop {
    /// `status.squarings_per_second` must hold the start-up rate.
    pub fn new(
        store: Arc<dyn Store>,
        config: EpochConfig,
        status: Arc<LoopStatus>,
    ) -> anyhow::Result<Self> {
        if status.squarings_per_second.load(Ordering::Relaxed) == 0 {
            bail!("the epoch loop needs the squaring rate measured at start-up");
        }
        Ok(Self {
            store,
            config,
            status,
            settler: None,
        })
    }

    /// Holds each epoch's games until `settler` settles them (None: resolved with the epoch).
    pub fn with_settler(mut self, settler: Option<Arc<dyn Settle>>) -> Self {
        self.settler = settler;
        self
    }

    /// The store the loop runs on (the supervisor takes its lease).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// What the loop reports.
    pub fn status(&self) -> &Arc<LoopStatus> {
        &self.status
    }

    /// Runs one term of leadership, while the caller holds the store's lease, until `shutdown`
    /// turns true. Errors are logged and the work retried; it never ends on its own.
    pub async fn run_term(&self, shutdown: &mut watch::Receiver<bool>) {
        Term::new(self).run(shutdown).await
    }
}

/// One term of leadership: the VDF jobs it started and what they reported. Dropped when the
/// term ends; its jobs then find nobody listening and stop at their gate.
struct Term<'a> {
    store: &'a dyn Store,
    config: &'a EpochConfig,
    status: &'a Arc<LoopStatus>,
    settler: Option<&'a dyn Settle>,
    /// When the held epochs were last looked at.
    settled_at: Option<Instant>,
    events: tmpsc::UnboundedSender<Event>,
    inbox: tmpsc::UnboundedReceiver<Event>,
    /// Epochs whose VDF job is running.
    running: BTreeSet<u64>,
    /// y of epochs not resolved yet, as their jobs reported it.
    evaluated: BTreeMap<u64, Vec<u8>>,
    /// Outputs waiting for the epochs before them to resolve.
    finished: BTreeMap<u64, EpochOutput>,
    /// Bets roots (with their leaf counts) of epochs closed this term.
    roots: BTreeMap<u64, (merkle::Hash, u64)>,
    /// Jobs waiting at their gate for the epoch after theirs to close.
    gates: BTreeMap<u64, mpsc::SyncSender<()>>,
    /// Epochs whose job failed, and when to try again.
    retry_at: BTreeMap<u64, Instant>,
}

impl<'a> Term<'a> {
    fn new(owner: &'a EpochLoop) -> Self {
        let (events, inbox) = tmpsc::unbounded_channel();
        Self {
            store: owner.store.as_ref(),
            config: &owner.config,
            status: &owner.status,
            settler: owner.settler.as_deref(),
            settled_at: None,
            events,
            inbox,
            running: BTreeSet::new(),
            evaluated: BTreeMap::new(),
            finished: BTreeMap::new(),
            roots: BTreeMap::new(),
            gates: BTreeMap::new(),
            retry_at: BTreeMap::new(),
        }
    }

    /// Runs until `shutdown` turns true. Errors are logged and the work retried after a pause;
    /// the loop never gives up on its own.
    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let mut backoff = Duration::from_millis(200);
        loop {
            if *shutdown.borrow() {
                return;
            }
            let wait = match self.advance().await {
                Ok(wait) => {
                    self.status.set_error(None);
                    backoff = Duration::from_millis(200);
                    wait
                }
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), retry_ms = backoff.as_millis() as u64, "epoch step failed");
                    self.status.set_error(Some(format!("{e:#}")));
                    let wait = backoff;
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                    wait
                }
            };
            tokio::select! {
                event = self.inbox.recv() => {
                    if let Some(event) = event {
                        self.on_event(event);
                    }
                }
                _ = tokio::time::sleep(wait) => {}
                _ = shutdown.changed() => return,
            }
        }
    }

    /// Takes in what a job reported; the store work it calls for happens in [`Self::advance`].
    fn on_event(&mut self, event: Event) {
        match event {
            Event::Gate { epoch, release } => {
                self.gates.insert(epoch, release);
            }
            Event::Evaluated {
                epoch,
                y,
                squarings_per_second,
            } => {
                if squarings_per_second >= 1.0 {
                    self.status
                        .squarings_per_second
                        .store(squarings_per_second as u64, Ordering::Relaxed);
                }
                self.evaluated.insert(epoch, y);
            }
            Event::Finished { epoch, result } => {
                self.running.remove(&epoch);
                match result {
                    Ok(c) => {
                        self.finished.insert(
                            epoch,
                            EpochOutput {
                                y: c.y,
                                pi: c.pi,
                                l: c.l,
                                checkpoints: c.checkpoints,
                                computation_ms: c.computation_ms,
                                resolved_at_ms: 0,
                            },
                        );
                    }
                    Err(msg) => {
                        tracing::warn!(epoch, error = %msg, "epoch VDF failed; retrying");
                        self.evaluated.remove(&epoch);
                        self.status.set_error(Some(msg));
                        self.retry_at
                            .insert(epoch, Instant::now() + Duration::from_secs(1));
                    }
                }
            }
        }
    }

    /// Does everything the store's state and the jobs' reports call for now; returns how long
    /// to wait for a report before looking again (the open epoch's close is due then, or a
    /// failed job may be retried).
    async fn advance(&mut self) -> anyhow::Result<Duration> {
        self.pass_gates().await?;
        let open = self.store.open_epoch().await?;
        let due = self.close_due(&open);
        if due.is_zero() {
            self.close(&open).await?;
            return Ok(Duration::ZERO);
        }
        let closed = self.store.unresolved_epochs().await?;
        for rec in &closed {
            self.start(rec).await?;
        }
        for rec in closed {
            match self.finished.remove(&rec.number) {
                Some(output) => self.resolve(&rec, output).await?,
                None => break,
            }
        }
        // A settlement that fails (the log's store, a conflict) is retried on the next pass; it
        // must not hold up the next close.
        if let Err(e) = self.settle_held().await {
            tracing::warn!(error = %format!("{e:#}"), "settling held games failed");
        }
        let retry = self
            .retry_at
            .values()
            .min()
            .map(|at| at.saturating_duration_since(Instant::now()));
        // Again: starting and resolving epochs took time, and the close must not come late.
        let due = self.close_due(&open);
        Ok(retry.map_or(due, |r| r.min(due)))
    }

    /// Lets go every job waiting at its gate once the epoch after its own is closed, closing
    /// that epoch first where it is still open: no output exists while its successor takes
    /// games.
    async fn pass_gates(&mut self) -> anyhow::Result<()> {
        while let Some((&epoch, _)) = self.gates.first_key_value() {
            let open = self.store.open_epoch().await?;
            if open.number == epoch + 1 {
                self.close(&open).await?;
            }
            if let Some(release) = self.gates.remove(&epoch) {
                // A job that has gone (failed) needs no release.
                let _ = release.send(());
            }
        }
        Ok(())
    }

    /// How long until the open epoch must close: a little before its deadline (the close's own
    /// transaction takes time), at once for a version-1 epoch left open by an older binary.
    fn close_due(&self, open: &EpochRecord) -> Duration {
        let Some(plan) = open.plan else {
            return Duration::ZERO;
        };
        let allowance = vrs_engine::timing::allowance_ms(
            plan.iterations,
            plan.margin_centi,
            plan.squarings_per_second,
        );
        let guard = (allowance / 10.0).clamp(5.0, 50.0) as i64;
        let left = plan.deadline_ms - guard - now_ms();
        Duration::from_millis(left.max(0) as u64)
    }

    /// Closes the open epoch with a fresh nonce, opens the next with the current plan, and
    /// hashes the closed epoch's bets.
    async fn close(&mut self, open: &EpochRecord) -> anyhow::Result<()> {
        let e = open.number;
        let mut nonce = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut nonce);
        let rate = self.status.squarings_per_second.load(Ordering::Relaxed);
        let params = self.config.plan_params(rate);
        let leaves = self.store.close_epoch(e, now_ms(), nonce, &params).await?;
        self.status
            .iterations
            .store(params.iterations, Ordering::Relaxed);
        let count = leaves.len() as u64;
        let root = bets_root(leaves).await?;
        self.roots.insert(e, (root, count));
        tracing::debug!(epoch = e, bets = count, "epoch closed");
        Ok(())
    }

    /// Starts the VDF of closed epoch `rec` if nothing stops it: its input is stored, or can be
    /// now that y_p is known.
    async fn start(&mut self, rec: &EpochRecord) -> anyhow::Result<()> {
        let e = rec.number;
        if self.running.contains(&e)
            || self.finished.contains_key(&e)
            || self.evaluated.contains_key(&e)
        {
            return Ok(());
        }
        if let Some(at) = self.retry_at.get(&e) {
            if Instant::now() < *at {
                return Ok(());
            }
            self.retry_at.remove(&e);
        }
        let group = &self.config.group;
        if rec.modulus != group.id() {
            bail!(
                "epoch {e} uses group {}, this service runs {}",
                rec.modulus,
                group.id()
            );
        }
        let input = match &rec.input {
            Some(input) => input.clone(),
            None => {
                let Some(prev_y) = self.known_output(rec.previous()).await? else {
                    return Ok(());
                };
                let input = self.commit_input(rec, prev_y).await?;
                self.store.set_epoch_input(e, &input).await?;
                tracing::debug!(epoch = e, bets = input.bet_count, "epoch input committed");
                input
            }
        };
        let (seed, _) = epoch_input_of(
            group,
            rec,
            &input.prev_y,
            &input.bets_root,
            input.iterations,
        )
        .with_context(|| format!("stored input of epoch {e}"))?;
        let job = Job {
            epoch: e,
            seed,
            x: input.x.clone(),
            t: input.iterations,
        };
        vdf_thread::spawn(group, job, self.events.clone(), Arc::clone(self.status))?;
        self.running.insert(e);
        Ok(())
    }

    /// y_p once it exists: the genesis output, a job's report, or the stored output.
    async fn known_output(&self, p: u64) -> anyhow::Result<Option<Vec<u8>>> {
        if p == 0 {
            return Ok(Some(self.config.group.genesis_output()));
        }
        if let Some(y) = self.evaluated.get(&p) {
            return Ok(Some(y.clone()));
        }
        Ok(self
            .store
            .epoch(p)
            .await?
            .and_then(|r| r.output)
            .map(|o| o.y))
    }

    /// bets_root and x_e of closed epoch `rec` over y_p.
    async fn commit_input(
        &mut self,
        rec: &EpochRecord,
        prev_y: Vec<u8>,
    ) -> anyhow::Result<EpochInput> {
        let e = rec.number;
        let (root, count) = match self.roots.remove(&e) {
            Some(r) => r,
            None => {
                let leaves = self.store.epoch_leaves(e).await?;
                let count = leaves.len() as u64;
                (bets_root(leaves).await?, count)
            }
        };
        // A version-1 epoch closed by this binary takes the T its successor's plan assumed.
        let t = rec.iterations().unwrap_or(self.config.schedule.iterations);
        let (_, x) = epoch_input_of(&self.config.group, rec, &prev_y, &root, t)?;
        Ok(EpochInput {
            iterations: t,
            prev_y,
            bets_root: root,
            bet_count: count,
            x,
        })
    }

    /// Resolves every game of `rec` from its computed output.
    async fn resolve(&mut self, rec: &EpochRecord, output: EpochOutput) -> anyhow::Result<()> {
        let e = rec.number;
        let own = match self.settler {
            None => true,
            Some(s) => match s.settlement(e).await {
                Ok(settled) => settled == Settlement::Own,
                Err(err) => {
                    self.finished.insert(e, output);
                    return Err(err);
                }
            },
        };
        if !own {
            return self.resolve_holding_games(rec, output).await;
        }
        let settle_start = Instant::now();
        let games = match self.store.epoch_games(e).await {
            Ok(g) => g,
            Err(err) => {
                self.finished.insert(e, output);
                return Err(err.into());
            }
        };
        let (games, resolutions) = match derive_outcomes(output.y.clone(), games).await {
            Ok(d) => d,
            Err(err) => {
                self.finished.insert(e, output);
                return Err(err);
            }
        };
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
            Err(err) => {
                // Kept: a failed write retries without a new VDF run.
                self.finished.insert(e, output);
                return Err(err.into());
            }
        }
        self.evaluated.remove(&e);
        self.status
            .last_computation_ms
            .store(output.computation_ms, Ordering::Relaxed);
        self.status.epochs_resolved.fetch_add(1, Ordering::Relaxed);
        let m = vrs_observe::metrics::global();
        m.epochs_resolved.inc();
        if let Some(closed) = rec.closed_at_ms {
            m.epoch_seconds
                .observe((output.resolved_at_ms - closed).max(0) as f64 / 1000.0);
        }
        count_resolved(&games);
        tracing::info!(
            epoch = e,
            games = games.len(),
            iterations = rec.iterations(),
            computation_ms = output.computation_ms,
            settle_ms = settle_start.elapsed().as_millis() as u64,
            "epoch resolved"
        );
        Ok(())
    }
}

impl Term<'_> {
    /// Stores epoch `rec`'s output with its games held (the log has not settled them yet).
    async fn resolve_holding_games(
        &mut self,
        rec: &EpochRecord,
        mut output: EpochOutput,
    ) -> anyhow::Result<()> {
        let e = rec.number;
        output.resolved_at_ms = now_ms();
        match self.store.resolve_epoch_holding_games(e, &output).await {
            Ok(()) => {}
            Err(StoreError::Conflict(_))
                if self
                    .store
                    .epoch(e)
                    .await?
                    .is_some_and(|r| r.output.is_some()) => {}
            Err(err) => {
                self.finished.insert(e, output);
                return Err(err.into());
            }
        }
        self.evaluated.remove(&e);
        self.status
            .last_computation_ms
            .store(output.computation_ms, Ordering::Relaxed);
        self.status.epochs_resolved.fetch_add(1, Ordering::Relaxed);
        vrs_observe::metrics::global().epochs_resolved.inc();
        tracing::info!(
            epoch = e,
            "epoch resolved; its games wait for its commitment to be witnessed"
        );
        Ok(())
    }

    /// Resolves the games of every held epoch the log has settled: with the output of the
    /// epoch they resolve with (its own, or the end of its moves), once that is stored.
    async fn settle_held(&mut self) -> anyhow::Result<()> {
        if self
            .settled_at
            .is_some_and(|at| at.elapsed() < SETTLE_EVERY)
        {
            return Ok(());
        }
        self.settled_at = Some(Instant::now());
        // Each epoch's settlement once per pass (many held epochs may end at one).
        let mut known = BTreeMap::new();
        for e in self.store.held_epochs().await? {
            let from = match self.settler {
                Some(settler) => outcome_epoch(settler, e, &mut known).await?,
                // Held by a server with witnesses, now run without: as today, its own output.
                None => Some(e),
            };
            let Some(from) = from else {
                continue;
            };
            let Some(y) = self
                .store
                .epoch(from)
                .await?
                .and_then(|r| r.output)
                .map(|o| o.y)
            else {
                continue;
            };
            let games = self.store.epoch_games(e).await?;
            let (games, resolutions) = derive_outcomes(y, games).await?;
            self.store.resolve_held_games(e, from, &resolutions).await?;
            count_resolved(&games);
            if from == e {
                tracing::info!(
                    epoch = e,
                    games = games.len(),
                    "epoch witnessed: its games resolved"
                );
            } else {
                tracing::warn!(
                    epoch = e,
                    to = from,
                    games = games.len(),
                    "void epoch: its games resolved with the epoch they were moved to"
                );
            }
        }
        Ok(())
    }
}

/// Each game's outcome from `y`. Tens of milliseconds of hashing for a large epoch: off the
/// async workers (one by default), which would answer no request meanwhile, every epoch (the
/// soak's p99).
async fn derive_outcomes(
    y: Vec<u8>,
    games: Vec<GameRecord>,
) -> anyhow::Result<(Vec<GameRecord>, Vec<GameResolution>)> {
    tokio::task::spawn_blocking(move || {
        let mut resolutions = Vec::with_capacity(games.len());
        for g in &games {
            let o = outcome::derive(&y, &g.new)?;
            resolutions.push(o.resolution(&g.new.game_id));
        }
        Ok::<_, String>((games, resolutions))
    })
    .await
    .context("deriving the epoch's outcomes")?
    .map_err(|msg| anyhow!(msg))
}

/// Counts resolved epoch games by game, for the metrics.
fn count_resolved(games: &[GameRecord]) {
    let m = vrs_observe::metrics::global();
    let mut per_game = BTreeMap::<&str, u64>::new();
    for g in games {
        *per_game.entry(g.new.game.as_str()).or_default() += 1;
    }
    for (game, n) in per_game {
        m.bets_resolved.with(&[game, "epoch"]).add(n);
    }
}

/// The epoch whose output epoch `e`'s games take, following its moves; None while not known.
async fn outcome_epoch(
    settler: &dyn Settle,
    e: u64,
    known: &mut BTreeMap<u64, Settlement>,
) -> anyhow::Result<Option<u64>> {
    let mut at = e;
    for _ in 0..MAX_MOVES {
        let settled = match known.get(&at) {
            Some(&s) => s,
            None => {
                let s = settler.settlement(at).await?;
                known.insert(at, s);
                s
            }
        };
        match settled {
            Settlement::Own => return Ok(Some(at)),
            Settlement::Wait => return Ok(None),
            Settlement::MovedTo(d) if d > at => at = d,
            Settlement::MovedTo(d) => bail!("epoch {at}'s games moved back to epoch {d}"),
        }
    }
    Ok(None)
}

/// The RFC 6962 root of `leaves`, hashed off the async workers (two hashes a bet, tens of
/// milliseconds for a large epoch).
async fn bets_root(leaves: Vec<Vec<u8>>) -> anyhow::Result<merkle::Hash> {
    tokio::task::spawn_blocking(move || {
        let hashes: Vec<merkle::Hash> = leaves.iter().map(|l| merkle::leaf_hash(l)).collect();
        merkle::root(&hashes)
    })
    .await
    .context("hashing the epoch's bets")
}

/// seed_e and x_e of epoch `rec` over `prev_y` and `bets_root`, by its version; `t` is T (a
/// version-2 epoch's plan fixes it).
pub fn epoch_input_of(
    group: &Group,
    rec: &EpochRecord,
    prev_y: &[u8],
    bets_root: &merkle::Hash,
    t: u64,
) -> anyhow::Result<([u8; 32], Vec<u8>)> {
    let e = rec.number;
    match (rec.timing(), rec.nonce.as_ref()) {
        (None, _) => group.input_for(e, prev_y, bets_root, &SeedRule::V1 { iterations: t }),
        (Some(timing), Some(nonce)) => group.input_for(
            e,
            prev_y,
            bets_root,
            &SeedRule::V2 {
                nonce,
                timing: &timing,
            },
        ),
        (Some(_), None) => bail!("epoch {e} commits to its timing but has no nonce"),
    }
}

/// y_p of `rec` as stored (p(e), or e − 1 for version 1), or the genesis output for p = 0.
pub async fn previous_output(
    store: &dyn Store,
    group: &Group,
    rec: &EpochRecord,
) -> anyhow::Result<Vec<u8>> {
    let p = rec.previous();
    if p == 0 {
        return Ok(group.genesis_output());
    }
    let prev = store
        .epoch(p)
        .await?
        .with_context(|| format!("epoch {p} is missing"))?;
    let out = prev
        .output
        .with_context(|| format!("epoch {p} is not resolved yet"))?;
    Ok(out.y)
}
