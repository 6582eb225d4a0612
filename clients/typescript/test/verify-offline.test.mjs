// Offline self-tests of the in-browser verifier's core (clients/typescript/src/vrs-verify.mjs), against the
// documents alone: the test vectors of docs/test-vectors/rsa2048.json (PROTOCOL.md §9), the
// worked examples of GAMES.md §6, known Baillie-PSW pseudoprimes (PROTOCOL.md §5) and RFC 6962
// trees; and of its class-group part (clients/typescript/src/vrs-classgroup.mjs) against chiavdf 1.2.0's own
// answers (engine/src/classgroup/testdata/chiavdf-1.2.0.json, and an epoch proved by chiavdf
// below). No server, no browser, no dependency: `npm test` in clients/typescript.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { fileURLToPath } from "node:url";
import * as v from "../src/vrs-verify.mjs";
import * as cg from "../src/vrs-classgroup.mjs";
import { encodeCommitment, encodeOutput, encodePlan, noteKey, operatorLog } from "./witnessed-log.mjs";

const root = new URL("../../../", import.meta.url);
const readJson = async (path) => JSON.parse(await readFile(fileURLToPath(new URL(path, root)), "utf8"));
const vectors = await readJson("docs/test-vectors/rsa2048.json");
const chiavdf = await readJson("engine/src/classgroup/testdata/chiavdf-1.2.0.json");

const flip = (hex, bit) => {
  const n = BigInt("0x" + hex) ^ (1n << BigInt(bit));
  return n.toString(16).padStart(hex.length, "0");
};

async function refuses(promise, pattern) {
  await assert.rejects(promise, (e) => {
    assert.match(e.message, pattern);
    return true;
  });
}

test("rsa2048 test vectors verify, and seed → x holds", async () => {
  const n = v.modulusFromId("rsa2048");
  assert.equal(v.byteLength(n), 256);
  for (const doc of vectors.vectors) {
    const detail = await v.verifyWesolowski(n, doc);
    assert.match(detail, new RegExp(`T = ${doc.iterations}$`));
    const x = await v.hashToGroup(v.hexToBytes(doc.seed, 32), n);
    assert.equal(v.bytesToHex(v.bigIntToBytes(x, 256)), doc.x.toLowerCase());
    // Upper-case hex is accepted (PROTOCOL.md, conventions).
    await v.verifyWesolowski(n, { ...doc, x: doc.x.toUpperCase(), y: doc.y.toUpperCase() });
  }
});

test("tampered vectors are refused", async () => {
  const n = v.modulusFromId("rsa2048");
  const doc = vectors.vectors[2];
  for (const f of ["x", "y", "pi", "l"]) {
    await refuses(v.verifyWesolowski(n, { ...doc, [f]: flip(doc[f], 1) }), /ℓ|≠|canonical|is 0/);
  }
  await refuses(v.verifyWesolowski(n, { ...doc, iterations: doc.iterations + 1 }), /ℓ is not/);
  await refuses(v.verifyWesolowski(n, { ...doc, iterations: 0 }), /at least 1/);
  await refuses(v.verifyWesolowski(n, { ...doc, y: "00" + doc.y }), /hex digits/);
  const ny = (n - BigInt("0x" + doc.y)).toString(16).padStart(512, "0");
  await refuses(v.verifyWesolowski(n, { ...doc, y: ny }), /not canonical/);
  await refuses(v.verifyWesolowski(n, { ...doc, x: "0".repeat(511) + "1" }), /is 1/);
  await refuses(v.verifyWesolowski(n, { ...doc, x: "0x" + doc.x.slice(2) }), /not plain hex/);
});

test("Baillie-PSW agrees with trial division and refuses known pseudoprimes", () => {
  const isPrime = (n) => {
    if (n < 2) return false;
    for (let p = 2; p * p <= n; p++) if (n % p === 0) return false;
    return true;
  };
  for (let n = 0; n < 20000; n++) assert.equal(v.isProbablePrime(n), isPrime(n), `n = ${n}`);
  for (const n of [2047n, 3277n, 4033n, 4681n, 8321n, 5459n, 5777n, 10877n, 16109n, 18971n, 1093n ** 2n, 3511n ** 2n, 3215031751n, 3825123056546413051n]) {
    assert.equal(v.isProbablePrime(n), false, `${n}`);
  }
  for (const [n, truth] of [
    [(1n << 61n) - 1n, true],
    [(1n << 67n) - 1n, false],
    [(1n << 127n) - 1n, true],
    [(1n << 255n) - 19n, true],
    [(1n << 256n) - 189n, true],
    [(1n << 256n) - 187n, false],
    [((1n << 127n) - 1n) ** 2n, false],
  ]) {
    assert.equal(v.isProbablePrime(n), truth, `${n}`);
  }
  for (const [a, n, j] of [[1001n, 9907n, -1], [19n, 45n, 1], [8n, 21n, -1], [5n, 21n, 1], [6n, 9n, 0], [30n, 59n, -1], [-7n, 15n, 1]]) {
    assert.equal(v.jacobi(a, n), j, `(${a}/${n})`);
  }
});

test("modPow and isqrt", () => {
  const m = v.modulusFromId("test512");
  const b = 0x1234567890abcdefn;
  let slow = 1n;
  for (let i = 0; i < 300; i++) slow = (slow * b) % m;
  assert.equal(v.modPow(b, 300n, m), slow);
  assert.equal(v.modPow(b, 0n, m), 1n);
  for (const n of [0n, 1n, 2n, 15n, 16n, 17n, (1n << 200n) + 12345n]) {
    const r = v.isqrt(n);
    assert.ok(r * r <= n && (r + 1n) * (r + 1n) > n, `${n}`);
  }
});

test("GAMES.md §6 worked examples", async () => {
  const y = Uint8Array.from({ length: 64 }, (_, i) => i + 1);
  const id = "0123456789abcdef0123456789abcdef";
  const rng = await v.rngValue(y, id, "lucky");
  assert.equal(v.bytesToHex(rng), "e94bba8eb7923ebd2bc4a789e0c0de16070e66afbf3acb57fabb6c174843d336");
  assert.equal(v.bytesToHex(await v.rngValue(y, id, null)), "4bac22548031788f86f3a049bd5685e8bbe0700cd9ee4f40452701d759e0b20a");
  assert.deepEqual((await v.rollDice(rng, 2)).dice, [6, 4]);
  assert.deepEqual((await v.rollDice(rng, 3)).dice, [6, 4, 1]);
  const over7 = v.settle({ game: "dice", bet_type: "over7", amount: "1.00" }, [6, 4]);
  assert.deepEqual([over7.won, over7.payout], [true, "2.37"]);
  const total10 = v.settle({ game: "sicbo", bet_type: "total", target: 10, amount: "2.50" }, [6, 4, 1]);
  assert.deepEqual([total10.won, total10.payout], [false, "0.00"]);
  assert.equal(v.settle({ game: "sicbo", bet_type: "total", target: 10, amount: "2.50" }, [6, 3, 1]).payout, "17.50");
  // The 33rd die comes from the first HMAC block.
  const block = await v.hmacSha256(rng, v.u32(1));
  assert.equal(v.bytesToHex(block), "5983f2c2432ff1007704047145361790c62afbb520664d1f629adb2463da57bb");
  const r2 = await v.rngValue(y, id, "lucky-20");
  assert.equal(v.bytesToHex(r2), "63fd6a4c78e4d0b91e372182e75130924489f583ab532aa3cbb15fc1924e27af");
  const roll = await v.rollDice(r2, 3);
  assert.deepEqual([roll.dice, roll.skipped, roll.bytes_used], [[4, 5, 5], 1, "63fd6a4c"]);
  assert.equal(v.settle({ game: "sicbo", bet_type: "total", target: 14, amount: "1.00" }, roll.dice).payout, "13.00");
  // A die beyond the first 32 bytes: the stream goes on in HMAC blocks.
  const many = await v.rollDice(rng, 40);
  assert.equal(many.blocks, 1);
  assert.deepEqual([many.skipped, many.dice.slice(32)], [0, [6, 6, 3, 3, 2, 6, 2, 1]]);
});

