// Types of client.mjs: the API client of the vrs randomness and games API and of its notary.
//
// Answers are the server's JSON objects as parsed: member names are the wire's own (snake_case,
// and camelCase where the server writes it: `rngValue`, `vdfEpoch`, `anchorTx`). The interfaces
// name every member the server sends today; a member a later server adds is still in the object
// at run time (nothing is dropped), read it through a cast until these types name it.

// Shapes the verifier (vrs-verify.mjs) declares too are its own, re-exported here: one name, one
// type, whether imported from "@vrs/client", "@vrs/client/client" or "@vrs/client/verify".
import type {
  Acceptance,
  AcceptanceKey,
  Anchor,
  AnchorIncluded,
  AnchorPending,
  BetEpoch,
  DiceBetType,
  ReplayStep,
  SicBoBetType,
  Step,
  Timing,
  VerifyReport,
} from "./vrs-verify.mjs";

export type {
  Acceptance,
  AcceptanceKey,
  Anchor,
  AnchorIncluded,
  AnchorPending,
  BetEpoch,
  DiceBetType,
  ReplayStep,
  SicBoBetType,
  Step,
  Timing,
  VerifyReport,
};

// ---------------------------------------------------------------------------------------------
// JSON and small shared shapes
// ---------------------------------------------------------------------------------------------

/** Any JSON value. */
export type Json = null | boolean | number | string | Json[] | JsonObject;

/** A JSON object (the notary's `metadata`, a refused bet's `example`). */
export interface JsonObject {
  [member: string]: Json;
}

/** The games a bet can be placed on. */
export type BetGame = "dice" | "sicbo";

/** `["dice", "sicbo"]`: the games `bet` takes. */
export declare const GAMES: readonly BetGame[];

/** One named check and its outcome (the server's own, or a receipt's). */
export interface Check {
  name: string;
  passed: boolean;
  detail: string;
}

/** First and last epoch of an anchor batch. */
export interface EpochSpan {
  first: number;
  last: number;
}

