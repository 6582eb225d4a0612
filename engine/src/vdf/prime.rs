//! Baillie-PSW probable-prime test for the 256-bit Wesolowski challenge primes:
//! trial division by the primes below 1000, a strong Fermat (Miller-Rabin) test to base 2, and
//! a strong Lucas test with Selfridge's parameters (method A: the first D in 5, −7, 9, −11, …
//! with Jacobi(D/n) = −1, P = 1, Q = (1 − D)/4). No composite is known to pass it.
//! Arithmetic runs in Montgomery form on 4 limbs; variable time (all inputs are public).

use crate::backend::fast::monty::{neg_inv_u64, Monty};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// Largest candidate the Montgomery code here handles.
pub const MAX_BITS: u64 = 256;

/// Trial division bound: the odd primes below it.
const TRIAL_BOUND: u64 = 1000;

/// One odd prime with what an exact-division test by multiplication needs.
struct SmallPrime {
    p: u64,
    /// p⁻¹ mod 2^64: p divides r exactly when r·inv mod 2^64 ≤ ⌊(2^64 − 1)/p⌋.
    inv: u64,
    limit: u64,
}

/// Primes grouped so that each group's product M is below 2^62, with 2^(64i) mod M, so that a
/// 256-bit candidate is reduced modulo M with one 128-bit division.
struct PrimeGroup {
    m: u64,
    powers: [u64; 4],
    primes: Vec<SmallPrime>,
}

fn prime_groups() -> &'static [PrimeGroup] {
    static GROUPS: std::sync::OnceLock<Vec<PrimeGroup>> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| {
        let primes = (3u64..TRIAL_BOUND).step_by(2).filter(|&p| {
            (3..)
                .step_by(2)
                .take_while(|d| d * d <= p)
                .all(|d| p % d != 0)
        });
        let mut groups: Vec<PrimeGroup> = Vec::new();
        for p in primes {
            let fits = groups
                .last()
                .is_some_and(|g| g.m.checked_mul(p).is_some_and(|m| m < 1 << 62));
            if !fits {
                groups.push(PrimeGroup {
                    m: 1,
                    powers: [0; 4],
                    primes: Vec::new(),
                });
            }
            if let Some(g) = groups.last_mut() {
                g.m *= p;
                let inv = neg_inv_u64(p).wrapping_neg();
                g.primes.push(SmallPrime {
                    p,
                    inv,
                    limit: u64::MAX / p,
                });
            }
        }
        for g in &mut groups {
            let m = u128::from(g.m);
            let w = (1u128 << 64) % m;
            g.powers = [1, w as u64, (w * w % m) as u64, (w * w % m * w % m) as u64];
        }
        groups
    })
}

/// The smallest odd prime below 1000 that divides n (n < 2^256), if any.
fn small_odd_factor(n: &BigUint) -> Option<u64> {
    let mut words = [0u64; 4];
    for (w, d) in words.iter_mut().zip(n.iter_u64_digits()) {
        *w = d;
    }
    for g in prime_groups() {
        // Each term is below 2^126, so the sum of four fits in 128 bits.
        let sum: u128 = words
            .iter()
            .zip(&g.powers)
            .map(|(&d, &w)| u128::from(d) * u128::from(w))
            .sum();
        let r = (sum % u128::from(g.m)) as u64;
        if let Some(sp) = g
            .primes
            .iter()
            .find(|sp| r.wrapping_mul(sp.inv) <= sp.limit)
        {
            return Some(sp.p);
        }
    }
    None
}

/// Baillie-PSW. `n` must be below 2^256.
pub fn is_probable_prime(n: &BigUint) -> bool {
    debug_assert!(n.bits() <= MAX_BITS);
    if n < &BigUint::from(2u8) {
        return false;
    }
    if !n.bit(0) {
        return n == &BigUint::from(2u8);
    }
    if let Some(p) = small_odd_factor(n) {
        return n == &BigUint::from(p);
    }
    let Ok(m) = Monty::<4>::new(n) else {
        return false;
    };
    strong_fermat_base2(&m, n) && !is_square(n) && strong_lucas(&m, n)
}

/// Miller-Rabin to base 2.
fn strong_fermat_base2(m: &Monty<4>, n: &BigUint) -> bool {
    let n_minus_1 = n - 1u32;
    let s = n_minus_1.trailing_zeros().unwrap_or(0);
    let d = &n_minus_1 >> s;
    let one = m.one();
    let minus_one = m.sub(&[0; 4], &one);
    let mut x = m.pow_vartime(&m.to_monty(&BigUint::from(2u8)), &d);
    if x == one || x == minus_one {
        return true;
    }
    for _ in 1..s {
        x = m.sqr(&x);
        if x == minus_one {
            return true;
        }
    }
    false
}

fn is_square(n: &BigUint) -> bool {
    let r = n.sqrt();
    &(&r * &r) == n
}

/// Jacobi symbol (a / n) for odd n > 0.
pub fn jacobi(a: &BigInt, n: &BigUint) -> i32 {
    let mut n = n.clone();
    let mut a = a.mod_floor(&BigInt::from(n.clone())).magnitude().clone();
    let mut t = 1;
    while !a.is_zero() {
        while a.is_even() {
            a >>= 1;
            let r = (&n % 8u32).to_u32().unwrap_or(0);
            if r == 3 || r == 5 {
                t = -t;
            }
        }
        std::mem::swap(&mut a, &mut n);
        if (&a % 4u32) == BigUint::from(3u8) && (&n % 4u32) == BigUint::from(3u8) {
            t = -t;
        }
        a %= &n;
    }
    if n.is_one() {
        t
    } else {
        0
    }
}

