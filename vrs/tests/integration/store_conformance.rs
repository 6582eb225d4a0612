//! The `Store` contract, written once over `&dyn Store` and run against both implementations:
//! the embedded SQLite store and PostgreSQL (`TEST_DATABASE_URL`, one schema per test).

use crate::pg::TestSchema;
use std::sync::Arc;
use std::time::Duration;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::group::Modulus;
use vrs_engine::pool;
use vrs_protocol::acceptance::AcceptanceSigner;
use vrs_store::postgres::PgStore;
use vrs_store::sqlite::SqliteStore;
use vrs_store::{
    AnchorBatch, AnchorState, AnchorTx, ApiKey, BuildInstant, EpochInput, EpochOutput, EpochStatus,
    GameCounts, GameResolution, IdempotencyClaim, IdempotencyKey, IdempotentResponse, NewGame,
    NewReceipt, NotaryBatch, Payment, PaymentNonce, PoolBatch, ReceiptRecord, SettlingPayment,
    Store, StoreError,
};
// The aggregates' traits, for the tests that call a backend's own type.
use vrs_store::{AnchorStore, EpochStore, GameStore, PoolStore};

fn game(i: u32, game: &str) -> NewGame {
    NewGame {
        game_id: format!("{i:032x}"),
        request_id: format!("r{i}"),
        game: game.into(),
        bet_type: (game != "rng").then(|| "odd".into()),
        target: None,
        combo: (game == "sicbo").then_some([1, 6]),
        amount: (game != "rng").then(|| "1.00".into()),
        player_id: "p".into(),
        player_seed: Some(format!("seed{i}")),
        operator_key: "op".into(),
        created_at_ms: i64::from(i),
        leaf: format!("leaf{i}").into_bytes(),
        acceptance: None,
    }
}

fn signer() -> Arc<AcceptanceSigner> {
    static KEY: std::sync::OnceLock<Arc<AcceptanceSigner>> = std::sync::OnceLock::new();
    Arc::clone(KEY.get_or_init(|| Arc::new(AcceptanceSigner::generate())))
}

fn input(bet_count: u64) -> EpochInput {
    EpochInput {
        iterations: 1000,
        prev_y: vec![1; 64],
        bets_root: [2; 32],
        bet_count,
        x: vec![3; 64],
    }
}

fn output() -> EpochOutput {
    EpochOutput {
        y: vec![4; 64],
        pi: vec![5; 64],
        l: vec![6; 32],
        checkpoints: vec![(100, vec![7; 64]), (200, vec![8; 64])],
        computation_ms: 42,
        resolved_at_ms: 1_000,
    }
}

fn resolution(id: &str) -> GameResolution {
    GameResolution {
        game_id: id.into(),
        rng_value: "ab".repeat(32),
        dice: vec![1, 2],
        won: Some(true),
        payout: Some("1.98".into()),
    }
}

