// Offline tests of the witnessed step (src/vrs-witnessed.mjs, docs/PROTOCOL.md §21): the shared
// vector docs/test-vectors/witnessed.json (written by the Rust reference, protocol/src/tlog/
// witnessed.rs), published signed-note and cosignature vectors, policy parsing, entries, base64,
// tampered proofs and the equality of the logged record with the one shown (rule 3). No server.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as v from "../src/vrs-verify.mjs";
import * as w from "../src/vrs-witnessed.mjs";
import { encodeCommitment, encodePlan, encodeVoid, noteKey, operatorLog } from "./witnessed-log.mjs";

const root = new URL("../../../", import.meta.url);
const vector = JSON.parse(await readFile(fileURLToPath(new URL("docs/test-vectors/witnessed.json", root)), "utf8"));
const floor = { maxRate: vector.max_rate, deltaMs: vector.delta_ms };

/** The verdict of checkWitnessed: {passes, detail}; anything but CheckFailed is thrown. */
async function verdict(plan, commitment, policy = vector.policy, options = floor) {
  try {
    return { passes: true, detail: await w.checkWitnessed(plan, commitment, policy, options) };
  } catch (e) {
    if (!(e instanceof v.CheckFailed)) throw e;
    return { passes: false, detail: e.message };
  }
}

const passing = vector.cases.find((c) => c.passes);

test("the shared vector: exactly the cases marked passes pass, in the Rust step's words", async () => {
  assert.ok(vector.cases.length >= 9 && vector.cases.some((c) => !c.passes));
  const policy = await w.parsePolicy(vector.policy);
  for (const c of vector.cases) {
    // Cases with a `proof`: rule 2 in full, the proof's record against the logged entries.
    const shown = c.proof ? { shown: w.shownOfProof(c.proof) } : {};
    const got = await verdict(c.plan, c.commitment, policy, { ...floor, previousOutput: c.previous_output, ...shown });
    assert.equal(got.passes, c.passes, `${c.name}: ${got.detail}`);
    // The same words as the Rust reference (the vector's detail), so that reports agree.
    assert.equal(got.detail, c.detail, c.name);
  }
});

