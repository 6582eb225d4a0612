//! `vrs serve --log-origin … --witness …` with three `vrs witness` processes on loopback: the
//! service logs every plan and commitment (docs/PROTOCOL.md §21), its checkpoints come back
//! cosigned by all three, and each logged commitment is the epoch the API shows.

use std::time::{Duration, Instant};

use vrs_protocol::tlog::entry::LogEntry;
use vrs_protocol::tlog::note::{parse_vkey, verify_checkpoint, LogSigner};
use vrs_protocol::tlog::tree::{bundle_path, bundles_for, split_bundle};

use crate::server::Server;
use crate::witness::{start_witnesses, WitnessProc};

const SEED: [u8; 32] = [21; 32];

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_served_log_is_cosigned_by_three_witnesses_and_commits_what_the_api_shows() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("log.key"),
        format!("{}\n", hex::encode(SEED)),
    )
    .unwrap();
    let origin = "vrs.test/served";
    let log_vkey = LogSigner::new(origin, ed25519_dalek::SigningKey::from_bytes(&SEED))
        .unwrap()
        .vkey();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}");
    let (ws, _dirs): (Vec<WitnessProc>, Vec<_>) =
        start_witnesses(3, &format!("{log_vkey} {url}/log/"), 5_000)
            .into_iter()
            .unzip();
    let addr = format!("127.0.0.1:{port}");
    let mut flags: Vec<String> = [
        "--modulus",
        "test512",
        "--epoch-ms",
        "1000",
        "--addr",
        &addr,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    flags.extend(["--log-origin".into(), origin.into()]);
    for w in &ws {
        flags.extend(["--witness".into(), format!("{} {}", w.vkey, w.url)]);
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let server = Server::start(data.path(), &flags);
    assert_eq!(server.url, url);

    let (status, bet) = server.post(
        "/api/v1/games/dice/bet",
        &serde_json::json!({"bet_type": "over7", "amount": 1, "player_seed": "witnessed"}),
    );
    assert_eq!(status, 202, "{bet}");
    let game = server.poll_ok(
        &format!("/api/v1/games/{}", bet["game_id"].as_str().unwrap()),
        Duration::from_secs(60),
    );
    let epoch = game["result"]["epoch"].as_u64().unwrap();

    // Wait for a checkpoint that holds the epoch's commitment, cosigned by all three.
    let keys: Vec<_> = ws.iter().map(|w| parse_vkey(&w.vkey).unwrap()).collect();
    let lk = parse_vkey(&log_vkey).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let (size, entries) = loop {
        let note = ureq::get(&format!("{url}/log/checkpoint"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        let v = verify_checkpoint(note.as_bytes(), &lk, &keys).unwrap();
        if v.cosignatures.len() == 3 {
            let mut entries = Vec::new();
            for (n, w) in bundles_for(0, v.size) {
                let bytes = ureq::get(&format!("{url}/log/{}", bundle_path(n, w)))
                    .call()
                    .unwrap();
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut bytes.into_reader(), &mut buf).unwrap();
                for e in split_bundle(&buf).unwrap() {
                    entries.push(LogEntry::decode(e).unwrap());
                }
            }
            let committed = entries
                .iter()
                .any(|e| matches!(e, LogEntry::Commitment(c) if c.epoch == epoch));
            if committed {
                break (v.size, entries);
            }
        }
        assert!(
            Instant::now() < deadline,
            "no checkpoint with epoch {epoch}'s commitment cosigned by three witnesses: {note}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        matches!(entries[0], LogEntry::Operator(_)),
        "{:?}",
        entries[0]
    );
    assert_eq!(entries.len() as u64, size);
    let (_, record) = server.get(&format!("/api/v1/epochs/{epoch}"));
    let commitment = entries
        .iter()
        .find_map(|e| match e {
            LogEntry::Commitment(c) if c.epoch == epoch => Some(*c),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        hex::encode(commitment.bets_root),
        record["bets_root"].as_str().unwrap(),
        "{record}"
    );
    assert_eq!(
        hex::encode(commitment.nonce),
        record["nonce"].as_str().unwrap()
    );
    assert_eq!(
        commitment.closed_ms as i64,
        record["closed_at_ms"].as_i64().unwrap()
    );
    assert!(commitment.bet_count >= 1);
    // Every witness stands at a size the service pushed.
    for w in &ws {
        let info: serde_json::Value = ureq::get(&format!("{}/", w.url))
            .call()
            .unwrap()
            .into_json()
            .unwrap();
        assert!(info["logs"][0]["size"].as_u64().unwrap() > 0, "{info}");
    }
    assert!(server.stop());
}
