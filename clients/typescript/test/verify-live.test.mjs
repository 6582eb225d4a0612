// The verifier against a live `vrs serve` (test/server.mjs): games of every kind verify, every
// step is reported in PROTOCOL.md §13's order, and for every step one alteration of what the
// server published (served through a fetch that replays recorded answers, one member changed)
// fails exactly that step among others. With an EVM node ($GANACHE_URL and
// $VRS_ANCHOR_PRIVATE_KEY, which the Rust test that runs `npm test` provides) an anchored game's
// `anchor_inclusion` is checked and tampered too.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { FAST, skipReason, startServer, waitUntil } from "./server.mjs";
import { verifyGame } from "../src/vrs-verify.mjs";

const GROUP = "test512";
const skip = skipReason();
const anchorSkip =
  skip || (process.env.GANACHE_URL && process.env.VRS_ANCHOR_PRIVATE_KEY ? false : "no EVM node: set GANACHE_URL and VRS_ANCHOR_PRIVATE_KEY (the Rust test does)");

async function post(base, path, body) {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function get(base, path) {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: await res.json() };
}

/** Waits until the game verifies with no step still pending, and returns that run. */
async function settled(base, id) {
  return waitUntil(`game ${id} fully verifiable`, async () => {
    const v = await get(base, `/api/v1/verify/${id}`);
    if (v.status !== 200) return null;
    const r = await verifyGame(base, id, null, { group: GROUP });
    return r.steps.some((s) => s.pending) ? null : r;
  }, 60_000);
}

/** A fetch that records every answer the verifier asked for (path → {status, text}). */
function recorder(base) {
  const cache = new Map();
  const fetchFn = async (url, init) => {
    const res = await fetch(url, init);
    const text = await res.text();
    cache.set(url.slice(base.length) || "/", { status: res.status, text });
    return { status: res.status, text: async () => text };
  };
  return { cache, fetchFn };
}

/** A fetch that serves a recorded cache with `alter(json)` applied to a copy (path → body). */
function replaying(base, cache, alter) {
  const bodies = new Map([...cache].map(([path, r]) => [path, { status: r.status, body: JSON.parse(r.text) }]));
  alter((path) => {
    const r = bodies.get(path);
    if (!r) throw new Error(`nothing recorded at ${path}: ${[...bodies.keys()].join(", ")}`);
    return r.body;
  });
  return async (url) => {
    const r = bodies.get(url.slice(base.length) || "/");
    if (!r) return { status: 404, text: async () => JSON.stringify({ error: "not recorded" }) };
    return { status: r.status, text: async () => JSON.stringify(r.body) };
  };
}

const flip = (hex) => {
  const i = Math.floor(hex.length / 2);
  return hex.slice(0, i) + (hex[i] === "1" ? "2" : "1") + hex.slice(i + 1);
};

/** Runs each (step, alteration) case on a recorded game; each must fail its step. */
async function everyAlterationFails(base, id, cases) {
  const rec = recorder(base);
  const honest = await verifyGame(base, id, null, { group: GROUP, fetch: rec.fetchFn });
  assert.equal(honest.verified, true, JSON.stringify(honest.steps.filter((s) => !s.passed)));
  // Replaying the recording unaltered still verifies: the harness itself changes nothing.
  const same = await verifyGame(base, id, null, { group: GROUP, fetch: replaying(base, rec.cache, () => {}) });
  assert.equal(same.verified, true);
  const names = new Set(honest.steps.map((s) => s.name));
  for (const [step, alter] of cases) {
    assert.ok(names.has(step), `${step} is one of this game's steps: ${[...names]}`);
    const r = await verifyGame(base, id, null, { group: GROUP, fetch: replaying(base, rec.cache, alter) });
    const failed = r.steps.filter((s) => !s.passed).map((s) => s.name);
    assert.equal(r.verified, false, `altered for ${step}: still verified`);
    assert.ok(failed.includes(step), `altered for ${step}: ${step} should fail, failed: ${failed}`);
  }
  // Every step of the game has its case.
  const covered = new Set(cases.map(([step]) => step));
  assert.deepEqual([...names].filter((n) => !covered.has(n)), [], "steps without an alteration");
}

