//! Valid inputs of every target, taken from the running harness where the service makes them
//! (verification answers, epochs, pool batches): the cargo-fuzz corpus starts from them
//! (`cargo run -p vrs --example fuzz_seeds`), and the proptest suite mutates them.

use crate::fuzz::SEED_NOW;
use crate::fuzz::{payer_address, resign, x402_config};
use crate::harness::{get, Harness, API_KEY_MARK};
use serde_json::{json, Value};
use vrs_engine::anchor::{calldata, epoch_record_hash, AnchorLeaf, EpochRecord, LeafKind};
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::group::Modulus;
use vrs_engine::merkle;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_protocol::proof_json::ProofDoc;
use vrs_store::codec;

/// One valid input of a target.
#[derive(Clone, Debug)]
pub struct Seed {
    pub target: &'static str,
    /// A file name for the corpus.
    pub name: String,
    pub data: Vec<u8>,
}

fn seed(target: &'static str, name: impl Into<String>, data: impl Into<Vec<u8>>) -> Seed {
    Seed {
        target,
        name: name.into(),
        data: data.into(),
    }
}

fn flagged(flags: u8, body: impl AsRef<[u8]>) -> Vec<u8> {
    let mut v = vec![flags];
    v.extend_from_slice(body.as_ref());
    v
}

/// Every target's seeds.
pub fn seeds(h: &Harness) -> Result<Vec<Seed>, String> {
    let mut out = Vec::new();
    bets(&mut out);
    notary(h, &mut out)?;
    x402_seeds(&mut out)?;
    requests(h, &mut out);
    proof_docs(&mut out)?;
    cli(h, &mut out)?;
    out.push(seed(
        "store_codec",
        "checkpoints",
        flagged(
            0,
            codec::encode_checkpoints(&[(64, vec![1, 2, 3]), (128, vec![4; 64])]),
        ),
    ));
    out.push(seed("store_codec", "dice", flagged(1, "6,4,1")));
    out.push(seed("store_codec", "combo", flagged(2, "2,5")));
    Ok(out)
}

