//! `vrs witness` against a test-only operator's log (vrs_testkit::operator_log): the C2SP
//! tlog-witness answers for each way a checkpoint can be wrong, the application rules for each
//! way an operator can cheat (a second commitment for one epoch, a withheld or backdated one),
//! state kept across kill -9, and the `witnessed` step over three real witnesses.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use vrs_protocol::tlog::entry::{
    AnchorEntry, CommitmentEntry, MoveEntry, OperatorEntry, OutputEntry, PlanEntry, VoidEntry,
};
use vrs_protocol::tlog::note::{parse_vkey, verify_checkpoint};
use vrs_protocol::tlog::witnessed::{self, LoggedEntry, WitnessFloor};
use vrs_protocol::tlog::{LogEntry, LogTree};
use vrs_testkit::operator_log::{post, TestLog};

const ORIGIN: &str = "vrs.test/log";
const SEED: [u8; 32] = [42; 32];

/// A running `vrs witness`; killed when dropped.
pub struct WitnessProc {
    child: Child,
    pub url: String,
    pub vkey: String,
}

impl WitnessProc {
    pub fn start(state: &Path, name: &str, logs: &[String], delta_ms: u64) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_vrs"));
        cmd.args(["witness", "--name", name, "--addr", "127.0.0.1:0"])
            .arg("--state-dir")
            .arg(state)
            .args(["--delta-ms", &delta_ms.to_string()]);
        for l in logs {
            cmd.args(["--log", l]);
        }
        let mut child = cmd
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .spawn()
            .expect("vrs witness starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut vkey = String::new();
        let url = loop {
            let line = lines
                .next()
                .expect("vrs witness printed its URL")
                .expect("UTF-8");
            if let Some(k) = line.strip_prefix("vrs witness key ") {
                vkey = k.trim().to_owned();
            }
            if let Some(u) = line.strip_prefix("vrs witness listening on ") {
                break u.trim().to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Self { child, url, vkey }
    }

    /// SIGSTOP (down: connections hang) or SIGCONT.
    pub fn freeze(&self, frozen: bool) {
        let sig = if frozen { "-STOP" } else { "-CONT" };
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap()
            .success());
    }

    /// SIGKILL: no chance to flush anything.
    fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` witnesses `w.test/0`, `w.test/1`, … of `log` (a `--log` argument), each with a state
/// directory of its own (kept with it).
pub fn start_witnesses(
    n: usize,
    log: &str,
    delta_ms: u64,
) -> Vec<(WitnessProc, tempfile::TempDir)> {
    (0..n)
        .map(|i| {
            let dir = tempfile::tempdir().unwrap();
            let w = WitnessProc::start(
                dir.path(),
                &format!("w.test/{i}"),
                &[log.to_owned()],
                delta_ms,
            );
            (w, dir)
        })
        .collect()
}

impl Drop for WitnessProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now() -> u64 {
    vrs_observe::clock::now_ms() as u64
}

fn operator() -> LogEntry {
    LogEntry::Operator(OperatorEntry {
        stamped_ms: now(),
        group: "test512".into(),
        acceptance_key: [1; 32],
        anchor_chain_id: 0,
        anchor_address: [0; 20],
    })
}

fn plan(e: u64, opened: u64, iterations: u64) -> LogEntry {
    plan_until(e, opened, opened + 60_000, iterations)
}

fn plan_until(e: u64, opened: u64, deadline: u64, iterations: u64) -> LogEntry {
    LogEntry::Plan(PlanEntry {
        epoch: e,
        previous: e - 1,
        iterations,
        margin_centi: 150,
        squarings_per_second: 1_000_000,
        opened_ms: opened,
        deadline_ms: deadline,
    })
}

fn output(e: u64, y: &[u8]) -> LogEntry {
    LogEntry::Output(OutputEntry::of(e, y))
}

fn commit(e: u64, opened: u64, closed: u64, nonce: u8, iterations: u64) -> LogEntry {
    LogEntry::Commitment(CommitmentEntry {
        epoch: e,
        previous: e - 1,
        bets_root: [0; 32],
        bet_count: 0,
        nonce: [nonce; 32],
        iterations,
        margin_centi: 150,
        squarings_per_second: 1_000_000,
        opened_ms: opened,
        closed_ms: closed,
    })
}

const T: u64 = 1_000_000;

fn void(e: u64) -> LogEntry {
    LogEntry::Void(VoidEntry {
        epoch: e,
        stamped_ms: now(),
    })
}

fn moved(e: u64, to: u64, root: u8) -> LogEntry {
    LogEntry::Move(MoveEntry {
        epoch: e,
        to,
        bets_root: [root; 32],
        bet_count: 0,
    })
}

/// Rule 9: a witness moves a void epoch's games to an open later epoch only when it did not
/// cosign the epoch's commitment at a time a verifier may count in time (a void sent with the
/// commitment changes nothing), once, with the bets the commitment fixed; and it remembers what
/// it vouched for across kill -9.
#[test]
fn a_witness_moves_a_void_epochs_games_only_if_it_did_not_vouch_for_its_commitment() {
    let dir = tempfile::tempdir().unwrap();
    let log = TestLog::start(ORIGIN, SEED, LogTree::new());
    let w = WitnessProc::start(dir.path(), "w.test/1", &[log.witness_arg()], 2_000);
    let t1 = now();
    log.append(&operator());
    log.append(&plan(1, t1, T));
    assert_eq!(log.push(&w.url, 0).0, 200);
    // Epoch 1 committed in time, but sent with a void of itself, as an operator that wants to
    // keep the move open until it has seen y_1 would send it; epoch 2's plan has a deadline
    // 100 ms after its opening.
    let t2 = now();
    let short = plan_until(2, t2, t2 + 100, T);
    for e in [commit(1, t1, t2, 1, T), void(1), short] {
        log.append(&e);
    }
    assert_eq!(log.push(&w.url, 2).0, 200);
    let mut second_draw = log.prefix(5);
    second_draw.append(moved(1, 2, 0).encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &second_draw, 5);
    assert_eq!(status, 403, "{why}");
    assert!(
        why.contains("whose commitment this witness cosigned in time"),
        "{why}"
    );

    w.kill9();
    let w = WitnessProc::start(dir.path(), "w.test/1", &[log.witness_arg()], 2_000);
    let (status, why) = log.push_tree(&w.url, &second_draw, 5);
    assert_eq!(status, 403, "after kill -9: {why}");

    // Epoch 2's commitment reaches the witness past its deadline + δ + 1 s, with its void: it
    // vouches for nothing, and its games move to epoch 3, open, with the bets it committed;
    // once.
    // (Until the witness's clock is past it: δ is 2 s.)
    while now() <= t2 + 100 + 2_000 + 1_000 + 100 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let t3 = now();
    for e in [commit(2, t2, t2 + 100, 2, T), void(2), plan(3, t3, T)] {
        log.append(&e);
    }
    let mut other_bets = log.prefix(8);
    other_bets.append(moved(2, 3, 9).encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &other_bets, 5);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("other bets than its commitment's"), "{why}");
    log.append(&moved(2, 3, 0));
    let (status, why) = log.push(&w.url, 5);
    assert_eq!(status, 200, "{why}");
    log.append(&moved(2, 3, 0));
    let (status, why) = log.push(&w.url, 9);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("a second move of epoch 2"), "{why}");
}

#[test]
fn a_witness_answers_every_wrong_checkpoint_with_the_protocols_status_and_keeps_it_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let log = TestLog::start(ORIGIN, SEED, LogTree::new());
    let w = WitnessProc::start(dir.path(), "w.test/1", &[log.witness_arg()], 2_000);

    // An honest start: the operator's declaration and epoch 1's plan, from the empty tree.
    let t1 = now();
    log.append(&operator());
    log.append(&plan(1, t1, T));
    let (status, line) = log.push(&w.url, 0);
    assert_eq!(status, 200, "{line}");
    assert!(
        line.starts_with("— w.test/1 ") && line.ends_with('\n'),
        "{line}"
    );
    let cosigned = [log.checkpoint(), line.into_bytes()].concat();
    let v = verify_checkpoint(
        &cosigned,
        &parse_vkey(&log.vkey()).unwrap(),
        &[parse_vkey(&w.vkey).unwrap()],
    )
    .unwrap();
    assert_eq!(v.size, 2);
    assert_eq!(v.cosignatures.len(), 1);

    // Epoch 1 committed on time, epoch 2 planned.
    let t2 = now();
    log.append(&commit(1, t1, t2, 1, T));
    log.append(&plan(2, t2, T));
    assert_eq!(log.push(&w.url, 2).0, 200);

    // 409: the old size is not the witness's, with its size as the body.
    let r = ureq::post(&format!("{}/add-checkpoint", w.url)).send_bytes(&log.submission(0));
    let Err(ureq::Error::Status(409, resp)) = r else {
        panic!("expected 409, got {r:?}")
    };
    assert_eq!(resp.content_type(), "text/x.tlog.size");
    assert_eq!(resp.into_string().unwrap(), "4\n");

    // 404: a log the witness does not know.
    let stranger = TestLog::start("other.test/log", SEED, LogTree::new());
    stranger.append(&operator());
    assert_eq!(stranger.push(&w.url, 0).0, 404);

    // 403: the right origin signed with another key.
    let impostor = TestLog::start(ORIGIN, [7; 32], log.prefix(4));
    assert_eq!(impostor.push(&w.url, 4).0, 403);

    // 400: an old size above the checkpoint's; and a malformed body.
    assert_eq!(log.push(&w.url, 9).0, 400);
    assert_eq!(post(&w.url, b"old x\n\n").0, 400);

    // 422: a consistency proof that does not verify.
    let t3 = now();
    log.append(&commit(2, t2, t3, 2, T));
    log.append(&plan(3, t3, T));
    let body = String::from_utf8(log.submission(4)).unwrap();
    let mut lines: Vec<String> = body.split('\n').map(str::to_owned).collect();
    lines[1] = lines[1].replace(&lines[1][..4], "AAAA");
    assert_eq!(post(&w.url, lines.join("\n").as_bytes()).0, 422);

    // 422: a fork, a second tree of size 6 with another commitment of epoch 2, served at the
    // same URL under the same key.
    assert_eq!(log.push(&w.url, 4).0, 200);
    let honest = log.prefix(6);
    let fork_of = |make: &dyn Fn(&TestLog)| -> LogTree {
        let saved = log.swap(log.prefix(4));
        make(&log);
        log.swap(saved)
    };
    let fork = fork_of(&|l| {
        l.append(&commit(2, t2, t3, 99, T));
        l.append(&plan(3, t3, T));
    });
    let (status, why) = log.push_tree(&w.url, &fork, 6);
    assert_eq!(status, 422, "{why}");

    // 403: a second commitment for epoch 3, as the next entries of the honest tree.
    let t4 = now();
    let mut twice = honest.clone();
    twice.append(commit(3, t3, t4, 3, T).encode()).unwrap();
    twice.append(commit(3, t3, t4, 4, T).encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &twice, 6);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("second commitment for epoch 3"), "{why}");

    // 403: a second output for epoch 1 (a y_1′ to show one client).
    let mut outputs = honest.clone();
    outputs.append(output(1, b"y1").encode()).unwrap();
    outputs.append(output(1, b"y1'").encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &outputs, 6);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("output of epoch 1 after that of 1"), "{why}");

    // 403: a late commitment: stamped with its real close, withheld 2.5 s (δ is 2 s) while
    // the operator evaluates candidates.
    let mut late = honest.clone();
    late.append(commit(3, t3, now(), 3, T).encode()).unwrap();
    std::thread::sleep(Duration::from_millis(2_500));
    let (status, why) = log.push_tree(&w.url, &late, 6);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("behind this witness's clock"), "{why}");

    // Crash and restart: the witness still stands at 6 and still refuses all three.
    w.kill9();
    let w = WitnessProc::start(dir.path(), "w.test/1", &[log.witness_arg()], 2_000);
    let r = ureq::post(&format!("{}/add-checkpoint", w.url)).send_bytes(&log.submission(0));
    let Err(ureq::Error::Status(409, resp)) = r else {
        panic!("expected 409 after the restart, got {r:?}")
    };
    assert_eq!(resp.into_string().unwrap(), "6\n");
    assert_eq!(log.push_tree(&w.url, &twice, 6).0, 403);
    assert_eq!(log.push_tree(&w.url, &outputs, 6).0, 403);
    assert_eq!(log.push_tree(&w.url, &late, 6).0, 403);
    assert_eq!(log.push_tree(&w.url, &fork, 6).0, 422);

    // The honest log goes on.
    log.append(&commit(3, t3, now(), 3, T));
    assert_eq!(log.push(&w.url, 6).0, 200);

    // Monitoring: its latest cosigned checkpoint, with the log's line and its own.
    let hash = vrs_witness::state::origin_hash(ORIGIN);
    let latest = ureq::get(&format!("{}/{hash}/checkpoint", w.url))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    let v = verify_checkpoint(
        latest.as_bytes(),
        &parse_vkey(&log.vkey()).unwrap(),
        &[parse_vkey(&w.vkey).unwrap()],
    )
    .unwrap();
    assert_eq!((v.size, v.cosignatures.len()), (7, 1));
    let missing = ureq::get(&format!("{}/{}/checkpoint", w.url, "00".repeat(32))).call();
    assert!(matches!(missing, Err(ureq::Error::Status(404, _))));

    // 403: a second root for one anchor batch (section 16, "Binding"), and still after kill -9.
    // Batch n over epochs 10n..=10n + 9, no pool or notary batch.
    let anchor = |n: u64, root: u8| {
        LogEntry::Anchor(AnchorEntry {
            batch: n,
            first_epoch: 10 * n,
            last_epoch: 10 * n + 9,
            pool_from: 1,
            pool_to: 1,
            notary_from: 1,
            notary_to: 1,
            root: [root; 32],
        })
    };
    log.append(&anchor(1, 0xa1));
    assert_eq!(log.push(&w.url, 7).0, 200);
    let mut second = log.prefix(8);
    second.append(anchor(1, 0xb1).encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &second, 8);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("a second root for anchor batch 1"), "{why}");
    w.kill9();
    let w = WitnessProc::start(dir.path(), "w.test/1", &[log.witness_arg()], 2_000);
    let (status, why) = log.push_tree(&w.url, &second, 8);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("a second root for anchor batch 1"), "{why}");
    log.append(&anchor(2, 0xa2));
    assert_eq!(log.push(&w.url, 8).0, 200);
    // 403: a next batch over records batch 2 holds (another root for its epochs).
    let mut overlap = log.prefix(9);
    let LogEntry::Anchor(third) = anchor(3, 0xa3) else {
        unreachable!()
    };
    let again = AnchorEntry {
        first_epoch: 25,
        ..third
    };
    overlap.append(LogEntry::Anchor(again).encode()).unwrap();
    let (status, why) = log.push_tree(&w.url, &overlap, 9);
    assert_eq!(status, 403, "{why}");
    assert!(why.contains("no record is in two batches"), "{why}");
}

/// Pushes the log to every witness and collects each entry's evidence: the checkpoint with
/// all cosignatures, and its audit path.
fn push_all(
    log: &TestLog,
    ws: &[WitnessProc],
    old: u64,
    sizes: &mut BTreeMap<String, u64>,
) -> String {
    let mut note = log.checkpoint();
    for w in ws {
        let from = sizes.get(&w.url).copied().unwrap_or(old);
        let (status, line) = log.push(&w.url, from);
        assert_eq!(status, 200, "{line}");
        sizes.insert(w.url.clone(), log.size());
        note.extend_from_slice(line.as_bytes());
    }
    String::from_utf8(note).unwrap()
}

fn logged(tree: &LogTree, index: u64, checkpoint: &str) -> LoggedEntry {
    use base64::Engine as _;
    let size: u64 = checkpoint.lines().nth(1).unwrap().parse().unwrap();
    LoggedEntry {
        index,
        entry: hex::encode(tree.entry(index).unwrap()),
        checkpoint: checkpoint.to_owned(),
        proof: tree
            .inclusion_proof(index, size)
            .unwrap()
            .iter()
            .map(|h| base64::engine::general_purpose::STANDARD.encode(h.0))
            .collect(),
    }
}

#[test]
fn three_witnesses_time_an_epoch_and_a_withheld_commitment_fails_the_witnessed_step() {
    let log = TestLog::start(ORIGIN, SEED, LogTree::new());
    let (ws, _dirs): (Vec<WitnessProc>, Vec<_>) = start_witnesses(3, &log.witness_arg(), 2_000)
        .into_iter()
        .unzip();
    let mut policy = format!("log {}\n", log.vkey());
    for (i, w) in ws.iter().enumerate() {
        policy += &format!("witness W{i} {}\n", w.vkey);
    }
    policy += "group q 2 W0 W1 W2\nquorum q\n";
    let floor = WitnessFloor {
        policy: vrs_protocol::tlog::policy::Policy::parse(&policy).unwrap(),
        // T / S = 4 s from δ (2 s) before the opening to the end of the commitment's second:
        // a commitment cosigned within a second of the plan passes (at most 3 s); one withheld
        // 2.5 s cannot (at least 4.5 s).
        max_rate: 9_000_000,
        delta_ms: 2_000,
    };
    let t_big = 36_000_000;
    let mut sizes = BTreeMap::new();
    let t1 = now();
    log.append(&operator());
    log.append(&plan(1, t1, t_big));
    let cp_plan1 = push_all(&log, &ws, 0, &mut sizes);
    let t2 = now();
    log.append(&commit(1, t1, t2, 1, t_big));
    log.append(&plan(2, t2, t_big));
    let cp_commit1 = push_all(&log, &ws, 2, &mut sizes);
    let mirror = log.prefix(log.size());
    let ok = witnessed::check(
        &[logged(&mirror, 1, &cp_plan1)],
        &[logged(&mirror, 2, &cp_commit1)],
        &[],
        &floor,
    )
    .unwrap();
    assert_eq!(ok.in_time.len(), 3, "{}", ok.detail);

    // The operator closes epoch 2 but withholds its commitment while it evaluates candidates,
    // publishing it (stamped with the real close, within δ) 2.5 s later.
    let t3 = now();
    std::thread::sleep(Duration::from_millis(2_500));
    log.append(&commit(2, t2, t3 + 1_000, 2, t_big));
    log.append(&output(1, b"y1"));
    let cp_commit2 = push_all(&log, &ws, 4, &mut sizes);
    let mirror = log.prefix(log.size());
    let err = witnessed::check(
        &[logged(&mirror, 3, &cp_commit1)],
        &[logged(&mirror, 4, &cp_commit2)],
        &[logged(&mirror, 5, &cp_commit2)],
        &floor,
    )
    .unwrap_err();
    assert!(err.contains("short of the quorum"), "{err}");
}
