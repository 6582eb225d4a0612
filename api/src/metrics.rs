//! Prometheus metrics, served at `/metrics` on `--metrics-addr` (a listener of its own, never
//! the public one) in the Prometheus text exposition format, version 0.0.4.
//!
//! Events are counted where they happen, into the process-wide [`global`] registry: HTTP
//! requests (by route template, method and status), bets accepted and resolved, epoch and proof
//! times, squarings per second, anchor failures, notary receipts. What the store knows (pool
//! depth, unresolved epochs, anchor lag, the notary queue) is read when scraped, so it is right
//! on every replica, leader or not.
//!
//! Label values come from small fixed sets (route templates, not paths), so the number of
//! series stays bounded whatever clients send.

use crate::http::AppState;
use axum::body::Body;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, Response, StatusCode};
use axum::middleware::Next;
use axum::routing::get;
use axum::Router;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

/// Content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// HTTP latency buckets, seconds: sub-millisecond reads up to slow group commits.
const HTTP_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Epoch and proof buckets, seconds: test epochs of a few ms up to long production epochs.
const SLOW_BUCKETS: &[f64] = &[
    0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 30.0, 60.0,
];

/// Group commit sizes: one bet up to a full group (1024).
const GROUP_BUCKETS: &[f64] = &[
    1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];

/// A monotonic count.
#[derive(Debug, Default)]
pub struct Counter(AtomicU64);

impl Counter {
    pub fn inc(&self) {
        self.add(1);
    }

    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A value that goes up and down (an f64, stored as its bits).
#[derive(Debug, Default)]
pub struct Gauge(AtomicU64);

impl Gauge {
    pub fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed);
    }

    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }
}

/// Observations counted into cumulative buckets, with their sum.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [f64],
    /// Per bucket (not cumulative; summed when rendered), then the +Inf bucket.
    counts: Vec<AtomicU64>,
    sum_bits: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_bits: AtomicU64::new(0f64.to_bits()),
        }
    }

    pub fn observe(&self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum_bits
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
                Some((f64::from_bits(bits) + v).to_bits())
            });
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let mut cumulative = 0;
        let sep = if labels.is_empty() { "" } else { "," };
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = self
                .bounds
                .get(i)
                .map_or_else(|| "+Inf".to_owned(), |b| b.to_string());
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
            );
        }
        let braces = braced(labels);
        let sum = f64::from_bits(self.sum_bits.load(Ordering::Relaxed));
        let _ = writeln!(out, "{name}_sum{braces} {sum}");
        let _ = writeln!(out, "{name}_count{braces} {cumulative}");
    }
}

/// A family member: its label values and its metric.
type Member<M> = (Vec<String>, Arc<M>);

/// One metric per combination of label values.
#[derive(Debug)]
pub struct Family<M> {
    labels: &'static [&'static str],
    /// By a hash of the label values, for a lookup without allocating (it runs per request).
    members: RwLock<HashMap<u64, Vec<Member<M>>>>,
    make: fn() -> M,
}

impl<M> Family<M> {
    fn new(labels: &'static [&'static str], make: fn() -> M) -> Self {
        Self {
            labels,
            members: RwLock::default(),
            make,
        }
    }

    /// The member for `values` (one per label, in order), created on first use.
    pub fn with(&self, values: &[&str]) -> Arc<M> {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        values.hash(&mut h);
        let key = h.finish();
        let same = |(v, _): &&Member<M>| v.iter().map(String::as_str).eq(values.iter().copied());
        {
            let members = self.members.read().unwrap_or_else(|e| e.into_inner());
            if let Some((_, m)) = members.get(&key).and_then(|b| b.iter().find(same)) {
                return Arc::clone(m);
            }
        }
        let mut members = self.members.write().unwrap_or_else(|e| e.into_inner());
        let bucket = members.entry(key).or_default();
        if let Some((_, m)) = bucket.iter().find(same) {
            return Arc::clone(m);
        }
        let m = Arc::new((self.make)());
        bucket.push((
            values.iter().map(|v| (*v).to_owned()).collect(),
            Arc::clone(&m),
        ));
        m
    }

    /// Every member, in the order of its label values.
    fn each(&self, mut f: impl FnMut(String, &M)) {
        let members = self.members.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<&Member<M>> = members.values().flatten().collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        for (values, m) in all {
            let labels = self
                .labels
                .iter()
                .zip(values)
                .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
                .collect::<Vec<_>>()
                .join(",");
            f(labels, m);
        }
    }
}

