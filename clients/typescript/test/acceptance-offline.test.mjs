// Offline tests of the verifier core's protocol-version-2 checks (clients/typescript/src/vrs-verify.mjs):
// Ed25519 (RFC 8032 §5.1.7, strict) against RFC 8032 §7.1's vectors and node:crypto, the signed
// acceptance of PROTOCOL.md §11 ("Signed acceptance"), and a pool-served game end to end with
// its `pool_bet_inclusion` (§14, "Binding served bets") and `acceptance` steps.
// No server, no browser: `npm test` in clients/typescript.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto";
import * as v from "../src/vrs-verify.mjs";

const unhex = (h) => Uint8Array.from(Buffer.from(h, "hex"));
const hex = (b) => Buffer.from(b).toString("hex");
const flipBit = (bytes, bit) => {
  const out = Uint8Array.from(bytes);
  out[bit >> 3] ^= 1 << (bit & 7);
  return out;
};
const leHex = (n) => hex(v.bigIntToBytes(n, 32).reverse());

async function refuses(promise, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof v.CheckFailed, `a CheckFailed, not ${e && e.name}: ${e && e.message}`);
    assert.match(e.message, pattern);
    return true;
  });
}

// node:crypto's verdict on a raw key, message and signature: the independent reference.
const spki = (pk) => createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), Buffer.from(pk)]), format: "der", type: "spki" });
const nodeVerifies = (pk, msg, sig) => verify(null, Buffer.from(msg), spki(pk), Buffer.from(sig));

/** A fresh Ed25519 key from node:crypto: its raw public key (jwk "x") and a signer. */
function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pk = Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url");
  return { pk: Uint8Array.from(pk), pkHex: pk.toString("hex"), sign: (msg) => Uint8Array.from(sign(null, Buffer.from(msg), privateKey)) };
}

// ---------------------------------------------------------------------------------------------
// Ed25519
// ---------------------------------------------------------------------------------------------

// RFC 8032 §7.1: TEST 1, TEST 2, TEST 3 and TEST SHA(abc) (public key, message, signature).
const RFC8032 = [
  {
    name: "TEST 1",
    pk: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    msg: "",
    sig: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    name: "TEST 2",
    pk: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    msg: "72",
    sig: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    name: "TEST 3",
    pk: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    msg: "af82",
    sig: "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
  {
    name: "TEST SHA(abc)",
    pk: "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
    msg:
      "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a" +
      "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
    sig: "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704",
  },
];

test("Ed25519: RFC 8032 §7.1 vectors verify (and node:crypto agrees)", async () => {
  for (const t of RFC8032) {
    const [pk, msg, sig] = [unhex(t.pk), unhex(t.msg), unhex(t.sig)];
    assert.ok(nodeVerifies(pk, msg, sig), `${t.name}: node:crypto accepts the vector as typed`);
    assert.match(await v.verifyEd25519(pk, msg, sig), /^Ed25519 \(RFC 8032, strict\): \[S\]B − \[k\]A = R under key /, t.name);
  }
});

test("Ed25519: a flipped bit in the message, R, S or A is refused", async () => {
  for (const t of RFC8032) {
    const [pk, msg, sig] = [unhex(t.pk), unhex(t.msg), unhex(t.sig)];
    if (msg.length) await refuses(v.verifyEd25519(pk, flipBit(msg, 3), sig), /does not verify/);
    await refuses(v.verifyEd25519(pk, Uint8Array.of(...msg, 0), sig), /does not verify/);
    for (const bit of [0, 77, 254]) {
      // R: another point (does not verify), or no point at all.
      await refuses(v.verifyEd25519(pk, msg, flipBit(sig, bit)), /does not verify|R is not|R is of small order/);
      // A: likewise.
      await refuses(v.verifyEd25519(flipBit(pk, bit), msg, sig), /does not verify|public key A is not/);
    }
    // S, in its low bits (still below L).
    for (const bit of [256, 300, 400]) await refuses(v.verifyEd25519(pk, msg, flipBit(sig, bit)), /does not verify/);
    // Wrong lengths.
    await refuses(v.verifyEd25519(pk.subarray(1), msg, sig), /32/);
    await refuses(v.verifyEd25519(pk, msg, sig.subarray(1)), /64/);
  }
});

test("Ed25519: S + L (a non-canonical S) is refused, though the equation still holds", async () => {
  const t = RFC8032[1];
  const sig = unhex(t.sig);
  const s = BigInt("0x" + hex(sig.subarray(32).reverse()));
  const forged = unhex(hex(sig.subarray(0, 32)) + leHex(s + v.ED25519_L));
  await refuses(v.verifyEd25519(unhex(t.pk), unhex(t.msg), forged), /S is not below L/);
  // The top bits of S set: far above L.
  await refuses(v.verifyEd25519(unhex(t.pk), unhex(t.msg), flipBit(sig, 511)), /S is not below L/);
});

test("Ed25519: small-order and non-canonical keys and R are refused", async () => {
  const t = RFC8032[0];
  const [msg, sig] = [unhex(t.msg), unhex(t.sig)];
  const p = (1n << 255n) - 19n;
  // The identity (0, 1): with it, R = B and S = 1 satisfy [S]B − [k]A = R for every message.
  const identity = unhex("01" + "00".repeat(31));
  const base = unhex("58" + "66".repeat(31));
  const trivial = unhex(hex(base) + leHex(1n));
  for (const m of [msg, unhex("616263")]) {
    await refuses(v.verifyEd25519(identity, m, trivial), /public key A is of small order/);
  }
  // (0, −1), of order 2, and the order-4 point (√−1, 0).
  await refuses(v.verifyEd25519(unhex(leHex(p - 1n)), msg, sig), /public key A is of small order/);
  await refuses(v.verifyEd25519(unhex(leHex(0n)), msg, sig), /public key A is of small order/);
  // A point of order 8 (from libsodium's list of small-order encodings).
  await refuses(v.verifyEd25519(unhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), msg, sig), /A is of small order/);
  // A small-order R under a valid key.
  await refuses(v.verifyEd25519(unhex(t.pk), msg, unhex(hex(identity) + hex(sig.subarray(32)))), /R is of small order/);
  // y ≥ p: p + 1 is the identity's y written again; p is 0's.
  await refuses(v.verifyEd25519(unhex(leHex(p + 1n)), msg, sig), /public key A is not a canonical encoding \(y ≥ p\)/);
  await refuses(v.verifyEd25519(unhex(leHex(p)), msg, sig), /y ≥ p/);
  await refuses(v.verifyEd25519(unhex(t.pk), msg, unhex(leHex(p + 1n) + hex(sig.subarray(32)))), /R is not a canonical encoding \(y ≥ p\)/);
  // x = 0 with the sign bit set ("−0").
  await refuses(v.verifyEd25519(unhex("01" + "00".repeat(30) + "80"), msg, sig), /x = 0 with the sign bit set/);
});

