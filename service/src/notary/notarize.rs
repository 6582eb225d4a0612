//! The notarize use case (docs/PROTOCOL.md §17): a validated request and its payer become a
//! stored receipt. In order: the Idempotency-Key is claimed (or its first answer replayed);
//! for x402 the requirements are checked, the nonce is reserved with the prepared receipt, the
//! payment settles; then the receipt is committed with what paid for it and the key's answer.
//! HTTP parses the request and the payer before, and turns the [`Notarized`] into a response.

use super::receipt::{self, ReceiptStatus};
use super::settlement::{self, Prepared, PreparedKey};
use super::Notary;
use std::sync::Arc;
use vrs_chain::x402;
use vrs_observe::clock::now_ms;
use vrs_protocol::notary::receipt_doc::Receipt;
use vrs_protocol::notary::schema::Schema;
use vrs_store::{
    ApiKey, IdempotencyClaim, IdempotencyKey, IdempotentResponse, NewReceipt, Payment,
    PaymentNonce, ReceiptRecord, Store, StoreError,
};

/// An Idempotency-Key claim older than this whose request never finished is taken over (its
/// process died); longer than any settlement can take.
const IDEMPOTENCY_STALE_MS: i64 = 10 * 60 * 1000;

/// A valid notarization request.
#[derive(Clone, Debug)]
pub struct Request {
    pub schema: Schema,
    pub payload_hash: [u8; 32],
    /// Canonical JSON.
    pub metadata: String,
    /// SHA-256 of the body's canonical JSON (what an Idempotency-Key is bound to).
    pub hash: [u8; 32],
}

/// Who pays for a request, before settlement.
#[derive(Debug)]
pub enum Payer {
    Key(ApiKey),
    X402(Box<x402::Presented>),
}

impl Payer {
    /// The payment method, as metrics and `GET /v1/notarize` name it.
    pub fn method(&self) -> &'static str {
        match self {
            Payer::Key(_) => "api_key",
            Payer::X402(_) => "x402",
        }
    }

    /// Whose Idempotency-Keys a key belongs to: the API key's, or the paying address's.
    fn scope(&self) -> String {
        match self {
            Payer::Key(k) => format!("key:{}", k.id),
            Payer::X402(p) => format!("payer:{:#x}", p.payer()),
        }
    }
}

