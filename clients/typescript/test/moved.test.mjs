// Offline tests of moved games (docs/PROTOCOL.md §21, "Moved games: the `moved` step"): a game
// accepted into void epoch e whose games move entries of the operator's log send on, epoch by
// epoch, to the last destination D, whose outcome it takes. Its proof is an epoch game's of D
// (a test512 RSA epoch built here end to end, T = 300) but for `moved_from` (e), `log.moves`
// (one LoggedEntry list per move) and the leaf's path in e's tree; the log is made by
// witnessed-log.mjs (independently of src/vrs-witnessed.mjs) and cosigned by three witnesses of
// the verifier's policy (quorum 2 of 3). Through verifyGame on canned responses, and through
// checkMoved, firstMove, isMovedGame and verifyAcceptance directly. No server.

import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import * as v from "../src/vrs-verify.mjs";
import * as w from "../src/vrs-witnessed.mjs";
import {
  auditPath,
  encodeCommitment,
  encodeMove,
  encodeOutput,
  encodePlan,
  encodeVoid,
  noteKey,
  operatorLog,
  treeRoot,
} from "./witnessed-log.mjs";

const N = v.modulusFromId("test512");
const K = v.byteLength(N);
const hex = (x) => v.bytesToHex(v.bigIntToBytes(x, K));
const unhex = (h) => v.hexToBytes(h);
const b64 = (bytes) => Buffer.from(bytes).toString("base64");

/** A dice bet; `id` is its game id. */
const betOf = (id, seed) => ({
  game_id: id,
  game: "dice",
  bet_type: "over7",
  target: null,
  combo: null,
  amount: "1.00",
  player_id: "alice",
  player_seed: seed,
  operator_key: "vrs-house",
});
const GAME = betOf("0a1b2c3d4e5f60718293a4b5c6d7e8f9", "moved-1");
const GAME_LEAF = v.betLeaf(GAME);

// Epoch D = 5 takes y_3 (p = 3); epoch 4 (D − 1) is the void epoch the game was accepted into.
const D = 5;
const P = 3;
const T = 300;
const TM = { opened: 1_100_000, closed: 1_300_000, margin: 1.5, rate: 2, nonce: "5a".repeat(32), deadline: 1_200_000 };
const yOf = async (n) => hex(await v.hashToGroup(await v.sha256(v.u64(n)), N));

/** Epoch D over the leaves `leaves` (bet leaf bytes): its proof's epoch members and its record. */
async function epochD(leaves) {
  const hashes = await Promise.all(leaves.map((l) => v.leafHash(l)));
  const betsRoot = await treeRoot(hashes);
  const prevY = await yOf(P);
  const seed = await v.epochSeedV2(D, P, unhex(prevY), betsRoot, unhex(TM.nonce), T, TM.opened, TM.closed, v.marginCenti(TM.margin), TM.rate);
  const x = await v.hashToGroup(seed, N);
  let y = x;
  for (let i = 0; i < T; i++) y = (y * y) % N;
  y = v.canon(y, N);
  const l = await v.hashToPrime(N, x, y, BigInt(T));
  const pi = v.canon(v.modPow(x, (1n << BigInt(T)) / l, N), N);
  const timing = {
    version: 2,
    previous_epoch: P,
    nonce: TM.nonce,
    opened_at_ms: TM.opened,
    closed_at_ms: TM.closed,
    security_margin: TM.margin,
    squarings_per_second: TM.rate,
    deadline_ms: TM.deadline,
    previous_closed_at_ms: 1_000_000,
    previous_iterations: 600,
    prior_resolved_at_ms: 1_400_000,
  };
  const proof = {
    modulus: "test512",
    iterations: T,
    x: hex(x),
    y: hex(y),
    pi: hex(pi),
    l: v.bytesToHex(v.bigIntToBytes(l, 32)),
    epoch_seed: v.bytesToHex(seed),
    previous_output: prevY,
    bets_root: v.bytesToHex(betsRoot),
    bet_count: leaves.length,
    vdfEpoch: D,
    timing,
  };
  const record = {
    epoch: D,
    status: "resolved",
    modulus: "test512",
    iterations: T,
    bets_root: proof.bets_root,
    bet_count: leaves.length,
    leaf_hashes: hashes.map((h) => v.bytesToHex(h)),
    previous_output: prevY,
    x: proof.x,
    y: proof.y,
    pi: proof.pi,
    l: proof.l,
    version: 2,
    previous_epoch: P,
    nonce: TM.nonce,
    opened_at_ms: TM.opened,
    closed_at_ms: TM.closed,
    security_margin: TM.margin,
    squarings_per_second: TM.rate,
    deadline_ms: TM.deadline,
    resolved_at_ms: TM.closed + 50,
  };
  return { proof, record, hashes };
}

