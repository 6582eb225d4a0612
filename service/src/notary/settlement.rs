//! Paid receipts from settlement to storage, and the recovery of payments whose process died
//! while they settled (docs/PROTOCOL.md §17.6).
//!
//! Before an x402 payment is settled, its nonce is reserved together with a [`Prepared`]
//! request: the signed payment, the receipt (id, leaf, time) and the 202 answer it will get,
//! and the Idempotency-Key's claim. So whatever happens after the reservation, the leader can
//! finish the request from the store alone ([`recover`]): settle the payment, or see on chain
//! that it was settled, and store exactly the receipt that was prepared; or record the
//! payment as failed and release the key. A receipt id is stored at most once, so a request
//! and its recovery racing each other store one receipt.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Duration;
use vrs_chain::x402::{self, Presented, SettleError, Settled, X402};
use vrs_observe::clock::now_ms;
use vrs_protocol::notary::receipt_doc::Receipt;
use vrs_store::{
    IdempotencyKey, IdempotentResponse, NewReceipt, Payment, PaymentNonce, SettlingPayment, Store,
    StoreError,
};

/// Attempts at storing a receipt whose payment has already settled.
const STORE_ATTEMPTS: u32 = 5;
/// Payments looked at per recovery pass.
const RECOVER_BATCH: u32 = 100;

/// What a paid request stores once its payment settles, kept with its nonce until then.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Prepared {
    /// The x402 version and the payment payload as decoded from its header.
    pub version: u8,
    pub payment: Value,
    /// The resource the payment was for (a v1 facilitator is told it).
    pub resource: String,
    pub receipt_id: String,
    pub schema: String,
    pub payload_hash: String,
    pub metadata: String,
    /// Hex.
    pub leaf_hash: String,
    pub submitted_at_ms: i64,
    /// The 202 answer's body (its `payment.transaction` is filled in once settled).
    pub body: Receipt,
    pub idempotency: Option<PreparedKey>,
}

/// An Idempotency-Key claim as kept in [`Prepared`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PreparedKey {
    pub scope: String,
    pub key: String,
    /// Hex.
    pub request_hash: String,
    pub claimed_at_ms: i64,
}

impl PreparedKey {
    pub fn from_key(k: &IdempotencyKey) -> Self {
        Self {
            scope: k.scope.clone(),
            key: k.key.clone(),
            request_hash: hex::encode(k.request_hash),
            claimed_at_ms: k.claimed_at_ms,
        }
    }

    fn to_key(&self) -> Option<IdempotencyKey> {
        Some(IdempotencyKey {
            scope: self.scope.clone(),
            key: self.key.clone(),
            request_hash: hex::decode(&self.request_hash).ok()?.try_into().ok()?,
            claimed_at_ms: self.claimed_at_ms,
        })
    }
}

impl Prepared {
    /// The receipt, paid by `nonce` and settled in `tx` (when known).
    fn receipt(&self, nonce: &PaymentNonce, tx: Option<String>) -> Result<NewReceipt, String> {
        let leaf_hash = hex::decode(&self.leaf_hash)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| format!("prepared receipt {}: bad leaf hash", self.receipt_id))?;
        Ok(NewReceipt {
            receipt_id: self.receipt_id.clone(),
            schema: self.schema.clone(),
            payload_hash: self.payload_hash.clone(),
            metadata: self.metadata.clone(),
            leaf_hash,
            submitted_at_ms: self.submitted_at_ms,
            payment: Payment::X402 {
                asset: nonce.asset.clone(),
                payer: nonce.payer.clone(),
                nonce: nonce.nonce.clone(),
                tx_hash: tx,
            },
        })
    }
}

/// An answer as an Idempotency-Key stores it: status, body and headers.
pub fn stored_response(
    status: u16,
    body: &Receipt,
    headers: &[(&str, String)],
) -> IdempotentResponse {
    IdempotentResponse {
        status,
        response: json!({
            "body": body,
            "headers": headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), json!(v)))
                .collect::<serde_json::Map<String, Value>>(),
        })
        .to_string(),
    }
}

