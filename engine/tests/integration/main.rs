//! Integration tests of the engine's public interface: backends against the reference,
//! prove/verify round trips and tampering, and the committed test vectors.

mod backends;
mod batch_cpu;
#[cfg(feature = "gpu")]
mod batch_gpu;
mod batch_simd;
mod batch_support;
mod fuzz;
mod vectors;
mod wesolowski;
