//! The notary against the real binary: schemas and status, API keys made by `vrs keys` while
//! the service runs, 400/401/402/404 answers, every Idempotency-Key row, receipts moving
//! pending → sealed (→ anchored, in the x402 test) with the proof recomputed here, and the
//! `vrs-game-result` schema.

use crate::server::{Server, FAST};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::{Duration, Instant};

pub const DEADLINE: Duration = Duration::from_secs(90);

/// A POST with headers; returns status, headers (lowercased) and the JSON body.
pub fn post(
    url: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> (u16, Vec<(String, String)>, Value) {
    let mut req = ureq::post(url).set("Content-Type", "application/json");
    for (k, v) in headers {
        req = req.set(k, v);
    }
    let resp = match req.send_string(body) {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("POST {url}: {e}"),
    };
    let status = resp.status();
    let hs = resp
        .headers_names()
        .into_iter()
        .map(|n| {
            let v = resp.header(&n).unwrap_or_default().to_owned();
            (n.to_lowercase(), v)
        })
        .collect();
    let text = resp.into_string().unwrap();
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, hs, v)
}

pub fn header<'a>(hs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    hs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// `vrs keys create` against the running service's store; returns (key, id).
pub fn create_key(data_dir: &Path, name: &str) -> (String, String) {
    create_key_in(&["--data-dir", data_dir.to_str().unwrap()], name)
}

/// `vrs keys create` in the store that `store` names (`--data-dir DIR` or `--database-url
/// URL`); returns (key, id).
pub fn create_key_in(store: &[&str], name: &str) -> (String, String) {
    let args = [&["keys", "create", "--name", name, "--json"], store].concat();
    let out = crate::vrs(&args, "");
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["key"].as_str().unwrap().to_owned(),
        v["id"].as_str().unwrap().to_owned(),
    )
}

/// Polls a receipt until `cond` holds on it.
pub fn wait_receipt(s: &Server, id: &str, cond: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let (status, r) = s.get(&format!("/v1/notarize/{id}"));
        assert_eq!(status, 200, "{r}");
        if cond(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "receipt still {r:#}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn h32(v: &Value) -> [u8; 32] {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("not a hex string: {v}"));
    hex::decode(s.trim_start_matches("0x"))
        .unwrap()
        .try_into()
        .unwrap()
}

fn node(l: &[u8; 32], r: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update([1u8]);
    h.update(l);
    h.update(r);
    h.finalize().into()
}

/// RFC 6962 §2.1.1: the root from a leaf hash, its index, the tree size and the audit path,
/// written here from the RFC and not taken from the service's code.
pub fn fold(leaf: [u8; 32], index: u64, size: u64, path: &[Value]) -> [u8; 32] {
    let (mut fnode, mut snode, mut r) = (index, size - 1, leaf);
    for p in path {
        let p = h32(p);
        assert!(snode != 0, "audit path too long");
        if fnode & 1 == 1 || fnode == snode {
            r = node(&p, &r);
            while fnode & 1 == 0 && fnode != 0 {
                fnode >>= 1;
                snode >>= 1;
            }
        } else {
            r = node(&r, &p);
        }
        fnode >>= 1;
        snode >>= 1;
    }
    assert_eq!(snode, 0, "audit path too short");
    r
}

/// The receipt's leaf hash recomputed from its public fields (docs/PROTOCOL.md §17).
pub fn receipt_leaf_hash(r: &Value) -> [u8; 32] {
    let mut leaf = vec![21u8];
    leaf.extend_from_slice(b"vrs/v1/notary-receipt");
    for f in [&r["receipt_id"], &r["schema"]] {
        let s = f.as_str().unwrap();
        leaf.extend_from_slice(&(s.len() as u16).to_be_bytes());
        leaf.extend_from_slice(s.as_bytes());
    }
    leaf.extend_from_slice(&h32(&r["payload_hash"]));
    let metadata = canonical(&r["metadata"]);
    leaf.extend_from_slice(&Sha256::digest(metadata.as_bytes()));
    leaf.extend_from_slice(&r["submitted_at_ms"].as_i64().unwrap().to_be_bytes());
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(&leaf);
    h.finalize().into()
}

/// RFC 8785 for the metadata these tests send (strings, integers, nested objects).
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&m[*k])))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// The receipt's inclusion in its batch, recomputed here.
pub fn assert_sealed_proof(r: &Value) {
    let leaf = receipt_leaf_hash(r);
    assert_eq!(hex::encode(leaf), r["leaf_hash"], "{r:#}");
    let p = &r["proof"];
    let root = fold(
        leaf,
        p["leaf_index"].as_u64().unwrap(),
        p["tree_size"].as_u64().unwrap(),
        p["audit_path"].as_array().unwrap(),
    );
    assert_eq!(hex::encode(root), p["root"], "{r:#}");
}

