//! `vrs-loadgen`: an HTTP/1.1 load generator for durable bets, closed- or open-loop.
//!
//! Closed loop (the default): every connection sends one request, reads the whole response,
//! and sends the next one at once. Open loop (`--rate`): requests follow a fixed schedule, and
//! a request that leaves late (its connection was still busy) is timed from its scheduled
//! time, so that a slow server cannot hide its stalls by slowing the load down (no coordinated
//! omission). Only the accepted status (202 by default: the service answers 202 once the bet
//! is stored) counts as accepted. A minimal keep-alive client over `tokio::net::TcpStream`
//! keeps the tool free of an HTTP client crate and its overhead.

use anyhow::{bail, Context};
use clap::Parser;
use serde_json::json;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Pause after a failed connection or request, so that a dead server is not hammered.
const ERROR_BACKOFF: Duration = Duration::from_millis(20);
/// Largest status line plus headers accepted from the server.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// HTTP/1.1 load generator for vrs durable bets, closed-loop or at a fixed rate.
///
/// Opens --connections keep-alive connections, spread round-robin over the --url values, and
/// on each one sends POST --path with --body (or, with --get-paths, GETs of a list of paths,
/// for read load). Closed loop (default): back to back, the next
/// request leaves as soon as the previous response has been read in full. Open loop (--rate):
/// request i (of all connections together) is due i/R seconds after the start, on connection
/// i mod --connections; a connection still busy when its next request is due sends it as
/// soon as it is free, and that request's latency counts from when it was due. Results of the
/// first --warmup seconds are discarded (open loop: of requests due in them); the next
/// --duration seconds are measured. Closed loop: requests still in flight at the end are
/// abandoned. Open loop: requests due before the end get --drain more seconds to be answered.
/// Only status 202 (the bet is stored; --accept-status to change) counts as accepted; other statuses and I/O errors are
/// counted apart. Latency is measured per accepted request, from writing the request (open
/// loop: from when it was due) to reading the last byte of the response. Exits with status 1
/// if no request was accepted during the measured window.
#[derive(Debug, Parser)]
#[command(name = "vrs-loadgen", version)]
struct Args {
    /// Base URL of a vrs server, http:// only (repeatable: connections are spread
    /// round-robin over the URLs, e.g. one per replica). A path in the URL is prepended to
    /// --path.
    #[arg(
        long = "url",
        value_name = "URL",
        default_value = "http://127.0.0.1:8080"
    )]
    urls: Vec<String>,
    /// Number of concurrent keep-alive connections, each with one request in flight.
    #[arg(long, short = 'c', value_name = "N", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    connections: u32,
    /// Seconds measured after the warm-up (fractions allowed).
    #[arg(long, short = 'd', value_name = "SECS", default_value_t = 10.0,
          value_parser = positive_secs)]
    duration: f64,
    /// Seconds of load before measuring; responses and errors during the warm-up are
    /// discarded (fractions allowed, 0 for none).
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = non_negative_secs)]
    warmup: f64,
    /// Request path, appended to each URL.
    #[arg(long, value_name = "PATH", default_value = "/api/v1/games/dice/bet")]
    path: String,
    /// Send GET requests instead of POST --body, to the paths listed in FILE (one per line,
    /// each appended to the URL): request k of connection i reads line (i + k × connections)
    /// mod the number of lines, so the connections walk the list together. For read load,
    /// e.g. `GET /api/v1/verify/{id}` over many games; give --accept-status 200.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["path", "body"])]
    get_paths: Option<std::path::PathBuf>,
    /// Request body, sent as application/json with every request.
    #[arg(
        long,
        value_name = "JSON",
        default_value = r#"{"bet_type":"over7","amount":1.5,"player_seed":"load"}"#
    )]
    body: String,
    /// Print one JSON object on stdout instead of the human-readable table.
    #[arg(long)]
    json: bool,
    /// The status that counts as accepted: 202 for epoch bets, 200 for instant
    /// (pool-served) bets, which answer already resolved.
    #[arg(long, value_name = "STATUS", default_value_t = 202)]
    accept_status: u16,
    /// Extra request header, "Name: value" (repeatable), e.g. "Authorization: Bearer KEY"
    /// for the notary.
    #[arg(long = "header", short = 'H', value_name = "HEADER", value_parser = parse_header)]
    headers: Vec<String>,
    /// Open loop: send R requests per second in total, on a fixed schedule spread evenly over
    /// the connections. Each connection carries one request at a time, so give enough of them:
    /// a connection falls behind once R / connections × latency exceeds 1.
    #[arg(long, value_name = "R", value_parser = positive_rate)]
    rate: Option<f64>,
    /// Open loop: seconds that requests due before the end may still take after it (to be
    /// sent, if their connection was busy, and answered). They count with their full latency;
    /// those still unanswered then are reported as unfinished. Closed loop ignores it: requests
    /// in flight at the end are abandoned.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = non_negative_secs)]
    drain: f64,
    /// Also print one JSON line per interval of SECS seconds of the measured window on stdout
    /// (t: seconds since the window opened, at the interval's end; accepted, other, errors,
    /// p50_ms, p99_ms of the responses that arrived in it, the last line with those of the
    /// drain; scheduled: requests due in it, open loop only), before the final report.
    #[arg(long, value_name = "SECS", value_parser = positive_secs)]
    report_every: Option<f64>,
}

