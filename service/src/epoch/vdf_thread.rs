//! Each epoch's VDF runs on an OS thread of its own, never on the async runtime: one epoch's T
//! sequential squarings occupy a core for seconds, and with a security margin above 2 several
//! epochs' VDFs run side by side (docs/PROTOCOL.md §10). A job reports to the epoch loop three
//! times: at its gate, one squaring before y exists (the loop fixes the next epoch's games
//! there and only then lets it go on), once y exists (the loop can start the epochs whose input
//! takes it), and when its proof is done.

use super::LoopStatus;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Instant;
use tokio::sync::mpsc::UnboundedSender;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::classgroup::{epoch as cg, FastFormSquarer};
use vrs_engine::vdf::{self, EvalOptions, CHALLENGE_BYTES};
use vrs_protocol::epoch_group::Group;

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

/// What a job tells the epoch loop.
#[derive(Debug)]
pub enum Event {
    /// One squaring before y: the job waits until `release` is sent to (or dropped: the job
    /// is abandoned).
    Gate {
        epoch: u64,
        release: mpsc::SyncSender<()>,
    },
    /// y exists (as stored), with the rate the squarings ran at (their time to the gate).
    Evaluated {
        epoch: u64,
        y: Vec<u8>,
        squarings_per_second: f64,
    },
    /// The proof is done (or the job failed).
    Finished {
        epoch: u64,
        result: Result<Computed, String>,
    },
}

/// Starts `job` on a thread of its own.
pub fn spawn(
    group: &Group,
    job: Job,
    events: UnboundedSender<Event>,
    status: Arc<LoopStatus>,
) -> anyhow::Result<()> {
    let group = group.clone();
    std::thread::Builder::new()
        .name(format!("vdf-{}", job.epoch))
        .spawn(move || {
            let epoch = job.epoch;
            let result = run(&group, &status, &job, &events);
            if status.computing_epoch.load(Ordering::Relaxed) == epoch {
                status.computing_epoch.store(0, Ordering::Relaxed);
            }
            // A loop that has stopped (shutdown, lost lease) no longer listens.
            let _ = events.send(Event::Finished { epoch, result });
        })?;
    Ok(())
}

/// The job's side of the gate: before the last squaring, ask the loop and wait.
struct Gate<'a> {
    epoch: u64,
    events: &'a UnboundedSender<Event>,
    start: Instant,
    /// Squarings per second up to the gate (its wait excluded).
    rate: Option<f64>,
    abandoned: bool,
}

impl Gate<'_> {
    fn pass(&mut self, done: u64) {
        if self.rate.is_some() {
            return;
        }
        let elapsed = self.start.elapsed().as_secs_f64();
        self.rate = Some(if elapsed > 0.0 {
            done as f64 / elapsed
        } else {
            0.0
        });
        let (release, wait) = mpsc::sync_channel(1);
        let asked = self.events.send(Event::Gate {
            epoch: self.epoch,
            release,
        });
        self.abandoned = asked.is_err() || wait.recv().is_err();
    }
}

fn run(
    group: &Group,
    status: &LoopStatus,
    job: &Job,
    events: &UnboundedSender<Event>,
) -> Result<Computed, String> {
    status.computing_epoch.store(job.epoch, Ordering::Relaxed);
    status.squarings_done.store(0, Ordering::Relaxed);
    status.squarings_total.store(job.t, Ordering::Relaxed);
    let start = Instant::now();
    let replay_every = job.t.div_ceil(REPLAY_SEGMENTS).max(1);
    let mut gate = Gate {
        epoch: job.epoch,
        events,
        start,
        rate: None,
        abandoned: false,
    };
    if job.t == 1 {
        gate.pass(0);
    }
    // The class group's prover reports the end of its squarings through `progress` (done = T):
    // that moment splits evaluation from proof for the metrics.
    let mut evaluated = None;
    let mut progress = |done: u64| {
        status.squarings_done.store(done, Ordering::Relaxed);
        if done + 1 == job.t {
            gate.pass(done);
        }
        if done == job.t {
            evaluated = Some(start.elapsed());
        }
    };
    let fail = |e: vrs_engine::Error| format!("epoch {}: evaluation failed: {e}", job.epoch);
    let abandoned = || format!("epoch {}: abandoned by the epoch loop", job.epoch);
    let mut computed = match group {
        Group::Rsa(modulus) => {
            let fast = Fast::prepare(modulus).map_err(fail)?;
            let x = modulus.decode("x", &job.x).map_err(fail)?;
            let opts = EvalOptions {
                replay_every: Some(replay_every),
                ..EvalOptions::default()
            };
            let trace =
                vdf::evaluate(&fast, modulus, &x, job.t, &opts, &mut progress).map_err(fail)?;
            if gate.abandoned {
                return Err(abandoned());
            }
            let y = modulus.encode(&trace.y());
            let _ = events.send(Event::Evaluated {
                epoch: job.epoch,
                y,
                squarings_per_second: gate.rate.unwrap_or(0.0),
            });
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
        Group::Class { bits } => {
            let d = cg::epoch_discriminant(&job.seed, *bits).map_err(fail)?;
            if job.x != cg::generator_bytes() {
                return Err(format!(
                    "epoch {}: a class-group epoch's stored x is not the generator",
                    job.epoch
                ));
            }
            let squarer = FastFormSquarer::new(&d).map_err(fail)?;
            // chiavdf's prover hands y out with its proof: both at once.
            let p = cg::evaluate(&squarer, &d, job.t, Some(replay_every), &mut progress)
                .map_err(fail)?;
            if gate.abandoned {
                return Err(abandoned());
            }
            let _ = events.send(Event::Evaluated {
                epoch: job.epoch,
                y: p.y.clone(),
                squarings_per_second: gate.rate.unwrap_or(0.0),
            });
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
    let m = vrs_observe::metrics::global();
    m.proof_seconds
        .observe(total.saturating_sub(evaluated).as_secs_f64());
    if let Some(rate) = gate.rate.filter(|r| *r > 0.0) {
        m.squarings_per_second.set(rate);
    }
    computed.computation_ms = total.as_millis() as u64;
    Ok(computed)
}
