//! `/metrics` on `--metrics-addr` (a listener of its own, never the public one): the
//! [`vrs_observe::metrics`] registry in the Prometheus text exposition format, version 0.0.4, and the
//! middleware that times every request. What the store knows (pool depth, unresolved epochs,
//! anchor lag, the notary queue) is read when scraped, so it is right on every replica, leader
//! or not.

use crate::AppState;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header as http_header, HeaderValue, Response, StatusCode};
use axum::middleware::Next;
use axum::routing::get;
use axum::Router;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;
use vrs_observe::metrics::{global, header, sample, CONTENT_TYPE};

/// The router of the metrics listener.
pub fn app(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .with_state(state)
}

async fn scrape(State(state): State<Arc<AppState>>) -> Response<Body> {
    let (status, text) = match render(&state).await {
        Ok(text) => (StatusCode::OK, text),
        // What the process counted is still worth having when the store is down; the failure
        // shows as vrs_store_up 0.
        Err(partial) => (StatusCode::OK, partial),
    };
    let mut res = Response::new(Body::from(text));
    *res.status_mut() = status;
    res.headers_mut().insert(
        http_header::CONTENT_TYPE,
        HeaderValue::from_static(CONTENT_TYPE),
    );
    res
}

/// The exposition text: `Err` carries the text without the store's values when it is down.
pub async fn render(state: &AppState) -> Result<String, String> {
    let m = global();
    let mut out = String::with_capacity(8192);
    let w = &mut out;

    header(
        w,
        "vrs_http_request_duration_seconds",
        "histogram",
        "HTTP requests by route template, method and status: time to the response head.",
    );
    m.http
        .each(|labels, h| h.render(w, "vrs_http_request_duration_seconds", &labels));
    header(
        w,
        "vrs_http_requests_in_flight",
        "gauge",
        "HTTP requests being handled now: from the request head to the response head.",
    );
    sample(
        w,
        "vrs_http_requests_in_flight",
        "",
        m.http_in_flight.load(Ordering::Relaxed) as f64,
    );
    header(
        w,
        "vrs_bets_accepted_total",
        "counter",
        "Bets and RNG requests accepted (202 or instant 200) by this process.",
    );
    m.bets_accepted
        .each(|l, c| sample(w, "vrs_bets_accepted_total", &l, c.get() as f64));
    header(
        w,
        "vrs_bets_resolved_total",
        "counter",
        "Bets and RNG requests resolved by this process (epoch resolution or instant).",
    );
    m.bets_resolved
        .each(|l, c| sample(w, "vrs_bets_resolved_total", &l, c.get() as f64));
    header(
        w,
        "vrs_epoch_duration_seconds",
        "histogram",
        "From an epoch's close to its resolution: VDF evaluation, proof and settling its games.",
    );
    m.epoch_seconds.render(w, "vrs_epoch_duration_seconds", "");
    header(
        w,
        "vrs_vdf_proof_seconds",
        "histogram",
        "Time to compute an epoch's Wesolowski proof.",
    );
    m.proof_seconds.render(w, "vrs_vdf_proof_seconds", "");
    header(
        w,
        "vrs_vdf_squarings_per_second",
        "gauge",
        "Sequential squarings per second of the last epoch evaluated here.",
    );
    sample(
        w,
        "vrs_vdf_squarings_per_second",
        "",
        m.squarings_per_second.get(),
    );
    header(
        w,
        "vrs_epochs_resolved_total",
        "counter",
        "Epochs resolved by this process.",
    );
    sample(
        w,
        "vrs_epochs_resolved_total",
        "",
        m.epochs_resolved.get() as f64,
    );
    header(
        w,
        "vrs_anchor_failures_total",
        "counter",
        "Failed anchoring attempts (RPC errors, refused or dropped transactions).",
    );
    sample(
        w,
        "vrs_anchor_failures_total",
        "",
        m.anchor_failures.get() as f64,
    );
    header(
        w,
        "vrs_anchors_confirmed_total",
        "counter",
        "Anchor batches confirmed by this process.",
    );
    sample(
        w,
        "vrs_anchors_confirmed_total",
        "",
        m.anchors_confirmed.get() as f64,
    );
    header(
        w,
        "vrs_notary_accepted_total",
        "counter",
        "Notarizations accepted, by payment.",
    );
    m.notary_accepted
        .each(|l, c| sample(w, "vrs_notary_accepted_total", &l, c.get() as f64));
    header(
        w,
        "vrs_notary_sealed_total",
        "counter",
        "Notary receipts sealed into batches here.",
    );
    sample(
        w,
        "vrs_notary_sealed_total",
        "",
        m.notary_sealed.get() as f64,
    );
    header(
        w,
        "vrs_pool_generated_total",
        "counter",
        "Pool entries generated by this process.",
    );
    sample(
        w,
        "vrs_pool_generated_total",
        "",
        m.pool_generated.get() as f64,
    );
    header(
        w,
        "vrs_store_operation_seconds",
        "histogram",
        "Store operations by name, commit included: the embedded store's write transactions \
         (group_commit: bets, RNG requests and receipts committed together), PostgreSQL's reads and writes.",
    );
    m.store_ops
        .each(|l, h| h.render(w, "vrs_store_operation_seconds", &l));
    header(
        w,
        "vrs_store_group_size",
        "histogram",
        "Bets, RNG requests and receipts committed together in one group commit.",
    );
    m.store_group_size.render(w, "vrs_store_group_size", "");
    if state.log.is_some() {
        header(
            w,
            "vrs_log_size",
            "gauge",
            "Entries in the witnessed log (docs/PROTOCOL.md §21).",
        );
        sample(w, "vrs_log_size", "", m.log_size.get());
        header(
            w,
            "vrs_witness_cosign_seconds",
            "histogram",
            "add-checkpoint round trips to each witness that came back cosigned.",
        );
        m.witness_cosign_seconds
            .each(|l, h| h.render(w, "vrs_witness_cosign_seconds", &l));
        header(
            w,
            "vrs_witness_refusals_total",
            "counter",
            "add-checkpoint pushes a witness refused (by HTTP status; error: no answer).",
        );
        m.witness_refusals
            .each(|l, c| sample(w, "vrs_witness_refusals_total", &l, c.get() as f64));
        header(
            w,
            "vrs_witness_cosigned_size",
            "gauge",
            "The log size each witness last cosigned: below vrs_log_size, it is behind.",
        );
        m.witness_cosigned_size
            .each(|l, g| sample(w, "vrs_witness_cosigned_size", &l, g.get()));
    }
    let e = &state.engine;
    header(
        w,
        "vrs_leader",
        "gauge",
        "1 when this process leads the epoch chain.",
    );
    let leader = e.leader.load(Ordering::Relaxed);
    sample(w, "vrs_leader", "", if leader { 1.0 } else { 0.0 });
    header(
        w,
        "vrs_uptime_seconds",
        "gauge",
        "Seconds since this process started.",
    );
    sample(
        w,
        "vrs_uptime_seconds",
        "",
        state.started.elapsed().as_secs_f64(),
    );

    let stored = store_values(state).await;
    header(
        w,
        "vrs_store_up",
        "gauge",
        "1 when the store answered this scrape.",
    );
    sample(
        w,
        "vrs_store_up",
        "",
        if stored.is_ok() { 1.0 } else { 0.0 },
    );
    match stored {
        Ok(values) => {
            for (name, kind, help, v) in values {
                header(w, name, kind, help);
                sample(w, name, "", v);
            }
            Ok(out)
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics: the store did not answer");
            Err(out)
        }
    }
}

