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
//! Kernels ([`Kernel`]), chosen at run time, fastest first: `avx512ifma` (16 values in two
//! zmm registers per digit, radix 2^52, ifma.rs, with its own portable twin for the tests),
//! `avx512ifma-256` (the same schedule on 8 values in ymm registers, for CPUs that run a
//! 512-bit operation as two halves; `batch::fastest` times both), `avx2` (ymm registers) and
//! `portable`, the AVX2 algorithm on `[u64; 4]` in plain Rust, for CPUs without AVX2 and for
//! the tests, which check every kernel the CPU has against the oracle and each other.
//!
//! What the AVX2 kernel is worth, on Zen 2: a core issues 2 `vpmuludq` a cycle, but with the
//! `vpaddq` each product needs it sustains about 1.5 multiply-and-add pairs a cycle (0.63 to
//! 0.68 cycles per pair in microbenchmarks). A 2048-bit squaring of 4 lanes is about 8,300
//! pairs (74² for the reduction, 74·75/2 for the square): some 5,300 cycles at that floor
//! for 4 values, against about 2,330 for one on the scalar mulx kernel (1,552 `mulx`
//! products). So 1.75× at best; about 1.5× measured. The IFMA kernels' figures, per CPU,
//! are in docs/PERFORMANCE.md.

#[cfg(target_arch = "x86_64")]
mod ifma;
mod kernel;
mod lanes;
mod monty;

use super::radix::Params;
use super::workers::Workers;
use super::{check_below, check_pow_inputs, BatchBackend};
use crate::error::{Error, Result};
use crate::group::Modulus;
use kernel::LANES;
use lanes::Portable;
use num_bigint::BigUint;
use rayon::prelude::*;

/// Which lane code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Plain Rust on `[u64; 4]`: any CPU.
    Portable,
    /// 4 lanes in a ymm register (x86-64 with AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// 16 lanes in two zmm registers in radix 2^52 (x86-64 with AVX-512 IFMA; ifma.rs).
    #[cfg(target_arch = "x86_64")]
    Avx512Ifma,
    /// The same schedule on 8 lanes in two ymm registers (AVX-512VL's 256-bit IFMA), for
    /// CPUs that split a 512-bit operation in two halves.
    #[cfg(target_arch = "x86_64")]
    Avx512Ifma256,
}

impl Kernel {
    /// Every kernel this build has, fastest first.
    pub fn all() -> Vec<Kernel> {
        vec![
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma256,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2,
            Kernel::Portable,
        ]
    }

    /// The fastest kernel this CPU can run: the first of [`Kernel::all`] it supports, except
    /// that where it has IFMA the two vector widths are timed against each other once per
    /// process (about a millisecond), because which is faster depends on how the CPU runs
    /// 512-bit operations (docs/PERFORMANCE.md).
    pub fn detect() -> Self {
        static CHOSEN: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *CHOSEN.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            if Kernel::Avx512Ifma.is_supported() {
                return faster_ifma_width();
            }
            Self::all()
                .into_iter()
                .find(|k| k.is_supported())
                .unwrap_or(Kernel::Portable)
        })
    }

    /// The kernel named `name` (as in benchmark output).
    pub fn parse(name: &str) -> Result<Self> {
        Self::all()
            .into_iter()
            .find(|k| k.name() == name.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = Self::all().into_iter().map(Kernel::name).collect();
                Error::UnknownBackend(
                    format!("simd ({name})"),
                    format!("simd kernels are {}", names.join(", ")),
                )
            })
    }

    /// Whether this CPU can run the kernel.
    pub fn is_supported(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma | Kernel::Avx512Ifma256 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512vl")
                    && std::arch::is_x86_feature_detected!("avx512ifma")
            }
        }
    }

    /// The name in benchmark output.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma => "avx512ifma",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma256 => "avx512ifma-256",
        }
    }

    /// Values per chunk: one per lane.
    fn lanes(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma => <ifma::x86::Zmm2 as ifma::Lanes52>::LANES,
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma256 => <ifma::x86::Ymm2 as ifma::Lanes52>::LANES,
            _ => LANES,
        }
    }

    /// The modulus in this kernel's radix.
    fn prepare(self, modulus: &Modulus) -> Result<Prepared> {
        match self {
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx512Ifma | Kernel::Avx512Ifma256 => {
                Ok(Prepared::R52(ifma::params52(modulus)?))
            }
            _ => Ok(Prepared::R28(Params::new(modulus, "simd")?)),
        }
    }

    /// One chunk of at most [`Kernel::lanes`] values.
    fn square_chunk(self, p: &Prepared, vals: &mut [BigUint], k: u64) {
        match (p, self) {
            // SAFETY: a Simd holds Kernel::Avx2 only where is_supported() held (with_kernel
            // checks), so the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R28(p), Kernel::Avx2) => unsafe { kernel::avx2::square_chunk(p, vals, k) },
            (Prepared::R28(p), _) => kernel::square_chunk::<Portable>(p, vals, k),
            // SAFETY: only the two IFMA kernels prepare radix 2^52, and a Simd holds one only
            // where is_supported() held, so the CPU has AVX-512F, VL and IFMA.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R52(p), Kernel::Avx512Ifma256) => unsafe {
                ifma::x86::square_ymm2(p, vals, k)
            },
            // SAFETY: as just above.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R52(p), _) => unsafe { ifma::x86::square_zmm2(p, vals, k) },
        }
    }

    /// One chunk of at most [`Kernel::lanes`] bases with their exponents.
    fn pow_chunk(self, p: &Prepared, b: &[BigUint], e: &[BigUint], out: &mut [BigUint]) {
        match (p, self) {
            // SAFETY: as in square_chunk.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R28(p), Kernel::Avx2) => unsafe { kernel::avx2::pow_chunk(p, b, e, out) },
            (Prepared::R28(p), _) => kernel::pow_chunk::<Portable>(p, b, e, out),
            // SAFETY: as in square_chunk.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R52(p), Kernel::Avx512Ifma256) => unsafe {
                ifma::x86::pow_ymm2(p, b, e, out)
            },
            // SAFETY: as in square_chunk.
            #[cfg(target_arch = "x86_64")]
            (Prepared::R52(p), _) => unsafe { ifma::x86::pow_zmm2(p, b, e, out) },
        }
    }
}

