//! The PostgreSQL store's notary tables (schema version 4; payment recovery since 5): receipts and their batches, API
//! keys, x402 payment nonces and Idempotency-Key records. The same semantics as the embedded
//! store's (`sqlite/notary.rs`), made safe for several replicas sharing one database:
//!
//! - Receipts are committed in groups, like games: each receipt committer takes everything
//!   queued into one transaction (one WAL flush), and a group that is refused is retried one
//!   receipt at a time, so one bad receipt never fails the others. API key rows are locked in
//!   id order first (every receipt of a key updates its usage row) and receipts are inserted
//!   in id order, so two groups never deadlock.
//! - Sealing runs under an advisory lock per schema, so two sealers never number a batch
//!   alike or take the same receipts; it takes whatever is committed and unsealed, in `seq`
//!   order (a receipt committed later with a lower `seq` goes into the next batch).
//! - An Idempotency-Key is claimed by `INSERT … ON CONFLICT DO NOTHING`: of two concurrent
//!   claims exactly one inserts; the other reads the row under `FOR UPDATE` and decides.

use super::*;
use super::{corrupt, next_group, pg_err, pool_err, read_committed, timed};
use crate::NotaryStore;
use crate::{
    ApiKey, IdempotencyClaim, IdempotencyKey, IdempotentResponse, NewReceipt, NotaryBatch,
    NotaryCounts, Payment, PaymentNonce, ReceiptRecord, SettlingPayment, StoreError, StoreResult,
};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Pool};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot, Mutex};
use tokio_postgres::error::SqlState;
use tokio_postgres::Row;

/// Advisory lock class of the sealer (see `postgres.rs` for the others).
const SEAL_LOCK: i32 = 0x7672_7305;

/// Receipt committers per process (while one group waits for its flush, the next forms).
pub(super) const RECEIPT_COMMITTERS: usize = 2;

/// A receipt waiting for its group's commit.
pub(super) struct ReceiptReq {
    pub receipt: NewReceipt,
    pub idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
    pub reply: oneshot::Sender<StoreResult<()>>,
}

impl std::fmt::Debug for ReceiptReq {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReceiptReq({})", self.receipt.receipt_id)
    }
}

fn hash(v: Vec<u8>, what: &str) -> StoreResult<[u8; 32]> {
    v.try_into()
        .map_err(|_| StoreError::Corrupt(format!("{what} is not 32 bytes")))
}

/// A unique violation becomes `Conflict` naming `what`; anything else goes through [`pg_err`].
fn conflict_or(e: tokio_postgres::Error, what: impl FnOnce() -> String) -> StoreError {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        StoreError::Conflict(format!("{} already exists", what()))
    } else {
        pg_err(e)
    }
}

/// Takes whatever receipts are queued (at least one) and commits them together, forever.
pub(super) async fn receipt_committer(pool: Pool, queue: Arc<Mutex<mpsc::Receiver<ReceiptReq>>>) {
    while let Some(mut group) = next_group(&queue).await {
        // Concurrent requests have no order among themselves; sorted by id, two groups that
        // share an id (a client's retry racing its original) insert it in the same order and
        // cannot deadlock on the unique index.
        group.sort_by(|a, b| a.receipt.receipt_id.cmp(&b.receipt.receipt_id));
        match timed("insert receipts", insert_receipts(&pool, &group)).await {
            Ok(()) => {
                for r in group {
                    let _ = r.reply.send(Ok(()));
                }
            }
            Err(e) if group.len() == 1 || matches!(e, StoreError::Unavailable(_)) => {
                for r in group {
                    let _ = r.reply.send(Err(e.clone()));
                }
            }
            Err(_) => {
                // Some receipt of the group was refused: each on its own, so only it fails.
                for r in group {
                    let one = timed(
                        "insert receipt",
                        insert_receipts(&pool, std::slice::from_ref(&r)),
                    )
                    .await;
                    let _ = r.reply.send(one);
                }
            }
        }
    }
}

const LOCK_KEYS: &str =
    "SELECT id FROM api_keys WHERE id = ANY($1::text[]) ORDER BY id FOR NO KEY UPDATE";

const COUNT_KEY_USES: &str = "UPDATE api_keys k SET uses = k.uses + u.n, last_used_ms = u.last
     FROM UNNEST($1::text[], $2::int8[], $3::int8[]) AS u (id, n, last)
     WHERE k.id = u.id";

