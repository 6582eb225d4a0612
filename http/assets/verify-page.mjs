// vrs in-browser verifier: the page (/verify). DOM glue around ./vrs-verify.mjs, which does all
// the recomputation. No inline script or style, no other origin.
//
// DOM contract (for people and for test drivers):
//   form#verify-form, input#game-id (name "game"), button#verify-button
//   #result                      shown once a verification starts
//   #outcome                     data-status: running | pending | verified | failed | error
//                                (the last three are final); text: exactly "verified", or
//                                "NOT verified: <step> failed", or "error: <message>";
//                                data-failed-step=<step> when failed, data-error-kind when error
//                                (invalid_id | not_found | pending | network | http | bad_response)
//   #outcome-note                one line about the run (how many checks, time taken)
//   #report                      the panels below; hidden on error and while pending
//   #checks > li.check           one per recomputed check, in order: data-step=<name>,
//                                data-passed="true"|"false", data-pending="true" on a step that
//                                passes for now but waits on the server (pool_bet_inclusion
//                                while the bet's epoch is open); children .check-name,
//                                .check-result ("pass" | "pending" | "FAIL"), .check-what,
//                                .check-detail
//   #dice                        data-dice="6,4" (empty for raw RNG); children .die data-value
//   #game-summary                dl of the game's fields (dt/dd pairs, dd has data-key)
//   #replay-steps > li.replay-step  one per server replay step: data-action=<action>
//   textarea#witness-policy, input#max-rate, input#delta-ms  the reader's own witnesses (a C2SP
//                                tlog-policy), S and δ for the `witnessed` step, kept in this
//                                browser (localStorage); empty policy: no step, and #notes says
//                                what is then trusted
//   #notes > li.note             what the checks did not cover (the report's notes)

import { verifyGame, extractGameId, VerifyError } from "./vrs-verify.mjs";

// ?group=rsa2048 makes the `group` check require that group. Without it the page takes the group
// the server names (it is served by that server, so it can be no stricter than the server's own
// word); an independent check runs `vrs verify` or @vrs/client, which require rsa2048 by default.
const requiredGroup = new URLSearchParams(location.search).get("group") || null;

const $ = (sel) => document.querySelector(sel);
const form = $("#verify-form");
const input = $("#game-id");
const button = $("#verify-button");
const result = $("#result");
const outcome = $("#outcome");
const outcomeBox = $("#outcome-box");
const note = $("#outcome-note");
const checksList = $("#checks");
const diceBox = $("#dice");
const summary = $("#game-summary");
const replayList = $("#replay-steps");
const report = $("#report");
const policyBox = $("#witness-policy");
const maxRateBox = $("#max-rate");
const deltaBox = $("#delta-ms");
const notesList = $("#notes");

// The reader's witnesses are the reader's, never the server's: kept in this browser only.
const KEPT = { policy: "vrs.witness-policy", maxRate: "vrs.max-rate", deltaMs: "vrs.delta-ms" };
for (const [box, key] of [[policyBox, KEPT.policy], [maxRateBox, KEPT.maxRate], [deltaBox, KEPT.deltaMs]]) {
  if (!box) continue;
  try {
    box.value = localStorage.getItem(key) || "";
  } catch {
    // Storage refused (private mode): the fields start empty.
  }
  box.addEventListener("change", () => {
    try {
      localStorage.setItem(key, box.value);
    } catch {
      // Not kept; still used for this verification.
    }
  });
}

/** The `witnessed` options from the fields: none without a policy. */
function witnessOptions() {
  const policy = policyBox ? policyBox.value.trim() : "";
  if (!policy) return {};
  const opts = { witnessPolicy: policy };
  if (maxRateBox && maxRateBox.value.trim()) opts.maxRate = maxRateBox.value.trim();
  if (deltaBox && deltaBox.value.trim()) opts.deltaMs = deltaBox.value.trim();
  return opts;
}

function showNotes(notes) {
  if (!notesList) return;
  notesList.replaceChildren(
    ...(notes || []).map((text) => {
      const li = document.createElement("li");
      li.className = "note";
      li.textContent = text;
      return li;
    }),
  );
}

const POLL_MS = 2000;
const POLL_LIMIT_MS = 10 * 60 * 1000;

