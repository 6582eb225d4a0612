//! `simd`: several independent values per core, one per SIMD lane.
//!
//! Values go 4 to a chunk, one per 64-bit lane; limb j of the 4 values is one vector, so a
//! Montgomery product of the 4 values is the textbook one with every multiplication a
//! `vpmuludq` (4 products of 32-bit halves). Limbs are 28 bits and the product columns are
//! summed without carries (radix.rs: why that is safe, and the bound that rules out 29);
//! the tiling, the squaring fused into the reduction and the hiding of the q chain are in
//! monty.rs. Rayon runs the chunks on the cores; the last chunk of a batch pads its empty
//! lanes with zeros.
//!
//! Kernels ([`Kernel`]), chosen at run time: `avx2` (ymm registers) and `portable`, the same
//! algorithm on `[u64; 4]` in plain Rust, for CPUs without AVX2 and for the tests, which
//! check both against the oracle and each other. There is no AVX-512 IFMA kernel: the
//! machine this was built on has no AVX-512, so it could only have been compiled, never
//! run, and a wrong kernel would be picked first on exactly the machines that have IFMA.
//!
//! What it is worth, on Zen 2: a core issues 2 `vpmuludq` a cycle, but with the `vpaddq`
//! each product needs it sustains about 1.5 multiply-and-add pairs a cycle (0.63 to 0.68
//! cycles per pair in microbenchmarks). A 2048-bit squaring of 4 lanes is about 8,300
//! pairs (74² for the reduction, 74·75/2 for the square): some 5,300 cycles at that floor
//! for 4 values, against about 2,330 for one on the scalar `fast` kernel (1,552 `mulx`
//! products). So 1.75× at best; about 1.5× measured. 2× would take 0.56 cycles a pair.

mod kernel;
mod lanes;
mod monty;
mod radix;

use super::{check_below, check_pow_inputs, BatchBackend};
use crate::error::{Error, Result};
use crate::group::Modulus;
use kernel::LANES;
use lanes::Portable;
use num_bigint::BigUint;
use radix::Params;
use rayon::prelude::*;

/// Which lane code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Plain Rust on `[u64; 4]`: any CPU.
    Portable,
    /// 4 lanes in a ymm register (x86-64 with AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Kernel {
    /// Every kernel this build has, fastest first.
    pub fn all() -> Vec<Kernel> {
        vec![
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2,
            Kernel::Portable,
        ]
    }

    /// The fastest kernel this CPU can run.
    pub fn detect() -> Self {
        Self::all()
            .into_iter()
            .find(|k| k.is_supported())
            .unwrap_or(Kernel::Portable)
    }

    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
        }
    }

    /// The name in benchmark output.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
        }
    }

    /// One chunk of at most 4 values.
    fn square_chunk(self, p: &Params, vals: &mut [BigUint], k: u64) {
        match self {
            Kernel::Portable => kernel::square_chunk::<Portable>(p, vals, k),
            // SAFETY: a Simd holds Kernel::Avx2 only where is_supported() held (with_kernel
            // checks), so the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { kernel::avx2::square_chunk(p, vals, k) },
        }
    }

    /// One chunk of at most 4 bases with their exponents.
    fn pow_chunk(self, p: &Params, b: &[BigUint], e: &[BigUint], out: &mut [BigUint]) {
        match self {
            Kernel::Portable => kernel::pow_chunk::<Portable>(p, b, e, out),
            // SAFETY: as in square_chunk: Kernel::Avx2 implies AVX2.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { kernel::avx2::pow_chunk(p, b, e, out) },
        }
    }
}

/// The SIMD batch backend: a kernel and a rayon pool (rayon's global pool by default).
#[derive(Debug)]
pub struct Simd {
    kernel: Kernel,
    pool: Option<rayon::ThreadPool>,
}

impl Simd {
    /// The fastest kernel this CPU runs, on rayon's global pool (all cores).
    pub fn new() -> Self {
        Self {
            kernel: Kernel::detect(),
            pool: None,
        }
    }

    /// An explicit kernel (tests and benches compare them); refuses one this CPU lacks.
    pub fn with_kernel(kernel: Kernel) -> Result<Self> {
        if !kernel.is_supported() {
            return Err(Error::UnknownBackend(
                format!("simd ({})", kernel.name()),
                "this CPU lacks the instructions; use simd (portable)".into(),
            ));
        }
        Ok(Self { kernel, pool: None })
    }

    /// The fastest kernel, on a pool of its own with `threads` threads.
    pub fn with_threads(threads: usize) -> Result<Self> {
        Self::new().on_threads(threads)
    }

    /// The same kernel on a pool of its own with `threads` threads.
    pub fn on_threads(self, threads: usize) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("vrs-simd-{i}"))
            .build()
            .map_err(|e| Error::UnknownBackend("simd".into(), format!("thread pool: {e}")))?;
        Ok(Self {
            kernel: self.kernel,
            pool: Some(pool),
        })
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The kernel's name, for benchmark output.
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name()
    }

    fn run<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }
}

impl Default for Simd {
    fn default() -> Self {
        Self::new()
    }
}

impl BatchBackend for Simd {
    fn name(&self) -> &'static str {
        "simd"
    }

    fn describe(&self) -> String {
        let threads = self.run(rayon::current_num_threads);
        format!("simd ({}, {threads} threads)", self.kernel.name())
    }

    /// The portable twin is a stand-in, not SIMD hardware.
    fn is_hardware(&self) -> bool {
        self.kernel != Kernel::Portable
    }

    fn square_many(&self, modulus: &Modulus, xs: &mut [BigUint], k: u64) -> Result<()> {
        check_below(modulus, "batch value", xs)?;
        if k == 0 || xs.is_empty() {
            return Ok(());
        }
        let p = Params::new(modulus)?;
        let kernel = self.kernel;
        self.run(|| {
            xs.par_chunks_mut(LANES)
                .for_each(|chunk| kernel.square_chunk(&p, chunk, k))
        });
        Ok(())
    }

    fn pow_many(
        &self,
        modulus: &Modulus,
        bases: &[BigUint],
        exps: &[BigUint],
    ) -> Result<Vec<BigUint>> {
        check_pow_inputs(modulus, bases, exps)?;
        let p = Params::new(modulus)?;
        let kernel = self.kernel;
        let mut out = vec![BigUint::default(); bases.len()];
        self.run(|| {
            out.par_chunks_mut(LANES)
                .zip(bases.par_chunks(LANES).zip(exps.par_chunks(LANES)))
                .for_each(|(o, (b, e))| kernel.pow_chunk(&p, b, e, o))
        });
        Ok(out)
    }
}
