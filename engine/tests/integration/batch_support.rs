//! Inputs shared by the batch backend tests: random odd moduli and residues with the edges.

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::RngCore;
use vrs_engine::group::Modulus;

/// A random value of at most `bits` bits.
pub fn below_bits(rng: &mut StdRng, bits: u64) -> BigUint {
    let mut bytes = vec![0u8; bits.div_ceil(8) as usize];
    rng.fill_bytes(&mut bytes);
    BigUint::from_bytes_le(&bytes) % (BigUint::from(1u8) << bits)
}

/// A random odd modulus of exactly `bits` bits.
pub fn random_modulus(rng: &mut StdRng, bits: u64) -> Modulus {
    let mut n = below_bits(rng, bits);
    n.set_bit(bits - 1, true);
    n.set_bit(0, true);
    Modulus::new("random", n).expect("odd modulus of 64+ bits")
}

/// `len` residues below N; 0, 1 and N − 1 first where there is room.
pub fn residues(rng: &mut StdRng, m: &Modulus, len: usize) -> Vec<BigUint> {
    let edges = [BigUint::from(0u8), BigUint::from(1u8), m.n() - 1u8];
    (0..len)
        .map(|i| match edges.get(i) {
            Some(e) if len > 1 => e.clone(),
            _ => below_bits(rng, m.bits()) % m.n(),
        })
        .collect()
}
