//! The public listener's guards against a real `vrs serve`: the per-client write limit (429
//! JSON with Retry-After, reads never limited, clients behind a proxy told apart), slow clients
//! (headers and bodies that never finish), CORS on public reads, and a graceful stop on
//! SIGTERM that answers the request in flight and exits 0.

use crate::evm::free_port;
use crate::notary::{header, post};
use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `vrs_http_requests_in_flight` as the metrics listener at `addr` reports it.
fn in_flight(addr: &str) -> f64 {
    let text = ureq::get(&format!("http://{addr}/metrics"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("vrs_http_requests_in_flight "))
        .expect("the gauge is exported")
        .parse()
        .unwrap()
}

fn host_port(server: &Server) -> String {
    server.url.trim_start_matches("http://").to_owned()
}

/// Reads what the server sends until it closes the connection or `limit` passes; returns the
/// text and whether it closed.
fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        stream
            .set_read_timeout(Some(
                deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            ))
            .unwrap();
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (String::from_utf8_lossy(&got).into_owned(), true)
            }
            Err(_) => break,
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), false)
}

fn rng(url: &str, extra: &[(&str, &str)]) -> (u16, Vec<(String, String)>, Value) {
    post(&format!("{url}/api/v1/rng/generate"), "{}", extra)
}

