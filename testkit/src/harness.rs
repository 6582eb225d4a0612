//! The service in process for the router's fuzz entry points: the real router over an
//! embedded store, with an API key, x402 configured (its facilitator a closed local port, so
//! a settlement fails as an unreachable facilitator does), the epoch loop and the pool
//! generator running, and one resolved epoch game and one pool-served game to read back.

use alloy::primitives::U256;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tower::ServiceExt;
use vrs_chain::x402::{X402Config, X402};
use vrs_engine::batch::BatchKind;
use vrs_engine::group::Modulus;
use vrs_http::{app, AppState};
use vrs_observe::clock::now_ms;
use vrs_protocol::games::Limits;
use vrs_service::epoch::{EpochConfig, EpochLoop, LoopStatus};
use vrs_service::leader::{self, Duties};
use vrs_service::notary::{keys, Notary};
use vrs_service::pool::{Generator, PoolConfig, PoolStatus};
use vrs_store::sqlite::SqliteStore;
use vrs_store::Store;

/// What the fuzz inputs write where the harness's API key goes (in header values).
pub const API_KEY_MARK: &str = "$API_KEY";

/// Epochs close every 200 ms (T = 64): games resolve while the targets run, and the store
/// holds several resolved epochs.
const EPOCH_MS: u64 = 200;

/// The server prefix of the canned answers of the CLI targets.
pub const SERVER: &str = "http://vrs.fuzz";

/// The x402 requirements of the harness: USDC on Base, 0.02.
pub fn x402_config() -> X402Config {
    X402Config {
        amount: U256::from(20_000u64),
        decimals: 6,
        asset: alloy::primitives::address!("833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        asset_name: "USD Coin".into(),
        asset_version: "2".into(),
        pay_to: alloy::primitives::address!("90F8bf6A479f320ead074411a4B0e7944Ea8c9C1"),
        chain_id: 8453,
        network: "eip155:8453".into(),
        network_v1: "base".into(),
        max_timeout_s: 300,
        // Nothing listens on port 9 (discard) on a test machine: settlement fails at once, as
        // with a facilitator that cannot be reached.
        facilitator_url: Some("http://127.0.0.1:9".into()),
    }
}

/// The handlers' state for an in-process service on the test group: no epoch loop, pool,
/// anchoring or x402, default limits, a fresh acceptance key. Tests set what they run with
/// struct update syntax (`AppState { epoch_ms: 100, ..app_state(store) }`).
pub fn app_state(store: Arc<dyn Store>) -> AppState {
    AppState {
        store,
        engine: Arc::new(LoopStatus::default()),
        modulus: "test512".into(),
        iterations: 1000,
        epoch_ms: 5000,
        margin_centi: 150,
        lanes: 1,
        limits: Limits::default(),
        started: Instant::now(),
        pool: PoolConfig::disabled(),
        pool_status: Default::default(),
        anchor: Default::default(),
        notary: Default::default(),
        notary_separate: false,
        entropy: Default::default(),
        acceptance: Arc::new(vrs_protocol::acceptance::AcceptanceSigner::generate()),
        public_url: None,
        behind_proxy: false,
        instant_budget: Default::default(),
        verify_cache: Default::default(),
        log: None,
        read_workers: Arc::new(
            vrs_service::read_workers::ReadWorkers::start(1).expect("a read worker starts"),
        ),
    }
}

/// The service in process.
#[derive(Debug)]
pub struct Harness {
    router: Router,
    /// The API key the notary accepts (`$API_KEY` in inputs).
    pub api_key: String,
    /// A game resolved in epoch 1, one in a later epoch, and one served from the pool.
    pub epoch_game: String,
    pub later_game: String,
    pub pool_game: String,
    /// Keeps the epoch loop (and the generator) running while the harness lives.
    _stop: tokio::sync::watch::Sender<bool>,
    // Last: dropping the runtime stops the loop before the store's files go.
    runtime: tokio::runtime::Runtime,
}

impl Harness {
    /// Starts the service on a new store in `dir` (which the caller removes afterwards), and
    /// waits for its games to resolve, three epochs and a pool batch (about a second).
    pub fn open(dir: &Path) -> Result<Self, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("runtime: {e}"))?;
        let started = runtime.block_on(start(dir, runtime.handle()))?;
        Ok(Self {
            router: started.router,
            api_key: started.api_key,
            epoch_game: started.epoch_game,
            later_game: started.later_game,
            pool_game: started.pool_game,
            _stop: started.stop,
            runtime,
        })
    }

    /// One harness per process, in `$TMPDIR/vrs-fuzz/<pid>` (the directories of processes
    /// that are gone are removed first): for the cargo-fuzz targets, which exit without
    /// dropping statics.
    pub fn shared() -> Result<&'static Self, String> {
        static SHARED: OnceLock<Result<Harness, String>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let root = std::env::temp_dir().join("vrs-fuzz");
                remove_stale(&root);
                let dir = root.join(std::process::id().to_string());
                let _ = std::fs::remove_dir_all(&dir);
                Self::open(&dir)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Sends `req` through the router; `Err` when the answer breaks the HTTP invariant
    /// ([`check_response`]).
    pub fn send(&self, req: Request<Body>) -> Result<(StatusCode, Value), String> {
        self.runtime.block_on(call(&self.router, req))
    }
}

