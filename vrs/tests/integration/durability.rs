//! Nothing accepted is ever lost: bets under load while the server is killed (SIGKILL) at
//! random moments, on both stores; three replicas on one PostgreSQL with the leader killed;
//! and a database outage that answers 503 and heals by itself.
//!
//! After each run the test reads the store directly and re-derives the whole chain: every
//! epoch from 1 on is resolved with an input recomputed from its stored leaves and the
//! previous output, and its proof verifies; every bet that got a 202 is in it, resolved once.

use crate::load::{kill_restart_under_load, Load, Mix, Promises, UNLIMITED};
use crate::pg::TestSchema;
use crate::server::{Server, FAST};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use vrs_engine::epoch::{epoch_input, epoch_seed_v2, genesis_output};
use vrs_engine::group::Modulus;
use vrs_engine::merkle;
use vrs_engine::vdf::verify_encoded;
use vrs_store::postgres::PgStore;
use vrs_store::sqlite::SqliteStore;
use vrs_store::{EpochStatus, Store};

pub const RESOLVE: Duration = Duration::from_secs(90);

/// Polls `done` until it holds; fails after `timeout`.
pub fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within {timeout:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs a future to completion from a sync test.
pub fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Re-derives the chain from what `store` holds and checks every game accepted into an epoch
/// against it: in one resolved epoch of the chain, once. Returns the number of resolved epochs.
pub async fn check_chain(store: &dyn Store, accepted: &Promises) -> u64 {
    let m = Modulus::by_name("test512").unwrap();
    let last = store
        .latest_resolved_epoch()
        .await
        .unwrap()
        .expect("some epoch resolved")
        .number;
    // Every epoch's output, by number (0: the genesis output).
    let mut outputs = BTreeMap::from([(0u64, m.encode(&genesis_output(&m)))]);
    let mut games_in_chain = 0;
    // How often each game appears in the chain's epochs.
    let mut occurrences: BTreeMap<String, usize> = BTreeMap::new();
    for e in 1..=last {
        let rec = store
            .epoch(e)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("epoch {e} was skipped"));
        assert_eq!(rec.status, EpochStatus::Resolved, "epoch {e}");
        let input = rec.input.clone().unwrap();
        let output = rec.output.clone().unwrap();
        let p = rec.previous();
        let prev_y = outputs[&p].clone();
        let leaves = store.epoch_leaves(e).await.unwrap();
        let hashes: Vec<merkle::Hash> = leaves.iter().map(|l| merkle::leaf_hash(l)).collect();
        let root = merkle::root(&hashes);
        assert_eq!(input.prev_y, prev_y, "epoch {e} does not chain to {p}");
        assert_eq!(input.bets_root, root, "epoch {e}: bets root");
        assert_eq!(input.bet_count, leaves.len() as u64);
        let x = match (rec.timing(), rec.nonce) {
            (Some(timing), Some(nonce)) => {
                assert_eq!(timing.iterations, input.iterations, "epoch {e}: T");
                m.hash_to_group(&epoch_seed_v2(e, &prev_y, &root, &nonce, &timing))
            }
            _ => {
                let prev = m.decode("prev", &prev_y).unwrap();
                epoch_input(&m, e, &prev, &root, input.iterations)
            }
        };
        assert_eq!(input.x, m.encode(&x), "epoch {e} ran on another input");
        verify_encoded(
            &m,
            &input.x,
            &output.y,
            input.iterations,
            &output.l,
            &output.pi,
        )
        .unwrap_or_else(|err| panic!("epoch {e}: proof does not verify: {err}"));
        for (seq, g) in store.epoch_games(e).await.unwrap().iter().enumerate() {
            assert_eq!(g.seq, Some(seq as u64));
            assert!(
                g.resolution.is_some(),
                "game {} of epoch {e}",
                g.new.game_id
            );
            *occurrences.entry(g.new.game_id.clone()).or_default() += 1;
        }
        games_in_chain += leaves.len();
        outputs.insert(e, output.y);
    }
    let on_epoch_path: Vec<&String> = accepted
        .iter()
        .filter(|(_, p)| p.on_epoch_path())
        .map(|(id, _)| id)
        .collect();
    for id in &on_epoch_path {
        assert_eq!(
            occurrences.get(*id),
            Some(&1),
            "bet {id} is not in the chain exactly once"
        );
        let g = store
            .game(id)
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("accepted bet {id} is lost"));
        assert!(
            g.epoch.is_some_and(|e| e <= last),
            "bet {id} in epoch {:?} not resolved",
            g.epoch
        );
    }
    assert!(games_in_chain >= on_epoch_path.len());
    eprintln!(
        "chain checked: {last} epochs, {games_in_chain} games, {} accepted into an epoch",
        on_epoch_path.len()
    );
    last
}

