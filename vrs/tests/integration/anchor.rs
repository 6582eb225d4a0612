//! Anchoring against a real EVM node (ganache on loopback): batch roots go on chain once each,
//! through RPC outages, restarts, stuck transactions and leader failover, and proofs name the
//! transaction.

use crate::evm::{Ganache, ADDRESS, KEY, TAG_HEX};
use crate::pg::TestSchema;
use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};
use vrs_engine::anchor::{epoch_record_hash, AnchorLeaf, EpochRecord, LeafKind};
use vrs_engine::merkle;

pub const DEADLINE: Duration = Duration::from_secs(90);

fn flags<'a>(g: &'a Ganache, extra: &[&'a str]) -> Vec<&'a str> {
    let mut f = FAST.to_vec();
    f.extend(["--anchor-rpc-url", &g.url, "--anchor-every", "3"]);
    f.extend(["--pool-threads", "0"]);
    f.extend(extra);
    f
}

pub const ENV: &[(&str, &str)] = &[("VRS_ANCHOR_PRIVATE_KEY", KEY)];

pub fn anchoring(s: &Server) -> Value {
    let (status, body) = s.get("/api/v1/stats");
    assert_eq!(status, 200, "{body}");
    body["anchoring"].clone()
}

/// Polls `cond` on the stats' anchoring object until it holds.
pub fn wait_anchoring(s: &Server, what: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let a = anchoring(s);
        if cond(&a) {
            return a;
        }
        assert!(Instant::now() < deadline, "{what}: still {a:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn confirmed(a: &Value) -> u64 {
    a["batches"]["confirmed"].as_u64().unwrap_or(0)
}

fn dice_bet(s: &Server) -> String {
    let (status, body) = s.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "odd", "amount": 1, "player_seed": "anchored"}),
    );
    assert_eq!(status, 202, "{body}");
    body["game_id"].as_str().unwrap().to_owned()
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap_or_else(|| panic!("not hex: {v}"))).unwrap()
}

fn hash(v: &Value) -> [u8; 32] {
    bytes(v).try_into().unwrap()
}

/// Every anchor transaction on chain carries a different root and a different nonce.
pub fn assert_no_duplicates(txs: &[(String, u64, String)]) {
    let roots: BTreeSet<&String> = txs.iter().map(|t| &t.2).collect();
    let nonces: BTreeSet<u64> = txs.iter().map(|t| t.1).collect();
    assert_eq!(
        roots.len(),
        txs.len(),
        "a root went on chain twice: {txs:#?}"
    );
    assert_eq!(nonces.len(), txs.len(), "a nonce was used twice: {txs:#?}");
}

/// The verification of `game_id` once its batch is confirmed: the transaction it names is on
/// chain with the batch root as calldata, and the path from the epoch record (recomputed here
/// from the proof's own fields) leads to that root.
pub fn check_game_anchor(s: &Server, g: &Ganache, game_id: &str) {
    let deadline = Instant::now() + DEADLINE;
    let v = loop {
        let v = s.poll_ok(&format!("/api/v1/verify/{game_id}"), DEADLINE);
        if v["proof"]["anchor_status"] == "confirmed" {
            break v;
        }
        assert!(
            v["proof"]["anchorTx"].is_null(),
            "anchorTx before confirmation: {v:#}"
        );
        assert!(Instant::now() < deadline, "not anchored: {:#}", v["proof"]);
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(v["verified"], true, "{:#}", v["checks"]);
    let p = &v["proof"];
    let tx = p["anchorTx"].as_str().expect("anchorTx once confirmed");
    assert_eq!(p["legacyTx"], p["anchorTx"]);
    assert_eq!(p["anchorChain"], "base");
    assert_eq!(p["anchorChainId"], 8453);
    let check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "anchor_inclusion")
        .expect("an anchor_inclusion check");
    assert_eq!(check["passed"], true, "{check}");

    // The epoch record, from the proof's fields alone.
    let record = epoch_record_hash(&EpochRecord {
        epoch: p["vdfEpoch"].as_u64().unwrap(),
        iterations: p["iterations"].as_u64().unwrap(),
        bets_root: &hash(&p["bets_root"]),
        prev_y: &bytes(&p["previous_output"]),
        x: &bytes(&p["x"]),
        y: &bytes(&p["y"]),
        l: &bytes(&p["l"]),
        pi: &bytes(&p["pi"]),
    });
    let leaf = AnchorLeaf {
        kind: LeafKind::Epoch,
        number: p["vdfEpoch"].as_u64().unwrap(),
        hash: record,
    };
    let a = &p["anchor"];
    assert_eq!(hex::encode(leaf.bytes()), a["leaf"].as_str().unwrap());
    let path: Vec<[u8; 32]> = a["audit_path"]
        .as_array()
        .unwrap()
        .iter()
        .map(hash)
        .collect();

    // The root as the chain has it.
    let on_chain = g.rpc("eth_getTransactionByHash", json!([tx]));
    let input = on_chain["input"].as_str().unwrap();
    let root_hex = input
        .strip_prefix(&format!("0x{TAG_HEX}"))
        .unwrap_or_else(|| panic!("calldata {input} does not start with the tag"));
    assert_eq!(root_hex, a["root"].as_str().unwrap());
    assert_eq!(input.len(), 2 + 2 * 46);
    assert_eq!(on_chain["from"].as_str().unwrap().to_lowercase(), ADDRESS);
    assert_eq!(on_chain["to"].as_str().unwrap().to_lowercase(), ADDRESS);
    assert_eq!(on_chain["value"], "0x0");
    assert_eq!(on_chain["type"], "0x2", "an EIP-1559 transaction");
    let root: [u8; 32] = hex::decode(root_hex).unwrap().try_into().unwrap();
    assert!(merkle::verify_inclusion(
        &merkle::leaf_hash(&leaf.bytes()),
        a["leaf_index"].as_u64().unwrap(),
        a["tree_size"].as_u64().unwrap(),
        &path,
        &root
    ));
    let receipt = g.rpc("eth_getTransactionReceipt", json!([tx]));
    assert_eq!(receipt["status"], "0x1");
}

