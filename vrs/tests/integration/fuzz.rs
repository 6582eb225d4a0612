//! Every decoder of bytes the service or the CLI does not control, under proptest: arbitrary
//! bytes and structure-aware mutations of valid inputs (fields replaced by extreme or
//! wrong-typed values, hex flipped, truncated or extended, base64 noise, re-signed x402
//! payloads) into the entry points of `vrs_testkit::fuzz`, which the cargo-fuzz targets in fuzz/ call
//! too. No input may panic; an HTTP answer is never a 5xx, and a 4xx is JSON with an `error`.
//! The crashes fuzzing found are the regression cases at the end.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Value};
use vrs_testkit::fuzz::{self, Harness};
use vrs_testkit::seeds::{seeds, Seed};

/// Cases per property: enough to cover every mutation kind, bounded so that the whole file
/// runs in well under a minute on two cores.
const CASES: u32 = 256;

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        source_file: Some(file!()),
        ..Config::default()
    })
}

/// Runs `target` on inputs from `strategy`; a panic or a broken invariant fails the test with
/// the shrunk input.
fn check<S: Strategy<Value = Vec<u8>>>(target: &str, h: Option<&Harness>, cases: u32, strategy: S) {
    let result = runner(cases).run(&strategy, |data| {
        fuzz::run(target, h, &data).map_err(|e| TestCaseError::fail(format!("{target}: {e}")))
    });
    if let Err(e) = result {
        panic!("{target}: {e}");
    }
}

// ---------------------------------------------------------------------------------------
// Mutations.

/// Replacement values, as raw JSON text: extremes of every type, numbers JSON can write but
/// an f64 or u64 cannot hold, strings PostgreSQL cannot hold, nesting past serde's limit.
fn extremes() -> Vec<String> {
    let mut v: Vec<String> = [
        "null",
        "true",
        "false",
        "0",
        "-0",
        "-1",
        "1",
        "7",
        "1.005",
        "0.001",
        "1e2",
        "1E-2",
        "1e400",
        "-1e400",
        "1e-400",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "9007199254740993",
        "123456789012345678901234567890",
        "0.1",
        "2.5",
        "10000.01",
        "4.5e-324",
        "\"\"",
        "\"x\"",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"é✓😀\"",
        "\"0x\"",
        "\"0X\"",
        "\"now+300\"",
        "\"now-99999999999\"",
        "\"-1\"",
        "\"1e3\"",
        "\"0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\"",
        "[]",
        "[1,2]",
        "[2,5,5]",
        "[\"2\",5]",
        "[-1,7]",
        "[[1]]",
        "{}",
        "{\"a\":1}",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.push(format!("\"{}\"", "a".repeat(5000)));
    v.push(format!("\"{}\"", "ab".repeat(32)));
    v.push(format!("{}1{}", "[".repeat(140), "]".repeat(140)));
    v.push(format!("{}1{}", "{\"d\":".repeat(12), "}".repeat(12)));
    v
}

/// One edit of a JSON document.
#[derive(Clone, Debug)]
enum Edit {
    /// The value at the path (the n-th of all paths) replaced by the n-th extreme.
    Replace(usize, usize),
    /// The member or element at the path removed.
    Remove(usize),
    /// An unknown member added to the object at the path.
    Add(usize, usize),
    /// A hex string at the path: one digit changed, cut short, or lengthened.
    Hex(usize, usize, u8),
    /// The first member of the document repeated (serde keeps the last, the bet parser
    /// refuses duplicates).
    Duplicate,
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        4 => (any::<usize>(), any::<usize>()).prop_map(|(p, x)| Edit::Replace(p, x)),
        1 => any::<usize>().prop_map(Edit::Remove),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(p, x)| Edit::Add(p, x)),
        3 => (any::<usize>(), any::<usize>(), any::<u8>()).prop_map(|(p, i, k)| Edit::Hex(p, i, k)),
        1 => Just(Edit::Duplicate),
    ];
    prop::collection::vec(edit, 1..4)
}