/// What [`start`] hands the harness.
struct Started {
    router: Router,
    api_key: String,
    epoch_game: String,
    later_game: String,
    pool_game: String,
    stop: tokio::sync::watch::Sender<bool>,
}

async fn start(dir: &Path, runtime: &tokio::runtime::Handle) -> Result<Started, String> {
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(dir).map_err(|e| format!("store: {e}"))?);
    // Epochs of about EPOCH_MS on this CPU; bets made before the loop starts land in epoch 1.
    let modulus = Modulus::by_name("test512").map_err(|e| format!("modulus: {e}"))?;
    let rate = vrs_engine::calibrate::squarings_per_second(&modulus, Duration::from_millis(100))
        .map_err(|e| format!("calibration: {e}"))?;
    let config = EpochConfig {
        group: vrs_protocol::epoch_group::Group::Rsa(modulus.clone()),
        schedule: vrs_protocol::schedule::Schedule {
            iterations: ((rate * EPOCH_MS as f64 / 1000.0) as u64).max(1),
            lanes: 1,
            margin_centi: 150,
            epoch_ms: EPOCH_MS as f64,
            seconds_per_rate: None,
        },
    };
    store
        .bootstrap("test512", now_ms(), &config.plan_params(rate as u64))
        .await
        .map_err(|e| format!("bootstrap: {e}"))?;
    let acceptance = Arc::new(vrs_protocol::acceptance::AcceptanceSigner::generate());
    store
        .register_acceptance_key(acceptance.public_key(), now_ms())
        .await
        .map_err(|e| format!("acceptance key: {e}"))?;
    let (api_key, record) = keys::generate("fuzz", now_ms());
    store
        .create_api_key(&record)
        .await
        .map_err(|e| format!("api key: {e}"))?;
    let pool = PoolConfig {
        iterations: 64,
        threads: 1,
        batch_size: 8,
        low_water: 4,
        target_depth: 8,
        refill_rate: 0,
        instant_default: false,
        batch_backend: Some(BatchKind::Cpu),
    };
    let pool_status = Arc::new(PoolStatus::default());
    let engine = Arc::new(LoopStatus::default());
    engine
        .squarings_per_second
        .store(rate.max(1.0) as u64, std::sync::atomic::Ordering::Relaxed);
    let x402 = X402::new(x402_config(), None, 8453, None).map_err(|e| format!("x402: {e}"))?;
    let state = AppState {
        engine: Arc::clone(&engine),
        iterations: config.schedule.iterations,
        epoch_ms: EPOCH_MS,
        pool: pool.clone(),
        pool_status: Arc::clone(&pool_status),
        notary: Arc::new(Notary {
            x402: Some(x402),
            ..Notary::default()
        }),
        acceptance,
        ..app_state(Arc::clone(&store))
    };
    let router = app(Arc::new(state));

    // Bets before the loop starts land in epoch 1.
    let bet = |path: &'static str, body: Value| {
        let router = router.clone();
        async move {
            let (status, v) = call(&router, post_json(path, &body)).await?;
            match (status, v["game_id"].as_str()) {
                (StatusCode::ACCEPTED | StatusCode::OK, Some(id)) => Ok(id.to_owned()),
                _ => Err(format!("{path}: {status} {v}")),
            }
        }
    };
    let epoch_game = bet(
        "/api/v1/games/sicbo/bet",
        json!({"bet_type": "combo", "combo": [2, 5], "amount": 2.5, "player_seed": "fuzz"}),
    )
    .await?;
    bet(
        "/api/v1/games/dice/bet",
        json!({"bet_type": "exact", "target": 7}),
    )
    .await?;
    bet("/api/v1/rng/generate", json!({"client_seed": "fuzz"})).await?;

    let generator = Generator::new(Arc::clone(&store), modulus, pool, pool_status)
        .map_err(|e| format!("generator: {e}"))?;
    let epoch_loop =
        EpochLoop::new(Arc::clone(&store), config, engine).map_err(|e| format!("loop: {e}"))?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    runtime.spawn(leader::lead(
        epoch_loop,
        stopped,
        Duration::from_millis(20),
        Duties {
            generator: Some(generator),
            ..Duties::default()
        },
    ));

    let deadline = Instant::now() + Duration::from_secs(60);
    let resolved = |path: String| {
        let router = router.clone();
        async move {
            loop {
                let (status, v) = call(&router, get(&path)).await?;
                // A game's result and an epoch record both say `"status": "resolved"`.
                if status == StatusCode::OK && v["status"] == "resolved" {
                    return Ok::<_, String>(());
                }
                if Instant::now() > deadline {
                    return Err(format!("{path} did not resolve: {v}"));
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    resolved(format!("/api/v1/games/{epoch_game}")).await?;
    // A game of a later epoch (its chain link is to a published epoch, not the genesis), and
    // three resolved epochs for `vrs audit`.
    let later_game = bet(
        "/api/v1/games/dice/bet",
        json!({"bet_type": "odd", "player_id": "later"}),
    )
    .await?;
    resolved(format!("/api/v1/games/{later_game}")).await?;
    resolved("/api/v1/epochs/3".to_owned()).await?;
    let pool_game = loop {
        let body = json!({"bet_type": "over7", "instant": true});
        let (status, v) = call(&router, post_json("/api/v1/games/dice/bet", &body)).await?;
        if status == StatusCode::OK {
            break v["game_id"].as_str().unwrap_or_default().to_owned();
        }
        if Instant::now() > deadline {
            return Err(format!("the pool served no bet: {v}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    Ok(Started {
        router,
        api_key,
        epoch_game,
        later_game,
        pool_game,
        stop,
    })
}

/// Removes the harness directories of processes that are gone (Linux: /proc/<pid>).
fn remove_stale(root: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let alive = name
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|pid| PathBuf::from(format!("/proc/{pid}")).exists());
        if !alive {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

pub(super) fn post_json(path: &str, body: &Value) -> Request<Body> {
    Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}

pub(super) fn get(path: &str) -> Request<Body> {
    Request::builder()
        .uri(path)
        .body(Body::empty())
        .unwrap_or_default()
}

/// Sends `req` through `router` and checks the answer ([`check_response`]).
async fn call(router: &Router, req: Request<Body>) -> Result<(StatusCode, Value), String> {
    let what = format!("{} {}", req.method(), req.uri());
    let head = req.method() == Method::HEAD;
    let res = match router.clone().oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    };
    let status = res.status();
    let content_type = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .map_err(|e| format!("{what}: reading the body: {e}"))?;
    check_response(&what, head, status, &content_type, &bytes)
}

/// The HTTP invariant: never a 5xx, and every 4xx is a JSON object with an `error` string
/// (a HEAD answer has no body to check). Returns the status and the body when it is JSON.
pub fn check_response(
    what: &str,
    head: bool,
    status: StatusCode,
    content_type: &str,
    body: &[u8],
) -> Result<(StatusCode, Value), String> {
    let text = || {
        String::from_utf8_lossy(body)
            .chars()
            .take(500)
            .collect::<String>()
    };
    if status.is_server_error() {
        return Err(format!("{what}: {status}: {}", text()));
    }
    let json = content_type.starts_with("application/json");
    let value = if json {
        serde_json::from_slice(body).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    if status.is_client_error() && !head && !value["error"].is_string() {
        return Err(format!(
            "{what}: {status} ({content_type}) without a JSON error: {}",
            text()
        ));
    }
    Ok((status, value))
}
