// Type declarations of vrs-verify.mjs: the verifier's core. It recomputes every check of a vrs
// game from the server's public JSON API (docs/PROTOCOL.md sections 1-19, docs/GAMES.md),
// independently of the server's own `verified` flag. Bytes are Uint8Array, big integers bigint.
//
// Inside the checks, a wrong value throws a CheckFailed, which verifyGame turns into a failed
// step; only a response that is not a verification at all throws a VerifyError.

import type { Discriminant } from "./vrs-classgroup.mjs";
import type { LogEvidence } from "./vrs-witnessed.mjs";

export { isClassGroupId } from "./vrs-classgroup.mjs";

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Why there is nothing to verify: the id is not a game id (`invalid_id`), the server does not
 *  know the game (`not_found`), the game is not resolved yet (`pending`), the server could not
 *  be reached (`network`), it answered another HTTP status (`http`), or its answer is not a
 *  verification (`bad_response`; also a missing WebCrypto). */
export type VerifyErrorKind = "invalid_id" | "not_found" | "pending" | "network" | "http" | "bad_response";

/** The members a VerifyError may carry besides its kind and message. */
export interface VerifyErrorDetails {
  /** The HTTP status, where there was an answer. */
  status?: number;
  /** The URL that was requested. */
  url?: string;
  /** For `pending`: the epoch that will resolve the game (null or undefined if the server did
   *  not say). */
  resolves_at_epoch?: number | null | undefined;
}

/** Thrown (or rejected with) when there is nothing to verify: see VerifyErrorKind. */
export declare class VerifyError extends Error {
  /** `extra` (status, url, resolves_at_epoch) is copied onto the error. */
  constructor(kind: VerifyErrorKind, message: string, extra?: VerifyErrorDetails);
  /** Always "VerifyError". */
  name: "VerifyError";
  /** What went wrong. */
  kind: VerifyErrorKind;
  /** The HTTP status, where there was an answer. */
  status?: number;
  /** The URL that was requested, where there was one. */
  url?: string;
  /** For `pending`: the epoch that will resolve the game, where the server said. */
  resolves_at_epoch?: number | null | undefined;
}

/** A failed check: thrown by the helpers below on a wrong value, and turned by verifyGame into a
 *  step with `passed: false` and the message as its detail. */
export declare class CheckFailed extends Error {}

// ---------------------------------------------------------------------------------------------
// Bytes, hex, integers
// ---------------------------------------------------------------------------------------------

/** Strict hex (either case, no 0x, even length) to bytes; `nbytes`, when given, fixes the
 *  length. Throws CheckFailed naming `what` (default "value") for anything else, a non-string
 *  included. */
export declare function hexToBytes(text: unknown, nbytes?: number, what?: string): Uint8Array;

/** Bytes (any iterable of 0-255 numbers) as lowercase hex. */
export declare function bytesToHex(bytes: Iterable<number>): string;

/** The concatenation of byte arrays, as one new Uint8Array. */
export declare function concat(...parts: ArrayLike<number>[]): Uint8Array;

/** Whether two byte arrays are equal (same length, same bytes; compared without early exit). */
export declare function bytesEqual(a: ArrayLike<number>, b: ArrayLike<number>): boolean;

/** Big-endian unsigned encoding of `v` in `n` bytes; throws RangeError when it does not fit. */
export declare function uint(v: number | bigint, n: number): Uint8Array;

/** u8(v): `v` in 1 byte, big-endian; RangeError when it does not fit. */
export declare function u8(v: number | bigint): Uint8Array;

/** u16(v): `v` in 2 bytes, big-endian; RangeError when it does not fit. */
export declare function u16(v: number | bigint): Uint8Array;

/** u32(v): `v` in 4 bytes, big-endian; RangeError when it does not fit. */
export declare function u32(v: number | bigint): Uint8Array;

/** u64(v): `v` in 8 bytes, big-endian; RangeError when it does not fit. */
export declare function u64(v: number | bigint): Uint8Array;

/** f(s) of PROTOCOL.md: u16(len(UTF-8(s))) ‖ UTF-8(s). */
export declare function field(s: string): Uint8Array;

/** Big-endian bytes as an unsigned BigInt (0n for no bytes). */
export declare function bytesToBigInt(bytes: Iterable<number>): bigint;

/** `v` big-endian in exactly `n` bytes (uint); RangeError when it does not fit. */
export declare function bigIntToBytes(v: bigint | number, n: number): Uint8Array;

/** Bits of a non-negative BigInt (0 for 0n). */
export declare function bitLength(v: bigint): number;

/** base^exp mod m (exp ≥ 0, m ≥ 1), with a 4-bit fixed window. */
export declare function modPow(base: bigint, exp: bigint, m: bigint): bigint;

/** ⌊√n⌋ by Newton's method; RangeError for a negative n. */
export declare function isqrt(n: bigint): bigint;

// ---------------------------------------------------------------------------------------------
// Hashes (WebCrypto); each rejects with a VerifyError (bad_response) where there is none
// ---------------------------------------------------------------------------------------------

/** SHA-256 of `bytes`. */
export declare function sha256(bytes: Uint8Array): Promise<Uint8Array>;

/** HMAC-SHA256 of `message` under `key`. */
export declare function hmacSha256(key: Uint8Array, message: Uint8Array): Promise<Uint8Array>;

/** SHA-512 of `bytes`. */
export declare function sha512(bytes: Uint8Array): Promise<Uint8Array>;

/** H_tag(fields) = SHA-256(u8(len(tag)) ‖ tag ‖ fields…), PROTOCOL.md §2. */
export declare function taggedHash(tag: string, ...fields: ArrayLike<number>[]): Promise<Uint8Array>;

// ---------------------------------------------------------------------------------------------
// Section 1: moduli, encodings
// ---------------------------------------------------------------------------------------------

/** The names of the built-in RSA moduli. */
export type ModulusName = "rsa2048" | "test512" | "test1024";

