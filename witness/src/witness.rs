//! The add-checkpoint decision: C2SP tlog-witness's checks in its order (404 unknown origin,
//! 403 no valid log signature, 400 old size above the new, 409 old size not the witness's, 422
//! a bad proof or a second root for one size), then the application rules of
//! docs/PROTOCOL.md §21 over the entries the log serves (422 when they do not make up the
//! checkpoint's tree, 403 when one breaks a rule, 503 when the log cannot be read), then the
//! cosignature, persisted before it is answered. One submission at a time, so that the check
//! of the old size and the write of the new state are atomic.

use std::path::PathBuf;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use tokio::sync::Mutex;
use vrs_protocol::tlog::note::{verify_checkpoint, CheckpointError, Cosigner, VKey};
use vrs_protocol::tlog::rules::{self, Clock};
use vrs_protocol::tlog::tree::{
    bundle_path, bundles_for, check_consistency, leaf_hash, split_bundle, EMPTY_ROOT,
};
use vrs_protocol::tlog::{Hash, LogEntry};

use crate::state::{origin_hash, LogState, StateDir};
use vrs_protocol::tlog::submission;

/// The default δ: how far an entry's stamped time may be from the witness's clock.
pub const DEFAULT_DELTA_MS: u64 = 2_000;

/// A log this witness cosigns.
#[derive(Clone, Debug)]
pub struct LogConfig {
    pub key: VKey,
    /// The log's tlog-tiles prefix (`…/log/`), where the witness reads each new entry to
    /// apply the application rules. None: a plain tlog witness for this log (append-only
    /// only).
    pub url: Option<String>,
}

/// What the witness runs with.
#[derive(Debug)]
pub struct Config {
    pub cosigner: Cosigner,
    pub state_dir: PathBuf,
    pub delta_ms: u64,
    pub logs: Vec<LogConfig>,
}

/// An HTTP answer.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Answer {
    fn text(status: u16, message: impl Into<String>) -> Self {
        let mut body = message.into().into_bytes();
        body.push(b'\n');
        Self {
            status,
            content_type: "text/plain; charset=utf-8",
            body,
        }
    }
}

/// A running witness's shared state.
#[derive(Debug)]
pub struct Witness {
    pub config: Config,
    state: StateDir,
    lock: Mutex<()>,
    http: reqwest::Client,
}

