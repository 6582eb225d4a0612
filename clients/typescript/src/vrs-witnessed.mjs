// vrs verifier: the `witnessed` step (docs/PROTOCOL.md §21, "The witnessed log").
//
// An epoch's plan and commitment, and for p ≥ 1 the output entry of the epoch p its input
// takes, are entries of the operator's log (RFC 6962 over SHA-256), included in C2SP
// signed-note checkpoints that the verifier's own witnesses cosigned (cosignature/v1) with their
// clocks' Unix seconds. The step passes when a quorum of the verifier's policy (C2SP
// tlog-policy) cosigned them in time:
//
//   1000 · t_p(w) ≤ opened_e + δ          the plan was public as the epoch opened
//   1000 · t_c(w) ≤ deadline_e + δ        the commitment by the deadline (else the epoch is void)
//   t_l(w) = max(t_c(w), t_o(w))          the last input of x_e fixed (t_o = t_c for p = 0)
//   t_c(w) ≥ t_p(w) and
//   (1000 · (t_l(w) + 1) + δ − opened_e) · S ≤ 1000 · T_e   under T_e / S from the opening − δ
//
// S and δ are the verifier's, never the operator's. Integers only (BigInt). Mirrors the Rust
// reference, protocol/src/tlog/{witnessed,note,policy,tree,entry}.rs, and its words where the
// shared vector (docs/test-vectors/witnessed.json) records them. Plain ES module, no
// dependencies, browser-safe: SHA-256 through WebCrypto (vrs-verify.mjs's sha256), base64 by a
// strict decoder of its own (no Buffer), Ed25519 by vrs-verify.mjs's BigInt verifier.
//
// It also has the `moved` step (§21, "Moved games"): a game whose epoch was void, moved by
// logged move entries to the epoch whose outcome it takes.
//
// vrs-verify.mjs loads this module only when it is given a policy, a proof's anchor carries
// `log` or the game is a moved one (a dynamic import), so a page that meets none of them need
// not serve this file.

import {
  CALLDATA_PREFIX,
  CALLDATA_V2_PREFIX,
  CheckFailed,
  bytesToHex,
  bytesToBigInt,
  bytesEqual,
  concat,
  hexToBytes,
  isEd25519Point,
  leafHash,
  marginCenti,
  rootFromPath,
  sha256,
  verifyEd25519,
} from "./vrs-verify.mjs";

const fail = (msg) => {
  throw new CheckFailed(msg);
};
const utf8 = new TextEncoder();
// Rust's `{:?}` of a string, near enough for messages: quoted, with escapes.
const quoted = (s) => JSON.stringify(String(s));

/** Signature type of the log's Ed25519 note key. */
export const ALG_ED25519 = 0x01;
/** Signature type of a witness's timestamped cosignature (cosignature/v1). */
export const ALG_COSIGNATURE_V1 = 0x04;
/** The verifier's clock tolerance δ unless told otherwise (ms). */
export const DEFAULT_DELTA_MS = 2000;

/** S unless told otherwise: 1 000 000 squarings/s for class groups (about 1.4 × Chia's fastest
 *  reported timelord), 9 000 000 for RSA groups (the FPGA class of §10). */
export function defaultMaxRate(group) {
  return String(group ?? "").toLowerCase().startsWith("classgroup") ? 1_000_000n : 9_000_000n;
}

/** maxRate (S, squarings per second) as a BigInt: a whole number ≥ 1 (a safe-integer Number or
 *  a BigInt below 2^64); anything else is the caller's mistake (RangeError). */
export function parseMaxRate(r) {
  const ok = (typeof r === "number" && Number.isSafeInteger(r)) || typeof r === "bigint";
  if (!ok || BigInt(r) < 1n || BigInt(r) >= 1n << 64n) {
    throw new RangeError(`maxRate must be a whole number of squarings per second ≥ 1, not ${String(r)}`);
  }
  return BigInt(r);
}

/** deltaMs (δ) as a BigInt: a whole number of milliseconds ≥ 0 (RangeError otherwise). */
export function parseDeltaMs(d) {
  const ok = (typeof d === "number" && Number.isSafeInteger(d)) || typeof d === "bigint";
  if (!ok || BigInt(d) < 0n || BigInt(d) >= 1n << 64n) {
    throw new RangeError(`deltaMs must be a whole number of milliseconds ≥ 0, not ${String(d)}`);
  }
  return BigInt(d);
}

// ---------------------------------------------------------------------------------------------
// Base64 (RFC 4648 standard alphabet, strict)
// ---------------------------------------------------------------------------------------------

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Standard base64 to bytes, as strictly as Rust's BASE64_STANDARD: padding required, no
 *  whitespace, and the unused low bits of the last symbol zero, so that one byte string has one
 *  spelling (atob accepts all three). Throws CheckFailed naming `what`. */
