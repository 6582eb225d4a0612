//! Receipts: the leaf each one commits to, and how a stored receipt is shown with its proof
//! and a verification recomputed at read time (docs/PROTOCOL.md §17).
//!
//! ```text
//! leaf      = u8(21) ‖ "vrs/v1/notary-receipt" ‖ field(receipt_id) ‖ field(schema)
//!             ‖ payload_hash (32 bytes) ‖ SHA-256(metadata, RFC 8785) ‖ u64 submitted_at_ms
//! field(s)  = u16(len(s)) big-endian ‖ s
//! leaf_hash = SHA-256(0x00 ‖ leaf)                               (RFC 6962)
//! batch     = RFC 6962 tree over the leaf hashes of the batch's receipts in acceptance order
//! anchor    = the batch root is anchor leaf kind 3 (docs/PROTOCOL.md §16)
//! ```

use crate::anchor::batch::{inclusion, Subject};
use crate::anchor::proof::{inclusion_check, inclusion_doc};
use crate::anchor::AnchorView;
use rand::RngCore;
use serde_json::Value;
use sha2::{Digest, Sha256};
use vrs_engine::merkle;
use vrs_protocol::notary::receipt_doc::{
    Receipt, ReceiptAnchor, ReceiptAnchorPending, ReceiptPayment, ReceiptProof,
    ReceiptVerification, ReceiptView,
};
use vrs_protocol::report::{check, Check};
use vrs_store::{AnchorState, ReceiptRecord, Store};

/// Domain tag that starts every receipt leaf.
pub const LEAF_TAG: &[u8] = b"vrs/v1/notary-receipt";

/// A new random receipt id: 32 lowercase hex digits (128 bits).
pub fn new_receipt_id() -> String {
    let mut b = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut b);
    hex::encode(b)
}

/// Whether `id` has the form of a receipt id (anything else is 404 without a lookup).
pub fn is_receipt_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

/// The leaf bytes of a receipt.
pub fn leaf(
    receipt_id: &str,
    schema: &str,
    payload_hash: &[u8; 32],
    metadata: &str,
    submitted_at_ms: i64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(160);
    out.push(LEAF_TAG.len() as u8);
    out.extend_from_slice(LEAF_TAG);
    for f in [receipt_id, schema] {
        out.extend_from_slice(&(f.len().min(u16::MAX as usize) as u16).to_be_bytes());
        out.extend_from_slice(&f.as_bytes()[..f.len().min(u16::MAX as usize)]);
    }
    out.extend_from_slice(payload_hash);
    out.extend_from_slice(&Sha256::digest(metadata.as_bytes()));
    out.extend_from_slice(&submitted_at_ms.to_be_bytes());
    out
}

/// The RFC 6962 leaf hash of a stored receipt, recomputed from its fields.
pub fn recompute_leaf_hash(r: &ReceiptRecord) -> Result<[u8; 32], String> {
    let digest = vrs_protocol::notary::schema::parse_payload_hash(&r.payload_hash)
        .map_err(|e| format!("stored payload hash: {}", e.message))?;
    Ok(merkle::leaf_hash(&leaf(
        &r.receipt_id,
        &r.schema,
        &digest,
        &r.metadata,
        r.submitted_at_ms,
    )))
}

/// Where a receipt stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiptStatus {
    /// Accepted and durable; not in a batch yet.
    Pending,
    /// In a sealed batch: it has a Merkle proof to the batch root.
    Sealed,
    /// Its batch root is inside a confirmed anchor transaction.
    Anchored,
}

impl ReceiptStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Sealed => "sealed",
            Self::Anchored => "anchored",
        }
    }
}

/// The URL of a receipt under the notary's base URL.
pub fn receipt_url(base: &str, receipt_id: &str) -> String {
    format!("{base}/v1/notarize/{receipt_id}")
}

/// The members every view of a receipt has (the 202 answer and `GET`).
pub fn receipt_doc(r: &ReceiptRecord, status: ReceiptStatus, base_url: &str) -> Receipt {
    let metadata: Value = serde_json::from_str(&r.metadata).unwrap_or(Value::Null);
    let x402 = r.payment_method == "x402";
    Receipt {
        receipt_id: r.receipt_id.clone(),
        status: status.as_str().to_owned(),
        schema: r.schema.clone(),
        payload_hash: r.payload_hash.clone(),
        metadata,
        leaf_hash: hex::encode(r.leaf_hash),
        submitted_at: r.submitted_at_ms / 1000,
        submitted_at_ms: r.submitted_at_ms,
        receipt_url: receipt_url(base_url, &r.receipt_id),
        payment: ReceiptPayment {
            method: r.payment_method.clone(),
            payer: x402.then(|| r.payer.clone()),
            transaction: x402.then(|| r.payment_tx.clone()),
        },
        message: None,
    }
}

