//! `vrs vdf prove` / `vrs vdf verify`: round trip, tampering, and usage errors.

use crate::{stdout, vrs};
use serde_json::Value;

const SEED: &str = "0707070707070707070707070707070707070707070707070707070707070707";

fn prove(modulus: &str, t: &str) -> Value {
    prove_with(modulus, t, &[])
}

/// `vrs vdf prove --json` with extra flags.
fn prove_with(modulus: &str, t: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "vdf",
        "prove",
        "--seed",
        SEED,
        "-t",
        t,
        "--modulus",
        modulus,
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = vrs(&args, "");
    assert!(
        o.status.success(),
        "prove failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&stdout(&o)).expect("prove prints JSON")
}

fn verify(doc: &Value) -> (i32, String) {
    let o = vrs(&["vdf", "verify"], &doc.to_string());
    (o.status.code().unwrap_or(-1), stdout(&o))
}

#[test]
fn prove_prints_fixed_width_fields_and_verifies() {
    let doc = prove("rsa2048", "3000");
    assert_eq!(doc["modulus"], "rsa2048");
    assert_eq!(doc["iterations"], 3000);
    for field in ["x", "y", "pi"] {
        assert_eq!(doc[field].as_str().expect("hex").len(), 512, "{field}");
    }
    assert_eq!(doc["l"].as_str().expect("hex").len(), 64);
    assert!(doc["timings"]["eval_ms"].is_number());
    let (code, out) = verify(&doc);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("valid"), "{out}");
}

#[test]
fn verify_rejects_each_changed_field_with_a_reason() {
    let doc = prove("test1024", "500");
    for field in ["x", "y", "l", "pi"] {
        let mut bad = doc.clone();
        let s = bad[field].as_str().expect("hex").to_owned();
        let flipped = if s.ends_with('0') { "1" } else { "0" };
        bad[field] = Value::from(format!("{}{flipped}", &s[..s.len() - 1]));
        let (code, out) = verify(&bad);
        assert_eq!(code, 1, "changed {field} accepted: {out}");
        assert!(out.starts_with("invalid: "), "{out}");
    }
    let mut bad = doc.clone();
    bad["iterations"] = Value::from(501);
    assert_eq!(verify(&bad).0, 1);
    let mut bad = doc.clone();
    bad["iterations"] = Value::from(0);
    assert_eq!(verify(&bad).0, 1);
    let mut bad = doc.clone();
    bad["seed"] = Value::from("08".repeat(32));
    let (code, out) = verify(&bad);
    assert_eq!(code, 1);
    assert!(out.contains("hash_to_group"), "{out}");
}

#[test]
fn verify_reads_a_file_and_reports_json() {
    let doc = prove("test512", "100");
    let path = std::env::temp_dir().join(format!("vrs-proof-{}.json", std::process::id()));
    std::fs::write(&path, doc.to_string()).expect("write temp file");
    let o = vrs(
        &[
            "vdf",
            "verify",
            "--json",
            "--file",
            path.to_str().expect("utf-8 path"),
        ],
        "",
    );
    let _ = std::fs::remove_file(&path);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON verdict");
    assert_eq!(v["valid"], true);
}

#[test]
fn unreadable_input_and_bad_flags_exit_2() {
    assert_eq!(vrs(&["vdf", "verify"], "not json").status.code(), Some(2));
    let o = vrs(
        &["vdf", "prove", "--seed", "abcd", "--iterations", "10"],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("32 bytes"));
    let o = vrs(&["vdf", "prove", "--seed", SEED, "--iterations", "0"], "");
    assert_eq!(o.status.code(), Some(2));
    let o = vrs(
        &[
            "vdf",
            "prove",
            "--seed",
            SEED,
            "--iterations",
            "5",
            "--backend",
            "abacus",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown backend"));
}

#[test]
fn every_backend_gives_the_same_proof() {
    let base = prove("test512", "200");
    let other = prove_with("test512", "200", &["--backend", "reference"]);
    for field in ["x", "y", "l", "pi"] {
        assert_eq!(base[field], other[field], "{field}");
    }
}

#[test]
fn verify_replay_recomputes_segments_and_names_a_bad_one() {
    let doc = prove_with("test512", "900", &["--replay-every", "300"]);
    assert_eq!(doc["replay"].as_array().map(Vec::len), Some(2));
    let o = vrs(&["vdf", "verify", "--replay"], &doc.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("3 segments recomputed"));

    // Swap the two checkpoints' values: the proof still verifies, the replay does not.
    let mut bad = doc.clone();
    let first = bad["replay"][0]["value"].clone();
    bad["replay"][0]["value"] = bad["replay"][1]["value"].clone();
    bad["replay"][1]["value"] = first;
    assert_eq!(
        vrs(&["vdf", "verify"], &bad.to_string()).status.code(),
        Some(0)
    );
    let o = vrs(&["vdf", "verify", "--replay"], &bad.to_string());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("from iteration 0 to 300"),
        "{}",
        stdout(&o)
    );
}