/// Stores a receipt, retrying brief outages when it is paid for already. A receipt id found
/// stored with the same leaf counts as stored: an earlier attempt (or the recovery) committed
/// it and its answer was lost.
pub async fn store_receipt(
    store: &dyn Store,
    new: &NewReceipt,
    idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
) -> Result<(), StoreError> {
    let paid = new.payment.method() == "x402";
    let mut attempt = 0;
    loop {
        attempt += 1;
        match store.insert_receipt(new.clone(), idempotency.clone()).await {
            Ok(()) => return Ok(()),
            Err(StoreError::Unavailable(m)) if paid && attempt < STORE_ATTEMPTS => {
                tracing::warn!(detail = %m, attempt, "notary: storing a paid receipt failed; retrying");
                tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            }
            Err(e @ StoreError::Conflict(_)) => {
                return match store.receipt(&new.receipt_id).await {
                    Ok(Some(r)) if r.leaf_hash == new.leaf_hash => Ok(()),
                    _ => Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// Stores the receipt of a settled payment with its 202 answer (also kept for its
/// Idempotency-Key); returns the answer's body and headers.
pub async fn finish(
    store: &dyn Store,
    x: &X402,
    prepared: &Prepared,
    nonce: &PaymentNonce,
    payer: alloy::primitives::Address,
    settled: &Settled,
) -> Result<(Receipt, Vec<(&'static str, String)>), StoreError> {
    let tx = Some(settled.transaction.clone()).filter(|t| !t.is_empty());
    let new = prepared
        .receipt(nonce, tx.clone())
        .map_err(StoreError::Corrupt)?;
    let headers = vec![x402::settle_response(
        &x.config,
        prepared.version,
        payer,
        settled,
    )];
    let mut body = prepared.body.clone();
    body.payment.transaction = Some(tx.clone());
    let idempotency = prepared
        .idempotency
        .as_ref()
        .and_then(PreparedKey::to_key)
        .map(|k| (k, stored_response(202, &body, &headers)));
    if let Err(e) = store_receipt(store, &new, idempotency).await {
        tracing::error!(payer = %nonce.payer, nonce = %nonce.nonce, tx = ?tx,
            receipt = %new.receipt_id, error = %e,
            "notary: a settled payment's receipt could not be stored; the leader retries it from the store");
        return Err(e);
    }
    Ok((body, headers))
}

/// Finishes every payment that has been settling for longer than `after` (its request's
/// process died, or lost its database, after reserving the nonce). Run by the leader.
pub async fn recover(store: &dyn Store, x: &X402, after: Duration) -> Result<(), StoreError> {
    let before = now_ms() - i64::try_from(after.as_millis()).unwrap_or(i64::MAX);
    for row in store.settling_payments(before, RECOVER_BATCH).await? {
        recover_one(store, x, &row).await?;
    }
    Ok(())
}

async fn recover_one(store: &dyn Store, x: &X402, row: &SettlingPayment) -> Result<(), StoreError> {
    let nonce = &row.nonce;
    let prepared = match row
        .prepared
        .as_deref()
        .map(serde_json::from_str::<Prepared>)
    {
        Some(Ok(p)) => p,
        None => {
            return abandon(
                store,
                nonce,
                "reserved before schema version 5: nothing to finish it from",
            )
            .await
        }
        Some(Err(e)) => {
            return abandon(
                store,
                nonce,
                &format!("its prepared request is unreadable: {e}"),
            )
            .await
        }
    };
    let presented = match x402::from_payload(&x.config, prepared.version, prepared.payment.clone())
    {
        Ok(p) => p,
        Err(r) => {
            tracing::error!(payer = %nonce.payer, nonce = %nonce.nonce, reason = %r.0,
                "x402 recovery: the stored payment no longer decodes");
            return fail(store, &prepared, nonce, &r.0).await;
        }
    };
    let payer = presented.payer();
    let used = x.authorization_state(&presented).await;
    if used == Some(true) {
        tracing::warn!(payer = %nonce.payer, receipt = %prepared.receipt_id,
            "x402 recovery: the payment was settled but its receipt not stored; storing it now");
        let settled = Settled {
            transaction: String::new(),
            payer,
        };
        return finish(store, x, &prepared, nonce, payer, &settled)
            .await
            .map(drop);
    }
    let now_s = u64::try_from(now_ms() / 1000).unwrap_or(0);
    if presented.authorization.valid_before <= alloy::primitives::U256::from(now_s) {
        let why = match used {
            Some(_) => "its authorization expired before it was settled".to_owned(),
            None => {
                tracing::error!(payer = %nonce.payer, nonce = %nonce.nonce,
                    "x402 recovery: the payment expired and no node of its chain is configured to tell whether it was settled; check authorizationState and refund by hand if it was");
                "its authorization expired; whether it was settled is unknown (no RPC of its chain)"
                    .to_owned()
            }
        };
        return fail(store, &prepared, nonce, &why).await;
    }
    tracing::warn!(payer = %nonce.payer, receipt = %prepared.receipt_id,
        "x402 recovery: settling a payment its request left unfinished");
    match settle(x, &presented, &prepared.resource).await {
        Ok(Some(settled)) => finish(store, x, &prepared, nonce, payer, &settled)
            .await
            .map(drop),
        Ok(None) => Ok(()),
        Err(why) => fail(store, &prepared, nonce, &why).await,
    }
}

/// Settles `p` again. `Ok(None)`: not confirmed either way; the next pass looks again.
async fn settle(x: &X402, p: &Presented, resource: &str) -> Result<Option<Settled>, String> {
    match x.settle(p, resource).await {
        Ok(s) => Ok(Some(s)),
        // Settled by the request after all (its broadcast went through): paid.
        Err(e) if x.authorization_state(p).await == Some(true) => {
            tracing::debug!(reason = %e.reason(), "x402 recovery: already settled");
            Ok(Some(Settled {
                transaction: String::new(),
                payer: p.payer(),
            }))
        }
        Err(SettleError::Unconfirmed(why)) => {
            tracing::warn!(payer = %p.payer(), reason = %why, "x402 recovery: settlement still unconfirmed");
            Ok(None)
        }
        Err(SettleError::Refused(r)) if x.rpc.is_none() => Err(format!(
            "whether it was settled is unknown (no RPC of its chain to ask the token); settling \
             it again was refused: {}",
            r.0
        )),
        Err(SettleError::Refused(r)) => Err(r.0),
    }
}

/// Records the payment as failed and frees its Idempotency-Key for a new request.
async fn fail(
    store: &dyn Store,
    prepared: &Prepared,
    nonce: &PaymentNonce,
    why: &str,
) -> Result<(), StoreError> {
    tracing::warn!(payer = %nonce.payer, receipt = %prepared.receipt_id, why,
        "x402 recovery: the payment failed; no receipt");
    store.fail_payment_nonce(nonce, why).await?;
    if let Some(k) = prepared.idempotency.as_ref().and_then(PreparedKey::to_key) {
        store.release_idempotency_key(&k).await?;
    }
    Ok(())
}

/// A payment left settling that cannot be finished: recorded as failed, for the operator.
async fn abandon(store: &dyn Store, nonce: &PaymentNonce, why: &str) -> Result<(), StoreError> {
    tracing::error!(payer = %nonce.payer, nonce = %nonce.nonce, why,
        "x402 recovery: a payment left settling cannot be finished; check the chain and refund by hand if it was paid");
    store
        .fail_payment_nonce(nonce, &format!("abandoned; {why}"))
        .await
}
