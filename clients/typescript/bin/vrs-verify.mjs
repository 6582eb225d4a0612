#!/usr/bin/env node
// vrs-verify: the package's verifier (src/vrs-verify.mjs, the same code the /verify page runs)
// from the command line, in Node 20+.
//
//   vrs-verify [--group G] [--min-margin A] [--min-rate R] [--witness-policy FILE [--max-rate S]
//              [--delta-ms D]] [--json] <base_url> <game_id>
//
// Prints one line per step (ok, pend or FAIL, its name and what was checked), then each note
// ("note <text>": what was not checked), then "verified" (with what is still pending, if
// anything) or "NOT verified: <step> failed"; with --json, one line of JSON instead:
// {"game_id", "status", "verified", "failed_step", "group", "game", "pool_served", "steps":
// [{"name", "passed", "detail", "pending"?}], "notes", "dice", "elapsed_ms"}, or when there is nothing to
// verify {"game_id", "status": "error", "error_kind", "error"}. Exit status 0 when verified, 1
// when a check failed, 2 on an error (unknown or pending game, network, usage).

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { DEFAULT_GROUP, VerifyError, extractGameId, parseMinMargin, parseMinRate, verifyGame } from "../src/vrs-verify.mjs";
import { parseDeltaMs, parseMaxRate, parsePolicy } from "../src/vrs-witnessed.mjs";

const USAGE = `usage: vrs-verify [--group G] [--min-margin A] [--min-rate R] [--allow-version-1]
                  [--witness-policy FILE [--max-rate S] [--delta-ms D]] [--json] <base_url> <game_id>

Recomputes every check of a vrs game from the server's public API (docs/PROTOCOL.md §13),
ignoring the server's own verdict.

  --group G   the group the proof must be in, your choice, not the server's: rsa2048 (default),
              classgroup-1024, or test512 / test1024 / hex:<digits> for a test server
  --min-margin A
              the least security margin an epoch may declare for its timing step to pass
              (a number ≥ 1, two decimals at most); a version-1 epoch, which declares
              none, then fails. Without it, any declared margin passes the timing rule
  --min-rate R
              the least squaring rate an epoch may declare, in squarings per second
              (2000000 or 2e6): an understated rate keeps epochs open longer than their
              squarings take. A version-1 epoch then fails too
  --allow-version-1
              let version-1 epochs pass the timing step as version 1's rules allow; by
              default they fail: they make no timing commitment (docs/PROTOCOL.md §10)
  --witness-policy FILE
              a C2SP tlog-policy file naming your log key, witnesses and quorum: epoch
              games then get the witnessed step (docs/PROTOCOL.md §21). Without it the
              step is not run, and a note says what that leaves trusted
  --max-rate S
              S of the witnessed step: the fastest squarer you allow for, in squarings
              per second (9000000 or 9e6); default 9e6 for RSA groups, 1e6 for class groups
  --delta-ms D
              your clock tolerance in the witnessed step, in ms (default 2000)
  --json      print one line of JSON instead of the checklist
  -h, --help  this text

Exit status: 0 verified, 1 a check failed, 2 nothing to verify (unknown or pending game,
network error, bad arguments).
`;

