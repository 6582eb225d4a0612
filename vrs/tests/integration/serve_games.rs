//! The real `vrs serve`: every bet type of both games and raw RNG requests are accepted,
//! resolve, and verify; the test recomputes each outcome from the verify response alone with
//! the independent implementation in `independent.rs`.

use crate::independent::{dice, dice_payout, hmac_sha256, leaf, sicbo_payout};
use crate::server::{Server, FAST};
use crate::unhex;
use serde_json::{json, Value};
use std::time::Duration;
use vrs_engine::group::Modulus;
use vrs_engine::{epoch, merkle, vdf};

const RESOLVE: Duration = Duration::from_secs(60);

fn hash32(v: &Value) -> [u8; 32] {
    unhex(v).try_into().expect("32 bytes")
}

/// The replay actions of every resolved game, in order (interface section 2.9).
pub const REPLAY_ACTIONS: [&str; 5] = [
    "bet_committed",
    "vdf_epoch_published",
    "randomness_derived",
    "dice_rolled",
    "bet_evaluated",
];

/// Every bet type of both games, with varied fields: (path, body).
pub fn bets() -> Vec<(&'static str, Value)> {
    let dice = "/api/v1/games/dice/bet";
    let sicbo = "/api/v1/games/sicbo/bet";
    vec![
        (
            dice,
            json!({"bet_type": "exact", "target": 7, "amount": 3.25, "player_seed": "s1"}),
        ),
        (
            dice,
            json!({"bet_type": "exact", "target": 2, "amount": 10}),
        ),
        (
            dice,
            json!({"bet_type": "over7", "player_id": "alice", "player_seed": "lucky"}),
        ),
        (dice, json!({"bet_type": "under7", "amount": 0.01})),
        (dice, json!({"bet_type": "odd", "amount": 10000})),
        (
            dice,
            json!({"bet_type": "even", "amount": 1.5, "operator_key": "casino-7"}),
        ),
        (sicbo, json!({"bet_type": "big", "amount": 2})),
        (sicbo, json!({"bet_type": "small"})),
        (
            sicbo,
            json!({"bet_type": "odd", "player_seed": "ünïcödé seed"}),
        ),
        (sicbo, json!({"bet_type": "even"})),
        (
            sicbo,
            json!({"bet_type": "total", "target": 10, "amount": 2.5}),
        ),
        (sicbo, json!({"bet_type": "total", "target": 4})),
        (
            sicbo,
            json!({"bet_type": "single", "target": 3, "amount": 4}),
        ),
        (sicbo, json!({"bet_type": "double", "target": 2})),
        (sicbo, json!({"bet_type": "triple", "target": 6})),
        (sicbo, json!({"bet_type": "anyTriple", "amount": 0.5})),
        (
            sicbo,
            json!({"bet_type": "combo", "combo": [5, 2], "amount": 7.77}),
        ),
    ]
}