/** What each check establishes, in words (docs/PROTOCOL.md §10, §11, §13, §14, §16). */
const WHAT = {
  bet_leaf: "The committed bet bytes encode this game's fields",
  merkle_inclusion: "The bet is in its epoch's bets tree (RFC 6962 audit path to the bets root)",
  moved: "The game's epoch is void: logged moves sent its games on to the epoch whose output decides them, before that epoch's commitment, cosigned by a quorum of your witnesses (PROTOCOL §21, \"Moved games\")",
  bets_root: "The epoch's published leaves hash to its bets root",
  epoch_chain: "The epoch continues the chain: its previous output is y of its predecessor p(e) (the genesis output y_0 for p = 0)",
  epoch_input: "The VDF input x follows from the epoch, previous output, bets root and T (for a version-2 epoch, also its predecessor, nonce and timing)",
  vdf_proof: "The Wesolowski proof of y = x^(2^T) holds (strict decoding)",
  timing:
    "The epoch's bets were fixed in time: before the previous epoch's output existed, and within the bound its security margin allows (PROTOCOL §10)",
  witnessed:
    "The epoch's plan and commitment were cosigned in time by a quorum of your witnesses, too soon for a squarer of your S to have tried outcomes, and the epoch shown is the one logged (PROTOCOL §21)",
  rng_value: "rngValue = HMAC-SHA256(y, game id ‖ player seed)",
  dice: "The dice follow from rngValue (bytes ≥ 252 skipped)",
  payout: "Win and payout follow the game's rules",
  acceptance:
    "The operator's Ed25519 signature over this game's leaf, its epoch or pool entry and its acceptance time holds, by a key published at / (PROTOCOL §11)",
  anchor_inclusion: "The record is under the anchor root sent on chain",
  pool_batch_chain: "The pool batch links to the previous batch's root and holds this entry",
  pool_anchor: "The batch's anchor epoch is resolved and its y is the one in the batch seed",
  pool_batch_seed: "The batch seed follows from its number, previous root and anchor epoch",
  pool_entry_input: "The entry's x follows from the batch seed, its index and its revealed secret",
  pool_inclusion: "The entry is under its batch's published root",
  pool_committed: "The batch was committed before the bet arrived",
  pool_game_id: "The game id is fixed by the entry, and the serving log names this game",
  pool_bet_inclusion:
    "The served bet is a leaf of the epoch open when it was served, under that epoch's published bets root (PROTOCOL §14)",
};

let run = 0; // the current verification; an older one stops updating the page

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function setOutcome(status, text, extra = {}) {
  outcome.dataset.status = status;
  outcome.textContent = text;
  delete outcome.dataset.failedStep;
  delete outcome.dataset.errorKind;
  if (extra.failedStep) outcome.dataset.failedStep = extra.failedStep;
  if (extra.errorKind) outcome.dataset.errorKind = extra.errorKind;
  outcomeBox.className = `outcome-box is-${status}`;
  // The panels (dice, game, checks, replay) only mean something for a verification under way.
  report.hidden = status === "error" || status === "pending";
}

function reset(gameId) {
  result.hidden = false;
  checksList.replaceChildren();
  replayList.replaceChildren();
  summary.replaceChildren();
  diceBox.replaceChildren();
  diceBox.dataset.dice = "";
  note.textContent = gameId ? `game ${gameId}` : "";
}

function addCheck(step) {
  // A pending step has passed so far (nothing is wrong yet), so it keeps the pass styling.
  const pending = step.passed && step.pending === true;
  const li = el(
    "li",
    {
      class: `check ${step.passed ? "pass" : "fail"}${pending ? " pending" : ""}`,
      "data-step": step.name,
      "data-passed": String(step.passed),
      "data-pending": pending ? "true" : null,
    },
    el("span", { class: "check-result", text: pending ? "pending" : step.passed ? "pass" : "FAIL" }),
    el(
      "div",
      { class: "check-body" },
      el("code", { class: "check-name", text: step.name }),
      el("span", { class: "check-what", text: WHAT[step.name] || "" }),
      el("span", { class: "check-detail", text: step.detail }),
    ),
  );
  checksList.append(li);
}

const PIPS = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };

