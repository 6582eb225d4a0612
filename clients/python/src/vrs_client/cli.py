"""`vrs-verify`: verify a vrs game without trusting the server, like `vrs verify`.

Exit status: 0 verified (no step failed; a `pend`, such as an anchor not yet confirmed, is not a
failure), 1 a step failed (it is named), 2 unknown game, bad arguments or a network error.
"""

from __future__ import annotations

import argparse
import re
import sys

from .verify import Report, VerifyError, verify

STATUS_MARK = {"ok": "ok  ", "FAIL": "FAIL", "pend": "pend"}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="vrs-verify",
        description="Verify a vrs game from the published data alone: every step of "
        "docs/PROTOCOL.md §13 (§14 for a pool-served game) recomputed, the server's own "
        "verdict ignored.",
        epilog="Exit status: 0 verified, 1 a step failed, 2 unknown game or network error.",
    )
    ap.add_argument("game_id", nargs="?", metavar="GAME_ID",
                    help="32 hex digits (optional with --acceptance: the signed leaf names it)")
    ap.add_argument("--server", required=True, metavar="URL", help="the vrs server, e.g. http://127.0.0.1:8080")
    ap.add_argument("--group", default="rsa2048",
                    help="the group the proof must be in, the verifier's choice: rsa2048 (default), "
                    "classgroup-<bits>, or test512 / test1024 / hex:<digits> for a test server")
    ap.add_argument("--min-margin", metavar="A", default=None,
                    help="fail `timing` for an epoch planned for a weaker adversary than margin A")
    ap.add_argument("--min-rate", metavar="R", default=None,
                    help="fail `timing` for an epoch that declares fewer than R squarings per second "
                    "(2000000 or 2e6): an understated rate keeps epochs open longer than their squarings take")
    ap.add_argument("--allow-version-1", action="store_true",
                    help="let version-1 epochs pass `timing` as version 1's rules allow; by default they "
                    "fail: they make no timing commitment (docs/PROTOCOL.md §10, \"Version 1\")")
    ap.add_argument("--wait", type=float, default=30.0, metavar="S",
                    help="seconds to wait for a pending game (default 30)")
    ap.add_argument("--acceptance", metavar="FILE",
                    help="the saved response of the bet (its signed acceptance): check that the "
                    "server still has the bet exactly as it signed it")
    ap.add_argument("--rpc", metavar="URL",
                    help="JSON-RPC URL of a node of the anchor chain, of your choosing: read the "
                    "anchor transaction back on chain")
    ap.add_argument("--require-anchor", action="store_true",
                    help="fail when the game's anchor is not confirmed yet (default: pending, not a failure)")
    ap.add_argument("--witness-policy", metavar="FILE",
                    help="your witnesses: a C2SP tlog-policy file (log <vkey>, witness <name> <vkey>, "
                    "group, quorum; docs/PROTOCOL.md §21). Adds the `witnessed` step: an epoch game's plan "
                    "and commitment must be in the operator's log, cosigned in time by a quorum of them. "
                    "Without it the operator is trusted not to withhold an epoch, and the report says so")
    ap.add_argument("--max-rate", metavar="S", default=None,
                    help="S for `witnessed`: your bound on the fastest squarer, in squarings per second "
                    "(9000000 or 9e6), never the operator's declared rate (default 9e6 for RSA groups, "
                    "1e6 for classgroup-*)")
    ap.add_argument("--delta-ms", metavar="D", default="2000",
                    help="your clock tolerance for `witnessed`, in milliseconds (default 2000)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    return ap


def _print(report: Report) -> None:
    print(f"game {report.game_id}")
    for s in report.steps:
        print(f"  {STATUS_MARK[s.status]} {s.name:<20} {s.detail}")
    if report.verified:
        print("verified")
    else:
        print(f"FAILED: {', '.join(report.failed)}")
    for n in report.notes:
        print(f"note: {n}")


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 2
    if args.game_id is None and args.acceptance is None:
        print("error: give GAME_ID, or --acceptance FILE", file=sys.stderr)
        return 2
    if args.game_id is not None:
        if not re.fullmatch(r"[0-9a-fA-F]{32}", args.game_id):
            print(f"error: {args.game_id!r} is not a game id (32 hex digits)", file=sys.stderr)
            return 2
        args.game_id = args.game_id.lower()
    try:
        report = verify(
            args.game_id,
            server=args.server,
            group=args.group,
            min_margin=args.min_margin,
            min_rate=args.min_rate,
            wait=args.wait,
            acceptance=args.acceptance,
            rpc=args.rpc,
            require_anchor=args.require_anchor,
            witness_policy=args.witness_policy,
            max_rate=args.max_rate,
            delta_ms=args.delta_ms,
            allow_version_1=args.allow_version_1,
        )
    except VerifyError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(report.to_json())
    else:
        _print(report)
    return 0 if report.verified else 1


if __name__ == "__main__":
    sys.exit(main())
