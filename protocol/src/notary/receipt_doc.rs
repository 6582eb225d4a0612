//! A notary receipt as the API hands it out (docs/PROTOCOL.md §17): the 202 of
//! `POST /v1/notarize`, stored with its Idempotency-Key and replayed as it was, and
//! `GET /v1/notarize/{receipt_id}` with the proof, the anchor and the checks recomputed at the
//! request. `metadata` is the client's own JSON, carried as it was given.

use crate::report::Check;
use crate::verification::AnchorDoc;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

fn absent<T>(v: &Option<T>) -> bool {
    v.is_none()
}

/// A member that may be null where present: null is `Some(None)`, absent is `None` (through
/// `#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// How a receipt was paid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReceiptPayment {
    /// `api_key` or `x402`.
    pub method: String,
    /// x402: the payer's address.
    #[serde(default, skip_serializing_if = "absent")]
    pub payer: Option<String>,
    /// x402: the settlement transaction (null until settled).
    #[serde(default, skip_serializing_if = "absent", deserialize_with = "present")]
    #[schema(value_type = Option<String>)]
    pub transaction: Option<Option<String>>,
}

/// The receipt's Merkle proof to its notary batch's root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReceiptProof {
    pub batch: u64,
    pub leaf_index: u64,
    pub tree_size: u64,
    pub leaf_hash: String,
    pub audit_path: Vec<String>,
    pub root: String,
    /// Unix seconds.
    pub sealed_at: i64,
}

/// The anchor of a receipt's batch: the anchor object of §16 once the batch is in an anchor
/// batch, else pending with the chain it will go to.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum ReceiptAnchor {
    Batched(AnchorDoc),
    Pending(ReceiptAnchorPending),
}

crate::verification::any_of_schema!(
    ReceiptAnchor,
    "The anchor of a receipt's notary batch: the anchor object of docs/PROTOCOL.md §16 once \
     the batch is in an anchor batch, else pending with the chain it will go to.",
    AnchorDoc,
    ReceiptAnchorPending
);

/// The anchor of a receipt whose notary batch is in no anchor batch yet.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ReceiptAnchorPending {
    /// `pending`.
    pub status: String,
    pub enabled: bool,
    pub chain: String,
    pub chain_id: u64,
    pub message: String,
}

/// The checks recomputed from the stored data at this request.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ReceiptVerification {
    /// True only when every check passed.
    pub verified: bool,
    /// Unix seconds.
    pub computed_at: i64,
    pub checks: Vec<Check>,
}

/// A notary receipt: 202 of `POST /v1/notarize` (with `message`); with `proof`, `anchor` and
/// `verification` from `GET /v1/notarize/{receipt_id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Receipt {
    pub receipt_id: String,
    /// pending (not in a batch yet), sealed or anchored.
    pub status: String,
    pub schema: String,
    pub payload_hash: String,
    /// The client's metadata, as given.
    #[schema(value_type = Object)]
    pub metadata: Value,
    pub leaf_hash: String,
    /// Unix seconds.
    pub submitted_at: i64,
    pub submitted_at_ms: i64,
    pub receipt_url: String,
    pub payment: ReceiptPayment,
    /// The 202: what happens next, in words.
    #[serde(default, skip_serializing_if = "absent")]
    pub message: Option<String>,
}

/// `GET /v1/notarize/{receipt_id}`: the receipt with its proof (null before its batch is
/// sealed), its anchor (null before) and the checks.
#[derive(Clone, Debug, Serialize, ToSchema)]
pub struct ReceiptView {
    #[serde(flatten)]
    pub receipt: Receipt,
    pub proof: Option<ReceiptProof>,
    pub anchor: Option<ReceiptAnchor>,
    pub verification: ReceiptVerification,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_null_transaction_stays_null_and_an_absent_one_absent() {
        for text in [
            r#"{"method":"x402","payer":"0xab","transaction":null}"#,
            r#"{"method":"x402","payer":"0xab","transaction":"0x01"}"#,
            r#"{"method":"api_key"}"#,
        ] {
            let p: ReceiptPayment = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&p).unwrap(), text);
        }
    }
}
