//! Interoperability of the class-group VDF (vrs_engine::classgroup) with the real chiavdf
//! 1.2.0 from PyPI, through tools/chiavdf/interop.py in the venv tools/chiavdf/.venv that
//! scripts/install-deps creates. Both directions: our discriminants, encodings, y and proofs
//! are chiavdf's byte for byte and chiavdf accepts them; chiavdf's proofs pass our verifier;
//! tampered proofs fail both. Without the venv these tests fail (they do not skip).

use num_bigint::{BigInt, BigUint};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use vrs_engine::classgroup::{
    bqfc, prove_encoded, verify_encoded, Discriminant, Form, ReferenceSquarer, FORM_SIZE,
};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Sends `requests` to interop.py and returns its answers, one per request.
fn chiavdf(requests: &[Value]) -> Vec<Value> {
    let python = repo().join("tools/chiavdf/.venv/bin/python");
    assert!(
        python.exists(),
        "chiavdf is not installed at {}: run scripts/install-deps (it creates tools/chiavdf/.venv \
         from tools/chiavdf/requirements.txt)",
        python.display()
    );
    let mut child = Command::new(python)
        .arg(repo().join("tools/chiavdf/interop.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("interop.py starts");
    let input = serde_json::to_vec(requests).expect("requests serialize");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("requests written");
    let out = child.wait_with_output().expect("interop.py runs");
    assert!(
        out.status.success(),
        "interop.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).expect("answers parse");
    assert_eq!(answers.len(), requests.len());
    answers
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn seed(i: u32) -> Vec<u8> {
    Sha256::digest(format!("vrs chiavdf interop {i}")).to_vec()
}

const GENERATOR: [u8; FORM_SIZE] = {
    let mut g = [0u8; FORM_SIZE];
    g[0] = 0x08;
    g
};

#[test]
fn chiavdf_is_the_pinned_version() {
    let answers = chiavdf(&[json!({"op": "version"})]);
    assert_eq!(s(&answers[0], "version"), "1.2.0");
}

#[test]
fn discriminants_are_chiavdfs() {
    let mut cases: Vec<(Vec<u8>, u32)> = Vec::new();
    for i in 0..6 {
        for bits in [8, 16, 64, 256, 512, 1016, 1024] {
            cases.push((seed(i), bits));
        }
    }
    cases.push((b"ab".to_vec(), 512));
    cases.push((vec![0xff; 3], 1024));
    let requests: Vec<Value> = cases
        .iter()
        .map(|(seed, bits)| json!({"op": "create_discriminant", "seed": hex::encode(seed), "bits": bits}))
        .collect();
    for ((seed, bits), answer) in cases.iter().zip(chiavdf(&requests)) {
        let ours = Discriminant::from_seed(seed, *bits).expect("discriminant");
        assert_eq!(
            ours.to_hex(),
            s(&answer, "d"),
            "seed {} bits {bits}",
            hex::encode(seed)
        );
    }
    // What chiavdf refuses, we refuse.
    let refused = [
        (vec![], 512u32),
        (seed(0), 1032),
        (seed(0), 2048),
        (seed(0), 500),
    ];
    let requests: Vec<Value> = refused
        .iter()
        .map(|(seed, bits)| json!({"op": "create_discriminant", "seed": hex::encode(seed), "bits": bits}))
        .collect();
    for ((seed, bits), answer) in refused.iter().zip(chiavdf(&requests)) {
        assert!(answer.get("error").is_some(), "chiavdf accepted {bits}");
        assert!(
            Discriminant::from_seed(seed, *bits).is_err(),
            "we accepted {bits}"
        );
    }
}

/// Our encodings of many forms (random powers of the generator and their inverses, so both
/// signs of b and gcds above 1) are read back by chiavdf's strict `bqfc_deserialize` as the
/// same (a, b); random corruptions of them are refused by both or accepted by both as the same
/// form.
#[test]
fn encodings_are_chiavdfs() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut requests = Vec::new();
    let mut expected: Vec<(Discriminant, Vec<u8>, Option<Form>)> = Vec::new();
    for (i, bits) in [(0u32, 1024u32), (1, 512), (2, 256)] {
        let d = Discriminant::from_seed(&seed(i), bits).expect("discriminant");
        let g = Form::generator(&d).expect("generator");
        for _ in 0..60 {
            let e = BigUint::from(rng.gen::<u128>());
            let f = g.pow(&e, &d);
            for f in [f.clone(), f.inverse()] {
                let bytes = bqfc::encode(&d, &f).expect("encode");
                assert_eq!(bqfc::decode(&d, &bytes).expect("decode"), f);
                requests.push(
                    json!({"op": "deserialize", "d": d.to_hex(), "form": hex::encode(&bytes)}),
                );
                expected.push((d.clone(), bytes.clone(), Some(f.clone())));
                // a corrupted copy: one byte of the significant part changed
                let mut bad = bytes.clone();
                let at = rng.gen_range(0..d.compressed_size());
                bad[at] ^= rng.gen_range(1..=255u8);
                let ours = bqfc::decode(&d, &bad).ok();
                requests
                    .push(json!({"op": "deserialize", "d": d.to_hex(), "form": hex::encode(&bad)}));
                expected.push((d.clone(), bad, ours));
            }
        }
    }
    let mut corruptions_accepted = 0;
    let mut stricter = 0;
    for ((d, bytes, ours), answer) in expected.iter().zip(chiavdf(&requests)) {
        let theirs = answer.get("a").map(|_| {
            (
                s(&answer, "a").parse::<BigInt>().expect("a"),
                s(&answer, "b").parse::<BigInt>().expect("b"),
            )
        });
        match (ours, theirs) {
            (Some(f), Some((a, b))) => {
                assert_eq!((&f.a, &f.b), (&a, &b), "{}", hex::encode(bytes));
                if bytes[0] & 0x0c != 0 {
                    corruptions_accepted += 1;
                }
            }
            (None, None) => {}
            // We are stricter than chiavdf in one way: a decoded (a, b) must be a reduced,
            // primitive form of D (chiavdf computes c by a truncating division).
            (None, Some((a, b)))
                if !Form::from_ab(a.clone(), b.clone(), d.value())
                    .is_some_and(|f| f.is_valid_for(d)) =>
            {
                stricter += 1;
            }
            (ours, theirs) => panic!(
                "disagreement on {} (D = {}): ours {ours:?}, chiavdf {theirs:?}",
                hex::encode(bytes),
                d.to_hex()
            ),
        }
    }
    // Only corruptions that set the identity/generator flag are accepted (chiavdf ignores the
    // other bytes then); there are few of them.
    assert!(corruptions_accepted < 60, "{corruptions_accepted}");
    println!(
        "{} encodings: {corruptions_accepted} corruptions read as a special form by both, \
         {stricter} read by chiavdf as (a, b) that are no form of D and refused by us",
        expected.len()
    );
}

/// For several seeds and T: our (y, π) are chiavdf's `prove` bytes, chiavdf's
/// `verify_wesolowski` accepts ours, our `verify_encoded` accepts chiavdf's, and a tampered
/// proof is refused by both.
#[test]
fn proofs_are_chiavdfs_both_ways() {
    let mut cases: Vec<(Vec<u8>, u32, u64)> = Vec::new();
    for t in [1u64, 2, 100, 263, 264, 1000, 4321, 10_000] {
        cases.push((seed(10), 1024, t));
    }
    for t in [1u64, 777, 10_000] {
        cases.push((seed(11), 1024, t));
    }
    for t in [5u64, 3000] {
        cases.push((seed(12), 512, t));
    }
    let mut requests = Vec::new();
    let mut ours = Vec::new();
    for (seed, bits, t) in &cases {
        let d = Discriminant::from_seed(seed, *bits).expect("discriminant");
        let (y, proof) = prove_encoded(&ReferenceSquarer::new(&d), &d, &GENERATOR, *t, &mut |_| {})
            .expect("prove");
        requests.push(json!({
            "op": "prove", "seed": hex::encode(seed), "bits": bits, "x": hex::encode(GENERATOR), "t": t
        }));
        ours.push((d, y, proof));
    }
    let proved = chiavdf(&requests);

    let mut checks = Vec::new();
    let mut verdicts = Vec::new();
    for (((_, _, t), (d, y, proof)), theirs) in cases.iter().zip(&ours).zip(&proved) {
        let (ty, tproof) = (
            hex::decode(s(theirs, "y")).expect("hex"),
            hex::decode(s(theirs, "proof")).expect("hex"),
        );
        assert_eq!(
            (hex::encode(y), hex::encode(proof)),
            (hex::encode(&ty), hex::encode(&tproof)),
            "T = {t}, D = {}",
            d.to_hex()
        );
        assert_eq!(verify_encoded(d, &GENERATOR, &ty, &tproof, *t), Ok(()));
        // Tampering: one bit of the proof (or of y where π is a one-byte special form), and the
        // wrong T.
        let (mut bad_y, mut bad_proof) = (y.clone(), proof.clone());
        if proof[0] & 0x0c == 0 {
            bad_proof[17] ^= 0x01;
        } else {
            bad_y[17] ^= 0x01;
        }
        let mut verify = |y: &[u8], proof: &[u8], t: u64, want: bool| {
            let ours = verify_encoded(d, &GENERATOR, y, proof, t);
            assert_eq!(ours.is_ok(), want, "ours: T = {t}: {ours:?}");
            checks.push(json!({
                "op": "verify", "d": d.to_hex(), "x": hex::encode(GENERATOR),
                "y": hex::encode(y), "proof": hex::encode(proof), "t": t
            }));
            verdicts.push(want);
        };
        verify(y, proof, *t, true);
        verify(&bad_y, &bad_proof, *t, false);
        verify(y, proof, *t + 1, false);
    }
    for ((check, want), answer) in checks.iter().zip(&verdicts).zip(chiavdf(&checks)) {
        assert_eq!(
            answer["ok"].as_bool(),
            Some(*want),
            "chiavdf on {check}: {answer}"
        );
    }
}
