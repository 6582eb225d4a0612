//! Checkpoints as C2SP signed notes, and C2SP tlog-cosignature's `cosignature/v1`, over the
//! `signed_note` and `tlog_tiles` crates: the log signs its checkpoints with an Ed25519 note
//! key (signature type 0x01), witnesses cosign them with timestamped Ed25519 signatures (type
//! 0x04) over
//!
//! ```text
//! "cosignature/v1\n" ‖ "time " ‖ decimal(t) ‖ "\n" ‖ checkpoint text
//! ```
//!
//! a signature line carrying key ID (4 bytes) ‖ u64(t) ‖ signature (64).

use base64::prelude::{Engine as _, BASE64_STANDARD};
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use signed_note::{Note, Signer, Verifier, VerifierList};
use tlog_tiles::{Checkpoint, Hash};

/// Signature type of an Ed25519 note signature (the log's).
pub const ALG_ED25519: u8 = 0x01;
/// Signature type of a timestamped Ed25519 cosignature (a witness's).
pub const ALG_COSIGNATURE_V1: u8 = 0x04;

/// The key ID of a note key: SHA-256(name ‖ "\n" ‖ type ‖ public key)[:4].
pub fn key_id(name: &str, alg: u8, public_key: &[u8; 32]) -> u32 {
    let mut k = Vec::with_capacity(33);
    k.push(alg);
    k.extend_from_slice(public_key);
    signed_note::key_id(name, &k)
}

/// A verifier key, `<name>+<hex key ID>+base64(type ‖ public key)`.
pub fn vkey(name: &str, alg: u8, public_key: &[u8; 32]) -> String {
    let mut k = vec![alg];
    k.extend_from_slice(public_key);
    format!(
        "{name}+{:08x}+{}",
        key_id(name, alg, public_key),
        BASE64_STANDARD.encode(k)
    )
}

/// A parsed verifier key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VKey {
    pub name: String,
    pub id: u32,
    pub alg: u8,
    pub public_key: [u8; 32],
}

/// Parses a verifier key of type 0x01 or 0x04 (the base64 part may hold `+`: split on the
/// first two only) and checks its key ID.
pub fn parse_vkey(s: &str) -> Result<VKey, String> {
    let bad = || format!("{s:?} is not a verifier key (name+keyid+base64)");
    let (name, rest) = s.split_once('+').ok_or_else(bad)?;
    let (id16, key64) = rest.split_once('+').ok_or_else(bad)?;
    if !signed_note::is_key_name_valid(name) || id16.len() != 8 {
        return Err(bad());
    }
    let id = u32::from_str_radix(id16, 16).map_err(|_| bad())?;
    let key = BASE64_STANDARD.decode(key64).map_err(|_| bad())?;
    if key.len() != 33 || !matches!(key[0], ALG_ED25519 | ALG_COSIGNATURE_V1) {
        return Err(format!(
            "{s:?}: only Ed25519 keys (type 0x01 or 0x04) are supported"
        ));
    }
    let mut public_key = [0u8; 32];
    public_key.copy_from_slice(&key[1..]);
    VerifyingKey::from_bytes(&public_key)
        .map_err(|_| format!("{s:?}: not an Ed25519 public key"))?;
    if key_id(name, key[0], &public_key) != id {
        return Err(format!("{s:?}: the key ID does not match the key"));
    }
    Ok(VKey {
        name: name.to_owned(),
        id,
        alg: key[0],
        public_key,
    })
}

/// The log's checkpoint signer: an Ed25519 note key named after the log's origin.
#[derive(Debug)]
pub struct LogSigner {
    origin: String,
    key: SigningKey,
}

impl LogSigner {
    pub fn new(origin: &str, key: SigningKey) -> Result<Self, String> {
        if !signed_note::is_key_name_valid(origin) {
            return Err(format!(
                "the origin {origin:?} cannot name a note key (no spaces or '+')"
            ));
        }
        Ok(Self {
            origin: origin.to_owned(),
            key,
        })
    }

    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The log's verifier key, which witnesses and verifiers are configured with.
    pub fn vkey(&self) -> String {
        vkey(
            &self.origin,
            ALG_ED25519,
            &self.key.verifying_key().to_bytes(),
        )
    }

