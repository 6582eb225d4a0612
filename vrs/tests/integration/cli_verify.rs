//! `vrs verify` against a live `vrs serve`, and against a server that hands out tampered data:
//! every honest game passes every step; one flipped byte in y, π, the bets root or the audit
//! path, or a changed payout, fails the step that checks it, by name, with exit status 1. The
//! same for pool-served (instant) games and their §14 steps.

use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::process::{Command, Output};
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(60);

pub fn vrs_verify(server: &str, game_id: &str, json: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
    cmd.args(["verify", game_id, "--server", server, "--group", "test512"]);
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("runs vrs verify")
}

pub use crate::tamper::{flip, tampering_proxy};

/// Places a dice bet, a Sic Bo bet and a raw RNG request and waits for their verifications.
fn resolved_games(server: &Server) -> Vec<(String, Value)> {
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
    ] {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 202, "{path}: {r}");
        ids.push(r["game_id"].as_str().expect("game_id").to_owned());
    }
    ids.into_iter()
        .map(|id| {
            let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
            (id, v)
        })
        .collect()
}

#[test]
fn honest_games_pass_and_every_tampering_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let games = resolved_games(&server);
    for (id, _) in &games {
        let out = vrs_verify(&server.url, id, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{id}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("verified"), "{text}");
        for step in [
            "group",
            "bet_leaf",
            "merkle_inclusion",
            "epoch_chain",
            "epoch_record",
            "epoch_input",
            "vdf_proof",
            "timing",
            "rng_value",
        ] {
            assert!(
                text.lines()
                    .any(|l| l.starts_with("ok") && l.contains(step)),
                "{id}: no passing {step} line in\n{text}"
            );
        }
    }
    let (id, honest) = &games[0];
    assert_eq!(honest["verified"], true);
    // The JSON report of an honest game: every step passed.
    let out = vrs_verify(&server.url, id, true);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["verified"], true, "{report}");
    assert!(report["steps"].as_array().is_some_and(|s| s.len() >= 7));

    // One change at a time, served by a lying server; the step that must catch it.
    type Tamper = Box<dyn Fn(&mut Value) + Send + Sync>;
    let cases: Vec<(&str, &str, Tamper)> = vec![
        ("y", "vdf_proof", Box::new(|v| flip(v, "/proof/y"))),
        ("pi", "vdf_proof", Box::new(|v| flip(v, "/proof/pi"))),
        (
            "bets root",
            "merkle_inclusion",
            Box::new(|v| flip(v, "/proof/bets_root")),
        ),
        (
            "audit path",
            "merkle_inclusion",
            Box::new(|v| {
                if v["proof"]["audit_path"]
                    .as_array()
                    .is_some_and(|a| a.is_empty())
                {
                    // A one-leaf tree has no path: a path where there should be none fails too.
                    v["proof"]["audit_path"] = json!([hex::encode([7u8; 32])]);
                } else {
                    flip(v, "/proof/audit_path/0");
                }
            }),
        ),
        ("payout", "payout", Box::new(crate::tamper::change_payout)),
        // A server naming a group of its choosing (a modulus it could factor) fails `group`.
        (
            "group",
            "group",
            Box::new(|v| v["proof"]["modulus"] = json!("test1024")),
        ),
        (
            "modulus digits",
            "group",
            Box::new(|v| flip(v, "/proof/modulus_n")),
        ),
    ];
    for (what, step, tamper) in cases {
        let url = tampering_proxy(&server.url, move |path, v| {
            if path.starts_with("/api/v1/verify/") {
                tamper(v);
            }
        });
        let out = vrs_verify(&url, id, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "tampered {what}: {text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("FAIL") && l.contains(step)),
            "tampered {what}: no failing {step} line in\n{text}"
        );
        assert!(text.contains("NOT verified"), "{text}");
    }
}

