//! Anchoring batch Merkle roots on an EVM chain (docs/PROTOCOL.md §16, docs/OPERATIONS.md).
//!
//! The leader builds one batch every `--anchor-every` resolved epochs ([`batch::build_next`])
//! and sends its root as the calldata of one zero-value EIP-1559 transaction. The rules that
//! make every batch go on chain exactly once:
//! - Batches go out one at a time, oldest first; the next is sent once the previous one is
//!   confirmed, so a batch's nonce is the account's next one.
//! - A signed transaction is recorded in the store *before* it is broadcast. After a crash or
//!   an RPC outage the recorded transactions are looked up (and rebroadcast byte for byte if
//!   the node lost them), never signed afresh while one of them may still be mined.
//! - A transaction not included after `--anchor-replace-after` is replaced by one with the
//!   same nonce and higher fees; all recorded ones are watched, and at most one can be mined.
//! - Nothing here blocks epochs or bets: the loop runs beside them and only retries.

pub mod batch;
pub mod proof;

use alloy::primitives::Address;
use anyhow::{anyhow, Context};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use vrs_chain::rpc::{Chain, Fees};
use vrs_engine::anchor::Calldata;
use vrs_observe::clock::now_ms;
use vrs_store::{AnchorBatch, AnchorState, AnchorTx, Store};

use crate::tlog::OperatorLog;

/// How the service anchors (all of it fixed at start-up).
#[derive(Clone, Debug)]
pub struct AnchorConfig {
    /// Resolved epochs per batch.
    pub every: u64,
    /// The chain named in every proof, anchoring on or off.
    pub chain_name: String,
    pub chain_id: u64,
    /// Blocks (the including one counted) before a batch is confirmed.
    pub confirmations: u64,
    /// A transaction not included after this long is replaced with higher fees.
    pub replace_after: Duration,
    /// Pause between two passes of the loop.
    pub poll: Duration,
    /// Where the transactions go; `None`: the operator's own address.
    pub to: Option<Address>,
    /// Highest max fee per gas, in wei, ever offered (`None`: no cap).
    pub max_fee: Option<u128>,
}

/// What the HTTP handlers know of anchoring: the chain proofs name, and the live status.
#[derive(Clone, Debug)]
pub struct AnchorView {
    pub chain_name: String,
    pub chain_id: u64,
    pub every: u64,
    pub confirmations: u64,
    pub status: Arc<AnchorStatus>,
    /// Records' paths to their batch roots, kept once computed.
    pub paths: Arc<batch::KeptPaths>,
    /// The operator's log, which binds each batch (version-2 calldata); None without one.
    pub log: Option<Arc<OperatorLog>>,
    /// The calldata each confirmed batch's mined transaction carries, read from its recorded
    /// bytes once (at most [`SENT_KEPT`] batches, the newest).
    sent: Arc<Mutex<BTreeMap<u64, Calldata>>>,
}

/// Confirmed batches whose calldata [`AnchorView`] keeps.
const SENT_KEPT: usize = 4096;

impl Default for AnchorView {
    /// Anchoring off, Base mainnet named.
    fn default() -> Self {
        Self {
            chain_name: "base".into(),
            chain_id: 8453,
            every: 12,
            confirmations: 2,
            status: Arc::new(AnchorStatus::new(false)),
            paths: Arc::default(),
            log: None,
            sent: Arc::default(),
        }
    }
}

impl AnchorView {
    pub fn new(config: &AnchorConfig, status: Arc<AnchorStatus>) -> Self {
        Self {
            chain_name: config.chain_name.clone(),
            chain_id: config.chain_id,
            every: config.every,
            confirmations: config.confirmations,
            status,
            paths: Arc::default(),
            log: None,
            sent: Arc::default(),
        }
    }

    /// The same, with the operator's log that binds the batches.
    pub fn with_log(self, log: Option<Arc<OperatorLog>>) -> Self {
        Self { log, ..self }
    }

