//! The verifier an outsider wrote from docs/PROTOCOL.md and docs/GAMES.md alone, without the
//! service's code (tools/docs-verifier/vrs_docs_verify.py, over clients/python's
//! vrs_client.protocol: Python, standard library only, its own Ed25519, Baillie–PSW, hash to
//! group, Wesolowski and class groups), against live servers:
//! every kind of game passes, and every field it alters one at a time (`--tamper`) fails a
//! step. So the documents stay enough to verify with, without guessing.

use crate::durability::{wait_for, RESOLVE};
use crate::output_text as text;
use crate::server::{fast_with_small_pool, Server};
use std::path::PathBuf;
use std::process::{Command, Output};

fn tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tools/docs-verifier")
}

fn python(script: &str, args: &[&str]) -> Output {
    Command::new("python3")
        .arg(tools().join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("python3 {script}: {e} (scripts/install-deps installs python3)"))
}

/// Places the games of `make_games.py` on `server`, then verifies them and their tamperings.
fn verify_all(server: &Server, group: &str, make_args: &[&str]) {
    let mut args = vec!["--server", server.url.as_str()];
    args.extend_from_slice(make_args);
    let made = python("make_games.py", &args);
    assert_eq!(made.status.code(), Some(0), "{}", text(&made));
    let listing = String::from_utf8_lossy(&made.stdout).into_owned();
    let ids: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert!(ids.len() >= 3, "{listing}");
    let mut args = vec![
        "--server",
        server.url.as_str(),
        "--group",
        group,
        "--tamper",
    ];
    args.extend(ids);
    let out = python("vrs_docs_verify.py", &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn the_docs_only_verifier_checks_its_building_blocks() {
    let out = python("test_offline.py", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn the_docs_only_verifier_passes_rsa_games_of_every_kind_and_catches_tampering() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &fast_with_small_pool());
    wait_for("the pool filled", RESOLVE, || {
        server.get("/api/v1/stats").1["pool"]["depth"].as_u64() >= Some(8)
    });
    verify_all(&server, "test512", &[]);
}

#[test]
fn the_docs_only_verifier_passes_class_group_games_and_catches_tampering() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        dir.path(),
        &["--group", "classgroup-512", "--epoch-ms", "300"],
    );
    verify_all(&server, "classgroup-512", &["--no-instant"]);
}
