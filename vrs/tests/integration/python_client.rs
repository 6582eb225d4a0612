//! The Python client (clients/python) against a live server: its pytest suite, which starts
//! `vrs serve` itself from the binary this test names (VRS_BIN) and drives every endpoint of
//! both APIs through the sync and the async client, and verifies games of every kind; with a
//! real local EVM node (ganache, GANACHE_URL) for an anchoring server, so that `--rpc` reads an
//! anchor transaction back on chain.

use crate::evm::{Ganache, KEY};
use crate::output_text as text;
use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_python_client_passes_its_tests_against_a_live_server() {
    let client = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../clients/python");
    let pytest = client.join(".venv/bin/pytest");
    assert!(
        pytest.exists(),
        "{} is missing: scripts/install-deps installs the client and pytest into clients/python/.venv",
        pytest.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let ganache = Ganache::start(&dir.path().join("chain"), 8453, true);
    let out = Command::new(&pytest)
        .args(["-q", "-p", "no:cacheprovider"])
        .current_dir(&client)
        .env("VRS_BIN", env!("CARGO_BIN_EXE_vrs"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("GANACHE_URL", &ganache.url)
        .env("VRS_ANCHOR_PRIVATE_KEY", KEY)
        .output()
        .expect("pytest runs");
    assert!(out.status.success(), "{}", text(&out));
}
