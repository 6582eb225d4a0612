//! The tests of SP 800-22 §2.1–2.4 and §2.13 that look at counts of ones: frequency
//! (monobit), frequency within a block, runs, the longest run of ones in a block, and the
//! cumulative sums. `bits` holds one bit per byte (0 or 1), in stream order.

use super::Classes;
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

/// §2.4: the longest run of ones in each block, with the SP's block size and classes for n
/// (None below 128 bits).
pub fn longest_run(bits: &[u8], classes: Classes) -> Option<f64> {
    let n = bits.len();
    // (M, the smallest class's longest run, the SP's four-place class probabilities; the last
    // class is "or more").
    let (m, first, table): (usize, usize, &[f64]) = if n >= 750_000 {
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
    let pi = match classes {
        Classes::Sts => table.to_vec(),
        Classes::Exact => longest_run_probabilities(m, first, table.len()),
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
    let chi2 = chi_square(&v, &pi, blocks as f64);
    Some(gamma_q(k as f64 / 2.0, chi2 / 2.0))
}

/// P(the longest run of ones in m random bits is ≤ first), then = first + 1, …, and last
/// ≥ first + classes − 1: exact, from P(longest ≤ k) by dynamic programming over the run of
/// ones at the end of the bits seen.
pub fn longest_run_probabilities(m: usize, first: usize, classes: usize) -> Vec<f64> {
    let at_most = |k: usize| -> f64 {
        // p[r]: the probability that no run so far exceeds k and the last r bits are ones.
        let mut p = vec![0.0f64; k + 1];
        p[0] = 1.0;
        for _ in 0..m {
            let mut next = vec![0.0f64; k + 1];
            next[0] = p.iter().sum::<f64>() / 2.0;
            for r in 0..k {
                next[r + 1] = p[r] / 2.0;
            }
            p = next;
        }
        p.iter().sum()
    };
    let cumulative: Vec<f64> = (0..classes - 1).map(|i| at_most(first + i)).collect();
    let mut pi = Vec::with_capacity(classes);
    pi.push(cumulative[0]);
    for w in cumulative.windows(2) {
        pi.push(w[1] - w[0]);
    }
    pi.push(1.0 - cumulative[classes - 2]);
    pi
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
        // The SP's statistic, 4.882605, is from its four-place table; its P-value, 0.180609,
        // from the exact probabilities (2^-8 multiples for M = 8).
        let sts = longest_run(&bits(longest), Classes::Sts).expect("128 bits");
        let exact = longest_run(&bits(longest), Classes::Exact).expect("128 bits");
        assert!((sts - gamma_q(1.5, 4.882605 / 2.0)).abs() < 1e-6, "{sts}");
        assert!(close(exact, 0.180609), "{exact}");
        assert!(close(cumulative_sums(&bits(PI_100), false), 0.219194));
        assert!(close(cumulative_sums(&bits(PI_100), true), 0.114866));
    }

    #[test]
    fn longest_run_probabilities_are_exact() {
        // M = 8: the SP's 0.2148, 0.3672, 0.2305, 0.1875 are 55/256, 94/256, 59/256, 48/256.
        let p = longest_run_probabilities(8, 1, 4);
        for (got, want) in p.iter().zip([55.0, 94.0, 59.0, 48.0]) {
            assert!((got - want / 256.0).abs() < 1e-15, "{p:?}");
        }
        // M = 128: the SP's four-place table, one class off by one in the last place
        // (0.2493 for 0.24936). M = 10^4: its table is off by up to 0.0016 (0.0882 for
        // 0.086632); these are the exact values.
        let p = longest_run_probabilities(128, 4, 6);
        for (got, want) in p
            .iter()
            .zip([0.1174, 0.2430, 0.2493, 0.1752, 0.1027, 0.1124])
        {
            assert!((got - want).abs() < 1e-4, "{p:?}");
        }
        let p = longest_run_probabilities(10_000, 10, 7);
        let exact = [
            0.086632, 0.208201, 0.248419, 0.193913, 0.121458, 0.068011, 0.073366,
        ];
        for (got, want) in p.iter().zip(exact) {
            assert!((got - want).abs() < 1e-6, "{p:?}");
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn runs_is_not_run_when_the_frequency_prerequisite_fails() {
        assert_eq!(runs(&[1u8; 100]), 0.0);
    }
}
