//! Fuzz entry points for the engine's decoders of bytes it does not control: proof encodings
//! (`verify_encoded`), replay checkpoints, modulus names (a proof document or a server names
//! its own modulus), Merkle and anchor proofs, and the class group's discriminant strings and
//! compressed forms. The cargo-fuzz targets in `fuzz/` and the
//! proptest suite (tests/integration/fuzz.rs) call these same functions.
//!
//! Each returns `Err` only when an invariant of the decoder is broken (something that decoded
//! does not re-encode to the same bytes, a fast path that disagrees with the reference); a
//! malformed input is refused by the decoder and is `Ok` here. A panic is the other failure.

use crate::anchor;
use crate::backend::fast::Fast;
use crate::backend::reference::Reference;
use crate::backend::Backend;
use crate::classgroup::{self, bqfc, Discriminant};
use crate::group::Modulus;
use crate::merkle::{self, Hash};
use crate::vdf::{self, Checkpoint};
use std::sync::OnceLock;

/// Most squarings a replay input may ask for: enough to cross several checkpoints, small
/// enough for thousands of inputs a second.
pub const MAX_REPLAY_T: u64 = 4096;

/// Reads a fuzz input front to back. Past the end every read is zero or empty, so any input
/// decodes to some fields.
#[derive(Debug)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// Eight bytes big-endian (fewer at the end are zero-padded).
    pub fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let n = self.data.len().min(8);
        b[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        u64::from_be_bytes(b)
    }

    /// A slice with a u16 big-endian length before it (cut short at the end of the input).
    pub fn bytes(&mut self) -> &'a [u8] {
        let len = usize::from(u16::from_be_bytes([self.u8(), self.u8()]));
        let n = len.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// Writes what [`Input`] reads, for seeds and structure-aware tests.
#[derive(Debug, Default)]
pub struct Output(pub Vec<u8>);

impl Output {
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// At most 65,535 bytes: the rest is dropped, as [`Input::bytes`] could not read it.
    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        let n = v.len().min(usize::from(u16::MAX));
        self.0.extend_from_slice(&(n as u16).to_be_bytes());
        self.0.extend_from_slice(&v[..n]);
        self
    }
}

/// The named modulus a selector byte picks: test512, test1024 or rsa2048.
pub fn named_modulus(selector: u8) -> Result<Modulus, String> {
    let name = match selector % 3 {
        0 => "test512",
        1 => "test1024",
        _ => "rsa2048",
    };
    Modulus::by_name(name).map_err(|e| format!("{name}: {e}"))
}

/// `vdf::verify_encoded` on (modulus selector, T, x, y, ℓ, π) read from `data`.
pub fn verify_encoded(data: &[u8]) -> Result<(), String> {
    let mut r = Input::new(data);
    let m = named_modulus(r.u8())?;
    let t = r.u64();
    let (x, y, l, pi) = (r.bytes(), r.bytes(), r.bytes(), r.bytes());
    verify_fields(&m, t, x, y, l, pi)
}

/// The input [`verify_encoded`] reads as these fields.
pub fn verify_input(selector: u8, t: u64, x: &[u8], y: &[u8], l: &[u8], pi: &[u8]) -> Vec<u8> {
    let mut o = Output::default();
    o.u8(selector).u64(t).bytes(x).bytes(y).bytes(l).bytes(pi);
    o.0
}

/// `vdf::verify_encoded` on these fields. A proof that verifies must be made of canonical
/// encodings: each element decodes and re-encodes to the same bytes.
pub fn verify_fields(
    m: &Modulus,
    t: u64,
    x: &[u8],
    y: &[u8],
    l: &[u8],
    pi: &[u8],
) -> Result<(), String> {
    if vdf::verify_encoded(m, x, y, t, l, pi).is_err() {
        return Ok(());
    }
    for (what, bytes) in [("x", x), ("y", y), ("pi", pi)] {
        let e = m
            .decode(what, bytes)
            .map_err(|e| format!("{what} verified but does not decode: {e}"))?;
        if m.encode(&e) != bytes {
            return Err(format!(
                "{what} verified but does not re-encode to its bytes"
            ));
        }
    }
    if t == 0 || l.len() != vdf::CHALLENGE_BYTES {
        return Err(format!("verified with T = {t} and a {}-byte l", l.len()));
    }
    Ok(())
}

