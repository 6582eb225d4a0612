//! An anchor batch in the operator's log (docs/PROTOCOL.md §16, "Binding"): batch n's entry
//! `vrs/log/anchor` (n, the records it covers, its root), appended before the batch goes on
//! chain. The version-2 calldata carries n and the log's size and root once that entry was
//! appended (the tree of size index + 1), and witnesses cosign one entry per batch number, each
//! starting where the one before ended (rule 8), so a second root for n, or a second batch over
//! the same records, even from the operator's own account, cannot gather a quorum.

use std::collections::BTreeSet;

use vrs_engine::anchor::{Calldata, LogBinding};

use super::entry::{AnchorEntry, LogEntry};
use super::note::checkpoint_body;
use super::policy::Policy;
use super::tree::{check_inclusion, leaf_hash, parse_b64_hash};
use super::witnessed::{prove, prove_all, LoggedEntry};

/// `anchor.log` of a proof: the batch's entry in the tree its calldata binds, and in the
/// checkpoints witnesses cosigned.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct AnchorLog {
    /// The entry in the log of size index + 1, under the operator's signed checkpoint of
    /// that size: the size and root the calldata carries.
    pub bound: LoggedEntry,
    /// The entry in each stored checkpoint that brings a witness's first cosignature of it
    /// (as the plan's in `log`); empty without witnesses.
    #[serde(default)]
    pub cosigned: Vec<LoggedEntry>,
}

/// What a verifier takes from `anchor.log`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    pub entry: AnchorEntry,
    pub log: LogBinding,
    /// The policy names of the witnesses that cosigned the entry (empty without a policy).
    pub cosigned_by: Vec<String>,
}

/// Checks `anchor.log`: the bound entry is an anchor entry, the last leaf of its checkpoint's
/// tree; with a policy, that checkpoint is signed by the policy's log and the same entry is in
/// checkpoints a quorum of its witnesses cosigned (at any time: an anchor is not timed).
/// Without one, nothing is signed-checked: the binding is the operator's word.
pub fn bound(log: &AnchorLog, policy: Option<&Policy>) -> Result<Bound, String> {
    let b = &log.bound;
    let bytes = hex::decode(&b.entry).map_err(|_| "the anchor entry is not hex".to_owned())?;
    let LogEntry::Anchor(entry) = LogEntry::decode(&bytes).map_err(|e| e.to_string())? else {
        return Err(format!("log entry {} is not an anchor entry", b.index));
    };
    let (size, root) = match policy {
        Some(policy) => {
            let p = prove(b, policy).map_err(|e| format!("the anchor entry: {e}"))?;
            let (_, _, root) =
                checkpoint_body(b.checkpoint.as_bytes()).map_err(|e| e.to_string())?;
            (p.size, root)
        }
        None => {
            let (_, size, root) =
                checkpoint_body(b.checkpoint.as_bytes()).map_err(|e| e.to_string())?;
            let proof = b
                .proof
                .iter()
                .map(|h| parse_b64_hash(h))
                .collect::<Result<Vec<_>, String>>()?;
            check_inclusion(&proof, size, root, b.index, leaf_hash(&bytes))
                .map_err(|e| format!("the anchor entry: {e}"))?;
            (size, root)
        }
    };
    if size != b.index + 1 {
        return Err(format!(
            "the anchor entry is entry {} of a log of {size}: the bound log ends with it (size {})",
            b.index,
            b.index + 1
        ));
    }
    let mut cosigned_by = Vec::new();
    // `quorum none` requires no cosignature: nothing to read in `cosigned`.
    if let Some(policy) = policy.filter(|p| p.requires_witnesses() || !log.cosigned.is_empty()) {
        let c = prove_all("anchor entry", &log.cosigned, policy)?;
        if c.index != b.index || c.entry != LogEntry::Anchor(entry) {
            return Err(format!(
                "the cosigned anchor entry (entry {}) is not the bound one (entry {})",
                c.index, b.index
            ));
        }
        let names: BTreeSet<String> = policy
            .witnesses
            .iter()
            .filter(|w| c.earliest.contains_key(&(w.key.name.clone(), w.key.id)))
            .map(|w| w.name.clone())
            .collect();
        if !policy.satisfied_by(&names) {
            return Err(format!(
                "anchor batch {}'s entry is cosigned by [{}], short of the quorum {}",
                entry.batch,
                names.into_iter().collect::<Vec<_>>().join(", "),
                policy.describe()
            ));
        }
        cosigned_by = names.into_iter().collect();
    }
    Ok(Bound {
        entry,
        log: LogBinding { size, root: root.0 },
        cosigned_by,
    })
}

/// An anchor entry in words, for a verifier's detail.
pub fn describe(e: &AnchorEntry) -> String {
    format!(
        "batch {} (epochs {}..={}, pool batches {}..{}, notary batches {}..{}, root {})",
        e.batch,
        e.first_epoch,
        e.last_epoch,
        e.pool_from,
        e.pool_to,
        e.notary_from,
        e.notary_to,
        hex::encode(e.root)
    )
}

/// The calldata the anchor batch a proof claims (`claim`: its number, ranges and root) must
/// carry, and what binds it, in words. With `log` (the batch's `anchor.log`, checked by
/// [`bound`]), its entry must be the claim; the calldata is version 2 (n, the bound log's size
/// and root, the root), or version 1 when the calldata shown is version 1 (a batch sent before
/// the log held its entry: the log alone binds n). Without `log` it is version 1, refused under
/// a policy: it binds no batch number, so one root per batch would rest on the operator's word.
pub fn expected_calldata(
    claim: &AnchorEntry,
    shown: Option<&Calldata>,
    log: Option<&AnchorLog>,
    policy: Option<&Policy>,
) -> Result<(Calldata, String), String> {
    let (batch, root) = (claim.batch, claim.root);
    let Some(log) = log else {
        if policy.is_some() {
            return Err(format!(
                "anchor batch {batch} has no entry in the operator's log (version-1 calldata, \
                 which binds no batch number): under a witness policy one root per batch rests \
                 on the quorum's cosigning of that entry"
            ));
        }
        return Ok((
            Calldata::V1 { root },
            "version-1 calldata binds no batch number: that batch has one root is the \
             operator's word"
                .to_owned(),
        ));
    };
    let b = bound(log, policy).map_err(|e| format!("anchor.log: {e}"))?;
    if b.entry != *claim {
        return Err(format!(
            "anchor.log's entry is {}, not the {} the proof claims",
            describe(&b.entry),
            describe(claim)
        ));
    }
    let whose = if policy.is_some() {
        format!("cosigned by [{}]", b.cosigned_by.join(", "))
    } else {
        "unchecked against a witness policy: the log's word".to_owned()
    };
    let detail = format!(
        "batch {batch} bound to the log of size {} (its entry {}, {whose})",
        b.log.size, log.bound.index
    );
    Ok(match shown {
        Some(Calldata::V1 { .. }) => (
            Calldata::V1 { root },
            format!("{detail}; version-1 calldata, sent before the log held the entry"),
        ),
        _ => (
            Calldata::V2 {
                batch,
                log: b.log,
                root,
            },
            detail,
        ),
    })
}
