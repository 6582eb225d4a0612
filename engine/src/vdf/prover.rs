//! Evaluation with checkpoints, and the Wesolowski prover that works from them.
//!
//! π = x^q with q = ⌊2^T/ℓ⌋. Write q in base 2^k: q = Σ_i b_i 2^(k·i). With checkpoints
//! c_j = x^(2^(K·j)) every K = k·γ squarings, x^(2^(k·i)) = c_j^(2^(k·r)) for i = γ·j + r, so
//!
//!   π = Π_{r<γ} Z_r^(2^(k·r)),   Z_r = Π_j c_j^(b_{γj+r}) = Π_{d=1}^{2^k−1} (Π_{j: b_{γj+r}=d} c_j)^d.
//!
//! Each Z_r is a bucket sum: one multiplication per checkpoint into bucket d, then
//! Σ d·B_d by running suffix products (2·2^k multiplications). Checkpoint ranges are split
//! across rayon threads, each with its own buckets. Cost ≈ T/k + γ·2^(k+1)·chunks
//! multiplications and k·γ squarings for the Horner step, against T squarings for y: a few
//! percent (Wesolowski 2019, sect. 4.1; Boneh-Bünz-Fisch's survey, sect. 3).

use super::{hash_to_prime, Checkpoint, Output, Proof};
use crate::backend::fast::monty::MulMod;
use crate::backend::fast::{Fast, Limbs};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::group::{Element, Modulus};
use num_bigint::BigUint;
use rayon::prelude::*;

/// Squarings between progress reports.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Where the squaring loop stops next on its way to `t`: one squaring before the end (the
/// `progress` call at T − 1), then the end.
pub(crate) fn last_stop(done: u64, t: u64) -> u64 {
    if done + 1 < t {
        t - 1
    } else {
        t
    }
}

/// The prover's layout: digits of k bits, checkpoints every k·γ squarings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProverParams {
    pub k: u32,
    pub gamma: u32,
    /// Parallel chunks per Z_r.
    pub chunks: usize,
}

impl ProverParams {
    /// Squarings between prover checkpoints.
    pub fn stride(&self) -> u64 {
        u64::from(self.k) * u64::from(self.gamma)
    }

    /// The cheapest (k, γ) for T squarings on `threads` threads keeping at most
    /// `max_checkpoints` checkpoints (each 256 bytes).
    pub fn choose(t: u64, threads: usize, max_checkpoints: u64) -> Self {
        let threads = threads.max(1);
        let mut best = (
            f64::INFINITY,
            Self {
                k: 1,
                gamma: 1,
                chunks: 1,
            },
        );
        for gamma in 1u32..=256 {
            for k in 1u32..=20 {
                let stride = u64::from(k) * u64::from(gamma);
                if t / stride + 1 > max_checkpoints.max(1) {
                    continue;
                }
                let chunks = threads.div_ceil(gamma as usize).max(1);
                let tasks = gamma as f64 * chunks as f64;
                let mults = t as f64 / f64::from(k) + tasks * 2f64.powi(k as i32 + 1);
                // Tasks run `threads` at a time; the Horner step (k·γ squarings) is serial.
                let cost = mults / threads.min(tasks as usize).max(1) as f64 + stride as f64;
                if cost < best.0 {
                    best = (cost, Self { k, gamma, chunks });
                }
            }
        }
        best.1
    }
}

/// What [`evaluate`] keeps besides y.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// Publish x^(2^(m·replay_every)) for m ≥ 1 below T (for segment-by-segment replay).
    pub replay_every: Option<u64>,
    /// Threads the prover will use (0: rayon's current pool).
    pub threads: usize,
    /// Memory cap on prover checkpoints (256 bytes each).
    pub max_checkpoints: u64,
}

impl Default for EvalOptions {
    fn default() -> Self {
        // 2^21 checkpoints = 512 MiB.
        Self {
            replay_every: None,
            threads: 0,
            max_checkpoints: 1 << 21,
        }
    }
}

/// The result of evaluation: y and the checkpoints the prover needs.
#[derive(Debug)]
pub struct Trace {
    modulus: Modulus,
    fast: Fast,
    x: Element,
    t: u64,
    params: ProverParams,
    /// c_j = x^(2^(stride·j)), Montgomery form of `fast`, j = 0 … ⌊T/stride⌋.
    checkpoints: Vec<Limbs>,
    y: Limbs,
    replay: Vec<(u64, Limbs)>,
}