export function base64ToBytes(text, what = "value") {
  if (typeof text !== "string" || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) {
    fail(`${what} is not base64`);
  }
  const pad = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (let i = 0; i < text.length - pad; i++) {
    acc = (acc << 6) | B64.indexOf(text[i]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) fail(`${what} is not canonical base64 (trailing bits set)`);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Entries (§21 "Entries"): strict, so one entry has one meaning
// ---------------------------------------------------------------------------------------------

const KINDS = ["operator", "plan", "commitment", "void", "output", "pool-batch", "anchor", "move"];

/**
 * Decodes an entry's bytes: {kind, …fields} with u64 fields as BigInt, u32 margin_centi as a
 * Number and byte strings as Uint8Array; field names as protocol/src/tlog/entry.rs. An unknown
 * tag, or bytes missing or left over, throws CheckFailed ("not a log entry: …").
 */
export function decodeLogEntry(bytes) {
  let at = 0;
  const bad = (m) => fail(`not a log entry: ${m}`);
  const take = (n) => {
    if (at + n > bytes.length) bad(`short entry (${bytes.length} bytes)`);
    at += n;
    return bytes.slice(at - n, at);
  };
  const int = (n) => bytesToBigInt(take(n));
  const u64 = () => int(8);
  const text = (b, what) => {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(b);
    } catch {
      return bad(`${what} is not UTF-8`);
    }
  };
  const tag = text(take(Number(int(1))), "tag");
  const kind = tag.startsWith("vrs/log/") ? tag.slice(8) : null;
  let e;
  switch (KINDS.includes(kind) ? kind : null) {
    case "operator":
      e = { kind, stamped_ms: u64() };
      e.group = text(take(Number(int(2))), "group");
      Object.assign(e, { acceptance_key: take(32), anchor_chain_id: u64(), anchor_address: take(20) });
      break;
    case "plan":
      e = { kind, epoch: u64(), previous: u64(), iterations: u64(), margin_centi: Number(int(4)) };
      Object.assign(e, { squarings_per_second: u64(), opened_ms: u64(), deadline_ms: u64() });
      break;
    case "commitment":
      e = { kind, epoch: u64(), previous: u64(), bets_root: take(32), bet_count: u64(), nonce: take(32) };
      Object.assign(e, { iterations: u64(), margin_centi: Number(int(4)), squarings_per_second: u64() });
      Object.assign(e, { opened_ms: u64(), closed_ms: u64() });
      break;
    case "void":
      e = { kind, epoch: u64(), stamped_ms: u64() };
      break;
    case "output":
      // output_hash = SHA-256(y_e), y_e as stored (the bytes a later seed takes as y_p).
      e = { kind, epoch: u64(), output_hash: take(32) };
      break;
    case "pool-batch":
      e = { kind, batch: u64(), first_index: u64(), size: u64(), prev_root: take(32), anchor_epoch: u64() };
      Object.assign(e, { seed: take(32), root: take(32), committed_ms: u64() });
      break;
    case "anchor":
      // Anchor batch n, what it covers and its root (§16, "Binding").
      e = { kind, batch: u64(), first_epoch: u64(), last_epoch: u64(), pool_from: u64(), pool_to: u64() };
      Object.assign(e, { notary_from: u64(), notary_to: u64(), root: take(32) });
      break;
    case "move":
      // The games of void epoch e (its bets tree) take their outcome from epoch `to` (§21, "Voids").
      e = { kind, epoch: u64(), to: u64(), bets_root: take(32), bet_count: u64() };
      break;
    default:
      bad(`unknown tag ${quoted(tag)}`);
  }
  if (at !== bytes.length) bad(`${bytes.length - at} bytes after the ${kind} entry`);
  return e;
}

// ---------------------------------------------------------------------------------------------
// Keys and signed notes (C2SP signed-note, tlog-checkpoint, tlog-cosignature)
// ---------------------------------------------------------------------------------------------

/** A key name of C2SP signed-note: not empty, no Unicode space, no '+'. */
const validKeyName = (name) => name !== "" && !/[\p{White_Space}+]/u.test(name);

const hex8 = (id) => id.toString(16).padStart(8, "0");

/** The key ID of a note key: SHA-256(name ‖ 0x0A ‖ alg ‖ public key)[:4], big-endian. */
export async function keyId(name, alg, publicKey) {
  const h = await sha256(concat(utf8.encode(name), Uint8Array.of(0x0a, alg), publicKey));
  return Number(bytesToBigInt(h.subarray(0, 4)));
}

/** Parses a verifier key `name+<8 hex key ID>+base64(alg ‖ 32-byte Ed25519 key)` of type 0x01 or
 *  0x04 (the base64 part may hold '+': split on the first two only) and checks its key ID:
 *  {name, id, alg, publicKey, text}. Throws CheckFailed. */
export async function parseVKey(text) {
  const s = String(text);
  const bad = () => fail(`${quoted(s)} is not a verifier key (name+keyid+base64)`);
  const i = s.indexOf("+");
  const j = i < 0 ? -1 : s.indexOf("+", i + 1);
  if (j < 0) bad();
  const [name, id16, key64] = [s.slice(0, i), s.slice(i + 1, j), s.slice(j + 1)];
  if (!validKeyName(name) || !/^[0-9a-fA-F]{8}$/.test(id16)) bad();
  let key;
  try {
    key = base64ToBytes(key64);
  } catch {
    bad();
  }
  if (key.length !== 33 || (key[0] !== ALG_ED25519 && key[0] !== ALG_COSIGNATURE_V1)) {
    fail(`${quoted(s)}: only Ed25519 keys (type 0x01 or 0x04) are supported`);
  }
  const publicKey = key.slice(1);
  if (!isEd25519Point(publicKey)) fail(`${quoted(s)}: not an Ed25519 public key`);
  const id = parseInt(id16, 16);
  if ((await keyId(name, key[0], publicKey)) !== id) fail(`${quoted(s)}: the key ID does not match the key`);
  return { name, id, alg: key[0], publicKey, text: s };
}

const NOTE_MAX_BYTES = 1_000_000;
const NOTE_MAX_SIGNATURES = 100;
const U64_MAX = (1n << 64n) - 1n;

/**
 * Parses a signed note holding a C2SP checkpoint, without verifying anything: {text (the
 * signed bytes: the note up to and including the newline before the blank line), origin, size
 * (BigInt), root (32 bytes), signatures: [{name, id, sig}]}. As the signed_note and tlog_tiles
 * crates: UTF-8 with no control character but newline, the last blank line splits text from
 * signature lines (`— <name> base64(key ID ‖ signature)`), at most 100 of them; the text is
 * origin, decimal size, base64 root, then non-empty extension lines. Throws CheckFailed
 * ("malformed checkpoint: …").
 */
export function parseCheckpointNote(note) {
  const bad = (m) => fail(`malformed checkpoint: ${m}`);
  if (typeof note !== "string") bad("not a string");
  // A lone surrogate is not UTF-8: the Rust side refuses such a note as a whole.
  if (/\p{Cs}/u.test(note) || /[\u0000-\u0009\u000b-\u001f]/.test(note)) bad("malformed note");
  if (utf8.encode(note).length > NOTE_MAX_BYTES) bad("malformed note");
  const split = note.lastIndexOf("\n\n");
  if (split < 0) bad("malformed note");
  const text = note.slice(0, split + 1);
  let sigs = note.slice(split + 2);
  if (!sigs.endsWith("\n")) bad("malformed note");
  sigs = sigs.slice(0, -1);
  const signatures = [];
  for (const line of sigs.split("\n")) {
    if (!line.startsWith("— ")) bad("malformed note");
    const rest = line.slice(2);
    const sp = rest.indexOf(" ");
    if (sp < 0) bad("malformed note");
    const name = rest.slice(0, sp);
    let raw;
    try {
      raw = base64ToBytes(rest.slice(sp + 1));
    } catch {
      bad("malformed note");
    }
    if (raw.length < 5 || !validKeyName(name)) bad("malformed note");
    if (signatures.length === NOTE_MAX_SIGNATURES) bad("malformed note");
    signatures.push({ name, id: Number(bytesToBigInt(raw.subarray(0, 4))), sig: raw.slice(4) });
  }
  // The checkpoint body: text ends with "\n", so the last piece of the split is empty.
  const lines = text.split("\n").slice(0, -1);
  if (lines.length < 3 || lines[0] === "" || lines.slice(3).some((l) => l === "")) bad("malformed checkpoint");
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1]) || BigInt(lines[1]) > U64_MAX) bad("malformed checkpoint");
  let root;
  try {
    root = base64ToBytes(lines[2]);
  } catch {
    bad("malformed checkpoint");
  }
  if (root.length !== 32) bad("malformed checkpoint");
  return { text, origin: lines[0], size: BigInt(lines[1]), root, signatures };
}

