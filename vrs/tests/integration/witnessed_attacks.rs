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
//!   epoch's late commitment is refused, and its games, served with the epoch's own outcome
//!   (what the stall was for: an honest server moves them on), fail `witnessed` everywhere;
//! - and the operator's other attacks, each in its own test below: an understated rate, a
//!   lagging clock, a fork served to one client, an output held back (y_p chosen late), and
//!   the witnesses down (void epochs' games moved to a witnessed one).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use vrs_protocol::tlog::note::LogSigner;

use crate::server::Server;
use crate::witness::{start_witnesses, WitnessProc};

pub(crate) const SEED: [u8; 32] = [33; 32];
pub(crate) const ORIGIN: &str = "vrs.test/attacked";
/// The witnesses' δ and the verifiers'.
pub(crate) const DELTA_MS: &str = "1000";
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

pub(crate) struct Operator {
    pub(crate) server: Server,
    pub(crate) policy: PathBuf,
    /// S of the server's own check and of every verifier.
    max_rate: String,
    /// The witnesses' vkeys and URLs, as pushed to (a fork pushes to the same).
    witnesses: Vec<(String, String)>,
    _witnesses: Vec<WitnessProc>,
    _dirs: Vec<tempfile::TempDir>,
    _proxies: Vec<DelayProxy>,
}

/// What the test-only operator does to its own epochs (none: honest).
#[derive(Default, Clone, Copy)]
pub(crate) struct Attack {
    /// Every push reaches the witnesses this late (held back while it grinds).
    pub(crate) withhold: Option<Duration>,
    /// Its clock runs this many seconds behind real time (libfaketime).
    pub(crate) clock_lag_s: Option<u32>,
    /// Every plan declares this squaring rate instead of the measured one (feature testkit).
    pub(crate) declared_rate: Option<&'static str>,
    /// The log holds each epoch's output back this long once the server has it (testkit).
    pub(crate) held_output_ms: Option<u64>,
    /// S, for the server's check and every verifier (default [`MAX_RATE`]).
    pub(crate) max_rate: Option<&'static str>,
    /// The log gets a second commitment of this epoch (testkit).
    pub(crate) second_commitment_of: Option<u64>,
    /// The witnesses are plain C2SP ones (append-only only: no application rules).
    pub(crate) plain_witnesses: bool,
    /// A void epoch's games keep its own outcome instead of moving on (testkit): what an
    /// operator that withheld, stalled or forked an epoch to choose its outcome must serve.
    pub(crate) keep_void_outcomes: bool,
    /// Anchors on the EVM node at this URL, from the test account (`evm::KEY`), a batch every
    /// two epochs (not an attack: what the anchor attacks need).
    pub(crate) anchor_rpc: Option<&'static str>,
}

/// The free port of a loopback URL for a server about to start.
fn free_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// libfaketime's multithreaded preload library (Debian's `libfaketime`, which
/// scripts/install-deps installs).
fn libfaketime() -> PathBuf {
    std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join("faketime/libfaketimeMT.so.1"))
        .chain([PathBuf::from("/usr/lib/faketime/libfaketimeMT.so.1")])
        .find(|p| p.exists())
        .expect("libfaketime is missing: scripts/install-deps installs Debian's libfaketime")
}

