//! Fuzz entry points: one per decoder of bytes the service or the CLI does not control. Each
//! drives the real code as the service or the CLI does (a request through the real router,
//! a server's answer through the real `vrs verify` and `vrs audit` steps), so the cargo-fuzz
//! targets in `fuzz/` and the proptest suite (tests/integration/fuzz.rs) test the same thing.
//! docs/OPERATIONS.md ("Fuzzing the decoders") lists the targets and how to run them.
//!
//! Every entry point returns `Err` when an invariant is broken: an HTTP answer that is a 5xx,
//! or a 4xx without a JSON `error`; a decoded value that does not re-encode to itself. A
//! malformed input is refused by the decoder and is `Ok` here. A panic is the other failure.

pub use crate::harness::{check_response, x402_config, Harness, API_KEY_MARK, SERVER};

/// The time the x402 seeds are signed for, and the x402 targets check them at (Unix s).
pub const SEED_NOW: u64 = 1_800_000_000;

use alloy::primitives::{Address, B256};
use alloy::signers::local::PrivateKeySigner;
use alloy::signers::SignerSync;
use axum::body::Body;
use axum::http::{header, HeaderName, HeaderValue, Method, Request, StatusCode};
use base64::Engine;
use serde_json::{json, Value};
use vrs_chain::x402::{self, X402Config};
use vrs_engine::batch::{self, BatchKind};
use vrs_engine::fuzz::MAX_REPLAY_T;
use vrs_protocol::games::Game;
use vrs_protocol::notary::{jcs, schema};
use vrs_protocol::proof_json::ProofDoc;
use vrs_store::codec;
use vrs_verifier::verify::Fetch;

/// Every target, by the name of its cargo-fuzz target.
pub const TARGETS: &[&str] = &[
    "http_request",
    "bet_body",
    "rng_body",
    "notarize_body",
    "path_param",
    "x402_header",
    "x402_payload",
    "x402_notarize",
    "notary_metadata",
    "proof_doc",
    "verify_response",
    "audit_epochs",
    "store_codec",
];

/// The body of a notarization that needs nothing but payment.
const NOTARIZE_BODY: &str = concat!(
    r#"{"schema":"sha256","#,
    r#""payload_hash":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}"#
);

// ---------------------------------------------------------------------------------------
// Through the router.

/// A raw request: `METHOD PATH` on the first line, `Name: value` header lines, an empty line
/// (LF or CRLF), then the body. Lines that hyper would refuse (a bad method, URI or header)
/// never reach the router and are skipped. `$API_KEY` in a header value is the harness's key.
pub fn http_request(h: &Harness, data: &[u8]) -> Result<(), String> {
    let Some(req) = raw_request(h, data) else {
        return Ok(());
    };
    h.send(req).map(drop)
}

fn raw_request(h: &Harness, data: &[u8]) -> Option<Request<Body>> {
    // The first empty line, LF or CRLF.
    let crlf = find(data, b"\r\n\r\n").map(|at| (at, 4));
    let lf = find(data, b"\n\n").map(|at| (at, 2));
    let split = match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let (head, body) = match split {
        Some((at, gap)) => (&data[..at], &data[at + gap..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let (method, uri) = lines.next()?.trim_end().split_once(' ')?;
    let mut req = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).ok()?)
        .uri(uri.trim());
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().replace(API_KEY_MARK, &h.api_key);
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.trim().as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            req = req.header(n, v);
        }
    }
    req.body(Body::from(body.to_vec())).ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A bet body: the first byte picks the game (bit 0: dice or Sic Bo) and drops the JSON
/// content type (bit 1); the rest is the body, posted to the game's bet endpoint.
pub fn bet_body(h: &Harness, data: &[u8]) -> Result<(), String> {
    let (flags, body) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let game = if flags & 1 == 0 {
        Game::Dice
    } else {
        Game::Sicbo
    };
    let mut req = Request::builder()
        .method(Method::POST)
        .uri(format!("/api/v1/games/{}/bet", game.name()));
    if flags & 2 == 0 {
        req = req.header(header::CONTENT_TYPE, "application/json");
    }
    let req = req
        .body(Body::from(body.to_vec()))
        .map_err(|e| e.to_string())?;
    let (status, v) = h.send(req)?;
    if status.is_success() && !v["game_id"].is_string() {
        return Err(format!("a bet answered {status} without a game_id: {v}"));
    }
    Ok(())
}