#[test]
fn sqlite_kill_9_under_load_loses_no_accepted_bet() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [FAST, UNLIMITED].concat();
    let (accepted, server) =
        kill_restart_under_load(&|| Server::start(dir.path(), &flags), &Mix::dice(), 4, 4);
    assert!(server.stop());
    let store = SqliteStore::open(dir.path()).unwrap();
    block_on(check_chain(&store, &accepted));
}

#[test]
fn postgres_kill_9_under_load_loses_no_accepted_bet() {
    let schema = TestSchema::create("crash");
    let url = schema.url();
    let flags = [FAST, UNLIMITED].concat();
    let (accepted, server) =
        kill_restart_under_load(&|| Server::start_pg(&url, &flags), &Mix::dice(), 4, 4);
    drop(server);
    block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        check_chain(&store, &accepted).await
    });
}

fn role(server: &Server) -> String {
    let (_, h) = server.get("/health");
    h["role"].as_str().unwrap_or("").to_owned()
}

/// The indices of the running servers that say they lead.
fn leaders(servers: &[Option<Server>]) -> Vec<usize> {
    (0..servers.len())
        .filter(|&i| servers[i].as_ref().is_some_and(|s| role(s) == "leader"))
        .collect()
}

#[test]
fn three_replicas_survive_the_leader_being_killed() {
    let schema = TestSchema::create("replicas");
    let url = schema.url();
    // Small pools: three servers and the other tests share the database's connections.
    let flags = [FAST, UNLIMITED, &["--database-pool-size", "6"]].concat();
    let mut servers: Vec<Option<Server>> = (0..3)
        .map(|_| Some(Server::start_pg(&url, &flags)))
        .collect();
    wait_for("one leader", Duration::from_secs(20), || {
        leaders(&servers).len() == 1
    });
    let leader = leaders(&servers)[0];
    let targets = Arc::new(RwLock::new(
        servers
            .iter()
            .map(|s| s.as_ref().unwrap().url.clone())
            .collect::<Vec<_>>(),
    ));
    let load = Load::start(Arc::clone(&targets), 6, &Mix::dice());
    wait_for("bets on every replica", Duration::from_secs(20), || {
        let accepted = load.accepted();
        let urls: std::collections::BTreeSet<&String> = accepted.values().map(|p| &p.url).collect();
        urls.len() == 3 && accepted.len() > 50
    });

    let last_resolved = |s: &Server| s.get("/api/v1/stats").1["epoch"]["last_resolved"].as_u64();
    wait_for("the leader resolves epochs", RESOLVE, || {
        last_resolved(servers[leader].as_ref().unwrap()) >= Some(2)
    });

    targets.write().unwrap()[leader] = String::new();
    servers[leader].take().unwrap().crash();
    let before = load.count();
    let survivor = servers.iter().flatten().next().unwrap();
    let resolved_at_kill = last_resolved(survivor).unwrap();
    wait_for("a new leader", Duration::from_secs(30), || {
        leaders(&servers).len() == 1
    });
    wait_for("the chain goes on after the takeover", RESOLVE, || {
        load.count() > before + 50 && last_resolved(survivor) >= Some(resolved_at_kill + 3)
    });
    let accepted = load.finish();

    let survivor = servers.iter().flatten().next().unwrap();
    wait_for("every accepted bet resolves", RESOLVE, || {
        let (_, stats) = survivor.get("/api/v1/stats");
        stats["pending_games"] == 0
    });
    // Every game verifies, through either survivor.
    let survivors: Vec<&Server> = servers.iter().flatten().collect();
    for (i, id) in accepted.keys().enumerate() {
        let (status, v) = survivors[i % 2].get(&format!("/api/v1/verify/{id}"));
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["verified"], true, "{v}");
    }
    block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        check_chain(&store, &accepted).await
    });
}

