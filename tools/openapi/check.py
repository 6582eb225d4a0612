"""Checks a running vrs server against its own OpenAPI documents.

    check.py BASE_URL [--api-key KEY] [--shapes FILE | --record-shapes FILE]

1. Both documents (/api/v1/openapi.json, /v1/openapi.json) validate against the OpenAPI 3.1
   specification (openapi-spec-validator) and declare version 3.1.
2. They cover every endpoint of the interface (../shared/spec/interface.md sections 4, 4.4).
3. Every documented operation is exercised at least once against the live server (honest and
   bad requests); each answer's status must be documented for that operation and its JSON body
   must validate against the documented schema (JSON Schema 2020-12). A method the path does
   not accept must get 405 with an `Allow` header.

4. With --shapes, every answer's wire shape (see `shape`) must be one that FILE records for
   that operation and status: a member added, dropped, renamed or moved, a value that turns
   from absent to null or from integer to float, or a changed error message fails. The file is
   written from a known-good server with --record-shapes (repeat it to collect the shapes that
   depend on timing, such as a pending and a resolved game).

Prints one line per request and exits 1 on the first class of failure it finds (all failures
are listed).
"""

import argparse
import json
import re
import sys
import time
import urllib.error
import urllib.request

import jsonschema
from openapi_spec_validator import validate

INTERFACE = {
    "randomness": [
        ("get", "/"),
        ("get", "/health"),
        ("get", "/api/v1/entropy"),
        ("get", "/api/v1/games"),
        ("post", "/api/v1/games/dice/bet"),
        ("post", "/api/v1/games/sicbo/bet"),
        ("post", "/api/v1/rng/generate"),
        ("get", "/api/v1/games/{gameId}"),
        ("get", "/api/v1/verify/{gameId}"),
        ("get", "/api/v1/stats"),
        ("get", "/api/v1/recent"),
    ],
    "notary": [
        ("post", "/v1/notarize"),
        ("get", "/v1/notarize/{receipt_id}"),
        ("get", "/v1/notarize/schemas"),
        ("get", "/v1/notarize/status"),
    ],
}

failures = []

# Members whose text is part of the wire format (messages and names, not data) and does not
# depend on an outcome or on timing: their value is kept in a shape, with digit runs and long
# hex runs masked.
WORDED = {"error", "name", "anchor_status", "veo_class", "game", "step"}


def masked(text):
    return re.sub(r"\d+", "<n>", re.sub(r"[0-9a-fA-F]{8,}", "<hex>", text))


def shape(v, key=None):
    """A JSON value's wire shape: members in order, each value's JSON type (integer apart from
    float, null apart from absent), an array as the distinct shapes of its items in order of
    first appearance (an array of scalars, however long, as "scalars": its length depends on
    the data), and the text of the WORDED members."""
    if isinstance(v, dict):
        return {"{}": [[k, shape(x, k)] for k, x in v.items()]}
    if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
        return {"[]": "scalars"}
    if isinstance(v, list):
        items = []
        for x in v:
            s = shape(x)
            if s not in items:
                items.append(s)
        return {"[]": items}
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if v is None:
        return "null"
    return "str:" + masked(v) if key in WORDED else "str"


class Shapes:
    """The shapes seen in this run, keyed by operation and status."""

    def __init__(self):
        self.seen = {}

    def add(self, method, template, status, headers, body):
        ctype = (headers.get("content-type") or headers.get("Content-Type") or "").split(";")[0]
        entry = {"content-type": ctype}
        if ctype == "application/json":
            try:
                entry["body"] = shape(json.loads(body))
            except ValueError:
                entry["body"] = "not JSON"
        if template.endswith("openapi.json"):
            return  # the description of the bodies, which is meant to change with the types
        key = f"{method.upper()} {template} {status}"
        self.seen.setdefault(key, [])
        if entry not in self.seen[key]:
            self.seen[key].append(entry)

    def compare(self, path):
        with open(path) as f:
            known = json.load(f)
        for key, entries in self.seen.items():
            for entry in entries:
                if entry not in known.get(key, []):
                    fail(f"wire shape of {key} is not one {path} records:\n"
                         + json.dumps(entry, indent=1)[:4000])
        for key in sorted(set(known) - set(self.seen)):
            print(f"note {key}: recorded, not provoked in this run")

    def record(self, path):
        try:
            with open(path) as f:
                known = json.load(f)
        except FileNotFoundError:
            known = {}
        for key, entries in self.seen.items():
            for entry in entries:
                if entry not in known.setdefault(key, []):
                    known[key].append(entry)
        with open(path, "w") as f:
            json.dump(dict(sorted(known.items())), f, indent=1)
            f.write("\n")
        print(f"recorded {sum(len(v) for v in known.values())} shapes in {path}")


