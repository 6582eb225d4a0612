// vrs in-browser verifier: the core.
//
// Recomputes every check of a vrs game from the server's public JSON API, independently of the
// server's own `verified` flag and `checks`, following docs/PROTOCOL.md (sections 1-16) and
// docs/GAMES.md byte for byte. Plain ES module with no dependencies: it uses only fetch, BigInt,
// TextEncoder and globalThis.crypto.subtle (SHA-256, SHA-512, HMAC-SHA256), so the same file runs
// in a browser (served at /assets/vrs-verify.mjs) and in Node 20. Epochs in a class group
// (`classgroup-<bits>`, chiavdf's VDF, sections 18 and 19) are checked by vrs-classgroup.mjs,
// served beside it; acceptance signatures (Ed25519, section 11) are checked here, in BigInt.
//
//   import { verifyGame } from "./vrs-verify.mjs";
//   const r = await verifyGame("http://127.0.0.1:8080", gameId, (step) => console.log(step));
//   r.verified; r.steps; r.dice;
//
// Every wrong value is a failed step; only a response that is not a verification at all (unknown
// game, pending game, network failure, not JSON) throws a VerifyError.

import {
  ClassGroupError,
  FORM_SIZE,
  L_BYTES,
  classGroupBits,
  createDiscriminant,
  generatorBytes,
  isClassGroupId,
  parseDiscriminant,
  verifyEpoch,
} from "./vrs-classgroup.mjs";

const subtle = globalThis.crypto && globalThis.crypto.subtle;
const utf8 = new TextEncoder();

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Thrown when there is nothing to verify. `kind`: invalid_id | not_found | pending | network |
 *  http | bad_response. `status` is the HTTP status where there was one. */
export class VerifyError extends Error {
  constructor(kind, message, extra = {}) {
    super(message);
    this.name = "VerifyError";
    this.kind = kind;
    Object.assign(this, extra);
  }
}

/** A failed check: thrown inside a check, caught by it and turned into `passed: false`. */
export class CheckFailed extends Error {
  constructor(message) {
    super(message);
    this.name = "CheckFailed";
  }
}
const fail = (msg) => {
  throw new CheckFailed(msg);
};

// ---------------------------------------------------------------------------------------------
// Bytes, hex, integers
// ---------------------------------------------------------------------------------------------

/** Strict hex (either case, no 0x, even length) to bytes; `nbytes` fixes the length. */
export function hexToBytes(text, nbytes, what = "value") {
  if (typeof text !== "string") fail(`${what} is missing or not a string`);
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) fail(`${what} is not plain hex`);
  if (nbytes !== undefined && text.length !== 2 * nbytes) {
    fail(`${what} has ${text.length} hex digits, expected ${2 * nbytes}`);
  }
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(2 * i, 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  let s = "";
  for (const b of bytes) s += b.toString(16).padStart(2, "0");
  return s;
}

