//! The body of a C2SP tlog-witness `add-checkpoint` request:
//!
//! ```text
//! old <size>\n
//! <base64 hash>\n            (0 to 63 consistency proof lines)
//! \n
//! <signed checkpoint note>
//! ```

use super::tree::{parse_b64_hash, Hash};
use base64::prelude::{Engine as _, BASE64_STANDARD};

/// Most proof lines a client may send.
pub const MAX_PROOF_LINES: usize = 63;

/// A parsed submission.
#[derive(Debug, PartialEq)]
pub struct Submission {
    pub old_size: u64,
    pub proof: Vec<Hash>,
    pub checkpoint: Vec<u8>,
}

/// Parses a request body; the error says what is malformed (a 400).
pub fn parse(body: &[u8]) -> Result<Submission, String> {
    let text = std::str::from_utf8(body).map_err(|_| "the body is not UTF-8".to_owned())?;
    let (head, checkpoint) = text
        .split_once("\n\n")
        .ok_or("no empty line between the proof and the checkpoint")?;
    let mut lines = head.split('\n');
    let old = lines
        .next()
        .and_then(|l| l.strip_prefix("old "))
        .ok_or("the body does not start with an `old <size>` line")?;
    let canonical = !old.is_empty()
        && old.bytes().all(|b| b.is_ascii_digit())
        && (old == "0" || !old.starts_with('0'));
    let old_size = old
        .parse::<u64>()
        .ok()
        .filter(|_| canonical)
        .ok_or_else(|| format!("{old:?} is not a size in decimal"))?;
    let proof = lines.map(parse_b64_hash).collect::<Result<Vec<_>, _>>()?;
    if proof.len() > MAX_PROOF_LINES {
        return Err(format!(
            "{} proof lines (at most {MAX_PROOF_LINES})",
            proof.len()
        ));
    }
    Ok(Submission {
        old_size,
        proof,
        checkpoint: checkpoint.as_bytes().to_vec(),
    })
}

/// The body a client sends (what the service's publisher writes).
pub fn encode(old_size: u64, proof: &[Hash], checkpoint: &[u8]) -> Vec<u8> {
    let mut out = format!("old {old_size}\n").into_bytes();
    for h in proof {
        out.extend_from_slice(BASE64_STANDARD.encode(h.0).as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out.extend_from_slice(checkpoint);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_specs_example_parses_and_round_trips() {
        let body = "old 20852014\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\njrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n";
        let s = parse(body.as_bytes()).unwrap();
        assert_eq!(s.old_size, 20_852_014);
        assert_eq!(s.proof.len(), 2);
        assert!(s.checkpoint.starts_with(b"example.com/behind-the-sofa\n"));
        assert_eq!(encode(s.old_size, &s.proof, &s.checkpoint), body.as_bytes());
    }

    #[test]
    fn malformed_bodies_say_why() {
        for (body, says) in [
            ("old 01\n\nx\n", "decimal"),
            ("new 1\n\nx\n", "old <size>"),
            ("old 1\nnot-base64\n\nx\n", "base64"),
            ("old 1\n", "empty line"),
        ] {
            let e = parse(body.as_bytes()).unwrap_err();
            assert!(e.contains(says), "{body:?}: {e}");
        }
        assert_eq!(parse(b"old 0\n\nx\n").unwrap().old_size, 0);
    }
}
