//! `vrs vdf prove --group classgroup-… --json` and `vrs vdf verify` against the real chiavdf
//! 1.2.0 (tools/chiavdf/.venv, made by scripts/install-deps): the document we print is accepted
//! by chiavdf as it is, and chiavdf's own prove output, put in the same JSON shape, is accepted
//! by `vrs vdf verify`. Without the venv these tests fail (they do not skip).

use crate::{stdout, vrs};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const SEED: &str = "7672732d636c61737367726f75702d636c6900000000000000000000000000ab";

pub(crate) fn python() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/chiavdf/.venv/bin/python");
    assert!(
        p.exists(),
        "chiavdf is not installed at {}: run scripts/install-deps",
        p.display()
    );
    p
}

/// Runs `code` in the chiavdf venv with `arg` as sys.argv[1]; its stdout parsed as JSON.
pub(crate) fn chiavdf(code: &str, arg: &Value) -> Value {
    let out = Command::new(python())
        .args(["-c", code, &arg.to_string()])
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "chiavdf: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("chiavdf answers JSON")
}

const CHIA_VERIFY: &str = "import chiavdf, json, sys
d = json.loads(sys.argv[1])
h = bytes.fromhex
try:
    ok = chiavdf.verify_wesolowski(d['discriminant'], h(d['x']), h(d['y']), h(d['proof']), d['iterations'])
except Exception:
    ok = False
print(json.dumps({'ok': ok, 'd': chiavdf.create_discriminant(h(d['seed']), 1024)}))";

const CHIA_PROVE: &str = "import chiavdf, json, sys
r = json.loads(sys.argv[1])
seed = bytes.fromhex(r['seed'])
x = bytes([8]) + bytes(99)
out = chiavdf.prove(seed, x, 1024, r['t'], '')
print(json.dumps({'discriminant': chiavdf.create_discriminant(seed, 1024), 'iterations': r['t'],
                  'x': x.hex(), 'y': out[:100].hex(), 'proof': out[100:].hex()}))";

fn prove(t: u64, backend: &str) -> Value {
    let t = t.to_string();
    let o = vrs(
        &[
            "vdf",
            "prove",
            "--group",
            "classgroup-1024",
            "--seed",
            SEED,
            "--iterations",
            &t,
            "--backend",
            backend,
            "--json",
        ],
        "",
    );
    assert!(
        o.status.success(),
        "prove failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&stdout(&o)).expect("prove prints JSON")
}

fn verify(doc: &Value) -> (i32, String) {
    let o = vrs(&["vdf", "verify", "--json"], &doc.to_string());
    (o.status.code().unwrap_or(-1), stdout(&o))
}

/// Flips the low bit of the last byte of the hex member `key`... of a byte that matters: the
/// first byte after the flags of a 100-byte form (its g size), which every decoder reads.
fn tamper(doc: &Value, key: &str) -> Value {
    let mut doc = doc.clone();
    let mut bytes = hex::decode(doc[key].as_str().expect("hex")).expect("hex");
    bytes[2] ^= 1;
    doc[key] = json!(hex::encode(bytes));
    doc
}

#[test]
fn our_documents_are_accepted_by_chiavdf() {
    for (t, backend) in [(1000, "fast"), (4321, "fast"), (500, "reference")] {
        let doc = prove(t, backend);
        assert_eq!(doc["group"], "classgroup-1024");
        assert_eq!(doc["discriminant_bits"], 1024);
        assert_eq!(doc["x"], format!("08{}", "00".repeat(99)));
        let chia = chiavdf(CHIA_VERIFY, &doc);
        assert_eq!(
            chia["d"], doc["discriminant"],
            "create_discriminant differs"
        );
        assert_eq!(chia["ok"], true, "chiavdf refuses our proof for T = {t}");
        assert_eq!(verify(&doc).0, 0, "we refuse our own document");
        // A changed proof or y fails both chiavdf and us.
        for key in ["proof", "y"] {
            let bad = tamper(&doc, key);
            assert_eq!(chiavdf(CHIA_VERIFY, &bad)["ok"], false, "chiavdf, {key}");
            let (code, out) = verify(&bad);
            assert_eq!(code, 1, "tampered {key}: {out}");
            assert!(out.contains("\"valid\":false"), "{out}");
        }
    }
}

#[test]
fn chiavdf_output_is_accepted_by_vrs_vdf_verify() {
    for t in [1000, 2718] {
        let theirs = chiavdf(CHIA_PROVE, &json!({"seed": SEED, "t": t}));
        // Exactly chiavdf's members (no group, no seed): accepted.
        let (code, out) = verify(&theirs);
        assert_eq!(code, 0, "chiavdf's proof for T = {t}: {out}");
        // And it is byte for byte what we print for the same seed and T.
        let ours = prove(t, "fast");
        for key in ["discriminant", "x", "y", "proof"] {
            assert_eq!(ours[key], theirs[key], "{key} for T = {t}");
        }
        // With a seed, the discriminant must be the seed's.
        let mut other_seed = theirs.clone();
        other_seed["seed"] = json!("5a".repeat(32));
        let (code, out) = verify(&other_seed);
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("create_discriminant"), "{out}");
        // The wrong T fails.
        let mut wrong_t = theirs.clone();
        wrong_t["iterations"] = json!(t + 1);
        assert_eq!(verify(&wrong_t).0, 1);
    }
}

#[test]
fn bad_class_group_input_is_refused_with_a_reason() {
    let o = vrs(
        &[
            "vdf",
            "prove",
            "--group",
            "classgroup-999",
            "--seed",
            "00",
            "-t",
            "10",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("multiple of 8"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = vrs(
        &[
            "vdf",
            "prove",
            "--group",
            "classgroup-x",
            "--seed",
            "00",
            "-t",
            "10",
        ],
        "",
    );
    assert_eq!(o.status.code(), Some(2));
    let doc = json!({"discriminant": "0x17", "iterations": 1, "x": "08", "y": "08", "proof": "08"});
    let (code, out) = verify(&doc);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("negative"), "{out}");
}
