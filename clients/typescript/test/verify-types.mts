// Compile-only checks of the verifier's declarations (src/vrs-verify.d.mts,
// src/vrs-classgroup.d.mts): `tsc -p tsconfig.json` type-checks this file, nothing runs it.
// Each `@ts-expect-error` line is a wrong use the declarations must refuse: should one start to
// compile, tsc fails with "Unused '@ts-expect-error' directive". Nothing here calls the
// verifier at load time (the functions are never called), so a test runner that picks up .mts
// files (Node with type stripping) loads it harmlessly.

import {
  ACCEPTANCE_KIND,
  CheckFailed,
  DEFAULT_GROUP,
  MODULI,
  VerifyError,
  bytesToHex,
  claimsOf,
  extractGameId,
  fetchVerification,
  isClassGroupId,
  isMovedGame,
  modulusFromId,
  rollDice,
  settle,
  verifyGame,
  verifyWesolowski,
  type Anchor,
  type FetchLike,
  type Proof,
  type Settlement,
  type Step,
  type StepName,
  type Verification,
  type VerifyErrorKind,
  type VerifyGameOptions,
  type VerifyReport,
} from "../src/vrs-verify.mjs";
import { ClassGroupError, Discriminant, FORM_SIZE, createDiscriminant, type Form } from "../src/vrs-classgroup.mjs";
import {
  checkMoved,
  checkWitnessed,
  decodeLogEntry,
  firstMove,
  defaultMaxRate,
  parsePolicy,
  shownOfProof,
  type LogEvidence,
  type LoggedEntry,
  type Policy,
} from "../src/vrs-witnessed.mjs";