shapes = Shapes()


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def request(base, method, path, body=None, headers=None, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    h = {"content-type": "application/json"} if data is not None else {}
    h.update(headers or {})
    req = urllib.request.Request(base + path, data=data, method=method.upper(), headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def template_regex(template):
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")


class Document:
    def __init__(self, name, doc):
        self.name, self.doc = name, doc
        self.ops = {}
        for path, item in doc.get("paths", {}).items():
            for method, op in item.items():
                self.ops[(method, path)] = op
        self.exercised = set()

    def find(self, method, path):
        bare = path.split("?")[0]
        exact = [(m, p) for (m, p) in self.ops if m == method and p == bare]
        if exact:
            return exact[0]
        for (m, p) in self.ops:
            if m == method and template_regex(p).match(bare):
                return (m, p)
        return None

    def check(self, method, path, status, headers, body):
        key = self.find(method, path)
        if key is None:
            fail(f"{self.name}: {method.upper()} {path} is not documented")
            return
        self.exercised.add(key)
        shapes.add(method, key[1], status, headers, body)
        responses = self.ops[key].get("responses", {})
        r = responses.get(str(status))
        if r is None:
            fail(f"{method.upper()} {path}: status {status} is not documented for {key[1]} "
                 f"(documented: {', '.join(responses)})")
            return
        ctype = (headers.get("content-type") or headers.get("Content-Type") or "").split(";")[0]
        content = r.get("content", {})
        if ctype == "application/json":
            media = content.get("application/json")
            if media is None:
                fail(f"{method.upper()} {path} {status}: JSON body, none documented")
                return
            try:
                value = json.loads(body)
            except ValueError as e:
                fail(f"{method.upper()} {path} {status}: body is not JSON: {e}")
                return
            schema = dict(media.get("schema", {}))
            schema["components"] = self.doc.get("components", {})
            errors = sorted(
                jsonschema.Draft202012Validator(schema).iter_errors(value),
                key=lambda e: list(e.absolute_path),
            )
            for e in errors[:5]:
                where = "/".join(str(p) for p in e.absolute_path)
                fail(f"{method.upper()} {path} {status}: /{where}: {e.message[:300]}")
        elif content and ctype not in content and not any(
            c.split("/")[0] == ctype.split("/")[0] for c in content
        ):
            fail(f"{method.upper()} {path} {status}: content type {ctype} not documented "
                 f"({', '.join(content)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("--api-key", help="a notary API key (to exercise 202 and receipts)")
    ap.add_argument("--shapes", help="fail on a wire shape this file does not record")
    ap.add_argument("--record-shapes", help="add this run's wire shapes to this file")
    args = ap.parse_args()
    base = args.base.rstrip("/")

    docs = {}
    for name, url in [("randomness", "/api/v1/openapi.json"), ("notary", "/v1/openapi.json")]:
        status, _, body = request(base, "get", url)
        if status != 200:
            fail(f"{url}: status {status}")
            continue
        doc = json.loads(body)
        if not str(doc.get("openapi", "")).startswith("3.1"):
            fail(f"{url}: openapi is {doc.get('openapi')!r}, not 3.1")
        try:
            validate(doc)
            print(f"ok   {url} is a valid OpenAPI {doc['openapi']} document "
                  f"({sum(len(v) for v in doc['paths'].values())} operations)")
        except Exception as e:  # the validator's own error types
            fail(f"{url}: not a valid OpenAPI document: {e}")
        docs[name] = Document(name, doc)
        for method, path in INTERFACE[name]:
            if docs[name].find(method, path.replace("{", "").replace("}", "")) is None \
                    and (method, path) not in docs[name].ops:
                fail(f"{url}: interface endpoint {method.upper()} {path} is missing")
    if len(docs) < 2:
        return finish(docs, args)

    def call(doc, method, path, body=None, headers=None, raw=None, want=None):
        status, hs, data = request(base, method, path, body, headers, raw)
        print(f"     {method.upper():4} {path} -> {status}")
        docs[doc].check(method, path, status, hs, data)
        if want is not None and status not in want:
            fail(f"{method.upper()} {path}: status {status}, expected {want}")
        try:
            return status, hs, json.loads(data)
        except ValueError:
            return status, hs, None

    r = "randomness"
    for p in ["/", "/health", "/api/v1/entropy", "/api/v1/games", "/api/v1/stats",
              "/api/v1/recent", "/api/v1/openapi.json"]:
        call(r, "get", p, want=[200, 202])
    _, _, dice = call(r, "post", "/api/v1/games/dice/bet",
                      {"bet_type": "over7", "amount": 2.5, "player_seed": "s", "instant": False},
                      want=[202])
    call(r, "post", "/api/v1/games/dice/bet", {"bet_type": "seven"}, want=[400])
    call(r, "post", "/api/v1/games/dice/bet", raw=b"{", want=[400])
    call(r, "post", "/api/v1/games/dice/bet", raw=b"x" * 20000, want=[413])
    call(r, "post", "/api/v1/games/sicbo/bet", {"bet_type": "total", "target": 10,
                                                "instant": False}, want=[202])
    _, _, instant = call(r, "post", "/api/v1/games/sicbo/bet",
                         {"bet_type": "big", "instant": True}, want=[200, 202])
    call(r, "post", "/api/v1/games/sicbo/bet", {"bet_type": "total", "target": 99}, want=[400])
    _, _, rng = call(r, "post", "/api/v1/rng/generate", {"client_seed": "c"}, want=[202])
    call(r, "post", "/api/v1/rng/generate", raw=b"", want=[202])
    call(r, "post", "/api/v1/rng/generate", {"client_seed": 5}, want=[400])
    game = dice["game_id"]
    call(r, "get", f"/api/v1/games/{game}", want=[200, 202])
    call(r, "get", f"/api/v1/verify/{game}", want=[200, 202])
    deadline = time.time() + 90
    for g in [game, rng["game_id"]]:
        while True:
            status, _, _ = call(r, "get", f"/api/v1/games/{g}", want=[200, 202])
            if status == 200 or time.time() > deadline:
                break
            time.sleep(0.3)
        call(r, "get", f"/api/v1/verify/{g}", want=[200])
    if instant and instant.get("pool_served"):
        call(r, "get", f"/api/v1/verify/{instant['game_id']}", want=[200])
        call(r, "get", f"/api/v1/games/{instant['game_id']}", want=[200])
    unknown = "0" * 32
    call(r, "get", f"/api/v1/games/{unknown}", want=[404])
    call(r, "get", f"/api/v1/verify/{unknown}", want=[404])
    call(r, "get", "/api/v1/verify/not-an-id", want=[404])
    call(r, "get", "/api/v1/epochs/1", want=[200])
    call(r, "get", "/api/v1/epochs/99999999", want=[404])
    call(r, "get", "/api/v1/epochs/one", want=[400])
    call(r, "get", "/api/v1/pool/batches/1", want=[200, 404])
    call(r, "get", "/api/v1/pool/batches/99999999", want=[404])
    call(r, "get", "/api/v1/pool/batches/x", want=[400])
    for p in ["/verify", f"/verify?game={game}", "/assets/vrs-verify.mjs", "/assets/site.css",
              "/assets/statistics-dice-rtp.svg",
              "/docs", "/docs/api", "/whitepaper", "/docs/games", "/docs/protocol", "/docs/statistics"]:
        call(r, "get", p, want=[200])
    call(r, "get", "/assets/nothing.js", want=[404])
    call(r, "get", "/docs/nothing", want=[404])

    n = "notary"
    call(n, "get", "/v1/notarize/schemas", want=[200])
    call(n, "get", "/v1/notarize/status", want=[200])
    call(n, "get", "/v1/openapi.json", want=[200])
    good = {"schema": "sha256", "payload_hash": "ab" * 32}
    call(n, "post", "/v1/notarize", good, want=[401, 402])
    call(n, "get", f"/v1/notarize/{'f' * 32}", want=[404])
    if args.api_key:
        auth = {"authorization": f"Bearer {args.api_key}"}
        _, _, receipt = call(n, "post", "/v1/notarize", good, headers=auth, want=[202])
        call(n, "post", "/v1/notarize", {"schema": "sha256", "payload_hash": "zz"},
             headers=auth, want=[400])
        call(n, "post", "/v1/notarize", good,
             headers={"authorization": "Bearer wrong"}, want=[401])
        call(n, "post", "/v1/notarize", good, headers={**auth, "idempotency-key": "k1"},
             want=[202])
        call(n, "post", "/v1/notarize", {"schema": "sha256", "payload_hash": "cd" * 32},
             headers={**auth, "idempotency-key": "k1"}, want=[422])
        if receipt:
            call(n, "get", f"/v1/notarize/{receipt['receipt_id']}", want=[200])

    # A method the path does not accept: 405 with the exact Allow header (a GET path answers
    # HEAD too, so it lists both).
    for method, path, allow in [("post", "/health", "GET,HEAD"),
                                ("delete", "/api/v1/games", "GET,HEAD"),
                                ("get", "/api/v1/games/dice/bet", "POST"),
                                ("put", "/v1/notarize/status", "GET,HEAD")]:
        status, hs, body = request(base, method, path, body={} if method != "get" else None)
        got = hs.get("allow") or hs.get("Allow")
        print(f"     {method.upper():4} {path} -> {status} (Allow: {got})")
        shapes.add(method, path, status, hs, body)
        if status != 405 or got != allow:
            fail(f"{method.upper()} {path}: {status} with Allow {got!r}, expected 405 and {allow!r}")
    return finish(docs, args)


def finish(docs, args):
    if args.shapes:
        shapes.compare(args.shapes)
    if args.record_shapes:
        shapes.record(args.record_shapes)
    for name, d in docs.items():
        for key in sorted(set(d.ops) - d.exercised):
            fail(f"{name}: documented {key[0].upper()} {key[1]} was never exercised")
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("all responses conform to the documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())