#[test]
fn writes_beyond_the_client_rate_get_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        FAST,
        &[
            "--rate-limit",
            "1",
            "--rate-limit-burst",
            "3",
            "--client-ip-header",
            "X-Forwarded-For",
        ],
    ]
    .concat();
    let server = Server::start(dir.path(), &args);
    let url = &server.url;
    // The burst passes...
    let mut accepted = Vec::new();
    for _ in 0..3 {
        let (status, _, body) = rng(url, &[]);
        assert_eq!(status, 202, "{body}");
        accepted.push(body["game_id"].as_str().unwrap().to_owned());
    }
    // ...the next write is refused, with when to come back.
    let (status, hs, body) = rng(url, &[]);
    assert_eq!(status, 429, "{body}");
    assert_eq!(header(&hs, "content-type"), Some("application/json"));
    let retry: u64 = header(&hs, "retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    assert_eq!(body["retry_after"], json!(retry));
    assert!(
        body["error"].as_str().unwrap().contains("rate limit"),
        "{body}"
    );
    // Bets count against the same client; reads are never limited.
    let (status, _, _) = post(
        &format!("{url}/api/v1/games/dice/bet"),
        &json!({"bet_type": "odd"}).to_string(),
        &[],
    );
    assert_eq!(status, 429);
    for _ in 0..20 {
        assert_eq!(server.get("/api/v1/entropy").0 / 100, 2);
    }
    // Another client behind the proxy has its own bucket; the last entry of the header is the
    // client (the one the proxy appended), whatever the client put before it.
    let (status, _, body) = rng(url, &[("X-Forwarded-For", "10.9.9.9, 198.51.100.20")]);
    assert_eq!(status, 202, "{body}");
    let (status, _, _) = rng(url, &[("X-Forwarded-For", "203.0.113.1, 198.51.100.20")]);
    assert_eq!(status, 202);
    // After Retry-After seconds the first client may write again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _, body) = rng(url, &[]);
        if status == 202 {
            accepted.push(body["game_id"].as_str().unwrap().to_owned());
            break;
        }
        assert_eq!(status, 429, "{body}");
        assert!(Instant::now() < deadline, "still limited after 10 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Everything accepted resolves; nothing refused was written.
    for id in &accepted {
        server.poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
    }
    let stats = server.poll_ok("/api/v1/stats", Duration::from_secs(5));
    assert_eq!(stats["total_games"], json!(accepted.len() + 2), "{stats}");
}

/// One HTTP/1.1 response read off `stream`: status and body (by its Content-Length).
fn read_response(stream: &mut TcpStream) -> (u16, String) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = stream.read(&mut buf).expect("a response");
        assert!(
            n > 0,
            "closed before a response: {:?}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&got[..head_end]).to_lowercase();
    let status: u16 = head[9..12].parse().unwrap();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while got.len() < head_end + length {
        let n = stream.read(&mut buf).expect("the body");
        assert!(n > 0, "closed inside a body");
        got.extend_from_slice(&buf[..n]);
    }
    (
        status,
        String::from_utf8_lossy(&got[head_end..head_end + length]).into_owned(),
    )
}

/// A client that honours Retry-After on a keep-alive connection sees only clean answers: the
/// 429 reads the refused request's body, so the connection carries the next request.
#[test]
fn a_429_leaves_a_keep_alive_connection_usable() {
    let dir = tempfile::tempdir().unwrap();
    let args = [FAST, &["--rate-limit", "1", "--rate-limit-burst", "1"]].concat();
    let server = Server::start(dir.path(), &args);
    let mut stream = TcpStream::connect(host_port(&server)).unwrap();
    // A body that arrives after its headers, as a large or slow client's does: the 429 is
    // decided before the body is there.
    let seed = "s".repeat(200);
    let body = format!(r#"{{"client_seed":"{seed}"}}"#);
    let head = format!(
        "POST /api/v1/rng/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    // Three writes through, each 429 honoured by waiting its Retry-After, all on this one
    // connection.
    let mut statuses = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while statuses.iter().filter(|s| **s == 202).count() < 3 {
        assert!(Instant::now() < deadline, "{statuses:?}");
        stream.write_all(head.as_bytes()).unwrap();
        // The late body: the limiter has decided before it arrives.
        std::thread::sleep(Duration::from_millis(100));
        stream.write_all(body.as_bytes()).unwrap();
        let (status, answer) = read_response(&mut stream);
        statuses.push(status);
        match status {
            202 => {}
            429 => {
                let v: Value = serde_json::from_str(&answer).unwrap();
                let retry = v["retry_after"].as_u64().expect("retry_after");
                std::thread::sleep(Duration::from_secs(retry));
            }
            other => panic!("{other}: {answer}"),
        }
    }
    assert!(
        statuses.contains(&429),
        "the limit was reached: {statuses:?}"
    );
}

#[test]
fn a_slow_client_cannot_hold_a_connection() {
    let dir = tempfile::tempdir().unwrap();
    let args = [FAST, &["--header-timeout", "1", "--body-timeout", "1"]].concat();
    let server = Server::start(dir.path(), &args);
    let addr = host_port(&server);

    // Headers that never finish: the connection is closed after the header timeout.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n").unwrap();
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut s, Duration::from_secs(15));
    assert!(closed, "a half-sent request head kept its connection");
    assert!(started.elapsed() >= Duration::from_millis(900));

    // A connection that sends nothing at all is closed the same way.
    let mut s = TcpStream::connect(&addr).unwrap();
    let (_, closed) = read_until_closed(&mut s, Duration::from_secs(15));
    assert!(closed, "an idle connection was kept open");

    // A body that never finishes: 408 with a JSON error, and the connection closed.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.write_all(
        b"POST /api/v1/rng/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"client_seed\":",
    )
    .unwrap();
    let (text, closed) = read_until_closed(&mut s, Duration::from_secs(15));
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("application/json"), "{text}");
    assert!(text.contains("did not arrive within"), "{text}");
    assert!(closed);
    // Nothing was written for it.
    let stats = server.poll_ok("/api/v1/stats", Duration::from_secs(5));
    assert_eq!(stats["total_games"], json!(0));

    // A prompt client on the same server is served as usual.
    let (status, _, body) = rng(&server.url, &[]);
    assert_eq!(status, 202, "{body}");
}