/** Fails to compile unless A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(ok: Equal<A, B>): void => void ok;

// --- verifyGame: its callback, its options and its report ---------------------------------------

const fakeFetch: FetchLike = async (url, init) => ({
  status: url.endsWith("/") && init.cache === "no-store" ? 404 : 200,
  text: async () => "{}",
});

const proof: Proof = {
  modulus: "test512",
  iterations: 300,
  x: "00",
  y: "00",
  pi: "00",
  l: "00",
  leaf: "00",
  leaf_index: 0,
  audit_path: [],
  bet: {
    game_id: "fedcba9876543210fedcba9876543210",
    game: "dice",
    bet_type: "over7",
    target: null,
    combo: null,
    amount: "1.00",
    player_id: "p",
    player_seed: "s",
    operator_key: "k",
  },
  vdfEpoch: 5,
  rngValue: "00",
  timing: { version: 2, previous_epoch: 3, nonce: "5a".repeat(32), security_margin: 1.5 },
  checkpoints: [], // a member the verifier does not read: allowed
};
const body: Verification = { proof, verified: true, replay_steps: [{ action: "dice_rolled", dice: [3, 4] }] };

const options: VerifyGameOptions = { group: "test512", fetch: fakeFetch, body };
const anyGroup: VerifyGameOptions = { group: null, fetch: globalThis.fetch };
// @ts-expect-error: the group is a group id or null, not a number
const badGroup: VerifyGameOptions = { group: 512 };
// @ts-expect-error: an unknown option
const badOption: VerifyGameOptions = { grup: "rsa2048" };

async function useVerifyGame(): Promise<void> {
  const seen: StepName[] = [];
  const report: VerifyReport = await verifyGame("", "fedcba9876543210fedcba9876543210", (step) => {
    seen.push(step.name);
    const passed: boolean = step.passed;
    const detail: string = step.detail;
    if (step.pending) same<typeof step.pending, true>(true);
    void passed, detail;
  }, options);
  await verifyGame("http://127.0.0.1:8080", "fedcba9876543210fedcba9876543210", null, anyGroup);
  await verifyGame("", "fedcba9876543210fedcba9876543210");

  same<typeof report.status, "verified" | "failed">(true);
  same<typeof report.failed_step, StepName | null>(true);
  same<typeof report.steps, Step[]>(true);
  same<typeof report.dice, number[]>(true);
  same<typeof report.game, "dice" | "sicbo" | "rng" | null>(true);
  same<typeof report.modulus_bits, number | null>(true);
  same<typeof report.rng_value, string | null>(true);
  same<typeof report.won, boolean | null>(true);
  same<typeof report.payout, string | null>(true);
  same<typeof report.anchor, Anchor | null>(true);
  same<typeof report.server_verified, boolean | null>(true);
  same<typeof report.elapsed_ms, number>(true);
  same<typeof report.notes, string[]>(true);
  const fields: (keyof VerifyReport)[] = [
    "game_id", "verified", "status", "failed_step", "steps", "dice", "game", "bet", "pool_served",
    "pool_index", "modulus", "modulus_bits", "class_group", "discriminant", "iterations", "epoch",
    "rng_value", "won", "payout", "rule", "anchor_status", "anchor", "replay_steps",
    "server_verified", "notes", "elapsed_ms",
  ];
  void fields;

  // @ts-expect-error: no such member
  void report.passed;
  // @ts-expect-error: status is "verified" or "failed"
  if (report.status === "ok") void 0;
  // @ts-expect-error: not a step name
  if (report.failed_step === "vdf") void 0;
  const first = report.steps[0]; // noUncheckedIndexedAccess: Step | undefined
  // @ts-expect-error: the step may be missing
  void first.name;
  if (first && first.name === "timing") void first.detail;

  // The anchor: `batch != null` tells an included anchor from a pending one.
  const a = report.anchor;
  if (a && a.batch != null) {
    const root: string = a.root;
    void root;
  }
  // @ts-expect-error: a pending anchor has no root
  if (a) void a.root.length;

  // The witnessed step's options: a policy's text, S and δ (numbers or bigints).
  await verifyGame("", "fedcba9876543210fedcba9876543210", null, { witnessPolicy: "quorum none\n", maxRate: 9e6, deltaMs: 2000n });
  if (first && first.name === "witnessed") void first.detail;
  // @ts-expect-error: the policy is text (parsePolicy's result is checkWitnessed's)
  await verifyGame("", "fedcba9876543210fedcba9876543210", null, { witnessPolicy: { quorum: null } });
  // @ts-expect-error: the game id is a string
  await verifyGame("", 42);
  // @ts-expect-error: the callback takes a Step, not a number
  await verifyGame("", "fedcba9876543210fedcba9876543210", (name: number) => void name);
  // @ts-expect-error: options come fourth
  await verifyGame("", "fedcba9876543210fedcba9876543210", options);
}

// --- VerifyError and CheckFailed ----------------------------------------------------------------

function describe(e: unknown): string {
  if (e instanceof VerifyError) {
    const kind: VerifyErrorKind = e.kind;
    switch (kind) {
      case "pending":
        return `pending until epoch ${e.resolves_at_epoch ?? "?"}`;
      case "http":
        return `HTTP ${e.status ?? "?"} from ${e.url ?? "?"}`;
      case "invalid_id":
      case "not_found":
      case "network":
      case "bad_response":
        return e.message;
      default: {
        const never: never = kind;
        return never;
      }
    }
  }
  if (e instanceof CheckFailed || e instanceof ClassGroupError) return e.message;
  return String(e);
}
const err = new VerifyError("not_found", "game not found", { status: 404, url: "/api/v1/verify/x" });
// @ts-expect-error: not a kind
const badKind = new VerifyError("timeout", "too slow");
// @ts-expect-error: kinds are compared with their union
if (err.kind === "timeout") void 0;

// --- the helpers --------------------------------------------------------------------------------

async function useHelpers(): Promise<void> {
  const v: Verification = await fetchVerification("", "fedcba9876543210fedcba9876543210", fakeFetch);
  const n: bigint = modulusFromId(v.proof.modulus);
  const detail: string = await verifyWesolowski(n, v.proof);
  const roll = await rollDice(new Uint8Array(32), 2);
  same<typeof roll, { dice: number[]; bytes_used: string; skipped: number; blocks: number }>(true);
  const s: Settlement = settle(v.proof.bet, roll.dice);
  if (s.won) void s.payout;
  else same<typeof s.payout, "0.00">(true);
  const claims = claimsOf(v);
  same<typeof claims.dice, number[] | null>(true);
  const id: string | null = extractGameId("https://example.com/verify/FEDCBA9876543210FEDCBA9876543210");
  same<typeof ACCEPTANCE_KIND.pool, 2>(true);
  same<typeof DEFAULT_GROUP, "rsa2048">(true);
  const hex: string = MODULI.test512;
  if (isClassGroupId(v.proof.modulus)) {
    const d: Discriminant = await createDiscriminant(new Uint8Array(32), 1024);
    const text: string = d.toHex();
    void text;
  }
  same<typeof FORM_SIZE, 100>(true);
  void detail, id, hex, bytesToHex(new Uint8Array([1, 2]));

  // @ts-expect-error: bytes, not hex
  await rollDice("00", 2);
  // @ts-expect-error: N is a bigint
  await verifyWesolowski(512, v.proof);
  // @ts-expect-error: a proof needs its y
  await verifyWesolowski(n, { x: "00", pi: "00", l: "00", iterations: 1 });
  // @ts-expect-error: not a built-in modulus
  void MODULI.rsa4096;
  // @ts-expect-error: a form's members are bigints
  const f: Form = { a: 1, b: 1, c: 1 };
  void f;
}

// --- the witnessed step (vrs-witnessed.mjs) -----------------------------------------------------

async function useWitnessed(): Promise<void> {
  const policy: Policy = await parsePolicy("quorum none\n");
  const log: LogEvidence | null | undefined = proof.log;
  const plan: LoggedEntry[] = log ? log.plan : [];
  const detail: string = await checkWitnessed(plan, log ? log.commitment : [], policy, {
    maxRate: defaultMaxRate(proof.modulus),
    shown: shownOfProof(proof),
  });
  const e = decodeLogEntry(new Uint8Array(0));
  if (e.kind === "plan") same<typeof e.deadline_ms, bigint>(true);
  void detail;
  // @ts-expect-error: S is required
  await checkWitnessed(plan, plan, policy, {});

  // A moved game (PROTOCOL.md §21, "Moved games"): moved_from and log.moves, and its step.
  const moved: Proof = { ...proof, moved_from: 4, log: { origin: "o", plan, commitment: [], moves: [plan] } };
  if (isMovedGame(moved)) {
    const chain: string = await checkMoved(moved, policy);
    const unchecked: string = await checkMoved(moved, null);
    const first = firstMove(moved);
    same<typeof first.kind, "move">(true);
    same<typeof first.bet_count, bigint>(true);
    void chain, unchecked;
  }
  const step: StepName = "moved";
  void step;
  // @ts-expect-error: moves are lists of LoggedEntry, one list per move
  const flat: Proof = { ...proof, log: { origin: "o", plan, commitment: [], moves: plan } };
  // @ts-expect-error: moved_from is an epoch number
  const named: Proof = { ...proof, moved_from: "4" };
  void flat, named;
  // @ts-expect-error: a logged entry's proof is a list of base64 hashes
  const bad: LoggedEntry = { index: 0, entry: "", checkpoint: "", proof: "" };
  void bad;
}

void useVerifyGame, useHelpers, useWitnessed, describe, badGroup, badOption, badKind;