function showDice(dice, game) {
  diceBox.replaceChildren();
  diceBox.dataset.dice = dice.join(",");
  if (!dice.length) {
    diceBox.append(el("p", { class: "note", text: game === "rng" ? "No dice: a raw RNG request returns rngValue itself." : "No dice could be recomputed." }));
    return;
  }
  for (const d of dice) {
    const face = el("span", { class: "die", "data-value": d, role: "img", "aria-label": `die showing ${d}` });
    for (let cell = 1; cell <= 9; cell++) {
      face.append(el("span", { class: PIPS[d] && PIPS[d].includes(cell) ? `pip c${cell}` : `cell c${cell}` }));
    }
    diceBox.append(face);
  }
  diceBox.append(el("span", { class: "dice-total", text: `total ${dice.reduce((a, b) => a + b, 0)}` }));
}

function row(key, label, value) {
  if (value === null || value === undefined || value === "") return;
  summary.append(el("dt", { text: label }), el("dd", { "data-key": key, text: String(value) }));
}

function showSummary(r) {
  const bet = r.bet || {};
  row("game", "Game", { dice: "Dice", sicbo: "Sic Bo", rng: "Raw RNG request" }[r.game] || r.game);
  if (r.game !== "rng") {
    let what = bet.bet_type;
    if (bet.target !== null && bet.target !== undefined) what += ` ${bet.target}`;
    if (Array.isArray(bet.combo)) what += ` ${bet.combo.join(",")}`;
    row("bet", "Bet", what);
    row("amount", "Amount", bet.amount);
    if (r.won !== null) row("result", "Result", r.won ? `won, returns ${r.payout}` : "lost, returns 0.00");
  }
  row("player_seed", r.game === "rng" ? "Client seed" : "Player seed", bet.player_seed ?? "(none)");
  row("rng_value", "rngValue", r.rng_value);
  row("source", "Randomness", r.pool_served ? `pool entry ${r.pool_index} (instant bet)` : `epoch ${r.epoch}`);
  const group = r.class_group
    ? `class group ${r.modulus} (${r.modulus_bits ?? "?"}-bit discriminant of this epoch)`
    : `${r.modulus_bits ?? "?"}-bit modulus ${r.modulus}`;
  row("vdf", "VDF", `${group}, T = ${r.iterations}`);
  const a = r.anchor;
  if (a && a.enabled === false && (a.batch === undefined || a.batch === null)) {
    row("anchor", "On-chain anchor", "off on this server");
  } else if (a && a.tx) {
    row("anchor", "On-chain anchor", `${r.anchor_status}: batch ${a.batch}, transaction ${a.tx} on ${a.chain} (${a.chain_id})`);
  } else {
    row("anchor", "On-chain anchor", r.anchor_status);
  }
}

const HEX_RE = /^[0-9a-f]+$/i;

function value(v) {
  if (v === null || v === undefined) return el("span", { class: "none", text: "—" });
  if (Array.isArray(v)) {
    if (v.length === 0) return el("span", { class: "none", text: "[]" });
    if (v.every((x) => typeof x !== "object")) {
      if (v.every((x) => typeof x === "string" && x.length > 24)) {
        const list = el("ol", { class: "hexlist" });
        for (const x of v) list.append(el("li", {}, value(x)));
        return list;
      }
      return el("code", { text: v.join(", ") });
    }
    return el("code", { class: "json", text: JSON.stringify(v) });
  }
  if (typeof v === "object") return el("code", { class: "json", text: JSON.stringify(v) });
  const s = String(v);
  if (typeof v === "string" && s.length > 40 && HEX_RE.test(s)) {
    return el("code", { class: "hex", title: s, text: `${s.slice(0, 20)}…${s.slice(-8)} (${s.length / 2} bytes)` });
  }
  return el("code", { text: s });
}

const PROSE = new Set(["description", "formula", "rule", "note"]);

function showReplay(steps) {
  replayList.replaceChildren();
  for (const s of steps) {
    if (!s || typeof s !== "object") continue;
    const li = el("li", { class: "replay-step", "data-action": s.action ?? "" });
    li.append(el("h3", {}, el("code", { text: s.action ?? "step" })));
    for (const k of ["description", "formula", "rule", "note"]) {
      if (typeof s[k] === "string" && s[k]) li.append(el("p", { class: `prose ${k}`, text: s[k] }));
    }
    const dl = el("dl", { class: "fields" });
    for (const [k, v] of Object.entries(s)) {
      if (k === "step" || k === "action" || PROSE.has(k)) continue;
      dl.append(el("dt", { text: k }), el("dd", {}, value(v)));
    }
    li.append(dl);
    replayList.append(li);
  }
}

