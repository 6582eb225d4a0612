//! Anchors that bind (docs/PROTOCOL.md §16, "Binding"), against a live `vrs serve` with the
//! witnessed log, three `vrs witness` processes and a real local EVM node (ganache):
//!
//! - honest: each anchor batch is an entry of the log, its transaction carries the version-2
//!   calldata (the batch number and the log's size and root), and `anchor_inclusion` and
//!   `anchor_onchain` pass in `vrs verify --rpc`, `vrs audit --rpc` and the Python verifier,
//!   and `anchor_inclusion` in the TypeScript one (it reads no node), each under the policy;
//! - a second root for the game's batch: the test-only operator signs, with its own log key, a
//!   history whose anchor entry of that batch carries a root of its choosing (the game's epoch
//!   leaf alone), sends that root's version-2 calldata **from its own anchor account**, and
//!   serves one client the proof that points at it. The sender is right and the proof is
//!   self-consistent; under the policy every verifier fails `anchor_inclusion` (no quorum
//!   cosigned that entry), and without one the proof passes with the words that say whose word
//!   it rests on.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vrs_protocol::tlog::entry::{AnchorEntry, LogEntry};
use vrs_protocol::tlog::note::LogSigner;

use crate::cli_verify_anchor::one_leaf_batch;
use crate::evm::{Ganache, ADDRESS};
use crate::tamper::tampering_proxy;
use crate::witnessed_attacks::{
    bet, operator, repo, report_of, step_of, witness_flags, Attack, Operator, ORIGIN, SEED,
};

const DEADLINE: Duration = Duration::from_secs(120);

/// `vrs verify` of `id` at `url` with `--rpc`, under the policy or not: (exit code, report).
fn vrs_verify(op: &Operator, url: &str, id: &str, rpc: &str, policy: bool) -> (Option<i32>, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
    cmd.args([
        "verify", id, "--server", url, "--group", "test512", "--json",
    ])
    .args(["--rpc", rpc]);
    if policy {
        cmd.args(witness_flags(op));
    }
    report_of(&cmd.output().unwrap(), "vrs verify")
}

fn python_verify(op: &Operator, url: &str, id: &str, rpc: &str) -> (Option<i32>, Value) {
    let out = Command::new(repo().join("clients/python/.venv/bin/python"))
        .args(["-m", "vrs_client.cli", id, "--server", url])
        .args(["--group", "test512", "--json", "--rpc", rpc])
        .args(witness_flags(op))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    report_of(&out, "the Python verifier")
}

fn typescript_verify(op: &Operator, url: &str, id: &str) -> (Option<i32>, Value) {
    let out = Command::new("node")
        .arg(repo().join("clients/typescript/bin/vrs-verify.mjs"))
        .args(["--group", "test512", "--json"])
        .args(witness_flags(op))
        .args([url, id])
        .output()
        .unwrap();
    report_of(&out, "the TypeScript verifier")
}

/// A step's verdict and detail, whichever verifier wrote the report.
fn verdict(report: &Value, step: &str) -> (bool, String) {
    let s = step_of(report, step);
    let passed = s["passed"] == true || s["status"] == "ok";
    (passed, s["detail"].as_str().unwrap_or_default().to_owned())
}