test("payout tables of GAMES.md §3 and §4", () => {
  const dice = (bet_type, target, d) => v.settle({ game: "dice", bet_type, target, amount: "1.00" }, d).payout;
  assert.equal(dice("exact", 2, [1, 1]), "35.64");
  assert.equal(dice("exact", 3, [1, 2]), "17.82");
  assert.equal(dice("exact", 4, [2, 2]), "11.88");
  assert.equal(dice("exact", 5, [2, 3]), "8.91");
  assert.equal(dice("exact", 6, [3, 3]), "7.12");
  assert.equal(dice("exact", 7, [3, 4]), "5.94");
  assert.equal(dice("over7", null, [3, 4]), "0.00");
  assert.equal(dice("under7", null, [3, 4]), "0.00");
  assert.equal(dice("under7", null, [3, 3]), "2.37");
  assert.equal(dice("odd", null, [3, 4]), "1.98");
  assert.equal(dice("even", null, [3, 4]), "0.00");
  assert.equal(v.settle({ game: "dice", bet_type: "exact", target: 2, amount: "10.00" }, [1, 1]).payout, "356.40");
  // Sic Bo: returns summed over the 216 outcomes give the documented house edges.
  const faces = [1, 2, 3, 4, 5, 6];
  const returned = (bet) => {
    let sum = 0n;
    for (const a of faces) for (const b of faces) for (const c of faces) sum += v.parseCents(v.settle({ game: "sicbo", amount: "1.00", ...bet }, [a, b, c]).payout);
    return sum; // in cents for a 1.00 stake
  };
  const edge = (bet) => Number(((21600n - returned(bet)) * 10000n + 10800n) / 21600n) / 100;
  assert.equal(edge({ bet_type: "big" }), 2.78);
  assert.equal(edge({ bet_type: "small" }), 2.78);
  assert.equal(edge({ bet_type: "odd" }), 2.78);
  assert.equal(edge({ bet_type: "even" }), 2.78);
  assert.equal(edge({ bet_type: "single", target: 3 }), 7.87);
  assert.equal(edge({ bet_type: "double", target: 3 }), 18.52);
  assert.equal(edge({ bet_type: "triple", target: 3 }), 16.2);
  assert.equal(edge({ bet_type: "anyTriple" }), 13.89);
  assert.equal(edge({ bet_type: "combo", combo: [2, 5] }), 16.67);
  const totals = { 4: 15.28, 5: 13.89, 6: 16.67, 7: 9.72, 8: 12.5, 9: 18.98, 10: 12.5, 11: 12.5, 12: 18.98, 13: 12.5, 14: 9.72, 15: 16.67, 16: 13.89, 17: 15.28 };
  for (const [t, e] of Object.entries(totals)) assert.equal(edge({ bet_type: "total", target: Number(t) }), e, `total ${t}`);
  assert.throws(() => v.settle({ game: "dice", bet_type: "exact", target: 13, amount: "1.00" }, [6, 6]), /target/);
  assert.throws(() => v.settle({ game: "dice", bet_type: "nope", amount: "1.00" }, [6, 6]), /unknown/);
});

test("bet leaf layout (PROTOCOL.md §11)", () => {
  const leaf = v.betLeaf({
    game_id: "0123456789abcdef0123456789abcdef",
    game: "sicbo",
    bet_type: "combo",
    target: null,
    combo: [2, 5],
    amount: "2.50",
    player_id: "alice",
    player_seed: "lucky",
    operator_key: "vrs-house",
  });
  const enc = new TextEncoder();
  const parts = [Uint8Array.of(10), enc.encode("vrs/v1/bet")];
  for (const f of ["0123456789abcdef0123456789abcdef", "sicbo", "combo", "", "2,5", "2.50", "alice", "lucky", "vrs-house"]) {
    parts.push(v.u16(enc.encode(f).length), enc.encode(f));
  }
  assert.equal(v.bytesToHex(leaf), v.bytesToHex(v.concat(...parts)));
});

