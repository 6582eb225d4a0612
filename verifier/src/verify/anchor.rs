//! Anchors (docs/PROTOCOL.md §16) as an outsider checks them: the record's anchor leaf
//! recomputed from the published fields and folded up its audit path to the batch root
//! (`anchor_inclusion`), and the batch's transaction read back from a node of the verifier's
//! choosing (`anchor_onchain`), sent from the operator's anchor account. Shared by `vrs verify`
//! and `vrs audit`.

use super::{Fetch, Step, Verdict};
use anyhow::{bail, Context};
use serde_json::{json, Value};
use vrs_engine::anchor::{epoch_record_hash, Calldata, EpochRecord};
use vrs_engine::anchor::{AnchorLeaf, LeafKind};
use vrs_engine::merkle::{self, Hash};
use vrs_protocol::tlog::anchored::{self, AnchorLog};
use vrs_protocol::tlog::entry::AnchorEntry;
use vrs_protocol::tlog::policy::Policy;
use vrs_protocol::tlog::witnessed::{self, LogEvidence, WitnessFloor};

/// The account an anchor transaction must come from, and whose word names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sender {
    pub address: [u8; 20],
    /// The anchor chain the log's declaration names (None: taken from the proof).
    pub chain_id: Option<u64>,
    pub source: String,
}

/// The sender the operator's log declares: its entry 0, cosigned by the policy's quorum
/// (docs/PROTOCOL.md §16, "The sender").
pub(crate) fn sender_from_log(ev: &LogEvidence, floor: &WitnessFloor) -> Result<Sender, String> {
    let op = witnessed::operator_of(&ev.operator, &floor.policy)?;
    if op.anchor_address == [0; 20] {
        return Err(
            "the log's operator declaration names no anchor address (it declared that it \
             does not anchor)"
                .into(),
        );
    }
    Ok(Sender {
        address: op.anchor_address,
        chain_id: Some(op.anchor_chain_id),
        source: "the address of the log's operator declaration".into(),
    })
}

/// The sender the server names now (`anchoring.address` of `GET /api/v1/stats`): the
/// operator's live word, for a verifier without a witness policy.
pub(crate) fn sender_from_stats(fetch: &dyn Fetch, server: &str) -> Result<Sender, String> {
    let stats = fetch
        .get(&format!("{server}/api/v1/stats"))
        .map_err(|e| format!("{e:#}"))?;
    let named = stats["anchoring"]["address"]
        .as_str()
        .ok_or("GET /api/v1/stats names no anchoring.address")?;
    Ok(Sender {
        address: parse_address(named)
            .ok_or_else(|| format!("anchoring.address {named:?} is not an address"))?,
        chain_id: None,
        source: "anchoring.address of GET /api/v1/stats (the operator's word; with \
                 --witness-policy, the log's declaration)"
            .into(),
    })
}

/// `0x` and 40 hex digits, either case.
fn parse_address(s: &str) -> Option<[u8; 20]> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    let b = hex::decode(h).ok()?;
    b.try_into().ok()
}

/// What an `anchor` object (of a proof, or of `GET /api/v1/epochs/{n}`) claims once its
/// record is in an anchor batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Claim {
    pub batch: u64,
    pub status: String,
    pub first_epoch: u64,
    pub last_epoch: u64,
    /// Pool and notary batch ranges, half-open.
    pub pool: (u64, u64),
    pub notary: (u64, u64),
    /// The leaf bytes as shown (recomputed and compared, never trusted).
    pub leaf: Option<Vec<u8>>,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub audit_path: Vec<Hash>,
    pub root: Hash,
    /// The anchor transaction (`0x` and 64 hex digits); none until the batch is confirmed.
    pub tx: Option<String>,
    pub chain_id: Option<u64>,
    /// The batch's entry in the operator's log (version-2 calldata); None for version 1.
    pub log: Option<AnchorLog>,
    /// The calldata shown (`0x` hex), compared with the one the fields give.
    pub calldata: Option<String>,
}

