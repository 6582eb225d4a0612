// @vrs/client: the API client of every public endpoint of the randomness and games API
// (/, /health, /api/v1/…) and of the notary (/v1/notarize…), docs: ../../shared/spec/interface.md.
//
//   import { VrsClient } from "@vrs/client/client";
//   const vrs = new VrsClient("http://127.0.0.1:8080");
//   const bet = await vrs.dice({ bet_type: "over7", amount: 1, player_seed: "lucky" });
//   const game = await vrs.wait(bet.game_id);
//   const report = await vrs.verify(bet.game_id); // recomputed here, not trusted
//
// Answers are the server's JSON objects as parsed, nothing renamed or dropped (a member a later
// server adds is still there). A status the endpoint documents as an answer resolves; any other
// rejects with an ApiError subclass carrying the status and the JSON body; an unreachable server
// or a body that is not JSON rejects with NetworkError. Nothing is retried: a bet sent twice is
// two bets (a notarization is safe to resend with the same idempotencyKey).
//
// Plain ES module with no dependencies (fetch, AbortController, setTimeout): Node 20+ and
// browsers. Types: client.d.mts beside this file.

import { parseMinMargin, parseMinRate, verifyGame } from "./vrs-verify.mjs";
import { parseDeltaMs, parseMaxRate, parsePolicy } from "./vrs-witnessed.mjs";

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/** Base class of every error this client throws (argument errors are TypeError/RangeError). */
export class VrsError extends Error {}

/** The server answered with a status this call does not take as an answer. */
export class ApiError extends VrsError {
  constructor(status, body, { method, url, retryAfter = null } = {}) {
    const said = isObject(body) && typeof body.error === "string" ? body.error : preview(body);
    super(`${method} ${url}: ${status}: ${said}`);
    this.status = status;
    this.body = body;
    this.method = method;
    this.url = url;
    this.serverMessage = said;
    this.retryAfter = retryAfter;
  }

  /** The body member or header the server blames (the notary's `field`), or null. */
  get field() {
    return isObject(this.body) && typeof this.body.field === "string" ? this.body.field : null;
  }
}

/** 400, 413 or 422: the request was refused as invalid. */
export class BadRequest extends ApiError {
  /** For a refused bet: the game's bet types (empty otherwise). */
  get validBetTypes() {
    const v = isObject(this.body) ? this.body.valid_bet_types : undefined;
    return Array.isArray(v) ? v.map(String) : [];
  }

  /** For a refused bet: a valid request body of that game, or null. */
  get example() {
    const v = isObject(this.body) ? this.body.example : undefined;
    return isObject(v) ? v : null;
  }
}

/** 404: no such game, epoch, batch, receipt or endpoint. */
export class NotFound extends ApiError {}

/** 401, 402 or 403: the notary wants a valid API key or a payment. */
export class PaymentRequired extends ApiError {}

/** 409: a request with this Idempotency-Key is still being processed. */
export class Conflict extends ApiError {}

/** 429: too many writes from this client; `retryAfter` says when to try again. */
export class RateLimited extends ApiError {}

/** 5xx: the server failed or is unavailable; the request may be retried. */
export class ServerError extends ApiError {}

