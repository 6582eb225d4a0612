//! What verification keeps in memory (issue 31, finding 5): a kept report is byte for byte the
//! report recomputed from the store (`--verify-cache 0`), for epoch games and pool-served
//! games alike, and an epoch's leaf hashes can be asked for by range while the default answer
//! stays complete.

use crate::serve_pool::{pool_flags, wait_for_depth};
use crate::server::Server;
use serde_json::{json, Value};
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(90);

/// Places epoch bets and instant bets and waits until every one verifies; returns their ids.
fn placed_games(server: &Server) -> Vec<String> {
    wait_for_depth(server, 10);
    let mut ids = Vec::new();
    for i in 0..12 {
        let body =
            json!({"bet_type": "odd", "player_seed": format!("s{i}"), "instant": i % 3 == 0});
        let (status, r) = server.post("/api/v1/games/dice/bet", &body);
        assert!(status == 200 || status == 202, "{status} {r}");
        ids.push(r["game_id"].as_str().unwrap().to_owned());
    }
    // A pool game's report is final once its bet epoch has closed: a bet placed after the
    // others resolves after every epoch they were bound to has closed.
    let (status, r) = server.post("/api/v1/games/dice/bet", &json!({"bet_type": "even"}));
    assert_eq!(status, 202, "{r}");
    server.poll_ok(
        &format!("/api/v1/verify/{}", r["game_id"].as_str().unwrap()),
        RESOLVE,
    );
    ids
}

fn verify(server: &Server, id: &str) -> Value {
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], true, "{v}");
    v
}

#[test]
fn a_kept_report_is_the_report_recomputed_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&[]));
    wait_for_depth(&server, 10);
    // An instant game verified before its bet epoch closes: that report is not final, and must
    // not be what is served once the epoch has closed.
    let (status, early) = server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "odd", "instant": true}),
    );
    assert_eq!(status, 200, "{early}");
    let early = early["game_id"].as_str().unwrap().to_owned();
    let v = verify(&server, &early);
    assert_eq!(v["proof"]["bet_epoch"]["status"], "pending", "{v}");
    let mut ids = placed_games(&server);
    let v = verify(&server, &early);
    assert_eq!(v["proof"]["bet_epoch"]["status"], "bound", "{v}");
    ids.push(early);
    let first: Vec<Value> = ids.iter().map(|id| verify(&server, id)).collect();
    let again: Vec<Value> = ids.iter().map(|id| verify(&server, id)).collect();
    assert_eq!(first, again, "a report served twice is the same report");
    let pool = first.iter().filter(|v| v["proof"]["pool_index"].is_u64());
    assert!(pool.count() >= 3, "pool-served games are among them");
    assert!(server.stop());

    let uncached = Server::start(
        dir.path(),
        &pool_flags(&["--verify-cache", "0", "--pool-threads", "0"]),
    );
    for (id, kept) in ids.iter().zip(&again) {
        assert_eq!(&verify(&uncached, id), kept, "game {id}");
    }
}

#[test]
fn leaf_hashes_come_by_range_and_complete_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &pool_flags(&["--pool-threads", "0"]));
    let mut last = String::new();
    for i in 0..9 {
        let body = json!({"bet_type": "odd", "player_seed": format!("r{i}")});
        let (status, r) = server.post("/api/v1/games/dice/bet", &body);
        assert_eq!(status, 202, "{r}");
        last = r["game_id"].as_str().unwrap().to_owned();
    }
    let v = server.poll_ok(&format!("/api/v1/verify/{last}"), RESOLVE);
    let n = v["proof"]["leaf_index"].as_u64().unwrap();
    let epoch = v["replay_steps"][0]["epoch"].as_u64().unwrap();
    let (status, full) = server.get(&format!("/api/v1/epochs/{epoch}"));
    assert_eq!(status, 200, "{full}");
    let all = full["leaf_hashes"].as_array().unwrap().clone();
    assert_eq!(all.len() as u64, full["bet_count"].as_u64().unwrap());
    assert!(all.len() as u64 > n, "{full}");
    assert!(full.get("leaf_from").is_none(), "{full}");

    let page = |q: &str| {
        let (status, r) = server.get(&format!("/api/v1/epochs/{epoch}?{q}"));
        assert_eq!(status, 200, "{q}: {r}");
        r
    };
    let r = page("leaf_from=1&leaf_limit=2");
    assert_eq!(r["leaf_hashes"].as_array().unwrap(), &all[1..3]);
    assert_eq!(r["leaf_from"], 1);
    assert_eq!(
        r["bet_count"], full["bet_count"],
        "the count stays the epoch's"
    );
    let r = page("leaf_limit=0");
    assert_eq!(
        (r["leaf_hashes"].as_array().unwrap().len(), &r["leaf_from"]),
        (0, &json!(0))
    );
    let r = page(&format!("leaf_from={}", all.len() + 5));
    assert!(r["leaf_hashes"].as_array().unwrap().is_empty());
    // Everything but the leaf hashes and leaf_from is the complete answer.
    let mut trimmed = page("leaf_from=2");
    assert_eq!(trimmed["leaf_hashes"].as_array().unwrap(), &all[2..]);
    trimmed["leaf_hashes"] = full["leaf_hashes"].clone();
    trimmed.as_object_mut().unwrap().remove("leaf_from");
    assert_eq!(trimmed, full);

    for bad in ["leaf_from=-1", "leaf_limit=ten", "leaf_from=1.5"] {
        let (status, r) = server.get(&format!("/api/v1/epochs/{epoch}?{bad}"));
        assert_eq!(status, 400, "{bad}: {r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("non-negative integer"),
            "{r}"
        );
    }
}