/// `vdf::verify_replay` on a replay list read from `data` (T at most [`MAX_REPLAY_T`]), each
/// value decoded as `vrs vdf verify --replay` decodes it.
pub fn replay(data: &[u8]) -> Result<(), String> {
    let mut r = Input::new(data);
    let m = named_modulus(r.u8() % 2)?; // the two test moduli: replay costs T squarings
    let t = r.u64() % (MAX_REPLAY_T + 1);
    let (x, y) = (r.bytes(), r.bytes());
    let count = usize::from(r.u8() % 16);
    let mut points = Vec::with_capacity(count);
    for _ in 0..count {
        let iteration = r.u64();
        points.push((iteration, r.bytes()));
    }
    replay_fields(&m, t, x, y, &points)
}

/// The input [`replay`] reads (modulus selector 0 or 1, T below [`MAX_REPLAY_T`]).
pub fn replay_input(
    selector: u8,
    t: u64,
    x: &[u8],
    y: &[u8],
    points: &[(u64, Vec<u8>)],
) -> Vec<u8> {
    let mut o = Output::default();
    o.u8(selector).u64(t).bytes(x).bytes(y);
    o.u8(points.len() as u8);
    for (i, v) in points {
        o.u64(*i).bytes(v);
    }
    o.0
}

fn replay_fields(
    m: &Modulus,
    t: u64,
    x: &[u8],
    y: &[u8],
    points: &[(u64, &[u8])],
) -> Result<(), String> {
    let (Ok(x), Ok(y)) = (m.decode_input(x), m.decode("y", y)) else {
        return Ok(());
    };
    let mut checkpoints = Vec::with_capacity(points.len());
    for (iteration, value) in points {
        match m.decode("replay value", value) {
            Ok(value) => checkpoints.push(Checkpoint {
                iteration: *iteration,
                value,
            }),
            Err(_) => return Ok(()),
        }
    }
    let verdict = vdf::verify_replay(m, &x, &y, t, &checkpoints);
    // A replay that passes recomputes y from x alone: the reference backend agrees.
    if verdict.is_ok() && t <= MAX_REPLAY_T {
        let reference = Reference::prepare(m).map_err(|e| e.to_string())?;
        let mut v = reference.load(x.value());
        reference.square_n(&mut v, t);
        if &m.canonical(&reference.value(&v)) != y.value() {
            return Err(format!("replay passed but x^(2^{t}) is not y"));
        }
    }
    Ok(())
}

/// A modulus name as a proof document or a server gives it (`rsa2048`, `test512`,
/// `hex:<digits>`…). A modulus that is accepted must work: canonical elements round-trip, and
/// the `fast` backend squares as the reference does.
pub fn modulus_name(data: &[u8]) -> Result<(), String> {
    let Ok(name) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(m) = Modulus::by_name(name) else {
        return Ok(());
    };
    if !(crate::group::MIN_MODULUS_BITS..=crate::group::MAX_MODULUS_BITS).contains(&m.bits())
        || !m.n().bit(0)
    {
        return Err(format!("{name:?} accepted with {} bits or even", m.bits()));
    }
    let x = m.hash_to_group(&[7; 32]);
    let encoded = m.encode(&x);
    if m.decode_input(&encoded).as_ref() != Ok(&x) {
        return Err(format!(
            "{name:?}: hash_to_group's element does not round-trip"
        ));
    }
    let _ = crate::epoch::genesis_output(&m);
    let fast = Fast::prepare(&m).map_err(|e| format!("{name:?}: fast refuses it: {e}"))?;
    let reference = Reference::prepare(&m).map_err(|e| format!("{name:?}: {e}"))?;
    let (mut a, mut b) = (fast.load(x.value()), reference.load(x.value()));
    fast.square_n(&mut a, 5);
    reference.square_n(&mut b, 5);
    if fast.value(&a) != reference.value(&b) {
        return Err(format!("{name:?}: fast and reference disagree on x^(2^5)"));
    }
    // A proof of anything under it is refused, never a panic.
    let len = m.byte_len();
    let _ = vdf::verify_encoded(&m, &encoded, &encoded, 5, &[0xff; 32], &vec![1; len]);
    Ok(())
}

