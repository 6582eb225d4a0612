//! `FastSquarer` against a plain num-bigint reference (textbook duplication, then reduction),
//! at several discriminant sizes, and against chiavdf's own output.
#![allow(clippy::unwrap_used)]

use super::num::Num;
use super::{slow, FastSquarer};
use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

/// chiavdf 1.2.0's `create_discriminant(bytes.fromhex("0405"), 1024)`.
const CHIAVDF_D_0405: &str = "-ce1ba2a4d986d4f8eca19115252d82e8bea8cb0b8c47850cf55492521a49eb29879bc2882a5946024cf7a2c6e80fdf7085f062a0f3c8f7b23fabd7cb09437c178821a737d87ffd0a1b11f949f6304d48a5491a8cb6365cdb2b029bc8d71a043650a0cec9978176839bff597ebc644a74a0af563afc51106cf044d8461b320caf";

// ---------------------------------------------------------------- the reference

/// The reduced form equivalent to (a, b, c) (Cohen, Algorithm 5.4.2).
fn ref_reduce(mut a: BigInt, mut b: BigInt, mut c: BigInt) -> (BigInt, BigInt, BigInt) {
    loop {
        // Normalise: b into (−a, a].
        if !(-&a < b && b <= a) {
            let two_a: BigInt = &a << 1u32;
            let r = (&a - &b).div_floor(&two_a);
            c = &a * &r * &r + &b * &r + &c;
            b += &two_a * &r;
        }
        if a > c {
            std::mem::swap(&mut a, &mut c);
            b = -b;
            continue;
        }
        if a == c && b.is_negative() {
            b = -b;
        }
        return (a, b, c);
    }
}

/// The reduced square by Dirichlet composition of f with itself: e = gcd(a, b) = u·b + v·a,
/// A = a/e, k = −u·c mod A, (A², b + 2Ak, ((b + Ak)k + ec)/A), then reduced.
fn ref_square(a: &BigInt, b: &BigInt, c: &BigInt) -> (BigInt, BigInt, BigInt) {
    let eg = b.extended_gcd(a);
    let (e, u) = if eg.gcd.is_negative() {
        (-eg.gcd, -eg.x)
    } else {
        (eg.gcd, eg.x)
    };
    let big_a = a / &e;
    let k = (-(&u * c)).mod_floor(&big_a);
    let na = &big_a * &big_a;
    let nb = b + ((&big_a * &k) << 1u32);
    let nc = ((b + &big_a * &k) * &k + &e * c) / &big_a;
    ref_reduce(na, nb, nc)
}

fn ref_square_n(a: &BigInt, b: &BigInt, d: &BigInt, n: u64) -> (BigInt, BigInt) {
    let mut f = (a.clone(), b.clone(), c_of(a, b, d));
    for _ in 0..n {
        f = ref_square(&f.0, &f.1, &f.2);
    }
    (f.0, f.1)
}

fn c_of(a: &BigInt, b: &BigInt, d: &BigInt) -> BigInt {
    let num = b * b - d;
    let den: BigInt = a << 2u32;
    assert!(num.is_multiple_of(&den), "not a form of d");
    num / den
}

fn is_reduced(a: &BigInt, b: &BigInt, c: &BigInt) -> bool {
    -a < *b && b <= a && a <= c && !(a == c && b.is_negative())
}

// ---------------------------------------------------------------- discriminants and forms

/// A uniformly random integer below 2^bits.
fn rand_biguint(rng: &mut StdRng, bits: u64) -> BigUint {
    let words: Vec<u32> = (0..bits.div_ceil(32)).map(|_| rng.gen()).collect();
    let v = BigUint::from_slice(&words);
    v & ((BigUint::one() << bits) - 1u32)
}

fn is_probable_prime(n: &BigUint, rng: &mut StdRng) -> bool {
    let two = BigUint::from(2u32);
    for p in [3u32, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47] {
        if (n % p).is_zero() {
            return *n == BigUint::from(p);
        }
    }
    let n1 = n - 1u32;
    let s = n1.trailing_zeros().unwrap_or(0);
    let dd = &n1 >> s;
    'outer: for _ in 0..12 {
        let a = rand_biguint(rng, n.bits() - 1) + 2u32;
        let mut x = a.modpow(&dd, n);
        if x.is_one() || x == n1 {
            continue;
        }
        for _ in 1..s {
            x = x.modpow(&two, n);
            if x == n1 {
                continue 'outer;
            }
        }
        return false;
    }
    true
}