/** The bytes a cosignature/v1 signs: "cosignature/v1\ntime " ‖ decimal(t) ‖ "\n" ‖ checkpoint
 *  text. */
export function cosignedMessage(checkpointText, t) {
  const text = typeof checkpointText === "string" ? utf8.encode(checkpointText) : checkpointText;
  return concat(utf8.encode(`cosignature/v1\ntime ${BigInt(t)}\n`), text);
}

/** Whether `sig` (key ID stripped) is `key`'s valid signature on the checkpoint text: a plain
 *  Ed25519 signature for a log key; u64(t) ‖ Ed25519 signature over cosignedMessage for a
 *  witness's, with 0 < t ≤ 2^63 − 1 (as the Rust reference). */
async function signatureHolds(key, textBytes, sig) {
  let message = textBytes;
  let ed = sig;
  if (key.alg === ALG_COSIGNATURE_V1) {
    if (sig.length < 8) return false;
    const t = bytesToBigInt(sig.subarray(0, 8));
    if (t === 0n || t > (1n << 63n) - 1n) return false;
    message = cosignedMessage(textBytes, t);
    ed = sig.subarray(8);
  }
  if (ed.length !== 64) return false;
  try {
    await verifyEd25519(key.publicKey, message, ed);
    return true;
  } catch (e) {
    if (e instanceof CheckFailed) return false;
    throw e;
  }
}

/**
 * Verifies a signed checkpoint (C2SP signed-note) against the log's key and any witness keys:
 * the log's signature must be present and valid; every line of a known witness (same name and
 * key ID) must verify, one that fails rejects the note; lines of unknown keys are ignored; a
 * repeated line of one key counts once (its first). Resolves with {origin, size, root, text,
 * cosignatures: [{name, id, time}]} (time: the cosigned Unix second, BigInt), or rejects with
 * CheckFailed ("unknown origin …", "signature: …", "malformed checkpoint: …").
 */
export async function verifyCheckpoint(note, logKey, witnessKeys = []) {
  const cp = parseCheckpointNote(note);
  if (cp.origin !== logKey.name) fail(`unknown origin ${quoted(cp.origin)}`);
  const textBytes = utf8.encode(cp.text);
  const same = (k, s) => k.name === s.name && k.id === s.id;
  // The log's own signature first: without it the note is refused whatever else it holds.
  const logSig = cp.signatures.find((s) => same(logKey, s));
  if (!logSig) fail("signature: note has no verifiable signatures");
  if (!(await signatureHolds(logKey, textBytes, logSig.sig))) {
    fail(`signature: invalid signature for key ${logKey.name}+${hex8(logKey.id)}`);
  }
  const cosignatures = [];
  const seen = new Set();
  for (const s of cp.signatures) {
    const who = `${s.name}+${hex8(s.id)}`;
    if (same(logKey, s) || seen.has(who)) continue;
    const known = witnessKeys.filter((k) => same(k, s));
    if (known.length === 0) continue;
    if (known.length > 1) fail(`signature: ambiguous key ${who}`);
    seen.add(who);
    if (!(await signatureHolds(known[0], textBytes, s.sig))) fail(`signature: invalid signature for key ${who}`);
    cosignatures.push({ name: s.name, id: s.id, time: bytesToBigInt(s.sig.subarray(0, 8)) });
  }
  return { origin: cp.origin, size: cp.size, root: cp.root, text: cp.text, cosignatures };
}

// ---------------------------------------------------------------------------------------------
// The verifier's policy (C2SP tlog-policy)
// ---------------------------------------------------------------------------------------------

/**
 * Parses a C2SP tlog-policy: `log <vkey> [url]`, `witness <name> <vkey> [url]`, `group <name>
 * all|any|<k> <member>…`, `quorum <name>|none`, `#` comment lines. As policy.rs: names refer only
 * to lines above; exactly one quorum line; no key listed twice; a log key is of type 0x01, a
 * witness key of type 0x04. Resolves with {logs: [{key, url}], witnesses: [{name, key, url}],
 * rules: Map(name → {witness} | {k, members}), quorum: name or null (`quorum none`)}; rejects
 * with RangeError ("policy line N: …"): a policy is the verifier's own input, not the server's.
 */
export async function parsePolicy(text) {
  if (typeof text !== "string") throw new RangeError("the witness policy is not text");
  const logs = [];
  const witnesses = [];
  const rules = new Map();
  const keys = new Set();
  let quorum;
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const at = (m) => new RangeError(`policy line ${i + 1}: ${m}`);
    const words = lines[i].replace(/\r$/, "").split(/[ \t]/).filter((w) => w !== "");
    if (words.length === 0 || words[0].startsWith("#")) continue;
    const [first, ...rest] = words;
    const vkey = async (s, alg, what) => {
      let key;
      try {
        key = await parseVKey(s);
      } catch (e) {
        throw at(e.message);
      }
      if (key.alg !== alg) throw at(what);
      const pk = bytesToHex(key.publicKey);
      if (keys.has(pk)) throw at("this key is listed twice");
      keys.add(pk);
      return key;
    };
    const taken = (name) => {
      if (name === "none" || rules.has(name)) throw at(`the name ${quoted(name)} is taken`);
    };
    if (first === "log") {
      if (rest.length < 1 || rest.length > 2) throw at("log takes a vkey and an optional URL");
      const key = await vkey(rest[0], ALG_ED25519, "a log key is an Ed25519 note key (type 0x01)");
      logs.push({ key, url: rest[1] ?? null });
    } else if (first === "witness") {
      if (rest.length < 2 || rest.length > 3) throw at("witness takes a name, a vkey and an optional URL");
      const name = rest[0];
      taken(name);
      const key = await vkey(rest[1], ALG_COSIGNATURE_V1, "a witness key is a cosignature/v1 key (type 0x04)");
      rules.set(name, { witness: key });
      witnesses.push({ name, key, url: rest[2] ?? null });
    } else if (first === "group") {
      if (rest.length < 2) throw at("group takes a name, all|any|k and members");
      const [name, k, ...members] = rest;
      if (members.length === 0) throw at("a group needs at least one member");
      taken(name);
      const seen = new Set();
      for (const m of members) {
        if (!rules.has(m)) throw at(`${quoted(m)} is not defined above`);
        if (seen.has(m)) throw at(`${quoted(m)} is listed twice`);
        seen.add(m);
      }
      // k: a plain decimal in 1..=members (Rust's usize parse also takes "+2"; this does not).
      let need;
      if (k === "all") need = members.length;
      else if (k === "any") need = 1;
      else if (/^[1-9][0-9]*$/.test(k) && Number(k) <= members.length) need = Number(k);
      else throw at(`${quoted(k)} is not all, any or 1..=${members.length}`);
      rules.set(name, { k: need, members });
    } else if (first === "quorum") {
      if (quorum !== undefined) throw at("a policy has exactly one quorum line");
      if (rest.length !== 1) throw at("quorum takes one name");
      if (rest[0] === "none") quorum = null;
      else if (rules.has(rest[0])) quorum = rest[0];
      else throw at(`${quoted(rest[0])} is not defined above`);
    } else {
      throw at(`unknown keyword ${quoted(first)}`);
    }
  }
  if (quorum === undefined) throw new RangeError("the policy has no quorum line");
  return { logs, witnesses, rules, quorum };
}