function main(argv) {
  let opts;
  try {
    opts = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        group: { type: "string", default: DEFAULT_GROUP },
        "min-margin": { type: "string" },
        "min-rate": { type: "string" },
        "allow-version-1": { type: "boolean", default: false },
        "witness-policy": { type: "string" },
        "max-rate": { type: "string" },
        "delta-ms": { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (e) {
    process.stderr.write(`vrs-verify: ${e.message}\n\n${USAGE}`);
    return Promise.resolve(2);
  }
  if (opts.values.help) {
    process.stdout.write(USAGE);
    return Promise.resolve(0);
  }
  if (opts.positionals.length !== 2) {
    process.stderr.write(`vrs-verify: expected a base URL and a game id\n\n${USAGE}`);
    return Promise.resolve(2);
  }
  const [base, given] = opts.positionals;
  let minMargin;
  const m = opts.values["min-margin"];
  if (m !== undefined) {
    minMargin = /^[0-9]+(\.[0-9]{1,2})?$/.test(m) ? Number(m) : Number.NaN;
    try {
      parseMinMargin(minMargin);
    } catch {
      process.stderr.write(`vrs-verify: --min-margin must be a number ≥ 1 with two decimals at most, not ${JSON.stringify(m)}\n`);
      return Promise.resolve(2);
    }
  }
  let minRate;
  const r = opts.values["min-rate"];
  if (r !== undefined) {
    minRate = /^[0-9]+(\.[0-9]+)?(e[0-9]+)?$/i.test(r) ? Number(r) : Number.NaN;
    try {
      parseMinRate(minRate);
    } catch {
      process.stderr.write(`vrs-verify: --min-rate must be a whole number of squarings per second ≥ 1 (2000000 or 2e6), not ${JSON.stringify(r)}\n`);
      return Promise.resolve(2);
    }
  }
  return witnessOptions(opts.values).then((w) =>
    w === null ? 2 : run(base, extractGameId(given) ?? given, { group: opts.values.group, minMargin, minRate, allowVersion1: opts.values["allow-version-1"], ...w }, opts.values.json),
  );
}

/** --witness-policy, --max-rate and --delta-ms as verifyGame's options; a usage error is
 *  reported here (null: exit 2), before anything is fetched. */
async function witnessOptions(values) {
  const usage = (msg) => {
    process.stderr.write(`vrs-verify: ${msg}\n`);
    return null;
  };
  let maxRate;
  const s = values["max-rate"];
  if (s !== undefined) {
    // As --min-rate: written out or with an exponent, a whole number ≥ 1.
    const n = /^[0-9]+(\.[0-9]+)?(e[0-9]+)?$/i.test(s) ? Number(s) : Number.NaN;
    try {
      maxRate = parseMaxRate(n);
    } catch {
      return usage(`--max-rate must be a whole number of squarings per second ≥ 1 (9000000 or 9e6), not ${JSON.stringify(s)}`);
    }
  }
  let deltaMs;
  const d = values["delta-ms"];
  if (d !== undefined) {
    try {
      deltaMs = parseDeltaMs(/^[0-9]+$/.test(d) ? Number(d) : Number.NaN);
    } catch {
      return usage(`--delta-ms must be a whole number of milliseconds, not ${JSON.stringify(d)}`);
    }
  }
  const file = values["witness-policy"];
  if (file === undefined) return { maxRate, deltaMs };
  let witnessPolicy;
  try {
    witnessPolicy = readFileSync(file, "utf8");
  } catch (e) {
    return usage(`cannot read --witness-policy ${file}: ${e.message}`);
  }
  try {
    await parsePolicy(witnessPolicy);
  } catch (e) {
    return usage(`--witness-policy ${file}: ${e.message}`);
  }
  return { witnessPolicy, maxRate, deltaMs };
}

async function run(base, gameId, options, json) {
  const { group } = options;
  try {
    const r = await verifyGame(base, gameId, null, options);
    if (json) {
      const { game_id, status, verified, failed_step, steps, notes, dice, game, pool_served, elapsed_ms } = r;
      const out = { game_id, status, verified, failed_step, group, game, pool_served, steps, notes, dice, elapsed_ms };
      process.stdout.write(`${JSON.stringify(out)}\n`);
    } else {
      const width = Math.max(...r.steps.map((s) => s.name.length));
      for (const s of r.steps) {
        const mark = !s.passed ? "FAIL" : s.pending ? "pend" : "ok  ";
        process.stdout.write(`${mark} ${s.name.padEnd(width)}  ${s.detail}\n`);
      }
      // What was not checked, after the checklist and before the verdict (which stays last).
      for (const n of r.notes) process.stdout.write(`note ${n}\n`);
      const pending = r.steps.filter((s) => s.passed && s.pending).map((s) => s.name);
      if (!r.verified) process.stdout.write(`NOT verified: ${r.failed_step} failed\n`);
      else if (pending.length) process.stdout.write(`verified: every step recomputed here passed; still pending: ${pending.join(", ")}\n`);
      else process.stdout.write("verified\n");
    }
    return r.verified ? 0 : 1;
  } catch (e) {
    const kind = e instanceof VerifyError ? e.kind : "internal";
    const message = String((e && e.message) || e);
    if (json) {
      process.stdout.write(`${JSON.stringify({ game_id: gameId, status: "error", error_kind: kind, error: message })}\n`);
    } else {
      process.stderr.write(`vrs-verify: ${kind}: ${message}\n`);
    }
    return 2;
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
