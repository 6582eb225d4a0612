//! The embedded store's anchor tables (schema version 3): queries the `Store` methods of
//! [`super::SqliteStore`] run on a reader connection or inside the writer's transaction.

use super::*;
use super::{hash32, unavailable};
use crate::{check_anchor_link, AnchorBatch, AnchorCounts, AnchorState, AnchorTx, StoreError};
use crate::{codec::parse_wei, AnchorStore, StoreResult};
use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};

/// The columns `batches` reads, by name.
const COLUMNS: &str = "number, first_epoch, last_epoch, pool_from, pool_to, leaves, root, \
     created_at_ms, status, tx_hash, block_number, confirmed_at_ms, notary_from, notary_to";

type Row = (
    i64,
    i64,
    i64,
    i64,
    i64,
    i64,
    Vec<u8>,
    i64,
    String,
    Option<Vec<u8>>,
    Option<i64>,
    Option<i64>,
    i64,
    i64,
);

fn batch_from(row: Row) -> StoreResult<AnchorBatch> {
    let (number, first, last, from, to, leaves, root, created, status, tx, block, at, nf, nt) = row;
    Ok(AnchorBatch {
        number: number as u64,
        first_epoch: first as u64,
        last_epoch: last as u64,
        pool_from: from as u64,
        pool_to: to as u64,
        notary_from: nf as u64,
        notary_to: nt as u64,
        leaves: leaves as u64,
        root: hash32(root, "anchor root")?,
        created_at_ms: created,
        status: AnchorState::parse(&status)?,
        tx_hash: tx.map(|h| hash32(h, "anchor tx hash")).transpose()?,
        block_number: block.map(|b| b as u64),
        confirmed_at_ms: at,
    })
}