fn positive_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!(
            "expected a positive number of requests per second, got {s:?}"
        )),
    }
}

fn parse_header(s: &str) -> Result<String, String> {
    match s.split_once(':') {
        Some((name, value))
            if !name.trim().is_empty()
                && name
                    .trim()
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !value.contains(['\r', '\n']) =>
        {
            Ok(format!("{}: {}", name.trim(), value.trim()))
        }
        _ => Err(format!("expected \"Name: value\", got {s:?}")),
    }
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e7 => Ok(v),
        _ => Err(format!("expected a positive number of seconds, got {s:?}")),
    }
}

fn non_negative_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..1e7).contains(&v) => Ok(v),
        _ => Err(format!(
            "expected a number of seconds (0 or more), got {s:?}"
        )),
    }
}

/// What each request is: one POST with a body, or GETs of a list of paths.
#[derive(Debug, Clone, Copy)]
enum Requests<'a> {
    Post { path: &'a str, body: &'a str },
    Get { paths: &'a [String] },
}

/// One server to load: where to connect and the requests to send, serialised once.
#[derive(Debug)]
struct Target {
    url: String,
    /// `host:port` given to `TcpStream::connect`.
    connect_to: String,
    /// The requests, in the order the connections walk them (one for POST).
    requests: Vec<Vec<u8>>,
}

impl Target {
    #[cfg(test)]
    fn new(url: &str, path: &str, body: &str, headers: &[String]) -> anyhow::Result<Self> {
        Self::with_requests(url, Requests::Post { path, body }, headers)
    }

    /// Request `n` of all the connections together.
    fn request(&self, n: u64) -> &[u8] {
        let len = self.requests.len().max(1) as u64;
        self.requests
            .get((n % len) as usize)
            .map_or(&[][..], Vec::as_slice)
    }

    fn with_requests(url: &str, requests: Requests, headers: &[String]) -> anyhow::Result<Self> {
        let rest = match url.get(..7) {
            Some(scheme) if scheme.eq_ignore_ascii_case("http://") => &url[7..],
            _ => bail!("only http:// URLs are supported"),
        };
        let (authority, base) = match rest.find(['/', '?', '#']) {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.is_empty() || authority.contains('@') {
            bail!("expected http://HOST[:PORT][/PATH]");
        }
        if base.contains(['?', '#']) {
            bail!("a query or fragment in the base URL is not supported");
        }
        // A port is present if the authority ends with `:digits`, after any IPv6 literal.
        let host_end = authority.rfind(']').map_or(0, |i| i + 1);
        let has_port = authority[host_end..]
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        let connect_to = if has_port {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        let full = |path: &str| {
            if path.starts_with('/') {
                format!("{}{path}", base.trim_end_matches('/'))
            } else {
                format!("{}/{path}", base.trim_end_matches('/'))
            }
        };
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        let head = |method: &str, path: &str| {
            format!(
                "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: vrs-loadgen\r\n\
                 Accept: application/json\r\n{extra}"
            )
        };
        let (shown, requests) = match requests {
            Requests::Post { path, body } => {
                let path = full(path);
                let request = format!(
                    "{}Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    head("POST", &path),
                    body.len()
                );
                (path, vec![request.into_bytes()])
            }
            Requests::Get { paths } => {
                if paths.is_empty() {
                    bail!("the list of paths to GET is empty");
                }
                let paths: Vec<String> = paths.iter().map(|p| full(p)).collect();
                let requests = paths
                    .iter()
                    .map(|p| format!("{}\r\n", head("GET", p)).into_bytes())
                    .collect();
                let shown = match paths.len() {
                    1 => paths[0].clone(),
                    n => format!("{} (and {} more paths)", paths[0], n - 1),
                };
                (shown, requests)
            }
        };
        Ok(Self {
            url: format!("http://{authority}{shown}"),
            connect_to,
            requests,
        })
    }
}

/// What one connection saw during the measured window.
#[derive(Debug, Default)]
struct ConnStats {
    /// Latency of every 202 response, in nanoseconds.
    latencies_ns: Vec<u64>,
    non_202: BTreeMap<u16, u64>,
    errors: BTreeMap<String, u64>,
    connects: u64,
}

#[derive(Debug)]
struct Response {
    status: u16,
    /// The server will close the connection after this response.
    close: bool,
}

type Conn = BufReader<TcpStream>;

async fn connect(target: &Target) -> anyhow::Result<Conn> {
    let stream = TcpStream::connect(&target.connect_to)
        .await
        .with_context(|| format!("connecting to {}", target.connect_to))?;
    stream.set_nodelay(true).context("setting TCP_NODELAY")?;
    Ok(BufReader::with_capacity(16 * 1024, stream))
}

fn is_stale_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        BrokenPipe | ConnectionReset | ConnectionAborted | UnexpectedEof
    )
}