/** The server could not be reached, or its answer was not a JSON object. */
export class NetworkError extends VrsError {
  constructor(message, { method, url, status = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.method = method;
    this.url = url;
    this.status = status;
  }
}

/** A request got no answer within the client's timeout, or `wait` ran past its deadline. */
export class TimeoutError extends VrsError {
  constructor(message, { timeoutMs, method = null, url = null, gameId = null } = {}) {
    super(message);
    this.timeoutMs = timeoutMs;
    this.method = method;
    this.url = url;
    this.gameId = gameId;
  }
}

// Names written out, not read from the class: they survive minification.
for (const [cls, name] of [
  [VrsError, "VrsError"],
  [ApiError, "ApiError"],
  [BadRequest, "BadRequest"],
  [NotFound, "NotFound"],
  [PaymentRequired, "PaymentRequired"],
  [Conflict, "Conflict"],
  [RateLimited, "RateLimited"],
  [ServerError, "ServerError"],
  [NetworkError, "NetworkError"],
  [TimeoutError, "TimeoutError"],
]) {
  Object.defineProperty(cls.prototype, "name", { value: name, writable: true, configurable: true });
}

/** The error class of an answer's status (one place, as the server maps its errors in one). */
function errorFor(status, body, where) {
  if (status === 400 || status === 413 || status === 422) return new BadRequest(status, body, where);
  if (status === 404) return new NotFound(status, body, where);
  if (status === 401 || status === 402 || status === 403) return new PaymentRequired(status, body, where);
  if (status === 409) return new Conflict(status, body, where);
  if (status === 429) return new RateLimited(status, body, where);
  if (status >= 500) return new ServerError(status, body, where);
  return new ApiError(status, body, where);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

export const GAMES = Object.freeze(["dice", "sicbo"]);
const ID_RE = /^[0-9a-f]{32}$/;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_WAIT_MS = 60_000;
const DEFAULT_INTERVAL_MS = 250;
// setTimeout fires at once for a delay above 2^31 − 1 ms: longer is treated as none.
const MAX_DELAY_MS = 2_147_483_647;

function isObject(v) {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function preview(v) {
  const text = typeof v === "string" ? v : JSON.stringify(v) ?? String(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function describe(v) {
  if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null || v === undefined || typeof v !== "object") return String(v);
  return Array.isArray(v) ? "an array" : "an object";
}

// Ids go into the path: checked here, so that "../stats" or "a b" never becomes another URL.
function checkId(id, what) {
  if (typeof id !== "string") throw new TypeError(`${what} must be a string, not ${describe(id)}`);
  if (!ID_RE.test(id)) throw new RangeError(`${what} must be 32 lowercase hex digits, not ${describe(id)}`);
  return id;
}

function checkNumber(n, what) {
  if (typeof n !== "number") throw new TypeError(`${what} must be a number, not ${describe(n)}`);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${what} must be a positive integer, not ${n}`);
  return n;
}

function checkCount(n, what) {
  if (typeof n !== "number") throw new TypeError(`${what} must be a number, not ${describe(n)}`);
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be a non-negative integer, not ${n}`);
  return n;
}

function checkMs(n, what) {
  if (typeof n !== "number") throw new TypeError(`${what} must be a number of milliseconds, not ${describe(n)}`);
  if (Number.isNaN(n) || n < 0) throw new RangeError(`${what} must be at least 0 ms, not ${n}`);
  return n;
}

function checkGame(game) {
  if (typeof game !== "string") throw new TypeError(`game must be "dice" or "sicbo", not ${describe(game)}`);
  if (!GAMES.includes(game)) throw new RangeError(`game must be "dice" or "sicbo", not ${describe(game)}`);
  return game;
}

function optionalString(v, what) {
  if (v !== undefined && v !== null && typeof v !== "string") {
    throw new TypeError(`${what} must be a string, not ${describe(v)}`);
  }
}

function abortReason(signal) {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * A signal that aborts when `outer` aborts or `timeoutMs` passes (AbortSignal.any is newer than
 * Node 20.0, so linked by hand). `timedOut()` tells the two apart; `dispose()` stops the timer.
 */
function deadlineSignal(outer, timeoutMs) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(abortReason(outer));
  if (outer) {
    if (outer.aborted) controller.abort(abortReason(outer));
    else outer.addEventListener("abort", onAbort, { once: true });
  }
  const timer =
    timeoutMs <= MAX_DELAY_MS && !controller.signal.aborted
      ? setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, "TimeoutError"));
        }, timeoutMs)
      : null;
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      if (timer !== null) clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    },
  };
}

function causeText(e) {
  const inner = e?.cause?.code ?? e?.cause?.message;
  const outer = e?.message ?? String(e);
  return inner && inner !== outer ? `${outer} (${inner})` : outer;
}

// ---------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------

/** A client of one vrs service. Stateless apart from its settings: safe to share. */
export class VrsClient {
  #fetch;
  #apiKey;
  #timeoutMs;
  #headers;

