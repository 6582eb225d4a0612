//! NIST SP 800-22 Rev. 1a, "A Statistical Test Suite for Random and Pseudorandom Number
//! Generators for Cryptographic Applications": its 15 tests on one sequence (188 P-values
//! with the suite's default parameters), and the second-level analysis over many sequences
//! that the SP's §4 prescribes (`report`). Written from the SP and checked against its worked
//! examples and its table of P-values for the binary expansion of e (docs/STATISTICS.md).

pub mod complexity;
pub mod excursions;
pub mod frequency;
pub mod rank;
pub mod report;
pub mod serial;
pub mod spectral;
pub mod templates;
pub mod universal;

#[cfg(test)]
mod examples;

use serde::Serialize;

/// The class probabilities of the three tests that bin their statistic against tabulated ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Classes {
    /// Computed exactly (dynamic programming, or closed forms): the default.
    #[default]
    Exact,
    /// Those NIST's sts 2.1.2 uses, to compare P-values with its output (and with the SP's
    /// Appendix B, which is its output): the SP's four-place table for the longest run, sts's
    /// Poisson-based Pr(u, η) for the overlapping template, 0.01047 for 1/96 in linear
    /// complexity.
    Sts,
}

/// The suite's parameters; the defaults are those of NIST's reference suite (sts 2.1.2), with
/// exact class probabilities.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub classes: Classes,
    pub block_frequency: usize,
    pub non_overlapping_template: usize,
    pub overlapping_template: usize,
    pub approximate_entropy: usize,
    pub serial: usize,
    pub linear_complexity: usize,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            classes: Classes::Exact,
            block_frequency: 128,
            non_overlapping_template: 9,
            overlapping_template: 9,
            approximate_entropy: 10,
            serial: 16,
            linear_complexity: 500,
        }
    }
}

/// The least sequence length the suite runs on: every test's minimum with the default
/// parameters is met from 10^6 bits, the length the SP's §4 and its examples use.
pub const MIN_BITS: usize = 1_000_000;

/// One P-value of one test on one sequence; `variant` names which, where a test gives several
/// (a template, a state, a direction).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PValue {
    pub test: &'static str,
    pub variant: String,
    pub p: f64,
}

/// The bits of `bytes`, most significant first in each byte (as NIST's suite reads a binary
/// file), one per byte.
pub fn unpack(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .flat_map(|&byte| (0..8).rev().map(move |i| (byte >> i) & 1))
        .collect()
}

/// Every test on one sequence of at least MIN_BITS bits, in the SP's order. The random
/// excursions tests are left out of a sequence with too few cycles (§2.14.7), as NIST's suite
/// does; the second-level analysis then counts fewer sequences for them.
pub fn run_all(bits: &[u8], params: &Params) -> Vec<PValue> {
    assert!(
        bits.len() >= MIN_BITS,
        "SP 800-22: at least {MIN_BITS} bits"
    );
    let mut out = Vec::with_capacity(188);
    let mut push =
        |test: &'static str, variant: String, p: f64| out.push(PValue { test, variant, p });
    push("Frequency", String::new(), frequency::frequency(bits));
    push(
        "BlockFrequency",
        String::new(),
        frequency::block_frequency(bits, params.block_frequency),
    );
    push(
        "CumulativeSums",
        "forward".into(),
        frequency::cumulative_sums(bits, false),
    );
    push(
        "CumulativeSums",
        "reverse".into(),
        frequency::cumulative_sums(bits, true),
    );
    push("Runs", String::new(), frequency::runs(bits));
    if let Some(p) = frequency::longest_run(bits, params.classes) {
        push("LongestRun", String::new(), p);
    }
    if let Some(p) = rank::rank(bits) {
        push("Rank", String::new(), p);
    }
    push("FFT", String::new(), spectral::spectral(bits));
    let m = params.non_overlapping_template;
    let templates = templates::aperiodic_templates(m);
    for (t, p) in templates::non_overlapping(bits, m, 8, &templates) {
        push("NonOverlappingTemplate", templates::template_name(t, m), p);
    }
    push(
        "OverlappingTemplate",
        String::new(),
        templates::overlapping(bits, params.overlapping_template, params.classes),
    );
    if let Some(p) = universal::universal(bits) {
        push("Universal", String::new(), p);
    }
    push(
        "ApproximateEntropy",
        String::new(),
        serial::approximate_entropy(bits, params.approximate_entropy),
    );
    if excursions::cycles(bits).1 {
        let p = excursions::random_excursions(bits);
        for (x, p) in excursions::STATES.iter().zip(p) {
            push("RandomExcursions", format!("x={x:+}"), p);
        }
        let p = excursions::random_excursions_variant(bits);
        for (x, p) in excursions::VARIANT_STATES.iter().zip(p) {
            push("RandomExcursionsVariant", format!("x={x:+}"), p);
        }
    }
    let (p1, p2) = serial::serial(bits, params.serial);
    push("Serial", "1".into(), p1);
    push("Serial", "2".into(), p2);
    push(
        "LinearComplexity",
        String::new(),
        complexity::linear_complexity(bits, params.linear_complexity, params.classes),
    );
    out
}