// Computed once: D's own tree holds another bet (the moved game is in e's tree, not D's), and,
// for the ordinary game, D's tree holds the game itself.
const MOVED_D = await epochD([v.betLeaf(betOf("ffffffffffffffffffffffffffffffff", "d-own"))]);
const ORDINARY_D = await epochD([GAME_LEAF]);

// e's tree: three bets, the game's in the middle (leaf 1).
const E_LEAVES = [v.betLeaf(betOf("11111111111111111111111111111111", "e-0")), GAME_LEAF, v.betLeaf(betOf("22222222222222222222222222222222", "e-2"))];
const E_HASHES = await Promise.all(E_LEAVES.map((l) => v.leafHash(l)));
const E_ROOT = await treeRoot(E_HASHES);
const E_PATH = (await auditPath(1, E_HASHES)).map((h) => v.bytesToHex(h));

// The verifier's policy: the log key and three witnesses, any two of them a quorum.
const LOG_KEY = await noteKey("vrs.test/log", 0x01);
const WITNESSES = await Promise.all(["w0.example", "w1.example", "w2.example"].map((n) => noteKey(n, 0x04)));
const POLICY = `log ${LOG_KEY.vkey}\n${WITNESSES.map((k, i) => `witness W${i} ${k.vkey}`).join("\n")}\ngroup q 2 W0 W1 W2\nquorum q\n`;
const all = (t) => WITNESSES.map((k) => [k, t]);

// The operator's acceptance key (PROTOCOL.md §11), published at GET /.
const ACCEPTANCE = (() => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pk = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");
  return { pk, sign: (msg) => sign(null, Buffer.from(msg), privateKey).toString("hex") };
})();
const INFO = { service: "vrs", acceptance_keys: [{ public_key: ACCEPTANCE.pk, since_ms: 1_000 }] };
const ACCEPTED_AT = 1_050_000;

/** The signed acceptance of GAME into epoch `epoch` (kind 1). */
async function acceptanceInto(epoch) {
  const lh = await v.leafHash(GAME_LEAF);
  return {
    version: 2,
    kind: "epoch",
    epoch,
    pool_index: null,
    leaf: v.bytesToHex(GAME_LEAF),
    leaf_hash: v.bytesToHex(lh),
    accepted_at_ms: ACCEPTED_AT,
    public_key: ACCEPTANCE.pk,
    signature: ACCEPTANCE.sign(v.acceptanceMessage(1, epoch, lh, ACCEPTED_AT)),
  };
}

/**
 * A moved game's verification response and the records a server would publish, with the log:
 * D's plan (entry 0), the moves in `logOrder`, D's commitment, then p's output. Options:
 * `chain` ([[e, d], …], the moves in the proof's order; default [[4, 5]]), `moves` (per move,
 * changes: `entry` (bytes logged instead of the move), `cosigners` ([[key, Unix s]]: the
 * checkpoint's cosignatures; default all three at 1120 s), `extra` (more LoggedEntry of it:
 * [[key, s]] lists, each a later checkpoint)), `logOrder` (indices into `chain`), `commitmentFirst`
 * (D's commitment logged before the moves), `acceptanceEpoch` (the epoch the game's signed acceptance
 * names: by default e, or D for an ordinary game; null: unsigned), `ordinary` (the game in D's own tree, no move at all), `change(body)`.
 */
