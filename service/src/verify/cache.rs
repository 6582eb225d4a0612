//! What verification keeps between requests, in this process's memory only. Every entry is
//! computed from records the protocol never changes once written (docs/PROTOCOL.md §13,
//! "Verification at read time"), so none needs invalidating:
//! - an epoch's bets tree, once its input committed the bets root;
//! - the epoch-wide checks of a resolved epoch (chain, input, Wesolowski proof);
//! - a game's whole report before its anchor members, once every record it reads is final and
//!   every check passed. The anchor members are read on each request: they are what changes
//!   (pending → in a batch → confirmed), and reading the batch row is the invalidation, on
//!   every replica alike.
//!
//! A store edited under a running process is therefore seen only after a restart.

use crate::bounded::Bounded;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use vrs_engine::merkle::Tree;
use vrs_protocol::report::Verification;

use super::epoch::EpochFacts;
use crate::anchor::batch::Subject;

/// Epoch trees and epoch checks kept: a verifier walking recent games touches a few epochs.
pub const EPOCHS_KEPT: usize = 64;
/// Game reports kept (a report is a few kilobytes).
pub const REPORTS_KEPT: usize = 8192;

type Shared<K, V> = Mutex<Bounded<K, Arc<V>>>;
/// Computed once however many requests ask at the same moment: the first computes, the others
/// wait for its result (a failed computation is not kept; the next request tries again).
type Once<V> = tokio::sync::OnceCell<Arc<V>>;

/// A game's report before its anchor members, and what they are read for.
#[derive(Debug)]
pub struct KeptReport {
    pub subject: Subject,
    pub report: Verification,
}

/// The verification cache of one process (one per service; see the module docs).
#[derive(Debug)]
pub struct VerifyCache {
    trees: Shared<u64, Once<Tree>>,
    epochs: Shared<u64, Once<EpochFacts>>,
    reports: Shared<String, KeptReport>,
}

impl Default for VerifyCache {
    fn default() -> Self {
        Self::with_capacity(EPOCHS_KEPT, REPORTS_KEPT)
    }
}

fn get<K: Eq + Hash + Clone, V>(m: &Shared<K, V>, k: &K) -> Option<Arc<V>> {
    m.lock().unwrap_or_else(PoisonError::into_inner).get(k)
}

fn put<K: Eq + Hash + Clone, V>(m: &Shared<K, V>, k: K, v: Arc<V>) {
    m.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(k, v);
}

fn cell<K: Eq + Hash + Clone, V>(m: &Shared<K, Once<V>>, k: K) -> Arc<Once<V>> {
    let mut m = m.lock().unwrap_or_else(PoisonError::into_inner);
    match m.get(&k) {
        Some(c) => c,
        None => {
            let c = Arc::new(Once::new());
            m.insert(k, Arc::clone(&c));
            c
        }
    }
}

impl VerifyCache {
    /// A cache of `reports` reports and, unless that is zero, [`EPOCHS_KEPT`] epochs.
    pub fn for_reports(reports: usize) -> Self {
        let epochs = if reports == 0 { 0 } else { EPOCHS_KEPT };
        Self::with_capacity(epochs, reports)
    }

    /// A cache of `epochs` epoch trees and epoch checks and `reports` reports; zero keeps
    /// nothing (every request recomputes everything).
    pub fn with_capacity(epochs: usize, reports: usize) -> Self {
        Self {
            trees: Mutex::new(Bounded::new(epochs)),
            epochs: Mutex::new(Bounded::new(epochs)),
            reports: Mutex::new(Bounded::new(reports)),
        }
    }

    /// The cell of `epoch`'s bets tree, created empty on first use.
    pub(super) fn tree(&self, epoch: u64) -> Arc<Once<Tree>> {
        cell(&self.trees, epoch)
    }

    /// The cell of `epoch`'s epoch-wide checks, created empty on first use.
    pub(super) fn epoch(&self, epoch: u64) -> Arc<Once<EpochFacts>> {
        cell(&self.epochs, epoch)
    }

    pub(super) fn report(&self, game_id: &str) -> Option<Arc<KeptReport>> {
        get(&self.reports, &game_id.to_owned())
    }

    pub(super) fn keep_report(&self, game_id: &str, kept: KeptReport) {
        put(&self.reports, game_id.to_owned(), Arc::new(kept));
    }
}