/// −p for a random prime p ≡ 7 (mod 8) of exactly `bits` bits.
fn prime_disc(bits: u64, seed: u64) -> BigInt {
    let mut rng = StdRng::seed_from_u64(seed);
    loop {
        let mut p = rand_biguint(&mut rng, bits);
        p.set_bit(bits - 1, true);
        p = (&p >> 3u32 << 3u32) | BigUint::from(7u32);
        if is_probable_prime(&p, &mut rng) {
            return -BigInt::from(p);
        }
    }
}

/// A random (composite, most likely) negative d ≡ 1 (mod 4) of `bits` bits.
fn composite_disc(bits: u64, seed: u64) -> BigInt {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut p = rand_biguint(&mut rng, bits);
    p.set_bit(bits - 1, true);
    p = (&p >> 2u32 << 2u32) | BigUint::from(3u32);
    -BigInt::from(p)
}

fn chiavdf_disc() -> BigInt {
    BigInt::parse_bytes(CHIAVDF_D_0405.as_bytes(), 16).unwrap()
}

/// Discriminants by name, built once.
fn disc(name: &str) -> &'static BigInt {
    static CACHE: OnceLock<Vec<(&'static str, BigInt)>> = OnceLock::new();
    let all = CACHE.get_or_init(|| {
        vec![
            ("p128", prime_disc(128, 1)),
            ("p256", prime_disc(256, 2)),
            ("p512", prime_disc(512, 3)),
            ("p1024", chiavdf_disc()),
            ("p2048", prime_disc(2048, 5)),
            ("c256", composite_disc(256, 6)),
            ("c1024", composite_disc(1024, 7)),
            ("c3072", composite_disc(3072, 8)),
        ]
    });
    &all.iter().find(|(n, _)| *n == name).unwrap().1
}

/// A random reduced form of d: (N, b, 1) with N = (b² − d)/4 for a random odd b, reduced.
fn random_form(d: &BigInt, seed: u64) -> (BigInt, BigInt) {
    let mut rng = StdRng::seed_from_u64(seed);
    let bits = rng.gen_range(1..=d.bits());
    let mut b = BigInt::from(rand_biguint(&mut rng, bits)) | BigInt::one();
    if rng.gen_bool(0.5) {
        b = -b;
    }
    let n = (&b * &b - d) >> 2u32;
    let (a, b, _) = ref_reduce(n, b, BigInt::one());
    (a, b)
}

fn check(d: &BigInt, a: &BigInt, b: &BigInt, n: u64) {
    let sq = FastSquarer::new(d).unwrap();
    let got = sq.square_n(a, b, n);
    let want = ref_square_n(a, b, d, n);
    assert_eq!(got, want, "d = {d}, (a, b) = ({a}, {b}), n = {n}");
    let c = c_of(&got.0, &got.1, d);
    assert!(is_reduced(&got.0, &got.1, &c));
}

// ---------------------------------------------------------------- properties

macro_rules! size_test {
    ($name:ident, $disc:expr, $cases:expr, $maxn:expr) => {
        proptest! {
            #![proptest_config(ProptestConfig { cases: $cases, ..ProptestConfig::default() })]
            #[test]
            fn $name(seed in any::<u64>(), n in 1u64..$maxn, invert in any::<bool>()) {
                let d = disc($disc);
                let (mut a, mut b) = random_form(d, seed);
                if invert {
                    // The inverse (a, −b), reduced: b < 0 most of the time.
                    let c = c_of(&a, &b, d);
                    (a, b, _) = ref_reduce(a.clone(), -b, c);
                }
                check(d, &a, &b, n);
            }
        }
    };
}

size_test!(squares_like_reference_128, "p128", 48, 300);
size_test!(squares_like_reference_256, "p256", 48, 300);
size_test!(squares_like_reference_512, "p512", 32, 300);
size_test!(squares_like_reference_1024, "p1024", 24, 300);
size_test!(squares_like_reference_2048, "p2048", 8, 120);
size_test!(squares_like_reference_composite_256, "c256", 48, 300);
size_test!(squares_like_reference_composite_1024, "c1024", 16, 200);
size_test!(
    squares_like_reference_composite_3072_fallback,
    "c3072",
    4,
    12
);

