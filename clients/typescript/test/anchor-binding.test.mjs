// Offline tests of an anchor batch's binding to the witnessed log (docs/PROTOCOL.md §16,
// "Binding"): the shared vector docs/test-vectors/anchor-binding.json, written by the Rust
// reference (protocol/src/tlog/witnessed.rs), passed exactly as marked with the same calldata
// and words, and tampered bound entries. No server.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as v from "../src/vrs-verify.mjs";
import * as w from "../src/vrs-witnessed.mjs";

const root = new URL("../../../", import.meta.url);
const vector = JSON.parse(await readFile(fileURLToPath(new URL("docs/test-vectors/anchor-binding.json", root)), "utf8"));
const policy = await w.parsePolicy(vector.policy);

/** The anchor batch the case's proof claims, from its anchor members. */
const claimOf = (c) => ({
  batch: c.batch,
  first_epoch: c.epochs.first,
  last_epoch: c.epochs.last,
  pool_from: c.pool_batches.from,
  pool_to: c.pool_batches.to,
  notary_from: c.notary_batches.from,
  notary_to: c.notary_batches.to,
  root: v.hexToBytes(c.root),
});

async function verdict(c, log = c.log) {
  try {
    const got = await w.expectedAnchorCalldata(claimOf(c), c.shown_version === 1, log, c.with_policy ? policy : null);
    return { passes: true, detail: got.detail, calldata: got.calldata };
  } catch (e) {
    if (!(e instanceof v.CheckFailed)) throw e;
    return { passes: false, detail: e.message, calldata: null };
  }
}

test("the shared vector: exactly the cases marked passes pass, with the Rust calldata and words", async () => {
  assert.ok(vector.cases.some((c) => c.passes) && vector.cases.some((c) => !c.passes));
  for (const c of vector.cases) {
    assert.deepEqual(await verdict(c), { passes: c.passes, detail: c.detail, calldata: c.calldata }, c.name);
  }
});

test("version-2 calldata has its documented bytes", async () => {
  const c = vector.cases.find((c) => c.passes && c.shown_version === 2);
  assert.ok(c.calldata.startsWith(v.CALLDATA_V2_PREFIX));
  const data = v.hexToBytes(c.calldata.slice(2));
  assert.equal(data.length, 94);
  const view = new DataView(data.buffer, data.byteOffset);
  assert.equal(view.getBigUint64(14), BigInt(c.batch));
  assert.equal(view.getBigUint64(22), BigInt(c.log.bound.index + 1));
  assert.equal(v.bytesToHex(data.slice(62)), c.root);
});

test("a tampered bound entry fails under the policy", async () => {
  const c = vector.cases.find((c) => c.passes && c.with_policy);
  const b = c.log.bound;
  const flipped = b.entry.slice(0, -2) + (b.entry.endsWith("00") ? "01" : "00");
  for (const bound of [
    { ...b, entry: flipped },
    { ...b, proof: b.proof.slice(1) },
    { ...b, checkpoint: b.checkpoint.replace("\n\n", "\nextra\n\n") },
  ]) {
    const got = await verdict(c, { ...c.log, bound });
    assert.equal(got.passes, false);
    assert.match(got.detail, /^anchor\.log: /);
  }
});

test("quorum none requires no cosignature", async () => {
  const none = await w.parsePolicy(vector.policy.replace("quorum all3", "quorum none"));
  const c = vector.cases.find((c) => c.passes && c.with_policy);
  const got = await w.expectedAnchorCalldata(claimOf(c), false, { ...c.log, cosigned: [] }, none);
  assert.equal(got.calldata, c.calldata);
  assert.ok(got.detail.endsWith("cosigned by [])"), got.detail);
});
