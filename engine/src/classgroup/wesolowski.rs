//! Wesolowski proofs in the class group, as chiavdf 1.2.0 makes and checks them.
//!
//! For T iterations from x: y = x^(2^T), B = `GetB(D, x, y)` ([`get_b`]) and
//! π = x^⌊2^T / B⌋. The verifier checks π^B · x^(2^T mod B) = y.
//!
//! The prover follows chiavdf's `ProveSlow`/`GenerateWesolowski`: during the T squarings it
//! keeps x^(2^(i·k·l)) for every i, with (k, l) from chiavdf's `ApproximateParameters`, then
//! computes π from those checkpoints with k-bit windows of ⌊2^T/B⌋ (about T/k compositions
//! plus l·2^(k+1) small powers), instead of T more squarings. π is a group element, unique, and
//! so are its reduced form and bytes: any correct prover gives chiavdf's bytes.

use super::bqfc::{self, decode_as};
use super::discriminant::Discriminant;
use super::fast::FastComposer;
use super::form::{self, Form};
use super::hash_prime::{hash_prime, B_BITS};
use crate::error::{Error, Result};
use num_bigint::BigUint;
use num_traits::ToPrimitive;
use rayon::prelude::*;

/// Repeated squaring of reduced forms of one discriminant.
pub trait Squarer: Sync {
    /// Square `f` `n` times; input and output reduced.
    fn square_n(&self, f: &Form, n: u64) -> Form;
}

/// The reference squarer: chiavdf's NUDUPL then reduction, on num-bigint.
#[derive(Clone, Debug)]
pub struct ReferenceSquarer {
    d: Discriminant,
}

impl ReferenceSquarer {
    /// A squarer for forms of `d`.
    pub fn new(d: &Discriminant) -> Self {
        Self { d: d.clone() }
    }
}

impl Squarer for ReferenceSquarer {
    fn square_n(&self, f: &Form, n: u64) -> Form {
        let (d, l) = (self.d.value(), self.d.fourth_root());
        let mut f = f.clone();
        for _ in 0..n {
            f = form::square(&f, d, l);
        }
        f
    }
}

/// How often (in iterations) [`prove`] reports progress, at most.
const PROGRESS_EVERY: u64 = 1 << 16;
/// The largest window k used (2^k buckets are kept); chiavdf's formula exceeds it only for T
/// beyond 2^30 or so. k changes the work, never the proof.
const MAX_K: u64 = 20;

/// chiavdf's `ApproximateParameters(T)`: (l, k).
pub fn approximate_parameters(t: u64) -> (u64, u64) {
    let log_memory = 23.253_496_66_f64;
    let log_t = (t as f64).log2();
    let l = if log_t - log_memory > 0.000_001 {
        2f64.powf(log_memory - 20.0).ceil() as u64
    } else {
        1
    };
    // chiavdf's constant, not quite ln 2: kept so that (l, k) are chiavdf's.
    #[allow(clippy::approx_constant)]
    let ln2 = 0.693_147_1;
    let intermediate = t as f64 * ln2 / (2.0 * l as f64);
    let k = (intermediate.ln() - intermediate.ln().ln() + 0.25).round();
    // chiavdf: std::max(k, 1.0), then an int; NaN (T ≤ 2) ends up as k = 1 after its
    // `if (k <= 0) k = 1`.
    let k = if k.is_nan() || k < 1.0 { 1 } else { k as u64 };
    (l.max(1), k.clamp(1, MAX_K))
}