/** Whether a set of witnesses (by the policy's names) satisfies the policy's quorum. */
export function quorumSatisfied(policy, names) {
  const have = new Set(names);
  const holds = (name) => {
    const r = policy.rules.get(name);
    if (!r) return false;
    if (r.witness) return have.has(name);
    return r.members.filter(holds).length >= r.k;
  };
  return policy.quorum === null || holds(policy.quorum);
}

/** The most witnesses disjointQuorums searches (2^n sets), as policy.rs. */
export const MAX_SPLIT_CHECKED = 16;

/** Two disjoint sets of policy witness names that each satisfy the quorum, or null (also for
 *  `quorum none` and past MAX_SPLIT_CHECKED witnesses): two histories, each shown to one set,
 *  would both pass (§21, "Known gaps", 2). */
export function disjointQuorums(policy) {
  const names = policy.witnesses.map((w) => w.name);
  const n = names.length;
  if (policy.quorum === null || n > MAX_SPLIT_CHECKED) return null;
  const full = (1 << n) - 1;
  const pick = (m) => names.filter((_, i) => (m >> i) & 1);
  // The quorum is monotone: a set and its complement suffice.
  for (let m = 1; m < full; m++) {
    if (quorumSatisfied(policy, pick(m)) && quorumSatisfied(policy, pick(full & ~m))) {
      return [pick(m).sort(), pick(full & ~m).sort()];
    }
  }
  return null;
}

/** What a verifier with `policy` says of the policy itself (the words of `vrs verify`). */
export function policyNotes(policy) {
  const split = disjointQuorums(policy);
  if (!split) return [];
  return [
    `witnessed: the policy's quorum is met by two disjoint sets of witnesses ([${split[0].join(", ")}] and ` +
      `[${split[1].join(", ")}]): two histories of the log, each cosigned by one set, both pass; a quorum whose ` +
      "every two sets share a witness (a majority) excludes that (docs/PROTOCOL.md §21)",
  ];
}

/** The quorum in words, as policy.rs says it: `2 of (W0, W1, W2)`. */
export function describeQuorum(policy) {
  const rule = (name) => {
    const r = policy.rules.get(name);
    return !r || r.witness ? name : `${r.k} of (${r.members.map(rule).join(", ")})`;
  };
  return policy.quorum === null ? "none (no cosignature required)" : rule(policy.quorum);
}

// ---------------------------------------------------------------------------------------------
// The step
// ---------------------------------------------------------------------------------------------

/**
 * Proves one LoggedEntry ({index, entry: hex, checkpoint: signed note, proof: [base64 hash]})
 * under the policy: its checkpoint verifies under the `log` key named by its origin, with every
 * policy witness's cosignature; its audit path leads from SHA-256(0x00 ‖ entry) at its index to
 * the checkpoint's root; its bytes decode. Resolves with {entry, index, size, cosignatures}, or
 * rejects with CheckFailed.
 */
export async function proveEntry(logged, policy) {
  if (logged === null || typeof logged !== "object") fail("a logged entry is not an object");
  let bytes;
  try {
    bytes = hexToBytes(logged.entry, undefined, "the entry");
  } catch {
    fail("the entry is not hex");
  }
  const index = logged.index;
  if (!Number.isSafeInteger(index) || index < 0) fail("the entry's index is not a count");
  if (typeof logged.checkpoint !== "string" || logged.checkpoint === "") fail("the checkpoint is empty");
  const origin = logged.checkpoint.split("\n")[0];
  const log = policy.logs.find((l) => l.key.name === origin);
  if (!log) fail(`the policy names no log with origin ${quoted(origin)}`);
  let cp;
  try {
    cp = await verifyCheckpoint(logged.checkpoint, log.key, policy.witnesses.map((w) => w.key));
  } catch (e) {
    if (e instanceof CheckFailed) fail(`checkpoint of entry ${index}: ${e.message}`);
    throw e;
  }
  if (!Array.isArray(logged.proof)) fail(`the proof of entry ${index} is not a list`);
  const path = logged.proof.map((h) => {
    const b = (() => {
      try {
        return base64ToBytes(h);
      } catch {
        return null;
      }
    })();
    return b && b.length === 32 ? b : fail(`${quoted(h)} is not a base64 SHA-256 hash`);
  });
  if (BigInt(index) >= cp.size) fail(`entry ${index} is not in a tree of ${cp.size}`);
  let root = null;
  try {
    root = await rootFromPath(await leafHash(bytes), index, cp.size, path);
  } catch (e) {
    if (!(e instanceof CheckFailed)) throw e;
  }
  // One message for every way the path fails (too long, too short, another root), as Rust's.
  if (!root || !bytesEqual(root, cp.root)) {
    fail(`the inclusion proof of entry ${index} in ${cp.size}: invalid transparency proof`);
  }
  return { entry: decodeLogEntry(bytes), index, size: cp.size, cosignatures: cp.cosignatures };
}

/** One entry proven in each of its checkpoints (witnesses may cosign different sizes): all of
 *  one index and bytes, with each witness key's EARLIEST cosigned second over them. */