/** The built-in RSA moduli: name → N as hex digits (no 0x). */
export declare const MODULI: { readonly [name in ModulusName]: string };

/** N of a modulus id (rsa2048, test512, test1024, or hex:<digits>: odd, 64 to 2048 bits);
 *  throws CheckFailed for any other id (a class-group id or a non-string included). */
export declare function modulusFromId(id: unknown): bigint;

/** k = ⌈bits(N) / 8⌉: the bytes of an element of Z_N. */
export declare function byteLength(n: bigint): number;

/** canon(v) = min(v, N − v) for v reduced mod N. */
export declare function canon(v: bigint, n: bigint): bigint;

/** Section 1 decoding of an element of hex `hex` (k bytes): refuses (CheckFailed naming `what`)
 *  a wrong length, 0, v > (N − 1)/2, and 1 when `isInput` (default false). */
export declare function decodeElement(hex: unknown, n: bigint, what: string, isInput?: boolean): bigint;

// ---------------------------------------------------------------------------------------------
// Sections 3 and 5: hash to group, hash to prime
// ---------------------------------------------------------------------------------------------

/** Section 3: the element of Z_N (canonical, ≥ 2) a 32-byte seed hashes to. */
export declare function hashToGroup(seed: Uint8Array, n: bigint): Promise<bigint>;

/** Jacobi symbol (a/n) for odd n > 0; RangeError for another n. */
export declare function jacobi(a: bigint, n: bigint): -1 | 0 | 1;

/** The Baillie-PSW test exactly as PROTOCOL.md §5 lists it (a Number is converted with
 *  BigInt()). */
export declare function isProbablePrime(c: bigint | number): boolean;

/** ℓ = the first c = H(u16(k) ‖ N_k ‖ x_k ‖ y_k ‖ u64(T) ‖ u64(j)) | 2^255 | 1 that is prime. */
export declare function hashToPrime(n: bigint, x: bigint, y: bigint, t: bigint | number): Promise<bigint>;

// ---------------------------------------------------------------------------------------------
// Section 7: Wesolowski verification
// ---------------------------------------------------------------------------------------------

/** T as a BigInt with 1 ≤ T < 2^64, from a safe-integer Number, a BigInt or a decimal string;
 *  throws CheckFailed otherwise. */
export declare function parseIterations(t: unknown): bigint;

/** The hex members of a VDF proof that verifyWesolowski and verifyClassGroupProof check (a
 *  Proof has them). */
export interface WesolowskiProof {
  /** The input x, hex. */
  x: string;
  /** The output y, hex. */
  y: string;
  /** The proof π, hex. */
  pi: string;
  /** The challenge prime ℓ, hex (32 bytes in an RSA group, 33 in a class group). */
  l: string;
  /** T (see parseIterations). */
  iterations: number | bigint | string;
}

/** Section 7 on hex encodings in Z_N: resolves with a detail string, or rejects with
 *  CheckFailed. */
export declare function verifyWesolowski(n: bigint, proof: WesolowskiProof): Promise<string>;

// ---------------------------------------------------------------------------------------------
// Section 10: epochs and their timing
// ---------------------------------------------------------------------------------------------

/** seed_e of a version-1 epoch: H("vrs/v1/epoch-input", u64(e) ‖ y_prev ‖ bets_root ‖ u64(T)). */
export declare function epochSeed(e: number | bigint, prevY: Uint8Array, betsRoot: Uint8Array, t: number | bigint): Promise<Uint8Array>;

/** y_0 of a modulus id (the genesis output), as k bytes. */
export declare function genesisOutput(modulusId: string, n: bigint): Promise<Uint8Array>;

/** seed_e of a version-2 epoch (one that commits to its timing, PROTOCOL.md §10): H over
 *  u64(e) ‖ u64(p) ‖ y_p ‖ bets_root ‖ nonce (32 bytes) ‖ u64(T) ‖ u64(opened) ‖ u64(closed) ‖
 *  u32(margin_centi) ‖ u64(squarings_per_second). Rejects with CheckFailed for another nonce
 *  length. */
export declare function epochSeedV2(
  e: number | bigint,
  p: number | bigint,
  prevY: Uint8Array,
  betsRoot: Uint8Array,
  nonce: Uint8Array,
  t: number | bigint,
  openedAtMs: number | bigint,
  closedAtMs: number | bigint,
  marginCenti: number | bigint,
  squaringsPerSecond: number | bigint,
): Promise<Uint8Array>;

/** margin_centi = round(security_margin · 100): the margin A in hundredths (1.5 → 150). Throws
 *  CheckFailed naming `what` (default "security_margin") for a missing, negative or too large
 *  margin. */
export declare function marginCenti(margin: unknown, what?: string): number;

/** A margin in hundredths as a decimal ("1.5", "2", "1.25"). */
export declare function centi(m: number | bigint): string;

/** The timing members of a proof's `timing` object (or of an epoch's public record, which
 *  spells them the same way). Version-1 epochs have version 1 and null for the rest. */
export interface Timing {
  /** 1 or 2; missing or null means version 1 (a server from before the timing rule). */
  version?: 1 | 2 | null;
  /** p(e): the epoch whose output the input takes (0: the genesis output y_0). */
  previous_epoch?: number | null;
  /** Version 2: 64 hex digits chosen when the epoch closed. */
  nonce?: string | null;
  /** When the epoch opened (Unix ms). */
  opened_at_ms?: number | null;
  /** When the epoch closed (Unix ms). */
  closed_at_ms?: number | null;
  /** Version 2: the declared security margin A. */
  security_margin?: number | null;
  /** Version 2: the declared squaring rate R. */
  squarings_per_second?: number | null;
  /** The bound the plan computed when the epoch opened (Unix ms). */
  deadline_ms?: number | null;
  /** closed_at_ms of p(e) (null for p = 0). */
  previous_closed_at_ms?: number | null;
  /** T of p(e) (null for p = 0). */
  previous_iterations?: number | null;
  /** When y of epoch e − 1 was stored (null for e = 1 or while it is unresolved). */
  prior_resolved_at_ms?: number | null;
}

