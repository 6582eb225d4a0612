//! SP 800-22 §2.7 and §2.8, the template matching tests: how often m-bit templates occur in
//! blocks of the stream, without overlaps (every aperiodic template) and with overlaps (the
//! template of m ones).

use super::frequency::chi_square;
use super::Classes;
use crate::stats::special::{gamma_q, ln_gamma};

/// The aperiodic templates of m bits (no proper shift of one overlaps itself), in increasing
/// order as numbers, most significant bit first: 148 of them for m = 9, as in NIST's suite.
pub fn aperiodic_templates(m: usize) -> Vec<u32> {
    (0u32..1 << m)
        .filter(|&t| (1..m).all(|k| (t >> k) != t & ((1 << (m - k)) - 1)))
        .collect()
}

/// The template as the SP writes it, e.g. "000000001".
pub fn template_name(template: u32, m: usize) -> String {
    format!("{template:0m$b}")
}

/// §2.7 for every template of `templates` (each of m bits), with the stream cut into `blocks`
/// blocks: (template, P-value) in the order given.
pub fn non_overlapping(bits: &[u8], m: usize, blocks: usize, templates: &[u32]) -> Vec<(u32, f64)> {
    let block_len = bits.len() / blocks;
    let windows = block_len + 1 - m;
    // Each block's window positions grouped by the window's value (a counting sort), so that a
    // template's matches are read directly instead of rescanning the block per template.
    let per_block: Vec<(Vec<u32>, Vec<u32>)> = bits
        .chunks_exact(block_len)
        .take(blocks)
        .map(|block| {
            let values: Vec<u32> = block
                .windows(m)
                .map(|w| w.iter().fold(0u32, |acc, &b| (acc << 1) | u32::from(b)))
                .collect();
            let mut start = vec![0u32; (1 << m) + 1];
            for &v in &values {
                start[v as usize + 1] += 1;
            }
            for i in 1..start.len() {
                start[i] += start[i - 1];
            }
            let mut fill = start.clone();
            let mut positions = vec![0u32; windows];
            for (i, &v) in values.iter().enumerate() {
                positions[fill[v as usize] as usize] = i as u32;
                fill[v as usize] += 1;
            }
            (start, positions)
        })
        .collect();
    let mf = m as f64;
    let mean = windows as f64 / 2f64.powi(m as i32);
    let variance =
        block_len as f64 * (1.0 / 2f64.powi(m as i32) - (2.0 * mf - 1.0) / 2f64.powi(2 * m as i32));
    templates
        .iter()
        .map(|&t| {
            let chi2: f64 = per_block
                .iter()
                .map(|(start, positions)| {
                    let at = &positions[start[t as usize] as usize..start[t as usize + 1] as usize];
                    // Greedy from the left: after a match the scan resumes m bits later.
                    let (mut count, mut next) = (0u64, 0u32);
                    for &p in at {
                        if p >= next {
                            count += 1;
                            next = p + m as u32;
                        }
                    }
                    (count as f64 - mean) * (count as f64 - mean) / variance
                })
                .sum();
            (t, gamma_q(blocks as f64 / 2.0, chi2 / 2.0))
        })
        .collect()
}

/// §2.8 with the SP's parameters (blocks of 1032 bits, classes 0…4 and ≥ 5 matches).
pub fn overlapping(bits: &[u8], m: usize, classes: Classes) -> f64 {
    const BLOCK: usize = 1032;
    let pi = match classes {
        Classes::Exact => overlapping_probabilities(m, BLOCK, 5),
        Classes::Sts => {
            let lambda = (BLOCK + 1 - m) as f64 / 2f64.powi(m as i32);
            sts_overlapping_probabilities(lambda / 2.0, 5)
        }
    };
    overlapping_with(bits, m, BLOCK, &pi)
}