impl Claim {
    /// `Ok(None)`: the record is in no batch yet (no `batch` member, or no `anchor` at all).
    /// `Err`: an anchor object that names a batch but does not have its shape.
    pub fn parse(anchor: &Value) -> Result<Option<Claim>, String> {
        if anchor.get("batch").is_none_or(Value::is_null) {
            return Ok(None);
        }
        let num = |ptr: &str| {
            anchor.pointer(ptr).and_then(Value::as_u64).ok_or_else(|| {
                format!("anchor{} is missing or not a number", ptr.replace('/', "."))
            })
        };
        let hash = |v: &Value, what: &str| -> Result<Hash, String> {
            let b = hex::decode(v.as_str().unwrap_or_default())
                .map_err(|e| format!("anchor.{what} is not hex: {e}"))?;
            b.try_into()
                .map_err(|_| format!("anchor.{what} is not 32 bytes"))
        };
        let audit_path = anchor
            .get("audit_path")
            .and_then(Value::as_array)
            .ok_or("anchor.audit_path is missing")?
            .iter()
            .map(|p| hash(p, "audit_path"))
            .collect::<Result<Vec<_>, _>>()?;
        let leaf = match anchor.get("leaf").and_then(Value::as_str) {
            Some(s) => Some(hex::decode(s).map_err(|e| format!("anchor.leaf is not hex: {e}"))?),
            None => None,
        };
        Ok(Some(Claim {
            batch: num("/batch")?,
            status: anchor["status"].as_str().unwrap_or_default().to_owned(),
            first_epoch: num("/epochs/first")?,
            last_epoch: num("/epochs/last")?,
            pool: (num("/pool_batches/from")?, num("/pool_batches/to")?),
            notary: (num("/notary_batches/from")?, num("/notary_batches/to")?),
            leaf,
            leaf_index: num("/leaf_index")?,
            tree_size: num("/tree_size")?,
            audit_path,
            root: hash(&anchor["root"], "root")?,
            tx: anchor["tx"].as_str().map(str::to_lowercase),
            chain_id: anchor["chain_id"].as_u64(),
            log: match anchor.get("log").filter(|l| !l.is_null()) {
                Some(l) => Some(
                    serde_json::from_value(l.clone()).map_err(|e| format!("anchor.log: {e}"))?,
                ),
                None => None,
            },
            calldata: anchor["calldata"].as_str().map(str::to_lowercase),
        }))
    }

    /// The calldata this batch's transaction must carry, from the claim's own fields, with
    /// what binds it: version 2, whose batch entry in the operator's log is checked here
    /// (with `policy`, signed by its log and cosigned by its quorum), or version 1, which
    /// binds no batch number and is refused under a policy (docs/PROTOCOL.md §16, "Binding").
    pub fn expected_calldata(&self, policy: Option<&Policy>) -> Result<(Calldata, String), String> {
        let claim = AnchorEntry {
            batch: self.batch,
            first_epoch: self.first_epoch,
            last_epoch: self.last_epoch,
            pool_from: self.pool.0,
            pool_to: self.pool.1,
            notary_from: self.notary.0,
            notary_to: self.notary.1,
            root: self.root,
        };
        let shown = self
            .calldata
            .as_deref()
            .and_then(|c| hex::decode(c.trim_start_matches("0x")).ok())
            .and_then(|d| Calldata::parse(&d));
        let (calldata, detail) =
            anchored::expected_calldata(&claim, shown.as_ref(), self.log.as_ref(), policy)?;
        let want = format!("0x{}", hex::encode(calldata.bytes()));
        if let Some(shown) = self.calldata.as_deref().filter(|c| *c != want) {
            return Err(format!(
                "anchor.calldata is {shown}, but the batch's fields give {want}"
            ));
        }
        Ok((calldata, detail))
    }

    fn epoch_count(&self) -> u64 {
        // Saturating everywhere: the ranges come from the server and may be anything.
        self.last_epoch
            .saturating_add(1)
            .saturating_sub(self.first_epoch)
    }

