//! `cpu`: rayon over the values, each squared by the scalar `fast` backend (mulx/adx where
//! the CPU has it). The baseline the other batch backends are measured against.

use super::pool::Pool;
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
    pool: Pool,
}

impl Cpu {
    /// On rayon's global pool (all cores).
    pub fn new() -> Self {
        Self {
            pool: Pool::global(),
        }
    }

    /// On a pool of its own with `threads` threads.
    pub fn with_threads(threads: usize) -> Result<Self> {
        Ok(Self {
            pool: Pool::with_threads("cpu", threads)?,
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
        let threads = self.pool.threads();
        format!(
            "rayon over values, {threads} threads, scalar fast kernel ({})",
            crate::backend::fast::Kernel::detect().name()
        )
    }

    fn square_many(&self, modulus: &Modulus, xs: &mut [BigUint], k: u64) -> Result<()> {
        check_below(modulus, "batch value", xs)?;
        let fast = Fast::prepare(modulus)?;
        self.pool.run(|| {
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
        Ok(self.pool.run(|| {
            bases
                .par_iter()
                .zip(exps)
                .map(|(b, e)| fast.from_monty(&pow_window(&fast, &fast.to_monty(b), e)))
                .collect()
        }))
    }
}
