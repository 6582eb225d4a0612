//! Faults under the full load (dice and Sic Bo bets on the epoch path, pool-served bets, raw
//! RNG requests, notarizations paid with an API key), all on loopback:
//!
//! 1. the server killed (SIGKILL) at random moments and restarted on the same data, on the
//!    embedded store and on PostgreSQL;
//! 2. the database connection cut and restored (PostgreSQL through a TCP proxy): writes
//!    answer 503 JSON while it is away;
//! 3. the anchoring RPC cut and restored (ganache through a TCP proxy): writes are accepted
//!    and resolved meanwhile, and the anchors catch up after.
//!
//! Afterwards every promise (a 202, or the 200 of a pool-served bet) is checked through the API
//! and in the store: each game exists, resolved once (the same value on every read, one row in
//! one epoch or one pool entry), and verifies with every check passing; each receipt exists,
//! sealed once in a batch with an inclusion proof that folds to the batch root.

use crate::anchor::{
    anchoring, assert_no_duplicates, check_game_anchor, confirmed, wait_anchoring, ENV,
};
use crate::cli_verify::vrs_verify;
use crate::durability::{block_on, check_chain, wait_for, RESOLVE};
use crate::evm::{Ganache, ADDRESS};
use crate::load::{
    assert_unchanged, kill_restart_under_load, request, settled_values, wait_all_resolved, Kind,
    Load, Mix, Promises, UNLIMITED,
};
use crate::notary::{assert_sealed_proof, create_key, create_key_in, post, wait_receipt};
use crate::pg::TestSchema;
use crate::proxy::Proxy;
use crate::serve_pool::pool_flags;
use crate::serve_restart::failed_checks;
use crate::server::Server;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use vrs_store::postgres::PgStore;
use vrs_store::sqlite::SqliteStore;
use vrs_store::Store;

/// Client threads posting: few, so that the service keeps its two cores' worth of time.
const THREADS: usize = 3;

/// Fast epochs, a small pool on the CPU (no GPU probe at every restart) that serves bets by
/// default, notary batches every 200 ms, and no per-client rate limit (all the load comes
/// from one address).
fn flags<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut f: Vec<&str> = pool_flags(&[
        "--instant-bets",
        "--batch-backend",
        "cpu",
        "--notary-batch-ms",
        "200",
    ]);
    f.extend_from_slice(UNLIMITED);
    f.extend_from_slice(extra);
    f
}

/// Kills, database cuts: several, each at a moment the load decides.
const ROUNDS: usize = 4;

/// A small PostgreSQL pool: the tests beside this one share the database's connections.
const PG_POOL: &[&str] = &["--database-pool-size", "6"];