#[test]
fn unknown_games_and_unreachable_servers_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let out = vrs_verify(&server.url, "0123456789abcdef0123456789abcdef", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such game"));
    drop(server);
    // Nothing listens on port 9 of the loopback.
    let out = vrs_verify(
        "http://127.0.0.1:9",
        "0123456789abcdef0123456789abcdef",
        false,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn audit_checks_a_range_of_epochs_and_names_a_tampered_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let games = resolved_games(&server);
    let last = games
        .iter()
        .filter_map(|(_, v)| v["proof"]["vdfEpoch"].as_u64())
        .max()
        .expect("an epoch");
    let audit_in = |url: &str, group: &str| {
        Command::new(env!("CARGO_BIN_EXE_vrs"))
            .args([
                "audit",
                "--server",
                url,
                "--from",
                "1",
                "--to",
                &last.to_string(),
                "--group",
                group,
            ])
            .output()
            .expect("runs vrs audit")
    };
    let audit = |url: &str| audit_in(url, "test512");
    // The group is the auditor's: an honest test server fails an audit that expects rsa2048.
    let out = audit_in(&server.url, "rsa2048");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL epoch 1 group: computed in \"test512\", not in rsa2048"),
        "{text}"
    );
    let out = audit(&server.url);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("verified: chain"), "{text}");

    // y of the first game's epoch, one bit flipped: its proof fails, and so does the next
    // epoch's chain link when the range has one.
    let bad = games[0].1["proof"]["vdfEpoch"].as_u64().expect("epoch");
    let target = format!("/api/v1/epochs/{bad}");
    let url = tampering_proxy(&server.url, move |path, v| {
        if path == target {
            flip(v, "/y");
        }
    });
    let out = audit(&url);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("FAIL epoch {bad} vdf_proof")),
        "no failing proof of epoch {bad} in\n{text}"
    );
    if bad < last {
        assert!(
            text.contains(&format!("FAIL epoch {} epoch_chain", bad + 1)),
            "{text}"
        );
    }
}

/// Fast epochs plus a small pool that fills in seconds (as in serve_pool.rs).
const POOL: &[&str] = &[
    "--pool-iterations",
    "64",
    "--pool-batch",
    "16",
    "--pool-depth",
    "120",
    "--pool-low-water",
    "60",
];

pub use crate::serve_pool::wait_for_depth as wait_for_pool;

/// Places an instant bet; returns its game id and verification (already resolved: 200).
pub fn instant_bet(server: &Server, path: &str, mut body: Value) -> (String, Value) {
    body["instant"] = json!(true);
    let (status, r) = server.post(path, &body);
    assert_eq!(status, 200, "{path} {body}: {r}");
    assert_eq!(r["pool_served"], true, "{r}");
    let id = r["game_id"].as_str().expect("game_id").to_owned();
    let (status, v) = server.get(&format!("/api/v1/verify/{id}"));
    assert_eq!(status, 200, "{v}");
    (id, v)
}

/// Runs `vrs verify` against `url` and asserts exit 1 with `step` named as failed.
pub fn assert_step_fails(url: &str, id: &str, what: &str, step: &str) {
    let out = vrs_verify(url, id, false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "tampered {what}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("FAIL") && l.contains(step)),
        "tampered {what}: no failing {step} line in\n{text}"
    );
    assert!(text.contains("NOT verified"), "{text}");
}

const POOL_STEPS: &[&str] = &[
    "group",
    "pool_batch_chain",
    "pool_anchor",
    "pool_batch_seed",
    "pool_entry_input",
    "vdf_proof",
    "pool_inclusion",
    "pool_committed",
    "pool_game_id",
    "rng_value",
    "dice",
    "payout",
];

/// Asserts exit 0 with a passing line for each step of `steps`.
pub fn assert_passes(url: &str, id: &str, steps: &[&str], extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["verify", id, "--server", url, "--group", "test512"])
        .args(extra)
        .output()
        .expect("runs vrs verify");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{id}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in steps {
        assert!(
            text.lines()
                .any(|l| l.starts_with("ok") && l.split_whitespace().nth(1) == Some(step)),
            "{id}: no passing {step} line in\n{text}"
        );
    }
    text
}

