//! `vrs verify` against a live `vrs serve`, and against a server that hands out tampered data:
//! every honest game passes every step; one flipped byte in y, π, the bets root or the audit
//! path, or a changed payout, fails the step that checks it, by name, with exit status 1.

use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(60);

fn vrs_verify(server: &str, game_id: &str, json: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
    cmd.args(["verify", game_id, "--server", server]);
    if json {
        cmd.arg("--json");
    }
    cmd.output().expect("runs vrs verify")
}

/// The "operator" that lies: an HTTP proxy in front of `upstream` that passes every GET on
/// and lets `tamper` change the JSON of the answer (given the request path) before handing it
/// out. Runs until the test process ends; returns its URL.
fn tampering_proxy(
    upstream: &str,
    tamper: impl Fn(&str, &mut Value) + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let upstream = upstream.to_owned();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
            // The rest of the request head; a GET has no body.
            let mut line = String::new();
            while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                line.clear();
            }
            let (status, mut body) = match ureq::get(&format!("{upstream}{path}")).call() {
                Ok(r) => (200, r.into_json::<Value>().unwrap_or(Value::Null)),
                Err(ureq::Error::Status(code, r)) => {
                    (code, r.into_json::<Value>().unwrap_or(Value::Null))
                }
                Err(_) => (502, json!({"error": "upstream unreachable"})),
            };
            if status == 200 {
                tamper(&path, &mut body);
            }
            let text = body.to_string();
            let mut out = &stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    url
}

/// Flips the lowest bit of the last byte of the hex string at `pointer`.
fn flip(v: &mut Value, pointer: &str) {
    let s = v
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("{pointer} missing"));
    let hex_str = s.as_str().expect("hex string").to_owned();
    let mut bytes = hex::decode(&hex_str).expect("hex");
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    *s = json!(hex::encode(bytes));
}

/// Places a dice bet, a Sic Bo bet and a raw RNG request and waits for their verifications.
fn resolved_games(server: &Server) -> Vec<(String, Value)> {
    let mut ids = Vec::new();
    for (path, body) in [
        (
            "/api/v1/games/dice/bet",
            json!({"bet_type": "over7", "amount": 2.5, "player_seed": "p"}),
        ),
        (
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "total", "target": 10, "amount": 1}),
        ),
        ("/api/v1/rng/generate", json!({"client_seed": "c"})),
    ] {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 202, "{path}: {r}");
        ids.push(r["game_id"].as_str().expect("game_id").to_owned());
    }
    ids.into_iter()
        .map(|id| {
            let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
            (id, v)
        })
        .collect()
}

#[test]
fn honest_games_pass_and_every_tampering_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let games = resolved_games(&server);
    for (id, _) in &games {
        let out = vrs_verify(&server.url, id, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{id}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("verified"), "{text}");
        for step in [
            "bet_leaf",
            "merkle_inclusion",
            "epoch_chain",
            "epoch_input",
            "vdf_proof",
            "rng_value",
        ] {
            assert!(
                text.lines()
                    .any(|l| l.starts_with("ok") && l.contains(step)),
                "{id}: no passing {step} line in\n{text}"
            );
        }
    }
    let (id, honest) = &games[0];
    assert_eq!(honest["verified"], true);
    // The JSON report of an honest game: every step passed.
    let out = vrs_verify(&server.url, id, true);
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(report["verified"], true, "{report}");
    assert!(report["steps"].as_array().is_some_and(|s| s.len() >= 7));

    // One change at a time, served by a lying server; the step that must catch it.
    type Tamper = Box<dyn Fn(&mut Value) + Send + Sync>;
    let cases: Vec<(&str, &str, Tamper)> = vec![
        ("y", "vdf_proof", Box::new(|v| flip(v, "/proof/y"))),
        ("pi", "vdf_proof", Box::new(|v| flip(v, "/proof/pi"))),
        (
            "bets root",
            "merkle_inclusion",
            Box::new(|v| flip(v, "/proof/bets_root")),
        ),
        (
            "audit path",
            "merkle_inclusion",
            Box::new(|v| {
                if v["proof"]["audit_path"]
                    .as_array()
                    .is_some_and(|a| a.is_empty())
                {
                    // A one-leaf tree has no path: a path where there should be none fails too.
                    v["proof"]["audit_path"] = json!([hex::encode([7u8; 32])]);
                } else {
                    flip(v, "/proof/audit_path/0");
                }
            }),
        ),
        (
            "payout",
            "payout",
            Box::new(|v| {
                let step = v["replay_steps"]
                    .as_array_mut()
                    .and_then(|s| s.iter_mut().find(|s| s["action"] == "bet_evaluated"))
                    .expect("a bet_evaluated step");
                let payout = step["payout"].as_str().expect("payout").to_owned();
                step["payout"] = json!(if payout == "0.00" { "5.00" } else { "0.00" });
            }),
        ),
    ];
    for (what, step, tamper) in cases {
        let url = tampering_proxy(&server.url, move |path, v| {
            if path.starts_with("/api/v1/verify/") {
                tamper(v);
            }
        });
        let out = vrs_verify(&url, id, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "tampered {what}: {text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("FAIL") && l.contains(step)),
            "tampered {what}: no failing {step} line in\n{text}"
        );
        assert!(text.contains("NOT verified"), "{text}");
    }
}

#[test]
fn unknown_games_and_unreachable_servers_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let out = vrs_verify(&server.url, "0123456789abcdef0123456789abcdef", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such game"));
    drop(server);
    // Nothing listens on port 9 of the loopback.
    let out = vrs_verify(
        "http://127.0.0.1:9",
        "0123456789abcdef0123456789abcdef",
        false,
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn audit_checks_a_range_of_epochs_and_names_a_tampered_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let games = resolved_games(&server);
    let last = games
        .iter()
        .filter_map(|(_, v)| v["proof"]["vdfEpoch"].as_u64())
        .max()
        .expect("an epoch");
    let audit = |url: &str| {
        Command::new(env!("CARGO_BIN_EXE_vrs"))
            .args([
                "audit",
                "--server",
                url,
                "--from",
                "1",
                "--to",
                &last.to_string(),
            ])
            .output()
            .expect("runs vrs audit")
    };
    let out = audit(&server.url);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("verified: chain"), "{text}");

    // y of the first game's epoch, one bit flipped: its proof fails, and so does the next
    // epoch's chain link when the range has one.
    let bad = games[0].1["proof"]["vdfEpoch"].as_u64().expect("epoch");
    let target = format!("/api/v1/epochs/{bad}");
    let url = tampering_proxy(&server.url, move |path, v| {
        if path == target {
            flip(v, "/y");
        }
    });
    let out = audit(&url);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("FAIL epoch {bad} vdf_proof")),
        "no failing proof of epoch {bad} in\n{text}"
    );
    if bad < last {
        assert!(
            text.contains(&format!("FAIL epoch {} epoch_chain", bad + 1)),
            "{text}"
        );
    }
}
