//! The entropy answer, cached. `GET /api/v1/entropy` is the most polled read, and its answer
//! changes only when an epoch resolves (a resolved epoch and its games never change), so it is
//! built from the store at most once per [`ENTROPY_TTL`] and served from memory in between, as
//! ready JSON bytes. When this process resolves an epoch the cache is bypassed at once; on a
//! replica that does not lead, a new epoch shows within the TTL, a fraction of an epoch.

use axum::body::Bytes;
use std::sync::RwLock;
use std::time::{Duration, Instant};

/// Longest time a cached answer is served without asking the store.
pub const ENTROPY_TTL: Duration = Duration::from_millis(250);

#[derive(Debug, Default)]
pub struct EntropyCache {
    current: RwLock<Option<Cached>>,
    /// One refresh at a time: the others wait for it instead of all asking the store.
    refresh: tokio::sync::Mutex<()>,
}

#[derive(Debug, Clone)]
struct Cached {
    epoch: u64,
    body: Bytes,
    checked: Instant,
    /// This process's count of resolved epochs when the answer was built.
    resolved_here: u64,
}

impl EntropyCache {
    /// The cached answer, if checked against the store within the TTL and no epoch has been
    /// resolved here since.
    pub fn fresh(&self, resolved_here: u64, now: Instant) -> Option<Bytes> {
        let guard = self.current.read().unwrap_or_else(|e| e.into_inner());
        guard
            .as_ref()
            .filter(|c| {
                c.resolved_here == resolved_here
                    && now.saturating_duration_since(c.checked) < ENTROPY_TTL
            })
            .map(|c| c.body.clone())
    }

    /// The cached answer if it is for `epoch` (the store's latest), marked checked now.
    pub fn confirm(&self, epoch: u64, resolved_here: u64, now: Instant) -> Option<Bytes> {
        let mut guard = self.current.write().unwrap_or_else(|e| e.into_inner());
        let c = guard.as_mut().filter(|c| c.epoch == epoch)?;
        c.checked = now;
        c.resolved_here = resolved_here;
        Some(c.body.clone())
    }

    pub fn store(&self, epoch: u64, body: Bytes, resolved_here: u64, now: Instant) {
        let mut guard = self.current.write().unwrap_or_else(|e| e.into_inner());
        *guard = Some(Cached {
            epoch,
            body,
            checked: now,
            resolved_here,
        });
    }

    /// Held while the answer is rebuilt from the store.
    pub async fn refreshing(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.refresh.lock().await
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_served_within_the_ttl_until_an_epoch_resolves_here() {
        let c = EntropyCache::default();
        let t = Instant::now();
        assert!(c.fresh(0, t).is_none());
        c.store(7, Bytes::from_static(b"seven"), 3, t);
        assert_eq!(
            c.fresh(3, t + ENTROPY_TTL / 2).as_deref(),
            Some(&b"seven"[..])
        );
        // Past the TTL the store is asked again...
        assert!(c.fresh(3, t + ENTROPY_TTL).is_none());
        // ...and the same epoch confirms the answer for another TTL.
        assert!(c.confirm(7, 3, t + ENTROPY_TTL).is_some());
        assert!(c.fresh(3, t + ENTROPY_TTL * 3 / 2).is_some());
        // A newer epoch does not confirm it.
        assert!(c.confirm(8, 3, t + ENTROPY_TTL).is_none());
        // An epoch resolved by this process bypasses the cache at once.
        assert!(c.fresh(4, t).is_none());
    }
}
