//! The SP's worked examples and its table of P-values for the first 10^6 bits of the binary
//! expansion of e (SP 800-22 Rev. 1a, §2 and Appendix B), recomputed here: the suite is
//! trusted only as far as it reproduces them.

use super::*;
use num_bigint::BigUint;

/// "0101…" as bits, ignoring anything else (spaces).
pub fn bits(text: &str) -> Vec<u8> {
    text.bytes()
        .filter_map(|c| match c {
            b'0' => Some(0),
            b'1' => Some(1),
            _ => None,
        })
        .collect()
}

/// n bits from a xorshift64 generator (for comparisons with reference implementations).
pub fn xorshift_bits(state: &mut u64, n: usize) -> Vec<u8> {
    (0..n)
        .map(|_| {
            *state ^= *state << 13;
            *state ^= *state >> 7;
            *state ^= *state << 17;
            (*state >> 63) as u8
        })
        .collect()
}

/// Equal to the SP's value printed to six places.
pub fn close(got: f64, sp: f64) -> bool {
    (got - sp).abs() <= 1.5e-6
}

/// The SP's 100-bit example sequence (the first bits of π's binary expansion).
pub const PI_100: &str = "11001001000011111101101010100010001000010110100011\
                          00001000110100110001001100011001100010100010111000";

/// The first n bits of e = 10.1011011111100001…₂, from its leading 1 (NIST's data.e), by
/// binary splitting of Σ 1/k!.
pub fn e_bits(n: usize) -> Vec<u8> {
    // (P, Q) with P/Q = Σ_{k=a+1}^{b} 1/((a+1)…k) and Q = (a+1)…b.
    fn split(a: u64, b: u64) -> (BigUint, BigUint) {
        if b - a == 1 {
            return (BigUint::from(1u32), BigUint::from(b));
        }
        let m = (a + b) / 2;
        let (p1, q1) = split(a, m);
        let (p2, q2) = split(m, b);
        (p1 * &q2 + p2, q1 * q2)
    }
    let precision = n + 64;
    let (mut k, mut log2_factorial) = (1u64, 0.0f64);
    while log2_factorial < precision as f64 + 64.0 {
        k += 1;
        log2_factorial += (k as f64).log2();
    }
    let (p, q) = split(0, k);
    // e · 2^(precision − 2) = (Q + P) / Q · 2^(precision − 2): `precision` bits from the top.
    let scaled = ((&q + p) << (precision - 2)) / q;
    let digits = scaled.to_radix_be(2);
    digits[..n].to_vec()
}

#[test]
fn e_starts_as_nist_data_e() {
    let e = e_bits(1_000_000);
    let text: String = e[..20].iter().map(|b| char::from(b'0' + b)).collect();
    assert_eq!(text, "10101101111110000101");
    // The SP's serial example counts 499 971 zeros and 500 029 ones.
    assert_eq!(e.iter().filter(|&&b| b == 1).count(), 500_029);
}

/// The first n bits of √k from its leading 1 (NIST's data.sqrt2 and data.sqrt3).
pub fn sqrt_bits(k: u32, n: usize) -> Vec<u8> {
    let precision = n + 64;
    // √(k · 4^(precision − 1)) = √k · 2^(precision − 1): `precision` bits for 1 ≤ √k < 2.
    let root = (BigUint::from(k) << (2 * (precision - 1))).sqrt();
    root.to_radix_be(2)[..n].to_vec()
}

/// Appendix B's P-values for one 10^6-bit sequence, with the suite's default parameters and
/// B = 000000001 for the non-overlapping templates.
struct AppendixB {
    frequency: f64,
    block_frequency: f64,
    cusum_forward: f64,
    cusum_reverse: f64,
    runs: f64,
    longest_run: f64,
    rank: f64,
    fft: f64,
    non_overlapping: f64,
    overlapping: f64,
    universal: f64,
    approximate_entropy: f64,
    excursions_plus_1: f64,
    variant_minus_1: f64,
    linear_complexity: f64,
    serial: f64,
}

/// Appendix B is sts 2.1.2's output, so its longest run, overlapping template and linear
/// complexity P-values are reproduced with sts's class probabilities (`Classes::Sts`); the
/// suite's default, the exact ones, gives slightly different P-values from the same counts.
const STS: Classes = Classes::Sts;

/// Every mismatch of `bits` against the SP's row.
fn against_appendix_b(bits: &[u8], sp: &AppendixB) -> Vec<String> {
    let mut wrong = Vec::new();
    let mut check = |name: &str, got: f64, want: f64, tolerance: f64| {
        if (got - want).abs() > tolerance {
            wrong.push(format!("{name}: {got:.6}, SP {want:.6}"));
        }
    };
    const SIX: f64 = 1.5e-6;
    check("frequency", frequency::frequency(bits), sp.frequency, SIX);
    check(
        "block frequency",
        frequency::block_frequency(bits, 128),
        sp.block_frequency,
        SIX,
    );
    check(
        "cusum forward",
        frequency::cumulative_sums(bits, false),
        sp.cusum_forward,
        SIX,
    );
    check(
        "cusum reverse",
        frequency::cumulative_sums(bits, true),
        sp.cusum_reverse,
        SIX,
    );
    check("runs", frequency::runs(bits), sp.runs, SIX);
    let longest = frequency::longest_run(bits, STS).unwrap_or(f64::NAN);
    check("longest run", longest, sp.longest_run, SIX);
    check("rank", rank::rank(bits).unwrap_or(f64::NAN), sp.rank, SIX);
    check("fft", spectral::spectral(bits), sp.fft, SIX);
    let t = templates::non_overlapping(bits, 9, 8, &[0b000000001]);
    check("non-overlapping 000000001", t[0].1, sp.non_overlapping, SIX);
    let overlapping = templates::overlapping(bits, 9, STS);
    check("overlapping", overlapping, sp.overlapping, SIX);
    let universal = universal::universal(bits).unwrap_or(f64::NAN);
    check("universal", universal, sp.universal, SIX);
    check(
        "approximate entropy",
        serial::approximate_entropy(bits, 10),
        sp.approximate_entropy,
        SIX,
    );
    check(
        "excursions +1",
        excursions::random_excursions(bits)[4],
        sp.excursions_plus_1,
        SIX,
    );
    check(
        "variant -1",
        excursions::random_excursions_variant(bits)[8],
        sp.variant_minus_1,
        SIX,
    );
    check(
        "linear complexity",
        complexity::linear_complexity(bits, 500, STS),
        sp.linear_complexity,
        SIX,
    );
    check("serial", serial::serial(bits, 16).0, sp.serial, SIX);
    wrong
}

