//! vrs-engine: a verifiable delay function over the RSA-2048 group with Wesolowski proofs.
//!
//! Pure computation: bytes and numbers in, bytes and numbers out. No network, no files, no
//! wall-clock time (only [`calibrate`] reads a monotonic clock, to measure this CPU).
//!
//! ```
//! use vrs_engine::{backend::{fast::Fast, Backend}, group::Modulus, vdf};
//! let modulus = Modulus::by_name("test512")?;
//! let x = modulus.hash_to_group(&[42; 32]);
//! let fast = Fast::prepare(&modulus)?;
//! let trace = vdf::evaluate(&fast, &modulus, &x, 1000, &Default::default(), &mut |_| {})?;
//! let out = trace.prove();
//! vdf::verify(&modulus, &out.x, &out.y, out.t, &out.proof)?;
//! # Ok::<(), vrs_engine::Error>(())
//! ```

pub mod anchor;
pub mod backend;
pub mod batch;
pub mod calibrate;
pub mod classgroup;
pub mod epoch;
pub mod error;
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod group;
pub mod hash;
pub mod merkle;
pub mod pool;
pub mod timing;
pub mod vdf;

pub use error::{Error, Result};
pub use hash::{TAG_HASH_TO_GROUP, TAG_HASH_TO_PRIME};
