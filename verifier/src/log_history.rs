//! `vrs audit`'s reading of the whole witnessed log (docs/PROTOCOL.md §21, "Reading the whole
//! log"): its latest checkpoint cosigned by the auditor's quorum, every entry from the first
//! (C2SP tlog-tiles), replayed under the witnesses' rules without the clock; then each audited
//! epoch's evidence must lie in that one history. So a second commitment of an epoch, a second
//! output or a second batch root fails the audit even where the quorum's witnesses are plain
//! C2SP ones that check only that the log is append-only.

use std::collections::BTreeSet;
use std::time::Duration;

use vrs_protocol::tlog::anchored::AnchorLog;
use vrs_protocol::tlog::history::{self, History};
use vrs_protocol::tlog::note::{checkpoint_body, verify_checkpoint};
use vrs_protocol::tlog::policy::Policy;
use vrs_protocol::tlog::tree::{bundle_path, bundles_for, split_bundle, TILE_WIDTH};
use vrs_protocol::tlog::witnessed::{LogEvidence, LoggedEntry};

use crate::verify::Fetch;

/// How often, and how far apart, the latest checkpoint is asked for again while its
/// cosignatures fall short of the quorum (the server signs a new one every 100 ms or so, and
/// its witnesses answer within milliseconds).
const TRIES: u32 = 12;
const PAUSE: Duration = Duration::from_millis(250);

/// The history read, with the checkpoint it was read to.
#[derive(Debug)]
pub struct Read {
    pub history: History,
    /// The policy names of the witnesses that cosigned that checkpoint.
    pub cosigned_by: Vec<String>,
    /// Whether they satisfy the policy's quorum (else the entries beyond the range's own
    /// cosigned checkpoints are the operator's signed word, and the summary says so).
    pub quorum: bool,
}

/// Why the log could not be read or replayed: the epoch the failure is about, when an entry
/// names one, and what.
#[derive(Debug)]
pub struct Failed {
    pub epoch: Option<u64>,
    pub detail: String,
}

impl From<String> for Failed {
    fn from(detail: String) -> Self {
        Self {
            epoch: None,
            detail,
        }
    }
}

/// Reads and replays the log of `policy` (its first `log` line; from the line's URL, else
/// `{server}/log/`).
pub fn read(fetch: &dyn Fetch, server: &str, policy: &Policy) -> Result<Read, Failed> {
    let (key, url) = policy
        .logs
        .first()
        .ok_or_else(|| "the policy names no log".to_owned())?;
    let prefix = url
        .clone()
        .unwrap_or_else(|| format!("{server}/log/"))
        .trim_end_matches('/')
        .to_owned();
    let witnesses: Vec<_> = policy.witnesses.iter().map(|w| w.key.clone()).collect();
    let mut tries = 0;
    let (cp, cosigned_by, quorum) = loop {
        let url = format!("{prefix}/checkpoint");
        let note = fetch
            .get_bytes_opt(&url)
            .map_err(|e| format!("{e:#}"))?
            .ok_or_else(|| format!("{url}: the server publishes no log checkpoint (404)"))?;
        let cp = verify_checkpoint(&note, key, &witnesses)
            .map_err(|e| format!("the log's latest checkpoint ({url}): {e}"))?;
        let names: BTreeSet<String> = policy
            .witnesses
            .iter()
            .filter(|w| {
                cp.cosignatures
                    .iter()
                    .any(|((n, id), _)| *n == w.key.name && *id == w.key.id)
            })
            .map(|w| w.name.clone())
            .collect();
        tries += 1;
        // A log that grows faster than its witnesses answer may never show one checkpoint
        // with the whole quorum: the last one read is then taken under the log's signature.
        let quorum = policy.satisfied_by(&names);
        if quorum || tries >= TRIES {
            break (cp, names.into_iter().collect::<Vec<_>>(), quorum);
        }
        std::thread::sleep(PAUSE);
    };
    let bar = crate::progress::bar(cp.size, "reading the log");
    let mut entries = Vec::with_capacity(cp.size.min(1 << 20) as usize);
    for (n, width) in bundles_for(0, cp.size) {
        let url = format!("{prefix}/{}", bundle_path(n, width));
        let bytes = fetch
            .get_bytes_opt(&url)
            .map_err(|e| format!("{e:#}"))?
            .ok_or_else(|| format!("{url}: the log does not serve this bundle (404)"))?;
        let got = split_bundle(&bytes).map_err(|e| format!("{url}: {e}"))?;
        if got.len() != width as usize || n * TILE_WIDTH != entries.len() as u64 {
            return Err(format!("{url}: {} entries, not {width}", got.len()).into());
        }
        entries.extend(got.into_iter().map(<[u8]>::to_vec));
        bar.inc(u64::from(width));
    }
    bar.finish_and_clear();
    match history::replay(entries, cp.root) {
        Ok(history) => Ok(Read {
            history,
            cosigned_by,
            quorum,
        }),
        Err(r) => Err(Failed {
            epoch: r.epoch,
            detail: format!(
                "the log's history breaks the witnesses' rules: entry {}: {}",
                r.index, r.reason
            ),
        }),
    }
}

/// Every checkpoint of `evidence` is a prefix of `history`, and each entry is the one the
/// history holds at its index: the epoch was shown the one history the auditor replayed.
pub fn evidence_in(history: &History, evidence: &LogEvidence) -> Result<(), String> {
    let lists: [(&str, &[LoggedEntry]); 4] = [
        ("plan", &evidence.plan),
        ("commitment", &evidence.commitment),
        ("previous output", &evidence.previous_output),
        ("operator declaration", &evidence.operator),
    ];
    for (what, list) in lists {
        logged_in(history, what, list)?;
    }
    Ok(())
}

/// An anchor batch's `anchor.log` in the history: its bound checkpoint (the log size and root
/// its version-2 calldata carries) and the cosigned ones are prefixes of it, so the calldata
/// names the one history the quorum cosigned.
pub fn anchor_log_in(history: &History, log: &AnchorLog) -> Result<(), String> {
    logged_in(history, "anchor entry", std::slice::from_ref(&log.bound))?;
    logged_in(history, "anchor entry", &log.cosigned)
}

fn logged_in(history: &History, what: &str, list: &[LoggedEntry]) -> Result<(), String> {
    for l in list {
        let (_, size, root) = checkpoint_body(l.checkpoint.as_bytes())
            .map_err(|e| format!("the {what}'s checkpoint: {e}"))?;
        history
            .holds(size, root)
            .map_err(|e| format!("the {what}'s checkpoint: {e}"))?;
        let here = history.tree.entry(l.index).map(hex::encode);
        if here.as_deref() != Some(l.entry.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "the {what} shown as entry {} is not the log's entry {}",
                l.index, l.index
            ));
        }
    }
    Ok(())
}