#[test]
fn public_reads_are_readable_from_any_origin_and_writes_are_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), FAST);
    let url = &server.url;
    for path in [
        "/api/v1/entropy",
        "/api/v1/stats",
        "/api/v1/games",
        "/api/v1/openapi.json",
    ] {
        let r = ureq::get(&format!("{url}{path}"))
            .set("Origin", "https://verifier.example")
            .call()
            .unwrap();
        assert_eq!(
            r.header("access-control-allow-origin"),
            Some("*"),
            "GET {path}"
        );
    }
    // Errors of reads too: a third-party verifier can read a 404.
    let r = ureq::get(&format!("{url}/api/v1/verify/nope"))
        .set("Origin", "https://verifier.example")
        .call();
    let Err(ureq::Error::Status(404, r)) = r else {
        panic!("expected 404")
    };
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));

    // A preflight for a read is answered; one for a write is not.
    let r = ureq::request("OPTIONS", &format!("{url}/api/v1/verify/some-game"))
        .set("Origin", "https://verifier.example")
        .set("Access-Control-Request-Method", "GET")
        .set("Access-Control-Request-Headers", "accept")
        .call()
        .unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.header("access-control-allow-methods"), Some("GET, HEAD"));
    let r = ureq::request("OPTIONS", &format!("{url}/api/v1/games/dice/bet"))
        .set("Origin", "https://evil.example")
        .set("Access-Control-Request-Method", "POST")
        .call();
    let Err(ureq::Error::Status(405, r)) = r else {
        panic!("a write preflight was answered")
    };
    assert_eq!(r.header("access-control-allow-origin"), None);
    // A plain OPTIONS is not a preflight: 405 with Allow, as for any method a path lacks.
    let r = ureq::request("OPTIONS", &format!("{url}/api/v1/entropy")).call();
    let Err(ureq::Error::Status(405, r)) = r else {
        panic!("expected 405")
    };
    assert_eq!(r.header("allow"), Some("GET,HEAD"));
    // Writes carry no CORS header.
    let (status, hs, _) = post(
        &format!("{url}/api/v1/rng/generate"),
        "{}",
        &[("Origin", "https://evil.example")],
    );
    assert_eq!(status, 202);
    assert_eq!(header(&hs, "access-control-allow-origin"), None);
    // The HTML pages keep their strict Content-Security-Policy.
    let r = ureq::get(&format!("{url}/verify")).call().unwrap();
    let csp = r.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
}

#[test]
fn sigterm_answers_the_request_in_flight_then_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let server = Server::start(
        dir.path(),
        &[FAST, &["--metrics-addr", &metrics_addr]].concat(),
    );
    let addr = host_port(&server);
    // An idle keep-alive connection must not hold the stop up.
    let mut idle = TcpStream::connect(&addr).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 1024];
    assert!(idle.read(&mut buf).unwrap() > 0);

    // A request in flight: its head and half its body are sent before the signal.
    let body = br#"{"client_seed":"in flight"}"#;
    let mut s = TcpStream::connect(&addr).unwrap();
    write!(
        s,
        "POST /api/v1/rng/generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    s.write_all(&body[..10]).unwrap();
    // The signal comes once the server is handling it (waiting for the rest of its body).
    let deadline = Instant::now() + Duration::from_secs(10);
    while in_flight(&metrics_addr) < 1.0 {
        assert!(
            Instant::now() < deadline,
            "the request never reached a handler"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let pid = server.pid();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    // Stopping means no new connections: wait until one is refused.
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(&addr).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The request in flight is finished and answered.
    s.write_all(&body[10..]).unwrap();
    let (text, _) = read_until_closed(&mut s, Duration::from_secs(10));
    assert!(text.starts_with("HTTP/1.1 202"), "{text}");
    let game_id = text
        .split("\"game_id\":\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .unwrap()
        .to_owned();
    // Exit 0 by itself (wait_exit kills it and fails here if it hangs).
    let status = server.wait_exit(Duration::from_secs(20));
    assert_eq!(status, Some(0), "exit status");
    drop(idle);

    // The answer was durable: after a restart the request resolves, and verifies.
    let server = Server::start(dir.path(), FAST);
    let done = server.poll_ok(&format!("/api/v1/games/{game_id}"), Duration::from_secs(60));
    assert_eq!(done["game_id"], json!(game_id));
    let v = server.poll_ok(
        &format!("/api/v1/verify/{game_id}"),
        Duration::from_secs(30),
    );
    assert_eq!(v["verified"], json!(true), "{v}");
}
