//! The VDF runs on its own OS thread, never on the async runtime: one epoch's T sequential
//! squarings occupy a core for seconds. The proof that follows uses rayon's pool.

use super::EngineStatus;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use tokio::sync::oneshot;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::group::{Element, Modulus};
use vrs_engine::vdf::{self, EvalOptions, Output};

/// Replay checkpoints published per epoch (every ⌈T/16⌉ squarings).
pub const REPLAY_SEGMENTS: u64 = 16;

/// A computed epoch output and how long it took.
#[derive(Debug)]
pub struct Computed {
    pub output: Output,
    pub computation_ms: u64,
}

#[derive(Debug)]
struct Job {
    epoch: u64,
    x: Element,
    t: u64,
    reply: oneshot::Sender<Result<Computed, String>>,
}

/// Handle to the VDF thread.
#[derive(Debug, Clone)]
pub struct VdfThread {
    jobs: mpsc::Sender<Job>,
}

impl VdfThread {
    /// Starts the thread for `modulus`.
    pub fn spawn(modulus: Modulus, status: Arc<EngineStatus>) -> anyhow::Result<Self> {
        let fast = Fast::prepare(&modulus)?;
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("vdf".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    let result = run(&fast, &modulus, &status, &job);
                    status.computing_epoch.store(0, Ordering::Relaxed);
                    let _ = job.reply.send(result);
                }
            })?;
        Ok(Self { jobs })
    }

    /// Computes y = x^(2^t) and its proof for `epoch`.
    pub async fn compute(&self, epoch: u64, x: Element, t: u64) -> Result<Computed, String> {
        let (reply, rx) = oneshot::channel();
        self.jobs
            .send(Job { epoch, x, t, reply })
            .map_err(|_| "the VDF thread has stopped".to_owned())?;
        rx.await
            .map_err(|_| "the VDF thread has stopped".to_owned())?
    }
}

fn run(
    fast: &Fast,
    modulus: &Modulus,
    status: &EngineStatus,
    job: &Job,
) -> Result<Computed, String> {
    status.computing_epoch.store(job.epoch, Ordering::Relaxed);
    status.squarings_done.store(0, Ordering::Relaxed);
    status.squarings_total.store(job.t, Ordering::Relaxed);
    let start = Instant::now();
    let opts = EvalOptions {
        replay_every: Some(job.t.div_ceil(REPLAY_SEGMENTS).max(1)),
        ..EvalOptions::default()
    };
    let trace = vdf::evaluate(fast, modulus, &job.x, job.t, &opts, &mut |done| {
        status.squarings_done.store(done, Ordering::Relaxed);
    })
    .map_err(|e| format!("epoch {}: evaluation failed: {e}", job.epoch))?;
    let evaluated = start.elapsed();
    let output = trace.prove();
    let m = crate::metrics::global();
    m.proof_seconds
        .observe((start.elapsed() - evaluated).as_secs_f64());
    if evaluated.as_secs_f64() > 0.0 {
        m.squarings_per_second
            .set(job.t as f64 / evaluated.as_secs_f64());
    }
    Ok(Computed {
        output,
        computation_ms: start.elapsed().as_millis() as u64,
    })
}