/** Pool or notary batches `from..to` of an anchor batch (none when equal). */
export interface BatchSpan {
  from: number;
  to: number;
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/**
 * Members every bet body may have, spelled as on the wire so that a documented body (or a
 * refused bet's `example`) is passed as it is. `null` means absent: the default applies.
 */
export interface BetOptions {
  /** The stake, default 1.00: at most two fraction digits, within the operator's limits. */
  amount?: number | null | undefined;
  /** Who bets (default `anonymous`, at most 128 characters). */
  player_id?: string | null | undefined;
  /** Mixed into rngValue: the player's own contribution (at most 256 characters). */
  player_seed?: string | null | undefined;
  /** The operator key (default `vrs-house`). */
  operator_key?: string | null | undefined;
  /**
   * true: serve at once from the precomputed pool (an `InstantBet`, HTTP 200; the epoch path
   * still when the pool is empty); false: the epoch path (`BetAccepted`, 202). Absent: the
   * operator's default.
   */
  instant?: boolean | null | undefined;
}

/** A dice bet: `exact` needs `target` 2–12; the other bet types take none. */
export type DiceBetRequest = BetOptions &
  (
    | { bet_type: "exact"; target: number }
    | { bet_type: "over7" | "under7" | "odd" | "even"; target?: number | null | undefined }
  );

/**
 * A Sic Bo bet: `total` needs `target` 4–17; `single`, `double` and `triple` need `target` 1–6
 * (the face); `combo` needs `combo`, two different faces; the others take neither.
 */
export type SicboBetRequest = BetOptions &
  (
    | { bet_type: "big" | "small" | "odd" | "even" | "anyTriple"; target?: number | null | undefined; combo?: null | undefined }
    | { bet_type: "total" | "single" | "double" | "triple"; target: number; combo?: null | undefined }
    | { bet_type: "combo"; combo: readonly [number, number]; target?: null | undefined }
  );

/** The bet body of `game`. */
export type BetRequest<G extends BetGame = BetGame> = G extends "dice" ? DiceBetRequest : SicboBetRequest;

/** What every call takes besides its own arguments. */
export interface RequestOptions {
  /** Aborts the request; the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** This request's timeout (default: the client's `timeoutMs`); past it, `TimeoutError`. */
  timeoutMs?: number | undefined;
}

/** `epoch`'s options: the request's, and an opt-in range of the leaf hashes. */
export interface EpochOptions extends RequestOptions {
  /** The first leaf hash to return (default 0); the answer then has `leaf_from`. */
  leafFrom?: number | undefined;
  /** At most this many leaf hashes (0 for none; default all). */
  leafLimit?: number | undefined;
}

/** `wait`'s options. */
export interface WaitOptions {
  /** Give up after this long, with `TimeoutError` (default 60 000). At least one request is made. */
  timeoutMs?: number | undefined;
  /** Pause between two polls (default 250). */
  intervalMs?: number | undefined;
  /** Stops waiting; the promise rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** `verify`'s options: the group required, how long to wait for a pending game, a progress callback. */
export interface VerifyOptions extends WaitOptions {
  /**
   * The group the proof must be in, the verifier's choice and never the server's (a server free
   * to name a group it knows the order of could forge every proof): `"rsa2048"` when undefined;
   * `"classgroup-1024"`, or `"test512"` / `"test1024"` / `"hex:<digits>"` for a test server;
   * null takes the group the server names.
   */
  group?: string | null | undefined;
  /** The least security margin an epoch may declare for `timing` to pass (see verifyGame). */
  minMargin?: number | null | undefined;
  /** The least squaring rate an epoch may declare for `timing` to pass (see verifyGame). */
  minRate?: number | null | undefined;
  /** Let a version-1 epoch pass `timing` (see verifyGame); by default it fails. */
  allowVersion1?: boolean | undefined;
  /** A C2SP tlog-policy's text: epoch games then get the `witnessed` step (see verifyGame). */
  witnessPolicy?: string | null | undefined;
  /** S of the witnessed step, squarings per second (see verifyGame). */
  maxRate?: number | bigint | null | undefined;
  /** δ of the witnessed step, ms (see verifyGame). */
  deltaMs?: number | bigint | null | undefined;
  /** Called with each check as soon as it is computed (a throwing callback is ignored). */
  onStep?: ((step: Step) => void) | undefined;
}

/** `notarize`'s request. */
export interface NotarizeRequest {
  /** A schema id of `notarySchemas()`: `sha256`, `keccak256`, `jcs-sha256`, `vrs-game-result`. */
  schema: string;
  /** 32 bytes: 64 hex digits, either case, `0x` optional. */
  payloadHash: string;
  /** Optional JSON object (at most 8 levels, 4096 bytes canonical); stored as given. */
  metadata?: JsonObject | null | undefined;
  /**
   * Sent as `Idempotency-Key` (1–255 printable ASCII characters): the same key with the same
   * body answers the first receipt again, never a second charge; with another body, `BadRequest`
   * (422); while the first is still running, `Conflict` (409).
   */
  idempotencyKey?: string | null | undefined;
  /** The API key for this call (`Authorization: Bearer`), instead of the client's. */
  apiKey?: string | null | undefined;
}

/** The client's settings. */
export interface VrsClientOptions {
  /** The fetch to use (default `globalThis.fetch`): a test double, or one with a proxy agent. */
  fetch?: typeof globalThis.fetch | undefined;
  /** The notary API key sent with every `notarize` (`Authorization: Bearer <key>`). */
  apiKey?: string | undefined;
  /** Each request's timeout in ms (default 30 000; `Infinity` for none). */
  timeoutMs?: number | undefined;
  /** Headers sent with every request (for example a gateway's own credentials). */
  headers?: HeadersInit | undefined;
  /** Where the notary (`/v1/…`) is served when it has its own listener (default: `baseUrl`). */
  notaryUrl?: string | undefined;
}

// ---------------------------------------------------------------------------------------------
// System answers
// ---------------------------------------------------------------------------------------------

/** `GET /` links. */
export interface Links {
  /** The in-browser verifier (`/verify?game=<id>`). */
  verify: string;
  whitepaper: string;
  api_docs: string;
  health: string;
  stats: string;
  recent: string;
  docs: string;
}

/** The timing rule in force (docs/PROTOCOL.md §10). */
export interface Security {
  margin: number;
  vdf_threads: number;
  squarings_per_second: number;
  protocol_version: number;
  rule: string;
}

/** `GET /`: the VDF engine. */
export interface VdfEngine {
  /** `active`, or `degraded` after an engine error. */
  status: string;
  epoch: {
    current: number | null;
    computing: number | null;
    last_resolved: number | null;
    iterations: number;
    modulus: string;
  };
  /** `leader` or `replica`. */
  role: string;
  /** The last epoch's VDF time, e.g. `4.93s`. */
  computation_time: string;
  security: Security;
}

/** `GET /`: service info (interface 2.1). */
export interface ServiceInfo {
  service: string;
  description: string;
  /** The API version, e.g. `0.2.0`. */
  version: string;
  /** `operational` or `degraded`. */
  status: string;
  links: Links;
  database: "connected" | "disconnected";
  vdf_engine: VdfEngine;
  anchoring: {
    enabled: boolean;
    state: string;
    chain: string;
    chain_id: number;
    message: string | null;
  };
  /** The key this replica signs acceptances with (64 hex digits). */
  acceptance_key: string;
  /** Every acceptance key of this store, oldest first: what a verifier checks signatures against. */
  acceptance_keys: AcceptanceKey[];
  /** Seconds since start. */
  uptime: number;
}

/** `GET /health` (interface 2.2). */
export interface Health {
  /** `ok` when healthy, else `degraded`. */
  status: string;
  uptime: number;
  database: "connected" | "disconnected";
  /** `active` when the VDF runs. */
  vdf: string;
  /** `leader` or `replica`. */
  role: string;
  /** `embedded` or `postgres`. */
  store: string;
}

/** `GET /api/v1/entropy`: the latest resolved epoch's output (interface 2.3). */
export interface Entropy {
  /** y of the epoch, hex. */
  entropy: string;
  /** SHA-256 of those bytes, hex. */
  entropy_hash: string;
  /** `vdf_epoch`. */
  source: string;
  epoch: number;
  /** Unix seconds. */
  timestamp: number;
  /** `VEO-<class>`. */
  veo_class: string;
  /** The verify endpoint of the epoch's last game; null when it had none. */
  verify_url: string | null;
  iterations: number | null;
  modulus: string;
}

/** A game of the catalog (interface 2.4). */
export interface CatalogEntry {
  type: string;
  name: string;
  description: string;
  bet_types: string[];
  house_edge: string;
  endpoint: string;
}

/** `GET /api/v1/games`. */
export interface Catalog {
  games: CatalogEntry[];
  raw_rng: { description: string; endpoint: string };
  /** The rules document. */
  rules: string;
}

// ---------------------------------------------------------------------------------------------
// Bets and games
// ---------------------------------------------------------------------------------------------

/** 202 to a bet: durable, resolved when epoch `resolves_at_epoch` resolves (interface 2.6). */
export interface BetAccepted {
  accepted: true;
  bet_id: string;
  game_id: string;
  resolves_at_epoch: number;
  message: string;
  /** `/api/v1/games/{game_id}`. */
  poll_url: string;
  /** Present (false) when the bet asked for the pool and took the epoch path. */
  pool_served?: false;
  acceptance: Acceptance;
}

/** 202 to a raw RNG request (interface 2.12). */
export interface RngAccepted {
  accepted: true;
  request_id: string;
  game_id: string;
  resolves_at_epoch: number;
  poll_url: string;
  message: string;
  acceptance: Acceptance;
}

/** The dice of a game (die3 for Sic Bo only; no dice for a raw RNG request). */
export interface Outcome {
  die1?: number;
  die2?: number;
  die3?: number;
  total: number;
}

/** The result of an instant bet. */
export interface InstantResult {
  outcome: Outcome;
  won: boolean | null;
  /** Decimal string with two fraction digits. */
  payout: string | null;
  /** HMAC-SHA256, hex. */
  rngValue: string;
  bet_type: string | null;
  amount: string | null;
}

/** 200 to a bet served at once from the precomputed pool (interface 2.7). */
export interface InstantBet {
  status: "resolved";
  game_id: string;
  bet_id: string;
  pool_served: true;
  pool_index: number | null;
  result: InstantResult;
  verify_url: string;
  verify_page: string;
  acceptance: Acceptance | null;
}

/** What a bet answers: `pool_served` tells the two apart. */
export type BetPlaced = BetAccepted | InstantBet;

/** 202 while a game's epoch has not resolved. */
export interface GamePending {
  status: "pending";
  game_id: string;
  resolves_at_epoch: number | null;
  message: string;
}

/** The committed fields of a game (`proof.bet`). */
export interface BetDoc {
  game_id: string;
  /** `dice`, `sicbo` or `rng`. */
  game: string;
  bet_type: string | null;
  target: number | null;
  combo: [number, number] | null;
  amount: string | null;
  player_id: string;
  player_seed: string | null;
  operator_key: string;
}

/** The members every proof has (interface 2.9). */
export interface ProofCommon {
  /** The epoch the game derives from (a pool game's anchor epoch). */
  vdfEpoch: number;
  rngValue: string;
  /** rngValue's formula in words. */
  derivation: string;
  veo_class: string;
  modulus: string;
  iterations: number;
  x: string;
  y: string;
  pi: string;
  l: string;
  leaf: string;
  leaf_index: number | null;
  audit_path: string[];
  bet: BetDoc;
  bet_created_at_ms: number;
  /** Null for a game accepted before protocol version 2. */
  acceptance?: Acceptance | null;
  /** `0x` hash of the anchor transaction; null until confirmed. */
  anchorTx?: string | null;
  /** @deprecated The same value as `anchorTx`; use that. */
  legacyTx?: string | null;
  anchorChain?: string;
  anchorChainId?: number;
  anchor_status?: string;
  anchor?: Anchor;
}

/** One checkpoint of the VDF evaluation: x^(2^iteration). */
export interface Checkpoint {
  iteration: number;
  value: string;
}

/** The proof of an epoch game (docs/PROTOCOL.md §13). */
export interface EpochProof extends ProofCommon {
  modulus_n?: string;
  /** Class groups: D_e as chiavdf writes it ("-0x…"). */
  discriminant?: string | null;
  discriminant_bits?: number;
  epoch_seed: string;
  previous_output: string;
  bets_root: string;
  bet_count: number;
  leaf_hash: string;
  checkpoints: Checkpoint[];
  timing: Timing;
}

/** The proof of a pool-served game (docs/PROTOCOL.md §14). */
export interface PoolProof extends ProofCommon {
  pool_served: true;
  pool_index: number;
  pool_batch: number;
  modulus_n: string;
  leaf_index: number;
  secret: string;
  entry_seed: string;
  batch_seed: string;
  batch_root: string;
  batch_first_index: number;
  batch_size: number;
  previous_batch_root: string;
  anchor_epoch: number;
  anchor_y: string;
  batch_committed_at_ms: number;
  entry_leaf: string;
  entry_leaf_hash: string;
  bet_epoch?: BetEpoch | null;
}

/** Everything needed to redo a game's checks offline: `"pool_served" in proof` tells them apart. */
export type GameProof = EpochProof | PoolProof;

/** The members of every game's result. */
export interface GameResultCommon {
  game_id: string;
  /** The epoch that resolved it; null for a pool-served game. */
  epoch: number | null;
  rngValue: string;
  /** The output the game derives from, hex. */
  entropy: string | null;
  /** Unix seconds. */
  resolved_at: number | null;
  verify_url: string;
  verify_page: string;
  /** SHA-256 of the result: the payload hash of a `vrs-game-result` notarization. */
  result_hash: string;
  pool_served?: true;
  pool_index?: number;
  /** The server's verdict (recompute it with `verify`). */
  verified: boolean;
  proof: GameProof;
}

/** The result of a dice or Sic Bo bet. */
export interface BetResult extends GameResultCommon {
  game: BetGame;
  bet_id: string;
  bet_type: string | null;
  target: number | null;
  combo: [number, number] | null;
  amount: string | null;
  player_id: string;
  player_seed: string | null;
  operator_key: string;
  outcome: Outcome;
  won: boolean | null;
  payout: string | null;
  /** The payout rule applied, in words. */
  rule?: string;
}

/** The result of a raw RNG request. */
export interface RngResult extends GameResultCommon {
  game: "rng";
  request_id: string;
  client_seed: string | null;
  /** The value (same as rngValue). */
  random: string;
}

/** A resolved game's result: `game` tells them apart. */
export type GameResult = BetResult | RngResult;

/** 200 of `GET /api/v1/games/{id}`. */
export interface ResolvedGame {
  status: "resolved";
  game_id: string;
  result: GameResult;
  replay: ReplayStep[];
}

/** A game as `game()` reads it: `status` tells them apart. */
export type Game = ResolvedGame | GamePending;

/** 200 of `GET /api/v1/verify/{id}` (interface 2.9): the server's checks and the proof data. */
export interface GameVerification {
  game_id: string;
  /** The server's verdict: true only when every check passed. */
  verified: boolean;
  checks: Check[];
  proof: GameProof;
  replay_steps: ReplayStep[];
}

// ---------------------------------------------------------------------------------------------
// Audit records and statistics
// ---------------------------------------------------------------------------------------------

/** `GET /api/v1/epochs/{n}`: an epoch's public record. */
export interface EpochRecord {
  epoch: number;
  status: "open" | "closed" | "resolved";
  modulus: string;
  veo_class: string;
  opened_at_ms: number;
  closed_at_ms: number | null;
  iterations: number | null;
  /** 1 (no timing commitment) or 2. */
  version: number;
  previous_epoch: number;
  previous_output: string | null;
  security_margin: number | null;
  squarings_per_second: number | null;
  deadline_ms: number | null;
  nonce: string | null;
  bets_root: string | null;
  bet_count: number | null;
  x: string | null;
  y: string | null;
  pi: string | null;
  l: string | null;
  resolved_at_ms: number | null;
  /** The epoch's leaf hashes in order (only the asked range with leafFrom/leafLimit). */
  leaf_hashes: string[];
  /** Present when a range was asked for: the index of the first hash. */
  leaf_from?: number;
  anchor: Anchor;
}

/** A served entry of a pool batch. */
export interface ServedEntry {
  index: number;
  game_id: string;
  served_at_ms: number | null;
  verify_url: string;
}

/** `GET /api/v1/pool/batches/{n}`: a committed pool batch (docs/PROTOCOL.md §14). */
export interface PoolBatch {
  number: number;
  root: string;
  previous_root: string;
  first_index: number;
  size: number;
  anchor_epoch: number;
  seed: string;
  committed_at: number;
  committed_at_ms: number;
  /** Every entry's leaf hash, in index order. */
  leaf_hashes: string[];
  served: ServedEntry[];
  unserved: number;
}

/** A pool batch as stats summarises it. */
export interface PoolBatchSummary {
  number: number;
  root: string;
  first_index: number;
  size: number;
  previous_root: string;
  anchor_epoch: number;
  seed: string;
  committed_at: number;
  committed_at_ms: number;
  /** The batch's record. */
  url: string;
}

/** An anchor batch as stats summarises it. */
export interface AnchorBatchSummary {
  number: number;
  status: "pending" | "submitted" | "confirmed";
  epochs: EpochSpan;
  pool_batches: BatchSpan;
  notary_batches: BatchSpan;
  leaves: number;
  root: string;
  created_at: number;
  tx: string | null;
  block: number | null;
  confirmed_at: number | null;
}

/** `GET /api/v1/stats` (interface 2.10). */
export interface Stats {
  epoch: {
    current: number;
    /** Unix seconds. */
    open_since: number;
    computing: number | null;
    /** Fraction of the running VDF done, 0 to 1. */
    progress: number | null;
    last_resolved: number | null;
    iterations: number;
    modulus: string;
    target_ms: number;
    last_computation_ms: number;
    security: Security;
  };
  total_games: number;
  resolved_games: number;
  pending_games: number;
  /** Games per type (dice, sicbo, rng). */
  games_by_type: Record<string, number>;
  performance: {
    squarings_per_second: number;
    epochs_resolved_since_start: number;
    uptime: number;
  };
  /** The instant-bet pool. */
  pool: {
    /** Committed entries not served yet. */
    depth: number;
    served: number;
    generated: number;
    generated_since_start: number;
    generated_per_second: number;
    backend: string | null;
    threads: number;
    iterations: number;
    batch_size: number;
    low_water: number;
    target_depth: number;
    refill_rate: number;
    instant_default: boolean;
    generating: boolean;
    last_batch: PoolBatchSummary | null;
  };
  anchoring: {
    enabled: boolean;
    /** disabled, standby, starting, active, retrying or refused. */
    state: string;
    message: string | null;
    chain: string;
    chain_id: number;
    every_epochs: number;
    confirmations: number;
    address: string | null;
    to: string | null;
    batches: { pending: number; submitted: number; confirmed: number };
    pending_batches: number;
    unbatched_epochs: number;
    anchored_through_epoch: number | null;
    last_batch: AnchorBatchSummary | null;
    last_anchor: AnchorBatchSummary | null;
    last_error: string | null;
    last_error_at: number | null;
    consecutive_failures: number;
  };
  store: string;
  role: string;
  engine_error: string | null;
}

/** A game of `GET /api/v1/recent` (interface 2.11). */
export interface RecentGame {
  game_id: string;
  /** `dice`, `sicbo` or `rng`. */
  game: string;
  bet_type: string | null;
  amount: string | null;
  player_id: string;
  status: "resolved" | "pending";
  epoch: number | null;
  dice: number[] | null;
  won: boolean | null;
  payout: string | null;
  /** Unix seconds. */
  created_at: number;
  verify_url: string;
  verify_page: string;
}

// ---------------------------------------------------------------------------------------------
// Notary answers
// ---------------------------------------------------------------------------------------------

/** How a receipt was paid. */
export interface ReceiptPayment {
  /** `api_key` or `x402`. */
  method: string;
  /** x402: the payer's address. */
  payer?: string;
  /** x402: the settlement transaction (null until settled). */
  transaction?: string | null;
}

/** A notary receipt: the 202 of `notarize` (docs/PROTOCOL.md §17). */
export interface Receipt {
  receipt_id: string;
  /** pending (not in a batch yet), sealed or anchored. */
  status: "pending" | "sealed" | "anchored";
  schema: string;
  /** The canonical spelling (`0x` for keccak256, else 64 lowercase hex digits). */
  payload_hash: string;
  /** The client's metadata, as given. */
  metadata: JsonObject;
  leaf_hash: string;
  /** Unix seconds. */
  submitted_at: number;
  submitted_at_ms: number;
  receipt_url: string;
  payment: ReceiptPayment;
  /** The 202: what happens next, in words. */
  message?: string;
}

/** A receipt's Merkle proof to its notary batch's root. */
export interface ReceiptProof {
  batch: number;
  leaf_index: number;
  tree_size: number;
  leaf_hash: string;
  audit_path: string[];
  root: string;
  /** Unix seconds. */
  sealed_at: number;
}

/** The anchor of a receipt whose batch is in no anchor batch yet. */
export interface ReceiptAnchorPending {
  status: "pending";
  enabled: boolean;
  chain: string;
  chain_id: number;
  message: string;
}

/** `GET /v1/notarize/{id}`: the receipt with its proof, anchor and checks. */
export interface ReceiptView extends Receipt {
  /** Null before its batch is sealed. */
  proof: ReceiptProof | null;
  anchor: AnchorIncluded | ReceiptAnchorPending | null;
  verification: {
    verified: boolean;
    /** Unix seconds. */
    computed_at: number;
    checks: Check[];
  };
}

/** A schema of the notary. */
export interface NotarySchema {
  id: string;
  description: string;
  payload_hash: {
    type: string;
    encoding: string;
    length_bytes: number;
    pattern: string;
    canonical: string;
    example: string;
  };
  metadata: {
    type: string;
    required: boolean;
    default: Record<string, string>;
    max_bytes: number;
    max_depth: number;
    measured_as: string;
    required_members?: Record<string, string>;
  };
}

/** `GET /v1/notarize/schemas`. */
export interface NotarySchemas {
  schemas: NotarySchema[];
}

/** The x402 price of one receipt. */
export interface NotaryPrice {
  amount: string;
  decimals: number;
  display: string;
  asset: string;
  asset_name: string;
  network: string;
  network_v1: string;
  pay_to: string;
}

/** `GET /v1/notarize/status`. */
export interface NotaryStatus {
  service: string;
  status: string;
  receipts: number;
  pending: number;
  batch_interval_ms: number;
  last_batch: { number: number; size: number; root: string; sealed_at: number } | null;
  anchoring: {
    enabled: boolean;
    state: string;
    chain: string;
    chain_id: number;
    anchored_through_batch: number | null;
  };
  /** Null when only API keys are taken. */
  price: NotaryPrice | null;
  /** `api_key`, and `x402` when payments are configured. */
  payment_methods: string[];
  x402: {
    versions: number[];
    scheme: string;
    settlement: string;
    headers: {
      v2: { required: string; payment: string; response: string };
      v1: { payment: string; response: string };
    };
  } | null;
  api_keys: { header: string; issued_by: string };
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Base class of every error the client throws (bad arguments are TypeError or RangeError). */
export declare class VrsError extends Error {}

/** Where an ApiError came from. */
export interface ApiErrorInit {
  method: string;
  url: string;
  /** Seconds, from `Retry-After` (or the body's `retry_after`). */
  retryAfter?: number | null;
}

/** The server answered with a status the call does not take as an answer. */
export declare class ApiError extends VrsError {
  constructor(status: number, body: unknown, init: ApiErrorInit);
  /** The HTTP status. */
  readonly status: number;
  /** The JSON body, as the server sent it. */
  readonly body: unknown;
  readonly method: string;
  readonly url: string;
  /** The server's own words: the body's `error`, else the body itself. */
  readonly serverMessage: string;
  /** Seconds to wait before retrying, when the server said (`Retry-After`); else null. */
  readonly retryAfter: number | null;
  /** The body member or header the server blames (the notary's `field`), or null. */
  get field(): string | null;
}

/** 400, 413 or 422: refused as invalid (also an Idempotency-Key reused with another body). */
export declare class BadRequest extends ApiError {
  /** For a refused bet: the game's bet types (empty otherwise). */
  get validBetTypes(): string[];
  /** For a refused bet: a valid request body of that game, or null. */
  get example(): JsonObject | null;
}

/** 404: no such game, epoch, batch, receipt or endpoint. */
export declare class NotFound extends ApiError {}

/** 401, 402 or 403: the notary wants a valid API key or a payment. */
export declare class PaymentRequired extends ApiError {}

/** 409: a request with this Idempotency-Key is still being processed; retry shortly. */
export declare class Conflict extends ApiError {}

/** 429: too many writes from this client; `retryAfter` says when to try again. */
export declare class RateLimited extends ApiError {}

/** 5xx: the server failed or is unavailable; the request may be retried. */
export declare class ServerError extends ApiError {}

/** The server could not be reached, or its answer was not a JSON object. */
export declare class NetworkError extends VrsError {
  constructor(message: string, init?: { method?: string; url?: string; status?: number | null; cause?: unknown });
  readonly method: string | undefined;
  readonly url: string | undefined;
  /** The status of an answer that was not JSON; null when there was no answer. */
  readonly status: number | null;
}

/** A request got no answer within its timeout, or `wait`/`verify` ran past its deadline. */
export declare class TimeoutError extends VrsError {
  constructor(
    message: string,
    init: { timeoutMs: number; method?: string | null; url?: string | null; gameId?: string | null },
  );
  readonly timeoutMs: number;
  /** The request that timed out (null for a wait). */
  readonly method: string | null;
  readonly url: string | null;
  /** The game waited for (null for a single request). */
  readonly gameId: string | null;
}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/**
 * A client of one vrs service: every endpoint of the randomness and games API and of the
 * notary. Stateless apart from its settings, so one instance may be shared.
 *
 * Every method validates its arguments first (TypeError for a wrong type, RangeError for a
 * value out of range, nothing sent), then resolves with the server's answer, or rejects with an
 * `ApiError` subclass (by status), `NetworkError` or `TimeoutError`. Nothing is retried.
 */
export declare class VrsClient {
  /**
   * @param baseUrl The service, e.g. `http://127.0.0.1:8080` (a trailing slash is dropped; `""`
   *   is the page's own origin in a browser).
   */
  constructor(baseUrl: string, options?: VrsClientOptions);
  /** The service's base URL, without a trailing slash. */
  readonly baseUrl: string;
  /** Where the notary is served (`notaryUrl`, or `baseUrl`). */
  readonly notaryUrl: string;