function showError(err, gameId) {
  const kind = err instanceof VerifyError ? err.kind : "bad_response";
  const message = err && err.message ? err.message : String(err);
  setOutcome("error", `error: ${message}`, { errorKind: kind });
  const hints = {
    not_found: "No game with this id exists on this server. Check the id, and that this is the server that accepted the bet.",
    invalid_id: "A game id is 32 hexadecimal digits, as returned when the bet was placed.",
    network: "The server did not answer. Check your connection and try again.",
    pending: "The game's epoch has not resolved yet; try again later.",
  };
  note.textContent = hints[kind] || (gameId ? `game ${gameId}` : "");
}

async function verify(gameId) {
  const mine = ++run;
  reset(gameId);
  button.disabled = true;
  document.title = `Verifying ${gameId.slice(0, 8)}… · vrs`;
  const t0 = Date.now();
  try {
    for (;;) {
      setOutcome("running", "verifying…");
      try {
        const r = await verifyGame(
          "",
          gameId,
          (step) => {
            if (mine === run) addCheck(step);
          },
          { group: requiredGroup, ...witnessOptions() },
        );
        if (mine !== run) return;
        showDice(r.dice, r.game);
        showSummary(r);
        showReplay(r.replay_steps);
        showNotes(r.notes);
        if (r.verified) {
          setOutcome("verified", "verified");
          document.title = "Verified · vrs";
        } else {
          setOutcome("failed", `NOT verified: ${r.failed_step} failed`, { failedStep: r.failed_step });
          document.title = "NOT verified · vrs";
        }
        const n = r.steps.length;
        const bad = r.steps.filter((s) => !s.passed).length;
        const waiting = r.steps.filter((s) => s.passed && s.pending).length;
        note.textContent =
          `${n} checks recomputed in this browser in ${r.elapsed_ms} ms` +
          (bad ? `; ${bad} failed.` : "; all passed.") +
          (waiting ? ` ${waiting} pending: verify again once the bet's epoch has closed.` : "") +
          ` Game ${gameId}.`;
        return;
      } catch (e) {
        if (mine !== run) return;
        if (e instanceof VerifyError && e.kind === "pending" && Date.now() - t0 < POLL_LIMIT_MS) {
          checksList.replaceChildren();
          setOutcome("pending", `pending: ${e.message}`);
          note.textContent = "Checking again in a moment; the page verifies as soon as the game resolves.";
          await new Promise((res) => setTimeout(res, POLL_MS));
          if (mine !== run) return;
          continue;
        }
        throw e;
      }
    }
  } catch (e) {
    if (mine !== run) return;
    showError(e, gameId);
    document.title = "Error · vrs";
  } finally {
    if (mine === run) button.disabled = false;
  }
}

function start(text, { push }) {
  const gameId = extractGameId(text);
  if (!gameId) {
    run++;
    input.value = String(text).trim();
    reset(null);
    showError(new VerifyError("invalid_id", `${JSON.stringify(String(text).trim())} is not a game id (32 hex digits)`));
    return;
  }
  input.value = gameId;
  const url = `/verify?game=${gameId}${requiredGroup ? `&group=${encodeURIComponent(requiredGroup)}` : ""}`;
  if (push && location.pathname + location.search !== url) history.pushState({ game: gameId }, "", url);
  verify(gameId);
}

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  start(input.value, { push: true });
});

window.addEventListener("popstate", () => {
  const g = new URLSearchParams(location.search).get("game");
  if (g) {
    start(g, { push: false });
  } else {
    // Back to the bare form.
    run++;
    result.hidden = true;
    delete outcome.dataset.status;
    outcome.textContent = "";
    input.value = "";
    button.disabled = false;
    document.title = "Verify a game · vrs";
  }
});

const initial = new URLSearchParams(location.search).get("game");
if (initial !== null && initial !== "") {
  start(initial, { push: false });
} else {
  input.focus();
}
