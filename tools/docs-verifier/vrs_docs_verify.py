#!/usr/bin/env python3
"""Independent verifier for vrs games, written from the documents alone.

The implementation lives in the Python client package (clients/python, module
vrs_client.protocol, standard library only); this file is its command line, and imports it from
the source tree, so that it still runs with a bare python3.
"""
from __future__ import annotations

import argparse
import decimal
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python", "src"))

# Every name of the implementation, for test_offline.py (`v.<name>`) and for callers that import
# this file as a module.
from vrs_client.protocol.encoding import *  # noqa: E402,F401,F403
from vrs_client.protocol.primes import *  # noqa: E402,F401,F403
from vrs_client.protocol.rsa import *  # noqa: E402,F401,F403
from vrs_client.protocol.classgroup import *  # noqa: E402,F401,F403
from vrs_client.protocol.groups import *  # noqa: E402,F401,F403
from vrs_client.protocol.ed25519 import *  # noqa: E402,F401,F403
from vrs_client.protocol.ed25519 import _ed_decode  # noqa: E402,F401
from vrs_client.protocol.merkle import *  # noqa: E402,F401,F403
from vrs_client.protocol.games import *  # noqa: E402,F401,F403
from vrs_client.protocol.source import *  # noqa: E402,F401,F403
from vrs_client.protocol.steps import *  # noqa: E402,F401,F403
from vrs_client.protocol.members import *  # noqa: E402,F401,F403
from vrs_client.protocol.run import *  # noqa: E402,F401,F403
from vrs_client.protocol.tamper import *  # noqa: E402,F401,F403
import math  # noqa: E402,F401  (test_offline.py reads v.math)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Verify vrs games from the public API (documents-only implementation).")
    ap.add_argument("--server", required=True)
    ap.add_argument("--group", default="rsa2048", help="rsa2048 (default), test512, test1024, hex:<digits>, classgroup-<bits>")
    ap.add_argument("--min-margin", type=decimal.Decimal, default=None)
    ap.add_argument("--min-rate", type=int, default=None, metavar="R",
                    help="fail `timing` for an epoch declaring fewer squarings per second (P§10 rule 2, P§13)")
    ap.add_argument("--wait", type=float, default=30.0, help="seconds to wait for a pending game or bet epoch (default 30)")
    ap.add_argument("--tamper", action="store_true", help="self-test: alter one field at a time, require a FAIL")
    ap.add_argument("--strict-members", action="store_true", help="fail `members` on a member P§20 does not list")
    ap.add_argument("-v", "--verbose", action="store_true", help="with --tamper, print which step caught each alteration")
    ap.add_argument("game_ids", nargs="+", metavar="GAME_ID")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    t0 = time.time()
    try:
        group = make_group(args.group)
        failed = False
        for gid in args.game_ids:
            src = Source(args.server)
            if args.tamper:
                failed |= not run_tamper(gid, src, group, args)
            else:
                res = verify_game(gid, src, group, args)
                print_results(gid, res)
                failed |= any(s == "FAIL" for _, s, _ in res)
        print(f"{len(args.game_ids)} game(s), {'FAILED' if failed else 'all passed'}, {time.time() - t0:.1f} s")
        return 1 if failed else 0
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

