//! Batch backends: many independent values squared at once, and many proofs verified at once.
//!
//! One VDF chain is sequential; many independent chains are not. The pool generator squares
//! thousands of independent seeds and an audit verifies thousands of proofs, so both go
//! through a [`BatchBackend`]: for one modulus and n residues, apply k squarings to each, or
//! raise each of n bases to its own exponent (the two exponentiations of a Wesolowski check).
//!
//! Backends (names as on the command line):
//! - `cpu`: rayon over the values, each on the scalar `fast` backend (the baseline);
//! - `simd`: several values per core in SIMD lanes, chosen at run time, with a scalar twin;
//! - `gpu`: wgpu compute shaders (feature `gpu`); no adapter is a normal outcome.
//!
//! Every backend must equal [`reference_square_many`] and [`reference_pow_many`] bit for bit.

pub mod cpu;
#[cfg(feature = "gpu")]
pub mod gpu;
mod radix;
pub mod simd;
pub mod verify;
mod workers;

use crate::error::{Error, Result};
use crate::group::Modulus;
use num_bigint::BigUint;

pub use verify::{verify_many, VerifyItem};

/// A backend that works on many independent residues of one modulus at once.
pub trait BatchBackend: Send + Sync {
    /// The name used on the command line and in benchmark tables.
    fn name(&self) -> &'static str;

    /// What runs underneath (kernel, threads, adapter), for benchmark output and logs.
    fn describe(&self) -> String {
        self.name().to_owned()
    }

    /// Whether this backend runs on the hardware its name promises (a GPU, SIMD lanes), as
    /// opposed to a software stand-in (a CPU Vulkan driver, the scalar twin of a SIMD kernel).
    /// Automatic selection only considers these.
    fn is_hardware(&self) -> bool {
        true
    }

    /// xs[i] ← xs[i]^(2^k) mod N for every i: k sequential squarings of each value, the values
    /// independent of each other. Every xs[i] must be below N.
    fn square_many(&self, modulus: &Modulus, xs: &mut [BigUint], k: u64) -> Result<()>;

    /// bases[i]^exps[i] mod N for every i (bases below N; any exponents, of any lengths).
    fn pow_many(
        &self,
        modulus: &Modulus,
        bases: &[BigUint],
        exps: &[BigUint],
    ) -> Result<Vec<BigUint>>;
}

impl std::fmt::Debug for dyn BatchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BatchBackend({})", self.name())
    }
}

/// The batch backends a build knows, by command-line name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BatchKind {
    Cpu,
    Simd,
    Gpu,
}

impl BatchKind {
    pub const ALL: [BatchKind; 3] = [BatchKind::Cpu, BatchKind::Simd, BatchKind::Gpu];

    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Cpu => "cpu",
            BatchKind::Simd => "simd",
            BatchKind::Gpu => "gpu",
        }
    }

    /// Parses a command-line name.
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name.trim())
            .ok_or_else(|| {
                Error::UnknownBackend(
                    name.to_owned(),
                    format!(
                        "batch backends are {}",
                        Self::ALL.map(BatchKind::name).join(", ")
                    ),
                )
            })
    }
}

/// Opens a backend of this build on this machine, on all cores. `Err` says why it cannot
/// run here (not built in, no GPU adapter).
pub fn open(kind: BatchKind) -> Result<Box<dyn BatchBackend>> {
    open_with(kind, 0)
}

/// [`open`] with `threads` CPU threads (0: all cores; the GPU backend ignores it).
pub fn open_with(kind: BatchKind, threads: usize) -> Result<Box<dyn BatchBackend>> {
    match kind {
        BatchKind::Cpu if threads == 0 => Ok(Box::new(cpu::Cpu::new())),
        BatchKind::Cpu => Ok(Box::new(cpu::Cpu::with_threads(threads)?)),
        BatchKind::Simd if threads == 0 => Ok(Box::new(simd::Simd::new())),
        BatchKind::Simd => Ok(Box::new(simd::Simd::with_threads(threads)?)),
        #[cfg(feature = "gpu")]
        BatchKind::Gpu => Ok(Box::new(gpu::Gpu::new()?)),
        #[cfg(not(feature = "gpu"))]
        BatchKind::Gpu => Err(Error::Unavailable(
            "gpu".into(),
            "this build has no GPU support (build with the cargo feature `gpu`)".into(),
        )),
    }
}