/// `vrs serve` on `url` with the test's log key, pushing to `witnesses` (vkey, URL).
fn serve(data: &Path, url: &str, witnesses: &[(String, String)], attack: Attack) -> Server {
    std::fs::write(data.join("log.key"), format!("{}\n", hex::encode(SEED))).unwrap();
    let mut flags: Vec<String> = ["--modulus", "test512", "--epoch-ms", "1000"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    flags.extend(["--addr".into(), url.trim_start_matches("http://").into()]);
    flags.extend(["--log-origin".into(), ORIGIN.into()]);
    flags.extend([
        "--max-rate".into(),
        attack.max_rate.unwrap_or(MAX_RATE).into(),
    ]);
    if let Some(r) = attack.declared_rate {
        flags.extend(["--testkit-declared-rate".into(), r.into()]);
    }
    if let Some(ms) = attack.held_output_ms {
        flags.extend(["--testkit-held-output-ms".into(), ms.to_string()]);
    }
    if let Some(e) = attack.second_commitment_of {
        flags.extend(["--testkit-second-commitment-of".into(), e.to_string()]);
    }
    if attack.keep_void_outcomes {
        flags.push("--testkit-keep-void-outcomes".into());
    }
    for (vkey, to) in witnesses {
        flags.extend(["--witness".into(), format!("{vkey} {to}")]);
    }
    let mut env: Vec<(&str, String)> = Vec::new();
    if let Some(rpc) = attack.anchor_rpc {
        flags.extend(["--anchor-rpc-url".into(), rpc.into()]);
        flags.extend(["--anchor-every".into(), "2".into()]);
        env.push(("VRS_ANCHOR_PRIVATE_KEY", crate::evm::KEY.into()));
    }
    if let Some(lag) = attack.clock_lag_s {
        env.push(("LD_PRELOAD", libfaketime().display().to_string()));
        env.push(("FAKETIME", format!("-{lag}")));
        // Only the wall clock lags: timers and rate measurements stay true.
        env.push(("FAKETIME_DONT_FAKE_MONOTONIC", "1".into()));
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start_env(data, &flags, &env)
}

/// `vrs serve` with three witnesses, each reached through a proxy delaying pushes by
/// `attack.withhold` (none: direct); the policy file names the log and the three, quorum 2.
pub(crate) fn operator(data: &Path, attack: Attack) -> Operator {
    let log_vkey = LogSigner::new(ORIGIN, ed25519_dalek::SigningKey::from_bytes(&SEED))
        .unwrap()
        .vkey();
    let url = free_url();
    let log_arg = if attack.plain_witnesses {
        log_vkey.clone()
    } else {
        format!("{log_vkey} {url}/log/")
    };
    let (ws, dirs): (Vec<WitnessProc>, Vec<_>) =
        start_witnesses(3, &log_arg, DELTA_MS.parse().unwrap())
            .into_iter()
            .unzip();
    let proxies: Vec<DelayProxy> = match attack.withhold {
        Some(d) => ws.iter().map(|w| DelayProxy::start(&w.url, d)).collect(),
        None => Vec::new(),
    };
    let pushed: Vec<(String, String)> = ws
        .iter()
        .enumerate()
        .map(|(i, w)| {
            (
                w.vkey.clone(),
                proxies.get(i).map_or(&w.url, |p| &p.url).clone(),
            )
        })
        .collect();
    let server = serve(data, &url, &pushed, attack);
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
        max_rate: attack.max_rate.unwrap_or(MAX_RATE).to_owned(),
        witnesses: ws.iter().map(|w| (w.vkey.clone(), w.url.clone())).collect(),
        _witnesses: ws,
        _dirs: dirs,
        _proxies: proxies,
    }
}

/// A second `vrs serve` of the same operator (its log key and origin, its own store: a
/// different history) pushing to the same witnesses: the view it serves to one client.
fn fork_of(op: &Operator, data: &Path) -> Operator {
    Operator {
        server: serve(
            data,
            &free_url(),
            &op.witnesses,
            Attack {
                keep_void_outcomes: true,
                ..Attack::default()
            },
        ),
        policy: op.policy.clone(),
        max_rate: op.max_rate.clone(),
        witnesses: op.witnesses.clone(),
        _witnesses: Vec::new(),
        _dirs: Vec::new(),
        _proxies: Vec::new(),
    }
}

/// The log's latest checkpoint (`GET /log/checkpoint`): its size and how many witnesses
/// cosigned it.
fn latest_checkpoint(server: &Server) -> (u64, usize) {
    let text = ureq::get(&format!("{}/log/checkpoint", server.url))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    let size = text.lines().nth(1).and_then(|l| l.parse().ok()).unwrap();
    (size, text.matches("\n— w.test/").count())
}

/// Waits until a checkpoint at least as large as the log is now is cosigned by two
/// witnesses (the backlog after an outage was taken), or fails after 30 s.
fn wait_until_caught_up(server: &Server) {
    let (now, _) = latest_checkpoint(server);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (size, cosigners) = latest_checkpoint(server);
        if size >= now && cosigners >= 2 {
            return;
        }
        assert!(Instant::now() < deadline, "the witnesses never caught up");
        std::thread::sleep(Duration::from_millis(200));
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

pub(crate) fn bet(server: &Server, seed: &str) -> (String, u64) {
    let (status, r) = server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "over7", "amount": 1, "player_seed": seed}),
    );
    assert_eq!(status, 202, "{r}");
    let e = r["resolves_at_epoch"].as_u64().unwrap();
    (r["game_id"].as_str().unwrap().to_owned(), e)
}