describe("the verifier against a live server", { skip }, () => {
  let server;
  const games = {};

  before(async () => {
    server = await startServer();
    const base = server.url;
    // Bets placed once epoch 1 has resolved land in epoch 2 or later, which has a predecessor.
    await waitUntil("epoch 1 resolved", async () => (await get(base, "/api/v1/entropy")).status === 200);
    const place = async (path, body) => {
      const r = await post(base, path, body);
      assert.equal(r.status, 202, JSON.stringify(r.body));
      return r.body.game_id;
    };
    games.dice = await place("/api/v1/games/dice/bet", { bet_type: "exact", target: 7, amount: 2.5, player_seed: "ts-dice" });
    games.sicbo = await place("/api/v1/games/sicbo/bet", { bet_type: "combo", combo: [2, 5], amount: 1, player_seed: "ts-sicbo" });
    games.rng = await place("/api/v1/rng/generate", { client_seed: "ts-rng" });
    games.instant = await waitUntil("an instant bet served from the pool", async () => {
      const r = await post(base, "/api/v1/games/dice/bet", { bet_type: "odd", amount: 1, player_seed: "ts-instant", instant: true });
      return r.status === 200 ? r.body.game_id : null;
    });
  });
  after(async () => server && server.stop());

  test("games of every kind verify, in §13's order, the server's verdict ignored", async () => {
    const base = server.url;
    const epochSteps = ["group", "bet_leaf", "merkle_inclusion", "bets_root", "epoch_chain", "epoch_record", "epoch_input", "vdf_proof", "timing", "rng_value", "dice", "payout", "acceptance"];
    for (const kind of ["dice", "sicbo", "rng"]) {
      const r = await settled(base, games[kind]);
      assert.equal(r.verified, true, kind);
      assert.deepEqual(r.steps.map((s) => s.name), epochSteps, kind);
      assert.equal(r.server_verified, true);
      const result = (await get(base, `/api/v1/games/${games[kind]}`)).body.result;
      if (kind === "rng") assert.deepEqual(r.dice, []);
      else assert.deepEqual(r.dice, ["die1", "die2", "die3"].map((d) => result.outcome[d]).filter((d) => d !== undefined), kind);
      assert.match(r.steps.find((s) => s.name === "acceptance").detail, /signed|key/);
    }
    const r = await settled(base, games.instant);
    assert.equal(r.verified, true);
    assert.equal(r.pool_served, true);
    assert.deepEqual(r.steps.map((s) => s.name), [
      "group", "bet_leaf", "pool_batch_chain", "pool_anchor", "pool_batch_seed", "pool_entry_input", "vdf_proof",
      "pool_inclusion", "pool_committed", "pool_game_id", "pool_bet_inclusion", "rng_value", "dice", "payout", "acceptance",
    ]);
  });

  test("the group is the verifier's: a test512 server fails rsa2048, the default", async () => {
    const r = await verifyGame(server.url, games.dice);
    assert.equal(r.failed_step, "group");
    assert.deepEqual(r.steps.filter((s) => !s.passed).map((s) => s.name), ["group"]);
  });

  test("an epoch game: one alteration per step fails that step", async () => {
    const id = games.dice;
    const v = `/api/v1/verify/${id}`;
    const e = (await get(server.url, v)).body.proof.vdfEpoch;
    assert.ok(e >= 2, "the game's epoch has a predecessor");
    const ep = `/api/v1/epochs/${e}`;
    const proof = (at) => at(v).proof;
    const step = (at, action) => at(v).replay_steps.find((s) => s.action === action);
    await everyAlterationFails(server.url, id, [
      ["group", (at) => { proof(at).modulus = "test1024"; }],
      ["bet_leaf", (at) => { proof(at).bet.player_id = "mallory"; }],
      ["merkle_inclusion", (at) => { proof(at).leaf_index += 1; }],
      ["bets_root", (at) => { at(ep).leaf_hashes.push("00".repeat(32)); }],
      ["epoch_chain", (at) => { proof(at).previous_output = flip(proof(at).previous_output); }],
      // Another run of the epoch published in its record: only the record's deadline differs.
      ["epoch_record", (at) => { at(ep).deadline_ms += 1; }],
      ["epoch_input", (at) => { proof(at).epoch_seed = flip(proof(at).epoch_seed); }],
      ["vdf_proof", (at) => { proof(at).pi = flip(proof(at).pi); at(ep).pi = proof(at).pi; }],
      // y of epoch e − 1 stored before epoch e closed: e's games could be chosen knowing it.
      ["timing", (at) => { at(`/api/v1/epochs/${e - 1}`).resolved_at_ms = at(ep).closed_at_ms - 1; }],
      ["rng_value", (at) => { proof(at).rngValue = flip(proof(at).rngValue); }],
      ["dice", (at) => { const d = step(at, "dice_rolled").dice; d[0] = (d[0] % 6) + 1; }],
      ["payout", (at) => { const b = step(at, "bet_evaluated"); b.won = !b.won; }],
      ["acceptance", (at) => { proof(at).acceptance.signature = flip(proof(at).acceptance.signature); }],
    ]);
  });

  test("a pool-served game: one alteration per step fails that step", async () => {
    const id = games.instant;
    const v = `/api/v1/verify/${id}`;
    const p0 = (await get(server.url, v)).body.proof;
    const batch = `/api/v1/pool/batches/${p0.pool_batch}`;
    const proof = (at) => at(v).proof;
    const step = (at, action) => at(v).replay_steps.find((s) => s.action === action);
    await everyAlterationFails(server.url, id, [
      ["group", (at) => { proof(at).modulus = "rsa2048"; }],
      ["bet_leaf", (at) => { proof(at).bet.amount = "9.00"; }],
      ["pool_batch_chain", (at) => { proof(at).batch_first_index += 1; }],
      ["pool_anchor", (at) => { proof(at).anchor_y = flip(proof(at).anchor_y); }],
      ["pool_batch_seed", (at) => { proof(at).batch_seed = flip(proof(at).batch_seed); }],
      ["pool_entry_input", (at) => { proof(at).secret = flip(proof(at).secret); }],
      ["vdf_proof", (at) => { proof(at).l = flip(proof(at).l); }],
      ["pool_inclusion", (at) => { proof(at).batch_root = flip(proof(at).batch_root); }],
      ["pool_committed", (at) => { proof(at).batch_committed_at_ms = proof(at).bet_created_at_ms + 1; at(batch).committed_at_ms = proof(at).batch_committed_at_ms; }],
      ["pool_game_id", (at) => { at(batch).served = at(batch).served.filter((s) => s.game_id !== id); }],
      ["pool_bet_inclusion", (at) => { proof(at).bet_epoch.bets_root = flip(proof(at).bet_epoch.bets_root); }],
      ["rng_value", (at) => { step(at, "randomness_derived").rngValue = flip(step(at, "randomness_derived").rngValue); }],
      ["dice", (at) => { const d = step(at, "dice_rolled").dice; d[1] = (d[1] % 6) + 1; }],
      ["payout", (at) => { const b = step(at, "bet_evaluated"); b.payout = b.payout === "0.00" ? "2.00" : "0.00"; }],
      ["acceptance", (at) => { at("/").acceptance_keys = [{ public_key: "00".repeat(32), since_ms: 0 }]; }],
    ]);
  });

  test("a raw RNG request: one alteration per step fails that step", async () => {
    const id = games.rng;
    const v = `/api/v1/verify/${id}`;
    const proof = (at) => at(v).proof;
    const step = (at, action) => at(v).replay_steps.find((s) => s.action === action);
    const e = (await get(server.url, v)).body.proof.vdfEpoch;
    const ep = `/api/v1/epochs/${e}`;
    await everyAlterationFails(server.url, id, [
      ["group", (at) => { proof(at).veo_class = "VEO-WESOLOWSKI-RSA2048"; }],
      ["bet_leaf", (at) => { proof(at).bet.player_seed = "another"; }],
      ["merkle_inclusion", (at) => { proof(at).leaf_hash = flip(proof(at).leaf_hash); }],
      ["bets_root", (at) => { at(ep).bet_count += 1; }],
      ["epoch_chain", (at) => { at(ep).previous_epoch = e; }],
      ["epoch_record", (at) => { at(ep).status = "closed"; }],
      ["epoch_input", (at) => { proof(at).x = flip(proof(at).x); at(ep).x = proof(at).x; }],
      ["vdf_proof", (at) => { proof(at).y = flip(proof(at).y); at(ep).y = proof(at).y; }],
      // Epoch e passed off as version 1, as if it had made no timing commitment: a downgrade.
      ["timing", (at) => { at(ep).version = 1; proof(at).timing.version = 1; }],
      ["rng_value", (at) => { step(at, "randomness_derived").rngValue = "00".repeat(32); }],
      ["dice", (at) => { step(at, "dice_rolled").dice = [3, 4]; }],
      ["payout", (at) => { step(at, "bet_evaluated").payout = "1.00"; }],
      ["acceptance", (at) => { proof(at).acceptance.accepted_at_ms -= 1; }],
    ]);
  });
});

