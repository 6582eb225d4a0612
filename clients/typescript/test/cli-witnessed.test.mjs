// The command's witnessed flags (bin/vrs-verify.mjs: --witness-policy, --max-rate, --delta-ms)
// and its notes, offline: a loopback HTTP server made here answers with one canned epoch proof
// whose `log` is the shared vector's passing case (docs/test-vectors/witnessed.json). The rest
// of that proof is not a real game, so other steps fail (exit 1); only what the flags change is
// asserted. No vrs server.

import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WITNESSED_NOTE } from "../src/vrs-verify.mjs";

const root = new URL("../../../", import.meta.url);
const vector = JSON.parse(readFileSync(fileURLToPath(new URL("docs/test-vectors/witnessed.json", root)), "utf8"));
const passing = vector.cases.find((c) => c.passes);
const cli = fileURLToPath(new URL("../bin/vrs-verify.mjs", import.meta.url));
const GAME = "0123456789abcdef0123456789abcdef";
const T0 = 1_800_000_000_000;

// The record the vector's entries log (protocol/src/tlog/witnessed.rs's plan() and commitment()).
const proof = {
  modulus: "test512",
  vdfEpoch: 1,
  iterations: 45_000_000,
  bets_root: "00".repeat(32),
  bet_count: 0,
  previous_output: "00".repeat(64),
  leaf: "00",
  leaf_index: 0,
  audit_path: [],
  bet: { game_id: GAME, game: "dice", bet_type: "odd", amount: "1.00" },
  timing: {
    version: 2,
    previous_epoch: 0,
    nonce: "01".repeat(32),
    opened_at_ms: T0,
    closed_at_ms: T0 + 3_000,
    security_margin: 1.5,
    squarings_per_second: 1_000_000,
    deadline_ms: T0 + 5_000,
  },
  log: { origin: "vrs.test/log", plan: passing.plan, commitment: passing.commitment },
};

let server;
let base;
let dir;
before(async () => {
  server = createServer((req, res) => {
    const body = req.url === `/api/v1/verify/${GAME}` ? { proof, verified: true, replay_steps: [] } : { error: "not found" };
    res.writeHead(body.proof ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  dir = mkdtempSync(join(tmpdir(), "vrs-witnessed-cli-"));
  writeFileSync(join(dir, "policy"), vector.policy);
  writeFileSync(join(dir, "bad-policy"), "witness W0 nokey\nquorum W0\n");
});
after(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the command (not blocking this process, whose server answers it): {status, stdout, stderr}. */
function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

test("without --witness-policy: no witnessed step, the note in JSON's notes and after the checklist", async () => {
  const j = await run(["--group", "test512", "--json", base, GAME]);
  assert.equal(j.status, 1, j.stderr);
  const out = JSON.parse(j.stdout);
  assert.deepEqual(out.notes, [WITNESSED_NOTE]);
  assert.ok(!out.steps.some((s) => s.name === "witnessed"));
  const h = await run(["--group", "test512", base, GAME]);
  const lines = h.stdout.trimEnd().split("\n");
  assert.equal(lines.at(-2), `note ${WITNESSED_NOTE}`);
  assert.match(lines.at(-1), /^NOT verified: /);
});

test("--witness-policy runs the witnessed step with --max-rate (9e6 or 9000000) and --delta-ms", async () => {
  for (const rate of ["9e6", "9000000"]) {
    const j = await run(["--group", "test512", "--json", "--witness-policy", join(dir, "policy"), "--max-rate", rate, "--delta-ms", "1000", base, GAME]);
    const out = JSON.parse(j.stdout);
    assert.deepEqual(out.notes, []);
    const step = out.steps.find((s) => s.name === "witnessed");
    assert.deepEqual(step, { name: "witnessed", passed: true, detail: passing.detail });
  }
  // A faster squarer (S = 1.5e7) fails it: T_e / S = 45e6 / 1.5e7 = 3 s, and the commitment
  // was cosigned 3 s after the plan.
  const j = await run(["--group", "test512", "--json", "--witness-policy", join(dir, "policy"), "--max-rate", "1.5e7", base, GAME]);
  const step = JSON.parse(j.stdout).steps.find((s) => s.name === "witnessed");
  assert.equal(step.passed, false);
  assert.match(step.detail, /T_e \/ S = 45000000 \/ 15000000 allows under 3\.000 s/);
  // The default S of an RSA group is 9000000, and δ 2000 ms: the window then runs from 2 s
  // before the opening, 6000 ms to the end of the commitment's second, past T_e / S = 5 s.
  const d = await run(["--group", "test512", "--json", "--witness-policy", join(dir, "policy"), base, GAME]);
  assert.match(
    JSON.parse(d.stdout).steps.find((s) => s.name === "witnessed").detail,
    /W0: plan at 1800000000 s, commitment at 1800000003 s, 6000 ms after the opening \(T_e \/ S = 45000000 \/ 9000000 allows under 5\.000 s\)/,
  );
});

test("bad witnessed flags are usage errors (exit 2), before anything is fetched", async () => {
  for (const [args, says] of [
    [["--witness-policy", join(dir, "bad-policy")], /--witness-policy .*bad-policy: policy line 1: "nokey" is not a verifier key/],
    [["--witness-policy", join(dir, "missing")], /cannot read --witness-policy/],
    [["--max-rate", "0"], /--max-rate must be a whole number/],
    [["--max-rate", "9.5e0"], /--max-rate must be a whole number/],
    [["--delta-ms", "1e3"], /--delta-ms must be a whole number of milliseconds/],
  ]) {
    const r = await run([...args, base, GAME]);
    assert.equal(r.status, 2, r.stdout);
    assert.match(r.stderr, says);
    assert.equal(r.stdout, "");
  }
});
