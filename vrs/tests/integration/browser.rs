//! The in-browser verifier (`GET /verify`) in a real browser: Debian's Chromium, headless,
//! driven by playwright-core (tools/browser/verify-page.mjs). The page verifies honest games
//! of each kind with every step passing and the dice the server reported, and names the
//! failing step when an HTTP proxy in front of the real server tampers with the data.
//! Screenshots are saved under the test's output directory (printed by the test).

use crate::server::{Server, FAST};
use crate::tamper::{change_payout, flip, tampering_proxy};
use crate::x402::repo;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const RESOLVE: Duration = Duration::from_secs(60);

/// A change a lying server makes to a verification response.
type Tamper = Box<dyn Fn(&mut Value) + Send + Sync>;

fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot directory");
    dir
}

/// Opens `/verify?game=<id>` on `base` in Chromium; returns what the page showed.
fn open_page(base: &str, game_id: &str, shot: &str) -> Value {
    open_page_with(base, game_id, shot, "")
}

/// Opens `/verify?game=<id>&<query>` (no `&` for an empty query).
fn open_page_with(base: &str, game_id: &str, shot: &str, query: &str) -> Value {
    let driver = repo().join("tools/browser/verify-page.mjs");
    assert!(
        repo()
            .join("tools/browser/node_modules/playwright-core")
            .exists(),
        "playwright-core is not installed in tools/browser: run scripts/install-deps"
    );
    let path = screenshots().join(format!("{shot}.png"));
    let out = Command::new("node")
        .arg(&driver)
        .args([base, game_id])
        .arg(&path)
        .args((!query.is_empty()).then_some(query))
        .output()
        .expect("node runs the page driver");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the page driver failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("screenshot: {}", path.display());
    let line = stdout.lines().last().expect("one line of JSON");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

fn checks(page: &Value) -> Vec<(String, bool)> {
    page["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().expect("name").to_owned(),
                c["passed"].as_bool().expect("passed"),
            )
        })
        .collect()
}

/// Opens the page for `game_id` through a proxy that applies `tamper` to the game's
/// verification response; the page must fail. Returns the page and its failed checks.
fn tampered_page(
    server: &Server,
    game_id: &str,
    shot: &str,
    tamper: Tamper,
) -> (Value, Vec<String>) {
    let target = format!("/api/v1/verify/{game_id}");
    let proxy = tampering_proxy(&server.url, move |path, v| {
        if path == target {
            tamper(v);
        }
    });
    let page = open_page(&proxy, game_id, shot);
    assert_eq!(page["status"], "failed", "{shot}: {page}");
    let failed = checks(&page)
        .into_iter()
        .filter(|(_, p)| !p)
        .map(|(n, _)| n)
        .collect();
    (page, failed)
}

