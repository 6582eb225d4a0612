// Offline self-tests of the in-browser verifier's core (api/assets/vrs-verify.mjs), against the
// documents alone: the test vectors of docs/test-vectors/rsa2048.json (PROTOCOL.md §9), the
// worked examples of GAMES.md §6, known Baillie-PSW pseudoprimes (PROTOCOL.md §5) and RFC 6962
// trees. No server, no browser, no dependency: `node --test tools/browser/vrs-verify.test.mjs`.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as v from "../../api/assets/vrs-verify.mjs";

const root = new URL("../../", import.meta.url);
const vectors = JSON.parse(await readFile(fileURLToPath(new URL("docs/test-vectors/rsa2048.json", root)), "utf8"));

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
