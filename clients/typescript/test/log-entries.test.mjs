// Offline tests of the witnessed log's entries (docs/PROTOCOL.md §21, "Entries"): the shared
// vector docs/test-vectors/log-entries.json, written by the Rust reference
// (protocol/src/tlog/entry.rs), gives one entry of each kind, its bytes and its fields; the
// decoder must give exactly those fields and refuse the bytes with one byte more or one less.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as v from "../src/vrs-verify.mjs";
import * as w from "../src/vrs-witnessed.mjs";

const root = new URL("../../../", import.meta.url);
const vector = JSON.parse(await readFile(fileURLToPath(new URL("docs/test-vectors/log-entries.json", root)), "utf8"));

/** An entry's fields as the vector writes them: numbers, and byte strings as lowercase hex. */
const fieldsOf = (e) =>
  Object.fromEntries(
    Object.entries(e)
      .filter(([k]) => k !== "kind")
      .map(([k, x]) => [k, x instanceof Uint8Array ? v.bytesToHex(x) : typeof x === "bigint" ? Number(x) : x]),
  );

for (const c of vector.entries) {
  test(`the ${c.kind} entry decodes to its fields, and nothing else does`, () => {
    const raw = v.hexToBytes(c.hex);
    const e = w.decodeLogEntry(raw);
    assert.equal(e.kind, c.kind);
    assert.deepEqual(fieldsOf(e), c.fields);
    const longer = new Uint8Array([...raw, 0]);
    for (const bad of [longer, raw.slice(0, -1)]) {
      assert.throws(() => w.decodeLogEntry(bad), (err) => err instanceof v.CheckFailed && /not a log entry/.test(err.message));
    }
  });
}
