//! The `cpu` batch backend and batch verification against the oracles: random odd moduli of
//! several sizes, batches of 1, 7, 64 and 1000, random k with the edges 0 and 1, residues 0, 1
//! and N − 1; `verify_many` agrees with `vdf::verify` on valid and tampered proofs.

use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::batch::cpu::Cpu;
use vrs_engine::batch::{
    open, reference_pow_many, reference_square_many, verify_many, BatchBackend, BatchKind,
    VerifyItem,
};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions, Proof};
use vrs_engine::Error;

use crate::batch_support::{below_bits, random_modulus, residues};

#[test]
fn cpu_squares_like_the_reference() {
    let mut rng = StdRng::seed_from_u64(8);
    let cpu = Cpu::new();
    for bits in [64, 255, 1000, 2048] {
        let m = random_modulus(&mut rng, bits);
        for (size, k) in [(1, 0), (7, 1), (64, rng.gen_range(2..40)), (1000, 3)] {
            let xs = residues(&mut rng, &m, size);
            let mut got = xs.clone();
            cpu.square_many(&m, &mut got, k).expect("works");
            assert_eq!(
                got,
                reference_square_many(&m, &xs, k),
                "{bits} bits, batch {size}, k = {k}"
            );
        }
    }
}

#[test]
fn cpu_powers_like_the_reference() {
    let mut rng = StdRng::seed_from_u64(9);
    let cpu = Cpu::with_threads(2).expect("works");
    for bits in [64, 1000, 2048] {
        let m = random_modulus(&mut rng, bits);
        let bases = residues(&mut rng, &m, 64);
        let exps: Vec<BigUint> = (0..64)
            .map(|i| match i {
                0 => BigUint::from(0u8),
                1 => BigUint::from(1u8),
                _ => {
                    let bits = rng.gen_range(2..=264);
                    below_bits(&mut rng, bits)
                }
            })
            .collect();
        assert_eq!(
            cpu.pow_many(&m, &bases, &exps).expect("works"),
            reference_pow_many(&m, &bases, &exps),
            "{bits} bits"
        );
    }
}

#[test]
fn values_not_below_the_modulus_are_refused() {
    let m = Modulus::by_name("test512").expect("works");
    let mut xs = vec![BigUint::from(3u8), m.n().clone()];
    let err = Cpu::new().square_many(&m, &mut xs, 1).expect_err("refused");
    assert!(matches!(err, Error::NotCanonical { .. }), "{err}");
    let err = Cpu::new()
        .pow_many(&m, &[BigUint::from(3u8)], &[])
        .expect_err("refused");
    assert!(matches!(err, Error::WrongLength { .. }), "{err}");
}

/// Proofs of T squarings of distinct inputs.
fn proofs(m: &Modulus, n: u8, t: u64) -> Vec<VerifyItem> {
    let fast = Fast::prepare(m).expect("prepares");
    (0..n)
        .map(|i| {
            let x = m.hash_to_group(&[i; 32]);
            let out = vdf::evaluate(&fast, m, &x, t, &EvalOptions::default(), &mut |_| {})
                .expect("evaluates")
                .prove();
            VerifyItem {
                x: out.x,
                y: out.y,
                t,
                proof: out.proof,
            }
        })
        .collect()
}

#[test]
fn batch_verification_agrees_with_verify_on_good_and_tampered_proofs() {
    let m = Modulus::by_name("test512").expect("works");
    let mut items = proofs(&m, 8, 300);
    // Tamper: y, π, ℓ and T, one item each; item 4 gets x = 1.
    let bump = |e: &vrs_engine::group::Element| {
        m.element(&m.canonical(&((e.value() + 1u8) % m.n())))
            .expect("works")
    };
    items[1].y = bump(&items[1].y);
    items[2].proof = Proof {
        l: items[2].proof.l.clone(),
        pi: bump(&items[2].proof.pi),
    };
    items[3].proof.l += 2u8;
    items[5].t += 1;
    items[4].x = m.element(&BigUint::from(1u8)).expect("works");
    let backends: Vec<Box<dyn BatchBackend>> = vec![
        open(BatchKind::Cpu).expect("works"),
        Box::new(Cpu::with_threads(1).expect("works")),
    ];
    for b in backends {
        let got = verify_many(b.as_ref(), &m, &items).expect("works");
        for (i, it) in items.iter().enumerate() {
            let want = vdf::verify(&m, &it.x, &it.y, it.t, &it.proof);
            assert_eq!(got[i], want, "{}: item {i}", b.describe());
        }
        let failed: Vec<usize> = (0..items.len()).filter(|i| got[*i].is_err()).collect();
        assert_eq!(failed, [1, 2, 3, 4, 5], "{}", b.describe());
    }
}