/// The body of a raw RNG request.
pub fn rng_body(h: &Harness, data: &[u8]) -> Result<(), String> {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/rng/generate")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(data.to_vec()))
        .map_err(|e| e.to_string())?;
    let (status, v) = h.send(req)?;
    if status.is_success() && !v["game_id"].is_string() {
        return Err(format!(
            "a raw RNG request answered {status} without a game_id: {v}"
        ));
    }
    Ok(())
}

/// A notarization body: the first byte adds the harness's API key (bit 0) and a fixed
/// Idempotency-Key (bit 1); the rest is the body.
pub fn notarize_body(h: &Harness, data: &[u8]) -> Result<(), String> {
    let (flags, body) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let mut req = Request::builder()
        .method(Method::POST)
        .uri("/v1/notarize")
        .header(header::CONTENT_TYPE, "application/json");
    if flags & 1 == 1 {
        req = req.header(header::AUTHORIZATION, format!("Bearer {}", h.api_key));
    }
    if flags & 2 == 2 {
        req = req.header("idempotency-key", "fuzz-idempotency-key");
    }
    let req = req
        .body(Body::from(body.to_vec()))
        .map_err(|e| e.to_string())?;
    let (status, v) = h.send(req)?;
    if status == StatusCode::ACCEPTED && !v["receipt_id"].is_string() {
        return Err(format!(
            "a notarization answered 202 without a receipt_id: {v}"
        ));
    }
    Ok(())
}

/// A path parameter (any bytes, percent-encoded) on every route that takes one.
pub fn path_param(h: &Harness, data: &[u8]) -> Result<(), String> {
    let p = percent_encode(data);
    for prefix in [
        "/api/v1/games/",
        "/api/v1/verify/",
        "/api/v1/epochs/",
        "/api/v1/pool/batches/",
        "/v1/notarize/",
        "/docs/",
        "/assets/",
    ] {
        let req = Request::builder()
            .uri(format!("{prefix}{p}"))
            .body(Body::empty())
            .map_err(|e| e.to_string())?;
        h.send(req)?;
    }
    Ok(())
}