describe("an anchored server", { skip: anchorSkip }, () => {
  let server;
  before(async () => {
    server = await startServer([...FAST, "--anchor-rpc-url", process.env.GANACHE_URL, "--anchor-every", "2"]);
  });
  after(async () => server && server.stop());

  test("an anchored game's anchor_inclusion passes, and fails for an altered path, root, place or size", async () => {
    const base = server.url;
    const r = await post(base, "/api/v1/games/sicbo/bet", { bet_type: "big", amount: 1, player_seed: "ts-anchor" });
    assert.equal(r.status, 202);
    const id = r.body.game_id;
    const v = `/api/v1/verify/${id}`;
    await waitUntil("the game's epoch in a confirmed anchor batch", async () => {
      const got = await get(base, v);
      return got.status === 200 && got.body.proof.anchor && got.body.proof.anchor.tx ? got : null;
    }, 90_000);
    const run = await verifyGame(base, id, null, { group: GROUP });
    assert.equal(run.verified, true, JSON.stringify(run.steps.filter((s) => !s.passed)));
    const step = run.steps.find((s) => s.name === "anchor_inclusion");
    assert.ok(step, "anchor_inclusion is checked");
    assert.match(step.detail, /under anchor batch \d+'s root/);
    const proof = (at) => at(v).proof;
    const rec = recorder(base);
    await verifyGame(base, id, null, { group: GROUP, fetch: rec.fetchFn });
    for (const alter of [
      (at) => { proof(at).anchor.root = flip(proof(at).anchor.root); },
      (at) => { proof(at).anchor.leaf_index += 1; },
      (at) => { proof(at).anchor.calldata = flip(proof(at).anchor.calldata); },
      // A batch whose ranges do not hold this epoch where the leaf is shown.
      (at) => { proof(at).anchor.epochs.first += 1; },
      (at) => { proof(at).anchor.tree_size += 1; },
    ]) {
      const bad = await verifyGame(base, id, null, { group: GROUP, fetch: replaying(base, rec.cache, alter) });
      assert.deepEqual(bad.steps.filter((s) => !s.passed).map((s) => s.name), ["anchor_inclusion"]);
    }
  });
});
