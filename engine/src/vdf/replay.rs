//! Segment replay: re-check the raw computation from published checkpoints without trusting
//! the proof. With c_0 = x and c_T = y around the list, every adjacent pair i < j must satisfy
//! c_j = canon(c_i^(2^(j − i))). Segments are independent, so they run in parallel on rayon:
//! a verifier with p cores needs about T/p squarings of wall time (PROTOCOL.md, sect. 8).

use super::Checkpoint;
use crate::backend::fast::Fast;
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::group::{Element, Modulus};
use rayon::prelude::*;

/// Checks every segment of x → checkpoints → y. `Ok(())` when all recompute.
pub fn verify_replay(
    modulus: &Modulus,
    x: &Element,
    y: &Element,
    t: u64,
    checkpoints: &[Checkpoint],
) -> Result<()> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    let mut points: Vec<(u64, &Element)> = Vec::with_capacity(checkpoints.len() + 2);
    points.push((0, x));
    for c in checkpoints {
        let prev = points.last().map_or(0, |p| p.0);
        if c.iteration <= prev || c.iteration >= t {
            return Err(Error::BadReplay(format!(
                "iteration {} out of order or outside (0, {t})",
                c.iteration
            )));
        }
        points.push((c.iteration, &c.value));
    }
    points.push((t, y));
    let fast = Fast::prepare(modulus)?;
    // The first failing segment in order, so the report is deterministic.
    let failures: Vec<(u64, u64)> = points
        .par_windows(2)
        .filter_map(|w| {
            let ((from, a), (to, b)) = (w[0], w[1]);
            let mut v = fast.load(a.value());
            fast.square_n(&mut v, to - from);
            let got = modulus.canonical(&fast.value(&v));
            (&got != b.value()).then_some((from, to))
        })
        .collect();
    match failures.first() {
        None => Ok(()),
        Some(&(from, to)) => Err(Error::ReplayMismatch { from, to }),
    }
}
