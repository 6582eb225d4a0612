//! The notary (docs/PROTOCOL.md §17, interface §4.4): a payload hash under a schema becomes a
//! receipt; receipts are sealed into RFC 6962 batches every `--notary-batch-ms`, and the batch
//! roots are anchored with the epochs (anchor leaf kind 3). Paid by API key or per request
//! through x402; an Idempotency-Key makes a retry return the first answer instead of paying
//! twice.
//!
//! Invariants:
//! - A receipt is committed before its 202 (with the key's usage, or the payment marked
//!   settled, and the Idempotency-Key's stored answer, in the same transaction).
//! - A payment is settled before its receipt exists, and an authorization nonce is recorded
//!   (with the receipt prepared for it) before settlement starts, so one signed payment never
//!   pays twice, and a payment whose process died while settling is finished by the leader
//!   ([`settlement::recover`]): its receipt stored, or the payment recorded as failed.
//! - `verification` is recomputed from the stored receipt, batch and anchor on every read.

pub mod keys;
pub mod notarize;
pub mod receipt;
pub mod sealer;
pub mod settlement;

use std::time::Duration;
use vrs_chain::x402;

/// How the notary runs (fixed at start-up).
#[derive(Debug)]
pub struct Notary {
    pub batch_every: Duration,
    /// `None`: x402 is not configured (no address to pay); API keys only.
    pub x402: Option<x402::X402>,
    /// A payment still settling after this long is finished by the leader.
    pub recover_after: Duration,
}

impl Default for Notary {
    fn default() -> Self {
        Self {
            batch_every: Duration::from_millis(1000),
            x402: None,
            recover_after: Duration::from_secs(300),
        }
    }
}

impl Notary {
    /// The payment methods `POST /v1/notarize` accepts.
    pub fn methods(&self) -> Vec<&'static str> {
        let mut m = vec!["api_key"];
        if self.x402.is_some() {
            m.push("x402");
        }
        m
    }
}
