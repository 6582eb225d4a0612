//! The JavaScript/TypeScript client (clients/typescript, npm package `@vrs/client`) against a
//! live server: `npm test`, which type-checks its declarations with tsc, runs the offline tests
//! (the committed vectors, chiavdf's answers, Ed25519, the timing rule) and the live ones, which
//! start `vrs serve` from the binary this test names (VRS_BIN): every endpoint of both APIs
//! through the client, games of every kind verified with one alteration per step, an anchored
//! game on a real local EVM node (ganache, GANACHE_URL), and the tarball of `npm pack`
//! installed into an empty project that verifies a live game.

use crate::evm::{Ganache, KEY};
use crate::output_text as text;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_typescript_client_passes_its_tests_against_a_live_server() {
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../clients/typescript");
    assert!(
        client.join("node_modules/typescript").exists(),
        "{} has no node_modules/typescript: scripts/install-deps runs npm ci there",
        client.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let ganache = Ganache::start(&dir.path().join("chain"), 8453, true);
    let out = Command::new("npm")
        .args(["test", "--silent"])
        .current_dir(&client)
        .env("VRS_BIN", env!("CARGO_BIN_EXE_vrs"))
        .env("GANACHE_URL", &ganache.url)
        .env("VRS_ANCHOR_PRIVATE_KEY", KEY)
        .output()
        .expect("npm test runs");
    let log = text(&out);
    assert!(out.status.success(), "{log}");
    // Skipped tests would be silent passes: every live test must have run.
    assert!(
        log.contains("# skipped 0"),
        "npm test skipped tests:\n{log}"
    );
}