async function movedGame(o = {}) {
  const chain = o.chain ?? [[4, D]];
  const base = o.ordinary ? ORDINARY_D : MOVED_D;
  const p = structuredClone(base.proof);
  const log = operatorLog(LOG_KEY);
  const shared = { epoch: D, previous: P, iterations: T, margin_centi: v.marginCenti(TM.margin), squarings_per_second: TM.rate, opened_ms: TM.opened };
  const planAt = log.append(encodePlan({ ...shared, deadline_ms: TM.deadline }));
  const commit = () => log.append(encodeCommitment({ ...shared, bets_root: unhex(p.bets_root), bet_count: p.bet_count, nonce: unhex(TM.nonce), closed_ms: TM.closed }));
  let commitmentAt = o.commitmentFirst ? commit() : null;
  const moveAt = [];
  if (!o.ordinary) {
    for (const i of o.logOrder ?? chain.map((_, j) => j)) {
      const [e, d] = chain[i];
      // The first move repeats e's tree; later ones their own epochs' (filler here).
      const tree = i === 0 ? { bets_root: E_ROOT, bet_count: E_HASHES.length } : { bets_root: new Uint8Array(32).fill(0x40 + i), bet_count: 7 };
      moveAt[i] = log.append(o.moves?.[i]?.entry ?? encodeMove({ epoch: e, to: d, ...tree }));
    }
  }
  commitmentAt ??= commit();
  const outputAt = log.append(encodeOutput(P, await v.sha256(unhex(p.previous_output))));
  // Each entry in the checkpoint right after it (witnesses cosign as the log grows).
  const at = (index, cosigners) => log.logged(index, cosigners, index + 1);
  p.log = {
    origin: LOG_KEY.name,
    plan: [await at(planAt, all(1_100n))],
    commitment: [await at(commitmentAt, all(1_150n))],
    previous_output: [await at(outputAt, all(1_150n))],
  };
  if (!o.ordinary) {
    p.log.moves = await Promise.all(
      chain.map(async (_, i) => {
        const spec = o.moves?.[i] ?? {};
        const list = [await at(moveAt[i], spec.cosigners ?? all(1_120n))];
        for (const [k, cosigners] of (spec.extra ?? []).entries()) list.push(await log.logged(moveAt[i], cosigners, moveAt[i] + 2 + k));
        return list;
      }),
    );
    p.moved_from = chain[0][0];
  }
  Object.assign(p, {
    leaf: v.bytesToHex(GAME_LEAF),
    leaf_hash: v.bytesToHex(await v.leafHash(GAME_LEAF)),
    leaf_index: o.ordinary ? 0 : 1,
    audit_path: o.ordinary ? [] : E_PATH,
    bet: GAME,
    bet_created_at_ms: ACCEPTED_AT,
  });
  // Signed, by default, naming the epoch the game was accepted into (e; D for an ordinary game).
  const signed = o.acceptanceEpoch === undefined ? (o.ordinary ? D : chain[0][0]) : o.acceptanceEpoch;
  if (signed !== null) p.acceptance = await acceptanceInto(signed);
  const rng = await v.rngValue(unhex(p.y), GAME.game_id, GAME.player_seed);
  const dice = (await v.rollDice(rng, 2)).dice;
  const s = v.settle(GAME, dice);
  p.rngValue = v.bytesToHex(rng);
  const from = o.ordinary ? D : chain[0][0];
  const body = {
    proof: p,
    verified: true,
    replay_steps: [
      // e's epoch, root and count (and closed_e) for a moved game: not compared with the proof.
      { action: "bet_committed", epoch: from, bets_root: v.bytesToHex(o.ordinary ? unhex(p.bets_root) : E_ROOT), bet_count: o.ordinary ? 1 : 3, closed_at: 1_090_000 },
      { action: "vdf_epoch_published", epoch: D },
      { action: "randomness_derived", rngValue: p.rngValue },
      { action: "dice_rolled", dice },
      { action: "bet_evaluated", won: s.won, payout: s.payout, total: dice[0] + dice[1] },
    ],
  };
  if (o.change) o.change(body);
  // The public records: D's, its predecessor p's, D − 1's (= e, 4), and e's (its tree).
  const other = async (n) => ({ epoch: n, status: "resolved", modulus: "test512", y: await yOf(n), iterations: 1000, closed_at_ms: 900_000, resolved_at_ms: 950_000, version: 2 });
  const records = { [D]: base.record, [P]: { ...(await other(P)), closed_at_ms: 1_000_000, iterations: 600 } };
  records[D - 1] = { ...(await other(D - 1)), resolved_at_ms: 1_400_000, closed_at_ms: 900_000 };
  if (!o.ordinary) {
    const e = chain[0][0];
    records[e] = { ...(records[e] ?? (await other(e))), bets_root: v.bytesToHex(E_ROOT), bet_count: 3, leaf_hashes: E_HASHES.map((h) => v.bytesToHex(h)) };
  }
  const fetch = async (url) => {
    if (url === "/") return { status: 200, text: async () => JSON.stringify(INFO) };
    const m = /\/api\/v1\/epochs\/([0-9]+)$/.exec(url);
    const rec = m ? records[Number(m[1])] : undefined;
    return { status: rec ? 200 : 404, text: async () => JSON.stringify(rec ?? { error: "not found" }) };
  };
  const verify = async (options = {}) => {
    const run = await v.verifyGame("", GAME.game_id, null, { body, fetch, group: "test512", ...options });
    const failed = Object.fromEntries(run.steps.filter((x) => !x.passed).map((x) => [x.name, x.detail]));
    const detail = (name) => run.steps.find((x) => x.name === name)?.detail;
    return { run, failed, detail, names: run.steps.map((x) => x.name) };
  };
  return { body, records, verify, withPolicy: () => verify({ witnessPolicy: POLICY, maxRate: 5 }) };
}

