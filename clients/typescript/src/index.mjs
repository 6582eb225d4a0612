// @vrs/client: the API client (client.mjs) and the verifier (vrs-verify.mjs, the same module the
// /verify page runs), with the class-group arithmetic under `classgroup` and the witnessed step
// (PROTOCOL.md §21) under `witnessed`. Each is also importable on its own: @vrs/client/client,
// @vrs/client/verify, @vrs/client/classgroup, @vrs/client/witnessed.

export * from "./client.mjs";
export * from "./vrs-verify.mjs";
export * as classgroup from "./vrs-classgroup.mjs";
export * as witnessed from "./vrs-witnessed.mjs";
