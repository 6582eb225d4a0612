//! Load for the fault tests: client threads post a mix of writes (epoch-path and pool-served
//! bets of both games, raw RNG requests, notarizations paid with an API key) to whichever
//! server is up, and record every promise the service made: each 202, and each 200 of a
//! pool-served bet. A 503 or a dropped connection is no promise; any other answer is a failure.

use crate::durability::wait_for;
use crate::server::Server;
use rand::Rng;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// Flags that turn off the per-client rate limit: a load comes from one address.
pub const UNLIMITED: &[&str] = &["--rate-limit", "0"];

/// What a load thread posts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A dice bet on the epoch path (`"instant": false`).
    Dice,
    /// A Sic Bo bet on the epoch path.
    Sicbo,
    /// A bet of either game without `"instant"`: pool-served (200) under `--instant-bets` while
    /// the pool lasts, else the epoch path (202).
    Instant,
    /// A raw RNG request.
    Rng,
    /// A notarization paid with the mix's API key.
    Notary,
}

/// The requests a load cycles through.
#[derive(Clone, Debug)]
pub struct Mix {
    pub kinds: Vec<Kind>,
    /// The API key notarizations are paid with.
    pub api_key: Option<String>,
    /// Least time between two requests of one thread: every promise is checked afterwards,
    /// so the load is bounded to keep those checks short.
    pub pace: Option<Duration>,
}

impl Mix {
    /// Dice bets only.
    pub fn dice() -> Mix {
        Mix {
            kinds: vec![Kind::Dice],
            api_key: None,
            pace: None,
        }
    }

    /// Every kind of write, notarizations paid with `api_key`.
    pub fn full(api_key: &str) -> Mix {
        Mix {
            kinds: vec![
                Kind::Dice,
                Kind::Instant,
                Kind::Sicbo,
                Kind::Notary,
                Kind::Rng,
            ],
            api_key: Some(api_key.to_owned()),
            pace: Some(Duration::from_millis(40)),
        }
    }
}

/// The path and body of the `n`th request of thread `thread`, of `kind`.
pub fn request(kind: Kind, thread: usize, n: u64) -> (&'static str, Value) {
    let tag = format!("load-{thread}-{n}");
    let dice = || match n % 3 {
        0 => json!({"bet_type": "odd", "amount": 1.25, "player_seed": tag}),
        1 => json!({"bet_type": "over7", "amount": 2, "player_seed": tag}),
        _ => json!({"bet_type": "exact", "target": 2 + n % 11, "player_seed": tag}),
    };
    let sicbo = || match n % 3 {
        0 => json!({"bet_type": "big", "amount": 3, "player_seed": tag}),
        1 => json!({"bet_type": "total", "target": 4 + n % 14, "player_seed": tag}),
        _ => json!({"bet_type": "combo", "combo": [1 + n % 3, 4 + n % 3], "player_seed": tag}),
    };
    let epoch_path = |mut b: Value| {
        b["instant"] = json!(false);
        b
    };
    match kind {
        Kind::Dice => ("/api/v1/games/dice/bet", epoch_path(dice())),
        Kind::Sicbo => ("/api/v1/games/sicbo/bet", epoch_path(sicbo())),
        Kind::Instant if n.is_multiple_of(2) => ("/api/v1/games/dice/bet", dice()),
        Kind::Instant => ("/api/v1/games/sicbo/bet", sicbo()),
        Kind::Rng => ("/api/v1/rng/generate", json!({"client_seed": tag})),
        Kind::Notary => (
            "/v1/notarize",
            json!({
                "schema": "sha256",
                "payload_hash": hex::encode(Sha256::digest(tag.as_bytes())),
                "metadata": {"load": tag},
            }),
        ),
    }
}

/// A write the service answered with its success status.
#[derive(Clone, Debug)]
pub struct Promise {
    pub kind: Kind,
    /// The server that answered.
    pub url: String,
    /// Its answer's body.
    pub answer: Value,
    /// When the request was sent and when its answer came.
    pub sent_at: Instant,
    pub answered_at: Instant,
}

impl Promise {
    pub fn is_receipt(&self) -> bool {
        self.kind == Kind::Notary
    }

    /// A bet answered at once from the pool (200), not on the epoch path.
    pub fn pool_served(&self) -> bool {
        self.answer["pool_served"] == true
    }