/// The fastest backend that runs here, and a note for each faster kind that could not be
/// used (the caller logs them). A GPU adapter that is a real GPU wins; otherwise `simd` and
/// `cpu` are timed on a short batch of `modulus` and the faster is kept, so a software GPU
/// driver or a SIMD kernel slower than the scalar one is never picked.
pub fn fastest(modulus: &Modulus, threads: usize) -> (Box<dyn BatchBackend>, Vec<String>) {
    let mut notes = Vec::new();
    let mut candidates: Vec<Box<dyn BatchBackend>> = Vec::new();
    for kind in [BatchKind::Gpu, BatchKind::Simd] {
        match open_with(kind, threads) {
            Ok(b) if b.is_hardware() => candidates.push(b),
            Ok(b) => notes.push(format!(
                "{}: {} is not faster hardware; not used",
                kind.name(),
                b.describe()
            )),
            Err(e) => notes.push(e.to_string()),
        }
    }
    if let Some(pos) = candidates.iter().position(|b| b.name() == "gpu") {
        return (candidates.swap_remove(pos), notes);
    }
    let cpu: Box<dyn BatchBackend> = match open_with(BatchKind::Cpu, threads) {
        Ok(b) => b,
        Err(e) => {
            notes.push(e.to_string());
            Box::new(cpu::Cpu::new())
        }
    };
    candidates.push(cpu);
    let mut best: Option<(f64, Box<dyn BatchBackend>)> = None;
    for b in candidates {
        let rate = probe_rate(b.as_ref(), modulus);
        if best.as_ref().is_none_or(|(r, _)| rate > *r) {
            best = Some((rate, b));
        }
    }
    match best {
        Some((_, b)) => (b, notes),
        None => (Box::new(cpu::Cpu::new()), notes),
    }
}

/// Squarings per second on a short batch, the best of 3 calls (a few milliseconds each);
/// 0 if it fails.
fn probe_rate(b: &dyn BatchBackend, modulus: &Modulus) -> f64 {
    let n = 4 * rayon::current_num_threads().max(1) * 16;
    let xs: Vec<BigUint> = (0..n as u64)
        .map(|i| modulus.canonical(&(BigUint::from(i + 2) % modulus.n())))
        .collect();
    let k = 64;
    let mut best = 0.0f64;
    for _ in 0..3 {
        let mut ys = xs.clone();
        let start = std::time::Instant::now();
        if b.square_many(modulus, &mut ys, k).is_err() {
            return 0.0;
        }
        best = best.max((n as f64 * k as f64) / start.elapsed().as_secs_f64().max(1e-9));
    }
    best
}

/// Checks the inputs every backend shares: values below N.
pub(crate) fn check_below(modulus: &Modulus, what: &'static str, xs: &[BigUint]) -> Result<()> {
    match xs.iter().position(|x| x >= modulus.n()) {
        None => Ok(()),
        Some(i) => Err(Error::NotCanonical {
            what,
            reason: if i == 0 {
                "a value is not below the modulus"
            } else {
                "a value of the batch is not below the modulus"
            },
        }),
    }
}

/// Checks the inputs of [`BatchBackend::pow_many`]: bases below N, one exponent per base.
pub(crate) fn check_pow_inputs(
    modulus: &Modulus,
    bases: &[BigUint],
    exps: &[BigUint],
) -> Result<()> {
    check_below(modulus, "batch base", bases)?;
    if bases.len() != exps.len() {
        return Err(Error::WrongLength {
            what: "exponents",
            expected: bases.len(),
            got: exps.len(),
        });
    }
    Ok(())
}

/// The oracle: num-bigint, one value at a time.
pub fn reference_square_many(modulus: &Modulus, xs: &[BigUint], k: u64) -> Vec<BigUint> {
    let n = modulus.n();
    xs.iter()
        .map(|x| {
            let mut v = x % n;
            for _ in 0..k {
                v = (&v * &v) % n;
            }
            v
        })
        .collect()
}

/// The oracle for [`BatchBackend::pow_many`].
pub fn reference_pow_many(modulus: &Modulus, bases: &[BigUint], exps: &[BigUint]) -> Vec<BigUint> {
    bases
        .iter()
        .zip(exps)
        .map(|(b, e)| b.modpow(e, modulus.n()))
        .collect()
}