test("a tampered inclusion proof or index fails", async () => {
  const com = passing.commitment[0];
  const cases = [
    // Another hash, still base64 of 32 bytes.
    [{ ...com, proof: [Buffer.alloc(32, 7).toString("base64"), ...com.proof.slice(1)] }, /inclusion proof of entry 1 in 2: invalid transparency proof/],
    [{ ...com, proof: com.proof.slice(1) }, /invalid transparency proof/],
    [{ ...com, proof: [...com.proof, com.proof[0]] }, /invalid transparency proof/],
    [{ ...com, proof: [] }, /invalid transparency proof/],
    [{ ...com, proof: ["not base64"] }, /"not base64" is not a base64 SHA-256 hash/],
    [{ ...com, proof: [com.proof[0].slice(0, -4)] }, /is not a base64 SHA-256 hash/],
    [{ ...com, index: 0 }, /the commitment's checkpoints name different entries|invalid transparency proof/],
    [{ ...com, index: 2 }, /entry 2 is not in a tree of 2/],
  ];
  for (const [bad, says] of cases) {
    const got = await verdict(passing.plan, [bad]);
    assert.equal(got.passes, false, JSON.stringify(bad.proof));
    assert.match(got.detail, says);
  }
  // Every checkpoint of the list must verify: a bad second one fails the list.
  const [first, second] = passing.commitment;
  const got = await verdict(passing.plan, [first, { ...second, proof: second.proof.slice(1) }]);
  assert.match(got.detail, /^the commitment: the inclusion proof of entry 1 in 3: invalid transparency proof$/);
  // Two entries in one list.
  assert.match((await verdict(passing.plan, [first, passing.plan[0]])).detail, /name different entries \(1 and 0\)/);
});

test("rule 3: the logged record must equal the one the proof shows, field by field", async () => {
  const T0 = 1_800_000_000_000;
  const proof = {
    vdfEpoch: 1,
    bets_root: "00".repeat(32),
    bet_count: 0,
    iterations: 45_000_000,
    timing: {
      version: 2,
      previous_epoch: 0,
      nonce: "01".repeat(32),
      security_margin: 1.5,
      squarings_per_second: 1_000_000,
      opened_at_ms: T0,
      closed_at_ms: T0 + 3_000,
      deadline_ms: T0 + 5_000,
    },
    previous_output: "00".repeat(64),
  };
  const shown = w.shownOfProof(proof);
  const ok = await verdict(passing.plan, passing.commitment, vector.policy, { ...floor, shown });
  assert.equal(ok.passes, true, ok.detail);
  const altered = [
    [{ vdfEpoch: 2 }, "epoch is 2, the log's commitment says 1"],
    [{ bets_root: "ab".repeat(32) }, `bets_root is ${"ab".repeat(32)}, the log's commitment says ${"00".repeat(32)}`],
    [{ bet_count: 1 }, "bet_count is 1, the log's commitment says 0"],
    [{ iterations: 45_000_001 }, "iterations is 45000001, the log's commitment says 45000000"],
    [{ timing: { previous_epoch: 1 } }, "previous_epoch is 1"],
    [{ timing: { nonce: "02".repeat(32) } }, "nonce is 0202"],
    [{ timing: { security_margin: 1.51 } }, "security_margin (hundredths) is 151, the log's commitment says 150"],
    [{ timing: { squarings_per_second: 2_000_000 } }, "squarings_per_second is 2000000"],
    [{ timing: { opened_at_ms: T0 + 1 } }, `opened_at_ms is ${T0 + 1}`],
    [{ timing: { closed_at_ms: T0 + 2_999 } }, `closed_at_ms is ${T0 + 2_999}, the log's commitment says ${T0 + 3_000}`],
    [{ timing: { deadline_ms: T0 + 6_000 } }, `deadline_ms is ${T0 + 6_000}, the log's plan says ${T0 + 5_000}`],
  ];
  for (const [change, says] of altered) {
    const p = { ...proof, ...change, timing: { ...proof.timing, ...(change.timing ?? {}) } };
    const got = await verdict(passing.plan, passing.commitment, vector.policy, { ...floor, shown: w.shownOfProof(p) });
    assert.equal(got.passes, false, says);
    assert.ok(got.detail.startsWith("the epoch record shown is not the one logged: ") && got.detail.includes(says), got.detail);
  }
  assert.throws(() => w.shownOfProof({ ...proof, timing: { ...proof.timing, nonce: null } }), v.CheckFailed);
});

test("rule 3: the previous output shown must hash to p's logged output", async () => {
  const c = vector.cases.find((x) => x.name === "the previous output logged with the commitment");
  const entry = w.decodeLogEntry(v.hexToBytes(c.commitment[0].entry));
  const plan = w.decodeLogEntry(v.hexToBytes(c.plan[0].entry));
  const proof = {
    vdfEpoch: Number(entry.epoch),
    bets_root: v.bytesToHex(entry.bets_root),
    bet_count: Number(entry.bet_count),
    iterations: Number(entry.iterations),
    timing: {
      version: 2,
      previous_epoch: Number(entry.previous),
      nonce: v.bytesToHex(entry.nonce),
      security_margin: entry.margin_centi / 100,
      squarings_per_second: Number(entry.squarings_per_second),
      opened_at_ms: Number(entry.opened_ms),
      closed_at_ms: Number(entry.closed_ms),
      deadline_ms: Number(plan.deadline_ms),
    },
    // The vector's y of epoch p is u64(p).
    previous_output: "0000000000000001",
  };
  const options = { ...floor, previousOutput: c.previous_output };
  const ok = await verdict(c.plan, c.commitment, vector.policy, { ...options, shown: w.shownOfProof(proof) });
  assert.equal(ok.passes, true, ok.detail);
  assert.match(ok.detail, /^epoch 2: plan \(entry 0\), commitment \(entry 1\) and output of epoch 1 \(entry 2\)/);
  // y_1′ served to one client, every other field as logged.
  const forked = w.shownOfProof({ ...proof, previous_output: "ff".repeat(8) });
  const got = await verdict(c.plan, c.commitment, vector.policy, { ...options, shown: forked });
  assert.equal(got.passes, false);
  assert.match(got.detail, /^the epoch record shown is not the one logged: previous_output hashes to /);
  // Without p's output entry nothing fixed y_1.
  const none = await verdict(c.plan, c.commitment, vector.policy, { ...floor, shown: w.shownOfProof(proof) });
  assert.equal(none.detail, "no cosigned checkpoint holds the output of epoch 1");
});

test("rule 3 also holds the plan to the record: a plan that differs from its commitment fails", async () => {
  // A log whose plan says another rate than its commitment (a witness would refuse it; the
  // verifier checks again): the record shown equals the commitment, not the plan.
  const logKey = await noteKey("vrs.test/log2", 0x01);
  const wk = await noteKey("w", 0x04);
  const policy = `log ${logKey.vkey}\nwitness W ${wk.vkey}\nquorum W\n`;
  const log = operatorLog(logKey);
  const T0 = 1_800_000_000_000n;
  const plan = { epoch: 1, previous: 0, iterations: 45_000_000, margin_centi: 150, squarings_per_second: 2_000_000, opened_ms: T0, deadline_ms: T0 + 5_000n };
  const com = { epoch: 1, previous: 0, bets_root: new Uint8Array(32), bet_count: 0, nonce: new Uint8Array(32).fill(1), iterations: 45_000_000, margin_centi: 150, squarings_per_second: 1_000_000, opened_ms: T0, closed_ms: T0 + 3_000n };
  log.append(encodePlan(plan));
  const pl = await log.logged(0, [[wk, 1_800_000_000n]]);
  log.append(encodeCommitment(com));
  const cl = await log.logged(1, [[wk, 1_800_000_001n]]);
  const shown = { epoch: "1", previous_epoch: "0", bets_root: "00".repeat(32), bet_count: "0", nonce: "01".repeat(32), iterations: "45000000", margin_centi: "150", squarings_per_second: "1000000", opened_at_ms: String(T0), closed_at_ms: String(T0 + 3_000n), deadline_ms: String(T0 + 5_000n) };
  assert.equal((await verdict([pl], [cl], policy, { maxRate: 9_000_000 })).passes, true);
  const got = await verdict([pl], [cl], policy, { maxRate: 9_000_000, shown });
  assert.equal(got.detail, "the epoch record shown is not the one logged: squarings_per_second is 1000000, the log's plan says 2000000");
});

test("a log made here verifies; its checkpoints, cosignatures and order are each checked", async () => {
  const logKey = await noteKey("vrs.example.com/log", 0x01);
  const [a, b, c] = await Promise.all(["wa.example", "wb.example", "wc.example"].map((n) => noteKey(n, 0x04)));
  const policy = await w.parsePolicy(`log ${logKey.vkey}\nwitness A ${a.vkey}\nwitness B ${b.vkey}\nwitness C ${c.vkey}\ngroup g 2 A B C\nquorum g\n`);
  const log = operatorLog(logKey);
  const T0 = 1_700_000_000_000n;
  const t = T0 / 1000n;
  // p = 0: no output entry to prove (the previous-output cases are the shared vector's).
  const plan = { epoch: 7, previous: 0, iterations: 90_000_000, margin_centi: 200, squarings_per_second: 5_000_000, opened_ms: T0, deadline_ms: T0 + 20_000n };
  log.append(encodeVoid(3, 1));
  log.append(encodePlan(plan));
  const pl = await log.logged(1, [[a, t], [b, t], [c, t]]);
  const com = { ...plan, bets_root: new Uint8Array(32).fill(9), bet_count: 3, nonce: new Uint8Array(32).fill(4), closed_ms: T0 + 2_000n };
  delete com.deadline_ms;
  log.append(encodeCommitment(com));
  const opts = { maxRate: 9_000_000, deltaMs: 2_000 };
  // S = 9e6 and T = 9e7: at most 10 s from δ (2 s) before the opening to the end of the
  // commitment's cosigned second, so t + 7 is the last second in time.
  let cl = await log.logged(2, [[a, t + 2n], [b, t + 7n], [c, t + 8n]]);
  let got = await verdict([pl], [cl], policy, opts);
  assert.equal(got.detail, "epoch 7: plan (entry 1) and commitment (entry 2) cosigned in time by A, B (quorum 2 of (A, B, C); S = 9000000 squarings/s, δ = 2000 ms)");
  // A later checkpoint (one more entry) where C cosigned earlier: the earliest time counts.
  log.append(encodeVoid(8, 2));
  const later = await log.logged(2, [[c, t + 3n]], 4);
  got = await verdict([pl], [cl, later], policy, opts);
  assert.match(got.detail, /cosigned in time by A, B, C /);
  // The deadline (20 s after the opening, δ 2 s), with S = 1 so that the window is no bound:
  // cosigned 22 s after the opening is in time, 23 s is not.
  const slow = { maxRate: 1, deltaMs: 2_000 };
  cl = await log.logged(2, [[a, t + 22n], [b, t + 22n]], 3);
  assert.equal((await verdict([pl], [cl], policy, slow)).passes, true);
  cl = await log.logged(2, [[a, t + 23n], [b, t + 22n]], 3);
  got = await verdict([pl], [cl], policy, slow);
  assert.equal(got.detail, `epoch 7: cosigned in time by [B], short of the quorum 2 of (A, B, C); not in time: A: plan at ${t} s, commitment at ${t + 23n} s (after the deadline + δ), 26000 ms after the opening`);
  // The opening: a plan cosigned 3 s after it (δ 2 s) is late.
  const latePlan = await log.logged(1, [[a, t + 3n], [b, t + 3n]], 3);
  assert.match((await verdict([latePlan], [await log.logged(2, [[a, t + 4n], [b, t + 4n]], 3)], policy, slow)).detail, /A: plan at \d+ s \(after the opening \+ δ\)/);
  // A cosignature time before the plan's: never in time.
  cl = await log.logged(2, [[a, t - 1n], [b, t - 1n]], 3);
  assert.equal((await verdict([pl], [cl], policy, opts)).passes, false);
  // The log's signature must be the policy's log key: another key under the same origin fails.
  const impostor = await noteKey("vrs.example.com/log", 0x01);
  const forged = await operatorLog(impostor);
  forged.append(encodeVoid(3, 1));
  forged.append(encodePlan(plan));
  const fpl = await forged.logged(1, [[a, t], [b, t]]);
  assert.match((await verdict([fpl], [cl], policy, opts)).detail, /^the plan: checkpoint of entry 1: signature: note has no verifiable signatures$/);
  // A checkpoint of another origin is not this policy's log.
  const other = await noteKey("other.example/log", 0x01);
  const ol = operatorLog(other);
  ol.append(encodePlan(plan));
  assert.match((await verdict([await ol.logged(0, [[a, t]])], [cl], policy, opts)).detail, /the policy names no log with origin "other\.example\/log"/);
  // The plan must come first, and be of the commitment's epoch.
  const ahead = operatorLog(logKey);
  ahead.append(encodeCommitment(com));
  ahead.append(encodePlan(plan));
  got = await verdict([await ahead.logged(1, [[a, t]])], [await ahead.logged(0, [[a, t]], 2)], policy, opts);
  assert.equal(got.detail, "the commitment comes before the plan in the log");
  const other8 = operatorLog(logKey);
  other8.append(encodePlan({ ...plan, epoch: 8 }));
  other8.append(encodeCommitment(com));
  got = await verdict([await other8.logged(0, [[a, t]], 2)], [await other8.logged(1, [[a, t]])], policy, opts);
  assert.equal(got.detail, "the plan is epoch 8's and the commitment epoch 7's");
  // quorum none: no cosignature needed, the log's signature and the paths still are.
  const none = await w.parsePolicy(`log ${logKey.vkey}\nquorum none\n`);
  got = await verdict([pl], [await log.logged(2, [], 3)], none, opts);
  assert.equal(got.passes, true, got.detail);
  assert.match(got.detail, /cosigned in time by no witness \(quorum none \(no cosignature required\);/);
});

test("checkpoint notes are parsed strictly", async () => {
  const note = passing.plan[0].checkpoint;
  const cp = w.parseCheckpointNote(note);
  assert.equal(cp.origin, "vrs.test/log");
  assert.equal(cp.size, 1n);
  assert.equal(cp.text, note.slice(0, note.indexOf("\n\n") + 1));
  assert.equal(cp.signatures.length, 4);
  const lines = note.split("\n");
  for (const bad of [
    note.replace("\n\n", "\n"), // no blank line
    note.slice(0, -1), // no final newline
    note.replace("— ", "- "), // not an em dash
    note.replace("vrs.test/log\n1\n", "vrs.test/log\n01\n"), // a size with a leading zero
    note.replace("vrs.test/log\n1\n", "vrs.test/log\n+1\n"),
    note.replace("vrs.test/log\n1\n", "vrs.test/log\n18446744073709551616\n"),
    note.replace(lines[2], lines[2].slice(0, -1)), // a root that is not base64
    note.replace("vrs.test/log\n", "\n"), // an empty origin
    note.replace("vrs.test/log\n", "vrs.test/log\r\n"), // a control character
    `${cp.text}\n`, // no signature line
    note.replace(`— ${cp.signatures[0].name} `, `— ${cp.signatures[0].name}  `), // a second space
  ]) {
    assert.throws(() => w.parseCheckpointNote(bad), /^CheckFailed: malformed checkpoint/, JSON.stringify(bad));
  }
  // An extension line is allowed, an empty one is not.
  const key = await noteKey("ext.example/log", 0x01);
  const text = `ext.example/log\n0\n${Buffer.from(await v.sha256(new Uint8Array(0))).toString("base64")}\nextension\n`;
  const sig = (t) => `— ext.example/log ${Buffer.from(v.concat(v.hexToBytes(key.id), key.sign(new TextEncoder().encode(t)))).toString("base64")}\n`;
  const verified = await w.verifyCheckpoint(`${text}\n${sig(text)}`, await w.parseVKey(key.vkey));
  assert.equal(verified.size, 0n);
  assert.throws(() => w.parseCheckpointNote(`${text}\n\n${sig(text)}`), /malformed/);
  // A signature line of the log's key that does not verify rejects the note.
  await assert.rejects(w.verifyCheckpoint(`${text}\n${sig("other text\n")}`, await w.parseVKey(key.vkey)), /signature: invalid signature for key ext\.example\/log\+/);
});

test("published signed-note and cosignature/v1 vectors verify", async () => {
  // C2SP signed-note's example, and golang.org/x/mod/sumdb/note's PeterNeumann key.
  const foo = await w.parseVKey("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k");
  assert.deepEqual([foo.alg, foo.id], [1, 0x530d903a]);
  const sig = w.base64ToBytes("Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=");
  assert.equal(v.bytesToHex(sig.subarray(0, 4)), "530d903a");
  await v.verifyEd25519(foo.publicKey, new TextEncoder().encode("This is an example message.\n"), sig.subarray(4));
  const peter = await w.parseVKey("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW");
  assert.equal(peter.id, 0xc74f20a3);
  // A '+' inside the base64 part; a wrong key ID; a witness key (type 0x04).
  assert.equal((await w.parseVKey("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6")).alg, 1);
  await assert.rejects(w.parseVKey("TEST+7997405d+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6"), /the key ID does not match the key/);
  await assert.rejects(w.parseVKey("TEST"), /is not a verifier key/);
  const remora = await w.parseVKey("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2");
  assert.deepEqual([remora.alg, remora.id], [4, 0xda77ade7]);
  // protocol/src/tlog/note.rs's cosignature vector (C2SP tlog-cosignature's layout).
  const witness = await w.parseVKey("witness.example/w1+cc9a7044+BBpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW");
  const line = w.base64ToBytes("zJpwRAAAAABkGFDLJeR//pqzhnEKVvEm2wWbh2RJ6oru5+cUUfm5X9NnlaGr8aSH9QE5RVZD4QGlxl2F5UpVIIi94p178KLfqPPsAA==");
  assert.equal(v.bytesToHex(line.subarray(0, 4)), "cc9a7044");
  const t = v.bytesToBigInt(line.subarray(4, 12));
  assert.equal(t, 1_679_315_147n);
  const text = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
  await v.verifyEd25519(witness.publicKey, w.cosignedMessage(text, t), line.subarray(12));
  await assert.rejects(v.verifyEd25519(witness.publicKey, w.cosignedMessage(text, t + 1n), line.subarray(12)), v.CheckFailed);
});

test("policies: the C2SP shape parses and counts; bad ones are refused with their line", async () => {
  const [lk, x1, x2, x3, y1] = await Promise.all([
    noteKey("log.example", 1),
    noteKey("x1", 4),
    noteKey("x2", 4),
    noteKey("x3", 4),
    noteKey("y1", 4),
  ]);
  const p = await w.parsePolicy(
    `# a comment\nlog ${lk.vkey}\nwitness X1 ${x1.vkey}\nwitness X2 ${x2.vkey} https://x2.example/\n\twitness X3 ${x3.vkey}\r\n\n` +
      `group X 2 X1 X2 X3\nwitness Y1 ${y1.vkey}\ngroup Y any Y1\ngroup XY all X Y\nquorum XY\n`,
  );
  assert.ok(w.quorumSatisfied(p, ["X1", "X3", "Y1"]));
  assert.ok(!w.quorumSatisfied(p, ["X1", "Y1"]));
  assert.ok(!w.quorumSatisfied(p, ["X1", "X2"]));
  assert.ok(!w.quorumSatisfied(p, ["x1", "x3", "y1"]), "policy names, not key names");
  assert.equal(w.describeQuorum(p), "2 of (2 of (X1, X2, X3), 1 of (Y1))");
  assert.equal(p.witnesses[1].url, "https://x2.example/");
  assert.equal(p.logs[0].key.name, "log.example");
  assert.equal((await w.parsePolicy("quorum none")).quorum, null);
  const wv = x1.vkey;
  for (const [text, says] of [
    [`witness a ${wv}\n`, /^the policy has no quorum line$/],
    ["", /no quorum line/],
    [`witness a ${wv}\nquorum b\n`, /^policy line 2: "b" is not defined above$/],
    [`group g any a\nwitness a ${wv}\nquorum g\n`, /^policy line 1: "a" is not defined above$/],
    [`quorum a\nwitness a ${wv}\n`, /^policy line 1: "a" is not defined above$/],
    [`witness a ${wv}\nwitness b ${wv}\nquorum a\n`, /^policy line 2: this key is listed twice$/],
    [`witness a ${wv}\nwitness a ${x2.vkey}\nquorum a\n`, /^policy line 2: the name "a" is taken$/],
    [`witness none ${wv}\nquorum none\n`, /the name "none" is taken/],
    [`witness a ${wv}\ngroup g 2 a\nquorum g\n`, /^policy line 2: "2" is not all, any or 1\.\.=1$/],
    [`witness a ${wv}\ngroup g 0 a\nquorum g\n`, /is not all, any or 1\.\.=1/],
    [`witness a ${wv}\nwitness b ${x2.vkey}\ngroup g 01 a b\nquorum g\n`, /"01" is not all, any/],
    [`witness a ${wv}\ngroup g any a a\nquorum g\n`, /"a" is listed twice/],
    [`witness a ${wv}\ngroup g any\nquorum g\n`, /a group needs at least one member/],
    [`witness a ${wv}\ngroup a any a\nquorum a\n`, /the name "a" is taken/],
    [`witness a ${wv}\nquorum a\nquorum a\n`, /^policy line 3: a policy has exactly one quorum line$/],
    [`witness a ${wv}\nquorum a a\n`, /quorum takes one name/],
    ["quorum none\nfrobnicate\n", /^policy line 2: unknown keyword "frobnicate"$/],
    [`log ${wv}\nquorum none\n`, /^policy line 1: a log key is an Ed25519 note key \(type 0x01\)$/],
    [`witness a ${lk.vkey}\nquorum none\n`, /a witness key is a cosignature\/v1 key \(type 0x04\)/],
    [`log ${lk.vkey}\nlog ${lk.vkey}\nquorum none\n`, /policy line 2: this key is listed twice/],
    [`log ${lk.vkey} https://a https://b\nquorum none\n`, /log takes a vkey and an optional URL/],
    [`witness a\nquorum none\n`, /witness takes a name, a vkey and an optional URL/],
    [`witness a ${wv.replace(x1.id, "00000000")}\nquorum none\n`, /the key ID does not match the key/],
    ["log nokey\nquorum none\n", /"nokey" is not a verifier key/],
    [`quorum none # trailing comment\n`, /quorum takes one name/],
  ]) {
    await assert.rejects(w.parsePolicy(text), (e) => e instanceof RangeError && says.test(e.message), `${JSON.stringify(text)} should fail with ${says}`);
  }
  // A key that is not a point of edwards25519 (y = 2 has no x).
  const notPoint = new Uint8Array(32);
  notPoint[0] = 2;
  const id = v.bytesToHex(v.u32(await w.keyId("bad", 4, notPoint)));
  const vkey = `bad+${id}+${Buffer.from(v.concat(Uint8Array.of(4), notPoint)).toString("base64")}`;
  await assert.rejects(w.parsePolicy(`witness b ${vkey}\nquorum none\n`), /not an Ed25519 public key/);
});

test("entries decode strictly: unknown tags and missing or extra bytes are refused", () => {
  const plan = { epoch: 1, previous: 0, iterations: 3, margin_centi: 150, squarings_per_second: 2, opened_ms: 10, deadline_ms: 20 };
  const bytes = encodePlan(plan);
  const e = w.decodeLogEntry(bytes);
  assert.deepEqual(e, { kind: "plan", epoch: 1n, previous: 0n, iterations: 3n, margin_centi: 150, squarings_per_second: 2n, opened_ms: 10n, deadline_ms: 20n });
  assert.throws(() => w.decodeLogEntry(v.concat(bytes, Uint8Array.of(0))), /^CheckFailed: not a log entry: 1 bytes after the plan entry$/);
  assert.throws(() => w.decodeLogEntry(bytes.slice(0, -1)), /not a log entry: short entry/);
  assert.throws(() => w.decodeLogEntry(new Uint8Array(0)), /short entry \(0 bytes\)/);
  const tag = new TextEncoder().encode("vrs/log/plans");
  assert.throws(() => w.decodeLogEntry(v.concat(v.u8(tag.length), tag, bytes.slice(13))), /unknown tag "vrs\/log\/plans"/);
  assert.throws(() => w.decodeLogEntry(Uint8Array.of(1, 0xff)), /tag is not UTF-8/);
  const c = w.decodeLogEntry(encodeCommitment({ ...plan, bets_root: new Uint8Array(32).fill(3), bet_count: 4, nonce: new Uint8Array(32).fill(5), closed_ms: 15 }));
  assert.equal(c.kind, "commitment");
  assert.deepEqual([c.bet_count, c.closed_ms, v.bytesToHex(c.nonce).slice(0, 4)], [4n, 15n, "0505"]);
  assert.deepEqual(w.decodeLogEntry(encodeVoid(9, 77)), { kind: "void", epoch: 9n, stamped_ms: 77n });
  // The vector's entries, hex to bytes: a plan and a commitment.
  assert.equal(w.decodeLogEntry(v.hexToBytes(passing.plan[0].entry)).kind, "plan");
  assert.equal(w.decodeLogEntry(v.hexToBytes(passing.commitment[0].entry)).kind, "commitment");
});

test("base64 is decoded strictly, without Buffer or atob", () => {
  for (const [s, hex] of [["", ""], ["AA==", "00"], ["AAE=", "0001"], ["AAEC", "000102"], ["+/+/", "fbffbf"]]) {
    assert.equal(v.bytesToHex(w.base64ToBytes(s)), hex, s);
  }
  for (const bad of ["A", "AA", "AA=", "AB==", "AAF=", "A===", "====", "AA==AA==", "AA AA", "AA-_", "AAAA\n", null]) {
    assert.throws(() => w.base64ToBytes(bad, "x"), v.CheckFailed, JSON.stringify(bad));
  }
  const random = Uint8Array.from({ length: 67 }, (_, i) => (i * 37 + 11) & 0xff);
  for (let n = 0; n <= random.length; n++) {
    const s = Buffer.from(random.subarray(0, n)).toString("base64");
    assert.equal(v.bytesToHex(w.base64ToBytes(s)), v.bytesToHex(random.subarray(0, n)));
  }
});

test("options: S and δ are whole numbers; S defaults by group", async () => {
  assert.equal(w.defaultMaxRate("rsa2048"), 9_000_000n);
  assert.equal(w.defaultMaxRate("test512"), 9_000_000n);
  assert.equal(w.defaultMaxRate("hex:c5"), 9_000_000n);
  assert.equal(w.defaultMaxRate("classgroup-1024"), 1_000_000n);
  assert.equal(w.parseMaxRate(9e6), 9_000_000n);
  assert.equal(w.parseDeltaMs(0), 0n);
  for (const bad of [0, 1.5, "9e6", -1, Number.NaN, undefined, 2n ** 64n]) assert.throws(() => w.parseMaxRate(bad), RangeError, String(bad));
  for (const bad of [-1, 0.5, "2000", null]) assert.throws(() => w.parseDeltaMs(bad), RangeError, String(bad));
  await assert.rejects(w.checkWitnessed(passing.plan, passing.commitment, vector.policy, {}), RangeError);
});

test("two policy witnesses whose keys share a name are two witnesses: one's cosignature is not the other's", async () => {
  // A witness's time is its own key's (name and key ID), so one key cannot stand for two
  // members of a group because the verifier gave both the same key name.
  const logKey = await noteKey("vrs.test/log3", 0x01);
  const [k1, k2] = await Promise.all([noteKey("same", 0x04), noteKey("same", 0x04)]);
  const policy = `log ${logKey.vkey}\nwitness A ${k1.vkey}\nwitness B ${k2.vkey}\ngroup both all A B\nquorum both\n`;
  const log = operatorLog(logKey);
  const T0 = 1_800_000_000_000n;
  const plan = { epoch: 1, previous: 0, iterations: 45_000_000, margin_centi: 150, squarings_per_second: 1_000_000, opened_ms: T0, deadline_ms: T0 + 5_000n };
  log.append(encodePlan(plan));
  const { deadline_ms, ...shared } = plan;
  log.append(encodeCommitment({ ...shared, bets_root: new Uint8Array(32), bet_count: 0, nonce: new Uint8Array(32), closed_ms: T0 + 1_000n }));
  const t = T0 / 1000n;
  const one = await verdict([await log.logged(0, [[k1, t]], 1)], [await log.logged(1, [[k1, t + 1n]])], policy, { maxRate: 9_000_000 });
  assert.equal(one.detail, `epoch 1: cosigned in time by [A], short of the quorum 2 of (A, B)`);
  const both = await verdict([await log.logged(0, [[k1, t], [k2, t]], 1)], [await log.logged(1, [[k1, t + 1n], [k2, t + 1n]])], policy, { maxRate: 9_000_000 });
  assert.equal(both.passes, true, both.detail);
  assert.match(both.detail, /cosigned in time by A, B /);
});

test("a quorum two disjoint sets meet is noted, in vrs verify's words", async () => {
  const lines = vector.policy.split("\n").filter((l) => l.startsWith("log ") || l.startsWith("witness "));
  assert.deepEqual(w.policyNotes(await w.parsePolicy(vector.policy)), []);
  const anyone = await w.parsePolicy([...lines, "group g any W0 W1 W2", "quorum g", ""].join("\n"));
  assert.deepEqual(w.disjointQuorums(anyone), [["W0"], ["W1", "W2"]]);
  assert.deepEqual(w.policyNotes(anyone), [
    "witnessed: the policy's quorum is met by two disjoint sets of witnesses ([W0] and [W1, W2]): two histories of the log, each cosigned by one set, both pass; a quorum whose every two sets share a witness (a majority) excludes that (docs/PROTOCOL.md §21)",
  ]);
  assert.equal(w.disjointQuorums(await w.parsePolicy([...lines, "quorum none", ""].join("\n"))), null);
});
