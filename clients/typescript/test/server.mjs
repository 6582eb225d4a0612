// A live `vrs serve` for the tests: the binary at $VRS_BIN (the Rust test that runs `npm test`
// sets it; by hand: cargo build -p vrs, then VRS_BIN=$CARGO_TARGET_DIR/debug/vrs npm test), on
// the embedded store in a temporary directory, with the fast test settings (test512, 300 ms
// epochs, a small pool so that instant bets are served), and a notary API key made with
// `vrs keys`. Without $VRS_BIN the live tests are skipped, saying why; the offline ones still run.

import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const FAST = [
  "--modulus", "test512", "--epoch-ms", "300", "--rate-limit", "0",
  "--pool-iterations", "64", "--pool-batch", "8", "--pool-depth", "16", "--pool-low-water", "8",
];

/** Why the live tests cannot run here, or false when $VRS_BIN names a binary (false, not null:
 *  node:test skips a test whose `skip` option is null). */
export function skipReason() {
  const bin = process.env.VRS_BIN;
  if (!bin) return "no server: set VRS_BIN to a built vrs binary (the Rust test does)";
  if (!existsSync(bin)) return `VRS_BIN=${bin} does not exist`;
  return false;
}

/**
 * Starts `vrs serve` with `flags` (FAST by default) and resolves with {url, apiKey, dataDir,
 * stop()}. `env` adds variables to the server's environment.
 */
export async function startServer(flags = FAST, env = {}) {
  const bin = process.env.VRS_BIN;
  const dataDir = mkdtempSync(join(tmpdir(), "vrs-client-ts-"));
  const childEnv = { ...process.env, RUST_LOG: "warn", ...env };
  delete childEnv.DATABASE_URL;
  const proc = spawn(bin, ["serve", "--data-dir", dataDir, "--addr", "127.0.0.1:0", ...flags], {
    env: childEnv,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout });
    const timer = setTimeout(() => reject(new Error("vrs serve printed no URL within 60 s")), 60_000);
    lines.on("line", (line) => {
      if (line.startsWith("vrs listening on ")) {
        clearTimeout(timer);
        resolve(line.slice("vrs listening on ".length).trim());
      }
    });
    proc.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`vrs serve exited (${code}) before printing its URL`));
    });
  });
  // Keep draining stdout so that the server never blocks on a full pipe.
  proc.stdout.resume();
  const made = execFileSync(bin, ["keys", "create", "--name", "npm-test", "--json", "--data-dir", dataDir], {
    encoding: "utf8",
  });
  const apiKey = JSON.parse(made).key;
  const stop = async () => {
    if (proc.exitCode === null) {
      const exited = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { url, apiKey, dataDir, stop };
}

/** Polls `cond` until it returns something truthy (a deadline, not a sleep). */
export async function waitUntil(what, cond, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await cond();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`${what}: still not true after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
