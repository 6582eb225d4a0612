//! Threads at a lower OS priority for the CPU work of answers a reader waits for: an epoch's
//! verification checks, a verification's JSON (a few kilobytes each). Done on the runtime's
//! workers, a flood of such reads held those workers and bets queued behind them; done here,
//! the scheduler gives the runtime, the store's writer and the VDF the CPU first, and reads
//! take what is left.

use anyhow::Context;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// How much lower than the rest of the process the read workers run (nice(2) steps).
pub const NICENESS: i32 = 10;

/// A few low-priority threads taking jobs in the order they come.
#[derive(Debug)]
pub struct ReadWorkers {
    jobs: Mutex<Sender<Job>>,
}

impl ReadWorkers {
    /// Starts `threads` workers (at least one).
    pub fn start(threads: usize) -> anyhow::Result<Self> {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads.max(1) {
            let rx = Arc::clone(&rx);
            std::thread::Builder::new()
                .name(format!("vrs-read-{i}"))
                .spawn(move || work(&rx))
                .context("starting a read worker thread")?;
        }
        Ok(Self {
            jobs: Mutex::new(tx),
        })
    }

    /// Runs `f` on a read worker and waits for its result.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> anyhow::Result<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f()); // the reader may have gone away: nothing to do then
        });
        self.jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .send(job)
            .ok()
            .context("the read workers have stopped")?;
        rx.await.context("a read worker dropped its job")
    }
}

fn work(jobs: &Mutex<Receiver<Job>>) {
    lower_priority();
    loop {
        // The lock is held only while waiting for the next job, never while running one.
        let next = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match next {
            Ok(job) => job(),
            Err(_) => return, // every sender is gone: the service is stopping
        }
    }
}

/// Lowers this thread's scheduling priority by [`NICENESS`]; where that fails (or off Linux)
/// the thread runs at the process's priority, which is only less fair to writes.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid and setpriority only read their arguments; on Linux, PRIO_PROCESS
        // with a thread id sets that thread's nice value alone.
        let failed = unsafe {
            let tid = libc::gettid();
            libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, NICENESS) != 0
        };
        if failed {
            tracing::debug!("could not lower the read worker's priority");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_on_a_lower_priority_thread_and_return_their_results() {
        let workers = ReadWorkers::start(2).expect("workers start");
        let (name, nice) = workers
            .run(|| {
                let name = std::thread::current().name().map(str::to_owned);
                // SAFETY: getpriority reads the calling thread's nice value.
                let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
                (name, nice)
            })
            .await
            .expect("the job runs");
        assert!(name.expect("a named thread").starts_with("vrs-read-"));
        #[cfg(target_os = "linux")]
        assert!(nice >= NICENESS, "nice {nice}");
        let sum: u64 = workers.run(|| (1..=10).sum()).await.expect("runs");
        assert_eq!(sum, 55);
    }
}
