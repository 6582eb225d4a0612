//! `vrs verify --rpc` and `vrs audit --rpc` against a live `vrs serve` that anchors on a real
//! local EVM node (ganache): anchored epoch and pool-served games pass `anchor_inclusion` and
//! `anchor_onchain`; a lying server (a flipped root or audit path, another batch's transaction,
//! another chain id, a root of its choosing that another account put on chain) fails the step
//! that checks it; a pending anchor is reported as pending and fails only with
//! `--require-anchor`; an anchored range of epochs audits clean, and fails once an anchor's
//! transaction is not the operator's.

use crate::cli_verify::{
    assert_passes, assert_step_fails, flip, instant_bet, tampering_proxy, wait_for_pool,
};
use crate::evm::{Ganache, ADDRESS, KEY, TAG_HEX};
use crate::output_text as text;
use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(120);

/// Fast epochs, a batch every two resolved epochs, and a small pool (so that anchor batches
/// hold pool batch leaves too).
fn flags(g: &Ganache) -> Vec<&str> {
    let mut f = FAST.to_vec();
    f.extend(["--anchor-rpc-url", &g.url, "--anchor-every", "2"]);
    f.extend(["--pool-iterations", "64", "--pool-batch", "16"]);
    f.extend(["--pool-depth", "48", "--pool-low-water", "16"]);
    f
}

/// Polls the game's verification until its anchor batch is confirmed.
fn wait_confirmed(s: &Server, id: &str) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let v = s.poll_ok(&format!("/api/v1/verify/{id}"), DEADLINE);
        if v["proof"]["anchor_status"] == "confirmed" {
            crate::protocol_docs::assert_documented("20.1", "an anchored verification", &v);
            return v;
        }
        assert!(Instant::now() < deadline, "not anchored: {:#}", v["proof"]);
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn verify(url: &str, id: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["verify", id, "--server", url, "--group", "test512"])
        .args(extra)
        .output()
        .expect("runs vrs verify")
}

fn audit(url: &str, to: u64, rpc: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["audit", "--server", url, "--from", "1", "--to"])
        .arg(to.to_string())
        .args(["--group", "test512"])
        .args(["--rpc", rpc])
        .output()
        .expect("runs vrs audit")
}

/// Makes `anchor` (a proof's or an epoch record's) claim a batch of epoch `e`'s leaf alone
/// (no pool or notary batch: both ranges empty at the given starts), with root `root` (hex,
/// the leaf's hash), carried by `calldata` in transaction `tx`: a second root of the
/// operator's choosing for that epoch, self-consistent in everything the proof shows.
pub(crate) fn one_leaf_batch(
    anchor: &mut Value,
    tx: &str,
    root: &str,
    calldata: &str,
    (e, pool_at, notary_at): (u64, &Value, &Value),
) {
    anchor["tx"] = json!(tx);
    anchor["root"] = json!(root);
    anchor["calldata"] = json!(calldata);
    anchor["audit_path"] = json!([]);
    anchor["leaf_index"] = json!(0);
    anchor["tree_size"] = json!(1);
    anchor["epochs"] = json!({"first": e, "last": e});
    anchor["pool_batches"] = json!({"from": pool_at, "to": pool_at});
    anchor["notary_batches"] = json!({"from": notary_at, "to": notary_at});
}

/// The line of `step` in a checklist.
fn line<'a>(text: &'a str, step: &str) -> Option<&'a str> {
    text.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(step))
}