type StoreValue = (&'static str, &'static str, &'static str, f64);

/// The gauges read from the store at scrape time.
async fn store_values(state: &AppState) -> Result<Vec<StoreValue>, vrs_store::StoreError> {
    let store = &state.store;
    let now = vrs_observe::clock::now_ms();
    let open = store.open_epoch().await?;
    let latest = store.latest_resolved_epoch().await?;
    let unresolved = store.unresolved_epochs().await?;
    let pool = store.pool_counts().await?;
    let anchors = store.anchor_counts().await?;
    let notary = store.notary_counts().await?;
    let last_resolved = latest.as_ref().map_or(0, |e| e.number);
    let resolved_at = latest
        .as_ref()
        .and_then(|e| e.output.as_ref())
        .map(|o| o.resolved_at_ms);
    // How late the oldest epoch that should be resolved by now is: 0 while on schedule.
    let due = unresolved
        .first()
        .and_then(|e| e.closed_at_ms)
        .map_or(0, |closed| now - closed);
    let anchored = anchors.last_confirmed.as_ref().map_or(0, |b| b.last_epoch);
    Ok(vec![
        (
            "vrs_epoch_current",
            "gauge",
            "Number of the epoch open for bets.",
            open.number as f64,
        ),
        (
            "vrs_epoch_last_resolved",
            "gauge",
            "Number of the newest resolved epoch.",
            last_resolved as f64,
        ),
        (
            "vrs_epoch_unresolved",
            "gauge",
            "Closed epochs waiting for their VDF (normally 0 or 1).",
            unresolved.len() as f64,
        ),
        (
            "vrs_epoch_lag_seconds",
            "gauge",
            "Seconds since the oldest unresolved epoch closed (0 when none is waiting).",
            due.max(0) as f64 / 1000.0,
        ),
        (
            "vrs_epoch_last_resolved_age_seconds",
            "gauge",
            "Seconds since the newest epoch was resolved.",
            resolved_at.map_or(0.0, |t| (now - t).max(0) as f64 / 1000.0),
        ),
        (
            "vrs_pool_depth",
            "gauge",
            "Pool entries committed and not served yet.",
            pool.depth() as f64,
        ),
        (
            "vrs_anchor_lag_epochs",
            "gauge",
            "Resolved epochs not yet in a confirmed anchor batch.",
            last_resolved.saturating_sub(anchored) as f64,
        ),
        (
            "vrs_anchor_batches_pending",
            "gauge",
            "Anchor batches made but not confirmed (pending or submitted).",
            (anchors.pending + anchors.submitted) as f64,
        ),
        (
            "vrs_notary_queue",
            "gauge",
            "Notary receipts accepted and not sealed into a batch yet.",
            notary.pending as f64,
        ),
    ])
}
/// The route label of a response: its route's template, set by [`tag_route`].
#[derive(Debug, Clone)]
struct RouteLabel(MatchedPath);

/// Route layer: tags the response with the template of the route that answered it.
pub async fn tag_route(req: Request, next: Next) -> Response<Body> {
    let route = req.extensions().get::<MatchedPath>().cloned();
    let mut res = next.run(req).await;
    if let Some(route) = route {
        res.extensions_mut().insert(RouteLabel(route));
    }
    res
}

/// Outer layer: times every request and counts it by route template, method and status.
/// Requests that matched no route count as route "unmatched".
pub async fn time_requests(req: Request, next: Next) -> Response<Body> {
    let start = Instant::now();
    let method = req.method().clone();
    let res = {
        // Counted down on drop, so a request whose client went away leaves the gauge too.
        let _in_flight = InFlight::enter();
        next.run(req).await
    };
    let route = res
        .extensions()
        .get::<RouteLabel>()
        .map_or("unmatched", |r| r.0.as_str());
    // Only the standard methods get a label of their own: a client cannot mint series.
    let method = match method.as_str() {
        m @ ("GET" | "HEAD" | "POST" | "PUT" | "DELETE" | "PATCH" | "OPTIONS") => m,
        _ => "other",
    };
    global()
        .http
        .with(&[route, method, res.status().as_str()])
        .observe(start.elapsed().as_secs_f64());
    res
}

/// One request counted in `vrs_http_requests_in_flight` while it lives.
struct InFlight;

impl InFlight {
    fn enter() -> Self {
        global().http_in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        global().http_in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
