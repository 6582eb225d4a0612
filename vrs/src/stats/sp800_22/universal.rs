//! SP 800-22 §2.9, Maurer's "universal statistical" test: how far back, on average, each L-bit
//! block last occurred; a compressible stream has a smaller distance.

use crate::stats::special::erfc;
use std::f64::consts::SQRT_2;

/// The SP's table: the expected value and variance of the statistic for L = 1…16.
const EXPECTED: [f64; 17] = [
    0.0,
    0.732_649_48,
    1.537_438_3,
    2.401_606_81,
    3.311_224_72,
    4.253_426_59,
    5.217_705_2,
    6.196_250_7,
    7.183_665_6,
    8.176_424_8,
    9.172_324_3,
    10.170_032,
    11.168_765,
    12.168_070,
    13.167_693,
    14.167_488,
    15.167_379,
];
const VARIANCE: [f64; 17] = [
    0.0, 0.690, 1.338, 1.901, 2.358, 2.705, 2.954, 3.125, 3.238, 3.311, 3.356, 3.384, 3.401, 3.410,
    3.416, 3.419, 3.421,
];

/// The SP's block length L for n bits (None below 387 840 bits, where L would be under 6).
pub fn block_length(n: usize) -> Option<usize> {
    const FROM: [(usize, usize); 11] = [
        (1_059_061_760, 16),
        (496_435_200, 15),
        (231_669_760, 14),
        (107_560_960, 13),
        (49_643_520, 12),
        (22_753_280, 11),
        (10_342_400, 10),
        (4_654_080, 9),
        (2_068_480, 8),
        (904_960, 7),
        (387_840, 6),
    ];
    FROM.iter().find(|(min, _)| n >= *min).map(|&(_, l)| l)
}

/// The P-value with the SP's L and Q = 10·2^L initialization blocks.
pub fn universal(bits: &[u8]) -> Option<f64> {
    let l = block_length(bits.len())?;
    let q = 10 << l;
    let k = bits.len() / l - q;
    let f = statistic(bits, l, q);
    let kf = k as f64;
    let lf = l as f64;
    let c = 0.7 - 0.8 / lf + (4.0 + 32.0 / lf) * kf.powf(-3.0 / lf) / 15.0;
    let sigma = c * (VARIANCE[l] / kf).sqrt();
    Some(erfc((f - EXPECTED[l]).abs() / (SQRT_2 * sigma)))
}

/// f_n: the mean over the test blocks of log2 of the distance to the block value's previous
/// occurrence, after q initialization blocks of l bits.
pub fn statistic(bits: &[u8], l: usize, q: usize) -> f64 {
    let k = bits.len() / l - q;
    let mut last = vec![0usize; 1 << l];
    let mut sum = 0.0;
    for (i, block) in bits.chunks_exact(l).take(q + k).enumerate() {
        let v = block
            .iter()
            .fold(0usize, |acc, &b| (acc << 1) | usize::from(b));
        let at = i + 1;
        if at > q {
            sum += ((at - last[v]) as f64).log2();
        }
        last[v] = at;
    }
    sum / k as f64
}

#[cfg(test)]
mod tests {
    use super::super::examples::bits;
    use super::*;

    #[test]
    fn the_sp_worked_example() {
        // L = 2, Q = 4: f_n = 1.1949875 (the SP then takes σ from its table without the
        // correction factor c, which this test does not use).
        let f = statistic(&bits("01011010011101010111"), 2, 4);
        assert!((f - 1.194_987_5).abs() < 1e-7, "{f}");
        assert_eq!(block_length(1_000_000), Some(7));
        assert_eq!(block_length(387_839), None);
    }
}
