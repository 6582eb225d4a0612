//! The router in process (no socket): every error row of the interface and of the service
//! issue, with status, JSON body and headers.

use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;
use vrs_http::{app, BODY_LIMIT};
use vrs_store::sqlite::SqliteStore;
use vrs_store::EpochStore;

struct Api {
    router: axum::Router,
    store: Arc<dyn vrs_store::Store>,
    _dir: tempfile::TempDir,
}

async fn api() -> Api {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path()).unwrap();
    store
        .bootstrap("test512", 0, &crate::OPEN_ENDED)
        .await
        .unwrap();
    let store: Arc<dyn vrs_store::Store> = Arc::new(store);
    let state = vrs_testkit::harness::app_state(Arc::clone(&store));
    Api {
        router: app(Arc::new(state)),
        store,
        _dir: dir,
    }
}

impl Api {
    async fn send(&self, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, Value) {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let ct = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(
            ct.starts_with("application/json"),
            "{status}: content type {ct:?}"
        );
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        (status, headers, serde_json::from_slice(&bytes).unwrap())
    }

    async fn post_raw(
        &self,
        path: &str,
        content_type: Option<&str>,
        body: &str,
    ) -> (StatusCode, Value) {
        let mut req = Request::builder().method(Method::POST).uri(path);
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        let (s, _, v) = self
            .send(req.body(Body::from(body.to_owned())).unwrap())
            .await;
        (s, v)
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.post_raw(path, Some("application/json"), &body.to_string())
            .await
    }

    async fn get(&self, path: &str) -> (StatusCode, axum::http::HeaderMap, Value) {
        self.send(Request::get(path).body(Body::empty()).unwrap())
            .await
    }
}

const DICE: &str = "/api/v1/games/dice/bet";
const SICBO: &str = "/api/v1/games/sicbo/bet";