async function proveAll(what, list, policy) {
  if (!Array.isArray(list)) fail(`the log's ${what} list is not a list`);
  const first = list[0];
  if (first === undefined) fail(`no cosigned checkpoint holds the ${what}`);
  if (first === null || typeof first !== "object") fail(`the ${what}'s first logged entry is not an object`);
  // Keyed by name and key ID: a stranger's key under a policy witness's name is no witness.
  const earliest = new Map();
  let entry;
  for (const l of list) {
    if (l === null || typeof l !== "object" || l.index !== first.index || l.entry !== first.entry) {
      fail(`the ${what}'s checkpoints name different entries (${first.index} and ${l && l.index})`);
    }
    let p;
    try {
      p = await proveEntry(l, policy);
    } catch (e) {
      if (e instanceof CheckFailed) fail(`the ${what}: ${e.message}`);
      throw e;
    }
    for (const c of p.cosignatures) {
      const who = `${c.name}+${hex8(c.id)}`;
      if (!earliest.has(who) || c.time < earliest.get(who)) earliest.set(who, c.time);
    }
    entry = p.entry;
  }
  return { entry, index: first.index, earliest };
}

/**
 * §16 "Binding": `anchor.log` = {bound, cosigned}. `bound` is the batch's anchor entry as the last
 * leaf of the log of size index + 1, under that log's checkpoint (signed by the policy's log key;
 * with `policy` null nothing is signature-checked); `cosigned`, the same entry in checkpoints that
 * a quorum of the policy's witnesses cosigned, at any time. Returns {entry, index, size (BigInt),
 * root, cosignedBy}; throws CheckFailed.
 */
export async function anchorBound(log, policy) {
  if (log === null || typeof log !== "object") fail("anchor.log is not an object");
  const b = log.bound;
  if (b === null || typeof b !== "object") fail("anchor.log.bound is not an object");
  // Absent reads as empty; anything else but a list (null included) is refused, as Rust and
  // Python do.
  if (log.cosigned !== undefined && !Array.isArray(log.cosigned)) fail("anchor.log.cosigned is not a list");
  let bytes;
  try {
    bytes = hexToBytes(b.entry, undefined, "the entry");
  } catch {
    fail("the anchor entry is not hex");
  }
  const entry = decodeLogEntry(bytes);
  if (entry.kind !== "anchor") fail(`log entry ${b.index} is not an anchor entry`);
  let size;
  let root;
  if (policy) {
    try {
      size = (await proveEntry(b, policy)).size;
    } catch (e) {
      if (e instanceof CheckFailed) fail(`the anchor entry: ${e.message}`);
      throw e;
    }
    root = parseCheckpointNote(b.checkpoint).root;
  } else {
    const cp = parseCheckpointNote(b.checkpoint);
    if (!Number.isSafeInteger(b.index) || b.index < 0) fail("the anchor entry's index is not a count");
    if (!Array.isArray(b.proof)) fail("the anchor entry's proof is not a list");
    const path = b.proof.map((h) => {
      const x = base64ToBytes(h, "audit path hash");
      return x.length === 32 ? x : fail(`${quoted(h)} is not a base64 SHA-256 hash`);
    });
    if (BigInt(b.index) >= cp.size) fail(`the anchor entry: entry ${b.index} is not in a tree of ${cp.size}`);
    let got = null;
    try {
      got = await rootFromPath(await leafHash(bytes), b.index, cp.size, path);
    } catch (e) {
      if (!(e instanceof CheckFailed)) throw e;
    }
    if (!got || !bytesEqual(got, cp.root)) {
      fail(`the anchor entry: the inclusion proof of entry ${b.index} in ${cp.size}: invalid transparency proof`);
    }
    size = cp.size;
    root = cp.root;
  }
  if (size !== BigInt(b.index) + 1n) {
    fail(`the anchor entry is entry ${b.index} of a log of ${size}: the bound log ends with it (size ${b.index + 1})`);
  }
  let cosignedBy = [];
  // `quorum none` requires no cosignature: nothing to read in an empty `cosigned`.
  if (policy && (policy.quorum !== null || (log.cosigned ?? []).length > 0)) {
    const c = await proveAll("anchor entry", log.cosigned ?? [], policy);
    if (c.index !== b.index || c.entry.kind !== "anchor" || !sameAnchor(c.entry, entry)) {
      fail(`the cosigned anchor entry (entry ${c.index}) is not the bound one (entry ${b.index})`);
    }
    cosignedBy = policy.witnesses
      .filter((w) => c.earliest.has(`${w.key.name}+${hex8(w.key.id)}`))
      .map((w) => w.name)
      .sort();
    if (!quorumSatisfied(policy, cosignedBy)) {
      fail(
        `anchor batch ${entry.batch}'s entry is cosigned by [${cosignedBy.join(", ")}], short of the quorum ${describeQuorum(policy)}`,
      );
    }
  }
  return { entry, index: b.index, size, root, cosignedBy };
}

/** u64 big-endian of a BigInt or a safe integer. */
function u64be(v) {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(v));
  return out;
}

/** An anchor entry (or claim) in words, as the Rust verifier's details give it. */
export function describeAnchor(e) {
  return `batch ${e.batch} (epochs ${e.first_epoch}..=${e.last_epoch}, pool batches ${e.pool_from}..${e.pool_to}, notary batches ${e.notary_from}..${e.notary_to}, root ${bytesToHex(e.root)})`;
}

const sameAnchor = (a, b) =>
  ["batch", "first_epoch", "last_epoch", "pool_from", "pool_to", "notary_from", "notary_to"].every((k) => BigInt(a[k]) === BigInt(b[k])) &&
  bytesEqual(a.root, b.root);

/**
 * §16 "Binding": the calldata (`0x` hex) the anchor batch a proof claims must carry, and what
 * binds it, in words: {calldata, detail}. `claim` = {batch, first_epoch, last_epoch, pool_from,
 * pool_to, notary_from, notary_to (counts), root (32 bytes)}. With `log` (the batch's
 * `anchor.log`, checked by anchorBound), its entry must be the claim, and the calldata is
 * "vrs-anchor-v2:" ‖ u64(n) ‖ u64(log size) ‖ log root ‖ root, or "vrs-anchor-v1:" ‖ root when
 * the calldata shown is version 1 (`shownV1`: sent before the log held the entry). Without it
 * (null or undefined), version 1, refused under a policy (it binds no batch number). Throws
 * CheckFailed.
 */
