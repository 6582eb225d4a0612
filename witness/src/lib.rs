//! `vrs witness`: a C2SP tlog-witness for vrs logs (docs/PROTOCOL.md §21, docs/OPERATIONS.md
//! "Running a witness"). It cosigns a log's checkpoints only when they extend what it cosigned
//! before (the tlog rules), and, where it can read the log's entries, only when every new
//! entry keeps the application rules: one commitment per epoch, after its plan, each stamped
//! within δ of the witness's own clock. Its state is a file per log, replaced atomically, so
//! it survives kill -9 and restarts without ever cosigning two trees of one size.
//!
//! ```text
//! state.rs       the durable state of each log
//! witness.rs     the decision: tlog checks, entries, application rules, cosignature
//! server.rs      the HTTP routes
//! ```

pub mod server;
pub mod state;
pub mod witness;

pub use witness::{Config, LogConfig, Witness, DEFAULT_DELTA_MS};
