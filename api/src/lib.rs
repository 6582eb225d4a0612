//! vrs: the verifiable randomness service (HTTP API on an embedded or PostgreSQL store) and
//! its command-line tools. The binary in `main.rs` only parses arguments and calls [`cli::run`].

pub mod acceptance;
pub mod anchor;
pub mod cli;
pub mod clock;
pub mod commit;
pub mod config;
pub mod epoch;
/// Fuzz entry points (the fuzz/ crate and tests/integration/fuzz.rs): not an interface.
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod games;
pub mod group;
pub mod http;
pub mod metrics;
pub mod notary;
pub mod outcome;
pub mod pool;
pub mod proof_json;
pub mod report;
pub mod store;
pub mod verify;