export async function expectedAnchorCalldata(claim, shownV1, log, policy) {
  const { batch, root } = claim;
  if (log === undefined || log === null) {
    if (policy) {
      fail(
        `anchor batch ${batch} has no entry in the operator's log (version-1 calldata, which binds no batch number): under a witness policy one root per batch rests on the quorum's cosigning of that entry`,
      );
    }
    return {
      calldata: CALLDATA_PREFIX + bytesToHex(root),
      detail: "version-1 calldata binds no batch number: that batch has one root is the operator's word",
    };
  }
  let b;
  try {
    b = await anchorBound(log, policy);
  } catch (e) {
    if (e instanceof CheckFailed) fail(`anchor.log: ${e.message}`);
    throw e;
  }
  if (!sameAnchor(b.entry, claim)) {
    fail(`anchor.log's entry is ${describeAnchor(b.entry)}, not the ${describeAnchor(claim)} the proof claims`);
  }
  const whose = policy ? `cosigned by [${b.cosignedBy.join(", ")}]` : "unchecked against a witness policy: the log's word";
  const detail = `batch ${batch} bound to the log of size ${b.size} (its entry ${b.index}, ${whose})`;
  if (shownV1) {
    return { calldata: CALLDATA_PREFIX + bytesToHex(root), detail: `${detail}; version-1 calldata, sent before the log held the entry` };
  }
  return { calldata: CALLDATA_V2_PREFIX + bytesToHex(concat(u64be(batch), u64be(b.size), b.root, root)), detail };
}

/** T / S in seconds to three decimals, from integers (rounded half up). */
function seconds3(t, s) {
  const q = (t * 2000n + s) / (2n * s);
  return `${q / 1000n}.${String(q % 1000n).padStart(3, "0")}`;
}

/**
 * The record a verifier was shown for epoch e, from a proof (GET /api/v1/verify's `proof`): what
 * the logged entries must equal (§21 "The witnessed step", rule 3). Strings: decimal integers
 * and lowercase hex. Throws CheckFailed for a member that is missing or malformed.
 */
export function shownOfProof(proof) {
  const p = proof ?? {};
  const t = p.timing && typeof p.timing === "object" ? p.timing : {};
  const n = (v, what) => {
    if (!Number.isSafeInteger(v) || v < 0) fail(`${what} is missing or not a count`);
    return String(v);
  };
  return {
    epoch: n(p.vdfEpoch, "vdfEpoch"),
    previous_epoch: n(t.previous_epoch, "timing.previous_epoch"),
    bets_root: bytesToHex(hexToBytes(p.bets_root, 32, "bets_root")),
    bet_count: n(p.bet_count, "bet_count"),
    nonce: bytesToHex(hexToBytes(t.nonce, 32, "timing.nonce")),
    iterations: n(p.iterations, "iterations"),
    margin_centi: String(marginCenti(t.security_margin, "timing.security_margin")),
    squarings_per_second: n(t.squarings_per_second, "timing.squarings_per_second"),
    opened_at_ms: n(t.opened_at_ms, "timing.opened_at_ms"),
    closed_at_ms: n(t.closed_at_ms, "timing.closed_at_ms"),
    deadline_ms: n(t.deadline_ms, "timing.deadline_ms"),
    // The bytes of y_p seed_e takes; rule 3 compares their SHA-256 with p's output entry.
    previous_output: bytesToHex(hexToBytes(p.previous_output, undefined, "previous_output")),
  };
}

/** Rule 3: the record judged is the logged one. Every shown field must equal the logged
 *  commitment's, and the plan's shared fields and deadline must equal them too; the shown
 *  previous output must hash to p's logged output (`output`: its entry, null for p = 0). */
async function checkShown(plan, c, output, shown) {
  const str = (v) => (v instanceof Uint8Array ? bytesToHex(v) : String(v));
  if (output) {
    const h = bytesToHex(await sha256(hexToBytes(shown.previous_output, undefined, "previous_output")));
    if (h !== bytesToHex(output.output_hash)) {
      fail(
        `the epoch record shown is not the one logged: previous_output hashes to ${h}, the log's output of ` +
          `epoch ${output.epoch} says ${bytesToHex(output.output_hash)}`,
      );
    }
  }
  const fields = [
    ["epoch", "commitment", c.epoch, shown.epoch],
    ["previous_epoch", "commitment", c.previous, shown.previous_epoch],
    ["bets_root", "commitment", c.bets_root, shown.bets_root],
    ["bet_count", "commitment", c.bet_count, shown.bet_count],
    ["nonce", "commitment", c.nonce, shown.nonce],
    ["iterations", "commitment", c.iterations, shown.iterations],
    ["security_margin (hundredths)", "commitment", c.margin_centi, shown.margin_centi],
    ["squarings_per_second", "commitment", c.squarings_per_second, shown.squarings_per_second],
    ["opened_at_ms", "commitment", c.opened_ms, shown.opened_at_ms],
    ["closed_at_ms", "commitment", c.closed_ms, shown.closed_at_ms],
    ["deadline_ms", "plan", plan.deadline_ms, shown.deadline_ms],
    ["previous_epoch", "plan", plan.previous, shown.previous_epoch],
    ["iterations", "plan", plan.iterations, shown.iterations],
    ["security_margin (hundredths)", "plan", plan.margin_centi, shown.margin_centi],
    ["squarings_per_second", "plan", plan.squarings_per_second, shown.squarings_per_second],
    ["opened_at_ms", "plan", plan.opened_ms, shown.opened_at_ms],
  ];
  for (const [name, whose, logged, served] of fields) {
    if (str(logged) !== String(served)) {
      fail(`the epoch record shown is not the one logged: ${name} is ${served}, the log's ${whose} says ${str(logged)}`);
    }
  }
}

/**
 * The `witnessed` step over an epoch's plan and commitment, each a list of LoggedEntry (the
 * same entry in every checkpoint the operator holds cosigned for it). `policy`: parsePolicy's
 * result (or policy text, parsed here). Options: `maxRate` (S, required), `deltaMs` (δ, default
 * 2000), `previousOutput` (the LoggedEntry list of p's output entry, the proof log's
 * `previous_output`; required for p ≥ 1, empty or absent for p = 0), `shown` (shownOfProof's
 * record: rule 3, checked once the rest passes). Resolves with a detail string, or rejects
 * with CheckFailed.
 */