#[test]
fn widths_by_size() {
    assert!(FastSquarer::new(disc("p128")).unwrap().is_fixed_width());
    assert!(FastSquarer::new(disc("p1024")).unwrap().is_fixed_width());
    assert!(FastSquarer::new(disc("p2048")).unwrap().is_fixed_width());
    assert!(!FastSquarer::new(disc("c3072")).unwrap().is_fixed_width());
}

#[test]
fn garbage_input_does_not_panic() {
    let d = disc("p256");
    let sq = FastSquarer::new(d).unwrap();
    for (a, b) in [
        (0i64, 1i64),
        (-3, 1),
        (1, 0),
        (7, 123_456_789),
        (1, 1 << 40),
    ] {
        let _ = sq.square_n(&BigInt::from(a), &BigInt::from(b), 3);
    }
}

#[test]
fn refuses_bad_discriminants() {
    assert!(FastSquarer::new(&BigInt::from(5)).is_err());
    assert!(FastSquarer::new(&BigInt::from(-5)).is_err());
    assert!(FastSquarer::new(&BigInt::from(-7)).is_ok());
}

#[test]
fn generator_and_identity() {
    for name in ["p128", "p256", "p512", "p1024", "p2048"] {
        let d = disc(name);
        // d ≡ 1 (mod 8): (2, 1, (1 − d)/8) is a form.
        let (two, one) = (BigInt::from(2), BigInt::one());
        check(d, &two, &one, 1);
        check(d, &two, &one, 300);
        check(d, &one, &one, 5);
        let sq = FastSquarer::new(d).unwrap();
        assert_eq!(sq.square_n(&two, &one, 0), (two.clone(), one.clone()));
    }
}

#[test]
fn generator_long_run_1024() {
    let d = disc("p1024");
    check(d, &BigInt::from(2), &BigInt::one(), 10_000);
}

#[test]
fn ambiguous_and_a_equals_c_forms() {
    let mut rng = StdRng::seed_from_u64(99);
    for bits in [64u64, 200, 500, 1000] {
        for _ in 0..4 {
            // (a, a, c): d = a² − 4ac.
            let a = BigInt::from(rand_biguint(&mut rng, bits / 2)) | BigInt::one();
            let c = &a + BigInt::from(rand_biguint(&mut rng, bits / 2)) + 1;
            let d = &a * &a - ((&a * &c) << 2u32);
            check(&d, &a, &a, 1);
            check(&d, &a, &a, 40);
            // (a, b, a) with 0 < b < a odd: d = b² − 4a².
            let b = BigInt::from(rand_biguint(&mut rng, bits / 2 - 2)) | BigInt::one();
            let a2 = &b + BigInt::from(rand_biguint(&mut rng, bits / 2 - 2)) + 1;
            let d2 = &b * &b - ((&a2 * &a2) << 2u32);
            check(&d2, &a2, &b, 1);
            check(&d2, &a2, &b, 40);
        }
    }
}

#[test]
fn fallback_matches_reference_on_its_own() {
    // The num-bigint NUDUPL (the fallback) at a fixed-width size too.
    let d = disc("p512");
    let l = d.abs().sqrt().sqrt();
    for seed in 0..20 {
        let (a, b) = random_form(d, seed);
        let c = c_of(&a, &b, d);
        assert_eq!(slow::nudupl(&a, &b, &c, d, &l), ref_square(&a, &b, &c));
    }
}