/// A stored receipt with its proof, its anchor and a verification recomputed now from the
/// stored data. A store error is returned (the caller answers 503).
pub async fn full_view(
    store: &dyn Store,
    anchor: &AnchorView,
    r: &ReceiptRecord,
    base_url: &str,
) -> anyhow::Result<ReceiptView> {
    let mut checks: Vec<Check> = Vec::new();
    check(
        &mut checks,
        "leaf_hash",
        match recompute_leaf_hash(r) {
            Ok(h) if h == r.leaf_hash => Ok(format!(
                "the receipt's fields hash to its leaf hash {}",
                hex::encode(h)
            )),
            Ok(h) => Err(format!(
                "the receipt's fields hash to {}, not to its stored leaf hash {}",
                hex::encode(h),
                hex::encode(r.leaf_hash)
            )),
            Err(e) => Err(e),
        },
    );
    let mut status = ReceiptStatus::Pending;
    let mut proof = None;
    let mut anchor_doc = None;
    if let Some((number, index)) = r.sealed {
        status = ReceiptStatus::Sealed;
        let batch = store.notary_batch(number).await?;
        let leaves = store.notary_batch_leaves(number).await?;
        let path = merkle::audit_path(&leaves, index as usize).unwrap_or_default();
        match &batch {
            Some(b) => {
                let included = merkle::verify_inclusion(
                    &r.leaf_hash,
                    index,
                    leaves.len() as u64,
                    &path,
                    &b.root,
                );
                check(
                    &mut checks,
                    "batch_inclusion",
                    if included {
                        Ok(format!(
                            "leaf {index} of {} folds up its audit path to notary batch \
                             {number}'s root {}",
                            leaves.len(),
                            hex::encode(b.root)
                        ))
                    } else {
                        Err(format!(
                            "leaf {index} does not lead to notary batch {number}'s stored root {} \
                             (its stored leaves give {})",
                            hex::encode(b.root),
                            hex::encode(merkle::root(&leaves))
                        ))
                    },
                );
                proof = Some(ReceiptProof {
                    batch: number,
                    leaf_index: index,
                    tree_size: leaves.len() as u64,
                    leaf_hash: hex::encode(r.leaf_hash),
                    audit_path: path.iter().map(hex::encode).collect(),
                    root: hex::encode(b.root),
                    sealed_at: b.created_at_ms / 1000,
                });
            }
            None => check(
                &mut checks,
                "batch_inclusion",
                Err(format!("notary batch {number} is missing")),
            ),
        }
        let enabled = anchor.status.snapshot().enabled;
        match inclusion(store, &anchor.paths, Subject::NotaryBatch(number)).await {
            Ok(Some(inc)) => {
                check(&mut checks, "anchor_inclusion", inclusion_check(&inc));
                if inc.batch.status == AnchorState::Confirmed {
                    status = ReceiptStatus::Anchored;
                }
                anchor_doc = Some(ReceiptAnchor::Batched(
                    inclusion_doc(store, &inc, anchor, enabled).await?,
                ));
            }
            Ok(None) => {
                let message = if enabled {
                    "the batch is not in an anchor batch yet (one is built every few resolved \
                     epochs)"
                } else {
                    "anchoring is disabled on this service"
                };
                anchor_doc = Some(ReceiptAnchor::Pending(ReceiptAnchorPending {
                    status: "pending".into(),
                    enabled,
                    chain: anchor.chain_name.clone(),
                    chain_id: anchor.chain_id,
                    message: message.into(),
                }));
            }
            Err(e) if e.downcast_ref::<vrs_store::StoreError>().is_some() => return Err(e),
            Err(e) => check(&mut checks, "anchor_inclusion", Err(format!("{e:#}"))),
        }
    }
    Ok(ReceiptView {
        receipt: receipt_doc(r, status, base_url),
        proof,
        anchor: anchor_doc,
        verification: ReceiptVerification {
            verified: checks.iter().all(|c| c.passed),
            computed_at: vrs_observe::clock::now_ms() / 1000,
            checks,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn leaf_layout() {
        let l = leaf("ab", "sha256", &[7; 32], "{}", 258);
        let mut want = vec![21u8];
        want.extend_from_slice(b"vrs/v1/notary-receipt");
        want.extend_from_slice(&[0, 2]);
        want.extend_from_slice(b"ab");
        want.extend_from_slice(&[0, 6]);
        want.extend_from_slice(b"sha256");
        want.extend_from_slice(&[7; 32]);
        want.extend_from_slice(&Sha256::digest(b"{}"));
        want.extend_from_slice(&258i64.to_be_bytes());
        assert_eq!(l, want);
    }

    #[test]
    fn receipt_ids_are_hex() {
        let id = new_receipt_id();
        assert!(is_receipt_id(&id), "{id}");
        assert_ne!(id, new_receipt_id());
        assert!(!is_receipt_id("schemas"));
        assert!(!is_receipt_id(&id.to_uppercase()));
    }
}