/// A leader that freezes (SIGSTOP: its connections stay open, it answers nothing) loses the
/// lead to another replica; when it thaws it stands by, and the chain has not forked.
#[test]
fn a_frozen_leader_is_replaced_and_stands_by_when_it_thaws() {
    let schema = TestSchema::create("frozen");
    let url = schema.url();
    let flags = [FAST, &["--database-pool-size", "4"]].concat();
    let servers: Vec<Option<Server>> = (0..2)
        .map(|_| Some(Server::start_pg(&url, &flags)))
        .collect();
    wait_for("one leader", Duration::from_secs(20), || {
        leaders(&servers).len() == 1
    });
    let old = leaders(&servers)[0];
    let other = servers[1 - old].as_ref().unwrap();
    let bet = json!({"bet_type": "odd", "player_seed": "frozen"});
    let (status, before) = other.post("/api/v1/games/dice/bet", &bet);
    assert_eq!(status, 202, "{before}");

    servers[old].as_ref().unwrap().freeze(true);
    wait_for("the other replica leads", Duration::from_secs(60), || {
        role(other) == "leader"
    });
    let (status, during) = other.post("/api/v1/games/dice/bet", &bet);
    assert_eq!(status, 202, "{during}");
    for r in [&before, &during] {
        let id = r["game_id"].as_str().unwrap();
        let v = other.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{v}");
    }

    let thawed = servers[old].as_ref().unwrap();
    thawed.freeze(false);
    wait_for(
        "the thawed process stands by",
        Duration::from_secs(30),
        || role(thawed) == "replica",
    );
    let (status, after) = thawed.post("/api/v1/games/dice/bet", &bet);
    assert_eq!(status, 202, "{after}");
    let id = after["game_id"].as_str().unwrap();
    let v = thawed.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
    assert_eq!(v["verified"], true, "{v}");
    assert_eq!(leaders(&servers), [1 - old], "one leader after the thaw");
    block_on(async {
        let store = PgStore::connect(&url).await.unwrap();
        check_chain(&store, &Promises::new()).await
    });
}

#[test]
fn a_database_outage_answers_503_and_heals_by_itself() {
    let schema = TestSchema::create("outage");
    let (proxy, url) = schema.through_proxy();
    let server = Server::start_pg(&url, FAST);
    let bet = json!({"bet_type": "even", "player_seed": "outage"});
    let (_, h) = server.get("/health");
    assert_eq!(h["database"], "connected", "{h}");
    let (status, before) = server.post("/api/v1/games/dice/bet", &bet);
    assert_eq!(status, 202, "{before}");

    proxy.cut();
    wait_for("health reports the outage", Duration::from_secs(20), || {
        let (status, h) = server.get("/health");
        assert_eq!(status, 200);
        h["database"] == "disconnected"
    });
    let (_, info) = server.get("/");
    assert_eq!(info["database"], "disconnected");
    assert_eq!(info["status"], "degraded");
    for (path, body) in [
        ("/api/v1/games/dice/bet", bet.clone()),
        ("/api/v1/games/sicbo/bet", json!({"bet_type": "big"})),
        ("/api/v1/rng/generate", json!({"client_seed": "x"})),
    ] {
        let (status, r) = server.post(path, &body);
        assert_eq!(status, 503, "{path}: {r}");
        assert!(r["error"].as_str().unwrap().contains("unavailable"), "{r}");
    }

    proxy.restore();
    let mut after = Value::Null;
    wait_for("bets are accepted again", Duration::from_secs(30), || {
        let (status, r) = server.post("/api/v1/games/dice/bet", &bet);
        after = r;
        status == 202
    });
    let (_, h) = server.get("/health");
    assert_eq!(h["database"], "connected", "{h}");
    for r in [&before, &after] {
        let id = r["game_id"].as_str().unwrap();
        let v = server.poll_ok(&format!("/api/v1/verify/{id}"), RESOLVE);
        assert_eq!(v["verified"], true, "{v}");
    }
}