/// Waits until game `id`'s anchor batch is confirmed and its log entry is cosigned by at
/// least two witnesses (`anchor.log.cosigned` names them); returns the verification.
fn wait_bound(op: &Operator, id: &str) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let v = op.server.poll_ok(&format!("/api/v1/verify/{id}"), DEADLINE);
        let a = &v["proof"]["anchor"];
        let cosigners = a["log"]["cosigned"].as_array().map_or(0, |c| {
            c.iter()
                .map(|l| {
                    l["checkpoint"]
                        .as_str()
                        .unwrap_or("")
                        .matches("\n— w.test/")
                        .count()
                })
                .sum()
        });
        if a["status"] == "confirmed" && cosigners >= 2 {
            crate::protocol_docs::assert_documented("20.1", "a bound anchor", &v);
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "not anchored and cosigned: {a:#}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The operator's own history for batch `forged.batch`: its anchor entry `forged`, as the last
/// leaf of a tree of the honest entry's size, under a checkpoint the operator signs with its
/// log key (the earlier leaves are the honest ones: the audit path of a last leaf holds only
/// subtrees to its left). Returns `anchor.log`'s `bound` and the calldata that binds it.
fn forged_binding(honest_bound: &Value, forged: AnchorEntry) -> (Value, String) {
    let (batch, root) = (forged.batch, forged.root);
    let entry = LogEntry::Anchor(forged).encode();
    let index = honest_bound["index"].as_u64().unwrap();
    let path: Vec<[u8; 32]> = honest_bound["proof"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            vrs_protocol::tlog::tree::parse_b64_hash(h.as_str().unwrap())
                .unwrap()
                .0
        })
        .collect();
    let size = index + 1;
    let log_root = vrs_engine::merkle::root_from_path(
        &vrs_engine::merkle::leaf_hash(&entry),
        index,
        size,
        &path,
    )
    .unwrap();
    let signer = LogSigner::new(ORIGIN, ed25519_dalek::SigningKey::from_bytes(&SEED)).unwrap();
    let note = signer
        .sign(size, vrs_protocol::tlog::tree::Hash(log_root))
        .unwrap();
    let calldata = vrs_engine::anchor::Calldata::V2 {
        batch,
        log: vrs_engine::anchor::LogBinding {
            size,
            root: log_root,
        },
        root,
    };
    (
        json!({
            "index": index,
            "entry": hex::encode(&entry),
            "checkpoint": String::from_utf8(note).unwrap(),
            "proof": honest_bound["proof"],
        }),
        format!("0x{}", hex::encode(calldata.bytes())),
    )
}

