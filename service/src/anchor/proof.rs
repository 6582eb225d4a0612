//! The anchor part of a game's verification: the path from the game's epoch record (or pool
//! batch root) to its anchor batch's root, and the transaction that put that root on chain.

use super::batch::{inclusion, Inclusion, Subject};
use super::{tx_hex, AnchorView};
use vrs_engine::merkle;
use vrs_protocol::report::{check, Verification};
use vrs_protocol::verification::{
    AnchorDoc, AnchorIncluded, AnchorPending, Anchoring, BatchSpan, EpochSpan,
};
use vrs_store::{AnchorState, Store};

/// Fills the proof's anchor members (`anchorTx`, `legacyTx`, `anchorChain`, `anchorChainId`,
/// `anchor_status`, `anchor`) and adds the `anchor_inclusion` check once the record is in a
/// batch. `anchorTx` stays null until the batch is confirmed. A store error is returned (the
/// service answers 503); data that does not add up fails the check.
pub async fn attach(
    store: &dyn Store,
    view: &AnchorView,
    subject: Subject,
    v: &mut Verification,
) -> anyhow::Result<()> {
    let enabled = view.status.snapshot().enabled;
    let (status, tx, detail) = match inclusion(store, &view.paths, subject).await {
        Ok(None) => (AnchorState::Pending, None, pending_doc(enabled)),
        Ok(Some(inc)) => {
            check(&mut v.checks, "anchor_inclusion", inclusion_check(&inc));
            let b = &inc.batch;
            let tx = b.tx_hash.filter(|_| b.status == AnchorState::Confirmed);
            (
                b.status,
                tx,
                inclusion_doc(store, &inc, view, enabled).await?,
            )
        }
        // The database failing is not the data failing: 503, not a failed check.
        Err(e) if e.downcast_ref::<vrs_store::StoreError>().is_some() => return Err(e),
        Err(e) => {
            check(&mut v.checks, "anchor_inclusion", Err(format!("{e:#}")));
            (
                AnchorState::Pending,
                None,
                AnchorDoc::Pending(AnchorPending {
                    status: "pending".into(),
                    enabled,
                    message: None,
                    error: Some(format!("{e:#}")),
                }),
            )
        }
    };
    let tx = tx.as_ref().map(tx_hex);
    v.proof_mut().set_anchoring(Anchoring {
        anchor_tx: tx.clone(),
        legacy_tx: tx,
        anchor_chain: view.chain_name.clone(),
        anchor_chain_id: view.chain_id,
        anchor_status: status.as_str().to_owned(),
        anchor: detail,
    });
    v.seal();
    Ok(())
}

/// The anchor object of a record that is in no anchor batch yet.
pub fn pending_doc(enabled: bool) -> AnchorDoc {
    let message = if enabled {
        "not in an anchor batch yet (one is built every few resolved epochs)"
    } else {
        "anchoring is disabled on this service"
    };
    AnchorDoc::Pending(AnchorPending {
        status: "pending".into(),
        enabled,
        message: Some(message.into()),
        error: None,
    })
}

/// Whether the record's leaf folds up its audit path to the anchor batch's stored root.
pub fn inclusion_check(inc: &Inclusion) -> Result<String, String> {
    let b = &inc.batch;
    let leaf_hash = merkle::leaf_hash(&inc.leaf.bytes());
    if merkle::verify_inclusion(&leaf_hash, inc.index, inc.tree_size, &inc.path, &b.root) {
        Ok(format!(
            "leaf {} of {} is included under anchor batch {}'s root {}",
            inc.index,
            inc.tree_size,
            b.number,
            hex::encode(b.root)
        ))
    } else {
        Err(format!(
            "the record's leaf does not lead to anchor batch {}'s stored root {} (the stored \
             records give {})",
            b.number,
            hex::encode(b.root),
            hex::encode(inc.recomputed_root)
        ))
    }
}

/// The anchor object of a proof: the batch, the record's leaf and path, the calldata (version
/// 2, with the batch's entry in the operator's log, once the log holds it), and the
/// transaction (null until the batch is confirmed). Fails only when the store does.
pub async fn inclusion_doc(
    store: &dyn Store,
    inc: &Inclusion,
    view: &AnchorView,
    enabled: bool,
) -> anyhow::Result<AnchorDoc> {
    let b = &inc.batch;
    let tx = b.tx_hash.filter(|_| b.status == AnchorState::Confirmed);
    let calldata = view.calldata(store, b).await?;
    let log = match &view.log {
        Some(log) => log.anchor_log(b.number).await?,
        None => None,
    };
    Ok(AnchorDoc::Included(Box::new(AnchorIncluded {
        status: b.status.as_str().to_owned(),
        enabled,
        batch: b.number,
        epochs: EpochSpan {
            first: b.first_epoch,
            last: b.last_epoch,
        },
        pool_batches: BatchSpan {
            from: b.pool_from,
            to: b.pool_to,
        },
        notary_batches: BatchSpan {
            from: b.notary_from,
            to: b.notary_to,
        },
        leaf: hex::encode(inc.leaf.bytes()),
        leaf_hash: hex::encode(merkle::leaf_hash(&inc.leaf.bytes())),
        leaf_index: inc.index,
        tree_size: inc.tree_size,
        audit_path: inc.path.iter().map(hex::encode).collect(),
        root: hex::encode(b.root),
        calldata: format!("0x{}", hex::encode(calldata.bytes())),
        log,
        tx: tx.as_ref().map(tx_hex),
        block: b.block_number.filter(|_| tx.is_some()),
        chain: view.chain_name.clone(),
        chain_id: view.chain_id,
    })))
}
