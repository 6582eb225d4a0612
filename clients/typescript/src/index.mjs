// @vrs/client: the API client (client.mjs) and the verifier (vrs-verify.mjs, the same module the
// /verify page runs), with the class-group arithmetic under `classgroup`. Each is also importable
// on its own: @vrs/client/client, @vrs/client/verify, @vrs/client/classgroup.

export * from "./client.mjs";
export * from "./vrs-verify.mjs";
export * as classgroup from "./vrs-classgroup.mjs";