#[test]
fn a_batch_root_goes_on_chain_and_verification_names_its_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let s = Server::start_env(&dir.path().join("data"), &flags(&g, &[]), ENV);
    let game = dice_bet(&s);
    // Pending at first: batched only after three resolved epochs.
    let early = s.poll_ok(&format!("/api/v1/verify/{game}"), DEADLINE);
    assert!(early["proof"]["anchorTx"].is_null() || early["proof"]["anchor_status"] == "confirmed");
    check_game_anchor(&s, &g, &game);

    let a = wait_anchoring(&s, "two confirmed batches", |a| confirmed(a) >= 2);
    assert_eq!(a["enabled"], true);
    assert_eq!(a["state"], "active");
    assert_eq!(a["address"], ADDRESS);
    assert_eq!(a["chain_id"], 8453);
    let txs = g.anchor_txs(ADDRESS);
    assert_no_duplicates(&txs);
    // Every confirmed batch's transaction is the one on chain with its root.
    let last = &a["last_anchor"];
    assert!(
        txs.iter().any(|t| Some(t.0.as_str()) == last["tx"].as_str()
            && Some(t.2.as_str()) == last["root"].as_str()),
        "{last:#} not among {txs:#?}"
    );
    let (_, info) = s.get("/");
    assert_eq!(info["anchoring"]["enabled"], true);
    // The key is never shown.
    for body in [info.to_string(), s.get("/api/v1/stats").1.to_string()] {
        assert!(!body.contains(&KEY[2..]), "the private key leaked: {body}");
    }
}

#[test]
fn anchoring_resumes_after_the_rpc_comes_back_without_sending_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let s = Server::start_env(&dir.path().join("data"), &flags(&g, &[]), ENV);
    wait_anchoring(&s, "a first confirmed batch", |a| confirmed(a) >= 1);

    g.stop();
    let down = wait_anchoring(&s, "the outage reported", |a| {
        a["state"] == "retrying" && a["last_error"].is_string()
    });
    assert!(down["consecutive_failures"].as_u64().unwrap() >= 1);
    // Hosted RPC URLs carry API keys: errors never repeat the URL.
    let err = down["last_error"].as_str().unwrap();
    assert!(!err.contains(&g.url), "{err}");
    // Epochs and bets carry on meanwhile.
    let game = dice_bet(&s);
    s.poll_ok(&format!("/api/v1/games/{game}"), DEADLINE);
    let epoch_during = s.get("/api/v1/stats").1["epoch"]["last_resolved"]
        .as_u64()
        .unwrap();

    g.restart();
    let a = wait_anchoring(&s, "the backlog anchored", |a| {
        a["anchored_through_epoch"].as_u64().unwrap_or(0) >= epoch_during && a["state"] == "active"
    });
    assert!(a["last_error"].is_string(), "the last error stays visible");
    check_game_anchor(&s, &g, &game);
    let txs = g.anchor_txs(ADDRESS);
    assert_no_duplicates(&txs);
    let a = anchoring(&s);
    let sent = confirmed(&a) + a["batches"]["submitted"].as_u64().unwrap();
    assert!(
        txs.len() as u64 <= sent,
        "{} anchor transactions on chain for {sent} sent batches",
        txs.len()
    );
}

