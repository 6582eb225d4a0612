//! From a VDF output to game randomness.
//!
//! The VDF output `y` is public once the epoch is proven, so anyone can recompute every value
//! here. HMAC-SHA256 with `y` as the key binds each game to the epoch's output; the game id
//! (fixed-length, chosen by the service before `y` is known) and the player's seed in the
//! message make every game's value distinct and let a player contribute entropy the operator
//! could not predict when the game was created.
//!
//! Dice come from a byte stream by rejection sampling: 252 = 6 × 42 is the largest multiple of
//! 6 not above 256, so bytes 252..=255 are skipped and every accepted byte maps to a face with
//! probability exactly 1/6 (a plain `b mod 6` would favour faces 1–4 by 43/256 against 42/256).

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The derivation of `rngValue`, as published to clients.
/// (`y_e` is the output of the game's epoch; `‖` is concatenation.)
pub const DERIVATION: &str = "rngValue = HMAC-SHA256(key = y_e as fixed-width big-endian bytes, message = UTF-8(game_id) ‖ UTF-8(player_seed or \"\"))";

/// The derivation of dice from `rngValue`, as published to clients.
pub const DICE_DERIVATION: &str = "byte stream = rngValue || HMAC-SHA256(key = rngValue, message = u32 big-endian 1) || HMAC-SHA256(key = rngValue, message = u32 big-endian 2) || ...; bytes >= 252 are skipped; each accepted byte b gives the die 1 + (b mod 6), in stream order";

/// Bytes at or above this value are skipped: 252 is the largest multiple of 6 that fits a byte.
pub const REJECT_AT: u8 = 252;

type HmacSha256 = Hmac<Sha256>;

/// HMAC-SHA256 of the concatenation of `parts` under `key`.
fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC takes keys of any length (longer than a block are hashed first), so this cannot fail.
    let Ok(mut mac) = HmacSha256::new_from_slice(key) else {
        unreachable!("HMAC-SHA256 accepts keys of any length")
    };
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// `rngValue = HMAC-SHA256(key = y, message = UTF-8(game_id) ‖ UTF-8(player_seed))`, where `y`
/// is the VDF output as fixed-width big-endian bytes, used as given, and `player_seed` is `""`
/// when the player gave none.
pub fn rng_value(y: &[u8], game_id: &str, player_seed: &str) -> [u8; 32] {
    hmac_sha256(y, &[game_id.as_bytes(), player_seed.as_bytes()])
}

/// Dice drawn from an `rngValue`, with everything needed to show the work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiceRoll {
    /// The dice, each 1..=6, in stream order.
    pub dice: Vec<u8>,
    /// Every byte consumed from the stream, skipped ones included, in order.
    pub bytes_used: Vec<u8>,
    /// How many consumed bytes were skipped (≥ 252).
    pub skipped: usize,
    /// How many HMAC blocks were generated beyond the 32 bytes of `rngValue`.
    pub blocks: u32,
}