    /// A bet or RNG request accepted into an epoch.
    pub fn on_epoch_path(&self) -> bool {
        !self.is_receipt() && !self.pool_served()
    }
}

/// Every promise, by game id or receipt id.
pub type Promises = BTreeMap<String, Promise>;

/// What the load threads share.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    accepted: Mutex<Promises>,
    /// 503 answers: the service said no, so nothing was promised.
    refused: AtomicU64,
    /// Requests with no answer (the server was down or died mid-request).
    dropped: AtomicU64,
    /// Answers that are neither a promise nor a 503.
    unexpected: Mutex<Vec<String>>,
}

/// Writes posted by a few threads (back to back, or at the mix's pace) to whichever servers
/// are up.
pub struct Load {
    shared: Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    /// `targets[i % len]` is the URL thread i posts to (swapped by the test on restarts); an
    /// empty URL means that server is down.
    pub fn start(targets: Arc<RwLock<Vec<String>>>, threads: usize, mix: &Mix) -> Load {
        let shared = Arc::new(Shared::default());
        let threads = (0..threads)
            .map(|i| {
                let (shared, targets, mix) =
                    (Arc::clone(&shared), Arc::clone(&targets), mix.clone());
                std::thread::spawn(move || post_until_stopped(i, &shared, &targets, &mix))
            })
            .collect();
        Load { shared, threads }
    }

    /// Promises so far.
    pub fn count(&self) -> usize {
        self.shared.accepted.lock().unwrap().len()
    }

    /// Promises so far of each kind, and pool-served bets under `None`.
    pub fn counts(&self) -> BTreeMap<Option<Kind>, usize> {
        let mut out = BTreeMap::new();
        for p in self.shared.accepted.lock().unwrap().values() {
            let k = if p.pool_served() { None } else { Some(p.kind) };
            *out.entry(k).or_default() += 1;
        }
        out
    }

    /// The promises so far.
    pub fn accepted(&self) -> Promises {
        self.shared.accepted.lock().unwrap().clone()
    }

    pub fn refused(&self) -> u64 {
        self.shared.refused.load(Ordering::Relaxed)
    }

    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Stops the threads; fails on any answer that was neither a promise nor a 503.
    pub fn finish(self) -> Promises {
        self.shared.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().expect("a load thread panicked");
        }
        let unexpected = self.shared.unexpected.lock().unwrap();
        assert!(
            unexpected.is_empty(),
            "{} unexpected answers, the first ones: {:#?}",
            unexpected.len(),
            &unexpected[..unexpected.len().min(5)]
        );
        self.shared.accepted.lock().unwrap().clone()
    }
}