    /// The signed checkpoint of a tree head: origin, size, base64 root, then the log's line.
    pub fn sign(&self, size: u64, root: Hash) -> Result<Vec<u8>, String> {
        let text = Checkpoint::new(&self.origin, size, root, "")
            .map_err(|e| e.to_string())?
            .to_bytes();
        let mut note = Note::new(&text, &[]).map_err(|e| e.to_string())?;
        let signer = NoteKey {
            name: &self.origin,
            alg: ALG_ED25519,
            key: &self.key,
            time: None,
        };
        note.add_sigs(&[&signer]).map_err(|e| e.to_string())?;
        Ok(note.to_bytes())
    }
}

/// A witness's cosigner.
#[derive(Debug)]
pub struct Cosigner {
    name: String,
    key: SigningKey,
}

impl Cosigner {
    pub fn new(name: &str, key: SigningKey) -> Result<Self, String> {
        if !signed_note::is_key_name_valid(name) {
            return Err(format!(
                "the witness name {name:?} cannot name a note key (no spaces or '+')"
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            key,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn vkey(&self) -> String {
        vkey(
            &self.name,
            ALG_COSIGNATURE_V1,
            &self.key.verifying_key().to_bytes(),
        )
    }

    /// The cosignature line (`— name base64(…)\n`) over a checkpoint's text at Unix second `time`.
    pub fn cosign(&self, checkpoint_text: &[u8], time: u64) -> Result<Vec<u8>, String> {
        let mut note = Note::new(checkpoint_text, &[]).map_err(|e| e.to_string())?;
        let signer = NoteKey {
            name: &self.name,
            alg: ALG_COSIGNATURE_V1,
            key: &self.key,
            time: Some(time),
        };
        note.add_sigs(&[&signer]).map_err(|e| e.to_string())?;
        let bytes = note.to_bytes();
        // The note is text, a blank line, then the one new signature line.
        Ok(bytes[checkpoint_text.len() + 1..].to_vec())
    }
}

/// The bytes a cosignature/v1 signs.
pub fn cosigned_message(checkpoint_text: &[u8], time: u64) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {time}\n").into_bytes();
    m.extend_from_slice(checkpoint_text);
    m
}

struct NoteKey<'a> {
    name: &'a str,
    alg: u8,
    key: &'a SigningKey,
    time: Option<u64>,
}

impl Signer for NoteKey<'_> {
    fn name(&self) -> &str {
        self.name
    }

    fn key_id(&self) -> u32 {
        key_id(self.name, self.alg, &self.key.verifying_key().to_bytes())
    }

    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, ed25519_dalek::SignatureError> {
        Ok(match self.time {
            None => self.key.sign(msg).to_bytes().to_vec(),
            Some(t) => {
                let mut out = t.to_be_bytes().to_vec();
                out.extend_from_slice(&self.key.sign(&cosigned_message(msg, t)).to_bytes());
                out
            }
        })
    }
}

struct KeyVerifier {
    vkey: VKey,
    key: VerifyingKey,
}

impl Verifier for KeyVerifier {
    fn name(&self) -> &str {
        &self.vkey.name
    }

    fn key_id(&self) -> u32 {
        self.vkey.id
    }

    fn verify(&self, msg: &[u8], sig: &[u8]) -> bool {
        let (message, sig) = match self.vkey.alg {
            ALG_COSIGNATURE_V1 => {
                let Some((t, s)) = sig.split_first_chunk::<8>() else {
                    return false;
                };
                let t = u64::from_be_bytes(*t);
                if t == 0 || t > i64::MAX as u64 {
                    return false;
                }
                (cosigned_message(msg, t), s)
            }
            _ => (msg.to_vec(), sig),
        };
        let Ok(sig) = ed25519_dalek::Signature::from_slice(sig) else {
            return false;
        };
        self.key.verify_strict(&message, &sig).is_ok()
    }
}

/// A checkpoint whose log signature verified, with the cosignatures that verified on it.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifiedCheckpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    /// The checkpoint's text (what was signed).
    pub text: Vec<u8>,
    /// ((witness key name, key ID), cosigned Unix second) of each known witness whose
    /// cosignature verified: names alone may repeat across keys.
    pub cosignatures: Vec<((String, u32), u64)>,
}