#[test]
fn the_page_verifies_honest_games_and_names_the_tampered_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), FAST);
    let mut games = Vec::new();
    for (kind, path, body) in [
        (
            "dice",
            "/api/v1/games/dice/bet",
            json!({"bet_type": "over7", "amount": 2.5, "player_seed": "browser"}),
        ),
        (
            "sicbo",
            "/api/v1/games/sicbo/bet",
            json!({"bet_type": "total", "target": 10, "amount": 1}),
        ),
        ("rng", "/api/v1/rng/generate", json!({"client_seed": "c"})),
    ] {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 202, "{path}: {r}");
        games.push((kind, r["game_id"].as_str().expect("game_id").to_owned()));
    }
    for (kind, id) in &games {
        let verified = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        let page = open_page(&server.url, id, &format!("honest-{kind}"));
        assert_eq!(page["status"], "verified", "{kind}: {page}");
        assert!(
            page["outcome_text"]
                .as_str()
                .expect("outcome text")
                .to_lowercase()
                .contains("verified"),
            "{page}"
        );
        let names: Vec<String> = checks(&page).into_iter().map(|(n, _)| n).collect();
        for (name, passed) in checks(&page) {
            assert!(passed, "{kind}: {name} failed on an honest game: {page}");
        }
        for step in [
            "bet_leaf",
            "merkle_inclusion",
            "epoch_chain",
            "epoch_input",
            "vdf_proof",
            "timing",
            "rng_value",
            "acceptance",
        ] {
            assert!(
                names.iter().any(|n| n == step),
                "{kind}: no {step}: {names:?}"
            );
        }
        if *kind != "rng" {
            assert!(names.iter().any(|n| n == "dice"), "{names:?}");
            assert!(names.iter().any(|n| n == "payout"), "{names:?}");
            let (_, result) = server.get(&format!("/api/v1/games/{id}"));
            let o = &result["result"]["outcome"];
            let want: Vec<u64> = ["die1", "die2", "die3"]
                .iter()
                .filter_map(|d| o[*d].as_u64())
                .collect();
            let shown: Vec<u64> = page["dice"]
                .as_array()
                .expect("dice shown")
                .iter()
                .map(|d| d.as_u64().expect("a die"))
                .collect();
            assert_eq!(shown, want, "{kind}: the page shows other dice");
        }
        assert!(page["console_errors"]
            .as_array()
            .is_none_or(|e| e.is_empty()));
        assert_eq!(verified["verified"], true);
    }

    let (_, dice_id) = &games[0];
    // `&group=` makes the group the reader's: this test512 server passes as test512 and fails
    // as rsa2048, whose proof it cannot give.
    let page = open_page_with(&server.url, dice_id, "group-test512", "group=test512");
    assert_eq!(page["status"], "verified", "{page}");
    let page = open_page_with(&server.url, dice_id, "group-rsa2048", "group=rsa2048");
    assert_eq!(page["status"], "failed", "{page}");
    assert_eq!(page["failed_step"], "group", "{page}");
    assert_eq!(
        checks(&page).into_iter().filter(|(_, p)| !p).count(),
        1,
        "only group fails: {page}"
    );
    let cases: [(&str, &str, Tamper); 4] = [
        ("y", "vdf_proof", Box::new(|v| flip(v, "/proof/y"))),
        (
            "bets-root",
            "merkle_inclusion",
            Box::new(|v| flip(v, "/proof/bets_root")),
        ),
        ("payout", "payout", Box::new(change_payout)),
        (
            "acceptance",
            "acceptance",
            Box::new(|v| flip(v, "/proof/acceptance/signature")),
        ),
    ];
    for (what, step, tamper) in cases {
        let (page, failed) = tampered_page(&server, dice_id, &format!("tampered-{what}"), tamper);
        assert!(
            failed.iter().any(|n| n == step),
            "tampered {what}: {step} should fail, failed: {failed:?}"
        );
        let text = page["outcome_text"].as_str().expect("outcome text");
        assert!(
            text.contains("NOT verified") && failed.iter().any(|n| text.contains(n.as_str())),
            "the outcome must name the failing step: {text}"
        );
    }

    // The epoch's close moved far past its bound, in the proof and in the epoch's record
    // alike: the page's `timing` fails (and `epoch_input`, since the seed binds the close).
    let (_, v) = server.get(&format!("/api/v1/verify/{dice_id}"));
    let e = v["proof"]["vdfEpoch"].as_u64().expect("epoch");
    let late = v["proof"]["timing"]["deadline_ms"]
        .as_i64()
        .expect("deadline")
        + 60_000;
    let (verify_path, epoch_path) = (
        format!("/api/v1/verify/{dice_id}"),
        format!("/api/v1/epochs/{e}"),
    );
    let proxy = tampering_proxy(&server.url, move |path, v| {
        if path == verify_path {
            v["proof"]["timing"]["closed_at_ms"] = json!(late);
        } else if path == epoch_path {
            v["closed_at_ms"] = json!(late);
        }
    });
    let page = open_page(&proxy, dice_id, "tampered-timing");
    assert_eq!(page["status"], "failed", "{page}");
    let failed: Vec<String> = checks(&page)
        .into_iter()
        .filter(|(_, p)| !p)
        .map(|(n, _)| n)
        .collect();
    assert!(failed.iter().any(|n| n == "timing"), "{failed:?}: {page}");
}

