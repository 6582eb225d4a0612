//! Instant (pool-served) bets through the real `vrs serve`: every bet type answers 200 already
//! resolved and verifies; an empty pool falls back to the epoch path; a restart keeps the pool
//! and its order; replicas never serve an entry twice.

use crate::independent::{dice, dice_payout, hmac_sha256, sicbo_payout};
use crate::pg::TestSchema;
use crate::serve_games::{bets, REPLAY_ACTIONS};
use crate::serve_restart::failed_checks;
use crate::server::{Server, FAST};
use crate::unhex;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(90);

/// Fast epochs plus a small, quickly filled pool.
pub fn pool_flags(extra: &[&'static str]) -> Vec<&'static str> {
    let mut f = FAST.to_vec();
    f.extend_from_slice(&[
        "--pool-iterations",
        "64",
        "--pool-batch",
        "16",
        "--pool-depth",
        "120",
        "--pool-low-water",
        "60",
    ]);
    f.extend_from_slice(extra);
    f
}

pub fn wait_for_depth(server: &Server, depth: u64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (_, stats) = server.get("/api/v1/stats");
        if stats["pool"]["depth"].as_u64().unwrap_or(0) >= depth {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "pool never reached {depth}: {stats}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Recomputes the outcome from the proof's y with the independent implementation.
fn check_outcome(v: &Value, body: &Value, path: &str) {
    let p = &v["proof"];
    let y = unhex(&p["y"]);
    let id = v["game_id"].as_str().unwrap();
    let seed = body["player_seed"].as_str().unwrap_or("");
    let rng = hmac_sha256(&y, &[id.as_bytes(), seed.as_bytes()].concat());
    assert_eq!(p["rngValue"], hex::encode(rng));
    let amount = format!("{:.2}", body["amount"].as_f64().unwrap_or(1.0));
    let bet_type = body["bet_type"].as_str().unwrap();
    let target = body["target"].as_u64();
    let won_payout = if path.contains("sicbo") {
        let d = dice(&rng, 3);
        let combo = body["combo"]
            .as_array()
            .map(|c| (c[0].as_u64().unwrap(), c[1].as_u64().unwrap()));
        sicbo_payout(bet_type, target, combo, &amount, &d)
    } else {
        dice_payout(bet_type, target, &amount, &dice(&rng, 2))
    };
    let r = &v["replay_steps"][4];
    assert_eq!(
        (
            r["won"].as_bool().unwrap(),
            r["payout"].as_str().unwrap().to_owned()
        ),
        won_payout
    );
}

#[test]
fn instant_bets_of_every_type_resolve_at_once_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&[]));
    wait_for_depth(&server, 40);
    let dice_path = "/api/v1/games/dice/bet";
    let sicbo_path = "/api/v1/games/sicbo/bet";
    let mut last_index = 0;
    let placed = bets();
    for (path, mut body) in placed.clone() {
        body["instant"] = json!(true);
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 200, "{path} {body}: {r}");
        assert_eq!(r["status"], "resolved");
        assert_eq!(r["pool_served"], true);
        let o = &r["result"]["outcome"];
        let dice_n = if path == sicbo_path { 3 } else { 2 };
        let dice: Vec<u64> = (1..=dice_n)
            .map(|i| o[format!("die{i}")].as_u64().unwrap())
            .collect();
        assert_eq!(o["total"].as_u64().unwrap(), dice.iter().sum::<u64>());
        assert!(r["result"]["won"].is_boolean());
        assert!(r["result"]["payout"].as_str().unwrap().contains('.'));
        let index = r["pool_index"].as_u64().unwrap();
        assert_eq!(index, last_index + 1, "entries are served in index order");
        last_index = index;

        let id = r["game_id"].as_str().unwrap();
        let (status, g) = server.get(&format!("/api/v1/games/{id}"));
        assert_eq!(status, 200, "{g}");
        assert_eq!(g["result"]["outcome"], *o);
        assert_eq!(g["replay"].as_array().unwrap().len(), 5);
        let (status, v) = server.get(&format!("/api/v1/verify/{id}"));
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["verified"], true, "{v}");
        let names: Vec<&str> = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        for name in [
            "pool_entry_input",
            "vdf_proof",
            "pool_inclusion",
            "pool_committed",
        ] {
            assert!(names.contains(&name), "{name} missing: {names:?}");
        }
        assert_eq!(v["proof"]["pool_index"], index);
        let actions: Vec<&str> = v["replay_steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["action"].as_str().unwrap())
            .collect();
        assert_eq!(actions, REPLAY_ACTIONS);
        check_outcome(&v, &body, path);
    }
    // Normal bets are still accepted beside the pool, and take the epoch path.
    let (status, r) = server.post(dice_path, &json!({"bet_type": "odd"}));
    assert_eq!(status, 202, "{r}");
    let (_, stats) = server.get("/api/v1/stats");
    let pool = &stats["pool"];
    assert_eq!(pool["served"], placed.len());
    assert!(
        pool["last_batch"]["root"].as_str().unwrap().len() == 64,
        "{pool}"
    );
    // The generator names the batch backend it computes on (--batch-backend auto here).
    let backend = pool["backend"].as_str().unwrap_or_default();
    assert!(
        ["cpu (", "simd (", "gpu ("]
            .iter()
            .any(|b| backend.starts_with(b)),
        "{pool}"
    );

    // The audit view of batch 1: its leaf hashes give its root, and the served entries name
    // their games, in index order; unserved entries show nothing but their hash.
    let (status, b) = server.get("/api/v1/pool/batches/1");
    assert_eq!(status, 200, "{b}");
    let hashes: Vec<[u8; 32]> = b["leaf_hashes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| unhex(h).try_into().unwrap())
        .collect();
    assert_eq!(hashes.len() as u64, b["size"].as_u64().unwrap());
    assert_eq!(hex::encode(vrs_engine::merkle::root(&hashes)), b["root"]);
    let served: Vec<u64> = b["served"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(
        served,
        (1..=16).collect::<Vec<u64>>(),
        "batch 1 holds 16 entries"
    );
    assert!(!b.to_string().contains("secret"));
    assert_eq!(server.get("/api/v1/pool/batches/999").0, 404);
    assert_eq!(server.get("/api/v1/pool/batches/x").0, 400);
    assert!(server.stop());
}

#[test]
fn an_empty_pool_falls_back_to_the_epoch_path() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&["--pool-threads", "0"]));
    let body = json!({"bet_type": "even", "instant": true});
    let (status, r) = server.post("/api/v1/games/dice/bet", &body);
    assert_eq!(status, 202, "{r}");
    assert_eq!(r["pool_served"], false);
    assert!(
        r["message"].as_str().unwrap().contains("pool is empty"),
        "{r}"
    );
    let id = r["game_id"].as_str().unwrap();
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), DEADLINE);
    assert_eq!(v["verified"], true);
}

