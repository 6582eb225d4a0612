//! `cpu`: rayon over the values, each squared by the scalar `fast` backend (mulx/adx where
//! the CPU has it). The baseline the other batch backends are measured against.

use super::workers::Workers;
use super::{check_below, check_pow_inputs, BatchBackend};
use crate::backend::fast::monty::pow_window;
use crate::backend::fast::Fast;
use crate::backend::Backend;
use crate::error::Result;
use crate::group::Modulus;
use num_bigint::BigUint;
use rayon::prelude::*;

/// The baseline batch backend, on a rayon pool of `threads` (0: rayon's global pool).
#[derive(Debug)]
pub struct Cpu {
    workers: Workers,
}

impl Cpu {
    /// On rayon's global pool (all cores).
    pub fn new() -> Self {
        Self {
            workers: Workers::global(),
        }
    }

    /// On a pool of its own with `threads` threads.
    pub fn with_threads(threads: usize) -> Result<Self> {
        Ok(Self {
            workers: Workers::with_threads("cpu", threads)?,
        })
    }
}

impl Default for Cpu {
    fn default() -> Self {
        Self::new()
    }
}

impl BatchBackend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn describe(&self) -> String {
        let threads = self.workers.threads();
        format!(
            "rayon over values, {threads} threads, scalar fast kernel ({})",
            crate::backend::fast::Kernel::detect().name()
        )
    }

    fn square_many(&self, modulus: &Modulus, xs: &mut [BigUint], k: u64) -> Result<()> {
        check_below(modulus, "batch value", xs)?;
        let fast = Fast::prepare(modulus)?;
        self.workers.run(|| {
            xs.par_iter_mut().for_each(|x| {
                let mut m = fast.load(x);
                fast.square_n(&mut m, k);
                *x = fast.value(&m);
            })
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
        let fast = Fast::prepare(modulus)?;
        Ok(self.workers.run(|| {
            bases
                .par_iter()
                .zip(exps)
                .map(|(b, e)| fast.from_monty(&pow_window(&fast, &fast.to_monty(b), e)))
                .collect()
        }))
    }
}