impl Witness {
    pub fn new(config: Config) -> anyhow::Result<Self> {
        let state = StateDir::open(&config.state_dir)?;
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(10))
            .build()?;
        Ok(Self {
            config,
            state,
            lock: Mutex::new(()),
            http,
        })
    }

    /// The latest cosigned checkpoint of the log whose origin hashes to `hash`.
    pub fn latest(&self, hash: &str) -> anyhow::Result<Option<String>> {
        for log in &self.config.logs {
            if origin_hash(&log.key.name) == hash {
                let s = self.state.load(&log.key.name)?;
                return Ok((!s.checkpoint.is_empty()).then_some(s.checkpoint));
            }
        }
        Ok(None)
    }

    /// Every log's state, for the witness's own page.
    pub fn states(&self) -> anyhow::Result<Vec<LogState>> {
        self.config
            .logs
            .iter()
            .map(|l| self.state.load(&l.key.name))
            .collect()
    }

    pub async fn add_checkpoint(&self, body: &[u8]) -> Answer {
        let sub = match submission::parse(body) {
            Ok(s) => s,
            Err(e) => return Answer::text(400, e),
        };
        let origin = sub
            .checkpoint
            .split(|&b| b == b'\n')
            .next()
            .map(|o| String::from_utf8_lossy(o).into_owned())
            .unwrap_or_default();
        let Some(log) = self.config.logs.iter().find(|l| l.key.name == origin) else {
            return Answer::text(404, format!("unknown log {origin:?}"));
        };
        let cp = match verify_checkpoint(&sub.checkpoint, &log.key, &[]) {
            Ok(cp) => cp,
            Err(CheckpointError::Malformed(e)) => return Answer::text(400, e),
            Err(e) => return Answer::text(403, e.to_string()),
        };
        if sub.old_size > cp.size {
            return Answer::text(
                400,
                format!(
                    "old size {} is above the checkpoint's {}",
                    sub.old_size, cp.size
                ),
            );
        }
        let _one_at_a_time = self.lock.lock().await;
        let state = match self.state.load(&origin) {
            Ok(s) => s,
            Err(e) => return Answer::text(500, format!("{e:#}")),
        };
        if sub.old_size != state.size {
            return Answer {
                status: 409,
                content_type: "text/x.tlog.size",
                body: format!("{}\n", state.size).into_bytes(),
            };
        }
        if cp.size == 0 && cp.root != EMPTY_ROOT {
            return Answer::text(
                422,
                "a checkpoint of size 0 must have the empty tree's root",
            );
        }
        let old_root = match parse_root(&state.root) {
            Ok(r) => r,
            Err(e) => return Answer::text(500, e),
        };
        if let Err(e) = check_consistency(&sub.proof, state.size, old_root, cp.size, cp.root) {
            return Answer::text(422, e);
        }
        let mut next = state.clone();
        // One time for the rules and the cosignature: a commitment this witness vouches for
        // (rule 9) is one its cosignature shows in time.
        let mut now_ms = vrs_observe::clock::now_ms().max(0) as u64;
        if let Some(url) = &log.url {
            let entries = match self.fetch(url, state.size, cp.size).await {
                Ok(e) => e,
                Err(e) => {
                    return Answer {
                        status: 503,
                        content_type: "text/plain; charset=utf-8",
                        body: format!("cannot read the log's new entries: {e}\n").into_bytes(),
                    }
                }
            };
            let leaves: Vec<Hash> = entries.iter().map(|e| leaf_hash(e)).collect();
            let frontier = match state.frontier.extend(&leaves) {
                Ok(f) => f,
                Err(e) => return Answer::text(500, e),
            };
            if frontier.root().ok() != Some(cp.root) {
                return Answer::text(
                    422,
                    format!(
                        "the entries {url} serves for {}..{} do not make up the checkpoint's tree",
                        state.size, cp.size
                    ),
                );
            }
            let mut decoded = Vec::with_capacity(entries.len());
            for (i, bytes) in entries.iter().enumerate() {
                match LogEntry::decode(bytes) {
                    Ok(e) => decoded.push(e),
                    Err(e) => {
                        return Answer::text(403, format!("entry {}: {e}", state.size + i as u64))
                    }
                }
            }
            now_ms = vrs_observe::clock::now_ms().max(0) as u64;
            let clock = Clock {
                now_ms,
                delta_ms: self.config.delta_ms,
                first_contact: state.size == 0,
                audit: false,
                cosign_s: cosign_second(now_ms, state.cosigned_at),
            };
            match rules::apply(&state.app, state.size, &decoded, clock) {
                Ok(app) => next.app = app,
                Err(refusal) => {
                    tracing::warn!(log = %origin, %refusal, "refused a checkpoint");
                    return Answer::text(403, format!("refused: {refusal}"));
                }
            }
            next.frontier = frontier;
        }
        let time = cosign_second(now_ms, state.cosigned_at);
        let line = match self.config.cosigner.cosign(&cp.text, time) {
            Ok(l) => l,
            Err(e) => return Answer::text(500, e),
        };
        next.size = cp.size;
        next.root = hex::encode(cp.root.0);
        next.cosigned_at = time;
        next.checkpoint = monitored_note(&cp.text, &sub.checkpoint, &log.key, &line);
        if let Err(e) = self.state.save(&next) {
            return Answer::text(500, format!("{e:#}"));
        }
        Answer {
            status: 200,
            content_type: "text/plain; charset=utf-8",
            body: line,
        }
    }

    /// Entries `[from, to)` of the log, from its entry bundles.
    async fn fetch(&self, prefix: &str, from: u64, to: u64) -> Result<Vec<Vec<u8>>, String> {
        let prefix = prefix.trim_end_matches('/');
        let mut out = Vec::new();
        for (n, width) in bundles_for(from, to) {
            let url = format!("{prefix}/{}", bundle_path(n, width));
            let resp = self
                .http
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            if !resp.status().is_success() {
                return Err(format!("{url}: {}", resp.status()));
            }
            let bytes = resp.bytes().await.map_err(|e| format!("{url}: {e}"))?;
            let entries = split_bundle(&bytes).map_err(|e| format!("{url}: {e}"))?;
            if entries.len() != width as usize {
                return Err(format!("{url}: {} entries, not {width}", entries.len()));
            }
            let base = n * vrs_protocol::tlog::tree::TILE_WIDTH;
            for (i, e) in entries.into_iter().enumerate() {
                let index = base + i as u64;
                if index >= from && index < to {
                    out.push(e.to_vec());
                }
            }
        }
        Ok(out)
    }
}

fn parse_root(hex_root: &str) -> Result<Hash, String> {
    let mut a = [0u8; 32];
    hex::decode_to_slice(hex_root, &mut a).map_err(|_| format!("bad stored root {hex_root}"))?;
    Ok(Hash(a))
}

/// The checkpoint as the witness publishes it: the text, the log's own signature lines (its
/// key's name and ID) and this witness's cosignature; other lines are dropped.
fn monitored_note(text: &[u8], note: &[u8], log: &VKey, cosignature: &[u8]) -> String {
    let note = String::from_utf8_lossy(note);
    let sigs = note.rsplit_once("\n\n").map_or("", |(_, s)| s);
    let mut out = String::from_utf8_lossy(text).into_owned();
    out.push('\n');
    for line in sigs.lines() {
        let Some(rest) = line.strip_prefix("— ") else {
            continue;
        };
        let Some((name, sig)) = rest.split_once(' ') else {
            continue;
        };
        let id = BASE64_STANDARD
            .decode(sig)
            .ok()
            .and_then(|b| b.first_chunk::<4>().map(|c| u32::from_be_bytes(*c)));
        if name == log.name && id == Some(log.id) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(&String::from_utf8_lossy(cosignature));
    out
}

/// The second a cosignature at `now_ms` carries: never before the last one (`last`), never 0.
fn cosign_second(now_ms: u64, last: u64) -> u64 {
    (now_ms / 1000).max(last).max(1)
}