fn sha(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[test]
fn notary_with_api_keys_idempotency_and_proofs() {
    let dir = tempfile::tempdir().unwrap();
    let mut flags = FAST.to_vec();
    flags.extend(["--pool-threads", "0", "--notary-batch-ms", "200"]);
    let s = Server::start(dir.path(), &flags);
    let url = format!("{}/v1/notarize", s.url);

    // Public endpoints.
    let (status, schemas) = s.get("/v1/notarize/schemas");
    assert_eq!(status, 200);
    let ids: Vec<&str> = schemas["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["sha256", "keccak256", "jcs-sha256", "vrs-game-result"]
    );
    assert_eq!(schemas["schemas"][0]["metadata"]["max_bytes"], 4096);
    let (status, st) = s.get("/v1/notarize/status");
    assert_eq!(status, 200, "{st}");
    assert_eq!(st["payment_methods"], json!(["api_key"]));
    assert_eq!(st["pending"], 0);
    let (status, nf) = s.get(&format!("/v1/notarize/{}", "0".repeat(32)));
    assert_eq!(status, 404, "{nf}");
    assert!(nf["error"].as_str().unwrap().contains("not found"));

    let body =
        json!({"schema": "sha256", "payload_hash": sha("doc 1"), "metadata": {"b": 2, "a": "x"}})
            .to_string();
    // No credentials and x402 not configured here: 401 with a challenge.
    let (status, hs, e) = post(&url, &body, &[]);
    assert_eq!(status, 401, "{e}");
    assert!(header(&hs, "www-authenticate")
        .unwrap()
        .starts_with("Bearer"));
    let (status, hs, e) = post(&url, &body, &[("Authorization", "Bearer vrs_sk_wrong")]);
    assert_eq!(status, 401, "{e}");
    assert!(header(&hs, "www-authenticate")
        .unwrap()
        .contains("invalid_token"));

    let (key, key_id) = create_key(dir.path(), "tests");
    let auth = format!("Bearer {key}");
    let auth = [("Authorization", auth.as_str())];

    // Bad bodies name their field.
    for (bad, field) in [
        (json!({"schema": "md5", "payload_hash": sha("x")}), "schema"),
        (json!({"payload_hash": sha("x")}), "schema"),
        (
            json!({"schema": "sha256", "payload_hash": "abc"}),
            "payload_hash",
        ),
        (json!({"schema": "sha256"}), "payload_hash"),
        (
            json!({"schema": "sha256", "payload_hash": sha("x"), "metadata": [1]}),
            "metadata",
        ),
        (
            json!({"schema": "sha256", "payload_hash": sha("x"), "metadata": {"x": "a".repeat(5000)}}),
            "metadata",
        ),
        (
            json!({"schema": "sha256", "payload_hash": sha("x"), "extra": 1}),
            "extra",
        ),
        (
            json!({"schema": "vrs-game-result", "payload_hash": sha("x"), "metadata": {}}),
            "metadata.game_id",
        ),
    ] {
        let (status, _, e) = post(&url, &bad.to_string(), &auth);
        assert_eq!(status, 400, "{bad}: {e}");
        assert_eq!(e["field"], field, "{bad}: {e}");
    }
    let (status, _, e) = post(&url, "not json", &auth);
    assert_eq!((status, e["field"].as_str()), (400, Some("body")), "{e}");

    // A receipt with an API key.
    let (status, _, r) = post(&url, &body, &auth);
    assert_eq!(status, 202, "{r}");
    assert_eq!(r["status"], "pending");
    assert_eq!(r["schema"], "sha256");
    assert_eq!(r["payload_hash"], sha("doc 1"));
    assert_eq!(r["metadata"], json!({"a": "x", "b": 2}));
    assert_eq!(r["leaf_hash"], hex::encode(receipt_leaf_hash(&r)));
    let id = r["receipt_id"].as_str().unwrap().to_owned();
    assert_eq!(r["receipt_url"], format!("{url}/{id}"));

    // Keccak digests are shown the EVM way.
    let k = json!({"schema": "keccak256", "payload_hash": format!("0x{}", "AB".repeat(32))});
    let (status, _, kr) = post(&url, &k.to_string(), &auth);
    assert_eq!(status, 202, "{kr}");
    assert_eq!(kr["payload_hash"], format!("0x{}", "ab".repeat(32)));

    // pending → sealed, with a proof that folds to the batch root.
    let sealed = wait_receipt(&s, &id, |r| r["status"] == "sealed");
    assert_sealed_proof(&sealed);
    assert_eq!(sealed["verification"]["verified"], true, "{sealed:#}");
    let names: Vec<&str> = sealed["verification"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["leaf_hash", "batch_inclusion"]);
    assert_eq!(sealed["anchor"]["enabled"], false);

    // Idempotency-Key: the same body replays the first answer exactly; another body is 422.
    let idem = [auth[0], ("Idempotency-Key", "order-42")];
    let doc2 = json!({"schema": "sha256", "payload_hash": sha("doc 2")}).to_string();
    let (s1, _, first) = post(&url, &doc2, &idem);
    assert_eq!(s1, 202, "{first}");
    let (s2, hs2, again) = post(&url, &doc2, &idem);
    assert_eq!((s2, &again), (202, &first));
    assert_eq!(header(&hs2, "idempotent-replayed"), Some("true"));
    let (s3, _, e) = post(&url, &body, &idem);
    assert_eq!(s3, 422, "{e}");
    // The same key under another API key is another key.
    let (key2, _) = create_key(dir.path(), "other");
    let auth2 = format!("Bearer {key2}");
    let (s4, _, other) = post(
        &url,
        &doc2,
        &[("Authorization", &auth2), ("Idempotency-Key", "order-42")],
    );
    assert_eq!(s4, 202, "{other}");
    assert_ne!(other["receipt_id"], first["receipt_id"]);
    let long = "k".repeat(256);
    let (s5, _, e) = post(&url, &doc2, &[auth[0], ("Idempotency-Key", &long)]);
    assert_eq!(
        (s5, e["field"].as_str()),
        (400, Some("Idempotency-Key")),
        "{e}"
    );
    let ok_long = "k".repeat(255);
    let (s6, _, _) = post(&url, &doc2, &[auth[0], ("Idempotency-Key", &ok_long)]);
    assert_eq!(s6, 202);

    // Usage is counted per key (replays are not notarizations); keys never appear in lists.
    let out = crate::vrs(
        &[
            "keys",
            "list",
            "--json",
            "--data-dir",
            dir.path().to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&key));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mine = list
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == key_id)
        .unwrap();
    assert_eq!(mine["uses"], 4, "{list}");

    // A game result: its result_hash, under the game-result schema.
    let (status, bet) = s.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "odd", "amount": 1, "player_seed": "notarized"}),
    );
    assert_eq!(status, 202, "{bet}");
    let game_id = bet["game_id"].as_str().unwrap();
    let game = s.poll_ok(&format!("/api/v1/games/{game_id}"), DEADLINE);
    let result_hash = game["result_hash"]
        .as_str()
        .or_else(|| game["result"]["result_hash"].as_str())
        .unwrap_or_else(|| panic!("no result_hash in {game:#}"));
    let attest = json!({"schema": "vrs-game-result", "payload_hash": result_hash, "metadata": {"game_id": game_id}});
    let (status, _, ar) = post(&url, &attest.to_string(), &auth);
    assert_eq!(status, 202, "{ar}");
    let wrong = json!({"schema": "vrs-game-result", "payload_hash": sha("x"), "metadata": {"game_id": game_id}});
    let (status, _, e) = post(&url, &wrong.to_string(), &auth);
    assert_eq!(
        (status, e["field"].as_str()),
        (400, Some("payload_hash")),
        "{e}"
    );
    let unknown = json!({"schema": "vrs-game-result", "payload_hash": result_hash, "metadata": {"game_id": "0".repeat(32)}});
    let (status, _, e) = post(&url, &unknown.to_string(), &auth);
    assert_eq!(
        (status, e["field"].as_str()),
        (404, Some("metadata.game_id")),
        "{e}"
    );

    // A revoked key is refused.
    let out = crate::vrs(
        &[
            "keys",
            "revoke",
            &key_id,
            "--data-dir",
            dir.path().to_str().unwrap(),
        ],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let (status, hs, e) = post(&url, &body, &auth);
    assert_eq!(status, 401, "{e}");
    assert!(e["error"].as_str().unwrap().contains("revoked"));
    assert!(header(&hs, "www-authenticate").is_some());

    let (_, st) = s.get("/v1/notarize/status");
    assert!(st["receipts"].as_u64().unwrap() >= 6, "{st}");
    assert!(st["last_batch"]["number"].as_u64().unwrap() >= 1, "{st}");
}
