// The API client (src/client.mjs) against a live `vrs serve` (test/server.mjs: $VRS_BIN, the fast
// test settings, a notary API key): every endpoint of both APIs, every bet type of both games,
// instant bets, raw RNG, waiting, verification (the server's and the package verifier's),
// epochs and pool batches, the notary with its API key and Idempotency-Key, and the typed
// errors carrying the server's JSON. Without $VRS_BIN those tests are skipped, saying why.
//
// A second part needs no server: what a live server cannot be made to answer on demand (429,
// 5xx, a body that is not JSON, a request that never ends) through a fetch double, the headers
// and URLs the client sends, and the arguments it refuses before sending anything.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { skipReason, startServer, waitUntil } from "./server.mjs";
import {
  ApiError,
  BadRequest,
  Conflict,
  GAMES,
  NetworkError,
  NotFound,
  PaymentRequired,
  RateLimited,
  ServerError,
  TimeoutError,
  VrsClient,
  VrsError,
} from "../src/client.mjs";

const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const MONEY = /^\d+\.\d{2}$/;
const DICE_TYPES = ["exact", "over7", "under7", "odd", "even"];
const SICBO_TYPES = ["big", "small", "odd", "even", "total", "single", "double", "triple", "anyTriple", "combo"];

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const digest = () => sha256(randomUUID());

/** Whether a bet wins with these dice, by the rules of docs/GAMES.md §3–4 (written here again). */
function wins(game, { bet_type: type, target, combo }, dice) {
  const total = dice.reduce((a, b) => a + b, 0);
  const count = (face) => dice.filter((d) => d === face).length;
  if (game === "dice") {
    return { exact: total === target, over7: total > 7, under7: total < 7, odd: total % 2 === 1, even: total % 2 === 0 }[type];
  }
  const triple = dice[0] === dice[1] && dice[1] === dice[2];
  return {
    big: total >= 11 && total <= 17 && !triple,
    small: total >= 4 && total <= 10 && !triple,
    odd: total % 2 === 1 && !triple,
    even: total % 2 === 0 && !triple,
    total: total === target,
    single: count(target) >= 1,
    double: count(target) >= 2,
    triple: count(target) === 3,
    anyTriple: triple,
    combo: combo !== undefined && count(combo[0]) >= 1 && count(combo[1]) >= 1,
  }[type];
}

const diceOf = (outcome) => [outcome.die1, outcome.die2, outcome.die3].filter((d) => d !== undefined);

/** Asserts that `promise` rejects with an instance of `kind`, and returns the error. */
async function rejectsWith(promise, kind) {
  let caught;
  await assert.rejects(promise, (e) => {
    caught = e;
    assert.ok(e instanceof kind, `expected ${kind.name}, got ${e && e.name}: ${e && e.message}`);
    return true;
  });
  return caught;
}

// ---------------------------------------------------------------------------------------------
// Live server
// ---------------------------------------------------------------------------------------------

const skip = skipReason();

