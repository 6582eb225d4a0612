//! The timing rule against a real `vrs serve` (docs/PROTOCOL.md §10, "Timing"): in every
//! configuration the server accepts, every epoch's games are fixed before the output of the
//! epoch before it exists and within the bound of its declared margin; the predict-and-re-roll
//! bettor of issue 26 never holds a prediction before its epoch closes, even with infinitely
//! fast squarings; settings too short for their epoch are refused; and a record that breaks
//! the rule fails the step `timing` in the server's check, `vrs verify` and `vrs audit`.

use crate::server::{Server, FAST};
use num_bigint::BigUint;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use vrs_engine::epoch::{epoch_seed_v2, Timing};
use vrs_engine::group::Modulus;
use vrs_engine::timing::{check, effective_margin_centi, Predecessor};

const RESOLVE: Duration = Duration::from_secs(120);

/// Waits until at least `n` epochs are resolved; returns the last resolved epoch.
fn wait_resolved(server: &Server, n: u64) -> u64 {
    let deadline = Instant::now() + RESOLVE;
    loop {
        let (_, stats) = server.get("/api/v1/stats");
        if let Some(last) = stats["epoch"]["last_resolved"].as_u64() {
            if last >= n {
                return last;
            }
        }
        assert!(Instant::now() < deadline, "fewer than {n} epochs: {stats}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until the epoch open for bets is later than `e`.
fn wait_open_after(server: &Server, e: u64) {
    let deadline = Instant::now() + RESOLVE;
    loop {
        let (_, stats) = server.get("/api/v1/stats");
        if stats["epoch"]["current"].as_u64() > Some(e) {
            return;
        }
        assert!(Instant::now() < deadline, "epoch {e} never closed: {stats}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Epoch records 1..=last as the server publishes them.
fn records(server: &Server, last: u64) -> Vec<Value> {
    (1..=last)
        .map(|n| {
            let (status, r) = server.get(&format!("/api/v1/epochs/{n}"));
            assert_eq!(status, 200, "{r}");
            r
        })
        .collect()
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// The committed timing of a published version-2 epoch record.
fn timing_of(rec: &Value) -> Timing {
    Timing {
        previous: u(rec, "previous_epoch"),
        iterations: u(rec, "iterations"),
        opened_at_ms: u(rec, "opened_at_ms"),
        closed_at_ms: u(rec, "closed_at_ms"),
        margin_centi: (rec["security_margin"].as_f64().expect("margin") * 100.0).round() as u32,
        squarings_per_second: u(rec, "squarings_per_second"),
    }
}

/// The structure every run must have, read from the published times alone: each epoch closed
/// no later than y of the epoch before was stored, by its deadline, and within the bound of
/// the margin it declares (which is the one asked for), its input taken from e − lanes.
fn assert_rule_holds(recs: &[Value], margin_centi: u32, lanes: u64, what: &str) {
    for rec in recs {
        let e = u(rec, "epoch");
        assert_eq!(rec["version"], 2, "{what}: epoch {e}");
        let t = timing_of(rec);
        assert_eq!(t.margin_centi, margin_centi, "{what}: epoch {e}");
        assert_eq!(t.previous, e.saturating_sub(lanes), "{what}: epoch {e}");
        assert!(
            t.closed_at_ms as i64 <= rec["deadline_ms"].as_i64().expect("deadline"),
            "{what}: epoch {e} closed after its deadline: {rec}"
        );
        if e >= 2 {
            let before = &recs[e as usize - 2];
            assert!(
                t.closed_at_ms <= u(before, "resolved_at_ms"),
                "{what}: epoch {e} closed at {} after y of epoch {} was stored at {}",
                t.closed_at_ms,
                e - 1,
                u(before, "resolved_at_ms")
            );
        }
        let pred = (t.previous >= 1).then(|| {
            let p = &recs[t.previous as usize - 1];
            Predecessor {
                closed_at_ms: u(p, "closed_at_ms"),
                iterations: u(p, "iterations"),
            }
        });
        // The operator as an attacker, A times faster than the declared rate and with any
        // number of machines: its first candidate y_e for a bet set e could still take is
        // ready no sooner than y_p (from p's close) and then T_e more squarings, counted here
        // independently of the engine's rule, in seconds of its squarer.
        let a = f64::from(t.margin_centi) / 100.0;
        let squarings = |n: u64| n as f64 / (a * t.squarings_per_second as f64) * 1000.0;
        let start = match pred {
            Some(p) => (t.opened_at_ms as f64).max(p.closed_at_ms as f64 + squarings(p.iterations)),
            None => t.opened_at_ms as f64,
        };
        let first_candidate = start + squarings(t.iterations);
        assert!(
            first_candidate >= t.closed_at_ms as f64 - 1e-6,
            "{what}: an operator {a}x as fast had a candidate for epoch {e} at \
             {first_candidate:.1} ms, before its close at {} ms",
            t.closed_at_ms
        );
        check(e, &t, pred).unwrap_or_else(|err| panic!("{what}: epoch {e}: {err}"));
        assert!(effective_margin_centi(&t, pred) >= u64::from(margin_centi));
    }
}

/// `vrs audit` over epochs 1..=last of `server` in `group`: its exit code and output.
fn audit(server: &Server, last: u64, group: &str) -> (Option<i32>, String) {
    audit_with(server, last, group, &[])
}

fn audit_with(server: &Server, last: u64, group: &str, extra: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["audit", "--server", &server.url, "--from", "1"])
        .args(["--to", &last.to_string(), "--group", group])
        .args(extra)
        .output()
        .expect("runs vrs audit");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

fn vrs_verify(server: &Server, id: &str, group: &str) -> (Option<i32>, Value) {
    vrs_verify_with(server, id, group, &[])
}

fn vrs_verify_with(server: &Server, id: &str, group: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args([
            "verify",
            id,
            "--server",
            &server.url,
            "--group",
            group,
            "--json",
        ])
        .args(extra)
        .output()
        .expect("runs vrs verify");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report)
}

fn step<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step {name}: {report}"))
}

fn bet(server: &Server, seed: &str) -> (String, u64) {
    let (status, r) = server.post(
        "/api/v1/games/dice/bet",
        &json!({"bet_type": "over7", "amount": 1, "player_seed": seed}),
    );
    assert_eq!(status, 202, "{r}");
    (
        r["game_id"].as_str().expect("game_id").to_owned(),
        u(&r, "resolves_at_epoch"),
    )
}

/// Runs `flags` for at least `epochs` epochs with bets along the way, then checks the rule on
/// every epoch, that every game verifies, and that `vrs audit` agrees.
fn run_and_check(flags: &[&str], group: &str, margin_centi: u32, lanes: u64, epochs: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), flags);
    let what = flags.join(" ");
    let (_, info) = server.get("/");
    let security = &info["vdf_engine"]["security"];
    assert_eq!(
        security["margin"].as_f64(),
        Some(f64::from(margin_centi) / 100.0)
    );
    assert_eq!(security["vdf_threads"], lanes, "{what}: {info}");
    // A bet in each epoch until enough have resolved.
    let mut games = Vec::new();
    let deadline = Instant::now() + RESOLVE;
    while wait_resolved(&server, 0) < epochs || games.len() < 3 {
        assert!(Instant::now() < deadline, "{what}: epochs never resolved");
        let (id, e) = bet(&server, &format!("s{}", games.len()));
        games.push(id);
        wait_open_after(&server, e);
    }
    for id in &games {
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{what}: {v}");
    }
    let last = wait_resolved(&server, epochs);
    assert_rule_holds(&records(&server, last), margin_centi, lanes, &what);
    let (code, out) = audit(&server, last, group);
    assert_eq!(code, Some(0), "{what}: {out}");
    assert!(out.contains("timing"), "{out}");
}

#[test]
fn every_epoch_closes_before_the_output_before_it_at_the_smallest_settings() {
    run_and_check(
        &["--modulus", "test512", "--epoch-ms", "20"],
        "test512",
        150,
        1,
        40,
    );
}

#[test]
fn every_epoch_keeps_the_rule_at_the_default_margin_and_at_margin_1() {
    run_and_check(FAST, "test512", 150, 1, 8);
    let margin_1 = [
        "--modulus",
        "test512",
        "--epoch-ms",
        "100",
        "--security-margin",
        "1",
    ];
    run_and_check(&margin_1, "test512", 100, 1, 10);
}

/// Above 1.8 the epochs' VDFs run side by side (three lanes for 2.5): each epoch takes y of
/// e − 3, and its window is a 2.5th of T at the measured rate.
#[test]
fn a_margin_above_the_default_runs_lanes_side_by_side_and_keeps_the_rule() {
    let flags = [
        "--modulus",
        "test512",
        "--epoch-ms",
        "100",
        "--security-margin",
        "2.5",
    ];
    run_and_check(&flags, "test512", 250, 3, 12);
}

#[test]
fn class_group_epochs_and_a_fixed_t_keep_the_rule() {
    let class = ["--group", "classgroup-512", "--epoch-ms", "200"];
    run_and_check(&class, "classgroup-512", 150, 1, 6);
    // T fixed without --epoch-ms: the epochs last as long as T squarings take.
    let fixed = ["--modulus", "test512", "--iterations", "300000"];
    run_and_check(&fixed, "test512", 150, 1, 8);
}

#[test]
fn a_postgres_service_keeps_the_rule() {
    let schema = crate::pg::TestSchema::create("timing");
    let server = Server::start_pg(&schema.url(), FAST);
    let (id, _) = bet(&server, "pg");
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], true, "{v}");
    let last = wait_resolved(&server, 6);
    assert_rule_holds(&records(&server, last), 150, 1, "postgres");
}

/// The attack of issue 26: `--epoch-ms 1000 --iterations 50000` left y_{e−1} public for most
/// of epoch e. Such settings are now refused, saying what to change.
#[test]
fn an_iterations_too_small_for_the_epoch_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .args(["--epoch-ms", "1000", "--iterations", "50000"])
        .env_remove("DATABASE_URL")
        .output()
        .expect("runs vrs serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--iterations 50000") && err.contains("raise --iterations"),
        "{err}"
    );
    for bad in ["0.5", "abc", "1.234"] {
        let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
            .args(["serve", "--security-margin", bad, "--data-dir"])
            .arg(dir.path())
            .output()
            .expect("runs vrs serve");
        assert!(!out.status.success(), "margin {bad} accepted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("margin"),
            "{bad}"
        );
    }
}