/// Verifies a signed checkpoint against the log's key and any witness keys: the log's
/// signature must be present and valid; a known witness's cosignature that fails rejects the
/// note; unknown signatures are ignored (C2SP signed-note).
pub fn verify_checkpoint(
    note: &[u8],
    log: &VKey,
    witnesses: &[VKey],
) -> Result<VerifiedCheckpoint, CheckpointError> {
    let parsed = Note::from_bytes(note).map_err(|e| CheckpointError::Malformed(e.to_string()))?;
    let checkpoint = Checkpoint::from_bytes(parsed.text())
        .map_err(|e| CheckpointError::Malformed(e.to_string()))?;
    if checkpoint.origin() != log.name {
        return Err(CheckpointError::UnknownOrigin(
            checkpoint.origin().to_owned(),
        ));
    }
    let verifier = |k: &VKey| -> Result<Box<dyn Verifier>, CheckpointError> {
        let key = VerifyingKey::from_bytes(&k.public_key)
            .map_err(|_| CheckpointError::Malformed("bad key".into()))?;
        Ok(Box::new(KeyVerifier {
            vkey: k.clone(),
            key,
        }))
    };
    let log_only = VerifierList::new(vec![verifier(log)?]);
    // The log's own signature first: without it the note is refused whatever else it holds.
    parsed
        .verify(&log_only)
        .map_err(|e| CheckpointError::Signature(e.to_string()))?;
    let mut list = vec![verifier(log)?];
    for w in witnesses {
        list.push(verifier(w)?);
    }
    let (verified, _unknown) = parsed
        .verify(&VerifierList::new(list))
        .map_err(|e| CheckpointError::Signature(e.to_string()))?;
    let cosignatures = verified
        .iter()
        .filter(|s| !(s.name() == log.name && s.id() == log.id))
        .filter_map(|s| {
            let t = s.signature().first_chunk::<8>()?;
            Some(((s.name().to_owned(), s.id()), u64::from_be_bytes(*t)))
        })
        .collect();
    Ok(VerifiedCheckpoint {
        origin: checkpoint.origin().to_owned(),
        size: checkpoint.size(),
        root: *checkpoint.hash(),
        text: parsed.text().to_vec(),
        cosignatures,
    })
}

/// A checkpoint's origin, size and root, read without checking any signature (for a verifier
/// that names no log key: what it reads is then the operator's word).
pub fn checkpoint_body(note: &[u8]) -> Result<(String, u64, Hash), CheckpointError> {
    let parsed = Note::from_bytes(note).map_err(|e| CheckpointError::Malformed(e.to_string()))?;
    let checkpoint = Checkpoint::from_bytes(parsed.text())
        .map_err(|e| CheckpointError::Malformed(e.to_string()))?;
    Ok((
        checkpoint.origin().to_owned(),
        checkpoint.size(),
        *checkpoint.hash(),
    ))
}

/// Why a checkpoint is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    #[error("malformed checkpoint: {0}")]
    Malformed(String),
    #[error("unknown origin {0:?}")]
    UnknownOrigin(String),
    #[error("signature: {0}")]
    Signature(String),
}

