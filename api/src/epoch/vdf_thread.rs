//! The VDF runs on its own OS thread, never on the async runtime: one epoch's T sequential
//! squarings occupy a core for seconds. The proof that follows uses rayon's pool.

use super::EngineStatus;
use crate::group::Group;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use tokio::sync::oneshot;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::classgroup::{epoch as cg, FastFormSquarer};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions, CHALLENGE_BYTES};

/// Replay checkpoints published per epoch (every ⌈T/16⌉ squarings).
pub const REPLAY_SEGMENTS: u64 = 16;

/// A computed epoch output, encoded as stored, and how long it took.
#[derive(Debug)]
pub struct Computed {
    pub y: Vec<u8>,
    pub pi: Vec<u8>,
    pub l: Vec<u8>,
    pub checkpoints: Vec<(u64, Vec<u8>)>,
    pub computation_ms: u64,
}

/// What one epoch's VDF starts from.
#[derive(Debug)]
pub struct Job {
    pub epoch: u64,
    /// seed_e (a class group takes its discriminant from it).
    pub seed: [u8; 32],
    /// x_e as stored.
    pub x: Vec<u8>,
    pub t: u64,
}

type Reply = oneshot::Sender<Result<Computed, String>>;

/// Handle to the VDF thread.
#[derive(Debug, Clone)]
pub struct VdfThread {
    jobs: mpsc::Sender<(Job, Reply)>,
}

/// The group's evaluator, prepared once.
enum Evaluator {
    Rsa { fast: Box<Fast>, modulus: Modulus },
    Class { bits: u32 },
}

impl VdfThread {
    /// Starts the thread for `group`.
    pub fn spawn(group: Group, status: Arc<EngineStatus>) -> anyhow::Result<Self> {
        let evaluator = match group {
            Group::Rsa(modulus) => Evaluator::Rsa {
                fast: Box::new(Fast::prepare(&modulus)?),
                modulus,
            },
            Group::Class { bits } => Evaluator::Class { bits },
        };
        let (jobs, rx) = mpsc::channel::<(Job, Reply)>();
        std::thread::Builder::new()
            .name("vdf".into())
            .spawn(move || {
                while let Ok((job, reply)) = rx.recv() {
                    let result = run(&evaluator, &status, &job);
                    status.computing_epoch.store(0, Ordering::Relaxed);
                    let _ = reply.send(result);
                }
            })?;
        Ok(Self { jobs })
    }

    /// Computes y = x^(2^t) and its proof for `job.epoch`.
    pub async fn compute(&self, job: Job) -> Result<Computed, String> {
        let (reply, rx) = oneshot::channel();
        self.jobs
            .send((job, reply))
            .map_err(|_| "the VDF thread has stopped".to_owned())?;
        rx.await
            .map_err(|_| "the VDF thread has stopped".to_owned())?
    }
}

fn run(evaluator: &Evaluator, status: &EngineStatus, job: &Job) -> Result<Computed, String> {
    status.computing_epoch.store(job.epoch, Ordering::Relaxed);
    status.squarings_done.store(0, Ordering::Relaxed);
    status.squarings_total.store(job.t, Ordering::Relaxed);
    let start = Instant::now();
    let replay_every = job.t.div_ceil(REPLAY_SEGMENTS).max(1);
    let mut progress = |done| status.squarings_done.store(done, Ordering::Relaxed);
    // The class group's prover reports the end of its squarings through `progress` (done = T):
    // that moment splits evaluation from proof for the metrics.
    let mut evaluated = None;
    let fail = |e: vrs_engine::Error| format!("epoch {}: evaluation failed: {e}", job.epoch);
    let mut computed = match evaluator {
        Evaluator::Rsa { fast, modulus } => {
            let x = modulus.decode("x", &job.x).map_err(fail)?;
            let opts = EvalOptions {
                replay_every: Some(replay_every),
                ..EvalOptions::default()
            };
            let trace = vdf::evaluate(fast.as_ref(), modulus, &x, job.t, &opts, &mut progress)
                .map_err(fail)?;
            evaluated = Some(start.elapsed());
            let out = trace.prove();
            let l = out.proof.l.to_bytes_be();
            let mut l_fixed = vec![0u8; CHALLENGE_BYTES - l.len().min(CHALLENGE_BYTES)];
            l_fixed.extend_from_slice(&l);
            Computed {
                y: modulus.encode(&out.y),
                pi: modulus.encode(&out.proof.pi),
                l: l_fixed,
                checkpoints: out
                    .replay
                    .iter()
                    .map(|c| (c.iteration, modulus.encode(&c.value)))
                    .collect(),
                computation_ms: 0,
            }
        }
        Evaluator::Class { bits } => {
            let d = cg::epoch_discriminant(&job.seed, *bits).map_err(fail)?;
            if job.x != cg::generator_bytes() {
                return Err(format!(
                    "epoch {}: a class-group epoch's stored x is not the generator",
                    job.epoch
                ));
            }
            let squarer = FastFormSquarer::new(&d).map_err(fail)?;
            let mut progress = |done| {
                progress(done);
                if done == job.t {
                    evaluated = Some(start.elapsed());
                }
            };
            let p = cg::evaluate(&squarer, &d, job.t, Some(replay_every), &mut progress)
                .map_err(fail)?;
            Computed {
                y: p.y,
                pi: p.pi,
                l: p.l,
                checkpoints: p.checkpoints,
                computation_ms: 0,
            }
        }
    };
    let total = start.elapsed();
    let evaluated = evaluated.unwrap_or(total);
    let m = crate::metrics::global();
    m.proof_seconds.observe((total - evaluated).as_secs_f64());
    if evaluated.as_secs_f64() > 0.0 {
        m.squarings_per_second
            .set(job.t as f64 / evaluated.as_secs_f64());
    }
    computed.computation_ms = total.as_millis() as u64;
    Ok(computed)
}