  /** `GET /`: version, acceptance keys, the VDF engine and anchoring. */
  info(options?: RequestOptions): Promise<ServiceInfo>;
  /** `GET /health` (a 503 is an answer too: the body says what is wrong). */
  health(options?: RequestOptions): Promise<Health>;
  /** `GET /api/v1/entropy`: the latest resolved epoch's output; null while none has resolved (202). */
  entropy(options?: RequestOptions): Promise<Entropy | null>;
  /** `GET /api/v1/games`: the games, their bet types and house edges. */
  catalog(options?: RequestOptions): Promise<Catalog>;

  /**
   * `POST /api/v1/games/{game}/bet`: a `BetAccepted` (202, resolved by a coming epoch), or an
   * `InstantBet` (200, served from the pool) when the request (or the operator's default) asks
   * for one and the pool has an entry. `BadRequest` (with `validBetTypes` and `example`) when
   * the server refuses the body.
   */
  bet<G extends BetGame>(game: G, request: BetRequest<G> & { instant: false }, options?: RequestOptions): Promise<BetAccepted>;
  bet<G extends BetGame>(game: G, request: BetRequest<G>, options?: RequestOptions): Promise<BetPlaced>;
  /** `bet("dice", request)`. */
  dice(request: DiceBetRequest & { instant: false }, options?: RequestOptions): Promise<BetAccepted>;
  dice(request: DiceBetRequest, options?: RequestOptions): Promise<BetPlaced>;
  /** `bet("sicbo", request)`. */
  sicbo(request: SicboBetRequest & { instant: false }, options?: RequestOptions): Promise<BetAccepted>;
  sicbo(request: SicboBetRequest, options?: RequestOptions): Promise<BetPlaced>;
  /** `POST /api/v1/rng/generate`: a raw random value, resolved by a coming epoch. */
  rng(clientSeed?: string | null, options?: RequestOptions): Promise<RngAccepted>;

