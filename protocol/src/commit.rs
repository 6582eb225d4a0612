//! The bytes a game commits to: one leaf of its epoch's bets tree (docs/PROTOCOL.md,
//! "Bet leaves").
//!
//! ```text
//! leaf = u8(10) ‖ "vrs/v1/bet" ‖ field(game_id) ‖ field(game) ‖ field(bet_type) ‖ field(target)
//!        ‖ field(combo) ‖ field(amount) ‖ field(player_id) ‖ field(player_seed) ‖ field(operator_key)
//! field(s) = u16(len(UTF-8(s))) big-endian ‖ UTF-8(s)
//! ```
//! Absent values are the empty string; target is decimal ("7"), combo is "a,b" ascending,
//! amount has two fraction digits ("1.00"). The leaf hash is RFC 6962's SHA-256(0x00 ‖ leaf).

use crate::record::NewGame;

/// Domain tag that starts every leaf.
pub const LEAF_TAG: &[u8] = b"vrs/v1/bet";

/// The committed fields of a game, as strings, in leaf order.
pub fn leaf_fields(g: &NewGame) -> [String; 9] {
    [
        g.game_id.clone(),
        g.game.clone(),
        g.bet_type.clone().unwrap_or_default(),
        g.target.map(|t| t.to_string()).unwrap_or_default(),
        g.combo
            .map(|c| format!("{},{}", c[0], c[1]))
            .unwrap_or_default(),
        g.amount.clone().unwrap_or_default(),
        g.player_id.clone(),
        g.player_seed.clone().unwrap_or_default(),
        g.operator_key.clone(),
    ]
}

/// The leaf bytes of `g` (its own `leaf` member is ignored).
pub fn bet_leaf(g: &NewGame) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.push(LEAF_TAG.len() as u8);
    out.extend_from_slice(LEAF_TAG);
    for f in leaf_fields(g) {
        // Request limits keep every field far below 65535 bytes; clamp defensively anyway.
        let bytes = f.as_bytes();
        let len = bytes.len().min(u16::MAX as usize);
        out.extend_from_slice(&(len as u16).to_be_bytes());
        out.extend_from_slice(&bytes[..len]);
    }
    out
}

/// The names of the leaf's fields, in order.
pub const LEAF_FIELD_NAMES: [&str; 9] = [
    "game_id",
    "game",
    "bet_type",
    "target",
    "combo",
    "amount",
    "player_id",
    "player_seed",
    "operator_key",
];

/// The fields of leaf bytes, in order; `Err` when the bytes are not a bet leaf.
pub fn parse_leaf(leaf: &[u8]) -> Result<Vec<String>, String> {
    let rest = leaf
        .strip_prefix(&[LEAF_TAG.len() as u8][..])
        .and_then(|r| r.strip_prefix(LEAF_TAG))
        .ok_or("the leaf does not start with the bet tag")?;
    let mut rest = rest;
    let mut fields = Vec::with_capacity(9);
    for name in LEAF_FIELD_NAMES {
        let (len, tail) = rest
            .split_first_chunk::<2>()
            .ok_or_else(|| format!("the leaf ends before {name}"))?;
        let len = usize::from(u16::from_be_bytes(*len));
        if tail.len() < len {
            return Err(format!("the leaf ends inside {name}"));
        }
        let (value, tail) = tail.split_at(len);
        fields.push(String::from_utf8(value.to_vec()).map_err(|_| format!("{name} is not UTF-8"))?);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err("bytes after the last field".into());
    }
    Ok(fields)
}

/// Domain tag of a game's result hash.
pub const RESULT_TAG: &[u8] = b"vrs/v1/game-result";

/// The result hash of a resolved game (docs/PROTOCOL.md §17, what the notary's
/// `vrs-game-result` schema attests):
///
/// ```text
/// result_hash = SHA-256( u8(18) ‖ "vrs/v1/game-result" ‖ u32(len(leaf)) ‖ leaf ‖ field(rngValue)
///               ‖ field(dice) ‖ field(won) ‖ field(payout) )
/// ```
/// `leaf` is the bet leaf above, rngValue 64 lowercase hex digits, dice "a,b[,c]" in the order
/// drawn, won "true"/"false", payout with two fraction digits; absent values are empty.
pub fn result_hash(g: &NewGame, r: &crate::record::GameResolution) -> [u8; 32] {
    use sha2::Digest;
    let mut h = vrs_engine::hash::tagged(RESULT_TAG);
    let leaf = bet_leaf(g);
    h.update((leaf.len() as u32).to_be_bytes());
    h.update(&leaf);
    let dice: Vec<String> = r.dice.iter().map(u8::to_string).collect();
    for f in [
        r.rng_value.clone(),
        dice.join(","),
        r.won.map(|w| w.to_string()).unwrap_or_default(),
        r.payout.clone().unwrap_or_default(),
    ] {
        let bytes = f.as_bytes();
        let len = bytes.len().min(u16::MAX as usize);
        h.update((len as u16).to_be_bytes());
        h.update(&bytes[..len]);
    }
    h.finalize().into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn game() -> NewGame {
        NewGame {
            game_id: "0123456789abcdef0123456789abcdef".into(),
            request_id: "r".into(),
            game: "sicbo".into(),
            bet_type: Some("combo".into()),
            target: None,
            combo: Some([2, 5]),
            amount: Some("2.50".into()),
            player_id: "alice".into(),
            player_seed: Some("lucky".into()),
            operator_key: "vrs-house".into(),
            created_at_ms: 0,
            leaf: vec![],
            acceptance: None,
        }
    }

    #[test]
    fn layout_is_tag_then_length_prefixed_fields() {
        let leaf = bet_leaf(&game());
        let mut expect = vec![10u8];
        expect.extend_from_slice(b"vrs/v1/bet");
        for f in [
            "0123456789abcdef0123456789abcdef",
            "sicbo",
            "combo",
            "",
            "2,5",
            "2.50",
            "alice",
            "lucky",
            "vrs-house",
        ] {
            expect.extend_from_slice(&(f.len() as u16).to_be_bytes());
            expect.extend_from_slice(f.as_bytes());
        }
        assert_eq!(leaf, expect);
    }

    #[test]
    fn leaves_parse_back_to_their_fields() {
        let g = game();
        let fields = parse_leaf(&bet_leaf(&g)).unwrap();
        assert_eq!(fields, leaf_fields(&g).to_vec());
        let mut cut = bet_leaf(&g);
        cut.pop();
        assert!(parse_leaf(&cut).is_err());
        assert!(parse_leaf(b"\x0avrs/v1/beX").is_err());
    }

    #[test]
    fn every_field_is_committed() {
        let base = bet_leaf(&game());
        let mut g = game();
        g.player_seed = None;
        assert_ne!(bet_leaf(&g), base);
        let mut g = game();
        g.amount = Some("2.51".into());
        assert_ne!(bet_leaf(&g), base);
        let mut g = game();
        g.created_at_ms = 5; // not committed: the time is the server's, not the bet's
        assert_eq!(bet_leaf(&g), base);
    }
}
