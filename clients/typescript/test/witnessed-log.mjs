// A test-only operator's log (docs/PROTOCOL.md §21), written here independently of
// src/vrs-witnessed.mjs so that the tests can make logs that module has never seen: entries
// encoded byte for byte, an RFC 6962 tree with audit paths by RFC 6962's own recursion (not the
// verifier's RFC 9162 loop), checkpoints signed as C2SP signed notes and cosigned as
// cosignature/v1, with Node's Ed25519. Imported by the tests; it runs nothing itself.

import { generateKeyPairSync, sign } from "node:crypto";
import * as v from "../src/vrs-verify.mjs";

const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const tagged = (kind) => {
  const tag = new TextEncoder().encode(`vrs/log/${kind}`);
  return v.concat(v.u8(tag.length), tag);
};

/** The plan entry of §21: u64 e, p, T ‖ u32 margin ‖ u64 R, opened, deadline. */
export const encodePlan = (p) =>
  v.concat(tagged("plan"), v.u64(p.epoch), v.u64(p.previous), v.u64(p.iterations), v.u32(p.margin_centi), v.u64(p.squarings_per_second), v.u64(p.opened_ms), v.u64(p.deadline_ms));

/** The commitment entry of §21. */
export const encodeCommitment = (c) =>
  v.concat(
    tagged("commitment"),
    v.u64(c.epoch),
    v.u64(c.previous),
    c.bets_root,
    v.u64(c.bet_count),
    c.nonce,
    v.u64(c.iterations),
    v.u32(c.margin_centi),
    v.u64(c.squarings_per_second),
    v.u64(c.opened_ms),
    v.u64(c.closed_ms),
  );

/** A void entry of §21. */
export const encodeVoid = (epoch, stampedMs) => v.concat(tagged("void"), v.u64(epoch), v.u64(stampedMs));

/** The output entry of §21: u64 e ‖ SHA-256(y_e). */
export const encodeOutput = (epoch, outputHash) => v.concat(tagged("output"), v.u64(epoch), outputHash);

/** The move entry of §21: u64 e ‖ u64 d ‖ bets_root_e[32] ‖ u64 bet_count_e (`to` is d). */
export const encodeMove = (m) => v.concat(tagged("move"), v.u64(m.epoch), v.u64(m.to), m.bets_root, v.u64(m.bet_count));

/** An Ed25519 note key: {name, alg, publicKey (32 bytes), sign(msg) → 64 bytes, vkey, id}. */
export async function noteKey(name, alg) {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const pk = new Uint8Array(Buffer.from(publicKey.export({ format: "jwk" }).x, "base64url"));
  const h = await v.sha256(v.concat(new TextEncoder().encode(name), Uint8Array.of(0x0a, alg), pk));
  const id = v.bytesToHex(h.subarray(0, 4));
  return {
    name,
    alg,
    publicKey: pk,
    id,
    vkey: `${name}+${id}+${b64(v.concat(Uint8Array.of(alg), pk))}`,
    sign: (msg) => new Uint8Array(sign(null, Buffer.from(msg), privateKey)),
  };
}

/** MTH of RFC 6962 over leaf hashes, by its recursion (split at the largest power of 2 < n). */
async function mth(leaves) {
  if (leaves.length === 1) return leaves[0];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return v.nodeHash(await mth(leaves.slice(0, k)), await mth(leaves.slice(k)));
}

/** PATH(m, D[n]) of RFC 6962 §2.1.1: the sibling nearest the leaf first. */
async function path(m, leaves) {
  if (leaves.length <= 1) return [];
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  if (m < k) return [...(await path(m, leaves.slice(0, k))), await mth(leaves.slice(k))];
  return [...(await path(m - k, leaves.slice(k))), await mth(leaves.slice(0, k))];
}

/** The RFC 6962 root of a tree of leaf hashes (a bets tree, section 11), by RFC 6962's
 *  recursion. */
export const treeRoot = (leafHashes) => (leafHashes.length === 0 ? v.sha256(new Uint8Array(0)) : mth(leafHashes));

/** The RFC 6962 audit path of leaf `index` among `leafHashes`, the sibling nearest the leaf
 *  first (hashes as bytes). */
export const auditPath = (index, leafHashes) => path(index, leafHashes);

/** An append-only log under `logKey` (its name is the origin). */
export function operatorLog(logKey) {
  const entries = [];
  return {
    /** Appends entry bytes; returns the index. */
    append(bytes) {
      entries.push(bytes);
      return entries.length - 1;
    },
    /**
     * The LoggedEntry of entry `index` in the tree of the first `size` entries (default: all),
     * its checkpoint cosigned by each [witness key, Unix second] of `cosigners`.
     */
    async logged(index, cosigners = [], size = entries.length) {
      const leaves = await Promise.all(entries.slice(0, size).map((e) => v.leafHash(e)));
      const text = `${logKey.name}\n${size}\n${b64(await mth(leaves))}\n`;
      const textBytes = new TextEncoder().encode(text);
      let note = `${text}\n— ${logKey.name} ${b64(v.concat(v.hexToBytes(logKey.id), logKey.sign(textBytes)))}\n`;
      for (const [w, t] of cosigners) {
        const msg = v.concat(new TextEncoder().encode(`cosignature/v1\ntime ${t}\n`), textBytes);
        note += `— ${w.name} ${b64(v.concat(v.hexToBytes(w.id), v.u64(t), w.sign(msg)))}\n`;
      }
      return {
        index,
        entry: v.bytesToHex(entries[index]),
        checkpoint: note,
        proof: (await path(index, leaves)).map(b64),
      };
    },
  };
}