/// chiavdf 1.2.0's `prove(bytes.fromhex("0405"), bytes([8]) + bytes(99), 1024, T, "")[:100]`:
/// the compressed y = generator^(2^T).
#[test]
fn matches_chiavdf_prove_output() {
    use crate::classgroup::{bqfc, Discriminant, Form};
    let d = Discriminant::from_seed(&[4, 5], 1024).unwrap();
    assert_eq!(*d.value(), chiavdf_disc());
    let sq = FastSquarer::new(d.value()).unwrap();
    for (t, want) in [
        (1000u64, "0200a5e7280cc29f0eeb831bcf888cc226006092c3a554e80a69f6afd9f34470eb8a0664fbc690d370dc6e34db5c737a1989e84d0bded62c4a0af0e82d0599b4586a3987fc01a8c8bb6eb43900855e4702908dba5ab5c445711db4a67a18e609078f0100"),
        (10000, "0100f8a2c3601243741ec7d1832e25b22513caf6865af2325bdad8e2576ac9719521ae9b210f80fd5582cf8da65e3492b221b38e1ef615f2fa64805779845717944ad1800f096ca5de09747622281983cbcf7873c526c9d3b8be6819dce299716c2e0100"),
    ] {
        let (a, b) = sq.square_n(&BigInt::from(2), &BigInt::one(), t);
        let y = Form::from_ab(a, b, d.value()).unwrap();
        assert_eq!(hex::encode(bqfc::encode(&d, &y).unwrap()), want, "T = {t}");
    }
}

// ---------------------------------------------------------------- the fixed-width integers

type N24 = Num<24>;

fn arb_int(max_limbs: usize) -> impl Strategy<Value = BigInt> {
    (
        proptest::collection::vec(any::<u64>(), 0..=max_limbs),
        any::<bool>(),
        0u32..64,
    )
        .prop_map(|(limbs, neg, shift)| {
            let mut bytes = Vec::new();
            for l in limbs {
                bytes.extend_from_slice(&l.to_le_bytes());
            }
            let m = BigInt::from(BigUint::from_bytes_le(&bytes)) >> shift;
            if neg {
                -m
            } else {
                m
            }
        })
}

fn n24(v: &BigInt) -> N24 {
    N24::from_bigint(v).unwrap()
}

proptest! {
    #[test]
    fn num_arithmetic(x in arb_int(11), y in arb_int(11), s in -(1i64 << 61)..(1i64 << 61), t in -(1i64 << 61)..(1i64 << 61)) {
        let (nx, ny) = (n24(&x), n24(&y));
        prop_assert_eq!(nx.to_bigint(), x.clone());
        prop_assert_eq!(nx.add(&ny).unwrap().to_bigint(), &x + &y);
        prop_assert_eq!(nx.sub(&ny).unwrap().to_bigint(), &x - &y);
        prop_assert_eq!(nx.mul(&ny).unwrap().to_bigint(), &x * &y);
        prop_assert_eq!(nx.cmp(&ny), x.cmp(&y));
        let (mut mx, mut my) = (nx, ny);
        N24::mat_apply(&mut mx, &mut my, s, t, t ^ 5, s >> 3).unwrap();
        prop_assert_eq!(mx.to_bigint(), &x * s + &y * t);
        prop_assert_eq!(my.to_bigint(), &x * (t ^ 5) + &y * (s >> 3));
        prop_assert_eq!(nx.shl_small(7).unwrap().to_bigint(), &x << 7u32);
        if !y.is_zero() {
            let (q, r) = nx.floor_divmod(&ny.abs()).unwrap();
            let ya = y.abs();
            prop_assert_eq!(q.to_bigint(), x.div_floor(&ya));
            prop_assert_eq!(r.to_bigint(), x.mod_floor(&ya));
            let p = &x * &y;
            prop_assert_eq!(n24(&p).divexact(&ny).unwrap().to_bigint(), x.clone());
        }
        let bits = nx.bits();
        prop_assert_eq!(bits as u64, x.bits());
    }

    #[test]
    fn num_divrem_edge_limbs(top in 1u64.., mid in any::<u64>(), len in 2usize..10, dlen in 2usize..6) {
        // Divisors with a small second limb exercise the quotient correction.
        let mut xl = vec![mid; len];
        xl.push(top);
        let mut dl = vec![0u64; dlen];
        dl.push(top >> 1 | 1);
        let to_big = |v: &[u64]| {
            let mut bytes = Vec::new();
            for l in v {
                bytes.extend_from_slice(&l.to_le_bytes());
            }
            BigInt::from(BigUint::from_bytes_le(&bytes))
        };
        let (x, d) = (to_big(&xl), to_big(&dl));
        let (q, r) = n24(&x).floor_divmod(&n24(&d)).unwrap();
        prop_assert_eq!(q.to_bigint(), &x / &d);
        prop_assert_eq!(r.to_bigint(), &x % &d);
    }
}