/// A 400 bet error has `error`, the game's `valid_bet_types` and an `example` that is itself
/// accepted.
async fn assert_bad_bet(api: &Api, path: &str, status: StatusCode, v: &Value, why: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {v}");
    assert!(
        v["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{why}: {v}"
    );
    let types: Vec<&str> = v["valid_bet_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    if path == DICE {
        assert_eq!(types, ["exact", "over7", "under7", "odd", "even"]);
    } else {
        assert_eq!(
            types,
            [
                "big",
                "small",
                "odd",
                "even",
                "total",
                "single",
                "double",
                "triple",
                "anyTriple",
                "combo"
            ]
        );
    }
    let (s, accepted) = api.post(path, v["example"].clone()).await;
    assert_eq!(
        s,
        StatusCode::ACCEPTED,
        "the example of {path} is accepted: {accepted}"
    );
}

#[tokio::test]
async fn invalid_bets_get_400_with_types_and_example() {
    let api = api().await;
    let long = |n: usize| "x".repeat(n);
    let cases: Vec<(&str, Value, &str)> = vec![
        (DICE, json!({}), "missing bet_type"),
        (DICE, json!({"bet_type": "big"}), "sicbo type on dice"),
        (DICE, json!({"bet_type": "OVER7"}), "case matters"),
        (DICE, json!({"bet_type": 7}), "bet_type not a string"),
        (DICE, json!({"bet_type": "exact"}), "exact without target"),
        (
            DICE,
            json!({"bet_type": "exact", "target": 1}),
            "exact target below 2",
        ),
        (
            DICE,
            json!({"bet_type": "exact", "target": 13}),
            "exact target above 12",
        ),
        (
            DICE,
            json!({"bet_type": "exact", "target": 7.5}),
            "fractional target",
        ),
        (
            DICE,
            json!({"bet_type": "exact", "target": "7"}),
            "target as string",
        ),
        (
            DICE,
            json!({"bet_type": "over7", "combo": [1, 2]}),
            "combo on dice",
        ),
        (DICE, json!({"bet_type": "odd", "amount": 0}), "zero amount"),
        (
            DICE,
            json!({"bet_type": "odd", "amount": -1}),
            "negative amount",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "amount": 0.001}),
            "three fraction digits",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "amount": 10000.01}),
            "above the maximum",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "amount": "1.00"}),
            "amount as string",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "player_id": long(129)}),
            "player_id too long",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "player_seed": long(257)}),
            "player_seed too long",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "operator_key": long(129)}),
            "operator_key too long",
        ),
        (
            DICE,
            json!({"bet_type": "odd", "player_sed": "typo"}),
            "unknown field",
        ),
        (DICE, json!([1, 2]), "not an object"),
        (
            SICBO,
            json!({"bet_type": "exact", "target": 7}),
            "dice type on sicbo",
        ),
        (SICBO, json!({"bet_type": "total"}), "total without target"),
        (
            SICBO,
            json!({"bet_type": "total", "target": 3}),
            "total target 3",
        ),
        (
            SICBO,
            json!({"bet_type": "total", "target": 18}),
            "total target 18",
        ),
        (
            SICBO,
            json!({"bet_type": "single", "target": 0}),
            "single target 0",
        ),
        (
            SICBO,
            json!({"bet_type": "double", "target": 7}),
            "double target 7",
        ),
        (
            SICBO,
            json!({"bet_type": "triple"}),
            "triple without target",
        ),
        (SICBO, json!({"bet_type": "combo"}), "combo without combo"),
        (
            SICBO,
            json!({"bet_type": "combo", "combo": [3, 3]}),
            "combo not distinct",
        ),
        (
            SICBO,
            json!({"bet_type": "combo", "combo": [1, 7]}),
            "combo value 7",
        ),
        (
            SICBO,
            json!({"bet_type": "combo", "combo": [1, 2, 3]}),
            "combo of three",
        ),
        (
            SICBO,
            json!({"bet_type": "combo", "combo": [1, 2], "target": 3}),
            "combo with target",
        ),
        (
            SICBO,
            json!({"bet_type": "big", "combo": [1, 2]}),
            "combo on big",
        ),
        (
            SICBO,
            json!({"bet_type": "total", "target": 10, "combo": [1, 2]}),
            "combo on total",
        ),
    ];
    for (path, body, why) in cases {
        let (s, v) = api.post(path, body).await;
        assert_bad_bet(&api, path, s, &v, why).await;
    }
    // Malformed JSON, wrong and missing content type.
    for (ct, body, why) in [
        (
            Some("application/json"),
            "{\"bet_type\": ",
            "truncated JSON",
        ),
        (Some("application/json"), "", "empty body"),
        (Some("text/plain"), "{\"bet_type\":\"odd\"}", "text/plain"),
        (
            Some("application/x-www-form-urlencoded"),
            "bet_type=odd",
            "form",
        ),
        (None, "{\"bet_type\":\"odd\"}", "no content type"),
    ] {
        for path in [DICE, SICBO] {
            let (s, v) = api.post_raw(path, ct, body).await;
            assert_bad_bet(&api, path, s, &v, why).await;
        }
    }
}