export function concat(...parts) {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function bytesEqual(a, b) {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

/** Big-endian unsigned encoding of `v` (Number or BigInt) in `n` bytes. */
export function uint(v, n) {
  let x = BigInt(v);
  if (x < 0n || x >= 1n << BigInt(8 * n)) throw new RangeError(`${v} does not fit in ${n} bytes`);
  const out = new Uint8Array(n);
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}
export const u8 = (v) => uint(v, 1);
export const u16 = (v) => uint(v, 2);
export const u32 = (v) => uint(v, 4);
export const u64 = (v) => uint(v, 8);

/** f(s) of PROTOCOL.md: u16(len(UTF-8(s))) ‖ UTF-8(s). */
export function field(s) {
  const b = utf8.encode(s);
  return concat(u16(b.length), b);
}

export function bytesToBigInt(bytes) {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

export function bigIntToBytes(v, n) {
  return uint(v, n);
}

export function bitLength(v) {
  return v === 0n ? 0 : v.toString(2).length;
}

const mod = (a, m) => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

/** base^exp mod m, left to right with a 4-bit fixed window. */
export function modPow(base, exp, m) {
  if (m === 1n) return 0n;
  base = mod(base, m);
  if (exp === 0n) return 1n;
  const table = [1n, base];
  for (let i = 2; i < 16; i++) table.push((table[i - 1] * base) % m);
  const hexExp = exp.toString(16);
  let r = 1n;
  for (let i = 0; i < hexExp.length; i++) {
    if (i > 0) {
      r = (r * r) % m;
      r = (r * r) % m;
      r = (r * r) % m;
      r = (r * r) % m;
    }
    const d = parseInt(hexExp[i], 16);
    if (d !== 0) r = (r * table[d]) % m;
  }
  return r;
}

/** Integer square root (floor), by Newton's method. */
export function isqrt(n) {
  if (n < 0n) throw new RangeError("isqrt of a negative number");
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

// ---------------------------------------------------------------------------------------------
// Hashes (WebCrypto)
// ---------------------------------------------------------------------------------------------

function needSubtle() {
  if (!subtle) {
    throw new VerifyError(
      "bad_response",
      "this browser has no WebCrypto (crypto.subtle); open the page over https or from localhost",
    );
  }
}

export async function sha256(bytes) {
  needSubtle();
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

export async function hmacSha256(key, message) {
  needSubtle();
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", k, message));
}

export async function sha512(bytes) {
  needSubtle();
  return new Uint8Array(await subtle.digest("SHA-512", bytes));
}

/** H_tag(fields) = SHA-256(u8(len(tag)) ‖ tag ‖ fields), PROTOCOL.md §2. */
export async function taggedHash(tag, ...fields) {
  const t = utf8.encode(tag);
  return sha256(concat(u8(t.length), t, ...fields));
}

// ---------------------------------------------------------------------------------------------
// Section 1: moduli, encodings
// ---------------------------------------------------------------------------------------------

export const MODULI = {
  rsa2048:
    "c7970ceedcc3b0754490201a7aa613cd73911081c790f5f1a8726f463550bb5b7ff0db8e1ea1189ec72f93d1650011bd" +
    "721aeeacc2acde32a04107f0648c2813a31f5b0b7765ff8b44b4b6ffc93384b646eb09c7cf5e8592d40ea33c80039f35" +
    "b4f14a04b51f7bfd781be4d1673164ba8eb991c2c4d730bbbe35f592bdef524af7e8daefd26c66fc02c479af89d64d37" +
    "3f442709439de66ceb955f3ea37d5159f6135809f85334b5cb1813addc80cd05609f10ac6a95ad65872c909525bdad32" +
    "bc729592642920f24c61dc5b3c3b7923e56b16a4d9d373d8721f24a3fc0f1b3131f55615172866bccc30f95054c824e7" +
    "33a5eb6817f7bc16399d48c6361cc7e5",
  test512:
    "c568b9f1b880e96816234f4c113b37517999ad9d548be8f75ea694a6bd552a3080362ae464c6737f99681bfb8cda0baf" +
    "a6255918984658de47b853ee50f01e4b",
  test1024:
    "c005415fc5e7e7a7ee518502e49bd810b3589b07ff253b9bebe5e4d59a0107d9e1b91427c8b6c8e532882bcb5210dd02" +
    "06b7bfcd18b48d47ec392145018874a9baebd041afa7bf7e079c20da3ffe4a7e19cb4da8295f288118810abb0ed46970" +
    "93bdd4c58d9e1fd23e73a03f0e7e0af9c0e1c5cec9a3ae365f1412ad4138652b",
};

/** The modulus N of a modulus id (rsa2048, test512, test1024, hex:<digits>). */
export function modulusFromId(id) {
  if (typeof id !== "string") fail("modulus id is missing");
  if (Object.prototype.hasOwnProperty.call(MODULI, id)) return BigInt("0x" + MODULI[id]);
  if (id.startsWith("hex:")) {
    const digits = id.slice(4);
    if (!/^[0-9a-fA-F]+$/.test(digits)) fail(`bad hex modulus id ${JSON.stringify(id)}`);
    const n = BigInt("0x" + digits);
    const bits = bitLength(n);
    if (n % 2n === 0n || bits < 64 || bits > 2048) fail("a hex modulus must be odd and of 64 to 2048 bits");
    return n;
  }
  fail(`unknown modulus id ${JSON.stringify(id)}`);
}

/** k = ⌈bits(N) / 8⌉. */
export const byteLength = (n) => Math.ceil(bitLength(n) / 8);

/** canon(v) = min(v, N − v) for v reduced mod N. */
export function canon(v, n) {
  v = mod(v, n);
  return v <= n - v ? v : n - v;
}

/** Section 1 decoding: refuse a wrong length, 0, v > (N − 1)/2, and 1 for an input. */
export function decodeElement(hex, n, what, isInput = false) {
  const k = byteLength(n);
  const v = bytesToBigInt(hexToBytes(hex, k, what));
  if (v === 0n) fail(`${what} is 0`);
  if (v > (n - 1n) / 2n) fail(`${what} is not canonical (greater than (N − 1)/2)`);
  if (isInput && v === 1n) fail(`${what} is 1 (the class ±1)`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Section 3: hash to group
// ---------------------------------------------------------------------------------------------

export async function hashToGroup(seed, n) {
  if (seed.length !== 32) fail("a seed must be 32 bytes");
  const k = byteLength(n);
  const L = k + 16;
  const B = Math.ceil(L / 32);
  const prefix = concat(u16(k), bigIntToBytes(n, k), seed);
  for (let a = 0; ; a++) {
    const blocks = [];
    for (let i = 0; i < B; i++) {
      blocks.push(await taggedHash("vrs/v1/hash-to-group", prefix, u32(a), u32(i)));
    }
    const s = concat(...blocks).slice(0, L);
    const x = canon(bytesToBigInt(s) % n, n);
    if (x >= 2n) return x;
  }
}

// ---------------------------------------------------------------------------------------------
// Section 5: hash to prime with Baillie-PSW
// ---------------------------------------------------------------------------------------------

const SMALL_ODD_PRIMES = (() => {
  const out = [];
  for (let p = 3; p < 1000; p += 2) {
    let prime = true;
    for (let q = 3; q * q <= p; q += 2) {
      if (p % q === 0) {
        prime = false;
        break;
      }
    }
    if (prime) out.push(BigInt(p));
  }
  return out;
})();

/** Jacobi symbol (a/n) for odd n > 0. */
export function jacobi(a, n) {
  if (n <= 0n || n % 2n === 0n) throw new RangeError("jacobi: n must be odd and positive");
  a = mod(a, n);
  let result = 1;
  while (a !== 0n) {
    while (a % 2n === 0n) {
      a /= 2n;
      const r = n % 8n;
      if (r === 3n || r === 5n) result = -result;
    }
    [a, n] = [n, a];
    if (a % 4n === 3n && n % 4n === 3n) result = -result;
    a = mod(a, n);
  }
  return n === 1n ? result : 0;
}

function strongProbablePrimeBase2(c) {
  let d = c - 1n;
  let s = 0;
  while (d % 2n === 0n) {
    d /= 2n;
    s++;
  }
  let z = modPow(2n, d, c);
  if (z === 1n || z === c - 1n) return true;
  for (let r = 1; r < s; r++) {
    z = (z * z) % c;
    if (z === c - 1n) return true;
  }
  return false;
}

/** (U_m, V_m, Q^m) mod c for the Lucas sequences of (P, Q), D = P² − 4Q. */
function lucasUV(m, p, q, dd, c) {
  const half = (z) => {
    z = mod(z, c);
    return (z % 2n === 0n ? z : z + c) / 2n;
  };
  let u = 0n;
  let v = 2n;
  let qk = 1n;
  for (const bit of m.toString(2)) {
    [u, v, qk] = [(u * v) % c, mod(v * v - 2n * qk, c), (qk * qk) % c];
    if (bit === "1") {
      [u, v] = [half(p * u + v), half(dd * u + p * v)];
      qk = mod(qk * q, c);
    }
  }
  return [mod(u, c), mod(v, c), mod(qk, c)];
}

function strongLucasProbablePrime(c) {
  let dd = 5n;
  for (;;) {
    const j = jacobi(dd, c);
    if (j === -1) break;
    if (j === 0 && (dd < 0n ? -dd : dd) !== c) return false;
    dd = dd > 0n ? -(dd + 2n) : -(dd - 2n);
  }
  const p = 1n;
  const q = (1n - dd) / 4n;
  let d = c + 1n;
  let s = 0;
  while (d % 2n === 0n) {
    d /= 2n;
    s++;
  }
  let [u, v, qk] = lucasUV(d, p, q, dd, c);
  if (u === 0n || v === 0n) return true;
  for (let r = 1; r < s; r++) {
    v = mod(v * v - 2n * qk, c);
    qk = (qk * qk) % c;
    if (v === 0n) return true;
  }
  return false;
}

/** The Baillie-PSW test exactly as PROTOCOL.md §5 lists it. */
export function isProbablePrime(c) {
  c = BigInt(c);
  if (c < 2n) return false;
  if (c % 2n === 0n) return c === 2n;
  for (const p of SMALL_ODD_PRIMES) {
    if (c === p) return true;
    if (c % p === 0n) return false;
  }
  if (!strongProbablePrimeBase2(c)) return false;
  const r = isqrt(c);
  if (r * r === c) return false;
  return strongLucasProbablePrime(c);
}

/** ℓ = the first c = H(u16(k) ‖ N_k ‖ x_k ‖ y_k ‖ u64(T) ‖ u64(j)) | 2^255 | 1 that is prime. */
export async function hashToPrime(n, x, y, t) {
  const k = byteLength(n);
  const prefix = concat(u16(k), bigIntToBytes(n, k), bigIntToBytes(x, k), bigIntToBytes(y, k), u64(t));
  const top = (1n << 255n) | 1n;
  for (let j = 0; ; j++) {
    const c = bytesToBigInt(await taggedHash("vrs/v1/hash-to-prime", prefix, u64(j))) | top;
    if (isProbablePrime(c)) return c;
  }
}

// ---------------------------------------------------------------------------------------------
// Section 7: Wesolowski verification
// ---------------------------------------------------------------------------------------------

/** T as a BigInt with 1 ≤ T < 2^64, or a failure. */
export function parseIterations(t) {
  let v;
  if (typeof t === "number" && Number.isSafeInteger(t)) v = BigInt(t);
  else if (typeof t === "bigint") v = t;
  else if (typeof t === "string" && /^[0-9]+$/.test(t)) v = BigInt(t);
  else fail("iterations is missing or not an integer");
  if (v < 1n) fail("T must be at least 1");
  if (v >= 1n << 64n) fail("T must be below 2^64");
  return v;
}

/** Section 7 on hex encodings; resolves with a detail string, or throws CheckFailed. */
export async function verifyWesolowski(n, { x, y, pi, l, iterations }) {
  const xv = decodeElement(x, n, "x", true);
  const yv = decodeElement(y, n, "y");
  const piv = decodeElement(pi, n, "π");
  const lv = bytesToBigInt(hexToBytes(l, 32, "ℓ"));
  const t = parseIterations(iterations);
  const l2 = await hashToPrime(n, xv, yv, t);
  if (l2 !== lv) fail("ℓ is not hash_to_prime(N, x, y, T)");
  const r = modPow(2n, t, lv);
  const w = canon((modPow(piv, lv, n) * modPow(xv, r, n)) % n, n);
  if (w !== yv) fail("π^ℓ · x^(2^T mod ℓ) ≠ y");
  return `π^ℓ · x^(2^T mod ℓ) = y for T = ${t}`;
}

// ---------------------------------------------------------------------------------------------
// Section 10: epochs
// ---------------------------------------------------------------------------------------------

export async function epochSeed(e, prevY, betsRoot, t) {
  return taggedHash("vrs/v1/epoch-input", u64(e), prevY, betsRoot, u64(t));
}

/** y_0 of a modulus id, as k bytes. */
export async function genesisOutput(modulusId, n) {
  const id = utf8.encode(modulusId);
  const seed = await taggedHash("vrs/v1/genesis", u16(id.length), id);
  return bigIntToBytes(await hashToGroup(seed, n), byteLength(n));
}

/** seed_e of a version-2 epoch (one that commits to its timing, PROTOCOL.md §10): H over
 *  u64(e) ‖ u64(p) ‖ y_p ‖ bets_root ‖ nonce ‖ u64(T) ‖ u64(opened) ‖ u64(closed) ‖
 *  u32(margin_centi) ‖ u64(squarings_per_second). */
export async function epochSeedV2(e, p, prevY, betsRoot, nonce, t, openedAtMs, closedAtMs, marginCenti, squaringsPerSecond) {
  if (nonce.length !== 32) fail("the nonce must be 32 bytes");
  return taggedHash(
    "vrs/v2/epoch-input",
    u64(e),
    u64(p),
    prevY,
    betsRoot,
    nonce,
    u64(t),
    u64(openedAtMs),
    u64(closedAtMs),
    u32(marginCenti),
    u64(squaringsPerSecond),
  );
}

/** Epoch e's public record (GET /api/v1/epochs/{e}, RSA) checked on its own: x_e recomputed
 *  from its published fields (section 10: its previous output, bets root, T and, for version 2,
 *  its timing commitment), then its Wesolowski proof. So its bets root is the one its output
 *  commits to; its previous output is checked by verifying a game of the epoch before. */
export async function verifyPublishedEpoch(n, rec, e) {
  count(e, "epoch");
  if (rec.epoch !== e) fail(`the record is of epoch ${JSON.stringify(rec.epoch)}, not ${e}`);
  const what = `epoch ${e}`;
  const k = byteLength(n);
  decodeElement(rec.previous_output, n, `${what}'s previous_output`);
  const prev = hexToBytes(rec.previous_output, k, `${what}'s previous_output`);
  const root = hexToBytes(rec.bets_root, 32, `${what}'s bets_root`);
  const t = parseIterations(rec.iterations);
  const c = timingCommitment(rec, e, rec.iterations, `${what}'s record`);
  const seed = c
    ? await epochSeedV2(e, c.previous, prev, root, c.nonce, t, c.opened_at_ms, c.closed_at_ms, c.margin_centi, c.squarings_per_second)
    : await epochSeed(e, prev, root, t);
  const x = await hashToGroup(seed, n);
  if (!bytesEqual(bigIntToBytes(x, k), hexToBytes(rec.x, k, `${what}'s x`))) {
    fail(`${what}'s published x does not follow from its published fields`);
  }
  await verifyWesolowski(n, rec);
  return `${what}'s x follows from its published fields and its proof verifies`;
}

/** margin_centi = round(security_margin · 100): the margin A in hundredths (1.5 → 150). */
export function marginCenti(margin, what = "security_margin") {
  if (typeof margin !== "number" || !Number.isFinite(margin) || margin < 0) fail(`${what} is missing or not a number`);
  const c = Math.round(margin * 100);
  if (c > 0xffffffff) fail(`${what} ${margin} does not fit in hundredths as a u32`);
  return c;
}

/** A margin in hundredths as a decimal ("1.5", "2", "1.25"). */
export function centi(m) {
  m = BigInt(m);
  const whole = m / 100n;
  const frac = m % 100n;
  if (frac === 0n) return `${whole}`;
  if (frac % 10n === 0n) return `${whole}.${frac / 10n}`;
  return `${whole}.${String(frac).padStart(2, "0")}`;
}

/** The protocol version a `timing` object (the proof's, or an epoch record) names: a missing
 *  object or version is version 1 (a server from before the timing rule); another fails. */
export function timingVersion(obj, what = "timing") {
  const v = obj && typeof obj === "object" ? obj.version : undefined;
  if (v === undefined || v === null) return 1;
  if (v !== 1 && v !== 2) fail(`${what}.version ${JSON.stringify(v)} is not a protocol version`);
  return v;
}

/** p(e), the epoch whose output is epoch e's previous output (0: the genesis output y_0), from
 *  a `timing` object: e − 1 for version 1, previous_epoch for version 2. */
export function previousEpoch(obj, e, what = "timing") {
  const given = obj && typeof obj === "object" ? obj.previous_epoch : undefined;
  if (timingVersion(obj, what) === 1) {
    if (given !== undefined && given !== null && given !== e - 1) {
      fail(`${what}.previous_epoch is ${JSON.stringify(given)}, but a version-1 epoch ${e} takes y of epoch ${e - 1}`);
    }
    return e - 1;
  }
  return count(given, `${what}.previous_epoch`);
}

/** A version-2 epoch's timing commitment from `obj` (the proof's `timing`, or the epoch's
 *  public record, which spells it with the same member names) and T: {previous, nonce (32
 *  bytes), iterations (BigInt), opened_at_ms, closed_at_ms, margin_centi,
 *  squarings_per_second}; null for version 1. */
export function timingCommitment(obj, e, iterations, what = "timing") {
  if (timingVersion(obj, what) === 1) return null;
  const need = (name) => {
    if (obj[name] === null || obj[name] === undefined) fail(`${what}.${name} is missing (a version-2 epoch commits to it)`);
    return obj[name];
  };
  return {
    previous: previousEpoch(obj, e, what),
    nonce: hexToBytes(need("nonce"), 32, `${what}.nonce`),
    iterations: parseIterations(iterations),
    opened_at_ms: count(need("opened_at_ms"), `${what}.opened_at_ms`),
    closed_at_ms: count(need("closed_at_ms"), `${what}.closed_at_ms`),
    margin_centi: marginCenti(need("security_margin"), `${what}.security_margin`),
    squarings_per_second: count(need("squarings_per_second"), `${what}.squarings_per_second`),
  };
}

/** The timing rule's K: T · K / (margin_centi · R) is a(T) in milliseconds. */
const TIMING_K = 100000n;

/**
 * The `timing` step (PROTOCOL.md §10, "Timing") on facts already gathered: a version-2 epoch's
 * games were fixed before y of epoch e − 1 was stored, and its window keeps the bound of its
 * declared margin and rate, checked exactly in integers:
 *
 *   D = margin_centi · R, K = 100 000
 *   start = max(opened · D, closed_p · D + T_p · K)    (p ≥ 1; opened · D for p = 0)
 *   closed · D ≤ start + T · K
 *
 * `facts`: {epoch: e, timing: null (version 1) or {previous, iterations, opened_at_ms,
 * closed_at_ms, margin_centi, squarings_per_second}, predecessor: null or {closed_at_ms,
 * iterations} of epoch p, prior: null (e = 1) or {version, closed_at_ms, resolved_at_ms} of epoch
 * e − 1}, and the verifier's min_margin_centi, min_rate and allow_version_1 (a version-1 epoch
 * fails unless it is true).
 * Returns a detail string, or throws CheckFailed.
 */
/** Why a verifier refuses a version-1 epoch unless allowed (PROTOCOL.md §10, "Version 1"), in
 *  the Rust verifier's words. */
export const VERSION_1_REFUSED =
  'version 1: the epoch makes no timing commitment, so an operator could have closed it once it had evaluated its candidates; refused unless version 1 is allowed (--allow-version-1; docs/PROTOCOL.md §10, "Version 1")';

export function checkTiming(facts) {
  const t = facts.timing;
  const priorRec = facts.prior ?? null;
  const least = facts.min_margin_centi ?? 0;
  const leastRate = facts.min_rate ?? 0;
  if (!t) {
    const asked = [least > 0 ? `a margin of ${centi(least)}` : null, leastRate > 0 ? `a rate of ${leastRate} squarings/s` : null]
      .filter((x) => x !== null)
      .join(" and ");
    if (asked) fail(`version 1: the epoch makes no timing commitment, and ${asked} was required`);
    if (!facts.allow_version_1) fail(VERSION_1_REFUSED);
    if (priorRec && priorRec.version >= 2) {
      fail(`a version-1 epoch after version-2 epoch ${facts.epoch - 1}: epochs never go back to the rules without a timing commitment`);
    }
    return "version 1: no timing commitment (an epoch from before the timing rule)";
  }
  if (t.margin_centi < least) {
    fail(`the epoch declares margin ${centi(t.margin_centi)}, below the ${centi(least)} this check requires`);
  }
  // An understated rate stretches the window (PROTOCOL.md §10, "Whose numbers").
  if (BigInt(t.squarings_per_second) < BigInt(leastRate)) {
    fail(
      `the epoch declares R = ${t.squarings_per_second} squarings/s, below the ${leastRate} this check requires: ` +
        "its window is timed for a slower squarer than the verifier compares against",
    );
  }
  const e = BigInt(facts.epoch);
  const prev = BigInt(t.previous);
  const T = BigInt(t.iterations);
  const opened = BigInt(t.opened_at_ms);
  const closed = BigInt(t.closed_at_ms);
  const m = BigInt(t.margin_centi);
  const r = BigInt(t.squarings_per_second);

  // (a) Fixed before y of e − 1 was stored, and opened after e − 1 closed (epochs resolve in
  // order: a resolved e ≥ 2 has a resolved e − 1).
  let prior = "";
  if (e > 1n) {
    if (!priorRec) fail(`epoch ${e - 1n}'s record is missing`);
    if (typeof priorRec.resolved_at_ms !== "number" || typeof priorRec.closed_at_ms !== "number") {
      fail(`epoch ${e - 1n} has no stored output or close time, yet epoch ${e} after it is resolved (epochs resolve in order)`);
    }
    const s = BigInt(priorRec.resolved_at_ms);
    if (closed > s) fail(`closed at ${closed} ms, after y of epoch ${e - 1n} was stored at ${s} ms: its games could still change while that output was known`);
    if (opened < BigInt(priorRec.closed_at_ms)) {
      fail(`opened at ${opened} ms, before epoch ${e - 1n} closed at ${priorRec.closed_at_ms} ms: two epochs took games at once`);
    }
    prior = `closed ${s - closed} ms before y of epoch ${e - 1n} was stored; `;
  }
  // (b) A well-formed commitment.
  if (m < 100n) fail(`declared margin ${centi(m)} is below 1: an adversary slower than the server could evaluate this epoch's bets before it closed`);
  if (r < 1n || T < 1n) fail("the declared squaring rate and T must be positive");
  if (prev >= e) fail(`the input is taken from epoch ${prev}, not one before epoch ${e}`);
  if (closed < opened) fail(`closed at ${closed} ms, before it opened at ${opened} ms`);
  // (c) The predecessor closed before e opened.
  const d = m * r;
  let start = opened * d;
  let pred = null;
  if (prev >= 1n) {
    if (!facts.predecessor) fail(`epoch ${prev} (the predecessor) is missing or not closed`);
    pred = { closed: BigInt(facts.predecessor.closed_at_ms), iterations: BigInt(facts.predecessor.iterations) };
    if (pred.closed > opened) fail(`epoch ${prev} closed at ${pred.closed} ms, after this epoch opened at ${opened} ms`);
    const chained = pred.closed * d + pred.iterations * TIMING_K;
    if (chained > start) start = chained;
  }
  // (d) The bound.
  const scaledBound = start + T * TIMING_K;
  const bound = scaledBound / d;
  const window = closed - opened;
  const allowance = (Number(T * TIMING_K) / Number(d)).toFixed(0);
  const eff = effectiveMarginCenti(T, opened, closed, r, pred);
  const effective = eff === null ? "unbounded" : centi(eff);
  if (closed * d > scaledBound) {
    fail(
      `window of ${window} ms closed at ${closed} ms, after its bound ${bound} ms: at margin ${centi(m)} and ${r} squarings/s, T = ${T} allows ${allowance} ms (effective margin ${effective})`,
    );
  }
  return `${prior}window of ${window} ms closed ${bound - closed} ms before its bound: an adversary ${centi(m)}× as fast as ${r} squarings/s needs ${allowance} ms for T = ${T} (effective margin ${effective})`;
}

/** The largest margin (in hundredths) under which the close still keeps the rule: what the
 *  published times guarantee; null when unbounded (a span of zero). */
function effectiveMarginCenti(T, opened, closed, r, pred) {
  const ratio = (num, span) => (span * r === 0n ? null : num / (span * r));
  const sat = (a, b) => (a > b ? a - b : 0n);
  const byWindow = ratio(T * TIMING_K, sat(closed, opened));
  const byChain = pred ? ratio((pred.iterations + T) * TIMING_K, sat(closed, pred.closed)) : 0n;
  if (byWindow === null || byChain === null) return null;
  return byWindow > byChain ? byWindow : byChain;
}

// ---------------------------------------------------------------------------------------------
// Sections 18 and 19: class-group epochs (the maths is in vrs-classgroup.mjs)
// ---------------------------------------------------------------------------------------------

export { isClassGroupId };

/** Runs class-group code, turning its refusals into failed checks. */
async function classGroupCheck(fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ClassGroupError) fail(e.message);
    throw e;
  }
}

/** D_e = create_discriminant(seed_e, bits) for a class-group id: a fresh group every epoch. */
export const epochDiscriminant = (groupId, seed) =>
  classGroupCheck(async () => createDiscriminant(seed, classGroupBits(groupId)));

/** The class-group counterpart of verifyWesolowski, on the proof's hex members and D_e: x is
 *  the generator, y and π reduced forms of D_e, ℓ = B = GetB(D_e, x, y) in 33 bytes, and
 *  π^B · x^(2^T mod B) = y. Resolves with a detail string, or throws CheckFailed. */
export async function verifyClassGroupProof(disc, { x, y, pi, l, iterations }) {
  const t = parseIterations(iterations);
  const bytes = {
    x: hexToBytes(x, FORM_SIZE, "x"),
    y: hexToBytes(y, FORM_SIZE, "y"),
    pi: hexToBytes(pi, FORM_SIZE, "π"),
    l: hexToBytes(l, L_BYTES, "ℓ"),
  };
  await classGroupCheck(() => verifyEpoch(disc, bytes, t));
  return `π^B · x^(2^T mod B) = y for T = ${t}`;
}

// ---------------------------------------------------------------------------------------------
// Section 11: bet leaves and RFC 6962 trees
// ---------------------------------------------------------------------------------------------

/** The committed fields of a bet, as strings, in leaf order. Each field must have its JSON
 *  type (a string or null; target an integer or null; combo two integers or null): a seed of 0
 *  and one of "0" would give the same leaf, yet another rngValue. */
export function leafFields(bet) {
  const s = (name) => {
    const v = bet[name];
    if (v === null || v === undefined) return "";
    if (typeof v !== "string") fail(`bet.${name} is not a string`);
    return v;
  };
  const int = (v, what) => {
    if (!Number.isSafeInteger(v)) fail(`${what} is not an integer`);
    return String(v);
  };
  let combo = "";
  if (Array.isArray(bet.combo) && bet.combo.length === 2) combo = bet.combo.map((d, i) => int(d, `bet.combo[${i}]`)).join(",");
  else if (bet.combo !== null && bet.combo !== undefined) fail("bet.combo is not two dice");
  const target = bet.target === null || bet.target === undefined ? "" : int(bet.target, "bet.target");
  return [
    s("game_id"),
    s("game"),
    s("bet_type"),
    target,
    combo,
    s("amount"),
    s("player_id"),
    s("player_seed"),
    s("operator_key"),
  ];
}

export function betLeaf(bet) {
  const tag = utf8.encode("vrs/v1/bet");
  return concat(u8(tag.length), tag, ...leafFields(bet).map(field));
}

export const leafHash = (leaf) => sha256(concat(Uint8Array.of(0), leaf));
export const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/** MTH of RFC 6962 over leaf hashes. Computed level by level (pairs from the left, an odd last
 *  node carried up unchanged), which gives the same tree as RFC 6962's split at the largest
 *  power of two below n, with each level's hashes requested at once. */
export async function merkleRoot(hashes) {
  if (hashes.length === 0) return sha256(new Uint8Array(0));
  let level = hashes;
  while (level.length > 1) {
    const next = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i], level[i + 1]));
    if (level.length % 2 === 1) next.push(level[level.length - 1]);
    level = await Promise.all(next);
  }
  return level[0];
}

/** RFC 9162 §2.1.3.2: the root an audit path leads to from a leaf hash, or a failure. */
export async function rootFromPath(leafHashBytes, index, size, path) {
  const fnIn = BigInt(index);
  const size_ = BigInt(size);
  if (fnIn >= size_) fail(`leaf index ${index} is not below the tree size ${size}`);
  let fn = fnIn;
  let sn = size_ - 1n;
  let r = leafHashBytes;
  for (const p of path) {
    if (sn === 0n) fail("audit path too long");
    if (fn % 2n === 1n || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2n === 0n && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  if (sn !== 0n) fail("audit path too short");
  return r;
}

function hashList(list, what) {
  if (!Array.isArray(list)) fail(`${what} is missing`);
  return list.map((h, i) => hexToBytes(h, 32, `${what}[${i}]`));
}

function count(v, what) {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) fail(`${what} is missing or not a count`);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Section 11, "Signed acceptance": Ed25519 (RFC 8032 §5.1.7, strict) and the signed message
// ---------------------------------------------------------------------------------------------

// edwards25519: −x² + y² = 1 + d·x²·y² over GF(p), points in extended coordinates [X, Y, Z, T]
// (x = X/Z, y = Y/Z, x·y = T/Z). The formulas are RFC 8032 §5.1.4's, complete on this curve, so
// one addition serves every case (doubling, the identity, P + (−P)).
const ED_P = (1n << 255n) - 19n;
export const ED25519_L = (1n << 252n) + 27742317777372353535851937790883648493n;
const edMod = (a) => {
  const r = a % ED_P;
  return r < 0n ? r + ED_P : r;
};
const edInv = (a) => modPow(a, ED_P - 2n, ED_P);
const ED_D = edMod(-121665n * edInv(121666n));
const ED_D2 = (2n * ED_D) % ED_P;
const ED_SQRT_M1 = modPow(2n, (ED_P - 1n) / 4n, ED_P);
const ED_IDENTITY = [0n, 1n, 1n, 0n];

function edAdd([x1, y1, z1, t1], [x2, y2, z2, t2]) {
  const a = ((y1 - x1) * (y2 - x2)) % ED_P;
  const b = ((y1 + x1) * (y2 + x2)) % ED_P;
  const c = (((t1 * ED_D2) % ED_P) * t2) % ED_P;
  const d = (2n * z1 * z2) % ED_P;
  const [e, f, g, h] = [b - a, d - c, d + c, b + a];
  return [edMod(e * f), edMod(g * h), edMod(f * g), edMod(e * h)];
}

function edDouble([x1, y1, z1]) {
  const a = (x1 * x1) % ED_P;
  const b = (y1 * y1) % ED_P;
  const c = (2n * z1 * z1) % ED_P;
  const h = a + b;
  const s = x1 + y1;
  const e = h - ((s * s) % ED_P);
  const g = a - b;
  const f = c + g;
  return [edMod(e * f), edMod(g * h), edMod(f * g), edMod(e * h)];
}

const edNeg = ([x, y, z, t]) => [edMod(-x), y, z, edMod(-t)];
const edIsIdentity = ([x, y, z]) => x === 0n && y === z;
/** [8]P = O: P is one of the eight points of small order (the cofactor's torsion). */
const edSmallOrder = (pt) => edIsIdentity(edDouble(edDouble(edDouble(pt))));

/** RFC 8032 §5.1.3 decoding, strict: y < p, a square root exists, no "−0". */
function edDecode(bytes, what) {
  if (bytes.length !== 32) fail(`${what} is ${bytes.length} bytes, not 32`);
  const le = bytesToBigInt(Uint8Array.from(bytes).reverse());
  const sign = le >> 255n;
  const y = le & ((1n << 255n) - 1n);
  if (y >= ED_P) fail(`${what} is not a canonical encoding (y ≥ p)`);
  const yy = (y * y) % ED_P;
  const u = edMod(yy - 1n);
  const v = edMod(ED_D * yy + 1n);
  // x = u·v³·(u·v⁷)^((p−5)/8), then fixed by √−1 or refused (RFC 8032 §5.1.3, step 3).
  const v3 = (v * v * v) % ED_P;
  let x = (((u * v3) % ED_P) * modPow((u * v3 * v3 * v) % ED_P, (ED_P - 5n) / 8n, ED_P)) % ED_P;
  const vxx = (((v * x) % ED_P) * x) % ED_P;
  if (vxx === u) {
    // x is a root already.
  } else if (vxx === edMod(-u)) {
    x = (x * ED_SQRT_M1) % ED_P;
  } else {
    fail(`${what} is not the encoding of a point on edwards25519`);
  }
  if (x === 0n && sign === 1n) fail(`${what} is not a canonical encoding (x = 0 with the sign bit set)`);
  if ((x & 1n) !== sign) x = ED_P - x;
  return [x, y, 1n, (x * y) % ED_P];
}

function edEncode([x, y, z]) {
  const zi = edInv(z);
  const ax = (x * zi) % ED_P;
  const ay = (y * zi) % ED_P;
  return bigIntToBytes(ay | ((ax & 1n) << 255n), 32).reverse();
}

/** [a]P + [b]Q in one pass of doublings (Straus-Shamir): a verify costs ~250 doublings. */
function edDoubleScalarMul(a, p, b, q) {
  const pq = edAdd(p, q);
  const n = Math.max(bitLength(a), bitLength(b));
  const as = a.toString(2).padStart(n, "0");
  const bs = b.toString(2).padStart(n, "0");
  let r = ED_IDENTITY;
  for (let i = 0; i < n; i++) {
    r = edDouble(r);
    if (as[i] === "1" && bs[i] === "1") r = edAdd(r, pq);
    else if (as[i] === "1") r = edAdd(r, p);
    else if (bs[i] === "1") r = edAdd(r, q);
  }
  return r;
}

/** Whether 32 bytes are the canonical encoding of a point of edwards25519 (RFC 8032 §5.1.3):
 *  what a verifier key must hold before it is accepted (vrs-witnessed.mjs's parseVKey). */
export function isEd25519Point(bytes) {
  try {
    edDecode(bytes, "the point");
    return true;
  } catch (e) {
    if (e instanceof CheckFailed) return false;
    throw e;
  }
}

/** B: y = 4/5, x even; RFC 8032 §5.1 gives its encoding 0x58 then 31 bytes 0x66. */
let edBase = null;
const ED_BASE = () => (edBase ??= edDecode(hexToBytes("58" + "66".repeat(31)), "B"));

const leBytes = (bytes) => bytesToBigInt(Uint8Array.from(bytes).reverse());

/**
 * Pure Ed25519 verification (RFC 8032 §5.1.7), strict like ed25519-dalek's verify_strict: A
 * and R (the signature's first 32 bytes) canonical encodings of points not of small order, S
 * (its last 32, little-endian) < L, and encode([S]B − [k]A) = R with k = SHA-512(R ‖ A ‖ M) mod
 * L. The equation is checked on encodings, without the cofactor, as the signer computes R.
 * Resolves with a detail string, or throws CheckFailed.
 */
export async function verifyEd25519(publicKey, message, signature) {
  const bytes = (b, n, what) => {
    if (!(b instanceof Uint8Array)) fail(`${what} is not bytes`);
    if (n !== undefined && b.length !== n) fail(`${what} is ${b.length} bytes, not ${n}`);
    return b;
  };
  bytes(publicKey, 32, "the Ed25519 public key");
  bytes(message, undefined, "the signed message");
  bytes(signature, 64, "the Ed25519 signature");
  const rBytes = signature.subarray(0, 32);
  const s = leBytes(signature.subarray(32));
  // S ≥ L would give one signature other encodings (S + L, S + 2L, …): malleability.
  if (s >= ED25519_L) fail("the signature's S is not below L (a non-canonical scalar)");
  const a = edDecode(publicKey, "the public key A");
  const r = edDecode(rBytes, "the signature's R");
  // A small-order A or R admits signatures that hold for other messages or keys than the
  // signer's; ed25519-dalek's verify_strict, which the service uses, refuses both.
  if (edSmallOrder(a)) fail("the public key A is of small order");
  if (edSmallOrder(r)) fail("the signature's R is of small order");
  const k = leBytes(await sha512(concat(rBytes, publicKey, message))) % ED25519_L;
  const got = edEncode(edDoubleScalarMul(s, ED_BASE(), k, edNeg(a)));
  if (!bytesEqual(got, rBytes)) fail("the Ed25519 signature does not verify: [S]B − [k]A ≠ R");
  return `Ed25519 (RFC 8032, strict): [S]B − [k]A = R under key ${short(bytesToHex(publicKey))}`;
}

/** The acceptance kinds of the signed message: 1 the epoch path, 2 a pool-served game. */
export const ACCEPTANCE_KIND = { epoch: 1, pool: 2 };

/** message = u8(17) ‖ "vrs/v2/acceptance" ‖ u8(kind) ‖ u64(number) ‖ leaf_hash ‖
 *  u64(accepted_at_ms): 67 bytes. */
export function acceptanceMessage(kind, number, leafHashBytes, acceptedAtMs) {
  if (kind !== 1 && kind !== 2) fail(`acceptance kind ${JSON.stringify(kind)} is neither 1 (epoch) nor 2 (pool)`);
  if (!(leafHashBytes instanceof Uint8Array) || leafHashBytes.length !== 32) fail("a leaf hash is 32 bytes");
  const tag = utf8.encode("vrs/v2/acceptance");
  return concat(u8(tag.length), tag, u8(kind), u64(number), leafHashBytes, u64(acceptedAtMs));
}

/** The operator's published keys (GET / `acceptance_keys`: [{public_key, since_ms}], or bare
 *  hex strings) as lowercase hex. */
function publishedKeyList(keys) {
  if (!Array.isArray(keys)) fail("the operator publishes no acceptance keys (GET / has no acceptance_keys list)");
  return keys.map((k, i) => {
    const hex = k && typeof k === "object" ? k.public_key : k;
    return bytesToHex(hexToBytes(hex, 32, `acceptance_keys[${i}].public_key`));
  });
}

/** The earliest `since_ms` of the published keys: from then on every game is signed and every
 *  served bet bound (PROTOCOL.md §13), so a game without them after it fails. A key listed
 *  without a `since_ms` counts from the beginning, and once any key is published a game must
 *  say when it was accepted. */
function unsignedOnlyBeforeSigning(publishedKeys, proof, what) {
  if (publishedKeys !== undefined && publishedKeys !== null && !Array.isArray(publishedKeys)) {
    fail("GET /'s acceptance_keys is not a list");
  }
  const keys = publishedKeys ?? [];
  if (keys.length === 0) return;
  const since = Math.min(
    ...keys.map((k) => (k && typeof k === "object" && Number.isSafeInteger(k.since_ms) ? k.since_ms : -Infinity)),
  );
  const created = proof.bet_created_at_ms;
  if (!Number.isSafeInteger(created)) fail(`${what}, and no bet_created_at_ms although the operator publishes acceptance keys`);
  if (created >= since) {
    const from = since === -Infinity ? "a key listed without since_ms, so from the beginning" : `${since} ms`;
    fail(`${what}, yet the game was accepted at ${created} ms, after the operator began signing (${from})`);
  }
}

/**
 * Whether a proof is a moved game's (PROTOCOL.md §21, "Moved games"): it names `moved_from` or
 * shows moves (`log.moves` present and not an empty list). Such a game was accepted into epoch
 * `moved_from` and takes its outcome from epoch `vdfEpoch`, its last destination; an ordinary
 * epoch game has neither, and no `moved` step.
 */
export function isMovedGame(proof) {
  if (proof === null || typeof proof !== "object") return false;
  if (proof.moved_from !== undefined && proof.moved_from !== null) return true;
  const moves = proof.log !== null && typeof proof.log === "object" ? proof.log.moves : undefined;
  return moves !== undefined && moves !== null && !(Array.isArray(moves) && moves.length === 0);
}

/**
 * The `acceptance` check (PROTOCOL.md §11, "Signed acceptance") of `acceptance` (the proof's
 * `acceptance`: null before version 2) against the operator's published keys and the proof
 * (its `leaf`, `pool_served`, `pool_index`, `vdfEpoch`, `bet_created_at_ms`; for a moved game,
 * `moved_from`): the signature must be over this game's leaf, its epoch (the one it was
 * accepted into: `moved_from` for a moved game, §21 "Moved games") or pool entry and its
 * acceptance time, by a published key. Resolves with a detail string, or throws CheckFailed.
 */
export async function verifyAcceptance(acceptance, publishedKeys, proof) {
  if (acceptance === null || acceptance === undefined) {
    unsignedOnlyBeforeSigning(publishedKeys, proof, "no acceptance signature");
    return "accepted before version 2: not signed";
  }
  if (typeof acceptance !== "object") fail("acceptance is not an object");
  if (acceptance.version !== 2) fail(`acceptance.version ${JSON.stringify(acceptance.version)} is not 2`);
  // What was signed must be this game: the stored leaf (every committed field), not a copy
  // the server could keep apart from it.
  const leaf = hexToBytes(acceptance.leaf, undefined, "acceptance.leaf");
  if (!bytesEqual(leaf, hexToBytes(proof.leaf, undefined, "leaf"))) fail("the signed leaf is not the game's committed leaf");
  const lh = await leafHash(leaf);
  if (!bytesEqual(hexToBytes(acceptance.leaf_hash, 32, "acceptance.leaf_hash"), lh)) {
    fail("acceptance.leaf_hash is not SHA-256(0x00 ‖ leaf)");
  }
  let kind;
  let number;
  let where;
  if (proof.pool_served === true) {
    if (acceptance.kind !== "pool") fail(`the acceptance is of kind ${JSON.stringify(acceptance.kind)}, but the game was served from the pool`);
    number = count(acceptance.pool_index, "acceptance.pool_index");
    if (number !== proof.pool_index) fail(`the acceptance names pool entry ${number}, but the game was served from entry ${proof.pool_index}`);
    [kind, where] = [ACCEPTANCE_KIND.pool, `served from pool entry ${number}`];
  } else {
    if (acceptance.kind !== "epoch") fail(`the acceptance is of kind ${JSON.stringify(acceptance.kind)}, but the game took the epoch path`);
    number = count(acceptance.epoch, "acceptance.epoch");
    if (isMovedGame(proof)) {
      // A moved game was accepted into the void epoch its moves start from (PROTOCOL.md §21).
      const from = count(proof.moved_from, "moved_from");
      if (number !== from) {
        fail(`the acceptance names epoch ${number}, but the game was accepted into epoch ${from} (moved_from) and moved to epoch ${proof.vdfEpoch}`);
      }
      [kind, where] = [ACCEPTANCE_KIND.epoch, `accepted into epoch ${number} (moved to epoch ${proof.vdfEpoch})`];
    } else {
      if (number !== proof.vdfEpoch) fail(`the acceptance names epoch ${number}, but the game is in epoch ${proof.vdfEpoch}`);
      [kind, where] = [ACCEPTANCE_KIND.epoch, `accepted into epoch ${number}`];
    }
  }
  const at = count(acceptance.accepted_at_ms, "acceptance.accepted_at_ms");
  const created = proof.bet_created_at_ms;
  if (created !== undefined && created !== null && at !== created) {
    fail(`signed as accepted at ${at} ms, but the game was accepted at ${created} ms`);
  }
  const pkHex = bytesToHex(hexToBytes(acceptance.public_key, 32, "acceptance.public_key"));
  const keys = publishedKeyList(publishedKeys);
  if (!keys.includes(pkHex)) fail(`key ${short(pkHex)} is not one of the operator's ${keys.length} published acceptance keys`);
  const signature = hexToBytes(acceptance.signature, 64, "acceptance.signature");
  await verifyEd25519(hexToBytes(pkHex, 32), acceptanceMessage(kind, number, lh, at), signature);
  return `Ed25519 signature by published key ${short(pkHex)} over the leaf hash ${short(bytesToHex(lh))}, ${where} at ${at} ms`;
}

// ---------------------------------------------------------------------------------------------
// Section 12 and GAMES.md: rngValue, dice, payouts
// ---------------------------------------------------------------------------------------------

export async function rngValue(yBytes, gameId, playerSeed) {
  if (playerSeed !== null && playerSeed !== undefined && typeof playerSeed !== "string") fail("player_seed is not a string");
  return hmacSha256(yBytes, concat(utf8.encode(gameId), utf8.encode(playerSeed ?? "")));
}

/** The first `n` dice of the stream; also the bytes consumed, skipped, and extra HMAC blocks. */
export async function rollDice(rng, n) {
  const dice = [];
  const used = [];
  let skipped = 0;
  let block = rng;
  let counter = 0;
  let at = 0;
  while (dice.length < n) {
    if (at === block.length) {
      counter++;
      block = await hmacSha256(rng, u32(counter));
      at = 0;
    }
    const b = block[at++];
    used.push(b);
    if (b >= 252) skipped++;
    else dice.push(1 + (b % 6));
  }
  return { dice, bytes_used: bytesToHex(used), skipped, blocks: counter };
}

/** Money: a decimal with at most two fraction digits, to whole cents. */
export function parseCents(text) {
  const m = typeof text === "string" ? /^([0-9]+)(?:\.([0-9]{1,2}))?$/.exec(text) : null;
  if (!m) fail(`amount ${JSON.stringify(text)} is not a decimal amount`);
  return BigInt(m[1]) * 100n + BigInt((m[2] || "").padEnd(2, "0"));
}

export function formatCents(c) {
  return `${c / 100n}.${String(c % 100n).padStart(2, "0")}`;
}

const SICBO_TOTAL_ODDS = { 4: 60, 17: 60, 5: 30, 16: 30, 6: 17, 15: 17, 7: 12, 14: 12, 8: 8, 13: 8, 9: 6, 12: 6, 10: 6, 11: 6 };

function intIn(v, lo, hi, what) {
  if (!Number.isInteger(v) || v < lo || v > hi) fail(`${what} must be an integer ${lo}–${hi}, got ${JSON.stringify(v)}`);
  return v;
}

/** The number of dice a game draws: 2 for dice, 3 for sicbo, 0 for rng. */
export function diceCount(game) {
  const counts = { dice: 2, sicbo: 3, rng: 0 };
  return Object.prototype.hasOwnProperty.call(counts, game) ? counts[game] : fail(`unknown game ${JSON.stringify(game)}`);
}

/** Settles `bet` (its game, bet_type, target, combo, amount) on `dice`: {won, payout, rule}. */
export function settle(bet, dice) {
  const cents = parseCents(bet.amount);
  const total = dice.reduce((a, b) => a + b, 0);
  const type = bet.bet_type;
  if (bet.game === "dice") {
    if (dice.length !== 2) fail("a dice game takes two dice");
    const shown = `total ${total} (${dice.join("+")})`;
    let ways;
    let wins;
    let what;
    if (type === "exact") {
      const t = intIn(bet.target, 2, 12, "target of exact");
      ways = 6 - Math.abs(t - 7);
      wins = total === t;
      what = `exact ${t}: ${shown} ${wins ? "=" : "≠"} ${t}`;
    } else if (type === "over7") {
      [ways, wins, what] = [15, total > 7, `over7: ${shown} ${total > 7 ? ">" : "≤"} 7`];
    } else if (type === "under7") {
      [ways, wins, what] = [15, total < 7, `under7: ${shown} ${total < 7 ? "<" : "≥"} 7`];
    } else if (type === "odd") {
      [ways, wins, what] = [18, total % 2 === 1, `odd: ${shown} is ${total % 2 ? "odd" : "even"}`];
    } else if (type === "even") {
      [ways, wins, what] = [18, total % 2 === 0, `even: ${shown} is ${total % 2 ? "odd" : "even"}`];
    } else {
      fail(`unknown dice bet type ${JSON.stringify(type)}`);
    }
    if (!wins) return { won: false, payout: "0.00", rule: `${what}, loses` };
    const payout = (cents * 99n * 36n) / (100n * BigInt(ways));
    return { won: true, payout: formatCents(payout), rule: `${what}, wins, pays 0.99×36/${ways}` };
  }
  if (bet.game === "sicbo") {
    if (dice.length !== 3) fail("a Sic Bo game takes three dice");
    const triple = dice[0] === dice[1] && dice[1] === dice[2];
    const matching = (f) => dice.filter((d) => d === f).length;
    let odds = null;
    let label = type;
    switch (type) {
      case "big":
        odds = total >= 11 && total <= 17 && !triple ? 1 : null;
        break;
      case "small":
        odds = total >= 4 && total <= 10 && !triple ? 1 : null;
        break;
      case "odd":
        odds = total % 2 === 1 && !triple ? 1 : null;
        break;
      case "even":
        odds = total % 2 === 0 && !triple ? 1 : null;
        break;
      case "total": {
        const t = intIn(bet.target, 4, 17, "target of total");
        label = `total ${t}`;
        odds = total === t ? SICBO_TOTAL_ODDS[t] : null;
        break;
      }
      case "single": {
        const t = intIn(bet.target, 1, 6, "target of single");
        label = `single ${t}`;
        odds = matching(t) >= 1 ? matching(t) : null;
        break;
      }
      case "double": {
        const t = intIn(bet.target, 1, 6, "target of double");
        label = `double ${t}`;
        odds = matching(t) >= 2 ? 10 : null;
        break;
      }
      case "triple": {
        const t = intIn(bet.target, 1, 6, "target of triple");
        label = `triple ${t}`;
        odds = matching(t) === 3 ? 180 : null;
        break;
      }
      case "anyTriple":
        odds = triple ? 30 : null;
        break;
      case "combo": {
        const c = bet.combo;
        if (!Array.isArray(c) || c.length !== 2) fail("a combo bet needs two faces");
        const [a, b] = [intIn(c[0], 1, 6, "combo face"), intIn(c[1], 1, 6, "combo face")];
        if (a === b) fail("combo faces must differ");
        label = `combo ${Math.min(a, b)},${Math.max(a, b)}`;
        odds = matching(a) >= 1 && matching(b) >= 1 ? 5 : null;
        break;
      }
      default:
        fail(`unknown Sic Bo bet type ${JSON.stringify(type)}`);
    }
    const shown = `dice ${dice.join("-")} (total ${total})`;
    if (odds === null) return { won: false, payout: "0.00", rule: `${label}: ${shown} loses` };
    return { won: true, payout: formatCents(cents * BigInt(odds + 1)), rule: `${label}: ${shown} wins, pays ${odds}:1` };
  }
  fail(`game ${JSON.stringify(bet.game)} has no bet to settle`);
}

// ---------------------------------------------------------------------------------------------
// Sections 14 and 16: pool entries, anchors
// ---------------------------------------------------------------------------------------------

export const poolBatchSeed = (b, prevRoot, anchorEpoch, anchorY) =>
  taggedHash("vrs/v1/pool-batch", u64(b), prevRoot, u64(anchorEpoch), anchorY);

export const poolEntrySeed = (batchSeed, index, secret) =>
  taggedHash("vrs/v1/pool-entry", batchSeed, u64(index), secret);

export function poolEntryLeaf(index, t, x, y, l, pi) {
  const tag = utf8.encode("vrs/v1/pool-leaf");
  return concat(u8(tag.length), tag, u64(index), u64(t), x, y, l, pi);
}

export async function poolGameId(index, y) {
  return bytesToHex((await taggedHash("vrs/v1/pool-game", u64(index), y)).subarray(0, 16));
}

export const epochRecord = (e, t, betsRoot, prevY, x, y, l, pi) =>
  taggedHash("vrs/v1/epoch-record", u64(e), u64(t), betsRoot, prevY, x, y, l, pi);

export const anchorLeaf = (kind, number, hash) => concat(u8(kind), u64(number), hash);

export const CALLDATA_PREFIX = "0x7672732d616e63686f722d76313a";
/** "vrs-anchor-v2:" in hex: the prefix of version-2 calldata (section 16, "Binding"). */
export const CALLDATA_V2_PREFIX = "0x7672732d616e63686f722d76323a";

/** Section 16 "Binding": the calldata batch n's transaction must carry, and what binds it, under
 *  the verifier's policy (vrs-witnessed.mjs's expectedAnchorCalldata), for the batch the anchor
 *  object claims. */
async function anchorCalldata(anchor, root, witness) {
  const claim = {
    batch: count(anchor.batch, "anchor.batch"),
    first_epoch: count(anchor.epochs?.first, "anchor.epochs.first"),
    last_epoch: count(anchor.epochs?.last, "anchor.epochs.last"),
    pool_from: count(anchor.pool_batches?.from, "anchor.pool_batches.from"),
    pool_to: count(anchor.pool_batches?.to, "anchor.pool_batches.to"),
    notary_from: count(anchor.notary_batches?.from, "anchor.notary_batches.from"),
    notary_to: count(anchor.notary_batches?.to, "anchor.notary_batches.to"),
    root,
  };
  const shownV1 = String(anchor.calldata ?? "").toLowerCase().startsWith(CALLDATA_PREFIX);
  const module = witness ? witness.module : await import("./vrs-witnessed.mjs");
  return module.expectedAnchorCalldata(claim, shownV1, anchor.log, witness ? witness.policy : null);
}

/** Where a kind-1 (epoch) or kind-2 (pool batch) leaf numbered `number` must sit in an anchor
 *  batch (section 16): {position, size} from the batch's `epochs` {first, last} (inclusive),
 *  `pool_batches` and `notary_batches` {from, to} (to exclusive); throws CheckFailed when the
 *  batch does not cover it. */
export function anchorPosition(anchor, kind, number) {
  const range = (name, lo, hi) => {
    const r = anchor[name];
    if (!r || typeof r !== "object") fail(`anchor.${name} is missing`);
    return [count(r[lo], `anchor.${name}.${lo}`), count(r[hi], `anchor.${name}.${hi}`)];
  };
  const [first, last] = range("epochs", "first", "last");
  const [poolFrom, poolTo] = range("pool_batches", "from", "to");
  const [notaryFrom, notaryTo] = range("notary_batches", "from", "to");
  const epochs = Math.max(0, last + 1 - first);
  const pools = Math.max(0, poolTo - poolFrom);
  const size = epochs + pools + Math.max(0, notaryTo - notaryFrom);
  if (kind === 1 && first <= number && number <= last) return { position: number - first, size };
  if (kind === 2 && poolFrom <= number && number < poolTo) return { position: epochs + number - poolFrom, size };
  const what = kind === 1 ? `epoch ${number}` : `pool batch ${number}`;
  fail(`anchor batch ${anchor.batch} (epochs ${first}..=${last}, pool batches ${poolFrom}..${poolTo}) does not cover ${what}`);
}

// ---------------------------------------------------------------------------------------------
// Fetching
// ---------------------------------------------------------------------------------------------

export const GAME_ID_RE = /^[0-9a-f]{32}$/;

/** options.minMargin in hundredths (0 when not given): a number ≥ 1 with two decimals at most,
 *  as `vrs verify --min-margin` takes it; anything else is the caller's mistake (RangeError). */
export function parseMinMargin(m) {
  if (m === undefined || m === null) return 0;
  const c = Math.round(Number(m) * 100);
  if (typeof m !== "number" || !Number.isFinite(m) || m < 1 || Math.abs(c - m * 100) > 1e-6 || c > 0xffffffff) {
    throw new RangeError(`minMargin must be a number ≥ 1 with two decimals at most, not ${JSON.stringify(m)}`);
  }
  return c;
}

/** options.minRate in squarings per second (0 when not given): a whole number ≥ 1, as `vrs
 *  verify --min-rate` takes it; anything else is the caller's mistake (RangeError). */
export function parseMinRate(r) {
  if (r === undefined || r === null) return 0;
  if (typeof r !== "number" || !Number.isSafeInteger(r) || r < 1) {
    throw new RangeError(`minRate must be a whole number of squarings per second ≥ 1, not ${JSON.stringify(r)}`);
  }
  return r;
}

/** The note a report carries for an epoch game verified without a witness policy (PROTOCOL.md
 *  §21): the `witnessed` step was not run, so what it would exclude is trusted. */
export const WITNESSED_NOTE =
  "witnessed: not checked (no --witness-policy): the operator is trusted not to withhold an epoch's commitment, stage a stall or backdate its times (docs/PROTOCOL.md §21)";

/** options.witnessPolicy, maxRate and deltaMs, checked: null without a policy, else {module
 *  (vrs-witnessed.mjs), policy, maxRate (null: the group's default), deltaMs}. The module is
 *  loaded here, and otherwise only for a moved game or an anchor's `log`, so a page that meets
 *  none of them never fetches it. */
async function witnessInputs(options) {
  if (options.witnessPolicy === undefined || options.witnessPolicy === null) return null;
  const module = await import("./vrs-witnessed.mjs");
  const policy = await module.parsePolicy(options.witnessPolicy);
  const maxRate = options.maxRate === undefined || options.maxRate === null ? null : module.parseMaxRate(options.maxRate);
  const deltaMs = module.parseDeltaMs(options.deltaMs ?? module.DEFAULT_DELTA_MS);
  return { module, policy, maxRate, deltaMs };
}

/** The group verifyGame requires unless told otherwise (options.group). */
export const DEFAULT_GROUP = "rsa2048";

/** GROUP of `VEO-WESOLOWSKI-<GROUP>` (section 13's last paragraph, section 19). */
export function veoGroup(id) {
  const low = String(id).toLowerCase();
  if (low === "rsa2048") return "RSA2048";
  if (low.startsWith("hex:")) return "RSA-CUSTOM";
  return String(id).toUpperCase();
}

/** Section 13, `epoch_record`: (proof member, epoch record member) pairs that must be equal. */
export const EPOCH_RECORD_PAIRS = [
  ...["modulus", "iterations", "previous_output", "bets_root", "bet_count", "x", "y", "pi", "l"].map((k) => [k, k]),
  ["timing.version", "version"],
  ["timing.previous_epoch", "previous_epoch"],
  ["timing.nonce", "nonce"],
  ...["opened_at_ms", "closed_at_ms", "security_margin", "squarings_per_second", "deadline_ms"].map((k) => [`timing.${k}`, k]),
];

/** The member at a dotted path, or undefined when any part is absent. */
function memberAt(obj, path) {
  let v = obj;
  for (const k of path.split(".")) {
    if (v === null || typeof v !== "object" || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

/** Section 13: "JSON values compared as they are: equal strings, equal numbers, both null". */
export function jsonEqual(a, b) {
  if (a === null || b === null) return a === b;
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (typeof a === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

/** A game id from what a player pastes: the id itself, or any URL or text holding one. */
export function extractGameId(text) {
  const m = /(?:^|[^0-9a-fA-F])([0-9a-fA-F]{32})(?![0-9a-fA-F])/.exec(String(text ?? "").trim());
  return m ? m[1].toLowerCase() : null;
}

function apiUrl(base, path) {
  return `${String(base ?? "").replace(/\/+$/, "")}${path}`;
}

/** GET a JSON document: {status, body}. Network failures and non-JSON answers throw. */
async function getJson(fetchFn, url) {
  let res;
  try {
    res = await fetchFn(url, { headers: { accept: "application/json" }, cache: "no-store" });
  } catch (e) {
    throw new VerifyError("network", `could not reach the server (${url}): ${e && e.message ? e.message : e}`, {
      url,
    });
  }
  const text = await res.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new VerifyError("bad_response", `${url}: HTTP ${res.status}, the answer is not JSON`, {
      status: res.status,
      url,
    });
  }
  return { status: res.status, body };
}

/** GET a public record that must exist (200), for a check: failures are failed checks. */
async function getRecord(fetchFn, base, path) {
  const url = apiUrl(base, path);
  let r;
  try {
    r = await getJson(fetchFn, url);
  } catch (e) {
    fail(e.message);
  }
  if (r.status === 404) fail(`${path}: not found on this server (404)`);
  if (r.status !== 200) fail(`${path}: HTTP ${r.status}${r.body && r.body.error ? `: ${r.body.error}` : ""}`);
  return r.body;
}

/** GET /api/v1/verify/{id}: the response body, or a VerifyError (unknown, pending, …). */
export async function fetchVerification(baseUrl, gameId, fetchFn = globalThis.fetch.bind(globalThis)) {
  if (!GAME_ID_RE.test(gameId)) {
    throw new VerifyError("invalid_id", `${JSON.stringify(gameId)} is not a game id (32 lowercase hex digits)`);
  }
  const url = apiUrl(baseUrl, `/api/v1/verify/${gameId}`);
  const { status, body } = await getJson(fetchFn, url);
  if (status === 404) {
    throw new VerifyError("not_found", `game ${gameId} not found on this server (404)`, { status, url });
  }
  if (status === 202 || (body && body.status === "pending")) {
    throw new VerifyError(
      "pending",
      body && body.message ? body.message : `game ${gameId} is not resolved yet`,
      { status, url, resolves_at_epoch: body ? body.resolves_at_epoch : null },
    );
  }
  if (status !== 200) {
    throw new VerifyError("http", `${url}: HTTP ${status}${body && body.error ? `: ${body.error}` : ""}`, {
      status,
      url,
    });
  }
  if (!body || typeof body !== "object" || !body.proof || typeof body.proof !== "object") {
    throw new VerifyError("bad_response", `${url}: the answer has no proof object (not a vrs server?)`, {
      status,
      url,
    });
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------

/** What the server claims the outcome was, from its replay steps. */
export function claimsOf(body) {
  const steps = Array.isArray(body.replay_steps) ? body.replay_steps : [];
  const step = (action) => steps.find((s) => s && s.action === action) || {};
  const dice = step("dice_rolled").dice;
  const ev = step("bet_evaluated");
  return {
    rngValue: step("randomness_derived").rngValue ?? null,
    dice: dice ?? null,
    won: ev.won ?? null,
    payout: ev.payout ?? null,
    total: ev.total ?? null,
  };
}

const short = (hex) => (typeof hex === "string" && hex.length > 16 ? `${hex.slice(0, 16)}…` : String(hex));
const eqArr = (a, b) => Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * Verifies one game from the server at `baseUrl` ("" for the page's own origin).
 * `onStep(step)` is called with each check {name, passed, detail} as soon as it is computed; a
 * step that passes for now but waits on the server (a pool-served bet whose epoch is still
 * open) also has `pending: true`. A moved game (PROTOCOL.md §21, "Moved games": accepted into
 * void epoch `moved_from`, sent on by logged moves to `vdfEpoch`) also gets the step `moved`
 * after `merkle_inclusion`; its leaf path leads into the first move's tree (e's), where
 * `bets_root` also finds its leaf, and its `acceptance` names `moved_from`; every other step
 * judges `vdfEpoch`.
 * Options: `group` (the group the proof must be in, the verifier's choice: "rsa2048" by
 * default; "classgroup-1024", or "test512" / "test1024" / "hex:<digits>" for a test server; null
 * takes the group the server names, which only a page served by that same server should do),
 * `minMargin` (the least security margin an epoch may declare for `timing` to pass, e.g. 2:
 * the verifier, not the server, says how strong an adversary it wants excluded; a version-1
 * epoch, which declares none, then fails), `minRate` (the least squaring rate an epoch may
 * declare, in squarings per second: an understated rate keeps epochs open longer than their
 * squarings take; a version-1 epoch then fails too), `allowVersion1` (true lets a version-1
 * epoch pass `timing` as version 1's rules allow; by default it fails: it makes no timing
 * commitment), `witnessPolicy` (the text of a C2SP
 * tlog-policy naming the verifier's own log key, witnesses and quorum: epoch games then get the
 * `witnessed` step of PROTOCOL.md §21; without it the report's `notes` say the step was not
 * run), `maxRate` (S of that step, squarings per second: 9000000 for RSA groups and 1000000 for
 * class groups by default), `deltaMs` (δ of that step, the verifier's clock tolerance: 2000 by
 * default), `fetch` (a fetch function; default globalThis.fetch), `body` (an already fetched
 * verification response, to skip the first request).
 * Resolves with {game_id, verified, status: "verified"|"failed", failed_step, steps, dice, game,
 * bet, pool_served, pool_index, modulus, modulus_bits, class_group, discriminant, iterations,
 * epoch, rng_value, won, payout, rule, anchor_status, anchor, replay_steps, server_verified,
 * notes, elapsed_ms}; for a class group, modulus_bits is the discriminant's size and discriminant the
 * server's "-0x…" string (which epoch_input checks). Throws VerifyError when there is nothing to
 * verify.
 */
export async function verifyGame(baseUrl, gameId, onStep, options) {
  options = options ?? {};
  const minMarginCenti = parseMinMargin(options.minMargin);
  const minRate = parseMinRate(options.minRate);
  const allowVersion1 = options.allowVersion1 === true;
  // The witnessed step's inputs are the verifier's own (PROTOCOL.md §21), read before anything
  // is fetched so that a bad policy is the caller's RangeError, not a failed step.
  const witness = await witnessInputs(options);
  const started = Date.now();
  const fetchFn = options.fetch || globalThis.fetch.bind(globalThis);
  const body = options.body || (await fetchVerification(baseUrl, gameId, fetchFn));
  const p = body.proof;
  const notes = witness ? witness.module.policyNotes(witness.policy) : [];
  const bet = p.bet && typeof p.bet === "object" ? p.bet : {};
  const steps = [];
  const report = (step) => {
    steps.push(step);
    if (onStep) {
      try {
        onStep(step);
      } catch {
        // A display callback failing is not a verification failure.
      }
    }
  };
  const check = async (name, fn) => {
    let step;
    try {
      // A check returns its detail, or {detail, pending} for a step that waits on the server.
      const out = await fn();
      step = out !== null && typeof out === "object" ? { name, passed: true, ...out } : { name, passed: true, detail: out };
    } catch (e) {
      const failed = [CheckFailed, ClassGroupError, RangeError, TypeError].some((kind) => e instanceof kind);
      if (!failed) throw e;
      step = { name, passed: false, detail: e.message };
    }
    report(step);
    return step;
  };

  // Shared values, each failing only the checks that need it.
  const lazy = (fn) => {
    let v;
    return () => (v ??= fn());
  };
  // A class group has no N: its elements are 100-byte forms and ℓ is 33 bytes.
  const classGroup = isClassGroupId(p.modulus);
  const N = lazy(() =>
    classGroup ? fail(`${p.modulus} is a class group: it has no RSA modulus`) : modulusFromId(p.modulus),
  );
  // The epoch's timing commitment (PROTOCOL.md §10): null for version 1 (also when the proof
  // has no `timing`, as from a server before the timing rule), else what seed_e is over.
  const commitmentOf = lazy(() =>
    timingCommitment(p.timing, count(p.vdfEpoch, "vdfEpoch"), p.iterations, "timing") ?? false,
  );
  const committed = () => commitmentOf() || null;
  // seed_e and, for a class group, D_e: shared by epoch_input and vdf_proof.
  const epochSeedOf = lazy(async () => {
    const prev = el("previous_output");
    // An RSA output must be canonical, so the seed is over its one encoding.
    if (!classGroup) decodeElement(p.previous_output, N(), "previous_output");
    const root = hexToBytes(p.bets_root, 32, "bets_root");
    const e = count(p.vdfEpoch, "vdfEpoch");
    const t = parseIterations(p.iterations);
    const c = committed();
    if (!c) return epochSeed(e, prev, root, t);
    return epochSeedV2(
      e,
      c.previous,
      prev,
      root,
      c.nonce,
      t,
      c.opened_at_ms,
      c.closed_at_ms,
      c.margin_centi,
      c.squarings_per_second,
    );
  });
  const discriminantOf = lazy(async () => epochDiscriminant(p.modulus, await epochSeedOf()));
  // The VDF check: in D_e from the seed for a class group; in N for an RSA group, where the
  // proof also spells N out (modulus_n) and one that is not the id's is refused.
  const proofOf = async () => {
    if (classGroup) {
      let disc;
      try {
        disc = await discriminantOf();
      } catch (e) {
        if (e instanceof CheckFailed) fail(`no discriminant D_e to check the proof in: ${e.message}`);
        throw e;
      }
      const detail = await verifyClassGroupProof(disc, p);
      return `${detail} (class group of the epoch's ${classGroupBits(p.modulus)}-bit discriminant D_e)`;
    }
    if (p.modulus_n !== undefined && p.modulus_n !== null) {
      const given = hexToBytes(p.modulus_n, undefined, "modulus_n");
      if (bytesToBigInt(given) !== N()) fail(`modulus_n is not the modulus ${p.modulus}`);
    }
    const detail = await verifyWesolowski(N(), p);
    return `${detail} (${bitLength(N())}-bit modulus ${p.modulus})`;
  };
  const k = () => (classGroup ? FORM_SIZE : byteLength(N()));
  const lBytes = () => (classGroup ? L_BYTES : 32);
  const el = (name) => hexToBytes(p[name], k(), name);
  const claims = claimsOf(body);
  const poolServed = p.pool_served === true;
  const game = bet.game;
  const isRng = game === "rng";

  // --- the group: the verifier's choice, never the server's (section 13) ---------------------
  // Wesolowski's argument holds only in a group whose order nobody knows: a server free to name
  // a modulus it can factor (a test modulus, a hex: one of its own) could forge every proof.
  await check("group", async () => {
    const m = p.modulus;
    if (typeof m !== "string") fail("the proof names no group (modulus)");
    const wanted = options.group === undefined ? DEFAULT_GROUP : options.group;
    if (wanted !== null && m.toLowerCase() !== String(wanted).toLowerCase()) {
      fail(`the proof is in group ${JSON.stringify(m)}, but this verifier requires ${JSON.stringify(wanted)}`);
    }
    const veo = `VEO-WESOLOWSKI-${veoGroup(m)}`;
    if (p.veo_class !== undefined && p.veo_class !== veo) fail(`veo_class is ${JSON.stringify(p.veo_class)}, not ${veo}`);
    let what;
    if (classGroup) {
      const bits = classGroupBits(m);
      if (poolServed) fail("a class-group service keeps no pool (section 19)");
      if (p.discriminant_bits !== undefined && p.discriminant_bits !== bits) {
        fail(`discriminant_bits is ${p.discriminant_bits}, not ${bits}`);
      }
      what = `${m} (a fresh ${bits}-bit discriminant every epoch)`;
    } else {
      if (p.modulus_n !== undefined && p.modulus_n !== null) {
        const given = hexToBytes(p.modulus_n, byteLength(N()), "modulus_n");
        if (bytesToBigInt(given) !== N()) fail(`modulus_n is not the modulus ${m}`);
      }
      what = `${m} (${bitLength(N())}-bit modulus)`;
    }
    return wanted === null
      ? `${what}: the group the server names, taken as it is (no group was required; require one, e.g. rsa2048, to refuse a server that names another)`
      : `${what}, the group this verifier requires`;
  });

  // --- the bet's own fields -------------------------------------------------------------------
  await check("bet_leaf", async () => {
    if (bet.game_id !== gameId) fail(`the proof is of game ${JSON.stringify(bet.game_id)}, not ${gameId}`);
    if (poolServed && isRng) fail("a raw RNG request is never pool-served");
    const leaf = hexToBytes(p.leaf, undefined, "leaf");
    if (!bytesEqual(betLeaf(bet), leaf)) fail("the leaf bytes do not encode the bet's fields");
    return `leaf (${leaf.length} bytes) encodes the bet: ${leafFields(bet)
      .slice(1, 6)
      .filter((f) => f)
      .join(" ")}`;
  });

  // --- the randomness: the epoch's output, or the pool entry's (y in the proof either way) ----
  if (!poolServed) {
    await epochChecks();
  } else {
    await poolChecks();
  }

  // --- the outcome ----------------------------------------------------------------------------
  let derived = null;
  await check("rng_value", async () => {
    const v = bytesToHex(await rngValue(el("y"), gameId, bet.player_seed));
    const claimedProof = typeof p.rngValue === "string" ? p.rngValue.toLowerCase() : p.rngValue;
    const claimedReplay = typeof claims.rngValue === "string" ? claims.rngValue.toLowerCase() : claims.rngValue;
    derived = { rngValue: v };
    if (claimedProof !== v || claimedReplay !== v) {
      fail(`recomputed ${v} but the server says ${claimedProof} (proof) and ${claimedReplay} (replay)`);
    }
    return `HMAC-SHA256(y, game_id ‖ player_seed) = ${v}${isRng ? " (the raw RNG request's value)" : ""}`;
  });
  if (isRng) {
    // A raw RNG request's value is rngValue itself: the server must claim no dice and no bet.
    await check("dice", async () => {
      if (claims.dice !== null && !eqArr(claims.dice, [])) {
        fail(`a raw RNG request rolls no dice, but the server says ${JSON.stringify(claims.dice)}`);
      }
      return "raw RNG request: no dice are rolled";
    });
    await check("payout", async () => {
      if (claims.won !== null || claims.payout !== null) {
        fail(`a raw RNG request has no bet, but the server says won ${claims.won} payout ${claims.payout}`);
      }
      return "raw RNG request: no bet to settle";
    });
  } else {
    await check("dice", async () => {
      if (!derived) fail("rngValue could not be recomputed");
      const roll = await rollDice(hexToBytes(derived.rngValue, 32), diceCount(game));
      derived.roll = roll;
      if (!eqArr(roll.dice, claims.dice)) {
        fail(`recomputed ${JSON.stringify(roll.dice)} but the server says ${JSON.stringify(claims.dice)}`);
      }
      const sum = roll.dice.reduce((a, b) => a + b, 0);
      if (claims.total !== null && claims.total !== sum) fail(`the server says total ${claims.total}, the dice sum to ${sum}`);
      return `dice ${roll.dice.join(", ")} from bytes ${roll.bytes_used}${roll.skipped ? ` (${roll.skipped} skipped)` : ""}`;
    });
    await check("payout", async () => {
      if (!derived || !derived.roll) fail("the dice could not be recomputed");
      const s = settle(bet, derived.roll.dice);
      derived.settlement = s;
      if (s.won !== claims.won || s.payout !== claims.payout) {
        fail(
          `recomputed won ${s.won} payout ${s.payout} but the server says won ${claims.won} payout ${claims.payout}`,
        );
      }
      return `${s.rule}; ${s.won ? `returns ${s.payout}` : "payout 0.00"} on ${bet.amount}`;
    });
  }

  // --- the signed acceptance (section 11, protocol version 2) ---------------------------------
  // The operator's keys come from GET /, fetched only when there is a signature to check.
  await check("acceptance", async () => {
    // Without a signature GET / serves the time rule (no keys published: version 1). A GET /
    // that cannot be fetched fails the step: "no keys" would let an unsigned game pass.
    const info = await getRecord(fetchFn, baseUrl, "/");
    return verifyAcceptance(p.acceptance, info.acceptance_keys, p);
  });

  // --- the anchor (section 16) ----------------------------------------------------------------
  const anchor = p.anchor;
  if (anchor && typeof anchor === "object" && anchor.batch !== null && anchor.batch !== undefined) {
    await check("anchor_inclusion", async () => {
      let leaf;
      if (poolServed) {
        leaf = anchorLeaf(2, count(p.pool_batch, "pool_batch"), hexToBytes(p.batch_root, 32, "batch_root"));
      } else {
        const rec = await epochRecord(
          count(p.vdfEpoch, "vdfEpoch"),
          parseIterations(p.iterations),
          hexToBytes(p.bets_root, 32, "bets_root"),
          el("previous_output"),
          el("x"),
          el("y"),
          hexToBytes(p.l, lBytes(), "l"),
          el("pi"),
        );
        leaf = anchorLeaf(1, p.vdfEpoch, rec);
      }
      if (bytesToHex(leaf) !== String(anchor.leaf).toLowerCase()) {
        fail(`the ${poolServed ? "pool batch" : "epoch"}'s anchor leaf is not anchor.leaf`);
      }
      // The batch's leaves are its epochs, then its pool batches, then its notary batches, each
      // by number (section 16): the position and the tree size follow from its ranges, so one
      // root cannot hold two versions of a record for the operator to choose between later.
      const at = anchorPosition(anchor, poolServed ? 2 : 1, poolServed ? count(p.pool_batch, "pool_batch") : count(p.vdfEpoch, "vdfEpoch"));
      if (anchor.leaf_index !== at.position || anchor.tree_size !== at.size) {
        fail(
          `leaf ${anchor.leaf_index} of ${anchor.tree_size} shown, but anchor batch ${anchor.batch}'s ranges put it at ${at.position} of ${at.size}`,
        );
      }
      const root = hexToBytes(anchor.root, 32, "anchor.root");
      const got = await rootFromPath(
        await leafHash(leaf),
        count(anchor.leaf_index, "anchor.leaf_index"),
        count(anchor.tree_size, "anchor.tree_size"),
        hashList(anchor.audit_path, "anchor.audit_path"),
      );
      if (!bytesEqual(got, root)) fail(`the audit path does not lead to anchor root ${anchor.root}`);
      const bound = await anchorCalldata(anchor, root, witness);
      if (String(anchor.calldata).toLowerCase() !== bound.calldata) {
        fail(`anchor.calldata is ${anchor.calldata}, but the batch's fields give ${bound.calldata}`);
      }
      const where = anchor.tx ? `transaction ${anchor.tx}` : `a transaction still ${anchor.status}`;
      return `leaf ${anchor.leaf_index} of ${anchor.tree_size} is under anchor batch ${anchor.batch}'s root ${short(
        anchor.root,
      )}, sent as calldata in ${where} on ${anchor.chain} (${anchor.chain_id}); check that transaction on a node of that chain; ${bound.detail}`;
    });
  }

  const failed = steps.find((s) => !s.passed);
  const dice = derived && derived.roll ? derived.roll.dice : [];
  return {
    game_id: gameId,
    verified: !failed,
    status: failed ? "failed" : "verified",
    failed_step: failed ? failed.name : null,
    steps,
    dice,
    game: game ?? null,
    bet,
    pool_served: poolServed,
    modulus: p.modulus ?? null,
    // For a class group: the discriminant's size.
    modulus_bits: (() => {
      try {
        return classGroup ? classGroupBits(p.modulus) : bitLength(N());
      } catch {
        return null;
      }
    })(),
    class_group: classGroup,
    discriminant: classGroup ? p.discriminant ?? null : null,
    iterations: p.iterations ?? null,
    epoch: p.vdfEpoch ?? null,
    pool_index: poolServed ? p.pool_index ?? null : null,
    rng_value: derived ? derived.rngValue : null,
    won: derived && derived.settlement ? derived.settlement.won : null,
    payout: derived && derived.settlement ? derived.settlement.payout : null,
    rule: derived && derived.settlement ? derived.settlement.rule : null,
    anchor_status: p.anchor_status ?? null,
    anchor: p.anchor && typeof p.anchor === "object" ? p.anchor : null,
    replay_steps: Array.isArray(body.replay_steps) ? body.replay_steps : [],
    server_verified: body.verified ?? null,
    notes,
    elapsed_ms: Date.now() - started,
  };

  // --- epoch games: sections 10, 11, 13 and 19 ------------------------------------------------
  async function epochChecks() {
    const e = p.vdfEpoch;

    // What seed_e is over, in words: version 1's fields, or version 2's with the timing.
    const seedFields = (t) => {
      const c = committed();
      if (!c) return `${e} ‖ y_prev ‖ bets_root ‖ ${t}`;
      return `${e} ‖ ${c.previous} ‖ y_p ‖ bets_root ‖ nonce ‖ ${t} ‖ ${c.opened_at_ms} ‖ ${c.closed_at_ms} ‖ ${c.margin_centi} ‖ ${c.squarings_per_second}`;
    };
    // x_e from seed_e: hash to group (RSA), or the generator of D_e (class group).
    const rsaInput = async (seed, t) => {
      const x = await hashToGroup(seed, N());
      if (!bytesEqual(bigIntToBytes(x, k()), el("x"))) {
        fail(
          committed()
            ? "x does not follow from the epoch, its predecessor, previous output, bets root, nonce, T and timing"
            : "x does not follow from the epoch, previous output, bets root and T",
        );
      }
      return `x = hash_to_group(SHA-256(tag ‖ ${seedFields(t)}))`;
    };
    const classGroupInput = async (t) => {
      const bits = classGroupBits(p.modulus);
      const d = await discriminantOf();
      if (typeof p.discriminant !== "string") fail("the proof names no discriminant");
      const named = await classGroupCheck(async () => parseDiscriminant(p.discriminant));
      if (named.value !== d.value) fail(`the discriminant is not D_e = create_discriminant(seed_e, ${bits}) = ${short(d.toHex())}`);
      if (p.discriminant_bits !== undefined && p.discriminant_bits !== bits) fail(`discriminant_bits is ${p.discriminant_bits}, not ${bits}`);
      if (!bytesEqual(el("x"), generatorBytes())) fail("x is not the generator's bytes (0x08 then 99 zero bytes)");
      return `x = the generator of D_e = create_discriminant(SHA-256(tag ‖ ${seedFields(t)}), ${bits}) = ${short(d.toHex())}`;
    };
    // Public epoch records (this epoch's, which must tell the same story as this proof, and
    // its neighbours'), each fetched once.
    const records = new Map();
    const epochRecordOf = async (n) => {
      if (!records.has(n)) records.set(n, await getRecord(fetchFn, baseUrl, `/api/v1/epochs/${n}`));
      return records.get(n);
    };
    const getEpoch = async () => epochRecordOf(count(e, "vdfEpoch"));
    // PROTOCOL.md §21, "Moved games": a game of void epoch e moved (by logged move entries) to
    // epoch D = vdfEpoch. Its leaf stays in e's tree, whose root and size the first move entry
    // repeats; everything else is D's.
    const moved = isMovedGame(p);
    const witnessModule = async () => (witness ? witness.module : await import("./vrs-witnessed.mjs"));
    const firstMoveOf = lazy(async () => (await witnessModule()).firstMove(p));

    await check("merkle_inclusion", async () => {
      const leaf = hexToBytes(p.leaf, undefined, "leaf");
      const lh = await leafHash(leaf);
      if (p.leaf_hash !== undefined && bytesToHex(lh) !== String(p.leaf_hash).toLowerCase()) {
        fail("leaf_hash is not SHA-256(0x00 ‖ leaf)");
      }
      const index = count(p.leaf_index, "leaf_index");
      if (moved) {
        const m = await firstMoveOf();
        const rootHex = bytesToHex(m.bets_root);
        const got = await rootFromPath(lh, index, m.bet_count, hashList(p.audit_path, "audit_path"));
        if (!bytesEqual(got, m.bets_root)) {
          fail(`leaf ${index} of ${m.bet_count} and the audit path do not lead to epoch ${m.epoch}'s bets root ${rootHex} (the first move's)`);
        }
        return `leaf ${index} of ${m.bet_count} leads to epoch ${m.epoch}'s bets root ${short(rootHex)}, the first move's (the game moved to epoch ${e})`;
      }
      const root = hexToBytes(p.bets_root, 32, "bets_root");
      const size = count(p.bet_count, "bet_count");
      const got = await rootFromPath(lh, index, size, hashList(p.audit_path, "audit_path"));
      if (!bytesEqual(got, root)) fail(`leaf ${index} of ${size} and the audit path do not lead to bets root ${p.bets_root}`);
      return `leaf ${index} of ${size} leads to bets root ${short(p.bets_root)}`;
    });

    // The chain of moves from the epoch the game was accepted into to D (PROTOCOL.md §21,
    // "Moved games"): under a witness policy each move proven in checkpoints its quorum
    // cosigned; without one, from the entries' bytes (the witnessed note says what is trusted).
    if (moved) {
      await check("moved", async () => (await witnessModule()).checkMoved(p, witness ? witness.policy : null));
    }

    // D's published leaves hash to its bets root, as for any of D's games; a moved game's leaf
    // is among those of the epoch its first move names (e), which hash to the move's root.
    const movedLeaf = async (dLeaves) => {
      const m = await firstMoveOf();
      const en = Number(m.epoch);
      if (!Number.isSafeInteger(en)) fail(`the first move's epoch ${m.epoch} is not an epoch this verifier can fetch`);
      const rec = await epochRecordOf(en);
      const hashes = hashList(rec.leaf_hashes, `epoch ${en} leaf_hashes`);
      const root = await merkleRoot(hashes);
      if (bytesToHex(root) !== String(rec.bets_root).toLowerCase()) fail(`epoch ${en}'s ${hashes.length} leaves do not hash to its bets root`);
      if (!bytesEqual(root, m.bets_root)) fail(`epoch ${en}'s published bets root is not the first move's ${bytesToHex(m.bets_root)}`);
      if (rec.bet_count !== hashes.length || m.bet_count !== BigInt(hashes.length)) {
        fail(`bet count ${m.bet_count} (first move) / ${rec.bet_count} (epoch ${en}) but ${hashes.length} leaves`);
      }
      const i = count(p.leaf_index, "leaf_index");
      const lh = bytesToHex(await leafHash(hexToBytes(p.leaf, undefined, "leaf")));
      if (!(i < hashes.length) || bytesToHex(hashes[i]) !== lh) fail(`epoch ${en}'s leaf ${i} is not this game's leaf (the game moved from epoch ${en})`);
      return (
        `epoch ${e}'s ${dLeaves} published leaves hash to its bets root; the game's leaf ${i} is among the ` +
        `${hashes.length} of epoch ${en}, which hash to the first move's bets root`
      );
    };

    await check("bets_root", async () => {
      const rec = await getEpoch();
      const hashes = hashList(rec.leaf_hashes, `epoch ${e} leaf_hashes`);
      const root = await merkleRoot(hashes);
      if (bytesToHex(root) !== String(rec.bets_root).toLowerCase()) fail(`epoch ${e}'s ${hashes.length} leaves do not hash to its bets root`);
      if (String(rec.bets_root).toLowerCase() !== String(p.bets_root).toLowerCase()) {
        fail(`epoch ${e}'s published bets root is not the proof's`);
      }
      if (rec.bet_count !== hashes.length || p.bet_count !== hashes.length) {
        fail(`bet count ${p.bet_count} (proof) / ${rec.bet_count} (epoch) but ${hashes.length} leaves`);
      }
      if (moved) return movedLeaf(hashes.length);
      const i = count(p.leaf_index, "leaf_index");
      const lh = bytesToHex(await leafHash(hexToBytes(p.leaf, undefined, "leaf")));
      if (!(i < hashes.length) || bytesToHex(hashes[i]) !== lh) fail(`epoch ${e}'s leaf ${i} is not this game's leaf`);
      return `epoch ${e}'s ${hashes.length} published leaves hash to its bets root`;
    });

    await check("epoch_chain", async () => {
      const prev = el("previous_output");
      const ei = count(e, "vdfEpoch");
      if (ei < 1) fail("epoch numbers start at 1");
      // p(e): e − 1 for version 1, the committed predecessor for version 2; 0 is the genesis.
      const pe = previousEpoch(p.timing, ei, "timing");
      if (pe >= ei) fail(`the input is taken from epoch ${pe}, not one before epoch ${ei}`);
      let source;
      let expected;
      if (pe === 0 && classGroup) {
        source = `the genesis output y_0 of ${p.modulus} (the generator's bytes)`;
        expected = generatorBytes();
      } else if (pe === 0) {
        source = `the genesis output y_0 of ${p.modulus}`;
        expected = await genesisOutput(p.modulus, N());
      } else {
        const before = await epochRecordOf(pe);
        source = `y of epoch ${pe}`;
        if (typeof before.y !== "string") fail(`epoch ${pe} has no output`);
        expected = hexToBytes(before.y, k(), `epoch ${pe}'s y`);
      }
      if (!bytesEqual(prev, expected)) fail(`the previous output is not ${source}`);
      const rec = await getEpoch();
      if (String(rec.previous_output).toLowerCase() !== bytesToHex(prev)) fail(`epoch ${ei}'s published previous output differs from the proof's`);
      if (rec.previous_epoch !== undefined && rec.previous_epoch !== null && rec.previous_epoch !== pe) {
        fail(`epoch ${ei}'s published predecessor is epoch ${rec.previous_epoch}, not the proof's ${pe}`);
      }
      return `the previous output is ${source}`;
    });

    // Section 13, `epoch_record`: the epoch is published resolved, telling the same story as the
    // proof. Without it an operator could evaluate epoch e twice (two nonces, two squarers) and
    // hand a game whichever run it prefers while publishing the other.
    await check("epoch_record", async () => {
      const ei = count(e, "vdfEpoch");
      const rec = await getEpoch();
      if (rec.status !== "resolved") fail(`epoch ${ei} is ${JSON.stringify(rec.status)}, not resolved`);
      const pairs = EPOCH_RECORD_PAIRS.filter(([mine]) => p.timing !== undefined || !mine.startsWith("timing."));
      const missing = [];
      const differ = [];
      for (const [mine, theirs] of pairs) {
        const a = memberAt(p, mine);
        const b = memberAt(rec, theirs);
        if (a === undefined || b === undefined) missing.push(mine === theirs ? mine : `${mine}/${theirs}`);
        else if (!jsonEqual(a, b)) differ.push(mine === theirs ? mine : `${mine} (record ${theirs})`);
      }
      if (missing.length) fail(`a member is missing: ${missing.join(", ")}`);
      if (differ.length) fail(`epoch ${ei}'s record differs from the proof in: ${differ.join(", ")}`);
      return `GET /api/v1/epochs/${ei} is resolved with the proof's ${pairs.length} values`;
    });

    await check("epoch_input", async () => {
      const t = parseIterations(p.iterations);
      const seed = await epochSeedOf();
      if (p.epoch_seed && String(p.epoch_seed).toLowerCase() !== bytesToHex(seed)) {
        fail(
          committed()
            ? "epoch_seed is not SHA-256(tag ‖ e ‖ p ‖ y_p ‖ bets_root ‖ nonce ‖ T ‖ opened ‖ closed ‖ margin ‖ rate)"
            : "epoch_seed is not SHA-256(tag ‖ e ‖ y_prev ‖ bets_root ‖ T)",
        );
      }
      const detail = classGroup ? await classGroupInput(t) : await rsaInput(seed, t);
      const rec = await getEpoch();
      if (String(rec.x).toLowerCase() !== String(p.x).toLowerCase()) fail(`epoch ${e}'s published x differs from the proof's`);
      if (String(rec.iterations) !== String(p.iterations)) fail(`epoch ${e}'s published T differs from the proof's`);
      return detail;
    });

    await check("vdf_proof", async () => {
      const detail = await proofOf();
      const rec = await getEpoch();
      for (const f of ["y", "pi", "l"]) {
        if (String(rec[f]).toLowerCase() !== String(p[f]).toLowerCase()) fail(`epoch ${e}'s published ${f} differs from the proof's`);
      }
      return detail;
    });

    // PROTOCOL.md §10, "Timing": a version-2 epoch's games were fixed before y of epoch e − 1
    // was stored, and within the bound its declared margin and rate allow. The commitment is
    // the proof's (the one seed_e is over), checked against the epoch's public record; the
    // neighbours' times come from their own public records, never from the proof.
    await check("timing", async () => {
      const ei = count(e, "vdfEpoch");
      const c = committed();
      const rec = await getEpoch();
      const published = timingVersion(rec, `epoch ${ei}'s record`);
      if (published !== (c ? 2 : 1)) {
        fail(`the proof says version ${c ? 2 : 1} but epoch ${ei}'s record says version ${published}`);
      }
      // Epoch e − 1's record: its version (no going back to version 1), its close (e opened
      // after it) and when its y was stored (e closed before it).
      let prior = null;
      if (ei > 1) {
        const before = await epochRecordOf(ei - 1);
        prior = {
          version: timingVersion(before, `epoch ${ei - 1}'s record`),
          closed_at_ms: typeof before.closed_at_ms === "number" ? before.closed_at_ms : null,
          resolved_at_ms: typeof before.resolved_at_ms === "number" ? before.resolved_at_ms : null,
        };
      }
      if (!c) {
        return checkTiming({ epoch: ei, timing: null, prior, min_margin_centi: minMarginCenti, min_rate: minRate, allow_version_1: allowVersion1 });
      }
      const r = timingCommitment(rec, ei, rec.iterations, `epoch ${ei}'s record`);
      const same = [
        ["previous_epoch", c.previous, r.previous],
        ["nonce", bytesToHex(c.nonce), bytesToHex(r.nonce)],
        ["T", c.iterations, r.iterations],
        ["opened_at_ms", c.opened_at_ms, r.opened_at_ms],
        ["closed_at_ms", c.closed_at_ms, r.closed_at_ms],
        ["security_margin", centi(c.margin_centi), centi(r.margin_centi)],
        ["squarings_per_second", c.squarings_per_second, r.squarings_per_second],
      ];
      for (const [name, mine, theirs] of same) {
        if (mine !== theirs) fail(`epoch ${ei}'s published ${name} (${theirs}) differs from the proof's (${mine})`);
      }
      let predecessor = null;
      if (c.previous >= 1 && c.previous < ei) {
        const pr = await epochRecordOf(c.previous);
        if (typeof pr.closed_at_ms !== "number") fail(`epoch ${c.previous} (the predecessor) is not closed`);
        if (pr.iterations === undefined || pr.iterations === null) fail(`epoch ${c.previous} (the predecessor) has no T`);
        predecessor = {
          closed_at_ms: count(pr.closed_at_ms, `epoch ${c.previous}'s closed_at_ms`),
          iterations: parseIterations(pr.iterations),
        };
      }
      return checkTiming({ epoch: ei, timing: c, predecessor, prior, min_margin_centi: minMarginCenti, min_rate: minRate });
    });

    // PROTOCOL.md §21, "The witnessed step": the epoch's plan and commitment are in the
    // operator's log, cosigned in time by a quorum of the verifier's witnesses, and they are
    // the record judged here. Without a policy nothing times the epoch: the report says so.
    if (!witness) {
      notes.push(WITNESSED_NOTE);
      return;
    }
    await check("witnessed", async () => {
      const log = p.log;
      if (log === undefined || log === null) fail(`the server publishes no witnessed log for epoch ${e}`);
      if (typeof log !== "object") fail("the proof's log is not an object");
      const group = options.group === undefined ? DEFAULT_GROUP : options.group ?? p.modulus;
      return witness.module.checkWitnessed(log.plan, log.commitment, witness.policy, {
        maxRate: witness.maxRate ?? witness.module.defaultMaxRate(group),
        deltaMs: witness.deltaMs,
        previousOutput: log.previous_output ?? [],
        shown: witness.module.shownOfProof(p),
      });
    });
  }

  // --- pool-served games: section 14 ----------------------------------------------------------
  async function poolChecks() {
    const b = p.pool_batch;
    const index = p.pool_index;
    // The instant-bet pool runs in RSA groups only (protocol/src/epoch_group.rs).
    const rsaOnly = () => {
      if (classGroup) fail(`pool-served games run in an RSA group, but this one names the class group ${p.modulus}`);
    };
    let batchRec = null;
    const getBatch = async () => (batchRec ??= await getRecord(fetchFn, baseUrl, `/api/v1/pool/batches/${count(b, "pool_batch")}`));
    let batchSeed = null;

    await check("pool_batch_chain", async () => {
      const bi = count(b, "pool_batch");
      const i = count(index, "pool_index");
      const prevRoot = hexToBytes(p.previous_batch_root, 32, "previous_batch_root");
      const first = count(p.batch_first_index, "batch_first_index");
      const size = count(p.batch_size, "batch_size");
      let expectedFirst;
      if (bi < 1) fail("pool batches start at 1");
      if (bi === 1) {
        if (!bytesEqual(prevRoot, new Uint8Array(32))) fail("batch 1's previous root is not 32 zero bytes");
        expectedFirst = 1;
      } else {
        const prev = await getRecord(fetchFn, baseUrl, `/api/v1/pool/batches/${bi - 1}`);
        if (String(prev.root).toLowerCase() !== bytesToHex(prevRoot)) fail(`batch ${bi} does not link to batch ${bi - 1}'s published root`);
        expectedFirst = count(prev.first_index, "previous batch's first_index") + count(prev.size, "previous batch's size");
      }
      if (first !== expectedFirst) fail(`batch ${bi} starts at entry ${first}, not ${expectedFirst}`);
      if (size < 1) fail(`batch ${bi} is empty`);
      if (!(first <= i && i < first + size)) fail(`entry ${i} is outside batch ${bi} (${first}..${first + size})`);
      const rec = await getBatch();
      if (
        rec.first_index !== first ||
        rec.size !== size ||
        String(rec.previous_root).toLowerCase() !== bytesToHex(prevRoot)
      ) {
        fail(`batch ${bi}'s published row differs from the proof's`);
      }
      return `batch ${bi} follows root ${short(bytesToHex(prevRoot))} and holds entries ${first} to ${first + size - 1} (${size} entries)`;
    });

    await check("pool_anchor", async () => {
      rsaOnly();
      const ae = count(p.anchor_epoch, "anchor_epoch");
      const ay = el("anchor_y");
      // Section 14: a pool game's vdfEpoch is its batch's anchor epoch.
      if (p.vdfEpoch !== undefined && p.vdfEpoch !== null && p.vdfEpoch !== ae) {
        fail(`vdfEpoch ${p.vdfEpoch} is not the anchor epoch ${ae}`);
      }
      const rec = await getRecord(fetchFn, baseUrl, `/api/v1/epochs/${ae}`);
      if (rec.status !== "resolved" || typeof rec.y !== "string") fail(`anchor epoch ${ae} is not resolved`);
      if (String(rec.y).toLowerCase() !== bytesToHex(ay)) fail(`anchor_y is not y of epoch ${ae}`);
      // Its proof too: an unproved y would let the operator choose the batch seed.
      await verifyWesolowski(N(), rec);
      return `anchored to resolved epoch ${ae}, whose proof verifies; anchor_y is its y`;
    });

    await check("pool_batch_seed", async () => {
      const seed = await poolBatchSeed(
        count(b, "pool_batch"),
        hexToBytes(p.previous_batch_root, 32, "previous_batch_root"),
        count(p.anchor_epoch, "anchor_epoch"),
        el("anchor_y"),
      );
      batchSeed = seed;
      if (bytesToHex(seed) !== String(p.batch_seed).toLowerCase()) fail("batch_seed does not follow from b, the previous root, the anchor epoch and its y");
      const rec = await getBatch();
      if (String(rec.seed).toLowerCase() !== bytesToHex(seed) || rec.anchor_epoch !== p.anchor_epoch) {
        fail(`batch ${b}'s published seed or anchor epoch differs from the proof's`);
      }
      return "batch seed = H(b ‖ previous root ‖ anchor epoch ‖ anchor y)";
    });

    await check("pool_entry_input", async () => {
      rsaOnly();
      const bs = batchSeed ?? hexToBytes(p.batch_seed, 32, "batch_seed");
      const seed = await poolEntrySeed(bs, count(index, "pool_index"), hexToBytes(p.secret, 32, "secret"));
      if (p.entry_seed && String(p.entry_seed).toLowerCase() !== bytesToHex(seed)) fail("entry_seed is not H(batch seed ‖ i ‖ r_i)");
      const x = await hashToGroup(seed, N());
      if (!bytesEqual(bigIntToBytes(x, k()), el("x"))) fail("x does not follow from the batch seed, the index and the revealed secret");
      return `x = hash_to_group(H(batch seed ‖ ${index} ‖ r_i))`;
    });

    await check("vdf_proof", async () => {
      rsaOnly();
      return proofOf();
    });

    await check("pool_inclusion", async () => {
      const leaf = poolEntryLeaf(
        count(index, "pool_index"),
        parseIterations(p.iterations),
        el("x"),
        el("y"),
        hexToBytes(p.l, 32, "l"),
        el("pi"),
      );
      if (p.entry_leaf !== undefined && bytesToHex(leaf) !== String(p.entry_leaf).toLowerCase()) {
        fail("entry_leaf is not the leaf of (i, T, x, y, ℓ, π)");
      }
      const lh = await leafHash(leaf);
      const position = count(p.leaf_index, "leaf_index");
      if (position !== index - p.batch_first_index) fail(`leaf index ${position} is not entry ${index}'s position`);
      const root = hexToBytes(p.batch_root, 32, "batch_root");
      const got = await rootFromPath(lh, position, count(p.batch_size, "batch_size"), hashList(p.audit_path, "audit_path"));
      if (!bytesEqual(got, root)) fail(`entry ${index} is not under batch root ${p.batch_root}`);
      const rec = await getBatch();
      if (String(rec.root).toLowerCase() !== bytesToHex(root)) fail(`batch ${b}'s published root differs from the proof's`);
      const hashes = hashList(rec.leaf_hashes, `batch ${b} leaf_hashes`);
      if (hashes.length !== p.batch_size || !bytesEqual(await merkleRoot(hashes), root)) {
        fail(`batch ${b}'s published leaf hashes do not hash to its root`);
      }
      if (!bytesEqual(hashes[position], lh)) fail(`batch ${b}'s published leaf ${position} is not this entry's`);
      return `entry ${index} is leaf ${position} of ${p.batch_size} under batch root ${short(p.batch_root)}`;
    });

    await check("pool_committed", async () => {
      const committed = count(p.batch_committed_at_ms, "batch_committed_at_ms");
      const created = count(p.bet_created_at_ms, "bet_created_at_ms");
      const rec = await getBatch();
      if (rec.committed_at_ms !== committed) fail(`batch ${b}'s published commit time differs from the proof's`);
      if (committed > created) fail(`batch ${b} was committed ${committed - created} ms after the bet arrived`);
      return `batch ${b} was committed ${created - committed} ms before the bet arrived`;
    });

    await check("pool_game_id", async () => {
      const id = await poolGameId(count(index, "pool_index"), el("y"));
      if (id !== gameId) fail(`entry ${index}'s game id is ${id}, not ${gameId}`);
      const rec = await getBatch();
      const served = Array.isArray(rec.served) ? rec.served.find((s) => s && s.index === index) : null;
      if (!served || served.game_id !== gameId) fail(`batch ${b}'s serving log does not name this game for entry ${index}`);
      return `game id = H(${index} ‖ y)[0..16], and the serving log names this game`;
    });

    // Section 14, "Binding served bets": from version 2 the game's bet leaf is also a leaf of
    // its bet epoch E's tree, so once E is closed bets_root_E (inside seed_E) fixes the bet.
    // The epoch's public record is the authority: its leaves, its root and its count.
    await check("pool_bet_inclusion", async () => {
      const be = p.bet_epoch;
      if (be === null || be === undefined) {
        const info = await getRecord(fetchFn, baseUrl, "/");
        unsignedOnlyBeforeSigning(info.acceptance_keys, p, "bound to no epoch");
        return "served before version 2: bound by no epoch";
      }
      if (typeof be !== "object") fail("bet_epoch is not an object");
      const E = count(be.epoch, "bet_epoch.epoch");
      // The leaf of the bet the outcome is recomputed from, not a copy kept apart from it.
      const leaf = betLeaf(bet);
      if (!bytesEqual(leaf, hexToBytes(p.leaf, undefined, "leaf"))) fail("the proof's leaf does not encode its bet");
      const lh = await leafHash(leaf);
      // Whether E is still open is what E's public record says, never what the proof says: a
      // proof calling a long-closed epoch "pending" must not excuse a bet missing from its tree.
      const rec = await getRecord(fetchFn, baseUrl, `/api/v1/epochs/${E}`);
      if (rec.epoch !== undefined && rec.epoch !== E) fail(`GET /api/v1/epochs/${E} answers with epoch ${rec.epoch}`);
      if (rec.status === "open") return { detail: `pending: epoch ${E} is still open, its tree not fixed yet`, pending: true };
      if (rec.status !== "closed" && rec.status !== "resolved") fail(`epoch ${E} is ${JSON.stringify(rec.status)}: neither open, closed nor resolved`);
      const published = hexToBytes(rec.bets_root, 32, `epoch ${E}'s bets_root`);
      const hashes = hashList(rec.leaf_hashes, `epoch ${E} leaf_hashes`);
      if (!bytesEqual(await merkleRoot(hashes), published)) fail(`epoch ${E}'s ${hashes.length} published leaves do not hash to its bets root`);
      if (rec.bet_count !== hashes.length) fail(`epoch ${E}'s bet count ${rec.bet_count} but ${hashes.length} published leaves`);
      const position = hashes.findIndex((h) => bytesEqual(h, lh));
      if (position < 0) {
        fail(`the bet is not in epoch ${E}'s committed tree (${hashes.length} leaves): dropped or altered after it was accepted`);
      }
      // The proof's copy of the binding, where given, must be the published one. Its status may
      // lag (read while E was open: "pending", without the copy), never be something else.
      if (be.status !== "pending" && be.status !== "bound") fail(`bet_epoch.status ${JSON.stringify(be.status)} is neither "pending" nor "bound"`);
      if (be.leaf_index !== undefined && be.leaf_index !== position) fail(`bet_epoch.leaf_index ${be.leaf_index} is not the leaf's position ${position}`);
      if (be.tree_size !== undefined && be.tree_size !== hashes.length) fail(`bet_epoch.tree_size ${be.tree_size} is not epoch ${E}'s ${hashes.length} leaves`);
      if (be.bets_root !== undefined && !bytesEqual(hexToBytes(be.bets_root, 32, "bet_epoch.bets_root"), published)) {
        fail(`epoch ${E}'s published bets root is not bet_epoch.bets_root`);
      }
      if (be.audit_path !== undefined) {
        const got = await rootFromPath(lh, position, hashes.length, hashList(be.audit_path, "bet_epoch.audit_path"));
        if (!bytesEqual(got, published)) fail(`bet_epoch.audit_path does not lead from leaf ${position} to epoch ${E}'s bets root`);
      }
      const where = `the game's leaf is leaf ${position} of ${hashes.length} in epoch ${E}'s tree, whose published leaves hash to its bets root ${short(
        bytesToHex(published),
      )}`;
      // Until E resolves, no output commits to that root yet: pending, not passed for good.
      if (rec.status !== "resolved") return { detail: `${where}; pending: epoch ${E} is not resolved yet`, pending: true };
      rsaOnly();
      await verifyPublishedEpoch(N(), rec, E);
      return `${where}, which epoch ${E}'s input commits to (its x follows and its proof verifies)`;
    });

  }
}