/// Every promise, through the API of `server` once all games resolved: each game answers 200
/// twice with the same rngValue (and a pool-served bet the value of its 200), and verifies with
/// every check passing; each receipt is sealed with a proof that folds to its batch root and
/// is the receipt the 202 described. With `anchored`, every game's anchor is confirmed and
/// every receipt is anchored. `vrs verify` then recomputes one game of each kind on its own.
fn check_promises(server: &Server, accepted: &Promises, anchored: bool) {
    let kinds: BTreeSet<(Kind, bool)> = accepted
        .values()
        .map(|p| (p.kind, p.pool_served()))
        .collect();
    for expected in [
        (Kind::Dice, false),
        (Kind::Sicbo, false),
        (Kind::Instant, true),
        (Kind::Rng, false),
        (Kind::Notary, false),
    ] {
        assert!(
            kinds.contains(&expected),
            "no promise of {expected:?}: {kinds:?}"
        );
    }
    wait_all_resolved(server);
    let mut by_kind: BTreeMap<(Kind, bool), String> = BTreeMap::new();
    for (id, p) in accepted.iter().filter(|(_, p)| !p.is_receipt()) {
        let path = format!("/api/v1/games/{id}");
        let (s1, first) = server.get(&path);
        let (s2, second) = server.get(&path);
        assert_eq!((s1, s2), (200, 200), "{id}: {first} / {second}");
        assert_eq!(first["status"], "resolved", "{first}");
        let value = &first["result"]["rngValue"];
        assert!(value.is_string(), "{first}");
        assert_eq!(value, &second["result"]["rngValue"], "{id} changed");
        if p.pool_served() {
            assert_eq!(value, &p.answer["result"]["rngValue"], "{id}");
        }
        let mut v = Value::Null;
        // A pool batch committed late joins the next anchor batch: wait for it.
        wait_for("the game's anchor confirmed", RESOLVE, || {
            let (status, got) = server.get(&format!("/api/v1/verify/{id}"));
            assert_eq!(status, 200, "{got}");
            v = got;
            !anchored || v["proof"]["anchor_status"] == "confirmed"
        });
        assert!(failed_checks(&v).is_empty(), "{id}: {:#}", v["checks"]);
        assert_eq!(v["verified"], true, "{id}");
        assert_eq!(&v["proof"]["rngValue"], value, "{id}");
        if anchored {
            assert!(v["proof"]["anchorTx"].is_string(), "{id}");
        }
        by_kind
            .entry((p.kind, p.pool_served()))
            .or_insert(id.clone());
    }
    for (id, p) in accepted.iter().filter(|(_, p)| p.is_receipt()) {
        let done = if anchored { "anchored" } else { "sealed" };
        let r = wait_receipt(server, id, |r| r["status"] == done);
        assert_sealed_proof(&r);
        assert_eq!(r["verification"]["verified"], true, "{r:#}");
        for field in [
            "leaf_hash",
            "payload_hash",
            "schema",
            "metadata",
            "submitted_at_ms",
        ] {
            assert_eq!(r[field], p.answer[field], "{id}: {field}");
        }
    }
    for id in by_kind.values() {
        let out = vrs_verify(&server.url, id, false);
        assert_eq!(
            out.status.code(),
            Some(0),
            "vrs verify {id}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    eprintln!(
        "checked through the API: {} games, {} receipts",
        accepted.values().filter(|p| !p.is_receipt()).count(),
        accepted.values().filter(|p| p.is_receipt()).count()
    );
}

/// The store, read directly after the last server stopped: the epoch chain (every epoch-path
/// game in it once), every pool-served game in the entry it consumed, every receipt in one
/// batch slot whose leaf is its leaf hash, and every stored receipt paid for by the key.
async fn check_store(store: &dyn Store, accepted: &Promises, key_id: &str) {
    check_chain(store, accepted).await;
    for (id, p) in accepted.iter().filter(|(_, p)| p.pool_served()) {
        let g = store.game(id).await.unwrap().expect("a pool-served game");
        assert_eq!(g.epoch, None, "{id}");
        assert!(g.resolution.is_some(), "{id}");
        let index = g.pool_index.expect("its pool index");
        assert_eq!(p.answer["pool_index"], index, "{id}");
        let entry = store.pool_entry(index).await.unwrap().expect("its entry");
        assert_eq!(entry.game_id.as_deref(), Some(id.as_str()), "entry {index}");
    }
    // Where each leaf sits, over every sealed batch.
    let counts = store.notary_counts().await.unwrap();
    let last = counts.last_batch.map_or(0, |b| b.number);
    let mut slots: BTreeMap<[u8; 32], Vec<(u64, u64)>> = BTreeMap::new();
    for b in 1..=last {
        for (i, leaf) in store
            .notary_batch_leaves(b)
            .await
            .unwrap()
            .iter()
            .enumerate()
        {
            slots.entry(*leaf).or_default().push((b, i as u64));
        }
    }
    for id in accepted
        .iter()
        .filter(|(_, p)| p.is_receipt())
        .map(|(id, _)| id)
    {
        let r = store.receipt(id).await.unwrap().expect("a receipt");
        let sealed = r.sealed.expect("sealed");
        assert_eq!(
            slots.get(&r.leaf_hash),
            Some(&vec![sealed]),
            "receipt {id} is not in exactly one batch slot"
        );
        assert_eq!(r.payer, key_id, "{id}");
    }
    let keys = store.api_keys().await.unwrap();
    let key = keys.iter().find(|k| k.id == key_id).unwrap();
    assert_eq!(
        key.uses, counts.receipts,
        "every stored receipt is paid once"
    );
}

#[test]
fn chaos_kill_9_under_the_full_load_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let (key, key_id) = create_key(dir.path(), "chaos");
    let flags = flags(&[]);
    let (accepted, server) = kill_restart_under_load(
        &|| Server::start(dir.path(), &flags),
        &Mix::full(&key),
        THREADS,
        ROUNDS,
    );
    check_promises(&server, &accepted, false);
    assert!(server.stop(), "the last server did not stop cleanly");
    let store = SqliteStore::open(dir.path()).unwrap();
    block_on(check_store(&store, &accepted, &key_id));
}