/// Of the two IFMA kernels, the one that squares 16 RSA-2048 values faster on this thread:
/// the best of 5 rounds of each, interleaved, so that the time a core takes to power up its
/// 512-bit units does not count against the kernel timed first (a few milliseconds in all;
/// zmm on a tie). Call only where `Kernel::Avx512Ifma.is_supported()`, which both kernels
/// share: `square_chunk` relies on it.
#[cfg(target_arch = "x86_64")]
fn faster_ifma_width() -> Kernel {
    let modulus = Modulus::rsa2048();
    let kernels = [Kernel::Avx512Ifma, Kernel::Avx512Ifma256];
    let (Ok(p), xs) = (
        Kernel::Avx512Ifma.prepare(&modulus),
        (0..16u64)
            .map(|i| modulus.canonical(&(BigUint::from(i + 2) % modulus.n())))
            .collect::<Vec<BigUint>>(),
    ) else {
        return Kernel::Avx512Ifma;
    };
    let mut best = [f64::INFINITY; 2];
    for _ in 0..5 {
        for (kernel, best) in kernels.iter().zip(best.iter_mut()) {
            let mut ys = xs.clone();
            let start = std::time::Instant::now();
            for chunk in ys.chunks_mut(kernel.lanes()) {
                kernel.square_chunk(&p, chunk, 128);
            }
            *best = best.min(start.elapsed().as_secs_f64());
        }
    }
    if best[1] < best[0] {
        Kernel::Avx512Ifma256
    } else {
        Kernel::Avx512Ifma
    }
}

/// A modulus prepared for a kernel: radix 2^28 (avx2, portable) or 2^52 (avx512ifma).
enum Prepared {
    R28(Params),
    #[cfg(target_arch = "x86_64")]
    R52(ifma::Params52),
}

/// The SIMD batch backend: a kernel and a rayon pool (rayon's global pool by default).
#[derive(Debug)]
pub struct Simd {
    kernel: Kernel,
    workers: Workers,
}

impl Simd {
    /// The fastest kernel this CPU runs, on rayon's global pool (all cores).
    pub fn new() -> Self {
        Self {
            kernel: Kernel::detect(),
            workers: Workers::global(),
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
        Ok(Self {
            kernel,
            workers: Workers::global(),
        })
    }

    /// The fastest kernel, on a pool of its own with `threads` threads.
    pub fn with_threads(threads: usize) -> Result<Self> {
        Self::new().on_threads(threads)
    }

    /// The same kernel on a pool of its own with `threads` threads.
    pub fn on_threads(self, threads: usize) -> Result<Self> {
        Ok(Self {
            kernel: self.kernel,
            workers: Workers::with_threads("simd", threads)?,
        })
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// The kernel's name, for benchmark output.
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name()
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
        let threads = self.workers.threads();
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
        let kernel = self.kernel;
        let p = kernel.prepare(modulus)?;
        self.workers.run(|| {
            xs.par_chunks_mut(kernel.lanes())
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
        let kernel = self.kernel;
        let p = kernel.prepare(modulus)?;
        let lanes = kernel.lanes();
        let mut out = vec![BigUint::default(); bases.len()];
        self.workers.run(|| {
            out.par_chunks_mut(lanes)
                .zip(bases.par_chunks(lanes).zip(exps.par_chunks(lanes)))
                .for_each(|(o, (b, e))| kernel.pow_chunk(&p, b, e, o))
        });
        Ok(out)
    }
}
