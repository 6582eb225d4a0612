//! Observability against a real `vrs serve`: Prometheus metrics on their own listener (never
//! on the public one) counting what the test did, and JSON logs, one object per line, that
//! never hold a secret: API keys, payment signatures, the key inside an RPC URL.

use crate::evm::free_port;
use crate::notary::{create_key, post};
use crate::server::{Server, FAST};
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The samples of a scrape, `name{labels}` → value, after checking every line's syntax.
fn parse_exposition(text: &str) -> BTreeMap<String, f64> {
    let mut samples = BTreeMap::new();
    let mut typed = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            assert!(
                typed.insert(name.to_owned(), kind.to_owned()).is_none(),
                "TYPE twice: {line}"
            );
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line {line:?}"
        );
        let (series, value) = line.rsplit_once(' ').unwrap();
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("value of {line:?}"));
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| {
                name.strip_suffix(s)
                    .filter(|f| typed.get(*f).is_some_and(|k| k == "histogram"))
            })
            .unwrap_or(name);
        assert!(typed.contains_key(family), "sample before its TYPE: {line}");
        if let Some(labels) = series.strip_prefix(name) {
            if !labels.is_empty() {
                assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            }
        }
        samples.insert(series.to_owned(), value);
    }
    samples
}

fn sum_of(samples: &BTreeMap<String, f64>, prefix: &str) -> f64 {
    samples
        .iter()
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, v)| v)
        .sum()
}

/// An x402 v1 payment header that parses but whose signature is not the payer's.
fn forged_payment(signature: &str) -> String {
    let payment = json!({
        "x402Version": 1,
        "scheme": "exact",
        "network": "base",
        "payload": {
            "signature": signature,
            "authorization": {
                "from": "0x1111111111111111111111111111111111111111",
                "to": "0x2222222222222222222222222222222222222222",
                "value": "20000",
                "validAfter": "0",
                "validBefore": "99999999999",
                "nonce": format!("0x{}", "33".repeat(32)),
            }
        }
    });
    base64::engine::general_purpose::STANDARD.encode(payment.to_string())
}