/// A stored receipt: the 202's body and its extra headers (x402's payment response).
#[derive(Debug)]
pub struct Receipted {
    pub body: Receipt,
    pub headers: Vec<(&'static str, String)>,
}

/// Why a request got no receipt.
#[derive(Debug)]
pub enum Refused {
    /// The payment is missing, does not meet the requirements or was used before (402).
    PaymentRequired(String),
    /// Settlement refused the payment (402 with x402's failure header).
    SettlementRefused {
        reason: String,
        header: (&'static str, String),
    },
    /// The payment was sent but its settlement is not confirmed: the leader's recovery decides
    /// (receipt stored, or the payment failed). The key stays claimed.
    Unconfirmed {
        why: String,
        receipt_id: String,
    },
    /// Paid, but the receipt is not stored yet: the leader's recovery stores it. The key stays
    /// claimed.
    PaidNotStored {
        receipt_id: String,
    },
    Store(StoreError),
    /// A fault of this process (logged where it happens).
    Internal,
}

impl Refused {
    /// Nothing happened: the Idempotency-Key may be used again. False once a payment may have
    /// settled: a retry gets 409 until the recovery stores the receipt and the key's answer.
    fn releases_key(&self) -> bool {
        !matches!(
            self,
            Refused::Unconfirmed { .. } | Refused::PaidNotStored { .. }
        )
    }
}

impl From<StoreError> for Refused {
    fn from(e: StoreError) -> Self {
        Refused::Store(e)
    }
}

/// How a notarization ended.
#[derive(Debug)]
pub enum Notarized {
    Receipted(Box<Receipted>),
    /// The Idempotency-Key's first answer, to be replayed as it was.
    Replay(IdempotentResponse),
    /// The Idempotency-Key was used with another body (422).
    KeyReused,
    /// The Idempotency-Key's first request is still running (409).
    KeyInFlight,
    Refused(Refused),
}

/// Why a `vrs-game-result` request names no game it may attest.
#[derive(Debug)]
pub enum GameResultRefused {
    NotFound,
    NotResolved,
    /// The game's result hash is another: this one.
    OtherHash([u8; 32]),
    Store(StoreError),
}

/// `vrs-game-result` (docs/PROTOCOL.md §17): the game exists, is resolved, and its result
/// hash is the payload hash.
pub async fn check_game_result(
    store: &dyn Store,
    game_id: &str,
    payload_hash: &[u8; 32],
) -> Result<(), GameResultRefused> {
    let game = store
        .game(game_id)
        .await
        .map_err(GameResultRefused::Store)?
        .ok_or(GameResultRefused::NotFound)?;
    let resolution = game
        .resolution
        .as_ref()
        .ok_or(GameResultRefused::NotResolved)?;
    let expected = vrs_protocol::commit::result_hash(&game.new, resolution);
    if &expected != payload_hash {
        return Err(GameResultRefused::OtherHash(expected));
    }
    Ok(())
}

/// Runs a notarization to its end. `base_url` is the notary's as the request reached it
/// (receipt URLs are absolute; an x402 payment's resource is `{base_url}/v1/notarize`).
/// The work after the key's claim runs in its own task: a client that hangs up must not
/// cancel a payment half way (settled but not stored) or leave its Idempotency-Key claimed.
pub async fn notarize(
    store: Arc<dyn Store>,
    notary: Arc<Notary>,
    base_url: String,
    request: Request,
    payer: Payer,
    idempotency_key: Option<String>,
) -> Notarized {
    let idempotency = idempotency_key.map(|key| IdempotencyKey {
        scope: payer.scope(),
        key,
        request_hash: request.hash,
        claimed_at_ms: now_ms(),
    });
    if let Some(k) = &idempotency {
        match store.claim_idempotency_key(k, IDEMPOTENCY_STALE_MS).await {
            Ok(IdempotencyClaim::Started) => {}
            Ok(IdempotencyClaim::Replay(stored)) => return Notarized::Replay(stored),
            Ok(IdempotencyClaim::Mismatch) => return Notarized::KeyReused,
            Ok(IdempotencyClaim::InFlight) => return Notarized::KeyInFlight,
            Err(e) => return Notarized::Refused(Refused::Store(e)),
        }
    }
    let method = payer.method();
    let task = tokio::spawn(async move {
        let ctx = Context {
            store: store.as_ref(),
            notary: &notary,
            base_url: &base_url,
        };
        match execute(&ctx, request, payer, idempotency.clone()).await {
            Ok(r) => Notarized::Receipted(Box::new(r)),
            Err(refused) => {
                if let (true, Some(k)) = (refused.releases_key(), &idempotency) {
                    // The request did not happen: the key may be used again.
                    if let Err(e) = store.release_idempotency_key(k).await {
                        tracing::warn!(error = %e, "notary: releasing an Idempotency-Key failed");
                    }
                }
                Notarized::Refused(refused)
            }
        }
    });
    match task.await {
        Ok(n) => {
            if matches!(n, Notarized::Receipted(_)) {
                vrs_observe::metrics::global()
                    .notary_accepted
                    .with(&[method])
                    .inc();
            }
            n
        }
        Err(e) => {
            tracing::error!(error = %e, "notary: the notarization task failed");
            Notarized::Refused(Refused::Internal)
        }
    }
}

/// What one notarization reads.
struct Context<'a> {
    store: &'a dyn Store,
    notary: &'a Notary,
    base_url: &'a str,
}

impl Context<'_> {
    fn resource(&self) -> String {
        format!("{}/v1/notarize", self.base_url)
    }

    fn x402(&self) -> Result<&x402::X402, Refused> {
        self.notary
            .x402
            .as_ref()
            .ok_or_else(|| Refused::PaymentRequired("x402 is not configured".into()))
    }
}

/// Pays (x402) and stores the receipt.
async fn execute(
    ctx: &Context<'_>,
    request: Request,
    payer: Payer,
    idempotency: Option<IdempotencyKey>,
) -> Result<Receipted, Refused> {
    let payment = match &payer {
        Payer::Key(k) => Payment::ApiKey(k.id.clone()),
        Payer::X402(p) => {
            let n = x402_nonce(ctx.x402()?, p);
            Payment::X402 {
                asset: n.asset,
                payer: n.payer,
                nonce: n.nonce,
                tx_hash: None,
            }
        }
    };
    let receipt_id = receipt::new_receipt_id();
    let submitted_at_ms = now_ms();
    let schema_id = request.schema.id();
    let leaf = receipt::leaf(
        &receipt_id,
        schema_id,
        &request.payload_hash,
        &request.metadata,
        submitted_at_ms,
    );
    let new = NewReceipt {
        receipt_id,
        schema: schema_id.to_owned(),
        payload_hash: request.schema.canonical_hash(&request.payload_hash),
        metadata: request.metadata,
        leaf_hash: vrs_engine::merkle::leaf_hash(&leaf),
        submitted_at_ms,
        payment,
    };
    let mut body = receipt::receipt_doc(
        &ReceiptRecord::accepted(&new),
        ReceiptStatus::Pending,
        ctx.base_url,
    );
    body.message = Some(format!(
        "Receipt accepted and stored. It is sealed into a Merkle batch within about {} ms, then \
         anchored on chain with the next anchor batch; poll receipt_url.",
        ctx.notary.batch_every.as_millis()
    ));
    match payer {
        Payer::Key(_) => {
            let stored = idempotency.map(|k| (k, settlement::stored_response(202, &body, &[])));
            settlement::store_receipt(ctx.store, &new, stored).await?;
            Ok(Receipted {
                body,
                headers: Vec::new(),
            })
        }
        Payer::X402(p) => pay(ctx, &new, body, *p, idempotency).await,
    }
}