fn post_until_stopped(i: usize, shared: &Shared, targets: &RwLock<Vec<String>>, mix: &Mix) {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(15))
        .build();
    let auth = mix.api_key.as_ref().map(|k| format!("Bearer {k}"));
    let mut n = 0u64;
    let mut next = Instant::now();
    while !shared.stop.load(Ordering::Relaxed) {
        if let Some(pace) = mix.pace {
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            next = Instant::now() + pace;
        }
        let url = {
            let t = targets.read().unwrap();
            t[i % t.len()].clone()
        };
        if url.is_empty() {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        n += 1;
        // Threads start at different kinds so that every kind is in flight at once.
        let kind = mix.kinds[(i + n as usize) % mix.kinds.len()];
        let (path, body) = request(kind, i, n);
        let mut req = agent
            .post(&format!("{url}{path}"))
            .set("Content-Type", "application/json");
        if let (Kind::Notary, Some(a)) = (kind, &auth) {
            req = req.set("Authorization", a);
        }
        let sent_at = Instant::now();
        let (status, answer) = match req.send_string(&body.to_string()) {
            Ok(r) => (r.status(), r.into_string().unwrap_or_default()),
            Err(ureq::Error::Status(s, r)) => (s, r.into_string().unwrap_or_default()),
            Err(ureq::Error::Transport(_)) => {
                // Down, or killed mid-request: no promise was made.
                shared.dropped.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let answer: Value = serde_json::from_str(&answer).unwrap_or(Value::String(answer));
        let id = match kind {
            Kind::Notary => &answer["receipt_id"],
            _ => &answer["game_id"],
        };
        let promised = status == 202 || (status == 200 && answer["pool_served"] == true);
        match id.as_str() {
            Some(id) if promised => {
                let p = Promise {
                    kind,
                    url,
                    answer: answer.clone(),
                    sent_at,
                    answered_at: Instant::now(),
                };
                let before = shared.accepted.lock().unwrap().insert(id.to_owned(), p);
                if before.is_some() {
                    shared
                        .unexpected
                        .lock()
                        .unwrap()
                        .push(format!("{kind:?}: id {id} handed out twice"));
                }
            }
            // The documented 503: JSON with an error, and nothing promised.
            _ if status == 503 && answer["error"].is_string() => {
                shared.refused.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => shared
                .unexpected
                .lock()
                .unwrap()
                .push(format!("{kind:?} {path} {body}: {status} {answer}")),
        }
    }
}

/// What a client sees now of each promise that has a final value: a resolved game's rngValue,
/// a sealed receipt's proof. Neither may ever change.
pub fn settled_values(server: &Server, promises: &Promises) -> BTreeMap<String, String> {
    promises
        .iter()
        .filter_map(|(id, p)| {
            if p.is_receipt() {
                let (status, r) = server.get(&format!("/v1/notarize/{id}"));
                (status == 200 && r["proof"].is_object())
                    .then(|| (id.clone(), r["proof"].to_string()))
            } else {
                let (status, g) = server.get(&format!("/api/v1/games/{id}"));
                (status == 200).then(|| (id.clone(), g["result"]["rngValue"].to_string()))
            }
        })
        .collect()
}

/// Kills the server (SIGKILL) `rounds` times at random moments under `mix` posted by
/// `threads` threads, each time restarting it with `start` on the same data. Values seen
/// before a crash must be the same after it. Returns every promise and the last server, on
/// which every game has resolved.
pub fn kill_restart_under_load(
    start: &dyn Fn() -> Server,
    mix: &Mix,
    threads: usize,
    rounds: usize,
) -> (Promises, Server) {
    let mut rng = rand::thread_rng();
    let mut server = start();
    if mix.kinds.contains(&Kind::Instant) {
        // Pool-served bets are among the promises checked: let the pool fill first (with
        // every server of the suite running its VDF, the first batch can come after the last
        // kill, and every instant bet then takes the epoch path).
        wait_for("the pool filled", crate::durability::RESOLVE, || {
            server.get("/api/v1/stats").1["pool"]["depth"].as_u64() >= Some(60)
        });
    }
    let targets = Arc::new(RwLock::new(vec![server.url.clone()]));
    let load = Load::start(Arc::clone(&targets), threads, mix);
    let mut seen = BTreeMap::new();
    for round in 0..rounds {
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..1200)));
        // A sample of what resolved or sealed before the crash.
        let sample: Promises = load.accepted().into_iter().take(40).collect();
        seen.extend(settled_values(&server, &sample));
        targets.write().unwrap()[0] = String::new();
        server.crash();
        server = start();
        targets.write().unwrap()[0] = server.url.clone();
        assert!(load.count() > 0, "round {round}: nothing accepted yet");
    }
    // The last server takes writes too before the load stops.
    let before = load.count();
    wait_for("writes on the last server", Duration::from_secs(30), || {
        load.count() >= before + 20
    });
    eprintln!(
        "kill -9 × {rounds}: {:?} promised, {} refused (503), {} dropped",
        load.counts(),
        load.refused(),
        load.dropped()
    );
    let accepted = load.finish();
    assert!(
        accepted.len() >= 20,
        "only {} writes accepted",
        accepted.len()
    );
    wait_all_resolved(&server);
    assert_unchanged(&server, &accepted, &seen);
    (accepted, server)
}

/// Fails unless every value in `seen` (from [`settled_values`]) is still what `server` shows.
pub fn assert_unchanged(server: &Server, all: &Promises, seen: &BTreeMap<String, String>) {
    let promises: Promises = seen
        .keys()
        .map(|id| (id.clone(), all[id].clone()))
        .collect();
    assert_eq!(
        &settled_values(server, &promises),
        seen,
        "a value seen earlier changed"
    );
}

/// Waits until no game is pending.
pub fn wait_all_resolved(server: &Server) {
    wait_for(
        "every accepted game resolves",
        crate::durability::RESOLVE,
        || {
            let (_, stats) = server.get("/api/v1/stats");
            stats["pending_games"] == 0
        },
    );
}
