//! The epoch chain: how an epoch's VDF input follows from an earlier output and the bets
//! committed in the epoch (docs/PROTOCOL.md, "Epochs").
//!
//! ```text
//! version 1:
//! seed_e = SHA-256( u8(18) ‖ "vrs/v1/epoch-input" ‖ u64(e) ‖ y_{e−1} ‖ bets_root_e ‖ u64(T_e) )
//! version 2 (an epoch that commits to its timing, see [`Timing`]):
//! seed_e = SHA-256( u8(18) ‖ "vrs/v2/epoch-input" ‖ u64(e) ‖ u64(p) ‖ y_p ‖ bets_root_e
//!                   ‖ nonce_e ‖ u64(T_e) ‖ u64(opened_e) ‖ u64(closed_e) ‖ u32(margin_e)
//!                   ‖ u64(rate_e) )
//! x_e    = hash_to_group(seed_e)
//! y_0    = hash_to_group( SHA-256( u8(14) ‖ "vrs/v1/genesis" ‖ u16(len(id)) ‖ id ) )
//! ```
//! with integers big-endian, y as fixed-width big-endian bytes of the modulus, and `id` the
//! modulus identifier (e.g. `rsa2048`).

use crate::group::{Element, Modulus};
use crate::hash::tagged;
use crate::merkle::Hash;
use sha2::Digest;

/// Tag of the epoch input seed.
pub const TAG_EPOCH_INPUT: &[u8] = b"vrs/v1/epoch-input";
/// Tag of the version-2 epoch input seed.
pub const TAG_EPOCH_INPUT_V2: &[u8] = b"vrs/v2/epoch-input";
/// Tag of the genesis output y_0.
pub const TAG_GENESIS: &[u8] = b"vrs/v1/genesis";

/// What a version-2 epoch commits to besides its bets and its nonce: the earlier epoch p whose
/// output enters its input (0: the genesis output), T, its bet window and the two numbers its
/// window is bounded by (the rule is [`crate::timing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// p(e), below e; 0 stands for y_0.
    pub previous: u64,
    pub iterations: u64,
    /// When the epoch began to accept games (Unix ms).
    pub opened_at_ms: u64,
    /// When its set of games was fixed (Unix ms).
    pub closed_at_ms: u64,
    /// The security margin A in hundredths (150: A = 1.5).
    pub margin_centi: u32,
    /// The server's squaring rate R that the window is measured against.
    pub squarings_per_second: u64,
}

/// seed_e of a version-2 epoch over y_p as stored.
pub fn epoch_seed_v2(
    epoch: u64,
    prev_y: &[u8],
    bets_root: &Hash,
    nonce: &[u8; 32],
    timing: &Timing,
) -> [u8; 32] {
    let mut h = tagged(TAG_EPOCH_INPUT_V2);
    h.update(epoch.to_be_bytes());
    h.update(timing.previous.to_be_bytes());
    h.update(prev_y);
    h.update(bets_root);
    h.update(nonce);
    h.update(timing.iterations.to_be_bytes());
    h.update(timing.opened_at_ms.to_be_bytes());
    h.update(timing.closed_at_ms.to_be_bytes());
    h.update(timing.margin_centi.to_be_bytes());
    h.update(timing.squarings_per_second.to_be_bytes());
    h.finalize().into()
}

/// seed_e, the 32 bytes hashed to the group to give x_e.
pub fn epoch_seed(
    modulus: &Modulus,
    epoch: u64,
    prev_y: &Element,
    bets_root: &Hash,
    t: u64,
) -> [u8; 32] {
    epoch_seed_bytes(epoch, &modulus.encode(prev_y), bets_root, t)
}

/// seed_e over y_{e−1} as stored: the same for every group family (a class group's epoch
/// takes its discriminant from it, `classgroup::epoch`).
pub fn epoch_seed_bytes(epoch: u64, prev_y: &[u8], bets_root: &Hash, t: u64) -> [u8; 32] {
    let mut h = tagged(TAG_EPOCH_INPUT);
    h.update(epoch.to_be_bytes());
    h.update(prev_y);
    h.update(bets_root);
    h.update(t.to_be_bytes());
    h.finalize().into()
}

/// x_e: the VDF input of epoch `epoch`.
pub fn epoch_input(
    modulus: &Modulus,
    epoch: u64,
    prev_y: &Element,
    bets_root: &Hash,
    t: u64,
) -> Element {
    modulus.hash_to_group(&epoch_seed(modulus, epoch, prev_y, bets_root, t))
}

/// y_0: the documented "previous output" of the first epoch, fixed per modulus. It is public
/// and predictable on purpose; fairness comes from each later input including the bets.
pub fn genesis_output(modulus: &Modulus) -> Element {
    let id = modulus.id().as_bytes();
    let mut h = tagged(TAG_GENESIS);
    h.update((id.len() as u16).to_be_bytes());
    h.update(id);
    modulus.hash_to_group(&h.finalize().into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_field_changes_the_input() {
        let m = Modulus::by_name("test512").unwrap();
        let y0 = genesis_output(&m);
        let base = epoch_input(&m, 1, &y0, &[0; 32], 1000);
        assert_ne!(base, epoch_input(&m, 2, &y0, &[0; 32], 1000));
        assert_ne!(base, epoch_input(&m, 1, &y0, &[1; 32], 1000));
        assert_ne!(base, epoch_input(&m, 1, &y0, &[0; 32], 1001));
        let other = m.hash_to_group(&[9; 32]);
        assert_ne!(base, epoch_input(&m, 1, &other, &[0; 32], 1000));
        assert_eq!(base, epoch_input(&m, 1, &y0, &[0; 32], 1000));
    }

    #[test]
    fn every_field_changes_the_v2_seed() {
        let t = Timing {
            previous: 4,
            iterations: 1000,
            opened_at_ms: 10,
            closed_at_ms: 20,
            margin_centi: 150,
            squarings_per_second: 7,
        };
        let y = [3u8; 64];
        let base = epoch_seed_v2(5, &y, &[1; 32], &[2; 32], &t);
        assert_eq!(base, epoch_seed_v2(5, &y, &[1; 32], &[2; 32], &t));
        assert_ne!(base, epoch_seed_v2(6, &y, &[1; 32], &[2; 32], &t));
        assert_ne!(base, epoch_seed_v2(5, &[4; 64], &[1; 32], &[2; 32], &t));
        assert_ne!(base, epoch_seed_v2(5, &y, &[9; 32], &[2; 32], &t));
        assert_ne!(base, epoch_seed_v2(5, &y, &[1; 32], &[9; 32], &t));
        let changed = [
            Timing { previous: 3, ..t },
            Timing {
                iterations: 1001,
                ..t
            },
            Timing {
                opened_at_ms: 11,
                ..t
            },
            Timing {
                closed_at_ms: 21,
                ..t
            },
            Timing {
                margin_centi: 151,
                ..t
            },
            Timing {
                squarings_per_second: 8,
                ..t
            },
        ];
        for c in changed {
            assert_ne!(base, epoch_seed_v2(5, &y, &[1; 32], &[2; 32], &c), "{c:?}");
        }
        assert_ne!(base, epoch_seed_bytes(5, &y, &[1; 32], 1000));
    }

    #[test]
    fn genesis_depends_on_the_modulus() {
        let a = Modulus::by_name("test512").unwrap();
        let b = Modulus::by_name("test1024").unwrap();
        assert_ne!(
            a.encode(&genesis_output(&a)),
            b.encode(&genesis_output(&b))[..a.byte_len()].to_vec()
        );
    }
}
