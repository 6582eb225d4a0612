#!/usr/bin/env python3
"""Answers requests with chiavdf (tools/chiavdf/requirements.txt) for the class-group interop
test (engine/tests/integration/chiavdf.rs).

Reads one JSON array of requests on stdin and prints one JSON array of answers, in order.
Bytes travel as lower-case hex, integers as decimal strings. Requests:

  {"op": "version"}
      -> {"version": "1.2.0"}
  {"op": "create_discriminant", "seed": HEX, "bits": N}
      -> {"d": "-0x..."}                      (or {"error": "..."})
  {"op": "prove", "seed": HEX, "bits": N, "x": HEX, "t": T}
      -> {"y": HEX, "proof": HEX, "seconds": S}
  {"op": "verify", "d": "-0x...", "x": HEX, "y": HEX, "proof": HEX, "t": T}
      -> {"ok": BOOL}                         (or {"ok": false, "error": "..."} where chiavdf
                                               raised instead of answering)
  {"op": "deserialize", "d": "-0x...", "form": HEX}
      -> {"a": DEC, "b": DEC}                 (or {"error": "..."})
"""

import json
import sys
import time
from importlib.metadata import version

import chiavdf


def signed(raw):
    """chiavdf's bqfc_deserialize integers: a sign byte (1 = negative), then the magnitude
    big-endian."""
    magnitude = int.from_bytes(raw[1:], "big")
    return -magnitude if raw[0] else magnitude


def answer(req):
    op = req.get("op")
    if op == "version":
        return {"version": version("chiavdf")}
    if op == "create_discriminant":
        try:
            return {"d": chiavdf.create_discriminant(bytes.fromhex(req["seed"]), req["bits"])}
        except Exception as e:  # chiavdf raises ValueError/RuntimeError
            return {"error": str(e)}
    if op == "prove":
        start = time.perf_counter()
        out = chiavdf.prove(
            bytes.fromhex(req["seed"]), bytes.fromhex(req["x"]), req["bits"], req["t"], ""
        )
        seconds = time.perf_counter() - start
        half = len(out) // 2
        return {"y": out[:half].hex(), "proof": out[half:].hex(), "seconds": seconds}
    if op == "verify":
        try:
            ok = chiavdf.verify_wesolowski(
                req["d"],
                bytes.fromhex(req["x"]),
                bytes.fromhex(req["y"]),
                bytes.fromhex(req["proof"]),
                req["t"],
            )
            return {"ok": bool(ok)}
        except Exception as e:
            return {"ok": False, "error": str(e)}
    if op == "deserialize":
        try:
            a, b = chiavdf.bqfc_deserialize(req["d"], bytes.fromhex(req["form"]))
        except Exception as e:
            return {"error": str(e)}
        return {"a": str(signed(a)), "b": str(signed(b))}
    return {"error": f"unknown op {op!r}"}


def main():
    requests = json.load(sys.stdin)
    json.dump([answer(r) for r in requests], sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