/** The protocol version a `timing` object (the proof's, or an epoch record) names: 1 for a
 *  missing object or version; throws CheckFailed naming `what` (default "timing") for a
 *  version other than 1 or 2. */
export declare function timingVersion(obj: unknown, what?: string): 1 | 2;

/** p(e) from a `timing` object: e − 1 for version 1 (a different previous_epoch fails), its
 *  previous_epoch for version 2; throws CheckFailed naming `what` (default "timing"). */
export declare function previousEpoch(obj: unknown, e: number, what?: string): number;

/** A version-2 epoch's timing commitment, as timingCommitment decodes it. */
export interface TimingCommitment {
  /** p(e). */
  previous: number;
  /** The 32-byte nonce. */
  nonce: Uint8Array;
  /** T. */
  iterations: bigint;
  /** When the epoch opened (Unix ms). */
  opened_at_ms: number;
  /** When the epoch closed (Unix ms). */
  closed_at_ms: number;
  /** The margin A in hundredths (marginCenti). */
  margin_centi: number;
  /** The declared squaring rate R. */
  squarings_per_second: number;
}

/** A version-2 epoch's timing commitment from `obj` (the proof's `timing`, or the epoch's
 *  public record) and T; null for version 1. Throws CheckFailed naming `what` (default
 *  "timing") for a missing or malformed member. */
export declare function timingCommitment(obj: unknown, e: number, iterations: unknown, what?: string): TimingCommitment | null;

/** The facts the `timing` step checks (checkTiming). */
export interface TimingFacts {
  /** e. */
  epoch: number;
  /** The epoch's commitment (a TimingCommitment fits), or null for version 1. */
  timing: {
    previous: number | bigint;
    iterations: number | bigint;
    opened_at_ms: number | bigint;
    closed_at_ms: number | bigint;
    margin_centi: number | bigint;
    squarings_per_second: number | bigint;
  } | null;
  /** Epoch p's close and T; needed when p ≥ 1. */
  predecessor?: { closed_at_ms: number | bigint; iterations: number | bigint } | null;
  /** Epoch e − 1's version, close and output time; null or absent for e = 1. */
  prior?: { version: number; closed_at_ms?: number | null; resolved_at_ms?: number | null } | null;
  /** The least margin the verifier accepts, in hundredths (parseMinMargin); 0 or absent: any. */
  min_margin_centi?: number | undefined;
  /** The least declared rate the verifier accepts, in squarings per second (parseMinRate); 0 or
   *  absent: any. */
  min_rate?: number | undefined;
  /** Whether a version-1 epoch passes (as version 1's rules allow); absent or false: it fails
   *  with VERSION_1_REFUSED. */
  allow_version_1?: boolean | undefined;
}

/** Why a verifier refuses a version-1 epoch unless allowed (PROTOCOL.md §10, "Version 1"). */
export declare const VERSION_1_REFUSED: string;

/** The `timing` step (PROTOCOL.md §10, "Timing") on facts already gathered, exactly in
 *  integers: a version-2 epoch closed before y of epoch e − 1 was stored, and within the bound
 *  of its declared margin and rate. Returns a detail string, or throws CheckFailed. */
export declare function checkTiming(facts: TimingFacts): string;

/** The members of an epoch's public record (GET /api/v1/epochs/{e}) that verifyPublishedEpoch
 *  reads: its number, its VDF members and (Timing) its timing commitment. Null where the
 *  server has none yet (an open or unresolved epoch), which fails the check. */
export interface PublishedEpoch extends Timing {
  /** e. */
  epoch: number;
  /** y of epoch p(e), or y_0, hex. */
  previous_output: string | null;
  /** The epoch's bets root, hex. */
  bets_root: string | null;
  /** T. */
  iterations: number | null;
  /** The VDF input x, hex. */
  x: string | null;
  /** The VDF output y, hex. */
  y: string | null;
  /** The proof π, hex. */
  pi: string | null;
  /** The challenge prime ℓ, hex. */
  l: string | null;
}

/** Epoch e's public record (RSA) checked on its own: it must be of epoch e; x_e recomputed from
 *  its published fields (previous output, bets root, T and, for version 2, its timing
 *  commitment), then its Wesolowski proof in Z_N. Resolves with a detail string, or rejects
 *  with CheckFailed. */
export declare function verifyPublishedEpoch(n: bigint, rec: PublishedEpoch, e: number): Promise<string>;

// ---------------------------------------------------------------------------------------------
// Sections 18 and 19: class-group epochs
// ---------------------------------------------------------------------------------------------

/** D_e = create_discriminant(seed_e, bits) for a class-group id (a fresh group every epoch);
 *  rejects with CheckFailed where vrs-classgroup refuses. */
export declare function epochDiscriminant(groupId: string, seed: Uint8Array): Promise<Discriminant>;

/** The class-group counterpart of verifyWesolowski, on the proof's hex members and D_e: x the
 *  generator, y and π reduced forms of D_e, ℓ = B = GetB(D_e, x, y) in 33 bytes, and
 *  π^B · x^(2^T mod B) = y. Resolves with a detail string, or rejects with CheckFailed. */
export declare function verifyClassGroupProof(disc: Discriminant, proof: WesolowskiProof): Promise<string>;

// ---------------------------------------------------------------------------------------------
// Section 11: bet leaves and RFC 6962 trees
// ---------------------------------------------------------------------------------------------

/** The games. */
export type GameName = "dice" | "sicbo" | "rng";

/** The bet types of a dice game (GAMES.md). */
export type DiceBetType = "exact" | "over7" | "under7" | "odd" | "even";