fn bets(out: &mut Vec<Seed>) {
    let dice = [
        json!({"bet_type": "over7", "amount": 1.0, "player_seed": "my-seed"}),
        json!({"bet_type": "under7", "amount": "1.00"}),
        json!({"bet_type": "exact", "target": 7, "amount": 2.5, "player_id": "p",
               "player_seed": "s", "operator_key": "k", "instant": false}),
        json!({"bet_type": "odd", "amount": 1e2}),
        json!({"bet_type": "even", "instant": true}),
    ];
    let sicbo = [
        json!({"bet_type": "big"}),
        json!({"bet_type": "small", "amount": 0.01}),
        json!({"bet_type": "total", "target": 10, "amount": 10000}),
        json!({"bet_type": "single", "target": 3}),
        json!({"bet_type": "double", "target": 2}),
        json!({"bet_type": "triple", "target": 6}),
        json!({"bet_type": "anyTriple"}),
        json!({"bet_type": "combo", "combo": [2, 5], "player_seed": "é✓"}),
    ];
    for (i, b) in dice.iter().enumerate() {
        out.push(seed(
            "bet_body",
            format!("dice-{i}"),
            flagged(0, b.to_string()),
        ));
    }
    for (i, b) in sicbo.iter().enumerate() {
        out.push(seed(
            "bet_body",
            format!("sicbo-{i}"),
            flagged(1, b.to_string()),
        ));
    }
    out.push(seed("rng_body", "seed", r#"{"client_seed":"my seed"}"#));
    out.push(seed("rng_body", "empty", ""));
}

fn notary(h: &Harness, out: &mut Vec<Seed>) -> Result<(), String> {
    let (_, game) = h.send(get(&format!("/api/v1/games/{}", h.epoch_game)))?;
    let result_hash = game["result"]["result_hash"]
        .as_str()
        .ok_or_else(|| format!("no result_hash in {game}"))?;
    let bodies = [
        json!({"schema": "sha256", "payload_hash": "ab".repeat(32)}),
        json!({"schema": "keccak256", "payload_hash": format!("0x{}", "CD".repeat(32)),
               "metadata": {"name": "report.pdf", "n": [1, 2.5, -0.0, 1e21, {"x": null}]}}),
        json!({"schema": "jcs-sha256", "payload_hash": "01".repeat(32), "metadata": null}),
        json!({"schema": "vrs-game-result", "payload_hash": result_hash,
               "metadata": {"game_id": h.epoch_game}}),
    ];
    for (i, b) in bodies.iter().enumerate() {
        out.push(seed(
            "notarize_body",
            format!("key-{i}"),
            flagged(1, b.to_string()),
        ));
    }
    out.push(seed(
        "notarize_body",
        "idempotent",
        flagged(3, bodies[0].to_string()),
    ));
    out.push(seed(
        "notarize_body",
        "unpaid",
        flagged(0, bodies[0].to_string()),
    ));
    let metadata = [
        json!({"name": "report.pdf", "size": 1234}),
        json!({"numbers": [333333333.333_333_3, 1e30, 4.5, 0.002, 1e-27],
               "string": "€$\u{f}\nA'B\"\\\\\"/", "literals": [null, true, false]}),
        json!({"\u{ff01}": 1, "\u{1f600}": 2, "deep": {"a": {"b": {"c": [1, [2, [3]]]}}}}),
    ];
    for (i, m) in metadata.iter().enumerate() {
        out.push(seed(
            "notary_metadata",
            format!("metadata-{i}"),
            flagged(0, m.to_string()),
        ));
    }
    out.push(seed("notary_metadata", "hash", flagged(1, "Ab".repeat(32))));
    out.push(seed(
        "notary_metadata",
        "hash-0x",
        flagged(1, format!("0x{}", "ab".repeat(32))),
    ));
    Ok(())
}

/// A payment payload of `version` from the payer key, times as given (numbers or `now±N`).
fn payment(version: u8, after: &str, before: &str) -> Result<Value, String> {
    let c = x402_config();
    let exact = json!({
        "signature": "0x",
        "authorization": {
            "from": payer_address()?.to_checksum(None),
            "to": c.pay_to.to_checksum(None),
            "value": c.amount.to_string(),
            "validAfter": after,
            "validBefore": before,
            "nonce": format!("0x{}", "07".repeat(32)),
        },
    });
    Ok(match version {
        2 => json!({"x402Version": 2, "accepted": c.requirements_v2(), "payload": exact}),
        _ => json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": exact}),
    })
}

fn x402_seeds(out: &mut Vec<Seed>) -> Result<(), String> {
    use base64::Engine;
    let c = x402_config();
    let (after, before) = ((SEED_NOW - 600).to_string(), (SEED_NOW + 300).to_string());
    for (flag, version) in [(0u8, 2u8), (1, 1)] {
        let mut signed = payment(version, &after, &before)?;
        resign(&c, &mut signed)?;
        let header = base64::engine::general_purpose::STANDARD.encode(signed.to_string());
        out.push(seed(
            "x402_header",
            format!("v{version}"),
            flagged(flag, header),
        ));
        out.push(seed(
            "x402_payload",
            format!("v{version}-signed"),
            flagged(flag, signed.to_string()),
        ));
        let relative = payment(version, "now-600", "now+300")?.to_string();
        out.push(seed(
            "x402_payload",
            format!("v{version}-resign"),
            flagged(flag | 2, &relative),
        ));
        out.push(seed(
            "x402_notarize",
            format!("v{version}-resign"),
            flagged(flag | 2, &relative),
        ));
    }
    Ok(())
}

fn requests(h: &Harness, out: &mut Vec<Seed>) {
    let key = json!({"schema": "sha256", "payload_hash": "ef".repeat(32)});
    let raw = [
        ("catalog", "GET /api/v1/games\n\n".to_owned()),
        (
            "bet",
            "POST /api/v1/games/dice/bet\ncontent-type: application/json\n\n\
             {\"bet_type\":\"exact\",\"target\":7}"
                .to_owned(),
        ),
        (
            "rng",
            "POST /api/v1/rng/generate\n\n{\"client_seed\":\"x\"}".to_owned(),
        ),
        (
            "notarize",
            format!(
                "POST /v1/notarize\ncontent-type: application/json\nauthorization: Bearer \
                 {API_KEY_MARK}\nidempotency-key: k1\n\n{key}"
            ),
        ),
        ("verify", format!("GET /api/v1/verify/{}\n\n", h.epoch_game)),
        (
            "pool-game",
            format!("GET /api/v1/games/{}\n\n", h.pool_game),
        ),
        ("epoch", "GET /api/v1/epochs/1\n\n".to_owned()),
        ("pool-batch", "GET /api/v1/pool/batches/1\n\n".to_owned()),
        ("status", "GET /v1/notarize/status\n\n".to_owned()),
        ("delete", "DELETE /api/v1/games\n\n".to_owned()),
    ];
    for (name, r) in raw {
        out.push(seed("http_request", name, r));
    }
    for (name, p) in [
        ("epoch-game", h.epoch_game.as_str()),
        ("pool-game", h.pool_game.as_str()),
        ("number", "1"),
        ("document", "protocol"),
        ("asset", "vrs-verify.mjs"),
    ] {
        out.push(seed("path_param", name, p));
    }
}

fn proof_docs(out: &mut Vec<Seed>) -> Result<(), String> {
    for (name, modulus, t, replay) in [
        ("test512-replay", "test512", 200, Some(50)),
        ("test1024", "test1024", 100, None),
        ("rsa2048", "rsa2048", 20, Some(8)),
    ] {
        let m = Modulus::by_name(modulus).map_err(|e| e.to_string())?;
        let seed_bytes = [9u8; 32];
        let x = m.hash_to_group(&seed_bytes);
        let fast = Fast::prepare(&m).map_err(|e| e.to_string())?;
        let opts = EvalOptions {
            replay_every: replay,
            ..EvalOptions::default()
        };
        let out_vdf = vdf::evaluate(&fast, &m, &x, t, &opts, &mut |_| {})
            .map_err(|e| e.to_string())?
            .prove();
        let doc = ProofDoc::new(&m, Some(&seed_bytes), &out_vdf);
        let text = serde_json::to_string(&doc).map_err(|e| e.to_string())?;
        out.push(seed("proof_doc", name, text));
    }
    Ok(())
}

/// The anchor object of a record in a one-leaf anchor batch, confirmed by transaction `tx`.
fn anchor_claim(leaf: &AnchorLeaf, tx: &str) -> Value {
    let root = merkle::leaf_hash(&leaf.bytes());
    json!({
        "status": "confirmed",
        "enabled": true,
        "batch": 1,
        "epochs": {"first": leaf.number, "last": leaf.number},
        "pool_batches": {"from": 1, "to": 1},
        "notary_batches": {"from": 1, "to": 1},
        "leaf": hex::encode(leaf.bytes()),
        "leaf_hash": hex::encode(root),
        "leaf_index": 0,
        "tree_size": 1,
        "audit_path": [],
        "root": hex::encode(root),
        "calldata": format!("0x{}", hex::encode(calldata(&root))),
        "tx": tx,
        "block": 16,
        "chain": "base",
        "chain_id": 8453,
    })
}

/// The anchor account of the seeds' transactions.
const ANCHOR_ACCOUNT: &str = "0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1";

/// The node's answers for an anchor transaction carrying `claim`'s root, with the server's
/// stats naming the account it is sent from (what a verifier without a policy compares).
fn node_answers(claim: &Value, tx: &str) -> Result<Value, String> {
    let root =
        hex::decode(claim["root"].as_str().unwrap_or_default()).map_err(|e| e.to_string())?;
    let root: [u8; 32] = root.try_into().map_err(|_| "root is not 32 bytes")?;
    Ok(json!({
        "/api/v1/stats": {"anchoring": {"address": ANCHOR_ACCOUNT}},
        "rpc:eth_chainId": {"jsonrpc": "2.0", "id": 1, "result": "0x2105"},
        "rpc:eth_blockNumber": {"jsonrpc": "2.0", "id": 1, "result": "0x12"},
        "rpc:eth_getTransactionByHash": {"jsonrpc": "2.0", "id": 1, "result": {
            "hash": tx, "blockNumber": "0x10", "from": ANCHOR_ACCOUNT,
            "input": format!("0x{}", hex::encode(calldata(&root))),
        }},
        // Mined now: the epochs it anchors were resolved just before (their times are bounded
        // by it, docs/PROTOCOL.md §10).
        "rpc:eth_getBlockByNumber": {"jsonrpc": "2.0", "id": 1, "result": {
            "number": "0x10", "timestamp": format!("{:#x}", vrs_observe::clock::now_ms() / 1000),
        }},
    }))
}

/// The kind-1 anchor leaf of an epoch from its published fields (`number` under `key`).
fn epoch_leaf(v: &Value, key: &str) -> Result<AnchorLeaf, String> {
    let bytes =
        |k: &str| hex::decode(v[k].as_str().unwrap_or_default()).map_err(|e| format!("{k}: {e}"));
    let bets_root: [u8; 32] = bytes("bets_root")?
        .try_into()
        .map_err(|_| "bets_root is not 32 bytes")?;
    let epoch = v[key].as_u64().ok_or_else(|| format!("no {key} in {v}"))?;
    let (prev_y, x, y, l, pi) = (
        bytes("previous_output")?,
        bytes("x")?,
        bytes("y")?,
        bytes("l")?,
        bytes("pi")?,
    );
    Ok(AnchorLeaf {
        kind: LeafKind::Epoch,
        number: epoch,
        hash: epoch_record_hash(&EpochRecord {
            epoch,
            iterations: v["iterations"].as_u64().unwrap_or_default(),
            bets_root: &bets_root,
            prev_y: &prev_y,
            x: &x,
            y: &y,
            l: &l,
            pi: &pi,
        }),
    })
}

fn merge(a: &mut Value, b: Value) {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
}

fn cli(h: &Harness, out: &mut Vec<Seed>) -> Result<(), String> {
    let tx = format!("0x{}", "ab".repeat(32));
    let ok = |path: &str| -> Result<Value, String> {
        match h.send(get(path))? {
            (axum::http::StatusCode::OK, v) => Ok(v),
            (status, v) => Err(format!("{path}: {status} {v}")),
        }
    };

    // The service info: the acceptance keys every verification checks signatures against.
    let info = ok("/")?;
    // An epoch game, then the same with its epoch in a confirmed anchor batch.
    let id = &h.epoch_game;
    let verify_path = format!("/api/v1/verify/{id}");
    let verified = ok(&verify_path)?;
    // The game's own epoch as published (vrs verify's epoch_record).
    let own_path = format!(
        "/api/v1/epochs/{}",
        verified["proof"]["vdfEpoch"]
            .as_u64()
            .ok_or("the epoch game names no epoch")?
    );
    let own = ok(&own_path)?;
    let epoch_input = |v: &Value, rpc: bool| {
        json!({"game_id": id, "rpc": rpc, "require_anchor": rpc,
               "answers": {&verify_path: v, &own_path: own, "/": info}})
    };
    out.push(seed(
        "verify_response",
        "epoch-game",
        epoch_input(&verified, false).to_string(),
    ));
    let mut anchored = verified.clone();
    let claim = anchor_claim(&epoch_leaf(&verified["proof"], "vdfEpoch")?, &tx);
    if let Some(p) = anchored["proof"].as_object_mut() {
        p.insert("anchor".into(), claim.clone());
        p.insert("anchorTx".into(), json!(tx));
        p.insert("anchorChainId".into(), json!(8453));
        p.insert("anchor_status".into(), json!("confirmed"));
    }
    let mut input = epoch_input(&anchored, true);
    merge(&mut input["answers"], node_answers(&claim, &tx)?);
    out.push(seed(
        "verify_response",
        "epoch-game-anchored",
        input.to_string(),
    ));

    // A game of a later epoch, with the previous epoch its chain link is checked against.
    let later_path = format!("/api/v1/verify/{}", h.later_game);
    let later = ok(&later_path)?;
    let e = later["proof"]["vdfEpoch"]
        .as_u64()
        .ok_or("the later game names no epoch")?;
    let previous = format!("/api/v1/epochs/{}", e.saturating_sub(1));
    let own = format!("/api/v1/epochs/{e}");
    out.push(seed(
        "verify_response",
        "later-game",
        json!({"game_id": h.later_game, "answers": {
            &later_path: later, &previous: ok(&previous)?, &own: ok(&own)?, "/": info,
        }})
        .to_string(),
    ));

    // A pool-served game with its batch, the batch before and the anchor epoch.
    let pool_id = &h.pool_game;
    let pool_path = format!("/api/v1/verify/{pool_id}");
    let pool_verified = ok(&pool_path)?;
    let b = pool_verified["proof"]["pool_batch"]
        .as_u64()
        .ok_or("the pool game names no batch")?;
    let e = pool_verified["proof"]["anchor_epoch"]
        .as_u64()
        .ok_or("the pool game names no anchor epoch")?;
    let bet_epoch = pool_verified["proof"]["bet_epoch"]["epoch"].as_u64();
    let mut answers = json!({ &pool_path: pool_verified, "/": info });
    let mut paths = vec![
        format!("/api/v1/pool/batches/{b}"),
        format!("/api/v1/epochs/{e}"),
    ];
    // The epoch whose tree binds the bet (its record, once closed).
    paths.extend(bet_epoch.map(|n| format!("/api/v1/epochs/{n}")));
    for path in paths {
        answers[&path] = ok(&path)?;
    }
    if b > 1 {
        let path = format!("/api/v1/pool/batches/{}", b - 1);
        answers[&path] = ok(&path)?;
    }
    out.push(seed(
        "verify_response",
        "pool-game",
        json!({"game_id": pool_id, "answers": answers}).to_string(),
    ));

    // The audit of epochs 1 to 3 and of 2 to 3, then of epoch 1 with its anchor.
    let mut epochs = serde_json::Map::new();
    for n in 1..=3 {
        let path = format!("/api/v1/epochs/{n}");
        epochs.insert(path.clone(), ok(&path)?);
    }
    for from in [1, 2] {
        out.push(seed(
            "audit_epochs",
            format!("epochs-{from}-3"),
            json!({"from": from, "to": 3, "answers": epochs}).to_string(),
        ));
    }
    let epoch = epochs.get("/api/v1/epochs/1").cloned().unwrap_or_default();
    let claim = anchor_claim(&epoch_leaf(&epoch, "epoch")?, &tx);
    let mut anchored = epoch.clone();
    anchored["anchor"] = claim.clone();
    let mut input = json!({"from": 1, "to": 1, "rpc": true,
        "answers": {"/api/v1/epochs/1": anchored}});
    merge(&mut input["answers"], node_answers(&claim, &tx)?);
    out.push(seed("audit_epochs", "epoch-1-anchored", input.to_string()));
    Ok(())
}
