//! Prove/verify round trips, and a verifier that rejects every kind of tampering.

use num_bigint::BigUint;
use proptest::prelude::*;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::{Backend, BackendKind};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions, Output};
use vrs_engine::{with_backend, Error};

fn prove(m: &Modulus, seed: u8, t: u64, opts: &EvalOptions) -> Output {
    let x = m.hash_to_group(&[seed; 32]);
    let fast = Fast::prepare(m).expect("prepare");
    vdf::evaluate(&fast, m, &x, t, opts, &mut |_| {})
        .expect("evaluate")
        .prove()
}

fn encoded(m: &Modulus, o: &Output) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut l = o.proof.l.to_bytes_be();
    while l.len() < 32 {
        l.insert(0, 0);
    }
    (m.encode(&o.x), m.encode(&o.y), l, m.encode(&o.proof.pi))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any T, any prover layout (memory caps force γ > 1 and several chunks): proofs verify,
    /// and y is x^(2^T).
    #[test]
    fn round_trip_any_layout(seed in any::<u8>(), t in 1u64..3000, cap in 2u64..64, threads in 1usize..5) {
        let m = Modulus::by_name("test512").expect("named");
        let opts = EvalOptions { max_checkpoints: cap, threads, ..EvalOptions::default() };
        let o = prove(&m, seed, t, &opts);
        let want = o.x.value().modpow(&(BigUint::from(1u8) << t), m.n());
        prop_assert_eq!(o.y.value(), &m.canonical(&want));
        prop_assert_eq!(vdf::verify(&m, &o.x, &o.y, o.t, &o.proof), Ok(()));
    }
}

#[test]
fn every_backend_proves_the_same_output() {
    let m = Modulus::by_name("test1024").expect("named");
    let x = m.hash_to_group(&[1; 32]);
    let opts = EvalOptions {
        replay_every: Some(100),
        ..EvalOptions::default()
    };
    let outputs: Vec<Output> = BackendKind::all()
        .into_iter()
        .map(|kind| {
            with_backend!(kind, &m, |b| vdf::evaluate(
                &b,
                &m,
                &x,
                777,
                &opts,
                &mut |_| {}
            )
            .expect("evaluate")
            .prove())
            .expect("backend")
        })
        .collect();
    for o in &outputs[1..] {
        assert_eq!(o, &outputs[0]);
    }
    let replay = &outputs[0].replay;
    assert_eq!(
        replay.iter().map(|c| c.iteration).collect::<Vec<_>>(),
        vec![100, 200, 300, 400, 500, 600, 700]
    );
    // Each published segment re-checks on its own.
    for c in replay {
        let want = x
            .value()
            .modpow(&(BigUint::from(1u8) << c.iteration), m.n());
        assert_eq!(c.value.value(), &m.canonical(&want));
    }
}

#[test]
fn rsa2048_round_trip_and_tampering() {
    let m = Modulus::rsa2048();
    let o = prove(&m, 5, 5000, &EvalOptions::default());
    let (x, y, l, pi) = encoded(&m, &o);
    assert_eq!(vdf::verify_encoded(&m, &x, &y, 5000, &l, &pi), Ok(()));

    // A changed T, x, y, π or ℓ is refused.
    assert!(vdf::verify_encoded(&m, &x, &y, 5001, &l, &pi).is_err());
    assert_eq!(
        vdf::verify_encoded(&m, &x, &y, 0, &l, &pi),
        Err(Error::ZeroIterations)
    );
    for (name, field) in [("x", 0usize), ("y", 1), ("l", 2), ("pi", 3)] {
        let mut f = [x.clone(), y.clone(), l.clone(), pi.clone()];
        let last = f[field].len() - 1;
        f[field][last] ^= 0x01;
        let r = vdf::verify_encoded(&m, &f[0], &f[1], 5000, &f[2], &f[3]);
        assert!(r.is_err(), "flipped {name} accepted");
    }

    // Non-canonical encodings (N − v for a valid v) are refused, not silently accepted.
    let flip = |v: &BigUint| m.encode_int(&(m.n() - v));
    let r = vdf::verify_encoded(&m, &x, &flip(o.y.value()), 5000, &l, &pi);
    assert!(
        matches!(r, Err(Error::NotCanonical { what: "y", .. })),
        "{r:?}"
    );
    let r = vdf::verify_encoded(&m, &x, &y, 5000, &l, &flip(o.proof.pi.value()));
    assert!(
        matches!(r, Err(Error::NotCanonical { what: "pi", .. })),
        "{r:?}"
    );
    let r = vdf::verify_encoded(&m, &flip(o.x.value()), &y, 5000, &l, &pi);
    assert!(
        matches!(r, Err(Error::NotCanonical { what: "x", .. })),
        "{r:?}"
    );

    // Wrong lengths and zero.
    assert!(matches!(
        vdf::verify_encoded(&m, &x[1..], &y, 5000, &l, &pi),
        Err(Error::WrongLength { .. })
    ));
    assert!(matches!(
        vdf::verify_encoded(&m, &x, &y, 5000, &l[1..], &pi),
        Err(Error::WrongLength { .. })
    ));
    let zero = vec![0u8; m.byte_len()];
    assert!(vdf::verify_encoded(&m, &x, &y, 5000, &l, &zero).is_err());
    assert!(vdf::verify_encoded(&m, &zero, &y, 5000, &l, &pi).is_err());
}

