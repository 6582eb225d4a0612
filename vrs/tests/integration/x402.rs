//! x402 payments for the notary, end to end with real parts: ganache (chain id 8453) with
//! Circle's FiatToken (EIP-3009) deployed from its npm artifacts, the official x402 Python
//! client (PyPI `x402`) paying through `tools/x402/pay.py`, and settlement on chain through
//! the anchor account. Balances are read back from the token.

use crate::evm::{Ganache, ADDRESS, KEY, TAG_HEX};
use crate::notary::{assert_sealed_proof, fold, header, post, wait_receipt};
use crate::server::{Server, FAST};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use vrs_engine::merkle;

/// Ganache's deterministic account 1 (the payer: the token mints 1000 USDC to it).
pub(crate) const PAYER_KEY: &str =
    "0x6cbed15c793ce57650b9877cf6fa156fbef513c4e6134f022a85b1ffdd59b2a1";
pub(crate) const PAYER: &str = "0xffcf8fdee72ac11b5c542428b35eef5769c409f0";
/// Account 2: no tokens.
pub(crate) const BROKE_KEY: &str =
    "0x6370fd033278c143179d81c5526140625662b8daa446c22ee2d73db3707e620c";

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Deploys FiatToken and mints to the payer; returns the token address.
pub(crate) fn deploy_token(g: &Ganache) -> String {
    let out = Command::new("node")
        .arg(repo().join("tools/evm/deploy-fiattoken.js"))
        .args(["--rpc", &g.url, "--mint", &format!("{PAYER}=1000000000")])
        .output()
        .expect("node runs");
    assert!(out.status.success(), "deploy: {out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["token"].as_str().unwrap().to_owned()
}

pub(crate) fn balance(g: &Ganache, token: &str, who: &str) -> u128 {
    let data = format!("0x70a08231{:0>64}", who.trim_start_matches("0x"));
    let r = g.rpc("eth_call", json!([{"to": token, "data": data}, "latest"]));
    u128::from_str_radix(r.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// Pays one request with the official client; returns its printed result.
pub(crate) fn pay(url: &str, key: &str, token: &str, body: &str, extra: &[&str]) -> Value {
    let python = repo().join("tools/x402/.venv/bin/python");
    assert!(
        python.exists(),
        "the x402 client is not installed at {}: run scripts/install-deps",
        python.display()
    );
    let out = Command::new(python)
        .arg(repo().join("tools/x402/pay.py"))
        .args(["--url", url, "--key", key, "--asset", token, "--body", body])
        .args(extra)
        .output()
        .expect("pay.py runs");
    assert!(
        out.status.success(),
        "pay.py: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

pub(crate) fn decode_b64_json(v: &str) -> Value {
    use base64::Engine;
    serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(v).unwrap()).unwrap()
}

#[test]
fn x402_payments_with_the_official_client_settle_once_and_get_anchored_receipts() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, false);
    let token = deploy_token(&g);
    let data = dir.path().join("data");
    let mut flags = FAST.to_vec();
    flags.extend([
        "--pool-threads",
        "0",
        "--notary-batch-ms",
        "200",
        "--anchor-rpc-url",
        &g.url,
        "--anchor-every",
        "2",
        "--anchor-confirmations",
        "1",
        "--x402-asset",
        &token,
    ]);
    let s = Server::start_env(&data, &flags, &[("VRS_ANCHOR_PRIVATE_KEY", KEY)]);
    let url = format!("{}/v1/notarize", s.url);
    let (_, st) = s.get("/v1/notarize/status");
    assert_eq!(st["payment_methods"], json!(["api_key", "x402"]), "{st}");
    assert_eq!(st["price"]["display"], "0.02");

    // No key, no payment: 402 with the v2 header and the v1 body.
    let body = json!({"schema": "sha256", "payload_hash": sha("paid doc")}).to_string();
    let (status, hs, v1) = post(&url, &body, &[]);
    assert_eq!(status, 402, "{v1}");
    let v2 = decode_b64_json(header(&hs, "payment-required").expect("PAYMENT-REQUIRED"));
    assert_eq!(v2["x402Version"], 2);
    assert_eq!(v2["resource"]["url"], url);
    let acc = &v2["accepts"][0];
    assert_eq!(acc["scheme"], "exact");
    assert_eq!(acc["network"], "eip155:8453");
    assert_eq!(acc["amount"], "20000");
    assert_eq!(acc["asset"].as_str().unwrap().to_lowercase(), token);
    assert_eq!(acc["payTo"].as_str().unwrap().to_lowercase(), ADDRESS);
    assert_eq!(acc["extra"], json!({"name": "USD Coin", "version": "2"}));
    assert_eq!(v1["x402Version"], 1);
    assert_eq!(v1["accepts"][0]["network"], "base");
    assert_eq!(v1["accepts"][0]["maxAmountRequired"], "20000");
    assert_eq!(v1["accepts"][0]["resource"], url);

    let payer_before = balance(&g, &token, PAYER);
    let pay_to_before = balance(&g, &token, ADDRESS);

    // The official client pays (v2): 202, PAYMENT-RESPONSE, balances move by exactly the price.
    let paid = pay(
        &url,
        PAYER_KEY,
        &token,
        &body,
        &["--idempotency-key", "pay-1"],
    );
    assert_eq!(paid["status"], 202, "{paid:#}");
    let receipt = paid["body"].clone();
    assert_eq!(receipt["payment"]["method"], "x402");
    assert_eq!(receipt["payment"]["payer"], PAYER);
    let settle = decode_b64_json(paid["headers"]["payment-response"].as_str().unwrap());
    assert_eq!(settle["success"], true, "{settle}");
    assert_eq!(settle["network"], "eip155:8453");
    let tx = settle["transaction"].as_str().unwrap();
    let mined = g.rpc("eth_getTransactionReceipt", json!([tx]));
    assert_eq!(mined["status"], "0x1", "{mined}");
    assert_eq!(balance(&g, &token, PAYER), payer_before - 20_000);
    assert_eq!(balance(&g, &token, ADDRESS), pay_to_before + 20_000);
    let signature = paid["payment_sent"]["payment-signature"]
        .as_str()
        .expect("the client sent PAYMENT-SIGNATURE")
        .to_owned();

    // The very same signed payment again: refused without the key, replayed with it; never
    // charged twice.
    let (status, _, e) = post(&url, &body, &[("PAYMENT-SIGNATURE", &signature)]);
    assert_eq!(status, 402, "{e}");
    assert!(e["error"].as_str().unwrap().contains("already used"), "{e}");
    let (status, hs, replay) = post(
        &url,
        &body,
        &[
            ("PAYMENT-SIGNATURE", &signature),
            ("Idempotency-Key", "pay-1"),
        ],
    );
    assert_eq!(status, 202, "{replay}");
    assert_eq!(replay, receipt);
    assert_eq!(header(&hs, "idempotent-replayed"), Some("true"));
    assert!(header(&hs, "payment-response").is_some());
    // A new payment from the official client with the same key and body: the first receipt,
    // and no second charge.
    let again = pay(
        &url,
        PAYER_KEY,
        &token,
        &body,
        &["--idempotency-key", "pay-1"],
    );
    assert_eq!(again["status"], 202, "{again:#}");
    assert_eq!(again["body"], receipt);
    // The same key with another body: 422, nothing charged.
    let other = json!({"schema": "sha256", "payload_hash": sha("other doc")}).to_string();
    let conflict = pay(
        &url,
        PAYER_KEY,
        &token,
        &other,
        &["--idempotency-key", "pay-1"],
    );
    assert_eq!(conflict["status"], 422, "{conflict:#}");
    assert_eq!(balance(&g, &token, PAYER), payer_before - 20_000);

    // x402 v1 (X-PAYMENT) pays too.
    let v1_body = json!({"schema": "sha256", "payload_hash": sha("v1 doc")}).to_string();
    let v1_paid = pay(&url, PAYER_KEY, &token, &v1_body, &["--version", "1"]);
    assert_eq!(v1_paid["status"], 202, "{v1_paid:#}");
    assert!(
        v1_paid["payment_sent"]["x-payment"].is_string(),
        "{v1_paid:#}"
    );
    let v1_settle = decode_b64_json(v1_paid["headers"]["x-payment-response"].as_str().unwrap());
    assert_eq!(v1_settle["network"], "base");
    assert_eq!(balance(&g, &token, PAYER), payer_before - 40_000);

    // A duplicate while the first is still settling: 409. The node is frozen so that the
    // first request's settlement waits (its RPC calls hang) until the duplicate is answered;
    // the first request's claim of the key is watched for in the store itself.
    g.freeze(true);
    let doc3 = json!({"schema": "sha256", "payload_hash": sha("doc 3")}).to_string();
    let first = {
        let (url, token, doc3) = (url.clone(), token.clone(), doc3.clone());
        std::thread::spawn(move || {
            pay(
                &url,
                PAYER_KEY,
                &token,
                &doc3,
                &["--idempotency-key", "pay-3"],
            )
        })
    };
    let db = rusqlite::Connection::open_with_flags(
        data.join("vrs.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + crate::notary::DEADLINE;
    while db
        .query_row(
            "SELECT COUNT(*) FROM idempotency_keys WHERE key = 'pay-3' AND status IS NULL",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap()
        == 0
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the first request never claimed its key"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let duplicate = pay(
        &url,
        PAYER_KEY,
        &token,
        &doc3,
        &["--idempotency-key", "pay-3"],
    );
    g.freeze(false);
    assert_eq!(duplicate["status"], 409, "{duplicate:#}");
    let first = first.join().unwrap();
    assert_eq!(first["status"], 202, "{first:#}");
    let after = pay(
        &url,
        PAYER_KEY,
        &token,
        &doc3,
        &["--idempotency-key", "pay-3"],
    );
    assert_eq!(after["body"], first["body"]);
    assert_eq!(balance(&g, &token, PAYER), payer_before - 60_000);

    // A payer without funds: 402 with the reason, nothing stored, nothing charged.
    let (_, before) = s.get("/v1/notarize/status");
    let broke = pay(&url, BROKE_KEY, &token, &other, &[]);
    assert_eq!(broke["status"], 402, "{broke:#}");
    assert!(broke["body"]["error"].is_string(), "{broke:#}");
    let (_, after) = s.get("/v1/notarize/status");
    assert_eq!(after["receipts"], before["receipts"]);
    assert_eq!(balance(&g, &token, ADDRESS), pay_to_before + 60_000);

    // The paid receipt is sealed, then anchored: its proof and the anchor path recomputed
    // here, and the anchor transaction's calldata read back from the chain.
    let id = receipt["receipt_id"].as_str().unwrap();
    let r = wait_receipt(&s, id, |r| r["status"] == "anchored");
    assert_sealed_proof(&r);
    assert_eq!(r["verification"]["verified"], true, "{r:#}");
    let a = &r["anchor"];
    let leaf = hex::decode(a["leaf"].as_str().unwrap()).unwrap();
    assert_eq!(leaf[0], 3, "a notary batch is anchor leaf kind 3");
    assert_eq!(
        u64::from_be_bytes(leaf[1..9].try_into().unwrap()),
        r["proof"]["batch"].as_u64().unwrap()
    );
    assert_eq!(hex::encode(&leaf[9..]), r["proof"]["root"], "{r:#}");
    let anchor_root = fold(
        merkle::leaf_hash(&leaf),
        a["leaf_index"].as_u64().unwrap(),
        a["tree_size"].as_u64().unwrap(),
        a["audit_path"].as_array().unwrap(),
    );
    assert_eq!(hex::encode(anchor_root), a["root"]);
    let onchain = g.rpc("eth_getTransactionByHash", json!([a["tx"]]));
    assert_eq!(
        onchain["input"].as_str().unwrap(),
        format!("0x{TAG_HEX}{}", hex::encode(anchor_root))
    );
}