    /// The calldata of batch `b` as sent: the input of its mined transaction (before one is
    /// mined, of the newest recorded); for a batch not sent yet, what the anchorer will send
    /// (version 2 once the log holds its entry). So a proof shows what is on chain whatever the
    /// log's configuration was then or is now.
    pub async fn calldata(&self, store: &dyn Store, b: &AnchorBatch) -> anyhow::Result<Calldata> {
        let confirmed = b.status == AnchorState::Confirmed;
        if confirmed {
            if let Some(c) = self.kept_sent(b.number) {
                return Ok(c);
            }
        }
        if b.status != AnchorState::Pending {
            let txs = store.anchor_txs(b.number).await?;
            let sent = txs
                .iter()
                .find(|t| Some(t.hash) == b.tx_hash)
                .or(txs.last())
                .and_then(|t| vrs_chain::rpc::input_of(&t.raw))
                .and_then(|d| Calldata::parse(&d));
            if let Some(c) = sent {
                if confirmed {
                    self.keep_sent(b.number, c);
                }
                return Ok(c);
            }
        }
        let log = match &self.log {
            Some(log) => log.anchor_binding(b.number).await?,
            None => None,
        };
        Ok(Calldata::of(b.number, log, b.root))
    }

    fn kept_sent(&self, batch: u64) -> Option<Calldata> {
        let kept = self
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.get(&batch).copied()
    }

    fn keep_sent(&self, batch: u64, c: Calldata) {
        let mut kept = self
            .sent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.insert(batch, c);
        while kept.len() > SENT_KEPT {
            kept.pop_first();
        }
    }
}

/// The shared view of anchoring for `GET /` and stats.
#[derive(Debug, Default)]
pub struct AnchorStatus {
    inner: Mutex<StatusInner>,
}

#[derive(Clone, Debug, Default)]
pub struct StatusInner {
    /// `disabled`, `standby` (another replica leads), `starting`, `active`, `retrying`,
    /// `refused` (wrong chain id).
    pub state: &'static str,
    pub enabled: bool,
    pub address: Option<String>,
    pub to: Option<String>,
    pub last_error: Option<String>,
    pub last_error_at_ms: Option<i64>,
    pub consecutive_failures: u64,
}

impl AnchorStatus {
    pub fn new(enabled: bool) -> Self {
        Self {
            inner: Mutex::new(StatusInner {
                state: if enabled { "standby" } else { "disabled" },
                enabled,
                ..StatusInner::default()
            }),
        }
    }

    pub fn snapshot(&self) -> StatusInner {
        self.inner.lock().map(|g| g.clone()).unwrap_or_default()
    }

    fn update(&self, f: impl FnOnce(&mut StatusInner)) {
        if let Ok(mut g) = self.inner.lock() {
            f(&mut g);
        }
    }

    fn fail(&self, state: &'static str, error: String) {
        vrs_observe::metrics::global().anchor_failures.inc();
        self.update(|s| {
            s.state = state;
            s.last_error = Some(error);
            s.last_error_at_ms = Some(now_ms());
            s.consecutive_failures += 1;
        });
    }
}

/// The anchor loop of the leader.
#[derive(Clone)]
pub struct Anchorer {
    store: Arc<dyn Store>,
    config: AnchorConfig,
    /// `None`: anchoring is off (batches are not built either).
    chain: Option<Chain>,
    status: Arc<AnchorStatus>,
    /// Set once `eth_chainId` answered the configured id; cleared after an RPC failure so a
    /// node swapped behind the URL is caught.
    chain_checked: bool,
    refused: bool,
    /// The operator's log: a batch goes on chain only once its entry is logged, and its
    /// calldata binds it (docs/PROTOCOL.md §16, "Binding").
    log: Option<Arc<OperatorLog>>,
}

impl std::fmt::Debug for Anchorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anchorer")
            .field("config", &self.config)
            .field("chain", &self.chain)
            .finish()
    }
}

/// A transaction hash as chains and explorers spell it: 0x and 64 hex digits.
pub fn tx_hex(hash: &[u8; 32]) -> String {
    format!("0x{}", hex::encode(hash))
}