/// An honest game whose epoch the server's own check finds witnessed in time: the first of
/// three bets that is. On a loaded machine an honest epoch can miss the test's δ of 1 s (its
/// plan pushed late), and is then void for every verifier, as it should be; the attacks
/// above miss it by seconds, every time.
fn honest_game(op: &Operator, seed: &str) -> (String, u64) {
    let mut last = Value::Null;
    for i in 0..3 {
        let (id, e) = bet(&op.server, &format!("{seed} {i}"));
        let v = server_check(&op.server, &id, None);
        if check_of(&v, "witnessed")["passed"] == true {
            return (id, e);
        }
        last = v;
    }
    panic!("three honest epochs in a row not witnessed in time: {last}");
}

/// The server's verification once its checks settle (the witnesses' cosignatures of the
/// commitment come a moment after the close): polls until `witnessed` passes (`why`: None)
/// or fails with a detail holding `why`, or gives the last answer after 30 s.
fn server_check(server: &Server, id: &str, why: Option<&str>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), Duration::from_secs(60));
        let c = check_of(&v, "witnessed");
        let settled = match why {
            None => c["passed"] == true,
            Some(w) => c["passed"] == false && c["detail"].as_str().unwrap_or("").contains(w),
        };
        if settled || Instant::now() > deadline {
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

pub(crate) fn step_of<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step {name}: {report}"))
}