/// Signed integer → Montgomery residue mod n.
fn signed_to_monty(m: &Monty<4>, v: i64, n: &BigUint) -> [u64; 4] {
    let mag = m.to_monty(&(BigUint::from(v.unsigned_abs()) % n));
    if v < 0 {
        m.sub(&[0; 4], &mag)
    } else {
        mag
    }
}

/// Strong Lucas probable-prime test with Selfridge's method A. n odd, not a square.
fn strong_lucas(m: &Monty<4>, n: &BigUint) -> bool {
    // Selfridge: D = 5, −7, 9, −11, … until Jacobi(D/n) = −1.
    let mut d: i64 = 5;
    loop {
        match jacobi(&BigInt::from(d), n) {
            -1 => break,
            0 if BigInt::from(d).abs() != BigInt::from(n.clone()) => return false,
            _ => d = if d > 0 { -(d + 2) } else { -d + 2 },
        }
    }
    let q = (1 - d) / 4;
    let zero = [0u64; 4];
    let dm = signed_to_monty(m, d, n);
    let qm = signed_to_monty(m, q, n);
    let n_plus_1 = n + 1u32;
    let s = n_plus_1.trailing_zeros().unwrap_or(0);
    let k = &n_plus_1 >> s;
    // U_1 = 1, V_1 = P = 1, Q^1 = Q; then walk the bits of k below its top bit.
    let mut u = m.one();
    let mut v = m.one();
    let mut qk = qm;
    for i in (0..k.bits() - 1).rev() {
        // Doubling: U_2j = U_j V_j, V_2j = V_j² − 2Q^j, Q^2j = (Q^j)².
        u = m.mul(&u, &v);
        v = m.sub(&m.sqr(&v), &m.add(&qk, &qk));
        qk = m.sqr(&qk);
        if k.bit(i) {
            // Increment with P = 1: U_j+1 = (U_j + V_j)/2, V_j+1 = (D U_j + V_j)/2.
            let u1 = m.half(&m.add(&u, &v));
            let v1 = m.half(&m.add(&m.mul(&dm, &u), &v));
            u = u1;
            v = v1;
            qk = m.mul(&qk, &qm);
        }
    }
    if u == zero || v == zero {
        return true;
    }
    for _ in 1..s {
        v = m.sub(&m.sqr(&v), &m.add(&qk, &qk));
        qk = m.sqr(&qk);
        if v == zero {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_is_prime(n: u64) -> bool {
        n >= 2
            && (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
    }

    #[test]
    fn agrees_with_trial_division_below_200000() {
        for n in 0u64..200_000 {
            assert_eq!(
                is_probable_prime(&BigUint::from(n)),
                naive_is_prime(n),
                "n = {n}"
            );
        }
    }

    #[test]
    fn rejects_strong_pseudoprimes_and_carmichael_numbers() {
        // Strong pseudoprimes to base 2 (pass Miller-Rabin base 2), Carmichael numbers, and
        // a product of two 128-bit primes.
        for n in [
            2047u64, 3277, 4033, 4681, 8321, 561, 1105, 1729, 2465, 2821, 6601, 3215031751,
        ] {
            assert!(!is_probable_prime(&BigUint::from(n)), "{n} is composite");
        }
        let p = BigUint::parse_bytes(b"340282366920938463463374607431768211297", 10)
            .expect("decimal literal"); // 2^128 − 159, prime
        assert!(is_probable_prime(&p));
        let q = BigUint::parse_bytes(b"340282366920938463463374607431768211283", 10)
            .expect("decimal literal");
        assert!(!is_probable_prime(&(&p * &q)));
    }

    #[test]
    fn known_256_bit_primes() {
        // 2^256 − 189 is the largest prime below 2^256; 2^255 − 19 is Curve25519's field.
        let two = BigUint::from(2u8);
        assert!(is_probable_prime(&(two.pow(256u32) - 189u32)));
        assert!(is_probable_prime(&(two.pow(255u32) - 19u32)));
        assert!(!is_probable_prime(&(two.pow(256u32) - 187u32)));
        assert!(!is_probable_prime(&(two.pow(255u32) - 21u32)));
    }

    #[test]
    fn trial_division_finds_the_smallest_odd_factor() {
        for n in (1u64..50_000).step_by(2) {
            let want = (3..TRIAL_BOUND)
                .step_by(2)
                .find(|&p| n % p == 0 && naive_is_prime(p));
            assert_eq!(small_odd_factor(&BigUint::from(n)), want, "n = {n}");
        }
        // Multi-word values: 991 · (2^127 − 1) (a Mersenne prime) and 997 · 983 · 2^230.
        let a = BigUint::from(991u32) * ((BigUint::from(1u8) << 127u32) - 1u8);
        assert_eq!(small_odd_factor(&a), Some(991));
        let b = BigUint::from(997u32 * 983) << 230u32;
        assert_eq!(small_odd_factor(&b), Some(983));
        let p = (BigUint::from(1u8) << 255u32) - 19u8;
        assert_eq!(small_odd_factor(&p), None);
    }

    #[test]
    fn jacobi_small_table() {
        // (a / 15) for a = 0..15, from the definition via (a/3)(a/5).
        let expect = [0, 1, 1, 0, 1, 0, 0, -1, 1, 0, 0, -1, 0, -1, -1];
        for (a, e) in expect.iter().enumerate() {
            assert_eq!(
                jacobi(&BigInt::from(a), &BigUint::from(15u8)),
                *e,
                "a = {a}"
            );
        }
        assert_eq!(jacobi(&BigInt::from(-1), &BigUint::from(7u8)), -1);
    }
}