test("RFC 6962 trees and audit paths", async () => {
  const empty = await v.merkleRoot([]);
  assert.equal(v.bytesToHex(empty), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  for (let size = 1; size <= 9; size++) {
    const leaves = await Promise.all(Array.from({ length: size }, (_, i) => v.leafHash(Uint8Array.of(i))));
    const root = await v.merkleRoot(leaves);
    for (let i = 0; i < size; i++) {
      const path = await auditPath(leaves, i);
      assert.equal(v.bytesToHex(await v.rootFromPath(leaves[i], i, size, path)), v.bytesToHex(root), `${i} of ${size}`);
      if (path.length) {
        await refuses(v.rootFromPath(leaves[i], i, size, path.slice(1)), /too short/);
        await refuses(v.rootFromPath(leaves[i], i, size, [...path, path[0]]), /too long/);
      }
    }
  }
});

test("merkleRoot is RFC 6962's MTH (split at the largest power of two below n)", async () => {
  const mth = async (h) => {
    if (h.length === 1) return h[0];
    let k = 1;
    while (k * 2 < h.length) k *= 2;
    return v.nodeHash(await mth(h.slice(0, k)), await mth(h.slice(k)));
  };
  for (let size = 1; size <= 70; size++) {
    const leaves = await Promise.all(Array.from({ length: size }, (_, i) => v.leafHash(v.u16(i))));
    assert.equal(v.bytesToHex(await v.merkleRoot(leaves)), v.bytesToHex(await mth(leaves)), `size ${size}`);
  }
});

// RFC 6962 §2.1.1 PATH(m, D[n]), written here only to test rootFromPath.
async function auditPath(hashes, m) {
  if (hashes.length <= 1) return [];
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  if (m < k) return [...(await auditPath(hashes.slice(0, k), m)), await v.merkleRoot(hashes.slice(k))];
  return [...(await auditPath(hashes.slice(k), m - k)), await v.merkleRoot(hashes.slice(0, k))];
}

test("game ids from pasted text", () => {
  const id = "0123456789abcdef0123456789abcdef";
  assert.equal(v.extractGameId(id), id);
  assert.equal(v.extractGameId(` ${id.toUpperCase()} `), id);
  assert.equal(v.extractGameId(`http://host:8080/verify?game=${id}`), id);
  assert.equal(v.extractGameId(`http://host/api/v1/verify/${id}`), id);
  assert.equal(v.extractGameId("nope"), null);
  assert.equal(v.extractGameId(id + "0"), null);
});

// ---------------------------------------------------------------------------------------------
// Class groups (PROTOCOL.md §18, §19): chiavdf 1.2.0, byte for byte
// ---------------------------------------------------------------------------------------------

const unhex = (hex) => v.hexToBytes(hex);
const flipByte = (bytes, i, mask = 1) => {
  const out = Uint8Array.from(bytes);
  out[i] ^= mask;
  return out;
};

async function refusedByClassGroup(promise, pattern = /./) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof cg.ClassGroupError, `not a ClassGroupError: ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

test("class-group ids", () => {
  assert.equal(cg.classGroupBits("classgroup-1024"), 1024);
  assert.equal(cg.classGroupBits("classgroup-512"), 512);
  assert.equal(cg.classGroupBits("classgroup"), 1024);
  for (const bad of ["classgroup-", "classgroup-1025", "classgroup-2048", "classgroup-0", "classgroupx"]) {
    assert.throws(() => cg.classGroupBits(bad), cg.ClassGroupError, bad);
  }
  assert.equal(v.isClassGroupId("classgroup-1024"), true);
  assert.equal(v.isClassGroupId("rsa2048"), false);
  assert.equal(v.isClassGroupId(undefined), false);
});

test("chiavdf's primality verdicts: its prime table, and the tabled primes refused", () => {
  const t = cg.PRIME_PRODUCTS.map((g) => g.product);
  assert.equal(t[0], 0xe221f97c30e94e1dn);
  assert.equal(t[1], 0x6329899ea9f2714bn);
  assert.equal(t[4], 0x3bd7632c1f36eb51n);
  assert.equal(t[5], 0xfd14b3c90d88a9n);
  assert.equal(t[t.length - 1], 0xb1110edec9a5e7n);
  // chiavdf's create_discriminant(_, 8) is −0xef for every seed: 151 … 233 are refused.
  for (const p of [151n, 167n, 191n, 199n, 223n]) assert.equal(cg.isProbablePrime(p), false, `${p}`);
  assert.equal(cg.isProbablePrime(239n), true);
  for (const n of [2047n, 3277n, 4033n, 3215031751n, 1194649n, 12327121n]) assert.equal(cg.isProbablePrime(n), false, `${n}`);
  const m127 = (1n << 127n) - 1n;
  const m521 = (1n << 521n) - 1n;
  assert.equal(cg.isProbablePrime(m127), true);
  assert.equal(cg.isProbablePrime(m521), true);
  assert.equal(cg.isProbablePrime(m127 * m521), false);
  // Above the table, BPSW is exact on small numbers.
  for (let n = 15000; n < 17000; n++) {
    let prime = n > 1;
    for (let d = 2; d * d <= n; d++) if (n % d === 0) prime = false;
    assert.equal(cg.isProbablePrime(BigInt(n)), prime, `${n}`);
  }
});

test("chiavdf 1.2.0 discriminants: createDiscriminant(seed, bits)", async () => {
  assert.equal(chiavdf.chiavdf, "1.2.0");
  assert.ok(chiavdf.discriminants.length >= 30);
  for (const d of chiavdf.discriminants) {
    const got = await cg.createDiscriminant(unhex(d.seed), Number(d.bits));
    assert.equal(got.toHex(), d.d, `seed ${d.seed}, ${d.bits} bits`);
    assert.equal(got.bits, Number(d.bits));
    assert.equal(cg.parseDiscriminant(d.d).value, got.value);
  }
  assert.equal(cg.parseDiscriminant("-0XEF").toHex(), "-0xef");
  for (const bad of ["", "-", "-0x", "0x17", "17", "-0x10", "-0x1f", "-0xg7", "- 0x17", "-0x-17", "-0x3", "-0xed", `-0x${"f".repeat(300)}`]) {
    assert.throws(() => cg.parseDiscriminant(bad), cg.ClassGroupError, bad);
  }
  const seed = unhex("0102");
  for (const bits of [0, 513, 1028, 1032, 2048]) await refusedByClassGroup(cg.createDiscriminant(seed, bits), /multiple of 8/);
  await refusedByClassGroup(cg.createDiscriminant(new Uint8Array(0), 512), /empty/);
  // chiavdf never returns here (256 counter values, no prime): refused, not looped on.
  await refusedByClassGroup(cg.createDiscriminant(unhex("01"), 256), /never return/);
});

test("chiavdf 1.2.0 forms decode to (a, b) and re-encode to the same bytes", () => {
  assert.ok(chiavdf.forms.length >= 10);
  for (const f of chiavdf.forms) {
    const d = cg.parseDiscriminant(f.d);
    const form = cg.decodeForm(d, unhex(f.bytes));
    assert.deepEqual([form.a, form.b], [BigInt(f.a), BigInt(f.b)], f.bytes);
    assert.equal(v.bytesToHex(cg.encodeForm(d, form)), f.bytes);
  }
  const d = cg.parseDiscriminant(chiavdf.forms.find((f) => f.d.length > 200).d);
  const g = cg.generatorForm(d);
  assert.equal(v.bytesToHex(cg.encodeForm(d, g)), chiavdf.generator);
  // As chiavdf: a first byte with the identity or generator flag stands for that form whatever
  // follows.
  const junk = flipByte(flipByte(unhex(chiavdf.generator), 50, 0x77), 0, 0xf0);
  assert.deepEqual(cg.decodeForm(d, junk), g);
  // Any other encoding must be the canonical one, and the right length.
  const f = cg.pow(g, 987654321n, d);
  const bytes = cg.encodeForm(d, f);
  assert.deepEqual(cg.decodeForm(d, bytes), f);
  assert.throws(() => cg.decodeForm(d, flipByte(bytes, 99)), cg.ClassGroupError);
  assert.throws(() => cg.decodeForm(d, flipByte(bytes, 0, 0x10)), cg.ClassGroupError);
  assert.throws(() => cg.decodeForm(d, bytes.subarray(0, 99)), /99 bytes/);
  // Its inverse (negative b) too.
  const inv = cg.decodeForm(d, cg.encodeForm(d, { a: f.a, b: -f.b, c: f.c }));
  assert.deepEqual(cg.multiply(inv, f, d), cg.pow(g, 0n, d));
});

test("chiavdf 1.2.0 proofs verify; changed bytes and a wrong T are refused cleanly", async () => {
  assert.ok(chiavdf.proofs.length >= 10);
  for (const p of chiavdf.proofs) {
    const what = `${p.bits} bits, T = ${p.t}`;
    const d = await cg.createDiscriminant(unhex(p.seed), Number(p.bits));
    const [x, y, proof, t] = [unhex(p.x), unhex(p.y), unhex(p.proof), BigInt(p.t)];
    assert.equal(p.x, chiavdf.generator);
    const b = await cg.verifyEncoded(d, x, y, proof, t);
    assert.equal(v.bitLength(b), 264, what);
    const l = cg.lBytes(b);
    await cg.verifyEpoch(d, { x, y, pi: proof, l }, t);
    await refusedByClassGroup(cg.verifyEncoded(d, x, y, proof, t + 1n), /≠ y/);
    await refusedByClassGroup(cg.verifyEpoch(d, { x, y, pi: proof, l: flipByte(l, 32) }, t), /ℓ is not B/);
    await refusedByClassGroup(cg.verifyEncoded(d, x, y, proof, 0n), /at least 1/);
    // A changed byte of y or π (for T < 264 π is the identity: its first byte alone counts).
    for (const i of [0, 1, 2, 10, 40, 60]) {
      await refusedByClassGroup(cg.verifyEncoded(d, x, flipByte(y, i), proof, t));
      if (proof[0] & 0x0c) continue;
      await refusedByClassGroup(cg.verifyEncoded(d, x, y, flipByte(proof, i), t));
    }
  }
});

// A class-group epoch as the server stores it, proved by chiavdf 1.2.0 (prove(seed_e, x,
// 1024, 1000, "")) for epoch 1 over one bet: seed_e = epochSeed(1, y_0, bets_root, 1000) with
// y_0 the generator's bytes, and D_e = chiavdf's create_discriminant(seed_e, 1024). (HashPrime
// meets 319 candidates for this seed, near the mean of about 355 for 1024 bits.)
const CLASS_GROUP_EPOCH = {
  bet: {
    game_id: "0123456789abcdef0123456789abcdef",
    game: "dice",
    bet_type: "over7",
    target: null,
    combo: null,
    amount: "1.00",
    player_id: "alice",
    player_seed: "lucky-5",
    operator_key: "vrs-house",
  },
  t: 1000,
  bets_root: "0b8247cc8be23f58b2f6269430f5588fd6c437530077f07d57b3682ad3870bc4",
  seed: "57fb710928ce8a22b0c9004eab718cc00f0a42e38d7b4a9c71696fea62153d99",
  d:
    "-0xa450b216ada455ff255d736b8fb4f8ae42fb1bb0c79452d3173d983823ef23e261675306f29a37578f10b873ad50d5a432154" +
    "68387ecbdcf05deb4c5ac782cb919baa9eccd2016c1b7bc7c77b0299195217b12c2b2a3f26e816a594dd0e56c9230afa62166479" +
    "89e3f57276b600740e73371d9b59e1c8a8abe1d2221fccd3d07",
  y:
    "0200f658ef056c7a722ca951f1f2580981c246e95bc209d815e6f4adbffca9182437c06bf0e4091cd46a9e4fe26e97c91478b5c1" +
    "f9a8771c3e2ee30156b76ad16a1387e0ebb1825f52613126cb710b18ddf702efdaf9a3f69f8ba986902e904c4a0e0503",
  pi:
    "00007afe239de5ecd7066512d0a13e13050f0b539360de055e82eeb2ebed8f0377bfb33f842cd2cd92925dc93d628c9048143072" +
    "ba5e82a7a4b5f2390da5dcda141acf868e35d577032a93849198486950a36b8dd7c89dfa2b5f742ab86f0cf8d3350100",
  // B = GetB(D_e, x, y), from chiavdf's get_b_from_n_wesolowski.
  l: "9668917c0f73e3b8e0494d6d15d4be83d781736801e6f87a88fddaab2b9b5fcd23",
};

/** The verification response and the epoch record a server would publish for that epoch. */
async function classGroupGame(changes = {}) {
  const e = CLASS_GROUP_EPOCH;
  const leaf = v.betLeaf(e.bet);
  const leafHash = v.bytesToHex(await v.leafHash(leaf));
  const proof = {
    modulus: "classgroup-1024",
    veo_class: "VEO-WESOLOWSKI-CLASSGROUP-1024",
    discriminant: e.d,
    discriminant_bits: 1024,
    iterations: e.t,
    x: chiavdf.generator,
    y: e.y,
    pi: e.pi,
    l: e.l,
    epoch_seed: e.seed,
    previous_output: chiavdf.generator,
    bets_root: e.bets_root,
    leaf: v.bytesToHex(leaf),
    leaf_hash: leafHash,
    leaf_index: 0,
    bet_count: 1,
    audit_path: [],
    checkpoints: [],
    vdfEpoch: 1,
    bet: e.bet,
    ...changes,
  };
  const rng = await v.rngValue(unhex(proof.y), e.bet.game_id, e.bet.player_seed);
  const dice = (await v.rollDice(rng, 2)).dice;
  const s = v.settle(e.bet, dice);
  proof.rngValue = v.bytesToHex(rng);
  const body = {
    proof,
    verified: true,
    replay_steps: [
      { action: "randomness_derived", rngValue: proof.rngValue },
      { action: "dice_rolled", dice },
      { action: "bet_evaluated", won: s.won, payout: s.payout, total: dice[0] + dice[1] },
    ],
  };
  const epoch = {
    epoch: 1,
    status: "resolved",
    modulus: proof.modulus,
    iterations: proof.iterations,
    bets_root: e.bets_root,
    bet_count: 1,
    leaf_hashes: [leafHash],
    previous_output: chiavdf.generator,
    x: proof.x,
    y: proof.y,
    pi: proof.pi,
    l: proof.l,
  };
  const fetch = async (url) => {
    if (url === "/") return { status: 200, text: async () => JSON.stringify({ service: "vrs", acceptance_keys: [] }) };
    const found = url.endsWith("/api/v1/epochs/1");
    return { status: found ? 200 : 404, text: async () => JSON.stringify(found ? epoch : { error: "not found" }) };
  };
  return { body, fetch };
}

const verifyClassGroupGame = async (changes) => {
  const { body, fetch } = await classGroupGame(changes);
  return v.verifyGame("", CLASS_GROUP_EPOCH.bet.game_id, null, { body, fetch, group: "classgroup-1024", allowVersion1: true });
};

test("a class-group epoch (1024 bits, T = 1000, proved by chiavdf) verifies end to end", async () => {
  const e = CLASS_GROUP_EPOCH;
  const seed = await v.epochSeed(1, unhex(chiavdf.generator), unhex(e.bets_root), BigInt(e.t));
  assert.equal(v.bytesToHex(seed), e.seed);
  const d = await cg.createDiscriminant(seed, 1024);
  assert.equal(d.toHex(), e.d);
  const b = await cg.verifyEpoch(d, { x: unhex(chiavdf.generator), y: unhex(e.y), pi: unhex(e.pi), l: unhex(e.l) }, BigInt(e.t));
  assert.equal(v.bytesToHex(cg.lBytes(b)), e.l);

  const r = await verifyClassGroupGame();
  assert.deepEqual(
    r.steps.filter((s) => !s.passed),
    [],
  );
  assert.equal(r.verified, true);
  assert.deepEqual(
    r.steps.map((s) => s.name),
    ["group", "bet_leaf", "merkle_inclusion", "bets_root", "epoch_chain", "epoch_record", "epoch_input", "vdf_proof", "timing", "rng_value", "dice", "payout", "acceptance"],
  );
  // A proof without `timing` (a server from before the timing rule) is a version-1 epoch.
  assert.match(r.steps.find((s) => s.name === "timing").detail, /^version 1: no timing commitment/);
  assert.equal(r.modulus_bits, 1024);
  assert.equal(r.class_group, true);
  assert.match(r.steps.find((s) => s.name === "vdf_proof").detail, /T = 1000/);
});

test("a class-group epoch with a changed y, π, ℓ, T, discriminant or x fails the right step", async () => {
  const e = CLASS_GROUP_EPOCH;
  const failedSteps = async (changes) => {
    const r = await verifyClassGroupGame(changes);
    assert.equal(r.verified, false);
    return Object.fromEntries(r.steps.filter((s) => !s.passed).map((s) => [s.name, s.detail]));
  };
  const hexFlip = (hex, i) => v.bytesToHex(flipByte(unhex(hex), i));

  let failed = await failedSteps({ y: hexFlip(e.y, 30) });
  assert.match(failed.vdf_proof, /y|ℓ/);
  failed = await failedSteps({ pi: hexFlip(e.pi, 30) });
  assert.match(failed.vdf_proof, /π/);
  failed = await failedSteps({ l: hexFlip(e.l, 32) });
  assert.match(failed.vdf_proof, /ℓ is not B/);
  failed = await failedSteps({ l: e.l.slice(2) });
  assert.match(failed.vdf_proof, /hex digits/);
  // Another T gives another seed, so another discriminant.
  failed = await failedSteps({ iterations: e.t + 1, epoch_seed: undefined });
  assert.match(failed.epoch_input, /not D_e/);
  assert.ok(failed.vdf_proof);
  failed = await failedSteps({ discriminant: cg.parseDiscriminant(chiavdf.forms[0].d).toHex() });
  assert.match(failed.epoch_input, /not D_e/);
  failed = await failedSteps({ x: hexFlip(chiavdf.generator, 0) });
  assert.match(failed.epoch_input, /generator/);
  failed = await failedSteps({ previous_output: hexFlip(chiavdf.generator, 99) });
  assert.match(failed.epoch_chain, /genesis/);
  failed = await failedSteps({ modulus: "classgroup-1004" });
  assert.match(failed.epoch_input, /multiple of 8/);
  // The instant-bet pool runs in RSA groups only; a pool-served game has no timing step.
  const pooled = await verifyClassGroupGame({ pool_served: true });
  failed = Object.fromEntries(pooled.steps.filter((s) => !s.passed).map((s) => [s.name, s.detail]));
  assert.match(failed.pool_entry_input, /RSA group/);
  assert.match(failed.vdf_proof, /RSA group/);
  assert.ok(!pooled.steps.some((s) => s.name === "timing"));
});

// ---------------------------------------------------------------------------------------------
// Version-2 epochs (PROTOCOL.md §10, "Timing"): the seed over the committed timing, and the
// timing rule
// ---------------------------------------------------------------------------------------------

/** The version-2 seed written out here byte by byte with node:crypto, independently of
 *  vrs-verify.mjs's helpers. */
function seedV2Reference({ e, p, prevY, betsRoot, nonce, t, opened, closed, marginCenti, rate }) {
  const be = (v, n) => {
    const b = Buffer.alloc(n);
    let x = BigInt(v);
    for (let i = n - 1; i >= 0; i--) {
      b[i] = Number(x & 0xffn);
      x >>= 8n;
    }
    return b;
  };
  const tag = Buffer.from("vrs/v2/epoch-input", "ascii");
  return createHash("sha256")
    .update(Buffer.from([tag.length]))
    .update(tag)
    .update(be(e, 8))
    .update(be(p, 8))
    .update(Buffer.from(prevY))
    .update(Buffer.from(betsRoot))
    .update(Buffer.from(nonce))
    .update(be(t, 8))
    .update(be(opened, 8))
    .update(be(closed, 8))
    .update(be(marginCenti, 4))
    .update(be(rate, 8))
    .digest("hex");
}

test("version-2 epoch seed: the byte layout of PROTOCOL.md §10", async () => {
  const f = {
    e: 5,
    p: 4,
    prevY: new Uint8Array(64).fill(3),
    betsRoot: new Uint8Array(32).fill(1),
    nonce: new Uint8Array(32).fill(2),
    t: 1000,
    opened: 10,
    closed: 20,
    marginCenti: 150,
    rate: 7,
  };
  const seedOf = (g) => v.epochSeedV2(g.e, g.p, g.prevY, g.betsRoot, g.nonce, g.t, g.opened, g.closed, g.marginCenti, g.rate);
  const expected = seedV2Reference(f);
  // 18 = len("vrs/v2/epoch-input"): the tag's length byte.
  assert.equal("vrs/v2/epoch-input".length, 18);
  assert.equal(v.bytesToHex(await seedOf(f)), expected);
  // Large values use all their bytes (u64 times, u32 margin).
  const big = { ...f, e: 2 ** 40 + 3, p: 2 ** 33, t: 2n ** 63n + 5n, opened: 1_700_000_000_123, closed: 1_700_000_004_567, marginCenti: 0xfffffffe, rate: 3_000_000 };
  assert.equal(v.bytesToHex(await seedOf(big)), seedV2Reference(big));
  // Every field changes it, and it is not the version-1 seed.
  for (const [k, changed] of [["e", 6], ["p", 3], ["t", 1001], ["opened", 11], ["closed", 21], ["marginCenti", 151], ["rate", 8], ["nonce", new Uint8Array(32).fill(9)], ["betsRoot", new Uint8Array(32).fill(9)], ["prevY", new Uint8Array(64).fill(4)]]) {
    assert.notEqual(v.bytesToHex(await seedOf({ ...f, [k]: changed })), expected, k);
  }
  assert.notEqual(v.bytesToHex(await v.epochSeed(5, f.prevY, f.betsRoot, 1000n)), expected);
  await assert.rejects(seedOf({ ...f, nonce: new Uint8Array(31) }), /32 bytes/);
  // The margin in hundredths, as the server rounds it.
  assert.equal(v.marginCenti(1.5), 150);
  assert.equal(v.marginCenti(1.15), 115);
  assert.equal(v.marginCenti(2), 200);
  assert.throws(() => v.marginCenti(null), /not a number/);
  assert.equal(v.centi(150), "1.5");
  assert.equal(v.centi(200), "2");
  assert.equal(v.centi(125), "1.25");
  assert.equal(v.centi(105), "1.05");
});

test("the timing rule at the exact millisecond, in integers (checkTiming)", () => {
  // D = 150 · 3·10^6, a(T) = 7·10^5 · 10^5 / D = 155.55… ms: the bound is 155.
  const timing = { previous: 0, iterations: 700000n, opened_at_ms: 0, closed_at_ms: 155, margin_centi: 150, squarings_per_second: 3000000 };
  const ok = v.checkTiming({ epoch: 1, timing, predecessor: null, prior_resolved_at_ms: null });
  assert.match(ok, /^window of 155 ms closed 0 ms before its bound: an adversary 1\.5× as fast as 3000000 squarings\/s needs 156 ms for T = 700000/);
  assert.throws(
    () => v.checkTiming({ epoch: 1, timing: { ...timing, closed_at_ms: 156 } }),
    (e) => e instanceof v.CheckFailed && /window of 156 ms closed at 156 ms, after its bound 155 ms: at margin 1\.5 and 3000000 squarings\/s/.test(e.message),
  );

  // PROTOCOL.md's example (engine/src/timing.rs): margin 2, R = 10^6, T = 10^6, a(T) = 500 ms.
  const base = { previous: 4, iterations: 1000000n, opened_at_ms: 9400, closed_at_ms: 10000, margin_centi: 200, squarings_per_second: 1000000 };
  const pred = { closed_at_ms: 9000, iterations: 1000000n };
  // Epoch e − 1 (here also p): closed when e opened, its y stored well after e closed.
  const prior = { version: 2, closed_at_ms: 9400, resolved_at_ms: 20000 };
  // Through p: y_p is no earlier than 9 500, so e may close up to 10 000 (a window of 600 ms).
  assert.match(v.checkTiming({ epoch: 5, timing: base, predecessor: pred, prior }), /window of 600 ms closed 0 ms before its bound/);
  assert.throws(() => v.checkTiming({ epoch: 5, timing: { ...base, closed_at_ms: 10001 }, predecessor: pred, prior }), /after its bound 10000 ms/);
  // A predecessor that closed long before: the window alone (9 400 + 500).
  assert.throws(() => v.checkTiming({ epoch: 5, timing: base, predecessor: { closed_at_ms: 1000, iterations: 1000000n }, prior }), /after its bound 9900 ms/);
  // From the genesis (p = 0): the window alone.
  assert.match(v.checkTiming({ epoch: 1, timing: { ...base, previous: 0, opened_at_ms: 10000, closed_at_ms: 10500 } }), /closed 0 ms before/);
  assert.throws(() => v.checkTiming({ epoch: 1, timing: { ...base, previous: 0, opened_at_ms: 10000, closed_at_ms: 10501 } }), /after its bound 10500 ms/);

  // Epoch e − 1's output: the games must be fixed before it was stored.
  assert.match(v.checkTiming({ epoch: 5, timing: base, predecessor: pred, prior: { ...prior, resolved_at_ms: 10000 } }), /^closed 0 ms before y of epoch 4 was stored; window/);
  assert.throws(
    () => v.checkTiming({ epoch: 5, timing: base, predecessor: pred, prior: { ...prior, resolved_at_ms: 9999 } }),
    /closed at 10000 ms, after y of epoch 4 was stored at 9999 ms/,
  );
  // Epoch e − 1's record: missing, without a stored output, or closed after e opened.
  assert.throws(() => v.checkTiming({ epoch: 5, timing: base, predecessor: pred }), /epoch 4's record is missing/);
  assert.throws(() => v.checkTiming({ epoch: 5, timing: base, predecessor: pred, prior: { ...prior, resolved_at_ms: null } }), /no stored output/);
  assert.throws(() => v.checkTiming({ epoch: 5, timing: base, predecessor: pred, prior: { ...prior, closed_at_ms: 9401 } }), /two epochs took games at once/);

  // Malformed commitments.
  const bad = (changes, facts, pattern) =>
    assert.throws(() => v.checkTiming({ epoch: 5, predecessor: pred, prior, ...facts, timing: { ...base, ...changes } }), pattern);
  bad({ margin_centi: 99 }, {}, /margin 0\.99 is below 1/);
  bad({ squarings_per_second: 0 }, {}, /rate and T must be positive/);
  bad({ iterations: 0n }, {}, /rate and T must be positive/);
  bad({ previous: 5 }, {}, /taken from epoch 5, not one before epoch 5/);
  bad({ closed_at_ms: 9300 }, {}, /before it opened/);
  bad({}, { predecessor: null }, /epoch 4 \(the predecessor\) is missing/);
  bad({}, { predecessor: { closed_at_ms: 9401, iterations: 1n } }, /epoch 4 closed at 9401 ms, after this epoch opened at 9400 ms/);

  // Version 1: nothing committed, so refused unless allowed; allowed, nothing to check, unless it
  // follows a version-2 epoch.
  assert.throws(() => v.checkTiming({ epoch: 7, timing: null }), (e) => e.message === v.VERSION_1_REFUSED);
  assert.equal(
    v.checkTiming({ epoch: 7, timing: null, allow_version_1: true }),
    "version 1: no timing commitment (an epoch from before the timing rule)",
  );
  assert.throws(() => v.checkTiming({ epoch: 7, timing: null, prior, allow_version_1: true }), /a version-1 epoch after version-2 epoch 6/);
});

// A test512 RSA epoch built here end to end (seed, x, y = x^(2^T), ℓ, π) so that verifyGame
// can run on canned responses: epoch e over one bet, its predecessor p's record, and epoch
// e − 1's record.
const N512 = v.modulusFromId("test512");
const BET = { ...CLASS_GROUP_EPOCH.bet, game_id: "fedcba9876543210fedcba9876543210", player_seed: "timing" };
const NONCE = "5a".repeat(32);

async function rsaEpochGame(o = {}) {
  const e = o.e ?? 5;
  const version = o.version ?? 2;
  const previous = o.previous ?? (version === 1 ? e - 1 : 3);
  const T = o.T ?? 300;
  const tm = {
    opened: 1_100_000,
    closed: 1_300_000,
    margin: 1.5,
    rate: 2,
    nonce: NONCE,
    predecessorClosed: 1_000_000,
    predecessorT: 600,
    priorResolved: 1_400_000,
    ...o.timing,
  };
  const k = v.byteLength(N512);
  const hex = (x) => v.bytesToHex(v.bigIntToBytes(x, k));
  const leaf = v.betLeaf(BET);
  const leafHash = await v.leafHash(leaf);
  const betsRoot = leafHash; // a tree of one leaf
  const yOf = async (n) => hex(await v.hashToGroup(await v.sha256(v.u64(n)), N512));
  const prevY = previous === 0 ? v.bytesToHex(await v.genesisOutput("test512", N512)) : await yOf(previous);
  const seed =
    version === 1
      ? await v.epochSeed(e, unhex(prevY), betsRoot, BigInt(T))
      : await v.epochSeedV2(e, previous, unhex(prevY), betsRoot, unhex(tm.nonce), T, tm.opened, tm.closed, v.marginCenti(tm.margin), tm.rate);
  const x = await v.hashToGroup(seed, N512);
  let y = x;
  for (let i = 0; i < T; i++) y = (y * y) % N512;
  y = v.canon(y, N512);
  const l = await v.hashToPrime(N512, x, y, BigInt(T));
  const pi = v.canon(v.modPow(x, (1n << BigInt(T)) / l, N512), N512);
  const timing =
    version === 1
      ? { version: 1, previous_epoch: e - 1, nonce: null, opened_at_ms: tm.opened, closed_at_ms: tm.closed, security_margin: null, squarings_per_second: null, deadline_ms: null }
      : {
          version: 2,
          previous_epoch: previous,
          nonce: tm.nonce,
          opened_at_ms: tm.opened,
          closed_at_ms: tm.closed,
          security_margin: tm.margin,
          squarings_per_second: tm.rate,
          deadline_ms: tm.opened + 100_000,
        };
  Object.assign(timing, {
    previous_closed_at_ms: previous >= 1 ? tm.predecessorClosed : null,
    previous_iterations: previous >= 1 ? tm.predecessorT : null,
    prior_resolved_at_ms: e > 1 ? tm.priorResolved : null,
  });
  const proof = {
    modulus: "test512",
    iterations: T,
    x: hex(x),
    y: hex(y),
    pi: hex(pi),
    l: v.bytesToHex(v.bigIntToBytes(l, 32)),
    epoch_seed: v.bytesToHex(seed),
    previous_output: prevY,
    bets_root: v.bytesToHex(betsRoot),
    leaf: v.bytesToHex(leaf),
    leaf_hash: v.bytesToHex(leafHash),
    leaf_index: 0,
    bet_count: 1,
    audit_path: [],
    vdfEpoch: e,
    bet: BET,
    timing,
  };
  if (o.noTiming) delete proof.timing;
  const rng = await v.rngValue(unhex(proof.y), BET.game_id, BET.player_seed);
  const dice = (await v.rollDice(rng, 2)).dice;
  const s = v.settle(BET, dice);
  proof.rngValue = v.bytesToHex(rng);
  const body = {
    proof,
    verified: true,
    replay_steps: [
      { action: "randomness_derived", rngValue: proof.rngValue },
      { action: "dice_rolled", dice },
      { action: "bet_evaluated", won: s.won, payout: s.payout, total: dice[0] + dice[1] },
    ],
  };
  // The public records: e's own, its predecessor's and e − 1's.
  const records = {};
  const other = async (n) => ({ epoch: n, status: "resolved", modulus: "test512", y: await yOf(n), iterations: 1000, closed_at_ms: 900_000, resolved_at_ms: 950_000, version });
  if (e > 1) records[e - 1] = { ...(await other(e - 1)), resolved_at_ms: tm.priorResolved, closed_at_ms: Math.min(900_000, tm.opened) };
  if (previous >= 1) records[previous] = { ...(records[previous] ?? (await other(previous))), closed_at_ms: tm.predecessorClosed, iterations: tm.predecessorT };
  records[e] = {
    epoch: e,
    status: "resolved",
    modulus: "test512",
    iterations: T,
    bets_root: proof.bets_root,
    bet_count: 1,
    leaf_hashes: [proof.leaf_hash],
    previous_output: prevY,
    x: proof.x,
    y: proof.y,
    pi: proof.pi,
    l: proof.l,
    version,
    previous_epoch: previous,
    nonce: timing.nonce,
    opened_at_ms: tm.opened,
    closed_at_ms: tm.closed,
    security_margin: timing.security_margin,
    squarings_per_second: timing.squarings_per_second,
    deadline_ms: timing.deadline_ms,
    resolved_at_ms: tm.closed + 50,
  };
  if (o.record) Object.assign(records[e], o.record);
  if (o.proof) Object.assign(proof, o.proof);
  // The proof's `acceptance` (PROTOCOL.md §11), made from the finished proof.
  if (o.acceptance) proof.acceptance = await o.acceptance(proof);
  if (o.proofTiming) Object.assign(proof.timing, o.proofTiming);
  const fetched = [];
  const fetch = async (url) => {
    fetched.push(url);
    // GET / (the service's description): where the operator lists its acceptance keys.
    // GET /: the operator's acceptance keys (none by default); o.info null answers 404, a number
    // answers that status.
    if (url === "/") {
      if (o.info === null) return { status: 404, text: async () => JSON.stringify({ error: "not found" }) };
      if (typeof o.info === "number") return { status: o.info, text: async () => JSON.stringify({ error: "unavailable" }) };
      return { status: 200, text: async () => JSON.stringify(o.info ?? { service: "vrs", acceptance_keys: [] }) };
    }
    const m = /\/api\/v1\/epochs\/([0-9]+)$/.exec(url);
    const rec = m ? records[Number(m[1])] : undefined;
    return { status: rec ? 200 : 404, text: async () => JSON.stringify(rec ?? { error: "not found" }) };
  };
  const run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", allowVersion1: o.allowVersion1 });
  const failed = Object.fromEntries(run.steps.filter((s) => !s.passed).map((s) => [s.name, s.detail]));
  const detail = (name) => run.steps.find((s) => s.name === name)?.detail;
  return { run, failed, detail, fetched, body, fetch };
}

test("a version-2 RSA epoch verifies end to end, its timing step after vdf_proof", async () => {
  const { run, failed, detail, fetched } = await rsaEpochGame();
  assert.deepEqual(failed, {});
  assert.equal(run.verified, true);
  assert.deepEqual(
    run.steps.map((s) => s.name),
    ["group", "bet_leaf", "merkle_inclusion", "bets_root", "epoch_chain", "epoch_record", "epoch_input", "vdf_proof", "timing", "rng_value", "dice", "payout", "acceptance"],
  );
  // p = 3: the chain goes to epoch 3, not 4.
  assert.equal(detail("epoch_chain"), "the previous output is y of epoch 3");
  assert.match(detail("epoch_input"), /^x = hash_to_group\(SHA-256\(tag ‖ 5 ‖ 3 ‖ y_p ‖ bets_root ‖ nonce ‖ 300 ‖ 1100000 ‖ 1300000 ‖ 150 ‖ 2\)\)$/);
  // D = 150 · 2: start = max(1.1e6 · D, 1e6 · D + 600 · K) = 1.2e6 · D; bound = 1.3e6 ms.
  assert.equal(
    detail("timing"),
    "closed 100000 ms before y of epoch 4 was stored; window of 200000 ms closed 0 ms before its bound: an adversary 1.5× as fast as 2 squarings/s needs 100000 ms for T = 300 (effective margin 1.5)",
  );
  for (const n of [3, 4, 5]) assert.ok(fetched.includes(`/api/v1/epochs/${n}`), `epoch ${n} fetched`);
  assert.equal(new Set(fetched).size, fetched.length, "each record fetched once");
  // No signature (a game from before version 2, this server publishing no key): passed.
  assert.equal(detail("acceptance"), "accepted before version 2: not signed");
});

test("a version-2 epoch closed one millisecond past its bound fails timing, and only timing", async () => {
  const { run, failed } = await rsaEpochGame({ timing: { closed: 1_300_001 } });
  assert.equal(run.verified, false);
  assert.deepEqual(Object.keys(failed), ["timing"]);
  assert.match(failed.timing, /^window of 200001 ms closed at 1300001 ms, after its bound 1300000 ms: at margin 1\.5 and 2 squarings\/s, T = 300 allows 100000 ms/);
  assert.equal(run.failed_step, "timing");
});

test("a version-2 epoch closed after epoch e − 1's output was stored fails timing", async () => {
  const { run, failed } = await rsaEpochGame({ timing: { closed: 1_260_000, priorResolved: 1_250_000 } });
  assert.equal(run.verified, false);
  assert.deepEqual(Object.keys(failed), ["timing"]);
  assert.match(failed.timing, /^closed at 1260000 ms, after y of epoch 4 was stored at 1250000 ms/);
});

test("a version-2 epoch from the genesis (p = 0) and a predecessor that closed after e opened", async () => {
  let g = await rsaEpochGame({ e: 2, previous: 0, timing: { opened: 0, closed: 100_000 } });
  assert.deepEqual(g.failed, {});
  assert.equal(g.detail("epoch_chain"), "the previous output is the genesis output y_0 of test512");
  assert.match(g.detail("timing"), /window of 100000 ms closed 0 ms before its bound/);
  g = await rsaEpochGame({ e: 2, previous: 0, timing: { opened: 0, closed: 100_001 } });
  assert.deepEqual(Object.keys(g.failed), ["timing"]);
  g = await rsaEpochGame({ timing: { predecessorClosed: 1_100_001 } });
  assert.deepEqual(Object.keys(g.failed), ["timing"]);
  assert.match(g.failed.timing, /epoch 3 closed at 1100001 ms, after this epoch opened at 1100000 ms/);
});

test("a version-2 commitment that differs between the proof and the epoch's record fails", async () => {
  // The record says another margin: the proof's commitment is not the published one.
  let g = await rsaEpochGame({ record: { security_margin: 2 } });
  assert.deepEqual(Object.keys(g.failed), ["epoch_record", "timing"]);
  assert.equal(g.failed.epoch_record, "epoch 5's record differs from the proof in: timing.security_margin (record security_margin)");
  assert.match(g.failed.timing, /published security_margin \(2\) differs from the proof's \(1\.5\)/);
  g = await rsaEpochGame({ record: { closed_at_ms: 1_299_000 } });
  assert.match(g.failed.timing, /published closed_at_ms/);
  g = await rsaEpochGame({ record: { version: 1 } });
  assert.match(g.failed.timing, /the proof says version 2 but epoch 5's record says version 1/);
  // A proof whose timing is changed after the fact: seed_e moves, so x no longer follows.
  g = await rsaEpochGame({ proofTiming: { closed_at_ms: 1_299_999 }, record: { closed_at_ms: 1_299_999 } });
  assert.deepEqual(Object.keys(g.failed), ["epoch_input"]);
  assert.match(g.failed.epoch_input, /^epoch_seed is not SHA-256\(tag ‖ e ‖ p ‖ y_p ‖ bets_root ‖ nonce ‖ T ‖ opened ‖ closed ‖ margin ‖ rate\)$/);
  g = await rsaEpochGame({ proofTiming: { closed_at_ms: 1_299_999 }, record: { closed_at_ms: 1_299_999 }, proof: { epoch_seed: undefined } });
  assert.match(g.failed.epoch_input, /x does not follow from the epoch, its predecessor, previous output, bets root, nonce, T and timing/);
  g = await rsaEpochGame({ proofTiming: { nonce: "5b".repeat(32) } });
  assert.ok(g.failed.epoch_input);
  assert.match(g.failed.timing, /published nonce/);
  // A predecessor that is not the record's, or not before e.
  g = await rsaEpochGame({ record: { previous_epoch: 4 } });
  assert.match(g.failed.epoch_chain, /published predecessor is epoch 4, not the proof's 3/);
  g = await rsaEpochGame({ proofTiming: { previous_epoch: 5 } });
  assert.match(g.failed.epoch_chain, /taken from epoch 5, not one before epoch 5/);
  assert.match(g.failed.timing, /taken from epoch 5|published previous_epoch/);
  // A version-2 proof without its nonce cannot give seed_e.
  g = await rsaEpochGame({ proofTiming: { nonce: null } });
  assert.match(g.failed.epoch_input, /timing\.nonce is missing/);
  assert.match(g.failed.timing, /timing\.nonce is missing/);
});

test("an unsigned game after signing began fails acceptance: since_ms absent counts from the start", async () => {
  const key = { public_key: "11".repeat(32) };
  // A key listed without since_ms: every game is signed from the beginning.
  let g = await rsaEpochGame({ info: { acceptance_keys: [{ ...key, since_ms: null }] }, proof: { bet_created_at_ms: 1_150_000 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /^no acceptance signature, yet the game was accepted at 1150000 ms, after the operator began signing \(a key listed without since_ms/);
  g = await rsaEpochGame({ info: { acceptance_keys: [key] }, proof: { bet_created_at_ms: 1_150_000 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  // Keys published, and the proof does not say when the game was accepted.
  g = await rsaEpochGame({ info: { acceptance_keys: [{ ...key, since_ms: 2_000_000 }] } });
  assert.match(g.failed.acceptance, /no bet_created_at_ms although the operator publishes acceptance keys/);
  // Before the earliest since_ms, unsigned is version 1.
  g = await rsaEpochGame({ info: { acceptance_keys: [{ ...key, since_ms: 2_000_000 }] }, proof: { bet_created_at_ms: 1_150_000 } });
  assert.deepEqual(g.failed, {});
  assert.equal(g.detail("acceptance"), "accepted before version 2: not signed");
  // GET / failing is a failed step, never "no keys".
  g = await rsaEpochGame({ info: 503, proof: { bet_created_at_ms: 1_150_000 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /^\/: HTTP 503/);
  g = await rsaEpochGame({ info: { acceptance_keys: "none" } });
  assert.match(g.failed.acceptance, /acceptance_keys is not a list/);
});

test("bet fields must have their JSON types: a seed of 0 is not the seed \"0\"", async () => {
  // Both give the same leaf bytes, but HMAC over "" and over "0" differ: the operator could
  // pick whichever outcome it likes once y is known.
  const withSeed = (seed) => rsaEpochGame({ proof: { bet: { ...BET, player_seed: seed } } });
  let g = await withSeed(0);
  assert.ok(g.failed.bet_leaf, JSON.stringify(g.failed));
  assert.equal(g.failed.bet_leaf, "bet.player_seed is not a string");
  assert.equal(g.failed.rng_value, "player_seed is not a string");
  g = await withSeed(false);
  assert.equal(g.failed.bet_leaf, "bet.player_seed is not a string");
  g = await rsaEpochGame({ proof: { bet: { ...BET, target: "7" } } });
  assert.equal(g.failed.bet_leaf, "bet.target is not an integer");
  g = await rsaEpochGame({ proof: { bet: { ...BET, combo: ["1", "2"] } } });
  assert.equal(g.failed.bet_leaf, "bet.combo[0] is not an integer");
  g = await rsaEpochGame({ proof: { bet: { ...BET, amount: 1 } } });
  assert.equal(g.failed.bet_leaf, "bet.amount is not a string");
});

test("anchorPosition: a record's place and the tree size follow from the batch's ranges", () => {
  const anchor = { batch: 9, epochs: { first: 10, last: 13 }, pool_batches: { from: 5, to: 7 }, notary_batches: { from: 1, to: 4 } };
  assert.deepEqual(v.anchorPosition(anchor, 1, 10), { position: 0, size: 9 });
  assert.deepEqual(v.anchorPosition(anchor, 1, 13), { position: 3, size: 9 });
  assert.deepEqual(v.anchorPosition(anchor, 2, 5), { position: 4, size: 9 });
  assert.deepEqual(v.anchorPosition(anchor, 2, 6), { position: 5, size: 9 });
  for (const [kind, n] of [[1, 9], [1, 14], [2, 4], [2, 7]]) {
    assert.throws(() => v.anchorPosition(anchor, kind, n), v.CheckFailed, `kind ${kind} number ${n}`);
  }
  // An empty or inverted range holds nothing.
  const empty = { ...anchor, epochs: { first: 100, last: 90 } };
  assert.throws(() => v.anchorPosition(empty, 1, 95), /does not cover epoch 95/);
  assert.deepEqual(v.anchorPosition(empty, 2, 5), { position: 0, size: 5 });
  assert.throws(() => v.anchorPosition({ ...anchor, pool_batches: undefined }, 1, 10), /anchor\.pool_batches is missing/);
});

test("the group is the verifier's choice: rsa2048 unless told otherwise, null takes the server's", async () => {
  // The fixture's server proves in test512, a modulus anyone can factor (Appendix A).
  const { body, fetch } = await rsaEpochGame();
  let run = await v.verifyGame("", BET.game_id, null, { body, fetch });
  assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["group"]);
  assert.equal(run.steps[0].detail, 'the proof is in group "test512", but this verifier requires "rsa2048"');
  run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "TEST512" });
  assert.equal(run.verified, true, "compared ignoring ASCII case");
  assert.equal(run.steps[0].detail, "test512 (512-bit modulus), the group this verifier requires");
  run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: null });
  assert.equal(run.verified, true);
  assert.match(run.steps[0].detail, /^test512 \(512-bit modulus\): the group the server names, taken as it is/);
  run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test1024" });
  assert.equal(run.failed_step, "group");
  // modulus_n must spell that group's N; veo_class must name it.
  const withN = structuredClone(body);
  withN.proof.modulus_n = v.bytesToHex(v.bigIntToBytes(v.modulusFromId("test512") + 2n, 64));
  run = await v.verifyGame("", BET.game_id, null, { body: withN, fetch, group: "test512" });
  assert.equal(run.failed_step, "group");
  assert.equal(run.steps[0].detail, "modulus_n is not the modulus test512");
  const withVeo = structuredClone(body);
  withVeo.proof.veo_class = "VEO-WESOLOWSKI-RSA2048";
  run = await v.verifyGame("", BET.game_id, null, { body: withVeo, fetch, group: "test512" });
  assert.equal(run.steps[0].detail, 'veo_class is "VEO-WESOLOWSKI-RSA2048", not VEO-WESOLOWSKI-TEST512');
  withVeo.proof.veo_class = "VEO-WESOLOWSKI-TEST512";
  run = await v.verifyGame("", BET.game_id, null, { body: withVeo, fetch, group: "test512" });
  assert.equal(run.verified, true);
});

test("epoch_record: another run of the epoch, an unresolved or incomplete record, each fail it", async () => {
  // A second evaluation of epoch 5 (another y, π) published while the game carries the first.
  let g = await rsaEpochGame({ record: { y: "01".repeat(64), pi: "02".repeat(64) } });
  assert.equal(g.failed.epoch_record, "epoch 5's record differs from the proof in: y, pi");
  g = await rsaEpochGame({ record: { status: "closed" } });
  assert.equal(g.failed.epoch_record, 'epoch 5 is "closed", not resolved');
  g = await rsaEpochGame({ record: { deadline_ms: undefined } });
  assert.equal(g.failed.epoch_record, "a member is missing: timing.deadline_ms/deadline_ms");
  g = await rsaEpochGame({ record: { modulus: "TEST512" } });
  assert.equal(g.failed.epoch_record, "epoch 5's record differs from the proof in: modulus");
  // A version-1 proof without a timing object is held to the first nine pairs only.
  g = await rsaEpochGame({ version: 1, noTiming: true, allowVersion1: true, record: { deadline_ms: undefined, nonce: undefined } });
  assert.deepEqual(g.failed, {});
  assert.equal(g.detail("epoch_record"), "GET /api/v1/epochs/5 is resolved with the proof's 9 values");
});

test("minMargin: the verifier's least margin fails an epoch declaring less, and a version-1 epoch", async () => {
  const { body, fetch } = await rsaEpochGame();
  let run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", minMargin: 1.5 });
  assert.equal(run.verified, true);
  run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", minMargin: 1.51 });
  assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["timing"]);
  assert.equal(run.steps.find((s) => s.name === "timing").detail, "the epoch declares margin 1.5, below the 1.51 this check requires");
  const v1 = await rsaEpochGame({ version: 1 });
  run = await v.verifyGame("", BET.game_id, null, { body: v1.body, fetch: v1.fetch, group: "test512", minMargin: 1 });
  assert.equal(run.failed_step, "timing");
  assert.match(run.steps.find((s) => s.name === "timing").detail, /^version 1: the epoch makes no timing commitment, and a margin of 1 was required$/);
  for (const bad of [0.5, 1.234, "2", Number.NaN]) {
    await assert.rejects(v.verifyGame("", BET.game_id, null, { body, fetch, minMargin: bad }), RangeError, String(bad));
  }
});

test("minRate: the verifier's least rate fails an epoch declaring less, and a version-1 epoch", async () => {
  const { body, fetch } = await rsaEpochGame();
  const rate = Number(body.proof.timing.squarings_per_second);
  let run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", minRate: rate });
  assert.equal(run.verified, true);
  run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", minRate: rate + 1 });
  assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["timing"]);
  assert.match(run.steps.find((s) => s.name === "timing").detail, new RegExp(`^the epoch declares R = ${rate} squarings/s, below the ${rate + 1} this check requires`));
  const v1 = await rsaEpochGame({ version: 1 });
  run = await v.verifyGame("", BET.game_id, null, { body: v1.body, fetch: v1.fetch, group: "test512", minRate: 1 });
  assert.equal(run.failed_step, "timing");
  assert.match(run.steps.find((s) => s.name === "timing").detail, /^version 1: the epoch makes no timing commitment, and a rate of 1 squarings\/s was required$/);
  for (const bad of [0, 1.5, "2", Number.NaN, -3]) {
    await assert.rejects(v.verifyGame("", BET.game_id, null, { body, fetch, minRate: bad }), RangeError, String(bad));
  }
});

test("a version-1 epoch fails timing by default, and verifies as before when allowed", async () => {
  for (const noTiming of [false, true]) {
    const refused = await rsaEpochGame({ version: 1, noTiming });
    assert.deepEqual(refused.failed, { timing: v.VERSION_1_REFUSED }, `noTiming ${noTiming}`);
    const { run, failed, detail } = await rsaEpochGame({ version: 1, noTiming, allowVersion1: true });
    assert.deepEqual(failed, {}, `noTiming ${noTiming}`);
    assert.equal(run.verified, true);
    assert.equal(detail("timing"), "version 1: no timing commitment (an epoch from before the timing rule)");
    assert.equal(detail("epoch_chain"), "the previous output is y of epoch 4");
    assert.match(detail("epoch_input"), /^x = hash_to_group\(SHA-256\(tag ‖ 5 ‖ y_prev ‖ bets_root ‖ 300\)\)$/);
  }
  // Version 1 takes y of e − 1; a proof naming another predecessor is refused.
  const { failed } = await rsaEpochGame({ version: 1, allowVersion1: true, proofTiming: { previous_epoch: 3 } });
  assert.match(failed.epoch_chain, /version-1 epoch 5 takes y of epoch 4/);
});

// ---------------------------------------------------------------------------------------------
// Signed acceptance (PROTOCOL.md §11) of an epoch game, through verifyGame; the Ed25519 and
// pool-served cases are in vrs-acceptance.test.mjs
// ---------------------------------------------------------------------------------------------

test("an epoch game's signed acceptance verifies against GET /'s keys, fetched once", async () => {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pk = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url").toString("hex");
  const info = { service: "vrs", acceptance_keys: [{ public_key: pk, since_ms: 1_000 }] };
  // Signed over what `signed` says (the game by default); the object says what `claims` says.
  const acceptance = (claims = {}, signed = {}) => async (proof) => {
    const c = { epoch: proof.vdfEpoch, at: 1_150_000, ...claims };
    const s = { ...c, ...signed };
    const lh = await v.leafHash(unhex(proof.leaf));
    const msg = v.acceptanceMessage(1, s.epoch, lh, s.at);
    return {
      version: 2,
      kind: "epoch",
      epoch: c.epoch,
      pool_index: null,
      leaf: proof.leaf,
      leaf_hash: v.bytesToHex(lh),
      accepted_at_ms: c.at,
      public_key: pk,
      signature: sign(null, Buffer.from(msg), privateKey).toString("hex"),
    };
  };
  let g = await rsaEpochGame({ acceptance: acceptance(), info });
  assert.deepEqual(g.failed, {});
  assert.equal(g.run.steps.at(-1).name, "acceptance");
  assert.match(g.detail("acceptance"), /^Ed25519 signature by published key [0-9a-f]{16}… over the leaf hash [0-9a-f]{16}…, accepted into epoch 5 at 1150000 ms$/);
  assert.equal(g.fetched.filter((u) => u === "/").length, 1);
  // With the proof's acceptance time, which must be the signed one.
  g = await rsaEpochGame({ acceptance: acceptance(), info, proof: { bet_created_at_ms: 1_150_000 } });
  assert.deepEqual(g.failed, {});
  g = await rsaEpochGame({ acceptance: acceptance(), info, proof: { bet_created_at_ms: 1_150_001 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  // A key the operator does not publish, or no key list at all.
  g = await rsaEpochGame({ acceptance: acceptance(), info: { acceptance_keys: [] } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /not one of the operator's 0 published acceptance keys/);
  g = await rsaEpochGame({ acceptance: acceptance(), info: null });
  assert.match(g.failed.acceptance, /^\/: not found on this server/);
  // Another epoch, claimed or only signed; another time, signed.
  g = await rsaEpochGame({ acceptance: acceptance({ epoch: 4 }), info });
  assert.match(g.failed.acceptance, /names epoch 4, but the game is in epoch 5/);
  g = await rsaEpochGame({ acceptance: acceptance({}, { epoch: 4 }), info });
  assert.match(g.failed.acceptance, /does not verify/);
  g = await rsaEpochGame({ acceptance: acceptance({}, { at: 1_149_999 }), info });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /does not verify/);
});

// ---------------------------------------------------------------------------------------------
// The witnessed step (PROTOCOL.md §21) through verifyGame: the test512 epoch above, logged by an
// operator's log made here and cosigned by two witnesses of the verifier's policy
// ---------------------------------------------------------------------------------------------

/** rsaEpochGame's game with `proof.log` holding its plan and commitment (`logged` changes what
 *  the log says of the commitment, `times` when the witnesses cosigned), and the policy. */
async function witnessedGame({ logged = {}, times = [1_100n, 1_150n], noLog = false, outputOf = null } = {}) {
  const g = await rsaEpochGame();
  const p = g.body.proof;
  const t = p.timing;
  const logKey = await noteKey("vrs.test/log", 0x01);
  const witnesses = await Promise.all(["w1.example", "w2.example"].map((n) => noteKey(n, 0x04)));
  const policy = `# the verifier's own\nlog ${logKey.vkey}\n${witnesses.map((k, i) => `witness W${i} ${k.vkey}`).join("\n")}\ngroup both all W0 W1\nquorum both\n`;
  const log = operatorLog(logKey);
  const shared = {
    epoch: p.vdfEpoch,
    previous: t.previous_epoch,
    iterations: p.iterations,
    margin_centi: v.marginCenti(t.security_margin),
    squarings_per_second: t.squarings_per_second,
    opened_ms: t.opened_at_ms,
  };
  log.append(encodePlan({ ...shared, deadline_ms: t.deadline_ms }));
  const plan = await log.logged(0, witnesses.map((k) => [k, times[0]]), 1);
  log.append(
    encodeCommitment({
      ...shared,
      bets_root: unhex(p.bets_root),
      bet_count: p.bet_count,
      nonce: unhex(t.nonce),
      closed_ms: t.closed_at_ms,
      ...logged,
    }),
  );
  const commitment = await log.logged(1, witnesses.map((k) => [k, times[1]]), 2);
  // p's output entry, logged with the commitment: SHA-256 of the proof's previous_output (or
  // of `outputOf`, a y_p other than the one shown).
  const y = outputOf ?? unhex(p.previous_output);
  log.append(encodeOutput(t.previous_epoch, await v.sha256(y)));
  const output = await log.logged(2, witnesses.map((k) => [k, times[1]]));
  const body = structuredClone(g.body);
  if (!noLog) body.proof.log = { origin: "vrs.test/log", plan: [plan], commitment: [commitment], previous_output: [output] };
  return { body, fetch: g.fetch, policy, run: g.run };
}