/** The bet types of a Sic Bo game (GAMES.md). */
export type SicBoBetType =
  | "big"
  | "small"
  | "odd"
  | "even"
  | "total"
  | "single"
  | "double"
  | "triple"
  | "anyTriple"
  | "combo";

/** The committed fields of a game (`proof.bet`); null where a game has none (a raw RNG request
 *  has no bet_type, target, combo or amount). */
export interface Bet {
  game_id: string;
  game: GameName;
  bet_type?: DiceBetType | SicBoBetType | null;
  /** The target of exact, total, single, double and triple bets. */
  target?: number | null;
  /** The two faces of a Sic Bo combo bet. */
  combo?: [number, number] | null;
  /** Two fraction digits, e.g. "1.00". */
  amount?: string | null;
  player_id: string;
  player_seed?: string | null;
  operator_key: string;
}

/** The committed fields of a bet, as strings ("" for a missing one; combo as "a,b"), in leaf
 *  order; throws CheckFailed for a combo that is not an array. */
export declare function leafFields(
  bet: Partial<Bet>,
): [
  game_id: string,
  game: string,
  bet_type: string,
  target: string,
  combo: string,
  amount: string,
  player_id: string,
  player_seed: string,
  operator_key: string,
];

/** The bet leaf: u8(len) ‖ "vrs/v1/bet" ‖ f(field)… over leafFields. */
export declare function betLeaf(bet: Partial<Bet>): Uint8Array;

/** RFC 6962 leaf hash: SHA-256(0x00 ‖ leaf). */
export declare function leafHash(leaf: Uint8Array): Promise<Uint8Array>;

/** RFC 6962 node hash: SHA-256(0x01 ‖ left ‖ right). */
export declare function nodeHash(left: Uint8Array, right: Uint8Array): Promise<Uint8Array>;

/** MTH of RFC 6962 over leaf hashes (SHA-256 of nothing for none). */
export declare function merkleRoot(hashes: readonly Uint8Array[]): Promise<Uint8Array>;

/** RFC 9162 §2.1.3.2: the root an audit path leads to from leaf `index` of a tree of `size`
 *  leaves; rejects with CheckFailed for an index out of range or a path too long or short. */
export declare function rootFromPath(
  leafHashBytes: Uint8Array,
  index: number | bigint,
  size: number | bigint,
  path: Iterable<Uint8Array>,
): Promise<Uint8Array>;

// ---------------------------------------------------------------------------------------------
// Section 11, "Signed acceptance": Ed25519 and the signed message
// ---------------------------------------------------------------------------------------------

/** L, the order of edwards25519's prime-order subgroup: 2^252 + 27742317777372353535851937790883648493. */
export declare const ED25519_L: bigint;

/** Pure Ed25519 verification (RFC 8032 §5.1.7), strict like ed25519-dalek's verify_strict
 *  (canonical A and R not of small order, S < L). Resolves with a detail string, or rejects
 *  with CheckFailed. */
export declare function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): Promise<string>;

/** Whether 32 bytes are the canonical encoding of a point of edwards25519 (RFC 8032 §5.1.3). */
export declare function isEd25519Point(bytes: Uint8Array): boolean;

/** The acceptance kinds of the signed message: 1 the epoch path, 2 a pool-served game. */
export declare const ACCEPTANCE_KIND: { readonly epoch: 1; readonly pool: 2 };

/** message = u8(17) ‖ "vrs/v2/acceptance" ‖ u8(kind) ‖ u64(number) ‖ leaf_hash ‖
 *  u64(accepted_at_ms): 67 bytes. Throws CheckFailed for another kind or a leaf hash that is
 *  not 32 bytes. */
export declare function acceptanceMessage(
  kind: 1 | 2,
  number: number | bigint,
  leafHashBytes: Uint8Array,
  acceptedAtMs: number | bigint,
): Uint8Array;

/** The operator's signed acceptance of a game (`proof.acceptance`, PROTOCOL.md §11). */
export interface Acceptance {
  /** 2 (another version fails). */
  version: number;
  /** `epoch` (kind 1) or `pool` (kind 2). */
  kind: "epoch" | "pool";
  /** The epoch, for kind `epoch`. */
  epoch?: number | null;
  /** The pool entry, for kind `pool`. */
  pool_index?: number | null;
  /** The bet leaf, hex. */
  leaf: string;
  /** SHA-256(0x00 ‖ leaf), 64 hex digits. */
  leaf_hash: string;
  /** When the game was accepted (Unix ms). */
  accepted_at_ms: number;
  /** 64 hex digits. */
  public_key: string;
  /** 128 hex digits (R ‖ S). */
  signature: string;
}

/** One of the operator's published acceptance keys (GET / `acceptance_keys`). */
export interface AcceptanceKey {
  /** 64 hex digits (RFC 8032 encoding). */
  public_key: string;
  /** When the store first recorded it (Unix ms): from the earliest on, every game is signed. */
  since_ms?: number;
}

/** The proof members verifyAcceptance reads (a Proof has them). */
export interface AcceptanceContext {
  /** The game's committed leaf, hex (needed when there is a signature). */
  leaf?: string;
  /** True for a pool-served game. */
  pool_served?: boolean;
  /** The pool entry of a pool-served game. */
  pool_index?: number;
  /** The epoch of an epoch game. */
  vdfEpoch?: number;
  /** A moved game's epoch it was accepted into (PROTOCOL.md §21, "Moved games"): the epoch its
   *  acceptance must name. */
  moved_from?: number | null;
  /** The proof's log, whose `moves` (with `moved_from`) make a moved game. */
  log?: Pick<LogEvidence, "moves"> | null;
  /** When the game was accepted (Unix ms). */
  bet_created_at_ms?: number | null;
}

/** Whether a proof is a moved game's (PROTOCOL.md §21, "Moved games"): it names `moved_from`
 *  or shows moves (`log.moves` present and not empty). */
export declare function isMovedGame(proof: Pick<AcceptanceContext, "moved_from" | "log"> | null | undefined): boolean;