const INSERT_RECEIPTS: &str = "INSERT INTO notary_receipts (receipt_id, schema, payload_hash,
         metadata, leaf_hash, submitted_at_ms, payment_method, payer, payment_tx)
     SELECT u.receipt_id, u.schema, u.payload_hash, u.metadata, u.leaf_hash, u.submitted_at_ms,
         u.payment_method, u.payer, u.payment_tx
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::int8[],
         $7::text[], $8::text[], $9::text[]) WITH ORDINALITY
         AS u (receipt_id, schema, payload_hash, metadata, leaf_hash, submitted_at_ms,
               payment_method, payer, payment_tx, ord)
     ORDER BY u.ord";

const SETTLE_NONCES: &str = "UPDATE payment_nonces p SET status = 'settled', tx_hash = u.tx_hash
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS u (asset, payer, nonce, tx_hash)
     WHERE p.asset = u.asset AND p.payer = u.payer AND p.nonce = u.nonce
         AND p.status = 'settling'";

/// Only keys still holding their request's claim (`created_at_ms` is the claim's token).
const COMPLETE_IDEMPOTENCY: &str = "UPDATE idempotency_keys i SET status = u.status,
         response = u.response
     FROM UNNEST($1::text[], $2::text[], $3::int8[], $4::text[], $5::int8[])
         AS u (scope, key, status, response, claimed_at_ms)
     WHERE i.scope = u.scope AND i.key = u.key AND i.created_at_ms = u.claimed_at_ms
         AND i.status IS NULL";

/// Stores `group` in one transaction: the receipts (in the group's order, which becomes their
/// `seq` order), their API keys' usage, their x402 nonces settled and their Idempotency-Key
/// responses. All or nothing.
async fn insert_receipts(pool: &Pool, group: &[ReceiptReq]) -> StoreResult<()> {
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = read_committed(&mut client).await?;

    // API key usage: per key, how many receipts and the last one's time (as if each receipt
    // were stored on its own, in order).
    let mut uses: BTreeMap<&str, (i64, i64)> = BTreeMap::new();
    for r in group {
        if let Payment::ApiKey(id) = &r.receipt.payment {
            let e = uses.entry(id.as_str()).or_insert((0, 0));
            e.0 += 1;
            e.1 = r.receipt.submitted_at_ms;
        }
    }
    if !uses.is_empty() {
        // Locked first and in id order: the usage rows are what concurrent groups share.
        let ids: Vec<&str> = uses.keys().copied().collect();
        let lock = tx.prepare_cached(LOCK_KEYS).await.map_err(pg_err)?;
        tx.query(&lock, &[&ids]).await.map_err(pg_err)?;
        let n: Vec<i64> = uses.values().map(|v| v.0).collect();
        let last: Vec<i64> = uses.values().map(|v| v.1).collect();
        let count = tx.prepare_cached(COUNT_KEY_USES).await.map_err(pg_err)?;
        tx.execute(&count, &[&ids, &n, &last])
            .await
            .map_err(pg_err)?;
    }

    let col = |f: fn(&NewReceipt) -> &str| group.iter().map(|r| f(&r.receipt)).collect::<Vec<_>>();
    let insert = tx.prepare_cached(INSERT_RECEIPTS).await.map_err(pg_err)?;
    tx.execute(
        &insert,
        &[
            &col(|r| &r.receipt_id),
            &col(|r| &r.schema),
            &col(|r| &r.payload_hash),
            &col(|r| &r.metadata),
            &group
                .iter()
                .map(|r| r.receipt.leaf_hash.as_slice())
                .collect::<Vec<_>>(),
            &group
                .iter()
                .map(|r| r.receipt.submitted_at_ms)
                .collect::<Vec<_>>(),
            &col(|r| r.payment.method()),
            &group.iter().map(payer).collect::<Vec<_>>(),
            &group.iter().map(payment_tx).collect::<Vec<_>>(),
        ],
    )
    .await
    .map_err(|e| {
        conflict_or(e, || match group {
            [one] => format!("receipt {}", one.receipt.receipt_id),
            _ => "a receipt of the group".into(),
        })
    })?;

    let nonces: Vec<(&str, &str, &str, Option<&str>)> = group
        .iter()
        .filter_map(|r| match &r.receipt.payment {
            Payment::X402 {
                asset,
                payer,
                nonce,
                tx_hash,
            } => Some((
                asset.as_str(),
                payer.as_str(),
                nonce.as_str(),
                tx_hash.as_deref(),
            )),
            Payment::ApiKey(_) => None,
        })
        .collect();
    if !nonces.is_empty() {
        let settle = tx.prepare_cached(SETTLE_NONCES).await.map_err(pg_err)?;
        let n = tx
            .execute(
                &settle,
                &[
                    &nonces.iter().map(|n| n.0).collect::<Vec<_>>(),
                    &nonces.iter().map(|n| n.1).collect::<Vec<_>>(),
                    &nonces.iter().map(|n| n.2).collect::<Vec<_>>(),
                    &nonces.iter().map(|n| n.3).collect::<Vec<_>>(),
                ],
            )
            .await
            .map_err(pg_err)?;
        if n != nonces.len() as u64 {
            return Err(StoreError::Conflict(match nonces.as_slice() {
                [(_, payer, nonce, _)] => {
                    format!("payment nonce {nonce} of {payer} is not being settled")
                }
                _ => "a payment nonce of the group is not being settled".into(),
            }));
        }
    }

    let keys: Vec<&(IdempotencyKey, IdempotentResponse)> = group
        .iter()
        .filter_map(|r| r.idempotency.as_ref())
        .collect();
    if !keys.is_empty() {
        let complete = tx
            .prepare_cached(COMPLETE_IDEMPOTENCY)
            .await
            .map_err(pg_err)?;
        let n = tx
            .execute(
                &complete,
                &[
                    &keys.iter().map(|k| k.0.scope.as_str()).collect::<Vec<_>>(),
                    &keys.iter().map(|k| k.0.key.as_str()).collect::<Vec<_>>(),
                    &keys
                        .iter()
                        .map(|k| i64::from(k.1.status))
                        .collect::<Vec<_>>(),
                    &keys
                        .iter()
                        .map(|k| k.1.response.as_str())
                        .collect::<Vec<_>>(),
                    &keys.iter().map(|k| k.0.claimed_at_ms).collect::<Vec<_>>(),
                ],
            )
            .await
            .map_err(pg_err)?;
        // A claim taken over since (its request ran past the stale limit) keeps the later
        // request's; the receipt is stored all the same, since what paid for it is spent.
        if n != keys.len() as u64 {
            tracing::warn!(
                taken_over = keys.len() as u64 - n,
                "Idempotency-Keys taken over while their first request ran; their receipts are stored without the keys' answers"
            );
        }
    }
    tx.commit().await.map_err(pg_err)
}

