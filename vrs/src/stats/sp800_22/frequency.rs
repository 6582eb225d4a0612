//! The tests of SP 800-22 §2.1–2.4 and §2.13 that look at counts of ones: frequency
//! (monobit), frequency within a block, runs, the longest run of ones in a block, and the
//! cumulative sums. `bits` holds one bit per byte (0 or 1), in stream order.

use crate::stats::special::{erfc, gamma_q, normal_sf};
use std::f64::consts::SQRT_2;

fn ones(bits: &[u8]) -> usize {
    bits.iter().filter(|&&b| b == 1).count()
}

/// §2.1: is the proportion of ones near ½?
pub fn frequency(bits: &[u8]) -> f64 {
    let n = bits.len() as f64;
    let s = 2.0 * ones(bits) as f64 - n;
    erfc(s.abs() / n.sqrt() / SQRT_2)
}

/// §2.2: the proportion of ones in each M-bit block (trailing bits that fill no block unused).
pub fn block_frequency(bits: &[u8], m: usize) -> f64 {
    let blocks = bits.len() / m;
    let chi2: f64 = bits
        .chunks_exact(m)
        .map(|b| {
            let pi = ones(b) as f64 / m as f64;
            (pi - 0.5) * (pi - 0.5)
        })
        .sum::<f64>()
        * 4.0
        * m as f64;
    gamma_q(blocks as f64 / 2.0, chi2 / 2.0)
}

/// §2.3: the number of runs. When the frequency prerequisite fails (|π − ½| ≥ 2/√n) the test
/// is not run and its P-value is 0, as in NIST's reference code.
pub fn runs(bits: &[u8]) -> f64 {
    let n = bits.len() as f64;
    let pi = ones(bits) as f64 / n;
    if (pi - 0.5).abs() >= 2.0 / n.sqrt() {
        return 0.0;
    }
    let v = 1 + bits.windows(2).filter(|w| w[0] != w[1]).count();
    let spread = 2.0 * n * pi * (1.0 - pi);
    erfc((v as f64 - spread).abs() / (2.0 * (2.0 * n).sqrt() * pi * (1.0 - pi)))
}

/// §2.4: the longest run of ones in each block, with the block size, classes and class
/// probabilities of the SP's table for n (None below 128 bits).
pub fn longest_run(bits: &[u8]) -> Option<f64> {
    let n = bits.len();
    // (M, the smallest class's longest run, class probabilities; the last class is "or more").
    let (m, first, pi): (usize, usize, &[f64]) = if n >= 750_000 {
        (
            10_000,
            10,
            &[0.0882, 0.2092, 0.2483, 0.1933, 0.1208, 0.0675, 0.0727],
        )
    } else if n >= 6_272 {
        (128, 4, &[0.1174, 0.2430, 0.2493, 0.1752, 0.1027, 0.1124])
    } else if n >= 128 {
        (8, 1, &[0.2148, 0.3672, 0.2305, 0.1875])
    } else {
        return None;
    };
    let k = pi.len() - 1;
    let mut v = vec![0u64; pi.len()];
    let blocks = n / m;
    for block in bits.chunks_exact(m) {
        let (mut run, mut longest) = (0usize, 0usize);
        for &b in block {
            run = if b == 1 { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        v[longest.saturating_sub(first).min(k)] += 1;
    }
    let chi2 = chi_square(&v, pi, blocks as f64);
    Some(gamma_q(k as f64 / 2.0, chi2 / 2.0))
}

/// Σ (v_i − Nπ_i)² / (Nπ_i).
pub(super) fn chi_square(v: &[u64], pi: &[f64], total: f64) -> f64 {
    v.iter()
        .zip(pi)
        .map(|(&v, &p)| {
            let e = total * p;
            (v as f64 - e) * (v as f64 - e) / e
        })
        .sum()
}

/// §2.13: the largest excursion of the ±1 walk from zero, forward or (reverse) from the end.
pub fn cumulative_sums(bits: &[u8], reverse: bool) -> f64 {
    let n = bits.len() as i64;
    let step = |b: &u8| if *b == 1 { 1i64 } else { -1 };
    let (mut s, mut z) = (0i64, 0i64);
    let mut visit = |b: &u8| {
        s += step(b);
        z = z.max(s.abs());
    };
    if reverse {
        bits.iter().rev().for_each(&mut visit);
    } else {
        bits.iter().for_each(&mut visit);
    }
    // The SP's sums, with its integer bounds (C division, truncating toward zero).
    let phi = |x: f64| 1.0 - normal_sf(x);
    let root_n = (n as f64).sqrt();
    let zf = z as f64;
    let nz = n / z;
    let mut sum1 = 0.0;
    for k in (-nz + 1) / 4..=(nz - 1) / 4 {
        let k = k as f64;
        sum1 += phi((4.0 * k + 1.0) * zf / root_n) - phi((4.0 * k - 1.0) * zf / root_n);
    }
    let mut sum2 = 0.0;
    for k in (-nz - 3) / 4..=(nz - 1) / 4 {
        let k = k as f64;
        sum2 += phi((4.0 * k + 3.0) * zf / root_n) - phi((4.0 * k + 1.0) * zf / root_n);
    }
    1.0 - sum1 + sum2
}

#[cfg(test)]
mod tests {
    use super::super::examples::{bits, close, PI_100};
    use super::*;

    #[test]
    fn the_sp_worked_examples() {
        assert!(close(frequency(&bits("1011010101")), 0.527089));
        assert!(close(frequency(&bits(PI_100)), 0.109599));
        assert!(close(block_frequency(&bits("0110011010"), 3), 0.801252));
        assert!(close(block_frequency(&bits(PI_100), 10), 0.706438));
        assert!(close(runs(&bits("1001101011")), 0.147232));
        assert!(close(runs(&bits(PI_100)), 0.500798));
        let longest = "11001100000101010110110001001100111000000000001001\
                       00110101010001000100111101011010000000110101111100\
                       1100111001101101100010110010";
        // The SP prints 0.180609 from its rounded table; the statistic 4.882605 agrees.
        let p = longest_run(&bits(longest)).expect("128 bits");
        assert!((p - 0.180609).abs() < 2e-4, "{p}");
        assert!(close(cumulative_sums(&bits(PI_100), false), 0.219194));
        assert!(close(cumulative_sums(&bits(PI_100), true), 0.114866));
    }

    #[test]
    fn runs_is_not_run_when_the_frequency_prerequisite_fails() {
        assert_eq!(runs(&[1u8; 100]), 0.0);
    }
}
