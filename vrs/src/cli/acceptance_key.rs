//! The operator's acceptance key on disk (docs/PROTOCOL.md §11): 64 hex digits in a file
//! readable by its owner only, created on a data dir's first start. A witness keeps its key
//! the same way (`vrs witness`).

use anyhow::{bail, Context};
use std::path::Path;
use vrs_protocol::acceptance::AcceptanceSigner;

/// Reads the key file, or creates it (mode 0600) with a fresh key when `create` and it does
/// not exist.
pub fn load(path: &Path, create: bool) -> anyhow::Result<AcceptanceSigner> {
    load_named(path, create, "acceptance key")
}

/// [`load`] for an Ed25519 key named `what` in messages.
pub fn load_named(path: &Path, create: bool, what: &str) -> anyhow::Result<AcceptanceSigner> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            AcceptanceSigner::from_hex(&text).with_context(|| format!("reading {}", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
            let signer = AcceptanceSigner::generate();
            write_private(path, &format!("{}\n", hex::encode(signer.seed())))
                .with_context(|| format!("creating the {what} {}", path.display()))?;
            Ok(signer)
        }
        Err(e) => bail!("cannot read the {what} {}: {e}", path.display()),
    }
}

/// Writes a new file readable by its owner only; refuses to overwrite.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn key_file_is_created_once_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        assert!(load(&path, false).is_err());
        let a = load(&path, true).unwrap();
        let b = load(&path, true).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!format!("{a:?}").contains(&std::fs::read_to_string(&path).unwrap()[..64]));
    }
}