/// The authorization nonce of a payment, as stored.
fn x402_nonce(x: &x402::X402, p: &x402::Presented) -> PaymentNonce {
    PaymentNonce {
        asset: format!("{:#x}", x.config.asset),
        payer: format!("{:#x}", p.payer()),
        nonce: format!("{:#x}", p.authorization.nonce),
    }
}

/// The x402 path: requirements, the nonce reserved with the prepared receipt, settlement,
/// then the receipt stored.
async fn pay(
    ctx: &Context<'_>,
    new: &NewReceipt,
    body: Receipt,
    p: x402::Presented,
    idempotency: Option<IdempotencyKey>,
) -> Result<Receipted, Refused> {
    let x = ctx.x402()?;
    x402::check_requirements(&x.config, &p, (now_ms() / 1000) as u64)
        .map_err(|r| Refused::PaymentRequired(r.0))?;
    let nonce = x402_nonce(x, &p);
    let resource = ctx.resource();
    let prepared = Prepared {
        version: p.version,
        payment: p.payload.clone(),
        resource: resource.clone(),
        receipt_id: new.receipt_id.clone(),
        schema: new.schema.clone(),
        payload_hash: new.payload_hash.clone(),
        metadata: new.metadata.clone(),
        leaf_hash: hex::encode(new.leaf_hash),
        submitted_at_ms: new.submitted_at_ms,
        body,
        idempotency: idempotency.as_ref().map(PreparedKey::from_key),
    };
    let prepared_json = serde_json::to_string(&prepared).map_err(|e| {
        tracing::error!(error = %e, "notary: encoding a prepared receipt");
        Refused::Internal
    })?;
    if !ctx
        .store
        .reserve_payment_nonce(&nonce, now_ms(), &prepared_json)
        .await?
    {
        return Err(Refused::PaymentRequired(
            "this payment authorization (its nonce) was already used; sign a new one, or \
             repeat the first request's Idempotency-Key to get its receipt"
                .into(),
        ));
    }
    // From here on the store holds the prepared request: if this process dies, the leader
    // finishes it (settlement::recover).
    let settled = match x.settle(&p, &resource).await {
        Ok(s) => s,
        Err(x402::SettleError::Refused(r)) => {
            tracing::warn!(payer = %nonce.payer, reason = %r.0, "x402 settlement failed");
            if let Err(e) = ctx.store.fail_payment_nonce(&nonce, &r.0).await {
                tracing::warn!(error = %e, "notary: recording a failed settlement");
            }
            let header = x402::payment_failure(&x.config, &p, &r.0);
            return Err(Refused::SettlementRefused {
                reason: r.0,
                header,
            });
        }
        Err(x402::SettleError::Unconfirmed(why)) => {
            // Not a 402: a client told to pay again could pay twice.
            tracing::warn!(payer = %nonce.payer, receipt = %prepared.receipt_id, reason = %why,
                "x402 settlement not confirmed; left to the recovery");
            return Err(Refused::Unconfirmed {
                why,
                receipt_id: prepared.receipt_id,
            });
        }
    };
    let (body, headers) = settlement::finish(ctx.store, x, &prepared, &nonce, p.payer(), &settled)
        .await
        .map_err(|e| {
            tracing::warn!(error = %e, payer = %nonce.payer, receipt = %prepared.receipt_id,
                "notary: paid, but the receipt is not stored yet; the leader's recovery stores it");
            Refused::PaidNotStored {
                receipt_id: prepared.receipt_id.clone(),
            }
        })?;
    Ok(Receipted { body, headers })
}