#[test]
fn one_anchor_batch_has_one_root_under_a_policy() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let rpc: &'static str = Box::leak(g.url.clone().into_boxed_str());
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let op = operator(
        &data,
        Attack {
            anchor_rpc: Some(rpc),
            ..Attack::default()
        },
    );
    let (id, e) = bet(&op.server, "anchored");
    op.server.poll_ok(&format!("/api/v1/games/{id}"), DEADLINE);
    let v = wait_bound(&op, &id);
    let anchor = &v["proof"]["anchor"];
    let batch = anchor["batch"].as_u64().unwrap();
    let calldata = anchor["calldata"].as_str().unwrap().to_owned();
    assert!(
        calldata.starts_with("0x7672732d616e63686f722d76323a") && calldata.len() == 2 + 188,
        "{anchor:#}"
    );
    // The transaction on chain carries exactly that calldata, from the operator's account.
    let tx = g.rpc(
        "eth_getTransactionByHash",
        json!([anchor["tx"].as_str().unwrap()]),
    );
    assert_eq!(tx["input"].as_str().unwrap(), calldata, "{tx}");
    assert_eq!(tx["from"].as_str().unwrap().to_lowercase(), ADDRESS);

    // Honest: every verifier, under the policy, finds the batch bound and cosigned.
    let url = op.server.url.clone();
    let (_, r) = vrs_verify(&op, &url, &id, rpc, true);
    for step in ["anchor_inclusion", "anchor_onchain"] {
        let (ok, d) = verdict(&r, step);
        assert!(ok, "vrs verify {step}: {r:#}");
        if step == "anchor_inclusion" {
            assert!(
                d.contains(&format!("batch {batch} bound to the log of size")),
                "{d}"
            );
            assert!(d.contains("cosigned by [W"), "{d}");
        } else {
            assert!(
                d.contains(&format!("\"vrs-anchor-v2:\" ‖ batch {batch}")),
                "{d}"
            );
        }
    }
    let (_, r) = python_verify(&op, &url, &id, rpc);
    assert!(verdict(&r, "anchor_onchain").0, "Python: {r:#}");
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(ok && d.contains("cosigned by [W"), "Python: {r:#}");
    let (_, r) = typescript_verify(&op, &url, &id);
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(ok && d.contains("cosigned by [W"), "TypeScript: {r:#}");
    // The audit of the batch's epochs reads each batch once and finds it bound.
    let first = anchor["epochs"]["first"].as_u64().unwrap();
    let last = anchor["epochs"]["last"].as_u64().unwrap();
    let audit = |url: &str, first: u64, last: u64| {
        let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
            .args(["audit", "--server", url, "--group", "test512"])
            .args(["--from", &first.to_string(), "--to", &last.to_string()])
            .args(["--rpc", rpc])
            .args(witness_flags(&op))
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let t = audit(&url, first, last);
    assert!(
        !t.contains(" anchor_") && !t.contains(" log_history"),
        "{t}"
    );
    assert!(t.contains("anchored and checked on chain"), "{t}");

    // The attack: a second root for the batch, bound to the operator's own history and sent
    // from its own account (the node holds the account unlocked, as the operator holds its
    // key), served to one client.
    let leaf = hex::decode(anchor["leaf"].as_str().unwrap()).unwrap();
    let forged_root = vrs_engine::merkle::leaf_hash(&leaf);
    let (pool_at, notary_at) = (
        anchor["pool_batches"]["from"].clone(),
        anchor["notary_batches"]["from"].clone(),
    );
    // The batch of the game's epoch leaf alone, as the forged proof will claim it.
    let (p, q) = (pool_at.as_u64().unwrap(), notary_at.as_u64().unwrap());
    let forged = AnchorEntry {
        batch,
        first_epoch: e,
        last_epoch: e,
        pool_from: p,
        pool_to: p,
        notary_from: q,
        notary_to: q,
        root: forged_root,
    };
    let (bound, forged_calldata) = forged_binding(&anchor["log"]["bound"], forged);
    let forged_tx = g.send(ADDRESS, &forged_calldata);
    let forged_root = hex::encode(forged_root);
    let forge = move |a: &mut Value| {
        let at = (e, &pool_at, &notary_at);
        one_leaf_batch(a, &forged_tx, &forged_root, &forged_calldata, at);
        a["log"] = json!({"bound": bound, "cosigned": []});
    };
    let (verify_path, epoch_path) = (
        format!("/api/v1/verify/{id}"),
        format!("/api/v1/epochs/{e}"),
    );
    let forked = tampering_proxy(&url, move |path, v| {
        if path == verify_path {
            forge(&mut v["proof"]["anchor"]);
            let tx = v["proof"]["anchor"]["tx"].clone();
            v["proof"]["anchorTx"] = tx.clone();
            v["proof"]["legacyTx"] = tx;
        } else if path == epoch_path {
            forge(&mut v["anchor"]);
        }
    });
    let short = "anchor.log: no cosigned checkpoint holds the anchor entry";
    let (code, r) = vrs_verify(&op, &forked, &id, rpc, true);
    assert_eq!(code, Some(1), "{r:#}");
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(
        !ok && d.contains("anchor.log: ") && d.contains(short),
        "vrs verify: {r:#}"
    );
    assert!(!verdict(&r, "anchor_onchain").0, "vrs verify: {r:#}");
    let (code, r) = python_verify(&op, &forked, &id, rpc);
    assert_eq!(code, Some(1), "{r:#}");
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(!ok && d.contains(short), "Python: {r:#}");
    let (code, r) = typescript_verify(&op, &forked, &id);
    assert_eq!(code, Some(1), "{r:#}");
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(!ok && d.contains(short), "TypeScript: {r:#}");
    // (The game's epoch alone: the forged batch is then the only view of it the audit sees.)
    let t = audit(&forked, e, e);
    assert!(
        t.lines()
            .any(|l| l.contains(&format!("FAIL epoch {e} anchor_inclusion")) && l.contains(short)),
        "{t}"
    );
    // Its calldata's log size and root are not the history the quorum cosigned.
    assert!(
        t.lines()
            .any(|l| l.contains(&format!("FAIL epoch {e} log_history"))
                && l.contains(&format!(
                    "anchor batch {batch}: the anchor entry's checkpoint"
                ))),
        "{t}"
    );
    // Without a policy the forged proof passes, and says whose word the binding is.
    let (_, r) = vrs_verify(&op, &forked, &id, rpc, false);
    let (ok, d) = verdict(&r, "anchor_inclusion");
    assert!(ok && d.contains("the log's word"), "{r:#}");
    assert!(verdict(&r, "anchor_onchain").0, "{r:#}");
    assert!(op.server.stop());
}