/// A 512-bit modulus whose factors this test knows: its attacker squares at no cost at all
/// (x^(2^T) = x^(2^T mod φ(N))), far beyond any margin.
fn known_factor_modulus() -> (String, BigUint) {
    let prime = |seed: u8| {
        let mut c = BigUint::from_bytes_be(&[seed; 32]) | BigUint::from(1u8);
        c.set_bit(255, true);
        while !vrs_engine::vdf::prime::is_probable_prime(&c) {
            c += 2u8;
        }
        c
    };
    let (p, q) = (prime(0x9d), prime(0xc3));
    let n = &p * &q;
    let phi = (p - 1u8) * (q - 1u8);
    (format!("hex:{}", n.to_str_radix(16)), phi)
}

/// The predict-and-re-roll bettor of issue 26, made stronger: it reads every public endpoint
/// while its epoch is open and squares infinitely fast (it knows φ(N)). Each round it bets
/// alone into the open epoch e, and at every poll tries to compute y_e: for that it needs e's
/// input, hence y of e − 1 (which it computes itself from x_{e−1} as soon as that is public),
/// e's final bets root and e's nonce. It never holds all of them before e has closed: the nonce
/// is chosen at the close and e − 1's output exists only after it. Once e has closed, its
/// prediction is right (so the attacker is a real one).
#[test]
fn an_infinitely_fast_bettor_never_predicts_an_epoch_before_it_closes() {
    let (group, phi) = known_factor_modulus();
    let m = Modulus::by_name(&group).expect("modulus");
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &["--group", &group, "--epoch-ms", "100"]);
    let instant_y = |x: &[u8], t: u64| -> Vec<u8> {
        let x = BigUint::from_bytes_be(x);
        let e = BigUint::from(2u8).modpow(&BigUint::from(t), &phi);
        let y = x.modpow(&e, m.n());
        let other = m.n() - &y;
        m.encode(&m.element(&y.min(other)).expect("element"))
    };
    for round in 0..8 {
        let (id, e) = bet(&server, &format!("attacker-{round}"));
        let mut predicted_while_open = false;
        let give_up = Instant::now() + RESOLVE;
        let prediction = loop {
            assert!(
                Instant::now() < give_up,
                "round {round}: epoch {e} never closed"
            );
            let (_, rec) = server.get(&format!("/api/v1/epochs/{e}"));
            // y of p(e): the genesis output, or from p's published x at no cost.
            let prev_y = match u(&rec, "previous_epoch") {
                0 => Some(m.encode(&vrs_engine::epoch::genesis_output(&m))),
                p => {
                    let (_, before) = server.get(&format!("/api/v1/epochs/{p}"));
                    match (before["x"].as_str(), before["iterations"].as_u64()) {
                        (Some(x), Some(t)) => Some(instant_y(&hex::decode(x).expect("hex"), t)),
                        _ => None,
                    }
                }
            };
            let nonce = rec["nonce"].as_str().map(|n| hex::decode(n).expect("hex"));
            if let (Some(prev_y), Some(nonce)) = (prev_y, nonce) {
                // Everything public now: the bets root from the leaf hashes.
                let hashes: Vec<[u8; 32]> = rec["leaf_hashes"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|h| {
                                hex::decode(h.as_str().unwrap())
                                    .unwrap()
                                    .try_into()
                                    .unwrap()
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if rec["status"] == "open" {
                    predicted_while_open = true;
                }
                if rec["closed_at_ms"].is_u64() && !hashes.is_empty() {
                    let root = vrs_engine::merkle::root(&hashes);
                    let nonce: [u8; 32] = nonce.try_into().expect("32 bytes");
                    let seed = epoch_seed_v2(e, &prev_y, &root, &nonce, &timing_of(&rec));
                    let x = m.encode(&m.hash_to_group(&seed));
                    break instant_y(&x, u(&rec, "iterations"));
                }
            }
            assert_eq!(
                rec["nonce"].is_null(),
                rec["status"] == "open",
                "the nonce is public exactly once the epoch has closed: {rec}"
            );
            std::thread::sleep(Duration::from_millis(2));
        };
        assert!(
            !predicted_while_open,
            "round {round}: everything needed for y_{e} was public while it took bets"
        );
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{v}");
        assert_eq!(
            Some(hex::encode(prediction).as_str()),
            v["proof"]["y"].as_str(),
            "round {round}: the attacker's (late) computation is right"
        );
    }
}

/// Breaks epoch `e`'s stored timing with the server stopped, then checks that the server's
/// verification, `vrs verify`, `vrs audit` and (through the server's data) anyone reading the
/// records fail `timing` for the game in it.
fn tampered_timing_fails(dir: &Path, sql: &str, id: &str, e: u64, why: &str) {
    let conn = rusqlite::Connection::open(dir.join("vrs.sqlite3")).expect("opens the store");
    let changed = conn.execute(sql, [e as i64]).expect("tampers");
    assert_eq!(changed, 1);
    drop(conn);
    let server = Server::start(dir, FAST);
    let (_, v) = server.get(&format!("/api/v1/verify/{id}"));
    assert_eq!(v["verified"], false, "{why}: {v}");
    let failed: Vec<&str> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert!(
        failed.contains(&"timing"),
        "{why}: server failed {failed:?}"
    );
    let (code, report) = vrs_verify(&server, id, "test512");
    assert_eq!(code, Some(1), "{why}: {report}");
    assert_eq!(step(&report, "timing")["passed"], false, "{why}: {report}");
    let last = wait_resolved(&server, e + 1);
    let (code, out) = audit(&server, last, "test512");
    assert_eq!(code, Some(1), "{why}: {out}");
    assert!(
        out.contains(&format!("FAIL epoch {e} timing")),
        "{why}: {out}"
    );
    assert!(server.stop());
}

#[test]
fn a_record_that_breaks_the_timing_rule_fails_timing_everywhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    wait_resolved(&server, 2);
    let (id, e) = bet(&server, "tamper");
    let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], true, "{v}");
    let (_, before) = server.get(&format!("/api/v1/epochs/{}", e - 1));
    let (code, report) = vrs_verify(&server, &id, "test512");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(step(&report, "timing")["passed"], true, "{report}");

    // A rate understated against the verifier's own: the window was timed for a slower
    // squarer than the one it compares against, so --min-rate above R_e fails timing, in
    // `vrs verify` and `vrs audit`; R_e itself passes.
    let rate = u(&v["proof"]["timing"], "squarings_per_second");
    let at = rate.to_string();
    let above = (rate + 1).to_string();
    let (code, report) = vrs_verify_with(&server, &id, "test512", &["--min-rate", &at]);
    assert_eq!(code, Some(0), "{report}");
    let (code, report) = vrs_verify_with(&server, &id, "test512", &["--min-rate", &above]);
    assert_eq!(code, Some(1), "{report}");
    let timing = step(&report, "timing");
    assert_eq!(timing["passed"], false, "{report}");
    assert!(
        timing["detail"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!(
                "declares R = {rate} squarings/s, below the {above}"
            )),
        "{timing}"
    );
    let (code, text) = audit_with(&server, e, "test512", &["--min-rate", &above]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&format!("FAIL epoch {e} timing")), "{text}");
    for bad in ["0", "fast", "1.5", "-3"] {
        let (code, _) = vrs_verify_with(&server, &id, "test512", &["--min-rate", bad]);
        assert_eq!(code, Some(2), "--min-rate {bad} is a usage error");
    }
    assert!(server.stop());

    // Closed after y of e − 1 was stored.
    let late = u(&before, "resolved_at_ms") + 1;
    tampered_timing_fails(
        dir.path(),
        &format!("UPDATE epochs SET closed_at_ms = {late} WHERE number = ?1"),
        &id,
        e,
        "closed after the previous output",
    );
    // T too short for its window: the declared rate ten times the real one.
    tampered_timing_fails(
        dir.path(),
        &format!(
            "UPDATE epochs SET closed_at_ms = {}, plan_rate = plan_rate * 10 WHERE number = ?1",
            u(&v["proof"]["timing"], "closed_at_ms")
        ),
        &id,
        e,
        "T too short for its window",
    );
}