#[test]
fn appendix_b_for_e_sqrt2_and_sqrt3() {
    let e = e_bits(1_000_000);
    let sqrt2 = sqrt_bits(2, 1_000_000);
    let sqrt3 = sqrt_bits(3, 1_000_000);
    let rows = [
        (
            "e",
            &e,
            AppendixB {
                frequency: 0.953749,
                block_frequency: 0.211072,
                cusum_forward: 0.669887,
                cusum_reverse: 0.724266,
                runs: 0.561917,
                longest_run: 0.718945,
                rank: 0.306156,
                fft: 0.847187,
                non_overlapping: 0.078790,
                overlapping: 0.110434,
                universal: 0.282568,
                approximate_entropy: 0.700073,
                excursions_plus_1: 0.786868,
                variant_minus_1: 0.826009,
                linear_complexity: 0.826335,
                serial: 0.766182,
            },
        ),
        (
            "sqrt2",
            &sqrt2,
            AppendixB {
                frequency: 0.811881,
                block_frequency: 0.833222,
                cusum_forward: 0.879009,
                cusum_reverse: 0.957206,
                runs: 0.313427,
                longest_run: 0.012117,
                rank: 0.823810,
                fft: 0.581909,
                non_overlapping: 0.569461,
                overlapping: 0.791982,
                universal: 0.130805,
                approximate_entropy: 0.884740,
                excursions_plus_1: 0.216235,
                variant_minus_1: 0.566118,
                linear_complexity: 0.317127,
                serial: 0.861925,
            },
        ),
        (
            "sqrt3",
            &sqrt3,
            AppendixB {
                frequency: 0.610051,
                block_frequency: 0.473961,
                cusum_forward: 0.917121,
                cusum_reverse: 0.689519,
                runs: 0.261123,
                longest_run: 0.446726,
                rank: 0.314498,
                fft: 0.776046,
                non_overlapping: 0.532235,
                overlapping: 0.082716,
                universal: 0.165981,
                approximate_entropy: 0.180481,
                excursions_plus_1: 0.783283,
                variant_minus_1: 0.155066,
                linear_complexity: 0.346469,
                serial: 0.157500,
            },
        ),
    ];
    let mut wrong = Vec::new();
    for (name, bits, sp) in &rows {
        wrong.extend(
            against_appendix_b(bits, sp)
                .into_iter()
                .map(|w| format!("{name} {w}")),
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// §2's worked examples that use e: every state of both excursion tests, the rank test on
/// 10^5 bits, linear complexity with M = 1000 and serial with m = 2.
#[test]
fn the_worked_examples_on_e() {
    let e = e_bits(1_000_000);
    let near = |got: f64, want: f64, what: &str| assert!(close(got, want), "{what}: {got}");
    near(
        rank::rank(&e[..100_000]).expect("97 matrices"),
        0.532069,
        "rank 10^5",
    );
    assert_eq!(excursions::cycles(&e), (1490, true));
    let ex = excursions::random_excursions(&e);
    for (i, want) in [0.573306, 0.197996, 0.164011, 0.007779]
        .into_iter()
        .enumerate()
    {
        near(
            ex[i],
            want,
            &format!("excursions {}", excursions::STATES[i]),
        );
    }
    let variant = [
        0.858946, 0.794755, 0.576249, 0.493417, 0.633873, 0.917283, 0.934708, 0.816012, 0.826009,
        0.137861, 0.200642, 0.441254, 0.939291, 0.505683, 0.445935, 0.512207, 0.538635, 0.593930,
    ];
    let got = excursions::random_excursions_variant(&e);
    for (i, want) in variant.into_iter().enumerate() {
        near(
            got[i],
            want,
            &format!("variant {}", excursions::VARIANT_STATES[i]),
        );
    }
    near(
        complexity::linear_complexity(&e, 1000, STS),
        0.845406,
        "linear complexity M = 1000",
    );
    let (p1, p2) = serial::serial(&e, 2);
    near(p1, 0.843764, "serial m = 2, first");
    near(p2, 0.561915, "serial m = 2, second");

    // And the whole suite runs on it: 188 P-values, every one in [0, 1].
    let all = run_all(&e, &Params::default());
    assert_eq!(all.len(), 188);
    assert!(all.iter().all(|v| (0.0..=1.0).contains(&v.p)));
}