test("Ed25519: a y is a point exactly when (y² − 1)/(d·y² + 1) is a square (Euler's criterion)", async () => {
  const p = (1n << 255n) - 19n;
  const inv = (a) => v.modPow(a, p - 2n, p);
  const d = (((-121665n * inv(121666n)) % p) + p) % p;
  const msg = new Uint8Array(0);
  const sig = unhex(RFC8032[0].sig);
  let points = 0;
  let nonPoints = 0;
  for (let y = 2n; y < 40n; y++) {
    const w = ((y * y - 1n) * inv((d * y * y + 1n) % p)) % p;
    const square = w === 0n || v.modPow(w, (p - 1n) / 2n, p) === 1n;
    // A point fails later (small order, or the equation); a non-point fails at decoding.
    await assert.rejects(v.verifyEd25519(unhex(leHex(y)), msg, sig), (e) => {
      assert.equal(/not the encoding of a point/.test(e.message), !square, `y = ${y}: ${e.message}`);
      return true;
    });
    if (square) points++;
    else nonPoints++;
  }
  assert.ok(points > 5 && nonPoints > 5, `${points} points, ${nonPoints} non-points`);
});

test("Ed25519: agrees with node:crypto on fresh keys, and verifies in well under 50 ms", async () => {
  let elapsed = 0;
  let runs = 0;
  for (let i = 0; i < 12; i++) {
    const k = keyPair();
    const msg = Uint8Array.from(randomBytes(i * 7));
    const sig = k.sign(msg);
    const t0 = performance.now();
    await v.verifyEd25519(k.pk, msg, sig);
    elapsed += performance.now() - t0;
    runs++;
    const bad = flipBit(sig, (i * 37) % 512);
    const ours = await v.verifyEd25519(k.pk, msg, bad).then(
      () => true,
      () => false,
    );
    assert.equal(ours, nodeVerifies(k.pk, msg, bad), `tampered signature ${i}`);
    assert.equal(ours, false);
  }
  assert.ok(elapsed / runs < 50, `${(elapsed / runs).toFixed(1)} ms per verify`);
});

// ---------------------------------------------------------------------------------------------
// The signed acceptance (PROTOCOL.md §11)
// ---------------------------------------------------------------------------------------------

