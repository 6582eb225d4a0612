//! The operator's witnessed log (docs/PROTOCOL.md §21): the entries this service commits to,
//! kept in the store and in a [`LogTree`] in memory, signed as checkpoints and pushed to the
//! configured witnesses (C2SP tlog-witness), whose cosignatures are stored with each
//! checkpoint.
//!
//! The log follows the store: [`OperatorLog::sync`] appends, in order, every plan, commitment,
//! output, pool batch and anchor batch the store holds and the log lacks, so a crash between a close and its entries
//! only delays them. The leader syncs after each close and each pool batch; a follower's
//! tree catches up from the store when it is read ([`OperatorLog::refresh`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use base64::prelude::{Engine as _, BASE64_STANDARD};
use tokio::sync::{watch, Mutex, RwLock};
use vrs_engine::anchor::LogBinding;
use vrs_observe::clock::now_ms;
use vrs_protocol::tlog::anchored::AnchorLog;
use vrs_protocol::tlog::entry::{
    AnchorEntry, CommitmentEntry, LogEntry, MoveEntry, OperatorEntry, OutputEntry, PlanEntry,
    PoolBatchEntry, VoidEntry,
};
use vrs_protocol::tlog::note::{vkey, LogSigner, VKey};
use vrs_protocol::tlog::policy::Policy;
use vrs_protocol::tlog::witnessed::{prove_all, LogEvidence, LoggedEntry, WitnessFloor};
use vrs_protocol::tlog::LogTree;
use vrs_store::{Store, StoreError};

use crate::epoch::{Settle, Settlement};

/// Entries read from the store in one query.
const PAGE: u64 = 4096;

/// Whether `note` holds a signature line of key name `name`.
fn cosigned_by(note: &str, name: &str) -> bool {
    note.lines()
        .filter_map(|l| l.strip_prefix("— "))
        .any(|l| l.split(' ').next() == Some(name))
}

/// The policy of the server's own check: its log, its witnesses, `quorum` of them.
fn own_floor(
    signer: &LogSigner,
    witnesses: &[WitnessTarget],
    own: OwnFloor,
) -> anyhow::Result<Option<WitnessFloor>> {
    if witnesses.is_empty() {
        return Ok(None);
    }
    anyhow::ensure!(
        (1..=witnesses.len()).contains(&own.quorum),
        "a quorum of {} among {} witnesses",
        own.quorum,
        witnesses.len()
    );
    let mut text = format!("log {}\n", signer.vkey());
    for (i, w) in witnesses.iter().enumerate() {
        let k = &w.key;
        text += &format!("witness w{i} {}\n", vkey(&k.name, k.alg, &k.public_key));
    }
    let names: Vec<String> = (0..witnesses.len()).map(|i| format!("w{i}")).collect();
    text += &format!("group own {} {}\nquorum own\n", own.quorum, names.join(" "));
    let policy = Policy::parse(&text).map_err(anyhow::Error::msg)?;
    Ok(Some(WitnessFloor {
        policy,
        max_rate: own.max_rate,
        delta_ms: own.delta_ms,
    }))
}

/// A witness the log pushes to: its cosignature key and its submission prefix.
#[derive(Clone, Debug)]
pub struct WitnessTarget {
    pub key: VKey,
    pub url: String,
}

/// The operator's declaration, written as the log's first entry.
#[derive(Clone, Debug)]
pub struct Declaration {
    pub group: String,
    pub acceptance_key: [u8; 32],
    pub anchor_chain_id: u64,
    pub anchor_address: [u8; 20],
}

/// What the log has seen of the chains, to know what to append next.
#[derive(Clone, Copy, Debug, Default)]
struct Tail {
    last_plan: u64,
    /// The last epoch committed or void: a void epoch's commitment is never logged (a
    /// witness refuses it), so the next one to log is the one after.
    last_settled: u64,
    /// The last epoch whose output is logged.
    last_output: u64,
    last_batch: u64,
    last_anchor: u64,
}

impl Tail {
    fn see(&mut self, e: &LogEntry) {
        match e {
            LogEntry::Plan(p) => self.last_plan = p.epoch,
            LogEntry::Commitment(c) => self.last_settled = self.last_settled.max(c.epoch),
            LogEntry::Void(v) => self.last_settled = self.last_settled.max(v.epoch),
            LogEntry::Output(o) => self.last_output = o.epoch,
            LogEntry::PoolBatch(b) => self.last_batch = b.batch,
            LogEntry::Anchor(a) => self.last_anchor = a.batch,
            LogEntry::Operator(_) | LogEntry::Move(_) => {}
        }
    }
}

/// Where an epoch's entries stand in the log, with the stamps a witness compares.
#[derive(Clone, Copy, Debug, Default)]
struct EpochEntries {
    plan: Option<u64>,
    commitment: Option<u64>,
    void: Option<u64>,
    output: Option<u64>,
    /// p(e), from the plan.
    previous: u64,
    /// The plan's opening and deadline and the commitment's close (ms).
    opened_ms: u64,
    deadline_ms: u64,
    closed_ms: Option<u64>,
    /// The commitment's bets root and count.
    bets: Option<([u8; 32], u64)>,
}