/// Every path in `v`: object members and array elements, depth first.
fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(k.clone());
                out.push(at.clone());
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(i.to_string());
                out.push(at.clone());
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn pointer(path: &[String]) -> String {
    path.iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// Applies `edits` to `doc`; raw replacement texts are spliced in after serialising.
fn mutate(doc: &Value, edits: &[Edit]) -> String {
    let extremes = extremes();
    let mut v = doc.clone();
    let mut raws = Vec::new();
    let mut duplicate = false;
    for e in edits {
        let mut all = Vec::new();
        paths(&v, &mut Vec::new(), &mut all);
        let pick = |n: usize| all.get(n % all.len().max(1)).cloned();
        match *e {
            Edit::Replace(p, x) => {
                if let Some(slot) = pick(p).and_then(|p| v.pointer_mut(&pointer(&p))) {
                    *slot = json!(format!("@@RAW{}@@", raws.len()));
                    raws.push(extremes[x % extremes.len()].clone());
                }
            }
            Edit::Remove(p) => {
                if let Some(path) = pick(p) {
                    let (parent, last) = path.split_at(path.len() - 1);
                    match v.pointer_mut(&pointer(parent)) {
                        Some(Value::Object(m)) => {
                            m.remove(&last[0]);
                        }
                        Some(Value::Array(a)) => {
                            if let Ok(i) = last[0].parse::<usize>() {
                                if i < a.len() {
                                    a.remove(i);
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
            Edit::Add(p, x) => {
                let target = pick(p).map(|p| pointer(&p)).unwrap_or_default();
                if let Some(Value::Object(m)) = v.pointer_mut(&target) {
                    m.insert(
                        "unknown_field".into(),
                        json!(format!("@@RAW{}@@", raws.len())),
                    );
                    raws.push(extremes[x % extremes.len()].clone());
                }
            }
            Edit::Hex(p, i, k) => {
                if let Some(slot) = pick(p).and_then(|p| v.pointer_mut(&pointer(&p))) {
                    if let Some(s) = slot.as_str() {
                        *slot = json!(hex_edit(s, i, k));
                    }
                }
            }
            Edit::Duplicate => duplicate = true,
        }
    }
    let mut text = v.to_string();
    for (i, raw) in raws.iter().enumerate() {
        text = text.replacen(&format!("\"@@RAW{i}@@\""), raw, 1);
    }
    if duplicate {
        if let Some((k, val)) = doc.as_object().and_then(|m| m.iter().next()) {
            if text.starts_with('{') && text.len() > 2 {
                text.insert_str(1, &format!("{}:{val},", json!(k)));
            }
        }
    }
    text
}

/// One digit changed (k < 128), the string cut at i (k < 192), or two digits added.
fn hex_edit(s: &str, i: usize, k: u8) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return "00".into();
    }
    let i = i % chars.len();
    match k {
        0..128 => {
            let mut c = chars.clone();
            c[i] = match c[i] {
                '0' => '1',
                'f' | 'F' => 'e',
                'x' => 'g',
                _ => '0',
            };
            c.into_iter().collect()
        }
        128..192 => chars[..i].iter().collect(),
        _ => format!("{s}{:02x}", k),
    }
}

/// Byte-level edits of valid text: a byte changed, a range cut out, bytes inserted.
fn byte_edits(data: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let edit = (any::<usize>(), any::<u8>(), 0u8..3, 0usize..64);
    prop::collection::vec(edit, 1..5).prop_map(move |edits| {
        let mut d = data.clone();
        for (at, b, kind, n) in edits {
            let at = if d.is_empty() { 0 } else { at % d.len() };
            match kind {
                0 if !d.is_empty() => d[at] = b,
                1 => {
                    let end = (at + n).min(d.len());
                    d.drain(at..end);
                }
                _ => {
                    for _ in 0..n.min(8) {
                        d.insert(at, b);
                    }
                }
            }
        }
        d
    })
}

/// Seeds of `target` with JSON edits after their flag byte (when `flagged`), or on the
/// whole input.
fn json_mutations(seeds: &[Seed], target: &str, flagged: bool) -> BoxedStrategy<Vec<u8>> {
    let docs: Vec<(Vec<u8>, Value)> = seeds
        .iter()
        .filter(|s| s.target == target)
        .filter_map(|s| {
            let (head, body) = if flagged {
                s.data.split_at(1)
            } else {
                (&[][..], &s.data[..])
            };
            serde_json::from_slice(body)
                .ok()
                .map(|v: Value| (head.to_vec(), v))
        })
        .collect();
    assert!(!docs.is_empty(), "no JSON seeds for {target}");
    (0..docs.len(), edits())
        .prop_map(move |(i, e)| {
            let (head, doc) = &docs[i];
            let mut out = head.clone();
            out.extend_from_slice(mutate(doc, &e).as_bytes());
            out
        })
        .boxed()
}

/// Seeds of `target` with byte-level edits.
fn byte_mutations(seeds: &[Seed], target: &str) -> BoxedStrategy<Vec<u8>> {
    let data: Vec<Vec<u8>> = seeds
        .iter()
        .filter(|s| s.target == target)
        .map(|s| s.data.clone())
        .collect();
    assert!(!data.is_empty(), "no seeds for {target}");
    (0..data.len())
        .prop_flat_map(move |i| byte_edits(data[i].clone()))
        .boxed()
}

fn arbitrary_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..512)
}

// ---------------------------------------------------------------------------------------
// The service in process: the router's decoders, and the CLI's on answers it produced.

#[test]
fn no_request_or_server_answer_breaks_a_decoder() {
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::open(dir.path()).unwrap();
    let seeds = seeds(&h).unwrap();

    // Every seed is a valid input; the CLI's pass every step.
    for s in &seeds {
        let h = fuzz::needs_harness(s.target).then_some(&h);
        fuzz::run(s.target, h, &s.data).unwrap_or_else(|e| panic!("seed {}: {e}", s.name));
        let failed = match s.target {
            "verify_response" => fuzz::verify_steps(&s.data).unwrap(),
            "audit_epochs" => fuzz::audit_failures(&s.data).unwrap(),
            _ => continue,
        };
        assert_eq!(failed, Some(vec![]), "seed {} does not verify", s.name);
    }
    for target in fuzz::TARGETS {
        assert!(
            seeds.iter().any(|s| s.target == *target),
            "no seed for {target}"
        );
    }

    let hh = Some(&h);
    for target in fuzz::TARGETS {
        let hh = if fuzz::needs_harness(target) {
            hh
        } else {
            None
        };
        check(target, hh, CASES / 2, arbitrary_bytes());
        check(target, hh, CASES / 2, byte_mutations(&seeds, target));
    }
    for target in [
        "bet_body",
        "notarize_body",
        "x402_notarize",
        "x402_payload",
        "notary_metadata",
    ] {
        let hh = if fuzz::needs_harness(target) {
            hh
        } else {
            None
        };
        check(target, hh, CASES, json_mutations(&seeds, target, true));
    }
    for target in ["rng_body", "proof_doc", "verify_response", "audit_epochs"] {
        let hh = fuzz::needs_harness(target).then_some(&h);
        check(target, hh, CASES, json_mutations(&seeds, target, false));
    }

    // Path parameters: any bytes, and ids one character off.
    check(
        "path_param",
        hh,
        CASES / 2,
        prop::string::string_regex("[0-9a-fA-F]{0,40}|[^/]{0,8}")
            .unwrap()
            .prop_map(String::into_bytes),
    );
    drop(h);
}

// ---------------------------------------------------------------------------------------
// x402 payments, decoded as the notary decodes them.

/// A v2 or v1 payment for the harness's requirements, every authorization field drawn from
/// valid and extreme values, signed by the payer key (so the signature check passes and the
/// requirements are checked), then base64 noise on the header.
#[test]
fn x402_payments_with_any_fields_are_refused_cleanly() {
    let times = prop_oneof![
        Just(json!("now-600")),
        Just(json!("now+300")),
        Just(json!("now+99999")),
        any::<u64>().prop_map(|t| json!(t.to_string())),
        any::<u64>().prop_map(|t| json!(format!("0x{t:x}"))),
        any::<u64>().prop_map(|t| json!(t)),
        Just(json!(format!("0x{}", "f".repeat(64)))),
        Just(json!(
            "115792089237316195423570985008687907853269984665640564039457584007913129639936"
        )),
        Just(json!(-1)),
        Just(json!(1.5)),
    ];
    let addresses = prop_oneof![
        Just(json!("0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1")),
        Just(json!("0x90f8bf6a479f320ead074411a4b0e7944ea8c9c1")),
        Just(json!("0x0000000000000000000000000000000000000000")),
        "[0-9a-fA-Fx]{0,44}".prop_map(|s| json!(s)),
    ];
    let strategy = (
        any::<bool>(),
        any::<bool>(),
        times.clone(),
        times.clone(),
        times,
        addresses,
        "(0x)?[0-9a-f]{0,66}",
        prop::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    )
        .prop_map(|(v1, sign, value, after, before, to, nonce, noise)| {
            let exact = json!({
                "signature": "0x",
                "authorization": {
                    "from": "0x0000000000000000000000000000000000000001",
                    "to": to, "value": value, "validAfter": after, "validBefore": before,
                    "nonce": nonce,
                },
            });
            let payload = if v1 {
                json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": exact})
            } else {
                let accepted = fuzz::x402_config().requirements_v2();
                json!({"x402Version": 2, "accepted": accepted, "payload": exact})
            };
            let flags = u8::from(v1) | if sign { 2 } else { 0 };
            (flags, payload.to_string(), noise)
        });
    let result = runner(CASES * 2).run(&strategy, |(flags, payload, noise)| {
        let mut data = vec![flags];
        data.extend_from_slice(payload.as_bytes());
        fuzz::x402_payload(&data).map_err(TestCaseError::fail)?;
        // The same payment as a header with base64 noise.
        use base64::Engine;
        let mut header = base64::engine::general_purpose::STANDARD
            .encode(payload)
            .into_bytes();
        for (at, b) in noise {
            let at = at % header.len().max(1);
            if at < header.len() {
                header[at] = b;
            }
        }
        let mut data = vec![flags];
        data.extend_from_slice(&header);
        fuzz::x402_header(&data).map_err(TestCaseError::fail)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

// ---------------------------------------------------------------------------------------
// Regression cases: inputs that fuzzing found to crash a decoder, each fixed in the service.

/// `vrs audit` subtracted 1 from the epoch number the server answered with: an answer naming
/// epoch 0 panicked (overflow) instead of failing the audit. Fixed: an answer for another
/// epoch than the one asked for is an error.
#[test]
fn regression_audit_answer_naming_epoch_0() {
    let epoch = json!({
        "epoch": 0, "modulus": "test512", "iterations": 1, "previous_output": "00",
        "bets_root": "00".repeat(32), "bet_count": 0, "leaf_hashes": [], "x": "00", "y": "00",
        "pi": "00", "l": "00",
    });
    let input = json!({"from": 1, "to": 1, "answers": {"/api/v1/epochs/1": epoch}});
    assert_eq!(fuzz::audit_failures(input.to_string().as_bytes()), Ok(None));
}

/// `vrs audit` summed the bet counts the server published: two epochs claiming u64::MAX bets
/// each overflowed (a panic in debug builds, a wrong total in release). Fixed: the total
/// saturates.
#[test]
fn regression_audit_bet_counts_past_u64() {
    let epoch = |n: u64| {
        json!({
            "epoch": n, "modulus": "test512", "iterations": 1, "previous_output": "00",
            "bets_root": "00".repeat(32), "bet_count": u64::MAX, "leaf_hashes": [], "x": "00",
            "y": "00", "pi": "00", "l": "00",
        })
    };
    let input = json!({"from": 1, "to": 2, "answers": {
        "/api/v1/epochs/1": epoch(1), "/api/v1/epochs/2": epoch(2),
    }});
    let failures = fuzz::audit_failures(input.to_string().as_bytes()).unwrap();
    assert!(failures.is_some_and(|f| !f.is_empty()));
}
