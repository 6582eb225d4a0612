//! Where a CPU batch backend runs its rayon work: rayon's global thread pool, or one of its
//! own (named `Workers` so as not to be taken for the instant-bet pool).

use crate::error::{Error, Result};

/// Rayon's global pool (all cores) or a pool of `threads` threads named after the backend.
#[derive(Debug, Default)]
pub(crate) struct Workers(Option<rayon::ThreadPool>);

impl Workers {
    /// Rayon's global pool.
    pub fn global() -> Self {
        Self(None)
    }

    /// A pool of its own, its threads named `vrs-<backend>-<i>`.
    pub fn with_threads(backend: &str, threads: usize) -> Result<Self> {
        let prefix = format!("vrs-{backend}");
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(move |i| format!("{prefix}-{i}"))
            .build()
            .map(|p| Self(Some(p)))
            .map_err(|e| Error::UnknownBackend(backend.into(), format!("thread pool: {e}")))
    }

    /// Runs `f` on this pool (its parallel iterators use this pool's threads).
    pub fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.0 {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    /// Threads of this pool.
    pub fn threads(&self) -> usize {
        self.run(rayon::current_num_threads)
    }
}