/// y = x^(2^T) and the proof π = x^⌊2^T/B⌋, for a reduced form x of `d` and T ≥ 1.
/// `progress` is called with the number of squarings done, now and then (first with 0, last
/// with T). Before returning, the proof is verified: a squarer that computed a wrong y is
/// reported as [`Error::SquarerFault`], never returned as a proof.
pub fn prove(
    sq: &dyn Squarer,
    d: &Discriminant,
    x: &Form,
    t: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<(Form, Form)> {
    let proved = prove_with_replay(sq, d, x, t, None, progress)?;
    Ok((proved.y, proved.proof))
}

/// What [`prove_with_replay`] returns.
#[derive(Clone, Debug)]
pub struct Proved {
    pub y: Form,
    pub proof: Form,
    /// (i, x^(2^i)) for every multiple i of `replay_every` with 0 < i < T, in order.
    pub replay: Vec<(u64, Form)>,
}

/// [`prove`], also keeping x^(2^i) at every multiple i of `replay_every` below T, so that a
/// verifier can re-run the squarings segment by segment ([`verify_replay`]). `progress` gets
/// the squarings done every 65536 of them, at T − 1 (before the last squaring) and at T.
pub fn prove_with_replay(
    sq: &dyn Squarer,
    d: &Discriminant,
    x: &Form,
    t: u64,
    replay_every: Option<u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<Proved> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    x.check(d)
        .map_err(|reason| Error::BadForm { what: "x", reason })?;
    let (l, k) = approximate_parameters(t);
    let kl = k * l;
    let replay_every = replay_every.filter(|&r| r > 0).unwrap_or(u64::MAX);
    let count = t.div_ceil(kl);
    let mut intermediates = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut replay = Vec::new();
    let mut y = x.clone();
    let mut done = 0u64;
    let mut reported = 0u64;
    progress(0);
    while done < t {
        if done.is_multiple_of(kl) {
            intermediates.push(y.clone());
        }
        let stop = next_multiple(done, kl)
            .min(next_multiple(done, replay_every))
            .min(crate::vdf::last_stop(done, t));
        y = sq.square_n(&y, stop - done);
        done = stop;
        if done.is_multiple_of(replay_every) && done < t {
            replay.push((done, y.clone()));
        }
        if done - reported >= PROGRESS_EVERY || done + 1 >= t {
            progress(done);
            reported = done;
        }
    }
    if let Err(reason) = y.check(d) {
        return Err(Error::SquarerFault(format!(
            "the squarer returned a y that is not a reduced form of the discriminant: {reason}"
        )));
    }
    let proof = generate_proof(d, x, &y, &intermediates, t, k, l)?;
    verify(d, x, &y, &proof, t).map_err(|_| {
        Error::SquarerFault("the squarer's y does not match x^(2^T): the proof fails".into())
    })?;
    Ok(Proved { y, proof, replay })
}

/// The least multiple of `m` above `n` (saturating).
fn next_multiple(n: u64, m: u64) -> u64 {
    (n / m).saturating_add(1).saturating_mul(m)
}

/// Re-runs the squarings between published checkpoints without trusting the proof: with
/// c_0 = x and c_T = y around `checkpoints` (iterations strictly increasing inside (0, T)),
/// every adjacent pair must satisfy c_j = c_i^(2^(j − i)). Segments run in parallel.
pub fn verify_replay(
    sq: &dyn Squarer,
    d: &Discriminant,
    x: &Form,
    y: &Form,
    t: u64,
    checkpoints: &[(u64, Form)],
) -> Result<()> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    let mut points: Vec<(u64, &Form)> = Vec::with_capacity(checkpoints.len() + 2);
    points.push((0, x));
    for (i, f) in checkpoints {
        let prev = points.last().map_or(0, |p| p.0);
        if *i <= prev || *i >= t {
            return Err(Error::BadReplay(format!(
                "iteration {i} out of order or outside (0, {t})"
            )));
        }
        f.check(d).map_err(|reason| Error::BadForm {
            what: "checkpoint",
            reason,
        })?;
        points.push((*i, f));
    }
    points.push((t, y));
    // The first failing segment in order, so the report is deterministic.
    let failures: Vec<(u64, u64)> = points
        .par_windows(2)
        .filter_map(|w| {
            let ((from, a), (to, b)) = (w[0], w[1]);
            (sq.square_n(a, to - from) != *b).then_some((from, to))
        })
        .collect();
    match failures.first() {
        None => Ok(()),
        Some(&(from, to)) => Err(Error::ReplayMismatch { from, to }),
    }
}

