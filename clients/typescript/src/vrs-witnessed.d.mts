// Type declarations of vrs-witnessed.mjs: the `witnessed` step (docs/PROTOCOL.md §21). An
// epoch's plan and commitment are entries of the operator's log, in C2SP checkpoints that a
// quorum of the verifier's own witnesses cosigned in time. Integers of 64 bits are bigint.
//
// A wrong value throws (or rejects with) vrs-verify.mjs's CheckFailed; a policy that does not
// parse, or an option out of range, is the caller's RangeError.

/** Signature type of the log's Ed25519 note key. */
export declare const ALG_ED25519: 1;
/** Signature type of a witness's cosignature/v1. */
export declare const ALG_COSIGNATURE_V1: 4;
/** δ unless told otherwise, in ms. */
export declare const DEFAULT_DELTA_MS: 2000;

/** S unless told otherwise: 1000000n for `classgroup-…`, else 9000000n (RSA groups). */
export declare function defaultMaxRate(group: string | null | undefined): bigint;
/** S as a bigint: a whole number ≥ 1 (a safe integer or a bigint below 2^64); else RangeError. */
export declare function parseMaxRate(r: unknown): bigint;
/** δ as a bigint: a whole number of ms ≥ 0; else RangeError. */
export declare function parseDeltaMs(d: unknown): bigint;

/** Standard base64 to bytes, strictly (padding required, no whitespace, unused bits zero);
 *  throws CheckFailed naming `what`. */
export declare function base64ToBytes(text: unknown, what?: string): Uint8Array;

/** One entry as it travels: its index, its bytes in hex, the signed note of a checkpoint that
 *  includes it (with the cosignature lines collected) and its RFC 6962 audit path (base64
 *  hashes, the sibling nearest the leaf first). */
export interface LoggedEntry {
  index: number;
  entry: string;
  checkpoint: string;
  proof: string[];
}

/** An epoch's entries as a verification serves them (`proof.log`): each with every checkpoint
 *  the operator holds cosigned for it. */
export interface LogEvidence {
  origin: string;
  plan: LoggedEntry[];
  commitment: LoggedEntry[];
  /** p(e)'s output entry (empty for p = 0, and before it is logged). */
  previous_output?: LoggedEntry[];
  /** A moved game's moves (PROTOCOL.md §21, "Moved games"): one list per move entry, from the
   *  epoch the game was accepted into on, in order; absent or empty for an ordinary game. */
  moves?: LoggedEntry[][];
}

export interface OperatorEntry {
  kind: "operator";
  stamped_ms: bigint;
  group: string;
  acceptance_key: Uint8Array;
  anchor_chain_id: bigint;
  anchor_address: Uint8Array;
}
export interface PlanEntry {
  kind: "plan";
  epoch: bigint;
  previous: bigint;
  iterations: bigint;
  margin_centi: number;
  squarings_per_second: bigint;
  opened_ms: bigint;
  deadline_ms: bigint;
}
export interface CommitmentEntry {
  kind: "commitment";
  epoch: bigint;
  previous: bigint;
  bets_root: Uint8Array;
  bet_count: bigint;
  nonce: Uint8Array;
  iterations: bigint;
  margin_centi: number;
  squarings_per_second: bigint;
  opened_ms: bigint;
  closed_ms: bigint;
}
export interface VoidEntry {
  kind: "void";
  epoch: bigint;
  stamped_ms: bigint;
}
/** An output entry: SHA-256 of y_e as stored (one per epoch, in epoch order). */
export interface OutputEntry {
  kind: "output";
  epoch: bigint;
  output_hash: Uint8Array;
}

export interface PoolBatchEntry {
  kind: "pool-batch";
  batch: bigint;
  first_index: bigint;
  size: bigint;
  prev_root: Uint8Array;
  anchor_epoch: bigint;
  seed: Uint8Array;
  root: Uint8Array;
  committed_ms: bigint;
}
export interface AnchorEntry {
  kind: "anchor";
  batch: bigint;
  first_epoch: bigint;
  last_epoch: bigint;
  pool_from: bigint;
  pool_to: bigint;
  notary_from: bigint;
  notary_to: bigint;
  root: Uint8Array;
}
/** The games of void epoch `epoch` (its bets tree) take their outcome from epoch `to`. */
export interface MoveEntry {
  kind: "move";
  epoch: bigint;
  to: bigint;
  bets_root: Uint8Array;
  bet_count: bigint;
}

/** The anchor batch a proof's `anchor` claims (section 16): its number, ranges and root. */
export interface AnchorClaim {
  batch: number | bigint;
  first_epoch: number | bigint;
  last_epoch: number | bigint;
  pool_from: number | bigint;
  pool_to: number | bigint;
  notary_from: number | bigint;
  notary_to: number | bigint;
  root: Uint8Array;
}