fn payer(r: &ReceiptReq) -> &str {
    match &r.receipt.payment {
        Payment::ApiKey(id) => id,
        Payment::X402 { payer, .. } => payer,
    }
}

fn payment_tx(r: &ReceiptReq) -> Option<&str> {
    match &r.receipt.payment {
        Payment::ApiKey(_) => None,
        Payment::X402 { tx_hash, .. } => tx_hash.as_deref(),
    }
}

const RECEIPT_COLUMNS: &str = "receipt_id, schema, payload_hash, metadata, leaf_hash, \
     submitted_at_ms, payment_method, payer, payment_tx, batch, leaf_index";

fn receipt_from_row(r: &Row) -> StoreResult<ReceiptRecord> {
    let batch: Option<i64> = r.try_get("batch").map_err(corrupt)?;
    let index: Option<i64> = r.try_get("leaf_index").map_err(corrupt)?;
    Ok(ReceiptRecord {
        receipt_id: r.try_get("receipt_id").map_err(corrupt)?,
        schema: r.try_get("schema").map_err(corrupt)?,
        payload_hash: r.try_get("payload_hash").map_err(corrupt)?,
        metadata: r.try_get("metadata").map_err(corrupt)?,
        leaf_hash: hash(
            r.try_get("leaf_hash").map_err(corrupt)?,
            "receipt leaf hash",
        )?,
        submitted_at_ms: r.try_get("submitted_at_ms").map_err(corrupt)?,
        payment_method: r.try_get("payment_method").map_err(corrupt)?,
        payer: r.try_get("payer").map_err(corrupt)?,
        payment_tx: r.try_get("payment_tx").map_err(corrupt)?,
        sealed: batch.zip(index).map(|(b, i)| (b as u64, i as u64)),
    })
}

