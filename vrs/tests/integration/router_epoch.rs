//! The router and the epoch loop in one process: a bet placed through the router resolves when
//! the loop runs its epoch, and the entropy endpoint then publishes that epoch.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;
use vrs_engine::group::Modulus;
use vrs_http::{app, AppState};
use vrs_service::epoch::{EpochConfig, EpochLoop, LoopStatus};
use vrs_store::sqlite::SqliteStore;
use vrs_store::Store;

async fn call(router: &axum::Router, req: Request<Body>) -> (StatusCode, Value) {
    let res = router.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (status, serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bet_resolves_and_entropy_names_its_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(dir.path()).unwrap());
    // Epoch 1 takes games for about 200 ms (its plan's deadline), then the chain runs on.
    let m = Modulus::by_name("test512").unwrap();
    let rate = vrs_engine::calibrate::squarings_per_second(&m, Duration::from_millis(100)).unwrap();
    let config = EpochConfig {
        group: vrs_protocol::epoch_group::Group::Rsa(m),
        schedule: vrs_protocol::schedule::Schedule {
            iterations: (rate / 10.0) as u64,
            lanes: 1,
            margin_centi: 150,
            epoch_ms: 100.0,
            seconds_per_rate: None,
        },
    };
    store
        .bootstrap(
            "test512",
            vrs_observe::clock::now_ms(),
            &config.plan_params(rate as u64),
        )
        .await
        .unwrap();
    let engine = Arc::new(LoopStatus::default());
    engine
        .squarings_per_second
        .store(rate as u64, std::sync::atomic::Ordering::Relaxed);
    let router = app(Arc::new(AppState {
        engine: Arc::clone(&engine),
        iterations: config.schedule.iterations,
        epoch_ms: 100,
        ..vrs_testkit::harness::app_state(Arc::clone(&store))
    }));
    let (s, bet) = call(
        &router,
        Request::post("/api/v1/games/sicbo/bet")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                json!({"bet_type": "total", "target": 9}).to_string(),
            ))
            .unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED);
    assert_eq!(bet["resolves_at_epoch"], 1);
    let id = bet["game_id"].as_str().unwrap().to_owned();

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = tokio::spawn(vrs_service::leader::lead(
        EpochLoop::new(Arc::clone(&store), config, engine).unwrap(),
        stopped,
        Duration::from_millis(50),
        Default::default(),
    ));

    let deadline = Instant::now() + Duration::from_secs(30);
    let game = loop {
        let (s, g) = call(
            &router,
            Request::get(format!("/api/v1/games/{id}"))
                .body(Body::empty())
                .unwrap(),
        )
        .await;
        if s == StatusCode::OK {
            break g;
        }
        assert_eq!(s, StatusCode::ACCEPTED, "{g}");
        assert!(Instant::now() < deadline, "not resolved: {g}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(game["result"]["epoch"], 1);
    // The chain runs on (an epoch cannot stay open once its predecessor's output exists):
    // stop it, then the entropy endpoint publishes the latest resolved epoch.
    stop.send(true).unwrap();
    task.await.unwrap();
    let (_, stats) = call(
        &router,
        Request::get("/api/v1/stats").body(Body::empty()).unwrap(),
    )
    .await;
    let last = stats["epoch"]["last_resolved"].as_u64().unwrap();
    assert!(last >= 1, "{stats}");
    assert!(stats["epoch"]["current"].as_u64() > Some(last), "{stats}");
    assert_eq!(stats["resolved_games"], 1);
    assert_eq!(stats["epoch"]["security"]["margin"], 1.5);
    let (s, ent) = call(
        &router,
        Request::get("/api/v1/entropy").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(ent["epoch"], last);
    assert_eq!(ent["veo_class"], "VEO-WESOLOWSKI-TEST512");
    let (_, rec) = call(
        &router,
        Request::get(format!("/api/v1/epochs/{last}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(ent["entropy"], rec["y"]);
    let (_, first) = call(
        &router,
        Request::get("/api/v1/epochs/1")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(first["y"], game["result"]["entropy"]);
    if last == 1 {
        assert_eq!(ent["verify_url"], format!("/api/v1/verify/{id}"));
    }
}
