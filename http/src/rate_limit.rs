//! Per-client rate limit on the write endpoints (every method but GET, HEAD and OPTIONS): a
//! token bucket per client, refilled at `per_second` up to `burst`. A request that finds the
//! bucket empty gets 429 with a JSON error and `Retry-After` (whole seconds, at least 1), and
//! nothing is written for it.
//!
//! A client is its IP address; IPv6 clients are grouped by /64, the block one subscriber
//! usually holds. Behind a reverse proxy every request comes from the proxy, so
//! `client_ip_header` names the header the proxy sets (e.g. `X-Forwarded-For`): its last entry,
//! the address the proxy itself saw, is taken.

use crate::ApiError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, Response};
use axum::middleware::Next;
use axum::response::IntoResponse;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Independent locks, so that concurrent clients rarely wait for each other.
const SHARDS: usize = 16;
/// Above this many clients in a shard, buckets that have refilled are forgotten (a full bucket
/// is the same as no bucket).
const SHARD_SOFT_CAP: usize = 4096;

/// What the limit allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimitConfig {
    /// Sustained write requests per second per client.
    pub per_second: f64,
    /// Requests a client may send at once after being idle.
    pub burst: u32,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// The buckets of every client seen recently.
#[derive(Debug)]
pub struct RateLimiter {
    config: RateLimitConfig,
    client_ip_header: Option<HeaderName>,
    shards: Vec<Mutex<HashMap<IpAddr, Bucket>>>,
}

impl RateLimiter {
    pub fn new(config: RateLimitConfig, client_ip_header: Option<HeaderName>) -> Self {
        Self {
            config,
            client_ip_header,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    /// Takes one token for `client`; `Err(wait)` when there is none yet.
    pub fn check(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        let RateLimitConfig { per_second, burst } = self.config;
        let burst = f64::from(burst.max(1));
        let shard = &self.shards[shard_of(&client)];
        // A poisoned lock only means another request panicked mid-update: the map is still a
        // map of buckets, so keep using it.
        let mut buckets = shard.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= SHARD_SOFT_CAP && !buckets.contains_key(&client) {
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.updated).as_secs_f64() * per_second
                    < burst
            });
        }
        let b = buckets.entry(client).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        let refill = now.saturating_duration_since(b.updated).as_secs_f64() * per_second;
        b.tokens = (b.tokens + refill).min(burst);
        b.updated = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / per_second))
        }
    }

    /// The client a request counts against: the proxy's header when one is configured and
    /// present, else the peer address (none in in-process tests: not limited).
    fn client(&self, headers: &HeaderMap, peer: Option<IpAddr>) -> Option<IpAddr> {
        let from_header = self.client_ip_header.as_ref().and_then(|name| {
            headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .filter_map(|s| s.trim().parse::<IpAddr>().ok())
                .next_back()
        });
        from_header.or(peer).map(client_key)
    }
}

/// IPv4 addresses as they are; IPv6 by /64 (and IPv4-mapped IPv6 as IPv4).
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

fn shard_of(ip: &IpAddr) -> usize {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ip.hash(&mut h);
    (h.finish() as usize) % SHARDS
}

/// Middleware: limits the write methods, lets reads through.
pub async fn limit_writes(
    State(limiter): State<Arc<RateLimiter>>,
    req: Request,
    next: Next,
) -> Response<Body> {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let peer = super::listener::peer_addr(&req).map(|a| a.ip());
    let Some(client) = limiter.client(req.headers(), peer) else {
        return next.run(req).await;
    };
    match limiter.check(client, Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            // Read the refused request's body before answering, so that the connection stays
            // usable: answering with the body unread made the server drop a keep-alive
            // connection the client was still writing to (a broken pipe on its next request).
            // A body over the limit, or one that does not arrive in time, closes it instead.
            let drained = tokio::time::timeout(
                DRAIN_WITHIN,
                axum::body::to_bytes(req.into_body(), super::BODY_LIMIT),
            )
            .await;
            let mut res = too_many(&limiter.config, wait);
            if !matches!(drained, Ok(Ok(_))) {
                res.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            res
        }
    }
}

/// How long a refused request's body may take to arrive before its connection is closed.
const DRAIN_WITHIN: Duration = Duration::from_secs(5);

fn too_many(config: &RateLimitConfig, wait: Duration) -> Response<Body> {
    ApiError::RateLimited {
        per_second: config.per_second,
        burst: config.burst,
        retry_after: wait.as_secs_f64().ceil().max(1.0) as u64,
    }
    .into_response()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn limiter(per_second: f64, burst: u32) -> RateLimiter {
        RateLimiter::new(RateLimitConfig { per_second, burst }, None)
    }

    #[test]
    fn a_burst_passes_then_the_rate_holds() {
        let l = limiter(10.0, 3);
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(l.check(ip, t0).is_ok());
        }
        let wait = l.check(ip, t0).unwrap_err();
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // 100 ms later one token is back, and only one.
        let t1 = t0 + Duration::from_millis(100);
        assert!(l.check(ip, t1).is_ok());
        assert!(l.check(ip, t1).is_err());
        // Idle for long: back to the burst, not beyond it.
        let t2 = t1 + Duration::from_secs(60);
        for _ in 0..3 {
            assert!(l.check(ip, t2).is_ok());
        }
        assert!(l.check(ip, t2).is_err());
    }

    #[test]
    fn clients_are_counted_apart_and_ipv6_by_64() {
        let l = limiter(1.0, 1);
        let t = Instant::now();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert!(l.check(a, t).is_ok());
        assert!(l.check(a, t).is_err());
        assert!(l.check(b, t).is_ok());
        let v6a = client_key("2001:db8:1:2::1".parse().unwrap());
        let v6b = client_key("2001:db8:1:2:ffff::9".parse().unwrap());
        let v6c = client_key("2001:db8:1:3::1".parse().unwrap());
        assert_eq!(v6a, v6b);
        assert_ne!(v6a, v6c);
        assert_eq!(client_key("::ffff:192.0.2.1".parse().unwrap()), a);
    }

    #[test]
    fn the_proxy_header_names_the_client_by_its_last_entry() {
        let l = RateLimiter::new(
            RateLimitConfig {
                per_second: 1.0,
                burst: 1,
            },
            Some(HeaderName::from_static("x-forwarded-for")),
        );
        let mut h = HeaderMap::new();
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("203.0.113.9, 198.51.100.7"),
        );
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            l.client(&h, Some(peer)),
            Some("198.51.100.7".parse().unwrap())
        );
        // Garbage in the header: the peer address counts.
        h.insert(
            "x-forwarded-for",
            HeaderValue::from_static("not an address"),
        );
        assert_eq!(l.client(&h, Some(peer)), Some(peer));
    }

    #[test]
    fn forgotten_buckets_are_only_full_ones() {
        let l = limiter(1.0, 2);
        let t = Instant::now();
        // Fill one shard past its cap with clients that each spent one token.
        let mut n = 0u32;
        let mut spent = Vec::new();
        while spent.len() < SHARD_SOFT_CAP + 1 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + n));
            n += 1;
            if shard_of(&ip) == 0 {
                assert!(l.check(ip, t).is_ok());
                spent.push(ip);
            }
        }
        // None refilled, so none was forgotten: the first still has one token, not two.
        assert!(l.check(spent[0], t).is_ok());
        assert!(l.check(spent[0], t).is_err());
    }
}