  /** `GET /api/v1/games/{id}`: the result (200), or the pending state (202). */
  game(gameId: string, options?: RequestOptions): Promise<Game>;
  /** Polls `game` until the game is resolved; `TimeoutError` past `timeoutMs`. */
  wait(gameId: string, options?: WaitOptions): Promise<ResolvedGame>;
  /** `GET /api/v1/verify/{id}`: the server's checks and the proof data; null while pending (202). */
  verification(gameId: string, options?: RequestOptions): Promise<GameVerification | null>;
  /**
   * Verifies a game here, without trusting the server: every check of docs/PROTOCOL.md §13
   * (epoch games) or §14 (pool-served games) recomputed by the package's verifier from the
   * published data, in the group `options.group` (rsa2048 by default). A pending game is
   * waited for (as `wait` does); `report.verified` is the verdict. `NotFound` for an unknown
   * game, `TimeoutError` for one still pending past `timeoutMs`.
   */
  verify(gameId: string, options?: VerifyOptions): Promise<VerifyReport>;

  /** `GET /api/v1/stats`: game counts, the epoch, the pool, anchoring and performance. */
  stats(options?: RequestOptions): Promise<Stats>;
  /** `GET /api/v1/recent`: the 20 most recent games, newest first. */
  recent(options?: RequestOptions): Promise<RecentGame[]>;
  /** `GET /api/v1/epochs/{n}`: an epoch's record (from 1). */
  epoch(number: number, options?: EpochOptions): Promise<EpochRecord>;
  /** `GET /api/v1/pool/batches/{n}`: a committed pool batch (from 1). */
  poolBatch(number: number, options?: RequestOptions): Promise<PoolBatch>;

  /**
   * `POST /v1/notarize` with the API key (the request's, else the client's) and the
   * Idempotency-Key when given. Without a key, `PaymentRequired`.
   */
  notarize(request: NotarizeRequest, options?: RequestOptions): Promise<Receipt>;
  /** `GET /v1/notarize/{id}`: the receipt, its Merkle proof, its anchor and the checks. */
  receipt(receiptId: string, options?: RequestOptions): Promise<ReceiptView>;
  /** `GET /v1/notarize/schemas`. */
  notarySchemas(options?: RequestOptions): Promise<NotarySchemas>;
  /** `GET /v1/notarize/status`: counts, batches, price and payment methods. */
  notaryStatus(options?: RequestOptions): Promise<NotaryStatus>;
}
