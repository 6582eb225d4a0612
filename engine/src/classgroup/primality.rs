//! The probable-prime test chiavdf 1.2.0 applies to every `HashPrime` candidate (its
//! `primetest.h`, a "strengthened" Baillie-PSW test), reproduced verdict for verdict:
//!
//! 1. GCDs of n with products of consecutive odd primes (3 … 14951, grouped so that each product
//!    fits in 64 bits). Any GCD ≠ 1 declares n composite, **even when n is one of those primes**:
//!    that is why `create_discriminant(seed, 8)` is −239 for every seed (the small primes 151 …
//!    233 that the 8-bit candidates hit are all refused). Numbers of fewer than 16 64-bit limbs
//!    use only the first 5 + (N − 5)·limbs³/4096 products.
//! 2. One strong Fermat (Miller-Rabin) round to base 2.
//! 3. A Lucas-V probable-prime test: the first d in 5, −7, 9, −11, … (|d| < 1000) with
//!    Jacobi(d/n) = −1 gives (P, Q) = (5, 5) for d = 5 and (1, (1 − d)/4) otherwise; n passes
//!    when V_{n+1} ≡ 2Q, compared as chiavdf compares it (V reduced towards zero for Q < 0,
//!    to [0, n) otherwise, then equal to the integer 2Q). No d below 1000 means composite.
//!
//! Variable time; every input is public.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, ToPrimitive, Zero};
use std::sync::OnceLock;

/// The largest prime in the GCD table (chiavdf's `pprods_max_prime`).
pub(crate) const PPRODS_MAX_PRIME: u64 = 14951;
/// chiavdf's `VPRP_MAX_D`.
const VPRP_MAX_D: i64 = 1000;
/// Products always used, whatever the size of n (chiavdf's `min_pprods`).
const MIN_PPRODS: usize = 5;

/// Products of consecutive odd primes up to [`PPRODS_MAX_PRIME`], each group as long as its
/// product stays below 2^64 (chiavdf's generated `pprods` table).
pub(crate) fn pprods() -> &'static [u64] {
    static TABLE: OnceLock<Vec<u64>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let primes = (3u64..=PPRODS_MAX_PRIME).step_by(2).filter(|&p| {
            (3u64..)
                .step_by(2)
                .take_while(|d| d * d <= p)
                .all(|d| p % d != 0)
        });
        let mut table = Vec::new();
        let mut product: u64 = 1;
        for p in primes {
            match product.checked_mul(p) {
                Some(next) => product = next,
                None => {
                    table.push(product);
                    product = p;
                }
            }
        }
        table.push(product);
        table
    })
}

/// chiavdf's `is_prime_bpsw(n)` verdict for n ≥ 0.
pub fn is_probable_prime(n: &BigUint) -> bool {
    let two = BigUint::from(2u8);
    if !n.bit(0) && *n != two {
        return false;
    }
    let table = pprods();
    let limbs = n.bits().div_ceil(64) as usize;
    let mut count = table.len();
    if limbs < 16 {
        let cube = limbs * limbs * limbs;
        count = MIN_PPRODS + (table.len() - MIN_PPRODS) * cube / (16 * 16 * 16);
    }
    for &m in &table[..count.min(table.len())] {
        // mpn_gcd_1 of n with m: gcd(n mod m, m).
        let r = (n % m).to_u64().unwrap_or(0);
        if r.gcd(&m) != 1 {
            return false;
        }
    }
    if n.is_zero() {
        // Unreachable (0 is even) but keeps the arithmetic below total.
        return false;
    }
    miller_rabin_base2(n) && lucas_v_probable_prime(n)
}

/// One strong Fermat round to base 2, as chiavdf writes it (n odd, n > 1 expected; anything
/// else gives an answer without panicking).
fn miller_rabin_base2(n: &BigUint) -> bool {
    if *n <= BigUint::one() {
        return false;
    }
    let n_minus_1 = n - 1u8;
    let s = n_minus_1.trailing_zeros().unwrap_or(0);
    let d = &n_minus_1 >> s;
    let mut b = BigUint::from(2u8).modpow(&d, n);
    if b.is_one() {
        return true;
    }
    let mut r = 0;
    loop {
        if b == n_minus_1 {
            return true;
        }
        r += 1;
        if r >= s {
            return false;
        }
        b = (&b * &b) % n;
    }
}

/// chiavdf's `find_pq`: the first d in 5, −7, 9, −11, … with Jacobi(d/n) = −1, below
/// [`VPRP_MAX_D`] in absolute value.
fn find_pq(n: &BigUint) -> Option<(i64, i64)> {
    let n = BigInt::from(n.clone());
    let mut d: i64 = 5;
    while d < VPRP_MAX_D {
        d = if d % 4 == 1 { d } else { -d };
        if jacobi(&BigInt::from(d), &n) == -1 {
            return Some(if d == 5 { (5, 5) } else { (1, (1 - d) / 4) });
        }
        d = d.abs() + 2;
    }
    None
}

