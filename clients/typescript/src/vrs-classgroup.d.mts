// Type declarations of vrs-classgroup.mjs: the class-group VDF of chiavdf 1.2.0 (PROTOCOL.md
// §18), a port of engine/src/classgroup byte for byte. Every refusal of input bytes or numbers
// throws a ClassGroupError; only a missing WebCrypto throws a plain Error.

/** A refused discriminant, encoding, form or proof. */
export declare class ClassGroupError extends Error {
  /** `message` says what was refused. */
  constructor(message: string);
  /** Always "ClassGroupError". */
  name: "ClassGroupError";
}

/** Bytes of every compressed form chiavdf 1.2.0 writes or reads (`BQFC_FORM_SIZE`): 100. */
export declare const FORM_SIZE: 100;
/** The smallest discriminant size (bits) chiavdf 1.2.0 creates: 8. */
export declare const MIN_BITS: 8;
/** The largest discriminant size (bits) chiavdf 1.2.0 creates: 1024. */
export declare const MAX_BITS: 1024;
/** Bits of the Wesolowski challenge prime B (chiavdf's `B_bits`): 264. */
export declare const B_BITS: 264;
/** Bytes of B as stored (ℓ of a class-group proof): B_BITS / 8 = 33. */
export declare const L_BYTES: 33;

/** One entry of chiavdf's `pprods` table: a product of consecutive odd primes below 2^64, and
 *  those primes (for trial division). */
export interface PrimeProduct {
  /** The product of `primes`, below 2^64. */
  product: bigint;
  /** The consecutive odd primes whose product is `product`. */
  primes: number[];
}

/** chiavdf's `pprods` table: products of the consecutive odd primes up to 14951, each group as
 *  long as its product stays below 2^64, with the primes of each product. */
export declare const PRIME_PRODUCTS: PrimeProduct[];

/** chiavdf's `is_prime_bpsw(n)` for n ≥ 0: its exact verdict, including "composite" for the
 *  tabled small primes themselves (so create_discriminant(_, 8) is −239 for every seed). A
 *  Number is converted with BigInt(). */
export declare function isProbablePrime(n: bigint | number): boolean;

/** The Jacobi symbol (a/n) for odd n > 0; 0 for an even or non-positive n. */
export declare function jacobi(a: bigint, n: bigint): -1 | 0 | 1;

/** chiavdf's `HashPrime(seed, length, bitmask)`: the first prime among the candidates
 *  SHA-256(++sprout) ‖ SHA-256(++sprout) ‖ … cut to length/8 bytes, big-endian, with bit 0 and
 *  the `bitmask` bits set. Resolves with null where chiavdf never returns (the counter wraps
 *  back to the seed before a prime; short seeds only), or for an empty seed or a length that
 *  is not a positive multiple of 8. */
export declare function hashPrime(seed: Uint8Array, length: number, bitmask: readonly number[]): Promise<bigint | null>;

/** A negative discriminant D ≡ 1 (mod 4) of 8 to 1024 bits (discriminant.rs). */
export declare class Discriminant {
  /** Checks `value` (a negative BigInt ≡ 1 mod 4 of MIN_BITS to MAX_BITS bits); throws a
   *  ClassGroupError otherwise. */
  constructor(value: bigint);
  /** D itself (negative). */
  readonly value: bigint;
  /** Bits of |D|. */
  readonly bits: number;
  /** ⌊|D|^(1/4)⌋: NUCOMP's and NUDUPL's bound. */
  readonly fourthRoot: bigint;
  /** chiavdf's string: "-0x" then lowercase hex digits. */
  toHex(): string;
}

/** chiavdf's `create_discriminant(seed, bits)` = −HashPrime(seed, bits, {0, 1, 2, bits − 1}).
 *  Rejects with a ClassGroupError for an empty seed, a size that is not a multiple of 8 from
 *  8 to 1024, or a seed for which chiavdf would never return. */
export declare function createDiscriminant(seed: Uint8Array, bits: number): Promise<Discriminant>;

/** Parses chiavdf's "-0x…" (either case; a decimal "-123…" too), as Discriminant::from_hex;
 *  throws a ClassGroupError for anything else (a non-string included). */
export declare function parseDiscriminant(text: unknown): Discriminant;

/** A class-group id: `classgroup` or `classgroup-<bits>` (as isClassGroupId sees it, which
 *  does not check the bits). */
export type ClassGroupId = `classgroup${string}`;

/** Whether `id` names a class group (`classgroup`, `classgroup-<bits>`), well-formed or not:
 *  a string starting with "classgroup". */