/// Anchor batches matching `tail` (a WHERE / ORDER BY clause).
pub(super) fn batches(
    conn: &Connection,
    tail: &str,
    p: impl rusqlite::Params,
) -> StoreResult<Vec<AnchorBatch>> {
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM anchor_batches {tail}"))
        .map_err(unavailable)?;
    let rows = stmt
        .query_map(p, |r| {
            Ok((
                r.get("number")?,
                r.get("first_epoch")?,
                r.get("last_epoch")?,
                r.get("pool_from")?,
                r.get("pool_to")?,
                r.get("leaves")?,
                r.get("root")?,
                r.get("created_at_ms")?,
                r.get("status")?,
                r.get("tx_hash")?,
                r.get("block_number")?,
                r.get("confirmed_at_ms")?,
                r.get("notary_from")?,
                r.get("notary_to")?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|r| batch_from(r.map_err(unavailable)?)).collect()
}

pub(super) fn last(conn: &Connection) -> StoreResult<Option<AnchorBatch>> {
    Ok(batches(conn, "ORDER BY number DESC LIMIT 1", [])?.pop())
}

pub(super) fn insert(conn: &Connection, b: &AnchorBatch) -> StoreResult<()> {
    check_anchor_link(last(conn)?.as_ref(), b)?;
    conn.execute(
        "INSERT INTO anchor_batches (number, first_epoch, last_epoch, pool_from, pool_to,
             leaves, root, created_at_ms, status, notary_from, notary_to)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10)",
        params![
            b.number as i64,
            b.first_epoch as i64,
            b.last_epoch as i64,
            b.pool_from as i64,
            b.pool_to as i64,
            b.leaves as i64,
            b.root.to_vec(),
            b.created_at_ms,
            b.notary_from as i64,
            b.notary_to as i64,
        ],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn record_tx(conn: &Connection, t: &AnchorTx) -> StoreResult<()> {
    let status: Option<String> = conn
        .query_row(
            "SELECT status FROM anchor_batches WHERE number = ?1",
            [t.batch as i64],
            |r| r.get(0),
        )
        .optional()
        .map_err(unavailable)?;
    match status.as_deref().map(AnchorState::parse).transpose()? {
        None => {
            return Err(StoreError::Conflict(format!(
                "anchor batch {} does not exist",
                t.batch
            )))
        }
        Some(AnchorState::Confirmed) => {
            return Err(StoreError::Conflict(format!(
                "anchor batch {} is already confirmed",
                t.batch
            )))
        }
        Some(_) => {}
    }
    conn.execute(
        "INSERT INTO anchor_txs (hash, batch, nonce, max_fee, priority_fee, raw, sent_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            t.hash.to_vec(),
            t.batch as i64,
            t.nonce as i64,
            t.max_fee.to_string(),
            t.priority_fee.to_string(),
            t.raw,
            t.sent_at_ms,
        ],
    )
    .map_err(unavailable)?;
    conn.execute(
        "UPDATE anchor_batches SET status = 'submitted' WHERE number = ?1",
        [t.batch as i64],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn txs(conn: &Connection, batch: u64) -> StoreResult<Vec<AnchorTx>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT hash, batch, nonce, max_fee, priority_fee, raw, sent_at_ms FROM anchor_txs
             WHERE batch = ?1 ORDER BY rowid",
        )
        .map_err(unavailable)?;
    let rows = stmt
        .query_map([batch as i64], |r| {
            Ok((
                r.get::<_, Vec<u8>>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Vec<u8>>(5)?,
                r.get::<_, i64>(6)?,
            ))
        })
        .map_err(unavailable)?;
    rows.map(|r| {
        let (hash, batch, nonce, max_fee, priority_fee, raw, sent_at_ms) =
            r.map_err(unavailable)?;
        Ok(AnchorTx {
            hash: hash32(hash, "anchor tx hash")?,
            batch: batch as u64,
            nonce: nonce as u64,
            max_fee: parse_wei(&max_fee)?,
            priority_fee: parse_wei(&priority_fee)?,
            raw,
            sent_at_ms,
        })
    })
    .collect()
}

pub(super) fn confirm(
    conn: &Connection,
    batch: u64,
    tx_hash: [u8; 32],
    block: u64,
    now_ms: i64,
) -> StoreResult<()> {
    let known: Option<i64> = conn
        .query_row(
            "SELECT batch FROM anchor_txs WHERE hash = ?1",
            [tx_hash.to_vec()],
            |r| r.get(0),
        )
        .optional()
        .map_err(unavailable)?;
    if known != Some(batch as i64) {
        return Err(StoreError::Conflict(format!(
            "transaction 0x{} is not one recorded for anchor batch {batch}",
            hex::encode(tx_hash)
        )));
    }
    conn.execute(
        "UPDATE anchor_batches SET status = 'confirmed', tx_hash = ?2, block_number = ?3,
             confirmed_at_ms = ?4
         WHERE number = ?1 AND status <> 'confirmed'",
        params![batch as i64, tx_hash.to_vec(), block as i64, now_ms],
    )
    .map_err(unavailable)?;
    Ok(())
}

pub(super) fn counts(conn: &Connection) -> StoreResult<AnchorCounts> {
    let mut c = AnchorCounts::default();
    let mut stmt = conn
        .prepare_cached("SELECT status, COUNT(*) FROM anchor_batches GROUP BY status")
        .map_err(unavailable)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .map_err(unavailable)?;
    for row in rows {
        let (status, n) = row.map_err(unavailable)?;
        match AnchorState::parse(&status)? {
            AnchorState::Pending => c.pending = n as u64,
            AnchorState::Submitted => c.submitted = n as u64,
            AnchorState::Confirmed => c.confirmed = n as u64,
        }
    }
    c.last_batch = last(conn)?;
    c.last_confirmed = batches(
        conn,
        "WHERE status = 'confirmed' ORDER BY number DESC LIMIT 1",
        [],
    )?
    .pop();
    Ok(c)
}

#[async_trait]
impl AnchorStore for SqliteStore {
    async fn last_anchor_batch(&self) -> StoreResult<Option<AnchorBatch>> {
        self.read(last).await
    }

    async fn insert_anchor_batch(&self, batch: &AnchorBatch) -> StoreResult<()> {
        let batch = batch.clone();
        self.write("insert_anchor_batch", move |tx| insert(tx, &batch))
            .await
    }

    async fn anchor_batch(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| Ok(batches(c, "WHERE number = ?1", [number as i64])?.pop()))
            .await
    }

    async fn anchor_batch_for_epoch(&self, epoch: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = batches(
                c,
                "WHERE last_epoch >= ?1 ORDER BY last_epoch LIMIT 1",
                [epoch as i64],
            )?;
            Ok(found.into_iter().find(|b| b.first_epoch <= epoch))
        })
        .await
    }

    async fn anchor_batch_for_pool(&self, pool_batch: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = batches(
                c,
                "WHERE pool_to > ?1 AND pool_from <= ?1 ORDER BY pool_to LIMIT 1",
                [pool_batch as i64],
            )?;
            Ok(found.into_iter().next())
        })
        .await
    }

    async fn open_anchor_batches(&self) -> StoreResult<Vec<AnchorBatch>> {
        self.read(|c| batches(c, "WHERE status <> 'confirmed' ORDER BY number", []))
            .await
    }

    async fn record_anchor_tx(&self, tx: &AnchorTx) -> StoreResult<()> {
        let t = tx.clone();
        self.write("record_anchor_transaction", move |tx| record_tx(tx, &t))
            .await
    }

    async fn anchor_txs(&self, batch: u64) -> StoreResult<Vec<AnchorTx>> {
        self.read(move |c| txs(c, batch)).await
    }

    async fn confirm_anchor_batch(
        &self,
        batch: u64,
        tx_hash: [u8; 32],
        block: u64,
        now_ms: i64,
    ) -> StoreResult<()> {
        self.write("confirm_anchor_batch", move |tx| {
            confirm(tx, batch, tx_hash, block, now_ms)
        })
        .await
    }

    async fn anchor_counts(&self) -> StoreResult<AnchorCounts> {
        self.read(counts).await
    }

    async fn anchor_batch_for_notary(&self, number: u64) -> StoreResult<Option<AnchorBatch>> {
        self.read(move |c| {
            let found = batches(
                c,
                "WHERE notary_to > ?1 AND notary_from <= ?1 ORDER BY notary_to LIMIT 1",
                [number as i64],
            )?;
            Ok(found.into_iter().next())
        })
        .await
    }
}
