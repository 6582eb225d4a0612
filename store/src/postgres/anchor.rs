//! The PostgreSQL store's anchor tables (schema version 3; notary ranges since version 4): queries the `Store` methods of
//! [`super::PgStore`] run on a pooled connection. Two leaders racing on a batch
//! cannot both store it: the number and both epoch bounds are unique.

use super::*;
use super::{corrupt, pg_err};
use crate::{check_anchor_link, AnchorBatch, AnchorCounts, AnchorState, AnchorTx, StoreError};
use crate::{codec::parse_wei, AnchorStore, StoreResult};
use async_trait::async_trait;
use tokio_postgres::{GenericClient, Row};

const COLUMNS: &str = "number, first_epoch, last_epoch, pool_from, pool_to, leaves, root, \
     created_at_ms, status, tx_hash, block_number, confirmed_at_ms, notary_from, notary_to";

fn hash(r: &Row, name: &str) -> StoreResult<Option<[u8; 32]>> {
    r.try_get::<_, Option<Vec<u8>>>(name)
        .map_err(corrupt)?
        .map(|v| {
            v.try_into()
                .map_err(|_| StoreError::Corrupt(format!("anchor {name} is not 32 bytes")))
        })
        .transpose()
}

fn batch_from_row(r: &Row) -> StoreResult<AnchorBatch> {
    let int = |name: &str| r.try_get::<_, i64>(name).map_err(corrupt);
    let status: String = r.try_get("status").map_err(corrupt)?;
    Ok(AnchorBatch {
        number: int("number")? as u64,
        first_epoch: int("first_epoch")? as u64,
        last_epoch: int("last_epoch")? as u64,
        pool_from: int("pool_from")? as u64,
        pool_to: int("pool_to")? as u64,
        notary_from: int("notary_from")? as u64,
        notary_to: int("notary_to")? as u64,
        leaves: int("leaves")? as u64,
        root: hash(r, "root")?
            .ok_or_else(|| StoreError::Corrupt("anchor batch without a root".into()))?,
        created_at_ms: int("created_at_ms")?,
        status: AnchorState::parse(&status)?,
        tx_hash: hash(r, "tx_hash")?,
        block_number: r
            .try_get::<_, Option<i64>>("block_number")
            .map_err(corrupt)?
            .map(|b| b as u64),
        confirmed_at_ms: r.try_get("confirmed_at_ms").map_err(corrupt)?,
    })
}

