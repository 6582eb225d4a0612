//! Integration tests of the engine's public interface: backends against the reference,
//! prove/verify round trips and tampering, and the committed test vectors.

mod backends;
mod vectors;
mod wesolowski;