/// Sends the request and reads the whole response. `Ok(None)`: the connection was closed
/// before any byte of a response arrived (a keep-alive connection the server had dropped).
async fn exchange(conn: &mut Conn, request: &[u8]) -> anyhow::Result<Option<Response>> {
    match conn.get_mut().write_all(request).await {
        Ok(()) => {}
        Err(e) if is_stale_error(&e) => return Ok(None),
        Err(e) => return Err(e).context("sending the request"),
    }
    let mut line = Vec::with_capacity(256);
    // Skip interim 1xx responses (none are expected: the request carries no Expect header).
    loop {
        line.clear();
        match conn.read_until(b'\n', &mut line).await {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if is_stale_error(&e) => return Ok(None),
            Err(e) => return Err(e).context("reading the status line"),
        }
        let (version, status) = parse_status_line(&line)?;
        let head = read_headers(conn).await?;
        if (100..200).contains(&status) {
            continue;
        }
        let mut close = head.close || (version == "HTTP/1.0" && !head.keep_alive);
        let no_body = status == 204 || status == 304;
        if no_body {
        } else if head.chunked {
            read_chunked(conn).await?;
        } else if let Some(n) = head.content_length {
            discard(conn, n).await?;
        } else {
            // Delimited by the end of the connection.
            tokio::io::copy(conn, &mut tokio::io::sink())
                .await
                .context("reading a body delimited by connection close")?;
            close = true;
        }
        return Ok(Some(Response { status, close }));
    }
}

fn parse_status_line(line: &[u8]) -> anyhow::Result<(String, u16)> {
    let text = std::str::from_utf8(line).context("status line is not UTF-8")?;
    let mut parts = text.trim_end().splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let code = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        bail!("malformed status line {:?}", text.trim_end());
    }
    let status = code
        .parse::<u16>()
        .with_context(|| format!("malformed status line {:?}", text.trim_end()))?;
    Ok((version.to_owned(), status))
}

#[derive(Debug, Default)]
struct Head {
    content_length: Option<u64>,
    chunked: bool,
    close: bool,
    keep_alive: bool,
}