/// Merkle audit paths and anchor calldata as a server or a chain hands them out:
/// `root_from_path` on arbitrary (leaf, index, size, path); a real tree's paths verify and a
/// changed path does not; calldata parses back to what `calldata` writes.
pub fn merkle_path(data: &[u8]) -> Result<(), String> {
    let mut r = Input::new(data);
    let leaf = hash_of(r.bytes());
    let (index, size) = (r.u64(), r.u64());
    let count = usize::from(r.u8() % 70);
    let path: Vec<Hash> = (0..count).map(|_| hash_of(r.bytes())).collect();
    if let Some(root) = merkle::root_from_path(&leaf, index, size, &path) {
        if !merkle::verify_inclusion(&leaf, index, size, &path, &root) {
            return Err("root_from_path's root does not verify".into());
        }
    }

    // A real tree of 1 to 64 leaves.
    let n = usize::from(r.u8() % 64) + 1;
    let at = usize::from(r.u8()) % n;
    let leaves: Vec<Hash> = (0..n)
        .map(|i| merkle::leaf_hash(&[leaf.as_slice(), &i.to_be_bytes()].concat()))
        .collect();
    let root = merkle::root(&leaves);
    let proof = merkle::audit_path(&leaves, at).ok_or("no path for a leaf of the tree")?;
    let (i, size) = (at as u64, n as u64);
    if !merkle::verify_inclusion(&leaves[at], i, size, &proof, &root) {
        return Err(format!("the path of leaf {at} of {n} does not verify"));
    }
    if let Some(k) = (!proof.is_empty()).then(|| usize::from(r.u8()) % proof.len()) {
        let mut bad = proof.clone();
        bad[k][0] ^= 1;
        if merkle::verify_inclusion(&leaves[at], i, size, &bad, &root) {
            return Err(format!("a changed path of leaf {at} of {n} verifies"));
        }
    }

    let calldata = r.rest();
    if let Some(parsed) = anchor::Calldata::parse(calldata) {
        if parsed.bytes() != calldata {
            return Err("calldata does not round-trip".into());
        }
    }
    Ok(())
}

/// Up to 32 bytes as a hash, zero-padded.
fn hash_of(bytes: &[u8]) -> Hash {
    let mut h = [0u8; 32];
    let n = bytes.len().min(32);
    h[..n].copy_from_slice(&bytes[..n]);
    h
}

/// The class-group decoders as `vrs vdf verify` meets a document: a discriminant string
/// (chiavdf's "-0x…", the input's tail), then `classgroup::verify_encoded` on (T, x, y, proof)
/// for that discriminant (selector 2, when it parses) or a fixed 512- or 1024-bit one. Every
/// form that decodes must encode again, to bytes that decode to the same form.
pub fn classgroup_verify(data: &[u8]) -> Result<(), String> {
    let mut input = Input::new(data);
    let selector = input.u8() % 3;
    let t = input.u64();
    let (x, y, proof) = (input.bytes(), input.bytes(), input.bytes());
    let text = String::from_utf8_lossy(input.rest());
    let d = match (selector, Discriminant::from_hex(&text)) {
        (2, Ok(d)) => d,
        (s, _) => fixed_discriminant(s)?.clone(),
    };
    for (what, bytes) in [("x", x), ("y", y), ("proof", proof)] {
        if let Ok(f) = bqfc::decode(&d, bytes) {
            let again = bqfc::encode(&d, &f)
                .map_err(|e| format!("decoded {what} does not encode again: {e}"))?;
            match bqfc::decode(&d, &again) {
                Ok(back) if back == f => {}
                _ => return Err(format!("decoded {what} re-encodes to another form")),
            }
        }
    }
    let _ = classgroup::verify_encoded(&d, x, y, proof, t);
    Ok(())
}

/// create_discriminant(b"vrs-fuzz", 512) (selector 0) or 1024 bits (otherwise), made once.
fn fixed_discriminant(selector: u8) -> Result<&'static Discriminant, String> {
    static FIXED: OnceLock<Result<[Discriminant; 2], String>> = OnceLock::new();
    let fixed = FIXED.get_or_init(|| {
        let make = |bits| Discriminant::from_seed(b"vrs-fuzz", bits).map_err(|e| e.to_string());
        Ok([make(512)?, make(1024)?])
    });
    let fixed = fixed.as_ref().map_err(Clone::clone)?;
    Ok(&fixed[usize::from(selector != 0)])
}

/// Every engine target, by the name of its cargo-fuzz target.
pub const TARGETS: &[&str] = &[
    "vdf_verify_encoded",
    "vdf_replay",
    "modulus_name",
    "merkle_path",
    "classgroup_verify",
];

/// Runs the engine target `target` on `data`.
pub fn run(target: &str, data: &[u8]) -> Result<(), String> {
    match target {
        "vdf_verify_encoded" => verify_encoded(data),
        "vdf_replay" => replay(data),
        "modulus_name" => modulus_name(data),
        "merkle_path" => merkle_path(data),
        "classgroup_verify" => classgroup_verify(data),
        other => Err(format!("no fuzz target {other}")),
    }
}