#[test]
fn anchored_games_check_on_chain_and_lies_about_anchors_fail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let s = Server::start_env(
        &dir.path().join("data"),
        &flags(&g),
        &[("VRS_ANCHOR_PRIVATE_KEY", KEY)],
    );
    wait_for_pool(&s, 4);
    let (status, r) = s.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "odd", "amount": 1, "player_seed": "anchored", "instant": false}),
    );
    assert_eq!(status, 202, "{r}");
    let epoch_game = r["game_id"].as_str().expect("game_id").to_owned();
    let (pool_game, _) = instant_bet(
        &s,
        "/api/v1/games/sicbo/bet",
        json!({"bet_type": "big", "amount": 2, "player_seed": "instant"}),
    );
    let ev = wait_confirmed(&s, &epoch_game);
    wait_confirmed(&s, &pool_game);

    // Honest: every step passes, the anchor ones included, on the node of our choosing.
    let rpc = ["--rpc", g.url.as_str()];
    let t = assert_passes(
        &s.url,
        &epoch_game,
        &[
            "merkle_inclusion",
            "vdf_proof",
            "timing",
            "anchor_inclusion",
            "anchor_onchain",
        ],
        &rpc,
    );
    assert!(
        line(&t, "anchor_onchain").is_some_and(|l| l.contains("confirmations")),
        "{t}"
    );
    assert_passes(
        &s.url,
        &pool_game,
        &["pool_inclusion", "anchor_inclusion", "anchor_onchain"],
        &[&rpc[..], &["--require-anchor"]].concat(),
    );
    let out = verify(&s.url, &pool_game, &[&rpc[..], &["--json"]].concat());
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["verified"], true, "{report:#}");
    let onchain = report["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "anchor_onchain"))
        .expect("an anchor_onchain step");
    assert_eq!(
        (&onchain["passed"], &onchain["pending"]),
        (&json!(true), &json!(false))
    );
    // Without --rpc: the inclusion is checked, the chain is not (and says so).
    let t = text(&verify(&s.url, &epoch_game, &[]));
    assert!(
        line(&t, "anchor_inclusion").is_some_and(|l| l.starts_with("ok")),
        "{t}"
    );
    assert!(line(&t, "anchor_onchain").is_none(), "{t}");
    assert!(t.contains("not read back from a node"), "{t}");

    // Another anchor batch's transaction (a real anchor of this chain, with another root).
    let game_tx = ev["proof"]["anchorTx"]
        .as_str()
        .expect("anchorTx")
        .to_owned();
    let deadline = Instant::now() + DEADLINE;
    let other_tx = loop {
        let txs = g.anchor_txs(ADDRESS);
        if let Some(t) = txs.iter().find(|t| t.0 != game_tx) {
            break t.0.clone();
        }
        assert!(Instant::now() < deadline, "a single anchor tx: {txs:?}");
        std::thread::sleep(Duration::from_millis(300));
    };

    // A second root for the game's epoch, of the operator's choosing (a batch of that epoch's
    // leaf alone), put on chain by another account: everything the proof shows is consistent,
    // and only the transaction's sender betrays it.
    let anchor = &ev["proof"]["anchor"];
    let leaf = hex::decode(anchor["leaf"].as_str().expect("anchor.leaf")).expect("hex");
    let forged_root = hex::encode(vrs_engine::merkle::leaf_hash(&leaf));
    let stranger = g.stranger();
    let forged_tx = g.send(&stranger, &format!("0x{TAG_HEX}{forged_root}"));
    let e = ev["proof"]["vdfEpoch"].as_u64().expect("vdfEpoch");
    let (pool_at, notary_at) = (
        anchor["pool_batches"]["from"].clone(),
        anchor["notary_batches"]["from"].clone(),
    );

    // One lie at a time about the epoch game's anchor, and the step that catches it.
    type Tamper = Box<dyn Fn(&mut Value) + Send + Sync>;
    let cases: Vec<(&str, &str, Tamper)> = vec![
        (
            "anchor root",
            "anchor_inclusion",
            Box::new(|v| flip(v, "/proof/anchor/root")),
        ),
        (
            "anchor audit path",
            "anchor_inclusion",
            Box::new(|v| flip(v, "/proof/anchor/audit_path/0")),
        ),
        (
            "anchor leaf index",
            "anchor_inclusion",
            Box::new(|v| {
                let i = v["proof"]["anchor"]["leaf_index"].as_u64().expect("index");
                v["proof"]["anchor"]["leaf_index"] = json!(i + 1);
            }),
        ),
        (
            "another batch's transaction",
            "anchor_onchain",
            Box::new(move |v| {
                let p = &mut v["proof"];
                p["anchorTx"] = json!(other_tx);
                p["legacyTx"] = json!(other_tx);
                p["anchor"]["tx"] = json!(other_tx);
            }),
        ),
        (
            "anchor chain id",
            "anchor_onchain",
            Box::new(|v| v["proof"]["anchorChainId"] = json!(1)),
        ),
        (
            "a root another account put on chain",
            "anchor_onchain",
            Box::new(move |v| {
                let p = &mut v["proof"];
                p["anchorTx"] = json!(forged_tx);
                p["legacyTx"] = json!(forged_tx);
                let calldata = format!("0x{TAG_HEX}{forged_root}");
                let at = (e, &pool_at, &notary_at);
                one_leaf_batch(&mut p["anchor"], &forged_tx, &forged_root, &calldata, at);
            }),
        ),
    ];
    let verify_path = format!("/api/v1/verify/{epoch_game}");
    for (what, step, tamper) in cases {
        let target = verify_path.clone();
        let url = tampering_proxy(&s.url, move |path, v| {
            if path == target {
                tamper(v);
            }
        });
        let out = verify(&url, &epoch_game, &rpc);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "tampered {what}: {t}");
        assert!(
            line(&t, step).is_some_and(|l| l.starts_with("FAIL")),
            "tampered {what}: no failing {step} line in\n{t}"
        );
        if what.starts_with("a root another account") {
            assert!(
                line(&t, step)
                    .is_some_and(|l| l.contains("not from the operator's anchor account")),
                "{t}"
            );
        }
        // The other anchor step still judges its own part only.
        let other = if step == "anchor_onchain" {
            "anchor_inclusion"
        } else {
            "anchor_onchain"
        };
        if what != "anchor root" {
            assert!(
                line(&t, other).is_some_and(|l| l.starts_with("ok")),
                "tampered {what}: {other} should pass in\n{t}"
            );
        }
    }
    // A root flipped in the pool game's proof fails its kind-2 leaf as well.
    let target = format!("/api/v1/verify/{pool_game}");
    let url = tampering_proxy(&s.url, move |path, v| {
        if path == target {
            flip(v, "/proof/anchor/root");
        }
    });
    assert_step_fails(
        &url,
        &pool_game,
        "pool game's anchor root",
        "anchor_inclusion",
    );

    // An anchor not confirmed yet (as a server shows it before batching): pending, not failed,
    // unless the caller requires the anchor.
    let target = verify_path.clone();
    let url = tampering_proxy(&s.url, move |path, v| {
        if path == target {
            let p = &mut v["proof"];
            p["anchorTx"] = Value::Null;
            p["legacyTx"] = Value::Null;
            p["anchor_status"] = json!("pending");
            p["anchor"] = json!({"status": "pending", "enabled": true, "message": "not yet"});
        }
    });
    let out = verify(&url, &epoch_game, &rpc);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        line(&t, "anchor_onchain").is_some_and(|l| l.starts_with("pend")),
        "{t}"
    );
    assert!(line(&t, "anchor_inclusion").is_none(), "{t}");
    assert!(t.contains("still pending: anchor_onchain"), "{t}");
    let out = verify(
        &url,
        &epoch_game,
        &[&rpc[..], &["--require-anchor"]].concat(),
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        line(&t, "anchor_onchain").is_some_and(|l| l.starts_with("FAIL")),
        "{t}"
    );

    // A node that cannot be asked is not a verdict: exit 2.
    let out = verify(&s.url, &epoch_game, &["--rpc", "http://127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    // --require-anchor without --rpc is a usage error.
    let out = verify(&s.url, &epoch_game, &["--require-anchor"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // The anchored range audits clean, every batch's transaction read back once.
    let (_, stats) = s.get("/api/v1/stats");
    let through = stats["anchoring"]["anchored_through_epoch"]
        .as_u64()
        .expect("anchored_through_epoch");
    // The epoch game's epoch is confirmed, so the range holds it (tampered below).
    assert!(through >= ev["proof"]["vdfEpoch"].as_u64().expect("vdfEpoch"));
    let out = audit(&s.url, through, &g.url);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains(&format!(
            "{through} epochs anchored and checked on chain, 0 pending"
        )),
        "{t}"
    );
    // One epoch's anchor root flipped: its inclusion fails, and it disagrees with the other
    // epochs of its batch.
    let bad = ev["proof"]["vdfEpoch"].as_u64().expect("vdfEpoch");
    let target = format!("/api/v1/epochs/{bad}");
    let url = tampering_proxy(&s.url, move |path, v| {
        if path == target {
            flip(v, "/anchor/root");
        }
    });
    let out = audit(&url, through, &g.url);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("FAIL epoch {bad} anchor_inclusion")),
        "{t}"
    );
    // The operator's anchor account named as another: every batch's transaction is sent from
    // the wrong account for what the server says, and fails.
    let url = tampering_proxy(&s.url, move |path, v| {
        if path == "/api/v1/stats" {
            v["anchoring"]["address"] = json!("0x00000000000000000000000000000000000000aa");
        }
    });
    let out = audit(&url, through, &g.url);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("anchor_onchain") && t.contains("not from the operator's anchor account"),
        "{t}"
    );
    // The operator's clock an hour ahead of the chain's for one anchored epoch: its block's
    // timestamp bounds the times it publishes (docs/PROTOCOL.md §10, "Whose numbers").
    let target = format!("/api/v1/epochs/{bad}");
    let url = tampering_proxy(&s.url, move |path, v| {
        if path == target {
            let later = v["resolved_at_ms"].as_i64().expect("resolved_at_ms") + 3_600_000;
            v["resolved_at_ms"] = json!(later);
        }
    });
    let out = audit(&url, through, &g.url);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains(&format!("FAIL epoch {bad} timing")) && t.contains("after the block"),
        "{t}"
    );
}
