//! x402 payments settled through a real facilitator: `tools/x402/facilitator.py`, the official
//! x402 Python package's facilitator (EVM `exact`, v2 and v1) behind a small HTTP server,
//! settling on ganache (chain id 8453) with Circle's FiatToken from a ganache account of its
//! own. The vrs server has no anchor key: it can only settle through the facilitator, and the
//! transfers on chain are sent by the facilitator's account. Payments are made by the official
//! client (`tools/x402/pay.py`); balances and transactions are read back from the chain.

use crate::evm::{hex_u64, Ganache};
use crate::notary::{header, post, wait_receipt};
use crate::server::{Server, FAST};
use crate::x402::{
    balance, decode_b64_json, deploy_token, pay, repo, sha, BROKE_KEY, PAYER, PAYER_KEY,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Ganache's deterministic account 3: the facilitator's (it pays the gas and sends the
/// transfers). The payer is account 1, the unfunded payer account 2; account 0 deployed the
/// token. Nobody here anchors.
const FACILITATOR_KEY: &str = "0x646f1ce2fdad0e6deeeb5c7e8e5543bdde65e86029e2fd9fc169899c440a7913";
const FACILITATOR: &str = "0xe11ba2b4d45eaed5996cd0823791e0c93114882d";
/// Account 4: where payments go (no token, never sends a transaction).
const PAY_TO: &str = "0xd03ea8624c8c5987235048901fb614fdca89b117";
const PRICE: u128 = 20_000;

/// A running `tools/x402/facilitator.py`; stopped with SIGTERM (then killed) when dropped.
struct Facilitator {
    child: Child,
    url: String,
    address: String,
}

impl Facilitator {
    fn start(rpc: &str) -> Facilitator {
        let python = repo().join("tools/x402/.venv/bin/python");
        assert!(
            python.exists(),
            "the x402 package is not installed at {}: run scripts/install-deps",
            python.display()
        );
        let mut child = Command::new(python)
            .arg(repo().join("tools/x402/facilitator.py"))
            .args(["--rpc", rpc, "--key", FACILITATOR_KEY, "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("facilitator.py starts");
        // Its first stdout line says where it listens; read on a thread so that a facilitator
        // that never prints fails the test at the deadline instead of hanging it.
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            let _ = tx.send(lines.next());
            for _ in lines {}
        });
        let line = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(Some(Ok(line))) => line,
            other => {
                let _ = child.kill();
                panic!("facilitator.py printed no URL within 60 s: {other:?}");
            }
        };
        let v: Value = serde_json::from_str(&line).expect("a JSON line");
        Facilitator {
            child,
            url: v["url"].as_str().expect("url").to_owned(),
            address: v["address"].as_str().expect("address").to_lowercase(),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let url = format!("{}{path}", self.url);
        let res = match body {
            Some(b) => ureq::request(method, &url).send_json(b.clone()),
            None => ureq::request(method, &url).call(),
        };
        let resp = match res {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {url}: {e}"),
        };
        (resp.status(), resp.into_json().expect("JSON body"))
    }
}

impl Drop for Facilitator {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tx_count(g: &Ganache, who: &str) -> u64 {
    hex_u64(&g.rpc("eth_getTransactionCount", json!([who, "latest"])))
}

fn eth_balance(g: &Ganache, who: &str) -> u128 {
    let v = g.rpc("eth_getBalance", json!([who, "latest"]));
    u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// Checks a successful payment's settlement header against the chain: the transfer was mined,
/// succeeded, was sent by the facilitator to the token, and names the payer.
fn assert_settled_by_facilitator(g: &Ganache, token: &str, settle: &Value, network: &str) {
    assert_eq!(settle["success"], true, "{settle}");
    assert_eq!(settle["network"], network, "{settle}");
    assert_eq!(
        settle["payer"].as_str().unwrap().to_lowercase(),
        PAYER,
        "{settle}"
    );
    let tx = settle["transaction"].as_str().unwrap();
    assert!(
        tx.len() == 66 && tx.starts_with("0x"),
        "not a transaction hash: {settle}"
    );
    let mined = g.rpc("eth_getTransactionReceipt", json!([tx]));
    assert_eq!(mined["status"], "0x1", "{mined}");
    assert_eq!(
        mined["from"], FACILITATOR,
        "sent by the facilitator: {mined}"
    );
    assert_eq!(mined["to"], token, "a call to the token: {mined}");
}

#[test]
fn x402_payments_settle_through_the_official_facilitator() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, false);
    let token = deploy_token(&g);
    let f = Facilitator::start(&g.url);
    assert_eq!(f.address, FACILITATOR);

    // What the facilitator serves: exact on eip155:8453 (v2) and "base" (v1), from its account.
    let (status, supported) = f.call("GET", "/supported", None);
    assert_eq!(status, 200, "{supported}");
    let kinds = supported["kinds"].as_array().unwrap();
    for (version, network) in [(2, "eip155:8453"), (1, "base")] {
        assert!(
            kinds.iter().any(|k| k["x402Version"] == version
                && k["scheme"] == "exact"
                && k["network"] == network),
            "{supported}"
        );
    }
    assert_eq!(
        supported["signers"]["eip155:*"][0]
            .as_str()
            .unwrap()
            .to_lowercase(),
        FACILITATOR
    );

    // The service: no anchor key (so no way to settle but the facilitator).
    let data = dir.path().join("data");
    let mut flags = FAST.to_vec();
    flags.extend([
        "--pool-threads",
        "0",
        "--notary-batch-ms",
        "200",
        "--x402-pay-to",
        PAY_TO,
        "--x402-asset",
        &token,
        "--x402-facilitator-url",
        &f.url,
    ]);
    let s = Server::start(&data, &flags);
    let url = format!("{}/v1/notarize", s.url);
    let (_, st) = s.get("/v1/notarize/status");
    assert_eq!(st["payment_methods"], json!(["api_key", "x402"]), "{st}");
    assert_eq!(st["x402"]["settlement"], "facilitator", "{st}");
    assert_eq!(st["anchoring"]["enabled"], false, "{st}");

    // The 402 names the pay-to address and the token.
    let body = json!({"schema": "sha256", "payload_hash": sha("via facilitator")}).to_string();
    let (status, hs, _) = post(&url, &body, &[]);
    assert_eq!(status, 402);
    let required = decode_b64_json(header(&hs, "payment-required").expect("PAYMENT-REQUIRED"));
    let accepted = required["accepts"][0].clone();
    assert_eq!(accepted["payTo"].as_str().unwrap().to_lowercase(), PAY_TO);
    assert_eq!(accepted["asset"].as_str().unwrap().to_lowercase(), token);

    let payer_before = balance(&g, &token, PAYER);
    let pay_to_before = balance(&g, &token, PAY_TO);
    let gas_before = eth_balance(&g, FACILITATOR);
    let sent_before = tx_count(&g, FACILITATOR);

    // v2 with the official client: 202, a receipt, and one transfer sent by the facilitator.
    let paid = pay(&url, PAYER_KEY, &token, &body, &[]);
    assert_eq!(paid["status"], 202, "{paid:#}");
    let receipt = &paid["body"];
    assert_eq!(receipt["status"], "pending", "{receipt:#}");
    assert_eq!(receipt["payment"]["method"], "x402");
    assert_eq!(receipt["payment"]["payer"], PAYER);
    let settle = decode_b64_json(paid["headers"]["payment-response"].as_str().unwrap());
    assert_settled_by_facilitator(&g, &token, &settle, "eip155:8453");
    assert_eq!(receipt["payment"]["transaction"], settle["transaction"]);
    assert_eq!(balance(&g, &token, PAYER), payer_before - PRICE);
    assert_eq!(balance(&g, &token, PAY_TO), pay_to_before + PRICE);
    assert_eq!(tx_count(&g, FACILITATOR), sent_before + 1);
    assert!(
        eth_balance(&g, FACILITATOR) < gas_before,
        "the facilitator paid the gas"
    );
    // The receipt is stored and readable.
    let id = receipt["receipt_id"].as_str().unwrap();
    let (status, stored) = s.get(&format!("/v1/notarize/{id}"));
    assert_eq!(status, 200, "{stored}");
    assert_eq!(stored["payment"], receipt["payment"]);

    // The very same signed payment again: refused by the service (the nonce is recorded)...
    let signature = paid["payment_sent"]["payment-signature"]
        .as_str()
        .expect("the client sent PAYMENT-SIGNATURE")
        .to_owned();
    let other = json!({"schema": "sha256", "payload_hash": sha("replayed")}).to_string();
    let (status, _, e) = post(&url, &other, &[("PAYMENT-SIGNATURE", &signature)]);
    assert_eq!(status, 402, "{e}");
    assert!(e["error"].as_str().unwrap().contains("already used"), "{e}");
    // ...and by the facilitator itself, asked directly: the token says the authorization is
    // used.
    let (status, verdict) = f.call(
        "POST",
        "/verify",
        Some(&json!({
            "x402Version": 2,
            "paymentPayload": decode_b64_json(&signature),
            "paymentRequirements": accepted,
        })),
    );
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["isValid"], false, "{verdict}");
    assert_eq!(
        verdict["invalidReason"], "invalid_exact_evm_nonce_already_used",
        "{verdict}"
    );
    assert_eq!(balance(&g, &token, PAYER), payer_before - PRICE);

    // v1 (X-PAYMENT, network "base"): the same through the facilitator's v1 scheme.
    let v1_body =
        json!({"schema": "sha256", "payload_hash": sha("v1 via facilitator")}).to_string();
    let v1_paid = pay(&url, PAYER_KEY, &token, &v1_body, &["--version", "1"]);
    assert_eq!(v1_paid["status"], 202, "{v1_paid:#}");
    assert_eq!(v1_paid["body"]["payment"]["method"], "x402");
    let x_payment = v1_paid["payment_sent"]["x-payment"]
        .as_str()
        .expect("the client sent X-PAYMENT")
        .to_owned();
    assert!(
        v1_paid["headers"].get("payment-response").is_none(),
        "{v1_paid:#}"
    );
    let v1_settle = decode_b64_json(v1_paid["headers"]["x-payment-response"].as_str().unwrap());
    assert_settled_by_facilitator(&g, &token, &v1_settle, "base");
    assert_eq!(
        v1_paid["body"]["payment"]["transaction"],
        v1_settle["transaction"]
    );
    assert_ne!(v1_settle["transaction"], settle["transaction"]);
    assert_eq!(balance(&g, &token, PAYER), payer_before - 2 * PRICE);
    assert_eq!(balance(&g, &token, PAY_TO), pay_to_before + 2 * PRICE);
    assert_eq!(tx_count(&g, FACILITATOR), sent_before + 2);
    let (status, _, e) = post(&url, &other, &[("X-PAYMENT", &x_payment)]);
    assert_eq!(status, 402, "{e}");
    assert!(e["error"].as_str().unwrap().contains("already used"), "{e}");

    // A payer without funds: the facilitator's /verify refuses it (its simulation of the
    // transfer reverts), the service answers 402, nothing is stored, sent or charged.
    let (_, before) = s.get("/v1/notarize/status");
    let broke = pay(&url, BROKE_KEY, &token, &other, &[]);
    assert_eq!(broke["status"], 402, "{broke:#}");
    let error = broke["body"]["error"].as_str().unwrap();
    assert!(
        error.contains("facilitator") && error.contains("insufficient_balance"),
        "{broke:#}"
    );
    let failed = decode_b64_json(broke["headers"]["payment-response"].as_str().unwrap());
    assert_eq!(failed["success"], false, "{failed}");
    let (_, after) = s.get("/v1/notarize/status");
    assert_eq!(after["receipts"], before["receipts"]);
    assert_eq!(tx_count(&g, FACILITATOR), sent_before + 2);
    assert_eq!(balance(&g, &token, PAYER), payer_before - 2 * PRICE);
    assert_eq!(balance(&g, &token, PAY_TO), pay_to_before + 2 * PRICE);

    // Both paid receipts are sealed (nothing anchors here).
    for r in [receipt, &v1_paid["body"]] {
        let sealed = wait_receipt(&s, r["receipt_id"].as_str().unwrap(), |r| {
            r["status"] == "sealed"
        });
        assert_eq!(sealed["verification"]["verified"], true, "{sealed:#}");
        assert_eq!(sealed["payment"], r["payment"]);
    }
}
