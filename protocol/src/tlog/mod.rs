//! The witnessed log (docs/PROTOCOL.md §21): an append-only RFC 6962 log of what the operator
//! commits to (its declaration, each epoch's plan and commitment, voids, pool batch roots),
//! published as C2SP tlog-tiles with C2SP tlog-checkpoint signed notes, cosigned by witnesses
//! (C2SP tlog-witness, tlog-cosignature) whose timestamps, not the operator's, time each
//! commitment.
//!
//! ```text
//! anchored.rs   an anchor batch's entry, bound by its calldata and cosigned once
//! entry.rs      the entries and their bytes
//! history.rs    a whole log replayed under the witnesses' rules (an auditor's reading)
//! moved.rs      the `moved` step: a void epoch's games sent on to a later epoch
//! tree.rs       the tree: roots, proofs, tiles, entry bundles; a witness's Frontier
//! note.rs       checkpoints, vkeys, cosignature/v1
//! policy.rs     a verifier's witness policy (C2SP tlog-policy) and its quorum
//! rules.rs      what a vrs witness refuses, beyond the tlog rules
//! submission.rs the body of a tlog-witness add-checkpoint request
//! witnessed.rs  the `witnessed` step: an epoch's plan and commitment, cosigned in time
//! ```

pub mod anchored;
pub mod entry;
pub mod history;
pub mod moved;
pub mod note;
pub mod policy;
pub mod rules;
pub mod submission;
pub mod tree;
pub mod witnessed;

pub use entry::LogEntry;
pub use tree::{Hash, LogTree};

/// docs/test-vectors/`name` must hold `doc` as the Rust code computes it; with
/// VRS_WRITE_VECTORS set, it is rewritten.
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn keep_vector(name: &str, doc: &serde_json::Value) {
    let text = serde_json::to_string_pretty(doc).unwrap() + "\n";
    let path = format!("{}/../docs/test-vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("VRS_WRITE_VECTORS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        kept == text,
        "{path} is not what the verifier computes; VRS_WRITE_VECTORS=1 rewrites it"
    );
}