#[test]
fn metrics_count_what_happened_and_json_logs_hold_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("vrs.log");
    let key_file = dir.path().join("anchor.key");
    std::fs::write(
        &key_file,
        "4f3edf983ac636a65a842ce7c78d9aa706d3b113bce9c46f30d7d21715b23b1d",
    )
    .unwrap();
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    // The RPC URL carries a key, as hosted RPC URLs do; nothing listens there, so anchoring
    // fails and logs its failures.
    let rpc_secret = "rpcsecret7f3a9c";
    let rpc = format!("http://127.0.0.1:{}/v2/{rpc_secret}", free_port());
    let data = dir.path().join("data");
    let args = [
        FAST,
        &[
            "--metrics-addr",
            &metrics_addr,
            "--log-format",
            "json",
            // Not auto: probing for a GPU (feature gpu) loads Vulkan, whose driver may print
            // plain text to stderr itself, past the logger.
            "--batch-backend",
            "simd",
            "--instant-bets",
            "--pool-batch",
            "16",
            "--pool-low-water",
            "16",
            "--pool-depth",
            "64",
            "--pool-iterations",
            "32",
            "--anchor-rpc-url",
            &rpc,
            "--anchor-key-file",
            key_file.to_str().unwrap(),
            "--anchor-every",
            "1",
            "--x402-pay-to",
            "0x2222222222222222222222222222222222222222",
        ],
    ]
    .concat();
    let server = Server::start_logged(&data, &args, &log, "info");
    let url = server.url.clone();

    // Metrics are not on the public listener.
    let r = ureq::get(&format!("{url}/metrics")).call();
    assert!(matches!(r, Err(ureq::Error::Status(404, _))), "{r:?}");

    // Traffic: an epoch bet, instant bets once the pool has entries, an RNG request, a
    // notarization with an API key, one with a wrong key, one with a forged payment.
    let (status, body) = server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "odd", "instant": false}),
    );
    assert_eq!(status, 202, "{body}");
    let epoch_game = body["game_id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    let instant = loop {
        let (status, body) = server.post("/api/v1/games/sicbo/bet", &json!({"bet_type": "big"}));
        if status == 200 {
            break body;
        }
        assert_eq!(status, 202, "{body}");
        assert!(Instant::now() < deadline, "the pool never filled");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(instant["game_id"].is_string(), "{instant}");
    let (status, body) = server.post("/api/v1/rng/generate", &json!({}));
    assert_eq!(status, 202, "{body}");
    let (api_key, _) = create_key(&data, "observability");
    let notarize = format!("{url}/v1/notarize");
    let doc = json!({"schema": "sha256", "payload_hash": "ab".repeat(32)}).to_string();
    let (status, _, r) = post(
        &notarize,
        &doc,
        &[("Authorization", &format!("Bearer {api_key}"))],
    );
    assert_eq!(status, 202, "{r}");
    let wrong_key = "vrs_sk_0123456789abcdef0123456789abcdef";
    let (status, _, _) = post(
        &notarize,
        &doc,
        &[("Authorization", &format!("Bearer {wrong_key}"))],
    );
    assert_eq!(status, 401);
    let signature = format!("0x{}1b", "5a".repeat(64));
    let (status, _, r) = post(
        &notarize,
        &doc,
        &[("X-PAYMENT", &forged_payment(&signature))],
    );
    assert_eq!(status, 402, "{r}");
    server.poll_ok(
        &format!("/api/v1/games/{epoch_game}"),
        Duration::from_secs(60),
    );

    // The scrape: well-formed, and counting all of it.
    let scrape = || {
        let r = ureq::get(&format!("http://{metrics_addr}/metrics"))
            .call()
            .unwrap();
        assert_eq!(
            r.header("content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        parse_exposition(&r.into_string().unwrap())
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let m = loop {
        let m = scrape();
        // Anchoring has failed at least once, the receipt has been sealed.
        if m.get("vrs_anchor_failures_total")
            .is_some_and(|v| *v >= 1.0)
            && m.get("vrs_notary_sealed_total").is_some_and(|v| *v >= 1.0)
        {
            break m;
        }
        assert!(Instant::now() < deadline, "{m:#?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let get = |k: &str| *m.get(k).unwrap_or_else(|| panic!("no {k} in {m:#?}"));
    assert_eq!(
        get("vrs_bets_accepted_total{game=\"dice\",path=\"epoch\"}"),
        1.0
    );
    assert!(get("vrs_bets_accepted_total{game=\"sicbo\",path=\"instant\"}") >= 1.0);
    assert!(get("vrs_bets_resolved_total{game=\"sicbo\",path=\"instant\"}") >= 1.0);
    assert_eq!(
        get("vrs_bets_resolved_total{game=\"dice\",path=\"epoch\"}"),
        1.0
    );
    assert_eq!(
        get("vrs_bets_accepted_total{game=\"rng\",path=\"epoch\"}"),
        1.0
    );
    assert_eq!(get("vrs_notary_accepted_total{payment=\"api_key\"}"), 1.0);
    assert!(get("vrs_epochs_resolved_total") >= 1.0);
    assert!(get("vrs_epoch_duration_seconds_count") >= 1.0);
    assert!(get("vrs_vdf_proof_seconds_count") >= 1.0);
    assert!(get("vrs_vdf_squarings_per_second") > 0.0);
    assert!(get("vrs_pool_generated_total") >= 16.0);
    assert!(get("vrs_pool_depth") >= 0.0);
    assert!(
        get("vrs_anchor_lag_epochs") >= 1.0,
        "nothing is anchored: the RPC is down"
    );
    assert_eq!(get("vrs_notary_queue"), 0.0);
    assert_eq!(get("vrs_store_up"), 1.0);
    assert_eq!(get("vrs_leader"), 1.0);
    assert!(get("vrs_epoch_lag_seconds") >= 0.0);
    // HTTP latency by route template (not by path) and status.
    let dice = "vrs_http_request_duration_seconds_count{route=\"/api/v1/games/dice/bet\",method=\"POST\",status=\"202\"}";
    assert_eq!(get(dice), 1.0);
    let polled =
        "vrs_http_request_duration_seconds_count{route=\"/api/v1/games/{gameId}\",method=\"GET\"";
    assert!(sum_of(&m, polled) >= 1.0, "{m:#?}");
    assert!(
        m.keys().all(|k| !k.contains(&epoch_game)),
        "a path became a label"
    );
    assert_eq!(
        get("vrs_http_request_duration_seconds_count{route=\"/v1/notarize\",method=\"POST\",status=\"401\"}"),
        1.0
    );
    assert_eq!(
        get("vrs_http_request_duration_seconds_count{route=\"unmatched\",method=\"GET\",status=\"404\"}"),
        1.0
    );
    let inf = "vrs_http_request_duration_seconds_bucket{route=\"/api/v1/games/dice/bet\",method=\"POST\",status=\"202\",le=\"+Inf\"}";
    assert_eq!(get(inf), 1.0);
    assert!(server.stop(), "exit 0 on SIGTERM");

    // Logs: every line one JSON object with a level and a message; failures are there, the
    // secrets are not.
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    assert!(lines.len() >= 3, "{text}");
    for l in &lines {
        assert!(l["level"].is_string() && l["timestamp"].is_string(), "{l}");
        assert!(l["message"].is_string(), "{l}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l["level"] == "WARN"
                && l["target"].as_str().is_some_and(|t| t.contains("anchor"))),
        "no anchoring failure logged:\n{text}"
    );
    assert!(
        lines.iter().any(|l| l["message"] == "epoch resolved"),
        "{text}"
    );
    for secret in [api_key.as_str(), wrong_key, &signature[2..], rpc_secret] {
        assert!(
            !text.contains(secret),
            "a secret ({secret}) is in the log:\n{text}"
        );
    }
}