/// Draws `n` dice from `rng_value`.
///
/// The byte stream is the 32 bytes of `rng_value`, followed by blocks
/// `HMAC-SHA256(key = rng_value, message = big-endian u32 counter)` for counters 1, 2, …, each
/// appended in counter order and generated only when needed. Bytes ≥ 252 are skipped; each
/// accepted byte `b` gives the die `1 + b mod 6`.
pub fn roll_dice(rng_value: &[u8; 32], n: usize) -> DiceRoll {
    let mut roll = DiceRoll {
        dice: Vec::with_capacity(n),
        bytes_used: Vec::with_capacity(n),
        skipped: 0,
        blocks: 0,
    };
    let mut block: [u8; 32] = *rng_value;
    let mut pos = 0;
    while roll.dice.len() < n {
        if pos == block.len() {
            // Four skipped bytes in 256 per byte: running out of u32 counters would take
            // ~2^37 bytes of rejections in a row, which SHA-256 output does not produce.
            roll.blocks = roll.blocks.wrapping_add(1);
            block = hmac_sha256(rng_value, &[&roll.blocks.to_be_bytes()]);
            pos = 0;
        }
        let b = block[pos];
        pos += 1;
        roll.bytes_used.push(b);
        if b >= REJECT_AT {
            roll.skipped += 1;
        } else {
            roll.dice.push(1 + b % 6);
        }
    }
    roll
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sha2::Digest;

    /// HMAC-SHA256 from its definition (RFC 2104), independent of the `hmac` crate.
    fn hmac_by_hand(key: &[u8], message: &[u8]) -> [u8; 32] {
        let mut k = [0u8; 64];
        if key.len() > 64 {
            k[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            k[..key.len()].copy_from_slice(key);
        }
        let mut inner = Sha256::new();
        inner.update(k.map(|b| b ^ 0x36));
        inner.update(message);
        let inner = inner.finalize();
        let mut outer = Sha256::new();
        outer.update(k.map(|b| b ^ 0x5c));
        outer.update(inner);
        outer.finalize().into()
    }

    /// The dice stream recomputed independently: the first `len` bytes.
    fn stream_by_hand(rng_value: &[u8; 32], len: usize) -> Vec<u8> {
        let mut stream = rng_value.to_vec();
        let mut counter: u32 = 1;
        while stream.len() < len {
            stream.extend_from_slice(&hmac_by_hand(rng_value, &counter.to_be_bytes()));
            counter += 1;
        }
        stream.truncate(len);
        stream
    }

    /// Checks a roll against the independent stream.
    fn check_roll(value: &[u8; 32], n: usize) -> DiceRoll {
        let roll = roll_dice(value, n);
        let stream = stream_by_hand(value, roll.bytes_used.len());
        assert_eq!(roll.bytes_used, stream);
        let expected: Vec<u8> = stream
            .iter()
            .filter(|&&b| b < 252)
            .map(|&b| 1 + b % 6)
            .collect();
        assert_eq!(roll.dice, expected);
        assert_eq!(roll.dice.len(), n);
        assert_eq!(roll.skipped, stream.iter().filter(|&&b| b >= 252).count());
        // The last byte consumed gave the last die: no byte is consumed needlessly.
        if n > 0 {
            assert!(*roll.bytes_used.last().unwrap() < 252);
        }
        let blocks = roll.bytes_used.len().saturating_sub(32).div_ceil(32);
        assert_eq!(roll.blocks as usize, blocks);
        roll
    }

    #[test]
    fn rng_value_matches_hand_made_hmac() {
        // A 256-byte key (longer than the SHA-256 block: hashed first) and a 64-byte key
        // (exactly one block: used as is).
        let key256: Vec<u8> = (0..=255u8).collect();
        let key64: Vec<u8> = (1..=64u8).collect();
        for key in [&key256, &key64] {
            for (game, seed) in [
                ("0123456789abcdef0123456789abcdef", "lucky"),
                ("0123456789abcdef0123456789abcdef", ""),
                ("g", "ünïcødé seed"),
            ] {
                let msg = format!("{game}{seed}");
                assert_eq!(
                    rng_value(key, game, seed),
                    hmac_by_hand(key, msg.as_bytes())
                );
            }
        }
        // The key is used as given: a leading zero byte changes the value.
        let mut padded = vec![0u8];
        padded.extend_from_slice(&key64);
        assert_ne!(rng_value(&padded, "g", ""), rng_value(&key64, "g", ""));
        // RFC 4231 test case 2, so the hand-made HMAC is itself checked.
        assert_eq!(
            hex::encode(hmac_by_hand(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn roll_dice_skips_high_bytes() {
        // Search deterministically for a value whose first bytes include a skipped one.
        let y: Vec<u8> = (1..=64u8).collect();
        let (value, roll) = (0..10_000)
            .map(|i| rng_value(&y, &format!("skip-search-{i}"), ""))
            .map(|v| (v, roll_dice(&v, 3)))
            .find(|(_, r)| r.skipped > 0)
            .unwrap();
        assert!(roll.bytes_used.len() > 3);
        let roll = check_roll(&value, 3);
        assert!(roll.skipped > 0);
        assert_eq!(roll.blocks, 0);
    }

    #[test]
    fn roll_dice_generates_extra_blocks() {
        let value = rng_value(&[7u8; 256], "0123456789abcdef0123456789abcdef", "x");
        let roll = check_roll(&value, 40);
        assert!(roll.blocks >= 1);
        let roll = check_roll(&value, 100);
        assert!(roll.blocks >= 3);
        // Dice are taken in order: fewer dice are a prefix of more dice.
        let fewer = roll_dice(&value, 10);
        assert_eq!(fewer.dice[..], roll.dice[..10]);
        let none = roll_dice(&value, 0);
        assert!(none.dice.is_empty() && none.bytes_used.is_empty() && none.blocks == 0);
    }

    #[test]
    fn roll_dice_all_high_bytes() {
        // A value of only skipped bytes: every die comes from HMAC blocks.
        let roll = check_roll(&[0xff; 32], 2);
        assert_eq!(roll.skipped, roll.bytes_used.len() - 2);
        assert!(roll.skipped >= 32);
        assert!(roll.blocks >= 1);
        // Many values: every stream prefix agrees with the independent computation.
        for i in 0..200u32 {
            let v = hmac_by_hand(&i.to_be_bytes(), b"many");
            check_roll(&v, 5);
        }
    }
}
