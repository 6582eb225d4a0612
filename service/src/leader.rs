//! The leader supervisor: a process takes the store's lease when it can, and while it holds it
//! runs the epoch loop's term and the other work only the leader does beside it (the pool
//! generator, the anchor loop, the notary sealer). Replicas that do not lead only accept and
//! serve; they ask for the lease again every `poll`.

use crate::anchor::Anchorer;
use crate::epoch::EpochLoop;
use crate::notary::sealer::Sealer;
use crate::pool::Generator;
use crate::tlog::{Declaration, OperatorLog};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What the leader runs beside the epoch loop; each is optional.
#[derive(Debug, Default)]
pub struct Duties {
    /// Keeps the instant-bet pool filled.
    pub generator: Option<Generator>,
    /// Anchors resolved epochs, pool batches and notary batches on chain.
    pub anchorer: Option<Anchorer>,
    /// Seals notary receipts into batches and recovers interrupted payments.
    pub sealer: Option<Sealer>,
    /// Keeps the witnessed log in step with the store and its witnesses cosigning.
    pub log: Option<LogDuty>,
}

/// The witnessed log's part of the leader's work (docs/PROTOCOL.md §21).
#[derive(Debug, Clone)]
pub struct LogDuty {
    pub log: Arc<OperatorLog>,
    pub declaration: Declaration,
    /// How often the log is synced with the store.
    pub every: Duration,
}

/// Runs `epochs` and `duties` whenever this process holds the store's lease, until `shutdown`
/// turns true. A leader whose lease is lost (its lock connection failed) stops at once and
/// becomes a candidate again.
pub async fn lead(
    epochs: EpochLoop,
    mut shutdown: watch::Receiver<bool>,
    poll: Duration,
    duties: Duties,
) {
    let Duties {
        mut generator,
        anchorer,
        sealer,
        log,
    } = duties;
    let status = epochs.status();
    loop {
        if *shutdown.borrow() {
            return;
        }
        let attempt = tokio::select! {
            r = epochs.store().try_lead() => r,
            _ = shutdown.changed() => return,
        };
        match attempt {
            Ok(Some(mut lease)) => {
                status.leader.store(true, Ordering::Relaxed);
                tracing::info!("this process now leads the epoch chain");
                let generate = async {
                    match generator.as_mut() {
                        Some(g) => g.run().await,
                        None => std::future::pending().await,
                    }
                };
                // Its own task, so that nothing in it (a panic in the RPC client) can stop
                // the epochs; aborted when this term ends.
                let anchor = async {
                    if let Some(mut a) = anchorer.clone() {
                        let task = tokio::spawn(async move { a.run().await });
                        let _abort = AbortOnDrop(task.abort_handle());
                        if let Err(e) = task.await {
                            tracing::error!(error = %e, "the anchor loop stopped; anchoring resumes when this process leads again");
                        }
                    }
                    std::future::pending::<()>().await
                };
                let seal = async {
                    if let Some(s) = sealer.clone() {
                        let task = tokio::spawn(async move { s.run().await });
                        let _abort = AbortOnDrop(task.abort_handle());
                        if let Err(e) = task.await {
                            tracing::error!(error = %e, "the notary sealer stopped; it resumes when this process leads again");
                        }
                    }
                    std::future::pending::<()>().await
                };
                // The log's sync and one pusher per witness, aborted when this term ends.
                let _log_tasks: Vec<AbortOnDrop> = match &log {
                    Some(d) => {
                        let mut tasks = vec![AbortOnDrop(
                            tokio::spawn(d.log.clone().run_sync(d.declaration.clone(), d.every))
                                .abort_handle(),
                        )];
                        for w in d.log.witnesses() {
                            tasks.push(AbortOnDrop(
                                tokio::spawn(d.log.clone().run_pusher(w.clone())).abort_handle(),
                            ));
                        }
                        tasks
                    }
                    None => Vec::new(),
                };
                tokio::select! {
                    _ = epochs.run_term(&mut shutdown) => return,
                    _ = generate => {}
                    _ = anchor => {}
                    _ = seal => {}
                    _ = lease.lost() => {
                        tracing::warn!("lost the epoch lease (its database connection failed); standing by");
                    }
                }
                status.leader.store(false, Ordering::Relaxed);
                if let Some(a) = anchorer.as_ref() {
                    a.stand_by();
                }
                // Its errors were the leader's; a replica reports none of its own.
                status.set_error(None);
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "leader election failed"),
        }
        tokio::select! {
            _ = tokio::time::sleep(poll) => {}
            _ = shutdown.changed() => return,
        }
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
