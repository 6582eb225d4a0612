//! The process-wide metrics registry: counters, gauges, histograms and labelled families,
//! counted where things happen ([`global`]), and the Prometheus text format they render to
//! (version 0.0.4). Serving them, with what the store knows read at scrape time, is
//! `http::metrics`.
//!
//! Label values come from small fixed sets (route templates, not paths), so the number of
//! series stays bounded whatever clients send.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// Content type of the text exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// HTTP latency buckets, seconds: sub-millisecond reads up to slow group commits.
const HTTP_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// add-checkpoint round trips, seconds: fine where loopback and LAN witnesses answer.
const WITNESS_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0015, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05,
    0.075, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
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

    /// The histogram's bucket, sum and count lines.
    pub fn render(&self, out: &mut String, name: &str, labels: &str) {
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
    pub fn each(&self, mut f: impl FnMut(String, &M)) {
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
    /// witness (its key name): one add-checkpoint round trip that came back cosigned.
    pub witness_cosign_seconds: Family<Histogram>,
    /// witness, status (the HTTP status, or "error" when none came back).
    pub witness_refusals: Family<Counter>,
    /// witness: the size of the log it last cosigned.
    pub witness_cosigned_size: Family<Gauge>,
    /// Entries in the witnessed log.
    pub log_size: Gauge,
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
            witness_cosign_seconds: Family::new(&["witness"], || Histogram::new(WITNESS_BUCKETS)),
            witness_refusals: Family::new(&["witness", "status"], Counter::default),
            witness_cosigned_size: Family::new(&["witness"], Gauge::default),
            log_size: Gauge::default(),
        }
    }
}

/// The process-wide registry.
pub fn global() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// The HELP and TYPE lines of a metric.
pub fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One sample line.
pub fn sample(out: &mut String, name: &str, labels: &str, v: f64) {
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