/// What a replacement must outbid: the nonce and the highest fees recorded for it.
#[derive(Clone, Copy, Debug)]
struct Replace {
    nonce: u64,
    fees: Fees,
}

/// Longest pause between retries after failures.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

impl Anchorer {
    pub fn new(
        store: Arc<dyn Store>,
        config: AnchorConfig,
        chain: Option<Chain>,
        status: Arc<AnchorStatus>,
    ) -> Self {
        status.update(|s| {
            s.address = chain.as_ref().map(|c| format!("{:#x}", c.address()));
            s.to = chain
                .as_ref()
                .map(|c| format!("{:#x}", config.to.unwrap_or(c.address())));
        });
        Self {
            store,
            config,
            chain,
            status,
            chain_checked: false,
            refused: false,
            log: None,
        }
    }

    /// The same, binding each batch to the operator's log.
    pub fn with_log(self, log: Option<Arc<OperatorLog>>) -> Self {
        Self { log, ..self }
    }

    /// Batch `batch`'s calldata. With a log: version 2 once its entry is logged; `None` (wait)
    /// while a batch not yet sent waits for it. A batch first sent before the log logged
    /// anchors keeps version 1.
    async fn calldata(&self, batch: &AnchorBatch, first: bool) -> anyhow::Result<Option<Calldata>> {
        let Some(log) = &self.log else {
            return Ok(Some(Calldata::of(batch.number, None, batch.root)));
        };
        match log.anchor_binding(batch.number).await? {
            Some(b) => Ok(Some(Calldata::of(batch.number, Some(b), batch.root))),
            None if first && batch.status == AnchorState::Pending => Ok(None),
            None => Ok(Some(Calldata::of(batch.number, None, batch.root))),
        }
    }

    /// After the lease is lost: another replica anchors now.
    pub fn stand_by(&self) {
        if self.chain.is_some() && !self.refused {
            self.status.update(|s| s.state = "standby");
        }
    }

