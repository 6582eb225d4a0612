#!/usr/bin/env node
// The in-browser verifier's core (http/assets/vrs-verify.mjs) run in Node, without a browser:
//
//   node tools/browser/verify-node.mjs <base_url> <game_id>
//
// Prints one line of JSON: {"game_id", "status", "verified", "failed_step", "steps": [{"name",
// "passed", "detail"}], "dice", "elapsed_ms"} or, when there is nothing to verify,
// {"game_id", "status": "error", "error_kind", "error"}. Exit status 0 when verified, 1 when a
// check failed, 2 on an error (unknown or pending game, network, usage).

import { verifyGame, VerifyError } from "../../http/assets/vrs-verify.mjs";

const args = process.argv.slice(2);
if (args.length !== 2) {
  process.stderr.write("usage: node tools/browser/verify-node.mjs <base_url> <game_id>\n");
  process.exit(2);
}
const [base, gameId] = args;
try {
  const r = await verifyGame(base, gameId);
  const { game_id, status, verified, failed_step, steps, dice, game, pool_served, elapsed_ms } = r;
  process.stdout.write(
    `${JSON.stringify({ game_id, status, verified, failed_step, game, pool_served, steps, dice, elapsed_ms })}\n`,
  );
  process.exit(verified ? 0 : 1);
} catch (e) {
  const kind = e instanceof VerifyError ? e.kind : "internal";
  process.stdout.write(`${JSON.stringify({ game_id: gameId, status: "error", error_kind: kind, error: String(e.message || e) })}\n`);
  process.exit(2);
}
