//! Signed acceptance and bound pool bets (docs/PROTOCOL.md §11, §14), as attacks: the operator
//! drops or alters a bet it signed, rewrites a served instant bet (with its own key at hand),
//! or a player forges or re-targets a signature. Each attack fails a named step of `vrs verify`.

use crate::server::{fast_with_small_pool, Server, FAST};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use vrs_protocol::acceptance::{AcceptanceSigner, Place};

const RESOLVE: Duration = Duration::from_secs(120);

/// `vrs verify` with `args` against `server`: exit code and output.
fn verify(server: &str, args: &[&str]) -> (i32, String) {
    let mut all = vec!["verify", "--server", server, "--group", "test512"];
    all.extend_from_slice(args);
    let out = crate::vrs(&all, "");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The line of step `name` in a checklist.
fn line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no {name} step in:\n{out}"))
}

fn save(dir: &Path, name: &str, v: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, v.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The bet leaf with field `index` replaced (the encoding of docs/PROTOCOL.md §11).
fn leaf_with(leaf: &[u8], index: usize, value: &str) -> Vec<u8> {
    let mut fields = vrs_protocol::commit::parse_leaf(leaf).unwrap();
    fields[index] = value.to_owned();
    let tag = vrs_protocol::commit::LEAF_TAG;
    let mut out = vec![tag.len() as u8];
    out.extend_from_slice(tag);
    for f in fields {
        out.extend_from_slice(&(f.len() as u16).to_be_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    out
}

fn db(dir: &Path) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(dir.join("vrs.sqlite3")).unwrap();
    c.busy_timeout(Duration::from_secs(10)).unwrap();
    c
}

fn bet(server: &Server, body: Value) -> Value {
    let (status, v) = server.post("/api/v1/games/dice/bet", &body);
    assert!(status == 202 || status == 200, "{status} {v}");
    v
}

/// An instant bet `body` (`"instant": true` is added), retried until the pool has filled.
fn instant_bet(server: &Server, body: Value) -> Value {
    let mut body = body;
    body["instant"] = json!(true);
    let deadline = Instant::now() + RESOLVE;
    loop {
        let v = bet(server, body.clone());
        if v["pool_served"] == true {
            return v;
        }
        assert!(Instant::now() < deadline, "the pool never served: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A fresh embedded-store server, a bet "odd" with seed "mine" on it, and the bet's 202 saved
/// in the data dir: (server, the 202, its game id, the saved file).
fn saved_bet(dir: &Path) -> (Server, Value, String, String) {
    let server = Server::start(dir, FAST);
    let accepted = bet(
        &server,
        json!({"bet_type": "odd", "amount": 5, "player_seed": "mine"}),
    );
    let id = accepted["game_id"].as_str().unwrap().to_owned();
    let file = save(dir, "bet.json", &accepted);
    (server, accepted, id, file)
}

#[test]
fn every_acceptance_is_signed_and_a_saved_one_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), FAST);
    let (_, info) = server.get("/");
    let key = info["acceptance_key"].as_str().unwrap().to_owned();
    assert_eq!(
        info["acceptance_keys"][0]["public_key"],
        json!(key),
        "{info}"
    );
    let accepted = bet(
        &server,
        json!({"bet_type": "odd", "amount": 1, "player_seed": "s"}),
    );
    let a = &accepted["acceptance"];
    assert_eq!(
        (a["kind"].as_str(), a["public_key"].as_str()),
        (Some("epoch"), Some(key.as_str()))
    );
    assert_eq!(a["epoch"], accepted["resolves_at_epoch"]);
    let (status, rng) = server.post("/api/v1/rng/generate", &json!({"client_seed": "c"}));
    assert_eq!(status, 202);
    assert_eq!(rng["acceptance"]["kind"], "epoch", "{rng}");
    let file = save(dir.path(), "bet.json", &accepted);
    let id = accepted["game_id"].as_str().unwrap();
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "acceptance")
        .unwrap();
    assert_eq!(check["passed"], true, "{check}");
    assert_eq!(v["proof"]["acceptance"], accepted["acceptance"]);
    let (code, out) = verify(&server.url, &["--acceptance", &file]);
    assert_eq!(code, 0, "{out}");
    for step in [
        "acceptance_signature",
        "acceptance_stored",
        "acceptance_in_tree",
        "acceptance",
    ] {
        assert!(line(&out, step).starts_with("ok"), "{out}");
    }
    // The raw RNG request's saved 202 verifies the same way.
    let rng_file = save(dir.path(), "rng.json", &rng);
    server.poll_ok(
        &format!("/api/v1/games/{}", rng["game_id"].as_str().unwrap()),
        RESOLVE,
    );
    let (code, out) = verify(&server.url, &["--acceptance", &rng_file]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_forged_or_retargeted_signature_fails() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), FAST);
    let accepted = bet(&server, json!({"bet_type": "even", "amount": 2}));
    let id = accepted["game_id"].as_str().unwrap();
    server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let acc = accepted["acceptance"].clone();
    let e = acc["epoch"].as_u64().unwrap();
    // Re-targeted: the same signature claimed for another epoch, or another time.
    let mut moved = accepted.clone();
    moved["acceptance"]["epoch"] = json!(e + 1);
    let mut later = accepted.clone();
    later["acceptance"]["accepted_at_ms"] = json!(acc["accepted_at_ms"].as_i64().unwrap() + 1);
    // Forged: a flipped signature bit; a valid signature by a key the operator never had.
    let mut flipped = accepted.clone();
    crate::tamper::flip(&mut flipped, "/acceptance/signature");
    let mine = AcceptanceSigner::generate();
    let leaf = hex::decode(acc["leaf"].as_str().unwrap()).unwrap();
    let signed = mine.sign(
        Place::Epoch(e),
        &leaf,
        acc["accepted_at_ms"].as_i64().unwrap(),
    );
    let mut foreign = accepted.clone();
    foreign["acceptance"]["public_key"] = json!(hex::encode(signed.public_key));
    foreign["acceptance"]["signature"] = json!(hex::encode(signed.signature));
    for (name, doc) in [
        ("moved", moved),
        ("later", later),
        ("flipped", flipped),
        ("foreign", foreign),
    ] {
        let file = save(dir.path(), name, &doc);
        let (code, out) = verify(&server.url, &["--acceptance", &file]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(
            line(&out, "acceptance_signature").starts_with("FAIL"),
            "{name}: {out}"
        );
    }
}

/// Stops the server, runs `edit` on its database, and starts it again on the same data dir.
fn with_store_edited(
    server: Server,
    dir: &Path,
    flags: &[&str],
    edit: impl FnOnce(&rusqlite::Connection),
) -> Server {
    assert!(server.stop(), "stops cleanly");
    edit(&db(dir));
    Server::start(dir, flags)
}

#[test]
fn the_acceptance_of_a_removed_bet_proves_the_removal() {
    let dir = tempfile::tempdir().unwrap();
    let (server, accepted, id, file) = saved_bet(dir.path());
    // The operator drops the bet (before or after its epoch closed: either way it is gone).
    let server = with_store_edited(server, dir.path(), FAST, |db| {
        assert_eq!(
            db.execute("DELETE FROM games WHERE game_id = ?1", [&id])
                .unwrap(),
            1
        );
    });
    let e = accepted["acceptance"]["epoch"].as_u64().unwrap();
    let deadline = Instant::now() + RESOLVE;
    while server.get(&format!("/api/v1/epochs/{e}")).1["status"] == "open" {
        assert!(Instant::now() < deadline, "epoch {e} never closed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (code, out) = verify(&server.url, &["--acceptance", &file]);
    assert_eq!(code, 1, "{out}");
    assert!(
        line(&out, "acceptance_signature").starts_with("ok"),
        "{out}"
    );
    let stored = line(&out, "acceptance_stored");
    assert!(
        stored.starts_with("FAIL") && stored.contains("removed"),
        "{out}"
    );
    assert!(
        line(&out, "acceptance_in_tree").starts_with("FAIL"),
        "{out}"
    );
}

#[test]
fn the_acceptance_of_an_altered_bet_proves_the_alteration() {
    let dir = tempfile::tempdir().unwrap();
    let (server, accepted, id, file) = saved_bet(dir.path());
    let leaf = hex::decode(accepted["acceptance"]["leaf"].as_str().unwrap()).unwrap();
    // The operator turns the player's "odd" into "even", consistently (leaf and field).
    let altered = leaf_with(&leaf, 2, "even");
    let server = with_store_edited(server, dir.path(), FAST, |db| {
        let n = db
            .execute(
                "UPDATE games SET bet_type = 'even', leaf = ?2 WHERE game_id = ?1",
                rusqlite::params![id, altered],
            )
            .unwrap();
        assert_eq!(n, 1);
    });
    server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let (code, out) = verify(&server.url, &["--acceptance", &file]);
    assert_eq!(code, 1, "{out}");
    let stored = line(&out, "acceptance_stored");
    assert!(
        stored.starts_with("FAIL") && stored.contains("bet_type signed \"odd\", stored \"even\""),
        "{out}"
    );
    assert!(
        line(&out, "acceptance_in_tree").starts_with("FAIL"),
        "{out}"
    );
    // The server's own copy of the signature no longer matches the stored bet either.
    assert!(line(&out, "acceptance").starts_with("FAIL"), "{out}");
}

/// The operator rewrites a served instant bet after its bet epoch closed: another seed and
/// amount, the outcome, payout and signature all recomputed with its own key. Without the
/// player's copy, `pool_bet_inclusion` fails everywhere.
#[test]
fn a_rewritten_pool_bet_fails_pool_bet_inclusion() {
    let dir = tempfile::tempdir().unwrap();
    let flags = fast_with_small_pool();
    let server = Server::start(dir.path(), &flags);
    let served = instant_bet(
        &server,
        json!({"bet_type": "odd", "amount": 1, "player_seed": "p"}),
    );
    assert_eq!(served["acceptance"]["kind"], "pool", "{served}");
    assert_eq!(served["acceptance"]["pool_index"], served["pool_index"]);
    let id = served["game_id"].as_str().unwrap().to_owned();
    // Wait until its bet epoch has closed and resolved: the bet is bound.
    let deadline = Instant::now() + RESOLVE;
    let honest = loop {
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        let e = v["proof"]["bet_epoch"]["epoch"].as_u64().unwrap();
        if v["proof"]["bet_epoch"]["status"] == "bound"
            && server.get(&format!("/api/v1/epochs/{e}")).1["status"] == "resolved"
        {
            break v;
        }
        assert!(Instant::now() < deadline, "never bound: {v}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(honest["verified"], true, "{honest}");
    let (code, out) = verify(&server.url, &[&id]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "pool_bet_inclusion").starts_with("ok"), "{out}");

    let key = std::fs::read_to_string(dir.path().join("acceptance.key")).unwrap();
    let operator = AcceptanceSigner::from_hex(&key).unwrap();
    let y = hex::decode(honest["proof"]["y"].as_str().unwrap()).unwrap();
    let server = with_store_edited(server, dir.path(), &flags, |db| {
        let (index, created): (i64, i64) = db
            .query_row(
                "SELECT pool_index, created_at_ms FROM games WHERE game_id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let mut g = vrs_store::NewGame {
            game_id: id.clone(),
            request_id: String::new(),
            game: "dice".into(),
            bet_type: Some("odd".into()),
            target: None,
            combo: None,
            amount: Some("9.00".into()),
            player_id: "anonymous".into(),
            player_seed: Some("rewritten".into()),
            operator_key: "vrs-house".into(),
            created_at_ms: created,
            leaf: Vec::new(),
            acceptance: None,
        };
        let (_, stored_leaf): (String, Vec<u8>) = db
            .query_row(
                "SELECT player_id, leaf FROM games WHERE game_id = ?1",
                [&id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        let fields = vrs_protocol::commit::parse_leaf(&stored_leaf).unwrap();
        g.player_id = fields[6].clone();
        g.operator_key = fields[8].clone();
        g.leaf = vrs_protocol::commit::bet_leaf(&g);
        let r = vrs_protocol::outcome::derive(&y, &g)
            .unwrap()
            .resolution(&id);
        let signed = operator.sign(Place::Pool(index as u64), &g.leaf, created);
        let dice: Vec<String> = r.dice.iter().map(u8::to_string).collect();
        db.execute(
            "UPDATE games SET player_seed = 'rewritten', amount = '9.00', leaf = ?2,
                 rng_value = ?3, dice = ?4, won = ?5, payout = ?6, acceptance_sig = ?7
             WHERE game_id = ?1",
            rusqlite::params![
                id,
                g.leaf,
                r.rng_value,
                dice.join(","),
                r.won,
                r.payout,
                signed.signature.to_vec()
            ],
        )
        .unwrap();
    });
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], false, "{v}");
    for c in v["checks"].as_array().unwrap() {
        let expect = c["name"] != "pool_bet_inclusion";
        assert_eq!(
            c["passed"], expect,
            "only pool_bet_inclusion catches it: {c}"
        );
    }
    let (code, out) = verify(&server.url, &[&id]);
    assert_eq!(code, 1, "{out}");
    assert!(
        line(&out, "pool_bet_inclusion").starts_with("FAIL"),
        "{out}"
    );
    for step in ["pool_game_id", "rng_value", "dice", "payout", "acceptance"] {
        assert!(line(&out, step).starts_with("ok"), "{step}: {out}");
    }
}

/// The claim of docs/PROTOCOL.md §14 ("The anchor"): an epoch without bets is not computable
/// in advance. Two fresh servers with the same group, T and no bets differ from epoch 1 on,
/// and so do their first pool batch seeds.
#[test]
fn two_fresh_servers_share_no_output_and_no_batch_seed() {
    // One T for both (no calibration), epochs as long as T takes.
    let mut flags = vec!["--modulus", "test512", "--iterations", "300000"];
    flags.extend_from_slice(&fast_with_small_pool()[FAST.len()..]);
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let servers = [
        Server::start(d1.path(), &flags),
        Server::start(d2.path(), &flags),
    ];
    let seen: Vec<(Value, Value)> = servers
        .iter()
        .map(|s| {
            let deadline = Instant::now() + RESOLVE;
            loop {
                let (_, e1) = s.get("/api/v1/epochs/1");
                let (status, b1) = s.get("/api/v1/pool/batches/1");
                if e1["status"] == "resolved" && status == 200 {
                    assert_eq!(e1["bet_count"], 0, "no bets: {e1}");
                    break (e1["y"].clone(), b1["seed"].clone());
                }
                assert!(
                    Instant::now() < deadline,
                    "epoch 1 or pool batch 1 never came"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .collect();
    assert!(seen[0].0.is_string() && seen[0].1.is_string(), "{seen:?}");
    assert_ne!(seen[0].0, seen[1].0, "y_1 was computable in advance");
    assert_ne!(
        seen[0].1, seen[1].1,
        "the batch-1 seed was computable in advance"
    );
}

/// A pool game served before version 2 (no signature, no bet epoch), in a store that began
/// signing after it: verifies by version 1's rules everywhere. The same game stripped of its
/// signature and binding while the store already signed fails: a downgrade is no escape.
#[test]
fn a_version_1_pool_game_still_verifies_and_a_stripped_one_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let flags = fast_with_small_pool();
    let server = Server::start(dir.path(), &flags);
    let served = instant_bet(&server, json!({"bet_type": "even", "amount": 1}));
    let id = served["game_id"].as_str().unwrap().to_owned();
    server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let strip = |db: &rusqlite::Connection| {
        db.execute(
            "UPDATE games SET acceptance_key = NULL, acceptance_sig = NULL, bet_epoch = NULL
             WHERE game_id = ?1",
            [&id],
        )
        .unwrap();
    };
    // Stripped while the store signs: both version-2 steps fail.
    let server = with_store_edited(server, dir.path(), &flags, strip);
    let (code, out) = verify(&server.url, &[&id]);
    assert_eq!(code, 1, "{out}");
    assert!(line(&out, "acceptance").starts_with("FAIL"), "{out}");
    assert!(
        line(&out, "pool_bet_inclusion").starts_with("FAIL"),
        "{out}"
    );
    // An upgraded store: its first key came after the game was served.
    let server = with_store_edited(server, dir.path(), &flags, |db| {
        db.execute(
            "UPDATE acceptance_keys SET since_ms = since_ms + 3600000",
            [],
        )
        .unwrap();
    });
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], true, "{v}");
    assert_eq!(v["proof"]["bet_epoch"], Value::Null, "{v}");
    let (code, out) = verify(&server.url, &[&id]);
    assert_eq!(code, 0, "{out}");
    assert!(line(&out, "acceptance").contains("not signed"), "{out}");
    assert!(
        line(&out, "pool_bet_inclusion").contains("version 2"),
        "{out}"
    );
}

/// Keys from configuration: VRS_SIGNING_KEY and --signing-key-file are used and published;
/// a key file that does not exist is refused (never silently replaced).
#[test]
fn configured_keys_sign_and_are_published() {
    let dir = tempfile::tempdir().unwrap();
    let seed = "11".repeat(32);
    let expected = hex::encode(AcceptanceSigner::from_hex(&seed).unwrap().public_key());
    let server = Server::start_env(dir.path(), FAST, &[("VRS_SIGNING_KEY", seed.as_str())]);
    let accepted = bet(&server, json!({"bet_type": "odd", "amount": 1}));
    assert_eq!(accepted["acceptance"]["public_key"], json!(expected));
    assert!(
        !dir.path().join("acceptance.key").exists(),
        "no key file made"
    );
    drop(server);
    let file = dir.path().join("k.hex");
    std::fs::write(&file, format!("{}\n", "22".repeat(32))).unwrap();
    let other = hex::encode(
        AcceptanceSigner::from_hex(&"22".repeat(32))
            .unwrap()
            .public_key(),
    );
    let server = Server::start(
        dir.path(),
        &[FAST, &["--signing-key-file", file.to_str().unwrap()]].concat(),
    );
    let (_, info) = server.get("/");
    assert_eq!(info["acceptance_key"], json!(other));
    let keys: Vec<&str> = info["acceptance_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["public_key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [expected.as_str(), other.as_str()],
        "both published, oldest first"
    );
    // The first bet's acceptance still verifies: its key stays published.
    let saved = save(dir.path(), "old.json", &accepted);
    let (code, out) = verify(&server.url, &["--acceptance", &saved]);
    assert_eq!(code, 0, "{out}");
    drop(server);
    let out = crate::vrs(
        &[
            "serve",
            "--data-dir",
            dir.path().to_str().unwrap(),
            "--signing-key-file",
            "/nonexistent/k",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--signing-key-file"),
        "{out:?}"
    );
}

/// Two replicas on one PostgreSQL, each with its own key: both are published, and a bet taken
/// by one verifies through the other.
#[test]
fn replicas_publish_each_key() {
    let schema = crate::pg::TestSchema::create("acceptkeys");
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let start = |d: &Path| {
        Server::start_pg(
            &schema.url(),
            &[FAST, &["--data-dir", d.to_str().unwrap()]].concat(),
        )
    };
    let (a, b) = (start(d1.path()), start(d2.path()));
    let accepted = bet(&b, json!({"bet_type": "odd", "amount": 1}));
    let (_, info) = a.get("/");
    let keys = info["acceptance_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2, "{info}");
    assert!(keys
        .iter()
        .any(|k| k["public_key"] == accepted["acceptance"]["public_key"]));
    let id = accepted["game_id"].as_str().unwrap();
    a.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    let saved = save(d1.path(), "bet.json", &accepted);
    let (code, out) = verify(&a.url, &["--acceptance", &saved]);
    assert_eq!(code, 0, "{out}");
}