/** An anchor entry or claim in words, as the Rust verifier's details give it. */
export declare function describeAnchor(e: AnchorEntry | AnchorClaim): string;
/** One entry of the log (§21 "Entries"). */
export type LogEntry =
  | OperatorEntry
  | PlanEntry
  | CommitmentEntry
  | VoidEntry
  | OutputEntry
  | PoolBatchEntry
  | AnchorEntry
  | MoveEntry;

/** Decodes an entry strictly: an unknown tag, or bytes missing or left over, throws
 *  CheckFailed ("not a log entry: …"). */
export declare function decodeLogEntry(bytes: Uint8Array): LogEntry;

/** A parsed verifier key. */
export interface VKey {
  name: string;
  /** The key ID, SHA-256(name ‖ 0x0A ‖ alg ‖ key)[:4] big-endian. */
  id: number;
  alg: 1 | 4;
  publicKey: Uint8Array;
  /** The vkey as written. */
  text: string;
}

/** SHA-256(name ‖ 0x0A ‖ alg ‖ publicKey)[:4], big-endian. */
export declare function keyId(name: string, alg: number, publicKey: Uint8Array): Promise<number>;
/** Parses `name+<8 hex key ID>+base64(alg ‖ key)` (alg 0x01 or 0x04) and checks its key ID;
 *  rejects with CheckFailed. */
export declare function parseVKey(text: string): Promise<VKey>;

/** A signature line of a note. */
export interface NoteSignature {
  name: string;
  id: number;
  /** The signature bytes after the key ID. */
  sig: Uint8Array;
}

/** A signed note holding a checkpoint, parsed (nothing verified). */
export interface ParsedCheckpoint {
  /** The signed text: up to and including the newline before the blank line. */
  text: string;
  origin: string;
  size: bigint;
  root: Uint8Array;
  signatures: NoteSignature[];
}

/** Parses a signed checkpoint note (C2SP signed-note and tlog-checkpoint); throws CheckFailed
 *  ("malformed checkpoint: …"). */
export declare function parseCheckpointNote(note: string): ParsedCheckpoint;

/** "cosignature/v1\ntime " ‖ decimal(t) ‖ "\n" ‖ checkpoint text: what a witness signs. */
export declare function cosignedMessage(checkpointText: string | Uint8Array, t: number | bigint): Uint8Array;

/** A cosignature that verified: the witness key's name and ID, and its Unix second. */
export interface Cosignature {
  name: string;
  id: number;
  time: bigint;
}

/** A checkpoint whose log signature verified, with the known witnesses' cosignatures. */
export interface VerifiedCheckpoint {
  origin: string;
  size: bigint;
  root: Uint8Array;
  text: string;
  cosignatures: Cosignature[];
}

/** Verifies a signed checkpoint against the log's key and the witness keys: the log's signature
 *  must verify, every line of a known witness too (one that fails rejects the note), unknown
 *  lines are ignored. Rejects with CheckFailed. */
export declare function verifyCheckpoint(note: string, logKey: VKey, witnessKeys?: readonly VKey[]): Promise<VerifiedCheckpoint>;

/** A group of a policy, or a witness by its policy name. */
export type PolicyRule = { witness: VKey } | { k: number; members: string[] };

/** A parsed C2SP tlog-policy. */
export interface Policy {
  logs: { key: VKey; url: string | null }[];
  witnesses: { name: string; key: VKey; url: string | null }[];
  rules: Map<string, PolicyRule>;
  /** The quorum's name; null for `quorum none`. */
  quorum: string | null;
}

/** Parses a C2SP tlog-policy (names refer only to lines above, exactly one quorum line, no key
 *  twice); rejects with RangeError ("policy line N: …"). */
export declare function parsePolicy(text: string): Promise<Policy>;
/** Whether witnesses with these policy names satisfy the quorum. */
export declare function quorumSatisfied(policy: Policy, names: Iterable<string>): boolean;
/** The quorum in words: `2 of (W0, W1, W2)`. */
export declare function describeQuorum(policy: Policy): string;
/** The most witnesses disjointQuorums searches. */
export declare const MAX_SPLIT_CHECKED: number;
/** Two disjoint sets of witness names that each satisfy the quorum, or null. */
export declare function disjointQuorums(policy: Policy): [string[], string[]] | null;
/** The notes a verifier with this policy adds to its report (a quorum two disjoint sets meet). */
export declare function policyNotes(policy: Policy): string[];