describe("VrsClient against a live vrs serve", { skip: skip ?? false }, () => {
  let server;
  /** With the notary API key. */
  let vrs;
  /** Without one. */
  let anonymous;

  before(async () => {
    server = await startServer();
    vrs = new VrsClient(`${server.url}/`, { apiKey: server.apiKey });
    anonymous = new VrsClient(server.url);
  });

  after(async () => {
    await server?.stop();
  });

  test("info, health, catalog and stats", async () => {
    const info = await vrs.info();
    assert.equal(info.version, "0.2.0");
    assert.equal(info.database, "connected");
    assert.match(info.acceptance_key, HEX64);
    assert.ok(
      info.acceptance_keys.some((k) => k.public_key === info.acceptance_key && Number.isInteger(k.since_ms)),
      "the signing key is among the published acceptance keys",
    );
    assert.equal(vrs.baseUrl, server.url, "the trailing slash is dropped");

    const health = await vrs.health();
    assert.equal(health.status, "ok");
    assert.equal(health.database, "connected");

    const catalog = await vrs.catalog();
    const byType = Object.fromEntries(catalog.games.map((g) => [g.type, g]));
    assert.deepEqual(byType.dice.bet_types, DICE_TYPES);
    assert.deepEqual(byType.sicbo.bet_types, SICBO_TYPES);
    assert.equal(byType.dice.endpoint, "/api/v1/games/dice/bet");
    assert.equal(catalog.raw_rng.endpoint, "/api/v1/rng/generate");

    const stats = await vrs.stats();
    assert.ok(stats.epoch.current >= 1, `current epoch ${stats.epoch.current}`);
    assert.equal(stats.epoch.modulus, "test512");
    assert.equal(typeof stats.total_games, "number");
  });

  test("entropy, and the epoch it comes from (with a leaf range)", async () => {
    const entropy = await waitUntil("an epoch resolved", () => vrs.entropy());
    assert.ok(entropy.epoch >= 1);
    assert.equal(entropy.source, "vdf_epoch");
    assert.equal(entropy.entropy_hash, sha256(Buffer.from(entropy.entropy, "hex")), "entropy_hash is SHA-256 of the entropy");
    const epoch = await vrs.epoch(entropy.epoch);
    assert.equal(epoch.epoch, entropy.epoch);
    assert.equal(epoch.status, "resolved");
    assert.equal(epoch.y, entropy.entropy, "the entropy is the epoch's y");
    assert.equal(epoch.leaf_hashes.length, epoch.bet_count);
    assert.equal(epoch.leaf_from, undefined, "no range asked, no leaf_from");
    const ranged = await vrs.epoch(entropy.epoch, { leafFrom: 0, leafLimit: 0 });
    assert.equal(ranged.leaf_from, 0);
    assert.deepEqual(ranged.leaf_hashes, []);
  });

  // Every bet type of both games, placed together on the epoch path and waited for together.
  const CASES = [
    ["dice", { bet_type: "exact", target: 7 }],
    ["dice", { bet_type: "over7" }],
    ["dice", { bet_type: "under7" }],
    ["dice", { bet_type: "odd" }],
    ["dice", { bet_type: "even" }],
    ["sicbo", { bet_type: "big" }],
    ["sicbo", { bet_type: "small" }],
    ["sicbo", { bet_type: "odd" }],
    ["sicbo", { bet_type: "even" }],
    ["sicbo", { bet_type: "total", target: 10 }],
    ["sicbo", { bet_type: "single", target: 3 }],
    ["sicbo", { bet_type: "double", target: 2 }],
    ["sicbo", { bet_type: "triple", target: 6 }],
    ["sicbo", { bet_type: "anyTriple" }],
    ["sicbo", { bet_type: "combo", combo: [2, 5] }],
  ];
  describe("every bet type resolves, by the documented rules", { concurrency: true }, () => {
    for (const [game, request] of CASES) {
      test(`${game} ${request.bet_type}`, async () => {
        const place = game === "dice" ? vrs.dice.bind(vrs) : vrs.sicbo.bind(vrs);
        const bet = await place({ ...request, amount: 2.5, player_seed: `ts-${game}-${request.bet_type}`, instant: false });
        assert.equal(bet.accepted, true);
        assert.match(bet.game_id, HEX32);
        assert.equal(bet.poll_url, `/api/v1/games/${bet.game_id}`);
        assert.equal(bet.acceptance.kind, "epoch");
        assert.equal(bet.acceptance.epoch, bet.resolves_at_epoch);

        const resolved = await vrs.wait(bet.game_id, { timeoutMs: 30_000, intervalMs: 50 });
        assert.equal(resolved.status, "resolved");
        const r = resolved.result;
        assert.equal(r.game, game);
        assert.equal(r.game_id, bet.game_id);
        assert.equal(r.bet_type, request.bet_type);
        assert.equal(r.amount, "2.50");
        assert.equal(r.epoch, bet.resolves_at_epoch);
        assert.equal(r.target, request.target ?? null);
        assert.deepEqual(r.combo, request.combo ?? null);
        const dice = diceOf(r.outcome);
        assert.equal(dice.length, game === "dice" ? 2 : 3);
        assert.ok(dice.every((d) => Number.isInteger(d) && d >= 1 && d <= 6), `dice ${dice}`);
        assert.equal(r.outcome.total, dice.reduce((a, b) => a + b, 0));
        assert.equal(r.won, wins(game, request, dice), `${request.bet_type} with ${dice}`);
        assert.match(r.payout, MONEY);
        assert.ok(r.won ? Number(r.payout) > 2.5 : r.payout === "0.00", `payout ${r.payout}, won ${r.won}`);
        assert.match(r.rngValue, HEX64);

        const verification = await vrs.verification(bet.game_id);
        assert.equal(verification.game_id, bet.game_id);
        assert.equal(verification.verified, true, JSON.stringify(verification.checks.filter((c) => !c.passed)));
        assert.equal(verification.proof.vdfEpoch, bet.resolves_at_epoch);
        assert.equal(verification.proof.rngValue, r.rngValue);
        assert.deepEqual(
          verification.replay_steps.map((s) => s.action),
          ["bet_committed", "vdf_epoch_published", "randomness_derived", "dice_rolled", "bet_evaluated"],
        );
      });
    }
  });

  test("a placed bet is pending at once, and listed in recent", async () => {
    const bet = await vrs.dice({ bet_type: "odd", player_id: "ts-recent", instant: false });
    const pending = await vrs.game(bet.game_id);
    assert.equal(pending.status, "pending");
    assert.equal(pending.resolves_at_epoch, bet.resolves_at_epoch);
    assert.equal(await vrs.verification(bet.game_id), null, "202 from verify is null");
    const recent = await vrs.recent();
    assert.ok(recent.length <= 20);
    const listed = recent.find((g) => g.game_id === bet.game_id);
    assert.ok(listed, "the bet is listed in recent");
    assert.equal(listed.game, "dice");
    assert.equal(listed.player_id, "ts-recent");
  });

  test("instant bets are served from the pool, and their batch lists them", async () => {
    await waitUntil("the pool filled", async () => (await vrs.stats()).pool.depth >= 2);
    const dice = await vrs.dice({ bet_type: "over7", instant: true });
    assert.equal(dice.pool_served, true, dice.message);
    assert.equal(dice.status, "resolved");
    assert.match(dice.result.rngValue, HEX64);
    assert.equal(dice.result.outcome.die3, undefined);
    assert.equal(dice.result.won, dice.result.outcome.total > 7);
    assert.equal(dice.acceptance.kind, "pool");
    assert.equal(dice.acceptance.pool_index, dice.pool_index);
    assert.equal(dice.verify_url, `/api/v1/verify/${dice.game_id}`);

    const sicbo = await vrs.sicbo({ bet_type: "triple", target: 1, instant: true });
    assert.equal(sicbo.pool_served, true, sicbo.message);
    assert.equal(diceOf(sicbo.result.outcome).length, 3);

    // The game reads back resolved at once, with a pool proof.
    const game = await vrs.game(dice.game_id);
    assert.equal(game.status, "resolved");
    assert.equal(game.result.pool_served, true);
    assert.equal(game.result.proof.pool_index, dice.pool_index);

    // Its batch: the one whose index range holds the entry.
    const batchNumber = game.result.proof.pool_batch;
    const batch = await vrs.poolBatch(batchNumber);
    assert.equal(batch.number, batchNumber);
    assert.ok(batch.first_index <= dice.pool_index && dice.pool_index < batch.first_index + batch.size);
    assert.equal(batch.leaf_hashes.length, batch.size);
    assert.ok(batch.served.some((s) => s.game_id === dice.game_id && s.index === dice.pool_index), "the batch lists the served entry");
    assert.match(batch.root, HEX64);
  });

  test("raw RNG, with and without a client seed", async () => {
    const seeded = await vrs.rng("ts-seed-1");
    assert.equal(seeded.accepted, true);
    assert.match(seeded.request_id, /./);
    assert.equal(seeded.acceptance.kind, "epoch");
    const plain = await vrs.rng();
    const [a, b] = await Promise.all([vrs.wait(seeded.game_id), vrs.wait(plain.game_id)]);
    assert.equal(a.result.game, "rng");
    assert.equal(a.result.request_id, seeded.request_id);
    assert.equal(a.result.client_seed, "ts-seed-1");
    assert.equal(a.result.random, a.result.rngValue);
    assert.match(a.result.random, HEX64);
    assert.equal(b.result.client_seed, null);
    assert.notEqual(a.result.random, b.result.random);
  });

  test("wait: TimeoutError on a pending game past a tiny timeout, the signal's reason on abort", async () => {
    const bet = await vrs.dice({ bet_type: "even", instant: false });
    const e = await rejectsWith(vrs.wait(bet.game_id, { timeoutMs: 1 }), TimeoutError);
    assert.equal(e.gameId, bet.game_id);
    assert.equal(e.timeoutMs, 1);
    assert.ok(e instanceof VrsError);
    const controller = new AbortController();
    controller.abort(new Error("stop waiting"));
    await assert.rejects(vrs.wait(bet.game_id, { signal: controller.signal }), /stop waiting/);
    // And the same game resolves when given the time.
    assert.equal((await vrs.wait(bet.game_id)).status, "resolved");
  });

  test("verify: the package verifier recomputes an epoch game (waiting for it) and an instant one", async () => {
    const bet = await vrs.sicbo({ bet_type: "combo", combo: [1, 6], player_seed: "ts-verify", instant: false });
    const seen = [];
    const report = await vrs.verify(bet.game_id, { group: "test512", onStep: (s) => seen.push(s), timeoutMs: 30_000 });
    assert.equal(report.game_id, bet.game_id);
    assert.equal(report.verified, true, JSON.stringify(report.steps.filter((s) => !s.passed)));
    assert.equal(report.status, "verified");
    assert.equal(report.failed_step, null);
    assert.equal(report.pool_served, false);
    assert.equal(report.dice.length, 3);
    assert.equal(report.server_verified, true);
    assert.ok(report.steps.length >= 5, `${report.steps.length} steps`);
    assert.deepEqual(seen, report.steps, "onStep saw every step");

    await waitUntil("the pool has an entry", async () => (await vrs.stats()).pool.depth >= 1);
    const instant = await vrs.dice({ bet_type: "exact", target: 4, instant: true });
    assert.equal(instant.pool_served, true, instant.message);
    const pool = await vrs.verify(instant.game_id, { group: "test512" });
    assert.equal(pool.verified, true, JSON.stringify(pool.steps.filter((s) => !s.passed)));
    assert.equal(pool.pool_served, true);
    assert.equal(pool.pool_index, instant.pool_index);
    assert.deepEqual(pool.dice, diceOf(instant.result.outcome));

    // The group is the verifier's choice: by default rsa2048, which this test server is not.
    const strict = await vrs.verify(instant.game_id);
    assert.equal(strict.verified, false);
    assert.equal(strict.failed_step, "group");
    await rejectsWith(vrs.verify("0".repeat(32)), NotFound);
  });

  test("notary: schemas, status, receipts with the API key and an Idempotency-Key", async () => {
    const schemas = await vrs.notarySchemas();
    assert.deepEqual(
      schemas.schemas.map((s) => s.id),
      ["sha256", "keccak256", "jcs-sha256", "vrs-game-result"],
    );
    const status = await vrs.notaryStatus();
    assert.equal(status.service, "vrs notary");
    assert.ok(status.payment_methods.includes("api_key"));

    const hash = digest();
    const key = `ts-${randomUUID()}`;
    const request = { schema: "sha256", payloadHash: hash.toUpperCase(), metadata: { name: "report.pdf", n: 1 }, idempotencyKey: key };
    const first = await vrs.notarize(request);
    assert.match(first.receipt_id, HEX32);
    assert.equal(first.payload_hash, hash, "the receipt spells the hash canonically");
    assert.equal(first.schema, "sha256");
    assert.deepEqual(first.metadata, { name: "report.pdf", n: 1 });
    assert.equal(first.payment.method, "api_key");

    // Same key, same body: the first receipt again, not a second one.
    const again = await vrs.notarize(request);
    assert.deepEqual(again, first);
    // Same key, another body: refused (422), naming the header.
    const reused = await rejectsWith(vrs.notarize({ ...request, payloadHash: digest() }), BadRequest);
    assert.equal(reused.status, 422);
    assert.equal(reused.field, "Idempotency-Key");
    // No key: another receipt for the same body.
    const other = await vrs.notarize({ schema: "sha256", payloadHash: hash });
    assert.notEqual(other.receipt_id, first.receipt_id);

    const view = await vrs.receipt(first.receipt_id);
    assert.equal(view.receipt_id, first.receipt_id);
    assert.equal(view.leaf_hash, first.leaf_hash);
    const sealed = await waitUntil("the receipt sealed", async () => {
      const v = await vrs.receipt(first.receipt_id);
      return v.proof !== null && v;
    });
    assert.notEqual(sealed.status, "pending");
    assert.equal(sealed.proof.leaf_hash, first.leaf_hash);
    assert.equal(sealed.verification.verified, true, JSON.stringify(sealed.verification.checks));

    // A per-call key on a client without one.
    const perCall = await anonymous.notarize({ schema: "keccak256", payloadHash: hash, apiKey: server.apiKey });
    assert.equal(perCall.payload_hash, `0x${hash}`);
  });

  test("notary: a resolved game's result hash (vrs-game-result)", async () => {
    const bet = await vrs.dice({ bet_type: "under7", instant: false });
    const game = await vrs.wait(bet.game_id);
    const receipt = await vrs.notarize({
      schema: "vrs-game-result",
      payloadHash: game.result.result_hash,
      metadata: { game_id: bet.game_id },
    });
    assert.equal(receipt.payload_hash, game.result.result_hash);
    const wrong = await rejectsWith(
      vrs.notarize({ schema: "vrs-game-result", payloadHash: digest(), metadata: { game_id: bet.game_id } }),
      BadRequest,
    );
    assert.equal(wrong.field, "payload_hash");
  });

  test("notary: without a valid key, PaymentRequired", async () => {
    const none = await rejectsWith(anonymous.notarize({ schema: "sha256", payloadHash: digest() }), PaymentRequired);
    assert.ok([401, 402].includes(none.status), `status ${none.status}`);
    assert.match(none.serverMessage, /API key|payment/i);
    const wrong = await rejectsWith(
      anonymous.notarize({ schema: "sha256", payloadHash: digest(), apiKey: "not-a-key" }),
      PaymentRequired,
    );
    assert.equal(wrong.status, 401);
    const bad = await rejectsWith(vrs.notarize({ schema: "sha256", payloadHash: "abc" }), BadRequest);
    assert.equal(bad.field, "payload_hash");
  });

  test("typed errors carry the server's status and JSON", async () => {
    const bet = await rejectsWith(vrs.dice({ bet_type: "seven" }), BadRequest);
    assert.equal(bet.status, 400);
    assert.deepEqual(bet.validBetTypes, DICE_TYPES);
    assert.ok(DICE_TYPES.includes(bet.example.bet_type), `example ${JSON.stringify(bet.example)}`);
    assert.equal(bet.method, "POST");
    assert.equal(bet.url, `${server.url}/api/v1/games/dice/bet`);
    assert.match(bet.message, /^POST .*: 400: /);
    // The example is a body the server takes.
    assert.equal((await vrs.dice({ ...bet.example, instant: false })).accepted, true);

    const combo = await rejectsWith(vrs.sicbo({ bet_type: "combo", combo: [7, 9] }), BadRequest);
    assert.deepEqual(combo.validBetTypes, SICBO_TYPES);

    const game = await rejectsWith(vrs.game("0".repeat(32)), NotFound);
    assert.equal(game.status, 404);
    assert.match(game.serverMessage, /not found/);
    assert.equal(game.body.game_id, "0".repeat(32));
    const verify = await rejectsWith(vrs.verification("f".repeat(32)), NotFound);
    assert.equal(verify.body.verified, false);
    await rejectsWith(vrs.epoch(1_000_000_000), NotFound);
    await rejectsWith(vrs.poolBatch(1_000_000_000), NotFound);
    const receipt = await rejectsWith(vrs.receipt("0".repeat(32)), NotFound);
    assert.equal(receipt.body.receipt_id, "0".repeat(32));
    for (const e of [bet, game, receipt]) assert.ok(e instanceof ApiError && e instanceof VrsError);
  });
});