/// A plan or commitment appended this much after its stamp gets a void with it: a witness
/// refuses it beyond its δ unless the same submission voids the epoch (docs/PROTOCOL.md §21,
/// "Voids"), and a witness's δ is not known here, so this is half the server's own.
fn stale_after_ms(delta_ms: u64) -> u64 {
    delta_ms / 2
}

/// How many epochs back a void may name to let a witness that was down catch up: its peers
/// keep the state of [`vrs_protocol::tlog::rules::KEPT_EPOCHS`] epochs and refuse a void of
/// an epoch older than that. A witness further behind re-joins (docs/OPERATIONS.md).
const CATCH_UP_EPOCHS: u64 = vrs_protocol::tlog::rules::KEPT_EPOCHS as u64 / 2;

#[derive(Debug)]
struct Inner {
    tree: LogTree,
    tail: Tail,
    epochs: BTreeMap<u64, EpochEntries>,
    /// Each anchor batch's entry index.
    anchors: BTreeMap<u64, u64>,
    /// Each moved epoch's move: (entry index, destination).
    moves: BTreeMap<u64, (u64, u64)>,
}

impl Inner {
    fn push(&mut self, entry: &LogEntry, bytes: Vec<u8>) -> anyhow::Result<()> {
        let index = self.tree.append(bytes)?;
        self.tail.see(entry);
        match entry {
            LogEntry::Plan(p) => {
                let at = self.epochs.entry(p.epoch).or_default();
                at.plan = Some(index);
                at.opened_ms = p.opened_ms;
                at.deadline_ms = p.deadline_ms;
                at.previous = p.previous;
            }
            LogEntry::Commitment(c) => {
                // The first: a log holds one commitment of an epoch (witness rule 3).
                let at = self.epochs.entry(c.epoch).or_default();
                if at.commitment.is_none() {
                    at.commitment = Some(index);
                    at.closed_ms = Some(c.closed_ms);
                    at.bets = Some((c.bets_root, c.bet_count));
                }
            }
            LogEntry::Void(v) => self.epochs.entry(v.epoch).or_default().void = Some(index),
            LogEntry::Output(o) => self.epochs.entry(o.epoch).or_default().output = Some(index),
            LogEntry::Anchor(a) => {
                self.anchors.insert(a.batch, index);
            }
            LogEntry::Move(m) => {
                self.moves.entry(m.epoch).or_insert((index, m.to));
            }
            LogEntry::Operator(_) | LogEntry::PoolBatch(_) => {}
        }
        Ok(())
    }
}

/// What this server's own `witnessed` check asks of its epochs: k of its witnesses, and the
/// S and δ verifiers are expected to apply.
#[derive(Clone, Copy, Debug)]
pub struct OwnFloor {
    pub quorum: usize,
    pub max_rate: u64,
    pub delta_ms: u64,
}

/// How far after an epoch [`OperatorLog::output_of`] looks for the epoch that takes its output
/// (p(e) = e − L with L lanes).
const MAX_LANES: u64 = 16;

/// Most stored checkpoints read to find each witness's first cosignature of an entry.
const COVERING: u64 = 64;

/// The log.
#[derive(Debug)]
pub struct OperatorLog {
    store: Arc<dyn Store>,
    signer: LogSigner,
    witnesses: Vec<WitnessTarget>,
    inner: RwLock<Inner>,
    /// Serialises appends: one sync at a time.
    appending: Mutex<()>,
    /// The tree's size, for the witnesses' pushers.
    size_tx: watch::Sender<u64>,
    /// The signed note of the latest size pushed.
    signed: Mutex<Option<(u64, Vec<u8>)>>,
    /// Recent checkpoints with the cosignature lines collected so far.
    collected: Mutex<BTreeMap<u64, String>>,
    /// See [`OperatorLog::operator_evidence`].
    operator_kept: Mutex<Option<Vec<LoggedEntry>>>,
    /// The server's own `witnessed` check; None without witnesses.
    floor: Option<WitnessFloor>,
    /// See [`stale_after_ms`].
    stale_after_ms: u64,
    /// Epochs whose games the log has settled for good (see [`Settle`]).
    settled: Mutex<BTreeMap<u64, Settlement>>,
    http: reqwest::Client,
}

impl OperatorLog {
    /// Opens the log over the store's entries.
    pub async fn open(
        store: Arc<dyn Store>,
        signer: LogSigner,
        witnesses: Vec<WitnessTarget>,
        own: OwnFloor,
    ) -> anyhow::Result<Arc<Self>> {
        let floor = own_floor(&signer, &witnesses, own)?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .context("the witness client")?;
        let log = Arc::new(Self {
            store,
            signer,
            witnesses,
            inner: RwLock::new(Inner {
                tree: LogTree::new(),
                tail: Tail::default(),
                epochs: BTreeMap::new(),
                anchors: BTreeMap::new(),
                moves: BTreeMap::new(),
            }),
            appending: Mutex::new(()),
            size_tx: watch::Sender::new(0),
            signed: Mutex::new(None),
            collected: Mutex::new(BTreeMap::new()),
            operator_kept: Mutex::new(None),
            floor,
            stale_after_ms: stale_after_ms(own.delta_ms),
            settled: Mutex::new(BTreeMap::new()),
            http,
        });
        log.refresh().await?;
        Ok(log)
    }

    pub fn origin(&self) -> &str {
        self.signer.origin()
    }