/// Anchor batches matching `tail` (a WHERE / ORDER BY clause).
pub(super) async fn batches(
    c: &impl GenericClient,
    tail: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> StoreResult<Vec<AnchorBatch>> {
    let rows = c
        .query(
            &format!("SELECT {COLUMNS} FROM anchor_batches {tail}"),
            params,
        )
        .await
        .map_err(pg_err)?;
    rows.iter().map(batch_from_row).collect()
}

pub(super) async fn last(c: &impl GenericClient) -> StoreResult<Option<AnchorBatch>> {
    Ok(batches(c, "ORDER BY number DESC LIMIT 1", &[]).await?.pop())
}

pub(super) async fn insert(c: &impl GenericClient, b: &AnchorBatch) -> StoreResult<()> {
    check_anchor_link(last(c).await?.as_ref(), b)?;
    c.execute(
        "INSERT INTO anchor_batches (number, first_epoch, last_epoch, pool_from, pool_to,
             leaves, root, created_at_ms, status, notary_from, notary_to)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)",
        &[
            &(b.number as i64),
            &(b.first_epoch as i64),
            &(b.last_epoch as i64),
            &(b.pool_from as i64),
            &(b.pool_to as i64),
            &(b.leaves as i64),
            &b.root.as_slice(),
            &b.created_at_ms,
            &(b.notary_from as i64),
            &(b.notary_to as i64),
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

pub(super) async fn record_tx(c: &impl GenericClient, t: &AnchorTx) -> StoreResult<()> {
    let updated = c
        .execute(
            "UPDATE anchor_batches SET status = 'submitted'
             WHERE number = $1 AND status <> 'confirmed'",
            &[&(t.batch as i64)],
        )
        .await
        .map_err(pg_err)?;
    if updated != 1 {
        return Err(StoreError::Conflict(format!(
            "anchor batch {} does not exist or is already confirmed",
            t.batch
        )));
    }
    c.execute(
        "INSERT INTO anchor_txs (hash, batch, nonce, max_fee, priority_fee, raw, sent_at_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &t.hash.as_slice(),
            &(t.batch as i64),
            &(t.nonce as i64),
            &t.max_fee.to_string(),
            &t.priority_fee.to_string(),
            &t.raw,
            &t.sent_at_ms,
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

pub(super) async fn txs(c: &impl GenericClient, batch: u64) -> StoreResult<Vec<AnchorTx>> {
    let rows = c
        .query(
            "SELECT hash, batch, nonce, max_fee, priority_fee, raw, sent_at_ms FROM anchor_txs
             WHERE batch = $1 ORDER BY id",
            &[&(batch as i64)],
        )
        .await
        .map_err(pg_err)?;
    rows.iter()
        .map(|r| {
            let text = |name: &str| r.try_get::<_, String>(name).map_err(corrupt);
            Ok(AnchorTx {
                hash: hash(r, "hash")?
                    .ok_or_else(|| StoreError::Corrupt("anchor tx without a hash".into()))?,
                batch: r.try_get::<_, i64>("batch").map_err(corrupt)? as u64,
                nonce: r.try_get::<_, i64>("nonce").map_err(corrupt)? as u64,
                max_fee: parse_wei(&text("max_fee")?)?,
                priority_fee: parse_wei(&text("priority_fee")?)?,
                raw: r.try_get("raw").map_err(corrupt)?,
                sent_at_ms: r.try_get("sent_at_ms").map_err(corrupt)?,
            })
        })
        .collect()
}

pub(super) async fn confirm(
    c: &impl GenericClient,
    batch: u64,
    tx_hash: [u8; 32],
    block: u64,
    now_ms: i64,
) -> StoreResult<()> {
    let known = c
        .query_opt(
            "SELECT batch FROM anchor_txs WHERE hash = $1",
            &[&tx_hash.as_slice()],
        )
        .await
        .map_err(pg_err)?
        .map(|r| r.try_get::<_, i64>(0).map_err(corrupt))
        .transpose()?;
    if known != Some(batch as i64) {
        return Err(StoreError::Conflict(format!(
            "transaction 0x{} is not one recorded for anchor batch {batch}",
            hex::encode(tx_hash)
        )));
    }
    c.execute(
        "UPDATE anchor_batches SET status = 'confirmed', tx_hash = $2, block_number = $3,
             confirmed_at_ms = $4
         WHERE number = $1 AND status <> 'confirmed'",
        &[
            &(batch as i64),
            &tx_hash.as_slice(),
            &(block as i64),
            &now_ms,
        ],
    )
    .await
    .map_err(pg_err)?;
    Ok(())
}

pub(super) async fn counts(c: &impl GenericClient) -> StoreResult<AnchorCounts> {
    let mut counts = AnchorCounts::default();
    let rows = c
        .query(
            "SELECT status, COUNT(*) FROM anchor_batches GROUP BY status",
            &[],
        )
        .await
        .map_err(pg_err)?;
    for r in &rows {
        let status: String = r.try_get(0).map_err(corrupt)?;
        let n = r.try_get::<_, i64>(1).map_err(corrupt)? as u64;
        match AnchorState::parse(&status)? {
            AnchorState::Pending => counts.pending = n,
            AnchorState::Submitted => counts.submitted = n,
            AnchorState::Confirmed => counts.confirmed = n,
        }
    }
    counts.last_batch = last(c).await?;
    counts.last_confirmed = batches(
        c,
        "WHERE status = 'confirmed' ORDER BY number DESC LIMIT 1",
        &[],
    )
    .await?
    .pop();
    Ok(counts)
}

#[async_trait]
impl AnchorStore for PgStore {
    async fn last_anchor_batch(&self) -> StoreResult<Option<AnchorBatch>> {
        timed("read anchor batches", async {
            last(&**self.client().await?).await
        })
        .await
    }

    async fn insert_anchor_batch(&self, batch: &AnchorBatch) -> StoreResult<()> {
        timed("insert anchor batch", async {
            let mut client = self.client().await?;
            let tx = read_committed(&mut client).await?;
            insert(&*tx, batch).await?;
            tx.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn anchor_batch(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        timed("read anchor batches", async {
            let client = self.client().await?;
            Ok(batches(&**client, "WHERE number = $1", &[&(number as i64)])
                .await?
                .pop())
        })
        .await
    }

    async fn anchor_batch_for_epoch(&self, epoch: u64) -> StoreResult<Option<AnchorBatch>> {
        timed("read anchor batches", async {
            let client = self.client().await?;
            let found = batches(
                &**client,
                "WHERE last_epoch >= $1 ORDER BY last_epoch LIMIT 1",
                &[&(epoch as i64)],
            )
            .await?;
            Ok(found.into_iter().find(|b| b.first_epoch <= epoch))
        })
        .await
    }

    async fn anchor_batch_for_pool(&self, pool_batch: u64) -> StoreResult<Option<AnchorBatch>> {
        timed("read anchor batches", async {
            let client = self.client().await?;
            Ok(batches(
                &**client,
                "WHERE pool_to > $1 AND pool_from <= $1 ORDER BY pool_to LIMIT 1",
                &[&(pool_batch as i64)],
            )
            .await?
            .pop())
        })
        .await
    }

    async fn open_anchor_batches(&self) -> StoreResult<Vec<AnchorBatch>> {
        timed("read anchor batches", async {
            let client = self.client().await?;
            batches(
                &**client,
                "WHERE status <> 'confirmed' ORDER BY number",
                &[],
            )
            .await
        })
        .await
    }

    async fn record_anchor_tx(&self, tx: &AnchorTx) -> StoreResult<()> {
        timed("record anchor transaction", async {
            let mut client = self.client().await?;
            let t = read_committed(&mut client).await?;
            record_tx(&*t, tx).await?;
            t.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn anchor_txs(&self, batch: u64) -> StoreResult<Vec<AnchorTx>> {
        timed("read anchor transactions", async {
            txs(&**self.client().await?, batch).await
        })
        .await
    }

    async fn confirm_anchor_batch(
        &self,
        batch: u64,
        tx_hash: [u8; 32],
        block: u64,
        now_ms: i64,
    ) -> StoreResult<()> {
        timed("confirm anchor batch", async {
            let mut client = self.client().await?;
            let t = read_committed(&mut client).await?;
            confirm(&*t, batch, tx_hash, block, now_ms).await?;
            t.commit().await.map_err(pg_err)
        })
        .await
    }

    async fn anchor_counts(&self) -> StoreResult<AnchorCounts> {
        timed("read anchor batches", async {
            counts(&**self.client().await?).await
        })
        .await
    }

    async fn anchor_batch_for_notary(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        timed("read anchor batches", async {
            let client = self.client().await?;
            Ok(batches(
                &**client,
                "WHERE notary_to > $1 AND notary_from <= $1 ORDER BY notary_to LIMIT 1",
                &[&(number as i64)],
            )
            .await?
            .pop())
        })
        .await
    }
}