/// Runs y = x^(2^T) on `backend` (prepared for `modulus`), keeping checkpoints.
/// `progress` gets the number of squarings done, every 65536 squarings, at T − 1 and at the
/// end. The call at T − 1 comes before the last squaring, so a caller that must act before the
/// output exists (the service fixes the next epoch's bets there) can do so inside it.
pub fn evaluate<B: Backend>(
    backend: &B,
    modulus: &Modulus,
    x: &Element,
    t: u64,
    opts: &EvalOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Trace> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    if x.value() <= &BigUint::from(1u8) {
        return Err(Error::NotCanonical {
            what: "x",
            reason: "±1 has order 2 and is refused",
        });
    }
    let threads = if opts.threads == 0 {
        rayon::current_num_threads()
    } else {
        opts.threads
    };
    let params = ProverParams::choose(t, threads, opts.max_checkpoints);
    let stride = params.stride();
    let replay_every = opts.replay_every.filter(|&r| r > 0).unwrap_or(u64::MAX);
    let fast = Fast::prepare(modulus)?;

    let mut checkpoints = Vec::with_capacity(usize::try_from(t / stride + 1).unwrap_or(0));
    let mut replay = Vec::new();
    let mut cur = backend.load(x.value());
    checkpoints.push(backend.to_fast(&cur, &fast));
    let mut done = 0u64;
    while done < t {
        let next = [
            next_multiple(done, stride),
            next_multiple(done, replay_every),
            last_stop(done, t),
            done + PROGRESS_EVERY,
        ]
        .into_iter()
        .min()
        .unwrap_or(t);
        backend.square_n(&mut cur, next - done);
        done = next;
        if done.is_multiple_of(stride) {
            checkpoints.push(backend.to_fast(&cur, &fast));
        }
        if done.is_multiple_of(replay_every) && done < t {
            replay.push((done, backend.to_fast(&cur, &fast)));
        }
        if done.is_multiple_of(PROGRESS_EVERY) || done + 1 >= t {
            progress(done);
        }
    }
    let y = backend.to_fast(&cur, &fast);
    Ok(Trace {
        modulus: modulus.clone(),
        fast,
        x: x.clone(),
        t,
        params,
        checkpoints,
        y,
        replay,
    })
}

/// The smallest multiple of m above `done`, saturating.
fn next_multiple(done: u64, m: u64) -> u64 {
    (done / m).saturating_add(1).saturating_mul(m)
}

impl Trace {
    /// y = x^(2^T), canonical.
    pub fn y(&self) -> Element {
        self.element(&self.y)
    }

    /// The prover's layout for this run.
    pub fn params(&self) -> ProverParams {
        self.params
    }

    fn element(&self, m: &Limbs) -> Element {
        // A Montgomery residue of a nonzero canonical input is a unit: never 0.
        self.modulus
            .element(&self.fast.from_monty(m))
            .unwrap_or_else(|_| unreachable!("x^(2^i) of a unit is a unit"))
    }

    /// ℓ and π, from the checkpoints, on rayon's pool.
    pub fn prove(&self) -> Output {
        let y = self.y();
        let (l, _) = hash_to_prime(&self.modulus, &self.x, &y, self.t);
        let pi = self.element(&self.pi_for(&l));
        let replay = self
            .replay
            .iter()
            .map(|(iteration, v)| Checkpoint {
                iteration: *iteration,
                value: self.element(v),
            })
            .collect();
        Output {
            x: self.x.clone(),
            t: self.t,
            y,
            proof: Proof { l, pi },
            replay,
        }
    }