#[test]
fn a_restart_between_submission_and_confirmation_confirms_the_same_transaction() {
    let dir = tempfile::tempdir().unwrap();
    // No block time: a block only when a transaction arrives, so the first batch's transaction
    // is mined but waits for its second confirmation until this test mines one.
    let g = Ganache::start(&dir.path().join("chain"), 8453, false);
    let data = dir.path().join("data");
    let s = Server::start_env(&data, &flags(&g, &[]), ENV);
    let deadline = Instant::now() + DEADLINE;
    while g.anchor_txs(ADDRESS).is_empty() {
        assert!(Instant::now() < deadline, "no anchor transaction");
        std::thread::sleep(Duration::from_millis(100));
    }
    let a = anchoring(&s);
    assert_eq!(confirmed(&a), 0, "confirmed with one block: {a:#}");
    assert_eq!(a["batches"]["submitted"], 1);
    s.crash();

    let s = Server::start_env(&data, &flags(&g, &[]), ENV);
    g.rpc("evm_mine", json!([]));
    wait_anchoring(&s, "the first batch confirmed", |a| confirmed(a) >= 1);
    let first = g.anchor_txs(ADDRESS)[0].clone();
    let db = rusqlite::Connection::open(data.join("vrs.sqlite3")).unwrap();
    let confirmed_by: String = db
        .query_row(
            "SELECT '0x' || lower(hex(tx_hash)) FROM anchor_batches WHERE number = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        confirmed_by, first.0,
        "batch 1 is confirmed by the transaction sent before the crash"
    );
    // Later batches still need blocks to confirm; mine a few and check nothing went twice.
    let deadline = Instant::now() + DEADLINE;
    while confirmed(&anchoring(&s)) < 3 {
        assert!(Instant::now() < deadline, "later batches not confirmed");
        g.rpc("evm_mine", json!([]));
        std::thread::sleep(Duration::from_millis(100));
    }
    let txs = g.anchor_txs(ADDRESS);
    assert_eq!(
        txs[0], first,
        "the first batch's transaction was replaced or resent"
    );
    assert_no_duplicates(&txs);
}