pub(crate) fn witness_flags(op: &Operator) -> Vec<String> {
    vec![
        "--witness-policy".into(),
        op.policy.display().to_string(),
        "--max-rate".into(),
        op.max_rate.clone(),
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
pub(crate) fn report_of(out: &std::process::Output, who: &str) -> (Option<i32>, Value) {
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "{who} printed no JSON: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), report)
}

pub(crate) fn repo() -> PathBuf {
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

/// Every verifier given the policy says `witnessed` passes for game `id` (epoch `e`).
fn every_verifier_passes(op: &Operator, id: &str, e: u64) {
    every_verifier_says(op, id, e, None, "honest");
}

/// Every verifier given the policy says `witnessed` `passes` for game `id` (epoch `e`), or
/// fails it (`why`: Some) with a detail holding `why`.
fn every_verifier_says(op: &Operator, id: &str, e: u64, why: Option<&str>, what: &str) {
    let passes = why.is_none();
    let explains = |detail: &Value| why.is_none_or(|w| detail.as_str().unwrap_or("").contains(w));
    let v = server_check(&op.server, id, why);
    let check = check_of(&v, "witnessed");
    assert_eq!(check["passed"], passes, "{what}: server {v}");
    assert!(explains(&check["detail"]), "{what}: server {check}");
    assert_eq!(v["verified"], passes, "{what}: server {v}");
    let (code, report) = vrs_verify(op, id, true);
    assert_eq!(code, Some(if passes { 0 } else { 1 }), "{what}: {report}");
    let step = step_of(&report, "witnessed");
    assert_eq!(step["passed"], passes, "{what}: {report}");
    assert!(explains(&step["detail"]), "{what}: {step}");
    let (code, text) = vrs_audit(op, e, e);
    assert_eq!(code, Some(if passes { 0 } else { 1 }), "{what}: {text}");
    let line = format!("FAIL epoch {e} witnessed");
    assert_eq!(text.contains(&line), !passes, "{what}: {text}");
    if let Some(w) = why {
        assert!(
            text.lines().any(|l| l.contains(&line) && l.contains(w)),
            "{what}: {text}"
        );
    }
    let (code, report) = python_verify(op, id);
    assert_eq!(
        code,
        Some(if passes { 0 } else { 1 }),
        "{what}: Python {report}"
    );
    let step = step_of(&report, "witnessed");
    assert_eq!(step["status"] == "ok", passes, "{what}: Python {report}");
    assert!(explains(&step["detail"]), "{what}: Python {step}");
    let (code, report) = typescript_verify(op, id);
    assert_eq!(
        code,
        Some(if passes { 0 } else { 1 }),
        "{what}: TypeScript {report}"
    );
    let step = step_of(&report, "witnessed");
    assert_eq!(step["passed"], passes, "{what}: TypeScript {report}");
    assert!(explains(&step["detail"]), "{what}: TypeScript {step}");
}

#[test]
fn an_honest_operator_passes_and_a_staged_stall_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    // The stalling operator serves the stalled epoch's own outcome (an honest one moves its
    // games on: the witnesses-down test below).
    let op = operator(
        data.path(),
        Attack {
            keep_void_outcomes: true,
            ..Attack::default()
        },
    );
    // Past the first epochs (the witnesses' first contact cosigns them with a later time).
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = honest_game(&op, "honest");
    every_verifier_passes(&op, &id, e);
    let v = server_check(&op.server, &id, None);
    let log = &v["proof"]["log"];
    assert_eq!(log["origin"], ORIGIN, "{v}");
    assert!(!log["commitment"].as_array().unwrap().is_empty(), "{v}");
    // Past the first epoch, p ≥ 1: the output entry of p is proven too.
    assert!(
        v["proof"]["timing"]["previous_epoch"].as_u64().unwrap() >= 1,
        "{v}"
    );
    assert!(
        !log["previous_output"].as_array().unwrap().is_empty(),
        "{v}"
    );
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
    // The stall must span the deadline by more than δ: an epoch closed at its deadline by a
    // loop that merely woke late (a loaded machine) is committed in time, and honest.
    let (stalled_id, s) = (0..5)
        .find_map(|i| {
            let (id, s) = bet(&op.server, &format!("stalled {i}"));
            let (_, open) = op.server.get(&format!("/api/v1/epochs/{s}"));
            let frozen_at = vrs_observe::clock::now_ms();
            op.server.freeze(true);
            std::thread::sleep(Duration::from_millis(4_000));
            let thawed_at = vrs_observe::clock::now_ms();
            op.server.freeze(false);
            op.server
                .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
            let (_, rec) = op.server.get(&format!("/api/v1/epochs/{s}"));
            let deadline = open["deadline_ms"].as_i64().unwrap_or(i64::MAX);
            let spanned = open["closed_at_ms"].is_null()
                && frozen_at < deadline
                && thawed_at > deadline + 1_500;
            (spanned && rec["closed_at_ms"] == rec["deadline_ms"]).then_some((id, s))
        })
        .expect("a bet in an epoch the stall made overdue");
    every_verifier_says(
        &op,
        &stalled_id,
        s,
        Some("short of the quorum"),
        "staged stall",
    );
    assert!(op.server.stop());
}

#[test]
fn an_operator_withholding_its_commitments_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    // Every push reaches the witnesses 2.5 s late: past their δ of 1 s.
    let op = operator(
        data.path(),
        Attack {
            withhold: Some(Duration::from_millis(2_500)),
            keep_void_outcomes: true,
            ..Attack::default()
        },
    );
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = bet(&op.server, "withheld");
    op.server
        .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
    every_verifier_says(&op, &id, e, Some("short of the quorum"), "withholding");
    assert!(op.server.stop());
}

/// An understated rate: every plan declares 600 squarings a second, below the verifier's S,
/// so T shrinks to about 600 (1 s epochs), which the operator's real squarer evaluates in a
/// millisecond, long before the epoch closes. `timing` (the declared rate's rule)
/// passes; `witnessed` judges T by the verifier's S and fails everywhere.
#[test]
fn an_operator_understating_its_rate_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(
        data.path(),
        Attack {
            declared_rate: Some("600"),
            ..Attack::default()
        },
    );
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = bet(&op.server, "understated");
    let v = op
        .server
        .poll_ok(&format!("/api/v1/verify/{id}"), Duration::from_secs(60));
    assert_eq!(v["proof"]["timing"]["squarings_per_second"], 600, "{v}");
    assert_eq!(check_of(&v, "timing")["passed"], true, "{v}");
    let t = v["proof"]["iterations"].as_u64().unwrap();
    assert!(t < 1_000, "T = {t}");
    let why = format!("T_e / S = {t} / 1000 allows under");
    every_verifier_says(&op, &id, e, Some(&why), "understated rate");
    assert!(op.server.stop());
}

