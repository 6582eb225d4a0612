//! The embedded store's notary tables (schema version 4; payment recovery since 5): receipts and their batches, API
//! keys, x402 payment nonces and Idempotency-Key records. Writes run inside the writer
//! thread's transaction, reads on a reader connection.

use super::*;
use super::{hash32, unavailable};
use crate::NotaryStore;
use crate::{
    ApiKey, IdempotencyClaim, IdempotencyKey, IdempotentResponse, NewReceipt, NotaryBatch,
    NotaryCounts, Payment, PaymentNonce, ReceiptRecord, SettlingPayment, StoreError, StoreResult,
};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use tokio::sync::oneshot;

/// A unique-constraint violation becomes `Conflict` (the caller's data), anything else
/// `Unavailable`.
fn conflict_or_unavailable(e: rusqlite::Error, what: &str) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Conflict(format!("{what} already exists"))
        }
        _ => unavailable(e),
    }
}

pub(super) fn insert_receipt(
    conn: &Connection,
    r: &NewReceipt,
    idempotency: Option<&(IdempotencyKey, IdempotentResponse)>,
) -> StoreResult<()> {
    let (payer, tx_hash) = match &r.payment {
        Payment::ApiKey(id) => (id.clone(), None),
        Payment::X402 { payer, tx_hash, .. } => (payer.clone(), tx_hash.clone()),
    };
    conn.prepare_cached(
        "INSERT INTO notary_receipts (receipt_id, schema, payload_hash, metadata, leaf_hash,
             submitted_at_ms, payment_method, payer, payment_tx)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )
    .and_then(|mut s| {
        s.execute(params![
            r.receipt_id,
            r.schema,
            r.payload_hash,
            r.metadata,
            r.leaf_hash.to_vec(),
            r.submitted_at_ms,
            r.payment.method(),
            payer,
            tx_hash,
        ])
    })
    .map_err(|e| conflict_or_unavailable(e, &format!("receipt {}", r.receipt_id)))?;
    match &r.payment {
        Payment::ApiKey(id) => {
            conn.prepare_cached(
                "UPDATE api_keys SET uses = uses + 1, last_used_ms = ?2 WHERE id = ?1",
            )
            .and_then(|mut s| s.execute(params![id, r.submitted_at_ms]))
            .map_err(unavailable)?;
        }
        Payment::X402 {
            asset,
            payer,
            nonce,
            tx_hash,
        } => {
            let n = conn
                .execute(
                    "UPDATE payment_nonces SET status = 'settled', tx_hash = ?4
                     WHERE asset = ?1 AND payer = ?2 AND nonce = ?3 AND status = 'settling'",
                    params![asset, payer, nonce, tx_hash],
                )
                .map_err(unavailable)?;
            if n != 1 {
                return Err(StoreError::Conflict(format!(
                    "payment nonce {nonce} of {payer} is not being settled"
                )));
            }
        }
    }
    if let Some((key, response)) = idempotency {
        complete_idempotency(conn, key, response)?;
    }
    Ok(())
}

/// The columns `receipt` reads, by name.
const RECEIPT_COLUMNS: &str = "receipt_id, schema, payload_hash, metadata, leaf_hash, \
     submitted_at_ms, payment_method, payer, payment_tx, batch, leaf_index";

pub(super) fn receipt(conn: &Connection, id: &str) -> StoreResult<Option<ReceiptRecord>> {
    let row = conn
        .prepare_cached(&format!(
            "SELECT {RECEIPT_COLUMNS} FROM notary_receipts WHERE receipt_id = ?1"
        ))
        .and_then(|mut s| {
            s.query_row([id], |r| {
                Ok((
                    r.get::<_, String>("receipt_id")?,
                    r.get::<_, String>("schema")?,
                    r.get::<_, String>("payload_hash")?,
                    r.get::<_, String>("metadata")?,
                    r.get::<_, Vec<u8>>("leaf_hash")?,
                    r.get::<_, i64>("submitted_at_ms")?,
                    r.get::<_, String>("payment_method")?,
                    r.get::<_, String>("payer")?,
                    r.get::<_, Option<String>>("payment_tx")?,
                    r.get::<_, Option<i64>>("batch")?,
                    r.get::<_, Option<i64>>("leaf_index")?,
                ))
            })
            .optional()
        })
        .map_err(unavailable)?;
    let Some((receipt_id, schema, payload_hash, metadata, leaf, at, method, payer, tx, b, i)) = row
    else {
        return Ok(None);
    };
    Ok(Some(ReceiptRecord {
        receipt_id,
        schema,
        payload_hash,
        metadata,
        leaf_hash: hash32(leaf, "receipt leaf hash")?,
        submitted_at_ms: at,
        payment_method: method,
        payer,
        payment_tx: tx,
        sealed: b.zip(i).map(|(b, i)| (b as u64, i as u64)),
    }))
}