#[test]
fn a_stuck_transaction_is_replaced_with_the_same_nonce_and_a_higher_fee() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    g.rpc("miner_stop", json!([]));
    let data = dir.path().join("data");
    let s = Server::start_env(&data, &flags(&g, &["--anchor-replace-after", "1"]), ENV);
    // Let it submit, wait, and replace at least once while nothing is mined.
    let deadline = Instant::now() + DEADLINE;
    let db = rusqlite::Connection::open(data.join("vrs.sqlite3")).unwrap();
    let recorded = |db: &rusqlite::Connection| -> Vec<(String, i64, String)> {
        let mut st = db
            .prepare("SELECT hex(hash), nonce, max_fee FROM anchor_txs WHERE batch = 1 ORDER BY sent_at_ms")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    while recorded(&db).len() < 2 {
        assert!(
            Instant::now() < deadline,
            "never replaced: {:?}",
            recorded(&db)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    g.rpc("miner_start", json!([]));
    wait_anchoring(&s, "the batch confirmed", |a| confirmed(a) >= 1);

    let txs = recorded(&db);
    let nonces: BTreeSet<i64> = txs.iter().map(|t| t.1).collect();
    assert_eq!(nonces.len(), 1, "replacements keep the nonce: {txs:?}");
    let fees: Vec<u128> = txs.iter().map(|t| t.2.parse().unwrap()).collect();
    assert!(fees.windows(2).all(|w| w[1] > w[0]), "fees rise: {fees:?}");
    // The batch is confirmed by one of the transactions it recorded.
    let confirmed_by: String = db
        .query_row(
            "SELECT hex(tx_hash) FROM anchor_batches WHERE number = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        txs.iter().any(|t| t.0 == confirmed_by),
        "{confirmed_by} not in {txs:?}"
    );
    // Everything on chain for batch 1 is one of its recorded transactions, at its one nonce.
    // (ganache 7 can mine a replaced transaction beside its replacement, ganache issue #3794;
    // a real node keeps one per nonce, so the count of them is not asserted here.)
    let on_chain = g.anchor_txs(ADDRESS);
    let first_root = on_chain[0].2.clone();
    for t in on_chain.iter().filter(|t| t.2 == first_root) {
        let h = t.0.trim_start_matches("0x").to_uppercase();
        assert!(txs.iter().any(|r| r.0 == h), "{t:?} was not recorded");
        assert_eq!(t.1 as i64, txs[0].1);
    }
    let later: Vec<_> = on_chain.into_iter().filter(|t| t.2 != first_root).collect();
    assert_no_duplicates(&later);
}

#[test]
fn a_wrong_chain_id_is_refused_and_nothing_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let s = Server::start_env(
        &dir.path().join("data"),
        &flags(
            &g,
            &["--anchor-chain-id", "10", "--anchor-chain-name", "optimism"],
        ),
        ENV,
    );
    let a = wait_anchoring(&s, "refused", |a| a["state"] == "refused");
    let err = a["last_error"].as_str().unwrap();
    assert!(err.contains("8453") && err.contains("10"), "{err}");
    // The service goes on: epochs resolve, bets settle, proofs name the configured chain.
    let game = dice_bet(&s);
    let v = s.poll_ok(&format!("/api/v1/verify/{game}"), DEADLINE);
    assert_eq!(v["verified"], true);
    assert_eq!(v["proof"]["anchorChainId"], 10);
    assert_eq!(v["proof"]["anchorChain"], "optimism");
    assert!(v["proof"]["anchorTx"].is_null());
    let (_, info) = s.get("/");
    assert_eq!(info["anchoring"]["state"], "refused");
    let sent = g.rpc("eth_getTransactionCount", json!([ADDRESS, "latest"]));
    assert_eq!(sent, "0x0", "a transaction went to the wrong chain");
}

#[test]
fn without_an_rpc_url_anchoring_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path(), FAST);
    let (_, info) = s.get("/");
    assert_eq!(info["anchoring"]["enabled"], false);
    assert!(info["anchoring"]["message"]
        .as_str()
        .unwrap()
        .contains("disabled"));
    let game = dice_bet(&s);
    let v = s.poll_ok(&format!("/api/v1/verify/{game}"), DEADLINE);
    assert_eq!(v["verified"], true);
    assert!(v["proof"]["anchorTx"].is_null() && v["proof"]["legacyTx"].is_null());
    assert_eq!(v["proof"]["anchor_status"], "pending");
    let a = anchoring(&s);
    assert_eq!(
        (a["enabled"].clone(), a["state"].clone()),
        (json!(false), json!("disabled"))
    );
    assert_eq!(a["batches"]["pending"], 0, "no batches are built");
}

#[test]
fn an_rpc_url_without_a_key_or_with_a_bad_key_stops_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().display().to_string();
    let base = [
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--modulus",
        "test512",
        "--epoch-ms",
        "100",
        "--anchor-rpc-url",
        "http://127.0.0.1:9",
    ];
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(base)
        .env_remove("VRS_ANCHOR_PRIVATE_KEY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("VRS_ANCHOR_PRIVATE_KEY"), "{err}");

    let secret = "zz".repeat(32);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(base)
        .env("VRS_ANCHOR_PRIVATE_KEY", &secret)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("64 hex digits") && !err.contains(&secret),
        "{err}"
    );
}

/// Two replicas on one PostgreSQL: only the leader anchors; when it dies the other goes on
/// from the stored batches, and no root or nonce goes on chain twice.
#[test]
fn replicas_anchor_once_across_a_leader_failover() {
    let schema = TestSchema::create("anchor_failover");
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let url = schema.url();
    let a = Server::start_pg_env(&url, &flags(&g, &[]), ENV);
    let b = Server::start_pg_env(&url, &flags(&g, &[]), ENV);
    wait_anchoring(&a, "a first confirmed batch", |x| confirmed(x) >= 1);
    let (leader, other) = if a.get("/health").1["role"] == "leader" {
        (a, b)
    } else {
        (b, a)
    };
    assert_eq!(anchoring(&other)["state"], "standby");
    let before = confirmed(&anchoring(&other));
    leader.crash();
    wait_anchoring(&other, "the new leader anchoring", |x| {
        confirmed(x) >= before + 2 && x["state"] == "active"
    });
    let txs = g.anchor_txs(ADDRESS);
    assert_no_duplicates(&txs);
}
