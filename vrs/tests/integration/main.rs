//! The crate's integration tests: the real `vrs` binary (CLI and `vrs serve`) and the HTTP
//! router in process.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod acceptance;
mod anchor;
mod browser;
mod chaos;
mod cli_bench;
mod cli_vdf;
mod cli_vdf_classgroup;
mod cli_verify;
mod cli_verify_anchor;
mod docs_verifier;
mod durability;
mod evm;
mod fuzz;
mod hostile;
mod http_errors;
mod independent;
mod limits;
mod load;
mod notary;
mod observability;
mod openapi;
mod pg;
mod protocol_docs;
mod proxy;
mod python_client;
mod router_epoch;
mod schemathesis;
mod serve_classgroup;
mod serve_games;
mod serve_pool;
mod serve_restart;
mod server;
mod statistics;
mod store_conformance;
mod tamper;
mod timing;
mod typescript_client;
mod verify_cache;
mod witness;
mod witnessed_anchor;
mod witnessed_attacks;
mod witnessed_serve;
mod x402;
mod x402_facilitator;
mod x402_recovery;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Plans for epochs whose deadline is so far away that store and router tests never meet it
/// (T = 10^13 at margin 1 and 1 squaring a second: about 300 000 years).
pub const OPEN_ENDED: vrs_store::PlanParams = vrs_store::PlanParams {
    lanes: 1,
    iterations: 10_000_000_000_000,
    margin_centi: 100,
    squarings_per_second: 1,
    legacy_iterations: 1000,
};

/// Runs `vrs args…` with `stdin` and returns its output.
pub fn vrs(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("vrs starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("vrs finishes")
}

/// A command's stdout and stderr, one after the other.
pub fn output_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The bytes of a JSON string of hex digits.
pub fn unhex(v: &serde_json::Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap_or_else(|| panic!("hex string, got {v}"))).expect("hex")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