pub(super) fn seal(conn: &Connection, max: u64, now_ms: i64) -> StoreResult<Option<NotaryBatch>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT seq, leaf_hash FROM notary_receipts WHERE batch IS NULL ORDER BY seq LIMIT ?1",
        )
        .map_err(unavailable)?;
    let rows = stmt
        .query_map([max.min(i64::MAX as u64) as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .map_err(unavailable)?;
    let mut seqs = Vec::new();
    let mut leaves = Vec::new();
    for row in rows {
        let (seq, leaf) = row.map_err(unavailable)?;
        seqs.push(seq);
        leaves.push(hash32(leaf, "receipt leaf hash")?);
    }
    if leaves.is_empty() {
        return Ok(None);
    }
    let number: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM notary_batches",
            [],
            |r| r.get(0),
        )
        .map_err(unavailable)?;
    let batch = NotaryBatch::seal(number as u64, &leaves, now_ms);
    conn.execute(
        "INSERT INTO notary_batches (number, size, root, created_at_ms) VALUES (?1, ?2, ?3, ?4)",
        params![number, batch.size as i64, batch.root.to_vec(), now_ms],
    )
    .map_err(unavailable)?;
    let mut update = conn
        .prepare_cached("UPDATE notary_receipts SET batch = ?1, leaf_index = ?2 WHERE seq = ?3")
        .map_err(unavailable)?;
    for (index, seq) in seqs.iter().enumerate() {
        update
            .execute(params![number, index as i64, seq])
            .map_err(unavailable)?;
    }
    Ok(Some(batch))
}

pub(super) fn batches(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<NotaryBatch>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT number, size, root, created_at_ms FROM notary_batches {tail}"
        ))
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(p, |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|r| {
        let (number, size, root, at) = r.map_err(unavailable)?;
        Ok(NotaryBatch {
            number: number as u64,
            size: size as u64,
            root: hash32(root, "notary batch root")?,
            created_at_ms: at,
        })
    })
    .collect()
}

pub(super) fn batch_leaves(conn: &Connection, number: u64) -> StoreResult<Vec<[u8; 32]>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT leaf_hash FROM notary_receipts WHERE batch = ?1 ORDER BY leaf_index",
        )
        .map_err(unavailable)?;
    let rows = stmt
        .query_map([number as i64], |r| r.get::<_, Vec<u8>>(0))
        .map_err(unavailable)?;
    rows.map(|r| hash32(r.map_err(unavailable)?, "receipt leaf hash"))
        .collect()
}

pub(super) fn counts(conn: &Connection) -> StoreResult<NotaryCounts> {
    let receipts: i64 = conn
        .query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM notary_receipts",
            [],
            |r| r.get(0),
        )
        .map_err(unavailable)?;
    let pending: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM notary_receipts WHERE batch IS NULL",
            [],
            |r| r.get(0),
        )
        .map_err(unavailable)?;
    Ok(NotaryCounts {
        receipts: receipts as u64,
        pending: pending as u64,
        last_batch: batches(conn, "ORDER BY number DESC LIMIT 1", [])?.pop(),
    })
}

pub(super) fn create_key(conn: &Connection, k: &ApiKey) -> StoreResult<()> {
    conn.execute(
        "INSERT INTO api_keys (id, name, key_hash, created_at_ms) VALUES (?1, ?2, ?3, ?4)",
        params![k.id, k.name, k.key_hash.to_vec(), k.created_at_ms],
    )
    .map_err(|e| conflict_or_unavailable(e, &format!("API key {}", k.id)))?;
    Ok(())
}

pub(super) fn keys(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<ApiKey>> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT id, name, key_hash, created_at_ms, revoked_at_ms, uses, last_used_ms
             FROM api_keys {tail}"
        ))
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(p, |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Vec<u8>>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<i64>>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, Option<i64>>(6)?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|r| {
        let (id, name, hash, created, revoked, uses, last) = r.map_err(unavailable)?;
        Ok(ApiKey {
            id,
            name,
            key_hash: hash32(hash, "API key hash")?,
            created_at_ms: created,
            revoked_at_ms: revoked,
            uses: uses as u64,
            last_used_ms: last,
        })
    })
    .collect()
}

pub(super) fn revoke_key(conn: &Connection, id: &str, now_ms: i64) -> StoreResult<bool> {
    let n = conn
        .execute(
            "UPDATE api_keys SET revoked_at_ms = COALESCE(revoked_at_ms, ?2) WHERE id = ?1",
            params![id, now_ms],
        )
        .map_err(unavailable)?;
    Ok(n == 1)
}

