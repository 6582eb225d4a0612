//! The HTTP API (docs: ../shared/spec/interface.md; rules fixed in docs/GAMES.md and
//! docs/PROTOCOL.md). [`app`] builds the whole router so tests drive it without a socket.

mod body_timeout;
mod cors;
pub mod entropy_cache;
mod epochs;
mod error;
mod games;
pub mod listener;
pub mod metrics;
pub mod notary;
pub mod openapi;
mod pages;
mod pool_batches;
pub mod rate_limit;
mod reference;
pub mod schema;
mod system;
mod tlog;

pub use error::ApiError;

use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::{header, Response, StatusCode};
use axum::response::IntoResponse;
use axum::Router;
use rate_limit::RateLimiter;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vrs_protocol::games::Limits;
use vrs_service::epoch::LoopStatus;
use vrs_store::Store;

/// The API version reported in `GET /`.
pub const API_VERSION: &str = "0.2.0";

/// Largest request body accepted (413 above it).
pub const BODY_LIMIT: usize = 16 * 1024;

/// Longest wait for a request body by default (408 after it).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// What guards the routes from clients: the per-client write limit and the body timeout.
#[derive(Debug, Clone)]
pub struct EdgeConfig {
    /// None: writes are not rate limited.
    pub rate_limit: Option<Arc<RateLimiter>>,
    pub body_timeout: Duration,
}

impl Default for EdgeConfig {
    /// No rate limit (in-process callers are not clients), the default body timeout.
    fn default() -> Self {
        Self {
            rate_limit: None,
            body_timeout: BODY_TIMEOUT,
        }
    }
}

/// What the handlers share.
#[derive(Debug)]
pub struct AppState {
    pub store: Arc<dyn Store>,
    pub engine: Arc<LoopStatus>,
    pub modulus: String,
    /// T of the epochs this process opens.
    pub iterations: u64,
    /// About how long an epoch takes games (from the schedule at start-up).
    pub epoch_ms: u64,
    /// The security margin this process runs at, in hundredths (docs/PROTOCOL.md §10).
    pub margin_centi: u32,
    /// Epoch VDFs run side by side.
    pub lanes: u64,
    pub limits: Limits,
    pub started: Instant,
    pub pool: vrs_service::pool::PoolConfig,
    pub pool_status: Arc<vrs_service::pool::PoolStatus>,
    pub anchor: vrs_service::anchor::AnchorView,
    pub notary: Arc<vrs_service::notary::Notary>,
    /// The notary has its own listener (`--notary-addr`): not served by [`app`].
    pub notary_separate: bool,
    /// The entropy endpoint's answer between two epochs.
    pub entropy: entropy_cache::EntropyCache,
    /// Signs every acceptance this process gives (docs/PROTOCOL.md §11).
    pub acceptance: Arc<vrs_protocol::acceptance::AcceptanceSigner>,
    /// The base URL clients reach this service at (`--public-url`): receipt URLs and the x402
    /// resource are built on it. `None`: from each request's `Host`.
    pub public_url: Option<String>,
    /// A reverse proxy is declared (`--client-ip-header`): its `X-Forwarded-Proto` is believed.
    pub behind_proxy: bool,
    /// How many instant bets per second may take pool entries (`--instant-rate`).
    pub instant_budget: Arc<vrs_service::pool::InstantBudget>,
    /// What verification keeps between requests (final epoch trees, checks and reports).
    pub verify_cache: Arc<vrs_service::verify::VerifyCache>,
    /// Low-priority threads that serialize verifications (GET /api/v1/verify, /api/v1/games).
    pub read_workers: Arc<vrs_service::read_workers::ReadWorkers>,
    /// The witnessed log (`--log-origin`), served at /log/; `None`: none kept.
    pub log: Option<Arc<vrs_service::tlog::OperatorLog>>,
}

impl AppState {
    /// T of the epoch opened last (a calibrated T follows the measured rate), or T at
    /// start-up before any epoch was opened here.
    pub fn current_iterations(&self) -> u64 {
        match self
            .engine
            .iterations
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            0 => self.iterations,
            t => t,
        }
    }
}

type State = Arc<AppState>;

/// The router of the randomness and games API (and of the notary, unless it has its own
/// listener), with the default [`EdgeConfig`].
pub fn app(state: Arc<AppState>) -> Router {
    app_with(state, &EdgeConfig::default())
}

/// [`app`] guarded by `edge`.
pub fn app_with(state: Arc<AppState>, edge: &EdgeConfig) -> Router {
    pages::publish_reference(reference::render);
    let notary = if state.notary_separate {
        Router::new()
    } else {
        openapi::notary_routes().split_for_parts().0
    };
    let (randomness, _) = openapi::randomness_routes().split_for_parts();
    let randomness = if state.log.is_some() {
        randomness.merge(tlog::routes())
    } else {
        randomness
    };
    finish(randomness.merge(notary), state, edge)
}

/// The router of the notary alone, for `--notary-addr`.
pub fn notary_app(state: Arc<AppState>, edge: &EdgeConfig) -> Router {
    let (notary, _) = openapi::notary_routes().split_for_parts();
    finish(notary, state, edge)
}

/// The guards, the fallback and the JSON error bodies around `routes`.
fn finish(routes: Router<State>, state: Arc<AppState>, edge: &EdgeConfig) -> Router {
    // Route layers run for matched routes only, the last added first: the metrics tag, then
    // the rate limit (before any body is read), then the body read. A request for a path or
    // method that does not exist is answered 404/405 without a token spent or a body read.
    let mut routes = routes.route_layer(axum::middleware::from_fn_with_state(
        edge.body_timeout,
        body_timeout::read_body_within,
    ));
    if let Some(limiter) = &edge.rate_limit {
        routes = routes.route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(limiter),
            rate_limit::limit_writes,
        ));
    }
    let routes = routes.route_layer(axum::middleware::from_fn(metrics::tag_route));
    let routes = routes
        .fallback(system::not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state);
    // Outside the routes, so that it sees the `Allow` header axum adds to a 405 response.
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::map_response(json_errors))
        .layer(axum::middleware::from_fn(cors::public_reads))
        .layer(axum::middleware::from_fn(metrics::time_requests))
}

/// Gives every error response that is not JSON yet (axum's own 405 and 413, for instance) a
/// JSON body, keeping its status and headers (`Allow` on a 405).
async fn json_errors(res: Response<Body>) -> Response<Body> {
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json || !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let (parts, _) = res.into_parts();
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = parts
                .headers
                .get(header::ALLOW)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            ApiError::MethodNotAllowed(
                allow
                    .split(',')
                    .map(str::trim)
                    .filter(|m| !m.is_empty())
                    .map(str::to_owned)
                    .collect(),
            )
        }
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::BodyTooLarge(BODY_LIMIT),
        other => ApiError::Status(other),
    };
    // The router's headers (Allow) with the error's body and its headers.
    let (mut answer, body) = error.into_response().into_parts();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH && name != header::CONTENT_TYPE {
            answer.headers.entry(name).or_insert_with(|| value.clone());
        }
    }
    Response::from_parts(answer, body)
}