/// The Jacobi symbol (a/n) for odd n > 0 (0 for even or non-positive n).
pub(crate) fn jacobi(a: &BigInt, n: &BigInt) -> i32 {
    if n.sign() != Sign::Plus || !n.bit(0) {
        return 0;
    }
    let mut a = a.mod_floor(n);
    let mut n = n.clone();
    let mut result = 1;
    while !a.is_zero() {
        let tz = a.trailing_zeros().unwrap_or(0);
        if tz > 0 {
            a >>= tz;
            let n8 = (&n % 8u8).to_u8().unwrap_or(0);
            if tz % 2 == 1 && (n8 == 3 || n8 == 5) {
                result = -result;
            }
        }
        std::mem::swap(&mut a, &mut n);
        let a4 = (&a % 4u8).to_u8().unwrap_or(0);
        let n4 = (&n % 4u8).to_u8().unwrap_or(0);
        if a4 == 3 && n4 == 3 {
            result = -result;
        }
        a = a.mod_floor(&n);
    }
    if n.is_one() {
        result
    } else {
        0
    }
}

/// chiavdf's `is_vprp`: V_{n+1}(P, Q) mod n compared with 2Q.
fn lucas_v_probable_prime(n: &BigUint) -> bool {
    let Some((p, q)) = find_pq(n) else {
        return false;
    };
    let nn = BigInt::from(n.clone());
    let v = lucas_v(&BigInt::from(n + 1u8), &nn, p, q);
    // chiavdf reduces V with mpz_cdiv_r for Q < 0 (a result in (−n, 0]) and with mpz_fdiv_r
    // otherwise ([0, n)), then compares with the integer 2Q.
    let mut r = v.mod_floor(&nn);
    if q < 0 && !r.is_zero() {
        r -= &nn;
    }
    r == BigInt::from(2 * q)
}

/// V_e(P, Q) mod m, in [0, m), by the binary ladder on (V_k, V_{k+1}, Q^k).
fn lucas_v(e: &BigInt, m: &BigInt, p: i64, q: i64) -> BigInt {
    let p = BigInt::from(p);
    let q = BigInt::from(q);
    let md = |x: BigInt| x.mod_floor(m);
    let bits = e.bits();
    if bits == 0 {
        return md(BigInt::from(2));
    }
    // k = 1: V_1 = P, V_2 = P² − 2Q, Q^1 = Q.
    let mut vk = md(p.clone());
    let mut vk1 = md(&p * &p - 2 * &q);
    let mut qk = md(q.clone());
    for i in (0..bits - 1).rev() {
        if e.bit(i) {
            // k → 2k + 1
            vk = md(&vk * &vk1 - &p * &qk);
            vk1 = md(&vk1 * &vk1 - 2 * &qk * &q);
            qk = md(&qk * &qk * &q);
        } else {
            // k → 2k
            vk1 = md(&vk * &vk1 - &p * &qk);
            vk = md(&vk * &vk - 2 * &qk);
            qk = md(&qk * &qk);
        }
    }
    vk
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_chiavdf_pprods() {
        let t = pprods();
        assert_eq!(t[0], 0xe221f97c30e94e1d);
        assert_eq!(t[1], 0x6329899ea9f2714b);
        assert_eq!(t[4], 0x3bd7632c1f36eb51);
        assert_eq!(t[5], 0xfd14b3c90d88a9);
        assert_eq!(*t.last().unwrap_or(&0), 0xb1110edec9a5e7);
    }

    #[test]
    fn agrees_with_trial_division_on_small_numbers() {
        // Above the table (every GCD is 1 for primes) BPSW is exact below 2^64.
        for n in 15000u64..40000 {
            let trial = n > 1 && (2..).take_while(|d| d * d <= n).all(|d| n % d != 0);
            assert_eq!(is_probable_prime(&BigUint::from(n)), trial, "n = {n}");
        }
    }

    #[test]
    fn refuses_the_tabled_primes_like_chiavdf() {
        // chiavdf's create_discriminant(_, 8) is −0xef for every seed: 151 … 233 are refused.
        for p in [151u64, 167, 191, 199, 223] {
            assert!(!is_probable_prime(&BigUint::from(p)));
        }
        assert!(is_probable_prime(&BigUint::from(239u64)));
    }

    #[test]
    fn rejects_strong_pseudoprimes_to_base_2() {
        // 3215031751 = 151·751·28351 is a strong pseudoprime to bases 2, 3, 5, 7; 2047 and
        // 3277 to base 2.
        for n in [2047u64, 3277, 4033, 3215031751, 1194649, 12327121] {
            assert!(!is_probable_prime(&BigUint::from(n)), "n = {n}");
        }
        // 2^127 − 1 and 2^521 − 1 are prime.
        let m127 = (BigUint::one() << 127u32) - 1u8;
        let m521 = (BigUint::one() << 521u32) - 1u8;
        assert!(is_probable_prime(&m127));
        assert!(is_probable_prime(&m521));
        assert!(!is_probable_prime(&(&m127 * &m521)));
    }

    #[test]
    fn jacobi_matches_euler_criterion() {
        for n in [3u64, 5, 7, 11, 13, 97, 101] {
            for a in -30i64..30 {
                let e = BigInt::from(a).modpow(&BigInt::from((n - 1) / 2), &BigInt::from(n));
                let want = if e.is_zero() {
                    0
                } else if e.is_one() {
                    1
                } else {
                    -1
                };
                assert_eq!(jacobi(&BigInt::from(a), &BigInt::from(n)), want);
            }
        }
    }
}
