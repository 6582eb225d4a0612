//! Verification without trusting the server: `vrs verify` (one game, every step recomputed)
//! and `vrs audit` (a range of epochs, batch-verified), reading only a server's public answers
//! over HTTP and, with `--rpc`, the chain. Protocol rules and the engine, an HTTP client; no
//! axum, no database.

pub mod audit;
pub mod epoch_record;
pub mod log_history;
pub mod progress;
pub mod verify;
pub mod witnessed;