const EPOCH_STEPS = ["group", "bet_leaf", "merkle_inclusion", "bets_root", "epoch_chain", "epoch_record", "epoch_input", "vdf_proof", "timing"];
const OUTCOME_STEPS = ["rng_value", "dice", "payout", "acceptance"];

// ---------------------------------------------------------------------------------------------
// A moved game that verifies
// ---------------------------------------------------------------------------------------------

test("a moved game verifies without a policy: moved after merkle_inclusion, the leaf in e's tree, D judged", async () => {
  const g = await movedGame({ acceptanceEpoch: 4 });
  const { run, failed, detail, names } = await g.verify();
  assert.deepEqual(failed, {});
  assert.equal(run.verified, true);
  assert.deepEqual(names, ["group", "bet_leaf", "merkle_inclusion", "moved", ...EPOCH_STEPS.slice(3), ...OUTCOME_STEPS]);
  // The path leads to the first move's root (e's), not to proof.bets_root (D's).
  assert.notEqual(g.body.proof.bets_root, v.bytesToHex(E_ROOT));
  assert.match(detail("merkle_inclusion"), new RegExp(`^leaf 1 of 3 leads to epoch 4's bets root ${v.bytesToHex(E_ROOT).slice(0, 16)}…, the first move's \\(the game moved to epoch 5\\)$`));
  assert.equal(
    detail("moved"),
    "epoch 4 is void: its games moved to epoch 5 (entry 1); logged before epoch 5's commitment (entry 2); not checked against a witness policy: the moves are the log's word",
  );
  // D's own leaves give D's root; the game's leaf is among e's, which give the first move's.
  assert.equal(
    detail("bets_root"),
    "epoch 5's 1 published leaves hash to its bets root; the game's leaf 1 is among the 3 of epoch 4, which hash to the first move's bets root",
  );
  // Every other step judges D.
  assert.equal(detail("epoch_chain"), "the previous output is y of epoch 3");
  assert.match(detail("epoch_input"), /‖ 5 ‖ 3 ‖ y_p ‖ bets_root ‖ nonce ‖ 300 ‖/);
  assert.equal(detail("epoch_record"), "GET /api/v1/epochs/5 is resolved with the proof's 17 values");
  // The acceptance names e, the epoch the game was accepted into.
  assert.match(detail("acceptance"), /accepted into epoch 4 \(moved to epoch 5\) at 1050000 ms$/);
  // Without a policy the witnessed note applies: the moves are the operator's word too.
  assert.deepEqual(run.notes, [v.WITNESSED_NOTE]);
  assert.equal(run.epoch, D);
});

test("under a policy each move is proven and cosigned by the quorum; witnessed judges D", async () => {
  const g = await movedGame({ acceptanceEpoch: 4 });
  const { run, failed, detail, names } = await g.withPolicy();
  assert.deepEqual(failed, {});
  assert.equal(run.verified, true);
  assert.deepEqual(run.notes, []);
  assert.deepEqual(names, ["group", "bet_leaf", "merkle_inclusion", "moved", ...EPOCH_STEPS.slice(3), "witnessed", ...OUTCOME_STEPS]);
  assert.equal(detail("moved"), "epoch 4 is void: its games moved to epoch 5 (entry 1), cosigned by [W0, W1, W2]; logged before epoch 5's commitment (entry 2)");
  assert.match(detail("witnessed"), /^epoch 5: plan \(entry 0\), commitment \(entry 2\) and output of epoch 3 \(entry 3\) cosigned in time by W0, W1, W2 /);
});

test("a chain of moves (2 → 4 → 5) verifies: the leaf in epoch 2's tree, the outcome D's", async () => {
  const g = await movedGame({ chain: [[2, 4], [4, D]], acceptanceEpoch: 2 });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(r.failed, {});
    assert.match(r.detail("merkle_inclusion"), /leads to epoch 2's bets root/);
    assert.match(r.detail("bets_root"), /; the game's leaf 1 is among the 3 of epoch 2, which hash to the first move's bets root$/);
  }
  const { detail } = await g.withPolicy();
  assert.equal(
    detail("moved"),
    "epoch 2 is void: its games moved to epoch 4 (entry 1), cosigned by [W0, W1, W2], then to epoch 5 (entry 2), cosigned by [W0, W1, W2]; logged before epoch 5's commitment (entry 3)",
  );
});

