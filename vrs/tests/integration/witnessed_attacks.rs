//! The witnessed step against an operator that attacks its own epochs (docs/PROTOCOL.md §21),
//! with `vrs serve --log-origin` and three `vrs witness` processes on loopback, each verifier
//! given the same C2SP policy (2 of the 3):
//!
//! - honest: every verifier passes `witnessed`, and without a policy says what it trusts;
//! - withholding: the operator holds each commitment back from its witnesses (a proxy the
//!   test controls delays every push past their δ), as it would while it evaluates candidate
//!   nonces; the witnesses refuse, and `witnessed` fails in the server's report, `vrs verify`,
//!   `vrs audit`, and the Python and TypeScript verifiers;
//! - a staged stall: the operator stops (SIGSTOP) past an epoch's deadline and recovers; the
//!   epoch's late commitment is refused, and its games fail `witnessed` everywhere.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vrs_protocol::tlog::note::LogSigner;

use crate::server::Server;
use crate::witness::{start_witnesses, WitnessProc};

const SEED: [u8; 32] = [33; 32];
const ORIGIN: &str = "vrs.test/attacked";
/// The witnesses' δ and the verifiers'.
const DELTA_MS: &str = "1000";
/// S for test512 epochs of about a second: small enough that an honest epoch's T outlasts
/// the plan-to-commitment window (T is calibrated for about 0.95 s of this CPU).
const MAX_RATE: &str = "1000";

/// A TCP proxy that holds every chunk from the client `delay` before passing it on.
struct DelayProxy {
    url: String,
}

impl DelayProxy {
    fn start(target: &str, delay: Duration) -> Self {
        let target = target
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&target) else {
                    continue;
                };
                let (mut c_in, mut s_out) =
                    (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(n) = c_in.read(&mut buf) {
                        if n == 0 || {
                            std::thread::sleep(delay);
                            s_out.write_all(&buf[..n]).is_err()
                        } {
                            break;
                        }
                    }
                    let _ = s_out.shutdown(std::net::Shutdown::Write);
                });
                let (mut s_in, mut c_out) = (server, client);
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_in, &mut c_out);
                    let _ = c_out.shutdown(std::net::Shutdown::Write);
                });
            }
        });
        Self { url }
    }
}

struct Operator {
    server: Server,
    policy: PathBuf,
    _witnesses: Vec<WitnessProc>,
    _dirs: Vec<tempfile::TempDir>,
    _proxies: Vec<DelayProxy>,
}