#[tokio::test]
async fn accepted_edge_values_and_ignored_fields() {
    let api = api().await;
    for (path, body) in [
        (
            DICE,
            json!({"bet_type": "exact", "target": 2, "amount": 0.01}),
        ),
        (
            DICE,
            json!({"bet_type": "exact", "target": 12, "amount": 10000}),
        ),
        (
            DICE,
            json!({"bet_type": "over7", "target": 5, "amount": 1.50}),
        ),
        (
            DICE,
            json!({"bet_type": "even", "player_id": "x".repeat(128), "player_seed": "s".repeat(256)}),
        ),
        (SICBO, json!({"bet_type": "total", "target": 17})),
        (SICBO, json!({"bet_type": "anyTriple", "target": 4})),
        (SICBO, json!({"bet_type": "combo", "combo": [6, 1]})),
        (
            SICBO,
            json!({"bet_type": "big", "target": null, "combo": null, "player_seed": null}),
        ),
    ] {
        let (s, v) = api.post(path, body.clone()).await;
        assert_eq!(s, StatusCode::ACCEPTED, "{body}: {v}");
        assert_eq!(v["accepted"], true);
    }
    let (s, v) = api
        .post_raw(
            DICE,
            Some("application/json; charset=utf-8"),
            r#"{"bet_type":"odd"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
}

#[tokio::test]
async fn unknown_games_and_paths_are_404_json() {
    let api = api().await;
    let id = "0123456789abcdef0123456789abcdef";
    let (s, _, v) = api.get(&format!("/api/v1/verify/{id}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(v["verified"], false);
    assert_eq!(v["game_id"], id);
    assert!(v["error"].as_str().unwrap().contains("not found"));
    let (s, _, v) = api.get("/api/v1/verify/not-hex").await;
    assert_eq!((s, &v["verified"]), (StatusCode::NOT_FOUND, &json!(false)));
    let (s, _, v) = api.get(&format!("/api/v1/games/{id}")).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    assert!(v["error"].is_string());
    let (s, _, v) = api.get("/api/v2/nothing").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(v["error"].is_string());
}

#[tokio::test]
async fn wrong_methods_are_405_json_with_allow() {
    let api = api().await;
    for (method, path, allow) in [
        (Method::GET, DICE, "POST"),
        (Method::PUT, SICBO, "POST"),
        (Method::GET, "/api/v1/rng/generate", "POST"),
        (Method::POST, "/api/v1/entropy", "GET,HEAD"),
        (Method::DELETE, "/api/v1/games", "GET,HEAD"),
        (Method::POST, "/health", "GET,HEAD"),
        (
            Method::PATCH,
            "/api/v1/verify/0123456789abcdef0123456789abcdef",
            "GET,HEAD",
        ),
    ] {
        let req = Request::builder()
            .method(method.clone())
            .uri(path)
            .body(Body::empty())
            .unwrap();
        let (s, headers, v) = api.send(req).await;
        assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(
            headers.get(header::ALLOW).unwrap(),
            allow,
            "{method} {path}"
        );
        assert!(v["error"].is_string());
    }
}

#[tokio::test]
async fn oversized_bodies_are_413_json() {
    let api = api().await;
    let big = format!(
        r#"{{"bet_type":"odd","player_seed":"{}"}}"#,
        "x".repeat(BODY_LIMIT)
    );
    for path in [DICE, SICBO, "/api/v1/rng/generate"] {
        let (s, v) = api.post_raw(path, Some("application/json"), &big).await;
        assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {v}");
        assert!(v["error"].as_str().unwrap().contains("too large"));
    }
}

#[tokio::test]
async fn raw_rng_bodies() {
    let api = api().await;
    let rng = "/api/v1/rng/generate";
    let (s, v) = api.post_raw(rng, Some("application/json"), "").await;
    assert_eq!(s, StatusCode::ACCEPTED, "no body is fine: {v}");
    assert_eq!(
        v["poll_url"],
        format!("/api/v1/games/{}", v["game_id"].as_str().unwrap())
    );
    let (s, _) = api.post(rng, json!({"client_seed": "abc"})).await;
    assert_eq!(s, StatusCode::ACCEPTED);
    let (s, v) = api.post_raw(rng, Some("application/json"), "null").await;
    assert_eq!(s, StatusCode::ACCEPTED, "null is no body: {v}");
    for (body, why) in [
        (json!({"client_seed": 5}), "seed not a string"),
        (json!({"client_seed": "x".repeat(257)}), "seed too long"),
        (json!({"client_seed": "a\u{0}b"}), "seed with NUL"),
        (json!({"seed": "x"}), "unknown field"),
    ] {
        let (s, v) = api.post(rng, body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{why}: {v}");
        assert!(v["error"].is_string());
    }
    let (s, _) = api.post_raw(rng, Some("application/json"), "{nope").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, v) = api
        .post_raw(
            rng,
            Some("application/json"),
            r#"{"client_seed":"a","client_seed":"b"}"#,
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "a member named twice: {v}");
    assert!(
        v["error"].as_str().unwrap().contains("duplicate member"),
        "{v}"
    );
    // Without the JSON content type, a write is a CORS simple request any web page could make
    // its visitors send: refused, with no body or a valid one alike.
    for (ctype, body) in [
        (None, ""),
        (Some("text/plain"), r#"{"client_seed":"x"}"#),
        (
            Some("application/x-www-form-urlencoded"),
            r#"{"client_seed":"x"}"#,
        ),
        (Some("multipart/form-data; boundary=x"), ""),
    ] {
        let (s, v) = api.post_raw(rng, ctype, body).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{ctype:?}: {v}");
        assert!(v["error"].as_str().unwrap().contains("Content-Type"), "{v}");
    }
    let games = api.store.game_counts().await.unwrap().total;
    assert_eq!(games, 3, "only the three accepted requests stored a game");
}

/// The notary takes JSON only (a CORS simple request cannot reach it), and a member named
/// twice, at any depth, is refused rather than resolved to the last one.
#[tokio::test]
async fn notary_writes_need_json_with_unique_members() {
    let api = api().await;
    let hash = "ab".repeat(32);
    let good = format!(r#"{{"schema":"sha256","payload_hash":"{hash}"}}"#);
    for ctype in [
        None,
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
    ] {
        let (s, v) = api.post_raw("/v1/notarize", ctype, &good).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{ctype:?}: {v}");
        assert_eq!(v["field"], "Content-Type", "{v}");
    }
    let (s, v) = api
        .post_raw("/v1/notarize", Some("application/json"), &good)
        .await;
    assert_eq!(
        s,
        StatusCode::UNAUTHORIZED,
        "a good body reaches payment: {v}"
    );
    for body in [
        format!(
            r#"{{"schema":"sha256","payload_hash":"{}","payload_hash":"{hash}"}}"#,
            "00".repeat(32)
        ),
        format!(r#"{{"schema":"sha256","payload_hash":"{hash}","metadata":{{"a":1,"a":2}}}}"#),
    ] {
        let (s, v) = api
            .post_raw("/v1/notarize", Some("application/json"), &body)
            .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["field"], "body", "{v}");
        assert!(
            v["error"].as_str().unwrap().contains("duplicate member"),
            "{v}"
        );
    }
}

#[tokio::test]
async fn pending_forms_before_the_first_epoch_resolves() {
    let api = api().await;
    let (s, _, v) = api.get("/api/v1/entropy").await;
    assert_eq!(s, StatusCode::ACCEPTED);
    assert_eq!(v["status"], "pending");
    assert_eq!(v["epoch"], 1);
    assert!(v["message"].is_string());
    let (_, bet) = api.post(DICE, json!({"bet_type": "odd"})).await;
    assert_eq!(bet["resolves_at_epoch"], 1);
    let id = bet["game_id"].as_str().unwrap();
    for path in [
        format!("/api/v1/games/{id}"),
        format!("/api/v1/verify/{id}"),
    ] {
        let (s, _, v) = api.get(&path).await;
        assert_eq!(s, StatusCode::ACCEPTED, "{path}");
        assert_eq!(v["status"], "pending");
        assert!(v["message"].is_string());
    }
}

#[tokio::test]
async fn system_endpoints_have_the_interface_fields() {
    let api = api().await;
    let (s, _, info) = api.get("/").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(info["version"], "0.2.0");
    assert_eq!(info["database"], "connected");
    for link in [
        "verify",
        "whitepaper",
        "api_docs",
        "health",
        "stats",
        "recent",
        "docs",
    ] {
        let target = info["links"][link].as_str().unwrap();
        let res = api
            .router
            .clone()
            .oneshot(Request::get(target).body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "link {link} → {target}");
        // The verifier, the whitepaper and the API reference are pages; the rest is JSON.
        let ct = res.headers()[header::CONTENT_TYPE].to_str().unwrap();
        let page = ["verify", "whitepaper", "api_docs", "docs"].contains(&link);
        let want = if page {
            "text/html"
        } else {
            "application/json"
        };
        assert!(ct.starts_with(want), "link {link} → {target}: {ct}");
    }
    assert_eq!(info["links"]["verify"], "/verify");
    assert!(info["vdf_engine"]["status"].is_string());
    assert!(info["vdf_engine"]["epoch"].is_object());
    assert!(info["vdf_engine"]["computation_time"].is_string());
    assert!(info["uptime"].is_number());
    let (s, _, h) = api.get("/health").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (
            h["status"].as_str(),
            h["database"].as_str(),
            h["vdf"].as_str()
        ),
        (Some("ok"), Some("connected"), Some("active"))
    );
    let (_, _, cat) = api.get("/api/v1/games").await;
    let games = cat["games"].as_array().unwrap();
    assert_eq!(games.len(), 2);
    assert_eq!(games[0]["type"], "dice");
    assert_eq!(games[0]["house_edge"], "1.00%");
    assert_eq!(games[0]["endpoint"], DICE);
    assert_eq!(games[1]["type"], "sicbo");
    assert!(games[1]["house_edge"]
        .as_str()
        .unwrap()
        .starts_with("2.78%"));
    assert_eq!(cat["raw_rng"]["endpoint"], "/api/v1/rng/generate");
    let (_, _, stats) = api.get("/api/v1/stats").await;
    assert_eq!(stats["epoch"]["current"], 1);
    let (_, _, recent) = api.get("/api/v1/recent").await;
    assert_eq!(recent["games"], json!([]));
}