/// Every byte but the unreserved ones as `%XX`.
fn percent_encode(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 3);
    for &b in data {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// An x402 payment payload (JSON) posted to `POST /v1/notarize` in its header: the first byte
/// picks v1 (bit 0) and re-signs the payload with the harness's payer key (bit 1; the payer
/// is then that key's address). `"now+N"` and `"now-N"` in `validAfter` and `validBefore` are
/// the current time ± N seconds, so a seed stays valid.
pub fn x402_notarize(h: &Harness, data: &[u8]) -> Result<(), String> {
    let (flags, payload) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let now = u64::try_from(vrs_observe::clock::now_ms() / 1000).unwrap_or_default();
    let value = payment_header(&x402_config(), flags, payload, now)?;
    let name = if flags & 1 == 0 {
        x402::HEADER_SIGNATURE
    } else {
        x402::HEADER_V1_PAYMENT
    };
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/notarize")
        .header(header::CONTENT_TYPE, "application/json")
        .header(name, value)
        .body(Body::from(NOTARIZE_BODY))
        .map_err(|e| e.to_string())?;
    let (status, v) = h.send(req)?;
    // The facilitator cannot be reached: no payment settles, so there is never a receipt.
    if status.is_success() {
        return Err(format!("an unsettled x402 payment answered {status}: {v}"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// x402, decoded as `POST /v1/notarize` decodes it.

/// The payer key that signs the structure-aware payments (a fixed test key: it pays
/// nothing anywhere).
pub fn payer() -> Result<PrivateKeySigner, String> {
    PrivateKeySigner::from_bytes(&B256::repeat_byte(0x42)).map_err(|e| e.to_string())
}

/// A payment header's value: the first byte picks v1 (bit 0); the rest is the header value
/// as sent (a value hyper would refuse never arrives). Decoded and checked as the notary
/// does, its requirements checked at [`SEED_NOW`].
pub fn x402_header(data: &[u8]) -> Result<(), String> {
    let (flags, value) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let Ok(value) = HeaderValue::from_bytes(value) else {
        return Ok(());
    };
    // As the handler reads it: a value that is not visible ASCII is empty.
    decode_payment(&x402_config(), flags, value.to_str().unwrap_or_default())
}

/// A payment payload (JSON): base64-encoded into its header, then as [`x402_header`]. The
/// first byte picks v1 (bit 0) and re-signing with [`payer`] (bit 1), as [`x402_notarize`].
pub fn x402_payload(data: &[u8]) -> Result<(), String> {
    let (flags, payload) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let config = x402_config();
    let value = payment_header(&config, flags, payload, SEED_NOW)?;
    decode_payment(&config, flags, &value)
}

fn decode_payment(config: &X402Config, flags: u8, value: &str) -> Result<(), String> {
    let (v2, v1) = match flags & 1 {
        0 => (Some(value), None),
        _ => (None, Some(value)),
    };
    match x402::decode(config, v2, v1) {
        Ok(Some(p)) => {
            // Decoded means signed by the payer it names.
            let version = if flags & 1 == 0 { 2 } else { 1 };
            if p.version != version {
                return Err(format!(
                    "decoded as version {}, sent as {version}",
                    p.version
                ));
            }
            let _ = x402::check_requirements(config, &p, SEED_NOW);
            Ok(())
        }
        Ok(None) => Err("a payment header decoded as no payment".into()),
        Err(_) => Ok(()),
    }
}

/// The header value for a payload: `now±N` times filled in, re-signed when bit 1 of `flags`
/// asks, base64. Bytes that are not JSON are sent as they are, base64-encoded.
fn payment_header(
    config: &X402Config,
    flags: u8,
    payload: &[u8],
    now: u64,
) -> Result<String, String> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let Ok(mut v) = serde_json::from_slice::<Value>(payload) else {
        return Ok(b64(payload));
    };
    if let Some(auth) = v
        .pointer_mut("/payload/authorization")
        .and_then(Value::as_object_mut)
    {
        for key in ["validAfter", "validBefore"] {
            if let Some(t) = auth
                .get(key)
                .and_then(Value::as_str)
                .and_then(|s| relative(s, now))
            {
                auth.insert(key.into(), json!(t));
            }
        }
        if flags & 2 == 2 {
            let key = payer()?;
            auth.insert("from".into(), json!(key.address().to_checksum(None)));
        }
    }
    if flags & 2 == 2 {
        resign(config, &mut v)?;
    }
    Ok(b64(v.to_string().as_bytes()))
}

/// `now+N` or `now-N` as the decimal time.
fn relative(s: &str, now: u64) -> Option<String> {
    let rest = s.strip_prefix("now")?;
    let (sign, n) = rest.split_at(rest.len().min(1));
    let n: u64 = n.parse().ok()?;
    match sign {
        "+" => now.checked_add(n),
        "-" => now.checked_sub(n),
        _ => None,
    }
    .map(|t| t.to_string())
}

/// Signs the payload's authorization (as the service parses it) with [`payer`] into
/// `payload.signature`; a payload whose authorization does not parse is left as it is.
pub(crate) fn resign(config: &X402Config, v: &mut Value) -> Result<(), String> {
    let Ok(a) = x402::parse_authorization("payload", v) else {
        return Ok(());
    };
    let sig = payer()?
        .sign_hash_sync(&x402::signing_hash(config, &a))
        .map_err(|e| e.to_string())?;
    if let Some(exact) = v.get_mut("payload").and_then(Value::as_object_mut) {
        exact.insert(
            "signature".into(),
            json!(format!("0x{}", hex::encode(sig.as_bytes()))),
        );
    }
    Ok(())
}

/// The payer address of [`payer`].
pub fn payer_address() -> Result<Address, String> {
    payer().map(|k| k.address())
}

// ---------------------------------------------------------------------------------------
// Notary fields.

/// Notary fields: the first byte picks metadata (bit 0 clear: JSON, checked and
/// canonicalised as the notary does) or a payload hash (bit 0 set: the rest as its text).
/// Canonical JSON is stable: canonicalising its own output gives the same text.
pub fn notary_metadata(data: &[u8]) -> Result<(), String> {
    let (flags, rest) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    if flags & 1 == 1 {
        let Ok(text) = std::str::from_utf8(rest) else {
            return Ok(());
        };
        if let Ok(hash) = schema::parse_payload_hash(text) {
            for s in schema::ALL {
                if schema::parse_payload_hash(&s.canonical_hash(&hash)) != Ok(hash) {
                    return Err(format!("{}'s canonical hash does not parse back", s.id()));
                }
            }
        }
        return Ok(());
    }
    let Ok(value) = serde_json::from_slice::<Value>(rest) else {
        return Ok(());
    };
    let _ = schema::canonical_metadata(Some(&value));
    let Some(text) = jcs::canonical(&value) else {
        return Ok(());
    };
    let again: Value = serde_json::from_str(&text)
        .map_err(|e| format!("canonical JSON {text:?} does not parse: {e}"))?;
    match jcs::canonical(&again) {
        Some(t) if t == text => Ok(()),
        other => Err(format!(
            "canonical JSON is not stable: {text:?} then {other:?}"
        )),
    }
}

// ---------------------------------------------------------------------------------------
// The CLI's decoders of server answers.

/// A proof document as `vrs vdf verify` reads it (replay checked when T ≤ 4096).
pub fn proof_doc(data: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let Ok(doc) = serde_json::from_str::<ProofDoc>(text) else {
        return Ok(());
    };
    let _ = vrs_protocol::proof_json::check(&doc, doc.iterations <= MAX_REPLAY_T);
    Ok(())
}

/// The group `vrs verify` and `vrs audit` expect when the input names none (`"group"`): the
/// seeds' servers run on test512.
const FUZZ_GROUP: &str = "test512";

/// What `vrs verify` is answered: a JSON object `{"game_id", "rpc", "require_anchor", "group",
/// "answers"}` whose `answers` maps a server path (`/api/v1/verify/<id>`, …) to its JSON
/// answer (a path not there is a 404) and `rpc:<method>` to a node's JSON-RPC answer.
pub fn verify_response(data: &[u8]) -> Result<(), String> {
    verify_steps(data).map(drop)
}

/// [`verify_response`]'s steps that failed; `Ok(None)` when `vrs verify` stopped with an
/// error (the server or node could not be asked, or the answer is no verification).
pub fn verify_steps(data: &[u8]) -> Result<Option<Vec<String>>, String> {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return Ok(None);
    };
    let canned = Canned::new(&input);
    let game_id = input["game_id"].as_str().unwrap_or_default();
    let rpc = input["rpc"]
        .as_bool()
        .unwrap_or_default()
        .then_some("http://node.fuzz");
    let require = input["require_anchor"].as_bool().unwrap_or_default();
    let group = input["group"].as_str().unwrap_or(FUZZ_GROUP);
    let options = vrs_verifier::verify::Options {
        group,
        rpc,
        require_anchor: require,
        floor: vrs_protocol::timing::Floor::default(),
        witness: None,
    };
    match vrs_verifier::verify::check(&canned, SERVER, game_id, &options) {
        Ok(checked) => Ok(Some(
            checked
                .steps
                .iter()
                .filter(|s| !s.passed && !s.pending)
                .map(|s| format!("{}: {}", s.name, s.detail))
                .collect(),
        )),
        Err(_) => Ok(None),
    }
}

/// What `vrs audit` is answered: `{"from", "to", "rpc", "answers"}` as [`verify_response`]
/// (at most 64 epochs), the proofs on the `cpu` batch backend.
pub fn audit_epochs(data: &[u8]) -> Result<(), String> {
    audit_failures(data).map(drop)
}

/// [`audit_epochs`]' failed checks; `Ok(None)` when `vrs audit` stopped with an error.
pub fn audit_failures(data: &[u8]) -> Result<Option<Vec<String>>, String> {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return Ok(None);
    };
    let canned = Canned::new(&input);
    let from = input["from"].as_u64().unwrap_or(1);
    let to = input["to"]
        .as_u64()
        .unwrap_or(from)
        .min(from.saturating_add(63));
    let rpc = input["rpc"]
        .as_bool()
        .unwrap_or_default()
        .then_some("http://node.fuzz");
    let cpu = |_: &vrs_engine::group::Modulus| -> anyhow::Result<Box<dyn batch::BatchBackend>> {
        Ok(batch::open(BatchKind::Cpu)?)
    };
    let group = input["group"].as_str().unwrap_or(FUZZ_GROUP);
    let options = vrs_verifier::verify::Options {
        group,
        rpc,
        require_anchor: false,
        floor: vrs_protocol::timing::Floor::default(),
        witness: None,
    };
    match vrs_verifier::audit::audit(&canned, SERVER, (from, to), &options, &cpu) {
        Ok((summary, _)) => Ok(Some(summary.failure_lines())),
        Err(_) => Ok(None),
    }
}

/// Canned answers of a server and a node, for the CLI targets.
#[derive(Debug)]
struct Canned {
    answers: serde_json::Map<String, Value>,
}

impl Canned {
    fn new(input: &Value) -> Self {
        Self {
            answers: input["answers"].as_object().cloned().unwrap_or_default(),
        }
    }
}

impl Fetch for Canned {
    fn get_opt(&self, url: &str) -> anyhow::Result<Option<Value>> {
        let path = url.strip_prefix(SERVER).unwrap_or(url);
        Ok(self.answers.get(path).cloned())
    }

    fn post(&self, url: &str, body: &Value) -> anyhow::Result<Value> {
        let method = body["method"].as_str().unwrap_or_default();
        match self.answers.get(&format!("rpc:{method}")) {
            Some(v) => Ok(v.clone()),
            None => anyhow::bail!("{url}: no answer to {method}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The store's column encodings.

/// A stored column: the first byte picks checkpoints (0), dice (1) or a combo (2); the rest
/// is its text. What decodes re-encodes to text that decodes to the same value.
pub fn store_codec(data: &[u8]) -> Result<(), String> {
    let (which, rest) = data.split_first().map_or((0, &[][..]), |(f, b)| (*f, b));
    let Ok(text) = std::str::from_utf8(rest) else {
        return Ok(());
    };
    match which % 3 {
        0 => {
            if let Ok(c) = codec::decode_checkpoints(text) {
                let again = codec::decode_checkpoints(&codec::encode_checkpoints(&c));
                if again.as_ref().ok() != Some(&c) {
                    return Err(format!("checkpoints {text:?} do not round-trip"));
                }
            }
        }
        1 => {
            if let Ok(d) = codec::parse_digits(text, "dice") {
                if codec::parse_digits(&codec::join_digits(&d), "dice").ok() != Some(d) {
                    return Err(format!("dice {text:?} do not round-trip"));
                }
            }
        }
        _ => {
            if let Ok(Some(c)) = codec::parse_combo(Some(text)) {
                if codec::parse_combo(Some(&codec::join_digits(&c))).ok() != Some(Some(c)) {
                    return Err(format!("combo {text:?} does not round-trip"));
                }
            }
        }
    }
    Ok(())
}

/// Runs `target` on `data` (the harness for the router's targets).
pub fn run(target: &str, h: Option<&Harness>, data: &[u8]) -> Result<(), String> {
    let h = || h.ok_or_else(|| format!("{target} needs the harness"));
    match target {
        "http_request" => http_request(h()?, data),
        "bet_body" => bet_body(h()?, data),
        "rng_body" => rng_body(h()?, data),
        "notarize_body" => notarize_body(h()?, data),
        "path_param" => path_param(h()?, data),
        "x402_notarize" => x402_notarize(h()?, data),
        "x402_header" => x402_header(data),
        "x402_payload" => x402_payload(data),
        "notary_metadata" => notary_metadata(data),
        "proof_doc" => proof_doc(data),
        "verify_response" => verify_response(data),
        "audit_epochs" => audit_epochs(data),
        "store_codec" => store_codec(data),
        other => Err(format!("no fuzz target {other}")),
    }
}

/// Whether `target` runs through the router (needs a [`Harness`]).
pub fn needs_harness(target: &str) -> bool {
    matches!(
        target,
        "http_request" | "bet_body" | "rng_body" | "notarize_body" | "path_param" | "x402_notarize"
    )
}