export async function checkWitnessed(planList, commitmentList, policy, options = {}) {
  if (typeof policy === "string") policy = await parsePolicy(policy);
  const S = parseMaxRate(options.maxRate);
  const delta = parseDeltaMs(options.deltaMs ?? DEFAULT_DELTA_MS);
  const p = await proveAll("plan", planList, policy);
  const c = await proveAll("commitment", commitmentList, policy);
  if (p.entry.kind !== "plan") fail(`entry ${p.index} is a ${p.entry.kind}, not a plan`);
  if (c.entry.kind !== "commitment") fail(`entry ${c.index} is a ${c.entry.kind}, not a commitment`);
  const plan = p.entry;
  const e = plan.epoch;
  if (e !== c.entry.epoch) fail(`the plan is epoch ${e}'s and the commitment epoch ${c.entry.epoch}'s`);
  if (p.index >= c.index) fail("the commitment comes before the plan in the log");
  // y_p is fixed when p's output is logged: for p ≥ 1 one more input of x_e to time.
  const outputList = options.previousOutput ?? [];
  let o = null;
  if (plan.previous === 0n) {
    if (!Array.isArray(outputList) || outputList.length) {
      fail(`epoch ${e} takes the genesis output y_0: no output entry belongs to it`);
    }
  } else {
    o = await proveAll(`output of epoch ${plan.previous}`, outputList, policy);
    if (o.entry.kind !== "output") fail(`entry ${o.index} is a ${o.entry.kind}, not an output`);
    if (o.entry.epoch !== plan.previous) {
      fail(`the output logged is epoch ${o.entry.epoch}'s; epoch ${e} takes that of epoch ${plan.previous}`);
    }
  }

  const inTime = [];
  const late = [];
  for (const w of policy.witnesses) {
    const who = `${w.key.name}+${hex8(w.key.id)}`;
    const tp = p.earliest.get(who);
    const tc = c.earliest.get(who);
    if (tp === undefined || tc === undefined) continue;
    const to = o ? o.earliest.get(who) : tc;
    if (to === undefined) continue;
    const last = to > tc ? to : tc;
    // + 1: cosignatures carry whole seconds; + δ: bets count from the stamped opening, which
    // may precede the plan's cosignature by δ.
    const end = (last + 1n) * 1000n + delta;
    const spanMs = end > plan.opened_ms ? end - plan.opened_ms : 0n;
    const okPlan = tp * 1000n <= plan.opened_ms + delta;
    const okClose = tc * 1000n <= plan.deadline_ms + delta;
    const okWindow = tc >= tp && spanMs * S <= plan.iterations * 1000n;
    if (okPlan && okClose && okWindow) {
      inTime.push(w.name);
    } else {
      late.push(
        `${w.name}: plan at ${tp} s${okPlan ? "" : " (after the opening + δ)"}, ` +
          `commitment at ${tc} s${okClose ? "" : " (after the deadline + δ)"}` +
          (o ? `, output of epoch ${o.entry.epoch} at ${to} s` : "") +
          `, ${spanMs} ms after the opening` +
          (okWindow ? "" : ` (T_e / S = ${plan.iterations} / ${S} allows under ${seconds3(plan.iterations, S)} s)`),
      );
    }
  }
  const quorum = describeQuorum(policy);
  if (!quorumSatisfied(policy, inTime)) {
    fail(
      `epoch ${e}: cosigned in time by [${inTime.join(", ")}], short of the quorum ${quorum}` +
        (late.length ? `; not in time: ${late.join("; ")}` : ""),
    );
  }
  if (options.shown) await checkShown(plan, c.entry, o && o.entry, options.shown);
  const entries = o
    ? `plan (entry ${p.index}), commitment (entry ${c.index}) and output of epoch ${o.entry.epoch} (entry ${o.index})`
    : `plan (entry ${p.index}) and commitment (entry ${c.index})`;
  return (
    `epoch ${e}: ${entries} cosigned in time by ` +
    `${inTime.length ? inTime.join(", ") : "no witness"} (quorum ${quorum}; S = ${S} squarings/s, δ = ${delta} ms)`
  );
}

// ---------------------------------------------------------------------------------------------
// Moved games (§21, "Moved games: the `moved` step")
// ---------------------------------------------------------------------------------------------

/** One entry from the bytes of its LoggedEntry list, nothing proven (the `moved` step without a
 *  policy): all of one index and bytes, the index a count, the bytes an entry. */
function readAll(what, list) {
  const first = list[0];
  if (first === null || typeof first !== "object") fail(`the ${what}'s first logged entry is not an object`);
  for (const l of list) {
    if (l === null || typeof l !== "object" || l.index !== first.index || l.entry !== first.entry) {
      fail(`the ${what}'s checkpoints name different entries (${first.index} and ${l && l.index})`);
    }
  }
  if (!Number.isSafeInteger(first.index) || first.index < 0) fail(`the ${what}: the entry's index is not a count`);
  let bytes;
  try {
    bytes = hexToBytes(first.entry, undefined, "the entry");
  } catch {
    fail(`the ${what}: the entry is not hex`);
  }
  try {
    return { entry: decodeLogEntry(bytes), index: first.index, earliest: null };
  } catch (e) {
    if (e instanceof CheckFailed) fail(`the ${what}: ${e.message}`);
    throw e;
  }
}

/** A proof's `log.moves` as a list: absent and null read as empty; anything else but a list is
 *  refused. */
function movesOf(proof) {
  const log = proof !== null && typeof proof === "object" ? proof.log : undefined;
  const moves = log !== null && typeof log === "object" ? log.moves : undefined;
  if (moves === undefined || moves === null) return [];
  if (!Array.isArray(moves)) fail("the proof's log.moves is not a list");
  return moves;
}

/**
 * The first move entry of a moved game's proof, from the bytes of the first LoggedEntry of
 * `log.moves[0]` (nothing proven: the `moved` step proves it): {kind: "move", epoch, to,
 * bets_root, bet_count}, the tree of epoch e that the game's leaf and audit path lead to (its
 * `merkle_inclusion`). Throws CheckFailed when there is no move, or that entry is not a move.
 */
export function firstMove(proof) {
  const moves = movesOf(proof);
  if (moves.length === 0) fail("the proof names no move");
  const list = moves[0];
  if (!Array.isArray(list) || list.length === 0) fail("log.moves[0] holds no logged entry");
  const l = list[0];
  if (l === null || typeof l !== "object") fail("log.moves[0]'s first logged entry is not an object");
  let bytes;
  try {
    bytes = hexToBytes(l.entry, undefined, "the entry");
  } catch {
    fail("the first move's entry (log.moves[0]) is not hex");
  }
  let entry;
  try {
    entry = decodeLogEntry(bytes);
  } catch (e) {
    if (e instanceof CheckFailed) fail(`the first move's entry (log.moves[0]): ${e.message}`);
    throw e;
  }
  if (entry.kind !== "move") fail(`the first move's entry (log.moves[0], entry ${l.index}) is a ${entry.kind} entry, not a move`);
  return entry;
}