/// `vrs serve` with three witnesses, each reached through a proxy delaying pushes by
/// `withhold` (none: direct); the policy file names the log and the three, quorum 2.
fn operator(data: &Path, withhold: Option<Duration>) -> Operator {
    std::fs::write(data.join("log.key"), format!("{}\n", hex::encode(SEED))).unwrap();
    let log_vkey = LogSigner::new(ORIGIN, ed25519_dalek::SigningKey::from_bytes(&SEED))
        .unwrap()
        .vkey();
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (ws, dirs): (Vec<WitnessProc>, Vec<_>) = start_witnesses(
        3,
        &format!("{log_vkey} {url}/log/"),
        DELTA_MS.parse().unwrap(),
    )
    .into_iter()
    .unzip();
    let proxies: Vec<DelayProxy> = match withhold {
        Some(d) => ws.iter().map(|w| DelayProxy::start(&w.url, d)).collect(),
        None => Vec::new(),
    };
    let mut flags: Vec<String> = ["--modulus", "test512", "--epoch-ms", "1000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.extend(["--addr".into(), format!("127.0.0.1:{port}")]);
    flags.extend(["--log-origin".into(), ORIGIN.into()]);
    flags.extend(["--max-rate".into(), MAX_RATE.into()]);
    for (i, w) in ws.iter().enumerate() {
        let to = proxies.get(i).map_or(&w.url, |p| &p.url);
        flags.extend(["--witness".into(), format!("{} {to}", w.vkey)]);
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(data, &flags);
    let mut policy = format!("# the test's witnesses\nlog {log_vkey}\n");
    for (i, w) in ws.iter().enumerate() {
        policy += &format!("witness W{i} {} {}\n", w.vkey, w.url);
    }
    policy += "group two 2 W0 W1 W2\nquorum two\n";
    let path = data.join("policy.txt");
    std::fs::write(&path, policy).unwrap();
    Operator {
        server,
        policy: path,
        _witnesses: ws,
        _dirs: dirs,
        _proxies: proxies,
    }
}

/// Waits until epoch `n` exists (it opened).
fn wait_for_epoch(server: &Server, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.get(&format!("/api/v1/epochs/{n}")).0 != 200 {
        assert!(Instant::now() < deadline, "epoch {n} never opened");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn bet(server: &Server, seed: &str) -> (String, u64) {
    let (status, r) = server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "over7", "amount": 1, "player_seed": seed}),
    );
    assert_eq!(status, 202, "{r}");
    let e = r["resolves_at_epoch"].as_u64().unwrap();
    (r["game_id"].as_str().unwrap().to_owned(), e)
}

/// The server's verification once its checks settle (the witnesses' cosignatures of the
/// commitment come a moment after the close): polls until `witnessed` is `want`, or gives
/// the last answer after 30 s.
fn server_check(server: &Server, id: &str, want: bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), Duration::from_secs(60));
        let passed = check_of(&v, "witnessed")["passed"] == want;
        if passed || Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn check_of<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check {name}: {v}"))
}

fn step_of<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step {name}: {report}"))
}

fn witness_flags(op: &Operator) -> Vec<String> {
    vec![
        "--witness-policy".into(),
        op.policy.display().to_string(),
        "--max-rate".into(),
        MAX_RATE.into(),
        "--delta-ms".into(),
        DELTA_MS.into(),
    ]
}

