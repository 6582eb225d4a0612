//! SP 800-22 §2.5, the binary matrix rank test: the ranks over GF(2) of disjoint 32 × 32
//! matrices filled row by row from the stream.

use super::frequency::chi_square;

const SIZE: usize = 32;

/// The P-value, or None below 38 matrices (the SP's minimum).
pub fn rank(bits: &[u8]) -> Option<f64> {
    let matrices = bits.len() / (SIZE * SIZE);
    if matrices < 38 {
        return None;
    }
    // Classes: full rank, rank 31, rank ≤ 30.
    let mut v = [0u64; 3];
    for block in bits.chunks_exact(SIZE * SIZE).take(matrices) {
        let mut rows = [0u32; SIZE];
        for (row, bits) in rows.iter_mut().zip(block.chunks_exact(SIZE)) {
            *row = bits.iter().fold(0u32, |acc, &b| (acc << 1) | u32::from(b));
        }
        match gf2_rank(&mut rows) {
            32 => v[0] += 1,
            31 => v[1] += 1,
            _ => v[2] += 1,
        }
    }
    let p32 = rank_probability(32);
    let p31 = rank_probability(31);
    let pi = [p32, p31, 1.0 - p32 - p31];
    let chi2 = chi_square(&v, &pi, matrices as f64);
    // Two degrees of freedom: Q(1, χ²/2) = e^(−χ²/2).
    Some((-chi2 / 2.0).exp())
}

/// The rank of the rows over GF(2), by elimination (the rows are consumed).
pub fn gf2_rank(rows: &mut [u32]) -> usize {
    let mut rank = 0;
    for bit in (0..32).rev() {
        let mask = 1u32 << bit;
        let Some(pivot) = (rank..rows.len()).find(|&r| rows[r] & mask != 0) else {
            continue;
        };
        rows.swap(rank, pivot);
        let p = rows[rank];
        for (r, row) in rows.iter_mut().enumerate() {
            if r != rank && *row & mask != 0 {
                *row ^= p;
            }
        }
        rank += 1;
    }
    rank
}

/// P(a random 32 × 32 matrix over GF(2) has rank r):
/// 2^(r(2·32 − r) − 32·32) · Π_{i<r} (1 − 2^(i−32))² / (1 − 2^(i−r)).
pub fn rank_probability(r: usize) -> f64 {
    let (m, r) = (SIZE as i32, r as i32);
    let mut p = 2f64.powi(r * (2 * m - r) - m * m);
    for i in 0..r {
        let a = 1.0 - 2f64.powi(i - m);
        p *= a * a / (1.0 - 2f64.powi(i - r));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_probabilities_are_the_sps() {
        assert!((rank_probability(32) - 0.288_788).abs() < 1e-6);
        assert!((rank_probability(31) - 0.577_576).abs() < 1e-6);
        assert!((1.0 - rank_probability(32) - rank_probability(31) - 0.133_636).abs() < 1e-6);
    }

    #[test]
    fn gf2_rank_of_known_matrices() {
        let mut identity: Vec<u32> = (0..32).map(|i| 1u32 << i).collect();
        assert_eq!(gf2_rank(&mut identity), 32);
        let mut twice = vec![0b1011u32, 0b0110, 0b1101, 0];
        // The third row is the sum of the first two.
        assert_eq!(gf2_rank(&mut twice), 2);
    }
}