/// Everything counted as it happens.
#[derive(Debug)]
pub struct Metrics {
    /// route (template), method, status.
    pub http: Family<Histogram>,
    /// Requests whose handler has started and whose response head is not out yet.
    pub http_in_flight: AtomicI64,
    /// game (dice, sicbo, rng), path (epoch, instant).
    pub bets_accepted: Family<Counter>,
    pub bets_resolved: Family<Counter>,
    /// From an epoch's close to its resolution: VDF, proof and settling its games.
    pub epoch_seconds: Histogram,
    /// The Wesolowski proof alone.
    pub proof_seconds: Histogram,
    /// Of the last epoch VDF evaluation on this process.
    pub squarings_per_second: Gauge,
    pub epochs_resolved: Counter,
    pub anchor_failures: Counter,
    pub anchors_confirmed: Counter,
    /// payment (api_key, x402).
    pub notary_accepted: Family<Counter>,
    pub notary_sealed: Counter,
    pub pool_generated: Counter,
    /// op (group_commit, resolve_epoch, ...): how long the store's operations take; a
    /// slow write delays every bet queued behind it.
    pub store_ops: Family<Histogram>,
    /// Items in each group commit.
    pub store_group_size: Histogram,
}

impl Metrics {
    fn new() -> Self {
        Self {
            http: Family::new(&["route", "method", "status"], || {
                Histogram::new(HTTP_BUCKETS)
            }),
            http_in_flight: AtomicI64::new(0),
            bets_accepted: Family::new(&["game", "path"], Counter::default),
            bets_resolved: Family::new(&["game", "path"], Counter::default),
            epoch_seconds: Histogram::new(SLOW_BUCKETS),
            proof_seconds: Histogram::new(SLOW_BUCKETS),
            squarings_per_second: Gauge::default(),
            epochs_resolved: Counter::default(),
            anchor_failures: Counter::default(),
            anchors_confirmed: Counter::default(),
            notary_accepted: Family::new(&["payment"], Counter::default),
            notary_sealed: Counter::default(),
            pool_generated: Counter::default(),
            store_ops: Family::new(&["op"], || Histogram::new(HTTP_BUCKETS)),
            store_group_size: Histogram::new(GROUP_BUCKETS),
        }
    }
}

/// The process-wide registry.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

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
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
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
async fn store_values(state: &AppState) -> Result<Vec<StoreValue>, crate::store::StoreError> {
    let store = &state.store;
    let now = crate::epoch::now_ms();
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

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &str, v: f64) {
    let _ = writeln!(out, "{name}{} {v}", braced(labels));
}

fn braced(labels: &str) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    }
}

/// Label values escaped as the format asks: backslash, double quote, newline.
fn escape(v: &str) -> String {
    v.replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn histograms_render_cumulative_buckets_sum_and_count() {
        let h = Histogram::new(&[0.1, 1.0]);
        h.observe(0.05);
        h.observe(0.5);
        h.observe(0.5);
        h.observe(7.0);
        let mut out = String::new();
        h.render(&mut out, "x", "route=\"/a\"");
        assert_eq!(
            out,
            "x_bucket{route=\"/a\",le=\"0.1\"} 1\n\
             x_bucket{route=\"/a\",le=\"1\"} 3\n\
             x_bucket{route=\"/a\",le=\"+Inf\"} 4\n\
             x_sum{route=\"/a\"} 8.05\n\
             x_count{route=\"/a\"} 4\n"
        );
        // A value on a bound belongs to that bucket (le: less than or equal).
        let h = Histogram::new(&[1.0]);
        h.observe(1.0);
        let mut out = String::new();
        h.render(&mut out, "y", "");
        assert!(out.starts_with("y_bucket{le=\"1\"} 1\n"), "{out}");
    }

    #[test]
    fn families_keep_one_member_per_label_values_and_escape_them() {
        let f: Family<Counter> = Family::new(&["a", "b"], Counter::default);
        f.with(&["x", "1"]).inc();
        f.with(&["x", "1"]).add(2);
        f.with(&["y\"\\\n", "2"]).inc();
        let mut seen = Vec::new();
        f.each(|labels, c| seen.push((labels, c.get())));
        assert_eq!(
            seen,
            vec![
                ("a=\"x\",b=\"1\"".to_owned(), 3),
                ("a=\"y\\\"\\\\\\n\",b=\"2\"".to_owned(), 1),
            ]
        );
    }
}