/// Checks one verify response against the independent implementation; returns the dice.
fn check_independently(v: &Value, bet: &Value) -> Vec<u8> {
    let proof = &v["proof"];
    let game_id = v["game_id"].as_str().unwrap();
    let committed = &proof["bet"];
    assert_eq!(committed["game_id"], game_id);

    // The committed leaf encodes the bet, and sits in the epoch's bets tree.
    let leaf_bytes = leaf(committed);
    assert_eq!(hex::encode(&leaf_bytes), proof["leaf"].as_str().unwrap());
    let path: Vec<merkle::Hash> = proof["audit_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(hash32)
        .collect();
    assert!(merkle::verify_inclusion(
        &merkle::leaf_hash(&leaf_bytes),
        proof["leaf_index"].as_u64().unwrap(),
        proof["bet_count"].as_u64().unwrap(),
        &path,
        &hash32(&proof["bets_root"]),
    ));

    // The epoch input follows from the previous output and the version-2 commitment (its
    // predecessor, nonce and timing: docs/PROTOCOL.md §10), and the VDF proof holds.
    let m = Modulus::by_name(proof["modulus"].as_str().unwrap()).unwrap();
    let e = proof["vdfEpoch"].as_u64().unwrap();
    let t = proof["iterations"].as_u64().unwrap();
    let timing = &proof["timing"];
    assert_eq!(timing["version"], 2);
    let commitment = epoch::Timing {
        previous: timing["previous_epoch"].as_u64().unwrap(),
        iterations: t,
        opened_at_ms: timing["opened_at_ms"].as_u64().unwrap(),
        closed_at_ms: timing["closed_at_ms"].as_u64().unwrap(),
        margin_centi: (timing["security_margin"].as_f64().unwrap() * 100.0).round() as u32,
        squarings_per_second: timing["squarings_per_second"].as_u64().unwrap(),
    };
    let nonce: [u8; 32] = unhex(&timing["nonce"]).try_into().unwrap();
    let prev = unhex(&proof["previous_output"]);
    m.decode("prev", &prev).unwrap();
    let seed = epoch::epoch_seed_v2(e, &prev, &hash32(&proof["bets_root"]), &nonce, &commitment);
    assert_eq!(m.encode(&m.hash_to_group(&seed)), unhex(&proof["x"]));
    // The window keeps the bound of the declared margin (the service's own check agrees).
    assert_eq!(commitment.previous, e - 1, "one VDF lane: p(e) = e − 1");
    let y = unhex(&proof["y"]);
    vdf::verify_encoded(
        &m,
        &unhex(&proof["x"]),
        &y,
        t,
        &unhex(&proof["l"]),
        &unhex(&proof["pi"]),
    )
    .expect("the proof verifies");

    // rngValue = HMAC-SHA256(y, game_id ‖ player_seed).
    let seed = committed["player_seed"].as_str().unwrap_or("");
    let rng = hmac_sha256(&y, format!("{game_id}{seed}").as_bytes());
    assert_eq!(hex::encode(rng), proof["rngValue"].as_str().unwrap());

    let steps = v["replay_steps"].as_array().unwrap();
    let actions: Vec<&str> = steps
        .iter()
        .map(|s| s["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, REPLAY_ACTIONS);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], i as u64 + 1);
    }
    let game = committed["game"].as_str().unwrap();
    if game == "rng" {
        return vec![];
    }
    let n = if game == "dice" { 2 } else { 3 };
    let rolled = dice(&rng, n);
    let shown: Vec<u8> = steps[3]["dice"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as u8)
        .collect();
    assert_eq!(rolled, shown, "dice of {game_id}");

    let bet_type = committed["bet_type"].as_str().unwrap();
    let amount = committed["amount"].as_str().unwrap();
    let target = committed["target"].as_u64();
    let (won, payout) = if game == "dice" {
        dice_payout(bet_type, target, amount, &rolled)
    } else {
        let combo = committed["combo"]
            .as_array()
            .map(|c| (c[0].as_u64().unwrap(), c[1].as_u64().unwrap()));
        sicbo_payout(bet_type, target, combo, amount, &rolled)
    };
    assert_eq!(
        steps[4]["won"], won,
        "won of {game_id} ({bet}, dice {rolled:?})"
    );
    assert_eq!(
        steps[4]["payout"],
        payout.as_str(),
        "payout of {game_id} ({bet}, dice {rolled:?})"
    );
    rolled
}

#[test]
fn every_bet_type_resolves_and_verifies_independently() {
    let dir = tempfile::tempdir().unwrap();
    every_bet_type(Server::start(dir.path(), FAST));
}

#[test]
fn every_bet_type_resolves_and_verifies_on_postgres() {
    let schema = crate::pg::TestSchema::create("games");
    every_bet_type(Server::start_pg(&schema.url(), FAST));
}

fn every_bet_type(server: Server) {
    let mut placed = Vec::new();
    for (path, body) in bets() {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 202, "{path} {body}: {r}");
        assert_eq!(r["accepted"], true);
        let id = r["game_id"].as_str().unwrap().to_owned();
        assert!(
            id.len() == 32
                && id
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert!(r["bet_id"].is_string() && r["resolves_at_epoch"].is_u64());
        assert!(r["message"].is_string());
        placed.push((id, body, r["resolves_at_epoch"].as_u64().unwrap()));
    }
    let (status, r) = server.post("/api/v1/rng/generate", &json!({"client_seed": "my seed"}));
    assert_eq!(status, 202, "{r}");
    let rng_id = r["game_id"].as_str().unwrap().to_owned();
    assert_eq!(r["poll_url"], format!("/api/v1/games/{rng_id}"));
    assert!(r["request_id"].is_string() && r["accepted"] == true);
    placed.push((
        rng_id,
        json!({"client_seed": "my seed"}),
        r["resolves_at_epoch"].as_u64().unwrap(),
    ));

    for (id, body, epoch) in &placed {
        let g = server.poll_ok(&format!("/api/v1/games/{id}"), RESOLVE);
        assert_eq!(g["status"], "resolved");
        assert_eq!(g["replay"].as_array().unwrap().len(), 5);
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{v}");
        let p = &v["proof"];
        assert_eq!(p["vdfEpoch"], *epoch);
        assert_eq!(p["anchorTx"], Value::Null);
        assert_eq!(p["legacyTx"], p["anchorTx"]);
        assert_eq!(p["anchorChain"], "base");
        assert_eq!(p["anchorChainId"], 8453);
        assert_eq!(
            p["derivation"],
            "rngValue = HMAC-SHA256(key = y_e as fixed-width big-endian bytes, \
             message = UTF-8(game_id) ‖ UTF-8(player_seed or \"\"))"
        );
        assert_eq!(g["result"]["proof"]["rngValue"], p["rngValue"]);
        let rolled = check_independently(&v, body);
        // The result endpoint says the same as the verification.
        let r = &g["result"];
        assert_eq!(r["rngValue"], p["rngValue"]);
        if !rolled.is_empty() {
            assert_eq!(r["outcome"]["die1"], rolled[0]);
            assert_eq!(
                r["outcome"]["total"],
                rolled.iter().map(|&d| u64::from(d)).sum::<u64>()
            );
            assert_eq!(r["payout"], v["replay_steps"][4]["payout"]);
            assert_eq!(r["won"], v["replay_steps"][4]["won"]);
        }
    }

    // Entropy is now published, with its hash and class.
    let (status, ent) = server.get("/api/v1/entropy");
    assert_eq!(status, 200, "{ent}");
    let y = unhex(&ent["entropy"]);
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&y)),
        ent["entropy_hash"].as_str().unwrap()
    );
    assert_eq!(ent["source"], "vdf_epoch");
    assert!(ent["veo_class"].as_str().unwrap().starts_with("VEO-"));
    assert!(ent["epoch"].as_u64().unwrap() >= placed.iter().map(|p| p.2).max().unwrap());
    // verify_url names a game of that epoch (or is null when the epoch had none).
    match &ent["verify_url"] {
        Value::Null => {}
        Value::String(url) => {
            let (status, v) = server.get(url);
            assert_eq!(status, 200, "{url}: {v}");
            assert_eq!(v["proof"]["vdfEpoch"], ent["epoch"]);
            assert_eq!(v["proof"]["y"], ent["entropy"]);
        }
        other => panic!("verify_url {other}"),
    }

    // Recent: at most 20, newest first, and the last game placed is among them.
    let (_, recent) = server.get("/api/v1/recent");
    let games = recent["games"].as_array().unwrap();
    assert_eq!(games.len(), 18);
    assert_eq!(games[0]["game_id"], placed.last().unwrap().0.as_str());
    let (_, stats) = server.get("/api/v1/stats");
    assert!(stats["epoch"].is_object());
    assert_eq!(stats["role"], "leader");
    assert_eq!(stats["total_games"], 18);
    assert!(server.stop(), "vrs serve exits 0 on SIGTERM");
}

use sha2::Digest;