/// A data dir written before the timing rule upgrades in place: its resolved version-1 epoch
/// keeps verifying by version 1's rules, its open version-1 epoch (with a bet in it) closes and
/// resolves as version 1, and the epochs after it are version 2, the first taking y of that
/// last version-1 epoch. Every game verifies in the server, and in `vrs verify` and `vrs audit`
/// told `--allow-version-1`; without it they refuse the version-1 game.
#[test]
fn a_version_1_data_dir_upgrades_in_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The current schema, then the rows an older binary left: epoch 1 resolved (no games),
    // epoch 2 open with one bet.
    drop(vrs_store::sqlite::SqliteStore::open(dir.path()).expect("store"));
    let m = Modulus::by_name("test512").expect("modulus");
    let t = 200_000u64;
    let y0 = m.encode(&vrs_engine::epoch::genesis_output(&m));
    let empty = vrs_engine::merkle::root(&[]);
    let x1 = vrs_engine::epoch::epoch_input(&m, 1, &m.decode("y0", &y0).expect("y0"), &empty, t);
    let fast = <vrs_engine::backend::fast::Fast as vrs_engine::backend::Backend>::prepare(&m)
        .expect("backend");
    let out = vrs_engine::vdf::evaluate(&fast, &m, &x1, t, &Default::default(), &mut |_| {})
        .expect("evaluates")
        .prove();
    let l = out.proof.l.to_bytes_be();
    let mut l32 = vec![0u8; 32 - l.len()];
    l32.extend_from_slice(&l);
    let now = vrs_observe::clock::now_ms();
    let game = vrs_store::NewGame {
        game_id: "0123456789abcdef0123456789abcdef".into(),
        request_id: "fedcba9876543210fedcba9876543210".into(),
        game: "dice".into(),
        bet_type: Some("odd".into()),
        target: None,
        combo: None,
        amount: Some("1.00".into()),
        player_id: "anonymous".into(),
        player_seed: Some("old".into()),
        operator_key: "vrs-house".into(),
        created_at_ms: now - 500,
        leaf: Vec::new(),
        acceptance: None,
    };
    let leaf = vrs_protocol::commit::bet_leaf(&game);
    {
        let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).expect("opens");
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('modulus', 'test512')",
            [],
        )
        .expect("meta");
        conn.execute(
            "INSERT INTO epochs (number, status, modulus, opened_at_ms, closed_at_ms, iterations,
                 prev_y, bets_root, bet_count, x, y, pi, l, checkpoints, computation_ms,
                 resolved_at_ms)
             VALUES (1, 'resolved', 'test512', ?1, ?2, ?3, ?4, ?5, 0, ?6, ?7, ?8, ?9, '[]', 1, ?10)",
            rusqlite::params![
                now - 3000,
                now - 2000,
                t as i64,
                y0,
                empty.to_vec(),
                m.encode(&x1),
                m.encode(&out.y),
                m.encode(&out.proof.pi),
                l32,
                now - 1000
            ],
        )
        .expect("epoch 1");
        conn.execute(
            "INSERT INTO epochs (number, status, modulus, opened_at_ms) VALUES (2, 'open', 'test512', ?1)",
            [now - 2000],
        )
        .expect("epoch 2");
        conn.execute(
            "INSERT INTO games (game_id, request_id, game, bet_type, amount, player_id,
                 player_seed, operator_key, created_at_ms, epoch, seq, leaf)
             VALUES (?1, ?2, 'dice', 'odd', '1.00', 'anonymous', 'old', 'vrs-house', ?3, 2, 0, ?4)",
            rusqlite::params![game.game_id, game.request_id, now - 500, leaf],
        )
        .expect("the old bet");
    }
    let server = Server::start(dir.path(), FAST);
    let old = server.poll_ok(&format!("/api/v1/verify/{}", game.game_id), RESOLVE);
    assert_eq!(old["verified"], true, "{old}");
    assert_eq!(old["proof"]["timing"]["version"], 1, "{old}");
    // Accepted before signed acceptances: nothing to check, and it says so.
    assert_eq!(old["proof"]["acceptance"], Value::Null, "{old}");
    let acceptance = old["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "acceptance")
        .expect("an acceptance check");
    assert_eq!(acceptance["passed"], true, "{acceptance}");
    assert!(
        acceptance["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("not signed"),
        "{acceptance}"
    );
    let (id, e) = bet(&server, "new");
    assert!(e >= 3, "new bets go to version-2 epochs: {e}");
    let new = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(new["verified"], true, "{new}");
    let (_, first_v2) = server.get("/api/v1/epochs/3");
    assert_eq!(first_v2["version"], 2, "{first_v2}");
    assert_eq!(first_v2["previous_epoch"], 2, "{first_v2}");
    let allow = ["--allow-version-1"];
    for id in [game.game_id.as_str(), id.as_str()] {
        let (code, report) = vrs_verify_with(&server, id, "test512", &allow);
        assert_eq!(code, Some(0), "{report}");
    }
    let (code, report) = vrs_verify(&server, id.as_str(), "test512");
    assert_eq!(code, Some(0), "a version-2 game needs no flag: {report}");
    // By default the version-1 game fails `timing`: it made no timing commitment.
    let (code, report) = vrs_verify(&server, &game.game_id, "test512");
    assert_eq!(code, Some(1), "{report}");
    let timing = step(&report, "timing");
    assert_eq!(timing["passed"], false, "{report}");
    assert!(
        timing["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("refused unless version 1 is allowed"),
        "{timing}"
    );
    let last = wait_resolved(&server, e);
    let (code, out) = audit_with(&server, last, "test512", &allow);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = audit(&server, last, "test512");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("FAIL epoch 2 timing"), "{out}");
    // A verifier that requires a margin refuses the version-1 game: it declared none.
    let out = Command::new(env!("CARGO_BIN_EXE_vrs"))
        .args([
            "verify",
            &game.game_id,
            "--server",
            &server.url,
            "--group",
            "test512",
        ])
        .args(["--min-margin", "1", "--allow-version-1", "--json"])
        .output()
        .expect("runs vrs verify");
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(step(&report, "timing")["passed"], false, "{report}");
}