/// Clock lag: the operator's wall clock runs 5 s behind (past the witnesses' δ of 1 s), so
/// every stamp it writes is consistent with every other and `timing` passes, but each plan
/// and commitment reaches the witnesses 5 s after its stamp: refused, and the epoch's games
/// fail `witnessed` everywhere.
#[test]
fn an_operator_with_a_lagging_clock_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(
        data.path(),
        Attack {
            clock_lag_s: Some(5),
            keep_void_outcomes: true,
            ..Attack::default()
        },
    );
    let sent = vrs_observe::clock::now_ms();
    let (status, r) = op.server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "over7", "amount": 1, "player_seed": "lagging"}),
    );
    assert_eq!(status, 202, "{r}");
    let lag = sent - r["acceptance"]["accepted_at_ms"].as_i64().unwrap();
    assert!(
        (4_000..10_000).contains(&lag),
        "the clock lags {lag} ms: {r}"
    );
    let (id, e) = (
        r["game_id"].as_str().unwrap().to_owned(),
        r["resolves_at_epoch"].as_u64().unwrap(),
    );
    op.server
        .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(60));
    let v = op
        .server
        .poll_ok(&format!("/api/v1/verify/{id}"), Duration::from_secs(60));
    assert_eq!(check_of(&v, "timing")["passed"], true, "{v}");
    every_verifier_says(&op, &id, e, Some("short of the quorum"), "clock lag");
    assert!(op.server.stop());
}

/// A fork served to one client: a second server of the same operator (its log key, its
/// origin, another store) answers that client from another history and pushes it to the same
/// witnesses, which hold the first history and refuse it. The forked client's game fails
/// `witnessed` everywhere; the other view still passes.
#[test]
fn a_fork_served_to_one_client_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(data.path(), Attack::default());
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let fork_data = tempfile::tempdir().unwrap();
    let fork = fork_of(&op, fork_data.path());
    let (forked, f) = bet(&fork.server, "forked");
    fork.server
        .poll_ok(&format!("/api/v1/games/{forked}"), Duration::from_secs(60));
    every_verifier_says(&fork, &forked, f, Some("short of the quorum"), "fork");
    let (id, e) = honest_game(&op, "the witnessed view");
    every_verifier_passes(&op, &id, e);
    assert!(fork.server.stop());
    assert!(op.server.stop());
}

/// A second commitment of one epoch in one history, as an operator that wants to show each
/// requester the record it prefers would log it, witnessed by plain C2SP witnesses (they check
/// only that the log is append-only, so they cosign it in time). A verifier of one game sees
/// one commitment proven and cannot tell; `vrs audit` replays the whole log under the
/// witnesses' rules and fails `log_history`, naming the entry.
#[test]
fn a_second_commitment_fails_log_history_in_vrs_audit() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(
        data.path(),
        Attack {
            second_commitment_of: Some(4),
            plain_witnesses: true,
            ..Attack::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while op.server.get("/api/v1/epochs/4").1["status"] != "resolved" {
        assert!(Instant::now() < deadline, "epoch 4 never resolved");
        std::thread::sleep(Duration::from_millis(200));
    }
    wait_until_caught_up(&op.server);
    let (code, text) = vrs_audit(&op, 4, 4);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("FAIL epoch 4 log_history")
                && l.contains("a second commitment for epoch 4")),
        "{text}"
    );
    // The other checks of the epoch see one commitment (the first) and have nothing to say
    // of it: `witnessed` passes unless a loaded machine pushed its plan late (an honest void).
    let others = text
        .lines()
        .filter(|l| {
            l.starts_with("FAIL ") && !l.contains(" log_history") && !l.contains(" witnessed")
        })
        .count();
    assert_eq!(others, 0, "{text}");
    assert!(op.server.stop());
}

/// An output held back: the operator logs each epoch's output (y_e's hash) 8 s after it has
/// y_e, as one that keeps y_p open while it evaluates candidates of the epoch that takes it,
/// to show each client the y_p it prefers. Every other entry is prompt: plans, commitments and
/// `timing` pass. Plans declare 200 000 squarings a second (so T ≈ 190 000, whatever this CPU)
/// and the verifiers' S is 30 000, so T_e / S ≈ 6.3 s: an honest epoch's inputs are all fixed
/// within about 3 s of its opening, the held output 9 s or more after it.
#[test]
fn an_operator_holding_back_an_output_fails_witnessed_everywhere() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(
        data.path(),
        Attack {
            declared_rate: Some("200000"),
            held_output_ms: Some(8_000),
            max_rate: Some("30000"),
            ..Attack::default()
        },
    );
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    let (id, e) = bet(&op.server, "its y_p held back");
    let v = op
        .server
        .poll_ok(&format!("/api/v1/verify/{id}"), Duration::from_secs(60));
    assert_eq!(check_of(&v, "timing")["passed"], true, "{v}");
    let p = v["proof"]["timing"]["previous_epoch"].as_u64().unwrap();
    assert!(p >= 1, "{v}");
    let t = v["proof"]["iterations"].as_u64().unwrap();
    assert!((150_000..250_000).contains(&t), "T = {t}");
    let why = format!("output of epoch {p} at");
    every_verifier_says(&op, &id, e, Some(&why), "held output");
    // The log holds one output of p, and the proof's previous_output hashes to it.
    let v = server_check(&op.server, &id, Some(&why));
    let logged = &v["proof"]["log"]["previous_output"][0]["entry"];
    let entry =
        vrs_protocol::tlog::LogEntry::decode(&hex::decode(logged.as_str().unwrap()).unwrap())
            .unwrap();
    let y = hex::decode(v["proof"]["previous_output"].as_str().unwrap()).unwrap();
    assert_eq!(
        entry,
        vrs_protocol::tlog::LogEntry::Output(vrs_protocol::tlog::entry::OutputEntry::of(p, &y)),
        "{v}"
    );
    assert!(op.server.stop());
}