#[test]
fn pool_served_games_pass_and_every_tampering_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut flags = FAST.to_vec();
    flags.extend_from_slice(POOL);
    let server = Server::start(dir.path(), &flags);
    wait_for_pool(&server, 40);
    // 17 bets: the 17th entry is in the second batch of 16, so the link to batch 1 is checked.
    let mut games = vec![instant_bet(
        &server,
        "/api/v1/games/sicbo/bet",
        json!({"bet_type": "total", "target": 10, "amount": 1, "player_seed": "s"}),
    )];
    for n in 0..16 {
        games.push(instant_bet(
            &server,
            "/api/v1/games/dice/bet",
            json!({"bet_type": "odd", "amount": 1.5, "player_seed": format!("p{n}")}),
        ));
    }
    let (first, first_v) = games[0].clone();
    let (id, v) = games.last().cloned().expect("a game");
    assert_eq!(first_v["proof"]["pool_batch"], 1);
    let batch = v["proof"]["pool_batch"].as_u64().expect("pool_batch");
    assert!(batch >= 2, "{}", v["proof"]);
    for game in [&first, &id] {
        let text = assert_passes(&server.url, game, POOL_STEPS, &[]);
        assert!(text.contains("verified: every step"), "{text}");
        assert!(!text.contains("bet_leaf"), "{text}");
    }
    let out = vrs_verify(&server.url, &id, true);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["verified"], true, "{report}");
    assert_eq!(report["pool_served"], true, "{report}");

    // One lie at a time, in the verification or in the published pool batches.
    let verify_path = format!("/api/v1/verify/{id}");
    let batch_path = format!("/api/v1/pool/batches/{batch}");
    let prev_path = format!("/api/v1/pool/batches/{}", batch - 1);
    let position = v["proof"]["leaf_index"].as_u64().expect("leaf_index");
    let created = v["proof"]["bet_created_at_ms"].as_u64().expect("created");
    type Tamper = Box<dyn Fn(&str, &mut Value) + Send + Sync>;
    let on = |target: &str, f: fn(&mut Value)| -> Tamper {
        let target = target.to_owned();
        Box::new(move |path, v| {
            if path == target {
                f(v);
            }
        })
    };
    let cases: Vec<(&str, &str, Tamper)> = vec![
        (
            "secret",
            "pool_entry_input",
            on(&verify_path, |v| flip(v, "/proof/secret")),
        ),
        ("y", "vdf_proof", on(&verify_path, |v| flip(v, "/proof/y"))),
        (
            "batch root",
            "pool_inclusion",
            on(&verify_path, |v| flip(v, "/proof/batch_root")),
        ),
        (
            "anchor y",
            "pool_anchor",
            on(&verify_path, |v| flip(v, "/proof/anchor_y")),
        ),
        (
            "previous batch's published root",
            "pool_batch_chain",
            on(&prev_path, |v| flip(v, "/root")),
        ),
        (
            "payout",
            "payout",
            on(&verify_path, crate::tamper::change_payout),
        ),
        (
            "published leaf hash",
            "pool_inclusion",
            Box::new({
                let batch_path = batch_path.clone();
                move |path, v| {
                    if path == batch_path {
                        flip(v, &format!("/leaf_hashes/{position}"));
                    }
                }
            }),
        ),
        (
            "commit time after the bet",
            "pool_committed",
            Box::new({
                let (verify_path, batch_path) = (verify_path.clone(), batch_path.clone());
                move |path, v| {
                    if path == verify_path {
                        v["proof"]["batch_committed_at_ms"] = json!(created + 1);
                    } else if path == batch_path {
                        v["committed_at_ms"] = json!(created + 1);
                    }
                }
            }),
        ),
        (
            "another game's verification",
            "pool_game_id",
            Box::new({
                let (verify_path, other) = (verify_path.clone(), first_v.clone());
                move |path, v| {
                    if path == verify_path {
                        *v = other.clone();
                    }
                }
            }),
        ),
    ];
    for (what, step, tamper) in cases {
        let url = tampering_proxy(&server.url, tamper);
        assert_step_fails(&url, &id, what, step);
    }
}

