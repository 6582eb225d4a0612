//! Calibration: how many squarings fit in a target duration on this CPU with the `fast`
//! backend. The one place the engine reads a clock (monotonic, never wall time).

use crate::backend::fast::Fast;
use crate::backend::Backend;
use crate::error::Result;
use crate::group::Modulus;
use std::time::{Duration, Instant};

/// Measures `fast` on `modulus` for about `sample` and returns squarings per second.
pub fn squarings_per_second(modulus: &Modulus, sample: Duration) -> Result<f64> {
    let fast = Fast::prepare(modulus)?;
    let mut x = fast.load(modulus.hash_to_group(&[0x5a; 32]).value());
    // Warm up caches and clocks, then time batches until the sample is long enough.
    fast.square_n(&mut x, 2_000);
    let mut batch = 1_000u64;
    let mut best = f64::INFINITY;
    let start = Instant::now();
    while start.elapsed() < sample || best.is_infinite() {
        let t0 = Instant::now();
        fast.square_n(&mut x, batch);
        let ns = t0.elapsed().as_nanos() as f64 / batch as f64;
        best = best.min(ns);
        batch = (batch * 2).min(200_000);
    }
    std::hint::black_box(&x);
    Ok(1e9 / best)
}

/// Class-group squarings per second for `bits`-bit discriminants, the best of repeated
/// timings (the fast squarer the epoch prover runs).
pub fn classgroup_squarings_per_second(bits: u32, sample: Duration) -> Result<f64> {
    use crate::classgroup::{epoch, FastFormSquarer, Form, Squarer};
    let d = epoch::epoch_discriminant(&[0x5a; 32], bits)?;
    let sq = FastFormSquarer::new(&d)?;
    let mut f =
        Form::generator(&d).ok_or_else(|| crate::Error::BadDiscriminant("no generator".into()))?;
    f = sq.square_n(&f, 500);
    let mut batch = 250u64;
    let mut best = f64::INFINITY;
    let start = Instant::now();
    while start.elapsed() < sample || best.is_infinite() {
        let t0 = Instant::now();
        f = sq.square_n(&f, batch);
        let ns = t0.elapsed().as_nanos() as f64 / batch as f64;
        best = best.min(ns);
        batch = (batch * 2).min(20_000);
    }
    std::hint::black_box(&f);
    Ok(1e9 / best)
}

/// T for an evaluation of about `target` on `modulus` (at least 1).
pub fn calibrate_for(modulus: &Modulus, target: Duration) -> Result<u64> {
    let rate = squarings_per_second(modulus, Duration::from_millis(300))?;
    Ok(((rate * target.as_secs_f64()) as u64).max(1))
}

/// T for an evaluation of about `target` on the RSA-2048 modulus.
pub fn calibrate(target: Duration) -> u64 {
    calibrate_for(&Modulus::rsa2048(), target).unwrap_or(1)
}