#[test]
fn a_proof_for_minus_y_is_refused() {
    // In Z_N^* the prover could send −y; in the quotient group y has one encoding only, and a
    // proof π' = −π (or N − π) is rejected as non-canonical.
    let m = Modulus::by_name("test512").expect("named");
    let o = prove(&m, 11, 300, &EvalOptions::default());
    let (x, y, l, _) = encoded(&m, &o);
    let neg_pi = m.encode_int(&(m.n() - o.proof.pi.value()));
    assert!(vdf::verify_encoded(&m, &x, &y, 300, &l, &neg_pi).is_err());
}

#[test]
fn small_t_gives_identity_proof() {
    // For T < 256, ⌊2^T/ℓ⌋ = 0 and π = 1.
    let m = Modulus::by_name("test512").expect("named");
    for t in [1u64, 2, 3, 100, 255] {
        let o = prove(&m, 1, t, &EvalOptions::default());
        assert_eq!(o.proof.pi.value(), &BigUint::from(1u8), "T = {t}");
        assert_eq!(vdf::verify(&m, &o.x, &o.y, t, &o.proof), Ok(()));
    }
}

#[test]
fn replay_segments_recompute_and_catch_tampering() {
    let m = Modulus::by_name("test1024").expect("named");
    let opts = EvalOptions {
        replay_every: Some(250),
        ..EvalOptions::default()
    };
    let o = prove(&m, 3, 1000, &opts);
    assert_eq!(o.replay.len(), 3);
    assert_eq!(vdf::verify_replay(&m, &o.x, &o.y, o.t, &o.replay), Ok(()));
    assert_eq!(vdf::verify_replay(&m, &o.x, &o.y, o.t, &[]), Ok(()));

    // A wrong middle checkpoint breaks the two segments around it; the first is named.
    let mut bad = o.replay.clone();
    bad[1].value = o.replay[0].value.clone();
    assert_eq!(
        vdf::verify_replay(&m, &o.x, &o.y, o.t, &bad),
        Err(Error::ReplayMismatch { from: 250, to: 500 })
    );
    // A wrong y breaks the last segment.
    assert_eq!(
        vdf::verify_replay(&m, &o.x, &o.replay[2].value, o.t, &o.replay),
        Err(Error::ReplayMismatch {
            from: 750,
            to: 1000
        })
    );
    // Out-of-order or out-of-range iterations are refused.
    let mut swapped = o.replay.clone();
    swapped.swap(0, 1);
    assert!(matches!(
        vdf::verify_replay(&m, &o.x, &o.y, o.t, &swapped),
        Err(Error::BadReplay(_))
    ));
    let mut late = o.replay.clone();
    late[2].iteration = 1000;
    assert!(matches!(
        vdf::verify_replay(&m, &o.x, &o.y, o.t, &late),
        Err(Error::BadReplay(_))
    ));
}