    /// Where `leaf` must sit in this batch: the leaves are the batch's epochs, then its pool
    /// batches, then its notary batches, each by number (§16), so the position follows from
    /// the ranges alone. Checking it (and the tree size) means the server cannot show a path
    /// into a tree with more, fewer or other leaves than the batch it names.
    fn position_of(&self, leaf: &AnchorLeaf) -> Result<u64, String> {
        let n = leaf.number;
        match leaf.kind {
            LeafKind::Epoch if (self.first_epoch..=self.last_epoch).contains(&n) => {
                Ok(n - self.first_epoch)
            }
            LeafKind::PoolBatch if (self.pool.0..self.pool.1).contains(&n) => {
                Ok(self.epoch_count().saturating_add(n - self.pool.0))
            }
            LeafKind::NotaryBatch if (self.notary.0..self.notary.1).contains(&n) => Ok(self
                .epoch_count()
                .saturating_add(self.pool.1.saturating_sub(self.pool.0))
                .saturating_add(n - self.notary.0)),
            kind => Err(format!(
                "anchor batch {} (epochs {}..={}, pool batches {}..{}) does not cover {kind:?} {n}",
                self.batch, self.first_epoch, self.last_epoch, self.pool.0, self.pool.1
            )),
        }
    }

    fn expected_tree_size(&self) -> u64 {
        self.epoch_count()
            .saturating_add(self.pool.1.saturating_sub(self.pool.0))
            .saturating_add(self.notary.1.saturating_sub(self.notary.0))
    }
}

/// Kind 1: `01 ‖ u64(e) ‖ epoch_record_e`.
pub(crate) fn epoch_leaf(r: &EpochRecord) -> AnchorLeaf {
    AnchorLeaf {
        kind: LeafKind::Epoch,
        number: r.epoch,
        hash: epoch_record_hash(r),
    }
}

/// `anchor_inclusion`: the recomputed `leaf` is the one shown, at the position the batch's
/// ranges give it, in a tree of the size they give, and its audit path folds to the root.
pub(crate) fn check_inclusion(claim: &Claim, leaf: &AnchorLeaf) -> Result<String, String> {
    let bytes = leaf.bytes();
    if claim.leaf.as_deref().is_some_and(|shown| shown != bytes) {
        return Err(format!(
            "the anchor leaf shown is not the one recomputed here ({})",
            hex::encode(bytes)
        ));
    }
    let position = claim.position_of(leaf)?;
    if claim.leaf_index != position || claim.tree_size != claim.expected_tree_size() {
        return Err(format!(
            "leaf {} of {} shown, but anchor batch {}'s ranges put it at {position} of {}",
            claim.leaf_index,
            claim.tree_size,
            claim.batch,
            claim.expected_tree_size()
        ));
    }
    let leaf_hash = merkle::leaf_hash(&bytes);
    if merkle::verify_inclusion(
        &leaf_hash,
        position,
        claim.tree_size,
        &claim.audit_path,
        &claim.root,
    ) {
        Ok(format!(
            "leaf {position} of {} leads to anchor batch {}'s root {}",
            claim.tree_size,
            claim.batch,
            hex::encode(claim.root)
        ))
    } else {
        Err(format!(
            "leaf {position} of {} and the audit path do not lead to anchor batch {}'s root {}",
            claim.tree_size,
            claim.batch,
            hex::encode(claim.root)
        ))
    }
}

/// The anchor leaf of the game's record, from the proof's own fields: kind 1 (its epoch) for
/// an epoch game, kind 2 (its pool batch's root) for a pool-served game.
fn game_leaf(proof: &Value, pool_served: bool) -> Result<AnchorLeaf, String> {
    let p = super::Fields(proof);
    if pool_served {
        return Ok(AnchorLeaf {
            kind: LeafKind::PoolBatch,
            number: p.u64("pool_batch")?,
            hash: p.hash("batch_root")?,
        });
    }
    Ok(epoch_leaf(&EpochRecord {
        epoch: p.u64("vdfEpoch")?,
        iterations: p.u64("iterations")?,
        bets_root: &p.hash("bets_root")?,
        prev_y: &p.bytes("previous_output")?,
        x: &p.bytes("x")?,
        y: &p.bytes("y")?,
        l: &p.bytes("l")?,
        pi: &p.bytes("pi")?,
    }))
}

/// `anchor_inclusion`, once the proof says the game's record is in an anchor batch; `None`
/// before (nothing to include yet).
pub(super) fn inclusion_step(
    proof: &Value,
    pool_served: bool,
    policy: Option<&Policy>,
) -> Option<Step> {
    let verdict = match Claim::parse(&proof["anchor"]) {
        Ok(None) => return None,
        Err(e) => Verdict::Fail(e),
        Ok(Some(claim)) => {
            let checked = game_leaf(proof, pool_served)
                .and_then(|leaf| check_inclusion(&claim, &leaf))
                .and_then(|d| {
                    let (_, bound) = claim.expected_calldata(policy)?;
                    Ok(format!("{d}; {bound}"))
                });
            match checked {
                Ok(d) => Verdict::Pass(d),
                Err(d) => Verdict::Fail(d),
            }
        }
    };
    Some(Step::new("anchor_inclusion", verdict))
}

