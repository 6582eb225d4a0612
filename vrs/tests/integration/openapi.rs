//! The OpenAPI documents against the live service: tools/openapi/check.py validates both
//! documents against the OpenAPI 3.1 specification, checks that they cover every endpoint of
//! the interface, exercises every documented operation (honest and bad requests) and validates
//! each answer's status and body against what the document says. It also compares each
//! answer's wire shape (members in order, JSON types, null or absent, error texts) with
//! tools/openapi/wire-shapes.json, recorded from the service before its bodies became types:
//! the types must write what the JSON maps wrote.

use crate::notary::create_key;
use crate::server::{fast_with_small_pool, Server};
use crate::x402::repo;
use std::process::Command;

#[test]
fn every_response_conforms_to_the_openapi_documents() {
    let python = repo().join("tools/openapi/.venv/bin/python");
    assert!(
        python.exists(),
        "the OpenAPI checker is not installed at {}: run scripts/install-deps",
        python.display()
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = fast_with_small_pool();
    let server = Server::start(dir.path(), &flags);
    let (key, _) = create_key(dir.path(), "openapi-check");
    let out = Command::new(python)
        .arg(repo().join("tools/openapi/check.py"))
        .arg(&server.url)
        .args(["--api-key", &key])
        .arg("--shapes")
        .arg(repo().join("tools/openapi/wire-shapes.json"))
        .output()
        .expect("check.py runs");
    let printed = String::from_utf8_lossy(&out.stdout);
    println!("{printed}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "responses differ from the OpenAPI documents:\n{printed}"
    );
    assert!(printed.contains("all responses conform to the documents"));
}