/// A class-group service (docs/PROTOCOL.md §19): the page derives each epoch's discriminant
/// from its seed in the browser and checks the chiavdf-compatible proof; a flipped byte of y
/// fails `vdf_proof`, and a discriminant the seed does not give fails `epoch_input`.
#[test]
fn the_page_verifies_a_class_group_game() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(
        dir.path(),
        &["--group", "classgroup-512", "--epoch-ms", "300"],
    );
    let body = json!({"bet_type": "over7", "amount": 2.5, "player_seed": "browser"});
    let (status, r) = server.post("/api/v1/games/dice/bet", &body);
    assert_eq!(status, 202, "{r}");
    let id = r["game_id"].as_str().expect("game_id").to_owned();
    let verified = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(verified["verified"], true, "{verified}");
    let page = open_page(&server.url, &id, "classgroup-honest");
    assert_eq!(page["status"], "verified", "{page}");
    for (name, passed) in checks(&page) {
        assert!(
            passed,
            "{name} failed on an honest class-group game: {page}"
        );
    }
    assert!(page["console_errors"]
        .as_array()
        .is_none_or(|e| e.is_empty()));

    let cases: [(&str, &str, Tamper); 2] = [
        ("y", "vdf_proof", Box::new(|v| flip(v, "/proof/y"))),
        (
            "discriminant",
            "epoch_input",
            Box::new(|v| v["proof"]["discriminant"] = json!("-0x1f")),
        ),
    ];
    for (what, step, tamper) in cases {
        let (_, failed) =
            tampered_page(&server, &id, &format!("classgroup-tampered-{what}"), tamper);
        assert!(
            failed.iter().any(|n| n == step),
            "tampered {what}: {step} should fail, failed: {failed:?}"
        );
    }
}

/// An instant (pool-served) game once its bet epoch is bound: the page checks the signed
/// acceptance and the bet's place in that epoch's tree; a rewritten bet (the leaf shown to the
/// page no longer the one in the tree) fails `pool_bet_inclusion`, a forged signature
/// `acceptance`.
#[test]
fn the_page_verifies_an_instant_game_and_its_binding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = Server::start(dir.path(), &crate::server::fast_with_small_pool());
    let deadline = std::time::Instant::now() + RESOLVE;
    let id = loop {
        let body = json!({"bet_type": "odd", "amount": 1, "player_seed": "page", "instant": true});
        let (status, r) = server.post("/api/v1/games/dice/bet", &body);
        if status == 200 {
            break r["game_id"].as_str().expect("game_id").to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pool never served: {r}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    while server.get(&format!("/api/v1/verify/{id}")).1["proof"]["bet_epoch"]["status"] != "bound" {
        assert!(
            std::time::Instant::now() < deadline,
            "the bet epoch never closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let page = open_page(&server.url, &id, "honest-instant");
    assert_eq!(page["status"], "verified", "{page}");
    let names: Vec<String> = checks(&page).into_iter().map(|(n, _)| n).collect();
    for step in ["pool_game_id", "pool_bet_inclusion", "acceptance"] {
        assert!(names.iter().any(|n| n == step), "no {step}: {names:?}");
    }
    let cases: [(&str, &str, Tamper); 2] = [
        (
            "instant-binding",
            "pool_bet_inclusion",
            Box::new(|v| flip(v, "/proof/bet_epoch/bets_root")),
        ),
        (
            "instant-acceptance",
            "acceptance",
            Box::new(|v| flip(v, "/proof/acceptance/signature")),
        ),
    ];
    for (what, step, tamper) in cases {
        let (_, failed) = tampered_page(&server, &id, what, tamper);
        assert!(
            failed.iter().any(|n| n == step),
            "{what}: {step} should fail, failed: {failed:?}"
        );
    }
}
