//! The committed test vectors (docs/test-vectors/rsa2048.json) verify, and the engine
//! reproduces each of them from its seed, byte for byte.

use num_bigint::BigUint;
use serde::Deserialize;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::group::{decode_hex, Modulus};
use vrs_engine::vdf::{self, EvalOptions};

#[derive(Deserialize)]
struct File {
    vectors: Vec<Vector>,
}

#[derive(Deserialize)]
struct Vector {
    modulus: String,
    seed: String,
    iterations: u64,
    x: String,
    y: String,
    l: String,
    pi: String,
}

fn load() -> Vec<Vector> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/test-vectors/rsa2048.json"
    );
    let text = std::fs::read_to_string(path).expect("test vectors are committed");
    serde_json::from_str::<File>(&text)
        .expect("vectors parse")
        .vectors
}

fn hex(what: &'static str, s: &str) -> Vec<u8> {
    decode_hex(what, s).expect("vector hex")
}

#[test]
fn vectors_cover_the_required_iterations() {
    let ts: Vec<u64> = load().iter().map(|v| v.iterations).collect();
    assert_eq!(ts, vec![1, 2, 1000, 100_000]);
}

#[test]
fn vectors_verify_and_are_reproduced() {
    for v in load() {
        let m = Modulus::by_name(&v.modulus).expect("known modulus");
        let (x, y, l, pi) = (
            hex("x", &v.x),
            hex("y", &v.y),
            hex("l", &v.l),
            hex("pi", &v.pi),
        );
        assert_eq!(
            vdf::verify_encoded(&m, &x, &y, v.iterations, &l, &pi),
            Ok(()),
            "T = {}",
            v.iterations
        );

        let seed: [u8; 32] = hex("seed", &v.seed).try_into().expect("32-byte seed");
        let xe = m.hash_to_group(&seed);
        assert_eq!(
            m.encode(&xe),
            x,
            "hash_to_group(seed), T = {}",
            v.iterations
        );
        let fast = Fast::prepare(&m).expect("prepare");
        let out = vdf::evaluate(
            &fast,
            &m,
            &xe,
            v.iterations,
            &EvalOptions::default(),
            &mut |_| {},
        )
        .expect("evaluate")
        .prove();
        assert_eq!(m.encode(&out.y), y);
        assert_eq!(out.proof.l, BigUint::from_bytes_be(&l));
        assert_eq!(m.encode(&out.proof.pi), pi);
    }
}