    /// π = x^⌊2^T/ℓ⌋ in Montgomery form (not canonicalised).
    fn pi_for(&self, l: &BigUint) -> Limbs {
        let q = (BigUint::from(1u8) << self.t) / l;
        let ProverParams { k, gamma, chunks } = self.params;
        let digits = Digits::new(&q, k);
        let fast = &self.fast;
        // Tasks (r, j range): the checkpoints j whose digit index γ·j + r exists.
        let tasks: Vec<(u64, u64, u64)> = (0..u64::from(gamma))
            .flat_map(|r| {
                let count = digits.len.saturating_sub(r).div_ceil(u64::from(gamma));
                let per = count.div_ceil(chunks as u64).max(1);
                (0..chunks as u64).filter_map(move |c| {
                    let lo = c * per;
                    (lo < count).then(|| (r, lo, (lo + per).min(count)))
                })
            })
            .collect();
        let partials: Vec<(u64, Option<Limbs>)> = tasks
            .par_iter()
            .map(|&(r, lo, hi)| {
                let digit_of = |j: u64| digits.get(u64::from(gamma) * j + r);
                (
                    r,
                    bucket_product(fast, k, &self.checkpoints, lo..hi, digit_of),
                )
            })
            .collect();
        // Horner over r: π = (…(Z_{γ−1})^(2^k) · Z_{γ−2})^(2^k) … · Z_0.
        let mut acc: Option<Limbs> = None;
        for r in (0..u64::from(gamma)).rev() {
            if let Some(a) = acc.as_mut() {
                for _ in 0..k {
                    *a = fast.sqr(a);
                }
            }
            for (_, z) in partials.iter().filter(|(pr, _)| *pr == r) {
                acc = mul_opt(fast, acc, z.as_ref());
            }
        }
        acc.unwrap_or_else(|| fast.one())
    }
}

/// Π_j c_j^(digit(j)) over `range` by buckets. None stands for the identity.
fn bucket_product(
    fast: &Fast,
    k: u32,
    checkpoints: &[Limbs],
    range: std::ops::Range<u64>,
    digit_of: impl Fn(u64) -> usize,
) -> Option<Limbs> {
    let mut buckets: Vec<Option<Limbs>> = vec![None; 1 << k];
    for j in range {
        let d = digit_of(j);
        if d != 0 {
            let c = &checkpoints[j as usize];
            buckets[d] = mul_opt(fast, buckets[d], Some(c));
        }
    }
    // Σ d·B_d: running suffix product S_d = Π_{e ≥ d} B_e, total = Π_d S_d.
    let mut running: Option<Limbs> = None;
    let mut total: Option<Limbs> = None;
    for b in buckets.iter().skip(1).rev() {
        running = mul_opt(fast, running, b.as_ref());
        total = mul_opt(fast, total, running.as_ref());
    }
    total
}

/// a·b where None is the identity.
fn mul_opt(fast: &Fast, a: Option<Limbs>, b: Option<&Limbs>) -> Option<Limbs> {
    match (a, b) {
        (Some(a), Some(b)) => Some(MulMod::mul(fast, &a, b)),
        (None, Some(b)) => Some(*b),
        (a, None) => a,
    }
}

/// The base-2^k digits of q, read from its 64-bit words.
struct Digits {
    words: Vec<u64>,
    k: u32,
    len: u64,
}

impl Digits {
    fn new(q: &BigUint, k: u32) -> Self {
        Self {
            words: q.to_u64_digits(),
            k,
            len: q.bits().div_ceil(u64::from(k)),
        }
    }

    fn get(&self, i: u64) -> usize {
        let bit = i * u64::from(self.k);
        let (w, s) = ((bit / 64) as usize, (bit % 64) as u32);
        let lo = self.words.get(w).copied().unwrap_or(0) >> s;
        let hi = if s == 0 {
            0
        } else {
            self.words.get(w + 1).copied().unwrap_or(0) << (64 - s)
        };
        ((lo | hi) & ((1u64 << self.k) - 1)) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_balance_memory_and_work() {
        let p = ProverParams::choose(6_000_000, 2, 1 << 21);
        assert!((10..=16).contains(&p.k), "{p:?}");
        assert_eq!(p.gamma, 1);
        let capped = ProverParams::choose(6_000_000, 2, 10_000);
        assert!(6_000_000 / capped.stride() < 10_000, "{capped:?}");
        assert_eq!(ProverParams::choose(1, 2, 1 << 21).stride(), 1);
    }

    #[test]
    fn digits_read_across_word_boundaries() {
        let q = (BigUint::from(0b1011u8) << 62u32) | BigUint::from(5u8);
        let d = Digits::new(&q, 3);
        let from_bits = |i: u64| (0..3).fold(0, |a, b| a | (usize::from(q.bit(3 * i + b)) << b));
        for i in 0..d.len + 2 {
            assert_eq!(d.get(i), from_bits(i), "digit {i}");
        }
    }
}