export declare function isClassGroupId(id: unknown): id is ClassGroupId;

/** The discriminant size of a class-group id: `classgroup-<bits>` (bits a multiple of 8 from 8
 *  to 1024) or `classgroup` (1024), as group_bits reads it; throws a ClassGroupError for any
 *  other id (a non-string included). */
export declare function classGroupBits(id: unknown): number;

/** The generator's 100-byte encoding (0x08 then 99 zero bytes): x_e of every epoch and y_0 of
 *  every chain. A fresh array on every call. */
export declare function generatorBytes(): Uint8Array;

/** B as stored: its low L_BYTES (33) bytes, big-endian. */
export declare function lBytes(b: bigint): Uint8Array;

/** A binary quadratic form (a, b, c) with b² − 4ac = D (form.rs). */
export interface Form {
  a: bigint;
  b: bigint;
  c: bigint;
}

/** The form (a, b, (b² − D)/4a), or null where a ≤ 0 or 4a does not divide b² − D. */
export declare function formFromAB(a: bigint, b: bigint, d: bigint): Form | null;

/** chiavdf's generator (2, 1, (1 − D)/8) of `disc`, reduced; throws a ClassGroupError where
 *  D ≢ 1 (mod 8). */
export declare function generatorForm(disc: Discriminant): Form;

/** The reduced form equivalent to `f`; a form that is not positive definite is returned as is. */
export declare function reduce(f: Form): Form;

/** chiavdf's `mpz_xgcd_partial(co2, co1, r2, r1, L)` (Lehmer-accelerated, in wrapping 64-bit
 *  arithmetic): Euclid on (r2, r1) until r1 ≤ L, step for step as chiavdf. */
export declare function xgcdPartial(r2: bigint, r1: bigint, l: bigint): [co2: bigint, co1: bigint, r2: bigint, r1: bigint];

/** The reduced product of two reduced forms of `disc` (NUCOMP, Gauss composition as fallback). */
export declare function multiply(f: Form, g: Form, disc: Discriminant): Form;

/** The reduced square of a reduced form of `disc` (NUDUPL, Gauss composition as fallback). */
export declare function square(f: Form, disc: Discriminant): Form;

/** f^e for e ≥ 0, reduced, by left-to-right square-and-multiply (the identity for e = 0). */
export declare function pow(f: Form, e: bigint, disc: Discriminant): Form;

/** The 100-byte compressed encoding of `f` (reduced first, as chiavdf's SerializeForm does);
 *  throws a ClassGroupError for a form of another discriminant or one that does not fit. */
export declare function encodeForm(disc: Discriminant, f: Form): Uint8Array;

/** The reduced, primitive form of `disc` that the 100 `bytes` encode (bqfc::decode): a first
 *  byte with the identity or generator flag stands for that form, any other encoding must be
 *  the canonical one. Throws a ClassGroupError naming `what` (default "form") otherwise. */
export declare function decodeForm(disc: Discriminant, bytes: Uint8Array, what?: string): Form;

/** chiavdf's `GetB(D, x, y)` = HashPrime(bqfc(x) ‖ bqfc(y), 264, {263}): the Wesolowski
 *  challenge prime. */
export declare function getB(disc: Discriminant, x: Form, y: Form): Promise<bigint>;

/** chiavdf's `verify_wesolowski(D, x, y, π, T)` on 100-byte encodings (verify_encoded):
 *  resolves with B, or rejects with a ClassGroupError. T (≥ 1) is converted with BigInt(). */
export declare function verifyEncoded(
  disc: Discriminant,
  x: Uint8Array,
  y: Uint8Array,
  proof: Uint8Array,
  t: bigint | number | string,
): Promise<bigint>;

/** The byte members of a stored class-group epoch: forms of FORM_SIZE bytes, ℓ of L_BYTES. */
export interface EpochProofBytes {
  /** The input: the generator's bytes (generatorBytes()). */
  x: Uint8Array;
  /** The output y, a canonical 100-byte form. */
  y: Uint8Array;
  /** The proof π, a 100-byte form. */
  pi: Uint8Array;
  /** ℓ = B = GetB(D, x, y) in 33 bytes. */
  l: Uint8Array;
}

/** A stored class-group epoch (epoch.rs verify): x is the generator's bytes, y canonical, ℓ is
 *  B = GetB(D, x, y) in 33 bytes, and π^B · x^(2^T mod B) = y. Resolves with B, or rejects with
 *  a ClassGroupError. */
export declare function verifyEpoch(
  disc: Discriminant,
  proof: EpochProofBytes,
  t: bigint | number | string,
): Promise<bigint>;