    /// Runs while this process leads; never returns on its own (errors are retried).
    pub async fn run(&mut self) {
        if self.chain.is_none() {
            return std::future::pending().await;
        }
        self.status.update(|s| s.state = "starting");
        let mut backoff = self.config.poll;
        loop {
            match self.step().await {
                Ok(()) => {
                    backoff = self.config.poll;
                    if !self.refused {
                        self.status.update(|s| {
                            s.state = "active";
                            s.consecutive_failures = 0;
                        });
                    }
                }
                Err(e) => {
                    self.chain_checked = false;
                    let msg = format!("{e:#}");
                    tracing::warn!(error = %msg, retry_in_ms = backoff.as_millis() as u64, "anchoring failed; retrying");
                    self.status.fail("retrying", msg);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
            tokio::time::sleep(backoff).await;
        }
    }

    /// One pass: build a due batch, then move the oldest open batch one step on chain.
    async fn step(&mut self) -> anyhow::Result<()> {
        let built = batch::build_next(self.store.as_ref(), self.config.every, now_ms()).await;
        if let Ok(Some(b)) = &built {
            tracing::info!(
                batch = b.number,
                epochs = format!("{}..={}", b.first_epoch, b.last_epoch),
                leaves = b.leaves,
                root = hex::encode(b.root),
                "anchor batch built"
            );
        }
        // A batch that cannot be built must not hold back the ones already on their way.
        self.advance().await?;
        built.map(|_| ()).context("building the next anchor batch")
    }

    /// Moves the oldest open batch one step on chain.
    async fn advance(&mut self) -> anyhow::Result<()> {
        if self.refused || !self.check_chain().await? {
            return Ok(());
        }
        let Some(open) = self.store.open_anchor_batches().await?.into_iter().next() else {
            return Ok(());
        };
        match open.status {
            AnchorState::Pending => self.submit(&open, None).await,
            AnchorState::Submitted => self.track(&open).await,
            AnchorState::Confirmed => Ok(()),
        }
    }

    fn chain(&self) -> anyhow::Result<&Chain> {
        self.chain.as_ref().context("anchoring is disabled")
    }

    /// Checks `eth_chainId` once per connection; a wrong id stops anchoring for good.
    async fn check_chain(&mut self) -> anyhow::Result<bool> {
        if self.chain_checked {
            return Ok(true);
        }
        let id = self.chain()?.chain_id().await?;
        if id != self.config.chain_id {
            let msg = format!(
                "the anchor RPC reports chain id {id}, but --anchor-chain-id is {}: \
                 refusing to anchor (fix the URL or the id and restart)",
                self.config.chain_id
            );
            tracing::error!("{msg}");
            self.refused = true;
            self.status.fail("refused", msg);
            return Ok(false);
        }
        self.chain_checked = true;
        Ok(true)
    }

    fn to(&self) -> anyhow::Result<Address> {
        Ok(self.config.to.unwrap_or(self.chain()?.address()))
    }

    /// Signs a transaction for `batch` (a replacement at `replacing`'s nonce, above its fees,
    /// when given), records it, then broadcasts it.
    async fn submit(&self, batch: &AnchorBatch, replacing: Option<Replace>) -> anyhow::Result<()> {
        let chain = self.chain()?;
        let to = self.to()?;
        let Some(data) = self.calldata(batch, replacing.is_none()).await? else {
            tracing::debug!(
                batch = batch.number,
                "anchor batch waits for its entry in the log"
            );
            return Ok(());
        };
        let data = data.bytes();
        // x402 settlements send from the same account: not while one of them is choosing its
        // nonce or waiting to be mined.
        let _sending = chain.lock_sending().await;
        let now = chain.fees().await?;
        let (nonce, fees) = match replacing {
            Some(old) => (old.nonce, Fees::bumped(old.fees, now)),
            // The mined count, not the pending one: if two processes ever race on this batch
            // (a frozen leader waking up), both pick the same nonce and at most one is mined.
            None => (chain.mined_nonce().await?, now),
        };
        let fees = fees.capped(self.config.max_fee);
        let gas = chain.estimate_gas(to, &data).await?;
        let signed = chain
            .sign(self.config.chain_id, to, &data, nonce, gas, fees)
            .await?;
        let tx = AnchorTx {
            hash: signed.hash,
            batch: batch.number,
            nonce,
            max_fee: fees.max_fee,
            priority_fee: fees.priority_fee,
            raw: signed.raw,
            sent_at_ms: now_ms(),
        };
        // Durable before it can reach the chain: a restart finds it and never sends a second.
        self.store.record_anchor_tx(&tx).await.with_context(|| {
            format!("recording the transaction of anchor batch {}", batch.number)
        })?;
        tracing::info!(
            batch = batch.number,
            tx = tx_hex(&tx.hash),
            nonce,
            max_fee = fees.max_fee,
            replacement = replacing.is_some(),
            "anchor transaction sent"
        );
        chain.broadcast(&tx.raw).await.with_context(|| {
            format!(
                "broadcasting the transaction of anchor batch {}",
                batch.number
            )
        })
    }

    /// Follows a submitted batch: confirm it, wait, replace, rebroadcast, or resend.
    async fn track(&self, batch: &AnchorBatch) -> anyhow::Result<()> {
        let chain = self.chain()?;
        let txs = self.store.anchor_txs(batch.number).await?;
        let Some(newest) = txs.last() else {
            // Marked submitted with nothing recorded cannot happen (one transaction does both).
            return self.submit(batch, None).await;
        };
        if self.confirm_if_mined(batch, &txs).await? {
            return Ok(());
        }
        // None is mined. Has the nonce been used by a transaction we did not record?
        if chain.mined_nonce().await? > newest.nonce {
            // Read the records again: another process racing on this batch (a leader that has
            // not noticed it lost the lease) records before it broadcasts, so its transaction
            // is there if it is the one that was mined.
            let again = self.store.anchor_txs(batch.number).await?;
            if self.confirm_if_mined(batch, &again).await? || again.len() != txs.len() {
                return Ok(());
            }
            tracing::warn!(
                batch = batch.number,
                nonce = newest.nonce,
                "the anchor nonce was used by another transaction of this key; sending anew"
            );
            return self.submit(batch, None).await;
        }
        // Replacements are bumped from the highest fees recorded, whatever their order.
        let highest = txs.iter().fold(
            Fees {
                max_fee: 0,
                priority_fee: 0,
            },
            |f, t| Fees {
                max_fee: f.max_fee.max(t.max_fee),
                priority_fee: f.priority_fee.max(t.priority_fee),
            },
        );
        let waited = now_ms().saturating_sub(newest.sent_at_ms);
        // Nodes refuse a replacement under 10 % more on both fees; at the cap, wait instead.
        let next = Fees::bumped(highest, highest).capped(self.config.max_fee);
        let can_bump = next.max_fee > highest.max_fee + highest.max_fee / 10
            && next.priority_fee > highest.priority_fee + highest.priority_fee / 10;
        if waited >= self.config.replace_after.as_millis() as i64 && can_bump {
            tracing::warn!(
                batch = batch.number,
                waited_ms = waited,
                "anchor transaction not included; replacing it with higher fees"
            );
            return self
                .submit(
                    batch,
                    Some(Replace {
                        nonce: newest.nonce,
                        fees: highest,
                    }),
                )
                .await;
        }
        if !chain.knows(newest.hash).await? {
            // The node lost it (restart, eviction) or never got it (crash before broadcast).
            tracing::info!(
                batch = batch.number,
                tx = tx_hex(&newest.hash),
                "rebroadcasting the recorded anchor transaction"
            );
            return chain.broadcast(&newest.raw).await;
        }
        Ok(())
    }

    /// Confirms `batch` if one of its transactions has enough confirmations; `true` if one of
    /// them is mined at all (confirmed now or waiting for more blocks).
    async fn confirm_if_mined(
        &self,
        batch: &AnchorBatch,
        txs: &[AnchorTx],
    ) -> anyhow::Result<bool> {
        let chain = self.chain()?;
        for t in txs.iter().rev() {
            let Some(inc) = chain.inclusion(t.hash).await? else {
                continue;
            };
            if !inc.succeeded {
                // The calldata is on chain either way; a reverting anchor address is a setup
                // mistake worth shouting about, not a reason to pay twice.
                tracing::warn!(
                    tx = tx_hex(&t.hash),
                    "the anchor transaction reverted (is --anchor-address a contract?); its calldata still records the root"
                );
            }
            let head = chain.head().await?;
            let confirmations = (head + 1).saturating_sub(inc.block);
            if confirmations >= self.config.confirmations {
                self.store
                    .confirm_anchor_batch(batch.number, t.hash, inc.block, now_ms())
                    .await?;
                vrs_observe::metrics::global().anchors_confirmed.inc();
                tracing::info!(
                    batch = batch.number,
                    tx = tx_hex(&t.hash),
                    block = inc.block,
                    "anchor batch confirmed"
                );
            }
            return Ok(true);
        }
        Ok(false)
    }
}

/// Reads the signing key: `VRS_ANCHOR_PRIVATE_KEY`, else the key file. The key is never logged.
pub fn load_key(
    key_file: Option<&std::path::Path>,
) -> anyhow::Result<alloy::signers::local::PrivateKeySigner> {
    if let Ok(k) = std::env::var("VRS_ANCHOR_PRIVATE_KEY") {
        if !k.trim().is_empty() {
            return vrs_chain::rpc::parse_key(&k).context("VRS_ANCHOR_PRIVATE_KEY");
        }
    }
    let path = key_file.ok_or_else(|| {
        anyhow!(
            "--anchor-rpc-url is set but there is no signing key: set VRS_ANCHOR_PRIVATE_KEY \
             or --anchor-key-file"
        )
    })?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the anchor key file {}", path.display()))?;
    vrs_chain::rpc::parse_key(&text).with_context(|| format!("anchor key file {}", path.display()))
}