/// The operator evaluates an epoch twice (a second nonce, on a second squarer) and hands a game
/// the run it prefers, while publishing the other as the epoch: the forged proof is valid on its
/// own (its input follows from its nonce, its VDF proof verifies, its rngValue follows from its
/// y, the timing is the epoch's), so only comparing it with the published epoch catches it:
/// `epoch_record` fails, and nothing else does.
#[test]
fn a_game_handed_another_run_of_its_epoch_fails_epoch_record() {
    use vrs_protocol::epoch_group::{Group, SeedRule};
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let (status, r) = server.post("/api/v1/rng/generate", &json!({"client_seed": "fork"}));
    assert_eq!(status, 202, "{r}");
    let id = r["game_id"].as_str().expect("game_id").to_owned();
    let honest = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let p = &honest["proof"];
    let t = &p["timing"];
    let num = |v: &Value| v.as_u64().expect("a number");
    let timing = vrs_engine::epoch::Timing {
        previous: num(&t["previous_epoch"]),
        iterations: num(&p["iterations"]),
        opened_at_ms: num(&t["opened_at_ms"]),
        closed_at_ms: num(&t["closed_at_ms"]),
        margin_centi: (t["security_margin"].as_f64().expect("margin") * 100.0).round() as u32,
        squarings_per_second: num(&t["squarings_per_second"]),
    };
    let unhex = |v: &Value| hex::decode(v.as_str().expect("hex")).expect("hex");
    let nonce = [0x5a; 32];
    let bets_root: [u8; 32] = unhex(&p["bets_root"]).try_into().expect("32 bytes");
    let group = Group::by_name("test512").expect("test512");
    let (seed, _) = group
        .input_for(
            num(&p["vdfEpoch"]),
            &unhex(&p["previous_output"]),
            &bets_root,
            &SeedRule::V2 {
                nonce: &nonce,
                timing: &timing,
            },
        )
        .expect("the fork's input");
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["vdf", "prove", "--group", "test512", "--json", "--seed"])
        .arg(hex::encode(seed))
        .args(["--iterations", &timing.iterations.to_string()])
        .output()
        .expect("runs vrs vdf prove");
    let fork: Value = serde_json::from_slice(&out.stdout).expect("the fork's proof");
    let y = unhex(&fork["y"]);
    let mut message = id.as_bytes().to_vec();
    message.extend_from_slice(b"fork");
    let rng = hex::encode(crate::independent::hmac_sha256(&y, &message));
    let forged = move |path: &str, v: &mut Value| {
        if !path.starts_with("/api/v1/verify/") {
            return;
        }
        let p = &mut v["proof"];
        p["timing"]["nonce"] = json!(hex::encode(nonce));
        p["epoch_seed"] = json!(hex::encode(seed));
        for (mine, theirs) in [("x", "x"), ("y", "y"), ("pi", "pi"), ("l", "l")] {
            p[mine] = fork[theirs].clone();
        }
        p["rngValue"] = json!(rng);
        for s in v["replay_steps"].as_array_mut().expect("steps") {
            match s["action"].as_str() {
                Some("vdf_epoch_published") => {
                    s["input"] = fork["x"].clone();
                    s["output"] = fork["y"].clone();
                    s["pi"] = fork["pi"].clone();
                    s["l"] = fork["l"].clone();
                    s["epoch_seed"] = json!(hex::encode(seed));
                }
                Some("randomness_derived") => {
                    s["key"] = fork["y"].clone();
                    s["rngValue"] = json!(rng);
                }
                _ => {}
            }
        }
    };
    let url = tampering_proxy(&server.url, forged);
    let out = vrs_verify(&url, &id, false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "the fork passed:\n{text}");
    let failed: Vec<&str> = text.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(failed.len(), 1, "{text}");
    assert!(failed[0].contains("epoch_record"), "{text}");
}