/**
 * The `moved` step (§21, "Moved games") of a proof whose game was accepted into epoch
 * `moved_from` and moved, by the move entries of `log.moves` (one LoggedEntry list per move, in
 * order), to the epoch `vdfEpoch` whose outcome it takes. It passes when:
 *
 *   1. `moved_from` is an epoch number and `log.moves` a non-empty list;
 *   2. each element is a non-empty list of LoggedEntry of one index and one entry, a move
 *      (e_i, d_i);
 *   3. e_1 = moved_from, d_i = e_(i+1), the last d = vdfEpoch (D), the indices strictly
 *      increase, and the last is below that of D's commitment (`log.commitment`, non-empty);
 *   4. under `policy` (parsePolicy's result, or its text), every LoggedEntry is proven
 *      (checkpoint, cosignatures, audit path: proveEntry) and each move's checkpoints are
 *      cosigned, at any time, by witnesses that satisfy the quorum.
 *
 * With `policy` null only 1–3 are checked, from the entries' bytes. Resolves with a detail
 * string naming the chain, or rejects with CheckFailed.
 */
export async function checkMoved(proof, policy = null) {
  if (typeof policy === "string") policy = await parsePolicy(policy);
  const p = proof !== null && typeof proof === "object" ? proof : {};
  // 1. A move and the epoch it starts from.
  const moves = movesOf(p);
  if (moves.length === 0) fail("the proof names no move");
  if (p.moved_from === undefined || p.moved_from === null) fail("the proof shows moves but names no epoch they move from");
  if (!Number.isSafeInteger(p.moved_from) || p.moved_from < 0) fail(`moved_from ${JSON.stringify(p.moved_from)} is not an epoch number`);
  const D = p.vdfEpoch;
  if (!Number.isSafeInteger(D) || D < 0) fail("vdfEpoch is missing or not a count");

  // 2. (and 4's proofs) One move entry per list.
  const chain = [];
  for (let i = 0; i < moves.length; i++) {
    const list = moves[i];
    if (!Array.isArray(list)) fail(`log.moves[${i}] is not a list`);
    if (list.length === 0) fail(`log.moves[${i}] is empty: no checkpoint holds its move`);
    const what = `move in log.moves[${i}]`;
    const m = policy ? await proveAll(what, list, policy) : readAll(what, list);
    if (m.entry.kind !== "move") fail(`log.moves[${i}] holds entry ${m.index}, a ${m.entry.kind} entry, not a move`);
    chain.push(m);
  }

  // 3. The chain: from moved_from, link by link, to D, in log order, before D's commitment.
  const first = chain[0];
  if (first.entry.epoch !== BigInt(p.moved_from)) {
    fail(`the first move (entry ${first.index}) moves the games of epoch ${first.entry.epoch}, but the game was accepted into epoch ${p.moved_from} (moved_from)`);
  }
  for (let i = 1; i < chain.length; i++) {
    const [a, b] = [chain[i - 1], chain[i]];
    if (a.entry.to !== b.entry.epoch) {
      fail(
        `the chain of moves is broken: log.moves[${i - 1}] (entry ${a.index}) sends epoch ${a.entry.epoch}'s games to epoch ${a.entry.to}, ` +
          `but log.moves[${i}] (entry ${b.index}) moves epoch ${b.entry.epoch}'s`,
      );
    }
  }
  const last = chain[chain.length - 1];
  if (last.entry.to !== BigInt(D)) {
    fail(`the last move (entry ${last.index}) sends the games to epoch ${last.entry.to}, but the proof is epoch ${D}'s (vdfEpoch)`);
  }
  for (let i = 1; i < chain.length; i++) {
    const [a, b] = [chain[i - 1], chain[i]];
    if (b.index <= a.index) {
      fail(`log.moves[${i}] (entry ${b.index}) is not logged after log.moves[${i - 1}] (entry ${a.index}): a chain of moves follows the log's order`);
    }
  }
  const log = p.log;
  const cl = log.commitment;
  if (cl !== undefined && cl !== null && !Array.isArray(cl)) fail("the proof's log.commitment is not a list");
  if (!Array.isArray(cl) || cl.length === 0) {
    fail(`the log shows no commitment of epoch ${D}: nothing places the moves before its input was fixed`);
  }
  const c = readAll(`commitment of epoch ${D}`, cl);
  if (c.entry.kind !== "commitment" || c.entry.epoch !== BigInt(D)) {
    const is = c.entry.kind === "commitment" ? `epoch ${c.entry.epoch}'s commitment` : `a ${c.entry.kind} entry`;
    fail(`log.commitment holds entry ${c.index}, ${is}, not epoch ${D}'s commitment`);
  }
  // One log: every move is shown in checkpoints of the origin D's commitment is (a policy may
  // name several logs, and the witnesses' rule 9 holds within each).
  const originOf = (l) => (typeof l?.checkpoint === "string" ? l.checkpoint.split("\n")[0] : undefined);
  const origin = originOf(cl[0]);
  for (const list of moves) {
    for (const l of list) {
      if (originOf(l) !== origin) {
        fail(`entry ${l.index} is shown in a checkpoint of another log than epoch ${D}'s commitment (${origin})`);
      }
    }
  }
  if (last.index >= c.index) {
    fail(
      `the last move (entry ${last.index}) is not logged before epoch ${D}'s commitment (entry ${c.index}): ` +
        `the games reached epoch ${D} after its input was fixed`,
    );
  }

  // 4. Each move cosigned by the quorum, at any time (a move carries no stamp).
  const cosigned = [];
  if (policy) {
    for (const m of chain) {
      const by = policy.witnesses
        .filter((w) => m.earliest.has(`${w.key.name}+${hex8(w.key.id)}`))
        .map((w) => w.name)
        .sort();
      if (!quorumSatisfied(policy, by)) {
        fail(
          `the move of epoch ${m.entry.epoch} to epoch ${m.entry.to} (entry ${m.index}) is cosigned by [${by.join(", ")}], ` +
            `short of the quorum ${describeQuorum(policy)}`,
        );
      }
      cosigned.push(by);
    }
  }
  const hops = chain.map((m, i) => {
    const to = `${i === 0 ? "its games moved to" : "then to"} epoch ${m.entry.to} (entry ${m.index})`;
    return policy ? `${to}, cosigned by [${cosigned[i].join(", ")}]` : to;
  });
  const detail = `epoch ${p.moved_from} is void: ${hops.join(", ")}; logged before epoch ${D}'s commitment (entry ${c.index})`;
  return policy ? detail : `${detail}; not checked against a witness policy: the moves are the log's word`;
}