  constructor(baseUrl, { fetch, apiKey, timeoutMs = DEFAULT_TIMEOUT_MS, headers, notaryUrl } = {}) {
    // "" is the page's own origin in a browser (as the verifier takes it).
    if (typeof baseUrl !== "string") throw new TypeError(`baseUrl must be a string, not ${describe(baseUrl)}`);
    optionalString(notaryUrl, "notaryUrl");
    optionalString(apiKey, "apiKey");
    checkMs(timeoutMs, "timeoutMs");
    const fetchFn = fetch ?? globalThis.fetch;
    if (typeof fetchFn !== "function") throw new TypeError("no fetch: pass options.fetch (globalThis.fetch is missing)");
    /** The service's base URL, without a trailing slash. */
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    /** Where the notary (/v1/…) is served: `notaryUrl`, or the service itself. */
    this.notaryUrl = (notaryUrl ?? baseUrl).replace(/\/+$/, "");
    // Called unbound: window.fetch throws "Illegal invocation" when called as a method of another object.
    this.#fetch = fetch ? fetch : (...args) => globalThis.fetch(...args);
    this.#apiKey = apiKey ?? null;
    this.#timeoutMs = timeoutMs;
    this.#headers = new Headers(headers ?? {});
  }

  /**
   * One request: `ok` lists the statuses that are answers; the JSON object body is returned with
   * its status. Everything else becomes a typed error.
   */
  async #send(method, base, path, { ok, body, headers, signal, timeoutMs }) {
    const url = base + path;
    const limit = timeoutMs ?? this.#timeoutMs;
    const sent = new Headers(this.#headers);
    sent.set("accept", "application/json");
    if (body !== undefined) sent.set("content-type", "application/json");
    for (const [name, value] of Object.entries(headers ?? {})) sent.set(name, value);
    const deadline = deadlineSignal(signal, limit);
    // A failure after the signal fired is the abort's, whatever fetch wrapped it in.
    const failed = (e) => {
      if (deadline.timedOut()) {
        return new TimeoutError(`${method} ${url}: no answer within ${limit} ms`, { timeoutMs: limit, method, url });
      }
      if (signal?.aborted) return abortReason(signal);
      return new NetworkError(`${method} ${url}: ${causeText(e)}`, { method, url, cause: e });
    };
    let res;
    let text;
    try {
      try {
        res = await this.#fetch(url, {
          method,
          headers: sent,
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: deadline.signal,
        });
        text = await res.text();
      } catch (e) {
        throw failed(e);
      }
    } finally {
      deadline.dispose();
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new NetworkError(`${method} ${url}: ${res.status}, and the body is not JSON: ${preview(text)}`, {
        method,
        url,
        status: res.status,
      });
    }
    if (!ok.includes(res.status)) {
      throw errorFor(res.status, json, { method, url, retryAfter: retryAfter(res.headers, json) });
    }
    if (!isObject(json)) {
      throw new NetworkError(`${method} ${url}: ${res.status}, expected a JSON object, got ${preview(json)}`, {
        method,
        url,
        status: res.status,
      });
    }
    return { status: res.status, body: json };
  }

  #api(method, path, ok, options = {}, body) {
    return this.#send(method, this.baseUrl, path, { ok, body, ...pick(options) });
  }

  async #get(path, options) {
    return (await this.#api("GET", path, [200], options)).body;
  }

  // ---- system ----

  async info(options) {
    return this.#get("/", options);
  }

  async health(options) {
    // 503 is an answer too: a degraded service says what is wrong in the same body.
    return (await this.#api("GET", "/health", [200, 503], options)).body;
  }

  // ---- randomness ----

  async entropy(options) {
    const { status, body } = await this.#api("GET", "/api/v1/entropy", [200, 202], options);
    return status === 200 ? body : null;
  }

  async catalog(options) {
    return this.#get("/api/v1/games", options);
  }

  async bet(game, request, options) {
    checkGame(game);
    if (!isObject(request)) throw new TypeError(`the bet request must be an object, not ${describe(request)}`);
    if (typeof request.bet_type !== "string") {
      throw new TypeError(`request.bet_type must be a string, not ${describe(request.bet_type)}`);
    }
    // The body goes as given: the server refuses what is wrong, naming the field and the bet types.
    return (await this.#api("POST", `/api/v1/games/${game}/bet`, [200, 202], options, request)).body;
  }

  dice(request, options) {
    return this.bet("dice", request, options);
  }

  sicbo(request, options) {
    return this.bet("sicbo", request, options);
  }

  async rng(clientSeed, options) {
    optionalString(clientSeed, "clientSeed");
    const body = clientSeed === undefined || clientSeed === null ? {} : { client_seed: clientSeed };
    return (await this.#api("POST", "/api/v1/rng/generate", [202], options, body)).body;
  }

  async game(gameId, options) {
    checkId(gameId, "gameId");
    return (await this.#api("GET", `/api/v1/games/${gameId}`, [200, 202], options)).body;
  }

  async wait(gameId, { timeoutMs = DEFAULT_WAIT_MS, intervalMs = DEFAULT_INTERVAL_MS, signal } = {}) {
    checkId(gameId, "gameId");
    return this.#poll(gameId, timeoutMs, intervalMs, signal, async (opts) => {
      const game = await this.game(gameId, opts);
      return game.status === "resolved" ? game : null;
    });
  }

  async verification(gameId, options) {
    checkId(gameId, "gameId");
    const { status, body } = await this.#api("GET", `/api/v1/verify/${gameId}`, [200, 202], options);
    return status === 200 ? body : null;
  }

  async verify(gameId, { group, minMargin, minRate, allowVersion1, witnessPolicy, maxRate, deltaMs, onStep, timeoutMs = DEFAULT_WAIT_MS, intervalMs = DEFAULT_INTERVAL_MS, signal } = {}) {
    checkId(gameId, "gameId");
    if (onStep !== undefined && onStep !== null && typeof onStep !== "function") throw new TypeError("onStep must be a function");
    optionalString(group, "group");
    parseMinMargin(minMargin);
    parseMinRate(minRate);
    // The witnessed step's inputs too, before the first request (verifyGame reads them again).
    if (witnessPolicy !== undefined && witnessPolicy !== null) {
      await parsePolicy(witnessPolicy);
      if (maxRate !== undefined && maxRate !== null) parseMaxRate(maxRate);
      if (deltaMs !== undefined && deltaMs !== null) parseDeltaMs(deltaMs);
    }
    // Polling the verify endpoint itself: a resolved game costs one request, and a pending one
    // is waited for rather than refused.
    const body = await this.#poll(gameId, timeoutMs, intervalMs, signal, (opts) => this.verification(gameId, opts));
    // The verifier fetches the epochs and batches it checks through this client's fetch, headers
    // and timeout; the answer already fetched is handed over, not fetched again.
    const fetchFn = (url, init = {}) => {
      const headers = new Headers(this.#headers);
      for (const [name, value] of new Headers(init.headers ?? {})) headers.set(name, value);
      const deadline = deadlineSignal(signal, this.#timeoutMs);
      return this.#fetch(url, { ...init, headers, signal: deadline.signal }).then(
        async (res) => {
          // The verifier reads the body after this resolves: keep the deadline until then.
          const text = await res.text().finally(() => deadline.dispose());
          const empty = [101, 204, 205, 304].includes(res.status);
          return new Response(empty ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers });
        },
        (e) => {
          deadline.dispose();
          throw e;
        },
      );
    };
    // The group stays the caller's choice: undefined lets the verifier require its default.
    return verifyGame(this.baseUrl, gameId, onStep, { group, minMargin, minRate, allowVersion1, witnessPolicy, maxRate, deltaMs, fetch: fetchFn, body });
  }

  /**
   * Calls `once` until it returns non-null. At least one request is made whatever the
   * deadline; the later ones get at most the time left.
   */
  async #poll(gameId, timeoutMs, intervalMs, signal, once) {
    checkMs(timeoutMs, "timeoutMs");
    checkMs(intervalMs, "intervalMs");
    const deadline = Date.now() + timeoutMs;
    let first = true;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      const left = deadline - Date.now();
      const opts = first ? { signal } : { signal, timeoutMs: Math.max(1, Math.min(this.#timeoutMs, left)) };
      first = false;
      let got;
      try {
        got = await once(opts);
      } catch (e) {
        if (e instanceof TimeoutError && Date.now() >= deadline) break;
        throw e;
      }
      if (got !== null) return got;
      const rest = deadline - Date.now();
      if (rest <= 0) break;
      await sleep(Math.min(intervalMs, rest, MAX_DELAY_MS), signal);
    }
    throw new TimeoutError(`game ${gameId} is still pending after ${timeoutMs} ms`, { timeoutMs, gameId });
  }

  async stats(options) {
    return this.#get("/api/v1/stats", options);
  }

  async recent(options) {
    const body = await this.#get("/api/v1/recent", options);
    return Array.isArray(body.games) ? body.games : [];
  }

  async epoch(number, options = {}) {
    checkNumber(number, "epoch number");
    const query = new URLSearchParams();
    if (options.leafFrom !== undefined) query.set("leaf_from", String(checkCount(options.leafFrom, "leafFrom")));
    if (options.leafLimit !== undefined) query.set("leaf_limit", String(checkCount(options.leafLimit, "leafLimit")));
    const q = query.toString();
    return this.#get(`/api/v1/epochs/${number}${q ? `?${q}` : ""}`, options);
  }

  async poolBatch(number, options) {
    checkNumber(number, "pool batch number");
    return this.#get(`/api/v1/pool/batches/${number}`, options);
  }

  // ---- notary ----

  #notary(method, path, ok, options = {}, body, headers) {
    return this.#send(method, this.notaryUrl, path, { ok, body, headers, ...pick(options) });
  }

  async notarize(request, options) {
    if (!isObject(request)) throw new TypeError(`the notarize request must be an object, not ${describe(request)}`);
    const { schema, payloadHash, metadata, idempotencyKey, apiKey } = request;
    if (typeof schema !== "string") throw new TypeError(`schema must be a string, not ${describe(schema)}`);
    if (typeof payloadHash !== "string") throw new TypeError(`payloadHash must be a string, not ${describe(payloadHash)}`);
    if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
      throw new TypeError(`metadata must be an object, not ${describe(metadata)}`);
    }
    optionalString(idempotencyKey, "idempotencyKey");
    optionalString(apiKey, "apiKey");
    const body = { schema, payload_hash: payloadHash };
    if (metadata !== undefined && metadata !== null) body.metadata = metadata;
    const headers = {};
    const key = apiKey ?? this.#apiKey;
    if (key !== null && key !== undefined) headers.authorization = `Bearer ${key}`;
    if (idempotencyKey !== undefined && idempotencyKey !== null) headers["idempotency-key"] = idempotencyKey;
    // 202 when stored; a replayed Idempotency-Key answers what the first request got.
    return (await this.#notary("POST", "/v1/notarize", [200, 202], options, body, headers)).body;
  }

  async receipt(receiptId, options) {
    checkId(receiptId, "receiptId");
    return (await this.#notary("GET", `/v1/notarize/${receiptId}`, [200], options)).body;
  }

  async notarySchemas(options) {
    return (await this.#notary("GET", "/v1/notarize/schemas", [200], options)).body;
  }

  async notaryStatus(options) {
    return (await this.#notary("GET", "/v1/notarize/status", [200], options)).body;
  }
}

/** The per-call options a request takes (others, such as an epoch's leaf range, are not sent). */
function pick(options) {
  const out = {};
  if (options.signal !== undefined) out.signal = options.signal;
  if (options.timeoutMs !== undefined) out.timeoutMs = checkMs(options.timeoutMs, "timeoutMs");
  return out;
}

/** Seconds to wait: the Retry-After header (seconds or an HTTP date), else the body's retry_after. */
function retryAfter(headers, body) {
  const h = headers.get("retry-after");
  if (h !== null) {
    const text = h.trim();
    if (/^\d+$/.test(text)) return Number(text);
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const v = isObject(body) ? body.retry_after : undefined;
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null;
}
