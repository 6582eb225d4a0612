//! The `gpu` batch backend equals the num-bigint oracles bit for bit. These tests never skip:
//! a machine without a GPU adapter fails them, so CI always runs the shader (on Linux without a
//! GPU, Mesa's lavapipe is the adapter: Debian's mesa-vulkan-drivers, from scripts/install-deps).
//! Sizes are kept small enough for lavapipe on two cores.

use num_bigint::BigUint;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;
use vrs_engine::backend::fast::Fast;
use vrs_engine::backend::Backend;
use vrs_engine::batch::gpu::Gpu;
use vrs_engine::batch::{
    reference_pow_many, reference_square_many, verify_many, BatchBackend, VerifyItem,
};
use vrs_engine::group::Modulus;
use vrs_engine::vdf::{self, EvalOptions};
use vrs_engine::Error;

use crate::batch_support::{below_bits as random_below, random_modulus as modulus, residues};

/// One device for the whole test binary: making one compiles the shaders.
fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| {
        Gpu::new().unwrap_or_else(|e| {
            panic!(
                "the gpu backend found no usable adapter ({e}). These tests need one and never \
                 skip: on Debian/Ubuntu install Mesa's Vulkan drivers (lavapipe runs on the CPU) \
                 with `apt-get install mesa-vulkan-drivers libvulkan1`, or run scripts/install-deps"
            )
        })
    })
}

fn check_square(m: &Modulus, xs: &[BigUint], k: u64) {
    let want = reference_square_many(m, xs, k);
    let mut got = xs.to_vec();
    gpu().square_many(m, &mut got, k).expect("gpu square_many");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{} bits, batch {}, k = {k}, item {i} (x = {:#x})",
            m.bits(),
            xs.len(),
            xs[i]
        );
    }
}

fn check_pow(m: &Modulus, bases: &[BigUint], exps: &[BigUint]) {
    let want = reference_pow_many(m, bases, exps);
    let got = gpu().pow_many(m, bases, exps).expect("gpu pow_many");
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "{} bits, batch {}, item {i}: {:#x}^{:#x}",
            m.bits(),
            bases.len(),
            bases[i],
            exps[i]
        );
    }
}

#[test]
fn backend_is_named_and_shareable() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Gpu>();
    assert_eq!(gpu().name(), "gpu");
    assert!(!gpu().adapter_info().is_empty());
}

/// Moduli of several sizes (also not multiples of 32 bits), batches of 1, 7, 64 and 1000,
/// k = 0, 1 and random; the batches hold 0, 1 and N − 1.
#[test]
fn square_many_equals_reference() {
    let mut rng = StdRng::seed_from_u64(0x05ee_d6b0);
    for bits in [64u64, 65, 256, 1000, 2047, 2048] {
        let m = modulus(&mut rng, bits);
        for len in [1usize, 7, 64, 1000] {
            let xs = residues(&mut rng, &m, len);
            // The largest batches get few squarings: lavapipe is a CPU.
            let k = if len == 1000 {
                rng.gen_range(2..6)
            } else {
                rng.gen_range(2..40)
            };
            for k in [0, 1, k] {
                check_square(&m, &xs, k);
            }
        }
    }
}

#[test]
fn square_many_on_rsa2048() {
    let mut rng = StdRng::seed_from_u64(2048);
    let m = Modulus::rsa2048();
    let xs = residues(&mut rng, &m, 33);
    check_square(&m, &xs, 25);
}

/// Chains longer than one submission's share of squarings (4096) continue where they stopped.
#[test]
fn long_chains_span_several_submissions() {
    let mut rng = StdRng::seed_from_u64(9000);
    for (bits, len) in [(64u64, 1usize), (96, 100)] {
        let m = modulus(&mut rng, bits);
        let xs = residues(&mut rng, &m, len);
        check_square(&m, &xs, 9000);
    }
}

