//! SP 800-22 §2.11 and §2.12, the serial and approximate entropy tests: the frequencies of all
//! overlapping m-bit patterns, the stream read circularly (its first m − 1 bits appended).

use crate::stats::special::gamma_q;

/// How often each m-bit pattern occurs at the n positions of the circular stream.
fn pattern_counts(bits: &[u8], m: usize) -> Vec<u64> {
    let mut counts = vec![0u64; 1 << m];
    if m == 0 {
        counts[0] = bits.len() as u64;
        return counts;
    }
    let mask = (1usize << m) - 1;
    let mut v = bits[..m - 1]
        .iter()
        .fold(0usize, |acc, &b| (acc << 1) | usize::from(b));
    for &b in bits[m - 1..].iter().chain(&bits[..m - 1]) {
        v = ((v << 1) | usize::from(b)) & mask;
        counts[v] += 1;
    }
    counts
}

/// ψ²_m = 2^m / n · Σ ν² − n (0 for m ≤ 0).
fn psi_squared(bits: &[u8], m: isize) -> f64 {
    if m <= 0 {
        return 0.0;
    }
    let n = bits.len() as f64;
    let sum: f64 = pattern_counts(bits, m as usize)
        .iter()
        .map(|&c| (c as f64) * (c as f64))
        .sum();
    2f64.powi(m as i32) / n * sum - n
}

/// §2.11: the two P-values, of ∇ψ²_m and of ∇²ψ²_m.
pub fn serial(bits: &[u8], m: usize) -> (f64, f64) {
    let m = m as isize;
    let (p0, p1, p2) = (
        psi_squared(bits, m),
        psi_squared(bits, m - 1),
        psi_squared(bits, m - 2),
    );
    let d1 = p0 - p1;
    let d2 = p0 - 2.0 * p1 + p2;
    (
        gamma_q(2f64.powi(m as i32 - 2), d1 / 2.0),
        gamma_q(2f64.powi(m as i32 - 3), d2 / 2.0),
    )
}

/// §2.12: ApEn(m) = φ(m) − φ(m+1), φ(m) = Σ C_i ln C_i over the m-bit patterns.
pub fn approximate_entropy(bits: &[u8], m: usize) -> f64 {
    let n = bits.len() as f64;
    let phi = |m: usize| -> f64 {
        pattern_counts(bits, m)
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let c = c as f64 / n;
                c * c.ln()
            })
            .sum()
    };
    let ap_en = phi(m) - phi(m + 1);
    let chi2 = 2.0 * n * (std::f64::consts::LN_2 - ap_en);
    gamma_q(2f64.powi(m as i32 - 1), chi2 / 2.0)
}

#[cfg(test)]
mod tests {
    use super::super::examples::{bits, close, PI_100};
    use super::*;

    #[test]
    fn the_sp_worked_examples() {
        let (p1, p2) = serial(&bits("0011011101"), 3);
        assert!(close(p1, 0.808792) && close(p2, 0.670320), "{p1} {p2}");
        assert!(close(approximate_entropy(&bits("0100110101"), 3), 0.261961));
        assert!(close(approximate_entropy(&bits(PI_100), 2), 0.235301));
        assert_eq!(pattern_counts(&bits("0011011101"), 2), vec![1, 3, 3, 3]);
    }
}
