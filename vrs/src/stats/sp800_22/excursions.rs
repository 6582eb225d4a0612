//! SP 800-22 §2.14 and §2.15, the random excursions tests: the ±1 walk cut into cycles at its
//! returns to zero, and how often each cycle visits the states −4…4 (−9…9 for the variant).

use super::frequency::chi_square;
use crate::stats::special::{erfc, gamma_q};

/// The states of §2.14, in the order reported.
pub const STATES: [i64; 8] = [-4, -3, -2, -1, 1, 2, 3, 4];
/// The states of §2.15, in the order reported.
pub const VARIANT_STATES: [i64; 18] = [
    -9, -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9,
];

/// The walk's cycles J, and whether there are enough of them for the P-values to mean
/// anything: J ≥ max(0.005 √n, 500), as in NIST's suite; below it both tests are not applicable.
pub fn cycles(bits: &[u8]) -> (u64, bool) {
    let mut s = 0i64;
    let mut zeros = 0u64;
    for &b in bits {
        s += if b == 1 { 1 } else { -1 };
        zeros += u64::from(s == 0);
    }
    // The walk is closed with a final 0 unless it already ends there.
    let j = zeros + u64::from(s != 0);
    let needed = (0.005 * (bits.len() as f64).sqrt()).max(500.0);
    (j, j as f64 >= needed)
}

/// §2.14: a P-value per state of STATES, whatever the number of cycles.
pub fn random_excursions(bits: &[u8]) -> [f64; 8] {
    // visits[state][k]: cycles that visit the state k times (k = 5 for 5 or more).
    let mut visits = [[0u64; 6]; 8];
    let mut in_cycle = [0usize; 8];
    let mut close_cycle = |in_cycle: &mut [usize; 8]| {
        for (row, c) in visits.iter_mut().zip(in_cycle.iter_mut()) {
            row[(*c).min(5)] += 1;
            *c = 0;
        }
    };
    let mut s = 0i64;
    for &b in bits {
        s += if b == 1 { 1 } else { -1 };
        if s == 0 {
            close_cycle(&mut in_cycle);
        } else if (-4..=4).contains(&s) {
            let i = if s < 0 {
                (s + 4) as usize
            } else {
                (s + 3) as usize
            };
            in_cycle[i] += 1;
        }
    }
    if s != 0 {
        close_cycle(&mut in_cycle);
    }
    let j: u64 = visits[0].iter().sum();
    let mut p = [0.0; 8];
    for ((p, row), &x) in p.iter_mut().zip(&visits).zip(&STATES) {
        let chi2 = chi_square(row, &visit_probabilities(x), j as f64);
        *p = gamma_q(2.5, chi2 / 2.0);
    }
    p
}

/// π_k(x): the probability that a cycle visits x exactly k times (k < 5), or at least 5 times.
pub fn visit_probabilities(x: i64) -> [f64; 6] {
    let a = 1.0 / (2.0 * x.unsigned_abs() as f64);
    let mut pi = [0.0; 6];
    pi[0] = 1.0 - a;
    for (k, p) in pi.iter_mut().enumerate().take(5).skip(1) {
        *p = a * a * (1.0 - a).powi(k as i32 - 1);
    }
    pi[5] = a * (1.0 - a).powi(4);
    pi
}

/// §2.15: a P-value per state of VARIANT_STATES, whatever the number of cycles.
pub fn random_excursions_variant(bits: &[u8]) -> [f64; 18] {
    let mut visits = [0u64; 19];
    let mut s = 0i64;
    for &b in bits {
        s += if b == 1 { 1 } else { -1 };
        if (-9..=9).contains(&s) {
            visits[(s + 9) as usize] += 1;
        }
    }
    let (j, _) = cycles(bits);
    let j = j as f64;
    let mut p = [0.0; 18];
    for (p, &x) in p.iter_mut().zip(&VARIANT_STATES) {
        let xi = visits[(x + 9) as usize] as f64;
        *p = erfc((xi - j).abs() / (2.0 * j * (4.0 * x.unsigned_abs() as f64 - 2.0)).sqrt());
    }
    p
}

#[cfg(test)]
mod tests {
    use super::super::examples::{bits, close};
    use super::*;

    #[test]
    fn the_sp_worked_examples() {
        let e = bits("0110110101");
        assert_eq!(cycles(&e), (3, false));
        let p = random_excursions(&e);
        // The SP's 0.502529 comes from its table of π rounded to four places (0.0312 for
        // 1/32); the exact π give 0.502488. Appendix B's values for e, with these exact π,
        // are reproduced to six places (examples.rs).
        assert!((p[4] - 0.502529).abs() < 5e-5, "{p:?}");
        let v = random_excursions_variant(&e);
        assert!(close(v[9], 0.683091), "{v:?}");
    }

    #[test]
    fn visit_probabilities_sum_to_one() {
        for x in STATES {
            let s: f64 = visit_probabilities(x).iter().sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
        // The SP's table for x = 1: 0.5, 0.25, 0.125, 0.0625, 0.0312, 0.0312.
        let p = visit_probabilities(1);
        assert!((p[1] - 0.25).abs() < 1e-12 && (p[5] - 0.03125).abs() < 1e-12);
    }
}