/// Without `--rpc`: a line saying the anchor transaction was not read back, when there is one.
pub(super) fn unchecked_note(proof: &Value) -> Option<String> {
    let tx = proof["anchorTx"].as_str()?;
    Some(format!(
        "note: anchor transaction {tx} (chain id {}) was not read back from a node: give \
         --rpc URL to check it on chain",
        proof["anchorChainId"]
    ))
}

/// `anchor_onchain`: the proof's anchor transaction read back from the node at `rpc`.
/// `Err` only when the node cannot be asked (exit 2); `require` turns pending into failed.
pub(super) fn onchain_step(
    rpc: &Rpc,
    proof: &Value,
    require: bool,
    sender: &Result<Sender, String>,
    policy: Option<&Policy>,
) -> anyhow::Result<Step> {
    let verdict = match onchain_verdict(rpc, proof, sender, policy)? {
        Verdict::Pending(d) if require => Verdict::Fail(format!("{d} (--require-anchor)")),
        v => v,
    };
    Ok(Step::new("anchor_onchain", verdict))
}

fn onchain_verdict(
    rpc: &Rpc,
    proof: &Value,
    sender: &Result<Sender, String>,
    policy: Option<&Policy>,
) -> anyhow::Result<Verdict> {
    let anchor = &proof["anchor"];
    let claim = match Claim::parse(anchor) {
        Err(e) => return Ok(Verdict::Fail(e)),
        Ok(None) => {
            return Ok(Verdict::Pending(
                if anchor["enabled"] == false {
                    "this server does not anchor: there is no transaction to check"
                } else {
                    "not in an anchor batch yet: nothing on chain to check"
                }
                .into(),
            ))
        }
        Ok(Some(c)) => c,
    };
    let Some(tx) = proof["anchorTx"].as_str().map(str::to_lowercase) else {
        if claim.status == "confirmed" {
            return Ok(Verdict::Fail(format!(
                "anchor batch {} is confirmed but the proof names no anchorTx",
                claim.batch
            )));
        }
        return Ok(Verdict::Pending(format!(
            "anchor batch {} is {}: no confirmed transaction yet",
            claim.batch, claim.status
        )));
    };
    if claim.tx.as_deref() != Some(tx.as_str()) {
        return Ok(Verdict::Fail(format!(
            "anchorTx {tx} but the anchor object names {}",
            claim.tx.as_deref().unwrap_or("none")
        )));
    }
    let Some(chain_id) = proof["anchorChainId"].as_u64() else {
        return Ok(Verdict::Fail("the proof names no anchorChainId".into()));
    };
    let node_chain = rpc.chain_id()?;
    if node_chain != chain_id {
        return Ok(Verdict::Fail(format!(
            "the node at {} is on chain {node_chain}, the proof names chain {chain_id}",
            rpc.url
        )));
    }
    let sender = match sender {
        Ok(s) => s,
        Err(e) => return Ok(Verdict::Fail(format!("the anchor's sender: {e}"))),
    };
    let expected = match claim.expected_calldata(policy) {
        Ok((c, _)) => c,
        Err(e) => return Ok(Verdict::Fail(e)),
    };
    check_transaction(rpc, &tx, &expected, sender)
}

