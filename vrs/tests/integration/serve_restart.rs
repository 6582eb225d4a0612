//! Stop and restart on the same data dir: accepted bets still resolve, resolved games still
//! verify, the epoch chain continues; and verification is recomputed from what is stored, so
//! tampering with the store shows.

use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(60);

fn bet(server: &Server, body: Value) -> (String, u64) {
    let (status, r) = server.post("/api/v1/games/dice/bet", &body);
    assert_eq!(status, 202, "{r}");
    (
        r["game_id"].as_str().unwrap().to_owned(),
        r["resolves_at_epoch"].as_u64().unwrap(),
    )
}

fn verified(server: &Server, id: &str) -> Value {
    server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE)
}

/// The names of the checks a verification response failed.
pub fn failed_checks(v: &Value) -> Vec<String> {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn restart_resolves_accepted_bets_and_continues_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), FAST);
    let (early, _) = bet(&server, json!({"bet_type": "odd"}));
    assert_eq!(verified(&server, &early)["verified"], true);
    let (_, before) = server.get("/api/v1/entropy");

    // Long epochs: the next bets are certainly still pending when the server stops.
    drop(server);
    let slow = ["--modulus", "test512", "--epoch-ms", "3000"];
    let server = Server::start(dir.path(), &slow);
    let pending: Vec<(String, u64)> = (0..3)
        .map(|i| {
            bet(
                &server,
                json!({"bet_type": "exact", "target": 7, "player_seed": format!("p{i}")}),
            )
        })
        .collect();
    for (id, _) in &pending {
        let (status, g) = server.get(&format!("/api/v1/games/{id}"));
        assert_eq!(status, 202, "{g}");
        assert_eq!(g["status"], "pending");
    }
    assert!(server.stop(), "clean exit on SIGTERM");

    let server = Server::start(dir.path(), FAST);
    for (id, epoch) in &pending {
        let v = verified(&server, id);
        assert_eq!(v["verified"], true, "{v}");
        assert_eq!(v["proof"]["vdfEpoch"], *epoch);
    }
    let v = verified(&server, &early);
    assert_eq!(
        v["verified"], true,
        "a game resolved before the restart still verifies"
    );
    let (_, after) = server.get("/api/v1/entropy");
    assert!(after["epoch"].as_u64() > before["epoch"].as_u64());
    // Chain continuity across the restart is one of the verification's checks.
    let (id, _) = bet(&server, json!({"bet_type": "even"}));
    let v = verified(&server, &id);
    assert!(failed_checks(&v).is_empty(), "{v}");
}

#[test]
fn a_crash_during_the_vdf_recomputes_the_same_epoch_on_restart() {
    let dir = tempfile::tempdir().unwrap();
    // T large enough that the VDF is certainly still running when the test kills the server.
    let slow_vdf = ["--modulus", "test512", "--iterations", "2000000"];
    let server = Server::start(dir.path(), &slow_vdf);
    let (id, epoch) = bet(
        &server,
        json!({"bet_type": "exact", "target": 8, "player_seed": "c"}),
    );
    let deadline = std::time::Instant::now() + RESOLVE;
    loop {
        let (_, stats) = server.get("/api/v1/stats");
        if stats["epoch"]["computing"] == epoch {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "epoch {epoch} never started: {stats}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    server.crash();

    let server = Server::start(dir.path(), FAST);
    let v = verified(&server, &id);
    assert_eq!(v["verified"], true, "{v}");
    assert_eq!(v["proof"]["vdfEpoch"], epoch);
    assert_eq!(v["proof"]["iterations"], 2_000_000, "the stored T is kept");
}

/// Flips one byte of a column of one row, with the server stopped.
fn flip(dir: &Path, sql_select: &str, sql_update: &str, key: &dyn rusqlite::ToSql) {
    let conn = rusqlite::Connection::open(dir.join("vrs.sqlite3")).unwrap();
    let mut bytes: Vec<u8> = conn.query_row(sql_select, [key], |r| r.get(0)).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    assert_eq!(
        conn.execute(sql_update, rusqlite::params![bytes, key])
            .unwrap(),
        1
    );
}

#[test]
fn a_flipped_byte_in_the_stored_proof_or_result_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), FAST);
    let (a, epoch_a) = bet(&server, json!({"bet_type": "over7", "amount": 5}));
    let v = verified(&server, &a);
    assert_eq!(v["verified"], true);
    // A second game in a later epoch, for the payout tamper.
    let mut b;
    loop {
        b = bet(&server, json!({"bet_type": "under7", "amount": 5}));
        if b.1 != epoch_a {
            break;
        }
    }
    assert_eq!(verified(&server, &b.0)["verified"], true);
    assert!(server.stop());

    let e = epoch_a as i64;
    flip(
        dir.path(),
        "SELECT pi FROM epochs WHERE number = ?1",
        "UPDATE epochs SET pi = ?1 WHERE number = ?2",
        &e,
    );
    let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).unwrap();
    conn.execute(
        "UPDATE games SET payout = CASE WHEN payout = '0.00' THEN '11.88' ELSE '0.00' END WHERE game_id = ?1",
        [&b.0],
    )
    .unwrap();
    drop(conn);

    let server = Server::start(dir.path(), FAST);
    let v = verified(&server, &a);
    assert_eq!(v["verified"], false, "{v}");
    assert_eq!(failed_checks(&v), ["vdf_proof"]);
    let v = verified(&server, &b.0);
    assert_eq!(v["verified"], false, "{v}");
    assert_eq!(failed_checks(&v), ["payout"]);
}