#[test]
fn chaos_kill_9_under_the_full_load_on_postgres() {
    let schema = TestSchema::create("chaos_kill");
    let url = schema.url();
    let (key, key_id) = create_key_in(&["--database-url", &url], "chaos");
    let flags = flags(PG_POOL);
    let (accepted, server) = kill_restart_under_load(
        &|| Server::start_pg(&url, &flags),
        &Mix::full(&key),
        THREADS,
        ROUNDS,
    );
    check_promises(&server, &accepted, false);
    assert!(server.stop(), "the last server did not stop cleanly");
    block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        check_store(&store, &accepted, &key_id).await
    });
}

#[test]
fn chaos_database_cut_and_restored_under_the_full_load() {
    let schema = TestSchema::create("chaos_cut");
    let (proxy, url) = schema.through_proxy();
    let (key, key_id) = create_key_in(&["--database-url", &schema.url()], "chaos");
    let server = Server::start_pg(&url, &flags(PG_POOL));
    // Pool-served bets are among the promises checked: let the pool fill before the load and
    // the cuts keep its generator busy (with every server of the suite running its VDF, the
    // first batches can come after the first cut).
    wait_for("the pool filled", RESOLVE, || {
        server.get("/api/v1/stats").1["pool"]["depth"].as_u64() >= Some(60)
    });
    let targets = Arc::new(RwLock::new(vec![server.url.clone()]));
    let load = Load::start(targets, THREADS, &Mix::full(&key));
    let auth = format!("Bearer {key}");
    // From when the service said the database was gone to when it came back.
    let mut outages = Vec::new();
    for round in 0..ROUNDS as u64 {
        let before = load.count();
        wait_for("writes accepted", Duration::from_secs(30), || {
            load.count() >= before + 30
        });
        proxy.cut();
        wait_for("health reports the outage", Duration::from_secs(20), || {
            server.get("/health").1["database"] == "disconnected"
        });
        let down_since = Instant::now();
        // Every kind of write says 503 while the database is away: no promise it cannot keep.
        for kind in [
            Kind::Dice,
            Kind::Sicbo,
            Kind::Instant,
            Kind::Rng,
            Kind::Notary,
        ] {
            let (path, body) = request(kind, THREADS, round);
            let (status, _, r) = post(
                &format!("{}{path}", server.url),
                &body.to_string(),
                &[("Authorization", &auth)],
            );
            assert_eq!(status, 503, "{kind:?} during the cut: {r}");
            let error = r["error"].as_str().unwrap_or_default();
            assert!(error.contains("unavailable"), "{kind:?}: {r}");
        }
        // Reads of what was promised say 503 too, never 404: the game or receipt exists.
        let promised = load.accepted();
        let game = promised.iter().find(|(_, p)| !p.is_receipt()).unwrap().0;
        let receipt = promised.iter().find(|(_, p)| p.is_receipt()).unwrap().0;
        for path in [
            format!("/api/v1/games/{game}"),
            format!("/api/v1/verify/{game}"),
            format!("/v1/notarize/{receipt}"),
            "/v1/notarize/status".into(),
            "/api/v1/stats".into(),
            "/api/v1/entropy".into(),
            "/api/v1/recent".into(),
            "/api/v1/epochs/1".into(),
            "/api/v1/pool/batches/1".into(),
        ] {
            let (status, r) = server.get(&path);
            assert_eq!(status, 503, "GET {path} during the cut: {r}");
            assert!(r["error"].is_string(), "{path}: {r}");
        }
        // The load meets the outage too before it ends.
        let refused = load.refused();
        wait_for("the load refused", Duration::from_secs(20), || {
            load.refused() >= refused + THREADS as u64
        });
        outages.push((down_since, Instant::now()));
        proxy.restore();
    }
    let before = load.count();
    wait_for("writes accepted after the cuts", RESOLVE, || {
        load.count() >= before + 30
    });
    eprintln!(
        "database cut × {ROUNDS}: {:?} promised, {} refused (503), {} dropped",
        load.counts(),
        load.refused(),
        load.dropped()
    );
    let accepted = load.finish();
    // No request sent and answered within an outage was promised anything.
    for (id, p) in &accepted {
        assert!(
            !outages
                .iter()
                .any(|(from, to)| p.sent_at > *from && p.answered_at < *to),
            "{id} got {} while the database was cut",
            p.answer
        );
    }
    check_promises(&server, &accepted, false);
    assert!(server.stop(), "the server did not stop cleanly");
    block_on(async {
        let store = PgStore::connect(&schema.url()).await.unwrap();
        check_store(&store, &accepted, &key_id).await
    });
}

