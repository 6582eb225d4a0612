//! A witness's durable state, one JSON file per log in its state directory (named by the
//! SHA-256 of the log's origin, as the monitoring path is): the latest cosigned tree head,
//! the tree's right edge, the application state, and the checkpoint as cosigned. A file is
//! replaced whole (written beside, synced, renamed, the directory synced), so a kill -9 at any
//! moment leaves either the old state or the new one.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use sha2::{Digest as _, Sha256};
use vrs_protocol::tlog::rules::AppState;
use vrs_protocol::tlog::tree::Frontier;

/// What a witness keeps of one log.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogState {
    pub origin: String,
    /// Size and root (hex) of the latest cosigned checkpoint (0 and the empty root: none).
    pub size: u64,
    pub root: String,
    /// The right edge of that tree: kept where the witness reads the log's entries.
    pub frontier: Frontier,
    pub app: AppState,
    /// The latest cosigned checkpoint: the log's note with this witness's cosignature.
    pub checkpoint: String,
    /// The latest cosignature's time (Unix seconds): the next one is never earlier.
    pub cosigned_at: u64,
}

/// The lowercase hex SHA-256 of an origin: its file name and monitoring path.
pub fn origin_hash(origin: &str) -> String {
    hex::encode(Sha256::digest(origin.as_bytes()))
}

/// The state directory.
#[derive(Clone, Debug)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the state directory {}", dir.display()))?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    fn path(&self, origin: &str) -> PathBuf {
        self.dir.join(format!("{}.json", origin_hash(origin)))
    }

    /// The state of a log; a fresh one if the witness never cosigned it.
    pub fn load(&self, origin: &str) -> anyhow::Result<LogState> {
        let path = self.path(origin);
        match std::fs::read(&path) {
            Ok(bytes) => {
                let state: LogState = serde_json::from_slice(&bytes)
                    .with_context(|| format!("reading {}", path.display()))?;
                anyhow::ensure!(
                    state.origin == origin,
                    "{} holds the state of {:?}, not {origin:?}",
                    path.display(),
                    state.origin
                );
                Ok(state)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(LogState {
                origin: origin.to_owned(),
                root: hex::encode(vrs_protocol::tlog::tree::EMPTY_ROOT.0),
                ..LogState::default()
            }),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Replaces the state of a log, durably, before the cosignature leaves.
    pub fn save(&self, state: &LogState) -> anyhow::Result<()> {
        let path = self.path(&state.origin);
        let tmp = path.with_extension("json.new");
        let bytes = serde_json::to_vec_pretty(state).context("encoding the witness state")?;
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("writing {}", tmp.display()))?;
        f.write_all(&bytes)
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        drop(f);
        std::fs::rename(&tmp, &path).with_context(|| format!("replacing {}", path.display()))?;
        std::fs::File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("syncing {}", self.dir.display()))?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn state_survives_a_reopen_and_starts_empty() {
        let dir = tempfile::tempdir().unwrap();
        let s = StateDir::open(dir.path()).unwrap();
        let mut st = s.load("log.example").unwrap();
        assert_eq!(st.size, 0);
        st.size = 7;
        st.checkpoint = "note".into();
        s.save(&st).unwrap();
        let again = StateDir::open(dir.path())
            .unwrap()
            .load("log.example")
            .unwrap();
        assert_eq!(again, st);
        assert_eq!(
            origin_hash("example.com/behind-the-sofa"),
            "5fd2dc0beb4ce54da5050cf6d5c75248b023abad441c3cecde3976fbe9da4fe4"
        );
    }
}