/** The `acceptance` check (PROTOCOL.md §11) of `acceptance` (null before version 2, which
 *  fails for a game accepted after the earliest key's since_ms) against the operator's
 *  published keys (objects or bare hex strings) and the proof: the signature must be over this
 *  game's leaf, its epoch (`moved_from` for a moved game) or pool entry and its acceptance
 *  time, by a published key. Resolves with a detail string, or rejects with CheckFailed. */
export declare function verifyAcceptance(
  acceptance: Acceptance | null | undefined,
  publishedKeys: readonly (AcceptanceKey | string)[] | null | undefined,
  proof: AcceptanceContext,
): Promise<string>;

// ---------------------------------------------------------------------------------------------
// Section 12 and GAMES.md: rngValue, dice, payouts
// ---------------------------------------------------------------------------------------------

/** rngValue = HMAC-SHA256(key y, game_id ‖ player_seed), 32 bytes (a missing seed is ""). */
export declare function rngValue(yBytes: Uint8Array, gameId: string, playerSeed?: string | null): Promise<Uint8Array>;

/** What rollDice drew. */
export interface DiceRoll {
  /** The dice, 1 to 6 each. */
  dice: number[];
  /** Every byte consumed, skipped ones included, as hex. */
  bytes_used: string;
  /** How many bytes were skipped (≥ 252). */
  skipped: number;
  /** How many extra HMAC blocks were drawn after rngValue itself. */
  blocks: number;
}

/** The first `n` dice of the stream rngValue, HMAC(rngValue, u32(1)), …: a byte b < 252 gives
 *  1 + b mod 6, a larger one is skipped. */
export declare function rollDice(rng: Uint8Array, n: number): Promise<DiceRoll>;

/** Money: a decimal with at most two fraction digits, to whole cents; throws CheckFailed for
 *  anything else. */
export declare function parseCents(text: unknown): bigint;

/** Cents as a decimal with two fraction digits ("12.50"). */
export declare function formatCents(c: bigint): string;

/** The number of dice a game draws: 2 for dice, 3 for sicbo, 0 for rng; throws CheckFailed for
 *  another game. */
export declare function diceCount(game: string): 0 | 2 | 3;

/** How a bet settles: a loss pays "0.00". */
export type Settlement =
  | { won: true; payout: string; rule: string }
  | { won: false; payout: "0.00"; rule: string };

/** Settles `bet` (its game, bet_type, target, combo, amount) on `dice` (GAMES.md): {won,
 *  payout, rule}. Throws CheckFailed for a malformed bet or the wrong number of dice. */
export declare function settle(bet: Partial<Bet>, dice: readonly number[]): Settlement;

// ---------------------------------------------------------------------------------------------
// Sections 14 and 16: pool entries, anchors
// ---------------------------------------------------------------------------------------------

/** A pool batch's seed: H("vrs/v1/pool-batch", u64(b) ‖ previous root ‖ u64(anchor epoch) ‖
 *  anchor y). */
export declare function poolBatchSeed(
  b: number | bigint,
  prevRoot: Uint8Array,
  anchorEpoch: number | bigint,
  anchorY: Uint8Array,
): Promise<Uint8Array>;

/** A pool entry's seed: H("vrs/v1/pool-entry", batch seed ‖ u64(index) ‖ secret). */
export declare function poolEntrySeed(batchSeed: Uint8Array, index: number | bigint, secret: Uint8Array): Promise<Uint8Array>;

/** A pool entry's leaf: u8(len) ‖ "vrs/v1/pool-leaf" ‖ u64(index) ‖ u64(T) ‖ x ‖ y ‖ ℓ ‖ π. */
export declare function poolEntryLeaf(
  index: number | bigint,
  t: number | bigint,
  x: Uint8Array,
  y: Uint8Array,
  l: Uint8Array,
  pi: Uint8Array,
): Uint8Array;

/** A pool entry's game id: the first 16 bytes of H("vrs/v1/pool-game", u64(index) ‖ y), hex. */
export declare function poolGameId(index: number | bigint, y: Uint8Array): Promise<string>;

/** An epoch's record hash (its anchor leaf's hash input): H("vrs/v1/epoch-record", u64(e) ‖
 *  u64(T) ‖ bets_root ‖ y_prev ‖ x ‖ y ‖ ℓ ‖ π). */
export declare function epochRecord(
  e: number | bigint,
  t: number | bigint,
  betsRoot: Uint8Array,
  prevY: Uint8Array,
  x: Uint8Array,
  y: Uint8Array,
  l: Uint8Array,
  pi: Uint8Array,
): Promise<Uint8Array>;

/** An anchor leaf (section 16): u8(kind) ‖ u64(number) ‖ hash; kind 1 an epoch, 2 a pool
 *  batch. */
export declare function anchorLeaf(kind: number, number: number | bigint, hash: Uint8Array): Uint8Array;

/** "0x" and the hex of "vrs-anchor-v1:": an anchor transaction's calldata is this followed by
 *  the anchor root's hex. */
export declare const CALLDATA_PREFIX: "0x7672732d616e63686f722d76313a";
/** "vrs-anchor-v2:" in hex (section 16, "Binding"). */
export declare const CALLDATA_V2_PREFIX: "0x7672732d616e63686f722d76323a";

/** The anchor batch ranges anchorPosition reads (section 16). */
export interface AnchorRanges {
  batch?: unknown;
  /** The batch's epochs, both ends included. */
  epochs?: { first: number; last: number } | null | undefined;
  /** Its pool batches, `to` excluded. */
  pool_batches?: { from: number; to: number } | null | undefined;
  /** Its notary batches, `to` excluded. */
  notary_batches?: { from: number; to: number } | null | undefined;
}

/** Where a kind-1 (epoch) or kind-2 (pool batch) leaf numbered `number` sits in an anchor
 *  batch, and the batch tree's size, from the batch's ranges: its epochs, then its pool
 *  batches, then its notary batches. Throws CheckFailed when the batch does not cover it. */
