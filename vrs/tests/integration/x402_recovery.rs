//! A crash while an x402 payment settles: the server is killed (SIGKILL) after reserving the
//! payment's nonce, once before the settlement transaction was sent and once after it was sent
//! but before it was mined. On restart the leader finishes both requests from the store: it
//! settles the first itself and finds the second settled on chain, stores each prepared
//! receipt exactly once, and the client's retry with the same Idempotency-Key gets that
//! receipt without paying again. Real parts: ganache, FiatToken, the official x402 client.

use crate::durability::wait_for;
use crate::evm::{Ganache, ADDRESS, KEY};
use crate::notary::DEADLINE;
use crate::server::{Server, FAST};
use crate::x402::{balance, deploy_token, pay, repo, sha, PAYER, PAYER_KEY};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const PRICE: u128 = 20_000;

fn start(data: &Path, g: &Ganache, token: &str) -> Server {
    let mut flags = FAST.to_vec();
    flags.extend([
        "--pool-threads",
        "0",
        "--notary-batch-ms",
        "200",
        "--anchor-rpc-url",
        &g.url,
        // No anchor transactions in this test's txpool: only the settlements.
        "--anchor-every",
        "1024",
        "--x402-asset",
        token,
        "--x402-recover-after",
        "2",
    ]);
    Server::start_env(data, &flags, &[("VRS_ANCHOR_PRIVATE_KEY", KEY)])
}

/// The official client paying in the background (its request dies with the server).
fn pay_in_background(url: &str, token: &str, body: &str, key: &str) -> Child {
    Command::new(repo().join("tools/x402/.venv/bin/python"))
        .arg(repo().join("tools/x402/pay.py"))
        .args(["--url", url, "--key", PAYER_KEY, "--asset", token])
        .args(["--body", body, "--idempotency-key", key])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("pay.py starts")
}

/// The receipt id the request prepared before settling (read from the store).
fn settling_receipt(data: &Path) -> Option<String> {
    let db = rusqlite::Connection::open_with_flags(
        data.join("vrs.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .ok()?;
    let prepared: String = db
        .query_row(
            "SELECT prepared FROM payment_nonces WHERE status = 'settling'",
            [],
            |r| r.get(0),
        )
        .ok()?;
    let v: Value = serde_json::from_str(&prepared).ok()?;
    Some(v["receipt_id"].as_str()?.to_owned())
}

fn pending_transfers(g: &Ganache, token: &str) -> usize {
    let pool = g.rpc("txpool_content", json!([]));
    pool["pending"]
        .as_object()
        .into_iter()
        .flat_map(|by_sender| by_sender.values())
        .flat_map(|by_nonce| by_nonce.as_object().into_iter().flat_map(|m| m.values()))
        .filter(|tx| tx["to"].as_str().map(str::to_lowercase).as_deref() == Some(token))
        .count()
}

#[test]
fn a_payment_cut_off_by_a_crash_is_finished_after_restart_and_charged_once() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, false);
    let token = deploy_token(&g);
    let data = dir.path().join("data");
    let payer_before = balance(&g, &token, PAYER);
    let pay_to_before = balance(&g, &token, ADDRESS);

    let mut s = start(&data, &g, &token);
    let mut receipts = Vec::new();
    for (case, key) in [
        ("killed before the transfer was sent", "crash-before"),
        ("killed after the transfer was sent", "crash-after"),
    ] {
        let body = json!({"schema": "sha256", "payload_hash": sha(key)}).to_string();
        // Hold the settlement: a frozen node answers nothing (nothing is sent); a node that
        // does not mine takes the transfer and never includes it.
        let sent = key == "crash-after";
        if sent {
            g.rpc("miner_stop", json!([]));
        } else {
            g.freeze(true);
        }
        let url = format!("{}/v1/notarize", s.url);
        let mut client = pay_in_background(&url, &token, &body, key);
        wait_for(&format!("{case}: the nonce reserved"), DEADLINE, || {
            settling_receipt(&data).is_some()
        });
        if sent {
            wait_for(
                &format!("{case}: the transfer in the txpool"),
                DEADLINE,
                || pending_transfers(&g, &token) == 1,
            );
        }
        let prepared = settling_receipt(&data).unwrap();
        s.crash();
        let _ = client.kill();
        let _ = client.wait();
        if sent {
            g.rpc("miner_start", json!([]));
        } else {
            g.freeze(false);
        }

        // The restarted leader finishes the request: the prepared receipt is stored.
        s = start(&data, &g, &token);
        wait_for(&format!("{case}: the receipt recovered"), DEADLINE, || {
            s.get(&format!("/v1/notarize/{prepared}")).0 == 200
        });
        let (_, r) = s.get(&format!("/v1/notarize/{prepared}"));
        assert_eq!(r["payment"]["method"], "x402", "{case}: {r:#}");

        // The client retries with the same key: the first request's receipt, no new charge.
        let charged = balance(&g, &token, PAYER);
        let retry = pay(
            &format!("{}/v1/notarize", s.url),
            PAYER_KEY,
            &token,
            &body,
            &["--idempotency-key", key],
        );
        assert_eq!(retry["status"], 202, "{case}: {retry:#}");
        assert_eq!(retry["headers"]["idempotent-replayed"], "true", "{retry:#}");
        assert_eq!(retry["body"]["receipt_id"], prepared, "{case}: {retry:#}");
        assert_eq!(
            balance(&g, &token, PAYER),
            charged,
            "{case}: the retry paid"
        );
        receipts.push(prepared);
    }

    // Each payment was charged exactly once, and only the two receipts exist.
    assert_eq!(balance(&g, &token, PAYER), payer_before - 2 * PRICE);
    assert_eq!(balance(&g, &token, ADDRESS), pay_to_before + 2 * PRICE);
    let (_, st) = s.get("/v1/notarize/status");
    assert_eq!(st["receipts"], 2, "{st:#}");
    assert_ne!(receipts[0], receipts[1]);
}