    /// The log's verifier key (what witnesses and verifiers are configured with).
    pub fn vkey(&self) -> String {
        self.signer.vkey()
    }

    pub async fn size(&self) -> u64 {
        self.inner.read().await.tree.size()
    }

    /// Runs while this process leads: syncs the log with the store every `every`, so a close's
    /// commitment and the next plan reach the witnesses well within their δ.
    pub async fn run_sync(self: Arc<Self>, declaration: Declaration, every: Duration) {
        loop {
            if let Err(e) = self.sync(&declaration).await {
                tracing::warn!(error = %format!("{e:#}"), "syncing the witnessed log failed");
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Reads the entries the store holds beyond the tree (written by another leader).
    pub async fn refresh(&self) -> anyhow::Result<()> {
        loop {
            let size = self.inner.read().await.tree.size();
            let more = self.store.log_entries(size, PAGE).await?;
            if more.is_empty() {
                return Ok(());
            }
            let mut inner = self.inner.write().await;
            if inner.tree.size() != size {
                continue;
            }
            for bytes in more {
                let entry = LogEntry::decode(&bytes)
                    .with_context(|| format!("log entry {} in the store", inner.tree.size()))?;
                inner.push(&entry, bytes)?;
            }
            self.size_tx.send_replace(inner.tree.size());
            vrs_observe::metrics::global()
                .log_size
                .set(inner.tree.size() as f64);
        }
    }

    async fn append(&self, entries: Vec<LogEntry>) -> anyhow::Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let size = self.inner.read().await.tree.size();
        let bytes: Vec<Vec<u8>> = entries.iter().map(LogEntry::encode).collect();
        match self.store.append_log_entries(size, bytes.clone()).await {
            Ok(()) => {}
            Err(StoreError::Conflict(why)) => {
                // Another writer got there first: take what it wrote, and sync again later.
                self.refresh().await?;
                anyhow::bail!("log append at {size}: {why}");
            }
            Err(e) => return Err(e.into()),
        }
        let mut inner = self.inner.write().await;
        // A refresh (a reader's, which holds no append lock) may have taken some or all of
        // them from the store in between: push only what the tree still lacks.
        let have = inner.tree.size().saturating_sub(size) as usize;
        for (e, b) in entries.iter().zip(bytes).skip(have) {
            inner.push(e, b)?;
        }
        self.size_tx.send_replace(inner.tree.size());
        vrs_observe::metrics::global()
            .log_size
            .set(inner.tree.size() as f64);
        Ok(())
    }

    /// Appends what the store holds and the log lacks: the declaration (first), each epoch's
    /// plan and, once closed, its commitment, in epoch order; each epoch's output once the
    /// service has it, in epoch order; each committed pool batch; each anchor batch built.
    pub async fn sync(&self, declaration: &Declaration) -> anyhow::Result<()> {
        let _one = self.appending.lock().await;
        self.refresh().await?;
        let (size, tail) = {
            let i = self.inner.read().await;
            (i.tree.size(), i.tail)
        };
        let mut out = Vec::new();
        if size == 0 {
            out.push(LogEntry::Operator(OperatorEntry {
                stamped_ms: now_ms().max(0) as u64,
                group: declaration.group.clone(),
                acceptance_key: declaration.acceptance_key,
                anchor_chain_id: declaration.anchor_chain_id,
                anchor_address: declaration.anchor_address,
            }));
        }
        let stale = (now_ms().max(0) as u64).saturating_sub(self.stale_after_ms);
        let void = |epoch| {
            LogEntry::Void(VoidEntry {
                epoch,
                stamped_ms: now_ms().max(0) as u64,
            })
        };
        let mut e = tail.last_settled + 1;
        let mut planned = tail.last_plan;
        while let Some(rec) = self.store.epoch(e).await? {
            let Some(plan) = rec.plan else {
                // Version 1 commits to no plan: nothing to log.
                e += 1;
                planned = planned.max(e - 1);
                continue;
            };
            if planned < e {
                let opened_ms = rec.opened_at_ms.max(0) as u64;
                out.push(LogEntry::Plan(PlanEntry {
                    epoch: e,
                    previous: plan.previous,
                    iterations: plan.iterations,
                    margin_centi: plan.margin_centi,
                    squarings_per_second: plan.squarings_per_second,
                    opened_ms,
                    deadline_ms: plan.deadline_ms.max(0) as u64,
                }));
                planned = e;
                if opened_ms < stale {
                    // Logged too late to be witnessed as the epoch opened (this server was
                    // down or behind): void, so the log goes on; its commitment is never logged.
                    tracing::warn!(
                        epoch = e,
                        "the plan reached the log late: the epoch is void"
                    );
                    out.push(void(e));
                    e += 1;
                    continue;
                }
            }
            let (Some(closed), Some(nonce)) = (rec.closed_at_ms, rec.nonce) else {
                break;
            };
            let leaves = self.store.epoch_leaves(e).await?;
            let hashes: Vec<[u8; 32]> = leaves
                .iter()
                .map(|l| vrs_engine::merkle::leaf_hash(l))
                .collect();
            out.push(LogEntry::Commitment(CommitmentEntry {
                epoch: e,
                previous: plan.previous,
                bets_root: vrs_engine::merkle::root(&hashes),
                bet_count: leaves.len() as u64,
                nonce,
                iterations: plan.iterations,
                margin_centi: plan.margin_centi,
                squarings_per_second: plan.squarings_per_second,
                opened_ms: rec.opened_at_ms.max(0) as u64,
                closed_ms: closed.max(0) as u64,
            }));
            #[cfg(feature = "testkit")]
            if crate::epoch::testkit::SECOND_COMMITMENT_OF.get() == Some(&e) {
                if let Some(LogEntry::Commitment(first)) = out.last() {
                    let mut second = *first;
                    second.nonce[0] ^= 1;
                    out.push(LogEntry::Commitment(second));
                }
            }
            if (closed.max(0) as u64) < stale {
                tracing::warn!(
                    epoch = e,
                    "the commitment reached the log late: the epoch is void"
                );
                out.push(void(e));
            }
            e += 1;
        }
        // Each epoch's output, in epoch order, from the first epoch planned in the log on.
        let first_planned = {
            let i = self.inner.read().await;
            i.epochs
                .iter()
                .find(|(_, at)| at.plan.is_some())
                .map(|(&e, _)| e)
        }
        .or_else(|| {
            out.iter().find_map(|e| match e {
                LogEntry::Plan(p) => Some(p.epoch),
                _ => None,
            })
        });
        let mut o = match (tail.last_output, first_planned) {
            (0, Some(first)) => first,
            (0, None) => planned + 1,
            (last, _) => last + 1,
        };
        while o <= planned {
            let Some((y, _known_ms)) = self.output_of(o).await? else {
                break;
            };
            #[cfg(feature = "testkit")]
            if let Some(&held) = crate::epoch::testkit::HELD_OUTPUT_MS.get() {
                if (now_ms().max(0) as u64) < _known_ms.saturating_add(held) {
                    break;
                }
            }
            out.push(LogEntry::Output(OutputEntry::of(o, &y)));
            o += 1;
        }
        let mut b = tail.last_batch + 1;
        while let Some(batch) = self.store.pool_batch(b).await? {
            out.push(LogEntry::PoolBatch(PoolBatchEntry::from(&batch)));
            b += 1;
        }
        // Every anchor batch, one per number from the first the store holds (or the one after
        // the last logged): those sent before the log held their entry too (version-1
        // calldata), so that the entries' ranges follow on from each other (witness rule 8).
        let mut n = tail.last_anchor + 1;
        while let Some(batch) = self.store.anchor_batch(n).await? {
            out.push(LogEntry::Anchor(AnchorEntry {
                batch: batch.number,
                first_epoch: batch.first_epoch,
                last_epoch: batch.last_epoch,
                pool_from: batch.pool_from,
                pool_to: batch.pool_to,
                notary_from: batch.notary_from,
                notary_to: batch.notary_to,
                root: batch.root,
            }));
            n += 1;
        }
        self.append(out).await
    }

    /// The log as it stood once anchor batch `batch`'s entry was appended (size index + 1):
    /// what its version-2 calldata binds. None: the log holds no entry of that batch.
    pub async fn anchor_binding(&self, batch: u64) -> anyhow::Result<Option<LogBinding>> {
        let Some(index) = self.anchor_index(batch).await? else {
            return Ok(None);
        };
        let i = self.inner.read().await;
        let root = i.tree.root_at(index + 1).map_err(anyhow::Error::msg)?;
        Ok(Some(LogBinding {
            size: index + 1,
            root: root.0,
        }))
    }

    async fn anchor_index(&self, batch: u64) -> anyhow::Result<Option<u64>> {
        if let Some(&i) = self.inner.read().await.anchors.get(&batch) {
            return Ok(Some(i));
        }
        self.refresh().await?;
        Ok(self.inner.read().await.anchors.get(&batch).copied())
    }

    /// `anchor.log` of batch `batch`: its entry under the operator's checkpoint of the bound
    /// size (with any cosignatures stored for that size), and in the checkpoints witnesses
    /// cosigned. None: the log holds no entry of that batch.
    pub async fn anchor_log(&self, batch: u64) -> anyhow::Result<Option<AnchorLog>> {
        let Some(index) = self.anchor_index(batch).await? else {
            return Ok(None);
        };
        let size = index + 1;
        let stored = self
            .store
            .log_checkpoints_covering(index, 1)
            .await?
            .into_iter()
            .find(|(s, _)| *s == size)
            .map(|(_, note)| note);
        let cosigned = if self.witnesses.is_empty() {
            Vec::new()
        } else {
            self.logged(index)
                .await?
                .into_iter()
                .filter(|l| {
                    self.witnesses
                        .iter()
                        .any(|w| cosigned_by(&l.checkpoint, &w.key.name))
                })
                .collect()
        };
        let i = self.inner.read().await;
        let checkpoint = match stored {
            Some(note) => note,
            None => {
                let root = i.tree.root_at(size).map_err(anyhow::Error::msg)?;
                let note = self.signer.sign(size, root).map_err(anyhow::Error::msg)?;
                String::from_utf8_lossy(&note).into_owned()
            }
        };
        let entry = i
            .tree
            .entry(index)
            .with_context(|| format!("log entry {index} is not in the tree"))?;
        let proof = i
            .tree
            .inclusion_proof(index, size)
            .map_err(anyhow::Error::msg)?;
        Ok(Some(AnchorLog {
            bound: LoggedEntry {
                index,
                entry: hex::encode(entry),
                checkpoint,
                proof: proof.iter().map(|h| BASE64_STANDARD.encode(h.0)).collect(),
            },
            cosigned,
        }))
    }

    /// y of epoch `epoch` as the store holds it, with when the service had it (Unix ms): its
    /// resolved output, or, sooner (before the proof is done), the previous output in the
    /// input of the epoch that takes it, stored a moment after that epoch's close.
    async fn output_of(&self, epoch: u64) -> anyhow::Result<Option<(Vec<u8>, u64)>> {
        let Some(rec) = self.store.epoch(epoch).await? else {
            return Ok(None);
        };
        if let Some(out) = rec.output {
            return Ok(Some((out.y, out.resolved_at_ms.max(0) as u64)));
        }
        for next in epoch + 1..=epoch + MAX_LANES {
            let Some(later) = self.store.epoch(next).await? else {
                break;
            };
            if later.previous() == epoch {
                return Ok(later.input.map(|i| {
                    let at = later.closed_at_ms.unwrap_or(0).max(0) as u64;
                    (i.prev_y, at)
                }));
            }
        }
        Ok(None)
    }

    /// Voids the epochs whose plan or commitment lies beyond `from` (what a witness that
    /// refused holds) and is stale by now, so that the witness can take them (rule 4 lets a
    /// stale entry through with a void of its epoch in the same submission). A witness that was
    /// down catches up this way; an epoch its peers cosigned in time stays witnessed for them
    /// (a void takes nothing back). Returns how many epochs it voided.
    async fn void_stale_beyond(&self, from: u64) -> anyhow::Result<usize> {
        let _one = self.appending.lock().await;
        self.refresh().await?;
        let stale = (now_ms().max(0) as u64).saturating_sub(self.stale_after_ms);
        let voids: Vec<LogEntry> = {
            let i = self.inner.read().await;
            let oldest = i.tail.last_plan.saturating_sub(CATCH_UP_EPOCHS);
            i.epochs
                .range(oldest.max(1)..)
                .filter(|(_, at)| at.void.is_none())
                .filter(|(_, at)| {
                    let plan_stale = at.plan.is_some_and(|p| p >= from) && at.opened_ms < stale;
                    let commitment_stale = at.commitment.is_some_and(|c| c >= from)
                        && at.closed_ms.is_some_and(|c| c < stale);
                    plan_stale || commitment_stale
                })
                .map(|(&epoch, _)| {
                    LogEntry::Void(VoidEntry {
                        epoch,
                        stamped_ms: now_ms().max(0) as u64,
                    })
                })
                .collect()
        };
        let n = voids.len();
        if n > 0 {
            self.append(voids).await?;
        }
        Ok(n)
    }

    /// A tile or entry bundle (C2SP tlog-tiles path under the log's prefix).
    pub async fn serve_path(&self, path: &str) -> anyhow::Result<Option<Vec<u8>>> {
        if let Some(bytes) = self.inner.read().await.tree.serve_path(path) {
            return Ok(Some(bytes));
        }
        self.refresh().await?;
        Ok(self.inner.read().await.tree.serve_path(path))
    }

    /// The latest checkpoint with the cosignatures collected for it; the tree's own signed
    /// checkpoint where none was stored yet.
    pub async fn checkpoint(&self) -> anyhow::Result<String> {
        if let Some((_, note)) = self.store.latest_log_checkpoint().await? {
            return Ok(note);
        }
        let i = self.inner.read().await;
        let note = self
            .signer
            .sign(i.tree.size(), i.tree.root())
            .map_err(anyhow::Error::msg)?;
        Ok(String::from_utf8_lossy(&note).into_owned())
    }

    /// The signed note of the current tree (signed once per size).
    async fn note_for(&self, size: u64) -> anyhow::Result<Option<Vec<u8>>> {
        let mut cache = self.signed.lock().await;
        if let Some((s, n)) = cache.as_ref() {
            if *s == size {
                return Ok(Some(n.clone()));
            }
        }
        let i = self.inner.read().await;
        if i.tree.size() != size {
            return Ok(None);
        }
        let note = self
            .signer
            .sign(size, i.tree.root())
            .map_err(anyhow::Error::msg)?;
        *cache = Some((size, note.clone()));
        Ok(Some(note))
    }

    /// Keeps one witness up to date: whenever the log grows, pushes the newest checkpoint
    /// (from the witness's size, which a 409 tells), and stores each cosignature it returns
    /// with the checkpoint. A witness that fails is retried every second; a slow one delays
    /// only itself.
    pub async fn run_pusher(self: Arc<Self>, witness: WitnessTarget) {
        let mut sizes = self.size_tx.subscribe();
        let mut theirs: u64 = 0;
        let mut cosigned: u64 = 0;
        loop {
            let size = *sizes.borrow_and_update();
            if size > cosigned {
                match self.push_once(&witness, &mut theirs, size).await {
                    Ok(true) => cosigned = size,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(witness = %witness.url, error = %format!("{e:#}"), "the witness did not cosign");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                }
            }
            if sizes.changed().await.is_err() {
                return;
            }
        }
    }

    /// One push of the checkpoint of `size`; false when the tree moved on meanwhile.
    async fn push_once(
        &self,
        w: &WitnessTarget,
        theirs: &mut u64,
        size: u64,
    ) -> anyhow::Result<bool> {
        let url = format!("{}/add-checkpoint", w.url.trim_end_matches('/'));
        for _ in 0..2 {
            let Some(note) = self.note_for(size).await? else {
                return Ok(false);
            };
            let old = (*theirs).min(size);
            let proof = {
                let i = self.inner.read().await;
                i.tree
                    .consistency_proof(old, size)
                    .map_err(anyhow::Error::msg)?
            };
            let body = vrs_protocol::tlog::submission::encode(old, &proof, &note);
            let m = vrs_observe::metrics::global();
            let name = w.key.name.as_str();
            let started = std::time::Instant::now();
            let resp = match self.http.post(&url).body(body).send().await {
                Ok(r) => r,
                Err(e) => {
                    m.witness_refusals.with(&[name, "error"]).inc();
                    return Err(e.into());
                }
            };
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            match status {
                200 => {
                    m.witness_cosign_seconds
                        .with(&[name])
                        .observe(started.elapsed().as_secs_f64());
                    m.witness_cosigned_size.with(&[name]).set(size as f64);
                    *theirs = size;
                    self.record(size, &note, &text).await?;
                    return Ok(true);
                }
                409 => {
                    let size_there: u64 = text.trim().parse().context("a 409 without a size")?;
                    anyhow::ensure!(
                        size_there <= size,
                        "the witness stands at {size_there}, beyond this log's {size}"
                    );
                    *theirs = size_there;
                }
                _ => {
                    m.witness_refusals.with(&[name, &status.to_string()]).inc();
                    if status == 403 {
                        let voided = self.void_stale_beyond(*theirs).await?;
                        if voided > 0 {
                            // At once: waiting would leave the newest entries stale in turn.
                            tracing::warn!(witness = %w.url, voided, "the witness refused stale entries: their epochs are void");
                            return Ok(false);
                        }
                    }
                    anyhow::bail!("{status}: {}", text.trim())
                }
            }
        }
        anyhow::bail!("the witness kept answering 409")
    }

    /// Adds a cosignature line to the stored checkpoint of `size`.
    async fn record(&self, size: u64, note: &[u8], line: &str) -> anyhow::Result<()> {
        let mut collected = self.collected.lock().await;
        // What is stored already (before a restart, or by another leader) is kept: a later
        // cosignature of the same size never replaces an earlier one.
        let stored = match collected.contains_key(&size) {
            true => None,
            false => self
                .store
                .log_checkpoints_covering(size.saturating_sub(1), 1)
                .await?
                .into_iter()
                .find(|(s, _)| *s == size)
                .map(|(_, n)| n),
        };
        let entry = collected.entry(size).or_insert_with(|| {
            stored.unwrap_or_else(|| String::from_utf8_lossy(note).into_owned())
        });
        // One line per witness key: its first cosignature is the one that times entries.
        let name = line.strip_prefix("— ").and_then(|l| l.split(' ').next());
        if name.is_some_and(|n| cosigned_by(entry, n)) {
            return Ok(());
        }
        entry.push_str(line);
        let full = entry.clone();
        while collected.len() > 16 {
            collected.pop_first();
        }
        drop(collected);
        self.store.put_log_checkpoint(size, full, now_ms()).await?;
        Ok(())
    }

    /// The server's own `witnessed` check (None without witnesses).
    pub fn floor(&self) -> Option<&WitnessFloor> {
        self.floor.as_ref()
    }

    /// Epoch `epoch`'s plan and commitment, the output of p(e) and the operator's declaration
    /// (entry 0), with the checkpoints that prove them: for each, the first stored checkpoint
    /// each witness cosigned that includes it (the log's own signed checkpoint where none was
    /// cosigned). None: the log holds no plan of `epoch`.
    pub async fn evidence(&self, epoch: u64) -> anyhow::Result<Option<LogEvidence>> {
        // Epoch e's entries, and the index of p's output (None for p = 0 or not logged yet).
        let find = |i: &Inner| {
            let at = i.epochs.get(&epoch).copied()?;
            let output = match at.previous {
                0 => None,
                p => i.epochs.get(&p).and_then(|o| o.output),
            };
            Some((at, output))
        };
        let mut found = find(&*self.inner.read().await);
        let whole = found.is_some_and(|(at, output)| {
            at.commitment.is_some() && (at.previous == 0 || output.is_some())
        });
        if !whole {
            self.refresh().await?;
            found = find(&*self.inner.read().await);
        }
        let Some((
            EpochEntries {
                plan: Some(plan),
                commitment,
                ..
            },
            output,
        )) = found
        else {
            return Ok(None);
        };
        let commitment = match commitment {
            Some(i) => self.logged(i).await?,
            None => Vec::new(),
        };
        let previous_output = match output {
            Some(i) => self.logged(i).await?,
            None => Vec::new(),
        };
        Ok(Some(LogEvidence {
            origin: self.origin().to_owned(),
            plan: self.logged(plan).await?,
            commitment,
            moves: self.moves_from(epoch).await?,
            previous_output,
            operator: self.operator_evidence().await?,
        }))
    }

    /// The move entries from `epoch` on (its games' move, then its destination's, …), each
    /// with its checkpoints; empty when `epoch` is not moved.
    pub async fn moves_from(&self, epoch: u64) -> anyhow::Result<Vec<Vec<LoggedEntry>>> {
        let chain: Vec<u64> = {
            let i = self.inner.read().await;
            let mut chain = Vec::new();
            let mut at = epoch;
            while let Some(&(index, to)) = i.moves.get(&at) {
                if to <= at || chain.len() >= 256 {
                    break;
                }
                chain.push(index);
                at = to;
            }
            chain
        };
        let mut out = Vec::with_capacity(chain.len());
        for index in chain {
            out.push(self.logged(index).await?);
        }
        Ok(out)
    }

    /// Entry 0 (the operator's declaration) with its checkpoints, kept once every witness has
    /// cosigned it: from then on it never changes, and every verification carries it.
    async fn operator_evidence(&self) -> anyhow::Result<Vec<LoggedEntry>> {
        if let Some(kept) = self.operator_kept.lock().await.as_ref() {
            return Ok(kept.clone());
        }
        let logged = self.logged(0).await?;
        let everyone = self.witnesses.iter().all(|w| {
            logged
                .iter()
                .any(|l| cosigned_by(&l.checkpoint, &w.key.name))
        });
        if everyone && !self.witnesses.is_empty() {
            *self.operator_kept.lock().await = Some(logged.clone());
        }
        Ok(logged)
    }

    /// Entry `index` in each checkpoint that brings a witness's first cosignature of it.
    async fn logged(&self, index: u64) -> anyhow::Result<Vec<LoggedEntry>> {
        let stored = self.store.log_checkpoints_covering(index, COVERING).await?;
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut chosen = Vec::new();
        for (size, note) in stored {
            let firsts: Vec<&str> = self
                .witnesses
                .iter()
                .map(|w| w.key.name.as_str())
                .filter(|n| !seen.contains(n) && cosigned_by(&note, n))
                .collect();
            if !firsts.is_empty() {
                seen.extend(firsts);
                chosen.push((size, note));
            }
            if seen.len() == self.witnesses.len() {
                break;
            }
        }
        let i = self.inner.read().await;
        if chosen.is_empty() && i.tree.size() > index {
            let size = i.tree.size();
            let note = self
                .signer
                .sign(size, i.tree.root())
                .map_err(anyhow::Error::msg)?;
            chosen.push((size, String::from_utf8_lossy(&note).into_owned()));
        }
        let entry = i
            .tree
            .entry(index)
            .with_context(|| format!("log entry {index} is not in the tree"))?;
        chosen
            .into_iter()
            .filter(|(size, _)| *size <= i.tree.size())
            .map(|(size, checkpoint)| {
                let proof = i
                    .tree
                    .inclusion_proof(index, size)
                    .map_err(anyhow::Error::msg)?;
                Ok(LoggedEntry {
                    index,
                    entry: hex::encode(entry),
                    checkpoint,
                    proof: proof.iter().map(|h| BASE64_STANDARD.encode(h.0)).collect(),
                })
            })
            .collect()
    }

    /// Whether any witness is configured.
    pub fn witnesses(&self) -> &[WitnessTarget] {
        &self.witnesses
    }
}

/// With witnesses, an epoch's games resolve with its own output once its commitment is
/// cosigned by the server's quorum by its deadline + δ; past deadline + δ + 1 s without that,
/// the log voids the epoch and moves its games to the epoch open then (docs/PROTOCOL.md §21,
/// "Voids"): a witness that cosigned the commitment in time vouched for it and refuses the
/// move, and any such cosignature has come back by then.
#[async_trait::async_trait]
impl Settle for OperatorLog {
    async fn settlement(&self, epoch: u64) -> anyhow::Result<Settlement> {
        let Some(floor) = &self.floor else {
            return Ok(Settlement::Own);
        };
        #[cfg(feature = "testkit")]
        if crate::epoch::testkit::KEEP_VOID_OUTCOMES.get().is_some() {
            return Ok(Settlement::Own);
        }
        if let Some(&s) = self.settled.lock().await.get(&epoch) {
            return Ok(s);
        }
        let settled = match self.settle_now(epoch, floor).await? {
            Settlement::Wait => return Ok(Settlement::Wait),
            s => s,
        };
        self.settled.lock().await.insert(epoch, settled);
        Ok(settled)
    }
}

impl OperatorLog {
    async fn settle_now(&self, epoch: u64, floor: &WitnessFloor) -> anyhow::Result<Settlement> {
        let (at, last_plan, moved) = {
            let i = self.inner.read().await;
            (
                i.epochs.get(&epoch).copied(),
                i.tail.last_plan,
                i.moves.get(&epoch).copied(),
            )
        };
        if let Some((index, to)) = moved {
            // Its games go to `to` once the server's quorum cosigned the move (at any time):
            // what every verifier's `moved` step asks.
            let cosigned = self.cosigned_by_quorum(index, floor).await?;
            return Ok(if cosigned {
                Settlement::MovedTo(to)
            } else {
                Settlement::Wait
            });
        }
        let Some(at) = at.filter(|a| a.plan.is_some()) else {
            // Not in the log: an epoch from before it (or of version 1), or one it has not
            // reached yet.
            return Ok(if epoch > last_plan {
                Settlement::Wait
            } else {
                Settlement::Own
            });
        };
        let in_time = match at.commitment {
            Some(c) => self.in_time(c, at.deadline_ms, floor).await?,
            None => BTreeSet::new(),
        };
        if floor.policy.satisfied_by(&in_time) {
            return Ok(Settlement::Own);
        }
        let decided_at = at.deadline_ms + floor.delta_ms + 1000;
        if (now_ms().max(0) as u64) <= decided_at {
            return Ok(Settlement::Wait);
        }
        if !in_time.is_empty() {
            // Some witnesses (short of the quorum) cosigned the commitment in time and vouched
            // for it: they would refuse a move, and then every later checkpoint (rule 9). The
            // games keep the epoch's own outcome, and fail `witnessed` (short of the quorum).
            tracing::warn!(
                epoch,
                witnesses = ?in_time,
                "the commitment was cosigned in time by fewer than the quorum: not moved"
            );
            return Ok(Settlement::Own);
        }
        if last_plan.saturating_sub(epoch) >= CATCH_UP_EPOCHS {
            // Too old for the witnesses to take a move of it: its games keep its own outcome
            // (and fail `witnessed`).
            tracing::warn!(
                epoch,
                "a void epoch too old to move: its games resolve with its own output"
            );
            return Ok(Settlement::Own);
        }
        self.move_games(epoch).await?;
        let moved = self.inner.read().await.moves.get(&epoch).copied();
        Ok(moved.map_or(Settlement::Wait, |(_, to)| Settlement::MovedTo(to)))
    }

    /// The policy names of the witnesses that cosigned entry `index` (a commitment) by
    /// `deadline_ms` + δ, each by its earliest cosigned second.
    async fn in_time(
        &self,
        index: u64,
        deadline_ms: u64,
        floor: &WitnessFloor,
    ) -> anyhow::Result<BTreeSet<String>> {
        let logged = self.logged(index).await?;
        let Ok(proven) = prove_all("commitment", &logged, &floor.policy) else {
            return Ok(BTreeSet::new());
        };
        Ok(floor
            .policy
            .witnesses
            .iter()
            .filter(|w| {
                proven
                    .earliest
                    .get(&(w.key.name.clone(), w.key.id))
                    .is_some_and(|&t| t * 1000 <= deadline_ms + floor.delta_ms)
            })
            .map(|w| w.name.clone())
            .collect())
    }

    /// Whether the server's quorum cosigned entry `index`, at any time.
    async fn cosigned_by_quorum(&self, index: u64, floor: &WitnessFloor) -> anyhow::Result<bool> {
        let logged = self.logged(index).await?;
        let Ok(proven) = prove_all("move", &logged, &floor.policy) else {
            return Ok(false);
        };
        let names: BTreeSet<String> = floor
            .policy
            .witnesses
            .iter()
            .filter(|w| {
                proven
                    .earliest
                    .contains_key(&(w.key.name.clone(), w.key.id))
            })
            .map(|w| w.name.clone())
            .collect();
        Ok(floor.policy.satisfied_by(&names))
    }

    /// Logs a void of `epoch` (unless logged) and the move of its games to the epoch open now
    /// (planned in the log, neither committed nor void), once the log has settled `epoch` (its
    /// commitment or void logged) and the store has closed it.
    async fn move_games(&self, epoch: u64) -> anyhow::Result<()> {
        let _one = self.appending.lock().await;
        self.refresh().await?;
        let (at, tail, open) = {
            let i = self.inner.read().await;
            if i.moves.contains_key(&epoch) {
                return Ok(());
            }
            let open = i.tail.last_plan;
            let open_ok = i
                .epochs
                .get(&open)
                .is_some_and(|d| d.commitment.is_none() && d.void.is_none());
            (
                i.epochs.get(&epoch).copied(),
                i.tail,
                (open > epoch && open_ok).then_some(open),
            )
        };
        let (Some(at), Some(to)) = (at, open) else {
            return Ok(());
        };
        if tail.last_settled < epoch {
            return Ok(());
        }
        let (bets_root, bet_count) = match at.bets {
            Some(b) => b,
            None => {
                // Voided before its commitment was logged: its bets as the store closed them.
                let closed = self
                    .store
                    .epoch(epoch)
                    .await?
                    .is_some_and(|r| r.closed_at_ms.is_some());
                if !closed {
                    return Ok(());
                }
                let leaves = self.store.epoch_leaves(epoch).await?;
                let hashes: Vec<[u8; 32]> = leaves
                    .iter()
                    .map(|l| vrs_engine::merkle::leaf_hash(l))
                    .collect();
                (vrs_engine::merkle::root(&hashes), leaves.len() as u64)
            }
        };
        let mut out = Vec::new();
        if at.void.is_none() {
            out.push(LogEntry::Void(VoidEntry {
                epoch,
                stamped_ms: now_ms().max(0) as u64,
            }));
        }
        out.push(LogEntry::Move(MoveEntry {
            epoch,
            to,
            bets_root,
            bet_count,
        }));
        tracing::warn!(
            epoch,
            to,
            "the epoch's commitment was not witnessed in time: it is void and its games move on"
        );
        self.append(out).await
    }
}