/// [`prove`] on encoded forms: `x` is a 100-byte compressed form; returns the encodings of
/// (y, π), which together are chiavdf's `prove` output.
pub fn prove_encoded(
    sq: &dyn Squarer,
    d: &Discriminant,
    x: &[u8],
    t: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<(Vec<u8>, Vec<u8>)> {
    let x = decode_as("x", d, x)?;
    let (y, proof) = prove(sq, d, &x, t, progress)?;
    Ok((bqfc::encode(d, &y)?, bqfc::encode(d, &proof)?))
}

/// ⌊2^k · (2^(T − k(i+1)) mod B) / B⌋: the k-bit window i of ⌊2^T/B⌋ counted from the top
/// (chiavdf's `GetBlock`): the definition [`blocks`] computes all at once, kept for its test.
/// chiavdf's `GetB(D, x, y)`: the challenge prime for x → y, `HashPrime(bqfc(x) ‖ bqfc(y), 264,
/// {263})` over the 100-byte compressed encodings of the reduced forms.
pub fn get_b(d: &Discriminant, x: &Form, y: &Form) -> Result<BigUint> {
    let mut seed = bqfc::encode(d, x)?;
    seed.extend_from_slice(&bqfc::encode(d, y)?);
    hash_prime(&seed, B_BITS, &[B_BITS - 1])
        .ok_or_else(|| Error::BadDiscriminant("GetB found no prime".into()))
}

#[cfg(test)]
fn get_block(i: u64, k: u64, t: u64, b: &BigUint) -> usize {
    let e = t - k * (i + 1);
    let r = BigUint::from(2u8).modpow(&BigUint::from(e), b);
    ((r << k) / b).to_usize().unwrap_or(0)
}

/// Every k-bit window of ⌊2^T/B⌋ from the top, [`get_block`] for i = 0, 1, … while
/// k·(i + 1) ≤ T, in one pass: 2^(T − k(i+1)) mod B for consecutive i differ by a factor 2^k,
/// so walking i downwards from the last window costs a shift and a reduction per window instead
/// of a modular exponentiation.
fn blocks(k: u64, t: u64, b: &BigUint) -> Vec<usize> {
    let count = t / k;
    let mut out = vec![0usize; usize::try_from(count).unwrap_or(0)];
    if count == 0 {
        return out;
    }
    // r = 2^(T − k·count) mod B for the last window, then ×2^k per step back.
    let mut r = BigUint::from(2u8).modpow(&BigUint::from(t - k * count), b);
    for slot in out.iter_mut().rev() {
        *slot = ((&r << k) / b).to_usize().unwrap_or(0);
        r = (r << k) % b;
    }
    out
}

/// chiavdf's `GenerateWesolowski`: π from the checkpoints x^(2^(i·k·l)). The compositions
/// (about T/k bucket products on all cores, then the combination of the 2^k buckets and small
/// powers) run on the fixed-width NUCOMP/NUDUPL of [`FastComposer`]; its results are the
/// reference's bit for bit, and [`prove_with_replay`] checks π with the reference [`verify`].
fn generate_proof(
    d: &Discriminant,
    x_init: &Form,
    y: &Form,
    intermediates: &[Form],
    t: u64,
    k: u64,
    l: u64,
) -> Result<Form> {
    let b = get_b(d, x_init, y)?;
    let comp = FastComposer::new(d.value())?;
    let mul = |acc: Option<Form>, f: &Form| -> Form {
        match acc {
            None => f.clone(),
            Some(a) => comp.multiply(&a, f),
        }
    };
    let k1 = k / 2;
    let k0 = k - k1;
    let blocks = blocks(k, t, &b);
    let mut x: Option<Form> = None;
    for j in (0..l).rev() {
        if let Some(f) = x.take() {
            x = Some(comp.pow(&f, &(BigUint::from(1u8) << k)));
        }
        // Bucket w holds the product of the checkpoints x^(2^(i·k·l)) whose window i·l + j is w.
        let bucket = |i: usize| {
            let window = (i as u64).saturating_mul(l).saturating_add(j);
            usize::try_from(window)
                .ok()
                .and_then(|w| blocks.get(w))
                .copied()
        };
        let ys = comp.bucket_products(intermediates, 1usize << k, &bucket);
        for b1 in 0..(1u64 << k1) {
            let mut z: Option<Form> = None;
            for b0 in 0..(1u64 << k0) {
                if let Some(f) = &ys[((b1 << k0) | b0) as usize] {
                    z = Some(mul(z, f));
                }
            }
            if let Some(z) = z {
                let e = BigUint::from(b1 << k0);
                if b1 != 0 {
                    x = Some(mul(x, &comp.pow(&z, &e)));
                }
            }
        }
        for b0 in 1..(1u64 << k0) {
            let mut z: Option<Form> = None;
            for b1 in 0..(1u64 << k1) {
                if let Some(f) = &ys[((b1 << k0) | b0) as usize] {
                    z = Some(mul(z, f));
                }
            }
            if let Some(z) = z {
                x = Some(mul(x, &comp.pow(&z, &BigUint::from(b0))));
            }
        }
    }
    Ok(x.unwrap_or_else(|| Form::identity(d)))
}

/// Checks π^B · x^(2^T mod B) = y with B = GetB(D, x, y); x, y and π must be reduced forms of
/// `d`, T ≥ 1.
pub fn verify(d: &Discriminant, x: &Form, y: &Form, proof: &Form, t: u64) -> Result<()> {
    if t == 0 {
        return Err(Error::ZeroIterations);
    }
    for (what, f) in [("x", x), ("y", y), ("proof", proof)] {
        f.check(d)
            .map_err(|reason| Error::BadForm { what, reason })?;
    }
    let b = get_b(d, x, y)?;
    let r = BigUint::from(2u8).modpow(&BigUint::from(t), &b);
    let (dv, root) = (d.value(), d.fourth_root());
    let lhs = form::multiply(
        &form::pow(proof, &b, dv, root),
        &form::pow(x, &r, dv, root),
        dv,
        root,
    );
    if lhs == *y {
        Ok(())
    } else {
        Err(Error::ClassGroupProofMismatch)
    }
}

/// [`verify`] on 100-byte compressed forms (chiavdf's `verify_wesolowski` inputs). Never panics
/// on any bytes.
pub fn verify_encoded(d: &Discriminant, x: &[u8], y: &[u8], proof: &[u8], t: u64) -> Result<()> {
    let x = decode_as("x", d, x)?;
    let y = decode_as("y", d, y)?;
    let proof = decode_as("proof", d, proof)?;
    verify(d, &x, &y, &proof, t)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_get_block_for_every_window() {
        let b = BigUint::from(2u8).pow(263) + BigUint::from(0x2bu8);
        for (k, t) in [(8, 100_003), (10, 77), (1, 40), (13, 12), (3, 3)] {
            let all = blocks(k, t, &b);
            assert_eq!(all.len() as u64, t / k);
            for (i, w) in all.iter().enumerate() {
                assert_eq!(
                    *w,
                    get_block(i as u64, k, t, &b),
                    "k = {k}, T = {t}, i = {i}"
                );
            }
        }
    }
    use proptest::prelude::*;

    #[test]
    fn parameters_follow_chiavdf() {
        assert_eq!(approximate_parameters(1), (1, 1));
        assert_eq!(approximate_parameters(2), (1, 1));
        assert_eq!(approximate_parameters(100_000), (1, 8));
        assert_eq!(approximate_parameters(1 << 24).0, 10);
    }

    #[test]
    fn proofs_match_direct_exponentiation() {
        let d = Discriminant::from_seed(b"weso unit", 512).unwrap();
        let x = Form::generator(&d).unwrap();
        let sq = ReferenceSquarer::new(&d);
        for t in [1u64, 2, 3, 10, 263, 264, 300, 1000, 2049] {
            let (y, proof) = prove(&sq, &d, &x, t, &mut |_| {}).unwrap();
            assert_eq!(y, sq.square_n(&x, t));
            let b = get_b(&d, &x, &y).unwrap();
            let q = (BigUint::from(1u8) << t) / &b;
            assert_eq!(proof, x.pow(&q, &d), "T = {t}");
            verify(&d, &x, &y, &proof, t).unwrap();
            assert_eq!(
                verify(&d, &x, &y, &proof, t + 1),
                Err(Error::ClassGroupProofMismatch)
            );
        }
    }

    #[test]
    fn a_lying_squarer_is_caught() {
        struct Liar(ReferenceSquarer);
        impl Squarer for Liar {
            fn square_n(&self, f: &Form, n: u64) -> Form {
                self.0.square_n(f, n + 1)
            }
        }
        let d = Discriminant::from_seed(b"liar", 512).unwrap();
        let x = Form::generator(&d).unwrap();
        let r = prove(&Liar(ReferenceSquarer::new(&d)), &d, &x, 500, &mut |_| {});
        assert!(matches!(r, Err(Error::SquarerFault(_))), "{r:?}");
    }

    #[test]
    fn progress_is_reported() {
        let d = Discriminant::from_seed(b"progress", 512).unwrap();
        let x = Form::generator(&d).unwrap();
        let mut seen = Vec::new();
        prove(&ReferenceSquarer::new(&d), &d, &x, 1000, &mut |n| {
            seen.push(n)
        })
        .unwrap();
        assert_eq!(seen.first(), Some(&0));
        assert_eq!(seen.last(), Some(&1000));
    }

    #[test]
    fn bad_inputs_are_refused() {
        let d = Discriminant::from_seed(b"bad inputs", 512).unwrap();
        let x = Form::generator(&d).unwrap();
        let sq = ReferenceSquarer::new(&d);
        assert_eq!(
            prove(&sq, &d, &x, 0, &mut |_| {}),
            Err(Error::ZeroIterations)
        );
        let unreduced = Form::new(x.c.clone(), -x.b.clone(), x.a.clone());
        assert!(matches!(
            prove(&sq, &d, &unreduced, 10, &mut |_| {}),
            Err(Error::BadForm { what: "x", .. })
        ));
        let (y, proof) = prove(&sq, &d, &x, 10, &mut |_| {}).unwrap();
        assert!(matches!(
            verify(&d, &x, &unreduced, &proof, 10),
            Err(Error::BadForm { what: "y", .. })
        ));
        let other = Discriminant::from_seed(b"other", 512).unwrap();
        assert!(matches!(
            verify(&other, &x, &y, &proof, 10),
            Err(Error::BadForm { what: "x", .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Any single-byte change of y or π is refused (T ≥ 264, where π is not the identity;
        /// for T < 264 π is the identity, whose encoding chiavdf reads from its first byte
        /// alone).
        #[test]
        fn any_byte_change_is_refused(i in 0usize..200, x in 1u8..=255) {
            let d = Discriminant::from_seed(b"tamper", 512).unwrap();
            let g = bqfc::encode(&d, &Form::generator(&d).unwrap()).unwrap();
            let t = 700;
            let (y, proof) = prove_encoded(&ReferenceSquarer::new(&d), &d, &g, t, &mut |_| {}).unwrap();
            prop_assert!(verify_encoded(&d, &g, &y, &proof, t).is_ok());
            let (mut y2, mut p2) = (y.clone(), proof.clone());
            if i < 100 { y2[i] ^= x } else { p2[i - 100] ^= x }
            prop_assert!(verify_encoded(&d, &g, &y2, &p2, t).is_err());
        }

        #[test]
        fn verify_encoded_never_panics(
            x in proptest::collection::vec(any::<u8>(), 0..120),
            y in proptest::collection::vec(any::<u8>(), 100),
            p in proptest::collection::vec(any::<u8>(), 100),
            t in 0u64..5000,
        ) {
            let d = Discriminant::from_seed(b"fuzz", 1024).unwrap();
            let _ = verify_encoded(&d, &x, &y, &p, t);
            let g = bqfc::encode(&d, &Form::generator(&d).unwrap()).unwrap();
            let _ = verify_encoded(&d, &g, &y, &p, t);
        }
    }
}
