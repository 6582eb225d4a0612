// vrs in-browser verifier: the class-group VDF of chiavdf 1.2.0 (PROTOCOL.md §18).
//
// A port of engine/src/classgroup (discriminant.rs, primality.rs, hash_prime.rs, bqfc.rs,
// form.rs, wesolowski.rs, epoch.rs), verdict for verdict and byte for byte: which HashPrime
// candidate is accepted, and the compressed encodings, must be chiavdf's exactly, so those parts
// (the primality test, the Lehmer partial GCD, bqfc) follow the Rust step by step. Plain ES
// module with no dependencies: BigInt, and globalThis.crypto.subtle for SHA-256.
//
//   import { createDiscriminant, verifyEpoch } from "./vrs-classgroup.mjs";
//   const d = await createDiscriminant(seed, 1024);          // d.toHex() = "-0x…"
//   const b = await verifyEpoch(d, { x, y, pi, l }, 1000n);  // throws ClassGroupError
//
// Every refusal of input bytes or numbers throws a ClassGroupError (only a missing WebCrypto
// throws a plain Error). Variable time throughout: every input of a VDF is public.

/** A refused discriminant, encoding, form or proof. */
export class ClassGroupError extends Error {
  constructor(message) {
    super(message);
    this.name = "ClassGroupError";
  }
}
const refuse = (msg) => {
  throw new ClassGroupError(msg);
};

/** Bytes of every compressed form chiavdf 1.2.0 writes or reads (`BQFC_FORM_SIZE`). */
export const FORM_SIZE = 100;
/** Discriminant sizes chiavdf 1.2.0 creates. */
export const MIN_BITS = 8;
export const MAX_BITS = 1024;
/** Bits of the Wesolowski challenge prime B (chiavdf's `B_bits`), and its stored bytes. */
export const B_BITS = 264;
export const L_BYTES = B_BITS / 8;

// ---------------------------------------------------------------------------------------------
// Integers
// ---------------------------------------------------------------------------------------------

const abs = (x) => (x < 0n ? -x : x);

/** Bits of |x| (0 for 0), from its hex digits: toString(2) would cost 4 times as much, and
 *  this is on the partial GCD's path. */
function bitLength(x) {
  if (x === 0n) return 0;
  const hex = abs(x).toString(16);
  return 4 * (hex.length - 1) + (32 - Math.clz32(parseInt(hex[0], 16)));
}

/** x mod m with the sign of m (num-integer's mod_floor). */
function modFloor(x, m) {
  const r = x % m;
  return r !== 0n && r < 0n !== m < 0n ? r + m : r;
}

/** ⌊x / m⌋ (num-integer's div_floor); BigInt's `/` truncates, as num-bigint's `/` does. */
function divFloor(x, m) {
  const q = x / m;
  return x % m !== 0n && x < 0n !== m < 0n ? q - 1n : q;
}