// ---------------------------------------------------------------------------------------------
// No server
// ---------------------------------------------------------------------------------------------

/** A fetch double answering `answer(url, init)` ({status, body, headers}), recording each call. */
function fakeFetch(answer) {
  const calls = [];
  const fetch = async (url, init = {}) => {
    calls.push({ url, init });
    const a = await answer(url, init);
    const body = typeof a.body === "string" ? a.body : JSON.stringify(a.body);
    return new Response(body, { status: a.status, headers: a.headers ?? { "content-type": "application/json" } });
  };
  return { fetch, calls };
}

/** A TCP port nothing listens on: bound, then released. */
async function closedPort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe("VrsClient without a server", () => {
  test("an unreachable server is a NetworkError", async () => {
    const vrs = new VrsClient(`http://127.0.0.1:${await closedPort()}`, { timeoutMs: 5_000 });
    const e = await rejectsWith(vrs.info(), NetworkError);
    assert.match(e.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.equal(e.status, null);
    assert.ok(e instanceof VrsError);
  });

  test("statuses map to their error classes, with Retry-After", async () => {
    const answers = {
      "/api/v1/stats": { status: 429, body: { error: "rate limit exceeded", retry_after: 7 }, headers: { "retry-after": "3" } },
      "/api/v1/recent": { status: 503, body: { error: "the database is unavailable; retry shortly" } },
      "/health": { status: 503, body: { status: "degraded", database: "disconnected" } },
      "/api/v1/games": { status: 502, body: "<html>bad gateway</html>", headers: { "content-type": "text/html" } },
      "/": { status: 200, body: [1, 2] },
      "/v1/notarize": { status: 409, body: { error: "still running", field: "Idempotency-Key" } },
      "/v1/notarize/status": { status: 405, body: { error: "method not allowed", allowed: ["GET"] } },
      "/api/v1/entropy": { status: 429, body: { error: "slow down", retry_after: 2 } },
    };
    const { fetch } = fakeFetch((url) => answers[new URL(url).pathname]);
    const vrs = new VrsClient("http://vrs.test", { fetch, apiKey: "k" });

    const limited = await rejectsWith(vrs.stats(), RateLimited);
    assert.equal(limited.status, 429);
    assert.equal(limited.retryAfter, 3, "the header wins over the body");
    assert.equal((await rejectsWith(vrs.entropy(), RateLimited)).retryAfter, 2, "the body's retry_after without a header");
    const down = await rejectsWith(vrs.recent(), ServerError);
    assert.equal(down.serverMessage, "the database is unavailable; retry shortly");
    assert.equal(down.retryAfter, null);
    assert.equal((await vrs.health()).status, "degraded", "503 from /health is an answer");
    const html = await rejectsWith(vrs.catalog(), NetworkError);
    assert.equal(html.status, 502);
    assert.match(html.message, /not JSON/);
    assert.match((await rejectsWith(vrs.info(), NetworkError)).message, /expected a JSON object/);
    const busy = await rejectsWith(vrs.notarize({ schema: "sha256", payloadHash: "ab".repeat(32) }), Conflict);
    assert.equal(busy.field, "Idempotency-Key");
    const other = await rejectsWith(vrs.notaryStatus(), ApiError);
    assert.equal(other.constructor, ApiError, "405 has no subclass");
    assert.equal(other.name, "ApiError");
    assert.equal(limited.name, "RateLimited");
  });

  test("requests: URLs, headers, bodies; the notary at its own base URL", async () => {
    const { fetch, calls } = fakeFetch((url) =>
      new URL(url).pathname === "/v1/notarize" ? { status: 202, body: { receipt_id: "r" } } : { status: 202, body: { accepted: true } },
    );
    const vrs = new VrsClient("http://vrs.test/base/", { fetch, apiKey: "key-1", headers: { "x-gateway": "g" }, notaryUrl: "http://notary.test" });
    await vrs.sicbo({ bet_type: "combo", combo: [1, 2], instant: false });
    await vrs.rng();
    await vrs.rng("s");
    await vrs.notarize({ schema: "sha256", payloadHash: "ab".repeat(32), metadata: { a: 1 }, idempotencyKey: "idem-1" });
    await vrs.notarize({ schema: "sha256", payloadHash: "cd".repeat(32), apiKey: "key-2" });

    const [bet, rng, seeded, notarized, perCall] = calls;
    assert.equal(bet.url, "http://vrs.test/base/api/v1/games/sicbo/bet");
    assert.equal(bet.init.method, "POST");
    assert.deepEqual(JSON.parse(bet.init.body), { bet_type: "combo", combo: [1, 2], instant: false });
    assert.equal(bet.init.headers.get("content-type"), "application/json");
    assert.equal(bet.init.headers.get("accept"), "application/json");
    assert.equal(bet.init.headers.get("x-gateway"), "g");
    assert.equal(bet.init.headers.get("authorization"), null, "the API key goes to the notary only");
    assert.deepEqual(JSON.parse(rng.init.body), {});
    assert.deepEqual(JSON.parse(seeded.init.body), { client_seed: "s" });
    assert.equal(notarized.url, "http://notary.test/v1/notarize");
    assert.deepEqual(JSON.parse(notarized.init.body), { schema: "sha256", payload_hash: "ab".repeat(32), metadata: { a: 1 } });
    assert.equal(notarized.init.headers.get("authorization"), "Bearer key-1");
    assert.equal(notarized.init.headers.get("idempotency-key"), "idem-1");
    assert.equal(perCall.init.headers.get("authorization"), "Bearer key-2");
    assert.equal(perCall.init.headers.get("idempotency-key"), null);
  });

  test("a request with no answer is a TimeoutError; an aborted one rejects with the reason", async () => {
    const hang = (_url, init) =>
      new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(init.signal.reason)));
    const vrs = new VrsClient("http://vrs.test", { fetch: hang, timeoutMs: 50 });
    const slow = await rejectsWith(vrs.stats(), TimeoutError);
    assert.equal(slow.timeoutMs, 50);
    assert.equal(slow.url, "http://vrs.test/api/v1/stats");
    assert.equal((await rejectsWith(vrs.info({ timeoutMs: 20 }), TimeoutError)).timeoutMs, 20);
    const controller = new AbortController();
    const pending = new VrsClient("http://vrs.test", { fetch: hang }).info({ signal: controller.signal });
    controller.abort(new Error("user gave up"));
    await assert.rejects(pending, /user gave up/);
  });

  test("202 from entropy and verify is null; 200 is the body", async () => {
    let status = 202;
    const { fetch } = fakeFetch(() => ({ status, body: status === 202 ? { status: "pending", message: "wait", epoch: 1 } : { epoch: 3, proof: {} } }));
    const vrs = new VrsClient("http://vrs.test", { fetch });
    assert.equal(await vrs.entropy(), null);
    assert.equal(await vrs.verification("b".repeat(32)), null);
    status = 200;
    assert.equal((await vrs.entropy()).epoch, 3);
    assert.equal((await vrs.verification("b".repeat(32))).epoch, 3);
  });

  test("wait polls until resolved", async () => {
    let polls = 0;
    const { fetch } = fakeFetch(() =>
      ++polls < 3
        ? { status: 202, body: { status: "pending", game_id: "a".repeat(32), resolves_at_epoch: 4, message: "waiting" } }
        : { status: 200, body: { status: "resolved", game_id: "a".repeat(32), result: {}, replay: [] } },
    );
    const vrs = new VrsClient("http://vrs.test", { fetch });
    assert.equal((await vrs.wait("a".repeat(32), { intervalMs: 1 })).status, "resolved");
    assert.equal(polls, 3);
  });

  test("arguments are checked before anything is sent", async () => {
    const { fetch, calls } = fakeFetch(() => ({ status: 200, body: {} }));
    const vrs = new VrsClient("http://vrs.test", { fetch });
    assert.deepEqual(GAMES, ["dice", "sicbo"]);
    assert.match((await rejectsWith(vrs.bet("roulette", { bet_type: "red" }), RangeError)).message, /"dice" or "sicbo", not "roulette"/);
    await assert.rejects(vrs.bet(1, { bet_type: "odd" }), TypeError);
    await assert.rejects(vrs.dice(null), TypeError);
    assert.match((await rejectsWith(vrs.dice({ amount: 1 }), TypeError)).message, /bet_type/);
    assert.match((await rejectsWith(vrs.game("../stats"), RangeError)).message, /32 lowercase hex/);
    await assert.rejects(vrs.game("A".repeat(32)), RangeError);
    await assert.rejects(vrs.game(42), TypeError);
    await assert.rejects(vrs.wait("0".repeat(31)), RangeError);
    await assert.rejects(vrs.wait("0".repeat(32), { timeoutMs: -1 }), RangeError);
    await assert.rejects(vrs.verification(undefined), TypeError);
    await assert.rejects(vrs.verify("xyz"), RangeError);
    await assert.rejects(vrs.receipt("nope"), RangeError);
    assert.match((await rejectsWith(vrs.epoch(0), RangeError)).message, /positive integer/);
    await assert.rejects(vrs.epoch(1.5), RangeError);
    await assert.rejects(vrs.epoch("1"), TypeError);
    await assert.rejects(vrs.epoch(1, { leafLimit: -1 }), RangeError);
    await assert.rejects(vrs.poolBatch(-1), RangeError);
    await assert.rejects(vrs.rng(7), TypeError);
    assert.match((await rejectsWith(vrs.notarize({ schema: "sha256" }), TypeError)).message, /payloadHash/);
    await assert.rejects(vrs.notarize({ schema: "sha256", payloadHash: "ab", metadata: [1] }), TypeError);
    assert.throws(() => new VrsClient(undefined), TypeError);
    assert.throws(() => new VrsClient("http://x", { timeoutMs: -5 }), RangeError);
    assert.equal(calls.length, 0, "nothing was sent");
    // The same calls with good arguments do send.
    await vrs.epoch(1, { leafFrom: 2, leafLimit: 3 });
    assert.equal(calls[0].url, "http://vrs.test/api/v1/epochs/1?leaf_from=2&leaf_limit=3");
  });
});
