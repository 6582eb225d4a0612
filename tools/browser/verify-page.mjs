#!/usr/bin/env node
// Drives the in-browser verifier (/verify) in Debian's Chromium through playwright-core (no
// browser download: the executable is $CHROMIUM or /usr/bin/chromium).
//
//   node tools/browser/verify-page.mjs <base_url> <game_id> <screenshot.png> [<query>]
//
// Opens <base_url>/verify?game=<game_id> (then &<query> when given, e.g. group=rsa2048), waits (60 s at most, $VERIFY_PAGE_TIMEOUT_MS) until
// #outcome's data-status is final (verified, failed or error), takes a full-page screenshot
// (viewport $VERIFY_PAGE_VIEWPORT, default 1100x900; 390x844 shows a phone) and prints one line
// of JSON on stdout:
//
//   {"status", "outcome_text", "failed_step", "error_kind", "checks": [{"name", "passed",
//    "detail"}], "dice": [..], "replay_actions": [..], "note", "console_errors": [..],
//    "elapsed_ms"}
//
// Exit status 0 when the page reached a final state (even "failed" or "error": the caller
// judges), 1 on a driver error (no browser, page never finished), 2 on usage errors.

import { chromium } from "playwright-core";

const FINAL = ["verified", "failed", "error"];

async function main(argv) {
  if (argv.length !== 3 && argv.length !== 4) {
    process.stderr.write("usage: node tools/browser/verify-page.mjs <base_url> <game_id> <screenshot.png> [<query>]\n");
    return 2;
  }
  const [base, gameId, shot, query] = argv;
  const timeout = Number(process.env.VERIFY_PAGE_TIMEOUT_MS || 60000);
  const url = `${base.replace(/\/+$/, "")}/verify?game=${encodeURIComponent(gameId)}${query ? `&${query}` : ""}`;
  const consoleErrors = [];
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  try {
    const [width, height] = (process.env.VERIFY_PAGE_VIEWPORT || "1100x900").split("x").map(Number);
    const page = await browser.newPage({ viewport: { width, height } });
    page.on("console", (msg) => {
      if (msg.type() === "error") consoleErrors.push(msg.text());
    });
    page.on("pageerror", (err) => consoleErrors.push(`pageerror: ${err.message}`));
    page.on("requestfailed", (req) => {
      consoleErrors.push(`request failed: ${req.url()} (${req.failure() ? req.failure().errorText : "?"})`);
    });
    const t0 = Date.now();
    await page.goto(url, { waitUntil: "domcontentloaded", timeout });
    await page.waitForFunction(
      (final) => {
        const o = document.querySelector("#outcome");
        return !!o && final.includes(o.dataset.status);
      },
      FINAL,
      { timeout, polling: 100 },
    );
    const elapsed = Date.now() - t0;
    const state = await page.evaluate(() => {
      const o = document.querySelector("#outcome");
      const dice = document.querySelector("#dice");
      return {
        status: o.dataset.status,
        outcome_text: o.textContent.trim(),
        failed_step: o.dataset.failedStep ?? null,
        error_kind: o.dataset.errorKind ?? null,
        checks: [...document.querySelectorAll("#checks > li[data-step]")].map((li) => ({
          name: li.dataset.step,
          passed: li.dataset.passed === "true",
          detail: (li.querySelector(".check-detail")?.textContent ?? "").trim(),
        })),
        dice: dice && dice.dataset.dice ? dice.dataset.dice.split(",").map(Number) : [],
        replay_actions: [...document.querySelectorAll("#replay-steps > li[data-action]")].map((li) => li.dataset.action),
        note: (document.querySelector("#outcome-note")?.textContent ?? "").trim(),
      };
    });
    await page.screenshot({ path: shot, fullPage: true });
    process.stdout.write(`${JSON.stringify({ ...state, console_errors: consoleErrors, elapsed_ms: elapsed })}\n`);
    return 0;
  } finally {
    await browser.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`verify-page: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