pub(super) async fn receipt(
    c: &impl GenericClient,
    id: &str,
) -> StoreResult<Option<ReceiptRecord>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT {RECEIPT_COLUMNS} FROM notary_receipts WHERE receipt_id = $1"
        ))
        .await
        .map_err(pg_err)?;
    c.query_opt(&stmt, &[&id])
        .await
        .map_err(pg_err)?
        .map(|r| receipt_from_row(&r))
        .transpose()
}

/// Seals up to `max` unsealed receipts into the next batch, inside `tx` (READ COMMITTED: each
/// statement after the lock sees what the previous sealer committed).
pub(super) async fn seal(
    tx: &impl GenericClient,
    max: u64,
    now_ms: i64,
) -> StoreResult<Option<NotaryBatch>> {
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
        &[&SEAL_LOCK],
    )
    .await
    .map_err(pg_err)?;
    let rows = tx
        .query(
            "SELECT seq, leaf_hash FROM notary_receipts WHERE batch IS NULL ORDER BY seq
             LIMIT $1",
            &[&(max.min(i64::MAX as u64) as i64)],
        )
        .await
        .map_err(pg_err)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let mut seqs = Vec::with_capacity(rows.len());
    let mut leaves = Vec::with_capacity(rows.len());
    for r in &rows {
        seqs.push(r.try_get::<_, i64>(0).map_err(corrupt)?);
        leaves.push(hash(r.try_get(1).map_err(corrupt)?, "receipt leaf hash")?);
    }
    let number: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM notary_batches",
            &[],
        )
        .await
        .map_err(pg_err)?
        .try_get(0)
        .map_err(corrupt)?;
    let batch = NotaryBatch::seal(number as u64, &leaves, now_ms);
    tx.execute(
        "INSERT INTO notary_batches (number, size, root, created_at_ms) VALUES ($1, $2, $3, $4)",
        &[
            &number,
            &(batch.size as i64),
            &batch.root.as_slice(),
            &now_ms,
        ],
    )
    .await
    .map_err(pg_err)?;
    let updated = tx
        .execute(
            "UPDATE notary_receipts r SET batch = $1, leaf_index = u.ord - 1
             FROM UNNEST($2::int8[]) WITH ORDINALITY AS u (seq, ord)
             WHERE r.seq = u.seq AND r.batch IS NULL",
            &[&number, &seqs],
        )
        .await
        .map_err(pg_err)?;
    if updated != seqs.len() as u64 {
        return Err(StoreError::Conflict(format!(
            "notary batch {number}: {} of its receipts were sealed meanwhile",
            seqs.len() as u64 - updated.min(seqs.len() as u64)
        )));
    }
    Ok(Some(batch))
}

/// Notary batches matching `tail` (a WHERE / ORDER BY clause).
pub(super) async fn batches(
    c: &impl GenericClient,
    tail: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<Vec<NotaryBatch>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT number, size, root, created_at_ms FROM notary_batches {tail}"
        ))
        .await
        .map_err(pg_err)?;
    let rows = c.query(&stmt, params).await.map_err(pg_err)?;
    rows.iter()
        .map(|r| {
            Ok(NotaryBatch {
                number: r.try_get::<_, i64>(0).map_err(corrupt)? as u64,
                size: r.try_get::<_, i64>(1).map_err(corrupt)? as u64,
                root: hash(r.try_get(2).map_err(corrupt)?, "notary batch root")?,
                created_at_ms: r.try_get(3).map_err(corrupt)?,
            })
        })
        .collect()
}

pub(super) async fn batch_leaves(
    c: &impl GenericClient,
    number: u64,
) -> StoreResult<Vec<[u8; 32]>> {
    let stmt = c
        .prepare_cached(
            "SELECT leaf_hash FROM notary_receipts WHERE batch = $1 ORDER BY leaf_index",
        )
        .await
        .map_err(pg_err)?;
    let rows = c.query(&stmt, &[&(number as i64)]).await.map_err(pg_err)?;
    rows.iter()
        .map(|r| hash(r.try_get(0).map_err(corrupt)?, "receipt leaf hash"))
        .collect()
}

