//! `vrs serve --group classgroup-<bits>`: epochs over class groups, one discriminant per epoch
//! from its seed (docs/PROTOCOL.md §19). Games resolve and verify on the server, in `vrs verify`
//! and `vrs audit` with the matching `--group`, and the real chiavdf 1.2.0 accepts an epoch's
//! proof and derives the same discriminant from the seed. A flipped byte or a substituted
//! discriminant fails the step that checks it; a verifier expecting RSA fails `group`.

use crate::cli_vdf_classgroup::chiavdf;
use crate::output_text as text;
use crate::server::Server;
use crate::tamper::{flip, tampering_proxy};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(90);
const GROUP: &str = "classgroup-512";
const FLAGS: &[&str] = &["--group", GROUP, "--epoch-ms", "300"];

fn vrs_verify(server: &str, game_id: &str, group: &str) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["verify", game_id, "--server", server, "--group", group])
        .output()
        .expect("runs vrs verify");
    (out.status.code(), text(&out))
}

fn vrs_audit(server: &str, to: u64) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["audit", "--server", server, "--from", "1", "--to"])
        .arg(to.to_string())
        .args(["--group", GROUP])
        .output()
        .expect("runs vrs audit");
    (out.status.code(), text(&out))
}

fn has_line(text: &str, prefix: &str, step: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with(prefix) && l.contains(step))
}

const CHIA_CHECK: &str = "import chiavdf, json, sys
p = json.loads(sys.argv[1])
h = bytes.fromhex
d = chiavdf.create_discriminant(h(p['epoch_seed']), p['discriminant_bits'])
try:
    ok = chiavdf.verify_wesolowski(p['discriminant'], h(p['x']), h(p['y']), h(p['pi']), p['iterations'])
except Exception:
    ok = False
print(json.dumps({'ok': ok, 'd': d}))";

#[test]
fn class_group_epochs_verify_in_the_server_the_cli_the_audit_and_chiavdf() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FLAGS);
    let mut ids = Vec::new();
    for (path, body) in [
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "over7", "amount": 2.5, "player_seed": "p"}),
        ),
        (
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "total", "target": 10, "amount": 1}),
        ),
        ("/api/v1/rng/generate", json!({"client_seed": "c"})),
        // No instant pool on class groups: the bet says so and takes the epoch path.
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "even", "instant": true}),
        ),
    ] {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 202, "{path}: {r}");
        if body.get("instant").is_some() {
            assert!(
                r["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("Instant bets need an RSA group")),
                "{r}"
            );
        }
        ids.push(r["game_id"].as_str().expect("game_id").to_owned());
    }
    let games: Vec<(String, Value)> = ids
        .into_iter()
        .map(|id| {
            let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
            (id, v)
        })
        .collect();

    let generator = format!("08{}", "00".repeat(99));
    for (id, v) in &games {
        assert_eq!(v["verified"], true, "{id}: {v}");
        crate::protocol_docs::assert_documented("20.1", "a class-group verification", v);
        let failed: Vec<&Value> = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .filter(|c| c["passed"] != true)
            .collect();
        assert!(failed.is_empty(), "{id}: {failed:?}");
        let p = &v["proof"];
        assert_eq!(p["modulus"], GROUP);
        assert_eq!(p["veo_class"], "VEO-WESOLOWSKI-CLASSGROUP-512");
        assert_eq!(p["discriminant_bits"], 512);
        assert!(p.get("modulus_n").is_none(), "{p}");
        assert_eq!(p["x"], generator.as_str());
        assert_eq!(p["y"].as_str().expect("y").len(), 200);
        assert_eq!(p["pi"].as_str().expect("pi").len(), 200);
        assert_eq!(p["l"].as_str().expect("l").len(), 66);
        assert!(p["checkpoints"].as_array().is_some_and(|c| c.len() == 15));

        // chiavdf derives the same D_e from the epoch seed and accepts y and π as they are.
        let chia = chiavdf(CHIA_CHECK, p);
        assert_eq!(chia["d"], p["discriminant"], "{id}");
        assert_eq!(chia["ok"], true, "chiavdf refused epoch proof of {id}: {p}");

        let (code, out) = vrs_verify(&server.url, id, GROUP);
        assert_eq!(code, Some(0), "{id}: {out}");
        for step in [
            "group",
            "epoch_chain",
            "epoch_record",
            "epoch_input",
            "vdf_proof",
            "timing",
            "rng_value",
        ] {
            assert!(
                has_line(&out, "ok", step),
                "{id}: no passing {step} in\n{out}"
            );
        }
    }

    // The first epoch starts from the generator; the epoch record names the group.
    let (status, e1) = server.get("/api/v1/epochs/1");
    assert_eq!(status, 200, "{e1}");
    crate::protocol_docs::assert_documented("20.3", "a class-group epoch", &e1);
    assert_eq!(e1["modulus"], GROUP);
    assert_eq!(e1["veo_class"], "VEO-WESOLOWSKI-CLASSGROUP-512");
    assert_eq!(e1["previous_output"], generator.as_str());

    // A verifier expecting the default rsa2048 refuses the group.
    let (id, _) = &games[0];
    let (code, out) = vrs_verify(&server.url, id, "rsa2048");
    assert_eq!(code, Some(1), "{out}");
    assert!(has_line(&out, "FAIL", "group"), "{out}");

    // One change at a time, by a lying server.
    type Tamper = Box<dyn Fn(&mut Value) + Send + Sync>;
    let cases: Vec<(&str, &str, Tamper)> = vec![
        ("y", "vdf_proof", Box::new(|v| flip(v, "/proof/y"))),
        ("pi", "vdf_proof", Box::new(|v| flip(v, "/proof/pi"))),
        ("l", "vdf_proof", Box::new(|v| flip(v, "/proof/l"))),
        (
            "T",
            "vdf_proof",
            Box::new(|v| {
                let t = v["proof"]["iterations"].as_u64().expect("T");
                v["proof"]["iterations"] = json!(t + 1);
            }),
        ),
        (
            "discriminant",
            "epoch_input",
            Box::new(|v| v["proof"]["discriminant"] = json!("-0x1f")),
        ),
    ];
    for (what, step, tamper) in cases {
        let url = tampering_proxy(&server.url, move |path, v| {
            if path.starts_with("/api/v1/verify/") {
                tamper(v);
            }
        });
        let (code, out) = vrs_verify(&url, id, GROUP);
        assert_eq!(code, Some(1), "tampered {what}: {out}");
        assert!(
            has_line(&out, "FAIL", step),
            "tampered {what}: no failing {step} in\n{out}"
        );
    }

    // The whole chain up to the last game's epoch audits, and a flipped y is named.
    let last = games
        .iter()
        .filter_map(|(_, v)| v["proof"]["vdfEpoch"].as_u64())
        .max()
        .expect("an epoch");
    let (code, out) = vrs_audit(&server.url, last);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("verified: chain"), "{out}");
    let bad = games[0].1["proof"]["vdfEpoch"].as_u64().expect("epoch");
    let target = format!("/api/v1/epochs/{bad}");
    let url = tampering_proxy(&server.url, move |path, v| {
        if path == target {
            flip(v, "/y");
        }
    });
    let (code, out) = vrs_audit(&url, last);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("FAIL epoch {bad} vdf_proof")),
        "{out}"
    );
    assert!(server.stop());
}