test("a move is cosigned at any time, and its quorum may span its checkpoints", async () => {
  // Long after D resolved: a move carries no stamp.
  let g = await movedGame({ moves: [{ cosigners: [[WITNESSES[0], 99_999n], [WITNESSES[2], 99_999n]] }] });
  let r = await g.withPolicy();
  assert.deepEqual(r.failed, {});
  assert.match(r.detail("moved"), /cosigned by \[W0, W2\]/);
  // W0 in the move's first checkpoint, W1 in a later one of the same list: together a quorum.
  g = await movedGame({ moves: [{ cosigners: [[WITNESSES[0], 1_120n]], extra: [[[WITNESSES[1], 1_130n]]] }] });
  assert.equal(g.body.proof.log.moves[0].length, 2);
  r = await g.withPolicy();
  assert.deepEqual(r.failed, {});
  assert.match(r.detail("moved"), /cosigned by \[W0, W1\]/);
});

// ---------------------------------------------------------------------------------------------
// What fails `moved`
// ---------------------------------------------------------------------------------------------

test("a move list whose entry is not a move fails moved, and merkle_inclusion (no tree to lead to)", async () => {
  const g = await movedGame({ moves: [{ entry: encodeVoid(4, 1_050_000) }] });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.equal(r.failed.moved, "log.moves[0] holds entry 1, a void entry, not a move");
    assert.equal(r.failed.merkle_inclusion, "the first move's entry (log.moves[0], entry 1) is a void entry, not a move");
    assert.ok(r.failed.bets_root);
  }
  // Bytes that are no entry at all.
  const bad = await movedGame({ moves: [{ entry: Uint8Array.of(1, 2, 3) }] });
  const r = await bad.verify();
  assert.match(r.failed.moved, /^the move in log\.moves\[0\]: not a log entry: /);
  assert.match(r.failed.merkle_inclusion, /^the first move's entry \(log\.moves\[0\]\): not a log entry: /);
});

test("a chain that does not end at vdfEpoch fails moved, and only moved", async () => {
  const g = await movedGame({ chain: [[4, 6]] });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(Object.keys(r.failed), ["moved"]);
    assert.equal(r.failed.moved, "the last move (entry 1) sends the games to epoch 6, but the proof is epoch 5's (vdfEpoch)");
  }
});

test("a broken link of the chain fails moved", async () => {
  // 2 → 3, then a move of epoch 4: nothing sent the games from 3 to 4.
  const g = await movedGame({ chain: [[2, 3], [4, D]] });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(Object.keys(r.failed), ["moved"]);
    assert.equal(
      r.failed.moved,
      "the chain of moves is broken: log.moves[0] (entry 1) sends epoch 2's games to epoch 3, but log.moves[1] (entry 2) moves epoch 4's",
    );
  }
});

test("a move logged after D's commitment fails moved: the games reached D after its input was fixed", async () => {
  const g = await movedGame({ commitmentFirst: true });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(Object.keys(r.failed), ["moved"]);
    assert.equal(
      r.failed.moved,
      "the last move (entry 2) is not logged before epoch 5's commitment (entry 1): the games reached epoch 5 after its input was fixed",
    );
  }
  // D's commitment must be shown: without it nothing places the moves.
  const none = await movedGame({ change: (b) => (b.proof.log.commitment = []) });
  const r = await none.verify();
  assert.deepEqual(Object.keys(r.failed), ["moved"]);
  assert.equal(r.failed.moved, "the log shows no commitment of epoch 5: nothing places the moves before its input was fixed");
  // The commitment list must hold D's commitment, not another entry.
  const other = await movedGame({ change: (b) => (b.proof.log.commitment = b.proof.log.plan) });
  assert.equal((await other.verify()).failed.moved, "log.commitment holds entry 0, a plan entry, not epoch 5's commitment");
});

