//! Integration tests of the engine's public interface: backends against the reference,
//! prove/verify round trips and tampering, the committed test vectors, and the class-group VDF
//! against the real chiavdf (tools/chiavdf/.venv).

mod backends;
mod batch_cpu;
#[cfg(feature = "gpu")]
mod batch_gpu;
mod batch_simd;
mod batch_support;
mod chiavdf;
#[cfg(feature = "fuzzing")]
mod fuzz;
mod vectors;
mod wesolowski;