/// Witnesses down: all three stop answering (SIGSTOP) for 4 s, past their δ, while bets keep
/// coming. Every bet is accepted and held; an epoch whose commitment no quorum cosigned by its
/// deadline + δ is void, and its games move on to a later epoch, until one is witnessed: once
/// the witnesses answer again, every game resolves and passes every verifier with the policy,
/// the void epochs' games as moved games (`moved`), and the log goes on (docs/PROTOCOL.md §21,
/// "Voids").
#[test]
fn with_the_witnesses_down_bets_go_on_void_epochs_move_and_every_game_resolves_witnessed() {
    let data = tempfile::tempdir().unwrap();
    let op = operator(data.path(), Attack::default());
    let (_, first) = bet(&op.server, "warm-up");
    wait_for_epoch(&op.server, first + 2);
    for w in &op._witnesses {
        w.freeze(true);
    }
    let mut during = Vec::new();
    for i in 0..4 {
        during.push(bet(&op.server, &format!("during the outage {i}")));
        std::thread::sleep(Duration::from_millis(1_000));
    }
    // Held, not resolved from an epoch no witness saw in time.
    let (id, _) = &during[1];
    let (status, g) = op.server.get(&format!("/api/v1/games/{id}"));
    assert_eq!(status, 202, "a game of an unwitnessed epoch resolved: {g}");
    for w in &op._witnesses {
        w.freeze(false);
    }
    for (id, _) in &during {
        let g = op
            .server
            .poll_ok(&format!("/api/v1/games/{id}"), Duration::from_secs(90));
        assert_eq!(g["status"], "resolved", "{g}");
    }
    wait_until_caught_up(&op.server);
    let (id, e) = honest_game(&op, "after the outage");
    every_verifier_passes(&op, &id, e);
    // The epoch of the second bet opened and closed while no witness answered: void, and its
    // games resolved with the epoch they were moved to.
    let (id, e) = &during[1];
    let v = server_check(&op.server, id, None);
    assert_eq!(v["proof"]["moved_from"], *e, "{v}");
    let destination = v["proof"]["vdfEpoch"].as_u64().unwrap();
    assert!(destination > *e, "{v}");
    assert_eq!(check_of(&v, "moved")["passed"], true, "{v}");
    assert!(
        !v["proof"]["log"]["moves"].as_array().unwrap().is_empty(),
        "{v}"
    );
    crate::protocol_docs::assert_documented("20.1", "a moved game's verification", &v);
    let (_, record) = op.server.get(&format!("/api/v1/epochs/{e}"));
    crate::protocol_docs::assert_documented("20.3", "a moved epoch", &record);
    let (_, g) = op.server.get(&format!("/api/v1/games/{id}"));
    assert_eq!(g["result"]["epoch"], *e, "{g}");
    assert_eq!(g["result"]["entropy"], v["proof"]["y"], "{g}");
    every_verifier_passes(&op, id, *e);
    let (code, report) = vrs_verify(&op, id, true);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(step_of(&report, "moved")["passed"], true, "{report}");
    let (_, report) = python_verify(&op, id);
    assert_eq!(step_of(&report, "moved")["status"], "ok", "{report}");
    let (_, report) = typescript_verify(&op, id);
    assert_eq!(step_of(&report, "moved")["passed"], true, "{report}");
    assert!(op.server.stop());
}
