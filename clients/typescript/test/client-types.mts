// Compile-only: `tsc -p tsconfig.json` checks that the declared types of the client (src/client.d.mts)
// take the right uses and refuse the wrong ones (each `@ts-expect-error` line must be an error,
// or tsc fails on the unused directive). Nothing here runs: the function is never called.

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
  type BetAccepted,
  type BetPlaced,
  type DiceBetRequest,
  type Entropy,
  type Game,
  type BetGame,
  type InstantBet,
  type JsonObject,
  type ReceiptView,
  type RecentGame,
  type ResolvedGame,
  type SicboBetRequest,
  type GameVerification,
  type VerifyReport,
} from "../src/client.mjs";

/** Fails to compile unless T and U are the same type. */
type Equal<T, U> = (<V>() => V extends T ? 1 : 2) extends <V>() => V extends U ? 1 : 2 ? true : false;
function assertType<T extends true>(): T | undefined {
  return undefined;
}

export async function typeChecks(): Promise<void> {
  const vrs = new VrsClient("http://127.0.0.1:8080", { apiKey: "k", timeoutMs: 5_000, headers: { "x-trace": "1" } });
  new VrsClient("", { fetch: globalThis.fetch, notaryUrl: "http://127.0.0.1:8081" });
  // @ts-expect-error: the base URL is required
  new VrsClient();
  // @ts-expect-error: timeoutMs is a number of milliseconds
  new VrsClient("http://x", { timeoutMs: "5s" });
  // @ts-expect-error: no such option
  new VrsClient("http://x", { retries: 3 });

  const games: readonly BetGame[] = GAMES;
  void games;

  // Answers: the wire's member names and types.
  const info = await vrs.info();
  const version: string = info.version;
  const key: string | undefined = info.acceptance_keys[0]?.public_key;
  void [version, key];
  // @ts-expect-error: snake_case on the wire, as the server writes it
  void info.acceptanceKeys;

  const health = await vrs.health();
  const db: "connected" | "disconnected" = health.database;
  void db;

  const entropy = await vrs.entropy();
  assertType<Equal<typeof entropy, Entropy | null>>();
  // @ts-expect-error: null while no epoch has resolved
  void entropy.epoch;
  if (entropy) void (entropy.epoch + 1);

  const catalog = await vrs.catalog();
  const betTypes: string[] | undefined = catalog.games.find((g) => g.type === "dice")?.bet_types;
  void [betTypes, catalog.raw_rng.endpoint];

  // Bets: the body as on the wire, checked per bet type.
  const placed = await vrs.dice({ bet_type: "over7", amount: 1.5, player_seed: "seed" });
  assertType<Equal<typeof placed, BetPlaced>>();
  if (placed.pool_served === true) {
    const instant: InstantBet = placed;
    const rng: string = instant.result.rngValue;
    void rng;
  } else {
    const accepted: BetAccepted = placed;
    const epoch: number = accepted.resolves_at_epoch;
    void epoch;
  }
  const epochPath = await vrs.sicbo({ bet_type: "combo", combo: [2, 5], instant: false });
  assertType<Equal<typeof epochPath, BetAccepted>>();
  const viaBet = await vrs.bet("sicbo", { bet_type: "total", target: 10 });
  assertType<Equal<typeof viaBet, BetPlaced>>();
  const accepted = await vrs.bet("dice", { bet_type: "exact", target: 7, instant: false });
  assertType<Equal<typeof accepted, BetAccepted>>();
  // Optional values pass through as they are (exactOptionalPropertyTypes takes undefined here).
  const maybeSignal: AbortSignal | undefined = undefined;
  const maybeSeed: string | undefined = undefined;
  const flag = Math.random() > 0.5;
  const either = await vrs.dice({ bet_type: "odd", player_seed: maybeSeed, instant: flag }, { signal: maybeSignal });
  assertType<Equal<typeof either, BetPlaced>>();
  const someGame = "dice" as BetGame;
  await vrs.bet(someGame, { bet_type: "odd" });
  const dice: DiceBetRequest = { bet_type: "even", player_id: "p", operator_key: "op", amount: null };
  const sicbo: SicboBetRequest = { bet_type: "single", target: 6 };
  void [dice, sicbo];

  // @ts-expect-error: not a game
  await vrs.bet("roulette", { bet_type: "red" });
  // @ts-expect-error: big is a Sic Bo bet type
  await vrs.dice({ bet_type: "big" });
  // @ts-expect-error: exact needs a target
  await vrs.dice({ bet_type: "exact" });
  // @ts-expect-error: a dice body has no combo
  await vrs.dice({ bet_type: "odd", combo: [1, 2] });
  // @ts-expect-error: combo needs two faces
  await vrs.sicbo({ bet_type: "combo", combo: [1] });
  // @ts-expect-error: combo takes no target
  await vrs.sicbo({ bet_type: "combo", combo: [1, 2], target: 3 });
  // @ts-expect-error: total needs a target
  await vrs.sicbo({ bet_type: "total" });
  // @ts-expect-error: the amount is a JSON number, not a string
  await vrs.dice({ bet_type: "odd", amount: "1.00" });
  // @ts-expect-error: the wire's spelling, bet_type
  await vrs.dice({ betType: "odd" });
  // @ts-expect-error: a dice body for a sicbo bet
  await vrs.bet("sicbo", { bet_type: "exact", target: 7 });

  const rng = await vrs.rng("client seed");
  const requestId: string = rng.request_id;
  await vrs.rng();
  // @ts-expect-error: the seed is a string
  await vrs.rng(42);
  void requestId;

  // Games: pending or resolved, told apart by status.
  const game: Game = await vrs.game(rng.game_id);
  if (game.status === "resolved") {
    const r = game.result;
    if (r.game === "rng") {
      const random: string = r.random;
      void random;
    } else {
      const won: boolean | null = r.won;
      const die3: number | undefined = r.outcome.die3;
      void [won, die3];
    }
  } else {
    const at: number | null = game.resolves_at_epoch;
    void at;
    // @ts-expect-error: a pending game has no result
    void game.result;
  }
  const resolved: ResolvedGame = await vrs.wait(rng.game_id, { timeoutMs: 30_000, intervalMs: 100 });
  void resolved.replay[0]?.action;
  // @ts-expect-error: wait's options are in milliseconds, not seconds
  await vrs.wait(rng.game_id, { timeout: 30 });

  const verification = await vrs.verification(rng.game_id);
  assertType<Equal<typeof verification, GameVerification | null>>();
  if (verification) {
    const p = verification.proof;
    const epoch: number = p.vdfEpoch;
    if ("pool_served" in p) {
      const index: number = p.pool_index;
      void index;
    } else {
      const root: string = p.bets_root;
      void root;
    }
    void [epoch, p.anchorTx, verification.checks.every((c) => c.passed)];
  }
  const report: VerifyReport = await vrs.verify(rng.game_id, {
    group: "rsa2048",
    onStep: (step) => void step.passed,
    timeoutMs: 10_000,
    signal: AbortSignal.timeout(20_000),
  });
  const verdict: boolean = report.verified;
  void verdict;
  await vrs.verify(rng.game_id, { group: null });
  // @ts-expect-error: the group is an id such as "test512"
  await vrs.verify(rng.game_id, { group: 512 });

  const stats = await vrs.stats();
  const depth: number = stats.pool.depth;
  void depth;
  const recent: RecentGame[] = await vrs.recent();
  void recent;
  const epoch = await vrs.epoch(1, { leafFrom: 0, leafLimit: 10 });
  const y: string | null = epoch.y;
  void y;
  const batch = await vrs.poolBatch(1, { signal: new AbortController().signal });
  void batch.leaf_hashes.length;
  // @ts-expect-error: the number is a number
  await vrs.epoch("1");

  // Notary.
  const metadata: JsonObject = { name: "report.pdf", pages: 3, tags: ["a"] };
  const receipt = await vrs.notarize({ schema: "sha256", payloadHash: "ab".repeat(32), metadata, idempotencyKey: "k-1" });
  const view: ReceiptView = await vrs.receipt(receipt.receipt_id);
  void view.verification.verified;
  // @ts-expect-error: payloadHash is required
  await vrs.notarize({ schema: "sha256" });
  // @ts-expect-error: camelCase here: this is the client's request, not the wire body
  await vrs.notarize({ schema: "sha256", payload_hash: "ab".repeat(32) });
  // @ts-expect-error: metadata is a JSON object
  await vrs.notarize({ schema: "sha256", payloadHash: "ab".repeat(32), metadata: () => 1 });
  const schemas = await vrs.notarySchemas();
  void schemas.schemas.map((s) => s.id);
  const status = await vrs.notaryStatus();
  void status.payment_methods;

  // Errors: a hierarchy narrowed with instanceof.
  try {
    await vrs.dice({ bet_type: "odd" });
  } catch (e) {
    if (e instanceof BadRequest) {
      const valid: string[] = e.validBetTypes;
      const example: JsonObject | null = e.example;
      const status: number = e.status;
      void [valid, example, status, e.field];
    } else if (e instanceof RateLimited) {
      const wait: number | null = e.retryAfter;
      void wait;
    } else if (e instanceof TimeoutError) {
      void e.timeoutMs;
    } else if (e instanceof NetworkError) {
      void e.status;
    }
    const all: VrsError[] = [
      new ApiError(500, {}, { method: "GET", url: "/" }),
      new NotFound(404, {}, { method: "GET", url: "/" }),
      new PaymentRequired(401, {}, { method: "GET", url: "/" }),
      new Conflict(409, {}, { method: "GET", url: "/" }),
      new ServerError(503, {}, { method: "GET", url: "/" }),
      new NetworkError("down"),
      new TimeoutError("slow", { timeoutMs: 1 }),
    ];
    void all;
    // @ts-expect-error: an ApiError's body is unknown: look before use
    void new ApiError(400, {}, { method: "GET", url: "/" }).body.error;
  }
}