export declare function anchorPosition(anchor: AnchorRanges, kind: 1 | 2, number: number): { position: number; size: number };

// ---------------------------------------------------------------------------------------------
// Groups, epoch records, fetching
// ---------------------------------------------------------------------------------------------

/** A game id: 32 lowercase hex digits. */
export declare const GAME_ID_RE: RegExp;

/** The note of a report for an epoch game verified without a witness policy: "witnessed: not
 *  checked (no --witness-policy): …" (PROTOCOL.md §21). */
export declare const WITNESSED_NOTE: string;

/** The group verifyGame requires unless told otherwise (options.group): "rsa2048". */
export declare const DEFAULT_GROUP: "rsa2048";

/** A least margin (verifyGame's `minMargin`) in hundredths, 0 when null or undefined; throws
 *  RangeError unless it is a number ≥ 1 with two decimals at most. */
export declare function parseMinMargin(m: number | null | undefined): number;

/** A least rate (verifyGame's `minRate`) in squarings per second, 0 when null or undefined;
 *  throws RangeError unless it is a whole number ≥ 1. */
export declare function parseMinRate(r: number | null | undefined): number;

/** GROUP of `VEO-WESOLOWSKI-<GROUP>` for a group id (section 13, section 19): "RSA2048",
 *  "RSA-CUSTOM" for a hex: modulus, else the id upper-cased. */
export declare function veoGroup(id: unknown): string;

/** Section 13, `epoch_record`: the (proof member, epoch record member) pairs that must be
 *  equal; a proof member may be a dotted path ("timing.nonce"). */
export declare const EPOCH_RECORD_PAIRS: [proofMember: string, recordMember: string][];

/** Section 13's equality of JSON values "as they are": equal strings, equal numbers, both
 *  null, and arrays and objects member by member. */
export declare function jsonEqual(a: unknown, b: unknown): boolean;

/** A game id from what a player pastes (the id itself, or any URL or text holding one), in
 *  lowercase; null when there is none. */
export declare function extractGameId(text: unknown): string | null;

/** What verifyGame and fetchVerification need of a fetch function (globalThis.fetch fits). */
export type FetchLike = (
  url: string,
  init: { headers: { accept: string }; cache: "no-store" },
) => Promise<{ readonly status: number; text(): Promise<string> }>;

/** An anchor object (section 16): pending while its record is in no anchor batch. */
export interface AnchorPending {
  /** "pending". */
  status: string;
  enabled: boolean;
  /** Why it is pending, in words. */
  message?: string;
  /** The record's anchor data did not add up. */
  error?: string;
  /** No batch yet. */
  batch?: null;
}

/** An anchor object (section 16) of a record in an anchor batch: what `anchor_inclusion`
 *  checks. */
export interface AnchorIncluded {
  /** pending, submitted or confirmed. */
  status: string;
  enabled: boolean;
  /** The anchor batch. */
  batch: number;
  epochs: { first: number; last: number };
  pool_batches: { from: number; to: number };
  notary_batches: { from: number; to: number };
  /** The anchor leaf (kind, number, hash), hex. */
  leaf: string;
  leaf_hash: string;
  leaf_index: number;
  tree_size: number;
  audit_path: string[];
  /** The anchor batch's root, hex. */
  root: string;
  /** `0x` hex of the anchor transaction's input: CALLDATA_V2_PREFIX ‖ u64(batch) ‖ u64(log
   *  size) ‖ log root ‖ root when `log` is present, else CALLDATA_PREFIX ‖ root. */
  calldata: string;
  /** The batch's entry in the operator's log (section 16, "Binding"); absent for version 1. */
  log?: import("./vrs-witnessed.mjs").AnchorLog;
  /** `0x` hash of the transaction; null until confirmed. */
  tx: string | null;
  block: number | null;
  chain: string;
  chain_id: number;
}

/** A record's anchor object (section 16): `anchor.batch != null` tells an included one. */
export type Anchor = AnchorPending | AnchorIncluded;

/** The binding of a pool-served bet to an epoch's bets tree (section 14, "Binding served bets"). */
export interface BetEpoch {
  /** The bet epoch E. */
  epoch: number;
  /** "pending" (E has not closed: the step passes with `pending: true`) or "bound"; anything
   *  else fails. */
  status: string;
  /** For "bound": the leaf's position in E's tree. */
  leaf_index?: number | null;
  /** For "bound": E's bet count. */
  tree_size?: number;
  /** For "bound": the audit path, hex hashes. */
  audit_path?: string[];
  /** For "bound": E's bets root, hex. */
  bets_root?: string;
}

/**
 * The `proof` of a verification (GET /api/v1/verify/{id}): everything needed to redo a game's
 * checks. Epoch games and pool-served games share the first members; the others belong to one
 * kind (or to a protocol version) and are optional. Members are named as the server spells them.
 */
export interface Proof {
  /** The group: an RSA modulus id (rsa2048, test512, test1024, hex:…) or classgroup-<bits>. */
  modulus: string;
  /** `VEO-WESOLOWSKI-<GROUP>` (veoGroup); checked when present. */
  veo_class?: string;
  /** RSA groups: N in hex; checked when present. */
  modulus_n?: string | null;
  /** Class groups: D_e as chiavdf writes it ("-0x…"); null when it cannot be derived. */
  discriminant?: string | null;
  /** Class groups: bits of D_e. */
  discriminant_bits?: number;
  /** T. */
  iterations: number;
  /** The VDF input x, hex. */
  x: string;
  /** The VDF output y, hex: the key of rngValue. */
  y: string;
  /** The proof π, hex. */
  pi: string;
  /** The challenge prime ℓ, hex. */
  l: string;
  /** The game's committed leaf, hex. */
  leaf: string;
  /** SHA-256(0x00 ‖ leaf), hex; checked when present. */
  leaf_hash?: string;
  /** The leaf's position: in the epoch's bets tree (for a moved game, in epoch moved_from's),
   *  or in the pool batch's tree. */
  leaf_index: number | null;
  /** The audit path of `leaf_index`, hex hashes. */
  audit_path: string[];
  /** The committed fields of the game. */
  bet: Bet;
  /** The epoch the game derives from (a pool game's anchor epoch). */
  vdfEpoch: number;
  /** rngValue as the server computed it, hex. */
  rngValue: string;
  /** When the game was accepted (Unix ms). */
  bet_created_at_ms?: number | null;
  /** The operator's signed acceptance; null (or absent) before protocol version 2. */
  acceptance?: Acceptance | null;
  /** The anchor of the game's epoch or pool batch. */
  anchor?: Anchor | null;
  /** pending, submitted or confirmed. */
  anchor_status?: string;