pub(super) fn reserve_nonce(
    conn: &Connection,
    n: &PaymentNonce,
    now_ms: i64,
    prepared: &str,
) -> StoreResult<bool> {
    let inserted = conn
        .execute(
            "INSERT INTO payment_nonces (asset, payer, nonce, status, seen_at_ms, prepared)
             VALUES (?1, ?2, ?3, 'settling', ?4, ?5) ON CONFLICT DO NOTHING",
            params![n.asset, n.payer, n.nonce, now_ms, prepared],
        )
        .map_err(unavailable)?;
    Ok(inserted == 1)
}

pub(super) fn settling_payments(
    conn: &Connection,
    seen_before_ms: i64,
    limit: u32,
) -> StoreResult<Vec<SettlingPayment>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT asset, payer, nonce, seen_at_ms, prepared FROM payment_nonces
             WHERE status = 'settling' AND seen_at_ms < ?1
             ORDER BY seen_at_ms LIMIT ?2",
        )
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(params![seen_before_ms, limit], |r| {
            Ok(SettlingPayment {
                nonce: PaymentNonce {
                    asset: r.get(0)?,
                    payer: r.get(1)?,
                    nonce: r.get(2)?,
                },
                seen_at_ms: r.get(3)?,
                prepared: r.get(4)?,
            })
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(unavailable)?;
    Ok(rows)
}

pub(super) fn fail_nonce(conn: &Connection, n: &PaymentNonce, detail: &str) -> StoreResult<()> {
    conn.execute(
        "UPDATE payment_nonces SET status = 'failed', detail = ?4
         WHERE asset = ?1 AND payer = ?2 AND nonce = ?3 AND status = 'settling'",
        params![n.asset, n.payer, n.nonce, detail],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn claim_idempotency(
    conn: &Connection,
    k: &IdempotencyKey,
    stale_ms: i64,
) -> StoreResult<IdempotencyClaim> {
    let existing = conn
        .query_row(
            "SELECT request_hash, created_at_ms, status, response FROM idempotency_keys
             WHERE scope = ?1 AND key = ?2",
            params![k.scope, k.key],
            |r| {
                Ok((
                    r.get::<_, Vec<u8>>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, Option<String>>(3)?,
                ))
            },
        )
        .optional()
        .map_err(unavailable)?;
    let now_ms = k.claimed_at_ms;
    match existing {
        None => {
            conn.execute(
                "INSERT INTO idempotency_keys (scope, key, request_hash, created_at_ms)
                 VALUES (?1, ?2, ?3, ?4)",
                params![k.scope, k.key, k.request_hash.to_vec(), now_ms],
            )
            .map_err(unavailable)?;
            Ok(IdempotencyClaim::Started)
        }
        Some((hash, ..)) if hash != k.request_hash => Ok(IdempotencyClaim::Mismatch),
        Some((_, _, Some(status), Some(response))) => {
            Ok(IdempotencyClaim::Replay(IdempotentResponse {
                status: status as u16,
                response,
            }))
        }
        Some((_, created, ..)) if now_ms - created < stale_ms => Ok(IdempotencyClaim::InFlight),
        Some(_) => {
            // Abandoned by a process that died mid-request: this request takes it over.
            conn.execute(
                "UPDATE idempotency_keys SET created_at_ms = ?3 WHERE scope = ?1 AND key = ?2",
                params![k.scope, k.key, now_ms],
            )
            .map_err(unavailable)?;
            Ok(IdempotencyClaim::Started)
        }
    }
}

/// Stores the key's answer while the key still holds this request's claim. A claim taken
/// over since (the request ran past the stale limit) keeps the later request's: the receipt
/// is stored all the same, since what paid for it has been spent.
fn complete_idempotency(
    conn: &Connection,
    k: &IdempotencyKey,
    response: &IdempotentResponse,
) -> StoreResult<()> {
    let n = conn
        .prepare_cached(
            "UPDATE idempotency_keys SET status = ?3, response = ?4
             WHERE scope = ?1 AND key = ?2 AND created_at_ms = ?5 AND status IS NULL",
        )
        .and_then(|mut s| {
            s.execute(params![
                k.scope,
                k.key,
                i64::from(response.status),
                response.response,
                k.claimed_at_ms
            ])
        })
        .map_err(unavailable)?;
    if n != 1 {
        tracing::warn!(key = %k.key, scope = %k.scope,
            "Idempotency-Key was taken over while its first request ran; its receipt is stored without the key's answer");
    }
    Ok(())
}

pub(super) fn release_idempotency(conn: &Connection, k: &IdempotencyKey) -> StoreResult<()> {
    conn.execute(
        "DELETE FROM idempotency_keys
         WHERE scope = ?1 AND key = ?2 AND created_at_ms = ?3 AND status IS NULL",
        params![k.scope, k.key, k.claimed_at_ms],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn purge_idempotency(conn: &Connection, before_ms: i64) -> StoreResult<u64> {
    let n = conn
        .execute(
            "DELETE FROM idempotency_keys WHERE created_at_ms < ?1 AND status IS NOT NULL",
            [before_ms],
        )
        .map_err(unavailable)?;
    Ok(n as u64)
}

#[async_trait]
impl NotaryStore for SqliteStore {
    async fn insert_receipt(
        &self,
        receipt: NewReceipt,
        idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
    ) -> StoreResult<()> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send(WriteReq::Bet(GroupItem::Receipt(
                Box::new((receipt, idempotency)),
                tx,
            )))
            .map_err(|_| unavailable("the writer thread has stopped"))?;
        rx.await
            .map_err(|_| unavailable("the writer thread has stopped"))?
    }

    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<ReceiptRecord>> {
        let id = receipt_id.to_owned();
        self.read(move |c| receipt(c, &id)).await
    }

    async fn seal_notary_batch(&self, max: u64, now_ms: i64) -> StoreResult<Option<NotaryBatch>> {
        self.write("seal_notary_batch", move |tx| seal(tx, max, now_ms))
            .await
    }

    async fn notary_batch(&self, number: u64) -> StoreResult<Option<NotaryBatch>> {
        self.read(move |c| Ok(batches(c, "WHERE number = ?1", [number as i64])?.pop()))
            .await
    }

    async fn notary_batch_leaves(&self, number: u64) -> StoreResult<Vec<[u8; 32]>> {
        self.read(move |c| batch_leaves(c, number)).await
    }

    async fn notary_batches(&self, from: u64, to: u64) -> StoreResult<Vec<NotaryBatch>> {
        self.read(move |c| {
            batches(
                c,
                "WHERE number >= ?1 AND number < ?2 ORDER BY number",
                [from as i64, to as i64],
            )
        })
        .await
    }

    async fn notary_counts(&self) -> StoreResult<NotaryCounts> {
        self.read(counts).await
    }

    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        let key = key.clone();
        self.write("create_api_key", move |tx| create_key(tx, &key))
            .await
    }

    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>> {
        self.read(|c| keys(c, "ORDER BY created_at_ms, id", []))
            .await
    }

    async fn api_key_by_hash(&self, key_hash: [u8; 32]) -> StoreResult<Option<ApiKey>> {
        self.read(move |c| Ok(keys(c, "WHERE key_hash = ?1", [key_hash.to_vec()])?.pop()))
            .await
    }

    async fn revoke_api_key(&self, id: &str, now_ms: i64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.write("revoke_api_key", move |tx| revoke_key(tx, &id, now_ms))
            .await
    }

    async fn reserve_payment_nonce(
        &self,
        nonce: &PaymentNonce,
        now_ms: i64,
        prepared: &str,
    ) -> StoreResult<bool> {
        let (nonce, prepared) = (nonce.clone(), prepared.to_owned());
        self.write("reserve_payment_nonce", move |tx| {
            reserve_nonce(tx, &nonce, now_ms, &prepared)
        })
        .await
    }

    async fn settling_payments(
        &self,
        seen_before_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<SettlingPayment>> {
        self.read(move |c| settling_payments(c, seen_before_ms, limit))
            .await
    }

    async fn fail_payment_nonce(&self, nonce: &PaymentNonce, detail: &str) -> StoreResult<()> {
        let (nonce, detail) = (nonce.clone(), detail.to_owned());
        self.write("fail_payment_nonce", move |tx| {
            fail_nonce(tx, &nonce, &detail)
        })
        .await
    }

    async fn claim_idempotency_key(
        &self,
        key: &IdempotencyKey,
        stale_ms: i64,
    ) -> StoreResult<IdempotencyClaim> {
        let key = key.clone();
        self.write("claim_idempotency_key", move |tx| {
            claim_idempotency(tx, &key, stale_ms)
        })
        .await
    }

    async fn release_idempotency_key(&self, key: &IdempotencyKey) -> StoreResult<()> {
        let key = key.clone();
        self.write("release_idempotency_key", move |tx| {
            release_idempotency(tx, &key)
        })
        .await
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> StoreResult<u64> {
        self.write("purge_idempotency_keys", move |tx| {
            purge_idempotency(tx, before_ms)
        })
        .await
    }
}