/// Appends signature lines (each ending in a newline) to a signed note.
pub fn with_lines(note: &[u8], lines: &[u8]) -> Vec<u8> {
    let mut out = note.to_vec();
    out.extend_from_slice(lines);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn peter() -> SigningKey {
        let mut seed = [0u8; 32];
        hex::decode_to_slice(
            "810a1402d5146c8d84f2443330f54080ebf98ee17d9c74f6252fc5d5c7283173",
            &mut seed,
        )
        .unwrap();
        SigningKey::from_bytes(&seed)
    }

    #[test]
    fn note_signatures_match_gos_published_vector() {
        // golang.org/x/mod/sumdb/note's PeterNeumann key and note.
        let key = peter();
        let pk = key.verifying_key().to_bytes();
        assert_eq!(
            vkey("PeterNeumann", ALG_ED25519, &pk),
            "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
        );
        let text = b"If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
        let mut note = Note::new(text, &[]).unwrap();
        let signer = NoteKey {
            name: "PeterNeumann",
            alg: ALG_ED25519,
            key: &key,
            time: None,
        };
        note.add_sigs(&[&signer]).unwrap();
        let expected = "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
        assert!(String::from_utf8(note.to_bytes())
            .unwrap()
            .ends_with(expected));
    }

    #[test]
    fn vkeys_parse_as_published() {
        let v = parse_vkey("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
            .unwrap();
        assert_eq!((v.alg, v.id), (ALG_COSIGNATURE_V1, 0xda77ade7));
        // A '+' inside the base64 part.
        let t = parse_vkey("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6").unwrap();
        assert_eq!(t.alg, ALG_ED25519);
        assert!(parse_vkey("TEST+7997405d+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6").is_err());
        assert!(parse_vkey("TEST").is_err());
        // The signed-note spec's own example verifies.
        let foo =
            parse_vkey("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
                .unwrap();
        let note = Note::from_bytes("This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n".as_bytes()).unwrap();
        let list = VerifierList::new(vec![Box::new(KeyVerifier {
            key: VerifyingKey::from_bytes(&foo.public_key).unwrap(),
            vkey: foo,
        })]);
        note.verify(&list).unwrap();
    }

    #[test]
    fn cosignatures_have_the_specs_layout_and_verify() {
        let w = Cosigner::new("witness.example/w1", peter()).unwrap();
        assert_eq!(
            w.vkey(),
            "witness.example/w1+cc9a7044+BBpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
        );
        let text = b"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
        let line = w.cosign(text, 1_679_315_147).unwrap();
        assert_eq!(
            String::from_utf8(line.clone()).unwrap(),
            "— witness.example/w1 zJpwRAAAAABkGFDLJeR//pqzhnEKVvEm2wWbh2RJ6oru5+cUUfm5X9NnlaGr8aSH9QE5RVZD4QGlxl2F5UpVIIi94p178KLfqPPsAA==\n"
        );
    }

    #[test]
    fn a_checkpoint_verifies_with_its_cosignatures_and_not_altered() {
        let log = LogSigner::new("vrs.example/log", SigningKey::from_bytes(&[5; 32])).unwrap();
        let note = log.sign(3, Hash([9; 32])).unwrap();
        let w = Cosigner::new("w1", SigningKey::from_bytes(&[6; 32])).unwrap();
        let text_len =
            note.len() - note.iter().rev().skip(1).position(|&b| b == b'\n').unwrap() - 1;
        let text = &note[..text_len - 1];
        let cosigned = with_lines(&note, &w.cosign(text, 1_700_000_000).unwrap());
        let lk = parse_vkey(&log.vkey()).unwrap();
        let wk = parse_vkey(&w.vkey()).unwrap();
        let v = verify_checkpoint(&cosigned, &lk, std::slice::from_ref(&wk)).unwrap();
        assert_eq!((v.size, v.root), (3, Hash([9; 32])));
        assert_eq!(
            v.cosignatures,
            vec![(("w1".to_owned(), wk.id), 1_700_000_000)]
        );
        // Without the witness's key its line is ignored.
        assert!(verify_checkpoint(&cosigned, &lk, &[])
            .unwrap()
            .cosignatures
            .is_empty());
        // A cosignature over another time fails the note.
        let mut bad = cosigned.clone();
        let at = bad.len() - 10;
        bad[at] = if bad[at] == b'A' { b'B' } else { b'A' };
        assert!(verify_checkpoint(&bad, &lk, &[wk]).is_err());
        // Another log's key: refused.
        let other = parse_vkey(
            &LogSigner::new("vrs.example/log", SigningKey::from_bytes(&[7; 32]))
                .unwrap()
                .vkey(),
        )
        .unwrap();
        assert!(matches!(
            verify_checkpoint(&note, &other, &[]),
            Err(CheckpointError::Signature(_))
        ));
    }
}