fn last_resolved(server: &Server) -> u64 {
    server.get("/api/v1/stats").1["epoch"]["last_resolved"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn chaos_anchoring_rpc_cut_and_restored_under_the_full_load() {
    let dir = tempfile::tempdir().unwrap();
    let g = Ganache::start(&dir.path().join("chain"), 8453, true);
    let rpc = Proxy::start(([127, 0, 0, 1], g.port).into());
    let rpc_url = format!("http://{}", rpc.addr);
    let data = dir.path().join("data");
    let (key, key_id) = create_key(&data, "chaos");
    let server = Server::start_env(
        &data,
        &flags(&["--anchor-rpc-url", &rpc_url, "--anchor-every", "3"]),
        ENV,
    );
    wait_anchoring(&server, "a first confirmed batch", |a| confirmed(a) >= 1);
    let targets = Arc::new(RwLock::new(vec![server.url.clone()]));
    let load = Load::start(targets, THREADS, &Mix::full(&key));

    rpc.cut();
    let down = wait_anchoring(&server, "the outage reported", |a| a["state"] == "retrying");
    let before: Promises = load.accepted();
    let epoch_at_cut = last_resolved(&server);
    wait_for(
        "writes accepted and epochs resolved while the RPC is down",
        RESOLVE,
        || load.count() >= before.len() + 40 && last_resolved(&server) >= epoch_at_cut + 5,
    );
    // What was promised during the outage resolves and seals during it, its anchor pending.
    let during: Promises = load
        .accepted()
        .into_iter()
        .filter(|(id, _)| !before.contains_key(id))
        .collect();
    for (id, p) in during.iter().take(30) {
        if p.is_receipt() {
            let r = wait_receipt(&server, id, |r| r["status"] == "sealed");
            assert_sealed_proof(&r);
        } else {
            let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
            assert!(failed_checks(&v).is_empty(), "{id}: {:#}", v["checks"]);
            // A pool-served game's batch may have been anchored before the cut; an epoch
            // opened after it cannot be.
            if p.on_epoch_path() {
                assert!(
                    v["proof"]["anchorTx"].is_null(),
                    "{id}: anchored while down"
                );
            }
        }
    }
    let still = anchoring(&server);
    assert_eq!(still["state"], "retrying", "{still:#}");
    assert_eq!(confirmed(&still), confirmed(&down), "confirmed while down");
    let seen = settled_values(&server, &during);

    rpc.restore();
    let before = load.count();
    wait_for("writes accepted after the outage", RESOLVE, || {
        load.count() >= before + 20
    });
    eprintln!(
        "anchoring RPC cut: {:?} promised, {} refused (503), {} dropped",
        load.counts(),
        load.refused(),
        load.dropped()
    );
    let accepted = load.finish();
    wait_all_resolved(&server);
    let last = last_resolved(&server);
    wait_anchoring(&server, "the backlog anchored", |a| {
        a["anchored_through_epoch"].as_u64().unwrap_or(0) >= last && a["state"] == "active"
    });
    check_promises(&server, &accepted, true);
    // The chain holds each batch root once, and the games' anchors read back from it.
    assert_no_duplicates(&g.anchor_txs(ADDRESS));
    let epoch_games: Vec<&String> = accepted
        .iter()
        .filter(|(_, p)| p.on_epoch_path())
        .map(|(id, _)| id)
        .collect();
    for id in [epoch_games[0], epoch_games[epoch_games.len() - 1]] {
        check_game_anchor(&server, &g, id);
    }
    // Results and receipt proofs are what they were while the RPC was down.
    assert_unchanged(&server, &accepted, &seen);
    assert!(server.stop(), "the server did not stop cleanly");
    let store = SqliteStore::open(&data).unwrap();
    block_on(check_store(&store, &accepted, &key_id));
}