  // Epoch games.
  /** seed_e, hex; checked when present. */
  epoch_seed?: string;
  /** y of epoch p(e), or y_0, hex. */
  previous_output?: string;
  /** The epoch's bets root, hex. */
  bets_root?: string;
  /** The epoch's bet count. */
  bet_count?: number;
  /** The epoch's timing commitment; absent from a server before the timing rule (version 1). */
  timing?: Timing | null;
  /** The epoch's plan and commitment in the operator's witnessed log (PROTOCOL.md §21); absent
   *  when the service keeps no log. A moved game's also has `moves`. */
  log?: LogEvidence | null;
  /** A moved game (PROTOCOL.md §21, "Moved games"): the void epoch e it was accepted into, whose
   *  tree `leaf_index` and `audit_path` are in; the proof's other epoch members are those of
   *  its last destination `vdfEpoch`. Absent (or null) for an ordinary game. */
  moved_from?: number | null;

  // Pool-served games.
  /** True for a pool-served game. */
  pool_served?: boolean;
  /** The pool entry the game consumed. */
  pool_index?: number;
  /** The entry's pool batch. */
  pool_batch?: number;
  /** The entry's revealed secret r_i, hex. */
  secret?: string;
  /** H(batch seed ‖ i ‖ r_i), hex; checked when present. */
  entry_seed?: string;
  /** The batch seed, hex. */
  batch_seed?: string;
  /** The batch's root, hex. */
  batch_root?: string;
  /** The batch's first entry. */
  batch_first_index?: number;
  /** The batch's number of entries. */
  batch_size?: number;
  /** The previous batch's root (32 zero bytes for batch 1), hex. */
  previous_batch_root?: string;
  /** The batch's anchor epoch. */
  anchor_epoch?: number;
  /** y of the anchor epoch, hex. */
  anchor_y?: string;
  /** When the batch was committed (Unix ms). */
  batch_committed_at_ms?: number;
  /** The entry's pool leaf, hex; checked when present. */
  entry_leaf?: string;
  /** The epoch whose bets tree binds the served bet; null (or absent) before version 2. */
  bet_epoch?: BetEpoch | null;

  /** Other members (checkpoints, anchorTx, …), not read by the verifier. */
  [member: string]: unknown;
}

/** The actions of the server's replay trace. */
export type ReplayAction = "bet_committed" | "vdf_epoch_published" | "randomness_derived" | "dice_rolled" | "bet_evaluated";

/** One step of the server's replay trace; the members claimsOf reads are named. */
export interface ReplayStep {
  /** The step's number. */
  step?: number;
  action: ReplayAction;
  /** randomness_derived: rngValue, hex. */
  rngValue?: string;
  /** dice_rolled: the dice. */
  dice?: number[];
  /** bet_evaluated: the dice's total. */
  total?: number | null;
  /** bet_evaluated: whether the bet won. */
  won?: boolean | null;
  /** bet_evaluated: the payout, a decimal string. */
  payout?: string | null;
  /** Other members of each kind of step. */
  [member: string]: unknown;
}

/** One of the server's own checks (not trusted by the verifier). */
export interface ServerCheck {
  name: string;
  passed: boolean;
  detail: string;
}

/** The 200 body of GET /api/v1/verify/{id}: a verification. Only `proof` is required; the
 *  verifier never trusts `verified` or `checks`. */
export interface Verification {
  game_id?: string;
  /** The server's own verdict (reported as server_verified). */
  verified?: boolean;
  /** The server's own checks. */
  checks?: ServerCheck[];
  /** Everything needed to redo the checks. */
  proof: Proof;
  /** The server's replay trace, whose claims (rngValue, dice, won, payout, total) are checked. */
  replay_steps?: ReplayStep[];
  /** Other members. */
  [member: string]: unknown;
}

/** GET /api/v1/verify/{id} with `fetchFn` (default globalThis.fetch): resolves with the body of
 *  a verification, or rejects with a VerifyError (invalid_id, not_found, pending, http,
 *  network, bad_response). */
export declare function fetchVerification(baseUrl: string, gameId: string, fetchFn?: FetchLike): Promise<Verification>;

/** What the server claims the outcome was, from its replay steps (null where it says nothing). */
export interface Claims {
  rngValue: string | null;
  dice: number[] | null;
  won: boolean | null;
  payout: string | null;
  total: number | null;
}

/** What the server claims the outcome was, from the body's replay steps. */
export declare function claimsOf(body: { replay_steps?: unknown }): Claims;

// ---------------------------------------------------------------------------------------------
// verifyGame
// ---------------------------------------------------------------------------------------------

/** The name of every step verifyGame can report, in the order it reports them: group, bet_leaf,
 *  then an epoch game's merkle_inclusion (then moved, for a moved game) … timing (and
 *  witnessed, with a witness policy) or a pool-served game's pool_batch_chain …
 *  pool_bet_inclusion, then rng_value, dice, payout, acceptance and (with an anchor batch)
 *  anchor_inclusion. */
