//! vrs: the command-line tools around the service (`vrs serve`, `vrs verify`, `vrs audit`,
//! `vrs vdf …`, `vrs bench …`, `vrs keys …`). The binary in `main.rs` only parses arguments and
//! calls [`cli::run`]; the layers it wires live in their own crates (docs/ARCHITECTURE.md).

pub mod cli;
pub mod config;
pub mod stats;