/// A valid proof, every field encoded as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidProof {
    pub x: Vec<u8>,
    pub y: Vec<u8>,
    /// ℓ in 32 bytes.
    pub l: Vec<u8>,
    pub pi: Vec<u8>,
    /// (iteration, value) of each replay checkpoint.
    pub replay: Vec<(u64, Vec<u8>)>,
}

/// A valid proof on the named modulus `selector` picks, with replay checkpoints every
/// `replay_every` squarings.
pub fn valid_proof(selector: u8, t: u64, replay_every: Option<u64>) -> Result<ValidProof, String> {
    let m = named_modulus(selector)?;
    let x = m.hash_to_group(&[selector; 32]);
    let fast = Fast::prepare(&m).map_err(|e| e.to_string())?;
    let opts = vdf::EvalOptions {
        replay_every,
        ..vdf::EvalOptions::default()
    };
    let out = vdf::evaluate(&fast, &m, &x, t, &opts, &mut |_| {})
        .map_err(|e| e.to_string())?
        .prove();
    let mut l = out.proof.l.to_bytes_be();
    while l.len() < vdf::CHALLENGE_BYTES {
        l.insert(0, 0);
    }
    let replay = out
        .replay
        .iter()
        .map(|c| (c.iteration, m.encode(&c.value)))
        .collect();
    Ok(ValidProof {
        x: m.encode(&out.x),
        y: m.encode(&out.y),
        l,
        pi: m.encode(&out.proof.pi),
        replay,
    })
}

/// A seed of an engine target: (target, name, bytes).
pub type Seed = (&'static str, String, Vec<u8>);

/// Valid inputs of every engine target: (target, name, bytes).
pub fn seeds() -> Result<Vec<Seed>, String> {
    let mut out = Vec::new();
    for (selector, t) in [(0u8, 100u64), (1, 50), (2, 20)] {
        let p = valid_proof(selector, t, None)?;
        out.push((
            "vdf_verify_encoded",
            format!("modulus-{selector}"),
            verify_input(selector, t, &p.x, &p.y, &p.l, &p.pi),
        ));
    }
    let p = valid_proof(0, 300, Some(64))?;
    out.push((
        "vdf_replay",
        "test512".into(),
        replay_input(0, 300, &p.x, &p.y, &p.replay),
    ));
    let rsa = format!("hex:{}", hex::encode(Modulus::rsa2048().to_be_bytes()));
    let small = format!("hex:00{}", crate::group::TEST512_HEX);
    for (name, text) in [
        ("rsa2048", "rsa2048"),
        ("test512", "test512"),
        ("test1024", "test1024"),
        ("hex-rsa2048", rsa.as_str()),
        ("hex-test512", small.as_str()),
        ("hex-64-bit", "hex:8000000000000001"),
    ] {
        out.push(("modulus_name", name.into(), text.as_bytes().to_vec()));
    }
    let mut merkle = Output::default();
    merkle.bytes(&[1; 32]).u64(2).u64(5).u8(3);
    for h in [[2u8; 32], [3; 32], [4; 32]] {
        merkle.bytes(&h);
    }
    merkle.u8(10).u8(3);
    let mut merkle_v2 = merkle.0.clone();
    merkle.0.extend_from_slice(&anchor::calldata(&[5; 32]));
    out.push(("merkle_path", "path".into(), merkle.0));
    let v2 = anchor::Calldata::V2 {
        batch: 7,
        log: anchor::LogBinding {
            size: 300,
            root: [6; 32],
        },
        root: [5; 32],
    };
    merkle_v2.extend_from_slice(&v2.bytes());
    out.push(("merkle_path", "path-v2".into(), merkle_v2));
    out.push((
        "classgroup_verify",
        "valid-512".into(),
        classgroup_seed(500)?,
    ));
    Ok(out)
}

/// A [`classgroup_verify`] input holding a valid proof for T on the fixed 512-bit
/// discriminant (selector 0): x the generator.
pub fn classgroup_seed(t: u64) -> Result<Vec<u8>, String> {
    let d = fixed_discriminant(0)?;
    let x = classgroup::Form::generator(d).ok_or("the fixed discriminant has no generator")?;
    let sq = classgroup::FastFormSquarer::new(d).map_err(|e| e.to_string())?;
    let (y, proof) = classgroup::prove(&sq, d, &x, t, &mut |_| {}).map_err(|e| e.to_string())?;
    let mut o = Output::default();
    o.u8(0).u64(t);
    for f in [&x, &y, &proof] {
        o.bytes(&bqfc::encode(d, f).map_err(|e| e.to_string())?);
    }
    Ok(o.0)
}