#[test]
fn the_operator_default_makes_bets_instant_unless_they_opt_out() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&["--instant-bets"]));
    wait_for_depth(&server, 2);
    let (status, r) = server.post("/api/v1/games/sicbo/bet", &json!({"bet_type": "big"}));
    assert_eq!(status, 200, "{r}");
    let (status, r) = server.post(
        "/api/v1/games/sicbo/bet",
        &json!({"bet_type": "big", "instant": false}),
    );
    assert_eq!(status, 202, "{r}");
    let (status, r) = server.post(
        "/api/v1/games/sicbo/bet",
        &json!({"bet_type": "big", "instant": "yes"}),
    );
    assert_eq!(status, 400, "{r}");
}

#[test]
fn a_restart_keeps_the_pool_and_its_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&[]));
    wait_for_depth(&server, 30);
    let body = json!({"bet_type": "odd", "instant": true});
    let first: Vec<Value> = (0..5)
        .map(|_| server.post("/api/v1/games/dice/bet", &body).1)
        .collect();
    server.crash();
    // No generator after the restart: whatever is served comes from the stored reserve.
    let server = Server::start(dir.path(), &pool_flags(&["--pool-threads", "0"]));
    let (status, r) = server.post("/api/v1/games/dice/bet", &body);
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["pool_index"], 6, "the order continues after the restart");
    for g in first.iter().chain([&r]) {
        let id = g["game_id"].as_str().unwrap();
        let (status, v) = server.get(&format!("/api/v1/verify/{id}"));
        assert_eq!((status, &v["verified"]), (200, &json!(true)), "{v}");
    }

    // Verification is recomputed from what is stored: an edited entry or payout shows.
    assert!(server.stop());
    let id0 = first[0]["game_id"].as_str().unwrap();
    let id1 = first[1]["game_id"].as_str().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).unwrap();
    conn.execute(
        "UPDATE pool_entries SET secret = zeroblob(32) WHERE idx = 1",
        [],
    )
    .unwrap();
    conn.execute(
        "UPDATE games SET payout = '999.00' WHERE game_id = ?1",
        [id1],
    )
    .unwrap();
    drop(conn);
    let server = Server::start(dir.path(), &pool_flags(&["--pool-threads", "0"]));
    let failed = |id: &str| -> Vec<String> {
        let (_, v) = server.get(&format!("/api/v1/verify/{id}"));
        assert_eq!(v["verified"], false, "{v}");
        failed_checks(&v)
    };
    assert_eq!(failed(id0), ["pool_entry_input"]);
    assert_eq!(failed(id1), ["payout"]);
}

