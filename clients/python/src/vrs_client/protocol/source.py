"""Fetching what the documents say a verifier fetches, with a cache (a copy of it serves the tamper tests)."""

from __future__ import annotations

import decimal
import json
import urllib.error
import urllib.request

from .encoding import UsageError


class Source:
    """GET with a cache; an offline copy (for --tamper) serves only what was fetched."""

    def __init__(self, server: str | None, cache=None):
        self.server = server.rstrip("/") if server else None
        self.cache = {} if cache is None else cache

    def get(self, path: str):
        if path in self.cache:
            return self.cache[path]
        if self.server is None:
            raise UsageError(f"offline: {path} was not fetched")
        req = urllib.request.Request(self.server + path, headers={"accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
        except (urllib.error.URLError, OSError) as e:
            raise UsageError(f"GET {path}: {e}") from None
        try:
            # P§10 "Plan": margin_e = 100 · A_e, "read the number's decimal text" (one of the two
            # readings it allows): JSON numbers with a fraction are read as decimals.
            data = json.loads(body, parse_float=decimal.Decimal)
        except ValueError:
            data = None  # not JSON: a record that "cannot be fetched" (P§13)
        res = (status, data)
        self.cache[path] = res
        return res

    def record(self, path: str):
        """A published record, or None when it cannot be fetched (any answer but a 200 with a JSON
        object).  P§13: "A record a step needs that cannot be fetched, or lacks a member the step
        reads, fails that step"; only a network error is exit 2."""
        status, data = self.get(path)
        return data if status == 200 and isinstance(data, dict) else None

    def epoch(self, n: int):
        """GET /api/v1/epochs/{n} (P§13, §20.3)."""
        return self.record(f"/api/v1/epochs/{n}")

    def pool_batch(self, b: int):
        """GET /api/v1/pool/batches/{b} (P§14 "Serving", §20.6)."""
        return self.record(f"/api/v1/pool/batches/{b}")