test("acceptance message: the 67-byte layout of PROTOCOL.md §11", () => {
  const m = v.acceptanceMessage(1, 5, new Uint8Array(32).fill(0x11), 1_700_000_000_123);
  assert.equal(m.length, 67);
  assert.equal(
    hex(m),
    "11" + // u8(17)
      Buffer.from("vrs/v2/acceptance").toString("hex") +
      "01" + // kind 1: the epoch path
      "0000000000000005" + // u64(e)
      "11".repeat(32) + // leaf_hash
      "0000018bcfe5687b", // u64(1 700 000 000 123)
  );
  // protocol/src/acceptance.rs's own layout test, byte for byte.
  const pool = v.acceptanceMessage(v.ACCEPTANCE_KIND.pool, 7, new Uint8Array(32).fill(0xab), 1000);
  assert.equal(pool[0], 17);
  assert.equal(Buffer.from(pool.subarray(1, 18)).toString(), "vrs/v2/acceptance");
  assert.equal(pool[18], 2);
  assert.equal(hex(pool.subarray(19, 27)), "0000000000000007");
  assert.equal(hex(pool.subarray(27, 59)), "ab".repeat(32));
  assert.equal(hex(pool.subarray(59, 67)), "00000000000003e8");
  assert.throws(() => v.acceptanceMessage(3, 1, new Uint8Array(32), 0), /kind/);
  assert.throws(() => v.acceptanceMessage(1, 1, new Uint8Array(31), 0), /32 bytes/);
});

const LEAF = v.betLeaf({
  game_id: "00112233445566778899aabbccddeeff",
  game: "dice",
  bet_type: "over7",
  amount: "1.00",
  player_id: "alice",
  player_seed: "lucky",
  operator_key: "vrs-house",
});

/** An acceptance as the service hands it out, signed by `key` over what `claims` says
 *  (`signed` overrides what goes into the message only; `changes` the object only). */
async function signedAcceptance(key, claims, signed = {}, changes = {}) {
  const c = { kind: "epoch", number: 5, leaf: LEAF, at: 1_700_000_000_123, ...claims };
  const s = { ...c, ...signed };
  const lh = await v.leafHash(s.leaf);
  const msg = v.acceptanceMessage(v.ACCEPTANCE_KIND[s.kind], s.number, lh, s.at);
  return {
    version: 2,
    kind: c.kind,
    epoch: c.kind === "epoch" ? c.number : null,
    pool_index: c.kind === "pool" ? c.number : null,
    leaf: hex(c.leaf),
    leaf_hash: hex(await v.leafHash(c.leaf)),
    accepted_at_ms: c.at,
    public_key: key.pkHex,
    signature: hex(key.sign(msg)),
    ...changes,
  };
}

test("verifyAcceptance: an epoch game's and a pool game's signed acceptances verify", async () => {
  const key = keyPair();
  const other = keyPair();
  const keys = [{ public_key: other.pkHex, since_ms: 1 }, { public_key: key.pkHex.toUpperCase(), since_ms: 2 }];
  const epochProof = { leaf: hex(LEAF), vdfEpoch: 5 };
  const detail = await v.verifyAcceptance(await signedAcceptance(key, {}), keys, epochProof);
  assert.match(detail, /^Ed25519 signature by published key [0-9a-f]{16}… over the leaf hash [0-9a-f]{16}…, accepted into epoch 5 at 1700000000123 ms$/);
  // The epoch path with bet_created_at_ms in the proof, and a pool-served game.
  await v.verifyAcceptance(await signedAcceptance(key, {}), keys, { ...epochProof, bet_created_at_ms: 1_700_000_000_123 });
  const poolProof = { leaf: hex(LEAF), pool_served: true, pool_index: 9, vdfEpoch: 4, bet_created_at_ms: 42 };
  const pooled = await v.verifyAcceptance(await signedAcceptance(key, { kind: "pool", number: 9, at: 42 }), keys, poolProof);
  assert.match(pooled, /served from pool entry 9 at 42 ms$/);
  // Keys listed as bare hex also count; upper-case hex in the acceptance too.
  await v.verifyAcceptance(await signedAcceptance(key, {}, {}, { public_key: key.pkHex.toUpperCase() }), [key.pkHex], epochProof);
  // Before version 2: nothing to check.
  assert.equal(await v.verifyAcceptance(null, [], epochProof), "accepted before version 2: not signed");
  assert.equal(await v.verifyAcceptance(undefined, undefined, epochProof), "accepted before version 2: not signed");
});