/** gcd ≥ 0. */
function gcd(a, b) {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

function isqrt(n) {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(bitLength(n) / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
const bytesToBigIntBE = (bytes) => (bytes.length ? BigInt(`0x${toHex(bytes)}`) : 0n);
const bytesToBigIntLE = (bytes) => bytesToBigIntBE(Uint8Array.from(bytes).reverse());

function bytesEqual(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function concatBytes(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

async function sha256(bytes) {
  const subtle = globalThis.crypto && globalThis.crypto.subtle;
  if (!subtle) throw new Error("this browser has no WebCrypto (crypto.subtle)");
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

// ---------------------------------------------------------------------------------------------
// chiavdf's is_prime_bpsw (primality.rs): its verdict on every candidate, not just "a BPSW"
// ---------------------------------------------------------------------------------------------

/** chiavdf's `pprods_max_prime`, `VPRP_MAX_D` and `min_pprods`. */
const PPRODS_MAX_PRIME = 14951;
const VPRP_MAX_D = 1000;
const MIN_PPRODS = 5;

/** chiavdf's `pprods` table: products of consecutive odd primes up to 14951, each group as long
 *  as its product stays below 2^64; with the primes of each product, for trial division. */
export const PRIME_PRODUCTS = (() => {
  const table = [];
  let group = { product: 1n, primes: [] };
  for (let p = 3; p <= PPRODS_MAX_PRIME; p += 2) {
    let prime = true;
    for (let q = 3; q * q <= p; q += 2) {
      if (p % q === 0) {
        prime = false;
        break;
      }
    }
    if (!prime) continue;
    if (group.product * BigInt(p) >= 1n << 64n) {
      table.push(group);
      group = { product: 1n, primes: [] };
    }
    group.product *= BigInt(p);
    group.primes.push(p);
  }
  table.push(group);
  return table;
})();

/** How many products chiavdf's GCD stage uses for n: all from 16 limbs on, fewer below. */
function productsUsed(n) {
  const limbs = Math.ceil(bitLength(n) / 64);
  if (limbs >= 16) return PRIME_PRODUCTS.length;
  const count = MIN_PPRODS + Math.floor(((PRIME_PRODUCTS.length - MIN_PPRODS) * limbs ** 3) / 4096);
  return Math.min(count, PRIME_PRODUCTS.length);
}

/** chiavdf's gcd(n mod m, m) ≠ 1 for its products m: since m is squarefree, that is "one of
 *  m's primes divides n", tested on n mod m split in two Number halves (cheaper than a BigInt
 *  GCD per product). */
function sharesTabledPrime(n) {
  const used = productsUsed(n);
  for (let i = 0; i < used; i++) {
    const { product, primes } = PRIME_PRODUCTS[i];
    const r = n % product;
    const hi = Number(r >> 32n);
    const lo = Number(r & 0xffffffffn);
    for (const p of primes) {
      if ((((hi % p) * (2 ** 32 % p)) % p + (lo % p)) % p === 0) return true;
    }
  }
  return false;
}

/** chiavdf's `is_prime_bpsw(n)` for n ≥ 0: its verdict, including "composite" for the tabled
 *  primes themselves (so create_discriminant(_, 8) is −239 for every seed). */
export function isProbablePrime(n) {
  n = BigInt(n);
  if (n < 0n) return false;
  if (n % 2n === 0n && n !== 2n) return false;
  if (sharesTabledPrime(n)) return false;
  if (n === 0n) return false;
  return millerRabinBase2(n) && lucasVProbablePrime(n);
}

/** One strong Fermat round to base 2, as chiavdf writes it. */
function millerRabinBase2(n) {
  if (n <= 1n) return false;
  const nMinus1 = n - 1n;
  let s = 0;
  while (((nMinus1 >> BigInt(s)) & 1n) === 0n) s++;
  const reduce = barrett(n);
  let b = powerOfTwo(nMinus1 >> BigInt(s), n, reduce);
  if (b === 1n) return true;
  for (let r = 0; ; ) {
    if (b === nMinus1) return true;
    r++;
    if (r >= s) return false;
    b = reduce(b * b);
  }
}

/** x ↦ x mod m for 0 ≤ x < m², by Barrett's method: shifts and multiplications instead of a
 *  BigInt division, which makes the base-2 test on 1024-bit candidates about 1.7 times faster
 *  (it is most of create_discriminant's time). */
function barrett(m) {
  const k = BigInt(bitLength(m));
  const mu = (1n << (2n * k)) / m;
  return (x) => {
    let r = x - (((x >> (k - 1n)) * mu) >> (k + 1n)) * m;
    while (r >= m) r -= m;
    return r;
  };
}

/** 2^e mod m (m > 1): square, and double where e has a 1 bit. */
function powerOfTwo(e, m, reduce) {
  let r = 1n % m;
  for (const bit of e.toString(2)) {
    r = reduce(r * r);
    if (bit === "1") {
      r <<= 1n;
      if (r >= m) r -= m;
    }
  }
  return r;
}

/** The Jacobi symbol (a/n) for odd n > 0 (0 for even or non-positive n). */
export function jacobi(a, n) {
  if (n <= 0n || n % 2n === 0n) return 0;
  a = modFloor(a, n);
  let result = 1;
  while (a !== 0n) {
    let tz = 0;
    while (((a >> BigInt(tz)) & 1n) === 0n) tz++;
    if (tz > 0) {
      a >>= BigInt(tz);
      const n8 = n % 8n;
      if (tz % 2 === 1 && (n8 === 3n || n8 === 5n)) result = -result;
    }
    [a, n] = [n, a];
    if (a % 4n === 3n && n % 4n === 3n) result = -result;
    a = modFloor(a, n);
  }
  return n === 1n ? result : 0;
}

/** chiavdf's `find_pq`: the first d in 5, −7, 9, −11, … (|d| < 1000) with (d/n) = −1 gives
 *  (P, Q) = (5, 5) for d = 5, else (1, (1 − d)/4); null when there is none. */
function findPQ(n) {
  for (let d = 5; d < VPRP_MAX_D; ) {
    d = d % 4 === 1 ? d : -d;
    if (jacobi(BigInt(d), n) === -1) return d === 5 ? [5n, 5n] : [1n, BigInt((1 - d) / 4)];
    d = Math.abs(d) + 2;
  }
  return null;
}

/** chiavdf's `is_vprp`: V_{n+1}(P, Q) mod n compared with 2Q the way chiavdf compares it (V
 *  reduced into (−n, 0] for Q < 0, into [0, n) otherwise). */
function lucasVProbablePrime(n) {
  const pq = findPQ(n);
  if (!pq) return false;
  const [p, q] = pq;
  let r = lucasV(n + 1n, n, p, q);
  if (q < 0n && r !== 0n) r -= n;
  return r === 2n * q;
}

/** V_e(P, Q) mod m in [0, m), by the binary ladder on (V_k, V_{k+1}, Q^k). */
function lucasV(e, m, p, q) {
  const md = (x) => modFloor(x, m);
  const bits = bitLength(e);
  if (bits === 0) return md(2n);
  let vk = md(p);
  let vk1 = md(p * p - 2n * q);
  let qk = md(q);
  for (let i = bits - 2; i >= 0; i--) {
    if ((e >> BigInt(i)) & 1n) {
      vk = md(vk * vk1 - p * qk);
      vk1 = md(vk1 * vk1 - 2n * qk * q);
      qk = md(qk * qk * q);
    } else {
      vk1 = md(vk * vk1 - p * qk);
      vk = md(vk * vk - 2n * qk);
      qk = md(qk * qk);
    }
  }
  return vk;
}

// ---------------------------------------------------------------------------------------------
// HashPrime (hash_prime.rs) and create_discriminant (discriminant.rs)
// ---------------------------------------------------------------------------------------------

/** Candidates hashed at once: the digests are independent, so they are requested together. */
const HASH_PRIME_BATCH = 16;

/** Increments `sprout` in place as a big-endian integer, wrapping. */
function incrementBE(sprout) {
  for (let i = sprout.length - 1; i >= 0; i--) {
    sprout[i] = (sprout[i] + 1) & 0xff;
    if (sprout[i] !== 0) break;
  }
}

/**
 * chiavdf's `HashPrime(seed, length, bitmask)`: the first prime among the candidates
 * SHA-256(++sprout) ‖ SHA-256(++sprout) ‖ … cut to length/8 bytes, big-endian, with bit 0 and
 * the `bitmask` bits set. null where chiavdf never returns: the counter comes back to the seed
 * before a prime (short seeds only; a 32-byte seed never wraps).
 */
export async function hashPrime(seed, length, bitmask) {
  if (seed.length === 0 || length <= 0 || length % 8 !== 0) return null;
  const want = length / 8;
  const digestsPerCandidate = Math.ceil(want / 32);
  const setBits = bitmask.reduce((m, bit) => m | (1n << BigInt(bit)), 1n);
  const sprout = Uint8Array.from(seed);
  let wrapped = false;
  while (!wrapped) {
    // The next candidates' counters, in order; a candidate whose counter wraps is never
    // finished (chiavdf loops forever there), so the ones before it are the last tried.
    const batch = [];
    while (batch.length < HASH_PRIME_BATCH && !wrapped) {
      const sprouts = [];
      for (let i = 0; i < digestsPerCandidate && !wrapped; i++) {
        incrementBE(sprout);
        if (bytesEqual(sprout, seed)) wrapped = true;
        else sprouts.push(sprout.slice());
      }
      if (!wrapped) batch.push(sprouts);
    }
    const digests = await Promise.all(batch.flat().map(sha256));
    for (let c = 0; c < batch.length; c++) {
      const blob = new Uint8Array(want);
      for (let i = 0; i < digestsPerCandidate; i++) {
        const digest = digests[c * digestsPerCandidate + i];
        blob.set(digest.subarray(0, Math.min(32, want - 32 * i)), 32 * i);
      }
      const p = bytesToBigIntBE(blob) | setBits;
      if (isProbablePrime(p)) return p;
    }
  }
  return null;
}

/** A negative discriminant D ≡ 1 (mod 4) of 8 to 1024 bits (discriminant.rs). */
export class Discriminant {
  constructor(value) {
    if (typeof value !== "bigint" || value >= 0n) refuse("a discriminant must be negative");
    const bits = bitLength(value);
    if (bits < MIN_BITS || bits > MAX_BITS) refuse(`a discriminant of ${bits} bits: must have ${MIN_BITS} to ${MAX_BITS} bits`);
    // D < 0 and D ≡ 1 (mod 4) means |D| ≡ 3 (mod 4).
    if (-value % 4n !== 3n) refuse("a discriminant must be 1 mod 4");
    this.value = value;
    this.bits = bits;
    // ⌊|D|^(1/4)⌋, NUCOMP's and NUDUPL's bound (nested integer square roots are exact).
    this.fourthRoot = isqrt(isqrt(-value));
  }

  /** chiavdf's string: "-0x" and lowercase hex digits. */
  toHex() {
    return `-0x${(-this.value).toString(16)}`;
  }
}

/** chiavdf's `create_discriminant(seed, bits)` = −HashPrime(seed, bits, {0, 1, 2, bits − 1}). */
export async function createDiscriminant(seed, bits) {
  if (!(seed instanceof Uint8Array) || seed.length === 0) refuse("the discriminant seed must not be empty");
  if (!Number.isInteger(bits) || bits % 8 !== 0 || bits < MIN_BITS || bits > MAX_BITS) {
    refuse(`a discriminant of ${bits} bits: must be a multiple of 8 from ${MIN_BITS} to ${MAX_BITS}`);
  }
  const p = await hashPrime(seed, bits, [0, 1, 2, bits - 1]);
  if (p === null) refuse(`no ${bits}-bit prime for this ${seed.length}-byte seed (chiavdf would never return)`);
  return new Discriminant(-p);
}

/** Parses chiavdf's "-0x…" (either case; decimal "-123…" too), as Discriminant::from_hex. */
export function parseDiscriminant(text) {
  if (typeof text !== "string") refuse("the discriminant is missing or not a string");
  const s = text.trim();
  const shown = JSON.stringify(s.slice(0, 40));
  if (!s.startsWith("-")) refuse(`the discriminant must be negative ("-0x…"): ${shown}`);
  const magnitude = s.slice(1);
  const hex = magnitude.startsWith("0x") || magnitude.startsWith("0X");
  const digits = hex ? magnitude.slice(2) : magnitude;
  const valid = hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/;
  if (digits.length > 600 || !valid.test(digits)) refuse(`the discriminant is not a number: ${shown}`);
  return new Discriminant(-BigInt(hex ? `0x${digits}` : digits));
}

// ---------------------------------------------------------------------------------------------
// Group ids (epoch.rs)
// ---------------------------------------------------------------------------------------------

/** Whether `id` names a class group (`classgroup`, `classgroup-<bits>`), well-formed or not. */
export const isClassGroupId = (id) => typeof id === "string" && id.startsWith("classgroup");

/** The discriminant size of a class-group id: `classgroup-<bits>` (bits a multiple of 8 from
 *  8 to 1024) or `classgroup` (1024), as group_bits reads it. */
export function classGroupBits(id) {
  if (!isClassGroupId(id)) refuse(`${JSON.stringify(id)} is not a class group`);
  const rest = id.slice("classgroup".length);
  if (rest === "") return MAX_BITS;
  // Rust's u32 parser: optional '+', decimal digits.
  const m = /^-\+?([0-9]+)$/.exec(rest);
  const bits = m ? Number(m[1]) : NaN;
  if (!(bits % 8 === 0 && bits >= MIN_BITS && bits <= MAX_BITS)) {
    refuse(`group ${JSON.stringify(id)}: expected classgroup-<bits> with bits a multiple of 8 from ${MIN_BITS} to ${MAX_BITS}`);
  }
  return bits;
}

/** x_e of every epoch and y_0 of every chain: the generator (2, 1), 0x08 then 99 zero bytes. */
export function generatorBytes() {
  const g = new Uint8Array(FORM_SIZE);
  g[0] = 0x08;
  return g;
}

/** B as stored: 33 bytes big-endian. */
export function lBytes(b) {
  const out = new Uint8Array(L_BYTES);
  for (let i = L_BYTES - 1; i >= 0; i--, b >>= 8n) out[i] = Number(b & 0xffn);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Forms (form.rs): {a, b, c} with BigInt members
// ---------------------------------------------------------------------------------------------

/** (a, b, (b² − D)/4a), or null where a ≤ 0 or 4a does not divide b² − D. */
export function formFromAB(a, b, d) {
  if (a <= 0n) return null;
  const num = b * b - d;
  const den = a << 2n;
  return num % den === 0n ? { a, b, c: num / den } : null;
}

const identity = (d) => ({ a: 1n, b: 1n, c: (1n - d) >> 2n });
const sameForm = (f, g) => f.a === g.a && f.b === g.b && f.c === g.c;
const formDiscriminant = (f) => f.b * f.b - ((f.a * f.c) << 2n);

/** chiavdf's generator (2, 1, (1 − D)/8), reduced. */
export function generatorForm(disc) {
  const f = formFromAB(2n, 1n, disc.value);
  if (!f) refuse("D ≢ 1 (mod 8): the form (2, 1) is not one of its forms");
  return reduce(f);
}

/** −a < b ≤ a ≤ c, and b ≥ 0 if a = c. */
const isReduced = (f) => f.a > 0n && -f.a < f.b && f.b <= f.a && f.a <= f.c && !(f.a === f.c && f.b < 0n);

/** Why `f` is not a reduced, primitive form of `disc` (Form::check), or null. */
function formProblem(f, disc) {
  if (f.a <= 0n) return "a is not positive";
  if (formDiscriminant(f) !== disc.value) return "b^2 - 4ac is not the discriminant";
  if (!isReduced(f)) return "not reduced";
  if (gcd(gcd(f.a, f.b), f.c) !== 1n) return "not primitive";
  return null;
}

/** The reduced form equivalent to `f`; a form that is not positive definite is returned as is. */
export function reduce(f) {
  let { a, b, c } = f;
  if (a <= 0n || c <= 0n) return f;
  // Brings b into (−a, a]: r = ⌊(a − b)/2a⌋, (a, b + 2ra, ar² + br + c).
  const normalize = () => {
    if (-a < b && b <= a) return;
    const r = divFloor(a - b, a << 1n);
    const ra = r * a;
    c += r * (ra + b);
    b += ra << 1n;
  };
  normalize();
  while (a > c || (a === c && b < 0n)) {
    if (a > c) {
      [a, c] = [c, a];
      b = -b;
      normalize();
    } else {
      b = -b;
    }
  }
  return { a, b, c };
}

/** The low 64 bits of |x| >> shift as a signed 64-bit limb (chiavdf: mpz_tdiv_q_2exp, then
 *  mpz_get_ui). */
const limbOfShift = (x, shift) => BigInt.asIntN(64, abs(x) >> BigInt(shift));
const sizeInBase2 = (x) => Math.max(bitLength(x), 1);
const i64 = (x) => BigInt.asIntN(64, x);

/**
 * chiavdf's `mpz_xgcd_partial(co2, co1, r2, r1, L)` (Lehmer-accelerated with Jebelean's
 * conditions, in wrapping 64-bit arithmetic): Euclid on (r2, r1) until r1 ≤ L. Returns
 * [co2, co1, r2, r1]. Step for step, because where it stops shows in the compressed encoding.
 */
export function xgcdPartial(r2, r1, l) {
  let co2 = 0n;
  let co1 = -1n;
  while (r1 !== 0n && r1 > l) {
    const bits = Math.max(Math.max(sizeInBase2(r2), sizeInBase2(r1)) - 64 + 1, 0);
    let rr2 = limbOfShift(r2, bits);
    let rr1 = limbOfShift(r1, bits);
    const bb = limbOfShift(l, bits);
    let [aa2, aa1, bb2, bb1] = [0n, 1n, 1n, 0n];
    let i = 0;
    while (rr1 !== 0n && rr1 > bb) {
      const qq = rr2 / rr1;
      const t1 = i64(rr2 - i64(qq * rr1));
      const t2 = i64(aa2 - i64(qq * aa1));
      const t3 = i64(bb2 - i64(qq * bb1));
      const stop =
        i & 1
          ? t1 < i64(-t3) || i64(rr1 - t1) < i64(t2 - aa1)
          : t1 < i64(-t2) || i64(rr1 - t1) < i64(t3 - bb1);
      if (stop) break;
      [rr2, rr1, aa2, aa1, bb2, bb1] = [rr1, t1, aa1, t2, bb1, t3];
      i++;
    }
    if (i === 0) {
      const q = divFloor(r2, r1);
      [r2, r1] = [r1, r2 - q * r1];
      [co2, co1] = [co1, co2 - co1 * q];
    } else {
      [r2, r1] = [r2 * bb2 + r1 * aa2, r1 * aa1 + r2 * bb1];
      [co2, co1] = [co2 * bb2 + co1 * aa2, co1 * aa1 + co2 * bb1];
      if (r1 < 0n) [co1, r1] = [-co1, -r1];
      if (r2 < 0n) [co2, r2] = [-co2, -r2];
    }
  }
  if (r2 < 0n) [co2, co1, r2] = [-co2, -co1, -r2];
  return [co2, co1, r2, r1];
}

/** For a, b ≥ 0: [g, v] with g = gcd(a, b) and v·b ≡ g (mod a). */
function gcdCofactor(a, b) {
  const [co2, , r2] = xgcdPartial(a, b, 0n);
  return [r2, -co2];
}

/** [g, u, v] with u·a + v·b = g = gcd(a, b) ≥ 0, for any signs. */
function xgcd(a, b) {
  const sign = (x) => (x < 0n ? -1n : 1n);
  const [aa, ba] = [abs(a), abs(b)];
  if (ba === 0n) return [aa, sign(a), 0n];
  if (aa === 0n) return [ba, 0n, sign(b)];
  const [g, v] = gcdCofactor(aa, ba);
  const u = (g - v * ba) / aa;
  return [g, u * sign(a), v * sign(b)];
}

/** The reduced product by Gauss composition (Cohen, Algorithm 5.4.7): NUCOMP's fallback. */
function compose(f1, f2, d) {
  if (f1.a > f2.a) [f1, f2] = [f2, f1];
  const { a: a1, b: b1 } = f1;
  const { a: a2, b: b2, c: c2 } = f2;
  if (a1 <= 0n) return f1;
  const s = (b1 + b2) >> 1n;
  const n = b2 - s;
  let dd;
  let y1;
  if (a2 % a1 === 0n) [dd, y1] = [a1, 0n];
  else [dd, y1] = xgcd(a2, a1);
  let d1;
  let x2;
  let y2;
  if (dd !== 0n ? s % dd === 0n : s === 0n) [d1, x2, y2] = [dd, 0n, -1n];
  else {
    const [g, u, v] = xgcd(s, dd);
    [d1, x2, y2] = [g, u, -v];
  }
  if (d1 === 0n) return f1;
  const v1 = a1 / d1;
  const v2 = a2 / d1;
  if (v1 === 0n) return f1;
  const r = modFloor(y1 * y2 * n - x2 * c2, v1);
  const f = formFromAB(v1 * v2, b2 + ((v2 * r) << 1n), d);
  return f ? reduce(f) : f1;
}

/** NUCOMP (Antic's `qfb_nucomp`, as chiavdf uses it): the product of two reduced forms, not
 *  necessarily reduced; null where a division by zero would follow. */
function nucomp(f, g, d, l) {
  if (f.a > g.a) [f, g] = [g, f];
  if (f.a <= 0n || g.a <= 0n) return null;
  let [a1, a2, c2] = [f.a, g.a, g.c];
  const ss = (f.b + g.b) >> 1n;
  const m = (f.b - g.b) >> 1n;
  const t0 = modFloor(a2, a1);
  const [sp, v1] = t0 === 0n ? [a1, 0n] : xgcd(t0, a1);
  let k = modFloor(m * v1, a1);
  if (sp !== 1n) {
    const [s, v2, u2] = xgcd(ss, sp);
    k = k * u2 - v2 * c2;
    if (s !== 1n) {
      if (s === 0n) return null;
      a1 /= s;
      a2 /= s;
      c2 *= s;
    }
    k = modFloor(k, a1);
  }
  if (a1 < l) {
    const t = a2 * k;
    return { a: a2 * a1, b: (t << 1n) + g.b, c: ((g.b + t) * k + c2) / a1 };
  }
  const [co2, co1, , r1] = xgcdPartial(a1, k, l);
  if (co1 === 0n) return null;
  const t = a2 * r1;
  const m1 = (m * co1 + t) / a1;
  const m2 = (ss * r1 - c2 * co1) / a1;
  let ca = co1 < 0n ? r1 * m1 - co1 * m2 : co1 * m2 - r1 * m1;
  if (ca === 0n) return null;
  const cb = modFloor(((t - ca * co2) << 1n) / co1 - g.b, ca << 1n);
  let cc = ((cb * cb - d) / ca) >> 2n;
  if (ca < 0n) [ca, cc] = [-ca, -cc];
  return { a: ca, b: cb, c: cc };
}

/** chiavdf's `qfb_nudupl`: the square of a reduced form, not necessarily reduced; null where a
 *  division by zero would follow. */
function nudupl(f, d, l) {
  const { a, b, c } = f;
  if (a <= 0n) return null;
  const [s, v2Abs] = gcdCofactor(a, abs(b));
  const v2 = b < 0n ? -v2Abs : v2Abs;
  let k = -(v2 * c);
  let a1 = a;
  let c1 = c;
  if (s !== 1n) {
    if (s === 0n) return null;
    a1 = divFloor(a, s);
    c1 = c * s;
  }
  k = modFloor(k, a1);
  if (a1 < l) {
    const t = a1 * k;
    return { a: a1 * a1, b: (t << 1n) + b, c: divFloor((b + t) * k + c1, a1) };
  }
  const [co2, co1, , r1] = xgcdPartial(a1, k, l);
  if (co1 === 0n) return null;
  const m2 = (b * r1 - c1 * co1) / a1;
  let ra = r1 * r1 - co1 * m2;
  if (co1 >= 0n) ra = -ra;
  if (ra === 0n) return null;
  let cb = a1 * r1 - ra * co2;
  cb = (cb << 1n) / co1 - b;
  cb = modFloor(cb, ra << 1n);
  let rc = (cb * cb - d) / ra / 4n;
  if (ra < 0n) [ra, rc] = [-ra, -rc];
  return { a: ra, b: cb, c: rc };
}

/** The reduced product of two reduced forms of `disc`. */
export function multiply(f, g, disc) {
  const h = nucomp(f, g, disc.value, disc.fourthRoot);
  return h ? reduce(h) : compose(f, g, disc.value);
}

/** The reduced square of a reduced form of `disc`. */
export function square(f, disc) {
  const h = nudupl(f, disc.value, disc.fourthRoot);
  return h ? reduce(h) : compose(f, f, disc.value);
}

/** f^e (e ≥ 0), reduced, by left-to-right square-and-multiply. */
export function pow(f, e, disc) {
  if (e === 0n) return identity(disc.value);
  const bits = e.toString(2);
  let res = f;
  for (let i = 1; i < bits.length; i++) {
    res = square(res, disc);
    if (bits[i] === "1") res = multiply(res, f, disc);
  }
  return res;
}

// ---------------------------------------------------------------------------------------------
// Compressed forms (bqfc.rs): 100 bytes each
// ---------------------------------------------------------------------------------------------

const B_SIGN = 1 << 0;
const T_SIGN = 1 << 1;
const IS_1 = 1 << 2;
const IS_GEN = 1 << 3;

const roundBits = (dBits) => Math.ceil(dBits / 32) * 32;

/** bqfc's `bqfc_compr`: {a: a', t, g, b0, bSign}. */
function compress(a, b) {
  if (a === b) return { a, t: 0n, g: 0n, b0: 0n, bSign: false };
  const bSign = b < 0n;
  const [, co1] = xgcdPartial(a, abs(b), isqrt(abs(a)));
  let t = -co1;
  const g = gcd(a, t);
  if (g === 1n || g === 0n) return { a, t, g, b0: 0n, bSign };
  const ca = a / g;
  t /= g;
  let b0 = ca === 0n ? 0n : b / ca;
  if (bSign) b0 = -b0;
  return { a: ca, t, g, b0, bSign };
}

/** bqfc's `bqfc_decompr`: [a, b], or the reason it fails. */
function decompress(d, c) {
  if (c.t === 0n) return [c.a, c.a];
  if (c.a === 0n) return "a' is zero";
  const t = c.t < 0n ? c.t + c.a : c.t;
  const [g, u] = xgcd(t, c.a);
  if (g !== 1n) return "t is not invertible mod a'";
  const tInv = modFloor(u, c.a);
  const tmp = (modFloor(c.t * c.t, c.a) * modFloor(d, c.a)) % c.a;
  const root = isqrt(tmp);
  if (root * root !== tmp) return "t^2 * D mod a' is not a square";
  let b = (root * tInv) % c.a;
  const a = c.g > 1n ? c.a * c.g : c.a;
  if (c.b0 > 0n) b += c.a * c.b0;
  if (c.bSign) b = -b;
  return [a, b];
}

/** Appends |n| little-endian in exactly `size` bytes; false if it does not fit. */
function exportLE(out, size, n) {
  n = abs(n);
  if (Math.ceil(bitLength(n) / 8) > size) return false;
  for (let i = 0; i < size; i++, n >>= 8n) out.push(Number(n & 0xffn));
  return true;
}

/** bqfc's `bqfc_serialize` on (a, b), unreduced: 100 bytes, or null where a field would
 *  overflow (never for a reduced form of D). */
function serialize(a, b, dBits) {
  const out = [];
  if (b === 1n && a <= 2n) {
    out.push(a === 2n ? IS_GEN : IS_1);
  } else {
    const c = compress(a, b);
    const bits = roundBits(dBits);
    // mpz_sizeinbase(g, 2) is 1 for g = 0.
    const gSize = Math.ceil(Math.max(bitLength(c.g), 1) / 8) - 1;
    if (gSize > 255 || gSize >= bits / 32) return null;
    out.push((c.bSign ? B_SIGN : 0) | (c.t < 0n ? T_SIGN : 0), gSize);
    const fits =
      exportLE(out, bits / 16 - gSize, c.a) &&
      exportLE(out, bits / 32 - gSize, c.t) &&
      exportLE(out, gSize + 1, c.g) &&
      exportLE(out, gSize + 1, c.b0);
    if (!fits || out.length > FORM_SIZE) return null;
  }
  const bytes = new Uint8Array(FORM_SIZE);
  bytes.set(out);
  return bytes;
}

/** bqfc's `bqfc_deserialize_only`; null for a g_size chiavdf refuses. */
function deserializeOnly(bytes, dBits) {
  const bits = roundBits(dBits);
  const gSize = bytes[1];
  if (gSize >= bits / 32) return null;
  let at = 2;
  const take = (size) => {
    if (at + size > bytes.length) return null;
    const v = bytesToBigIntLE(bytes.subarray(at, at + size));
    at += size;
    return v;
  };
  const a = take(bits / 16 - gSize);
  let t = take(bits / 32 - gSize);
  const g = take(gSize + 1);
  const b0 = take(gSize + 1);
  if (a === null || t === null || g === null || b0 === null) return null;
  if (bytes[0] & T_SIGN) t = -t;
  return { a, t, g, b0, bSign: (bytes[0] & B_SIGN) !== 0 };
}

/** The 100-byte encoding of `f` (reduced first, as chiavdf's SerializeForm does). */
export function encodeForm(disc, f) {
  if (f.a <= 0n || formDiscriminant(f) !== disc.value) refuse("the form's b^2 - 4ac is not the discriminant");
  const r = reduce(f);
  return serialize(r.a, r.b, disc.bits) ?? refuse("the form does not fit the compressed encoding");
}

/**
 * The reduced form of `disc` that `bytes` encode (bqfc::decode). As chiavdf, a first byte with
 * the identity or generator flag stands for that form whatever follows; any other encoding must
 * be the one re-encoding gives. On top of chiavdf, the result must be a reduced, primitive form
 * of D.
 */
export function decodeForm(disc, bytes, what = "form") {
  if (!(bytes instanceof Uint8Array) || bytes.length !== FORM_SIZE) {
    refuse(`${what} has ${bytes && bytes.length} bytes, expected ${FORM_SIZE}`);
  }
  let a;
  let b;
  if (bytes[0] & (IS_1 | IS_GEN)) {
    [a, b] = [bytes[0] & IS_GEN ? 2n : 1n, 1n];
  } else {
    const c = deserializeOnly(bytes, disc.bits) ?? refuse(`${what}: g_size out of range`);
    const ab = decompress(disc.value, c);
    if (typeof ab === "string") refuse(`${what}: ${ab}`);
    [a, b] = ab;
    const canon = serialize(a, b, disc.bits);
    if (!canon || !bytesEqual(canon, bytes)) refuse(`${what}: not the canonical encoding`);
  }
  const f = formFromAB(a, b, disc.value) ?? refuse(`${what}: 4a does not divide b^2 - D: not a form of this discriminant`);
  const problem = formProblem(f, disc);
  if (problem) refuse(`${what}: ${problem}`);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Wesolowski (wesolowski.rs, epoch.rs)
// ---------------------------------------------------------------------------------------------

/** chiavdf's `GetB(D, x, y)` = HashPrime(bqfc(x) ‖ bqfc(y), 264, {263}). */
export async function getB(disc, x, y) {
  const b = await hashPrime(concatBytes(encodeForm(disc, x), encodeForm(disc, y)), B_BITS, [B_BITS - 1]);
  return b ?? refuse("GetB found no prime");
}

function iterationsOf(t) {
  const v = BigInt(t);
  if (v < 1n) refuse("T must be at least 1");
  return v;
}

/** π^B · x^(2^T mod B) = y for reduced forms of `disc`, B = GetB(D, x, y) given. */
function checkWesolowski(disc, x, y, proof, b, t) {
  const r = powerOfTwo(t, b, barrett(b));
  const lhs = multiply(pow(proof, b, disc), pow(x, r, disc), disc);
  if (!sameForm(lhs, y)) refuse("π^B · x^(2^T mod B) ≠ y");
}

/** chiavdf's `verify_wesolowski(D, x, y, π, T)` on 100-byte encodings (verify_encoded):
 *  resolves with B, or throws a ClassGroupError. */
export async function verifyEncoded(disc, x, y, proof, t) {
  t = iterationsOf(t);
  const xf = decodeForm(disc, x, "x");
  const yf = decodeForm(disc, y, "y");
  const pf = decodeForm(disc, proof, "π");
  const b = await getB(disc, xf, yf);
  checkWesolowski(disc, xf, yf, pf, b, t);
  return b;
}

/** A stored class-group epoch (epoch.rs verify): x is the generator's bytes, ℓ is
 *  B = GetB(D, x, y) in 33 bytes, and the proof holds. Resolves with B. */
export async function verifyEpoch(disc, { x, y, pi, l }, t) {
  if (!bytesEqual(x, generatorBytes())) refuse("an epoch's input x is the generator (0x08 then 99 zero bytes)");
  if (!(l instanceof Uint8Array) || l.length !== L_BYTES) refuse(`ℓ must be ${L_BYTES} bytes`);
  t = iterationsOf(t);
  const xf = generatorForm(disc);
  const yf = decodeForm(disc, y, "y");
  // y's bytes key the outcomes (HMAC): only its one encoding counts (engine classgroup/epoch.rs).
  if (!bytesEqual(encodeForm(disc, yf), y)) refuse("y is not the canonical encoding of its form");
  const b = await getB(disc, xf, yf);
  if (!bytesEqual(l, lBytes(b))) refuse("ℓ is not B = GetB(D, x, y)");
  const pf = decodeForm(disc, pi, "π");
  checkWesolowski(disc, xf, yf, pf, b, t);
  return b;
}