/// The transaction `tx` is mined on the node's chain, comes from `sender` and its input is
/// exactly `expected`. `Err` only when the node cannot be asked.
pub(crate) fn check_transaction(
    rpc: &Rpc,
    tx: &str,
    expected: &Calldata,
    sender: &Sender,
) -> anyhow::Result<Verdict> {
    // A malformed hash is the server's data failing, not the node: never sent.
    let well_formed = tx
        .strip_prefix("0x")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if !well_formed {
        return Ok(Verdict::Fail(format!(
            "anchorTx {tx:?} is not a transaction hash"
        )));
    }
    let t = rpc.call("eth_getTransactionByHash", json!([tx]))?;
    if t.is_null() {
        return Ok(Verdict::Fail(format!(
            "the node at {} knows no transaction {tx}",
            rpc.url
        )));
    }
    let Some(block) = quantity(&t["blockNumber"]) else {
        return Ok(Verdict::Fail(format!(
            "transaction {tx} is not mined (blockNumber is null)"
        )));
    };
    let input = t["input"]
        .as_str()
        .or_else(|| t["data"].as_str())
        .unwrap_or_default()
        .to_lowercase();
    if input != format!("0x{}", hex::encode(expected.bytes())) {
        let carries = hex::decode(input.trim_start_matches("0x"))
            .ok()
            .and_then(|d| Calldata::parse(&d))
            .map_or("is not anchor calldata".to_owned(), |c| {
                format!("carries {}", c.describe())
            });
        return Ok(Verdict::Fail(format!(
            "transaction {tx} {carries}, not {}",
            expected.describe()
        )));
    }
    let from = t["from"].as_str().unwrap_or_default();
    let want = format!("0x{}", hex::encode(sender.address));
    if from.to_lowercase() != want {
        return Ok(Verdict::Fail(format!(
            "transaction {tx} is sent from {from}, not from the operator's anchor account {want} \
             ({}): anyone can put a root on chain",
            sender.source
        )));
    }
    if let Some(declared) = sender.chain_id {
        let node_chain = rpc.chain_id()?;
        if declared != node_chain {
            return Ok(Verdict::Fail(format!(
                "the log's operator declaration anchors on chain {declared}, the node at {} is \
                 on chain {node_chain}",
                rpc.url
            )));
        }
    }
    let head = rpc.head()?;
    let confirmations = head.saturating_add(1).saturating_sub(block);
    Ok(Verdict::Pass(format!(
        "transaction {tx} in block {block} ({confirmations} confirmations, from {want}, {}) \
         carries {}",
        sender.source,
        expected.describe()
    )))
}

/// A JSON-RPC client for an EVM node, over the checking commands' blocking HTTP client.
#[derive(Debug)]
pub(crate) struct Rpc<'a> {
    http: &'a dyn Fetch,
    pub url: String,
}

impl<'a> Rpc<'a> {
    pub fn new(http: &'a dyn Fetch, url: &str) -> Self {
        Rpc {
            http,
            url: url.to_owned(),
        }
    }

    /// Calls `method`: its `result` (JSON null included), or an error for a node that cannot
    /// be reached or answers with a JSON-RPC error.
    pub fn call(&self, method: &str, params: Value) -> anyhow::Result<Value> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let answer = self
            .http
            .post(&self.url, &body)
            .with_context(|| format!("RPC {method}"))?;
        if let Some(err) = answer.get("error").filter(|e| !e.is_null()) {
            bail!("{}: RPC {method} failed: {err}", self.url);
        }
        answer
            .get("result")
            .cloned()
            .with_context(|| format!("{}: RPC {method}: no result in {answer}", self.url))
    }

    pub fn chain_id(&self) -> anyhow::Result<u64> {
        let v = self.call("eth_chainId", json!([]))?;
        quantity(&v).with_context(|| format!("{}: eth_chainId gave {v}", self.url))
    }

    pub fn head(&self) -> anyhow::Result<u64> {
        let v = self.call("eth_blockNumber", json!([]))?;
        quantity(&v).with_context(|| format!("{}: eth_blockNumber gave {v}", self.url))
    }

    /// The timestamp (Unix ms) of the block that mined transaction `tx`; `None` when the node
    /// knows no such mined transaction.
    pub fn mined_at_ms(&self, tx: &str) -> anyhow::Result<Option<i64>> {
        let t = self.call("eth_getTransactionByHash", json!([tx]))?;
        let Some(block) = t.get("blockNumber").filter(|b| !b.is_null()) else {
            return Ok(None);
        };
        let b = self.call("eth_getBlockByNumber", json!([block, false]))?;
        let secs = quantity(&b["timestamp"])
            .with_context(|| format!("{}: block {block} has no timestamp", self.url))?;
        Ok(i64::try_from(secs).ok().map(|s| s.saturating_mul(1000)))
    }
}

/// An Ethereum JSON-RPC quantity (`"0x1a"`); `None` for null or anything else.
fn quantity(v: &Value) -> Option<u64> {
    u64::from_str_radix(v.as_str()?.strip_prefix("0x")?, 16).ok()
}