pub(super) async fn counts(c: &impl GenericClient) -> StoreResult<NotaryCounts> {
    // One statement, one snapshot. Every receipt is either pending or in exactly one batch;
    // counting it so reads the small batches table and the partial index of pending ones
    // (`seq` has gaps: a refused insert still draws a number).
    let row = c
        .query_one(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM notary_batches)::int8,
                    (SELECT COUNT(*) FROM notary_receipts WHERE batch IS NULL)::int8",
            &[],
        )
        .await
        .map_err(pg_err)?;
    let sealed: i64 = row.try_get(0).map_err(corrupt)?;
    let pending: i64 = row.try_get(1).map_err(corrupt)?;
    Ok(NotaryCounts {
        receipts: (sealed + pending) as u64,
        pending: pending as u64,
        last_batch: batches(c, "ORDER BY number DESC LIMIT 1", &[]).await?.pop(),
    })
}

pub(super) async fn create_key(c: &impl GenericClient, k: &ApiKey) -> StoreResult<()> {
    c.execute(
        "INSERT INTO api_keys (id, name, key_hash, created_at_ms) VALUES ($1, $2, $3, $4)",
        &[&k.id, &k.name, &k.key_hash.as_slice(), &k.created_at_ms],
    )
    .await
    .map_err(|e| conflict_or(e, || format!("API key {}", k.id)))?;
    Ok(())
}

/// API keys matching `tail` (a WHERE / ORDER BY clause).
pub(super) async fn keys(
    c: &impl GenericClient,
    tail: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<Vec<ApiKey>> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT id, name, key_hash, created_at_ms, revoked_at_ms, uses, last_used_ms
             FROM api_keys {tail}"
        ))
        .await
        .map_err(pg_err)?;
    let rows = c.query(&stmt, params).await.map_err(pg_err)?;
    rows.iter()
        .map(|r| {
            Ok(ApiKey {
                id: r.try_get(0).map_err(corrupt)?,
                name: r.try_get(1).map_err(corrupt)?,
                key_hash: hash(r.try_get(2).map_err(corrupt)?, "API key hash")?,
                created_at_ms: r.try_get(3).map_err(corrupt)?,
                revoked_at_ms: r.try_get(4).map_err(corrupt)?,
                uses: r.try_get::<_, i64>(5).map_err(corrupt)? as u64,
                last_used_ms: r.try_get(6).map_err(corrupt)?,
            })
        })
        .collect()
}

pub(super) async fn revoke_key(c: &impl GenericClient, id: &str, now_ms: i64) -> StoreResult<bool> {
    let n = c
        .execute(
            "UPDATE api_keys SET revoked_at_ms = COALESCE(revoked_at_ms, $2) WHERE id = $1",
            &[&id, &now_ms],
        )
        .await
        .map_err(pg_err)?;
    Ok(n == 1)
}

