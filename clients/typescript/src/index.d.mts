/**
 * @vrs/client: the API client of a vrs server and the verifier of its games, with no runtime
 * dependency (fetch, BigInt, WebCrypto), for Node 20+ and browsers.
 */

export * from "./client.mjs";
export * from "./vrs-verify.mjs";
/** The class-group VDF of chiavdf 1.2.0: discriminants, compressed forms, the Wesolowski check. */
export * as classgroup from "./vrs-classgroup.mjs";
/** The witnessed step (PROTOCOL.md §21): log entries, checkpoints, cosignatures, policies. */
export * as witnessed from "./vrs-witnessed.mjs";