fn vrs_verify(op: &Operator, id: &str, with_policy: bool) -> (Option<i32>, Value) {
    let mut args: Vec<String> = [
        "verify",
        id,
        "--server",
        &op.server.url,
        "--group",
        "test512",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push("--json".into());
    if with_policy {
        args.extend(witness_flags(op));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(&args)
        .output()
        .unwrap();
    report_of(&out, "vrs verify")
}

fn vrs_audit(op: &Operator, from: u64, to: u64) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["audit", "--server", &op.server.url, "--group", "test512"])
        .args(["--from", &from.to_string(), "--to", &to.to_string()])
        .args(witness_flags(op))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A verifier's exit code and its JSON report (stdout).
fn report_of(out: &std::process::Output, who: &str) -> (Option<i32>, Value) {
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{who} printed no JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Python verifier's CLI, with the policy: (exit code, JSON report).
fn python_verify(op: &Operator, id: &str) -> (Option<i32>, Value) {
    let python = repo().join("clients/python/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: scripts/install-deps installs the Python client",
        python.display()
    );
    let out = Command::new(python)
        .args(["-m", "vrs_client.cli", id, "--server", &op.server.url])
        .args(["--group", "test512", "--json"])
        .args(witness_flags(op))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    report_of(&out, "the Python verifier")
}

/// The TypeScript verifier's CLI, with the policy: (exit code, JSON report).
fn typescript_verify(op: &Operator, id: &str) -> (Option<i32>, Value) {
    let bin = repo().join("clients/typescript/bin/vrs-verify.mjs");
    let out = Command::new("node")
        .arg(bin)
        .args(["--group", "test512", "--json"])
        .args(witness_flags(op))
        .args([&op.server.url, id])
        .output()
        .unwrap();
    report_of(&out, "the TypeScript verifier")
}

/// Every verifier given the policy says `witnessed` `passes` for game `id` (epoch `e`).
fn every_verifier_says(op: &Operator, id: &str, e: u64, passes: bool, what: &str) {
    let v = server_check(&op.server, id, passes);
    assert_eq!(
        check_of(&v, "witnessed")["passed"],
        passes,
        "{what}: server {v}"
    );
    assert_eq!(v["verified"], passes, "{what}: server {v}");
    let (code, report) = vrs_verify(op, id, true);
    assert_eq!(code, Some(if passes { 0 } else { 1 }), "{what}: {report}");
    assert_eq!(
        step_of(&report, "witnessed")["passed"],
        passes,
        "{what}: {report}"
    );
    if !passes {
        let detail = step_of(&report, "witnessed")["detail"].to_string();
        assert!(detail.contains("short of the quorum"), "{what}: {detail}");
    }
    let (code, text) = vrs_audit(op, e, e);
    assert_eq!(code, Some(if passes { 0 } else { 1 }), "{what}: {text}");
    assert_eq!(
        text.contains(&format!("FAIL epoch {e} witnessed")),
        !passes,
        "{what}: {text}"
    );
    let (code, report) = python_verify(op, id);
    assert_eq!(
        code,
        Some(if passes { 0 } else { 1 }),
        "{what}: Python {report}"
    );
    assert_eq!(
        step_of(&report, "witnessed")["status"] == "ok",
        passes,
        "{what}: Python {report}"
    );
    let (code, report) = typescript_verify(op, id);
    assert_eq!(
        code,
        Some(if passes { 0 } else { 1 }),
        "{what}: TypeScript {report}"
    );
    assert_eq!(
        step_of(&report, "witnessed")["passed"],
        passes,
        "{what}: TypeScript {report}"
    );
}

#[test]
fn an_honest_operator_passes_and_a_staged_stall_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(data.path(), None);
    // Past the first epochs (the witnesses' first contact cosigns them with a later time).
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = bet(&op.server, "honest");
    every_verifier_says(&op, &id, e, true, "honest");
    let v = server_check(&op.server, &id, true);
    let log = &v["proof"]["log"];
    assert_eq!(log["origin"], ORIGIN, "{v}");
    assert!(!log["commitment"].as_array().unwrap().is_empty(), "{v}");
    crate::protocol_docs::assert_documented("20.1", "a witnessed verification", &v);
    let (_, record) = op.server.get(&format!("/api/v1/epochs/{e}"));
    assert_eq!(record["log"]["origin"], ORIGIN, "{record}");
    crate::protocol_docs::assert_documented("20.3", "a witnessed epoch", &record);
    // Without a policy: no step, and the report says what is trusted.
    let (code, report) = vrs_verify(&op, &id, false);
    assert_eq!(code, Some(0), "{report}");
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap_or_default()
            .contains("trusted not to withhold"),
        "{report}"
    );

    // The staged stall: the operator stops while epoch s is open with a bet in it, past its
    // deadline, then recovers. Its commitment reaches the witnesses late: refused.
    // (A bet that landed just before a close is in an epoch that closed in time: again.)
    let (stalled_id, s) = (0..5)
        .find_map(|i| {
            let (id, s) = bet(&op.server, &format!("stalled {i}"));
            op.server.freeze(true);
            std::thread::sleep(Duration::from_millis(4_000));
            op.server.freeze(false);
            op.server
                .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
            let (_, rec) = op.server.get(&format!("/api/v1/epochs/{s}"));
            (rec["closed_at_ms"] == rec["deadline_ms"]).then_some((id, s))
        })
        .expect("a bet in an epoch the stall made overdue");
    every_verifier_says(&op, &stalled_id, s, false, "staged stall");
    assert!(op.server.stop());
}

#[test]
fn an_operator_withholding_its_commitments_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    // Every push reaches the witnesses 2.5 s late: past their δ of 1 s.
    let op = operator(data.path(), Some(Duration::from_millis(2_500)));
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = bet(&op.server, "withheld");
    op.server
        .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
    every_verifier_says(&op, &id, e, false, "withholding");
    assert!(op.server.stop());
}
