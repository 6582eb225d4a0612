//! The verifiable delay function: y = x^(2^T) in Z_N^*/{±1}, with a Wesolowski proof.
//!
//! - [`evaluate`] runs the T sequential squarings on any [`Backend`](crate::backend::Backend),
//!   keeping a checkpoint every K squarings (for the prover) and every `replay_every` (for
//!   publication), and returns a [`Trace`].
//! - [`Trace::prove`] computes ℓ and π = x^⌊2^T/ℓ⌋ from the checkpoints, in parallel, without
//!   redoing the T squarings.
//! - [`verify`] checks π^ℓ · x^(2^T mod ℓ) = y with two exponents below 2^256.
//! - [`verify_replay`] re-runs the squarings between published checkpoints, segments in
//!   parallel, without trusting the proof.

mod hash_to_prime;
pub mod prime;
mod prover;
mod replay;
mod verify;

pub use hash_to_prime::{hash_to_prime, CHALLENGE_BITS, CHALLENGE_BYTES};
pub(crate) use prover::last_stop;
pub use prover::{evaluate, EvalOptions, ProverParams, Trace};
pub use replay::verify_replay;
pub use verify::{verify, verify_encoded};

use crate::group::Element;
use num_bigint::BigUint;

/// A Wesolowski proof: the challenge prime ℓ and π = x^⌊2^T/ℓ⌋ (canonical).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    pub l: BigUint,
    pub pi: Element,
}

/// A published intermediate value: x^(2^iteration), canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub iteration: u64,
    pub value: Element,
}

/// Everything a VDF run produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Output {
    pub x: Element,
    pub t: u64,
    pub y: Element,
    pub proof: Proof,
    /// x^(2^(k·replay_every)) for k = 1, 2, … below T (empty unless asked for).
    pub replay: Vec<Checkpoint>,
}