#[test]
fn replicas_never_serve_an_entry_twice() {
    let schema = TestSchema::create("instant");
    let url = schema.url();
    let flags = pool_flags(&["--database-pool-size", "4"]);
    let servers: Vec<Server> = (0..3).map(|_| Server::start_pg(&url, &flags)).collect();
    wait_for_depth(&servers[0], 100);
    let urls: Vec<String> = servers.iter().map(|s| s.url.clone()).collect();
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let url = urls[t % 3].clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for i in 0..15 {
                    let r = ureq::post(&format!("{url}/api/v1/games/dice/bet"))
                        .send_json(json!({"bet_type": "odd", "instant": true,
                                          "player_seed": format!("{t}-{i}")}))
                        .unwrap();
                    assert_eq!(r.status(), 200);
                    let v: Value = r.into_json().unwrap();
                    got.push((
                        v["pool_index"].as_u64().unwrap(),
                        v["game_id"].as_str().unwrap().to_owned(),
                    ));
                }
                got
            })
        })
        .collect();
    let mut served: Vec<(u64, String)> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    served.sort();
    let indices: Vec<u64> = served.iter().map(|(i, _)| *i).collect();
    assert_eq!(
        indices,
        (1..=90).collect::<Vec<u64>>(),
        "each entry once, no gap"
    );
    for (i, (_, id)) in served.iter().enumerate().step_by(7) {
        let (status, v) = servers[i % 3].get(&format!("/api/v1/verify/{id}"));
        assert_eq!((status, &v["verified"]), (200, &json!(true)), "{v}");
    }
}

/// Bets that arrive while the pool is empty and being refilled: each takes the epoch path or
/// an entry committed before it arrived, and every pool-served one verifies.
#[test]
fn bets_during_a_refill_verify() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&[]));
    let body = json!({"bet_type": "even", "instant": true});
    let mut served = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    while served.len() < 40 {
        assert!(Instant::now() < deadline, "only {} served", served.len());
        let (status, r) = server.post("/api/v1/games/dice/bet", &body);
        match status {
            200 => served.push(r["game_id"].as_str().unwrap().to_owned()),
            202 => assert_eq!(r["pool_served"], false),
            other => panic!("{other}: {r}"),
        }
    }
    for id in &served {
        let (status, v) = server.get(&format!("/api/v1/verify/{id}"));
        assert_eq!((status, &v["verified"]), (200, &json!(true)), "{v}");
    }
}