test("moves whose log indices do not strictly increase fail moved", async () => {
  // The chain 2 → 4 → 5 in the proof, but the move of 4 logged before the move of 2.
  const g = await movedGame({ chain: [[2, 4], [4, D]], logOrder: [1, 0] });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(Object.keys(r.failed), ["moved"]);
    assert.equal(r.failed.moved, "log.moves[1] (entry 1) is not logged after log.moves[0] (entry 2): a chain of moves follows the log's order");
  }
  // One move entry shown twice: its second showing breaks the chain.
  const twice = await movedGame({ chain: [[4, D]], change: (b) => b.proof.log.moves.push(b.proof.log.moves[0]) });
  assert.match((await twice.verify()).failed.moved, /^the chain of moves is broken: log\.moves\[0\] \(entry 1\) sends epoch 4's games to epoch 5, but log\.moves\[1\] \(entry 1\) moves epoch 4's$/);
});

test("moved_from other than the first move's epoch fails moved", async () => {
  const g = await movedGame({ change: (b) => (b.proof.moved_from = 3) });
  const r = await g.verify();
  assert.equal(r.failed.moved, "the first move (entry 1) moves the games of epoch 4, but the game was accepted into epoch 3 (moved_from)");
  // The acceptance names epoch 4 (the tree of bets_root is the first move's, epoch 4's).
  assert.deepEqual(Object.keys(r.failed), ["moved", "acceptance"]);
  assert.equal(r.failed.acceptance, "the acceptance names epoch 4, but the game was accepted into epoch 3 (moved_from) and moved to epoch 5");
});

test("under a policy a move cosigned by fewer than the quorum fails moved; without a policy the quorum is not applied", async () => {
  const g = await movedGame({ moves: [{ cosigners: [[WITNESSES[1], 1_120n]] }] });
  const r = await g.withPolicy();
  assert.deepEqual(Object.keys(r.failed), ["moved"]);
  assert.equal(r.failed.moved, "the move of epoch 4 to epoch 5 (entry 1) is cosigned by [W1], short of the quorum 2 of (W0, W1, W2)");
  // No cosignature at all: still the operator's word without a policy, which says so.
  const bare = await movedGame({ moves: [{ cosigners: [] }] });
  const unchecked = await bare.verify();
  assert.deepEqual(unchecked.failed, {});
  assert.match(unchecked.detail("moved"), /not checked against a witness policy/);
  assert.match((await bare.withPolicy()).failed.moved, /is cosigned by \[\], short of the quorum/);
  // In a chain, each move needs its own quorum.
  const chain = await movedGame({ chain: [[2, 4], [4, D]], moves: [{}, { cosigners: [[WITNESSES[2], 1_121n]] }] });
  assert.equal((await chain.withPolicy()).failed.moved, "the move of epoch 4 to epoch 5 (entry 2) is cosigned by [W2], short of the quorum 2 of (W0, W1, W2)");
});

test("under a policy a move's tampered audit path or checkpoint fails moved; without one they are not read", async () => {
  const path = await movedGame({ change: (b) => (b.proof.log.moves[0][0].proof = [b64(new Uint8Array(32).fill(7))]) });
  assert.deepEqual((await path.verify()).failed, {});
  let r = await path.withPolicy();
  assert.deepEqual(Object.keys(r.failed), ["moved"]);
  assert.equal(r.failed.moved, "the move in log.moves[0]: the inclusion proof of entry 1 in 2: invalid transparency proof");
  // The checkpoint's root changed: the log's signature no longer holds.
  const cp = await movedGame({
    change: (b) => {
      const l = b.proof.log.moves[0][0];
      const lines = l.checkpoint.split("\n");
      lines[2] = b64(new Uint8Array(32).fill(9));
      l.checkpoint = lines.join("\n");
    },
  });
  r = await cp.withPolicy();
  assert.deepEqual(Object.keys(r.failed), ["moved"]);
  assert.match(r.failed.moved, /^the move in log\.moves\[0\]: checkpoint of entry 1: signature: invalid signature for key vrs\.test\/log\+/);
  // A list whose checkpoints name different entries.
  const mixed = await movedGame({ change: (b) => b.proof.log.moves[0].push(b.proof.log.plan[0]) });
  for (const x of [await mixed.verify(), await mixed.withPolicy()]) {
    assert.equal(x.failed.moved, "the move in log.moves[0]'s checkpoints name different entries (1 and 0)");
  }
});

