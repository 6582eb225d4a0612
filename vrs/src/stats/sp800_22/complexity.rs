//! SP 800-22 §2.10, the linear complexity test: the length of the shortest LFSR that generates
//! each M-bit block (Berlekamp–Massey over GF(2), on bits packed 64 to a word).

use super::frequency::chi_square;
use super::Classes;
use crate::stats::special::gamma_q;

/// The asymptotic class probabilities of T = (−1)^M (L − μ) + 2/9 in the classes
/// ≤ −2.5, (−2.5, −1.5], …, (1.5, 2.5], > 2.5: 1/96, 1/32, 1/8, 1/2, 1/4, 1/16, 1/48 (the SP
/// prints them rounded).
pub const CLASSES: [f64; 7] = [
    1.0 / 96.0,
    1.0 / 32.0,
    1.0 / 8.0,
    1.0 / 2.0,
    1.0 / 4.0,
    1.0 / 16.0,
    1.0 / 48.0,
];

/// sts 2.1.2's class probabilities: the SP's rounded ones, with 0.01047 for 1/96.
pub const STS_CLASSES: [f64; 7] = [0.01047, 0.03125, 0.125, 0.5, 0.25, 0.0625, 0.020833];

pub fn linear_complexity(bits: &[u8], m: usize, classes: Classes) -> f64 {
    let pi = match classes {
        Classes::Exact => &CLASSES,
        Classes::Sts => &STS_CLASSES,
    };
    linear_complexity_with(bits, m, pi)
}

/// The test with given class probabilities (for checking against the SP's rounded ones).
pub fn linear_complexity_with(bits: &[u8], m: usize, pi: &[f64; 7]) -> f64 {
    let mf = m as f64;
    let sign = if m.is_multiple_of(2) { 1.0 } else { -1.0 };
    let mean = mf / 2.0 + (9.0 - sign) / 36.0 - (mf / 3.0 + 2.0 / 9.0) / 2f64.powi(m as i32);
    let mut v = [0u64; 7];
    let blocks = bits.len() / m;
    let mut lfsr = Lfsr::new(m);
    for block in bits.chunks_exact(m) {
        let l = lfsr.complexity(block) as f64;
        let t = sign * (l - mean) + 2.0 / 9.0;
        let class = match t {
            t if t <= -2.5 => 0,
            t if t <= -1.5 => 1,
            t if t <= -0.5 => 2,
            t if t <= 0.5 => 3,
            t if t <= 1.5 => 4,
            t if t <= 2.5 => 5,
            _ => 6,
        };
        v[class] += 1;
    }
    let chi2 = chi_square(&v, pi, blocks as f64);
    gamma_q(3.0, chi2 / 2.0)
}

/// Berlekamp–Massey's buffers for blocks of up to `m` bits, reused across blocks.
#[derive(Debug)]
pub struct Lfsr {
    words: usize,
    c: Vec<u64>,
    b: Vec<u64>,
    t: Vec<u64>,
    /// The bits seen, newest at bit 0: bit j is s_{i−j}.
    window: Vec<u64>,
}

impl Lfsr {
    pub fn new(m: usize) -> Self {
        let words = (m + 1).div_ceil(64);
        Lfsr {
            words,
            c: vec![0; words],
            b: vec![0; words],
            t: vec![0; words],
            window: vec![0; words],
        }
    }

    /// The linear complexity of `s` (at most m bits).
    pub fn complexity(&mut self, s: &[u8]) -> usize {
        let w = self.words;
        for v in [&mut self.c, &mut self.b, &mut self.window] {
            v.fill(0);
        }
        self.c[0] = 1;
        self.b[0] = 1;
        let (mut l, mut last_change) = (0usize, -1isize);
        for (i, &bit) in s.iter().enumerate() {
            for k in (1..w).rev() {
                self.window[k] = (self.window[k] << 1) | (self.window[k - 1] >> 63);
            }
            self.window[0] = (self.window[0] << 1) | u64::from(bit);
            // d = Σ_{j ≤ l} c_j s_{i−j}; c has no bits above l.
            let d = self
                .c
                .iter()
                .zip(&self.window)
                .fold(0u32, |acc, (c, s)| acc ^ (c & s).count_ones())
                & 1;
            if d == 0 {
                continue;
            }
            let shift = (i as isize - last_change) as usize;
            self.t.copy_from_slice(&self.c);
            xor_shifted(&mut self.c, &self.b, shift);
            if 2 * l <= i {
                l = i + 1 - l;
                last_change = i as isize;
                std::mem::swap(&mut self.b, &mut self.t);
            }
        }
        l
    }
}

/// c ^= b · x^shift, truncated to c's length.
fn xor_shifted(c: &mut [u64], b: &[u64], shift: usize) {
    let (q, r) = (shift / 64, shift % 64);
    for k in (q..c.len()).rev() {
        let mut v = b[k - q] << r;
        if r > 0 && k > q {
            v |= b[k - q - 1] >> (64 - r);
        }
        c[k] ^= v;
    }
}

#[cfg(test)]
mod tests {
    use super::super::examples::{bits, xorshift_bits};
    use super::*;

    /// Berlekamp–Massey one bit per byte, straight from the textbook.
    fn reference(s: &[u8]) -> usize {
        let n = s.len();
        let (mut c, mut b) = (vec![0u8; n + 1], vec![0u8; n + 1]);
        c[0] = 1;
        b[0] = 1;
        let (mut l, mut m) = (0usize, -1isize);
        for i in 0..n {
            let mut d = s[i];
            for j in 1..=l {
                d ^= c[j] & s[i - j];
            }
            if d == 1 {
                let t = c.clone();
                let shift = (i as isize - m) as usize;
                for j in 0..=n - shift {
                    c[j + shift] ^= b[j];
                }
                if 2 * l <= i {
                    l = i + 1 - l;
                    m = i as isize;
                    b = t;
                }
            }
        }
        l
    }

    #[test]
    fn the_sp_example_and_the_textbook_agree() {
        // §2.10.4: 1101011110001 is generated by an LFSR of length 4.
        assert_eq!(Lfsr::new(13).complexity(&bits("1101011110001")), 4);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for m in [1usize, 2, 63, 64, 65, 127, 128, 500, 1000] {
            let mut lfsr = Lfsr::new(m);
            for _ in 0..20 {
                let s = xorshift_bits(&mut state, m);
                assert_eq!(lfsr.complexity(&s), reference(&s), "m {m}");
            }
        }
        // A sequence of period 3 (110110…) has complexity 2: s_i = s_{i−1} + s_{i−2}.
        let periodic: Vec<u8> = (0..500).map(|i| u8::from(i % 3 != 2)).collect();
        assert_eq!(Lfsr::new(500).complexity(&periodic), 2);
    }
}