/** An entry proven in a cosigned checkpoint. */
export interface ProvenEntry {
  entry: LogEntry;
  index: number;
  size: bigint;
  cosignatures: Cosignature[];
}

/** Proves one LoggedEntry under the policy (checkpoint, cosignatures, audit path, decoding);
 *  rejects with CheckFailed. */
export declare function proveEntry(logged: LoggedEntry, policy: Policy): Promise<ProvenEntry>;

/** `anchor.log` of a proof (section 16, "Binding"). */
export interface AnchorLog {
  /** The batch's anchor entry as the last leaf of the log of size index + 1. */
  bound: LoggedEntry;
  /** The same entry in the checkpoints witnesses cosigned; empty without witnesses. */
  cosigned?: LoggedEntry[];
}

/** What anchorBound takes from `anchor.log`. */
export interface AnchorBound {
  entry: AnchorEntry;
  index: number;
  /** The bound log's size (index + 1). */
  size: bigint;
  root: Uint8Array;
  /** Policy names of the witnesses that cosigned the entry ([] without a policy). */
  cosignedBy: string[];
}

/** Checks `anchor.log`: the bound entry (signature-checked under `policy`; with null, only its
 *  inclusion) and, under a policy, its cosigning by the quorum; rejects with CheckFailed. */
export declare function anchorBound(log: AnchorLog, policy: Policy | null): Promise<AnchorBound>;

/** The calldata the anchor batch `claim` must carry (`0x` hex: with `log`, whose entry must be
 *  the claim, version 2, or version 1 when `shownV1`; without it version 1, which a policy
 *  refuses) and what binds it, in the Rust verifier's words; rejects with CheckFailed. */
export declare function expectedAnchorCalldata(
  claim: AnchorClaim,
  shownV1: boolean,
  log: AnchorLog | null | undefined,
  policy: Policy | null,
): Promise<{ calldata: string; detail: string }>;

/** The record a verifier was shown, as decimal and lowercase-hex strings (shownOfProof). */
export interface ShownEpoch {
  epoch: string;
  previous_epoch: string;
  bets_root: string;
  bet_count: string;
  nonce: string;
  iterations: string;
  margin_centi: string;
  squarings_per_second: string;
  opened_at_ms: string;
  closed_at_ms: string;
  deadline_ms: string;
  /** The proof's previous_output (y_p), lowercase hex. */
  previous_output: string;
}

/** The record shown by a proof (vdfEpoch, bets_root, bet_count, iterations and its timing), to
 *  compare with the logged one; throws CheckFailed for a missing or malformed member. */
export declare function shownOfProof(proof: unknown): ShownEpoch;

/** The options of checkWitnessed. */
export interface WitnessedOptions {
  /** S, squarings per second (required). */
  maxRate: number | bigint;
  /** δ in ms (default 2000). */
  deltaMs?: number | bigint | null | undefined;
  /** The LoggedEntry list of p's output entry (the proof log's `previous_output`): required
   *  for p ≥ 1, empty or absent for p = 0. */
  previousOutput?: readonly LoggedEntry[] | null | undefined;
  /** The record judged (rule 3): the logged entries must equal it. */
  shown?: ShownEpoch | null | undefined;
}

/** The `witnessed` step over an epoch's plan and commitment lists, under a policy (parsed, or
 *  its text). Resolves with a detail string, or rejects with CheckFailed. */
export declare function checkWitnessed(
  planList: readonly LoggedEntry[],
  commitmentList: readonly LoggedEntry[],
  policy: Policy | string,
  options: WitnessedOptions,
): Promise<string>;

/** The proof members the `moved` step reads. */
export interface MovedProof {
  /** The epoch the game was accepted into. */
  moved_from?: number | null;
  /** The last destination D. */
  vdfEpoch?: number;
  /** `moves` and D's `commitment`. */
  log?: Pick<LogEvidence, "moves" | "commitment"> | null;
}

/** The first move entry of a moved game's proof, decoded from the bytes of `log.moves[0]`'s
 *  first LoggedEntry (not proven): the tree its leaf is in. Throws CheckFailed when there is no
 *  move, or that entry is not a move entry. */
export declare function firstMove(proof: MovedProof | null | undefined): MoveEntry;

/** The `moved` step (PROTOCOL.md §21, "Moved games"): the chain of move entries from
 *  `moved_from` to `vdfEpoch`, each logged before the next and the last before D's commitment;
 *  under a policy (parsed, or its text) each LoggedEntry proven and each move cosigned by the
 *  quorum; with null only the entries' bytes are read. Resolves with a detail string, or
 *  rejects with CheckFailed. */
export declare function checkMoved(proof: MovedProof | null | undefined, policy?: Policy | string | null): Promise<string>;
