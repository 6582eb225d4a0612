//! The `simd` batch backend against the oracles, for every kernel this CPU runs (AVX2 and
//! the portable twin): random odd moduli of several sizes (including sizes that are not
//! multiples of the 28-bit limb), batches of 1, 7, 64 and 1000, random k with the edges 0
//! and 1, residues 0, 1 and N − 1, exponents of mixed lengths; and the kernels against each
//! other on long chains.

use num_bigint::BigUint;
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use vrs_engine::batch::simd::{Kernel, Simd};
use vrs_engine::batch::{reference_pow_many, reference_square_many, BatchBackend};
use vrs_engine::group::Modulus;
use vrs_engine::Error;

use crate::batch_support::{below_bits, random_modulus, residues};

/// A backend per kernel this CPU runs (at least the portable one).
fn backends() -> Vec<Simd> {
    let all: Vec<Simd> = Kernel::all()
        .into_iter()
        .filter(|k| k.is_supported())
        .map(|k| Simd::with_kernel(k).expect("supported kernel"))
        .collect();
    assert!(all.iter().any(|b| b.kernel() == Kernel::Portable));
    all
}

#[test]
fn simd_squares_like_the_reference() {
    let mut rng = StdRng::seed_from_u64(18);
    for b in backends() {
        for bits in [64, 255, 1024, 2047, 2048] {
            let m = random_modulus(&mut rng, bits);
            // The big batches get few squarings: the reference is num-bigint.
            for (size, k) in [
                (1, 0),
                (1, rng.gen_range(2..60)),
                (7, 1),
                (7, rng.gen_range(2..60)),
                (64, rng.gen_range(2..20)),
                (1000, 2),
            ] {
                let xs = residues(&mut rng, &m, size);
                let mut got = xs.clone();
                b.square_many(&m, &mut got, k).expect("squares");
                assert_eq!(
                    got,
                    reference_square_many(&m, &xs, k),
                    "{}: {bits} bits, batch {size}, k = {k}",
                    b.kernel_name()
                );
            }
        }
    }
}

#[test]
fn simd_powers_like_the_reference() {
    let mut rng = StdRng::seed_from_u64(19);
    for b in backends() {
        for bits in [64, 255, 1024, 2048] {
            let m = random_modulus(&mut rng, bits);
            for size in [1, 7, 64] {
                let bases = residues(&mut rng, &m, size);
                // 0 and 1 next to ~264-bit exponents in the same groups.
                let exps: Vec<BigUint> = (0..size)
                    .map(|i| {
                        let bits = match i % 5 {
                            0 => 0,
                            1 => 1,
                            2 => rng.gen_range(2..=16),
                            _ => rng.gen_range(250..=264),
                        };
                        // below_bits(1) is 0 or 1: make exponent 1 certain.
                        below_bits(&mut rng, bits).max(BigUint::from(u8::from(bits == 1)))
                    })
                    .collect();
                assert_eq!(
                    b.pow_many(&m, &bases, &exps).expect("powers"),
                    reference_pow_many(&m, &bases, &exps),
                    "{}: {bits} bits, batch {size}",
                    b.kernel_name()
                );
            }
        }
    }
}

/// Long chains on RSA-2048: every kernel gives the same bits, on any number of threads, with
/// one or two groups per chunk (16 values on 1 thread are two chunks of 8; on 3 threads,
/// four chunks of 4), and the first value matches modpow.
#[test]
fn kernels_and_thread_counts_agree_on_long_chains() {
    let mut rng = StdRng::seed_from_u64(20);
    let m = Modulus::rsa2048();
    let xs = residues(&mut rng, &m, 16);
    let k = 1500;
    let want0 = xs[5].modpow(&(BigUint::from(1u8) << k), m.n());
    let mut first: Option<Vec<BigUint>> = None;
    for kernel in backends().into_iter().map(|b| b.kernel()) {
        for threads in [1, 3] {
            let b = Simd::with_kernel(kernel)
                .expect("supported kernel")
                .on_threads(threads)
                .expect("thread pool");
            let mut got = xs.clone();
            b.square_many(&m, &mut got, k as u64).expect("squares");
            assert_eq!(got[5], want0, "{}, {threads} threads", b.kernel_name());
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(&got, f, "{}, {threads} threads", b.kernel_name()),
            }
        }
    }
}

#[test]
fn bad_inputs_are_refused() {
    let m = Modulus::by_name("test512").expect("named modulus");
    let b = Simd::new();
    let mut xs = vec![BigUint::from(3u8), m.n().clone()];
    let err = b.square_many(&m, &mut xs, 1).expect_err("refused");
    assert!(matches!(err, Error::NotCanonical { .. }), "{err}");
    let err = b
        .pow_many(&m, &[BigUint::from(3u8)], &[])
        .expect_err("refused");
    assert!(matches!(err, Error::WrongLength { .. }), "{err}");
    assert!(b.pow_many(&m, &[], &[]).expect("empty batch").is_empty());
    b.square_many(&m, &mut [], 5).expect("empty batch");
    for k in Kernel::all() {
        assert_eq!(
            Simd::with_kernel(k).is_ok(),
            k.is_supported(),
            "{}",
            k.name()
        );
    }
    assert_eq!(Simd::new().kernel(), Kernel::detect());
    assert!(Kernel::detect().is_supported());
    for k in Kernel::all() {
        assert_eq!(Kernel::parse(k.name()).ok(), Some(k));
    }
    let err = Kernel::parse("sse2").expect_err("no such kernel");
    assert!(err.to_string().contains("avx2"), "{err}");
    assert_eq!(b.name(), "simd");
    let portable = Simd::with_kernel(Kernel::Portable)
        .expect("always supported")
        .on_threads(2)
        .expect("thread pool");
    assert!(!portable.is_hardware(), "the twin is a stand-in");
    assert_eq!(portable.describe(), "simd (portable, 2 threads)");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any modulus size from 64 to 2048 bits: limb counts 4 to 74, every remainder of the
    /// 4-row tiles.
    #[test]
    fn any_size_squares_like_the_reference(
        bits in 64u64..=2048,
        seed in any::<u64>(),
        size in 1usize..12,
        k in 0u64..12,
    ) {
        let mut rng = StdRng::seed_from_u64(seed);
        let m = random_modulus(&mut rng, bits);
        let xs = residues(&mut rng, &m, size);
        let want = reference_square_many(&m, &xs, k);
        for b in backends() {
            let mut got = xs.clone();
            b.square_many(&m, &mut got, k).expect("squares");
            prop_assert_eq!(&got, &want, "{}: {} bits", b.kernel_name(), bits);
        }
    }
}
