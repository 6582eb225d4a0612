//! Every backend equals `reference` on random moduli of several sizes, random x and random T.

use num_bigint::BigUint;
use proptest::prelude::*;
use vrs_engine::backend::BackendKind;
use vrs_engine::group::Modulus;
use vrs_engine::with_backend;

/// A random odd modulus of exactly `bits` bits.
fn modulus(bits: u64, bytes: &[u8]) -> Modulus {
    let mut n = BigUint::from_bytes_be(bytes) % (BigUint::from(1u8) << bits);
    n.set_bit(bits - 1, true);
    n.set_bit(0, true);
    Modulus::new("random", n).expect("valid modulus")
}

fn run(kind: BackendKind, m: &Modulus, x: &BigUint, t: u64) -> BigUint {
    with_backend!(kind, m, |b| {
        let mut e = b.load(x);
        b.square_n(&mut e, t);
        b.value(&e)
    })
    .expect("backend prepares")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn backends_equal_reference(
        bits in prop::sample::select(vec![64u64, 65, 127, 512, 1000, 1024, 1536, 2047, 2048]),
        nb in prop::collection::vec(any::<u8>(), 256),
        xb in prop::collection::vec(any::<u8>(), 256),
        t in 0u64..300,
    ) {
        let m = modulus(bits, &nb);
        let x = BigUint::from_bytes_be(&xb) % m.n();
        let want = run(BackendKind::Reference, &m, &x, t);
        for kind in BackendKind::all() {
            prop_assert_eq!(run(kind, &m, &x, t), want.clone(), "backend {}", kind);
        }
    }
}

#[test]
fn edge_values_on_rsa2048() {
    let m = Modulus::rsa2048();
    let n = m.n();
    for x in [
        BigUint::from(0u8),
        BigUint::from(1u8),
        BigUint::from(2u8),
        n - 1u8,
        n - 2u8,
    ] {
        for t in [0u64, 1, 2, 17] {
            let want = run(BackendKind::Reference, &m, &x, t);
            for kind in BackendKind::all() {
                assert_eq!(
                    run(kind, &m, &x, t),
                    want,
                    "backend {kind}, x = {x}, t = {t}"
                );
            }
        }
    }
}

#[test]
fn long_chain_on_rsa2048_matches_modpow() {
    let m = Modulus::rsa2048();
    let x = m.hash_to_group(&[3; 32]);
    let t = 20_000u64;
    let want = x.value().modpow(&(BigUint::from(1u8) << t), m.n());
    for kind in [
        BackendKind::Fast,
        BackendKind::FastPortable,
        BackendKind::CryptoBigint,
    ] {
        assert_eq!(run(kind, &m, x.value(), t), want, "backend {kind}");
    }
}

#[test]
fn bytes_round_trip_and_length_checked() {
    let m = Modulus::by_name("test1024").expect("named modulus");
    let x = m.hash_to_group(&[9; 32]);
    let bytes = m.encode(&x);
    for kind in BackendKind::all() {
        let ok = with_backend!(kind, &m, |b| {
            let e = b.load_be_bytes(&bytes).expect("right length");
            assert!(
                b.load_be_bytes(&bytes[1..]).is_err(),
                "{kind} accepts a short encoding"
            );
            b.store_be_bytes(&e) == bytes
        });
        assert_eq!(ok, Ok(true), "backend {kind}");
    }
}

#[test]
fn unknown_backend_is_a_clear_error() {
    let err = BackendKind::parse("quantum").expect_err("no such backend");
    assert!(err.to_string().contains("fast"), "{err}");
}