pub(super) async fn reserve_nonce(
    c: &impl GenericClient,
    n: &PaymentNonce,
    now_ms: i64,
    prepared: &str,
) -> StoreResult<bool> {
    let stmt = c
        .prepare_cached(
            "INSERT INTO payment_nonces (asset, payer, nonce, status, seen_at_ms, prepared)
             VALUES ($1, $2, $3, 'settling', $4, $5) ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(pg_err)?;
    let inserted = c
        .execute(&stmt, &[&n.asset, &n.payer, &n.nonce, &now_ms, &prepared])
        .await
        .map_err(pg_err)?;
    Ok(inserted == 1)
}

pub(super) async fn settling_payments(
    c: &impl GenericClient,
    seen_before_ms: i64,
    limit: u32,
) -> StoreResult<Vec<SettlingPayment>> {
    let rows = c
        .query(
            "SELECT asset, payer, nonce, seen_at_ms, prepared FROM payment_nonces
             WHERE status = 'settling' AND seen_at_ms < $1
             ORDER BY seen_at_ms LIMIT $2",
            &[&seen_before_ms, &i64::from(limit)],
        )
        .await
        .map_err(pg_err)?;
    rows.iter()
        .map(|r| {
            Ok(SettlingPayment {
                nonce: PaymentNonce {
                    asset: r.try_get(0).map_err(corrupt)?,
                    payer: r.try_get(1).map_err(corrupt)?,
                    nonce: r.try_get(2).map_err(corrupt)?,
                },
                seen_at_ms: r.try_get(3).map_err(corrupt)?,
                prepared: r.try_get(4).map_err(corrupt)?,
            })
        })
        .collect()
}

pub(super) async fn fail_nonce(
    c: &impl GenericClient,
    n: &PaymentNonce,
    detail: &str,
) -> StoreResult<()> {
    c.execute(
        "UPDATE payment_nonces SET status = 'failed', detail = $4
         WHERE asset = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'",
        &[&n.asset, &n.payer, &n.nonce, &detail],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

/// How many times a claim looks again when the row it conflicted with was deleted before it
/// could read it (released or purged in between).
const CLAIM_ATTEMPTS: usize = 4;

/// Claims an Idempotency-Key inside `tx` (READ COMMITTED). Of concurrent claims of one key,
/// exactly one inserts the row (the others' inserts wait for it and then do nothing); the
/// others read it locked, so a stale takeover too is won by one claim only.
pub(super) async fn claim_idempotency(
    tx: &impl GenericClient,
    k: &IdempotencyKey,
    stale_ms: i64,
) -> StoreResult<IdempotencyClaim> {
    let now_ms = k.claimed_at_ms;
    let insert = tx
        .prepare_cached(
            "INSERT INTO idempotency_keys (scope, key, request_hash, created_at_ms)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
        )
        .await
        .map_err(pg_err)?;
    let select = tx
        .prepare_cached(
            "SELECT request_hash, created_at_ms, status, response FROM idempotency_keys
             WHERE scope = $1 AND key = $2 FOR UPDATE",
        )
        .await
        .map_err(pg_err)?;
    for _ in 0..CLAIM_ATTEMPTS {
        let inserted = tx
            .execute(
                &insert,
                &[&k.scope, &k.key, &k.request_hash.as_slice(), &now_ms],
            )
            .await
            .map_err(pg_err)?;
        if inserted == 1 {
            return Ok(IdempotencyClaim::Started);
        }
        let Some(row) = tx
            .query_opt(&select, &[&k.scope, &k.key])
            .await
            .map_err(pg_err)?
        else {
            continue;
        };
        let stored_hash: Vec<u8> = row.try_get(0).map_err(corrupt)?;
        let created: i64 = row.try_get(1).map_err(corrupt)?;
        let status: Option<i64> = row.try_get(2).map_err(corrupt)?;
        let response: Option<String> = row.try_get(3).map_err(corrupt)?;
        if stored_hash != k.request_hash {
            return Ok(IdempotencyClaim::Mismatch);
        }
        if let (Some(status), Some(response)) = (status, response) {
            let status = u16::try_from(status).map_err(|_| {
                StoreError::Corrupt(format!("Idempotency-Key response status {status}"))
            })?;
            return Ok(IdempotencyClaim::Replay(IdempotentResponse {
                status,
                response,
            }));
        }
        if now_ms - created < stale_ms {
            return Ok(IdempotencyClaim::InFlight);
        }
        // Abandoned by a process that died mid-request: this request takes it over.
        tx.execute(
            "UPDATE idempotency_keys SET created_at_ms = $3 WHERE scope = $1 AND key = $2",
            &[&k.scope, &k.key, &now_ms],
        )
        .await
        .map_err(pg_err)?;
        return Ok(IdempotencyClaim::Started);
    }
    Err(StoreError::Unavailable(format!(
        "Idempotency-Key {:?} kept changing while it was claimed",
        k.key
    )))
}

pub(super) async fn release_idempotency(
    c: &impl GenericClient,
    k: &IdempotencyKey,
) -> StoreResult<()> {
    c.execute(
        "DELETE FROM idempotency_keys
         WHERE scope = $1 AND key = $2 AND created_at_ms = $3 AND status IS NULL",
        &[&k.scope, &k.key, &k.claimed_at_ms],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

pub(super) async fn purge_idempotency(c: &impl GenericClient, before_ms: i64) -> StoreResult<u64> {
    c.execute(
        "DELETE FROM idempotency_keys WHERE created_at_ms < $1 AND status IS NOT NULL",
        &[&before_ms],
    )
    .await
    .map_err(pg_err)
}

#[async_trait]
impl NotaryStore for PgStore {
    async fn insert_receipt(
        &self,
        receipt: NewReceipt,
        idempotency: Option<(IdempotencyKey, IdempotentResponse)>,
    ) -> StoreResult<()> {
        let (reply, rx) = oneshot::channel();
        let stopped = || StoreError::Unavailable("the receipt committers have stopped".into());
        self.receipts
            .send(ReceiptReq {
                receipt,
                idempotency,
                reply,
            })
            .await
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    async fn receipt(&self, receipt_id: &str) -> StoreResult<Option<ReceiptRecord>> {
        timed("read receipt", async {
            receipt(&self.client().await?, receipt_id).await
        })
        .await
    }

    async fn seal_notary_batch(&self, max: u64, now_ms: i64) -> StoreResult<Option<NotaryBatch>> {
        timed_for(RESOLVE_TIMEOUT, "seal notary batch", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            let sealed = seal(&tx, max, now_ms).await?;
            tx.commit().await.map_err(pg_err)?;
            Ok(sealed)
        })
        .await
    }

    async fn notary_batch(&self, number: u64) -> StoreResult<Option<NotaryBatch>> {
        timed("read notary batches", async {
            let client = self.client().await?;
            Ok(batches(&client, "WHERE number = $1", &[&(number as i64)])
                .await?
                .pop())
        })
        .await
    }

    async fn notary_batch_leaves(&self, number: u64) -> StoreResult<Vec<[u8; 32]>> {
        timed("read notary batch leaves", async {
            batch_leaves(&self.client().await?, number).await
        })
        .await
    }

    async fn notary_batches(&self, from: u64, to: u64) -> StoreResult<Vec<NotaryBatch>> {
        timed("read notary batches", async {
            let client = self.client().await?;
            batches(
                &client,
                "WHERE number >= $1 AND number < $2 ORDER BY number",
                &[&(from as i64), &(to as i64)],
            )
            .await
        })
        .await
    }

    async fn notary_counts(&self) -> StoreResult<NotaryCounts> {
        timed("count receipts", async {
            counts(&self.client().await?).await
        })
        .await
    }

    async fn create_api_key(&self, key: &ApiKey) -> StoreResult<()> {
        timed("create API key", async {
            create_key(&self.client().await?, key).await
        })
        .await
    }

    async fn api_keys(&self) -> StoreResult<Vec<ApiKey>> {
        timed("read API keys", async {
            // Byte order for ids, as the embedded store sorts them.
            keys(
                &self.client().await?,
                "ORDER BY created_at_ms, id COLLATE \"C\"",
                &[],
            )
            .await
        })
        .await
    }

    async fn api_key_by_hash(&self, key_hash: [u8; 32]) -> StoreResult<Option<ApiKey>> {
        timed("read API keys", async {
            Ok(keys(
                &self.client().await?,
                "WHERE key_hash = $1",
                &[&key_hash.as_slice()],
            )
            .await?
            .pop())
        })
        .await
    }

    async fn revoke_api_key(&self, id: &str, now_ms: i64) -> StoreResult<bool> {
        timed("revoke API key", async {
            revoke_key(&self.client().await?, id, now_ms).await
        })
        .await
    }

    async fn reserve_payment_nonce(
        &self,
        nonce: &PaymentNonce,
        now_ms: i64,
        prepared: &str,
    ) -> StoreResult<bool> {
        timed("reserve payment nonce", async {
            reserve_nonce(&self.client().await?, nonce, now_ms, prepared).await
        })
        .await
    }

    async fn settling_payments(
        &self,
        seen_before_ms: i64,
        limit: u32,
    ) -> StoreResult<Vec<SettlingPayment>> {
        timed("settling payments", async {
            settling_payments(&self.client().await?, seen_before_ms, limit).await
        })
        .await
    }

    async fn fail_payment_nonce(&self, nonce: &PaymentNonce, detail: &str) -> StoreResult<()> {
        timed("fail payment nonce", async {
            fail_nonce(&self.client().await?, nonce, detail).await
        })
        .await
    }

    async fn claim_idempotency_key(
        &self,
        key: &IdempotencyKey,
        stale_ms: i64,
    ) -> StoreResult<IdempotencyClaim> {
        timed("claim Idempotency-Key", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            let claim = claim_idempotency(&tx, key, stale_ms).await?;
            tx.commit().await.map_err(pg_err)?;
            Ok(claim)
        })
        .await
    }

    async fn release_idempotency_key(&self, key: &IdempotencyKey) -> StoreResult<()> {
        timed("release Idempotency-Key", async {
            release_idempotency(&self.client().await?, key).await
        })
        .await
    }

    async fn purge_idempotency_keys(&self, before_ms: i64) -> StoreResult<u64> {
        timed("purge Idempotency-Keys", async {
            purge_idempotency(&self.client().await?, before_ms).await
        })
        .await
    }
}
