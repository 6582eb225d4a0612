//! The engine's decoders of untrusted bytes under proptest, through `vrs_engine::fuzz` (the
//! entry points the cargo-fuzz targets in fuzz/ call): arbitrary bytes, and valid proofs,
//! replay lists and moduli with bytes flipped, cut short or extended. No input may panic or
//! break an invariant (what verifies re-encodes to itself; fast squares as the reference).

use proptest::prelude::*;
use vrs_engine::fuzz::{self, verify_input, Input, Output, ValidProof};

fn ok(r: Result<(), String>) -> Result<(), TestCaseError> {
    r.map_err(TestCaseError::fail)
}

/// One edit of a byte string: a byte changed, a range cut out, or bytes inserted.
fn edit(mut d: Vec<u8>, (at, b, kind, n): (usize, u8, u8, usize)) -> Vec<u8> {
    let at = if d.is_empty() { 0 } else { at % d.len() };
    match kind % 3 {
        0 if !d.is_empty() => d[at] ^= b | 1,
        1 => {
            let end = (at + n).min(d.len());
            d.drain(at..end);
        }
        _ => {
            for _ in 0..n {
                d.insert(at, b);
            }
        }
    }
    d
}

fn edits() -> impl Strategy<Value = Vec<(usize, u8, u8, usize)>> {
    prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>(), 0usize..40), 1..4)
}

/// The committed class-group seed: selector 2, T, x, y, proof (a 1024-bit proof by
/// `vrs vdf prove --group classgroup-1024`), then its discriminant string.
fn classgroup_seed() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/corpus/classgroup_verify/seed-valid-1024-T100000"
    );
    std::fs::read(path).expect("the committed classgroup_verify seed")
}