export type StepName =
  | "group"
  | "bet_leaf"
  | "merkle_inclusion"
  | "moved"
  | "bets_root"
  | "epoch_chain"
  | "epoch_record"
  | "epoch_input"
  | "vdf_proof"
  | "timing"
  | "witnessed"
  | "pool_batch_chain"
  | "pool_anchor"
  | "pool_batch_seed"
  | "pool_entry_input"
  | "pool_inclusion"
  | "pool_committed"
  | "pool_game_id"
  | "pool_bet_inclusion"
  | "rng_value"
  | "dice"
  | "payout"
  | "acceptance"
  | "anchor_inclusion";

/** One check of verifyGame and its outcome. */
export interface Step {
  name: StepName;
  /** Whether the check passed. */
  passed: boolean;
  /** What was checked, or why it failed. */
  detail: string;
  /** Set (true) on a step that passes for now but waits on the server: a pool-served bet whose
   *  bet epoch is still open. */
  pending?: true;
}

/** The options of verifyGame. */
export interface VerifyGameOptions {
  /** The group the proof must be in, the verifier's choice: DEFAULT_GROUP ("rsa2048") when
   *  undefined; "classgroup-1024", or "test512" / "test1024" / "hex:<digits>" for a test
   *  server; null takes the group the server names (only for a page served by that server). */
  group?: string | null | undefined;
  /** The least security margin an epoch may declare for `timing` to pass (a number ≥ 1, two
   *  decimals at most; a version-1 epoch, which declares none, then fails). Absent: any. */
  minMargin?: number | null | undefined;
  /** The least squaring rate an epoch may declare for `timing` to pass, in squarings per second
   *  (a whole number ≥ 1; a version-1 epoch, which declares none, then fails). Absent: any. */
  minRate?: number | null | undefined;
  /** Let a version-1 epoch pass `timing` as version 1's rules allow; by default (false) it
   *  fails: it makes no timing commitment (PROTOCOL.md §10, "Version 1"). */
  allowVersion1?: boolean | undefined;
  /** The text of a C2SP tlog-policy (`log`, `witness`, `group`, `quorum` lines): the verifier's
   *  own log key, witnesses and quorum. With it, an epoch game gets the `witnessed` step of
   *  PROTOCOL.md §21; without it, the report's `notes` hold WITNESSED_NOTE. A policy that does
   *  not parse rejects verifyGame with a RangeError. */
  witnessPolicy?: string | null | undefined;
  /** S of the witnessed step: the fastest squarer the verifier allows for, squarings per second
   *  (a whole number ≥ 1). Default: 9000000 for RSA groups, 1000000 for class groups. Read only
   *  with witnessPolicy. */
  maxRate?: number | bigint | null | undefined;
  /** δ of the witnessed step: the verifier's clock tolerance in ms (default 2000). Read only
   *  with witnessPolicy. */
  deltaMs?: number | bigint | null | undefined;
  /** The fetch function (default globalThis.fetch). */
  fetch?: FetchLike | null | undefined;
  /** An already fetched verification response, to skip the first request. */
  body?: Verification | null | undefined;
}

/** What verifyGame resolves with. */
export interface VerifyReport {
  /** The game id verified (verifyGame's argument). */
  game_id: string;
  /** True when every step passed. */
  verified: boolean;
  status: "verified" | "failed";
  /** The first step that failed, or null. */
  failed_step: StepName | null;
  /** Every check, in order. */
  steps: Step[];
  /** The recomputed dice ([] for a raw RNG request or when they could not be recomputed). */
  dice: number[];
  /** The game (proof.bet.game), or null. */
  game: GameName | null;
  /** The proof's bet ({} when the proof has none). */
  bet: Partial<Bet>;
  /** Whether the game was served from the pool. */
  pool_served: boolean;
  /** The pool entry, for a pool-served game; else null. */
  pool_index: number | null;
  /** The group id the proof names, or null. */
  modulus: string | null;
  /** Bits of N, or of the discriminant for a class group; null when unknown. */
  modulus_bits: number | null;
  /** Whether the group is a class group. */
  class_group: boolean;
  /** For a class group, the server's "-0x…" D_e (which epoch_input checks); else null. */
  discriminant: string | null;
  /** T, as the proof gives it. */
  iterations: number | null;
  /** The proof's vdfEpoch. */
  epoch: number | null;
  /** The recomputed rngValue, hex; null when it could not be recomputed. */
  rng_value: string | null;
  /** The recomputed outcome; null for a raw RNG request or when it could not be recomputed. */
  won: boolean | null;
  /** The recomputed payout, a decimal string; null as for `won`. */
  payout: string | null;
  /** The payout rule applied, in words; null as for `won`. */
  rule: string | null;
  /** The proof's anchor_status (pending, submitted or confirmed), or null. */
  anchor_status: string | null;
  /** The proof's anchor object, or null. */
  anchor: Anchor | null;
  /** The server's replay trace ([] when it has none). */
  replay_steps: ReplayStep[];
  /** The server's own verdict (not trusted), or null. */
  server_verified: boolean | null;
  /** What was not checked and is therefore trusted, in words: WITNESSED_NOTE for an epoch game
   *  verified without a witness policy; else empty. */
  notes: string[];
  /** How long the verification took (ms). */
  elapsed_ms: number;
}

/** Called with each step as soon as it is computed; a throwing callback is ignored. */
export type OnStep = (step: Step) => void;

/** Verifies one game from the server at `baseUrl` ("" for the page's own origin): every step of
 *  PROTOCOL.md recomputed, never trusting the server's verdict. Each step goes to `onStep` as
 *  soon as it is computed. Resolves with the report (a wrong value is a failed step); rejects
 *  with a VerifyError when there is nothing to verify. */
export declare function verifyGame(
  baseUrl: string,
  gameId: string,
  onStep?: OnStep | null,
  options?: VerifyGameOptions,
): Promise<VerifyReport>;
