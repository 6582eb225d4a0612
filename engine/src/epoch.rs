//! The epoch chain: how an epoch's VDF input follows from the previous output and the bets
//! committed in the epoch (docs/PROTOCOL.md, "Epochs").
//!
//! ```text
//! seed_e = SHA-256( u8(18) ‖ "vrs/v1/epoch-input" ‖ u64(e) ‖ y_{e−1} ‖ bets_root_e ‖ u64(T_e) )
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
/// Tag of the genesis output y_0.
pub const TAG_GENESIS: &[u8] = b"vrs/v1/genesis";

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
    fn genesis_depends_on_the_modulus() {
        let a = Modulus::by_name("test512").unwrap();
        let b = Modulus::by_name("test1024").unwrap();
        assert_ne!(
            a.encode(&genesis_output(&a)),
            b.encode(&genesis_output(&b))[..a.byte_len()].to_vec()
        );
    }
}