#[test]
fn the_classgroup_seed_is_a_valid_proof() {
    use vrs_engine::classgroup::{verify_encoded, Discriminant};
    let seed = classgroup_seed();
    let mut input = Input::new(&seed);
    assert_eq!(input.u8(), 2);
    let t = input.u64();
    let (x, y, proof) = (input.bytes(), input.bytes(), input.bytes());
    let d = Discriminant::from_hex(&String::from_utf8_lossy(input.rest()))
        .expect("the seed's discriminant parses");
    verify_encoded(&d, x, y, proof, t).expect("the seed's proof verifies");
    fuzz::classgroup_verify(&seed).expect("the seed passes the target");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The valid class-group seeds (the committed 1024-bit one with its discriminant string,
    /// a generated 512-bit one) with bytes changed, cut or inserted: refused or accepted, never
    /// a panic, and what decodes re-encodes to itself.
    #[test]
    fn edited_classgroup_documents_never_panic(e in edits(), which: bool) {
        let seed = if which {
            classgroup_seed()
        } else {
            fuzz::classgroup_seed(500).map_err(TestCaseError::fail)?
        };
        let data = e.into_iter().fold(seed, edit);
        ok(fuzz::classgroup_verify(&data))?;
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        target in 0..fuzz::TARGETS.len(),
        data in prop::collection::vec(any::<u8>(), 0..700),
    ) {
        ok(fuzz::run(fuzz::TARGETS[target], &data))?;
    }

    /// A valid proof with one of its fields (or T) edited is refused, never a panic.
    #[test]
    fn edited_proofs_are_refused(
        selector in 0u8..3,
        field in 0usize..5,
        e in edits(),
        t_delta in any::<i8>(),
    ) {
        let t = [100u64, 50, 20][usize::from(selector)];
        let p = proof(selector, t);
        let mut fields = [p.x, p.y, p.l, p.pi];
        let mut t2 = t;
        if field == 4 {
            t2 = t.saturating_add_signed(i64::from(t_delta));
        } else {
            for one in e {
                fields[field] = edit(fields[field].clone(), one);
            }
        }
        let [x2, y2, l2, pi2] = &fields;
        ok(fuzz::verify_encoded(&verify_input(selector, t2, x2, y2, l2, pi2)))?;
        let m = fuzz::named_modulus(selector).map_err(TestCaseError::fail)?;
        let verdict = vrs_engine::vdf::verify_encoded(&m, x2, y2, t2, l2, pi2);
        prop_assert_eq!(verdict.is_ok(), fields == proof_fields(selector, t) && t2 == t);
    }

    /// A valid replay list with a checkpoint edited, moved or dropped.
    #[test]
    fn edited_replays_never_panic(
        which in any::<usize>(),
        e in edits(),
        shift in any::<i16>(),
        drop_one in any::<bool>(),
    ) {
        let p = fuzz::valid_proof(0, 300, Some(64)).map_err(TestCaseError::fail)?;
        let (x, y, mut points) = (p.x, p.y, p.replay);
        let i = which % points.len();
        if drop_one {
            points.remove(i);
        } else {
            points[i].0 = points[i].0.saturating_add_signed(i64::from(shift));
            for one in e {
                points[i].1 = edit(points[i].1.clone(), one);
            }
        }
        ok(fuzz::replay(&fuzz::replay_input(0, 300, &x, &y, &points)))?;
    }

    /// Modulus names: hex of any length and digits, and the named ones edited.
    #[test]
    fn modulus_names_never_panic(
        digits in "[0-9a-fA-F_+ -]{0,140}",
        name in "(rsa2048|test512|test1024|hex:)[a-z0-9:]{0,6}",
    ) {
        ok(fuzz::modulus_name(format!("hex:{digits}").as_bytes()))?;
        ok(fuzz::modulus_name(name.as_bytes()))?;
    }

    /// Odd moduli of every size from 64 to 2048 bits: fast agrees with the reference.
    #[test]
    fn odd_moduli_of_any_size_work(bits in 64usize..=2048, fill in any::<u8>()) {
        let mut digits = vec![b'f'; bits.div_ceil(4)];
        let top = match bits % 4 { 1 => b'1', 2 => b'3', 3 => b'7', _ => b'f' };
        digits[0] = top;
        let mid = digits.len() / 2;
        digits[mid] = b"0123456789abcdef"[usize::from(fill % 16)];
        let name = format!("hex:{}", String::from_utf8(digits).expect("ASCII"));
        ok(fuzz::modulus_name(name.as_bytes()))?;
    }

    /// Merkle paths: random trees and paths, and the seed's fields edited.
    #[test]
    fn merkle_paths_never_panic(
        index in any::<u64>(),
        size in any::<u64>(),
        n in 0u8..70,
        shape in any::<[u8; 3]>(),
        calldata in prop::collection::vec(any::<u8>(), 0..60),
    ) {
        let mut o = Output::default();
        o.bytes(&[9; 32]).u64(index % 300).u64(size % 300).u8(n);
        for i in 0..n {
            o.bytes(&[i; 32]);
        }
        o.u8(shape[0]).u8(shape[1]).u8(shape[2]);
        o.0.extend_from_slice(&calldata);
        ok(fuzz::merkle_path(&o.0))?;
    }
}

/// The valid proof of each named modulus, computed once.
fn proof(selector: u8, t: u64) -> ValidProof {
    static PROOFS: std::sync::Mutex<Vec<((u8, u64), ValidProof)>> =
        std::sync::Mutex::new(Vec::new());
    let mut cache = PROOFS.lock().expect("not poisoned");
    if let Some((_, p)) = cache.iter().find(|(k, _)| *k == (selector, t)) {
        return p.clone();
    }
    let p = fuzz::valid_proof(selector, t, None).expect("a valid proof");
    cache.push(((selector, t), p.clone()));
    p
}

fn proof_fields(selector: u8, t: u64) -> [Vec<u8>; 4] {
    let p = proof(selector, t);
    [p.x, p.y, p.l, p.pi]
}

#[test]
fn seeds_are_valid() {
    for (target, name, data) in fuzz::seeds().expect("seeds") {
        fuzz::run(target, &data).unwrap_or_else(|e| panic!("{target} {name}: {e}"));
    }
    let p = proof(0, 100);
    let m = fuzz::named_modulus(0).expect("test512");
    vrs_engine::vdf::verify_encoded(&m, &p.x, &p.y, 100, &p.l, &p.pi).expect("verifies");
    // What Output writes, Input reads back.
    let mut o = Output::default();
    o.u8(3).u64(u64::MAX).bytes(b"abc");
    let mut i = Input::new(&o.0);
    assert_eq!((i.u8(), i.u64(), i.bytes()), (3, u64::MAX, &b"abc"[..]));
}