/// Exponents of mixed lengths in one batch: 0, 1, 2, short, the ~264-bit ones of Wesolowski
/// verification, and (in the smaller batches) some of the modulus' size. Batches of 300 only
/// for the smaller moduli: lavapipe is a CPU.
#[test]
fn pow_many_equals_reference() {
    let mut rng = StdRng::seed_from_u64(0x9047);
    for (bits, lens) in [
        (64u64, &[1usize, 7, 64, 300][..]),
        (100, &[1, 7, 64, 300]),
        (256, &[1, 7, 64, 300]),
        (1000, &[1, 7, 64]),
        (2048, &[1, 7, 24]),
    ] {
        let m = modulus(&mut rng, bits);
        for &len in lens {
            let bases = residues(&mut rng, &m, len);
            let exps: Vec<BigUint> = (0..len)
                .map(|i| match i % 7 {
                    0 => BigUint::from(0u8),
                    1 => BigUint::from(1u8),
                    2 => BigUint::from(2u8),
                    3 => {
                        let b = rng.gen_range(1..64);
                        random_below(&mut rng, b)
                    }
                    4 if len <= 7 && bits <= 1000 => random_below(&mut rng, bits),
                    _ => random_below(&mut rng, 264) | (BigUint::from(1u8) << 263),
                })
                .collect();
            // A batch of one takes a ~264-bit exponent, the common case.
            let exps = if len == 1 {
                vec![random_below(&mut rng, 264) | (BigUint::from(1u8) << 263)]
            } else {
                exps
            };
            check_pow(&m, &bases, &exps);
        }
    }
    let m = Modulus::rsa2048();
    let bases = residues(&mut rng, &m, 5);
    let exps = vec![
        BigUint::from(0u8),
        BigUint::from(1u8),
        BigUint::from(65537u32),
        random_below(&mut rng, 264),
        random_below(&mut rng, 600),
    ];
    check_pow(&m, &bases, &exps);
}

/// An exponent longer than one submission's share of rounds, next to short ones.
#[test]
fn long_exponents_span_several_submissions() {
    let mut rng = StdRng::seed_from_u64(10_000);
    let m = modulus(&mut rng, 70);
    let bases = residues(&mut rng, &m, 4);
    let exps = vec![
        random_below(&mut rng, 10_000) | (BigUint::from(1u8) << 9999),
        BigUint::from(3u8),
        BigUint::from(0u8),
        random_below(&mut rng, 5000),
    ];
    check_pow(&m, &bases, &exps);
}

#[test]
fn refuses_what_the_other_backends_refuse() {
    let m = Modulus::by_name("test512").expect("named");
    let mut xs = vec![BigUint::from(3u8), m.n().clone()];
    assert!(matches!(
        gpu().square_many(&m, &mut xs, 3),
        Err(Error::NotCanonical { .. })
    ));
    let bases = vec![BigUint::from(3u8)];
    assert!(matches!(
        gpu().pow_many(&m, &bases, &[]),
        Err(Error::WrongLength { .. })
    ));
    let mut empty: Vec<BigUint> = Vec::new();
    gpu().square_many(&m, &mut empty, 5).expect("empty batch");
    assert_eq!(gpu().pow_many(&m, &[], &[]), Ok(Vec::new()));
}

/// Batch verification through the GPU gives the same answers as `vdf::verify`.
#[test]
fn verify_many_on_the_gpu() {
    let m = Modulus::by_name("test512").expect("named");
    let mut items: Vec<VerifyItem> = (0..6u8)
        .map(|seed| {
            let x = m.hash_to_group(&[seed; 32]);
            let fast = Fast::prepare(&m).expect("prepare");
            // T above the ~256 bits of ℓ, so that π = x^⌊2^T / ℓ⌋ is not 1.
            let t = 400 + u64::from(seed) * 37;
            let out = vdf::evaluate(&fast, &m, &x, t, &EvalOptions::default(), &mut |_| {})
                .expect("evaluate")
                .prove();
            VerifyItem {
                x: out.x,
                y: out.y,
                t: out.t,
                proof: out.proof,
            }
        })
        .collect();
    // Item 1 claims another item's output: its challenge prime no longer matches.
    items[1].y = items[2].y.clone();
    // Item 3 keeps its challenge but carries another proof's π.
    items[3].proof.pi = items[4].proof.pi.clone();
    let got = verify_many(gpu(), &m, &items).expect("gpu verify_many");
    for (i, (g, it)) in got.iter().zip(&items).enumerate() {
        assert_eq!(
            g,
            &vdf::verify(&m, &it.x, &it.y, it.t, &it.proof),
            "item {i}"
        );
    }
    assert!(
        got[0].is_ok() && got[1].is_err() && got[3].is_err(),
        "{got:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Any modulus size, small batches, any short chain.
    #[test]
    fn square_many_any_size(
        bits in 64u64..=2048,
        seed in any::<u64>(),
        len in 1usize..24,
        k in 0u64..24,
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let m = modulus(&mut rng, bits);
        let xs: Vec<BigUint> = (0..len).map(|_| random_below(&mut rng, bits) % m.n()).collect();
        let mut got = xs.clone();
        gpu().square_many(&m, &mut got, k).expect("gpu square_many");
        prop_assert_eq!(got, reference_square_many(&m, &xs, k));
    }
}