/// The class probabilities sts 2.1.2 computes at run time (its function Pr(u, η), a
/// compound-Poisson approximation), with the last class 1 − the others: 0.367879, 0.183940,
/// 0.137955, 0.099634, 0.069935, 0.140657 for η = 1.
pub fn sts_overlapping_probabilities(eta: f64, last: usize) -> Vec<f64> {
    let pr = |u: usize| -> f64 {
        if u == 0 {
            return (-eta).exp();
        }
        let uf = u as f64;
        (1..=u)
            .map(|l| {
                let lf = l as f64;
                (-eta - uf * std::f64::consts::LN_2 + lf * eta.ln() - ln_gamma(lf + 1.0)
                    + ln_gamma(uf)
                    - ln_gamma(lf)
                    - ln_gamma(uf - lf + 1.0))
                .exp()
            })
            .sum()
    };
    let mut pi: Vec<f64> = (0..last).map(pr).collect();
    pi.push(1.0 - pi.iter().sum::<f64>());
    pi
}

/// §2.8 for the template of m ones in blocks of `block` bits, with class probabilities `pi`
/// (classes 0, 1, …, and the last for that many matches or more).
pub fn overlapping_with(bits: &[u8], m: usize, block: usize, pi: &[f64]) -> f64 {
    let last = pi.len() - 1;
    let mut v = vec![0u64; pi.len()];
    let blocks = bits.len() / block;
    for b in bits.chunks_exact(block) {
        let (mut run, mut matches) = (0usize, 0usize);
        for &bit in b {
            run = if bit == 1 { run + 1 } else { 0 };
            if run >= m {
                matches += 1;
            }
        }
        v[matches.min(last)] += 1;
    }
    let chi2 = chi_square(&v, pi, blocks as f64);
    gamma_q(last as f64 / 2.0, chi2 / 2.0)
}

/// P(a random block of `block` bits holds exactly k overlapping matches of m ones), for
/// k < classes − 1, and P(at least classes − 1) last: exact, by dynamic programming over the
/// run of ones at the end of the bits seen (capped at m − 1) and the matches so far (capped).
/// For m = 9 and 1032 bits these are the corrected values the SP's 2010 revision prints
/// (0.364091, 0.185659, …); sts 2.1.2 declares them but computes with its Pr(u, η) instead.
pub fn overlapping_probabilities(m: usize, block: usize, classes_minus_one: usize) -> Vec<f64> {
    let last = classes_minus_one;
    // p[run][matches]
    let mut p = vec![vec![0.0f64; last + 1]; m];
    p[0][0] = 1.0;
    for _ in 0..block {
        let mut next = vec![vec![0.0f64; last + 1]; m];
        for (run, row) in p.iter().enumerate() {
            for (matches, &q) in row.iter().enumerate() {
                if q == 0.0 {
                    continue;
                }
                next[0][matches] += q / 2.0;
                if run + 1 >= m {
                    next[m - 1][(matches + 1).min(last)] += q / 2.0;
                } else {
                    next[run + 1][matches] += q / 2.0;
                }
            }
        }
        p = next;
    }
    (0..=last)
        .map(|k| p.iter().map(|row| row[k]).sum())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::examples::{bits, close};
    use super::*;

    #[test]
    fn there_are_148_aperiodic_templates_of_nine_bits() {
        let t = aperiodic_templates(9);
        assert_eq!(t.len(), 148);
        assert_eq!(template_name(t[0], 9), "000000001");
        assert_eq!(template_name(t[147], 9), "111111110");
        assert!(!t.contains(&0b000000000) && !t.contains(&0b101010101));
    }

    #[test]
    fn the_sp_worked_example_of_non_overlapping_matching() {
        let p = non_overlapping(&bits("10100100101110010110"), 3, 2, &[0b001]);
        assert!(close(p[0].1, 0.344154), "{p:?}");
    }

    #[test]
    fn overlapping_class_probabilities_are_the_corrected_ones() {
        // The SP's corrected values, to six places.
        let want = [0.364091, 0.185659, 0.139381, 0.100571, 0.070432, 0.139865];
        let got = overlapping_probabilities(9, 1032, 5);
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{got:?}");
        }
        assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let sts = sts_overlapping_probabilities(1.0, 5);
        let want = [0.367879, 0.183940, 0.137955, 0.099634, 0.069935, 0.140657];
        for (g, w) in sts.iter().zip(want) {
            assert!((g - w).abs() < 1e-6, "{sts:?}");
        }
    }
}
