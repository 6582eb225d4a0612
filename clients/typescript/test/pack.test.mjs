// The package as a user gets it: `npm pack` makes a tarball, which installs (offline: the
// package has no dependency) into an empty project; there a JavaScript program places a bet on a
// live server and verifies it, a TypeScript one using the same API type-checks against the
// installed declarations, and the `vrs-verify` command verifies the game.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { skipReason, startServer } from "./server.mjs";

const pkgDir = fileURLToPath(new URL("..", import.meta.url));
const tsc = join(pkgDir, "node_modules", "typescript", "bin", "tsc");

const PROGRAM = `
import { VrsClient, VerifyError } from "@vrs/client";

const [url, group] = process.argv.slice(2);
const vrs = new VrsClient(url);
const bet = await vrs.bet("dice", { bet_type: "odd", amount: 1, player_seed: "packed" });
await vrs.wait(bet.game_id, { timeoutMs: 30000 });
const report = await vrs.verify(bet.game_id, { group });
console.log(JSON.stringify({ game_id: bet.game_id, verified: report.verified, steps: report.steps.length, ok: VerifyError.name }));
`;

// The same program in TypeScript: compiled against the installed .d.mts files only.
const TYPED = `
import { VrsClient, type VerifyReport } from "@vrs/client";
import { verifyGame, type StepName } from "@vrs/client/verify";

export async function check(url: string): Promise<boolean> {
  const vrs = new VrsClient(url);
  const bet = await vrs.bet("sicbo", { bet_type: "big", amount: 1 });
  const id: string = bet.game_id;
  await vrs.wait(id);
  const report: VerifyReport = await verifyGame(url, id, null, { group: "test512" });
  const first: StepName | undefined = report.steps[0]?.name;
  return report.verified && first === "group";
}
`;

describe("the packed tarball", { skip: skipReason() }, () => {
  let server;
  let work;
  let project;
  before(async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), "vrs-pack-"));
    project = join(work, "project");
    execFileSync("mkdir", [project]);
  });
  after(async () => {
    if (server) await server.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("npm pack holds the modules, their declarations, the command and the README, no tests", () => {
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: pkgDir, encoding: "utf8" }),
    );
    const files = packed.files.map((f) => f.path).sort();
    for (const f of ["package.json", "README.md", "bin/vrs-verify.mjs", "src/index.mjs", "src/index.d.mts", "src/client.mjs", "src/client.d.mts", "src/vrs-verify.mjs", "src/vrs-verify.d.mts", "src/vrs-classgroup.mjs", "src/vrs-classgroup.d.mts", "src/vrs-witnessed.mjs", "src/vrs-witnessed.d.mts"]) {
      assert.ok(files.includes(f), `${f} is in the tarball: ${files}`);
    }
    assert.deepEqual(files.filter((f) => f.startsWith("test/") || f.startsWith("node_modules/")), []);
    assert.equal(packed.name, "@vrs/client");
    writeFileSync(join(work, "tarball"), join(work, packed.filename));
  });

  test("it installs into an empty project and verifies a live game there, in JS, TS and the command", () => {
    const tarball = readFileSync(join(work, "tarball"), "utf8");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: project });

    writeFileSync(join(project, "main.mjs"), PROGRAM);
    const out = execFileSync(process.execPath, ["main.mjs", server.url, "test512"], { cwd: project, encoding: "utf8" });
    const got = JSON.parse(out.trim());
    assert.equal(got.verified, true, out);
    assert.ok(got.steps >= 13, out);
    assert.equal(got.ok, "VerifyError");

    writeFileSync(join(project, "check.mts"), TYPED);
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { noEmit: true, strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [] },
        files: ["check.mts"],
      }),
    );
    const typed = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project, encoding: "utf8" });
    assert.equal(typed.status, 0, `tsc: ${typed.stdout}${typed.stderr}`);
    // A wrong use is refused by the installed declarations: the check is not vacuous.
    writeFileSync(join(project, "check.mts"), `${TYPED}\nexport const wrong: number = new VrsClient("x").bet("dice", { bet_type: "odd" });\n`);
    const refused = spawnSync(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project, encoding: "utf8" });
    assert.notEqual(refused.status, 0, "tsc accepted a Promise as a number");

    const cmd = spawnSync(join(project, "node_modules", ".bin", "vrs-verify"), ["--group", "test512", server.url, got.game_id], { encoding: "utf8" });
    assert.equal(cmd.status, 0, `${cmd.stdout}${cmd.stderr}`);
    assert.match(cmd.stdout, /^ok +group +test512/m);
    assert.match(cmd.stdout, /\nverified\n$/);
    // Its default group is rsa2048: this test512 server fails it, exit 1.
    const strict = spawnSync(join(project, "node_modules", ".bin", "vrs-verify"), [server.url, got.game_id], { encoding: "utf8" });
    assert.equal(strict.status, 1, strict.stdout);
    assert.match(strict.stdout, /NOT verified: group failed/);
  });
});