async fn lifecycle(s: &dyn Store) {
    s.bootstrap("test512", 10, &crate::OPEN_ENDED)
        .await
        .unwrap();
    s.bootstrap("test512", 20, &crate::OPEN_ENDED)
        .await
        .unwrap();
    assert!(matches!(
        s.bootstrap("rsa2048", 30, &crate::OPEN_ENDED).await,
        Err(StoreError::Conflict(_))
    ));
    let open = s.open_epoch().await.unwrap();
    assert_eq!(
        (open.number, open.status, open.opened_at_ms),
        (1, EpochStatus::Open, 10)
    );

    assert_eq!(
        s.insert_game(game(1, "dice"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap(),
        1
    );
    assert_eq!(
        s.insert_game(game(2, "sicbo"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap(),
        1
    );
    assert!(
        matches!(
            s.insert_game(game(2, "dice"), &signer())
                .await
                .map(|(e, _)| e),
            Err(StoreError::Conflict(_))
        ),
        "duplicate game id"
    );
    let leaves = s
        .close_epoch(1, 50, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    assert_eq!(leaves, [b"leaf1".to_vec(), b"leaf2".to_vec()]);
    assert_eq!(
        s.close_epoch(1, 60, [7; 32], &crate::OPEN_ENDED)
            .await
            .unwrap(),
        leaves,
        "closing again is idempotent"
    );
    assert_eq!(s.open_epoch().await.unwrap().number, 2);
    assert_eq!(
        s.insert_game(game(3, "rng"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap(),
        2,
        "games go to the new open epoch"
    );

    let unresolved = s.unresolved_epochs().await.unwrap();
    assert_eq!(unresolved.iter().map(|e| e.number).collect::<Vec<_>>(), [1]);
    assert_eq!(unresolved[0].input, None);
    assert!(
        s.set_epoch_input(2, &input(1)).await.is_err(),
        "an open epoch takes no input"
    );
    s.set_epoch_input(1, &input(2)).await.unwrap();
    s.set_epoch_input(1, &input(2)).await.unwrap();
    assert!(matches!(
        s.set_epoch_input(1, &input(3)).await,
        Err(StoreError::Conflict(_))
    ));

    // Resolution must cover every game of the epoch, or nothing is written.
    let r1 = resolution(&game(1, "").game_id);
    let r2 = resolution(&game(2, "").game_id);
    assert!(s
        .resolve_epoch(1, &output(), std::slice::from_ref(&r1))
        .await
        .is_err());
    assert!(s
        .game(&r1.game_id)
        .await
        .unwrap()
        .unwrap()
        .resolution
        .is_none());
    assert!(matches!(
        s.resolve_epoch(1, &output(), &[r1.clone(), r1.clone()])
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert!(s.latest_resolved_epoch().await.unwrap().is_none());
    s.resolve_epoch(1, &output(), &[r1.clone(), r2.clone()])
        .await
        .unwrap();
    let mut other = output();
    other.y = vec![9; 64];
    assert!(
        s.resolve_epoch(1, &other, &[r1.clone(), r2]).await.is_err(),
        "never rewritten"
    );
    let e1 = s.epoch(1).await.unwrap().unwrap();
    assert_eq!(e1.status, EpochStatus::Resolved);
    assert_eq!(e1.input, Some(input(2)));
    assert_eq!(e1.output, Some(output()));
    assert_eq!(e1.closed_at_ms, Some(50));
    assert_eq!(s.latest_resolved_epoch().await.unwrap().unwrap().number, 1);
    assert!(s.unresolved_epochs().await.unwrap().is_empty());
    assert_eq!(
        s.games_outcome_epoch(1).await.unwrap(),
        Some(1),
        "its own output"
    );

    let g1 = s.game(&r1.game_id).await.unwrap().unwrap();
    assert_eq!((g1.epoch, g1.seq, g1.pool_index), (Some(1), Some(0), None));
    let signed = g1.new.acceptance.expect("stored with its acceptance");
    assert_eq!(
        g1.new,
        NewGame {
            acceptance: Some(signed),
            ..game(1, "dice")
        }
    );
    assert_eq!(signed.public_key, signer().public_key());
    assert_eq!(g1.resolution, Some(r1));
    assert_eq!(g1.resolved_at_ms, Some(1_000));
    let g2 = s.game(&game(2, "").game_id).await.unwrap().unwrap();
    assert_eq!((g2.seq, g2.new.combo), (Some(1), Some([1, 6])));
    assert!(s
        .game("ffffffffffffffffffffffffffffffff")
        .await
        .unwrap()
        .is_none());
    let in_epoch: Vec<Option<u64>> = s
        .epoch_games(1)
        .await
        .unwrap()
        .iter()
        .map(|g| g.seq)
        .collect();
    assert_eq!(in_epoch, [Some(0), Some(1)]);
    assert_eq!(s.epoch_leaves(1).await.unwrap(), leaves);
    assert_eq!(s.last_game_id(1).await.unwrap(), Some(game(2, "").game_id));
    assert_eq!(s.last_game_id(2).await.unwrap(), Some(game(3, "").game_id));
    assert_eq!(s.last_game_id(9).await.unwrap(), None);

    let recent: Vec<String> = s
        .recent_games(2)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.new.request_id)
        .collect();
    assert_eq!(recent, ["r3", "r2"]);
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (3, 2));
    assert_eq!(counts.by_game.get("rng"), Some(&1));

    // An epoch whose leaves are not the count its input committed is not resolved, on either
    // store (the check both run, written once: vrs_store::check_resolutions).
    s.close_epoch(2, 70, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    s.set_epoch_input(2, &input(5)).await.unwrap();
    let r3 = resolution(&game(3, "").game_id);
    let refused = s
        .resolve_epoch(2, &output(), std::slice::from_ref(&r3))
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Corrupt(m)) if m.contains("committed 5")),
        "{refused:?}"
    );
    assert!(s
        .game(&r3.game_id)
        .await
        .unwrap()
        .unwrap()
        .resolution
        .is_none());
    assert_eq!(s.latest_resolved_epoch().await.unwrap().unwrap().number, 1);
    s.ping().await.unwrap();
}

/// Games inserted while epochs close land in exactly the epoch their insert reported, in
/// acceptance order, and none is lost. Inserts are spread over `stores` (replicas sharing one
/// database); the first one closes the epochs.
async fn inserts_race_closes(stores: Vec<Arc<dyn Store>>) {
    let s = Arc::clone(&stores[0]);
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..400u32 {
        let s = Arc::clone(&stores[i as usize % stores.len()]);
        tasks.push(tokio::spawn(async move {
            (
                i,
                s.insert_game(game(1000 + i, "dice"), &signer())
                    .await
                    .map(|(e, _)| e)
                    .unwrap(),
            )
        }));
    }
    let mut closed = Vec::new();
    for _ in 0..5 {
        tokio::task::yield_now().await;
        let e = s.open_epoch().await.unwrap().number;
        closed.push((
            e,
            s.close_epoch(e, 0, [7; 32], &crate::OPEN_ENDED)
                .await
                .unwrap(),
        ));
    }
    let mut reported = std::collections::BTreeMap::new();
    for t in tasks {
        let (i, e) = t.await.unwrap();
        reported.insert(i, e);
    }
    let mut seen = 0;
    for (e, leaves) in &closed {
        for leaf in leaves {
            let i: u32 = std::str::from_utf8(&leaf[4..])
                .unwrap()
                .parse::<u32>()
                .unwrap()
                - 1000;
            assert_eq!(
                reported[&i], *e,
                "game {i} reported epoch {} but is in {e}",
                reported[&i]
            );
            seen += 1;
        }
        let seqs: Vec<Option<u64>> = s
            .epoch_games(*e)
            .await
            .unwrap()
            .iter()
            .map(|g| g.seq)
            .collect();
        assert_eq!(seqs, (0..leaves.len() as u64).map(Some).collect::<Vec<_>>());
    }
    let open = s.open_epoch().await.unwrap().number;
    seen += s.epoch_games(open).await.unwrap().len();
    assert_eq!(seen, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_lifecycle() {
    let dir = tempfile::tempdir().unwrap();
    lifecycle(&SqliteStore::open(dir.path()).unwrap()).await;
    // Everything is still there after reopening the file.
    let s = SqliteStore::open(dir.path()).unwrap();
    assert_eq!(s.game_counts().await.unwrap().total, 3);
    assert_eq!(s.open_epoch().await.unwrap().number, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_inserts_race_closes() {
    let dir = tempfile::tempdir().unwrap();
    inserts_race_closes(vec![Arc::new(SqliteStore::open(dir.path()).unwrap())]).await;
}

/// Epochs close while inserts keep streaming in from every store (a closer must not wait for
/// a gap in the inserts), and every game lands in the epoch its insert reported.
async fn closes_go_through_a_stream_of_inserts(stores: Vec<Arc<dyn Store>>) {
    stores[0]
        .bootstrap("test512", 0, &crate::OPEN_ENDED)
        .await
        .unwrap();
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    let inserted = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for (w, s) in stores.iter().cycle().take(12).enumerate() {
        let (s, stop, inserted) = (Arc::clone(s), Arc::clone(&stop), Arc::clone(&inserted));
        writers.push(tokio::spawn(async move {
            let mut reported = Vec::new();
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let g = game(100_000 * (w as u32 + 1) + i, "rng");
                reported.push((
                    g.game_id.clone(),
                    s.insert_game(g, &signer()).await.map(|(e, _)| e).unwrap(),
                ));
                inserted.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            reported
        }));
    }
    let closer = &stores[0];
    let mut closed = Vec::new();
    for _ in 0..6 {
        // Each close comes after more inserts have gone in since the last one.
        let mark = inserted.load(Ordering::Relaxed);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while inserted.load(Ordering::Relaxed) < mark + 20 {
            assert!(std::time::Instant::now() < deadline, "the inserts stopped");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let e = closer.open_epoch().await.unwrap().number;
        let leaves = tokio::time::timeout(
            Duration::from_secs(60),
            closer.close_epoch(e, 0, [7; 32], &crate::OPEN_ENDED),
        )
        .await
        .expect("a close waited for the inserts to pause")
        .unwrap();
        closed.push((e, leaves.len()));
    }
    stop.store(true, Ordering::Relaxed);
    let mut per_epoch = std::collections::BTreeMap::<u64, usize>::new();
    for w in writers {
        for (id, e) in w.await.unwrap() {
            *per_epoch.entry(e).or_default() += 1;
            assert_eq!(closer.game(&id).await.unwrap().unwrap().epoch, Some(e));
        }
    }
    for (e, n) in &closed {
        assert_eq!(per_epoch.get(e).copied().unwrap_or(0), *n, "epoch {e}");
    }
    assert!(
        closed.iter().filter(|(_, n)| *n > 0).count() >= 4,
        "inserts kept flowing between closes: {closed:?}"
    );
}

/// More games than one write batch: resolution covers all of them, seen by readers all at once,
/// and the positions follow acceptance order whatever order the resolutions come in.
async fn a_large_epoch_resolves(s: Arc<dyn Store>) {
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let n = 12_000u32;
    let inserts: Vec<_> = (0..n)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                s.insert_game(game(500_000 + i, "rng"), &signer())
                    .await
                    .map(|(e, _)| e)
                    .unwrap()
            })
        })
        .collect();
    for t in inserts {
        assert_eq!(t.await.unwrap(), 1);
    }
    let leaves = s
        .close_epoch(1, 1, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    assert_eq!(leaves.len(), n as usize);
    s.set_epoch_input(1, &input(u64::from(n))).await.unwrap();
    let order: Vec<String> = s
        .epoch_games(1)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.new.game_id)
        .collect();
    let mut resolutions: Vec<GameResolution> = order.iter().map(|id| resolution(id)).collect();
    resolutions.reverse();
    assert!(
        s.resolve_epoch(1, &output(), &resolutions[1..])
            .await
            .is_err(),
        "one game missing"
    );
    // A reader never sees a game resolved before its epoch (the embedded store writes the
    // results in several transactions): watch the game whose result is written first.
    let watcher = {
        let (s, id) = (Arc::clone(&s), resolutions[0].game_id.clone());
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
            loop {
                let g = s.game(&id).await.unwrap().unwrap();
                let status = s.epoch(1).await.unwrap().unwrap().status;
                if g.resolution.is_some() {
                    assert_eq!(status, EpochStatus::Resolved, "game read resolved first");
                    return;
                }
                assert!(tokio::time::Instant::now() < deadline, "never resolved");
                tokio::task::yield_now().await;
            }
        })
    };
    s.resolve_epoch(1, &output(), &resolutions).await.unwrap();
    watcher.await.unwrap();
    for (seq, id) in order.iter().enumerate().step_by(997) {
        let g = s.game(id).await.unwrap().unwrap();
        assert_eq!(g.seq, Some(seq as u64));
        assert!(g.resolution.is_some());
    }
    assert_eq!(s.game_counts().await.unwrap().resolved, u64::from(n));
}

/// A pool batch of `n` entries after `prev` (tiny T on the test modulus).
fn pool_batch(prev: Option<&PoolBatch>, n: u64) -> (PoolBatch, Vec<pool::Entry>) {
    let m = Modulus::by_name("test512").unwrap();
    let fast = Fast::prepare(&m).unwrap();
    let (number, first, prev_root) = match prev {
        Some(p) => (p.number + 1, p.end_index(), p.root),
        None => (1, 1, pool::GENESIS_ROOT),
    };
    let link = pool::BatchLink {
        batch: number,
        prev_root,
        anchor_epoch: 1,
        anchor_y: vec![3; 64],
    };
    let seed = pool::batch_seed(&link);
    let entries: Vec<pool::Entry> = (first..first + n)
        .map(|i| pool::compute_entry(&fast, &m, &seed, i, [i as u8; 32], 20).unwrap())
        .collect();
    let batch = PoolBatch {
        number,
        first_index: first,
        size: n,
        prev_root,
        anchor_epoch: 1,
        seed,
        root: pool::batch_root(&entries),
        committed_at_ms: 7,
    };
    (batch, entries)
}

/// What a bet builds from the entry it is served (the real one lives in the HTTP layer); the
/// bet arrives now.
fn instant(tag: u32) -> BuildInstant {
    instant_at(tag, None)
}

fn instant_at(tag: u32, created_at_ms: Option<i64>) -> BuildInstant {
    let created = created_at_ms.unwrap_or_else(vrs_observe::clock::now_ms);
    Box::new(move |e: &pool::Entry| {
        let mut g = game(900_000 + tag, "dice");
        g.created_at_ms = created;
        g.game_id = pool::game_id(e.index, &e.y);
        let r = resolution(&g.game_id);
        Ok((g, r))
    })
}

/// The pool chain: batches extend it or are refused; entries are served in index order, each
/// once, and stored resolved; an empty pool serves nothing and writes nothing.
async fn pool_serves_in_order(s: &dyn Store) {
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    assert_eq!(s.last_pool_batch().await.unwrap(), None);
    assert!(
        s.serve_instant(instant(0)).await.unwrap().is_none(),
        "empty pool"
    );
    let (b1, e1) = pool_batch(None, 3);
    let mut wrong = b1.clone();
    wrong.number = 2;
    assert!(matches!(
        s.commit_pool_batch(&wrong, &e1).await,
        Err(StoreError::Conflict(_))
    ));
    assert!(
        s.commit_pool_batch(&b1, &e1[..2]).await.is_err(),
        "entries missing"
    );
    s.commit_pool_batch(&b1, &e1).await.unwrap();
    assert!(
        s.commit_pool_batch(&b1, &e1).await.is_err(),
        "committed twice"
    );
    let (b2, e2) = pool_batch(Some(&b1), 2);
    let mut forked = b2.clone();
    forked.prev_root = [9; 32];
    assert!(
        s.commit_pool_batch(&forked, &e2).await.is_err(),
        "wrong previous root"
    );
    s.commit_pool_batch(&b2, &e2).await.unwrap();
    // The store stamps the commit time itself.
    let stamped = |b: &PoolBatch, at: i64| PoolBatch {
        committed_at_ms: at,
        ..b.clone()
    };
    let last = s.last_pool_batch().await.unwrap().unwrap();
    assert_eq!(last, stamped(&b2, last.committed_at_ms));
    let first = s.pool_batch(1).await.unwrap().unwrap();
    assert_eq!(first, stamped(&b1, first.committed_at_ms));
    assert!(first.committed_at_ms <= last.committed_at_ms);
    assert!(first.committed_at_ms > 1_000_000_000_000, "a real clock");
    assert!(
        s.serve_instant(instant_at(0, Some(first.committed_at_ms - 1)))
            .await
            .unwrap()
            .is_none(),
        "a bet that arrived before the batch was committed is not served from it"
    );
    let counts = s.pool_counts().await.unwrap();
    assert_eq!((counts.generated, counts.served, counts.depth()), (5, 0, 5));

    let mut served = Vec::new();
    for tag in 0..5 {
        let g = s
            .serve_instant(instant(tag))
            .await
            .unwrap()
            .expect("an entry");
        served.push(g);
    }
    assert!(
        s.serve_instant(instant(9)).await.unwrap().is_none(),
        "exhausted"
    );
    let all: Vec<&pool::Entry> = e1.iter().chain(&e2).collect();
    for (g, e) in served.iter().zip(&all) {
        assert_eq!(g.pool_index, Some(e.index), "strict index order");
        assert_eq!(g.new.game_id, pool::game_id(e.index, &e.y));
        let stored = s.game(&g.new.game_id).await.unwrap().unwrap();
        assert_eq!((stored.epoch, stored.pool_index), (None, Some(e.index)));
        assert_eq!(stored.bet_epoch, Some(1), "bound to the open epoch");
        assert_eq!(stored.resolution, g.resolution);
        let entry = s.pool_entry(e.index).await.unwrap().unwrap();
        assert_eq!(entry.entry, **e);
        assert_eq!(entry.game_id.as_deref(), Some(g.new.game_id.as_str()));
        assert!(entry.served_at_ms.is_some());
    }
    let in_batch: Vec<u64> = s
        .pool_batch_entries(2)
        .await
        .unwrap()
        .iter()
        .map(|e| e.entry.index)
        .collect();
    assert_eq!(in_batch, [4, 5]);
    let counts = s.pool_counts().await.unwrap();
    assert_eq!((counts.generated, counts.served, counts.depth()), (5, 5, 0));
    assert_eq!(s.game_counts().await.unwrap().total, 5);
}

/// Version 2: every game is stored with its signed acceptance, the signing keys are listed
/// (each with its first time), and a pool-served game's leaf joins the open epoch's tree after
/// that epoch's own games, whatever order they came in.
async fn acceptances_and_bound_pool_games(s: &dyn Store) {
    use vrs_protocol::acceptance::{message, verify, Place};
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let (a, b) = (AcceptanceSigner::generate(), AcceptanceSigner::generate());
    s.register_acceptance_key(a.public_key(), 10).await.unwrap();
    s.register_acceptance_key(b.public_key(), 20).await.unwrap();
    s.register_acceptance_key(a.public_key(), 30).await.unwrap();
    assert_eq!(
        s.acceptance_keys().await.unwrap(),
        [(a.public_key(), 10), (b.public_key(), 20)]
    );
    let signer = Arc::new(a);
    let g1 = game(1, "dice");
    let (e, signed) = s.insert_game(g1.clone(), &signer).await.unwrap();
    assert_eq!(e, 1);
    let h1 = vrs_engine::merkle::leaf_hash(&g1.leaf);
    verify(&signed, &message(Place::Epoch(1), &h1, g1.created_at_ms)).unwrap();
    let stored = s.game(&g1.game_id).await.unwrap().unwrap();
    assert_eq!(
        (stored.new.acceptance, stored.bet_epoch),
        (Some(signed), None)
    );

    let (b1, e1) = pool_batch(None, 2);
    s.commit_pool_batch(&b1, &e1).await.unwrap();
    let pool_signer = Arc::clone(&signer);
    let build: BuildInstant = Box::new(move |e: &pool::Entry| {
        let mut g = game(700_000 + e.index as u32, "dice");
        g.created_at_ms = vrs_observe::clock::now_ms();
        g.game_id = pool::game_id(e.index, &e.y);
        g.acceptance = Some(pool_signer.sign(Place::Pool(e.index), &g.leaf, g.created_at_ms));
        let r = resolution(&g.game_id);
        Ok((g, r))
    });
    let served = s.serve_instant(build).await.unwrap().expect("an entry");
    assert_eq!((served.bet_epoch, served.epoch), (Some(1), None));
    let stored = s.game(&served.new.game_id).await.unwrap().unwrap();
    assert_eq!(stored.bet_epoch, Some(1));
    let acc = stored.new.acceptance.expect("signed");
    let hp = vrs_engine::merkle::leaf_hash(&stored.new.leaf);
    verify(
        &acc,
        &message(Place::Pool(1), &hp, stored.new.created_at_ms),
    )
    .unwrap();
    // An epoch game after the instant one still comes before it in the tree.
    let g2 = game(2, "sicbo");
    s.insert_game(g2.clone(), &signer).await.unwrap();
    let leaves = vec![g1.leaf.clone(), g2.leaf.clone(), stored.new.leaf.clone()];
    assert_eq!(s.epoch_leaves(1).await.unwrap(), leaves);
    let games: Vec<String> = s
        .epoch_games(1)
        .await
        .unwrap()
        .into_iter()
        .map(|g| g.new.game_id)
        .collect();
    assert_eq!(
        games,
        [g1.game_id.clone(), g2.game_id.clone()],
        "only epoch-path games resolve from it"
    );
    assert_eq!(
        s.close_epoch(1, vrs_observe::clock::now_ms(), [7; 32], &crate::OPEN_ENDED)
            .await
            .unwrap(),
        leaves
    );
    let build: BuildInstant = Box::new(|e: &pool::Entry| {
        let mut g = game(800_000, "dice");
        g.created_at_ms = vrs_observe::clock::now_ms();
        g.game_id = pool::game_id(e.index, &e.y);
        let r = resolution(&g.game_id);
        Ok((g, r))
    });
    let later = s.serve_instant(build).await.unwrap().expect("an entry");
    assert_eq!(
        later.bet_epoch,
        Some(2),
        "served after the close: bound to the next epoch"
    );
    assert_eq!(
        s.epoch_leaves(1).await.unwrap(),
        leaves,
        "a closed tree gains nothing"
    );
    // The input commits to all three leaves; only the two epoch-path games resolve from it.
    s.set_epoch_input(1, &input(3)).await.unwrap();
    let rs = [resolution(&g1.game_id), resolution(&g2.game_id)];
    s.resolve_epoch(1, &output(), &rs).await.unwrap();
    let pool_game = s.game(&stored.new.game_id).await.unwrap().unwrap();
    assert_eq!(
        pool_game.resolution, stored.resolution,
        "its own outcome, untouched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_acceptances_and_bound_pool_games() {
    let dir = tempfile::tempdir().unwrap();
    acceptances_and_bound_pool_games(&SqliteStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_acceptances_and_bound_pool_games() {
    let schema = TestSchema::create("accept");
    acceptances_and_bound_pool_games(&pg(&schema).await).await;
}

/// The witnessed log (PROTOCOL §21): entries append at the log's size only, read back in
/// order from any index, and checkpoints are found by size and by the entry they cover.
async fn the_witnessed_log_appends_in_order(s: &dyn Store) {
    s.append_log_entries(0, vec![b"a".to_vec(), b"b".to_vec()])
        .await
        .unwrap();
    // A writer with a stale view (or a second one) writes nothing.
    let e = s
        .append_log_entries(1, vec![b"x".to_vec()])
        .await
        .unwrap_err();
    assert!(matches!(e, StoreError::Conflict(_)), "{e:?}");
    s.append_log_entries(2, vec![b"c".to_vec()]).await.unwrap();
    assert_eq!(
        s.log_entries(0, 10).await.unwrap(),
        [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]
    );
    assert_eq!(s.log_entries(1, 1).await.unwrap(), [b"b".to_vec()]);
    assert!(s.log_entries(3, 10).await.unwrap().is_empty());
    assert_eq!(s.latest_log_checkpoint().await.unwrap(), None);
    s.put_log_checkpoint(2, "two".into(), 1).await.unwrap();
    s.put_log_checkpoint(3, "three".into(), 2).await.unwrap();
    s.put_log_checkpoint(2, "two, cosigned".into(), 3)
        .await
        .unwrap();
    assert_eq!(
        s.latest_log_checkpoint().await.unwrap(),
        Some((3, "three".to_owned()))
    );
    assert_eq!(
        s.log_checkpoints_covering(0, 10).await.unwrap(),
        [(2, "two, cosigned".to_owned()), (3, "three".to_owned())]
    );
    assert_eq!(
        s.log_checkpoints_covering(0, 1).await.unwrap(),
        [(2, "two, cosigned".to_owned())]
    );
    assert_eq!(
        s.log_checkpoints_covering(2, 10).await.unwrap(),
        [(3, "three".to_owned())]
    );
    assert!(s.log_checkpoints_covering(3, 10).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_the_witnessed_log_appends_in_order() {
    let dir = tempfile::tempdir().unwrap();
    the_witnessed_log_appends_in_order(&SqliteStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_the_witnessed_log_appends_in_order() {
    let schema = TestSchema::create("tlog");
    the_witnessed_log_appends_in_order(&pg(&schema).await).await;
}

/// Serves one instant bet, which must find an entry.
async fn serve_one(s: &dyn Store, tag: u32) {
    s.serve_instant(instant(tag))
        .await
        .unwrap()
        .expect("an entry");
}

/// Stats' game counts add up through every stage a game goes through: pending in an open or a
/// closed epoch, settled when the epoch resolves; instant games resolved from the start, before
/// and after a resolution settles them; a resolution refused settles nothing.
async fn game_counts_add_up(s: &dyn Store) {
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let counts = |total, resolved, dice, sicbo| GameCounts {
        total,
        resolved,
        by_game: [("dice", dice), ("sicbo", sicbo)]
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(g, n)| (g.to_string(), n))
            .collect(),
    };
    assert_eq!(s.game_counts().await.unwrap(), counts(0, 0, 0, 0));
    let (b1, e1) = pool_batch(None, 6);
    s.commit_pool_batch(&b1, &e1).await.unwrap();
    for i in 0..3 {
        s.insert_game(game(i, "sicbo"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap();
    }
    for tag in 0..2 {
        serve_one(s, tag).await;
    }
    assert_eq!(s.game_counts().await.unwrap(), counts(5, 2, 2, 3));
    s.close_epoch(1, 1, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    // Its three games and the two instant games bound to it.
    s.set_epoch_input(1, &input(5)).await.unwrap();
    s.insert_game(game(3, "dice"), &signer())
        .await
        .map(|(e, _)| e)
        .unwrap();
    serve_one(s, 2).await;
    assert_eq!(s.game_counts().await.unwrap(), counts(7, 3, 4, 3));
    let rs: Vec<GameResolution> = (0..3).map(|i| resolution(&game(i, "").game_id)).collect();
    assert!(s.resolve_epoch(1, &output(), &rs[1..]).await.is_err());
    assert_eq!(s.game_counts().await.unwrap(), counts(7, 3, 4, 3));
    s.resolve_epoch(1, &output(), &rs).await.unwrap();
    assert_eq!(s.game_counts().await.unwrap(), counts(7, 6, 4, 3));
    assert!(s.resolve_epoch(1, &output(), &rs).await.is_err());
    serve_one(s, 3).await;
    assert_eq!(s.game_counts().await.unwrap(), counts(8, 7, 5, 3));
    // The next resolution settles the next epoch and only the instant games not yet settled.
    s.close_epoch(2, 2, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    s.set_epoch_input(2, &input(3)).await.unwrap();
    serve_one(s, 4).await;
    s.resolve_epoch(2, &output(), &[resolution(&game(3, "").game_id)])
        .await
        .unwrap();
    s.insert_game(game(4, "sicbo"), &signer())
        .await
        .map(|(e, _)| e)
        .unwrap();
    assert_eq!(s.game_counts().await.unwrap(), counts(10, 9, 6, 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_game_counts_add_up() {
    let dir = tempfile::tempdir().unwrap();
    game_counts_add_up(&SqliteStore::open(dir.path()).unwrap()).await;
    // The settled totals survive a reopening.
    let s = SqliteStore::open(dir.path()).unwrap();
    assert_eq!(s.game_counts().await.unwrap().resolved, 9);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_game_counts_add_up() {
    let schema = TestSchema::create("game_counts");
    game_counts_add_up(&pg(&schema).await).await;
}

/// Concurrent instant bets through several stores (replicas): every entry goes to exactly one
/// bet, the indices served are exactly 1..=n, and the rest find the pool empty.
async fn pool_entries_are_served_once(stores: Vec<Arc<dyn Store>>) {
    stores[0]
        .bootstrap("test512", 0, &crate::OPEN_ENDED)
        .await
        .unwrap();
    let (b1, e1) = pool_batch(None, 30);
    stores[0].commit_pool_batch(&b1, &e1).await.unwrap();
    let tasks: Vec<_> = (0..45u32)
        .map(|i| {
            let s = Arc::clone(&stores[i as usize % stores.len()]);
            tokio::spawn(async move { s.serve_instant(instant(i)).await.unwrap() })
        })
        .collect();
    let mut indices = Vec::new();
    let mut empty = 0;
    for t in tasks {
        match t.await.unwrap() {
            Some(g) => indices.push(g.pool_index.unwrap()),
            None => empty += 1,
        }
    }
    indices.sort_unstable();
    assert_eq!(indices, (1..=30).collect::<Vec<u64>>());
    assert_eq!(empty, 15);
}

/// Exactly one holder of the lease at a time; it passes on when the holder lets go.
async fn one_leader(a: &dyn Store, b: &dyn Store) {
    let lease = a
        .try_lead()
        .await
        .unwrap()
        .expect("the first candidate leads");
    for _ in 0..3 {
        assert!(b.try_lead().await.unwrap().is_none(), "two leaders");
    }
    drop(lease);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(mut lease) = b.try_lead().await.unwrap() {
            // A live lease is not reported lost.
            assert!(
                tokio::time::timeout(Duration::from_millis(1500), lease.lost())
                    .await
                    .is_err()
            );
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lease was never released"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn pg(schema: &TestSchema) -> PgStore {
    PgStore::connect(&schema.url()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_lifecycle() {
    let schema = TestSchema::create("lifecycle");
    lifecycle(&pg(&schema).await).await;
    // Everything is still there through a new connection.
    let s = pg(&schema).await;
    assert_eq!(s.game_counts().await.unwrap().total, 3);
    assert_eq!(s.open_epoch().await.unwrap().number, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_inserts_race_closes_across_replicas() {
    let schema = TestSchema::create("race");
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..3 {
        stores.push(Arc::new(pg(&schema).await));
    }
    inserts_race_closes(stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_closes_go_through_a_stream_of_inserts() {
    let schema = TestSchema::create("stream");
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..3 {
        stores.push(Arc::new(pg(&schema).await));
    }
    closes_go_through_a_stream_of_inserts(stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_closes_go_through_a_stream_of_inserts() {
    let dir = tempfile::tempdir().unwrap();
    closes_go_through_a_stream_of_inserts(vec![Arc::new(SqliteStore::open(dir.path()).unwrap())])
        .await;
}

/// An epoch closes at the close's clock, or later where one of its games was stamped later
/// (another replica's clock ahead of the closing one's); an earlier stamp changes nothing.
async fn a_game_stamped_after_the_close_moves_its_time(s: Arc<dyn Store>) {
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let early = game(40, "dice");
    s.insert_game(early, &signer()).await.unwrap();
    s.close_epoch(1, 50, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    assert_eq!(s.epoch(1).await.unwrap().unwrap().closed_at_ms, Some(50));
    let ahead = NewGame {
        created_at_ms: 10_000,
        ..game(41, "dice")
    };
    s.insert_game(ahead, &signer()).await.unwrap();
    s.insert_game(game(42, "rng"), &signer()).await.unwrap();
    s.close_epoch(2, 60, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    assert_eq!(
        s.epoch(2).await.unwrap().unwrap().closed_at_ms,
        Some(10_000)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_game_stamped_after_the_close_moves_its_time() {
    let schema = TestSchema::create("stamp");
    a_game_stamped_after_the_close_moves_its_time(Arc::new(pg(&schema).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_game_stamped_after_the_close_moves_its_time() {
    let dir = tempfile::tempdir().unwrap();
    a_game_stamped_after_the_close_moves_its_time(Arc::new(SqliteStore::open(dir.path()).unwrap()))
        .await;
}

/// Resolving an epoch only inserts (schema 9): its games' rows are never updated, so they
/// leave no dead tuple and no second index entry behind. Read from PostgreSQL's statistics,
/// which each session reports within about a second of going idle.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_resolving_an_epoch_leaves_the_games_rows_alone() {
    let schema = TestSchema::create("append");
    let s = pg(&schema).await;
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    let n = 300u32;
    for i in 0..n {
        s.insert_game(game(700_000 + i, "dice"), &signer())
            .await
            .unwrap();
    }
    s.close_epoch(1, 1, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    s.set_epoch_input(1, &input(u64::from(n))).await.unwrap();
    let resolutions: Vec<GameResolution> = s
        .epoch_games(1)
        .await
        .unwrap()
        .iter()
        .map(|g| resolution(&g.new.game_id))
        .collect();
    s.resolve_epoch(1, &output(), &resolutions).await.unwrap();
    let (client, conn) = tokio_postgres::connect(&schema.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let stats = "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables
                 WHERE schemaname = current_schema() AND relname IN ('games', 'game_results')
                 ORDER BY relname";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let rows = loop {
        let rows: Vec<(String, i64, i64, i64)> = client
            .query(stats, &[])
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
            .collect();
        let results_seen = rows
            .iter()
            .any(|r| r.0 == "game_results" && r.1 >= i64::from(n));
        if results_seen || tokio::time::Instant::now() > deadline {
            break rows;
        }
        client
            .batch_execute("SELECT pg_stat_clear_snapshot()")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let n = i64::from(n);
    assert_eq!(
        rows,
        vec![
            ("game_results".to_owned(), n, 0, 0),
            ("games".to_owned(), n, 0, 0)
        ],
        "(table, inserted, updated, deleted)"
    );
    // And every game reads back resolved, with its position.
    let games = s.epoch_games(1).await.unwrap();
    assert!(games
        .iter()
        .enumerate()
        .all(|(i, g)| g.resolution.is_some() && g.seq == Some(i as u64)));
    let one = s.game(&games[7].new.game_id).await.unwrap().unwrap();
    assert_eq!((one.seq, one.resolved_at_ms), (Some(7), Some(1_000)));

    // A game resolved before schema 9 has its result in its own row, and reads the same.
    let old = game(800_000, "dice");
    s.insert_game(old.clone(), &signer()).await.unwrap();
    schema.execute(&format!(
        "UPDATE games SET seq = 0, rng_value = '{}', dice = '1,2', won = true, payout = '1.98',
             resolved_at_ms = 5 WHERE game_id = '{}'",
        "ab".repeat(32),
        old.game_id
    ));
    let g = s.game(&old.game_id).await.unwrap().unwrap();
    assert_eq!(g.resolution, Some(resolution(&old.game_id)));
    assert_eq!((g.seq, g.resolved_at_ms), (Some(0), Some(5)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_a_large_epoch_resolves() {
    let schema = TestSchema::create("large");
    a_large_epoch_resolves(Arc::new(pg(&schema).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_a_large_epoch_resolves() {
    let dir = tempfile::tempdir().unwrap();
    a_large_epoch_resolves(Arc::new(SqliteStore::open(dir.path()).unwrap())).await;
}

/// A resolution cut off after some of its transactions (the process died) leaves results that
/// no reader sees; the next attempt writes them again and resolves the epoch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_resolution_cut_off_half_way_is_unseen_then_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (game(1, "dice"), game(2, "rng"));
    {
        let s = SqliteStore::open(dir.path()).unwrap();
        s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
        s.insert_game(a.clone(), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap();
        s.insert_game(b.clone(), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap();
        s.close_epoch(1, 50, [7; 32], &crate::OPEN_ENDED)
            .await
            .unwrap();
        s.set_epoch_input(1, &input(2)).await.unwrap();
    }
    {
        // What the first of resolve_epoch's transactions leaves when nothing follows it.
        let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).unwrap();
        let n = conn
            .execute(
                "UPDATE games SET rng_value = ?1, dice = '6,6', won = 0, payout = '0.00',
                     resolved_at_ms = 7 WHERE game_id = ?2",
                [&"cd".repeat(32), &a.game_id],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    let s = SqliteStore::open(dir.path()).unwrap();
    let g = s.game(&a.game_id).await.unwrap().unwrap();
    assert_eq!((g.resolution, g.resolved_at_ms), (None, None));
    assert!(s
        .epoch_games(1)
        .await
        .unwrap()
        .iter()
        .all(|g| g.resolution.is_none()));
    assert_eq!(s.recent_games(5).await.unwrap()[1].resolution, None);
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (2, 0));

    let rs = [resolution(&a.game_id), resolution(&b.game_id)];
    s.resolve_epoch(1, &output(), &rs).await.unwrap();
    let g = s.game(&a.game_id).await.unwrap().unwrap();
    assert_eq!(g.resolution, Some(rs[0].clone()));
    assert_eq!(g.resolved_at_ms, Some(1_000));
    assert_eq!(s.game_counts().await.unwrap().resolved, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_pool_serves_in_order() {
    let dir = tempfile::tempdir().unwrap();
    pool_serves_in_order(&SqliteStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_pool_serves_in_order() {
    let schema = TestSchema::create("pool");
    pool_serves_in_order(&pg(&schema).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_pool_entries_are_served_once() {
    let dir = tempfile::tempdir().unwrap();
    pool_entries_are_served_once(vec![Arc::new(SqliteStore::open(dir.path()).unwrap())]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_pool_entries_are_served_once_across_replicas() {
    let schema = TestSchema::create("poolrace");
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..3 {
        stores.push(Arc::new(pg(&schema).await));
    }
    pool_entries_are_served_once(stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_refuses_a_newer_schema() {
    let schema = TestSchema::create("newer");
    drop(pg(&schema).await);
    schema.execute("INSERT INTO schema_migrations (version, applied_at_ms) VALUES (999, 0)");
    let err = PgStore::connect(&schema.url()).await.unwrap_err();
    assert!(matches!(err, StoreError::Schema(_)), "{err}");
    assert!(err.to_string().contains("999"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_replicas_start_together_and_migrate_once() {
    let schema = TestSchema::create("together");
    let url = schema.url();
    let starts: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let s = PgStore::connect(&url).await.unwrap();
                s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
            })
        })
        .collect();
    for s in starts {
        s.await.unwrap();
    }
    let s = pg(&schema).await;
    assert_eq!(s.open_epoch().await.unwrap().number, 1, "one open epoch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_has_one_leader() {
    let schema = TestSchema::create("leader");
    one_leader(&pg(&schema).await, &pg(&schema).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_bad_urls_are_refused_clearly() {
    let err = PgStore::connect("mysql://nope").await.unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err}");
    // A port where nothing listens: unavailable, after the connect timeout at most.
    let err = PgStore::connect("postgres://postgres@127.0.0.1:1/test")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    // A search path naming no schema.
    let base = crate::pg::database_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    let err = PgStore::connect(&format!(
        "{base}{sep}options=-csearch_path%3Dvrs_no_such_schema"
    ))
    .await
    .unwrap_err();
    assert!(err.to_string().contains("search_path"), "{err}");
}

#[test]
fn sqlite_refuses_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    drop(SqliteStore::open(dir.path()).unwrap());
    let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).unwrap();
    conn.execute(
        "INSERT INTO schema_migrations (version, applied_at_ms) VALUES (999, 0)",
        [],
    )
    .unwrap();
    drop(conn);
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Schema(_)), "{err}");
    assert!(err.to_string().contains("999"), "{err}");
}

/// A store written at schema version 1 keeps its games through the upgrade to version 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_upgrade_from_version_1_keeps_games() {
    let dir = tempfile::tempdir().unwrap();
    {
        let conn = rusqlite::Connection::open(dir.path().join("vrs.sqlite3")).unwrap();
        conn.execute_batch(include_str!(
            "../../../store/migrations/sqlite/0001_init.sql"
        ))
        .unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,
                 applied_at_ms INTEGER NOT NULL);
             INSERT INTO schema_migrations VALUES (1, 0);
             INSERT INTO meta VALUES ('modulus', 'test512');
             INSERT INTO epochs (number, status, modulus, opened_at_ms) VALUES (1, 'open', 'test512', 5);
             INSERT INTO games (game_id, request_id, game, player_id, operator_key,
                 created_at_ms, epoch, seq, leaf)
             VALUES ('00000000000000000000000000000001', 'r', 'rng', 'p', 'o', 6, 1, 0, x'01');
             -- An older epoch, resolved: its game is settled in the counts' totals (schema 7).
             INSERT INTO epochs (number, status, modulus, opened_at_ms) VALUES (0, 'resolved', 'test512', 1);
             INSERT INTO games (game_id, request_id, game, player_id, operator_key,
                 created_at_ms, epoch, seq, leaf, rng_value, resolved_at_ms)
             VALUES ('00000000000000000000000000000000', 'r0', 'rng', 'p', 'o', 2, 0, 0, x'00',
                 'ab', 3);",
        )
        .unwrap();
    }
    let s = SqliteStore::open(dir.path()).unwrap();
    let g = s
        .game("00000000000000000000000000000001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((g.epoch, g.seq, g.pool_index), (Some(1), Some(0), None));
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (2, 1));
    assert_eq!(
        s.insert_game(game(2, "dice"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap(),
        1
    );
    assert_eq!(s.pool_counts().await.unwrap().served, 0);
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (3, 1));
    assert_eq!(counts.by_game.get("rng"), Some(&2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_upgrade_from_version_1_keeps_games() {
    let schema = TestSchema::create("upgrade");
    schema.execute(include_str!(
        "../../../store/migrations/postgres/0001_init.sql"
    ));
    schema.execute(
        "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at_ms BIGINT NOT NULL);
         INSERT INTO schema_migrations VALUES (1, 0);
         INSERT INTO meta VALUES ('modulus', 'test512');
         INSERT INTO epochs (number, status, modulus, opened_at_ms) VALUES (1, 'open', 'test512', 5);
         INSERT INTO games (game_id, request_id, game, player_id, operator_key, created_at_ms,
             epoch, leaf)
         VALUES ('00000000000000000000000000000001', 'r', 'rng', 'p', 'o', 6, 1, '\\x01');
         -- An older epoch, resolved: its game is settled in the counts' totals (schema 6).
         INSERT INTO epochs (number, status, modulus, opened_at_ms) VALUES (0, 'resolved', 'test512', 1);
         INSERT INTO games (game_id, request_id, game, player_id, operator_key, created_at_ms,
             epoch, leaf, seq, rng_value, resolved_at_ms)
         VALUES ('00000000000000000000000000000000', 'r0', 'rng', 'p', 'o', 2, 0, '\\x00', 0,
             'ab', 3);",
    );
    let s = pg(&schema).await;
    let g = s
        .game("00000000000000000000000000000001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((g.epoch, g.pool_index), (Some(1), None));
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (2, 1));
    assert_eq!(
        s.insert_game(game(2, "dice"), &signer())
            .await
            .map(|(e, _)| e)
            .unwrap(),
        1
    );
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (3, 1));
    assert_eq!(counts.by_game.get("rng"), Some(&2));
}

#[test]
fn sqlite_data_dir_is_locked_to_one_store() {
    let dir = tempfile::tempdir().unwrap();
    let first = SqliteStore::open(dir.path()).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(err.to_string().contains("in use"), "{err}");
    drop(first);
    SqliteStore::open(dir.path()).unwrap();
}

fn anchor_batch(number: u64, first: u64, last: u64, pool: (u64, u64)) -> AnchorBatch {
    AnchorBatch {
        number,
        first_epoch: first,
        last_epoch: last,
        pool_from: pool.0,
        pool_to: pool.1,
        notary_from: 1,
        notary_to: 1,
        leaves: last - first + 1 + pool.1 - pool.0,
        root: [number as u8; 32],
        created_at_ms: 1_000 + number as i64,
        status: AnchorState::Pending,
        tx_hash: None,
        block_number: None,
        confirmed_at_ms: None,
    }
}

fn anchor_tx(batch: u64, tag: u8, nonce: u64) -> AnchorTx {
    AnchorTx {
        hash: [tag; 32],
        batch,
        nonce,
        max_fee: 1_000_000_000_000_000_000_000 + u128::from(tag),
        priority_fee: 1,
        raw: vec![tag; 150],
        sent_at_ms: 2_000 + i64::from(tag),
    }
}

/// Anchor batches extend each other without gaps or overlaps; a transaction is recorded for
/// an existing, unconfirmed batch only; a batch is confirmed only by one of its own.
async fn anchor_batches_chain(s: &dyn Store) {
    assert!(s.last_anchor_batch().await.unwrap().is_none());
    s.insert_anchor_batch(&anchor_batch(1, 1, 3, (1, 1)))
        .await
        .unwrap();
    for bad in [
        anchor_batch(3, 4, 6, (1, 2)), // skips a number
        anchor_batch(2, 5, 6, (1, 2)), // leaves out epoch 4
        anchor_batch(2, 3, 6, (1, 2)), // overlaps epoch 3
        anchor_batch(2, 4, 6, (2, 3)), // skips pool batch 1
        anchor_batch(1, 1, 3, (1, 1)), // again
    ] {
        let err = s.insert_anchor_batch(&bad).await.unwrap_err();
        assert!(matches!(err, StoreError::Conflict(_)), "{bad:?}: {err}");
    }
    s.insert_anchor_batch(&anchor_batch(2, 4, 6, (1, 3)))
        .await
        .unwrap();
    assert_eq!(s.last_anchor_batch().await.unwrap().unwrap().number, 2);
    for (epoch, batch) in [
        (1, Some(1)),
        (3, Some(1)),
        (4, Some(2)),
        (6, Some(2)),
        (7, None),
    ] {
        let found = s.anchor_batch_for_epoch(epoch).await.unwrap();
        assert_eq!(found.map(|b| b.number), batch, "epoch {epoch}");
    }
    for (pool, batch) in [(1, Some(2)), (2, Some(2)), (3, None)] {
        let found = s.anchor_batch_for_pool(pool).await.unwrap();
        assert_eq!(found.map(|b| b.number), batch, "pool batch {pool}");
    }

    assert!(matches!(
        s.record_anchor_tx(&anchor_tx(9, 1, 0)).await,
        Err(StoreError::Conflict(_))
    ));
    s.record_anchor_tx(&anchor_tx(1, 1, 0)).await.unwrap();
    s.record_anchor_tx(&anchor_tx(1, 2, 0)).await.unwrap();
    let txs = s.anchor_txs(1).await.unwrap();
    assert_eq!(txs, vec![anchor_tx(1, 1, 0), anchor_tx(1, 2, 0)]);
    let open = s.open_anchor_batches().await.unwrap();
    assert_eq!(
        open.iter()
            .map(|b| (b.number, b.status))
            .collect::<Vec<_>>(),
        vec![(1, AnchorState::Submitted), (2, AnchorState::Pending)]
    );

    // Only a transaction recorded for the batch confirms it.
    for (batch, hash) in [(1, [7; 32]), (2, [1; 32])] {
        let err = s
            .confirm_anchor_batch(batch, hash, 10, 3_000)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Conflict(_)), "{err}");
    }
    s.confirm_anchor_batch(1, [2; 32], 10, 3_000).await.unwrap();
    let b = s.anchor_batch(1).await.unwrap().unwrap();
    assert_eq!(
        (b.status, b.tx_hash, b.block_number, b.confirmed_at_ms),
        (AnchorState::Confirmed, Some([2; 32]), Some(10), Some(3_000))
    );
    assert!(matches!(
        s.record_anchor_tx(&anchor_tx(1, 3, 0)).await,
        Err(StoreError::Conflict(_))
    ));
    let c = s.anchor_counts().await.unwrap();
    assert_eq!((c.pending, c.submitted, c.confirmed), (1, 0, 1));
    assert_eq!(c.last_confirmed.map(|b| b.number), Some(1));
    assert_eq!(c.last_batch.map(|b| b.number), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_anchor_batches_chain() {
    let dir = tempfile::tempdir().unwrap();
    anchor_batches_chain(&SqliteStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_anchor_batches_chain() {
    let schema = TestSchema::create("anchor_chain");
    anchor_batches_chain(&pg(&schema).await).await;
}

/// Two replicas storing the same next batch at once: exactly one succeeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_one_anchor_batch_wins_a_race() {
    let schema = TestSchema::create("anchor_race");
    let a = pg(&schema).await;
    let b = pg(&schema).await;
    for n in 1..=20u64 {
        let batch = anchor_batch(n, 3 * n - 2, 3 * n, (1, 1));
        let (x, y) = tokio::join!(a.insert_anchor_batch(&batch), b.insert_anchor_batch(&batch));
        assert!(x.is_ok() != y.is_ok(), "batch {n}: {x:?} / {y:?}");
    }
    assert_eq!(a.anchor_counts().await.unwrap().pending, 20);
}

fn key_payment(id: &str) -> Payment {
    Payment::ApiKey(id.into())
}

fn x402_payment(nonce: &str) -> Payment {
    Payment::X402 {
        asset: "0xasset".into(),
        payer: "0xpayer".into(),
        nonce: nonce.into(),
        tx_hash: Some(format!("0xtx{nonce}")),
    }
}

fn payment_nonce(nonce: &str) -> PaymentNonce {
    PaymentNonce {
        asset: "0xasset".into(),
        payer: "0xpayer".into(),
        nonce: nonce.into(),
    }
}

fn new_receipt(i: u32, payment: Payment) -> NewReceipt {
    NewReceipt {
        receipt_id: format!("rcpt_{i:08}"),
        schema: "sha256".into(),
        payload_hash: format!("{i:064x}"),
        metadata: format!("{{\"i\":{i}}}"),
        leaf_hash: vrs_engine::merkle::leaf_hash(format!("receipt {i}").as_bytes()),
        submitted_at_ms: 10_000 + i64::from(i),
        payment,
    }
}

fn api_key(id: &str, tag: u8, created_at_ms: i64) -> ApiKey {
    ApiKey {
        id: id.into(),
        name: format!("key {id}"),
        key_hash: [tag; 32],
        created_at_ms,
        revoked_at_ms: None,
        uses: 0,
        last_used_ms: None,
    }
}

fn idem(scope: &str, key: &str, tag: u8) -> IdempotencyKey {
    IdempotencyKey {
        scope: scope.into(),
        key: key.into(),
        request_hash: [tag; 32],
        claimed_at_ms: 0,
    }
}

fn response(status: u16) -> IdempotentResponse {
    IdempotentResponse {
        status,
        response: format!("{{\"status\":{status},\"body\":{{}}}}"),
    }
}

/// A receipt is stored with its API key's usage, read back as stored, and its id is unique.
async fn receipts_are_stored(s: &dyn Store) {
    s.create_api_key(&api_key("k1", 1, 5)).await.unwrap();
    assert!(s.receipt("rcpt_00000001").await.unwrap().is_none());
    s.insert_receipt(new_receipt(1, key_payment("k1")), None)
        .await
        .unwrap();
    let r = new_receipt(1, key_payment("k1"));
    let stored = s.receipt(&r.receipt_id).await.unwrap().unwrap();
    assert_eq!(
        stored,
        ReceiptRecord {
            receipt_id: r.receipt_id.clone(),
            schema: r.schema.clone(),
            payload_hash: r.payload_hash.clone(),
            metadata: r.metadata.clone(),
            leaf_hash: r.leaf_hash,
            submitted_at_ms: r.submitted_at_ms,
            payment_method: "api_key".into(),
            payer: "k1".into(),
            payment_tx: None,
            sealed: None,
        }
    );
    s.insert_receipt(new_receipt(2, key_payment("k1")), None)
        .await
        .unwrap();
    let err = s
        .insert_receipt(new_receipt(1, key_payment("k1")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(_)),
        "duplicate id: {err}"
    );
    let key = s.api_key_by_hash([1; 32]).await.unwrap().unwrap();
    assert_eq!(
        (key.uses, key.last_used_ms),
        (2, Some(new_receipt(2, key_payment("k1")).submitted_at_ms)),
        "the refused receipt is not counted"
    );
    let counts = s.notary_counts().await.unwrap();
    assert_eq!(
        (counts.receipts, counts.pending, counts.last_batch),
        (2, 2, None)
    );
}

/// Sealing takes unsealed receipts in acceptance order, at most `max` at a time, under an RFC
/// 6962 root over their leaf hashes; batches are numbered from 1 and anchored by range.
async fn receipts_are_sealed(s: &dyn Store) {
    assert_eq!(
        s.seal_notary_batch(10, 1).await.unwrap(),
        None,
        "nothing to seal"
    );
    s.create_api_key(&api_key("k1", 1, 5)).await.unwrap();
    // Inserted out of id order: acceptance order is what counts.
    let order = [5u32, 3, 9, 1, 7];
    for i in order {
        s.insert_receipt(new_receipt(i, key_payment("k1")), None)
            .await
            .unwrap();
    }
    let leaf = |i: u32| new_receipt(i, key_payment("k1")).leaf_hash;
    let b1 = s.seal_notary_batch(3, 100).await.unwrap().unwrap();
    let first: Vec<[u8; 32]> = order[..3].iter().map(|&i| leaf(i)).collect();
    assert_eq!(
        b1,
        NotaryBatch {
            number: 1,
            size: 3,
            root: vrs_engine::merkle::root(&first),
            created_at_ms: 100,
        }
    );
    assert_eq!(s.notary_batch_leaves(1).await.unwrap(), first);
    let counts = s.notary_counts().await.unwrap();
    assert_eq!((counts.receipts, counts.pending), (5, 2));
    assert_eq!(counts.last_batch, Some(b1.clone()));

    let b2 = s.seal_notary_batch(3, 200).await.unwrap().unwrap();
    let second: Vec<[u8; 32]> = order[3..].iter().map(|&i| leaf(i)).collect();
    assert_eq!(
        (b2.number, b2.size, b2.root, b2.created_at_ms),
        (2, 2, vrs_engine::merkle::root(&second), 200)
    );
    assert_eq!(s.notary_batch_leaves(2).await.unwrap(), second);
    assert_eq!(
        s.seal_notary_batch(3, 300).await.unwrap(),
        None,
        "all sealed"
    );
    assert!(s.notary_batch_leaves(3).await.unwrap().is_empty());
    for (pos, &i) in order.iter().enumerate() {
        let r = s.receipt(&format!("rcpt_{i:08}")).await.unwrap().unwrap();
        let expected = if pos < 3 {
            (1, pos as u64)
        } else {
            (2, pos as u64 - 3)
        };
        assert_eq!(r.sealed, Some(expected), "receipt {i}");
    }
    assert_eq!(s.notary_batch(1).await.unwrap(), Some(b1.clone()));
    assert_eq!(s.notary_batch(3).await.unwrap(), None);
    assert_eq!(
        s.notary_batches(1, 3).await.unwrap(),
        vec![b1.clone(), b2.clone()]
    );
    assert_eq!(s.notary_batches(2, 9).await.unwrap(), vec![b2.clone()]);
    assert!(s.notary_batches(1, 1).await.unwrap().is_empty());
    let counts = s.notary_counts().await.unwrap();
    assert_eq!((counts.receipts, counts.pending), (5, 0));
    assert_eq!(counts.last_batch, Some(b2));

    // Anchor batches carry notary ranges: batch 1 holds notary batch 1, batch 2 holds 2.
    let mut a1 = anchor_batch(1, 1, 3, (1, 1));
    (a1.notary_from, a1.notary_to) = (1, 2);
    s.insert_anchor_batch(&a1).await.unwrap();
    let mut gap = anchor_batch(2, 4, 6, (1, 1));
    (gap.notary_from, gap.notary_to) = (3, 4);
    assert!(
        matches!(
            s.insert_anchor_batch(&gap).await,
            Err(StoreError::Conflict(_))
        ),
        "skips notary batch 2"
    );
    let mut a2 = anchor_batch(2, 4, 6, (1, 1));
    (a2.notary_from, a2.notary_to) = (2, 3);
    s.insert_anchor_batch(&a2).await.unwrap();
    assert_eq!(s.anchor_batch(2).await.unwrap(), Some(a2.clone()));
    assert_eq!(s.last_anchor_batch().await.unwrap(), Some(a2));
    for (notary, anchor) in [(1, Some(1)), (2, Some(2)), (3, None), (0, None)] {
        let found = s.anchor_batch_for_notary(notary).await.unwrap();
        assert_eq!(found.map(|b| b.number), anchor, "notary batch {notary}");
    }
}

/// API keys: stored once (id and hash unique), listed oldest first, found by hash, revoked
/// once.
async fn api_keys_are_managed(s: &dyn Store) {
    assert!(s.api_keys().await.unwrap().is_empty());
    s.create_api_key(&api_key("kb", 2, 20)).await.unwrap();
    s.create_api_key(&api_key("ka", 1, 20)).await.unwrap();
    s.create_api_key(&api_key("kc", 3, 10)).await.unwrap();
    for dup in [api_key("ka", 9, 30), api_key("kd", 1, 30)] {
        let err = s.create_api_key(&dup).await.unwrap_err();
        assert!(matches!(err, StoreError::Conflict(_)), "{dup:?}: {err}");
    }
    let ids: Vec<String> = s
        .api_keys()
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.id)
        .collect();
    assert_eq!(ids, ["kc", "ka", "kb"]);
    assert_eq!(
        s.api_key_by_hash([2; 32]).await.unwrap(),
        Some(api_key("kb", 2, 20))
    );
    assert_eq!(s.api_key_by_hash([7; 32]).await.unwrap(), None);
    assert!(s.revoke_api_key("kb", 100).await.unwrap());
    assert!(s.revoke_api_key("kb", 200).await.unwrap());
    assert!(!s.revoke_api_key("nope", 300).await.unwrap());
    let kb = s.api_key_by_hash([2; 32]).await.unwrap().unwrap();
    assert_eq!(kb.revoked_at_ms, Some(100), "the first revocation stands");
    let listed = s.api_keys().await.unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|k| (k.id.as_str(), k.revoked_at_ms))
            .collect::<Vec<_>>(),
        [("kc", None), ("ka", None), ("kb", Some(100))]
    );
}

/// An x402 nonce is reserved once (whatever became of it) and settles exactly one receipt.
async fn payment_nonces_pay_once(s: &dyn Store) {
    let n1 = payment_nonce("0x01");
    assert!(s.reserve_payment_nonce(&n1, 1, "{}").await.unwrap());
    assert!(
        !s.reserve_payment_nonce(&n1, 2, "{}").await.unwrap(),
        "seen"
    );
    s.fail_payment_nonce(&n1, "transfer reverted")
        .await
        .unwrap();
    assert!(
        !s.reserve_payment_nonce(&n1, 3, "{}").await.unwrap(),
        "a failed nonce stays seen"
    );
    let err = s
        .insert_receipt(new_receipt(1, x402_payment("0x01")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(_)),
        "failed nonce: {err}"
    );
    let err = s
        .insert_receipt(new_receipt(2, x402_payment("0x99")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(_)),
        "unknown nonce: {err}"
    );
    assert!(s.receipt("rcpt_00000001").await.unwrap().is_none());
    assert!(s.receipt("rcpt_00000002").await.unwrap().is_none());

    let n2 = payment_nonce("0x02");
    assert!(s
        .reserve_payment_nonce(&n2, 4, r#"{"prepared":2}"#)
        .await
        .unwrap());
    // The recovery sees nonces still settling, reserved before its cut-off, with what their
    // requests prepared (n1 failed: not settling).
    assert_eq!(s.settling_payments(4, 10).await.unwrap(), vec![]);
    assert_eq!(
        s.settling_payments(5, 10).await.unwrap(),
        vec![SettlingPayment {
            nonce: n2.clone(),
            seen_at_ms: 4,
            prepared: Some(r#"{"prepared":2}"#.to_owned()),
        }]
    );
    s.insert_receipt(new_receipt(3, x402_payment("0x02")), None)
        .await
        .unwrap();
    let r = s.receipt("rcpt_00000003").await.unwrap().unwrap();
    assert_eq!(
        (
            r.payment_method.as_str(),
            r.payer.as_str(),
            r.payment_tx.as_deref()
        ),
        ("x402", "0xpayer", Some("0xtx0x02"))
    );
    let err = s
        .insert_receipt(new_receipt(4, x402_payment("0x02")), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::Conflict(_)),
        "settled twice: {err}"
    );
    assert!(s.receipt("rcpt_00000004").await.unwrap().is_none());
    assert_eq!(
        s.settling_payments(100, 10).await.unwrap(),
        vec![],
        "settled"
    );
    // Failing a settled nonce changes nothing.
    s.fail_payment_nonce(&n2, "late").await.unwrap();
    assert!(!s.reserve_payment_nonce(&n2, 5, "{}").await.unwrap());
    assert_eq!(s.notary_counts().await.unwrap().receipts, 1);
}

/// Idempotency-Keys: a claim starts, is in flight, replays once completed with its receipt,
/// refuses another request body, is freed by a release, taken over when stale, and purged.
async fn idempotency_keys_replay(s: &dyn Store) {
    const STALE: i64 = 1_000;
    s.create_api_key(&api_key("k1", 1, 5)).await.unwrap();
    let a = idem("k1", "key-a", 1);
    assert_eq!(
        s.claim_idempotency_key(&a.at(100), STALE).await.unwrap(),
        IdempotencyClaim::Started
    );
    assert_eq!(
        s.claim_idempotency_key(&a.at(200), STALE).await.unwrap(),
        IdempotencyClaim::InFlight
    );
    let other_body = idem("k1", "key-a", 2);
    assert_eq!(
        s.claim_idempotency_key(&other_body.at(200), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Mismatch
    );
    assert_eq!(
        s.claim_idempotency_key(&idem("k2", "key-a", 2).at(200), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Started,
        "keys are per scope"
    );
    s.insert_receipt(
        new_receipt(1, key_payment("k1")),
        Some((a.at(100), response(201))),
    )
    .await
    .unwrap();
    for at in [300, 100 + 10 * STALE] {
        assert_eq!(
            s.claim_idempotency_key(&a.at(at), STALE).await.unwrap(),
            IdempotencyClaim::Replay(response(201)),
            "at {at}"
        );
    }
    assert_eq!(
        s.claim_idempotency_key(&other_body.at(300), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Mismatch
    );
    // A receipt whose key no longer holds its claim (completed, or never claimed) is stored,
    // and the key keeps its first answer.
    for (n, key) in [(2, a.at(100)), (3, idem("k1", "never-claimed", 1).at(300))] {
        s.insert_receipt(
            new_receipt(n, key_payment("k1")),
            Some((key, response(299))),
        )
        .await
        .unwrap();
        assert!(s
            .receipt(&format!("rcpt_0000000{n}"))
            .await
            .unwrap()
            .is_some());
    }
    assert_eq!(
        s.claim_idempotency_key(&a.at(400), STALE).await.unwrap(),
        IdempotencyClaim::Replay(response(201))
    );
    assert_eq!(s.api_key_by_hash([1; 32]).await.unwrap().unwrap().uses, 3);

    // A released claim can be made again; releasing a completed one does nothing.
    let b = idem("k1", "key-b", 3);
    assert_eq!(
        s.claim_idempotency_key(&b.at(400), STALE).await.unwrap(),
        IdempotencyClaim::Started
    );
    s.release_idempotency_key(&b.at(400)).await.unwrap();
    s.release_idempotency_key(&idem("k1", "no-such-key", 3).at(400))
        .await
        .unwrap();
    assert_eq!(
        s.claim_idempotency_key(&idem("k1", "key-b", 4).at(500), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Started,
        "released: any request may use it"
    );
    s.release_idempotency_key(&a.at(100)).await.unwrap();
    assert_eq!(
        s.claim_idempotency_key(&a.at(600), STALE).await.unwrap(),
        IdempotencyClaim::Replay(response(201))
    );

    // A claim abandoned for `STALE` is taken over, once.
    let c = idem("k1", "key-c", 5);
    assert_eq!(
        s.claim_idempotency_key(&c.at(1_000), STALE).await.unwrap(),
        IdempotencyClaim::Started
    );
    assert_eq!(
        s.claim_idempotency_key(&c.at(1_999), STALE).await.unwrap(),
        IdempotencyClaim::InFlight
    );
    assert_eq!(
        s.claim_idempotency_key(&c.at(2_000), STALE).await.unwrap(),
        IdempotencyClaim::Started,
        "stale: taken over"
    );
    assert_eq!(
        s.claim_idempotency_key(&c.at(2_500), STALE).await.unwrap(),
        IdempotencyClaim::InFlight,
        "the takeover is in flight now"
    );
    // The request that lost its claim can neither release nor complete it: its receipt is
    // stored (it was paid for), the key stays the takeover's.
    s.release_idempotency_key(&c.at(1_000)).await.unwrap();
    s.insert_receipt(
        new_receipt(4, key_payment("k1")),
        Some((c.at(1_000), response(298))),
    )
    .await
    .unwrap();
    assert!(s.receipt("rcpt_00000004").await.unwrap().is_some());
    assert_eq!(
        s.claim_idempotency_key(&c.at(2_500), STALE).await.unwrap(),
        IdempotencyClaim::InFlight,
        "still the takeover's"
    );
    assert_eq!(
        s.claim_idempotency_key(&idem("k1", "key-c", 6).at(9_000), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Mismatch,
        "a stale claim still belongs to its request body"
    );

    // Purging drops completed records older than the cut-off, never one in flight.
    assert_eq!(s.purge_idempotency_keys(100).await.unwrap(), 0);
    assert_eq!(s.purge_idempotency_keys(1_000_000).await.unwrap(), 1);
    assert_eq!(
        s.claim_idempotency_key(&idem("k1", "key-a", 7).at(700), STALE)
            .await
            .unwrap(),
        IdempotencyClaim::Started,
        "purged: the key is new again"
    );
    assert_eq!(
        s.claim_idempotency_key(&c.at(2_600), STALE).await.unwrap(),
        IdempotencyClaim::InFlight,
        "in flight: kept"
    );
}

/// Receipts from many concurrent writers (some of them duplicates, all on one API key):
/// each id is stored once, the key counts exactly the stored ones, and all get sealed.
async fn concurrent_receipts(stores: Vec<Arc<dyn Store>>) {
    stores[0]
        .create_api_key(&api_key("k1", 1, 5))
        .await
        .unwrap();
    stores[0]
        .create_api_key(&api_key("k2", 2, 5))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..300u32)
        .map(|t| {
            let s = Arc::clone(&stores[t as usize % stores.len()]);
            let key = if t % 3 == 0 { "k2" } else { "k1" };
            tokio::spawn(async move {
                s.insert_receipt(new_receipt(t % 200, key_payment(key)), None)
                    .await
            })
        })
        .collect();
    let (mut ok, mut conflicts) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(()) => ok += 1,
            Err(StoreError::Conflict(_)) => conflicts += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, conflicts), (200, 100));
    let s = &stores[0];
    let uses: u64 = s.api_keys().await.unwrap().iter().map(|k| k.uses).sum();
    assert_eq!(uses, 200);
    let counts = s.notary_counts().await.unwrap();
    assert_eq!((counts.receipts, counts.pending), (200, 200));
    let b1 = s.seal_notary_batch(150, 1).await.unwrap().unwrap();
    let b2 = s.seal_notary_batch(150, 2).await.unwrap().unwrap();
    assert_eq!((b1.size, b2.size), (150, 50));
    assert_eq!(s.seal_notary_batch(150, 3).await.unwrap(), None);
    for b in [b1, b2] {
        let leaves = s.notary_batch_leaves(b.number).await.unwrap();
        assert_eq!(vrs_engine::merkle::root(&leaves), b.root);
    }
}

macro_rules! notary_conformance {
    ($($test:ident: $body:ident,)*) => {
        mod notary {
            use super::*;
            $(
                mod $test {
                    use super::*;

                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn sqlite() {
                        let dir = tempfile::tempdir().unwrap();
                        $body(&SqliteStore::open(dir.path()).unwrap()).await;
                    }

                    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                    async fn postgres() {
                        let schema = TestSchema::create(stringify!($test));
                        $body(&pg(&schema).await).await;
                    }
                }
            )*
        }
    };
}

notary_conformance! {
    receipts_are_stored: receipts_are_stored,
    receipts_are_sealed: receipts_are_sealed,
    api_keys_are_managed: api_keys_are_managed,
    payment_nonces_pay_once: payment_nonces_pay_once,
    idempotency_keys_replay: idempotency_keys_replay,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_concurrent_receipts() {
    let dir = tempfile::tempdir().unwrap();
    concurrent_receipts(vec![Arc::new(SqliteStore::open(dir.path()).unwrap())]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_concurrent_receipts_across_replicas() {
    let schema = TestSchema::create("receipts");
    let mut stores: Vec<Arc<dyn Store>> = Vec::new();
    for _ in 0..2 {
        stores.push(Arc::new(pg(&schema).await));
    }
    concurrent_receipts(stores).await;
}

/// Concurrent claims of one Idempotency-Key through two replicas: exactly one starts, and the
/// same holds when they race to take over a stale claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_one_idempotency_claim_wins_a_race() {
    let schema = TestSchema::create("idem_race");
    let stores: Vec<Arc<dyn Store>> =
        vec![Arc::new(pg(&schema).await), Arc::new(pg(&schema).await)];
    for round in 0..10u32 {
        let key = idem("k1", &format!("race-{round}"), 1);
        for (at, what) in [(1_000, "new key"), (5_000, "stale takeover")] {
            let claims: Vec<_> = (0..8)
                .map(|i| {
                    let (s, key) = (Arc::clone(&stores[i % 2]), key.clone());
                    tokio::spawn(async move { s.claim_idempotency_key(&key.at(at), 1_000).await })
                })
                .collect();
            let mut started = 0;
            for c in claims {
                match c.await.unwrap().unwrap() {
                    IdempotencyClaim::Started => started += 1,
                    IdempotencyClaim::InFlight => {}
                    other => panic!("round {round}, {what}: {other:?}"),
                }
            }
            assert_eq!(started, 1, "round {round}, {what}");
        }
    }
}

/// An epoch resolved with its games held (a server with witnesses, docs/PROTOCOL.md §21,
/// "Voids"): its output is stored and the chain goes on, its games stay pending (and count
/// as pending) until released with the output of the epoch they resolve with, once.
async fn held_games_wait_for_their_epoch(s: &dyn Store) {
    s.bootstrap("test512", 0, &crate::OPEN_ENDED).await.unwrap();
    for i in 1..=2 {
        s.insert_game(game(i, "dice"), &signer()).await.unwrap();
    }
    s.close_epoch(1, 50, [7; 32], &crate::OPEN_ENDED)
        .await
        .unwrap();
    s.set_epoch_input(1, &input(2)).await.unwrap();
    let (r1, r2) = (
        resolution(&game(1, "").game_id),
        resolution(&game(2, "").game_id),
    );
    assert!(
        s.resolve_held_games(1, 1, &[r1.clone(), r2.clone()])
            .await
            .is_err(),
        "not held yet"
    );
    s.resolve_epoch_holding_games(1, &output()).await.unwrap();
    let e1 = s.epoch(1).await.unwrap().unwrap();
    assert_eq!(e1.status, EpochStatus::Resolved);
    assert_eq!(e1.output, Some(output()));
    assert_eq!(s.latest_resolved_epoch().await.unwrap().unwrap().number, 1);
    assert!(s.unresolved_epochs().await.unwrap().is_empty());
    assert_eq!(s.held_epochs().await.unwrap(), [1]);
    assert_eq!(s.games_outcome_epoch(1).await.unwrap(), None);
    let g1 = s.game(&r1.game_id).await.unwrap().unwrap();
    assert!(g1.resolution.is_none(), "a held game reads pending");
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (2, 0));
    // Every game once, or nothing is written.
    assert!(s
        .resolve_held_games(1, 4, std::slice::from_ref(&r1))
        .await
        .is_err());
    assert!(s
        .game(&r1.game_id)
        .await
        .unwrap()
        .unwrap()
        .resolution
        .is_none());
    s.resolve_held_games(1, 4, &[r1.clone(), r2.clone()])
        .await
        .unwrap();
    assert_eq!(
        s.game(&r1.game_id).await.unwrap().unwrap().resolution,
        Some(r1.clone())
    );
    assert!(s.held_epochs().await.unwrap().is_empty());
    assert_eq!(s.games_outcome_epoch(1).await.unwrap(), Some(4));
    let counts = s.game_counts().await.unwrap();
    assert_eq!((counts.total, counts.resolved), (2, 2));
    assert!(
        s.resolve_held_games(1, 4, &[r1, r2]).await.is_err(),
        "released once"
    );
    assert_eq!(s.games_outcome_epoch(2).await.unwrap(), None, "open");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_held_games_wait_for_their_epoch() {
    let dir = tempfile::tempdir().unwrap();
    held_games_wait_for_their_epoch(&SqliteStore::open(dir.path()).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_held_games_wait_for_their_epoch() {
    let schema = TestSchema::create("held");
    held_games_wait_for_their_epoch(&pg(&schema).await).await;
}