const stepsOf = (run) => Object.fromEntries(run.steps.map((s) => [s.name, s]));

test("without a witness policy an epoch game carries the witnessed note, and no witnessed step", async () => {
  const { run } = await rsaEpochGame();
  assert.equal(run.verified, true);
  assert.deepEqual(run.notes, [v.WITNESSED_NOTE]);
  assert.equal(
    v.WITNESSED_NOTE,
    "witnessed: not checked (no --witness-policy): the operator is trusted not to withhold an epoch's commitment, stage a stall or backdate its times (docs/PROTOCOL.md §21)",
  );
  assert.ok(!run.steps.some((s) => s.name === "witnessed"));
});

test("with a witness policy an epoch game gets the witnessed step after timing, and no note", async () => {
  const { body, fetch, policy } = await witnessedGame();
  // T = 300 squarings: only a verifier allowing for a squarer of at most 5 a second finds the
  // 53 s from δ before the opening to the end of the commitment's second short enough
  // (53 000 · 5 ≤ 300 · 1000).
  const run = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", witnessPolicy: policy, maxRate: 5 });
  assert.deepEqual(run.steps.filter((s) => !s.passed), []);
  assert.equal(run.verified, true);
  assert.deepEqual(run.notes, []);
  const names = run.steps.map((s) => s.name);
  assert.equal(names[names.indexOf("timing") + 1], "witnessed");
  assert.equal(
    stepsOf(run).witnessed.detail,
    "epoch 5: plan (entry 0), commitment (entry 1) and output of epoch 3 (entry 2) cosigned in time by W0, W1 (quorum 2 of (W0, W1); S = 5 squarings/s, δ = 2000 ms)",
  );
  // 53 000 · 6 > 300 · 1000: a faster squarer could have evaluated candidates in between.
  const fast = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", witnessPolicy: policy, maxRate: 6n });
  assert.deepEqual(fast.steps.filter((s) => !s.passed).map((s) => s.name), ["witnessed"]);
  assert.match(stepsOf(fast).witnessed.detail, /short of the quorum 2 of \(W0, W1\); not in time: W0: plan at 1100 s, commitment at 1150 s, output of epoch 3 at 1150 s, 53000 ms after the opening \(T_e \/ S = 300 \/ 6 allows under 50\.000 s\)/);
  // S by default: 9000000 for an RSA group.
  const byDefault = await v.verifyGame("", BET.game_id, null, { body, fetch, group: "test512", witnessPolicy: policy });
  assert.match(stepsOf(byDefault).witnessed.detail, /T_e \/ S = 300 \/ 9000000 allows under 0\.000 s/);
  // δ: the commitment was cosigned at 1 150 000 ms, the deadline is 1 200 000 ms.
  const late = await witnessedGame({ times: [1_100n, 1_203n] });
  const r = await v.verifyGame("", BET.game_id, null, { body: late.body, fetch, group: "test512", witnessPolicy: late.policy, maxRate: 1 });
  assert.match(stepsOf(r).witnessed.detail, /commitment at 1203 s \(after the deadline \+ δ\)/);
  const tolerant = await v.verifyGame("", BET.game_id, null, { body: late.body, fetch, group: "test512", witnessPolicy: late.policy, maxRate: 1, deltaMs: 3_000 });
  assert.equal(stepsOf(tolerant).witnessed.passed, true, stepsOf(tolerant).witnessed.detail);
});