test("a moved game's own leaf path is checked against e's tree: a tampered path fails merkle_inclusion", async () => {
  const g = await movedGame({ change: (b) => (b.proof.audit_path = [...b.proof.audit_path].reverse()) });
  const r = await g.verify();
  assert.deepEqual(Object.keys(r.failed), ["merkle_inclusion"]);
  assert.equal(r.failed.merkle_inclusion, `leaf 1 of 3 and the audit path do not lead to epoch 4's bets root ${v.bytesToHex(E_ROOT)} (the first move's)`);
  // e's published tree must be the first move's, and hold the game's leaf where its path says.
  let other = await movedGame();
  other.records[4].bets_root = "ab".repeat(32);
  assert.deepEqual((await other.verify()).failed, { bets_root: "epoch 4's 3 leaves do not hash to its bets root" });
  other = await movedGame();
  other.records[4].leaf_hashes = [...other.records[4].leaf_hashes].reverse();
  other.records[4].bets_root = v.bytesToHex(await v.merkleRoot(other.records[4].leaf_hashes.map(unhex)));
  assert.deepEqual((await other.verify()).failed, { bets_root: `epoch 4's published bets root is not the first move's ${v.bytesToHex(E_ROOT)}` });
  other = await movedGame();
  other.records[4].leaf_hashes = [other.records[4].leaf_hashes[0]];
  other.records[4].bet_count = 1;
  other.records[4].bets_root = other.records[4].leaf_hashes[0];
  assert.match((await other.verify()).failed.bets_root, /^epoch 4's published bets root is not the first move's/);
  // D's own published tree is still D's, as for any of D's games.
  other = await movedGame();
  other.records[D] = { ...other.records[D], leaf_hashes: [] };
  assert.deepEqual(Object.keys((await other.verify()).failed), ["bets_root"]);
});

test("item 1: moved_from without moves, and moves without moved_from, each fail moved", async () => {
  const noMoves = await movedGame({ change: (b) => delete b.proof.log.moves });
  let r = await noMoves.verify();
  assert.ok(r.names.includes("moved"), "moved_from alone makes a moved game");
  assert.equal(r.failed.moved, "the proof names no move");
  assert.equal(r.failed.merkle_inclusion, "the proof names no move");
  const emptyMoves = await movedGame({ change: (b) => (b.proof.log.moves = []) });
  assert.equal((await emptyMoves.verify()).failed.moved, "the proof names no move");
  const noFrom = await movedGame({ change: (b) => delete b.proof.moved_from });
  r = await noFrom.verify();
  assert.ok(r.names.includes("moved"), "log.moves alone makes a moved game");
  assert.equal(r.failed.moved, "the proof shows moves but names no epoch they move from");
  // The acceptance cannot be held to an epoch the proof does not name.
  assert.equal(r.failed.acceptance, "moved_from is missing or not a count");
  const emptyList = await movedGame({ change: (b) => (b.proof.log.moves = [[]]) });
  assert.equal((await emptyList.verify()).failed.moved, "log.moves[0] is empty: no checkpoint holds its move");
  const notList = await movedGame({ change: (b) => (b.proof.log.moves = "moves") });
  assert.equal((await notList.verify()).failed.moved, "the proof's log.moves is not a list");
});

// ---------------------------------------------------------------------------------------------
// acceptance, and ordinary games
// ---------------------------------------------------------------------------------------------

test("a moved game's acceptance must name moved_from, not vdfEpoch", async () => {
  const g = await movedGame({ acceptanceEpoch: D });
  const r = await g.verify();
  assert.deepEqual(Object.keys(r.failed), ["acceptance"]);
  assert.equal(r.failed.acceptance, "the acceptance names epoch 5, but the game was accepted into epoch 4 (moved_from) and moved to epoch 5");
  // Directly: the same signature checked against an ordinary proof of D and a moved one.
  const acceptance = await acceptanceInto(4);
  const proof = { leaf: v.bytesToHex(GAME_LEAF), vdfEpoch: D, bet_created_at_ms: ACCEPTED_AT };
  await assert.rejects(v.verifyAcceptance(acceptance, INFO.acceptance_keys, proof), /names epoch 4, but the game is in epoch 5$/);
  assert.match(await v.verifyAcceptance(acceptance, INFO.acceptance_keys, { ...proof, moved_from: 4 }), /accepted into epoch 4 \(moved to epoch 5\)/);
  await assert.rejects(v.verifyAcceptance(acceptance, INFO.acceptance_keys, { ...proof, log: { moves: [[]] } }), /moved_from is missing or not a count/);
});