async fn read_headers(conn: &mut Conn) -> anyhow::Result<Head> {
    let mut head = Head::default();
    let mut line = Vec::with_capacity(128);
    let mut total = 0usize;
    loop {
        line.clear();
        let n = conn
            .read_until(b'\n', &mut line)
            .await
            .context("reading the response headers")?;
        if n == 0 {
            bail!("connection closed in the response headers");
        }
        total += n;
        if total > MAX_HEAD_BYTES {
            bail!("response headers longer than {MAX_HEAD_BYTES} bytes");
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            return Ok(head);
        }
        let Some((name, value)) = text.split_once(':') else {
            bail!("malformed header line {text:?}");
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            head.content_length = Some(
                value
                    .parse()
                    .with_context(|| format!("bad Content-Length {value:?}"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            head.chunked = value.to_ascii_lowercase().contains("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            head.close |= v.contains("close");
            head.keep_alive |= v.contains("keep-alive");
        }
    }
}

async fn discard(conn: &mut Conn, n: u64) -> anyhow::Result<()> {
    let got = tokio::io::copy(&mut (&mut *conn).take(n), &mut tokio::io::sink())
        .await
        .context("reading the response body")?;
    if got != n {
        bail!("connection closed after {got} of {n} body bytes");
    }
    Ok(())
}

async fn read_chunked(conn: &mut Conn) -> anyhow::Result<()> {
    let mut line = Vec::with_capacity(32);
    loop {
        line.clear();
        if conn
            .read_until(b'\n', &mut line)
            .await
            .context("reading a chunk size")?
            == 0
        {
            bail!("connection closed in a chunked body");
        }
        let text = String::from_utf8_lossy(&line);
        let size_text = text.split(';').next().unwrap_or_default().trim();
        let size = u64::from_str_radix(size_text, 16)
            .with_context(|| format!("bad chunk size {size_text:?}"))?;
        if size == 0 {
            // Trailers, up to an empty line.
            read_headers(conn).await?;
            return Ok(());
        }
        discard(conn, size + 2).await?;
    }
}

/// One request on the connection, opening (or reopening) it as needed. Returns the status
/// and the latency from writing the request to reading the end of the response.
async fn one_request(
    target: &Target,
    request: &[u8],
    slot: &mut Option<Conn>,
    stats: &mut ConnStats,
) -> anyhow::Result<(u16, Duration)> {
    // A second attempt only when a reused keep-alive connection turned out to be closed.
    for _ in 0..2 {
        let reused = slot.is_some();
        let conn = match slot {
            Some(c) => c,
            None => {
                let c = connect(target).await?;
                stats.connects += 1;
                slot.insert(c)
            }
        };
        let start = Instant::now();
        match exchange(conn, request).await {
            Ok(Some(resp)) => {
                let latency = start.elapsed();
                if resp.close {
                    *slot = None;
                }
                return Ok((resp.status, latency));
            }
            Ok(None) if reused => *slot = None,
            Ok(None) => {
                *slot = None;
                bail!("connection closed by the server before a response");
            }
            Err(e) => {
                *slot = None;
                return Err(e);
            }
        }
    }
    bail!("connection closed by the server before a response, twice")
}

/// The open-loop schedule: request i of all connections together is due i / rate seconds
/// after `start`, on connection i mod `connections`.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    start: Instant,
    rate: f64,
    connections: u64,
}

impl Schedule {
    /// When the k-th request of connection `conn` is due.
    fn due(&self, conn: u64, k: u64) -> Instant {
        let i = k.saturating_mul(self.connections).saturating_add(conn);
        self.start + Duration::from_secs_f64(i as f64 / self.rate)
    }

    /// Requests due from `from_s` (inclusive) to `to_s` (exclusive) seconds after the start:
    /// the i with from_s ≤ i / rate < to_s.
    fn count_between(&self, from_s: f64, to_s: f64) -> u64 {
        let first = (from_s * self.rate).ceil() as u64;
        let end = (to_s * self.rate).ceil() as u64;
        end.saturating_sub(first)
    }
}

/// What the measured window saw since the last interval line (--report-every), shared by the
/// connections.
#[derive(Debug, Default)]
struct Interval {
    latencies_ns: Vec<u64>,
    other: u64,
    errors: u64,
}

type Live = Arc<Mutex<Interval>>;

fn record_live(live: Option<&Live>, f: impl FnOnce(&mut Interval)) {
    if let Some(live) = live {
        f(&mut live.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// Where one connection stands: its number, the window, and the schedule in open loop.
#[derive(Debug, Clone)]
struct ConnPlan {
    index: u64,
    /// All the connections, for the walk through the requests of --get-paths.
    connections: u64,
    accept: u16,
    measure_from: Instant,
    /// No request is due (open loop) or sent (closed loop) from here on.
    end: Instant,
    /// Requests in flight are abandoned from here on: `end` in closed loop, later in open loop
    /// (--drain).
    give_up: Instant,
    schedule: Option<Schedule>,
    live: Option<Live>,
}

async fn run_connection(target: Arc<Target>, plan: ConnPlan) -> ConnStats {
    let ConnPlan {
        index,
        connections,
        accept,
        measure_from,
        end,
        give_up,
        schedule,
        live,
    } = plan;
    let mut stats = ConnStats::default();
    let mut slot: Option<Conn> = None;
    let mut k = 0u64;
    let mut sent = 0u64;
    loop {
        // Open loop: the request is due at its scheduled time, and belongs to the measured
        // window if it was due in it. Closed loop: it leaves now, and counts if it ends in it.
        let due = match schedule {
            Some(s) => {
                let due = s.due(index, k);
                k += 1;
                if due >= end {
                    break;
                }
                tokio::time::sleep_until(due).await;
                Some(due)
            }
            None if Instant::now() < end => None,
            None => break,
        };
        if Instant::now() >= give_up {
            break; // due, but not sent before the drain ended: unfinished
        }
        let request = target.request(index + sent * connections);
        sent += 1;
        let Ok(result) = tokio::time::timeout_at(
            give_up,
            one_request(&target, request, &mut slot, &mut stats),
        )
        .await
        else {
            break; // in flight at the end: abandoned
        };
        let measured = match due {
            Some(due) => due >= measure_from,
            None => Instant::now() >= measure_from,
        };
        match result {
            Ok((status, latency)) if status == accept => {
                if measured {
                    let latency = due.map_or(latency, |due| due.elapsed());
                    let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
                    stats.latencies_ns.push(ns);
                    record_live(live.as_ref(), |i| i.latencies_ns.push(ns));
                }
            }
            Ok((status, _)) => {
                if measured {
                    *stats.non_202.entry(status).or_default() += 1;
                    record_live(live.as_ref(), |i| i.other += 1);
                }
            }
            Err(e) => {
                if measured {
                    *stats.errors.entry(format!("{e:#}")).or_default() += 1;
                    record_live(live.as_ref(), |i| i.errors += 1);
                }
                tokio::time::sleep_until(give_up.min(Instant::now() + ERROR_BACKOFF)).await;
            }
        }
    }
    stats
}

/// Prints the interval lines of --report-every whose end falls before the end of the window,
/// and returns the start of the last, unfinished interval: the caller prints that one once
/// every connection has stopped.
async fn report_intervals(
    live: Live,
    every: Duration,
    measure_from: Instant,
    end: Instant,
    schedule: Option<Schedule>,
    warmup_s: f64,
) -> Instant {
    let mut from = measure_from;
    loop {
        let to = from + every;
        if to >= end {
            return from;
        }
        tokio::time::sleep_until(to).await;
        print_interval(&live, measure_from, from, to, schedule, warmup_s);
        from = to;
    }
}

fn print_interval(
    live: &Live,
    measure_from: Instant,
    from: Instant,
    to: Instant,
    schedule: Option<Schedule>,
    warmup_s: f64,
) {
    let mut interval = std::mem::take(&mut *live.lock().unwrap_or_else(PoisonError::into_inner));
    interval.latencies_ns.sort_unstable();
    let l = &interval.latencies_ns;
    let t0 = (from - measure_from).as_secs_f64();
    let t1 = (to - measure_from).as_secs_f64();
    let mut line = json!({
        "t": round3(t1),
        "interval_s": round3(t1 - t0),
        "accepted": l.len(),
        "other": interval.other,
        "errors": interval.errors,
        "p50_ms": percentile(l, 50.0).map(|ns| round3(ms(ns))),
        "p99_ms": percentile(l, 99.0).map(|ns| round3(ms(ns))),
    });
    if let Some(s) = schedule {
        line["scheduled"] = json!(s.count_between(warmup_s + t0, warmup_s + t1));
    }
    println!("{line}");
}

/// Exact nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

#[derive(Debug)]
struct Report {
    urls: Vec<String>,
    connections: u32,
    duration: f64,
    warmup: f64,
    accepted: u64,
    latencies_ns: Vec<u64>,
    non_202: BTreeMap<u16, u64>,
    errors: BTreeMap<String, u64>,
    connects: u64,
    /// Open loop: the rate and the number of requests due in the measured window.
    open_loop: Option<(f64, u64)>,
}

impl Report {
    fn accepted_per_s(&self) -> f64 {
        self.accepted as f64 / self.duration
    }

    fn latency(&self) -> Option<[(&'static str, f64); 4]> {
        let l = &self.latencies_ns;
        Some([
            ("p50", ms(percentile(l, 50.0)?)),
            ("p90", ms(percentile(l, 90.0)?)),
            ("p99", ms(percentile(l, 99.0)?)),
            ("max", ms(*l.last()?)),
        ])
    }

    fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Open loop: requests due in the window that got no answer by the end of the drain.
    fn unfinished(&self) -> Option<u64> {
        let answered = self.accepted + self.non_202.values().sum::<u64>() + self.error_count();
        self.open_loop
            .map(|(_, scheduled)| scheduled.saturating_sub(answered))
    }

    fn to_json(&self) -> serde_json::Value {
        let latency = self.latency().map(|l| {
            l.iter()
                .map(|(k, v)| ((*k).to_owned(), json!(round3(*v))))
                .collect::<serde_json::Map<_, _>>()
        });
        json!({
            "urls": self.urls,
            "mode": if self.open_loop.is_some() { "open" } else { "closed" },
            "rate": self.open_loop.map(|(rate, _)| rate),
            "scheduled": self.open_loop.map(|(_, scheduled)| scheduled),
            "unfinished": self.unfinished(),
            "latency_from": if self.open_loop.is_some() { "scheduled" } else { "sent" },
            "connections": self.connections,
            "duration_s": self.duration,
            "warmup_s": self.warmup,
            "accepted": self.accepted,
            "accepted_per_s": round3(self.accepted_per_s()),
            "latency_ms": latency,
            "non_202_total": self.non_202.values().sum::<u64>(),
            "non_202": self.non_202.iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect::<serde_json::Map<_, _>>(),
            "errors": self.error_count(),
            "error_kinds": self.errors,
            "connects": self.connects,
        })
    }

    fn print_table(&self) {
        println!(
            "vrs-loadgen: {} connections over {} URL(s), {} s measured after {} s warm-up",
            self.connections,
            self.urls.len(),
            self.duration,
            self.warmup
        );
        for u in &self.urls {
            println!("  POST {u}");
        }
        if let Some((rate, _)) = self.open_loop {
            println!("  open loop at {rate}/s: latency counts from when each request was due");
        }
        println!();
        if let (Some((_, scheduled)), Some(unfinished)) = (self.open_loop, self.unfinished()) {
            println!("  {:<22}{:>12}", "scheduled", scheduled);
            println!("  {:<22}{:>12}", "unanswered (drain)", unfinished);
        }
        println!(
            "  {:<22}{:>12}   {:.1}/s",
            "accepted",
            self.accepted,
            self.accepted_per_s()
        );
        match self.latency() {
            Some(l) => {
                let cols: Vec<String> = l.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
                println!("  {:<22}{}", "latency accepted (ms)", cols.join("   "));
            }
            None => println!("  {:<22}{:>12}", "latency accepted (ms)", "-"),
        }
        let other: u64 = self.non_202.values().sum();
        println!("  {:<22}{:>12}", "other statuses", other);
        for (status, n) in &self.non_202 {
            println!("    {status:<20}{n:>12}");
        }
        println!("  {:<22}{:>12}", "I/O errors", self.error_count());
        for (msg, n) in &self.errors {
            println!("    {n:>8}  {msg}");
        }
        println!("  {:<22}{:>12}", "TCP connects", self.connects);
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let paths = match &args.get_paths {
        Some(file) => Some(
            std::fs::read_to_string(file)
                .with_context(|| format!("reading --get-paths {}", file.display()))?
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        ),
        None => None,
    };
    let requests = match &paths {
        Some(paths) => Requests::Get { paths },
        None => Requests::Post {
            path: &args.path,
            body: &args.body,
        },
    };
    let targets = args
        .urls
        .iter()
        .map(|u| {
            Target::with_requests(u, requests, &args.headers)
                .map(Arc::new)
                .with_context(|| format!("--url {u}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if targets.is_empty() {
        bail!("give at least one --url");
    }
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(args.warmup);
    let end = measure_from + Duration::from_secs_f64(args.duration);
    let give_up = match args.rate {
        Some(_) => end + Duration::from_secs_f64(args.drain),
        None => end,
    };
    let schedule = args.rate.map(|rate| Schedule {
        start,
        rate,
        connections: u64::from(args.connections),
    });
    let live = args
        .report_every
        .map(|_| Arc::new(Mutex::new(Interval::default())));
    let reporter = args.report_every.zip(live.clone()).map(|(every, live)| {
        tokio::spawn(report_intervals(
            live,
            Duration::from_secs_f64(every),
            measure_from,
            end,
            schedule,
            args.warmup,
        ))
    });
    let tasks: Vec<_> = (0..args.connections)
        .map(|i| {
            let target = Arc::clone(&targets[i as usize % targets.len()]);
            let plan = ConnPlan {
                index: u64::from(i),
                connections: u64::from(args.connections),
                accept: args.accept_status,
                measure_from,
                end,
                give_up,
                schedule,
                live: live.clone(),
            };
            tokio::spawn(run_connection(target, plan))
        })
        .collect();

    let mut report = Report {
        urls: targets.iter().map(|t| t.url.clone()).collect(),
        connections: args.connections,
        duration: args.duration,
        warmup: args.warmup,
        accepted: 0,
        latencies_ns: Vec::new(),
        non_202: BTreeMap::new(),
        errors: BTreeMap::new(),
        connects: 0,
        open_loop: schedule.map(|s| {
            let scheduled = s.count_between(args.warmup, args.warmup + args.duration);
            (s.rate, scheduled)
        }),
    };
    for task in tasks {
        let stats = task.await.context("a connection task failed")?;
        report.latencies_ns.extend_from_slice(&stats.latencies_ns);
        for (k, v) in stats.non_202 {
            *report.non_202.entry(k).or_default() += v;
        }
        for (k, v) in stats.errors {
            *report.errors.entry(k).or_default() += v;
        }
        report.connects += stats.connects;
    }
    report.latencies_ns.sort_unstable();
    report.accepted = report.latencies_ns.len() as u64;
    if let (Some(reporter), Some(live)) = (reporter, &live) {
        let from = reporter.await.context("the interval reporter failed")?;
        print_interval(live, measure_from, from, end, schedule, args.warmup);
    }

    if args.json {
        println!("{}", report.to_json());
    } else {
        report.print_table();
    }
    if report.accepted == 0 {
        eprintln!("vrs-loadgen: no request was accepted in the measured window");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vrs-loadgen: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 90.0), Some(90));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 50.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
    }

    /// The analytic count of due requests agrees with enumerating every connection's
    /// schedule, and the schedule interleaves the connections evenly.
    #[test]
    fn schedule_counts_what_it_sends() {
        let s = Schedule {
            start: Instant::now(),
            rate: 1000.0 / 3.0,
            connections: 7,
        };
        let gap_ns = |a: Instant, b: Instant| (a - b).as_nanos();
        assert!(gap_ns(s.due(0, 1), s.due(0, 0)).abs_diff(21_000_000) <= 1);
        assert!(gap_ns(s.due(3, 0), s.due(2, 0)).abs_diff(3_000_000) <= 1);
        assert!(gap_ns(s.due(0, 1), s.due(6, 0)).abs_diff(3_000_000) <= 1);
        for (from_s, to_s) in [(0.0, 1.0), (0.25, 1.75), (2.0, 2.003), (1.0, 1.0)] {
            let (from, to) = (
                s.start + Duration::from_secs_f64(from_s),
                s.start + Duration::from_secs_f64(to_s),
            );
            let mut n = 0;
            for conn in 0..s.connections {
                n += (0..1000)
                    .map(|k| s.due(conn, k))
                    .filter(|t| *t >= from && *t < to)
                    .count() as u64;
            }
            assert_eq!(s.count_between(from_s, to_s), n, "{from_s}..{to_s}");
        }
    }

    #[test]
    fn urls_parse() {
        let t = Target::new("http://127.0.0.1:8080", "/a", "{}", &[]).unwrap();
        assert_eq!(t.connect_to, "127.0.0.1:8080");
        assert_eq!(t.url, "http://127.0.0.1:8080/a");
        let t = Target::new("http://localhost/base/", "/a", "{}", &[]).unwrap();
        assert_eq!(t.connect_to, "localhost:80");
        assert_eq!(t.url, "http://localhost/base/a");
        let t = Target::new("http://[::1]:9000/", "/a", "xy", &[]).unwrap();
        assert_eq!(t.connect_to, "[::1]:9000");
        let req = String::from_utf8(t.request(7).to_vec()).unwrap();
        assert!(req.starts_with("POST /a HTTP/1.1\r\nHost: [::1]:9000\r\n"));
        assert!(req.ends_with("Content-Length: 2\r\n\r\nxy"));
        let paths = ["/v/1".to_owned(), "/v/2".to_owned(), "/v/3".to_owned()];
        let get = Requests::Get { paths: &paths };
        let t = Target::with_requests("http://h:1/api", get, &[]).unwrap();
        assert_eq!(t.url, "http://h:1/api/v/1 (and 2 more paths)");
        let req = String::from_utf8(t.request(4).to_vec()).unwrap();
        assert!(
            req.starts_with("GET /api/v/2 HTTP/1.1\r\nHost: h:1\r\n"),
            "{req}"
        );
        assert!(
            req.ends_with("\r\n\r\n") && !req.contains("Content-"),
            "{req}"
        );
        let none = Requests::Get { paths: &[] };
        assert!(Target::with_requests("http://h:1", none, &[]).is_err());
        assert!(Target::new("https://x", "/a", "", &[]).is_err());
        assert!(Target::new("http://", "/a", "", &[]).is_err());
    }

    #[test]
    fn status_lines_parse() {
        assert_eq!(
            parse_status_line(b"HTTP/1.1 202 Accepted\r\n").unwrap(),
            ("HTTP/1.1".to_owned(), 202)
        );
        assert!(parse_status_line(b"garbage\r\n").is_err());
    }

    /// A tiny server: two responses on one keep-alive connection (one chunked), then close;
    /// the client must reconnect for the third request.
    #[tokio::test]
    async fn keep_alive_chunked_and_reconnect() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            for _ in 0..2 {
                let (s, _) = listener.accept().await.unwrap();
                let mut s = BufReader::new(s);
                let responses: &[&[u8]] = &[
                    b"HTTP/1.1 202 Accepted\r\ncontent-length: 5\r\n\r\nhello",
                    b"HTTP/1.1 503 Busy\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                ];
                for r in responses {
                    // Read one request: request line, headers, then the Content-Length body.
                    s.read_until(b'\n', &mut Vec::new()).await.unwrap();
                    let head = read_headers(&mut s).await.unwrap();
                    discard(&mut s, head.content_length.unwrap()).await.unwrap();
                    s.get_mut().write_all(r).await.unwrap();
                }
            }
        });
        let target = Target::new(&format!("http://{addr}"), "/x", "{}", &[]).unwrap();
        let mut slot = None;
        let mut stats = ConnStats::default();
        let mut statuses = Vec::new();
        for _ in 0..4 {
            let request = target.request(0);
            let (status, _) = one_request(&target, request, &mut slot, &mut stats)
                .await
                .unwrap();
            statuses.push(status);
        }
        assert_eq!(statuses, [202, 503, 202, 503]);
        assert_eq!(stats.connects, 2);
        server.await.unwrap();
    }

    /// Open loop against a server that answers 202 at once: every request due in the window
    /// is answered (the drain gives the last ones time), and the interval reporter hands back
    /// where the last interval starts.
    #[tokio::test]
    async fn open_loop_accounts_for_every_due_request() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (s, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    let mut s = BufReader::new(s);
                    loop {
                        let mut line = Vec::new();
                        if s.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        let head = read_headers(&mut s).await.unwrap();
                        discard(&mut s, head.content_length.unwrap()).await.unwrap();
                        s.get_mut()
                            .write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n")
                            .await
                            .unwrap();
                    }
                });
            }
        });
        let target = Arc::new(Target::new(&format!("http://{addr}"), "/x", "{}", &[]).unwrap());
        let start = Instant::now();
        let schedule = Schedule {
            start,
            rate: 400.0,
            connections: 4,
        };
        let measure_from = start + Duration::from_millis(100);
        let end = measure_from + Duration::from_millis(300);
        let live: Live = Arc::default();
        let reporter = tokio::spawn(report_intervals(
            Arc::clone(&live),
            Duration::from_millis(200),
            measure_from,
            end,
            Some(schedule),
            0.1,
        ));
        let tasks: Vec<_> = (0..4)
            .map(|index| {
                let plan = ConnPlan {
                    index,
                    connections: 4,
                    accept: 202,
                    measure_from,
                    end,
                    give_up: end + Duration::from_secs(5),
                    schedule: Some(schedule),
                    live: Some(Arc::clone(&live)),
                };
                tokio::spawn(run_connection(Arc::clone(&target), plan))
            })
            .collect();
        let mut answered = 0;
        for t in tasks {
            let stats = t.await.unwrap();
            assert!(stats.errors.is_empty(), "{:?}", stats.errors);
            assert!(stats.non_202.is_empty());
            assert!(stats.connects <= 1);
            answered += stats.latencies_ns.len() as u64;
        }
        let scheduled = schedule.count_between(0.1, 0.4);
        assert_eq!(scheduled, 120);
        assert_eq!(answered, scheduled);
        assert_eq!(
            reporter.await.unwrap(),
            measure_from + Duration::from_millis(200)
        );
    }
}