test("witnessed fails when the server publishes no log, and when the logged record is not the proof's", async () => {
  const none = await witnessedGame({ noLog: true });
  let run = await v.verifyGame("", BET.game_id, null, { body: none.body, fetch: none.fetch, group: "test512", witnessPolicy: none.policy, maxRate: 1 });
  assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["witnessed"]);
  assert.equal(stepsOf(run).witnessed.detail, "the server publishes no witnessed log for epoch 5");
  // Rule 3: the log's commitment holds another bet count, or another nonce, than the proof.
  for (const [logged, says] of [
    [{ bet_count: 2 }, "bet_count is 1, the log's commitment says 2"],
    [{ nonce: new Uint8Array(32).fill(0x5b) }, `nonce is ${NONCE}, the log's commitment says ${"5b".repeat(32)}`],
    [{ closed_ms: 1_299_999 }, "closed_at_ms is 1300000, the log's commitment says 1299999"],
  ]) {
    const g = await witnessedGame({ logged });
    run = await v.verifyGame("", BET.game_id, null, { body: g.body, fetch: g.fetch, group: "test512", witnessPolicy: g.policy, maxRate: 1 });
    assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["witnessed"]);
    assert.equal(stepsOf(run).witnessed.detail, `the epoch record shown is not the one logged: ${says}`);
  }
  // y_p: the log's output of p is another y than the proof's previous_output.
  const forked = await witnessedGame({ outputOf: new Uint8Array(64).fill(7) });
  run = await v.verifyGame("", BET.game_id, null, { body: forked.body, fetch: forked.fetch, group: "test512", witnessPolicy: forked.policy, maxRate: 1 });
  assert.deepEqual(run.steps.filter((s) => !s.passed).map((s) => s.name), ["witnessed"]);
  assert.match(stepsOf(run).witnessed.detail, /^the epoch record shown is not the one logged: previous_output hashes to [0-9a-f]{64}, the log's output of epoch 3 says /);
  // Without p's output in the log nothing fixed y_p.
  const bare = await witnessedGame();
  delete bare.body.proof.log.previous_output;
  run = await v.verifyGame("", BET.game_id, null, { body: bare.body, fetch: bare.fetch, group: "test512", witnessPolicy: bare.policy, maxRate: 1 });
  assert.equal(stepsOf(run).witnessed.detail, "no cosigned checkpoint holds the output of epoch 3");
  // A policy that does not parse is the caller's mistake, refused before anything is fetched.
  const g = await witnessedGame();
  await assert.rejects(v.verifyGame("", BET.game_id, null, { body: g.body, fetch: g.fetch, witnessPolicy: "quorum q\n" }), RangeError);
  await assert.rejects(v.verifyGame("", BET.game_id, null, { body: g.body, fetch: g.fetch, witnessPolicy: g.policy, maxRate: 0 }), RangeError);
  await assert.rejects(v.verifyGame("", BET.game_id, null, { body: g.body, fetch: g.fetch, witnessPolicy: g.policy, deltaMs: -1 }), RangeError);
});