test("an ordinary game has no moved step, with or without a policy, and an empty moves list changes nothing", async () => {
  const g = await movedGame({ ordinary: true, acceptanceEpoch: D });
  for (const r of [await g.verify(), await g.withPolicy()]) {
    assert.deepEqual(r.failed, {});
    assert.ok(!r.names.includes("moved"));
    assert.equal(r.detail("merkle_inclusion"), `leaf 0 of 1 leads to bets root ${g.body.proof.bets_root.slice(0, 16)}…`);
    assert.match(r.detail("acceptance"), /accepted into epoch 5 at 1050000 ms$/);
  }
  assert.deepEqual((await g.verify()).names, [...EPOCH_STEPS, ...OUTCOME_STEPS]);
  const empty = await movedGame({ ordinary: true, acceptanceEpoch: D, change: (b) => Object.assign(b.proof, { moved_from: null, log: { ...b.proof.log, moves: [] } }) });
  const r = await empty.withPolicy();
  assert.deepEqual(r.failed, {});
  assert.ok(!r.names.includes("moved"));
  // isMovedGame: moved_from, or a moves list that is not empty.
  for (const [proof, moved] of [
    [{}, false],
    [null, false],
    [{ moved_from: null, log: { moves: [] } }, false],
    [{ log: null }, false],
    [{ log: { moves: null } }, false],
    [{ moved_from: 4 }, true],
    [{ moved_from: "4" }, true],
    [{ log: { moves: [[]] } }, true],
    [{ log: { moves: "x" } }, true],
  ]) {
    assert.equal(v.isMovedGame(proof), moved, JSON.stringify(proof));
  }
});

// ---------------------------------------------------------------------------------------------
// The step functions directly
// ---------------------------------------------------------------------------------------------

test("checkMoved and firstMove, directly: with a parsed policy, its text, or none", async () => {
  const g = await movedGame({ chain: [[2, 4], [4, D]] });
  const proof = g.body.proof;
  const policy = await w.parsePolicy(POLICY);
  const withText = await w.checkMoved(proof, POLICY);
  assert.equal(withText, await w.checkMoved(proof, policy));
  assert.match(withText, /^epoch 2 is void: its games moved to epoch 4 \(entry 1\), cosigned by \[W0, W1, W2\], then to epoch 5/);
  assert.match(await w.checkMoved(proof), /; not checked against a witness policy: the moves are the log's word$/);
  const first = w.firstMove(proof);
  assert.deepEqual(
    { ...first, bets_root: v.bytesToHex(first.bets_root) },
    { kind: "move", epoch: 2n, to: 4n, bets_root: v.bytesToHex(E_ROOT), bet_count: 3n },
  );
  // quorum none: the moves need no cosignature, but their checkpoints and paths are proven.
  const none = await w.parsePolicy(`log ${LOG_KEY.vkey}\nquorum none\n`);
  const bare = (await movedGame({ moves: [{ cosigners: [] }] })).body.proof;
  assert.match(await w.checkMoved(bare, none), /its games moved to epoch 5 \(entry 1\), cosigned by \[\]/);
  const tampered = structuredClone(bare);
  tampered.log.moves[0][0].proof = [b64(new Uint8Array(32))];
  await assert.rejects(w.checkMoved(tampered, none), /invalid transparency proof/);
  // Each failure is a CheckFailed, the step's detail.
  for (const [changed, says] of [
    [{ ...proof, vdfEpoch: undefined }, /vdfEpoch is missing or not a count/],
    [{ ...proof, moved_from: 2.5 }, /^moved_from 2\.5 is not an epoch number$/],
    [{ ...proof, log: { ...proof.log, moves: [proof.log.moves[0], "x"] } }, /^log\.moves\[1\] is not a list$/],
    [{ ...proof, log: { ...proof.log, commitment: {} } }, /^the proof's log\.commitment is not a list$/],
  ]) {
    await assert.rejects(w.checkMoved(changed), (e) => e instanceof v.CheckFailed && says.test(e.message), String(says));
  }
  assert.throws(() => w.firstMove({ log: { moves: [[{ index: 0, entry: "zz" }]] } }), /the first move's entry \(log\.moves\[0\]\) is not hex/);
  assert.throws(() => w.firstMove({}), /^CheckFailed: the proof names no move$/);
  // The entry decodes as the vector's move (docs/test-vectors/log-entries.json's layout).
  const bytes = encodeMove({ epoch: 7, to: 8, bets_root: new Uint8Array(32).fill(1), bet_count: 9 });
  assert.equal(bytes.length, 1 + 12 + 8 + 8 + 32 + 8);
  assert.deepEqual(w.decodeLogEntry(bytes), { kind: "move", epoch: 7n, to: 8n, bets_root: new Uint8Array(32).fill(1), bet_count: 9n });
});
