//! Property-based tests of the live service with schemathesis (tools/schemathesis/run.sh):
//! requests generated from both OpenAPI documents, honest and hostile, with every check on: no
//! 5xx, status, content type, headers and body as documented, 405 with an exact `Allow` header
//! for a method the path does not accept, authentication enforced.
//!
//! Two servers, because the notary's refusal of an unpaid request depends on the
//! configuration: one takes API keys only (the notary run sends a key, and schemathesis checks
//! that the same calls without it or with a wrong one get 401), the other takes x402 payments
//! too (the notary run sends no key: a well-formed notarization gets 402, and generated
//! credentials get 401 or 402).
//!
//! A fixed seed and few examples per operation keep it to a couple of minutes; a release runs
//! more (`VRS_SCHEMATHESIS_EXAMPLES`, docs/OPERATIONS.md).

use crate::notary::create_key;
use crate::server::{fast_with_small_pool, Server, FAST};
use crate::x402::repo;
use std::process::Command;
use std::time::Instant;

/// Test cases per operation in schemathesis's fuzzing phase, unless `VRS_SCHEMATHESIS_EXAMPLES`
/// says otherwise.
const EXAMPLES: &str = "100";

/// Runs tools/schemathesis/run.sh against `server` for `documents` and prints its report;
/// returns the report when schemathesis found anything.
fn run(server: &Server, documents: &[&str], api_key: Option<&str>) -> Option<String> {
    let examples =
        std::env::var("VRS_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| EXAMPLES.to_owned());
    let mut cmd = Command::new(repo().join("tools/schemathesis/run.sh"));
    cmd.arg(&server.url)
        .arg(&examples)
        .args(documents)
        .env_remove("VRS_API_KEY");
    if let Some(key) = api_key {
        cmd.env("VRS_API_KEY", key);
    }
    let started = Instant::now();
    let out = cmd.output().expect("run.sh runs");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    println!(
        "schemathesis {documents:?}: {:.0} s",
        started.elapsed().as_secs_f64()
    );
    (!out.status.success()).then_some(report)
}

#[test]
fn schemathesis_finds_nothing_in_either_document() {
    let st = repo().join("tools/schemathesis/.venv/bin/st");
    assert!(
        st.exists(),
        "schemathesis is not installed at {}: run scripts/install-deps",
        st.display()
    );
    let mut failed = Vec::new();

    // API keys only. A small pool, so that instant bets are served (200) and batches exist.
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = fast_with_small_pool();
    let keys = Server::start(dir.path(), &flags);
    let (key, _) = create_key(dir.path(), "schemathesis");
    failed.extend(run(
        &keys,
        &["/api/v1/openapi.json", "/v1/openapi.json"],
        Some(&key),
    ));
    drop(keys);

    // x402 configured, with a facilitator nobody listens at: schemathesis cannot sign a payment
    // the notary accepts, so settlement is never reached.
    let paid_dir = tempfile::tempdir().expect("tempdir");
    let mut flags = FAST.to_vec();
    flags.extend_from_slice(&[
        "--pool-threads",
        "0",
        "--x402-pay-to",
        "0x000000000000000000000000000000000000dEaD",
        "--x402-facilitator-url",
        "http://127.0.0.1:9",
    ]);
    let paid = Server::start(paid_dir.path(), &flags);
    failed.extend(run(&paid, &["/v1/openapi.json"], None));

    assert!(
        failed.is_empty(),
        "schemathesis found failures:\n{}",
        failed.join("\n")
    );
}