test("verifyAcceptance: refused for an unpublished key, another leaf, epoch, pool entry or time, an altered signature", async () => {
  const key = keyPair();
  const keys = [{ public_key: key.pkHex, since_ms: 1 }];
  const epochProof = { leaf: hex(LEAF), vdfEpoch: 5, bet_created_at_ms: 1_700_000_000_123 };
  const poolProof = { leaf: hex(LEAF), pool_served: true, pool_index: 9, vdfEpoch: 4, bet_created_at_ms: 42 };
  const good = await signedAcceptance(key, {});
  const pool = await signedAcceptance(key, { kind: "pool", number: 9, at: 42 });

  // The key is not the operator's (a valid signature by someone else).
  const stranger = keyPair();
  await refuses(v.verifyAcceptance(await signedAcceptance(stranger, {}), keys, epochProof), /key [0-9a-f]{16}… is not one of the operator's 1 published acceptance keys/);
  await refuses(v.verifyAcceptance(good, [], epochProof), /not one of the operator's 0 published/);
  await refuses(v.verifyAcceptance(good, undefined, epochProof), /no acceptance_keys/);
  await refuses(v.verifyAcceptance(good, [{ public_key: "zz" }], epochProof), /acceptance_keys\[0\]\.public_key/);

  // Another leaf: the game's stored bet is not what was signed (or the other way round).
  const otherLeaf = v.betLeaf({ game_id: "00112233445566778899aabbccddeeff", game: "dice", bet_type: "over7", amount: "100.00", player_id: "alice", player_seed: "lucky", operator_key: "vrs-house" });
  await refuses(v.verifyAcceptance(good, keys, { ...epochProof, leaf: hex(otherLeaf) }), /signed leaf is not the game's committed leaf/);
  await refuses(v.verifyAcceptance(await signedAcceptance(key, {}, { leaf: otherLeaf }), keys, epochProof), /does not verify/);
  await refuses(v.verifyAcceptance({ ...good, leaf_hash: "00".repeat(32) }, keys, epochProof), /leaf_hash is not SHA-256\(0x00 ‖ leaf\)/);

  // Another epoch: claimed, or only signed.
  await refuses(v.verifyAcceptance(good, keys, { ...epochProof, vdfEpoch: 6 }), /names epoch 5, but the game is in epoch 6/);
  await refuses(v.verifyAcceptance(await signedAcceptance(key, {}, { number: 6 }), keys, epochProof), /does not verify/);
  // Another pool entry: claimed, or only signed; and the kinds crossed.
  await refuses(v.verifyAcceptance(pool, keys, { ...poolProof, pool_index: 10 }), /names pool entry 9, but the game was served from entry 10/);
  await refuses(v.verifyAcceptance(await signedAcceptance(key, { kind: "pool", number: 9, at: 42 }, { number: 10 }), keys, poolProof), /does not verify/);
  await refuses(v.verifyAcceptance(good, keys, poolProof), /of kind "epoch", but the game was served from the pool/);
  await refuses(v.verifyAcceptance(pool, keys, epochProof), /of kind "pool", but the game took the epoch path/);
  // The same number under the other kind is another message.
  await refuses(v.verifyAcceptance(await signedAcceptance(key, { kind: "pool", number: 9, at: 42 }, { kind: "epoch" }), keys, poolProof), /does not verify/);

  // Another acceptance time: claimed, or only signed.
  await refuses(v.verifyAcceptance(good, keys, { ...epochProof, bet_created_at_ms: 1_700_000_000_124 }), /signed as accepted at 1700000000123 ms, but the game was accepted at 1700000000124 ms/);
  await refuses(v.verifyAcceptance(await signedAcceptance(key, {}, { at: 1 }), keys, epochProof), /does not verify/);

  // An altered signature: R, S, or beyond L.
  for (const bit of [5, 300, 511]) {
    const sig = hex(flipBit(unhex(good.signature), bit));
    await refuses(v.verifyAcceptance({ ...good, signature: sig }, keys, epochProof), /does not verify|R is|S is not below L/);
  }
  await refuses(v.verifyAcceptance({ ...good, signature: good.signature.slice(2) }, keys, epochProof), /acceptance\.signature has 126 hex digits/);

  // Malformed objects.
  await refuses(v.verifyAcceptance({ ...good, version: 1 }, keys, epochProof), /acceptance\.version 1 is not 2/);
  await refuses(v.verifyAcceptance({ ...good, epoch: null }, keys, epochProof), /acceptance\.epoch is missing/);
  await refuses(v.verifyAcceptance("signed", keys, epochProof), /not an object/);
});

// ---------------------------------------------------------------------------------------------
// A pool-served game end to end (PROTOCOL.md §14): pool batch 1 of two entries anchored to
// epoch 3, the game served from entry 2 while epoch 7 was open, epoch 7's tree holding two
// epoch-path leaves and then this game's.
// ---------------------------------------------------------------------------------------------

const N512 = v.modulusFromId("test512");
const T = 64;
const ANCHOR = 3;
const BET_EPOCH = 7;

/** RFC 6962 PATH(m, D[n]) over leaf hashes. */
async function auditPath(hashes, m) {
  const n = hashes.length;
  if (n <= 1) return [];
  let k = 1;
  while (k * 2 < n) k *= 2;
  if (m < k) return [...(await auditPath(hashes.slice(0, k), m)), await v.merkleRoot(hashes.slice(k))];
  return [...(await auditPath(hashes.slice(k), m - k)), await v.merkleRoot(hashes.slice(0, k))];
}

const KEY = keyPair();
const el = (x) => v.bigIntToBytes(x, v.byteLength(N512));

/** y = x^(2^T) in test512 with its Wesolowski proof (PROTOCOL.md §4-§6). */
async function evaluate(x) {
  let y = x;
  for (let i = 0; i < T; i++) y = (y * y) % N512;
  y = v.canon(y, N512);
  const l = await v.hashToPrime(N512, x, y, BigInt(T));
  const pi = v.canon(v.modPow(x, (1n << BigInt(T)) / l, N512), N512);
  return { y, l, pi };
}

/** A resolved version-1 epoch's public record, its x following from its fields and proved. */
async function provedEpoch(e, leafHashes) {
  const prevY = el(await v.hashToGroup(await v.sha256(v.u64(e - 1)), N512));
  const betsRoot = await v.merkleRoot(leafHashes);
  const x = await v.hashToGroup(await v.epochSeed(e, prevY, betsRoot, BigInt(T)), N512);
  const { y, l, pi } = await evaluate(x);
  return {
    epoch: e,
    status: "resolved",
    modulus: "test512",
    version: 1,
    previous_epoch: e - 1,
    iterations: T,
    previous_output: hex(prevY),
    bets_root: hex(betsRoot),
    bet_count: leafHashes.length,
    leaf_hashes: leafHashes.map(hex),
    x: hex(el(x)),
    y: hex(el(y)),
    pi: hex(el(pi)),
    l: hex(v.bigIntToBytes(l, 32)),
  };
}

async function poolGame(o = {}) {
  const anchorRecord = await provedEpoch(ANCHOR, [new Uint8Array(32).fill(0xb1)]);
  const anchorY = unhex(anchorRecord.y);
  const prevRoot = new Uint8Array(32);
  const batchSeed = await v.poolBatchSeed(1, prevRoot, ANCHOR, anchorY);
  const secret = new Uint8Array(32).fill(0x42);
  const entrySeed = await v.poolEntrySeed(batchSeed, 2, secret);
  const x = await v.hashToGroup(entrySeed, N512);
  const { y, l, pi } = await evaluate(x);
  const lBytes = v.bigIntToBytes(l, 32);
  const entryLeaf = v.poolEntryLeaf(2, BigInt(T), el(x), el(y), lBytes, el(pi));
  const entryHashes = [new Uint8Array(32).fill(0xe1), await v.leafHash(entryLeaf)];
  const batchRoot = await v.merkleRoot(entryHashes);
  const gameId = await v.poolGameId(2, el(y));
  const bet = { game_id: gameId, game: "dice", bet_type: "over7", target: null, combo: null, amount: "1.00", player_id: "bob", player_seed: "instant", operator_key: "vrs-house" };
  const leaf = v.betLeaf(bet);
  const leafHash = await v.leafHash(leaf);
  // Epoch 7's tree: its epoch-path leaves first, then the served bets (PROTOCOL.md §11).
  const epochHashes = [new Uint8Array(32).fill(0xa1), new Uint8Array(32).fill(0xa2), leafHash];
  const betsRoot = await v.merkleRoot(epochHashes);
  const proof = {
    pool_served: true,
    pool_index: 2,
    pool_batch: 1,
    modulus: "test512",
    iterations: T,
    x: hex(el(x)),
    y: hex(el(y)),
    pi: hex(el(pi)),
    l: hex(lBytes),
    secret: hex(secret),
    entry_seed: hex(entrySeed),
    batch_seed: hex(batchSeed),
    batch_root: hex(batchRoot),
    batch_first_index: 1,
    batch_size: 2,
    previous_batch_root: hex(prevRoot),
    anchor_epoch: ANCHOR,
    anchor_y: hex(anchorY),
    batch_committed_at_ms: 1_000,
    bet_created_at_ms: 2_000,
    entry_leaf: hex(entryLeaf),
    leaf_index: 1,
    audit_path: [hex(entryHashes[0])],
    leaf: hex(leaf),
    bet,
    vdfEpoch: ANCHOR,
    bet_epoch: {
      epoch: BET_EPOCH,
      status: "bound",
      leaf_index: 2,
      tree_size: 3,
      audit_path: (await auditPath(epochHashes, 2)).map(hex),
      bets_root: hex(betsRoot),
    },
    acceptance: await signedAcceptance(KEY, { kind: "pool", number: 2, leaf, at: 2_000, ...o.claims }, o.signed),
    ...o.proof,
  };
  if (o.betEpoch) proof.bet_epoch = o.betEpoch === "null" ? null : { ...proof.bet_epoch, ...o.betEpoch };
  // A bet rewritten in the store after its epoch closed: a consistent leaf, signed and bound
  // as it was.
  if (o.rewrite) {
    proof.bet = { ...bet, ...o.rewrite };
    proof.leaf = hex(v.betLeaf(proof.bet));
    // The operator signs its rewrite with its own published key.
    if (o.resign) proof.acceptance = await signedAcceptance(KEY, { kind: "pool", number: 2, leaf: v.betLeaf(proof.bet), at: 2_000 });
  }
  const rng = await v.rngValue(el(y), gameId, proof.bet.player_seed);
  const dice = (await v.rollDice(rng, 2)).dice;
  const s = v.settle(proof.bet, dice);
  proof.rngValue = hex(rng);
  const body = {
    proof,
    verified: true,
    replay_steps: [
      { action: "randomness_derived", rngValue: proof.rngValue },
      { action: "dice_rolled", dice },
      { action: "bet_evaluated", won: s.won, payout: s.payout, total: dice[0] + dice[1] },
    ],
  };
  const records = {
    "/": { service: "vrs", acceptance_keys: [{ public_key: KEY.pkHex, since_ms: 500 }], ...o.info },
    "/api/v1/pool/batches/1": {
      number: 1,
      first_index: 1,
      size: 2,
      previous_root: hex(prevRoot),
      seed: hex(batchSeed),
      anchor_epoch: ANCHOR,
      root: hex(batchRoot),
      leaf_hashes: entryHashes.map(hex),
      committed_at_ms: 1_000,
      served: [{ index: 2, game_id: gameId }],
    },
    [`/api/v1/epochs/${ANCHOR}`]: { ...anchorRecord, ...o.anchorEpoch },
    [`/api/v1/epochs/${BET_EPOCH}`]: { ...(await provedEpoch(BET_EPOCH, epochHashes)), ...o.epoch },
  };
  const fetched = [];
  const fetch = async (url) => {
    fetched.push(url);
    const rec = records[url];
    return { status: rec ? 200 : 404, text: async () => JSON.stringify(rec ?? { error: "not found" }) };
  };
  const run = await v.verifyGame("", gameId, null, { body, fetch, group: "test512" });
  const failed = Object.fromEntries(run.steps.filter((st) => !st.passed).map((st) => [st.name, st.detail]));
  const step = (name) => run.steps.find((st) => st.name === name);
  return { run, failed, step, fetched, epochHashes, betsRoot, body, fetch };
}

test("a version-2 pool-served game verifies end to end: pool_bet_inclusion after pool_game_id, then acceptance", async () => {
  const { run, failed, step, fetched } = await poolGame();
  assert.deepEqual(failed, {});
  assert.equal(run.verified, true);
  assert.deepEqual(
    run.steps.map((s) => s.name),
    [
      "group",
      "bet_leaf",
      "pool_batch_chain",
      "pool_anchor",
      "pool_batch_seed",
      "pool_entry_input",
      "vdf_proof",
      "pool_inclusion",
      "pool_committed",
      "pool_game_id",
      "pool_bet_inclusion",
      "rng_value",
      "dice",
      "payout",
      "acceptance",
    ],
  );
  assert.match(
    step("pool_bet_inclusion").detail,
    /^the game's leaf is leaf 2 of 3 in epoch 7's tree, whose published leaves hash to its bets root [0-9a-f]{16}…, which epoch 7's input commits to \(its x follows and its proof verifies\)$/,
  );
  assert.equal(step("pool_anchor").detail, "anchored to resolved epoch 3, whose proof verifies; anchor_y is its y");
  assert.equal(step("pool_bet_inclusion").pending, undefined);
  assert.match(step("acceptance").detail, /served from pool entry 2 at 2000 ms$/);
  assert.equal(fetched.filter((u) => u === "/").length, 1, "GET / once");
  assert.ok(fetched.includes(`/api/v1/epochs/${BET_EPOCH}`));
});

test("a version-1 pool game (no bet epoch, no signature) passes both steps, saying so", async () => {
  // Served before the operator's first key was in use (since 5000 ms; the game at 2000 ms).
  const info = { acceptance_keys: [{ public_key: KEY.pkHex, since_ms: 5000 }] };
  const { run, failed, step, fetched } = await poolGame({ betEpoch: "null", proof: { acceptance: null }, info });
  assert.deepEqual(failed, {});
  assert.equal(run.verified, true);
  assert.equal(step("pool_bet_inclusion").detail, "served before version 2: bound by no epoch");
  assert.equal(step("acceptance").detail, "accepted before version 2: not signed");
  assert.ok(!fetched.includes(`/api/v1/epochs/${BET_EPOCH}`), "no tree fetched");
});

test("a pool game stripped of its signature and binding after signing began fails both steps", async () => {
  const { failed } = await poolGame({ betEpoch: "null", proof: { acceptance: null } });
  assert.match(failed.acceptance, /no acceptance signature, yet the game was accepted at 2000 ms/);
  assert.match(failed.pool_bet_inclusion, /bound to no epoch, yet the game was accepted at 2000 ms/);
});

test("a pool bet whose epoch is still open passes pool_bet_inclusion as pending", async () => {
  const unbound = { status: "pending", leaf_index: undefined, tree_size: undefined, audit_path: undefined, bets_root: undefined };
  const open = { status: "open", bets_root: null, bet_count: 0, leaf_hashes: [], x: null, y: null, pi: null, l: null };
  let g = await poolGame({ betEpoch: unbound, epoch: open });
  assert.deepEqual(g.failed, {});
  assert.equal(g.run.verified, true);
  assert.deepEqual(g.step("pool_bet_inclusion"), { name: "pool_bet_inclusion", passed: true, detail: "pending: epoch 7 is still open, its tree not fixed yet", pending: true });
  // Open is what E's own record says, whatever the proof's copy says.
  g = await poolGame({ epoch: open });
  assert.equal(g.step("pool_bet_inclusion").pending, true);
  assert.ok(g.fetched.includes(`/api/v1/epochs/${BET_EPOCH}`));
});

test("a proof that calls its bet epoch pending does not excuse a bet missing from that epoch's tree", async () => {
  // The operator rewrites a served bet, signs the rewrite with its own key and says the bet
  // epoch is still pending: epoch 7's published record says resolved, without that leaf.
  const unbound = { status: "pending", leaf_index: undefined, tree_size: undefined, audit_path: undefined, bets_root: undefined };
  let g = await poolGame({ rewrite: { player_seed: "rewritten" }, betEpoch: unbound, resign: true });
  assert.deepEqual(Object.keys(g.failed), ["pool_bet_inclusion"]);
  assert.match(g.failed.pool_bet_inclusion, /^the bet is not in epoch 7's committed tree \(3 leaves\): dropped or altered after it was accepted$/);
  // The proof read while the epoch was open ("pending") and the epoch closed since: the record
  // decides, and the bet is in its tree.
  g = await poolGame({ betEpoch: unbound });
  assert.deepEqual(g.failed, {});
  assert.match(g.step("pool_bet_inclusion").detail, /^the game's leaf is leaf 2 of 3 in epoch 7's tree/);
  // An epoch that does not exist.
  g = await poolGame({ betEpoch: { ...unbound, epoch: 123456789 } });
  assert.match(g.failed.pool_bet_inclusion, /\/api\/v1\/epochs\/123456789: not found/);
});

test("a bound pool bet that its epoch does not hold fails pool_bet_inclusion", async () => {
  const only = (failed, re) => {
    assert.deepEqual(Object.keys(failed), ["pool_bet_inclusion"]);
    assert.match(failed.pool_bet_inclusion, re);
  };
  // The proof's copy of the binding (audit path, index, size, root) must be the published one.
  let g = await poolGame({ betEpoch: { audit_path: [] } });
  only(g.failed, /audit path too short/);
  g = await poolGame({ betEpoch: { audit_path: ["00".repeat(32)] } });
  only(g.failed, /bet_epoch\.audit_path does not lead from leaf 2 to epoch 7's bets root/);
  g = await poolGame({ betEpoch: { leaf_index: 1 } });
  only(g.failed, /bet_epoch\.leaf_index 1 is not the leaf's position 2/);
  g = await poolGame({ betEpoch: { tree_size: 4 } });
  only(g.failed, /bet_epoch\.tree_size 4 is not epoch 7's 3 leaves/);
  g = await poolGame({ betEpoch: { bets_root: "a3".repeat(32) } });
  only(g.failed, /epoch 7's published bets root is not bet_epoch\.bets_root/);
  g = await poolGame({ betEpoch: { status: "settled" } });
  only(g.failed, /bet_epoch\.status "settled" is neither "pending" nor "bound"/);
  // The published leaves do not hash to the published root, or the count disagrees.
  const other = [...g.epochHashes.map(hex), "a3".repeat(32)];
  g = await poolGame({ epoch: { leaf_hashes: [...other.slice(0, 2), other[3]] } });
  only(g.failed, /epoch 7's 3 published leaves do not hash to its bets root/);
  g = await poolGame({ epoch: { bet_count: 4 } });
  only(g.failed, /epoch 7's bet count 4 but 3 published leaves/);
  // A status that is none of the three, a record of another epoch, an epoch that is not there.
  g = await poolGame({ epoch: { status: "zz" } });
  only(g.failed, /epoch 7 is "zz": neither open, closed nor resolved/);
  g = await poolGame({ epoch: { epoch: 4242 } });
  only(g.failed, /GET \/api\/v1\/epochs\/7 answers with epoch 4242/);
  g = await poolGame({ betEpoch: { epoch: 8 } });
  only(g.failed, /\/api\/v1\/epochs\/8: not found/);
});

test("a served bet rewritten after its epoch closed fails pool_bet_inclusion and acceptance", async () => {
  const { run, failed } = await poolGame({ rewrite: { player_seed: "rewritten" } });
  assert.equal(run.verified, false);
  assert.deepEqual(Object.keys(failed), ["pool_bet_inclusion", "acceptance"]);
  assert.match(failed.pool_bet_inclusion, /the bet is not in epoch 7's committed tree/);
  assert.match(failed.acceptance, /signed leaf is not the game's committed leaf/);
});

test("a bound pool bet whose epoch is closed but not resolved is pending; a resolved one must be proved", async () => {
  let g = await poolGame({ epoch: { status: "closed" } });
  assert.deepEqual(g.failed, {});
  assert.equal(g.step("pool_bet_inclusion").pending, true);
  assert.match(g.step("pool_bet_inclusion").detail, /; pending: epoch 7 is not resolved yet$/);
  // Another bets root published under the same x: x no longer follows from the fields.
  const other = await provedEpoch(BET_EPOCH, [new Uint8Array(32).fill(0xcc)]);
  g = await poolGame({ epoch: { x: other.x } });
  assert.deepEqual(Object.keys(g.failed), ["pool_bet_inclusion"]);
  assert.equal(g.failed.pool_bet_inclusion, "epoch 7's published x does not follow from its published fields");
  // An output the epoch's proof does not support.
  g = await poolGame({ epoch: { y: other.y } });
  assert.deepEqual(Object.keys(g.failed), ["pool_bet_inclusion"]);
  assert.match(g.failed.pool_bet_inclusion, /^ℓ is not hash_to_prime|^π\^ℓ/);
});

test("pool_anchor: the anchor epoch's proof is verified, and it is the game's vdfEpoch", async () => {
  // The anchor epoch's published y is anchor_y, but no proof takes its x there.
  const forged = await provedEpoch(ANCHOR, [new Uint8Array(32).fill(0xdd)]);
  let g = await poolGame({ anchorEpoch: { x: forged.x } });
  assert.deepEqual(Object.keys(g.failed), ["pool_anchor"]);
  assert.match(g.failed.pool_anchor, /^ℓ is not hash_to_prime|^π\^ℓ/);
  g = await poolGame({ anchorEpoch: { status: "closed" } });
  assert.equal(g.failed.pool_anchor, "anchor epoch 3 is not resolved");
  g = await poolGame({ proof: { vdfEpoch: ANCHOR + 1 } });
  assert.equal(g.failed.pool_anchor, "vdfEpoch 4 is not the anchor epoch 3");
});

test("a pool game's acceptance by an unpublished key, or for another entry, fails acceptance only", async () => {
  let g = await poolGame({ info: { acceptance_keys: [] } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /not one of the operator's 0 published acceptance keys/);
  g = await poolGame({ info: { acceptance_keys: undefined } });
  assert.match(g.failed.acceptance, /no acceptance_keys/);
  g = await poolGame({ claims: { number: 1 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /names pool entry 1, but the game was served from entry 2/);
  g = await poolGame({ signed: { number: 1 } });
  assert.deepEqual(Object.keys(g.failed), ["acceptance"]);
  assert.match(g.failed.acceptance, /does not verify/);
  g = await poolGame({ proof: { bet_created_at_ms: 2_001 } });
  assert.match(g.failed.acceptance, /signed as accepted at 2000 ms, but the game was accepted at 2001 ms/);
});

test("a pool-served game has no witnessed step and no note, with a witness policy or without", async () => {
  // Pool batches are not in the witnessed step yet (issue 51): nothing to run, nothing to say.
  const { run, body, fetch } = await poolGame();
  assert.deepEqual(run.notes, []);
  const policy = "quorum none\n";
  const withPolicy = await v.verifyGame("", run.game_id, null, { body, fetch, group: "test512", witnessPolicy: policy });
  assert.equal(withPolicy.verified, true);
  assert.deepEqual(withPolicy.notes, []);
  assert.deepEqual(withPolicy.steps.map((s) => s.name), run.steps.map((s) => s.name));
});
